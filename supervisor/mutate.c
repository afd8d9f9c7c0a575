/* SPDX-License-Identifier: MIT */
/*
 * Mutations, performed by the supervisor on the resolved object.
 *
 * A call that makes or removes a name (mkdir, unlink, rename, link, symlink,
 * mknod) is decided on its parent's canonical path plus the name, and carried
 * out from the parent's fd, so nothing can be swapped under it. A call that
 * changes an object (chmod, chown, truncate, utimes, xattrs) is decided on the
 * object and carried out through our fd for it (/proc/self/fd/N reaches the
 * object itself, not a name). A hard link is a new writable name for its
 * source, so it needs write access to the source too.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <sys/xattr.h>
#include <utime.h>

#include "moat/macro.h"
#include "moat/sys.h"
#include "sv.h"

_Static_assert(XATTR_SIZE_MAX <= SV_SCRATCH_SIZE && XATTR_LIST_MAX <= SV_SCRATCH_SIZE,
               "an xattr value or list fits the scratch buffer");

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_WHITEOUT
#define RENAME_WHITEOUT (1 << 2)
#endif

/* ---- names ---- */

struct name {
	struct sv_path p;
	int dir; /* O_PATH of the parent */
	char last[NAME_MAX + 2];
};

static void
name_done(struct name *n)
{
	sv_path_done(&n->p);
	if (n->dir >= 0)
		close(n->dir);
	n->dir = -1;
}

/* Reads the path, opens its parent and decides a write on parent + name. */
static int
name_open(struct sv_call *c, int dirfd, uint64_t addr, struct name *n)
{
	char canon[PATH_MAX], full[PATH_MAX];

	n->dir = -1;
	int r = sv_path_read(c, dirfd, addr, 0, &n->p);
	if (r < 0)
		return r;
	n->dir = sv_path_parent(c, &n->p, 0, n->last, sizeof(n->last));
	if (n->dir < 0)
		return sv_path_error(c, &n->p, n->dir, POLICY_WRITE, SV_RESOLVE_PARENT);
	r = sv_fd_path(c, n->dir, canon, sizeof(canon));
	if (r < 0)
		return r;
	if (policy_path_normalize(canon, n->last, full, sizeof(full)) < 0)
		return -ENAMETOOLONG;
	return sv_decide_path(c, full, POLICY_WRITE);
}

/* Runs op on one name; op returns -1 with errno. */
#define ON_NAME(c, dirfd, addr, op)                                                                \
	do {                                                                                       \
		struct name n_ = {.dir = -1};                                                      \
		int r_ = name_open(c, dirfd, addr, &n_);                                           \
		if (r_ == 0 && (op(n_.dir, n_.last)) < 0)                                          \
			r_ = -errno;                                                               \
		name_done(&n_);                                                                    \
		(c)->err = -r_;                                                                    \
	} while (0)

static mode_t
masked(struct sv_call *c, uint64_t mode)
{
	mode_t um = 022;
	tgt_umask(c, &um);
	return (mode_t)mode & 07777 & ~um;
}

static void
do_mkdir(struct sv_call *c, int dirfd, uint64_t addr, uint64_t mode)
{
	mode_t m = masked(c, mode);
#define MKDIR(d, n) mkdirat(d, n, m)
	ON_NAME(c, dirfd, addr, MKDIR);
#undef MKDIR
}

void
sv_mkdir(struct sv_call *c)
{
	do_mkdir(c, AT_FDCWD, c->req->data.args[0], c->req->data.args[1]);
}

void
sv_mkdirat(struct sv_call *c)
{
	do_mkdir(c, (int)c->req->data.args[0], c->req->data.args[1], c->req->data.args[2]);
}

static void
do_unlink(struct sv_call *c, int dirfd, uint64_t addr, int flags)
{
	if (flags & ~AT_REMOVEDIR) {
		c->err = EINVAL;
		return;
	}
#define UNLINK(d, n) unlinkat(d, n, flags)
	ON_NAME(c, dirfd, addr, UNLINK);
#undef UNLINK
}

void
sv_unlink(struct sv_call *c)
{
	do_unlink(c, AT_FDCWD, c->req->data.args[0], 0);
}

void
sv_rmdir(struct sv_call *c)
{
	do_unlink(c, AT_FDCWD, c->req->data.args[0], AT_REMOVEDIR);
}

void
sv_unlinkat(struct sv_call *c)
{
	do_unlink(c, (int)c->req->data.args[0], c->req->data.args[1], (int)c->req->data.args[2]);
}

static void
do_mknod(struct sv_call *c, int dirfd, uint64_t addr, uint64_t mode, uint64_t dev)
{
	/* The supervisor's privileges would make the node: devices are not files to create. */
	if (S_ISCHR(mode) || S_ISBLK(mode)) {
		c->err = EPERM;
		return;
	}
	mode_t m = ((mode_t)mode & S_IFMT) | masked(c, mode);
#define MKNOD(d, n) mknodat(d, n, m, (dev_t)dev)
	ON_NAME(c, dirfd, addr, MKNOD);
#undef MKNOD
}

void
sv_mknod(struct sv_call *c)
{
	const __u64 *a = c->req->data.args;
	do_mknod(c, AT_FDCWD, a[0], a[1], a[2]);
}

void
sv_mknodat(struct sv_call *c)
{
	const __u64 *a = c->req->data.args;
	do_mknod(c, (int)a[0], a[1], a[2], a[3]);
}

static void
do_symlink(struct sv_call *c, uint64_t target_addr, int dirfd, uint64_t addr)
{
	char target[PATH_MAX];

	/* The link's text decides nothing: what it leads to is decided when it is used. */
	int r = tgt_read_string(c, target_addr, target, sizeof(target));
	if (r < 0) {
		c->err = -r;
		return;
	}
	if (r == 0) {
		c->err = ENOENT;
		return;
	}
#define SYMLINK(d, n) symlinkat(target, d, n)
	ON_NAME(c, dirfd, addr, SYMLINK);
#undef SYMLINK
}

void
sv_symlink(struct sv_call *c)
{
	do_symlink(c, c->req->data.args[0], AT_FDCWD, c->req->data.args[1]);
}

void
sv_symlinkat(struct sv_call *c)
{
	const __u64 *a = c->req->data.args;
	do_symlink(c, a[0], (int)a[1], a[2]);
}

/*
 * Whether moving path elsewhere would carry a deny entry (or the fixed part of a
 * deny glob) with it: "mv .config cfg" would take .config/gcloud/credentials.db
 * out from under "$HOME/.config/<any>/credentials*".
 */
static bool
holds_denied(const struct policy *p, const char *path)
{
	const struct policy_rule *rules;
	size_t n = policy_rules(p, &rules), len = strlen(path), depth = 0;
	char head[PATH_MAX];

	for (const char *s = path; *s; s++)
		depth += *s == '/' && s[1];
	for (size_t i = 0; i < n; i++) {
		if (rules[i].kind != POLICY_KIND_DENY)
			continue;
		const char *d = rules[i].path;
		if (!rules[i].glob) {
			/* A plain entry below path moves with it. */
			if (strlen(d) > len && strncmp(d, path, len) == 0 &&
			    (d[len] == '/' || len == 1))
				return true;
			continue;
		}
		/* A glob matching anywhere ("**" first) holds wherever the tree goes. */
		if (strncmp(d, "/**", 3) == 0)
			continue;
		/*
		 * The glob cut to path's depth: if path matches it, what the glob denies
		 * may lie below ("/h/.config/<any>" for "/h/.config/<any>/credentials*").
		 */
		/* head: the first depth components of the glob. */
		size_t k = 0, count = 0;
		for (; d[k]; k++)
			if (d[k] == '/' && count++ == depth)
				break;
		if (!d[k] || k >= sizeof(head))
			continue; /* the glob is not deeper than path: the matcher decides */
		memcpy(head, d, k);
		head[k] = '\0';
		if (policy_glob_match(head, path))
			return true;
	}
	return false;
}

/*
 * A tree moves with its names: a rename is refused if what a deny entry names
 * would move with the tree that leaves a place, or be made by the tree that
 * arrives there. RENAME_EXCHANGE moves two trees, one each way.
 */
static void
do_rename(struct sv_call *c, int olddir, uint64_t oldaddr, int newdir, uint64_t newaddr,
          unsigned flags)
{
	struct name from = {.dir = -1}, to = {.dir = -1};
	struct stat st;

	/* A whiteout is a device node (0:0), which needs CAP_MKNOD: the agent has none. */
	if (flags & RENAME_WHITEOUT) {
		c->err = EPERM;
		return;
	}
	int r = name_open(c, olddir, oldaddr, &from);
	if (r == 0 && holds_denied(c->sv->policy, c->path)) {
		c->allowed = false;
		r = -EACCES;
	}
	/* A file arriving can make no name below itself: only a directory's move is checked. */
	bool tree = (flags & RENAME_EXCHANGE) ||
	            (r == 0 && fstatat(from.dir, from.last, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	             S_ISDIR(st.st_mode));
	if (r == 0)
		r = name_open(c, newdir, newaddr, &to);
	if (r == 0 && tree && holds_denied(c->sv->policy, c->path)) {
		c->allowed = false;
		r = -EACCES;
	}
	if (r == 0 && renameat2(from.dir, from.last, to.dir, to.last, flags) < 0)
		r = -errno;
	name_done(&from);
	name_done(&to);
	c->err = -r;
}

void
sv_rename(struct sv_call *c)
{
	do_rename(c, AT_FDCWD, c->req->data.args[0], AT_FDCWD, c->req->data.args[1], 0);
}

void
sv_renameat(struct sv_call *c)
{
	const __u64 *a = c->req->data.args;
	do_rename(c, (int)a[0], a[1], (int)a[2], a[3], 0);
}

void
sv_renameat2(struct sv_call *c)
{
	const __u64 *a = c->req->data.args;
	do_rename(c, (int)a[0], a[1], (int)a[2], a[3], (unsigned)a[4]);
}

/* ---- objects ---- */

/* Resolves the object a path names (following symlinks unless nofollow), decided for a. */
static int
object_open(struct sv_call *c, int dirfd, uint64_t addr, bool empty_ok, bool nofollow,
            enum policy_access a)
{
	struct sv_path p;

	int r =
	    sv_path_read(c, dirfd, addr, SV_PATH_COMPOSE | (empty_ok ? SV_PATH_EMPTY_OK : 0), &p);
	if (r < 0)
		return r;
	if (p.len > 0) {
		r = sv_path_decide(c, &p, nofollow ? O_NOFOLLOW : 0, a);
		sv_path_done(&p);
		return r;
	}
	int fd = TAKE_FD(p.base);
	r = sv_decide_fd(c, fd, NULL, true, a, NULL);
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}

/* The target's fd, decided for a. */
static int
fd_open(struct sv_call *c, int tfd, enum policy_access a)
{
	int fd = tgt_getfd(c, tfd);
	if (fd < 0)
		return fd == -ESRCH ? fd : -EBADF;
	int r = sv_decide_fd(c, fd, NULL, true, a, NULL);
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}

static void
proc_path(int fd, char *out, size_t size)
{
	snprintf(out, size, "/proc/self/fd/%d", fd);
}

static void
finish(struct sv_call *c, int fd, int r)
{
	int e = r < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	c->err = e;
}

/*
 * A setuid file (or a setgid one) made under moat would outlive the session with
 * its owner's privileges for whoever runs it next. Directories may keep setgid.
 */
static int
mode_refused(const struct stat *st, uint64_t mode)
{
	if ((mode & S_ISUID) || ((mode & S_ISGID) && !S_ISDIR(st->st_mode)))
		return -EPERM;
	return 0;
}

static void
do_chmod(struct sv_call *c, int dirfd, uint64_t addr, uint64_t mode, int flags)
{
	if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH)) {
		c->err = EINVAL;
		return;
	}
	int fd = object_open(c, dirfd, addr, flags & AT_EMPTY_PATH, flags & AT_SYMLINK_NOFOLLOW,
	                     POLICY_WRITE);
	if (fd < 0) {
		c->err = -fd;
		return;
	}
	struct stat st;
	int r = fstat(fd, &st) < 0 ? -errno : mode_refused(&st, mode);
	if (r == 0)
		r = sys_fchmodat2(fd, "", (mode_t)mode & 07777, AT_EMPTY_PATH | flags);
	close(fd);
	c->err = -r;
}

void
sv_chmod(struct sv_call *c)
{
	do_chmod(c, AT_FDCWD, c->req->data.args[0], c->req->data.args[1], 0);
}

void
sv_fchmodat(struct sv_call *c)
{
	const __u64 *a = c->req->data.args;
	do_chmod(c, (int)a[0], a[1], a[2], 0);
}

void
sv_fchmodat2(struct sv_call *c)
{
	const __u64 *a = c->req->data.args;
	do_chmod(c, (int)a[0], a[1], a[2], (int)a[3]);
}

void
sv_fchmod(struct sv_call *c)
{
	struct stat st;
	int fd = fd_open(c, (int)c->req->data.args[0], POLICY_WRITE);
	if (fd < 0) {
		c->err = -fd;
		return;
	}
	int r = fstat(fd, &st) < 0 ? -errno : mode_refused(&st, c->req->data.args[1]);
	if (r < 0) {
		close(fd);
		c->err = -r;
		return;
	}
	finish(c, fd, fchmod(fd, (mode_t)c->req->data.args[1] & 07777));
}

static void
do_chown(struct sv_call *c, int dirfd, uint64_t addr, uint64_t uid, uint64_t gid, int flags)
{
	if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH)) {
		c->err = EINVAL;
		return;
	}
	int fd = object_open(c, dirfd, addr, flags & AT_EMPTY_PATH, flags & AT_SYMLINK_NOFOLLOW,
	                     POLICY_WRITE);
	if (fd < 0) {
		c->err = -fd;
		return;
	}
	finish(c, fd, fchownat(fd, "", (uid_t)uid, (gid_t)gid, AT_EMPTY_PATH));
}

void
sv_chown(struct sv_call *c)
{
	const __u64 *a = c->req->data.args;
	do_chown(c, AT_FDCWD, a[0], a[1], a[2], 0);
}

void
sv_lchown(struct sv_call *c)
{
	const __u64 *a = c->req->data.args;
	do_chown(c, AT_FDCWD, a[0], a[1], a[2], AT_SYMLINK_NOFOLLOW);
}

void
sv_fchownat(struct sv_call *c)
{
	const __u64 *a = c->req->data.args;
	do_chown(c, (int)a[0], a[1], a[2], a[3], (int)a[4]);
}

void
sv_fchown(struct sv_call *c)
{
	const __u64 *a = c->req->data.args;
	int fd = fd_open(c, (int)a[0], POLICY_WRITE);
	if (fd < 0) {
		c->err = -fd;
		return;
	}
	finish(c, fd, fchown(fd, (uid_t)a[1], (gid_t)a[2]));
}

void
sv_truncate(struct sv_call *c)
{
	const __u64 *a = c->req->data.args;
	char link[64];

	if ((int64_t)a[1] < 0) {
		c->err = EINVAL;
		return;
	}
	int fd = object_open(c, AT_FDCWD, a[0], false, false, POLICY_WRITE);
	if (fd < 0) {
		c->err = -fd;
		return;
	}
	proc_path(fd, link, sizeof(link));
	int w = open(link, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	int r = w < 0 ? -1 : ftruncate(w, (off_t)a[1]);
	finish(c, fd, r);
	if (w >= 0)
		close(w);
}

/*
 * The times family: utime (utimbuf), utimes and futimesat (two timevals), utimensat
 * (two timespecs, or NULL for now). All become utimensat on our fd.
 */
static void
do_utimens(struct sv_call *c, int dirfd, uint64_t addr, const struct timespec *ts, int flags)
{
	char link[64];

	if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH)) {
		c->err = EINVAL;
		return;
	}
	/* utimensat(fd, NULL, ...) is futimens(fd). */
	bool on_fd = addr == 0;
	int fd = on_fd ? fd_open(c, dirfd, POLICY_WRITE)
	               : object_open(c, dirfd, addr, flags & AT_EMPTY_PATH,
	                             flags & AT_SYMLINK_NOFOLLOW, POLICY_WRITE);
	if (fd < 0) {
		c->err = -fd;
		return;
	}
	proc_path(fd, link, sizeof(link));
	finish(c, fd, utimensat(AT_FDCWD, link, ts, 0));
}

void
sv_utimensat(struct sv_call *c)
{
	const __u64 *a = c->req->data.args;
	struct timespec ts[2];

	if (a[2] && tgt_read(c, a[2], ts, sizeof(ts)) < 0) {
		c->err = EFAULT;
		return;
	}
	do_utimens(c, (int)a[0], a[1], a[2] ? ts : NULL, (int)a[3]);
}

static void
timevals(struct sv_call *c, int dirfd, uint64_t addr, uint64_t tv_addr)
{
	struct timeval tv[2];
	struct timespec ts[2];

	if (tv_addr) {
		if (tgt_read(c, tv_addr, tv, sizeof(tv)) < 0) {
			c->err = EFAULT;
			return;
		}
		for (int i = 0; i < 2; i++) {
			if (tv[i].tv_usec < 0 || tv[i].tv_usec >= 1000000) {
				c->err = EINVAL;
				return;
			}
			ts[i] = (struct timespec){tv[i].tv_sec, tv[i].tv_usec * 1000};
		}
	}
	if (addr == 0) {
		c->err = EFAULT;
		return;
	}
	do_utimens(c, dirfd, addr, tv_addr ? ts : NULL, 0);
}

void
sv_utimes(struct sv_call *c)
{
	timevals(c, AT_FDCWD, c->req->data.args[0], c->req->data.args[1]);
}

void
sv_futimesat(struct sv_call *c)
{
	const __u64 *a = c->req->data.args;
	timevals(c, (int)a[0], a[1], a[2]);
}

void
sv_utime(struct sv_call *c)
{
	const __u64 *a = c->req->data.args;
	struct utimbuf ub;
	struct timespec ts[2];

	if (a[1]) {
		if (tgt_read(c, a[1], &ub, sizeof(ub)) < 0) {
			c->err = EFAULT;
			return;
		}
		ts[0] = (struct timespec){ub.actime, 0};
		ts[1] = (struct timespec){ub.modtime, 0};
	}
	if (a[0] == 0) {
		c->err = EFAULT;
		return;
	}
	do_utimens(c, AT_FDCWD, a[0], a[1] ? ts : NULL, 0);
}

/* hard links: a new name for the source, so a write to both */
static void
do_link(struct sv_call *c, int olddir, uint64_t oldaddr, int newdir, uint64_t newaddr, int flags)
{
	struct name to = {.dir = -1};
	char link[64];

	if (flags & ~(AT_SYMLINK_FOLLOW | AT_EMPTY_PATH)) {
		c->err = EINVAL;
		return;
	}
	int fd = object_open(c, olddir, oldaddr, flags & AT_EMPTY_PATH,
	                     !(flags & AT_SYMLINK_FOLLOW), POLICY_WRITE);
	if (fd < 0) {
		c->err = -fd;
		return;
	}
	int r = name_open(c, newdir, newaddr, &to);
	proc_path(fd, link, sizeof(link));
	/* Through /proc/self/fd/N with AT_SYMLINK_FOLLOW: the object itself, no CAP_DAC_READ_SEARCH. */
	if (r == 0 && linkat(AT_FDCWD, link, to.dir, to.last, AT_SYMLINK_FOLLOW) < 0)
		r = -errno;
	name_done(&to);
	close(fd);
	c->err = -r;
}

void
sv_link(struct sv_call *c)
{
	do_link(c, AT_FDCWD, c->req->data.args[0], AT_FDCWD, c->req->data.args[1], 0);
}

void
sv_linkat(struct sv_call *c)
{
	const __u64 *a = c->req->data.args;
	do_link(c, (int)a[0], a[1], (int)a[2], a[3], (int)a[4]);
}

/* ---- extended attributes ---- */

static int
xattr_name(struct sv_call *c, uint64_t addr, char *name, size_t size)
{
	int r = tgt_read_string(c, addr, name, size);
	if (r == -ENAMETOOLONG)
		return -ERANGE;
	if (r == 0)
		return -ERANGE;
	return r < 0 ? r : 0;
}

/* The object for an xattr call: by path (following or not) or by the target's fd. */
static int
xattr_object(struct sv_call *c, bool by_fd, bool nofollow, enum policy_access a)
{
	uint64_t arg = c->req->data.args[0];
	if (by_fd)
		return fd_open(c, (int)arg, a);
	int fd = object_open(c, AT_FDCWD, arg, false, nofollow, a);
	if (fd >= 0 && nofollow) {
		struct stat st;
		/*
		 * The l* calls on a symlink: /proc/self/fd/N would reach its target, so they
		 * are answered as Linux answers them for a link without labels: no user
		 * xattrs can be set there (EPERM), and there are none to read.
		 */
		if (fstat(fd, &st) == 0 && S_ISLNK(st.st_mode)) {
			close(fd);
			return -ELOOP;
		}
	}
	return fd;
}

/*
 * The answer of a call that fills a buffer: n bytes of buf to the target at addr
 * (when it asked for them: size 0 asks for the length only), or errno.
 */
static void
reply_bytes(struct sv_call *c, int fd, ssize_t n, uint64_t addr, const void *buf, size_t size)
{
	int e = errno;
	close(fd);
	if (n < 0) {
		c->err = e;
		return;
	}
	c->val = n;
	if (size && n > 0)
		c->err = -tgt_write(c, addr, buf, (size_t)n);
}

static void
get_xattr(struct sv_call *c, bool by_fd, bool nofollow)
{
	const __u64 *a = c->req->data.args;
	char name[XATTR_NAME_MAX + 1], link[64];
	char *value = c->scratch;
	size_t size = a[3] > XATTR_SIZE_MAX ? XATTR_SIZE_MAX : a[3];

	int r = xattr_name(c, a[1], name, sizeof(name));
	int fd = r < 0 ? r : xattr_object(c, by_fd, nofollow, POLICY_STAT);
	if (fd < 0) {
		c->err = fd == -ELOOP ? ENODATA : -fd;
		return;
	}
	proc_path(fd, link, sizeof(link));
	ssize_t n = getxattr(link, name, size ? value : NULL, size);
	reply_bytes(c, fd, n, a[2], value, size);
}

static void
list_xattr(struct sv_call *c, bool by_fd, bool nofollow)
{
	const __u64 *a = c->req->data.args;
	char *list = c->scratch;
	char link[64];
	size_t size = a[2] > XATTR_LIST_MAX ? XATTR_LIST_MAX : a[2];

	int fd = xattr_object(c, by_fd, nofollow, POLICY_STAT);
	if (fd < 0) {
		c->err = fd == -ELOOP ? 0 : -fd; /* a symlink lists no xattrs */
		return;
	}
	proc_path(fd, link, sizeof(link));
	ssize_t n = listxattr(link, size ? list : NULL, size);
	reply_bytes(c, fd, n, a[1], list, size);
}

/*
 * Only the user namespace and POSIX ACLs may be written: security.* holds file
 * capabilities and labels, trusted.* needs privileges the agent does not have;
 * the supervisor's own would write them.
 */
static bool
xattr_writable(const char *name)
{
	return strncmp(name, "user.", 5) == 0 || strcmp(name, "system.posix_acl_access") == 0 ||
	       strcmp(name, "system.posix_acl_default") == 0;
}

static void
set_xattr(struct sv_call *c, bool by_fd, bool nofollow)
{
	const __u64 *a = c->req->data.args;
	char name[XATTR_NAME_MAX + 1], link[64];
	char *value = c->scratch;

	if (a[3] > XATTR_SIZE_MAX) {
		c->err = E2BIG;
		return;
	}
	int r = xattr_name(c, a[1], name, sizeof(name));
	if (r == 0 && !xattr_writable(name))
		r = -EPERM;
	if (r == 0 && a[3])
		r = tgt_read(c, a[2], value, a[3]);
	int fd = r < 0 ? r : xattr_object(c, by_fd, nofollow, POLICY_WRITE);
	if (fd < 0) {
		c->err = fd == -ELOOP ? EPERM : -fd;
		return;
	}
	proc_path(fd, link, sizeof(link));
	finish(c, fd, setxattr(link, name, value, a[3], (int)a[4]));
}

static void
remove_xattr(struct sv_call *c, bool by_fd, bool nofollow)
{
	char name[XATTR_NAME_MAX + 1], link[64];

	int r = xattr_name(c, c->req->data.args[1], name, sizeof(name));
	if (r == 0 && !xattr_writable(name))
		r = -EPERM;
	int fd = r < 0 ? r : xattr_object(c, by_fd, nofollow, POLICY_WRITE);
	if (fd < 0) {
		c->err = fd == -ELOOP ? ENODATA : -fd;
		return;
	}
	proc_path(fd, link, sizeof(link));
	finish(c, fd, removexattr(link, name));
}

void
sv_getxattr(struct sv_call *c)
{
	get_xattr(c, false, false);
}

void
sv_lgetxattr(struct sv_call *c)
{
	get_xattr(c, false, true);
}

void
sv_listxattr(struct sv_call *c)
{
	list_xattr(c, false, false);
}

void
sv_llistxattr(struct sv_call *c)
{
	list_xattr(c, false, true);
}

void
sv_setxattr(struct sv_call *c)
{
	set_xattr(c, false, false);
}

void
sv_lsetxattr(struct sv_call *c)
{
	set_xattr(c, false, true);
}

void
sv_fsetxattr(struct sv_call *c)
{
	set_xattr(c, true, false);
}

void
sv_removexattr(struct sv_call *c)
{
	remove_xattr(c, false, false);
}

void
sv_lremovexattr(struct sv_call *c)
{
	remove_xattr(c, false, true);
}

void
sv_fremovexattr(struct sv_call *c)
{
	remove_xattr(c, true, false);
}

/* inotify_add_watch: watching a directory reads its names. */
void
sv_inotify_add_watch(struct sv_call *c)
{
	const __u64 *a = c->req->data.args;
	uint32_t mask = (uint32_t)a[2];
	char link[64];

	int fd = object_open(c, AT_FDCWD, a[1], false, mask & IN_DONT_FOLLOW, POLICY_READ);
	if (fd < 0) {
		c->err = -fd;
		return;
	}
	int in = tgt_getfd(c, (int)a[0]);
	if (in < 0) {
		close(fd);
		c->err = in == -ESRCH ? ESRCH : EBADF;
		return;
	}
	proc_path(fd, link, sizeof(link));
	int wd = inotify_add_watch(in, link, mask & ~(uint32_t)IN_DONT_FOLLOW);
	c->err = wd < 0 ? errno : 0;
	c->val = wd;
	close(in);
	close(fd);
}

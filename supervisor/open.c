/* SPDX-License-Identifier: MIT */
/*
 * The open family, performed by the supervisor and injected into the target
 * with SECCOMP_IOCTL_NOTIF_ADDFD + SECCOMP_ADDFD_FLAG_SEND, which installs the fd
 * and answers the call in one step.
 *
 * An existing object is first opened with O_PATH (no side effect: no
 * truncation, no blocking on a FIFO, no controlling terminal), decided on, then
 * re-opened through /proc/self/fd/N with the caller's flags: the same object,
 * whatever happens to its name meanwhile. A new file is decided on its parent's
 * canonical path and created with O_EXCL from the parent's fd, so a symlink
 * planted in between is never followed.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>

#include "moat/macro.h"
#include "moat/sys.h"
#include "pool.h"
#include "sv.h"

#ifndef __O_TMPFILE
#define __O_TMPFILE 020000000
#endif
#ifndef __O_SYNC
#define __O_SYNC 04000000
#endif

/* The flags open(2) knows; openat() ignores the others, openat2() refuses them. */
#define OPEN_FLAGS_KNOWN                                                                           \
	(O_ACCMODE | O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_APPEND | O_NONBLOCK | O_DSYNC |     \
	 FASYNC | O_DIRECT | O_LARGEFILE | O_DIRECTORY | O_NOFOLLOW | O_NOATIME | O_CLOEXEC |      \
	 __O_SYNC | O_PATH | __O_TMPFILE)

/* Symlinks followed by hand (dangling links under O_CREAT), as the kernel's limit. */
#define FOLLOW_MAX 40

static enum policy_access
access_of(uint64_t flags)
{
	if (flags & O_PATH)
		return POLICY_STAT;
	if ((flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC)) ||
	    (flags & __O_TMPFILE) == __O_TMPFILE)
		return POLICY_WRITE;
	return POLICY_READ;
}

/* Installs our fd in the target as the call's result; closes it. */
static void
install(struct sv_call *c, int fd, uint64_t flags)
{
	struct seccomp_notif_addfd a = {
	    .id = c->req->id,
	    .flags = SECCOMP_ADDFD_FLAG_SEND,
	    .srcfd = (uint32_t)fd,
	    .newfd_flags = (uint32_t)(flags & O_CLOEXEC),
	};
	int r = sys_notif_addfd(c->sv->notify_fd, &a);
	close(fd);
	if (r >= 0) {
		c->replied = true;
		c->val = r;
	} else if (r == -ENOENT) {
		c->gone = true;
	} else {
		c->err = -r; /* EMFILE and friends: the call is still pending */
	}
}

struct deferred {
	int notify_fd;
	uint64_t id;
	int fd; /* O_PATH */
	uint64_t flags;
};

/* Opening a FIFO blocks until its other end opens: that wait happens on a worker. */
static void
deferred_open(void *arg)
{
	struct deferred *d = arg;
	char link[64];

	snprintf(link, sizeof(link), "/proc/self/fd/%d", d->fd);
	int fd = open(link, (int)((d->flags & ~(uint64_t)(O_CREAT | O_EXCL | O_NOFOLLOW)) |
	                          O_CLOEXEC | O_NOCTTY));
	int r = fd < 0 ? -errno : 0;
	if (fd >= 0) {
		struct seccomp_notif_addfd a = {
		    .id = d->id,
		    .flags = SECCOMP_ADDFD_FLAG_SEND,
		    .srcfd = (uint32_t)fd,
		    .newfd_flags = (uint32_t)(d->flags & O_CLOEXEC),
		};
		r = sys_notif_addfd(d->notify_fd, &a);
		close(fd);
		r = r >= 0 || r == -ENOENT ? 0 : r;
	}
	if (r < 0) {
		struct seccomp_notif_resp resp = {.id = d->id, .error = r};
		sys_notif_send(d->notify_fd, &resp);
	}
	close(d->fd);
	free(d);
}

static int
defer(struct sv_call *c, int fd, uint64_t flags)
{
	struct deferred *d = malloc(sizeof(*d));

	if (!d)
		return -ENOMEM;
	*d = (struct deferred){c->sv->notify_fd, c->req->id, fd, flags};
	int r = sv_pool_submit(c->sv->pool, deferred_open, d);
	if (r < 0) {
		free(d);
		return r;
	}
	c->replied = true;
	return 0;
}

/* Re-opens the object fd (O_PATH, decided; its st_mode is mode) with the caller's flags. */
static void
reopen(struct sv_call *c, int fd, uint64_t flags, mode_t mode)
{
	char link[64];

	if (S_ISLNK(mode)) {
		c->err = ELOOP; /* O_NOFOLLOW on a symlink */
		close(fd);
		return;
	}
	if (S_ISFIFO(mode) && !(flags & O_NONBLOCK)) {
		int r = defer(c, fd, flags);
		if (r < 0) {
			c->err = -r;
			close(fd);
		}
		return;
	}
	snprintf(link, sizeof(link), "%d", fd);
	int real = openat(
	    c->sv->self_fd, link,
	    (int)((flags & ~(uint64_t)(O_CREAT | O_EXCL | O_NOFOLLOW)) | O_CLOEXEC | O_NOCTTY));
	int e = errno;
	close(fd);
	if (real < 0) {
		c->err = e;
		return;
	}
	unsigned pty;
	if (strcmp(c->path, "/dev/ptmx") == 0 && ioctl(real, TIOCGPTN, &pty) == 0)
		sv_pty_add(c->sv, pty);
	install(c, real, flags);
}

/* O_TMPFILE: an unnamed file in a directory, a write to that directory. */
static void
open_tmpfile(struct sv_call *c, struct sv_path *p, uint64_t flags, mode_t mode, uint64_t resolve)
{
	mode_t um = 022;
	char canon[PATH_MAX];
	int fd = sv_path_open_canon(c, p, O_DIRECTORY, resolve, canon, sizeof(canon));

	if (fd < 0) {
		c->err = -sv_path_error(c, p, fd, POLICY_WRITE, O_DIRECTORY);
		return;
	}
	int r = sv_decide_fd(c, fd, canon, p->own_fd, POLICY_WRITE, NULL);
	if (r == 0)
		r = tgt_umask(c, &um);
	if (r < 0) {
		c->err = -r;
		close(fd);
		return;
	}
	struct open_how how = {.flags = (flags & ~(uint64_t)O_CLOEXEC) | O_CLOEXEC,
	                       .mode = mode & ~um & 07777};
	int real = sys_openat2(fd, ".", &how);
	close(fd);
	if (real < 0)
		c->err = -real;
	else
		install(c, real, flags);
}

/* Creates the last component of p in its parent. Returns 1 to resolve p again. */
static int
create(struct sv_call *c, struct sv_path *p, uint64_t flags, mode_t mode, uint64_t resolve)
{
	char name[NAME_MAX + 2], canon[PATH_MAX], target[PATH_MAX];
	struct stat st;
	mode_t um = 022;

	_cleanup_close_ int dir = sv_path_parent(c, p, resolve, name, sizeof(name));
	if (dir < 0)
		return c->err = -sv_path_error(c, p, dir, POLICY_WRITE, SV_RESOLVE_PARENT), 0;
	int r = sv_fd_path(c, dir, canon, sizeof(canon));
	char full[PATH_MAX];
	if (r == 0)
		r = policy_path_normalize(canon, name, full, sizeof(full)) < 0 ? -ENAMETOOLONG : 0;
	if (r == 0)
		r = sv_decide_path(c, full, POLICY_WRITE);
	if (r < 0)
		return c->err = -r, 0;

	/* A dangling symlink: O_CREAT follows it and creates its target. */
	if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (!S_ISLNK(st.st_mode))
			return 1; /* created meanwhile: resolve again */
		if (flags & O_EXCL)
			return c->err = EEXIST, 0;
		if (flags & O_NOFOLLOW)
			return c->err = ELOOP, 0;
		ssize_t n = readlinkat(dir, name, target, sizeof(target) - 1);
		if (n < 0)
			return c->err = errno, 0;
		target[n] = '\0';
		sv_path_done(p);
		p->len = (size_t)snprintf(p->s, sizeof(p->s), "%s", target);
		p->own_fd = false;
		if (target[0] != '/')
			p->base = TAKE_FD(dir);
		return 1;
	}
	if ((r = tgt_umask(c, &um)) < 0)
		return c->err = -r, 0;
	/* No setuid or setgid file is born under moat (see mutate.c). */
	mode &= ~(mode_t)(S_ISUID | S_ISGID);
	/*
	 * O_EXCL alone keeps a symlink planted at name from being followed (EEXIST);
	 * an O_NOFOLLOW of ours would stay in the file's status flags (F_GETFL).
	 */
	struct open_how how = {
	    .flags = (flags & ~(uint64_t)O_CLOEXEC) | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY,
	    .mode = mode & ~um & 07777,
	};
	int fd = sys_openat2(dir, name, &how);
	if (fd == -EEXIST)
		return 1; /* lost a race: resolve again */
	if (fd < 0)
		return c->err = -fd, 0;
	install(c, fd, flags);
	return 0;
}

/*
 * A read of a plain absolute path whose spelling the policy allows, naming a
 * regular file or a directory, is opened at once with the caller's flags: no
 * O_PATH open first, no re-open through /proc. RESOLVE_NO_SYMLINKS keeps the
 * object opened at exactly that path, whatever renames meanwhile; O_NONBLOCK and
 * O_NOCTTY take the sting out of a FIFO or terminal swapped in after the statx
 * (the object is looked at again once open, and let go if it is neither). What
 * the path cannot tell (a hard link or bind mount of a denied object, a foreign
 * mount) is decided on the open object, as always, before it is installed.
 * Reads only: a write could truncate or append to an alias before that. Returns
 * false when the usual way must be taken.
 */
static bool
open_read_fast(struct sv_call *c, struct sv_path *p, uint64_t flags)
{
	char canon[PATH_MAX];
	struct policy_verdict v;
	struct statx stx;

	/* (O_ASYNC: set at open it is only a flag, and F_SETFL would arm it.) */
	if (access_of(flags) != POLICY_READ || (flags & O_ASYNC) || p->resolve ||
	    !sv_path_plain(c, p, canon, sizeof(canon)))
		return false;
	policy_match(c->sv->policy, canon, strlen(canon), POLICY_READ, &v);
	if (!v.allow ||
	    statx(AT_FDCWD, p->s, AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC, STATX_TYPE, &stx) < 0 ||
	    !(S_ISREG(stx.stx_mode) || S_ISDIR(stx.stx_mode)))
		return false;
	struct open_how how = {
	    .flags = (flags & ~(uint64_t)O_CLOEXEC) | O_NONBLOCK | O_NOCTTY | O_CLOEXEC,
	    .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	int fd = sys_openat2(AT_FDCWD, p->s, &how);
	if (fd < 0)
		return false;
	mode_t mode;
	int r = sv_decide_fd(c, fd, canon, false, POLICY_READ, &mode);
	if (r == 0 && !(S_ISREG(mode) || S_ISDIR(mode))) {
		/* Swapped for something else since the statx: the usual way decides again. */
		close(fd);
		return false;
	}
	/* The status flags the caller gave (F_SETFL takes these alone): O_NONBLOCK only if asked. */
	if (r == 0 && !(flags & O_NONBLOCK) &&
	    fcntl(fd, F_SETFL, (int)(flags & (O_APPEND | O_DIRECT | O_NOATIME))) < 0)
		r = -errno;
	if (r < 0) {
		c->err = -r;
		close(fd);
		return true;
	}
	install(c, fd, flags);
	return true;
}

static void
do_open(struct sv_call *c, int dirfd, uint64_t addr, uint64_t flags, uint64_t mode,
        uint64_t resolve)
{
	struct sv_path p;
	char canon[PATH_MAX];
	enum policy_access a = access_of(flags);
	bool excl = (flags & O_CREAT) && (flags & O_EXCL);
	int follow_flags = (flags & O_NOFOLLOW) || excl ? O_NOFOLLOW : 0;

	/* openat2's RESOLVE_* flags are about the way from the directory itself: no composing. */
	int r = sv_path_read(c, dirfd, addr, resolve ? 0 : SV_PATH_COMPOSE, &p);
	if (r == 0 && p.s[0] == '/' && p.base < 0 &&
	    (resolve & (RESOLVE_BENEATH | RESOLVE_IN_ROOT))) {
		/* openat2 scoped to a dirfd (or the cwd): an absolute path is resolved inside it. */
		r = tgt_dirfd(c, dirfd);
		p.base = r;
		r = r < 0 ? r : 0;
	}
	if (r < 0) {
		c->err = -r;
		return;
	}
	p.resolve = resolve;
	/* What open(2) refuses before it looks at the path's object (Linux 6.4+ for the first). */
	if ((flags & O_CREAT) && (flags & __O_TMPFILE) != __O_TMPFILE && (flags & O_DIRECTORY)) {
		c->err = EINVAL;
		sv_path_done(&p);
		return;
	}
	if ((flags & __O_TMPFILE) == __O_TMPFILE) {
		open_tmpfile(c, &p, flags, (mode_t)mode, resolve);
		sv_path_done(&p);
		return;
	}
	if (open_read_fast(c, &p, flags)) {
		sv_path_done(&p);
		return;
	}
	for (int i = 0; i < FOLLOW_MAX; i++) {
		int fd = sv_path_open_canon(c, &p, follow_flags | (int)(flags & O_DIRECTORY),
		                            resolve, canon, sizeof(canon));
		if (fd >= 0) {
			mode_t m;
			r = sv_decide_fd(c, fd, canon, p.own_fd, a, &m);
			if (r == 0 && !excl && (flags & O_CREAT) && S_ISDIR(m))
				r = -EISDIR; /* O_CREAT on an existing directory */
			if (r < 0 || excl) {
				c->err = r < 0 ? -r : EEXIST;
				close(fd);
			} else if (flags & O_PATH) {
				/*
				 * ADDFD cannot install an O_PATH file (the kernel's fget()
				 * refuses them), so the decided open goes on in the kernel.
				 * A racing rename could hand the target an O_PATH fd on
				 * another object; such an fd is decided again wherever it is
				 * used (fstat of an O_PATH fd, re-opens, *at() calls).
				 */
				close(fd);
				c->cont = true;
			} else {
				reopen(c, fd, flags, m);
			}
			break;
		}
		if (fd != -ENOENT || !(flags & O_CREAT)) {
			c->err =
			    -sv_path_error(c, &p, fd, a, follow_flags | (int)(flags & O_DIRECTORY));
			break;
		}
		if (p.len && p.s[p.len - 1] == '/') {
			/* "name/" can only be a directory, which O_CREAT does not make. */
			c->err = -sv_path_error(c, &p, -EISDIR, POLICY_WRITE, -1);
			break;
		}
		if (create(c, &p, flags, (mode_t)mode, resolve) == 0)
			break;
		if (i == FOLLOW_MAX - 1)
			c->err = ELOOP;
	}
	sv_path_done(&p);
}

/* Flags as openat() takes them: unknown bits ignored, mode only where it is used. */
static void
legacy_open(struct sv_call *c, int dirfd, uint64_t addr, uint64_t flags, uint64_t mode)
{
	flags &= OPEN_FLAGS_KNOWN;
	mode = (flags & O_CREAT) || (flags & __O_TMPFILE) == __O_TMPFILE ? mode & 07777 : 0;
	do_open(c, dirfd, addr, flags, mode, 0);
}

void
sv_open(struct sv_call *c)
{
	const __u64 *a = c->req->data.args;
	legacy_open(c, AT_FDCWD, a[0], a[1], a[2]);
}

void
sv_openat(struct sv_call *c)
{
	const __u64 *a = c->req->data.args;
	legacy_open(c, (int)a[0], a[1], a[2], a[3]);
}

void
sv_creat(struct sv_call *c)
{
	const __u64 *a = c->req->data.args;
	legacy_open(c, AT_FDCWD, a[0], O_CREAT | O_WRONLY | O_TRUNC, a[1]);
}

void
sv_openat2(struct sv_call *c)
{
	const __u64 *a = c->req->data.args;
	struct open_how how = {0};
	size_t size = a[3];
	unsigned char extra[256];

	if (size < sizeof(how) || size > 4096) {
		c->err = size < sizeof(how) ? EINVAL : E2BIG;
		return;
	}
	int r = tgt_read(c, a[2], &how, sizeof(how));
	/* A larger struct from a newer libc is fine if the fields we do not know are zero. */
	for (size_t off = sizeof(how); r == 0 && off < size; off += sizeof(extra)) {
		size_t n = size - off < sizeof(extra) ? size - off : sizeof(extra);
		r = tgt_read(c, a[2] + off, extra, n);
		for (size_t i = 0; r == 0 && i < n; i++)
			if (extra[i])
				r = -E2BIG;
	}
	if (r < 0) {
		c->err = -r;
		return;
	}
	/* What openat2 itself refuses, it refuses here too: our openat2 checks the same. */
	if ((how.flags & ~(uint64_t)OPEN_FLAGS_KNOWN) || how.mode > 07777 ||
	    (how.mode && !(how.flags & O_CREAT) && (how.flags & __O_TMPFILE) != __O_TMPFILE)) {
		c->err = EINVAL;
		return;
	}
	do_open(c, (int)a[0], a[1], how.flags, how.mode, how.resolve);
}

/* SPDX-License-Identifier: MIT */
/*
 * The stat family, performed by the supervisor on the resolved object and
 * copied back with process_vm_writev. A denied stat reports ENOENT: the path is
 * invisible, and tools that probe for files keep working.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include "moat/macro.h"
#include "moat/sys.h"
#include "sv.h"

/*
 * One of the target's own fds ("" with AT_EMPTY_PATH), as our copy of the same
 * file. An fd the target holds needs no decision, except an O_PATH one: those
 * come from opens the kernel carried out after our check (see open.c), so they
 * are decided here.
 */
static int
own_object(struct sv_call *c, int dirfd)
{
	if (dirfd == AT_FDCWD)
		return tgt_dirfd(c, AT_FDCWD);
	int fd = tgt_getfd(c, dirfd);
	if (fd < 0)
		return fd == -ESRCH ? fd : -EBADF;
	int fl = fcntl(fd, F_GETFL);
	int r = fl >= 0 && (fl & O_PATH) ? sv_decide_fd(c, fd, NULL, true, POLICY_STAT, NULL) : 0;
	if (r < 0) {
		close(fd);
		return r;
	}
	if (!c->decided)
		sv_fd_path(c, fd, c->path, sizeof(c->path));
	return fd;
}

/*
 * The object a stat-like call names, as an O_PATH fd of ours, decided for STAT.
 * "" with AT_EMPTY_PATH is the dirfd itself: an object the target holds already.
 */
static int
object(struct sv_call *c, int dirfd, uint64_t addr, int at_flags, int open_flags)
{
	struct sv_path p;
	int r =
	    sv_path_read(c, dirfd, addr,
	                 SV_PATH_COMPOSE | (at_flags & AT_EMPTY_PATH ? SV_PATH_EMPTY_OK : 0), &p);
	if (r == -ENXIO && (at_flags & AT_EMPTY_PATH))
		r = 0; /* "" on a socket, which /proc cannot open */
	if (r < 0)
		return r;
	if (p.len == 0) {
		sv_path_done(&p);
		return own_object(c, dirfd);
	}
	if (at_flags & AT_SYMLINK_NOFOLLOW)
		open_flags |= O_NOFOLLOW;
	r = sv_path_decide(c, &p, open_flags, POLICY_STAT);
	sv_path_done(&p);
	return r;
}

/* Linux 6.11+: newfstatat and statx take a NULL path with AT_EMPTY_PATH as "". */
static int
stat_object(struct sv_call *c, int dirfd, uint64_t addr, int at_flags)
{
	if (addr == 0 && (at_flags & AT_EMPTY_PATH))
		return own_object(c, dirfd);
	return object(c, dirfd, addr, at_flags, 0);
}

static void
reply_stat(struct sv_call *c, int dirfd, uint64_t addr, int flags, uint64_t buf)
{
	struct stat st;

	if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH | AT_NO_AUTOMOUNT)) {
		c->err = EINVAL;
		return;
	}
	int fd = stat_object(c, dirfd, addr, flags);
	if (fd < 0) {
		c->err = -fd;
		return;
	}
	int r = fstatat(fd, "", &st, AT_EMPTY_PATH) < 0 ? -errno : 0;
	close(fd);
	if (r == 0)
		r = tgt_write(c, buf, &st, sizeof(st));
	c->err = -r;
}

void
sv_stat(struct sv_call *c)
{
	const __u64 *a = c->req->data.args;
	reply_stat(c, AT_FDCWD, a[0], 0, a[1]);
}

void
sv_lstat(struct sv_call *c)
{
	const __u64 *a = c->req->data.args;
	reply_stat(c, AT_FDCWD, a[0], AT_SYMLINK_NOFOLLOW, a[1]);
}

void
sv_newfstatat(struct sv_call *c)
{
	const __u64 *a = c->req->data.args;
	reply_stat(c, (int)a[0], a[1], (int)a[3], a[2]);
}

void
sv_statx(struct sv_call *c)
{
	const __u64 *a = c->req->data.args;
	int flags = (int)a[2];
	struct statx stx;

	if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH | AT_NO_AUTOMOUNT | AT_STATX_SYNC_TYPE)) {
		c->err = EINVAL;
		return;
	}
	int fd = stat_object(c, (int)a[0], a[1], flags);
	if (fd < 0) {
		c->err = -fd;
		return;
	}
	int r = statx(fd, "", AT_EMPTY_PATH | (flags & AT_STATX_SYNC_TYPE), (unsigned)a[3], &stx);
	r = r < 0 ? -errno : 0;
	close(fd);
	if (r == 0)
		r = tgt_write(c, a[4], &stx, sizeof(stx));
	c->err = -r;
}

/* access(): the policy answers first for what it forbids, then the kernel. */
static void
reply_access(struct sv_call *c, int dirfd, uint64_t addr, int mode, int flags)
{
	static const struct {
		int bit;
		enum policy_access access;
	} wants[] = {{R_OK, POLICY_READ}, {W_OK, POLICY_WRITE}, {X_OK, POLICY_EXEC}};
	struct policy_verdict v;

	if (mode & ~(R_OK | W_OK | X_OK) ||
	    flags & ~(AT_EACCESS | AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH)) {
		c->err = EINVAL;
		return;
	}
	int fd = object(c, dirfd, addr, flags, 0);
	if (fd < 0) {
		c->err = -fd;
		return;
	}
	for (size_t i = 0; i < ARRAY_SIZE(wants); i++) {
		if (!(mode & wants[i].bit) || c->path[0] != '/')
			continue;
		policy_match(c->sv->policy, c->path, strlen(c->path), wants[i].access, &v);
		if (!v.allow) {
			c->err = EACCES;
			close(fd);
			return;
		}
	}
	int r = sys_faccessat2(fd, "", mode, (flags & AT_EACCESS) | AT_EMPTY_PATH);
	c->err = r < 0 ? -r : 0;
	close(fd);
}

void
sv_access(struct sv_call *c)
{
	const __u64 *a = c->req->data.args;
	reply_access(c, AT_FDCWD, a[0], (int)a[1], 0);
}

void
sv_faccessat(struct sv_call *c)
{
	const __u64 *a = c->req->data.args;
	reply_access(c, (int)a[0], a[1], (int)a[2], 0);
}

void
sv_faccessat2(struct sv_call *c)
{
	const __u64 *a = c->req->data.args;
	reply_access(c, (int)a[0], a[1], (int)a[2], (int)a[3]);
}

static void
reply_readlink(struct sv_call *c, int dirfd, uint64_t addr, uint64_t buf, int64_t size)
{
	char target[PATH_MAX];
	struct stat st;

	if (size <= 0) {
		c->err = EINVAL;
		return;
	}
	int fd = object(c, dirfd, addr, AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH, 0);
	if (fd < 0) {
		c->err = -fd;
		return;
	}
	ssize_t n = -1;
	if (fstat(fd, &st) == 0 && !S_ISLNK(st.st_mode))
		errno = EINVAL;
	else
		n = readlinkat(fd, "", target, sizeof(target));
	int e = errno;
	close(fd);
	if (n < 0) {
		c->err = e;
		return;
	}
	if (n > size)
		n = size;
	int r = tgt_write(c, buf, target, (size_t)n);
	c->err = -r;
	c->val = n;
}

void
sv_readlink(struct sv_call *c)
{
	const __u64 *a = c->req->data.args;
	reply_readlink(c, AT_FDCWD, a[0], a[1], (int64_t)a[2]);
}

void
sv_readlinkat(struct sv_call *c)
{
	const __u64 *a = c->req->data.args;
	reply_readlink(c, (int)a[0], a[1], a[2], (int64_t)a[3]);
}

void
sv_statfs(struct sv_call *c)
{
	const __u64 *a = c->req->data.args;
	struct statfs sfs;

	int fd = object(c, AT_FDCWD, a[0], 0, 0);
	if (fd < 0) {
		c->err = -fd;
		return;
	}
	int r = fstatfs(fd, &sfs) < 0 ? -errno : 0;
	close(fd);
	if (r == 0)
		r = tgt_write(c, a[1], &sfs, sizeof(sfs));
	c->err = -r;
}

/*
 * chdir is decided, then let through: a working directory grants nothing by
 * itself, since every access made from it is decided on the object it reaches.
 * (A racing thread could swap the path after the check; it would gain a cwd in
 * which nothing is readable.)
 */
void
sv_chdir(struct sv_call *c)
{
	int fd = object(c, AT_FDCWD, c->req->data.args[0], 0, O_DIRECTORY);
	if (fd < 0) {
		c->err = -fd;
		return;
	}
	close(fd);
	c->cont = true;
}

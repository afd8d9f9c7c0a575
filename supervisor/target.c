/* SPDX-License-Identifier: MIT */
/*
 * Access to the target of a trapped call: its memory, its fds, its cwd, its
 * umask. Anything reached through /proc/TID is followed by NOTIF_ID_VALID: if
 * the target died and its tid was reused, what was opened belongs to someone
 * else, and the call is dropped.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>

#include "moat/macro.h"
#include "moat/sys.h"
#include "sv.h"

#define PAGE 4096u

int
tgt_read(struct sv_call *c, uint64_t addr, void *buf, size_t n)
{
	struct iovec local = {buf, n}, remote = {(void *)(uintptr_t)addr, n};

	if (n == 0)
		return 0;
	ssize_t r = process_vm_readv(c->tid, &local, 1, &remote, 1, 0);
	if (r < 0)
		return errno == ESRCH ? (c->gone = true, -ESRCH) : -EFAULT;
	return (size_t)r == n ? 0 : -EFAULT;
}

int
tgt_write(struct sv_call *c, uint64_t addr, const void *buf, size_t n)
{
	struct iovec local = {(void *)buf, n}, remote = {(void *)(uintptr_t)addr, n};

	if (n == 0)
		return 0;
	/* If the target died and its pid was reused, the write would land in a stranger. */
	if (tgt_valid(c) < 0)
		return -ESRCH;
	ssize_t r = process_vm_writev(c->tid, &local, 1, &remote, 1, 0);
	if (r < 0)
		return errno == ESRCH ? (c->gone = true, -ESRCH) : -EFAULT;
	return (size_t)r == n ? 0 : -EFAULT;
}

/* Reads up to the end of each page at a time: the next page may be unmapped. */
int
tgt_read_string(struct sv_call *c, uint64_t addr, char *buf, size_t size)
{
	size_t got = 0;

	if (addr == 0)
		return -EFAULT;
	while (got < size) {
		size_t chunk = PAGE - (size_t)((addr + got) % PAGE);
		if (chunk > size - got)
			chunk = size - got;
		int r = tgt_read(c, addr + got, buf + got, chunk);
		if (r < 0)
			return r;
		char *nul = memchr(buf + got, '\0', chunk);
		if (nul)
			return (int)(nul - buf);
		got += chunk;
	}
	return -ENAMETOOLONG;
}

int
tgt_valid(struct sv_call *c)
{
	if (sys_notif_id_valid(c->sv->notify_fd, c->req->id) == 0)
		return 0;
	c->gone = true;
	return -ENOENT;
}

int
tgt_dirfd(struct sv_call *c, int dirfd)
{
	char rel[64];

	if (dirfd == AT_FDCWD)
		snprintf(rel, sizeof(rel), "%d/cwd", c->tid);
	else if (dirfd < 0)
		return -EBADF;
	else
		snprintf(rel, sizeof(rel), "%d/fd/%d", c->tid, dirfd);
	int fd = openat(c->sv->proc_fd, rel, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -EBADF : -errno;
	if (tgt_valid(c) < 0) {
		close(fd);
		return -ESRCH;
	}
	return fd;
}

int
tgt_getfd(struct sv_call *c, int fd)
{
	_cleanup_close_ int pidfd = sys_pidfd_open(c->tid, PIDFD_THREAD);

	if (pidfd < 0)
		return pidfd == -ESRCH ? (c->gone = true, -ESRCH) : pidfd;
	int r = sys_pidfd_getfd(pidfd, fd);
	if (r >= 0 && tgt_valid(c) < 0) {
		close(r);
		return -ESRCH;
	}
	return r;
}

int
tgt_umask(struct sv_call *c, mode_t *ret)
{
	char rel[64], buf[4096];

	snprintf(rel, sizeof(rel), "%d/status", c->tid);
	_cleanup_close_ int fd = openat(c->sv->proc_fd, rel, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return n < 0 ? -errno : -EIO;
	buf[n] = '\0';
	if (tgt_valid(c) < 0)
		return -ESRCH;
	const char *u = strstr(buf, "\nUmask:");
	if (!u)
		return -EIO;
	*ret = (mode_t)strtoul(u + 7, NULL, 8) & 0777;
	return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * Raw system calls and seccomp user-notification ioctls, in one place. Each
 * wrapper returns a non-negative result or -errno. The #ifndef fallbacks name
 * the kernel version that introduced what they stand in for: the build headers
 * (Debian 12: Linux 6.1) can be older than the running kernel.
 */
#ifndef MOAT_SYS_H
#define MOAT_SYS_H

#include <errno.h>
#include <linux/filter.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

/* Linux 6.6 */
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
/* Linux 6.0 */
#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif
/* Linux 5.14 */
#ifndef SECCOMP_ADDFD_FLAG_SEND
#define SECCOMP_ADDFD_FLAG_SEND (1UL << 1)
#endif
/* Linux 6.6 (x86_64 number) */
#ifndef __NR_fchmodat2
#define __NR_fchmodat2 452
#endif
/* Linux 5.3 / 5.6 */
#ifndef __NR_pidfd_open
#define __NR_pidfd_open 434
#endif
#ifndef __NR_pidfd_getfd
#define __NR_pidfd_getfd 438
#endif
/* Linux 6.9: a pidfd for a thread, not only a thread-group leader */
#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

static inline int
sys_ret(long r)
{
	return r < 0 ? -errno : (int)r;
}

static inline int
sys_seccomp(unsigned op, unsigned flags, void *args)
{
	return sys_ret(syscall(__NR_seccomp, op, flags, args));
}

static inline int
sys_pidfd_open(pid_t pid, unsigned flags)
{
	return sys_ret(syscall(__NR_pidfd_open, pid, flags));
}

static inline int
sys_pidfd_getfd(int pidfd, int fd)
{
	return sys_ret(syscall(__NR_pidfd_getfd, pidfd, fd, 0));
}

static inline int
sys_pidfd_send_signal(int pidfd, int sig)
{
	return sys_ret(syscall(__NR_pidfd_send_signal, pidfd, sig, NULL, 0));
}

static inline int
sys_openat2(int dirfd, const char *path, struct open_how *how)
{
	return sys_ret(syscall(__NR_openat2, dirfd, path, how, sizeof(*how)));
}

/* Linux 5.8 */
#ifndef __NR_faccessat2
#define __NR_faccessat2 439
#endif

static inline int
sys_faccessat2(int dirfd, const char *path, int mode, int flags)
{
	return sys_ret(syscall(__NR_faccessat2, dirfd, path, mode, flags));
}

static inline int
sys_fchmodat2(int dirfd, const char *path, mode_t mode, int flags)
{
	return sys_ret(syscall(__NR_fchmodat2, dirfd, path, mode, flags));
}

/* ---- seccomp user notification ---- */

static inline int
sys_notif_recv(int fd, struct seccomp_notif *req)
{
	return ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, req) < 0 ? -errno : 0;
}

static inline int
sys_notif_send(int fd, struct seccomp_notif_resp *resp)
{
	return ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, resp) < 0 ? -errno : 0;
}

/* 0 while the notification id is still pending (the target has not died or gone on). */
static inline int
sys_notif_id_valid(int fd, uint64_t id)
{
	return ioctl(fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) < 0 ? -errno : 0;
}

/* Installs srcfd in the target; with SECCOMP_ADDFD_FLAG_SEND it is also the reply. */
static inline int
sys_notif_addfd(int fd, struct seccomp_notif_addfd *a)
{
	return sys_ret(ioctl(fd, SECCOMP_IOCTL_NOTIF_ADDFD, a));
}

static inline int
sys_notif_set_flags(int fd, uint64_t flags)
{
	return ioctl(fd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, flags) < 0 ? -errno : 0;
}

#endif

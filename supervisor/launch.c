/* SPDX-License-Identifier: MIT */
/*
 * Starting the agent. The child cannot send its listener fd over a socket: after
 * the filter is loaded, sendmsg is trapped, and nobody is listening yet. So it
 * writes the fd's number down a pipe and waits; the parent copies the fd out of
 * it with pidfd_getfd and lets it go on. read, write and close are never trapped.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "filter.h"
#include "launch.h"
#include "moat/macro.h"
#include "moat/sys.h"

/*
 * Capabilities a root agent gives up: those that reach past the files the surface
 * governs (modules, raw I/O, the network's configuration, other users' processes,
 * devices, the clock, audit, BPF). It keeps what ordinary root work on files needs
 * (chown, DAC override, setuid to drop privileges). Without privilege, there is
 * nothing to drop and the calls fail harmlessly.
 */
static const int dropped_caps[] = {
    CAP_SYS_ADMIN,     CAP_SYS_MODULE,
    CAP_SYS_RAWIO,     CAP_SYS_PTRACE,
    CAP_SYS_BOOT,      CAP_SYS_TIME,
    CAP_SYS_NICE,      CAP_SYS_RESOURCE,
    CAP_SYS_PACCT,     CAP_SYS_TTY_CONFIG,
    CAP_NET_ADMIN,     CAP_NET_RAW,
    CAP_MKNOD,         CAP_KILL,
    CAP_MAC_ADMIN,     CAP_MAC_OVERRIDE,
    CAP_AUDIT_CONTROL, CAP_AUDIT_WRITE,
    CAP_SYSLOG,        CAP_WAKE_ALARM,
    CAP_BLOCK_SUSPEND, CAP_LINUX_IMMUTABLE,
    CAP_IPC_OWNER,     CAP_SETPCAP,
    CAP_SETFCAP,       CAP_DAC_READ_SEARCH,
    CAP_LEASE,         CAP_BPF,
    CAP_PERFMON,       CAP_CHECKPOINT_RESTORE,
};

static void
drop_caps(void)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2];

	for (size_t i = 0; i < ARRAY_SIZE(dropped_caps); i++)
		prctl(PR_CAPBSET_DROP, dropped_caps[i], 0, 0, 0);
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	if (syscall(SYS_capget, &h, d) < 0)
		return;
	for (size_t i = 0; i < ARRAY_SIZE(dropped_caps); i++) {
		unsigned w = (unsigned)dropped_caps[i] / 32, bit = 1u << (dropped_caps[i] % 32);
		d[w].effective &= ~bit;
		d[w].permitted &= ~bit;
		d[w].inheritable &= ~bit;
	}
	syscall(SYS_capset, &h, d);
}

/* Only async-signal-safe calls from fork to exec. */
static _Noreturn void
child(char *const argv[], const struct sock_fprog *prog, pid_t parent, int up, int down)
{
	sigset_t none;
	int fd, go;

	setpgid(0, 0);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(127);
	/* Ignored and blocked signals survive exec: the agent starts as a shell would start it. */
	for (int s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP)
			signal(s, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	drop_caps();
	/*
	 * No core dumps: the kernel writes them into the cwd with no system call to
	 * decide, and chdir is let through after its check.
	 */
	struct rlimit no_core = {0, 0};
	setrlimit(RLIMIT_CORE, &no_core);

	fd = sv_filter_load(prog);
	if (write(up, &fd, sizeof(fd)) != sizeof(fd) || fd < 0)
		_exit(126);
	if (read(down, &go, sizeof(go)) != sizeof(go))
		_exit(126);
	close(fd);
	close(up);
	close(down);
	execvp(argv[0], argv);
	int e = errno;
	const char *msg = strerror(e);
	(void)!write(2, "moat: ", 6);
	(void)!write(2, argv[0], strlen(argv[0]));
	(void)!write(2, ": ", 2);
	(void)!write(2, msg, strlen(msg));
	(void)!write(2, "\n", 1);
	_exit(e == ENOENT ? 127 : 126);
}

/* pid into the cgroup at dir (its cgroup.procs). */
static void
join_group(const char *dir, pid_t pid)
{
	char path[PATH_MAX], text[32];

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	snprintf(text, sizeof(text), "%d", (int)pid);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		(void)!write(fd, text, strlen(text));
		close(fd);
	}
}

int
sv_agent_start(char *const argv[], const struct sock_fprog *prog, const char *group,
               struct sv_agent *ret)
{
	int up[2], down[2], fd = -1, r = 0;
	pid_t parent = getpid();

	ret->pidfd = -1;
	if (pipe2(up, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(down, O_CLOEXEC) < 0) {
		r = -errno;
		close(up[0]);
		close(up[1]);
		return r;
	}
	pid_t pid = fork();
	if (pid == 0)
		child(argv, prog, parent, up[1], down[0]);
	close(up[1]);
	close(down[0]);
	if (pid < 0) {
		r = -errno;
		goto out;
	}
	/* Both sides set the group, so it exists whichever runs first. */
	setpgid(pid, pid);
	ret->pid = pid;
	ret->pgrp = pid;
	ret->pidfd = sys_pidfd_open(pid, 0);
	if (ret->pidfd < 0) {
		r = ret->pidfd;
		goto kill;
	}
	if (read(up[0], &fd, sizeof(fd)) != sizeof(fd)) {
		r = -EIO;
		goto kill;
	}
	if (fd < 0) {
		r = fd;
		goto kill;
	}
	ret->notify_fd = sys_pidfd_getfd(ret->pidfd, fd);
	if (ret->notify_fd < 0) {
		r = ret->notify_fd;
		goto kill;
	}
	/* Still waiting for the go: it has forked nothing, its whole tree will be in the group. */
	if (group)
		join_group(group, pid);
	int go = 1;
	if (write(down[1], &go, sizeof(go)) != sizeof(go)) {
		r = -EIO;
		close(ret->notify_fd);
		goto kill;
	}
	goto out;
kill:
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	if (ret->pidfd >= 0)
		close(ret->pidfd);
out:
	close(up[0]);
	close(down[1]);
	return r;
}

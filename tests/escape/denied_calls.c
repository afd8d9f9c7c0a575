/* SPDX-License-Identifier: MIT */
/*
 * denied_calls: every way around the filter that the filter refuses outright,
 * run from the agent (moat's direct child). Each must fail; prints one line per
 * call and exits 1 if any succeeded.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <termios.h>
#include <unistd.h>

static int bad;

static void
expect_fail(const char *name, long r)
{
	if (r < 0) {
		printf("%-28s refused: %s\n", name, strerrorname_np(errno));
		return;
	}
	printf("%-28s ALLOWED (%ld)\n", name, r);
	bad = 1;
}

int
main(void)
{
	pid_t sv = getppid();
	char buf[64] = {0};
	struct iovec l = {buf, 16}, r = {buf, 16};
	struct rlimit rl = {1, 1};
	struct clone_args ca = {.flags = CLONE_NEWUSER, .exit_signal = SIGCHLD};
	struct sock_filter f[] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
	struct sock_fprog prog = {1, f};

	expect_fail("ptrace(TRACEME)", ptrace(PTRACE_TRACEME, 0, 0, 0));
	expect_fail("ptrace(SEIZE supervisor)", ptrace(PTRACE_SEIZE, sv, 0, 0));
	expect_fail("process_vm_readv(supervisor)", process_vm_readv(sv, &l, 1, &r, 1, 0));
	expect_fail("process_vm_writev(self)", process_vm_writev(getpid(), &l, 1, &r, 1, 0));
	expect_fail("io_uring_setup", syscall(SYS_io_uring_setup, 8, buf));
	expect_fail("unshare(NEWUSER)", unshare(CLONE_NEWUSER));
	expect_fail("unshare(NEWNS)", unshare(CLONE_NEWNS));
	expect_fail("clone(NEWUSER)", syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0));
	expect_fail("clone(NEWNS)", syscall(SYS_clone, CLONE_NEWNS | SIGCHLD, 0, 0, 0, 0));
	expect_fail("clone3(NEWUSER)", syscall(SYS_clone3, &ca, sizeof(ca)));
	expect_fail("setns", setns(0, 0));
	expect_fail("pidfd_open(supervisor)", syscall(SYS_pidfd_open, sv, 0));
	int pfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	expect_fail("pidfd_getfd(self, 0)", syscall(SYS_pidfd_getfd, pfd, 0, 0));
	expect_fail("kill(supervisor, 0)", kill(sv, 0));
	expect_fail("kill(-its group, 0)", kill(-getpgid(sv), 0));
	expect_fail("kill(-1, 0)", kill(-1, 0));
	expect_fail("tgkill(supervisor)", syscall(SYS_tgkill, sv, sv, 0));
	expect_fail("tkill(supervisor)", syscall(SYS_tkill, sv, 0));
	expect_fail("rt_sigqueueinfo(supervisor)", syscall(SYS_rt_sigqueueinfo, sv, 0, buf));
	expect_fail("prlimit(supervisor, NOFILE)", prlimit(sv, RLIMIT_NOFILE, &rl, NULL));
	expect_fail("setpriority(supervisor)", setpriority(PRIO_PROCESS, (id_t)sv, 19));
	expect_fail("sched_setaffinity(superv.)", syscall(SYS_sched_setaffinity, sv, 8, buf));
	expect_fail("open_by_handle_at", syscall(SYS_open_by_handle_at, AT_FDCWD, buf, 0));
	expect_fail("name_to_handle_at",
	            syscall(SYS_name_to_handle_at, AT_FDCWD, ".", buf, buf, 0));
	expect_fail("bpf", syscall(SYS_bpf, 0, buf, 16));
	expect_fail("userfaultfd", syscall(SYS_userfaultfd, 0));
	expect_fail("perf_event_open", syscall(SYS_perf_event_open, buf, 0, -1, -1, 0));
	expect_fail("mount", syscall(SYS_mount, "none", "/tmp", "tmpfs", 0, 0));
	expect_fail("open_tree(CLONE)", syscall(SYS_open_tree, AT_FDCWD, ".", 1));
	expect_fail("fsopen", syscall(SYS_fsopen, "tmpfs", 0));
	expect_fail("chroot", chroot("."));
	expect_fail("keyctl", syscall(SYS_keyctl, 0, 0, 0, 0, 0));
	expect_fail("fanotify_init", syscall(SYS_fanotify_init, 0, 0));
	expect_fail("ioctl(TIOCSTI)", ioctl(0, TIOCSTI, "x"));
	expect_fail("ioctl(TIOCLINUX)", ioctl(0, TIOCLINUX, buf));
	expect_fail("seccomp(NEW_LISTENER)", syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
	                                             SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog));
	return bad;
}

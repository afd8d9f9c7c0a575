/* SPDX-License-Identifier: MIT */
/*
 * refuse NAME...: tries each named way around the boundary and prints
 * "NAME: ok" or "NAME: ERRNO". Under moat every one of them must fail (EPERM,
 * or ENOSYS for clone3). Names:
 *
 *   io_uring_setup ptrace_traceme ptrace_attach ptrace_seize process_vm_readv
 *   process_vm_writev unshare_user unshare_mount clone_newuser setns chroot
 *   mount bpf perf_event_open userfaultfd open_by_handle_at name_to_handle_at
 *   pidfd_getfd seccomp_listener keyctl clone3
 *
 * and, about the supervisor (this process's parent; run them only under moat):
 *
 *   kill_parent (signal 0, then SIGKILL)  kill_parent_group (signal 0)
 *   kill_all (kill(-1, 0))  tgkill_parent (signal 0)  pidfd_open_parent
 *   rt_sigqueueinfo_parent (signal 0)  prlimit_parent  setpriority_parent
 *   proc_parent (open /proc/PPID, then pidfd_send_signal 0 on it)
 *   tkill_tids=FILE (tkill(tid, 0) for each tid in FILE; waits for FILE)
 *   kill_pid=PID (kill(PID, 0), then SIGKILL: the supervisor, seen from a grandchild)
 *
 * and, to make the supervisor start a helper thread (it opens a FIFO off its
 * loop): fifo_hold=PATH (mkfifo PATH, a thread opens it for reading and blocks,
 * then PATH.ready is created) and fifo_release=PATH (opens it for writing).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "progs.h"

static void
report(const char *name, long r, int e)
{
	printf("%s: %s\n", name, r < 0 ? err_name(e) : "ok");
	fflush(stdout);
}

#define TRY(name, call)                                                                            \
	do {                                                                                       \
		errno = 0;                                                                         \
		long r_ = (long)(call);                                                            \
		report(name, r_, errno);                                                           \
	} while (0)

/* A child that waits to be killed, for the calls that need another process. */
static pid_t
sleeper(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		pause();
		_exit(0);
	}
	return pid;
}

static void
reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void
ptrace_attach(const char *name, int request)
{
	pid_t pid = sleeper();
	errno = 0;
	long r = ptrace(request, pid, 0, 0);
	report(name, r, errno);
	reap(pid);
}

static void
vm_rw(const char *name, int write)
{
	char local[8] = "", remote[8] = "secret";
	struct iovec l = {local, sizeof(local)}, rv = {remote, sizeof(remote)};
	pid_t pid = sleeper();

	errno = 0;
	long r = write ? process_vm_writev(pid, &l, 1, &rv, 1, 0)
	               : process_vm_readv(pid, &l, 1, &rv, 1, 0);
	report(name, r, errno);
	reap(pid);
}

/* clone(CLONE_NEWUSER): the child exits at once; the parent reports. */
static void
clone_newuser(void)
{
	errno = 0;
	long pid = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
	if (pid == 0)
		_exit(0);
	report("clone_newuser", pid, errno);
	if (pid > 0)
		waitpid((pid_t)pid, NULL, 0);
}

static void
clone3_plain(void)
{
	struct clone_args args = {.exit_signal = SIGCHLD};
	errno = 0;
	long pid = syscall(SYS_clone3, &args, sizeof(args));
	if (pid == 0)
		_exit(0);
	report("clone3", pid, errno);
	if (pid > 0)
		waitpid((pid_t)pid, NULL, 0);
}

static void
seccomp_listener(void)
{
	struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	struct sock_fprog prog = {1, &allow};

	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	TRY("seccomp_listener",
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog));
}

static void
handles(void)
{
	struct {
		struct file_handle h;
		unsigned char bytes[128];
	} fh = {.h.handle_bytes = 128};
	int mount_id;

	TRY("name_to_handle_at",
	    syscall(SYS_name_to_handle_at, AT_FDCWD, "/etc/passwd", &fh.h, &mount_id, 0));
	TRY("open_by_handle_at", syscall(SYS_open_by_handle_at, AT_FDCWD, &fh.h, O_RDONLY));
}

static void
proc_parent(void)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d", (int)getppid());
	errno = 0;
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	report("proc_parent_open", fd, errno);
	if (fd >= 0) {
		TRY("proc_parent_pidfd_send_signal",
		    syscall(SYS_pidfd_send_signal, fd, 0, NULL, 0));
		close(fd);
	}
}

/* Waits for FILE (written by the test), then tkill(tid, 0) for each tid in it. */
static void
tkill_tids(const char *file)
{
	FILE *f = NULL;
	char line[64];

	for (int i = 0; i < 500 && !(f = fopen(file, "re")); i++)
		usleep(10000);
	if (!f) {
		printf("tkill_tids: no %s\n", file);
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		int tid = atoi(line);
		char name[64];
		if (tid <= 0)
			continue;
		snprintf(name, sizeof(name), "tkill_supervisor_thread");
		TRY(name, syscall(SYS_tkill, tid, 0));
	}
	fclose(f);
}

static void *
fifo_reader(void *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	printf("fifo_reader: %s\n", fd < 0 ? err_name(errno) : "ok");
	fflush(stdout);
	return NULL;
}

static pthread_t fifo_thread;

static void
fifo_hold(const char *path)
{
	char ready[4200];

	TRY("fifo_hold_mkfifo", mkfifo(path, 0600));
	pthread_create(&fifo_thread, NULL, fifo_reader, (void *)path);
	usleep(200000); /* the reader is in open(), waiting for a writer */
	snprintf(ready, sizeof(ready), "%s.ready", path);
	int fd = open(ready, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0)
		close(fd);
}

static void
fifo_release(const char *path)
{
	int fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	report("fifo_release", fd, errno);
	pthread_join(fifo_thread, NULL);
	if (fd >= 0)
		close(fd);
}

static void
one(const char *n)
{
	pid_t pp = getppid();

	if (strcmp(n, "io_uring_setup") == 0) {
		unsigned char params[120] = {0};
		TRY(n, syscall(SYS_io_uring_setup, 4, params));
	} else if (strcmp(n, "ptrace_traceme") == 0) {
		TRY(n, ptrace(PTRACE_TRACEME, 0, 0, 0));
	} else if (strcmp(n, "ptrace_attach") == 0) {
		ptrace_attach(n, PTRACE_ATTACH);
	} else if (strcmp(n, "ptrace_seize") == 0) {
		ptrace_attach(n, PTRACE_SEIZE);
	} else if (strcmp(n, "process_vm_readv") == 0) {
		vm_rw(n, 0);
	} else if (strcmp(n, "process_vm_writev") == 0) {
		vm_rw(n, 1);
	} else if (strcmp(n, "unshare_user") == 0) {
		TRY(n, unshare(CLONE_NEWUSER));
	} else if (strcmp(n, "unshare_mount") == 0) {
		TRY(n, unshare(CLONE_NEWNS));
	} else if (strcmp(n, "clone_newuser") == 0) {
		clone_newuser();
	} else if (strcmp(n, "clone3") == 0) {
		clone3_plain();
	} else if (strcmp(n, "setns") == 0) {
		int fd = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
		TRY(n, setns(fd, 0));
		if (fd >= 0)
			close(fd);
	} else if (strcmp(n, "chroot") == 0) {
		TRY(n, chroot("/"));
	} else if (strcmp(n, "mount") == 0) {
		TRY(n, mount("none", "/mnt", "tmpfs", 0, NULL));
	} else if (strcmp(n, "bpf") == 0) {
		unsigned char attr[128] = {0};
		TRY(n, syscall(SYS_bpf, 0, attr, sizeof(attr)));
	} else if (strcmp(n, "perf_event_open") == 0) {
		unsigned char attr[128] = {0};
		TRY(n, syscall(SYS_perf_event_open, attr, 0, -1, -1, 0));
	} else if (strcmp(n, "userfaultfd") == 0) {
		TRY(n, syscall(SYS_userfaultfd, O_CLOEXEC));
	} else if (strcmp(n, "handles") == 0) {
		handles();
	} else if (strcmp(n, "pidfd_getfd") == 0) {
		int pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
		TRY(n, syscall(SYS_pidfd_getfd, pidfd, 0, 0));
	} else if (strcmp(n, "seccomp_listener") == 0) {
		seccomp_listener();
	} else if (strcmp(n, "keyctl") == 0) {
		TRY(n, syscall(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -3, 0));
	} else if (strcmp(n, "kill_parent") == 0) {
		TRY("kill_parent_0", kill(pp, 0));
		TRY("kill_parent_KILL", kill(pp, SIGKILL));
	} else if (strcmp(n, "kill_parent_group") == 0) {
		TRY(n, kill(-getpgid(pp), 0));
	} else if (strcmp(n, "kill_all") == 0) {
		TRY(n, kill(-1, 0));
	} else if (strcmp(n, "tgkill_parent") == 0) {
		TRY(n, syscall(SYS_tgkill, pp, pp, 0));
	} else if (strcmp(n, "tkill_parent") == 0) {
		TRY(n, syscall(SYS_tkill, pp, 0));
	} else if (strcmp(n, "rt_sigqueueinfo_parent") == 0) {
		siginfo_t si = {.si_code = SI_QUEUE};
		TRY(n, syscall(SYS_rt_sigqueueinfo, pp, 0, &si));
	} else if (strcmp(n, "pidfd_open_parent") == 0) {
		TRY(n, syscall(SYS_pidfd_open, pp, 0));
	} else if (strcmp(n, "prlimit_parent") == 0) {
		struct rlimit rl;
		TRY(n, prlimit(pp, RLIMIT_NOFILE, NULL, &rl));
	} else if (strcmp(n, "setpriority_parent") == 0) {
		TRY(n, setpriority(PRIO_PROCESS, (id_t)pp, getpriority(PRIO_PROCESS, (id_t)pp)));
	} else if (strcmp(n, "proc_parent") == 0) {
		proc_parent();
	} else if (strncmp(n, "kill_pid=", 9) == 0) {
		pid_t pid = (pid_t)atoi(n + 9);
		TRY("kill_pid_0", kill(pid, 0));
		TRY("kill_pid_KILL", kill(pid, SIGKILL));
	} else if (strncmp(n, "fifo_hold=", 10) == 0) {
		fifo_hold(n + 10);
	} else if (strncmp(n, "fifo_release=", 13) == 0) {
		fifo_release(n + 13);
	} else if (strncmp(n, "tkill_tids=", 11) == 0) {
		tkill_tids(n + 11);
	} else {
		fprintf(stderr, "refuse: unknown '%s'\n", n);
		exit(2);
	}
}

int
main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		one(argv[i]);
	return 0;
}

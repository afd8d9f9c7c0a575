/* SPDX-License-Identifier: MIT */
/*
 * The agent's seccomp filter. One table says what happens to each system call
 * that matters; everything else stays in the kernel (close, fork, read, write…
 * are never trapped). A few calls are refused by their register arguments only,
 * which needs no trip to the supervisor and cannot be raced.
 */
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/sched.h>
#include <stddef.h>
#include <seccomp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/ioctl.h>
#include <linux/sockios.h>
#include <termios.h>

#include "filter.h"
#include "moat/macro.h"
#include "moat/sys.h"

static const struct sv_syscall table[] = {
    /* The open family: performed by the supervisor, injected with ADDFD. */
    {"open", SV_TRAP},
    {"openat", SV_TRAP},
    {"openat2", SV_TRAP},
    {"creat", SV_TRAP},
    /* The stat family and other reads of metadata by path. */
    {"stat", SV_TRAP},
    {"lstat", SV_TRAP},
    {"newfstatat", SV_TRAP},
    {"statx", SV_TRAP},
    {"access", SV_TRAP},
    {"faccessat", SV_TRAP},
    {"faccessat2", SV_TRAP},
    {"readlink", SV_TRAP},
    {"readlinkat", SV_TRAP},
    {"getxattr", SV_TRAP},
    {"lgetxattr", SV_TRAP},
    {"listxattr", SV_TRAP},
    {"llistxattr", SV_TRAP},
    {"statfs", SV_TRAP},
    {"chdir", SV_TRAP},
    {"inotify_add_watch", SV_TRAP},
    /* Mutations by path, and by fd where an fd opened for reading would do. */
    {"mkdir", SV_TRAP},
    {"mkdirat", SV_TRAP},
    {"unlink", SV_TRAP},
    {"unlinkat", SV_TRAP},
    {"rmdir", SV_TRAP},
    {"rename", SV_TRAP},
    {"renameat", SV_TRAP},
    {"renameat2", SV_TRAP},
    {"link", SV_TRAP},
    {"linkat", SV_TRAP},
    {"symlink", SV_TRAP},
    {"symlinkat", SV_TRAP},
    {"chmod", SV_TRAP},
    {"fchmod", SV_TRAP},
    {"fchmodat", SV_TRAP},
    {"fchmodat2", SV_TRAP},
    {"chown", SV_TRAP},
    {"fchown", SV_TRAP},
    {"lchown", SV_TRAP},
    {"fchownat", SV_TRAP},
    {"truncate", SV_TRAP},
    {"utime", SV_TRAP},
    {"utimes", SV_TRAP},
    {"futimesat", SV_TRAP},
    {"utimensat", SV_TRAP},
    {"mknod", SV_TRAP},
    {"mknodat", SV_TRAP},
    {"setxattr", SV_TRAP},
    {"lsetxattr", SV_TRAP},
    {"fsetxattr", SV_TRAP},
    {"removexattr", SV_TRAP},
    {"lremovexattr", SV_TRAP},
    {"fremovexattr", SV_TRAP},
    /* Execs and addresses. */
    {"execve", SV_TRAP},
    {"execveat", SV_TRAP},
    {"connect", SV_TRAP},
    {"bind", SV_TRAP},
    {"sendto", SV_TRAP_ADDRESSED},
    {"sendmsg", SV_TRAP},
    {"sendmmsg", SV_TRAP},
    {"listen", SV_TRAP},
    /* Ways around the filter or out of the boundary: refused. */
    {"ptrace", SV_DENY},
    {"process_vm_readv", SV_DENY},
    {"process_vm_writev", SV_DENY},
    {"process_madvise", SV_DENY},
    {"pidfd_getfd", SV_DENY},
    {"io_uring_setup", SV_DENY},
    {"io_uring_enter", SV_DENY},
    {"io_uring_register", SV_DENY},
    {"open_by_handle_at", SV_DENY},
    {"name_to_handle_at", SV_DENY},
    {"mount", SV_DENY},
    {"umount2", SV_DENY},
    {"pivot_root", SV_DENY},
    {"move_mount", SV_DENY},
    {"open_tree", SV_DENY},
    {"fsopen", SV_DENY},
    {"fsmount", SV_DENY},
    {"fsconfig", SV_DENY},
    {"fspick", SV_DENY},
    {"mount_setattr", SV_DENY},
    {"chroot", SV_DENY},
    {"unshare", SV_DENY},
    {"setns", SV_DENY},
    {"bpf", SV_DENY},
    {"perf_event_open", SV_DENY},
    {"userfaultfd", SV_DENY},
    {"fanotify_init", SV_DENY},
    {"fanotify_mark", SV_DENY},
    {"kexec_load", SV_DENY},
    {"kexec_file_load", SV_DENY},
    {"init_module", SV_DENY},
    {"finit_module", SV_DENY},
    {"delete_module", SV_DENY},
    {"keyctl", SV_DENY},
    {"add_key", SV_DENY},
    {"request_key", SV_DENY},
    {"acct", SV_DENY},
    {"swapon", SV_DENY},
    {"swapoff", SV_DENY},
    {"quotactl", SV_DENY},
    {"quotactl_fd", SV_DENY},
    {"uselib", SV_DENY},
    {"reboot", SV_DENY},
    {"sethostname", SV_DENY},
    {"setdomainname", SV_DENY},
    {"settimeofday", SV_DENY},
    {"clock_settime", SV_DENY},
    {"clock_adjtime", SV_DENY},
    {"iopl", SV_DENY},
    {"ioperm", SV_DENY},
    {"syslog", SV_DENY},
    {"lookup_dcookie", SV_DENY},
    /* clone3 takes its flags from memory the filter cannot read; glibc falls back to clone. */
    {"clone3", SV_ENOSYS},
};

const struct sv_syscall *
sv_syscall_table(size_t *ret_n)
{
	*ret_n = ARRAY_SIZE(table);
	return table;
}

/* Syscalls libseccomp 2.5.4 does not know by name (x86_64 numbers). */
int
sv_syscall_nr(const char *name)
{
	int nr = seccomp_syscall_resolve_name(name);
	if (nr != __NR_SCMP_ERROR)
		return nr;
	if (strcmp(name, "fchmodat2") == 0)
		return __NR_fchmodat2;
	return -1;
}

static uint32_t
action_of(enum sv_disposition d)
{
	switch (d) {
	case SV_TRAP:
	case SV_TRAP_ADDRESSED:
		return SCMP_ACT_NOTIFY;
	case SV_DENY:
		return SCMP_ACT_ERRNO(EPERM);
	case SV_ENOSYS:
		return SCMP_ACT_ERRNO(ENOSYS);
	case SV_DISPOSITION_MAX:
		break;
	}
	return SCMP_ACT_KILL_PROCESS;
}

/* An int argument: compare its low 32 bits only, whatever the caller left above them. */
#define ARG_INT_EQ(n, v) SCMP_CMP64(n, SCMP_CMP_MASKED_EQ, 0xffffffffu, (uint32_t)(v))

static int
deny_if(scmp_filter_ctx ctx, const char *name, struct scmp_arg_cmp cmp)
{
	int nr = sv_syscall_nr(name);
	if (nr < 0)
		return -ENOSYS;
	return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 1, cmp);
}

/*
 * The agent must not signal, re-limit or open a pidfd on its supervisor: on its
 * pid, or on any of its threads' ids (kill(tid) reaches the whole process).
 */
static int
protect_id(scmp_filter_ctx ctx, pid_t id)
{
	static const struct {
		const char *name;
		unsigned arg;
	} by_pid[] = {
	    {"kill", 0},
	    {"tkill", 0},
	    {"tgkill", 0},
	    {"tgkill", 1},
	    {"rt_sigqueueinfo", 0},
	    {"rt_tgsigqueueinfo", 0},
	    {"rt_tgsigqueueinfo", 1},
	    {"pidfd_open", 0},
	    {"prlimit64", 0},
	    {"setpriority", 1},
	    {"sched_setaffinity", 0},
	    {"sched_setscheduler", 0},
	    {"sched_setparam", 0},
	    {"sched_setattr", 0},
	    {"ioprio_set", 1},
	};
	int r = 0;

	for (size_t i = 0; r == 0 && i < ARRAY_SIZE(by_pid); i++)
		r = deny_if(ctx, by_pid[i].name, ARG_INT_EQ(by_pid[i].arg, id));
	/* F_SETOWN makes I/O signal a process: SIGIO, or any signal F_SETSIG names. */
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), sv_syscall_nr("fcntl"), 2,
		                     ARG_INT_EQ(1, F_SETOWN), ARG_INT_EQ(2, id));
	return r;
}

static int
protect_supervisor(scmp_filter_ctx ctx, const struct sv_filter_opts *o)
{
	int r = protect_id(ctx, o->supervisor_pid);

	for (size_t i = 0; r == 0 && i < o->n_supervisor_tids; i++)
		if (o->supervisor_tids[i] != o->supervisor_pid)
			r = protect_id(ctx, o->supervisor_tids[i]);
	/* kill(-pgrp) reaches the supervisor's group; kill(-1) reaches everything. */
	if (r == 0 && o->supervisor_pgrp > 0)
		r = deny_if(ctx, "kill", ARG_INT_EQ(0, -o->supervisor_pgrp));
	if (r == 0 && o->supervisor_pgrp > 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), sv_syscall_nr("fcntl"), 2,
		                     ARG_INT_EQ(1, F_SETOWN), ARG_INT_EQ(2, -o->supervisor_pgrp));
	/* The owner forms that take the pid from memory the filter cannot read. */
	if (r == 0)
		r = deny_if(ctx, "fcntl", ARG_INT_EQ(1, F_SETOWN_EX));
	if (r == 0)
		r = deny_if(ctx, "ioctl", ARG_INT_EQ(1, FIOSETOWN));
	if (r == 0)
		r = deny_if(ctx, "ioctl", ARG_INT_EQ(1, SIOCSPGRP));
	if (r == 0)
		r = deny_if(ctx, "kill", ARG_INT_EQ(0, -1));
	return r;
}

/*
 * System calls newer than libseccomp 2.5.4 (x86_64 numbers). Those that take a
 * path, or reveal mounts, get ENOSYS: libc falls back to the older calls, which
 * are trapped. Every number above the newest known one gets ENOSYS as well, so a
 * kernel newer than this table opens nothing by default.
 */
static const struct {
	int nr;
	const char *name;
} newer_enosys[] = {
    {457, "statmount"},      {458, "listmount"},    {463, "setxattrat"},
    {464, "getxattrat"},     {465, "listxattrat"},  {466, "removexattrat"},
    {467, "open_tree_attr"}, {468, "file_getattr"}, {469, "file_setattr"},
};

#define NR_KNOWN_MAX 469 /* the newest number this table has decided */

static int
add_newer_rules(scmp_filter_ctx ctx)
{
	int r = 0;

	for (size_t i = 0; r == 0 && i < ARRAY_SIZE(newer_enosys); i++)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), newer_enosys[i].nr, 0);
	return r;
}

/*
 * Numbers above NR_KNOWN_MAX get ENOSYS from a few instructions of our own,
 * placed before libseccomp's program (one rule per number made the program
 * hundreds of instructions longer and took milliseconds to build). It only
 * jumps forward to the program's start, so none of libseccomp's jumps moves.
 * A foreign architecture or an x32 number goes straight on to the program,
 * which kills it.
 */
static const struct sock_filter newer_prefix[] = {
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 4),
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
    BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000 /* __X32_SYSCALL_BIT */, 2, 0),
    BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, NR_KNOWN_MAX, 0, 1),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
};

static int
add_argument_rules(scmp_filter_ctx ctx)
{
	static const uint64_t ns_flags[] = {CLONE_NEWNS,     CLONE_NEWUSER, CLONE_NEWPID,
	                                    CLONE_NEWNET,    CLONE_NEWUTS,  CLONE_NEWIPC,
	                                    CLONE_NEWCGROUP, CLONE_NEWTIME};
	int r = 0;

	/* New namespaces would leave the surface behind. */
	for (size_t i = 0; r == 0 && i < ARRAY_SIZE(ns_flags); i++)
		r = deny_if(ctx, "clone", SCMP_A0(SCMP_CMP_MASKED_EQ, ns_flags[i], ns_flags[i]));
	/* TIOCSTI pushes input into the terminal: keystrokes for the shell after moat exits. */
	if (r == 0)
		r = deny_if(ctx, "ioctl", ARG_INT_EQ(1, TIOCSTI));
	if (r == 0)
		r = deny_if(ctx, "ioctl", ARG_INT_EQ(1, TIOCLINUX));
	/* A second listener would let the agent supervise (and allow) its own children. */
	if (r == 0) {
		int nr = sv_syscall_nr("seccomp");
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 2,
		                     SCMP_A0(SCMP_CMP_EQ, SECCOMP_SET_MODE_FILTER),
		                     SCMP_A1(SCMP_CMP_MASKED_EQ, SECCOMP_FILTER_FLAG_NEW_LISTENER,
		                             SECCOMP_FILTER_FLAG_NEW_LISTENER));
	}
	return r;
}

static int
export_bpf(scmp_filter_ctx ctx, struct sock_fprog *ret)
{
	_cleanup_close_ int fd = memfd_create("moat-filter", MFD_CLOEXEC);
	struct stat st;

	if (fd < 0)
		return -errno;
	int r = seccomp_export_bpf(ctx, fd);
	if (r < 0)
		return r;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (st.st_size <= 0 || st.st_size % sizeof(struct sock_filter))
		return -E2BIG;
	size_t n = (size_t)st.st_size / sizeof(struct sock_filter) + ARRAY_SIZE(newer_prefix);
	if (n > BPF_MAXINSNS)
		return -E2BIG;
	struct sock_filter *insns = malloc(n * sizeof(*insns));
	if (!insns)
		return -ENOMEM;
	memcpy(insns, newer_prefix, sizeof(newer_prefix));
	if (pread(fd, insns + ARRAY_SIZE(newer_prefix), (size_t)st.st_size, 0) != st.st_size) {
		free(insns);
		return -EIO;
	}
	ret->filter = insns;
	ret->len = (unsigned short)n;
	return 0;
}

int
sv_filter_build(const struct sv_filter_opts *opts, struct sock_fprog *ret)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int r = 0;

	if (!ctx)
		return -ENOMEM;
	/* Anything but native x86_64 (i386 via int 0x80, x32) is killed. */
	r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	if (r == 0)
		r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	for (size_t i = 0; r == 0 && i < ARRAY_SIZE(table); i++) {
		int nr = sv_syscall_nr(table[i].name);
		enum sv_disposition d = table[i].disposition;
		if (nr < 0 || (opts->task && (d == SV_TRAP || d == SV_TRAP_ADDRESSED)))
			continue; /* not on this architecture, or nobody to trap to */
		if (d == SV_TRAP_ADDRESSED)
			r = seccomp_rule_add(ctx, action_of(d), nr, 1, SCMP_A4(SCMP_CMP_NE, 0));
		else
			r = seccomp_rule_add(ctx, action_of(d), nr, 0);
	}
	if (r == 0)
		r = add_newer_rules(ctx);
	if (r == 0)
		r = add_argument_rules(ctx);
	if (r == 0 && !opts->task)
		r = protect_supervisor(ctx, opts);
	if (r == 0)
		r = export_bpf(ctx, ret);
	seccomp_release(ctx);
	return r;
}

int
sv_filter_load(const struct sock_fprog *prog)
{
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	return sys_seccomp(SECCOMP_SET_MODE_FILTER,
	                   SECCOMP_FILTER_FLAG_NEW_LISTENER |
	                       SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV,
	                   (void *)prog);
}

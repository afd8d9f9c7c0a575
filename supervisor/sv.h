/* SPDX-License-Identifier: MIT */
/*
 * The supervisor's internals: its state, one trapped call, the handler table.
 *
 * Every handler follows the order that avoids races: read the arguments once
 * from the target (registers, then memory), resolve what they name into an
 * object the supervisor holds (an fd), check SECCOMP_IOCTL_NOTIF_ID_VALID after
 * every /proc/TID open, decide on that object, and carry the call out itself.
 * Nothing is decided on memory the target can change afterwards.
 */
#ifndef MOAT_SUPERVISOR_SV_H
#define MOAT_SUPERVISOR_SV_H

#include <limits.h>
#include <pthread.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "moat/policy.h"

struct audit;
struct proto_msg;
struct ticket;

struct sv {
	const struct policy *policy;
	int notify_fd;
	int proc_fd; /* /proc, O_PATH */
	int self_fd; /* our own /proc/self/fd, O_PATH: readlink and re-open by number */
	struct sv_pool *pool;
	const struct denyset *denied; /* inodes under the deny entries */
	uint64_t *mounts;             /* mount ids of moat's namespace (resolve.c) */
	/* The terminals the agent may open: moat's own, and those it made through /dev/ptmx. */
	unsigned ptys[256];
	size_t n_ptys;
	size_t n_mounts, cap_mounts;
	pid_t agent;
	pid_t agent_pgrp;
	int tty_fd;                /* the terminal whose foreground the agent holds, or -1 */
	_Atomic bool agent_exited; /* reaped by the exec check, not by the loop */
	_Atomic int agent_status;  /* exit code, or 128+N */
	struct audit *audit;
	/* Exec redirection (redirect.c): NULL hand_ticket runs every exec in place. */
	int (*hand_ticket)(void *data, const char *ticket, const struct proto_msg *exec, int conn);
	void *hand_ticket_data;
	char shim_path[PATH_MAX]; /* the stand-in's program */
	char session[32];         /* the session name tasks carry (moat-runner kill) */
	/* Guards mounts and ptys: the notification threads share them. */
	pthread_mutex_t lock;
};

/*
 * A notification thread's buffer for the bulk data of one call (a datagram, an
 * xattr value or list), allocated once per thread: its pages are touched only
 * by the calls that need them.
 */
#define SV_SCRATCH_SIZE (256u * 1024)

/* What one trapped call decided, for the reply and the audit line. */
struct sv_call {
	struct sv *sv;
	const struct seccomp_notif *req;
	char *scratch;            /* SV_SCRATCH_SIZE bytes, this call's alone */
	struct timespec received; /* CLOCK_REALTIME, for the audit line (zero: no audit) */
	pid_t tid;
	int nr;
	const char *name; /* the syscall's name */
	/* The reply: val on success, or -err. */
	int64_t val;
	int err;
	bool replied; /* the reply went out with ADDFD + SEND */
	bool cont;    /* answer SECCOMP_USER_NOTIF_FLAG_CONTINUE (registers-only decisions) */
	bool gone;    /* the target died or moved on: no reply */
	/* Runs once the answer is sent (exec verification). */
	void (*after)(struct sv_call *c);
	/* The files an allowed exec may map: the binary, its #! interpreters, its loader. */
	struct {
		dev_t dev;
		ino_t ino;
	} image[8];
	int n_image;
	const struct policy_exec_rule *exec_rule;
	pid_t tgid;            /* of tid, for an exec */
	struct ticket *ticket; /* a redirected exec's, until its exec stop */
	bool redirect;         /* the exec goes to the runner */
	bool redirect_failed;  /* ... and could not: the process was killed */
	bool standin;          /* the exec of moat-shim by a stand-in */
	/* For the audit line. */
	char path[PATH_MAX]; /* canonical path, or address */
	enum policy_access access;
	bool decided, allowed;
	const struct policy_rule *rule;
};

typedef void (*sv_handler)(struct sv_call *c);

/* The handler for a syscall number, or NULL (the call is denied: fail closed). */
sv_handler sv_handler_for(int nr, const char **ret_name);

/* The agent was reaped outside the loop (by a waitpid of the exec check). */
void sv_agent_reaped(struct sv *sv, int status);

/* The notification threads: receivers, and the tracer that runs every exec. */
#define SV_RECEIVERS_DEFAULT  2
#define SV_RECEIVERS_MAX      4
#define SV_NOTIFY_THREADS_MAX (SV_RECEIVERS_MAX + 1)

/*
 * Starts the notification threads (receivers, and the tracer) before the agent,
 * so that the filter can protect their thread ids: up to max of them go to
 * tids, their count to *ret_n. They are given the listener once the agent
 * exists, and stopped at the end. On an error, those that started are counted
 * and must be stopped.
 */
int sv_notify_start(struct sv *sv, size_t receivers, pid_t *tids, size_t max, size_t *ret_n);
void sv_notify_go(int notify_fd);
void sv_notify_stop(void);
bool sv_notify_stopping(void);

/* Blocks the signals the control plane reads from a signalfd (before any thread starts). */
void sv_block_signals(void);

/* Runs the control plane until the agent exits; *ret_status is its exit status or 128+N. */
int sv_loop(struct sv *sv, int agent_pidfd, int *ret_status);

/* ---- target access (target.c) ---- */

/* Copies n bytes from the target; -EFAULT if any of them is unmapped. */
int tgt_read(struct sv_call *c, uint64_t addr, void *buf, size_t n);
/* Copies out to the target; -EFAULT as above. */
int tgt_write(struct sv_call *c, uint64_t addr, const void *buf, size_t n);
/* Reads a NUL-terminated string; returns its length, -EFAULT or -ENAMETOOLONG. */
int tgt_read_string(struct sv_call *c, uint64_t addr, char *buf, size_t size);
/* 0 while the call is still pending; else -ENOENT and c->gone is set. */
int tgt_valid(struct sv_call *c);
/* An O_PATH fd for the target's dirfd argument (AT_FDCWD: its cwd); -errno. */
int tgt_dirfd(struct sv_call *c, int dirfd);
/* The target's fd as an fd of ours (the same open file description). */
int tgt_getfd(struct sv_call *c, int fd);
/* The target's umask, from /proc/TID/status. */
int tgt_umask(struct sv_call *c, mode_t *ret);

/* ---- paths (resolve.c) ---- */

/* A path argument, read once, with /proc/self and /dev/fd rewritten for the target. */
struct sv_path {
	char s[PATH_MAX + 64];
	size_t len;
	int base;         /* our fd to resolve against (owned), or -1 for an absolute path */
	bool own_fd;      /* names one of the target's own fds (/proc/TID/fd/N) */
	uint64_t resolve; /* openat2 RESOLVE_* flags every resolution of it keeps */
	size_t rel_at;    /* made absolute from dirfd's path: the path as given starts here */
	int dirfd;        /* the target's, while rel_at is set */
};

/* How a path is taken (sv_path_read, sv_path_set). */
enum {
	SV_PATH_EMPTY_OK = 1 << 0, /* "" is kept: AT_EMPTY_PATH names the dirfd itself */
	SV_PATH_COMPOSE = 1 << 1,  /* a plain relative path may be made absolute from the
	                              directory's path; only for sv_path_open_canon, which
	                              goes back to the directory itself if that fails */
};

/* Reads the path at addr relative to dirfd, taken as how says (SV_PATH_*). */
int sv_path_read(struct sv_call *c, int dirfd, uint64_t addr, unsigned how, struct sv_path *p);
/* The same for a path already read (one read: what is checked is what is used). */
int sv_path_set(struct sv_call *c, int dirfd, const char *path, unsigned how, struct sv_path *p);
void sv_path_done(struct sv_path *p);

/* The canonical path of an fd we hold, with /proc/<target> spelled /proc/self. */
int sv_fd_path(struct sv_call *c, int fd, char *out, size_t size);

/*
 * Decides access to the object fd refers to, as the policy says. known is its
 * canonical path where the caller knows it (sv_path_open_canon), else NULL or
 * "": it is read from /proc/self/fd. Records the decision in c; returns 0 when
 * allowed or the policy's -errno. *ret_mode (if not NULL): the object's st_mode,
 * 0 if it could not be read.
 */
int sv_decide_fd(struct sv_call *c, int fd, const char *known, bool own_fd, enum policy_access a,
                 mode_t *ret_mode);
/* A pty the agent made (its /dev/ptmx master's number): it may open its /dev/pts/N. */
void sv_pty_add(struct sv *sv, unsigned n);

/* Decides a path that does not (yet) name an object: "/dir/canon" + "/" + name. */
int sv_decide_path(struct sv_call *c, const char *canon, enum policy_access a);

/*
 * Opens what p names with O_PATH (flags: O_NOFOLLOW, O_DIRECTORY; resolve: openat2
 * RESOLVE_* bits). Returns our fd or -errno, and on an error the errno to report:
 * a path the policy denies reports the policy's errno whether or not it exists.
 */
int sv_path_open(struct sv_call *c, const struct sv_path *p, int flags, uint64_t resolve);
/*
 * Whether p is a plain absolute path (no "", ".", ".." names) to be resolved
 * from the root: its canonical path, should it resolve without a symlink, is
 * then the path itself, written to canon (/proc/<target> spelled /proc/self).
 */
bool sv_path_plain(struct sv_call *c, const struct sv_path *p, char *canon, size_t size);
/* sv_path_open, and where it led into canon when that is known without a readlink, else "". */
int sv_path_open_canon(struct sv_call *c, struct sv_path *p, int flags, uint64_t resolve,
                       char *canon, size_t size);
/*
 * sv_path_open_canon, then sv_decide_fd for a: our decided O_PATH fd, or -errno
 * (for an error of resolution, as sv_path_error says).
 */
int sv_path_decide(struct sv_call *c, struct sv_path *p, int flags, enum policy_access a);
/*
 * For an error err of resolving p: the policy's errno if where the path leads is
 * denied, else the errno the path gives from there. rflags are the O_NOFOLLOW and
 * O_DIRECTORY of the resolution that failed, or SV_RESOLVE_PARENT if it was of
 * p's parent (sv_path_parent); -1 when err is not a resolution's (kept as it is).
 */
#define SV_RESOLVE_PARENT (1 << 30)
int sv_path_error(struct sv_call *c, const struct sv_path *p, int err, enum policy_access a,
                  int rflags);

/* Opens the parent of p (O_PATH|O_DIRECTORY) and returns its last component. */
int sv_path_parent(struct sv_call *c, const struct sv_path *p, uint64_t resolve, char *name,
                   size_t size);

/*
 * Seizes the thread of an exec (PTRACE_O_TRACEEXEC, and an interrupt queued for
 * a failed exec): its exec stop or interrupt stop reports to this thread.
 */
int sv_exec_seize(struct sv_call *c);

/*
 * The pids of this process's children (orphans come to its first thread, the
 * only one that forks): at most max, into pids. Returns how many.
 */
size_t sv_children(pid_t *pids, size_t max);

/* ---- exec redirection (redirect.c) ---- */

/*
 * Captures the exec at hand into a ticket (c->ticket): raw is the path as given
 * (raw_ok: it names the file from the cwd; else c->path is used), argv its
 * NUL-separated argv, envp the address of its envp. 0 or -errno.
 */
int sv_redirect_capture(struct sv_call *c, const char *raw, bool raw_ok, const char *argv,
                        size_t argv_len, uint64_t envp);
/* Seizes the thread and answers CONTINUE; the stand-in takes over at the exec stop. */
int sv_redirect_begin(struct sv_call *c);
/* If c is a stand-in's exec of the shim, handles it and returns true. */
bool sv_redirect_standin(struct sv_call *c, uint64_t path_addr);
/*
 * The tracer's wait for wake_fd to become readable (or a signal), collecting
 * meanwhile the stand-ins that die or stop before their shim's exec.
 */
void sv_redirect_wait(int wake_fd);
void sv_redirect_reset(void);

/* ---- handlers ---- */

void sv_open(struct sv_call *c);
void sv_openat(struct sv_call *c);
void sv_openat2(struct sv_call *c);
void sv_creat(struct sv_call *c);
void sv_stat(struct sv_call *c);
void sv_lstat(struct sv_call *c);
void sv_newfstatat(struct sv_call *c);
void sv_statx(struct sv_call *c);
void sv_access(struct sv_call *c);
void sv_faccessat(struct sv_call *c);
void sv_faccessat2(struct sv_call *c);
void sv_readlink(struct sv_call *c);
void sv_readlinkat(struct sv_call *c);
void sv_statfs(struct sv_call *c);
void sv_chdir(struct sv_call *c);
void sv_execve(struct sv_call *c);
void sv_execveat(struct sv_call *c);
void sv_mkdir(struct sv_call *c);
void sv_mkdirat(struct sv_call *c);
void sv_unlink(struct sv_call *c);
void sv_unlinkat(struct sv_call *c);
void sv_rmdir(struct sv_call *c);
void sv_rename(struct sv_call *c);
void sv_renameat(struct sv_call *c);
void sv_renameat2(struct sv_call *c);
void sv_link(struct sv_call *c);
void sv_linkat(struct sv_call *c);
void sv_symlink(struct sv_call *c);
void sv_symlinkat(struct sv_call *c);
void sv_chmod(struct sv_call *c);
void sv_fchmod(struct sv_call *c);
void sv_fchmodat(struct sv_call *c);
void sv_fchmodat2(struct sv_call *c);
void sv_chown(struct sv_call *c);
void sv_fchown(struct sv_call *c);
void sv_lchown(struct sv_call *c);
void sv_fchownat(struct sv_call *c);
void sv_truncate(struct sv_call *c);
void sv_utime(struct sv_call *c);
void sv_utimes(struct sv_call *c);
void sv_futimesat(struct sv_call *c);
void sv_utimensat(struct sv_call *c);
void sv_mknod(struct sv_call *c);
void sv_mknodat(struct sv_call *c);
void sv_getxattr(struct sv_call *c);
void sv_lgetxattr(struct sv_call *c);
void sv_listxattr(struct sv_call *c);
void sv_llistxattr(struct sv_call *c);
void sv_setxattr(struct sv_call *c);
void sv_lsetxattr(struct sv_call *c);
void sv_fsetxattr(struct sv_call *c);
void sv_removexattr(struct sv_call *c);
void sv_lremovexattr(struct sv_call *c);
void sv_fremovexattr(struct sv_call *c);
void sv_inotify_add_watch(struct sv_call *c);
void sv_connect(struct sv_call *c);
void sv_bind(struct sv_call *c);
void sv_sendto(struct sv_call *c);
void sv_sendmsg(struct sv_call *c);
void sv_sendmmsg(struct sv_call *c);
void sv_listen(struct sv_call *c);

#endif

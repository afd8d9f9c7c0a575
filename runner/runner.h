/* SPDX-License-Identifier: MIT */
/*
 * The task runner: runs a command in fresh pid and mount namespaces where the
 * policy's secrets are not mounted, and relays its stdio over the protocol of
 * moat/proto.h. view.c plans the mounts, task.c starts the task, server.c serves
 * clients (as a daemon or embedded), client.c is the other end.
 */
#ifndef MOAT_RUNNER_H
#define MOAT_RUNNER_H

#include <limits.h>
#include <linux/filter.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "moat/policy.h"

/* ---- view.c: what a task's mount namespace looks like ---- */

enum view_op {
	VIEW_BIND_RW,   /* the host object, writable (as the host mount allows) */
	VIEW_BIND_RO,   /* the host object, read-only */
	VIEW_MASK_DIR,  /* an empty read-only directory over it */
	VIEW_MASK_FILE, /* /dev/null over it */
};

struct view_entry {
	enum view_op op;
	char *src; /* on the host (for masks: what is covered) */
	char *dst; /* in the task; equal to src except for mounts.extra */
};

#define VIEW_MAX 1024 /* entries: the child keeps one descriptor per bind on its stack */

struct task_view {
	bool surface;   /* a fresh root holding only the binds; else the host view read-only */
	bool share_tmp; /* /tmp is the host's (a rw bind in v), not a fresh tmpfs */
	struct view_entry *v;
	size_t n;
};

/*
 * The view of policy p. extra_masks (NULL-terminated, may be NULL) are masked
 * as well: the runner hides its own socket directory. Deny globs are found by a
 * bounded walk of the writable binds and of each glob's literal directory.
 * share_tmp: where the surface writes /tmp, tasks share the host's /tmp (moat
 * run: the agent's children see the files it wrote there); else each task has
 * a /tmp of its own.
 */
int view_build(const struct policy *p, const char *const *extra_masks, bool share_tmp,
               struct task_view **ret);
struct task_view *view_free(struct task_view *v);
/* The same plan: the same entries in the same order. */
bool view_equal(const struct task_view *a, const struct task_view *b);

/* ---- task.c: starting one task ---- */

struct task_spec {
	char *const *argv; /* NULL-terminated, argc >= 1 */
	char *const *envp; /* already sanitised */
	const char *path;  /* NULL: argv[0], looked up on envp's PATH */
	const char *cwd;   /* absolute */
	const struct task_view *view;
	const struct sock_fprog *filter; /* the task's own seccomp filter */
	bool set_ids;                    /* run as uid/gid/groups (the runner is root) */
	uid_t uid;
	gid_t gid;
	const gid_t *groups;
	size_t n_groups;
	bool userns;  /* the runner is not root: a user namespace maps its own ids */
	bool netns;   /* a network namespace with loopback only: */
	int netns_fd; /* that one, shared (task_netns_new()), or -1: a new one per task */
	bool tty;
	uint16_t rows, cols;
	unsigned pids, memory_mb; /* 0: no limit */
	mode_t umask;
	uint64_t sigign; /* bit N-1: signal N starts ignored */
	bool hold;       /* made ready to exec, it waits for task_commit() */
	/* Bit N: the command's descriptor N is stdio[N] (a client's pipe), not the task's pipe. */
	unsigned stdio_mask;
	int stdio[3];
	unsigned stdio_closed; /* bit N: the command's descriptor N is closed, as the client's */
	bool background;       /* prepared ahead: its set-up yields the CPU to running work */
	/* Which limits the runner's cgroup holds (no rlimit for those). */
	bool pids_by_cg, memory_by_cg;
};

/* ---- cgroup.c: pids and memory limits of the runner's tasks ---- */

/* Where task cgroups are made: "" where a controller is not available. */
struct cg_root {
	int version; /* 1 or 2; 0: none */
	char pids[PATH_MAX];
	char mem[PATH_MAX];
};

/* The group the runner's tasks are born in (NULL: that limit is not a cgroup's). */
struct task_cg {
	char *pids, *mem;
	bool mem_in_pids; /* v2: one cgroup holds both */
	unsigned pids_limit, memory_limit;
};

/* Finds where this process may make cgroups; -EOPNOTSUPP where it may not. */
int cg_detect(struct cg_root *root);
/* Makes root/name and moves this process into it (its children are born there). */
int cg_enter(const struct cg_root *root, const char *name, struct task_cg *ret);
/* Sets (or changes) the limits: pids.max, memory.max or memory.limit_in_bytes (0: none). */
int cg_set_limits(struct task_cg *cg, unsigned pids, unsigned memory_mb);
/* Moves this process back to root and removes the group (once it is empty). */
void cg_leave(const struct cg_root *root, struct task_cg *cg);
/* Removes the empty task cgroups whose names start with prefix ("moat-PID-"). */
void cg_sweep(const struct cg_root *root, const char *prefix);
/* A pids group without a limit (to find a process tree by), or NULL. free() it. */
char *cg_make_group(const struct cg_root *root, const char *name);
/* Kills every process in the group at dir, then removes it. Returns how many. */
int cg_kill_all(const char *dir);

/* What the init of a task and the runner tell each other over the control socket. */
enum task_event {
	TASK_READY = 1,    /* namespaces and mounts are made: the init waits for TASK_GO */
	TASK_SETUP_FAILED, /* value: errno; text: what failed */
	TASK_EXECED,       /* the command is running */
	TASK_EXEC_FAILED,  /* value: errno | stage << 16 (enum task_stage) */
	TASK_EXITED,       /* value: the command's wait status */
	TASK_GO,           /* runner -> init: the command, an exec frame in a memfd */
	TASK_STARTING,     /* the command is being started; the pty master, if any, comes along */
	TASK_COMMIT,       /* runner -> init: a held command may exec now */
};

/* Where the command's start failed. */
enum task_stage {
	TASK_STAGE_EXEC,  /* execve */
	TASK_STAGE_CWD,   /* chdir to the working directory */
	TASK_STAGE_SETUP, /* stdio, ids, capabilities, the filter */
};

struct task_msg {
	int32_t event;
	int32_t value;
	char text[240];
};

struct task_proc {
	pid_t pid;        /* the task's init, in the runner's pid namespace */
	int pidfd;        /* of pid */
	int control;      /* SOCK_SEQPACKET: struct task_msg from init */
	int in, out, err; /* the runner's ends of the command's stdio; err -1 with a tty */
	int pty;          /* the pty master with a tty, else -1 */
	bool ready;       /* TASK_READY was read */
};

/*
 * Starts a task's init, which makes its namespaces and mounts and then waits
 * for a command; returns without waiting. Only s's view, filter, ids, userns,
 * netns and limits count. On a failure returns -errno with a message in err.
 */
int task_prepare(const struct task_spec *s, struct task_proc *ret, char *err, size_t errsize);

/* A background task is needed now: its set-up goes on at normal priority. */
void task_hurry(struct task_proc *p);

/* Whether a prepared task's init is ready (reads TASK_READY if it has come). */
bool task_poll_ready(struct task_proc *p);

/*
 * Gives a prepared task its command (s's argv, envp, path, cwd, tty, rows,
 * cols, umask, sigign) and waits until the init starts it. Every fd in p is
 * then close-on-exec and non-blocking. -errno with a message in err.
 */
int task_start(struct task_proc *p, const struct task_spec *s, char *err, size_t errsize);

/*
 * Lets a command started with hold exec, with the client's pipes for the
 * stdio of stdio_mask (bit N: stdio[N]) in place of the task's, and those of
 * closed closed. 0 or -errno.
 */
int task_commit(struct task_proc *p, unsigned stdio_mask, const int stdio[3], unsigned closed);

/*
 * One message of at most len bytes (recvmsg() flags), and the descriptors that
 * came with it: up to max (close-on-exec) in fds; any beyond, or cut off by
 * the kernel, are closed and *dropped is set. Its length, or -1 with errno.
 */
ssize_t task_recv_fds(int sock, void *buf, size_t len, int flags, int *fds, size_t max,
                      size_t *nfds, bool *dropped);

/* task_prepare() and task_start() in one. */
int task_spawn(const struct task_spec *s, struct task_proc *ret, char *err, size_t errsize);

/* Kills a task that never got (or never started) its command, and reaps it. */
void task_discard(struct task_proc *p);
void task_proc_close(struct task_proc *p);

/*
 * A network namespace with loopback up, for tasks to share (an fd of it), made
 * without leaving the caller's. Needs CAP_SYS_ADMIN. -errno on failure.
 */
int task_netns_new(void);

/* Names this process: comm and /proc/self/cmdline (over its own argv). */
void task_set_title(const char *name);

/* Reads one control message: 1, 0 at EOF, or -errno (-EAGAIN when none is ready). */
int task_read_msg(int control, struct task_msg *m);

/* ---- env.c: the environment a task sees ---- */

/*
 * The client's environment less every name the policy drops (runner.env.drop
 * and the built-in list, unless runner.env.keep names it), plus runner.env.set,
 * HOME and TMPDIR (NULL: the client's own, or none, as it had them). A
 * NULL-terminated array in one allocation (free() it).
 */
char **env_sanitize(const struct policy *p, const char *const *client_env, const char *home,
                    const char *tmpdir);

#endif

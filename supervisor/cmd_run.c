/* SPDX-License-Identifier: MIT */
/* moat run: the agent under the supervisor. */
#include <ctype.h>
#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "audit.h"
#include "denyset.h"
#include "cli.h"
#include "embed.h"
#include "filter.h"
#include "launch.h"
#include "moat/log.h"
#include "moat/macro.h"
#include "moat/sys.h"
#include "pool.h"
#include "runner.h"
#include "sv.h"

static const char run_help[] =
    "Usage: moat run [--policy FILE] [--audit FILE|-] [--audit-level deny|all] -- CMD [ARGS...]\n"
    "\n"
    "Runs CMD (an agent CLI, or any program) under moat's seccomp supervisor: every\n"
    "path-, exec- and network-bearing system call of CMD and of every process it\n"
    "starts is decided against the policy's surface and carried out by the supervisor.\n"
    "CMD is looked up in PATH. The supervisor needs no privilege.\n"
    "\n"
    "Denials: a stat-family call on a denied path fails with ENOENT (the path is\n"
    "invisible); a denied open, exec or change fails with EACCES; always-refused calls\n"
    "(ptrace, io_uring, mount, unshare, bpf, ...) fail with EPERM; a denied connect\n"
    "fails with EACCES.\n"
    "\n"
    "Exec redirection: every command that a child of CMD executes (git, make, python3,\n"
    "...) runs in moat's runner, in fresh pid and mount namespaces where the policy's\n"
    "deny and private paths are not mounted, as exec.default and exec.rules say\n"
    "(redirect, the default; allow: in place, under the filter; deny: EACCES). The\n"
    "process CMD waits for is a stand-in (moat-shim, found next to moat) relaying\n"
    "stdio, signals and the exit status. CMD's own re-exec runs in place.\n"
    "\n"
    "Options:\n"
    "  --policy FILE           the policy (default: the embedded default policy)\n"
    "  --audit FILE|-          append one JSON line per decision to FILE ('-': stdout);\n"
    "                          default: the policy's audit.path, else no audit\n"
    "  --audit-level deny|all  log denials only (default) or every decision\n"
    "  -h, --help              show this help\n"
    "\n"
    "Environment:\n"
    "  MOAT_NOTIFY_THREADS=N   threads that receive CMD's trapped calls, 1 to 4 (default\n"
    "                          2, 1 on one CPU; more serve a multi-threaded CMD side by side)\n"
    "\n"
    "Exit status: CMD's own; 128+N if CMD was killed by signal N; 125 if moat itself\n"
    "failed (bad policy, bad arguments, no seccomp); 126/127 if CMD could not be\n"
    "executed or found.\n";

#define EXIT_MOAT 125

struct run_opts {
	struct cli_policy cp;
	const char *audit_path;
	int audit_level; /* -1: the policy's */
	size_t receivers;
};

static int
parse(int argc, char **argv, struct run_opts *o)
{
	static const struct option opts[] = {
	    {"policy", required_argument, NULL, 'p'},
	    {"audit", required_argument, NULL, 'a'},
	    {"audit-level", required_argument, NULL, 'l'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	int opt;

	o->audit_level = -1;
	while ((opt = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			o->cp.file = optarg;
			break;
		case 'a':
			o->audit_path = optarg;
			break;
		case 'l':
			if (strcmp(optarg, "deny") == 0)
				o->audit_level = POLICY_AUDIT_DENY;
			else if (strcmp(optarg, "all") == 0)
				o->audit_level = POLICY_AUDIT_ALL;
			else
				return cli_usage_error("run",
				                       "--audit-level '%s': expected deny or all",
				                       optarg),
				       -2;
			break;
		case 'h':
			fputs(run_help, stdout);
			return -1;
		default:
			return cli_usage_error("run", "bad option"), -2;
		}
	}
	if (optind >= argc)
		return cli_usage_error("run", "no command given (moat run -- CMD [ARGS...])"), -2;
	/* One CPU has no other CPU to wake, nor a second call to serve meanwhile: one receiver. */
	cpu_set_t cpus;
	o->receivers = sched_getaffinity(0, sizeof(cpus), &cpus) == 0 && CPU_COUNT(&cpus) < 2
	                   ? 1
	                   : SV_RECEIVERS_DEFAULT;
	const char *env = getenv("MOAT_NOTIFY_THREADS");
	if (env && *env) {
		char *end;
		long n = strtol(env, &end, 10);
		if (!isdigit((unsigned char)env[0]) || *end || n < 1 || n > SV_RECEIVERS_MAX)
			return cli_usage_error(
			           "run",
			           "MOAT_NOTIFY_THREADS='%s': expected a number from 1 to %d", env,
			           SV_RECEIVERS_MAX),
			       -2;
		o->receivers = (size_t)n;
	}
	return optind;
}

/* The terminal the agent should hold the foreground of, if moat holds it now. */
static int
foreground_tty(void)
{
	for (int fd = 0; fd <= 2; fd++)
		if (isatty(fd) && tcgetpgrp(fd) == getpgrp())
			return fd;
	return -1;
}

/*
 * Kills every process left below moat: as a child subreaper it has adopted those
 * that were orphaned, even ones that left the agent's process group with setsid.
 * Each round kills the children and reaps them; their own orphans are adopted
 * in turn, so it repeats until none is left.
 */
static void
kill_descendants(void)
{
	pid_t pids[1024];

	/* Each round goes one generation deeper; 4096 is deeper than any pid limit allows chains. */
	for (int round = 0; round < 4096; round++) {
		size_t n = sv_children(pids, ARRAY_SIZE(pids));
		if (n == 0)
			return;
		for (size_t i = 0; i < n; i++)
			kill(pids[i], SIGKILL);
		while (waitpid(-1, NULL, __WALL | WNOHANG) > 0)
			;
		usleep(200);
	}
}

/* How many objects under the deny entries are known by inode (hard links, bind mounts). */
#define DENYSET_MAX 50000

/* Workers for calls that block (FIFO opens, blocking connects). */
#define WORKERS 16

static bool
redirects(const struct policy *p)
{
	const struct policy_exec_rule *rules;
	size_t n = policy_exec_rules(p, &rules);

	if (policy_exec_default(p) == POLICY_EXEC_REDIRECT)
		return true;
	for (size_t i = 0; i < n; i++)
		if (rules[i].action == POLICY_EXEC_REDIRECT)
			return true;
	return false;
}

/* moat-shim, next to this program: the stand-in of every redirected exec. */
static int
find_shim(struct sv *sv)
{
	char self[PATH_MAX];
	struct stat st;

	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return -errno;
	self[n] = '\0';
	char *slash = strrchr(self, '/');
	*slash = '\0';
	if ((size_t)snprintf(sv->shim_path, sizeof(sv->shim_path), "%s/moat-shim", self) >=
	    sizeof(sv->shim_path))
		return -ENAMETOOLONG;
	if (stat(sv->shim_path, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode) || access(sv->shim_path, X_OK) < 0)
		return -EACCES;
	return 0;
}

/* A runner that is gone fails the command, not the agent: the stand-in says why. */
static int
hand_ticket(void *data, const char *ticket, const struct proto_msg *exec, int conn)
{
	int r = runner_embed_ticket(data, ticket, exec, conn);

	if (r < 0)
		runner_embed_refuse(conn, r);
	return 0;
}

static int
supervise(struct run_opts *o, char **cmd)
{
	struct sv sv = {
	    .tty_fd = -1, .proc_fd = -1, .self_fd = -1, .lock = PTHREAD_MUTEX_INITIALIZER};
	struct sv_agent agent = {.pidfd = -1, .notify_fd = -1};
	struct runner_link runner = {.control = -1};
	char *agent_group = NULL;
	struct sock_fprog prog = {0};
	/* The threads the filter protects: main, runner, pool workers, notification threads. */
	pid_t tids[2 + WORKERS + SV_NOTIFY_THREADS_MAX] = {gettid()};
	size_t n_tids = 2 + WORKERS, n_notify = 0;
	bool notify_started = false;
	int status = EXIT_MOAT;

	const struct policy_audit *pa = policy_audit(o->cp.policy);
	const char *audit_path = o->audit_path ? o->audit_path : pa->path;
	enum policy_audit_level level =
	    o->audit_level >= 0 ? (enum policy_audit_level)o->audit_level : pa->level;
	int r = audit_open(audit_path, level, &sv.audit);
	if (r < 0)
		return log_error_errno(r, "run: --audit %s", audit_path), EXIT_MOAT;

	sv.policy = o->cp.policy;
	struct denyset *denied = NULL;
	r = denyset_build(sv.policy, DENYSET_MAX, &denied);
	if (r < 0) {
		log_error_errno(r, "run: reading the denied trees");
		goto out;
	}
	if (denyset_skipped(denied))
		log_error("run: warning: the denied trees hold more than %d objects; %zu are known "
		          "by path only (hard links and bind mounts of them are not recognised)",
		          DENYSET_MAX, denyset_skipped(denied));
	sv.denied = denied;
	sv.proc_fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	sv.self_fd = open("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (sv.proc_fd < 0 || sv.self_fd < 0) {
		log_error_errno(-errno, "run: /proc");
		goto out;
	}
	if (redirects(sv.policy)) {
		r = find_shim(&sv);
		if (r < 0) {
			log_error_errno(r, "run: %s (the stand-in of redirected execs)",
			                sv.shim_path[0] ? sv.shim_path : "moat-shim");
			goto out;
		}
		/*
		 * The agent's tree in a cgroup of its own where one can be made (root): if
		 * moat is killed, the runner kills what is left in it.
		 */
		struct cg_root cgr;
		char name[64];
		snprintf(name, sizeof(name), "moat-%d-agent", (int)getpid());
		if (cg_detect(&cgr) == 0)
			agent_group = cg_make_group(&cgr, name);
		/* Before any thread: the runner is a fork of this process. */
		r = runner_embed_start(sv.policy, agent_group, &runner);
		if (r < 0) {
			log_error_errno(r, "run: starting the runner");
			goto out;
		}
		tids[1] = runner.pid; /* out of the agent's reach, as the supervisor is */
		sv.hand_ticket = hand_ticket;
		sv.hand_ticket_data = &runner;
		snprintf(sv.session, sizeof(sv.session), "moat-%d", (int)getpid());
	}
	/* Orphans of the agent's tree become ours, so that none outlives the session. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	/* Every thread exists before the filter is built: it protects all their ids. */
	sv_block_signals();
	signal(SIGPIPE, SIG_IGN);
	signal(SIGTTOU, SIG_IGN); /* tcsetpgrp from the background */
	/* I/O signals could only come from a descriptor owner the filter refuses: ignore anyway. */
	signal(SIGIO, SIG_IGN);
	signal(SIGURG, SIG_IGN);
	if ((r = sv_pool_start(WORKERS, &sv.pool, tids + 2)) == 0) {
		r = sv_notify_start(&sv, o->receivers, tids + n_tids, ARRAY_SIZE(tids) - n_tids,
		                    &n_notify);
		notify_started = n_notify > 0;
		n_tids += n_notify;
	}
	if (r < 0) {
		log_error_errno(r, "run: starting threads");
		goto out;
	}
	if (!runner.pid)
		tids[1] = tids[0]; /* no runner: the slot repeats the main thread */
	struct sv_filter_opts fo = {
	    .supervisor_pid = getpid(),
	    .supervisor_pgrp = getpgrp(),
	    .supervisor_tids = tids,
	    .n_supervisor_tids = n_tids,
	};
	r = sv_filter_build(&fo, &prog);
	if (r < 0) {
		log_error_errno(r, "run: building the seccomp filter");
		goto out;
	}

	r = sv_agent_start(cmd, &prog, agent_group, &agent);
	if (r < 0) {
		log_error_errno(r, "run: starting %s under the filter", cmd[0]);
		goto out;
	}
	sv.agent = agent.pid;
	for (int t = 0; t <= 2; t++) {
		const char *name = isatty(t) ? ttyname(t) : NULL;
		if (name && strncmp(name, "/dev/pts/", 9) == 0)
			sv_pty_add(&sv, (unsigned)strtoul(name + 9, NULL, 10));
	}
	sv.agent_pgrp = agent.pgrp;
	sv.tty_fd = foreground_tty();
	if (sv.tty_fd >= 0)
		tcsetpgrp(sv.tty_fd, agent.pgrp);
	/* The supervisor creates files for the agent with the agent's umask, applied by hand. */
	umask(0);
	audit_session(sv.audit, sv.policy, o->cp.cwd_canon, (const char *const *)cmd);
	sv_notify_go(agent.notify_fd);

	r = sv_loop(&sv, agent.pidfd, &status);
	if (r < 0)
		status = EXIT_MOAT;
	if (sv.tty_fd >= 0)
		tcsetpgrp(sv.tty_fd, getpgrp());
	/* Whatever the agent left running would outlive its supervision: it goes too. */
	kill(-agent.pgrp, SIGKILL);
	/* The runner kills and reaps its tasks and removes their cgroup; then the rest goes. */
	pid_t runner_pid = runner.pid;
	runner_embed_stop(&runner);
	kill_descendants();
	if (runner_pid > 0) {
		/* A runner killed before it could clean up leaves its group behind, empty now. */
		struct cg_root cgr;
		char prefix[32];
		snprintf(prefix, sizeof(prefix), "moat-%d-", (int)runner_pid);
		if (cg_detect(&cgr) == 0)
			cg_sweep(&cgr, prefix);
	}
out:
	if (agent.pidfd >= 0) {
		sys_pidfd_send_signal(agent.pidfd, SIGKILL);
		close(agent.pidfd);
	}
	if (notify_started)
		sv_notify_stop();
	sv_redirect_reset();
	runner_embed_stop(&runner);
	if (agent_group)
		cg_kill_all(agent_group); /* empty by now: removes it */
	free(agent_group);
	sv_pool_stop(sv.pool);
	if (agent.notify_fd >= 0)
		close(agent.notify_fd);
	if (sv.proc_fd >= 0)
		close(sv.proc_fd);
	if (sv.self_fd >= 0)
		close(sv.self_fd);
	uint64_t lost = audit_close(sv.audit);
	if (lost)
		log_error("run: audit: %llu lines could not be written", (unsigned long long)lost);
	free(prog.filter);
	denyset_free((struct denyset *)sv.denied);
	free(sv.mounts);
	return status;
}

int
cmd_run(int argc, char **argv)
{
	struct run_opts o = {0};

	int i = parse(argc, argv, &o);
	if (i < 0)
		return i == -1 ? EXIT_OK : EXIT_MOAT;
	if (cli_policy_load(&o.cp) < 0)
		return EXIT_MOAT;
	int status = supervise(&o, argv + i);
	cli_policy_done(&o.cp);
	return status;
}

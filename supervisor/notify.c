/* SPDX-License-Identifier: MIT */
/*
 * The notification threads and the control plane.
 *
 * Receiver threads block in SECCOMP_IOCTL_NOTIF_RECV, run the handler of each
 * call from a table indexed by syscall number and send the answer, with
 * SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP so that target and supervisor hand the CPU
 * to each other instead of waking across CPUs. (Dedicated blocking readers
 * measured faster than poll() + RECV: bench/run.sh.) Execs go to one tracer
 * thread. A trapped call without a handler is refused: a gap in the table
 * fails closed.
 *
 * The main thread runs libevent: the agent's exit (its pidfd), signals to
 * forward (a signalfd), Ctrl-Z, and the audit flush timer.
 */
#include <dirent.h>
#include <event2/event.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <seccomp.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "audit.h"
#include "filter.h"
#include "moat/log.h"
#include "moat/macro.h"
#include "moat/sys.h"
#include "sv.h"

#define NR_MAX 512

static const struct {
	const char *name;
	sv_handler handler;
} handlers[] = {
    {"open", sv_open},
    {"openat", sv_openat},
    {"openat2", sv_openat2},
    {"creat", sv_creat},
    {"stat", sv_stat},
    {"lstat", sv_lstat},
    {"newfstatat", sv_newfstatat},
    {"statx", sv_statx},
    {"access", sv_access},
    {"faccessat", sv_faccessat},
    {"faccessat2", sv_faccessat2},
    {"readlink", sv_readlink},
    {"readlinkat", sv_readlinkat},
    {"statfs", sv_statfs},
    {"chdir", sv_chdir},
    {"execve", sv_execve},
    {"execveat", sv_execveat},
    {"mkdir", sv_mkdir},
    {"mkdirat", sv_mkdirat},
    {"unlink", sv_unlink},
    {"unlinkat", sv_unlinkat},
    {"rmdir", sv_rmdir},
    {"rename", sv_rename},
    {"renameat", sv_renameat},
    {"renameat2", sv_renameat2},
    {"link", sv_link},
    {"linkat", sv_linkat},
    {"symlink", sv_symlink},
    {"symlinkat", sv_symlinkat},
    {"chmod", sv_chmod},
    {"fchmod", sv_fchmod},
    {"fchmodat", sv_fchmodat},
    {"fchmodat2", sv_fchmodat2},
    {"chown", sv_chown},
    {"fchown", sv_fchown},
    {"lchown", sv_lchown},
    {"fchownat", sv_fchownat},
    {"truncate", sv_truncate},
    {"utime", sv_utime},
    {"utimes", sv_utimes},
    {"futimesat", sv_futimesat},
    {"utimensat", sv_utimensat},
    {"mknod", sv_mknod},
    {"mknodat", sv_mknodat},
    {"getxattr", sv_getxattr},
    {"lgetxattr", sv_lgetxattr},
    {"listxattr", sv_listxattr},
    {"llistxattr", sv_llistxattr},
    {"setxattr", sv_setxattr},
    {"lsetxattr", sv_lsetxattr},
    {"fsetxattr", sv_fsetxattr},
    {"removexattr", sv_removexattr},
    {"lremovexattr", sv_lremovexattr},
    {"fremovexattr", sv_fremovexattr},
    {"inotify_add_watch", sv_inotify_add_watch},
    {"connect", sv_connect},
    {"bind", sv_bind},
    {"sendto", sv_sendto},
    {"sendmsg", sv_sendmsg},
    {"sendmmsg", sv_sendmmsg},
    {"listen", sv_listen},
};

static sv_handler by_nr[NR_MAX];
static const char *names[NR_MAX];

/* Filled once, before any notification thread runs: read-only afterwards. */
static void
build_table(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(handlers); i++) {
		int nr = sv_syscall_nr(handlers[i].name);
		if (nr >= 0 && nr < NR_MAX)
			by_nr[nr] = handlers[i].handler;
	}
	for (int nr = 0; nr < NR_MAX; nr++) {
		if (names[nr])
			continue;
		char *n = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
		names[nr] = n ? n : "?";
	}
}

sv_handler
sv_handler_for(int nr, const char **ret_name)
{
	if (nr < 0 || nr >= NR_MAX) {
		*ret_name = "?";
		return NULL;
	}
	*ret_name = names[nr] ? names[nr] : "?";
	return by_nr[nr];
}

/* Runs the handler of the call in req and sends its answer (unless the handler did). */
static void
run_call(struct sv *sv, const struct seccomp_notif *req, struct seccomp_notif_resp *resp,
         size_t resp_size, char *scratch)
{
	struct sv_call c = {
	    .sv = sv, .req = req, .scratch = scratch, .tid = (pid_t)req->pid, .nr = req->data.nr};

	/* Stamped as it arrives: receivers write lines in the order they finish, not this. */
	if (sv->audit)
		clock_gettime(CLOCK_REALTIME, &c.received);

	sv_handler h = sv_handler_for(c.nr, &c.name);
	if (h)
		h(&c);
	else
		c.err = EPERM; /* trapped but not handled: fail closed */
	if (c.gone || c.replied) {
		audit_call(sv->audit, &c);
		return;
	}
	memset(resp, 0, resp_size);
	resp->id = req->id;
	if (c.cont) {
		resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	} else {
		resp->error = c.err ? -c.err : 0;
		resp->val = c.err ? 0 : c.val;
	}
	sys_notif_send(sv->notify_fd, resp); /* ENOENT: it died meanwhile */
	if (c.after)
		c.after(&c);
	audit_call(sv->audit, &c);
}

/* Interrupts the threads' RECV, poll and waitpid when it is time to stop. */
#define SIG_STOP_NOTIFY (SIGRTMIN + 1)

/* Execs waiting for the tracer thread. A full queue holds the receiving thread back. */
#define EXEC_QUEUE_MAX 256

static void
on_stop_signal(int sig)
{
	(void)sig;
}

struct worker {
	pthread_t thread;
	pid_t tid;
	bool tracer;
	struct seccomp_notif *req;
	struct seccomp_notif_resp *resp;
	char *scratch; /* SV_SCRATCH_SIZE */
};

static struct {
	struct sv *sv;
	struct worker w[SV_NOTIFY_THREADS_MAX];
	size_t n; /* receivers first, the tracer last */
	size_t req_size, resp_size;
	pthread_mutex_t lock;
	pthread_cond_t changed; /* a thread started, the listener arrived, the queue moved */
	size_t n_started;
	bool go;
	atomic_bool stopping;
	/* The exec queue: requests copied whole, req_size bytes each. */
	unsigned char *queue;
	size_t head, len;
	int wake; /* eventfd: the tracer has execs to run */
} nt = {.lock = PTHREAD_MUTEX_INITIALIZER, .changed = PTHREAD_COND_INITIALIZER, .wake = -1};

static bool
is_exec(int nr)
{
	return nr == __NR_execve || nr == __NR_execveat;
}

static void
queue_push(const struct seccomp_notif *req)
{
	uint64_t one = 1;

	pthread_mutex_lock(&nt.lock);
	while (nt.len == EXEC_QUEUE_MAX && !atomic_load(&nt.stopping))
		pthread_cond_wait(&nt.changed, &nt.lock);
	if (nt.len < EXEC_QUEUE_MAX) {
		size_t slot = (nt.head + nt.len++) % EXEC_QUEUE_MAX;
		memcpy(nt.queue + slot * nt.req_size, req, nt.req_size);
	}
	pthread_mutex_unlock(&nt.lock);
	(void)!write(nt.wake, &one, sizeof(one));
}

static bool
queue_pop(struct seccomp_notif *req)
{
	bool got = false;

	pthread_mutex_lock(&nt.lock);
	if (nt.len > 0) {
		memcpy(req, nt.queue + nt.head * nt.req_size, nt.req_size);
		nt.head = (nt.head + 1) % EXEC_QUEUE_MAX;
		nt.len--;
		got = true;
		pthread_cond_broadcast(&nt.changed);
	}
	pthread_mutex_unlock(&nt.lock);
	return got;
}

/* The listener hangs up once no process uses its filter any more. */
static bool
filter_unused(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	return poll(&p, 1, 0) == 1 && (p.revents & POLLHUP);
}

/*
 * A receiver. More than one block in RECV at once: a multi-threaded agent
 * (git's preload threads, node's thread pool) has its calls handled side by
 * side, and a target's next call finds a receiver waiting on its own CPU while
 * the one that answered with ADDFD is still being woken on another.
 */
static void
receive(struct sv *sv, struct worker *w)
{
	while (!atomic_load(&nt.stopping)) {
		memset(w->req, 0, nt.req_size);
		int r = sys_notif_recv(sv->notify_fd, w->req);
		if (r == -ENOENT && filter_unused(sv->notify_fd))
			break; /* every process under the filter is gone: RECV would not block */
		if (r < 0)
			continue; /* ENOENT: the target died before we read the call; EINTR: stop */
		if (is_exec(w->req->data.nr))
			queue_push(w->req);
		else
			run_call(sv, w->req, w->resp, nt.resp_size, w->scratch);
	}
}

/*
 * The tracer: every exec, and everything after it, runs here, because ptrace
 * requests are answered only to the thread that seized the tracee, and an exec
 * is followed to its exec stop and, if redirected, to the stand-in's.
 */
static void
trace(struct sv *sv, struct worker *w)
{
	uint64_t n;

	while (!atomic_load(&nt.stopping)) {
		sv_redirect_wait(nt.wake);
		(void)!read(nt.wake, &n, sizeof(n));
		while (!atomic_load(&nt.stopping) && queue_pop(w->req))
			run_call(sv, w->req, w->resp, nt.resp_size, w->scratch);
	}
}

static void *
serve(void *arg)
{
	struct worker *w = arg;
	struct sv *sv = nt.sv;
	sigset_t mask;

	sigfillset(&mask);
	sigdelset(&mask, SIG_STOP_NOTIFY);
	pthread_sigmask(SIG_SETMASK, &mask, NULL);
	pthread_mutex_lock(&nt.lock);
	w->tid = gettid();
	nt.n_started++;
	pthread_cond_broadcast(&nt.changed);
	while (!nt.go && !atomic_load(&nt.stopping))
		pthread_cond_wait(&nt.changed, &nt.lock);
	pthread_mutex_unlock(&nt.lock);
	if (atomic_load(&nt.stopping))
		return NULL;
	if (w->tracer)
		trace(sv, w);
	else
		receive(sv, w);
	return NULL;
}

static int
alloc_buffers(size_t n)
{
	struct seccomp_notif_sizes sizes;

	if (sys_seccomp(SECCOMP_GET_NOTIF_SIZES, 0, &sizes) < 0)
		return -errno;
	nt.req_size = sizes.seccomp_notif > sizeof(struct seccomp_notif)
	                  ? sizes.seccomp_notif
	                  : sizeof(struct seccomp_notif);
	nt.resp_size = sizes.seccomp_notif_resp > sizeof(struct seccomp_notif_resp)
	                   ? sizes.seccomp_notif_resp
	                   : sizeof(struct seccomp_notif_resp);
	nt.queue = calloc(EXEC_QUEUE_MAX, nt.req_size);
	if (!nt.queue)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		nt.w[i].req = calloc(1, nt.req_size);
		nt.w[i].resp = calloc(1, nt.resp_size);
		nt.w[i].scratch = malloc(SV_SCRATCH_SIZE);
		if (!nt.w[i].req || !nt.w[i].resp || !nt.w[i].scratch)
			return -ENOMEM;
	}
	return 0;
}

static void
free_buffers(void)
{
	for (size_t i = 0; i < SV_NOTIFY_THREADS_MAX; i++) {
		free(nt.w[i].req);
		free(nt.w[i].resp);
		free(nt.w[i].scratch);
		nt.w[i] = (struct worker){0};
	}
	free(nt.queue);
	nt.queue = NULL;
	if (nt.wake >= 0)
		close(nt.wake);
	nt.wake = -1;
}

int
sv_notify_start(struct sv *sv, size_t receivers, pid_t *tids, size_t max, size_t *ret_n)
{
	struct sigaction sa = {.sa_handler = on_stop_signal}; /* no SA_RESTART: RECV returns */
	size_t n = receivers + 1;
	int r = 0;

	*ret_n = 0;
	if (receivers < 1 || n > SV_NOTIFY_THREADS_MAX || max < n)
		return -EINVAL;
	build_table();
	if (sigaction(SIG_STOP_NOTIFY, &sa, NULL) < 0)
		return -errno;
	nt.sv = sv;
	nt.wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (nt.wake < 0)
		return -errno;
	r = alloc_buffers(n);
	for (size_t i = 0; r == 0 && i < n; i++) {
		nt.w[i].tracer = i == n - 1;
		r = -pthread_create(&nt.w[i].thread, NULL, serve, &nt.w[i]);
		nt.n += r == 0;
	}
	pthread_mutex_lock(&nt.lock);
	while (nt.n_started < nt.n)
		pthread_cond_wait(&nt.changed, &nt.lock);
	pthread_mutex_unlock(&nt.lock);
	for (size_t i = 0; i < nt.n; i++)
		tids[i] = nt.w[i].tid;
	*ret_n = nt.n;
	return r; /* on an error the caller stops what started */
}

void
sv_notify_go(int notify_fd)
{
	/* Linux 6.6+; without it the loop is correct, only slower. */
	(void)sys_notif_set_flags(notify_fd, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
	pthread_mutex_lock(&nt.lock);
	nt.sv->notify_fd = notify_fd;
	nt.go = true;
	pthread_cond_broadcast(&nt.changed);
	pthread_mutex_unlock(&nt.lock);
}

void
sv_notify_stop(void)
{
	pthread_mutex_lock(&nt.lock);
	atomic_store(&nt.stopping, true);
	pthread_cond_broadcast(&nt.changed);
	pthread_mutex_unlock(&nt.lock);
	for (size_t i = 0; i < nt.n; i++)
		pthread_kill(nt.w[i].thread, SIG_STOP_NOTIFY);
	/* A signal that came between a thread's check and its RECV is sent again. */
	for (size_t i = 0; i < nt.n; i++) {
		for (;;) {
			struct timespec t;
			clock_gettime(CLOCK_REALTIME, &t);
			t.tv_nsec += 10 * 1000 * 1000;
			t.tv_sec += t.tv_nsec / 1000000000;
			t.tv_nsec %= 1000000000;
			if (pthread_timedjoin_np(nt.w[i].thread, NULL, &t) != ETIMEDOUT)
				break;
			pthread_kill(nt.w[i].thread, SIG_STOP_NOTIFY);
		}
	}
	nt.n = 0;
	free_buffers();
}

bool
sv_notify_stopping(void)
{
	return atomic_load(&nt.stopping);
}

/* ---- the control plane (main thread, libevent) ---- */

/* Signals that moat passes on to the agent. */
static const int forwarded[] = {SIGTERM, SIGHUP, SIGINT, SIGQUIT, SIGUSR1, SIGUSR2};

void
sv_block_signals(void)
{
	sigset_t set;

	sigemptyset(&set);
	for (size_t i = 0; i < ARRAY_SIZE(forwarded); i++)
		sigaddset(&set, forwarded[i]);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, NULL);
}

struct loop {
	struct sv *sv;
	struct event_base *base;
	int pidfd, sfd;
	int status;
	bool done;
};

/*
 * The agent stopped (Ctrl-Z): stop moat too, so that the shell sees its job
 * stopped; when the shell continues moat, give the terminal back to the agent
 * and continue it.
 */
static void
follow_stop(struct loop *l)
{
	struct sv *sv = l->sv;
	siginfo_t si = {0};

	if (waitid(P_PIDFD, (id_t)l->pidfd, &si, WSTOPPED | WNOHANG | WNOWAIT) < 0 ||
	    si.si_pid == 0 || si.si_code != CLD_STOPPED)
		return;
	waitid(P_PIDFD, (id_t)l->pidfd, &si, WSTOPPED | WNOHANG); /* consume the report */
	audit_flush(sv->audit);
	if (sv->tty_fd >= 0)
		tcsetpgrp(sv->tty_fd, getpgrp());
	kill(getpid(), SIGSTOP);
	if (sv->tty_fd >= 0)
		tcsetpgrp(sv->tty_fd, sv->agent_pgrp);
	kill(-sv->agent_pgrp, SIGCONT);
}

static void
finish(struct loop *l, int status)
{
	l->status = status;
	l->done = true;
	event_base_loopbreak(l->base);
}

static void
on_agent(evutil_socket_t fd, short what, void *arg)
{
	struct loop *l = arg;
	siginfo_t si = {0};

	if (waitid(P_PIDFD, (id_t)fd, &si, WEXITED | WNOHANG) < 0) {
		/* Reaped by the exec check's waitpid: it left the status for us. */
		if (l->sv->agent_exited)
			finish(l, l->sv->agent_status);
		return;
	}
	if (si.si_pid == 0)
		return;
	finish(l, si.si_code == CLD_EXITED ? si.si_status : 128 + si.si_status);
}

/*
 * moat is a child subreaper: descendants orphaned while the agent runs become
 * its children. Their exits are collected here; the agent's own is left for
 * its pidfd.
 */
size_t
sv_children(pid_t *pids, size_t max)
{
	char path[64], buf[4096];
	size_t n = 0;

	snprintf(path, sizeof(path), "/proc/self/task/%d/children", (int)getpid());
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t len = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	if (len <= 0)
		return 0;
	buf[len] = '\0';
	for (char *s = buf, *end; *s && n < max; s = end) {
		long pid = strtol(s, &end, 10);
		if (end == s)
			break;
		if (pid > 0)
			pids[n++] = (pid_t)pid;
	}
	return n;
}

static void
reap_orphans(struct loop *l)
{
	pid_t pids[1024];

	/*
	 * Children are enumerated, not waited for with P_ALL: any thread's wait reports
	 * the ptrace stops of the tracer thread's tracees too, and one consumed
	 * here would leave that thread waiting forever. Only exits are collected.
	 */
	size_t n = sv_children(pids, ARRAY_SIZE(pids));
	for (size_t i = 0; i < n; i++) {
		siginfo_t si = {0};
		if (pids[i] == l->sv->agent ||
		    waitid(P_PID, (id_t)pids[i], &si, WEXITED | WNOHANG | WNOWAIT) < 0 ||
		    si.si_pid == 0 ||
		    (si.si_code != CLD_EXITED && si.si_code != CLD_KILLED &&
		     si.si_code != CLD_DUMPED))
			continue;
		waitid(P_PID, (id_t)pids[i], &si, WEXITED | WNOHANG);
	}
}

static void
on_signal(evutil_socket_t fd, short what, void *arg)
{
	struct loop *l = arg;
	struct signalfd_siginfo ssi;

	while (read(fd, &ssi, sizeof(ssi)) == sizeof(ssi)) {
		if (ssi.ssi_signo == SIGCHLD) {
			follow_stop(l);
			reap_orphans(l);
		} else {
			sys_pidfd_send_signal(l->pidfd, (int)ssi.ssi_signo);
		}
	}
}

static void
on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct loop *l = arg;
	audit_flush(l->sv->audit);
}

void
sv_agent_reaped(struct sv *sv, int status)
{
	sv->agent_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	sv->agent_exited = true;
}

int
sv_loop(struct sv *sv, int agent_pidfd, int *ret_status)
{
	struct loop l = {.sv = sv, .pidfd = agent_pidfd};
	sigset_t set;
	struct timeval flush = {0, 200 * 1000};

	sigemptyset(&set);
	for (size_t i = 0; i < ARRAY_SIZE(forwarded); i++)
		sigaddset(&set, forwarded[i]);
	sigaddset(&set, SIGCHLD);
	l.sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	l.base = event_base_new();
	if (l.sfd < 0 || !l.base) {
		int r = l.sfd < 0 ? -errno : -ENOMEM;
		if (l.sfd >= 0)
			close(l.sfd);
		return log_error_errno(r, "run: signalfd or event loop");
	}
	struct event *ev[] = {
	    event_new(l.base, agent_pidfd, EV_READ | EV_PERSIST, on_agent, &l),
	    event_new(l.base, l.sfd, EV_READ | EV_PERSIST, on_signal, &l),
	    event_new(l.base, -1, EV_PERSIST, on_timer, &l),
	};
	int r = 0;
	for (size_t i = 0; i < ARRAY_SIZE(ev); i++)
		if (!ev[i] || event_add(ev[i], i == 2 ? &flush : NULL) < 0)
			r = -ENOMEM;
	if (r == 0 && event_base_dispatch(l.base) < 0)
		r = -EIO;
	for (size_t i = 0; i < ARRAY_SIZE(ev); i++)
		if (ev[i])
			event_free(ev[i]);
	event_base_free(l.base);
	close(l.sfd);
	if (r < 0)
		return log_error_errno(r, "run: event loop");
	*ret_status = l.done ? l.status : 125;
	return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * The notification thread and the control plane.
 *
 * One thread blocks in SECCOMP_IOCTL_NOTIF_RECV, runs the handler of each call
 * from a table indexed by syscall number and sends the answer, with
 * SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP so that target and supervisor hand the CPU
 * to each other instead of waking across CPUs. (A dedicated blocking reader
 * measured faster than poll() + RECV: bench/run.sh.) A trapped call without a
 * handler is refused: a gap in the table fails closed.
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

static void
build_table(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(handlers); i++) {
		int nr = sv_syscall_nr(handlers[i].name);
		if (nr >= 0 && nr < NR_MAX)
			by_nr[nr] = handlers[i].handler;
	}
}

sv_handler
sv_handler_for(int nr, const char **ret_name)
{
	if (nr < 0 || nr >= NR_MAX) {
		*ret_name = "?";
		return NULL;
	}
	if (!names[nr]) {
		char *n = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
		names[nr] = n ? n : "?";
	}
	*ret_name = names[nr];
	return by_nr[nr];
}

static void
handle(struct sv *sv)
{
	struct sv_call c = {.sv = sv, .req = sv->req};

	sv_redirect_poll(sv);
	memset(sv->req, 0, sv->req_size);
	if (sys_notif_recv(sv->notify_fd, sv->req) < 0)
		return; /* ENOENT: the target died before we read the call; EINTR: stop */
	c.tid = (pid_t)sv->req->pid;
	c.nr = sv->req->data.nr;
	sv_handler h = sv_handler_for(c.nr, &c.name);
	if (h)
		h(&c);
	else
		c.err = EPERM; /* trapped but not handled: fail closed */
	if (c.gone || c.replied) {
		audit_call(sv->audit, &c);
		return;
	}
	memset(sv->resp, 0, sv->resp_size);
	sv->resp->id = sv->req->id;
	if (c.cont) {
		sv->resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	} else {
		sv->resp->error = c.err ? -c.err : 0;
		sv->resp->val = c.err ? 0 : c.val;
	}
	sys_notif_send(sv->notify_fd, sv->resp); /* ENOENT: it died meanwhile */
	if (c.after)
		c.after(&c);
	audit_call(sv->audit, &c);
}

/* Interrupts the notification thread's RECV when it is time to stop. */
#define SIG_STOP_NOTIFY (SIGRTMIN + 1)

static void
on_stop_signal(int sig)
{
	(void)sig;
}

struct notify_thread {
	struct sv *sv;
	pthread_t thread;
	int gate[2]; /* the listener fd arrives here once the agent is started */
	pid_t tid;
	pthread_mutex_t lock;
	pthread_cond_t started;
	atomic_bool stopping;
};

static struct notify_thread nt = {.lock = PTHREAD_MUTEX_INITIALIZER,
                                  .started = PTHREAD_COND_INITIALIZER};

static void *
serve(void *arg)
{
	struct sv *sv = arg;
	sigset_t mask;
	int fd;

	sigfillset(&mask);
	sigdelset(&mask, SIG_STOP_NOTIFY);
	pthread_sigmask(SIG_SETMASK, &mask, NULL);
	pthread_mutex_lock(&nt.lock);
	nt.tid = gettid();
	pthread_cond_signal(&nt.started);
	pthread_mutex_unlock(&nt.lock);

	if (read(nt.gate[0], &fd, sizeof(fd)) != sizeof(fd) || fd < 0)
		return NULL;
	sv->notify_fd = fd;
	build_table();
	/* Linux 6.6+; without it the loop is correct, only slower. */
	(void)sys_notif_set_flags(fd, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
	while (!atomic_load(&nt.stopping))
		handle(sv);
	return NULL;
}

int
sv_notify_start(struct sv *sv, pid_t *ret_tid)
{
	struct sigaction sa = {.sa_handler = on_stop_signal}; /* no SA_RESTART: RECV returns */

	if (sigaction(SIG_STOP_NOTIFY, &sa, NULL) < 0 || pipe2(nt.gate, O_CLOEXEC) < 0)
		return -errno;
	nt.sv = sv;
	int r = pthread_create(&nt.thread, NULL, serve, sv);
	if (r != 0)
		return -r;
	pthread_mutex_lock(&nt.lock);
	while (!nt.tid)
		pthread_cond_wait(&nt.started, &nt.lock);
	*ret_tid = nt.tid;
	pthread_mutex_unlock(&nt.lock);
	return 0;
}

void
sv_notify_go(int notify_fd)
{
	if (write(nt.gate[1], &notify_fd, sizeof(notify_fd)) != sizeof(notify_fd))
		abort(); /* a pipe of our own: cannot fail */
}

void
sv_notify_stop(void)
{
	atomic_store(&nt.stopping, true);
	int none = -1;
	(void)!write(nt.gate[1], &none, sizeof(none));
	pthread_kill(nt.thread, SIG_STOP_NOTIFY);
	pthread_join(nt.thread, NULL);
	close(nt.gate[0]);
	close(nt.gate[1]);
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
	 * the ptrace stops of the notification thread's tracees too, and one consumed
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

/* SPDX-License-Identifier: MIT */
/*
 * Serving clients: one connection, at most one task. Frames are read from a
 * bufferevent; a frame that is malformed, oversized or out of order is
 * answered with `error` and the connection is closed once it is flushed.
 *
 * Back-pressure. The task's stdout and stderr are read only while the
 * client's output buffer holds less than OUT_HIGH bytes; when it drains below
 * OUT_LOW they are read again, so a slow client makes the task block on a full
 * pipe. stdin the other way: at most IN_HIGH bytes wait for the task, beyond
 * that the client's socket is not read.
 */
#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/listener.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "filter.h"
#include "moat/log.h"
#include "moat/macro.h"
#include "moat/proto.h"
#include "moat/sys.h"
#include "runner.h"
#include "server.h"

#define OUT_HIGH    (256u << 10)
#define OUT_LOW     (64u << 10)
#define IN_HIGH     (1u << 20)
#define CACHE_SIZE  16
#define VIEW_TTL_S  5
#define EOF_GRACE_S 2
#define GROUPS_MAX  256
#define WARM_MAX    4

struct conn;

struct task {
	struct runner *r;
	struct conn *conn; /* NULL once the client is gone */
	uint64_t id;
	uid_t uid;
	time_t started;
	char session[PROTO_NAME_MAX + 1];
	char command[256];
	char cwd[PATH_MAX];
	struct task_proc proc;
	struct event *ev_pidfd, *ev_control, *ev_out, *ev_err, *ev_in, *ev_timeout, *ev_grace;
	struct evbuffer *stdin_buf;
	bool stdin_eof, out_eof, err_eof, reaped, have_status, execed, reading;
	int status;
	unsigned timeout_s;
	struct task *next;
};

enum conn_state { C_HELLO, C_READY, C_RUNNING, C_CLOSING };

struct conn {
	struct runner *r;
	struct bufferevent *bev;
	struct ucred peer;
	enum conn_state state;
	bool free_scheduled;
	struct task *task;
	/* An exec captured by the supervisor, started when the client presents the ticket. */
	bool has_ticket;
	char ticket[PROTO_TICKET_MAX + 1];
	time_t ticket_expires;
	/*
	 * The first read is the runner's own (on_first()): descriptors come with
	 * the hello's first byte, and a bufferevent would drop them. got[] holds
	 * them until the hello says what they are: stdio[N] for bit N of
	 * stdio_mask, handed to the task's command.
	 */
	struct event *ev_first;
	int got[3];
	size_t n_got;
	bool got_bad; /* more than three, or cut short */
	unsigned stdio_mask;
	int stdio[3];
	unsigned stdio_closed; /* hello.closed */
	struct conn *next;
};

struct cached {
	uid_t uid;
	char cwd[PATH_MAX];
	struct policy *policy;
	struct task_view *view;
	time_t view_at;
	unsigned long used;
	unsigned long gen; /* of the view: a task prepared with another one is stale */
	bool borrowed;     /* the embedding supervisor's policy: not ours to free */
};

struct runner {
	struct event_base *base;
	struct runner_config cfg;
	char *policy_text;
	size_t policy_len;
	char policy_name[PATH_MAX];
	struct sock_fprog filter;
	struct evconnlistener *listener;
	struct conn *conns;
	struct task *tasks;
	size_t n_tasks;
	uint64_t next_id;
	struct cached cache[CACHE_SIZE];
	unsigned long clock, gens;
	/* Tasks prepared ahead (namespaces and mounts made) for the last client's view. */
	struct warm {
		struct task_proc proc;
		uid_t uid;
		unsigned long gen;
		time_t at;
	} warm[WARM_MAX];
	size_t n_warm;
	struct task_spec warm_spec; /* the base of the next ones: view, ids, limits */
	gid_t warm_groups[GROUPS_MAX];
	struct cached *warm_slot;
	unsigned long warm_gen;
	bool refill_scheduled;
	bool draining;
	struct cg_root cg;       /* where cgroups can be made (version 0: none, rlimits) */
	struct task_cg tasks_cg; /* the group this process and its tasks are in */
	int netns_fd;            /* the network namespace tasks share (cfg.share_net), or -1 */
	void (*done)(void *);
	void *done_data;
};

/* ---- frames out ---- */

static void
send_msg(struct conn *c, const struct proto_msg *m)
{
	struct proto_buf b = {0};

	if (proto_encode(&b, m) == 0)
		bufferevent_write(c->bev, b.p, b.len);
	proto_buf_free(&b);
}

static void conn_close_when_flushed(struct conn *c);

static void _printf_(4, 5)
    send_error(struct conn *c, enum proto_error code, int err, const char *fmt, ...)
{
	char text[PROTO_MESSAGE_MAX];
	va_list ap;

	if (c->state == C_CLOSING)
		return;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	struct proto_msg m = {.type = PROTO_ERROR,
	                      .u.error = {.code = code, .message = text, .err = err}};
	send_msg(c, &m);
	conn_close_when_flushed(c);
}

/* ---- tasks ---- */

static void task_maybe_finish(struct task *t);
static void schedule_refill(struct runner *r);

static void
task_kill(struct task *t)
{
	if (!t->reaped)
		sys_pidfd_send_signal(t->proc.pidfd, SIGKILL);
}

static void
task_free(struct task *t)
{
	struct event **evs[] = {&t->ev_pidfd, &t->ev_control, &t->ev_out,  &t->ev_err,
	                        &t->ev_in,    &t->ev_timeout, &t->ev_grace};
	struct runner *r = t->r;

	for (size_t i = 0; i < ARRAY_SIZE(evs); i++)
		if (*evs[i]) {
			event_free(*evs[i]);
			*evs[i] = NULL;
		}
	if (t->stdin_buf)
		evbuffer_free(t->stdin_buf);
	task_proc_close(&t->proc);
	for (struct task **p = &r->tasks; *p; p = &(*p)->next)
		if (*p == t) {
			*p = t->next;
			break;
		}
	r->n_tasks--;
	free(t);
	if (r->draining && !r->n_tasks && !r->conns && r->done)
		r->done(r->done_data);
}

/* Reads the task's stdout or stderr into the client's buffer, while it has room. */
static void
on_output(evutil_socket_t fd, short what, void *arg)
{
	struct task *t = arg;
	bool is_err = fd == t->proc.err;
	uint8_t hdr[PROTO_DATA_HEADER_MAX], buf[PROTO_CHUNK_MAX];

	if (!t->conn) {
		/* Nobody to deliver to: the task is being killed; drain so it can die. */
		if (read(fd, buf, sizeof(buf)) > 0)
			return;
	} else {
		struct evbuffer *out = bufferevent_get_output(t->conn->bev);
		if (evbuffer_get_length(out) >= OUT_HIGH) {
			event_del(t->ev_out);
			if (t->ev_err)
				event_del(t->ev_err);
			t->reading = false;
			return;
		}
		/* Up to OUT_HIGH at a time: fewer turns of the loop for a fast writer. */
		ssize_t n = 0;
		for (int chunk = 0; chunk < (int)(OUT_HIGH / PROTO_CHUNK_MAX); chunk++) {
			n = read(fd, buf, sizeof(buf));
			if (n <= 0)
				break;
			int h =
			    proto_data_header(is_err ? PROTO_STDERR : PROTO_STDOUT, (size_t)n, hdr);
			evbuffer_add(out, hdr, (size_t)h);
			evbuffer_add(out, buf, (size_t)n);
			if ((size_t)n < sizeof(buf))
				break;
		}
		if (n > 0 || (n < 0 && (errno == EAGAIN || errno == EINTR)))
			return;
		/* 0 is EOF; EIO is how a pty says every slave is closed. */
	}
	event_del(is_err ? t->ev_err : t->ev_out);
	if (is_err)
		t->err_eof = true;
	else
		t->out_eof = true;
	task_maybe_finish(t);
}

static void
resume_output(struct task *t)
{
	if (t->reading)
		return;
	t->reading = true;
	if (!t->out_eof)
		event_add(t->ev_out, NULL);
	if (t->ev_err && !t->err_eof)
		event_add(t->ev_err, NULL);
}

static void
stdin_close(struct task *t)
{
	if (t->proc.in >= 0 && t->proc.pty < 0) {
		close(t->proc.in);
		t->proc.in = -1;
	}
}

/* Feeds the task's stdin from what the client sent. */
static void
on_input(evutil_socket_t fd, short what, void *arg)
{
	struct task *t = arg;

	while (evbuffer_get_length(t->stdin_buf)) {
		int n = evbuffer_write(t->stdin_buf, fd);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		if (n <= 0) {
			/* The task closed its stdin: what is left is dropped, as a pipe would. */
			evbuffer_drain(t->stdin_buf, evbuffer_get_length(t->stdin_buf));
			break;
		}
	}
	if (evbuffer_get_length(t->stdin_buf))
		event_add(t->ev_in, NULL);
	else if (t->stdin_eof)
		stdin_close(t);
	if (t->conn && t->conn->state == C_RUNNING && evbuffer_get_length(t->stdin_buf) < IN_HIGH) {
		bufferevent_enable(t->conn->bev, EV_READ);
		/* Frames already buffered (the eof, say) wait for no new bytes. */
		bufferevent_trigger(t->conn->bev, EV_READ, BEV_TRIG_IGNORE_WATERMARKS);
	}
}

static void
send_exit(struct task *t, struct conn *c)
{
	struct proto_msg m = {.type = PROTO_EXIT};

	if (!t->have_status)
		m.u.exit.signal = SIGKILL; /* init was killed: a timeout, the kill switch */
	else if (WIFSIGNALED(t->status))
		m.u.exit.signal = WTERMSIG(t->status);
	else
		m.u.exit.code = WEXITSTATUS(t->status);
	send_msg(c, &m);
	conn_close_when_flushed(c);
}

static void
on_grace(evutil_socket_t fd, short what, void *arg)
{
	struct task *t = arg;

	/* Something outside the namespace holds the pipes open: stop waiting for EOF. */
	t->out_eof = t->err_eof = true;
	task_maybe_finish(t);
}

/*
 * The client hears the exit once the command's status is known (or init is
 * gone) and its output is drained, without waiting for the namespaces to be
 * torn down; the task itself is freed once init is reaped.
 */
static void
task_maybe_finish(struct task *t)
{
	if (!t->reaped && !t->have_status)
		return;
	if (t->conn && (!t->out_eof || !t->err_eof)) {
		if (!t->ev_grace) {
			struct timeval tv = {EOF_GRACE_S, 0};
			t->ev_grace = evtimer_new(t->r->base, on_grace, t);
			if (t->ev_grace)
				evtimer_add(t->ev_grace, &tv);
		}
		return;
	}
	struct conn *c = t->conn;
	if (c) {
		c->task = NULL;
		t->conn = NULL;
		send_exit(t, c);
		schedule_refill(t->r);
	}
	if (t->reaped)
		task_free(t);
}

static void
on_pidfd(evutil_socket_t fd, short what, void *arg)
{
	struct task *t = arg;
	siginfo_t si = {0};

	if (waitid(P_PIDFD, (id_t)fd, &si, WEXITED | WNOHANG) < 0 && errno == EINTR)
		return;
	t->reaped = true;
	event_del(t->ev_pidfd);
	task_maybe_finish(t);
}

static void
on_control(evutil_socket_t fd, short what, void *arg)
{
	struct task *t = arg;
	struct task_msg m;
	int r;

	while ((r = task_read_msg(fd, &m)) > 0) {
		if (m.event == TASK_EXECED && t->conn) {
			struct proto_msg s = {
			    .type = PROTO_STARTED,
			    .u.started = {.id = t->id, .pid = (uint64_t)t->proc.pid}};
			t->execed = true;
			send_msg(t->conn, &s);
			/* Output is read from now on, so that `started` comes first. */
			resume_output(t);
		} else if (m.event == TASK_EXEC_FAILED && t->conn) {
			/* Detaches (and may free) t: nothing more to read here. */
			return send_error(t->conn, PROTO_E_EXEC, m.value & 0xffff, "%s%s: %s",
			                  m.value >> 16 == TASK_STAGE_CWD ? "cwd " : "",
			                  m.value >> 16 == TASK_STAGE_CWD ? t->cwd : t->command,
			                  strerror(m.value & 0xffff));
		} else if (m.event == TASK_EXITED) {
			t->status = m.value;
			t->have_status = true;
			if (!t->reaped) {
				/* May send the exit; t lives on until init is reaped. */
				task_maybe_finish(t);
			}
		}
	}
	if (r == 0 || (r < 0 && r != -EAGAIN))
		event_del(t->ev_control);
}

static void
on_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct task *t = arg;
	char text[128];
	uint8_t hdr[PROTO_DATA_HEADER_MAX];

	if (t->conn) {
		int n =
		    snprintf(text, sizeof(text), "moat-runner: %s: killed after the %u s timeout\n",
		             t->session, t->timeout_s);
		int h = proto_data_header(PROTO_STDERR, (size_t)n, hdr);
		bufferevent_write(t->conn->bev, hdr, (size_t)h);
		bufferevent_write(t->conn->bev, text, (size_t)n);
	}
	task_kill(t);
}

/* ---- the policy, per client uid and working directory ---- */

static void
cache_clear(struct runner *r)
{
	for (size_t i = 0; i < CACHE_SIZE; i++) {
		if (!r->cache[i].borrowed)
			policy_free(r->cache[i].policy);
		view_free(r->cache[i].view);
		r->cache[i] = (struct cached){0};
	}
}

/* The policy as it reads for this user in this directory ("~" is their home). */
static int
load_for(struct runner *r, const char *home, const char *user, const char *cwd, struct policy **ret,
         char *err, size_t errsize)
{
	extern char **environ;
	size_t n = 0;

	for (char **e = environ; *e; e++)
		n++;
	_cleanup_free_ char **env = calloc(n + 4, sizeof(char *));
	_cleanup_free_ char *h = NULL, *u = NULL, *l = NULL;
	if (!env || asprintf(&h, "HOME=%s", home) < 0 || asprintf(&u, "USER=%s", user) < 0 ||
	    asprintf(&l, "LOGNAME=%s", user) < 0)
		return -ENOMEM;
	size_t k = 0;
	env[k++] = h;
	env[k++] = u;
	env[k++] = l;
	for (char **e = environ; *e; e++)
		if (strncmp(*e, "HOME=", 5) && strncmp(*e, "USER=", 5) &&
		    strncmp(*e, "LOGNAME=", 8))
			env[k++] = *e;
	struct policy_env penv = {.cwd = cwd, .environ = env, .resolve = canon_resolve};
	struct policy_diag d;
	int q = policy_load_string(r->policy_text, r->policy_len, r->policy_name, &penv, ret, &d);
	if (q < 0)
		snprintf(err, errsize, "%s:%u:%u: %s: %s", d.source, d.line, d.col, d.key, d.msg);
	return q;
}

static struct cached *
cached_for(struct runner *r, uid_t uid, const char *home, const char *user, const char *cwd,
           char *err, size_t errsize)
{
	struct cached *slot = &r->cache[0];
	time_t now = time(NULL);

	if (r->cfg.policy) {
		/* Embedded: the session's policy, whatever the task's directory. */
		slot->policy = (struct policy *)r->cfg.policy;
		slot->borrowed = true;
		goto found;
	}
	for (size_t i = 0; i < CACHE_SIZE; i++) {
		struct cached *c = &r->cache[i];
		if (c->policy && c->uid == uid && strcmp(c->cwd, cwd) == 0) {
			slot = c;
			goto found;
		}
		if (c->used < slot->used)
			slot = c;
	}
	policy_free(slot->policy);
	slot->view = view_free(slot->view);
	*slot = (struct cached){.uid = uid};
	snprintf(slot->cwd, sizeof(slot->cwd), "%s", cwd);
	if (load_for(r, home, user, cwd, &slot->policy, err, errsize) < 0)
		return NULL;
found:
	slot->used = ++r->clock;
	if (!slot->view || now - slot->view_at >= VIEW_TTL_S) {
		const char *hide[] = {r->cfg.hide, NULL};
		struct task_view *v = NULL;
		int q = view_build(slot->policy, hide, r->cfg.share_tmp, &v);
		if (q < 0) {
			snprintf(err, errsize, "plan the task's mounts: %s", strerror(-q));
			return NULL;
		}
		slot->view_at = now;
		/* The same plan as before: the tasks prepared with it are still good. */
		if (slot->view && view_equal(slot->view, v)) {
			view_free(v);
		} else {
			view_free(slot->view);
			slot->view = v;
			slot->gen = ++r->gens;
		}
	}
	return slot;
}

/* ---- starting a task ---- */

struct identity {
	char home[PATH_MAX], user[256];
	gid_t groups[GROUPS_MAX];
	int n_groups;
};

static void
identity_of(const struct ucred *peer, struct identity *id)
{
	static struct identity last;
	static uid_t last_uid;
	static gid_t last_gid;
	static time_t last_at;
	struct passwd pw, *res = NULL;
	char buf[4096];
	time_t now = time(NULL);

	/* /etc/passwd and /etc/group are read every few seconds per client, not per launch. */
	if (last_at && now - last_at < 5 && last_uid == peer->uid && last_gid == peer->gid) {
		*id = last;
		return;
	}

	id->groups[0] = peer->gid;
	id->n_groups = 1;
	if (getpwuid_r(peer->uid, &pw, buf, sizeof(buf), &res) != 0 || !res) {
		snprintf(id->home, sizeof(id->home), "/");
		snprintf(id->user, sizeof(id->user), "%u", (unsigned)peer->uid);
		return;
	}
	snprintf(id->home, sizeof(id->home), "%s", pw.pw_dir);
	snprintf(id->user, sizeof(id->user), "%s", pw.pw_name);
	int n = GROUPS_MAX;
	if (getgrouplist(pw.pw_name, peer->gid, id->groups, &n) >= 0)
		id->n_groups = n;
	last = *id;
	last_uid = peer->uid;
	last_gid = peer->gid;
	last_at = now;
}

static void
describe(struct task *t, const char *const *argv)
{
	size_t len = 0;

	t->command[0] = '\0';
	for (size_t i = 0; argv[i] && len + 1 < sizeof(t->command); i++) {
		int n = snprintf(t->command + len, sizeof(t->command) - len, "%s%s", i ? " " : "",
		                 argv[i]);
		if (n < 0)
			break;
		len += (size_t)n;
	}
}

/* Output events are added once the command runs (resume_output()). */
static int
watch(struct task *t, struct event **ev, int fd, short what, event_callback_fn cb)
{
	if (fd < 0)
		return 0;
	*ev = event_new(t->r->base, fd, what, cb, t);
	if (!*ev)
		return -ENOMEM;
	return cb == on_output || !(what & EV_PERSIST) ? 0 : event_add(*ev, NULL);
}

static int
task_events(struct task *t, unsigned timeout_s)
{
	int out = t->proc.pty >= 0 ? t->proc.pty : t->proc.out;
	int r = watch(t, &t->ev_pidfd, t->proc.pidfd, EV_READ | EV_PERSIST, on_pidfd);

	if (r == 0)
		r = watch(t, &t->ev_control, t->proc.control, EV_READ | EV_PERSIST, on_control);
	if (r == 0)
		r = watch(t, &t->ev_out, out, EV_READ | EV_PERSIST, on_output);
	if (r == 0)
		r = watch(t, &t->ev_err, t->proc.err, EV_READ | EV_PERSIST, on_output);
	if (r == 0)
		r = watch(t, &t->ev_in, t->proc.pty >= 0 ? t->proc.pty : t->proc.in, EV_WRITE,
		          on_input);
	t->reading = false; /* until the exec: see on_control() */
	if (t->proc.err < 0)
		t->err_eof = true;
	if (r == 0 && timeout_s) {
		struct timeval tv = {(time_t)timeout_s, 0};
		t->ev_timeout = evtimer_new(t->r->base, on_timeout, t);
		r = t->ev_timeout ? evtimer_add(t->ev_timeout, &tv) : -ENOMEM;
	}
	return r;
}

/* ---- tasks prepared ahead ---- */

static void
drop_warm(struct runner *r, size_t i)
{
	task_discard(&r->warm[i].proc);
	r->warm[i] = r->warm[--r->n_warm];
}

/* A prepared task for this uid and view, the oldest ready one first. */
static bool
take_warm(struct runner *r, const struct task_spec *s, unsigned long gen, struct task_proc *ret)
{
	time_t now = time(NULL);
	size_t best = SIZE_MAX;

	for (size_t i = r->n_warm; i-- > 0;) {
		struct warm *w = &r->warm[i];
		if (w->uid != s->uid || w->gen != gen || now - w->at >= VIEW_TTL_S) {
			drop_warm(r, i);
			continue;
		}
		if (best == SIZE_MAX || (task_poll_ready(&w->proc) && !r->warm[best].proc.ready))
			best = i;
	}
	if (best == SIZE_MAX)
		return false;
	*ret = r->warm[best].proc;
	r->warm[best] = r->warm[--r->n_warm];
	task_hurry(ret);
	return true;
}

static void
refill(evutil_socket_t fd, short what, void *arg)
{
	struct runner *r = arg;
	char err[PROTO_MESSAGE_MAX];

	r->refill_scheduled = false;
	/* The view changed since (or the slot went to another client): next time. */
	if (!r->warm_slot || r->warm_slot->gen != r->warm_gen || r->draining)
		return;
	r->warm_spec.view = r->warm_slot->view;
	while (r->n_warm < r->cfg.warm && r->n_warm < WARM_MAX) {
		struct warm *w = &r->warm[r->n_warm];
		if (task_prepare(&r->warm_spec, &w->proc, err, sizeof(err)) < 0)
			return;
		w->uid = r->warm_spec.uid;
		w->gen = r->warm_gen;
		w->at = time(NULL);
		r->n_warm++;
	}
}

static void
schedule_refill(struct runner *r)
{
	static const struct timeval soon = {0, 0};

	if (r->cfg.warm && !r->refill_scheduled && r->warm_slot &&
	    event_base_once(r->base, -1, EV_TIMEOUT, refill, r, &soon) == 0)
		r->refill_scheduled = true;
}

/*
 * After a launch: the next ones are prepared for the same client, off this
 * call's path (measured: preparing while the command starts costs less than
 * preparing once it is over, when the next command is often on its way).
 */
static void
plan_warm(struct runner *r, const struct task_spec *s, struct cached *slot)
{
	if (!r->cfg.warm)
		return;
	r->warm_spec = *s;
	r->warm_spec.background = true;
	r->warm_spec.argv = NULL;
	r->warm_spec.envp = NULL;
	r->warm_spec.cwd = NULL;
	r->warm_spec.path = NULL;
	r->warm_spec.stdio_mask = r->warm_spec.stdio_closed = 0; /* this client's only */
	r->warm_spec.n_groups = s->n_groups < GROUPS_MAX ? s->n_groups : GROUPS_MAX;
	memcpy(r->warm_groups, s->groups, r->warm_spec.n_groups * sizeof(gid_t));
	r->warm_spec.groups = r->warm_groups;
	r->warm_slot = slot;
	r->warm_gen = slot->gen;
	schedule_refill(r);
}

/*
 * Starts the command of exec frame m for client c. hold: a ticket's command,
 * made ready to exec while the stand-in is still on its way; it execs once the
 * ticket is presented (present_ticket()).
 */
static void conn_drop_fds(struct conn *c);

static void
start_task(struct conn *c, const struct proto_msg *m, bool hold)
{
	struct runner *r = c->r;
	char cwd[PATH_MAX], err[PROTO_MESSAGE_MAX] = "";
	struct identity id;

	if (r->n_tasks >= (r->cfg.max_tasks ? r->cfg.max_tasks : RUNNER_MAX_TASKS))
		return send_error(c, PROTO_E_LIMIT, EAGAIN, "too many tasks (%zu)", r->n_tasks);
	if (c->stdio_mask && m->u.exec.tty)
		return send_error(c, PROTO_E_PROTOCOL, 0, "descriptors cannot go with a terminal");
	if (!realpath(m->u.exec.cwd, cwd))
		return send_error(c, PROTO_E_EXEC, errno, "cwd %s: %s", m->u.exec.cwd,
		                  strerror(errno));
	size_t hl = r->cfg.hide ? strlen(r->cfg.hide) : 0;
	if (hl && !strncmp(cwd, r->cfg.hide, hl) && (cwd[hl] == '/' || !cwd[hl]))
		return send_error(c, PROTO_E_EXEC, EACCES,
		                  "cwd %s: inside the runner's socket directory %s, which tasks "
		                  "cannot see",
		                  cwd, r->cfg.hide);
	identity_of(&c->peer, &id);
	struct cached *pol = cached_for(r, c->peer.uid, id.home, id.user, cwd, err, sizeof(err));
	if (!pol)
		return send_error(c, PROTO_E_DENIED, 0, "policy: %s", err);
	const struct policy_runner *run = policy_runner(pol->policy);
	/*
	 * moat run's children keep the agent's HOME and TMPDIR (its /tmp is theirs);
	 * a daemon's task gets the user's home and a /tmp of its own.
	 */
	bool embedded = r->cfg.policy != NULL;
	_cleanup_free_ char **env = env_sanitize(
	    pol->policy, m->u.exec.env, embedded ? NULL : id.home, embedded ? NULL : "/tmp");
	struct task *t = calloc(1, sizeof(*t));
	if (!env || !t || !(t->stdin_buf = evbuffer_new())) {
		free(t);
		return send_error(c, PROTO_E_INTERNAL, ENOMEM, "out of memory");
	}
	bool root = geteuid() == 0;
	/* This policy's limits, for the group every task is in (the last task's policy wins). */
	if (cg_set_limits(&r->tasks_cg, run->pids, run->memory_mb) < 0)
		log_error("runner: cannot set the tasks' cgroup limits: rlimits stand in");
	struct task_spec spec = {
	    .argv = (char *const *)m->u.exec.argv,
	    .envp = env,
	    .path = m->u.exec.path,
	    .cwd = cwd,
	    .view = pol->view,
	    .filter = &r->filter,
	    .set_ids = root,
	    .uid = c->peer.uid,
	    .gid = c->peer.gid,
	    .groups = id.groups,
	    .n_groups = (size_t)id.n_groups,
	    .userns = !root,
	    .netns = run->network == POLICY_NETWORK_NONE,
	    .netns_fd = r->netns_fd,
	    .tty = m->u.exec.tty,
	    .rows = m->u.exec.rows,
	    .cols = m->u.exec.cols,
	    .pids = run->pids,
	    .memory_mb = run->memory_mb,
	    .pids_by_cg = r->tasks_cg.pids && run->pids && r->tasks_cg.pids_limit == run->pids,
	    .memory_by_cg = (r->tasks_cg.mem || r->tasks_cg.mem_in_pids) && run->memory_mb &&
	                    r->tasks_cg.memory_limit == run->memory_mb,
	    .umask = m->u.exec.has_umask ? m->u.exec.umask : 022,
	    .sigign = m->u.exec.sigign,
	    .hold = hold,
	    .stdio_mask = c->stdio_mask,
	    .stdio_closed = c->stdio_closed,
	    .stdio = {c->stdio[0], c->stdio[1], c->stdio[2]},
	};
	t->r = r;
	t->conn = c;
	t->id = ++r->next_id;
	t->uid = c->peer.uid;
	t->started = time(NULL);
	t->timeout_s = run->timeout_s;
	describe(t, m->u.exec.argv);
	snprintf(t->cwd, sizeof(t->cwd), "%s", cwd);
	if (m->u.exec.session)
		snprintf(t->session, sizeof(t->session), "%s", m->u.exec.session);
	else
		snprintf(t->session, sizeof(t->session), "pid-%d", (int)c->peer.pid);
	int q;
	if (take_warm(r, &spec, pol->gen, &t->proc)) {
		q = task_start(&t->proc, &spec, err, sizeof(err));
		if (q < 0)
			task_discard(&t->proc);
	} else {
		q = task_spawn(&spec, &t->proc, err, sizeof(err));
	}
	conn_drop_fds(c); /* the command has them now, or never will */
	plan_warm(r, &spec, pol);
	if (q < 0) {
		evbuffer_free(t->stdin_buf);
		free(t);
		return send_error(c, PROTO_E_INTERNAL, -q, "start the task: %s", err);
	}
	t->next = r->tasks;
	r->tasks = t;
	r->n_tasks++;
	c->task = t;
	if (!hold)
		c->state = C_RUNNING;
	if (task_events(t, run->timeout_s) < 0) {
		task_kill(t);
		send_error(c, PROTO_E_INTERNAL, ENOMEM, "out of memory");
	}
}

/* ---- ps and kill ---- */

static bool
may_see(const struct conn *c, const struct task *t)
{
	return c->peer.uid == 0 || c->peer.uid == t->uid;
}

static void
do_ps(struct conn *c)
{
	struct proto_task_info info[PROTO_TASKS_MAX];
	size_t n = 0;

	for (struct task *t = c->r->tasks; t && n < PROTO_TASKS_MAX; t = t->next)
		if (may_see(c, t))
			info[n++] = (struct proto_task_info){
			    .id = t->id,
			    .uid = t->uid,
			    .pid = (uint64_t)t->proc.pid,
			    .started = (uint64_t)t->started,
			    .session = t->session,
			    .command = t->command,
			};
	struct proto_msg m = {.type = PROTO_TASKS, .u.tasks = {.tasks = info, .n = n}};
	send_msg(c, &m);
	conn_close_when_flushed(c);
}

static void
do_kill(struct conn *c, const struct proto_msg *m)
{
	uint64_t count = 0;

	for (struct task *t = c->r->tasks; t; t = t->next) {
		bool match = m->u.kill.all || (m->u.kill.id && m->u.kill.id == t->id) ||
		             (m->u.kill.session && strcmp(m->u.kill.session, t->session) == 0);
		if (match && may_see(c, t) && !t->reaped) {
			task_kill(t);
			count++;
		}
	}
	struct proto_msg k = {.type = PROTO_KILLED, .u.killed = {.count = count}};
	send_msg(c, &k);
	conn_close_when_flushed(c);
}

/* ---- connections ---- */

/* The client is going: its task goes too, and its output is no longer read. */
static void
conn_detach_task(struct conn *c)
{
	struct task *t = c->task;

	if (!t)
		return;
	c->task = NULL;
	t->conn = NULL;
	task_kill(t);
	t->out_eof = t->err_eof = true;
	task_maybe_finish(t);
}

/* Closes the descriptors the client sent: the task has its own once it has started. */
static void
conn_drop_fds(struct conn *c)
{
	for (size_t i = 0; i < c->n_got; i++)
		close(c->got[i]);
	c->n_got = 0;
	for (int i = 0; i < 3; i++)
		if (c->stdio_mask & 1u << i)
			close(c->stdio[i]);
	c->stdio_mask = 0;
}

static void
conn_free(struct conn *c)
{
	struct runner *r = c->r;

	conn_detach_task(c);
	for (struct conn **p = &r->conns; *p; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			break;
		}
	if (c->ev_first)
		event_free(c->ev_first);
	conn_drop_fds(c);
	bufferevent_free(c->bev);
	free(c);
	if (r->draining && !r->n_tasks && !r->conns && r->done)
		r->done(r->done_data);
}

static void
deferred_free(evutil_socket_t fd, short what, void *arg)
{
	conn_free(arg);
}

/* Never frees at once: the callers still hold c. */
static void
conn_close_when_flushed(struct conn *c)
{
	static const struct timeval now = {0, 0};

	if (c->state == C_CLOSING)
		return;
	c->state = C_CLOSING;
	conn_detach_task(c);
	if (c->ev_first)
		event_del(c->ev_first);
	bufferevent_disable(c->bev, EV_READ);
	/* The write callback now comes only once everything is sent. */
	bufferevent_setwatermark(c->bev, EV_WRITE, 0, 0);
	if (evbuffer_get_length(bufferevent_get_output(c->bev)) == 0) {
		c->free_scheduled = true;
		if (event_base_once(c->r->base, -1, EV_TIMEOUT, deferred_free, c, &now) < 0)
			c->free_scheduled = false; /* the write callback or EOF frees it */
	}
}

static void
on_stdin_frame(struct conn *c, const struct proto_msg *m)
{
	struct task *t = c->task;

	if (!t || t->stdin_eof)
		return send_error(c, PROTO_E_PROTOCOL, 0, "stdin after eof");
	evbuffer_add(t->stdin_buf, m->u.data.data, m->u.data.len);
	if (t->ev_in)
		event_add(t->ev_in, NULL);
	if (evbuffer_get_length(t->stdin_buf) >= IN_HIGH)
		bufferevent_disable(c->bev, EV_READ);
}

static void
on_running_frame(struct conn *c, const struct proto_msg *m)
{
	struct task *t = c->task;

	if (m->type == PROTO_STDIN)
		return on_stdin_frame(c, m);
	if (m->type == PROTO_EOF) {
		if (!t)
			return;
		t->stdin_eof = true;
		if (t->proc.pty >= 0) {
			/* A terminal's end of input is its EOF character. */
			uint8_t eof = 4;
			evbuffer_add(t->stdin_buf, &eof, 1);
		}
		if (t->ev_in)
			event_add(t->ev_in, NULL);
		return;
	}
	if (m->type == PROTO_SIGNAL) {
		if (t && !t->reaped)
			sys_pidfd_send_signal(t->proc.pidfd, m->u.signal.signal);
		return;
	}
	if (m->type == PROTO_RESIZE) {
		if (t && t->proc.pty >= 0) {
			struct winsize ws = {.ws_row = m->u.resize.rows,
			                     .ws_col = m->u.resize.cols};
			ioctl(t->proc.pty, TIOCSWINSZ, &ws);
		}
		return;
	}
	send_error(c, PROTO_E_PROTOCOL, 0, "unexpected %s frame", proto_type_name(m->type));
}

/* Equal strings, in a time that does not depend on where they differ. */
static bool
ticket_equal(const char *a, const char *b)
{
	size_t n = strlen(a);
	unsigned char d = n != strlen(b);

	for (size_t i = 0; i < n && b[i]; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return d == 0;
}

/* A ticket is good once, on the connection it was issued for, until it expires. */
static void
present_ticket(struct conn *c, const char *ticket)
{
	bool ok = c->has_ticket && ticket && ticket_equal(c->ticket, ticket) &&
	          time(NULL) < c->ticket_expires;

	c->has_ticket = false;
	if (!ok)
		return send_error(c, PROTO_E_TICKET, 0, "unknown, used or expired ticket");
	if (c->r->draining)
		return send_error(c, PROTO_E_SHUTDOWN, 0, "the runner is stopping");
	if (c->stdio_mask && c->task && c->task->proc.pty >= 0)
		return send_error(c, PROTO_E_PROTOCOL, 0, "descriptors cannot go with a terminal");
	int r = c->task ? task_commit(&c->task->proc, c->stdio_mask, c->stdio, c->stdio_closed)
	                : -ESRCH;
	conn_drop_fds(c); /* the command has them now, or never will */
	if (r < 0)
		return send_error(c, PROTO_E_INTERNAL, EIO, "the task is gone");
	c->state = C_RUNNING;
}

/*
 * The descriptors that came with the hello are the client's stdin, stdout,
 * stderr as the hello's fds says, and each is an anonymous pipe open the right
 * way: nothing else goes into a task (a directory, a socket or a named FIFO
 * would reach past its view).
 */
static int
take_stdio(struct conn *c, unsigned mask)
{
	static const char *const names[] = {"stdin", "stdout", "stderr"};
	size_t k = 0;

	if (c->got_bad || (size_t)__builtin_popcount(mask) != c->n_got) {
		send_error(c, PROTO_E_PROTOCOL, 0,
		           "the hello announces %d descriptors, %zu%s came with it",
		           __builtin_popcount(mask), c->n_got, c->got_bad ? " or more" : "");
		return -1;
	}
	for (int i = 0; i < 3; i++) {
		if (!(mask & 1u << i))
			continue;
		if (!proto_stdio_pipe(c->got[k], i)) {
			send_error(c, PROTO_E_PROTOCOL, 0,
			           "the descriptor sent as %s is not a pipe open for %s", names[i],
			           i ? "writing" : "reading");
			return -1;
		}
		c->stdio[i] = c->got[k++];
	}
	c->stdio_mask = mask;
	c->n_got = 0;
	return 0;
}

static void
on_frame(struct conn *c, const struct proto_msg *m)
{
	switch (c->state) {
	case C_HELLO:
		if (m->type != PROTO_HELLO)
			return send_error(c, PROTO_E_PROTOCOL, 0, "expected hello, got %s",
			                  proto_type_name(m->type));
		if (m->u.hello.version != PROTO_VERSION)
			return send_error(c, PROTO_E_VERSION, 0,
			                  "protocol version %llu is not spoken here (only %d)",
			                  (unsigned long long)m->u.hello.version, PROTO_VERSION);
		if (take_stdio(c, m->u.hello.fds) < 0)
			return;
		c->stdio_closed = m->u.hello.closed;
		if (c->has_ticket || m->u.hello.ticket)
			return present_ticket(c, m->u.hello.ticket);
		c->state = C_READY;
		return;
	case C_READY:
		if (m->type == PROTO_EXEC)
			return c->r->draining
			           ? send_error(c, PROTO_E_SHUTDOWN, 0, "the runner is stopping")
			           : start_task(c, m, false);
		if (m->type == PROTO_PS)
			return do_ps(c);
		if (m->type == PROTO_KILL)
			return do_kill(c, m);
		return send_error(c, PROTO_E_PROTOCOL, 0, "expected exec, ps or kill, got %s",
		                  proto_type_name(m->type));
	case C_RUNNING:
		return on_running_frame(c, m);
	case C_CLOSING:
		return;
	}
}

static void
on_read(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);

	while (c->state != C_CLOSING) {
		uint8_t hdr[PROTO_HEADER_SIZE];
		uint32_t len;
		char err[256];
		struct proto_msg m;

		if (evbuffer_copyout(in, hdr, sizeof(hdr)) < (ev_ssize_t)sizeof(hdr))
			return;
		if (proto_frame_length(hdr, &len) < 0)
			return send_error(c, PROTO_E_PROTOCOL, 0, "frame length out of bounds");
		if (evbuffer_get_length(in) < sizeof(hdr) + len)
			return;
		uint8_t *frame = evbuffer_pullup(in, (ev_ssize_t)(sizeof(hdr) + len));
		if (!frame)
			return send_error(c, PROTO_E_INTERNAL, ENOMEM, "out of memory");
		if (proto_decode(frame + sizeof(hdr), len, &m, err, sizeof(err)) < 0) {
			evbuffer_drain(in, sizeof(hdr) + len);
			return send_error(c, PROTO_E_PROTOCOL, 0, "malformed frame: %s", err);
		}
		on_frame(c, &m);
		proto_msg_free(&m);
		if (c->state == C_CLOSING)
			return;
		evbuffer_drain(in, sizeof(hdr) + len);
		if (c->state == C_RUNNING && c->task &&
		    evbuffer_get_length(c->task->stdin_buf) >= IN_HIGH)
			return;
	}
}

static void
on_write(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;

	if (c->state == C_CLOSING) {
		if (!c->free_scheduled && !evbuffer_get_length(bufferevent_get_output(bev)))
			conn_free(c);
		return;
	}
	/*
	 * (libevent calls this when the write event finds nothing to write, too:
	 * output waits for the exec, so that `started` goes first.)
	 */
	if (c->task && c->task->execed)
		resume_output(c->task);
}

static void
on_event(struct bufferevent *bev, short what, void *arg)
{
	struct conn *c = arg;

	if ((what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) && !c->free_scheduled)
		conn_free(c);
}

/* The connection's first bytes, and the descriptors that may come with them. */
static void
on_first(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;
	uint8_t buf[4096];
	ssize_t n = task_recv_fds(fd, buf, sizeof(buf), MSG_DONTWAIT, c->got, ARRAY_SIZE(c->got),
	                          &c->n_got, &c->got_bad);

	if (n < 0 && errno == EAGAIN) {
		event_add(c->ev_first, NULL);
		return;
	}
	if (n <= 0) {
		if (!c->free_scheduled)
			conn_free(c);
		return;
	}
	/* A socket bufferevent's input takes bytes only from its own reads: thawed for ours. */
	struct evbuffer *in = bufferevent_get_input(c->bev);
	evbuffer_unfreeze(in, 0);
	int r = evbuffer_add(in, buf, (size_t)n);
	evbuffer_freeze(in, 0);
	if (r < 0)
		return send_error(c, PROTO_E_INTERNAL, ENOMEM, "out of memory");
	bufferevent_enable(c->bev, EV_READ);
	on_read(c->bev, c);
}

static int
conn_new(struct runner *r, int fd)
{
	struct conn *c = calloc(1, sizeof(*c));
	socklen_t len = sizeof(c->peer);

	if (!c) {
		close(fd);
		return -ENOMEM;
	}
	c->r = r;
	c->stdio[0] = c->stdio[1] = c->stdio[2] = -1;
	evutil_make_socket_nonblocking(fd);
	evutil_make_socket_closeonexec(fd);
	c->bev = bufferevent_socket_new(r->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (!c->bev) {
		close(fd);
		free(c);
		return -ENOMEM;
	}
	c->next = r->conns;
	r->conns = c;
	bufferevent_setcb(c->bev, on_read, on_write, on_event, c);
	bufferevent_setwatermark(c->bev, EV_READ, 0, PROTO_HEADER_SIZE + PROTO_FRAME_MAX);
	bufferevent_setwatermark(c->bev, EV_WRITE, OUT_LOW, 0);
	/* libevent writes 16 KiB at a time by default: a quarter of a chunk. */
	bufferevent_set_max_single_write(c->bev, OUT_HIGH);
	/* Output in flight to the client: fewer wake-ups of both ends for a fast task. */
	int sz = 4 << 20;
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof(sz)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	bufferevent_enable(c->bev, EV_WRITE);
	c->ev_first = event_new(r->base, fd, EV_READ, on_first, c);
	if (!c->ev_first || event_add(c->ev_first, NULL) < 0) {
		send_error(c, PROTO_E_INTERNAL, ENOMEM, "out of memory");
		return -ENOMEM;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c->peer, &len) < 0) {
		send_error(c, PROTO_E_DENIED, errno, "SO_PEERCRED: %s", strerror(errno));
		return -EPERM;
	}
	if (c->peer.uid != 0 && c->peer.uid != r->cfg.owner) {
		send_error(c, PROTO_E_DENIED, EACCES,
		           "uid %u may not use this runner (it serves uid %u)",
		           (unsigned)c->peer.uid, (unsigned)r->cfg.owner);
		return -EPERM;
	}
	if (r->draining) {
		send_error(c, PROTO_E_SHUTDOWN, 0, "the runner is stopping");
		return -ESHUTDOWN;
	}
	return 0;
}

static void
on_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int salen, void *arg)
{
	conn_new(arg, fd);
}

int
runner_adopt(struct runner *r, int fd)
{
	return conn_new(r, fd);
}

int
runner_adopt_ticket(struct runner *r, int fd, const char *ticket, const uint8_t *exec_body,
                    size_t len, unsigned ttl_s)
{
	struct proto_msg m;
	char err[256];

	if (strlen(ticket) > PROTO_TICKET_MAX) {
		close(fd);
		return -EINVAL;
	}
	if (proto_decode(exec_body, len, &m, err, sizeof(err)) < 0) {
		close(fd);
		log_error("runner: a ticket's exec: %s", err);
		return -EBADMSG;
	}
	if (m.type != PROTO_EXEC) {
		proto_msg_free(&m);
		close(fd);
		return -EBADMSG;
	}
	int q = conn_new(r, fd);
	if (q < 0) {
		proto_msg_free(&m);
		return q;
	}
	struct conn *c = r->conns; /* conn_new puts it first */
	c->has_ticket = true;
	snprintf(c->ticket, sizeof(c->ticket), "%s", ticket);
	c->ticket_expires = time(NULL) + ttl_s;
	/* Prepared now, run when the ticket is presented; a failure is told to the stand-in. */
	if (r->draining)
		send_error(c, PROTO_E_SHUTDOWN, 0, "the runner is stopping");
	else
		start_task(c, &m, true);
	proto_msg_free(&m);
	return 0;
}

int
runner_listen(struct runner *r, int fd)
{
	r->listener = evconnlistener_new(r->base, on_accept, r,
	                                 LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, -1, fd);
	return r->listener ? 0 : -ENOMEM;
}

static int
read_policy(struct runner *r)
{
	_cleanup_free_ char *text = NULL;
	size_t len = 0;

	if (!r->cfg.policy_file) {
		text = strdup(policy_default_text());
		len = text ? strlen(text) : 0;
		snprintf(r->policy_name, sizeof(r->policy_name), "<default>");
	} else {
		_cleanup_fclose_ FILE *f = fopen(r->cfg.policy_file, "re");
		if (!f)
			return log_error_errno(-errno, "%s", r->cfg.policy_file);
		FILE *mem = open_memstream(&text, &len);
		char buf[8192];
		size_t n;
		if (!mem)
			return -ENOMEM;
		while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
			fwrite(buf, 1, n, mem);
		fclose(mem);
		snprintf(r->policy_name, sizeof(r->policy_name), "%s", r->cfg.policy_file);
	}
	if (!text)
		return -ENOMEM;
	/* Loaded once here so that a bad policy is refused now, not at the first task. */
	struct policy *p = NULL;
	struct policy_diag d;
	struct policy_env penv = {.cwd = "/", .environ = NULL};
	if (policy_load_string(text, len, r->policy_name, &penv, &p, &d) < 0) {
		log_error("%s:%u:%u: %s: %s", d.source, d.line, d.col, d.key, d.msg);
		return -EINVAL;
	}
	policy_free(p);
	free(r->policy_text);
	r->policy_text = TAKE_PTR(text);
	r->policy_len = len;
	cache_clear(r);
	return 0;
}

int
runner_reload(struct runner *r)
{
	return read_policy(r);
}

int
runner_new(struct event_base *base, const struct runner_config *c, struct runner **ret)
{
	struct runner *r = calloc(1, sizeof(*r));
	struct sv_filter_opts fo = {.task = true};

	if (!r)
		return -ENOMEM;
	r->base = base;
	r->cfg = *c;
	r->netns_fd = -1;
	/* Tasks are born in this process's group: the limits hold for all of them. */
	if (cg_detect(&r->cg) == 0) {
		char name[64];
		snprintf(name, sizeof(name), "moat-%d-tasks", (int)getpid());
		if (cg_enter(&r->cg, name, &r->tasks_cg) < 0)
			r->cg.version = 0;
	}
	/* One loopback-only network for the session's tasks, made once (it costs ~1 ms). */
	if (c->share_net && geteuid() == 0) {
		int ns = task_netns_new();
		if (ns < 0)
			log_error_errno(
			    ns, "runner: a shared network namespace (each task makes its own)");
		r->netns_fd = ns < 0 ? -1 : ns;
	}
	int q = c->policy ? 0 : read_policy(r);
	if (q == 0) {
		q = sv_filter_build(&fo, &r->filter);
		if (q < 0)
			log_error_errno(q, "build the tasks' seccomp filter");
	}
	if (q < 0) {
		runner_free(r);
		return q;
	}
	*ret = r;
	return 0;
}

struct runner *
runner_free(struct runner *r)
{
	if (!r)
		return NULL;
	while (r->conns)
		conn_free(r->conns);
	for (struct task *t = r->tasks, *next; t; t = next) {
		next = t->next;
		task_kill(t);
		waitpid(t->proc.pid, NULL, 0);
		task_free(t);
	}
	while (r->n_warm)
		drop_warm(r, r->n_warm - 1);
	if (r->listener)
		evconnlistener_free(r->listener);
	cache_clear(r);
	if (r->netns_fd >= 0)
		close(r->netns_fd);
	if (r->tasks_cg.pids || r->tasks_cg.mem)
		cg_leave(&r->cg, &r->tasks_cg);
	free(r->policy_text);
	free(r->filter.filter);
	free(r);
	return NULL;
}

void
runner_drain(struct runner *r, bool now, void (*done)(void *userdata), void *userdata)
{
	r->draining = true;
	while (r->n_warm)
		drop_warm(r, r->n_warm - 1);
	r->done = done;
	r->done_data = userdata;
	if (r->listener) {
		evconnlistener_free(r->listener);
		r->listener = NULL;
	}
	/* Connections that have not started a task are told and closed. */
	for (struct conn *c = r->conns; c; c = c->next)
		if (c->state == C_HELLO || c->state == C_READY)
			send_error(c, PROTO_E_SHUTDOWN, 0, "the runner is stopping");
	if (now)
		for (struct task *t = r->tasks; t; t = t->next)
			task_kill(t);
	if (!r->n_tasks && !r->conns && done)
		done(userdata);
}

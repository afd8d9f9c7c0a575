/* SPDX-License-Identifier: MIT */
/*
 * A runner client. Its stdin, stdout and stderr that are pipes go to the
 * command with the hello (stdio_pipes()): the command uses them itself, and
 * nothing of those streams passes here. The rest is relayed by one poll loop:
 * frames from the runner go to stdout and stderr with blocking writes (a slow
 * reader there slows the task, through the runner's back-pressure); stdin is
 * read only while nothing is waiting to go to the runner, so neither side can
 * fill the other's buffers without bound; signals arrive on a signalfd and
 * leave as frames.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "moat/macro.h"
#include "moat/proto.h"

/* What one recv may take: many frames at a time from a fast task. */
#define IN_BUF (1u << 20)

struct session {
	const char *prog;
	int sock;
	struct proto_buf out; /* frames not yet sent */
	size_t out_off;
	uint8_t *in; /* frames not yet decoded: in[in_off..in_len) */
	size_t in_off, in_len, in_cap;
	bool tty, raw;
	unsigned fds;       /* bit N: stdio N went to the runner (hello.fds) */
	unsigned closed;    /* bit N: stdio N is closed here (hello.closed) */
	const char *ticket; /* the stand-in's, for its hello */
	struct termios saved;
};

static const int relayed[] = {SIGINT,  SIGTERM,  SIGHUP,  SIGQUIT, SIGUSR1,
                              SIGUSR2, SIGWINCH, SIGCONT, SIGALRM};

static int _printf_(2, 3) say(const struct session *s, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", s->prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return CLIENT_EXIT_RUNNER;
}

/* Room for a fast task's output in flight: fewer wake-ups on both ends (4 MiB). */
static void
big_buffers(int fd)
{
	int sz = 4 << 20;

	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
}

/*
 * Which of stdin, stdout, stderr are closed (except keep, a descriptor this
 * process was given): the command's will be too (hello.closed). Each is then
 * held open on /dev/null, so that no descriptor opened here takes its place.
 */
static unsigned
closed_stdio(int keep)
{
	unsigned mask = 0;

	for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; fd++)
		if (fd == keep || fcntl(fd, F_GETFD) < 0)
			mask |= 1u << fd;
	return mask;
}

static void
hold_closed(unsigned mask)
{
	for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; fd++)
		if (mask & 1u << fd) {
			int n = open("/dev/null", O_RDWR | O_CLOEXEC);
			if (n >= 0 && n != fd) {
				dup3(n, fd, O_CLOEXEC);
				close(n);
			}
		}
}

/*
 * fd moved above 2 when it is one of them (stdin, stdout or stderr was closed):
 * the connection must not stand in for the command's stdio. fd or -errno.
 */
static int
above_stdio(int fd)
{
	if (fd < 0)
		return -errno;
	if (fd > STDERR_FILENO)
		return fd;
	int d = fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
	int r = d < 0 ? -errno : d;
	close(fd);
	return r;
}

static int
connect_to(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	fd = above_stdio(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
	if (fd < 0)
		return fd;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int r = -errno;
		close(fd);
		return r;
	}
	big_buffers(fd);
	return fd;
}

static int
write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN) {
			struct pollfd pfd = {.fd = fd, .events = POLLOUT};
			poll(&pfd, 1, -1);
			continue;
		}
		if (w < 0)
			return -errno;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int
queue(struct session *s, const struct proto_msg *m)
{
	return proto_encode(&s->out, m);
}

/* Sends what is queued, without blocking; 0, or -errno when the runner is gone. */
static int
flush(struct session *s)
{
	while (s->out_off < s->out.len) {
		ssize_t w = send(s->sock, s->out.p + s->out_off, s->out.len - s->out_off,
		                 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return errno == EAGAIN ? 0 : -errno;
		s->out_off += (size_t)w;
	}
	s->out.len = s->out_off = 0;
	return 0;
}

/* Queues m (if any) and sends everything queued, blocking. */
static int
send_now(struct session *s, const struct proto_msg *m)
{
	int r = m ? queue(s, m) : 0;
	while (r == 0 && s->out.len) {
		struct pollfd pfd = {.fd = s->sock, .events = POLLOUT};
		r = flush(s);
		if (r == 0 && s->out.len)
			poll(&pfd, 1, -1);
	}
	return r;
}

/* Reads from the runner: 1 with a frame decoded into m, 0 at EOF, -errno. */
static int
next_frame(struct session *s, struct proto_msg *m, char *err, size_t errsize, bool block)
{
	for (;;) {
		uint32_t len;
		uint8_t *at = s->in + s->in_off;
		size_t have = s->in_len - s->in_off;
		if (have >= PROTO_HEADER_SIZE) {
			if (proto_frame_length(at, &len) < 0) {
				snprintf(err, errsize, "frame length out of bounds");
				return -EBADMSG;
			}
			if (have >= PROTO_HEADER_SIZE + len) {
				int r = proto_decode(at + PROTO_HEADER_SIZE, len, m, err, errsize);
				return r < 0 ? r : 1;
			}
		}
		/* Not a whole frame: what is left of one goes to the front, the rest is read. */
		if (s->in_off) {
			memmove(s->in, at, have);
			s->in_len = have;
			s->in_off = 0;
		}
		size_t want = have >= PROTO_HEADER_SIZE ? PROTO_HEADER_SIZE + len : 0;
		if (want < IN_BUF)
			want = IN_BUF;
		if (s->in_cap < want) {
			uint8_t *p = realloc(s->in, want);
			if (!p)
				return -ENOMEM;
			s->in = p;
			s->in_cap = want;
		}
		ssize_t n = recv(s->sock, s->in + s->in_len, s->in_cap - s->in_len,
		                 block ? 0 : MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0) {
			snprintf(err, errsize, "the runner closed the connection");
			return 0;
		}
		s->in_len += (size_t)n;
	}
}

/* Drops the frame next_frame() returned. */
static void
consume(struct session *s, struct proto_msg *m)
{
	uint32_t len;

	proto_msg_free(m);
	proto_frame_length(s->in + s->in_off, &len);
	s->in_off += PROTO_HEADER_SIZE + len;
	if (s->in_off == s->in_len)
		s->in_off = s->in_len = 0;
}

/*
 * Which of stdin, stdout, stderr are anonymous pipes: those the command gets
 * as they are (see `fds` in proto.h), as a child would inherit them. The same pipe,
 * so nothing is read ahead of the command, a reader that goes away is
 * SIGPIPE to the command itself, and bytes need not cross the runner.
 */
static unsigned
stdio_pipes(void)
{
	unsigned mask = 0;

	for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; fd++)
		if (proto_stdio_pipe(fd, fd))
			mask |= 1u << fd;
	return mask;
}

/* The hello, with the descriptors of s->fds on its first byte. */
static int
send_hello(struct session *s)
{
	struct proto_msg hello = {.type = PROTO_HELLO,
	                          .u.hello = {.version = PROTO_VERSION,
	                                      .ticket = s->ticket,
	                                      .fds = (uint16_t)s->fds,
	                                      .closed = (uint16_t)s->closed}};
	char cbuf[CMSG_SPACE(3 * sizeof(int))] = {0};
	int fds[3], n = 0;

	if (!s->fds)
		return send_now(s, &hello);
	for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; fd++)
		if (s->fds & (1u << fd))
			fds[n++] = fd;
	int r = queue(s, &hello);
	if (r < 0)
		return r;
	struct iovec iov = {.iov_base = s->out.p, .iov_len = s->out.len};
	struct msghdr mh = {.msg_iov = &iov,
	                    .msg_iovlen = 1,
	                    .msg_control = cbuf,
	                    .msg_controllen = CMSG_SPACE((size_t)n * sizeof(int))};
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN((size_t)n * sizeof(int));
	memcpy(CMSG_DATA(c), fds, (size_t)n * sizeof(int));
	ssize_t w;
	do
		w = sendmsg(s->sock, &mh, MSG_NOSIGNAL);
	while (w < 0 && errno == EINTR);
	if (w <= 0)
		return w < 0 ? -errno : -EIO;
	s->out_off = (size_t)w;
	return send_now(s, NULL);
}

static int
open_session(struct session *s, const char *socket)
{
	s->sock = connect_to(socket);
	if (s->sock < 0)
		return say(s,
		           "cannot reach the runner at %s: %s (start one with 'moat-runner "
		           "--socket %s')",
		           socket, strerror(-s->sock), socket);
	/*
	 * A runner that refuses us has already written why and closed: a failed send
	 * is not the end, the error frame is read next.
	 */
	send_hello(s);
	return 0;
}

static void
close_session(struct session *s)
{
	if (s->raw)
		tcsetattr(STDIN_FILENO, TCSADRAIN, &s->saved);
	if (s->sock >= 0)
		close(s->sock);
	proto_buf_free(&s->out);
	free(s->in);
}

static int
error_status(struct session *s, const struct proto_msg *m)
{
	fprintf(stderr, "%s: %s%s\n", s->prog, m->u.error.code == PROTO_E_DENIED ? "denied: " : "",
	        m->u.error.message);
	if (m->u.error.code != PROTO_E_EXEC)
		return CLIENT_EXIT_RUNNER;
	return m->u.error.err == ENOENT ? CLIENT_EXIT_NOTFOUND : CLIENT_EXIT_NOEXEC;
}

static void
window_size(uint16_t *rows, uint16_t *cols)
{
	struct winsize ws = {0};

	ioctl(STDIN_FILENO, TIOCGWINSZ, &ws);
	*rows = ws.ws_row;
	*cols = ws.ws_col;
}

static void
on_signal(struct session *s, int sig)
{
	struct proto_msg m = {.type = PROTO_SIGNAL, .u.signal = {.signal = sig}};

	if (sig == SIGWINCH) {
		if (!s->tty)
			return;
		m.type = PROTO_RESIZE;
		window_size(&m.u.resize.rows, &m.u.resize.cols);
	}
	queue(s, &m);
}

/* stdin to the runner, one chunk at a time. */
static bool
on_stdin(struct session *s)
{
	uint8_t buf[PROTO_CHUNK_MAX];
	ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return true;
	if (n <= 0) {
		struct proto_msg eof = {.type = PROTO_EOF};
		queue(s, &eof);
		return false;
	}
	struct proto_msg m = {.type = PROTO_STDIN, .u.data = {.data = buf, .len = (size_t)n}};
	queue(s, &m);
	return true;
}

/* Handles one frame from a running task; returns -1 to go on, else the exit status. */
static int
on_frame(struct session *s, const struct proto_msg *m)
{
	if (m->type == PROTO_STARTED)
		return -1;
	if (m->type == PROTO_STDOUT || m->type == PROTO_STDERR) {
		write_all(m->type == PROTO_STDOUT ? STDOUT_FILENO : STDERR_FILENO, m->u.data.data,
		          m->u.data.len);
		return -1;
	}
	if (m->type == PROTO_EXIT)
		return m->u.exit.signal ? CLIENT_SIGNALED + m->u.exit.signal : m->u.exit.code;
	if (m->type == PROTO_ERROR)
		return error_status(s, m);
	say(s, "unexpected %s frame from the runner", proto_type_name(m->type));
	return CLIENT_EXIT_RUNNER;
}

static int
relay(struct session *s)
{
	sigset_t set;
	/* Else the command reads it itself, or has none. */
	bool stdin_open = !((s->fds | s->closed) & 1u << STDIN_FILENO);
	int status = -1;

	sigemptyset(&set);
	for (size_t i = 0; i < ARRAY_SIZE(relayed); i++)
		sigaddset(&set, relayed[i]);
	sigprocmask(SIG_BLOCK, &set, NULL);
	int sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0)
		return say(s, "signalfd: %s", strerror(errno));
	while (status < 0) {
		struct pollfd p[3] = {
		    {.fd = s->sock, .events = POLLIN | (s->out.len ? POLLOUT : 0)},
		    {.fd = sfd, .events = POLLIN},
		    {.fd = stdin_open && !s->out.len ? STDIN_FILENO : -1, .events = POLLIN},
		};
		if (poll(p, 3, -1) < 0 && errno != EINTR)
			break;
		struct signalfd_siginfo si;
		while (read(sfd, &si, sizeof(si)) == sizeof(si))
			on_signal(s, (int)si.ssi_signo);
		if (p[2].revents)
			stdin_open = on_stdin(s);
		if (flush(s) < 0) {
			/* The runner has closed; why is still to be read: read on to the end. */
			s->out.len = s->out_off = 0;
			stdin_open = false;
		}
		if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		struct proto_msg m;
		char err[256];
		int r = -EAGAIN;
		while (status < 0 && (r = next_frame(s, &m, err, sizeof(err), false)) > 0) {
			status = on_frame(s, &m);
			consume(s, &m);
		}
		if (status < 0 && r != -EAGAIN)
			status = say(s, "%s", r == 0 ? err : r == -EBADMSG ? err : strerror(-r));
	}
	close(sfd);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	return status;
}

/*
 * The command was killed by sig: so is this process, once the terminal is
 * restored, so that its parent sees the same death (WIFSIGNALED). Without a
 * core file: the command's own was its business.
 */
static int
finish(int status)
{
	if (status < CLIENT_SIGNALED)
		return status;
	int sig = status - CLIENT_SIGNALED;
	struct rlimit no_core = {0, 0};
	/* The kernel's struct sigaction: musl's wrappers refuse the signals it keeps (32-34). */
	struct {
		void (*handler)(int);
		unsigned long flags;
		void (*restorer)(void);
		uint64_t mask;
	} dfl = {.handler = SIG_DFL};

	if (sig < 1 || sig > 64)
		return 128 + sig;
	uint64_t one = 1ULL << (sig - 1);
	setrlimit(RLIMIT_CORE, &no_core);
	syscall(SYS_rt_sigaction, sig, &dfl, NULL, sizeof(uint64_t));
	syscall(SYS_rt_sigprocmask, SIG_UNBLOCK, &one, NULL, sizeof(one));
	syscall(SYS_tgkill, getpid(), gettid(), sig);
	/* A signal whose default is not to terminate (SIGCHLD, SIGTSTP...) leaves us here. */
	return 128 + sig;
}

/* A terminal passes every key through: the task's own pty interprets them. */
static void
enter_raw(struct session *s)
{
	if (s->tty && tcgetattr(STDIN_FILENO, &s->saved) == 0) {
		struct termios raw = s->saved;
		cfmakeraw(&raw);
		s->raw = tcsetattr(STDIN_FILENO, TCSADRAIN, &raw) == 0;
	}
}

int
client_exec(const struct client_exec *e, const char *prog)
{
	struct session s = {.prog = prog, .sock = -1, .closed = closed_stdio(-1)};
	char cwd[PATH_MAX];

	hold_closed(s.closed);
	s.tty = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
	if (!s.tty)
		s.fds = stdio_pipes() & ~s.closed;
	int r = open_session(&s, e->socket);

	if (r) {
		close_session(&s);
		return r;
	}
	if (!e->cwd && !getcwd(cwd, sizeof(cwd))) {
		close_session(&s);
		return say(&s, "getcwd: %s", strerror(errno));
	}
	size_t argc = 0, envc = 0;
	while (e->argv[argc])
		argc++;
	while (e->env && e->env[envc])
		envc++;
	struct proto_msg m = {.type = PROTO_EXEC,
	                      .u.exec = {.argv = (const char *const *)e->argv,
	                                 .argc = argc,
	                                 .env = (const char *const *)e->env,
	                                 .envc = envc,
	                                 .cwd = e->cwd ? e->cwd : cwd,
	                                 .path = e->path,
	                                 .session = e->session,
	                                 .tty = s.tty}};
	static const char *const no_env[] = {NULL};
	if (!e->env)
		m.u.exec.env = no_env;
	if (s.tty)
		window_size(&m.u.exec.rows, &m.u.exec.cols);
	r = queue(&s, &m);
	if (r < 0) {
		close_session(&s);
		return say(&s, "the command is too large to send: %s", strerror(-r));
	}
	enter_raw(&s);
	r = relay(&s);
	close_session(&s);
	return finish(r);
}

int
client_standin(int sock, const char *ticket, const char *prog)
{
	/* (moat put the connection on the lowest free descriptor: maybe a closed stdio's.) */
	struct session s = {.prog = prog, .ticket = ticket, .closed = closed_stdio(sock)};

	s.sock = above_stdio(sock);
	hold_closed(s.closed);
	if (s.sock < 0)
		return say(&s, "the runner's connection: %s", strerror(-s.sock));
	big_buffers(s.sock);
	/* The same test the supervisor made on these descriptors for the ticket. */
	s.tty = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
	if (!s.tty)
		s.fds = stdio_pipes() & ~s.closed;
	send_hello(&s);
	enter_raw(&s);
	int r = relay(&s);
	close_session(&s);
	return finish(r);
}

/* A request that gets one answer: ps, kill. */
static int
ask(struct session *s, const char *socket, const struct proto_msg *req, enum proto_type want,
    int (*show)(const struct proto_msg *))
{
	struct proto_msg m;
	char err[256];
	int r = open_session(s, socket);

	if (r == 0) {
		send_now(s, req); /* on failure, the runner's error frame says why */
		int q = next_frame(s, &m, err, sizeof(err), true);
		if (q <= 0)
			r = say(s, "%s", q == 0 || q == -EBADMSG ? err : strerror(-q));
		else {
			r = m.type == want          ? show(&m)
			    : m.type == PROTO_ERROR ? error_status(s, &m)
			                            : say(s, "unexpected answer");
			consume(s, &m);
		}
	}
	close_session(s);
	return r;
}

static int
show_tasks(const struct proto_msg *m)
{
	time_t now = time(NULL);

	printf("%-6s %-20s %-6s %-8s %-6s %s\n", "ID", "SESSION", "UID", "PID", "AGE", "COMMAND");
	for (size_t i = 0; i < m->u.tasks.n; i++) {
		const struct proto_task_info *t = &m->u.tasks.tasks[i];
		long age = (long)now - (long)t->started;
		printf("%-6llu %-20s %-6llu %-8llu %-6ld %s\n", (unsigned long long)t->id,
		       t->session, (unsigned long long)t->uid, (unsigned long long)t->pid,
		       age < 0 ? 0 : age, t->command);
	}
	return 0;
}

static int
show_killed(const struct proto_msg *m)
{
	printf("killed %llu task%s\n", (unsigned long long)m->u.killed.count,
	       m->u.killed.count == 1 ? "" : "s");
	return 0;
}

int
client_ps(const char *socket, const char *prog)
{
	struct session s = {.prog = prog, .sock = -1};
	struct proto_msg req = {.type = PROTO_PS};

	return ask(&s, socket, &req, PROTO_TASKS, show_tasks);
}

int
client_kill(const char *socket, const char *session, uint64_t id, bool all, const char *prog)
{
	struct session s = {.prog = prog, .sock = -1};
	struct proto_msg req = {.type = PROTO_KILL,
	                        .u.kill = {.session = session, .id = id, .all = all}};

	return ask(&s, socket, &req, PROTO_KILLED, show_killed);
}

const char *
client_socket_path(const char *given, char *buf, size_t size)
{
	const char *env = getenv("MOAT_RUNNER_SOCKET"), *xdg = getenv("XDG_RUNTIME_DIR");

	if (given && *given)
		return given;
	if (env && *env)
		return env;
	if (xdg && *xdg && (size_t)snprintf(buf, size, "%s/moat/runner.sock", xdg) < size)
		return buf;
	return "/run/moat/runner.sock";
}

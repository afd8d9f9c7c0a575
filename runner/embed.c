/* SPDX-License-Identifier: MIT */
/*
 * The embedded runner process (see embed.h). A ticket crosses the control
 * socket as one SOCK_SEQPACKET message: the ticket string as data, and two
 * descriptors: a sealed memfd holding the exec frame's body (argv and env may
 * run to megabytes, more than a socket message holds) and the runner's end of
 * the stand-in's connection.
 */
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "embed.h"
#include "moat/log.h"
#include "moat/macro.h"
#include "runner.h"
#include "server.h"

struct embedded {
	const char *agent_group; /* the agent's cgroup: what is left in it dies with us */
	struct event_base *base;
	struct runner *r;
	struct event *ev;
	int control;
};

/* Reads one ticket message; false once the supervisor is gone. */
static bool
take_ticket(struct embedded *e)
{
	char ticket[PROTO_TICKET_MAX + 1];
	char cbuf[CMSG_SPACE(2 * sizeof(int))];
	struct iovec iov = {.iov_base = ticket, .iov_len = sizeof(ticket) - 1};
	struct msghdr mh = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
	int fds[2] = {-1, -1};

	ssize_t n = recvmsg(e->control, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR;
	if (n == 0)
		return false;
	ticket[n] = '\0';
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
	    c->cmsg_len == CMSG_LEN(2 * sizeof(int)))
		memcpy(fds, CMSG_DATA(c), sizeof(fds));
	else if (c && c->cmsg_type == SCM_RIGHTS)
		for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++)
			close(((int *)CMSG_DATA(c))[i]);
	if (fds[0] < 0 || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
		log_error("moat-runner: a malformed ticket message");
		if (fds[0] >= 0) {
			close(fds[0]);
			close(fds[1]);
		}
		return true;
	}
	_cleanup_close_ int memfd = fds[0];
	struct stat st;
	if (fstat(memfd, &st) < 0 || st.st_size <= 0 || st.st_size > PROTO_FRAME_MAX) {
		close(fds[1]);
		return true;
	}
	void *body = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, memfd, 0);
	if (body == MAP_FAILED) {
		close(fds[1]);
		return true;
	}
	runner_adopt_ticket(e->r, fds[1], ticket, body, (size_t)st.st_size, EMBED_TICKET_TTL_S);
	munmap(body, (size_t)st.st_size);
	return true;
}

static void
on_control(evutil_socket_t fd, short what, void *arg)
{
	struct embedded *e = arg;

	if (!take_ticket(e)) {
		/* moat is done: its agent's tasks go with it (runner_free() kills and reaps them). */
		event_del(e->ev);
		event_base_loopbreak(e->base);
	}
}

static void
on_term(evutil_socket_t fd, short what, void *arg)
{
	event_base_loopbreak(((struct embedded *)arg)->base);
}

static _Noreturn void
runner_main(const struct policy *p, int control, pid_t parent, const char *agent_group)
{
	struct embedded e = {.control = control, .agent_group = agent_group};
	struct runner_config cfg = {
	    .owner = getuid(), .policy = p, .share_tmp = true, .share_net = true, .warm = 2};

	/*
	 * moat's death is a SIGTERM here, and the control socket's end: tasks and
	 * whatever the agent left running are killed before this process goes.
	 */
	if (prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0) < 0 || getppid() != parent)
		_exit(1);
	task_set_title("moat-runner");
	/* The terminal's signals are for the agent; moat ends this process itself. */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGTSTP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	if (dup2(control, 3) < 0)
		_exit(1);
	e.control = 3;
	close_range(4, ~0U, 0);
	e.base = event_base_new();
	if (!e.base || runner_new(e.base, &cfg, &e.r) < 0)
		_exit(1);
	e.ev = event_new(e.base, e.control, EV_READ | EV_PERSIST, on_control, &e);
	struct event *term = evsignal_new(e.base, SIGTERM, on_term, &e);
	if (!e.ev || !term || event_add(e.ev, NULL) < 0 || event_add(term, NULL) < 0)
		_exit(1);
	event_base_dispatch(e.base);
	event_free(e.ev);
	event_free(term);
	runner_free(e.r);
	event_base_free(e.base);
	/* Normally moat has ended the agent's tree already; if moat was killed, it goes now. */
	if (e.agent_group)
		cg_kill_all(e.agent_group);
	_exit(0);
}

int
runner_embed_start(const struct policy *p, const char *agent_group, struct runner_link *ret)
{
	int sp[2];
	pid_t parent = getpid();

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
		return -errno;
	/* stdio must not be held open by the runner on the caller's behalf: tasks get their own. */
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		int r = -errno;
		close(sp[0]);
		close(sp[1]);
		return r;
	}
	if (pid == 0) {
		close(sp[0]);
		runner_main(p, sp[1], parent, agent_group);
	}
	close(sp[1]);
	ret->pid = pid;
	ret->control = sp[0];
	return 0;
}

int
runner_embed_ticket(struct runner_link *l, const char *ticket, const struct proto_msg *exec,
                    int conn)
{
	struct proto_buf b = {0};
	int memfd = -1, r;

	r = proto_encode(&b, exec);
	if (r < 0)
		goto out;
	memfd = memfd_create("moat-ticket", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (memfd < 0) {
		r = -errno;
		goto out;
	}
	size_t len = b.len - PROTO_HEADER_SIZE;
	for (size_t off = 0; off < len;) {
		ssize_t w = write(memfd, b.p + PROTO_HEADER_SIZE + off, len - off);
		if (w < 0) {
			r = -errno;
			goto out;
		}
		off += (size_t)w;
	}
	fcntl(memfd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
	int fds[2] = {memfd, conn};
	char cbuf[CMSG_SPACE(sizeof(fds))] = {0};
	struct iovec iov = {.iov_base = (void *)ticket, .iov_len = strlen(ticket)};
	struct msghdr mh = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(c), fds, sizeof(fds));
	if (l->control < 0)
		r = -EPIPE;
	else if (sendmsg(l->control, &mh, MSG_NOSIGNAL) < 0)
		r = -errno;
	else
		close(conn);
out:
	if (memfd >= 0)
		close(memfd);
	proto_buf_free(&b);
	return r;
}

void
runner_embed_refuse(int conn, int err)
{
	struct proto_buf b = {0};
	char msg[256];

	snprintf(msg, sizeof(msg), "the runner cannot take the command (%s): it was not run",
	         err == -EPIPE || err == -ECONNRESET ? "it is gone" : strerror(-err));
	struct proto_msg m = {.type = PROTO_ERROR,
	                      .u.error = {.code = PROTO_E_SHUTDOWN, .message = msg}};
	/* A fresh socket's buffer holds one small frame: this write does not block. */
	if (proto_encode(&b, &m) == 0 && write(conn, b.p, b.len) < 0) {
		/* the stand-in then reports a runner that went away */
	}
	proto_buf_free(&b);
	close(conn);
}

void
runner_embed_stop(struct runner_link *l)
{
	if (l->control >= 0)
		close(l->control);
	l->control = -1;
	if (l->pid <= 0)
		return;
	/* It kills its tasks and exits; one that hangs is not waited for long. */
	for (int i = 0; i < 200; i++) {
		if (waitpid(l->pid, NULL, WNOHANG) != 0)
			goto reaped;
		usleep(5000);
	}
	kill(l->pid, SIGKILL);
	waitpid(l->pid, NULL, 0);
reaped:
	l->pid = 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * connect, bind, sendto, sendmsg, sendmmsg. The address is read once and
 * decided; the call is then made by the supervisor on its own copy of the
 * target's socket (pidfd_getfd: the same open file description), with the
 * address it decided on. A unix socket path is resolved from the target's cwd
 * and reached through /proc/self/fd/N, so the socket file decided on is the one
 * connected to.
 *
 * A denied address fails with EACCES. Netlink (which talks to the kernel, not
 * the network) is let through; other families are denied.
 *
 * On a stream socket the kernel ignores a send's address (short of
 * MSG_FASTOPEN), so sends on stream sockets and sends without an address are
 * let through on registers alone; datagram sends with an address are carried
 * out by the supervisor.
 */
#include <fcntl.h>
#include <arpa/inet.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "moat/macro.h"
#include "moat/sys.h"
#include "pool.h"
#include "sv.h"

/* The largest datagram the supervisor carries for a target. */
#define DGRAM_MAX   SV_SCRATCH_SIZE
#define MMSG_MAX    64
#define CONTROL_MAX 4096

struct sock {
	int fd; /* our copy */
	int type, domain, protocol;
	bool blocking;
};

static int
sock_open(struct sv_call *c, int tfd, struct sock *s)
{
	socklen_t len = sizeof(int);

	s->fd = tgt_getfd(c, tfd);
	if (s->fd < 0)
		return s->fd == -ESRCH ? -ESRCH : -EBADF;
	if (getsockopt(s->fd, SOL_SOCKET, SO_TYPE, &s->type, &len) < 0 ||
	    getsockopt(s->fd, SOL_SOCKET, SO_DOMAIN, &s->domain, &len) < 0 ||
	    getsockopt(s->fd, SOL_SOCKET, SO_PROTOCOL, &s->protocol, &len) < 0) {
		close(s->fd);
		s->fd = -1;
		return -ENOTSOCK;
	}
	s->blocking = !(fcntl(s->fd, F_GETFL) & O_NONBLOCK);
	return 0;
}

/*
 * Netlink talks to the kernel, not to the network, and a socket's domain cannot
 * change: calls on it go on in the kernel, under the agent's own credentials. Made
 * by the supervisor they would carry its capabilities (a root supervisor would
 * configure the host's network for an agent that gave CAP_NET_ADMIN up).
 */
static bool
kernel_only(struct sv_call *c, struct sock *s)
{
	if (s->domain != AF_NETLINK)
		return false;
	close(s->fd);
	s->fd = -1;
	c->cont = true;
	return true;
}

static void
describe(struct sv_call *c, const struct sockaddr *sa, socklen_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";

	if (sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *in = (const void *)sa;
		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		snprintf(c->path, sizeof(c->path), "%s:%u", host, ntohs(in->sin_port));
	} else if (sa->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *in6 = (const void *)sa;
		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		snprintf(c->path, sizeof(c->path), "[%s]:%u", host, ntohs(in6->sin6_port));
	}
}

/*
 * Decides an address; for a unix path, resolves it from the target's cwd and
 * rewrites *sa to reach the decided socket file through our fd *ret_file.
 */
static int
decide_addr(struct sv_call *c, enum policy_net_op op, bool disconnect_ok, const struct sock *s,
            struct sockaddr_storage *ss, socklen_t *len, int *ret_file)
{
	struct sockaddr *sa = (struct sockaddr *)ss;
	const struct policy_net_rule *rule = NULL;

	*ret_file = -1;
	c->decided = true;
	c->access = POLICY_READ;
	/*
	 * AF_UNSPEC: connect() dissolves an association, but an IPv4 socket's send and
	 * bind read it as AF_INET (a kernel compatibility rule), so those are decided as
	 * the IPv4 address they will reach.
	 */
	if (sa->sa_family == AF_UNSPEC && (!disconnect_ok || s->domain != AF_INET) &&
	    (s->domain == AF_INET || s->domain == AF_INET6)) {
		if (*len < (socklen_t)sizeof(struct sockaddr_in)) {
			c->allowed = false;
			return -EINVAL;
		}
		sa->sa_family = AF_INET;
	}
	if (sa->sa_family == AF_UNSPEC || sa->sa_family == AF_NETLINK) {
		c->allowed = true;
		snprintf(c->path, sizeof(c->path), "%s", sa->sa_family ? "netlink" : "unspec");
		return 0;
	}
	if (sa->sa_family == AF_UNIX) {
		struct sockaddr_un *un = (struct sockaddr_un *)ss;
		size_t n = *len > offsetof(struct sockaddr_un, sun_path)
		               ? *len - offsetof(struct sockaddr_un, sun_path)
		               : 0;
		if (n > 0 && un->sun_path[0] != '\0') {
			/* A path: find the file (connect) or its directory (bind). */
			struct sv_path p = {.base = -1};
			size_t l = strnlen(un->sun_path, n);
			memcpy(p.s, un->sun_path, l);
			p.s[l] = '\0';
			p.len = l;
			if (p.s[0] != '/') {
				p.base = tgt_dirfd(c, AT_FDCWD);
				if (p.base < 0)
					return p.base;
			}
			char canon[PATH_MAX], name[NAME_MAX + 2];
			int fd = op == POLICY_NET_CONNECT
			             ? sv_path_open(c, &p, 0, 0)
			             : sv_path_parent(c, &p, 0, name, sizeof(name));
			int r = fd < 0 ? fd : sv_fd_path(c, fd, canon, sizeof(canon));
			if (fd < 0) {
				/*
				 * Where the path leads decides, not whether it exists: a denied
				 * socket path answers EACCES either way.
				 */
				int e =
				    sv_path_error(c, &p, fd, POLICY_READ,
				                  op == POLICY_NET_CONNECT ? 0 : SV_RESOLVE_PARENT);
				struct sockaddr_un dec = {.sun_family = AF_UNIX};
				size_t plen = strlen(c->path);
				if (e == fd && plen < sizeof(dec.sun_path)) {
					memcpy(dec.sun_path, c->path, plen + 1);
					if (!policy_net_decide(c->sv->policy, op, s->type,
					                       (struct sockaddr *)&dec, sizeof(dec),
					                       &rule))
						e = -EACCES;
				}
				sv_path_done(&p);
				c->allowed = false;
				return e;
			}
			sv_path_done(&p);
			if (r == 0 && op == POLICY_NET_BIND) {
				char full[PATH_MAX];
				if (policy_path_normalize(canon, name, full, sizeof(full)) < 0)
					r = -ENAMETOOLONG;
				else
					snprintf(canon, sizeof(canon), "%s", full);
			}
			if (r < 0) {
				if (fd >= 0)
					close(fd);
				return r;
			}
			struct sockaddr_un dec = {.sun_family = AF_UNIX};
			snprintf(c->path, sizeof(c->path), "unix:%.*s", (int)sizeof(c->path) - 6,
			         canon);
			c->allowed =
			    strlen(canon) < sizeof(dec.sun_path) &&
			    (memcpy(dec.sun_path, canon, strlen(canon) + 1),
			     policy_net_decide(c->sv->policy, op, s->type, (struct sockaddr *)&dec,
			                       sizeof(dec), &rule));
			if (!c->allowed) {
				close(fd);
				return -EACCES;
			}
			/* Reach the decided file (or directory) through our fd. */
			int k = op == POLICY_NET_CONNECT
			            ? snprintf(un->sun_path, sizeof(un->sun_path),
			                       "/proc/self/fd/%d", fd)
			            : snprintf(un->sun_path, sizeof(un->sun_path),
			                       "/proc/self/fd/%d/%s", fd, name);
			if ((size_t)k >= sizeof(un->sun_path)) {
				close(fd);
				return -ENAMETOOLONG;
			}
			*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + (size_t)k + 1);
			*ret_file = fd;
			return 0;
		}
		snprintf(c->path, sizeof(c->path), "unix:@%.*s", n > 1 ? (int)(n - 1) : 0,
		         un->sun_path + 1);
	} else if (sa->sa_family != AF_INET && sa->sa_family != AF_INET6) {
		snprintf(c->path, sizeof(c->path), "family %d", sa->sa_family);
		c->allowed = false;
		return -EACCES;
	} else {
		describe(c, sa, *len);
	}
	c->allowed = policy_net_decide(c->sv->policy, op, s->type, sa, *len, &rule);
	return c->allowed ? 0 : -EACCES;
}

static int
read_addr(struct sv_call *c, uint64_t addr, uint64_t len, struct sockaddr_storage *ss,
          socklen_t *ret_len)
{
	if (len > sizeof(*ss) || (int64_t)len < 0)
		return -EINVAL;
	if (len < sizeof(sa_family_t))
		return -EINVAL;
	memset(ss, 0, sizeof(*ss));
	int r = tgt_read(c, addr, ss, len);
	*ret_len = (socklen_t)len;
	return r;
}

struct deferred_connect {
	int notify_fd;
	uint64_t id;
	int sock, file;
	struct sockaddr_storage ss;
	socklen_t len;
};

/* A blocking connect waits for the peer: on a worker, which answers the call itself. */
static void
deferred_connect(void *arg)
{
	struct deferred_connect *d = arg;
	int r = connect(d->sock, (struct sockaddr *)&d->ss, d->len) < 0 ? -errno : 0;
	struct seccomp_notif_resp resp = {.id = d->id, .error = r};
	sys_notif_send(d->notify_fd, &resp);
	close(d->sock);
	if (d->file >= 0)
		close(d->file);
	free(d);
}

static int
defer_connect(struct sv_call *c, struct sock *s, int file, const struct sockaddr_storage *ss,
              socklen_t len)
{
	struct deferred_connect *d = malloc(sizeof(*d));

	if (!d)
		return -ENOMEM;
	*d = (struct deferred_connect){c->sv->notify_fd, c->req->id, s->fd, file, *ss, len};
	int r = sv_pool_submit(c->sv->pool, deferred_connect, d);
	if (r < 0) {
		free(d);
		return r;
	}
	s->fd = -1;
	c->replied = true;
	return 0;
}

static void
do_addr_call(struct sv_call *c, enum policy_net_op op)
{
	const __u64 *a = c->req->data.args;
	struct sockaddr_storage ss;
	struct sock s = {.fd = -1};
	socklen_t len;
	int file = -1;

	int r = read_addr(c, a[1], a[2], &ss, &len);
	if (r == 0)
		r = sock_open(c, (int)a[0], &s);
	if (r == 0 && kernel_only(c, &s))
		return;
	if (r == 0)
		r = decide_addr(c, op, op == POLICY_NET_CONNECT, &s, &ss, &len, &file);
	if (r == 0 && op == POLICY_NET_CONNECT && s.blocking && ss.ss_family != AF_UNSPEC) {
		r = defer_connect(c, &s, file, &ss, len);
		if (r == 0)
			return;
	}
	if (r == 0) {
		int k = op == POLICY_NET_CONNECT ? connect(s.fd, (struct sockaddr *)&ss, len)
		                                 : bind(s.fd, (struct sockaddr *)&ss, len);
		r = k < 0 ? -errno : 0;
	}
	if (s.fd >= 0)
		close(s.fd);
	if (file >= 0)
		close(file);
	c->err = -r;
}

void
sv_connect(struct sv_call *c)
{
	do_addr_call(c, POLICY_NET_CONNECT);
}

void
sv_bind(struct sv_call *c)
{
	do_addr_call(c, POLICY_NET_BIND);
}

/* ---- sends ---- */

/*
 * Where the kernel ignores a send's address: unix stream and seqpacket sockets,
 * and TCP (or MPTCP) streams short of MSG_FASTOPEN, which connects. Not SCTP: its
 * one-to-many sockets send to the address given.
 */
static bool
address_ignored(const struct sock *s, uint64_t flags)
{
	if (s->domain == AF_UNIX)
		return s->type == SOCK_STREAM || s->type == SOCK_SEQPACKET;
	return (s->domain == AF_INET || s->domain == AF_INET6) && s->type == SOCK_STREAM &&
	       (s->protocol == IPPROTO_TCP || s->protocol == IPPROTO_MPTCP) &&
	       !(flags & MSG_FASTOPEN);
}

/* A datagram send that would block, carried out on a worker with copies of everything. */
struct deferred_send {
	int notify_fd;
	uint64_t id;
	int sock, file;
	struct sockaddr_storage ss;
	socklen_t len;
	bool has_name;
	int flags;
	void *data;
	size_t n;
	void *control;
	size_t controllen;
	int fds[CONTROL_MAX / sizeof(int)];
	int n_fds;
};

static void
deferred_send(void *arg)
{
	struct deferred_send *d = arg;
	struct iovec iov = {d->data, d->n};
	struct msghdr m = {
	    .msg_name = d->has_name ? &d->ss : NULL,
	    .msg_namelen = d->has_name ? d->len : 0,
	    .msg_iov = &iov,
	    .msg_iovlen = 1,
	    .msg_control = d->control,
	    .msg_controllen = d->controllen,
	};
	ssize_t n = sendmsg(d->sock, &m, d->flags | MSG_NOSIGNAL);
	struct seccomp_notif_resp resp = {
	    .id = d->id, .error = n < 0 ? -errno : 0, .val = n < 0 ? 0 : n};
	sys_notif_send(d->notify_fd, &resp);
	for (int i = 0; i < d->n_fds; i++)
		close(d->fds[i]);
	close(d->sock);
	if (d->file >= 0)
		close(d->file);
	free(d->data);
	free(d->control);
	free(d);
}

/*
 * Sends m on our copy of the socket without blocking a notification thread:
 * MSG_DONTWAIT first, and if a blocking socket would block, the send moves to a
 * worker (which owns sock, file and fds from then on). Returns bytes sent, -errno,
 * or 0 with c->replied set.
 */
static ssize_t
send_now_or_later(struct sv_call *c, const struct sock *s, int file, struct msghdr *m, int flags,
                  const int *fds, int n_fds, bool *ret_moved)
{
	*ret_moved = false;
	ssize_t n = sendmsg(s->fd, m, flags | MSG_NOSIGNAL | (s->blocking ? MSG_DONTWAIT : 0));
	if (n >= 0 || errno != EAGAIN || !s->blocking || (flags & MSG_DONTWAIT))
		return n < 0 ? -errno : n;
	struct deferred_send *d = calloc(1, sizeof(*d));
	size_t len = m->msg_iov->iov_len;
	if (!d || !(d->data = malloc(len ? len : 1)) ||
	    (m->msg_controllen && !(d->control = malloc(m->msg_controllen)))) {
		if (d)
			free(d->data);
		free(d);
		return -ENOMEM;
	}
	*d = (struct deferred_send){
	    .notify_fd = c->sv->notify_fd,
	    .id = c->req->id,
	    .sock = s->fd,
	    .file = file,
	    .has_name = m->msg_name != NULL,
	    .flags = flags,
	    .data = d->data,
	    .n = len,
	    .control = d->control,
	    .controllen = m->msg_controllen,
	    .n_fds = n_fds,
	};
	if (m->msg_name) {
		memcpy(&d->ss, m->msg_name, m->msg_namelen);
		d->len = m->msg_namelen;
	}
	memcpy(d->data, m->msg_iov->iov_base, len);
	if (m->msg_controllen)
		memcpy(d->control, m->msg_control, m->msg_controllen);
	if (n_fds > 0)
		memcpy(d->fds, fds, (size_t)n_fds * sizeof(int));
	if (sv_pool_submit(c->sv->pool, deferred_send, d) < 0) {
		free(d->data);
		free(d->control);
		free(d);
		return -EAGAIN;
	}
	c->replied = true;
	*ret_moved = true;
	return 0;
}

void
sv_sendto(struct sv_call *c)
{
	const __u64 *a = c->req->data.args;
	struct sockaddr_storage ss;
	struct sock s = {.fd = -1};
	socklen_t len;
	int file = -1;
	char *buf = c->scratch;

	/* No address: the socket's own peer, decided at connect. Registers only. */
	if (a[4] == 0) {
		c->cont = true;
		return;
	}
	int r = sock_open(c, (int)a[0], &s);
	if (r == 0 && (kernel_only(c, &s) || address_ignored(&s, a[3]))) {
		if (s.fd >= 0)
			close(s.fd);
		c->cont = true;
		return;
	}
	if (r == 0 && a[2] > DGRAM_MAX)
		r = -EMSGSIZE;
	if (r == 0)
		r = read_addr(c, a[4], a[5], &ss, &len);
	if (r == 0)
		r = decide_addr(c, POLICY_NET_CONNECT, false, &s, &ss, &len, &file);
	if (r == 0)
		r = tgt_read(c, a[1], buf, a[2]);
	if (r == 0) {
		struct iovec iov = {buf, a[2]};
		struct msghdr m = {
		    .msg_name = &ss, .msg_namelen = len, .msg_iov = &iov, .msg_iovlen = 1};
		bool moved;
		ssize_t n = send_now_or_later(c, &s, file, &m, (int)a[3], NULL, 0, &moved);
		if (moved)
			return;
		r = n < 0 ? (int)n : 0;
		c->val = n;
	}
	if (s.fd >= 0)
		close(s.fd);
	if (file >= 0)
		close(file);
	c->err = -r;
}

/* One message of a datagram sendmsg, carried out by us. Returns bytes sent or -errno. */
static ssize_t
send_one(struct sv_call *c, const struct sock *s, uint64_t msg_addr, int flags, bool deferrable,
         bool *ret_moved)
{
	struct msghdr m;
	struct sockaddr_storage ss;
	struct iovec tiov[64];
	char *data = c->scratch;
	char control[CONTROL_MAX];
	socklen_t len = 0;
	size_t total = 0;
	int file = -1, fds[CONTROL_MAX / sizeof(int)], n_fds = 0;

	*ret_moved = false;
	int r = tgt_read(c, msg_addr, &m, sizeof(m));
	if (r < 0)
		return r;
	if (m.msg_iovlen > ARRAY_SIZE(tiov) || m.msg_controllen > sizeof(control))
		return -EMSGSIZE;
	if (m.msg_name) {
		r = read_addr(c, (uint64_t)(uintptr_t)m.msg_name, m.msg_namelen, &ss, &len);
		if (r == 0)
			r = decide_addr(c, POLICY_NET_CONNECT, false, s, &ss, &len, &file);
		if (r < 0)
			return r;
	}
	if (m.msg_iovlen)
		r = tgt_read(c, (uint64_t)(uintptr_t)m.msg_iov, tiov, m.msg_iovlen * sizeof(*tiov));
	for (size_t i = 0; r == 0 && i < m.msg_iovlen; i++) {
		if (tiov[i].iov_len > DGRAM_MAX - total) {
			r = -EMSGSIZE;
			break;
		}
		r = tgt_read(c, (uint64_t)(uintptr_t)tiov[i].iov_base, data + total,
		             tiov[i].iov_len);
		total += tiov[i].iov_len;
	}
	if (r == 0 && m.msg_controllen)
		r = tgt_read(c, (uint64_t)(uintptr_t)m.msg_control, control, m.msg_controllen);
	/* Passed fds are the target's numbers: send our copies of the same files. */
	struct msghdr mine = {
	    .msg_name = m.msg_name ? &ss : NULL,
	    .msg_namelen = m.msg_name ? len : 0,
	    .msg_iov = &(struct iovec){data, total},
	    .msg_iovlen = 1,
	    .msg_control = m.msg_controllen ? control : NULL,
	    .msg_controllen = m.msg_controllen,
	};
	for (struct cmsghdr *cm = m.msg_controllen ? CMSG_FIRSTHDR(&mine) : NULL; r == 0 && cm;
	     cm = CMSG_NXTHDR(&mine, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		int *p = (int *)CMSG_DATA(cm);
		size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k && r == 0; i++) {
			int ours = tgt_getfd(c, p[i]);
			if (ours < 0)
				r = -EBADF;
			else
				p[i] = fds[n_fds++] = ours;
		}
	}
	ssize_t n = r;
	if (r == 0 && deferrable) {
		bool moved;
		n = send_now_or_later(c, s, file, &mine, flags, fds, n_fds, &moved);
		if (moved) {
			*ret_moved = true;
			return 0; /* the worker owns the fds now */
		}
	} else if (r == 0) {
		n = sendmsg(s->fd, &mine, flags | MSG_NOSIGNAL);
		if (n < 0)
			n = -errno;
	}
	for (int i = 0; i < n_fds; i++)
		close(fds[i]);
	if (file >= 0)
		close(file);
	return n;
}

void
sv_sendmsg(struct sv_call *c)
{
	const __u64 *a = c->req->data.args;
	struct sock s = {.fd = -1};

	int r = sock_open(c, (int)a[0], &s);
	if (r == 0 && (kernel_only(c, &s) || address_ignored(&s, a[2]))) {
		if (s.fd >= 0)
			close(s.fd);
		c->cont = true;
		return;
	}
	bool moved = false;
	ssize_t n = r < 0 ? r : send_one(c, &s, a[1], (int)a[2], true, &moved);
	if (moved)
		return; /* the worker answers, and owns our copy of the socket */
	if (s.fd >= 0)
		close(s.fd);
	if (n < 0)
		c->err = (int)-n;
	else
		c->val = n;
}

void
sv_sendmmsg(struct sv_call *c)
{
	const __u64 *a = c->req->data.args;
	struct sock s = {.fd = -1};
	unsigned vlen = (unsigned)a[2] > MMSG_MAX ? MMSG_MAX : (unsigned)a[2];
	unsigned sent = 0;

	int r = sock_open(c, (int)a[0], &s);
	if (r == 0 && (kernel_only(c, &s) || address_ignored(&s, a[3]))) {
		if (s.fd >= 0)
			close(s.fd);
		c->cont = true;
		return;
	}
	for (; r == 0 && sent < vlen; sent++) {
		uint64_t at = a[1] + (uint64_t)sent * sizeof(struct mmsghdr);
		bool moved;
		ssize_t n =
		    send_one(c, &s, at, (int)a[3] | (s.blocking ? MSG_DONTWAIT : 0), false, &moved);
		if (n < 0) {
			r = (int)n;
			break;
		}
		unsigned len = (unsigned)n;
		r = tgt_write(c, at + offsetof(struct mmsghdr, msg_len), &len, sizeof(len));
	}
	if (s.fd >= 0)
		close(s.fd);
	/* As the kernel: an error after the first message is reported as a short count. */
	if (sent > 0) {
		c->val = sent;
		c->err = 0;
	} else {
		c->err = -r;
	}
}

/*
 * listen() on a socket nobody bound picks a port (or an abstract unix name) by
 * itself: that is a bind, decided by the bind rules. A socket already bound went
 * through bind(), which was decided; its listen goes on.
 */
void
sv_listen(struct sv_call *c)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	struct sock s = {.fd = -1};

	int r = sock_open(c, (int)c->req->data.args[0], &s);
	if (r == 0 && getsockname(s.fd, (struct sockaddr *)&ss, &len) < 0)
		r = -errno;
	if (r == 0) {
		bool unbound =
		    (ss.ss_family == AF_INET && ((struct sockaddr_in *)&ss)->sin_port == 0) ||
		    (ss.ss_family == AF_INET6 && ((struct sockaddr_in6 *)&ss)->sin6_port == 0) ||
		    (ss.ss_family == AF_UNIX && len <= sizeof(sa_family_t));
		if (unbound) {
			int file = -1;
			r = decide_addr(c, POLICY_NET_BIND, false, &s, &ss, &len, &file);
			if (file >= 0)
				close(file);
		}
	}
	if (s.fd >= 0)
		close(s.fd);
	if (r == 0)
		c->cont = true;
	else
		c->err = -r;
}

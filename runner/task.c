/* SPDX-License-Identifier: MIT */
/*
 * Starting a task. The runner clones an init into new pid and mount namespaces
 * (and user and network namespaces when asked). The init makes the task's view
 * of the file system, allocates the pty in a devpts of its own, forks the
 * command and stays as pid 1: it reaps orphans, forwards the signals the
 * runner sends it (a pid 1 drops signals it has no handler for, so the command
 * must not be pid 1), and reports the exec and the exit over a SOCK_SEQPACKET
 * control socket. When the command exits, init exits and the kernel kills
 * whatever is left in the namespace. When the runner dies, PDEATHSIG kills init.
 *
 * Everything the child needs is computed by the runner before the clone: the
 * child only makes system calls.
 */
#include <cap-ng.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <linux/sched.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "moat/macro.h"
#include "moat/proto.h"
#include "moat/sys.h"
#include "runner.h"

extern char **environ;

/* The signals init passes on to the command; everything else is left alone. */
static const int forwarded[] = {SIGHUP,  SIGINT,   SIGQUIT, SIGTERM, SIGUSR1,
                                SIGUSR2, SIGWINCH, SIGCONT, SIGTSTP, SIGALRM};

/* ---- the child side: only system calls from here to the exec ---- */

struct setup {
	const struct task_spec *s;
	int control;
	char *err;
	size_t errsize;
};

static int
fail(struct setup *st, int r, const char *what, const char *path)
{
	snprintf(st->err, st->errsize, "%s%s%s: %s", what, path ? " " : "", path ? path : "",
	         strerror(-r));
	return r;
}

#define TRY(st, call, what, path)                                                                  \
	do {                                                                                       \
		if ((call) < 0)                                                                    \
			return fail(st, -errno, what, path);                                       \
	} while (0)

static int
set_readonly(const char *path, unsigned flags)
{
	struct mount_attr a = {.attr_set = MOUNT_ATTR_RDONLY};
	return mount_setattr(AT_FDCWD, path, flags, &a, sizeof(a));
}

/* An empty directory (read-only once what goes inside is mounted), or /dev/null, over path. */
static int
mask(struct setup *st, enum view_op op, const char *path)
{
	struct stat sb;

	if (lstat(path, &sb) < 0 && errno == ENOENT)
		return 0; /* not in the task's view (below its own /tmp, say): nothing to hide */
	if (op == VIEW_MASK_DIR) {
		TRY(st,
		    mount("moat-mask", path, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		          "size=64k,mode=0755"),
		    "mask", path);
		return 0;
	}
	TRY(st, mount("/dev/null", path, NULL, MS_BIND, NULL), "mask", path);
	TRY(st, set_readonly(path, 0), "mask read-only", path);
	return 0;
}

static int
make_point(const char *path, bool dir)
{
	char p[PATH_MAX];
	size_t n = strlen(path);

	if (n >= sizeof(p))
		return -ENAMETOOLONG;
	memcpy(p, path, n + 1);
	for (char *s = strchr(p + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		if (mkdir(p, 0755) < 0 && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	if (dir)
		return mkdir(p, 0755) < 0 && errno != EEXIST ? -errno : 0;
	int fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return errno == EEXIST || errno == EROFS || errno == EISDIR ? 0 : -errno;
	close(fd);
	return 0;
}

static int
mount_tmpfs(struct setup *st, const char *root, const char *dir, unsigned long flags)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s%s", root, dir);
	TRY(st, make_point(p, true), "mkdir", p);
	TRY(st, mount("moat-tmpfs", p, "tmpfs", flags, "mode=1777"), "mount tmpfs", p);
	return 0;
}

/* The task's own /proc and ptys. */
static int
mount_fresh(struct setup *st, const char *root)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/proc", root);
	TRY(st, make_point(p, true), "mkdir", p);
	TRY(st, mount("proc", p, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL), "mount proc", p);
	snprintf(p, sizeof(p), "%s/dev/pts", root);
	TRY(st,
	    mount("devpts", p, "devpts", MS_NOSUID | MS_NOEXEC,
	          "newinstance,ptmxmode=0666,mode=0620"),
	    "mount devpts", p);
	return mount_tmpfs(st, root, "/dev/shm", MS_NOSUID | MS_NODEV);
}

/* Clones of the host objects the view binds, taken before anything is changed. */
static int
clone_binds(struct setup *st, const struct task_view *v, int *fds, bool *isdir)
{
	for (size_t i = 0; i < v->n; i++) {
		struct stat sb;
		enum view_op op = v->v[i].op;

		fds[i] = -1;
		isdir[i] = true;
		if (op != VIEW_BIND_RW && op != VIEW_BIND_RO)
			continue;
		/* A clone keeps the host's own flags: a read-only host mount stays so. */
		fds[i] = open_tree(AT_FDCWD, v->v[i].src,
		                   OPEN_TREE_CLONE | AT_RECURSIVE | OPEN_TREE_CLOEXEC);
		if (fds[i] < 0 || fstat(fds[i], &sb) < 0)
			return fail(st, -errno, "bind", v->v[i].src);
		isdir[i] = S_ISDIR(sb.st_mode);
	}
	return 0;
}

/* Binds and masks, in the view's order (a parent before what goes inside it). */
static int
apply_view(struct setup *st, const char *root, const struct task_view *v, int *fds,
           const bool *isdir)
{
	char p[PATH_MAX];

	for (size_t i = 0; i < v->n; i++) {
		const struct view_entry *e = &v->v[i];

		snprintf(p, sizeof(p), "%s%s", root, e->dst);
		if (fds[i] >= 0) {
			TRY(st, make_point(p, isdir[i]), "mkdir", p);
			TRY(st, move_mount(fds[i], "", AT_FDCWD, p, MOVE_MOUNT_F_EMPTY_PATH),
			    "bind", e->src);
			close(fds[i]);
			fds[i] = -1;
			if (e->op == VIEW_BIND_RO)
				TRY(st, set_readonly(p, AT_RECURSIVE), "make read-only", p);
		} else if (e->op == VIEW_MASK_DIR || e->op == VIEW_MASK_FILE) {
			int r = mask(st, e->op, p);
			if (r < 0)
				return r;
		}
	}
	for (size_t i = 0; i < v->n; i++)
		if (v->v[i].op == VIEW_MASK_DIR) {
			snprintf(p, sizeof(p), "%s%s", root, v->v[i].dst);
			if (set_readonly(p, 0) < 0 && errno != ENOENT)
				return fail(st, -errno, "make read-only", p);
		}
	return 0;
}

/* The host view, read-only; the rw binds writable again; masks over secrets. */
static int
setup_mask(struct setup *st, const struct task_view *v)
{
	int fds[VIEW_MAX];
	bool isdir[VIEW_MAX];
	int r = clone_binds(st, v, fds, isdir);

	if (r < 0)
		return r;
	TRY(st, set_readonly("/", AT_RECURSIVE), "make read-only", "/");
	r = v->share_tmp ? 0 : mount_tmpfs(st, "", "/tmp", MS_NOSUID | MS_NODEV);
	if (r == 0)
		r = apply_view(st, "", v, fds, isdir);
	return r < 0 ? r : mount_fresh(st, "");
}

static const char *const dev_nodes[] = {"null", "zero", "full", "random", "urandom", "tty"};

/* A /dev of its own: the usual nodes bound from the host, and the links. */
static int
setup_dev(struct setup *st, const char *root)
{
	char p[PATH_MAX], h[64];

	snprintf(p, sizeof(p), "%s/dev", root);
	TRY(st, make_point(p, true), "mkdir", p);
	TRY(st, mount("moat-dev", p, "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755"), "mount", p);
	for (size_t i = 0; i < ARRAY_SIZE(dev_nodes); i++) {
		snprintf(p, sizeof(p), "%s/dev/%s", root, dev_nodes[i]);
		snprintf(h, sizeof(h), "/dev/%s", dev_nodes[i]);
		TRY(st, make_point(p, false), "create", p);
		TRY(st, mount(h, p, NULL, MS_BIND, NULL), "bind", h);
	}
	static const char *const links[][2] = {
	    {"pts/ptmx", "ptmx"},          {"/proc/self/fd", "fd"},
	    {"/proc/self/fd/0", "stdin"},  {"/proc/self/fd/1", "stdout"},
	    {"/proc/self/fd/2", "stderr"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(links); i++) {
		snprintf(p, sizeof(p), "%s/dev/%s", root, links[i][1]);
		TRY(st, symlink(links[i][0], p), "symlink", p);
	}
	snprintf(p, sizeof(p), "%s/dev/pts", root);
	TRY(st, make_point(p, true), "mkdir", p);
	return 0;
}

/* A fresh root holding only the surface. It is built on /tmp, then pivoted to. */
static int
setup_surface(struct setup *st, const struct task_view *v)
{
	static const char root[] = "/tmp";
	int fds[VIEW_MAX];
	bool isdir[VIEW_MAX];
	int r = clone_binds(st, v, fds, isdir);

	if (r < 0)
		return r;
	TRY(st, mount("moat-root", root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755"), "mount",
	    root);
	r = v->share_tmp ? 0 : mount_tmpfs(st, root, "/tmp", MS_NOSUID | MS_NODEV);
	if (r == 0)
		r = apply_view(st, root, v, fds, isdir);
	if (r == 0)
		r = setup_dev(st, root);
	if (r == 0)
		r = mount_fresh(st, root);
	if (r < 0)
		return r;
	TRY(st, chdir(root), "chdir", root);
	TRY(st, syscall(SYS_pivot_root, ".", "."), "pivot_root", root);
	TRY(st, umount2(".", MNT_DETACH), "detach the old root", NULL);
	TRY(st, chdir("/"), "chdir", "/");
	TRY(st, set_readonly("/", 0), "make read-only", "/");
	return 0;
}

/* Brings up lo in the current network namespace. 0 or -errno. */
static int
lo_up(void)
{
	struct ifreq ifr = {.ifr_name = "lo", .ifr_flags = IFF_UP | IFF_RUNNING};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	int r = ioctl(fd, SIOCSIFFLAGS, &ifr) < 0 ? -errno : 0;
	close(fd);
	return r;
}

static int
loopback_up(struct setup *st)
{
	int r = lo_up();
	return r < 0 ? fail(st, r, "bring up", "lo") : 0;
}

int
task_netns_new(void)
{
	int self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	int r = self < 0 ? -errno : 0;

	if (r == 0 && unshare(CLONE_NEWNET) < 0)
		r = -errno;
	if (r < 0) {
		if (self >= 0)
			close(self);
		return r;
	}
	int ns = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (ns < 0)
		r = -errno;
	else
		r = lo_up();
	/* Back where this process was: only its tasks go in there. */
	if (setns(self, CLONE_NEWNET) < 0)
		abort(); /* a process stranded in the wrong namespace must not go on */
	close(self);
	if (r < 0) {
		if (ns >= 0)
			close(ns);
		return r;
	}
	return ns;
}

/* len bytes with n descriptors (at most 4) attached. */
static int
send_msg_fds_raw(int sock, const void *buf, size_t len, const int *fds, size_t n)
{
	char cbuf[CMSG_SPACE(4 * sizeof(int))] = {0};
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};

	if (n > 4)
		return -EINVAL;
	if (n) {
		mh.msg_control = cbuf;
		mh.msg_controllen = CMSG_SPACE(n * sizeof(int));
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(n * sizeof(int));
		memcpy(CMSG_DATA(c), fds, n * sizeof(int));
	}
	return sendmsg(sock, &mh, MSG_NOSIGNAL) < 0 ? -errno : 0;
}

/* A message with n descriptors (at most 4) attached. */
static int
send_msg_fds(int control, enum task_event ev, int value, const char *text, const int *fds, size_t n)
{
	struct task_msg m = {.event = ev, .value = value};

	if (text)
		snprintf(m.text, sizeof(m.text), "%s", text);
	return send_msg_fds_raw(control, &m, sizeof(m), fds, n);
}

static int
send_msg(int control, enum task_event ev, int value, const char *text, int fd)
{
	return send_msg_fds(control, ev, value, text, &fd, fd >= 0);
}

ssize_t
task_recv_fds(int sock, void *buf, size_t len, int flags, int *fds, size_t max, size_t *nfds,
              bool *dropped)
{
	char cbuf[CMSG_SPACE(4 * sizeof(int))];
	struct iovec iov = {.iov_base = buf, .iov_len = len};
	struct msghdr mh = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
	ssize_t n;

	*nfds = 0;
	*dropped = false;
	do
		n = recvmsg(sock, &mh, flags | MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	for (struct cmsghdr *c = n >= 0 ? CMSG_FIRSTHDR(&mh) : NULL; c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (*nfds < max) {
				fds[(*nfds)++] = fd;
			} else {
				close(fd);
				*dropped = true;
			}
		}
	}
	if (n >= 0 && (mh.msg_flags & MSG_CTRUNC))
		*dropped = true;
	return n;
}

/* A blocking task_recv_fds() for the init and the command: extras are only closed. */
static ssize_t
recv_fds(int sock, void *buf, size_t len, int *fds, size_t max, size_t *nfds)
{
	bool dropped;

	return task_recv_fds(sock, buf, len, 0, fds, max, nfds, &dropped);
}

/*
 * The client's pipes that came with a message (bit N of mask: stdio N), moved
 * above 2 for exec_command()'s dup2()s; the received ones are closed. false
 * when they do not match the mask.
 */
static bool
take_client_stdio(unsigned mask, const int *fds, size_t nfds, int stdio[3])
{
	size_t i = 0;
	bool ok = true;

	for (int k = 0; k < 3; k++) {
		stdio[k] = -1;
		if (!(mask & 1u << k))
			continue;
		if (i < nfds && (stdio[k] = fcntl(fds[i], F_DUPFD_CLOEXEC, 3)) < 0)
			ok = false;
		ok = ok && i < nfds;
		i++;
	}
	for (size_t j = 0; j < nfds; j++)
		close(fds[j]);
	return ok && i == nfds;
}

/* Capabilities, ids, limits, no_new_privs, the filter: the command's last steps. */
static int
drop_privileges(const struct task_spec *s)
{
	struct rlimit rl;

	if (s->pids && !s->pids_by_cg) {
		rl = (struct rlimit){s->pids, s->pids};
		if (setrlimit(RLIMIT_NPROC, &rl) < 0)
			return -errno;
	}
	if (s->memory_mb && !s->memory_by_cg) {
		rl.rlim_cur = rl.rlim_max = (rlim_t)s->memory_mb << 20;
		if (setrlimit(RLIMIT_AS, &rl) < 0)
			return -errno;
	}
	/* The bounding set first: emptying it needs CAP_SETPCAP, which goes next. */
	capng_clear(CAPNG_SELECT_BOTH);
	if (capng_apply(CAPNG_SELECT_BOUNDS) < 0)
		return -EPERM;
	if (s->set_ids) {
		if (setgroups(s->n_groups, s->groups) < 0 ||
		    setresgid(s->gid, s->gid, s->gid) < 0 || setresuid(s->uid, s->uid, s->uid) < 0)
			return -errno;
	}
	if (capng_apply(CAPNG_SELECT_CAPS) < 0)
		return -EPERM;
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
		return -errno;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	return 0;
}

static _Noreturn void
exec_command(const struct task_spec *s, int stdio[3], int tty, int report, int commit)
{
	sigset_t none;
	int r, stage = TASK_STAGE_SETUP;
	unsigned closed = s->stdio_closed;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (size_t i = 0; i < ARRAY_SIZE(forwarded); i++)
		signal(forwarded[i], SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	/* What the command would have inherited across its exec. */
	for (int sig = 1; sig <= 64; sig++)
		if ((s->sigign >> (sig - 1) & 1) && sig != SIGKILL && sig != SIGSTOP)
			signal(sig, SIG_IGN);
	umask(s->umask);
	setsid();
	if (tty >= 0 && ioctl(tty, TIOCSCTTY, 0) < 0)
		goto fail;
	for (int i = 0; i < 3; i++)
		if (dup2(stdio[i], i) < 0)
			goto fail;
	stage = TASK_STAGE_CWD;
	if (chdir(s->cwd) < 0)
		goto fail;
	/* Held: everything is ready, the exec waits for the runner's word. */
	if (commit >= 0) {
		char mask;
		int fds[3], mine[3];
		size_t nfds;
		if (recv_fds(commit, &mask, 1, fds, ARRAY_SIZE(fds), &nfds) != 1 ||
		    !take_client_stdio((unsigned char)mask & 7, fds, nfds, mine))
			_exit(127); /* dropped unused: nobody reads the report */
		close(commit);
		/* The client's own pipes in place of the task's, its closed ones closed. */
		for (int i = 0; i < 3; i++)
			if (mine[i] >= 0 && (dup2(mine[i], i) < 0 || close(mine[i]) < 0))
				goto fail;
		closed |= (unsigned char)mask >> 3 & 7;
	}
	for (int i = 0; i < 3; i++)
		if (closed & 1u << i)
			close(i);
	stage = TASK_STAGE_EXEC;
	environ = (char **)s->envp;
	if (s->path)
		execve(s->path, s->argv, s->envp);
	else
		execvp(s->argv[0], s->argv);
fail:
	r = errno | stage << 16;
	if (write(report, &r, sizeof(r)) < 0) {
		/* nothing more to say */
	}
	_exit(127);
}

static void
init_loop(pid_t cmd, int control)
{
	sigset_t set;
	siginfo_t si;

	sigemptyset(&set);
	for (size_t i = 0; i < ARRAY_SIZE(forwarded); i++)
		sigaddset(&set, forwarded[i]);
	sigaddset(&set, SIGCHLD);
	for (;;) {
		if (sigwaitinfo(&set, &si) < 0)
			continue;
		if (si.si_signo != SIGCHLD) {
			kill(cmd, si.si_signo);
			continue;
		}
		int status;
		pid_t p;
		while ((p = waitpid(-1, &status, WNOHANG)) > 0)
			if (p == cmd) {
				send_msg(control, TASK_EXITED, status, NULL, -1);
				_exit(0);
			}
	}
}

/* Drops every descriptor the runner had (other tasks' pipes, clients) but keep. */
static void
close_all_but(const int *keep, size_t n)
{
	unsigned lo = 3;

	for (;;) {
		unsigned next = ~0U;
		for (size_t i = 0; i < n; i++)
			if (keep[i] >= (int)lo && (unsigned)keep[i] < next)
				next = (unsigned)keep[i];
		if (next > lo)
			close_range(lo, next - 1, 0);
		if (next == ~0U)
			return;
		lo = next + 1;
	}
}

void
task_set_title(const char *name)
{
	char buf[1024];
	unsigned long start = 0, end = 0;

	prctl(PR_SET_NAME, name, 0, 0, 0);
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	/* After the comm (which may hold anything), fields 3, 4, ...: arg_start is 48, arg_end 49. */
	char *p = strrchr(buf, ')');
	for (int field = 2; p && field < 48; field++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%lu %lu", &start, &end) != 2 || end <= start)
		return;
	size_t len = end - start, want = strlen(name) + 1;
	if (want > len)
		return;
	char *args = (char *)start;
	memset(args, 0, len);
	memcpy(args, name, want);
	/*
	 * A last byte that is not NUL makes the kernel read the title up to the first
	 * NUL (as for setproctitle(3)), not the whole old length.
	 */
	if (len > want)
		args[len - 1] = ' ';
}

/*
 * Waits for the runner's go: the command (an exec frame in a memfd) and what
 * goes with it. Fills s (argv, env and strings point into *msg). false when the
 * runner let the task go unused (a warm task it discards) or sent nonsense.
 */
static bool
wait_go(int control, struct task_spec *s, struct proto_msg *msg)
{
	struct task_msg m;
	char err[128];
	struct stat st;
	int fds[4];
	size_t nfds;

	ssize_t n = recv_fds(control, &m, sizeof(m), fds, ARRAY_SIZE(fds), &nfds);
	int fd = nfds ? fds[0] : -1;
	/* After the memfd, the client's pipes (m.value >> 1 says which). */
	s->stdio_mask = n == sizeof(m) ? (unsigned)m.value >> 1 & 7 : 0;
	s->stdio_closed = n == sizeof(m) ? (unsigned)m.value >> 4 & 7 : 0;
	bool ok = take_client_stdio(s->stdio_mask, fds + (nfds > 0), nfds - (nfds > 0), s->stdio);
	if (n != sizeof(m) || m.event != TASK_GO || !ok || fd < 0 || fstat(fd, &st) < 0 ||
	    st.st_size <= 0 || st.st_size > PROTO_FRAME_MAX) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	void *body = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (body == MAP_FAILED)
		return false;
	int r = proto_decode(body, (size_t)st.st_size, msg, err, sizeof(err));
	munmap(body, (size_t)st.st_size);
	if (r < 0 || msg->type != PROTO_EXEC)
		return false;
	s->argv = (char *const *)msg->u.exec.argv;
	s->envp = (char *const *)msg->u.exec.env;
	s->path = msg->u.exec.path;
	s->cwd = msg->u.exec.cwd;
	s->tty = msg->u.exec.tty;
	s->rows = msg->u.exec.rows;
	s->cols = msg->u.exec.cols;
	s->umask = msg->u.exec.has_umask ? msg->u.exec.umask : 022;
	s->sigign = msg->u.exec.sigign;
	s->hold = m.value & 1;
	return true;
}

/*
 * A held command goes on at TASK_COMMIT, which may bring the client's pipes
 * (value: which); the command, waiting in exec_command(), gets them on the
 * commit socket. false when the runner drops it instead.
 */
static bool
wait_commit(int control, int commit)
{
	struct task_msg m;
	int fds[3];
	size_t nfds;

	ssize_t n = recv_fds(control, &m, sizeof(m), fds, ARRAY_SIZE(fds), &nfds);
	bool ok = n == sizeof(m) && m.event == TASK_COMMIT &&
	          (size_t)__builtin_popcount((unsigned)m.value & 7) == nfds;
	char mask = ok ? (char)(m.value & 077) : 0;
	if (ok && send_msg_fds_raw(commit, &mask, 1, fds, nfds) < 0)
		ok = false;
	for (size_t i = 0; i < nfds; i++)
		close(fds[i]);
	return ok;
}

static _Noreturn void
init_main(const struct task_spec *base, int control, int stdio[3])
{
	char err[sizeof(((struct task_msg *)0)->text)] = "";
	struct task_spec spec = *base, *s = &spec;
	struct setup st = {.s = s, .control = control, .err = err, .errsize = sizeof(err)};
	struct proto_msg msg;
	sigset_t set;
	int r, pty = -1, tty = -1, report[2], commit[2] = {-1, -1};

	/* (getppid() is 0 in a new pid namespace: a runner that died first shows as EPIPE below.) */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		_exit(127);
	/* Not the runner's command line: the task's own init, by name. */
	task_set_title("moat-init");
	int keep[] = {control, stdio[0], stdio[1], stdio[2], s->netns ? s->netns_fd : -1};
	close_all_but(keep, ARRAY_SIZE(keep));
	if (s->userns) {
		/* The runner writes our id maps, then says go. */
		char go;
		if (read(control, &go, 1) != 1)
			_exit(127);
	}
	/*
	 * Prepared ahead of need: the set-up (a mount namespace, a view, a filter)
	 * runs at the lowest priority, behind the commands running now. The runner
	 * takes a task that is not ready yet back to normal. Not in a user
	 * namespace: there the priority could not be raised again.
	 */
	bool niced = s->background && !s->userns && setpriority(PRIO_PROCESS, 0, 19) == 0;
	/* Everything forwarded is held until init_loop() waits for it. */
	sigemptyset(&set);
	for (size_t i = 0; i < ARRAY_SIZE(forwarded); i++)
		sigaddset(&set, forwarded[i]);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, NULL);

	r = mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0
	        ? fail(&st, -errno, "make private", "/")
	        : 0;
	if (r == 0)
		r = s->view->surface ? setup_surface(&st, s->view) : setup_mask(&st, s->view);
	if (r == 0 && s->netns && s->netns_fd >= 0) {
		if (setns(s->netns_fd, CLONE_NEWNET) < 0)
			r = fail(&st, -errno, "join the network namespace", NULL);
		close(s->netns_fd);
	} else if (r == 0 && s->netns && s->netns_fd < 0)
		r = loopback_up(&st);
	/*
	 * The mounts are made: the init needs no privilege any more. It gives them up
	 * and takes the tasks' filter itself, once, for every process it starts.
	 */
	if (r == 0 && niced && setpriority(PRIO_PROCESS, 0, 0) < 0)
		r = fail(&st, -errno, "restore the priority", NULL);
	if (r == 0 && (r = drop_privileges(s)) < 0)
		r = fail(&st, r, "drop privileges", NULL);
	if (r == 0 && (r = sys_seccomp(SECCOMP_SET_MODE_FILTER, 0, (void *)s->filter)) < 0)
		r = fail(&st, r, "load the tasks' seccomp filter", NULL);
	if (r < 0) {
		send_msg(control, TASK_SETUP_FAILED, -r, err, -1);
		_exit(127);
	}
	if (send_msg(control, TASK_READY, 0, NULL, -1) < 0)
		_exit(127);
	/* Ready ahead of time: the command comes when the runner has one. */
	if (!wait_go(control, s, &msg))
		_exit(0);
	for (int i = 0; i < 3; i++)
		if (s->stdio_mask & 1u << i && s->stdio[i] >= 0) {
			close(stdio[i]);
			stdio[i] = s->stdio[i];
		}
	if (s->tty) {
		struct winsize ws = {.ws_row = s->rows, .ws_col = s->cols};
		pty = open("/dev/pts/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
		if (pty < 0 || unlockpt(pty) < 0)
			r = fail(&st, -errno, "open", "/dev/pts/ptmx");
		else if ((ws.ws_row || ws.ws_col) && ioctl(pty, TIOCSWINSZ, &ws) < 0)
			r = fail(&st, -errno, "set the window size", NULL);
		else if ((tty = ioctl(pty, TIOCGPTPEER, O_RDWR | O_CLOEXEC)) < 0)
			r = fail(&st, -errno, "open the pty's peer", NULL);
		for (int i = 0; i < 3; i++)
			close(stdio[i]);
		stdio[0] = stdio[1] = stdio[2] = tty;
	}
	if (r == 0 &&
	    (pipe2(report, O_CLOEXEC) < 0 ||
	     (s->hold && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, commit) < 0)))
		r = fail(&st, -errno, "pipe", NULL);
	if (r < 0) {
		send_msg(control, TASK_SETUP_FAILED, -r, err, -1);
		_exit(127);
	}
	if (send_msg(control, TASK_STARTING, 0, NULL, pty) < 0)
		_exit(127);
	if (pty >= 0)
		close(pty);

	pid_t cmd = fork();
	if (cmd < 0) {
		send_msg(control, TASK_EXEC_FAILED, errno, "fork", -1);
		_exit(127);
	}
	if (cmd == 0) {
		close(control);
		close(report[0]);
		if (commit[1] >= 0)
			close(commit[1]);
		exec_command(s, stdio, tty, report[1], commit[0]);
	}
	close(report[1]);
	if (s->hold) {
		close(commit[0]);
		if (!wait_commit(control, commit[1])) {
			kill(cmd, SIGKILL);
			_exit(0);
		}
		close(commit[1]);
	}
	for (int i = 0; i < 3; i++)
		if (stdio[i] >= 0 && (i == 0 || stdio[i] != stdio[i - 1]))
			close(stdio[i]);
	int e = 0;
	ssize_t n;
	do
		n = read(report[0], &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(report[0]);
	if (n == sizeof(e))
		send_msg(control, TASK_EXEC_FAILED, e, NULL, -1);
	else
		send_msg(control, TASK_EXECED, 0, NULL, -1);
	init_loop(cmd, control);
	_exit(0);
}

/* ---- the runner side ---- */

#define PIPE_OUT_SIZE (1 << 20) /* /proc/sys/fs/pipe-max-size's default */

static int
write_file(pid_t pid, const char *name, const char *text)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = write(fd, text, strlen(text));
	int r = n < 0 ? -errno : 0;
	close(fd);
	return r;
}

/* The task's ids inside are ours outside: the files it writes are ours. */
static int
write_id_maps(pid_t pid, uid_t uid, gid_t gid)
{
	char map[64];
	int r;

	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)uid, (unsigned)uid);
	r = write_file(pid, "uid_map", map);
	if (r == 0)
		r = write_file(pid, "setgroups", "deny");
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)gid, (unsigned)gid);
	if (r == 0)
		r = write_file(pid, "gid_map", map);
	return r;
}

int
task_read_msg(int control, struct task_msg *m)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = {.iov_base = m, .iov_len = sizeof(*m)};
	struct msghdr mh = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
	ssize_t n = recvmsg(control, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);

	if (n < 0)
		return -errno;
	if (n == 0)
		return 0;
	if ((size_t)n != sizeof(*m))
		return -EBADMSG;
	m->text[sizeof(m->text) - 1] = '\0';
	/* A descriptor only comes with TASK_STARTING: the pty master. */
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	if (c && c->cmsg_type == SCM_RIGHTS) {
		int fd;
		memcpy(&fd, CMSG_DATA(c), sizeof(fd));
		if (m->event == TASK_STARTING)
			m->value = fd;
		else
			close(fd);
	} else if (m->event == TASK_STARTING) {
		m->value = -1;
	}
	return 1;
}

void
task_proc_close(struct task_proc *p)
{
	int *fds[] = {&p->pidfd, &p->control, &p->in, &p->out, &p->err, &p->pty};

	for (size_t i = 0; i < ARRAY_SIZE(fds); i++)
		if (*fds[i] >= 0) {
			close(*fds[i]);
			*fds[i] = -1;
		}
}

/* Waits (bounded) for the init's message `want`, or its word on why not. */
static int
wait_for(struct task_proc *p, int32_t want, char *err, size_t errsize)
{
	struct pollfd pfd = {.fd = p->control, .events = POLLIN};
	struct task_msg m;

	for (;;) {
		int r = poll(&pfd, 1, 10000);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			snprintf(err, errsize, "the task's init did not start");
			return -ETIMEDOUT;
		}
		r = task_read_msg(p->control, &m);
		if (r == -EAGAIN || r == -EINTR)
			continue;
		if (r <= 0) {
			snprintf(err, errsize, "the task's init died while setting up");
			return r < 0 ? r : -ECHILD;
		}
		if (m.event == want) {
			if (want == TASK_STARTING)
				p->pty = m.value;
			return 0;
		}
		snprintf(err, errsize, "%s", m.text);
		return m.event == TASK_SETUP_FAILED && m.value > 0 ? -m.value : -EIO;
	}
}

static int
set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	return fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ? -errno : 0;
}

int
task_prepare(const struct task_spec *spec, struct task_proc *ret, char *err, size_t errsize)
{
	int ctl[2], in[2] = {-1, -1}, out[2] = {-1, -1}, errp[2] = {-1, -1};
	int pidfd = -1, r;
	const struct task_spec *s = spec;

	*ret = (struct task_proc){
	    .pidfd = -1, .control = -1, .in = -1, .out = -1, .err = -1, .pty = -1};
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ctl) < 0)
		return -errno;
	/* Pipes, ready for a command without a terminal; one with a terminal closes them. */
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0) {
		r = -errno;
		snprintf(err, errsize, "pipe: %s", strerror(-r));
		goto fail;
	}
	/*
	 * Output pipes as large as an unprivileged process may make them: a command
	 * that writes fast fills 64 KiB in microseconds, and each refill is a switch
	 * of CPUs between it and the runner.
	 */
	fcntl(out[0], F_SETPIPE_SZ, PIPE_OUT_SIZE);
	fcntl(errp[0], F_SETPIPE_SZ, PIPE_OUT_SIZE);
	struct clone_args ca = {
	    .flags = CLONE_NEWPID | CLONE_NEWNS | CLONE_PIDFD | (s->userns ? CLONE_NEWUSER : 0) |
	             (s->netns && s->netns_fd < 0 ? CLONE_NEWNET : 0),
	    .pidfd = (uint64_t)(uintptr_t)&pidfd,
	    .exit_signal = SIGCHLD,
	};
	pid_t pid = (pid_t)syscall(SYS_clone3, &ca, sizeof(ca));
	if (pid < 0) {
		r = -errno;
		snprintf(err, errsize, "clone3: %s", strerror(-r));
		goto fail;
	}
	if (pid == 0) {
		int stdio[3] = {in[0], out[1], errp[1]};
		close(ctl[0]);
		close(in[1]);
		close(out[0]);
		close(errp[0]);
		init_main(s, ctl[1], stdio);
	}
	close(ctl[1]);
	ret->pid = pid;
	ret->pidfd = pidfd;
	ret->control = ctl[0];
	close(in[0]);
	close(out[1]);
	close(errp[1]);
	ret->in = in[1];
	ret->out = out[0];
	ret->err = errp[0];
	if (s->userns) {
		r = write_id_maps(pid, getuid(), getgid());
		if (r < 0 || write(ret->control, "g", 1) != 1) {
			snprintf(err, errsize, "write the user namespace's id maps: %s",
			         strerror(r < 0 ? -r : errno));
			task_discard(ret);
			return r < 0 ? r : -EIO;
		}
	}
	return 0;
fail:
	close(ctl[0]);
	close(ctl[1]);
	int *pipes[] = {in, out, errp};
	for (size_t i = 0; i < ARRAY_SIZE(pipes); i++)
		for (int j = 0; j < 2; j++)
			if (pipes[i][j] >= 0)
				close(pipes[i][j]);
	return r;
}

/* The command as the init reads it: an exec frame, in a sealed memfd. */
static int
send_go(struct task_proc *p, const struct task_spec *s)
{
	size_t argc = 0, envc = 0;
	struct proto_buf b = {0};
	int r;

	while (s->argv[argc])
		argc++;
	while (s->envp[envc])
		envc++;
	struct proto_msg m = {.type = PROTO_EXEC,
	                      .u.exec = {.argv = (const char *const *)s->argv,
	                                 .argc = argc,
	                                 .env = (const char *const *)s->envp,
	                                 .envc = envc,
	                                 .cwd = s->cwd,
	                                 .path = s->path,
	                                 .tty = s->tty,
	                                 .rows = s->rows,
	                                 .cols = s->cols,
	                                 .has_umask = true,
	                                 .umask = (uint16_t)s->umask,
	                                 .sigign = s->sigign}};
	r = proto_encode(&b, &m);
	if (r < 0)
		return r;
	int fd = memfd_create("moat-go", MFD_CLOEXEC);
	if (fd < 0) {
		r = -errno;
	} else {
		size_t len = b.len - PROTO_HEADER_SIZE;
		ssize_t w = write(fd, b.p + PROTO_HEADER_SIZE, len);
		int fds[4] = {fd};
		size_t n = 1;
		for (int i = 0; i < 3; i++)
			if (s->stdio_mask & 1u << i)
				fds[n++] = s->stdio[i];
		r = w == (ssize_t)len ? send_msg_fds(p->control, TASK_GO,
		                                     (int)(s->hold | (s->stdio_mask & 7) << 1 |
		                                           (s->stdio_closed & 7) << 4),
		                                     NULL, fds, n)
		                      : -EIO;
		close(fd);
	}
	proto_buf_free(&b);
	return r;
}

int
task_start(struct task_proc *p, const struct task_spec *s, char *err, size_t errsize)
{
	int r = p->ready ? 0 : wait_for(p, TASK_READY, err, errsize);

	if (r == 0) {
		p->ready = true;
		r = send_go(p, s);
		if (r < 0)
			snprintf(err, errsize, "hand the command to the task: %s", strerror(-r));
	}
	if (r == 0)
		r = wait_for(p, TASK_STARTING, err, errsize);
	if (r < 0)
		return r;
	if (p->pty >= 0) {
		/* The command has the terminal: the pipes go unused. */
		int *pipes[] = {&p->in, &p->out, &p->err};
		for (size_t i = 0; i < ARRAY_SIZE(pipes); i++) {
			close(*pipes[i]);
			*pipes[i] = -1;
		}
	}
	int *nb[] = {&p->control, &p->in, &p->out, &p->err, &p->pty};
	for (size_t i = 0; i < ARRAY_SIZE(nb); i++)
		if (*nb[i] >= 0 && set_nonblock(*nb[i]) < 0) {
			r = -errno;
			snprintf(err, errsize, "fcntl: %s", strerror(-r));
			return r;
		}
	return 0;
}

int
task_commit(struct task_proc *p, unsigned stdio_mask, const int stdio[3], unsigned closed)
{
	int fds[3];
	size_t n = 0;

	for (int i = 0; i < 3; i++)
		if (stdio_mask & 1u << i)
			fds[n++] = stdio[i];
	return send_msg_fds(p->control, TASK_COMMIT, (int)((stdio_mask & 7) | (closed & 7) << 3),
	                    NULL, fds, n);
}

void
task_hurry(struct task_proc *p)
{
	if (!p->ready)
		setpriority(PRIO_PROCESS, (id_t)p->pid, 0);
}

bool
task_poll_ready(struct task_proc *p)
{
	struct task_msg m;

	if (!p->ready && task_read_msg(p->control, &m) > 0 && m.event == TASK_READY)
		p->ready = true;
	return p->ready;
}

void
task_discard(struct task_proc *p)
{
	if (p->pidfd >= 0)
		sys_pidfd_send_signal(p->pidfd, SIGKILL);
	if (p->pid > 0)
		waitpid(p->pid, NULL, 0);
	task_proc_close(p);
	p->pid = 0;
}

int
task_spawn(const struct task_spec *s, struct task_proc *ret, char *err, size_t errsize)
{
	int r = task_prepare(s, ret, err, errsize);

	if (r == 0 && (r = task_start(ret, s, err, errsize)) < 0)
		task_discard(ret);
	return r;
}

/* SPDX-License-Identifier: MIT */
/*
 * Exec redirection: a command the agent's children start runs in the runner,
 * while the agent waits for an ordinary child.
 *
 * 1. At the execve trap the command is captured into a ticket: the path as
 *    given, argv, envp, the cwd, the umask, the ignored signals, whether
 *    stdin and stdout are a terminal. The thread is seized (PTRACE_O_TRACEEXEC
 *    and a queued interrupt) and the kernel carries the exec out, so every
 *    error (ENOENT, EACCES, ENOEXEC...) is its own.
 * 2. A failed exec ends in the interrupt stop: the ticket is dropped, the
 *    thread let go. A successful one ends in the exec stop: a new image, one
 *    thread, private memory, not one instruction run. There the supervisor
 *    writes "mov $SYS_execve, %eax; syscall" at the entry point and the
 *    stand-in's path and environment on the stack, with every signal
 *    blocked, and lets it go on: its first act is to exec moat-shim.
 * 3. That exec traps too. Only the shim's path is accepted; the supervisor
 *    installs the stand-in's end of a fresh socketpair (ADDFD) at the number
 *    it named, hands the other end and the ticket to the runner, and lets the
 *    exec go on.
 * 4. At that exec stop /proc/PID/exe must be the shim the supervisor opened
 *    at start-up, else the process dies. Then it is let go. The shim presents
 *    the ticket; the runner starts what the ticket says (nothing the stand-in
 *    sends can change it) and the shim relays stdio, signals, window size and
 *    the exit status.
 *
 * Everything runs on the tracer thread (notify.c): it is the tracer of every
 * seized thread. Between steps 2 and 3 the thread is traced but running; a
 * stand-in that dies there is collected through its pidfd (sv_redirect_wait).
 */
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "moat/log.h"
#include "moat/macro.h"
#include "moat/proto.h"
#include "moat/sys.h"
#include "sv.h"

/* What the runner will start: captured once, at the trap. */
struct ticket {
	char id[33];      /* 128 random bits, hex */
	char *argv, *env; /* NUL-separated */
	size_t argv_len, env_len;
	char cwd[PATH_MAX];
	char path[PATH_MAX];
	mode_t umask;
	uint64_t sigign;
	bool tty;
	uint16_t rows, cols;
	int conn; /* the stand-in's end of its connection to the runner, or -1 */
};

/* A process between its exec stop and the exec of the shim. */
struct standin {
	pid_t pid;
	int pidfd;
	int fd_no;      /* where the stand-in finds its connection */
	dev_t shim_dev; /* the shim as it was when the stand-in was told to exec it */
	ino_t shim_ino;
	bool shim_exec; /* the shim's exec was let through: its exec stop comes next */
	struct ticket *t;
};

#define STANDINS_MAX 64
static struct standin standins[STANDINS_MAX];
static size_t n_standins;

/* envp and argv of one exec are bounded together by the kernel (ARG_MAX: 2 MiB here). */
#define ENV_TEXT_MAX (2u << 20)

static struct ticket *
ticket_free(struct ticket *t)
{
	if (t) {
		/* Unused: the runner sees its end close and drops what it prepared. */
		if (t->conn >= 0)
			close(t->conn);
		free(t->argv);
		free(t->env);
		free(t);
	}
	return NULL;
}

static void
standin_drop(struct standin *s)
{
	if (s->pidfd >= 0)
		close(s->pidfd);
	ticket_free(s->t);
	*s = standins[--n_standins];
}

static struct standin *
standin_find(pid_t pid)
{
	for (size_t i = 0; i < n_standins; i++)
		if (standins[i].pid == pid)
			return &standins[i];
	return NULL;
}

/* The NULL-terminated pointer array at addr, read a page of it at a time. */
static int
read_pointers(struct sv_call *c, uint64_t addr, uint64_t **ret, size_t *ret_n)
{
	uint64_t *p = NULL;
	size_t n = 0, cap = 0;

	for (;;) {
		if (n == cap) {
			if (cap > PROTO_ARGS_MAX) {
				free(p);
				return -E2BIG;
			}
			uint64_t *more = realloc(p, (cap = cap ? cap * 2 : 512) * sizeof(*p));
			if (!more) {
				free(p);
				return -ENOMEM;
			}
			p = more;
		}
		uint64_t at = addr + n * sizeof(*p);
		size_t room = (4096 - (size_t)(at % 4096)) / sizeof(*p);
		if (room > cap - n)
			room = cap - n;
		int r = room ? tgt_read(c, at, p + n, room * sizeof(*p)) : -EFAULT;
		if (r < 0) {
			free(p);
			return r;
		}
		for (size_t i = n; i < n + room; i++)
			if (!p[i]) {
				*ret = p;
				*ret_n = i;
				return 0;
			}
		n += room;
	}
}

/*
 * Reads each string up to the end of its page, all of them in as few calls as
 * IOV_MAX allows: a forked program's environment lies scattered on its heap,
 * and one call per string would cost more than the rest of the capture. Sets
 * got[i] for each string read in full (a NUL within what was read).
 */
static char *
read_heads(struct sv_call *c, const uint64_t *ptrs, size_t n, size_t *off, bool *got)
{
	enum { CHUNK = 1024 };
	struct iovec remote[CHUNK];
	size_t total = 0;

	for (size_t i = 0; i < n; i++) {
		off[i] = total;
		total += 4096 - (size_t)(ptrs[i] % 4096);
	}
	char *buf = malloc(total ? total : 1);
	if (!buf)
		return NULL;
	for (size_t i = 0; i < n; i += CHUNK) {
		size_t k = n - i < CHUNK ? n - i : CHUNK, bytes = 0;
		for (size_t j = 0; j < k; j++) {
			size_t len = 4096 - (size_t)(ptrs[i + j] % 4096);
			remote[j] = (struct iovec){(void *)(uintptr_t)ptrs[i + j], len};
			bytes += len;
		}
		struct iovec local = {buf + off[i], bytes};
		/* It stops at the first unmapped page: what follows is read one by one. */
		ssize_t r = process_vm_readv(c->tid, &local, 1, remote, k, 0);
		size_t done = r > 0 ? (size_t)r : 0;
		for (size_t j = 0; j < k; j++) {
			size_t start = off[i + j] - off[i], len = remote[j].iov_len;
			got[i + j] = start + len <= done && memchr(buf + off[i + j], '\0', len);
		}
	}
	return buf;
}

/* A NUL-separated copy of the string array at addr (argv or envp). */
static int
read_strv(struct sv_call *c, uint64_t addr, char **ret, size_t *ret_len)
{
	_cleanup_free_ uint64_t *ptrs = NULL;
	_cleanup_free_ size_t *off = NULL;
	_cleanup_free_ bool *got = NULL;
	_cleanup_free_ char *heads = NULL;
	size_t n = 0, cap = 4096, len = 0;
	int r = addr ? read_pointers(c, addr, &ptrs, &n) : 0;

	if (r < 0)
		return r;
	char *buf = malloc(cap);
	off = calloc(n + 1, sizeof(*off));
	got = calloc(n + 1, sizeof(*got));
	if (!buf || !off || !got || !(heads = read_heads(c, ptrs, n, off, got))) {
		free(buf);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		size_t sl = got[i] ? strlen(heads + off[i]) : 0;
		for (;;) {
			if (!got[i])
				r = tgt_read_string(c, ptrs[i], buf + len, cap - len);
			else if (sl >= cap - len)
				r = -ENAMETOOLONG;
			else
				r = (int)sl;
			if (r >= 0 && got[i])
				memcpy(buf + len, heads + off[i], sl + 1);
			if (r != -ENAMETOOLONG || cap >= ENV_TEXT_MAX)
				break;
			char *more = realloc(buf, cap * 2);
			if (!more) {
				r = -ENOMEM;
				break;
			}
			buf = more;
			cap *= 2;
		}
		if (r < 0) {
			free(buf);
			return r == -ENAMETOOLONG ? -E2BIG : r;
		}
		len += (size_t)r + 1;
	}
	*ret = buf;
	*ret_len = len;
	return 0;
}

/* umask and ignored signals: both survive an exec, so the command starts with them. */
static int
read_status(struct sv_call *c, struct ticket *t)
{
	char rel[64], buf[4096];

	snprintf(rel, sizeof(rel), "%d/status", c->tid);
	_cleanup_close_ int fd = openat(c->sv->proc_fd, rel, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return -ESRCH;
	buf[n] = '\0';
	const char *u = strstr(buf, "\nUmask:"), *ign = strstr(buf, "\nSigIgn:");
	if (!u || !ign)
		return -EIO;
	t->umask = (mode_t)strtoul(u + 7, NULL, 8) & 0777;
	t->sigign = strtoull(ign + 8, NULL, 16);
	return tgt_valid(c);
}

/* A terminal on stdin and stdout: the task gets a pty of that size. */
static void
read_tty(struct sv_call *c, struct ticket *t)
{
	int in = tgt_getfd(c, 0), out = tgt_getfd(c, 1);
	struct winsize ws = {0};

	t->tty = in >= 0 && out >= 0 && isatty(in) && isatty(out);
	if (t->tty && ioctl(in, TIOCGWINSZ, &ws) == 0) {
		t->rows = ws.ws_row;
		t->cols = ws.ws_col;
	}
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
}

int
sv_redirect_capture(struct sv_call *c, const char *raw, bool raw_ok, const char *argv,
                    size_t argv_len, uint64_t envp)
{
	struct ticket *t = calloc(1, sizeof(*t));
	char rel[64];
	int r;

	if (!t || !(t->argv = malloc(argv_len ? argv_len : 1))) {
		r = -ENOMEM;
		goto fail;
	}
	t->conn = -1;
	memcpy(t->argv, argv, argv_len);
	t->argv_len = argv_len;
	r = read_strv(c, envp, &t->env, &t->env_len);
	if (r == 0)
		r = read_status(c, t);
	if (r < 0)
		goto fail;
	snprintf(rel, sizeof(rel), "%d/cwd", c->tid);
	ssize_t n = readlinkat(c->sv->proc_fd, rel, t->cwd, sizeof(t->cwd) - 1);
	if (n <= 0 || t->cwd[0] != '/') {
		r = -ESRCH;
		goto fail;
	}
	t->cwd[n] = '\0';
	if ((r = tgt_valid(c)) < 0)
		goto fail;
	/*
	 * The path as given runs from the same cwd, so that a script sees the $0 it
	 * would see; one relative to another dirfd (execveat) runs by its canonical
	 * path.
	 */
	snprintf(t->path, sizeof(t->path), "%s", raw_ok ? raw : c->path);
	read_tty(c, t);
	uint8_t rnd[16];
	if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd)) {
		r = -EIO;
		goto fail;
	}
	for (size_t i = 0; i < sizeof(rnd); i++)
		snprintf(t->id + 2 * i, 3, "%02x", rnd[i]);
	c->ticket = t;
	return 0;
fail:
	ticket_free(t);
	return r;
}

/* The lowest descriptor number the process does not use, from 3 up. */
static int
free_fd(struct sv *sv, pid_t pid)
{
	static uint64_t used[4096 / 64];
	char rel[64];
	struct dirent *e;

	memset(used, 0, sizeof(used));
	snprintf(rel, sizeof(rel), "%d/fd", pid);
	int fd = openat(sv->proc_fd, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		if (fd >= 0)
			close(fd);
		return -ESRCH;
	}
	while ((e = readdir(d))) {
		long n = strtol(e->d_name, NULL, 10);
		if (n >= 0 && n < 4096)
			used[n / 64] |= 1ULL << (n % 64);
	}
	closedir(d);
	for (int n = 3; n < 4096; n++)
		if (!(used[n / 64] & 1ULL << (n % 64)))
			return n;
	return -EMFILE;
}

static int
mem_write(int mem, uint64_t addr, const void *buf, size_t n)
{
	return pwrite(mem, buf, n, (off_t)addr) == (ssize_t)n ? 0 : -EFAULT;
}

/*
 * At the exec stop of a redirected command: make its first instructions an
 * exec of the shim. The new image is private to this one thread, so what is
 * written here reaches nobody else.
 */
static int
inject(struct sv *sv, pid_t pid, struct standin *s)
{
#if defined(__x86_64__)
	/* mov $__NR_execve, %eax; syscall */
	static const uint8_t code[] = {0xb8, __NR_execve, 0, 0, 0, 0x0f, 0x05};
	struct user_regs_struct regs;
	uint64_t all = ~0ULL;
	char rel[64], env[64 + sizeof(s->t->id)];

	/* No signal may stop it before the exec: it would wait for a tracer that is not waiting. */
	if (ptrace(PTRACE_SETSIGMASK, pid, sizeof(all), &all) < 0 ||
	    ptrace(PTRACE_GETREGS, pid, 0, &regs) < 0)
		return -errno;
	if (regs.cs != 0x33)
		return -ENOEXEC; /* not a 64-bit image: the filter would kill it anyway */
	s->fd_no = free_fd(sv, pid);
	if (s->fd_no < 0)
		return s->fd_no;
	/*
	 * The image must be this file at its exec stop. Taken now, not at start-up:
	 * an upgrade that replaces moat-shim during a session is still the shim.
	 */
	struct stat st;
	if (stat(sv->shim_path, &st) < 0)
		return -errno;
	s->shim_dev = st.st_dev;
	s->shim_ino = st.st_ino;
	int len = snprintf(env, sizeof(env), "MOAT_STANDIN=%d:%s", s->fd_no, s->t->id);
	size_t plen = strlen(sv->shim_path) + 1;
	/* Below the stack pointer: the kernel maps 128 KiB of stack below the arguments. */
	uint64_t base = (regs.rsp - 8192 - plen - (size_t)len - 64) & ~15ULL;
	uint64_t path_at = base, env_at = base + plen,
	         envp_at = (env_at + (size_t)len + 1 + 7) & ~7ULL;
	uint64_t envp[2] = {env_at, 0};

	snprintf(rel, sizeof(rel), "/proc/%d/mem", pid);
	_cleanup_close_ int mem = open(rel, O_RDWR | O_CLOEXEC);
	if (mem < 0)
		return -errno;
	int r = mem_write(mem, path_at, sv->shim_path, plen);
	if (r == 0)
		r = mem_write(mem, env_at, env, (size_t)len + 1);
	if (r == 0)
		r = mem_write(mem, envp_at, envp, sizeof(envp));
	if (r == 0)
		r = mem_write(mem, regs.rip, code, sizeof(code));
	if (r < 0)
		return r;
	/* argv stays the kernel's copy, on the stack: the stand-in shows the command's name. */
	regs.rdi = path_at;
	regs.rsi = regs.rsp + 8;
	regs.rdx = envp_at;
	if (ptrace(PTRACE_SETREGS, pid, 0, &regs) < 0 || ptrace(PTRACE_CONT, pid, 0, 0) < 0)
		return -errno;
	return 0;
#else
	return -ENOSYS;
#endif
}

static void
kill_wait(pid_t pid)
{
	int status;

	kill(pid, SIGKILL);
	while (waitpid(pid, &status, __WALL) < 0 && errno == EINTR)
		;
}

/* A wait of ours reported another tracee: a stand-in that died is forgotten. */
static void
other_tracee(struct sv *sv, pid_t w, int status)
{
	if (w == sv->agent && (WIFEXITED(status) || WIFSIGNALED(status))) {
		sv_agent_reaped(sv, status);
		return;
	}
	struct standin *s = standin_find(w);
	if (s && (WIFEXITED(status) || WIFSIGNALED(status)))
		standin_drop(s);
}

/* After the answer to the command's exec: the exec stop, or the interrupt stop of a failure. */
static void
after_command(struct sv_call *c)
{
	struct ticket *t = TAKE_PTR(c->ticket);
	int status;

	for (;;) {
		pid_t w = waitpid(-1, &status, __WALL | __WNOTHREAD);
		if (w < 0 && errno == EINTR && !sv_notify_stopping())
			continue;
		if (w < 0)
			break;
		if (w != c->tid && w != c->tgid) {
			other_tracee(c->sv, w, status);
			continue;
		}
		if (WIFEXITED(status) || WIFSIGNALED(status))
			break;
		int event = (status >> 16) & 0xff;
		if (event == PTRACE_EVENT_EXEC) {
			struct standin *s =
			    n_standins < STANDINS_MAX ? &standins[n_standins] : NULL;
			int r = -EAGAIN;
			if (s) {
				*s = (struct standin){
				    .pid = w, .pidfd = sys_pidfd_open(w, 0), .t = t};
				r = s->pidfd < 0 ? -errno : inject(c->sv, w, s);
			}
			if (r < 0) {
				if (s && s->pidfd >= 0)
					close(s->pidfd);
				kill_wait(w);
				c->redirect_failed = true;
				c->allowed = false;
				snprintf(c->path + strlen(c->path),
				         sizeof(c->path) - strlen(c->path),
				         " (redirect: %s: killed)", strerror(-r));
				break;
			}
			n_standins++;
			return; /* the ticket lives on in the stand-in */
		}
		/* The exec failed (interrupt stop), or a signal came after it did. */
		ptrace(PTRACE_DETACH, w, 0, event == PTRACE_EVENT_STOP ? 0 : WSTOPSIG(status));
		break;
	}
	ticket_free(t);
}

/* The shim's exec stop: the image must be the shim. */
static void
after_shim(struct sv_call *c)
{
	int status;

	for (;;) {
		pid_t w = waitpid(-1, &status, __WALL | __WNOTHREAD);
		if (w < 0 && errno == EINTR && !sv_notify_stopping())
			continue;
		if (w < 0)
			return;
		struct standin *s = standin_find(w);
		if (!s || !s->shim_exec) {
			other_tracee(c->sv, w, status);
			continue;
		}
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			standin_drop(s);
			return;
		}
		int event = (status >> 16) & 0xff;
		struct stat st;
		char rel[64];
		snprintf(rel, sizeof(rel), "%d/exe", w);
		if (event == PTRACE_EVENT_EXEC && fstatat(c->sv->proc_fd, rel, &st, 0) == 0 &&
		    st.st_dev == s->shim_dev && st.st_ino == s->shim_ino) {
			ptrace(PTRACE_DETACH, w, 0, 0);
		} else {
			/* Not the shim, or its exec failed with the command's image half-rewritten. */
			kill_wait(w);
			c->allowed = false;
			c->err = EACCES;
			size_t n = strlen(c->path);
			snprintf(c->path + n, sizeof(c->path) - n, " (not the shim: killed)");
		}
		standin_drop(s);
		return;
	}
}

/*
 * The ticket goes to the runner at once, with one end of the stand-in's future
 * connection: the runner prepares the command while the exec goes on, and
 * starts it when the stand-in presents the ticket. The other end waits in t.
 */
static int
hand_ticket(struct sv_call *c, struct ticket *t)
{
	int sp[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0)
		return -errno;
	size_t argc = 0, envc = 0;
	for (size_t i = 0; i < t->argv_len; i += strlen(t->argv + i) + 1)
		argc++;
	for (size_t i = 0; i < t->env_len; i += strlen(t->env + i) + 1)
		envc++;
	const char **argv = calloc(argc + 1, sizeof(char *)),
	           **env = calloc(envc + 1, sizeof(char *));
	if (!argv || !env) {
		free(argv);
		free(env);
		close(sp[0]);
		close(sp[1]);
		return -ENOMEM;
	}
	argc = envc = 0;
	for (size_t i = 0; i < t->argv_len; i += strlen(t->argv + i) + 1)
		argv[argc++] = t->argv + i;
	for (size_t i = 0; i < t->env_len; i += strlen(t->env + i) + 1)
		if (strchr(t->env + i, '='))
			env[envc++] = t->env + i;
	struct proto_msg m = {
	    .type = PROTO_EXEC,
	    .u.exec = {.argv = argv,
	               .argc = argc,
	               .env = env,
	               .envc = envc,
	               .cwd = t->cwd,
	               .path = t->path,
	               .session = c->sv->session,
	               .tty = t->tty,
	               .rows = t->rows,
	               .cols = t->cols,
	               .has_umask = true,
	               .umask = (uint16_t)t->umask,
	               .sigign = t->sigign},
	};
	int r = c->sv->hand_ticket(c->sv->hand_ticket_data, t->id, &m, sp[0]);
	free(argv);
	free(env);
	if (r < 0) {
		close(sp[1]);
		return r;
	}
	t->conn = sp[1];
	return 0;
}

/* The stand-in's end of the connection, at the number it was told. */
static int
connect_standin(struct sv_call *c, struct standin *s)
{
	struct seccomp_notif_addfd add = {
	    .id = c->req->id,
	    .flags = SECCOMP_ADDFD_FLAG_SETFD,
	    .srcfd = (uint32_t)s->t->conn,
	    .newfd = (uint32_t)s->fd_no,
	};
	int r = sys_notif_addfd(c->sv->notify_fd, &add);

	if (r >= 0) {
		close(s->t->conn);
		s->t->conn = -1;
	}
	return r < 0 ? r : 0;
}

int
sv_redirect_begin(struct sv_call *c)
{
	int r = hand_ticket(c, c->ticket);

	if (r == 0)
		r = sv_exec_seize(c);
	if (r < 0) {
		c->ticket = ticket_free(c->ticket);
		return r;
	}
	c->redirect = true;
	c->cont = true;
	c->after = after_command;
	return 0;
}

bool
sv_redirect_standin(struct sv_call *c, uint64_t path_addr)
{
	struct standin *s = standin_find(c->tid);
	char path[PATH_MAX];

	if (!s || s->shim_exec)
		return false;
	/* Whatever happens next, this call is the stand-in's; the audit line says so. */
	snprintf(c->path, sizeof(c->path), "%s", c->sv->shim_path);
	c->decided = true;
	c->access = POLICY_EXEC;
	int r = tgt_read_string(c, path_addr, path, sizeof(path));
	if (r >= 0 && strcmp(path, c->sv->shim_path) != 0)
		r = -EACCES;
	if (r >= 0)
		r = connect_standin(c, s);
	if (r < 0) {
		/* Its image is the command's, rewritten: it cannot go back to it. */
		kill_wait(s->pid);
		standin_drop(s);
		c->allowed = false;
		c->gone = true;
		log_error("moat: redirected exec of pid %d failed: %s", (int)c->tid, strerror(-r));
		return true;
	}
	s->shim_exec = true;
	c->allowed = true;
	c->standin = true;
	c->cont = true;
	c->after = after_shim;
	return true;
}

void
sv_redirect_wait(int wake_fd)
{
	struct pollfd p[1 + STANDINS_MAX];
	size_t n = 0;

	p[n++] = (struct pollfd){.fd = wake_fd, .events = POLLIN};
	for (size_t i = 0; i < n_standins; i++)
		p[n++] = (struct pollfd){.fd = standins[i].pidfd, .events = POLLIN};
	/* Not forever while stand-ins wait: one may stop, and a stop shows on no descriptor. */
	if (poll(p, n, n_standins ? 100 : -1) < 0)
		return;
	/*
	 * A stand-in that died before its shim's exec is collected here, or its parent
	 * would wait for it forever; one that a SIGSTOP caught on its way (it is
	 * traced: it would wait for us) is let go on. Downwards: a drop moves the
	 * last entry, seen already.
	 */
	for (size_t i = n_standins; i-- > 0;) {
		int status;
		pid_t w = waitpid(standins[i].pid, &status, __WALL | WNOHANG);
		if (w < 0 || (w > 0 && (WIFEXITED(status) || WIFSIGNALED(status))))
			standin_drop(&standins[i]);
		else if (w > 0 && WIFSTOPPED(status))
			ptrace(PTRACE_CONT, standins[i].pid, 0, 0);
	}
}

void
sv_redirect_reset(void)
{
	while (n_standins)
		standin_drop(&standins[n_standins - 1]);
}

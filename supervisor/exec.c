/* SPDX-License-Identifier: MIT */
/*
 * execve and execveat. The binary is resolved and decided for exec access and by
 * exec.rules (path and argv), and so is every #! interpreter it names. Then the
 * kernel carries the exec out, so that every error stays the kernel's own; but
 * the path it execs is read from memory another thread can rewrite after the
 * check. So before the call goes on the supervisor seizes the thread with
 * PTRACE_O_TRACEEXEC: at the exec stop, with the new image mapped and not one of
 * its instructions run, /proc/PID/exe must be one of the files checked, or the
 * process is killed. A failed exec ends in the interrupt stop instead, and the
 * thread is let go.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "moat/macro.h"
#include "sv.h"

/* The kernel follows at most this many #! levels (BINPRM_MAX_RECURSION). */
#define INTERP_MAX 4

/* The longest argv the rules look at; an exec with more arguments is matched on these. */
#define ARGV_MAX      256
#define ARGV_TEXT_MAX (64 * 1024)

/* Reads argv into buf; returns the count, or -errno. */
static int
read_argv(struct sv_call *c, uint64_t addr, const char **argv, char *buf, size_t size)
{
	size_t used = 0;
	int n = 0;

	while (n < ARGV_MAX - 1 && addr) {
		uint64_t ptr;
		int r = tgt_read(c, addr + (uint64_t)n * sizeof(ptr), &ptr, sizeof(ptr));
		if (r < 0)
			return r;
		if (!ptr)
			break;
		if (used >= size)
			break;
		r = tgt_read_string(c, ptr, buf + used, size - used);
		if (r == -ENAMETOOLONG)
			break; /* the rest does not fit: match on what we have */
		if (r < 0)
			return r;
		argv[n++] = buf + used;
		used += (size_t)r + 1;
	}
	argv[n] = NULL;
	return n;
}

static int
add_image(struct sv_call *c, int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	if ((size_t)c->n_image >= ARRAY_SIZE(c->image))
		return -ELOOP;
	c->image[c->n_image].dev = st.st_dev;
	c->image[c->n_image].ino = st.st_ino;
	c->n_image++;
	return 0;
}

/*
 * If the file is a #! script, the interpreter it names (the first word after
 * "#!", as the kernel reads it from the first 256 bytes) into interp; else "".
 */
static int
script_interpreter(struct sv_call *c, int fd, char *interp, size_t size)
{
	char link[64], buf[256 + 1];

	interp[0] = '\0';
	snprintf(link, sizeof(link), "%d", fd);
	_cleanup_close_ int rd = openat(c->sv->self_fd, link, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (rd < 0)
		return 0; /* the kernel will refuse it as it refuses us */
	ssize_t n = read(rd, buf, sizeof(buf) - 1);
	if (n < 2 || buf[0] != '#' || buf[1] != '!')
		return 0;
	buf[n] = '\0';
	char *s = buf + 2;
	while (*s == ' ' || *s == '\t')
		s++;
	size_t len = strcspn(s, " \t\n");
	if (len == 0 || len >= size)
		return 0;
	memcpy(interp, s, len);
	interp[len] = '\0';
	return 1;
}

/* Decides the #! chain from fd on, adding each file to the images the exec may become. */
static int
check_chain(struct sv_call *c, int fd)
{
	char interp[PATH_MAX], keep[PATH_MAX];
	int cur = fd; /* borrowed; the interpreters opened here are ours */
	int r = add_image(c, cur);

	snprintf(keep, sizeof(keep), "%s", c->path); /* the audit line names the binary */
	for (int depth = 0; r == 0 && depth < INTERP_MAX; depth++) {
		if (script_interpreter(c, cur, interp, sizeof(interp)) <= 0)
			break;
		struct sv_path p = {.base = -1};
		p.len = (size_t)snprintf(p.s, sizeof(p.s), "%s", interp);
		if (p.s[0] != '/')
			p.base = tgt_dirfd(c, AT_FDCWD);
		int next = sv_path_open(c, &p, 0, 0);
		sv_path_done(&p);
		if (next < 0)
			break; /* the kernel reports a missing interpreter itself */
		if (cur != fd)
			close(cur);
		cur = next;
		r = sv_decide_fd(c, cur, false, POLICY_EXEC);
		if (r == 0)
			r = add_image(c, cur);
	}
	if (cur != fd)
		close(cur);
	if (r == 0)
		snprintf(c->path, sizeof(c->path), "%s", keep);
	return r;
}

static bool
image_expected(const struct sv_call *c, pid_t pid)
{
	char exe[64];
	struct stat st;

	snprintf(exe, sizeof(exe), "/proc/%d/exe", pid);
	if (stat(exe, &st) < 0)
		return false;
	for (int i = 0; i < c->n_image; i++)
		if (c->image[i].dev == st.st_dev && c->image[i].ino == st.st_ino)
			return true;
	return false;
}

/* The thread group of tid, for the exec of a non-leader thread (it takes the tgid). */
static pid_t
tgid_of(struct sv_call *c)
{
	char rel[64], buf[512];

	snprintf(rel, sizeof(rel), "%d/status", c->tid);
	_cleanup_close_ int fd = openat(c->sv->proc_fd, rel, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return c->tid;
	buf[n] = '\0';
	const char *t = strstr(buf, "\nTgid:");
	return t ? (pid_t)strtol(t + 6, NULL, 10) : c->tid;
}

/* After the answer: wait for the exec stop (verify) or the interrupt stop (failed exec). */
static void
verify_image(struct sv_call *c)
{
	pid_t tgid = tgid_of(c), pid = c->tid;
	int status;

	for (;;) {
		pid_t w = waitpid(pid, &status, __WALL);
		if (w < 0 && errno == EINTR && !sv_notify_stopping())
			continue;
		if (w < 0 && errno == ECHILD && pid != tgid) {
			pid = tgid; /* a non-leader thread execs as the leader */
			continue;
		}
		if (w < 0 || WIFEXITED(status) || WIFSIGNALED(status)) {
			if (w == c->sv->agent)
				sv_agent_reaped(c->sv, status);
			return;
		}
		int event = (status >> 16) & 0xff;
		if (event == PTRACE_EVENT_EXEC) {
			if (!image_expected(c, w)) {
				/*
				 * Not what was checked: it never runs an instruction. Its death is
				 * reported to us first; until we collect it, its parent cannot.
				 */
				kill(w, SIGKILL);
				while (waitpid(w, &status, __WALL) == w && !WIFEXITED(status) &&
				       !WIFSIGNALED(status))
					;
				c->allowed = false;
				c->decided = true;
				c->err = EACCES;
				size_t n = strlen(c->path);
				snprintf(c->path + n, sizeof(c->path) - n,
				         " (the exec'd image is not the file checked: killed)");
				return;
			}
			ptrace(PTRACE_DETACH, w, 0, 0);
			return;
		}
		if (event == PTRACE_EVENT_STOP) {
			ptrace(PTRACE_DETACH, w, 0, 0);
			return;
		}
		/* A signal arrived after a failed exec: let it through as we let go. */
		ptrace(PTRACE_DETACH, w, 0, WSTOPSIG(status));
		return;
	}
}

/* Seizes the thread so that the exec reports to us; fails closed. */
static int
seize(struct sv_call *c)
{
	if (ptrace(PTRACE_SEIZE, c->tid, 0, PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL) < 0)
		return -errno;
	/* Queued now, it stops the thread on its way back if the exec fails. */
	if (ptrace(PTRACE_INTERRUPT, c->tid, 0, 0) < 0) {
		int e = errno;
		ptrace(PTRACE_DETACH, c->tid, 0, 0);
		return -e;
	}
	c->after = verify_image;
	return 0;
}

static void
do_exec(struct sv_call *c, int dirfd, uint64_t path, uint64_t argv_addr, int flags)
{
	const struct policy_exec_rule *rule = NULL;
	struct sv_path p;

	if (flags & ~(AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW)) {
		c->err = EINVAL;
		return;
	}
	int r = sv_path_read(c, dirfd, path, flags & AT_EMPTY_PATH, &p);
	if (r < 0) {
		c->err = -r;
		return;
	}
	int fd = p.len == 0 ? TAKE_FD(p.base)
	                    : sv_path_open(c, &p, flags & AT_SYMLINK_NOFOLLOW ? O_NOFOLLOW : 0, 0);
	if (fd < 0) {
		c->err = -sv_path_error(c, &p, fd, POLICY_EXEC);
		sv_path_done(&p);
		return;
	}
	r = sv_decide_fd(c, fd, p.own_fd || p.len == 0, POLICY_EXEC);
	if (r == 0)
		r = check_chain(c, fd);
	close(fd);
	sv_path_done(&p);
	if (r < 0) {
		c->err = -r;
		return;
	}
	const struct policy_exec_rule *rules;
	if (policy_exec_rules(c->sv->policy, &rules) > 0) {
		static char text[ARGV_TEXT_MAX];
		const char *argv[ARGV_MAX];
		int n = read_argv(c, argv_addr, argv, text, sizeof(text));
		if (n < 0) {
			c->err = -n;
			return;
		}
		if (policy_exec_decide(c->sv->policy, c->path, argv, &rule) == POLICY_EXEC_DENY) {
			c->allowed = false;
			c->exec_rule = rule;
			c->err = EACCES;
			return;
		}
		c->exec_rule = rule;
	}
	r = seize(c);
	if (r < 0) {
		/* Without the exec stop there is no check of the image: refuse. */
		c->allowed = false;
		c->err = EACCES;
		return;
	}
	c->cont = true;
}

void
sv_execve(struct sv_call *c)
{
	const __u64 *a = c->req->data.args;
	do_exec(c, AT_FDCWD, a[0], a[1], 0);
}

void
sv_execveat(struct sv_call *c)
{
	const __u64 *a = c->req->data.args;
	do_exec(c, (int)a[0], a[1], a[2], (int)a[4]);
}

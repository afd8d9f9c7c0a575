/* SPDX-License-Identifier: MIT */
/*
 * execve and execveat.
 *
 * At the trap the binary is resolved and decided for exec access and by
 * exec.rules (path and argv); so is every #! interpreter it names and the
 * program interpreter (PT_INTERP, the dynamic loader) of the ELF at the end of
 * that chain. Then the kernel carries the exec out, so that every error stays
 * the kernel's own. But the path and argv it uses are read again from memory
 * that another thread can rewrite after the check. So before the call goes on,
 * the supervisor seizes the thread with PTRACE_O_TRACEEXEC, and at the exec stop
 * (the new image mapped, not one of its instructions run):
 *  - every file mapped into the new image must be one of the files checked;
 *  - the new command line must be the one checked (for a #! script: the
 *    interpreter, its argument and the script path the kernel puts first);
 *  - exec.rules are decided again on that command line, which the kernel has
 *    copied and nobody can change any more;
 * or the process is killed. A failed exec ends in the interrupt stop instead,
 * and the thread is let go.
 */
#include <elf.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include "moat/macro.h"
#include "sv.h"

/* The kernel follows at most this many #! levels (BINPRM_MAX_RECURSION). */
#define INTERP_MAX 4
/* The argv the supervisor keeps to compare with the new command line. */
#define ARGV_MAX      4096
#define ARGV_TEXT_MAX (256 * 1024)

/*
 * What the exec at hand may become. One exec is verified at a time, on the
 * tracer thread (notify.c), between the answer and the next exec: static storage.
 */
static struct {
	char cmdline[ARGV_TEXT_MAX]; /* NUL-separated, as /proc/PID/cmdline */
	size_t len;
	bool complete;                        /* the whole argv fitted: compare exactly */
	bool check;                           /* compare at all (off for nested #! chains) */
	char paths[INTERP_MAX + 2][PATH_MAX]; /* canonical paths of the files checked */
	int n_paths;
	char script[PATH_MAX + 32];    /* the script path as the kernel will give it */
	char interp_args[2][PATH_MAX]; /* a #! line's interpreter and its argument */
	int n_interp_args;
} want;

/* Reads argv into want.cmdline; returns the count or -errno. */
static int
read_argv(struct sv_call *c, uint64_t addr)
{
	size_t used = 0;
	int n = 0;

	want.complete = true;
	for (; addr; n++) {
		uint64_t ptr;
		if (n == ARGV_MAX) {
			want.complete = false;
			break;
		}
		int r = tgt_read(c, addr + (uint64_t)n * sizeof(ptr), &ptr, sizeof(ptr));
		if (r < 0)
			return r;
		if (!ptr)
			break;
		r = tgt_read_string(c, ptr, want.cmdline + used, sizeof(want.cmdline) - used);
		if (r == -ENAMETOOLONG) {
			want.complete = false;
			break;
		}
		if (r < 0)
			return r;
		used += (size_t)r + 1;
	}
	/* An empty argv is given one empty argument by the kernel (since Linux 5.18). */
	if (n == 0 && want.complete) {
		want.cmdline[0] = '\0';
		used = 1;
	}
	want.len = used;
	return n;
}

/* Splits a NUL-separated command line into argv (at most max - 1 entries). */
static size_t
split(char *text, size_t len, const char **argv, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < len && n + 1 < max; i += strlen(text + i) + 1)
		argv[n++] = text + i;
	argv[n] = NULL;
	return n;
}

static int
add_image(struct sv_call *c, int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	if ((size_t)c->n_image >= ARRAY_SIZE(c->image) ||
	    (size_t)want.n_paths >= ARRAY_SIZE(want.paths))
		return -ELOOP;
	c->image[c->n_image].dev = st.st_dev;
	c->image[c->n_image].ino = st.st_ino;
	c->n_image++;
	if (sv_fd_path(c, fd, want.paths[want.n_paths], sizeof(want.paths[0])) == 0)
		want.n_paths++;
	return 0;
}

/* Opens our fd for reading (our copy: the target's O_PATH rights do not matter). */
static int
reopen_ro(struct sv_call *c, int fd)
{
	char link[32];
	snprintf(link, sizeof(link), "%d", fd);
	return openat(c->sv->self_fd, link, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
}

/*
 * If the file is a #! script: its interpreter into interp and the rest of the
 * line (the kernel passes it as one argument) into arg, as the kernel reads them
 * from the first 256 bytes. Returns 1 for a script, 0 otherwise.
 */
static int
script_line(struct sv_call *c, int fd, char *interp, char *arg, size_t size)
{
	char buf[256 + 1];

	_cleanup_close_ int rd = reopen_ro(c, fd);
	if (rd < 0)
		return 0; /* the kernel will refuse it as it refuses us */
	ssize_t n = pread(rd, buf, sizeof(buf) - 1, 0);
	if (n < 2 || buf[0] != '#' || buf[1] != '!')
		return 0;
	buf[n] = '\0';
	char *end = strchr(buf, '\n');
	if (end)
		*end = '\0';
	char *s = buf + 2;
	s += strspn(s, " \t");
	size_t len = strcspn(s, " \t");
	if (len == 0 || len >= size)
		return 0;
	memcpy(interp, s, len);
	interp[len] = '\0';
	s += len;
	s += strspn(s, " \t");
	size_t alen = strlen(s);
	while (alen && (s[alen - 1] == ' ' || s[alen - 1] == '\t'))
		alen--;
	if (alen >= size)
		alen = size - 1;
	memcpy(arg, s, alen);
	arg[alen] = '\0';
	return 1;
}

/* The PT_INTERP path of an ELF file into out; 1 if it has one, 0 if not. */
static int
elf_interp(struct sv_call *c, int fd, char *out, size_t size)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;

	_cleanup_close_ int rd = reopen_ro(c, fd);
	if (rd < 0 || pread(rd, &eh, sizeof(eh), 0) != sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(ph))
		return 0;
	for (unsigned i = 0; i < eh.e_phnum && i < 256; i++) {
		if (pread(rd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) != sizeof(ph))
			return 0;
		if (ph.p_type != PT_INTERP)
			continue;
		if (ph.p_filesz == 0 || ph.p_filesz >= size ||
		    pread(rd, out, ph.p_filesz, (off_t)ph.p_offset) != (ssize_t)ph.p_filesz)
			return 0;
		out[ph.p_filesz] = '\0';
		return out[0] ? 1 : 0;
	}
	return 0;
}

/* Opens and decides one more file of the chain (an interpreter or a loader). */
static int
check_next(struct sv_call *c, const char *path, int *ret_fd)
{
	struct sv_path p = {.base = -1};

	p.len = (size_t)snprintf(p.s, sizeof(p.s), "%s", path);
	if (p.s[0] != '/')
		p.base = tgt_dirfd(c, AT_FDCWD);
	int fd = sv_path_open(c, &p, 0, 0);
	sv_path_done(&p);
	if (fd < 0)
		return 0; /* missing: the kernel reports it itself */
	int r = sv_decide_fd(c, fd, NULL, false, POLICY_EXEC, NULL);
	if (r == 0)
		r = add_image(c, fd);
	if (r < 0) {
		close(fd);
		return r;
	}
	*ret_fd = fd;
	return 1;
}

/* Decides the #! chain from fd on and the ELF's loader, noting every file checked. */
static int
check_chain(struct sv_call *c, int fd)
{
	char interp[PATH_MAX], arg[PATH_MAX], keep[PATH_MAX];
	int cur = fd; /* borrowed; the files opened here are ours */
	int r = add_image(c, cur), depth = 0;

	const struct policy_rule *keep_rule = c->rule;
	snprintf(keep, sizeof(keep), "%s", c->path); /* the audit line names the binary */
	want.n_interp_args = 0;
	for (; r == 0 && depth < INTERP_MAX; depth++) {
		if (script_line(c, cur, interp, arg, sizeof(interp)) <= 0)
			break;
		if (depth == 0) {
			snprintf(want.interp_args[0], PATH_MAX, "%s", interp);
			snprintf(want.interp_args[1], PATH_MAX, "%s", arg);
			want.n_interp_args = arg[0] ? 2 : 1;
		}
		int next = -1;
		r = check_next(c, interp, &next);
		if (r <= 0)
			break;
		if (cur != fd)
			close(cur);
		cur = next;
		r = 0;
	}
	/* A command line through more than one #! level is not compared. */
	want.check = depth <= 1;
	if (r == 0 && elf_interp(c, cur, interp, sizeof(interp)) > 0) {
		int ld = -1;
		r = check_next(c, interp, &ld);
		if (ld >= 0)
			close(ld);
		r = r < 0 ? r : 0;
	}
	if (cur != fd)
		close(cur);
	if (r == 0) {
		snprintf(c->path, sizeof(c->path), "%s", keep);
		c->rule = keep_rule; /* and the rule that let it run, not the loader's */
	}
	return r;
}

static bool
known_file(const struct sv_call *c, dev_t dev, ino_t ino, const char *path)
{
	for (int i = 0; i < c->n_image; i++)
		if (c->image[i].dev == dev && c->image[i].ino == ino)
			return true;
	/* Overlay filesystems map the lower file, with its own dev/ino: its path is the same. */
	for (int i = 0; path && i < want.n_paths; i++)
		if (strcmp(want.paths[i], path) == 0)
			return true;
	return false;
}

/* Every file mapped into the new image is one that was checked. */
static bool
mappings_known(const struct sv_call *c, pid_t pid)
{
	char maps[64], line[PATH_MAX + 256];

	snprintf(maps, sizeof(maps), "/proc/%d/maps", pid);
	FILE *f = fopen(maps, "re");
	if (!f)
		return false;
	bool ok = true;
	while (ok && fgets(line, sizeof(line), f)) {
		unsigned maj, min;
		unsigned long long ino;
		int off = 0;
		if (sscanf(line, "%*s %*s %*s %x:%x %llu %n", &maj, &min, &ino, &off) < 3 ||
		    ino == 0)
			continue;
		char *path = off ? line + off : NULL;
		if (path)
			path[strcspn(path, "\n")] = '\0';
		ok = known_file(c, makedev(maj, min), (ino_t)ino, path);
	}
	fclose(f);
	return ok;
}

/* The new command line is the one checked, and exec.rules still allow it. */
static bool
cmdline_allowed(struct sv_call *c, pid_t pid)
{
	static char got[ARGV_TEXT_MAX], expect[ARGV_TEXT_MAX];
	char path[64];
	size_t elen = 0;

	snprintf(path, sizeof(path), "%d/cmdline", pid);
	int fd = openat(c->sv->proc_fd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	size_t glen = 0;
	ssize_t n;
	while (glen < sizeof(got) && (n = read(fd, got + glen, sizeof(got) - glen)) > 0)
		glen += (size_t)n;
	close(fd);

	if (want.check) {
		/* A script starts as: interpreter, its argument, the script path, argv[1:]. */
		if (want.n_interp_args) {
			for (int i = 0; i < want.n_interp_args; i++)
				elen += (size_t)snprintf(expect + elen, sizeof(expect) - elen,
				                         "%s%c", want.interp_args[i], 0);
			elen += (size_t)snprintf(expect + elen, sizeof(expect) - elen, "%s%c",
			                         want.script, 0);
			size_t first = strnlen(want.cmdline, want.len) + 1;
			if (first < want.len && elen + want.len - first <= sizeof(expect)) {
				memcpy(expect + elen, want.cmdline + first, want.len - first);
				elen += want.len - first;
			}
		} else {
			memcpy(expect, want.cmdline, want.len);
			elen = want.len;
		}
		if (glen < elen || memcmp(got, expect, elen) != 0 ||
		    (want.complete && glen != elen))
			return false;
	}
	const struct policy_exec_rule *rules;
	if (policy_exec_rules(c->sv->policy, &rules) == 0)
		return true;
	if (glen == sizeof(got))
		return false; /* longer than we can read: the rules cannot be decided */
	const char *argv[ARGV_MAX + 1];
	split(got, glen, argv, ARRAY_SIZE(argv));
	const struct policy_exec_rule *rule = NULL;
	if (policy_exec_decide(c->sv->policy, c->path, argv, &rule) == POLICY_EXEC_DENY) {
		c->exec_rule = rule;
		return false;
	}
	return true;
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

static void
kill_image(struct sv_call *c, pid_t w, const char *why)
{
	int status;

	/* It never runs an instruction. Its death is reported to us first; we collect it. */
	kill(w, SIGKILL);
	for (;;) {
		pid_t r = waitpid(-1, &status, __WALL | __WNOTHREAD);
		if (r < 0 && errno == EINTR && !sv_notify_stopping())
			continue;
		if (r < 0 || (r == w && (WIFEXITED(status) || WIFSIGNALED(status))))
			break;
	}
	c->allowed = false;
	c->decided = true;
	c->err = EACCES;
	size_t n = strlen(c->path);
	snprintf(c->path + n, sizeof(c->path) - n, " (%s: killed)", why);
}

/* After the answer: wait for the exec stop (verify) or the interrupt stop (failed exec). */
static void
verify_image(struct sv_call *c)
{
	pid_t tgid = c->tgid ? c->tgid : tgid_of(c);
	int status;

	for (;;) {
		/*
		 * Any tracee of this thread, not one pid: a non-leader thread that execs
		 * takes the leader's pid, and a wait on its old tid would never end. This
		 * thread traces one exec at a time; it has no children.
		 */
		pid_t w = waitpid(-1, &status, __WALL | __WNOTHREAD);
		if (w < 0 && errno == EINTR && !sv_notify_stopping())
			continue;
		if (w > 0 && w != c->tid && w != tgid)
			continue; /* an orphan this thread adopted: reaped, nothing more */
		if (w < 0 || WIFEXITED(status) || WIFSIGNALED(status)) {
			if (w == c->sv->agent)
				sv_agent_reaped(c->sv, status);
			return;
		}
		int event = (status >> 16) & 0xff;
		if (event == PTRACE_EVENT_EXEC) {
			if (!mappings_known(c, w))
				kill_image(c, w, "the new image maps a file that was not checked");
			else if (!cmdline_allowed(c, w))
				kill_image(c, w, "the command line is not the one checked");
			else
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

int
sv_exec_seize(struct sv_call *c)
{
	if (ptrace(PTRACE_SEIZE, c->tid, 0, PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL) < 0)
		return -errno;
	/* Queued now, it stops the thread on its way back if the exec fails. */
	if (ptrace(PTRACE_INTERRUPT, c->tid, 0, 0) < 0) {
		int e = errno;
		ptrace(PTRACE_DETACH, c->tid, 0, 0);
		return -e;
	}
	return 0;
}

/* The path the kernel hands a script's interpreter (bprm->filename). */
static void
script_name(const struct sv_path *p, const char *raw, int dirfd)
{
	if (p->len == 0)
		snprintf(want.script, sizeof(want.script), "/dev/fd/%d", dirfd);
	else if (raw[0] == '/' || dirfd == AT_FDCWD)
		snprintf(want.script, sizeof(want.script), "%s", raw);
	else
		snprintf(want.script, sizeof(want.script), "/dev/fd/%d/%s", dirfd, raw);
}

/* exec.rules on the command line read: a matching deny rule refuses it here. */
static int
decide_rules(struct sv_call *c, enum policy_exec_action *action)
{
	const struct policy_exec_rule *rule = NULL, *rules;

	if (policy_exec_rules(c->sv->policy, &rules) == 0)
		return 0;
	const char *argv[ARGV_MAX + 1];
	static char copy[ARGV_TEXT_MAX];
	memcpy(copy, want.cmdline, want.len);
	split(copy, want.len, argv, ARRAY_SIZE(argv));
	/* An argv longer than we keep cannot be decided: refused. */
	if (!want.complete) {
		c->allowed = false;
		return -E2BIG;
	}
	*action = policy_exec_decide(c->sv->policy, c->path, argv, &rule);
	c->exec_rule = rule;
	if (rule && *action == POLICY_EXEC_DENY) {
		c->allowed = false;
		return -EACCES;
	}
	return 0;
}

static void
do_exec(struct sv_call *c, int dirfd, uint64_t path, uint64_t argv_addr, uint64_t envp_addr,
        int flags)
{
	enum policy_exec_action action = policy_exec_default(c->sv->policy);
	char raw[PATH_MAX];
	struct sv_path p;

	if (sv_redirect_standin(c, path))
		return;
	if (flags & ~(AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW)) {
		c->err = EINVAL;
		return;
	}
	int r = tgt_read_string(c, path, raw, sizeof(raw));
	if (r >= 0)
		r = sv_path_set(c, dirfd, raw, flags & AT_EMPTY_PATH ? SV_PATH_EMPTY_OK : 0, &p);
	if (r < 0) {
		c->err = -r;
		return;
	}
	script_name(&p, raw, dirfd);
	bool raw_ok = p.len > 0 && (raw[0] == '/' || dirfd == AT_FDCWD);
	int fd = p.len == 0 ? TAKE_FD(p.base)
	                    : sv_path_open(c, &p, flags & AT_SYMLINK_NOFOLLOW ? O_NOFOLLOW : 0, 0);
	if (fd < 0) {
		c->err = -sv_path_error(c, &p, fd, POLICY_EXEC,
		                        flags & AT_SYMLINK_NOFOLLOW ? O_NOFOLLOW : 0);
		sv_path_done(&p);
		return;
	}
	want.n_paths = 0;
	r = sv_decide_fd(c, fd, NULL, p.own_fd || p.len == 0, POLICY_EXEC, NULL);
	if (r == 0)
		r = read_argv(c, argv_addr); /* the count */
	if (r >= 0)
		r = decide_rules(c, &action);
	if (r < 0)
		goto out;
	/* The agent's own re-exec runs in place; its children's follow exec.default and rules. */
	c->tgid = tgid_of(c);
	bool own = c->tgid == c->sv->agent;
	if (!own && action == POLICY_EXEC_DENY) {
		c->allowed = false;
		r = -EACCES;
		goto out;
	}
	if (!own && action == POLICY_EXEC_REDIRECT && c->sv->hand_ticket) {
		/*
		 * The image never runs here: its interpreters and loader are the task's
		 * business. The runner needs the whole command line: one longer than we
		 * keep is refused.
		 */
		r = want.complete
		        ? sv_redirect_capture(c, raw, raw_ok, want.cmdline, want.len, envp_addr)
		        : -E2BIG;
		if (r == 0)
			r = sv_redirect_begin(c);
		if (r < 0) {
			/* Not captured, not run: refused (fail closed). */
			c->allowed = false;
			r = r == -E2BIG ? r : -EACCES;
		}
		goto out;
	}
	r = check_chain(c, fd);
out:
	close(fd);
	sv_path_done(&p);
	if (r < 0) {
		c->err = -r;
		return;
	}
	if (c->redirect)
		return;
	r = sv_exec_seize(c);
	if (r < 0) {
		/* Without the exec stop there is no check of the image: refuse. */
		c->allowed = false;
		c->err = EACCES;
		return;
	}
	c->after = verify_image;
	c->cont = true;
}

void
sv_execve(struct sv_call *c)
{
	const __u64 *a = c->req->data.args;
	do_exec(c, AT_FDCWD, a[0], a[1], a[2], 0);
}

void
sv_execveat(struct sv_call *c)
{
	const __u64 *a = c->req->data.args;
	do_exec(c, (int)a[0], a[1], a[2], a[3], (int)a[4]);
}

/* SPDX-License-Identifier: MIT */
/*
 * execve and execveat: the binary is resolved and decided for exec access and
 * by exec.rules (path and argv); then the kernel carries the exec out.
 */
#include <fcntl.h>
#include <string.h>

#include "moat/macro.h"
#include "sv.h"

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
			c->err = EACCES;
			return;
		}
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

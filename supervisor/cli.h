/* SPDX-License-Identifier: MIT */
/* Shared pieces of the moat command-line tool. */
#ifndef MOAT_SUPERVISOR_CLI_H
#define MOAT_SUPERVISOR_CLI_H

#include <limits.h>

#include "moat/policy.h"

/* Exit codes of every moat command. */
enum {
	EXIT_OK = 0,
	EXIT_DENIED = 1, /* moat check: some path is denied */
	EXIT_USAGE = 2,  /* bad arguments or a bad policy */
};

struct cli_policy {
	const char *file; /* --policy; NULL: the embedded default */
	const char *cwd;  /* --cwd; NULL: the current directory */
	char cwd_canon[PATH_MAX];
	struct policy *policy;
};

/* Loads the policy the options name; on failure prints one line and returns -errno. */
int cli_policy_load(struct cli_policy *c);
void cli_policy_done(struct cli_policy *c);

/* env->resolve for policy loading: realpath() of an existing path. */
int canon_resolve(const char *path, char *out, size_t size, void *userdata);

/*
 * The canonical form of path (relative to cwd) as far as it exists: symlinks
 * resolved in the longest existing prefix, the rest normalised lexically.
 */
int canon_path(const char *cwd, const char *path, char *out, size_t size);

/* Prints "Try 'moat CMD --help'." after a usage error and returns EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

int cmd_run(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_mounts(int argc, char **argv);
int cmd_default_policy(int argc, char **argv);

#endif

/* SPDX-License-Identifier: MIT */
/* Policy loading and usage errors shared by the moat commands. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "moat/log.h"

extern char **environ;

int
cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: %s%s", log_program, cmd ? cmd : "", cmd ? ": " : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'moat %s%s--help'.\n", cmd ? cmd : "", cmd ? " " : "");
	return EXIT_USAGE;
}

static void
print_diag(const struct policy_diag *d)
{
	if (d->line)
		fprintf(stderr, "%s: %s:%u:%u: %s%s%s\n", log_program, d->source, d->line, d->col,
		        d->key, *d->key ? ": " : "", d->msg);
	else
		fprintf(stderr, "%s: %s: %s\n", log_program, d->source, d->msg);
}

int
cli_policy_load(struct cli_policy *c)
{
	struct policy_diag diag = {0};
	char here[PATH_MAX];
	const char *cwd = c->cwd;

	if (!cwd) {
		if (!getcwd(here, sizeof(here)))
			return log_error_errno(-errno, "cannot read the current directory");
		cwd = here;
	}
	int r = canon_resolve(cwd, c->cwd_canon, sizeof(c->cwd_canon), NULL);
	if (r < 0)
		return log_error_errno(r, "--cwd %s", cwd);
	struct policy_env env = {
	    .cwd = c->cwd_canon,
	    .environ = environ,
	    .resolve = canon_resolve,
	};
	r = c->file ? policy_load_file(c->file, &env, &c->policy, &diag)
	            : policy_load_default(&env, &c->policy, &diag);
	if (r < 0)
		print_diag(&diag);
	return r;
}

void
cli_policy_done(struct cli_policy *c)
{
	c->policy = policy_free(c->policy);
}

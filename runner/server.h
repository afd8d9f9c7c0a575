/* SPDX-License-Identifier: MIT */
/*
 * The runner as a library: serves clients on an event base, as the
 * moat-runner daemon does and as moat run embeds it.
 */
#ifndef MOAT_RUNNER_SERVER_H
#define MOAT_RUNNER_SERVER_H

#include <event2/event.h>
#include <stdbool.h>
#include <sys/types.h>

struct runner_config {
	const char *policy_file; /* NULL: the embedded default policy */
	uid_t owner;             /* clients accepted: this uid and root */
	unsigned max_tasks;      /* 0: RUNNER_MAX_TASKS */
	const char *hide;        /* a directory tasks must not see (the socket's), or NULL */
};

#define RUNNER_MAX_TASKS 256

struct runner;

/* Loads the policy (errors go to stderr, -EINVAL). */
int runner_new(struct event_base *base, const struct runner_config *c, struct runner **ret);
struct runner *runner_free(struct runner *r);

/* Serves clients accepted on a listening socket (the runner owns it from here). */
int runner_listen(struct runner *r, int fd);

/* Serves one connected client (a socketpair's end, say); the runner owns fd. */
int runner_adopt(struct runner *r, int fd);

/* Re-reads the policy file; on an error keeps the old policy and says why. */
int runner_reload(struct runner *r);

/*
 * Stops accepting; calls done() once no task is left. With now, kills every
 * task first.
 */
void runner_drain(struct runner *r, bool now, void (*done)(void *userdata), void *userdata);

#endif

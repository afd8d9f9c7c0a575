/* SPDX-License-Identifier: MIT */
/*
 * The runner as a library: serves clients on an event base, as the
 * moat-runner daemon does and as moat run embeds it.
 */
#ifndef MOAT_RUNNER_SERVER_H
#define MOAT_RUNNER_SERVER_H

#include <event2/event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct policy;

struct runner_config {
	const char *policy_file; /* NULL: the embedded default policy */
	uid_t owner;             /* clients accepted: this uid and root */
	unsigned max_tasks;      /* 0: RUNNER_MAX_TASKS */
	const char *hide;        /* a directory tasks must not see (the socket's), or NULL */
	/* Embedded in moat run: every task follows this policy (borrowed, outlives the runner). */
	const struct policy *policy;
	bool share_tmp; /* tasks share /tmp where the surface writes it (see view_build) */
	bool share_net; /* runner.network none: one namespace for all tasks (when root) */
	unsigned warm;  /* tasks kept prepared for the last client (at most 4): launches skip
	                   making namespaces and mounts */
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

/*
 * Serves one connected client that holds a ticket: the exec frame (its body,
 * without the length header) the supervisor captured. When the client's hello
 * names the ticket within ttl_s, the task starts; the client sends no exec.
 * A ticket is good once. The runner owns fd.
 */
int runner_adopt_ticket(struct runner *r, int fd, const char *ticket, const uint8_t *exec_body,
                        size_t len, unsigned ttl_s);

/* Re-reads the policy file; on an error keeps the old policy and says why. */
int runner_reload(struct runner *r);

/*
 * Stops accepting; calls done() once no task is left. With now, kills every
 * task first.
 */
void runner_drain(struct runner *r, bool now, void (*done)(void *userdata), void *userdata);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * The runner that moat run embeds: a child process of moat, started before the
 * agent and outside its filter, serving the tickets of redirected execs. It
 * is a process of its own so that a fault in it cannot take the supervisor
 * down: the supervisor then fails each redirected exec with a message.
 */
#ifndef MOAT_RUNNER_EMBED_H
#define MOAT_RUNNER_EMBED_H

#include <stdbool.h>
#include <sys/types.h>

#include "moat/proto.h"

struct policy;

/* How long a ticket waits for its stand-in to present it. */
#define EMBED_TICKET_TTL_S 30

struct runner_link {
	pid_t pid;   /* the runner process, a child of the caller */
	int control; /* SOCK_SEQPACKET: one ticket per message, fds attached */
};

/*
 * Forks the runner process; every task follows policy p (the child's copy).
 * Call it before any thread starts. The runner exits when control closes or
 * moat dies, killing its tasks and, if agent_group (a cgroup directory, or
 * NULL) is given, every process left in it: moat killed with SIGKILL does not
 * leave the agent's descendants running.
 */
int runner_embed_start(const struct policy *p, const char *agent_group, struct runner_link *ret);

/*
 * Hands the runner a ticket for exec: conn is the runner's end of the stand-in's
 * connection, passed on (and closed here) on success. -errno (-EPIPE: the runner
 * is gone) leaves conn to the caller.
 */
int runner_embed_ticket(struct runner_link *l, const char *ticket, const struct proto_msg *exec,
                        int conn);

/* Answers the stand-in on conn with an error frame saying why (err: -errno), and closes it. */
void runner_embed_refuse(int conn, int err);

/* Closes the link; the runner kills its tasks and exits. Reaps it. */
void runner_embed_stop(struct runner_link *l);

#endif

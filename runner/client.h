/* SPDX-License-Identifier: MIT */
/* The client side of the runner protocol: moat-runner exec, ps, kill and moat-shim. */
#ifndef MOAT_RUNNER_CLIENT_H
#define MOAT_RUNNER_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The runner's socket: given, else $MOAT_RUNNER_SOCKET, else
 * $XDG_RUNTIME_DIR/moat/runner.sock, else /run/moat/runner.sock.
 */
const char *client_socket_path(const char *given, char *buf, size_t size);

/* Exit statuses of a client that are not the command's. */
#define CLIENT_EXIT_RUNNER   125 /* the runner could not be reached or refused */
#define CLIENT_EXIT_NOEXEC   126 /* the command exists but could not be executed */
#define CLIENT_EXIT_NOTFOUND 127
/* Internal: a status of CLIENT_SIGNALED + N is a death by signal N (never returned). */
#define CLIENT_SIGNALED 256

struct client_exec {
	const char *socket; /* the runner's socket */
	const char *path;   /* NULL: argv[0] looked up on the task's PATH */
	char *const *argv;
	char *const *env;
	const char *cwd;     /* NULL: the current directory */
	const char *session; /* NULL: the runner names it */
};

/*
 * Runs a command through the runner with this process's stdio (a pty when
 * stdin and stdout are terminals), forwarding signals and window size. Returns
 * the exit status to exit with: the command's, or one of CLIENT_EXIT_* with a
 * message on stderr. A command killed by signal N kills this process with N
 * (128+N if N does not terminate by default).
 */
int client_exec(const struct client_exec *e, const char *prog);

/*
 * The stand-in of a redirected exec: sock is its connection to the runner, which
 * holds ticket. Presents it and relays, as client_exec() does.
 */
int client_standin(int sock, const char *ticket, const char *prog);

/* Prints the runner's tasks; 0 or CLIENT_EXIT_RUNNER. */
int client_ps(const char *socket, const char *prog);

/* Kills tasks by session, id or all; prints how many. 0 or CLIENT_EXIT_RUNNER. */
int client_kill(const char *socket, const char *session, uint64_t id, bool all, const char *prog);

#endif

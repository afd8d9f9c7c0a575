/* SPDX-License-Identifier: MIT */
/*
 * moat-shim: run under another name (a symlink: /opt/wrap/bin/git -> moat-shim),
 * it runs that command through the runner. The command is the next file of
 * that name on PATH that is not this shim, so a directory of shims can go first
 * on PATH.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client.h"
#include "moat/proto.h"

extern char **environ;

#ifdef MOAT_SANITIZED
/*
 * The stand-in runs under the agent's filter, where LeakSanitizer's exit-time
 * scan (ptrace of itself, /proc/PID/task) is refused: it would turn every
 * command's status into 1. Sanitizer builds only.
 */
const char *__asan_default_options(void);
const char *
__asan_default_options(void)
{
	return "detect_leaks=0";
}
#endif

/* name on PATH, skipping every file that is this very program. */
static int
find_command(const char *name, char *out, size_t size)
{
	const char *path = getenv("PATH");
	struct stat self, st;

	if (stat("/proc/self/exe", &self) < 0)
		return -errno;
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path; *p;) {
		const char *end = strchr(p, ':');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		if (n && (size_t)snprintf(out, size, "%.*s/%s", (int)n, p, name) < size &&
		    stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0 &&
		    !(st.st_dev == self.st_dev && st.st_ino == self.st_ino))
			return 0;
		p += n + (end ? 1 : 0);
	}
	return -ENOENT;
}

/*
 * Started by moat run in place of a redirected command: MOAT_STANDIN is
 * "FD:TICKET", the connection to the runner and the ticket it holds.
 */
static int
standin(const char *spec)
{
	char ticket[PROTO_TICKET_MAX + 1];
	char *end;
	sigset_t none;

	long fd = strtol(spec, &end, 10);
	if (end == spec || *end != ':' || fd < 3 || fd > INT_MAX ||
	    strlen(end + 1) >= sizeof(ticket)) {
		fprintf(stderr, "moat: MOAT_STANDIN=%s: expected FD:TICKET\n", spec);
		return CLIENT_EXIT_RUNNER;
	}
	snprintf(ticket, sizeof(ticket), "%s", end + 1);
	unsetenv("MOAT_STANDIN");
	/* moat blocked every signal for the exec; the command's own state is in the ticket. */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	fcntl((int)fd, F_SETFD, FD_CLOEXEC);
	return client_standin((int)fd, ticket, "moat");
}

int
main(int argc, char **argv)
{
	const char *name = argc > 0 ? strrchr(argv[0], '/') : NULL;
	char path[PATH_MAX], buf[PATH_MAX];
	const char *spec = getenv("MOAT_STANDIN");

	if (spec)
		return standin(spec);

	name = name ? name + 1 : argc > 0 ? argv[0] : "";
	if (!*name || strcmp(name, "moat-shim") == 0) {
		fprintf(stderr,
		        "moat-shim runs the command it is named after through the moat "
		        "runner.\n"
		        "Link it under a command's name: ln -s moat-shim /opt/wrap/bin/git,\n"
		        "then put /opt/wrap/bin first on PATH. The runner's socket is\n"
		        "$MOAT_RUNNER_SOCKET, else $XDG_RUNTIME_DIR/moat/runner.sock, else\n"
		        "/run/moat/runner.sock.\n");
		return 2;
	}
	if (strchr(name, '/') || find_command(name, path, sizeof(path)) < 0) {
		fprintf(stderr, "moat-shim: %s: command not found\n", name);
		return CLIENT_EXIT_NOTFOUND;
	}
	struct client_exec e = {
	    .socket = client_socket_path(NULL, buf, sizeof(buf)),
	    .path = path,
	    .argv = argv,
	    .env = environ,
	};
	return client_exec(&e, name);
}

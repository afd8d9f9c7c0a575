/* SPDX-License-Identifier: MIT */
/* moat-runner: the task runner daemon, and its clients (exec, ps, kill). */
#include <errno.h>
#include <event2/event.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "client.h"
#include "moat/log.h"
#include "moat/macro.h"
#include "moat/proto.h"
#include "server.h"

const char *log_program = "moat-runner";

extern char **environ;

static void
usage(FILE *out)
{
	fprintf(out,
	        "Usage: moat-runner [--socket PATH] [--policy FILE] [--owner USER]\n"
	        "       moat-runner exec [--socket PATH] [--cwd DIR] [--env K=V]... [--session S] "
	        "-- CMD [ARGS]\n"
	        "       moat-runner ps [--socket PATH]\n"
	        "       moat-runner kill [--socket PATH] SESSION | --id ID | --all\n"
	        "\n"
	        "Without a command, serves tasks on a unix socket until SIGTERM (which lets\n"
	        "running tasks finish; a second one kills them). SIGHUP re-reads the policy.\n"
	        "Each task runs in new pid and mount namespaces where the policy's deny and\n"
	        "private paths are not visible, with a sanitised environment, no\n"
	        "capabilities and a seccomp filter of its own.\n"
	        "\n"
	        "  --socket PATH  the socket (default: $MOAT_RUNNER_SOCKET, else\n"
	        "                 $XDG_RUNTIME_DIR/moat/runner.sock, else /run/moat/runner.sock);\n"
	        "                 it is made 0600 in a 0700 directory\n"
	        "  --policy FILE  the policy (default: the embedded default policy)\n"
	        "  --owner USER   the user the socket belongs to and whose clients are served\n"
	        "                 (default: the runner's own user); root is always served.\n"
	        "                 A root runner runs each task as its client's uid and gids.\n"
	        "\n"
	        "exec runs CMD through the runner as if it ran here: the same stdout, stderr\n"
	        "and exit status (128+N when a signal N ended it), signals and window size\n"
	        "forwarded, a pty when stdin and stdout are terminals.\n"
	        "  --cwd DIR      the task's working directory (default: the current one)\n"
	        "  --env K=V      the task's environment instead of this one's (repeatable)\n"
	        "  --session S    a name for 'moat-runner kill S'\n"
	        "\n"
	        "Exit status: the command's for exec; 125 the runner cannot be reached or\n"
	        "refused, 126 the command cannot be executed, 127 it was not found; 2 usage.\n");
}

static int _printf_(1, 2) usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "moat-runner: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'moat-runner --help'.\n");
	return 2;
}

enum { OPT_SOCKET = 0x100, OPT_POLICY, OPT_OWNER, OPT_CWD, OPT_ENV, OPT_SESSION, OPT_ID, OPT_ALL };

static const struct option options[] = {
    {"socket", required_argument, NULL, OPT_SOCKET},
    {"policy", required_argument, NULL, OPT_POLICY},
    {"owner", required_argument, NULL, OPT_OWNER},
    {"cwd", required_argument, NULL, OPT_CWD},
    {"env", required_argument, NULL, OPT_ENV},
    {"session", required_argument, NULL, OPT_SESSION},
    {"id", required_argument, NULL, OPT_ID},
    {"all", no_argument, NULL, OPT_ALL},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {0},
};

struct args {
	const char *socket, *policy, *owner, *cwd, *session;
	char **env;
	size_t n_env;
	uint64_t id;
	bool all;
};

/* Which options each command takes. */
static bool
allowed(const char *cmd, int opt)
{
	switch (opt) {
	case OPT_SOCKET:
		return true;
	case OPT_POLICY:
	case OPT_OWNER:
		return !cmd;
	case OPT_CWD:
	case OPT_ENV:
	case OPT_SESSION:
		return cmd && strcmp(cmd, "exec") == 0;
	case OPT_ID:
	case OPT_ALL:
		return cmd && strcmp(cmd, "kill") == 0;
	default:
		return false;
	}
}

static int
parse(int argc, char **argv, const char *cmd, struct args *a)
{
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+hV", options, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			exit(0);
		}
		if (c == 'V') {
			printf("moat-runner %s (protocol %d)\n", MOAT_VERSION, PROTO_VERSION);
			exit(0);
		}
		if (c == '?')
			return usage_error("bad option");
		if (!allowed(cmd, c))
			return usage_error("option '%s' does not apply here", argv[optind - 1]);
		switch (c) {
		case OPT_SOCKET:
			a->socket = optarg;
			break;
		case OPT_POLICY:
			a->policy = optarg;
			break;
		case OPT_OWNER:
			a->owner = optarg;
			break;
		case OPT_CWD:
			a->cwd = optarg;
			break;
		case OPT_SESSION:
			a->session = optarg;
			break;
		case OPT_ALL:
			a->all = true;
			break;
		case OPT_ID: {
			char *end;
			errno = 0;
			a->id = strtoull(optarg, &end, 10);
			if (errno || *end || !a->id)
				return usage_error("--id: '%s' is not a task id", optarg);
			break;
		}
		case OPT_ENV: {
			if (!strchr(optarg, '=') || optarg[0] == '=')
				return usage_error("--env: '%s' is not K=V", optarg);
			char **n = realloc(a->env, (a->n_env + 2) * sizeof(char *));
			if (!n)
				return 2;
			a->env = n;
			a->env[a->n_env++] = optarg;
			a->env[a->n_env] = NULL;
			break;
		}
		}
	}
	return 0;
}

/* ---- the daemon ---- */

static int
prepare_dir(const char *sock, uid_t owner, gid_t group)
{
	char buf[PATH_MAX];
	struct stat st;

	snprintf(buf, sizeof(buf), "%s", sock);
	const char *dir = dirname(buf);
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return log_error_errno(-errno, "mkdir %s", dir);
	if (lstat(dir, &st) < 0)
		return log_error_errno(-errno, "%s", dir);
	if (!S_ISDIR(st.st_mode))
		return log_error("%s is not a directory", dir), -ENOTDIR;
	if (st.st_uid != geteuid() && st.st_uid != owner)
		return log_error("%s belongs to uid %u, not to the runner", dir,
		                 (unsigned)st.st_uid),
		       -EPERM;
	if (st.st_mode & 077)
		return log_error("%s is accessible to others (mode %04o): it must be 0700", dir,
		                 (unsigned)(st.st_mode & 07777)),
		       -EPERM;
	if (owner != geteuid() && chown(dir, owner, group) < 0)
		return log_error_errno(-errno, "chown %s", dir);
	return 0;
}

static int
bind_socket(const char *path, uid_t owner, gid_t group)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};

	if (strlen(path) >= sizeof(sa.sun_path))
		return log_error("%s: socket path too long", path), -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return log_error_errno(-errno, "socket");
	/* A socket left by a runner that died is replaced; a live one is not. */
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		close(fd);
		return log_error("%s: another runner is serving this socket", path), -EADDRINUSE;
	}
	if (errno == ECONNREFUSED)
		unlink(path);
	close(fd);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return log_error_errno(-errno, "socket");
	mode_t old = umask(0177);
	int r = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (r < 0 || (owner != geteuid() && chown(path, owner, group) < 0) || listen(fd, 128) < 0) {
		r = log_error_errno(-errno, "%s", path);
		close(fd);
		return r;
	}
	return fd;
}

struct daemon {
	struct event_base *base;
	struct runner *r;
	int terms;
};

static void
drained(void *arg)
{
	event_base_loopexit(arg, NULL);
}

static void
on_signal(evutil_socket_t sig, short what, void *arg)
{
	struct daemon *d = arg;

	if (sig == SIGHUP) {
		if (runner_reload(d->r) == 0)
			log_error("policy reloaded");
		return;
	}
	runner_drain(d->r, ++d->terms > 1, drained, d->base);
}

static int
serve(const struct args *a)
{
	char buf[PATH_MAX];
	const char *path = client_socket_path(a->socket, buf, sizeof(buf));
	/* Tasks prepared ahead and one network namespace: launches skip making either. */
	struct runner_config cfg = {
	    .policy_file = a->policy, .owner = geteuid(), .share_net = true, .warm = 2};
	gid_t group = getegid();
	struct daemon d = {0};
	struct event *sigs[3] = {0};
	static const int signals[] = {SIGTERM, SIGINT, SIGHUP};
	int r;

	if (a->owner) {
		struct passwd *pw = getpwnam(a->owner);
		char *end;
		unsigned long uid = strtoul(a->owner, &end, 10);
		if (!pw && (*end || !*a->owner))
			return usage_error("--owner: no user '%s'", a->owner);
		cfg.owner = pw ? pw->pw_uid : (uid_t)uid;
		group = pw ? pw->pw_gid : (gid_t)uid;
	}
	char dirbuf[PATH_MAX];
	snprintf(dirbuf, sizeof(dirbuf), "%s", path);
	cfg.hide = dirname(dirbuf);
	signal(SIGPIPE, SIG_IGN);
	d.base = event_base_new();
	if (!d.base)
		return 1;
	r = runner_new(d.base, &cfg, &d.r);
	if (r < 0)
		return r == -EINVAL ? 2 : 1;
	r = prepare_dir(path, cfg.owner, group);
	int fd = r < 0 ? r : bind_socket(path, cfg.owner, group);
	if (fd < 0 || runner_listen(d.r, fd) < 0) {
		runner_free(d.r);
		event_base_free(d.base);
		return 1;
	}
	for (size_t i = 0; i < ARRAY_SIZE(signals); i++) {
		sigs[i] = evsignal_new(d.base, signals[i], on_signal, &d);
		if (sigs[i])
			event_add(sigs[i], NULL);
	}
	log_error("serving %s", path);
	event_base_dispatch(d.base);
	unlink(path);
	for (size_t i = 0; i < ARRAY_SIZE(signals); i++)
		if (sigs[i])
			event_free(sigs[i]);
	runner_free(d.r);
	event_base_free(d.base);
	return 0;
}

int
main(int argc, char **argv)
{
	const char *cmd = NULL;
	struct args a = {0};
	char buf[PATH_MAX];

	if (argc > 1 && (strcmp(argv[1], "exec") == 0 || strcmp(argv[1], "ps") == 0 ||
	                 strcmp(argv[1], "kill") == 0)) {
		cmd = argv[1];
		argc--;
		argv++;
	}
	if (parse(argc, argv, cmd, &a))
		return 2;
	const char *sock = client_socket_path(a.socket, buf, sizeof(buf));
	if (!cmd) {
		if (optind < argc)
			return usage_error("unknown command '%s'", argv[optind]);
		return serve(&a);
	}
	if (strcmp(cmd, "ps") == 0) {
		if (optind < argc)
			return usage_error("ps takes no arguments ('%s')", argv[optind]);
		return client_ps(sock, log_program);
	}
	if (strcmp(cmd, "kill") == 0) {
		int n = (optind < argc) + !!a.id + a.all;
		if (n != 1 || argc - optind > 1)
			return usage_error("kill takes one of SESSION, --id ID or --all");
		return client_kill(sock, optind < argc ? argv[optind] : NULL, a.id, a.all,
		                   log_program);
	}
	if (optind >= argc)
		return usage_error("exec needs a command after '--'");
	struct client_exec e = {
	    .socket = sock,
	    .argv = argv + optind,
	    .env = a.env ? a.env : environ,
	    .cwd = a.cwd,
	    .session = a.session,
	};
	int r = client_exec(&e, log_program);
	free(a.env);
	return r;
}

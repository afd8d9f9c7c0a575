/* SPDX-License-Identifier: MIT */
/*
 * The runner's costs, against native and against the peers that do the same
 * job (bubblewrap, unshare), measured in one run. It asserts no timing: it
 * prints numbers, ratios and whether the goals are met.
 *
 *   runner_launch [--socket S] [--runner PATH] [--iterations N] [--warmup N]
 *                 [--methods a,b,b2,c,d]
 *   runner_launch --throughput BYTES [--runs N] [--socket S] [--runner PATH]
 *   runner_launch --memory N [--socket S]
 *
 * Launch (default): the wall time of starting `true` and getting its exit
 * status, N iterations (default 200) after the warm-ups (default 10), the
 * methods taking turns so that a change in the machine's load hits them alike:
 *   a   native: posix_spawn(/bin/true) + waitpid
 *   b   posix_spawn(moat-runner exec --socket S -- true) + waitpid: what a shell
 *       pays, the client's own exec and start-up included
 *   b2  an in-process client: connect, hello + exec, read until the exit frame
 *       (the runner's own cost; it also notes when the started frame came)
 *   c   bwrap --unshare-pid --unshare-net --ro-bind / / --dev /dev --proc /proc true
 *   d   unshare --pid --mount --net --fork --mount-proc true
 * Every child gets /dev/null as stdin and stdout (no pty from the runner).
 *
 * Throughput: BYTES of `head -c BYTES /dev/zero` through a native pipe into
 * `cat > /dev/null`; through `moat-runner exec` whose stdout is a pipe into
 * the same cat (an agent reads its child's output from a pipe: the client
 * hands that pipe to the command); and streamed as stdout frames to the
 * in-process client (which only counts them: the path of output to a file or
 * a socket). The median of --runs (default 3).
 *
 * Memory: the runner daemon's VmRSS (the socket's peer, SO_PEERCRED) idle, with
 * 1 and with N tasks running `sleep 30`, and idle again once they are gone;
 * "inits" adds every child of the daemon (each task's init, a fork of it). RSS
 * counts a page shared between the daemon and its forks in each of them; PSS
 * (smaps_rollup) splits it, so the PSS column is the memory really added.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "moat/macro.h"
#include "moat/proto.h"

extern char **environ;

#define ITER_MAX  100000u
#define RUNS_MAX  64u
#define TASKS_MAX 250u                                          /* the runner allows 256 */
#define IN_CAP    (PROTO_HEADER_SIZE + PROTO_CHUNK_MAX + 8192u) /* a data frame, an error */

struct opts {
	const char *socket, *runner, *methods;
	unsigned iterations, warmup, runs, tasks;
	unsigned long long bytes;
};

static struct opts o = {.iterations = 200, .warmup = 10, .runs = 3};

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static _Noreturn void
die(const char *what)
{
	fprintf(stderr, "runner_launch: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* ---- spawning ---- */

/*
 * Runs argv (looked up on PATH) with stdin from /dev/null, stdout to out (or
 * /dev/null when out < 0), stderr inherited; returns the wait status, or -1.
 */
static int
spawn_wait(char *const argv[], int out)
{
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int status = -1;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	if (out >= 0)
		posix_spawn_file_actions_adddup2(&fa, out, 1);
	else
		posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	int r = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (r != 0) {
		errno = r;
		return -1;
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return status;
}

/* ---- the in-process client ---- */

struct client {
	struct proto_buf req; /* hello + exec, encoded once */
	uint8_t *in;          /* frames read, not yet decoded */
	size_t in_len;
	uint64_t t_started;       /* when the started frame came (0: not yet) */
	unsigned long long bytes; /* stdout bytes received */
};

static int
connect_runner(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};

	if (strlen(o.socket) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, o.socket);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int r = -errno;
		close(fd);
		return r;
	}
	return fd;
}

/* Encodes hello + exec of argv, with this process's environment and cwd. */
static void
client_init(struct client *c, const char *const *argv, const char *session)
{
	static char cwd[PATH_MAX];
	size_t argc = 0, envc = 0;

	while (argv[argc])
		argc++;
	while (environ[envc])
		envc++;
	if (!getcwd(cwd, sizeof(cwd)))
		die("getcwd");
	struct proto_msg hello = {.type = PROTO_HELLO, .u.hello = {.version = PROTO_VERSION}};
	struct proto_msg exec = {.type = PROTO_EXEC,
	                         .u.exec = {.argv = argv,
	                                    .argc = argc,
	                                    .env = (const char *const *)environ,
	                                    .envc = envc,
	                                    .cwd = cwd,
	                                    .session = session}};
	*c = (struct client){0};
	if (proto_encode(&c->req, &hello) < 0 || proto_encode(&c->req, &exec) < 0)
		die("encode hello + exec");
	c->in = malloc(IN_CAP);
	if (!c->in)
		die("malloc");
}

static void
client_free(struct client *c)
{
	proto_buf_free(&c->req);
	free(c->in);
}

static int
send_request(const struct client *c, int fd)
{
	for (size_t off = 0; off < c->req.len;) {
		ssize_t w = send(fd, c->req.p + off, c->req.len - off, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		off += (size_t)w;
	}
	return 0;
}

/*
 * Handles one decoded frame: 1 when the conversation is over (status in
 * *status), 0 to go on, -1 on an error frame or an unexpected one.
 */
static int
on_frame(struct client *c, const struct proto_msg *m, int *status)
{
	if (m->type == PROTO_STARTED) {
		c->t_started = now_ns();
		return 0;
	}
	if (m->type == PROTO_STDOUT || m->type == PROTO_STDERR) {
		c->bytes += m->u.data.len;
		return 0;
	}
	if (m->type == PROTO_EXIT) {
		*status = m->u.exit.signal ? 128 + m->u.exit.signal : m->u.exit.code;
		return 1;
	}
	if (m->type == PROTO_ERROR)
		fprintf(stderr, "runner_launch: the runner says: %s\n", m->u.error.message);
	else
		fprintf(stderr, "runner_launch: unexpected %s frame\n", proto_type_name(m->type));
	return -1;
}

/* Decodes every whole frame in c->in; as on_frame(), 0 when more must be read. */
static int
drain_frames(struct client *c, int *status)
{
	size_t off = 0;
	int r = 0;

	while (r == 0 && c->in_len - off >= PROTO_HEADER_SIZE) {
		uint32_t len;
		struct proto_msg m;
		char err[256];
		if (proto_frame_length(c->in + off, &len) < 0 || len > IN_CAP - PROTO_HEADER_SIZE) {
			fprintf(stderr, "runner_launch: bad frame length\n");
			return -1;
		}
		if (c->in_len - off < PROTO_HEADER_SIZE + len)
			break;
		if (proto_decode(c->in + off + PROTO_HEADER_SIZE, len, &m, err, sizeof(err)) < 0) {
			fprintf(stderr, "runner_launch: %s\n", err);
			return -1;
		}
		r = on_frame(c, &m, status);
		proto_msg_free(&m);
		off += PROTO_HEADER_SIZE + len;
	}
	memmove(c->in, c->in + off, c->in_len - off);
	c->in_len -= off;
	return r;
}

/* Reads until the exit frame: the command's status (128+N for signal N), or -1. */
static int
client_wait_exit(struct client *c, int fd)
{
	int status = -1, r = 0;

	while (r == 0) {
		ssize_t n = recv(fd, c->in + c->in_len, IN_CAP - c->in_len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			fprintf(stderr, "runner_launch: the runner closed the connection\n");
			return -1;
		}
		c->in_len += (size_t)n;
		r = drain_frames(c, &status);
	}
	return r < 0 ? -1 : status;
}

/* One whole conversation: connect to exit status. */
static int
client_run(struct client *c)
{
	c->in_len = 0;
	c->t_started = 0;
	c->bytes = 0;
	int fd = connect_runner();
	if (fd < 0) {
		fprintf(stderr, "runner_launch: connect %s: %s\n", o.socket, strerror(-fd));
		return -1;
	}
	int status = send_request(c, fd) < 0 ? -1 : client_wait_exit(c, fd);
	close(fd);
	return status;
}

/* ---- launch latency ---- */

enum method_id { M_NATIVE, M_CLIENT, M_INPROC, M_BWRAP, M_UNSHARE, M_MAX };

struct method {
	const char *key, *label;
	char *argv[16];
	uint64_t *samples;
	uint64_t *to_started; /* b2 only: connect to the started frame */
	bool on, failed;
};

static struct method methods[M_MAX] = {
    [M_NATIVE] = {.key = "a", .label = "native posix_spawn", .argv = {"/bin/true", NULL}},
    [M_CLIENT] = {.key = "b",
                  .label = "moat-runner exec",
                  .argv = {NULL, "exec", "--socket", NULL, "--", "true", NULL}},
    [M_INPROC] = {.key = "b2", .label = "runner, in-process client", .argv = {"true", NULL}},
    [M_BWRAP] = {.key = "c",
                 .label = "bwrap",
                 .argv = {"bwrap", "--unshare-pid", "--unshare-net", "--ro-bind", "/", "/", "--dev",
                          "/dev", "--proc", "/proc", "true", NULL}},
    [M_UNSHARE] = {.key = "d",
                   .label = "unshare",
                   .argv = {"unshare", "--pid", "--mount", "--net", "--fork", "--mount-proc",
                            "true", NULL}},
};

static struct client inproc;

/* One launch: its wall time in ns, or 0 when it failed; b2 also notes when it started. */
static uint64_t
launch_once(struct method *m, uint64_t *ret_started)
{
	bool inproc_client = m == &methods[M_INPROC];
	uint64_t t0 = now_ns();
	int st = inproc_client ? client_run(&inproc) : spawn_wait(m->argv, -1);
	uint64_t t1 = now_ns();

	if (inproc_client ? st != 0 : !(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
		if (!m->failed)
			fprintf(stderr, "runner_launch: %s failed (status %d): left out\n",
			        m->label, st);
		m->failed = true;
		return 0;
	}
	*ret_started = inproc_client && inproc.t_started ? inproc.t_started - t0 : 0;
	return t1 - t0;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of a sorted array, in ms. */
static double
pct_ms(const uint64_t *v, size_t n, double p)
{
	size_t k = (size_t)(p / 100.0 * (double)n + 0.999999);

	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return (double)v[k - 1] / 1e6;
}

static bool
method_wanted(const char *key)
{
	if (!o.methods)
		return true;
	size_t n = strlen(key);
	for (const char *p = o.methods; *p;) {
		const char *e = strchrnul(p, ',');
		if ((size_t)(e - p) == n && strncmp(p, key, n) == 0)
			return true;
		p = *e ? e + 1 : e;
	}
	return false;
}

static void
launch_setup(void)
{
	methods[M_CLIENT].argv[0] = (char *)o.runner;
	methods[M_CLIENT].argv[3] = (char *)o.socket;
	for (size_t i = 0; i < M_MAX; i++) {
		struct method *m = &methods[i];
		m->on = method_wanted(m->key);
		m->samples = calloc(o.iterations, sizeof(uint64_t));
		m->to_started = calloc(o.iterations, sizeof(uint64_t));
		if (!m->samples || !m->to_started)
			die("calloc");
	}
	static const char *const argv[] = {"true", NULL};
	client_init(&inproc, argv, NULL);
}

/* Every method in turn, iteration by iteration. */
static void
launch_run(void)
{
	for (unsigned i = 0; i < o.warmup + o.iterations; i++)
		for (size_t k = 0; k < M_MAX; k++) {
			struct method *m = &methods[k];
			if (!m->on || m->failed)
				continue;
			uint64_t started = 0, ns = launch_once(m, &started);
			if (i < o.warmup || !ns)
				continue;
			m->samples[i - o.warmup] = ns;
			m->to_started[i - o.warmup] = started;
		}
}

struct stats {
	double p50, p90, p99;
	bool ok;
};

static struct stats
stats_of(uint64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	return (struct stats){pct_ms(v, n, 50), pct_ms(v, n, 90), pct_ms(v, n, 99), n > 0};
}

static void
goal(const char *label, double v, bool le, double limit, const char *detail)
{
	bool met = le ? v <= limit : v >= limit;
	printf("  %-40s %s: %s (goal %s %.2f)\n", label, met ? "MET    " : "NOT MET", detail,
	       le ? "<=" : ">=", limit);
}

static double
ratio(const struct stats *x, const struct stats *y)
{
	return x->ok && y->ok && y->p50 > 0 ? x->p50 / y->p50 : -1;
}

static void
print_ratio(const char *label, const struct stats *s, size_t x, size_t y)
{
	double r = ratio(&s[x], &s[y]);

	if (r >= 0) /* both measured */
		printf("  %-38s %6.2fx  (%.2f / %.2f ms)\n", label, r, s[x].p50, s[y].p50);
}

static void
launch_report(void)
{
	struct stats s[M_MAX] = {0}, started = {0};

	printf("launch of `true`: %u iterations after %u warm-ups, methods in turn; ms\n",
	       o.iterations, o.warmup);
	printf("  %-3s %-28s %8s %8s %8s %9s\n", "", "method", "median", "p90", "p99", "x native");
	for (size_t k = 0; k < M_MAX; k++) {
		struct method *m = &methods[k];
		if (!m->on || m->failed)
			continue;
		s[k] = stats_of(m->samples, o.iterations);
		double x = ratio(&s[k], &s[M_NATIVE]);
		printf("  %-3s %-28s %8.2f %8.2f %8.2f", m->key, m->label, s[k].p50, s[k].p90,
		       s[k].p99);
		if (x < 0)
			printf(" %9s\n", "-");
		else
			printf(" %8.1fx\n", x);
	}
	if (s[M_INPROC].ok) {
		started = stats_of(methods[M_INPROC].to_started, o.iterations);
		printf("  %-3s %-28s %8.2f %8.2f %8.2f\n", "", "b2 until `started`", started.p50,
		       started.p90, started.p99);
	}
	printf("ratios of the medians:\n");
	print_ratio("b2/c  runner vs bwrap", s, M_INPROC, M_BWRAP);
	print_ratio("b/c   runner + client exec vs bwrap", s, M_CLIENT, M_BWRAP);
	print_ratio("b2/d  runner vs unshare", s, M_INPROC, M_UNSHARE);
	print_ratio("b/b2  the client's exec and start-up", s, M_CLIENT, M_INPROC);
	print_ratio("c/a   bwrap vs native", s, M_BWRAP, M_NATIVE);
	char d[128];
	double r = ratio(&s[M_INPROC], &s[M_BWRAP]);
	if (r >= 0) {
		snprintf(d, sizeof(d), "b2 %.2f ms / bwrap %.2f ms = %.2fx", s[M_INPROC].p50,
		         s[M_BWRAP].p50, r);
		goal("launch: in-process client <= 0.5x bwrap", r, true, 0.5, d);
	}
}

static int
run_launch(void)
{
	launch_setup();
	launch_run();
	launch_report();
	client_free(&inproc);
	return 0;
}

/* ---- stdout throughput ---- */

/*
 * `WRITER | cat > /dev/null`: 0 when both succeeded. The writer is head, or
 * moat-runner exec running head: either way a reader copies every byte out of
 * a pipe, as an agent reading its child's output does.
 */
static int
pipe_to_cat(char *const head[])
{
	static char *const cat[] = {"cat", NULL};
	int p[2];

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	posix_spawn_file_actions_t fa;
	pid_t hp, cp;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	int r = posix_spawnp(&hp, head[0], &fa, NULL, head, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	if (r != 0) {
		close(p[0]);
		return -1;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[0], 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	r = posix_spawnp(&cp, cat[0], &fa, NULL, cat, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(p[0]);
	int hs = -1, cs = 0;
	waitpid(hp, &hs, 0);
	if (r == 0)
		waitpid(cp, &cs, 0);
	return r == 0 && hs == 0 && cs == 0 ? 0 : -1;
}

static double
median_of(double *v, unsigned n)
{
	for (unsigned i = 1; i < n; i++)
		for (unsigned j = i; j > 0 && v[j - 1] > v[j]; j--) {
			double t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int
run_throughput(void)
{
	char count[32];
	snprintf(count, sizeof(count), "%llu", o.bytes);
	char *head[] = {"head", "-c", count, "/dev/zero", NULL};
	char *via[] = {(char *)o.runner, "exec", "--socket", (char *)o.socket, "--",
	               "head",           "-c",   count,      "/dev/zero",      NULL};
	const char *inargv[] = {"head", "-c", count, "/dev/zero", NULL};
	static const char *const labels[] = {"native: head | cat", "moat-runner exec head | cat",
	                                     "streamed: in-process client"};
	double mbs[3][RUNS_MAX];
	bool ok[3] = {true, true, true};

	client_init(&inproc, inargv, NULL);
	for (unsigned i = 0; i < o.runs; i++)
		for (int k = 0; k < 3; k++) {
			uint64_t t0 = now_ns();
			int st = k == 0   ? pipe_to_cat(head)
			         : k == 1 ? pipe_to_cat(via)
			                  : client_run(&inproc);
			uint64_t t1 = now_ns();
			if (st != 0 || (k == 2 && inproc.bytes != o.bytes))
				ok[k] = false;
			mbs[k][i] = (double)o.bytes / 1e6 / ((double)(t1 - t0) / 1e9);
		}
	client_free(&inproc);
	printf("stdout throughput: %llu bytes of /dev/zero, median of %u runs\n", o.bytes, o.runs);
	double med[3];
	for (int k = 0; k < 3; k++) {
		med[k] = median_of(mbs[k], o.runs);
		if (ok[k])
			printf("  %-28s %9.0f MB/s  %6.2fx native\n", labels[k], med[k],
			       med[k] / med[0]);
		else
			printf("  %-28s %9s (failed)\n", labels[k], "-");
	}
	char d[128];
	if (ok[0] && ok[1]) {
		snprintf(d, sizeof(d), "%.0f / %.0f MB/s = %.2fx", med[1], med[0], med[1] / med[0]);
		goal("throughput: moat-runner exec >= 0.5x pipe", med[1] / med[0], false, 0.5, d);
	}
	return ok[0] && ok[1] && ok[2] ? 0 : 1;
}

/* ---- memory ---- */

/* A "Key:   N kB" line of a /proc file, in kB; -1 when absent. */
static long
proc_kb(pid_t pid, const char *file, const char *key)
{
	char path[64], line[256];
	size_t n = strlen(key);
	long v = -1;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, key, n) == 0 && line[n] == ':') {
			v = strtol(line + n + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

static pid_t
parent_of(pid_t pid)
{
	long pp = proc_kb(pid, "status", "PPid");
	return pp < 0 ? -1 : (pid_t)pp;
}

struct mem {
	long daemon_rss, daemon_pss, inits_rss, inits_pss;
	unsigned inits;
};

static struct mem
mem_of(pid_t daemon)
{
	struct mem m = {.daemon_rss = proc_kb(daemon, "status", "VmRSS"),
	                .daemon_pss = proc_kb(daemon, "smaps_rollup", "Pss")};
	DIR *d = opendir("/proc");
	struct dirent *e;

	if (!d)
		die("opendir /proc");
	while ((e = readdir(d))) {
		pid_t pid = (pid_t)strtol(e->d_name, NULL, 10);
		if (pid <= 0 || parent_of(pid) != daemon)
			continue;
		long rss = proc_kb(pid, "status", "VmRSS"),
		     pss = proc_kb(pid, "smaps_rollup", "Pss");
		m.inits_rss += rss > 0 ? rss : 0;
		m.inits_pss += pss > 0 ? pss : 0;
		m.inits++;
	}
	closedir(d);
	return m;
}

static void
mem_row(const char *label, const struct mem *m, const struct mem *idle, unsigned tasks)
{
	printf("  %-16s %6u %10ld %10ld %12ld %12ld", label, m->inits, m->daemon_rss, m->daemon_pss,
	       m->daemon_rss + m->inits_rss, m->daemon_pss + m->inits_pss);
	if (tasks)
		printf("   %7.0f %7.0f %7.0f\n", (double)(m->daemon_rss - idle->daemon_rss) / tasks,
		       (double)(m->daemon_rss + m->inits_rss - idle->daemon_rss - idle->inits_rss) /
		           tasks,
		       (double)(m->daemon_pss + m->inits_pss - idle->daemon_pss - idle->inits_pss) /
		           tasks);
	else
		printf("\n");
}

/* Starts tasks from..to-1 (connections kept in fds) and waits for each one's started frame. */
static void
start_sleepers(struct client *c, int *fds, unsigned from, unsigned to)
{
	for (unsigned i = from; i < to; i++) {
		fds[i] = connect_runner();
		if (fds[i] < 0 || send_request(c, fds[i]) < 0)
			die("connect + exec");
	}
	for (unsigned i = from; i < to; i++) {
		int status = -1;
		c->in_len = 0;
		c->t_started = 0;
		while (!c->t_started) {
			ssize_t n = recv(fds[i], c->in + c->in_len, IN_CAP - c->in_len, 0);
			if (n <= 0) {
				fprintf(stderr, "runner_launch: task %u: no started frame\n", i);
				exit(1);
			}
			c->in_len += (size_t)n;
			if (drain_frames(c, &status) != 0) {
				fprintf(stderr, "runner_launch: task %u ended early\n", i);
				exit(1);
			}
		}
	}
	usleep(200 * 1000); /* each init's fork + exec of sleep, after `started` */
}

/* Waits (up to 5 s) until the daemon has no child left. */
static void
wait_no_children(pid_t daemon)
{
	for (int i = 0; i < 100 && mem_of(daemon).inits; i++)
		usleep(50 * 1000);
}

static int
run_memory(void)
{
	static const char *const argv[] = {"sleep", "30", NULL};
	struct client c;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int *fds = calloc(o.tasks, sizeof(int));

	int probe = connect_runner();
	if (!fds || probe < 0 || getsockopt(probe, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		die("connect to the runner");
	close(probe);
	pid_t daemon = cred.pid;
	client_init(&c, argv, "bench-memory");
	wait_no_children(daemon);
	struct mem idle = mem_of(daemon), one, many, after;
	start_sleepers(&c, fds, 0, 1);
	one = mem_of(daemon);
	start_sleepers(&c, fds, 1, o.tasks);
	many = mem_of(daemon);
	for (unsigned i = 0; i < o.tasks; i++)
		close(fds[i]); /* the runner kills a task whose client is gone */
	wait_no_children(daemon);
	after = mem_of(daemon);
	client_free(&c);
	free(fds);

	printf("runner memory (daemon pid %d; kB; inits = the daemon's children, one per task)\n",
	       (int)daemon);
	printf("  %-16s %6s %10s %10s %12s %12s   %7s %7s %7s\n", "state", "inits", "daemon",
	       "d.PSS", "+inits RSS", "+inits PSS", "kB/task", "RSS", "PSS");
	printf("  %-16s %6s %10s %10s %12s %12s   %7s %7s %7s\n", "", "", "RSS", "", "", "",
	       "daemon", "+inits", "+inits");
	mem_row("idle", &idle, &idle, 0);
	mem_row("1 task", &one, &idle, 1);
	char label[32];
	snprintf(label, sizeof(label), "%u tasks", o.tasks);
	mem_row(label, &many, &idle, o.tasks);
	mem_row("idle again", &after, &idle, 0);
	return 0;
}

/* ---- options ---- */

static void
usage(FILE *f)
{
	fputs("usage: runner_launch [--socket S] [--runner PATH] [--iterations N] [--warmup N]\n"
	      "                     [--methods a,b,b2,c,d]\n"
	      "       runner_launch --throughput BYTES [--runs N] [--socket S] [--runner PATH]\n"
	      "       runner_launch --memory TASKS [--socket S]\n"
	      "methods: a native, b moat-runner exec, b2 in-process client, c bwrap, d unshare\n",
	      f);
}

/* The moat-runner next to this program's build directory: BUILD/bench/.. /bin. */
static const char *
default_runner(void)
{
	static char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 32);

	if (n <= 0)
		return "moat-runner";
	path[n] = '\0';
	char *slash = strrchr(path, '/');
	if (slash)
		strcpy(slash, "/../bin/moat-runner");
	return path;
}

static int
parse(int argc, char **argv)
{
	static const struct option lopts[] = {
	    {"socket", required_argument, NULL, 's'},
	    {"runner", required_argument, NULL, 'R'},
	    {"iterations", required_argument, NULL, 'n'},
	    {"warmup", required_argument, NULL, 'w'},
	    {"methods", required_argument, NULL, 'm'},
	    {"throughput", required_argument, NULL, 't'},
	    {"runs", required_argument, NULL, 'r'},
	    {"memory", required_argument, NULL, 'M'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	int opt;

	while ((opt = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		switch (opt) {
		case 's':
			o.socket = optarg;
			break;
		case 'R':
			o.runner = optarg;
			break;
		case 'n':
			o.iterations = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'w':
			o.warmup = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'm':
			o.methods = optarg;
			break;
		case 't':
			o.bytes = strtoull(optarg, NULL, 10);
			break;
		case 'r':
			o.runs = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'M':
			o.tasks = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind != argc || o.iterations < 1 || o.iterations > ITER_MAX || o.runs < 1 ||
	    o.runs > RUNS_MAX || o.tasks > TASKS_MAX || (o.bytes && o.tasks)) {
		usage(stderr);
		return -1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	static char sockbuf[PATH_MAX];

	if (parse(argc, argv) < 0)
		return 2;
	if (!o.socket) {
		const char *env = getenv("MOAT_RUNNER_SOCKET"), *xdg = getenv("XDG_RUNTIME_DIR");
		if (env && *env)
			o.socket = env;
		else if (xdg && *xdg)
			o.socket = (snprintf(sockbuf, sizeof(sockbuf), "%s/moat/runner.sock", xdg),
			            sockbuf);
		else
			o.socket = "/run/moat/runner.sock";
	}
	if (!o.runner)
		o.runner = default_runner();
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (o.tasks)
		return run_memory();
	if (o.bytes)
		return run_throughput();
	return run_launch();
}

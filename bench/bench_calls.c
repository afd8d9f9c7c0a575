/* SPDX-License-Identifier: MIT */
/*
 * The per-call cost of the system calls moat traps, as a workload: run it
 * natively, under `moat run`, under bare_notify (a notify round trip answered
 * CONTINUE) and under `strace -f`, and compare the numbers (bench/run.sh does).
 * It makes no judgement itself and asserts no timing.
 *
 * Each call is timed one iteration at a time with CLOCK_MONOTONIC (vDSO: never
 * trapped). A call kind runs a warm-up, then --runs runs of at least --run-ms
 * milliseconds (and at least MIN_ITER iterations) each. Reported per call:
 *   ns      the median over the runs of each run's mean
 *   p50/p99 over the per-iteration samples of all runs
 *   worst   the largest p99/p50 of any single run (the "p99 at most 3x
 *           the median on every run")
 *
 * The calls, all on objects in the working directory:
 *   openat      openat(AT_FDCWD, "/abs/bench.file", O_RDONLY|O_CLOEXEC) + close
 *   openat-rel  the same with the relative name "bench.file" (diagnostic)
 *   statx       statx(AT_FDCWD, "/abs/bench.file", 0, STATX_BASIC_STATS)
 *   connect     connect() of a fresh AF_UNIX stream socket to a listener this
 *               program bound at "bench.sock", then close; socket() and the
 *               listener's accept are outside the timed region
 *   connect-nb  the same on an O_NONBLOCK socket (diagnostic)
 *   exec        fork, execve("/bin/true") in the child, waitpid
 *
 *   bench_calls [--calls a,b,...] [--runs N] [--run-ms MS] [--warmup-ms MS]
 *               [--max-iter N] [--tsv]
 * --tsv prints "name<TAB>ns<TAB>p50<TAB>p99<TAB>worst<TAB>iterations" lines.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "moat/macro.h"

#define FILE_NAME "bench.file"
#define SOCK_NAME "bench.sock"
#define MIN_ITER  50
#define RUNS_MAX  64

struct opts {
	const char *calls;
	unsigned runs;
	unsigned run_ms, warmup_ms;
	size_t max_iter;
	bool tsv;
};

/* What the calls work on, set up once. */
static struct {
	char file_abs[PATH_MAX];
	struct sockaddr_un addr;
	socklen_t addr_len;
	int listener;
} env = {.listener = -1};

static volatile uint64_t sink;

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
	fprintf(stderr, "bench_calls: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* ---- the calls: each returns the ns of its timed part ---- */

static uint64_t
call_open_path(const char *path)
{
	uint64_t t0 = now_ns();
	int fd = openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		die("openat");
	close(fd);
	return now_ns() - t0;
}

static uint64_t
call_openat(void)
{
	return call_open_path(env.file_abs);
}

static uint64_t
call_openat_rel(void)
{
	return call_open_path(FILE_NAME);
}

static uint64_t
call_statx(void)
{
	struct statx stx;

	uint64_t t0 = now_ns();
	if (statx(AT_FDCWD, env.file_abs, 0, STATX_BASIC_STATS, &stx) < 0)
		die("statx");
	uint64_t t = now_ns() - t0;
	sink += stx.stx_size;
	return t;
}

/* Drains the listener so that its backlog never fills: outside the timed part. */
static void
accept_one(void)
{
	int a = accept4(env.listener, NULL, NULL, SOCK_CLOEXEC);
	if (a < 0)
		die("accept4");
	close(a);
}

static uint64_t
connect_once(int type_flags)
{
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | type_flags, 0);
	if (s < 0)
		die("socket");
	uint64_t t0 = now_ns();
	/* A unix stream connect to a listener with room in its backlog completes at once. */
	if (connect(s, (struct sockaddr *)&env.addr, env.addr_len) < 0)
		die("connect");
	close(s);
	uint64_t t = now_ns() - t0;
	accept_one();
	return t;
}

static uint64_t
call_connect(void)
{
	return connect_once(0);
}

static uint64_t
call_connect_nb(void)
{
	return connect_once(SOCK_NONBLOCK);
}

static uint64_t
call_exec(void)
{
	static char *const argv[] = {"true", NULL};
	static char *const envp[] = {NULL};
	int status;

	uint64_t t0 = now_ns();
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		execve("/bin/true", argv, envp);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		die("waitpid");
	uint64_t t = now_ns() - t0;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		errno = WIFEXITED(status) && WEXITSTATUS(status) == 127 ? EACCES : ECHILD;
		die("fork+execve /bin/true");
	}
	return t;
}

static const struct call {
	const char *name;
	uint64_t (*fn)(void);
} calls[] = {
    {"openat", call_openat},   {"openat-rel", call_openat_rel}, {"statx", call_statx},
    {"connect", call_connect}, {"connect-nb", call_connect_nb}, {"exec", call_exec},
};

/* ---- set-up ---- */

static void
setup(void)
{
	char cwd[PATH_MAX];

	if (!getcwd(cwd, sizeof(cwd)))
		die("getcwd");
	if ((size_t)snprintf(env.file_abs, sizeof(env.file_abs), "%s/%s", cwd, FILE_NAME) >=
	    sizeof(env.file_abs)) {
		errno = ENAMETOOLONG;
		die("the working directory");
	}
	int fd = open(FILE_NAME, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, "moat\n", 5) != 5)
		die(FILE_NAME);
	close(fd);

	env.listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (env.listener < 0)
		die("socket");
	unlink(SOCK_NAME);
	struct sockaddr_un local = {.sun_family = AF_UNIX};
	snprintf(local.sun_path, sizeof(local.sun_path), "%s", SOCK_NAME);
	if (bind(env.listener, (struct sockaddr *)&local, sizeof(local)) < 0)
		die("bind " SOCK_NAME);
	if (listen(env.listener, 128) < 0)
		die("listen");
	/* Connect by absolute name, as the policy names the socket. */
	env.addr.sun_family = AF_UNIX;
	if ((size_t)snprintf(env.addr.sun_path, sizeof(env.addr.sun_path), "%s/%s", cwd,
	                     SOCK_NAME) >= sizeof(env.addr.sun_path)) {
		errno = ENAMETOOLONG;
		die("the socket's absolute path");
	}
	env.addr_len = (socklen_t)sizeof(env.addr);
}

static void
teardown(void)
{
	if (env.listener >= 0)
		close(env.listener);
	unlink(SOCK_NAME);
	unlink(FILE_NAME);
}

/* ---- measurement ---- */

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The q-quantile of sorted samples (nearest rank). */
static uint64_t
quantile(const uint64_t *sorted, size_t n, double q)
{
	size_t i = (size_t)(q * (double)n);
	return sorted[i < n ? i : n - 1];
}

struct result {
	double ns;         /* median over runs of the run's mean */
	uint64_t p50, p99; /* over all samples */
	double worst;      /* the largest per-run p99/p50 */
	size_t iters;
};

/* One run: at least MIN_ITER iterations and run_ms, at most max_iter. Returns the count. */
static size_t
run_once(const struct call *c, uint64_t *samples, size_t max_iter, unsigned run_ms)
{
	uint64_t end = now_ns() + (uint64_t)run_ms * 1000000u;
	size_t n = 0;

	while (n < max_iter && (n < MIN_ITER || now_ns() < end))
		samples[n++] = c->fn();
	return n;
}

static void
measure(const struct call *c, const struct opts *o, uint64_t *all, uint64_t *scratch,
        struct result *ret)
{
	double means[RUNS_MAX];
	size_t total = 0;

	run_once(c, scratch, o->max_iter, o->warmup_ms);
	ret->worst = 0;
	for (unsigned r = 0; r < o->runs; r++) {
		size_t n = run_once(c, scratch, o->max_iter, o->run_ms);
		uint64_t sum = 0;
		for (size_t i = 0; i < n; i++)
			sum += scratch[i];
		means[r] = (double)sum / (double)n;
		memcpy(all + total, scratch, n * sizeof(*scratch));
		total += n;
		qsort(scratch, n, sizeof(*scratch), cmp_u64);
		double ratio = (double)quantile(scratch, n, 0.99) /
		               (double)(quantile(scratch, n, 0.5) ? quantile(scratch, n, 0.5) : 1);
		if (ratio > ret->worst)
			ret->worst = ratio;
	}
	for (unsigned i = 1; i < o->runs; i++)
		for (unsigned j = i; j > 0 && means[j - 1] > means[j]; j--) {
			double t = means[j];
			means[j] = means[j - 1];
			means[j - 1] = t;
		}
	ret->ns =
	    o->runs % 2 ? means[o->runs / 2] : (means[o->runs / 2 - 1] + means[o->runs / 2]) / 2;
	qsort(all, total, sizeof(*all), cmp_u64);
	ret->p50 = quantile(all, total, 0.5);
	ret->p99 = quantile(all, total, 0.99);
	ret->iters = total;
}

static bool
wanted(const struct opts *o, const struct call *c)
{
	if (!o->calls)
		return true;
	size_t n = strlen(c->name);
	for (const char *p = o->calls; *p;) {
		size_t k = strcspn(p, ",");
		if (k == n && strncmp(p, c->name, n) == 0)
			return true;
		p += k + (p[k] == ',');
	}
	return false;
}

static void
print_result(const struct opts *o, const struct call *c, const struct result *r)
{
	if (o->tsv)
		printf("%s\t%.0f\t%llu\t%llu\t%.2f\t%zu\n", c->name, r->ns,
		       (unsigned long long)r->p50, (unsigned long long)r->p99, r->worst, r->iters);
	else
		printf("%-12s %12.0f %10llu %10llu %9.2f %10zu\n", c->name, r->ns,
		       (unsigned long long)r->p50, (unsigned long long)r->p99, r->worst, r->iters);
	fflush(stdout);
}

static void
usage(FILE *f)
{
	fputs("usage: bench_calls [--calls a,b,...] [--runs N] [--run-ms MS] [--warmup-ms MS]\n"
	      "                   [--max-iter N] [--tsv]\n"
	      "calls: openat openat-rel statx connect connect-nb exec\n",
	      f);
}

static int
parse(int argc, char **argv, struct opts *o)
{
	static const struct option lopts[] = {
	    {"calls", required_argument, NULL, 'c'},    {"runs", required_argument, NULL, 'r'},
	    {"run-ms", required_argument, NULL, 't'},   {"warmup-ms", required_argument, NULL, 'w'},
	    {"max-iter", required_argument, NULL, 'm'}, {"tsv", no_argument, NULL, 'T'},
	    {"help", no_argument, NULL, 'h'},           {0},
	};
	int opt;

	while ((opt = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			o->calls = optarg;
			break;
		case 'r':
			o->runs = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 't':
			o->run_ms = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'w':
			o->warmup_ms = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'm':
			o->max_iter = strtoul(optarg, NULL, 10);
			break;
		case 'T':
			o->tsv = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (o->runs < 1 || o->runs > RUNS_MAX || o->max_iter < MIN_ITER || optind != argc) {
		usage(stderr);
		return -1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	struct opts o = {.runs = 5, .run_ms = 200, .warmup_ms = 50, .max_iter = 400000};
	struct result r;

	if (parse(argc, argv, &o) < 0)
		return 2;
	/* Touched once here, so that no page fault lands in a timed region. */
	uint64_t *all = calloc(o.max_iter * o.runs, sizeof(*all));
	uint64_t *scratch = calloc(o.max_iter, sizeof(*scratch));
	if (!all || !scratch)
		die("calloc");
	memset(all, 0xff, o.max_iter * o.runs * sizeof(*all));
	memset(scratch, 0xff, o.max_iter * sizeof(*scratch));

	setup();
	if (!o.tsv)
		printf("%-12s %12s %10s %10s %9s %10s\n", "call", "ns(median)", "p50", "p99",
		       "p99/p50", "iterations");
	for (size_t i = 0; i < ARRAY_SIZE(calls); i++) {
		if (!wanted(&o, &calls[i]))
			continue;
		measure(&calls[i], &o, all, scratch, &r);
		print_result(&o, &calls[i], &r);
	}
	teardown();
	free(all);
	free(scratch);
	return 0;
}

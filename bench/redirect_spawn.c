/* SPDX-License-Identifier: MIT */
/*
 * Spawn latency: fork + execve + waitpid of one command, N times, one at a
 * time. bench/run.sh (section 5, redirect) runs it natively, under
 * `moat run -- redirect_spawn` (every exec of its children is redirected to
 * the embedded runner: that is what it measures) and with a bwrap argv as the
 * command (what a bwrap-per-command sandbox pays). It asserts no timing.
 *
 *   redirect_spawn [-n|--iterations N] [-w|--warmup N] [--label L] [--tsv] [--raw FILE]
 *                  [-- PATH ARGS...]
 *
 * The command defaults to /bin/true; PATH is executed as given (execve: no
 * PATH lookup). Each child gets /dev/null as stdin and stdout (opened once, by
 * the parent: dup2 is not trapped) and inherits stderr. A sample is the wall
 * time from just before fork() to waitpid()'s return. A child that fails
 * (exit status other than 0) is counted, its sample kept.
 *
 * Output: one line, "LABEL: N spawns, median M ms, p90 ..., p99 ..., mean ...";
 * with --tsv: LABEL, N, p50, p90, p99, mean, min (ns), failures, tab-separated.
 * --raw FILE: every sample (ns) is also appended to FILE, one per line, so that
 * several runs (rounds taking turns with other methods) can be merged.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define ITER_MAX 1000000u

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* One spawn: the wait status, or -1 when fork or waitpid failed. */
static int
spawn_once(char *const argv[], int devnull)
{
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (dup2(devnull, 0) < 0 || dup2(devnull, 1) < 0)
			_exit(125);
		execve(argv[0], argv, environ);
		_exit(errno == ENOENT ? 127 : 126);
	}
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return status;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of a sorted array. */
static uint64_t
pct(const uint64_t *v, size_t n, double p)
{
	size_t k = (size_t)(p / 100.0 * (double)n + 0.999999);

	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return v[k - 1];
}

static void
usage(FILE *f)
{
	fputs("usage: redirect_spawn [--iterations N] [--warmup N] [--label L] [--tsv] "
	      "[--raw FILE] [-- PATH ARGS...]\n",
	      f);
}

int
main(int argc, char **argv)
{
	static const struct option lopts[] = {
	    {"iterations", required_argument, NULL, 'n'},
	    {"warmup", required_argument, NULL, 'w'},
	    {"label", required_argument, NULL, 'l'},
	    {"tsv", no_argument, NULL, 't'},
	    {"raw", required_argument, NULL, 'r'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	static char *const dflt[] = {"/bin/true", NULL};
	unsigned iterations = 200, warmup = 10;
	const char *label = "spawn", *raw = NULL;
	int tsv = 0, opt;

	while ((opt = getopt_long(argc, argv, "+hn:w:l:", lopts, NULL)) != -1) {
		switch (opt) {
		case 'n':
			iterations = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'w':
			warmup = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'l':
			label = optarg;
			break;
		case 't':
			tsv = 1;
			break;
		case 'r':
			raw = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (iterations < 1 || iterations > ITER_MAX) {
		usage(stderr);
		return 2;
	}
	char *const *cmd = optind < argc ? argv + optind : dflt;
	int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	uint64_t *v = calloc(iterations, sizeof(*v));
	if (devnull < 0 || !v) {
		perror("redirect_spawn: /dev/null or calloc");
		return 1;
	}

	unsigned failures = 0;
	int first_bad = 0;
	for (unsigned i = 0; i < warmup + iterations; i++) {
		uint64_t t0 = now_ns();
		int st = spawn_once(cmd, devnull);
		uint64_t t1 = now_ns();
		if (st != 0) {
			failures++;
			if (!first_bad)
				first_bad = st;
		}
		if (i >= warmup)
			v[i - warmup] = t1 - t0;
	}
	if (failures)
		fprintf(stderr,
		        "redirect_spawn: %s: %u of %u spawns failed (first: wait status %d)\n",
		        cmd[0], failures, warmup + iterations, first_bad);

	double sum = 0;
	for (unsigned i = 0; i < iterations; i++)
		sum += (double)v[i];
	if (raw) {
		FILE *f = fopen(raw, "ae");
		if (!f) {
			perror(raw);
			return 1;
		}
		for (unsigned i = 0; i < iterations; i++)
			fprintf(f, "%llu\n", (unsigned long long)v[i]);
		if (fclose(f) != 0) {
			perror(raw);
			return 1;
		}
	}
	qsort(v, iterations, sizeof(*v), cmp_u64);
	uint64_t p50 = pct(v, iterations, 50), p90 = pct(v, iterations, 90),
	         p99 = pct(v, iterations, 99);
	double mean = sum / iterations;
	if (tsv)
		printf("%s\t%u\t%llu\t%llu\t%llu\t%.0f\t%llu\t%u\n", label, iterations,
		       (unsigned long long)p50, (unsigned long long)p90, (unsigned long long)p99,
		       mean, (unsigned long long)v[0], failures);
	else
		printf(
		    "%s: %u spawns of %s, median %.3f ms, p90 %.3f ms, p99 %.3f ms, mean %.3f ms, "
		    "min %.3f ms, %u failed\n",
		    label, iterations, cmd[0], (double)p50 / 1e6, (double)p90 / 1e6,
		    (double)p99 / 1e6, mean / 1e6, (double)v[0] / 1e6, failures);
	free(v);
	return failures ? 1 : 0;
}

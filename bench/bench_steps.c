/* SPDX-License-Identifier: MIT */
/*
 * The kernel work inside moat's handlers, one step at a time, natively: what
 * each system call the supervisor makes for a trapped openat or statx costs on
 * this machine, next to cheaper ways of doing the same step. It explains the
 * "supervisor share" that bench/run.sh prints; it asserts nothing.
 *
 * The steps of an emulated openat(AT_FDCWD, "/abs/file", O_RDONLY) today:
 *   process_vm_readv   the path, up to the end of its page (tgt_read_string)
 *   openat2 O_PATH     resolve it (sv_path_open)
 *   readlinkat         /proc/self/fd/N, the canonical path (sv_fd_path)
 *   fstat              the O_PATH fd (reopen)
 *   openat             /proc/self/fd/N with the caller's flags (reopen)
 *   close x2           the O_PATH fd and ours after ADDFD
 * and of statx: process_vm_readv, openat2 O_PATH, readlinkat, statx(fd, ""),
 * close, process_vm_writev.
 *
 * The target is a forked child that sleeps: after fork its path buffer is at
 * the same address as ours.
 *
 *   bench_steps [--iterations N]
 */
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "moat/macro.h"
#include "moat/sys.h"

#define REPS 7

static struct {
	char path[PATH_MAX] __attribute__((aligned(4096)));
	pid_t child;
	int proc_fd;    /* /proc, O_PATH, as moat holds it */
	int selffd_dir; /* /proc/<our pid>/fd, O_PATH: a cached directory */
	int mem_fd;     /* /proc/<child>/mem */
	int opath;      /* the file, O_PATH */
	char link[64];  /* "self/fd/<opath>" */
	char name[16];  /* "<opath>" */
	struct statx stx;
} s;

static volatile uint64_t sink;

static _Noreturn void
die(const char *what)
{
	fprintf(stderr, "bench_steps: %s: %s\n", what, strerror(errno));
	exit(1);
}

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- the steps ---- */

static size_t
to_page_end(const void *p)
{
	return 4096 - (size_t)((uintptr_t)p % 4096);
}

static void
step_vm_readv(void)
{
	char buf[4096];
	struct iovec local = {buf, to_page_end(s.path)}, remote = {s.path, local.iov_len};

	if (process_vm_readv(s.child, &local, 1, &remote, 1, 0) < 0)
		die("process_vm_readv");
	sink += (uint64_t)buf[0];
}

static void
step_vm_readv_256(void)
{
	char buf[256];
	struct iovec local = {buf, sizeof(buf)}, remote = {s.path, sizeof(buf)};

	if (process_vm_readv(s.child, &local, 1, &remote, 1, 0) < 0)
		die("process_vm_readv");
	sink += (uint64_t)buf[0];
}

static void
step_mem_pread(void)
{
	char buf[4096];

	if (pread(s.mem_fd, buf, to_page_end(s.path), (off_t)(uintptr_t)s.path) < 0)
		die("pread /proc/PID/mem");
	sink += (uint64_t)buf[0];
}

static void
step_opath(void)
{
	struct open_how how = {.flags = O_PATH | O_CLOEXEC};
	int fd = sys_openat2(AT_FDCWD, s.path, &how);

	if (fd < 0)
		die("openat2 O_PATH");
	close(fd);
}

static void
step_readlink_proc(void)
{
	char out[PATH_MAX];

	if (readlinkat(s.proc_fd, s.link, out, sizeof(out)) < 0)
		die("readlinkat /proc/self/fd/N");
}

static void
step_readlink_cached(void)
{
	char out[PATH_MAX];

	if (readlinkat(s.selffd_dir, s.name, out, sizeof(out)) < 0)
		die("readlinkat fd-dir N");
}

static void
step_fstat(void)
{
	struct stat st;

	if (fstat(s.opath, &st) < 0)
		die("fstat");
	sink += (uint64_t)st.st_ino;
}

static void
step_reopen_proc(void)
{
	int fd = openat(s.proc_fd, s.link, O_RDONLY | O_CLOEXEC | O_NOCTTY);

	if (fd < 0)
		die("openat /proc/self/fd/N");
	close(fd);
}

static void
step_reopen_cached(void)
{
	int fd = openat(s.selffd_dir, s.name, O_RDONLY | O_CLOEXEC | O_NOCTTY);

	if (fd < 0)
		die("openat fd-dir N");
	close(fd);
}

/* The path again, checked to reach the same inode as the decided O_PATH fd. */
static void
step_reopen_path(void)
{
	struct open_how how = {.flags = O_RDONLY | O_CLOEXEC | O_NOCTTY};
	struct stat a, b;
	int fd = sys_openat2(AT_FDCWD, s.path, &how);

	if (fd < 0 || fstat(fd, &a) < 0 || fstat(s.opath, &b) < 0)
		die("openat2 + fstat");
	sink += a.st_ino == b.st_ino && a.st_dev == b.st_dev;
	close(fd);
}

static void
step_open_close(void)
{
	int fd = openat(AT_FDCWD, s.path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		die("openat");
	close(fd);
}

static void
step_statx_fd(void)
{
	if (statx(s.opath, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &s.stx) < 0)
		die("statx fd");
}

static void
step_statx_path(void)
{
	if (statx(AT_FDCWD, s.path, 0, STATX_BASIC_STATS, &s.stx) < 0)
		die("statx path");
}

static void
step_vm_writev(void)
{
	struct iovec local = {&s.stx, sizeof(s.stx)}, remote = {&s.stx, sizeof(s.stx)};

	if (process_vm_writev(s.child, &local, 1, &remote, 1, 0) < 0)
		die("process_vm_writev");
}

static void
step_floor(void)
{
	/* The floor of any system call on this machine. */
	sink += (uint64_t)syscall(SYS_getppid);
}

static const struct step {
	const char *name;
	void (*fn)(void);
	const char *note;
} steps[] = {
    {"syscall floor (getppid)", step_floor, ""},
    {"process_vm_readv to page end", step_vm_readv, "moat: path read"},
    {"process_vm_readv 256 B", step_vm_readv_256, "alt: short first read"},
    {"pread /proc/PID/mem", step_mem_pread, "alt: cached mem fd"},
    {"openat2 O_PATH + close", step_opath, "moat: resolve"},
    {"readlinkat /proc self/fd/N", step_readlink_proc, "moat: canonical path"},
    {"readlinkat cached fd dir", step_readlink_cached, "alt: /proc/PID/fd held"},
    {"fstat O_PATH fd", step_fstat, "moat: reopen check"},
    {"openat /proc self/fd/N +close", step_reopen_proc, "moat: reopen"},
    {"openat cached fd dir N +close", step_reopen_cached, "alt: /proc/PID/fd held"},
    {"openat2 path + 2 fstat +close", step_reopen_path, "alt: reopen by path, same ino"},
    {"openat path + close", step_open_close, "native open, for scale"},
    {"statx fd AT_EMPTY_PATH", step_statx_fd, "moat: statx"},
    {"statx path", step_statx_path, "native statx, for scale"},
    {"process_vm_writev statx", step_vm_writev, "moat: statx result"},
};

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The median over REPS repetitions of the mean over n calls. */
static uint64_t
measure(const struct step *st, unsigned n)
{
	uint64_t reps[REPS];

	for (unsigned i = 0; i < n / 10; i++)
		st->fn();
	for (int r = 0; r < REPS; r++) {
		uint64_t t0 = now_ns();
		for (unsigned i = 0; i < n; i++)
			st->fn();
		reps[r] = (now_ns() - t0) / n;
	}
	qsort(reps, REPS, sizeof(reps[0]), cmp_u64);
	return reps[REPS / 2];
}

static void
setup(void)
{
	char cwd[PATH_MAX - 32], rel[64];

	if (!getcwd(cwd, sizeof(cwd)))
		die("getcwd");
	snprintf(s.path, sizeof(s.path), "%s/bench-steps.file", cwd);
	int fd = open(s.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, "moat\n", 5) != 5)
		die(s.path);
	close(fd);

	s.child = fork();
	if (s.child < 0)
		die("fork");
	if (s.child == 0) {
		for (;;)
			pause();
	}
	s.proc_fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	snprintf(rel, sizeof(rel), "%d/fd", (int)getpid());
	s.selffd_dir = openat(s.proc_fd, rel, O_PATH | O_DIRECTORY | O_CLOEXEC);
	snprintf(rel, sizeof(rel), "%d/mem", (int)s.child);
	s.mem_fd = openat(s.proc_fd, rel, O_RDONLY | O_CLOEXEC);
	struct open_how how = {.flags = O_PATH | O_CLOEXEC};
	s.opath = sys_openat2(AT_FDCWD, s.path, &how);
	if (s.proc_fd < 0 || s.selffd_dir < 0 || s.mem_fd < 0 || s.opath < 0)
		die("/proc set-up");
	snprintf(s.link, sizeof(s.link), "self/fd/%d", s.opath);
	snprintf(s.name, sizeof(s.name), "%d", s.opath);
}

int
main(int argc, char **argv)
{
	static const struct option lopts[] = {
	    {"iterations", required_argument, NULL, 'n'},
	    {0},
	};
	unsigned n = 20000;
	int opt;

	while ((opt = getopt_long(argc, argv, "", lopts, NULL)) != -1) {
		if (opt != 'n') {
			fputs("usage: bench_steps [--iterations N]\n", stderr);
			return 2;
		}
		n = (unsigned)strtoul(optarg, NULL, 10);
	}
	if (n < 10)
		n = 10;
	setup();
	printf("%-32s %8s  %s\n", "step", "ns", "");
	for (size_t i = 0; i < ARRAY_SIZE(steps); i++)
		printf("%-32s %8llu  %s\n", steps[i].name,
		       (unsigned long long)measure(&steps[i], n), steps[i].note);
	kill(s.child, SIGKILL);
	waitpid(s.child, NULL, 0);
	unlink(s.path);
	return 0;
}

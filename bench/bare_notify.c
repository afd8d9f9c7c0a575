/* SPDX-License-Identifier: MIT */
/*
 * The peer "bare notify round trip": CMD runs under moat's own seccomp filter
 * (the same trapped set, the same BPF, the same NEW_LISTENER |
 * WAIT_KILLABLE_RECV flags, started by moat's own launcher), and every
 * notification is answered SECCOMP_USER_NOTIF_FLAG_CONTINUE at once. The
 * difference between `moat run` and this is what moat's handlers cost.
 *
 *   bare_notify [--loop poll|thread] [--readers N] [--no-sync-wake] [--emulate] [--count]
 *               -- CMD [ARGS...]
 *
 * --loop poll    one thread: poll() on the listener and the child's pidfd, then
 *                RECV and SEND (the default)
 * --loop thread  dedicated threads blocked in SECCOMP_IOCTL_NOTIF_RECV, as moat's
 *                receivers are; the main thread only waits for the child
 * --readers N    how many such threads (1 to 8; default 1): moat runs 2
 * --no-sync-wake leave SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP off (Linux 6.6+), to
 *                see what it buys: without it the kernel may wake the handler on
 *                the other CPU, and the target again on another
 * --emulate      carry out openat and statx of an absolute path (dirfd AT_FDCWD)
 *                as plainly as possible: read the path, open (ADDFD + SEND) or
 *                statx (process_vm_writev + SEND) it; everything else CONTINUE.
 *                No decision and no TOCTOU safety: the floor of an emulated call,
 *                to split moat's share into the emulation itself and moat's
 *                safety steps (O_PATH, readlink, reopen through /proc, policy)
 * --count        print the number of notifications answered on stderr at exit
 *
 * The exit status is CMD's (128+N for a signal death).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "filter.h"
#include "launch.h"
#include "moat/macro.h"
#include "moat/sys.h"

const char *log_program = "bare_notify";

enum loop_kind {
	LOOP_POLL,
	LOOP_THREAD,
	LOOP_KIND_MAX,
};

static const char *const loop_names[LOOP_KIND_MAX] = {"poll", "thread"};

#define READERS_MAX 8

/* One reader's buffers (each thread has its own). */
struct reader {
	struct bare *b;
	struct seccomp_notif *req;
	struct seccomp_notif_resp *resp;
};

struct bare {
	int notify_fd;
	size_t req_size, resp_size;
	bool emulate;
	unsigned long long answered; /* atomic: readers add, main reads */
	struct reader r[READERS_MAX];
	unsigned n_readers;
};

/* The absolute path at addr in the target, or false (then the call is let through). */
static bool
read_path(pid_t pid, uint64_t addr, char *buf, size_t size)
{
	/* Up to the end of the page: the next one may be unmapped. */
	size_t n = 4096 - (size_t)(addr % 4096);
	struct iovec local = {buf, n < size ? n : size - 1};
	struct iovec remote = {(void *)(uintptr_t)addr, local.iov_len};

	ssize_t r = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (r <= 0 || !memchr(buf, '\0', (size_t)r))
		return false;
	return buf[0] == '/';
}

/* openat(AT_FDCWD, "/abs", flags, mode): ours, injected. Returns false to let it through. */
static bool
emulate_openat(struct reader *rd)
{
	struct bare *b = rd->b;
	const __u64 *a = rd->req->data.args;
	char path[PATH_MAX];

	if ((int)a[0] != AT_FDCWD || (a[2] & O_CREAT) ||
	    !read_path((pid_t)rd->req->pid, a[1], path, sizeof(path)))
		return false;
	int fd = openat(AT_FDCWD, path, (int)(a[2] | O_CLOEXEC));
	if (fd < 0) {
		rd->resp->error = -errno;
		return sys_notif_send(b->notify_fd, rd->resp) == 0;
	}
	struct seccomp_notif_addfd add = {
	    .id = rd->req->id,
	    .flags = SECCOMP_ADDFD_FLAG_SEND,
	    .srcfd = (uint32_t)fd,
	    .newfd_flags = (uint32_t)(a[2] & O_CLOEXEC),
	};
	int r = sys_notif_addfd(b->notify_fd, &add);
	close(fd);
	return r >= 0;
}

/* statx(AT_FDCWD, "/abs", flags, mask, buf): ours, written back. */
static bool
emulate_statx(struct reader *rd)
{
	const __u64 *a = rd->req->data.args;
	char path[PATH_MAX];
	struct statx stx;

	if ((int)a[0] != AT_FDCWD || !read_path((pid_t)rd->req->pid, a[1], path, sizeof(path)))
		return false;
	if (statx(AT_FDCWD, path, (int)a[2], (unsigned)a[3], &stx) < 0) {
		rd->resp->error = -errno;
	} else {
		struct iovec local = {&stx, sizeof(stx)};
		struct iovec remote = {(void *)(uintptr_t)a[4], sizeof(stx)};
		if (process_vm_writev((pid_t)rd->req->pid, &local, 1, &remote, 1, 0) !=
		    (ssize_t)sizeof(stx))
			rd->resp->error = -EFAULT;
	}
	return sys_notif_send(rd->b->notify_fd, rd->resp) == 0;
}

/*
 * One notification, answered CONTINUE (or emulated). ENOENT: the target died or
 * the call was interrupted.
 */
static void
answer(struct reader *rd)
{
	struct bare *b = rd->b;
	bool done = false;

	memset(rd->req, 0, b->req_size);
	if (sys_notif_recv(b->notify_fd, rd->req) < 0)
		return;
	memset(rd->resp, 0, b->resp_size);
	rd->resp->id = rd->req->id;
	if (b->emulate && rd->req->data.nr == __NR_openat)
		done = emulate_openat(rd);
	else if (b->emulate && rd->req->data.nr == __NR_statx)
		done = emulate_statx(rd);
	if (!done) {
		memset(rd->resp, 0, b->resp_size);
		rd->resp->id = rd->req->id;
		rd->resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		done = sys_notif_send(b->notify_fd, rd->resp) == 0;
	}
	if (done)
		__atomic_add_fetch(&b->answered, 1, __ATOMIC_RELAXED);
}

static int
wait_child(int pidfd)
{
	siginfo_t si;

	for (;;) {
		memset(&si, 0, sizeof(si));
		if (waitid(P_PIDFD, (id_t)pidfd, &si, WEXITED) == 0)
			break;
		if (errno != EINTR) {
			perror("bare_notify: waitid");
			return 125;
		}
	}
	return si.si_code == CLD_EXITED ? si.si_status : 128 + si.si_status;
}

static int
loop_poll(struct bare *b, int pidfd)
{
	struct pollfd pfd[2] = {
	    {.fd = b->notify_fd, .events = POLLIN},
	    {.fd = pidfd, .events = POLLIN},
	};

	for (;;) {
		int n = poll(pfd, ARRAY_SIZE(pfd), -1);
		if (n < 0 && errno != EINTR) {
			perror("bare_notify: poll");
			return 125;
		}
		if (n <= 0)
			continue;
		if (pfd[0].revents & POLLIN)
			answer(&b->r[0]);
		if (pfd[1].revents & POLLIN)
			return wait_child(pidfd);
	}
}

static void *
reader(void *arg)
{
	for (;;)
		answer(arg);
	return NULL;
}

static int
loop_thread(struct bare *b, int pidfd)
{
	for (unsigned i = 0; i < b->n_readers; i++) {
		pthread_t t;
		int r = pthread_create(&t, NULL, reader, &b->r[i]);
		if (r != 0) {
			fprintf(stderr, "bare_notify: pthread_create: %s\n", strerror(r));
			return 125;
		}
	}
	/* The readers stay blocked in RECV for good: exit() ends them with the process. */
	return wait_child(pidfd);
}

static int
alloc_buffers(struct bare *b)
{
	struct seccomp_notif_sizes sizes;

	if (sys_seccomp(SECCOMP_GET_NOTIF_SIZES, 0, &sizes) < 0)
		return -errno;
	b->req_size = sizes.seccomp_notif > sizeof(struct seccomp_notif)
	                  ? sizes.seccomp_notif
	                  : sizeof(struct seccomp_notif);
	b->resp_size = sizes.seccomp_notif_resp > sizeof(struct seccomp_notif_resp)
	                   ? sizes.seccomp_notif_resp
	                   : sizeof(struct seccomp_notif_resp);
	for (unsigned i = 0; i < b->n_readers; i++) {
		b->r[i] = (struct reader){
		    .b = b, .req = calloc(1, b->req_size), .resp = calloc(1, b->resp_size)};
		if (!b->r[i].req || !b->r[i].resp)
			return -ENOMEM;
	}
	return 0;
}

static void
usage(FILE *f)
{
	fputs("usage: bare_notify [--loop poll|thread] [--readers N] [--no-sync-wake] [--emulate]\n"
	      "                   [--count] -- CMD [ARGS...]\n",
	      f);
}

int
main(int argc, char **argv)
{
	static const struct option lopts[] = {
	    {"loop", required_argument, NULL, 'l'},
	    {"readers", required_argument, NULL, 'r'},
	    {"no-sync-wake", no_argument, NULL, 'n'},
	    {"emulate", no_argument, NULL, 'e'},
	    {"count", no_argument, NULL, 'c'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	enum loop_kind kind = LOOP_POLL;
	bool sync_wake = true, count = false;
	struct bare b = {.n_readers = 1};
	struct sv_agent agent = {.pidfd = -1, .notify_fd = -1};
	struct sock_fprog prog = {0};
	int opt, r;

	while ((opt = getopt_long(argc, argv, "+h", lopts, NULL)) != -1) {
		switch (opt) {
		case 'l':
			if (strcmp(optarg, loop_names[LOOP_POLL]) == 0)
				kind = LOOP_POLL;
			else if (strcmp(optarg, loop_names[LOOP_THREAD]) == 0)
				kind = LOOP_THREAD;
			else
				return usage(stderr), 2;
			break;
		case 'r': {
			char *end;
			long n = strtol(optarg, &end, 10);
			if (*end || n < 1 || n > READERS_MAX)
				return usage(stderr), 2;
			b.n_readers = (unsigned)n;
			break;
		}
		case 'n':
			sync_wake = false;
			break;
		case 'e':
			b.emulate = true;
			break;
		case 'c':
			count = true;
			break;
		case 'h':
			return usage(stdout), 0;
		default:
			return usage(stderr), 2;
		}
	}
	if (optind >= argc)
		return usage(stderr), 2;

	/* moat's filter, protecting this process as moat protects itself. */
	pid_t tid = gettid();
	struct sv_filter_opts fo = {
	    .supervisor_pid = getpid(),
	    .supervisor_pgrp = getpgrp(),
	    .supervisor_tids = &tid,
	    .n_supervisor_tids = 1,
	};
	r = sv_filter_build(&fo, &prog);
	if (r == 0)
		r = alloc_buffers(&b);
	if (r == 0)
		r = sv_agent_start(argv + optind, &prog, NULL, &agent);
	if (r < 0) {
		fprintf(stderr, "bare_notify: starting %s: %s\n", argv[optind], strerror(-r));
		return 125;
	}
	b.notify_fd = agent.notify_fd;
	if (sync_wake) {
		r = sys_notif_set_flags(b.notify_fd, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
		if (r < 0)
			fprintf(stderr, "bare_notify: SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP: %s\n",
			        strerror(-r));
	}
	int status = kind == LOOP_POLL ? loop_poll(&b, agent.pidfd) : loop_thread(&b, agent.pidfd);
	if (count)
		fprintf(stderr,
		        "bare_notify: %llu notifications answered (%s loop, %u reader%s%s)\n",
		        __atomic_load_n(&b.answered, __ATOMIC_RELAXED), loop_names[kind],
		        kind == LOOP_THREAD ? b.n_readers : 1,
		        kind == LOOP_THREAD && b.n_readers > 1 ? "s" : "",
		        sync_wake ? ", sync wake-up" : "");
	/* What the child left running goes with it, as under moat run. */
	kill(-agent.pgrp, SIGKILL);
	free(prog.filter);
	exit(status);
}

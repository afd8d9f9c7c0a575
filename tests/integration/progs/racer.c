/* SPDX-License-Identifier: MIT */
/*
 * racer MODE ALLOWED DENIED [FLIPS [DENIED_INO]]: a second thread flips a path
 * buffer between ALLOWED and DENIED (same length, one byte apart, so every read
 * of the buffer names one of the two) FLIPS times (default 100000), while the
 * first thread uses the buffer in a loop. Whatever the first thread reaches is
 * classified; the denied object must never be reached.
 *
 *   open     open + read; the denied file holds "CANARY"
 *   stat     stat; the denied file is recognised by DENIED_INO
 *   exec     vfork + execve; ALLOWED exits 0, DENIED exits 1 (true / false)
 *   symlink  the second thread swaps a symlink ALLOWED (the link) between two
 *            targets on disk (DENIED: the denied target, ALLOWED.ok: the allowed
 *            one) instead of flipping memory; the first thread opens the link
 *
 * Prints "MODE: tries=N ok=N refused=N other=N leaked=N flips=N" and exits 1 if
 * anything leaked, 0 otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MIN_TRIES 2000

static char path[4096];
static size_t flip_at;
static char byte_allowed, byte_denied;
static long flips;   /* how many flips (exec: how many execs) */
static long flipped; /* how many were made */
static atomic_int started, flipper_done, main_done;
static const char *mode;
static const char *link_allowed, *link_denied, *link_path;
static char link_tmp[4200];

static void
spin(unsigned n)
{
	for (volatile unsigned i = 0; i < n; i++)
		;
}

static void *
flipper(void *arg)
{
	unsigned seed = 12345;
	long i = 0;

	atomic_store(&started, 1);
	/* In exec mode, flip for as long as the other thread runs; else FLIPS times. */
	for (; i < flips || (strcmp(mode, "exec") == 0 && !atomic_load(&main_done)); i++) {
		if (strcmp(mode, "symlink") == 0) {
			unlink(link_tmp);
			if (symlink(i & 1 ? link_denied : link_allowed, link_tmp) == 0)
				rename(link_tmp, link_path);
		} else {
			((volatile char *)path)[flip_at] = i & 1 ? byte_denied : byte_allowed;
		}
		seed = seed * 1103515245u + 12345u;
		/* About 13 µs on average: 100,000 flips span a second or so of opens. */
		spin((seed >> 16) % 65536);
	}
	((volatile char *)path)[flip_at] = byte_allowed;
	flipped = i;
	atomic_store(&flipper_done, 1);
	return NULL;
}

struct counts {
	long tries, ok, refused, other, leaked;
};

static void
try_open(const char *p, struct counts *c)
{
	char buf[256];
	int fd = open(p, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		if (errno == EACCES)
			c->refused++;
		else
			c->other++;
		return;
	}
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	if (strstr(buf, "CANARY"))
		c->leaked++;
	else
		c->ok++;
}

static void
try_stat(unsigned long long denied_ino, struct counts *c)
{
	struct stat st;

	if (stat(path, &st) < 0) {
		if (errno == ENOENT)
			c->refused++;
		else
			c->other++;
	} else if ((unsigned long long)st.st_ino == denied_ino) {
		c->leaked++;
	} else {
		c->ok++;
	}
}

static void
try_exec(struct counts *c)
{
	static volatile int exec_errno;
	char *argv[] = {"racer-child", NULL};
	char *envp[] = {NULL};
	int status;

	exec_errno = 0;
	/* vfork: the child shares this memory, so the flipper reaches its execve's path. */
	pid_t pid = vfork();
	if (pid == 0) {
		execve(path, argv, envp);
		exec_errno = errno;
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0) {
		c->other++;
		return;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && exec_errno == EACCES)
		c->refused++;
	else if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		c->ok++;
	else if (WIFEXITED(status) && WEXITSTATUS(status) == 1)
		c->leaked++; /* the denied binary ran */
	else
		c->other++;
}

int
main(int argc, char **argv)
{
	struct counts c = {0};
	unsigned long long denied_ino = 0;
	pthread_t t;

	if (argc < 4) {
		fprintf(stderr,
		        "usage: racer open|stat|exec|symlink ALLOWED DENIED [FLIPS [INO]]\n");
		return 2;
	}
	mode = argv[1];
	flips = argc > 4 ? atol(argv[4]) : 100000;
	denied_ino = argc > 5 ? strtoull(argv[5], NULL, 10) : 0;
	if (strcmp(mode, "symlink") == 0) {
		/* The link (ALLOWED) flips between ALLOWED.ok and DENIED on disk. */
		static char ok[4200];
		snprintf(ok, sizeof(ok), "%s.ok", argv[2]);
		link_path = argv[2];
		link_allowed = ok;
		link_denied = argv[3];
		snprintf(link_tmp, sizeof(link_tmp), "%s.tmp", argv[2]);
		snprintf(path, sizeof(path), "%s", argv[2]);
	} else {
		size_t n = strlen(argv[2]);
		if (n != strlen(argv[3]) || n >= sizeof(path)) {
			fprintf(stderr, "racer: the two paths must have the same length\n");
			return 2;
		}
		for (flip_at = 0; flip_at < n && argv[2][flip_at] == argv[3][flip_at]; flip_at++)
			;
		if (flip_at == n || strcmp(argv[2] + flip_at + 1, argv[3] + flip_at + 1) != 0) {
			fprintf(stderr, "racer: the two paths must differ in exactly one byte\n");
			return 2;
		}
		memcpy(path, argv[2], n + 1);
		byte_allowed = argv[2][flip_at];
		byte_denied = argv[3][flip_at];
	}
	if (pthread_create(&t, NULL, flipper, NULL) != 0)
		return 2;
	while (!atomic_load(&started))
		;
	/* Keep going until the flips are done, and for at least MIN_TRIES (exec: FLIPS tries). */
	for (;;) {
		if (strcmp(mode, "exec") == 0) {
			if (c.tries >= flips)
				break;
		} else if (atomic_load(&flipper_done) && c.tries >= MIN_TRIES) {
			break;
		}
		c.tries++;
		if (strcmp(mode, "open") == 0 || strcmp(mode, "symlink") == 0)
			try_open(path, &c);
		else if (strcmp(mode, "stat") == 0)
			try_stat(denied_ino, &c);
		else
			try_exec(&c);
	}
	atomic_store(&main_done, 1);
	pthread_join(t, NULL);
	printf("%s: tries=%ld ok=%ld refused=%ld other=%ld leaked=%ld flips=%ld\n", mode, c.tries,
	       c.ok, c.refused, c.other, c.leaked, flipped);
	return c.leaked ? 1 : 0;
}

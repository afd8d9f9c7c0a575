/* SPDX-License-Identifier: MIT */
/*
 * open_race MODE SECRET_PATH SECRET_TEXT ITERATIONS: opens and reads a path in a
 * loop while it is being changed under the supervisor:
 *   thread   a second thread flips the path buffer (allowed "ok.txt" / SECRET_PATH)
 *   clonevm  the same from a CLONE_VM peer process (a separate thread group)
 *   vfork    vfork children open the buffer while the parent's thread flips it
 *   symlink  a thread swaps the symlink "lnk" between ok.txt and SECRET_PATH (rename)
 *   dirfd    a thread dup2()s a dirfd between "." and SECRET_PATH's directory while
 *            the first opens the secret's base name relative to it
 * Prints LEAK and exits 1 if SECRET_TEXT is ever read.
 */
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char path[4096];
static const char *good = "ok.txt", *bad;
static atomic_int stop;
static int dirfds[2];

static int
flip(void *arg)
{
	size_t g = strlen(good) + 1, b = strlen(bad) + 1;
	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		memcpy(path, good, g);
		atomic_signal_fence(memory_order_seq_cst);
		memcpy(path, bad, b);
		atomic_signal_fence(memory_order_seq_cst);
	}
	return 0;
}

static void *
flip_thread(void *arg)
{
	flip(arg);
	return NULL;
}

static void *
swap_link(void *arg)
{
	(void)arg;
	unlink("lg");
	unlink("lb");
	if (symlink(good, "lg") < 0 || symlink(bad, "lb") < 0)
		return NULL;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		if (link("lg", "lg2") == 0)
			rename("lg2", "lnk");
		if (link("lb", "lb2") == 0)
			rename("lb2", "lnk");
	}
	return NULL;
}

static void *
swap_dirfd(void *arg)
{
	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		dup2(dirfds[0], 100);
		dup2(dirfds[1], 100);
	}
	return NULL;
}

static int
check(int fd, const char *secret)
{
	char buf[256];
	if (fd < 0)
		return 0;
	ssize_t k = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (k <= 0)
		return 0;
	buf[k] = '\0';
	if (!strstr(buf, secret))
		return 0;
	printf("LEAK: %s\n", buf);
	return 1;
}

int
main(int argc, char **argv)
{
	static char stack[1 << 16];
	pthread_t t;

	if (argc < 5)
		return 2;
	const char *mode = argv[1], *secret = argv[3];
	bad = argv[2];
	long n = atol(argv[4]);
	static long opened;
	static int leaks;
	int fd;
	FILE *f = fopen(good, "w");
	if (!f)
		return 2;
	fputs("harmless\n", f);
	fclose(f);
	strcpy(path, good);
	if (strcmp(mode, "thread") == 0 || strcmp(mode, "vfork") == 0) {
		pthread_create(&t, NULL, flip_thread, NULL);
	} else if (strcmp(mode, "clonevm") == 0) {
		if (clone(flip, stack + sizeof(stack), CLONE_VM | SIGCHLD, NULL) < 0)
			return 2;
	} else if (strcmp(mode, "symlink") == 0) {
		pthread_create(&t, NULL, swap_link, NULL);
		strcpy(path, "lnk");
	} else if (strcmp(mode, "dirfd") == 0) {
		char d[4096];
		snprintf(d, sizeof(d), "%s", bad);
		dirfds[0] = open(".", O_RDONLY | O_DIRECTORY);
		dirfds[1] = open(dirname(d), O_RDONLY | O_DIRECTORY); /* refused: stays -1 */
		if (dirfds[1] < 0)
			dirfds[1] = dirfds[0];
		snprintf(d, sizeof(d), "%s", bad);
		snprintf(path, sizeof(path), "%s", basename(d));
		/* ok.txt's name differs: give the allowed directory a file of that name */
		f = fopen(path, "w");
		if (f) {
			fputs("harmless\n", f);
			fclose(f);
		}
		pthread_create(&t, NULL, swap_dirfd, NULL);
	} else {
		return 2;
	}
	for (long i = 0; i < n && !leaks; i++) {
		if (strcmp(mode, "vfork") == 0) {
			/* The child shares our memory: it reads into vbuf, we look. */
			static char vbuf[256];
			static volatile ssize_t vlen;
			vlen = -1;
			pid_t p = vfork();
			if (p == 0) {
				int cfd = open(path, O_RDONLY);
				if (cfd >= 0)
					vlen = read(cfd, vbuf, sizeof(vbuf) - 1);
				_exit(0);
			}
			waitpid(p, NULL, 0);
			fd = -1;
			if (vlen >= 0) {
				opened++;
				vbuf[vlen] = '\0';
				if (strstr(vbuf, secret)) {
					printf("LEAK: %s\n", vbuf);
					leaks = 1;
				}
			}
			continue;
		} else if (strcmp(mode, "dirfd") == 0) {
			fd = openat(100, path, O_RDONLY);
		} else {
			fd = open(path, O_RDONLY);
		}
		if (fd >= 0)
			opened++;
		leaks = check(fd, secret);
	}
	atomic_store(&stop, 1);
	printf("open_race %s: %ld opens succeeded, %s\n", mode, opened,
	       leaks ? "LEAKED" : "no leak");
	if (strcmp(mode, "clonevm") == 0)
		wait(NULL);
	return leaks;
}

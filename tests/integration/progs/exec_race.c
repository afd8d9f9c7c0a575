/* SPDX-License-Identifier: MIT */
/*
 * exec_race DIR SECONDS MAXTRIES: a time-of-check race on execve. DIR holds two
 * copies of this program, DIR/okk (harmless) and DIR/bad (the canary). A
 * second thread rewrites, over and over, the path buffer ("DIR/okk" <->
 * "DIR/bad") and the argv[1] buffer ("--safe" <-> "--evil") that the first
 * thread's vfork children pass to execve (vfork: the child shares this memory,
 * so the rewrites reach it while the kernel and moat read it). The policy
 * under test denies DIR/bad and DIR/okk with "--evil": only "DIR/okk --safe"
 * may run. The first thread runs until SECONDS have passed or MAXTRIES execs.
 *
 * As a child (argv[1] is --safe or --evil, argv[2] is DIR): the harmless
 * command, DIR/okk --safe, exits 0; anything else is the canary: it appends a
 * line to DIR/marker, prints "CANARY-RAN" and exits 9.
 *
 * Prints "race: tries=N ok=N eacces=N enoent=N canary=N other=N" and exits 1
 * if the canary ran, 0 otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static char path[PATH_MAX];
static size_t tail; /* where "okk"/"bad" starts in path */
static char arg[8] = "--safe";
static atomic_int stop;

static void
spin(unsigned n)
{
	for (volatile unsigned i = 0; i < n; i++)
		;
}

static void *
flipper(void *unused)
{
	unsigned seed = 1;
	(void)unused;
	while (!atomic_load(&stop)) {
		int evil = rand_r(&seed) & 1;
		/* Byte by byte, in a random order of the two buffers: torn states happen too. */
		if (rand_r(&seed) & 1) {
			memcpy(path + tail, evil ? "bad" : "okk", 3);
			memcpy(arg + 2, evil ? "evil" : "safe", 4);
		} else {
			memcpy(arg + 2, evil ? "evil" : "safe", 4);
			memcpy(path + tail, evil ? "bad" : "okk", 3);
		}
		spin(rand_r(&seed) % 2000);
	}
	return NULL;
}

static int
child(char **argv)
{
	char exe[PATH_MAX], marker[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	const char *base;

	exe[n > 0 ? n : 0] = '\0';
	base = strrchr(exe, '/');
	base = base ? base + 1 : exe;
	if (strcmp(argv[1], "--safe") == 0 && strcmp(base, "okk") == 0)
		return 0;
	snprintf(marker, sizeof(marker), "%s/marker", argv[2]);
	int fd = open(marker, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (fd >= 0) {
		dprintf(fd, "CANARY-RAN exe=%s arg=%s\n", exe, argv[1]);
		close(fd);
	}
	printf("CANARY-RAN exe=%s arg=%s\n", exe, argv[1]);
	return 9;
}

int
main(int argc, char **argv)
{
	if (argc >= 3 && (strcmp(argv[1], "--safe") == 0 || strcmp(argv[1], "--evil") == 0))
		return child(argv);
	if (argc != 4) {
		fprintf(stderr, "usage: exec_race DIR SECONDS MAXTRIES\n");
		return 2;
	}
	const char *dir = argv[1];
	double seconds = atof(argv[2]);
	long max = atol(argv[3]);
	long tries = 0, ok = 0, eacces = 0, enoent = 0, canary = 0, other = 0;
	char *cargv[] = {"child", arg, (char *)dir, NULL};
	struct timespec t0, t;
	pthread_t th;

	tail = (size_t)snprintf(path, sizeof(path), "%s/", dir);
	memcpy(path + tail, "okk", 4);
	setvbuf(stdout, NULL, _IOLBF, 0);
	pthread_create(&th, NULL, flipper, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (tries >= max ||
		    (double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 >
		        seconds)
			break;
		volatile int err = 0;
		int st;
		pid_t pid = vfork();
		if (pid == 0) {
			execve(path, cargv, environ);
			err = errno;
			_exit(127);
		}
		tries++;
		if (pid < 0 || waitpid(pid, &st, 0) < 0) {
			other++;
			continue;
		}
		if (err == EACCES)
			eacces++;
		else if (err == ENOENT)
			enoent++;
		else if (err)
			other++;
		else if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
			ok++;
		else if (WIFEXITED(st) && WEXITSTATUS(st) == 9)
			canary++;
		else {
			if (other < 5)
				fprintf(stderr, "exec_race: status %#x\n", st);
			other++;
		}
	}
	atomic_store(&stop, 1);
	pthread_join(th, NULL);
	printf("race: tries=%ld ok=%ld eacces=%ld enoent=%ld canary=%ld other=%ld\n", tries, ok,
	       eacces, enoent, canary, other);
	return canary ? 1 : 0;
}

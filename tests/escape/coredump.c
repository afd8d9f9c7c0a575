/* SPDX-License-Identifier: MIT */
/*
 * coredump DIR [GOOD]: a core dump is written by the kernel into the working
 * directory of the crashing process, with no system call to trap (core_pattern
 * "core"). A child raises its core limit, enters DIR and aborts.
 *   coredump DIR        chdir(DIR) directly: allowed for every directory the
 *                       agent may stat, e.g. "/" or $HOME, which it may not write
 *   coredump DIR GOOD   chdir is CONTINUEd after the check: a second thread flips
 *                       the path from GOOD to DIR (a denied directory) meanwhile
 * Prints whether a child got into DIR and dumped core there.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static char path[4096];
static const char *good, *bad;

static void *
flip(void *arg)
{
	size_t g = strlen(good) + 1, b = strlen(bad) + 1;
	(void)arg;
	for (;;) {
		memcpy(path, good, g);
		atomic_signal_fence(memory_order_seq_cst);
		memcpy(path, bad, b);
		atomic_signal_fence(memory_order_seq_cst);
	}
	return NULL;
}

int
main(int argc, char **argv)
{
	struct rlimit rl = {RLIM_INFINITY, RLIM_INFINITY};
	char cwd[4096];
	int st;

	if (argc < 2)
		return 2;
	bad = argv[1];
	good = argc > 2 ? argv[2] : argv[1];
	strcpy(path, good);
	pid_t p = fork();
	if (p == 0) {
		pthread_t t;
		setrlimit(RLIMIT_CORE, &rl);
		if (argc > 2)
			pthread_create(&t, NULL, flip, NULL);
		for (int i = 0; i < 20000; i++) {
			if (chdir(path) == 0 && getcwd(cwd, sizeof(cwd)) && strcmp(cwd, bad) == 0)
				abort();
			if (chdir(good) < 0)
				break;
		}
		_exit(3);
	}
	waitpid(p, &st, 0);
	printf("child: %s\n",
	       WIFSIGNALED(st) && WCOREDUMP(st) ? "dumped core in the directory" : "no core");
	return 0;
}

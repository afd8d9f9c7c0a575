/* SPDX-License-Identifier: MIT */
/*
 * exec_race path GOOD BAD TRIES | exec_race argv BINARY GOOD BAD TRIES
 *
 * The supervisor decides an exec on the path and argv it reads from memory and
 * then lets the kernel carry the exec out, which reads them again. In each of
 * TRIES forked children a second thread flips the buffer between GOOD and BAD
 * while the first execs it. "path" flips the file name (BAD: a denied binary or
 * script); "argv" flips argv[1] (BAD: arguments an exec rule denies). Whatever
 * the exec'd program prints is the evidence; this program prints nothing else.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char buf[4096];
static const char *good, *bad;

static void *
flip(void *arg)
{
	size_t g = strlen(good) + 1, b = strlen(bad) + 1;
	(void)arg;
	for (;;) {
		memcpy(buf, good, g);
		atomic_signal_fence(memory_order_seq_cst);
		memcpy(buf, bad, b);
		atomic_signal_fence(memory_order_seq_cst);
	}
	return NULL;
}

int
main(int argc, char **argv)
{
	const char *bin;
	int tries;

	if (argc == 5 && strcmp(argv[1], "path") == 0) {
		bin = NULL;
		good = argv[2];
		bad = argv[3];
		tries = atoi(argv[4]);
	} else if (argc == 6 && strcmp(argv[1], "argv") == 0) {
		bin = argv[2];
		good = argv[3];
		bad = argv[4];
		tries = atoi(argv[5]);
	} else {
		return 2;
	}
	if (strlen(good) >= sizeof(buf) || strlen(bad) >= sizeof(buf))
		return 2;
	strcpy(buf, good);
	for (int i = 0; i < tries; i++) {
		pid_t p = fork();
		if (p < 0)
			return 2;
		if (p == 0) {
			pthread_t t;
			pthread_create(&t, NULL, flip, NULL);
			char *av[] = {bin ? (char *)bin : buf, bin ? buf : (char *)"x", NULL};
			execv(bin ? bin : buf, av);
			_exit(127);
		}
		waitpid(p, NULL, 0);
	}
	return 0;
}

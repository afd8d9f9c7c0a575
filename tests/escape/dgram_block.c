/* SPDX-License-Identifier: MIT */
/*
 * dgram_block: a datagram sendto on a blocking unix socket is carried out by
 * the supervisor on its own loop. When the receiver's queue is full, the
 * supervisor blocks in sendto and every other trapped call of every process
 * waits. A second thread then times one stat(). Natively it takes microseconds.
 * Needs a policy that allows connect and bind on unix sockets in $PWD.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static struct sockaddr_un a = {.sun_family = AF_UNIX};

static void *
sender(void *arg)
{
	(void)arg;
	int s = socket(AF_UNIX, SOCK_DGRAM, 0);
	for (int i = 0; i < 1000; i++)
		if (sendto(s, "x", 1, 0, (struct sockaddr *)&a, sizeof(a)) < 0)
			break;
	return NULL;
}

static void
timeout(int sig)
{
	(void)sig;
	static const char m[] = "stat: no answer in 3 s: the supervisor is stuck\n";
	(void)!write(1, m, sizeof(m) - 1);
	_exit(1);
}

int
main(void)
{
	char cwd[80];
	struct timespec t0, t1;
	struct stat st;
	pthread_t t;

	if (!getcwd(cwd, sizeof(cwd)))
		return 2;
	snprintf(a.sun_path, sizeof(a.sun_path), "%s/block.sock", cwd);
	unlink(a.sun_path);
	int r = socket(AF_UNIX, SOCK_DGRAM, 0);
	if (bind(r, (struct sockaddr *)&a, sizeof(a)) < 0) {
		printf("bind: %s\n", strerrorname_np(errno));
		return 2;
	}
	pthread_create(&t, NULL, sender, NULL);
	sleep(1);
	signal(SIGALRM, timeout);
	alarm(3);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	stat("/", &st);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("stat answered in %.3f s\n",
	       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	fflush(stdout);
	unlink(a.sun_path);
	_exit(0);
}

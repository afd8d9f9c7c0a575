/* SPDX-License-Identifier: MIT */
/*
 * flood SECRET_PATH THREADS: THREADS threads at once, each opening an allowed
 * file and SECRET_PATH alternately 50 times. Every allowed open must succeed
 * and every secret open must fail, however full the notification queue.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static const char *secret;
static atomic_int leaks, fails, reads;

static void *
worker(void *arg)
{
	char buf[64];
	(void)arg;
	for (int i = 0; i < 50; i++) {
		int s = i & 1;
		int fd = open(s ? secret : "flood.txt", O_RDONLY);
		if (fd < 0) {
			if (!s)
				atomic_fetch_add(&fails, 1);
			continue;
		}
		if (s)
			atomic_fetch_add(&leaks, 1);
		else if (read(fd, buf, sizeof(buf)) > 0)
			atomic_fetch_add(&reads, 1);
		close(fd);
	}
	return NULL;
}

int
main(int argc, char **argv)
{
	pthread_attr_t at;

	if (argc < 3)
		return 2;
	secret = argv[1];
	int n = atoi(argv[2]), started = 0;
	FILE *f = fopen("flood.txt", "w");
	if (!f)
		return 2;
	fputs("ok\n", f);
	fclose(f);
	pthread_t *t = calloc((size_t)n, sizeof(*t));
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 1 << 16);
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], &at, worker, NULL) == 0)
			started++;
		else
			t[i] = 0;
	for (int i = 0; i < n; i++)
		if (t[i])
			pthread_join(t[i], NULL);
	printf("flood: %d threads, %d allowed reads, %d allowed opens failed, %d secret opens "
	       "succeeded\n",
	       started, atomic_load(&reads), atomic_load(&fails), atomic_load(&leaks));
	return atomic_load(&leaks) || atomic_load(&fails) ? 1 : 0;
}

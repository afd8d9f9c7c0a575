/* SPDX-License-Identifier: MIT */
/*
 * chdir_race GOOD DENIED_DIR SECRET_NAME SECRET_TEXT: chdir is decided, then
 * CONTINUEd, so a second thread can flip its path to a denied directory after
 * the check. Then tries to use that working directory: open SECRET_NAME, list
 * ".", exec "./SECRET_NAME". Exits 1 if the secret is read.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char path[4096];
static const char *good, *bad;
static atomic_int stop;

static void *
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
	return NULL;
}

int
main(int argc, char **argv)
{
	char cwd[4096], buf[256];
	pthread_t t;
	int won = 0;

	if (argc < 5)
		return 2;
	good = argv[1];
	bad = argv[2];
	strcpy(path, good);
	pthread_create(&t, NULL, flip, NULL);
	for (int i = 0; i < 20000 && !won; i++) {
		if (chdir(path) < 0)
			continue;
		won = getcwd(cwd, sizeof(cwd)) && strcmp(cwd, bad) == 0;
		if (!won && chdir(good) < 0)
			return 2;
	}
	atomic_store(&stop, 1);
	pthread_join(t, NULL);
	printf("chdir race: %s\n", won ? "the working directory is the denied one" : "never won");
	if (!won)
		return 0;
	int fd = open(argv[3], O_RDONLY);
	if (fd >= 0) {
		ssize_t n = read(fd, buf, sizeof(buf) - 1);
		buf[n > 0 ? n : 0] = '\0';
		if (strstr(buf, argv[4])) {
			printf("LEAK: %s\n", buf);
			return 1;
		}
	}
	printf("open %s from there: %s\n", argv[3],
	       fd < 0 ? strerrorname_np(errno) : "opened, no secret");
	DIR *d = opendir(".");
	printf("opendir(.): %s\n", d ? "LISTED" : strerrorname_np(errno));
	return d ? 1 : 0;
}

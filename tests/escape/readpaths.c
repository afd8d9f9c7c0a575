/* SPDX-License-Identifier: MIT */
/*
 * readpaths SECRET PATH...: opens each PATH for reading (and, with "w:" in
 * front, for writing) and prints what happened. Exits 1 if any read returned
 * text containing SECRET or any write-open succeeded: the escape worked.
 * The paths are the attack: /proc/self/fd/../../PID/fd/N, /proc/PID/root/...,
 * hard links, bind aliases, symlinks, /dev/pts/N of another terminal...
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	int leaked = 0;

	for (int i = 2; i < argc; i++) {
		const char *p = argv[i];
		int wr = strncmp(p, "w:", 2) == 0;
		if (wr)
			p += 2;
		int fd = open(p, wr ? O_WRONLY | O_APPEND : O_RDONLY);
		if (fd < 0) {
			printf("%s: open: %s\n", p, strerrorname_np(errno));
			continue;
		}
		if (wr) {
			printf("%s: LEAK: opened for writing\n", p);
			leaked = 1;
			close(fd);
			continue;
		}
		char buf[512];
		ssize_t n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n < 0) {
			printf("%s: read: %s\n", p, strerrorname_np(errno));
			continue;
		}
		buf[n] = '\0';
		if (strstr(buf, argv[1])) {
			printf("%s: LEAK: %s\n", p, buf);
			leaked = 1;
		} else {
			printf("%s: read %zd bytes, no secret\n", p, n);
		}
	}
	return leaked;
}

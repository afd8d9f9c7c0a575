/* SPDX-License-Identifier: MIT */
/*
 * holder SECRET TMPFILE: run OUTSIDE moat. Holds the secret in a deleted file,
 * a memfd and a pipe, prints "PID DELETED_FD MEMFD PIPE_FD" and waits. It stands
 * for any process of the same user (an editor, a password manager, a shell).
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	size_t n = strlen(argv[1]);
	int fd = open(argv[2], O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int m = memfd_create("secret", MFD_CLOEXEC);
	int p[2];
	if (fd < 0 || m < 0 || pipe(p) < 0)
		return 2;
	if (write(fd, argv[1], n) != (ssize_t)n || write(m, argv[1], n) != (ssize_t)n ||
	    write(p[1], argv[1], n) != (ssize_t)n)
		return 2;
	unlink(argv[2]);
	printf("%d %d %d %d\n", (int)getpid(), fd, m, p[0]);
	fflush(stdout);
	for (;;)
		pause();
}

/* SPDX-License-Identifier: MIT */
/*
 * path_edges: path arguments at the edges of what can be read from the target:
 * no NUL before an unmapped page, a NUL as the last byte of a page, NULL, an
 * unmapped address, "", 4095 and 4096 bytes, a 300-byte component. One line
 * per case with the errno; the caller compares the output natively and under
 * moat: they must be the same.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static void
res(const char *name, long r)
{
	printf("%-24s %s\n", name, r >= 0 ? "ok" : strerrorname_np(errno));
	if (r > 2)
		close((int)r);
}

int
main(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	struct stat st;
	char *m = mmap(NULL, (size_t)(2 * pg), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
	               -1, 0);

	if (m == MAP_FAILED || munmap(m + pg, (size_t)pg) < 0)
		return 2;
	FILE *f = fopen("edge.txt", "w");
	if (!f)
		return 2;
	fclose(f);
	memset(m, 'a', (size_t)pg);
	memcpy(m + pg - 8, "edge.txt", 8); /* no NUL before the hole */
	res("no NUL before a hole", open(m + pg - 8, O_RDONLY));
	memcpy(m + pg - 9, "edge.txt", 9); /* NUL is the page's last byte */
	res("NUL at the page's end", open(m + pg - 9, O_RDONLY));
	res("stat, NUL at page end", stat(m + pg - 9, &st));
	res("NULL", syscall(SYS_openat, AT_FDCWD, NULL, O_RDONLY));
	res("unmapped", open(m + pg, O_RDONLY));
	res("stat unmapped", stat(m + pg, &st));
	res("empty", open("", O_RDONLY));
	char *big = malloc(8192);
	if (!big)
		return 2;
	memset(big, 'a', 8192);
	for (int i = 1; i < 4096; i += 2)
		big[i] = '/';
	big[4094] = '\0';
	res("4094 bytes a/a/...", open(big, O_RDONLY));
	big[4094] = 'a';
	big[4095] = '\0';
	res("4095 bytes", open(big, O_RDONLY));
	big[4095] = 'a';
	big[4096] = '\0';
	res("4096 bytes", open(big, O_RDONLY));
	res("stat 4096 bytes", stat(big, &st));
	memset(big, 'b', 300);
	big[300] = '\0';
	res("300-byte component", open(big, O_RDONLY));
	res("mkdir 300-byte", mkdir(big, 0755));
	return 0;
}

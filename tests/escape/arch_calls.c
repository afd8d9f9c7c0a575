/* SPDX-License-Identifier: MIT */
/*
 * arch_calls SECRET_PATH: opens SECRET_PATH through the x32 ABI (syscall number
 * with bit 30 set) and the i386 ABI (int 0x80), in a child each. The filter
 * must kill both (SIGSYS). Exits 1 if either child was not killed.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static long
raw(long nr, long a, long b, long c)
{
	long r;
	__asm__ volatile("syscall"
	                 : "=a"(r)
	                 : "a"(nr), "D"(a), "S"(b), "d"(c)
	                 : "rcx", "r11", "memory");
	return r;
}

int
main(int argc, char **argv)
{
	int bad = 0;

	if (argc < 2)
		return 2;
	/* int 0x80 takes 32-bit pointers: the path must sit below 4 GiB */
	char *low = mmap((void *)0x10000000, 4096, PROT_READ | PROT_WRITE,
	                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (low == MAP_FAILED)
		return 2;
	snprintf(low, 4096, "%s", argv[1]);
	for (int mode = 0; mode < 2; mode++) {
		pid_t p = fork();
		if (p == 0) {
			long fd;
			if (mode == 0) {
				fd = raw(0x40000000L | 257, AT_FDCWD, (long)low, O_RDONLY);
			} else {
				__asm__ volatile("int $0x80"
				                 : "=a"(fd)
				                 : "a"(5L), "b"(low), "c"(0L)
				                 : "memory");
			}
			char buf[128] = "";
			if (fd >= 0 && raw(0, fd, (long)buf, sizeof(buf) - 1) > 0)
				printf("%s READ: %s\n", mode ? "i386" : "x32", buf);
			_exit(fd >= 0 ? 1 : 0);
		}
		int st;
		waitpid(p, &st, 0);
		int killed = WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS;
		printf("%s openat: %s\n", mode ? "i386" : "x32",
		       killed ? "killed by SIGSYS" : "NOT KILLED");
		bad |= !killed;
	}
	return bad;
}

/* SPDX-License-Identifier: MIT */
/*
 * badarch x32|int80: makes one system call the supervisor's filter must kill
 * the process for (getpid, with the x32 bit set, or through the i386 int 0x80
 * gate), then prints "survived" and exits 0. Under moat the process dies of
 * SIGSYS before it prints anything.
 */
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define X32_SYSCALL_BIT 0x40000000
#define I386_GETPID     20

int
main(int argc, char **argv)
{
	long r;

	if (argc < 2)
		return 2;
	if (strcmp(argv[1], "x32") == 0) {
		r = syscall(X32_SYSCALL_BIT | SYS_getpid);
	} else if (strcmp(argv[1], "int80") == 0) {
		long nr = I386_GETPID;
		__asm__ volatile("int $0x80" : "=a"(r) : "a"(nr) : "memory");
	} else {
		return 2;
	}
	printf("survived %ld\n", r);
	return 0;
}

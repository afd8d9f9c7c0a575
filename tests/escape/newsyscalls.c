/* SPDX-License-Identifier: MIT */
/*
 * newsyscalls PATH SECRET: path-taking syscalls newer than the filter's table
 * (Linux 6.13-6.17: setxattrat, getxattrat, listxattrat, removexattrat,
 * open_tree_attr, file_getattr, file_setattr) on a denied PATH. Each must fail
 * as a denied path does (or with ENOSYS on an older kernel). Exits 1 if any of
 * them reached the file; prints SECRET's xattr value if it could read it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

struct xattr_args {
	uint64_t value;
	uint32_t size, flags;
};
struct file_attr {
	uint64_t xflags;
	uint32_t extsize, nextents, projid, cowextsize;
};

static int reached;

static void
report(const char *name, long r)
{
	if (r < 0 && (errno == ENOSYS || errno == ENOENT || errno == EACCES || errno == EPERM)) {
		printf("%-14s refused: %s\n", name, strerrorname_np(errno));
		return;
	}
	printf("%-14s REACHED the denied file: %ld %s\n", name, r,
	       r < 0 ? strerrorname_np(errno) : "");
	reached = 1;
}

int
main(int argc, char **argv)
{
	char val[128] = "", list[256];
	struct xattr_args get = {(uint64_t)(uintptr_t)val, sizeof(val) - 1, 0};
	static char w[] = "written-from-inside-moat";
	struct xattr_args set = {(uint64_t)(uintptr_t)w, sizeof(w) - 1, 0};
	struct file_attr fa = {0};

	if (argc < 3)
		return 2;
	const char *p = argv[1];
	long r = syscall(464, AT_FDCWD, p, 0, "user.moat", &get, sizeof(get));
	report("getxattrat", r);
	if (r > 0 && strstr(val, argv[2]))
		printf("LEAK: user.moat = %s\n", val);
	report("setxattrat", syscall(463, AT_FDCWD, p, 0, "user.written", &set, sizeof(set)));
	report("listxattrat", syscall(465, AT_FDCWD, p, 0, list, sizeof(list)));
	report("removexattrat", syscall(466, AT_FDCWD, p, 0, "user.written"));
	report("file_getattr", syscall(468, AT_FDCWD, p, &fa, sizeof(fa), 0));
	report("file_setattr", syscall(469, AT_FDCWD, p, &fa, sizeof(fa), 0));
	report("open_tree_attr",
	       syscall(467, AT_FDCWD, p, 0x80000 /* OPEN_TREE_CLOEXEC */, NULL, 0));
	return reached;
}

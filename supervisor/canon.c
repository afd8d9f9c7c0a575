/* SPDX-License-Identifier: MIT */
/* Canonical paths for the command line: symlinks resolved where the path exists. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "moat/macro.h"

int
canon_resolve(const char *path, char *out, size_t size, void *userdata)
{
	char buf[PATH_MAX];

	if (!realpath(path, buf))
		return -errno;
	if (strlen(buf) >= size)
		return -ENAMETOOLONG;
	strcpy(out, buf);
	return 0;
}

/* realpath() turns /proc/self into /proc/<our pid>; the policy speaks of /proc/self. */
static int
proc_self(char *path, size_t size)
{
	char mine[32];
	int n = snprintf(mine, sizeof(mine), "/proc/%d", (int)getpid());

	if (strncmp(path, mine, (size_t)n) != 0 || (path[n] != '/' && path[n] != '\0'))
		return 0;
	size_t rest = strlen(path + n);
	if (sizeof("/proc/self") - 1 + rest >= size)
		return -ENAMETOOLONG;
	memmove(path + sizeof("/proc/self") - 1, path + n, rest + 1);
	memcpy(path, "/proc/self", sizeof("/proc/self") - 1);
	return 0;
}

int
canon_path(const char *cwd, const char *path, char *out, size_t size)
{
	char joined[2 * PATH_MAX], head[PATH_MAX], tail[2 * PATH_MAX] = "";

	if (!*path)
		return -ENOENT;
	int n = snprintf(joined, sizeof(joined), "%s%s%s", path[0] == '/' ? "" : cwd,
	                 path[0] == '/' ? "" : "/", path);
	if (n < 0 || (size_t)n >= sizeof(joined))
		return -ENAMETOOLONG;

	/* Peel components off the end until what is left exists. */
	for (;;) {
		if (realpath(joined, head)) {
			int r = policy_path_normalize(head, *tail ? tail + 1 : ".", out, size);
			return r < 0 ? r : proc_self(out, size);
		}
		if (errno != ENOENT && errno != ENOTDIR && errno != EACCES)
			return -errno;
		char *slash = strrchr(joined, '/');
		if (!slash)
			return -ENOENT;
		char rest[2 * PATH_MAX];
		snprintf(rest, sizeof(rest), "%s", tail);
		if ((size_t)snprintf(tail, sizeof(tail), "/%s%s", slash + 1, rest) >= sizeof(tail))
			return -ENAMETOOLONG;
		if (slash == joined) {
			joined[1] = '\0';
		} else {
			*slash = '\0';
		}
	}
}

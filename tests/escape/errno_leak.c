/* SPDX-License-Identifier: MIT */
/*
 * errno_leak LINK EXISTING MISSING SOCKDIR: a denied path must fail the same
 * way whether or not it exists. LINK is a symlink in the working directory to
 * a denied directory; EXISTING and MISSING are names in it. The supervisor
 * answers a failed resolution with the policy's errno only when the *lexical*
 * path is denied, so through LINK the kernel's own errno shows through. unix
 * connect() reports ENOENT before it asks the policy at all.
 * Prints each pair; exits 1 if any pair differs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static int differ;

static int
e_open(const char *p)
{
	return open(p, O_RDONLY) < 0 ? errno : 0;
}

static int
e_stat(const char *p)
{
	struct stat st;
	return stat(p, &st) < 0 ? errno : 0;
}

static int
e_mkdir(const char *p)
{
	return mkdir(p, 0755) < 0 ? errno : 0;
}

static int
e_connect(const char *p)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", p);
	int r = connect(s, (struct sockaddr *)&a, sizeof(a)) < 0 ? errno : 0;
	close(s);
	return r;
}

static void
pair(const char *what, int (*fn)(const char *), const char *a, const char *b)
{
	int x = fn(a), y = fn(b);
	printf("%-8s %-34s %-8s | %-34s %-8s %s\n", what, a, x ? strerrorname_np(x) : "ok", b,
	       y ? strerrorname_np(y) : "ok", x == y ? "" : "<- existence leaks");
	differ |= x != y;
}

int
main(int argc, char **argv)
{
	char a[4096], b[4096];

	if (argc < 5)
		return 2;
	const char *l = argv[1], *ex = argv[2], *mi = argv[3];
	snprintf(a, sizeof(a), "%s/%s", l, ex);
	snprintf(b, sizeof(b), "%s/%s", l, mi);
	pair("open", e_open, a, b);
	pair("stat", e_stat, a, b);
	snprintf(a, sizeof(a), "%s/%s/x", l, ex);
	snprintf(b, sizeof(b), "%s/%s/x", l, mi);
	pair("stat", e_stat, a, b);
	pair("mkdir", e_mkdir, a, b);
	snprintf(a, sizeof(a), "%s/%s", argv[4], ex);
	snprintf(b, sizeof(b), "%s/%s", argv[4], mi);
	pair("connect", e_connect, a, b);
	pair("stat", e_stat, a, b);
	return differ;
}

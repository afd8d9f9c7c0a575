/* SPDX-License-Identifier: MIT */
/*
 * probe: runs the file and socket operations named on its command line, one
 * per argument, and prints one line per operation: "OP ARG: RESULT", where
 * RESULT is "ok ...", "fd N", or the errno's name (EACCES, ENOENT, ...). The
 * integration tests run it natively and under moat run and compare the lines.
 *
 * An argument is OP,ARG[,ARG...]. A file descriptor argument is "cwd"
 * (AT_FDCWD), "@K" (the fd of the K-th successful open, from 0) or a number.
 * Flags are names joined by '|': rdonly wronly rdwr creat excl trunc append
 * path directory nofollow cloexec tmpfile nonblock. RESOLVE bits for openat2:
 * beneath in_root no_symlinks no_magiclinks no_xdev, or 0.
 *
 *   cat,PATH                 open O_RDONLY and print the first line read
 *   catat,FD,PATH            the same with openat
 *   open,PATH,FLAGS[,MODE]   open and keep the fd
 *   openat,FD,PATH,FLAGS[,MODE]
 *   openat2,FD,PATH,FLAGS,RESOLVE
 *   reopen,FD,FLAGS          open /proc/self/fd/N with FLAGS
 *   read,FD                  pread from offset 0, print the first line
 *   write,FD,TEXT            write TEXT at the fd's offset
 *   put,PATH,TEXT            create or truncate PATH and write TEXT
 *   stat,PATH  lstat,PATH  statat,FD,PATH   print the inode number and size
 *   access,PATH,MODE         MODE: letters of rwxf
 *   readlink,PATH  unlink,PATH  rmdir,PATH  mkdir,PATH  chdir,PATH  fchdir,FD
 *   link,OLD,NEW  symlink,TARGET,PATH  rename,OLD,NEW  chmod,PATH,OCTAL
 *   truncate,PATH,LEN  ls,PATH  close,FD  pid
 *   tcp,IPV4,PORT  tcp6,IPV6,PORT  unix,PATH  unixbind,PATH  abstract,NAME
 *   udp,IPV4,PORT,TEXT (sendto)  udpmsg,IPV4,PORT,TEXT (sendmsg)
 *   udpconn,IPV4,PORT,TEXT (connect, then send)
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "progs.h"

#define MAX_ARGS 8
#define MAX_REGS 64

static int regs[MAX_REGS];
static int n_regs;

static void
say_errno(const char *op, const char *arg)
{
	say(op, arg, "%s", err_name(errno));
}

static int
parse_fd(const char *s)
{
	if (strcmp(s, "cwd") == 0)
		return AT_FDCWD;
	if (s[0] == '@') {
		int k = atoi(s + 1);
		return k >= 0 && k < n_regs ? regs[k] : -1;
	}
	return atoi(s);
}

static const struct {
	const char *name;
	int flag;
} open_flags[] = {
    {"rdonly", O_RDONLY},     {"wronly", O_WRONLY},   {"rdwr", O_RDWR},
    {"creat", O_CREAT},       {"excl", O_EXCL},       {"trunc", O_TRUNC},
    {"append", O_APPEND},     {"path", O_PATH},       {"directory", O_DIRECTORY},
    {"nofollow", O_NOFOLLOW}, {"cloexec", O_CLOEXEC}, {"tmpfile", O_TMPFILE},
    {"nonblock", O_NONBLOCK},
};

static const struct {
	const char *name;
	unsigned long long flag;
} resolve_flags[] = {
    {"beneath", RESOLVE_BENEATH},         {"in_root", RESOLVE_IN_ROOT},
    {"no_symlinks", RESOLVE_NO_SYMLINKS}, {"no_magiclinks", RESOLVE_NO_MAGICLINKS},
    {"no_xdev", RESOLVE_NO_XDEV},
};

static unsigned long long
parse_bits(const char *s, int table)
{
	unsigned long long bits = 0;
	char buf[256];

	snprintf(buf, sizeof(buf), "%s", s);
	for (char *save = NULL, *t = strtok_r(buf, "|", &save); t; t = strtok_r(NULL, "|", &save)) {
		int found = 0;
		if (strcmp(t, "0") == 0)
			continue;
		if (table == 0) {
			for (size_t i = 0; i < sizeof(open_flags) / sizeof(open_flags[0]); i++)
				if (strcmp(t, open_flags[i].name) == 0) {
					bits |= (unsigned)open_flags[i].flag;
					found = 1;
				}
		} else {
			for (size_t i = 0; i < sizeof(resolve_flags) / sizeof(resolve_flags[0]);
			     i++)
				if (strcmp(t, resolve_flags[i].name) == 0) {
					bits |= resolve_flags[i].flag;
					found = 1;
				}
		}
		if (!found) {
			fprintf(stderr, "probe: unknown flag '%s'\n", t);
			exit(2);
		}
	}
	return bits;
}

/* The first line of what fd holds from offset 0, printable. */
static void
first_line(int fd, char *out, size_t size)
{
	ssize_t n = pread(fd, out, size - 1, 0);
	if (n < 0) {
		snprintf(out, size, "(read %s)", err_name(errno));
		return;
	}
	out[n] = '\0';
	out[strcspn(out, "\n")] = '\0';
}

static void
keep(const char *op, const char *arg, int fd)
{
	if (fd < 0) {
		say_errno(op, arg);
		return;
	}
	if (n_regs < MAX_REGS)
		regs[n_regs++] = fd;
	say(op, arg, "fd %d", fd);
}

static void
do_cat(const char *op, int dirfd, const char *path)
{
	char line[512];
	int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		say_errno(op, path);
		return;
	}
	first_line(fd, line, sizeof(line));
	close(fd);
	say(op, path, "ok %s", line);
}

static void
do_stat(const char *op, int dirfd, const char *path, int flags)
{
	struct stat st;

	if (fstatat(dirfd, path, &st, flags) < 0)
		say_errno(op, path);
	else
		say(op, path, "ok ino=%llu size=%lld", (unsigned long long)st.st_ino,
		    (long long)st.st_size);
}

static void
result(const char *op, const char *arg, int r)
{
	if (r < 0)
		say_errno(op, arg);
	else
		say(op, arg, "ok");
}

static int
access_mode(const char *s)
{
	int m = 0;
	for (; *s; s++)
		m |= *s == 'r' ? R_OK : *s == 'w' ? W_OK : *s == 'x' ? X_OK : F_OK;
	return m;
}

static void
do_ls(const char *path)
{
	DIR *d = opendir(path);
	char names[2048] = "";
	size_t len = 0;

	if (!d) {
		say_errno("ls", path);
		return;
	}
	/* Names in the order read; tests look for one name, not the order. */
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] == '.' &&
		    (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
			continue;
		int n = snprintf(names + len, sizeof(names) - len, " %s", e->d_name);
		if (n < 0 || (size_t)n >= sizeof(names) - len)
			break;
		len += (size_t)n;
	}
	closedir(d);
	say("ls", path, "ok%s", names);
}

static int
inet_addr_of(const char *host, const char *port, struct sockaddr_in *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)atoi(port));
	return inet_pton(AF_INET, host, &sa->sin_addr) == 1 ? 0 : -1;
}

static void
do_tcp(const char *op, char **a)
{
	char label[128];
	int fd;
	int r;

	snprintf(label, sizeof(label), "%s:%s", a[0], a[1]);
	if (strcmp(op, "tcp6") == 0) {
		struct sockaddr_in6 sa6 = {.sin6_family = AF_INET6,
		                           .sin6_port = htons((uint16_t)atoi(a[1]))};
		inet_pton(AF_INET6, a[0], &sa6.sin6_addr);
		fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
		r = connect(fd, (struct sockaddr *)&sa6, sizeof(sa6));
	} else {
		struct sockaddr_in sa;
		inet_addr_of(a[0], a[1], &sa);
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		r = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	}
	if (r == 0 && write(fd, "probe\n", 6) != 6)
		r = -1;
	result(op, label, r);
	close(fd);
}

static void
do_udp(const char *op, char **a)
{
	struct sockaddr_in sa;
	char label[128];
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	size_t n = strlen(a[2]);
	ssize_t r;

	snprintf(label, sizeof(label), "%s:%s", a[0], a[1]);
	inet_addr_of(a[0], a[1], &sa);
	if (strcmp(op, "udpmsg") == 0) {
		struct iovec iov = {a[2], n};
		struct msghdr m = {
		    .msg_name = &sa, .msg_namelen = sizeof(sa), .msg_iov = &iov, .msg_iovlen = 1};
		r = sendmsg(fd, &m, 0);
	} else if (strcmp(op, "udpconn") == 0) {
		r = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
		if (r == 0)
			r = send(fd, a[2], n, 0);
	} else {
		r = sendto(fd, a[2], n, 0, (struct sockaddr *)&sa, sizeof(sa));
	}
	if (r >= 0 && (size_t)r != n) {
		errno = EMSGSIZE;
		r = -1;
	}
	result(op, label, r < 0 ? -1 : 0);
	close(fd);
}

static void
do_unix(const char *op, const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	socklen_t len = sizeof(sa);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int r;

	if (strcmp(op, "abstract") == 0) {
		snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1, "%s", path);
		len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(path));
	} else {
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	}
	if (strcmp(op, "unixbind") == 0)
		r = bind(fd, (struct sockaddr *)&sa, len);
	else
		r = connect(fd, (struct sockaddr *)&sa, len);
	if (r == 0 && strcmp(op, "unixbind") != 0 && write(fd, "probe\n", 6) != 6)
		r = -1;
	result(op, path, r);
	close(fd);
}

static int
need(const char *op, int have, int want)
{
	if (have >= want)
		return 1;
	fprintf(stderr, "probe: %s needs %d arguments\n", op, want);
	exit(2);
}

static void
step(char *spec)
{
	char *a[MAX_ARGS + 1] = {0};
	int n = 0;
	char *save = NULL;
	char *op = strtok_r(spec, ",", &save);
	char line[512];

	while (n < MAX_ARGS && (a[n] = strtok_r(NULL, ",", &save)))
		n++;
	if (!op)
		return;
	if (strcmp(op, "pid") == 0) {
		printf("pid %d\n", (int)getpid());
		fflush(stdout);
	} else if (strcmp(op, "cat") == 0 && need(op, n, 1)) {
		do_cat(op, AT_FDCWD, a[0]);
	} else if (strcmp(op, "catat") == 0 && need(op, n, 2)) {
		do_cat(op, parse_fd(a[0]), a[1]);
	} else if (strcmp(op, "open") == 0 && need(op, n, 2)) {
		mode_t mode = n > 2 ? (mode_t)strtoul(a[2], NULL, 8) : 0644;
		keep(op, a[0], open(a[0], (int)parse_bits(a[1], 0), mode));
	} else if (strcmp(op, "openat") == 0 && need(op, n, 3)) {
		mode_t mode = n > 3 ? (mode_t)strtoul(a[3], NULL, 8) : 0644;
		keep(op, a[1], openat(parse_fd(a[0]), a[1], (int)parse_bits(a[2], 0), mode));
	} else if (strcmp(op, "openat2") == 0 && need(op, n, 4)) {
		struct open_how how = {.flags = parse_bits(a[2], 0),
		                       .resolve = parse_bits(a[3], 1)};
		if (how.flags & (O_CREAT | O_TMPFILE))
			how.mode = 0644;
		keep(op, a[1], (int)syscall(SYS_openat2, parse_fd(a[0]), a[1], &how, sizeof(how)));
	} else if (strcmp(op, "reopen") == 0 && need(op, n, 2)) {
		char link[64];
		snprintf(link, sizeof(link), "/proc/self/fd/%d", parse_fd(a[0]));
		keep(op, link, open(link, (int)parse_bits(a[1], 0)));
	} else if (strcmp(op, "read") == 0 && need(op, n, 1)) {
		first_line(parse_fd(a[0]), line, sizeof(line));
		say(op, a[0], "ok %s", line);
	} else if (strcmp(op, "write") == 0 && need(op, n, 2)) {
		result(op, a[0], (int)write(parse_fd(a[0]), a[1], strlen(a[1])));
	} else if (strcmp(op, "put") == 0 && need(op, n, 2)) {
		int fd = open(a[0], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		int r = fd < 0 ? -1 : (int)write(fd, a[1], strlen(a[1]));
		result(op, a[0], r);
		if (fd >= 0)
			close(fd);
	} else if (strcmp(op, "stat") == 0 && need(op, n, 1)) {
		do_stat(op, AT_FDCWD, a[0], 0);
	} else if (strcmp(op, "lstat") == 0 && need(op, n, 1)) {
		do_stat(op, AT_FDCWD, a[0], AT_SYMLINK_NOFOLLOW);
	} else if (strcmp(op, "statat") == 0 && need(op, n, 2)) {
		do_stat(op, parse_fd(a[0]), a[1], 0);
	} else if (strcmp(op, "access") == 0 && need(op, n, 2)) {
		result(op, a[0], access(a[0], access_mode(a[1])));
	} else if (strcmp(op, "readlink") == 0 && need(op, n, 1)) {
		ssize_t k = readlink(a[0], line, sizeof(line) - 1);
		if (k < 0) {
			say_errno(op, a[0]);
		} else {
			line[k] = '\0';
			say(op, a[0], "ok %s", line);
		}
	} else if (strcmp(op, "unlink") == 0 && need(op, n, 1)) {
		result(op, a[0], unlink(a[0]));
	} else if (strcmp(op, "rmdir") == 0 && need(op, n, 1)) {
		result(op, a[0], rmdir(a[0]));
	} else if (strcmp(op, "mkdir") == 0 && need(op, n, 1)) {
		result(op, a[0], mkdir(a[0], 0755));
	} else if (strcmp(op, "chdir") == 0 && need(op, n, 1)) {
		result(op, a[0], chdir(a[0]));
	} else if (strcmp(op, "fchdir") == 0 && need(op, n, 1)) {
		result(op, a[0], fchdir(parse_fd(a[0])));
	} else if (strcmp(op, "link") == 0 && need(op, n, 2)) {
		result(op, a[0], link(a[0], a[1]));
	} else if (strcmp(op, "symlink") == 0 && need(op, n, 2)) {
		result(op, a[1], symlink(a[0], a[1]));
	} else if (strcmp(op, "rename") == 0 && need(op, n, 2)) {
		result(op, a[0], rename(a[0], a[1]));
	} else if (strcmp(op, "chmod") == 0 && need(op, n, 2)) {
		result(op, a[0], chmod(a[0], (mode_t)strtoul(a[1], NULL, 8)));
	} else if (strcmp(op, "truncate") == 0 && need(op, n, 2)) {
		result(op, a[0], truncate(a[0], atol(a[1])));
	} else if (strcmp(op, "ls") == 0 && need(op, n, 1)) {
		do_ls(a[0]);
	} else if (strcmp(op, "close") == 0 && need(op, n, 1)) {
		result(op, a[0], close(parse_fd(a[0])));
	} else if ((strcmp(op, "tcp") == 0 || strcmp(op, "tcp6") == 0) && need(op, n, 2)) {
		do_tcp(op, a);
	} else if ((strcmp(op, "udp") == 0 || strcmp(op, "udpmsg") == 0 ||
	            strcmp(op, "udpconn") == 0) &&
	           need(op, n, 3)) {
		do_udp(op, a);
	} else if ((strcmp(op, "unix") == 0 || strcmp(op, "unixbind") == 0 ||
	            strcmp(op, "abstract") == 0) &&
	           need(op, n, 1)) {
		do_unix(op, a[0]);
	} else {
		fprintf(stderr, "probe: unknown operation '%s'\n", op);
		exit(2);
	}
}

int
main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		step(argv[i]);
	return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * paths_fast_ops OP... : the *at() calls by relative path and dirfd that the
 * supervisor's fast paths (resolve.c: plain absolute paths, relative paths made
 * absolute from /proc/TID/cwd or fd/N) take, one per argument, each printed as
 * "OP ARG: RESULT" (RESULT: "ok ...", "fd", or the errno's name). Run natively
 * and under moat, the lines are compared; a "LEAK" line means a canary given
 * with -s SECRET came back. Exits 1 on a LEAK.
 *
 * An FD is "cwd", "@K" (the K-th fd kept, from 0) or a number. FLAGS: names
 * joined by '|' (rdonly wronly rdwr creat excl trunc path directory nofollow);
 * RESOLVE: beneath in_root no_symlinks no_magiclinks no_xdev, or 0.
 *
 *   open,FD,PATH,FLAGS            openat, the fd kept ("fd", not its number)
 *   openat2,FD,PATH,FLAGS,RESOLVE openat2, the fd kept
 *   cat,FD,PATH                   openat O_RDONLY, the first line
 *   catx,FD,PATH,RESOLVE          openat2 O_RDONLY with RESOLVE, the first line
 *   put,FD,PATH,TEXT              openat O_WRONLY|O_CREAT|O_TRUNC, then write
 *   stat,FD,PATH  lstat,FD,PATH   newfstatat: the file type
 *   statx,FD,PATH                 statx: the file type
 *   access,FD,PATH,MODE           faccessat2 (MODE: letters of rwxf)
 *   readlink,FD,PATH              readlinkat
 *   mkdir,FD,PATH  rmdir,FD,PATH  unlink,FD,PATH
 *   symlink,TARGET,FD,PATH        symlinkat
 *   link,FD,OLD,FD,NEW            linkat
 *   rename,FD,OLD,FD,NEW[,exchange|noreplace]
 *   chmod,FD,PATH,OCTAL           fchmodat
 *   truncate,PATH,LEN  statfs,PATH  inotify,PATH (inotify_add_watch)
 *   getxattr,PATH,NAME            the value, checked for the canary  listxattr,PATH
 *   chdir,PATH  fchdir,FD
 *   exec,FD,PATH                  fork + execveat(FD, PATH, {PATH}): exit status or errno
 *   deep,N,NAME                   mkdir NAME (its error ignored) + chdir NAME, N times
 *   ls,FD                         names in the directory, sorted
 *   memfd,NAME  pipe  socket  eventfd   an fd of that kind, kept (a dirfd that is no directory)
 *   sleep,TENTHS
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "progs.h"

#define MAX_ARGS 8
#define MAX_REGS 64

static int regs[MAX_REGS];
static int n_regs;
static const char *secret;
static int leaked;

static int
result(const char *op, const char *arg, long r)
{
	if (r < 0)
		say(op, arg, "%s", err_name(errno));
	else
		say(op, arg, "ok");
	return (int)r;
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
	unsigned long long flag;
} bits_table[] = {
    {"rdonly", O_RDONLY},
    {"wronly", O_WRONLY},
    {"rdwr", O_RDWR},
    {"creat", O_CREAT},
    {"excl", O_EXCL},
    {"trunc", O_TRUNC},
    {"path", O_PATH},
    {"directory", O_DIRECTORY},
    {"nofollow", O_NOFOLLOW},
    {"beneath", RESOLVE_BENEATH},
    {"in_root", RESOLVE_IN_ROOT},
    {"no_symlinks", RESOLVE_NO_SYMLINKS},
    {"no_magiclinks", RESOLVE_NO_MAGICLINKS},
    {"no_xdev", RESOLVE_NO_XDEV},
};

static unsigned long long
parse_bits(const char *s)
{
	unsigned long long bits = 0;
	char buf[256];

	snprintf(buf, sizeof(buf), "%s", s);
	for (char *save = NULL, *t = strtok_r(buf, "|", &save); t; t = strtok_r(NULL, "|", &save)) {
		size_t i = 0;
		if (strcmp(t, "0") == 0)
			continue;
		while (i < sizeof(bits_table) / sizeof(bits_table[0]) &&
		       strcmp(t, bits_table[i].name) != 0)
			i++;
		if (i == sizeof(bits_table) / sizeof(bits_table[0])) {
			fprintf(stderr, "paths_fast_ops: unknown flag '%s'\n", t);
			exit(2);
		}
		bits |= bits_table[i].flag;
	}
	return bits;
}

static void
keep(const char *op, const char *arg, int fd)
{
	if (fd < 0) {
		say(op, arg, "%s", err_name(errno));
		return;
	}
	if (n_regs < MAX_REGS)
		regs[n_regs++] = fd;
	say(op, arg, "fd");
}

static long
openat2_(int dirfd, const char *path, unsigned long long flags, unsigned long long resolve)
{
	struct open_how how = {.flags = flags, .resolve = resolve};

	if (flags & O_CREAT)
		how.mode = 0644;
	return syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
}

/* The first line of what fd holds, checked for the canary. */
static void
show(const char *op, const char *arg, int fd)
{
	char buf[512];

	if (fd < 0) {
		say(op, arg, "%s", err_name(errno));
		return;
	}
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	int e = errno;
	close(fd);
	if (n < 0) {
		say(op, arg, "read %s", err_name(e));
		return;
	}
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	if (secret && strstr(buf, secret)) {
		leaked = 1;
		say(op, arg, "LEAK %s", buf);
		return;
	}
	say(op, arg, "ok %s", buf);
}

static const char *
type_of(mode_t m)
{
	return S_ISREG(m)    ? "reg"
	       : S_ISDIR(m)  ? "dir"
	       : S_ISLNK(m)  ? "lnk"
	       : S_ISFIFO(m) ? "fifo"
	       : S_ISCHR(m)  ? "chr"
	       : S_ISSOCK(m) ? "sock"
	                     : "other";
}

static void
do_exec(int dirfd, const char *path)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC) < 0)
		return;
	pid_t pid = fork();
	if (pid == 0) {
		char *argv[] = {(char *)path, NULL}, *envp[] = {NULL};
		syscall(SYS_execveat, dirfd, path, argv, envp, 0);
		int e = errno;
		(void)!write(p[1], &e, sizeof(e));
		_exit(127);
	}
	close(p[1]);
	int e = 0, st = 0;
	ssize_t n = read(p[0], &e, sizeof(e));
	close(p[0]);
	waitpid(pid, &st, 0);
	if (n == sizeof(e))
		say("exec", path, "%s", err_name(e));
	else if (WIFSIGNALED(st))
		say("exec", path, "killed by signal %d", WTERMSIG(st));
	else
		say("exec", path, "ok exit %d", WEXITSTATUS(st));
}

static int
cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void
do_ls(const char *arg, int dirfd)
{
	char *names[256], line[2048] = "";
	size_t n = 0, len = 0;
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);

	if (!d) {
		say("ls", arg, "%s", err_name(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	for (struct dirent *e; n < 256 && (e = readdir(d));)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			names[n++] = strdup(e->d_name);
	closedir(d);
	qsort(names, n, sizeof(names[0]), cmp_names);
	for (size_t i = 0; i < n; i++) {
		int k = snprintf(line + len, sizeof(line) - len, " %s", names[i]);
		if (k > 0 && (size_t)k < sizeof(line) - len)
			len += (size_t)k;
		free(names[i]);
	}
	say("ls", arg, "ok%s", line);
}

static int
need(const char *op, int have, int want)
{
	if (have >= want)
		return 1;
	fprintf(stderr, "paths_fast_ops: %s needs %d arguments\n", op, want);
	exit(2);
}

static void
step(char *spec)
{
	char *a[MAX_ARGS + 1] = {0};
	char *save = NULL, *op = strtok_r(spec, ",", &save);
	char buf[4096];
	struct stat st;
	int n = 0;

	while (n < MAX_ARGS && (a[n] = strtok_r(NULL, ",", &save)))
		n++;
	if (!op)
		return;
	if (strcmp(op, "open") == 0 && need(op, n, 3)) {
		keep(op, a[1],
		     openat(parse_fd(a[0]), a[1], (int)parse_bits(a[2]) | O_CLOEXEC, 0644));
	} else if (strcmp(op, "openat2") == 0 && need(op, n, 4)) {
		keep(op, a[1],
		     (int)openat2_(parse_fd(a[0]), a[1], parse_bits(a[2]) | O_CLOEXEC,
		                   parse_bits(a[3])));
	} else if (strcmp(op, "cat") == 0 && need(op, n, 2)) {
		show(op, a[1], openat(parse_fd(a[0]), a[1], O_RDONLY | O_CLOEXEC));
	} else if (strcmp(op, "catx") == 0 && need(op, n, 3)) {
		show(op, a[1],
		     (int)openat2_(parse_fd(a[0]), a[1], O_RDONLY | O_CLOEXEC, parse_bits(a[2])));
	} else if (strcmp(op, "put") == 0 && need(op, n, 3)) {
		int fd =
		    openat(parse_fd(a[0]), a[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		long r = fd < 0 ? -1 : write(fd, a[2], strlen(a[2]));
		result(op, a[1], r);
		if (fd >= 0)
			close(fd);
	} else if ((strcmp(op, "stat") == 0 || strcmp(op, "lstat") == 0) && need(op, n, 2)) {
		int fl = op[0] == 'l' ? AT_SYMLINK_NOFOLLOW : 0;
		if (fstatat(parse_fd(a[0]), a[1], &st, fl) < 0)
			say(op, a[1], "%s", err_name(errno));
		else
			say(op, a[1], "ok %s", type_of(st.st_mode));
	} else if (strcmp(op, "statx") == 0 && need(op, n, 2)) {
		struct statx stx;
		if (statx(parse_fd(a[0]), a[1], 0, STATX_TYPE, &stx) < 0)
			say(op, a[1], "%s", err_name(errno));
		else
			say(op, a[1], "ok %s", type_of(stx.stx_mode));
	} else if (strcmp(op, "access") == 0 && need(op, n, 3)) {
		int m = 0;
		for (const char *s = a[2]; *s; s++)
			m |= *s == 'r' ? R_OK : *s == 'w' ? W_OK : *s == 'x' ? X_OK : F_OK;
		result(op, a[1], syscall(SYS_faccessat2, parse_fd(a[0]), a[1], m, 0));
	} else if (strcmp(op, "readlink") == 0 && need(op, n, 2)) {
		ssize_t k = readlinkat(parse_fd(a[0]), a[1], buf, sizeof(buf) - 1);
		if (k < 0) {
			say(op, a[1], "%s", err_name(errno));
		} else {
			buf[k] = '\0';
			say(op, a[1], "ok %s", buf);
		}
	} else if (strcmp(op, "mkdir") == 0 && need(op, n, 2)) {
		result(op, a[1], mkdirat(parse_fd(a[0]), a[1], 0755));
	} else if (strcmp(op, "rmdir") == 0 && need(op, n, 2)) {
		result(op, a[1], unlinkat(parse_fd(a[0]), a[1], AT_REMOVEDIR));
	} else if (strcmp(op, "unlink") == 0 && need(op, n, 2)) {
		result(op, a[1], unlinkat(parse_fd(a[0]), a[1], 0));
	} else if (strcmp(op, "symlink") == 0 && need(op, n, 3)) {
		result(op, a[2], symlinkat(a[0], parse_fd(a[1]), a[2]));
	} else if (strcmp(op, "link") == 0 && need(op, n, 4)) {
		result(op, a[1], linkat(parse_fd(a[0]), a[1], parse_fd(a[2]), a[3], 0));
	} else if (strcmp(op, "rename") == 0 && need(op, n, 4)) {
		unsigned fl = n > 4 && strcmp(a[4], "exchange") == 0    ? RENAME_EXCHANGE
		              : n > 4 && strcmp(a[4], "noreplace") == 0 ? RENAME_NOREPLACE
		                                                        : 0;
		result(op, a[1], renameat2(parse_fd(a[0]), a[1], parse_fd(a[2]), a[3], fl));
	} else if (strcmp(op, "chmod") == 0 && need(op, n, 3)) {
		result(op, a[1], fchmodat(parse_fd(a[0]), a[1], (mode_t)strtoul(a[2], NULL, 8), 0));
	} else if (strcmp(op, "truncate") == 0 && need(op, n, 2)) {
		result(op, a[0], truncate(a[0], atol(a[1])));
	} else if (strcmp(op, "statfs") == 0 && need(op, n, 1)) {
		struct statfs sfs;
		result(op, a[0], statfs(a[0], &sfs));
	} else if (strcmp(op, "inotify") == 0 && need(op, n, 1)) {
		int in = inotify_init1(IN_CLOEXEC);
		result(op, a[0], inotify_add_watch(in, a[0], IN_ALL_EVENTS));
		close(in);
	} else if (strcmp(op, "getxattr") == 0 && need(op, n, 2)) {
		ssize_t k = getxattr(a[0], a[1], buf, sizeof(buf) - 1);
		if (k < 0) {
			say(op, a[0], "%s", err_name(errno));
		} else {
			buf[k] = '\0';
			if (secret && strstr(buf, secret))
				leaked = 1;
			say(op, a[0], "%s %s", secret && strstr(buf, secret) ? "LEAK" : "ok", buf);
		}
	} else if (strcmp(op, "listxattr") == 0 && need(op, n, 1)) {
		ssize_t k = listxattr(a[0], buf, sizeof(buf));
		if (k < 0)
			say(op, a[0], "%s", err_name(errno));
		else
			say(op, a[0], "ok %zd", k);
	} else if (strcmp(op, "chdir") == 0 && need(op, n, 1)) {
		result(op, a[0], chdir(a[0]));
	} else if (strcmp(op, "fchdir") == 0 && need(op, n, 1)) {
		result(op, a[0], fchdir(parse_fd(a[0])));
	} else if (strcmp(op, "exec") == 0 && need(op, n, 2)) {
		do_exec(parse_fd(a[0]), a[1]);
	} else if (strcmp(op, "deep") == 0 && need(op, n, 2)) {
		int k = atoi(a[0]), i = 0;
		for (; i < k; i++) {
			(void)!mkdir(a[1], 0755); /* made beforehand under moat: EEXIST or worse */
			if (chdir(a[1]) < 0)
				break;
		}
		if (i == k)
			say(op, a[0], "ok");
		else
			say(op, a[0], "%s at %d", err_name(errno), i);
	} else if (strcmp(op, "ls") == 0 && need(op, n, 1)) {
		do_ls(a[0], parse_fd(a[0]));
	} else if (strcmp(op, "memfd") == 0 && need(op, n, 1)) {
		keep(op, a[0], memfd_create(a[0], MFD_CLOEXEC));
	} else if (strcmp(op, "pipe") == 0) {
		int p[2];
		keep(op, "r", pipe2(p, O_CLOEXEC) < 0 ? -1 : p[0]);
	} else if (strcmp(op, "socket") == 0) {
		keep(op, "unix", socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
	} else if (strcmp(op, "eventfd") == 0) {
		keep(op, "0", eventfd(0, EFD_CLOEXEC));
	} else if (strcmp(op, "sleep") == 0 && need(op, n, 1)) {
		struct timespec ts = {atoi(a[0]) / 10, (atoi(a[0]) % 10) * 100000000L};
		nanosleep(&ts, NULL);
	} else {
		fprintf(stderr, "paths_fast_ops: unknown operation '%s'\n", op);
		exit(2);
	}
}

int
main(int argc, char **argv)
{
	int i = 1;

	if (argc > 2 && strcmp(argv[1], "-s") == 0) {
		secret = argv[2];
		i = 3;
	}
	for (; i < argc; i++)
		step(argv[i]);
	return leaked;
}

/* SPDX-License-Identifier: MIT */
/*
 * errno_table DIR [OTHER_FS_DIR [RO_FILE]]: performs a fixed list of file system
 * calls in DIR (an empty directory it may write) and prints one line per call,
 * "name result errno [detail]", where result is 0, -1 or "fd" for a returned
 * descriptor, and detail is what the call left behind (a mode, a size, the fd
 * number, the fd's flags). Nothing machine-specific is printed, so the output
 * of a native run and of a run under moat can be compared line by line.
 *
 * OTHER_FS_DIR, a writable directory on another file system, adds the EXDEV
 * lines. RO_FILE, a file the kernel lets us write but the policy makes
 * read-only, adds lines prefixed "policy " that are expected to differ.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

static const char *
err_name(int e)
{
	if (e == 0)
		return "0";
	const char *n = strerrorname_np(e);
	return n ? n : "E?";
}

static void line(const char *name, long r, int e, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* One output line; the detail (fmt) only on success. */
static void
line(const char *name, long r, int e, const char *fmt, ...)
{
	printf("%s %ld %s", name, r < 0 ? -1L : r, r < 0 ? err_name(e) : "0");
	if (r >= 0 && fmt) {
		va_list ap;
		putchar(' ');
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
	}
	putchar('\n');
	fflush(stdout);
}

/* A call returning 0 / -1. */
#define CHECK(name, call)                                                                          \
	do {                                                                                       \
		errno = 0;                                                                         \
		long r_ = (long)(call);                                                            \
		line(name, r_, errno, NULL);                                                       \
	} while (0)

static const char *
mode_of(const char *path, int flags)
{
	static char buf[32];
	struct stat st;

	if (fstatat(AT_FDCWD, path, &st, flags) < 0)
		snprintf(buf, sizeof(buf), "mode=%s", err_name(errno));
	else
		snprintf(buf, sizeof(buf), "mode=%o", (unsigned)st.st_mode);
	return buf;
}

static long long
size_of(const char *path)
{
	struct stat st;
	return stat(path, &st) < 0 ? -1 : (long long)st.st_size;
}

static const char *
content_of(const char *path)
{
	static char buf[128];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	if (n < 0)
		return err_name(errno);
	buf[n] = '\0';
	return buf;
}

/* An open whose fd is reported (its number, its flags) and closed. */
static void
open_line(const char *name, int fd, int e)
{
	if (fd < 0) {
		line(name, -1, e, NULL);
		return;
	}
	int fl = fcntl(fd, F_GETFL), fdfl = fcntl(fd, F_GETFD);
	struct stat st;
	fstat(fd, &st);
	/*
	 * Every status flag F_GETFL shows but O_LARGEFILE (0100000: the kernel adds it
	 * here) and O_NOFOLLOW, which a file moat re-opens through /proc cannot keep
	 * (README, known limits).
	 */
	printf("%s fd 0 fd=%d acc=%d append=%d cloexec=%d path=%d type=%o flags=%o\n", name, fd,
	       fl & O_ACCMODE, !!(fl & O_APPEND), !!(fdfl & FD_CLOEXEC), !!(fl & O_PATH),
	       (unsigned)(st.st_mode & S_IFMT), (unsigned)(fl & ~0100000 & ~O_NOFOLLOW));
	fflush(stdout);
	close(fd);
}

#define OPEN(name, ...)                                                                            \
	do {                                                                                       \
		errno = 0;                                                                         \
		int fd_ = open(__VA_ARGS__);                                                       \
		open_line(name, fd_, errno);                                                       \
	} while (0)

static int
openat2_how(int dirfd, const char *path, unsigned long long flags, unsigned long long resolve,
            size_t size)
{
	struct open_how how = {.flags = flags, .resolve = resolve};
	if (flags & O_CREAT)
		how.mode = 0644;
	return (int)syscall(SYS_openat2, dirfd, path, &how, size);
}

#define OPENAT2(name, dirfd, path, flags, resolve)                                                 \
	do {                                                                                       \
		errno = 0;                                                                         \
		int fd_ = openat2_how(dirfd, path, flags, resolve, sizeof(struct open_how));       \
		open_line(name, fd_, errno);                                                       \
	} while (0)

static void
creation(void)
{
	umask(027);
	CHECK("mkdir", mkdir("d", 0777));
	line("mkdir_mode_umask027", 0, 0, "%s", mode_of("d", 0));
	CHECK("mkdir_existing", mkdir("d", 0777));
	OPEN("open_creat_excl", "f", O_WRONLY | O_CREAT | O_EXCL, 0666);
	line("creat_mode_umask027", 0, 0, "%s", mode_of("f", 0));
	OPEN("open_creat_excl_existing", "f", O_WRONLY | O_CREAT | O_EXCL, 0666);
	OPEN("open_creat_excl_dir", "d", O_RDONLY | O_CREAT | O_EXCL, 0666);
	OPEN("open_creat_existing", "f", O_WRONLY | O_CREAT, 0600);
	line("creat_existing_keeps_mode", 0, 0, "%s", mode_of("f", 0));
	umask(0);
	OPEN("open_creat_mode0751_umask0", "g", O_WRONLY | O_CREAT | O_EXCL, 0751);
	line("creat_mode_umask0", 0, 0, "%s", mode_of("g", 0));
	umask(022);
	errno = 0;
	int fd = creat("h", 0666);
	open_line("creat", fd, errno);
	line("creat_mode_umask022", 0, 0, "%s", mode_of("h", 0));
	OPEN("open_creat_in_missing_dir", "missing/x", O_WRONLY | O_CREAT, 0644);
	OPEN("open_creat_directory", "newdir", O_RDONLY | O_CREAT | O_DIRECTORY, 0755);
	OPEN("open_creat_directory_existing_dir", "d", O_RDONLY | O_CREAT | O_DIRECTORY, 0755);
	OPEN("open_creat_trailing_slash", "slash/", O_WRONLY | O_CREAT, 0644);
	CHECK("mknod_reg", mknod("m", S_IFREG | 0640, 0));
	line("mknod_mode", 0, 0, "%s", mode_of("m", 0));
	CHECK("mkfifo", mkfifo("fifo", 0600));
	line("mkfifo_mode", 0, 0, "%s", mode_of("fifo", 0));
	CHECK("mkdir_under_file", mkdir("f/x", 0755));
	CHECK("symlink_existing", symlink("f", "f"));
}

static void
open_flags(void)
{
	int fd = open("f", O_WRONLY | O_TRUNC);
	if (fd >= 0) {
		(void)!write(fd, "hello", 5);
		close(fd);
	}
	OPEN("open_rdonly", "f", O_RDONLY);
	OPEN("open_cloexec", "f", O_RDONLY | O_CLOEXEC);
	OPEN("open_rdonly_nonblock", "f", O_RDONLY | O_NONBLOCK);
	OPEN("open_rdonly_noatime", "f", O_RDONLY | O_NOATIME);
	OPEN("open_rdonly_async", "f", O_RDONLY | O_ASYNC);
	OPEN("open_rdonly_append", "f", O_RDONLY | O_APPEND);
	OPEN("open_dir_rdonly_nonblock", "d", O_RDONLY | O_DIRECTORY | O_NONBLOCK);
	OPEN("open_wronly", "f", O_WRONLY);
	OPEN("open_rdwr", "f", O_RDWR);
	OPEN("open_append", "f", O_WRONLY | O_APPEND);
	/* O_APPEND: a write after lseek(0) still goes to the end. */
	fd = open("f", O_WRONLY | O_APPEND);
	if (fd >= 0) {
		lseek(fd, 0, SEEK_SET);
		(void)!write(fd, "X", 1);
		close(fd);
	}
	line("append_content", 0, 0, "%s", content_of("f"));
	OPEN("open_trunc", "f", O_WRONLY | O_TRUNC);
	line("trunc_size", 0, 0, "size=%lld", size_of("f"));
	fd = open("f", O_WRONLY);
	if (fd >= 0) {
		(void)!write(fd, "hello", 5);
		close(fd);
	}
	OPEN("open_rdonly_trunc", "f", O_RDONLY | O_TRUNC);
	line("rdonly_trunc_size", 0, 0, "size=%lld", size_of("f"));
	fd = open("f", O_WRONLY);
	if (fd >= 0) {
		(void)!write(fd, "hello", 5);
		close(fd);
	}
	OPEN("open_dir_rdonly", "d", O_RDONLY);
	OPEN("open_dir_wronly", "d", O_WRONLY);
	OPEN("open_dir_rdwr", "d", O_RDWR);
	OPEN("open_dir_creat", "d", O_RDONLY | O_CREAT, 0644);
	OPEN("open_directory_on_file", "f", O_RDONLY | O_DIRECTORY);
	OPEN("open_directory_on_dir", "d", O_RDONLY | O_DIRECTORY);
	OPEN("open_through_file", "f/x", O_RDONLY);
	OPEN("open_missing", "missing", O_RDONLY);
	OPEN("open_missing_dir", "missing/x", O_RDONLY);
	OPEN("open_empty", "", O_RDONLY);
	OPEN("open_path", "f", O_PATH);
	OPEN("open_path_dir", "d", O_PATH | O_DIRECTORY);
	OPEN("open_fifo_wronly_nonblock_noreader", "fifo", O_WRONLY | O_NONBLOCK);
	OPEN("open_fifo_rdonly_nonblock", "fifo", O_RDONLY | O_NONBLOCK);
	OPEN("open_dot", ".", O_RDONLY | O_DIRECTORY);
	OPEN("open_dotdot_back", "d/../f", O_RDONLY);
	OPEN("open_trailing_slash_file", "f/", O_RDONLY);
	OPEN("open_bad_accmode", "f", O_WRONLY | O_RDWR);
}

static void
links(void)
{
	CHECK("symlink", symlink("f", "lnk"));
	CHECK("symlink_dangling", symlink("target-new", "dangling"));
	CHECK("symlink_loop1", symlink("loop2", "loop1"));
	CHECK("symlink_loop2", symlink("loop1", "loop2"));
	CHECK("symlink_dir", symlink("d", "dlnk"));
	OPEN("open_symlink", "lnk", O_RDONLY);
	OPEN("open_symlink_nofollow", "lnk", O_RDONLY | O_NOFOLLOW);
	OPEN("open_symlink_nofollow_path", "lnk", O_PATH | O_NOFOLLOW);
	OPEN("open_symlink_loop", "loop1", O_RDONLY);
	OPEN("open_symlink_loop_creat", "loop1", O_WRONLY | O_CREAT, 0644);
	OPEN("open_dangling_creat_excl", "dangling", O_WRONLY | O_CREAT | O_EXCL, 0644);
	OPEN("open_dangling_nofollow_creat", "dangling", O_WRONLY | O_CREAT | O_NOFOLLOW, 0644);
	OPEN("open_dangling_creat", "dangling", O_WRONLY | O_CREAT, 0644);
	line("dangling_target_created", 0, 0, "%s", mode_of("target-new", 0));
	OPEN("open_nofollow_middle", "dlnk/../f", O_RDONLY | O_NOFOLLOW);
	CHECK("stat_loop", stat("loop1", &(struct stat){0}));
	CHECK("lstat_loop", lstat("loop1", &(struct stat){0}));
	line("lstat_symlink", 0, 0, "%s", mode_of("lnk", AT_SYMLINK_NOFOLLOW));
	line("stat_symlink", 0, 0, "%s", mode_of("lnk", 0));
	char buf[64] = "";
	errno = 0;
	ssize_t n = readlink("lnk", buf, sizeof(buf));
	line("readlink", n, errno, "%.*s", n > 0 ? (int)n : 0, buf);
	errno = 0;
	n = readlink("lnk", buf, 0);
	line("readlink_size0", n, errno, NULL);
	errno = 0;
	n = readlink("dangling", buf, 3);
	line("readlink_short_buffer", n, errno, "%.*s", n > 0 ? (int)n : 0, buf);
	CHECK("readlink_on_file", readlink("f", buf, sizeof(buf)));
	CHECK("readlink_on_dir", readlink("d", buf, sizeof(buf)));
	CHECK("readlink_missing", readlink("missing", buf, sizeof(buf)));
	CHECK("link", link("f", "hard"));
	line("link_nlink", 0, 0, "%s", mode_of("hard", 0));
	CHECK("link_existing", link("f", "hard"));
	CHECK("link_dir", link("d", "dhard"));
	CHECK("link_missing", link("missing", "x"));
	CHECK("link_symlink_nofollow", linkat(AT_FDCWD, "lnk", AT_FDCWD, "hardlnk", 0));
	line("link_symlink_is_link", 0, 0, "%s", mode_of("hardlnk", AT_SYMLINK_NOFOLLOW));
	CHECK("link_symlink_follow", linkat(AT_FDCWD, "lnk", AT_FDCWD, "hardf", AT_SYMLINK_FOLLOW));
	line("link_follow_is_file", 0, 0, "%s", mode_of("hardf", AT_SYMLINK_NOFOLLOW));
}

static void
removal(void)
{
	mkdir("full", 0755);
	close(open("full/x", O_WRONLY | O_CREAT, 0644));
	mkdir("empty", 0755);
	mkdir("empty2", 0755);
	CHECK("unlink_dir", unlink("d"));
	CHECK("unlink_missing", unlink("missing"));
	CHECK("unlink_through_file", unlink("f/x"));
	CHECK("unlinkat_removedir_file", unlinkat(AT_FDCWD, "f", AT_REMOVEDIR));
	CHECK("unlinkat_bad_flag", unlinkat(AT_FDCWD, "f", 0x1000));
	CHECK("rmdir_file", rmdir("f"));
	CHECK("rmdir_nonempty", rmdir("full"));
	CHECK("rmdir_dot", rmdir("empty/."));
	CHECK("rmdir_missing", rmdir("missing"));
	CHECK("rename_file_over_dir", rename("f", "full"));
	CHECK("rename_dir_over_file", rename("empty", "f"));
	CHECK("rename_dir_over_nonempty", rename("empty", "full"));
	CHECK("rename_dir_into_itself", rename("empty", "empty/sub"));
	CHECK("rename_missing", rename("missing", "x"));
	CHECK("rename_noreplace_existing",
	      syscall(SYS_renameat2, AT_FDCWD, "g", AT_FDCWD, "h", RENAME_NOREPLACE));
	CHECK("rename_exchange",
	      syscall(SYS_renameat2, AT_FDCWD, "g", AT_FDCWD, "h", RENAME_EXCHANGE));
	line("exchange_mode_g", 0, 0, "%s", mode_of("g", 0));
	CHECK("rename_dir_over_empty", rename("empty", "empty2"));
	CHECK("rename_file", rename("m", "m2"));
	CHECK("unlink", unlink("m2"));
	CHECK("rmdir", rmdir("empty2"));
}

static void
metadata(void)
{
	struct stat st;
	char big[300];

	CHECK("stat_missing", stat("missing", &st));
	CHECK("stat_through_file", stat("f/x", &st));
	CHECK("stat_empty", stat("", &st));
	errno = 0;
	int r = fstatat(AT_FDCWD, "f", &st, 0x40000000);
	line("fstatat_bad_flag", r, errno, NULL);
	CHECK("access_f_ok", access("f", F_OK));
	CHECK("access_rw", access("f", R_OK | W_OK));
	CHECK("access_x_on_0640", access("f", X_OK));
	CHECK("access_missing", access("missing", F_OK));
	CHECK("access_bad_mode", access("f", 0x10));
	CHECK("chmod", chmod("f", 0604));
	line("chmod_mode", 0, 0, "%s", mode_of("f", 0));
	CHECK("chmod_missing", chmod("missing", 0644));
	CHECK("chown_same", chown("f", getuid(), getgid()));
	CHECK("truncate", truncate("f", 3));
	line("truncate_size", 0, 0, "size=%lld", size_of("f"));
	CHECK("truncate_dir", truncate("d", 0));
	CHECK("truncate_negative", truncate("f", -1));
	CHECK("truncate_missing", truncate("missing", 0));
	struct timespec ts[2] = {{1000000000, 0}, {1234567890, 0}};
	CHECK("utimensat", utimensat(AT_FDCWD, "f", ts, 0));
	stat("f", &st);
	line("utimensat_mtime", 0, 0, "mtime=%lld", (long long)st.st_mtime);
	CHECK("setxattr", setxattr("f", "user.moat", "v1", 2, 0));
	char val[16] = "";
	errno = 0;
	ssize_t n = getxattr("f", "user.moat", val, sizeof(val));
	line("getxattr", n, errno, "%.*s", n > 0 ? (int)n : 0, val);
	CHECK("getxattr_missing", getxattr("f", "user.none", val, sizeof(val)));
	CHECK("getxattr_small_buffer", getxattr("f", "user.moat", val, 1));
	CHECK("setxattr_create_existing", setxattr("f", "user.moat", "v2", 2, XATTR_CREATE));
	CHECK("removexattr", removexattr("f", "user.moat"));
	CHECK("removexattr_missing", removexattr("f", "user.moat"));
	CHECK("chdir_file", chdir("f"));
	CHECK("chdir_missing", chdir("missing"));
	memset(big, 'n', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	OPEN("open_name_too_long", big, O_RDONLY);
	OPEN("open_creat_name_too_long", big, O_WRONLY | O_CREAT, 0644);
	CHECK("stat_name_too_long", stat(big, &st));
	CHECK("mkdir_name_too_long", mkdir(big, 0755));
	/* A path longer than PATH_MAX, made of short components. */
	static char longpath[PATH_MAX + 100];
	size_t len = 0;
	while (len + 3 < sizeof(longpath) - 1) {
		memcpy(longpath + len, "./", 2);
		len += 2;
	}
	longpath[len++] = 'f';
	longpath[len] = '\0';
	OPEN("open_path_too_long", longpath, O_RDONLY);
	CHECK("stat_path_too_long", stat(longpath, &st));
	CHECK("unlink_path_too_long", unlink(longpath));
	/* Just under PATH_MAX: it resolves. */
	len = 0;
	while (len + 2 < PATH_MAX - 16) {
		memcpy(longpath + len, "./", 2);
		len += 2;
	}
	longpath[len++] = 'f';
	longpath[len] = '\0';
	OPEN("open_path_near_max", longpath, O_RDONLY);
	CHECK("open_bad_pointer", syscall(SYS_openat, AT_FDCWD, (char *)8, O_RDONLY));
	CHECK("stat_bad_pointer", syscall(SYS_newfstatat, AT_FDCWD, (char *)8, &st, 0));
}

static void
dirfds(void)
{
	int file = open("f", O_RDONLY | O_CLOEXEC);
	int dir = open("d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	errno = 0;
	int fd = openat(file, "x", O_RDONLY);
	open_line("openat_file_dirfd", fd, errno);
	errno = 0;
	fd = openat(999, "x", O_RDONLY);
	open_line("openat_bad_dirfd", fd, errno);
	errno = 0;
	fd = openat(999, "/dev/null", O_RDONLY);
	open_line("openat_bad_dirfd_absolute", fd, errno);
	errno = 0;
	fd = openat(dir, "../f", O_RDONLY);
	open_line("openat_dirfd_dotdot", fd, errno);
	errno = 0;
	fd = openat(file, "", O_RDONLY);
	open_line("openat_empty_path", fd, errno);
	CHECK("fstatat_empty_path_no_flag", fstatat(file, "", &(struct stat){0}, 0));
	CHECK("fstatat_empty_path", fstatat(file, "", &(struct stat){0}, AT_EMPTY_PATH));
	/* Linux 6.11+ takes a NULL path with AT_EMPTY_PATH as "" for these two only. */
	CHECK("newfstatat_null_path",
	      syscall(SYS_newfstatat, file, NULL, &(struct stat){0}, AT_EMPTY_PATH));
	CHECK("statx_null_path",
	      syscall(SYS_statx, file, NULL, AT_EMPTY_PATH, STATX_BASIC_STATS, &(struct statx){0}));
	CHECK("faccessat2_null_path", syscall(SYS_faccessat2, file, NULL, R_OK, AT_EMPTY_PATH));
	CHECK("readlinkat_null_path", syscall(SYS_readlinkat, file, NULL, (char[16]){0}, 16));
	CHECK("fchownat_null_path", syscall(SYS_fchownat, file, NULL, -1, -1, AT_EMPTY_PATH));
	CHECK("mkdirat_dirfd", mkdirat(dir, "sub", 0755));
	CHECK("unlinkat_dirfd", unlinkat(dir, "sub", AT_REMOVEDIR));
	OPENAT2("openat2_beneath_out_and_back", dir, "../d/.", O_RDONLY, RESOLVE_BENEATH);
	OPENAT2("openat2_beneath_dotdot", dir, "../f", O_RDONLY, RESOLVE_BENEATH);
	OPENAT2("openat2_beneath_absolute", dir, "/dev/null", O_RDONLY, RESOLVE_BENEATH);
	OPENAT2("openat2_in_root_absolute", AT_FDCWD, "/f", O_RDONLY, RESOLVE_IN_ROOT);
	OPENAT2("openat2_in_root_dotdot", dir, "../../../..", O_RDONLY, RESOLVE_IN_ROOT);
	OPENAT2("openat2_no_symlinks", AT_FDCWD, "lnk", O_RDONLY, RESOLVE_NO_SYMLINKS);
	OPENAT2("openat2_no_symlinks_middle", AT_FDCWD, "dlnk/../f", O_RDONLY, RESOLVE_NO_SYMLINKS);
	OPENAT2("openat2_no_symlinks_plain", AT_FDCWD, "f", O_RDONLY, RESOLVE_NO_SYMLINKS);
	OPENAT2("openat2_no_magiclinks", AT_FDCWD, "/proc/self/cwd", O_RDONLY | O_DIRECTORY,
	        RESOLVE_NO_MAGICLINKS);
	OPENAT2("openat2_creat_beneath", dir, "new2", O_WRONLY | O_CREAT, RESOLVE_BENEATH);
	OPENAT2("openat2_unknown_flag", AT_FDCWD, "f", O_RDONLY | 0x80000000ULL, 0);
	OPENAT2("openat2_unknown_resolve", AT_FDCWD, "f", O_RDONLY, 0x8000);
	errno = 0;
	fd = openat2_how(AT_FDCWD, "f", O_RDONLY, 0, 8);
	open_line("openat2_small_size", fd, errno);
	errno = 0;
	struct open_how how = {.flags = O_RDONLY, .mode = 0644};
	fd = (int)syscall(SYS_openat2, AT_FDCWD, "f", &how, sizeof(how));
	open_line("openat2_mode_without_creat", fd, errno);
	close(file);
	close(dir);
}

static void
tmp_files(void)
{
	umask(027);
	errno = 0;
	int fd = open(".", O_TMPFILE | O_RDWR, 0666);
	int e = errno;
	if (fd < 0) {
		line("open_tmpfile", -1, e, NULL);
	} else {
		char link[64];
		struct stat st;
		fstat(fd, &st);
		line("open_tmpfile", 0, 0, "fd=%d nlink=%ld mode=%o", fd, (long)st.st_nlink,
		     (unsigned)st.st_mode);
		(void)!write(fd, "tmpdata", 7);
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		CHECK("linkat_tmpfile",
		      linkat(AT_FDCWD, link, AT_FDCWD, "tmplinked", AT_SYMLINK_FOLLOW));
		line("tmpfile_linked_content", 0, 0, "%s", content_of("tmplinked"));
		close(fd);
	}
	fd = open(".", O_TMPFILE | O_RDWR | O_EXCL, 0600);
	if (fd >= 0) {
		char link[64];
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		CHECK("linkat_tmpfile_excl",
		      linkat(AT_FDCWD, link, AT_FDCWD, "tmpexcl", AT_SYMLINK_FOLLOW));
		close(fd);
	}
	OPEN("open_tmpfile_rdonly", ".", O_TMPFILE | O_RDONLY, 0600);
	OPEN("open_tmpfile_on_file", "f", O_TMPFILE | O_RDWR, 0600);
	OPEN("open_tmpfile_missing", "missing", O_TMPFILE | O_RDWR, 0600);
	umask(022);
}

static void
exdev(const char *other)
{
	char to[PATH_MAX];

	close(open("xf", O_WRONLY | O_CREAT, 0644));
	snprintf(to, sizeof(to), "%s/xf", other);
	CHECK("rename_exdev", rename("xf", to));
	CHECK("link_exdev", link("xf", to));
	snprintf(to, sizeof(to), "%s/xd", other);
	CHECK("mkdir_other_fs", mkdir(to, 0755));
	CHECK("rename_dir_exdev", rename(to, "xd"));
}

static void
policy_lines(const char *ro)
{
	errno = 0;
	int fd = open(ro, O_WRONLY);
	printf("policy open_wronly_ro %d %s\n", fd < 0 ? -1 : 0, fd < 0 ? err_name(errno) : "0");
	if (fd >= 0)
		close(fd);
	errno = 0;
	int r = access(ro, W_OK);
	printf("policy access_w_ro %d %s\n", r, r < 0 ? err_name(errno) : "0");
	errno = 0;
	r = access(ro, R_OK);
	printf("policy access_r_ro %d %s\n", r, r < 0 ? err_name(errno) : "0");
	fflush(stdout);
}

int
main(int argc, char **argv)
{
	if (argc < 2 || chdir(argv[1]) < 0) {
		fprintf(stderr, "usage: errno_table DIR [OTHER_FS_DIR [RO_FILE]]\n");
		return 2;
	}
	creation();
	open_flags();
	links();
	metadata();
	dirfds();
	tmp_files();
	removal();
	if (argc > 2 && argv[2][0])
		exdev(argv[2]);
	if (argc > 3)
		policy_lines(argv[3]);
	return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * paths_fast_race MODE MS DIR ...: races on the names the supervisor's fast
 * paths resolve (resolve.c), for at most MS milliseconds. In DIR, "flip" is a
 * directory and "flip.alt" a symlink to a denied directory; a thread swaps the
 * two names with renameat2(RENAME_EXCHANGE) for as long as the race lasts.
 *
 *   leak MS DIR SECRET INO NAME  reads and stats NAME through flip, spelled
 *       absolute (DIR/flip/NAME: the plain-path fast path), relative to the cwd
 *       (flip/NAME: made absolute from /proc/TID/cwd) and relative to a dirfd
 *       on DIR. Exits 1 if SECRET is read or a stat reports inode INO.
 *   oracle MS DIR EXISTING MISSING  opens and stats flip/EXISTING/x and
 *       flip/MISSING/x: a denied path must fail the same way whether or not it
 *       exists. Exits 1 if the errno sets differ (ENOTDIR tells a file apart).
 *   cwd MS DIR SECRET INO NAME  the cwd is DIR/flip/in; a thread renames
 *       DIR/flip/in away and back, leaving a symlink "in" to the denied directory
 *       meanwhile; relative opens and stats of NAME from the cwd and from a dirfd
 *       on that directory. Exits 1 as leak.
 *   win MS DIR INO PROG ARG...  opens DIR/flip with O_PATH|O_DIRECTORY until the
 *       fd is the denied directory (inode INO, by the fstat the filter does not
 *       trap), then makes it fd 9 and the cwd and execs PROG ARG... Exits 3 if
 *       never won.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static atomic_int stop;
static int dirfd_;
static int inner = -1; /* cwd mode: a dirfd on the cwd's directory */
static const char *secret;
static ino_t bad_ino;
static int leaked;

static long
now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Puts the directory back under the name NAME (the race may end either way). */
static void
settle(const char *name)
{
	char alt[256];
	struct stat st;

	snprintf(alt, sizeof(alt), "%s.alt", name);
	if (fstatat(dirfd_, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
		renameat2(dirfd_, name, dirfd_, alt, RENAME_EXCHANGE);
}

static void *
exchange(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop))
		renameat2(dirfd_, "flip", dirfd_, "flip.alt", RENAME_EXCHANGE);
	return NULL;
}

/* The cwd's own directory moves away and a symlink takes its name, then back. */
static void *
swap_cwd(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		renameat2(dirfd_, "flip/in", dirfd_, "flip/in.alt", RENAME_EXCHANGE);
	}
	return NULL;
}

static void
try_read(const char *how, int at, const char *path, long *opened)
{
	char buf[256];
	struct stat st;

	int fd = openat(at, path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		(*opened)++;
		buf[n > 0 ? n : 0] = '\0';
		if (strstr(buf, secret)) {
			printf("LEAK (%s %s): %s\n", how, path, buf);
			leaked = 1;
		}
	}
	if (fstatat(at, path, &st, 0) == 0 && st.st_ino == bad_ino) {
		printf("LEAK (%s stat %s): the denied file's inode\n", how, path);
		leaked = 1;
	}
}

static int
race_leak(long ms, const char *dir, const char *name, int cwd_mode)
{
	char abs_path[4096], rel[4096];
	long opened = 0, end = now_ms() + ms, rounds = 0;
	pthread_t t;

	if (cwd_mode) {
		snprintf(abs_path, sizeof(abs_path), "%s/flip/in/%s", dir, name);
		snprintf(rel, sizeof(rel), "%s", name);
	} else {
		snprintf(abs_path, sizeof(abs_path), "%s/flip/%s", dir, name);
		snprintf(rel, sizeof(rel), "flip/%s", name);
	}
	settle(cwd_mode ? "flip/in" : "flip");
	pthread_create(&t, NULL, cwd_mode ? swap_cwd : exchange, NULL);
	while (now_ms() < end && !leaked) {
		try_read("absolute", AT_FDCWD, abs_path, &opened);
		try_read("cwd", AT_FDCWD, rel, &opened);
		try_read("dirfd", cwd_mode ? inner : dirfd_, rel, &opened);
		rounds++;
	}
	atomic_store(&stop, 1);
	pthread_join(t, NULL);
	settle(cwd_mode ? "flip/in" : "flip");
	printf("%ld rounds, %ld opens succeeded, %s\n", rounds, opened,
	       leaked ? "LEAKED" : "no leak");
	return leaked;
}

/* Bit i of the set: errno i was seen. */
static void
collect(const char *path, unsigned long long *open_set, unsigned long long *stat_set)
{
	struct stat st;

	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		close(fd);
	*open_set |= 1ull << (fd >= 0 ? 0 : errno < 64 ? errno : 63);
	int r = stat(path, &st);
	*stat_set |= 1ull << (r == 0 ? 0 : errno < 64 ? errno : 63);
}

static void
print_set(const char *what, unsigned long long set)
{
	printf("%s:", what);
	for (int i = 0; i < 64; i++)
		if (set & (1ull << i))
			printf(" %s", i ? strerrorname_np(i) : "ok");
	putchar('\n');
}

static int
race_oracle(long ms, const char *existing, const char *missing)
{
	unsigned long long eo = 0, es = 0, mo = 0, ms_ = 0;
	char a[4096], b[4096];
	long end = now_ms() + ms;
	pthread_t t;

	snprintf(a, sizeof(a), "flip/%s/x", existing);
	snprintf(b, sizeof(b), "flip/%s/x", missing);
	settle("flip");
	pthread_create(&t, NULL, exchange, NULL);
	while (now_ms() < end) {
		collect(a, &eo, &es);
		collect(b, &mo, &ms_);
	}
	atomic_store(&stop, 1);
	pthread_join(t, NULL);
	settle("flip");
	print_set("open existing", eo);
	print_set("open missing ", mo);
	print_set("stat existing", es);
	print_set("stat missing ", ms_);
	/* Only the denied outcome and the decoy's own (ENOENT) may show, for both names. */
	int differ = eo != mo || es != ms_;
	printf("%s\n", differ ? "LEAK: the errno tells an existing denied name from a missing one"
	                      : "same errno sets");
	return differ;
}

static int
race_win(long ms, char **argv)
{
	long end = now_ms() + ms;
	pthread_t t;
	int won = -1;

	settle("flip");
	pthread_create(&t, NULL, exchange, NULL);
	while (now_ms() < end && won < 0) {
		int fd = openat(dirfd_, "flip", O_PATH | O_DIRECTORY | O_CLOEXEC);
		struct stat st;
		if (fd < 0)
			continue;
		if (syscall(SYS_fstat, fd, &st) == 0 && st.st_ino == bad_ino)
			won = fd;
		else
			close(fd);
	}
	atomic_store(&stop, 1);
	pthread_join(t, NULL);
	settle("flip");
	if (won < 0) {
		printf("never won\n");
		return 3;
	}
	printf("won an O_PATH fd on the denied directory\n");
	fflush(stdout);
	if (dup2(won, 9) < 0 || fchdir(9) < 0)
		return 2;
	execv(argv[0], argv);
	perror("execv");
	return 2;
}

int
main(int argc, char **argv)
{
	if (argc < 5)
		return 2;
	const char *mode = argv[1];
	long ms = atol(argv[2]);
	dirfd_ = open(argv[3], O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dirfd_ < 0) {
		perror(argv[3]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (strcmp(mode, "leak") == 0 && argc >= 7) {
		secret = argv[4];
		bad_ino = (ino_t)strtoull(argv[5], NULL, 10);
		return race_leak(ms, argv[3], argv[6], 0);
	}
	if (strcmp(mode, "cwd") == 0 && argc >= 7) {
		char cwd[4096];
		secret = argv[4];
		bad_ino = (ino_t)strtoull(argv[5], NULL, 10);
		snprintf(cwd, sizeof(cwd), "%s/flip/in", argv[3]);
		if (chdir(cwd) < 0 || (inner = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) {
			perror(cwd);
			return 2;
		}
		return race_leak(ms, argv[3], argv[6], 1);
	}
	if (strcmp(mode, "oracle") == 0 && argc >= 6)
		return race_oracle(ms, argv[4], argv[5]);
	if (strcmp(mode, "win") == 0 && argc >= 6) {
		bad_ino = (ino_t)strtoull(argv[4], NULL, 10);
		return race_win(ms, argv + 5);
	}
	fprintf(stderr, "paths_fast_race: bad arguments\n");
	return 2;
}

/* SPDX-License-Identifier: MIT */
/*
 * threads MODE N K: N threads each run K rounds of path calls, in an order of
 * their own that changes every round, while one more thread forks and execs
 * /bin/true now and then. Every result is compared with what it must be, so
 * that a supervisor serving the calls side by side and mixing up two of them
 * (an answer, an fd, a path, a decision) shows up as a mismatch.
 *
 * MODE says what the denied fixture paths of lib_run.sh must give: "moat"
 * (EACCES for opens and creates, ENOENT for the stat family and readlink) or
 * "native" (the kernel's own answers: readable, visible). The allowed calls
 * must give the same in both. Run from the fixture's repo/, with HOME set.
 *
 * Each round of a thread, in shuffled order:
 *   read      a.txt by absolute path, sub/b.txt by relative path, b.txt and
 *             a.txt through openat on directory fds, sub/../a.txt, b.txt
 *             through the symlink thr-sublink -> sub (made by main, absolute
 *             and relative); contents compared
 *   opendeny  .env, ~/.ssh/id_rsa, key-link, secret/s.txt, sub/.env (openat),
 *             sub/../.env, thr-sublink/.env
 *   stat      stat, lstat, statx, fstatat, access of allowed files (sizes
 *             compared), an O_PATH open and fstat of its fd, and a stat of a
 *             missing file (ENOENT either way)
 *   statdeny  the same calls on denied paths
 *   link      lstat and readlink of key-link (allowed: the link is in the
 *             cwd), readlink of the denied file it names
 *   file      create thr-NN.f (O_EXCL), write a line naming thread and round,
 *             fstat (size, mode under umask 022), rename to thr-NN.g, stat
 *             both names, read it back through openat, unlink, stat again
 *   dir       mkdir thr-NN.d, stat it, create and unlink a file in it, rmdir
 *   mkdeny    create a file in ../outside and a directory in secret/
 *   pty       open /dev/ptmx, then the /dev/pts/N it made (its device checked)
 *
 * A mismatch prints "thwNN OP PATH: expected X, got Y" (errno names; no
 * content of a denied file is ever printed) and the exit status is 1. Then:
 *   "thread NN tid=T calls=C denied=D"   C: the calls the filter traps (each
 *       one audit line at --audit-level all), D: those MODE moat expects denied
 *   "exec: execs=E"
 *   "threads: N x K ok" (or "threads: N x K: M mismatches")
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 64
#define MAX_REPORTS 30 /* mismatch lines printed; the rest are only counted */

static bool moat;           /* MODE moat: the denied paths must be denied */
static char repo[PATH_MAX]; /* the cwd */
static char a_abs[PATH_MAX + 16], id_rsa[PATH_MAX + 16], outside[PATH_MAX + 16];
static char sublink_b[PATH_MAX + 32], sublink_env[PATH_MAX + 32]; /* through thr-sublink -> sub */
static atomic_long mismatches;
static atomic_bool workers_done;
static pthread_barrier_t start;

struct worker {
	pthread_t thread;
	pid_t tid;
	char name[16];
	unsigned seed;
	long round;  /* the exec thread: execs made */
	long calls;  /* trapped calls made: one audit line each */
	long denied; /* of which MODE moat expects a denial */
	int repofd, subfd;
	char f[32], g[32], d[32], dx[48], mkdeny[48];
	char x[PATH_MAX + 64], xrel[64];
};

static const char *
err_name(int e)
{
	if (e == 0)
		return "ok";
	const char *n = strerrorname_np(e);
	return n ? n : "E?";
}

static void mismatch(const struct worker *w, const char *op, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* One line per mismatch, in a single printf so that threads' lines do not mix. */
static void
mismatch(const struct worker *w, const char *op, const char *path, const char *fmt, ...)
{
	char what[256];
	va_list ap;

	if (atomic_fetch_add(&mismatches, 1) >= MAX_REPORTS)
		return;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	printf("%s %s %s: %s (round %ld)\n", w->name, op, path, what, w->round);
	fflush(stdout);
}

/*
 * The trapped calls, each through a wrapper that counts it: calls is then the
 * number of "call" lines the audit log must hold for this thread. Each returns
 * 0 or the errno. (glibc 2.33+ makes stat, lstat and fstat newfstatat.)
 */
static int
t_open(struct worker *w, int dirfd, const char *path, int flags, int *fd)
{
	w->calls++;
	*fd = openat(dirfd, path, flags | O_CLOEXEC, 0666);
	return *fd < 0 ? errno : 0;
}

static int
t_stat(struct worker *w, int dirfd, const char *path, int flags, struct stat *st)
{
	w->calls++;
	memset(st, 0, sizeof(*st));
	return fstatat(dirfd, path, st, flags) < 0 ? errno : 0;
}

static int
t_fstat(struct worker *w, int fd, struct stat *st)
{
	w->calls++;
	memset(st, 0, sizeof(*st));
	return fstat(fd, st) < 0 ? errno : 0;
}

static int
t_statx(struct worker *w, int dirfd, const char *path, struct statx *stx)
{
	w->calls++;
	memset(stx, 0, sizeof(*stx));
	return statx(dirfd, path, 0, STATX_TYPE | STATX_SIZE, stx) < 0 ? errno : 0;
}

static int
t_readlink(struct worker *w, const char *path, char *buf, size_t size)
{
	w->calls++;
	ssize_t n = readlink(path, buf, size - 1);
	buf[n > 0 ? n : 0] = '\0';
	return n < 0 ? errno : 0;
}

static int
t_access(struct worker *w, const char *path, int mode)
{
	w->calls++;
	return access(path, mode) < 0 ? errno : 0;
}

static int
t_mkdir(struct worker *w, const char *path)
{
	w->calls++;
	return mkdir(path, 0777) < 0 ? errno : 0;
}

static int
t_rmdir(struct worker *w, const char *path)
{
	w->calls++;
	return rmdir(path) < 0 ? errno : 0;
}

static int
t_unlink(struct worker *w, const char *path)
{
	w->calls++;
	return unlink(path) < 0 ? errno : 0;
}

static int
t_rename(struct worker *w, const char *from, const char *to)
{
	w->calls++;
	return rename(from, to) < 0 ? errno : 0;
}

/* A result that does not depend on MODE (an allowed call, or the kernel's own error). */
static bool
expect(struct worker *w, const char *op, const char *path, int got, int want)
{
	if (got == want)
		return true;
	mismatch(w, op, path, "expected %s, got %s", err_name(want), err_name(got));
	return false;
}

/* A call on a denied path: under moat the policy's errno, natively the kernel's answer. */
static bool
expect_denied(struct worker *w, const char *op, const char *path, int got, int moat_errno,
              int native_errno)
{
	if (moat)
		w->denied++;
	return expect(w, op, path, got, moat ? moat_errno : native_errno);
}

/* Reads fd to its end and closes it; the contents are never printed (they may be a canary). */
static void
check_content(struct worker *w, const char *op, const char *path, int fd, const char *want)
{
	char buf[512];
	size_t len = 0;
	ssize_t n;

	while (len < sizeof(buf) - 1 && (n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	buf[len] = '\0';
	close(fd);
	if (strcmp(buf, want) == 0)
		return;
	if (strstr(buf, "CANARY"))
		mismatch(w, op, path, "expected %zu bytes, got a denied file's content",
		         strlen(want));
	else
		mismatch(w, op, path, "expected %zu bytes, got %zu other bytes", strlen(want), len);
}

static void
check_size(struct worker *w, const char *op, const char *path, long long got, long long want)
{
	if (got != want)
		mismatch(w, op, path, "expected size %lld, got %lld", want, got);
}

static void
read_file(struct worker *w, int dirfd, const char *path, const char *want)
{
	int fd;

	if (expect(w, "open", path, t_open(w, dirfd, path, O_RDONLY, &fd), 0))
		check_content(w, "read", path, fd, want);
}

static void
op_read(struct worker *w)
{
	read_file(w, AT_FDCWD, a_abs, "hello from repo\n");
	read_file(w, AT_FDCWD, "sub/b.txt", "bee\n");
	read_file(w, w->subfd, "b.txt", "bee\n");
	read_file(w, w->repofd, "a.txt", "hello from repo\n");
	read_file(w, AT_FDCWD, "sub/../a.txt", "hello from repo\n");
	/* A symlink on the way: not a plain path, resolved the long way. */
	read_file(w, AT_FDCWD, sublink_b, "bee\n");
	read_file(w, AT_FDCWD, "thr-sublink/b.txt", "bee\n");
}

/* Denied under moat; natively the canary is read, to show that the path is right. */
static void
open_denied(struct worker *w, int dirfd, const char *path)
{
	int fd, r = t_open(w, dirfd, path, O_RDONLY, &fd);

	if (expect_denied(w, "open", path, r, EACCES, 0) && r == 0) {
		char buf[64] = "";
		ssize_t n = read(fd, buf, sizeof(buf) - 1);
		if (n < 6 || strncmp(buf, "CANARY", 6) != 0)
			mismatch(w, "read", path, "expected a canary, got other bytes");
	}
	if (r == 0)
		close(fd);
}

static void
op_opendeny(struct worker *w)
{
	open_denied(w, AT_FDCWD, ".env");
	open_denied(w, AT_FDCWD, id_rsa);
	open_denied(w, AT_FDCWD, "key-link");
	open_denied(w, w->repofd, "secret/s.txt");
	open_denied(w, w->subfd, ".env");
	open_denied(w, AT_FDCWD, "sub/../.env");
	open_denied(w, AT_FDCWD, "thr-sublink/.env");
}

static void
op_stat(struct worker *w)
{
	struct stat st;
	struct statx stx;

	if (expect(w, "stat", a_abs, t_stat(w, AT_FDCWD, a_abs, 0, &st), 0))
		check_size(w, "stat", a_abs, st.st_size, 16);
	if (expect(w, "lstat", "sub/b.txt",
	           t_stat(w, AT_FDCWD, "sub/b.txt", AT_SYMLINK_NOFOLLOW, &st), 0))
		check_size(w, "lstat", "sub/b.txt", st.st_size, 4);
	if (expect(w, "statx", "a.txt", t_statx(w, AT_FDCWD, "a.txt", &stx), 0))
		check_size(w, "statx", "a.txt", (long long)stx.stx_size, 16);
	if (expect(w, "statx", "sub:b.txt", t_statx(w, w->subfd, "b.txt", &stx), 0))
		check_size(w, "statx", "sub:b.txt", (long long)stx.stx_size, 4);
	if (expect(w, "fstatat", "repo:sub/b.txt", t_stat(w, w->repofd, "sub/b.txt", 0, &st), 0))
		check_size(w, "fstatat", "repo:sub/b.txt", st.st_size, 4);
	expect(w, "stat", "thr-missing", t_stat(w, AT_FDCWD, "thr-missing", 0, &st), ENOENT);
	expect(w, "access", "a.txt", t_access(w, "a.txt", R_OK), 0);
	/* O_PATH: the kernel opens it (no fd can be injected), the fstat is decided again. */
	int fd;
	if (expect(w, "open", "a.txt O_PATH", t_open(w, AT_FDCWD, "a.txt", O_PATH, &fd), 0)) {
		if (expect(w, "fstat", "a.txt O_PATH", t_fstat(w, fd, &st), 0))
			check_size(w, "fstat", "a.txt O_PATH", st.st_size, 16);
		close(fd);
	}
}

static void
op_statdeny(struct worker *w)
{
	struct stat st;
	struct statx stx;

	expect_denied(w, "stat", ".env", t_stat(w, AT_FDCWD, ".env", 0, &st), ENOENT, 0);
	expect_denied(w, "lstat", id_rsa, t_stat(w, AT_FDCWD, id_rsa, AT_SYMLINK_NOFOLLOW, &st),
	              ENOENT, 0);
	expect_denied(w, "statx", "secret/s.txt", t_statx(w, AT_FDCWD, "secret/s.txt", &stx),
	              ENOENT, 0);
	expect_denied(w, "stat", "key-link", t_stat(w, AT_FDCWD, "key-link", 0, &st), ENOENT, 0);
	expect_denied(w, "fstatat", "sub:.env", t_stat(w, w->subfd, ".env", 0, &st), ENOENT, 0);
	expect_denied(w, "stat", sublink_env, t_stat(w, AT_FDCWD, sublink_env, 0, &st), ENOENT, 0);
	expect_denied(w, "access", ".env", t_access(w, ".env", F_OK), ENOENT, 0);
	int fd, r = t_open(w, AT_FDCWD, "thr-sublink/.env", O_PATH, &fd);
	expect_denied(w, "open", "thr-sublink/.env O_PATH", r, ENOENT, 0);
	if (r == 0)
		close(fd);
}

static void
op_link(struct worker *w)
{
	char buf[PATH_MAX];
	struct stat st;

	/* The link itself is in the cwd: visible, and so is where it points. */
	if (expect(w, "lstat", "key-link",
	           t_stat(w, AT_FDCWD, "key-link", AT_SYMLINK_NOFOLLOW, &st), 0) &&
	    !S_ISLNK(st.st_mode))
		mismatch(w, "lstat", "key-link", "expected a symlink, got mode %o", st.st_mode);
	if (expect(w, "readlink", "key-link", t_readlink(w, "key-link", buf, sizeof(buf)), 0) &&
	    strcmp(buf, id_rsa) != 0)
		mismatch(w, "readlink", "key-link", "expected %s, got %s", id_rsa, buf);
	/* Not a link: EINVAL natively; under moat it is invisible first. */
	expect_denied(w, "readlink", id_rsa, t_readlink(w, id_rsa, buf, sizeof(buf)), ENOENT,
	              EINVAL);
}

static void
op_file(struct worker *w)
{
	char text[64];
	struct stat st, st2;
	int fd;

	snprintf(text, sizeof(text), "%s round %ld\n", w->name, w->round);
	if (!expect(w, "create", w->f, t_open(w, AT_FDCWD, w->f, O_WRONLY | O_CREAT | O_EXCL, &fd),
	            0))
		return;
	size_t len = strlen(text);
	if (write(fd, text, len) != (ssize_t)len)
		mismatch(w, "write", w->f, "expected %zu bytes written, got %s", len,
		         err_name(errno));
	if (expect(w, "fstat", w->f, t_fstat(w, fd, &st), 0)) {
		check_size(w, "fstat", w->f, st.st_size, (long long)len);
		if ((st.st_mode & 07777) != 0644 || !S_ISREG(st.st_mode))
			mismatch(w, "fstat", w->f, "expected mode 100644, got %o", st.st_mode);
	}
	close(fd);
	expect(w, "rename", w->f, t_rename(w, w->f, w->g), 0);
	/* The new name is the same file (the fd was for it), the old one is gone. */
	if (expect(w, "stat", w->g, t_stat(w, AT_FDCWD, w->g, 0, &st2), 0) &&
	    (st2.st_ino != st.st_ino || st2.st_size != (off_t)len))
		mismatch(w, "stat", w->g, "expected ino %llu size %zu, got ino %llu size %lld",
		         (unsigned long long)st.st_ino, len, (unsigned long long)st2.st_ino,
		         (long long)st2.st_size);
	expect(w, "stat", w->f, t_stat(w, AT_FDCWD, w->f, 0, &st2), ENOENT);
	read_file(w, w->repofd, w->g, text);
	expect(w, "unlink", w->g, t_unlink(w, w->g), 0);
	expect(w, "lstat", w->g, t_stat(w, AT_FDCWD, w->g, AT_SYMLINK_NOFOLLOW, &st2), ENOENT);
}

static void
op_dir(struct worker *w)
{
	struct stat st;
	int fd;

	if (!expect(w, "mkdir", w->d, t_mkdir(w, w->d), 0))
		return;
	if (expect(w, "stat", w->d, t_stat(w, AT_FDCWD, w->d, 0, &st), 0) &&
	    (!S_ISDIR(st.st_mode) || (st.st_mode & 07777) != 0755))
		mismatch(w, "stat", w->d, "expected mode 40755, got %o", st.st_mode);
	if (expect(w, "create", w->dx, t_open(w, AT_FDCWD, w->dx, O_WRONLY | O_CREAT | O_EXCL, &fd),
	           0))
		close(fd);
	/* Not empty yet: the kernel's ENOTEMPTY, whoever asks. */
	expect(w, "rmdir", w->d, t_rmdir(w, w->d), ENOTEMPTY);
	expect(w, "unlink", w->dx, t_unlink(w, w->dx), 0);
	expect(w, "rmdir", w->d, t_rmdir(w, w->d), 0);
	expect(w, "stat", w->d, t_stat(w, AT_FDCWD, w->d, 0, &st), ENOENT);
}

/*
 * Natively these succeed; whatever was made (natively, or under a moat that
 * failed to deny it) is undone at once, so that the next round can fail or pass
 * on its own.
 */
static void
op_mkdeny(struct worker *w)
{
	const char *x = w->round & 1 ? w->x : w->xrel;
	int fd, r = t_open(w, AT_FDCWD, x, O_WRONLY | O_CREAT | O_EXCL, &fd);

	expect_denied(w, "create", x, r, EACCES, 0);
	if (r == 0) {
		close(fd);
		t_unlink(w, x);
	}
	r = t_mkdir(w, w->mkdeny);
	expect_denied(w, "mkdir", w->mkdeny, r, EACCES, 0);
	if (r == 0)
		t_rmdir(w, w->mkdeny);
}

/*
 * A pty of the thread's own. The supervisor learns its number at the /dev/ptmx
 * open (a list the receivers share) and must let the thread open /dev/pts/N
 * right after, while the other threads add theirs; the fd it hands over must be
 * that pty (its device number says which).
 */
static void
op_pty(struct worker *w)
{
	char name[64];
	struct stat st;
	unsigned n;
	int m, s;

	if (!expect(w, "open", "/dev/ptmx", t_open(w, AT_FDCWD, "/dev/ptmx", O_RDWR | O_NOCTTY, &m),
	            0))
		return;
	if (ioctl(m, TIOCGPTN, &n) < 0 || unlockpt(m) < 0) {
		mismatch(w, "unlockpt", "/dev/ptmx", "expected ok, got %s", err_name(errno));
		close(m);
		return;
	}
	snprintf(name, sizeof(name), "/dev/pts/%u", n);
	if (expect(w, "open", name, t_open(w, AT_FDCWD, name, O_RDWR | O_NOCTTY, &s), 0)) {
		if (expect(w, "fstat", name, t_fstat(w, s, &st), 0) &&
		    st.st_rdev != makedev(136 + n / 256, n % 256))
			mismatch(w, "fstat", name, "expected device 136+%u:%u, got %u:%u", n / 256,
			         n % 256, major(st.st_rdev), minor(st.st_rdev));
		close(s);
	}
	close(m);
}

static void (*const ops[])(struct worker *) = {
    op_read, op_opendeny, op_stat, op_statdeny, op_link, op_file, op_dir, op_mkdeny, op_pty,
};
#define N_OPS (sizeof(ops) / sizeof(ops[0]))

static void *
work(void *arg)
{
	struct worker *w = arg;
	long rounds = w->round;
	size_t order[N_OPS];

	/* Named before its first trapped call: the audit log's comm for this thread. */
	prctl(PR_SET_NAME, w->name, 0, 0, 0);
	w->tid = gettid();
	w->round = 0;
	expect(w, "open", repo, t_open(w, AT_FDCWD, repo, O_RDONLY | O_DIRECTORY, &w->repofd), 0);
	expect(w, "open", "sub", t_open(w, AT_FDCWD, "sub", O_RDONLY | O_DIRECTORY, &w->subfd), 0);
	pthread_barrier_wait(&start);
	for (size_t i = 0; i < N_OPS; i++)
		order[i] = i;
	for (w->round = 0; w->round < rounds; w->round++) {
		/* A new order every round, different in every thread. */
		for (size_t i = N_OPS - 1; i > 0; i--) {
			size_t j = (size_t)rand_r(&w->seed) % (i + 1), t = order[i];
			order[i] = order[j];
			order[j] = t;
		}
		for (size_t i = 0; i < N_OPS; i++)
			ops[order[i]](w);
	}
	close(w->repofd);
	close(w->subfd);
	return NULL;
}

/* Forks and execs /bin/true every few ms while the workers run: the tracer thread's work. */
static void *
exec_loop(void *arg)
{
	struct worker *w = arg;
	const struct timespec pause = {0, 3 * 1000 * 1000};

	prctl(PR_SET_NAME, w->name, 0, 0, 0);
	w->tid = gettid();
	pthread_barrier_wait(&start);
	/* At least a few, however quick the workers are. */
	for (w->round = 0; w->round < 3 || !atomic_load(&workers_done); w->round++) {
		int status;
		pid_t pid = fork();
		if (pid == 0) {
			execl("/bin/true", "true", (char *)NULL);
			_exit(127);
		}
		if (pid < 0) {
			mismatch(w, "fork", "/bin/true", "expected ok, got %s", err_name(errno));
			break;
		}
		pid_t r;
		while ((r = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
			;
		if (r < 0)
			mismatch(w, "waitpid", "/bin/true", "expected ok, got %s", err_name(errno));
		else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			mismatch(w, "exec", "/bin/true", "expected exit 0, got status %#x", status);
		nanosleep(&pause, NULL);
	}
	return NULL;
}

int
main(int argc, char **argv)
{
	static struct worker workers[MAX_THREADS], execer;
	int n, rounds;

	if (argc != 4 || (strcmp(argv[1], "moat") && strcmp(argv[1], "native")) ||
	    (n = atoi(argv[2])) < 1 || n > MAX_THREADS || (rounds = atoi(argv[3])) < 1) {
		fprintf(stderr, "usage: threads moat|native N K (N from 1 to %d)\n", MAX_THREADS);
		return 2;
	}
	moat = strcmp(argv[1], "moat") == 0;
	const char *home = getenv("HOME");
	if (!home || !getcwd(repo, sizeof(repo))) {
		fprintf(stderr, "threads: no HOME or no cwd\n");
		return 2;
	}
	snprintf(a_abs, sizeof(a_abs), "%s/a.txt", repo);
	snprintf(id_rsa, sizeof(id_rsa), "%s/.ssh/id_rsa", home);
	snprintf(outside, sizeof(outside), "%s", repo);
	*strrchr(outside, '/') = '\0';
	strcat(outside, "/outside");
	snprintf(sublink_b, sizeof(sublink_b), "%s/thr-sublink/b.txt", repo);
	snprintf(sublink_env, sizeof(sublink_env), "%s/thr-sublink/.env", repo);
	/* Made and removed by the main thread, whose calls nobody counts. */
	if (symlink("sub", "thr-sublink") < 0) {
		perror("threads: symlink thr-sublink");
		return 2;
	}

	pthread_barrier_init(&start, NULL, (unsigned)n + 1);
	for (int i = 0; i < n; i++) {
		struct worker *w = &workers[i];
		w->seed = 1000u + (unsigned)i;
		w->round = rounds;
		snprintf(w->name, sizeof(w->name), "thw%02d", i);
		snprintf(w->f, sizeof(w->f), "thr-%02d.f", i);
		snprintf(w->g, sizeof(w->g), "thr-%02d.g", i);
		snprintf(w->d, sizeof(w->d), "thr-%02d.d", i);
		snprintf(w->dx, sizeof(w->dx), "thr-%02d.d/x", i);
		snprintf(w->mkdeny, sizeof(w->mkdeny), "secret/thr-%02d", i);
		snprintf(w->x, sizeof(w->x), "%s/thr-%02d.x", outside, i);
		snprintf(w->xrel, sizeof(w->xrel), "../outside/thr-%02d.x", i);
		if (pthread_create(&w->thread, NULL, work, w) != 0) {
			fprintf(stderr, "threads: pthread_create failed\n");
			return 2;
		}
	}
	snprintf(execer.name, sizeof(execer.name), "thx");
	if (pthread_create(&execer.thread, NULL, exec_loop, &execer) != 0) {
		fprintf(stderr, "threads: pthread_create failed\n");
		return 2;
	}
	for (int i = 0; i < n; i++)
		pthread_join(workers[i].thread, NULL);
	atomic_store(&workers_done, true);
	pthread_join(execer.thread, NULL);
	if (unlink("thr-sublink") < 0) {
		printf("main unlink thr-sublink: expected ok, got %s\n", err_name(errno));
		atomic_fetch_add(&mismatches, 1);
	}

	for (int i = 0; i < n; i++)
		printf("thread %02d tid=%d calls=%ld denied=%ld\n", i, (int)workers[i].tid,
		       workers[i].calls, workers[i].denied);
	printf("exec: execs=%ld\n", execer.round);
	long bad = atomic_load(&mismatches);
	if (bad) {
		printf("threads: %d x %d: %ld mismatches\n", n, rounds, bad);
		return 1;
	}
	printf("threads: %d x %d ok\n", n, rounds);
	return 0;
}

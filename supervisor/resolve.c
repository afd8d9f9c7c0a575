/* SPDX-License-Identifier: MIT */
/*
 * Paths of trapped calls. A path is read once; the kernel then resolves it for
 * the supervisor (openat2 from the target's cwd or dirfd), and the decision is
 * about the object reached: its canonical path as /proc/self/fd/N names it. So
 * symlinks, "..", dirfds and /proc/self/fd/N gain nothing.
 *
 * /proc/self is resolved by procfs for whoever walks it: walked by the
 * supervisor it would name the supervisor. So /proc/self, /proc/thread-self,
 * /dev/fd and /dev/std{in,out,err} are rewritten to /proc/TID first, and
 * /proc/TID is spelled /proc/self again before the policy sees it.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "denyset.h"
#include "moat/macro.h"
#include "moat/sys.h"
#include "sv.h"

enum rewrite_to {
	TO_PROC,   /* /proc/TID */
	TO_THREAD, /* /proc/TID/task/TID */
	TO_FDDIR,  /* /proc/TID/fd */
	TO_FD,     /* /proc/TID/fd/N, for the whole path only */
};

static const struct rewrite {
	const char *from;
	enum rewrite_to to;
	int fd;
} rewrites[] = {
    {"/proc/self", TO_PROC, 0}, {"/proc/thread-self", TO_THREAD, 0}, {"/dev/fd", TO_FDDIR, 0},
    {"/dev/stdin", TO_FD, 0},   {"/dev/stdout", TO_FD, 1},           {"/dev/stderr", TO_FD, 2},
};

/* Returns 1 if the path was rewritten, 0 if not, or -ENAMETOOLONG. */
static int
rewrite_proc(struct sv_call *c, struct sv_path *p)
{
	int rewritten = 0;

	for (size_t i = 0; i < ARRAY_SIZE(rewrites); i++) {
		const struct rewrite *w = &rewrites[i];
		size_t n = strlen(w->from);
		char end = p->s[n];
		if (strncmp(p->s, w->from, n) != 0 || (end && (w->to == TO_FD || end != '/')))
			continue;
		char head[96], rest[sizeof(p->s)];
		int h;
		switch (w->to) {
		case TO_PROC:
			h = snprintf(head, sizeof(head), "/proc/%d", c->tid);
			break;
		case TO_THREAD:
			h = snprintf(head, sizeof(head), "/proc/%d/task/%d", c->tid, c->tid);
			break;
		case TO_FDDIR:
			h = snprintf(head, sizeof(head), "/proc/%d/fd", c->tid);
			break;
		case TO_FD:
		default:
			h = snprintf(head, sizeof(head), "/proc/%d/fd/%d", c->tid, w->fd);
			break;
		}
		snprintf(rest, sizeof(rest), "%s", p->s + n);
		if ((size_t)h + strlen(rest) >= sizeof(p->s))
			return -ENAMETOOLONG;
		p->len = (size_t)snprintf(p->s, sizeof(p->s), "%s%s", head, rest);
		rewritten = 1;
		break;
	}
	/*
	 * Exactly /proc/TID/fd/N names one of the target's own fds. Anything longer is
	 * a walk through that link and gets no such trust ("/proc/self/fd/../../PID/fd/N"
	 * reaches another process's fds).
	 */
	char own[64];
	int n = snprintf(own, sizeof(own), "/proc/%d/fd/", c->tid);
	p->own_fd = strncmp(p->s, own, (size_t)n) == 0 && p->s[n] &&
	            strspn(p->s + n, "0123456789") == strlen(p->s + n);
	return rewritten;
}

/* Every component a plain name: no empty one (no "//", no trailing slash), no ".", "..". */
static bool
plain_names(const char *s, size_t len)
{
	if (len == 0 || s[len - 1] == '/')
		return false;
	for (size_t i = 0; i < len; i++) {
		if (i > 0 && s[i - 1] != '/')
			continue;
		const char *n = s + i;
		if (n[0] == '/' || (n[0] == '.' && (n[1] == '/' || n[1] == '\0')) ||
		    (n[0] == '.' && n[1] == '.' && (n[2] == '/' || n[2] == '\0')))
			return false;
	}
	return true;
}

static bool
plain_absolute(const char *s, size_t len)
{
	return len >= 2 && s[0] == '/' && plain_names(s + 1, len - 1);
}

/* Back to the relative path as given (compose had put the directory's path before it). */
static void
uncompose_text(struct sv_path *p)
{
	memmove(p->s, p->s + p->rel_at, p->len - p->rel_at + 1);
	p->len -= p->rel_at;
	p->rel_at = 0;
	p->own_fd = false;
}

/*
 * Back to resolving from the directory itself: the relative path and the dirfd.
 * If the directory cannot be had any more (closed, the target gone), p stays as
 * it is and the error is returned.
 */
static int
uncompose(struct sv_call *c, struct sv_path *p)
{
	int r = tgt_dirfd(c, p->dirfd);
	if (r < 0)
		return r == -ENXIO ? -ENOTDIR : r; /* ENXIO: a relative path from a socket */
	uncompose_text(p);
	p->base = r;
	return 0;
}

/*
 * A plain relative path from the cwd or a dirfd is made absolute from where that
 * directory is (/proc/TID/cwd or /proc/TID/fd/N read as a link): one readlink,
 * instead of opening the directory and, after the resolution, reading the
 * result's path. It is only a fast path: sv_path_open_canon tries it with
 * RESOLVE_NO_SYMLINKS, and on any failure goes back to the directory itself
 * (uncompose), since the name of a directory is not always the way to it (a
 * dirfd on a symlink, a mount over the cwd, an ancestor without search
 * permission). The decision is about the object the supervisor opens either way.
 * Returns 0 once p is absolute, else a negative number: the usual way must be
 * taken at once.
 */
static int
compose(struct sv_call *c, int dirfd, struct sv_path *p)
{
	static const char deleted[] = " (deleted)";
	char rel[64], base[PATH_MAX];

	if (p->s[0] == '/' || !plain_names(p->s, p->len))
		return -EINVAL;
	if (dirfd == AT_FDCWD)
		snprintf(rel, sizeof(rel), "%d/cwd", c->tid);
	else if (dirfd >= 0)
		snprintf(rel, sizeof(rel), "%d/fd/%d", c->tid, dirfd);
	else
		return -EBADF;
	ssize_t n = readlinkat(c->sv->proc_fd, rel, base, sizeof(base));
	if (n <= 0 || (size_t)n >= sizeof(base))
		return -EINVAL;
	base[n] = '\0';
	size_t dl = sizeof(deleted) - 1;
	bool root = n == 1 && base[0] == '/';
	if ((!root && !plain_absolute(base, (size_t)n)) ||
	    ((size_t)n > dl && strcmp(base + n - dl, deleted) == 0))
		return -EINVAL;
	if ((size_t)n + 1 + p->len >= PATH_MAX)
		return -EINVAL; /* the kernel takes it from the directory: so do we */
	if (tgt_valid(c) < 0)
		return -ESRCH;
	size_t at = root ? 1 : (size_t)n + 1;
	memmove(p->s + at, p->s, p->len + 1);
	memcpy(p->s, base, at - 1);
	p->s[at - 1] = '/';
	p->len += at;
	p->rel_at = at;
	p->dirfd = dirfd;
	/*
	 * "self" from /proc, "fd" from /dev: resolved from the directory, they would
	 * name the supervisor. Spelled whole they are rewritten for the target, and
	 * that spelling is then the only right one: it is kept, not undone.
	 */
	int r = rewrite_proc(c, p);
	if (r < 0) {
		uncompose_text(p);
		return -EINVAL;
	}
	if (r > 0)
		p->rel_at = 0;
	return 0;
}

int
sv_path_read(struct sv_call *c, int dirfd, uint64_t addr, unsigned how, struct sv_path *p)
{
	p->base = -1;
	int r = tgt_read_string(c, addr, p->s, PATH_MAX);
	if (r < 0)
		return r;
	return sv_path_set(c, dirfd, p->s, how, p);
}

int
sv_path_set(struct sv_call *c, int dirfd, const char *path, unsigned how, struct sv_path *p)
{
	int r;

	p->base = -1;
	p->own_fd = false;
	p->resolve = 0;
	p->rel_at = 0;
	p->len = strnlen(path, PATH_MAX);
	if (p->len == PATH_MAX)
		return -ENAMETOOLONG;
	if (path != p->s)
		memcpy(p->s, path, p->len + 1);
	if (p->len == 0 && !(how & SV_PATH_EMPTY_OK))
		return -ENOENT;
	r = rewrite_proc(c, p);
	if (r < 0)
		return r;
	if (p->s[0] != '/' || dirfd != AT_FDCWD) {
		/* An absolute path ignores a dirfd, even a bad one, as the kernel does. */
		if (p->s[0] == '/' && p->len > 0)
			return 0;
		if ((how & SV_PATH_COMPOSE) && p->len > 0) {
			r = compose(c, dirfd, p);
			if (r == 0 || r == -ESRCH)
				return r;
		}
		r = tgt_dirfd(c, dirfd);
		if (r == -ENXIO && p->len > 0)
			r = -ENOTDIR; /* a relative path from a socket */
		if (r < 0)
			return r;
		p->base = r;
	}
	return 0;
}

void
sv_path_done(struct sv_path *p)
{
	if (p->base >= 0)
		close(p->base);
	p->base = -1;
}

/* The tgid of the target (for /proc/<tgid>/… spelled by a non-leader thread). */
static pid_t
target_tgid(struct sv_call *c)
{
	char rel[64], buf[1024];

	snprintf(rel, sizeof(rel), "%d/status", c->tid);
	_cleanup_close_ int fd = openat(c->sv->proc_fd, rel, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	const char *t = strstr(buf, "\nTgid:");
	return t ? (pid_t)strtol(t + 6, NULL, 10) : -1;
}

/* "/proc/<the target>/x" -> "/proc/self/x", in place. */
static void
spell_self(struct sv_call *c, char *path, size_t size)
{
	if (strncmp(path, "/proc/", 6) != 0 || path[6] < '1' || path[6] > '9')
		return;
	char *end;
	long pid = strtol(path + 6, &end, 10);
	if (*end != '/' && *end != '\0')
		return;
	if (pid != c->tid && pid != target_tgid(c))
		return;
	size_t rest = strlen(end);
	if (sizeof("/proc/self") - 1 + rest >= size)
		return;
	memmove(path + sizeof("/proc/self") - 1, end, rest + 1);
	memcpy(path, "/proc/self", sizeof("/proc/self") - 1);
}

int
sv_fd_path(struct sv_call *c, int fd, char *out, size_t size)
{
	char link[64];

	snprintf(link, sizeof(link), "%d", fd);
	ssize_t n = readlinkat(c->sv->self_fd, link, out, size - 1);
	if (n < 0)
		return -errno;
	if ((size_t)n >= size - 1)
		return -ENAMETOOLONG;
	out[n] = '\0';
	spell_self(c, out, size);
	return 0;
}

static int
record(struct sv_call *c, const char *path, enum policy_access a, bool allow,
       const struct policy_rule *rule, int err)
{
	snprintf(c->path, sizeof(c->path), "%s", path);
	c->access = a;
	c->decided = true;
	c->allowed = allow;
	c->rule = rule;
	return allow ? 0 : -err;
}

int
sv_decide_path(struct sv_call *c, const char *canon, enum policy_access a)
{
	struct policy_verdict v;

	policy_match(c->sv->policy, canon, strlen(canon), a, &v);
	return record(c, canon, a, v.allow, v.rule, v.err);
}

/* The mount ids of moat's mount namespace, from /proc/self/mountinfo. */
static int
load_mounts(struct sv *sv)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	unsigned long long id;
	size_t n = 0;

	if (!f)
		return -errno;
	while (fscanf(f, "%llu %*[^\n]", &id) == 1) {
		if (n == sv->cap_mounts) {
			size_t cap = n ? 2 * n : 128;
			uint64_t *v = realloc(sv->mounts, cap * sizeof(*v));
			if (!v) {
				fclose(f);
				return -ENOMEM;
			}
			sv->mounts = v;
			sv->cap_mounts = cap;
		}
		sv->mounts[n++] = id;
	}
	fclose(f);
	sv->n_mounts = n;
	return 0;
}

static bool
has_mount(const struct sv *sv, uint64_t id)
{
	for (size_t i = 0; i < sv->n_mounts; i++)
		if (sv->mounts[i] == id)
			return true;
	return false;
}

/*
 * Whether the object is on a mount of moat's own namespace. /proc/PID/root of a
 * process in a container leads to objects whose paths look like the host's; their
 * mounts are not ours. A miss re-reads the table once (mounts come and go).
 */
static bool
our_mount(struct sv *sv, uint64_t id)
{
	pthread_mutex_lock(&sv->lock);
	bool ours = has_mount(sv, id) || (load_mounts(sv) == 0 && has_mount(sv, id));
	pthread_mutex_unlock(&sv->lock);
	return ours;
}

void
sv_pty_add(struct sv *sv, unsigned n)
{
	pthread_mutex_lock(&sv->lock);
	size_t i = 0;
	while (i < sv->n_ptys && sv->ptys[i] != n)
		i++;
	if (i == sv->n_ptys) {
		if (sv->n_ptys == ARRAY_SIZE(sv->ptys)) {
			/* Full: forget the oldest. */
			sv->n_ptys--;
			memmove(sv->ptys, sv->ptys + 1, sv->n_ptys * sizeof(*sv->ptys));
		}
		sv->ptys[sv->n_ptys++] = n;
	}
	pthread_mutex_unlock(&sv->lock);
}

/*
 * The system set allows /dev/pts, but another session's terminal is not the
 * agent's to read or type into: only moat's own terminal and the ptys the agent
 * made itself are.
 */
static bool
pty_allowed(struct sv *sv, const char *canon)
{
	if (strncmp(canon, "/dev/pts/", 9) != 0 || !canon[9] ||
	    strspn(canon + 9, "0123456789") != strlen(canon + 9))
		return true;
	unsigned n = (unsigned)strtoul(canon + 9, NULL, 10);
	bool known = false;
	pthread_mutex_lock(&sv->lock);
	for (size_t i = 0; i < sv->n_ptys && !known; i++)
		known = sv->ptys[i] == n;
	pthread_mutex_unlock(&sv->lock);
	return known;
}

int
sv_decide_fd(struct sv_call *c, int fd, const char *known, bool own_fd, enum policy_access a,
             mode_t *ret_mode)
{
	char canon[PATH_MAX];
	struct statx stx;
	struct stat st;

	if (ret_mode)
		*ret_mode = 0;
	int r = 0;
	if (known && known[0])
		snprintf(canon, sizeof(canon), "%s", known);
	else
		r = sv_fd_path(c, fd, canon, sizeof(canon));
	if (r < 0 || statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC,
	                   STATX_TYPE | STATX_INO | STATX_NLINK | STATX_MNT_ID, &stx) < 0)
		return record(c, "?", a, false, NULL, policy_denial_errno(a));
	st.st_dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
	st.st_ino = stx.stx_ino;
	st.st_nlink = stx.stx_nlink;
	st.st_mode = stx.stx_mode;
	if (ret_mode)
		*ret_mode = stx.stx_mode;
	/*
	 * Reached through one of the target's own fds, an object with no path (a pipe,
	 * a socket, a memfd, a deleted file) is one the target holds already.
	 */
	if (own_fd && (canon[0] != '/' || strncmp(canon, "/memfd:", 7) == 0 ||
	               (st.st_nlink == 0 && !S_ISDIR(st.st_mode))))
		return record(c, canon, a, true, NULL, 0);
	if (canon[0] == '/' && (stx.stx_mask & STATX_MNT_ID) && !our_mount(c->sv, stx.stx_mnt_id))
		return record(c, canon, a, false, NULL, policy_denial_errno(a));
	r = sv_decide_path(c, canon, a);
	if (r < 0)
		return r;
	if (!pty_allowed(c->sv, canon))
		return record(c, canon, a, false, c->rule, policy_denial_errno(a));
	/*
	 * A hard link or a bind-mount alias of a denied object is the denied object. A
	 * file that had other names before the session began is let through read-only
	 * names (perf's build-id cache hard-links system libraries into ~/.debug), but
	 * not a writable one, where a planted link to a secret would sit.
	 */
	bool multi = false;
	const struct policy_rule *deny = denyset_find(c->sv->denied, st.st_dev, st.st_ino, &multi);
	if (deny && (!multi || !c->rule || c->rule->mode == POLICY_MODE_RW))
		return record(c, canon, a, false, deny, policy_denial_errno(a));
	return 0;
}

int
sv_path_open(struct sv_call *c, const struct sv_path *p, int flags, uint64_t resolve)
{
	struct open_how how = {.flags = (uint64_t)(O_PATH | O_CLOEXEC | flags),
	                       .resolve = resolve | p->resolve};

	return sys_openat2(p->base >= 0 ? p->base : AT_FDCWD, p->s, &how);
}

bool
sv_path_plain(struct sv_call *c, const struct sv_path *p, char *canon, size_t size)
{
	canon[0] = '\0';
	if (p->base >= 0 || p->own_fd || p->len >= size || !plain_absolute(p->s, p->len))
		return false;
	memcpy(canon, p->s, p->len + 1);
	spell_self(c, canon, size);
	return true;
}

int
sv_path_open_canon(struct sv_call *c, struct sv_path *p, int flags, uint64_t resolve, char *canon,
                   size_t size)
{
	/*
	 * A plain absolute path that resolves without following a symlink (nor a
	 * /proc magic link) reaches its object by exactly the names it spells, so
	 * its canonical path is the path itself: no readlink of the fd is needed.
	 * One that meets a symlink fails with ELOOP and is resolved the usual way;
	 * any other error comes from a component before any symlink, as it would.
	 */
	if (sv_path_plain(c, p, canon, size)) {
		int fd = sv_path_open(c, p, flags, resolve | RESOLVE_NO_SYMLINKS);
		if (fd >= 0)
			return fd;
		canon[0] = '\0';
		if (p->rel_at) {
			int r = uncompose(c, p);
			if (r < 0)
				return r;
		} else if (fd != -ELOOP) {
			return fd;
		}
	}
	return sv_path_open(c, p, flags, resolve);
}

int
sv_path_decide(struct sv_call *c, struct sv_path *p, int flags, enum policy_access a)
{
	char canon[PATH_MAX];

	int fd = sv_path_open_canon(c, p, flags, 0, canon, sizeof(canon));
	if (fd < 0)
		return sv_path_error(c, p, fd, a, flags);
	int r = sv_decide_fd(c, fd, canon, p->own_fd, a, NULL);
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}

/*
 * The rest of a failed path resolved again from the prefix that was decided on,
 * with the flags of the resolution that failed: the errno that object gives.
 * A resolution that succeeds now means the tree changed meanwhile (a rename
 * racing the call): that is told as ENOENT, whatever the first answer was, so
 * that no race makes a name in a denied directory answer otherwise.
 */
static int
resolve_rest(int fd, bool at_base, const char *rest, const struct sv_path *p, int rflags, int err)
{
	char r[sizeof(p->s)];
	size_t n = strlen(rest);

	memcpy(r, rest, n + 1);
	if (rflags & SV_RESOLVE_PARENT) {
		while (n > 0 && r[n - 1] == '/')
			n--;
		while (n > 0 && r[n - 1] != '/')
			n--;
		r[n] = '\0';
		if (n == 0)
			return err; /* the parent is the prefix: err was not its resolution's */
	}
	struct open_how how = {
	    .flags = O_PATH | O_CLOEXEC |
	             (uint64_t)(rflags & SV_RESOLVE_PARENT ? O_DIRECTORY
	                                                   : rflags & (O_NOFOLLOW | O_DIRECTORY)),
	    /* openat2's scope is the original directory, not a prefix below it. */
	    .resolve =
	        at_base ? p->resolve : p->resolve & ~(uint64_t)(RESOLVE_BENEATH | RESOLVE_IN_ROOT),
	};
	int f = sys_openat2(fd, r, &how);
	if (f < 0)
		return f;
	close(f);
	return -ENOENT;
}

int
sv_path_error(struct sv_call *c, const struct sv_path *p, int err, enum policy_access a, int rflags)
{
	char prefix[sizeof(p->s)], canon[PATH_MAX], where[2 * PATH_MAX + 64];
	size_t n = p->len;

	/*
	 * The decision is about where the path leads, as far as it resolves: the
	 * longest prefix that opens, by its real path, plus the rest. Deciding on the
	 * spelling instead would let a symlink into a denied directory tell which names
	 * exist there (EACCES for one, ENOENT for another). And the errno given is the
	 * one that prefix leads to, not the first resolution's: between the two a
	 * symlink could be swapped for a decoy.
	 */
	memcpy(prefix, p->s, n + 1);
	while (n > 0) {
		size_t was = n;
		while (n > 1 && prefix[n - 1] == '/')
			n--;
		while (n > 0 && prefix[n - 1] != '/')
			n--;
		if (n == was)
			n = 0; /* "/" itself did not open (openat2 scoped below a dirfd): the dirfd */
		const char *rest = p->s + n;
		int fd;
		if (n == 0) {
			fd = p->base >= 0 ? dup(p->base) : open("/", O_PATH | O_CLOEXEC);
		} else {
			prefix[n == 1 ? 1 : n - 1] = '\0';
			struct sv_path q = {
			    .len = strlen(prefix), .base = p->base, .resolve = p->resolve};
			memcpy(q.s, prefix, q.len + 1);
			fd = sv_path_open(c, &q, 0, 0);
		}
		if (fd < 0 && n > 0)
			continue;
		if (fd < 0)
			return err;
		struct stat st;
		if (fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode)) {
			/* A dirfd that is no directory: the object itself is decided, then ENOTDIR. */
			int r = sv_decide_fd(c, fd, NULL, p->own_fd || n == 0, a, NULL);
			close(fd);
			return r < 0 ? r : err;
		}
		int r = sv_fd_path(c, fd, canon, sizeof(canon));
		if (r < 0 ||
		    policy_path_normalize(canon, *rest ? rest : ".", where, sizeof(where)) < 0) {
			/* No path to decide on: refused. */
			close(fd);
			return -policy_denial_errno(a);
		}
		/*
		 * Past PATH_MAX, decided as its longest ancestor that fits: every rule is
		 * shorter, so whichever rule is a prefix of the path is one of that too.
		 */
		size_t wl = strlen(where);
		while (wl >= PATH_MAX) {
			while (wl > 1 && where[wl - 1] != '/')
				wl--;
			where[wl > 1 ? --wl : wl] = '\0';
		}
		spell_self(c, where, sizeof(where));
		r = sv_decide_path(c, where, a);
		if (r == 0 && rflags >= 0)
			r = resolve_rest(fd, n == 0 && p->base >= 0, rest, p, rflags, err);
		close(fd);
		/* Allowed where it leads: the errno the decided prefix gives stands. */
		return r < 0 ? r : err;
	}
	return err;
}

int
sv_path_parent(struct sv_call *c, const struct sv_path *p, uint64_t resolve, char *name,
               size_t size)
{
	char dir[sizeof(p->s)];
	size_t n = p->len;

	while (n > 1 && p->s[n - 1] == '/')
		n--;
	size_t slash = n;
	while (slash > 0 && p->s[slash - 1] != '/')
		slash--;
	if (n - slash >= size)
		return -ENAMETOOLONG;
	memcpy(name, p->s + slash, n - slash);
	name[n - slash] = '\0';
	if (slash == 0) {
		strcpy(dir, ".");
	} else {
		memcpy(dir, p->s, slash);
		dir[slash] = '\0';
	}
	if (!*name)
		strcpy(name, "."); /* "/" itself */
	struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC, .resolve = resolve};
	return sys_openat2(p->base >= 0 ? p->base : AT_FDCWD, dir, &how);
}

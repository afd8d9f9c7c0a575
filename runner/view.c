/* SPDX-License-Identifier: MIT */
/*
 * A task's view of the file system, planned from the policy before the task is
 * cloned. "mask": the host read-only, the writable surface writable, every
 * deny, private and runner.mask entry covered. "surface": policy_mounts_build()'s
 * binds on a fresh root. Deny globs cannot be mounted over as patterns: the
 * writable binds and each glob's literal directory are walked (bounded) and
 * every match found is covered. /proc, /dev, /tmp are the task's own, so
 * entries under them are left out.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "moat/macro.h"
#include "runner.h"

#define WALK_BUDGET 50000 /* directory entries looked at per view */
#define WALK_DEPTH  32

struct plan {
	struct task_view *v;
	bool share_tmp;
	size_t cap;
	size_t budget;
	const struct policy *p;
};

static bool
under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	if (n == 1)
		return true;
	return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/*
 * Fresh in every task: /proc and /dev are the task's own, and so is /tmp
 * unless it is shared, though a bind below /tmp (a working directory there)
 * is kept.
 */
static bool
task_own(const struct plan *pl, const char *path)
{
	return under(path, "/proc") || under(path, "/dev") ||
	       (strcmp(path, "/tmp") == 0 && !pl->share_tmp);
}

static int
add(struct plan *pl, enum view_op op, const char *src, const char *dst)
{
	struct task_view *v = pl->v;

	if (v->n == VIEW_MAX)
		return -E2BIG;
	if (v->n == pl->cap) {
		size_t cap = pl->cap ? pl->cap * 2 : 32;
		struct view_entry *n = realloc(v->v, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		v->v = n;
		pl->cap = cap;
	}
	struct view_entry *e = &v->v[v->n];
	e->op = op;
	e->src = strdup(src);
	e->dst = strdup(dst);
	if (!e->src || !e->dst) {
		free(e->src);
		free(e->dst);
		return -ENOMEM;
	}
	v->n++;
	return 0;
}

static int
add_mask(struct plan *pl, const char *path)
{
	struct stat st;

	if (task_own(pl, path) || lstat(path, &st) < 0 || S_ISLNK(st.st_mode))
		return 0; /* nothing there to hide (a symlink's target is its own entry) */
	return add(pl, S_ISDIR(st.st_mode) ? VIEW_MASK_DIR : VIEW_MASK_FILE, path, path);
}

/* Covers what a deny glob matches below dir (whose path is path). */
static int
walk(struct plan *pl, int fd, char *path, size_t len, unsigned depth)
{
	DIR *d = fdopendir(fd);
	struct dirent *de;
	int r = 0;

	if (!d) {
		close(fd);
		return 0;
	}
	while (r == 0 && pl->budget && (de = readdir(d))) {
		size_t n = strlen(de->d_name);
		struct policy_verdict verdict;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		pl->budget--;
		if (len + 1 + n >= PATH_MAX)
			continue;
		path[len] = '/';
		memcpy(path + len + 1, de->d_name, n + 1);
		policy_match(pl->p, path, len + 1 + n, POLICY_READ, &verdict);
		/*
		 * A socket is covered too: a read-only mount does not stop connect(), and
		 * behind one may be an ssh agent, a tmux server, a container daemon.
		 */
		if ((!verdict.allow && verdict.rule && verdict.rule->glob) || de->d_type == DT_SOCK)
			r = add_mask(pl, path);
		else if (de->d_type == DT_DIR && depth < WALK_DEPTH) {
			int sub = openat(dirfd(d), de->d_name,
			                 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub >= 0)
				r = walk(pl, sub, path, len + 1 + n, depth + 1);
		}
	}
	path[len] = '\0';
	closedir(d);
	return r;
}

static int
walk_from(struct plan *pl, const char *root)
{
	char path[PATH_MAX];
	size_t n = strlen(root);

	if (n >= sizeof(path) || n < 2)
		return 0; /* "/" itself is never walked */
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	memcpy(path, root, n + 1);
	return walk(pl, fd, path, n, 0);
}

/* The directory part of a glob before its first wildcard component. */
static void
glob_dir(const char *pattern, char *out, size_t size)
{
	const char *w = strpbrk(pattern, "*?[");
	size_t n = w ? (size_t)(w - pattern) : strlen(pattern);

	while (n > 0 && pattern[n - 1] != '/')
		n--;
	if (n > 1)
		n--; /* drop the trailing '/' */
	if (n >= size)
		n = 0;
	memcpy(out, pattern, n);
	out[n] = '\0';
}

static int
walk_globs(struct plan *pl, const struct policy_rule *rules, size_t n_rules)
{
	int r = 0;

	/* What tasks can write, where a glob's matches most likely are (a .env in the repo). */
	for (size_t i = 0; r == 0 && i < pl->v->n; i++) {
		bool nested = false;
		for (size_t j = 0; j < pl->v->n && !nested; j++)
			nested = j != i && pl->v->v[j].op == VIEW_BIND_RW &&
			         under(pl->v->v[i].src, pl->v->v[j].src);
		if (pl->v->v[i].op == VIEW_BIND_RW && !nested)
			r = walk_from(pl, pl->v->v[i].src);
	}
	for (size_t i = 0; r == 0 && i < n_rules; i++) {
		char dir[PATH_MAX];
		if (!rules[i].glob)
			continue;
		glob_dir(rules[i].path, dir, sizeof(dir));
		r = walk_from(pl, dir);
	}
	return r;
}

static bool
writable_entry(const struct plan *pl, const struct policy_rule *r)
{
	return r->mode == POLICY_MODE_RW && !r->glob && !r->private_ && !task_own(pl, r->path) &&
	       !under(r->path, "/sys");
}

/*
 * A task may rename what it can write: moving ~/.config would carry a mask's
 * target (~/.config/gcloud) out from under it for every later task. So each
 * directory between a writable bind and a hidden path is bound onto itself: a
 * mount point cannot be renamed (EBUSY), and the hidden path stays where the
 * policy names it. The hidden path itself is a mount point already.
 */
static int
pin_ancestors(struct plan *pl, const char *path, bool self)
{
	char a[PATH_MAX];
	size_t n_binds = pl->v->n;
	int r = 0;

	for (size_t i = 0; i < n_binds; i++) {
		const char *root = pl->v->v[i].src;
		size_t rl = strlen(root);
		if (pl->v->v[i].op != VIEW_BIND_RW || !under(path, root) || strcmp(path, root) == 0)
			continue;
		snprintf(a, sizeof(a), "%s", path);
		char *end = self ? a + strlen(a) : strrchr(a, '/');
		/* Every ancestor below root, innermost first ("self": path too). */
		while (r == 0 && end && (size_t)(end - a) > rl) {
			struct stat st;
			*end = '\0';
			if (lstat(a, &st) == 0 && S_ISDIR(st.st_mode))
				r = add(pl, VIEW_BIND_RW, a, a);
			end = strrchr(a, '/');
		}
	}
	return r;
}

/*
 * What the surface lets the agent read below a masked directory stays in view:
 * the builtin deny of /root (when it is not the session's home) does not hide
 * the tooling entry /root/.pyenv, for the agent or for its tasks.
 */
static int
reexpose(struct plan *pl, const struct policy_rule *rules, size_t n)
{
	size_t n_planned = pl->v->n;
	int r = 0;

	for (size_t i = 0; r == 0 && i < n; i++) {
		const struct policy_rule *e = &rules[i];
		struct policy_verdict verdict;
		bool masked = false;

		if (e->glob || e->private_ || e->kind == POLICY_KIND_DENY ||
		    e->mode == POLICY_MODE_NONE)
			continue;
		for (size_t j = 0; j < n_planned && !masked; j++)
			masked = pl->v->v[j].op >= VIEW_MASK_DIR &&
			         under(e->path, pl->v->v[j].dst) &&
			         strcmp(e->path, pl->v->v[j].dst) != 0;
		if (!masked || access(e->path, F_OK) < 0)
			continue;
		policy_match(pl->p, e->path, strlen(e->path), POLICY_READ, &verdict);
		if (verdict.allow)
			r = add(pl, writable_entry(pl, e) ? VIEW_BIND_RW : VIEW_BIND_RO, e->path,
			        e->path);
	}
	return r;
}

static const char *const runtime_dirs[] = {"/run", "/var/run"};

static int
plan_mask(struct plan *pl, const struct policy *p, const char *const *extra_masks)
{
	const struct policy_runner *run = policy_runner(p);
	const struct policy_rule *rules;
	size_t n = policy_rules(p, &rules);
	int r = 0;

	for (size_t i = 0; r == 0 && i < n; i++)
		if (writable_entry(pl, &rules[i]) && access(rules[i].path, F_OK) == 0)
			r = add(pl, VIEW_BIND_RW, rules[i].path, rules[i].path);
	for (size_t i = 0; r == 0 && i < n; i++)
		if ((rules[i].kind == POLICY_KIND_DENY && !rules[i].glob) || rules[i].private_)
			r = add_mask(pl, rules[i].path);
	for (size_t i = 0; r == 0 && run->mask && run->mask[i]; i++)
		r = add_mask(pl, run->mask[i]);
	for (size_t i = 0; r == 0 && extra_masks && extra_masks[i]; i++)
		r = add_mask(pl, extra_masks[i]);
	/*
	 * The host's runtime sockets (the system and session buses, systemd, docker,
	 * the user's agents in /run/user): connect() needs no write access to a
	 * read-only mount. What the surface lets the agent read there comes back.
	 */
	for (size_t i = 0; r == 0 && i < ARRAY_SIZE(runtime_dirs); i++)
		r = add_mask(pl, runtime_dirs[i]);
	for (size_t i = 0; r == 0 && i < n; i++) {
		char dir[PATH_MAX];
		if (rules[i].kind == POLICY_KIND_DENY && rules[i].glob) {
			/* The fixed part of a glob ("~/.config" of "~/.config/<*>/credentials*"). */
			glob_dir(rules[i].path, dir, sizeof(dir));
			if (dir[0] && strcmp(dir, "/") != 0)
				r = pin_ancestors(pl, dir, true);
		} else if (rules[i].kind == POLICY_KIND_DENY || rules[i].private_) {
			r = pin_ancestors(pl, rules[i].path, false);
		}
	}
	for (size_t i = 0; r == 0 && run->mask && run->mask[i]; i++)
		r = pin_ancestors(pl, run->mask[i], false);
	if (r == 0)
		r = reexpose(pl, rules, n);
	return r == 0 ? walk_globs(pl, rules, n) : r;
}

static enum policy_probe
probe(const char *path, void *userdata)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return POLICY_PROBE_MISSING;
	return S_ISDIR(st.st_mode) ? POLICY_PROBE_DIR : POLICY_PROBE_FILE;
}

static int
plan_surface(struct plan *pl, const struct policy *p, const char *const *extra_masks)
{
	static const enum view_op ops[] = {
	    [POLICY_MOUNT_BIND_RO] = VIEW_BIND_RO,
	    [POLICY_MOUNT_BIND_RW] = VIEW_BIND_RW,
	    [POLICY_MOUNT_MASK_DIR] = VIEW_MASK_DIR,
	    [POLICY_MOUNT_MASK_FILE] = VIEW_MASK_FILE,
	};
	struct policy_mount_set *set = NULL;
	const struct policy_rule *rules;
	size_t n_rules = policy_rules(p, &rules);
	int r = policy_mounts_build(p, probe, NULL, &set);

	bool tmp_dropped = false;
	for (size_t i = 0; r == 0 && i < set->n_mounts; i++) {
		const struct policy_mount *m = &set->mounts[i];
		if (!task_own(pl, m->dst))
			r = add(pl, ops[m->type], m->src, m->dst);
		else if (strcmp(m->dst, "/tmp") == 0)
			tmp_dropped = true;
	}
	policy_mounts_free(set);
	/*
	 * The mount list folds a working directory under /tmp into the /tmp bind,
	 * and the task's /tmp is its own: what the surface names below /tmp is
	 * bound again on its own.
	 */
	for (size_t i = 0; r == 0 && tmp_dropped && i < n_rules; i++) {
		const struct policy_rule *e = &rules[i];
		if (e->glob || e->private_ || e->kind == POLICY_KIND_DENY ||
		    e->mode == POLICY_MODE_NONE || !under(e->path, "/tmp") ||
		    strcmp(e->path, "/tmp") == 0 || access(e->path, F_OK) < 0)
			continue;
		r = add(pl, e->mode == POLICY_MODE_RW ? VIEW_BIND_RW : VIEW_BIND_RO, e->path,
		        e->path);
	}
	for (size_t i = 0, n = pl->v->n; r == 0 && i < n; i++)
		if (pl->v->v[i].op >= VIEW_MASK_DIR) {
			char dst[PATH_MAX];
			snprintf(dst, sizeof(dst), "%s", pl->v->v[i].dst);
			r = pin_ancestors(pl, dst, false);
		}
	for (size_t i = 0; r == 0 && extra_masks && extra_masks[i]; i++) {
		/* Only where a bind put it in view. */
		for (size_t j = 0; j < pl->v->n; j++)
			if (pl->v->v[j].op <= VIEW_BIND_RO &&
			    under(extra_masks[i], pl->v->v[j].dst)) {
				r = add_mask(pl, extra_masks[i]);
				break;
			}
	}
	return r == 0 ? walk_globs(pl, rules, n_rules) : r;
}

static int
cmp_entry(const void *a, const void *b)
{
	const struct view_entry *x = a, *y = b;
	int c = strcmp(x->dst, y->dst);
	return c ? c : (int)y->op - (int)x->op; /* at one path, a mask before a bind */
}

/* Sorted by destination (a parent before what is mounted inside it); duplicates go. */
static void
tidy(struct task_view *v)
{
	size_t out = 0;

	qsort(v->v, v->n, sizeof(*v->v), cmp_entry);
	for (size_t i = 0; i < v->n; i++) {
		bool drop = false;
		for (size_t j = 0; j < out && !drop; j++) {
			const struct view_entry *k = &v->v[j];
			/* A mask hides everything under it but binds the policy lets through. */
			drop = strcmp(k->dst, v->v[i].dst) == 0 ||
			       (k->op >= VIEW_MASK_DIR && v->v[i].op >= VIEW_MASK_DIR &&
			        under(v->v[i].dst, k->dst));
		}
		if (drop) {
			free(v->v[i].src);
			free(v->v[i].dst);
		} else {
			v->v[out++] = v->v[i];
		}
	}
	v->n = out;
}

int
view_build(const struct policy *p, const char *const *extra_masks, bool share_tmp,
           struct task_view **ret)
{
	struct task_view *v = calloc(1, sizeof(*v));
	struct plan pl = {.v = v, .budget = WALK_BUDGET, .p = p, .share_tmp = share_tmp};
	int r;

	if (!v)
		return -ENOMEM;
	v->surface = policy_runner(p)->root == POLICY_ROOT_SURFACE;
	r = v->surface ? plan_surface(&pl, p, extra_masks) : plan_mask(&pl, p, extra_masks);
	if (r < 0) {
		view_free(v);
		return r;
	}
	tidy(v);
	/* Shared only where the surface writes /tmp itself; otherwise a tmpfs of the task's own. */
	for (size_t i = 0; share_tmp && i < v->n; i++)
		if (v->v[i].op == VIEW_BIND_RW && strcmp(v->v[i].dst, "/tmp") == 0)
			v->share_tmp = true;
	*ret = v;
	return 0;
}

struct task_view *
view_free(struct task_view *v)
{
	if (!v)
		return NULL;
	for (size_t i = 0; i < v->n; i++) {
		free(v->v[i].src);
		free(v->v[i].dst);
	}
	free(v->v);
	free(v);
	return NULL;
}

bool
view_equal(const struct task_view *a, const struct task_view *b)
{
	if (a->surface != b->surface || a->share_tmp != b->share_tmp || a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (a->v[i].op != b->v[i].op || strcmp(a->v[i].src, b->v[i].src) != 0 ||
		    strcmp(a->v[i].dst, b->v[i].dst) != 0)
			return false;
	return true;
}

/* SPDX-License-Identifier: MIT */
/* The denied-object set (see denyset.h): an open-addressing table of (dev, ino). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "denyset.h"

/* How deep the walk goes below a deny entry. */
#define DEPTH_MAX 32

struct slot {
	dev_t dev;
	ino_t ino;
	const struct policy_rule *rule; /* NULL: empty */
	bool multi;                     /* a file that had other names when the walk saw it */
};

struct denyset {
	struct slot *slots;
	size_t cap, n, limit, skipped;
};

static size_t
hash(dev_t dev, ino_t ino, size_t cap)
{
	uint64_t h = (uint64_t)ino * 0x9E3779B97F4A7C15ull ^ (uint64_t)dev * 0xC2B2AE3D27D4EB4Full;
	return (size_t)(h ^ (h >> 29)) & (cap - 1);
}

static int
grow(struct denyset *d)
{
	size_t cap = d->cap ? d->cap * 2 : 64;
	struct slot *s = calloc(cap, sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < d->cap; i++) {
		if (!d->slots[i].rule)
			continue;
		size_t k = hash(d->slots[i].dev, d->slots[i].ino, cap);
		while (s[k].rule)
			k = (k + 1) & (cap - 1);
		s[k] = d->slots[i];
	}
	free(d->slots);
	d->slots = s;
	d->cap = cap;
	return 0;
}

static int
add(struct denyset *d, const struct stat *st, const struct policy_rule *rule)
{
	if (d->n >= d->limit) {
		d->skipped++;
		return 0;
	}
	if (2 * (d->n + 1) > d->cap && grow(d) < 0)
		return -ENOMEM;
	size_t k = hash(st->st_dev, st->st_ino, d->cap);
	while (d->slots[k].rule) {
		if (d->slots[k].dev == st->st_dev && d->slots[k].ino == st->st_ino)
			return 0;
		k = (k + 1) & (d->cap - 1);
	}
	d->slots[k] =
	    (struct slot){st->st_dev, st->st_ino, rule, !S_ISDIR(st->st_mode) && st->st_nlink > 1};
	d->n++;
	return 0;
}

struct walker {
	struct denyset *d;
	const struct policy *p;
	const struct policy_rule *rule;
	char path[PATH_MAX];
};

/*
 * Adds the object at w->path (len bytes) and, for a directory, what lies below
 * it, except what the policy allows again inside the denied tree (deny "~",
 * write "~/repo"): those subtrees are skipped.
 */
static int
walk(struct walker *w, int at, const char *name, size_t len, int depth)
{
	struct policy_verdict v;
	struct stat st;

	policy_match(w->p, w->path, len, POLICY_READ, &v);
	if (v.allow)
		return 0;
	if (fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0; /* gone, or not ours to see: nothing to add */
	int r = add(w->d, &st, w->rule);
	if (r < 0 || !S_ISDIR(st.st_mode) || depth >= DEPTH_MAX)
		return r;
	int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	DIR *dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return 0;
	}
	struct dirent *e;
	while (r == 0 && (e = readdir(dir))) {
		size_t n = strlen(e->d_name);
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
		    len + 1 + n >= sizeof(w->path))
			continue;
		w->path[len] = '/';
		memcpy(w->path + len + 1, e->d_name, n + 1);
		r = walk(w, dirfd(dir), e->d_name, len + 1 + n, depth + 1);
		w->path[len] = '\0';
	}
	closedir(dir);
	return r;
}

int
denyset_build(const struct policy *p, size_t limit, struct denyset **ret)
{
	const struct policy_rule *rules;
	size_t n = policy_rules(p, &rules);
	struct denyset *d = calloc(1, sizeof(*d));

	if (!d)
		return -ENOMEM;
	d->limit = limit;
	int r = grow(d);
	for (size_t i = 0; r == 0 && i < n; i++) {
		if (rules[i].kind != POLICY_KIND_DENY || rules[i].glob ||
		    strlen(rules[i].path) >= PATH_MAX)
			continue;
		struct walker w = {.d = d, .p = p, .rule = &rules[i]};
		strcpy(w.path, rules[i].path);
		r = walk(&w, AT_FDCWD, w.path, strlen(w.path), 0);
	}
	if (r < 0) {
		denyset_free(d);
		return r;
	}
	*ret = d;
	return 0;
}

struct denyset *
denyset_free(struct denyset *d)
{
	if (d) {
		free(d->slots);
		free(d);
	}
	return NULL;
}

const struct policy_rule *
denyset_find(const struct denyset *d, dev_t dev, ino_t ino, bool *ret_multi)
{
	if (!d || d->n == 0)
		return NULL;
	for (size_t k = hash(dev, ino, d->cap); d->slots[k].rule; k = (k + 1) & (d->cap - 1))
		if (d->slots[k].dev == dev && d->slots[k].ino == ino) {
			*ret_multi = d->slots[k].multi;
			return d->slots[k].rule;
		}
	return NULL;
}

size_t
denyset_size(const struct denyset *d)
{
	return d ? d->n : 0;
}

size_t
denyset_skipped(const struct denyset *d)
{
	return d ? d->skipped : 0;
}

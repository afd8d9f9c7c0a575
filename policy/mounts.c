/* SPDX-License-Identifier: MIT */
/*
 * The surface as mounts for a task's root: what a bwrap, docker or OCI sandbox
 * needs so that a command sees the readable set and nothing else.
 *
 * Binds come from the readable entries (private ones excluded: they are the
 * agent's), each with the mode the matcher gives its path, so deny globs and
 * equal-path conflicts are honoured. A bind whose nearest bound ancestor has the
 * same mode adds nothing and is left out. Denied and private entries, and
 * runner.mask, that lie under a bind are covered by an empty tmpfs (directories)
 * or /dev/null (files). /proc and /dev are the sandbox's own and are not bound.
 */
#include <jansson.h>
#include <string.h>

#include "policy-private.h"

struct cand {
	const char *path;
	bool mask;
	enum policy_mode mode;
	const struct policy_origin *origin;
	enum policy_probe what;
};

struct set_builder {
	struct policy_mount_set *s;
	size_t cap_mounts, cap_notes;
};

static bool
is_virtual(const char *path)
{
	return strcmp(path, "/proc") == 0 || strncmp(path, "/proc/", 6) == 0 ||
	       strcmp(path, "/dev") == 0 || strncmp(path, "/dev/", 5) == 0;
}

static bool
is_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	if (n == 1)
		return path[0] == '/' && path[1] != '\0';
	return strncmp(path, dir, n) == 0 && path[n] == '/';
}

static int
add_mount(struct set_builder *b, enum policy_mount_type type, const char *src, const char *dst,
          const struct policy_origin *origin)
{
	struct policy_mount_set *s = b->s;
	if (s->n_mounts == b->cap_mounts) {
		size_t cap = b->cap_mounts ? b->cap_mounts * 2 : 32;
		struct policy_mount *v = realloc(s->mounts, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		s->mounts = v;
		b->cap_mounts = cap;
	}
	s->mounts[s->n_mounts++] =
	    (struct policy_mount){.type = type, .src = src, .dst = dst, .origin = origin};
	return 0;
}

static int
add_note(struct set_builder *b, enum policy_mount_note_kind kind, const char *path, const char *why,
         const struct policy_origin *origin)
{
	struct policy_mount_set *s = b->s;
	if (s->n_notes == b->cap_notes) {
		size_t cap = b->cap_notes ? b->cap_notes * 2 : 16;
		struct policy_mount_note *v = realloc(s->notes, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		s->notes = v;
		b->cap_notes = cap;
	}
	s->notes[s->n_notes++] =
	    (struct policy_mount_note){.kind = kind, .path = path, .why = why, .origin = origin};
	return 0;
}

/*
 * Paths in component order: "/" sorts before every other byte, so a directory's
 * whole subtree comes right after it ("/r/secret/inner" before "/r/secret-old").
 */
static int
path_cmp(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	if (*a == *b)
		return 0;
	if (!*a || !*b)
		return *a ? 1 : -1;
	if (*a == '/' || *b == '/')
		return *a == '/' ? -1 : 1;
	return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
}

static int
cmp_cand(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	int d = path_cmp(x->path, y->path);
	if (d)
		return d;
	return (int)y->mask - (int)x->mask; /* masks first: they win a tie */
}

/* The mode the matcher gives the path itself (none when denied). */
static enum policy_mode
effective_mode(const struct policy *p, const char *path)
{
	struct policy_verdict v;
	size_t n = strlen(path);

	policy_match(p, path, n, POLICY_WRITE, &v);
	if (v.allow)
		return POLICY_MODE_RW;
	policy_match(p, path, n, POLICY_READ, &v);
	return v.allow ? POLICY_MODE_RO : POLICY_MODE_NONE;
}

static int
collect(const struct policy *p, struct cand **ret, size_t *ret_n)
{
	size_t n_mask = 0;
	for (const char *const *m = p->runner.mask; m && *m; m++)
		n_mask++;
	struct cand *c = calloc(p->n_rules + n_mask + 1, sizeof(*c));
	size_t n = 0;
	if (!c)
		return -ENOMEM;
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct policy_rule *r = &p->rules[i];
		if (r->glob || is_virtual(r->path))
			continue;
		if (r->kind == POLICY_KIND_DENY || r->private_) {
			c[n++] = (struct cand){.path = r->path, .mask = true, .origin = &r->origin};
			continue;
		}
		enum policy_mode m = effective_mode(p, r->path);
		if (m != POLICY_MODE_NONE)
			c[n++] = (struct cand){.path = r->path, .mode = m, .origin = &r->origin};
	}
	for (const char *const *m = p->runner.mask; m && *m; m++)
		c[n++] = (struct cand){.path = *m, .mask = true};
	if (n > 1)
		qsort(c, n, sizeof(*c), cmp_cand);
	*ret = c;
	*ret_n = n;
	return 0;
}

/* Keeps the binds and masks that change what the sandbox sees. */
static int
place(struct set_builder *b, struct cand *c, size_t n)
{
	_cleanup_free_ struct cand **stack = calloc(n + 1, sizeof(*stack));
	size_t depth = 0;

	if (!stack)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (i > 0 && strcmp(c[i].path, c[i - 1].path) == 0)
			continue; /* the first of equal paths (a mask, if any) decides */
		while (depth > 0 && !is_under(c[i].path, stack[depth - 1]->path))
			depth--;
		struct cand *up = depth ? stack[depth - 1] : NULL;
		if (c[i].what == POLICY_PROBE_MISSING) {
			if (!c[i].mask && add_note(b, POLICY_NOTE_MISSING, c[i].path,
			                           "does not exist", c[i].origin) < 0)
				return -ENOMEM;
			continue;
		}
		int r = 0;
		if (c[i].mask) {
			if (!up || up->mask)
				continue; /* not visible anyway */
			r = add_mount(b,
			              c[i].what == POLICY_PROBE_DIR ? POLICY_MOUNT_MASK_DIR
			                                            : POLICY_MOUNT_MASK_FILE,
			              c[i].what == POLICY_PROBE_DIR ? "tmpfs" : "/dev/null",
			              c[i].path, c[i].origin);
		} else {
			if (up && !up->mask && up->mode == c[i].mode)
				continue; /* the bind above already gives this */
			r = add_mount(b,
			              c[i].mode == POLICY_MODE_RW ? POLICY_MOUNT_BIND_RW
			                                          : POLICY_MOUNT_BIND_RO,
			              c[i].path, c[i].path, c[i].origin);
		}
		if (r < 0)
			return r;
		stack[depth++] = &c[i];
	}
	return 0;
}

static bool
has_dst(const struct policy_mount_set *s, size_t n, const char *dst)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(s->mounts[i].dst, dst) == 0)
			return true;
	return false;
}

/*
 * Why the surface keeps an operator mount's destination, or NULL. The surface wins
 * where it names the destination itself, where it denies it, and where the mount
 * would make an rw surface path read-only.
 */
static const char *
surface_conflict(const struct policy *p, const struct policy_extra_mount *e)
{
	struct policy_verdict v;

	policy_match(p, e->dst, strlen(e->dst), POLICY_READ, &v);
	if (v.rule && !v.allow)
		return "the surface denies this destination; the surface wins";
	if (v.rule && strcmp(v.rule->path, e->dst) == 0)
		return "the surface mounts this destination; the surface wins";
	if (v.allow && v.mode == POLICY_MODE_RW && e->mode == POLICY_MODE_RO)
		return "the surface has this destination rw; an operator mount cannot demote it";
	return NULL;
}

/* mounts.extra: additive (the surface wins a destination) or exclusive (all dropped). */
static int
compose_extra(const struct policy *p, struct set_builder *b,
              enum policy_probe (*probe)(const char *, void *), void *userdata)
{
	for (size_t i = 0; i < p->n_extra; i++) {
		const struct policy_extra_mount *e = &p->extra[i];
		const char *why = NULL;
		int r;
		if (p->mounts_mode == POLICY_MOUNTS_EXCLUSIVE)
			why = "mounts.mode is exclusive";
		else if (has_dst(b->s, b->s->n_mounts, e->dst))
			why = "this destination is already mounted; the first mount wins";
		else
			why = surface_conflict(p, e);
		if (why)
			r = add_note(b, POLICY_NOTE_DROPPED, e->dst, why, &e->origin);
		else if (probe(e->src, userdata) == POLICY_PROBE_MISSING)
			r = add_note(b, POLICY_NOTE_MISSING, e->src, "does not exist", &e->origin);
		else
			r = add_mount(b,
			              e->mode == POLICY_MODE_RW ? POLICY_MOUNT_BIND_RW
			                                        : POLICY_MOUNT_BIND_RO,
			              e->src, e->dst, &e->origin);
		if (r < 0)
			return r;
	}
	return 0;
}

static int
cmp_mount(const void *a, const void *b)
{
	return path_cmp(((const struct policy_mount *)a)->dst,
	                ((const struct policy_mount *)b)->dst);
}

int
policy_mounts_build(const struct policy *p,
                    enum policy_probe (*probe)(const char *path, void *userdata), void *userdata,
                    struct policy_mount_set **ret)
{
	struct set_builder b = {.s = calloc(1, sizeof(*b.s))};
	_cleanup_free_ struct cand *c = NULL;
	size_t n = 0;
	int r;

	if (!b.s)
		return -ENOMEM;
	r = collect(p, &c, &n);
	for (size_t i = 0; r == 0 && i < n; i++)
		c[i].what = probe(c[i].path, userdata);
	if (r == 0)
		r = place(&b, c, n);
	if (r == 0)
		r = compose_extra(p, &b, probe, userdata);
	for (size_t i = 0; r == 0 && i < p->n_rules; i++)
		if (p->rules[i].glob)
			r = add_note(&b, POLICY_NOTE_GLOB, p->rules[i].path,
			             "a deny glob has no mount form: files it matches inside "
			             "binds stay visible",
			             &p->rules[i].origin);
	if (r < 0) {
		policy_mounts_free(b.s);
		return r;
	}
	if (b.s->n_mounts > 1)
		qsort(b.s->mounts, b.s->n_mounts, sizeof(*b.s->mounts), cmp_mount);
	*ret = b.s;
	return 0;
}

struct policy_mount_set *
policy_mounts_free(struct policy_mount_set *s)
{
	if (!s)
		return NULL;
	free(s->mounts);
	free(s->notes);
	free(s);
	return NULL;
}

/* ---- output ---- */

/* Writes s for a POSIX shell: bare when every byte is safe, else single-quoted. */
static void
sh_quote(FILE *out, const char *s)
{
	if (*s && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	                    "_./:@%+=,-") == strlen(s)) {
		fputs(s, out);
		return;
	}
	fputc('\'', out);
	for (; *s; s++)
		if (*s == '\'')
			fputs("'\\''", out);
		else
			fputc(*s, out);
	fputc('\'', out);
}

/* A tmpfs mask can be remounted read-only only if nothing is mounted inside it later. */
static bool
has_nested(const struct policy_mount_set *s, size_t i)
{
	return i + 1 < s->n_mounts && is_under(s->mounts[i + 1].dst, s->mounts[i].dst);
}

static void
write_bwrap(const struct policy_mount_set *s, FILE *out)
{
	for (size_t i = 0; i < s->n_mounts; i++) {
		const struct policy_mount *m = &s->mounts[i];
		switch (m->type) {
		case POLICY_MOUNT_BIND_RO:
		case POLICY_MOUNT_BIND_RW:
		case POLICY_MOUNT_MASK_FILE:
			fputs(m->type == POLICY_MOUNT_BIND_RW ? "--bind " : "--ro-bind ", out);
			sh_quote(out, m->src);
			fputc(' ', out);
			sh_quote(out, m->dst);
			break;
		case POLICY_MOUNT_MASK_DIR:
			fputs("--tmpfs ", out);
			sh_quote(out, m->dst);
			if (!has_nested(s, i)) {
				fputs(" --remount-ro ", out);
				sh_quote(out, m->dst);
			}
			break;
		case POLICY_MOUNT_TYPE_MAX:
			break;
		}
		fputc('\n', out);
	}
}

/*
 * docker --mount reads CSV: a field holding a comma or a quote is quoted whole
 * ("source=/a,b"), with the quotes inside doubled.
 */
static void
csv_field(char *buf, size_t size, const char *name, const char *value)
{
	const char *parts[] = {name, "=", value};
	bool quote = strpbrk(name, ",\"") || strpbrk(value, ",\"");
	size_t o = 0;

	if (quote)
		buf[o++] = '"';
	for (size_t k = 0; k < ARRAY_SIZE(parts); k++)
		for (const char *c = parts[k]; *c && o + 3 < size; c++) {
			if (*c == '"')
				buf[o++] = '"';
			buf[o++] = *c;
		}
	if (quote)
		buf[o++] = '"';
	buf[o] = '\0';
}

static void
write_docker(const struct policy_mount_set *s, FILE *out)
{
	char src[2 * POLICY_PATH_MAX + 16], dst[2 * POLICY_PATH_MAX + 16];
	char line[sizeof(src) + sizeof(dst) + 64];

	for (size_t i = 0; i < s->n_mounts; i++) {
		const struct policy_mount *m = &s->mounts[i];
		csv_field(src, sizeof(src), "source", m->src);
		csv_field(dst, sizeof(dst), "target", m->dst);
		switch (m->type) {
		case POLICY_MOUNT_BIND_RO:
		case POLICY_MOUNT_MASK_FILE:
			snprintf(line, sizeof(line), "type=bind,%s,%s,readonly", src, dst);
			break;
		case POLICY_MOUNT_BIND_RW:
			snprintf(line, sizeof(line), "type=bind,%s,%s", src, dst);
			break;
		case POLICY_MOUNT_MASK_DIR:
			snprintf(line, sizeof(line), "type=tmpfs,%s,tmpfs-mode=0555%s", dst,
			         has_nested(s, i) ? "" : ",readonly");
			break;
		case POLICY_MOUNT_TYPE_MAX:
			continue;
		}
		fputs("--mount ", out);
		sh_quote(out, line);
		fputc('\n', out);
	}
}

static json_t *
oci_mount(const struct policy_mount_set *s, size_t i)
{
	const struct policy_mount *m = &s->mounts[i];
	bool tmpfs = m->type == POLICY_MOUNT_MASK_DIR;
	json_t *o = json_object(), *opts = json_array();

	if (!o || !opts) {
		json_decref(o);
		json_decref(opts);
		return NULL;
	}
	json_object_set_new(o, "destination", json_string(m->dst));
	json_object_set_new(o, "type", json_string(tmpfs ? "tmpfs" : "bind"));
	json_object_set_new(o, "source", json_string(tmpfs ? "tmpfs" : m->src));
	if (tmpfs) {
		json_array_append_new(opts, json_string("nosuid"));
		json_array_append_new(opts, json_string("nodev"));
		json_array_append_new(opts, json_string("noexec"));
		json_array_append_new(opts, json_string("mode=0555"));
		if (!has_nested(s, i))
			json_array_append_new(opts, json_string("ro"));
	} else {
		json_array_append_new(opts, json_string("rbind"));
		json_array_append_new(opts,
		                      json_string(m->type == POLICY_MOUNT_BIND_RW ? "rw" : "ro"));
	}
	json_object_set_new(o, "options", opts);
	return o;
}

static int
write_oci(const struct policy_mount_set *s, FILE *out)
{
	json_t *arr = json_array();
	if (!arr)
		return -ENOMEM;
	for (size_t i = 0; i < s->n_mounts; i++) {
		json_t *o = oci_mount(s, i);
		if (!o || json_array_append_new(arr, o) < 0) {
			json_decref(arr);
			return -ENOMEM;
		}
	}
	int r = json_dumpf(arr, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(arr);
	fputc('\n', out);
	return r < 0 ? -EIO : 0;
}

int
policy_mounts_write(const struct policy_mount_set *s, enum policy_mount_format fmt, FILE *out)
{
	switch (fmt) {
	case POLICY_FORMAT_BWRAP:
		write_bwrap(s, out);
		break;
	case POLICY_FORMAT_DOCKER:
		write_docker(s, out);
		break;
	case POLICY_FORMAT_OCI:
		return write_oci(s, out);
	case POLICY_FORMAT_MAX:
		return -EINVAL;
	}
	return ferror(out) ? -EIO : 0;
}

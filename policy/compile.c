/* SPDX-License-Identifier: MIT */
/*
 * Compiles the surface entries into a flat component trie. Building uses a
 * temporary node vector and a hash map keyed by (parent, component) so that a
 * directory with many entries costs O(1) per insert; the result is laid out in
 * breadth-first order with each node's children contiguous and sorted by
 * (hash, length, bytes), which is what the matcher binary-searches.
 */
#include <string.h>

#include "policy-private.h"

struct tnode {
	const char *name;
	uint32_t len, hash, parent;
	uint32_t *kids;
	uint32_t n_kids, cap_kids;
	uint32_t *globs;
	uint32_t n_globs, cap_globs;
	int32_t rule;
	uint8_t mode, private_;
};

struct builder {
	struct tnode *v;
	size_t n, cap;
	uint32_t *map; /* open addressing: node index + 1, 0 empty */
	size_t map_cap;
};

uint32_t
policy_component_hash(const char *s, size_t len)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 16777619u;
	}
	return h;
}

static uint32_t
slot_of(uint32_t parent, uint32_t hash, size_t cap)
{
	return (uint32_t)((hash ^ (parent * 0x9E3779B1u)) & (cap - 1));
}

static int
push_u32(uint32_t **v, uint32_t *n, uint32_t *cap, uint32_t x)
{
	if (*n == *cap) {
		uint32_t c = *cap ? *cap * 2 : 4;
		uint32_t *nv = realloc(*v, c * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		*v = nv;
		*cap = c;
	}
	(*v)[(*n)++] = x;
	return 0;
}

static int
map_grow(struct builder *b)
{
	size_t cap = b->map_cap ? b->map_cap * 2 : 1024;
	uint32_t *m = calloc(cap, sizeof(*m));
	if (!m)
		return -ENOMEM;
	for (size_t i = 1; i < b->n; i++) {
		const struct tnode *t = &b->v[i];
		uint32_t s = slot_of(t->parent, t->hash, cap);
		while (m[s])
			s = (s + 1) & (uint32_t)(cap - 1);
		m[s] = (uint32_t)i + 1;
	}
	free(b->map);
	b->map = m;
	b->map_cap = cap;
	return 0;
}

/* The child of parent named s[0..len), created when absent. Returns its index or -ENOMEM. */
static int64_t
child(struct builder *b, uint32_t parent, const char *s, uint32_t len)
{
	uint32_t h = policy_component_hash(s, len);

	if (2 * (b->n + 1) > b->map_cap && map_grow(b) < 0)
		return -ENOMEM;
	uint32_t slot = slot_of(parent, h, b->map_cap);
	for (; b->map[slot]; slot = (slot + 1) & (uint32_t)(b->map_cap - 1)) {
		const struct tnode *t = &b->v[b->map[slot] - 1];
		if (t->parent == parent && t->hash == h && t->len == len &&
		    memcmp(t->name, s, len) == 0)
			return b->map[slot] - 1;
	}
	if (b->n == b->cap) {
		size_t cap = b->cap * 2;
		struct tnode *v = realloc(b->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		b->v = v;
		b->cap = cap;
	}
	uint32_t idx = (uint32_t)b->n++;
	b->v[idx] = (struct tnode){.name = s, .len = len, .hash = h, .parent = parent, .rule = -1};
	b->map[slot] = idx + 1;
	if (push_u32(&b->v[parent].kids, &b->v[parent].n_kids, &b->v[parent].cap_kids, idx) < 0)
		return -ENOMEM;
	return idx;
}

/* Walks (creating) the nodes for the first n_comps components of path. */
static int64_t
walk(struct builder *b, const char *path, size_t n_comps)
{
	int64_t node = 0;
	const char *s = path;

	for (size_t k = 0; k < n_comps; k++) {
		while (*s == '/')
			s++;
		const char *e = strchrnul(s, '/');
		node = child(b, (uint32_t)node, s, (uint32_t)(e - s));
		if (node < 0)
			return node;
		s = e;
	}
	return node;
}

static size_t
count_components(const char *path)
{
	size_t n = 0;
	for (const char *s = path; *s;) {
		while (*s == '/')
			s++;
		if (!*s)
			break;
		n++;
		s = strchrnul(s, '/');
	}
	return n;
}

/* The number of leading components of a pattern that hold no wildcard. */
static size_t
literal_components(const char *pattern)
{
	size_t n = 0;
	for (const char *s = pattern; *s;) {
		while (*s == '/')
			s++;
		if (!*s)
			break;
		const char *e = strchrnul(s, '/');
		if (memchr(s, '*', (size_t)(e - s)) || memchr(s, '?', (size_t)(e - s)))
			break;
		n++;
		s = e;
	}
	return n;
}

static int
add_glob(struct policy *p, struct builder *b, uint32_t rule_idx, size_t *cap_globs)
{
	const struct policy_rule *r = &p->rules[rule_idx];
	size_t lit = literal_components(r->path);
	struct glob_comp *comps;
	size_t n;

	int64_t node = walk(b, r->path, lit);
	if (node < 0)
		return (int)node;
	int k = glob_compile(p, r->path, &comps, &n);
	if (k < 0)
		return k;
	if (p->n_globs == *cap_globs) {
		size_t cap = *cap_globs ? *cap_globs * 2 : 16;
		struct glob *v = realloc(p->globs, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		p->globs = v;
		*cap_globs = cap;
	}
	p->globs[p->n_globs] =
	    (struct glob){.rule = rule_idx, .n_comps = (uint32_t)(n - lit), .comps = comps + lit};
	struct tnode *t = &b->v[node];
	return push_u32(&t->globs, &t->n_globs, &t->cap_globs, (uint32_t)p->n_globs++);
}

static int
add_rules(struct policy *p, struct builder *b)
{
	size_t cap_globs = 0;

	for (size_t i = 0; i < p->n_rules; i++) {
		const struct policy_rule *r = &p->rules[i];
		if (r->glob) {
			int k = add_glob(p, b, (uint32_t)i, &cap_globs);
			if (k < 0)
				return k;
			continue;
		}
		int64_t node = walk(b, r->path, count_components(r->path));
		if (node < 0)
			return (int)node;
		struct tnode *t = &b->v[node];
		/* At an equal path the most restrictive entry decides; private sticks. */
		if (t->rule < 0 || r->mode < t->mode) {
			t->rule = (int32_t)i;
			t->mode = (uint8_t)r->mode;
		}
		t->private_ |= r->private_;
	}
	return 0;
}

static int
cmp_kids(const void *a, const void *b, void *ctx)
{
	const struct builder *bd = ctx;
	const struct tnode *x = &bd->v[*(const uint32_t *)a];
	const struct tnode *y = &bd->v[*(const uint32_t *)b];
	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return memcmp(x->name, y->name, x->len);
}

/* Lays the builder's nodes out breadth-first into p->nodes, p->names and glob ranges. */
static int
flatten(struct policy *p, struct builder *b)
{
	size_t names_len = 0;
	for (size_t i = 0; i < b->n; i++)
		names_len += b->v[i].len;

	_cleanup_free_ uint32_t *order = malloc(b->n * sizeof(*order));
	_cleanup_free_ struct glob *globs = malloc((p->n_globs + 1) * sizeof(*globs));
	p->nodes = calloc(b->n, sizeof(*p->nodes));
	p->names = malloc(names_len + 1);
	if (!order || !globs || !p->nodes || !p->names)
		return -ENOMEM;

	size_t head = 0, tail = 1, name_pos = 0, n_globs = 0;
	order[0] = 0;
	while (head < tail) {
		uint32_t old = order[head];
		struct tnode *t = &b->v[old];
		struct trie_node *f = &p->nodes[head];

		if (t->n_kids > 1)
			qsort_r(t->kids, t->n_kids, sizeof(*t->kids), cmp_kids, b);
		*f = (struct trie_node){
		    .hash = t->hash,
		    .name_off = (uint32_t)name_pos,
		    .name_len = t->len,
		    .first_child = (uint32_t)tail,
		    .n_children = t->n_kids,
		    .rule = t->rule,
		    .readable_desc = -1,
		    .glob_first = (uint32_t)n_globs,
		    .n_globs = t->n_globs,
		    .mode = t->mode,
		    .private_ = t->private_,
		};
		memcpy(p->names + name_pos, t->name, t->len);
		name_pos += t->len;
		for (uint32_t g = 0; g < t->n_globs; g++)
			globs[n_globs++] = p->globs[t->globs[g]];
		for (uint32_t k = 0; k < t->n_kids; k++)
			order[tail++] = t->kids[k];
		head++;
	}
	if (n_globs)
		memcpy(p->globs, globs, n_globs * sizeof(*globs));
	p->n_nodes = b->n;

	/* Children come after their parent, so a reverse sweep sees them first. */
	for (size_t i = p->n_nodes; i-- > 0;) {
		struct trie_node *f = &p->nodes[i];
		if (f->rule >= 0 && f->mode >= POLICY_MODE_RO) {
			f->readable_desc = f->rule;
			continue;
		}
		for (uint32_t k = 0; k < f->n_children && f->readable_desc < 0; k++)
			f->readable_desc = p->nodes[f->first_child + k].readable_desc;
	}
	return 0;
}

int
compile_trie(struct policy *p)
{
	struct builder b = {.cap = 64};
	int r = -ENOMEM;

	b.v = calloc(b.cap, sizeof(*b.v));
	if (!b.v)
		return -ENOMEM;
	b.v[0] = (struct tnode){.name = "", .rule = -1};
	b.n = 1;
	r = add_rules(p, &b);
	if (r == 0)
		r = flatten(p, &b);
	for (size_t i = 0; i < b.n; i++) {
		free(b.v[i].kids);
		free(b.v[i].globs);
	}
	free(b.v);
	free(b.map);
	return r;
}

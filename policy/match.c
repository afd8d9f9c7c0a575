/* SPDX-License-Identifier: MIT */
/*
 * The hot path: one walk down the trie per check. The path is split once into
 * component offsets on the stack; each step binary-searches the children of the
 * current node by (hash, length, bytes). Globs are tried only at the nodes that
 * hold them, so their cost follows the path, not the size of the policy.
 */
#include <string.h>

#include "policy-private.h"

static const struct trie_node *
find_child(const struct policy *p, const struct trie_node *n, const char *s, uint32_t len,
           uint32_t hash)
{
	size_t lo = n->first_child, hi = (size_t)n->first_child + n->n_children;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct trie_node *c = &p->nodes[mid];
		int d;
		if (c->hash != hash)
			d = c->hash < hash ? -1 : 1;
		else if (c->name_len != len)
			d = c->name_len < len ? -1 : 1;
		else
			d = memcmp(p->names + c->name_off, s, len);
		if (d == 0)
			return c;
		if (d < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* The first glob held by node n that matches components [from, n_comps), or -1. */
static int32_t
match_globs(const struct policy *p, const struct trie_node *n, const char *path,
            const struct comp *c, size_t from, size_t n_comps)
{
	for (uint32_t g = 0; g < n->n_globs; g++) {
		const struct glob *gl = &p->globs[n->glob_first + g];
		if (glob_match_compiled(gl->comps, gl->n_comps, path, c + from, n_comps - from,
		                        true))
			return (int32_t)gl->rule;
	}
	return -1;
}

static bool
mode_allows(enum policy_mode m, enum policy_access a)
{
	return a == POLICY_WRITE ? m == POLICY_MODE_RW : m >= POLICY_MODE_RO;
}

int
policy_denial_errno(enum policy_access access)
{
	return access == POLICY_STAT ? ENOENT : EACCES;
}

void
policy_match(const struct policy *p, const char *path, size_t len, enum policy_access access,
             struct policy_verdict *ret)
{
	struct comp c[POLICY_COMPONENTS_MAX];
	const struct trie_node *node = &p->nodes[0], *best = NULL;
	size_t depth = 0;

	*ret = (struct policy_verdict){.err = policy_denial_errno(access)};
	int n = path_split(path, len, c, ARRAY_SIZE(c));
	if (n < 0 || (unsigned)access >= POLICY_ACCESS_MAX)
		return;

	bool private_ = false;

	for (;;) {
		if (node->rule >= 0) {
			best = node;
			/* Private covers its subtree: the runner hides all of it from tasks. */
			private_ |= node->private_;
		}
		if (_unlikely_(node->n_globs)) {
			int32_t g = match_globs(p, node, path, c, depth, (size_t)n);
			if (g >= 0) {
				ret->rule = &p->rules[g];
				return;
			}
		}
		if (depth == (size_t)n)
			break;
		const char *s = path + c[depth].off;
		const struct trie_node *next =
		    find_child(p, node, s, c[depth].len, policy_component_hash(s, c[depth].len));
		if (!next)
			break;
		node = next;
		depth++;
	}

	if (best) {
		ret->mode = (enum policy_mode)best->mode;
		ret->rule = &p->rules[best->rule];
		ret->private_ = private_;
		if (mode_allows(ret->mode, access)) {
			ret->allow = true;
			ret->err = 0;
			return;
		}
	}
	/* realpath(), getcwd() and tools walking up to find .git stat the ancestors. */
	if (access == POLICY_STAT && depth == (size_t)n && node->readable_desc >= 0) {
		ret->allow = true;
		ret->err = 0;
		ret->ancestor = true;
		ret->rule = &p->rules[node->readable_desc];
	}
}

/* SPDX-License-Identifier: MIT */
/*
 * Globs for deny entries and exec rules: "*" and "?" within one component, "**"
 * as a whole component for zero or more components. "*" matches a leading dot
 * too: a deny list that skipped dotfiles would skip most secrets.
 *
 * Both levels use the single-backtrack-point wildcard algorithm: on a mismatch,
 * resume just after the last star, one input unit further on. It is linear in
 * practice and never recurses, so hostile patterns cannot blow the stack.
 */
#include <string.h>

#include "policy-private.h"

bool
glob_has_magic(const char *s)
{
	return strpbrk(s, "*?") != NULL;
}

bool
glob_match_component(const char *pat, const char *s, size_t len)
{
	size_t p = 0, i = 0, star_p = SIZE_MAX, star_i = 0;

	for (;;) {
		if (pat[p] == '*') {
			star_p = p++;
			star_i = i;
			continue;
		}
		if (i == len && pat[p] == '\0')
			return true;
		if (i < len && pat[p] != '\0' && (pat[p] == '?' || pat[p] == s[i])) {
			p++;
			i++;
			continue;
		}
		if (star_p == SIZE_MAX || star_i >= len)
			return false;
		p = star_p + 1;
		i = ++star_i;
	}
}

static bool
is_doublestar(const char *p)
{
	return p[0] == '*' && p[1] == '*' && p[2] == '\0';
}

static void
classify(struct glob_comp *g)
{
	const char *p = g->pat;
	size_t n = strlen(p);

	g->kind = GC_GENERAL;
	g->lit = p;
	if (n > UINT16_MAX)
		return;
	if (!glob_has_magic(p)) {
		g->kind = GC_EXACT;
		g->lit_len = (uint16_t)n;
	} else if (is_doublestar(p)) {
		g->kind = GC_DSTAR;
	} else if (n == 1 && p[0] == '*') {
		g->kind = GC_ANY;
	} else if (p[n - 1] == '*' && !strpbrk(p, "?") && strchr(p, '*') == p + n - 1) {
		g->kind = GC_PREFIX;
		g->lit_len = (uint16_t)(n - 1);
	} else if (p[0] == '*' && !glob_has_magic(p + 1)) {
		g->kind = GC_SUFFIX;
		g->lit = p + 1;
		g->lit_len = (uint16_t)(n - 1);
	}
}

int
glob_compile(struct policy *p, const char *pattern, struct glob_comp **ret, size_t *ret_n)
{
	size_t n = 0, cap = 0;
	struct glob_comp *v = NULL;
	const char *s = pattern;

	while (*s) {
		while (*s == '/')
			s++;
		if (!*s)
			break;
		const char *e = strchrnul(s, '/');
		if (n == cap) {
			cap = cap ? cap * 2 : 8;
			struct glob_comp *nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				free(v);
				return -ENOMEM;
			}
			v = nv;
		}
		v[n].pat = pol_strndup(p, s, (size_t)(e - s));
		if (!v[n].pat) {
			free(v);
			return -ENOMEM;
		}
		classify(&v[n++]);
		s = e;
	}
	if (pol_own(p, v) < 0) {
		free(v);
		return -ENOMEM;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

static inline bool
comp_match(const struct glob_comp *g, const char *s, size_t len)
{
	switch ((enum glob_comp_kind)g->kind) {
	case GC_EXACT:
		return len == g->lit_len && memcmp(s, g->lit, len) == 0;
	case GC_PREFIX:
		return len >= g->lit_len && memcmp(s, g->lit, g->lit_len) == 0;
	case GC_SUFFIX:
		return len >= g->lit_len && memcmp(s + len - g->lit_len, g->lit, g->lit_len) == 0;
	case GC_ANY:
		return true;
	case GC_DSTAR:
	case GC_GENERAL:
	case GC_KIND_MAX:
		break;
	}
	return glob_match_component(g->pat, s, len);
}

bool
glob_match_compiled(const struct glob_comp *pat, size_t n_pat, const char *path,
                    const struct comp *c, size_t n, bool subtree)
{
	size_t j = 0, i = 0, star_j = SIZE_MAX, star_i = 0;

	/* "**" then one component, as a subtree match: does any component match it? */
	if (subtree && n_pat == 2 && pat[0].kind == GC_DSTAR && pat[1].kind != GC_DSTAR) {
		for (; i < n; i++)
			if (comp_match(&pat[1], path + c[i].off, c[i].len))
				return true;
		return false;
	}
	for (;;) {
		if (j == n_pat && (i == n || subtree))
			return true;
		if (j < n_pat && pat[j].kind == GC_DSTAR) {
			star_j = j++;
			star_i = i;
			continue;
		}
		if (j < n_pat && i < n && comp_match(&pat[j], path + c[i].off, c[i].len)) {
			i++;
			j++;
			continue;
		}
		if (star_j == SIZE_MAX || star_i >= n)
			return false;
		j = star_j + 1;
		i = ++star_i;
	}
}

bool
glob_match_path(const char *pattern, const char *path, bool subtree)
{
	struct comp c[POLICY_COMPONENTS_MAX];
	struct glob_comp pv[POLICY_COMPONENTS_MAX];
	char buf[POLICY_PATH_MAX + 1];
	size_t np = 0;

	int n = path_split(path, strlen(path), c, ARRAY_SIZE(c));
	if (n < 0 || strlen(pattern) > POLICY_PATH_MAX)
		return false;
	/* Split and classify the pattern in a local copy: this helper must not allocate. */
	strcpy(buf, pattern);
	for (char *s = buf; *s;) {
		while (*s == '/')
			*s++ = '\0';
		if (!*s)
			break;
		pv[np].pat = s;
		s = strchrnul(s, '/');
		if (*s)
			*s++ = '\0';
		classify(&pv[np++]);
	}
	return glob_match_compiled(pv, np, path, c, (size_t)n, subtree);
}

bool
policy_glob_match(const char *pattern, const char *path)
{
	return glob_match_path(pattern, path, true);
}

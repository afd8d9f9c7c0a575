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

bool
glob_match_comps(const char *const *pat, size_t n_pat, const char *path, const struct comp *c,
                 size_t n, bool subtree)
{
	size_t j = 0, i = 0, star_j = SIZE_MAX, star_i = 0;

	for (;;) {
		if (j == n_pat && (i == n || subtree))
			return true;
		if (j < n_pat && is_doublestar(pat[j])) {
			star_j = j++;
			star_i = i;
			continue;
		}
		if (j < n_pat && i < n && glob_match_component(pat[j], path + c[i].off, c[i].len)) {
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

int
glob_split(struct policy *p, const char *pattern, const char ***ret, size_t *ret_n)
{
	size_t n = 0, cap = 0;
	const char **v = NULL;
	const char *s = pattern;

	while (*s) {
		while (*s == '/')
			s++;
		if (!*s)
			break;
		const char *e = strchrnul(s, '/');
		if (n == cap) {
			cap = cap ? cap * 2 : 8;
			const char **nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				free(v);
				return -ENOMEM;
			}
			v = nv;
		}
		v[n] = pol_strndup(p, s, (size_t)(e - s));
		if (!v[n]) {
			free(v);
			return -ENOMEM;
		}
		n++;
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

bool
glob_match_path(const char *pattern, const char *path, bool subtree)
{
	struct comp c[POLICY_COMPONENTS_MAX];
	const char *pv[POLICY_COMPONENTS_MAX];
	char buf[POLICY_PATH_MAX + 1];
	size_t np = 0;

	int n = path_split(path, strlen(path), c, ARRAY_SIZE(c));
	if (n < 0 || strlen(pattern) > POLICY_PATH_MAX)
		return false;
	/* Split the pattern in a local copy: this helper must not allocate. */
	strcpy(buf, pattern);
	for (char *s = buf; *s;) {
		while (*s == '/')
			*s++ = '\0';
		if (!*s)
			break;
		pv[np++] = s;
		s = strchrnul(s, '/');
	}
	return glob_match_comps(pv, np, path, c, (size_t)n, subtree);
}

bool
policy_glob_match(const char *pattern, const char *path)
{
	return glob_match_path(pattern, path, true);
}

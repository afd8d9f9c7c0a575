/* SPDX-License-Identifier: MIT */
/* Exec rules: a binary path (or pattern) and optional argv patterns. */
#include <string.h>

#include "policy-private.h"

/* Each pattern matches one argument, in order, with any arguments between them. */
static bool
argv_matches(const struct policy_exec_rule *r, const char *const *argv)
{
	size_t j = 0;

	if (r->argc == 0)
		return true;
	if (!argv || !argv[0])
		return false;
	for (size_t i = 1; argv[i] && j < r->argc; i++)
		if (glob_match_component(r->argv[j], argv[i], strlen(argv[i])))
			j++;
	return j == r->argc;
}

static bool
path_matches(const char *pattern, const char *path)
{
	if (!glob_has_magic(pattern))
		return strcmp(pattern, path) == 0;
	return glob_match_path(pattern, path, false);
}

enum policy_exec_action
policy_exec_decide(const struct policy *p, const char *path, const char *const *argv,
                   const struct policy_exec_rule **ret_rule)
{
	const struct policy_exec_rule *first = NULL;

	for (size_t i = 0; i < p->n_exec_rules; i++) {
		const struct policy_exec_rule *r = &p->exec_rules[i];
		if (!path_matches(r->path, path) || !argv_matches(r, argv))
			continue;
		if (r->action == POLICY_EXEC_DENY) {
			first = r;
			break;
		}
		if (!first)
			first = r;
	}
	if (ret_rule)
		*ret_rule = first;
	return first ? first->action : p->exec_default;
}

enum policy_exec_action
policy_exec_default(const struct policy *p)
{
	return p->exec_default;
}

size_t
policy_exec_rules(const struct policy *p, const struct policy_exec_rule **ret)
{
	*ret = p->exec_rules;
	return p->n_exec_rules;
}

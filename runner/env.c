/* SPDX-License-Identifier: MIT */
/* The environment a task sees: the client's, less secrets, plus what the policy sets. */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"

static bool
name_matches(const char *entry, size_t name_len, const char *const *patterns)
{
	char name[256];

	if (!patterns || name_len >= sizeof(name))
		return false;
	memcpy(name, entry, name_len);
	name[name_len] = '\0';
	for (size_t i = 0; patterns[i]; i++)
		if (fnmatch(patterns[i], name, 0) == 0)
			return true;
	return false;
}

static bool
dropped(const struct policy_runner *run, const char *entry, size_t name_len)
{
	if (name_matches(entry, name_len, run->env_keep))
		return false;
	/* A name too long to compare is dropped: it cannot be shown not to be a secret. */
	if (name_len >= 256)
		return true;
	return name_matches(entry, name_len, policy_env_drop_builtin()) ||
	       name_matches(entry, name_len, run->env_drop);
}

/* Whether the runner sets this name itself (HOME, TMPDIR, runner.env.set). */
static bool
overridden(const struct policy_runner *run, const char *entry, size_t name_len, const char *home,
           const char *tmpdir)
{
	if ((home && name_len == 4 && strncmp(entry, "HOME", 4) == 0) ||
	    (tmpdir && name_len == 6 && strncmp(entry, "TMPDIR", 6) == 0))
		return true;
	for (size_t i = 0; i < run->n_env_set; i++)
		if (strlen(run->env_set[i].name) == name_len &&
		    strncmp(run->env_set[i].name, entry, name_len) == 0)
			return true;
	return false;
}

char **
env_sanitize(const struct policy *p, const char *const *client_env, const char *home,
             const char *tmpdir)
{
	const struct policy_runner *run = policy_runner(p);
	size_t n = 0, bytes = 0;

	for (size_t i = 0; client_env && client_env[i]; i++, n++)
		bytes += strlen(client_env[i]) + 1;
	for (size_t i = 0; i < run->n_env_set; i++)
		bytes += strlen(run->env_set[i].name) + strlen(run->env_set[i].value) + 2;
	bytes += (home ? strlen(home) : 0) + (tmpdir ? strlen(tmpdir) : 0) + sizeof("HOME=") +
	         sizeof("TMPDIR=");
	n += run->n_env_set + 3;

	char **env = malloc(n * sizeof(char *) + bytes);
	if (!env)
		return NULL;
	char *s = (char *)(env + n);
	size_t k = 0;
	for (size_t i = 0; client_env && client_env[i]; i++) {
		const char *eq = strchr(client_env[i], '=');
		size_t len = eq ? (size_t)(eq - client_env[i]) : 0;
		if (!eq || len == 0 || dropped(run, client_env[i], len) ||
		    overridden(run, client_env[i], len, home, tmpdir))
			continue;
		env[k++] = strcpy(s, client_env[i]);
		s += strlen(s) + 1;
	}
	for (size_t i = 0; i < run->n_env_set; i++) {
		env[k++] = s;
		s = stpcpy(stpcpy(stpcpy(s, run->env_set[i].name), "="), run->env_set[i].value) + 1;
	}
	if (home) {
		env[k++] = s;
		s = stpcpy(stpcpy(s, "HOME="), home) + 1;
	}
	if (tmpdir) {
		env[k++] = s;
		stpcpy(stpcpy(s, "TMPDIR="), tmpdir);
	}
	env[k] = NULL;
	return env;
}

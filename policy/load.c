/* SPDX-License-Identifier: MIT */
/*
 * Policy files, version 1: JSON parsed by jansson, then validated against a
 * table-driven schema. Unknown keys are errors (a typo must not silently widen or
 * narrow the boundary); every error names source, line, column and key path.
 */
#include <fcntl.h>
#include <jansson.h>
#include <string.h>
#include <sys/stat.h>

#include "policy-private.h"

/* A policy larger than this is refused: it is not written by hand. */
#define POLICY_FILE_MAX (64u << 20)

extern const char policy_default_json[];

struct loader {
	struct policy *p;
	const struct policy_env *env;
	const struct locator *loc;
	struct policy_diag *diag;
	bool system, tooling;
};

/* ---- ownership of strings ---- */

int
pol_own(struct policy *p, void *ptr)
{
	if (p->n_strings == p->cap_strings) {
		size_t cap = p->cap_strings ? p->cap_strings * 2 : 64;
		char **v = realloc(p->strings, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		p->strings = v;
		p->cap_strings = cap;
	}
	p->strings[p->n_strings++] = ptr;
	return 0;
}

char *
pol_strndup(struct policy *p, const char *s, size_t n)
{
	char *d = strndup(s, n);
	if (d && pol_own(p, d) < 0) {
		free(d);
		return NULL;
	}
	return d;
}

char *
pol_strdup(struct policy *p, const char *s)
{
	return s ? pol_strndup(p, s, strlen(s)) : NULL;
}

static int
own_origin(struct policy *p, struct policy_origin *o)
{
	o->source = pol_strdup(p, o->source);
	o->key = pol_strdup(p, o->key);
	o->text = pol_strdup(p, o->text);
	return o->source && o->key && o->text ? 0 : -ENOMEM;
}

int
pol_add_rule(struct policy *p, enum policy_kind kind, enum policy_mode mode, bool glob,
             const char *path, const struct policy_origin *origin)
{
	if (p->n_rules == p->cap_rules) {
		size_t cap = p->cap_rules ? p->cap_rules * 2 : 64;
		struct policy_rule *v = realloc(p->rules, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		p->rules = v;
		p->cap_rules = cap;
	}
	struct policy_rule *r = &p->rules[p->n_rules];
	*r = (struct policy_rule){
	    .kind = kind,
	    .mode = mode,
	    .glob = glob,
	    .private_ = kind == POLICY_KIND_PRIVATE,
	    .path = pol_strdup(p, path),
	    .origin = *origin,
	};
	if (!r->path || own_origin(p, &r->origin) < 0)
		return -ENOMEM;
	p->n_rules++;
	return 0;
}

int
pol_add_note(struct policy *p, const char *fmt, ...)
{
	va_list ap;
	char *s;

	if (p->n_notes == p->cap_notes) {
		size_t cap = p->cap_notes ? p->cap_notes * 2 : 8;
		char **v = realloc(p->notes, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		p->notes = v;
		p->cap_notes = cap;
	}
	va_start(ap, fmt);
	int r = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (r < 0)
		return -ENOMEM;
	p->notes[p->n_notes++] = s;
	return 0;
}

/* ---- diagnostics ---- */

static int _printf_(4, 5) fail(struct loader *L, const char *key, bool at_key, const char *fmt, ...)
{
	struct policy_diag *d = L->diag;
	va_list ap;

	snprintf(d->source, sizeof(d->source), "%s", L->p->source_name);
	snprintf(d->key, sizeof(d->key), "%s", key);
	locator_find(L->loc, key, at_key, &d->line, &d->col);
	va_start(ap, fmt);
	vsnprintf(d->msg, sizeof(d->msg), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static const char *
type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
		return "a number";
	case JSON_REAL:
		return "a real number, not an integer";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	case JSON_NULL:
		return "null";
	}
	return "?";
}

static int
want(struct loader *L, const char *key, const json_t *v, json_type t, const char *what)
{
	bool ok = json_typeof(v) == t || (t == JSON_TRUE && json_is_boolean(v));
	if (!ok)
		return fail(L, key, false, "expected %s, got %s", what, type_name(v));
	return 0;
}

/* Matches a string against a NULL-terminated list of names; returns the index. */
static int
want_enum(struct loader *L, const char *key, const json_t *v, const char *const *names)
{
	char list[256] = "";
	size_t n = 0;

	if (json_is_string(v))
		for (; names[n]; n++)
			if (strcmp(json_string_value(v), names[n]) == 0)
				return (int)n;
	for (size_t i = 0; names[i]; i++) {
		size_t l = strlen(list);
		snprintf(list + l, sizeof(list) - l, "%s\"%s\"", i ? ", " : "", names[i]);
	}
	if (!json_is_string(v))
		return fail(L, key, false, "expected one of %s, got %s", list, type_name(v));
	return fail(L, key, false, "expected one of %s, got \"%s\"", list, json_string_value(v));
}

static int
want_uint(struct loader *L, const char *key, const json_t *v, json_int_t max, unsigned *ret)
{
	if (!json_is_integer(v))
		return fail(L, key, false, "expected a non-negative integer, got %s", type_name(v));
	json_int_t i = json_integer_value(v);
	if (i < 0 || i > max)
		return fail(L, key, false, "%lld is out of range (0 to %lld)", (long long)i,
		            (long long)max);
	*ret = (unsigned)i;
	return 0;
}

/* ---- schema tables ---- */

struct field {
	const char *name;
	int (*parse)(struct loader *L, const char *key, json_t *v, void *ctx);
};

static int
unknown_key(struct loader *L, const char *key, const struct field *fields, size_t n)
{
	char list[256] = "";

	for (size_t k = 0; k < n; k++) {
		size_t l = strlen(list);
		snprintf(list + l, sizeof(list) - l, "%s%s", k ? ", " : "", fields[k].name);
	}
	return fail(L, key, true, "unknown key (expected one of: %s)", list);
}

static int
parse_object(struct loader *L, const char *key, json_t *obj, const struct field *fields, size_t n,
             void *ctx)
{
	const char *name;
	json_t *v;
	char sub[LOC_KEY_MAX];

	if (want(L, key, obj, JSON_OBJECT, "an object") < 0)
		return -EINVAL;
	json_object_foreach(obj, name, v)
	{
		snprintf(sub, sizeof(sub), "%s%s%s", key, *key ? "." : "", name);
		size_t i = 0;
		while (i < n && strcmp(fields[i].name, name) != 0)
			i++;
		if (i == n)
			return unknown_key(L, sub, fields, n);
		int r = fields[i].parse(L, sub, v, ctx);
		if (r < 0)
			return r;
	}
	return 0;
}

static int
require(struct loader *L, const char *key, const json_t *obj, const char *name)
{
	if (!json_object_get(obj, name))
		return fail(L, key, false, "required key \"%s\" is missing", name);
	return 0;
}

/* Calls each(L, key[i], element, ctx) for every element of an array of strings. */
static int
for_each_string(struct loader *L, const char *key, json_t *arr,
                int (*each)(struct loader *L, const char *key, const char *s, void *ctx), void *ctx)
{
	size_t i;
	json_t *v;
	char sub[LOC_KEY_MAX];

	if (want(L, key, arr, JSON_ARRAY, "an array of strings") < 0)
		return -EINVAL;
	json_array_foreach(arr, i, v)
	{
		snprintf(sub, sizeof(sub), "%s[%zu]", key, i);
		if (want(L, sub, v, JSON_STRING, "a string") < 0)
			return -EINVAL;
		int r = each(L, sub, json_string_value(v), ctx);
		if (r < 0)
			return r;
	}
	return 0;
}

static struct policy_origin
origin_of(struct loader *L, const char *key, const char *text)
{
	struct policy_origin o = {.source = L->p->source_name, .key = key, .text = text};
	locator_find(L->loc, key, false, &o.line, &o.col);
	return o;
}

/* ---- paths ---- */

/* The entry as quoted in a message: long ones are shortened, so the reason still fits. */
static const char *
shorten(const char *text, char *buf, size_t size)
{
	size_t n = strlen(text);
	if (n < 80)
		return text;
	snprintf(buf, size, "%.60s…(%zu bytes)", text, n);
	return buf;
}

int
pol_resolve_entry(struct policy *p, const struct policy_env *env, const char *text, const char *key,
                  bool allow_glob, char *out, size_t size, char *errbuf, size_t errsize)
{
	char exp[POLICY_PATH_MAX + 1], unset[128], sb[128];
	const char *err, *q = shorten(text, sb, sizeof(sb));

	int r =
	    policy_path_expand(text, env->environ, exp, sizeof(exp), unset, sizeof(unset), &err);
	if (r == -ENAMETOOLONG) {
		snprintf(errbuf, errsize, "\"%s\" is longer than %d bytes once expanded", q,
		         POLICY_PATH_MAX);
		return r;
	}
	if (r < 0) {
		snprintf(errbuf, errsize, "\"%s\": %s", q, err);
		return r;
	}
	if (r == 0) {
		if (key &&
		    pol_add_note(p, "%s: \"%s\" dropped: $%s is unset or empty", key, q, unset) < 0)
			return -ENOMEM;
		return 0;
	}
	if (!allow_glob && glob_has_magic(exp)) {
		snprintf(errbuf, errsize,
		         "\"%s\": wildcards are only allowed in surface.deny and exec rule paths",
		         q);
		return -EINVAL;
	}
	/* "**" patterns match anywhere: they are not relative to the cwd. */
	bool anywhere = allow_glob && (strcmp(exp, "**") == 0 || strncmp(exp, "**/", 3) == 0);
	if (exp[0] != '/' && !anywhere && (!env->cwd || env->cwd[0] != '/')) {
		snprintf(errbuf, errsize, "\"%s\" is relative, but no working directory is known",
		         q);
		return -EINVAL;
	}
	r = policy_path_normalize(anywhere ? "/" : env->cwd, exp, out, size);
	if (r < 0)
		snprintf(errbuf, errsize, "\"%s\" is longer than %d bytes once normalised", q,
		         POLICY_PATH_MAX);
	return r;
}

int
pol_add_rule_resolved(struct policy *p, const struct policy_env *env, enum policy_kind kind,
                      enum policy_mode mode, const char *path, const struct policy_origin *o)
{
	char canon[POLICY_PATH_MAX + 1], prefix[POLICY_PATH_MAX + 1];
	bool glob = glob_has_magic(path);

	int r = pol_add_rule(p, kind, mode, glob, path, o);
	/*
	 * /proc/self and friends resolve to the pid of whoever asks: resolved here they
	 * would name moat's own process, not the agent's.
	 */
	if (r < 0 || !env->resolve || strncmp(path, "/proc/", 6) == 0)
		return r;
	/* Resolve the literal prefix: all of a plain path, up to the first wildcard of a glob. */
	size_t lit = strlen(path);
	if (glob) {
		const char *m = strpbrk(path, "*?");
		while (m > path && *m != '/')
			m--;
		lit = (size_t)(m - path);
	}
	if (lit == 0)
		return 0;
	memcpy(prefix, path, lit);
	prefix[lit] = '\0';
	if (env->resolve(prefix, canon, sizeof(canon), env->userdata) < 0)
		return 0;
	if (strlen(canon) + strlen(path + lit) > POLICY_PATH_MAX)
		return 0;
	strcat(canon, path + lit);
	if (strcmp(canon, path) == 0)
		return 0;
	return pol_add_rule(p, kind, mode, glob, canon, o);
}

/* Adds a surface entry, and again under its canonical name if a symlink leads there. */
static int
add_entry(struct loader *L, const char *key, const char *text, enum policy_kind kind,
          enum policy_mode mode)
{
	char path[POLICY_PATH_MAX + 1], err[600];

	int r = pol_resolve_entry(L->p, L->env, text, key, kind == POLICY_KIND_DENY, path,
	                          sizeof(path), err, sizeof(err));
	if (r < 0)
		return r == -ENOMEM ? r : fail(L, key, false, "%s", err);
	if (r == 0)
		return 0;
	struct policy_origin o = origin_of(L, key, text);
	return pol_add_rule_resolved(L->p, L->env, kind, mode, path, &o);
}

/* ---- surface ---- */

struct kind_mode {
	enum policy_kind kind;
	enum policy_mode mode;
};

static int
surface_each(struct loader *L, const char *key, const char *s, void *ctx)
{
	const struct kind_mode *km = ctx;
	return add_entry(L, key, s, km->kind, km->mode);
}

static int
surface_list(struct loader *L, const char *key, json_t *v, enum policy_kind kind,
             enum policy_mode mode)
{
	struct kind_mode km = {kind, mode};
	return for_each_string(L, key, v, surface_each, &km);
}

static int
surface_cwd(struct loader *L, const char *key, json_t *v, void *ctx)
{
	static const char *const names[] = {"none", "ro", "rw", NULL};
	int m = want_enum(L, key, v, names);
	if (m < 0)
		return m;
	/* Remember it; the entry is added when the whole object is known (see parse_surface). */
	*(int *)ctx = m;
	return 0;
}

#define SURFACE_LIST(name, kind, mode)                                                             \
	static int surface_##name(struct loader *L, const char *key, json_t *v, void *ctx)         \
	{                                                                                          \
		return surface_list(L, key, v, kind, mode);                                        \
	}
SURFACE_LIST(write, POLICY_KIND_WRITE, POLICY_MODE_RW)
SURFACE_LIST(read, POLICY_KIND_READ, POLICY_MODE_RO)
SURFACE_LIST(private, POLICY_KIND_PRIVATE, POLICY_MODE_RW)
SURFACE_LIST(deny, POLICY_KIND_DENY, POLICY_MODE_NONE)

static int
surface_bool(struct loader *L, const char *key, json_t *v, bool *ret)
{
	if (want(L, key, v, JSON_TRUE, "a boolean") < 0)
		return -EINVAL;
	*ret = json_is_true(v);
	return 0;
}

static int
surface_system(struct loader *L, const char *key, json_t *v, void *ctx)
{
	return surface_bool(L, key, v, &L->system);
}

static int
surface_tooling(struct loader *L, const char *key, json_t *v, void *ctx)
{
	return surface_bool(L, key, v, &L->tooling);
}

static int
add_cwd(struct loader *L, int mode, const char *key)
{
	if (mode == POLICY_MODE_NONE || !L->env->cwd)
		return 0;
	struct policy_origin o = origin_of(L, key, "cwd");
	return pol_add_rule(L->p, POLICY_KIND_CWD, (enum policy_mode)mode, false, L->env->cwd, &o);
}

static int
parse_surface(struct loader *L, const char *key, json_t *v, void *ctx)
{
	static const struct field fields[] = {
	    {"cwd", surface_cwd},         {"write", surface_write}, {"read", surface_read},
	    {"private", surface_private}, {"deny", surface_deny},   {"system", surface_system},
	    {"tooling", surface_tooling},
	};
	int cwd_mode = POLICY_MODE_RW;

	/* The cwd entry goes first, so that it is rule 0 whatever the key order. */
	json_t *c = json_is_object(v) ? json_object_get(v, "cwd") : NULL;
	if (c) {
		int r = surface_cwd(L, "surface.cwd", c, &cwd_mode);
		if (r < 0)
			return r;
	}
	int r = add_cwd(L, cwd_mode, c ? "surface.cwd" : "surface");
	if (r < 0)
		return r;
	*(bool *)ctx = true;
	return parse_object(L, key, v, fields, ARRAY_SIZE(fields), &cwd_mode);
}

/* ---- exec ---- */

static const char *const exec_actions[] = {"redirect", "allow", "deny", NULL};

static int
exec_default(struct loader *L, const char *key, json_t *v, void *ctx)
{
	int a = want_enum(L, key, v, exec_actions);
	if (a < 0)
		return a;
	L->p->exec_default = (enum policy_exec_action)a;
	return 0;
}

static int
rule_path(struct loader *L, const char *key, json_t *v, void *ctx)
{
	struct policy_exec_rule *e = ctx;
	char path[POLICY_PATH_MAX + 1], err[600];

	if (want(L, key, v, JSON_STRING, "a string") < 0)
		return -EINVAL;
	const char *s = json_string_value(v);
	/* A bare "git" would silently mean ./git: rules name a path, absolute or ./relative. */
	if (!strchr(s, '/') && s[0] != '~' && s[0] != '$')
		return fail(L, key, false,
		            "\"%s\" is a bare name: an exec rule names a path (\"/usr/bin/%s\" or "
		            "\"./%s\")",
		            s, s, s);
	int r = pol_resolve_entry(L->p, L->env, s, key, true, path, sizeof(path), err, sizeof(err));
	if (r < 0)
		return r == -ENOMEM ? r : fail(L, key, false, "%s", err);
	if (r == 0) {
		e->path = NULL; /* dropped: an unset variable */
		return 0;
	}
	e->path = pol_strdup(L->p, path);
	e->origin = origin_of(L, key, json_string_value(v));
	return e->path && own_origin(L->p, &e->origin) == 0 ? 0 : -ENOMEM;
}

static int
rule_argv_each(struct loader *L, const char *key, const char *s, void *ctx)
{
	struct policy_exec_rule *e = ctx;
	((const char **)e->argv)[e->argc] = pol_strdup(L->p, s);
	return e->argv[e->argc++] ? 0 : -ENOMEM;
}

static int
rule_argv(struct loader *L, const char *key, json_t *v, void *ctx)
{
	struct policy_exec_rule *e = ctx;

	if (want(L, key, v, JSON_ARRAY, "an array of strings") < 0)
		return -EINVAL;
	const char **argv = calloc(json_array_size(v) + 1, sizeof(*argv));
	if (!argv || pol_own(L->p, argv) < 0) {
		free(argv);
		return -ENOMEM;
	}
	e->argv = argv;
	e->argc = 0;
	return for_each_string(L, key, v, rule_argv_each, e);
}

static int
rule_action(struct loader *L, const char *key, json_t *v, void *ctx)
{
	struct policy_exec_rule *e = ctx;
	int a = want_enum(L, key, v, exec_actions);
	if (a < 0)
		return a;
	e->action = (enum policy_exec_action)a;
	return 0;
}

static int
exec_rules(struct loader *L, const char *key, json_t *v, void *ctx)
{
	static const struct field fields[] = {
	    {"path", rule_path}, {"argv", rule_argv}, {"action", rule_action}};
	static const char *const empty[] = {NULL};
	struct policy *p = L->p;
	char sub[LOC_KEY_MAX];
	size_t i;
	json_t *r;

	if (want(L, key, v, JSON_ARRAY, "an array of rules") < 0)
		return -EINVAL;
	p->exec_rules = calloc(json_array_size(v) + 1, sizeof(*p->exec_rules));
	if (!p->exec_rules)
		return -ENOMEM;
	json_array_foreach(v, i, r)
	{
		struct policy_exec_rule e = {.argv = empty};
		snprintf(sub, sizeof(sub), "%s[%zu]", key, i);
		if (want(L, sub, r, JSON_OBJECT, "an object") < 0 ||
		    require(L, sub, r, "path") < 0 || require(L, sub, r, "action") < 0)
			return -EINVAL;
		int k = parse_object(L, sub, r, fields, ARRAY_SIZE(fields), &e);
		if (k < 0)
			return k;
		if (e.path)
			p->exec_rules[p->n_exec_rules++] = e;
	}
	return 0;
}

static int
parse_exec(struct loader *L, const char *key, json_t *v, void *ctx)
{
	static const struct field fields[] = {{"default", exec_default}, {"rules", exec_rules}};
	return parse_object(L, key, v, fields, ARRAY_SIZE(fields), NULL);
}

/* ---- net ---- */

static int
net_each(struct loader *L, const char *key, const char *s, void *ctx)
{
	char err[600];
	struct policy_origin o = origin_of(L, key, s);
	int r = net_parse(L->p, *(enum policy_net_op *)ctx, s, &o, L->env, err, sizeof(err));
	if (r < 0)
		return r == -ENOMEM ? r : fail(L, key, false, "\"%s\": %s", s, err);
	return 0;
}

static int
net_connect(struct loader *L, const char *key, json_t *v, void *ctx)
{
	enum policy_net_op op = POLICY_NET_CONNECT;
	return for_each_string(L, key, v, net_each, &op);
}

static int
net_bind(struct loader *L, const char *key, json_t *v, void *ctx)
{
	enum policy_net_op op = POLICY_NET_BIND;
	return for_each_string(L, key, v, net_each, &op);
}

static int
parse_net(struct loader *L, const char *key, json_t *v, void *ctx)
{
	static const struct field fields[] = {{"connect", net_connect}, {"bind", net_bind}};
	return parse_object(L, key, v, fields, ARRAY_SIZE(fields), NULL);
}

/* ---- runner ---- */

static int
runner_root(struct loader *L, const char *key, json_t *v, void *ctx)
{
	static const char *const names[] = {"mask", "surface", NULL};
	int r = want_enum(L, key, v, names);
	if (r >= 0)
		L->p->runner.root = (enum policy_root)r;
	return r < 0 ? r : 0;
}

static int
runner_network(struct loader *L, const char *key, json_t *v, void *ctx)
{
	static const char *const names[] = {"none", "host", NULL};
	int r = want_enum(L, key, v, names);
	if (r >= 0)
		L->p->runner.network = (enum policy_network)r;
	return r < 0 ? r : 0;
}

static bool
valid_env_name(const char *s, bool pattern)
{
	if (!*s)
		return false;
	for (const char *c = s; *c; c++) {
		bool ok = *c == '_' || (*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') ||
		          (c > s && *c >= '0' && *c <= '9') ||
		          (pattern && (*c == '*' || *c == '?'));
		if (!ok)
			return false;
	}
	return true;
}

struct name_list {
	const char **v;
	size_t n;
};

static int
env_name_each(struct loader *L, const char *key, const char *s, void *ctx)
{
	struct name_list *nl = ctx;
	if (!valid_env_name(s, true))
		return fail(L, key, false,
		            "\"%s\" is not a variable name or pattern ([A-Za-z_][A-Za-z0-9_]*, "
		            "with * and ?)",
		            s);
	nl->v[nl->n] = pol_strdup(L->p, s);
	return nl->v[nl->n++] ? 0 : -ENOMEM;
}

static int
name_list(struct loader *L, const char *key, json_t *v, const char *const **ret)
{
	if (want(L, key, v, JSON_ARRAY, "an array of strings") < 0)
		return -EINVAL;
	struct name_list nl = {.v = calloc(json_array_size(v) + 1, sizeof(char *))};
	if (!nl.v || pol_own(L->p, nl.v) < 0) {
		free(nl.v);
		return -ENOMEM;
	}
	*ret = nl.v;
	return for_each_string(L, key, v, env_name_each, &nl);
}

static int
env_keep(struct loader *L, const char *key, json_t *v, void *ctx)
{
	return name_list(L, key, v, &L->p->runner.env_keep);
}

static int
env_drop(struct loader *L, const char *key, json_t *v, void *ctx)
{
	return name_list(L, key, v, &L->p->runner.env_drop);
}

static int
env_set(struct loader *L, const char *key, json_t *v, void *ctx)
{
	struct policy_runner *rn = &L->p->runner;
	const char *name;
	json_t *val;
	char sub[LOC_KEY_MAX];

	if (want(L, key, v, JSON_OBJECT, "an object of strings") < 0)
		return -EINVAL;
	struct policy_env_set *set = calloc(json_object_size(v) + 1, sizeof(*set));
	if (!set || pol_own(L->p, set) < 0) {
		free(set);
		return -ENOMEM;
	}
	rn->env_set = set;
	rn->n_env_set = 0;
	json_object_foreach(v, name, val)
	{
		snprintf(sub, sizeof(sub), "%s.%s", key, name);
		if (!valid_env_name(name, false))
			return fail(L, sub, true, "\"%s\" is not a variable name", name);
		if (want(L, sub, val, JSON_STRING, "a string") < 0)
			return -EINVAL;
		set[rn->n_env_set].name = pol_strdup(L->p, name);
		set[rn->n_env_set].value = pol_strdup(L->p, json_string_value(val));
		if (!set[rn->n_env_set].name || !set[rn->n_env_set].value)
			return -ENOMEM;
		rn->n_env_set++;
	}
	return 0;
}

static int
runner_env(struct loader *L, const char *key, json_t *v, void *ctx)
{
	static const struct field fields[] = {
	    {"keep", env_keep}, {"drop", env_drop}, {"set", env_set}};
	return parse_object(L, key, v, fields, ARRAY_SIZE(fields), NULL);
}

static int
mask_each(struct loader *L, const char *key, const char *s, void *ctx)
{
	struct name_list *nl = ctx;
	char path[POLICY_PATH_MAX + 1], err[600];
	int r =
	    pol_resolve_entry(L->p, L->env, s, key, false, path, sizeof(path), err, sizeof(err));
	if (r < 0)
		return r == -ENOMEM ? r : fail(L, key, false, "%s", err);
	if (r == 0)
		return 0;
	nl->v[nl->n] = pol_strdup(L->p, path);
	return nl->v[nl->n++] ? 0 : -ENOMEM;
}

static int
runner_mask(struct loader *L, const char *key, json_t *v, void *ctx)
{
	if (want(L, key, v, JSON_ARRAY, "an array of strings") < 0)
		return -EINVAL;
	struct name_list nl = {.v = calloc(json_array_size(v) + 1, sizeof(char *))};
	if (!nl.v || pol_own(L->p, nl.v) < 0) {
		free(nl.v);
		return -ENOMEM;
	}
	L->p->runner.mask = nl.v;
	return for_each_string(L, key, v, mask_each, &nl);
}

static int
limit_pids(struct loader *L, const char *key, json_t *v, void *ctx)
{
	return want_uint(L, key, v, 4194304, &L->p->runner.pids);
}

static int
limit_memory(struct loader *L, const char *key, json_t *v, void *ctx)
{
	return want_uint(L, key, v, 1 << 30, &L->p->runner.memory_mb);
}

static int
limit_timeout(struct loader *L, const char *key, json_t *v, void *ctx)
{
	return want_uint(L, key, v, 31536000, &L->p->runner.timeout_s);
}

static int
runner_limits(struct loader *L, const char *key, json_t *v, void *ctx)
{
	static const struct field fields[] = {
	    {"pids", limit_pids}, {"memory_mb", limit_memory}, {"timeout_s", limit_timeout}};
	return parse_object(L, key, v, fields, ARRAY_SIZE(fields), NULL);
}

static int
parse_runner(struct loader *L, const char *key, json_t *v, void *ctx)
{
	static const struct field fields[] = {
	    {"root", runner_root}, {"network", runner_network}, {"env", runner_env},
	    {"mask", runner_mask}, {"limits", runner_limits},
	};
	return parse_object(L, key, v, fields, ARRAY_SIZE(fields), NULL);
}

/* ---- mounts ---- */

static int
mounts_mode(struct loader *L, const char *key, json_t *v, void *ctx)
{
	static const char *const names[] = {"additive", "exclusive", NULL};
	int r = want_enum(L, key, v, names);
	if (r >= 0)
		L->p->mounts_mode = (enum policy_mounts_mode)r;
	return r < 0 ? r : 0;
}

static int
extra_path(struct loader *L, const char *key, json_t *v, const char **ret, bool absolute)
{
	char path[POLICY_PATH_MAX + 1], err[600];

	if (want(L, key, v, JSON_STRING, "a string") < 0)
		return -EINVAL;
	const char *s = json_string_value(v);
	if (absolute && s[0] != '/' && s[0] != '~' && s[0] != '$')
		return fail(L, key, false, "\"%s\": a mount destination must be absolute", s);
	int r =
	    pol_resolve_entry(L->p, L->env, s, key, false, path, sizeof(path), err, sizeof(err));
	if (r < 0)
		return r == -ENOMEM ? r : fail(L, key, false, "%s", err);
	*ret = r ? pol_strdup(L->p, path) : NULL;
	return r && !*ret ? -ENOMEM : 0;
}

static int
extra_src(struct loader *L, const char *key, json_t *v, void *ctx)
{
	struct policy_extra_mount *m = ctx;
	int r = extra_path(L, key, v, &m->src, false);
	if (r < 0)
		return r;
	/* key lives in the caller's buffer, which the next member reuses: copy it now. */
	m->origin = origin_of(L, key, json_string_value(v));
	return own_origin(L->p, &m->origin);
}

static int
extra_dst(struct loader *L, const char *key, json_t *v, void *ctx)
{
	return extra_path(L, key, v, &((struct policy_extra_mount *)ctx)->dst, true);
}

static int
extra_mode(struct loader *L, const char *key, json_t *v, void *ctx)
{
	static const char *const names[] = {"ro", "rw", NULL};
	int r = want_enum(L, key, v, names);
	if (r >= 0)
		((struct policy_extra_mount *)ctx)->mode = r ? POLICY_MODE_RW : POLICY_MODE_RO;
	return r < 0 ? r : 0;
}

static int
mounts_extra(struct loader *L, const char *key, json_t *v, void *ctx)
{
	static const struct field fields[] = {
	    {"src", extra_src}, {"dst", extra_dst}, {"mode", extra_mode}};
	struct policy *p = L->p;
	char sub[LOC_KEY_MAX];
	size_t i;
	json_t *m;

	if (want(L, key, v, JSON_ARRAY, "an array of mounts") < 0)
		return -EINVAL;
	p->extra = calloc(json_array_size(v) + 1, sizeof(*p->extra));
	if (!p->extra)
		return -ENOMEM;
	json_array_foreach(v, i, m)
	{
		struct policy_extra_mount e = {.mode = POLICY_MODE_RO};
		snprintf(sub, sizeof(sub), "%s[%zu]", key, i);
		if (want(L, sub, m, JSON_OBJECT, "an object") < 0 ||
		    require(L, sub, m, "src") < 0 || require(L, sub, m, "dst") < 0)
			return -EINVAL;
		int r = parse_object(L, sub, m, fields, ARRAY_SIZE(fields), &e);
		if (r < 0)
			return r;
		if (!e.src || !e.dst)
			continue; /* dropped: an unset variable (noted) */
		p->extra[p->n_extra++] = e;
	}
	return 0;
}

static int
parse_mounts(struct loader *L, const char *key, json_t *v, void *ctx)
{
	static const struct field fields[] = {{"mode", mounts_mode}, {"extra", mounts_extra}};
	return parse_object(L, key, v, fields, ARRAY_SIZE(fields), NULL);
}

/* ---- audit ---- */

static int
audit_path(struct loader *L, const char *key, json_t *v, void *ctx)
{
	return extra_path(L, key, v, &L->p->audit.path, false);
}

static int
audit_level(struct loader *L, const char *key, json_t *v, void *ctx)
{
	static const char *const names[] = {"deny", "all", NULL};
	int r = want_enum(L, key, v, names);
	if (r >= 0)
		L->p->audit.level = (enum policy_audit_level)r;
	return r < 0 ? r : 0;
}

static int
parse_audit(struct loader *L, const char *key, json_t *v, void *ctx)
{
	static const struct field fields[] = {{"path", audit_path}, {"level", audit_level}};
	return parse_object(L, key, v, fields, ARRAY_SIZE(fields), NULL);
}

/* ---- the document ---- */

static int
parse_version(struct loader *L, const char *key, json_t *v, void *ctx)
{
	if (!json_is_integer(v))
		return fail(L, key, false, "expected the integer %d, got %s", POLICY_VERSION,
		            type_name(v));
	if (json_integer_value(v) != POLICY_VERSION)
		return fail(L, key, false, "unsupported version %lld (this moat reads version %d)",
		            (long long)json_integer_value(v), POLICY_VERSION);
	return 0;
}

static int
parse_document(struct loader *L, json_t *root)
{
	static const struct field fields[] = {
	    {"version", parse_version}, {"surface", parse_surface}, {"exec", parse_exec},
	    {"net", parse_net},         {"runner", parse_runner},   {"mounts", parse_mounts},
	    {"audit", parse_audit},
	};
	bool has_surface = false;

	if (!json_is_object(root))
		return fail(L, "", false, "expected an object, got %s", type_name(root));
	/* The version first: a newer file gets a version error, not unknown keys. */
	json_t *v = json_object_get(root, "version");
	if (!v)
		return fail(L, "", false, "required key \"version\" is missing");
	int r = parse_version(L, "version", v, NULL);
	if (r < 0)
		return r;
	/* The surface next, so rule order does not depend on key order. */
	json_t *s = json_object_get(root, "surface");
	if (s && (r = parse_surface(L, "surface", s, &has_surface)) < 0)
		return r;
	if (!has_surface && (r = add_cwd(L, POLICY_MODE_RW, "")) < 0)
		return r;
	const char *name;
	json_object_foreach(root, name, v)
	{
		if (strcmp(name, "surface") == 0 || strcmp(name, "version") == 0)
			continue;
		size_t i = 0;
		while (i < ARRAY_SIZE(fields) && strcmp(fields[i].name, name) != 0)
			i++;
		if (i == ARRAY_SIZE(fields))
			return unknown_key(L, name, fields, ARRAY_SIZE(fields));
		if ((r = fields[i].parse(L, name, v, NULL)) < 0)
			return r;
	}
	if (L->system && (r = builtin_add_system(L->p, L->env)) < 0)
		return r;
	if (L->tooling && (r = builtin_add_tooling(L->p, L->env)) < 0)
		return r;
	return 0;
}

static void
set_defaults(struct policy *p)
{
	p->exec_default = POLICY_EXEC_REDIRECT;
	p->runner.root = POLICY_ROOT_MASK;
	p->runner.network = POLICY_NETWORK_NONE;
	p->runner.pids = 1024;
	p->audit.level = POLICY_AUDIT_DENY;
	p->mounts_mode = POLICY_MOUNTS_ADDITIVE;
}

static void
diag_set(struct policy_diag *d, const char *source, unsigned line, unsigned col, const char *msg)
{
	snprintf(d->source, sizeof(d->source), "%s", source);
	d->line = line;
	d->col = col;
	d->key[0] = '\0';
	snprintf(d->msg, sizeof(d->msg), "%s", msg);
}

int
policy_load_string(const char *text, size_t len, const char *source_name,
                   const struct policy_env *env, struct policy **ret, struct policy_diag *diag)
{
	static const struct policy_env empty_env = {0};
	json_error_t jerr;

	if (!env)
		env = &empty_env;
	if (len > POLICY_FILE_MAX) {
		diag_set(diag, source_name, 0, 0, "policy is larger than 64 MiB");
		return -EFBIG;
	}
	if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
		diag_set(diag, source_name, 1, 1,
		         "invalid JSON: a UTF-8 byte-order mark is not allowed; save without it");
		return -EINVAL;
	}
	const char *nul = memchr(text, '\0', len);
	if (nul) {
		unsigned line = 1, col = 1;
		for (const char *c = text; c < nul; c++) {
			if (*c == '\n') {
				line++;
				col = 1;
			} else if ((*c & 0xC0) != 0x80) {
				col++;
			}
		}
		diag_set(diag, source_name, line, col, "invalid JSON: a NUL byte in the text");
		return -EINVAL;
	}
	json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		char msg[300];
		if (strstr(jerr.text, "JSON_ALLOW_NUL"))
			snprintf(msg, sizeof(msg),
			         "invalid JSON: \\u0000 (NUL) is not allowed in strings");
		else
			snprintf(msg, sizeof(msg), "invalid JSON: %s", jerr.text);
		diag_set(diag, source_name, (unsigned)(jerr.line > 0 ? jerr.line : 1),
		         (unsigned)(jerr.column > 0 ? jerr.column : 1), msg);
		return -EINVAL;
	}

	struct policy *p = calloc(1, sizeof(*p));
	int r = -ENOMEM;
	if (!p)
		goto out;
	set_defaults(p);
	p->source_name = strdup(source_name);
	p->source = malloc(len + 1);
	if (!p->source_name || !p->source)
		goto out;
	memcpy(p->source, text, len);
	p->source[len] = '\0';
	p->source_len = len;

	struct loader L = {.p = p, .env = env, .diag = diag, .system = true, .tooling = true};
	L.loc = locator_new(text, len);
	if (!L.loc)
		goto out;
	r = parse_document(&L, root);
	locator_free((struct locator *)L.loc);
	if (r == 0)
		r = compile_trie(p);
	if (r == -ENOMEM)
		diag_set(diag, source_name, 0, 0, "out of memory");
out:
	json_decref(root);
	if (r < 0) {
		if (r == -ENOMEM && !p)
			diag_set(diag, source_name, 0, 0, "out of memory");
		policy_free(p);
		return r;
	}
	*ret = p;
	return 0;
}

int
policy_load_file(const char *filename, const struct policy_env *env, struct policy **ret,
                 struct policy_diag *diag)
{
	_cleanup_close_ int fd = open(filename, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	_cleanup_free_ char *buf = NULL;
	struct stat st;
	size_t len = 0, cap = 0;

	if (fd < 0 || fstat(fd, &st) < 0) {
		int e = errno;
		diag_set(diag, filename, 0, 0, strerror(e));
		return -e;
	}
	if (S_ISDIR(st.st_mode)) {
		diag_set(diag, filename, 0, 0, "is a directory");
		return -EISDIR;
	}
	for (;;) {
		if (len == cap) {
			cap = cap ? cap * 2 : 16384;
			if (cap > POLICY_FILE_MAX + 1)
				cap = POLICY_FILE_MAX + 1;
			if (len == cap) {
				diag_set(diag, filename, 0, 0, "policy is larger than 64 MiB");
				return -EFBIG;
			}
			char *n = realloc(buf, cap);
			if (!n) {
				diag_set(diag, filename, 0, 0, "out of memory");
				return -ENOMEM;
			}
			buf = n;
		}
		ssize_t k = read(fd, buf + len, cap - len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			int e = errno;
			diag_set(diag, filename, 0, 0, strerror(e));
			return -e;
		}
		if (k == 0)
			break;
		len += (size_t)k;
	}
	return policy_load_string(buf ? buf : "", len, filename, env, ret, diag);
}

const char *
policy_default_text(void)
{
	return policy_default_json;
}

int
policy_load_default(const struct policy_env *env, struct policy **ret, struct policy_diag *diag)
{
	return policy_load_string(policy_default_json, strlen(policy_default_json), "<default>",
	                          env, ret, diag);
}

struct policy *
policy_free(struct policy *p)
{
	if (!p)
		return NULL;
	for (size_t i = 0; i < p->n_strings; i++)
		free(p->strings[i]);
	for (size_t i = 0; i < p->n_notes; i++)
		free(p->notes[i]);
	free(p->strings);
	free(p->notes);
	free(p->rules);
	free(p->nodes);
	free(p->names);
	free(p->globs);
	free(p->exec_rules);
	free(p->net_rules);
	free(p->extra);
	free(p->source);
	free(p->source_name);
	free(p);
	return NULL;
}

const char *
policy_source(const struct policy *p, size_t *ret_len)
{
	if (ret_len)
		*ret_len = p->source_len;
	return p->source;
}

const char *
policy_source_name(const struct policy *p)
{
	return p->source_name;
}

size_t
policy_rules(const struct policy *p, const struct policy_rule **ret)
{
	*ret = p->rules;
	return p->n_rules;
}

size_t
policy_notes(const struct policy *p, const char *const **ret)
{
	*ret = (const char *const *)p->notes;
	return p->n_notes;
}

const struct policy_runner *
policy_runner(const struct policy *p)
{
	return &p->runner;
}

const struct policy_audit *
policy_audit(const struct policy *p)
{
	return &p->audit;
}

/* SPDX-License-Identifier: MIT */
/* Internals of the policy module, shared by its files and nobody else. */
#ifndef MOAT_POLICY_PRIVATE_H
#define MOAT_POLICY_PRIVATE_H

#include <stdarg.h>
#include <stdint.h>

#include "moat/macro.h"
#include "moat/policy.h"

/* The longest canonical path the matcher accepts, NUL excluded (the kernel's d_path limit). */
#define POLICY_PATH_MAX 4095
/* The longest key path ("surface.write[2]") the loader and the locator keep. */
#define LOC_KEY_MAX 1024
/* A canonical path of POLICY_PATH_MAX bytes has at most this many components. */
#define POLICY_COMPONENTS_MAX 2048

/* A component of a path being matched: an offset and a length into it. */
struct comp {
	uint16_t off, len;
};

/*
 * One component of a compiled deny glob. Most deny patterns are "**" followed by
 * an exact name, a prefix ("*.pem" is a suffix test, ".env.*" a prefix test), so
 * those get a length check and one memcmp instead of the wildcard matcher.
 */
enum glob_comp_kind {
	GC_EXACT,   /* no wildcard */
	GC_PREFIX,  /* "lit*" */
	GC_SUFFIX,  /* "*lit" */
	GC_ANY,     /* "*" */
	GC_DSTAR,   /* "**": any number of components */
	GC_GENERAL, /* anything else: the wildcard matcher */
	GC_KIND_MAX,
};

struct glob_comp {
	const char *pat; /* the component pattern, NUL-terminated */
	const char *lit; /* the literal part, for EXACT, PREFIX, SUFFIX */
	uint16_t lit_len;
	uint8_t kind;
};

/* A deny glob: the components after the literal prefix its trie node holds. */
struct glob {
	uint32_t rule; /* index into policy.rules */
	uint32_t n_comps;
	const struct glob_comp *comps;
};

/*
 * The compiled trie, flat and read-only. Node 0 is "/". The children of a node are
 * nodes[first_child .. first_child + n_children), sorted by (hash, len, bytes).
 */
struct trie_node {
	uint32_t hash;
	uint32_t name_off, name_len; /* into policy.names */
	uint32_t first_child, n_children;
	int32_t rule;                 /* the entry ending here that decides the mode, or -1 */
	int32_t readable_desc;        /* a readable entry at or below, or -1 */
	uint32_t glob_first, n_globs; /* into policy.globs */
	uint8_t mode;                 /* valid when rule >= 0 */
	uint8_t private_;
};

struct policy {
	char *source_name;
	char *source;
	size_t source_len;

	struct policy_rule *rules;
	size_t n_rules, cap_rules;

	char **notes;
	size_t n_notes, cap_notes;

	struct trie_node *nodes;
	size_t n_nodes;
	char *names;
	struct glob *globs;
	size_t n_globs;

	enum policy_exec_action exec_default;
	struct policy_exec_rule *exec_rules;
	size_t n_exec_rules;

	struct policy_net_rule *net_rules;
	size_t n_net_rules, cap_net_rules;

	struct policy_runner runner;
	struct policy_audit audit;

	enum policy_mounts_mode mounts_mode;
	struct policy_extra_mount {
		const char *src, *dst;
		enum policy_mode mode;
		struct policy_origin origin;
	} * extra;
	size_t n_extra;

	/* Every string the structures above point to, freed with the policy. */
	char **strings;
	size_t n_strings, cap_strings;
};

/* Strings owned by the policy. These return NULL on allocation failure. */
char *pol_strdup(struct policy *p, const char *s);
char *pol_strndup(struct policy *p, const char *s, size_t n);
int pol_own(struct policy *p, void *ptr);

/* Appends a rule (strings are copied into the policy). */
int pol_add_rule(struct policy *p, enum policy_kind kind, enum policy_mode mode, bool glob,
                 const char *path, const struct policy_origin *origin);
/* pol_add_rule(), and again under the canonical name env->resolve gives, if it differs. */
int pol_add_rule_resolved(struct policy *p, const struct policy_env *env, enum policy_kind kind,
                          enum policy_mode mode, const char *path, const struct policy_origin *o);
int pol_add_note(struct policy *p, const char *fmt, ...) _printf_(2, 3);

/*
 * Expands, joins to the cwd and normalises one path entry. Returns the length,
 * 0 when the entry is dropped (a note was added), or a negative errno with
 * diag->msg set. allow_glob: keep "*", "?" and a leading "**" (deny entries).
 */
int pol_resolve_entry(struct policy *p, const struct policy_env *env, const char *text,
                      const char *key, bool allow_glob, char *out, size_t size, char *errbuf,
                      size_t errsize);

/* The built-in system and tooling sets. */
int builtin_add_system(struct policy *p, const struct policy_env *env);
int builtin_add_tooling(struct policy *p, const struct policy_env *env);

/* Builds the trie and the glob table from p->rules. */
int compile_trie(struct policy *p);

/* Glob helpers. */
bool glob_has_magic(const char *s);
bool glob_match_component(const char *pat, const char *s, size_t len);
/* Matches a whole path against a pattern; subtree: a match of an ancestor counts. */
bool glob_match_path(const char *pattern, const char *path, bool subtree);
uint32_t policy_component_hash(const char *s, size_t len);
/* Splits a pattern into compiled components (owned by p). */
int glob_compile(struct policy *p, const char *pattern, struct glob_comp **ret, size_t *ret_n);
/*
 * Matches compiled pattern components (each a pattern, or "**") against path
 * components; subtree: a match of an ancestor counts.
 */
bool glob_match_compiled(const struct glob_comp *pat, size_t n_pat, const char *path,
                         const struct comp *c, size_t n, bool subtree);

/* Splits a canonical absolute path. Returns the component count, or -1 if not canonical. */
int path_split(const char *path, size_t len, struct comp *c, size_t max);

/* Exec and net sections; the loader hands them their JSON. */
struct json_t;
const char *env_lookup(char *const *envp, const char *name, size_t len);

/* Position lookup: where the value (or key) at a key path starts. */
struct locator;
struct locator *locator_new(const char *text, size_t len);
struct locator *locator_free(struct locator *l);
void locator_find(const struct locator *l, const char *key, bool want_key, unsigned *line,
                  unsigned *col);

/* Network rule text to rules (one text can make two: "localhost" is v4 and v6). */
int net_parse(struct policy *p, enum policy_net_op op, const char *text,
              const struct policy_origin *origin, const struct policy_env *env, char *errbuf,
              size_t errsize);

#endif

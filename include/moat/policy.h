/* SPDX-License-Identifier: MIT */
/*
 * The surface model: policy files, their expansion and validation, the compiled
 * path matcher, exec and network rules, and the mount export.
 *
 * This module is pure. It reads the operator's policy file and nothing else: it
 * never acts for a target, never logs, and its matcher allocates nothing and makes
 * no system call. Functions that can fail return 0 or a negative errno; on failure
 * they fill the caller's struct policy_diag and leave every ret_* untouched.
 */
#ifndef MOAT_POLICY_H
#define MOAT_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#define POLICY_VERSION 1

/* The four accesses a path is checked for. */
enum policy_access {
	POLICY_READ,  /* open for reading, list a directory */
	POLICY_WRITE, /* open for writing, every mutation */
	POLICY_EXEC,  /* execve of the file */
	POLICY_STAT,  /* the stat family, access, readlink, O_PATH, chdir */
	POLICY_ACCESS_MAX,
};

enum policy_mode {
	POLICY_MODE_NONE,
	POLICY_MODE_RO,
	POLICY_MODE_RW,
	POLICY_MODE_MAX,
};

/* Where a surface entry comes from: the key it was written under. */
enum policy_kind {
	POLICY_KIND_CWD,
	POLICY_KIND_WRITE,
	POLICY_KIND_READ,
	POLICY_KIND_PRIVATE,
	POLICY_KIND_DENY,
	POLICY_KIND_SYSTEM,
	POLICY_KIND_TOOLING,
	POLICY_KIND_MAX,
};

/* Where a rule was written. Built-in entries name "<builtin:system>" and friends. */
struct policy_origin {
	const char *source; /* the policy file, "<default>", "<builtin:…>" */
	const char *key;    /* key path: "surface.write[2]" */
	const char *text;   /* the entry as written, before expansion */
	unsigned line, col; /* 1-based; 0 for built-in entries */
};

/* One surface entry after expansion and normalisation. */
struct policy_rule {
	enum policy_kind kind;
	enum policy_mode mode; /* none for deny; rw for private (for the agent) */
	bool glob;             /* a deny glob: wins over every allow */
	bool private_;         /* hidden from tasks */
	const char *path;      /* absolute, normalised; a pattern when glob */
	struct policy_origin origin;
};

/* The answer of policy_match(). */
struct policy_verdict {
	bool allow;
	int err;                        /* 0, or the errno a denial becomes */
	enum policy_mode mode;          /* the mode the deciding rule gives */
	bool ancestor;                  /* stat allowed as an ancestor of a readable entry */
	bool private_;                  /* inside a private entry: hidden from tasks */
	const struct policy_rule *rule; /* the deciding rule; NULL when nothing matched */
};

/* An error in a policy: where, under which key, and what was expected. */
struct policy_diag {
	char source[512];
	unsigned line, col; /* 0 when the error has no position (a file that cannot be read) */
	char key[256];      /* "" when the error is about the whole document */
	char msg[512];
};

/* What loading needs to know about the session. */
struct policy_env {
	const char *cwd;      /* absolute and canonical: the session's working directory */
	char *const *environ; /* NULL-terminated "NAME=value" list; NULL means empty */
	/*
	 * Optional. Writes the canonical form (symlinks resolved) of an existing path
	 * and returns 0, or returns a negative errno. Entries are matched against the
	 * objects they name, so an entry written through a symlink also covers its
	 * target. NULL: entries are used as written.
	 */
	int (*resolve)(const char *path, char *out, size_t size, void *userdata);
	void *userdata;
};

struct policy;

/* Loading. source_name is what errors and origins call the text. */
int policy_load_string(const char *text, size_t len, const char *source_name,
                       const struct policy_env *env, struct policy **ret, struct policy_diag *diag);
int policy_load_file(const char *filename, const struct policy_env *env, struct policy **ret,
                     struct policy_diag *diag);
int policy_load_default(const struct policy_env *env, struct policy **ret,
                        struct policy_diag *diag);
struct policy *policy_free(struct policy *p);

/* The embedded default policy, as JSON text. */
const char *policy_default_text(void);

/* The source text the policy was loaded from (for hashing into the audit log). */
const char *policy_source(const struct policy *p, size_t *ret_len);
const char *policy_source_name(const struct policy *p);

/*
 * The hot path. path must be absolute and canonical (no ".", "..", "//"); anything
 * else is denied. Longest matching prefix decides the mode, whole components only;
 * at an equal path the most restrictive entry wins; deny globs win over everything;
 * stat is allowed on ancestors of readable entries; nothing matched is denied.
 * No allocation, no system call.
 */
void policy_match(const struct policy *p, const char *path, size_t len, enum policy_access access,
                  struct policy_verdict *ret);

/* The errno a denied access becomes: ENOENT for stat, EACCES otherwise. */
int policy_denial_errno(enum policy_access access);

/* Every surface entry, in the order they were loaded (built-in sets last). */
size_t policy_rules(const struct policy *p, const struct policy_rule **ret);

/* Entries dropped at load (an unset variable, say), one human-readable line each. */
size_t policy_notes(const struct policy *p, const char *const **ret);

/* ---- exec rules ---- */

enum policy_exec_action {
	POLICY_EXEC_REDIRECT, /* run by the runner */
	POLICY_EXEC_ALLOW,    /* run in place, under the filter */
	POLICY_EXEC_DENY,     /* EACCES */
	POLICY_EXEC_ACTION_MAX,
};

struct policy_exec_rule {
	const char *path;        /* canonical binary path (may be a glob) */
	const char *const *argv; /* NULL-terminated patterns, matched as an ordered subsequence */
	size_t argc;
	enum policy_exec_action action;
	struct policy_origin origin;
};

/*
 * Decide an exec of the canonical binary path with argv (NULL-terminated;
 * argv[0] is not matched). A matching deny rule wins; otherwise the first matching
 * rule in file order; otherwise exec.default (ret_rule NULL).
 */
enum policy_exec_action policy_exec_decide(const struct policy *p, const char *path,
                                           const char *const *argv,
                                           const struct policy_exec_rule **ret_rule);
enum policy_exec_action policy_exec_default(const struct policy *p);
size_t policy_exec_rules(const struct policy *p, const struct policy_exec_rule **ret);

/* ---- network rules ---- */

enum policy_net_op {
	POLICY_NET_CONNECT,
	POLICY_NET_BIND,
	POLICY_NET_OP_MAX,
};

enum policy_net_proto {
	POLICY_NET_TCP,
	POLICY_NET_UDP,
	POLICY_NET_UNIX,
	POLICY_NET_PROTO_MAX,
};

struct policy_net_rule {
	enum policy_net_op op;
	enum policy_net_proto proto;
	int family;       /* AF_INET, AF_INET6, or AF_UNSPEC for any host */
	uint8_t addr[16]; /* network address, host bytes masked to prefix */
	unsigned prefix;  /* bits */
	uint16_t port_lo, port_hi;
	const char *unix_path; /* for unix: normalised path, or "@name" for abstract */
	struct policy_origin origin;
};

/*
 * Decide a connect/bind/sendto to the address sa. proto follows the socket type
 * (SOCK_STREAM tcp, SOCK_DGRAM udp; AF_UNIX any type). Returns true when a rule
 * allows it; default deny. IPv4-mapped IPv6 addresses match IPv4 rules.
 */
bool policy_net_decide(const struct policy *p, enum policy_net_op op, int socktype,
                       const struct sockaddr *sa, socklen_t salen,
                       const struct policy_net_rule **ret_rule);
size_t policy_net_rules(const struct policy *p, const struct policy_net_rule **ret);

/* ---- runner, mounts, audit sections ---- */

enum policy_root {
	POLICY_ROOT_MASK,
	POLICY_ROOT_SURFACE,
	POLICY_ROOT_MAX,
};

enum policy_network {
	POLICY_NETWORK_NONE,
	POLICY_NETWORK_HOST,
	POLICY_NETWORK_MAX,
};

struct policy_env_set {
	const char *name, *value;
};

struct policy_runner {
	enum policy_root root;
	enum policy_network network;
	const char *const *env_keep; /* NULL-terminated name patterns */
	const char *const *env_drop; /* NULL-terminated name patterns, added to the built-in list */
	const struct policy_env_set *env_set;
	size_t n_env_set;
	const char *const *mask; /* NULL-terminated normalised paths */
	unsigned pids;           /* 0: no limit */
	unsigned memory_mb;      /* 0: no limit */
	unsigned timeout_s;      /* 0: no limit */
};

const struct policy_runner *policy_runner(const struct policy *p);

/* Environment names tasks never see unless runner.env.keep names them. */
const char *const *policy_env_drop_builtin(void);

enum policy_audit_level {
	POLICY_AUDIT_DENY,
	POLICY_AUDIT_ALL,
	POLICY_AUDIT_LEVEL_MAX,
};

struct policy_audit {
	const char *path; /* NULL: no audit file unless the command line names one */
	enum policy_audit_level level;
};

const struct policy_audit *policy_audit(const struct policy *p);

/* ---- mount export ---- */

enum policy_mounts_mode {
	POLICY_MOUNTS_ADDITIVE,
	POLICY_MOUNTS_EXCLUSIVE,
	POLICY_MOUNTS_MODE_MAX,
};

enum policy_mount_type {
	POLICY_MOUNT_BIND_RO,
	POLICY_MOUNT_BIND_RW,
	POLICY_MOUNT_MASK_DIR,  /* an empty read-only tmpfs over a denied directory */
	POLICY_MOUNT_MASK_FILE, /* /dev/null over a denied file */
	POLICY_MOUNT_TYPE_MAX,
};

struct policy_mount {
	enum policy_mount_type type;
	const char *src, *dst;
	const struct policy_origin *origin;
};

enum policy_mount_note_kind {
	POLICY_NOTE_MISSING, /* source does not exist: left out */
	POLICY_NOTE_DROPPED, /* operator mount dropped (exclusive mode, or a conflict) */
	POLICY_NOTE_GLOB,    /* a deny glob a mount list cannot express */
	POLICY_NOTE_KIND_MAX,
};

struct policy_mount_note {
	enum policy_mount_note_kind kind;
	const char *path;
	const char *why;
	const struct policy_origin *origin;
};

struct policy_mount_set {
	struct policy_mount *mounts;
	size_t n_mounts;
	struct policy_mount_note *notes;
	size_t n_notes;
};

/* What a path is on the host, as the probe callback of policy_mounts_build() says. */
enum policy_probe {
	POLICY_PROBE_MISSING,
	POLICY_PROBE_FILE,
	POLICY_PROBE_DIR,
};

/*
 * The surface as a list of mounts for a task's root: rw binds for rw entries, ro
 * binds for the rest of the readable set (private entries excluded), masks over
 * denied and private entries that lie under a bind, sorted by destination, with
 * mounts.extra composed by mounts.mode. probe says what exists.
 */
int policy_mounts_build(const struct policy *p,
                        enum policy_probe (*probe)(const char *path, void *userdata),
                        void *userdata, struct policy_mount_set **ret);
struct policy_mount_set *policy_mounts_free(struct policy_mount_set *s);

enum policy_mount_format {
	POLICY_FORMAT_BWRAP,
	POLICY_FORMAT_DOCKER,
	POLICY_FORMAT_OCI,
	POLICY_FORMAT_MAX,
};

int policy_mount_format_parse(const char *s, enum policy_mount_format *ret);
/* Writes the mounts in a format, one argument group per line (OCI: a JSON array). */
int policy_mounts_write(const struct policy_mount_set *s, enum policy_mount_format fmt, FILE *out);

/* ---- names ---- */

const char *policy_access_to_string(enum policy_access a);
int policy_access_from_string(const char *s, enum policy_access *ret);
const char *policy_mode_to_string(enum policy_mode m);
const char *policy_kind_to_string(enum policy_kind k);
const char *policy_exec_action_to_string(enum policy_exec_action a);
const char *policy_mount_note_kind_to_string(enum policy_mount_note_kind k);

/* ---- path helpers (pure, exported for the supervisor and the tests) ---- */

/*
 * Lexical normalisation: joins a relative path to base (absolute), removes ".",
 * empty components and trailing '/', and folds ".." (never above "/"). Returns the
 * length written, or -ENAMETOOLONG / -EINVAL (path empty, base not absolute).
 */
int policy_path_normalize(const char *base, const char *path, char *out, size_t size);

/*
 * Expands "~", "~/…", "$NAME" and "${NAME}" from envp. Returns the length
 * written; 0 when a variable is unset or empty (the entry is to be dropped; the
 * variable's name is written to ret_unset when not NULL); -EINVAL for malformed
 * syntax or "~user" (a message goes to err), -ENAMETOOLONG.
 */
int policy_path_expand(const char *in, char *const *envp, char *out, size_t size, char *ret_unset,
                       size_t unset_size, const char **err);

/* Glob match of a normalised path against a pattern of "*", "?" and "**" components. */
bool policy_glob_match(const char *pattern, const char *path);

#endif

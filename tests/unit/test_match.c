/* SPDX-License-Identifier: MIT */
/*
 * policy_match(), table-driven: each row is a policy, a path and an access, and the
 * verdict expected: allow, errno, the kind and path of the deciding rule (or none),
 * the ancestor flag and the private flag. Most policies switch the built-in sets off
 * so that a verdict depends only on the entries written; a few rows use the default.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "moat/macro.h"
#include "moat/policy.h"

#define CWD "/home/u/repo"

static char *const test_environ[] = {
    "HOME=/home/u", "PROJ=/work/proj", "EMPTY=", "PATH=/usr/bin:/bin", "LANG=C.UTF-8", NULL,
};

static const struct policy_env test_env = {.cwd = CWD, .environ = test_environ};

enum pol {
	P_CORE,
	P_HOME,
	P_EQUAL,
	P_EQUAL2,
	P_LONGEST,
	P_GLOB,
	P_CWD_RO,
	P_CWD_NONE,
	P_VARS,
	P_ROOT,
	P_DEFAULT,
	P_MAX,
};

#define OFF "\"system\": false, \"tooling\": false"

static const char *const policy_texts[P_MAX] = {
    [P_CORE] = "{\"version\": 1, \"surface\": {" OFF ",\n"
               "  \"write\": [\"~/out\", \"/srv/data\"],\n"
               "  \"read\": [\"/usr\", \"./vendor\", \"/srv/data/ro\", \"/opt/tools/bin\",\n"
               "            \"~/notes\"],\n"
               "  \"deny\": [\"~/repo/secrets\", \"**/.env\", \"**/*.pem\",\n"
               "            \"/srv/data/ro/hidden\", \"/srv/data/*.tmp\"],\n"
               "  \"private\": [\"~/.claude\"]}}",
    /* Allow inside deny: write ["~/repo"] re-opens a subtree of deny ["~"]. */
    [P_HOME] = "{\"version\": 1, \"surface\": {" OFF ", \"cwd\": \"none\",\n"
               "  \"deny\": [\"~\"], \"write\": [\"~/repo\"]}}",
    /* Equal paths: the most restrictive entry decides, private sticks. */
    [P_EQUAL] = "{\"version\": 1, \"surface\": {" OFF ", \"cwd\": \"none\",\n"
                "  \"write\": [\"/a\", \"/b\", \"/c\"], \"read\": [\"/a\", \"/d\"],\n"
                "  \"deny\": [\"/b\"], \"private\": [\"/c\", \"/d\"]}}",
    /* The same, written in the other order. */
    [P_EQUAL2] = "{\"version\": 1, \"surface\": {" OFF ", \"cwd\": \"none\",\n"
                 "  \"deny\": [\"/b\"], \"read\": [\"/a\"], \"write\": [\"/a\", \"/b\"]}}",
    [P_LONGEST] = "{\"version\": 1, \"surface\": {" OFF ", \"cwd\": \"none\",\n"
                  "  \"read\": [\"/p\", \"/p/q/r\"], \"write\": [\"/p/q\"],\n"
                  "  \"deny\": [\"/p/q/r/s\"]}}",
    [P_GLOB] = "{\"version\": 1, \"surface\": {" OFF ",\n"
               "  \"write\": [\"~/repo/keys\"],\n"
               "  \"read\": [\"~/.config\", \"~/repo/.env/public\", \"/srv/a/cache/pub\"],\n"
               "  \"deny\": [\"**/.env\", \"~/repo/*.key\", \"~/.config/*/credentials*\",\n"
               "            \"/srv/**/cache\"]}}",
    [P_CWD_RO] = "{\"version\": 1, \"surface\": {" OFF ", \"cwd\": \"ro\",\n"
                 "  \"write\": [\"./build\"]}}",
    [P_CWD_NONE] = "{\"version\": 1, \"surface\": {" OFF ", \"cwd\": \"none\",\n"
                   "  \"read\": [\"./vendor\"]}}",
    [P_VARS] = "{\"version\": 1, \"surface\": {" OFF ", \"cwd\": \"none\",\n"
               "  \"read\": [\"$NOPE/x\", \"${HOME}/docs\", \"$PROJ/src\"],\n"
               "  \"write\": [\"$EMPTY/y\", \"$PROJ/out\"]}}",
    [P_ROOT] = "{\"version\": 1, \"surface\": {" OFF ", \"cwd\": \"none\",\n"
               "  \"read\": [\"/\"], \"deny\": [\"/proc\"]}}",
    [P_DEFAULT] = NULL, /* policy_load_default() */
};

static struct policy *policies[P_MAX];

#define R POLICY_READ
#define W POLICY_WRITE
#define X POLICY_EXEC
#define S POLICY_STAT

/* Expected kinds, and two that are not kinds. */
#define K_CWD     POLICY_KIND_CWD
#define K_WRITE   POLICY_KIND_WRITE
#define K_READ    POLICY_KIND_READ
#define K_PRIVATE POLICY_KIND_PRIVATE
#define K_DENY    POLICY_KIND_DENY
#define K_SYSTEM  POLICY_KIND_SYSTEM
#define K_TOOLING POLICY_KIND_TOOLING
#define K_NONE    (-1) /* no rule */
#define K_ANY     (-2) /* some rule: which one depends on the trie's order */

#define ALLOW true
#define DENY  false
#define ANC   true /* allowed as an ancestor */
#define PRIV  true /* private */
#define EACC  EACCES
#define ENOE  ENOENT

struct match_case {
	enum pol pol;
	const char *path;
	enum policy_access access;
	bool allow;
	int err;
	int kind;
	const char *rule; /* the deciding rule's path; NULL: not checked */
	bool ancestor;
	bool private_;
};

/* clang-format off */
static const struct match_case match_cases[] = {
    /* The cwd entry: rw by default, every access. */
    {P_CORE, "/home/u/repo/src/main.c", R, ALLOW, 0, K_CWD, CWD, 0, 0},
    {P_CORE, "/home/u/repo/src/main.c", W, ALLOW, 0, K_CWD, CWD, 0, 0},
    {P_CORE, "/home/u/repo/src/main.c", X, ALLOW, 0, K_CWD, CWD, 0, 0},
    {P_CORE, "/home/u/repo/src/main.c", S, ALLOW, 0, K_CWD, CWD, 0, 0},
    {P_CORE, "/home/u/repo", W, ALLOW, 0, K_CWD, CWD, 0, 0},
    /* A relative entry is joined to the cwd: read inside rw. */
    {P_CORE, "/home/u/repo/vendor/lib.c", R, ALLOW, 0, K_READ, CWD "/vendor", 0, 0},
    {P_CORE, "/home/u/repo/vendor/lib.c", W, DENY, EACC, K_READ, CWD "/vendor", 0, 0},
    {P_CORE, "/home/u/repo/vendor/bin", X, ALLOW, 0, K_READ, CWD "/vendor", 0, 0},
    {P_CORE, "/home/u/repo/vendor/lib.c", S, ALLOW, 0, K_READ, CWD "/vendor", 0, 0},
    {P_CORE, "/home/u/repo/vendor", W, DENY, EACC, K_READ, CWD "/vendor", 0, 0},
    /* Deny inside allow; whole components only. */
    {P_CORE, "/home/u/repo/secrets/key", R, DENY, EACC, K_DENY, CWD "/secrets", 0, 0},
    {P_CORE, "/home/u/repo/secrets", W, DENY, EACC, K_DENY, CWD "/secrets", 0, 0},
    {P_CORE, "/home/u/repo/secrets/run", X, DENY, EACC, K_DENY, CWD "/secrets", 0, 0},
    {P_CORE, "/home/u/repo/secrets", S, DENY, ENOE, K_DENY, CWD "/secrets", 0, 0},
    {P_CORE, "/home/u/repo/secrets/a/b", S, DENY, ENOE, K_DENY, CWD "/secrets", 0, 0},
    {P_CORE, "/home/u/repo/secretsx", W, ALLOW, 0, K_CWD, CWD, 0, 0},
    {P_CORE, "/home/u/repo/secret", W, ALLOW, 0, K_CWD, CWD, 0, 0},
    /* Deny globs: anywhere, over a longer allow, and the subtree below a match. */
    {P_CORE, "/home/u/repo/.env", R, DENY, EACC, K_DENY, "/**/.env", 0, 0},
    {P_CORE, "/home/u/repo/vendor/.env", R, DENY, EACC, K_DENY, "/**/.env", 0, 0},
    {P_CORE, "/home/u/out/build/.env", W, DENY, EACC, K_DENY, "/**/.env", 0, 0},
    {P_CORE, "/home/u/out/x.pem/y", W, DENY, EACC, K_DENY, "/**/*.pem", 0, 0},
    {P_CORE, "/home/u/out/cert.pem", S, DENY, ENOE, K_DENY, "/**/*.pem", 0, 0},
    {P_CORE, "/usr/lib/ssl/cert.pem", R, DENY, EACC, K_DENY, "/**/*.pem", 0, 0},
    {P_CORE, "/home/u/repo/.envrc", R, ALLOW, 0, K_CWD, CWD, 0, 0},
    {P_CORE, "/home/u/out/a/b", W, ALLOW, 0, K_WRITE, "/home/u/out", 0, 0},
    {P_CORE, "/home/u/outside", R, DENY, EACC, K_NONE, NULL, 0, 0},
    /* Longest prefix wins: ro inside rw, deny inside ro, a literal-prefix glob. */
    {P_CORE, "/srv/data/f", W, ALLOW, 0, K_WRITE, "/srv/data", 0, 0},
    {P_CORE, "/srv/data/ro/f", W, DENY, EACC, K_READ, "/srv/data/ro", 0, 0},
    {P_CORE, "/srv/data/ro/f", R, ALLOW, 0, K_READ, "/srv/data/ro", 0, 0},
    {P_CORE, "/srv/data/ro/hidden/f", R, DENY, EACC, K_DENY, "/srv/data/ro/hidden", 0, 0},
    {P_CORE, "/srv/data/ro/hidden", S, DENY, ENOE, K_DENY, "/srv/data/ro/hidden", 0, 0},
    {P_CORE, "/srv/data/x.tmp", W, DENY, EACC, K_DENY, "/srv/data/*.tmp", 0, 0},
    {P_CORE, "/srv/data/sub/x.tmp", W, ALLOW, 0, K_WRITE, "/srv/data", 0, 0},
    /* Stat on the ancestors of readable entries, and nothing else there. */
    {P_CORE, "/srv", S, ALLOW, 0, K_WRITE, "/srv/data", ANC, 0},
    {P_CORE, "/srv", R, DENY, EACC, K_NONE, NULL, 0, 0},
    {P_CORE, "/srv/other", S, DENY, ENOE, K_NONE, NULL, 0, 0},
    {P_CORE, "/opt", S, ALLOW, 0, K_READ, "/opt/tools/bin", ANC, 0},
    {P_CORE, "/opt/tools", S, ALLOW, 0, K_READ, "/opt/tools/bin", ANC, 0},
    {P_CORE, "/opt/tools", X, DENY, EACC, K_NONE, NULL, 0, 0},
    {P_CORE, "/opt/tools/lib", S, DENY, ENOE, K_NONE, NULL, 0, 0},
    {P_CORE, "/opt/tools/bin/t", X, ALLOW, 0, K_READ, "/opt/tools/bin", 0, 0},
    {P_CORE, "/home/u", S, ALLOW, 0, K_ANY, NULL, ANC, 0},
    {P_CORE, "/", S, ALLOW, 0, K_ANY, NULL, ANC, 0},
    {P_CORE, "/", R, DENY, EACC, K_NONE, NULL, 0, 0},
    /* Read vs write vs exec vs stat on ro. */
    {P_CORE, "/usr/bin/cc", X, ALLOW, 0, K_READ, "/usr", 0, 0},
    {P_CORE, "/usr/bin/cc", R, ALLOW, 0, K_READ, "/usr", 0, 0},
    {P_CORE, "/usr/bin/cc", S, ALLOW, 0, K_READ, "/usr", 0, 0},
    {P_CORE, "/usr/bin/cc", W, DENY, EACC, K_READ, "/usr", 0, 0},
    {P_CORE, "/usr", W, DENY, EACC, K_READ, "/usr", 0, 0},
    {P_CORE, "/usrx", R, DENY, EACC, K_NONE, NULL, 0, 0},
    /* Private: allowed for the agent, flagged. */
    {P_CORE, "/home/u/.claude/settings.json", R, ALLOW, 0, K_PRIVATE, "/home/u/.claude", 0, PRIV},
    {P_CORE, "/home/u/.claude/settings.json", W, ALLOW, 0, K_PRIVATE, "/home/u/.claude", 0, PRIV},
    {P_CORE, "/home/u/.claude", S, ALLOW, 0, K_PRIVATE, "/home/u/.claude", 0, PRIV},
    {P_CORE, "/home/u/.claudex", R, DENY, EACC, K_NONE, NULL, 0, 0},
    /* "~" expansion. */
    {P_CORE, "/home/u/notes/todo", R, ALLOW, 0, K_READ, "/home/u/notes", 0, 0},
    /* Nothing matched: denied, exists or not. */
    {P_CORE, "/home/u/.ssh/id_rsa", R, DENY, EACC, K_NONE, NULL, 0, 0},
    {P_CORE, "/home/u/.ssh/id_rsa", S, DENY, ENOE, K_NONE, NULL, 0, 0},
    {P_CORE, "/etc/passwd", R, DENY, EACC, K_NONE, NULL, 0, 0},
    {P_CORE, "/etc/passwd", S, DENY, ENOE, K_NONE, NULL, 0, 0},
    {P_CORE, "/nonexistent/moat/x", R, DENY, EACC, K_NONE, NULL, 0, 0},
    {P_CORE, "/nonexistent/moat/x", X, DENY, EACC, K_NONE, NULL, 0, 0},
    {P_CORE, "/nonexistent/moat/x", S, DENY, ENOE, K_NONE, NULL, 0, 0},
    /* Not canonical: denied, whatever the rules say. */
    {P_CORE, "/home/u/repo/../repo/x", R, DENY, EACC, K_NONE, NULL, 0, 0},
    {P_CORE, "/home/u/repo/./x", W, DENY, EACC, K_NONE, NULL, 0, 0},
    {P_CORE, "/home/u/repo//x", R, DENY, EACC, K_NONE, NULL, 0, 0},
    {P_CORE, "/home/u/repo/x/", W, DENY, EACC, K_NONE, NULL, 0, 0},
    {P_CORE, "/home/u/repo/", S, DENY, ENOE, K_NONE, NULL, 0, 0},
    {P_CORE, "/home/u/repo/.", S, DENY, ENOE, K_NONE, NULL, 0, 0},
    {P_CORE, "/home/u/repo/..", S, DENY, ENOE, K_NONE, NULL, 0, 0},
    {P_CORE, "//home/u/repo/x", R, DENY, EACC, K_NONE, NULL, 0, 0},
    {P_CORE, "home/u/repo/x", R, DENY, EACC, K_NONE, NULL, 0, 0},
    {P_CORE, "relative", X, DENY, EACC, K_NONE, NULL, 0, 0},
    {P_CORE, "", R, DENY, EACC, K_NONE, NULL, 0, 0},
    {P_CORE, "", S, DENY, ENOE, K_NONE, NULL, 0, 0},
    {P_CORE, "/.", S, DENY, ENOE, K_NONE, NULL, 0, 0},
    {P_CORE, "//", S, DENY, ENOE, K_NONE, NULL, 0, 0},

    /* Allow inside deny. */
    {P_HOME, "/home/u/repo/x", W, ALLOW, 0, K_WRITE, CWD, 0, 0},
    {P_HOME, "/home/u/repo", R, ALLOW, 0, K_WRITE, CWD, 0, 0},
    {P_HOME, "/home/u/other", R, DENY, EACC, K_DENY, "/home/u", 0, 0},
    {P_HOME, "/home/u/other", S, DENY, ENOE, K_DENY, "/home/u", 0, 0},
    {P_HOME, "/home/u", R, DENY, EACC, K_DENY, "/home/u", 0, 0},
    {P_HOME, "/home/u", W, DENY, EACC, K_DENY, "/home/u", 0, 0},
    {P_HOME, "/home/u", S, ALLOW, 0, K_WRITE, CWD, ANC, 0},
    {P_HOME, "/home", S, ALLOW, 0, K_WRITE, CWD, ANC, 0},
    {P_HOME, "/", S, ALLOW, 0, K_WRITE, CWD, ANC, 0},
    {P_HOME, "/home", R, DENY, EACC, K_NONE, NULL, 0, 0},
    {P_HOME, "/home/u/repo2", W, DENY, EACC, K_DENY, "/home/u", 0, 0},
    {P_HOME, "/home/u/repo2", S, DENY, ENOE, K_DENY, "/home/u", 0, 0},
    {P_HOME, "/home/v", S, DENY, ENOE, K_NONE, NULL, 0, 0},

    /* Equal paths: the most restrictive wins, whatever the order; private sticks. */
    {P_EQUAL, "/a/x", R, ALLOW, 0, K_READ, "/a", 0, 0},
    {P_EQUAL, "/a/x", W, DENY, EACC, K_READ, "/a", 0, 0},
    {P_EQUAL, "/b/x", R, DENY, EACC, K_DENY, "/b", 0, 0},
    {P_EQUAL, "/b", S, DENY, ENOE, K_DENY, "/b", 0, 0},
    {P_EQUAL, "/c/x", W, ALLOW, 0, K_WRITE, "/c", 0, PRIV},
    {P_EQUAL, "/d/x", R, ALLOW, 0, K_READ, "/d", 0, PRIV},
    {P_EQUAL, "/d/x", W, DENY, EACC, K_READ, "/d", 0, PRIV},
    {P_EQUAL2, "/a/x", W, DENY, EACC, K_READ, "/a", 0, 0},
    {P_EQUAL2, "/a/x", R, ALLOW, 0, K_READ, "/a", 0, 0},
    {P_EQUAL2, "/b/x", R, DENY, EACC, K_DENY, "/b", 0, 0},

    /* Longest prefix wins. */
    {P_LONGEST, "/p/x", W, DENY, EACC, K_READ, "/p", 0, 0},
    {P_LONGEST, "/p/q/x", W, ALLOW, 0, K_WRITE, "/p/q", 0, 0},
    {P_LONGEST, "/p/q/r/x", W, DENY, EACC, K_READ, "/p/q/r", 0, 0},
    {P_LONGEST, "/p/q/r/x", R, ALLOW, 0, K_READ, "/p/q/r", 0, 0},
    {P_LONGEST, "/p/q/r/s/t", R, DENY, EACC, K_DENY, "/p/q/r/s", 0, 0},
    {P_LONGEST, "/p/q/r/s", S, DENY, ENOE, K_DENY, "/p/q/r/s", 0, 0},
    {P_LONGEST, "/p/q/rr", W, ALLOW, 0, K_WRITE, "/p/q", 0, 0},
    {P_LONGEST, "/p/q/r/ss", R, ALLOW, 0, K_READ, "/p/q/r", 0, 0},

    /* Deny globs against longer allows, subtrees and ancestors. */
    {P_GLOB, "/home/u/repo/.env", R, DENY, EACC, K_DENY, "/**/.env", 0, 0},
    {P_GLOB, "/home/u/repo/keys/.env", W, DENY, EACC, K_DENY, "/**/.env", 0, 0},
    {P_GLOB, "/home/u/repo/.env/public/x", R, DENY, EACC, K_DENY, "/**/.env", 0, 0},
    {P_GLOB, "/home/u/repo/.env/public", S, DENY, ENOE, K_DENY, "/**/.env", 0, 0},
    {P_GLOB, "/home/u/repo/.env", S, DENY, ENOE, K_DENY, "/**/.env", 0, 0},
    {P_GLOB, "/home/u/repo/a.key", R, DENY, EACC, K_DENY, CWD "/*.key", 0, 0},
    {P_GLOB, "/home/u/repo/x.key/y", W, DENY, EACC, K_DENY, CWD "/*.key", 0, 0},
    {P_GLOB, "/home/u/repo/sub/a.key", R, ALLOW, 0, K_CWD, CWD, 0, 0},
    {P_GLOB, "/home/u/repo/keys/k", W, ALLOW, 0, K_WRITE, CWD "/keys", 0, 0},
    {P_GLOB, "/home/u/.config/gcloud/credentials.db", R, DENY, EACC, K_DENY,
     "/home/u/.config/*/credentials*", 0, 0},
    {P_GLOB, "/home/u/.config/gcloud/other", R, ALLOW, 0, K_READ, "/home/u/.config", 0, 0},
    {P_GLOB, "/home/u/.config/credentials", R, ALLOW, 0, K_READ, "/home/u/.config", 0, 0},
    {P_GLOB, "/srv", S, ALLOW, 0, K_READ, "/srv/a/cache/pub", ANC, 0},
    {P_GLOB, "/srv/a", S, ALLOW, 0, K_READ, "/srv/a/cache/pub", ANC, 0},
    {P_GLOB, "/srv/a/cache", S, DENY, ENOE, K_DENY, "/srv/**/cache", 0, 0},
    {P_GLOB, "/srv/a/cache/pub/f", R, DENY, EACC, K_DENY, "/srv/**/cache", 0, 0},

    /* "cwd": "ro" and "none". */
    {P_CWD_RO, "/home/u/repo/x", W, DENY, EACC, K_CWD, CWD, 0, 0},
    {P_CWD_RO, "/home/u/repo/x", R, ALLOW, 0, K_CWD, CWD, 0, 0},
    {P_CWD_RO, "/home/u/repo/x", X, ALLOW, 0, K_CWD, CWD, 0, 0},
    {P_CWD_RO, "/home/u/repo/build/o", W, ALLOW, 0, K_WRITE, CWD "/build", 0, 0},
    {P_CWD_NONE, "/home/u/repo/x", R, DENY, EACC, K_NONE, NULL, 0, 0},
    {P_CWD_NONE, "/home/u/repo/vendor/x", R, ALLOW, 0, K_READ, CWD "/vendor", 0, 0},
    {P_CWD_NONE, "/home/u/repo", S, ALLOW, 0, K_READ, CWD "/vendor", ANC, 0},
    {P_CWD_NONE, "/home/u/repo/x", S, DENY, ENOE, K_NONE, NULL, 0, 0},

    /* Variables: set ones expand, unset and empty ones drop the entry. */
    {P_VARS, "/home/u/docs/a", R, ALLOW, 0, K_READ, "/home/u/docs", 0, 0},
    {P_VARS, "/work/proj/src/a", R, ALLOW, 0, K_READ, "/work/proj/src", 0, 0},
    {P_VARS, "/work/proj/out/a", W, ALLOW, 0, K_WRITE, "/work/proj/out", 0, 0},
    {P_VARS, "/x", R, DENY, EACC, K_NONE, NULL, 0, 0},
    {P_VARS, "/y", W, DENY, EACC, K_NONE, NULL, 0, 0},
    {P_VARS, "/home/u/repo/x", R, DENY, EACC, K_NONE, NULL, 0, 0},

    /* An entry for "/" itself. */
    {P_ROOT, "/", R, ALLOW, 0, K_READ, "/", 0, 0},
    {P_ROOT, "/", W, DENY, EACC, K_READ, "/", 0, 0},
    {P_ROOT, "/etc/passwd", R, ALLOW, 0, K_READ, "/", 0, 0},
    {P_ROOT, "/proc/1/environ", R, DENY, EACC, K_DENY, "/proc", 0, 0},
    {P_ROOT, "/proc", S, DENY, ENOE, K_DENY, "/proc", 0, 0},

    /* The default policy, with its built-in sets. */
    {P_DEFAULT, "/usr/bin/git", X, ALLOW, 0, K_SYSTEM, "/usr", 0, 0},
    {P_DEFAULT, "/usr/bin/git", W, DENY, EACC, K_SYSTEM, "/usr", 0, 0},
    {P_DEFAULT, "/etc/passwd", R, ALLOW, 0, K_SYSTEM, "/etc", 0, 0},
    {P_DEFAULT, "/etc/shadow", R, DENY, EACC, K_DENY, "/etc/shadow", 0, 0},
    {P_DEFAULT, "/etc/shadow", S, DENY, ENOE, K_DENY, "/etc/shadow", 0, 0},
    {P_DEFAULT, "/etc/sudoers.d/x", R, DENY, EACC, K_DENY, "/etc/sudoers*", 0, 0},
    {P_DEFAULT, "/etc/ssl/private/k", R, DENY, EACC, K_DENY, "/etc/ssl/private", 0, 0},
    {P_DEFAULT, "/home/u/.ssh/id_rsa", R, DENY, EACC, K_DENY, "/home/u/.ssh", 0, 0},
    {P_DEFAULT, "/home/u/repo/.env", R, DENY, EACC, K_DENY, "/**/.env", 0, 0},
    {P_DEFAULT, "/home/u/repo/tls/server.key", R, DENY, EACC, K_DENY, "/**/*.key", 0, 0},
    {P_DEFAULT, "/home/u/repo/src/main.c", W, ALLOW, 0, K_CWD, CWD, 0, 0},
    {P_DEFAULT, "/tmp/x", W, ALLOW, 0, K_WRITE, "/tmp", 0, 0},
    {P_DEFAULT, "/dev/null", W, ALLOW, 0, K_SYSTEM, "/dev/null", 0, 0},
    {P_DEFAULT, "/proc/self/status", R, ALLOW, 0, K_SYSTEM, "/proc/self", 0, 0},
    {P_DEFAULT, "/home/u/.claude/x", R, ALLOW, 0, K_PRIVATE, "/home/u/.claude", 0, PRIV},
    {P_DEFAULT, "/home/u", S, ALLOW, 0, K_ANY, NULL, ANC, 0},
    {P_DEFAULT, "/home/u/Documents", R, DENY, EACC, K_NONE, NULL, 0, 0},
    {P_DEFAULT, "/root", R, DENY, EACC, K_DENY, "/root", 0, 0},
    {P_DEFAULT, "/home/u/.cargo/credentials.toml", R, DENY, EACC, K_DENY,
     "/home/u/.cargo/credentials*", 0, 0},
    {P_DEFAULT, "/home/u/.cargo/bin/cargo", X, ALLOW, 0, K_TOOLING, "/home/u/.cargo", 0, 0},
    {P_DEFAULT, "/home/u/.gitconfig", R, ALLOW, 0, K_TOOLING, "/home/u/.gitconfig", 0, 0},
};
/* clang-format on */

static int
load_all(void **state)
{
	for (int i = 0; i < P_MAX; i++) {
		struct policy_diag diag = {0};
		int r;

		if (policy_texts[i])
			r = policy_load_string(policy_texts[i], strlen(policy_texts[i]), "test",
			                       &test_env, &policies[i], &diag);
		else
			r = policy_load_default(&test_env, &policies[i], &diag);
		if (r < 0) {
			fprintf(stderr, "policy %d: %s:%u:%u %s: %s\n", i, diag.source, diag.line,
			        diag.col, diag.key, diag.msg);
			return -1;
		}
	}
	return 0;
}

static int
free_all(void **state)
{
	for (int i = 0; i < P_MAX; i++)
		policies[i] = policy_free(policies[i]);
	return 0;
}

/* Checks one verdict against a row, and the invariants every verdict keeps. */
static void
check_verdict(const struct match_case *c, const struct policy_verdict *v)
{
	assert_int_equal(v->allow, c->allow);
	assert_int_equal(v->err, c->err);
	assert_int_equal(v->err, c->allow ? 0 : policy_denial_errno(c->access));
	assert_int_equal(v->ancestor, c->ancestor);
	assert_int_equal(v->private_, c->private_);
	if (c->kind == K_NONE) {
		assert_null(v->rule);
		return;
	}
	assert_non_null(v->rule);
	if (c->kind != K_ANY)
		assert_int_equal(v->rule->kind, c->kind);
	if (c->rule)
		assert_string_equal(v->rule->path, c->rule);
	if (v->rule->glob) {
		/* A deny glob decides alone. */
		assert_false(v->allow);
		assert_int_equal(v->mode, POLICY_MODE_NONE);
	} else if (!v->ancestor) {
		/* The mode is the deciding rule's. */
		assert_int_equal(v->mode, v->rule->mode);
	} else {
		/* An ancestor is allowed for stat only, by a readable entry. */
		assert_int_equal(c->access, POLICY_STAT);
		assert_true(v->rule->mode >= POLICY_MODE_RO);
	}
}

static void
test_match_table(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(match_cases); i++) {
		const struct match_case *c = &match_cases[i];
		struct policy_verdict v;

		print_message("row %zu: policy %d, %s \"%s\"\n", i, c->pol,
		              policy_access_to_string(c->access), c->path);
		memset(&v, 0xa5, sizeof(v));
		policy_match(policies[c->pol], c->path, strlen(c->path), c->access, &v);
		check_verdict(c, &v);
	}
}

/* len, not the NUL, ends the path. */
static void
test_match_len(void **state)
{
	const char *path = "/home/u/repo/secrets/key";
	struct policy_verdict v;

	policy_match(policies[P_CORE], path, strlen(CWD), POLICY_WRITE, &v);
	assert_true(v.allow);
	assert_string_equal(v.rule->path, CWD);
	policy_match(policies[P_CORE], path, strlen(path), POLICY_WRITE, &v);
	assert_false(v.allow);
	/* "/home/u/repo/" (with the slash) is not canonical. */
	policy_match(policies[P_CORE], path, strlen(CWD) + 1, POLICY_READ, &v);
	assert_false(v.allow);
	assert_null(v.rule);
}

static void
test_match_bad_access(void **state)
{
	struct policy_verdict v;

	policy_match(policies[P_CORE], "/home/u/repo/x", 14, POLICY_ACCESS_MAX, &v);
	assert_false(v.allow);
	assert_int_equal(v.err, EACCES);
	assert_null(v.rule);
}

static void
test_denial_errno(void **state)
{
	assert_int_equal(policy_denial_errno(POLICY_READ), EACCES);
	assert_int_equal(policy_denial_errno(POLICY_WRITE), EACCES);
	assert_int_equal(policy_denial_errno(POLICY_EXEC), EACCES);
	assert_int_equal(policy_denial_errno(POLICY_STAT), ENOENT);
}

static struct policy *
load(const char *text, const struct policy_env *env)
{
	struct policy_diag diag = {0};
	struct policy *p = NULL;

	int r = policy_load_string(text, strlen(text), "test", env, &p, &diag);
	if (r < 0)
		print_error("%s:%u:%u %s: %s\n", diag.source, diag.line, diag.col, diag.key,
		            diag.msg);
	assert_int_equal(r, 0);
	return p;
}

/* "/l/" then components of 200 bytes and a shorter last one, total bytes long. */
static void
make_long(char *buf, size_t total)
{
	size_t n = 2;

	memcpy(buf, "/l", 2);
	while (n < total) {
		buf[n++] = '/';
		for (size_t k = 0; k < 200 && n < total; k++)
			buf[n++] = 'a' + (char)(k % 26);
	}
	buf[n] = '\0';
}

static void
test_match_long_path(void **state)
{
	static char path[8192];
	struct policy *p =
	    load("{\"version\": 1, \"surface\": {" OFF ", \"cwd\": \"none\", \"read\": [\"/l\"],"
	         " \"deny\": [\"**/x\"]}}",
	         &test_env);
	struct policy_verdict v;

	/* 4095 bytes, the most a canonical path has: under the rule. */
	make_long(path, 4095);
	assert_int_equal(strlen(path), 4095);
	for (int a = 0; a < POLICY_ACCESS_MAX; a++) {
		policy_match(p, path, 4095, (enum policy_access)a, &v);
		assert_int_equal(v.allow, a != POLICY_WRITE);
		assert_non_null(v.rule);
		assert_string_equal(v.rule->path, "/l");
	}
	/* 4096 bytes: denied, no rule. */
	make_long(path, 4096);
	assert_int_equal(strlen(path), 4096);
	policy_match(p, path, 4096, POLICY_READ, &v);
	assert_false(v.allow);
	assert_int_equal(v.err, EACCES);
	assert_null(v.rule);
	policy_match(p, path, 4096, POLICY_STAT, &v);
	assert_int_equal(v.err, ENOENT);
	/* A valid 4095-byte prefix of it is still fine. */
	policy_match(p, path, 4095, POLICY_READ, &v);
	assert_true(v.allow);

	/* 2047 components: "/l/a/a/…/a", 4094 bytes. */
	strcpy(path, "/l");
	for (int i = 0; i < 2046; i++)
		strcat(path, "/a");
	assert_int_equal(strlen(path), 4094);
	policy_match(p, path, strlen(path), POLICY_READ, &v);
	assert_true(v.allow);
	assert_string_equal(v.rule->path, "/l");
	/* The same depth ending in "x": the deny glob still sees it. */
	path[4093] = 'x';
	policy_match(p, path, strlen(path), POLICY_READ, &v);
	assert_false(v.allow);
	assert_string_equal(v.rule->path, "/**/x");
	/* One more component is past 4095 bytes. */
	path[4093] = 'a';
	strcat(path, "/a");
	policy_match(p, path, strlen(path), POLICY_READ, &v);
	assert_false(v.allow);
	assert_null(v.rule);
	policy_free(p);
}

/* An entry of 4095 bytes loads and matches; one byte more is a load error. */
static void
test_match_long_entry(void **state)
{
	static char entry[8192], text[16384];
	struct policy_diag diag = {0};
	struct policy *p = NULL;
	struct policy_verdict v;

	make_long(entry, 4095);
	snprintf(text, sizeof(text),
	         "{\"version\": 1, \"surface\": {" OFF ", \"cwd\": \"none\", \"read\": [\"%s\"]}}",
	         entry);
	p = load(text, &test_env);
	policy_match(p, entry, strlen(entry), POLICY_READ, &v);
	assert_true(v.allow);
	assert_string_equal(v.rule->path, entry);
	policy_match(p, entry, strlen(entry) - 1, POLICY_READ, &v);
	assert_false(v.allow);
	policy_match(p, "/l", 2, POLICY_STAT, &v);
	assert_true(v.allow);
	assert_true(v.ancestor);
	policy_free(p);

	make_long(entry, 4096);
	snprintf(text, sizeof(text),
	         "{\"version\": 1, \"surface\": {" OFF ", \"cwd\": \"none\", \"read\": [\"%s\"]}}",
	         entry);
	p = NULL;
	assert_int_equal(policy_load_string(text, strlen(text), "test", &test_env, &p, &diag),
	                 -EINVAL);
	assert_null(p);
	assert_string_equal(diag.key, "surface.read[0]");
}

/*
 * The message for an over-long entry says what is wrong. It quotes the entry first,
 * so a long entry must not push the explanation out of the 512-byte diag.msg.
 */
static void
test_long_entry_message(void **state)
{
	static char entry[8192], text[16384];
	struct policy_diag diag = {0};
	struct policy *p = NULL;

	make_long(entry, 4096);
	snprintf(text, sizeof(text),
	         "{\"version\": 1, \"surface\": {" OFF ", \"cwd\": \"none\", \"read\": [\"%s\"]}}",
	         entry);
	assert_int_equal(policy_load_string(text, strlen(text), "test", &test_env, &p, &diag),
	                 -EINVAL);
	assert_non_null(strstr(diag.msg, "longer than 4095 bytes"));
}

/* Dropped entries leave a note each, naming the key, the text and the variable. */
static void
test_notes(void **state)
{
	const char *const *notes;

	assert_int_equal(policy_notes(policies[P_VARS], &notes), 2);
	assert_string_equal(notes[0],
	                    "surface.read[0]: \"$NOPE/x\" dropped: $NOPE is unset or empty");
	assert_string_equal(notes[1],
	                    "surface.write[0]: \"$EMPTY/y\" dropped: $EMPTY is unset or empty");
	assert_int_equal(policy_notes(policies[P_CORE], &notes), 0);
}

/* The rules of P_VARS: only the expanded ones, in order. */
static void
test_vars_rules(void **state)
{
	static const char *const want[] = {"/home/u/docs", "/work/proj/src", "/work/proj/out"};
	const struct policy_rule *rules;

	assert_int_equal(policy_rules(policies[P_VARS], &rules), ARRAY_SIZE(want));
	for (size_t i = 0; i < ARRAY_SIZE(want); i++)
		assert_string_equal(rules[i].path, want[i]);
	assert_string_equal(rules[0].origin.text, "${HOME}/docs");
	assert_string_equal(rules[0].origin.key, "surface.read[1]");
}

/* Without HOME, "~" entries are dropped, with a note; the rest stays. */
static void
test_no_home(void **state)
{
	static char *const env_nohome[] = {"PATH=/usr/bin", NULL};
	const struct policy_env env = {.cwd = CWD, .environ = env_nohome};
	struct policy *p = load("{\"version\": 1, \"surface\": {" OFF ",\n"
	                        "  \"read\": [\"~/x\", \"/usr\"], \"deny\": [\"~\"]}}",
	                        &env);
	const char *const *notes;
	struct policy_verdict v;

	assert_int_equal(policy_notes(p, &notes), 2);
	assert_string_equal(notes[0], "surface.read[0]: \"~/x\" dropped: $HOME is unset or empty");
	assert_string_equal(notes[1], "surface.deny[0]: \"~\" dropped: $HOME is unset or empty");
	policy_match(p, "/usr/bin/cc", 11, POLICY_EXEC, &v);
	assert_true(v.allow);
	policy_match(p, CWD "/x", strlen(CWD "/x"), POLICY_WRITE, &v);
	assert_true(v.allow);
	assert_int_equal(v.rule->kind, POLICY_KIND_CWD);
	policy_free(p);
}

/* The cwd entry is rule 0 whatever the key order, and none when "cwd": "none". */
static void
test_cwd_rule(void **state)
{
	const struct policy_rule *rules;

	assert_true(policy_rules(policies[P_CWD_RO], &rules) >= 1);
	assert_int_equal(rules[0].kind, POLICY_KIND_CWD);
	assert_int_equal(rules[0].mode, POLICY_MODE_RO);
	assert_string_equal(rules[0].path, CWD);
	assert_string_equal(rules[0].origin.key, "surface.cwd");
	assert_true(policy_rules(policies[P_CORE], &rules) >= 1);
	assert_int_equal(rules[0].kind, POLICY_KIND_CWD);
	assert_int_equal(rules[0].mode, POLICY_MODE_RW);
	size_t n = policy_rules(policies[P_CWD_NONE], &rules);
	for (size_t i = 0; i < n; i++)
		assert_int_not_equal(rules[i].kind, POLICY_KIND_CWD);
}

/* With HOME=/root, the system set does not deny the session's own home. */
static void
test_default_root_home(void **state)
{
	static char *const env_root[] = {"HOME=/root", NULL};
	const struct policy_env env = {.cwd = "/root/repo", .environ = env_root};
	struct policy_diag diag;
	struct policy *p = NULL;
	struct policy_verdict v;

	assert_int_equal(policy_load_default(&env, &p, &diag), 0);
	policy_match(p, "/root/repo/x", 12, POLICY_WRITE, &v);
	assert_true(v.allow);
	assert_int_equal(v.rule->kind, POLICY_KIND_CWD);
	policy_match(p, "/root/other", 11, POLICY_READ, &v);
	assert_false(v.allow);
	assert_null(v.rule);
	policy_match(p, "/root/.ssh/id_rsa", 17, POLICY_READ, &v);
	assert_false(v.allow);
	assert_string_equal(v.rule->path, "/root/.ssh");
	policy_free(p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_match_table),
	    cmocka_unit_test(test_match_len),
	    cmocka_unit_test(test_match_bad_access),
	    cmocka_unit_test(test_denial_errno),
	    cmocka_unit_test(test_match_long_path),
	    cmocka_unit_test(test_match_long_entry),
	    cmocka_unit_test(test_notes),
	    cmocka_unit_test(test_vars_rules),
	    cmocka_unit_test(test_no_home),
	    cmocka_unit_test(test_cwd_rule),
	    cmocka_unit_test(test_default_root_home),
	    cmocka_unit_test(test_long_entry_message),
	};

	return cmocka_run_group_tests(tests, load_all, free_all);
}

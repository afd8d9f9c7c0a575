/* SPDX-License-Identifier: MIT */
/*
 * The policy loader: malformed and hostile inputs, each with its exact error
 * (return value, line, column, key path, message), and the inputs that must load,
 * with the values they must give.
 *
 * Every row of bad_cases becomes its own cmocka test, so one failing row does not
 * hide the others. Rows marked "BUG" show a defect of the loader as found: they
 * assert what a fix must give (for a message, a fragment it must or must not
 * contain, so that the wording stays the fixer's), and fail until it is fixed.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "moat/macro.h"
#include "moat/policy.h"

static char *test_environ[] = {"HOME=/home/u", "EMPTY=", NULL};

static const struct policy_env test_env = {
    .cwd = "/home/u/repo",
    .environ = test_environ,
};

/* Stands for "never written": a failed load must leave *ret alone. */
static char sentinel;
#define UNTOUCHED ((struct policy *)&sentinel)

/* ---- generated inputs ---- */

static char *
concat_repeat(const char *head, const char *open, const char *mid, const char *close,
              const char *tail, size_t n, size_t *ret_len)
{
	size_t lo = strlen(open), lc = strlen(close);
	size_t len = strlen(head) + n * (lo + lc) + strlen(mid) + strlen(tail);
	char *s = malloc(len + 1), *o = s;

	assert_non_null(s);
	o = stpcpy(o, head);
	for (size_t i = 0; i < n; i++)
		o = stpcpy(o, open);
	o = stpcpy(o, mid);
	for (size_t i = 0; i < n; i++)
		o = stpcpy(o, close);
	o = stpcpy(o, tail);
	*ret_len = len;
	return s;
}

/* surface.write[0] nested 1,000 arrays deep: parsed, then refused by the schema. */
static char *
make_deep_1000(size_t *ret_len)
{
	return concat_repeat("{\"version\": 1, \"surface\": {\"write\": [", "[", "", "]", "]}}",
	                     999, ret_len);
}

/* 100,000 levels: beyond jansson's depth limit, refused without a stack overflow. */
static char *
make_deep_100000(size_t *ret_len)
{
	return concat_repeat("{\"version\": 1, \"surface\": {\"write\": ", "[", "", "]", "}}",
	                     100000, ret_len);
}

/* 1,000 nested objects under a known key: the first unknown key is the error. */
static char *
make_deep_objects(size_t *ret_len)
{
	return concat_repeat("{\"version\": 1, \"audit\": ", "{\"a\": ", "0", "}", "}", 1000,
	                     ret_len);
}

/* A path of 5,000 bytes: longer than the 4,095 a canonical path may have. */
static char *
make_long_path(size_t *ret_len)
{
	char a[5001];

	memset(a, 'a', sizeof(a) - 1);
	a[sizeof(a) - 1] = '\0';
	return concat_repeat("{\"version\": 1, \"surface\": {\"write\": [\"/", "", a, "", "\"]}}",
	                     0, ret_len);
}

/* An unknown key of 300 bytes, longer than the 256 a key path holds. */
static char *
make_long_key(size_t *ret_len)
{
	char k[301];

	memset(k, 'k', sizeof(k) - 1);
	k[sizeof(k) - 1] = '\0';
	return concat_repeat("{\"version\": 1, \"surface\": {\"", "", k, "", "\": 1}}", 0, ret_len);
}

/* ---- malformed and hostile inputs ---- */

enum match {
	EXACT, /* diag.msg is msg */
	HAS,   /* diag.msg contains msg (BUG rows: the wording is the fixer's) */
};

struct bad_case {
	const char *name;
	const char *text;
	size_t len;                     /* 0: strlen(text) */
	char *(*make)(size_t *ret_len); /* instead of text: a generated input */
	int ret;
	unsigned line, col;
	const char *key;
	const char *msg;
	enum match match;
	const char *lacks; /* a fragment msg must not contain, or NULL */
};

#define UNKNOWN     "unknown key (expected one of: "
#define ENUM_CWD    "expected one of \"none\", \"ro\", \"rw\""
#define KEYS_TOP    UNKNOWN "version, surface, exec, net, runner, mounts, audit)"
#define KEYS_SURF   UNKNOWN "cwd, write, read, private, deny, system, tooling)"
#define NOT_VARNAME "is not a variable name or pattern ([A-Za-z_][A-Za-z0-9_]*, with * and ?)"
#define NO_WILDCARD "wildcards are only allowed in surface.deny and exec rule paths"

/* A policy on several lines, so that positions are not all on line 1. */
#define MULTI_HEAD                                                                                 \
	"{\n"                                                                                      \
	"  \"version\": 1,\n"                                                                      \
	"  \"surface\": {\n"                                                                       \
	"    \"system\": false,\n"                                                                 \
	"    \"tooling\": false\n"                                                                 \
	"  },\n"

/* Ten bytes of the over-long key of make_long_key(). */
#define K10 "kkkkkkkkkk"

/* A row whose message must be exactly msg. */
#define BAD(n, t, l, c, k, m)                                                                      \
	{                                                                                          \
		.name = n, .text = t, .ret = -EINVAL, .line = l, .col = c, .key = k, .msg = m      \
	}
/* A BUG row: msg must contain has, and not no (NULL: no such check). */
#define BAD_HAS(n, t, l, c, k, has, no)                                                            \
	{                                                                                          \
		.name = n, .text = t, .ret = -EINVAL, .line = l, .col = c, .key = k, .msg = has,   \
		.match = HAS, .lacks = no                                                          \
	}
/* The same, for an input that make() generates. */
#define BAD_MADE(n, f, l, c, k, m)                                                                 \
	{                                                                                          \
		.name = n, .make = f, .ret = -EINVAL, .line = l, .col = c, .key = k, .msg = m      \
	}

static const struct bad_case bad_cases[] = {
    /* ---- not JSON ---- */
    BAD("truncated", "{\"version\": 1, \"surface\": {", 1, 27, "",
        "invalid JSON: string or '}' expected near end of file"),
    BAD("trailing_garbage", "{\"version\": 1} x", 1, 16, "",
        "invalid JSON: end of file expected near 'x'"),
    BAD("empty_input", "", 1, 1, "", "invalid JSON: '[' or '{' expected near end of file"),
    BAD("only_whitespace", " \n\t\n", 3, 1, "",
        "invalid JSON: '[' or '{' expected near end of file"),
    BAD("comment", "{\"version\": 1 // one\n}", 1, 15, "", "invalid JSON: '}' expected near '/'"),
    BAD("trailing_comma", "{\"version\": 1,}", 1, 15, "",
        "invalid JSON: string or '}' expected near '}'"),
    BAD("single_quotes", "{'version': 1}", 1, 2, "",
        "invalid JSON: string or '}' expected near '''"),
    BAD("nan", "{\"version\": NaN}", 1, 15, "", "invalid JSON: invalid token near 'NaN'"),
    BAD("invalid_utf8", "{\"version\": 1, \"surface\": {\"write\": [\"/a\xff\"]}}", 1, 40, "",
        "invalid JSON: unable to decode byte 0xff near '\"/a'"),
    BAD("duplicate_key", "{\"version\": 1, \"version\": 1}", 1, 24, "",
        "invalid JSON: duplicate object key near '\"version\"'"),
    BAD("duplicate_key_nested", "{\"version\": 1, \"surface\": {\"write\": [], \"write\": []}}", 1,
        47, "", "invalid JSON: duplicate object key near '\"write\"'"),
    BAD("duplicate_key_after_escape", "{\"version\": 1, \"ver\\u0073ion\": 1}", 1, 29, "",
        "invalid JSON: duplicate object key near '\"ver\\u0073ion\"'"),
    BAD("integer_overflow", "{\"version\": 99999999999999999999}", 1, 32, "",
        "invalid JSON: too big integer near '99999999999999999999'"),
    /*
     * BUG: a NUL byte in the text is reported as "end of file" although the
     * file goes on; the message should name the NUL byte. The position is right.
     */
    {.name = "nul_byte",
     .text = "{\"version\": 1,\0 \"surface\": {}}",
     .len = 31,
     .ret = -EINVAL,
     .line = 1,
     .col = 15,
     .key = "",
     .msg = "NUL",
     .match = HAS},
    /*
     * BUG: "\u0000" in a string is refused (right), but the message names a
     * jansson flag, JSON_ALLOW_NUL, that means nothing to the author of a policy.
     */
    BAD_HAS("escaped_nul", "{\"version\": 1, \"surface\": {\"write\": [\"/a\\u0000b\"]}}", 1, 48,
            "", "\\u0000", "JSON_ALLOW_NUL"),
    BAD_MADE("deep_100000", make_deep_100000, 1, 2083, "",
             "invalid JSON: maximum parsing depth reached near '['"),

    /* ---- the document ---- */
    BAD("top_level_array", "[{\"version\": 1}]", 1, 1, "", "expected an object, got an array"),
    BAD("top_level_string", "\"x\"", 1, 3, "", "invalid JSON: '[' or '{' expected near '\"x\"'"),
    BAD("top_level_null", "null", 1, 4, "", "invalid JSON: '[' or '{' expected near 'null'"),
    BAD("missing_version", "{\"surface\": {}}", 1, 1, "", "required key \"version\" is missing"),
    BAD("version_2", "{\"version\": 2}", 1, 13, "version",
        "unsupported version 2 (this moat reads version 1)"),
    BAD("version_0", "{\"version\": 0}", 1, 13, "version",
        "unsupported version 0 (this moat reads version 1)"),
    BAD("version_negative", "{\"version\": -1}", 1, 13, "version",
        "unsupported version -1 (this moat reads version 1)"),
    BAD("version_string", "{\"version\": \"1\"}", 1, 13, "version",
        "expected the integer 1, got a string"),
    /*
     * BUG (unclear message): 1.0 is refused as "a number" while the message asks
     * for "the integer 1"; it should say that a real number is not an integer.
     */
    BAD_HAS("version_real", "{\"version\": 1.0}", 1, 13, "version", "expected the integer 1, got ",
            "got a number"),
    /* A newer file gets a version error, not an unknown-key error. */
    BAD("version_before_unknown_keys", "{\"bogus\": 1, \"version\": 2}", 1, 25, "version",
        "unsupported version 2 (this moat reads version 1)"),
    BAD("unknown_top_level_key", "{\"version\": 1, \"surfaces\": {}}", 1, 16, "surfaces", KEYS_TOP),
    BAD("key_case_matters", "{\"version\": 1, \"Version\": 1}", 1, 16, "Version", KEYS_TOP),

    /* ---- surface ---- */
    BAD("unknown_surface_key", "{\"version\": 1, \"surface\": {\"wrte\": [\"/tmp\"]}}", 1, 28,
        "surface.wrte", KEYS_SURF),
    BAD("surface_null", "{\"version\": 1, \"surface\": null}", 1, 27, "surface",
        "expected an object, got null"),
    BAD("write_is_string", "{\"version\": 1, \"surface\": {\"write\": \"/tmp\"}}", 1, 37,
        "surface.write", "expected an array of strings, got a string"),
    BAD("write_element_number", "{\"version\": 1, \"surface\": {\"write\": [\"/tmp\", 5]}}", 1, 46,
        "surface.write[1]", "expected a string, got a number"),
    BAD("system_is_string", "{\"version\": 1, \"surface\": {\"system\": \"yes\"}}", 1, 38,
        "surface.system", "expected a boolean, got a string"),
    BAD("tooling_is_number", "{\"version\": 1, \"surface\": {\"tooling\": 1}}", 1, 39,
        "surface.tooling", "expected a boolean, got a number"),
    BAD("cwd_rx", "{\"version\": 1, \"surface\": {\"cwd\": \"rx\"}}", 1, 35, "surface.cwd",
        ENUM_CWD ", got \"rx\""),
    BAD("cwd_number", "{\"version\": 1, \"surface\": {\"cwd\": 1}}", 1, 35, "surface.cwd",
        ENUM_CWD ", got a number"),
    BAD("glob_in_write", "{\"version\": 1, \"surface\": {\"write\": [\"/tmp/*\"]}}", 1, 38,
        "surface.write[0]", "\"/tmp/*\": " NO_WILDCARD),
    BAD("tilde_user", "{\"version\": 1, \"surface\": {\"read\": [\"~bob/x\"]}}", 1, 37,
        "surface.read[0]", "\"~bob/x\": \"~user\" is not supported; write the path out"),
    BAD("unterminated_brace", "{\"version\": 1, \"surface\": {\"read\": [\"${HOME\"]}}", 1, 37,
        "surface.read[0]", "\"${HOME\": unterminated \"${\""),
    BAD("empty_braces", "{\"version\": 1, \"surface\": {\"read\": [\"${}\"]}}", 1, 37,
        "surface.read[0]", "\"${}\": empty variable name \"${}\""),
    BAD("lone_dollar", "{\"version\": 1, \"surface\": {\"deny\": [\"$\"]}}", 1, 37,
        "surface.deny[0]", "\"$\": \"$\" must be followed by a name or \"{NAME}\""),
    BAD("bad_variable_name", "{\"version\": 1, \"surface\": {\"private\": [\"${1A}\"]}}", 1, 40,
        "surface.private[0]", "\"${1A}\": invalid variable name in \"${…}\""),
    BAD("empty_path", "{\"version\": 1, \"surface\": {\"write\": [\"\"]}}", 1, 38,
        "surface.write[0]", "\"\": empty path"),
    BAD_MADE("deep_1000", make_deep_1000, 1, 38, "surface.write[0]",
             "expected a string, got an array"),
    BAD_MADE("deep_objects", make_deep_objects, 1, 26, "audit.a",
             "unknown key (expected one of: path, level)"),
    /*
     * BUG: the message quotes the whole 5,000-byte entry first, so the 512-byte
     * diag cuts it before the reason ("longer than 4095 bytes") is reached.
     */
    {.name = "path_too_long",
     .make = make_long_path,
     .ret = -EINVAL,
     .line = 1,
     .col = 38,
     .key = "surface.write[0]",
     .msg = "longer than 4095 bytes",
     .match = HAS},

    /* ---- exec ---- */
    BAD("exec_not_object", "{\"version\": 1, \"exec\": []}", 1, 24, "exec",
        "expected an object, got an array"),
    BAD("exec_default_run", "{\"version\": 1, \"exec\": {\"default\": \"run\"}}", 1, 36,
        "exec.default", "expected one of \"redirect\", \"allow\", \"deny\", got \"run\""),
    BAD("exec_rules_object", "{\"version\": 1, \"exec\": {\"rules\": {}}}", 1, 34, "exec.rules",
        "expected an array of rules, got an object"),
    BAD("exec_rule_number", "{\"version\": 1, \"exec\": {\"rules\": [1]}}", 1, 35, "exec.rules[0]",
        "expected an object, got a number"),
    BAD("exec_rule_no_path", "{\"version\": 1, \"exec\": {\"rules\": [{\"action\": \"deny\"}]}}", 1,
        35, "exec.rules[0]", "required key \"path\" is missing"),
    BAD("exec_rule_no_action",
        "{\"version\": 1, \"exec\": {\"rules\": [{\"path\": \"/usr/bin/git\"}]}}", 1, 35,
        "exec.rules[0]", "required key \"action\" is missing"),
    BAD("exec_argv_string",
        "{\"version\": 1, \"exec\": {\"rules\": [{\"path\": \"/usr/bin/git\", \"argv\": \"push\", "
        "\"action\": \"deny\"}]}}",
        1, 68, "exec.rules[0].argv", "expected an array of strings, got a string"),
    BAD("exec_argv_number",
        "{\"version\": 1, \"exec\": {\"rules\": [{\"path\": \"/usr/bin/git\", \"argv\": [1], "
        "\"action\": \"deny\"}]}}",
        1, 69, "exec.rules[0].argv[0]", "expected a string, got a number"),
    BAD("exec_rule_unknown_key",
        "{\"version\": 1, \"exec\": {\"rules\": [{\"path\": \"/usr/bin/git\", \"action\": "
        "\"deny\", \"args\": []}]}}",
        1, 78, "exec.rules[0].args", "unknown key (expected one of: path, argv, action)"),

    /* ---- net ---- */
    BAD("net_unknown_key", "{\"version\": 1, \"net\": {\"listen\": []}}", 1, 24, "net.listen",
        "unknown key (expected one of: connect, bind)"),
    BAD("net_connect_number", "{\"version\": 1, \"net\": {\"connect\": 5}}", 1, 35, "net.connect",
        "expected an array of strings, got a number"),
    BAD("net_no_colon", "{\"version\": 1, \"net\": {\"connect\": [\"nocolon\"]}}", 1, 36,
        "net.connect[0]", "\"nocolon\": expected tcp:HOST:PORT, udp:HOST:PORT or unix:PATH"),
    BAD("net_protocol", "{\"version\": 1, \"net\": {\"connect\": [\"sctp:*:1\"]}}", 1, 36,
        "net.connect[0]", "\"sctp:*:1\": unknown protocol \"sctp\" (expected tcp, udp or unix)"),
    BAD("net_host_name", "{\"version\": 1, \"net\": {\"connect\": [\"tcp:example.com:443\"]}}", 1,
        36, "net.connect[0]",
        "\"tcp:example.com:443\": \"example.com\" is not an IPv4 address (host names other than "
        "localhost are not allowed)"),
    BAD("net_no_port", "{\"version\": 1, \"net\": {\"connect\": [\"tcp:*\"]}}", 1, 36,
        "net.connect[0]", "\"tcp:*\": expected HOST:PORT"),
    BAD("net_port_word", "{\"version\": 1, \"net\": {\"connect\": [\"tcp:*:https\"]}}", 1, 36,
        "net.connect[0]", "\"tcp:*:https\": port \"https\" is not \"*\", a number or a range N-M"),
    BAD("net_port_too_big", "{\"version\": 1, \"net\": {\"connect\": [\"tcp:*:70000\"]}}", 1, 36,
        "net.connect[0]", "\"tcp:*:70000\": port 70000 is out of range (1-65535, low before high)"),
    BAD("net_port_zero_connect", "{\"version\": 1, \"net\": {\"connect\": [\"udp:*:0\"]}}", 1, 36,
        "net.connect[0]", "\"udp:*:0\": port 0 is out of range (1-65535, low before high)"),
    BAD("net_port_range_reversed", "{\"version\": 1, \"net\": {\"bind\": [\"tcp:*:20-10\"]}}", 1,
        33, "net.bind[0]",
        "\"tcp:*:20-10\": port 20-10 is out of range (0-65535, low before high)"),
    BAD("net_prefix_too_long", "{\"version\": 1, \"net\": {\"connect\": [\"tcp:10.0.0.0/33:1\"]}}",
        1, 36, "net.connect[0]", "\"tcp:10.0.0.0/33:1\": prefix length \"/33\" is not 0-32"),
    BAD("net_unterminated_bracket", "{\"version\": 1, \"net\": {\"connect\": [\"tcp:[::1:443\"]}}",
        1, 36, "net.connect[0]", "\"tcp:[::1:443\": unterminated \"[\" in IPv6 address"),
    BAD("net_after_bracket", "{\"version\": 1, \"net\": {\"connect\": [\"tcp:[::1]x:1\"]}}", 1, 36,
        "net.connect[0]", "\"tcp:[::1]x:1\": unexpected \"x\" after \"]\""),
    /*
     * BUG (unclear message): an IPv6 address without brackets is reported as
     * "not an IPv4 address (host names ... are not allowed)"; it should say that
     * IPv6 addresses are written in brackets.
     */
    BAD_HAS("net_ipv6_without_brackets",
            "{\"version\": 1, \"net\": {\"connect\": [\"tcp:::1:443\"]}}", 1, 36, "net.connect[0]",
            "IPv6", "host names"),
    BAD("net_unix_empty", "{\"version\": 1, \"net\": {\"connect\": [\"unix:\"]}}", 1, 36,
        "net.connect[0]", "\"unix:\": empty unix socket path"),
    BAD("net_unix_abstract_empty", "{\"version\": 1, \"net\": {\"connect\": [\"unix:@\"]}}", 1, 36,
        "net.connect[0]", "\"unix:@\": abstract socket name is empty or too long"),

    /* ---- runner ---- */
    BAD("runner_root", "{\"version\": 1, \"runner\": {\"root\": \"host\"}}", 1, 35, "runner.root",
        "expected one of \"mask\", \"surface\", got \"host\""),
    BAD("runner_network", "{\"version\": 1, \"runner\": {\"network\": \"bridge\"}}", 1, 38,
        "runner.network", "expected one of \"none\", \"host\", got \"bridge\""),
    BAD("limit_negative", "{\"version\": 1, \"runner\": {\"limits\": {\"pids\": -1}}}", 1, 46,
        "runner.limits.pids", "-1 is out of range (0 to 4194304)"),
    BAD("limit_too_big", "{\"version\": 1, \"runner\": {\"limits\": {\"pids\": 99999999999}}}", 1,
        46, "runner.limits.pids", "99999999999 is out of range (0 to 4194304)"),
    BAD("limit_memory_one_over",
        "{\"version\": 1, \"runner\": {\"limits\": {\"memory_mb\": 1073741825}}}", 1, 51,
        "runner.limits.memory_mb", "1073741825 is out of range (0 to 1073741824)"),
    BAD("limit_timeout_one_over",
        "{\"version\": 1, \"runner\": {\"limits\": {\"timeout_s\": 31536001}}}", 1, 51,
        "runner.limits.timeout_s", "31536001 is out of range (0 to 31536000)"),
    BAD("limit_null", "{\"version\": 1, \"runner\": {\"limits\": {\"timeout_s\": null}}}", 1, 51,
        "runner.limits.timeout_s", "expected a non-negative integer, got null"),
    /* BUG (unclear message): as version_real: 1.5 "is" a number. */
    BAD_HAS("limit_real", "{\"version\": 1, \"runner\": {\"limits\": {\"memory_mb\": 1.5}}}", 1, 51,
            "runner.limits.memory_mb", "expected a non-negative integer, got ", "got a number"),
    BAD("limit_unknown", "{\"version\": 1, \"runner\": {\"limits\": {\"cpu\": 1}}}", 1, 38,
        "runner.limits.cpu", "unknown key (expected one of: pids, memory_mb, timeout_s)"),
    BAD("env_unknown", "{\"version\": 1, \"runner\": {\"env\": {\"pass\": []}}}", 1, 35,
        "runner.env.pass", "unknown key (expected one of: keep, drop, set)"),
    BAD("env_keep_bad_name",
        "{\"version\": 1, \"runner\": {\"env\": {\"keep\": [\"PATH\", \"1BAD\"]}}}", 1, 52,
        "runner.env.keep[1]", "\"1BAD\" " NOT_VARNAME),
    BAD("env_drop_empty_name", "{\"version\": 1, \"runner\": {\"env\": {\"drop\": [\"\"]}}}", 1, 44,
        "runner.env.drop[0]", "\"\" " NOT_VARNAME),
    BAD("env_set_not_object", "{\"version\": 1, \"runner\": {\"env\": {\"set\": []}}}", 1, 42,
        "runner.env.set", "expected an object of strings, got an array"),
    BAD("env_set_number", "{\"version\": 1, \"runner\": {\"env\": {\"set\": {\"FOO\": 1}}}}", 1, 50,
        "runner.env.set.FOO", "expected a string, got a number"),
    BAD("env_set_bad_name", "{\"version\": 1, \"runner\": {\"env\": {\"set\": {\"A-B\": \"x\"}}}}",
        1, 43, "runner.env.set.A-B", "\"A-B\" is not a variable name"),
    BAD("mask_glob", "{\"version\": 1, \"runner\": {\"mask\": [\"/a/*\"]}}", 1, 36,
        "runner.mask[0]", "\"/a/*\": " NO_WILDCARD),

    /* ---- mounts, audit ---- */
    BAD("mounts_mode", "{\"version\": 1, \"mounts\": {\"mode\": \"replace\"}}", 1, 35,
        "mounts.mode", "expected one of \"additive\", \"exclusive\", got \"replace\""),
    BAD("extra_not_object", "{\"version\": 1, \"mounts\": {\"extra\": [\"/a\"]}}", 1, 37,
        "mounts.extra[0]", "expected an object, got a string"),
    BAD("extra_no_dst", "{\"version\": 1, \"mounts\": {\"extra\": [{\"src\": \"/a\"}]}}", 1, 37,
        "mounts.extra[0]", "required key \"dst\" is missing"),
    BAD("extra_dst_relative",
        "{\"version\": 1, \"mounts\": {\"extra\": [{\"src\": \"/a\", \"dst\": \"rel\"}]}}", 1, 58,
        "mounts.extra[0].dst", "\"rel\": a mount destination must be absolute"),
    BAD("extra_dst_dot",
        "{\"version\": 1, \"mounts\": {\"extra\": [{\"src\": \"/a\", \"dst\": \"./x\"}]}}", 1, 58,
        "mounts.extra[0].dst", "\"./x\": a mount destination must be absolute"),
    BAD("extra_dst_number",
        "{\"version\": 1, \"mounts\": {\"extra\": [{\"src\": \"/a\", \"dst\": 1}]}}", 1, 58,
        "mounts.extra[0].dst", "expected a string, got a number"),
    BAD("extra_mode",
        "{\"version\": 1, \"mounts\": {\"extra\": [{\"src\": \"/a\", \"dst\": \"/a\", "
        "\"mode\": \"rx\"}]}}",
        1, 72, "mounts.extra[0].mode", "expected one of \"ro\", \"rw\", got \"rx\""),
    BAD("extra_unknown_key",
        "{\"version\": 1, \"mounts\": {\"extra\": [{\"src\": \"/a\", \"dst\": "
        "\"/b\", \"type\": \"bind\"}]}}",
        1, 64, "mounts.extra[0].type", "unknown key (expected one of: src, dst, mode)"),
    BAD("audit_level", "{\"version\": 1, \"audit\": {\"level\": \"verbose\"}}", 1, 35,
        "audit.level", "expected one of \"deny\", \"all\", got \"verbose\""),
    BAD("audit_path_number", "{\"version\": 1, \"audit\": {\"path\": 1}}", 1, 34, "audit.path",
        "expected a string, got a number"),

    /* ---- positions on later lines ---- */
    BAD("line_7_col_12", MULTI_HEAD "  \"exec\": {\"defualt\": \"deny\"}\n}\n", 7, 12,
        "exec.defualt", "unknown key (expected one of: default, rules)"),
    BAD("line_8_col_13", MULTI_HEAD "  \"runner\": {\n    \"root\": \"host\"\n  }\n}\n", 8, 13,
        "runner.root", "expected one of \"mask\", \"surface\", got \"host\""),
    BAD("line_9_array_element",
        MULTI_HEAD
        "  \"net\": {\n    \"connect\": [\n      \"tcp:*:443\", \"udp:*:0x35\"\n    ]\n  "
        "}\n}\n",
        9, 20, "net.connect[1]",
        "\"udp:*:0x35\": port \"0x35\" is not \"*\", a number or a range N-M"),
    BAD("line_3_json_error", "{\n  \"version\": 1,\n  \"surface\": {\"read\": [\"é\"] \"x\"}\n}\n",
        3, 31, "", "invalid JSON: '}' expected near '\"x\"'"),
    BAD("crlf", "{\r\n\"version\": 1,\r\n\"surface\": {\"wrte\": []}}", 3, 13, "surface.wrte",
        KEYS_SURF),
    /* A tab is one column, as in compiler diagnostics. */
    BAD("tabs", "{\n\t\"version\": 1,\n\t\"surface\": {\n\t\t\"wrte\": []}}", 4, 3, "surface.wrte",
        KEYS_SURF),
    /* Columns count characters: "é" is two bytes and one column. */
    BAD("utf8_columns", "{\"version\": 1,\n \"surface\": {\"read\": [\"é\"], \"wrte\": 1}}", 2, 29,
        "surface.wrte", KEYS_SURF),
    BAD("utf8_value", "{\"version\": 1,\n \"surface\": {\"cwd\": \"é\"}}", 2, 21, "surface.cwd",
        ENUM_CWD ", got \"é\""),
    /*
     * BUG: a key written with an escape ("\u0077rte" is "wrte") is not found by the
     * position pass, which keeps key names undecoded; the error points at the
     * enclosing object (2:13) instead of the key (2:14).
     */
    BAD("escaped_key_position", "{\"version\": 1,\n \"surface\": {\"\\u0077rte\": []}}", 2, 14,
        "surface.wrte", KEYS_SURF),
    /* BUG: the same for a variable name in runner.env.set: 1:42, not 1:43. */
    BAD("escaped_env_name_position",
        "{\"version\": 1, \"runner\": {\"env\": {\"set\": {\"A\\u002eB\": \"x\"}}}}", 1, 43,
        "runner.env.set.A.B", "\"A.B\" is not a variable name"),
    /*
     * BUG: a key longer than the 256 bytes of a key path is cut, then not found:
     * the error points at the enclosing object (1:27), not the key (1:28).
     */
    {.name = "long_key_position",
     .make = make_long_key,
     .ret = -EINVAL,
     .line = 1,
     .col = 28,
     .key = "surface." K10 K10 K10 K10 K10 K10 K10 K10 K10 K10 K10 K10 K10 K10 K10 K10 K10 K10 K10
         K10 K10 K10 K10 K10 "kkkkkkk",
     .msg = KEYS_SURF},
};

/* A generated input, freed by teardown_bad() even when an assertion fails. */
static char *made;

static int
teardown_bad(void **state)
{
	free(made);
	made = NULL;
	return 0;
}

static void
test_bad(void **state)
{
	const struct bad_case *c = *state;
	struct policy *p = UNTOUCHED;
	struct policy_diag diag;
	const char *text = c->text;
	size_t len = c->len ? c->len : c->text ? strlen(c->text) : 0;

	if (c->make)
		text = made = c->make(&len);
	memset(&diag, 0x7f, sizeof(diag));
	int r = policy_load_string(text, len, "test.json", &test_env, &p, &diag);
	if (r == 0)
		policy_free(p);
	bool same =
	    r == c->ret && diag.line == c->line && diag.col == c->col &&
	    strcmp(diag.key, c->key) == 0 &&
	    (c->match == EXACT ? strcmp(diag.msg, c->msg) == 0 : !!strstr(diag.msg, c->msg)) &&
	    !(c->lacks && strstr(diag.msg, c->lacks));
	if (!same)
		print_message("    got %d %s:%u:%u [%s] %s\n", r, diag.source, diag.line, diag.col,
		              diag.key, diag.msg);
	assert_int_equal(r, c->ret);
	assert_ptr_equal(p, UNTOUCHED);
	assert_string_equal(diag.source, "test.json");
	assert_string_equal(diag.key, c->key);
	if (c->match == EXACT)
		assert_string_equal(diag.msg, c->msg);
	else
		assert_non_null(strstr(diag.msg, c->msg));
	if (c->lacks)
		assert_null(strstr(diag.msg, c->lacks));
	assert_int_equal(diag.line, c->line);
	assert_int_equal(diag.col, c->col);
}

/* ---- inputs that load ---- */

static struct policy *
load_ok(const char *text, const struct policy_env *env)
{
	struct policy *p = NULL;
	struct policy_diag diag = {0};

	int r = policy_load_string(text, strlen(text), "test.json", env, &p, &diag);
	if (r < 0)
		print_message("    %s:%u:%u [%s] %s\n", diag.source, diag.line, diag.col, diag.key,
		              diag.msg);
	assert_int_equal(r, 0);
	assert_non_null(p);
	return p;
}

static const struct policy_rule *
find_rule(const struct policy *p, const char *path, enum policy_kind kind)
{
	const struct policy_rule *rules;
	size_t n = policy_rules(p, &rules);

	for (size_t i = 0; i < n; i++)
		if (rules[i].kind == kind && strcmp(rules[i].path, path) == 0)
			return &rules[i];
	return NULL;
}

static void
test_default_loads(void **state)
{
	struct policy *p = NULL;
	struct policy_diag diag = {0};
	const struct policy_rule *rules, *r;
	const struct policy_net_rule *net;
	const char *const *notes;
	size_t len;

	assert_int_equal(policy_load_default(&test_env, &p, &diag), 0);
	assert_string_equal(policy_source_name(p), "<default>");
	assert_string_equal(policy_source(p, &len), policy_default_text());
	assert_int_equal(len, strlen(policy_default_text()));
	/* The built-in sets are expanded without notes, whatever variables are unset. */
	assert_int_equal(policy_notes(p, &notes), 0);

	assert_true(policy_rules(p, &rules) > 40);
	assert_int_equal(rules[0].kind, POLICY_KIND_CWD);
	assert_string_equal(rules[0].path, "/home/u/repo");
	assert_int_equal(rules[0].mode, POLICY_MODE_RW);

	static const struct {
		const char *path;
		enum policy_kind kind;
		enum policy_mode mode;
		bool glob;
	} want[] = {
	    {"/tmp", POLICY_KIND_WRITE, POLICY_MODE_RW, false},
	    {"/dev/shm", POLICY_KIND_WRITE, POLICY_MODE_RW, false},
	    {"/home/u/.claude", POLICY_KIND_PRIVATE, POLICY_MODE_RW, false},
	    {"/home/u/.config/github-copilot", POLICY_KIND_PRIVATE, POLICY_MODE_RW, false},
	    {"/home/u/.ssh", POLICY_KIND_DENY, POLICY_MODE_NONE, false},
	    {"/home/u/.pypirc", POLICY_KIND_DENY, POLICY_MODE_NONE, false},
	    {"/**/.env", POLICY_KIND_DENY, POLICY_MODE_NONE, true},
	    {"/**/*.key", POLICY_KIND_DENY, POLICY_MODE_NONE, true},
	    {"/usr", POLICY_KIND_SYSTEM, POLICY_MODE_RO, false},
	    {"/dev/null", POLICY_KIND_SYSTEM, POLICY_MODE_RW, false},
	    {"/etc/shadow", POLICY_KIND_DENY, POLICY_MODE_NONE, false},
	    {"/root", POLICY_KIND_DENY, POLICY_MODE_NONE, false},
	    {"/home/u/.gitconfig", POLICY_KIND_TOOLING, POLICY_MODE_RO, false},
	};
	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		r = find_rule(p, want[i].path, want[i].kind);
		if (!r)
			print_message("    no %s rule for %s\n",
			              policy_kind_to_string(want[i].kind), want[i].path);
		assert_non_null(r);
		assert_int_equal(r->mode, want[i].mode);
		assert_int_equal(r->glob, want[i].glob);
	}
	r = find_rule(p, "/home/u/.ssh", POLICY_KIND_DENY);
	assert_string_equal(r->origin.source, "<default>");
	assert_string_equal(r->origin.key, "surface.deny[0]");
	assert_string_equal(r->origin.text, "~/.ssh");
	assert_int_equal(r->origin.line, 12);
	assert_int_equal(r->origin.col, 7);

	assert_int_equal(policy_exec_default(p), POLICY_EXEC_REDIRECT);
	assert_int_equal(policy_net_rules(p, &net), 3);
	assert_int_equal(net[0].op, POLICY_NET_CONNECT);
	assert_int_equal(net[0].proto, POLICY_NET_TCP);
	assert_int_equal(net[0].family, AF_UNSPEC);
	assert_int_equal(net[0].port_lo, 443);
	assert_int_equal(net[0].port_hi, 443);
	assert_int_equal(policy_runner(p)->root, POLICY_ROOT_MASK);
	assert_int_equal(policy_runner(p)->network, POLICY_NETWORK_NONE);
	assert_int_equal(policy_runner(p)->pids, 1024);
	assert_null(policy_audit(p)->path);
	assert_int_equal(policy_audit(p)->level, POLICY_AUDIT_DENY);
	policy_free(p);
}

/* Every section, every key; the accessors give back what was written. */
static const char full_policy[] =
    "{\n"
    "  \"version\": 1,\n"
    "  \"surface\": {\n"
    "    \"write\": [\"/tmp\", \"~/out/\"],\n"
    "    \"read\": [\"./vendor\", \"${HOME}/docs/../share\"],\n"
    "    \"private\": [\"~/.claude\"],\n"
    "    \"deny\": [\"~/.ssh\", \"**/*.pem\"],\n"
    "    \"system\": false,\n"
    "    \"tooling\": false,\n"
    "    \"cwd\": \"ro\"\n"
    "  },\n"
    "  \"exec\": {\n"
    "    \"default\": \"allow\",\n"
    "    \"rules\": [\n"
    "      {\"path\": \"/usr/bin/git\", \"argv\": [\"push\", \"--force*\"], \"action\": "
    "\"deny\"},\n"
    "      {\"action\": \"redirect\", \"path\": \"/usr/bin/*\"}\n"
    "    ]\n"
    "  },\n"
    "  \"net\": {\n"
    "    \"connect\": [\"tcp:10.1.2.3/8:80-90\", \"udp:[fd00::1]:53\", \"unix:/run/x.sock\",\n"
    "                \"unix:@bus\"],\n"
    "    \"bind\": [\"tcp:localhost:0\"]\n"
    "  },\n"
    "  \"runner\": {\n"
    "    \"root\": \"surface\",\n"
    "    \"network\": \"host\",\n"
    "    \"env\": {\"keep\": [\"PATH\", \"LC_*\"], \"drop\": [\"SECRET_?\"],\n"
    "            \"set\": {\"LANG\": \"C.UTF-8\", \"TERM\": \"\"}},\n"
    "    \"mask\": [\"~/.cache\", \"./build\"],\n"
    "    \"limits\": {\"pids\": 256, \"memory_mb\": 2048, \"timeout_s\": 3600}\n"
    "  },\n"
    "  \"mounts\": {\"mode\": \"exclusive\",\n"
    "             \"extra\": [{\"src\": \"/srv/data\", \"dst\": \"/data\", \"mode\": \"rw\"}]},\n"
    "  \"audit\": {\"path\": \"~/audit.jsonl\", \"level\": \"all\"}\n"
    "}\n";

static enum policy_probe
probe_all_dirs(const char *path, void *userdata)
{
	return POLICY_PROBE_DIR;
}

static void
test_full_policy(void **state)
{
	struct policy *p = load_ok(full_policy, &test_env);
	const struct policy_rule *rules;
	const struct policy_exec_rule *ex;
	const struct policy_net_rule *net;
	const char *const *notes;

	/* The cwd entry first whatever the key order, then the lists in file order. */
	static const struct {
		enum policy_kind kind;
		enum policy_mode mode;
		bool glob;
		const char *path, *key, *text;
		unsigned line, col;
	} want[] = {
	    {POLICY_KIND_CWD, POLICY_MODE_RO, false, "/home/u/repo", "surface.cwd", "cwd", 10, 12},
	    {POLICY_KIND_WRITE, POLICY_MODE_RW, false, "/tmp", "surface.write[0]", "/tmp", 4, 15},
	    {POLICY_KIND_WRITE, POLICY_MODE_RW, false, "/home/u/out", "surface.write[1]", "~/out/",
	     4, 23},
	    {POLICY_KIND_READ, POLICY_MODE_RO, false, "/home/u/repo/vendor", "surface.read[0]",
	     "./vendor", 5, 14},
	    {POLICY_KIND_READ, POLICY_MODE_RO, false, "/home/u/share", "surface.read[1]",
	     "${HOME}/docs/../share", 5, 26},
	    {POLICY_KIND_PRIVATE, POLICY_MODE_RW, false, "/home/u/.claude", "surface.private[0]",
	     "~/.claude", 6, 17},
	    {POLICY_KIND_DENY, POLICY_MODE_NONE, false, "/home/u/.ssh", "surface.deny[0]", "~/.ssh",
	     7, 14},
	    {POLICY_KIND_DENY, POLICY_MODE_NONE, true, "/**/*.pem", "surface.deny[1]", "**/*.pem",
	     7, 24},
	};
	size_t n = policy_rules(p, &rules);
	assert_int_equal(n, ARRAY_SIZE(want));
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(rules[i].kind, want[i].kind);
		assert_int_equal(rules[i].mode, want[i].mode);
		assert_int_equal(rules[i].glob, want[i].glob);
		assert_int_equal(rules[i].private_, want[i].kind == POLICY_KIND_PRIVATE);
		assert_string_equal(rules[i].path, want[i].path);
		assert_string_equal(rules[i].origin.source, "test.json");
		assert_string_equal(rules[i].origin.key, want[i].key);
		assert_string_equal(rules[i].origin.text, want[i].text);
		assert_int_equal(rules[i].origin.line, want[i].line);
		assert_int_equal(rules[i].origin.col, want[i].col);
	}
	assert_int_equal(policy_notes(p, &notes), 0);

	assert_int_equal(policy_exec_default(p), POLICY_EXEC_ALLOW);
	assert_int_equal(policy_exec_rules(p, &ex), 2);
	assert_string_equal(ex[0].path, "/usr/bin/git");
	assert_int_equal(ex[0].argc, 2);
	assert_string_equal(ex[0].argv[0], "push");
	assert_string_equal(ex[0].argv[1], "--force*");
	assert_null(ex[0].argv[2]);
	assert_int_equal(ex[0].action, POLICY_EXEC_DENY);
	assert_string_equal(ex[0].origin.key, "exec.rules[0].path");
	assert_int_equal(ex[0].origin.line, 15);
	assert_int_equal(ex[0].origin.col, 16);
	assert_string_equal(ex[1].path, "/usr/bin/*");
	assert_int_equal(ex[1].argc, 0);
	assert_null(ex[1].argv[0]);
	assert_int_equal(ex[1].action, POLICY_EXEC_REDIRECT);

	/* localhost is two rules, v4 and v6. */
	assert_int_equal(policy_net_rules(p, &net), 6);
	static const uint8_t ten[16] = {10};
	static const uint8_t fd00[16] = {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
	static const uint8_t lo4[16] = {127};
	static const uint8_t lo6[16] = {[15] = 1};
	assert_int_equal(net[0].op, POLICY_NET_CONNECT);
	assert_int_equal(net[0].proto, POLICY_NET_TCP);
	assert_int_equal(net[0].family, AF_INET);
	assert_memory_equal(net[0].addr, ten, 16);
	assert_int_equal(net[0].prefix, 8);
	assert_int_equal(net[0].port_lo, 80);
	assert_int_equal(net[0].port_hi, 90);
	assert_string_equal(net[0].origin.key, "net.connect[0]");
	assert_string_equal(net[0].origin.text, "tcp:10.1.2.3/8:80-90");
	assert_int_equal(net[0].origin.line, 20);
	assert_int_equal(net[0].origin.col, 17);
	assert_int_equal(net[1].proto, POLICY_NET_UDP);
	assert_int_equal(net[1].family, AF_INET6);
	assert_memory_equal(net[1].addr, fd00, 16);
	assert_int_equal(net[1].prefix, 128);
	assert_int_equal(net[1].port_lo, 53);
	assert_int_equal(net[1].port_hi, 53);
	assert_int_equal(net[2].proto, POLICY_NET_UNIX);
	assert_string_equal(net[2].unix_path, "/run/x.sock");
	assert_int_equal(net[3].proto, POLICY_NET_UNIX);
	assert_string_equal(net[3].unix_path, "@bus");
	assert_int_equal(net[3].origin.line, 21);
	for (size_t i = 4; i < 6; i++) {
		assert_int_equal(net[i].op, POLICY_NET_BIND);
		assert_int_equal(net[i].proto, POLICY_NET_TCP);
		assert_int_equal(net[i].port_lo, 0);
		assert_int_equal(net[i].port_hi, 0);
	}
	assert_int_equal(net[4].family, AF_INET);
	assert_memory_equal(net[4].addr, lo4, 16);
	assert_int_equal(net[4].prefix, 8);
	assert_int_equal(net[5].family, AF_INET6);
	assert_memory_equal(net[5].addr, lo6, 16);
	assert_int_equal(net[5].prefix, 128);

	const struct policy_runner *rn = policy_runner(p);
	assert_int_equal(rn->root, POLICY_ROOT_SURFACE);
	assert_int_equal(rn->network, POLICY_NETWORK_HOST);
	assert_string_equal(rn->env_keep[0], "PATH");
	assert_string_equal(rn->env_keep[1], "LC_*");
	assert_null(rn->env_keep[2]);
	assert_string_equal(rn->env_drop[0], "SECRET_?");
	assert_null(rn->env_drop[1]);
	assert_int_equal(rn->n_env_set, 2);
	assert_string_equal(rn->env_set[0].name, "LANG");
	assert_string_equal(rn->env_set[0].value, "C.UTF-8");
	assert_string_equal(rn->env_set[1].name, "TERM");
	assert_string_equal(rn->env_set[1].value, "");
	assert_string_equal(rn->mask[0], "/home/u/.cache");
	assert_string_equal(rn->mask[1], "/home/u/repo/build");
	assert_null(rn->mask[2]);
	assert_int_equal(rn->pids, 256);
	assert_int_equal(rn->memory_mb, 2048);
	assert_int_equal(rn->timeout_s, 3600);

	assert_string_equal(policy_audit(p)->path, "/home/u/audit.jsonl");
	assert_int_equal(policy_audit(p)->level, POLICY_AUDIT_ALL);

	/* mounts.mode is exclusive: the one extra mount is dropped, with a note. */
	struct policy_mount_set *s = NULL;
	assert_int_equal(policy_mounts_build(p, probe_all_dirs, NULL, &s), 0);
	size_t dropped = 0;
	for (size_t i = 0; i < s->n_notes; i++)
		if (s->notes[i].kind == POLICY_NOTE_DROPPED) {
			assert_string_equal(s->notes[i].path, "/data");
			dropped++;
		}
	assert_int_equal(dropped, 1);
	policy_mounts_free(s);
	policy_free(p);
}

/* Entries whose variable is unset or empty are dropped, each with one note. */
static void
test_unset_dropped(void **state)
{
	static const char text[] =
	    "{\"version\": 1,\n"
	    " \"surface\": {\"system\": false, \"tooling\": false,\n"
	    "   \"write\": [\"$UNSET/a\", \"/kept\"], \"read\": [\"${EMPTY}/b\"], \"deny\": "
	    "[\"~/.ssh\"]},\n"
	    " \"exec\": {\"rules\": [{\"path\": \"$NOPE/bin/x\", \"action\": \"deny\"}]},\n"
	    " \"net\": {\"connect\": [\"unix:$XDG_RUNTIME_DIR/bus\", \"tcp:*:443\"]},\n"
	    " \"runner\": {\"mask\": [\"$UNSET\"]},\n"
	    " \"mounts\": {\"extra\": [{\"src\": \"$UNSET\", \"dst\": \"/x\"}, {\"src\": \"/y\", "
	    "\"dst\": \"${EMPTY}\"}]},\n"
	    " \"audit\": {\"path\": \"$LOGDIR/audit.jsonl\"}}\n";
	static const char *const want[] = {
	    "surface.write[0]: \"$UNSET/a\" dropped: $UNSET is unset or empty",
	    "surface.read[0]: \"${EMPTY}/b\" dropped: $EMPTY is unset or empty",
	    "exec.rules[0].path: \"$NOPE/bin/x\" dropped: $NOPE is unset or empty",
	    "net.connect[0]: \"$XDG_RUNTIME_DIR/bus\" dropped: $XDG_RUNTIME_DIR is unset or empty",
	    "runner.mask[0]: \"$UNSET\" dropped: $UNSET is unset or empty",
	    "mounts.extra[0].src: \"$UNSET\" dropped: $UNSET is unset or empty",
	    "mounts.extra[1].dst: \"${EMPTY}\" dropped: $EMPTY is unset or empty",
	    "audit.path: \"$LOGDIR/audit.jsonl\" dropped: $LOGDIR is unset or empty",
	};
	struct policy *p = load_ok(text, &test_env);
	const struct policy_rule *rules;
	const struct policy_exec_rule *ex;
	const struct policy_net_rule *net;
	const char *const *notes;

	size_t n = policy_notes(p, &notes);
	for (size_t i = 0; i < n; i++)
		print_message("    note: %s\n", notes[i]);
	assert_int_equal(n, ARRAY_SIZE(want));
	for (size_t i = 0; i < n; i++)
		assert_string_equal(notes[i], want[i]);
	/* Never a literal "/a" or "/b": what is left is the cwd, /kept and ~/.ssh. */
	assert_int_equal(policy_rules(p, &rules), 3);
	assert_string_equal(rules[0].path, "/home/u/repo");
	assert_string_equal(rules[1].path, "/kept");
	assert_string_equal(rules[2].path, "/home/u/.ssh");
	assert_int_equal(policy_exec_rules(p, &ex), 0);
	assert_int_equal(policy_net_rules(p, &net), 1);
	assert_int_equal(net[0].proto, POLICY_NET_TCP);
	assert_null(policy_runner(p)->mask[0]);
	assert_null(policy_audit(p)->path);
	policy_free(p);

	/* Without HOME, "~" entries go the same way. */
	static char *no_home[] = {"USER=u", NULL};
	const struct policy_env env = {.cwd = "/home/u/repo", .environ = no_home};
	p = load_ok("{\"version\": 1, \"surface\": {\"system\": false, \"tooling\": false,"
	            " \"deny\": [\"~/.ssh\", \"~\"]}}",
	            &env);
	assert_int_equal(policy_notes(p, &notes), 2);
	assert_string_equal(notes[0],
	                    "surface.deny[0]: \"~/.ssh\" dropped: $HOME is unset or empty");
	assert_string_equal(notes[1], "surface.deny[1]: \"~\" dropped: $HOME is unset or empty");
	assert_int_equal(policy_rules(p, &rules), 1);
	policy_free(p);
}

/* A large but valid policy: 100,000 entries load, in order, with their positions. */
static void
test_100000_entries(void **state)
{
	const size_t n = 100000;
	static const char head[] =
	    "{\"version\": 1, \"surface\": {\"system\": false, \"tooling\": false, \"write\": [";
	char *text = malloc(sizeof(head) + n * 16 + 8), *o = text;
	const struct policy_rule *rules;

	assert_non_null(text);
	o = stpcpy(o, head);
	for (size_t i = 0; i < n; i++)
		o += sprintf(o, "%s\"/w/%zu\"", i ? "," : "", i);
	strcpy(o, "]}}");
	struct policy *p = load_ok(text, &test_env);
	assert_int_equal(policy_rules(p, &rules), n + 1);
	assert_string_equal(rules[1].path, "/w/0");
	assert_string_equal(rules[n].path, "/w/99999");
	assert_string_equal(rules[n].origin.key, "surface.write[99999]");
	assert_int_equal(rules[n].origin.line, 1);
	assert_int_equal(rules[n].origin.col, (unsigned)(strstr(text, "\"/w/99999\"") - text) + 1);

	struct policy_verdict v;
	policy_match(p, "/w/54321/x", strlen("/w/54321/x"), POLICY_WRITE, &v);
	assert_true(v.allow);
	assert_string_equal(v.rule->path, "/w/54321");
	policy_free(p);
	free(text);
}

/* ---- policy_load_file ---- */

static void
expect_file_error(const char *filename, int ret, const char *msg)
{
	struct policy *p = UNTOUCHED;
	struct policy_diag diag;

	memset(&diag, 0x7f, sizeof(diag));
	assert_int_equal(policy_load_file(filename, &test_env, &p, &diag), ret);
	assert_ptr_equal(p, UNTOUCHED);
	assert_string_equal(diag.source, filename);
	assert_string_equal(diag.key, "");
	assert_string_equal(diag.msg, msg);
	/* Positions only where the text was read. */
	assert_int_equal(diag.line, ret == -EINVAL ? 1 : 0);
	assert_int_equal(diag.col, ret == -EINVAL ? 1 : 0);
}

static void
test_file_missing(void **state)
{
	expect_file_error(MOAT_TEST_DATA "/no-such-policy.json", -ENOENT,
	                  "No such file or directory");
}

static void
test_file_directory(void **state)
{
	char dir[] = "/tmp/moat-test-parse-XXXXXX";

	assert_non_null(mkdtemp(dir));
	expect_file_error(dir, -EISDIR, "is a directory");
	rmdir(dir);
}

static void
test_file_empty(void **state)
{
	char name[] = "/tmp/moat-test-parse-XXXXXX";
	int fd = mkstemp(name);

	assert_true(fd >= 0);
	close(fd);
	expect_file_error(name, -EINVAL, "invalid JSON: '[' or '{' expected near end of file");
	unlink(name);
}

/* A file that loads, and one whose error names the file and a position in it. */
static void
test_file_contents(void **state)
{
	char name[] = "/tmp/moat-test-parse-XXXXXX";
	struct policy *p = NULL;
	struct policy_diag diag;
	size_t len;
	int fd = mkstemp(name);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, full_policy, strlen(full_policy)), (ssize_t)strlen(full_policy));
	assert_int_equal(policy_load_file(name, &test_env, &p, &diag), 0);
	assert_string_equal(policy_source_name(p), name);
	assert_string_equal(policy_source(p, &len), full_policy);
	assert_int_equal(len, strlen(full_policy));
	p = policy_free(p);
	assert_null(p);

	static const char broken[] = "{\"version\": 1,\n\"exec\": {\"default\": \"run\"}}\n";
	assert_int_equal(ftruncate(fd, 0), 0);
	assert_int_equal(pwrite(fd, broken, strlen(broken), 0), (ssize_t)strlen(broken));
	close(fd);
	p = UNTOUCHED;
	assert_int_equal(policy_load_file(name, &test_env, &p, &diag), -EINVAL);
	assert_ptr_equal(p, UNTOUCHED);
	assert_string_equal(diag.source, name);
	assert_int_equal(diag.line, 2);
	assert_int_equal(diag.col, 21);
	assert_string_equal(diag.key, "exec.default");
	unlink(name);
}

static void
test_free_null(void **state)
{
	assert_null(policy_free(NULL));
}

int
main(void)
{
	static const struct CMUnitTest fixed[] = {
	    cmocka_unit_test(test_default_loads), cmocka_unit_test(test_full_policy),
	    cmocka_unit_test(test_unset_dropped), cmocka_unit_test(test_100000_entries),
	    cmocka_unit_test(test_file_missing),  cmocka_unit_test(test_file_directory),
	    cmocka_unit_test(test_file_empty),    cmocka_unit_test(test_file_contents),
	    cmocka_unit_test(test_free_null),
	};
	size_t n = ARRAY_SIZE(fixed) + ARRAY_SIZE(bad_cases);
	struct CMUnitTest *tests = calloc(n, sizeof(*tests));
	char(*names)[64] = calloc(ARRAY_SIZE(bad_cases), sizeof(*names));

	if (!tests || !names)
		return 1;
	memcpy(tests, fixed, sizeof(fixed));
	for (size_t i = 0; i < ARRAY_SIZE(bad_cases); i++) {
		snprintf(names[i], sizeof(names[i]), "bad/%s", bad_cases[i].name);
		tests[ARRAY_SIZE(fixed) + i] = (struct CMUnitTest){
		    .name = names[i],
		    .test_func = test_bad,
		    .teardown_func = teardown_bad,
		    .initial_state = (void *)&bad_cases[i],
		};
	}
	int r = _cmocka_run_group_tests("parse", tests, n, NULL, NULL);
	free(tests);
	free(names);
	return r;
}

/* SPDX-License-Identifier: MIT */
/*
 * policy_exec_decide(): the default action, exact and glob binary paths, argv
 * patterns as an ordered subsequence (argv[0] not matched), a matching deny rule
 * winning over an earlier allow, the first matching non-deny rule otherwise, and
 * rules whose path names an unset variable dropped.
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

static char *const test_environ[] = {"HOME=/home/u", "TOOLS=/opt/tools", "EMPTY=", NULL};
static const struct policy_env test_env = {.cwd = "/home/u/repo", .environ = test_environ};

enum pol {
	P_NONE,     /* no exec section */
	P_ALLOW,    /* default allow, no rules */
	P_DENY,     /* default deny, no rules */
	P_RULES,    /* default redirect, the rules below */
	P_DEFAULTS, /* the default policy */
	P_MAX,
};

#define OFF "\"surface\": {\"system\": false, \"tooling\": false}"

/* The index of each rule in policy_exec_rules() is in the comment before it. */
static const char *const policy_texts[P_MAX] = {
    [P_NONE] = "{\"version\": 1, " OFF "}",
    [P_ALLOW] = "{\"version\": 1, " OFF ", \"exec\": {\"default\": \"allow\"}}",
    [P_DENY] = "{\"version\": 1, " OFF ", \"exec\": {\"default\": \"deny\", \"rules\": []}}",
    [P_RULES] =
        "{\"version\": 1, " OFF ", \"exec\": {\"default\": \"redirect\", \"rules\": [\n"
        /* 0 */ "{\"path\": \"/usr/bin/git\", \"argv\": [\"status\"], \"action\": \"redirect\"},\n"
        /* 1 */ "{\"path\": \"/usr/bin/*\", \"action\": \"allow\"},\n"
        /* 2 */ "{\"path\": \"/usr/bin/git\", \"argv\": [\"push\", \"--force*\"],"
        "  \"action\": \"deny\"},\n"
        /* 3 */ "{\"path\": \"/usr/local/bin/tool\", \"action\": \"redirect\"},\n"
        /* - */ "{\"path\": \"$NOPE/bin/x\", \"action\": \"deny\"},\n"
        /* - */ "{\"path\": \"${EMPTY}/bin/y\", \"action\": \"deny\"},\n"
        /* 4 */ "{\"path\": \"/opt/**/run\", \"action\": \"deny\"},\n"
        /* 5 */ "{\"path\": \"/bin/env\", \"argv\": [\"env\"], \"action\": \"deny\"},\n"
        /* 6 */ "{\"path\": \"/bin/env\", \"action\": \"allow\"},\n"
        /* 7 */ "{\"path\": \"$TOOLS/make\", \"argv\": [\"-?\", \"all\"], \"action\": \"allow\"},\n"
        /* 8 */ "{\"path\": \"/bin/rm\", \"argv\": [\"-r*\", \"/\"], \"action\": \"deny\"},\n"
        /* 9 */ "{\"path\": \"/bin/rm\", \"argv\": [], \"action\": \"allow\"},\n"
        /* 10 */ "{\"path\": \"/bin/tw?\", \"argv\": [\"x\", \"x\"], \"action\": \"allow\"},\n"
        /* 11 */ "{\"path\": \"./scripts/*.sh\", \"action\": \"allow\"},\n"
        /* 12 */ "{\"path\": \"~/bin/deploy\", \"action\": \"deny\"}\n"
        "]}}",
    [P_DEFAULTS] = NULL,
};

static struct policy *policies[P_MAX];

#define NO_RULE (-1)

struct exec_case {
	enum pol pol;
	const char *path;
	const char *argv[8]; /* NULL-terminated; argv[0] NULL: pass argv = NULL */
	enum policy_exec_action action;
	int rule; /* index into policy_exec_rules(), or NO_RULE */
};

#define REDIRECT POLICY_EXEC_REDIRECT
#define ALLOW    POLICY_EXEC_ALLOW
#define DENY     POLICY_EXEC_DENY

/* clang-format off */
static const struct exec_case exec_cases[] = {
    /* The default action, when nothing matches or there are no rules. */
    {P_NONE, "/usr/bin/git", {"git", "status", NULL}, REDIRECT, NO_RULE},
    {P_ALLOW, "/usr/bin/git", {"git", "push", NULL}, ALLOW, NO_RULE},
    {P_ALLOW, "/bin/sh", {NULL}, ALLOW, NO_RULE},
    {P_DENY, "/usr/bin/git", {"git", NULL}, DENY, NO_RULE},
    {P_DEFAULTS, "/usr/bin/git", {"git", "push", "--force", NULL}, REDIRECT, NO_RULE},
    {P_RULES, "/bin/sh", {"sh", "-c", "true", NULL}, REDIRECT, NO_RULE},
    /* First matching non-deny rule: redirect (0) before the allow glob (1). */
    {P_RULES, "/usr/bin/git", {"git", "status", NULL}, REDIRECT, 0},
    {P_RULES, "/usr/bin/git", {"git", "-C", "x", "status", "-s", NULL}, REDIRECT, 0},
    {P_RULES, "/usr/bin/git", {"git", "push", NULL}, ALLOW, 1},
    {P_RULES, "/usr/bin/git", {"git", NULL}, ALLOW, 1},
    {P_RULES, "/usr/bin/git", {NULL}, ALLOW, 1},
    /* A matching deny (2) wins over the earlier allow (1). */
    {P_RULES, "/usr/bin/git", {"git", "push", "--force", NULL}, DENY, 2},
    {P_RULES, "/usr/bin/git", {"git", "-C", "x", "push", "origin", "--force-with-lease", NULL},
     DENY, 2},
    {P_RULES, "/usr/bin/git", {"git", "push", "-f", "--force", NULL}, DENY, 2},
    /* The patterns in order: "--force" before "push" is not a match. */
    {P_RULES, "/usr/bin/git", {"git", "--force", "push", NULL}, ALLOW, 1},
    {P_RULES, "/usr/bin/git", {"git", "push", "--forc", NULL}, ALLOW, 1},
    {P_RULES, "/usr/bin/git", {"git", "pushx", "--force", NULL}, ALLOW, 1},
    /* Glob paths: one component for "*", none or more for "**". */
    {P_RULES, "/usr/bin/ls", {"ls", "-l", NULL}, ALLOW, 1},
    {P_RULES, "/usr/bin/.hidden", {"x", NULL}, ALLOW, 1},
    {P_RULES, "/usr/bin/sub/ls", {"ls", NULL}, REDIRECT, NO_RULE},
    {P_RULES, "/usr/bin", {"bin", NULL}, REDIRECT, NO_RULE},
    {P_RULES, "/usr/binx/ls", {"ls", NULL}, REDIRECT, NO_RULE},
    {P_RULES, "/usr/bin/../bin/ls", {"ls", NULL}, REDIRECT, NO_RULE},
    {P_RULES, "/opt/run", {"run", NULL}, DENY, 4},
    {P_RULES, "/opt/a/b/c/run", {"run", NULL}, DENY, 4},
    {P_RULES, "/opt/a/run/x", {"x", NULL}, REDIRECT, NO_RULE},
    {P_RULES, "/opt/a/runner", {"runner", NULL}, REDIRECT, NO_RULE},
    /* Exact paths are exact. */
    {P_RULES, "/usr/local/bin/tool", {"tool", NULL}, REDIRECT, 3},
    {P_RULES, "/usr/local/bin/tool2", {"tool2", NULL}, REDIRECT, NO_RULE},
    {P_RULES, "/usr/local/bin", {"bin", NULL}, REDIRECT, NO_RULE},
    /* argv[0] is not matched. */
    {P_RULES, "/bin/env", {"env", NULL}, ALLOW, 6},
    {P_RULES, "/bin/env", {"env", "FOO=1", "env", NULL}, DENY, 5},
    {P_RULES, "/bin/env", {NULL}, ALLOW, 6},
    /* "?" and "*" within an argument; "$VAR" in the path. */
    {P_RULES, "/opt/tools/make", {"make", "-j", "all", NULL}, ALLOW, 7},
    {P_RULES, "/opt/tools/make", {"make", "-j4", "all", NULL}, REDIRECT, NO_RULE},
    {P_RULES, "/opt/tools/make", {"make", "all", "-j", NULL}, REDIRECT, NO_RULE},
    {P_RULES, "/bin/rm", {"rm", "-rf", "/", NULL}, DENY, 8},
    {P_RULES, "/bin/rm", {"rm", "-r", "-f", "/", NULL}, DENY, 8},
    {P_RULES, "/bin/rm", {"rm", "-rf", "/tmp", NULL}, ALLOW, 9},
    {P_RULES, "/bin/rm", {"rm", "/", "-rf", NULL}, ALLOW, 9},
    /* A pattern given twice needs two arguments. */
    {P_RULES, "/bin/twx", {"twx", "x", NULL}, REDIRECT, NO_RULE},
    {P_RULES, "/bin/twx", {"twx", "x", "y", "x", NULL}, ALLOW, 10},
    {P_RULES, "/bin/tw", {"tw", "x", "x", NULL}, REDIRECT, NO_RULE},
    /* Relative and "~" rule paths are made absolute. */
    {P_RULES, "/home/u/repo/scripts/build.sh", {"build.sh", NULL}, ALLOW, 11},
    {P_RULES, "/home/u/bin/deploy", {"deploy", NULL}, DENY, 12},
    /* Dropped rules match nothing: not "/bin/x", not "/bin/y". */
    {P_RULES, "/bin/x", {"x", NULL}, REDIRECT, NO_RULE},
    {P_RULES, "/bin/y", {"y", NULL}, REDIRECT, NO_RULE},
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

static void
test_exec_table(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(exec_cases); i++) {
		const struct exec_case *c = &exec_cases[i];
		const struct policy_exec_rule *rules, *rule = (const void *)&rule;
		const char *const *argv = c->argv[0] ? c->argv : NULL;

		print_message("row %zu: %s %s\n", i, c->path, c->argv[1] ? c->argv[1] : "");
		size_t n = policy_exec_rules(policies[c->pol], &rules);
		enum policy_exec_action a =
		    policy_exec_decide(policies[c->pol], c->path, argv, &rule);
		assert_int_equal(a, c->action);
		if (c->rule == NO_RULE) {
			assert_null(rule);
			assert_int_equal(a, policy_exec_default(policies[c->pol]));
		} else {
			assert_true((size_t)c->rule < n);
			assert_ptr_equal(rule, &rules[c->rule]);
			assert_int_equal(rule->action, a);
		}
		/* ret_rule is optional. */
		assert_int_equal(policy_exec_decide(policies[c->pol], c->path, argv, NULL), a);
	}
}

static void
test_exec_defaults(void **state)
{
	assert_int_equal(policy_exec_default(policies[P_NONE]), POLICY_EXEC_REDIRECT);
	assert_int_equal(policy_exec_default(policies[P_ALLOW]), POLICY_EXEC_ALLOW);
	assert_int_equal(policy_exec_default(policies[P_DENY]), POLICY_EXEC_DENY);
	assert_int_equal(policy_exec_default(policies[P_RULES]), POLICY_EXEC_REDIRECT);
	assert_int_equal(policy_exec_default(policies[P_DEFAULTS]), POLICY_EXEC_REDIRECT);
}

/* The rules as loaded: dropped ones gone, paths expanded, origins kept. */
static void
test_exec_rules_loaded(void **state)
{
	static const char *const paths[] = {
	    "/usr/bin/git",
	    "/usr/bin/*",
	    "/usr/bin/git",
	    "/usr/local/bin/tool",
	    "/opt/**/run",
	    "/bin/env",
	    "/bin/env",
	    "/opt/tools/make",
	    "/bin/rm",
	    "/bin/rm",
	    "/bin/tw?",
	    "/home/u/repo/scripts/*.sh",
	    "/home/u/bin/deploy",
	};
	const struct policy_exec_rule *rules;
	const char *const *notes;

	assert_int_equal(policy_exec_rules(policies[P_RULES], &rules), ARRAY_SIZE(paths));
	for (size_t i = 0; i < ARRAY_SIZE(paths); i++)
		assert_string_equal(rules[i].path, paths[i]);
	assert_int_equal(rules[2].argc, 2);
	assert_string_equal(rules[2].argv[0], "push");
	assert_string_equal(rules[2].argv[1], "--force*");
	assert_null(rules[2].argv[2]);
	assert_int_equal(rules[1].argc, 0);
	assert_non_null(rules[1].argv);
	assert_null(rules[1].argv[0]);
	assert_string_equal(rules[7].origin.text, "$TOOLS/make");
	assert_string_equal(rules[7].origin.key, "exec.rules[9].path");
	assert_int_equal(rules[7].origin.line, 11);

	assert_int_equal(policy_notes(policies[P_RULES], &notes), 2);
	assert_string_equal(notes[0],
	                    "exec.rules[4].path: \"$NOPE/bin/x\" dropped: $NOPE is unset or empty");
	assert_string_equal(
	    notes[1], "exec.rules[5].path: \"${EMPTY}/bin/y\" dropped: $EMPTY is unset or empty");
	assert_int_equal(policy_exec_rules(policies[P_DEFAULTS], &rules), 0);
}

/* Load errors in exec rules name the key. */
static void
test_exec_load_errors(void **state)
{
	static const struct {
		const char *rules;
		const char *key;
		const char *msg;
	} cases[] = {
	    {"[{\"path\": \"/bin/x\"}]", "exec.rules[0]", "required key \"action\" is missing"},
	    {"[{\"action\": \"allow\"}]", "exec.rules[0]", "required key \"path\" is missing"},
	    {"[{\"path\": \"/bin/x\", \"action\": \"run\"}]", "exec.rules[0].action",
	     "expected one of \"redirect\", \"allow\", \"deny\", got \"run\""},
	    {"[{\"path\": \"/bin/x\", \"action\": \"allow\", \"args\": []}]", "exec.rules[0].args",
	     "unknown key"},
	    {"[{\"path\": \"/bin/x\", \"argv\": \"-f\", \"action\": \"allow\"}]",
	     "exec.rules[0].argv", "expected an array of strings, got a string"},
	    {"[{\"path\": \"/bin/x\", \"argv\": [1], \"action\": \"allow\"}]",
	     "exec.rules[0].argv[0]", "expected a string, got a number"},
	    {"[{\"path\": \"/bin/x\", \"action\": \"allow\"}, {\"path\": \"~bob/x\","
	     " \"action\": \"deny\"}]",
	     "exec.rules[1].path", "\"~user\" is not supported"},
	    {"{}", "exec.rules", "expected an array of rules, got an object"},
	};
	char text[1024];

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct policy_diag diag = {0};
		struct policy *p = NULL;

		snprintf(text, sizeof(text), "{\"version\": 1, \"exec\": {\"rules\": %s}}",
		         cases[i].rules);
		print_message("%s\n", text);
		assert_int_equal(
		    policy_load_string(text, strlen(text), "test", &test_env, &p, &diag), -EINVAL);
		assert_null(p);
		assert_string_equal(diag.key, cases[i].key);
		assert_non_null(strstr(diag.msg, cases[i].msg));
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_exec_table),
	    cmocka_unit_test(test_exec_defaults),
	    cmocka_unit_test(test_exec_rules_loaded),
	    cmocka_unit_test(test_exec_load_errors),
	};

	return cmocka_run_group_tests(tests, load_all, free_all);
}

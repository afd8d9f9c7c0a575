/* SPDX-License-Identifier: MIT */
/* policy_path_normalize() and policy_path_expand(): exact outputs and return values. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "moat/macro.h"
#include "moat/policy.h"

#define BIG 4096

/* A canary, so that a test can tell "left alone" from "written". */
#define UNTOUCHED "\x7f\x7f\x7f"

/* ---- policy_path_normalize ---- */

struct norm_case {
	const char *base;
	const char *path;
	size_t size; /* 0: BIG */
	int ret;     /* the length, or a negative errno */
	const char *out;
};

static const struct norm_case norm_cases[] = {
    /* Already canonical. */
    {NULL, "/", 0, 1, "/"},
    {NULL, "/a", 0, 2, "/a"},
    {NULL, "/a/b/c", 0, 6, "/a/b/c"},
    /* "." and empty components go. */
    {NULL, "/.", 0, 1, "/"},
    {NULL, "/./a/./b/.", 0, 4, "/a/b"},
    {NULL, "//a//b///c", 0, 6, "/a/b/c"},
    {NULL, "///", 0, 1, "/"},
    /* Trailing '/'. */
    {NULL, "/a/b/", 0, 4, "/a/b"},
    {NULL, "/a/b//", 0, 4, "/a/b"},
    /* ".." folds, never above "/". */
    {NULL, "/a/b/..", 0, 2, "/a"},
    {NULL, "/a/b/../c", 0, 4, "/a/c"},
    {NULL, "/a/../../b", 0, 2, "/b"},
    {NULL, "/..", 0, 1, "/"},
    {NULL, "/../../..", 0, 1, "/"},
    {NULL, "/a/..", 0, 1, "/"},
    {NULL, "/a/b/../../..", 0, 1, "/"},
    /* Only exactly "." and ".." are special. */
    {NULL, "/a/.../b", 0, 8, "/a/.../b"},
    {NULL, "/..a/.b/b..", 0, 11, "/..a/.b/b.."},
    /* Relative paths join the base, which is normalised too. */
    {"/home/u", "x/y", 0, 11, "/home/u/x/y"},
    {"/home/u", ".", 0, 7, "/home/u"},
    {"/home/u", "./x", 0, 9, "/home/u/x"},
    {"/home/u", "../x", 0, 7, "/home/x"},
    {"/home/u", "../../../../x", 0, 2, "/x"},
    {"/", "x", 0, 2, "/x"},
    {"//home//u/./", "x", 0, 9, "/home/u/x"},
    {"/home/u/", "x/", 0, 9, "/home/u/x"},
    /* An absolute path ignores the base, whatever it is. */
    {"/home/u", "/etc", 0, 4, "/etc"},
    {"relative", "/etc", 0, 4, "/etc"},
    {NULL, "/etc", 0, 4, "/etc"},
    /* Errors. */
    {"/home/u", "", 0, -EINVAL, NULL},
    {NULL, "", 0, -EINVAL, NULL},
    {"relative", "x", 0, -EINVAL, NULL},
    {"", "x", 0, -EINVAL, NULL},
    {NULL, "x", 0, -EINVAL, NULL},
    /* Sizes: the NUL must fit. */
    {NULL, "/abc", 5, 4, "/abc"},
    {NULL, "/abc", 4, -ENAMETOOLONG, NULL},
    {NULL, "/a/b", 4, -ENAMETOOLONG, NULL},
    {NULL, "/", 2, 1, "/"},
    {NULL, "/", 1, -ENAMETOOLONG, NULL},
    {"/home/u", "x", 10, 9, "/home/u/x"},
    {"/home/u", "x", 9, -ENAMETOOLONG, NULL},
    {"/home/user", "x", 8, -ENAMETOOLONG, NULL},
};

static void
test_normalize_table(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(norm_cases); i++) {
		const struct norm_case *c = &norm_cases[i];
		char out[BIG];
		size_t size = c->size ? c->size : sizeof(out);

		print_message("normalize(%s, \"%s\", %zu)\n", c->base ? c->base : "NULL", c->path,
		              size);
		int r = policy_path_normalize(c->base, c->path, out, size);
		assert_int_equal(r, c->ret);
		if (c->out) {
			assert_string_equal(out, c->out);
			assert_int_equal(strlen(out), (size_t)r);
		}
	}
}

static void
test_normalize_null_path(void **state)
{
	char out[16];

	assert_int_equal(policy_path_normalize("/", NULL, out, sizeof(out)), -EINVAL);
}

/* A 4095-byte result fits a 4096-byte buffer; one byte more does not. */
static void
test_normalize_long(void **state)
{
	char in[BIG + 8], out[BIG];

	in[0] = '/';
	memset(in + 1, 'a', 4094);
	in[4095] = '\0';
	assert_int_equal(policy_path_normalize(NULL, in, out, sizeof(out)), 4095);
	assert_string_equal(out, in);

	in[4095] = 'a';
	in[4096] = '\0';
	assert_int_equal(policy_path_normalize(NULL, in, out, sizeof(out)), -ENAMETOOLONG);

	/* Trailing noise that folds away costs nothing. */
	in[4095] = '\0';
	strcat(in, "/./");
	assert_int_equal(policy_path_normalize(NULL, in, out, sizeof(out)), 4095);
}

/* ---- policy_path_expand ---- */

static char *const env[] = {
    "HOMEX=/wrong",           "HOME=/home/u", "A=/a",   "B=/b", "EMPTY=",
    "LONG=/0123456789abcdef", "_X1=/x1",      "AB=/ab", NULL,
};

struct expand_case {
	const char *in;
	size_t size; /* 0: BIG */
	int ret;
	const char *out;   /* checked when ret > 0 */
	const char *unset; /* checked when ret == 0 */
	const char *err;   /* a substring of *err when ret == -EINVAL; NULL: *err is NULL */
};

static const struct expand_case expand_cases[] = {
    /* Nothing to expand. */
    {"/etc/passwd", 0, 11, "/etc/passwd", NULL, NULL},
    {"relative/x", 0, 10, "relative/x", NULL, NULL},
    {"/a/~/b", 0, 6, "/a/~/b", NULL, NULL},
    /* "~" at the start only. */
    {"~", 0, 7, "/home/u", NULL, NULL},
    {"~/x", 0, 9, "/home/u/x", NULL, NULL},
    {"~/", 0, 8, "/home/u/", NULL, NULL},
    {"~user", 0, -EINVAL, NULL, NULL, "~user"},
    {"~root/x", 0, -EINVAL, NULL, NULL, "~user"},
    {"~$HOME", 0, -EINVAL, NULL, NULL, "~user"},
    /* Variables. */
    {"$HOME", 0, 7, "/home/u", NULL, NULL},
    {"${HOME}", 0, 7, "/home/u", NULL, NULL},
    {"$HOME/.ssh", 0, 12, "/home/u/.ssh", NULL, NULL},
    {"$A$B", 0, 4, "/a/b", NULL, NULL},
    {"${A}x", 0, 3, "/ax", NULL, NULL},
    {"${A}${B}", 0, 4, "/a/b", NULL, NULL},
    {"$AB", 0, 3, "/ab", NULL, NULL},
    {"${A}B", 0, 3, "/aB", NULL, NULL},
    {"$_X1/y", 0, 5, "/x1/y", NULL, NULL},
    {"/pre/$A/post", 0, 12, "/pre//a/post", NULL, NULL},
    {"~/$A", 0, 10, "/home/u//a", NULL, NULL},
    /* A name ends at the first character that cannot be in one. */
    {"$A.b", 0, 4, "/a.b", NULL, NULL},
    {"$A-b", 0, 4, "/a-b", NULL, NULL},
    /* A prefix of a set name is its own name. */
    {"$HOM", 0, 0, NULL, "HOM", NULL},
    /* Unset or empty: 0, and the name. */
    {"$NOPE", 0, 0, NULL, "NOPE", NULL},
    {"${NOPE}/x", 0, 0, NULL, "NOPE", NULL},
    {"/x/$NOPE/y", 0, 0, NULL, "NOPE", NULL},
    {"$A/$NOPE", 0, 0, NULL, "NOPE", NULL},
    {"$EMPTY", 0, 0, NULL, "EMPTY", NULL},
    {"${EMPTY}/x", 0, 0, NULL, "EMPTY", NULL},
    /* Malformed. */
    {"${", 0, -EINVAL, NULL, NULL, "unterminated"},
    {"${HOME", 0, -EINVAL, NULL, NULL, "unterminated"},
    {"/x/${HOME/y", 0, -EINVAL, NULL, NULL, "unterminated"},
    {"${}", 0, -EINVAL, NULL, NULL, "empty variable name"},
    {"/x/${}/y", 0, -EINVAL, NULL, NULL, "empty variable name"},
    {"$", 0, -EINVAL, NULL, NULL, "\"$\" must be followed"},
    {"/x/$", 0, -EINVAL, NULL, NULL, "\"$\" must be followed"},
    {"$1", 0, -EINVAL, NULL, NULL, "\"$\" must be followed"},
    {"$/x", 0, -EINVAL, NULL, NULL, "\"$\" must be followed"},
    {"$$", 0, -EINVAL, NULL, NULL, "\"$\" must be followed"},
    {"${1A}", 0, -EINVAL, NULL, NULL, "invalid variable name"},
    {"${A-b}", 0, -EINVAL, NULL, NULL, "invalid variable name"},
    {"", 0, -EINVAL, NULL, NULL, "empty path"},
    /* Sizes: the NUL must fit. */
    {"$LONG", 18, 17, "/0123456789abcdef", NULL, NULL},
    {"$LONG", 17, -ENAMETOOLONG, NULL, NULL, NULL},
    {"$LONG/x", 19, -ENAMETOOLONG, NULL, NULL, NULL},
    {"~", 8, 7, "/home/u", NULL, NULL},
    {"~", 7, -ENAMETOOLONG, NULL, NULL, NULL},
    {"~/x", 9, -ENAMETOOLONG, NULL, NULL, NULL},
    {"/abc", 4, -ENAMETOOLONG, NULL, NULL, NULL},
    {"/abc", 1, -ENAMETOOLONG, NULL, NULL, NULL},
};

static void
check_expand(const struct expand_case *c, char *const *envp)
{
	char out[BIG], unset[64] = UNTOUCHED;
	const char *err = "not reset";
	size_t size = c->size ? c->size : sizeof(out);

	print_message("expand(\"%s\", %zu)\n", c->in, size);
	int r = policy_path_expand(c->in, envp, out, size, unset, sizeof(unset), &err);
	assert_int_equal(r, c->ret);
	if (r > 0) {
		assert_string_equal(out, c->out);
		assert_int_equal(strlen(out), (size_t)r);
		assert_null(err);
		assert_string_equal(unset, UNTOUCHED);
	} else if (r == 0) {
		assert_string_equal(unset, c->unset);
		assert_null(err);
	} else if (r == -EINVAL) {
		assert_non_null(err);
		assert_non_null(strstr(err, c->err));
	}
}

static void
test_expand_table(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(expand_cases); i++)
		check_expand(&expand_cases[i], env);
}

/* Without HOME, "~" is an unset variable like any other; so is an empty HOME. */
static void
test_expand_no_home(void **state)
{
	static char *const no_home[] = {"A=/a", NULL};
	static char *const empty_home[] = {"HOME=", "A=/a", NULL};
	static const struct expand_case cases[] = {
	    {"~", 0, 0, NULL, "HOME", NULL},
	    {"~/x", 0, 0, NULL, "HOME", NULL},
	    {"$HOME/x", 0, 0, NULL, "HOME", NULL},
	    {"$A", 0, 2, "/a", NULL, NULL},
	    {"~user", 0, -EINVAL, NULL, NULL, "~user"},
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		check_expand(&cases[i], no_home);
		check_expand(&cases[i], empty_home);
		if (strcmp(cases[i].in, "$A") != 0)
			check_expand(&cases[i], NULL);
	}
}

/* A NULL environ is an empty one. */
static void
test_expand_null_environ(void **state)
{
	char out[64], unset[64] = "";
	const char *err;

	assert_int_equal(
	    policy_path_expand("$A/x", NULL, out, sizeof(out), unset, sizeof(unset), &err), 0);
	assert_string_equal(unset, "A");
	assert_int_equal(policy_path_expand("/plain", NULL, out, sizeof(out), NULL, 0, &err), 6);
	assert_string_equal(out, "/plain");
}

/* ret_unset may be NULL, and a long name is cut to its buffer. */
static void
test_expand_unset_buffer(void **state)
{
	char out[64], unset[5] = "";
	const char *err;

	assert_int_equal(policy_path_expand("$NOPE", env, out, sizeof(out), NULL, 0, &err), 0);
	assert_int_equal(policy_path_expand("$VERY_LONG_NAME", env, out, sizeof(out), unset,
	                                    sizeof(unset), &err),
	                 0);
	assert_string_equal(unset, "VERY");
}

/* A value that fills the buffer exactly fits; a size of zero never does. */
static void
test_expand_sizes(void **state)
{
	static char value[BIG + 16];
	char *big_env[] = {value, NULL};
	char out[BIG], unset[16];
	const char *err;

	strcpy(value, "V=/");
	memset(value + 3, 'v', 4094);
	value[3 + 4094] = '\0'; /* V is 4095 bytes */
	assert_int_equal(
	    policy_path_expand("$V", big_env, out, sizeof(out), unset, sizeof(unset), &err), 4095);
	assert_int_equal(
	    policy_path_expand("$V/", big_env, out, sizeof(out), unset, sizeof(unset), &err),
	    -ENAMETOOLONG);
	assert_int_equal(
	    policy_path_expand("$V$V", big_env, out, sizeof(out), unset, sizeof(unset), &err),
	    -ENAMETOOLONG);
	assert_int_equal(policy_path_expand("/x", big_env, out, 0, unset, sizeof(unset), &err),
	                 -ENAMETOOLONG);
}

/*
 * Whether an entry is well-formed must not depend on the environment: "$NOPE/${"
 * is malformed whether or not NOPE is set, and "$HOME/${" already says -EINVAL.
 */
static void
test_expand_syntax_checked_when_unset(void **state)
{
	static const struct expand_case cases[] = {
	    {"$HOME/${", 0, -EINVAL, NULL, NULL, "unterminated"},
	    {"$NOPE/${", 0, -EINVAL, NULL, NULL, "unterminated"},
	    {"$NOPE/$1", 0, -EINVAL, NULL, NULL, "\"$\" must be followed"},
	    {"${NOPE}${}", 0, -EINVAL, NULL, NULL, "empty variable name"},
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		check_expand(&cases[i], env);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_normalize_table),
	    cmocka_unit_test(test_normalize_null_path),
	    cmocka_unit_test(test_normalize_long),
	    cmocka_unit_test(test_expand_table),
	    cmocka_unit_test(test_expand_no_home),
	    cmocka_unit_test(test_expand_null_environ),
	    cmocka_unit_test(test_expand_unset_buffer),
	    cmocka_unit_test(test_expand_sizes),
	    cmocka_unit_test(test_expand_syntax_checked_when_unset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

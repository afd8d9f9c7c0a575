/* SPDX-License-Identifier: MIT */
/*
 * policy_glob_match(): "*" and "?" within a component, "**" for zero or more
 * components, and a match of an ancestor counting (a deny glob covers the subtree).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "moat/macro.h"
#include "moat/policy.h"

struct glob_case {
	const char *pattern;
	const char *path;
	bool match;
};

static const struct glob_case glob_cases[] = {
    /* "**" then a name: anywhere, and what lies below. */
    {"**/.env", "/a/.env", true},
    {"**/.env", "/.env", true},
    {"**/.env", "/a/b/c/d/.env", true},
    {"**/.env", "/a/b/.env/x", true},
    {"**/.env", "/a/.env/x/y/z", true},
    {"**/.env", "/a/.envx", false},
    {"**/.env", "/a/x.env", false},
    {"**/.env", "/a/.env.local", false},
    {"**/.env", "/", false},
    {"**/.env", "/a", false},
    {"**/.env.*", "/a/.env.local", true},
    {"**/.env.*", "/a/.env", false},
    {"**/*.pem", "/x.pem", true},
    {"**/*.pem", "/a/b/c.pem", true},
    {"**/*.pem", "/a/.pem", true},
    {"**/*.pem", "/a/b.pem/c", true},
    {"**/*.pem", "/a/b.pem.bak", false},
    {"**/*.pem", "/a/pem", false},
    {"**/*.pem", "/a/b.PEM", false},
    /* A wildcard component between literal ones. */
    {"/home/u/.config/*/credentials*", "/home/u/.config/gcloud/credentials.db", true},
    {"/home/u/.config/*/credentials*", "/home/u/.config/gcloud/credentials", true},
    {"/home/u/.config/*/credentials*", "/home/u/.config/gcloud/credentials.d/x", true},
    {"/home/u/.config/*/credentials*", "/home/u/.config/credentials", false},
    {"/home/u/.config/*/credentials*", "/home/u/.config/a/b/credentials", false},
    {"/home/u/.config/*/credentials*", "/home/u/.config/gcloud/my-credentials", false},
    {"/home/u/.config/*/credentials*", "/home/u/.config/gcloud", false},
    {"/home/u/.config/*/credentials*", "/home/v/.config/gcloud/credentials", false},
    /* "?" is exactly one character. */
    {"/a/?", "/a/b", true},
    {"/a/?", "/a/.", false}, /* not canonical */
    {"/a/?", "/a/bc", false},
    {"/a/?", "/a", false},
    {"/a/b?d", "/a/bcd", true},
    {"/a/b?d", "/a/bd", false},
    {"/a/b?d", "/a/bccd", false},
    {"/a/??", "/a/.x", true},
    /* "*" matches a leading dot, and the empty string. */
    {"/a/*", "/a/.hidden", true},
    {"/a/*", "/a/visible", true},
    {"/a/*", "/a", false},
    {"/a/.*", "/a/.ssh", true},
    {"/a/x*", "/a/x", true},
    {"/a/*x*", "/a/x", true},
    {"/a/*x", "/a/ax/b", true},
    {"/a/*", "/b/c", false},
    {"/*", "/", false},
    {"/*", "/anything", true},
    /* "*" never crosses a '/'. */
    {"/a*c", "/ab/c", false},
    {"/a/*/c", "/a/b/x/c", false},
    /* "**" for zero components. */
    {"/a/**/b", "/a/b", true},
    {"/a/**/b", "/a/x/b", true},
    {"/a/**/b", "/a/x/y/z/b", true},
    {"/a/**/b", "/a/x/y/z/c", false},
    {"/a/**", "/a", true},
    {"/a/**", "/a/b/c", true},
    {"/a/**", "/ab", false},
    {"**", "/", true},
    {"**", "/x/y", true},
    /* "**" inside a component is two stars, not a component wildcard. */
    {"/a/**b", "/a/xb", true},
    {"/a/**b", "/a/x/b", false},
    /* Several "**". */
    {"**/a/**/b", "/x/a/y/z/b", true},
    {"**/a/**/b", "/a/b", true},
    {"**/a/**/b", "/a/b/c", true},
    {"**/a/**/b", "/b/a", false},
    {"**/a/**/b", "/a/a/a", false},
    {"**/a/**/b/**/c", "/a/b/c", true},
    {"**/a/**/b/**/c", "/q/a/q/b/q/c/q", true},
    {"**/a/**/b/**/c", "/a/c/b", false},
    {"**/**/x", "/x", true},
    {"**/**/x", "/a/b/x", true},
    /* The backtrack point moves: the last "**" is the one to retry. */
    {"**/a/b", "/a/a/b", true},
    {"**/a/b", "/a/a/a/c/a/b/d", true},
    {"**/a/*/c", "/a/a/x/c", true},
    {"**/a/*/c", "/a/a/c", true},
    {"**/a/*/c", "/a/c", false},
    /* Literal patterns: exact, or an ancestor. */
    {"/a/b", "/a/b", true},
    {"/a/b", "/a/b/c", true},
    {"/a/b", "/a/bc", false},
    {"/a/b", "/a", false},
    {"/", "/", true},
    {"/", "/a", true},
    /* Paths that are not canonical never match. */
    {"**/.env", "/a/../.env", false},
    {"**/.env", "/a/./.env", false},
    {"**/.env", "/a//.env", false},
    {"**/.env", "/a/.env/", false},
    {"**/.env", ".env", false},
    {"**", "", false},
    {"**", "relative", false},
};

static void
test_glob_table(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(glob_cases); i++) {
		const struct glob_case *c = &glob_cases[i];
		print_message("\"%s\" vs \"%s\"\n", c->pattern, c->path);
		assert_int_equal(policy_glob_match(c->pattern, c->path), c->match);
	}
}

/* "/a/a/…/a" with n components, then tail (which may be empty). */
static void
make_path(char *buf, size_t n, const char *tail)
{
	char *s = buf;

	for (size_t i = 0; i < n; i++) {
		memcpy(s, "/a", 2);
		s += 2;
	}
	strcpy(s, tail);
}

static double
now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * Patterns that take exponential time with naive backtracking. Each answer is
 * asserted; a budget of a second for all of them catches a blow-up without making
 * the test depend on the machine's speed.
 */
static void
test_glob_hostile(void **state)
{
	static char path[4096], pattern[4096];
	double t0 = now();

	make_path(path, 2000, "");
	assert_false(policy_glob_match("**/**/**/**/**/x", path));
	assert_false(policy_glob_match("**/a/**/a/**/a/**/a/**/b", path));
	assert_true(policy_glob_match("**/a/**/a/**/a/**/a", path));
	make_path(path, 2000, "/x");
	assert_true(policy_glob_match("**/**/**/**/**/x", path));
	assert_true(policy_glob_match("**/a/**/a/**/a/**/x", path));

	/* Many "**" against many components. */
	strcpy(pattern, "");
	for (int i = 0; i < 500; i++)
		strcat(pattern, "**/a/");
	strcat(pattern, "b");
	make_path(path, 2000, "");
	assert_false(policy_glob_match(pattern, path));
	make_path(path, 2000, "/b");
	assert_true(policy_glob_match(pattern, path));

	/* Many stars within one long component. */
	strcpy(path, "/");
	memset(path + 1, 'a', 4000);
	path[4001] = '\0';
	strcpy(pattern, "/");
	for (int i = 0; i < 200; i++)
		strcat(pattern, "*a");
	strcat(pattern, "*b");
	assert_false(policy_glob_match(pattern, path));
	path[4000] = 'b';
	assert_true(policy_glob_match(pattern, path));

	assert_true(now() - t0 < 1.0);
}

/* Patterns and paths at and past the 4095-byte limit. */
static void
test_glob_limits(void **state)
{
	static char path[8192], pattern[8192];

	make_path(path, 2047, ""); /* 4094 bytes, 2047 components */
	assert_true(policy_glob_match("**/a", path));
	assert_true(policy_glob_match("/a", path));
	strcat(path, "/a"); /* 4096 bytes: not a path the matcher takes */
	assert_false(policy_glob_match("**/a", path));
	assert_false(policy_glob_match("/a", path));

	/* A pattern of 4095 bytes is used; one longer never matches. */
	memset(pattern, 0, sizeof(pattern));
	make_path(pattern, 2047, "*");
	make_path(path, 2047, "x");
	assert_int_equal(strlen(pattern), 4095);
	assert_true(policy_glob_match(pattern, path));
	strcat(pattern, "*");
	assert_false(policy_glob_match(pattern, path));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_glob_table),
	    cmocka_unit_test(test_glob_hostile),
	    cmocka_unit_test(test_glob_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

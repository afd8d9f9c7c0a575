/* SPDX-License-Identifier: MIT */
/*
 * The hot path allocates nothing. This program is linked with --wrap for malloc,
 * calloc, realloc and free, so every call from this file and from libmoat_policy
 * goes through the counters below; while counting is on, policy_match(),
 * policy_net_decide() and policy_exec_decide() run over a mix of inputs, and the
 * counters must stay at zero.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#include <cmocka.h>

#include "moat/macro.h"
#include "moat/policy.h"

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *ptr, size_t size);
void __real_free(void *ptr);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *ptr, size_t size);
void __wrap_free(void *ptr);

/* volatile: the compiler knows malloc() and free() read no user memory. */
static volatile bool counting;
static volatile unsigned n_malloc, n_calloc, n_realloc, n_free;

void *
__wrap_malloc(size_t size)
{
	if (counting)
		n_malloc++;
	return __real_malloc(size);
}

void *
__wrap_calloc(size_t n, size_t size)
{
	if (counting)
		n_calloc++;
	return __real_calloc(n, size);
}

void *
__wrap_realloc(void *ptr, size_t size)
{
	if (counting)
		n_realloc++;
	return __real_realloc(ptr, size);
}

void
__wrap_free(void *ptr)
{
	if (counting)
		n_free++;
	__real_free(ptr);
}

static void
count_start(void)
{
	n_malloc = n_calloc = n_realloc = n_free = 0;
	counting = true;
}

static unsigned
count_stop(void)
{
	counting = false;
	return n_malloc + n_calloc + n_realloc + n_free;
}

static char *const test_environ[] = {"HOME=/home/u", "PATH=/usr/bin:/bin", NULL};
static const struct policy_env test_env = {.cwd = "/home/u/repo", .environ = test_environ};

#define N_RULES 1000

struct fixture {
	struct policy *dflt, *big;
	char *big_text;
};

static int
list_append(char **buf, size_t *len, size_t *cap, const char *s)
{
	size_t n = strlen(s);

	if (*len + n + 1 > *cap) {
		size_t c = (*len + n + 1) * 2;
		char *v = realloc(*buf, c);
		if (!v)
			return -1;
		*buf = v;
		*cap = c;
	}
	memcpy(*buf + *len, s, n + 1);
	*len += n;
	return 0;
}

/*
 * N_RULES entries: a tree of write, read, private and deny entries with deny globs
 * at several depths, so that a check meets many nodes and globs on its way down.
 */
static char *
big_policy_text(void)
{
	static const char *const lists[] = {"write", "read", "private", "deny"};
	char *buf = NULL, item[256];
	size_t len = 0, cap = 0;
	int k = 0;

	if (list_append(&buf, &len, &cap, "{\"version\": 1, \"surface\": {\"system\": true") < 0)
		return NULL;
	for (size_t l = 0; l < ARRAY_SIZE(lists); l++) {
		snprintf(item, sizeof(item), ", \"%s\": [", lists[l]);
		list_append(&buf, &len, &cap, item);
		for (int i = 0; i < N_RULES / 4; i++, k++) {
			const char *sep = i ? ", " : "";
			if (l == 3 && i % 5 == 0)
				snprintf(item, sizeof(item), "%s\"/data/p%d/**/*.s%d\"", sep, i, i);
			else if (l == 3 && i % 5 == 1)
				snprintf(item, sizeof(item), "%s\"**/tok%d*\"", sep, i);
			else if (l == 3 && i % 5 == 2)
				snprintf(item, sizeof(item), "%s\"/data/p%d/x?/k*\"", sep, i);
			else
				snprintf(item, sizeof(item), "%s\"/data/p%d/%s/d%d\"", sep, i % 50,
				         lists[l], i);
			if (list_append(&buf, &len, &cap, item) < 0)
				return NULL;
		}
		list_append(&buf, &len, &cap, "]");
	}
	if (list_append(&buf, &len, &cap,
	                "}, \"exec\": {\"default\": \"redirect\", \"rules\": [\n"
	                "  {\"path\": \"/usr/bin/git\", \"argv\": [\"push\", \"--force*\"],"
	                "   \"action\": \"deny\"},\n"
	                "  {\"path\": \"/usr/bin/*\", \"action\": \"allow\"},\n"
	                "  {\"path\": \"**/node_modules/.bin/*\", \"action\": \"allow\"}]},\n"
	                " \"net\": {\"connect\": [\"tcp:10.0.0.0/8:*\", \"tcp:[fd00::/8]:443\","
	                "  \"udp:localhost:53\", \"unix:/run/user/*/bus\", \"unix:@moat\"],"
	                "  \"bind\": [\"tcp:127.0.0.1:0\", \"unix:/tmp/*.sock\"]}}") < 0)
		return NULL;
	return buf;
}

static int
setup(void **state)
{
	static struct fixture f;
	struct policy_diag diag;

	if (policy_load_default(&test_env, &f.dflt, &diag) < 0)
		return -1;
	f.big_text = big_policy_text();
	if (!f.big_text)
		return -1;
	if (policy_load_string(f.big_text, strlen(f.big_text), "big", &test_env, &f.big, &diag) <
	    0) {
		fprintf(stderr, "%s:%u:%u %s: %s\n", diag.source, diag.line, diag.col, diag.key,
		        diag.msg);
		return -1;
	}
	*state = &f;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture *f = *state;

	policy_free(f->dflt);
	policy_free(f->big);
	free(f->big_text);
	return 0;
}

static const char *const paths[] = {
    "/",
    "/home",
    "/home/u",
    "/home/u/repo",
    "/home/u/repo/src/main.c",
    "/home/u/repo/.env",
    "/home/u/repo/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/cert.pem",
    "/home/u/.ssh/id_ed25519",
    "/home/u/.claude/settings.json",
    "/home/u/.cargo/credentials.toml",
    "/etc/shadow",
    "/etc/sudoers.d/90-cloud",
    "/usr/bin/git",
    "/tmp/build/out.o",
    "/data",
    "/data/p7",
    "/data/p7/read/d57",
    "/data/p7/write/d7/x/y",
    "/data/p0/a/b/c/z.s0",
    "/data/p2/xy/key",
    "/data/p3/x/tok16-file",
    "/data/p49/private/d499/notes",
    "/data/p10/deny/d10",
    "/nonexistent/a/b/c",
    "/home/u/repo/../repo/x",
    "/home/u/repo//x",
    "/home/u/repo/./x",
    "/home/u/repo/",
    "relative/path",
    "",
};

/* A long canonical path and one past the limit, built before counting starts. */
static char long_ok[4096], long_bad[4200];

static void
build_long_paths(void)
{
	strcpy(long_ok, "/data/p1/read/d1");
	while (strlen(long_ok) + 2 <= 4095)
		strcat(long_ok, "/a");
	strcpy(long_bad, long_ok);
	strcat(long_bad, "/bb");
}

static unsigned
run_matches(const struct policy *p)
{
	struct policy_verdict v;
	unsigned allowed = 0;

	for (size_t i = 0; i < ARRAY_SIZE(paths); i++)
		for (int a = 0; a < POLICY_ACCESS_MAX; a++) {
			policy_match(p, paths[i], strlen(paths[i]), (enum policy_access)a, &v);
			allowed += v.allow;
		}
	for (int a = 0; a < POLICY_ACCESS_MAX; a++) {
		policy_match(p, long_ok, strlen(long_ok), (enum policy_access)a, &v);
		allowed += v.allow;
		policy_match(p, long_bad, strlen(long_bad), (enum policy_access)a, &v);
		allowed += v.allow;
	}
	return allowed;
}

/* Every network check a supervisor makes, over the families and both ops. */
static unsigned
run_net(const struct policy *p)
{
	struct sockaddr_in in = {.sin_family = AF_INET, .sin_port = htons(443)};
	struct sockaddr_in6 in6 = {.sin6_family = AF_INET6, .sin6_port = htons(443)};
	struct sockaddr_in6 mapped = {.sin6_family = AF_INET6, .sin6_port = htons(22)};
	struct sockaddr_un un = {.sun_family = AF_UNIX, .sun_path = "/run/user/1000/bus"};
	struct sockaddr_un abs = {.sun_family = AF_UNIX, .sun_path = "\0moat"};
	static const int types[] = {SOCK_STREAM, SOCK_DGRAM, SOCK_STREAM | SOCK_CLOEXEC, SOCK_RAW};
	const struct policy_net_rule *rule;
	unsigned allowed = 0;

	inet_pton(AF_INET, "10.1.2.3", &in.sin_addr);
	inet_pton(AF_INET6, "fd00::1", &in6.sin6_addr);
	inet_pton(AF_INET6, "::ffff:10.9.9.9", &mapped.sin6_addr);
	for (int op = 0; op < POLICY_NET_OP_MAX; op++)
		for (size_t t = 0; t < ARRAY_SIZE(types); t++) {
			enum policy_net_op o = (enum policy_net_op)op;
			allowed += policy_net_decide(p, o, types[t], (struct sockaddr *)&in,
			                             sizeof(in), &rule);
			allowed += policy_net_decide(p, o, types[t], (struct sockaddr *)&in6,
			                             sizeof(in6), &rule);
			allowed += policy_net_decide(p, o, types[t], (struct sockaddr *)&mapped,
			                             sizeof(mapped), NULL);
			allowed += policy_net_decide(p, o, types[t], (struct sockaddr *)&un,
			                             sizeof(un), &rule);
			allowed += policy_net_decide(
			    p, o, types[t], (struct sockaddr *)&abs,
			    (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 5), &rule);
			allowed += policy_net_decide(p, o, types[t], (struct sockaddr *)&un,
			                             sizeof(sa_family_t), &rule);
		}
	return allowed;
}

static unsigned
run_exec(const struct policy *p)
{
	static const char *const argv1[] = {"git", "push", "origin", "--force", NULL};
	static const char *const argv2[] = {"ls", "-l", NULL};
	const struct policy_exec_rule *rule;
	unsigned n = 0;

	n += policy_exec_decide(p, "/usr/bin/git", argv1, &rule);
	n += policy_exec_decide(p, "/usr/bin/ls", argv2, &rule);
	n += policy_exec_decide(p, "/home/u/repo/node_modules/.bin/tsc", argv2, NULL);
	n += policy_exec_decide(p, "/opt/x", NULL, &rule);
	n += policy_exec_decide(p, "/usr/bin/../bin/ls", argv2, &rule);
	return n;
}

/* The counters see calls from this file and from the library: else a zero means nothing. */
static void
test_counters_work(void **state)
{
	const char *text = "{\"version\": 1}";
	struct policy_diag diag;
	struct policy *p = NULL;

	count_start();
	void *volatile q = malloc(16);
	free(q);
	assert_int_equal(count_stop(), 2);

	count_start();
	int r = policy_load_string(text, strlen(text), "t", &test_env, &p, &diag);
	policy_free(p);
	assert_int_equal(r, 0);
	assert_true(count_stop() > 0);
}

static void
test_match_default(void **state)
{
	struct fixture *f = *state;

	build_long_paths();
	count_start();
	unsigned allowed = run_matches(f->dflt);
	assert_int_equal(count_stop(), 0);
	assert_true(allowed > 0); /* the loop ran and decided something */
}

static void
test_match_big(void **state)
{
	struct fixture *f = *state;
	const struct policy_rule *rules;

	assert_true(policy_rules(f->big, &rules) >= N_RULES);
	build_long_paths();
	count_start();
	unsigned allowed = run_matches(f->big);
	assert_int_equal(count_stop(), 0);
	assert_true(allowed > 0);
}

static void
test_net_exec(void **state)
{
	struct fixture *f = *state;
	const struct policy_exec_rule *rules;

	assert_int_equal(policy_exec_rules(f->dflt, &rules), 0);
	count_start();
	unsigned net_default = run_net(f->dflt);
	unsigned net_big = run_net(f->big);
	unsigned exec_default = run_exec(f->dflt);
	unsigned exec_big = run_exec(f->big);
	assert_int_equal(count_stop(), 0);
	/* With no exec rules, every exec is redirected (0); the big policy allows some. */
	assert_int_equal(exec_default, 5 * POLICY_EXEC_REDIRECT);
	assert_int_equal(exec_big, POLICY_EXEC_DENY + 2 * POLICY_EXEC_ALLOW);
	assert_true(net_default > 0);
	assert_true(net_big > 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_counters_work),
	    cmocka_unit_test(test_match_default),
	    cmocka_unit_test(test_match_big),
	    cmocka_unit_test(test_net_exec),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

/* SPDX-License-Identifier: MIT */
/*
 * policy_net_decide(): tcp, udp and unix rules, "*" hosts, IPv4 and IPv6 CIDRs,
 * port ranges, localhost, IPv4-mapped addresses, the socket type, connect vs bind,
 * unix paths (exact, glob, abstract) and malformed addresses; then the load errors
 * for bad rule texts.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/un.h>

#include <cmocka.h>

#include "moat/macro.h"
#include "moat/policy.h"

static char *const test_environ[] = {"HOME=/home/u", "XDG_RUNTIME_DIR=/run/user/1000", NULL};
static const struct policy_env test_env = {.cwd = "/home/u/repo", .environ = test_environ};

static const char policy_text[] =
    "{\"version\": 1, \"surface\": {\"system\": false, \"tooling\": false},\n"
    " \"net\": {\"connect\": [\n"
    "   \"tcp:[fd00::/8]:443\", \"tcp:*:443\", \"udp:*:53\", \"tcp:10.0.0.0/8:*\",\n"
    "   \"tcp:[::1]:22\", \"tcp:localhost:8000-8080\", \"tcp:192.168.1.7:5432\",\n"
    "   \"udp:172.16.0.0/12:1000-2000\", \"tcp:[2001:db8::]/32:80\", \"tcp:0.0.0.0/0:7\",\n"
    "   \"unix:/run/app.sock\", \"unix:/run/user/*/bus\", \"unix:@moat-test\",\n"
    "   \"unix:~/sock/agent.sock\", \"unix:$XDG_RUNTIME_DIR/pulse/native\",\n"
    "   \"unix:$NOPE/x.sock\", \"unix:./rel.sock\"],\n"
    "  \"bind\": [\"tcp:127.0.0.1:0\", \"udp:*:5353\", \"tcp:[::]/0:3000-3999\",\n"
    "   \"unix:/tmp/moat-*.sock\", \"unix:@moat-bind\"]}}";

static struct policy *policy;

static int
load(void **state)
{
	struct policy_diag diag = {0};

	if (policy_load_string(policy_text, strlen(policy_text), "test", &test_env, &policy,
	                       &diag) < 0) {
		fprintf(stderr, "%s:%u:%u %s: %s\n", diag.source, diag.line, diag.col, diag.key,
		        diag.msg);
		return -1;
	}
	return 0;
}

static int
unload(void **state)
{
	policy = policy_free(policy);
	return 0;
}

/* How a row's address is spelled. */
enum addr_kind {
	A_V4,       /* addr is an IPv4 address */
	A_V6,       /* addr is an IPv6 address (mapped ones too) */
	A_UNIX,     /* addr is a path; salen covers it and its NUL */
	A_ABSTRACT, /* addr is the name after the NUL; salen covers exactly it */
};

#define C     POLICY_NET_CONNECT
#define B     POLICY_NET_BIND
#define TCP   SOCK_STREAM
#define UDP   SOCK_DGRAM
#define ALLOW true
#define DENY  false

struct net_case {
	enum policy_net_op op;
	int socktype;
	enum addr_kind kind;
	const char *addr;
	uint16_t port;
	bool allow;
	const char *rule; /* origin text of the deciding rule; NULL when denied */
};

/* clang-format off */
static const struct net_case net_cases[] = {
    /* "*" hosts, v4 and v6, and the port. */
    {C, TCP, A_V4, "1.2.3.4", 443, ALLOW, "tcp:*:443"},
    {C, TCP, A_V6, "2a00::1", 443, ALLOW, "tcp:*:443"},
    {C, TCP, A_V4, "1.2.3.4", 80, DENY, NULL},
    {C, TCP, A_V4, "1.2.3.4", 444, DENY, NULL},
    {C, UDP, A_V4, "8.8.8.8", 53, ALLOW, "udp:*:53"},
    {C, UDP, A_V6, "2001:4860:4860::8888", 53, ALLOW, "udp:*:53"},
    /* The socket type picks the protocol. */
    {C, TCP, A_V4, "8.8.8.8", 53, DENY, NULL},
    {C, UDP, A_V4, "1.2.3.4", 443, DENY, NULL},
    {C, TCP | SOCK_CLOEXEC, A_V4, "1.2.3.4", 443, ALLOW, "tcp:*:443"},
    {C, TCP | SOCK_NONBLOCK | SOCK_CLOEXEC, A_V4, "1.2.3.4", 443, ALLOW, "tcp:*:443"},
    {C, UDP | SOCK_NONBLOCK, A_V4, "8.8.8.8", 53, ALLOW, "udp:*:53"},
    {C, SOCK_RAW, A_V4, "1.2.3.4", 443, DENY, NULL},
    {C, SOCK_SEQPACKET, A_V4, "1.2.3.4", 443, DENY, NULL},
    {C, SOCK_RDM, A_V4, "8.8.8.8", 53, DENY, NULL},
    {C, 0, A_V4, "1.2.3.4", 443, DENY, NULL},
    /* IPv4 CIDR. */
    {C, TCP, A_V4, "10.0.0.0", 1, ALLOW, "tcp:10.0.0.0/8:*"},
    {C, TCP, A_V4, "10.1.2.3", 22, ALLOW, "tcp:10.0.0.0/8:*"},
    {C, TCP, A_V4, "10.255.255.255", 65535, ALLOW, "tcp:10.0.0.0/8:*"},
    {C, TCP, A_V4, "10.1.2.3", 0, ALLOW, "tcp:10.0.0.0/8:*"},
    {C, TCP, A_V4, "11.0.0.1", 22, DENY, NULL},
    {C, TCP, A_V4, "9.255.255.255", 22, DENY, NULL},
    {C, UDP, A_V4, "10.1.2.3", 22, DENY, NULL},
    {C, UDP, A_V4, "172.16.0.1", 1000, ALLOW, "udp:172.16.0.0/12:1000-2000"},
    {C, UDP, A_V4, "172.31.255.254", 2000, ALLOW, "udp:172.16.0.0/12:1000-2000"},
    {C, UDP, A_V4, "172.32.0.1", 1500, DENY, NULL},
    {C, UDP, A_V4, "172.15.255.255", 1500, DENY, NULL},
    {C, UDP, A_V4, "172.16.0.1", 999, DENY, NULL},
    {C, UDP, A_V4, "172.16.0.1", 2001, DENY, NULL},
    {C, TCP, A_V4, "192.168.1.7", 5432, ALLOW, "tcp:192.168.1.7:5432"},
    {C, TCP, A_V4, "192.168.1.8", 5432, DENY, NULL},
    {C, TCP, A_V4, "192.168.1.7", 5433, DENY, NULL},
    {C, TCP, A_V4, "203.0.113.9", 7, ALLOW, "tcp:0.0.0.0/0:7"},
    /* A /0 v4 rule does not cover v6. */
    {C, TCP, A_V6, "2a00::1", 7, DENY, NULL},
    /* IPv6 CIDR: in brackets, with the length inside or after. */
    {C, TCP, A_V6, "fd00::1", 443, ALLOW, "tcp:[fd00::/8]:443"},
    {C, TCP, A_V6, "fdff:ffff::1", 443, ALLOW, "tcp:[fd00::/8]:443"},
    {C, TCP, A_V6, "fe00::1", 443, ALLOW, "tcp:*:443"},
    {C, TCP, A_V6, "fd00::1", 8443, DENY, NULL},
    {C, UDP, A_V6, "fd00::1", 443, DENY, NULL},
    {C, TCP, A_V6, "2001:db8:1::5", 80, ALLOW, "tcp:[2001:db8::]/32:80"},
    {C, TCP, A_V6, "2001:db9::5", 80, DENY, NULL},
    {C, TCP, A_V6, "2001:db8::5", 81, DENY, NULL},
    {C, TCP, A_V6, "::1", 22, ALLOW, "tcp:[::1]:22"},
    {C, TCP, A_V6, "::2", 22, DENY, NULL},
    {C, TCP, A_V4, "127.0.0.1", 22, DENY, NULL},
    /* localhost: 127.0.0.0/8 and ::1. */
    {C, TCP, A_V4, "127.0.0.1", 8000, ALLOW, "tcp:localhost:8000-8080"},
    {C, TCP, A_V4, "127.255.0.1", 8080, ALLOW, "tcp:localhost:8000-8080"},
    {C, TCP, A_V6, "::1", 8080, ALLOW, "tcp:localhost:8000-8080"},
    {C, TCP, A_V4, "127.0.0.1", 8081, DENY, NULL},
    {C, TCP, A_V4, "127.0.0.1", 7999, DENY, NULL},
    {C, TCP, A_V4, "128.0.0.1", 8000, DENY, NULL},
    {C, TCP, A_V6, "::2", 8000, DENY, NULL},
    {C, TCP, A_V6, "::", 8000, DENY, NULL},
    /* IPv4-mapped IPv6 addresses match IPv4 rules, and only those. */
    {C, TCP, A_V6, "::ffff:10.1.2.3", 22, ALLOW, "tcp:10.0.0.0/8:*"},
    {C, TCP, A_V6, "::ffff:127.0.0.1", 8000, ALLOW, "tcp:localhost:8000-8080"},
    {C, TCP, A_V6, "::ffff:192.168.1.7", 5432, ALLOW, "tcp:192.168.1.7:5432"},
    {C, TCP, A_V6, "::ffff:11.0.0.1", 22, DENY, NULL},
    {C, TCP, A_V6, "::ffff:1.2.3.4", 443, ALLOW, "tcp:*:443"},
    {C, TCP, A_V6, "::ffff:0.0.0.1", 22, DENY, NULL},
    /* Not mapped: the IPv4-compatible form, and a v4 address in another prefix. */
    {C, TCP, A_V6, "::10.1.2.3", 22, DENY, NULL},
    {C, TCP, A_V6, "64:ff9b::10.1.2.3", 22, DENY, NULL},
    /* bind and connect are separate lists. */
    {B, TCP, A_V4, "1.2.3.4", 443, DENY, NULL},
    {B, TCP, A_V4, "127.0.0.1", 0, ALLOW, "tcp:127.0.0.1:0"},
    {B, TCP, A_V4, "127.0.0.1", 8000, DENY, NULL},
    {B, TCP, A_V4, "0.0.0.0", 0, DENY, NULL},
    {B, UDP, A_V4, "0.0.0.0", 5353, ALLOW, "udp:*:5353"},
    {B, UDP, A_V6, "::", 5353, ALLOW, "udp:*:5353"},
    {B, TCP, A_V6, "::", 3000, ALLOW, "tcp:[::]/0:3000-3999"},
    {B, TCP, A_V6, "2a00::1", 3999, ALLOW, "tcp:[::]/0:3000-3999"},
    {B, TCP, A_V4, "0.0.0.0", 3000, DENY, NULL},
    {C, UDP, A_V4, "1.2.3.4", 5353, DENY, NULL},
    {C, TCP, A_V6, "::", 3000, DENY, NULL},
    /* unix: exact paths, globs, "~" and "$VAR", any socket type. */
    {C, TCP, A_UNIX, "/run/app.sock", 0, ALLOW, "unix:/run/app.sock"},
    {C, UDP, A_UNIX, "/run/app.sock", 0, ALLOW, "unix:/run/app.sock"},
    {C, SOCK_SEQPACKET, A_UNIX, "/run/app.sock", 0, ALLOW, "unix:/run/app.sock"},
    {C, TCP, A_UNIX, "/run/app.sock2", 0, DENY, NULL},
    {C, TCP, A_UNIX, "/run/app", 0, DENY, NULL},
    {C, TCP, A_UNIX, "/run//app.sock", 0, DENY, NULL},
    {C, TCP, A_UNIX, "app.sock", 0, DENY, NULL},
    {B, TCP, A_UNIX, "/run/app.sock", 0, DENY, NULL},
    {C, TCP, A_UNIX, "/run/user/1000/bus", 0, ALLOW, "unix:/run/user/*/bus"},
    {C, TCP, A_UNIX, "/run/user/.x/bus", 0, ALLOW, "unix:/run/user/*/bus"},
    {C, TCP, A_UNIX, "/run/user/1000/x/bus", 0, DENY, NULL},
    {C, TCP, A_UNIX, "/run/user/1000/bus/x", 0, DENY, NULL},
    {C, TCP, A_UNIX, "/run/user/bus", 0, DENY, NULL},
    {C, TCP, A_UNIX, "/home/u/sock/agent.sock", 0, ALLOW, "unix:~/sock/agent.sock"},
    {C, TCP, A_UNIX, "/run/user/1000/pulse/native", 0, ALLOW,
     "unix:$XDG_RUNTIME_DIR/pulse/native"},
    {C, TCP, A_UNIX, "/home/u/repo/rel.sock", 0, ALLOW, "unix:./rel.sock"},
    {C, TCP, A_UNIX, "/x.sock", 0, DENY, NULL},
    {B, TCP, A_UNIX, "/tmp/moat-1.sock", 0, ALLOW, "unix:/tmp/moat-*.sock"},
    {B, UDP, A_UNIX, "/tmp/moat-.sock", 0, ALLOW, "unix:/tmp/moat-*.sock"},
    {B, TCP, A_UNIX, "/tmp/moat-1.sock/x", 0, DENY, NULL},
    {B, TCP, A_UNIX, "/tmp/a/moat-1.sock", 0, DENY, NULL},
    {C, TCP, A_UNIX, "/tmp/moat-1.sock", 0, DENY, NULL},
    /* Abstract sockets: exact names, their own namespace. */
    {C, TCP, A_ABSTRACT, "moat-test", 0, ALLOW, "unix:@moat-test"},
    {C, UDP, A_ABSTRACT, "moat-test", 0, ALLOW, "unix:@moat-test"},
    {C, TCP, A_ABSTRACT, "moat-test2", 0, DENY, NULL},
    {C, TCP, A_ABSTRACT, "moat-tes", 0, DENY, NULL},
    {C, TCP, A_ABSTRACT, "", 0, DENY, NULL},
    {C, TCP, A_ABSTRACT, "/run/app.sock", 0, DENY, NULL},
    {B, TCP, A_ABSTRACT, "moat-test", 0, DENY, NULL},
    {B, TCP, A_ABSTRACT, "moat-bind", 0, ALLOW, "unix:@moat-bind"},
    {C, TCP, A_UNIX, "/moat-test", 0, DENY, NULL},
};
/* clang-format on */

union addr {
	struct sockaddr sa;
	struct sockaddr_in in;
	struct sockaddr_in6 in6;
	struct sockaddr_un un;
	struct sockaddr_storage ss;
};

static socklen_t
make_addr(const struct net_case *c, union addr *a)
{
	memset(a, 0, sizeof(*a));
	switch (c->kind) {
	case A_V4:
		a->in.sin_family = AF_INET;
		a->in.sin_port = htons(c->port);
		assert_int_equal(inet_pton(AF_INET, c->addr, &a->in.sin_addr), 1);
		return sizeof(a->in);
	case A_V6:
		a->in6.sin6_family = AF_INET6;
		a->in6.sin6_port = htons(c->port);
		assert_int_equal(inet_pton(AF_INET6, c->addr, &a->in6.sin6_addr), 1);
		return sizeof(a->in6);
	case A_UNIX:
		a->un.sun_family = AF_UNIX;
		strcpy(a->un.sun_path, c->addr);
		return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(c->addr) + 1);
	case A_ABSTRACT:
		a->un.sun_family = AF_UNIX;
		memcpy(a->un.sun_path + 1, c->addr, strlen(c->addr));
		return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(c->addr));
	}
	fail();
	return 0;
}

static void
test_net_table(void **state)
{
	const struct policy_net_rule *rules;
	size_t n = policy_net_rules(policy, &rules);

	for (size_t i = 0; i < ARRAY_SIZE(net_cases); i++) {
		const struct net_case *c = &net_cases[i];
		const struct policy_net_rule *rule = (const void *)&rule;
		union addr a;

		print_message("row %zu: %s %d %s port %u\n", i, c->op == C ? "connect" : "bind",
		              c->socktype, c->addr, c->port);
		socklen_t len = make_addr(c, &a);
		bool r = policy_net_decide(policy, c->op, c->socktype, &a.sa, len, &rule);
		assert_int_equal(r, c->allow);
		if (!c->allow) {
			assert_null(rule);
		} else {
			assert_non_null(rule);
			assert_true(rule >= rules && rule < rules + n);
			assert_string_equal(rule->origin.text, c->rule);
			assert_int_equal(rule->op, c->op);
		}
		assert_int_equal(policy_net_decide(policy, c->op, c->socktype, &a.sa, len, NULL),
		                 c->allow);
	}
}

/* Addresses too short for their family, unnamed sockets and other families. */
static void
test_net_malformed(void **state)
{
	struct net_case v4 = {C, TCP, A_V4, "1.2.3.4", 443, ALLOW, NULL};
	struct net_case v6 = {C, TCP, A_V6, "::1", 22, ALLOW, NULL};
	struct net_case un = {C, TCP, A_UNIX, "/run/app.sock", 0, ALLOW, NULL};
	const struct policy_net_rule *rule = (const void *)&rule;
	union addr a;

	/* Sanity: the full-length addresses are allowed. */
	socklen_t len = make_addr(&v4, &a);
	assert_true(policy_net_decide(policy, C, TCP, &a.sa, len, NULL));
	assert_false(policy_net_decide(policy, C, TCP, &a.sa, len - 1, &rule));
	assert_null(rule);
	assert_false(policy_net_decide(policy, C, TCP, &a.sa, sizeof(sa_family_t), NULL));
	assert_false(policy_net_decide(policy, C, TCP, &a.sa, 1, NULL));
	assert_false(policy_net_decide(policy, C, TCP, &a.sa, 0, NULL));
	assert_false(policy_net_decide(policy, C, TCP, NULL, len, NULL));

	len = make_addr(&v6, &a);
	assert_true(policy_net_decide(policy, C, TCP, &a.sa, len, NULL));
	assert_false(policy_net_decide(policy, C, TCP, &a.sa, len - 1, NULL));
	assert_false(policy_net_decide(policy, C, TCP, &a.sa, sizeof(struct sockaddr_in), NULL));

	/* unix: unnamed (just the family), or longer than a sockaddr_un. */
	len = make_addr(&un, &a);
	assert_true(policy_net_decide(policy, C, TCP, &a.sa, len, NULL));
	assert_true(policy_net_decide(policy, C, TCP, &a.sa, sizeof(a.un), NULL));
	assert_false(policy_net_decide(policy, C, TCP, &a.sa, sizeof(sa_family_t), &rule));
	assert_null(rule);
	assert_false(policy_net_decide(policy, C, TCP, &a.sa, sizeof(a.un) + 1, NULL));
	/* Without its NUL the path is still the path. */
	assert_true(policy_net_decide(policy, C, TCP, &a.sa, len - 1, NULL));
	/* Cut short, it is another path. */
	assert_false(policy_net_decide(policy, C, TCP, &a.sa, len - 2, NULL));

	/* Families other than inet, inet6 and unix. */
	a.sa.sa_family = AF_NETLINK;
	assert_false(policy_net_decide(policy, C, TCP, &a.sa, sizeof(a.ss), NULL));
	a.sa.sa_family = AF_UNSPEC;
	assert_false(policy_net_decide(policy, C, TCP, &a.sa, sizeof(a.ss), NULL));
}

/* The rules as loaded: localhost is two rules, the unset variable dropped one. */
static void
test_net_rules_loaded(void **state)
{
	const struct policy_net_rule *rules;
	const char *const *notes;
	size_t n = policy_net_rules(policy, &rules);
	size_t localhost = 0, unix_rules = 0;

	for (size_t i = 0; i < n; i++) {
		if (strcmp(rules[i].origin.text, "tcp:localhost:8000-8080") == 0) {
			localhost++;
			assert_true(rules[i].family == AF_INET || rules[i].family == AF_INET6);
			assert_int_equal(rules[i].prefix, rules[i].family == AF_INET ? 8 : 128);
		}
		if (rules[i].proto == POLICY_NET_UNIX) {
			unix_rules++;
			assert_true(rules[i].unix_path[0] == '/' || rules[i].unix_path[0] == '@');
		}
		if (strcmp(rules[i].origin.text, "tcp:10.0.0.0/8:*") == 0) {
			assert_int_equal(rules[i].port_lo, 0);
			assert_int_equal(rules[i].port_hi, 65535);
			assert_string_equal(rules[i].origin.key, "net.connect[3]");
		}
	}
	assert_int_equal(localhost, 2);
	assert_int_equal(unix_rules, 8);
	assert_int_equal(n, 22); /* 22 texts, one dropped, localhost twice */
	assert_int_equal(policy_notes(policy, &notes), 1);
	assert_string_equal(notes[0],
	                    "net.connect[15]: \"$NOPE/x.sock\" dropped: $NOPE is unset or empty");
}

/* Host bits are masked off: 10.1.2.3/8 is 10.0.0.0/8. */
static void
test_net_masked(void **state)
{
	static const char text[] = "{\"version\": 1, \"net\": {\"connect\": [\"tcp:10.1.2.3/8:1\","
	                           " \"tcp:[fd12:3456::1/20]:1\"]}}";
	struct policy_diag diag;
	struct policy *p = NULL;
	const struct policy_net_rule *rules;
	static const uint8_t v4[4] = {10, 0, 0, 0};
	static const uint8_t v6[16] = {0xfd, 0x12, 0x30};

	assert_int_equal(policy_load_string(text, strlen(text), "t", &test_env, &p, &diag), 0);
	assert_int_equal(policy_net_rules(p, &rules), 2);
	assert_memory_equal(rules[0].addr, v4, 4);
	assert_int_equal(rules[0].prefix, 8);
	assert_memory_equal(rules[1].addr, v6, 16);
	assert_int_equal(rules[1].prefix, 20);

	struct net_case c = {C, TCP, A_V6, "fd12:3fff:ffff::9", 1, ALLOW, NULL};
	union addr a;
	socklen_t len = make_addr(&c, &a);
	assert_true(policy_net_decide(p, C, TCP, &a.sa, len, NULL));
	c.addr = "fd12:4000::";
	len = make_addr(&c, &a);
	assert_false(policy_net_decide(p, C, TCP, &a.sa, len, NULL));
	policy_free(p);
}

struct bad_case {
	const char *op; /* "connect" or "bind" */
	const char *rules;
	const char *key;
	const char *msg;
};

static const struct bad_case bad_cases[] = {
    {"connect", "\"tcp:*:99999\"", "net.connect[0]", "out of range"},
    {"connect", "\"tcp:*:65536\"", "net.connect[0]", "out of range"},
    {"connect", "\"tcp:*:0\"", "net.connect[0]", "out of range"},
    {"connect", "\"tcp:*:90-80\"", "net.connect[0]", "out of range"},
    {"connect", "\"tcp:*:80-\"", "net.connect[0]", "is not \"*\", a number or a range"},
    {"connect", "\"tcp:*:-1\"", "net.connect[0]", "is not \"*\", a number or a range"},
    {"connect", "\"tcp:*:+1\"", "net.connect[0]", "is not \"*\", a number or a range"},
    {"connect", "\"tcp:*:http\"", "net.connect[0]", "is not \"*\", a number or a range"},
    {"connect", "\"tcp:*:\"", "net.connect[0]", "is not \"*\", a number or a range"},
    {"connect", "\"tcp:example.com:443\"", "net.connect[0]", "is not an IPv4 address"},
    {"connect", "\"tcp:10.0.0:443\"", "net.connect[0]", "is not an IPv4 address"},
    {"connect", "\"sctp:*:1\"", "net.connect[0]", "unknown protocol \"sctp\""},
    {"connect", "\"TCP:*:1\"", "net.connect[0]", "unknown protocol \"TCP\""},
    {"connect", "\"tcp:10.0.0.0/33:1\"", "net.connect[0]", "prefix length \"/33\""},
    {"connect", "\"tcp:10.0.0.0/:1\"", "net.connect[0]", "prefix length"},
    {"connect", "\"tcp:10.0.0.0/8x:1\"", "net.connect[0]", "prefix length"},
    {"connect", "\"tcp:[fd00::/129]:443\"", "net.connect[0]", "prefix length \"/129\""},
    {"connect", "\"tcp:[fd00::1:443\"", "net.connect[0]", "unterminated \"[\""},
    {"connect", "\"tcp:[::1]x:22\"", "net.connect[0]", "unexpected \"x\" after \"]\""},
    {"connect", "\"tcp:::1:22\"", "net.connect[0]", "an IPv6 address goes in brackets"},
    {"connect", "\"tcp:[10.0.0.1]:22\"", "net.connect[0]", "is not an IPv6 address"},
    {"connect", "\"tcp:*\"", "net.connect[0]", "expected HOST:PORT"},
    {"connect", "\"tcp::443\"", "net.connect[0]", "expected HOST:PORT"},
    {"connect", "\"tcp\"", "net.connect[0]", "expected tcp:HOST:PORT"},
    {"connect", "\"\"", "net.connect[0]", "expected tcp:HOST:PORT"},
    {"connect", "\"unix:\"", "net.connect[0]", "empty unix socket path"},
    {"connect", "\"unix:@\"", "net.connect[0]", "abstract socket name is empty"},
    {"connect", "\"unix:~bob/x\"", "net.connect[0]", "\"~user\" is not supported"},
    {"connect", "\"tcp:*:443\", \"tcp:*:99999\"", "net.connect[1]", "out of range"},
    {"connect", "\"tcp:*:443\", 443", "net.connect[1]", "expected a string, got a number"},
    {"connect", "\"tcp:*:443\", \"udp:*:53\", \"icmp:*:0\"", "net.connect[2]", "unknown protocol"},
    {"bind", "\"tcp:127.0.0.1:0\", \"tcp:*:99999\"", "net.bind[1]", "out of range"},
    {"bind", "\"udp:*:1-0\"", "net.bind[0]", "out of range"},
};

/* A prefix length is digits, as a port is: a sign must not turn 10.0.0.0/-0 into /0. */
static const struct bad_case bad_prefix_cases[] = {
    {"connect", "\"tcp:10.0.0.0/-0:1\"", "net.connect[0]", "prefix length"},
    {"connect", "\"tcp:10.0.0.0/+8:1\"", "net.connect[0]", "prefix length"},
    {"connect", "\"tcp:10.0.0.0/ 8:1\"", "net.connect[0]", "prefix length"},
    {"connect", "\"tcp:[fd00::/-0]:1\"", "net.connect[0]", "prefix length"},
};

static void
check_bad(const struct bad_case *cases, size_t n)
{
	char text[1024];

	for (size_t i = 0; i < n; i++) {
		const struct bad_case *c = &cases[i];
		struct policy_diag diag = {0};
		struct policy *p = NULL;

		snprintf(text, sizeof(text), "{\"version\": 1, \"net\": {\"%s\": [%s]}}", c->op,
		         c->rules);
		print_message("%s\n", text);
		int r = policy_load_string(text, strlen(text), "bad.json", &test_env, &p, &diag);
		bool loaded = p != NULL;
		policy_free(p);
		assert_int_equal(r, -EINVAL);
		assert_false(loaded);
		assert_string_equal(diag.source, "bad.json");
		assert_string_equal(diag.key, c->key);
		assert_int_equal(diag.line, 1);
		assert_true(diag.col > 1);
		assert_non_null(strstr(diag.msg, c->msg));
	}
}

static void
test_net_load_errors(void **state)
{
	check_bad(bad_cases, ARRAY_SIZE(bad_cases));
}

static void
test_net_prefix_sign(void **state)
{
	check_bad(bad_prefix_cases, ARRAY_SIZE(bad_prefix_cases));
}

/*
 * A path socket whose name starts with '@' ("@moat-test", relative to the caller's
 * cwd) lives in the filesystem: an abstract rule "unix:@moat-test" must not allow it.
 */
static void
test_net_abstract_vs_path(void **state)
{
	static const struct net_case cases[] = {
	    {C, TCP, A_ABSTRACT, "moat-test", 0, ALLOW, "unix:@moat-test"},
	    {C, TCP, A_UNIX, "@moat-test", 0, DENY, NULL},
	    {B, TCP, A_UNIX, "@moat-bind", 0, DENY, NULL},
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		union addr a;
		socklen_t len = make_addr(&cases[i], &a);
		print_message("%s\n", cases[i].addr);
		assert_int_equal(
		    policy_net_decide(policy, cases[i].op, cases[i].socktype, &a.sa, len, NULL),
		    cases[i].allow);
	}
}

/* Texts that load: the edges of what the syntax accepts. */
static void
test_net_load_ok(void **state)
{
	static const char *const ok[] = {
	    "\"tcp:*:65535\"",      "\"tcp:*:1-65535\"",      "\"tcp:0.0.0.0/0:*\"",
	    "\"tcp:[::]/0:*\"",     "\"tcp:[::/0]:*\"",       "\"udp:localhost:53\"",
	    "\"tcp:1.2.3.4/32:1\"", "\"unix:/run/*/x.sock\"", "\"unix:@a\"",
	};
	char text[512];

	for (size_t i = 0; i < ARRAY_SIZE(ok); i++) {
		struct policy_diag diag = {0};
		struct policy *p = NULL;

		snprintf(text, sizeof(text), "{\"version\": 1, \"net\": {\"connect\": [%s]}}",
		         ok[i]);
		print_message("%s\n", text);
		assert_int_equal(policy_load_string(text, strlen(text), "t", &test_env, &p, &diag),
		                 0);
		policy_free(p);
	}
	/* Port 0 is for bind only. */
	snprintf(text, sizeof(text), "{\"version\": 1, \"net\": {\"bind\": [\"tcp:*:0-10\"]}}");
	struct policy_diag diag;
	struct policy *p = NULL;
	assert_int_equal(policy_load_string(text, strlen(text), "t", &test_env, &p, &diag), 0);
	policy_free(p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_net_table),        cmocka_unit_test(test_net_malformed),
	    cmocka_unit_test(test_net_rules_loaded), cmocka_unit_test(test_net_masked),
	    cmocka_unit_test(test_net_load_errors),  cmocka_unit_test(test_net_load_ok),
	    cmocka_unit_test(test_net_prefix_sign),  cmocka_unit_test(test_net_abstract_vs_path),
	};

	return cmocka_run_group_tests(tests, load, unload);
}

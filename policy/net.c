/* SPDX-License-Identifier: MIT */
/*
 * Network rules: "tcp:HOST:PORT", "udp:HOST:PORT", "unix:PATH".
 * HOST is "*", "localhost", an IPv4 address or CIDR, or an IPv6 address or CIDR
 * in brackets ("[::1]", "[fd00::/8]"). PORT is "*", a number or a range "N-M".
 * Host names other than localhost are refused: a connect carries an address,
 * and resolving names at load time would make the policy depend on DNS.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stddef.h>
#include <string.h>
#include <sys/un.h>

#include "policy-private.h"

static int
add_net_rule(struct policy *p, const struct policy_net_rule *r)
{
	if (p->n_net_rules == p->cap_net_rules) {
		size_t cap = p->cap_net_rules ? p->cap_net_rules * 2 : 16;
		struct policy_net_rule *v = realloc(p->net_rules, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		p->net_rules = v;
		p->cap_net_rules = cap;
	}
	p->net_rules[p->n_net_rules++] = *r;
	return 0;
}

static int
parse_port(const char *s, bool allow_zero, uint16_t *lo, uint16_t *hi, char *err, size_t errsize)
{
	char *end;
	unsigned long a, b;

	if (strcmp(s, "*") == 0) {
		*lo = 0;
		*hi = 65535;
		return 0;
	}
	if (*s < '0' || *s > '9')
		goto bad;
	a = strtoul(s, &end, 10);
	b = a;
	if (*end == '-') {
		if (end[1] < '0' || end[1] > '9')
			goto bad;
		b = strtoul(end + 1, &end, 10);
	}
	if (*end)
		goto bad;
	if (a > 65535 || b > 65535 || (a == 0 && !allow_zero) || a > b) {
		snprintf(err, errsize, "port %s is out of range (%d-65535, low before high)", s,
		         allow_zero ? 0 : 1);
		return -EINVAL;
	}
	*lo = (uint16_t)a;
	*hi = (uint16_t)b;
	return 0;
bad:
	snprintf(err, errsize, "port \"%s\" is not \"*\", a number or a range N-M", s);
	return -EINVAL;
}

static void
mask_addr(uint8_t *addr, unsigned bytes, unsigned prefix)
{
	for (unsigned i = 0; i < bytes; i++) {
		unsigned bit = i * 8;
		if (bit >= prefix)
			addr[i] = 0;
		else if (prefix - bit < 8)
			addr[i] &= (uint8_t)(0xFF << (8 - (prefix - bit)));
	}
}

/* Parses "ADDR" or "ADDR/LEN" of one family into r. */
static int
parse_cidr(char *s, int family, struct policy_net_rule *r, char *err, size_t errsize)
{
	unsigned max = family == AF_INET ? 32 : 128;
	char *slash = strchr(s, '/');

	r->family = family;
	r->prefix = max;
	if (slash) {
		char *end;
		*slash = '\0';
		unsigned long len = strtoul(slash + 1, &end, 10);
		if (slash[1] < '0' || slash[1] > '9' || *end || len > max) {
			snprintf(err, errsize, "prefix length \"/%s\" is not 0-%u", slash + 1, max);
			return -EINVAL;
		}
		r->prefix = (unsigned)len;
	}
	if (inet_pton(family, s, r->addr) != 1) {
		snprintf(
		    err, errsize, "\"%s\" is not an IPv%d address%s", s, family == AF_INET ? 4 : 6,
		    family == AF_INET ? " (host names other than localhost are not allowed)" : "");
		return -EINVAL;
	}
	mask_addr(r->addr, family == AF_INET ? 4 : 16, r->prefix);
	return 0;
}

static int
parse_inet(struct policy *p, struct policy_net_rule *r, const char *rest, char *err, size_t errsize)
{
	char buf[128];
	const char *colon = strrchr(rest, ':');

	if (!colon || colon == rest) {
		snprintf(err, errsize, "expected HOST:PORT");
		return -EINVAL;
	}
	if ((size_t)(colon - rest) >= sizeof(buf)) {
		snprintf(err, errsize, "host is too long");
		return -EINVAL;
	}
	int k =
	    parse_port(colon + 1, r->op == POLICY_NET_BIND, &r->port_lo, &r->port_hi, err, errsize);
	if (k < 0)
		return k;
	memcpy(buf, rest, (size_t)(colon - rest));
	buf[colon - rest] = '\0';

	if (strcmp(buf, "*") == 0) {
		r->family = AF_UNSPEC;
		return add_net_rule(p, r);
	}
	if (strcmp(buf, "localhost") == 0) {
		struct policy_net_rule v6 = *r;
		char lo4[] = "127.0.0.0/8", lo6[] = "::1";
		if (parse_cidr(lo4, AF_INET, r, err, errsize) < 0 ||
		    parse_cidr(lo6, AF_INET6, &v6, err, errsize) < 0)
			return -EINVAL;
		k = add_net_rule(p, r);
		return k < 0 ? k : add_net_rule(p, &v6);
	}
	if (buf[0] == '[') {
		/* "[v6]", "[v6/len]" or "[v6]/len" */
		char *close = strchr(buf, ']');
		if (!close) {
			snprintf(err, errsize, "unterminated \"[\" in IPv6 address");
			return -EINVAL;
		}
		if (close[1] && close[1] != '/') {
			snprintf(err, errsize, "unexpected \"%s\" after \"]\"", close + 1);
			return -EINVAL;
		}
		memmove(close, close + 1, strlen(close + 1) + 1);
		k = parse_cidr(buf + 1, AF_INET6, r, err, errsize);
	} else if (strchr(buf, ':')) {
		snprintf(err, errsize, "an IPv6 address goes in brackets: \"[%s]\"", buf);
		return -EINVAL;
	} else {
		k = parse_cidr(buf, AF_INET, r, err, errsize);
	}
	/* A rule in the IPv4-mapped range is an IPv4 rule: mapped addresses are matched as IPv4. */
	static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	if (k == 0 && r->family == AF_INET6 && r->prefix >= 96 &&
	    memcmp(r->addr, mapped, 12) == 0) {
		r->family = AF_INET;
		r->prefix -= 96;
		memmove(r->addr, r->addr + 12, 4);
		memset(r->addr + 4, 0, 12);
	}
	return k < 0 ? k : add_net_rule(p, r);
}

int
net_parse(struct policy *p, enum policy_net_op op, const char *text,
          const struct policy_origin *origin, const struct policy_env *env, char *err,
          size_t errsize)
{
	struct policy_net_rule r = {.op = op, .origin = *origin};
	const char *colon = strchr(text, ':');
	char path[POLICY_PATH_MAX + 1];

	r.origin.source = pol_strdup(p, origin->source);
	r.origin.key = pol_strdup(p, origin->key);
	r.origin.text = pol_strdup(p, origin->text);
	if (!r.origin.source || !r.origin.key || !r.origin.text)
		return -ENOMEM;
	if (!colon) {
		snprintf(err, errsize, "expected tcp:HOST:PORT, udp:HOST:PORT or unix:PATH");
		return -EINVAL;
	}
	size_t plen = (size_t)(colon - text);
	if (plen == 4 && strncmp(text, "unix", 4) == 0) {
		r.proto = POLICY_NET_UNIX;
		r.family = AF_UNIX;
		const char *s = colon + 1;
		if (s[0] == '@') {
			if (!s[1] || strlen(s) > sizeof(((struct sockaddr_un *)0)->sun_path)) {
				snprintf(err, errsize, "abstract socket name is empty or too long");
				return -EINVAL;
			}
			r.unix_path = pol_strdup(p, s);
		} else {
			if (!*s) {
				snprintf(err, errsize, "empty unix socket path");
				return -EINVAL;
			}
			int k = pol_resolve_entry(p, env, s, origin->key, true, path, sizeof(path),
			                          err, errsize);
			if (k <= 0)
				return k;
			r.unix_path = pol_strdup(p, path);
		}
		return r.unix_path ? add_net_rule(p, &r) : -ENOMEM;
	}
	if (plen == 3 && strncmp(text, "tcp", 3) == 0)
		r.proto = POLICY_NET_TCP;
	else if (plen == 3 && strncmp(text, "udp", 3) == 0)
		r.proto = POLICY_NET_UDP;
	else {
		snprintf(err, errsize, "unknown protocol \"%.*s\" (expected tcp, udp or unix)",
		         (int)plen, text);
		return -EINVAL;
	}
	return parse_inet(p, &r, colon + 1, err, errsize);
}

static bool
prefix_match(const uint8_t *net, const uint8_t *addr, unsigned prefix)
{
	unsigned full = prefix / 8, rem = prefix % 8;
	if (memcmp(net, addr, full) != 0)
		return false;
	return rem == 0 || (net[full] == (addr[full] & (uint8_t)(0xFF << (8 - rem))));
}

/* name is "@…" for an abstract address (abstract set), else the path as given. */
static bool
unix_match(const struct policy_net_rule *r, const char *name, size_t len, bool abstract)
{
	if (r->unix_path[0] == '@')
		return abstract && strlen(r->unix_path) == len &&
		       memcmp(r->unix_path, name, len) == 0;
	/* Path rules are absolute; a relative address is the supervisor's to resolve first. */
	if (abstract || name[0] != '/')
		return false;
	if (!glob_has_magic(r->unix_path))
		return strlen(r->unix_path) == len && memcmp(r->unix_path, name, len) == 0;
	return glob_match_path(r->unix_path, name, false);
}

bool
policy_net_decide(const struct policy *p, enum policy_net_op op, int socktype,
                  const struct sockaddr *sa, socklen_t salen,
                  const struct policy_net_rule **ret_rule)
{
	enum policy_net_proto proto;
	uint8_t addr[16];
	int family;
	uint16_t port = 0;
	char name[sizeof(((struct sockaddr_un *)0)->sun_path) + 2];
	size_t name_len = 0;
	bool abstract = false;

	if (ret_rule)
		*ret_rule = NULL;
	if (!sa || salen < (socklen_t)sizeof(sa_family_t))
		return false;
	socktype &= ~(SOCK_NONBLOCK | SOCK_CLOEXEC);
	family = sa->sa_family;
	if (family == AF_UNIX) {
		const struct sockaddr_un *un = (const struct sockaddr_un *)sa;
		size_t n = (size_t)salen - offsetof(struct sockaddr_un, sun_path);
		if (salen <= (socklen_t)offsetof(struct sockaddr_un, sun_path) ||
		    n > sizeof(un->sun_path))
			return false; /* unnamed: nothing to match */
		proto = POLICY_NET_UNIX;
		if (un->sun_path[0] == '\0') {
			abstract = true;
			name[0] = '@';
			memcpy(name + 1, un->sun_path + 1, n - 1);
			name_len = n;
		} else {
			name_len = strnlen(un->sun_path, n);
			memcpy(name, un->sun_path, name_len);
		}
		name[name_len] = '\0';
	} else if (family == AF_INET || family == AF_INET6) {
		if (socktype == SOCK_STREAM)
			proto = POLICY_NET_TCP;
		else if (socktype == SOCK_DGRAM)
			proto = POLICY_NET_UDP;
		else
			return false;
		if (family == AF_INET) {
			if (salen < (socklen_t)sizeof(struct sockaddr_in))
				return false;
			const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
			memcpy(addr, &in->sin_addr, 4);
			port = ntohs(in->sin_port);
		} else {
			if (salen < (socklen_t)sizeof(struct sockaddr_in6))
				return false;
			const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
			port = ntohs(in6->sin6_port);
			if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
				family = AF_INET;
				memcpy(addr, in6->sin6_addr.s6_addr + 12, 4);
			} else {
				memcpy(addr, in6->sin6_addr.s6_addr, 16);
			}
		}
	} else {
		return false;
	}

	for (size_t i = 0; i < p->n_net_rules; i++) {
		const struct policy_net_rule *r = &p->net_rules[i];
		if (r->op != op || r->proto != proto)
			continue;
		bool ok;
		if (proto == POLICY_NET_UNIX)
			ok = unix_match(r, name, name_len, abstract);
		else
			ok = port >= r->port_lo && port <= r->port_hi &&
			     (r->family == AF_UNSPEC ||
			      (r->family == family && prefix_match(r->addr, addr, r->prefix)));
		if (ok) {
			if (ret_rule)
				*ret_rule = r;
			return true;
		}
	}
	return false;
}

size_t
policy_net_rules(const struct policy *p, const struct policy_net_rule **ret)
{
	*ret = p->net_rules;
	return p->n_net_rules;
}

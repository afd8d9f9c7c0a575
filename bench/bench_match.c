/* SPDX-License-Identifier: MIT */
/*
 * policy_match() against a naive linear scan over the same rules, measured in the
 * same run on the same paths: 10 to 10,000 prefix rules, a mix of paths of depth
 * 2 to 14, and the four default deny globs. The issue asks that the cost of a
 * check follow the depth of the path, not the number of rules; the tables show
 * both, as ratios. Nothing here asserts a timing.
 *
 *   bench_match                                   the tables
 *   bench_match --iterations N --rules N [--linear] [--depth D]
 *                                                 a fixed count of checks, for
 *                                                 valgrind --tool=callgrind
 *   bench_match --dump --rules N [--depth D]      the policy text and the mix
 *
 * Instructions per check:
 *   valgrind --tool=callgrind --toggle-collect=policy_match \
 *       bench_match --iterations 100000 --rules 10000
 * then divide "Collected" by the iterations (--linear: --toggle-collect=linear_match).
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "moat/macro.h"
#include "moat/policy.h"

#define N_PATHS    4096
#define PATH_BYTES 512 /* a generated path is at most 14 short components */
#define DEPTH_MIN  2
#define DEPTH_MAX  14
#define COMP_BYTES 48
#define REPS       7
#define REP_NS     25000000.0 /* a repetition runs whole passes for at least this long */
#define SEED       0x6d6f6174u

static const unsigned rule_counts[] = {10, 100, 1000, 10000};
static const unsigned depth_buckets[] = {3, 6, 9, 12};

/* Written after every pass, so that no check can be optimised away. */
static volatile uint64_t sink;

/* ---- rules ---- */

enum list {
	LIST_WRITE,
	LIST_READ,
	LIST_DENY,
	LIST_MAX,
};

static const char *const list_names[LIST_MAX] = {"write", "read", "deny"};

/* Rule i is template i % 10 with an instance number: "<head><instance><tail>". */
struct rule_template {
	enum list list;
	bool root; /* a tree of its own: instances 0..count-1, the others spread over twice that */
	const char *head, *tail;
};

static const struct rule_template templates[] = {
    {LIST_WRITE, true, "/home/u/src/proj", ""},                          /* depth 4 */
    {LIST_READ, true, "/opt/tool", ""},                                  /* 2 */
    {LIST_READ, false, "/home/u/src/proj", "/vendor"},                   /* 5 */
    {LIST_DENY, false, "/home/u/src/proj", "/secrets"},                  /* 5 */
    {LIST_WRITE, true, "/var/lib/x", ""},                                /* 3 */
    {LIST_WRITE, false, "/home/u/src/proj", "/vendor/patched"},          /* 6 */
    {LIST_DENY, false, "/opt/tool", "/etc"},                             /* 3 */
    {LIST_READ, false, "/home/u/src/proj", "/docs/api/v2/gen"},          /* 8 */
    {LIST_DENY, false, "/var/lib/x", "/keys/private"},                   /* 5 */
    {LIST_WRITE, false, "/home/u/src/proj", "/third_party/zlib/contrib"} /* 7 */
};

static const char *const deny_globs[] = {"**/.env", "**/.env.*", "**/*.pem", "**/*.key"};

static char *const bench_environ[] = {"HOME=/home/u", "PATH=/usr/bin:/bin", NULL};

static unsigned
instance_count(unsigned n_rules)
{
	return (n_rules + ARRAY_SIZE(templates) - 1) / ARRAY_SIZE(templates);
}

/*
 * Sub-entries land under roots that have no entry of their own half of the time,
 * as in a real policy that re-opens a vendor directory of a project it does not list.
 */
static unsigned
rule_instance(unsigned i, unsigned n_rules)
{
	unsigned t = i % ARRAY_SIZE(templates), k = i / ARRAY_SIZE(templates);
	return templates[t].root ? k : (k * 7 + t) % (2 * instance_count(n_rules));
}

/* The policy as JSON text (free() it), or NULL when out of memory. */
static char *
policy_json(unsigned n_rules, size_t *ret_len)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	fputs("{\"version\": 1, \"surface\": {\"cwd\": \"rw\", \"system\": false, "
	      "\"tooling\": false",
	      f);
	for (int l = 0; l < LIST_MAX; l++) {
		const char *sep = "";
		fprintf(f, ",\n\"%s\": [", list_names[l]);
		for (unsigned i = 0; i < n_rules; i++) {
			const struct rule_template *t = &templates[i % ARRAY_SIZE(templates)];
			if (t->list != (enum list)l)
				continue;
			fprintf(f, "%s\"%s%u%s\"", sep, t->head, rule_instance(i, n_rules),
			        t->tail);
			sep = ",\n";
		}
		for (size_t g = 0; l == LIST_DENY && g < ARRAY_SIZE(deny_globs); g++) {
			fprintf(f, "%s\"%s\"", sep, deny_globs[g]);
			sep = ",\n";
		}
		fputs("]", f);
	}
	fputs("}}\n", f);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	*ret_len = len;
	return text;
}

/* ---- the naive matcher ---- */

struct linear_rule {
	const char *path;
	size_t len;
	enum policy_mode mode;     /* as written */
	enum policy_mode eff_mode; /* the most restrictive of the entries at this path */
	const struct policy_rule *rule;
};

struct linear {
	struct linear_rule *prefix;
	size_t n_prefix;
	struct linear_rule *globs;
	size_t n_globs;
};

static int
cmp_linear_path(const void *a, const void *b)
{
	const struct linear_rule *const *x = a, *const *y = b;
	return strcmp((*x)->path, (*y)->path);
}

/* eff_mode of every prefix rule: sort pointers by path, take the minimum per run. */
static int
linear_eff_modes(struct linear *L)
{
	struct linear_rule **v = malloc((L->n_prefix + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < L->n_prefix; i++)
		v[i] = &L->prefix[i];
	qsort(v, L->n_prefix, sizeof(*v), cmp_linear_path);
	for (size_t i = 0, j; i < L->n_prefix; i = j) {
		enum policy_mode m = v[i]->mode;
		for (j = i + 1; j < L->n_prefix && strcmp(v[j]->path, v[i]->path) == 0; j++)
			m = v[j]->mode < m ? v[j]->mode : m;
		for (size_t k = i; k < j; k++)
			v[k]->eff_mode = m;
	}
	free(v);
	return 0;
}

static int
linear_build(const struct policy *p, struct linear *L)
{
	const struct policy_rule *rules;
	size_t n = policy_rules(p, &rules);

	*L = (struct linear){0};
	L->prefix = calloc(n + 1, sizeof(*L->prefix));
	L->globs = calloc(n + 1, sizeof(*L->globs));
	if (!L->prefix || !L->globs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct linear_rule r = {rules[i].path, strlen(rules[i].path), rules[i].mode,
		                        rules[i].mode, &rules[i]};
		if (rules[i].glob)
			L->globs[L->n_globs++] = r;
		else
			L->prefix[L->n_prefix++] = r;
	}
	return linear_eff_modes(L);
}

static void
linear_free(struct linear *L)
{
	free(L->prefix);
	free(L->globs);
	*L = (struct linear){0};
}

/* rule is path itself or one of its ancestors, on a component boundary. */
static bool
covers(const char *rule, size_t rlen, const char *path, size_t len)
{
	if (rlen > len || memcmp(rule, path, rlen) != 0)
		return false;
	return rlen == len || path[rlen] == '/' || rlen == 1;
}

static bool
mode_allows(enum policy_mode m, enum policy_access a)
{
	return a == POLICY_WRITE ? m == POLICY_MODE_RW : m >= POLICY_MODE_RO;
}

/*
 * The specification of policy_match(), written as the obvious loop over every
 * rule: deny globs first (they win), then the longest covering prefix (at an equal
 * path the most restrictive), then stat on an ancestor of a readable entry.
 */
static __attribute__((noinline)) bool
linear_match(const struct linear *L, const char *path, size_t len, enum policy_access access,
             const struct policy_rule **ret_rule)
{
	const struct linear_rule *best = NULL;

	*ret_rule = NULL;
	for (size_t i = 0; i < L->n_globs; i++)
		if (policy_glob_match(L->globs[i].path, path)) {
			*ret_rule = L->globs[i].rule;
			return false;
		}
	for (size_t i = 0; i < L->n_prefix; i++) {
		const struct linear_rule *r = &L->prefix[i];
		if (!covers(r->path, r->len, path, len))
			continue;
		if (!best || r->len > best->len || (r->len == best->len && r->mode < best->mode))
			best = r;
	}
	if (best) {
		*ret_rule = best->rule;
		if (mode_allows(best->mode, access))
			return true;
	}
	if (access != POLICY_STAT)
		return false;
	for (size_t i = 0; i < L->n_prefix; i++) {
		const struct linear_rule *r = &L->prefix[i];
		if (r->eff_mode >= POLICY_MODE_RO && covers(path, len, r->path, r->len))
			return true;
	}
	return false;
}

/* ---- paths ---- */

struct rng {
	uint64_t s;
};

static uint32_t
rng_next(struct rng *r)
{
	/* xorshift64*: plenty for a path mix, and the same mix on every machine. */
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return (uint32_t)((r->s * 0x2545F4914F6CDD1Dull) >> 32);
}

static uint32_t
rng_below(struct rng *r, uint32_t n)
{
	return rng_next(r) % n;
}

static const char *
pick(struct rng *r, const char *const *v, size_t n)
{
	return v[rng_below(r, (uint32_t)n)];
}

#define PICK(r, v) pick(r, v, ARRAY_SIZE(v))

static const char *const dirs[] = {
    "src",  "lib",  "foo",      "bar",     "include", "internal", "pkg",    "cmd",
    "test", "util", "net",      "core",    "vendor",  "docs",     "api",    "v2",
    "gen",  "dist", "patched",  "modules", "esm",     "contrib",  "server", "client",
    "http", "io",   "fixtures", "assets",  "models",  "handlers", "tmp",    "x"};
static const char *const files[] = {"bar.c",        "main.go",    "README.md",  "index.js",
                                    "Makefile",     "util.h",     "config.yml", "lib.rs",
                                    "package.json", "mod.rs",     "test_io.py", "CMakeLists.txt",
                                    "foo.o",        "types.d.ts", "go.sum",     "schema.sql"};
static const char *const secrets[] = {".env", ".env.local", "server.pem", "tls.key"};

static const char *const project_subs[] = {"",
                                           "",
                                           "src/lib",
                                           "vendor",
                                           "vendor/patched",
                                           "secrets",
                                           "docs/api/v2/gen",
                                           "src/cmd",
                                           "vendor",
                                           "third_party/zlib/contrib"};
static const char *const opt_subs[] = {"", "bin", "etc", "cache/build/tmp", "share/doc"};
static const char *const varlib_subs[] = {"", "keys/private", "data", "db/wal"};
static const char *const usr_prefixes[] = {"usr/lib/x86_64-linux-gnu", "usr/include/linux",
                                           "usr/share/doc", "usr/bin",
                                           "usr/lib/python3/dist-packages"};
static const char *const cwd_subs[] = {"", "src", "node_modules/react/cjs", "target/debug/deps"};
static const char *const miss_prefixes[] = {"home/u/.cache/pip", "etc",       "tmp", "proc/self/fd",
                                            "home/u/repo2/src",  "home/u/src"};

struct comps {
	char v[DEPTH_MAX][COMP_BYTES];
	size_t n;
};

static void
push(struct comps *c, const char *s)
{
	if (c->n < DEPTH_MAX)
		snprintf(c->v[c->n++], COMP_BYTES, "%s", s);
}

/* Pushes each component of a relative path "a/b/c" ("" pushes nothing). */
static void
push_all(struct comps *c, const char *rel)
{
	while (*rel) {
		const char *e = strchrnul(rel, '/');
		if (c->n < DEPTH_MAX)
			snprintf(c->v[c->n++], COMP_BYTES, "%.*s", (int)(e - rel), rel);
		rel = *e ? e + 1 : e;
	}
}

static void
push_num(struct comps *c, const char *head, unsigned k)
{
	if (c->n < DEPTH_MAX)
		snprintf(c->v[c->n++], COMP_BYTES, "%s%u", head, k);
}

/*
 * The leading directories of one path: project trees (hits at every rule depth,
 * misses on projects nobody listed), tools, state, system paths the policy does
 * not grant, the cwd, and plain misses (including "/home/u/repo2", which must not
 * match the cwd "/home/u/repo", and "proj12" next to "proj1").
 */
static void
gen_prefix(struct rng *r, unsigned count, struct comps *c)
{
	uint32_t roll = rng_below(r, 100);
	/* Four in five name a listed tree; the rest one only sub-entries (or nothing) cover. */
	uint32_t k = rng_below(r, 5) ? rng_below(r, count) : count + rng_below(r, count);

	if (roll < 40) {
		push_all(c, "home/u/src");
		push_num(c, "proj", k);
		push_all(c, PICK(r, project_subs));
	} else if (roll < 50) {
		push(c, "opt");
		push_num(c, "tool", k);
		push_all(c, PICK(r, opt_subs));
	} else if (roll < 60) {
		push_all(c, "var/lib");
		push_num(c, "x", k);
		push_all(c, PICK(r, varlib_subs));
	} else if (roll < 75) {
		push_all(c, PICK(r, usr_prefixes));
	} else if (roll < 85) {
		push_all(c, "home/u/repo");
		push_all(c, PICK(r, cwd_subs));
	} else {
		push_all(c, PICK(r, miss_prefixes));
		if (rng_below(r, 2))
			push_num(c, "proj", 2 * count + k);
	}
}

/* One path of the given depth (0: drawn from 2..14, most often around 8), NUL-terminated. */
static size_t
gen_path(struct rng *r, unsigned count, unsigned depth, char *out, size_t size)
{
	struct comps c = {.n = 0};
	size_t len = 0;

	if (!depth)
		depth = DEPTH_MIN + rng_below(r, 7) + rng_below(r, 7);
	gen_prefix(r, count, &c);
	if (c.n > depth)
		c.n = depth;
	while (c.n + 1 < depth)
		push(&c, PICK(r, dirs));
	if (c.n < depth)
		push(&c, rng_below(r, 32) == 0 ? PICK(r, secrets) : PICK(r, files));
	for (size_t i = 0; i < c.n; i++)
		len += (size_t)snprintf(out + len, size - len, "/%s", c.v[i]);
	return len;
}

struct bench_path {
	const char *s;
	size_t len;
	enum policy_access access;
};

struct mix {
	struct bench_path v[N_PATHS];
	size_t n;
	char *arena;
	double mean_depth;
};

static enum policy_access
gen_access(struct rng *r)
{
	uint32_t roll = rng_below(r, 10);
	return roll < 6 ? POLICY_READ : roll < 8 ? POLICY_WRITE : POLICY_STAT;
}

static unsigned
depth_of(const char *path)
{
	unsigned d = 0;
	for (; *path; path++)
		d += *path == '/';
	return d;
}

/* N_PATHS paths for a policy of n_rules rules; depth 0 for the realistic spread. */
static int
mix_build(struct mix *m, unsigned n_rules, unsigned depth)
{
	struct rng r = {SEED ^ ((uint64_t)depth << 32)};
	size_t pos = 0, depth_sum = 0;

	m->arena = malloc((size_t)N_PATHS * PATH_BYTES);
	if (!m->arena)
		return -ENOMEM;
	for (size_t i = 0; i < N_PATHS; i++) {
		char *s = m->arena + pos;
		size_t len = gen_path(&r, instance_count(n_rules), depth, s, PATH_BYTES);
		m->v[i] = (struct bench_path){s, len, gen_access(&r)};
		depth_sum += depth_of(s);
		pos += len + 1;
	}
	m->n = N_PATHS;
	m->mean_depth = (double)depth_sum / N_PATHS;
	return 0;
}

static void
mix_free(struct mix *m)
{
	free(m->arena);
	m->arena = NULL;
}

/* ---- timing ---- */

static uint64_t
now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct setup {
	unsigned n_rules;
	struct policy *policy;
	struct linear linear;
	double load_ms;
};

typedef uint64_t (*pass_fn)(const struct setup *s, const struct mix *m);

static uint64_t
pass_moat(const struct setup *s, const struct mix *m)
{
	uint64_t acc = 0;
	for (size_t i = 0; i < m->n; i++) {
		struct policy_verdict v;
		policy_match(s->policy, m->v[i].s, m->v[i].len, m->v[i].access, &v);
		acc += v.allow + (uintptr_t)v.rule;
	}
	return acc;
}

static uint64_t
pass_linear(const struct setup *s, const struct mix *m)
{
	uint64_t acc = 0;
	for (size_t i = 0; i < m->n; i++) {
		const struct policy_rule *rule;
		acc += linear_match(&s->linear, m->v[i].s, m->v[i].len, m->v[i].access, &rule) +
		       (uintptr_t)rule;
	}
	return acc;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The median over REPS repetitions of ns per check; each repetition is whole passes. */
static double
time_ns_per_check(pass_fn fn, const struct setup *s, const struct mix *m)
{
	double v[REPS];

	uint64_t t0 = now_ns();
	sink = fn(s, m); /* warms the caches, and sizes a repetition */
	uint64_t one = now_ns() - t0;
	unsigned passes = one >= REP_NS ? 1 : (unsigned)(REP_NS / (double)(one ? one : 1)) + 1;

	for (int r = 0; r < REPS; r++) {
		t0 = now_ns();
		for (unsigned k = 0; k < passes; k++)
			sink = fn(s, m);
		v[r] = (double)(now_ns() - t0) / ((double)passes * (double)m->n);
	}
	qsort(v, REPS, sizeof(v[0]), cmp_double);
	return v[REPS / 2];
}

/* ---- set-up ---- */

static int
setup_new(struct setup *s, unsigned n_rules)
{
	struct policy_env env = {.cwd = "/home/u/repo", .environ = bench_environ};
	struct policy_diag diag = {0};
	size_t len;

	*s = (struct setup){.n_rules = n_rules};
	char *text = policy_json(n_rules, &len);
	if (!text)
		return -ENOMEM;
	uint64_t t0 = now_ns();
	int r = policy_load_string(text, len, "<bench>", &env, &s->policy, &diag);
	s->load_ms = (double)(now_ns() - t0) / 1e6;
	free(text);
	if (r < 0) {
		fprintf(stderr, "bench_match: %s:%u:%u: %s: %s\n", diag.source, diag.line, diag.col,
		        diag.key, diag.msg);
		return r;
	}
	return linear_build(s->policy, &s->linear);
}

static void
setup_free(struct setup *s)
{
	s->policy = policy_free(s->policy);
	linear_free(&s->linear);
}

/* ---- agreement ---- */

struct agreement {
	size_t allow, deny_glob, deny_rule, deny_none, ancestor;
	size_t mismatch;      /* allow/deny differ: one of the two is wrong */
	size_t rule_mismatch; /* same answer, another deciding rule (ancestor stat excluded) */
};

static const char *
rule_name(const struct policy_rule *r)
{
	return r ? r->path : "(none)";
}

static void
agree(const struct setup *s, const struct mix *m, struct agreement *a)
{
	*a = (struct agreement){0};
	for (size_t i = 0; i < m->n; i++) {
		const struct bench_path *bp = &m->v[i];
		const struct policy_rule *lr;
		struct policy_verdict v;

		policy_match(s->policy, bp->s, bp->len, bp->access, &v);
		bool la = linear_match(&s->linear, bp->s, bp->len, bp->access, &lr);
		a->allow += v.allow;
		a->ancestor += v.ancestor;
		a->deny_glob += !v.allow && v.rule && v.rule->glob;
		a->deny_rule += !v.allow && v.rule && !v.rule->glob;
		a->deny_none += !v.allow && !v.rule;
		if (la != v.allow) {
			if (a->mismatch++ < 5)
				fprintf(stderr, "mismatch: %s %s: moat %s (%s), linear %s (%s)\n",
				        policy_access_to_string(bp->access), bp->s,
				        v.allow ? "allow" : "deny", rule_name(v.rule),
				        la ? "allow" : "deny", rule_name(lr));
		} else if (!v.ancestor && lr != v.rule) {
			if (a->rule_mismatch++ < 5)
				fprintf(stderr, "rule differs: %s %s: moat %s, linear %s\n",
				        policy_access_to_string(bp->access), bp->s,
				        rule_name(v.rule), rule_name(lr));
		}
	}
}

/* ---- the two modes ---- */

static int
run_tables(void)
{
	struct setup small = {0}, big = {0};
	double moat_ns[ARRAY_SIZE(rule_counts)];
	size_t total_mismatch = 0;
	double mean_depth = 0;
	int r = 0;

	printf("moat bench_match: %d paths per mix, median of %d repetitions, "
	       "policy = N prefix rules + 4 deny globs + cwd\n\n",
	       N_PATHS, REPS);
	printf("%6s %8s %9s %10s %9s %9s %9s  %s\n", "rules", "load ms", "moat ns", "linear ns",
	       "lin/moat", "mismatch", "rule diff", "mix: allow/glob/rule/none/ancestor");
	for (size_t i = 0; i < ARRAY_SIZE(rule_counts); i++) {
		struct setup s;
		struct mix m;
		struct agreement a;

		if ((r = setup_new(&s, rule_counts[i])) < 0 ||
		    (r = mix_build(&m, rule_counts[i], 0)) < 0) {
			setup_free(&s);
			return r;
		}
		agree(&s, &m, &a);
		total_mismatch += a.mismatch;
		moat_ns[i] = time_ns_per_check(pass_moat, &s, &m);
		double lin = time_ns_per_check(pass_linear, &s, &m);
		printf("%6u %8.1f %9.1f %10.1f %9.1f %9zu %9zu  %zu/%zu/%zu/%zu/%zu\n",
		       rule_counts[i], s.load_ms, moat_ns[i], lin, lin / moat_ns[i], a.mismatch,
		       a.rule_mismatch, a.allow, a.deny_glob, a.deny_rule, a.deny_none, a.ancestor);
		mean_depth = m.mean_depth;
		fflush(stdout);
		mix_free(&m);
		setup_free(&s);
	}
	printf(
	    "\nns per check (median); mismatch: allow/deny differ (either is wrong); rule diff: "
	    "same answer,\nanother deciding rule; mix: allowed / denied by a glob, by a rule, by "
	    "no rule /\nstat allowed as an ancestor. Mean depth %.1f, reads:writes:stats "
	    "6:2:2.\n",
	    mean_depth);
	printf("\nmoat at %u rules / moat at %u rules: %.2f\n",
	       rule_counts[ARRAY_SIZE(rule_counts) - 1], rule_counts[0],
	       moat_ns[ARRAY_SIZE(rule_counts) - 1] / moat_ns[0]);

	/* The same realistic shapes, cut to one depth: the cost should follow the depth. */
	unsigned n_small = rule_counts[0], n_big = rule_counts[ARRAY_SIZE(rule_counts) - 1];
	if ((r = setup_new(&small, n_small)) < 0 || (r = setup_new(&big, n_big)) < 0)
		goto out;
	printf("\n%6s %16s %16s %11s %16s\n", "depth", "moat ns @ 10", "moat ns @ 10000",
	       "10000/10", "ns/component");
	double first = 0;
	for (size_t i = 0; i < ARRAY_SIZE(depth_buckets); i++) {
		unsigned d = depth_buckets[i];
		struct mix ms, mb;
		if ((r = mix_build(&ms, n_small, d)) < 0)
			goto out;
		if ((r = mix_build(&mb, n_big, d)) < 0) {
			mix_free(&ms);
			goto out;
		}
		double ts = time_ns_per_check(pass_moat, &small, &ms);
		double tb = time_ns_per_check(pass_moat, &big, &mb);
		first = i == 0 ? tb : first;
		printf("%6u %16.1f %16.1f %11.2f %16.2f\n", d, ts, tb, tb / ts, tb / d);
		fflush(stdout);
		mix_free(&ms);
		mix_free(&mb);
		if (i == ARRAY_SIZE(depth_buckets) - 1)
			printf("\nmoat at depth %u / depth %u (%u rules): %.2f\n", d,
			       depth_buckets[0], n_big, tb / first);
	}
out:
	setup_free(&small);
	setup_free(&big);
	if (r < 0)
		return r;
	printf("\n%s\n", total_mismatch ? "MISMATCH: moat and the linear scan disagree (see stderr)"
	                                : "moat and the linear scan agree on every path");
	return total_mismatch ? 1 : 0;
}

/* A fixed number of checks and nothing else timed: for callgrind --toggle-collect. */
static int
run_fixed(unsigned long iterations, unsigned n_rules, unsigned depth, bool linear)
{
	struct setup s;
	struct mix m;
	uint64_t acc = 0;
	int r;

	if ((r = setup_new(&s, n_rules)) < 0 || (r = mix_build(&m, n_rules, depth)) < 0) {
		setup_free(&s);
		return r;
	}
	for (unsigned long i = 0; i < iterations; i++) {
		const struct bench_path *bp = &m.v[i % m.n];
		const struct policy_rule *rule;
		struct policy_verdict v;
		if (linear) {
			acc += linear_match(&s.linear, bp->s, bp->len, bp->access, &rule);
		} else {
			policy_match(s.policy, bp->s, bp->len, bp->access, &v);
			acc += v.allow;
		}
	}
	sink = acc;
	printf("%s: %lu checks, %u rules, depth %u (0: mixed), %llu allowed\n",
	       linear ? "linear" : "moat", iterations, n_rules, depth, (unsigned long long)acc);
	mix_free(&m);
	setup_free(&s);
	return 0;
}

/* The policy text, then every path of the mix with moat's answer: to see what is measured. */
static int
run_dump(unsigned n_rules, unsigned depth)
{
	struct setup s;
	struct mix m;
	size_t len;
	int r;

	char *text = policy_json(n_rules, &len);
	if (!text)
		return -ENOMEM;
	fwrite(text, 1, len, stdout);
	free(text);
	if ((r = setup_new(&s, n_rules)) < 0 || (r = mix_build(&m, n_rules, depth)) < 0) {
		setup_free(&s);
		return r;
	}
	for (size_t i = 0; i < m.n; i++) {
		struct policy_verdict v;
		policy_match(s.policy, m.v[i].s, m.v[i].len, m.v[i].access, &v);
		printf("%-5s %-5s %s (%s)\n", policy_access_to_string(m.v[i].access),
		       v.allow ? "allow" : "deny", m.v[i].s, rule_name(v.rule));
	}
	mix_free(&m);
	setup_free(&s);
	return 0;
}

static void
usage(FILE *f)
{
	fputs("usage: bench_match\n"
	      "       bench_match --iterations N --rules N [--depth D] [--linear]\n"
	      "       bench_match --dump --rules N [--depth D]\n"
	      "\n"
	      "Without options: ns per check of policy_match() against a linear scan over the\n"
	      "same rules, for 10 to 10,000 rules, then by path depth.\n"
	      "With --iterations: runs exactly N checks over the path mix and times nothing,\n"
	      "for valgrind --tool=callgrind --toggle-collect=policy_match (or linear_match).\n"
	      "With --dump: prints the policy and every path of the mix with moat's answer.\n",
	      f);
}

static bool
parse_ulong(const char *s, unsigned long max, unsigned long *ret)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v == 0 || v > max)
		return false;
	*ret = v;
	return true;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"iterations", required_argument, NULL, 'i'},
	    {"rules", required_argument, NULL, 'r'},
	    {"depth", required_argument, NULL, 'd'},
	    {"linear", no_argument, NULL, 'l'},
	    {"dump", no_argument, NULL, 'D'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	unsigned long iterations = 0, rules = 0, depth = 0;
	bool linear = false, dump = false;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		bool ok = true;
		switch (c) {
		case 'i':
			ok = parse_ulong(optarg, 1ul << 40, &iterations);
			break;
		case 'r':
			ok = parse_ulong(optarg, 1000000, &rules);
			break;
		case 'd':
			ok = parse_ulong(optarg, DEPTH_MAX, &depth) && depth >= DEPTH_MIN;
			break;
		case 'l':
			linear = true;
			break;
		case 'D':
			dump = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
		if (!ok) {
			fprintf(stderr, "bench_match: bad value \"%s\"\n", optarg);
			return 2;
		}
	}
	if (optind < argc || (dump ? !rules || iterations : !iterations != !rules)) {
		usage(stderr);
		return 2;
	}
	int r;
	if (dump)
		r = run_dump((unsigned)rules, (unsigned)depth);
	else if (iterations)
		r = run_fixed(iterations, (unsigned)rules, (unsigned)depth, linear);
	else
		r = run_tables();
	if (r < 0) {
		fprintf(stderr, "bench_match: %s\n", strerror(-r));
		return 1;
	}
	return r;
}

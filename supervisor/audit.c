/* SPDX-License-Identifier: MIT */
/* The NDJSON audit sink (see audit.h). */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"
#include "moat/jsonw.h"
#include "moat/macro.h"
#include "sv.h"

#define AUDIT_BUF   (1u << 20)  /* lines waiting to be written */
#define AUDIT_FLUSH (64u << 10) /* write out once this much is waiting */
#define COMM_SLOTS  256

/*
 * One lock over the buffer, the line stream and the comm cache: the
 * notification threads write lines, the main thread flushes them.
 */
struct audit {
	pthread_mutex_t lock;
	int fd;
	enum policy_audit_level level;
	char session[33];
	char *buf;
	size_t len;
	uint64_t lost;
	FILE *line; /* an fmemopen-like stream over scratch, for one line */
	char scratch[16384];
	struct {
		pid_t tid;
		char comm[17];
	} comm[COMM_SLOTS];
};

int
audit_open(const char *path, enum policy_audit_level level, struct audit **ret)
{
	uint8_t id[16];

	*ret = NULL;
	if (!path)
		return 0;
	struct audit *a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	pthread_mutex_init(&a->lock, NULL);
	a->level = level;
	a->buf = malloc(AUDIT_BUF);
	/* Our own open file description, so that O_NONBLOCK touches nobody else's stdout. */
	a->fd = strcmp(path, "-") == 0
	            ? open("/proc/self/fd/1", O_WRONLY | O_CLOEXEC)
	            : open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	int r = a->fd < 0 ? -errno : 0;
	/* One stream over the scratch buffer, rewound for every line: no allocation per line. */
	a->line = fmemopen(a->scratch, sizeof(a->scratch), "w");
	if (r == 0 && (!a->buf || !a->line))
		r = -ENOMEM;
	if (r < 0) {
		if (a->line)
			fclose(a->line);
		if (a->fd >= 0)
			close(a->fd);
		free(a->buf);
		free(a);
		return r;
	}
	fcntl(a->fd, F_SETFL, fcntl(a->fd, F_GETFL) | O_NONBLOCK);
	if (getrandom(id, sizeof(id), 0) != sizeof(id))
		memset(id, 0, sizeof(id));
	for (size_t i = 0; i < sizeof(id); i++)
		snprintf(a->session + 2 * i, 3, "%02x", id[i]);
	*ret = a;
	return 0;
}

/* A time as ISO 8601 UTC with microseconds; a zero time is now. */
static void
timestamp(struct timespec ts, char *out, size_t size)
{
	struct tm tm;

	if (ts.tv_sec == 0 && ts.tv_nsec == 0)
		clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	size_t n = strftime(out, size, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out + n, size - n, ".%06ldZ", ts.tv_nsec / 1000);
}

/* Writes out what waits, without blocking; the caller holds the lock. */
static void
flush(struct audit *a)
{
	if (a->len == 0)
		return;
	ssize_t n = write(a->fd, a->buf, a->len);
	if (n < 0) {
		/* Full disk, closed pipe, slow reader: drop what waits, count the lines. */
		for (size_t i = 0; i < a->len; i++)
			a->lost += a->buf[i] == '\n';
		a->len = 0;
		return;
	}
	memmove(a->buf, a->buf + n, a->len - (size_t)n);
	a->len -= (size_t)n;
}

/* Appends the line in scratch to the buffer, or counts it lost. */
static void
commit(struct audit *a, FILE *f)
{
	fflush(f);
	long n = ftell(f);
	bool bad = ferror(f);
	clearerr(f);
	if (bad || n <= 0 || (size_t)n >= sizeof(a->scratch) - 1 ||
	    a->len + (size_t)n + 1 > AUDIT_BUF) {
		a->lost++;
		return;
	}
	memcpy(a->buf + a->len, a->scratch, (size_t)n);
	a->len += (size_t)n;
	a->buf[a->len++] = '\n';
	if (a->len >= AUDIT_FLUSH)
		flush(a);
}

static FILE *
begin(struct audit *a, const char *event, struct timespec when)
{
	char ts[64];
	FILE *f = a->line;

	rewind(f);
	timestamp(when, ts, sizeof(ts));
	fprintf(f, "{\"ts\":\"%s\",\"session\":\"%s\",\"event\":\"%s\"", ts, a->session, event);
	return f;
}

static void
write_rule(FILE *f, const struct policy_rule *r)
{
	if (!r) {
		fputs(",\"rule\":null", f);
		return;
	}
	fputs(",\"rule\":{\"kind\":", f);
	jsonw_cstr(f, policy_kind_to_string(r->kind));
	fputs(",\"text\":", f);
	jsonw_cstr(f, r->origin.text);
	fputs(",\"source\":", f);
	jsonw_cstr(f, r->origin.source);
	fprintf(f, ",\"line\":%u,\"key\":", r->origin.line);
	jsonw_cstr(f, r->origin.key);
	fputc('}', f);
}

void
audit_session(struct audit *a, const struct policy *p, const char *cwd, const char *const *argv)
{
	const struct policy_rule *rules;
	char sha[65];
	size_t len;

	if (!a)
		return;
	pthread_mutex_lock(&a->lock);
	FILE *f = begin(a, "session", (struct timespec){0});
	const char *src = policy_source(p, &len);
	sha256_hex(src, len, sha);
	fprintf(f, ",\"version\":\"%s\",\"pid\":%d,\"policy\":", MOAT_VERSION, (int)getpid());
	jsonw_cstr(f, policy_source_name(p));
	fprintf(f, ",\"policy_sha256\":\"%s\",\"cwd\":", sha);
	jsonw_cstr(f, cwd);
	fputs(",\"argv\":[", f);
	for (size_t i = 0; argv && argv[i]; i++) {
		if (i)
			fputc(',', f);
		jsonw_cstr(f, argv[i]);
	}
	fputs("],\"surface\":[", f);
	size_t n = policy_rules(p, &rules);
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "%s{\"path\":", i ? "," : "");
		jsonw_cstr(f, rules[i].path);
		fprintf(f, ",\"mode\":\"%s\",\"kind\":\"%s\"%s}",
		        policy_mode_to_string(rules[i].mode), policy_kind_to_string(rules[i].kind),
		        rules[i].glob ? ",\"glob\":true" : "");
	}
	fputs("]}", f);
	/* A surface too long for one line is named by its digest alone. */
	fflush(f);
	if (ferror(f) || ftell(f) >= (long)sizeof(a->scratch) - 1) {
		clearerr(f);
		f = begin(a, "session", (struct timespec){0});
		fprintf(f,
		        ",\"version\":\"%s\",\"policy_sha256\":\"%s\",\"surface\":\"truncated\"}",
		        MOAT_VERSION, sha);
	}
	commit(a, f);
	flush(a);
	pthread_mutex_unlock(&a->lock);
}

/* The command name of a thread, from a small cache (a read of /proc per new thread). */
static const char *
comm_of(struct audit *a, const struct sv_call *c)
{
	unsigned slot = (unsigned)c->tid % COMM_SLOTS;
	char rel[64];

	if (a->comm[slot].tid == c->tid)
		return a->comm[slot].comm;
	snprintf(rel, sizeof(rel), "%d/comm", c->tid);
	_cleanup_close_ int fd = openat(c->sv->proc_fd, rel, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, a->comm[slot].comm, 16) : -1;
	if (n <= 0)
		return "?";
	if (a->comm[slot].comm[n - 1] == '\n')
		n--;
	a->comm[slot].comm[n] = '\0';
	a->comm[slot].tid = c->tid;
	return a->comm[slot].comm;
}

void
audit_call(struct audit *a, const struct sv_call *c)
{
	if (!a || c->standin)
		return; /* the stand-in's exec of the shim is moat's own */
	bool denied = c->decided ? !c->allowed : c->err == EPERM;
	if (a->level == POLICY_AUDIT_DENY && !denied)
		return;
	pthread_mutex_lock(&a->lock);
	/* An exec replaces the image: the next line of this thread has a new comm. */
	if (strncmp(c->name, "execve", 6) == 0)
		a->comm[(unsigned)c->tid % COMM_SLOTS].tid = 0;
	FILE *f = begin(a, "call", c->received);
	fprintf(f, ",\"pid\":%d,\"comm\":", (int)c->tid);
	jsonw_cstr(f, comm_of(a, c));
	fputs(",\"syscall\":", f);
	jsonw_cstr(f, c->name);
	fputs(",\"path\":", f);
	if (c->path[0])
		jsonw_cstr(f, c->path);
	else
		fputs("null", f);
	fprintf(f, ",\"access\":%s%s%s,\"decision\":\"%s\"", c->decided ? "\"" : "",
	        c->decided ? policy_access_to_string(c->access) : "null", c->decided ? "\"" : "",
	        denied        ? "deny"
	        : c->redirect ? "redirect"
	                      : "allow");
	write_rule(f, c->rule);
	if (c->exec_rule) {
		fputs(",\"exec_rule\":{\"action\":", f);
		jsonw_cstr(f, policy_exec_action_to_string(c->exec_rule->action));
		fputs(",\"path\":", f);
		jsonw_cstr(f, c->exec_rule->path);
		fprintf(f, ",\"line\":%u,\"key\":", c->exec_rule->origin.line);
		jsonw_cstr(f, c->exec_rule->origin.key);
		fputc('}', f);
	}
	fputs(",\"errno\":", f);
	if (c->err && !c->replied && !c->cont)
		fprintf(f, "\"%s\"", strerrorname_np(c->err) ? strerrorname_np(c->err) : "?");
	else
		fputs("null", f);
	fputc('}', f);
	commit(a, f);
	pthread_mutex_unlock(&a->lock);
}

void
audit_flush(struct audit *a)
{
	if (!a)
		return;
	pthread_mutex_lock(&a->lock);
	flush(a);
	pthread_mutex_unlock(&a->lock);
}

uint64_t
audit_close(struct audit *a)
{
	if (!a)
		return 0;
	/* At exit a slow reader may get a moment, but never an unbounded wait. */
	for (int i = 0; i < 50 && a->len; i++) {
		flush(a);
		if (a->len)
			usleep(10000);
	}
	for (size_t i = 0; i < a->len; i++)
		a->lost += a->buf[i] == '\n';
	uint64_t lost = a->lost;
	close(a->fd);
	fclose(a->line);
	free(a->buf);
	pthread_mutex_destroy(&a->lock);
	free(a);
	return lost;
}

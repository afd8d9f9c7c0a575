/* SPDX-License-Identifier: MIT */
/*
 * The audit sink: one NDJSON line per decision (level all) or per denial (level
 * deny). Lines are appended to a memory buffer on the hot path and written out
 * when it fills, on a timer and at exit, through a non-blocking descriptor: a
 * full disk or a closed pipe costs lines (counted, and reported at exit), never
 * a blocked call and never an opened boundary.
 */
#ifndef MOAT_SUPERVISOR_AUDIT_H
#define MOAT_SUPERVISOR_AUDIT_H

#include <stdbool.h>
#include <stdint.h>

#include "moat/policy.h"

struct sv_call;
struct audit;

/* Opens the sink: path "-" is moat's stdout. NULL path: no audit (every call is a no-op). */
int audit_open(const char *path, enum policy_audit_level level, struct audit **ret);
/* The first line: session id, moat version, policy source and SHA-256, the resolved surface. */
void audit_session(struct audit *a, const struct policy *p, const char *cwd,
                   const char *const *argv);
void audit_call(struct audit *a, const struct sv_call *c);
void audit_flush(struct audit *a);
/* Flushes, closes, and returns the number of lines lost. */
uint64_t audit_close(struct audit *a);

/* The SHA-256 of data as 64 hex digits. */
void sha256_hex(const void *data, size_t len, char out[65]);

#endif

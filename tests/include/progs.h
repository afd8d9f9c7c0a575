/* SPDX-License-Identifier: MIT */
/*
 * Shared by the helper programs the integration and escape scripts run under
 * moat (tests/integration/progs, tests/escape): one line per operation, errno
 * by name, so that a native run and a run under moat compare line by line.
 */
#ifndef MOAT_TESTS_PROGS_H
#define MOAT_TESTS_PROGS_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* EACCES, ENOENT...: the errno's name. */
static inline const char *
err_name(int e)
{
	const char *n = strerrorname_np(e);
	return n ? n : "E?";
}

static inline void say(const char *op, const char *arg, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* "OP ARG: text", flushed: the lines of a helper that is killed are not lost. */
static inline void
say(const char *op, const char *arg, const char *fmt, ...)
{
	va_list ap;

	printf("%s %s: ", op, arg);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

#endif

/* SPDX-License-Identifier: MIT */
/*
 * Logging for programs (never for library code): one line to stderr, prefixed
 * with the program name. log_error_errno() returns its negative errno, so a
 * caller can log and fail in one step.
 */
#ifndef MOAT_LOG_H
#define MOAT_LOG_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "moat/macro.h"

extern const char *log_program;

static inline void _printf_(1, 2) log_error(const char *fmt, ...)
{
	va_list ap;
	int saved = errno;

	fprintf(stderr, "%s: ", log_program ? log_program : "moat");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	errno = saved;
}

/* Logs fmt followed by ": strerror(-r)" and returns r (a negative errno). */
#define log_error_errno(r, fmt, ...)                                                               \
	({                                                                                         \
		int _r = (r);                                                                      \
		log_error(fmt ": %s", ##__VA_ARGS__, strerror(_r < 0 ? -_r : _r));                 \
		_r < 0 ? _r : -_r;                                                                 \
	})

#endif

/* SPDX-License-Identifier: MIT */
/*
 * Small header-only helpers shared by every module: cleanup attributes,
 * ownership transfer and array sizes.
 *
 * Cleanup attributes are for cold paths (loading, set-up, CLI); the hot paths
 * own their buffers for their whole lifetime and never need them.
 */
#ifndef MOAT_MACRO_H
#define MOAT_MACRO_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define _cleanup_(f)     __attribute__((cleanup(f)))
#define _cleanup_free_   _cleanup_(freep)
#define _cleanup_close_  _cleanup_(closep)
#define _cleanup_fclose_ _cleanup_(fclosep)
#define _unused_         __attribute__((unused))
#define _printf_(a, b)   __attribute__((format(printf, a, b)))
#define _likely_(x)      __builtin_expect(!!(x), 1)
#define _unlikely_(x)    __builtin_expect(!!(x), 0)

static inline void
freep(void *p)
{
	free(*(void **)p);
}

/* close() keeps errno: cleanup runs on error paths whose errno the caller reports. */
static inline void
closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		close(*fd);
		errno = saved;
	}
}

static inline void
fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

/* Hand ownership out of a cleanup-managed variable. */
#define TAKE_PTR(p)                                                                                \
	({                                                                                         \
		__typeof__(p) _tp = (p);                                                           \
		(p) = NULL;                                                                        \
		_tp;                                                                               \
	})

#define TAKE_FD(fd)                                                                                \
	({                                                                                         \
		int _tfd = (fd);                                                                   \
		(fd) = -1;                                                                         \
		_tfd;                                                                              \
	})

#endif

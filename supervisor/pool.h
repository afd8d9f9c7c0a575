/* SPDX-License-Identifier: MIT */
/*
 * A fixed pool of worker threads for calls that block (opening a FIFO, a
 * blocking connect): they run off the notification threads and answer the call
 * themselves. The threads exist before the agent does, so that the filter can
 * protect every one of their thread ids from the agent's signals.
 */
#ifndef MOAT_SUPERVISOR_POOL_H
#define MOAT_SUPERVISOR_POOL_H

#include <stddef.h>
#include <sys/types.h>

struct sv_pool;

/* Starts n workers; their thread ids go to tids[0..n). */
int sv_pool_start(size_t n, struct sv_pool **ret, pid_t *tids);
/* Queues fn(arg); fn owns arg. -EAGAIN when the queue is full. */
int sv_pool_submit(struct sv_pool *p, void (*fn)(void *arg), void *arg);
/* Stops the workers; jobs still blocked are abandoned with the process. */
void sv_pool_stop(struct sv_pool *p);

#endif

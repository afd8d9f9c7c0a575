/* SPDX-License-Identifier: MIT */
/* The worker pool (see pool.h): a bounded queue under one mutex. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "pool.h"

#define QUEUE_MAX 256

struct job {
	void (*fn)(void *arg);
	void *arg;
};

struct sv_pool {
	pthread_mutex_t lock;
	pthread_cond_t ready, started;
	struct job queue[QUEUE_MAX];
	size_t head, len, n_started;
	bool stop;
	pid_t *tids;
	pthread_t *threads;
	size_t n_threads;
};

/* A pool whose workers did not all stop stays here: reachable, not leaked. */
static struct sv_pool *abandoned;

static void *
worker(void *arg)
{
	struct sv_pool *p = arg;
	sigset_t all;

	/* Signals are the main thread's to read. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	pthread_mutex_lock(&p->lock);
	p->tids[p->n_started++] = gettid();
	pthread_cond_broadcast(&p->started);
	for (;;) {
		while (!p->stop && p->len == 0)
			pthread_cond_wait(&p->ready, &p->lock);
		if (p->stop)
			break;
		struct job j = p->queue[p->head];
		p->head = (p->head + 1) % QUEUE_MAX;
		p->len--;
		pthread_mutex_unlock(&p->lock);
		j.fn(j.arg);
		pthread_mutex_lock(&p->lock);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int
sv_pool_start(size_t n, struct sv_pool **ret, pid_t *tids)
{
	struct sv_pool *p = calloc(1, sizeof(*p));

	if (!p || !(p->threads = calloc(n, sizeof(*p->threads)))) {
		free(p);
		return -ENOMEM;
	}
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->ready, NULL);
	pthread_cond_init(&p->started, NULL);
	p->tids = tids;
	for (size_t i = 0; i < n; i++) {
		int r = pthread_create(&p->threads[i], NULL, worker, p);
		if (r != 0) {
			sv_pool_stop(p);
			return -r;
		}
		p->n_threads++;
	}
	pthread_mutex_lock(&p->lock);
	while (p->n_started < n)
		pthread_cond_wait(&p->started, &p->lock);
	pthread_mutex_unlock(&p->lock);
	*ret = p;
	return 0;
}

int
sv_pool_submit(struct sv_pool *p, void (*fn)(void *arg), void *arg)
{
	int r = 0;

	pthread_mutex_lock(&p->lock);
	if (p->len == QUEUE_MAX) {
		r = -EAGAIN;
	} else {
		p->queue[(p->head + p->len) % QUEUE_MAX] = (struct job){fn, arg};
		p->len++;
		pthread_cond_signal(&p->ready);
	}
	pthread_mutex_unlock(&p->lock);
	return r;
}

void
sv_pool_stop(struct sv_pool *p)
{
	struct timespec deadline;
	bool all = true;

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_broadcast(&p->ready);
	pthread_mutex_unlock(&p->lock);
	/* A worker still blocked (a FIFO nobody opens) ends with the process. */
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_nsec += 100 * 1000 * 1000;
	if (deadline.tv_nsec >= 1000000000) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000;
	}
	for (size_t i = 0; i < p->n_threads; i++)
		if (pthread_timedjoin_np(p->threads[i], NULL, &deadline) != 0)
			all = false;
	if (!all) {
		abandoned = p;
		return;
	}
	free(p->threads);
	free(p);
}

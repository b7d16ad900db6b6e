/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Work done on threads and printed in order (hwt flow -j's segments, hwt
 * coverage's traces): workers take the items in turn, at most a window
 * ahead of the one printed (what they produce is held in memory until
 * then), and the printing thread waits for each in turn.
 */
#include "cli/cli.h"

void cli_order_init(struct cli_order *q, size_t n, size_t ahead)
{
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->cond, NULL);
	q->n = n;
	q->next = 0;
	q->printed = 0;
	q->ahead = ahead ? ahead : 1;
}

void cli_order_fini(struct cli_order *q)
{
	pthread_mutex_destroy(&q->lock);
	pthread_cond_destroy(&q->cond);
}

size_t cli_order_take(struct cli_order *q)
{
	size_t k = SIZE_MAX;

	pthread_mutex_lock(&q->lock);
	while (q->next < q->n && q->next >= q->printed + q->ahead)
		pthread_cond_wait(&q->cond, &q->lock);
	if (q->next < q->n)
		k = q->next++;
	pthread_mutex_unlock(&q->lock);
	return k;
}

void cli_order_done(struct cli_order *q, int *done)
{
	pthread_mutex_lock(&q->lock);
	*done = 1;
	pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&q->lock);
}

void cli_order_wait(struct cli_order *q, const int *done)
{
	pthread_mutex_lock(&q->lock);
	while (!*done)
		pthread_cond_wait(&q->cond, &q->lock);
	pthread_mutex_unlock(&q->lock);
}

void cli_order_printed(struct cli_order *q, size_t n, int *done)
{
	pthread_mutex_lock(&q->lock);
	if (done)
		*done = 0;
	q->printed = n;
	pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&q->lock);
}

void cli_order_stop(struct cli_order *q)
{
	pthread_mutex_lock(&q->lock);
	q->next = q->n;
	pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&q->lock);
}

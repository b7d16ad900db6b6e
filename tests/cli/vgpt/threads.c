/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tests/cli/vgpt_events.sh: four threads that take turns (a mutex,
 * sched_yield), so that Valgrind switches between them often.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static long total;

static long work(long n)
{
	long s = 0;

	for (long i = 0; i < n; i++)
		s += i % 3 ? i : -i;
	return s;
}

static void *run(void *arg)
{
	long id = (long)arg, s = 0;

	for (int r = 0; r < 20; r++) {
		s += work(2000 + id * 100);
		pthread_mutex_lock(&mu);
		total += s & 0xff;
		pthread_mutex_unlock(&mu);
		sched_yield();
	}
	return (void *)s;
}

int main(void)
{
	pthread_t th[4];
	long s = 0;
	void *r;

	for (long i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, run, (void *)i);
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], &r);
		s += (long)r;
	}
	printf("%ld %d\n", s, total > 0);
	return 0;
}

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A small threaded program for the perf.data tests: threads that name
 * themselves (COMM records without exec) and exit, and a child process.
 * What perf records of it exercises FORK of threads (pid == ppid) and of
 * processes, thread EXITs and COMMs.
 */
#include <pthread.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static void *worker(void *arg)
{
	char name[16];

	snprintf(name, sizeof(name), "pdworker%d", (int)(long)arg);
	pthread_setname_np(pthread_self(), name);
	return NULL;
}

int main(void)
{
	pthread_t t[3];
	pid_t child;
	long i;

	for (i = 0; i < 3; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)i))
			return 1;
	for (i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	child = fork();
	if (child < 0)
		return 1;
	if (!child)
		_exit(0);
	waitpid(child, NULL, 0);
	return 0;
}

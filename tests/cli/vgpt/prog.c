/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tests/cli/vgpt.sh: loops, direct, indirect and recursive calls, returns
 * deeper than the return stack, longjmp, libc calling back (qsort), rep
 * string instructions (including a zero count), generated code in
 * anonymous memory, a synchronous and asynchronous signals, a fork and a
 * second thread.
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile int hits, ticks;
static jmp_buf env;

static int add(int a, int b) { return a + b; }
static int mul(int a, int b) { return a * b; }
static int (*const ops[])(int, int) = { add, mul };

static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
static int cmp(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }
static void on_usr1(int sig) { (void)sig; hits++; }
static void on_alrm(int sig) { (void)sig; ticks++; }
static void deep(int n) { if (n > 0) deep(n - 1); else longjmp(env, 1); hits++; }

static void *worker(void *arg)
{
	long s = 0;

	(void)arg;
	for (long i = 0; i < 1000; i++)
		s += ops[i & 1]((int)i, 3);
	return (void *)s;
}

int main(void)
{
	static const unsigned char code[] = { 0xb8, 42, 0, 0, 0, 0xc3 };
	int v[64], acc = 0;
	char a[300], b[300];
	unsigned char *m;
	pthread_t th;
	void *ret, *d, *s;
	long n;

	for (int i = 0; i < 64; i++)
		v[i] = (i * 7919) % 64;
	qsort(v, 64, sizeof(v[0]), cmp);
	for (int i = 0; i < 200; i++)
		acc = ops[i % 2](acc, i) & 0xffff;
	acc += fib(15);

	d = a; n = sizeof(a);
	__asm__ volatile("rep stosb" : "+D"(d), "+c"(n) : "a"(1) : "memory");
	d = b; s = a; n = sizeof(a);
	__asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
	d = b; s = a; n = sizeof(a);
	__asm__ volatile("repe cmpsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory", "cc");
	n = 0;
	__asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");

	m = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return 1;
	memcpy(m, code, sizeof(code));
	acc += ((int (*)(void))m)();

	signal(SIGUSR1, on_usr1);
	raise(SIGUSR1);
	if (!setjmp(env))
		deep(70);

	signal(SIGALRM, on_alrm);
	setitimer(ITIMER_REAL, &(struct itimerval){ { 0, 2000 }, { 0, 2000 } }, NULL);
	for (volatile unsigned long spin = 0; ticks < 3; spin++)
		;
	setitimer(ITIMER_REAL, &(struct itimerval){ { 0, 0 }, { 0, 0 } }, NULL);

	if (fork() == 0)
		_exit(fib(10) == 55 ? 0 : 1);
	wait(NULL);
	pthread_create(&th, NULL, worker, NULL);
	pthread_join(th, &ret);
	printf("%d %d %d %ld\n", acc, v[63], hits, (long)ret);
	return 0;
}

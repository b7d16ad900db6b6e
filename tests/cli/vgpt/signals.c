/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tests/cli/vgpt_events.sh: synchronous signals that stop a superblock in
 * the middle: int3 (SIGTRAP) and a store to a read-only page (SIGSEGV)
 * whose handler makes the page writable and returns, so the store runs
 * again; a jump to an address that is not canonical (Valgrind faults at
 * the target, whose 64 bits the trace must carry); then, with an
 * argument, death by SIGSEGV with no handler.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static volatile int traps, segvs, jumping;
static char *page;
static sigjmp_buf back;

static void on_trap(int sig)
{
	(void)sig;
	traps++;
}

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	if (jumping)
		siglongjmp(back, 1);
	segvs++;
	mprotect((void *)((unsigned long)si->si_addr & ~4095UL), 4096,
		 PROT_READ | PROT_WRITE);
}

/* The store is in the middle of the superblock that starts here. */
__attribute__((noinline)) static int touch(volatile char *p, int v)
{
	int a = v * 3;

	a += v >> 1;
	p[0] = (char)a;
	a ^= p[0];
	return a + 1;
}

/* To an address that is not canonical, back by siglongjmp. */
__attribute__((noinline)) static void jump_far(void)
{
	volatile unsigned long bad = 0x4141414141414141UL;

	jumping = 1;
	if (!sigsetjmp(back, 1))
		__asm__ volatile("jmp *%0" : : "r"(bad));
	jumping = 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	int s = 0;

	(void)argv;
	signal(SIGTRAP, on_trap);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);
	for (int i = 0; i < 3; i++) {
		__asm__ volatile("int3");
		s += i;
	}
	page = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return 1;
	for (int i = 0; i < 3; i++) {
		s += touch(page, i);
		mprotect(page, 4096, PROT_READ);
	}
	jump_far();
	printf("%d %d %d\n", traps, segvs, s);
	fflush(stdout);
	if (argc > 1) {
		signal(SIGSEGV, SIG_DFL);
		s += touch(page, s);
	}
	return 0;
}

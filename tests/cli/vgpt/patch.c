/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tests/cli/vgpt_image.sh: a function of the program's own file-backed
 * text is patched in place (mprotect writable, store, mprotect back) after
 * it ran: the decoder needs the new bytes, which no file holds.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

__attribute__((noinline, aligned(64))) int victim(int x)
{
	return x * 5 + 1;	/* lea 0x1(%rdi,%rdi,4),%eax; ret */
}

__attribute__((noinline)) int before(int x)
{
	return victim(x) * 2;
}

int main(void)
{
	/* Three instructions in the same 5 bytes. */
	static const unsigned char code[] = {
		0x89, 0xf8,		/* mov %edi,%eax */
		0xff, 0xc0,		/* inc %eax */
		0xc3			/* ret */
	};
	uintptr_t pg = (uintptr_t)victim & ~4095UL;
	int s = before(1);

	mprotect((void *)pg, 8192, PROT_READ | PROT_WRITE | PROT_EXEC);
	memcpy((void *)(uintptr_t)victim, code, sizeof(code));
	mprotect((void *)pg, 8192, PROT_READ | PROT_EXEC);
	s += victim(1);
	printf("%d\n", s);
	return 0;
}

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tests/cli/vgpt_image.sh: code generated, run, rewritten at the same
 * address and run again, six times (two shapes: straight, and with a
 * conditional branch).
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

static void gen(unsigned char *p, int v, int shape)
{
	int w = v * 2;

	if (shape) {
		*p++ = 0x85;		/* test %edi,%edi */
		*p++ = 0xff;
		*p++ = 0x74;		/* je +6 */
		*p++ = 0x06;
	}
	*p++ = 0xb8;			/* mov $v,%eax */
	memcpy(p, &v, 4);
	p += 4;
	*p++ = 0xc3;			/* ret */
	*p++ = 0xb8;			/* mov $w,%eax */
	memcpy(p, &w, 4);
	p += 4;
	*p++ = 0xc3;
}

int main(void)
{
	unsigned char *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int (*f)(int) = (int (*)(int))m;
	long s = 0;

	if (m == MAP_FAILED)
		return 1;
	for (int round = 0; round < 6; round++) {
		gen(m, round + 1, round & 1);
		for (int i = 0; i < 50; i++)
			s += f(i & 1);
	}
	printf("%ld\n", s);
	return 0;
}

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tests/cli/vgpt_modes.sh: a few million instructions of loops and calls,
 * more trace than a small ring or file size limit holds.
 */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static int f(int x)
{
	return x * 3 + 1;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 300000, s = 0;

	for (long i = 0; i < n; i++) {
		if (i % 3)
			s += f((int)i);
		else
			s -= i;
	}
	printf("%ld\n", s);
	return 0;
}

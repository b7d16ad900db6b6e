/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tests/cli/lcov.sh's program: lines run a known number of times (a
 * loop, if/else chains, a switch, calls), lines never run (never(), with
 * a conditional jump of its own, the n < 0 branch), loops within a line
 * (for, while). ARGV[1] is the
 * number of turns.
 */
#include <stdio.h>
#include <stdlib.h>

static int square(int x)
{
	return x * x;
}

static int classify(int v)
{
	int kind;

	if (v % 3 == 0)
		kind = 0;
	else if (v % 3 == 1)
		kind = 1;
	else
		kind = 2;
	switch (kind) {
	case 0:
		return square(v);
	case 1:
		return v + 1;
	default:
		return -v;
	}
}

static int never(int v)
{
	if (v > 3)
		return v * 7;
	return v;
}

int main(int argc, char **argv)
{
	long sum = 0;
	int n = argc > 1 ? atoi(argv[1]) : 10;

	for (int i = 0; i < n; i++)
		sum += classify(i);
	if (n < 0)
		sum = never(n);
	while (sum > 100)
		sum /= 2;
	printf("%ld\n", sum);
	return 0;
}

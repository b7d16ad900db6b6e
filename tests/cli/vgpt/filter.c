/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tests/cli/vgpt_modes.sh (--vgpt-filter=fa,tail,cmp): fa loops and
 * calls out (leaf) and back; tail jumps out, conditionally and not; cmp
 * is called from libc (qsort) and returns there.
 */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) int leaf(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) int other(int x)
{
	return x ^ 5;
}

__attribute__((noinline)) int fa(int n)
{
	int s = 0;

	for (int i = 0; i < n; i++) {
		if (i % 3 == 0)
			s += leaf(i);
		else
			s -= i;
	}
	return s;
}

__attribute__((noinline)) int tail(int x)
{
	if (x > 10)
		return leaf(x);
	return other(x);
}

static int cmp(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

int main(void)
{
	int v[32], s = 0;

	for (int i = 0; i < 32; i++)
		v[i] = (i * 7919) % 101;
	for (int r = 0; r < 3; r++) {
		s += fa(20 + r);
		s += tail(r * 8) + tail(r);
		qsort(v, 32, sizeof(v[0]), cmp);
	}
	printf("%d %d\n", s, v[0]);
	return 0;
}

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tests/cli/vgpt_events.sh: Valgrind client requests (the magic 19-byte
 * sequences) and a function wrapper, whose call to the original is the
 * call-noredir sequence: no call instruction, yet a call.
 */
#include <stdio.h>
#include <valgrind/valgrind.h>

__attribute__((noinline)) int twice(int x)
{
	return x * 2;
}

int I_WRAP_SONAME_FNNAME_ZU(NONE, twice)(int x)
{
	int r;
	OrigFn fn;

	VALGRIND_GET_ORIG_FN(fn);
	CALL_FN_W_W(r, fn, x);
	return r + 1;
}

int main(void)
{
	int s = 0;

	for (int i = 0; i < 5; i++)
		s += RUNNING_ON_VALGRIND + twice(i);
	printf("%d\n", s);
	return 0;
}

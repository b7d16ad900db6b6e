/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tests/cli/vgpt_image.sh: the other library dl.c loads (other code,
 * same symbol).
 */
int fn(int x);

static int sq(int v)
{
	return v * v;
}

int fn(int x)
{
	int s = 1;

	for (int i = 0; i < x; i++) {
		if (i & 1)
			s += sq(i);
		else
			s -= i;
	}
	return s;
}

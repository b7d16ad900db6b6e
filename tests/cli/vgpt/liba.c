/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tests/cli/vgpt_image.sh: one of two libraries dl.c loads in turn.
 */
int fn(int x);

int fn(int x)
{
	int s = 0;

	for (int i = 0; i < x; i++)
		s += i * 3;
	return s;
}

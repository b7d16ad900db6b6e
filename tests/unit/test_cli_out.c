/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The CLI's line formatting (src/cli/cli.h): cli_put_hex16() and
 * cli_put_hex(), which make eight hex digits at once in a word, against
 * printf's "%016llx" and "%llx" on every nibble value at every position,
 * runs of each digit and random words; and the output buffer's inline
 * reserve and commit (src/cli/outbuf.c grows or flushes it) against the
 * plain concatenation of what was written, in memory and to a file.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cli/cli.h"
#include "rng.h"

static void check_hex(uint64_t v)
{
	char want[40], got[40];
	char *end;

	snprintf(want, sizeof(want), "%016llx", (unsigned long long)v);
	memset(got, 'X', sizeof(got));
	end = cli_put_hex16(got, v);
	assert_ptr_equal(end, got + 16);
	assert_memory_equal(got, want, 16);
	assert_int_equal(got[16], 'X');	/* nothing beyond */

	snprintf(want, sizeof(want), "%llx", (unsigned long long)v);
	memset(got, 'X', sizeof(got));
	end = cli_put_hex(got, v);
	assert_int_equal(end - got, strlen(want));
	assert_memory_equal(got, want, strlen(want));
	assert_int_equal(*end, 'X');
}

static void test_hex(void **state)
{
	struct rng r = { 16 };

	(void)state;
	check_hex(0);
	check_hex(UINT64_MAX);
	/* Each nibble value at each position, alone and over a background
	 * of every other value. */
	for (unsigned pos = 0; pos < 16; pos++)
		for (uint64_t nib = 0; nib < 16; nib++)
			for (uint64_t bg = 0; bg < 16; bg++) {
				uint64_t fill = bg * 0x1111111111111111ull;
				uint64_t mask = 0xfull << (4 * pos);

				check_hex(nib << (4 * pos));
				check_hex((fill & ~mask) | nib << (4 * pos));
			}
	for (unsigned bits = 0; bits < 64; bits++) {
		check_hex(1ull << bits);
		check_hex((1ull << bits) - 1);
	}
	for (unsigned i = 0; i < 200000; i++) {
		uint64_t v = rnd(&r);

		/* Short values too: the lengths cli_put_hex() picks. */
		check_hex(v >> rndn(&r, 64));
	}
}

/* Lines of random length through reserve/commit, then the whole. */
static void fill(struct cli_out *o, char *want, size_t *wlen, struct rng *r)
{
	*wlen = 0;
	for (unsigned i = 0; i < 5000; i++) {
		size_t n = rndn(r, 9) == 0 ? 4000 + rndn(r, 9000) :
					      rndn(r, 120);
		char *p = cli_out_reserve(o, n + 1);

		for (size_t k = 0; k < n; k++)
			p[k] = want[*wlen + k] = (char)('a' + (i + k) % 26);
		p[n] = want[*wlen + n] = '\n';
		*wlen += n + 1;
		cli_out_commit(o, p + n + 1);
	}
}

static void test_out(void **state)
{
	size_t cap = 5000 * 13002, wlen, got;
	char *want = malloc(cap), *back = malloc(cap);
	struct rng r = { 17 };
	struct cli_out o;
	FILE *f;

	(void)state;
	assert_non_null(want);
	assert_non_null(back);
	assert_int_equal(cli_out_init(&o, NULL), 0);
	fill(&o, want, &wlen, &r);
	assert_int_equal(o.len, wlen);
	assert_memory_equal(o.buf, want, wlen);
	cli_out_fini(&o);

	f = tmpfile();
	assert_non_null(f);
	assert_int_equal(cli_out_init(&o, f), 0);
	fill(&o, want, &wlen, &r);
	cli_out_fini(&o);
	rewind(f);
	got = fread(back, 1, cap, f);
	assert_int_equal(got, wlen);
	assert_memory_equal(back, want, wlen);
	fclose(f);
	free(want);
	free(back);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hex),
		cmocka_unit_test(test_out),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hwt coverage's map arithmetic (src/cli/covmap.c), which skips the zero
 * cells 64 at a time and multiplies for whole runs of them, against the
 * plain definitions: FNV-1a 64 of the 64 KiB map a byte at a time, the
 * cells set counted, the union a saturating sum cell by cell. Empty maps,
 * full ones, cells at both ends, runs of every length.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "cli/cli.h"
#include "rng.h"

static uint8_t map[CLI_MAP_SIZE], sum[CLI_MAP_SIZE], want[CLI_MAP_SIZE];

static uint64_t fnv_plain(const uint8_t *m, size_t *edges)
{
	uint64_t h = 0xcbf29ce484222325ull;

	*edges = 0;
	for (size_t i = 0; i < CLI_MAP_SIZE; i++) {
		h = (h ^ m[i]) * 0x100000001b3ull;
		*edges += m[i] != 0;
	}
	return h;
}

/* Map @k of the test: how many cells set, and where, by @k. */
static void make_map(struct rng *r, unsigned k)
{
	static const unsigned counts[] = { 0, 1, 2, 63, 64, 65, 300, 5000,
					   40000, CLI_MAP_SIZE };
	unsigned n = counts[k % 10];

	memset(map, 0, sizeof(map));
	if (n == CLI_MAP_SIZE) {
		for (size_t i = 0; i < CLI_MAP_SIZE; i++)
			map[i] = (uint8_t)(1 + rndn(r, 255));
		return;
	}
	for (unsigned i = 0; i < n; i++)
		map[rndn(r, CLI_MAP_SIZE)] = (uint8_t)(1 + rndn(r, 255));
	if (k & 16)
		map[0] = 1;
	if (k & 32)
		map[CLI_MAP_SIZE - 1] = 255;
	if (k & 64) {
		/* A run of cells set, and a gap of exactly 64 and 65. */
		size_t at = rndn(r, CLI_MAP_SIZE - 200);

		memset(map + at, 7, 70);
		map[at + 70 + 64] = 2;
		map[at + 70 + 64 + 66] = 3;
	}
}

static void test_hash(void **state)
{
	struct rng r = { 12345 };

	(void)state;
	for (unsigned k = 0; k < 400; k++) {
		size_t e1, e2;
		uint64_t h;

		make_map(&r, k);
		h = cli_map_hash(map, &e1);
		assert_true(h == fnv_plain(map, &e2));
		assert_int_equal(e1, e2);
	}
}

static void test_take(void **state)
{
	struct rng r = { 999 };

	(void)state;
	memset(sum, 0, sizeof(sum));
	memset(want, 0, sizeof(want));
	for (unsigned k = 0; k < 200; k++) {
		size_t e1, e2;
		uint64_t h, plain;

		make_map(&r, k);
		plain = fnv_plain(map, &e2);
		for (size_t i = 0; i < CLI_MAP_SIZE; i++) {
			unsigned v = want[i] + map[i];

			want[i] = (uint8_t)(v > 255 ? 255 : v);
		}
		h = cli_map_take(map, sum, &e1);
		assert_true(h == plain);
		assert_int_equal(e1, e2);
		assert_memory_equal(sum, want, sizeof(sum));
		for (size_t i = 0; i < CLI_MAP_SIZE; i++)
			assert_int_equal(map[i], 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hash),
		cmocka_unit_test(test_take),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

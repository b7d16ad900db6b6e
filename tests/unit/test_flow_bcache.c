/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The block cache's entry table (src/flow/bcache.c) through its growth:
 * every entry stays findable, with every field as stored, across the
 * doublings in place (mremap() and a rehash where the table is), with
 * nearby code (runs of IPs in nearby slots, clusters that wrap around the
 * table's end) and far-apart modules mixed, and entries replaced.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "flow/bcache.h"

/* Entry @k's IP: runs of 64 instructions 3 bytes apart (a run fills
 * neighbouring slots, wrapping around the table's end now and then), the
 * runs at addresses spread over 48 bits. */
static uint64_t ip_of(unsigned k)
{
	uint64_t run = (uint64_t) (k >> 6) * 0x9e3779b97f4a7c15ull;

	return (run >> 16 & ~0xfffull) + (k & 63) * 3;
}

static void entry_of(unsigned k, unsigned version, struct hwt_bc_entry *e)
{
	memset(e, 0, sizeof(*e));
	e->ip = ip_of(k);
	e->target = e->ip * 7 + version;
	e->disp = (int16_t) (k % 1000);
	e->sec = (uint16_t) (k % 5);
	e->ninsn = (uint8_t) (1 + k % 255);
	e->mode = (uint8_t) (k % 4);
	e->qual = (uint8_t) (1 + k % 6);
	e->size = (uint8_t) (1 + k % 15);
	e->iclass = (uint8_t) (k % 7);
	e->flags = (uint8_t) (k % 3);
	e->kind = (uint8_t) (k % 11);
}

/* Entries 0..@n - 1 are there as stored (@version for the multiples of
 * 7, else 0); the next ones are not. */
static void check(const struct hwt_bcache *bc, unsigned n, unsigned version)
{
	for (unsigned k = 0; k < n; k++) {
		const struct hwt_bc_entry *e = hwt_bcache_lookup(bc, ip_of(k));
		struct hwt_bc_entry want;

		entry_of(k, k % 7 ? 0 : version, &want);
		assert_non_null(e);
		assert_memory_equal(e, &want, sizeof(want));
	}
	for (unsigned k = n; k < n + 256; k++)
		assert_null(hwt_bcache_lookup(bc, ip_of(k)));
	assert_int_equal(bc->used, n);
}

static void test_grow_keeps_entries(void **state)
{
	/* Below half of the largest table, where the cache starts over. */
	enum { N = 300000 };
	struct hwt_bcache bc;
	struct hwt_bc_entry e;
	size_t mask;
	unsigned grown = 0;

	(void) state;
	assert_int_equal(hwt_bcache_init(&bc), 0);
	mask = bc.mask;
	for (unsigned k = 0; k < N; k++) {
		entry_of(k, 0, &e);
		assert_int_equal(hwt_bcache_add(&bc, &e), 0);
		if (bc.mask != mask) {
			/* Right after a doubling: all that was there. */
			mask = bc.mask;
			grown++;
			check(&bc, k + 1, 0);
		}
	}
	assert_true(grown >= 6);
	check(&bc, N, 0);

	/* A replaced entry is found as replaced; the count stays. */
	for (unsigned k = 0; k < N; k += 7) {
		entry_of(k, 1, &e);
		assert_int_equal(hwt_bcache_add(&bc, &e), 0);
	}
	check(&bc, N, 1);
	hwt_bcache_fini(&bc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grow_keeps_entries),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

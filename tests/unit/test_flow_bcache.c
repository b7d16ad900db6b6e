/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The block cache's entry table (src/flow/bcache.c) through its growth:
 * every entry stays findable, with every field as stored, across the
 * doublings in place (mremap() and a rehash where the table is), with
 * nearby code (runs of IPs in nearby slots, clusters that wrap around the
 * table's end) and far-apart modules mixed, and entries replaced. And
 * what a cache carries to another image (hwt_bcache_carry()): only what
 * that image maps from the same file, in a section ending where it did in
 * the file, moved where the image maps it elsewhere; and in place, to
 * the same cache, entries dropped, moved and kept in one table. The
 * occupancy bits the carry finds entries by match the table throughout.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <hwt/flow.h>
#include <hwt/image.h>

#include "flow/bcache.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

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

/* A slot's occupancy bit is set exactly where it holds an entry
 * (hwt_bcache_carry() finds the entries by them). */
static void check_occ(const struct hwt_bcache *bc)
{
	size_t n = 0;

	for (size_t i = 0; i <= bc->mask; i++) {
		int bit = (int) (bc->occ[i / 64] >> (i % 64) & 1);

		assert_int_equal(bit, bc->slots[i].ninsn != 0);
		n += (size_t) bit;
	}
	assert_int_equal(n, bc->used);
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
	check_occ(bc);
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
	hwt_bcache_clear(&bc);
	check(&bc, 0, 0);
	hwt_bcache_fini(&bc);
}

/* ---- carrying a cache to another image ---- */

enum { CODE = 0x10000, BASE = 0x400000, STEP = 16 };

/* A file of CODE bytes (the same bytes in each: files told apart by
 * where they are, not what they hold). */
static void code_file(char *path)
{
	static uint8_t code[CODE];
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	for (unsigned i = 0; i < CODE; i++)
		code[i] = (uint8_t) (i * 31 + 7);
	assert_int_equal(write(fd, code, CODE), CODE);
	close(fd);
}

static struct hwt_image *image_of(const char *path, uint64_t off,
				  uint64_t size, uint64_t vaddr)
{
	struct hwt_image *image = hwt_image_new();

	assert_non_null(image);
	assert_int_equal(hwt_image_add_file(image, path, off, size, vaddr), 0);
	return image;
}

/* An entry every STEP bytes of the section at BASE of @image (the last
 * instruction's end inside it; every other one a direct branch to 100
 * bytes on), and, if @cross, one whose last instruction crosses the
 * section's end. */
static unsigned fill_at(struct hwt_bcache *bc, const struct hwt_image *image,
			uint64_t base, int cross)
{
	struct hwt_image_span span;
	struct hwt_bc_entry e;
	unsigned n = 0;
	int sec;

	assert_int_equal(hwt_image_span(image, base, &span), 0);
	sec = hwt_bcache_sec_of(bc, image, span.end,
				(uintptr_t) span.data - (uintptr_t) span.begin);
	assert_true(sec >= 0);
	for (uint64_t ip = base; ip + STEP <= span.end; ip += STEP, n++) {
		memset(&e, 0, sizeof(e));
		e.ip = ip;
		e.disp = 4;
		e.size = 5;
		e.ninsn = 2;
		e.qual = HWT_BCQ_DECODE;
		e.sec = (uint16_t) sec;
		if (n % 2) {
			e.flags = HWT_INSN_DIRECT;
			e.target = ip + 100;
		}
		assert_int_equal(hwt_bcache_add(bc, &e), 0);
	}
	if (cross) {
		e.ip = span.end - 3;
		e.disp = 0;
		e.truncated = 1;
		assert_int_equal(hwt_bcache_add(bc, &e), 0);
	}
	return n;
}

static unsigned fill(struct hwt_bcache *bc, const struct hwt_image *image)
{
	return fill_at(bc, image, BASE, 1);
}

/* How many of fill()'s entries (not the truncated one) @bc has from
 * @from up, each as made but @by bytes on (its address and a direct
 * branch's target), its section @image's at its address; none where
 * they were if they moved. */
static unsigned carried_by(const struct hwt_bcache *bc,
			   const struct hwt_image *image, uint64_t from,
			   uint64_t by)
{
	unsigned n = 0, k = 0;

	check_occ(bc);
	for (uint64_t at = BASE; at + STEP <= BASE + CODE; at += STEP, k++) {
		const struct hwt_bc_entry *e = hwt_bcache_lookup(bc, at + by);
		struct hwt_image_span span;
		uint64_t ip = at + by;

		if (by)
			assert_null(hwt_bcache_lookup(bc, at));
		if (!e)
			continue;
		assert_true(ip >= from);
		assert_int_equal(e->ip, ip);
		assert_int_equal(e->target, k % 2 ? ip + 100 : 0);
		assert_int_equal(hwt_image_span(image, ip, &span), 0);
		assert_int_equal(bc->secs[e->sec].end, span.end);
		assert_true(bc->secs[e->sec].delta ==
			    (uintptr_t) span.data - (uintptr_t) span.begin);
		/* (Where it comes from goes along: it carries again.) */
		assert_true(bc->secs[e->sec].ided);
		assert_true(bc->secs[e->sec].ino == span.ino &&
			    bc->secs[e->sec].off == span.off +
						    (span.end - span.begin));
		n++;
	}
	assert_null(hwt_bcache_lookup(bc, BASE + CODE - 3 + by));
	return n;
}

static unsigned carried(const struct hwt_bcache *bc,
			const struct hwt_image *image, uint64_t from)
{
	return carried_by(bc, image, from, 0);
}

/* Carried from a cache of @a's code to a fresh cache of @b's: count. */
static unsigned carry_to_by(const struct hwt_image *a,
			    const struct hwt_image *b, uint64_t from,
			    uint64_t by)
{
	struct hwt_bcache x, y;
	unsigned n;

	assert_int_equal(hwt_bcache_init(&x), 0);
	assert_int_equal(hwt_bcache_init(&y), 0);
	fill(&x, a);
	hwt_bcache_carry(&y, &x, b);
	n = carried_by(&y, b, from, by);
	/* (What it was carried from stays as it was.) */
	assert_int_equal(x.used, CODE / STEP + 1);
	assert_non_null(hwt_bcache_lookup(&x, BASE + STEP));
	assert_int_equal(hwt_bcache_lookup(&x, BASE + STEP)->target,
			 BASE + STEP + 100);
	hwt_bcache_fini(&x);
	hwt_bcache_fini(&y);
	return n;
}

static unsigned carry_to(const struct hwt_image *a, const struct hwt_image *b,
			 uint64_t from)
{
	return carry_to_by(a, b, from, 0);
}

static void test_carry(void **state)
{
	char f1[] = "/tmp/hwt-carry-XXXXXX", f2[] = "/tmp/hwt-carry-XXXXXX";
	struct hwt_image *a, *same, *other, *moved, *later, *shorter, *shifted,
		*later_moved;
	struct hwt_bcache bc;
	unsigned all;

	(void) state;
	code_file(f1);
	code_file(f2);
	a = image_of(f1, 0, CODE, BASE);
	same = image_of(f1, 0, CODE, BASE);
	other = image_of(f2, 0, CODE, BASE);
	moved = image_of(f1, 0, CODE, BASE + 0x100000);
	later = image_of(f1, 0x1000, CODE - 0x1000, BASE + 0x1000);
	later_moved = image_of(f1, 0x1000, CODE - 0x1000, BASE + 0x101000);
	shorter = image_of(f1, 0, CODE / 2, BASE);
	/* (Ending where it did, but with the file's bytes 4 KiB on.) */
	shifted = image_of(f1, 0, CODE - 0x1000, BASE + 0x1000);
	all = CODE / STEP;

	/* Another process of the program: all but the truncated one, with
	 * its mapping of the file. */
	assert_int_equal(carry_to(a, same, BASE), all);
	/* The same bytes from another file, the section ending elsewhere in
	 * the file or with other bytes of the file: none. */
	assert_int_equal(carry_to(a, other, BASE), 0);
	assert_int_equal(carry_to(a, shorter, BASE), 0);
	assert_int_equal(carry_to(a, shifted, BASE), 0);
	/* The file elsewhere (a library that address-space randomisation
	 * put at another address): all, moved with it. */
	assert_int_equal(carry_to_by(a, moved, BASE + 0x100000, 0x100000), all);
	/* The file mapped from a later offset: what it still holds, there
	 * or elsewhere. */
	assert_int_equal(carry_to(a, later, BASE + 0x1000),
			 all - 0x1000 / STEP);
	assert_int_equal(carry_to_by(a, later_moved, BASE + 0x101000,
				     0x100000),
			 all - 0x1000 / STEP);

	/* In place: a library mapped beside it, then an exec of the same
	 * program (everything unmapped, the file mapped again). */
	assert_int_equal(hwt_bcache_init(&bc), 0);
	fill(&bc, a);
	assert_int_equal(hwt_image_add_file(a, f2, 0, CODE, BASE + 0x200000),
			 0);
	hwt_bcache_carry(&bc, &bc, a);
	assert_int_equal(carried(&bc, a, BASE), all);
	/* (The entry that crossed the end is gone, and with it the mark
	 * that keeps the next carry from leaving the table as it is.) */
	for (size_t k = 0; k < bc.nsecs; k++)
		assert_false(bc.secs[k].truncated);
	hwt_image_clear(a);
	assert_int_equal(hwt_image_add_file(a, f1, 0, CODE, BASE), 0);
	hwt_bcache_carry(&bc, &bc, a);
	assert_int_equal(carried(&bc, a, BASE), all);
	/* ... and of another program there: nothing. */
	hwt_image_clear(a);
	assert_int_equal(hwt_image_add_file(a, f2, 0, CODE, BASE), 0);
	hwt_bcache_carry(&bc, &bc, a);
	assert_int_equal(carried(&bc, a, BASE), 0);
	assert_int_equal(bc.used, 0);
	hwt_bcache_fini(&bc);

	/* In place, without an entry that crosses the end (the table is
	 * kept as it is, not made again): another process of the program
	 * (its own mapping of the file); a library mapped beside it; then
	 * the section's first 4 KiB unmapped (those entries go); then the
	 * program lower down (all move). */
	hwt_image_clear(a);
	assert_int_equal(hwt_image_add_file(a, f1, 0, CODE, BASE), 0);
	assert_int_equal(hwt_bcache_init(&bc), 0);
	fill_at(&bc, a, BASE, 0);
	hwt_bcache_carry(&bc, &bc, same);
	assert_int_equal(carried(&bc, same, BASE), all);
	assert_int_equal(hwt_image_add_file(same, f2, 0, CODE,
					    BASE + 0x200000), 0);
	hwt_bcache_carry(&bc, &bc, same);
	assert_int_equal(carried(&bc, same, BASE), all);
	assert_int_equal(bc.used, all);
	assert_int_equal(hwt_image_remove(same, BASE, 0x1000), 0);
	hwt_bcache_carry(&bc, &bc, same);
	assert_int_equal(carried(&bc, same, BASE + 0x1000),
			 all - 0x1000 / STEP);
	assert_int_equal(bc.used, all - 0x1000 / STEP);
	hwt_image_clear(same);
	assert_int_equal(hwt_image_add_file(same, f1, 0, CODE,
					    BASE - 0x100000), 0);
	hwt_bcache_carry(&bc, &bc, same);
	assert_int_equal(carried_by(&bc, same, BASE + 0x1000 - 0x100000,
				    (uint64_t) -0x100000),
			 all - 0x1000 / STEP);
	assert_int_equal(bc.used, all - 0x1000 / STEP);
	hwt_bcache_fini(&bc);

	/* Two programs' files; the second one's moved, the first one's
	 * gone: its section is the first now, and begins where it moved. */
	hwt_image_clear(a);
	assert_int_equal(hwt_image_add_file(a, f2, 0, CODE, BASE + 0x200000),
			 0);
	assert_int_equal(hwt_image_add_file(a, f1, 0, CODE, BASE), 0);
	assert_int_equal(hwt_bcache_init(&bc), 0);
	fill_at(&bc, a, BASE + 0x200000, 0);
	fill_at(&bc, a, BASE, 0);
	assert_int_equal(bc.nsecs, 2);
	hwt_image_clear(a);
	assert_int_equal(hwt_image_add_file(a, f1, 0, CODE, BASE + 0x100000),
			 0);
	hwt_bcache_carry(&bc, &bc, a);
	assert_int_equal(carried_by(&bc, a, BASE + 0x100000, 0x100000), all);
	assert_int_equal(bc.used, all);
	assert_int_equal(bc.nsecs, 1);
	assert_int_equal(bc.secs[0].low, BASE + 0x100000);
	hwt_bcache_fini(&bc);

	/* The file mapped twice, both carried to one place: one entry an
	 * address. */
	hwt_image_clear(a);
	assert_int_equal(hwt_image_add_file(a, f1, 0, CODE, BASE), 0);
	assert_int_equal(hwt_image_add_file(a, f1, 0, CODE, BASE + 0x100000),
			 0);
	assert_int_equal(hwt_bcache_init(&bc), 0);
	fill_at(&bc, a, BASE, 0);
	fill_at(&bc, a, BASE + 0x100000, 0);
	assert_int_equal(bc.used, 2 * all);
	hwt_image_clear(a);
	assert_int_equal(hwt_image_add_file(a, f1, 0, CODE, BASE + 0x200000),
			 0);
	hwt_bcache_carry(&bc, &bc, a);
	assert_int_equal(carried_by(&bc, a, BASE + 0x200000, 0x200000), all);
	assert_int_equal(bc.used, all);
	hwt_bcache_fini(&bc);

	hwt_image_delete(a);
	hwt_image_delete(same);
	hwt_image_delete(other);
	hwt_image_delete(moved);
	hwt_image_delete(later);
	hwt_image_delete(shorter);
	hwt_image_delete(shifted);
	hwt_image_delete(later_moved);
	unlink(f1);
	unlink(f2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grow_keeps_entries),
		cmocka_unit_test(test_carry),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target for the block decoder: random packets over a fixed
 * small code image. The first input byte picks decoder flags; the rest is
 * the trace, after a PSB+ that enables tracing at the image, so mutations
 * reach the flow logic at once. Work per input is bounded.
 *
 * Differential: each input is decoded by the general path alone
 * (HWT_BLK_NO_GRAPH, one hwt_blk_next() at a time) and by the fast path
 * (the block graph, through hwt_blk_next_batch() with a batch size from
 * the flags byte, and through hwt_blk_fold_next()); every block, status,
 * event and error must be the same, and so must the folds. A difference
 * aborts. The block decodes switch between two images of the code
 * (hwt_blk_set_image()) at every sync, so kept block caches come back.
 * The folds are also made without the block cache (HWT_BLK_NO_CACHE:
 * every instruction decoded as met; only where blocks end may differ),
 * and again after hwt_blk_set_trace() (a warm cache, state to forget);
 * both must fold the trace the same, and the fast folds must count the
 * blocks (hwt_blk_tally(), as hwt coverage --lcov) as the general path's
 * blocks count them. And through
 * hwt_blk_next_batch_until() with marks a few bytes on: besides the same
 * blocks, every block of a batch but its first must start (on the general
 * path, one block at a time) with the time the batch started with and an
 * offset below its mark.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hwt/flow.h>

#include "fold_loop.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * 1000: add rax, 1; cmp rax, 3; jb 1000; call 1030; jmp rax
 * 100f: mov cr3, rax; call rax; ret; vmlaunch; syscall; iretq; int3
 * 1030: nop; je 1038; ret; ...; 1038: jmp 1000; ptwrite eax; hlt; jmp rax
 */
static const uint8_t code[] = {
	0x48, 0x83, 0xc0, 0x01, 0x48, 0x83, 0xf8, 0x03, 0x72, 0xf6,
	0xe8, 0x21, 0x00, 0x00, 0x00, 0xff, 0xe0,
	0x0f, 0x22, 0xd8, 0xff, 0xd0, 0xc3, 0x0f, 0x01, 0xc2, 0x0f, 0x05,
	0x48, 0xcf, 0xcc, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
	0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
	/* 1030 */
	0x90, 0x74, 0x04, 0xc3, 0x90, 0x90, 0x90, 0x90,
	/* 1038 */
	0xeb, 0xc6, 0xf3, 0x0f, 0xae, 0xe0, 0xf4, 0xff, 0xe0,
	/* 1041: an instruction cut by the end of the section */
	0x48, 0x83
};

/* The other image: jb 1000 made jae, the nop at 1030 made cli. */
static uint8_t code2[sizeof(code)];

static void make_code2(void)
{
	memcpy(code2, code, sizeof(code));
	code2[8] = 0x73;
	code2[0x30] = 0xfa;
}

static const uint8_t psb_plus[] = {
	/* psb */
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	/* mode.exec 64-bit */
	0x99, 0x01,
	/* fup 0x1000 (sext48) */
	0x7d, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00,
	/* psbend */
	0x02, 0x23
};

enum {
	MAX_STEPS = 1 << 16,	/* blocks + events per input */
	MAX_SYNCS = 64
};

/* A running hash of what a decode produced (FNV-1a), and a count;
 * @limited: the work bound stopped it (then it is not compared). */
struct sum {
	uint64_t h, n;
	int limited;
};

static void sum_add(struct sum *s, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++) {
		s->h ^= b[i];
		s->h *= 0x100000001b3ull;
	}
	s->n++;
}

static void sum_int(struct sum *s, int v)
{
	sum_add(s, &v, sizeof(v));
}

static struct hwt_blk_decoder *new_decoder(const struct hwt_blk_config *cfg,
					   struct hwt_image *image,
					   uint32_t more)
{
	struct hwt_blk_config c = *cfg;

	c.flags |= more;
	return hwt_blk_new(&c, image);
}

/* The general path's time and offset after each block (by its number),
 * for hwt_blk_next_batch_until()'s to be held against. */
struct after {
	uint64_t tsc, off;
	int time_err, off_err;
};

static struct after after[MAX_STEPS + 8];
static size_t nafter;

/* hwt_blk_next_batch_until()'s batches: @first, the number of the first
 * block, did not start where the general path gave another time, or an
 * offset at @mark or more, before a block but the first. */
static void until_check(size_t first, size_t n, uint64_t mark,
			const struct after *before)
{
	for (size_t i = first + 1; i < first + n && i <= nafter; i++) {
		const struct after *a = &after[i - 1];

		if (a->time_err != before->time_err ||
		    a->tsc != before->tsc || a->off_err < 0 ||
		    a->off >= mark) {
			fprintf(stderr, "fuzz_flow: block %zu of a batch of "
				"hwt_blk_next_batch_until() starts with "
				"another time or at its mark\n", i);
			abort();
		}
	}
}

/*
 * Decode everything. @batch: blocks per hwt_blk_next_batch() (0:
 * hwt_blk_next()); @until: hwt_blk_next_batch_until() instead. @walk:
 * walk the blocks as a printer would, and note the time and offset after
 * each (@after).
 */
static void decode(struct hwt_blk_decoder *d, struct hwt_image **images,
		   size_t batch, int until, int walk, struct sum *s)
{
	struct hwt_block blocks[7];
	unsigned steps = 0, syncs = 0;
	size_t nblocks = 0;

	s->h = 0xcbf29ce484222325ull;
	s->n = 0;
	s->limited = 1;
	while (syncs++ < MAX_SYNCS && steps < MAX_STEPS) {
		int status = hwt_blk_set_image(d, images[syncs & 1]);

		if (status < 0)
			abort();
		status = hwt_blk_sync_forward(d);

		sum_int(s, status);
		if (status < 0) {
			s->limited = 0;
			break;
		}

		while (steps++ < MAX_STEPS) {
			size_t n = 1;

			while (status >= 0 && (status & HWT_STS_EVENT_PENDING) &&
			       steps++ < MAX_STEPS) {
				struct hwt_event ev;

				status = hwt_blk_event(d, &ev);
				sum_int(s, status);
				if (status >= 0)
					sum_add(s, &ev, sizeof(ev));
			}
			if (status < 0 || (status & HWT_STS_EOS))
				break;

			if (until) {
				struct after b;

				b.off_err = hwt_blk_get_offset(d, &b.off);
				if (b.off_err < 0)
					b.off = 0;
				b.time_err = hwt_blk_time(d, &b.tsc, NULL,
							  NULL);
				/* (Sometimes at the offset: one block.) */
				b.off += (steps * 7) % 23;
				status = hwt_blk_next_batch_until(d, blocks,
								  batch, &n,
								  b.off);
				until_check(nblocks, n, b.off, &b);
			} else if (batch) {
				status = hwt_blk_next_batch(d, blocks, batch,
							    &n);
			} else {
				status = hwt_blk_next(d, &blocks[0]);
			}
			if (walk && nblocks < MAX_STEPS) {
				struct after *a = &after[nblocks];

				a->off_err = hwt_blk_get_offset(d, &a->off);
				a->time_err = hwt_blk_time(d, &a->tsc, NULL,
							   NULL);
				nafter = nblocks + 1;
			}
			nblocks += n;
			for (size_t i = 0; i < n; i++) {
				const struct hwt_block *b = &blocks[i];
				uint64_t ip = b->ip;

				sum_add(s, b, sizeof(*b));
				sum_int(s, i + 1 < n ? 0 : status);
				if (!walk)
					continue;
				/* Walk the block as a printer would. */
				for (uint32_t k = 0; k < b->ninsn && k < 0x10000;
				     ++k) {
					struct hwt_insn insn;

					if (hwt_blk_insn_walk(hwt_blk_image(d),
							      b->mode, &ip,
							      &insn) < 0)
						break;
				}
			}
			steps += (unsigned) n;
			if (status) {
				/* Where a batch ends for sure. */
				uint64_t ip = 0, off = 0;

				(void) hwt_blk_get_ip(d, &ip);
				sum_add(s, &ip, sizeof(ip));
				if (hwt_blk_get_offset(d, &off) >= 0)
					sum_add(s, &off, sizeof(off));
			}
			if (status < 0)
				break;
		}
	}
}

static void fold_at(void *ctx, struct hwt_blk_fold *fold, enum fold_at at,
		    int status, const struct hwt_event *ev)
{
	(void) fold;
	(void) at;
	(void) ev;
	sum_int(ctx, status);
}

/* As hwt flow --stat and coverage do; @fast: hwt_blk_fold_next(); @count
 * (or NULL): the blocks counted as coverage --lcov counts them. */
static void fold(struct hwt_blk_decoder *d, int fast, uint8_t *map,
		 struct sum *s, struct fold_count *count)
{
	const struct fold_loop how = {
		.max_syncs = MAX_SYNCS, .max_steps = MAX_STEPS, .fast = fast,
		.at = fold_at, .ctx = s, .count = count
	};
	struct hwt_blk_fold f;

	if (count)
		memset(count, 0, sizeof(*count));

	memset(map, 0, HWT_BLK_FOLD_MAP_SIZE);
	hwt_blk_fold_init(&f, map);
	s->h = 0xcbf29ce484222325ull;
	s->n = 0;
	s->limited = !fold_loop_run(&how, d, &f);
	sum_add(s, &f.ninsn, sizeof(f.ninsn));
	sum_add(s, &f.nblocks, sizeof(f.nblocks));
	sum_add(s, map, HWT_BLK_FOLD_MAP_SIZE);
	s->n = 0;
}

static void same(const struct sum *a, const struct sum *b, const char *what)
{
	if (a->limited || b->limited)
		return;
	if (a->h != b->h || a->n != b->n) {
		fprintf(stderr, "fuzz_flow: the fast path differs (%s)\n", what);
		abort();
	}
}

/* The fold's tally (hwt_blk_tally()) and its last blocks counted what
 * the general path's blocks count. */
static void same_count(const struct sum *a, const struct fold_count *ca,
		       const struct sum *b, const struct fold_count *cb,
		       const struct hwt_image *image, const char *what)
{
	if (a->limited || b->limited)
		return;
	if (!fold_count_same(ca, cb, image)) {
		fprintf(stderr, "fuzz_flow: the tally differs (%s)\n", what);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t tail[] = { 0x0f, 0x22 };
	static uint8_t map_ref[HWT_BLK_FOLD_MAP_SIZE];
	static uint8_t map_fast[HWT_BLK_FOLD_MAP_SIZE];
	static const size_t batches[] = { 1, 2, 3, 7 };
	static struct fold_count count_ref, count_fast;
	struct hwt_blk_config cfg;
	struct hwt_blk_decoder *d, *cold;
	struct hwt_image *image, *images[2] = { NULL, NULL };
	struct sum ref, fast;
	uint8_t *trace;
	uint8_t sel;

	if (!size)
		return 0;
	sel = data[0];
	data++;
	size--;

	trace = malloc(sizeof(psb_plus) + size);
	if (!trace)
		return 0;
	memcpy(trace, psb_plus, sizeof(psb_plus));
	memcpy(trace + sizeof(psb_plus), data, size);

	make_code2();
	for (int i = 0; i < 2; i++) {
		images[i] = hwt_image_new();
		if (!images[i])
			goto out;
		(void) hwt_image_add_buffer(images[i], i ? code2 : code,
					    sizeof(code), 0x1000);
		/* A second section right behind: instructions across the
		 * seam. */
		(void) hwt_image_add_buffer(images[i], tail, sizeof(tail),
					    0x1000 + sizeof(code));
	}
	image = images[0];

	hwt_blk_config_init(&cfg);
	cfg.qry.begin = trace;
	cfg.qry.end = trace + sizeof(psb_plus) + size;
	cfg.flags = sel & (HWT_BLK_END_ON_CALL | HWT_BLK_END_ON_JUMP |
			   HWT_BLK_ENABLE_TICK | HWT_BLK_NO_CACHE);
	/* (With blocks ending at calls, as hwt coverage and calls have.) */
	if (sel & HWT_BLK_END_ON_CALL)
		cfg.flags |= HWT_BLK_PSB_CLEARS_STACK;
	if (sel & 0x10)
		cfg.qry.errata = HWT_PT_ERRATUM_SKD022 |
				 HWT_PT_ERRATUM_SKL014 |
				 HWT_PT_ERRATUM_BDM64 | HWT_PT_ERRATUM_BDM70;
	if (sel & 0x20) {
		cfg.qry.addr_filter[0].cfg = 1;
		cfg.qry.addr_filter[0].a = 0x1000;
		cfg.qry.addr_filter[0].b = 0x1030;
	}
	if (sel & 0x40)
		cfg.qry.flags |= HWT_QRY_EVENT_TRACE;
	if (sel & 0x80) {
		/* MTC and CYC make time. */
		cfg.qry.time.cpuid_0x15_eax = 2;
		cfg.qry.time.cpuid_0x15_ebx = 200;
		cfg.qry.time.mtc_freq = 3;
		cfg.qry.time.nom_freq = 20;
	}

	/* The general path alone, walked as a printer would. */
	d = new_decoder(&cfg, image, HWT_BLK_NO_GRAPH);
	if (!d)
		goto out;
	nafter = 0;
	decode(d, images, 0, 0, 1, &ref);
	hwt_blk_delete(d);

	/* The fast path: one block at a time, then in batches. */
	d = new_decoder(&cfg, image, 0);
	if (!d)
		goto out;
	decode(d, images, 0, 0, 0, &fast);
	same(&ref, &fast, "hwt_blk_next");
	hwt_blk_delete(d);
	d = new_decoder(&cfg, image, 0);
	if (!d)
		goto out;
	decode(d, images, batches[(sel >> 2) & 3], 0, 0, &fast);
	same(&ref, &fast, "hwt_blk_next_batch");
	hwt_blk_delete(d);
	d = new_decoder(&cfg, image, 0);
	if (!d)
		goto out;
	decode(d, images, 7, 1, 0, &fast);
	same(&ref, &fast, "hwt_blk_next_batch_until");
	hwt_blk_delete(d);

	/* Folds. */
	d = new_decoder(&cfg, image, HWT_BLK_NO_GRAPH);
	if (!d)
		goto out;
	fold(d, 0, map_ref, &ref, &count_ref);
	hwt_blk_delete(d);
	d = new_decoder(&cfg, image, 0);
	if (!d)
		goto out;
	fold(d, 1, map_fast, &fast, &count_fast);
	same(&ref, &fast, "hwt_blk_fold_next");
	same_count(&ref, &count_ref, &fast, &count_fast, image,
		   "hwt_blk_fold_next");
	/* Without the cache: decoded instruction by instruction. */
	cold = new_decoder(&cfg, image, HWT_BLK_NO_CACHE);
	if (cold) {
		fold(cold, 0, map_fast, &fast, NULL);
		same(&ref, &fast, "HWT_BLK_NO_CACHE");
		hwt_blk_delete(cold);
	}
	/* The same trace again, the cache warm: as a new decoder. */
	if (hwt_blk_set_trace(d, cfg.qry.begin, cfg.qry.end) == 0) {
		fold(d, 1, map_fast, &fast, &count_fast);
		same(&ref, &fast, "hwt_blk_set_trace");
		same_count(&ref, &count_ref, &fast, &count_fast, image,
			   "hwt_blk_set_trace");
	}
	hwt_blk_delete(d);
out:
	hwt_image_delete(images[0]);
	hwt_image_delete(images[1]);
	free(trace);
	return 0;
}

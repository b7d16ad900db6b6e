/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The fold loop of hwt flow --stat and coverage (canonical blocks end at
 * every event and sync), shared by the two that hold the fast path
 * (hwt_blk_fold_next()) against the general one, tests/unit/
 * test_flow_graph.c and fuzz/fuzz_flow.c, and by bench/bench_fuzz.c (a
 * fuzzer's loop). No cmocka: the fuzz target builds it too.
 */
#ifndef HWT_TESTS_FOLD_LOOP_H
#define HWT_TESTS_FOLD_LOOP_H

#include <hwt/flow.h>

enum fold_at {
	FOLD_AT_SYNC,	/* a sync's status */
	FOLD_AT_EVENT,	/* an event's status; the event if it is >= 0 */
	FOLD_AT_END	/* the status that ends a sync's run of blocks */
};

/*
 * Blocks counted as hwt coverage --lcov counts them (hwt_an_cover's
 * rule): by block (image id and generation, IP, instructions, mode) the
 * times it ran, and for a conditional jump at its end the times the next
 * block started where it falls through (fell) or elsewhere (taken); a
 * sync or an event drops an outcome pending. The blocks come from
 * hwt_blk_next() one by one, or, where the loop folds, as the decoder
 * tallies them (hwt_blk_tally()) and the fold's last block. Two counts
 * of one trace must be the same by instruction, whichever way they were
 * made.
 */
#define FOLD_COUNT_SLOTS 4096

struct fold_count {
	struct fold_count_e {
		uint64_t image, gen, ip;
		uint32_t ninsn;	/* 0: an empty slot */
		uint8_t mode;
		uint64_t n, taken, fell;
	} e[FOLD_COUNT_SLOTS];
	size_t ne;
	int full;		/* more blocks than slots: not compared */
	struct fold_count_e *pend;
	uint64_t pend_next;	/* its jump's fall-through */
	uint64_t told;		/* runs and outcomes the decoder tallied */
};

struct fold_loop {
	unsigned max_syncs, max_steps;	/* the work bounds */
	int fast;	/* hwt_blk_fold_next() where it can */
	/* Told every status in order, after the fold has taken it in. */
	void (*at)(void *ctx, struct hwt_blk_fold *fold, enum fold_at at,
		   int status, const struct hwt_event *ev);
	void *ctx;
	/* If not NULL, zeroed by the caller: the blocks counted (above). */
	struct fold_count *count;
};

/*
 * Fold all of @d's trace into @fold (initialised by the caller) and end
 * its last block. Returns 1 if it ran to the end (a sync failed), 0 if a
 * bound stopped it.
 */
int fold_loop_run(const struct fold_loop *how, struct hwt_blk_decoder *d,
		  struct hwt_blk_fold *fold);

/* Are @a and @b the same counts of the instructions of @image (1), or
 * not (0)? (Where blocks end depends on the cache's history: blocks may
 * differ where their instructions do not. Out of memory: 1.) */
int fold_count_same(const struct fold_count *a, const struct fold_count *b,
		    const struct hwt_image *image);

#endif /* HWT_TESTS_FOLD_LOOP_H */

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

struct fold_loop {
	unsigned max_syncs, max_steps;	/* the work bounds */
	int fast;	/* hwt_blk_fold_next() where it can */
	/* Told every status in order, after the fold has taken it in. */
	void (*at)(void *ctx, struct hwt_blk_fold *fold, enum fold_at at,
		   int status, const struct hwt_event *ev);
	void *ctx;
};

/*
 * Fold all of @d's trace into @fold (initialised by the caller) and end
 * its last block. Returns 1 if it ran to the end (a sync failed), 0 if a
 * bound stopped it.
 */
int fold_loop_run(const struct fold_loop *how, struct hwt_blk_decoder *d,
		  struct hwt_blk_fold *fold);

#endif /* HWT_TESTS_FOLD_LOOP_H */

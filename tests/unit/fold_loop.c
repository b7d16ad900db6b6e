/* SPDX-License-Identifier: BSD-2-Clause */
/* The shared fold loop (fold_loop.h). */
#include <stddef.h>

#include "fold_loop.h"

int fold_loop_run(const struct fold_loop *how, struct hwt_blk_decoder *d,
		  struct hwt_blk_fold *fold)
{
	unsigned syncs = 0, steps = 0;
	int ended = 0;

	while (syncs++ < how->max_syncs && steps < how->max_steps) {
		int status = hwt_blk_sync_forward(d);

		hwt_blk_fold_end(fold, NULL);
		fold->prev = 0;
		how->at(how->ctx, fold, FOLD_AT_SYNC, status, NULL);
		if (status < 0) {
			ended = 1;
			break;
		}
		while (steps++ < how->max_steps) {
			struct hwt_block b;

			while (status >= 0 &&
			       (status & HWT_STS_EVENT_PENDING)) {
				struct hwt_event ev;

				status = hwt_blk_event(d, &ev);
				hwt_blk_fold_end(fold, NULL);
				how->at(how->ctx, fold, FOLD_AT_EVENT, status,
					status >= 0 ? &ev : NULL);
			}
			if (status < 0 || (status & HWT_STS_EOS))
				break;
			if (how->fast) {
				status = hwt_blk_fold_next(d, fold, &b);
				if (status < 0)
					break;
				if (status)
					continue;
			}
			status = hwt_blk_next(d, &b);
			if (b.ninsn || status >= 0)
				hwt_blk_fold_block(d, fold, &b, NULL);
			if (status < 0)
				break;
		}
		how->at(how->ctx, fold, FOLD_AT_END, status, NULL);
	}
	hwt_blk_fold_end(fold, NULL);
	return ended;
}

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hwt flow, calls, coverage: a trace cut at PSBs into segments, decoded on
 * threads (-j) and printed in order; a perf.data stream piece by piece;
 * the totals. The design is in flow.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hwt/analysis.h>
#include <hwt/flow.h>
#include <hwt/image.h>
#include <hwt/pt.h>

#include "cli/calls.h"
#include "cli/cli.h"
#include "cli/flow.h"

/* ------------------------------------------------------------------ */
/* Segments and threads                                                */
/* ------------------------------------------------------------------ */

struct pool {
	struct flow *fl;
	struct seg *segs;
	struct cli_cut *cuts;	/* segment k starts at cuts[k - 1] */
	size_t nsegs;
	uint64_t chunk;		/* segments are about this long */
	struct cli_order order;	/* of the segments */
};

/* A worker: its pool, and its place among the pool's threads (for its
 * kept decoder, @fl->wkeep). */
struct worker_arg {
	struct pool *pool;
	unsigned slot;
};

/* @d, a decoder kept (released) from a piece or stream before, or NULL:
 * a decoder of @fl's trace and @image, as new but for the code it
 * decoded (hwt_blk_set_trace()), or a new one. */
static struct hwt_blk_decoder *decoder_again(struct flow *fl,
					     struct hwt_blk_decoder *d,
					     struct hwt_image *image)
{
	if (d && (hwt_blk_set_trace(d, fl->trace, fl->trace + fl->size) < 0 ||
		  hwt_blk_set_image(d, image) < 0)) {
		hwt_blk_delete(d);
		d = NULL;
	}
	return d ? d : flow_new_decoder(fl, image);
}

/* The end of @d's stream (or piece): its cover and its image go
 * (counted, released), so that it can be kept for the next. */
static void decoder_done(struct hwt_blk_decoder *d)
{
	(void) hwt_blk_tally(d, NULL, NULL);
	hwt_blk_release_image(d);
}

/* Worker @slot's decoder: the one it kept (perf.data), or a new one. */
static struct hwt_blk_decoder *worker_decoder(struct flow *fl, unsigned slot,
					      struct hwt_image *image)
{
	struct hwt_blk_decoder *d = NULL;

	if (slot < fl->nwkeep) {
		d = fl->wkeep[slot];
		fl->wkeep[slot] = NULL;
	}
	return decoder_again(fl, d, image);
}

static void *worker(void *arg)
{
	struct pool *pool = ((struct worker_arg *) arg)->pool;
	unsigned slot = ((struct worker_arg *) arg)->slot;
	const struct cli_flow_hook *hook = pool->fl->hook;
	/* perf.data: this thread's view of the processes, which its
	 * segments (in stream order) move forward. */
	void *hctx = hook ? hook->fork(hook->ctx) : NULL;
	/* One decoder for all the segments of this thread: the block cache
	 * is the same work for each (hwt_blk_sync_set() keeps it). */
	struct hwt_blk_decoder *dec;
	/* hwt calls: this thread's symbol lookups, for all its segments. */
	struct calls_sym *syms = NULL;
	/* --insn, --branches: the blocks' walks, for all its segments (a
	 * table of its own for each 16 KiB segment made -j2 slower than
	 * one thread). */
	struct hwt_an_walks *walks = NULL;
	struct cli_disasm_memo *dmemo = NULL;
	struct cli_srcline *srcl = NULL;
	int fresh = 1;
	size_t k;

	if (hook && !hctx) {
		fprintf(stderr, "%s: out of memory.\n", pool->fl->opt->prog);
		exit(1);
	}
	dec = worker_decoder(pool->fl, slot,
			     hook ? hook->image(hctx) : pool->fl->image);
	while ((k = cli_order_take(&pool->order)) != SIZE_MAX) {
		struct seg *s = &pool->segs[k];

		if (hook) {
			hook->seg(hctx, k ? &pool->cuts[k - 1] : NULL,
				  k + 1 < pool->nsegs ? &pool->cuts[k] : NULL,
				  &s->notes);
			s->hctx = hctx;
			s->image = hook->image(hctx);
		}
		if (k && time_matters(pool->fl) &&
		    !(pool->fl->opt->config.qry.flags &
		      (HWT_QRY_NO_CYC | HWT_QRY_NO_TCAL))) {
			struct hwt_blk_config cfg = flow_trace_config(pool->fl);

			/*
			 * A guess, checked when it is printed (flow_run()); only
			 * with CYCs (else a PSB+ sets the time, and the check
			 * sees it), and from no further back than half a
			 * segment (decoding there is extra work).
			 */
			if (hwt_evt_time_warm(&cfg.qry, s->begin,
					      pool->chunk / 2,
					      &s->seed.t) >= 0)
				s->seed.have_t = 1;
		}
		calls_seg_swap_syms(&s->calls, &syms);
		s->walks = walks;
		s->dmemo = dmemo;
		s->srcl = srcl;
		flow_decode_segment(pool->fl, s, dec, fresh);
		walks = s->walks;
		dmemo = s->dmemo;
		srcl = s->srcl;
		s->walks = NULL;
		s->dmemo = NULL;
		s->srcl = NULL;
		calls_seg_swap_syms(&s->calls, &syms);
		if (hook)
			hook->seg_end(hctx, &s->notes);
		/* (A cache warmed up once, not once more for the first
		 * segment: a decoder is as good as new before its first.) */
		fresh = 0;
		cli_order_done(&pool->order, &s->done);
	}
	/* perf.data: the next piece's (or stream's) worker in this place
	 * starts with the code this one decoded (its view's image goes). */
	if (dec && hook && slot < pool->fl->nwkeep) {
		decoder_done(dec);
		pool->fl->wkeep[slot] = dec;
	} else {
		hwt_blk_delete(dec);
	}
	hwt_an_walks_delete(walks);
	cli_disasm_memo_delete(dmemo);
	cli_srcline_delete(srcl);
	free(syms);
	if (hook)
		hook->unfork(hctx);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Results                                                             */
/* ------------------------------------------------------------------ */


/* Lost-data notes that the segments before left are due at the first
 * sync of a segment decoded on another thread (of the hook's). */
static size_t seg_join_at(const struct seg *s)
{
	return s->synced ? s->first_sync : s->out.len;
}

/* hwt calls: a segment's lines (and text) to the history. */
static void consume_calls(struct flow *fl, struct seg *s, struct totals *t)
{
	struct calls_hist *h = t->calls;

	if (fl->hook && s->hctx != fl->hook->ctx) {
		size_t at = seg_join_at(s);

		calls_take(h, &s->calls, s->out.buf, 0, at, 0);
		fl->hook->seg_join(fl->hook->ctx, &s->notes,
				   calls_hist_text(h));
		calls_take(h, &s->calls, s->out.buf, at, s->out.len, 1);
	} else {
		calls_take(h, &s->calls, s->out.buf, 0, s->out.len, 1);
	}
	calls_take_end(h, &s->calls);
}

/* [@from, @to) of @s's output, without its first thread line if @skip. */
static void write_out(struct cli_out *out, const struct seg *s, size_t from,
		      size_t to, int skip)
{
	size_t a = s->mark_at, b = s->mark_at + s->mark_len;

	if (!skip || b <= from || a >= to) {
		if (to > from)
			cli_out_write(out, s->out.buf + from, to - from);
		return;
	}
	if (a > from)
		cli_out_write(out, s->out.buf + from, a - from);
	if (to > b)
		cli_out_write(out, s->out.buf + b, to - b);
}

/* CPUs' streams in time order: @s's marks before @to, whose text is at
 * @base in the output. */
static void give_marks(struct flow *fl, struct seg *s, size_t *i, size_t to,
		       uint64_t base)
{
	for (; *i < s->nmarks && s->marks[*i].at < to; (*i)++)
		cli_merge_mark(fl->by_time, base + s->marks[*i].at,
			       &s->marks[*i]);
}

/* ... where lost-data notes (@on) print from here, or no longer: whose
 * trace it was is not known (seg_note()). */
static void merge_note(struct flow *fl, struct cli_out *out, int on)
{
	struct cli_mark note = { 0 };

	note.note = (uint8_t)on;
	if (fl->by_time)
		cli_merge_mark(fl->by_time, cli_out_pos(out), &note);
}

/* Fold a finished segment into the totals, print its output. */
int flow_consume(struct flow *fl, struct seg *s, struct totals *t,
		 struct cli_out *out)
{
	size_t mi = 0;

	/* Its first thread line says again what the segment before said. */
	int skip = s->mark_len && t->have_task && t->task == s->first_task;

	t->ninsn += s->ninsn + s->fold.ninsn;
	t->nblocks += s->nblocks + s->fold.nblocks;
	t->nbranches += s->nbranches;
	t->nevents += s->nevents;
	t->nerrors += s->nerrors;
	if (s->fold.map && t->map)
		cli_map_add(t->map, s->fold.map);
	/* (A lent cover, @t's, has the counts already.) */
	if (s->cover_lent) {
		s->cover = NULL;
	} else if (s->cover && !t->cover) {
		t->cover = s->cover;
		s->cover = NULL;
	} else if (s->cover && hwt_an_cover_merge(t->cover, s->cover) < 0) {
		cli_out_printf(out, "[error: out of memory counting lines]\n");
		t->nerrors++;
	}
	if (fl->opt->mode == MODE_CALLS) {
		consume_calls(fl, s, t);
	} else if (fl->hook && s->hctx != fl->hook->ctx) {
		size_t at = seg_join_at(s);

		give_marks(fl, s, &mi, at, cli_out_pos(out));
		write_out(out, s, 0, at, skip);
		merge_note(fl, out, 1);
		fl->hook->seg_join(fl->hook->ctx, &s->notes,
				   inline_notes(fl) ? out : NULL);
		merge_note(fl, out, 0);
		give_marks(fl, s, &mi, SIZE_MAX, cli_out_pos(out) - at);
		write_out(out, s, at, s->out.len, skip);
	} else {
		give_marks(fl, s, &mi, SIZE_MAX, cli_out_pos(out));
		write_out(out, s, 0, s->out.len, skip);
	}
	if (s->have_task) {
		t->task = s->task;
		t->have_task = 1;
	}
	free(s->out.buf);
	s->out.buf = NULL;
	free(s->fold.map);
	s->fold.map = NULL;
	hwt_an_cover_delete(s->cover);
	s->cover = NULL;
	free(s->marks);
	s->marks = NULL;
	s->nmarks = s->markcap = 0;
	calls_seg_free(&s->calls);
	return 0;
}

/* @map: coverage's map, cleared (the caller's), or NULL for one of its
 * own; @cover: --lcov's counts, the caller's (lent: @s->cover_lent), or
 * NULL for a cover of its own. */
int flow_seg_init_map(struct flow *fl, struct seg *s, uint8_t *map,
		      struct hwt_an_cover *cover)
{
	memset(s, 0, sizeof(*s));
	s->image = fl->image;
	s->block_image = fl->image;
	s->hctx = fl->hook ? fl->hook->ctx : NULL;
	if (cli_out_init(&s->out, NULL) < 0)
		return -1;
	hwt_blk_fold_init(&s->fold, NULL);
	if (fl->opt->mode == MODE_COVERAGE) {
		s->fold.map = map ? map : calloc(1, MAP_SIZE);
		if (!s->fold.map)
			return -1;
	}
	s->cover_lent = cover != NULL;
	if (fl->opt->lines && !(s->cover = cover ? cover : hwt_an_cover_new()))
		return -1;
	return 0;
}

static int flow_seg_init(struct flow *fl, struct seg *s)
{
	return flow_seg_init_map(fl, s, NULL, NULL);
}

/*
 * -j: trace bytes per segment, at least; and all where each block or
 * instruction prints a line (held until the segments before are printed:
 * 10-100 bytes of output per byte of trace, 400 for instructions).
 */
#define SEG_MIN (64u << 10)
#define SEG_INSN (16u << 10)

/* For tests and fuzzing: many segments in a small trace. */
static uint64_t segment_size(uint64_t chunk)
{
	const char *env = getenv("HWT_SEGMENT_SIZE");
	uint64_t v;

	if (env && cli_parse_u64(env, &v) == 0 && v >= 16)
		return v;
	return chunk;
}


/* What flow_consume() did not take of segments not printed. */
void flow_seg_free(struct seg *s)
{
	free(s->out.buf);
	free(s->fold.map);
	if (!s->cover_lent)
		hwt_an_cover_delete(s->cover);
	free(s->marks);
	calls_seg_free(&s->calls);
}

/*
 * One thread: @s prints straight into @out, lent to it; hwt calls puts
 * its lines into the history as it goes (they print at the end).
 */
static void seg_lend(struct flow *fl, struct seg *s, struct totals *t,
		     struct cli_out *out)
{
	/* (Printing as it goes, it names a thread where it changes.) */
	s->task = t->task;
	s->have_task = t->have_task;
	if (t->calls) {
		s->calls_hist = t->calls;
		return;
	}
	cli_out_fini(&s->out);
	s->out = *out;
	/* (Its marks are the output's places: to the merge as they come.) */
	s->direct = fl->by_time;
}

/* ... and gives it back, with its counts added to @t. */
static void seg_give_back(struct flow *fl, struct seg *s, struct totals *t,
			  struct cli_out *out)
{
	if (!t->calls) {
		*out = s->out;
		s->out.buf = NULL;
		s->out.len = 0;
	}
	flow_consume(fl, s, t, out);
}

/*
 * Decode @s (of a perf.data stream) on this thread with the decoder of
 * the streams before (@fl->keep): as a new one, but for the code it
 * decoded (hwt_blk_set_trace(); released at the stream's end,
 * stream_done()).
 */
static void decode_kept(struct flow *fl, struct seg *s)
{
	fl->keep = decoder_again(fl, fl->keep, s->image);
	s->walks = fl->keep_walks;
	flow_decode_segment(fl, s, fl->keep, 1);
	fl->keep_walks = s->walks;
	s->walks = NULL;
	/* (What a decoder of its own would have taken along.) */
	flow_seg_drop_walks(s);
}

/* A stream's end, for the decoder kept on this thread. */
static void stream_done(struct flow *fl)
{
	if (fl->keep)
		decoder_done(fl->keep);
}

/* Decode @s on this thread, printed as it goes. */
static void decode_here(struct flow *fl, struct seg *s, struct totals *t,
			struct cli_out *out)
{
	if (fl->hook) {
		/* The stream's context: where the segments left the view. */
		fl->hook->resume(fl->hook->ctx);
		s->image = fl->hook->image(fl->hook->ctx);
	}
	seg_lend(fl, s, t, out);
	if (fl->hook)
		decode_kept(fl, s);
	else
		flow_decode_segment(fl, s, NULL, 0);
	seg_give_back(fl, s, t, out);
}

/*
 * Segment @k started with the time state one thread has there: the one
 * the decoder of the segment before had on reaching its PSB (exact, as
 * that segment's start was). Unknown (no PSB reached) counts as the same.
 */
static int time_start_ok(const struct flow *fl, const struct pool *pool,
			 size_t k)
{
	const struct seg *prev = k ? &pool->segs[k - 1] : NULL,
			 *s = &pool->segs[k];
	struct hwt_time_tracker start;
	struct hwt_blk_config cfg;

	if (!prev || !time_matters(fl) || !prev->reached.have_t)
		return 1;
	start = prev->reached.t;
	if (s->seed.have_t)
		start = s->seed.t;
	else
		hwt_time_tracker_reset(&start);
	if (hwt_time_tracker_same(&prev->reached.t, &start))
		return 1;
	/* Or its PSB+ sets all that differs. */
	cfg = flow_trace_config(fl);
	return hwt_evt_time_same_from(&cfg.qry, s->begin, &prev->reached.t,
				      &start) > 0;
}

/*
 * Segment @k started with the exec mode and TSX state one thread has
 * there: the ones the decoder of the segment before had on reaching its
 * PSB, but for what the PSB+ says again (a PSB+ need not have a MODE.TSX:
 * fuzz_cli_perfdata found a transaction going on over a PSB, the '?' of
 * its instructions lost at -j2). Unknown counts as the same.
 */
static int state_start_ok(const struct pool *pool, size_t k)
{
	const struct seg *prev = k ? &pool->segs[k - 1] : NULL,
			 *s = &pool->segs[k];
	struct hwt_blk_state start = { HWT_MODE_UNKNOWN, 0, 0, 0 };
	const struct hwt_blk_state *end;

	if (!prev || !prev->reached.have_st)
		return 1;
	end = &prev->reached.st;
	if (s->seed.have_st)
		start = s->seed.st;
	/* (A PSB+'s MODE.Exec other than one thread's is an error there,
	 * which the segment before meets: unclean.) */
	return (s->psb_sets_mode ||
		(start.mode == end->mode &&
		 start.exec_valid == end->exec_valid &&
		 start.exec == end->exec)) &&
	       (s->psb_sets_tsx || start.speculative == end->speculative);
}

/* What the segment after @s starts with: as one thread goes on. */
static struct carry seg_carry(const struct seg *s)
{
	struct carry none;

	if (!s->unclean)
		return s->reached;
	memset(&none, 0, sizeof(none));
	return none;
}

/*
 * *@r: segment @k's trace from its PSB to @end, to decode on this thread
 * as one thread comes to it: with the time and state the segment before
 * reached, or, a piece's first, what the piece before left (its seed).
 */
static void seg_redo(struct flow *fl, const struct pool *pool, size_t k,
		     uint64_t end, struct seg *r)
{
	const struct seg *s = &pool->segs[k];

	if (flow_seg_init(fl, r) < 0) {
		fprintf(stderr, "%s: out of memory.\n", fl->opt->prog);
		exit(1);
	}
	r->first = s->first;
	r->cont = s->cont;
	r->begin = s->begin;
	r->end = end;
	r->seed = k ? seg_carry(&pool->segs[k - 1]) : s->seed;
}

/*
 * Segment @k of a raw trace, decoded again on this thread from the time
 * and state the one before left (time_start_ok() or state_start_ok() said
 * no), into its slot: it is then printed, or found unclean, as any other.
 * (Printed as it decoded, an error at the next one's PSB would cut it
 * short where one thread goes on.)
 */
static void decode_again(struct flow *fl, struct pool *pool, size_t k)
{
	struct seg *s = &pool->segs[k], again;

	seg_redo(fl, pool, k, s->end, &again);
	flow_decode_segment(fl, &again, NULL, 0);
	again.done = 1;
	flow_seg_free(s);
	*s = again;
}

/*
 * Returns 0, -1 after a message, or 1 if a segment did not decode on its
 * own as in one thread (it ended in an error in the next one's data, or
 * hook->seg_check said so): the trace from there was decoded on this
 * thread, and so must the rest of a perf.data stream.
 */
int flow_run(struct flow *fl, const struct span *sp, struct totals *t,
	     struct cli_out *out)
{
	const struct flow_options *opt = fl->opt;
	unsigned jobs = opt->jobs ? opt->jobs : 1;
	struct cli_cut *cuts = NULL;
	size_t ncuts = 0, alone;
	uint64_t chunk = 0;
	struct pool pool;
	pthread_t *th;
	struct worker_arg *wargs;
	unsigned nth = 0;
	int ret = 0;
	const char *late;
	/* The segment after one decoded again (decode_again()). */
	size_t again = 0;

	if (jobs > 1 && !sp->one) {
		/* Several segments per thread balance uneven ones. */
		chunk = sp->limit / (jobs * 8);
		/*
		 * Segments ahead of the printed one are held in memory, and
		 * a line per instruction or block is 10-100 bytes of output
		 * per byte of trace: the trace's size would be the bound.
		 */
		if (opt->mode == MODE_INSN)
			chunk = SEG_INSN;
		else if (!use_fold(fl) && opt->mode != MODE_COVERAGE)
			chunk = SEG_MIN;
		else if (chunk < SEG_MIN)
			chunk = SEG_MIN;
		chunk = segment_size(chunk);
		ncuts = cli_plan_cuts(fl->trace, fl->size, fl->base, fl->hook,
				      chunk, sp->limit, &cuts);
	}

	memset(&pool, 0, sizeof(pool));
	pool.fl = fl;
	pool.cuts = cuts;
	pool.chunk = chunk;
	pool.nsegs = ncuts + 1;
	pool.segs = calloc(pool.nsegs, sizeof(*pool.segs));
	if (!pool.segs) {
		free(cuts);
		return -1;
	}
	for (size_t k = 0; k < pool.nsegs; k++) {
		struct seg *s = &pool.segs[k];

		/* One segment counts into @t's cover: a cover of its own
		 * would be added to it at the end, instruction by
		 * instruction. */
		if (flow_seg_init_map(fl, s, NULL,
				      pool.nsegs == 1 ? t->cover : NULL) < 0) {
			fprintf(stderr, "%s: out of memory.\n", opt->prog);
			exit(1);
		}
		s->first = k == 0 && sp->first;
		s->cont = k == 0 && !sp->first;
		s->begin = k ? cuts[k - 1].off - fl->base : 0;
		s->end = k < ncuts ? cuts[k].off - fl->base : sp->end;
	}
	if (sp->carry && !sp->first)
		pool.segs[0].seed = *sp->carry;

	if (opt->verbose && jobs > 1)
		fprintf(stderr, "%s: trace 0x%" PRIx64 "-0x%" PRIx64 ": %zu "
			"segment%s\n", opt->prog, fl->base,
			fl->base + (sp->end ? sp->end : fl->size), pool.nsegs,
			pool.nsegs == 1 ? "" : "s");
	if (pool.nsegs == 1) {
		/* Single-threaded: print as we go. */
		decode_here(fl, &pool.segs[0], t, out);
		if (sp->carry)
			*sp->carry = seg_carry(&pool.segs[0]);
		free(pool.segs);
		free(cuts);
		return 0;
	}

	cli_order_init(&pool.order, pool.nsegs, 2 * (size_t)jobs);
	th = calloc(jobs, sizeof(*th));
	wargs = calloc(jobs, sizeof(*wargs));
	if (fl->hook && !fl->wkeep && (fl->wkeep = calloc(jobs, sizeof(*fl->wkeep))))
		fl->nwkeep = jobs;
	for (unsigned i = 0; th && wargs && i < jobs; i++) {
		wargs[i].pool = &pool;
		wargs[i].slot = i;
		if (pthread_create(&th[i], NULL, worker, &wargs[i]))
			break;
		nth++;
	}
	if (!nth) {
		fprintf(stderr, "%s: cannot start threads.\n", opt->prog);
		ret = -1;
		/* Decode here instead, with the stream's own context. */
		if (fl->hook)
			fl->hook->resume(fl->hook->ctx);
		for (size_t k = 0; k < pool.nsegs; k++)
			flow_decode_segment(fl, &pool.segs[k], NULL, 0),
				pool.segs[k].done = 1;
	}
	for (alone = 0; alone < pool.nsegs; alone++) {
		struct seg *s = &pool.segs[alone];

		cli_order_wait(&pool.order, &s->done);

		/* What of one thread's it did not start with, if any. */
		late = !nth || s->unclean ? NULL :
		       !time_start_ok(fl, &pool, alone) ? "time" :
		       !state_start_ok(&pool, alone) ?
		       "exec mode or TSX state" : NULL;
		if (late && !fl->hook && again != alone) {
			/* A raw trace: this one again, from one thread's
			 * time (perf.data's view of the processes has moved
			 * on: the rest goes to one thread, below), unless the
			 * one before was too: the estimates do not hold. */
			if (opt->verbose)
				fprintf(stderr, "%s: segment %zu at 0x%" PRIx64
					" did not start with one thread's %s:"
					" decoded again\n", opt->prog, alone,
					fl->base + s->begin, late);
			decode_again(fl, &pool, alone);
			again = alone + 1;
			late = NULL;
		}
		if (nth && (s->unclean || late ||
			    (fl->hook &&
			     fl->hook->seg_check(fl->hook->ctx, &s->notes,
						 inline_notes(fl))))) {
			if (opt->verbose)
				fprintf(stderr, "%s: segment %zu at 0x%" PRIx64
					" %s%s: the rest on one thread\n",
					opt->prog, alone, fl->base + s->begin,
					s->unclean ?
					"ends in an error at the next's PSB" :
					late ?
					"did not start with one thread's " :
					"depends on the ones before",
					late ? late : "");
			break;
		} else {
			flow_consume(fl, s, t, out);
		}
		cli_order_printed(&pool.order, alone + 1, NULL);
	}
	/* (The workers finish the segment they have.) */
	if (alone < pool.nsegs)
		cli_order_stop(&pool.order);
	for (unsigned i = 0; i < nth; i++)
		pthread_join(th[i], NULL);
	free(th);
	free(wargs);
	if (alone < pool.nsegs) {
		/* The rest as one thread decodes it. */
		struct seg rest;

		seg_redo(fl, &pool, alone, sp->end, &rest);
		for (size_t k = alone; k < pool.nsegs; k++)
			flow_seg_free(&pool.segs[k]);
		decode_here(fl, &rest, t, out);
		if (sp->carry)
			*sp->carry = seg_carry(&rest);
		ret = 1;
	} else if (sp->carry) {
		*sp->carry = seg_carry(&pool.segs[pool.nsegs - 1]);
	}
	cli_order_fini(&pool.order);
	free(pool.segs);
	free(cuts);
	return ret;
}

/* coverage --lcov, --drcov (@what): the counts to file @path, a summary
 * to @out. */
static int write_cover(const struct flow_options *opt, struct totals *t,
		       const char *path, const char *what, struct cli_out *out)
{
	struct hwt_an_cover_sum sum;
	FILE *f = fopen(path, "w");
	size_t nmod, nbb;
	int err = -HWT_ERR_INTERNAL, werr;

	if (!f) {
		fprintf(stderr, "%s: cannot write %s: %s.\n", opt->prog, path,
			strerror(errno));
		return -1;
	}
	if (t->cover)
		err = hwt_an_cover_set_debug_dir(t->cover,
						 opt->lines_debug_dir);
	if (t->cover && !err)
		err = what[2] == 'l' ?
		      hwt_an_cover_lcov(t->cover, f, NULL, &sum) :
		      hwt_an_cover_drcov(t->cover, f, &nmod, &nbb);
	werr = ferror(f);
	if (fclose(f) || werr) {
		fprintf(stderr, "%s: cannot write %s: %s.\n", opt->prog, path,
			strerror(errno));
		return -1;
	}
	if (err < 0) {
		fprintf(stderr, "%s: %s: %s.\n", opt->prog, what,
			hwt_errstr(err));
		return -1;
	}
	if (what[2] == 'd') {
		cli_out_printf(out, "drcov: %zu modules, %zu blocks\n", nmod,
			       nbb);
		return 0;
	}
	cli_out_printf(out, "lines: %" PRIu64 " of %" PRIu64 " in %" PRIu64
		       " source files\n", sum.hit, sum.found, sum.files);
	cli_out_printf(out, "functions: %" PRIu64 " of %" PRIu64 "\n",
		       sum.funcs_hit, sum.funcs);
	cli_out_printf(out, "branches: %" PRIu64 " of %" PRIu64 "\n",
		       sum.branches_hit, sum.branches);
	if (sum.insns_no_line)
		cli_out_printf(out, "insn without a line: %" PRIu64 " of %"
			       PRIu64 " (code without DWARF)\n",
			       sum.insns_no_line, sum.insns);
	return 0;
}

int flow_finish(struct flow *fl, struct totals *t, struct cli_out *out)
{
	const struct flow_options *opt = fl->opt;

	switch (opt->mode) {
	case MODE_STAT:
		cli_out_printf(out, "insn: %" PRIu64 "\n", t->ninsn);
		cli_out_printf(out, "blocks: %" PRIu64 "\n", t->nblocks);
		cli_out_printf(out, "events: %" PRIu64 "\n", t->nevents);
		cli_out_printf(out, "errors: %" PRIu64 "\n", t->nerrors);
		break;
	case MODE_CALLS:
		if (calls_print(t->calls, out) < 0)
			return -1;
		break;
	case MODE_COVERAGE: {
		if (!t->hashed)
			t->hash = cli_map_hash(t->map, &t->edges);
		cli_out_printf(out, "edges: %zu\n", t->edges);
		cli_out_printf(out, "hash: %016" PRIx64 "\n", t->hash);
		cli_out_printf(out, "blocks: %" PRIu64 "\n", t->nblocks);
		cli_out_printf(out, "insn: %" PRIu64 "\n", t->ninsn);
		cli_out_printf(out, "errors: %" PRIu64 "\n", t->nerrors);
		if (opt->lcov_out &&
		    write_cover(opt, t, opt->lcov_out, "--lcov", out) < 0)
			return -1;
		if (opt->drcov_out &&
		    write_cover(opt, t, opt->drcov_out, "--drcov", out) < 0)
			return -1;
		if (opt->bitmap_out) {
			FILE *f = fopen(opt->bitmap_out, "wb");

			if (!f || fwrite(t->map, 1, MAP_SIZE, f) != MAP_SIZE ||
			    fclose(f)) {
				fprintf(stderr, "%s: cannot write %s: %s.\n",
					opt->prog, opt->bitmap_out,
					strerror(errno));
				return -1;
			}
		}
		break;
	}
	default:
		break;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* perf.data streams (perfdata_input.c drives, one stream at a time)   */
/* ------------------------------------------------------------------ */

/* A stream's totals (or a raw trace's): the map, the history. */
int flow_totals_init(const struct flow *fl, struct totals *t,
		     struct cli_out *out)
{
	if (fl->opt->mode == MODE_COVERAGE) {
		t->map = calloc(1, MAP_SIZE);
		if (!t->map)
			goto oom;
	}
	if (fl->opt->lines && !(t->cover = hwt_an_cover_new()))
		goto oom;
	if (fl->opt->mode == MODE_CALLS && fl->merge && fl->hook) {
		t->calls = calls_hist_new_log(fl->merge, fl->hook->cpu);
		if (!t->calls)
			goto oom;
	} else if (fl->opt->mode == MODE_CALLS) {
		t->calls = calls_hist_new(fl->opt->stream ? out : NULL,
					  fl->opt->time);
		if (!t->calls)
			goto oom;
		calls_hist_select(t->calls, &fl->opt->sel,
				  fl->have_tc ? &fl->tc : NULL);
		if (fl->opt->perf_time)
			calls_hist_perf_time(t->calls, &fl->tc);
	}
	if (t->calls && fl->tree)
		calls_hist_fold_into(t->calls, fl->tree);
	if (t->calls && fl->timeline)
		calls_hist_time_into(t->calls, fl->timeline);
	return 0;
oom:
	fprintf(stderr, "%s: out of memory.\n", fl->opt->prog);
	return -1;
}

int flow_add_totals(struct totals *all, const struct totals *t)
{
	all->ninsn += t->ninsn;
	all->nblocks += t->nblocks;
	all->nbranches += t->nbranches;
	all->nevents += t->nevents;
	all->nerrors += t->nerrors;
	if (all->map && t->map)
		cli_map_add(all->map, t->map);
	if (all->cover && t->cover)
		return hwt_an_cover_merge(all->cover, t->cover);
	return 0;
}

void flow_totals_free(struct totals *t)
{
	free(t->map);
	t->map = NULL;
	hwt_an_cover_delete(t->cover);
	t->cover = NULL;
	calls_hist_delete(t->calls);
	t->calls = NULL;
}

/*
 * Where @trace's decode starts (--time-range: before the windows, if
 * @fl->seek and cli_seek_find() finds where): the offset, and in *@c the
 * time state to start with there.
 */
static uint64_t seek_stream(struct flow *fl, struct cli_pieces *trace,
			    const uint8_t *whole, struct carry *c)
{
	struct cli_seek sk;

	memset(c, 0, sizeof(*c));
	if (!fl->seek ||
	    !cli_seek_find(trace, whole, &fl->opt->config.qry, &fl->opt->sel,
			   fl->have_tc ? &fl->tc : NULL, &sk))
		return 0;
	cli_pieces_seek(trace, sk.off);
	c->t = sk.t;
	c->have_t = sk.have_t;
	if ((sk.ovf || sk.bad) && fl->by_time)
		cli_merge_hidden(fl->by_time);
	if (fl->opt->verbose)
		fprintf(stderr, "%s: decoding from the PSB at 0x%" PRIx64
			" (TSC 0x%" PRIx64 "%s): the trace before it is before "
			"the times chosen\n", fl->opt->prog, sk.off, sk.tsc,
			sk.have_t ? ", with the time state it has there" : "");
	return sk.off;
}

int flow_run_raw(struct flow *fl, struct totals *t, struct cli_out *out)
{
	const uint8_t *trace = fl->trace;
	size_t size = fl->size;
	struct span sp = { 1, 0, 0, fl->size, NULL };
	struct cli_pieces whole;
	struct carry c;
	uint64_t off;
	int ret;

	if (!fl->seek)
		return flow_run(fl, &sp, t, out);
	cli_pieces_init_mem(&whole, trace, size);
	off = seek_stream(fl, &whole, trace, &c);
	cli_pieces_fini(&whole);
	/* (The offsets printed stay the trace's.) */
	fl->trace += off;
	fl->size -= off;
	fl->base = off;
	sp.first = off == 0;
	sp.limit = fl->size;
	sp.carry = &c;
	ret = flow_run(fl, &sp, t, out);
	fl->trace = trace;
	fl->size = size;
	fl->base = 0;
	return ret;
}

/*
 * A perf.data stream with -j: each piece cut into segments decoded on
 * threads, each thread with a context of the hook's (its own view of the
 * processes).
 */
static int run_pieces_jobs(struct flow *fl, struct cli_pieces *trace,
			   struct totals *t, struct cli_out *out)
{
	struct carry carry;
	int more, alone = 0;

	seek_stream(fl, trace, NULL, &carry);
	while ((more = cli_pieces_next(trace)) > 0) {
		struct span sp;
		int r;

		fl->trace = trace->buf;
		fl->size = trace->len;
		fl->base = trace->base;
		sp.first = trace->base == 0;
		sp.one = alone;
		sp.end = trace->last ? 0 : trace->cut;
		sp.limit = trace->last ? trace->len : trace->cut;
		sp.carry = &carry;
		r = flow_run(fl, &sp, t, out);
		if (r < 0)
			return -1;
		/* A segment did not decode on its own as in one thread: the
		 * view is where one thread's is now, not where the next
		 * piece's segments would start theirs. */
		if (r > 0)
			alone = 1;
	}
	stream_done(fl);
	fl->base = 0;
	return more < 0 ? -1 : 0;
}

/*
 * A perf.data stream: one segment, decoded piece by piece on this thread
 * (the hook's image follows one time line), printed as it goes.
 */
static int run_pieces(struct flow *fl, struct cli_pieces *trace,
		      struct totals *t, struct cli_out *out)
{
	struct seg s;
	struct carry start;
	int more;

	if (fl->opt->jobs > 1)
		return run_pieces_jobs(fl, trace, t, out);

	/* (Counting into @t's cover, as flow_run()'s one segment.) */
	if (flow_seg_init_map(fl, &s, NULL, t->cover) < 0) {
		fprintf(stderr, "%s: out of memory.\n", fl->opt->prog);
		return -1;
	}
	seg_lend(fl, &s, t, out);
	/* (The first piece from there, with its time.) */
	if (seek_stream(fl, trace, NULL, &start))
		s.reached = start;
	while ((more = cli_pieces_next(trace)) > 0) {
		/* As one decoder goes on over the PSB the piece starts at. */
		struct carry c = seg_carry(&s);

		fl->trace = trace->buf;
		fl->size = trace->len;
		fl->base = trace->base;
		s.first = trace->base == 0;
		s.cont = !s.first;
		s.begin = 0;
		s.end = trace->last ? 0 : trace->cut;
		s.unclean = 0;
		if (s.cont)
			s.seed = c;
		decode_kept(fl, &s);
		if (s.past)
			break;
	}
	stream_done(fl);
	seg_give_back(fl, &s, t, out);
	fl->base = 0;
	return more < 0 ? -1 : 0;
}

/* A stream whose lines may be chosen (flow_options' @sel). */
static int stream_chosen(const struct cli_select *sel,
			 const struct cli_flow_hook *hook)
{
	if (!sel->set)
		return 1;
	if (hook->on_cpu)
		return cli_select_cpu(sel, 1, hook->cpu);
	/* (A process the sideband does not name: its lines say.) */
	if (hook->pid == UINT32_MAX && sel->npids)
		return !sel->ncpus;
	return !sel->ncpus &&
	       cli_select_task(sel, 1, (uint64_t)hook->pid << 32 | hook->tid);
}

int cli_flow_stream(struct flow *fl, struct cli_pieces *trace,
		    struct hwt_image *image, const struct cli_flow_hook *hook,
		    struct cli_out *out)
{
	const struct flow_options *saved = fl->opt;
	struct hwt_image *saved_image = fl->image;
	struct flow_options o = *saved;
	struct totals t;
	int ret = -1;

	/* Lines of threads or CPUs not chosen: the stream is not decoded
	 * (its header printed, its lost data its thread's or CPU's). */
	if ((fl->by_time || (o.mode == MODE_CALLS && !fl->merge)) &&
	    !stream_chosen(&o.sel, hook)) {
		fl->skipped++;
		return 0;
	}
	/* The bitmap and lines of all streams are written once, at the
	 * end. */
	o.bitmap_out = NULL;
	o.lcov_out = NULL;
	o.drcov_out = NULL;
	memset(&t, 0, sizeof(t));
	fl->opt = &o;
	fl->image = image;
	fl->hook = hook;
	if (flow_totals_init(fl, &t, out) < 0)
		goto out;
	if (fl->by_time)
		cli_merge_stream(fl->by_time, cli_out_pos(out), hook->cpu,
				 hook->on_cpu);
	if (run_pieces(fl, trace, &t, out) == 0) {
		merge_note(fl, out, 1);
		if (o.mode != MODE_STAT)
			hook->notes(hook->ctx, NULL, 0,
				    t.calls ? calls_hist_text(t.calls) : out);
		merge_note(fl, out, 0);
		if (flow_finish(fl, &t, out) == 0)
			ret = 0;
		if (o.mode == MODE_STAT)
			hook->stat(hook->ctx, out);
	}
	if (fl->by_time)
		cli_merge_stream_end(fl->by_time, cli_out_pos(out));
	if (fl->all && flow_add_totals(fl->all, &t) < 0) {
		fprintf(stderr, "%s: out of memory.\n", o.prog);
		ret = -1;
	}
out:
	flow_totals_free(&t);
	fl->opt = saved;
	fl->image = saved_image;
	fl->hook = NULL;
	return ret;
}

void cli_flow_streams_done(struct flow *fl)
{
	hwt_blk_delete(fl->keep);
	fl->keep = NULL;
	hwt_an_walks_delete(fl->keep_walks);
	fl->keep_walks = NULL;
	for (unsigned i = 0; i < fl->nwkeep; i++)
		hwt_blk_delete(fl->wkeep[i]);
	free(fl->wkeep);
	fl->wkeep = NULL;
	fl->nwkeep = 0;
}

/* Nothing at all came out of @name: not a trace (as hwt dump says too);
 * said so, 1. */
int flow_not_a_trace(const struct totals *t, const char *prog,
		     const char *name)
{
	if (t->nblocks || t->nevents || t->nerrors || t->ninsn)
		return 0;
	fprintf(stderr, "%s: %s: no PSB found: not an Intel PT trace?\n", prog,
		name);
	return 1;
}

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hwt flow, hwt calls, hwt coverage: what a trace executed, from hwt's
 * block decoder. This header is the three commands' own: what their
 * files share. flow.c decodes a segment of a trace into what it prints,
 * flow_run.c cuts a trace into segments, decodes them on threads and
 * prints them in order (a perf.data stream piece by piece), flow_cmd.c
 * is the commands (options, help, several traces of hwt coverage).
 *
 *   flow      instruction history (--insn, default), blocks (--blocks),
 *             taken branches (--branches) or counts (--stat)
 *   calls     function-call history: one line per function segment,
 *             indented by call depth (gdb's record function-call-history);
 *             or its call tree's folded stacks (calltree.c), or its calls
 *             as a trace-event timeline (timeline.c)
 *   coverage  an AFL-style 64 KiB edge bitmap and its hash
 *
 * A perf.data of several CPUs' streams: hwt calls makes them one history
 * (calls.c, struct calls_merge); hwt flow prints their lines in time
 * order (merge.c), each segment marking where the time or thread of its
 * lines changes (seg_mark() in flow.c).
 *
 * Parallel decode (-j N; calls: calls.h): the trace is cut at PSBs into
 * segments that are decoded on N threads and printed in order. A segment
 * decodes from its PSB until its decoder has read the next segment's PSB
 * and reports an event there; the next segment starts from that PSB. The
 * block decoder ends a block at the PSB+ IP, so both sides agree on where
 * one stops and the other starts. To make -j1 and -jN identical, the
 * state that does not survive a cut is also dropped at every PSB+ in
 * single-threaded runs: a branch is resolved at the PSB+ IP, and the AFL
 * "previous location" restarts. Time and CYC calibration, which one
 * decoder carries over every PSB, start as an estimate (the packets from
 * two PSBs back, hwt_evt_time_warm()); the decoder of the segment before
 * says what it had there, and if the two differ (beyond what the PSB+
 * sets: time_start_ok()) the segment decodes again on this thread
 * (decode_again(); or the rest does). The exec mode and TSX state, where
 * the PSB+ does not say them again, are checked the same way
 * (state_start_ok()). An instruction prints the decoder's time after the
 * trace it took, not after its block's (struct cli_blk_time): where
 * blocks end depends on each thread's block cache. Cuts are only made at
 * a PSB+ that reads to PSBEND and gives the IP, and that one thread comes
 * to as a PSB (cuts.c), so a segment that starts there knows what
 * one thread knows; a segment that ends in an error in the next one's
 * data (a damaged trace) makes the rest decode on this thread, as one
 * thread would resynchronise. A
 * perf.data stream is cut the same way, piece by piece, with the hook's
 * help (struct cli_flow_hook, perfdata_input.c): each thread has a view
 * of the processes of its own, cuts avoid lost-data notes, and a segment
 * that depends on the ones before (a damaged trace's time) makes the rest
 * of the stream decode on this thread. Segments held for printing are
 * kept small where every block or instruction prints.
 */
#ifndef HWT_CLI_FLOW_H
#define HWT_CLI_FLOW_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <hwt/analysis.h>
#include <hwt/flow.h>
#include <hwt/image.h>
#include <hwt/perfdata.h>

#include "cli/calls.h"
#include "cli/cli.h"

enum flow_mode {
	MODE_INSN,
	MODE_BLOCKS,
	MODE_BRANCHES,
	MODE_STAT,
	MODE_CALLS,
	MODE_COVERAGE
};

struct flow_options {
	const char *prog;
	const char *trace;
	/* coverage: all the traces given (@trace is the first) */
	const char **traces;
	size_t ntraces;
	const char *bitmap_out;		/* coverage -o */
	const char *lcov_out;		/* coverage --lcov */
	const char *drcov_out;		/* coverage --drcov */
	struct cli_pd_files files;	/* perf.data: where the code is */
	/* Where source lines' debug files are (--debug-dir, or below
	 * --symfs for a perf.data; NULL: /usr/lib/debug), as symbols'. */
	const char *lines_debug_dir;
	struct hwt_blk_config config;
	enum flow_mode mode;
	unsigned jobs;
	int verbose;		/* -v: how -j cut the trace, on stderr */
	unsigned disasm:1;
	unsigned srcline:1;		/* insn: each one's source line */
	unsigned time:1;
	unsigned perf_time:1;		/* --time as perf's (TIME_CONV) */
	unsigned stream:1;		/* calls: print as it goes */
	unsigned folded:1;		/* calls: folded stacks */
	unsigned timeline:1;		/* calls: a trace-event JSON */
	unsigned time_clock:1;		/* ... timed by the TSC */
	unsigned by_stream:1;		/* CPUs' streams: not merged */
	unsigned no_sym:1;
	unsigned events:1;		/* print events (insn, blocks) */
	unsigned lines:1;		/* coverage: count blocks' code */
	/* perf.data: the threads, CPUs and times to show (lines) */
	struct cli_select sel;
};

#define MAP_SIZE HWT_BLK_FOLD_MAP_SIZE

/* The last instruction of the previous block, for --branches. */
struct pending {
	uint64_t ip, fallthrough;
	uint8_t iclass;
	uint8_t valid;
};

/* The last symbol looked up (seg_symbol()), and where it holds. */
struct sym_way {
	uint64_t id, gen;	/* the image's (struct cli_sym_span) */
	uint64_t base;
	const char *name;
	size_t len;		/* of @name, as printed (at most 200) */
	uint8_t found;
};

/*
 * The symbols of the last few ranges, the one in use first: a return
 * finds its caller's, a call a callee it made before (on the shell loop's
 * recording 16 of them left 165 K lookups of 4.2 M). Way k holds for
 * @lo[k] <= ip < @hi[k] (empty: never), apart so that a miss compares
 * them in a row.
 */
#define SYM_WAYS 16
struct sym_cache {
	uint64_t lo[SYM_WAYS], hi[SYM_WAYS];
	struct sym_way w[SYM_WAYS];
	unsigned victim;	/* the way a lookup's range goes to next */
};

/*
 * What a decoder had on reaching the PSB where the next segment or piece
 * starts (time, exec mode and TSX state), for that one to start with: as
 * one decoder goes on over that PSB. Not after an error there (one
 * decoder resynchronises, knowing nothing).
 */
struct carry {
	uint8_t have_t, have_st;
	struct hwt_time_tracker t;
	struct hwt_blk_state st;
};

/* Everything one segment of the trace produces. */
struct seg {
	uint64_t begin, end;		/* trace offsets: [begin PSB, end PSB);
					 * end 0: to the end of the trace */
	int first;
	int cont;			/* goes on from the previous piece */
	struct cli_out out;
	uint64_t ninsn, nblocks, nbranches, nevents, nerrors;
	/* --blocks, --stat, coverage: canonical blocks (and the map) */
	struct hwt_blk_fold fold;
	struct hwt_an_cover *cover;	/* coverage --lcov: the blocks run */
	/* @cover is the caller's, lent for several segments (several
	 * traces): the decoder goes on counting into it, its block graph
	 * warm (hwt_blk_tally()) */
	uint8_t cover_lent;
	uint64_t psb_ip;		/* where the last PSB+ resumes */
	uint8_t have_psb_ip;
	struct pending pend;
	/* calls; on the printing thread, the history it goes to as it
	 * goes (else all of it at the end, in consume()) */
	struct calls_seg calls;
	struct calls_hist *calls_hist;
	int done;
	/* The code the decoder is in (perf.data: of the process now), and
	 * that of the open canonical block (a switch can come before it
	 * ends). */
	struct hwt_image *image, *block_image;
	/* perf.data -j: the hook's context of the thread that decodes it,
	 * where its first sync is in @out, and what the context saw. */
	void *hctx;
	size_t first_sync;
	uint8_t synced;
	struct cli_seg_notes notes;
	/* It ended in an error in the next one's data (decode_segment). */
	uint8_t unclean;
	/* What its decoder starts with, where not a fresh one's (@seed),
	 * and what it had at the next segment's PSB (@reached): the time
	 * where times matter (time_matters()), the exec mode and TSX state
	 * (state_start_ok()); and which of those the PSB+ it starts at says
	 * again. */
	struct carry seed, reached;
	uint8_t psb_sets_mode, psb_sets_tsx;
	/* --time: the block's times (before: of the decoder's next one),
	 * and whether the decoder took events since the last block. */
	struct cli_blk_time time;
	uint8_t time_stale;
	/* A block of a batch but its last: the time after it is the one
	 * before it, the batch's (hwt_blk_next_batch_until()). */
	uint8_t time_held;
	struct hwt_an_walks *walks;	/* the blocks' walks (seg_walk()) */
	struct cli_disasm_memo *dmemo;	/* --disasm: the texts */
	struct cli_srcline *srcl;	/* --srcline: the lines */
	/* perf.data: the time the hook saw last, and the offset before
	 * which it has nothing to do while that stays (sync_hook()). */
	struct cli_sync_quiet quiet;
	struct sym_cache sym;
	/* A CPU's stream: the thread of the lines now (@task: pid << 32 |
	 * tid), and the first it named (@first_task, its line at @mark_at,
	 * @mark_len bytes, 0: none; left out where the segment before ended
	 * in the same thread, consume()). */
	uint64_t task, first_task;
	uint8_t have_task;
	size_t mark_at, mark_len;
	/* CPUs' streams in time order (fl->by_time): where the time or the
	 * thread of the lines changes in @out, and the time there; where
	 * @out is lent, given to the merge (@direct) as they come. */
	struct cli_mark *marks;
	size_t nmarks, markcap;
	struct cli_merge *direct;
	uint64_t mkey;
	uint8_t have_mkey;
	uint8_t note;	/* seg_note() */
	uint8_t past;	/* stopped past the times chosen (@stop_past) */
	/* --blocks: the time of the next canonical block */
	uint64_t next_mkey;
	uint8_t have_next_mkey;
};

struct flow {
	const struct flow_options *opt;
	struct hwt_image *image;
	const uint8_t *trace;
	size_t size;
	uint64_t base;			/* trace offset of @trace[0] */
	struct cli_disasm *dis;
	/* Blocks' instructions walked each time, not taken from the kept
	 * walks (instruction lines), and --branches' blocks run on over
	 * direct calls and jumps, walked: HWT_WALK_EACH=1, the tests'
	 * reference. */
	int walk_each;
	struct calls_names *names;	/* calls */
	/* calls of a perf.data whose streams are CPUs': one history */
	struct calls_merge *merge;
	/* and the lines of flow: in time order */
	struct cli_merge *by_time;
	struct calls_tree *tree;	/* calls --folded */
	struct calls_timeline *timeline;	/* calls --timeline */
	/* perf.data input (perfdata_input.c): NULL for a raw trace */
	const struct cli_flow_hook *hook;
	/* One thread: the decoder of the streams so far, its image
	 * released at each one's end (hwt_blk_release_image()), so that
	 * the next process's code that is the same stays decoded. And the
	 * blocks' walks (keyed by image, so other streams' never stand for
	 * this one's), not 3 MiB of zeroed memory a stream. */
	struct hwt_blk_decoder *keep;
	struct hwt_an_walks *keep_walks;
	/* -j on a perf.data: worker i's decoder, kept (released) from one
	 * piece or stream to the next in @wkeep[i] (@nwkeep of them). */
	struct hwt_blk_decoder **wkeep;
	unsigned nwkeep;
	struct totals *all;		/* of all streams */
	size_t skipped;			/* streams not chosen (@opt->sel) */
	/* One thread, lines chosen by time: a stream's decode stops past
	 * the last time chosen (a time never goes back). */
	uint8_t stop_past;
	/* Blocks' times: printed (--time) or choosing lines (--time-range);
	 * one load a block where flow.c asks. */
	uint8_t want_times;
	/* Lines chosen by time (the merge's), one thread: instruction lines
	 * before every window are not made (skipped()). */
	uint8_t skip_before;
	/* Lines chosen by time, every window with a start: a stream's
	 * decode starts at a PSB before them (seek.c; HWT_NO_SEEK=1: from
	 * the start, the tests' reference). */
	uint8_t seek;
	/* perf.data: perf's time from the TSC, if the file says how */
	struct hwt_pd_time_conv tc;
	uint8_t have_tc;
};

struct totals {
	uint64_t ninsn, nblocks, nbranches, nevents, nerrors;
	uint8_t *map;
	struct hwt_an_cover *cover;	/* coverage --lcov */
	/* @map's cli_map_hash(), if made already (@hashed) */
	uint64_t hash;
	size_t edges;
	uint8_t hashed;
	struct calls_hist *calls;
	/* A CPU's stream: the thread the last segment printed ended in. */
	uint64_t task;
	uint8_t have_task;
};

/*
 * What one flow_run() decodes: the trace in @fl, a whole raw trace (or range)
 * or one piece of a perf.data stream (cli_pieces), which goes on from the
 * pieces before unless @first and ends at @end (0: the trace's end); cuts
 * are made before @limit, unless @one. A piece starts with what the one
 * before left in *@carry, and leaves what it has at its end there.
 */
struct span {
	int first, one;
	uint64_t end, limit;
	struct carry *carry;
};

/*
 * The times printed or choosing lines (--time-range), or the perf.data
 * hook's, which applies sideband records by time: a segment must start
 * with the time state one decoder would have there (see
 * hwt_evt_time_warm()).
 */
static inline int time_matters(const struct flow *fl)
{
	return fl->opt->time || fl->opt->sel.nwin || fl->hook;
}

/* Counts only: blocks folded by the decoder, none come out (coverage's
 * lines counted by the decoder too: hwt_blk_tally(); HWT_NO_TALLY=1, for
 * tests, gives them out instead, one by one). */
static inline int use_fold(const struct flow *fl)
{
	return fl->opt->mode == MODE_STAT ||
	       (fl->opt->mode == MODE_COVERAGE &&
		(!fl->opt->lines || !cli_env_on("HWT_NO_TALLY")));
}

/*
 * perf.data: lost-data notes print where they happened, between the
 * lines of blocks and instructions; not where blocks are folded (--stat
 * prints counts instead, coverage the notes at the stream's end): a fold
 * stops where the block cache makes it stop (and at every timing
 * packet), so where a note became due among the others would depend on
 * the cache's history, which -j does not keep.
 */
static inline int inline_notes(const struct flow *fl)
{
	return fl->opt->mode != MODE_STAT && fl->opt->mode != MODE_COVERAGE;
}

/* flow.c: the blocks' walks and texts @s holds go (a decoder's of its
 * own would have taken them along). */
void flow_seg_drop_walks(struct seg *s);
/* flow.c: one segment, decoded into @s (its lines, counts, map). */
void flow_decode_segment(struct flow *fl, struct seg *s,
			 struct hwt_blk_decoder *reuse, int fresh);
struct hwt_blk_decoder *flow_new_decoder(const struct flow *fl,
					 struct hwt_image *image);
struct hwt_blk_config flow_trace_config(const struct flow *fl);

/* flow_run.c: the segments of a trace (or piece), and their totals. */
int flow_consume(struct flow *fl, struct seg *s, struct totals *t,
		 struct cli_out *out);
int flow_seg_init_map(struct flow *fl, struct seg *s, uint8_t *map,
		      struct hwt_an_cover *cover);
void flow_seg_free(struct seg *s);
int flow_run(struct flow *fl, const struct span *sp, struct totals *t,
	     struct cli_out *out);
/* A raw trace's flow_run() from where @fl->seek lets it start. */
int flow_run_raw(struct flow *fl, struct totals *t, struct cli_out *out);
int flow_finish(struct flow *fl, struct totals *t, struct cli_out *out);
int flow_totals_init(const struct flow *fl, struct totals *t,
		     struct cli_out *out);
int flow_add_totals(struct totals *all, const struct totals *t);
void flow_totals_free(struct totals *t);
int flow_not_a_trace(const struct totals *t, const char *prog,
		     const char *name);

#endif /* HWT_CLI_FLOW_H */

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hwt calls: the function-call history, made in two halves so that -j can
 * decode on several threads and still print what one thread prints.
 *
 * A decode (one segment of the trace, on any thread) turns blocks and
 * events into function segments and the frame operations between them
 * (calls, returns, interrupts, gaps), in a struct calls_seg. It knows
 * nothing of the frames open before it started.
 *
 * The history (struct calls_hist, on the printing thread) takes the
 * decodes' output in trace order: it replays the frame operations on a
 * shadow stack per thread of the traced program, so each function segment
 * gets the depth one decoding thread gives it, joins a segment cut by -j with its continuation, and keeps the
 * lines (and the text between them: errors, lost-data notes) for the
 * end, where indentation starts at the smallest depth seen, as gdb's
 * record function-call-history does. Beyond a few MiB the lines go to an
 * unlinked temporary file, so memory stays bounded however long the
 * trace. Or it prints them as they come (--stream).
 */
#ifndef HWT_CLI_CALLS_H
#define HWT_CLI_CALLS_H

#include <stddef.h>
#include <stdint.h>

#include <hwt/flow.h>
#include <hwt/image.h>
#include <hwt/perfdata.h>

#include "cli/cli.h"

/*
 * Function names, each kept once for the whole command: a decode's image
 * (a thread's view of a process) may go before its lines are printed.
 * Shared by the threads (it has a lock; each decode caches its lookups).
 */
struct calls_names;

struct calls_names *calls_names_new(void);
void calls_names_delete(struct calls_names *n);

/* A function segment as a decode makes it. */
struct calls_rec {
	const char *name;	/* in calls_names; NULL: unknown */
	uint64_t start;		/* the symbol's address */
	uint64_t ip;		/* first instruction */
	uint64_t ninsn;
	uint64_t tsc;
	size_t text_at;		/* the decode's text before it */
	uint64_t task;		/* pid << 32 | tid (perf.data), else 0 */
	uint8_t has_tsc;
	uint8_t joinable;	/* made only because the decode started */
};

enum calls_op_kind {
	OP_PUSH,	/* a call or an interrupt: a frame that returns to @ip */
	OP_RETURN,	/* a return, to @ip */
	OP_GAP,		/* code that ran untraced; traced again at @ip */
	/* As OP_RETURN and OP_GAP, if the decode before ended in a return
	 * whose target was still to come. */
	OP_RETURN_IF,
	OP_GAP_IF,
	OP_TASK,	/* another thread's frames from here: @ip's */
};

/* A frame operation, applied before record @before of the decode. */
struct calls_op {
	uint64_t ip;
	size_t before;
	uint64_t tsc;		/* OP_TASK: when (if @has_tsc) */
	size_t text_at;		/* OP_TASK: the decode's text before it */
	uint8_t kind;		/* enum calls_op_kind */
	uint8_t has_tsc;
};

struct calls_sym {
	uint64_t image_id, generation, ip, start, end;
	uint64_t lo;		/* the answer holds for [lo, end) */
	const char *name;
};

struct calls_seg {
	struct calls_names *names;
	struct calls_rec *recs;
	size_t nrecs, recs_cap, taken;
	struct calls_op *ops;
	size_t nops, ops_cap, ops_taken;
	struct calls_sym *syms;	/* a cache of symbol lookups */
	/* The blocks' image (calls_seg_image()), its id and generation. */
	const struct hwt_image *image;
	uint64_t image_id, image_gen;
	/* Where the open record's function is the same. */
	struct cli_sym_span fn;
	uint8_t new_seg;	/* the next block starts a function segment */
	uint8_t ret_pending;	/* enum calls_ret (calls.c) */
	uint8_t start_pending;	/* nothing happened yet but the start */
	uint8_t started, have_task;
	uint64_t task;		/* the thread of the blocks (perf.data) */
	/* An enable's resume IP, for after the sync that says whose. */
	uint8_t gap_pending;
	uint64_t gap_ip;
};

/* A decode starts: the first of its stream, or one that goes on from
 * another decode's end (a -j cut, a perf.data piece); names in @names. */
void calls_seg_start(struct calls_seg *c, struct calls_names *names,
		     int first);
void calls_seg_free(struct calls_seg *c);
/*
 * Swap @c's cache of symbol lookups with *@syms (NULL: none yet): a
 * decoding thread lends its cache to each of its decodes and takes it
 * back, so that short -j segments do not each fill one (entries name
 * the image by id and generation, so they hold across decodes). The one
 * left in the end is free()d.
 */
void calls_seg_swap_syms(struct calls_seg *c, struct calls_sym **syms);
/* The decoder synchronised again (after an error). */
void calls_seg_sync(struct calls_seg *c);
/*
 * The image of the next blocks, which may have changed (another image, or
 * this one's mappings): its id and generation are read here, not per
 * block (two calls a block were 13% of hwt calls' time on gzip). Call it
 * wherever the image may have changed, and before the first block.
 */
void calls_seg_image(struct calls_seg *c, const struct hwt_image *image);
/*
 * Block @b (ninsn > 0) of calls_seg_image()'s image, decoded with
 * HWT_BLK_END_ON_CALL and HWT_BLK_END_ON_JUMP (only its last instruction
 * branches), with its times @t, after @text_at bytes of the decode's
 * text. Returns 0 or an error (an instruction cannot be read again).
 */
int calls_seg_block(struct calls_seg *c, const struct hwt_block *b,
		    const struct cli_blk_time *t, size_t text_at);
/*
 * The thread the next blocks run in (perf.data: a decode says so at each
 * of its syncs, after the events there), the decoder's time there if
 * @have_tsc, after @text_at bytes of the decode's text: another starts a
 * function segment, and has a stack of its own.
 */
void calls_seg_task(struct calls_seg *c, uint32_t pid, uint32_t tid,
		    int have_tsc, uint64_t tsc, size_t text_at);
/* An event that breaks the flow (an interrupt, a disable, an enable...). */
void calls_seg_event(struct calls_seg *c, const struct hwt_event *ev);

struct calls_hist;

/*
 * A history that prints lines (with --time, their TSC) when all is taken
 * (calls_print()), or, with @stream, to @stream as they come: each line
 * once the next is made (a cut decode's first may join it). Streamed
 * lines are indented from the first one's level, and a return above it
 * stays at 0, as perf script's call trace has it: the smallest level is
 * not known until the end.
 */
struct calls_hist *calls_hist_new(struct cli_out *stream, int time);
void calls_hist_delete(struct calls_hist *h);
/* Where text between the lines goes (notes at the end of a stream). */
struct cli_out *calls_hist_text(struct calls_hist *h);
/*
 * Take @c's records made before @text_to bytes of its text (all that are
 * left with @all), with its text [@text_from, @text_to) between them.
 * Returns 0 or -1 after a message (the temporary file).
 */
int calls_take(struct calls_hist *h, struct calls_seg *c, const char *text,
	       size_t text_from, size_t text_to, int all);
/* ... and, when all is taken, what @c's end leaves for the next decode. */
void calls_take_end(struct calls_hist *h, struct calls_seg *c);
/*
 * One thread, as it goes: take all of @c but its open record, with the
 * text before it, and drop them from @c and @text.
 */
int calls_drain(struct calls_hist *h, struct calls_seg *c,
		struct cli_out *text);
/*
 * Only the lines @sel chooses (NULL: all): of its threads (and, merged,
 * CPUs) and times (@tc: the perf.data's conversion, for bounds in
 * seconds). Lines not chosen keep their numbers and instructions; the
 * text between lines (errors, lost-data notes) prints all the same.
 */
void calls_hist_select(struct calls_hist *h, const struct cli_select *sel,
		       const struct hwt_pd_time_conv *tc);
/* Times print as perf's (seconds with ns), converted with @tc. */
void calls_hist_perf_time(struct calls_hist *h,
			  const struct hwt_pd_time_conv *tc);
/* Print the history (what is left of it, streamed): numbered lines, and
 * the text between. A history of calls_hist_new_log() ends its stream. */
int calls_print(struct calls_hist *h, struct cli_out *out);

/*
 * hwt calls --folded (calltree.c): the lines as a call tree per thread,
 * each node's instructions its own, printed as folded stacks
 * ("f0;f1;f2 COUNT", flamegraph.pl's input): a line's callers are the
 * thread's lines before it at each shallower depth, "[unknown]" where it
 * had none (the trace started in calls) until a return to that depth
 * names it. With several threads, each stack starts with "pid P tid T".
 */
struct calls_tree;

struct calls_tree *calls_tree_new(void);
void calls_tree_delete(struct calls_tree *t);
/* A line of @task's: @depth from the outermost, a name (pointer) if
 * @named, else an IP, @ninsn instructions. -1 after a message (memory). */
int calls_tree_add(struct calls_tree *t, uint64_t task, int depth,
		   int named, uint64_t key, uint64_t ninsn);
int calls_tree_print_folded(struct calls_tree *t, struct cli_out *out);
/* calls_print() gives @h's lines to @t (the text between to its @out). */
void calls_hist_fold_into(struct calls_hist *h, struct calls_tree *t);

/*
 * hwt calls --timeline (timeline.c): the lines as calls in time, written
 * to @out as Chrome trace-event JSON (Perfetto's UI opens it): a complete
 * event per call of a function per thread, nested as the calls were. The
 * clock: the instructions (one a nanosecond), or with @time_clock the
 * lines' TSC (in perf's nanoseconds with @tc, else ticks).
 */
struct calls_timeline;

struct calls_timeline *calls_timeline_new(struct cli_out *out,
					  int time_clock,
					  const struct hwt_pd_time_conv *tc);
void calls_timeline_delete(struct calls_timeline *tl);
int calls_timeline_add(struct calls_timeline *tl, uint64_t task, int depth,
		       int named, uint64_t key, uint64_t ninsn, int has_tsc,
		       uint64_t tsc);
/* A line not shown: its instructions on the clock all the same. */
void calls_timeline_skip(struct calls_timeline *tl, uint64_t ninsn);
/* The calls still open end; each thread named @comm(@ctx, tid) unless
 * NULL; the JSON ends. -1 after a message. */
int calls_timeline_finish(struct calls_timeline *tl,
			  const char *(*comm)(void *ctx, uint32_t tid),
			  void *ctx);
/* calls_print() gives @h's lines to @tl too (the text to its @out). */
void calls_hist_time_into(struct calls_hist *h, struct calls_timeline *tl);

/*
 * The CPUs' streams of a perf.data as one history (perf record -a): a
 * thread that runs on several CPUs has one stack across them. Each
 * stream is decoded into a history of calls_hist_new_log(), which keeps
 * what it is given (in an unlinked temporary file) cut into slices where
 * the thread changes, each with the decoder's time there; then
 * calls_merge_replay() gives the slices of all streams, in time order, to
 * one history, which prints a line [pid P tid T cpu C] before the lines
 * of each slice whose thread or CPU is not the line before's. Without a
 * time for every slice (a trace without TSC), the streams one after the
 * other, each thread's stack starting again with each stream.
 */
struct calls_merge;

struct calls_merge *calls_merge_new(void);
void calls_merge_delete(struct calls_merge *m);
/* The history of the next stream, CPU @cpu's. */
struct calls_hist *calls_hist_new_log(struct calls_merge *m, uint32_t cpu);
/* All streams' slices to @h (a history of calls_hist_new()). Returns 0,
 * or -1 after a message (the temporary file). */
int calls_merge_replay(struct calls_merge *m, struct calls_hist *h);

#endif /* HWT_CLI_CALLS_H */

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hwt flow, hwt calls, hwt coverage: what a trace executed, from hwt's
 * block decoder.
 *
 *   flow      instruction history (--insn, default), blocks (--blocks),
 *             taken branches (--branches) or counts (--stat)
 *   calls     function-call history: one line per function segment,
 *             indented by call depth (gdb's record function-call-history)
 *   coverage  an AFL-style 64 KiB edge bitmap and its hash
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
	struct cli_pd_files files;	/* perf.data: where the code is */
	struct hwt_blk_config config;
	enum flow_mode mode;
	unsigned jobs;
	int verbose;		/* -v: how -j cut the trace, on stderr */
	unsigned disasm:1;
	unsigned time:1;
	unsigned stream:1;		/* calls: print as it goes */
	unsigned folded:1;		/* calls: folded stacks */
	unsigned timeline:1;		/* calls: a trace-event JSON */
	unsigned time_clock:1;		/* ... timed by the TSC */
	unsigned by_stream:1;		/* CPUs' streams: not merged */
	unsigned no_sym:1;
	unsigned events:1;		/* print events (insn, blocks) */
};

#define MAP_SIZE HWT_BLK_FOLD_MAP_SIZE

/* The last instruction of the previous block, for --branches. */
struct pending {
	uint64_t ip, fallthrough;
	uint8_t iclass;
	uint8_t valid;
};

/* The last symbol looked up (seg_symbol()), and where it holds. */
struct sym_cache {
	struct cli_sym_span span;
	uint64_t base;
	const char *name;
	size_t len;		/* of @name, as printed (at most 200) */
	uint8_t valid, found;
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
	 * thread of the lines changes in @out, and the time there. Where
	 * @out is lent (@lent), the places are the output's own. */
	struct cli_mark *marks;
	size_t nmarks, markcap;
	uint64_t mkey;
	uint8_t have_mkey, lent;
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
	 * walks (instruction lines, calls' last instructions):
	 * HWT_WALK_EACH=1, the tests' reference. */
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
	struct totals *all;		/* of all streams */
};

/* ------------------------------------------------------------------ */
/* Output helpers                                                      */
/* ------------------------------------------------------------------ */

/* Long C++ names are cut; the address is exact anyway. */
#define SYM_MAX_LEN 200

/*
 * The symbol at @ip, looked up once for a walk through a function (struct
 * cli_sym_span; a binary search per instruction was a third of flow
 * --insn's time).
 */
static int seg_symbol(struct sym_cache *c, const struct hwt_image *image,
		      uint64_t ip, const char **name, size_t *len,
		      uint64_t *off)
{
	uint64_t o = 0, end = 0;
	const char *n = NULL;
	int err;

	if (!c->valid || !cli_sym_span_has(&c->span, image, ip)) {
		err = hwt_image_symbol_extent(image, ip, &n, &o, &end);
		c->valid = err >= 0 || err == -HWT_ERR_NOMAP;
		c->span = (struct cli_sym_span){ hwt_image_id(image),
			hwt_image_generation(image), ip, end };
		c->found = err >= 0;
		c->name = n;
		c->len = n ? strnlen(n, SYM_MAX_LEN) : 0;
		c->base = ip - o;
		if (!c->valid)
			return err;
	}
	if (!c->found)
		return -HWT_ERR_NOMAP;
	*name = c->name;
	*len = c->len;
	*off = ip - c->base;
	return 0;
}

static char *put_sym(const struct flow *fl, struct seg *s,
		     const struct hwt_image *image, char *p, uint64_t ip)
{
	const char *name = NULL;
	uint64_t off = 0;
	size_t len = 0;

	if (fl->opt->no_sym ||
	    seg_symbol(&s->sym, image, ip, &name, &len, &off) < 0)
		return p;
	*p++ = ' ';
	*p++ = ' ';
	memcpy(p, name, len);
	p += len;
	*p++ = '+';
	*p++ = '0';
	*p++ = 'x';
	return cli_put_hex(p, off);
}

static inline __attribute__((always_inline)) void
flush_block(struct flow *fl, struct seg *s);

static void print_error(struct flow *fl, struct seg *s,
			struct hwt_blk_decoder *dec, uint64_t ip, int err)
{
	uint64_t pos = 0;

	flush_block(fl, s);
	s->nerrors++;
	if (hwt_blk_get_offset(dec, &pos) < 0)
		cli_out_printf(&s->out, "[error at offset ?, ip 0x%" PRIx64
			       ": %s]\n", ip, hwt_errstr(err));
	else
		cli_out_printf(&s->out, "[error at offset 0x%" PRIx64
			       ", ip 0x%" PRIx64 ": %s]\n", fl->base + pos,
			       ip, hwt_errstr(err));
}

/* ------------------------------------------------------------------ */
/* Branches                                                            */
/* ------------------------------------------------------------------ */

static void branch_line(struct seg *s, uint64_t from, uint64_t to)
{
	char *p = cli_out_reserve(&s->out, 48);

	s->nbranches++;
	*p++ = '0';
	*p++ = 'x';
	p = cli_put_hex(p, from);
	*p++ = ' ';
	*p++ = '0';
	*p++ = 'x';
	p = cli_put_hex(p, to);
	*p++ = '\n';
	cli_out_commit(&s->out, p);
}

/* The previous block's last instruction went to @next: was it taken? */
static void resolve(struct seg *s, uint64_t next, int print)
{
	struct pending *pd = &s->pend;

	if (!pd->valid)
		return;
	pd->valid = 0;
	switch (pd->iclass) {
	case HWT_IC_COND_JUMP:
		if (next == pd->fallthrough)
			return;
		break;
	case HWT_IC_CALL:
	case HWT_IC_RETURN:
	case HWT_IC_JUMP:
	case HWT_IC_FAR_CALL:
	case HWT_IC_FAR_RETURN:
	case HWT_IC_FAR_JUMP:
	case HWT_IC_INDIRECT:
		break;
	default:
		return;
	}
	if (print)
		branch_line(s, pd->ip, next);
	else
		s->nbranches++;
}

/* ------------------------------------------------------------------ */
/* Blocks                                                              */
/* ------------------------------------------------------------------ */

/* A line's most: TSC, '?', IP, symbol (200) and offset, disassembly (255). */
#define LINE_MAX_LEN 640

/*
 * The text of instruction @insn: from its bytes, or if @img (a kept walk
 * gives only where it starts, its size and mode) from the memo by @img's
 * image, which reads them only the first time; where that cannot (the
 * bytes are not in one piece), they are read here. NULL if it does not
 * decode.
 */
static const char *disasm_text(struct flow *fl, struct seg *s,
			       const struct hwt_insn *insn,
			       const struct cli_image_key *img, size_t *tlen)
{
	struct hwt_insn again;
	const char *text;
	uint64_t ip = insn->ip;

	if (!img)
		return cli_disasm_text(fl->dis, s->dmemo, insn->mode,
				       insn->raw, insn->size, ip, tlen);
	text = cli_disasm_text_at(fl->dis, s->dmemo, img, insn->mode, ip,
				  insn->size, tlen);
	if (text || hwt_blk_insn_walk(s->image, insn->mode, &ip, &again) < 0)
		return text;
	return cli_disasm_text(fl->dis, s->dmemo, again.mode, again.raw,
			       again.size, again.ip, tlen);
}

/* The line of @insn (--disasm: its bytes, or without @img's image). */
/* Each block's times (struct cli_blk_time): printed, or ordering the
 * lines of CPUs' streams. */
static int block_times(const struct flow *fl)
{
	return fl->opt->time || fl->by_time;
}

/*
 * CPUs' streams in time order: the time and thread of what @s prints from
 * here on (the last mark's, if nothing was printed since).
 */
static void seg_mark(struct seg *s)
{
	uint64_t at = cli_out_pos(&s->out);
	struct cli_mark *m = s->nmarks ? &s->marks[s->nmarks - 1] : NULL;

	if (!m || m->at != at) {
		if (s->nmarks == s->markcap) {
			size_t ncap = s->markcap ? 2 * s->markcap : 64;
			struct cli_mark *nm = realloc(s->marks,
						      ncap * sizeof(*nm));

			if (!nm) {
				fprintf(stderr, "hwt: out of memory for "
					"output\n");
				exit(1);
			}
			s->marks = nm;
			s->markcap = ncap;
		}
		m = &s->marks[s->nmarks++];
	}
	*m = (struct cli_mark){ at, s->mkey, s->task, s->have_mkey,
				s->have_task };
}

/* ... where the time goes on to @tsc (it never goes back). */
static inline void seg_time(struct seg *s, uint64_t tsc)
{
	if (s->have_mkey && tsc <= s->mkey)
		return;
	s->mkey = tsc;
	s->have_mkey = 1;
	seg_mark(s);
}

/* --blocks: the lines from here on have the time of the next block. */
static void seg_next_time(struct seg *s)
{
	if (!s->have_next_mkey)
		return;
	s->have_next_mkey = 0;
	seg_time(s, s->next_mkey);
}

static void insn_line(struct flow *fl, struct seg *s,
		      const struct hwt_insn *insn,
		      const struct cli_image_key *img, int have_time,
		      uint64_t tsc)
{
	const struct flow_options *opt = fl->opt;
	char *p;

	if (fl->by_time && have_time)
		seg_time(s, tsc);
	p = cli_out_reserve(&s->out, LINE_MAX_LEN);

	if (opt->time) {
		if (have_time)
			p = cli_put_hex16(p, tsc);
		else
			p = cli_put_str(p, "????????????????");
		*p++ = ' ';
		*p++ = ' ';
	}
	if (insn->speculative) {
		*p++ = '?';
		*p++ = ' ';
	}
	p = cli_put_hex16(p, insn->ip);
	p = put_sym(fl, s, s->image, p, insn->ip);
	if (opt->disasm) {
		const char *text = NULL;
		size_t tlen = 0;

		if (s->dmemo || (s->dmemo = cli_disasm_memo_new()))
			text = disasm_text(fl, s, insn, img, &tlen);
		*p++ = ' ';
		*p++ = ' ';
		if (text) {
			memcpy(p, text, tlen);
			p += tlen;
		} else {
			p = cli_put_str(p, "(bad)");
		}
	}
	*p++ = '\n';
	cli_out_commit(&s->out, p);
}

static void block_line(struct flow *fl, struct seg *s,
		       const struct hwt_block *b)
{
	char *p = cli_out_reserve(&s->out, LINE_MAX_LEN);

	if (b->speculative) {
		*p++ = '?';
		*p++ = ' ';
	}
	p = cli_put_hex16(p, b->ip);
	*p++ = ' ';
	p = cli_put_hex16(p, b->end_ip);
	p += sprintf(p, " %5" PRIu32, b->ninsn);
	p = put_sym(fl, s, s->block_image, p, b->ip);
	*p++ = '\n';
	cli_out_commit(&s->out, p);
}

/* @s's table of kept walks, made the first time (NULL: no memory). */
static struct hwt_an_walks *seg_walks(struct seg *s)
{
	if (!s->walks)
		s->walks = hwt_an_walks_new();
	return s->walks;
}

/* The walk of @b, kept (hwt_an_walks_get()): hot blocks are walked once,
 * not an instruction at a time each time. */
static int seg_walk(struct seg *s, const struct hwt_block *b,
		    struct hwt_an_walk *w)
{
	if (!seg_walks(s)) {
		memset(w, 0, sizeof(*w));
		return -HWT_ERR_NOMEM;
	}
	return hwt_an_walks_get(s->walks, s->image, b, w);
}

/* @b walked to its end: its last instruction is the branch pending. */
static void pend_walked(struct seg *s, const struct hwt_block *b,
			const struct hwt_an_walk *w)
{
	s->pend.ip = b->end_ip;
	s->pend.fallthrough = b->end_ip + w->last_size;
	s->pend.iclass = w->last_iclass;
	s->pend.valid = 1;
}

/* --branches: the branches inside the block, from its walk. */
static int walk_branches(struct seg *s, const struct hwt_block *b)
{
	struct hwt_an_walk w;
	int err = seg_walk(s, b, &w);

	for (uint32_t i = 0; i < w.ninner; i++)
		branch_line(s, w.inner[i].from, w.inner[i].to);
	s->ninsn += w.ninsn;
	if (err < 0)
		return err;
	pend_walked(s, b, &w);
	return 0;
}

/*
 * The instruction lines of @b from its kept walk: where each starts is the
 * one before's end, or, after a direct call or jump inside the block, its
 * target; --disasm's texts by address and size (disasm_text()). (The walk
 * of every instruction was 35% of hwt flow's time on gzip's trace, and
 * with --disasm 40%.)
 */
static int walk_insns(struct flow *fl, struct seg *s,
		      const struct hwt_block *b, const struct cli_blk_time *t)
{
	struct hwt_insn insn = { .ip = b->ip, .speculative = b->speculative,
				 .mode = b->mode };
	struct cli_image_key img = { 0 };
	struct hwt_an_walk w;
	uint32_t k = 0;
	uint64_t tsc;
	int err = seg_walk(s, b, &w);

	if (fl->opt->disasm)
		img = cli_image_key(s->image);
	for (uint32_t i = 0; i < w.ninsn; i++) {
		int have_time = cli_blk_time_of(t, i + 1 == b->ninsn, &tsc);

		insn.size = w.sizes[i];
		insn_line(fl, s, &insn, &img, have_time, tsc);
		insn.ip = hwt_an_walk_next(&w, i, insn.ip, &k);
	}
	s->ninsn += w.ninsn;
	s->nbranches += w.ninner;
	if (err < 0)
		return err;
	pend_walked(s, b, &w);
	return 0;
}

/* Walk the instructions of @b: lines, branches. */
static int walk_block(struct flow *fl, struct seg *s,
		      const struct hwt_block *b, const struct cli_blk_time *t)
{
	const struct flow_options *opt = fl->opt;
	struct hwt_insn insn;
	uint64_t ip = b->ip, next, tsc;
	int err, have_time;

	if (opt->mode == MODE_BRANCHES)
		return walk_branches(s, b);
	if (opt->mode == MODE_INSN && !fl->walk_each)
		return walk_insns(fl, s, b, t);

	for (uint32_t n = b->ninsn; n > 0; n--) {
		err = hwt_blk_insn_walk(s->image, b->mode, &ip, &insn);
		if (err < 0)
			return err;
		insn.speculative = b->speculative;
		if (opt->mode == MODE_INSN) {
			have_time = cli_blk_time_of(t, n == 1, &tsc);
			insn_line(fl, s, &insn, NULL, have_time, tsc);
		}
		s->ninsn++;

		next = insn.ip + insn.size;
		if (n > 1) {
			/* Inside a block only direct jumps and calls branch,
			 * taken even to the next instruction (jmp/call +0). */
			if (ip != next || insn.iclass == HWT_IC_JUMP ||
			    insn.iclass == HWT_IC_CALL)
				s->nbranches++;
		} else {
			s->pend.ip = insn.ip;
			s->pend.fallthrough = next;
			s->pend.iclass = insn.iclass;
			s->pend.valid = 1;
		}
	}
	return 0;
}

/*
 * --blocks, --stat and coverage work on canonical blocks (hwt_blk_fold_*):
 * the block decoder's block boundaries depend on its cache's history (as
 * libipt's do, which ptxed reproduces); canonical blocks end only at a
 * branch that needs trace or at an event, so the output is the same
 * whatever the cache saw, and with any -j.
 */
static inline __attribute__((always_inline)) void
flush_block(struct flow *fl, struct seg *s)
{
	struct hwt_block b;

	if (!s->fold.open)
		return;
	hwt_blk_fold_end(&s->fold, &b);
	if (fl->opt->mode == MODE_BLOCKS) {
		block_line(fl, s, &b);
		if (fl->by_time)
			seg_next_time(s);
	}
}

/* A block opened a canonical block: after a PSB+, a cut segment starts
 * there with no AFL previous location; forget it there in every run. */
static void new_block(struct seg *s, const struct hwt_block *b)
{
	if (s->have_psb_ip && b->ip == s->psb_ip)
		s->fold.prev = 0;
	s->have_psb_ip = 0;
}

/* hwt calls on the printing thread: function segments held, at most. */
#define CALLS_DRAIN 4096

static int do_block(struct flow *fl, struct seg *s,
		    struct hwt_blk_decoder *dec, const struct hwt_block *b)
{
	const struct flow_options *opt = fl->opt;
	struct cli_blk_time t = s->time;

	switch (opt->mode) {
	case MODE_STAT:
	case MODE_BLOCKS:
	case MODE_COVERAGE: {
		struct hwt_block ended;
		int flags = hwt_blk_fold_block(dec, &s->fold, b, &ended);

		if ((flags & HWT_BLK_FOLD_ENDED) && opt->mode == MODE_BLOCKS) {
			block_line(fl, s, &ended);
			if (fl->by_time)
				seg_next_time(s);
		}
		if (flags & HWT_BLK_FOLD_NEW) {
			new_block(s, b);
			s->block_image = s->image;
		}
		return 0;
	}
	default:
		break;
	}
	s->nblocks++;
	if (!b->ninsn)
		return 0;
	if (block_times(fl)) {
		if (s->time_held) {
			t.after = t.before;
			t.have_after = t.have_before;
		} else {
			t.have_after = hwt_blk_time(dec, &t.after, NULL,
						    NULL) >= 0;
		}
		s->time.before = t.after;
		s->time.have_before = t.have_after;
	}
	if (opt->mode == MODE_CALLS) {
		int err = calls_seg_block(&s->calls, b, &t, s->out.len,
					  fl->walk_each ? NULL : seg_walks(s));

		s->ninsn += b->ninsn;
		if (s->calls_hist && s->calls.nrecs >= CALLS_DRAIN)
			calls_drain(s->calls_hist, &s->calls, &s->out);
		return err;
	}
	resolve(s, b->ip, opt->mode == MODE_BRANCHES);
	/* (The branch into @b goes with the block before, as where a -j
	 * segment ends at @b.) */
	if (fl->by_time && opt->mode == MODE_BRANCHES && t.have_before)
		seg_time(s, t.before);
	return walk_block(fl, s, b, &t);
}

/* ------------------------------------------------------------------ */
/* Events                                                              */
/* ------------------------------------------------------------------ */

/* Which events break the flow: no branch or edge across them. */
static int event_breaks_flow(const struct hwt_event *ev)
{
	switch (ev->type) {
	case HWT_EV_ENABLED:
	case HWT_EV_DISABLED:
	case HWT_EV_ASYNC_DISABLED:
	case HWT_EV_ASYNC_BRANCH:
	case HWT_EV_OVERFLOW:
	case HWT_EV_STOP:
		return 1;
	case HWT_EV_TSX:
		return ev->u.tsx.aborted;
	default:
		return 0;
	}
}

static void do_event(struct flow *fl, struct seg *s, const struct hwt_event *ev)
{
	flush_block(fl, s);
	const struct flow_options *opt = fl->opt;
	uint64_t ip = 0;
	char text[200];

	s->nevents++;
	if (ev->status_update) {
		/*
		 * PSB+: a cut segment starts at its IP, with no AFL previous
		 * location; forget it there in every run (see new_block).
		 */
		s->have_psb_ip = (uint8_t)hwt_event_resume_ip(ev, &ip);
		s->psb_ip = ip;
		return;
	}
	/*
	 * A branch out of the traced code (a filter) is taken where the
	 * disable says; one taken just before an interrupt went to where
	 * the interrupt came: perf lists both so too.
	 */
	if (ev->type == HWT_EV_DISABLED && !ev->ip_suppressed)
		resolve(s, ev->u.disabled.ip, opt->mode == MODE_BRANCHES);
	else if (ev->type == HWT_EV_ASYNC_DISABLED)
		resolve(s, ev->u.async_disabled.at, opt->mode == MODE_BRANCHES);
	else if (ev->type == HWT_EV_ASYNC_BRANCH)
		resolve(s, ev->u.async_branch.from, opt->mode == MODE_BRANCHES);
	if (event_breaks_flow(ev)) {
		s->pend.valid = 0;
		s->fold.prev = 0;
		if (opt->mode == MODE_CALLS)
			calls_seg_event(&s->calls, ev);
	}
	if (!opt->events || ev->type == HWT_EV_TICK)
		return;
	cli_ipt_event(text, sizeof(text), ev, 1);
	cli_out_printf(&s->out, "[%s]\n", text);
}

/* ------------------------------------------------------------------ */
/* Decoding one segment                                                */
/* ------------------------------------------------------------------ */

/*
 * Blocks may come in batches, or be folded by the decoder without coming
 * out at all (--stat, coverage), where nothing between two blocks asks
 * the decoder. (The instruction lines and --branches walk from kept
 * walks, which cannot fail where the decoder read the block: an error's
 * offset would be the batch's last block's.) Where the time or the
 * perf.data hook matters, a batch ends where they must be asked again
 * (hwt_blk_next_batch_until(): the time may move, or a lost-data note by
 * offset comes due): the hook is asked before each batch, and every
 * block of a batch but the last has the time the batch started with
 * after it (@s->time_held). A fold stops at every timing packet, so the
 * hook, asked before each fold, keeps the image at the decoder's time.
 */
static int use_batch(const struct flow *fl)
{
	/* (For tests: the blocks one at a time, the reference.) */
	if (cli_env_on("HWT_ONE_BLOCK"))
		return 0;
	return fl->opt->mode != MODE_STAT && fl->opt->mode != MODE_COVERAGE;
}

/*
 * The times printed, or the perf.data hook's, which applies sideband
 * records by time: a segment must start with the time state one decoder
 * would have there (see hwt_evt_time_warm()).
 */
static int time_matters(const struct flow *fl)
{
	return fl->opt->time || fl->hook;
}

static int use_fold(const struct flow *fl)
{
	return fl->opt->mode == MODE_STAT || fl->opt->mode == MODE_COVERAGE;
}

/*
 * perf.data: lost-data notes print where they happened, between the
 * lines of blocks and instructions; not where blocks are folded (--stat
 * prints counts instead, coverage the notes at the stream's end): a fold
 * stops where the block cache makes it stop (and at every timing
 * packet), so where a note became due among the others would depend on
 * the cache's history, which -j does not keep.
 */
static int inline_notes(const struct flow *fl)
{
	return !use_fold(fl);
}

/*
 * A CPU's stream: a line naming the thread whose lines follow, where it
 * changes (after the lost-data notes due there, so that a segment's first
 * is after the notes the segments before left: one thread's order).
 */
static void mark_task(struct flow *fl, struct seg *s)
{
	uint32_t pid, tid;
	uint64_t task;
	size_t at;

	if (fl->opt->mode != MODE_INSN && fl->opt->mode != MODE_BLOCKS &&
	    fl->opt->mode != MODE_BRANCHES)
		return;
	fl->hook->task(s->hctx, &pid, &tid);
	task = (uint64_t)pid << 32 | tid;
	if (s->have_task && task == s->task)
		return;
	/* (A canonical block does not go on in another thread.) */
	flush_block(fl, s);
	if (fl->by_time) {
		/* (The merge names the thread where its lines go on.) */
		s->task = task;
		s->have_task = 1;
		seg_mark(s);
		return;
	}
	at = s->out.len;
	cli_out_printf(&s->out, "[pid %" PRIu32 " tid %" PRIu32 "]\n", pid,
		       tid);
	if (!s->have_task) {
		s->first_task = task;
		s->mark_at = at;
		s->mark_len = s->out.len - at;
	}
	s->task = task;
	s->have_task = 1;
}

/* perf.data: bring the image up to date, print lost-data notes due here. */
static void sync_hook(struct flow *fl, struct seg *s,
		      struct hwt_blk_decoder *dec)
{
	int due;

	if (!fl->hook)
		return;
	if (!s->synced) {
		s->synced = 1;
		s->first_sync = s->out.len;
	}
	/*
	 * --blocks print no time: a canonical block has the time of the
	 * last sync before it opened (so where a -j segment ends in it,
	 * after a sync at the next one's PSB+, it has the same).
	 */
	if (fl->by_time && fl->opt->mode == MODE_BLOCKS) {
		uint64_t tsc;

		if (hwt_blk_time(dec, &tsc, NULL, NULL) >= 0) {
			s->next_mkey = tsc;
			s->have_next_mkey = 1;
			if (!s->fold.open)
				seg_next_time(s);
		}
	}
	due = cli_hook_sync(fl->hook, s->hctx, &s->quiet, dec, fl->base);
	if (due < 0)
		return;
	/* Symbols from the process the decoder is in now. */
	s->image = hwt_blk_image(dec);
	if (fl->opt->mode == MODE_CALLS) {
		uint32_t pid, tid;
		uint64_t tsc = 0;
		/* (The time orders the CPUs' slices: only merged.) */
		int have_tsc = fl->merge &&
			       hwt_blk_time(dec, &tsc, NULL, NULL) >= 0;

		fl->hook->task(s->hctx, &pid, &tid);
		calls_seg_task(&s->calls, pid, tid, have_tsc, tsc,
			       s->out.len);
	}
	if (due && inline_notes(fl)) {
		flush_block(fl, s);
		fl->hook->notes(s->hctx, dec, fl->base, &s->out);
	}
	if (fl->hook->on_cpu)
		mark_task(fl, s);
}

/* Blocks per hwt_blk_next_batch(). */
#define BATCH 256

/* The decoders' configuration: the options', on this trace (or piece). */
static struct hwt_blk_config trace_config(const struct flow *fl)
{
	struct hwt_blk_config cfg = fl->opt->config;

	cfg.qry.begin = fl->trace;
	cfg.qry.end = fl->trace + fl->size;
	return cfg;
}

static struct hwt_blk_decoder *new_decoder(const struct flow *fl,
					   struct hwt_image *image)
{
	struct hwt_blk_config cfg = trace_config(fl);

	return hwt_blk_new(&cfg, image);
}

/*
 * hwt_blk_end_event(); and on reaching the next segment's PSB, the state
 * the decoder carries over it (its first status update there is applied:
 * that field, if any, the PSB+ says again).
 */
static int seg_end_event(struct seg *s, struct hwt_blk_end *end,
			 const struct hwt_blk_decoder *dec,
			 const struct hwt_event *ev)
{
	int stopping = end->stopping, r = hwt_blk_end_event(end, dec, ev);

	if (!stopping && end->stopping)
		s->reached.have_st = hwt_blk_get_state(dec,
							&s->reached.st) >= 0;
	return r;
}

/* What the PSB+ the segment starts at says of the decoder state. */
static void seg_psb_event(struct seg *s, const struct hwt_event *ev)
{
	if (!ev->status_update)
		return;
	if (ev->type == HWT_EV_EXEC_MODE)
		s->psb_sets_mode = 1;
	else if (ev->type == HWT_EV_TSX)
		s->psb_sets_tsx = 1;
}

/*
 * Decode segment @s with @reuse, a decoder of this thread's that decoded
 * other segments before (@fresh: none yet; its block cache is as good for
 * this one), or NULL. The first segment gets a new decoder, or a fresh
 * one: it starts with a search for the first PSB from the start of the
 * trace.
 */
static void decode_segment(struct flow *fl, struct seg *s,
			   struct hwt_blk_decoder *reuse, int fresh)
{
	const struct flow_options *opt = fl->opt;
	struct hwt_blk_decoder *dec = s->first && !fresh ? NULL : reuse;
	struct hwt_block block, *batch = NULL;
	struct hwt_event ev;
	struct hwt_blk_end end;
	uint64_t ip, last_sync = 0;
	int status, started = 0, fold = use_fold(fl), have_sync = 0, synced;
	int at_begin = 1;
	size_t n, i;

	if (!dec)
		dec = new_decoder(fl, s->image);
	if (!dec) {
		cli_out_printf(&s->out, "[error: cannot allocate a decoder]\n");
		s->nerrors++;
		return;
	}

	if (opt->mode == MODE_CALLS && !s->calls.started)
		calls_seg_start(&s->calls, fl->names, s->first);
	/* Without it, one block at a time. */
	if (use_batch(fl))
		batch = malloc(BATCH * sizeof(*batch));

	memset(&block, 0, sizeof(block));
	hwt_blk_end_init(&end, s->end);
	if (s->seed.have_t)
		hwt_blk_time_seed(dec, &s->seed.t);
	if (s->seed.have_st)
		hwt_blk_state_seed(dec, &s->seed.st);
	s->reached.have_st = 0;
	s->psb_sets_mode = 0;
	s->psb_sets_tsx = 0;
	if (time_matters(fl))
		hwt_blk_time_watch(dec, s->end ? s->end : UINT64_MAX);
	for (;;) {
		if (!started && !s->first)
			status = hwt_blk_sync_set(dec, s->begin);
		else
			status = hwt_blk_sync_forward(dec);
		flush_block(fl, s);
		s->pend.valid = 0;
		s->fold.prev = 0;
		s->have_psb_ip = 0;
		s->time_stale = 1;
		s->quiet.valid = 0;
		/* (Where a decode starts, calls_seg_start() said so.) */
		if (started && opt->mode == MODE_CALLS)
			calls_seg_sync(&s->calls);
		at_begin = !started;
		started = 1;
		synced = 1;
		if (status == -HWT_ERR_EOS)
			break;
		/* A PSB of the next segment's is the next's, with its errors. */
		if (hwt_blk_end_past(&end, dec, 1))
			break;
		if (status < 0) {
			/* A damaged PSB+: the next PSB, if the sync moved. */
			print_error(fl, s, dec, 0, status);
			if (hwt_blk_get_sync_offset(dec, &ip) < 0 ||
			    (have_sync && ip <= last_sync))
				break;
			have_sync = 1;
			last_sync = ip;
			continue;
		}

		for (;;) {
			while (status & HWT_STS_EVENT_PENDING) {
				s->time_stale = 1;
				status = hwt_blk_event(dec, &ev);
				if (status < 0)
					break;
				/* The next segment starts at its PSB+'s IP:
				 * the blocks up to there are still ours. (Not
				 * the PSB+ synced to: the decoder may have read
				 * on to the next PSB in a damaged trace.) */
				if (synced && at_begin)
					seg_psb_event(s, &ev);
				switch (synced ? 0 :
					seg_end_event(s, &end, dec, &ev)) {
				case 0:
					do_event(fl, s, &ev);
					break;
				case 1:
					break;
				default:
					goto out;
				}
			}
			synced = 0;
			if (status < 0)
				break;
			if (status & HWT_STS_EOS) {
				status = -HWT_ERR_EOS;
				break;
			}
			/* (hwt_blk_next() clears @block itself.) */
			sync_hook(fl, s, dec);
			/* The blocks' image, until the next sync_hook(). */
			if (opt->mode == MODE_CALLS)
				calls_seg_image(&s->calls, s->image);
			/*
			 * Hot code without a block coming out; not where a
			 * PSB+ asks new_block() to look at the next block,
			 * nor past the end.
			 */
			if (fold && !end.stopping && !s->have_psb_ip) {
				status = hwt_blk_fold_next(dec, &s->fold,
							   &block);
				if (status < 0)
					break;
				if (status)
					continue;
			}
			/* (Each block with its time before: the one after
			 * the block before, unless events came between.) */
			if (block_times(fl) && s->time_stale) {
				s->time.have_before = hwt_blk_time(
					dec, &s->time.before, NULL, NULL) >= 0;
				s->time_stale = 0;
			}
			if (batch && (fl->hook || opt->time)) {
				/* (sync_hook() made @s->quiet valid.) */
				status = hwt_blk_next_batch_until(
					dec, batch, BATCH, &n,
					!fl->hook ? UINT64_MAX :
					s->quiet.valid ? s->quiet.off : 0);
			} else if (batch) {
				status = hwt_blk_next_batch(dec, batch, BATCH,
							    &n);
			} else {
				status = hwt_blk_next(dec, &block);
				n = 1;
			}
			for (i = 0; i < n; i++) {
				const struct hwt_block *b =
					batch ? &batch[i] : &block;
				/* All but the last came with status 0. */
				int st = i + 1 < n ? 0 : status;

				s->time_held = i + 1 < n;

				if (hwt_blk_end_block(&end, b)) {
					resolve(s, b->ip,
						opt->mode == MODE_BRANCHES);
					goto out;
				}
				if (b->ninsn || st >= 0) {
					int err = do_block(fl, s, dec, b);

					if (err < 0) {
						print_error(fl, s, dec, b->ip,
							    err);
						s->pend.valid = 0;
					}
				}
			}
			if (batch && n)
				block = batch[n - 1];
			if (status < 0)
				break;
		}
		if (status == -HWT_ERR_EOS)
			break;
		/*
		 * An error in the next segment's data, or on the way to its
		 * PSB+'s IP (which the flow did not reach: a damaged PSB+
		 * whose IP does not match the code): the next segment cannot
		 * see what led to it, nor can this one know where one thread
		 * would resynchronise. One thread decodes from here (run()).
		 */
		if (end.stopping || hwt_blk_end_past(&end, dec, 0)) {
			s->unclean = 1;
			break;
		}
		if (hwt_blk_get_ip(dec, &ip) < 0)
			ip = block.ninsn ? block.end_ip : block.ip;
		sync_hook(fl, s, dec);
		print_error(fl, s, dec, ip, status);
	}
out:
	flush_block(fl, s);
	free(batch);
	/* (A worker's decoder comes with its walks and texts: all are
	 * kept.) */
	if (dec != reuse) {
		hwt_an_walks_delete(s->walks);
		s->walks = NULL;
		cli_disasm_memo_delete(s->dmemo);
		s->dmemo = NULL;
	}
	if (time_matters(fl))
		s->reached.have_t = hwt_blk_time_watched(dec,
							 &s->reached.t) > 0;
	if (dec != reuse)
		hwt_blk_delete(dec);
}

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

static void *worker(void *arg)
{
	struct pool *pool = arg;
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
	int fresh = 1;
	size_t k;

	if (hook && !hctx) {
		fprintf(stderr, "%s: out of memory.\n", pool->fl->opt->prog);
		exit(1);
	}
	dec = new_decoder(pool->fl, hook ? hook->image(hctx) : pool->fl->image);
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
			struct hwt_blk_config cfg = trace_config(pool->fl);

			/*
			 * A guess, checked when it is printed (run()); only
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
		decode_segment(pool->fl, s, dec, fresh);
		walks = s->walks;
		dmemo = s->dmemo;
		s->walks = NULL;
		s->dmemo = NULL;
		calls_seg_swap_syms(&s->calls, &syms);
		if (hook)
			hook->seg_end(hctx, &s->notes);
		/* (A cache warmed up once, not once more for the first
		 * segment: a decoder is as good as new before its first.) */
		fresh = 0;
		cli_order_done(&pool->order, &s->done);
	}
	hwt_blk_delete(dec);
	hwt_an_walks_delete(walks);
	cli_disasm_memo_delete(dmemo);
	free(syms);
	if (hook)
		hook->unfork(hctx);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Results                                                             */
/* ------------------------------------------------------------------ */

struct totals {
	uint64_t ninsn, nblocks, nbranches, nevents, nerrors;
	uint8_t *map;
	/* @map's cli_map_hash(), if made already (@hashed) */
	uint64_t hash;
	size_t edges;
	uint8_t hashed;
	struct calls_hist *calls;
	/* A CPU's stream: the thread the last segment printed ended in. */
	uint64_t task;
	uint8_t have_task;
};

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

/* Fold a finished segment into the totals, print its output. */
static int consume(struct flow *fl, struct seg *s, struct totals *t,
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
	if (fl->opt->mode == MODE_CALLS) {
		consume_calls(fl, s, t);
	} else if (fl->hook && s->hctx != fl->hook->ctx) {
		size_t at = seg_join_at(s);

		give_marks(fl, s, &mi, at, cli_out_pos(out));
		write_out(out, s, 0, at, skip);
		fl->hook->seg_join(fl->hook->ctx, &s->notes,
				   inline_notes(fl) ? out : NULL);
		give_marks(fl, s, &mi, SIZE_MAX, cli_out_pos(out) - at);
		write_out(out, s, at, s->out.len, skip);
	} else {
		give_marks(fl, s, &mi, SIZE_MAX,
			   s->lent ? 0 : cli_out_pos(out));
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
	free(s->marks);
	s->marks = NULL;
	s->nmarks = s->markcap = 0;
	calls_seg_free(&s->calls);
	return 0;
}

/* @map: coverage's map, cleared (the caller's), or NULL for one of its
 * own. */
static int seg_init_map(struct flow *fl, struct seg *s, uint8_t *map)
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
	return 0;
}

static int seg_init(struct flow *fl, struct seg *s)
{
	return seg_init_map(fl, s, NULL);
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

/*
 * What one run() decodes: the trace in @fl, a whole raw trace (or range)
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

/* What consume() did not take of segments not printed. */
static void seg_free(struct seg *s)
{
	free(s->out.buf);
	free(s->fold.map);
	free(s->marks);
	calls_seg_free(&s->calls);
}

/*
 * One thread: @s prints straight into @out, lent to it; hwt calls puts
 * its lines into the history as it goes (they print at the end).
 */
static void seg_lend(struct seg *s, struct totals *t, struct cli_out *out)
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
	s->lent = 1;
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
	consume(fl, s, t, out);
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
	seg_lend(s, t, out);
	decode_segment(fl, s, NULL, 0);
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
	cfg = trace_config(fl);
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

	if (seg_init(fl, r) < 0) {
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
	decode_segment(fl, &again, NULL, 0);
	again.done = 1;
	seg_free(s);
	*s = again;
}

/*
 * Returns 0, -1 after a message, or 1 if a segment did not decode on its
 * own as in one thread (it ended in an error in the next one's data, or
 * hook->seg_check said so): the trace from there was decoded on this
 * thread, and so must the rest of a perf.data stream.
 */
static int run(struct flow *fl, const struct span *sp, struct totals *t,
	       struct cli_out *out)
{
	const struct flow_options *opt = fl->opt;
	unsigned jobs = opt->jobs ? opt->jobs : 1;
	struct cli_cut *cuts = NULL;
	size_t ncuts = 0, alone;
	uint64_t chunk = 0;
	struct pool pool;
	pthread_t *th;
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
		else if (!use_fold(fl))
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

		if (seg_init(fl, s) < 0) {
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
	for (unsigned i = 0; th && i < jobs; i++) {
		if (pthread_create(&th[i], NULL, worker, &pool))
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
			decode_segment(fl, &pool.segs[k], NULL, 0),
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
			consume(fl, s, t, out);
		}
		cli_order_printed(&pool.order, alone + 1, NULL);
	}
	/* (The workers finish the segment they have.) */
	if (alone < pool.nsegs)
		cli_order_stop(&pool.order);
	for (unsigned i = 0; i < nth; i++)
		pthread_join(th[i], NULL);
	free(th);
	if (alone < pool.nsegs) {
		/* The rest as one thread decodes it. */
		struct seg rest;

		seg_redo(fl, &pool, alone, sp->end, &rest);
		for (size_t k = alone; k < pool.nsegs; k++)
			seg_free(&pool.segs[k]);
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

static int finish(struct flow *fl, struct totals *t, struct cli_out *out)
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
static int totals_init(const struct flow *fl, struct totals *t,
		       struct cli_out *out)
{
	if (fl->opt->mode == MODE_COVERAGE) {
		t->map = calloc(1, MAP_SIZE);
		if (!t->map)
			goto oom;
	}
	if (fl->opt->mode == MODE_CALLS && fl->merge && fl->hook) {
		t->calls = calls_hist_new_log(fl->merge, fl->hook->cpu);
		if (!t->calls)
			goto oom;
	} else if (fl->opt->mode == MODE_CALLS) {
		t->calls = calls_hist_new(fl->opt->stream ? out : NULL,
					  fl->opt->time);
		if (!t->calls)
			goto oom;
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

static void add_totals(struct totals *all, const struct totals *t)
{
	all->ninsn += t->ninsn;
	all->nblocks += t->nblocks;
	all->nbranches += t->nbranches;
	all->nevents += t->nevents;
	all->nerrors += t->nerrors;
	if (all->map && t->map)
		cli_map_add(all->map, t->map);
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

	memset(&carry, 0, sizeof(carry));
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
		r = run(fl, &sp, t, out);
		if (r < 0)
			return -1;
		/* A segment did not decode on its own as in one thread: the
		 * view is where one thread's is now, not where the next
		 * piece's segments would start theirs. */
		if (r > 0)
			alone = 1;
	}
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
	int more;

	if (fl->opt->jobs > 1)
		return run_pieces_jobs(fl, trace, t, out);

	if (seg_init(fl, &s) < 0) {
		fprintf(stderr, "%s: out of memory.\n", fl->opt->prog);
		return -1;
	}
	seg_lend(&s, t, out);
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
		decode_segment(fl, &s, NULL, 0);
	}
	seg_give_back(fl, &s, t, out);
	fl->base = 0;
	return more < 0 ? -1 : 0;
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

	/* The bitmap of all streams is written once, at the end. */
	o.bitmap_out = NULL;
	memset(&t, 0, sizeof(t));
	fl->opt = &o;
	fl->image = image;
	fl->hook = hook;
	if (totals_init(fl, &t, out) < 0)
		goto out;
	if (fl->by_time)
		cli_merge_stream(fl->by_time, cli_out_pos(out), hook->cpu);
	if (run_pieces(fl, trace, &t, out) == 0) {
		if (o.mode != MODE_STAT)
			hook->notes(hook->ctx, NULL, 0,
				    t.calls ? calls_hist_text(t.calls) : out);
		if (finish(fl, &t, out) == 0)
			ret = 0;
		if (o.mode == MODE_STAT)
			hook->stat(hook->ctx, out);
	}
	if (fl->by_time)
		cli_merge_stream_end(fl->by_time, cli_out_pos(out));
	if (fl->all)
		add_totals(fl->all, &t);
out:
	free(t.map);
	calls_hist_delete(t.calls);
	fl->opt = saved;
	fl->image = saved_image;
	fl->hook = NULL;
	return ret;
}

/* Nothing at all came out of @name: not a trace (as hwt dump says too);
 * said so, 1. */
static int not_a_trace(const struct totals *t, const char *prog,
		       const char *name)
{
	if (t->nblocks || t->nevents || t->nerrors || t->ninsn)
		return 0;
	fprintf(stderr, "%s: %s: no PSB found: not an Intel PT trace?\n", prog,
		name);
	return 1;
}

/* ------------------------------------------------------------------ */
/* Several traces (hwt coverage): a fuzzer's runs, or its corpus        */
/* ------------------------------------------------------------------ */

/*
 * Each trace is decoded on its own, as if alone, into a map of its own,
 * but one decoder per thread decodes them all (hwt_blk_set_trace()): its
 * block cache is warm after the first, as libxdc keeps its cache from one
 * run of the fuzzed program to the next. With -j N, N threads take the
 * traces in turn (a trace is not cut: they are many, and small), and
 * they print in order, from a ring of slots.
 */
struct corpus {
	struct flow *fl;
	struct corpus_slot {
		struct seg s;
		uint8_t failed;		/* not read, or no memory: said so */
		/* its map's, which went into its thread's union */
		uint64_t hash;
		size_t edges;
	} *slots;			/* trace k in slots[k % nslots] */
	size_t nslots;
	struct cli_order order;		/* of the traces */
};

/* A thread's: its decoder, a buffer for the traces it reads, the map it
 * folds them into (cleared after each), and the union of its traces'. */
struct corpus_thread {
	struct corpus *c;
	struct hwt_blk_decoder *dec;
	uint8_t *buf;
	size_t cap;
	uint8_t *map, *sum;
};

static void corpus_thread_fini(struct corpus_thread *th)
{
	hwt_blk_delete(th->dec);
	free(th->buf);
	free(th->map);
	free(th->sum);
}

/* Trace @k into its slot, with @th's decoder (made here if none). */
static void corpus_decode(struct corpus_thread *th, size_t k)
{
	struct corpus *c = th->c;
	struct hwt_blk_decoder **dec = &th->dec;
	struct flow f = *c->fl;
	struct corpus_slot *sl = &c->slots[k % c->nslots];
	struct cli_input in;

	memset(&in, 0, sizeof(in));
	sl->failed = 1;
	if (!th->map)
		th->map = calloc(1, MAP_SIZE);
	if (!th->sum)
		th->sum = calloc(1, MAP_SIZE);
	if (!th->map || !th->sum || seg_init_map(&f, &sl->s, th->map) < 0) {
		fprintf(stderr, "%s: out of memory.\n", f.opt->prog);
		goto out;
	}
	if (cli_input_read(&in, f.opt->traces[k], f.opt->prog, &th->buf,
			   &th->cap) < 0)
		goto out;
	sl->failed = 0;
	f.trace = in.data;
	f.size = in.size;
	sl->s.first = 1;
	if (*dec && hwt_blk_set_trace(*dec, f.trace, f.trace + f.size) < 0) {
		hwt_blk_delete(*dec);
		*dec = NULL;
	}
	if (!*dec)
		*dec = new_decoder(&f, f.image);
	/* (Without a decoder, it tries to make one, and says so.) */
	decode_segment(&f, &sl->s, *dec, 1);
	cli_input_close(&in);
	sl->hash = cli_map_take(th->map, th->sum, &sl->edges);
out:
	/* (The map is the thread's: no one else frees it.) */
	sl->s.fold.map = NULL;
}

static void *corpus_worker(void *arg)
{
	struct corpus_thread *th = arg;
	struct corpus *c = th->c;
	size_t k;

	while ((k = cli_order_take(&c->order)) != SIZE_MAX) {
		corpus_decode(th, k);
		cli_order_done(&c->order, &c->slots[k % c->nslots].s.done);
	}
	return NULL;
}

/* Trace @k's lines; its counts added to @all (its map went into its
 * thread's union). Returns 0, or 1 if it gave nothing (not read, or not a
 * trace: said so). */
static int corpus_print(struct corpus *c, size_t k, struct totals *all,
			struct cli_out *out)
{
	struct corpus_slot *sl = &c->slots[k % c->nslots];
	struct flow_options o = *c->fl->opt;
	struct flow f = *c->fl;
	struct totals t;

	if (sl->failed) {
		seg_free(&sl->s);
		return 1;
	}
	/* (The union's bitmap is the one written, at the end.) */
	o.bitmap_out = NULL;
	f.opt = &o;
	memset(&t, 0, sizeof(t));
	cli_out_printf(out, "# trace %s\n", o.traces[k]);
	t.hash = sl->hash;
	t.edges = sl->edges;
	t.hashed = 1;
	consume(&f, &sl->s, &t, out);
	(void)finish(&f, &t, out);
	add_totals(all, &t);
	return not_a_trace(&t, o.prog, o.traces[k]);
}

/* All the traces, then their union. Returns 0, or 1 if a trace could not
 * be read or gave nothing, after a message. */
static int run_traces(struct flow *fl, struct totals *all,
		      struct cli_out *out)
{
	const struct flow_options *opt = fl->opt;
	unsigned jobs = opt->jobs ? opt->jobs : 1, nth = 0;
	/* ct[jobs]: this thread's (if no other runs) */
	struct corpus_thread *ct;
	pthread_t *th = NULL;
	struct corpus c;
	int ret = 0;

	memset(&c, 0, sizeof(c));
	c.fl = fl;
	c.nslots = jobs > 1 ? 4 * (size_t)jobs : 1;
	c.slots = calloc(c.nslots, sizeof(*c.slots));
	ct = calloc((size_t)jobs + 1, sizeof(*ct));
	cli_order_init(&c.order, opt->ntraces, c.nslots);
	if (jobs > 1)
		th = calloc(jobs, sizeof(*th));
	if (!c.slots || !ct || (jobs > 1 && !th)) {
		fprintf(stderr, "%s: out of memory.\n", opt->prog);
		ret = -1;
		goto out;
	}
	for (unsigned i = 0; i <= jobs; i++)
		ct[i].c = &c;
	for (unsigned i = 0; i < jobs && jobs > 1; i++) {
		if (pthread_create(&th[i], NULL, corpus_worker, &ct[i]))
			break;
		nth++;
	}
	for (size_t k = 0; k < opt->ntraces; k++) {
		struct corpus_slot *sl = &c.slots[k % c.nslots];

		if (!nth) {
			/* One thread (or none could start): in turn. */
			corpus_decode(&ct[jobs], k);
		} else {
			cli_order_wait(&c.order, &sl->s.done);
		}
		if (corpus_print(&c, k, all, out))
			ret = 1;
		cli_order_printed(&c.order, k + 1, &sl->s.done);
	}
	for (unsigned i = 0; i < nth; i++)
		pthread_join(th[i], NULL);
	/* (Saturating sums: in any order, the same.) */
	for (unsigned i = 0; i <= jobs; i++)
		if (ct[i].sum)
			cli_map_add(all->map, ct[i].sum);
	cli_out_printf(out, "# all traces\n");
	if (finish(fl, all, out) < 0)
		ret = -1;
out:
	for (unsigned i = 0; ct && i <= jobs; i++)
		corpus_thread_fini(&ct[i]);
	free(ct);
	free(th);
	free(c.slots);
	cli_order_fini(&c.order);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Command line                                                        */
/* ------------------------------------------------------------------ */

static const char common_help[] =
	"image:\n"
	"  --raw FILE[:FROM[-TO]]:BASE   map (part of) FILE at address BASE\n"
	"  --elf FILE[:BIAS]             map the loadable segments of an ELF file,\n"
	"                                each at its address + BIAS; symbols\n"
	"trace:\n"
	"  TRACE[:FROM[-TO]]             the Intel PT trace (or a range of it)\n"
	"  FILE.data                     or a perf.data of `perf record -e intel_pt//`:\n"
	"                                each AUX stream is decoded with the code\n"
	"                                its sideband says was mapped, after a line\n"
	"                                '# stream idx N: ...'; lost data prints as\n"
	"                                [warning: ...] where it happened\n"
	"  --symfs DIR                   perf.data: recorded paths are below DIR\n"
	"  --vdso FILE                   perf.data: a copy of the vdso\n"
	"  --buildid-dir DIR             perf.data: a build-id cache with the\n"
	"                                files gone or rebuilt since (default\n"
	"                                ~/.debug, where perf record puts them)\n"
	"  --cpu none|auto|F/M[/S]       decode for this cpu's errata\n"
	"  --mtc-freq N, --nom-freq N, --cpuid-0x15.eax N, --cpuid-0x15.ebx N\n"
	"                                timing parameters, as for ptxed\n"
	"  --no-cyc                      time without CYC packets, as ptdump\n"
	"                                --no-cyc (a perf.data says so itself)\n"
	"  --filter:addrN_cfg/_a/_b V    IP filter configuration, as for ptxed\n";

void help_flow(void)
{
	printf("usage: hwt flow [--insn|--blocks|--branches|--stat] [options] "
	       "TRACE\n\n"
	       "The program flow of an Intel PT trace.\n"
	       "  --insn          one line per instruction (default):\n"
	       "                  [TSC  ]IP  [SYMBOL+0xOFF]  [DISASSEMBLY]\n"
	       "  --blocks        one line per block: IP END_IP NINSN  "
	       "[SYMBOL+0xOFF]\n"
	       "  --branches      one line per taken branch: 0xFROM 0xTO\n"
	       "                  (instructions' branches; interrupts and\n"
	       "                  tracing gaps are not branches)\n"
	       "  --stat          counts only\n"
	       "  --disasm        disassemble (Zydis, Intel syntax)\n"
	       "  --time          print the estimated TSC per block\n"
	       "  --no-sym        no symbol lookup\n"
	       "  --no-events     do not print events ([enabled], ...)\n"
	       "  --by-stream     several CPUs' streams (perf record -a):\n"
	       "                  one after the other, not in time order\n"
	       "  -j N            decode on N threads (same output)\n"
	       "  -v              say how -j cut the trace (stderr)\n"
	       "\n%s\n"
	       "A perf.data of several CPUs' streams prints in time order\n"
	       "(as perf script): the streams' headers, then the runs of\n"
	       "lines of each CPU's threads by their time (equal times by\n"
	       "CPU), each after [pid P tid T cpu C] where the CPU or\n"
	       "thread changes (the text held in a file under $TMPDIR).\n"
	       "Events print as ptxed prints them. Errors print as\n"
	       "[error at offset 0xOFF, ip 0xIP: MESSAGE]; decoding resumes at\n"
	       "the next PSB. With -j, the trace is cut at PSBs (a perf.data\n"
	       "stream too: each thread follows its processes), each\n"
	       "segment starting with the time one thread has there. With\n"
	       "--time an instruction has the time after the trace up to it\n"
	       "(a branch's own TNT bit or TIP included). A branch whose\n"
	       "target is only known after a PSB is resolved at the PSB's IP,\n"
	       "in all modes.\n",
	       common_help);
}

void help_calls(void)
{
	printf("usage: hwt calls [options] TRACE\n\n"
	       "Function-call history: one line per function segment,\n"
	       "  N<TAB>[indent]NAME<TAB>inst FIRST,LAST[<TAB>tsc TSC]\n"
	       "indented two spaces per call level (the lowest level seen is\n"
	       "0; at most 200 levels). A segment starts where the function\n"
	       "changes (after a call or a return, at a jump into another\n"
	       "symbol, where code runs into the next symbol), after an\n"
	       "interrupt or a gap in the trace, and where the cpu goes to\n"
	       "another thread (cpu-mode perf.data): each thread has a stack\n"
	       "of its own, and its lines follow a line [pid P tid T]\n"
	       "where the thread changes. The streams of several cpus\n"
	       "(perf record -a) are one history: the runs of threads on\n"
	       "cpus in time order, each after a line [pid P tid T cpu C],\n"
	       "a thread's stack going on on the cpu it moved to.\n"
	       "Instructions are numbered from 1.\n"
	       "Errors and notes of lost data print between the lines, where\n"
	       "they happened. Lines are held to the end, beyond 64 Ki in a\n"
	       "file under $TMPDIR. -j N prints what -j1 prints.\n"
	       "  --time          the TSC at the segment's start\n"
	       "  --stream        print the lines as they come, indented\n"
	       "                  from the first line's level (a return\n"
	       "                  above it stays at 0, as in perf script's\n"
	       "                  call trace); nothing held to the end\n"
	       "                  (each cpu's stream a history of its own)\n"
	       "  --folded        the lines as folded stacks, a flame\n"
	       "                  graph's input (flamegraph.pl, inferno,\n"
	       "                  speedscope): CALLER;...;FUNCTION COUNT,\n"
	       "                  each function's own instructions at that\n"
	       "                  stack of callers ([unknown]: a caller the\n"
	       "                  trace started in), \"pid P tid T;\" first\n"
	       "                  with several threads; all else on stderr\n"
	       "  --timeline      the calls as a timeline: Chrome trace-\n"
	       "                  event JSON (Perfetto's UI, chrome://\n"
	       "                  tracing), an event per call of a function,\n"
	       "                  per thread; all else on stderr\n"
	       "  --clock insn|time  --timeline's clock: instructions (one a\n"
	       "                  nanosecond, default), or the TSC (perf's\n"
	       "                  time, as fine as the trace's timing)\n"
	       "\n%s\n", common_help);
}

void help_coverage(void)
{
	printf("usage: hwt coverage [-o FILE] [options] TRACE...\n\n"
	       "AFL-style edge coverage: a 64 KiB bitmap of (from, to) block\n"
	       "transitions, index = hash(to) ^ (hash(from) >> 1), counters\n"
	       "saturating at 255. Blocks end at every branch. Prints the\n"
	       "number of edges (non-zero cells) and the FNV-1a 64 hash of the\n"
	       "bitmap. No edge crosses a PSB, an enable, a disable or an\n"
	       "overflow, so -j N gives the same bitmap as -j1. A perf.data\n"
	       "stream's lost-data warnings print before its counts.\n"
	       "Several raw traces of one program (a fuzzer's runs, a corpus):\n"
	       "each is decoded on its own, as if alone, and printed after a\n"
	       "line '# trace NAME', then their union after '# all traces'\n"
	       "(-o writes the union's bitmap); one decoder per thread decodes\n"
	       "them all, its block cache warm after the first, and -j N\n"
	       "decodes N traces at a time.\n"
	       "  -o FILE         write the bitmap (65536 bytes) to FILE\n"
	       "  -j N            decode on N threads\n"
	       "  -v              say how -j cut the trace (stderr)\n"
	       "\n%s", common_help);
}

static int get_num(const char *prog, const char *opt, const char *arg,
		   uint64_t max, uint64_t *v)
{
	if (!arg || cli_parse_u64(arg, v) || *v > max) {
		fprintf(stderr, "%s: %s: bad or missing argument%s%s.\n", prog,
			opt, arg ? ": " : "", arg ? arg : "");
		return -1;
	}
	return 0;
}

/* The options; @images gets the index in @argv of each --raw and --elf. */
static int parse_opts(int argc, char **argv, struct flow_options *opt,
		      int *images, int *nimages_out, void (*help)(void))
{
	const char *prog = argv[0];
	struct hwt_qry_config *q = &opt->config.qry;
	uint64_t v;
	int nimages = 0;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *next = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			help();
			return 1;
		} else if (a[0] != '-' || !strcmp(a, "-")) {
			if (opt->trace && opt->mode != MODE_COVERAGE) {
				fprintf(stderr, "%s: more than one trace: %s.\n",
					prog, a);
				return -1;
			}
			if (!opt->trace)
				opt->trace = a;
			opt->traces[opt->ntraces++] = a;
		} else if (!strcmp(a, "--raw") || !strcmp(a, "--elf")) {
			if (!next) {
				fprintf(stderr, "%s: %s: missing argument.\n",
					prog, a);
				return -1;
			}
			images[nimages++] = i;
			i++;
		} else if (opt->mode <= MODE_STAT &&
			   (!strcmp(a, "--insn") || !strcmp(a, "--blocks") ||
			    !strcmp(a, "--branches") || !strcmp(a, "--stat"))) {
			opt->mode = a[2] == 'i' ? MODE_INSN :
				    a[3] == 'l' ? MODE_BLOCKS :
				    a[3] == 'r' ? MODE_BRANCHES : MODE_STAT;
		} else if (opt->mode == MODE_INSN && !strcmp(a, "--disasm")) {
			opt->disasm = 1;
		} else if (!strcmp(a, "--time")) {
			opt->time = 1;
		} else if (opt->mode == MODE_CALLS &&
			   !strcmp(a, "--stream")) {
			opt->stream = 1;
		} else if (opt->mode == MODE_CALLS &&
			   !strcmp(a, "--folded")) {
			opt->folded = 1;
		} else if (opt->mode == MODE_CALLS &&
			   !strcmp(a, "--timeline")) {
			opt->timeline = 1;
		} else if (opt->mode == MODE_CALLS &&
			   !strcmp(a, "--clock")) {
			if (!next || (strcmp(next, "insn") &&
				      strcmp(next, "time"))) {
				fprintf(stderr, "%s: --clock: insn or time.\n",
					prog);
				return -1;
			}
			opt->time_clock = next[0] == 't';
			i++;
		} else if (opt->mode <= MODE_STAT &&
			   !strcmp(a, "--by-stream")) {
			opt->by_stream = 1;
		} else if (!strcmp(a, "--no-sym")) {
			opt->no_sym = 1;
		} else if (!strcmp(a, "--no-events")) {
			opt->events = 0;
		} else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
			opt->verbose = 1;
		} else if (!strcmp(a, "-j") || !strncmp(a, "-j", 2)) {
			const char *n = a[2] ? a + 2 : next;

			if (!n || cli_parse_u64(n, &v) || !v || v > 1024) {
				fprintf(stderr, "%s: -j: want 1..1024 threads.\n",
					prog);
				return -1;
			}
			opt->jobs = (unsigned)v;
			if (!a[2])
				i++;
		} else if (opt->mode == MODE_COVERAGE && !strcmp(a, "-o")) {
			if (!next) {
				fprintf(stderr, "%s: -o: missing argument.\n",
					prog);
				return -1;
			}
			opt->bitmap_out = next;
			i++;
		} else if (!strcmp(a, "--symfs") || !strcmp(a, "--vdso") ||
			   !strcmp(a, "--buildid-dir")) {
			if (!next) {
				fprintf(stderr, "%s: %s: missing argument.\n",
					prog, a);
				return -1;
			}
			*(a[2] == 's' ? &opt->files.symfs :
			  a[2] == 'v' ? &opt->files.vdso :
					&opt->files.buildid_dir) = next;
			i++;
		} else if (!strcmp(a, "--cpu")) {
			if (cli_ipt_parse_cpu(prog, next, &q->cpu))
				return -1;
			i++;
		} else if (!strcmp(a, "--mtc-freq") ||
			   !strcmp(a, "--nom-freq")) {
			if (get_num(prog, a, next, UINT8_MAX, &v))
				return -1;
			if (a[2] == 'm')
				q->time.mtc_freq = (uint8_t)v;
			else
				q->time.nom_freq = (uint8_t)v;
			i++;
		} else if (!strcmp(a, "--no-cyc")) {
			q->flags |= HWT_QRY_NO_CYC;
		} else if (!strcmp(a, "--cpuid-0x15.eax") ||
			   !strcmp(a, "--cpuid-0x15.ebx")) {
			if (get_num(prog, a, next, UINT32_MAX, &v))
				return -1;
			if (a[14] == 'a')
				q->time.cpuid_0x15_eax = (uint32_t)v;
			else
				q->time.cpuid_0x15_ebx = (uint32_t)v;
			i++;
		} else if (!strncmp(a, "--filter:addr", 13) && a[13] >= '0' &&
			   a[13] <= '3' && a[14] == '_') {
			unsigned n = (unsigned)(a[13] - '0');

			if (get_num(prog, a, next,
				    !strcmp(a + 15, "cfg") ? 15 : UINT64_MAX,
				    &v))
				return -1;
			if (!strcmp(a + 15, "cfg"))
				q->addr_filter[n].cfg = (uint8_t)v;
			else if (!strcmp(a + 15, "a"))
				q->addr_filter[n].a = v;
			else if (!strcmp(a + 15, "b"))
				q->addr_filter[n].b = v;
			else
				goto unknown;
			i++;
		} else {
unknown:
			fprintf(stderr, "%s: unknown option: %s (see 'hwt help "
				"%s').\n", prog, a, prog);
			return -1;
		}
	}
	if (!opt->trace) {
		fprintf(stderr, "%s: no trace file given (see 'hwt help %s').\n",
			prog, prog);
		return -1;
	}
	if ((opt->folded || opt->timeline) && opt->stream) {
		fprintf(stderr, "%s: --%s takes the whole history; not with "
			"--stream.\n", prog,
			opt->folded ? "folded" : "timeline");
		return -1;
	}
	if (opt->folded && opt->timeline) {
		fprintf(stderr, "%s: --folded or --timeline, not both.\n",
			prog);
		return -1;
	}
	if (opt->time_clock && !opt->timeline) {
		fprintf(stderr, "%s: --clock is --timeline's.\n", prog);
		return -1;
	}
	/* (The lines' times, for the timeline.) */
	if (opt->time_clock)
		opt->time = 1;
	for (size_t k = 0; opt->ntraces > 1 && k < opt->ntraces; k++) {
		if (cli_pd_is_perfdata(opt->traces[k])) {
			fprintf(stderr, "%s: %s: a perf.data file is decoded "
				"alone (its streams are several traces).\n",
				prog, opt->traces[k]);
			return -1;
		}
	}
	if (cli_pd_is_perfdata(opt->trace)) {
		if (nimages)
			fprintf(stderr, "%s: warning: --raw and --elf are "
				"ignored with perf.data: its sideband says "
				"what was mapped.\n", prog);
	} else if (!nimages) {
		fprintf(stderr, "%s: warning: no --raw or --elf image: every "
			"instruction will be missing.\n", prog);
	}
	*nimages_out = nimages;
	return 0;
}

/* Are symbols never looked up? (Calls find functions by name.) */
static int symbols_unused(const struct flow_options *opt)
{
	return opt->mode == MODE_STAT || opt->mode == MODE_COVERAGE ||
	       opt->mode == MODE_BRANCHES ||
	       (opt->no_sym && opt->mode != MODE_CALLS);
}

/*
 * The options, then the images (in their order): only then is the mode
 * known, which says whether reading the files' symbols is worth its time.
 */
static int parse_args(int argc, char **argv, struct flow_options *opt,
		      struct hwt_image *image, void (*help)(void))
{
	int *images = calloc((size_t)argc, sizeof(*images));
	int nimages = 0, ret;

	opt->traces = calloc((size_t)argc, sizeof(*opt->traces));
	if (!images || !opt->traces) {
		fprintf(stderr, "%s: out of memory.\n", argv[0]);
		free(images);
		return -1;
	}
	ret = parse_opts(argc, argv, opt, images, &nimages, help);
	if (!ret && symbols_unused(opt))
		hwt_image_set_symbols(image, 0);
	for (int k = 0; !ret && k < nimages; k++) {
		const char *a = argv[images[k]], *next = argv[images[k] + 1];

		if (a[2] == 'r' ? cli_image_raw(image, next, argv[0]) :
				  cli_image_elf(image, next, argv[0], 0))
			ret = -1;
	}
	free(images);
	return ret;
}

/* All @pd's streams are CPUs'. */
static int on_cpus(struct cli_pd *pd)
{
	size_t n = cli_pd_nstreams(pd);
	uint32_t cpu;

	for (size_t i = 0; i < n; i++)
		if (cli_pd_stream_cpu(pd, i, &cpu) < 0)
			return 0;
	return 1;
}

/*
 * hwt calls on a perf.data of CPUs' streams (perf record -a): one history
 * of them all (calls.h), so that a thread's calls go on where it moves to
 * another CPU. Not with --stream, which prints before the later streams
 * are decoded.
 */
static int merge_cpus(struct cli_pd *pd, const struct flow_options *opt)
{
	if (opt->mode != MODE_CALLS || opt->stream || cli_pd_nstreams(pd) < 2)
		return 0;
	return on_cpus(pd);
}

/*
 * hwt flow's lines on a perf.data of CPUs' streams: in time order (as
 * perf script prints them), unless --by-stream. Counts are counts.
 */
static int order_cpus(struct cli_pd *pd, const struct flow_options *opt)
{
	if ((opt->mode != MODE_INSN && opt->mode != MODE_BLOCKS &&
	     opt->mode != MODE_BRANCHES) || opt->by_stream ||
	    cli_pd_nstreams(pd) < 2 || !cli_pd_has_time(pd))
		return 0;
	return on_cpus(pd);
}

/*
 * The CPUs' streams decoded into the merge's file, then printed from it
 * in time order. Returns the exit code.
 */
static int flow_by_time(struct flow *fl, struct cli_pd *pd, struct totals *t,
			struct cli_out *out)
{
	struct cli_out text;
	int ret = 1;

	fl->all = t;
	fl->by_time = cli_merge_new();
	if (!fl->by_time)
		return 1;
	if (cli_out_init(&text, cli_merge_file(fl->by_time)) < 0) {
		fprintf(stderr, "%s: out of memory.\n", fl->opt->prog);
		goto out;
	}
	if (cli_pd_flow(pd, fl, &text) == 0) {
		cli_out_flush(&text);
		if (text.failed)
			fprintf(stderr, "%s: cannot write the temporary file: "
				"%s\n", fl->opt->prog, strerror(errno));
		else if (cli_merge_print(fl->by_time, out) == 0 &&
			 finish(fl, t, out) == 0)
			ret = 0;
	}
	cli_out_fini(&text);
out:
	cli_merge_delete(fl->by_time);
	fl->by_time = NULL;
	return ret;
}

/* calls --folded: the stacks, to stdout. */
static int print_folded(struct calls_tree *tree)
{
	struct cli_out fo;
	int ret;

	if (cli_out_init(&fo, stdout) < 0)
		return -1;
	ret = calls_tree_print_folded(tree, &fo);
	cli_out_fini(&fo);
	return fo.failed ? -1 : ret;
}

static int flow_main(int argc, char **argv, enum flow_mode mode,
		     void (*help)(void))
{
	const char *prog = argv[0];
	struct flow_options opt;
	struct cli_input in;
	struct cli_out out, jout;
	struct totals t;
	struct flow fl;
	struct cli_pd *pd = NULL;
	uint32_t errata = 0;
	int ret;

	memset(&in, 0, sizeof(in));
	memset(&out, 0, sizeof(out));
	memset(&jout, 0, sizeof(jout));
	memset(&opt, 0, sizeof(opt));
	memset(&fl, 0, sizeof(fl));
	fl.walk_each = cli_env_on("HWT_WALK_EACH");
	memset(&t, 0, sizeof(t));
	hwt_blk_config_init(&opt.config);
	opt.prog = prog;
	opt.mode = mode;
	opt.events = 1;
	opt.jobs = 1;

	fl.image = hwt_image_new();
	if (!fl.image) {
		fprintf(stderr, "%s: out of memory.\n", prog);
		return 1;
	}
	ret = parse_args(argc, argv, &opt, fl.image, help);
	if (ret) {
		hwt_image_delete(fl.image);
		free(opt.traces);
		return ret > 0 ? 0 : 1;
	}
	if (opt.mode == MODE_COVERAGE || opt.mode == MODE_BRANCHES ||
	    opt.mode == MODE_STAT || opt.mode == MODE_CALLS)
		opt.events = 0;
	/* Only a block's last instruction branches: no walk of the others. */
	if (opt.mode == MODE_COVERAGE || opt.mode == MODE_CALLS)
		opt.config.flags |= HWT_BLK_END_ON_CALL | HWT_BLK_END_ON_JUMP;
	/* As the processor (and perf): what -j segments start with. */
	opt.config.flags |= HWT_BLK_PSB_CLEARS_STACK;
	if (cli_pd_is_perfdata(opt.trace)) {
		opt.files.no_symbols = symbols_unused(&opt);
		if (cli_pd_open_files(&pd, opt.trace, prog, &opt.files) < 0) {
			hwt_image_delete(fl.image);
			free(opt.traces);
			return 1;
		}
		cli_pd_qry_config(pd, &opt.config.qry);
	}
	if (opt.config.qry.cpu.vendor &&
	    hwt_pt_cpu_errata(&opt.config.qry.cpu, &errata) < 0)
		fprintf(stderr, "%s: warning: no errata known for this cpu.\n",
			prog);
	opt.config.qry.errata = errata;
	opt.config.qry.time.errata = errata;

	if (!pd && opt.ntraces < 2 &&
	    cli_input_open(&in, opt.trace, prog) < 0) {
		hwt_image_delete(fl.image);
		free(opt.traces);
		return 1;
	}
	fl.opt = &opt;
	fl.trace = in.data;
	fl.size = in.size;
	ret = 1;
	/* --folded, --timeline: those on stdout, all else (headers, notes,
	 * errors) on stderr. */
	if (cli_out_init(&out, opt.folded || opt.timeline ? stderr : stdout) <
		    0 ||
	    cli_out_init(&jout, stdout) < 0)
		goto out;
	if (opt.folded && !(fl.tree = calls_tree_new())) {
		fprintf(stderr, "%s: out of memory.\n", prog);
		goto out;
	}
	if (opt.timeline) {
		struct hwt_pd_time_conv tc;
		int have_tc = pd && cli_pd_time_conv(pd, &tc) == 0;

		fl.timeline = calls_timeline_new(&jout, opt.time_clock,
						 have_tc ? &tc : NULL);
		if (!fl.timeline) {
			fprintf(stderr, "%s: out of memory.\n", prog);
			goto out;
		}
	}
	if (opt.disasm) {
		fl.dis = cli_disasm_new(0);
		if (!fl.dis) {
			fprintf(stderr, "%s: cannot set up the disassembler.\n",
				prog);
			goto out;
		}
	}
	if (opt.mode == MODE_CALLS) {
		fl.names = calls_names_new();
		if (!fl.names) {
			fprintf(stderr, "%s: out of memory.\n", prog);
			goto out;
		}
	}
	if (totals_init(&fl, &t, &out) < 0)
		goto out;
	/* Symbols may be loaded lazily: not on several threads at once. */
	{
		const char *name;
		uint64_t off;

		(void)hwt_image_symbol(fl.image, 0, &name, &off);
	}
	if (opt.ntraces > 1) {
		ret = run_traces(&fl, &t, &out) ? 1 : 0;
		goto out;
	}
	if (pd && order_cpus(pd, &opt)) {
		ret = flow_by_time(&fl, pd, &t, &out);
	} else if (pd) {
		fl.all = &t;
		fl.merge = merge_cpus(pd, &opt) ? calls_merge_new() : NULL;
		if (cli_pd_flow(pd, &fl, &out) == 0 &&
		    (!fl.merge || calls_merge_replay(fl.merge, t.calls) == 0)) {
			if (opt.mode == MODE_STAT || opt.mode == MODE_COVERAGE)
				cli_out_printf(&out, "# all streams\n");
			if (fl.merge)
				cli_out_printf(&out, "# all streams, each "
					       "thread's calls across cpus\n");
			if (finish(&fl, &t, &out) == 0)
				ret = 0;
		}
	} else {
		struct span whole = { 1, 0, 0, fl.size, NULL };

		if (run(&fl, &whole, &t, &out) >= 0 &&
		    finish(&fl, &t, &out) == 0)
			ret = 0;
	}
	if (not_a_trace(&t, prog, opt.trace))
		ret = 1;
	if (!ret && fl.tree)
		ret = print_folded(fl.tree) < 0;
	if (!ret && fl.timeline)
		ret = calls_timeline_finish(fl.timeline) < 0;

out:
	cli_out_fini(&out);
	cli_out_fini(&jout);
	if (out.failed || jout.failed || fflush(stdout)) {
		fprintf(stderr, "%s: error writing output: %s\n", prog,
			strerror(errno));
		ret = 1;
	}
	free(t.map);
	calls_hist_delete(t.calls);
	calls_merge_delete(fl.merge);
	calls_tree_delete(fl.tree);
	calls_timeline_delete(fl.timeline);
	calls_names_delete(fl.names);
	cli_disasm_delete(fl.dis);
	hwt_image_delete(fl.image);
	cli_input_close(&in);
	cli_pd_close(pd);
	free(opt.traces);
	return ret;
}

int cmd_flow(int argc, char **argv)
{
	return flow_main(argc, argv, MODE_INSN, help_flow);
}

int cmd_calls(int argc, char **argv)
{
	return flow_main(argc, argv, MODE_CALLS, help_calls);
}

int cmd_coverage(int argc, char **argv)
{
	return flow_main(argc, argv, MODE_COVERAGE, help_coverage);
}

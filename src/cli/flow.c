/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hwt flow, calls, coverage: one segment of a trace decoded into what it
 * prints (instruction, block and branch lines, events, errors, calls'
 * segments) or counts (the coverage map, --stat); the design of the
 * three commands is in flow.h.
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
#include "common/grow.h"

/* ------------------------------------------------------------------ */
/* Output helpers                                                      */
/* ------------------------------------------------------------------ */

/* Long C++ names are cut; the address is exact anyway. */
#define SYM_MAX_LEN 200

/* Does way @k of @c hold @ip of @img's image? */
static inline int sym_hit(const struct sym_cache *c, unsigned k,
			  const struct cli_image_key *img, uint64_t ip)
{
	return ip >= c->lo[k] && ip < c->hi[k] && c->w[k].id == img->id &&
	       c->w[k].gen == img->gen;
}

/* Ways @a and @b of @c trade places. */
static void sym_swap(struct sym_cache *c, unsigned a, unsigned b)
{
	struct sym_way w = c->w[a];
	uint64_t lo = c->lo[a], hi = c->hi[a];

	c->w[a] = c->w[b];
	c->lo[a] = c->lo[b];
	c->hi[a] = c->hi[b];
	c->w[b] = w;
	c->lo[b] = lo;
	c->hi[b] = hi;
}

/*
 * The symbol at @ip in @img's image where the way in use does not have
 * it (seg_symbol()): another way's, or looked up into the next victim;
 * that way then trades places with the first. 0, or an error.
 */
static __attribute__((noinline)) int
sym_miss(struct sym_cache *c, const struct cli_image_key *img, uint64_t ip)
{
	uint64_t o = 0, start = ip, end = 0;
	const char *n = NULL;
	unsigned k;
	int err;

	for (k = 1; k < SYM_WAYS; k++)
		if (sym_hit(c, k, img, ip))
			break;
	if (k == SYM_WAYS) {
		err = hwt_image_symbol_range(img->image, ip, &n, &o, &start,
					     &end);
		if (err < 0 && err != -HWT_ERR_NOMAP)
			return err;
		k = 1 + c->victim;
		c->victim = (c->victim + 1) % (SYM_WAYS - 1);
		c->lo[k] = start;
		c->hi[k] = end;
		c->w[k] = (struct sym_way){
			.id = img->id, .gen = img->gen, .base = ip - o,
			.name = n, .len = n ? strnlen(n, SYM_MAX_LEN) : 0,
			.found = err >= 0,
		};
	}
	sym_swap(c, 0, k);
	return 0;
}

/*
 * The symbol at @ip in @img's image, looked up once for a walk through a
 * function (the range where the answer holds; a binary search per
 * instruction was a third of flow --insn's time) and kept with the ones
 * before (struct sym_cache), with the image's id and generation read once
 * a block (two calls an instruction were 10% of it).
 */
static inline int seg_symbol(struct sym_cache *c,
			     const struct cli_image_key *img, uint64_t ip,
			     const char **name, size_t *len, uint64_t *off)
{
	if (!sym_hit(c, 0, img, ip) && sym_miss(c, img, ip) < 0)
		return -HWT_ERR_NOMAP;
	if (!c->w[0].found)
		return -HWT_ERR_NOMAP;
	*name = c->w[0].name;
	*len = c->w[0].len;
	*off = ip - c->w[0].base;
	return 0;
}

static char *put_sym(const struct flow *fl, struct seg *s,
		     const struct cli_image_key *img, char *p, uint64_t ip)
{
	const char *name = NULL;
	uint64_t off = 0;
	size_t len = 0;

	if (fl->opt->no_sym ||
	    seg_symbol(&s->sym, img, ip, &name, &len, &off) < 0)
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
static void seg_note(struct flow *fl, struct seg *s, int on);

static void print_error(struct flow *fl, struct seg *s,
			struct hwt_blk_decoder *dec, uint64_t ip, int err)
{
	uint64_t pos = 0;

	flush_block(fl, s);
	s->nerrors++;
	seg_note(fl, s, 1);
	if (hwt_blk_get_offset(dec, &pos) < 0)
		cli_out_printf(&s->out, "[error at offset ?, ip 0x%" PRIx64
			       ": %s]\n", ip, hwt_errstr(err));
	else
		cli_out_printf(&s->out, "[error at offset 0x%" PRIx64
			       ", ip 0x%" PRIx64 ": %s]\n", fl->base + pos,
			       ip, hwt_errstr(err));
	seg_note(fl, s, 0);
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

/* A gap in the flow: the pending branch (and conditional jump that
 * coverage counts) never learn where they went. */
static void pend_cut(struct seg *s)
{
	s->pend.valid = 0;
	if (s->cover)
		hwt_an_cover_cut(s->cover);
}

/* The branch pending (@pd, valid) went to @next: was it taken? */
static inline int pend_taken(const struct pending *pd, uint64_t next)
{
	if (pd->iclass == HWT_IC_COND_JUMP)
		return next != pd->fallthrough;
	return hwt_insn_class_branches(pd->iclass);
}

/* The previous block's last instruction went to @next: was it taken? */
static void resolve(struct seg *s, uint64_t next, int print)
{
	struct pending *pd = &s->pend;

	/* (Coverage: its blocks told the cover the rest. Only there: this
	 * is every block's path in the line modes.) */
	if (s->cover)
		hwt_an_cover_goto(s->cover, next);
	if (!pd->valid)
		return;
	pd->valid = 0;
	if (!pend_taken(pd, next))
		return;
	if (print)
		branch_line(s, pd->ip, next);
	else
		s->nbranches++;
}

/* ------------------------------------------------------------------ */
/* Blocks                                                              */
/* ------------------------------------------------------------------ */

/* A line's most: TSC, '?', IP, symbol (200) and offset, source line (200
 * and its number), disassembly (255). */
#define LINE_MAX_LEN 1024

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

/* Each block's times (struct cli_blk_time): printed or choosing lines
 * (@want_times), or ordering the lines of CPUs' streams. */
static int block_times(const struct flow *fl)
{
	return fl->want_times || fl->by_time;
}

/*
 * CPUs' streams in time order: the time and thread of what @s prints from
 * here on (the last mark's, if nothing was printed since).
 */
static void seg_mark(struct seg *s)
{
	uint64_t at = cli_out_pos(&s->out);
	struct cli_mark now = { at, s->mkey, s->task, s->have_mkey,
				s->have_task, s->note };

	/* Printing as it goes: the output's place, the merge's now. */
	if (s->direct) {
		cli_merge_mark(s->direct, at, &now);
		return;
	}
	if (s->nmarks && s->marks[s->nmarks - 1].at == at) {
		s->marks[s->nmarks - 1] = now;
		return;
	}
	if (hwt_grow((void **)&s->marks, &s->markcap, s->nmarks + 1,
		     sizeof(*s->marks)) < 0) {
		/* Output we cannot order is output we would lose: stop. */
		fprintf(stderr, "hwt: out of memory for output\n");
		exit(1);
	}
	s->marks[s->nmarks++] = now;
}

/*
 * ... where what follows is (@on), or is no longer, an error or a
 * lost-data note: whose trace it was is not known, and lost data is
 * never silent, so it prints whatever threads and times are chosen.
 */
static void seg_note(struct flow *fl, struct seg *s, int on)
{
	if (!fl->by_time || s->note == on)
		return;
	s->note = (uint8_t)on;
	seg_mark(s);
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

/* The line of @insn, in @img's image (--disasm: from its bytes where
 * HWT_WALK_EACH walked it, else by the memo of @img's). */
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
		if (have_time && opt->perf_time)
			p = cli_put_perf_time(p, hwt_pd_tsc_to_perf_time(&fl->tc,
									 tsc));
		else if (have_time)
			p = cli_put_hex16(p, tsc);
		else
			p = cli_put_str(p, opt->perf_time ? "?" :
					   "????????????????");
		*p++ = ' ';
		*p++ = ' ';
	}
	if (insn->speculative) {
		*p++ = '?';
		*p++ = ' ';
	}
	p = cli_put_hex16(p, insn->ip);
	p = put_sym(fl, s, img, p, insn->ip);
	if (opt->srcline &&
	    (s->srcl || (s->srcl = cli_srcline_new(opt->lines_debug_dir))))
		p = cli_put_srcline(s->srcl, img, insn->ip, p);
	if (opt->disasm) {
		const char *text = NULL;
		size_t tlen = 0;

		if (s->dmemo || (s->dmemo = cli_disasm_memo_new()))
			text = disasm_text(fl, s, insn,
					   fl->walk_each ? NULL : img, &tlen);
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
	struct cli_image_key img = cli_image_key(s->block_image);
	char *p = cli_out_reserve(&s->out, LINE_MAX_LEN);

	if (b->speculative) {
		*p++ = '?';
		*p++ = ' ';
	}
	p = cli_put_hex16(p, b->ip);
	*p++ = ' ';
	p = cli_put_hex16(p, b->end_ip);
	p += sprintf(p, " %5" PRIu32, b->ninsn);
	p = put_sym(fl, s, &img, p, b->ip);
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

/* The instruction at @ip (of @size bytes, class @iclass) ended a block:
 * the branch pending, which the next block resolves. */
static void pend_last(struct seg *s, uint64_t ip, uint8_t size,
		      uint8_t iclass)
{
	s->pend.ip = ip;
	s->pend.fallthrough = ip + size;
	s->pend.iclass = iclass;
	s->pend.valid = 1;
}

/*
 * --branches without times, its blocks ending at every branch: blocks
 * @b[0, @n) of a batch (@status the batch's, the last block's) as
 * do_block() and walk_branches() take them, up to the first that needs a
 * walk (truncated, or cut short by the cache) or @end's: returns how many
 * it took. The pending branch stays in registers from block to block, and
 * the counts are written once (per block, do_block()'s way was a quarter
 * of hwt flow --branches' instructions).
 */
static size_t take_branches(struct seg *s, const struct hwt_block *b,
			    size_t n, const struct hwt_blk_end *end,
			    int status)
{
	struct pending pd = s->pend;
	const struct hwt_blk_end stop = *end;
	uint64_t ninsn = 0, nblocks = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		if (hwt_blk_end_block(&stop, &b[i]))
			break;
		if (!b[i].ninsn) {
			/* (do_block() sees the last only with its status.) */
			nblocks += i + 1 < n || status >= 0;
			continue;
		}
		if (!hwt_block_tells_last(&b[i]))
			break;
		nblocks++;
		if (pd.valid && pend_taken(&pd, b[i].ip))
			branch_line(s, pd.ip, b[i].ip);
		ninsn += b[i].ninsn;
		pd.ip = b[i].end_ip;
		pd.fallthrough = pd.ip + b[i].size;
		pd.iclass = b[i].iclass;
		pd.valid = 1;
	}
	s->pend = pd;
	s->ninsn += ninsn;
	s->nblocks += nblocks;
	return i;
}

/* @b walked to its end: its last instruction is the branch pending. */
static void pend_walked(struct seg *s, const struct hwt_block *b,
			const struct hwt_an_walk *w)
{
	pend_last(s, b->end_ip, w->last_size, w->last_iclass);
}

/* Do the blocks end at every branch (hwt_blk_config's END_ON_CALL and
 * END_ON_JUMP), so that only a block's last instruction branches? */
static int ends_at_branches(const struct flow_options *opt)
{
	const uint32_t ends = HWT_BLK_END_ON_CALL | HWT_BLK_END_ON_JUMP;

	return (opt->config.flags & ends) == ends;
}

/* --branches: the branches inside the block, from its walk. Blocks that
 * end at every branch (hwt_blk_config's END_ON_CALL and END_ON_JUMP) have
 * none, and their last instruction is in the block (only the cache's
 * HWT_IC_UNKNOWN, a block cut short, is walked for its class): no walk
 * (its lookup, a cache miss on a large trace). */
static int walk_branches(struct flow *fl, struct seg *s,
			 const struct hwt_block *b)
{
	struct hwt_an_walk w;
	int err;

	if (ends_at_branches(fl->opt) && hwt_block_tells_last(b)) {
		s->ninsn += b->ninsn;
		pend_last(s, b->end_ip, b->size, b->iclass);
		return 0;
	}
	err = seg_walk(s, b, &w);

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
/*
 * Lines chosen by time: would every instruction line of a block with
 * times @t be before every window (its time, as insn_line() marks it, the
 * greatest of the segment's so far and the block's)? Then none is made:
 * the marks of its times are (seg_time()), so the lines after have the
 * times they would have. Not before the segment's first time: lines
 * without one go with the stream's first (the merge's advance()).
 */
static int skipped(const struct flow *fl, struct seg *s,
		   const struct cli_blk_time *t)
{
	uint64_t key = s->mkey;

	if (!s->have_mkey)
		return 0;
	if (t->have_before && t->before > key)
		key = t->before;
	if (t->have_after && t->after > key)
		key = t->after;
	if (!cli_select_before(&fl->opt->sel, key,
			       fl->have_tc ? &fl->tc : NULL))
		return 0;
	if (t->have_before)
		seg_time(s, t->before);
	if (t->have_after)
		seg_time(s, t->after);
	return 1;
}

static int walk_insns(struct flow *fl, struct seg *s,
		      const struct hwt_block *b, const struct cli_blk_time *t)
{
	struct hwt_insn insn = { .ip = b->ip, .speculative = b->speculative,
				 .mode = b->mode };
	struct cli_image_key img = { 0 };
	struct hwt_an_walk w;
	uint32_t k = 0, lines;
	uint64_t tsc;
	int err = seg_walk(s, b, &w);

	lines = w.ninsn;
	if (fl->skip_before && skipped(fl, s, t))
		lines = 0;
	else
		img = cli_image_key(s->image);
	for (uint32_t i = 0; i < lines; i++) {
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
	struct cli_image_key img;
	struct hwt_insn insn;
	uint64_t ip = b->ip, next, tsc;
	int err, have_time;

	if (opt->mode == MODE_BRANCHES)
		return walk_branches(fl, s, b);
	if (opt->mode == MODE_INSN && !fl->walk_each)
		return walk_insns(fl, s, b, t);
	img = cli_image_key(s->image);

	for (uint32_t n = b->ninsn; n > 0; n--) {
		err = hwt_blk_insn_walk(s->image, b->mode, &ip, &insn);
		if (err < 0)
			return err;
		insn.speculative = b->speculative;
		if (opt->mode == MODE_INSN) {
			have_time = cli_blk_time_of(t, n == 1, &tsc);
			insn_line(fl, s, &insn, &img, have_time, tsc);
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
			pend_last(s, insn.ip, insn.size, insn.iclass);
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

/*
 * Coverage by code with the fold: the decoder counts the blocks it takes
 * (hwt_blk_tally()) but the last, @last, counted here as a block of its
 * own (its jump's outcome pending), after the outcome of the block before
 * the fold's first, at @first.
 */
static void fold_cover(struct flow *fl, struct seg *s,
		       struct hwt_blk_decoder *dec, uint64_t first,
		       const struct hwt_block *last)
{
	int err;

	hwt_an_cover_goto(s->cover, first);
	err = hwt_an_cover_block(s->cover, hwt_blk_image(dec), last);
	if (err < 0) {
		print_error(fl, s, dec, last->ip, err);
		pend_cut(s);
	}
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
		if (s->cover)
			return hwt_an_cover_block(s->cover, hwt_blk_image(dec),
						  b);
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
		int err = calls_seg_block(&s->calls, b, &t, s->out.len);

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
		pend_cut(s);
		s->fold.prev = 0;
		if (opt->mode == MODE_CALLS)
			calls_seg_event(&s->calls, ev);
	}
	/*
	 * Lost data is never silent: an overflow prints in every line mode
	 * (--branches too, which prints no other event unless asked), and
	 * as a note, shown whatever threads and times are chosen.
	 */
	if (ev->type == HWT_EV_OVERFLOW && opt->mode <= MODE_BRANCHES) {
		cli_ipt_event(text, sizeof(text), ev, 1);
		seg_note(fl, s, 1);
		cli_out_printf(&s->out, "[%s]\n", text);
		seg_note(fl, s, 0);
		return;
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
	if (!fl->hook)
		return;
	if (!s->synced) {
		s->synced = 1;
		s->first_sync = s->out.len;
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
		seg_note(fl, s, 1);
		fl->hook->notes(s->hctx, dec, fl->base, &s->out);
		seg_note(fl, s, 0);
	}
	/* (A thread's stream: its thread, for lines chosen by thread.) */
	if (fl->hook->on_cpu || fl->by_time)
		mark_task(fl, s);
}

/* How many blocks ahead a batch's walks are prefetched. */
#define WALK_AHEAD 2

/* Blocks per hwt_blk_next_batch(). */
#define BATCH 256

/* The decoders' configuration: the options', on this trace (or piece). */
struct hwt_blk_config flow_trace_config(const struct flow *fl)
{
	struct hwt_blk_config cfg = fl->opt->config;

	cfg.qry.begin = fl->trace;
	cfg.qry.end = fl->trace + fl->size;
	return cfg;
}

struct hwt_blk_decoder *flow_new_decoder(const struct flow *fl,
					 struct hwt_image *image)
{
	struct hwt_blk_config cfg = flow_trace_config(fl);

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

void flow_seg_drop_walks(struct seg *s)
{
	hwt_an_walks_delete(s->walks);
	s->walks = NULL;
	cli_disasm_memo_delete(s->dmemo);
	s->dmemo = NULL;
	cli_srcline_delete(s->srcl);
	s->srcl = NULL;
}

/*
 * Decode segment @s with @reuse, a decoder of this thread's that decoded
 * other segments before (@fresh: none yet; its block cache is as good for
 * this one), or NULL. The first segment gets a new decoder, or a fresh
 * one: it starts with a search for the first PSB from the start of the
 * trace.
 */
void flow_decode_segment(struct flow *fl, struct seg *s,
			 struct hwt_blk_decoder *reuse, int fresh)
{
	const struct flow_options *opt = fl->opt;
	struct hwt_blk_decoder *dec = s->first && !fresh ? NULL : reuse;
	struct hwt_block block, *batch = NULL;
	struct hwt_event ev;
	struct hwt_blk_end end;
	uint64_t ip, last_sync = 0;
	int status, started = 0, fold = use_fold(fl), have_sync = 0, synced;
	int at_begin = 1, ends;
	size_t n, i;

	if (!dec)
		dec = flow_new_decoder(fl, s->image);
	if (!dec) {
		cli_out_printf(&s->out, "[error: cannot allocate a decoder]\n");
		s->nerrors++;
		return;
	}

	if (opt->mode == MODE_CALLS && !s->calls.started)
		calls_seg_start(&s->calls, fl->names, s->first);
	if (s->cover) {
		/* (The thread's walks: new blocks are walked once a thread,
		 * not once a segment.) */
		hwt_an_cover_use_walks(s->cover, seg_walks(s));
		/* The fold counts for the cover what it takes. */
		if (fold && hwt_blk_tally(dec, &hwt_an_cover_tally,
					  s->cover) < 0)
			fold = 0;
	}
	/* Without it, one block at a time. */
	if (use_batch(fl))
		batch = malloc(BATCH * sizeof(*batch));
	/* --branches' blocks that need neither a walk nor times
	 * (take_branches()). */
	ends = batch && opt->mode == MODE_BRANCHES && !block_times(fl) &&
	       !s->cover && ends_at_branches(opt);

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
		pend_cut(s);
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
				uint64_t n0 = s->fold.ninsn, ip0 = 0;

				/* (Where the fold starts: only the cover asks.) */
				if (s->cover)
					(void) hwt_blk_get_ip(dec, &ip0);
				status = hwt_blk_fold_next(dec, &s->fold,
							   &block);
				if (s->cover && s->fold.ninsn != n0)
					fold_cover(fl, s, dec, ip0, &block);
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
				const struct hwt_block *b;
				int st;

				if (ends) {
					i += take_branches(s, &batch[i], n - i,
							   &end, status);
					if (i == n)
						break;
				}
				b = batch ? &batch[i] : &block;
				/* All but the last came with status 0. */
				st = i + 1 < n ? 0 : status;

				/* (Instruction lines, every block's walk:
				 * the table's miss overlaps the lines of the
				 * blocks before.) */
				if (opt->mode == MODE_INSN && !fl->walk_each &&
				    s->walks && i + WALK_AHEAD < n)
					hwt_an_walks_prefetch(
						s->walks, s->image,
						&batch[i + WALK_AHEAD]);

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
						pend_cut(s);
					}
				}
			}
			if (batch && n)
				block = batch[n - 1];
			if (status < 0)
				break;
			/* Nothing from here on can be shown (its time, even a
			 * note's, is past them all): the rest is not decoded. */
			if (fl->stop_past && s->have_mkey &&
			    cli_select_past(&opt->sel, s->mkey,
					    fl->have_tc ? &fl->tc : NULL)) {
				s->past = 1;
				goto out;
			}
		}
		if (status == -HWT_ERR_EOS)
			break;
		/*
		 * An error in the next segment's data, or on the way to its
		 * PSB+'s IP (which the flow did not reach: a damaged PSB+
		 * whose IP does not match the code): the next segment cannot
		 * see what led to it, nor can this one know where one thread
		 * would resynchronise. One thread decodes from here (flow_run()).
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
	if (fold && s->cover) {
		/* The counts told while the cover is this segment's (a lent
		 * one stays the decoder's: the next segment's too). */
		int err = s->cover_lent ? hwt_blk_tally_flush(dec) :
					  hwt_blk_tally(dec, NULL, NULL);

		if (err < 0) {
			cli_out_printf(&s->out, "[error: coverage: %s]\n",
				       hwt_errstr(err));
			s->nerrors++;
		}
	}
	/* (A segment's own cover is added up on the printing thread: the
	 * part of that which is the segment's alone, here.) */
	if (s->cover && !s->cover_lent && hwt_an_cover_flatten(s->cover) < 0) {
		cli_out_printf(&s->out, "[error: out of memory counting lines]\n");
		s->nerrors++;
	}
	hwt_an_cover_use_walks(s->cover, NULL);
	free(batch);
	/* (A worker's decoder comes with its walks and texts: all are
	 * kept.) */
	if (dec != reuse)
		flow_seg_drop_walks(s);
	if (time_matters(fl))
		s->reached.have_t = hwt_blk_time_watched(dec,
							 &s->reached.t) > 0;
	if (dec != reuse)
		hwt_blk_delete(dec);
}

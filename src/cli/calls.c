/* SPDX-License-Identifier: BSD-2-Clause */
/* hwt calls: function segments and their history (see calls.h). */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/calls.h"
#include "common/grow.h"

/* A return taken, its target (the next block's IP) not yet seen. */
enum calls_ret {
	RET_NONE,
	RET_PENDING,
	RET_UNKNOWN,	/* as the decode before ended: not known here */
};

static void oom(void)
{
	fprintf(stderr, "hwt: out of memory\n");
	exit(1);
}

static void *grow(void *arr, size_t *cap, size_t need, size_t elem)
{
	if (hwt_grow(&arr, cap, need, elem) < 0)
		oom();
	return arr;
}

/* ------------------------------------------------------------------ */
/* Names                                                               */
/* ------------------------------------------------------------------ */

struct calls_names {
	pthread_mutex_t lock;
	char **slots;		/* open addressing, at most half full */
	size_t cap, n;
};

struct calls_names *calls_names_new(void)
{
	struct calls_names *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->cap = 1024;
	n->slots = calloc(n->cap, sizeof(*n->slots));
	if (!n->slots) {
		free(n);
		return NULL;
	}
	pthread_mutex_init(&n->lock, NULL);
	return n;
}

void calls_names_delete(struct calls_names *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->cap; i++)
		free(n->slots[i]);
	free(n->slots);
	pthread_mutex_destroy(&n->lock);
	free(n);
}

static char **names_slot(char **slots, size_t cap, const char *name)
{
	size_t i = (size_t)cli_fnv1a(name, strlen(name)) & (cap - 1);

	while (slots[i] && strcmp(slots[i], name))
		i = (i + 1) & (cap - 1);
	return &slots[i];
}

/* The one copy of @name. */
static const char *names_get(struct calls_names *n, const char *name)
{
	char **slot;

	pthread_mutex_lock(&n->lock);
	if (2 * (n->n + 1) > n->cap) {
		size_t cap = 2 * n->cap;
		char **slots = calloc(cap, sizeof(*slots));

		if (!slots)
			oom();
		for (size_t i = 0; i < n->cap; i++)
			if (n->slots[i])
				*names_slot(slots, cap, n->slots[i]) =
					n->slots[i];
		free(n->slots);
		n->slots = slots;
		n->cap = cap;
	}
	slot = names_slot(n->slots, n->cap, name);
	if (!*slot) {
		*slot = strdup(name);
		if (!*slot)
			oom();
		n->n++;
	}
	pthread_mutex_unlock(&n->lock);
	return *slot;
}

/* ------------------------------------------------------------------ */
/* A decode's function segments                                        */
/* ------------------------------------------------------------------ */

#define SYM_CACHE 1024

/* One function: the same symbol, or both unknown. Names are interned. */
static int same_fn(const char *a, uint64_t a_start, const char *b,
		   uint64_t b_start)
{
	return a == b && (!a || a_start == b_start);
}

void calls_seg_image(struct calls_seg *c, const struct hwt_image *image)
{
	c->image = image;
	c->image_id = hwt_image_id(image);
	c->image_gen = hwt_image_generation(image);
}

/* Whether the function at @ip is known to be the open record's. */
static int in_fn(const struct calls_seg *c, uint64_t ip)
{
	return cli_sym_span_has_key(&c->fn, c->image_id, c->image_gen, ip);
}

/*
 * The function at @ip: its name (NULL: none) and *@start; and, in c->fn,
 * up to where it is the same.
 */
static const char *fn_at(struct calls_seg *c, uint64_t ip, uint64_t *start)
{
	const struct hwt_image *image = c->image;
	uint64_t id = c->image_id, gen = c->image_gen;
	struct calls_sym *e;
	const char *name;
	uint64_t off;

	if (!c->syms) {
		c->syms = calloc(SYM_CACHE, sizeof(*c->syms));
		if (!c->syms)
			oom();
	}
	e = &c->syms[(ip ^ ip >> 10 ^ ip >> 20) & (SYM_CACHE - 1)];
	if (e->ip != ip || e->image_id != id || e->generation != gen || !id) {
		/* (No image: look again at the next instruction.) */
		e->lo = ip;
		e->end = ip + 1;
		if (hwt_image_symbol_range(image, ip, &name, &off, &e->lo,
					   &e->end) < 0) {
			e->name = NULL;
			e->start = 0;
		} else {
			e->name = names_get(c->names, name);
			e->start = ip - off;
		}
		e->image_id = id;
		e->generation = gen;
		e->ip = ip;
	}
	/* (Down to where it starts: a loop's jump back stays in it.) */
	c->fn = (struct cli_sym_span){ id, gen, e->lo, e->end };
	*start = e->start;
	return e->name;
}

static void mark_new(struct calls_seg *c)
{
	c->new_seg = 1;
	c->start_pending = 0;
}

static void add_op(struct calls_seg *c, enum calls_op_kind kind, uint64_t ip)
{
	c->ops = grow(c->ops, &c->ops_cap, c->nops + 1, sizeof(*c->ops));
	c->ops[c->nops++] = (struct calls_op){
		.ip = ip, .before = c->nrecs, .kind = (uint8_t)kind
	};
}

/* An enable's resume IP, once the thread it resumes in is known. */
static void flush_gap(struct calls_seg *c)
{
	if (c->gap_pending) {
		add_op(c, OP_GAP, c->gap_ip);
		c->gap_pending = 0;
	}
}

void calls_seg_start(struct calls_seg *c, struct calls_names *names,
		     int first)
{
	c->names = names;
	c->new_seg = 1;
	c->start_pending = !first;
	c->ret_pending = first ? RET_NONE : RET_UNKNOWN;
	c->started = 1;
}

void calls_seg_free(struct calls_seg *c)
{
	free(c->recs);
	free(c->ops);
	free(c->syms);
	memset(c, 0, sizeof(*c));
}

void calls_seg_swap_syms(struct calls_seg *c, struct calls_sym **syms)
{
	struct calls_sym *t = c->syms;

	c->syms = *syms;
	*syms = t;
}

void calls_seg_sync(struct calls_seg *c)
{
	mark_new(c);
}

/* A new function segment at @ip, unless it goes on with the open one. */
static void enter(struct calls_seg *c, uint64_t ip, int have_time,
		  uint64_t tsc, size_t text_at)
{
	uint64_t start;
	const char *name = fn_at(c, ip, &start);
	struct calls_rec *r;

	if (!c->new_seg && c->nrecs) {
		/* A jump within the function, or to another (a tail
		 * call): only the symbol tells. */
		r = &c->recs[c->nrecs - 1];
		if (same_fn(name, start, r->name, r->start))
			return;
	}
	c->recs = grow(c->recs, &c->recs_cap, c->nrecs + 1, sizeof(*c->recs));
	r = &c->recs[c->nrecs++];
	*r = (struct calls_rec){
		.name = name, .start = start, .ip = ip, .tsc = tsc,
		.text_at = text_at, .task = c->task,
		.has_tsc = (uint8_t)have_time, .joinable = c->start_pending,
	};
	c->new_seg = 0;
	c->start_pending = 0;
}

/* calls_seg_block() but for the usual block (see there). */
static int __attribute__((noinline))
seg_block(struct calls_seg *c, const struct hwt_block *b,
	  const struct cli_blk_time *t, size_t text_at)
{
	const struct hwt_image *image = c->image;
	struct hwt_insn insn;
	uint64_t ip, tsc;
	int err = 0, have_time;

	flush_gap(c);
	if (c->ret_pending != RET_NONE) {
		add_op(c, c->ret_pending == RET_UNKNOWN ? OP_RETURN_IF :
			  OP_RETURN, b->ip);
		c->ret_pending = RET_NONE;
	}
	/*
	 * The function is looked at on every instruction, as gdb does (a
	 * jump to the next instruction, code that falls through into the
	 * next symbol), and so not only where blocks happen to start.
	 * Only the last instruction branches: the others follow each other
	 * in memory.
	 */
	if (c->new_seg || !c->nrecs || !in_fn(c, b->ip)) {
		have_time = cli_blk_time_of(t, b->ninsn == 1, &tsc);
		enter(c, b->ip, have_time, tsc, text_at);
	}
	if (b->end_ip < c->fn.hi) {
		c->recs[c->nrecs - 1].ninsn += b->ninsn;
	} else {
		ip = b->ip;
		for (uint32_t n = b->ninsn; n > 0; n--) {
			if (!in_fn(c, ip)) {
				have_time = cli_blk_time_of(t, n == 1, &tsc);
				enter(c, ip, have_time, tsc, text_at);
			}
			c->recs[c->nrecs - 1].ninsn++;
			if (n == 1)
				break;
			err = hwt_blk_insn_walk(image, b->mode, &ip, &insn);
			if (err < 0) {
				c->recs[c->nrecs - 1].ninsn += n - 1;
				break;
			}
		}
	}

	/* (The block decoder gives the last instruction's class, where
	 * libipt's may say "indirect" for any branch to a trace's target.) */
	switch (b->iclass) {
	case HWT_IC_CALL:
	case HWT_IC_FAR_CALL:
		/* (The block has its last instruction's size.) */
		add_op(c, OP_PUSH, b->end_ip + b->size);
		mark_new(c);
		break;
	case HWT_IC_RETURN:
	case HWT_IC_FAR_RETURN:
		c->ret_pending = RET_PENDING;
		mark_new(c);
		break;
	default:
		break;
	}
	return err < 0 ? err : 0;
}

/* Calls and returns, which open and close frames. */
#define SEG_FRAME_CLASSES						\
	(1u << HWT_IC_CALL | 1u << HWT_IC_FAR_CALL | 1u << HWT_IC_RETURN | \
	 1u << HWT_IC_FAR_RETURN)

int calls_seg_block(struct calls_seg *c, const struct hwt_block *b,
		    const struct cli_blk_time *t, size_t text_at)
{
	/* The usual block: nothing pending, within the open record's
	 * function, its last instruction neither a call nor a return. Its
	 * instructions are counted here, the rest out of line (with the
	 * registers the rest needs saved and restored, a block cost 20
	 * instructions more). */
	if (!(c->ret_pending | c->gap_pending | c->new_seg) && c->nrecs &&
	    b->end_ip < c->fn.hi && in_fn(c, b->ip) &&
	    !(SEG_FRAME_CLASSES >> b->iclass & 1)) {
		c->recs[c->nrecs - 1].ninsn += b->ninsn;
		return 0;
	}
	return seg_block(c, b, t, text_at);
}

void calls_seg_task(struct calls_seg *c, uint32_t pid, uint32_t tid,
		    int have_tsc, uint64_t tsc, size_t text_at)
{
	uint64_t task = (uint64_t)pid << 32 | tid;

	/* (Where a decode starts, take_rec() compares; the history knows
	 * whose frames the operations before were.) */
	if (!c->have_task || task != c->task) {
		if (c->have_task)
			mark_new(c);
		add_op(c, OP_TASK, task);
		c->ops[c->nops - 1].tsc = tsc;
		c->ops[c->nops - 1].has_tsc = (uint8_t)(have_tsc != 0);
		c->ops[c->nops - 1].text_at = text_at;
		c->task = task;
		c->have_task = 1;
	}
	flush_gap(c);
}

void calls_seg_event(struct calls_seg *c, const struct hwt_event *ev)
{
	uint64_t ip;

	flush_gap(c);
	mark_new(c);
	switch (ev->type) {
	case HWT_EV_ASYNC_BRANCH:
		/* An interrupt or a signal: a frame until it comes back. */
		add_op(c, OP_PUSH, ev->u.async_branch.from);
		break;
	case HWT_EV_ASYNC_DISABLED:
		add_op(c, OP_PUSH, ev->u.async_disabled.at);
		break;
	case HWT_EV_DISABLED:
		/*
		 * A return out of the traced code (a filter): back to a frame
		 * the trace has, or to code it does not show, where the depth
		 * stays for whatever is traced next.
		 */
		if (c->ret_pending != RET_NONE && !ev->ip_suppressed)
			add_op(c, c->ret_pending == RET_UNKNOWN ? OP_GAP_IF :
				  OP_GAP, ev->u.disabled.ip);
		c->ret_pending = RET_NONE;
		break;
	case HWT_EV_ENABLED:
		/* (In cpu mode it may resume another thread, which the sync
		 * after the event says: its frames are the ones to close.) */
		if (hwt_event_resume_ip(ev, &ip)) {
			if (c->have_task) {
				c->gap_pending = 1;
				c->gap_ip = ip;
			} else {
				add_op(c, OP_GAP, ip);
			}
		}
		c->ret_pending = RET_NONE;
		break;
	default:
		break;
	}
}

/* ------------------------------------------------------------------ */
/* The history                                                         */
/* ------------------------------------------------------------------ */

/* A line to print; its first instruction follows from the ones before. */
struct hist_rec {
	uint64_t key;		/* the name (a pointer), or the IP if none */
	uint64_t ninsn, tsc;
	uint64_t task;		/* whose (calls_rec.task) */
	uint64_t text_end;	/* the text before it ends there */
	int32_t depth;
	uint8_t named, has_tsc;
	uint8_t hide;		/* HIDE_*: not chosen (calls_hist_select()) */
};

/* A line not chosen: its thread or CPU, or (its thread's) its time. */
enum { HIDE_THREAD = 1, HIDE_TIME = 2 };

/* Lines (and text between them) kept in memory; more go to the
 * temporary file. */
#define HIST_CHUNK (1u << 16)
#define HIST_TEXT (16u << 20)
/* A frame deeper than that forgets the oldest. */
#define FRAMES_MAX 4096

/* Where lines print: the next one's number and first instruction. */
struct printer {
	struct cli_out *out;
	uint64_t index, first;
	int min, time;
	/* --perf-time: times in perf's, with this */
	const struct hwt_pd_time_conv *tc;
	/* --folded, --timeline: the lines go there, only the text to
	 * @out */
	struct calls_tree *tree;
	struct calls_timeline *timeline;
};

static void print_recs(struct printer *pr, const struct hist_rec *recs,
		       size_t n, const char *text, uint64_t ntext);

/*
 * A thread's frames, as a shadow stack of return addresses: a return goes
 * back to the frame it returns to (longjmp, exceptions and tail calls
 * unwind several), and code that ran untraced (a system call, a call out
 * of the filter, a signal) is seen to come back when tracing resumes
 * where it returns. Without them the depth drifts with every system call.
 */
struct hist_frames {
	uint64_t task;		/* whose (calls_rec.task) */
	uint64_t *rets;
	size_t nrets, rets_cap;
	int depth;
};

struct calls_hist {
	/* The running thread's frames, and the others' (cpu mode), kept
	 * while those do not run. */
	struct hist_frames fr;
	uint8_t have_task;
	struct hist_frames *parked;
	size_t nparked, parked_cap;
	int min;
	/* How the decode taken last ended. */
	uint8_t new_seg, ret_pending;
	/* The last line's function, for a cut decode's first. */
	const char *last_name;
	uint64_t last_start;
	uint64_t last_task;
	uint8_t have_line;
	/* The lines chosen (calls_hist_select()), and the thread and CPU of
	 * the last one shown; the perf.data's conversion to perf time (for
	 * bounds in seconds, and --perf-time's times). */
	const struct cli_select *sel;
	struct hwt_pd_time_conv tc;
	uint8_t have_tc;
	uint64_t shown_task;
	uint32_t shown_cpu;
	struct hist_rec *recs;
	size_t n, cap, chunk;
	struct cli_out text;
	FILE *spill;
	int failed;
	/* --stream: lines print there (@pr.out) as they come. */
	struct cli_out *stream;
	struct printer pr;
	/* calls_hist_new_log(): what it is given goes to @log. */
	struct calls_merge *log;
	/* The CPU of the lines now, and of the last line; whether the line
	 * before a slice says it (calls_merge_replay()). */
	uint32_t cpu, last_cpu;
	uint8_t show_cpu;
	struct calls_tree *tree;	/* calls_hist_fold_into() */
	struct calls_timeline *timeline;	/* calls_hist_time_into() */
};

static void log_op(struct calls_hist *h, const struct calls_op *op);
static void log_rec(struct calls_hist *h, const struct calls_rec *r);
static void log_end(struct calls_hist *h, int new_seg, int ret_pending);
static void log_cut(struct calls_hist *h);

struct calls_hist *calls_hist_new(struct cli_out *stream, int time)
{
	struct calls_hist *h = calloc(1, sizeof(*h));
	const char *env;
	uint64_t v;

	if (!h)
		return NULL;
	if (cli_out_init(&h->text, NULL) < 0) {
		free(h);
		return NULL;
	}
	h->stream = stream;
	h->pr = (struct printer){ .out = stream, .time = time };
	h->chunk = HIST_CHUNK;
	/* For tests: the file used after a few lines. */
	env = getenv("HWT_CALLS_CHUNK");
	if (env && cli_parse_u64(env, &v) == 0 && v >= 2 && v <= HIST_CHUNK)
		h->chunk = (size_t)v;
	return h;
}

void calls_hist_select(struct calls_hist *h, const struct cli_select *sel,
		       const struct hwt_pd_time_conv *tc)
{
	h->sel = sel && sel->set ? sel : NULL;
	h->have_tc = tc != NULL;
	if (tc)
		h->tc = *tc;
}

/* Which lines @r's of @h are (hist_rec.hide). */
static uint8_t rec_hide(const struct calls_hist *h, const struct calls_rec *r)
{
	if (!h->sel)
		return 0;
	if (!cli_select_task(h->sel, 1, r->task) ||
	    (h->show_cpu && !cli_select_cpu(h->sel, 1, h->cpu)))
		return HIDE_THREAD;
	if (!cli_select_time(h->sel, r->has_tsc, r->tsc,
			     h->have_tc ? &h->tc : NULL))
		return HIDE_TIME;
	return 0;
}

void calls_hist_perf_time(struct calls_hist *h,
			  const struct hwt_pd_time_conv *tc)
{
	h->tc = *tc;
	h->have_tc = 1;
	h->pr.tc = &h->tc;
}

void calls_hist_fold_into(struct calls_hist *h, struct calls_tree *t)
{
	h->tree = t;
}

void calls_hist_time_into(struct calls_hist *h, struct calls_timeline *tl)
{
	h->timeline = tl;
}

void calls_hist_delete(struct calls_hist *h)
{
	if (!h)
		return;
	if (h->spill)
		fclose(h->spill);
	for (size_t i = 0; i < h->nparked; i++)
		free(h->parked[i].rets);
	free(h->parked);
	free(h->fr.rets);
	free(h->recs);
	free(h->text.buf);
	free(h);
}

struct cli_out *calls_hist_text(struct calls_hist *h)
{
	return &h->text;
}

static void frame_push(struct hist_frames *f, uint64_t ret)
{
	f->depth++;
	if (f->nrets == f->rets_cap && f->rets_cap < FRAMES_MAX)
		f->rets = grow(f->rets, &f->rets_cap, f->nrets + 1,
			       sizeof(*f->rets));
	if (f->nrets == FRAMES_MAX) {
		memmove(f->rets, f->rets + 1,
			(FRAMES_MAX - 1) * sizeof(*f->rets));
		f->nrets--;
	}
	f->rets[f->nrets++] = ret;
}

/*
 * Execution goes on at @ip after a return or a gap in the trace: close
 * the frames down to the one that returns there. If none does, a return
 * goes one level up (to a caller the trace never saw) and a gap changes
 * nothing.
 */
static void frame_return(struct calls_hist *h, uint64_t ip, int is_return)
{
	struct hist_frames *f = &h->fr;

	for (size_t i = f->nrets; i-- > 0;) {
		if (f->rets[i] == ip) {
			f->depth -= (int)(f->nrets - i);
			f->nrets = i;
			return;
		}
	}
	if (!is_return)
		return;
	/* (Streamed, a return above the first line's level stays there.) */
	if (!h->stream || f->depth > 0)
		f->depth--;
	if (f->nrets)
		f->nrets--;
}

/*
 * Thread @key runs from here: the frames of the one before are put by,
 * and @key's taken up where it left them (a thread not seen before starts
 * at depth 0, as the first one did). The first thread named owns what
 * came before it.
 */
static void task_switch(struct calls_hist *h, uint64_t key)
{
	struct hist_frames run;
	size_t i;

	if (!h->have_task || key == h->fr.task) {
		h->fr.task = key;
		h->have_task = 1;
		return;
	}
	for (i = 0; i < h->nparked; i++)
		if (h->parked[i].task == key)
			break;
	if (i == h->nparked) {
		h->parked = grow(h->parked, &h->parked_cap, h->nparked + 1,
				 sizeof(*h->parked));
		h->parked[h->nparked++] = (struct hist_frames){ .task = key };
	}
	/* (The slot of @key's frames keeps the ones put by.) */
	run = h->fr;
	h->fr = h->parked[i];
	h->parked[i] = run;
}

static void apply(struct calls_hist *h, const struct calls_op *op)
{
	if (h->log) {
		log_op(h, op);
		return;
	}
	switch (op->kind) {
	case OP_TASK:
		task_switch(h, op->ip);
		break;
	case OP_PUSH:
		frame_push(&h->fr, op->ip);
		break;
	case OP_RETURN:
	case OP_GAP:
		frame_return(h, op->ip, op->kind == OP_RETURN);
		break;
	default:
		if (h->ret_pending)
			frame_return(h, op->ip, op->kind == OP_RETURN_IF);
		h->ret_pending = 0;
		break;
	}
}

/*
 * The temporary files (a history's lines, a merge's slices) hold pieces:
 * a count and a text length, that many @elem-byte items, the text.
 * Returns 0, or -1 after a message.
 */
static int piece_write(FILE *f, const void *items, size_t n, size_t elem,
		       const char *text, size_t ntext)
{
	uint64_t hdr[2] = { n, ntext };

	if (fwrite(hdr, sizeof(hdr), 1, f) == 1 &&
	    fwrite(items, elem, n, f) == n &&
	    fwrite(text, 1, ntext, f) == ntext)
		return 0;
	fprintf(stderr, "hwt calls: cannot write the temporary file: %s\n",
		strerror(errno));
	return -1;
}

/* The bytes piece_write() writes. */
static uint64_t piece_size(size_t n, size_t elem, size_t ntext)
{
	return 2 * sizeof(uint64_t) + (uint64_t)n * elem + ntext;
}

/*
 * The next piece of @f into *@items and *@text (grown as needed), its
 * count and text length in @hdr: 0, 1 if there is none (the end), or -1
 * if it is not whole or says more than @max items or @max_text bytes.
 */
static int piece_read(FILE *f, size_t elem, uint64_t max, uint64_t max_text,
		      void **items, size_t *icap, char **text, size_t *tcap,
		      uint64_t hdr[2])
{
	if (fread(hdr, 2 * sizeof(uint64_t), 1, f) != 1)
		return 1;
	if (hdr[0] > max || hdr[1] > max_text)
		return -1;
	*items = grow(*items, icap, hdr[0] ? hdr[0] : 1, elem);
	*text = grow(*text, tcap, hdr[1] ? hdr[1] : 1, 1);
	if (fread(*items, elem, hdr[0], f) != hdr[0] ||
	    fread(*text, 1, hdr[1], f) != hdr[1])
		return -1;
	return 0;
}

/* All lines but the last (a cut decode's first may join it) to the file,
 * or printed (--stream). */
static int spill(struct calls_hist *h)
{
	size_t keep = h->n - 1;
	uint64_t cut = h->recs[keep].text_end;

	if (h->stream) {
		print_recs(&h->pr, h->recs, keep, h->text.buf, cut);
	} else {
		if (!h->spill)
			h->spill = cli_tmpfile("hwt calls");
		if (!h->spill ||
		    piece_write(h->spill, h->recs, keep, sizeof(*h->recs),
				h->text.buf, cut) < 0)
			return -1;
	}
	h->recs[0] = h->recs[keep];
	h->recs[0].text_end = 0;
	memmove(h->text.buf, h->text.buf + cut, h->text.len - cut);
	h->text.len -= cut;
	h->n = 1;
	return 0;
}

static void take_rec(struct calls_hist *h, const struct calls_rec *r)
{
	struct hist_rec *o;
	uint8_t hide;
	int other;

	if (h->log) {
		log_rec(h, r);
		return;
	}
	/*
	 * The first of a decode that goes on from the one before: one
	 * thread would have looked at the function here (at the PSB+'s
	 * IP), with what that one left.
	 */
	if (r->joinable && h->n && !h->new_seg && r->task == h->last_task &&
	    h->cpu == h->last_cpu &&
	    same_fn(r->name, r->start, h->last_name, h->last_start)) {
		h->recs[h->n - 1].ninsn += r->ninsn;
		return;
	}
	if (h->failed)
		return;
	if ((h->n == h->chunk || (h->n > 1 && h->text.len > HIST_TEXT)) &&
	    spill(h) < 0) {
		h->failed = 1;
		return;
	}
	/* A line of another thread than the line shown before (cpu mode),
	 * or, merged, of another CPU, or the first. */
	hide = rec_hide(h, r);
	if (!hide) {
		other = r->task != h->shown_task || h->cpu != h->shown_cpu;
		if (h->show_cpu && (!h->have_line || other))
			cli_out_printf(&h->text, "[pid %" PRIu32 " tid %"
				       PRIu32 " cpu %" PRIu32 "]\n",
				       (uint32_t)(r->task >> 32),
				       (uint32_t)r->task, h->cpu);
		else if (h->have_line && other)
			cli_out_printf(&h->text, "[pid %" PRIu32 " tid %"
				       PRIu32 "]\n",
				       (uint32_t)(r->task >> 32),
				       (uint32_t)r->task);
		h->have_line = 1;
		h->shown_task = r->task;
		h->shown_cpu = h->cpu;
	}
	h->last_cpu = h->cpu;
	h->recs = grow(h->recs, &h->cap, h->n + 1, sizeof(*h->recs));
	o = &h->recs[h->n++];
	*o = (struct hist_rec){
		.key = r->name ? (uint64_t)(uintptr_t)r->name : r->ip,
		.ninsn = r->ninsn, .tsc = r->tsc, .task = r->task,
		.text_end = h->text.len,
		.depth = h->fr.depth, .named = r->name != NULL,
		.has_tsc = r->has_tsc, .hide = hide,
	};
	if (h->fr.depth < h->min)
		h->min = h->fr.depth;
	h->last_name = r->name;
	h->last_start = r->start;
	h->last_task = r->task;
	/* Streamed: the line before is done, since this one did not join
	 * it. */
	if (h->stream && h->n > 1)
		(void)spill(h);
}

/*
 * Apply @c's operations due before record @rec, with @text (from @pos) up
 * to where each OP_TASK was made, if that is before @to: text goes with
 * the thread it was made in, wherever the decode was cut (a merged
 * history's slices take it). Returns the text's position.
 */
static size_t apply_ops(struct calls_hist *h, struct calls_seg *c,
			const char *text, size_t pos, size_t to, size_t rec)
{
	for (; c->ops_taken < c->nops; c->ops_taken++) {
		const struct calls_op *op = &c->ops[c->ops_taken];

		if (op->before > rec ||
		    (op->kind == OP_TASK && op->text_at > to))
			break;
		if (op->kind == OP_TASK && op->text_at > pos) {
			cli_out_write(&h->text, text + pos, op->text_at - pos);
			pos = op->text_at;
		}
		apply(h, op);
	}
	return pos;
}

/* Records [c->taken, @end) of @c, with their text, and text up to @to. */
static void take_range(struct calls_hist *h, struct calls_seg *c,
		       const char *text, size_t from, size_t to, size_t end)
{
	size_t pos = from;

	for (; c->taken < end; c->taken++) {
		const struct calls_rec *r = &c->recs[c->taken];

		pos = apply_ops(h, c, text, pos, to, c->taken);
		if (r->text_at > pos) {
			cli_out_write(&h->text, text + pos, r->text_at - pos);
			pos = r->text_at;
		}
		take_rec(h, r);
	}
	pos = apply_ops(h, c, text, pos, to, end);
	if (to > pos)
		cli_out_write(&h->text, text + pos, to - pos);
}

int calls_take(struct calls_hist *h, struct calls_seg *c, const char *text,
	       size_t text_from, size_t text_to, int all)
{
	size_t end = c->taken;

	if (all) {
		flush_gap(c);
		end = c->nrecs;
	} else {
		while (end < c->nrecs && c->recs[end].text_at < text_to)
			end++;
	}
	take_range(h, c, text, text_from, text_to, end);
	if (all)
		while (c->ops_taken < c->nops)
			apply(h, &c->ops[c->ops_taken++]);
	return h->failed ? -1 : 0;
}

void calls_take_end(struct calls_hist *h, struct calls_seg *c)
{
	if (h->log) {
		log_end(h, c->start_pending ? -1 : c->new_seg,
			c->ret_pending == RET_UNKNOWN ? -1 :
			c->ret_pending == RET_PENDING);
		return;
	}
	/* A decode where nothing happened leaves things as they were. */
	if (!c->start_pending)
		h->new_seg = c->new_seg;
	if (c->ret_pending != RET_UNKNOWN)
		h->ret_pending = c->ret_pending == RET_PENDING;
}

int calls_drain(struct calls_hist *h, struct calls_seg *c,
		struct cli_out *text)
{
	size_t keep = c->nrecs - 1, cut;

	if (c->nrecs < 2)
		return 0;
	cut = c->recs[keep].text_at;
	take_range(h, c, text->buf, 0, cut, keep);
	/* What is left: the open record and the operations after. */
	c->recs[0] = c->recs[keep];
	c->recs[0].text_at = 0;
	c->nrecs = 1;
	c->taken = 0;
	memmove(c->ops, c->ops + c->ops_taken,
		(c->nops - c->ops_taken) * sizeof(*c->ops));
	c->nops -= c->ops_taken;
	c->ops_taken = 0;
	for (size_t i = 0; i < c->nops; i++) {
		c->ops[i].before -= keep;
		if (c->ops[i].kind == OP_TASK)
			c->ops[i].text_at -= cut;
	}
	memmove(text->buf, text->buf + cut, text->len - cut);
	text->len -= cut;
	return h->failed ? -1 : 0;
}

/* ------------------------------------------------------------------ */
/* Printing                                                            */
/* ------------------------------------------------------------------ */

static void print_recs(struct printer *pr, const struct hist_rec *recs,
		       size_t n, const char *text, uint64_t ntext)
{
	uint64_t pos = 0;

	for (size_t i = 0; i < n; i++) {
		const struct hist_rec *r = &recs[i];
		char *p;
		int d;

		if (r->text_end > pos)
			cli_out_write(pr->out, text + pos, r->text_end - pos);
		pos = r->text_end;
		pr->index++;
		if (!r->ninsn)
			continue;
		/*
		 * Not chosen: numbered and counted all the same; the call
		 * tree has a chosen thread's lines (as callers, with no
		 * instructions of their own), the timeline's clock their
		 * instructions.
		 */
		if (r->hide) {
			pr->first += r->ninsn;
			if (pr->tree && r->hide == HIDE_TIME)
				calls_tree_add(pr->tree, r->task,
					       r->depth - pr->min, r->named,
					       r->key, 0);
			if (pr->timeline)
				calls_timeline_skip(pr->timeline, r->ninsn);
			continue;
		}
		if (pr->tree || pr->timeline) {
			if (pr->tree)
				calls_tree_add(pr->tree, r->task,
					       r->depth - pr->min, r->named,
					       r->key, r->ninsn);
			if (pr->timeline)
				calls_timeline_add(pr->timeline, r->task,
						   r->depth - pr->min,
						   r->named, r->key, r->ninsn,
						   r->has_tsc, r->tsc);
			continue;
		}
		p = cli_out_reserve(pr->out, 1024);
		p = cli_put_dec(p, pr->index);
		*p++ = '\t';
		/* (Deeper than 200 levels prints as 200.) */
		d = r->depth - pr->min;
		d = d > 200 ? 200 : d;
		memset(p, ' ', 2 * (size_t)d);
		p += 2 * d;
		if (r->named) {
			const char *s = (const char *)(uintptr_t)r->key;
			size_t len = strnlen(s, 200);

			memcpy(p, s, len);
			p += len;
		} else {
			p = cli_put_str(p, "?? 0x");
			p = cli_put_hex(p, r->key);
		}
		p = cli_put_str(p, "\tinst ");
		p = cli_put_dec(p, pr->first + 1);
		*p++ = ',';
		p = cli_put_dec(p, pr->first + r->ninsn);
		pr->first += r->ninsn;
		if (pr->time && pr->tc) {
			p = cli_put_str(p, "\ttime ");
			if (r->has_tsc)
				p = cli_put_perf_time(
					p, hwt_pd_tsc_to_perf_time(pr->tc,
								   r->tsc));
			else
				*p++ = '?';
		} else if (pr->time && r->has_tsc) {
			p = cli_put_str(p, "\ttsc ");
			p = cli_put_hex16(p, r->tsc);
		} else if (pr->time) {
			p = cli_put_str(p, "\ttsc ?");
		}
		*p++ = '\n';
		cli_out_commit(pr->out, p);
	}
	if (ntext > pos)
		cli_out_write(pr->out, text + pos, ntext - pos);
}

int calls_print(struct calls_hist *h, struct cli_out *out)
{
	struct printer pr = { out, 0, 0, h->min, h->pr.time, h->pr.tc,
			      h->tree, h->timeline };
	struct hist_rec *recs = NULL;
	char *text = NULL;
	size_t rcap = 0, tcap = 0;
	uint64_t hdr[2];
	int ret = h->failed ? -1 : 0, more;

	if (h->log) {
		log_cut(h);
		return 0;
	}

	if (h->spill && !ret) {
		if (fflush(h->spill) || fseek(h->spill, 0, SEEK_SET))
			ret = -1;
		while (!ret &&
		       !(more = piece_read(h->spill, sizeof(*recs), HIST_CHUNK,
					   SIZE_MAX / 2, (void **)&recs, &rcap,
					   &text, &tcap, hdr)))
			print_recs(&pr, recs, hdr[0], text, hdr[1]);
		if (!ret && more < 0)
			ret = -1;
		if (ret)
			fprintf(stderr, "hwt calls: cannot read the temporary "
				"file back\n");
	}
	if (!ret)
		print_recs(h->stream ? &h->pr : &pr, h->recs, h->n,
			   h->text.buf, h->text.len);
	free(recs);
	free(text);
	return ret;
}

/* ------------------------------------------------------------------ */
/* The CPUs' streams as one history                                    */
/* ------------------------------------------------------------------ */

enum { LOG_OP, LOG_REC, LOG_END };

/* What a stream's history was given, in order, to give another. */
struct log_item {
	uint64_t text_end;	/* the piece's text before it */
	uint8_t kind;		/* LOG_* */
	union {
		struct calls_op op;
		struct calls_rec rec;
		struct {
			int8_t new_seg, ret_pending;	/* -1: as it was */
		} end;
	} u;
};

/* Items written at most this many at a time, with their text. */
#define LOG_PIECE 4096

/* One thread's run in one stream: pieces [@from, @to) of the file. */
struct merge_slice {
	uint64_t key;		/* its time, or its stream's time before */
	uint64_t from, to;
	uint64_t seq;		/* in the order the streams gave them */
	uint32_t stream, cpu;
	uint8_t timed;
};

struct calls_merge {
	FILE *f;
	uint64_t size;		/* of the file */
	struct merge_slice *slices;
	size_t nslices, cap;
	uint32_t nstreams;
	int failed;
	/* The stream being given: the items not yet written, the key of
	 * its last slice, whether one is open (the last), and whose. */
	struct log_item *items;
	size_t nitems, items_cap;
	uint64_t key, task;
	uint8_t open, have_task;
};

struct calls_merge *calls_merge_new(void)
{
	return calloc(1, sizeof(struct calls_merge));
}

void calls_merge_delete(struct calls_merge *m)
{
	if (!m)
		return;
	if (m->f)
		fclose(m->f);
	free(m->slices);
	free(m->items);
	free(m);
}

struct calls_hist *calls_hist_new_log(struct calls_merge *m, uint32_t cpu)
{
	struct calls_hist *h = calls_hist_new(NULL, 0);

	if (!h)
		return NULL;
	h->log = m;
	h->cpu = cpu;
	m->nstreams++;
	m->key = 0;
	m->open = 0;
	m->have_task = 0;
	m->nitems = 0;
	return h;
}

/* The items and text so far to the file, as a piece of the open slice. */
static void log_flush(struct calls_hist *h)
{
	struct calls_merge *m = h->log;

	if (!m->failed && !m->f) {
		m->f = cli_tmpfile("hwt calls");
		if (!m->f)
			m->failed = 1;
	}
	if (!m->failed &&
	    piece_write(m->f, m->items, m->nitems, sizeof(*m->items),
			h->text.buf, h->text.len) < 0)
		m->failed = 1;
	m->size += piece_size(m->nitems, sizeof(*m->items), h->text.len);
	m->nitems = 0;
	h->text.len = 0;
}

/* A slice from here, with the stream's key. */
static void slice_new(struct calls_hist *h, int timed)
{
	struct calls_merge *m = h->log;
	struct merge_slice *s;

	m->slices = grow(m->slices, &m->cap, m->nslices + 1,
			 sizeof(*m->slices));
	s = &m->slices[m->nslices];
	*s = (struct merge_slice){
		.key = m->key, .from = m->size, .seq = m->nslices,
		.stream = m->nstreams - 1, .cpu = h->cpu,
		.timed = (uint8_t)(timed != 0),
	};
	m->nslices++;
	m->open = 1;
}

/* The open slice ends here (the stream's end, or another thread). */
static void log_cut(struct calls_hist *h)
{
	struct calls_merge *m = h->log;

	if (!m->open && h->text.len)
		slice_new(h, 1);	/* text before anything */
	if (!m->open)
		return;
	log_flush(h);
	m->slices[m->nslices - 1].to = m->size;
	m->open = 0;
}

/*
 * A slice starts: its key is its time, if known, made no earlier than the
 * stream's slices before (a damaged trace's time may jump back; a stream's
 * own slices stay in its order). Before the first thread is named, the
 * stream's time so far.
 */
static void log_open(struct calls_hist *h, int timed, uint64_t tsc)
{
	struct calls_merge *m = h->log;

	log_cut(h);
	if (timed && tsc > m->key)
		m->key = tsc;
	slice_new(h, timed);
}

static void log_put(struct calls_hist *h, struct log_item *it)
{
	struct calls_merge *m = h->log;

	/* A slice is a thread's run, wherever the decodes start (-j, the
	 * pieces), so that -j cuts none. */
	if (it->kind == LOG_OP && it->u.op.kind == OP_TASK &&
	    (!m->have_task || it->u.op.ip != m->task)) {
		log_open(h, it->u.op.has_tsc, it->u.op.tsc);
		m->task = it->u.op.ip;
		m->have_task = 1;
	} else if (!m->open) {
		log_open(h, 1, m->key);
	}
	it->text_end = h->text.len;
	m->items = grow(m->items, &m->items_cap, m->nitems + 1,
			sizeof(*m->items));
	m->items[m->nitems++] = *it;
	if (m->nitems == LOG_PIECE || h->text.len > HIST_TEXT)
		log_flush(h);
}

static void log_op(struct calls_hist *h, const struct calls_op *op)
{
	struct log_item it = { .kind = LOG_OP, .u.op = *op };

	log_put(h, &it);
}

static void log_rec(struct calls_hist *h, const struct calls_rec *r)
{
	struct log_item it = { .kind = LOG_REC, .u.rec = *r };

	log_put(h, &it);
}

static void log_end(struct calls_hist *h, int new_seg, int ret_pending)
{
	struct log_item it = { .kind = LOG_END };

	it.u.end.new_seg = (int8_t)new_seg;
	it.u.end.ret_pending = (int8_t)ret_pending;
	log_put(h, &it);
}

static int slice_cmp(const void *a, const void *b)
{
	const struct merge_slice *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->stream != y->stream)
		return x->stream < y->stream ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* A stream's threads start again with nothing (streams without time). */
static void forget_frames(struct calls_hist *h)
{
	for (size_t i = 0; i < h->nparked; i++)
		free(h->parked[i].rets);
	h->nparked = 0;
	free(h->fr.rets);
	memset(&h->fr, 0, sizeof(h->fr));
	h->have_task = 0;
	h->new_seg = 1;
	h->ret_pending = 0;
}

/* Slice @s's pieces to @h, as its stream's history was given them. */
static int replay_slice(struct calls_merge *m, const struct merge_slice *s,
			struct calls_hist *h, struct log_item **items,
			size_t *icap, char **text, size_t *tcap)
{
	uint64_t pos = s->from, hdr[2];

	if (fseeko(m->f, (off_t)pos, SEEK_SET))
		return -1;
	while (pos < s->to) {
		size_t at = 0;

		if (piece_read(m->f, sizeof(**items), LOG_PIECE, s->to - pos,
			       (void **)items, icap, text, tcap, hdr) != 0)
			return -1;
		pos += piece_size(hdr[0], sizeof(**items), hdr[1]);
		for (size_t k = 0; k < hdr[0]; k++) {
			const struct log_item *it = &(*items)[k];

			if (it->text_end > hdr[1])
				return -1;
			if (it->text_end > at) {
				cli_out_write(&h->text, *text + at,
					      it->text_end - at);
				at = it->text_end;
			}
			if (it->kind == LOG_OP) {
				apply(h, &it->u.op);
			} else if (it->kind == LOG_REC) {
				take_rec(h, &it->u.rec);
			} else {
				if (it->u.end.new_seg >= 0)
					h->new_seg = (uint8_t)it->u.end.new_seg;
				if (it->u.end.ret_pending >= 0)
					h->ret_pending =
						(uint8_t)it->u.end.ret_pending;
			}
		}
		if (hdr[1] > at)
			cli_out_write(&h->text, *text + at, hdr[1] - at);
	}
	return 0;
}

int calls_merge_replay(struct calls_merge *m, struct calls_hist *h)
{
	struct log_item *items = NULL;
	char *text = NULL;
	size_t icap = 0, tcap = 0;
	int timed = 1, ret = 0;

	if (m->failed)
		return -1;
	for (size_t i = 0; i < m->nslices; i++)
		if (!m->slices[i].timed)
			timed = 0;
	/* (Without time, in the order they came: stream after stream.) */
	if (timed)
		qsort(m->slices, m->nslices, sizeof(*m->slices), slice_cmp);
	if (m->f && fflush(m->f))
		ret = -1;
	h->show_cpu = 1;
	for (size_t i = 0; !ret && i < m->nslices; i++) {
		const struct merge_slice *s = &m->slices[i];

		if (!timed && i && s->stream != m->slices[i - 1].stream)
			forget_frames(h);
		h->cpu = s->cpu;
		if (s->to > s->from &&
		    replay_slice(m, s, h, &items, &icap, &text, &tcap) < 0)
			ret = -1;
	}
	if (ret)
		fprintf(stderr, "hwt calls: cannot read the temporary file "
			"back\n");
	free(items);
	free(text);
	return ret || h->failed ? -1 : 0;
}

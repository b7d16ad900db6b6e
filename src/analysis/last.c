/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * "How did I get here": the last branches of a trace and the call stack
 * where it ends.
 *
 * The trace is decoded to its end; taken branches go into a ring of the
 * last N. The call stack follows calls and returns: a return pops to the
 * frame it returns to (so longjmp and the like, which skip frames, are
 * mended at the next return), or nothing if no frame matches (it returns
 * above where the trace started). Calls to the next instruction are not
 * frames (they read the IP), as for the hardware's return compression.
 *
 * Signals, as user-space tracing shows them: the thread leaves for the
 * kernel (asynchronously: FUP+TIP.PGD at the interrupted instruction; or
 * at a system call: TIP.PGD) and comes back elsewhere (TIP.PGE in the
 * handler): a signal frame, which returns to where it interrupted. The
 * handler's return goes to the restorer, which no frame matches; its
 * rt_sigreturn system call comes back to the interrupted instruction:
 * that pops the signal frame.
 */
#include <stdlib.h>
#include <string.h>

#include <hwt/analysis.h>

#include "common/grow.h"

/* Where the thread left for the kernel, while it is there. */
enum { OUT_NONE, OUT_SYSCALL, OUT_ASYNC };

/*
 * What the analysis keeps of a thread: its call stack and where it left
 * for the kernel. A thread's trace has one; a CPU's (hwt_an_last_task())
 * one per thread that ran on it.
 */
struct an_thread {
	uint32_t pid, tid;
	struct hwt_an_frame *stack;
	size_t depth, dropped;
	uint8_t out;		/* OUT_* */
	uint64_t out_ip, out_fall;
	uint64_t open;		/* total when the exit branch was added */
};

/* What one decoder carries over a PSB that the next piece's must start
 * with: time (and its calibration), exec mode, TSX state. */
struct an_carry {
	uint8_t have_t, have_st;
	struct hwt_time_tracker t;
	struct hwt_blk_state st;
};

struct hwt_an_last {
	struct hwt_an_last_config c;
	struct hwt_image *image;	/* the decoder's, at the last block */

	struct hwt_an_branch *ring, *lin;
	size_t head;		/* next slot */
	uint64_t total;		/* branches ever added */

	/*
	 * The last instruction of the previous block: where it went is
	 * known when the next block starts. The CPU's, not a thread's: the
	 * flow goes on where the thread changes (in the kernel's switch, if
	 * traced; user-space traces are off there).
	 */
	struct {
		uint64_t ip, fall;
		uint8_t iclass, valid;
	} pend;

	struct an_thread th;	/* the thread running */
	struct an_thread *others;	/* the CPU's other threads */
	size_t nothers, cap_others;
	uint8_t have_task;
	struct hwt_an_frame *out_stack;

	struct an_carry carry;

	/* The blocks' walks, kept: hot code is walked once. (hwt last on
	 * gzip's recording, 153 M blocks of 766 M instructions, walked
	 * every instruction: 25 s; 6 s so.) The caller's
	 * (hwt_an_last_use_walks()) or @own_walks, made when first needed. */
	struct hwt_an_walks *walks, *own_walks;
	/* hwt_an_last_lend(): the caller's decoder, or NULL. */
	struct hwt_blk_decoder *lent;

	uint64_t tsc;
	uint8_t have_tsc, have_stop, mode;
	uint64_t stop;		/* hwt_an_last_stop() */
	struct hwt_an_last_end end;

	/* hwt_an_last_watch(): the threads whose runs are kept (pid << 32
	 * | tid), the runs kept, the last one open while its thread runs
	 * (@slice_open), and the time at the last sync (a run's start). */
	uint64_t *watch;
	size_t nwatch, cap_watch;
	struct hwt_an_slice *slices;
	size_t nslices, cap_slices, cap_pops, cap_frames;
	uint8_t slice_open, have_sync_tsc;
	uint64_t sync_tsc;
};

/* A run's returns below its frames kept, at most (the rest: a trace
 * that returns where nothing called, not a stack). */
#define SLICE_POPS 4096

struct hwt_an_last *hwt_an_last_new(const struct hwt_an_last_config *c)
{
	struct hwt_an_last *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->c = *c;
	if (!l->c.max_depth)
		l->c.max_depth = 1;
	l->ring = calloc(c->nbranches ? c->nbranches : 1, sizeof(*l->ring));
	l->lin = calloc(c->nbranches ? c->nbranches : 1, sizeof(*l->lin));
	l->th.stack = calloc(l->c.max_depth, sizeof(*l->th.stack));
	l->out_stack = calloc(l->c.max_depth, sizeof(*l->th.stack));
	if (!l->ring || !l->lin || !l->th.stack || !l->out_stack) {
		hwt_an_last_delete(l);
		return NULL;
	}
	return l;
}

void hwt_an_last_delete(struct hwt_an_last *l)
{
	if (!l)
		return;
	free(l->ring);
	free(l->lin);
	free(l->th.stack);
	for (size_t i = 0; i < l->nothers; i++)
		free(l->others[i].stack);
	free(l->others);
	free(l->out_stack);
	for (size_t i = 0; i < l->nslices; i++) {
		free(l->slices[i].pops);
		free(l->slices[i].frames);
	}
	free(l->slices);
	free(l->watch);
	hwt_an_walks_delete(l->own_walks);
	free(l);
}

void hwt_an_last_use_walks(struct hwt_an_last *l, struct hwt_an_walks *walks)
{
	l->walks = walks ? walks : l->own_walks;
}

void hwt_an_last_lend(struct hwt_an_last *l, struct hwt_blk_decoder *dec)
{
	l->lent = dec;
}

int hwt_an_last_watch(struct hwt_an_last *l, uint32_t pid, uint32_t tid)
{
	if (hwt_grow((void **)&l->watch, &l->cap_watch, l->nwatch + 1,
		     sizeof(*l->watch)) < 0)
		return -HWT_ERR_NOMEM;
	l->watch[l->nwatch++] = (uint64_t)pid << 32 | tid;
	return 0;
}

/* A run of @pid/@tid starts, kept if it is watched. */
static int slice_start(struct hwt_an_last *l, uint32_t pid, uint32_t tid)
{
	uint64_t task = (uint64_t)pid << 32 | tid;
	struct hwt_an_slice *sl;
	size_t i;

	l->slice_open = 0;
	for (i = 0; i < l->nwatch && l->watch[i] != task; i++)
		;
	if (i == l->nwatch)
		return 0;
	if (hwt_grow((void **)&l->slices, &l->cap_slices, l->nslices + 1,
		     sizeof(*l->slices)) < 0)
		return -HWT_ERR_NOMEM;
	sl = &l->slices[l->nslices];
	memset(sl, 0, sizeof(*sl));
	sl->pid = pid;
	sl->tid = tid;
	sl->tsc = l->sync_tsc;
	sl->have_tsc = l->have_sync_tsc;
	l->nslices++;
	l->cap_pops = l->cap_frames = 0;
	l->slice_open = 1;
	return 0;
}

/* The open run pushed a frame (as push() does: the outermost goes). */
static void slice_push(struct hwt_an_last *l, const struct hwt_an_frame *f)
{
	struct hwt_an_slice *sl = &l->slices[l->nslices - 1];

	/* Full (or no memory for more): the outermost goes. */
	if (sl->nframes == l->c.max_depth ||
	    hwt_grow((void **)&sl->frames, &l->cap_frames, sl->nframes + 1,
		     sizeof(*sl->frames)) < 0) {
		if (!sl->nframes)
			return;
		memmove(sl->frames, sl->frames + 1,
			(sl->nframes - 1) * sizeof(*sl->frames));
		sl->nframes--;
		sl->dropped++;
	}
	sl->frames[sl->nframes++] = *f;
}

/* The open run returned to @to: from a frame of its own, or one below. */
static void slice_pop(struct hwt_an_last *l, uint8_t kind, uint64_t to)
{
	struct hwt_an_slice *sl = &l->slices[l->nslices - 1];

	for (size_t i = sl->nframes; i-- > 0;) {
		if (sl->frames[i].kind == kind && sl->frames[i].ret == to) {
			sl->nframes = i;
			return;
		}
	}
	if (sl->npops == SLICE_POPS ||
	    hwt_grow((void **)&sl->pops, &l->cap_pops, sl->npops + 1,
		     sizeof(*sl->pops)) < 0)
		return;
	sl->pops[sl->npops++] = (struct hwt_an_frame){ .kind = kind,
						       .ret = to };
}

size_t hwt_an_last_slices(struct hwt_an_last *l,
			  const struct hwt_an_slice **s)
{
	*s = l->slices;
	return l->nslices;
}

size_t hwt_an_slices_stack(const struct hwt_an_slice *const *slices,
			   size_t n, struct hwt_an_frame *out, size_t max,
			   size_t *dropped)
{
	struct hwt_an_frame *st = NULL;
	size_t depth = 0, cap = 0, lost = 0, k = 0;

	for (size_t i = 0; i < n; i++) {
		const struct hwt_an_slice *sl = slices[i];

		for (size_t p = 0; p < sl->npops; p++) {
			for (size_t j = depth; j-- > 0;) {
				if (st[j].kind == sl->pops[p].kind &&
				    st[j].ret == sl->pops[p].ret) {
					depth = j;
					break;
				}
			}
		}
		if (sl->dropped) {
			/* Below its frames, more than are kept. */
			lost += depth + sl->dropped;
			depth = 0;
		}
		if (hwt_grow((void **)&st, &cap, depth + sl->nframes + 1,
			     sizeof(*st)) < 0) {
			/* (No memory: the frames so far.) */
			break;
		}
		/* (A run that left no frame may have no array.) */
		if (sl->nframes)
			memcpy(st + depth, sl->frames,
			       sl->nframes * sizeof(*st));
		depth += sl->nframes;
	}
	for (; k < depth && k < max; k++)
		out[k] = st[depth - 1 - k];
	if (dropped)
		*dropped = lost + (depth > max ? depth - max : 0);
	free(st);
	return k;
}

int hwt_an_last_task(struct hwt_an_last *l, uint32_t pid, uint32_t tid)
{
	struct an_thread t;
	size_t i;

	if (!l->have_task) {
		/* What came before (nothing, as a CPU's trace starts) is
		 * this thread's. */
		l->have_task = 1;
		l->th.pid = pid;
		l->th.tid = tid;
		return slice_start(l, pid, tid);
	}
	if (l->th.tid == tid && l->th.pid == pid)
		return 0;
	if (slice_start(l, pid, tid) < 0)
		return -HWT_ERR_NOMEM;
	for (i = 0; i < l->nothers; i++)
		if (l->others[i].tid == tid && l->others[i].pid == pid)
			break;
	if (i == l->nothers) {
		if (hwt_grow((void **)&l->others, &l->cap_others,
			     l->nothers + 1, sizeof(*l->others)) < 0)
			return -HWT_ERR_NOMEM;
		memset(&t, 0, sizeof(t));
		t.pid = pid;
		t.tid = tid;
		t.stack = calloc(l->c.max_depth, sizeof(*t.stack));
		if (!t.stack)
			return -HWT_ERR_NOMEM;
		l->others[l->nothers++] = t;
	}
	/* The one that ran goes where the one that runs now was kept. */
	t = l->others[i];
	l->others[i] = l->th;
	l->th = t;
	return 0;
}

/* (Inline, as resolve() and the block's walk below: hwt last asks them for
 * every block.) */
static inline __attribute__((always_inline)) void
add(struct hwt_an_last *l, uint8_t kind, uint64_t from, uint64_t to,
    int error)
{
	struct hwt_an_branch *b;

	if (!l->c.nbranches)
		return;
	b = &l->ring[l->head];
	b->from = from;
	b->to = to;
	b->kind = kind;
	b->tsc = l->tsc;
	b->have_tsc = l->have_tsc;
	b->error = error;
	b->pid = l->th.pid;
	b->tid = l->th.tid;
	/* (Not %: a division, and its latency, each branch.) */
	if (++l->head == l->c.nbranches)
		l->head = 0;
	l->total++;
}

/* The branch added when total was @at, if still in the ring. */
static struct hwt_an_branch *added(struct hwt_an_last *l, uint64_t at)
{
	if (!l->c.nbranches || !at || at > l->total ||
	    l->total - at >= l->c.nbranches)
		return NULL;
	return &l->ring[(at - 1) % l->c.nbranches];
}

static void push(struct hwt_an_last *l, uint8_t kind, uint64_t site,
		 uint64_t entry, uint64_t ret)
{
	struct hwt_an_frame *f;

	if (l->th.depth == l->c.max_depth) {
		/* The outermost frame goes: the end is what matters. */
		memmove(l->th.stack, l->th.stack + 1,
			(l->th.depth - 1) * sizeof(*l->th.stack));
		l->th.depth--;
		l->th.dropped++;
	}
	f = &l->th.stack[l->th.depth++];
	f->kind = kind;
	f->site = site;
	f->entry = entry;
	f->ret = ret;
	if (l->slice_open)
		slice_push(l, f);
}

/* Pop through the innermost frame of @kind that goes back to @to. */
static int pop_to(struct hwt_an_last *l, uint8_t kind, uint64_t to)
{
	if (l->slice_open)
		slice_pop(l, kind, to);
	for (size_t i = l->th.depth; i-- > 0;) {
		if (l->th.stack[i].kind == kind && l->th.stack[i].ret == to) {
			l->th.depth = i;
			return 1;
		}
	}
	return 0;
}

/* The instruction at @ip (of class @iclass; @fall after it) went to
 * @next. */
static inline __attribute__((always_inline)) void
branched(struct hwt_an_last *l, uint64_t ip, uint64_t fall, uint8_t iclass,
	 uint64_t next)
{
	switch (iclass) {
	case HWT_IC_COND_JUMP:
		if (next != fall)
			add(l, HWT_AN_COND, ip, next, 0);
		break;
	case HWT_IC_CALL:
		add(l, HWT_AN_CALL, ip, next, 0);
		if (next != fall)
			push(l, HWT_AN_CALL, ip, next, fall);
		break;
	case HWT_IC_RETURN:
		add(l, HWT_AN_RETURN, ip, next, 0);
		pop_to(l, HWT_AN_CALL, next);
		break;
	case HWT_IC_JUMP:
		add(l, HWT_AN_JUMP, ip, next, 0);
		break;
	case HWT_IC_FAR_CALL:
	case HWT_IC_FAR_RETURN:
	case HWT_IC_FAR_JUMP:
		add(l, HWT_AN_SYSCALL, ip, next, 0);
		break;
	default:
		break;
	}
}

/* The previous block's last instruction went to @next. */
static inline __attribute__((always_inline)) void
resolve(struct hwt_an_last *l, uint64_t next)
{
	if (!l->pend.valid)
		return;
	l->pend.valid = 0;
	branched(l, l->pend.ip, l->pend.fall, l->pend.iclass, next);
}

void hwt_an_last_stop(struct hwt_an_last *l, uint64_t ip)
{
	l->stop = ip;
	l->have_stop = 1;
}

/*
 * From @ip, the path that needs no trace (fall-through, direct jumps and
 * calls) to the stop IP: with @commit 0 only whether it gets there.
 */
static int tail(struct hwt_an_last *l, uint64_t ip, int commit)
{
	struct hwt_insn_info info;
	const uint8_t *code;
	size_t avail;

	for (int n = 0; n < 100000; n++) {
		if (ip == l->stop) {
			if (commit) {
				l->end.ip = ip;
				l->end.have_ip = 1;
			}
			return 1;
		}
		if (hwt_image_read(l->image, ip, &code, &avail) < 0 ||
		    hwt_insn_decode(&info, code, avail, ip, l->mode) < 0)
			return 0;
		if (info.iclass == HWT_IC_OTHER) {
			ip += info.size;
			continue;
		}
		if (!(info.flags & HWT_INSN_DIRECT) ||
		    (info.iclass != HWT_IC_JUMP && info.iclass != HWT_IC_CALL))
			return 0;
		if (commit) {
			l->end.insns += (uint64_t)n;
			add(l, info.iclass == HWT_IC_CALL ? HWT_AN_CALL :
			    HWT_AN_JUMP, ip, info.target, 0);
			if (info.iclass == HWT_IC_CALL &&
			    info.target != ip + info.size)
				push(l, HWT_AN_CALL, ip, info.target,
				     ip + info.size);
			n = 0;
		}
		ip = info.target;
	}
	return 0;
}

/* Block @b ran to its end: its last instruction (of @size bytes and
 * class @iclass) is pending, its branch told by the next block. */
static void ran_to_end(struct hwt_an_last *l, const struct hwt_block *b,
		       uint8_t size, uint8_t iclass)
{
	l->end.ip = b->end_ip;
	l->end.have_ip = 1;
	l->pend.ip = b->end_ip;
	l->pend.fall = b->end_ip + size;
	l->pend.iclass = iclass;
	l->pend.valid = 1;
}

/* The branches of @w's block, then its last instruction pending (if @w
 * has them all). */
static void replay(struct hwt_an_last *l, const struct hwt_block *b,
		   const struct hwt_an_walk *w)
{
	const struct hwt_an_inner *in = w->inner;

	for (unsigned i = 0; i < w->ninner; i++) {
		if (in[i].call) {
			add(l, HWT_AN_CALL, in[i].from, in[i].to, 0);
			if (in[i].to != in[i].next)
				push(l, HWT_AN_CALL, in[i].from, in[i].to,
				     in[i].next);
		} else {
			add(l, HWT_AN_JUMP, in[i].from, in[i].to, 0);
		}
	}
	l->end.insns += w->ninsn;
	l->mode = b->mode;
	if (w->ninsn < b->ninsn) {
		/* Up to an error. */
		if (w->ninsn) {
			l->end.ip = w->last;
			l->end.have_ip = 1;
		}
		return;
	}
	ran_to_end(l, b, w->last_size, w->last_iclass);
}

/*
 * The reference (HWT_AN_NO_MEMO, the fuzz target's other half): every
 * instruction walked and taken as it comes, nothing kept.
 */
static int walk_each(struct hwt_an_last *l, const struct hwt_block *b)
{
	uint64_t ip = b->ip, next;
	struct hwt_insn insn;
	int err;

	for (uint32_t n = b->ninsn; n > 0; n--) {
		err = hwt_blk_insn_walk(l->image, b->mode, &ip, &insn);
		if (err < 0)
			return err;
		l->end.insns++;
		l->end.ip = insn.ip;
		l->end.have_ip = 1;
		l->mode = b->mode;
		next = insn.ip + insn.size;
		if (n == 1) {
			l->pend.ip = insn.ip;
			l->pend.fall = next;
			l->pend.iclass = insn.iclass;
			l->pend.valid = 1;
		} else if (insn.iclass == HWT_IC_CALL) {
			add(l, HWT_AN_CALL, insn.ip, ip, 0);
			if (ip != next)
				push(l, HWT_AN_CALL, insn.ip, ip, next);
		} else if (ip != next || insn.iclass == HWT_IC_JUMP) {
			add(l, HWT_AN_JUMP, insn.ip, ip, 0);
		}
	}
	return 0;
}

static int walk(struct hwt_an_last *l, const struct hwt_block *b)
{
	struct hwt_an_walk w;
	int err;

	resolve(l, b->ip);
	if (l->c.flags & HWT_AN_NO_MEMO)
		return walk_each(l, b);
	/* (With HWT_AN_BRANCH_ENDS, take_ends() took the blocks that need no
	 * walk.) */
	if (!l->walks && !(l->walks = l->own_walks = hwt_an_walks_new()))
		return -HWT_ERR_NOMEM;
	err = hwt_an_walks_get(l->walks, l->image, b, &w);
	replay(l, b, &w);
	return err;
}

/*
 * Blocks @b[0, @n) of a batch, each ending at a branch
 * (HWT_AN_BRANCH_ENDS, and not HWT_AN_NO_MEMO), as walk() takes them, up
 * to the first it would walk (truncated, or cut short by the cache) or
 * @end's: returns how many it took. The pending branch is kept here from
 * block to block, and the end's IP and counts are written once: per
 * block, they were a fifth of hwt last's own instructions.
 */
static size_t take_ends(struct hwt_an_last *l, const struct hwt_block *b,
			size_t n, const struct hwt_blk_end *end)
{
	uint64_t ip = l->pend.ip, fall = l->pend.fall, insns = 0;
	uint8_t iclass = l->pend.iclass, valid = l->pend.valid;
	const struct hwt_block *last = NULL;
	/* (Read once: the branches' stores might be to @end, for all the
	 * compiler knows.) */
	const struct hwt_blk_end stop = *end;
	size_t i;

	for (i = 0; i < n; i++) {
		if (hwt_blk_end_block(&stop, &b[i]))
			break;
		if (!b[i].ninsn)
			continue;
		if (!hwt_block_tells_last(&b[i]))
			break;
		if (valid)
			branched(l, ip, fall, iclass, b[i].ip);
		valid = 1;
		ip = b[i].end_ip;
		fall = ip + b[i].size;
		iclass = b[i].iclass;
		insns += b[i].ninsn;
		last = &b[i];
	}
	if (last) {
		l->pend.ip = ip;
		l->pend.fall = fall;
		l->pend.iclass = iclass;
		l->pend.valid = 1;
		l->end.ip = ip;
		l->end.have_ip = 1;
		l->end.insns += insns;
		l->mode = last->mode;
	}
	return i;
}

/* Back from the kernel at @ip: a system call, a signal, a sigreturn. */
static void enabled(struct hwt_an_last *l, uint64_t ip)
{
	struct hwt_an_branch *b = added(l, l->th.open);

	if (l->th.out == OUT_SYSCALL) {
		if (ip == l->th.out_fall) {
			if (b)
				b->to = ip;
		} else if (pop_to(l, HWT_AN_SIGNAL, ip)) {
			if (b) {
				b->kind = HWT_AN_SIGRETURN;
				b->to = ip;
			}
		} else {
			/* A signal delivered as the call returned. */
			if (b)
				b->to = l->th.out_fall;
			add(l, HWT_AN_SIGNAL, l->th.out_fall, ip, 0);
			push(l, HWT_AN_SIGNAL, l->th.out_fall, ip, l->th.out_fall);
		}
	} else if (l->th.out == OUT_ASYNC) {
		if (ip == l->th.out_ip) {
			/* An interrupt the program did not see: no branch;
			 * but where others' came since (a CPU's trace), a
			 * note that this thread left. */
			if (b && l->th.open == l->total) {
				l->head = (l->head + l->c.nbranches - 1) %
					  l->c.nbranches;
				l->total--;
			} else if (b) {
				b->kind = HWT_AN_INTERRUPT;
				b->to = ip;
			}
		} else {
			if (b)
				b->to = ip;
			push(l, HWT_AN_SIGNAL, l->th.out_ip, ip, l->th.out_ip);
		}
	}
	l->th.out = OUT_NONE;
}

static void event(struct hwt_an_last *l, const struct hwt_event *ev)
{
	if (ev->status_update)
		return;
	switch (ev->type) {
	case HWT_EV_ENABLED:
		l->pend.valid = 0;
		if (!ev->ip_suppressed)
			enabled(l, ev->u.enabled.ip);
		break;
	case HWT_EV_DISABLED:
		/* The instruction that left (a system call) is pending. */
		if (l->pend.valid) {
			add(l, HWT_AN_SYSCALL, l->pend.ip, 0, 0);
			l->th.open = l->total;
			l->th.out = OUT_SYSCALL;
			l->th.out_ip = l->pend.ip;
			l->th.out_fall = l->pend.fall;
		}
		l->pend.valid = 0;
		break;
	case HWT_EV_ASYNC_DISABLED:
		/* The last instruction went to the one interrupted. */
		resolve(l, ev->u.async_disabled.at);
		add(l, HWT_AN_SIGNAL, ev->u.async_disabled.at, 0, 0);
		l->th.open = l->total;
		l->th.out = OUT_ASYNC;
		l->th.out_ip = ev->u.async_disabled.at;
		break;
	case HWT_EV_ASYNC_BRANCH:
		/* With tracing on throughout (kernel tracing; vgpt's
		 * redirections): a transfer, not a frame. The last
		 * instruction went to the one interrupted. */
		resolve(l, ev->u.async_branch.from);
		add(l, HWT_AN_JUMP, ev->u.async_branch.from,
		    ev->u.async_branch.to, 0);
		break;
	case HWT_EV_OVERFLOW:
		l->pend.valid = 0;
		l->th.out = OUT_NONE;
		add(l, HWT_AN_LOST, ev->ip_suppressed ? 0 : ev->u.overflow.ip,
		    0, -HWT_ERR_OVERFLOW);
		break;
	default:
		break;
	}
}

/* Decoding stopped at @ip with error @err. */
static void lost(struct hwt_an_last *l, uint64_t ip, int err)
{
	l->end.errors++;
	l->pend.valid = 0;
	l->th.out = OUT_NONE;
	add(l, HWT_AN_LOST, ip, 0, err);
}

/* What @dec had at the next piece's PSB, for the next piece's decoder. */
static void carry_time(struct hwt_an_last *l, const struct hwt_blk_decoder *dec)
{
	l->carry.have_t = hwt_blk_time_watched(dec, &l->carry.t) > 0;
}

/* Blocks per batch. */
#define BATCH 256

int hwt_an_last_run(struct hwt_an_last *l, const struct hwt_blk_config *cfg,
		    struct hwt_image *image, uint64_t next,
		    int (*sync)(void *ctx, struct hwt_blk_decoder *dec,
				uint64_t *quiet),
		    void *ctx)
{
	struct hwt_blk_decoder *dec;
	struct hwt_block blocks[BATCH];
	struct hwt_event ev;
	struct hwt_blk_end end;
	uint64_t ip, quiet;
	/* Where the decoder stood after a block walked with an error. */
	uint64_t err_ip = 0;
	int have_err_ip = 0;
	size_t n, i;
	int status, use, stopping, clean = 1, ret = 0;
	const int ends = (l->c.flags & (HWT_AN_NO_MEMO | HWT_AN_BRANCH_ENDS)) ==
			 HWT_AN_BRANCH_ENDS;

	l->image = image;
	hwt_blk_end_init(&end, next);
	dec = l->lent;
	if (dec) {
		/* (As a new decoder, but for its block cache.) */
		int err = hwt_blk_set_trace(dec, cfg->qry.begin, cfg->qry.end);

		if (err >= 0)
			err = hwt_blk_set_image(dec, image);
		if (err < 0)
			return err;
	} else {
		dec = hwt_blk_new(cfg, image);
		if (!dec)
			return -HWT_ERR_NOMEM;
	}
	/* As one decoder goes on over the PSB this piece starts at. */
	if (l->carry.have_t)
		hwt_blk_time_seed(dec, &l->carry.t);
	if (l->carry.have_st)
		hwt_blk_state_seed(dec, &l->carry.st);
	memset(&l->carry, 0, sizeof(l->carry));
	hwt_blk_time_watch(dec, next ? next : UINT64_MAX);
	status = hwt_blk_sync_forward(dec);
	for (;;) {
		if (status < 0) {
			/*
			 * An error in the next piece's data is the next's;
			 * one decoder resynchronises there, knowing nothing
			 * (no carry).
			 */
			if (status == -HWT_ERR_EOS)
				break;
			if (end.stopping || hwt_blk_end_past(&end, dec, 0)) {
				clean = 0;
				break;
			}
			ip = err_ip;
			if (!have_err_ip)
				(void) hwt_blk_get_ip(dec, &ip);
			have_err_ip = 0;
			lost(l, ip, status);
			status = hwt_blk_sync_forward(dec);
			if (status >= 0 && hwt_blk_end_past(&end, dec, 1)) {
				clean = 0;
				break;
			}
			continue;
		}
		while (status >= 0 && (status & HWT_STS_EVENT_PENDING)) {
			/* The thread an event is in (a CPU's trace goes to
			 * another at a TIP.PGE). */
			if (l->nwatch)
				l->have_sync_tsc = hwt_blk_time(
					dec, &l->sync_tsc, NULL, NULL) >= 0;
			if (sync && (ret = sync(ctx, dec, &quiet)) != 0) {
				if (ret > 0)
					goto stopped;
				clean = 0;
				goto out;
			}
			status = hwt_blk_event(dec, &ev);
			if (status < 0)
				break;
			/* The next piece starts at its PSB+'s IP: the
			 * blocks up to there are still ours. */
			stopping = end.stopping;
			use = hwt_blk_end_event(&end, dec, &ev);
			if (!stopping && end.stopping)
				l->carry.have_st =
					hwt_blk_get_state(dec, &l->carry.st) >= 0;
			if (use < 0)
				goto out;
			if (!use)
				event(l, &ev);
		}
		if (status < 0)
			continue;
		if (status & HWT_STS_EOS)
			break;
		quiet = 0;
		if (l->nwatch)
			l->have_sync_tsc = hwt_blk_time(dec, &l->sync_tsc, NULL,
							NULL) >= 0;
		if (sync && (ret = sync(ctx, dec, &quiet)) != 0) {
			if (ret > 0)
				goto stopped;
			clean = 0;
			goto out;
		}
		/* The process the blocks run in (the sync may switch), and
		 * their time: the batch ends where @sync must be asked. */
		l->image = hwt_blk_image(dec);
		l->have_tsc = hwt_blk_time(dec, &l->tsc, NULL, NULL) >= 0;
		if (sync)
			status = hwt_blk_next_batch_until(dec, blocks, BATCH,
							  &n, quiet);
		else
			status = hwt_blk_next_batch(dec, blocks, BATCH, &n);
		for (i = 0; i < n; i++) {
			int err;

			if (ends) {
				i += take_ends(l, &blocks[i], n - i, &end);
				if (i == n)
					break;
			}
			if (hwt_blk_end_block(&end, &blocks[i])) {
				resolve(l, blocks[i].ip);
				goto out;
			}
			if (!blocks[i].ninsn)
				continue;
			err = walk(l, &blocks[i]);
			if (err >= 0 || (i + 1 == n && status < 0))
				continue;
			/* The rest of the batch comes before the next PSB,
			 * where decoding goes on; the decoder stood at the
			 * next block's start. */
			status = err;
			if (i + 1 < n) {
				err_ip = blocks[i + 1].ip;
				have_err_ip = 1;
			}
			break;
		}
	}
	if (next)
		goto out;
	/* The trace ran out after the last block's branch: where the
	 * decoder stands is where that branch went. */
	if (l->pend.valid && hwt_blk_get_ip(dec, &ip) >= 0)
		resolve(l, ip);
	/* A thread that stopped (faulted) inside code the trace never had
	 * to describe: the straight path to where it stopped. */
	if (l->have_stop && hwt_blk_get_ip(dec, &ip) >= 0 && tail(l, ip, 0))
		tail(l, ip, 1);
	goto out;
stopped:
	/* @sync ended it here: as if the trace ended (no tail: the thread
	 * went on). */
	if (l->pend.valid && hwt_blk_get_ip(dec, &ip) >= 0)
		resolve(l, ip);
	clean = 0;
	ret = 1;
out:
	if (next && clean)
		carry_time(l, dec);
	else
		memset(&l->carry, 0, sizeof(l->carry));
	l->end.tsc = l->tsc;
	l->end.have_tsc = l->have_tsc;
	if (dec != l->lent)
		hwt_blk_delete(dec);
	return ret < 0 ? ret : ret > 0;
}

size_t hwt_an_last_branches(struct hwt_an_last *l,
			    const struct hwt_an_branch **b)
{
	size_t n = l->total < l->c.nbranches ? (size_t)l->total :
					       l->c.nbranches;
	size_t first = (l->head + l->c.nbranches - n) %
		       (l->c.nbranches ? l->c.nbranches : 1);

	for (size_t i = 0; i < n; i++)
		l->lin[i] = l->ring[(first + i) % l->c.nbranches];
	*b = l->lin;
	return n;
}

size_t hwt_an_last_stack(struct hwt_an_last *l,
			 const struct hwt_an_frame **f, size_t *dropped)
{
	for (size_t i = 0; i < l->th.depth; i++)
		l->out_stack[i] = l->th.stack[l->th.depth - 1 - i];
	*f = l->out_stack;
	if (dropped)
		*dropped = l->th.dropped;
	return l->th.depth;
}

void hwt_an_last_end(const struct hwt_an_last *l, struct hwt_an_last_end *e)
{
	*e = l->end;
}

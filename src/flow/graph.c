/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The block decoder's fast path: blocks straight from the block graph
 * (bcache.h), many per call.
 *
 * A node is what a cached walk from its IP did (the block, the return
 * addresses pushed, the instruction that needs trace at the end), made by
 * the general path the first time (block.c). Replaying it is what the walk
 * would do again, since cache entries never change. Here nodes are
 * replayed one after the other, following their links (exact for
 * conditional branches and fall-throughs, last-target guesses for returns
 * and indirect branches), while nothing but branches happens: no event in
 * progress or pending, no error, no ticks. Each branch takes what the
 * general path's query would give it (block_int.h's blk_take_exit()):
 * conditional branches and compressed returns a bit of the TNT cache,
 * used here directly; with the query decoder in direct mode (qry.h), the
 * cache is refilled from TNT packets and indirect branches take their
 * TIP's target straight from the packets, without making events. Anything
 * else (the status after the last bit not clean, a packet that is not a
 * TNT or TIP, an unknown node) hands over to the general path, which goes
 * on from the same state.
 *
 * Two consumers: hwt_blk_next_batch() stores the blocks; hwt_blk_fold_next()
 * folds them into canonical blocks and AFL edges without storing them.
 * tests/unit/test_flow_graph.c and fuzz/fuzz_flow.c hold both against the
 * general path.
 */
#include <string.h>

#include <hwt/flow.h>

#include "flow/block_int.h"

/*
 * Does the next block start with a cached walk (as in blk_proceed(): no
 * error deferred, no event, tracing enabled) from a graph node, with the
 * last query clean and no ticks to make? Returns the node or
 * HWT_BC_NO_NODE. The cache must be current (blk_cache_check()).
 */
static inline uint32_t blk_plain_node(const struct hwt_blk_decoder *d)
{
	if (!d->use_graph || d->deferred || d->process_event ||
	    d->process_insn || d->status || !d->enabled ||
	    (d->config.flags & HWT_BLK_ENABLE_TICK))
		return HWT_BC_NO_NODE;
	return hwt_bcache_node_find(&d->bcache, d->ip);
}

/*
 * A run: replaying nodes one after the other. Its state is kept here (in
 * registers, as the loops below make no calls on the way of a
 * conditional branch): the IP, the TNT cache, whose bits are used
 * directly (as hwt_qry_cond_() does), and the node. The query decoder is
 * in direct mode (hwt_qry_direct_*, if it can be) in a separate struct
 * hwt_qry_direct, in memory. Before anything else asks the query layer
 * or the general path, the state is written back (run_put()), and read
 * again after (run_get()).
 */
struct run {
	struct hwt_blk_decoder *d;
	struct hwt_bc_node *nodes;
	struct hwt_bc_node *nd;	/* the node at @ip, or the one just left */
	uint64_t ip, tnt, index;
	unsigned slot;		/* the link @nd was left through */
	int direct;		/* the query decoder is in direct mode */
};

static inline void run_get(struct run *r, struct hwt_qry_direct *x)
{
	struct hwt_qry_decoder *q = r->d->qry;

	r->ip = r->d->ip;
	r->tnt = q->tnt;
	r->index = q->tnt_index;
	r->direct = hwt_qry_direct_begin_(q, x);
}

static inline void run_init(struct run *r, struct hwt_blk_decoder *d,
			    uint32_t node, struct hwt_qry_direct *x)
{
	r->d = d;
	r->nodes = d->bcache.nodes;
	r->nd = &r->nodes[node];
	r->slot = 0;
	run_get(r, x);
}

static inline void run_put(struct run *r, struct hwt_qry_direct *x)
{
	r->d->ip = r->ip;
	r->d->qry->tnt_index = r->index;
	if (r->direct) {
		hwt_qry_direct_end_(r->d->qry, x);
		r->direct = 0;
	}
}

/*
 * After @r->nd's block (at @r->ip): its pushes, then its exit if it needs
 * nothing but TNT bits, or a TIP in direct mode. Returns 1 with @r->ip at
 * the next block and @r->slot set; 2 as 1 but the TNT cache ran empty and
 * the status may not be clean (an event or the end may be next: see
 * blk_after_block()); or 0 if the exit needs the general path.
 */
static inline __attribute__((always_inline)) int
run_exit(struct run *r, struct hwt_qry_direct *x)
{
	const struct hwt_bc_node *nd = r->nd;
	struct blk_retstack *rs = &r->d->retstack;
	struct hwt_qry_decoder *q = r->d->qry;

	if (__builtin_expect(nd->npush != 0, 0)) {
		const uint64_t *p = &r->d->bcache.pushes[nd->push];

		for (unsigned i = 0; i < nd->npush; ++i)
			retstack_push(rs, p[i]);
	}
	r->slot = 0;
	if (__builtin_expect(!r->index, 0) &&
	    (nd->exit == HWT_BCX_COND || nd->exit == HWT_BCX_RETURN)) {
		/* What hwt_qry_cond_slow_() does first. (Not for a TIP: an
		 * indirect branch caches one TNT itself, then wants a TIP.) */
		if (r->direct) {
			r->index = hwt_qry_direct_tnt_(q, x);
		} else if (q->event.type == HWT_EV_TNT) {
			q->tnt_index = 0;
			r->index = hwt_qry_refill_(q);
		}
		r->tnt = q->tnt;
	}
	switch (nd->exit) {
	case HWT_BCX_COND:
		/* hwt_qry_cond_() while the cache holds bits. */
		if (__builtin_expect(!r->index, 0))
			return 0;
		r->slot = (r->tnt & r->index) != 0;
		r->index >>= 1;
		r->ip = r->slot ? nd->target : nd->next;
		break;
	case HWT_BCX_NONE:
		r->ip = nd->next;
		return 1;
	case HWT_BCX_RETURN:
		if (r->index) {
			/* A compressed return, as blk_take_exit(). */
			if (!(r->tnt & r->index) || rs->top == rs->bottom)
				return 0;
			r->index >>= 1;
			(void) retstack_pop(rs, &r->ip);
			break;
		}
		/* No TNT: blk_take_exit() takes a TIP, as blk_indirect(). */
		/* fall through */
	default:
		if (!r->direct || !hwt_qry_direct_tip_(q, x, &r->ip))
			return 0;
		break;
	}
	if (__builtin_expect(r->index != 0, 1))
		return 1;
	if (r->direct)
		return hwt_qry_direct_clean_(q, x) ? 1 : 2;
	return hwt_qry_status_empty_(q) ? 2 : 1;
}

/*
 * The exit of node @nd the general way (after run_exit() said 0), with
 * the state in @d (run_put(), @d->ip at the block's last instruction).
 * Returns 0 to go on, 1 if the query status is not clean, so the general
 * path must look first (blk_after_block()), or an error. Out of line: the
 * run's state must not escape to memory.
 */
static int __attribute__((noinline))
node_exit_general(struct hwt_blk_decoder *d, const struct hwt_bc_node *nd)
{
	int status = blk_take_exit(d, nd->exit, nd->target, nd->next, 1);

	if (status < 0)
		return status;
	return d->status ? 1 : 0;
}

/* run_exit() said 0: see node_exit_general(); on 0 the run goes on. */
static inline __attribute__((always_inline)) int
run_exit_general(struct run *r, struct hwt_qry_direct *x)
{
	const struct hwt_bc_node *nd = r->nd;
	int status;

	r->ip = nd->end_ip;
	run_put(r, x);
	status = node_exit_general(r->d, nd);
	if (status)
		return status;
	run_get(r, x);
	if (nd->exit == HWT_BCX_COND)
		r->slot = r->ip == nd->target;
	return 0;
}

/*
 * run_exit() said 2: the TNT cache ran empty. Returns 0 if the status is
 * clean after all (the run goes on), else 1 with the state in @d and its
 * status set, for blk_after_block().
 */
static inline __attribute__((always_inline)) int
run_empty(struct run *r, struct hwt_qry_direct *x)
{
	int status;

	run_put(r, x);
	status = hwt_qry_status_empty_(r->d->qry);
	if (status) {
		r->d->status = status;
		return 1;
	}
	run_get(r, x);
	return 0;
}

/*
 * Follow @r->nd's link to the node at @r->ip: 1, or 0 if it is not known.
 * Links of conditional branches and fall-throughs are exact (a node never
 * changes, and all go together); of returns and indirect branches, the
 * last target, a guess to check.
 */
static inline __attribute__((always_inline)) int run_link(struct run *r)
{
	uint32_t node = r->nd->succ[r->slot];
	struct hwt_bc_node *next;

	if (__builtin_expect(node == HWT_BC_NO_NODE, 0))
		return 0;
	next = &r->nodes[node];
	if (r->nd->exit >= HWT_BCX_RETURN && next->ip != r->ip)
		return 0;
	r->nd = next;
	return 1;
}

/* The node at @r->ip by lookup, linked from @r->nd: 1, or 0 if none. */
static inline __attribute__((always_inline)) int run_find(struct run *r)
{
	uint32_t node = hwt_bcache_node_find(&r->d->bcache, r->ip);

	if (node == HWT_BC_NO_NODE)
		return 0;
	r->nd->succ[r->slot] = node;
	r->nd = &r->nodes[node];
	return 1;
}

/* The block of node @nd, starting at @ip, as hwt_blk_next() makes it. */
static inline __attribute__((always_inline)) void
node_block(uint8_t speculative, const struct hwt_bc_node *nd, uint64_t ip,
	   struct hwt_block *block)
{
	memset(block, 0, sizeof(*block));
	block->ip = ip;
	block->end_ip = nd->end_ip;
	block->ninsn = nd->ninsn;
	block->mode = nd->mode;
	block->iclass = nd->iclass;
	block->speculative = speculative;
}
/*
 * Blocks from graph nodes into @blocks[*@k ...], starting at @node.
 * Returns 0 when the next block needs the general path (or @max blocks
 * are done), else the status of the last block.
 */
static int blk_run(struct hwt_blk_decoder *d, struct hwt_block *blocks,
		   size_t max, size_t *k, uint32_t node)
{
	const uint8_t speculative = d->speculative;
	struct hwt_qry_direct x;
	struct hwt_block *block;
	struct run r;
	size_t i = *k;
	int status;

	run_init(&r, d, node, &x);
	for (;;) {
		/* The hot loop: see hwt_blk_fold_next(). */
		while (r.nd->exit == HWT_BCX_COND && r.index > 1 &&
		       !r.nd->npush && i + 1 < max) {
			uint32_t next = r.nd->succ[(r.tnt & r.index) != 0];

			if (__builtin_expect(next == HWT_BC_NO_NODE, 0))
				break;
			node_block(speculative, r.nd, r.nd->ip, &blocks[i++]);
			r.index >>= 1;
			r.nd = &r.nodes[next];
		}

		r.ip = r.nd->ip;
		block = &blocks[i++];
		node_block(speculative, r.nd, r.nd->ip, block);
		status = run_exit(&r, &x);
		if (__builtin_expect(status != 1, 0)) {
			status = status ? run_empty(&r, &x) :
					  run_exit_general(&r, &x);
			if (status) {
				*k = i;
				/* Anything but 0 ends the run, but so may 0
				 * (with an event in progress, bound later). */
				return status < 0 ? status :
						    blk_after_block(d, block);
			}
		}
		if (i == max)
			break;
		if (!run_link(&r) && !run_find(&r))
			break;
	}
	run_put(&r, &x);
	*k = i;
	return 0;
}

int hwt_blk_next_batch(struct hwt_blk_decoder *d, struct hwt_block *blocks,
		       size_t max, size_t *n)
{
	size_t k = 0;
	int status = 0;

	if (!d || !blocks || !n || !max)
		return -HWT_ERR_INVALID;

	/* The image does not change while we are here. */
	if (d->use_graph)
		blk_cache_check(d);
	while (k < max) {
		uint32_t node = blk_plain_node(d);

		if (node == HWT_BC_NO_NODE) {
			/* The general path (which adds nodes). */
			status = hwt_blk_next(d, &blocks[k++]);
		} else {
			status = blk_run(d, blocks, max, &k, node);
		}
		if (status)
			break;
	}
	*n = k;
	return status;
}

/* ------------------------------------------------------------------ */
/* Canonical blocks and coverage                                       */
/* ------------------------------------------------------------------ */

void hwt_blk_fold_init(struct hwt_blk_fold *fold, uint8_t *map)
{
	if (!fold)
		return;
	memset(fold, 0, sizeof(*fold));
	fold->map = map;
}

/* The edge into a block at AFL location @loc; the new previous one. */
static inline __attribute__((always_inline)) uint16_t
fold_edge(uint8_t *map, uint16_t prev, uint16_t loc)
{
	uint8_t *cell = &map[loc ^ prev];

	*cell = (uint8_t) (*cell + (*cell != 0xff));
	return (uint16_t) (loc >> 1);
}

int hwt_blk_fold_end(struct hwt_blk_fold *fold, struct hwt_block *ended)
{
	if (!fold || !fold->open)
		return 0;
	fold->open = 0;
	fold->nblocks += 1;
	if (fold->map)
		fold->prev = fold_edge(fold->map, fold->prev,
				       blk_afl_loc(fold->block.ip));
	if (ended)
		*ended = fold->block;
	return 1;
}

/* Does @b's last instruction run on without trace? Sets *@next. */
static int blk_runs_on(const struct hwt_image *image,
		       const struct hwt_block *b, uint64_t *next)
{
	struct hwt_insn_info info;
	const uint8_t *code;
	size_t avail;

	if ((b->iclass != HWT_IC_OTHER && b->iclass != HWT_IC_CALL &&
	     b->iclass != HWT_IC_JUMP) || b->truncated)
		return 0;
	if (hwt_image_read(image, b->end_ip, &code, &avail) < 0 ||
	    hwt_insn_decode(&info, code, avail, b->end_ip, b->mode) < 0)
		return 0;
	if (info.iclass == HWT_IC_OTHER) {
		*next = b->end_ip + info.size;
		return 1;
	}
	if (info.flags & HWT_INSN_DIRECT) {
		*next = info.target;
		return 1;
	}
	return 0;
}

int hwt_blk_fold_block(const struct hwt_blk_decoder *d,
		       struct hwt_blk_fold *fold,
		       const struct hwt_block *block, struct hwt_block *ended)
{
	int flags = HWT_BLK_FOLD_NEW;

	if (!d || !fold || !block)
		return -HWT_ERR_INVALID;
	if (!block->ninsn)
		return 0;

	fold->ninsn += block->ninsn;
	if (fold->open && fold->runs_on && fold->next == block->ip &&
	    fold->block.mode == block->mode &&
	    fold->block.speculative == block->speculative &&
	    !block->truncated) {
		fold->block.end_ip = block->end_ip;
		fold->block.ninsn += block->ninsn;
		fold->block.iclass = block->iclass;
		flags = 0;
	} else {
		if (hwt_blk_fold_end(fold, ended))
			flags |= HWT_BLK_FOLD_ENDED;
		fold->block = *block;
		fold->open = 1;
	}
	fold->runs_on = (uint8_t) blk_runs_on(d->image, block, &fold->next);
	return flags;
}

/*
 * Node blocks run on exactly when blk_runs_on() says so: a walk stops
 * without trace (HWT_BCX_NONE) only after an instruction that goes on (a
 * "decode" entry of class OTHER, PTWRITE, or a direct CALL or JUMP: its
 * target, or fall-through, is @next) or after a trampoline (class
 * UNKNOWN); branches that need trace are the other exits.
 */
static inline int node_runs_on(const struct hwt_bc_node *nd)
{
	return nd->exit == HWT_BCX_NONE &&
	       (nd->iclass == HWT_IC_OTHER || nd->iclass == HWT_IC_CALL ||
		nd->iclass == HWT_IC_JUMP);
}

/*
 * A fold as a run makes it: the open canonical block (from node @first, or
 * the caller's as a node, with @n instructions; @total: those of the
 * blocks before), the count of ended ones and the map.
 */
struct fold_run {
	const struct hwt_bc_node *first;
	uint64_t total, nblocks;
	uint32_t n;
	uint16_t prev;
	uint8_t *map;
};

/* The block of node @nd opens a canonical block: the open one ends. */
static inline __attribute__((always_inline)) void
fold_open(struct fold_run *f, const struct hwt_bc_node *nd)
{
	f->total += f->n;
	f->nblocks += 1;
	if (f->map)
		f->prev = fold_edge(f->map, f->prev, f->first->loc);
	f->first = nd;
	f->n = nd->ninsn;
}

int hwt_blk_fold_next(struct hwt_blk_decoder *d, struct hwt_blk_fold *fold,
		      struct hwt_block *last)
{
	/* The caller's open block, as a node (its location and mode). */
	struct hwt_bc_node shadow;
	struct hwt_qry_direct x;
	const struct hwt_bc_node *nd;
	struct fold_run f;
	unsigned turns = 1u << 16;
	uint8_t speculative;
	uint32_t node;
	struct run r;
	int status;

	if (!d || !fold || !last)
		return -HWT_ERR_INVALID;
	if (d->use_graph)
		blk_cache_check(d);
	node = blk_plain_node(d);
	if (node == HWT_BC_NO_NODE)
		return 0;

	speculative = d->speculative;
	run_init(&r, d, node, &x);
	memset(&shadow, 0, sizeof(shadow));
	shadow.loc = blk_afl_loc(fold->block.ip);
	shadow.mode = fold->block.mode;
	f.first = &shadow;
	f.map = fold->map;
	f.prev = fold->prev;
	f.nblocks = fold->nblocks;
	f.n = fold->open ? fold->block.ninsn : 0;
	f.total = fold->ninsn - f.n;

	/* The first block joins the caller's open one, or opens one. */
	nd = r.nd;
	if (fold->open && fold->runs_on && fold->next == nd->ip &&
	    fold->block.speculative == speculative &&
	    fold->block.mode == nd->mode) {
		f.n += nd->ninsn;
	} else if (fold->open) {
		fold_open(&f, nd);
	} else {
		f.first = nd;
		f.n = nd->ninsn;
	}

	/* Each turn: the exit of @nd (folded), then fold the next block,
	 * as hwt_blk_fold_block(). */
	for (;;) {
		/*
		 * The hot loop: conditional branches, with a bit in the TNT
		 * cache that is not its last, to a known node. What the
		 * general turn below does, for that case: a new block each
		 * time (a conditional branch does not run on).
		 */
		while (r.nd->exit == HWT_BCX_COND && r.index > 1 &&
		       !r.nd->npush) {
			uint32_t k = r.nd->succ[(r.tnt & r.index) != 0];

			if (__builtin_expect(k == HWT_BC_NO_NODE, 0))
				break;
			r.index >>= 1;
			r.nd = &r.nodes[k];
			fold_open(&f, r.nd);
		}

		nd = r.nd;
		r.ip = nd->ip;
		status = run_exit(&r, &x);
		if (__builtin_expect(status != 1, 0)) {
			status = status ? run_empty(&r, &x) :
					  run_exit_general(&r, &x);
			if (status) {
				node_block(speculative, nd, nd->ip, last);
				if (status > 0)
					status = blk_after_block(d, last);
				goto out;
			}
		}
		if (!run_link(&r) && !run_find(&r))
			break;
		/* Code that needs no trace may loop: come back now and then. */
		if (!--turns)
			break;
		/* It runs on from @nd (node_runs_on(): @next is its IP). */
		if (__builtin_expect(node_runs_on(nd), 0) &&
		    r.nd->mode == f.first->mode)
			f.n += r.nd->ninsn;
		else
			fold_open(&f, r.nd);
	}
	run_put(&r, &x);
	node_block(speculative, nd, nd->ip, last);
	status = 0;
out:
	fold->ninsn = f.total + f.n;
	fold->nblocks = f.nblocks;
	fold->prev = f.prev;
	if (f.first != &shadow) {
		memset(&fold->block, 0, sizeof(fold->block));
		fold->block.ip = f.first->ip;
		fold->block.mode = f.first->mode;
		fold->block.speculative = speculative;
	}
	fold->block.end_ip = nd->end_ip;
	fold->block.iclass = nd->iclass;
	fold->block.ninsn = f.n;
	fold->open = 1;
	fold->runs_on = (uint8_t) node_runs_on(nd);
	fold->next = nd->next;
	return status;
}

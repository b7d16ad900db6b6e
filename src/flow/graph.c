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
 * folds them into canonical blocks and AFL edges without storing them,
 * in a loop of its own (graph_fold.h) that takes the usual steps itself
 * and leaves the others to run_step().
 * tests/unit/test_flow_graph.c and fuzz/fuzz_flow.c hold both against the
 * general path.
 */
#include <stdlib.h>
#include <string.h>

#include <hwt/flow.h>

#include "common/table.h"
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
 * A run: replaying nodes one after the other. Its state is kept here, in
 * registers (nothing on the way of a branch calls out): the IP, the TNT
 * cache, whose bits are used directly (as hwt_qry_cond_() does), the node,
 * and the query decoder in direct mode (qry.h), if it can be. Before
 * anything else asks the query layer or the general path, the state is
 * written back (run_put()), and read again after (run_get()).
 */
struct run {
	struct hwt_blk_decoder *d;
	struct hwt_bc_node *nodes;
	struct hwt_bc_node *nd;	/* the node at @ip, or the one just left */
	uint64_t ip, tnt, index;
	unsigned slot;		/* the link @nd was left through */
	/* run_step() asked the query decoder the general way (which may
	 * take timing packets), not only in direct mode. */
	uint8_t general;
	struct hwt_qry_direct x;
};

static inline __attribute__((always_inline)) void run_get(struct run *r)
{
	struct hwt_qry_decoder *q = r->d->qry;

	r->ip = r->d->ip;
	r->tnt = q->tnt;
	r->index = q->tnt_index;
	(void) hwt_qry_direct_begin_(q, &r->x);
}

static inline __attribute__((always_inline)) void
run_init(struct run *r, struct hwt_blk_decoder *d, uint32_t node)
{
	r->d = d;
	r->nodes = d->bcache.nodes;
	r->nd = &r->nodes[node];
	r->slot = 0;
	run_get(r);
}

static inline __attribute__((always_inline)) void run_put(struct run *r)
{
	struct hwt_qry_decoder *q = r->d->qry;

	r->d->ip = r->ip;
	q->tnt = r->tnt;
	q->tnt_index = r->index;
	if (r->x.moved) {
		/* A copy: @r->x stays in registers. */
		struct hwt_qry_direct x = r->x;

		hwt_qry_direct_end_(q, &x);
		r->x.moved = 0;
	}
}

/*
 * The exit of node @nd the general way, with the state in @d (run_put(),
 * @d->ip at the block's last instruction). Returns 0 to go on, 1 if the
 * query status is not clean, so the general path must look first
 * (blk_after_block()), or an error. Out of line: the run's state must not
 * escape to memory.
 */
static int __attribute__((noinline))
node_exit_general(struct hwt_blk_decoder *d, const struct hwt_bc_node *nd)
{
	int status = blk_take_exit(d, nd->exit, nd->target, nd->next, 1);

	if (status < 0)
		return status;
	return d->status ? 1 : 0;
}

/* The TNT cache ran empty: the status, the general way (0: clean). */
static int __attribute__((noinline))
node_status_empty(struct hwt_blk_decoder *d)
{
	int status = hwt_qry_status_empty_(d->qry);

	if (status)
		d->status = status;
	return status ? 1 : 0;
}

/* The TNT cache is empty and the next packet is a TNT: take its bits
 * into the cache, as hwt_qry_cond_slow_() does first. */
static inline __attribute__((always_inline)) void run_refill(struct run *r)
{
	r->tnt = r->x.val;
	r->index = r->x.top;
	hwt_qry_direct_take_tnt_(&r->x);
}

/* Is the link of an exit @op a guess to check (returns and indirect
 * branches: the last targets), not exact (conditional branches and
 * fall-throughs)? */
static inline int exit_guessed(unsigned op)
{
	return (op & HWT_BCO_EXIT) >= HWT_BCX_RETURN;
}

/* A new last target @link, at @ip, of the return or indirect branch at
 * @nd: the one before is kept as the other guess (succ[1]). */
static inline void node_guess_new(struct hwt_bc_node *nd, uint32_t link,
				  uint64_t ip)
{
	nd->succ[1] = nd->succ[0];
	nd->next = nd->target;
	nd->succ[0] = link;
	nd->target = ip;
}

/*
 * Is the return address @ip, popped with push index @from, the one that
 * push made in this graph (not one from before the graph started over, or
 * from another image's)? Then bc->pushnode[@from] is the node at @ip, if
 * known: it is only set so. Checked against the push's address, a load
 * beside the link's, not the node's, which waits for it.
 */
static inline int ret_site(const struct hwt_bcache *bc, uint32_t from,
			   uint64_t ip)
{
	return from < bc->npushes && bc->pushes[from] == ip;
}

/* What run_step() did. */
enum {
	STEP_END,	/* no node known at @r->ip (state in @r) */
	STEP_NEXT,	/* @r->nd is the next node, after a TNT bit that was
			 * not the cache's last */
	STEP_TURN,	/* ... after anything else */
	STEP_STATUS	/* a status to look at: state in @d, see *@status */
};

/*
 * Take the exit of @r->nd: its pushes, then what the general path's query
 * would give it (blk_take_exit()): conditional branches and compressed
 * returns a bit of the TNT cache, refilled from the next TNT packet;
 * indirect branches and uncompressed returns the next TIP's target; then
 * follow the link to the next node (exact for conditional branches and
 * fall-throughs, a guess to check for the others), or look it up.
 * Whatever direct mode cannot answer (the next packet not what is asked
 * for) is asked the general way, from the same state; and where the TNT
 * cache runs empty and the next packet is not a TNT or TIP, the general
 * way says whether an event or the end is next. Returns STEP_*; with
 * STEP_STATUS, *@status is 1 (the status is not clean: the block needs
 * blk_after_block()) or an error.
 */
static inline __attribute__((always_inline)) int
run_step(struct run *r, int *status)
{
	struct hwt_bc_node *nd = r->nd;
	struct blk_retstack *rs;
	unsigned op = nd->op;
	uint32_t k, from = UINT32_MAX;
	int err;

	/* The hot case: a bit of the cache that is not its last. */
	if (__builtin_expect(op == HWT_BCX_COND && r->index > 1, 1)) {
		r->slot = (r->tnt & r->index) != 0;
		r->index >>= 1;
		k = nd->succ[r->slot];
		if (__builtin_expect(k != HWT_BC_NO_NODE, 1)) {
			r->nd = hwt_bc_link_to(r->nodes, k);
			return STEP_NEXT;
		}
		r->ip = r->slot ? nd->target : nd->next;
		goto find;
	}

	if (__builtin_expect(op & HWT_BCO_PUSH, 0)) {
		const uint64_t *p = &r->d->bcache.pushes[nd->push];

		rs = &r->d->retstack;
		for (unsigned i = 0; i < nd->npush; ++i)
			retstack_push_from(rs, p[i], nd->push + i);
	}
	r->slot = 0;
	switch (op & HWT_BCO_EXIT) {
	case HWT_BCX_NONE:
		r->ip = nd->next;
		k = nd->succ[0];
		if (__builtin_expect(k == HWT_BC_NO_NODE, 0))
			goto find;
		r->nd = hwt_bc_link_to(r->nodes, k);
		return STEP_TURN;
	case HWT_BCX_COND:
		if (!r->index) {
			if (r->x.kind != HWT_QRY_DX_TNT)
				goto general;
			run_refill(r);
		}
		r->slot = (r->tnt & r->index) != 0;
		r->index >>= 1;
		r->ip = r->slot ? nd->target : nd->next;
		break;
	case HWT_BCX_RETURN:
		if (!r->index) {
			/* No TNT: blk_take_exit() takes a TIP. */
			if (r->x.kind != HWT_QRY_DX_TNT)
				goto tip;
			run_refill(r);
		}
		/* A compressed return, as blk_take_exit(). */
		rs = &r->d->retstack;
		if (!(r->tnt & r->index) || rs->top == rs->bottom)
			goto general;
		r->index >>= 1;
		(void) retstack_pop(rs, &r->ip);
		from = rs->from[rs->top];
		if (__builtin_expect(!r->index, 0) &&
		    r->x.kind == HWT_QRY_DX_OTHER)
			break;
		/* The node at the call site's return address. */
		if (ret_site(&r->d->bcache, from, r->ip)) {
			k = r->d->bcache.pushnode[from];
			if (k != HWT_BC_NO_NODE) {
				r->nd = hwt_bc_link_to(r->nodes, k);
				return STEP_TURN;
			}
		}
		goto find;
	default:
	tip:
		/* (An indirect branch caches one TNT itself, then wants a
		 * TIP: the general path's.) */
		if (r->x.kind != HWT_QRY_DX_TIP)
			goto general;
		r->ip = r->x.val;
		hwt_qry_direct_take_tip_(&r->x);
		break;
	}
	if (__builtin_expect(!r->index, 0) && r->x.kind == HWT_QRY_DX_OTHER) {
		/* An event or the end may be next. */
		r->general = 1;
		run_put(r);
		err = node_status_empty(r->d);
		if (err) {
			*status = err;
			return STEP_STATUS;
		}
		run_get(r);
	}
	goto link;

general:
	r->general = 1;
	r->ip = nd->end_ip;
	run_put(r);
	err = node_exit_general(r->d, nd);
	if (err) {
		*status = err;
		return STEP_STATUS;
	}
	run_get(r);
	if ((op & HWT_BCO_EXIT) == HWT_BCX_COND)
		r->slot = r->ip == nd->target;
link:
	k = nd->succ[r->slot];
	if (k != HWT_BC_NO_NODE &&
	    (!exit_guessed(op) || nd->target == r->ip)) {
		r->nd = hwt_bc_link_to(r->nodes, k);
		return STEP_TURN;
	}
	/* An indirect branch's other recent target (its slot is always 0:
	 * succ[1] keeps the one before). */
	if (exit_guessed(op)) {
		k = nd->succ[1];
		if (k != HWT_BC_NO_NODE && nd->next == r->ip) {
			node_guess_new(nd, k, r->ip);
			r->nd = hwt_bc_link_to(r->nodes, k);
			return STEP_TURN;
		}
	}
find:
	k = hwt_bcache_node_find(&r->d->bcache, r->ip);
	if (k == HWT_BC_NO_NODE)
		return STEP_END;
	if (ret_site(&r->d->bcache, from, r->ip))
		r->d->bcache.pushnode[from] = hwt_bc_link(r->nodes, k);
	if (exit_guessed(op))
		node_guess_new(nd, hwt_bc_link(r->nodes, k), r->ip);
	else
		nd->succ[r->slot] = hwt_bc_link(r->nodes, k);
	r->nd = &r->nodes[k];
	return STEP_TURN;
}

/* Where the packet after the next one (a TNT) starts, PADs skipped, as
 * the decoder reading one packet ahead gives its offset; at most @stop. */
static inline const uint8_t *run_ahead(const struct hwt_qry_direct *x,
				       const uint8_t *stop)
{
	const uint8_t *p = x->after;

	while (p < stop && !*p)
		++p;
	return p;
}

/* The block of node @nd, as hwt_blk_next() makes it. */
static inline __attribute__((always_inline)) void
node_block(uint8_t speculative, const struct hwt_bc_node *nd,
	   struct hwt_block *block)
{
	hwt_bcache_node_block(nd, block);
	block->speculative = speculative;
}

/* blk_run(): the batch's run, the fold's loop (graph_fold.h) making a
 * block of every node. */
#define FOLD_BLOCKS 1
#define FOLD_MAP 0
#define FOLD_TALLY 0
#define FOLD_STOPS 0
#define FOLD_RUN blk_run
#include "flow/graph_fold.h"
#undef FOLD_RUN
#undef FOLD_STOPS
/* blk_run_until(): the same, stopping where hwt_blk_next_batch_until()
 * must (a loop of its own: the checks cost blk_run() nothing). */
#define FOLD_STOPS 1
#define FOLD_RUN blk_run_until
#include "flow/graph_fold.h"
#undef FOLD_RUN
#undef FOLD_STOPS
#undef FOLD_TALLY
#undef FOLD_MAP
#undef FOLD_BLOCKS

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

/*
 * Has the decoder read ahead to a packet whose time (as hwt_blk_time()
 * gives it) is not the time it gives now? Then taking that packet moves
 * the time; the packets direct mode takes after it have its time.
 */
static int blk_time_ahead(const struct hwt_blk_decoder *d)
{
	const struct hwt_qry_decoder *q = d->qry;
	uint64_t now = 0, ahead = 0;
	uint32_t lm[2] = { 0, 0 }, lc[2] = { 0, 0 };
	int a = hwt_time_query_tsc(&q->last_time, &now, &lm[0], &lc[0]);
	int b = hwt_time_query_tsc(&q->evd.tt.time, &ahead, &lm[1], &lc[1]);

	return a != b || now != ahead || lm[0] != lm[1] || lc[0] != lc[1];
}

int hwt_blk_next_batch_until(struct hwt_blk_decoder *d,
			     struct hwt_block *blocks, size_t max, size_t *n,
			     uint64_t offset)
{
	const struct hwt_evt_decoder *e;
	const uint8_t *stop;
	uint64_t off;
	uint32_t node;
	size_t k = 0;
	int status;

	if (!d || !blocks || !n || !max)
		return -HWT_ERR_INVALID;

	if (d->use_graph)
		blk_cache_check(d);
	node = blk_plain_node(d);
	/* Already at the mark (or nowhere): one block, as hwt_blk_next(). */
	if (node == HWT_BC_NO_NODE || max == 1 ||
	    hwt_qry_get_offset(d->qry, &off) < 0 || off >= offset) {
		*n = 1;
		return hwt_blk_next(d, &blocks[0]);
	}
	e = &d->qry->evd;
	/* (Offsets count from @cur.begin.) */
	stop = offset < (uint64_t) (e->cur.end - e->cur.begin) ?
	       e->cur.begin + offset : e->cur.end;
	status = blk_run_until(d, blocks, max, &k, node, stop,
			       blk_time_ahead(d));
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

/*
 * One more hit of the edge at @cell, saturating. Nearly every hit is on a
 * counter already at 255 (gzip's and xz's traces 99.9%, python3's 96%, the
 * synthetic one's 86%): so a load and a branch that is predicted, and a
 * store only below 255. A store every block (cmp, adc on memory; or to a
 * byte never read where the counter is at 255, chosen by a cmov) cost
 * python3 4-8% more time, gzip and xz 2-4%; the synthetic trace, whose
 * 14% of hits below 255 come at random, pays 2-7% for the branch.
 */
static inline __attribute__((always_inline)) void fold_hit(uint8_t *cell)
{
	if (__builtin_expect(*cell != 0xff, 0))
		++*cell;
}

/* The edge into a block at AFL location @loc; the new previous one. */
static inline __attribute__((always_inline)) uint16_t
fold_edge(uint8_t *map, uint16_t prev, uint16_t loc)
{
	fold_hit(&map[loc ^ prev]);
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
		fold->block.size = block->size;
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

/* ------------------------------------------------------------------ */
/* The fold's memo                                                     */
/* ------------------------------------------------------------------ */

/*
 * A run of conditional branches folds into canonical blocks the same way
 * each time it is taken with the same bits: one block per branch, each
 * with its edge. So, as libxdc does, a fold takes up to
 * HWT_BC_MEMO_BITS bits at once from a node that is a conditional branch
 * (and pushes nothing): one lookup in a direct-mapped table keyed by the
 * node and the bits, then the counts and a few map increments. An entry
 * holds the node reached after @m bits (the run stops early at a node
 * that is not such a branch, or at a link not known yet), the
 * instructions of the blocks in between, and the edges that do not
 * depend on the blocks before: the first two do (the open canonical
 * block's location, and the previous one's), the others are in @cell.
 * A block reached that runs on without trace into the next node (a
 * direct jump, mostly) takes that node into it, as the fold's h_none
 * does, and the run goes on from there: in xz's trace, such nodes ended
 * a third of the runs. Links of conditional branches and of such nodes
 * never change once known, so neither does an entry; the table is
 * emptied with the graph (bcache.c).
 *
 * The memo costs a lookup in a table that does not stay in the cache, so
 * it is only asked where it pays: where a conditional branch refills the
 * TNT cache with FOLD_MEMO_MIN_BITS bits or more (a run of branches, as
 * in loops; not the few bits between indirect branches, which the hot
 * loop takes as fast), from nodes whose runs are longer than one block
 * (@nomemo). Bits left over are the hot loop's.
 *
 * The edges in @cell do not depend on anything before either, and an
 * AFL counter saturates at 255, so where the counts end up does not
 * depend on the order of the increments: min(255, their sum). So an
 * entry applied again only counts, and its cells go into the map once,
 * that many at a time, when the fold returns (fold_memo_flush()) or the
 * entry is made anew: hot loops cost one edge and a count per entry, not
 * up to HWT_BC_MEMO_BITS edges. And where an entry's cells are all at 255
 * when a fold first applies it, the fold does not count it at all. The
 * counts are in the fold's list (struct fold_dirty), the entry has its
 * place there (@dirty). (With the count in the entry, stored beside what
 * the next lookup reads, and without the test of 255, gzip's trace took
 * 0.32-0.36 s of user time, against 0.28-0.30 now.) Up to FOLD_DIRTY_MAX
 * entries are counted so in one fold; beyond, each application puts its
 * cells in the map (64 was too few for gzip's loops once the runs went
 * on through direct jumps: 5% of its time).
 */
enum {
	FOLD_MEMO_LOG2 = 12,
	FOLD_MEMO_MIN_BITS = 4,
	FOLD_MEMO_RUNS_ON = 8,
	FOLD_DIRTY_MAX = 254,
	/* (@dirty of an entry whose cells were all at 255 when the fold
	 * first applied it: on the list, not counted.) */
	FOLD_SATURATED = 255
};

/*
 * A fold as a run makes it: the open canonical block (from node @first, or
 * the caller's as a node, with @n instructions; @total: those of the
 * blocks before), the count of ended ones and the map.
 */
struct fold_run {
	const struct hwt_bc_node *first;
	uint64_t total, nblocks;
	uint32_t n;
	/* @first's AFL location and the previous one, as plain words (they
	 * are a block's work: no conversions, no loads through @first). */
	unsigned loc, prev;
	uint8_t *map;
	struct fold_dirty *dl;
};

/* Memo entries with a count (see fold_memo_apply()); apart, so that no
 * function out of line takes the fold's address (its fields are the
 * loop's, best kept in registers). */
struct fold_dirty {
	struct hwt_bc_memo *e[FOLD_DIRTY_MAX];
	uint64_t count[FOLD_DIRTY_MAX];
	unsigned n;
};

/* The block of node @nd opens a canonical block: the open one ends. */
static inline __attribute__((always_inline)) void
fold_open(struct fold_run *f, const struct hwt_bc_node *nd, int map)
{
	f->total += f->n;
	f->nblocks += 1;
	if (map) {
		fold_hit(&f->map[f->loc ^ f->prev]);
		f->prev = f->loc >> 1;
	}
	f->first = nd;
	f->loc = nd->loc;
	f->n = nd->ninsn;
}

static inline struct hwt_bc_memo *fold_memo_slot(struct hwt_bc_memo *memo,
						 uint32_t key)
{
	return &memo[(key * 0x9e3779b1u) >> (32 - FOLD_MEMO_LOG2)];
}

/* The table, made the first time (NULL: no memory, fold without). */
static struct hwt_bc_memo *fold_memo_get(struct hwt_bcache *bc)
{
	if (!bc->memo) {
		bc->memo = calloc((size_t) 1 << FOLD_MEMO_LOG2,
				  sizeof(*bc->memo));
		if (bc->memo) {
			bc->memo_mask = (1u << FOLD_MEMO_LOG2) - 1;
			hwt_table_touch(bc->memo, ((size_t) 1 <<
						    FOLD_MEMO_LOG2) *
						   sizeof(*bc->memo));
		}
	}
	return bc->memo;
}

/*
 * Make entry @e for @key: from node @first (a conditional branch, pushing
 * nothing) with the @c bits of @chunk (first highest), through the links.
 * A block reached may run on into the next node without trace (a node of
 * HWT_BCX_NONE | HWT_BCO_RUNS_ON, as the fold's h_none takes it): that
 * node is part of the same canonical block, and the run goes on from it,
 * FOLD_MEMO_RUNS_ON such nodes at most (code without trace may loop).
 */
static void __attribute__((noinline))
fold_memo_make(struct hwt_bc_memo *e, uint32_t key,
	       const struct hwt_bc_node *nodes, struct hwt_bc_node *first,
	       unsigned chunk, unsigned c)
{
	const struct hwt_bc_node *reached[HWT_BC_MEMO_BITS];
	uint32_t ninsn[HWT_BC_MEMO_BITS];
	const struct hwt_bc_node *nd = first;
	unsigned m = 0, j, ons = 0;

	memset(e, 0, sizeof(*e));
	e->key = key;
	while (m < c && (!m || nd->op == HWT_BCX_COND)) {
		uint32_t k = nd->succ[(chunk >> (c - 1 - m)) & 1];

		if (k == HWT_BC_NO_NODE) {
			/* Good for now; made again until it is known. */
			e->key = 0;
			break;
		}
		nd = &nodes[HWT_BC_LINK_NODE(k)];
		reached[m] = nd;
		ninsn[m++] = nd->ninsn;
		while (nd->op == (HWT_BCX_NONE | HWT_BCO_RUNS_ON) &&
		       ons < FOLD_MEMO_RUNS_ON) {
			const struct hwt_bc_node *on;

			k = nd->succ[0];
			if (k == HWT_BC_NO_NODE) {
				/* Made again until it is known (the
				 * fold's h_none learns it, after this
				 * entry). */
				e->key = 0;
				break;
			}
			on = &nodes[HWT_BC_LINK_NODE(k)];
			if (on->mode != reached[m - 1]->mode ||
			    ninsn[m - 1] + on->ninsn > UINT16_MAX)
				break;
			ninsn[m - 1] += on->ninsn;
			nd = on;
			++ons;
		}
	}
	e->m = (uint8_t) m;
	e->end = (uint32_t) (nd - nodes);
	/* One block, with all links known: the code after it, not the
	 * bits, ends the run, so the memo will never pay here. */
	if (e->key && m < 2)
		first->nomemo = 1;
	if (!m)
		return;
	e->open = (uint32_t) (reached[m - 1] - nodes);
	if (e->open != e->end)
		e->nopen = (uint16_t) ninsn[m - 1];
	e->loc1 = reached[0]->loc;
	for (j = 0; j + 1 < m; j++)
		e->ninsn += ninsn[j];
	if (m >= 2)
		e->prev = (uint16_t) (reached[m - 2]->loc >> 1);
	for (j = 2; j < m; j++)
		e->cell[j - 2] = (uint16_t) (reached[j - 1]->loc ^
					     (reached[j - 2]->loc >> 1));
}

/* The edges of @e's cells, @times each, into @map. */
static void fold_memo_cells(uint8_t *map, const struct hwt_bc_memo *e,
			    uint64_t times)
{
	for (unsigned j = 0; j + 2 < e->m; j++) {
		uint8_t *cell = &map[e->cell[j]];
		uint64_t v = *cell + times;

		*cell = (uint8_t) (v > 0xff ? 0xff : v);
	}
}

/* The counts of the entries applied go into @map (see above). */
static void fold_memo_flush(uint8_t *map, struct fold_dirty *dl)
{
	for (unsigned i = 0; i < dl->n; i++) {
		struct hwt_bc_memo *e = dl->e[i];

		if (dl->count[i])
			fold_memo_cells(map, e, dl->count[i]);
		e->dirty = 0;
	}
	dl->n = 0;
}

/* Entry @e, applied the first time in this fold: on the list, counted
 * from 1, or not counted if its cells are all at 255 already (the map
 * only grows while the fold runs). A full list: its cells into the map
 * now. */
static void __attribute__((noinline))
fold_memo_first(uint8_t *map, struct fold_dirty *dl, struct hwt_bc_memo *e)
{
	unsigned j = 0;
	int counted;

	if (dl->n == FOLD_DIRTY_MAX) {
		fold_memo_cells(map, e, 1);
		return;
	}
	while (j + 2 < e->m && map[e->cell[j]] == 0xff)
		j++;
	/* (A cell below 255: counted.) */
	counted = j + 2 < e->m;
	dl->count[dl->n] = (uint64_t) counted;
	dl->e[dl->n++] = e;
	e->dirty = counted ? (uint8_t) dl->n : FOLD_SATURATED;
}

/* Fold entry @e into @f: @e->m blocks, each a new canonical block, the
 * last one still open: from node @end, or from @e->open (of @nodes) if it
 * runs on into @end. */
static inline __attribute__((always_inline)) void
fold_memo_apply(struct fold_run *f, struct hwt_bc_memo *e,
		const struct hwt_bc_node *nodes,
		const struct hwt_bc_node *end, int map)
{
	f->total += f->n + e->ninsn;
	f->nblocks += e->m;
	if (map) {
		fold_hit(&f->map[f->loc ^ f->prev]);
		if (e->m >= 2) {
			fold_hit(&f->map[e->loc1 ^ (f->loc >> 1)]);
			f->prev = e->prev;
		} else {
			f->prev = f->loc >> 1;
		}
		/* The cells: counted (255 is as good as more). */
		if (e->m >= 3 && e->dirty != FOLD_SATURATED) {
			if (e->dirty)
				f->dl->count[e->dirty - 1]++;
			else
				fold_memo_first(f->map, f->dl, e);
		}
	}
	if (__builtin_expect(e->open == e->end, 1)) {
		f->first = end;
		f->n = end->ninsn;
	} else {
		f->first = &nodes[e->open];
		f->n = e->nopen;
	}
	f->loc = f->first->loc;
}

/*
 * Refill the TNT cache from the next packet, as run_step() does for the
 * conditional branch of @r->nd, then take its bits a memo entry at a
 * time while the nodes reached are conditional branches the memo takes.
 * Whatever is left, the fold's handlers take.
 */
static inline __attribute__((always_inline)) void
fold_memo_run(struct run *r, struct fold_run *f, struct hwt_bc_memo *memo,
	      const int map)
{
	struct hwt_bc_node *nd = r->nd;

	run_refill(r);
	do {
		struct hwt_bc_memo *e;
		unsigned hi, c, chunk;
		uint32_t key;
		int ends;

		/* The next @c bits of the cache, @hi + 1 in all. */
		hi = 63u - (unsigned) __builtin_clzll(r->index);
		c = hi < HWT_BC_MEMO_BITS ? hi + 1 : HWT_BC_MEMO_BITS;
		chunk = (unsigned) (r->tnt >> (hi + 1 - c)) & ((1u << c) - 1);
		chunk |= 1u << c;
		key = (uint32_t) (nd - r->nodes) << 7 | chunk;
		e = fold_memo_slot(memo, key);
		if (__builtin_expect(e->key != key, 0)) {
			if (e->dirty && e->dirty != FOLD_SATURATED) {
				/* Still on the dirty list: harmless there
				 * once its count is 0. */
				fold_memo_cells(f->map, e,
						f->dl->count[e->dirty - 1]);
				f->dl->count[e->dirty - 1] = 0;
			}
			fold_memo_make(e, key, r->nodes, nd, chunk, c);
		}
		/*
		 * Taking the cache's last bit, run_step() asks whether the
		 * status is clean: if that is not known here, it takes the
		 * bits one by one.
		 */
		ends = e->m == hi + 1;
		if (!e->m || (ends && r->x.kind == HWT_QRY_DX_OTHER))
			return;
		r->index >>= e->m;
		r->nd = &r->nodes[e->end];
		fold_memo_apply(f, e, r->nodes, r->nd, map);
		if (ends)
			return;
		nd = r->nd;
	} while (nd->op == HWT_BCX_COND && !nd->nomemo &&
		 r->index >= 1u << (FOLD_MEMO_MIN_BITS - 1));
}

/* fold_run_map() and fold_run_nomap(): the fold's loop, with the map and
 * without (a computed goto keeps it from being inlined with a constant). */
#define FOLD_BLOCKS 0
#define FOLD_STOPS 0
#define FOLD_TALLY 0
#define FOLD_MAP 1
#define FOLD_RUN fold_run_map
#include "flow/graph_fold.h"
#undef FOLD_MAP
#undef FOLD_RUN
#define FOLD_MAP 0
#define FOLD_RUN fold_run_nomap
#include "flow/graph_fold.h"
#undef FOLD_MAP
#undef FOLD_RUN
#undef FOLD_TALLY
/* fold_run_tally(): counting the nodes too (hwt_blk_tally()), where speed
 * matters less than not giving every block out; a map or none. */
#define FOLD_TALLY 1
#define FOLD_MAP (fold->map != NULL)
#define FOLD_RUN fold_run_tally
#include "flow/graph_fold.h"
#undef FOLD_MAP
#undef FOLD_RUN
#undef FOLD_TALLY
#undef FOLD_STOPS
#undef FOLD_BLOCKS

int hwt_blk_fold_next(struct hwt_blk_decoder *d, struct hwt_blk_fold *fold,
		      struct hwt_block *last)
{
	uint32_t node;

	if (!d || !fold || !last)
		return -HWT_ERR_INVALID;
	if (d->use_graph)
		blk_cache_check(d);
	node = blk_plain_node(d);
	if (node == HWT_BC_NO_NODE)
		return 0;
	if (d->teller.ops)
		return d->bcache.tally ? fold_run_tally(d, fold, last, node) :
					 0;
	return fold->map ? fold_run_map(d, fold, last, node) :
			   fold_run_nomap(d, fold, last, node);
}

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The fold's loop (graph.c), included there four times: as FOLD_RUN,
 * with the map if FOLD_MAP is 1, else without, or, if FOLD_BLOCKS is 1,
 * the batch's run (blk_run()), which makes a block of every node where
 * the fold folds them, and, with FOLD_STOPS 1 as well, the batch's run
 * that stops where the time may move or the offset reaches a mark
 * (blk_run_until()). Only graph.c includes it, after the run's and the
 * fold's pieces (the batch's run needs only the run's). A fold with
 * FOLD_TALLY 1 also counts each node it takes, and the outcome of each
 * conditional jump at a node's end that it takes on to another node, in
 * the cache's tally (hwt_blk_tally()), all but the last node's (the
 * caller counts *@last); it does without the memo, which takes nodes
 * without passing them.
 */
/*
 * hwt_blk_fold_next() from node @node, with a map or without (FOLD_MAP).
 *
 * Each turn takes the exit of node @nd and folds the next block, as
 * hwt_blk_fold_block() would: a new canonical block, unless @nd runs on
 * into it (only a block without trace at its end can). The turns are
 * threaded: a handler per kind of node (its @op) takes the usual cases
 * and goes straight on to the next node's handler, chosen by the op in
 * the link (bcache.h), so a block costs a few compares, not a run_step()
 * and a loop's tests (about 15% fewer instructions, 5-10% less time on
 * python3, xz and the synthetic trace). Anything a handler does not take
 * (links not known yet, the TNT cache's last bit before something that
 * is not a TNT or TIP, pushes with a trace exit, ...) it leaves, with
 * nothing changed but a TNT refill, to run_step(), the reference.
 */
#if FOLD_BLOCKS
/*
 * The batch's run: blocks from graph nodes into @blocks[*@pk ...] (*@pk <
 * @max), starting at @node, with the fold's handlers (a block a node, as
 * run_step() would make them one at a time: 13% less time than that on
 * the synthetic trace, 8-13% on the real ones). Returns 0 when the next
 * block needs the general path (or @max blocks are done), else the
 * status of the last block.
 */
#if FOLD_STOPS
/*
 * The same, ending the batch (returning 0) before any block that would
 * start after the time may have moved or at an offset at or past @stop
 * (hwt_blk_next_batch_until()): after a step that asked the query
 * decoder the general way (the only one that takes timing packets; a
 * step of run_step()'s in direct mode is checked as a handler's take),
 * and after a packet taken here if
 * the next one is not a TNT or TIP this loop could take (a timing
 * packet, an event, or one at or past @stop: the packets are parsed only
 * before it), or if it was the first taken and @take_stop (the time of
 * the packet the decoder has read ahead is not the time it last gave).
 */
static int FOLD_RUN(struct hwt_blk_decoder *d, struct hwt_block *blocks,
		    size_t max, size_t *pk, uint32_t node, const uint8_t *stop,
		    int take_stop)
#else
static int FOLD_RUN(struct hwt_blk_decoder *d, struct hwt_block *blocks,
		    size_t max, size_t *pk, uint32_t node)
#endif
#else
static int FOLD_RUN(struct hwt_blk_decoder *d, struct hwt_blk_fold *fold,
		    struct hwt_block *last, uint32_t node)
#endif
{
	const void *const handler[16] = {
		[HWT_BCX_NONE] = &&h_none,
		[HWT_BCX_NONE | HWT_BCO_RUNS_ON] = &&h_none,
		[HWT_BCX_NONE | HWT_BCO_PUSH] = &&h_call,
		[HWT_BCX_NONE | HWT_BCO_PUSH | HWT_BCO_RUNS_ON] = &&h_call,
		[HWT_BCX_COND] = &&h_cond,
		[HWT_BCX_RETURN] = &&h_return,
		[HWT_BCX_INDIRECT] = &&h_indirect,
		[HWT_BCX_COND | HWT_BCO_PUSH] = &&h_slow,
		[HWT_BCX_RETURN | HWT_BCO_PUSH] = &&h_slow,
		[HWT_BCX_INDIRECT | HWT_BCO_PUSH] = &&h_slow,
		[HWT_BCX_COND | HWT_BCO_RUNS_ON] = &&h_slow,
		[HWT_BCX_RETURN | HWT_BCO_RUNS_ON] = &&h_slow,
		[HWT_BCX_INDIRECT | HWT_BCO_RUNS_ON] = &&h_slow,
		[HWT_BCX_COND | HWT_BCO_PUSH | HWT_BCO_RUNS_ON] = &&h_slow,
		[HWT_BCX_RETURN | HWT_BCO_PUSH | HWT_BCO_RUNS_ON] = &&h_slow,
		[HWT_BCX_INDIRECT | HWT_BCO_PUSH | HWT_BCO_RUNS_ON] = &&h_slow,
	};
	/* The node whose exit is taken, and the next one (@r.nd, kept here
	 * and written back with the TNT cache). */
	struct hwt_bc_node *nd, *nx;
	struct blk_retstack *rs = &d->retstack;
	const struct hwt_bcache *bc = &d->bcache;
#if FOLD_BLOCKS
	size_t i = *pk;
	/* The batch ends before block @lim: at @max, or where it stops. */
	size_t lim = max;
#else
	const int map = FOLD_MAP;
	/* The caller's open block, as a node (its location and mode). */
	struct hwt_bc_node shadow;
	struct fold_run f;
	struct fold_dirty dl;
#if FOLD_TALLY
	struct hwt_bc_tally *const ty = d->bcache.tally;
	struct hwt_bc_memo *const memo = NULL;
#else
	struct hwt_bc_memo *memo = fold_memo_get(&d->bcache);
#endif
#endif
#if FOLD_TALLY
/* Node @node ran; the jump at node @node's end went @slot's way (1:
 * taken). */
#define TALLY_RUN(node) (ty[(node) - r.nodes].n++)
#define TALLY_OUT(node, slot)						\
	do {								\
		struct hwt_bc_tally *t_ = &ty[(node) - r.nodes];	\
		if (slot)						\
			t_->taken++;					\
		else							\
			t_->fell++;					\
	} while (0)
#else
#define TALLY_RUN(node) ((void) 0)
#define TALLY_OUT(node, slot) ((void) 0)
#endif
	unsigned turns = 1u << 16;
	uint8_t speculative;
	struct run r;
	uint32_t k, link, from;
	/* The TNT cache, @r's, in registers here: written back (FOLD_PUT())
	 * for what takes @r, read again (FOLD_GET()) after. */
	uint64_t tnt, index;
	unsigned slot;
	int step, err, status = 0;

	speculative = d->speculative;
	run_init(&r, d, node);
	tnt = r.tnt;
	index = r.index;
	nd = nx = r.nd;
	TALLY_RUN(nd);
#if FOLD_STOPS
	/* (Not in direct mode: nothing is parsed.) */
	if (r.x.kind != HWT_QRY_DX_OTHER && r.x.limit > stop)
		r.x.limit = stop;
#endif
#if FOLD_BLOCKS
	node_block(speculative, nd, &blocks[i++]);
#else
	memset(&shadow, 0, sizeof(shadow));
	shadow.loc = blk_afl_loc(fold->block.ip);
	shadow.mode = fold->block.mode;
	f.first = &shadow;
	f.loc = shadow.loc;
	f.map = fold->map;
	dl.n = 0;
	f.dl = &dl;
	f.prev = fold->prev;
	f.nblocks = fold->nblocks;
	f.n = fold->open ? fold->block.ninsn : 0;
	f.total = fold->ninsn - f.n;

	/* The first block joins the caller's open one, or opens one. */
	if (fold->open && fold->runs_on && fold->next == nd->ip &&
	    fold->block.speculative == speculative &&
	    fold->block.mode == nd->mode) {
		f.n += nd->ninsn;
	} else if (fold->open) {
		fold_open(&f, nd, map);
	} else {
		f.first = nd;
		f.loc = nd->loc;
		f.n = nd->ninsn;
	}
#endif

#define FOLD_PUT() (r.tnt = tnt, r.index = index, r.nd = nx)
#define FOLD_GET() (tnt = r.tnt, index = r.index, nx = r.nd)
#if FOLD_STOPS
/* A packet was taken: the batch ends after this block if the next one is
 * not a TNT or TIP to take here (not parsed: beyond @stop, or another
 * kind), if its offset as the decoder gives it is @stop or more (a TIP's
 * own, before @stop if parsed; for a TNT, the packet after it: the
 * decoder reads one ahead), or if the time moved with this one (see
 * above). */
#define FOLD_TOOK()							\
	do {								\
		if (take_stop ||					\
		    (r.x.kind != HWT_QRY_DX_TIP &&			\
		     (r.x.kind != HWT_QRY_DX_TNT ||			\
		      run_ahead(&r.x, stop) >= stop)))			\
			lim = i;					\
	} while (0)
#else
#define FOLD_TOOK() ((void) 0)
#endif
/* The TNT cache's next bits from the next packet, a TNT (run_refill()). */
#define FOLD_REFILL()							\
	do {								\
		tnt = r.x.val;						\
		index = r.x.top;					\
		hwt_qry_direct_take_tnt_(&r.x);				\
		FOLD_TOOK();						\
	} while (0)
/* On to the handler of node @nx, whose op is @op: the likely ones
 * first, each place its own branches (each predicted on its own). */
#define FOLD_GO(op)							\
	do {								\
		unsigned op_ = (op);					\
		nd = nx;						\
		if (op_ == HWT_BCX_COND)				\
			goto h_cond;					\
		if (op_ == HWT_BCX_INDIRECT)				\
			goto h_indirect;				\
		if (op_ == HWT_BCX_RETURN)				\
			goto h_return;					\
		goto *handler[op_];					\
	} while (0)
#if FOLD_BLOCKS
/* The block of node @nx, the next one: the run comes back before it
 * if @blocks is full. */
#define FOLD_OPEN(runs_on)						\
	do {								\
		if (__builtin_expect(i == lim, 0)) {			\
			r.ip = nx->ip;					\
			goto done;					\
		}							\
		node_block(speculative, nx, &blocks[i++]);		\
	} while (0)
#define FOLD_COUNTS 0
#else
/* Fold the block of node @nx, the next one: into the open canonical
 * block if @nd's runs on into it, else opening one. */
#define FOLD_OPEN(runs_on)						\
	do {								\
		TALLY_RUN(nx);						\
		if ((runs_on) && nx->mode == f.first->mode)		\
			f.n += nx->ninsn;				\
		else							\
			fold_open(&f, nx, map);				\
	} while (0)
#define FOLD_COUNTS 1
#endif
/* A turn ends through @link: the block of its node, unless the fold
 * must return (@count: code that needs no trace may loop, so such turns
 * are counted, and the fold comes back now and then; the others take
 * trace; the batch's run has its @max). */
#define FOLD_TURN(link, runs_on, count)					\
	do {								\
		uint32_t l_ = (link);					\
		nx = hwt_bc_link_to(r.nodes, l_);			\
		if (FOLD_COUNTS && (count) &&				\
		    __builtin_expect(!--turns, 0)) {			\
			r.ip = nx->ip;					\
			goto done;					\
		}							\
		FOLD_OPEN(runs_on);					\
		FOLD_GO(l_ & HWT_BC_LINK_OP);				\
	} while (0)

	FOLD_GO(nx->op);

h_cond:
	/* The hot case: a bit of the cache that is not its last. */
	if (__builtin_expect(index > 1, 1)) {
		slot = (tnt & index) != 0;
		link = nd->succ[slot];
		if (__builtin_expect(link == HWT_BC_NO_NODE, 0))
			goto h_slow;
		index >>= 1;
		nx = hwt_bc_link_to(r.nodes, link);
		TALLY_OUT(nd, slot);
		FOLD_OPEN(0);
		FOLD_GO(link & HWT_BC_LINK_OP);
	}
	if (!index) {
		if (r.x.kind != HWT_QRY_DX_TNT)
			goto h_slow;
#if !FOLD_BLOCKS
		/* The memo (see above), where a conditional branch refills
		 * the TNT cache with enough bits for it to pay. */
		if (r.x.top >= 1u << (FOLD_MEMO_MIN_BITS - 1) && memo &&
		    !nd->nomemo) {
			FOLD_PUT();
			fold_memo_run(&r, &f, memo, map);
			FOLD_GET();
			FOLD_GO(nx->op);
		}
#endif
		FOLD_REFILL();
	}
	slot = (tnt & index) != 0;
	link = nd->succ[slot];
	/* (Taking the last bit, the status is asked.) */
	if (link == HWT_BC_NO_NODE ||
	    (index == 1 && r.x.kind == HWT_QRY_DX_OTHER))
		goto h_slow;
	index >>= 1;
	TALLY_OUT(nd, slot);
	FOLD_TURN(link, 0, 0);

h_call:
	/* A walk without trace at its end: direct calls, mostly. */
	link = nd->succ[0];
	if (__builtin_expect(link == HWT_BC_NO_NODE, 0))
		goto h_slow;
	if (__builtin_expect(nd->npush == 1, 1)) {
		/* A call: one return address. */
		retstack_push_from(rs, bc->pushes[nd->push], nd->push);
	} else {
		const uint64_t *p = &bc->pushes[nd->push];

		for (unsigned j = 0; j < nd->npush; ++j)
			retstack_push_from(rs, p[j], nd->push + j);
	}
	FOLD_TURN(link, nd->op & HWT_BCO_RUNS_ON, 1);

h_none:
	link = nd->succ[0];
	if (__builtin_expect(link == HWT_BC_NO_NODE, 0))
		goto h_slow;
	FOLD_TURN(link, nd->op & HWT_BCO_RUNS_ON, 1);

h_return:
	if (!index) {
		/* No TNT: blk_take_exit() takes a TIP. */
		if (r.x.kind == HWT_QRY_DX_TIP)
			goto h_tip;
		if (r.x.kind != HWT_QRY_DX_TNT)
			goto h_slow;
		FOLD_REFILL();
	}
	/* A compressed return, as blk_take_exit(), to the node at the call
	 * site's return address where it is known. */
	if (!(tnt & index) || rs->top == rs->bottom ||
	    (index == 1 && r.x.kind == HWT_QRY_DX_OTHER))
		goto h_slow;
	index >>= 1;
	(void) retstack_pop(rs, &r.ip);
	from = rs->from[rs->top];
	if (ret_site(bc, from, r.ip)) {
		link = bc->pushnode[from];
		if (link != HWT_BC_NO_NODE)
			FOLD_TURN(link, 0, 0);
	}
	k = hwt_bcache_node_find(bc, r.ip);
	if (k == HWT_BC_NO_NODE)
		goto done;
	link = hwt_bc_link(r.nodes, k);
	if (ret_site(bc, from, r.ip))
		bc->pushnode[from] = link;
	node_guess_new(nd, link, r.ip);
	FOLD_TURN(link, 0, 0);

h_indirect:
	if (r.x.kind != HWT_QRY_DX_TIP)
		goto h_slow;
h_tip:
	r.ip = r.x.val;
	hwt_qry_direct_take_tip_(&r.x);
	FOLD_TOOK();
	if (__builtin_expect(!index, 0) && r.x.kind == HWT_QRY_DX_OTHER) {
		/* An event or the end may be next. */
		FOLD_PUT();
		run_put(&r);
		err = node_status_empty(r.d);
		if (err) {
			status = err;
			goto stop;
		}
		run_get(&r);
		FOLD_GET();
	}
	/* The last targets, a guess to check. */
	link = nd->succ[0];
	if (link != HWT_BC_NO_NODE && nd->target == r.ip)
		FOLD_TURN(link, 0, 0);
	link = nd->succ[1];
	if (link != HWT_BC_NO_NODE && nd->next == r.ip) {
		node_guess_new(nd, link, r.ip);
		FOLD_TURN(link, 0, 0);
	}
	k = hwt_bcache_node_find(bc, r.ip);
	if (k == HWT_BC_NO_NODE)
		goto done;
	link = hwt_bc_link(r.nodes, k);
	node_guess_new(nd, link, r.ip);
	FOLD_TURN(link, 0, 0);

h_slow:
	/* Anything else: the reference. */
	FOLD_PUT();
	r.general = 0;
	step = run_step(&r, &status);
	FOLD_GET();
#if FOLD_STOPS
	/*
	 * The general way may have taken timing packets (and reads on past
	 * @stop). In direct mode the step took a TNT or TIP at most, as the
	 * handlers do, and the same checks follow: on python3's recording,
	 * 15.7 M batches of 16.3 M ended after the pushes of a call and the
	 * TIP of an indirect call, each then asking the sideband.
	 */
	if (r.general)
		lim = i;
	else
		FOLD_TOOK();
#endif
	if (__builtin_expect(step == STEP_NEXT, 1)) {
		/* (Only a conditional jump's node steps so.) */
		TALLY_OUT(nd, r.slot);
		FOLD_OPEN(0);
		FOLD_GO(nx->op);
	}
	if (step == STEP_STATUS)
		goto stop;
	if (step == STEP_END)
		goto done;
#if FOLD_TALLY
	if ((nd->op & HWT_BCO_EXIT) == HWT_BCX_COND) {
		/* (Counted before the turn: it must not come back.) */
		TALLY_OUT(nd, r.slot);
		FOLD_TURN(hwt_bc_link(r.nodes, (uint32_t) (nx - r.nodes)),
			  nd->op & HWT_BCO_RUNS_ON, 0);
	}
#endif
	FOLD_TURN(hwt_bc_link(r.nodes, (uint32_t) (nx - r.nodes)),
		  nd->op & HWT_BCO_RUNS_ON, 1);

stop:
	/* @status: 1 (the status is not clean) or an error; state in @d. */
#if FOLD_BLOCKS
	/* Anything but 0 ends the run, but so may 0 (with an event in
	 * progress, bound later). */
	*pk = i;
	return status < 0 ? status : blk_after_block(d, &blocks[i - 1]);
#else
	node_block(speculative, nd, last);
	if (status > 0)
		status = blk_after_block(d, last);
	goto out;
#endif
done:
	/* No node at @r.ip, or come back: state in @r. */
	FOLD_PUT();
	run_put(&r);
#if FOLD_BLOCKS
	*pk = i;
	return 0;
#else
	node_block(speculative, nd, last);
	status = 0;
out:
#if FOLD_TALLY
	/* (*@last is the caller's to count.) */
	ty[nd - r.nodes].n--;
#endif
	if (map)
		fold_memo_flush(f.map, &dl);
	fold->ninsn = f.total + f.n;
	fold->nblocks = f.nblocks;
	fold->prev = (uint16_t) f.prev;
	if (f.first != &shadow) {
		memset(&fold->block, 0, sizeof(fold->block));
		fold->block.ip = f.first->ip;
		fold->block.mode = f.first->mode;
		fold->block.speculative = speculative;
	}
	fold->block.end_ip = nd->end_ip;
	fold->block.size = nd->size;
	fold->block.iclass = nd->iclass;
	fold->block.ninsn = f.n;
	fold->open = 1;
	fold->runs_on = (nd->op & HWT_BCO_RUNS_ON) != 0;
	fold->next = nd->next;
	return status;
#endif
#undef TALLY_OUT
#undef TALLY_RUN
#undef FOLD_TURN
#undef FOLD_COUNTS
#undef FOLD_OPEN
#undef FOLD_GO
#undef FOLD_REFILL
#undef FOLD_TOOK
#undef FOLD_GET
#undef FOLD_PUT
}


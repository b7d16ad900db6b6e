/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The block decoder's state and the small steps both its paths take: the
 * general path (block.c: events, cache fills, every corner of libipt's
 * semantics) and the fast path (graph.c: blocks straight from the block
 * graph of the cache, see bcache.h). What the fast path does per block
 * is exactly what the general path does with the same state; sharing
 * these steps keeps it so.
 */
#ifndef HWT_FLOW_BLOCK_INT_H
#define HWT_FLOW_BLOCK_INT_H

#include <stdint.h>
#include <string.h>

#include <hwt/flow.h>

#include "flow/bcache.h"
#include "query/qry.h"

enum {
	/* libipt counts instructions in a block in 16 bits; we end blocks at
	 * the same place so block boundaries match. */
	BLK_MAX_INSN = 0xffff,
	/* Instructions to look ahead for erratum BDM64. */
	BLK_BDM64_STEPS = 0x100,
	/* Instructions decoded into the cache before a block is ended. */
	BLK_FILL_STEPS = 0x400,
	RETSTACK_SIZE = 64,
	/* Return addresses a walk may push and still make a graph node. */
	BLK_REC_MAX = 16
};

/* A decoded instruction, as the decoder keeps it. */
struct blk_insn {
	uint64_t ip;
	uint64_t target;
	uint64_t sec_end;
	uintptr_t sec_delta;
	uint8_t size;
	uint8_t iclass;
	uint8_t flags;
	uint8_t kind;
	uint8_t truncated;
	uint8_t raw[15];	/* only if @truncated */
};

struct blk_retstack {
	uint64_t stack[RETSTACK_SIZE + 1];
	/* Where graph.c pushed the entry from: its index in the block
	 * graph's pushes (a hint for the return's node), or UINT32_MAX. */
	uint32_t from[RETSTACK_SIZE + 1];
	uint8_t top, bottom;
};

struct hwt_blk_decoder {
	struct hwt_qry_decoder *qry;
	struct hwt_image *image;
	struct hwt_blk_config config;
	/* From @config: */
	uint8_t filter;		/* an IP filter is configured (SKL014) */
	uint8_t use_cache;
	uint8_t use_graph;

	/* From @ip to @retstack: what the decoder knows of its trace, all
	 * zero in a new decoder (hwt_blk_set_trace() zeroes it again). */
	uint64_t ip;		/* where the next block starts */
	int status;		/* HWT_STS_* of the last query */
	int deferred;		/* a query error to report on the next call */
	uint8_t mode;
	uint8_t enabled;
	uint8_t speculative;
	uint8_t process_event;	/* @event is in progress */
	uint8_t process_insn;	/* @insn is postponed (events bind to it) */
	uint8_t bound_paging, bound_vmcs, bound_ptwrite;
	uint8_t bound_iret, bound_vmentry, bound_uiret;

	/* The return addresses pushed by the cached walk in progress. */
	uint32_t nrec;
	uint64_t rec[BLK_REC_MAX];

	struct hwt_event event;
	struct blk_insn insn;

	/* The section the current block's instructions come from. */
	uint64_t blk_sec_end;
	uintptr_t blk_sec_delta;

	/* Time of the last thing consumed, for tick events. */
	uint64_t tsc;
	uint32_t cbr;
	uint64_t cr3, vmcs;

	struct blk_retstack retstack;
	struct hwt_bcache bcache;
	/* hwt_blk_tally(): every cache's (they point to it) */
	struct hwt_bc_teller teller;

	/* Instructions of the block being decoded into the cache. */
	struct blk_insn fill[BLK_FILL_STEPS];

	/* The caches of images left (hwt_blk_set_image()), and of the
	 * image's code in other exec modes, by last use. */
	struct blk_kept {
		uint64_t key;		/* blk_kept_key() */
		uint64_t used;
		struct hwt_bcache bcache;
	} kept[HWT_BLK_KEPT_IMAGES];
	uint32_t nkept;
	uint64_t switches;

	/* hwt_blk_state_seed(): for the next sync. (Here, not with the
	 * per-trace fields: placed there, the fields after moved and the
	 * fold loop lost 1-2%.) */
	uint8_t have_seed;
	struct hwt_blk_state seed;
};

/* The AFL location of a block at @ip (hwt_blk_fold_*, see flow.h). */
static inline uint16_t blk_afl_loc(uint64_t ip)
{
	return (uint16_t) ((ip * 0x9e3779b97f4a7c15ull) >> 48);
}

/*
 * Does the block of a walk that ended at exit @exit, with its last
 * instruction of class @iclass, run on into the next one (flow.h's
 * canonical blocks)? A walk stops without trace (HWT_BCX_NONE) only after
 * an instruction that goes on without trace (a "decode" entry of class
 * OTHER, PTWRITE, or a direct CALL or JUMP: its target, or fall-through,
 * is where the next block starts) or after a trampoline (class UNKNOWN);
 * branches that need trace are the other exits. So this is exactly what
 * hwt_blk_fold_block() finds decoding the last instruction (graph.c).
 */
static inline int blk_node_runs_on(unsigned exit, unsigned iclass)
{
	return exit == HWT_BCX_NONE &&
	       (iclass == HWT_IC_OTHER || iclass == HWT_IC_CALL ||
		iclass == HWT_IC_JUMP);
}

/* The general path's pieces the inline steps below need (block.c). */
int hwt_blk_tick_(struct hwt_blk_decoder *d, uint64_t ip, int need_tsc);
int hwt_blk_trailing_event_(struct hwt_blk_decoder *d,
			    struct hwt_block *block);

/* ------------------------------------------------------------------ */
/* Return compression                                                  */
/* ------------------------------------------------------------------ */

static inline void retstack_init(struct blk_retstack *rs)
{
	rs->top = 0;
	rs->bottom = 0;
}

/* A full stack drops its oldest entry, as the hardware's does. */
static inline void retstack_push_from(struct blk_retstack *rs, uint64_t ip,
				      uint32_t from)
{
	uint8_t top = rs->top;

	rs->stack[top] = ip;
	rs->from[top] = from;
	top = top == RETSTACK_SIZE ? 0 : top + 1;
	if (top == rs->bottom)
		rs->bottom = rs->bottom == RETSTACK_SIZE ? 0 : rs->bottom + 1;
	rs->top = top;
}

static inline void retstack_push(struct blk_retstack *rs, uint64_t ip)
{
	retstack_push_from(rs, ip, UINT32_MAX);
}

static inline int retstack_pop(struct blk_retstack *rs, uint64_t *ip)
{
	uint8_t top = rs->top;

	if (top == rs->bottom)
		return -HWT_ERR_BAD_QUERY;

	top = !top ? RETSTACK_SIZE : top - 1;
	rs->top = top;
	*ip = rs->stack[top];
	return 0;
}

/* ------------------------------------------------------------------ */
/* Status and queries                                                  */
/* ------------------------------------------------------------------ */

static inline int blk_status(const struct hwt_blk_decoder *d, int flags)
{
	if (!d->enabled)
		flags |= HWT_STS_IP_SUPPRESSED;

	/* The end of the trace waits until the events are drained. */
	if ((d->status & HWT_STS_EOS) && !d->process_event)
		flags |= HWT_STS_EOS;

	return flags;
}

/* Returns 1 if taken, 0 if not, or an error. */
static inline int blk_cond_branch(struct hwt_blk_decoder *d)
{
	int status, taken = 0;

	status = hwt_qry_cond_(d->qry, &taken);
	if (status < 0)
		return status;

	d->status = status;
	return !!taken;
}

/* Take an indirect branch: sets @d->ip. */
static inline int blk_indirect(struct hwt_blk_decoder *d)
{
	uint64_t from = d->ip, ip = 0;
	int status;

	status = hwt_qry_indirect_(d->qry, &ip);
	if (status < 0)
		return status;

	d->status = status;
	if (status & HWT_STS_IP_SUPPRESSED)
		return -HWT_ERR_BAD_PACKET;

	d->ip = ip;
	if (d->config.flags & HWT_BLK_ENABLE_TICK)
		return hwt_blk_tick_(d, from, 0) < 0 ? -HWT_ERR_INTERNAL : 0;
	return 0;
}

/* How a cached walk ended: the instruction at @d->ip that needs trace
 * (enum hwt_bc_exit), or HWT_BCX_NONE with @d->ip where the block ends. */
struct blk_exit {
	uint8_t kind;
	uint64_t target, next;	/* HWT_BCX_COND: taken, not taken */
};

/* The exit (enum hwt_bc_exit) an instruction of class @iclass, flags
 * @flags makes where it needs trace; an error if it needs none, or is
 * not known. */
static inline int blk_exit_of(unsigned iclass, unsigned flags)
{
	switch (iclass) {
	case HWT_IC_COND_JUMP:
		return HWT_BCX_COND;
	case HWT_IC_RETURN:
		return HWT_BCX_RETURN;
	case HWT_IC_CALL:
	case HWT_IC_JUMP:
		if (flags & HWT_INSN_DIRECT)
			return -HWT_ERR_INTERNAL;
		/* fall through */
	case HWT_IC_FAR_CALL:
	case HWT_IC_FAR_RETURN:
	case HWT_IC_FAR_JUMP:
	case HWT_IC_INDIRECT:
		return HWT_BCX_INDIRECT;
	case HWT_IC_UNKNOWN:
		return -HWT_ERR_BAD_INSN;
	default:
		return -HWT_ERR_INTERNAL;
	}
}

/*
 * Use trace for one last step past the instruction at @d->ip that ends
 * the block, to the next block's IP: a conditional branch to @target or
 * @next, a return (a taken TNT bit is a compressed one), an indirect
 * branch. @tick: a TNT-based tick may be reported here.
 */
static inline __attribute__((always_inline)) int
blk_take_exit(struct hwt_blk_decoder *d, unsigned kind, uint64_t target,
	      uint64_t next, int tick)
{
	int taken, err;

	switch (kind) {
	case HWT_BCX_COND:
		taken = blk_cond_branch(d);
		if (taken < 0)
			return taken;
		d->ip = taken ? target : next;
		break;
	case HWT_BCX_RETURN:
		taken = blk_cond_branch(d);
		if (taken == -HWT_ERR_BAD_QUERY)
			return blk_indirect(d);
		if (taken < 0)
			return taken;
		if (!taken)
			return -HWT_ERR_BAD_QUERY;
		err = retstack_pop(&d->retstack, &d->ip);
		if (err < 0)
			return err;
		break;
	case HWT_BCX_INDIRECT:
		return blk_indirect(d);
	default:
		return 0;
	}
	if (tick && (d->config.flags & HWT_BLK_ENABLE_TICK))
		(void) hwt_blk_tick_(d, d->ip, 1);
	return 0;
}

void hwt_blk_cache_mode_(struct hwt_blk_decoder *d);

/* The image is at generation @gen, the cache at another: what it still
 * maps as it did stays (hwt_bcache_carry()). */
void hwt_blk_cache_changed_(struct hwt_blk_decoder *d, uint64_t gen);

/*
 * Entries made from another image are void, and those decoded in another
 * exec mode do not apply (the same bytes are other instructions): the
 * cache of the image's code in the decoder's mode comes in
 * (hwt_blk_cache_mode_()).
 */
static inline void blk_cache_check(struct hwt_blk_decoder *d)
{
	struct hwt_bcache *bc = &d->bcache;
	uint64_t gen = hwt_image_generation(d->image);

	if (__builtin_expect(d->mode != bc->mode, 0))
		hwt_blk_cache_mode_(d);
	if (__builtin_expect(gen != bc->generation, 0))
		hwt_blk_cache_changed_(d, gen);
}

/* A block is made: indicate any event at its end. */
static inline int blk_after_block(struct hwt_blk_decoder *d,
				  struct hwt_block *block)
{
	/* The common case, what hwt_blk_trailing_event_() does with no
	 * event and no postponed instruction, without its frame. */
	if (!d->process_event && !d->process_insn &&
	    !(d->status & HWT_STS_EVENT_PENDING))
		return blk_status(d, 0);

	return hwt_blk_trailing_event_(d, block);
}

#endif /* HWT_FLOW_BLOCK_INT_H */

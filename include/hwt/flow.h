/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hwt flow layer: the exact program flow from a trace and the code it ran.
 *
 * Two parts:
 *   hwt_insn_   classify one x86 instruction (Zydis): its length, what
 *               kind of control flow it is, its direct target.
 *   hwt_blk_    the block decoder: walks the image with the answers of the
 *               query layer and returns blocks of sequentially executed
 *               instructions, with events (enable/disable, overflow,
 *               interrupts, ...) between them. Decoded blocks are cached by
 *               address so hot code is decoded once.
 *
 * Semantics (what a block is, when an event is reported relative to the
 * instructions) follow libipt's block decoder (pt_blk_*), the reference
 * hwt is tested against; the names map one to one.
 */
#ifndef HWT_FLOW_H
#define HWT_FLOW_H

#include <stddef.h>
#include <stdint.h>

#include <hwt/image.h>
#include <hwt/query.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Instructions                                                        */
/* ------------------------------------------------------------------ */

/* Coarse class, as libipt's enum pt_insn_class. */
enum hwt_insn_class {
	HWT_IC_UNKNOWN = 0,	/* could not be decoded */
	HWT_IC_OTHER,		/* no change in flow */
	HWT_IC_CALL,		/* near call */
	HWT_IC_RETURN,		/* near return */
	HWT_IC_JUMP,		/* near unconditional jump */
	HWT_IC_COND_JUMP,	/* near conditional jump (jcc, loop, jcxz) */
	HWT_IC_FAR_CALL,	/* call far, int*, syscall, sysenter */
	HWT_IC_FAR_RETURN,	/* ret far, iret, sysret, sysexit, uiret */
	HWT_IC_FAR_JUMP,	/* jmp far, vmlaunch, vmresume */
	HWT_IC_PTWRITE,
	HWT_IC_INDIRECT		/* reserved (a block has its last
				 * instruction's own class) */
};

/* Does an instruction of class @iclass (enum hwt_insn_class) branch, near
 * or far, conditionally or not? */
static inline int hwt_insn_class_branches(unsigned iclass)
{
	switch (iclass) {
	case HWT_IC_CALL:
	case HWT_IC_RETURN:
	case HWT_IC_JUMP:
	case HWT_IC_COND_JUMP:
	case HWT_IC_FAR_CALL:
	case HWT_IC_FAR_RETURN:
	case HWT_IC_FAR_JUMP:
	case HWT_IC_INDIRECT:
		return 1;
	default:
		return 0;
	}
}

/*
 * Details the flow layer needs beyond the class (bit flags). As libipt:
 * binds to a PIP = far branch or MOV_CR3 or VMENTRY; binds to a VMCS = far
 * branch or VMPTRLD or VMENTRY; changes CPL = SYSCALL or IRET. Classes as
 * libipt: vmcall is a far call, vmlaunch/vmresume/uiret are far returns.
 */
#define HWT_INSN_DIRECT    0x01u	/* target is in the instruction */
#define HWT_INSN_MOV_CR3   0x02u	/* mov cr3, reg: binds a PIP */
#define HWT_INSN_VMENTRY   0x04u	/* vmlaunch/vmresume (far return) */
#define HWT_INSN_VMPTRLD   0x08u	/* 0f c7 /6 mem (vmptrld/vmclear/vmxon) */
#define HWT_INSN_SYSCALL   0x10u	/* syscall/sysenter/int n/int3/int1/into */
#define HWT_INSN_STI_POPF  0x20u	/* sti/cli/popf: may change IF */
#define HWT_INSN_IRET      0x40u	/* iret/sysret/sysexit (pt_insn_is_iret) */
#define HWT_INSN_UIRET     0x80u	/* uiret (far return) */

struct hwt_insn_info {
	/*
	 * Direct branch target if HWT_INSN_DIRECT: ip + size + displacement
	 * in 64-bit arithmetic, not truncated to a 16/32-bit operand size
	 * (as libipt). Otherwise 0.
	 */
	uint64_t target;
	uint8_t size;		/* length in bytes (1..15) */
	uint8_t iclass;		/* enum hwt_insn_class */
	uint8_t flags;		/* HWT_INSN_* */
};

/*
 * Decode the instruction at @code (@avail bytes readable), executing at
 * @ip in @mode (enum hwt_exec_mode; HWT_MODE_UNKNOWN decodes as 64-bit).
 * Returns 0 or -HWT_ERR_BAD_INSN (an invalid instruction, or @avail too
 * short for it; at most 15 bytes are looked at).
 */
int hwt_insn_decode(struct hwt_insn_info *info, const uint8_t *code,
		    size_t avail, uint64_t ip, unsigned mode);

/* An instruction as reported to users (ptxed's --insn-decoder). */
struct hwt_insn {
	uint64_t ip;
	uint8_t size;
	uint8_t iclass;
	uint8_t mode;
	uint8_t speculative;	/* inside a TSX transaction */
	uint8_t raw[15];
};

/* ------------------------------------------------------------------ */
/* Blocks                                                              */
/* ------------------------------------------------------------------ */

/*
 * A block: @ninsn instructions executed one after the other without
 * needing trace to get from one to the next. The first is at @ip, the last
 * at @end_ip; the ones between follow by decoding each instruction and
 * taking its fall-through or direct target (see hwt_blk_insn_walk()).
 */
struct hwt_block {
	uint64_t ip;
	uint64_t end_ip;
	uint32_t ninsn;
	uint8_t mode;		/* enum hwt_exec_mode */
	uint8_t iclass;		/* class of the last instruction */
	uint8_t speculative;
	uint8_t truncated;	/* last insn crosses a section end: see raw */
	uint8_t size;		/* of the last instruction (its bytes in @raw
				 * if truncated) */
	uint8_t raw[15];
};

/* Do @b's end_ip, size and class tell its last instruction? Not where it
 * is truncated, nor where the cache cut the block short (HWT_IC_UNKNOWN):
 * then only a walk does. */
static inline int hwt_block_tells_last(const struct hwt_block *b)
{
	return !b->truncated && b->iclass != HWT_IC_UNKNOWN;
}

struct hwt_blk_config {
	struct hwt_qry_config qry;
	uint32_t flags;		/* HWT_BLK_* */
};

#define HWT_BLK_END_ON_CALL 0x1u	/* end a block after a call */
#define HWT_BLK_END_ON_JUMP 0x2u	/* end a block after a direct jump */
#define HWT_BLK_ENABLE_TICK 0x4u	/* report HWT_EV_TICK */
#define HWT_BLK_NO_CACHE    0x8u	/* decode every instruction (testing) */
#define HWT_BLK_NO_GRAPH    0x10u	/* walk the cache every time (testing) */
/*
 * A PSB empties the call stack that compressed returns pop, as the
 * processor's is emptied (no return after a PSB is compressed against a
 * call before it; perf's decoder empties its stack there too). Without
 * it the stack lives until the next sync, as libipt's does (ptxed).
 * hwt flow sets it: a -j segment starts at a PSB with an empty stack.
 */
#define HWT_BLK_PSB_CLEARS_STACK 0x20u

void hwt_blk_config_init(struct hwt_blk_config *config);

struct hwt_blk_decoder;

/* @image is borrowed and must outlive the decoder. */
struct hwt_blk_decoder *hwt_blk_new(const struct hwt_blk_config *config,
				    struct hwt_image *image);
void hwt_blk_delete(struct hwt_blk_decoder *d);

/*
 * Decode from @image from now on (a context switch: another process's
 * memory), between calls of hwt_blk_next() and the like. @image is
 * borrowed as hwt_blk_new()'s, while it is the decoder's. The block cache
 * made from the image left is kept (for the HWT_BLK_KEPT_IMAGES used
 * last, by hwt_image_id()), so a switch back finds its code decoded, as
 * libipt's per-section block caches do; an image changed in between
 * (hwt_image_generation()) keeps what it still maps as it did (a
 * library mapped, or the program exec'd again: the rest of its code
 * stays decoded). An image left may be
 * deleted: its cache is never used again, and goes when it is the oldest
 * (or at once with hwt_blk_forget_image()). Returns 0 or -HWT_ERR_INVALID
 * / -HWT_ERR_NOMEM (the image is then unchanged).
 *
 * (A cache holds code decoded in one exec mode: where MODE.Exec changes
 * it, the cache of the image's code in the new mode comes in, kept the
 * same way, so that code run in 32-bit and 64-bit mode is decoded in
 * each.)
 */
#define HWT_BLK_KEPT_IMAGES 8
int hwt_blk_set_image(struct hwt_blk_decoder *d, struct hwt_image *image);
struct hwt_image *hwt_blk_image(const struct hwt_blk_decoder *d);
/* Drop the cache kept for @image (not the current one): memory back. */
int hwt_blk_forget_image(struct hwt_blk_decoder *d,
			 const struct hwt_image *image);

/*
 * The decoder's image goes away (its process ended; the caches kept for
 * others go too). Its block cache waits for the image hwt_blk_set_image()
 * gives next, which keeps what that image maps as this one did: code
 * from the same file at the same address and section end (the processes
 * of one program, a shell's children, map the same). Until then the
 * decoder has no image: hwt_blk_set_image() first.
 */
void hwt_blk_release_image(struct hwt_blk_decoder *d);

/*
 * Decode the trace [@begin, @end) from now on, as a new decoder of the
 * same configuration and image would (nothing of the trace before is
 * kept: position, call stack, time, events in progress), but with the
 * block cache, so that code decoded before is not decoded again: for a
 * fuzzer that decodes each run's trace (libxdc's use), or a set of
 * traces of one program. Only where blocks end may differ from a new
 * decoder's (as after any other history of the cache); the instructions,
 * events, errors and canonical blocks do not. @begin is borrowed as the
 * configuration's. Returns 0, or -HWT_ERR_INVALID / -HWT_ERR_NOMEM (the
 * decoder is then unchanged).
 */
int hwt_blk_set_trace(struct hwt_blk_decoder *d, const uint8_t *begin,
		      const uint8_t *end);

/* As the query layer; return status bits (HWT_STS_*) or an error. */
int hwt_blk_sync_forward(struct hwt_blk_decoder *d);
int hwt_blk_sync_backward(struct hwt_blk_decoder *d);
int hwt_blk_sync_set(struct hwt_blk_decoder *d, uint64_t offset);
int hwt_blk_get_offset(const struct hwt_blk_decoder *d, uint64_t *offset);
int hwt_blk_get_sync_offset(const struct hwt_blk_decoder *d,
			    uint64_t *offset);

/*
 * The next block. Returns status bits (HWT_STS_EVENT_PENDING: drain events
 * with hwt_blk_event() first; HWT_STS_EOS: end of trace) or an error. On an
 * error the block holds what was executed up to the problem (possibly
 * ninsn 0) and *@ip_out of hwt_blk_get_ip() names where it happened.
 */
int hwt_blk_next(struct hwt_blk_decoder *d, struct hwt_block *block);
int hwt_blk_event(struct hwt_blk_decoder *d, struct hwt_event *event);

/*
 * Up to @max (>= 1) blocks at once: as calling hwt_blk_next() into
 * @blocks[0], @blocks[1], ... while it returns 0, so all but the last
 * block came with status 0 and the return value is the last one's (status
 * bits or an error, the block then as hwt_blk_next() leaves it). *@n gets
 * the number of blocks stored. Hot code runs from the block graph of the
 * cache without a call per block.
 */
int hwt_blk_next_batch(struct hwt_blk_decoder *d, struct hwt_block *blocks,
		       size_t max, size_t *n);

/*
 * hwt_blk_next_batch() for a caller that looks at the decoder's time and
 * offset between blocks (a perf.data's sideband applies by time, its notes
 * of lost data by offset): the batch ends before a block that would start
 * where hwt_blk_time() may give another time than before the first, or
 * where hwt_blk_get_offset() is @offset or more. So every block but the
 * first starts with the time the first started with and an offset below
 * @offset, and the caller needs to look only before each batch. A batch
 * may hold one block (then it is hwt_blk_next()'s) where another might
 * have held more: it ends where the time may move, not only where it
 * does.
 */
int hwt_blk_next_batch_until(struct hwt_blk_decoder *d,
			     struct hwt_block *blocks, size_t max, size_t *n,
			     uint64_t offset);

/* ------------------------------------------------------------------ */
/* Canonical blocks and coverage                                       */
/* ------------------------------------------------------------------ */

/*
 * Where blocks end depends on the block cache's history (as libipt's do),
 * so counts and coverage use canonical blocks: the blocks of
 * hwt_blk_next() joined where one runs on into the next without trace
 * (its last instruction neither needs trace nor ends the run otherwise:
 * an instruction of class OTHER, or a direct CALL or JUMP, going to the
 * next block's first instruction, in the same mode and speculation state,
 * neither block truncated). A fold makes them: it holds the canonical
 * block being made, counts instructions and ended canonical blocks and,
 * with a map, AFL-style edges: when canonical block B ends,
 *     loc = (B.ip * 0x9e3779b97f4a7c15) >> 48,
 *     map[loc ^ prev] += 1 (saturating at 255), prev = loc >> 1.
 * The caller may reset @prev (e.g. where the flow breaks).
 */
#define HWT_BLK_FOLD_MAP_SIZE (1u << 16)

struct hwt_blk_fold {
	uint8_t *map;		/* HWT_BLK_FOLD_MAP_SIZE counters, or NULL */
	uint64_t ninsn;		/* instructions of the blocks folded */
	uint64_t nblocks;	/* canonical blocks ended */
	struct hwt_block block;	/* the open canonical block */
	uint64_t next;		/* where @block runs on to, if @runs_on */
	uint8_t runs_on;
	uint8_t open;
	uint16_t prev;		/* AFL's previous location */
};

void hwt_blk_fold_init(struct hwt_blk_fold *fold, uint8_t *map);

/* hwt_blk_fold_block() results: @block opened a new canonical block,
 * and the one before ended. */
#define HWT_BLK_FOLD_NEW   0x1
#define HWT_BLK_FOLD_ENDED 0x2

/*
 * Fold @block, which came from hwt_blk_next() of @d. Blocks without
 * instructions are ignored. Returns 0 (joined or ignored) or
 * HWT_BLK_FOLD_NEW, with HWT_BLK_FOLD_ENDED if a canonical block ended
 * (copied to *@ended unless NULL).
 */
int hwt_blk_fold_block(const struct hwt_blk_decoder *d,
		       struct hwt_blk_fold *fold,
		       const struct hwt_block *block, struct hwt_block *ended);

/* End the open canonical block (e.g. at an event): 1 (copied to *@ended
 * unless NULL), or 0 if none is open. */
int hwt_blk_fold_end(struct hwt_blk_fold *fold, struct hwt_block *ended);

/*
 * hwt_blk_next() and hwt_blk_fold_block() in one, without the blocks, for
 * as long as the blocks come from the block graph. Returns 0 when the
 * next block needs hwt_blk_next() (possibly having folded none); else the
 * status hwt_blk_next() gave the last block folded (status bits, or an
 * error: the block, folded, is what was executed up to it), which is
 * copied to *@last.
 */
int hwt_blk_fold_next(struct hwt_blk_decoder *d, struct hwt_blk_fold *fold,
		      struct hwt_block *last);

/*
 * Counting what the fold takes (coverage by code, hwt_an_cover's), where
 * its blocks do not come out: each block-graph node is named once, when
 * made, as the block it stands for (@node: the image maps its code as it
 * ran now), and its counts are told when its graph goes (the image
 * changed, the graph is full, the decoder is deleted) or
 * hwt_blk_tally_flush() asks (@count: the image by its id and generation
 * when the node was named, the block, the times it ran, and for a
 * conditional jump at its end the times it was taken and fell through;
 * a jump to its own fall-through falls through). A node's block that the
 * fold ends on (*@last of hwt_blk_fold_next()) is not counted there, nor
 * its jump's outcome: the caller counts it as a block of its own (the
 * next block, or event, tells the outcome), with the fold's first block's
 * IP (hwt_blk_get_ip() before it) as the outcome of the block before.
 * A node that cannot be named (@node's error) is not made; the first
 * error of either is returned by the next hwt_blk_tally_flush().
 */
struct hwt_blk_tally_ops {
	int (*node)(void *ctx, const struct hwt_image *image,
		    const struct hwt_block *b);
	int (*count)(void *ctx, uint64_t image_id, uint64_t generation,
		     const struct hwt_block *b, uint64_t n, uint64_t taken,
		     uint64_t fell);
};

/* Count for @ops (NULL: stop), @ctx: the counts so far are told to the
 * ones before, and every graph starts over, unless they are @ops and @ctx
 * (a caller counting several traces into one, flushing after each: the
 * graph stays warm; @ctx must then be the same object, not one made
 * since at a freed one's address). Returns hwt_blk_tally_flush()'s
 * result for those before. */
int hwt_blk_tally(struct hwt_blk_decoder *d,
		  const struct hwt_blk_tally_ops *ops, void *ctx);

/* Tell the counts so far (of every image's cache); 0 or the first error
 * of the callbacks since the last flush. */
int hwt_blk_tally_flush(struct hwt_blk_decoder *d);

/* The current IP (where decoding stopped, e.g. at an error). */
int hwt_blk_get_ip(const struct hwt_blk_decoder *d, uint64_t *ip);

int hwt_blk_time(const struct hwt_blk_decoder *d, uint64_t *tsc,
		 uint32_t *lost_mtc, uint32_t *lost_cyc);
int hwt_blk_core_bus_ratio(const struct hwt_blk_decoder *d, uint32_t *cbr);

/* Time across a cut (-j): hwt_evt_time_seed() and the like (query.h). */
void hwt_blk_time_seed(struct hwt_blk_decoder *d,
		       const struct hwt_time_tracker *tt);
void hwt_blk_time_watch(struct hwt_blk_decoder *d, uint64_t offset);
int hwt_blk_time_watched(const struct hwt_blk_decoder *d,
			 struct hwt_time_tracker *tt);

/*
 * What one decoder carries over a PSB that the PSB+ need not say again:
 * the exec mode (MODE.Exec, which the query layer also keeps to check the
 * next PSB+'s against) and whether code runs in a TSX transaction
 * (MODE.TSX). A decoder that syncs knows none of it (HWT_MODE_UNKNOWN,
 * not speculative, no MODE.Exec) unless seeded: a piece of a trace
 * decoded on its own (-j) starts with what the decoder of the piece
 * before had at its PSB.
 */
struct hwt_blk_state {
	uint8_t mode;		/* enum hwt_exec_mode */
	uint8_t speculative;
	uint8_t exec_valid;	/* the last MODE.Exec's bits, if any */
	uint8_t exec;
};

int hwt_blk_get_state(const struct hwt_blk_decoder *d,
		      struct hwt_blk_state *st);
/* The next sync starts with @st (then the PSB+'s own status updates). */
void hwt_blk_state_seed(struct hwt_blk_decoder *d,
			const struct hwt_blk_state *st);

/*
 * A trace decoded in pieces cut at PSBs (-j, perf.data streams read in
 * pieces): a piece's decode ends at the PSB+ where the next piece starts,
 * after the blocks up to that PSB+'s IP, where the next piece's decode
 * starts. Ask these, in the decode loop:
 *
 *   hwt_blk_end_past(&e, dec, sync)   after an error (@sync 0: an error in
 *                                     the next piece's data is the next
 *                                     piece's) or a sync (@sync 1)
 *   hwt_blk_end_event(&e, dec, &ev)   for each event: 0 use it; 1 skip it
 *                                     (the next piece's PSB+); -1 stop now
 *   hwt_blk_end_block(&e, &block)     for each block: 1 stop before it
 */
struct hwt_blk_end {
	uint64_t next;		/* the next piece's PSB offset; 0: none */
	uint64_t ip;		/* its PSB+'s IP, once stopping */
	int stopping;
};

void hwt_blk_end_init(struct hwt_blk_end *e, uint64_t next);
int hwt_blk_end_past(const struct hwt_blk_end *e,
		     const struct hwt_blk_decoder *d, int sync);
int hwt_blk_end_event(struct hwt_blk_end *e, const struct hwt_blk_decoder *d,
		      const struct hwt_event *ev);
static inline int hwt_blk_end_block(const struct hwt_blk_end *e,
				    const struct hwt_block *b)
{
	return e->stopping && b->ip == e->ip;
}

/*
 * Walk the instructions of a block: with *@ip at one instruction, fill
 * @insn and advance *@ip to the next one in the block (fall-through or
 * direct jump/call target). For printing instruction histories.
 */
int hwt_blk_insn_walk(const struct hwt_image *image, unsigned mode,
		      uint64_t *ip, struct hwt_insn *insn);

#ifdef __cplusplus
}
#endif

#endif /* HWT_FLOW_H */

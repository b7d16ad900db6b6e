/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hwt_an_walks_: what walking a block's instructions tells, kept per block.
 *
 * A block of the flow layer runs on over direct calls and jumps, so the
 * branches taken inside it, its last instruction's size and class, and
 * where each instruction starts need a walk of its instructions (Zydis,
 * one at a time). Hot blocks come millions of times: the walk is kept in
 * a direct-mapped table keyed by the image (its id and generation: code
 * at the same address in another process, or after a mapping changed, is
 * walked again), the block's first IP, length and mode, and replayed (hwt
 * last, hwt flow --branches, hwt flow's instruction lines).
 */
#include <stdlib.h>
#include <string.h>

#include <hwt/analysis.h>

#include "common/grow.h"
#include "common/table.h"

struct walk_slot {
	uint64_t ip, image, gen;	/* image: hwt_image_id(), 0: empty */
	uint32_t ninsn, inner, ninner;	/* inner: the first in @inner */
	uint32_t sizes;			/* the first in @sizes */
	/* The last instruction's size and class, as decoded (a block the
	 * cache cut short has HWT_IC_UNKNOWN). */
	uint8_t mode, last_size, last_iclass;
};

enum {
	SLOT_BITS = 16,
	INNER_MAX = 1 << 18,	/* then all are forgotten */
	SIZES_MAX = 1 << 22,	/* (instruction sizes: likewise) */
};

#define SLOTS_BYTES (((size_t)1 << SLOT_BITS) * sizeof(struct walk_slot))

struct hwt_an_walks {
	struct walk_slot *slots;	/* 1 << SLOT_BITS */
	struct hwt_an_inner *inner;
	size_t ninner, cap_inner;
	uint8_t *sizes;
	size_t nsizes, cap_sizes;
};

struct hwt_an_walks *hwt_an_walks_new(void)
{
	struct hwt_an_walks *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	/* (Huge pages: on 4 KiB pages a lookup is a TLB miss as well as a
	 * cache miss.) */
	w->slots = hwt_table_new(SLOTS_BYTES);
	if (!w->slots) {
		free(w);
		return NULL;
	}
	return w;
}

void hwt_an_walks_delete(struct hwt_an_walks *w)
{
	if (!w)
		return;
	hwt_table_free(w->slots, SLOTS_BYTES);
	free(w->inner);
	free(w->sizes);
	free(w);
}

static struct walk_slot *slot_of(const struct hwt_an_walks *w,
				 const struct hwt_block *b, uint64_t image)
{
	uint64_t h = (b->ip ^ image * 0x9e3779b97f4a7c15ull) *
		     0xff51afd7ed558ccdull;

	return &w->slots[h >> (64 - SLOT_BITS)];
}

void hwt_an_walks_prefetch(const struct hwt_an_walks *w,
			   const struct hwt_image *image,
			   const struct hwt_block *b)
{
	const struct walk_slot *slot = slot_of(w, b, hwt_image_id(image));

	__builtin_prefetch(slot);
	/* (A slot may span two lines.) */
	__builtin_prefetch((const char *)(slot + 1) - 1);
}

/*
 * Walk @b's instructions into *@sm: its direct calls and jumps (appended
 * to @inner), the instructions' sizes (to @sizes) and its last
 * instruction's size and class. A negative HWT_ERR_* if an instruction
 * cannot be read: the ones before it are in *@sm, the last of them at
 * *@last.
 */
static int walk(struct hwt_an_walks *w, const struct hwt_image *image,
		const struct hwt_block *b, struct walk_slot *sm, uint64_t *last)
{
	uint64_t ip = b->ip, next;
	struct hwt_an_inner in;
	struct hwt_insn insn;
	int err;

	sm->inner = (uint32_t)w->ninner;
	sm->ninner = 0;
	sm->ninsn = 0;
	sm->sizes = (uint32_t)w->nsizes;
	if (hwt_grow((void **)&w->sizes, &w->cap_sizes,
		     w->nsizes + b->ninsn, 1) < 0)
		return -HWT_ERR_NOMEM;
	for (uint32_t n = b->ninsn; n > 0; n--) {
		err = hwt_blk_insn_walk(image, b->mode, &ip, &insn);
		if (err < 0)
			return err;
		sm->ninsn++;
		w->sizes[w->nsizes++] = insn.size;
		*last = insn.ip;
		next = insn.ip + insn.size;
		if (n == 1) {
			sm->last_size = insn.size;
			sm->last_iclass = insn.iclass;
			break;
		}
		/* Inside a block only direct calls and jumps branch, taken
		 * even to the next instruction (jmp/call +0). */
		if (insn.iclass != HWT_IC_CALL && ip == next &&
		    insn.iclass != HWT_IC_JUMP)
			continue;
		in.from = insn.ip;
		in.to = ip;
		in.next = next;
		in.call = insn.iclass == HWT_IC_CALL;
		if (hwt_grow((void **)&w->inner, &w->cap_inner, w->ninner + 1,
			     sizeof(*w->inner)) < 0)
			return -HWT_ERR_NOMEM;
		w->inner[w->ninner++] = in;
		sm->ninner++;
	}
	return 0;
}

static void out_of(const struct hwt_an_walks *w, const struct walk_slot *sm,
		   const struct hwt_block *b, struct hwt_an_walk *out)
{
	out->inner = sm->ninner ? &w->inner[sm->inner] : NULL;
	out->ninner = sm->ninner;
	out->ninsn = sm->ninsn;
	out->last_size = sm->last_size;
	out->last_iclass = sm->last_iclass;
	out->last = b->end_ip;
	out->sizes = w->sizes ? &w->sizes[sm->sizes] : NULL;
}

/* hwt_an_walks_get() where @slot does not hold @b's walk: walk it. Out of
 * line, so that a hit (nearly every call: hot code) saves and restores no
 * registers for the walk's loop (hwt last: 11 instructions a call). */
static int __attribute__((noinline))
walks_miss(struct hwt_an_walks *w, const struct hwt_image *image,
	   const struct hwt_block *b, struct walk_slot *slot, uint64_t id,
	   uint64_t gen, struct hwt_an_walk *out)
{
	struct walk_slot sm;
	uint64_t last = 0;
	int err;

	if (w->ninner > INNER_MAX || w->nsizes > SIZES_MAX) {
		memset(w->slots, 0, SLOTS_BYTES);
		w->ninner = 0;
		w->nsizes = 0;
	}
	memset(&sm, 0, sizeof(sm));
	err = walk(w, image, b, &sm, &last);
	if (err < 0) {
		/* What was walked up to the error, not kept (the inner
		 * branches stay valid until the next call). */
		out_of(w, &sm, b, out);
		out->last = last;
		w->ninner = sm.inner;
		w->nsizes = sm.sizes;
		return err;
	}
	sm.ip = b->ip;
	sm.image = id;
	sm.gen = gen;
	sm.mode = b->mode;
	*slot = sm;
	out_of(w, slot, b, out);
	return 0;
}

int hwt_an_walks_get(struct hwt_an_walks *w, const struct hwt_image *image,
		     const struct hwt_block *b, struct hwt_an_walk *out)
{
	uint64_t id = hwt_image_id(image), gen = hwt_image_generation(image);
	struct walk_slot *slot = slot_of(w, b, id);

	if (slot->image == id && slot->ip == b->ip && slot->gen == gen &&
	    slot->ninsn == b->ninsn && slot->mode == b->mode) {
		out_of(w, slot, b, out);
		return 0;
	}
	return walks_miss(w, image, b, slot, id, gen, out);
}

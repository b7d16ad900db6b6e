/* SPDX-License-Identifier: BSD-2-Clause */
/* The shared fold loop (fold_loop.h). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <hwt/error.h>

#include "fold_loop.h"

/* Block @b of image @image at @gen: its slot, or NULL (full). */
static struct fold_count_e *count_slot(struct fold_count *c, uint64_t image,
				       uint64_t gen, const struct hwt_block *b)
{
	size_t i = (size_t)(b->ip * 0x9e3779b97f4a7c15ull >> 40 ^ b->ninsn);

	for (size_t k = 0; k < FOLD_COUNT_SLOTS; k++) {
		struct fold_count_e *e = &c->e[(i + k) % FOLD_COUNT_SLOTS];

		if (!e->ninsn) {
			e->image = image;
			e->gen = gen;
			e->ip = b->ip;
			e->ninsn = b->ninsn;
			e->mode = b->mode;
			c->ne++;
			return e;
		}
		if (e->ip == b->ip && e->ninsn == b->ninsn &&
		    e->mode == b->mode && e->image == image && e->gen == gen)
			return e;
	}
	c->full = 1;
	return NULL;
}

/* The flow went on at @ip: the pending outcome. */
static void count_went(struct fold_count *c, uint64_t ip)
{
	if (!c->pend)
		return;
	if (ip == c->pend_next)
		c->pend->fell++;
	else
		c->pend->taken++;
	c->pend = NULL;
}

/* A block that came out. */
static void count_block(struct fold_count *c, struct hwt_blk_decoder *d,
			const struct hwt_block *b)
{
	const struct hwt_image *image = hwt_blk_image(d);
	struct fold_count_e *e;
	struct hwt_insn insn;
	uint64_t ip = b->end_ip;

	if (!b->ninsn)
		return;
	count_went(c, b->ip);
	e = count_slot(c, hwt_image_id(image), hwt_image_generation(image),
		       b);
	if (!e)
		return;
	e->n++;
	if (b->iclass == HWT_IC_COND_JUMP && !b->truncated &&
	    hwt_blk_insn_walk(image, b->mode, &ip, &insn) >= 0) {
		c->pend = e;
		c->pend_next = b->end_ip + insn.size;
	}
}

static int count_node(void *ctx, const struct hwt_image *image,
		      const struct hwt_block *b)
{
	(void)ctx;
	(void)image;
	(void)b;
	return 0;
}

static int count_tally(void *ctx, uint64_t image, uint64_t gen,
		       const struct hwt_block *b, uint64_t n, uint64_t taken,
		       uint64_t fell)
{
	struct fold_count *c = ctx;
	struct fold_count_e *e = count_slot(c, image, gen, b);

	c->told += n + taken + fell;
	if (e) {
		e->n += n;
		e->taken += taken;
		e->fell += fell;
	}
	return 0;
}

static const struct hwt_blk_tally_ops count_ops = {
	.node = count_node,
	.count = count_tally,
};

/* A count by instruction: where blocks end depends on the cache's
 * history, so two counts are held against each other by instruction, as
 * the cover adds them up. */
struct ins_count {
	uint64_t ip, n, taken, fell;
	uint8_t mode;
};

static int ins_cmp(const void *pa, const void *pb)
{
	const struct ins_count *a = pa, *b = pb;

	if (a->ip != b->ip)
		return a->ip < b->ip ? -1 : 1;
	return (int)a->mode - (int)b->mode;
}

/* @c's counts by instruction of @image, summed and sorted into a new
 * array (*@n of them), or NULL (memory). */
static struct ins_count *by_insn(const struct fold_count *c,
				 const struct hwt_image *image, size_t *n)
{
	size_t cap = 1024, k = 0, out = 0;
	struct ins_count *v = malloc(cap * sizeof(*v));

	for (size_t i = 0; v && i < FOLD_COUNT_SLOTS; i++) {
		const struct fold_count_e *e = &c->e[i];
		uint64_t ip = e->ip;

		if (!e->ninsn || (!e->n && !e->taken && !e->fell))
			continue;
		for (uint32_t j = 0; j < e->ninsn; j++) {
			struct hwt_insn insn;
			int last = j + 1 == e->ninsn;

			if (hwt_blk_insn_walk(image, e->mode, &ip, &insn) < 0)
				break;
			if (k == cap) {
				struct ins_count *w = realloc(v, 2 * cap *
							      sizeof(*v));

				if (!w) {
					free(v);
					return NULL;
				}
				v = w;
				cap *= 2;
			}
			v[k].ip = insn.ip;
			v[k].mode = e->mode;
			v[k].n = e->n;
			v[k].taken = last ? e->taken : 0;
			v[k].fell = last ? e->fell : 0;
			k++;
		}
	}
	if (!v)
		return NULL;
	qsort(v, k, sizeof(*v), ins_cmp);
	for (size_t i = 0; i < k; i++) {
		if (out && !ins_cmp(&v[out - 1], &v[i])) {
			v[out - 1].n += v[i].n;
			v[out - 1].taken += v[i].taken;
			v[out - 1].fell += v[i].fell;
		} else {
			v[out++] = v[i];
		}
	}
	*n = out;
	return v;
}

int fold_count_same(const struct fold_count *a, const struct fold_count *b,
		    const struct hwt_image *image)
{
	size_t na = 0, nb = 0;
	struct ins_count *va, *vb;
	int same = 1;

	if (a->full || b->full)
		return 1;
	va = by_insn(a, image, &na);
	vb = by_insn(b, image, &nb);
	if (va && vb) {
		same = na == nb;
		for (size_t i = 0; same && i < na; i++)
			same = !ins_cmp(&va[i], &vb[i]) && va[i].n == vb[i].n &&
			       va[i].taken == vb[i].taken &&
			       va[i].fell == vb[i].fell;
	}
	free(va);
	free(vb);
	return same;
}

int fold_loop_run(const struct fold_loop *how, struct hwt_blk_decoder *d,
		  struct hwt_blk_fold *fold)
{
	struct fold_count *c = how->count;
	unsigned syncs = 0, steps = 0;
	int ended = 0;

	if (c && how->fast && hwt_blk_tally(d, &count_ops, c) < 0)
		c->full = 1;
	while (syncs++ < how->max_syncs && steps < how->max_steps) {
		int status = hwt_blk_sync_forward(d);

		hwt_blk_fold_end(fold, NULL);
		fold->prev = 0;
		if (c)
			c->pend = NULL;
		how->at(how->ctx, fold, FOLD_AT_SYNC, status, NULL);
		if (status < 0) {
			ended = 1;
			break;
		}
		while (steps++ < how->max_steps) {
			struct hwt_block b;

			while (status >= 0 &&
			       (status & HWT_STS_EVENT_PENDING)) {
				struct hwt_event ev;

				status = hwt_blk_event(d, &ev);
				hwt_blk_fold_end(fold, NULL);
				if (c)
					c->pend = NULL;
				how->at(how->ctx, fold, FOLD_AT_EVENT, status,
					status >= 0 ? &ev : NULL);
			}
			if (status < 0 || (status & HWT_STS_EOS))
				break;
			if (how->fast) {
				uint64_t n0 = fold->ninsn, ip0 = 0;

				(void)hwt_blk_get_ip(d, &ip0);
				status = hwt_blk_fold_next(d, fold, &b);
				if (c && fold->ninsn != n0) {
					/* (As hwt flow's fold_cover().) */
					count_went(c, ip0);
					count_block(c, d, &b);
				}
				if (status < 0)
					break;
				if (status)
					continue;
			}
			status = hwt_blk_next(d, &b);
			if (b.ninsn || status >= 0) {
				hwt_blk_fold_block(d, fold, &b, NULL);
				if (c)
					count_block(c, d, &b);
			}
			if (status < 0)
				break;
		}
		how->at(how->ctx, fold, FOLD_AT_END, status, NULL);
	}
	hwt_blk_fold_end(fold, NULL);
	if (c && how->fast && hwt_blk_tally(d, NULL, NULL) < 0)
		c->full = 1;
	return ended;
}

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hwt_an_cover_: what a trace ran, for people: its source lines and
 * functions with their counts (an lcov tracefile), the bytes of its code
 * by file (a drcov file).
 *
 * A block is counted by its key (the image's id and generation, its
 * first IP, length and mode: the same address may hold other code in
 * another process or after a mapping changed), one table lookup a block.
 * The first time a key comes, its instructions are walked and each is
 * resolved, while the image still maps them, to the file and offset it
 * comes from; the lines are looked up only at the end, once per distinct
 * instruction. Counts then go from blocks to instructions (@ins, by file
 * and offset), which is also what two covers (two -j segments, two
 * traces) add up by, whatever their images were. The blocks the decoder
 * folds come as counts of its graph's nodes (hwt_an_cover_tally): a
 * node's block is resolved when the node is made, and its counts added
 * to it when the decoder tells them.
 *
 * A line's count is the count of its instruction that ran most often: a
 * line whose code loops within itself (rep movs, a for's test) counts its
 * turns. (gcov counts a line's blocks; on -O0 code the two agree:
 * tests/cli/lcov.sh.)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hwt/analysis.h>

#include "common/grow.h"

#define NO_FILE UINT32_MAX

struct cov_block {
	uint64_t ip, image, gen;	/* image 0: an empty slot */
	uint64_t count;			/* since the last flatten() */
	/* a conditional jump at its end (@cond): the times it was taken,
	 * and fell through (since the last flatten()) */
	uint64_t taken, fell;
	uint64_t next;			/* ... where it falls through to */
	uint32_t ninsn, first, n;	/* its instructions: @at[first..] */
	uint8_t mode, cond;
};

/* Where an instruction comes from: file @file, offset @off. */
struct cov_at {
	uint64_t off;
	uint32_t file;
	uint8_t size;
};

struct cov_ins {
	uint64_t off, count;
	uint64_t taken, fell;		/* a conditional jump's outcomes */
	uint32_t file;
	uint8_t size, cond;
};

/*
 * The blocks of the image now (its id and generation: @front_image,
 * @front_gen) counted in a small direct-mapped table first, which the
 * hot ones stay in: the block table is ~50 bytes a block, a random
 * probe into megabytes. A count moves to the block table when its slot
 * is taken by another block, or the image changes (spill()).
 */
#define FRONT_BITS 12

struct cov_front {
	uint64_t ip;
	uint32_t ninsn;			/* 0: an empty slot */
	uint8_t mode, cond;
	uint64_t count, taken, fell;
	uint64_t next;			/* (as the block's) */
};

/* A slot of the index of blocks (or instructions): the entry's place,
 * @k - 1 in the array (0: an empty slot), and bits of its key's hash,
 * compared before the key is. */
struct cov_slot {
	uint32_t k, tag;
};

struct hwt_an_cover {
	/* The blocks, in the order they came, found by @bslot (open
	 * addressing, @bmask + 1): 8-byte slots half empty, where 72-byte
	 * ones were (python3's recording: 85 K blocks in its main stream's
	 * cover, 18 MB of table before, about 10 now; 3% less time). */
	struct cov_block *blocks;
	size_t nblocks, capblocks;
	struct cov_slot *bslot;
	size_t bmask;
	struct cov_at *at;
	size_t nat, capat;
	/* The instructions, in the order they came, found as the blocks are
	 * (@islot: open addressing, @imask + 1): a table of 40-byte slots
	 * half empty made a -j segment's cover twice the size, and adding
	 * one to another a scan of it. */
	struct cov_ins *ins;
	size_t nins, capins;
	struct cov_slot *islot;
	size_t imask;
	char **paths;			/* the files, by number */
	size_t npaths, cappaths;
	/* the number of the path last looked up */
	uint32_t last_file;
	/* The walks of new blocks: lent (hwt_an_cover_use_walks()), or
	 * made when first needed (@own_walks) */
	struct hwt_an_walks *walks, *own_walks;
	/* where the reports look for debug files (NULL: /usr/lib/debug) */
	char *debug_dir;
	struct cov_front front[1u << FRONT_BITS];
	uint64_t front_image, front_gen;
	/* The last block, if it ends in a conditional jump whose outcome the
	 * next block (or hwt_an_cover_goto()) tells: its front slot. */
	struct cov_front *pend;
};

static uint64_t mix(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t h = (a ^ b * 0x9e3779b97f4a7c15ull ^ c * 0xc2b2ae3d27d4eb4full);

	h ^= h >> 31;
	h *= 0xff51afd7ed558ccdull;
	return h ^ h >> 29;
}

struct hwt_an_cover *hwt_an_cover_new(void)
{
	struct hwt_an_cover *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->bmask = 1023;
	c->imask = 1023;
	c->bslot = calloc(c->bmask + 1, sizeof(*c->bslot));
	c->islot = calloc(c->imask + 1, sizeof(*c->islot));
	if (!c->bslot || !c->islot) {
		hwt_an_cover_delete(c);
		return NULL;
	}
	return c;
}

void hwt_an_cover_delete(struct hwt_an_cover *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->npaths; i++)
		free(c->paths[i]);
	free(c->paths);
	free(c->blocks);
	free(c->bslot);
	free(c->at);
	free(c->ins);
	free(c->islot);
	hwt_an_walks_delete(c->own_walks);
	free(c->debug_dir);
	free(c);
}

int hwt_an_cover_set_debug_dir(struct hwt_an_cover *c, const char *dir)
{
	if (!c)
		return -HWT_ERR_INVALID;
	return hwt_strset(&c->debug_dir, dir);
}

/* The reports' source lines, with the debug directory set. */
static struct hwt_an_lines *cover_lines(const struct hwt_an_cover *c)
{
	struct hwt_an_lines *ln = hwt_an_lines_new();

	if (ln && hwt_an_lines_set_debug_dir(ln, c->debug_dir) < 0) {
		hwt_an_lines_delete(ln);
		return NULL;
	}
	return ln;
}

void hwt_an_cover_use_walks(struct hwt_an_cover *c,
			    struct hwt_an_walks *walks)
{
	if (c)
		c->walks = walks ? walks : c->own_walks;
}

/*
 * The number of file @path, made if new; NO_FILE if out of memory. By
 * the name, never by the pointer: an image's names, and a merged cover's,
 * are freed, and another name may come at the same address (-j2 counted
 * a libc instruction as another file's, now and then, so).
 */
static uint32_t file_of(struct hwt_an_cover *c, const char *path)
{
	if (c->npaths && !strcmp(c->paths[c->last_file], path))
		return c->last_file;
	for (size_t i = 0; i < c->npaths; i++) {
		if (!strcmp(c->paths[i], path)) {
			c->last_file = (uint32_t)i;
			return (uint32_t)i;
		}
	}
	if (c->npaths >= NO_FILE ||
	    hwt_grow((void **)&c->paths, &c->cappaths, c->npaths + 1,
		     sizeof(*c->paths)) < 0)
		return NO_FILE;
	c->paths[c->npaths] = strdup(path);
	if (!c->paths[c->npaths])
		return NO_FILE;
	c->last_file = (uint32_t)c->npaths;
	return (uint32_t)c->npaths++;
}

/* An index (*@slot, *@mask + 1 slots) of @n entries made twice the
 * size, each entry k at the first empty slot from @hash(@c, k)'s (the
 * keys are all different: none compared). */
static int index_grow(const struct hwt_an_cover *c, struct cov_slot **slot,
		      size_t *mask, size_t n,
		      uint64_t (*hash)(const struct hwt_an_cover *, size_t))
{
	size_t m = 2 * *mask + 1;
	struct cov_slot *tab = calloc(m + 1, sizeof(*tab));

	if (!tab)
		return -HWT_ERR_NOMEM;
	for (size_t k = 0; k < n; k++) {
		uint64_t h = hash(c, k);
		size_t i = (size_t)h & m;

		while (tab[i].k)
			i = (i + 1) & m;
		tab[i].k = (uint32_t)k + 1;
		tab[i].tag = (uint32_t)(h >> 32);
	}
	free(*slot);
	*slot = tab;
	*mask = m;
	return 0;
}

/* ---- instructions ---- */

/* Where instruction (@file, @off) is or would be: a 64-byte stretch of a
 * file's code in slots side by side (a block's instructions, which come
 * together). */
static uint64_t ins_hash(uint32_t file, uint64_t off)
{
	return mix(off >> 6, file, 0) + (off & 63);
}

static struct cov_slot *ins_slot(const struct hwt_an_cover *c, uint32_t file,
				  uint64_t off)
{
	uint64_t h = ins_hash(file, off);
	uint32_t tag = (uint32_t)(h >> 32);
	size_t i = (size_t)h & c->imask;

	for (;; i = (i + 1) & c->imask) {
		struct cov_slot *s = &c->islot[i];
		const struct cov_ins *e;

		if (!s->k)
			return s;
		e = &c->ins[s->k - 1];
		if (s->tag == tag && e->off == off && e->file == file)
			return s;
	}
}

/* Instruction (@file, @off), or NULL: none ran. */
static const struct cov_ins *ins_find(const struct hwt_an_cover *c,
				      uint32_t file, uint64_t off)
{
	const struct cov_slot *s = ins_slot(c, file, off);

	return s->k ? &c->ins[s->k - 1] : NULL;
}

static uint64_t ins_hash_of(const struct hwt_an_cover *c, size_t k)
{
	return ins_hash(c->ins[k].file, c->ins[k].off);
}

static int ins_add(struct hwt_an_cover *c, uint32_t file, uint64_t off,
		   uint8_t size, uint64_t count, const uint64_t *branch)
{
	struct cov_slot *s = ins_slot(c, file, off);
	struct cov_ins *e;

	if (!s->k) {
		if (c->nins >= UINT32_MAX - 1 ||
		    hwt_grow((void **)&c->ins, &c->capins, c->nins + 1,
			     sizeof(*c->ins)) < 0)
			return -HWT_ERR_NOMEM;
		if (2 * (c->nins + 1) > c->imask + 1) {
			if (index_grow(c, &c->islot, &c->imask, c->nins,
				       ins_hash_of) < 0)
				return -HWT_ERR_NOMEM;
			s = ins_slot(c, file, off);
		}
		e = &c->ins[c->nins];
		e->file = file;
		e->off = off;
		e->size = size;
		e->count = 0;
		e->taken = e->fell = 0;
		e->cond = 0;
		s->k = (uint32_t)++c->nins;
		s->tag = (uint32_t)(ins_hash_of(c, c->nins - 1) >> 32);
	}
	e = &c->ins[s->k - 1];
	e->count += count;
	if (branch) {
		e->cond = 1;
		e->taken += branch[0];
		e->fell += branch[1];
	}
	return 0;
}

static struct cov_block *block_find(const struct hwt_an_cover *c,
				    uint64_t image, uint64_t gen, uint64_t ip,
				    uint32_t ninsn, uint8_t mode);

/* Front slot @f's count to its block (which is in the table). */
static void spill_one(struct hwt_an_cover *c, struct cov_front *f)
{
	struct cov_block *e;

	if (f->ninsn && (f->count || f->taken || f->fell) &&
	    (e = block_find(c, c->front_image, c->front_gen, f->ip, f->ninsn,
			    f->mode))) {
		e->count += f->count;
		e->taken += f->taken;
		e->fell += f->fell;
	}
	f->count = f->taken = f->fell = 0;
}

/* All of the front's counts to the blocks, the front emptied (and no
 * outcome pending: its slot is gone). */
static void spill(struct hwt_an_cover *c)
{
	c->pend = NULL;
	for (size_t i = 0; i < (1u << FRONT_BITS); i++) {
		spill_one(c, &c->front[i]);
		c->front[i].ninsn = 0;
	}
}

/* The blocks' counts into the instructions'. */
static int flatten(struct hwt_an_cover *c)
{
	spill(c);
	for (size_t i = 0; i < c->nblocks; i++) {
		struct cov_block *b = &c->blocks[i];

		if (!b->count && !b->taken && !b->fell)
			continue;
		for (uint32_t k = 0; k < b->n; k++) {
			const struct cov_at *a = &c->at[b->first + k];
			/* (Its jump's outcomes go with its last instruction.) */
			uint64_t branch[2] = { b->taken, b->fell };
			int last = b->cond && k + 1 == b->n;

			if (a->file != NO_FILE &&
			    ins_add(c, a->file, a->off, a->size, b->count,
				    last ? branch : NULL) < 0)
				return -HWT_ERR_NOMEM;
		}
		b->count = b->taken = b->fell = 0;
	}
	return 0;
}

int hwt_an_cover_flatten(struct hwt_an_cover *c)
{
	if (!c)
		return -HWT_ERR_INVALID;
	return flatten(c) < 0 ? -HWT_ERR_NOMEM : 0;
}

/* ---- blocks ---- */

/* The slot of the block with this key: its own, or the empty one it
 * would take. */
static struct cov_slot *block_slot(const struct hwt_an_cover *c,
				    uint64_t image, uint64_t gen, uint64_t ip,
				    uint32_t ninsn, uint8_t mode)
{
	uint64_t h = mix(ip, image, gen);
	uint32_t tag = (uint32_t)(h >> 32);
	size_t i = (size_t)h & c->bmask;

	for (;; i = (i + 1) & c->bmask) {
		struct cov_slot *s = &c->bslot[i];
		const struct cov_block *e;

		if (!s->k)
			return s;
		e = &c->blocks[s->k - 1];
		if (s->tag == tag && e->ip == ip && e->image == image &&
		    e->gen == gen && e->ninsn == ninsn && e->mode == mode)
			return s;
	}
}

/* The block with this key, or NULL. */
static struct cov_block *block_find(const struct hwt_an_cover *c,
				    uint64_t image, uint64_t gen, uint64_t ip,
				    uint32_t ninsn, uint8_t mode)
{
	const struct cov_slot *s = block_slot(c, image, gen, ip, ninsn, mode);

	return s->k ? &c->blocks[s->k - 1] : NULL;
}

static uint64_t block_hash_of(const struct hwt_an_cover *c, size_t k)
{
	return mix(c->blocks[k].ip, c->blocks[k].image, c->blocks[k].gen);
}

/* A new block's instructions: where each comes from. */
static int block_resolve(struct hwt_an_cover *c, struct cov_block *e,
			 const struct hwt_image *image,
			 const struct hwt_block *b)
{
	struct hwt_an_walk w;
	uint64_t ip = b->ip;
	uint32_t k = 0;
	int err;

	if (!c->walks && !(c->walks = c->own_walks = hwt_an_walks_new()))
		return -HWT_ERR_NOMEM;
	err = hwt_an_walks_get(c->walks, image, b, &w);

	/* (An instruction that cannot be read: those before it count.) */
	if (err == -HWT_ERR_NOMEM)
		return err;
	if (c->nat + w.ninsn > UINT32_MAX ||
	    hwt_grow((void **)&c->at, &c->capat, c->nat + w.ninsn,
		     sizeof(*c->at)) < 0)
		return -HWT_ERR_NOMEM;
	e->first = (uint32_t)c->nat;
	e->n = w.ninsn;
	/* (Walked to its end: its last instruction is the block's.) */
	if (w.ninsn == b->ninsn && w.last_iclass == HWT_IC_COND_JUMP) {
		e->cond = 1;
		e->next = w.last + w.last_size;
	}
	for (uint32_t i = 0; i < w.ninsn; i++) {
		struct cov_at *a = &c->at[c->nat++];
		const char *path;

		a->file = NO_FILE;
		a->size = w.sizes[i];
		if (hwt_image_origin(image, ip, &path, &a->off) >= 0) {
			a->file = file_of(c, path);
			if (a->file == NO_FILE)
				return -HWT_ERR_NOMEM;
		}
		ip = hwt_an_walk_next(&w, i, ip, &k);
	}
	return 0;
}

/* Block @b of @image (its id and generation: @id, @gen), in the table
 * (resolved if new): its entry, or NULL (no memory). */
static struct cov_block *block_add(struct hwt_an_cover *c,
				   const struct hwt_image *image,
				   const struct hwt_block *b, uint64_t id,
				   uint64_t gen)
{
	struct cov_slot *s = block_slot(c, id, gen, b->ip, b->ninsn, b->mode);
	struct cov_block *e;

	if (s->k)
		return &c->blocks[s->k - 1];
	if (c->nblocks >= UINT32_MAX - 1 ||
	    hwt_grow((void **)&c->blocks, &c->capblocks, c->nblocks + 1,
		     sizeof(*c->blocks)) < 0)
		return NULL;
	if (2 * (c->nblocks + 1) > c->bmask + 1) {
		if (index_grow(c, &c->bslot, &c->bmask, c->nblocks,
			       block_hash_of) < 0)
			return NULL;
		s = block_slot(c, id, gen, b->ip, b->ninsn, b->mode);
	}
	e = &c->blocks[c->nblocks];
	memset(e, 0, sizeof(*e));
	if (block_resolve(c, e, image, b) < 0)
		return NULL;
	e->ip = b->ip;
	e->image = id;
	e->gen = gen;
	e->ninsn = b->ninsn;
	e->mode = b->mode;
	s->k = (uint32_t)++c->nblocks;
	s->tag = (uint32_t)(block_hash_of(c, c->nblocks - 1) >> 32);
	return e;
}

/* The flow went on at @ip: the pending jump's outcome. */
static inline void went(struct hwt_an_cover *c, uint64_t ip)
{
	struct cov_front *f = c->pend;

	if (!f)
		return;
	c->pend = NULL;
	if (ip == f->next)
		f->fell++;
	else
		f->taken++;
}

void hwt_an_cover_goto(struct hwt_an_cover *c, uint64_t ip)
{
	if (c)
		went(c, ip);
}

void hwt_an_cover_cut(struct hwt_an_cover *c)
{
	if (c)
		c->pend = NULL;
}

int hwt_an_cover_block(struct hwt_an_cover *c, const struct hwt_image *image,
		       const struct hwt_block *b)
{
	struct cov_front *f;
	struct cov_block *e;
	uint64_t id, gen;

	if (!c || !image || !b)
		return -HWT_ERR_INVALID;
	if (!b->ninsn)
		return 0;
	went(c, b->ip);
	id = hwt_image_id(image);
	gen = hwt_image_generation(image);
	if (__builtin_expect(id != c->front_image || gen != c->front_gen, 0)) {
		spill(c);
		c->front_image = id;
		c->front_gen = gen;
	}
	f = &c->front[(b->ip ^ b->ip >> FRONT_BITS ^ b->ninsn) &
		      ((1u << FRONT_BITS) - 1)];
	if (__builtin_expect(f->ip == b->ip && f->ninsn == b->ninsn &&
			     f->mode == b->mode, 1)) {
		f->count++;
		if (f->cond)
			c->pend = f;
		return 0;
	}
	e = block_add(c, image, b, id, gen);
	if (!e)
		return -HWT_ERR_NOMEM;
	spill_one(c, f);
	f->ip = b->ip;
	f->ninsn = b->ninsn;
	f->mode = b->mode;
	f->cond = e->cond;
	f->next = e->next;
	f->count = 1;
	if (f->cond)
		c->pend = f;
	return 0;
}

/* hwt_an_cover_tally: a graph node's block, resolved now (into the
 * table, not the front, whose image may be another's: its pending
 * outcome stays). */
static int tally_node(void *ctx, const struct hwt_image *image,
		      const struct hwt_block *b)
{
	struct hwt_an_cover *c = ctx;

	if (!b->ninsn)
		return 0;
	if (!block_add(c, image, b, hwt_image_id(image),
		       hwt_image_generation(image)))
		return -HWT_ERR_NOMEM;
	return 0;
}

/* ... its counts, by the image's id and generation when it was named. */
static int tally_count(void *ctx, uint64_t image, uint64_t gen,
		       const struct hwt_block *b, uint64_t n, uint64_t taken,
		       uint64_t fell)
{
	struct hwt_an_cover *c = ctx;
	struct cov_block *e = block_find(c, image, gen, b->ip, b->ninsn,
					 b->mode);

	if (!e)
		return -HWT_ERR_INVALID;
	e->count += n;
	e->taken += taken;
	e->fell += fell;
	return 0;
}

const struct hwt_blk_tally_ops hwt_an_cover_tally = {
	.node = tally_node,
	.count = tally_count,
};

int hwt_an_cover_merge(struct hwt_an_cover *dst, struct hwt_an_cover *src)
{
	uint32_t *file;
	int err = 0;

	if (!dst || !src)
		return -HWT_ERR_INVALID;
	if (flatten(src) < 0)
		return -HWT_ERR_NOMEM;
	/* @src's file numbers as @dst's (a name compared once a file, not
	 * once an instruction). */
	file = malloc((src->npaths + 1) * sizeof(*file));
	if (!file)
		return -HWT_ERR_NOMEM;
	for (size_t i = 0; i < src->npaths; i++)
		if ((file[i] = file_of(dst, src->paths[i])) == NO_FILE)
			err = -HWT_ERR_NOMEM;
	for (size_t i = 0; !err && i < src->nins; i++) {
		const struct cov_ins *e = &src->ins[i];
		uint64_t branch[2] = { e->taken, e->fell };

		if (ins_add(dst, file[e->file], e->off, e->size, e->count,
			    e->cond ? branch : NULL) < 0)
			err = -HWT_ERR_NOMEM;
	}
	free(file);
	return err;
}

/* ---- lines ---- */

/*
 * Source names ranked by strcmp(), a name under two pointers (two
 * units') one rank, so that the sorts of lines and branches compare
 * numbers: with strcmp() on python3's 600 K lines and branches the sorts
 * took about a tenth of --lcov's time. Pointers by a hash, the last one
 * asked kept (they come in runs).
 */
struct cov_rank {
	const char *name;
	uint32_t rank;
};

struct cov_ranks {
	struct cov_rank *slot;
	size_t n, mask;
	const struct cov_rank *last;
};

static struct cov_rank *rank_slot(struct cov_rank *tab, size_t mask,
				  const char *name)
{
	size_t i = (size_t)mix((uintptr_t)name, 0, 0) & mask;

	while (tab[i].name && tab[i].name != name)
		i = (i + 1) & mask;
	return &tab[i];
}

static int rank_add(struct cov_ranks *r, const char *name)
{
	struct cov_rank *e;

	if (r->last && r->last->name == name)
		return 0;
	if (2 * (r->n + 1) > r->mask + 1 || !r->slot) {
		size_t mask = r->slot ? 2 * r->mask + 1 : 255;
		struct cov_rank *tab = calloc(mask + 1, sizeof(*tab));

		if (!tab)
			return -HWT_ERR_NOMEM;
		for (size_t i = 0; r->slot && i <= r->mask; i++)
			if (r->slot[i].name)
				*rank_slot(tab, mask, r->slot[i].name) =
					r->slot[i];
		free(r->slot);
		r->slot = tab;
		r->mask = mask;
	}
	e = rank_slot(r->slot, r->mask, name);
	if (!e->name) {
		e->name = name;
		r->n++;
	}
	r->last = e;
	return 0;
}

static int rank_cmp(const void *a, const void *b)
{
	return strcmp((*(const struct cov_rank *const *)a)->name,
		      (*(const struct cov_rank *const *)b)->name);
}

/* Rank the names added. */
static int rank_names(struct cov_ranks *r)
{
	struct cov_rank **v = malloc((r->n + 1) * sizeof(*v));
	size_t m = 0;
	uint32_t rank = 0;

	if (!v)
		return -HWT_ERR_NOMEM;
	for (size_t i = 0; r->slot && i <= r->mask; i++)
		if (r->slot[i].name)
			v[m++] = &r->slot[i];
	if (m)
		qsort(v, m, sizeof(*v), rank_cmp);
	for (size_t i = 0; i < m; i++) {
		if (i && strcmp(v[i - 1]->name, v[i]->name))
			rank++;
		v[i]->rank = rank;
	}
	free(v);
	r->last = NULL;
	return 0;
}

/* The rank of a name added (and ranked). */
static uint32_t rank_of(struct cov_ranks *r, const char *name)
{
	if (!r->last || r->last->name != name)
		r->last = rank_slot(r->slot, r->mask, name);
	return r->last->rank;
}

struct cov_line {
	const char *src;
	unsigned line;
	uint32_t srank;		/* @src's (struct cov_ranks) */
	uint64_t count;		/* 0: it did not run */
};

/*
 * The lines, each (name, line) once by the name's pointer (@slot: their
 * indexes + 1 in @v, open addressing): a line table has a row for each
 * place a line's code starts, libc's hundreds of thousands. A name may
 * still come under two pointers (two units'): the sort joins those.
 */
struct cov_lines {
	struct cov_line *v;
	size_t n, cap;
	uint32_t *slot;
	size_t mask;
};

static size_t line_hash(const char *src, unsigned line)
{
	return (size_t)mix((uintptr_t)src, line >> 4, 0) + (line & 15);
}

static int line_add(struct cov_lines *l, const char *src, unsigned line,
		    uint64_t count)
{
	size_t i;

	if (2 * (l->n + 1) > l->mask + 1 || !l->slot) {
		size_t mask = l->slot ? 2 * l->mask + 1 : 4095;
		uint32_t *slot = calloc(mask + 1, sizeof(*slot));

		if (!slot || l->n >= UINT32_MAX - 1) {
			free(slot);
			return -HWT_ERR_NOMEM;
		}
		for (size_t k = 0; k < l->n; k++) {
			i = line_hash(l->v[k].src, l->v[k].line) & mask;
			while (slot[i])
				i = (i + 1) & mask;
			slot[i] = (uint32_t)k + 1;
		}
		free(l->slot);
		l->slot = slot;
		l->mask = mask;
	}
	i = line_hash(src, line) & l->mask;
	for (; l->slot[i]; i = (i + 1) & l->mask) {
		struct cov_line *e = &l->v[l->slot[i] - 1];

		if (e->src == src && e->line == line) {
			if (count > e->count)
				e->count = count;
			return 0;
		}
	}
	if (hwt_grow((void **)&l->v, &l->cap, l->n + 1, sizeof(*l->v)) < 0)
		return -HWT_ERR_NOMEM;
	l->slot[i] = (uint32_t)l->n + 1;
	l->v[l->n].src = src;
	l->v[l->n].line = line;
	l->v[l->n].count = count;
	l->n++;
	return 0;
}

static int line_found(void *ctx, const char *src, unsigned line)
{
	return line_add(ctx, src, line, 0);
}

/* (By rank: the names ranked first.) */
static int line_cmp(const void *a, const void *b)
{
	const struct cov_line *x = a, *y = b;

	if (x->srank != y->srank)
		return x->srank < y->srank ? -1 : 1;
	return (x->line > y->line) - (x->line < y->line);
}

struct cov_func {
	const char *src, *name;
	unsigned line;
	uint64_t count;		/* the times its entry ran */
};

struct cov_funcs {
	struct hwt_an_cover *c;
	uint32_t file;		/* the functions of this file, now */
	struct cov_func *v;
	size_t n, cap;
};

static int func_found(void *ctx, const char *src, unsigned line,
		      const char *name, uint64_t off)
{
	struct cov_funcs *fs = ctx;
	const struct cov_ins *e = ins_find(fs->c, fs->file, off);

	if (hwt_grow((void **)&fs->v, &fs->cap, fs->n + 1, sizeof(*fs->v)) < 0)
		return -HWT_ERR_NOMEM;
	fs->v[fs->n].src = src;
	fs->v[fs->n].name = name;
	fs->v[fs->n].line = line;
	fs->v[fs->n].count = e ? e->count : 0;
	fs->n++;
	return 0;
}

static int func_cmp(const void *a, const void *b)
{
	const struct cov_func *x = a, *y = b;
	int r = strcmp(x->src, y->src);

	return r ? r : strcmp(x->name, y->name);
}

/* The functions of the files that ran, sorted by file and name, one entry
 * a name: copies of one (a header's static function in several units)
 * summed, as the times it was entered. */
static int collect_funcs(struct hwt_an_cover *c, struct hwt_an_lines *ln,
			 struct cov_funcs *fs)
{
	size_t k = 0;
	int err = 0;

	fs->c = c;
	for (size_t f = 0; !err && f < c->npaths; f++) {
		fs->file = (uint32_t)f;
		err = hwt_an_lines_funcs(ln, c->paths[f], func_found, fs);
	}
	if (err)
		return err;
	if (fs->n)
		qsort(fs->v, fs->n, sizeof(*fs->v), func_cmp);
	for (size_t i = 0; i < fs->n; i++) {
		if (k && !func_cmp(&fs->v[k - 1], &fs->v[i])) {
			fs->v[k - 1].count += fs->v[i].count;
			continue;
		}
		fs->v[k++] = fs->v[i];
	}
	fs->n = k;
	return 0;
}

/* A conditional jump, by its line: one that ran, with its outcomes, or
 * one in code that never ran (@never). */
struct cov_branch {
	const char *src;
	unsigned line;
	uint32_t file;		/* the file its code is in */
	uint64_t off, taken, fell;
	/* @src's rank (struct cov_ranks), and @file's by name
	 * (rank_files(): the files' numbers depend on the order they came
	 * in, which -j does not keep) */
	uint32_t srank, prank;
	uint8_t never;		/* never run: its outcomes are "-" */
};

struct cov_branches {
	struct cov_branch *v;
	size_t n, cap;
};

/* (By rank: the names ranked first.) */
static int branch_cmp(const void *a, const void *b)
{
	const struct cov_branch *x = a, *y = b;

	if (x->srank != y->srank)
		return x->srank < y->srank ? -1 : 1;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	if (x->prank != y->prank)
		return x->prank < y->prank ? -1 : 1;
	return (x->off > y->off) - (x->off < y->off);
}

/* Jump @e (at @off of file @file) on line @line of @src; NULL: never
 * run. */
static int branch_add(struct cov_branches *br, const char *src, unsigned line,
		      uint32_t file, uint64_t off, const struct cov_ins *e)
{
	if (hwt_grow((void **)&br->v, &br->cap, br->n + 1, sizeof(*br->v)) < 0)
		return -HWT_ERR_NOMEM;
	br->v[br->n].src = src;
	br->v[br->n].line = line;
	br->v[br->n].file = file;
	br->v[br->n].off = off;
	br->v[br->n].taken = e ? e->taken : 0;
	br->v[br->n].fell = e ? e->fell : 0;
	br->v[br->n].never = !e;
	br->n++;
	return 0;
}

/* The conditional jumps of code that never ran (or ran without an
 * outcome told), in the code the line tables cover: found, not hit, as
 * gcov lists a branch whose block never ran. */
struct code_jumps {
	struct hwt_an_cover *c;
	struct cov_branches *br;
	uint32_t file;
};

static int code_jumps(void *ctx, uint64_t off, const uint8_t *code,
		      size_t len, unsigned mode, const char *src,
		      unsigned line)
{
	struct code_jumps *j = ctx;
	static const struct cov_ins ran = { 0 };
	struct hwt_insn_info info;

	for (size_t at = 0; at < len; at += info.size) {
		const struct cov_ins *e;
		int err;

		/* (Not code after all: the next row's place.) */
		if (hwt_insn_decode(&info, code + at, len - at, off + at,
				    mode) < 0)
			break;
		if (info.iclass != HWT_IC_COND_JUMP)
			continue;
		e = ins_find(j->c, j->file, off + at);
		if (e && e->cond)
			continue;
		err = branch_add(j->br, src, line, j->file, off + at,
				 e ? &ran : NULL);
		if (err)
			return err;
	}
	return 0;
}

static int rank_files(const struct hwt_an_cover *c, uint32_t *rank);

/* The ranks of the lines' and branches' names, for their sorts (@c's
 * files by rank_files()). */
static int rank_lines(const struct hwt_an_cover *c, struct cov_lines *l,
		      struct cov_branches *br)
{
	struct cov_ranks r = { 0 };
	uint32_t *frank = malloc((c->npaths + 1) * sizeof(*frank));
	int err = frank ? rank_files(c, frank) : -HWT_ERR_NOMEM;

	for (size_t i = 0; !err && i < l->n; i++)
		err = rank_add(&r, l->v[i].src);
	for (size_t i = 0; !err && i < br->n; i++)
		err = rank_add(&r, br->v[i].src);
	if (!err)
		err = rank_names(&r);
	for (size_t i = 0; !err && i < l->n; i++)
		l->v[i].srank = rank_of(&r, l->v[i].src);
	for (size_t i = 0; !err && i < br->n; i++) {
		br->v[i].srank = rank_of(&r, br->v[i].src);
		br->v[i].prank = frank[br->v[i].file];
	}
	free(r.slot);
	free(frank);
	return err;
}

/* Every line of the files that ran, and the counts of those that did:
 * sorted, one entry a line; their conditional jumps, sorted by line. */
static int collect(struct hwt_an_cover *c, struct hwt_an_lines *ln,
		   struct cov_lines *l, struct cov_branches *br,
		   struct hwt_an_cover_sum *sum)
{
	size_t k = 0;
	int err = flatten(c);

	for (size_t f = 0; !err && f < c->npaths; f++)
		err = hwt_an_lines_each(ln, c->paths[f], line_found, l);
	for (size_t i = 0; !err && i < c->nins; i++) {
		const struct cov_ins *e = &c->ins[i];
		const char *src;
		unsigned line;
		int r;

		sum->insns++;
		r = hwt_an_lines_at(ln, c->paths[e->file], e->off, &src, &line);
		if (r < 0)
			err = r;
		else if (r)
			err = line_add(l, src, line, e->count);
		else
			sum->insns_no_line++;
		if (!err && r > 0 && e->cond)
			err = branch_add(br, src, line, e->file, e->off, e);
	}
	for (size_t f = 0; !err && f < c->npaths; f++) {
		struct code_jumps j = { c, br, (uint32_t)f };

		err = hwt_an_lines_code(ln, c->paths[f], code_jumps, &j);
	}
	if (!err)
		err = rank_lines(c, l, br);
	if (err)
		return err;
	if (br->n)
		qsort(br->v, br->n, sizeof(*br->v), branch_cmp);
	if (l->n)
		qsort(l->v, l->n, sizeof(*l->v), line_cmp);
	for (size_t i = 0; i < l->n; i++) {
		if (k && !line_cmp(&l->v[k - 1], &l->v[i])) {
			struct cov_line *d = &l->v[k - 1];

			if (l->v[i].count > d->count)
				d->count = l->v[i].count;
			continue;
		}
		l->v[k++] = l->v[i];
	}
	l->n = k;
	return 0;
}

int hwt_an_cover_lcov(struct hwt_an_cover *c, FILE *out, const char *test,
		      struct hwt_an_cover_sum *sum)
{
	struct hwt_an_lines *ln;
	struct cov_lines l = { 0 };
	struct cov_funcs fs = { 0 };
	struct cov_branches br = { 0 };
	size_t fi = 0, bi = 0;
	int err;

	if (!c || !sum)
		return -HWT_ERR_INVALID;
	memset(sum, 0, sizeof(*sum));
	ln = cover_lines(c);
	if (!ln)
		return -HWT_ERR_NOMEM;
	err = collect(c, ln, &l, &br, sum);
	if (!err)
		err = collect_funcs(c, ln, &fs);
	for (size_t i = 0; !err && i < l.n;) {
		size_t j = i, hit = 0, nf = 0, fhit = 0;

		while (j < l.n && !strcmp(l.v[j].src, l.v[i].src))
			j++;
		if (out)
			fprintf(out, "TN:%s\nSF:%s\n", test ? test : "",
				l.v[i].src);
		/* Its functions (those of files without lines are left). */
		while (fi < fs.n && strcmp(fs.v[fi].src, l.v[i].src) < 0)
			fi++;
		for (size_t g = fi; g < fs.n && !strcmp(fs.v[g].src, l.v[i].src);
		     g++, nf++)
			if (out)
				fprintf(out, "FN:%u,%s\n", fs.v[g].line,
					fs.v[g].name);
		for (; fi < fs.n && !strcmp(fs.v[fi].src, l.v[i].src); fi++) {
			fhit += fs.v[fi].count != 0;
			if (out)
				fprintf(out, "FNDA:%" PRIu64 ",%s\n",
					fs.v[fi].count, fs.v[fi].name);
		}
		if (out)
			fprintf(out, "FNF:%zu\nFNH:%zu\n", nf, fhit);
		sum->funcs += nf;
		sum->funcs_hit += fhit;
		/* Its conditional jumps: two branches each, taken and not,
		 * numbered by the jump's place on its line. */
		while (bi < br.n && strcmp(br.v[bi].src, l.v[i].src) < 0)
			bi++;
		{
			size_t nb = 0, bhit = 0, blk = 0;

			for (; bi < br.n && !strcmp(br.v[bi].src, l.v[i].src);
			     bi++, nb += 2) {
				const struct cov_branch *b = &br.v[bi];

				blk = bi && !strcmp(br.v[bi - 1].src, b->src) &&
				      br.v[bi - 1].line == b->line ? blk + 1 : 0;
				bhit += (b->taken != 0) + (b->fell != 0);
				if (out && b->never)
					fprintf(out, "BRDA:%u,%zu,0,-\n"
						"BRDA:%u,%zu,1,-\n",
						b->line, blk, b->line, blk);
				else if (out)
					fprintf(out, "BRDA:%u,%zu,0,%" PRIu64
						"\nBRDA:%u,%zu,1,%" PRIu64 "\n",
						b->line, blk, b->taken, b->line,
						blk, b->fell);
			}
			if (out)
				fprintf(out, "BRF:%zu\nBRH:%zu\n", nb, bhit);
			sum->branches += nb;
			sum->branches_hit += bhit;
		}
		for (size_t k = i; k < j; k++) {
			hit += l.v[k].count != 0;
			if (out)
				fprintf(out, "DA:%u,%" PRIu64 "\n",
					l.v[k].line, l.v[k].count);
		}
		if (out)
			fprintf(out, "LF:%zu\nLH:%zu\nend_of_record\n", j - i,
				hit);
		sum->files++;
		sum->found += j - i;
		sum->hit += hit;
		i = j;
	}
	free(l.v);
	free(l.slot);
	free(fs.v);
	free(br.v);
	hwt_an_lines_delete(ln);
	return err;
}

/* ---- drcov ---- */

struct cov_bb {
	uint32_t file;
	uint32_t rank;		/* its file's place by name */
	uint64_t start;		/* from the module's base */
	uint32_t size;
};

static int bb_cmp(const void *a, const void *b)
{
	const struct cov_bb *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return (x->start > y->start) - (x->start < y->start);
}

/* For ranking the files by name (qsort has no context: the names come
 * with their numbers). */
struct cov_named {
	const char *name;
	uint32_t file;
};

static int named_cmp(const void *a, const void *b)
{
	return strcmp(((const struct cov_named *)a)->name,
		      ((const struct cov_named *)b)->name);
}

/* @rank[f]: file @f's place among @c's files by name, so that modules
 * come in the same order whatever order the files came in (-j). */
static int rank_files(const struct hwt_an_cover *c, uint32_t *rank)
{
	struct cov_named *v = calloc(c->npaths + 1, sizeof(*v));

	if (!v)
		return -HWT_ERR_NOMEM;
	for (size_t f = 0; f < c->npaths; f++) {
		v[f].name = c->paths[f];
		v[f].file = (uint32_t)f;
	}
	if (c->npaths)
		qsort(v, c->npaths, sizeof(*v), named_cmp);
	for (size_t i = 0; i < c->npaths; i++)
		rank[v[i].file] = (uint32_t)i;
	free(v);
	return 0;
}

/* Each file's instructions from its base, sorted, adjacent ones joined;
 * *@base and *@end per file (an ELF file's from its program headers,
 * else 0 and past the last instruction). */
static int collect_bbs(struct hwt_an_cover *c, struct hwt_an_lines *ln,
		       uint64_t *base, uint64_t *end, uint8_t *elf,
		       uint32_t *rank, struct cov_bb **out, size_t *n)
{
	struct cov_bb *v = NULL;
	size_t cap = 0, k = 0, m = 0;
	int err = flatten(c);

	if (!err)
		err = rank_files(c, rank);
	for (size_t f = 0; !err && f < c->npaths; f++) {
		int r = hwt_an_lines_layout(ln, c->paths[f], &base[f], &end[f]);

		if (r < 0)
			err = r;
		elf[f] = r > 0;
		if (r <= 0)
			base[f] = end[f] = 0;
	}
	for (size_t i = 0; !err && i < c->nins; i++) {
		const struct cov_ins *e = &c->ins[i];
		uint64_t at = e->off;
		int r = 0;

		if (elf[e->file])
			r = hwt_an_lines_link(ln, c->paths[e->file], e->off, &at);
		if (r < 0) {
			err = r;
			break;
		}
		if (elf[e->file] && (!r || at < base[e->file]))
			continue;
		at -= base[e->file];
		/* (drcov's offsets are 32 bits.) */
		if (at > UINT32_MAX - e->size)
			continue;
		if (hwt_grow((void **)&v, &cap, m + 1, sizeof(*v)) < 0) {
			err = -HWT_ERR_NOMEM;
			break;
		}
		v[m].file = e->file;
		v[m].rank = rank[e->file];
		v[m].start = at;
		v[m].size = e->size;
		m++;
		if (!elf[e->file] && at + e->size > end[e->file])
			end[e->file] = at + e->size;
	}
	if (err) {
		free(v);
		return err;
	}
	if (m)
		qsort(v, m, sizeof(*v), bb_cmp);
	for (size_t i = 0; i < m; i++) {
		struct cov_bb *p = k ? &v[k - 1] : NULL;

		if (p && p->file == v[i].file && p->start + p->size == v[i].start &&
		    p->size + v[i].size <= UINT16_MAX) {
			p->size += v[i].size;
			continue;
		}
		v[k++] = v[i];
	}
	*out = v;
	*n = k;
	return 0;
}

int hwt_an_cover_drcov(struct hwt_an_cover *c, FILE *out, size_t *nmodules,
		       size_t *nbbs)
{
	struct hwt_an_lines *ln;
	uint64_t *base, *end;
	uint32_t *id, *rank;
	uint8_t *elf;
	struct cov_bb *v = NULL;
	size_t n = 0, nmod = 0;
	int err;

	if (!c || !out)
		return -HWT_ERR_INVALID;
	ln = cover_lines(c);
	base = calloc(c->npaths + 1, sizeof(*base));
	end = calloc(c->npaths + 1, sizeof(*end));
	id = calloc(c->npaths + 1, sizeof(*id));
	elf = calloc(c->npaths + 1, sizeof(*elf));
	rank = calloc(c->npaths + 1, sizeof(*rank));
	err = ln && base && end && id && elf && rank ?
	      collect_bbs(c, ln, base, end, elf, rank, &v, &n) :
	      -HWT_ERR_NOMEM;
	/* Modules: the files with code that ran, in order (16-bit ids). */
	for (size_t i = 0; !err && i < n; i++)
		if (!i || v[i].file != v[i - 1].file)
			id[v[i].file] = (uint32_t)nmod++;
	if (nmod > UINT16_MAX + 1)
		err = -HWT_ERR_OVERFLOW;
	if (!err) {
		fprintf(out, "DRCOV VERSION: 2\nDRCOV FLAVOR: hwt\n"
			"Module Table: version 2, count %zu\n"
			"Columns: id, base, end, entry, checksum, timestamp, "
			"path\n", nmod);
		for (size_t i = 0; i < n; i++) {
			uint32_t f = v[i].file;

			if (i && f == v[i - 1].file)
				continue;
			fprintf(out, "%3" PRIu32 ", 0x%016" PRIx64 ", 0x%016"
				PRIx64 ", 0x%016x, 0x%08x, 0x%08x, %s\n", id[f],
				base[f], end[f] - 1, 0, 0, 0, c->paths[f]);
		}
		fprintf(out, "BB Table: %zu bbs\n", n);
		for (size_t i = 0; i < n; i++) {
			/* struct { uint32 start; uint16 size, mod_id; }, as
			 * the x86 hosts write it: little-endian. */
			uint8_t bb[8] = {
				(uint8_t)v[i].start, (uint8_t)(v[i].start >> 8),
				(uint8_t)(v[i].start >> 16),
				(uint8_t)(v[i].start >> 24),
				(uint8_t)v[i].size, (uint8_t)(v[i].size >> 8),
				(uint8_t)id[v[i].file],
				(uint8_t)(id[v[i].file] >> 8)
			};

			fwrite(bb, 1, sizeof(bb), out);
		}
	}
	if (nmodules)
		*nmodules = nmod;
	if (nbbs)
		*nbbs = n;
	free(v);
	free(id);
	free(rank);
	free(elf);
	free(base);
	free(end);
	hwt_an_lines_delete(ln);
	return err;
}

/* SPDX-License-Identifier: BSD-2-Clause */
#include "flow/bcache.h"

#include <stdlib.h>
#include <string.h>

#include <hwt/error.h>
#include <hwt/flow.h>
#include <hwt/image.h>

#include "common/table.h"

enum {
	BC_INIT_SLOTS = 1u << 12,
	/* Beyond this many slots (32 MiB) we start over rather than grow. */
	BC_MAX_SLOTS = 1u << 20,
	/* The graph starts over beyond this many nodes (32 MiB) or return
	 * addresses (8 MiB). */
	BC_INIT_NODES = 1u << 10,
	BC_MAX_NODES = 1u << 19,
	BC_MAX_PUSHES = 1u << 20
};

/* A link (bcache.h) holds a node's offset in 32 bits. */
_Static_assert(((uint64_t) BC_MAX_NODES << HWT_BC_LINK_SHIFT) <
	       HWT_BC_NO_NODE,
	       "node index too wide for a link");

/*
 * The entry table, zeroed (hwt_table_new(): huge pages for a big one).
 * Without them the table of a large image (python3's: 512 Ki slots, 16
 * MiB, after 16 MiB of the smaller ones it grew through) is thousands of
 * first-touch page faults, a fifth of hwt coverage's time on python3 on
 * a VM. (Measured with huge pages for all memory: 0.45 s -> 0.39 s.)
 */
static struct hwt_bc_entry *bc_table_new(size_t n)
{
	return hwt_table_new(n * sizeof(struct hwt_bc_entry));
}

static void bc_table_free(struct hwt_bc_entry *t, size_t n)
{
	hwt_table_free(t, n * sizeof(struct hwt_bc_entry));
}

/* The occupancy bits of a table of @n slots (a multiple of 64), zeroed. */
static uint64_t *bc_occ_new(size_t n)
{
	return calloc(n / 64, sizeof(uint64_t));
}

static inline void bc_occ_set(struct hwt_bcache *bc, size_t i)
{
	bc->occ[i / 64] |= 1ull << (i % 64);
}

int hwt_bcache_init(struct hwt_bcache *bc)
{
	memset(bc, 0, sizeof(*bc));
	bc->slots = bc_table_new(BC_INIT_SLOTS);
	bc->occ = bc_occ_new(BC_INIT_SLOTS);
	if (!bc->slots || !bc->occ) {
		bc_table_free(bc->slots, BC_INIT_SLOTS);
		free(bc->occ);
		bc->slots = NULL;
		bc->occ = NULL;
		return -HWT_ERR_NOMEM;
	}
	bc->mask = BC_INIT_SLOTS - 1;
	return 0;
}

void hwt_bcache_tell(struct hwt_bcache *bc)
{
	struct hwt_bc_teller *t = bc->teller;

	if (!t || !t->ops || !bc->tally)
		return;
	for (uint32_t k = 0; k < bc->nnodes; ++k) {
		struct hwt_bc_tally *c = &bc->tally[k];
		const struct hwt_bc_node *nd = &bc->nodes[k];
		struct hwt_block b;
		int err;

		if (!c->n && !c->taken && !c->fell)
			continue;
		/* (A jump to the next instruction only falls through.) */
		if (nd->exit == HWT_BCX_COND && nd->target == nd->next) {
			c->fell += c->taken;
			c->taken = 0;
		}
		hwt_bcache_node_block(nd, &b);
		err = t->ops->count(t->ctx, bc->tally_image, bc->generation,
				    &b, c->n, c->taken, c->fell);
		if (err < 0 && !t->err)
			t->err = err;
		memset(c, 0, sizeof(*c));
	}
}

/* Forget the graph (its nodes stand for walks over entries that go). */
void hwt_bcache_graph_clear(struct hwt_bcache *bc)
{
	if (!bc->nnodes)
		return;
	hwt_bcache_tell(bc);
	bc->nnodes = 0;
	bc->npushes = 0;
	memset(bc->nidx, 0xff, ((size_t) bc->nmask + 1) * sizeof(*bc->nidx));
	if (bc->memo)
		memset(bc->memo, 0,
		       ((size_t) bc->memo_mask + 1) * sizeof(*bc->memo));
}

void hwt_bcache_fini(struct hwt_bcache *bc)
{
	hwt_bcache_tell(bc);
	free(bc->tally);
	bc->tally = NULL;
	bc->tally_cap = 0;
	bc_table_free(bc->slots, bc->slots ? bc->mask + 1 : 0);
	bc->slots = NULL;
	free(bc->occ);
	bc->occ = NULL;
	free(bc->secs);
	bc->secs = NULL;
	bc->nsecs = 0;
	bc->secs_cap = 0;
	bc->mask = 0;
	bc->used = 0;
	free(bc->nodes);
	free(bc->nidx);
	free(bc->pushes);
	free(bc->pushnode);
	free(bc->memo);
	bc->memo = NULL;
	bc->memo_mask = 0;
	bc->nodes = NULL;
	bc->nidx = NULL;
	bc->pushes = NULL;
	bc->pushnode = NULL;
	bc->nnodes = bc->nodes_cap = bc->nmask = 0;
	bc->npushes = bc->pushes_cap = 0;
}

void hwt_bcache_clear(struct hwt_bcache *bc)
{
	hwt_bcache_graph_clear(bc);
	if (!bc->used)
		return;

	memset(bc->slots, 0, (bc->mask + 1) * sizeof(*bc->slots));
	memset(bc->occ, 0, (bc->mask + 1) / 64 * sizeof(*bc->occ));
	bc->used = 0;
}

/* @from's section @k as @image maps it: its new host delta, the lowest
 * address it holds and how far it moved (*@rebase, added to addresses),
 * or 0 if @image does not map those bytes of that file. */
static int bc_sec_same(const struct hwt_bc_sec *k,
		       const struct hwt_image *image, uintptr_t *delta,
		       uint64_t *begin, uint64_t *rebase)
{
	struct hwt_image_span span;

	if (!k->ided || !(k->dev | k->ino))
		return 0;
	if (hwt_image_span(image, k->end - 1, &span) < 0 ||
	    span.end != k->end || span.dev != k->dev || span.ino != k->ino ||
	    span.off + (span.end - span.begin) != k->off) {
		/* Moved: the same file's bytes elsewhere. */
		if (hwt_image_span_of_file(image, k->dev, k->ino, k->off,
					   &span) < 0)
			return 0;
	}
	*delta = (uintptr_t) span.data - (uintptr_t) span.begin;
	*rebase = span.end - k->end;
	*begin = span.begin;
	return 1;
}

/* Entry @e's facts hold wherever its bytes are, but for its own address
 * and its direct target (x86's direct branches are relative): moved @by
 * bytes. */
static void bc_move(struct hwt_bc_entry *e, uint64_t by)
{
	e->ip += by;
	if (e->flags & HWT_INSN_DIRECT)
		e->target += by;
}

void hwt_bcache_carry(struct hwt_bcache *to, struct hwt_bcache *from,
		      const struct hwt_image *image)
{
	size_t nsecs = from->nsecs, nkeep = 0;
	struct hwt_bc_entry *keep = NULL;
	struct hwt_bc_sec *secs = NULL;
	uint64_t *begin = NULL, *rebase = NULL;
	/* per section of @from: -1 not carried, 0 not yet in @to, else
	 * its index in @to + 1 */
	int32_t *map = NULL;
	int in_place = 1;

	hwt_bcache_graph_clear(to);
	if (from->used && nsecs && to->nsecs + nsecs <= UINT16_MAX) {
		secs = malloc(nsecs * sizeof(*secs));
		begin = malloc(nsecs * sizeof(*begin));
		map = malloc(nsecs * sizeof(*map));
		rebase = malloc(nsecs * sizeof(*rebase));
	}
	if (!secs || !begin || !map || !rebase)
		goto none;
	memcpy(secs, from->secs, nsecs * sizeof(*secs));
	for (size_t k = 0; k < nsecs; k++) {
		map[k] = bc_sec_same(&secs[k], image, &secs[k].delta,
				     &begin[k], &rebase[k]) ? 0 : -1;
		if (secs[k].low != UINT64_MAX &&
		    (map[k] < 0 || rebase[k] || secs[k].low < begin[k] ||
		     secs[k].truncated))
			in_place = 0;
	}
	if (to == from && in_place) {
		/* Every entry stays where it is (the image changed
		 * elsewhere: a library loaded beside the code): the table
		 * is not made again. */
		for (size_t k = 0; k < nsecs; k++)
			if (map[k] >= 0)
				to->secs[k].delta = secs[k].delta;
		goto out;
	}
	/* (Only now: the shortcut above needs no copy of the entries.) */
	keep = malloc(from->used * sizeof(*keep));
	if (!keep)
		goto none;
	/*
	 * The entries, through the occupancy bits; the table is made again,
	 * so each is cleared where it is read, not the whole table after.
	 * (Made again: in place, entries moved by a rehash in the table
	 * took 10% more time on a shell script's recording, in fewer
	 * instructions: its chains of swaps wait on each other's misses,
	 * where inserts into a cleared table do not.)
	 */
	for (size_t k = 0; k <= from->mask / 64; k++) {
		for (uint64_t bits = from->occ[k]; bits; bits &= bits - 1) {
			size_t i = k * 64 + (size_t) __builtin_ctzll(bits);
			struct hwt_bc_entry *e = &from->slots[i];

			if (!e->truncated && map[e->sec] >= 0 &&
			    e->ip + rebase[e->sec] >= begin[e->sec]) {
				keep[nkeep] = *e;
				bc_move(&keep[nkeep], rebase[e->sec]);
				nkeep++;
			}
			if (to == from)
				memset(e, 0, sizeof(*e));
		}
		if (to == from)
			from->occ[k] = 0;
	}
	if (to == from) {
		to->used = 0;
		to->nsecs = 0;
	}
	for (size_t i = 0; i < nkeep; i++) {
		struct hwt_bc_entry *e = &keep[i];

		if (!map[e->sec]) {
			int sec = hwt_bcache_sec(to,
						 secs[e->sec].end +
							 rebase[e->sec],
						 secs[e->sec].delta);

			if (sec < 0)
				break;
			to->secs[sec] = secs[e->sec];
			to->secs[sec].end += rebase[e->sec];
			to->secs[sec].low = UINT64_MAX;
			to->secs[sec].truncated = 0;
			map[e->sec] = sec + 1;
		}
		e->sec = (uint16_t) (map[e->sec] - 1);
		if (hwt_bcache_add(to, e) < 0)
			break;
	}
	goto out;
none:
	if (to == from)
		hwt_bcache_clear(to);
out:
	free(keep);
	free(secs);
	free(begin);
	free(map);
	free(rebase);
}

static void bc_insert(struct hwt_bcache *bc, const struct hwt_bc_entry *entry)
{
	size_t i;

	i = hwt_bcache_slot_(entry->ip, bc->mask);
	for (;;) {
		struct hwt_bc_entry *e = &bc->slots[i];

		if (!e->ninsn) {
			*e = *entry;
			bc->used += 1;
			bc_occ_set(bc, i);
			return;
		}
		if (e->ip == entry->ip) {
			*e = *entry;
			return;
		}
		i = (i + 1) & bc->mask;
	}
}

/*
 * Double the table where it is: mremap() keeps the pages it has (on a VM
 * a fresh page costs the host's fault as well as the kernel's clearing:
 * python3's table grew through 16 MiB of them, 5-20% of its hwt coverage
 * time in system time), and the entries move to their new places in one
 * pass, as hashbrown's rehash in place does: each is marked pending, then
 * goes to the first slot from its new home that is empty or pending
 * (swapping with a pending one, which goes next). A placed entry's probe
 * path holds only placed entries, which never move again, so lookups find
 * every entry after. Returns 0, or -1 (nothing changed) if the table is
 * not mapped or cannot be remapped.
 */
enum { BC_PENDING = 0x80 };	/* in @mode, only while moving */

static int bc_grow_in_place(struct hwt_bcache *bc)
{
	size_t n = bc->mask + 1, bytes = n * sizeof(struct hwt_bc_entry);
	struct hwt_bc_entry *slots;
	uint64_t *occ;
	void *p;

	/* (Smaller tables are malloc's: not grown in place.) */
	if (bytes < HWT_TABLE_MAP)
		return -1;
	occ = bc_occ_new(2 * n);
	if (!occ)
		return -1;
	p = hwt_table_grow(bc->slots, bytes);
	if (!p) {
		free(occ);
		return -1;
	}
	free(bc->occ);
	bc->occ = occ;
	slots = p;
	bc->slots = slots;
	bc->mask = 2 * n - 1;
	for (size_t i = 0; i < n; ++i)
		if (slots[i].ninsn)
			slots[i].mode |= BC_PENDING;
	for (size_t i = 0; i < n; ++i) {
		while (slots[i].ninsn && (slots[i].mode & BC_PENDING)) {
			struct hwt_bc_entry e = slots[i];
			size_t j = hwt_bcache_slot_(e.ip, bc->mask);

			e.mode &= (uint8_t) ~BC_PENDING;
			while (slots[j].ninsn && !(slots[j].mode & BC_PENDING))
				j = (j + 1) & bc->mask;
			if (j == i) {
				slots[i] = e;
			} else if (!slots[j].ninsn) {
				slots[j] = e;
				memset(&slots[i], 0, sizeof(slots[i]));
			} else {
				slots[i] = slots[j];
				slots[j] = e;
			}
		}
	}
	for (size_t i = 0; i < 2 * n; ++i)
		if (slots[i].ninsn)
			bc_occ_set(bc, i);
	return 0;
}

static int bc_grow(struct hwt_bcache *bc)
{
	struct hwt_bc_entry *old, *slots;
	uint64_t *occ;
	size_t n, i;

	n = (bc->mask + 1) * 2;
	if (n > BC_MAX_SLOTS) {
		hwt_bcache_clear(bc);
		return 0;
	}
	if (!bc_grow_in_place(bc))
		return 0;

	slots = bc_table_new(n);
	occ = slots ? bc_occ_new(n) : NULL;
	if (!occ) {
		/* Keep working with what we have: forget the entries. */
		bc_table_free(slots, n);
		hwt_bcache_clear(bc);
		return 0;
	}

	old = bc->slots;
	n = bc->mask + 1;
	bc->slots = slots;
	free(bc->occ);
	bc->occ = occ;
	bc->mask = n * 2 - 1;
	bc->used = 0;
	for (i = 0; i < n; ++i)
		if (old[i].ninsn)
			bc_insert(bc, &old[i]);
	bc_table_free(old, n);
	return 0;
}

int hwt_bcache_add(struct hwt_bcache *bc, const struct hwt_bc_entry *entry)
{
	if (!entry->ninsn)
		return -HWT_ERR_INTERNAL;

	/* Keep the load at most 1/2 so probes stay short (at 3/4, python3's
	 * table is 8 MiB less but hwt coverage took 356 -> 445 ms, min of
	 * 7 interleaved runs). */
	if ((bc->used + 1) * 2 > bc->mask + 1) {
		int err = bc_grow(bc);

		if (err < 0)
			return err;
	}

	if (entry->sec < bc->nsecs) {
		struct hwt_bc_sec *k = &bc->secs[entry->sec];

		if (entry->ip < k->low)
			k->low = entry->ip;
		k->truncated |= entry->truncated;
	}
	bc_insert(bc, entry);
	return 0;
}

int hwt_bcache_sec(struct hwt_bcache *bc, uint64_t end, uintptr_t delta)
{
	size_t i;

	/* Most recent first: a block's instructions share their section. */
	for (i = bc->nsecs; i--;)
		if (bc->secs[i].end == end && bc->secs[i].delta == delta)
			return (int) i;

	if (bc->nsecs == bc->secs_cap) {
		struct hwt_bc_sec *secs;
		size_t cap = bc->secs_cap ? bc->secs_cap * 2 : 8;

		if (cap > (size_t) UINT16_MAX + 1)
			cap = (size_t) UINT16_MAX + 1;
		if (bc->nsecs == cap) {
			/* Entries refer to the indices: forget them all. */
			hwt_bcache_clear(bc);
			bc->nsecs = 0;
		} else {
			secs = realloc(bc->secs, cap * sizeof(*secs));
			if (!secs)
				return -HWT_ERR_NOMEM;
			bc->secs = secs;
			bc->secs_cap = cap;
		}
	}

	memset(&bc->secs[bc->nsecs], 0, sizeof(bc->secs[bc->nsecs]));
	bc->secs[bc->nsecs].end = end;
	bc->secs[bc->nsecs].delta = delta;
	bc->secs[bc->nsecs].low = UINT64_MAX;
	return (int) bc->nsecs++;
}

int hwt_bcache_sec_of(struct hwt_bcache *bc, const struct hwt_image *image,
		      uint64_t end, uintptr_t delta)
{
	int sec = hwt_bcache_sec(bc, end, delta);
	struct hwt_image_span span;
	struct hwt_bc_sec *k;

	if (sec < 0 || bc->secs[sec].ided)
		return sec;
	k = &bc->secs[sec];
	k->ided = 1;
	if (hwt_image_span(image, end - 1, &span) == 0 && span.end == end &&
	    (uintptr_t) span.data - (uintptr_t) span.begin == delta) {
		k->dev = span.dev;
		k->ino = span.ino;
		k->off = span.off + (span.end - span.begin);
	}
	return sec;
}

/* Room for one more node: 0, or -1 if the graph cannot grow (memory). */
static int bc_node_room(struct hwt_bcache *bc)
{
	size_t want;

	if (bc->nnodes == BC_MAX_NODES)
		hwt_bcache_graph_clear(bc);

	if (bc->nnodes == bc->nodes_cap) {
		uint32_t cap = bc->nodes_cap ? bc->nodes_cap * 2 : BC_INIT_NODES;
		struct hwt_bc_node *nodes;

		nodes = realloc(bc->nodes, cap * sizeof(*nodes));
		if (!nodes)
			return -1;
		bc->nodes = nodes;
		bc->nodes_cap = cap;
	}
	if (bc->teller && bc->teller->ops && bc->tally_cap < bc->nodes_cap) {
		struct hwt_bc_tally *t = realloc(bc->tally, bc->nodes_cap *
						 sizeof(*t));

		if (!t)
			return -1;
		bc->tally = t;
		bc->tally_cap = bc->nodes_cap;
	}

	/* The index: at most half full. */
	want = (size_t) bc->nnodes * 2 + 2;
	if (!bc->nidx || want > (size_t) bc->nmask + 1) {
		size_t n = bc->nidx ? ((size_t) bc->nmask + 1) * 2 :
				      BC_INIT_NODES * 2;
		uint32_t *nidx = malloc(n * sizeof(*nidx));

		if (!nidx)
			return -1;
		memset(nidx, 0xff, n * sizeof(*nidx));
		free(bc->nidx);
		bc->nidx = nidx;
		bc->nmask = (uint32_t) (n - 1);
		for (uint32_t k = 0; k < bc->nnodes; ++k) {
			size_t i = hwt_bcache_node_slot_(bc->nodes[k].ip,
							 bc->nmask);

			while (nidx[i] != HWT_BC_NO_NODE)
				i = (i + 1) & bc->nmask;
			nidx[i] = k;
		}
	}
	return 0;
}

uint32_t hwt_bcache_node_add(struct hwt_bcache *bc,
			     const struct hwt_bc_node *node,
			     const uint64_t *pushes, unsigned npush)
{
	struct hwt_bc_node *n;
	uint32_t k;
	size_t i;

	if (bc->npushes + npush > BC_MAX_PUSHES)
		hwt_bcache_graph_clear(bc);
	if (bc_node_room(bc) < 0)
		return HWT_BC_NO_NODE;
	if (bc->npushes + npush > bc->pushes_cap) {
		uint32_t cap = bc->pushes_cap ? bc->pushes_cap : 256;
		uint32_t *pn;
		uint64_t *p;

		while (cap < bc->npushes + npush)
			cap *= 2;
		pn = realloc(bc->pushnode, cap * sizeof(*pn));
		if (!pn)
			return HWT_BC_NO_NODE;
		bc->pushnode = pn;
		p = realloc(bc->pushes, cap * sizeof(*p));
		if (!p)
			return HWT_BC_NO_NODE;
		bc->pushes = p;
		bc->pushes_cap = cap;
	}

	i = hwt_bcache_node_slot_(node->ip, bc->nmask);
	while (bc->nidx[i] != HWT_BC_NO_NODE) {
		if (bc->nodes[bc->nidx[i]].ip == node->ip)
			return HWT_BC_NO_NODE;
		i = (i + 1) & bc->nmask;
	}

	k = bc->nnodes++;
	bc->nidx[i] = k;
	if (bc->tally_cap > k)
		memset(&bc->tally[k], 0, sizeof(*bc->tally));
	n = &bc->nodes[k];
	*n = *node;
	n->succ[0] = HWT_BC_NO_NODE;
	n->succ[1] = HWT_BC_NO_NODE;
	n->push = bc->npushes;
	n->npush = (uint16_t) npush;
	if (npush) {
		memcpy(&bc->pushes[bc->npushes], pushes,
		       npush * sizeof(*pushes));
		memset(&bc->pushnode[bc->npushes], 0xff,
		       npush * sizeof(*bc->pushnode));
	}
	bc->npushes += npush;
	return k;
}

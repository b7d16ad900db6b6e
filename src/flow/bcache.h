/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The block cache: decoded code keyed by IP, so the block decoder decodes
 * hot code once.
 *
 * It works as libipt's block cache does (libipt's block boundaries depend
 * on its cache state, and we reproduce them): an entry at @ip says "the
 * next @ninsn instructions need no trace; the last one is at @ip + @disp;
 * then do @qual". Entries are made while decoding a block for the first
 * time, chained from the end backwards, and hold at most 255 instructions
 * and a 16-bit displacement, as libipt's. We also keep the decoded last
 * instruction, so that "decode" entries need no second decode.
 *
 * Entries are 32 bytes (two per cache line): the lookup is the hottest
 * memory access of the block decoder. The section (end, host delta) pair
 * is interned in a small side table and referred to by index.
 *
 * On top of the entries sits the block graph: a node per IP where a cached
 * walk started and ended without trace-free surprises (every entry it met
 * was there), holding what the walk did: the block it made, the return
 * addresses it pushed, and the instruction that needs trace at its end.
 * Entries never change once made, so neither does such a walk: the next
 * time, the node replaces it. Each node also remembers the node that came
 * next (per direction of a conditional branch), so a hot path is a chain
 * of loads. Nodes go when the entries go.
 */
#ifndef HWT_FLOW_BCACHE_H
#define HWT_FLOW_BCACHE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <hwt/flow.h>

struct hwt_image;

enum hwt_bc_qual {
	HWT_BCQ_AGAIN = 1,	/* continue at the last instruction's IP */
	HWT_BCQ_COND,		/* the last one is a conditional branch */
	HWT_BCQ_DECODE,		/* handle the last one as decoded */
	HWT_BCQ_IND_CALL,	/* ... an indirect call */
	HWT_BCQ_RETURN,		/* ... a near return */
	HWT_BCQ_INDIRECT	/* ... another branch needing a TIP */
};

/* A section's identity: end address and host pointer minus address;
 * and, if @ided, where its bytes come from (hwt_image_span(): the file,
 * and the file offset of @end), for hwt_bcache_carry(). */
struct hwt_bc_sec {
	uint64_t end;
	uintptr_t delta;
	uint64_t dev, ino, off;
	uint64_t low;		/* its entries' lowest IP (UINT64_MAX: none) */
	uint8_t ided;
	uint8_t truncated;	/* an entry's last instruction crosses @end */
};

struct hwt_bc_entry {
	uint64_t ip;		/* key */
	uint64_t target;	/* the last instruction's direct target */
	int16_t disp;		/* last instruction's IP - @ip */
	uint16_t sec;		/* index into hwt_bcache.secs */
	uint8_t ninsn;		/* 1..255; 0: free slot */
	uint8_t mode;
	uint8_t qual;		/* enum hwt_bc_qual */
	uint8_t size;		/* of the last instruction */
	uint8_t iclass;
	uint8_t flags;		/* HWT_INSN_* */
	uint8_t kind;		/* block.c's BLK_K_* */
	uint8_t truncated;	/* the last one crosses a section end */
};

/* How a block ends: where trace is needed, or without trace. */
enum hwt_bc_exit {
	HWT_BCX_NONE = 0,	/* go on at @next (section end, end-on, full) */
	HWT_BCX_COND,		/* TNT: @target if taken, else @next */
	HWT_BCX_RETURN,		/* TNT (compressed) or TIP */
	HWT_BCX_INDIRECT	/* TIP */
};

/*
 * How the fast path takes a node (@op): the exit, and whether return
 * addresses are pushed first, and, for HWT_BCX_NONE, whether the block
 * runs on into the next one (graph.c's canonical blocks).
 */
#define HWT_BCO_EXIT    0x3u	/* enum hwt_bc_exit */
#define HWT_BCO_PUSH    0x4u
#define HWT_BCO_RUNS_ON 0x8u

#define HWT_BC_NO_NODE UINT32_MAX

/*
 * A link to node @k: its byte offset in the array of nodes, and in the
 * offset's low bits (nodes are 64 bytes) its @op, which graph.c's run
 * branches on as soon as the node before is loaded, not after this one
 * is (where the branch is mispredicted, a cache miss sooner). An offset,
 * not an index, so that the next node is one add from the load of the
 * link (hwt_bc_link_to()): on a hot path that is a chain of such loads.
 * HWT_BC_NO_NODE: none.
 */
#define HWT_BC_LINK_SHIFT 6
#define HWT_BC_LINK_OP 0xfu
#define HWT_BC_LINK_NODE(link) ((link) >> HWT_BC_LINK_SHIFT)

/* A walk through the cache from @ip; see above. */
struct hwt_bc_node {
	uint64_t ip;		/* key */
	uint64_t end_ip;	/* the block's last instruction */
	uint64_t target;	/* HWT_BCX_COND: taken; returns and indirect
				 * branches: @succ[0]'s IP (graph.c) */
	uint64_t next;		/* HWT_BCX_COND: not taken; _NONE: go on;
				 * returns, indirect: @succ[1]'s IP */
	uint32_t ninsn;
	uint32_t push;		/* return addresses: hwt_bcache.pushes[push..] */
	uint32_t succ[2];	/* the next node last time (not taken, taken),
				 * as a link (below) */
	uint16_t npush;
	uint8_t mode;		/* of the block */
	uint8_t iclass;		/* of the block */
	uint8_t exit;		/* enum hwt_bc_exit */
	uint16_t loc;		/* AFL location of @ip (graph.c) */
	uint8_t op;		/* @exit, HWT_BCO_* */
	uint8_t nomemo;		/* graph.c's fold memo does not pay here */
	uint8_t size;		/* of the block's last instruction */
	uint8_t pad[5];		/* a power of two indexes fast */
};

_Static_assert(sizeof(struct hwt_bc_node) == 1u << HWT_BC_LINK_SHIFT,
	       "a link is a node's offset with its op in the low bits");

static inline uint32_t hwt_bc_link(const struct hwt_bc_node *nodes,
				   uint32_t k)
{
	return k << HWT_BC_LINK_SHIFT | (nodes[k].op & HWT_BC_LINK_OP);
}

/* The node of @link (not HWT_BC_NO_NODE). */
static inline struct hwt_bc_node *hwt_bc_link_to(struct hwt_bc_node *nodes,
						 uint32_t link)
{
	return (struct hwt_bc_node *) ((char *) nodes +
				       (link & ~HWT_BC_LINK_OP));
}

/*
 * The fold's memo (graph.c): what a run of conditional branches through
 * nodes did with some TNT bits, for hwt_blk_fold_next() to do it again in
 * one step. Keyed by the first node and the bits; made from the nodes'
 * links, so it goes with the graph.
 */
#define HWT_BC_MEMO_BITS 6	/* TNT bits at most per entry */

struct hwt_bc_memo {
	uint32_t key;		/* node << 7 | bits (stop bit above); 0: free */
	uint32_t end;		/* the node reached */
	uint32_t ninsn;		/* of the blocks between the first and the
				 * open one */
	uint16_t loc1;		/* AFL location of the first block reached */
	uint16_t prev;		/* AFL previous location after (@m >= 2) */
	uint16_t cell[HWT_BC_MEMO_BITS - 2];	/* edges of the others */
	uint8_t m;		/* bits taken: blocks reached */
	uint8_t dirty;		/* 1 + its place in the fold's list of
				 * entries applied, @cell not yet in the
				 * map (graph.c; 0: none, and outside a
				 * fold) */
	uint16_t nopen;		/* if @open is not @end: instructions of
				 * the open block, from node @open (the
				 * last block reached) to @end, which it
				 * runs on into */
	uint32_t open;
};

/*
 * Counts of the nodes the fold takes (hwt_blk_tally(), flow.h): the times
 * each ran, and a conditional jump at its end was taken or fell through
 * (as the TNT bit said: hwt_bcache_tell() makes a jump to its own
 * fall-through fall through, as hwt_an_cover's rule has it). By node index, beside the
 * nodes, not in them: the map's fold keeps its 64-byte nodes.
 */
struct hwt_bc_tally {
	uint64_t n, taken, fell;
};

struct hwt_blk_tally_ops;

/* The decoder's teller, which each of its caches points to. */
struct hwt_bc_teller {
	const struct hwt_blk_tally_ops *ops;	/* NULL: no counts */
	void *ctx;
	int err;		/* the first error told (or 0) */
};

struct hwt_bcache {
	struct hwt_bc_entry *slots;
	size_t mask;		/* capacity - 1 (a power of two) */
	size_t used;
	/* A bit a slot, set where an entry is: hwt_bcache_carry() visits
	 * the entries, not the whole table (2-4 MiB at each process a
	 * perf.data switches to). */
	uint64_t *occ;
	uint64_t generation;	/* of the image the entries were made from */
	uint64_t image_id;	/* ... that image (hwt_image_id()) */
	/* Made of another image's code, whose process ended
	 * (hwt_blk_release_image()): carried to the next one. */
	uint8_t carry;
	uint8_t mode;		/* the exec mode they were decoded in */
	struct hwt_bc_sec *secs;
	size_t nsecs, secs_cap;

	/* The block graph: nodes by index, an open-addressed index by IP. */
	struct hwt_bc_node *nodes;
	uint32_t nnodes, nodes_cap;
	uint32_t *nidx;		/* node index or HWT_BC_NO_NODE */
	uint32_t nmask;
	uint64_t *pushes;
	/* A link (above) to the node at each return address in @pushes,
	 * where known (else HWT_BC_NO_NODE): a return's target found once
	 * per call site (graph.c), not looked up each time. A return
	 * stack entry's push index may be from before the graph started
	 * over: graph.c checks the address in @pushes first. */
	uint32_t *pushnode;
	uint32_t npushes, pushes_cap;

	/* The fold's memo, direct-mapped (graph.c makes it). */
	struct hwt_bc_memo *memo;
	uint32_t memo_mask;

	/* Counts (above), if @teller has ops: @tally[k] for node k. The
	 * graph's nodes were named to the teller as blocks of image
	 * @tally_image (its id) at @generation. */
	struct hwt_bc_teller *teller;
	struct hwt_bc_tally *tally;
	uint32_t tally_cap;
	uint64_t tally_image;
};

_Static_assert(sizeof(struct hwt_bc_entry) == 32, "bcache entry size");
_Static_assert(sizeof(struct hwt_bc_node) == 64, "bcache node size");
_Static_assert(sizeof(struct hwt_bc_memo) == 32, "bcache memo size");

int hwt_bcache_init(struct hwt_bcache *bc);
void hwt_bcache_fini(struct hwt_bcache *bc);
void hwt_bcache_clear(struct hwt_bcache *bc);

/*
 * Make @to (empty, or @from itself) a cache of @image's code with the
 * entries of @from that @image maps as they were made: their section
 * ends where it did in the same file, and holds the entry's first byte
 * (a process that maps a library, or execs the program it ran, or
 * another process of it: its code decodes the same). Where @image maps
 * those bytes at another address (a library that address-space
 * randomisation put elsewhere in another process), the entries move with
 * them. Entries whose last instruction crosses a section's end are left.
 * @to's graph is forgotten. Both caches are of one exec mode.
 */
void hwt_bcache_carry(struct hwt_bcache *to, struct hwt_bcache *from,
		      const struct hwt_image *image);

/* The graph forgotten (its counts told first). */
void hwt_bcache_graph_clear(struct hwt_bcache *bc);

/* The counts told to the teller, and zeroed (the graph stays). */
void hwt_bcache_tell(struct hwt_bcache *bc);

/* The block node @nd stands for, as hwt_blk_next() makes it (not
 * speculative). */
static inline __attribute__((always_inline)) void
hwt_bcache_node_block(const struct hwt_bc_node *nd, struct hwt_block *b)
{
	memset(b, 0, sizeof(*b));
	b->ip = nd->ip;
	b->end_ip = nd->end_ip;
	b->ninsn = nd->ninsn;
	b->mode = nd->mode;
	b->iclass = nd->iclass;
	b->size = nd->size;
}

/* The index of section (@end, @delta); interns it. On overflow of the
 * index space, the cache is emptied and indices start over. */
int hwt_bcache_sec(struct hwt_bcache *bc, uint64_t end, uintptr_t delta);

/* ... of @image's, where its bytes come from found the first time (for
 * hwt_bcache_carry()). */
int hwt_bcache_sec_of(struct hwt_bcache *bc, const struct hwt_image *image,
		      uint64_t end, uintptr_t delta);

static inline const struct hwt_bc_sec *
hwt_bcache_secof(const struct hwt_bcache *bc, const struct hwt_bc_entry *e)
{
	return &bc->secs[e->sec];
}

/*
 * The home slot of @ip in an entry table of @mask + 1 slots. Nearby code
 * gets nearby slots (cache lines are shared by the instructions of a
 * block); high bits spread far-apart modules. (A multiplicative hash was
 * no faster: python3 coverage 350 -> 353 ms, min of 7.)
 */
static inline size_t hwt_bcache_slot_(uint64_t ip, size_t mask)
{
	return (size_t) (ip ^ (ip >> 21) ^ (ip >> 42)) & mask;
}

/* The entry at @ip, or NULL. */
static inline const struct hwt_bc_entry *
hwt_bcache_lookup(const struct hwt_bcache *bc, uint64_t ip)
{
	size_t i = hwt_bcache_slot_(ip, bc->mask);

	for (;;) {
		const struct hwt_bc_entry *e = &bc->slots[i];

		if (!e->ninsn)
			return NULL;
		if (e->ip == ip)
			return e;
		i = (i + 1) & bc->mask;
	}
}

/* Store @entry (replacing one at the same IP); grows the table. */
int hwt_bcache_add(struct hwt_bcache *bc, const struct hwt_bc_entry *entry);

static inline size_t hwt_bcache_node_slot_(uint64_t ip, uint32_t mask)
{
	return (size_t) ((ip ^ (ip >> 17) ^ (ip >> 41)) & mask);
}

/* The index of the node at @ip, or HWT_BC_NO_NODE. */
static inline uint32_t hwt_bcache_node_find(const struct hwt_bcache *bc,
					    uint64_t ip)
{
	size_t i = hwt_bcache_node_slot_(ip, bc->nmask);

	if (!bc->nidx)
		return HWT_BC_NO_NODE;
	for (;;) {
		uint32_t n = bc->nidx[i];

		if (n == HWT_BC_NO_NODE || bc->nodes[n].ip == ip)
			return n;
		i = (i + 1) & bc->nmask;
	}
}

/*
 * Add @node (its succ[] and push are set here) with the @npush return
 * addresses at @pushes. Returns its index, or HWT_BC_NO_NODE if it cannot
 * be kept (then nothing changed). The graph starts over when full: the
 * nodes array may move.
 */
uint32_t hwt_bcache_node_add(struct hwt_bcache *bc,
			     const struct hwt_bc_node *node,
			     const uint64_t *pushes, unsigned npush);

#endif /* HWT_FLOW_BCACHE_H */

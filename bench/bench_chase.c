/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bench_chase: what a walk through a block graph costs this cpu at the
 * least, with nothing of a decoder in it: a floor for the flow decoder's
 * fast path (doc/flow-speed.md).
 *
 *   bench_chase [-n NODES] [-s STEPS] [-r ROUNDS] [-c PERCENT] [-S SEED]
 *               [-l LANES]
 *
 * NODES nodes of 64 bytes (hwt's struct hwt_bc_node), each with two links
 * as byte offsets (as hwt's), an instruction count and a kind. A step
 * loads the node, adds its count and takes a link: the next node's
 * address waits for this one's load, as the decoder's does. PERCENT of
 * the nodes (39 by default: the synthetic trace's share of blocks that
 * end in a conditional branch) are "conditional": their link is picked
 * by the next bit of a random stream, a coin flip as in gen_flow's
 * trace; the others always take their one link, to a node further on
 * (so that the walk cannot be caught in a loop without coin flips: the
 * last node is conditional). The walk's share of coin flips is printed.
 * Two ways to walk, best wall clock of ROUNDS each, ns a step:
 *
 *   chase          the link picked without a branch (an index)
 *   chase+kind     a branch on the kind of the node reached (in the
 *                  link, as hwt's handlers are chosen), mispredicted
 *                  where a coin flip chose a node of another kind
 *   lanes L+map    L walks (-l, default 4) interleaved step by step in
 *                  one thread, each without a branch, each counting its
 *                  edges in a map of 64 KiB as hwt coverage does (but
 *                  wrapping at 256: a timing), over STEPS / L steps
 *                  each: the walks' loads wait on nothing of each other,
 *                  so the cpu overlaps them, which one walk's chain of
 *                  loads cannot
 * each over NODES nodes (default 9000, about the synthetic trace's
 * graph: 562 KiB) and over 400 (25 KiB, within the L1 cache).
 * The defaults take STEPS = 14.1 M, the synthetic trace's blocks.
 */
#define _POSIX_C_SOURCE 200809L

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct node {
	uint32_t succ[2];	/* the next nodes: byte offset | kind */
	uint32_t ninsn;
	uint8_t kind;		/* 0: conditional, 1-3: others */
	uint8_t pad[64 - 13];
};

_Static_assert(sizeof(struct node) == 64, "a node is a cache line");

static uint64_t rng;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static uint32_t link(const struct node *nd, uint32_t i)
{
	return i * 64 | nd[i].kind;
}

static struct node *graph(unsigned n, unsigned percent)
{
	struct node *nd = aligned_alloc(64, (size_t)n * sizeof(*nd));

	if (!nd) {
		fprintf(stderr, "bench_chase: out of memory\n");
		exit(1);
	}
	memset(nd, 0, (size_t)n * sizeof(*nd));
	for (unsigned i = 0; i < n; i++) {
		nd[i].kind = i == n - 1 || rnd() % 100 < percent ? 0 :
			     (uint8_t)(1 + rnd() % 3);
		nd[i].ninsn = (uint32_t)(1 + rnd() % 10);
	}
	for (unsigned i = 0; i < n; i++) {
		if (nd[i].kind) {
			/* Forward: a run of them ends at a conditional
			 * one (the last node is). */
			nd[i].succ[0] = nd[i].succ[1] = link(nd,
				(uint32_t)(i + 1 + rnd() % (n - 1 - i)));
		} else {
			nd[i].succ[0] = link(nd, (uint32_t)(rnd() % n));
			nd[i].succ[1] = link(nd, (uint32_t)(rnd() % n));
		}
	}
	return nd;
}

/* The walks; @sum keeps the compiler from leaving anything out. A link
 * carries the kind of the node it names in its low bits (as hwt's carry
 * the node's op), so a step can choose before the node is loaded. */
static uint64_t walk(const struct node *nodes, const uint64_t *bits,
		     size_t steps, int kind, size_t *bit_count)
{
	const char *base = (const char *)nodes;
	uint32_t link = nodes[0].kind;
	uint64_t sum = 0;
	size_t k = 0;

	for (size_t s = 0; s < steps; s++) {
		const struct node *x =
			(const struct node *)(base + (link & ~63u));
		unsigned bit = (unsigned)(bits[k >> 6] >> (k & 63)) & 1;

		if (kind) {
			switch (link & 63) {
			case 0:
				sum += x->ninsn;
				link = x->succ[bit];
				k++;
				break;
			case 1:
				sum += 2 * (uint64_t)x->ninsn;
				link = x->succ[0];
				break;
			case 2:
				sum ^= x->ninsn;
				link = x->succ[0];
				break;
			default:
				sum += 3;
				link = x->succ[0];
				break;
			}
		} else {
			/* (Without a branch.) */
			unsigned cond = (link & 63) == 0;

			sum += x->ninsn;
			link = x->succ[bit & cond];
			k += cond;
		}
	}
	*bit_count = k;
	return sum + link;
}

#define MAX_LANES 8

/* The lanes' walk: lane j starts at node j and takes bits from its own
 * part of @bits. Each step: load the node, count the edge from the lane's
 * last node (map[loc ^ prev]++, prev = loc >> 1), take the link picked
 * by a bit where the node is conditional. A template on @lanes (each
 * caller passes a constant), so that each lane's state is registers. */
static inline __attribute__((always_inline)) uint64_t
walk_lanes_(const struct node *nodes, const uint64_t *bits, size_t steps,
	    uint8_t *map, const unsigned lanes)
{
	const char *base = (const char *)nodes;
	uint32_t link[MAX_LANES], prev[MAX_LANES];
	size_t k[MAX_LANES];
	size_t per = steps / lanes;
	uint64_t sum = 0;

	for (unsigned j = 0; j < lanes; j++) {
		link[j] = j * 64 | nodes[j].kind;
		prev[j] = 0;
		k[j] = per * j;
	}
	for (size_t s = 0; s < per; s++) {
		for (unsigned j = 0; j < lanes; j++) {
			const struct node *x = (const struct node *)
				(base + (link[j] & ~63u));
			unsigned bit = (unsigned)(bits[k[j] >> 6] >>
						  (k[j] & 63)) & 1;
			unsigned cond = (link[j] & 63) == 0;
			uint32_t loc = link[j] >> 6;

			map[(loc ^ prev[j]) & 0xffff]++;
			prev[j] = loc >> 1;
			sum += x->ninsn;
			link[j] = x->succ[bit & cond];
			k[j] += cond;
		}
	}
	for (unsigned j = 0; j < lanes; j++)
		sum += link[j];
	return sum;
}

static uint64_t walk_lanes(const struct node *nodes, const uint64_t *bits,
			   size_t steps, uint8_t *map, unsigned lanes)
{
	switch (lanes) {
	case 1:
		return walk_lanes_(nodes, bits, steps, map, 1);
	case 2:
		return walk_lanes_(nodes, bits, steps, map, 2);
	case 3:
		return walk_lanes_(nodes, bits, steps, map, 3);
	case 4:
		return walk_lanes_(nodes, bits, steps, map, 4);
	case 6:
		return walk_lanes_(nodes, bits, steps, map, 6);
	default:
		return walk_lanes_(nodes, bits, steps, map, 8);
	}
}

int main(int argc, char **argv)
{
	unsigned nodes = 9000, rounds = 5, percent = 39, lanes = 4;
	size_t steps = 14100000;
	uint64_t seed = 1;
	const unsigned sizes[2] = { 0, 400 };
	uint64_t *bits;
	uint8_t *map;
	int c;

	while ((c = getopt(argc, argv, "n:s:r:c:S:l:")) != -1) {
		switch (c) {
		case 'n':
			nodes = (unsigned)strtoul(optarg, NULL, 0);
			break;
		case 's':
			steps = (size_t)strtoull(optarg, NULL, 0);
			break;
		case 'r':
			rounds = (unsigned)strtoul(optarg, NULL, 0);
			break;
		case 'c':
			percent = (unsigned)strtoul(optarg, NULL, 0);
			break;
		case 'S':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 'l':
			lanes = (unsigned)strtoul(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr, "usage: bench_chase [-n NODES] "
				"[-s STEPS] [-r ROUNDS] [-c PERCENT] "
				"[-S SEED] [-l LANES]\n");
			return 2;
		}
	}
	if (nodes < MAX_LANES || !steps || !rounds || percent > 100 ||
	    !lanes || lanes > MAX_LANES || lanes == 5 || lanes == 7) {
		fprintf(stderr, "bench_chase: NODES >= 8, STEPS >= 1, "
			"ROUNDS >= 1, PERCENT <= 100, LANES 1-4, 6 or 8\n");
		return 2;
	}
	rng = seed * 0x9e3779b97f4a7c15ull | 1;
	bits = malloc((steps / 64 + 1) * sizeof(*bits));
	map = malloc(1 << 16);
	if (!bits || !map) {
		fprintf(stderr, "bench_chase: out of memory\n");
		return 1;
	}
	for (size_t i = 0; i < steps / 64 + 1; i++)
		bits[i] = rnd();
	printf("-- %zu steps, %u%% of the nodes conditional (a coin flip "
	       "each), best of %u\n", steps, percent, rounds);
	for (int i = 0; i < 2; i++) {
		unsigned n = sizes[i] ? sizes[i] : nodes;
		struct node *nd = graph(n, percent);

		for (int kind = 0; kind < 2; kind++) {
			double best = 1e30;
			uint64_t sum = 0;
			size_t flips = 0;

			for (unsigned r = 0; r < rounds; r++) {
				double t0 = now();

				sum += walk(nd, bits, steps, kind, &flips);
				t0 = now() - t0;
				if (t0 < best)
					best = t0;
			}
			printf("  %-11s %6u nodes (%5u KiB)  %7.1f ms  "
			       "%5.2f ns/step  %zu coin flips  (%llx)\n",
			       kind ? "chase+kind" : "chase", n, n / 16,
			       best * 1e3, best * 1e9 / (double)steps, flips,
			       (unsigned long long)(sum & 0xfff));
		}
		double lbest = 1e30;
		uint64_t lsum = 0;
		for (unsigned r = 0; r < rounds; r++) {
			double t0;

			memset(map, 0, 1 << 16);
			t0 = now();
			lsum += walk_lanes(nd, bits, steps, map, lanes);
			t0 = now() - t0;
			if (t0 < lbest)
				lbest = t0;
		}
		printf("  lanes %u+map %6u nodes (%5u KiB)  %7.1f ms  "
		       "%5.2f ns/step  (%llx)\n", lanes, n, n / 16,
		       lbest * 1e3, lbest * 1e9 / (double)steps,
		       (unsigned long long)((lsum + map[1]) & 0xfff));
		free(nd);
	}
	free(map);
	free(bits);
	return 0;
}

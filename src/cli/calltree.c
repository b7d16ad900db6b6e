/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hwt calls --folded: the function-call history as a call tree per
 * thread, each node's instructions its own (the segments' at that place
 * in the tree), printed as folded stacks ("f0;f1;f2 COUNT", the input of
 * flamegraph.pl, inferno and speedscope). The history gives its lines in
 * order with their depth (0: the outermost level the thread reached in
 * the whole history): a line's callers are the lines before it at each
 * shallower depth; where the thread has had none at a depth (the trace
 * started inside a call), the frame is "[unknown]" until a return to
 * that depth names it (the function returned to is that caller).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/calls.h"
#include "common/grow.h"

/* Deeper lines count at this depth (as calls prints them). */
#define TREE_DEPTH 200

struct tnode {
	uint64_t key;		/* a name (pointer), an IP, or a thread */
	uint64_t self;		/* instructions */
	uint32_t parent, child, next, last_child;
	uint8_t kind;		/* NODE_* */
};

enum { NODE_ROOT, NODE_NAMED, NODE_IP, NODE_UNKNOWN };

#define HASH_GONE UINT32_MAX

/* A thread's root and its path now: path[k] the node at depth k, for
 * k < @valid. */
struct tthread {
	uint64_t task;
	uint32_t root;
	uint32_t path[TREE_DEPTH + 1];
	int valid;
};

struct calls_tree {
	struct tnode *nodes;
	size_t n, cap;
	/* (parent, kind, key) -> node + 1; 0 empty, HASH_GONE a node that
	 * was named since (probes go on past it) */
	uint32_t *hash;
	size_t hcap;
	struct tthread *threads;
	size_t nthreads, tcap;
	size_t cur;		/* the thread of the last line */
	size_t gone;		/* HASH_GONE slots */
	int failed;
};

struct calls_tree *calls_tree_new(void)
{
	return calloc(1, sizeof(struct calls_tree));
}

void calls_tree_delete(struct calls_tree *t)
{
	if (!t)
		return;
	free(t->nodes);
	free(t->hash);
	free(t->threads);
	free(t);
}

static uint64_t hash_of(uint32_t parent, uint8_t kind, uint64_t key)
{
	uint64_t h = key ^ ((uint64_t)parent << 40) ^ ((uint64_t)kind << 32);

	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 32);
}

static int grow_hash(struct calls_tree *t)
{
	size_t ncap = t->hcap ? 2 * t->hcap : 1024;
	uint32_t *nh = calloc(ncap, sizeof(*nh));

	if (!nh)
		return -1;
	for (size_t i = 0; i < t->n; i++) {
		const struct tnode *x = &t->nodes[i];
		size_t j;

		if (x->kind == NODE_ROOT)
			continue;
		j = hash_of(x->parent, x->kind, x->key) & (ncap - 1);
		while (nh[j])
			j = (j + 1) & (ncap - 1);
		nh[j] = (uint32_t)i + 1;
	}
	free(t->hash);
	t->hash = nh;
	t->hcap = ncap;
	t->gone = 0;
	return 0;
}

static int new_node(struct calls_tree *t, uint32_t parent, uint8_t kind,
		    uint64_t key, uint32_t *out)
{
	struct tnode *x;

	/* (Nodes are named by uint32_t indexes; UINT32_MAX is none.) */
	if (t->n >= UINT32_MAX - 1 ||
	    hwt_grow((void **)&t->nodes, &t->cap, t->n + 1,
		     sizeof(*t->nodes)) < 0)
		return -1;
	*out = (uint32_t)t->n;
	x = &t->nodes[t->n++];
	memset(x, 0, sizeof(*x));
	x->key = key;
	x->kind = kind;
	x->parent = parent;
	x->child = x->next = x->last_child = UINT32_MAX;
	if (kind != NODE_ROOT) {
		struct tnode *p = &t->nodes[parent];

		/* Children in the order they came (the output's order). */
		if (p->child == UINT32_MAX)
			p->child = *out;
		else
			t->nodes[p->last_child].next = *out;
		p->last_child = *out;
	}
	return 0;
}

/* The slot of @parent's child (@kind, @key), or of where it would go. */
static size_t slot(const struct calls_tree *t, uint32_t parent, uint8_t kind,
		   uint64_t key)
{
	size_t j = hash_of(parent, kind, key) & (t->hcap - 1);

	for (; t->hash[j]; j = (j + 1) & (t->hcap - 1)) {
		const struct tnode *x;

		if (t->hash[j] == HASH_GONE)
			continue;
		x = &t->nodes[t->hash[j] - 1];
		if (x->parent == parent && x->kind == kind && x->key == key)
			break;
	}
	return j;
}

/* @parent's child (@kind, @key), made if new. */
static int child(struct calls_tree *t, uint32_t parent, uint8_t kind,
		 uint64_t key, uint32_t *out)
{
	size_t j;

	/* (Slots of renamed nodes count as used: grow_hash() drops them.) */
	if ((t->n + t->gone + 1) * 2 > t->hcap && grow_hash(t) < 0)
		return -1;
	j = slot(t, parent, kind, key);
	if (t->hash[j]) {
		*out = t->hash[j] - 1;
		return 0;
	}
	if (new_node(t, parent, kind, key, out) < 0)
		return -1;
	t->hash[j] = *out + 1;
	return 0;
}

/*
 * The unknown caller @x is (@kind, @key): named so, with what it called,
 * unless its parent has that child already (then it stays unknown).
 * 1 if named, 0 if not, -1 (memory).
 */
static int name_unknown(struct calls_tree *t, uint32_t x, uint8_t kind,
			uint64_t key)
{
	struct tnode *nx;
	size_t old, j;

	if ((t->n + t->gone + 1) * 2 > t->hcap && grow_hash(t) < 0)
		return -1;
	nx = &t->nodes[x];
	j = slot(t, nx->parent, kind, key);
	if (t->hash[j])
		return 0;
	old = slot(t, nx->parent, NODE_UNKNOWN, 0);
	t->hash[old] = HASH_GONE;
	t->gone++;
	nx->kind = kind;
	nx->key = key;
	/* (Its slot: the first free one, a gone one's not reused.) */
	t->hash[slot(t, nx->parent, kind, key)] = x + 1;
	return 1;
}

static struct tthread *thread_of(struct calls_tree *t, uint64_t task)
{
	struct tthread *th;

	if (t->cur < t->nthreads && t->threads[t->cur].task == task)
		return &t->threads[t->cur];
	for (size_t i = 0; i < t->nthreads; i++)
		if (t->threads[i].task == task) {
			t->cur = i;
			return &t->threads[i];
		}
	if (hwt_grow((void **)&t->threads, &t->tcap, t->nthreads + 1,
		     sizeof(*t->threads)) < 0)
		return NULL;
	th = &t->threads[t->nthreads];
	memset(th, 0, sizeof(*th));
	th->task = task;
	if (new_node(t, 0, NODE_ROOT, task, &th->root) < 0)
		return NULL;
	t->cur = t->nthreads++;
	return th;
}

int calls_tree_add(struct calls_tree *t, uint64_t task, int depth,
		   int named, uint64_t key, uint64_t ninsn)
{
	struct tthread *th;
	uint32_t up;

	if (t->failed)
		return -1;
	th = thread_of(t, task);
	if (!th)
		goto oom;
	if (depth < 0)
		depth = 0;
	if (depth > TREE_DEPTH)
		depth = TREE_DEPTH;
	/* Callers this thread has not been seen in: unknown. */
	for (int k = th->valid; k < depth; k++) {
		up = k ? th->path[k - 1] : th->root;
		if (child(t, up, NODE_UNKNOWN, 0, &th->path[k]) < 0)
			goto oom;
	}
	/* A return to an unknown caller: it is this function. */
	if (th->valid > depth &&
	    t->nodes[th->path[depth]].kind == NODE_UNKNOWN) {
		int r = name_unknown(t, th->path[depth],
				     named ? NODE_NAMED : NODE_IP, key);

		if (r < 0)
			goto oom;
		if (r) {
			th->valid = depth + 1;
			t->nodes[th->path[depth]].self += ninsn;
			return 0;
		}
	}
	up = depth ? th->path[depth - 1] : th->root;
	if (child(t, up, named ? NODE_NAMED : NODE_IP, key,
		  &th->path[depth]) < 0)
		goto oom;
	th->valid = depth + 1;
	t->nodes[th->path[depth]].self += ninsn;
	return 0;
oom:
	t->failed = 1;
	fprintf(stderr, "hwt calls: out of memory for the call tree\n");
	return -1;
}

/* One frame's name, as the folded format can have it (no ';'). */
static void put_frame(struct cli_out *out, const struct tnode *x,
		      int threads)
{
	char *p = cli_out_reserve(out, 256);

	switch (x->kind) {
	case NODE_ROOT:
		/* (One thread: no frame of its own.) */
		if (threads)
			p += sprintf(p, "pid %" PRIu32 " tid %" PRIu32,
				     (uint32_t)(x->key >> 32),
				     (uint32_t)x->key);
		break;
	case NODE_NAMED: {
		const char *s = (const char *)(uintptr_t)x->key;
		size_t len = strnlen(s, 200);

		for (size_t i = 0; i < len; i++)
			*p++ = s[i] == ';' ? ':' : s[i];
		break;
	}
	case NODE_IP:
		p = cli_put_str(p, "?? 0x");
		p = cli_put_hex(p, x->key);
		break;
	default:
		p = cli_put_str(p, "[unknown]");
		break;
	}
	cli_out_commit(out, p);
}

/*
 * Each node with instructions of its own, as its path from its thread's
 * root and its count; depth first, children in the order they came.
 */
int calls_tree_print_folded(struct calls_tree *t, struct cli_out *out)
{
	uint32_t path[TREE_DEPTH + 2];
	int threads = t->nthreads > 1;

	if (t->failed)
		return -1;
	for (size_t i = 0; i < t->nthreads; i++) {
		int d = 0;
		uint32_t x = t->threads[i].root;

		path[0] = x;
		while (d >= 0) {
			const struct tnode *nx = &t->nodes[x];

			if (nx->self) {
				int first = !threads;

				for (int k = first; k <= d; k++) {
					put_frame(out, &t->nodes[path[k]],
						  threads);
					if (k < d)
						cli_out_write(out, ";", 1);
				}
				cli_out_printf(out, " %" PRIu64 "\n",
					       nx->self);
			}
			/* Down, else on, else up and on. */
			if (nx->child != UINT32_MAX && d <= TREE_DEPTH) {
				x = nx->child;
				path[++d] = x;
				continue;
			}
			while (d >= 0 && t->nodes[x].next == UINT32_MAX) {
				if (--d >= 0)
					x = path[d];
			}
			if (d > 0) {
				x = t->nodes[x].next;
				path[d] = x;
			} else {
				d = -1;
			}
		}
	}
	return 0;
}

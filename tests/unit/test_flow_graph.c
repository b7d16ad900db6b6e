/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The block decoder's fast path (the block graph, src/flow/graph.c, and
 * the query decoder's direct mode) against its general path: the same
 * traces decoded with HWT_BLK_NO_GRAPH (every block walks the cache, one
 * hwt_blk_next() at a time) and with the graph, through hwt_blk_next(),
 * hwt_blk_next_batch() (batches of 1, 3 and 256) and hwt_blk_fold_next().
 * Every block (all of struct hwt_block), status, event (all of struct
 * hwt_event), error, and where a batch ends also the decoder's offset, IP
 * and time, must be the same; folds must count the same instructions and
 * canonical blocks and make the same AFL map as hwt_blk_fold_block() on
 * the general path's blocks.
 *
 * The traces run a generated program (functions of straight-line blocks
 * ending in conditional jumps, direct and indirect calls and jumps,
 * returns; half of it in a second section) with TNT-8 and TNT-64, TIPs of
 * every IP compression and compressed returns, PSB+ every so often, and
 * then noise at random places (timing packets, PADs, CBR, MODE.Exec, PIP,
 * disable/enable, interrupts, overflows, PTWRITE, junk bytes) and random
 * bit flips, so that the fast path keeps handing over to the general path
 * and back, at every kind of place.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <hwt/flow.h>
#include <hwt/pt.h>

#include "fold_loop.h"
#include "rng.h"
#include "trace_build.h"

/* ------------------------------------------------------------------ */
/* The program                                                         */
/* ------------------------------------------------------------------ */

enum { T_FALL, T_JCC, T_IJMP, T_CALL, T_ICALL, T_RET, T_LOOP, T_JMP };

#define NFUNCS 40
#define MAXBLK 8
#define SEC_A 0x400000ull
#define SEC_B 0x7f0000001000ull

struct blk {
	uint64_t addr, taddr;	/* first instruction, terminator */
	unsigned term, tgt;	/* tgt: block (jcc, ijmp) or function */
};

struct func {
	unsigned first, n, level;
};

struct prog {
	struct func f[NFUNCS];
	struct blk b[NFUNCS * MAXBLK];
	unsigned nb;
	uint8_t code_a[1 << 14], code_b[1 << 14];
	size_t len_a, len_b;
};

static const uint8_t term_len[] = { 0, 6, 2, 5, 2, 1, 5, 5 };

/* Function 0 loops calling level 1; levels go 1..3; section by parity. */
static void build(struct prog *p, struct rng *r)
{
	unsigned f, k, nb = 0;
	uint64_t a = SEC_A, b = SEC_B;

	memset(p, 0, sizeof(*p));
	memset(p->code_a, 0xcc, sizeof(p->code_a));
	memset(p->code_b, 0xcc, sizeof(p->code_b));
	for (f = 0; f < NFUNCS; f++) {
		uint64_t *addr = (f & 1) ? &b : &a;

		p->f[f].first = nb;
		p->f[f].n = 2 + rndn(r, MAXBLK - 1);
		p->f[f].level = f ? 1 + f % 3 : 0;
		for (k = 0; k < p->f[f].n; k++, nb++) {
			struct blk *bl = &p->b[nb];
			unsigned nplain = 1 + rndn(r, 4);
			int leaf = p->f[f].level == 3;

			bl->addr = *addr;
			*addr += nplain * 4;	/* add rax, 1 */
			if (k == p->f[f].n - 1) {
				bl->term = f ? T_RET : T_LOOP;
			} else if (!f) {
				bl->term = T_CALL;
			} else {
				/* (A direct jump: a node that runs on into
				 * the next block, as the memo takes them.) */
				static const unsigned pick[] = {
					T_JCC, T_JCC, T_FALL, T_IJMP, T_JMP,
					T_CALL, T_ICALL, T_JCC
				};
				bl->term = pick[rndn(r, leaf ? 5 : 8)];
			}
			if (bl->term == T_JCC || bl->term == T_IJMP ||
			    bl->term == T_JMP)
				bl->tgt = k + 1 + rndn(r, p->f[f].n - k - 1);
			if (bl->term == T_CALL || bl->term == T_ICALL) {
				/* A function one level down. */
				unsigned lvl = p->f[f].level + 1, g;

				do
					g = 1 + rndn(r, NFUNCS - 1);
				while (1 + g % 3 != lvl);
				bl->tgt = g;
			}
			bl->taddr = *addr;
			*addr += term_len[bl->term];
		}
		*addr = (*addr + 15) & ~15ull;
	}
	p->nb = nb;
	p->len_a = a - SEC_A;
	p->len_b = b - SEC_B;
	assert_true(p->len_a <= sizeof(p->code_a));
	assert_true(p->len_b <= sizeof(p->code_b));

	for (f = 0; f < NFUNCS; f++) {
		for (k = 0; k < p->f[f].n; k++) {
			struct blk *bl = &p->b[p->f[f].first + k];
			uint8_t *c = bl->addr >= SEC_B ?
					     p->code_b + (bl->addr - SEC_B) :
					     p->code_a + (bl->addr - SEC_A);
			uint64_t next = bl->taddr + term_len[bl->term], dst = 0;
			uint8_t *t = c + (bl->taddr - bl->addr);
			int rel = 1;

			for (; c < t; c += 4) {
				c[0] = 0x48; c[1] = 0x83; c[2] = 0xc0; c[3] = 1;
			}
			switch (bl->term) {
			case T_JCC:
				t[0] = 0x0f; t[1] = 0x84;
				dst = p->b[p->f[f].first + bl->tgt].addr;
				t += 2;
				break;
			case T_CALL:
				t[0] = 0xe8;
				dst = p->b[p->f[bl->tgt].first].addr;
				t += 1;
				break;
			case T_LOOP:
				t[0] = 0xe9;
				dst = p->b[p->f[f].first].addr;
				t += 1;
				break;
			case T_JMP:
				t[0] = 0xe9;
				dst = p->b[p->f[f].first + bl->tgt].addr;
				t += 1;
				break;
			case T_ICALL:
				t[0] = 0xff; t[1] = 0xd0;
				rel = 0;
				break;
			case T_IJMP:
				t[0] = 0xff; t[1] = 0xe0;
				rel = 0;
				break;
			case T_RET:
				t[0] = 0xc3;
				rel = 0;
				break;
			default:
				rel = 0;
				break;
			}
			if (rel) {
				/* Calls across sections get no rel32; make
				 * them indirect. */
				int64_t d = (int64_t) (dst - next);

				if (d != (int32_t) d) {
					/* call rax; nop (3 bytes) */
					static const uint8_t icall[] = {
						0xff, 0xd0, 0x0f, 0x1f, 0x00
					};

					assert_int_equal(bl->term, T_CALL);
					memcpy(t - 1, icall, sizeof(icall));
					bl->term = T_ICALL;
					continue;
				}
				for (int i = 0; i < 4; i++)
					t[i] = (uint8_t) ((uint32_t) d >> (8 * i));
			}
		}
	}
}

/* ------------------------------------------------------------------ */
/* Its trace                                                           */
/* ------------------------------------------------------------------ */

#define TRACE_MAX (1 << 17)

struct trace {
	struct tb tb;		/* into @buf */
	uint8_t buf[TRACE_MAX];
	uint64_t bits;		/* pending TNT bits, oldest highest */
	unsigned nbits, tnt64;	/* TNT-64 for the next packet */
	uint64_t last_ip;
	struct rng *r;
};

static void flush_tnt(struct trace *t)
{
	if (!t->nbits)
		return;
	tb_tnt_raw(&t->tb, t->nbits > 6 ? HWT_PT_TNT64 : HWT_PT_TNT8, t->nbits,
		   t->bits);
	t->bits = 0;
	t->nbits = 0;
	t->tnt64 = !rndn(t->r, 4);
}

static void tnt(struct trace *t, int taken)
{
	t->bits = (t->bits << 1) | (taken ? 1 : 0);
	if (++t->nbits == (t->tnt64 ? 47u : 6u))
		flush_tnt(t);
}

/* An IP packet, compressed against the last IP where it can be. */
static void ip_pkt(struct trace *t, unsigned type, uint64_t ip)
{
	unsigned pick = rndn(t->r, 4);
	uint8_t ipc = HWT_PT_IPC_SEXT48;

	flush_tnt(t);
	if (pick == 0 && (ip >> 16) == (t->last_ip >> 16) && t->last_ip)
		ipc = HWT_PT_IPC_UPDATE16;
	else if (pick == 1 && (ip >> 32) == (t->last_ip >> 32) && t->last_ip)
		ipc = HWT_PT_IPC_UPDATE32;
	else if (pick == 2)
		ipc = HWT_PT_IPC_FULL;
	tb_ipc(&t->tb, (uint8_t) type, ipc, ip);
	t->last_ip = ip;
}

static void ip_none(struct trace *t, unsigned type)
{
	flush_tnt(t);
	tb_ip(&t->tb, (uint8_t) type, 0);
}

static void psb(struct trace *t, uint64_t ip)
{
	flush_tnt(t);
	/* The time: 7 per byte of trace before the TSC (after PSB and
	 * MODE.Exec). */
	tb_psbplus_tsc(&t->tb, (t->tb.len + HWT_PT_PSB_SIZE + 2) * 7, ip);
	t->last_ip = ip;
}

/* Noise: something other than the program's flow, at a random place. */
static void noise(struct trace *t, uint64_t ip)
{
	switch (rndn(t->r, 14)) {
	case 0:
		tb_mtc(&t->tb, (uint8_t) rnd(t->r));
		break;
	case 1:
		tb_cyc(&t->tb, 1 + rndn(t->r, 500));
		break;
	case 2:
		tb_simple(&t->tb, HWT_PT_PAD);
		break;
	case 3:
		tb_cbr(&t->tb, (uint8_t) (1 + rndn(t->r, 40)));
		break;
	case 4:
		tb_tsc(&t->tb, t->tb.len * 7 + rndn(t->r, 5));
		break;
	case 5:
		flush_tnt(t);
		tb_mode_exec(&t->tb, HWT_PT_EXEC_CSL);
		break;
	case 6:
		flush_tnt(t);
		tb_pip(&t->tb, rnd(t->r) & 0xffffffffffe0ull, 0);
		break;
	case 7:
		/* Disabled at @ip, enabled again there. */
		ip_none(t, HWT_PT_TIP_PGD);
		ip_pkt(t, HWT_PT_TIP_PGE, ip);
		break;
	case 8:
		/* An interrupt at @ip, handled at @ip. */
		ip_pkt(t, HWT_PT_FUP, ip);
		ip_pkt(t, HWT_PT_TIP, ip);
		break;
	case 9:
		flush_tnt(t);
		tb_simple(&t->tb, HWT_PT_OVF);
		ip_pkt(t, HWT_PT_FUP, ip);
		break;
	case 10:
		tb_ptw(&t->tb, 0, (uint32_t) rnd(t->r), 0);
		break;
	case 11:
		/* A junk byte. */
		assert_true(t->tb.len < t->tb.size);
		t->tb.buf[t->tb.len++] = (uint8_t) rnd(t->r);
		break;
	case 12:
		flush_tnt(t);
		ip_pkt(t, HWT_PT_TIP, ip);
		break;
	default:
		/* A stray TNT bit. */
		tnt(t, (int) rndn(t->r, 2));
		break;
	}
}

/* The decoder's return stack, as far as the trace goes: a ring of 64
 * return addresses that only compressed returns pop. */
struct cstack {
	uint64_t a[64];
	unsigned n;
};

static void cpush(struct cstack *c, uint64_t ret)
{
	if (c->n == 64) {
		memmove(c->a, c->a + 1, 63 * sizeof(c->a[0]));
		c->n--;
	}
	c->a[c->n++] = ret;
}

/* Run the program until @size bytes of trace; @noise_every: about one
 * piece of noise per that many blocks (0: none). */
static void run_prog(const struct prog *p, struct trace *t, size_t size,
		     unsigned noise_every)
{
	struct {
		unsigned f, b;
	} stack[8];
	struct cstack cs;
	unsigned depth = 0, f = 0, b = 0;
	size_t last_psb = 0;

	t->tb = (struct tb) TB_INIT(t->buf);
	t->nbits = 0;
	t->bits = 0;
	t->last_ip = 0;
	cs.n = 0;
	psb(t, p->b[0].addr);
	while (t->tb.len + 256 < size) {
		const struct blk *bl = &p->b[p->f[f].first + b];
		uint64_t to, ret;

		if (t->tb.len - last_psb > 1500) {
			psb(t, bl->addr);
			last_psb = t->tb.len;
		}
		if (noise_every && !rndn(t->r, noise_every))
			noise(t, bl->addr);
		switch (bl->term) {
		case T_FALL:
			b++;
			break;
		case T_JCC: {
			int taken = (int) rndn(t->r, 2);

			tnt(t, taken);
			b = taken ? bl->tgt : b + 1;
			break;
		}
		case T_IJMP:
			b = bl->tgt;
			ip_pkt(t, HWT_PT_TIP, p->b[p->f[f].first + b].addr);
			break;
		case T_CALL:
		case T_ICALL:
			/* Levels 0..3: never deeper than 3. */
			assert_true(depth < 8);
			stack[depth].f = f;
			stack[depth].b = b + 1;
			depth++;
			cpush(&cs, bl->taddr + (bl->term == T_CALL ? 5 : 2));
			f = bl->tgt;
			b = 0;
			if (bl->term == T_ICALL)
				ip_pkt(t, HWT_PT_TIP, p->b[p->f[f].first].addr);
			break;
		case T_RET:
			assert_true(depth > 0);
			depth--;
			f = stack[depth].f;
			b = stack[depth].b;
			to = p->b[p->f[f].first + b].addr;
			/* Where the call returns to (the nop after a call
			 * made indirect runs on to @to). */
			ret = p->b[p->f[f].first + b - 1].taddr +
			      (p->b[p->f[f].first + b - 1].term == T_CALL ? 5 :
									    2);
			if (cs.n && cs.a[cs.n - 1] == ret && rndn(t->r, 8)) {
				cs.n--;
				tnt(t, 1);
			} else {
				ip_pkt(t, HWT_PT_TIP, ret);
			}
			(void) to;
			break;
		case T_LOOP:
			b = 0;
			break;
		case T_JMP:
			b = bl->tgt;
			break;
		}
	}
	ip_none(t, HWT_PT_TIP_PGD);
}

/* ------------------------------------------------------------------ */
/* Recording a decode                                                  */
/* ------------------------------------------------------------------ */

enum { R_SYNC = 1, R_BLOCK, R_EVENT, R_ERROR };

/* Code without branches that need trace may loop forever. */
#define MAX_RECS (1u << 20)

struct rec {
	uint8_t kind;
	uint8_t extra;		/* @offset, @ip, @tsc are valid */
	int status;
	int time_err;
	uint64_t offset, ip, tsc;
	union {
		struct hwt_block block;
		struct hwt_event event;
	} u;
};

struct log {
	struct rec *r;
	size_t n, cap;
};

static struct rec *rec_add(struct log *l, uint8_t kind, int status)
{
	struct rec *r;

	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 4096;
		l->r = realloc(l->r, l->cap * sizeof(*l->r));
		assert_non_null(l->r);
	}
	r = &l->r[l->n++];
	memset(r, 0, sizeof(*r));
	r->kind = kind;
	r->status = status;
	return r;
}

static void rec_extra(struct rec *r, const struct hwt_blk_decoder *d)
{
	r->extra = 1;
	if (hwt_blk_get_offset(d, &r->offset) < 0)
		r->offset = UINT64_MAX;
	(void) hwt_blk_get_ip(d, &r->ip);
	r->time_err = hwt_blk_time(d, &r->tsc, NULL, NULL);
}

static struct hwt_blk_decoder *new_dec(struct hwt_image *image,
				       const struct trace *t, uint32_t flags,
				       const struct hwt_qry_config *qc)
{
	struct hwt_blk_config cfg;
	struct hwt_blk_decoder *d;

	hwt_blk_config_init(&cfg);
	cfg.qry = *qc;
	cfg.qry.begin = t->tb.buf;
	cfg.qry.end = t->tb.buf + t->tb.len;
	cfg.flags = flags;
	d = hwt_blk_new(&cfg, image);
	assert_non_null(d);
	return d;
}

static int drain(struct hwt_blk_decoder *d, struct log *l, int status)
{
	while (status >= 0 && (status & HWT_STS_EVENT_PENDING)) {
		struct hwt_event ev;
		struct rec *r;

		status = hwt_blk_event(d, &ev);
		r = rec_add(l, R_EVENT, status);
		if (status >= 0)
			r->u.event = ev;
	}
	return status;
}

/*
 * hwt_blk_next_batch_until(): each batch's first record, size, mark, and
 * the decoder's time and offset before it, to hold against the general
 * path's time and offset after each block (check_until()).
 */
struct until_batch {
	size_t first, n;
	uint64_t mark, offset, tsc;
	int time_err, off_err;
};

struct until_log {
	struct rng r;
	struct until_batch *b;
	size_t n, cap;
	uint8_t nomark;		/* every mark UINT64_MAX */
};

/* A mark for the next batch: none, at or before the offset, or a few
 * packets on. */
static uint64_t until_mark(struct until_log *u, uint64_t off)
{
	if (u->nomark)
		return UINT64_MAX;
	switch (rndn(&u->r, 8)) {
	case 0:
		return UINT64_MAX;
	case 1:
		return off - rndn(&u->r, 2);
	default:
		return off + 1 + rndn(&u->r, 64);
	}
}

/* @b's size is its last instruction's, whichever way the decoder made
 * it (the general path, the cache's entries, a graph node, a batch). */
static void check_size(const struct hwt_image *image,
		       const struct hwt_block *b)
{
	struct hwt_insn_info info;
	const uint8_t *code;
	size_t avail;

	if (!b->ninsn || b->truncated)
		return;
	assert_int_equal(hwt_image_read(image, b->end_ip, &code, &avail), 0);
	assert_int_equal(hwt_insn_decode(&info, code, avail, b->end_ip,
					 b->mode), 0);
	assert_int_equal(b->size, info.size);
}

/* Decode the whole trace as ptxed does; @batch: blocks per call (0:
 * hwt_blk_next()); with @u, hwt_blk_next_batch_until() instead. Every
 * block's size is checked. */
static void decode(struct hwt_image *image, const struct trace *t,
		   uint32_t flags, const struct hwt_qry_config *qc,
		   size_t batch, struct log *l, struct until_log *u)
{
	struct hwt_blk_decoder *d = new_dec(image, t, flags, qc);
	struct hwt_block blocks[256];
	unsigned syncs = 0;

	l->n = 0;
	if (u)
		u->n = 0;

	while (syncs++ < 10000 && l->n < MAX_RECS) {
		int status = hwt_blk_sync_forward(d);

		rec_add(l, R_SYNC, status);
		if (status < 0)
			break;
		while (l->n < MAX_RECS) {
			size_t n = 1, i;

			status = drain(d, l, status);
			if (status < 0 || (status & HWT_STS_EOS))
				break;
			if (u) {
				struct until_batch *b;

				if (u->n == u->cap) {
					u->cap = u->cap ? 2 * u->cap : 4096;
					u->b = realloc(u->b,
						       u->cap * sizeof(*u->b));
					assert_non_null(u->b);
				}
				b = &u->b[u->n++];
				b->first = l->n;
				b->off_err = hwt_blk_get_offset(d, &b->offset);
				b->time_err = hwt_blk_time(d, &b->tsc, NULL,
							   NULL);
				b->mark = until_mark(u, b->offset);
				status = hwt_blk_next_batch_until(
					d, blocks, batch, &n, b->mark);
				b->n = n;
			} else if (batch) {
				status = hwt_blk_next_batch(d, blocks, batch,
							    &n);
			} else {
				status = hwt_blk_next(d, &blocks[0]);
			}
			assert_true(n >= 1 && n <= (batch ? batch : 1));
			for (i = 0; i < n; i++) {
				struct rec *r = rec_add(l, R_BLOCK,
							i + 1 < n ? 0 : status);

				r->u.block = blocks[i];
				check_size(image, &blocks[i]);
				if (i + 1 == n)
					rec_extra(r, d);
			}
			if (status < 0)
				break;
		}
		if (status < 0 && status != -HWT_ERR_EOS)
			rec_extra(rec_add(l, R_ERROR, status), d);
	}
	hwt_blk_delete(d);
}

/* @fast must be @ref, the extras where @fast has them. */
static void compare(const struct log *ref, const struct log *fast,
		    const char *what)
{
	size_t i;

	for (i = 0; i < ref->n && i < fast->n; i++) {
		const struct rec *a = &ref->r[i], *b = &fast->r[i];
		int same = a->kind == b->kind && a->status == b->status;

		if (same && a->kind == R_BLOCK)
			same = !memcmp(&a->u.block, &b->u.block,
				       sizeof(a->u.block));
		if (same && a->kind == R_EVENT && a->status >= 0)
			same = !memcmp(&a->u.event, &b->u.event,
				       sizeof(a->u.event));
		if (same && b->extra)
			same = a->offset == b->offset && a->ip == b->ip &&
			       a->time_err == b->time_err && a->tsc == b->tsc;
		if (!same) {
			fprintf(stderr, "%s: record %zu differs: kind %u/%u "
				"status %d/%d ip %llx/%llx offset %llx/%llx\n",
				what, i, a->kind, b->kind, a->status,
				b->status,
				(unsigned long long) a->u.block.ip,
				(unsigned long long) b->u.block.ip,
				(unsigned long long) a->offset,
				(unsigned long long) b->offset);
			fail();
		}
	}
	if (ref->n != fast->n) {
		fprintf(stderr, "%s: %zu records, expected %zu\n", what,
			fast->n, ref->n);
		fail();
	}
}

/* ------------------------------------------------------------------ */
/* Folding                                                             */
/* ------------------------------------------------------------------ */

struct fold_out {
	uint64_t ninsn, nblocks, nevents, nerrors;
	uint8_t map[HWT_BLK_FOLD_MAP_SIZE];
};

static void fold_at(void *ctx, struct hwt_blk_fold *fold, enum fold_at at,
		    int status, const struct hwt_event *ev)
{
	struct fold_out *o = ctx;

	if (at == FOLD_AT_EVENT) {
		o->nevents++;
		if (ev && ev->type == HWT_EV_OVERFLOW)
			fold->prev = 0;
	}
	if (at == FOLD_AT_END && status < 0 && status != -HWT_ERR_EOS)
		o->nerrors++;
}

/* As hwt flow --stat / coverage; @fast: hwt_blk_fold_next() where it
 * can; @count (or NULL): the blocks counted as coverage --lcov does. */
static void fold_dec_count(struct hwt_blk_decoder *d, int fast,
			   struct fold_out *o, struct fold_count *count)
{
	const struct fold_loop how = {
		.max_syncs = 10000, .max_steps = MAX_RECS, .fast = fast,
		.at = fold_at, .ctx = o, .count = count
	};
	struct hwt_blk_fold fold;

	memset(o, 0, sizeof(*o));
	if (count)
		memset(count, 0, sizeof(*count));
	hwt_blk_fold_init(&fold, o->map);
	(void) fold_loop_run(&how, d, &fold);
	o->ninsn = fold.ninsn;
	o->nblocks = fold.nblocks;
}

static void fold_dec(struct hwt_blk_decoder *d, int fast, struct fold_out *o)
{
	fold_dec_count(d, fast, o, NULL);
}

static void fold_run_count(struct hwt_image *image, const struct trace *t,
			   uint32_t flags, const struct hwt_qry_config *qc,
			   int fast, struct fold_out *o,
			   struct fold_count *count)
{
	struct hwt_blk_decoder *d = new_dec(image, t, flags, qc);

	fold_dec_count(d, fast, o, count);
	hwt_blk_delete(d);
}

static void fold_run(struct hwt_image *image, const struct trace *t,
		     uint32_t flags, const struct hwt_qry_config *qc,
		     int fast, struct fold_out *o)
{
	fold_run_count(image, t, flags, qc, fast, o, NULL);
}

/* Runs and outcomes the fast folds' decoders tallied (hwt_blk_tally()),
 * over the tests: test_clean() checks some were. */
static uint64_t tally_told;

/* @o must be @ref: counts and map. */
static void fold_compare(const struct fold_out *ref, const struct fold_out *o,
			 const char *what)
{
	if (!memcmp(ref, o, sizeof(*ref)))
		return;
	fprintf(stderr, "%s: insn %llu/%llu blocks %llu/%llu "
		"events %llu/%llu errors %llu/%llu map %s\n", what,
		(unsigned long long) ref->ninsn, (unsigned long long) o->ninsn,
		(unsigned long long) ref->nblocks,
		(unsigned long long) o->nblocks,
		(unsigned long long) ref->nevents,
		(unsigned long long) o->nevents,
		(unsigned long long) ref->nerrors,
		(unsigned long long) o->nerrors,
		memcmp(ref->map, o->map, sizeof(ref->map)) ? "differs" : "same");
	fail();
}

/* ------------------------------------------------------------------ */
/* Tests                                                               */
/* ------------------------------------------------------------------ */

struct fixture {
	struct prog prog;
	struct trace trace;
	struct log ref, fast;
	struct until_log until;
	struct fold_out fref, ffast;
	struct fold_count cref, cfast;
	struct hwt_image *image;
};

static struct hwt_image *prog_image(const struct prog *p)
{
	struct hwt_image *image = hwt_image_new();

	assert_non_null(image);
	assert_int_equal(hwt_image_add_buffer(image, p->code_a, p->len_a,
					      SEC_A), 0);
	assert_int_equal(hwt_image_add_buffer(image, p->code_b, p->len_b,
					      SEC_B), 0);
	return image;
}

/*
 * Every block of a batch of hwt_blk_next_batch_until() but its first
 * starts, on the general path decoding one block at a time (@ref: the
 * time and offset after the block before), with the time the batch
 * started with and an offset below its mark. Returns the blocks that
 * came in batches of more than one.
 */
static size_t check_until(const struct log *ref, const struct until_log *u,
			  const char *what)
{
	size_t more = 0;

	for (size_t k = 0; k < u->n; k++) {
		const struct until_batch *b = &u->b[k];

		for (size_t i = 1; i < b->n; i++) {
			const struct rec *p = &ref->r[b->first + i - 1];

			assert_true(p->kind == R_BLOCK && p->extra);
			if (p->time_err != b->time_err || p->tsc != b->tsc ||
			    b->off_err < 0 || p->offset >= b->mark) {
				fprintf(stderr, "%s: batch at record %zu, "
					"block %zu: time %d %llx, offset %llx;"
					" before: %d %llx, mark %llx\n", what,
					b->first, i, p->time_err,
					(unsigned long long) p->tsc,
					(unsigned long long) p->offset,
					b->time_err,
					(unsigned long long) b->tsc,
					(unsigned long long) b->mark);
				fail();
			}
		}
		if (b->n > 1)
			more += b->n;
	}
	return more;
}

/* Blocks in batches of hwt_blk_next_batch_until() of more than one, and
 * all blocks, over the tests (test_until_batches()); and without marks,
 * the blocks and the batches. */
static size_t until_more, until_blocks, nomark_blocks, nomark_batches;

static void check_trace(struct fixture *fx, uint32_t flags,
			const struct hwt_qry_config *qc, const char *name)
{
	static const size_t batches[] = { 0, 1, 3, 256 };
	char what[128];

	decode(fx->image, &fx->trace, flags | HWT_BLK_NO_GRAPH, qc, 0,
	       &fx->ref, NULL);
	for (size_t i = 0; i < sizeof(batches) / sizeof(batches[0]); i++) {
		snprintf(what, sizeof(what), "%s flags %x batch %zu", name,
			 flags, batches[i]);
		decode(fx->image, &fx->trace, flags, qc, batches[i],
		       &fx->fast, NULL);
		compare(&fx->ref, &fx->fast, what);
	}
	/* With marks; the reference's blocks each have their time and
	 * offset after. */
	snprintf(what, sizeof(what), "%s flags %x until", name, flags);
	fx->until.r.s = fx->ref.n * 0x9e3779b97f4a7c15ull + 1;
	decode(fx->image, &fx->trace, flags, qc, 256, &fx->fast, &fx->until);
	compare(&fx->ref, &fx->fast, what);
	until_more += check_until(&fx->ref, &fx->until, what);
	for (size_t i = 0; i < fx->fast.n; i++)
		until_blocks += fx->fast.r[i].kind == R_BLOCK;
	/* Without marks: a batch ends where the time may move. */
	snprintf(what, sizeof(what), "%s flags %x until, no marks", name,
		 flags);
	fx->until.nomark = 1;
	decode(fx->image, &fx->trace, flags, qc, 256, &fx->fast, &fx->until);
	fx->until.nomark = 0;
	compare(&fx->ref, &fx->fast, what);
	(void) check_until(&fx->ref, &fx->until, what);
	nomark_batches += fx->until.n;
	for (size_t i = 0; i < fx->fast.n; i++)
		nomark_blocks += fx->fast.r[i].kind == R_BLOCK;

	fold_run_count(fx->image, &fx->trace, flags | HWT_BLK_NO_GRAPH, qc, 0,
		       &fx->fref, &fx->cref);
	fold_run_count(fx->image, &fx->trace, flags, qc, 1, &fx->ffast,
		       &fx->cfast);
	snprintf(what, sizeof(what), "%s flags %x fold", name, flags);
	fold_compare(&fx->fref, &fx->ffast, what);
	/* What coverage --lcov counts, the decoder tallying the folded
	 * blocks, is what the general path's blocks count. */
	assert_false(fx->cref.full || fx->cfast.full);
	if (!fold_count_same(&fx->cref, &fx->cfast, fx->image)) {
		fprintf(stderr, "%s: the tally differs\n", what);
		fail();
	}
	tally_told += fx->cfast.told;
}

static void qcfg(struct hwt_qry_config *qc, unsigned k)
{
	hwt_qry_config_init(qc);
	if (k & 1) {
		/* MTC and CYC make time. */
		qc->time.cpuid_0x15_eax = 2;
		qc->time.cpuid_0x15_ebx = 200;
		qc->time.mtc_freq = 3;
		qc->time.nom_freq = 20;
	}
}

static const uint32_t flagsets[] = {
	0, HWT_BLK_END_ON_CALL | HWT_BLK_END_ON_JUMP, HWT_BLK_END_ON_JUMP,
	HWT_BLK_ENABLE_TICK
};

/* Clean traces, then noisy ones, then flipped bits. */
static void run_seeds(unsigned first, unsigned n, unsigned noise_every,
		      unsigned flips)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	assert_non_null(fx);
	for (unsigned seed = first; seed < first + n; seed++) {
		struct rng r = { seed * 0x1234567ull + 1 };
		struct hwt_qry_config qc;
		char name[64];

		build(&fx->prog, &r);
		fx->image = prog_image(&fx->prog);
		fx->trace.r = &r;
		run_prog(&fx->prog, &fx->trace,
			 8192 + rndn(&r, TRACE_MAX - 8192 - 1024),
			 noise_every);
		for (unsigned i = 0; i < flips && fx->trace.tb.len; i++)
			fx->trace.buf[rndn(&r, (unsigned) fx->trace.tb.len)] ^=
				(uint8_t) (1u << rndn(&r, 8));
		qcfg(&qc, seed);
		snprintf(name, sizeof(name), "seed %u", seed);
		check_trace(fx, flagsets[seed % 4], &qc, name);
		hwt_image_delete(fx->image);
	}
	free(fx->ref.r);
	free(fx->fast.r);
	free(fx->until.b);
	free(fx);
}

static void test_clean(void **state)
{
	(void) state;
	tally_told = 0;
	run_seeds(1, 8, 0, 0);
	/* (The tally did count: most of a clean trace's blocks.) */
	fprintf(stderr, "tally: %llu runs and outcomes told\n",
		(unsigned long long) tally_told);
	assert_true(tally_told > 10000);
}

static void test_noise(void **state)
{
	(void) state;
	run_seeds(100, 48, 40, 0);
	run_seeds(300, 16, 8, 0);
}

static void test_flips(void **state)
{
	(void) state;
	run_seeds(200, 48, 200, 8);
}

/* hwt_blk_next_batch_until() does make batches: on clean traces (time at
 * the PSBs only; marks a few packets on) most blocks come more than one a
 * call, and without marks several blocks a call. */
static void test_until_batches(void **state)
{
	(void) state;
	until_more = until_blocks = nomark_blocks = nomark_batches = 0;
	run_seeds(1, 8, 0, 0);
	fprintf(stderr, "until: %zu of %zu blocks in batches of more than "
		"one; without marks %zu blocks in %zu batches\n", until_more,
		until_blocks, nomark_blocks, nomark_batches);
	assert_true(until_more * 4 > until_blocks * 3);
	/* (A batch that ended after every step left to run_step(), also
	 * those in direct mode, such as a call's pushes and an indirect
	 * call's TIP, held 3.5 blocks on average here; 9.5 now.) */
	assert_true(nomark_blocks > 6 * nomark_batches);
}

/* The fast path does run: a clean trace is mostly folded by it. */
static void fast_path_runs(struct hwt_blk_decoder *d)
{
	struct hwt_blk_fold fold;
	struct hwt_block b;
	uint64_t fast = 0;
	int status;

	hwt_blk_fold_init(&fold, NULL);
	status = hwt_blk_sync_forward(d);
	while (status >= 0 && !(status & HWT_STS_EOS)) {
		uint64_t before;

		while (status >= 0 && (status & HWT_STS_EVENT_PENDING)) {
			struct hwt_event ev;

			status = hwt_blk_event(d, &ev);
		}
		if (status < 0 || (status & HWT_STS_EOS))
			break;
		before = fold.ninsn;
		status = hwt_blk_fold_next(d, &fold, &b);
		fast += fold.ninsn - before;
		if (status)
			continue;
		status = hwt_blk_next(d, &b);
		hwt_blk_fold_block(d, &fold, &b, NULL);
	}
	assert_true(fold.ninsn > 10000);
	assert_true(fast * 10 > fold.ninsn * 9);
}

static void test_fast_path_runs(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	struct rng r = { 42 };
	struct hwt_qry_config qc;
	struct hwt_blk_decoder *d;

	(void) state;
	assert_non_null(fx);
	build(&fx->prog, &r);
	fx->image = prog_image(&fx->prog);
	fx->trace.r = &r;
	run_prog(&fx->prog, &fx->trace, TRACE_MAX - 1024, 0);
	qcfg(&qc, 0);

	d = new_dec(fx->image, &fx->trace, 0, &qc);
	fast_path_runs(d);
	/* And after hwt_blk_set_trace(). */
	assert_int_equal(hwt_blk_set_trace(d, fx->trace.tb.buf,
					   fx->trace.tb.buf +
					   fx->trace.tb.len), 0);
	fast_path_runs(d);
	hwt_blk_delete(d);
	hwt_image_delete(fx->image);
	free(fx);
}

/* @d on @fx's trace again (hwt_blk_set_trace()) folds it as a new one. */
static void refold(struct fixture *fx, struct hwt_blk_decoder *d, int fast,
		   const char *what)
{
	assert_int_equal(hwt_blk_set_trace(d, fx->trace.tb.buf,
					   fx->trace.tb.buf +
					   fx->trace.tb.len), 0);
	fold_dec(d, fast, &fx->ffast);
	fold_compare(&fx->fref, &fx->ffast, what);
}

/*
 * hwt_blk_set_trace(): a decoder that decoded one trace of a program (its
 * cache warm, its state anywhere) and then another folds the other as a
 * new decoder does; noisy and damaged traces too, the same trace twice,
 * and bad arguments change nothing.
 */
static void test_set_trace(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	struct trace *other = calloc(1, sizeof(*other));
	struct fold_out *o = calloc(1, sizeof(*o));
	uint64_t warm = 0;

	(void) state;
	assert_non_null(fx);
	assert_non_null(other);
	assert_non_null(o);
	for (unsigned seed = 500; seed < 524; seed++) {
		struct rng r = { seed * 0x9e37ull + 7 };
		struct hwt_blk_decoder *d;
		struct hwt_qry_config qc;
		uint32_t flags = flagsets[seed % 4];
		char what[64];

		build(&fx->prog, &r);
		fx->image = prog_image(&fx->prog);
		fx->trace.r = &r;
		other->r = &r;
		run_prog(&fx->prog, other, 4096 + rndn(&r, TRACE_MAX / 2),
			 seed % 3 ? 30 : 0);
		run_prog(&fx->prog, &fx->trace,
			 4096 + rndn(&r, TRACE_MAX - 8192), seed % 2 ? 20 : 0);
		if (seed % 5 == 0)
			for (unsigned i = 0; i < 6; i++)
				fx->trace.buf[rndn(&r, (unsigned)
						   fx->trace.tb.len)] ^=
					(uint8_t) (1u << rndn(&r, 8));
		qcfg(&qc, seed);
		fold_run(fx->image, &fx->trace, flags, &qc, 1, &fx->fref);

		/* The other trace first, stopped anywhere: its state must
		 * not leak into this one's. */
		d = new_dec(fx->image, other, flags, &qc);
		if (seed % 2)
			fold_dec(d, seed % 4 != 1, o);
		else
			for (unsigned i = 0; i < seed % 7 + 1; i++) {
				struct hwt_block b;

				if (hwt_blk_sync_forward(d) >= 0)
					(void) hwt_blk_next(d, &b);
			}
		assert_int_equal(hwt_blk_set_trace(NULL, fx->trace.buf,
						   fx->trace.buf), -HWT_ERR_INVALID);
		assert_int_equal(hwt_blk_set_trace(d, NULL, NULL),
				 -HWT_ERR_INVALID);
		assert_int_equal(hwt_blk_set_trace(d, fx->trace.buf + 1,
						   fx->trace.buf),
				 -HWT_ERR_INVALID);
		snprintf(what, sizeof(what), "seed %u after another", seed);
		refold(fx, d, 1, what);
		warm += fx->fref.ninsn;
		/* And the same trace again, on the general path's blocks. */
		snprintf(what, sizeof(what), "seed %u again", seed);
		refold(fx, d, 0, what);
		hwt_blk_delete(d);
		hwt_image_delete(fx->image);
	}
	/* (The folds did run.) */
	assert_true(warm > 24 * 1000);
	free(o);
	free(other);
	free(fx);
}

/*
 * The memo's counts (graph.c): an entry applied again is counted, and its
 * edges go into the map when the fold returns; an entry whose edges are
 * all at 255 when a fold first applies it is not counted. A loop of six
 * conditional jumps, each over a nop, and a jump back, its bits from a few
 * patterns (one differs from another only at its end), taken a random
 * number of times between PSBs (where a fold returns): edges end below
 * 255 and at it, and one pattern saturates the first edges of another
 * before that one comes. The fast fold's map must be the general path's.
 */
static void test_memo_counts(void **state)
{
	struct trace *t = calloc(1, sizeof(*t));
	struct fold_out *ref = calloc(1, sizeof(*ref)),
			*fast = calloc(1, sizeof(*fast));
	uint8_t code[22];
	unsigned below = 0, full = 0;

	(void) state;
	assert_non_null(t);
	assert_non_null(ref);
	assert_non_null(fast);
	for (unsigned i = 0; i < 6; i++) {
		code[3 * i] = 0x74;		/* jz over the nop */
		code[3 * i + 1] = 0x01;
		code[3 * i + 2] = 0x90;
	}
	code[18] = 0x75;			/* jnz to the top */
	code[19] = 0xec;
	code[20] = 0xff;			/* jmp *%rax */
	code[21] = 0xe0;
	for (unsigned seed = 1; seed <= 16; seed++) {
		struct rng r = { seed * 0x51ed27ull + 3 };
		struct hwt_image *image = hwt_image_new();
		struct hwt_qry_config qc;
		unsigned pat[3];
		char what[64];

		assert_non_null(image);
		assert_int_equal(hwt_image_add_buffer(image, code,
						      sizeof(code), SEC_A), 0);
		memset(t, 0, sizeof(*t));
		t->tb = (struct tb) TB_INIT(t->buf);
		t->r = &r;
		pat[0] = rndn(&r, 64);
		pat[1] = pat[0] ^ (1u << rndn(&r, 2));
		pat[2] = rndn(&r, 64);
		for (unsigned seg = 0; seg < 40; seg++) {
			/* (The pattern that differs at its end: rarely, so
			 * that its own edges stay below 255.) */
			int rare = !rndn(&r, 6);
			unsigned p = rare ? pat[1] : pat[rndn(&r, 2) * 2];
			unsigned n = 1 + rndn(&r, rare ? 20 : 300);

			psb(t, SEC_A);
			for (unsigned k = 0; k < n; k++) {
				unsigned bits = rndn(&r, 16) ? p : rndn(&r, 64);

				for (unsigned j = 6; j-- > 0;)
					tnt(t, (bits >> j) & 1);
				tnt(t, k + 1 < n || seg + 1 < 40);
			}
		}
		ip_none(t, HWT_PT_TIP_PGD);
		hwt_qry_config_init(&qc);
		fold_run(image, t, HWT_BLK_NO_GRAPH, &qc, 0, ref);
		fold_run(image, t, 0, &qc, 1, fast);
		snprintf(what, sizeof(what), "memo seed %u", seed);
		fold_compare(ref, fast, what);
		for (size_t i = 0; i < sizeof(ref->map); i++) {
			below += ref->map[i] && ref->map[i] < 0xff;
			full += ref->map[i] == 0xff;
		}
		hwt_image_delete(image);
	}
	/* (Edges did end below 255, and at it.) */
	assert_true(below > 16 && full > 16);
	free(fast);
	free(ref);
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clean),
		cmocka_unit_test(test_noise),
		cmocka_unit_test(test_flips),
		cmocka_unit_test(test_fast_path_runs),
		cmocka_unit_test(test_set_trace),
		cmocka_unit_test(test_until_batches),
		cmocka_unit_test(test_memo_counts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

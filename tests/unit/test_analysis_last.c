/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The analysis layer's "how did I get here" (hwt_an_last_): the branches
 * and the call stack it keeps of a hand-made trace of a tiny program; a
 * trace decoded in two pieces (what the second piece's decoder must start
 * with); a CPU's trace with two threads taking turns (a stack each). And
 * the blocks' walks it keeps (hwt_an_walks_).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <hwt/analysis.h>
#include <hwt/pt.h>

#include "trace_build.h"

/*
 * 1000: call 1010        (e8 0b 00 00 00)
 * 1005: jmp 1000         (eb f9)
 * 1010: test rax, rax    (48 85 c0; 32-bit: dec eax; test eax, eax)
 * 1013: je 1016          (74 01)
 * 1015: nop
 * 1016: ret
 */
static const uint8_t code[0x17] = {
	0xe8, 0x0b, 0x00, 0x00, 0x00, 0xeb, 0xf9,
	[0x10] = 0x48, 0x85, 0xc0, 0x74, 0x01, 0x90, 0xc3,
};

static struct hwt_image *new_image(void)
{
	struct hwt_image *image = hwt_image_new();

	assert_non_null(image);
	assert_int_equal(hwt_image_add_buffer(image, code, sizeof(code),
					      0x1000), 0);
	return image;
}

static struct tb new_trace(void)
{
	static uint8_t mem[4096];

	return (struct tb) TB_INIT(mem);
}

static struct hwt_an_last *new_last(size_t n)
{
	struct hwt_an_last_config c = { n, 16, 0 };
	struct hwt_an_last *l = hwt_an_last_new(&c);

	assert_non_null(l);
	return l;
}

/* Decode [@from, @to) of @t with @l; @next: the next piece's PSB, in it. */
static void run_piece(struct hwt_an_last *l, struct hwt_image *image,
		      const struct tb *t, size_t from, size_t to, size_t next,
		      int (*sync)(void *, struct hwt_blk_decoder *, uint64_t *),
		      void *ctx)
{
	struct hwt_blk_config cfg;

	hwt_blk_config_init(&cfg);
	cfg.flags |= HWT_BLK_PSB_CLEARS_STACK;
	cfg.qry.begin = t->buf + from;
	cfg.qry.end = t->buf + to;
	assert_int_equal(hwt_an_last_run(l, &cfg, image, next, sync, ctx), 0);
}

/* Decode all of @t with @l, its blocks ending at every branch if @ends
 * (the decoder hwt last's HWT_AN_BRANCH_ENDS asks for), else running on. */
static void run_ends(struct hwt_an_last *l, struct hwt_image *image,
		     const struct tb *t, int ends)
{
	struct hwt_blk_config cfg;

	hwt_blk_config_init(&cfg);
	cfg.flags |= HWT_BLK_PSB_CLEARS_STACK;
	if (ends)
		cfg.flags |= HWT_BLK_END_ON_CALL | HWT_BLK_END_ON_JUMP;
	cfg.qry.begin = t->buf;
	cfg.qry.end = t->buf + t->len;
	assert_int_equal(hwt_an_last_run(l, &cfg, image, 0, NULL, NULL), 0);
}

static void assert_branch(const struct hwt_an_branch *b, uint8_t kind,
			  uint64_t from, uint64_t to)
{
	assert_int_equal(b->kind, kind);
	assert_int_equal(b->from, from);
	assert_int_equal(b->to, to);
}

/* @l's last branches are the @n of @want, kind, source and target. */
static void assert_branches(struct hwt_an_last *l,
			    const struct hwt_an_branch *want, size_t n)
{
	const struct hwt_an_branch *b;

	assert_int_equal(hwt_an_last_branches(l, &b), n);
	for (size_t i = 0; i < n; i++)
		assert_branch(&b[i], want[i].kind, want[i].from, want[i].to);
}

/* Three times through the loop; the third leaves in the function. */
static void test_branches_and_stack(void **state)
{
	struct hwt_image *image = new_image();
	struct hwt_an_last *l = new_last(16);
	const struct hwt_an_branch *b;
	const struct hwt_an_frame *f;
	struct hwt_an_last_end end;
	struct tb t = new_trace();
	size_t n, dropped;

	(void)state;
	tb_psbplus(&t, 0x1000);
	tb_tnt(&t, "tt");	/* je taken, ret (compressed) */
	tb_tnt(&t, "nt");	/* je not taken, ret */
	tb_tnt(&t, "t");	/* je taken */
	tb_ip(&t, HWT_PT_FUP, 0x1016);	/* interrupted at the ret */
	tb_ip(&t, HWT_PT_TIP_PGD, 0);
	run_piece(l, image, &t, 0, t.len, 0, NULL, NULL);

	n = hwt_an_last_branches(l, &b);
	assert_int_equal(n, 10);
	assert_branch(&b[0], HWT_AN_CALL, 0x1000, 0x1010);
	assert_branch(&b[1], HWT_AN_COND, 0x1013, 0x1016);
	assert_branch(&b[2], HWT_AN_RETURN, 0x1016, 0x1005);
	assert_branch(&b[3], HWT_AN_JUMP, 0x1005, 0x1000);
	assert_branch(&b[4], HWT_AN_CALL, 0x1000, 0x1010);
	assert_branch(&b[5], HWT_AN_RETURN, 0x1016, 0x1005);
	assert_branch(&b[6], HWT_AN_JUMP, 0x1005, 0x1000);
	assert_branch(&b[7], HWT_AN_CALL, 0x1000, 0x1010);
	assert_branch(&b[8], HWT_AN_COND, 0x1013, 0x1016);
	assert_branch(&b[9], HWT_AN_SIGNAL, 0x1016, 0);
	/* (Without hwt_an_last_task(): all one thread's, pid and tid 0.) */
	for (size_t i = 0; i < n; i++)
		assert_int_equal(b[i].tid, 0);

	/* In the function, called from 1000. */
	n = hwt_an_last_stack(l, &f, &dropped);
	assert_int_equal(n, 1);
	assert_int_equal(dropped, 0);
	assert_int_equal(f[0].kind, HWT_AN_CALL);
	assert_int_equal(f[0].site, 0x1000);
	assert_int_equal(f[0].entry, 0x1010);
	assert_int_equal(f[0].ret, 0x1005);

	hwt_an_last_end(l, &end);
	assert_int_equal(end.errors, 0);
	assert_int_equal(end.have_ip, 1);
	assert_int_equal(end.ip, 0x1013);
	hwt_an_last_delete(l);
	hwt_image_delete(image);
}

/* PSB, MODE.Exec @exec (none if 0), TSC @tsc (none if 0), FUP 1000, PSBEND. */
static void psbplus(struct tb *t, uint8_t exec, uint64_t tsc)
{
	tb_simple(t, HWT_PT_PSB);
	if (exec)
		tb_mode_exec(t, exec);
	if (tsc)
		tb_tsc(t, tsc);
	tb_ipc(t, HWT_PT_FUP, HWT_PT_IPC_SEXT48, 0x1000);
	tb_simple(t, HWT_PT_PSBEND);
}

/*
 * A long trace comes in pieces cut at PSBs, each decoded by a decoder of
 * its own (perf.data streams, 64 MiB each). The PSB+ at the cut says
 * neither the exec mode nor the time: one decoder goes on in 32-bit code
 * (an instruction more each time through the function: dec eax) with the
 * time it had; so must the second piece's.
 */
static void test_pieces(void **state)
{
	struct hwt_image *image = new_image();
	struct hwt_an_last *whole = new_last(64), *cut = new_last(64),
			   *alone = new_last(64), *lcut = new_last(64),
			   *lalone = new_last(64);
	const struct hwt_an_branch *bw, *bc, *ba, *bl;
	struct hwt_an_last_end ew, ec, ea, el;
	struct hwt_blk_decoder *d;
	struct hwt_blk_config cfg;
	struct tb t = new_trace();
	uint64_t off = 0;
	size_t n, at;

	(void)state;
	psbplus(&t, HWT_PT_EXEC_CSD, 0x100000);
	tb_tnt(&t, "tt");
	tb_tnt(&t, "tt");
	at = t.len;
	psbplus(&t, 0, 0);
	tb_tnt(&t, "tt");
	tb_tnt(&t, "nt");
	tb_ip(&t, HWT_PT_TIP_PGD, 0);

	run_piece(whole, image, &t, 0, t.len, 0, NULL, NULL);
	run_piece(cut, image, &t, 0, t.len, at, NULL, NULL);
	run_piece(cut, image, &t, at, t.len, 0, NULL, NULL);
	hwt_an_last_end(whole, &ew);
	hwt_an_last_end(cut, &ec);
	/* Four times through the function: 5 instructions in 32-bit code
	 * (4 where je is taken: three times), the call and the jmp; then the
	 * call, dec, test and je where tracing stops. */
	assert_int_equal(ew.errors, 0);
	assert_int_equal(ew.insns, 4 * (2 + 5) - 3 + 4);
	assert_int_equal(ec.insns, ew.insns);
	assert_int_equal(ec.errors, 0);
	n = hwt_an_last_branches(whole, &bw);
	assert_int_equal(hwt_an_last_branches(cut, &bc), n);
	assert_true(n > 8);
	for (size_t i = 0; i < n; i++) {
		assert_branch(&bc[i], bw[i].kind, bw[i].from, bw[i].to);
		assert_int_equal(bw[i].have_tsc, 1);
		assert_int_equal(bc[i].have_tsc, 1);
		assert_int_equal(bc[i].tsc, bw[i].tsc);
	}

	/* What there is to carry: the second piece on its own is 64-bit
	 * code (no dec eax) at no known time. */
	run_piece(alone, image, &t, at, t.len, 0, NULL, NULL);
	hwt_an_last_end(alone, &ea);
	assert_int_equal(ea.insns, 2 * (2 + 4) - 1 + 3);
	assert_true(hwt_an_last_branches(alone, &ba) > 0);
	assert_int_equal(ba[0].have_tsc, 0);

	/* A decoder lent (hwt last keeps one for all the streams of a
	 * perf.data): the same, and nothing but its block cache carried
	 * from run to run (the last piece alone after the cut's: 64-bit
	 * code at no known time). */
	hwt_blk_config_init(&cfg);
	cfg.flags |= HWT_BLK_PSB_CLEARS_STACK;
	cfg.qry.begin = t.buf;
	cfg.qry.end = t.buf + t.len;
	d = hwt_blk_new(&cfg, image);
	assert_non_null(d);
	hwt_an_last_lend(lcut, d);
	run_piece(lcut, image, &t, 0, t.len, at, NULL, NULL);
	run_piece(lcut, image, &t, at, t.len, 0, NULL, NULL);
	hwt_an_last_end(lcut, &el);
	assert_int_equal(el.insns, ew.insns);
	assert_int_equal(el.errors, 0);
	assert_int_equal(hwt_an_last_branches(lcut, &bl), n);
	for (size_t i = 0; i < n; i++) {
		assert_branch(&bl[i], bw[i].kind, bw[i].from, bw[i].to);
		assert_int_equal(bl[i].tsc, bw[i].tsc);
	}
	hwt_an_last_lend(lalone, d);
	run_piece(lalone, image, &t, at, t.len, 0, NULL, NULL);
	hwt_an_last_end(lalone, &el);
	assert_int_equal(el.insns, ea.insns);
	assert_true(hwt_an_last_branches(lalone, &bl) > 0);
	assert_int_equal(bl[0].have_tsc, 0);
	/* (Lent, not given: still the caller's, and it decoded these.) */
	assert_ptr_equal(hwt_blk_image(d), image);
	assert_int_equal(hwt_blk_get_offset(d, &off), 0);
	assert_true(off > 0);
	hwt_blk_delete(d);

	/* Walks lent (hwt last keeps one table for all the streams): the
	 * same, and still the caller's once a run that used them is gone
	 * (with ASan, a use after free otherwise); NULL: its own again, the
	 * one it made before (with ASan, a leak otherwise). */
	{
		struct hwt_an_walks *w = hwt_an_walks_new();
		struct hwt_an_last *l1 = new_last(64), *l2 = new_last(64);

		assert_non_null(w);
		hwt_an_last_use_walks(l1, w);
		run_piece(l1, image, &t, 0, t.len, 0, NULL, NULL);
		hwt_an_last_end(l1, &el);
		assert_int_equal(el.insns, ew.insns);
		assert_branches(l1, bw, n);
		hwt_an_last_delete(l1);
		run_piece(l2, image, &t, 0, t.len, at, NULL, NULL);
		hwt_an_last_use_walks(l2, w);
		hwt_an_last_use_walks(l2, NULL);
		run_piece(l2, image, &t, at, t.len, 0, NULL, NULL);
		hwt_an_last_end(l2, &el);
		assert_int_equal(el.insns, ew.insns);
		assert_branches(l2, bw, n);
		hwt_an_last_delete(l2);
		hwt_an_walks_delete(w);
	}

	hwt_an_last_delete(whole);
	hwt_an_last_delete(cut);
	hwt_an_last_delete(alone);
	hwt_an_last_delete(lcut);
	hwt_an_last_delete(lalone);
	hwt_image_delete(image);
}

/*
 * A CPU's trace: thread 11 is interrupted in the function (FUP+TIP.PGD),
 * thread 12 runs (its own call, return and call, interrupted in the
 * function too), thread 11 comes back where it was and returns. Who runs
 * is the sideband's: here, the thread of a TIP.PGE once the decoder has
 * read it (the TIP.PGD before it is the thread's that left).
 */
struct turns {
	size_t b_from, a_from;	/* thread 12 from, thread 11 again from */
	struct hwt_an_last *l;
};

static int turn(void *ctx, struct hwt_blk_decoder *dec, uint64_t *quiet)
{
	struct turns *tu = ctx;
	uint64_t off = 0;

	assert_int_equal(hwt_blk_get_offset(dec, &off), 0);
	assert_int_equal(hwt_an_last_task(tu->l, 10,
					  off > tu->b_from &&
					  off <= tu->a_from ? 12 : 11), 0);
	/* Asked again where the thread changes. */
	*quiet = off <= tu->b_from ? tu->b_from + 1 :
		 off <= tu->a_from ? tu->a_from + 1 : UINT64_MAX;
	return 0;
}

static void test_threads(void **state)
{
	struct hwt_image *image = new_image();
	struct turns tu = { 0, 0, new_last(64) };
	const struct hwt_an_branch *b;
	const struct hwt_an_frame *f;
	struct tb t = new_trace();
	size_t n, calls11 = 0, calls12 = 0;

	(void)state;
	tb_psbplus(&t, 0x1000);
	tb_tnt(&t, "t");		/* 11: call, je taken */
	tb_ip(&t, HWT_PT_FUP, 0x1016);
	tb_ip(&t, HWT_PT_TIP_PGD, 0);
	tu.b_from = t.len;
	tb_ip(&t, HWT_PT_TIP_PGE, 0x1000);
	tb_tnt(&t, "tt");		/* 12: call, je, ret */
	tb_tnt(&t, "n");		/* call again, je not taken */
	tb_ip(&t, HWT_PT_FUP, 0x1016);
	tb_ip(&t, HWT_PT_TIP_PGD, 0);
	tu.a_from = t.len;
	tb_ip(&t, HWT_PT_TIP_PGE, 0x1016);
	tb_tnt(&t, "t");		/* 11: the ret */
	tb_ip(&t, HWT_PT_TIP_PGD, 0);	/* ... at the next call's je */
	run_piece(tu.l, image, &t, 0, t.len, 0, turn, &tu);

	n = hwt_an_last_branches(tu.l, &b);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(b[i].pid, 10);
		if (b[i].kind == HWT_AN_CALL && b[i].tid == 11)
			calls11++;
		if (b[i].kind == HWT_AN_CALL && b[i].tid == 12)
			calls12++;
		/* 11's return goes where its own call came from. */
		if (b[i].kind == HWT_AN_RETURN)
			assert_int_equal(b[i].to, 0x1005);
	}
	assert_int_equal(calls11, 2);
	assert_int_equal(calls12, 2);
	/* 11 left in the function; once 12's branches came, a note of it,
	 * back where it was. 12 too, but the trace ends before it is back. */
	assert_int_equal(n, 13);
	assert_branch(&b[1], HWT_AN_COND, 0x1013, 0x1016);
	assert_branch(&b[2], HWT_AN_INTERRUPT, 0x1016, 0x1016);
	assert_int_equal(b[2].tid, 11);
	assert_branch(&b[8], HWT_AN_SIGNAL, 0x1016, 0);
	assert_int_equal(b[8].tid, 12);
	assert_int_equal(b[9].tid, 11);
	/* 11's stack: the second call only (its return popped the first);
	 * one stack for both would hold 12's call too. */
	n = hwt_an_last_stack(tu.l, &f, NULL);
	assert_int_equal(n, 1);
	assert_int_equal(f[0].site, 0x1000);
	/* 12's: its second call. */
	assert_int_equal(hwt_an_last_task(tu.l, 10, 12), 0);
	n = hwt_an_last_stack(tu.l, &f, NULL);
	assert_int_equal(n, 1);
	hwt_an_last_delete(tu.l);
	hwt_image_delete(image);
}

/*
 * A block is walked once and then replayed from what the walk kept (its
 * direct jumps and calls, its last instruction): keyed by the image and
 * its generation as well as the block. The same block (first IP, length,
 * mode) over other code at the same address, after the image changed,
 * must be walked again: the warm analysis gives what a new one gives.
 */
static void test_code_changes(void **state)
{
	/* 1000: jmp 1003; 1002: nop; 1003: nop; 1004: ret */
	static const uint8_t a[] = { 0xeb, 0x01, 0x90, 0x90, 0xc3 };
	/* 1000: nop; 1001: nop; 1002: ret */
	static const uint8_t b[] = { 0x90, 0x90, 0xc3 };
	struct hwt_image *image = hwt_image_new();
	struct hwt_an_last *warm = new_last(8), *fresh = new_last(8);
	const struct hwt_an_branch *bw, *bf;
	struct tb t = new_trace();
	size_t nw, nf;

	(void)state;
	assert_non_null(image);
	tb_psbplus(&t, 0x1000);
	tb_ip(&t, HWT_PT_TIP, 0x1000);	/* the ret goes back to 1000 */
	tb_ip(&t, HWT_PT_TIP_PGD, 0);	/* and leaves at the next */

	assert_int_equal(hwt_image_add_buffer(image, a, sizeof(a), 0x1000), 0);
	run_piece(warm, image, &t, 0, t.len, 0, NULL, NULL);
	nw = hwt_an_last_branches(warm, &bw);
	assert_int_equal(nw, 4);
	assert_branch(&bw[0], HWT_AN_JUMP, 0x1000, 0x1003);
	assert_branch(&bw[1], HWT_AN_RETURN, 0x1004, 0x1000);
	assert_branch(&bw[2], HWT_AN_JUMP, 0x1000, 0x1003);

	assert_int_equal(hwt_image_remove(image, 0x1000, sizeof(a)), 0);
	assert_int_equal(hwt_image_add_buffer(image, b, sizeof(b), 0x1000), 0);
	run_piece(warm, image, &t, 0, t.len, 0, NULL, NULL);
	run_piece(fresh, image, &t, 0, t.len, 0, NULL, NULL);
	nf = hwt_an_last_branches(fresh, &bf);
	assert_int_equal(nf, 2);
	assert_branch(&bf[0], HWT_AN_RETURN, 0x1002, 0x1000);
	nw = hwt_an_last_branches(warm, &bw);
	assert_true(nw >= nf);
	for (size_t i = 0; i < nf; i++)
		assert_branch(&bw[nw - nf + i], bf[i].kind, bf[i].from,
			      bf[i].to);
	hwt_an_last_delete(warm);
	hwt_an_last_delete(fresh);
	hwt_image_delete(image);
}

/* A negative answer from the sync callback stops the decode, which
 * returns it, with what came before kept. */
static int stop_at_third(void *ctx, struct hwt_blk_decoder *dec,
			 uint64_t *quiet)
{
	unsigned *n = ctx;

	(void)dec;
	(void)quiet;	/* (0: asked before every block) */
	return ++*n == 3 ? -HWT_ERR_INTERNAL : 0;
}

/* The sync tests' trace: two TNTs of two taken branches, disabled. */
static void sync_trace(struct tb *t, struct hwt_blk_config *cfg)
{
	*t = new_trace();
	tb_psbplus(t, 0x1000);
	tb_tnt(t, "tt");
	tb_tnt(t, "tt");
	tb_ip(t, HWT_PT_TIP_PGD, 0);
	hwt_blk_config_init(cfg);
	cfg->qry.begin = t->buf;
	cfg->qry.end = t->buf + t->len;
}

static void test_sync_stops(void **state)
{
	struct hwt_image *image = new_image();
	struct hwt_an_last *l = new_last(16), *whole = new_last(16);
	struct hwt_blk_config cfg;
	struct hwt_an_last_end end, all;
	struct tb t;
	unsigned n = 0;

	(void)state;
	sync_trace(&t, &cfg);
	assert_int_equal(hwt_an_last_run(l, &cfg, image, 0, stop_at_third,
					 &n), -HWT_ERR_INTERNAL);
	assert_int_equal(n, 3);
	assert_int_equal(hwt_an_last_run(whole, &cfg, image, 0, NULL, NULL),
			 0);
	hwt_an_last_end(l, &end);
	hwt_an_last_end(whole, &all);
	assert_true(all.insns > 8);
	assert_true(end.insns < all.insns);
	hwt_an_last_delete(l);
	hwt_an_last_delete(whole);
	hwt_image_delete(image);
}

/* @ctx: the calls so far, then the one to end at (0: none). */
static int end_at(void *ctx, struct hwt_blk_decoder *dec, uint64_t *quiet)
{
	unsigned *n = ctx;

	(void)dec;
	(void)quiet;
	return ++n[0] == n[1] ? 1 : 0;
}

/*
 * @sync returning 1 ends the decode as the trace's end would (hwt last
 * --at): the run returns 1, with fewer instructions than the whole, and
 * its last branch resolved (to where the decoder stood).
 */
static void test_sync_ends(void **state)
{
	struct hwt_image *image = new_image();
	struct hwt_an_last *l = new_last(16), *whole = new_last(16);
	struct hwt_blk_config cfg;
	struct hwt_an_last_end end, all;
	const struct hwt_an_branch *b;
	struct tb t;
	unsigned n[2] = { 0, 0 };
	size_t nb;

	(void)state;
	sync_trace(&t, &cfg);
	/* (The syncs of the whole run: end at its last but one.) */
	assert_int_equal(hwt_an_last_run(whole, &cfg, image, 0, end_at, n),
			 0);
	assert_true(n[0] >= 3);
	n[1] = n[0] - 1;
	n[0] = 0;
	assert_int_equal(hwt_an_last_run(l, &cfg, image, 0, end_at, n), 1);
	assert_int_equal(n[0], n[1]);
	hwt_an_last_end(l, &end);
	hwt_an_last_end(whole, &all);
	assert_true(end.insns > 0);
	assert_true(end.insns < all.insns);
	nb = hwt_an_last_branches(l, &b);
	assert_true(nb > 0);
	assert_true(b[nb - 1].to != 0);
	hwt_an_last_delete(l);
	hwt_an_last_delete(whole);
	hwt_image_delete(image);
}

/*
 * hwt_an_walks_: a block's inner branches and last instruction, the same
 * when replayed; the walk up to an instruction that cannot be read; the
 * same block in another mode, or after the image changed, walked again.
 */
static void test_walks(void **state)
{
	static const uint8_t other[4] = { 0x90, 0x90, 0x90, 0x90 };
	struct hwt_image *image = new_image();
	struct hwt_an_walks *w = hwt_an_walks_new();
	struct hwt_block b;
	struct hwt_an_walk a;

	(void)state;
	assert_non_null(w);
	/* call 1010; test rax, rax; je 1016 */
	memset(&b, 0, sizeof(b));
	b.ip = 0x1000;
	b.end_ip = 0x1013;
	b.ninsn = 3;
	b.mode = HWT_MODE_64;
	for (int k = 0; k < 2; k++) {
		assert_int_equal(hwt_an_walks_get(w, image, &b, &a), 0);
		assert_int_equal(a.ninsn, 3);
		assert_int_equal(a.ninner, 1);
		assert_true(a.inner[0].from == 0x1000 &&
			    a.inner[0].to == 0x1010 &&
			    a.inner[0].next == 0x1005 && a.inner[0].call);
		assert_int_equal(a.last_size, 2);
		assert_int_equal(a.last_iclass, HWT_IC_COND_JUMP);
		assert_true(a.last == 0x1013);
		assert_memory_equal(a.sizes, ((const uint8_t[]){ 5, 3, 2 }),
				    3);
	}
	/* 32-bit: dec eax; test eax, eax; je: another walk. */
	b.mode = HWT_MODE_32;
	b.ip = 0x1010;
	b.ninsn = 3;
	assert_int_equal(hwt_an_walks_get(w, image, &b, &a), 0);
	assert_int_equal(a.ninner, 0);
	assert_int_equal(a.last_iclass, HWT_IC_COND_JUMP);
	assert_memory_equal(a.sizes, ((const uint8_t[]){ 1, 2, 2 }), 3);
	/* 64-bit from 1010, one instruction past the code: test, je, nop,
	 * ret walked, then nothing mapped. */
	b.mode = HWT_MODE_64;
	b.ninsn = 5;
	assert_true(hwt_an_walks_get(w, image, &b, &a) < 0);
	assert_int_equal(a.ninsn, 4);
	assert_true(a.last == 0x1016);
	assert_memory_equal(a.sizes, ((const uint8_t[]){ 3, 2, 1, 1 }), 4);
	/* Other code at 1010 (nops; the image's generation moves): walked
	 * again. */
	b.ninsn = 4;
	b.end_ip = 0x1013;
	assert_int_equal(hwt_an_walks_get(w, image, &b, &a), 0);
	assert_int_equal(a.last_iclass, HWT_IC_RETURN);
	assert_int_equal(hwt_image_add_buffer(image, other, sizeof(other),
					      0x1010), 0);
	assert_int_equal(hwt_an_walks_get(w, image, &b, &a), 0);
	assert_int_equal(a.ninsn, 4);
	assert_int_equal(a.last_iclass, HWT_IC_OTHER);
	assert_int_equal(a.last_size, 1);
	assert_memory_equal(a.sizes, ((const uint8_t[]){ 1, 1, 1, 1 }), 4);
	hwt_an_walks_delete(w);
	hwt_image_delete(image);
}

/*
 * More instruction sizes than the table keeps (4 Mi): it forgets all and
 * starts again, and what it gives stays right. Straight code of nops and
 * 2-byte xchgs (66 90), 1,000 instructions a block from 4,600 places.
 */
static void test_walks_full(void **state)
{
	static uint8_t mix[1 << 16];
	struct hwt_image *image = hwt_image_new();
	struct hwt_an_walks *w = hwt_an_walks_new();
	struct hwt_block b;
	struct hwt_an_walk a;

	(void)state;
	assert_non_null(image);
	assert_non_null(w);
	for (size_t i = 0; i < sizeof(mix); i += 3) {
		mix[i] = 0x90;
		if (i + 2 < sizeof(mix)) {
			mix[i + 1] = 0x66;
			mix[i + 2] = 0x90;
		}
	}
	assert_int_equal(hwt_image_add_buffer(image, mix, sizeof(mix),
					      0x100000), 0);
	memset(&b, 0, sizeof(b));
	b.mode = HWT_MODE_64;
	b.ninsn = 1000;
	for (unsigned round = 0; round < 2; round++)
		for (unsigned k = 0; k < 4600; k++) {
			/* From a nop, or from an xchg. */
			b.ip = 0x100000 + 3 * (k % 3000) + (k / 3000);
			assert_int_equal(hwt_an_walks_get(w, image, &b, &a), 0);
			assert_int_equal(a.ninsn, 1000);
			/* (k >= 3000: from the xchgs, a 2 first.) */
			for (unsigned i = 0; i < 1000; i++)
				assert_int_equal(a.sizes[i],
						 (i + k / 3000) % 2 ? 2 : 1);
		}
	hwt_an_walks_delete(w);
	hwt_image_delete(image);
}

/*
 * HWT_AN_BRANCH_ENDS: from blocks that end at every branch, unwalked,
 * the branches, stack and end of the usual way (blocks that run on over
 * the direct call at 1000 and the jump at 1005, walked). The loop of
 * test_branches_and_stack() many times, leaving at the ret; the ring
 * holds all.
 */
static void test_branch_ends(void **state)
{
	struct hwt_image *image = new_image();
	struct hwt_an_last *l[2];
	const struct hwt_an_branch *b;
	const struct hwt_an_frame *f[2];
	struct hwt_an_last_end e[2];
	struct tb t = new_trace();
	size_t n[2], dropped;

	(void)state;
	tb_psbplus(&t, 0x1000);
	for (int i = 0; i < 40; i++)
		tb_tnt(&t, i % 3 ? "tt" : "nt");
	tb_ip(&t, HWT_PT_FUP, 0x1016);
	tb_ip(&t, HWT_PT_TIP_PGD, 0);
	for (int k = 0; k < 2; k++) {
		struct hwt_an_last_config c = { 256, 16, 0 };

		c.flags = k ? HWT_AN_BRANCH_ENDS : 0;
		l[k] = hwt_an_last_new(&c);
		assert_non_null(l[k]);
		run_ends(l[k], image, &t, k);
		n[k] = hwt_an_last_stack(l[k], &f[k], &dropped);
		hwt_an_last_end(l[k], &e[k]);
	}
	/* 40 times a call, a return and a jump, 26 taken conds, and what
	 * follows the last. */
	n[0] = hwt_an_last_branches(l[0], &b);
	assert_true(n[0] >= 40 * 3 + 26);
	assert_branches(l[1], b, n[0]);
	assert_int_equal(n[1], 1);
	assert_int_equal(f[1][0].site, f[0][0].site);
	assert_int_equal(f[1][0].ret, f[0][0].ret);
	assert_int_equal(e[1].insns, e[0].insns);
	assert_int_equal(e[1].ip, e[0].ip);
	for (int k = 0; k < 2; k++)
		hwt_an_last_delete(l[k]);
	hwt_image_delete(image);
}

/*
 * Where the trace stops short of the fault (hwt_an_last_stop()), the path
 * that needs no trace is walked in the mode the last block ran in: in
 * 32-bit code, from the jmp at 1005 through the call to 1011 (dec eax is
 * one byte; as 64-bit code, test rax, rax runs on to the je). Both ways:
 * blocks that end at every branch (take_ends(), which sets the mode once
 * a batch) and the walks.
 */
static void test_tail_mode(void **state)
{
	struct hwt_image *image = new_image();
	struct tb t = new_trace();

	(void)state;
	psbplus(&t, HWT_PT_EXEC_CSD, 0);
	for (int i = 0; i < 8; i++)
		tb_tnt(&t, "tt");
	/* Out before the jmp, as a signal would take it. */
	tb_ip(&t, HWT_PT_FUP, 0x1005);
	tb_ip(&t, HWT_PT_TIP_PGD, 0);
	for (int k = 0; k < 2; k++) {
		struct hwt_an_last_config c = { 16, 16, 0 };
		struct hwt_an_last *l;
		struct hwt_an_last_end e;
		const struct hwt_an_branch *b;
		const struct hwt_an_frame *f;
		size_t n, dropped;

		c.flags = k ? HWT_AN_BRANCH_ENDS : 0;
		l = hwt_an_last_new(&c);
		assert_non_null(l);
		hwt_an_last_stop(l, 0x1011);
		run_ends(l, image, &t, k);
		hwt_an_last_end(l, &e);
		assert_int_equal(e.have_ip, 1);
		assert_int_equal(e.ip, 0x1011);
		n = hwt_an_last_branches(l, &b);
		assert_true(n >= 2);
		assert_branch(&b[n - 2], HWT_AN_JUMP, 0x1005, 0x1000);
		assert_branch(&b[n - 1], HWT_AN_CALL, 0x1000, 0x1010);
		assert_int_equal(hwt_an_last_stack(l, &f, &dropped), 1);
		assert_int_equal(f[0].ret, 0x1005);
		hwt_an_last_delete(l);
	}
	hwt_image_delete(image);
}

/* A frame returning to @ret (its call at @ret - 5). */
static struct hwt_an_frame fr(uint64_t ret)
{
	return (struct hwt_an_frame){ ret - 5, ret + 0x100, ret,
				      HWT_AN_CALL };
}

/*
 * A thread's call stack from its runs on several CPUs
 * (hwt_an_slices_stack()): each run's returns below its own frames go
 * back through the frames the runs before left (to the innermost that
 * returns there; none: nothing), then its frames go on top; the
 * innermost max come out, the rest counted.
 */
static void test_slices_stack(void **state)
{
	struct hwt_an_frame a[] = { fr(0x1000), fr(0x2000), fr(0x3000) };
	struct hwt_an_frame b_pops[] = { fr(0x3000), fr(0x9999) };
	struct hwt_an_frame b[] = { fr(0x4000) };
	struct hwt_an_frame c_pops[] = { fr(0x1000) };
	struct hwt_an_frame c[] = { fr(0x5000), fr(0x6000) };
	struct hwt_an_slice sa = { 1, 1, 10, 1, NULL, 0, a, 3, 0 };
	struct hwt_an_slice sb = { 1, 1, 20, 1, b_pops, 2, b, 1, 0 };
	struct hwt_an_slice sc = { 1, 1, 30, 1, c_pops, 1, c, 2, 4 };
	const struct hwt_an_slice *runs[] = { &sa, &sb, &sc };
	struct hwt_an_frame out[8];
	size_t dropped = 99, n;

	(void)state;
	/* a's frames, innermost first. */
	n = hwt_an_slices_stack(runs, 1, out, 8, &dropped);
	assert_int_equal(n, 3);
	assert_int_equal(out[0].ret, 0x3000);
	assert_int_equal(out[2].ret, 0x1000);
	assert_int_equal(dropped, 0);
	/* b returned from a's innermost (0x9999: to nothing), called one. */
	n = hwt_an_slices_stack(runs, 2, out, 8, &dropped);
	assert_int_equal(n, 3);
	assert_int_equal(out[0].ret, 0x4000);
	assert_int_equal(out[1].ret, 0x2000);
	assert_int_equal(out[2].ret, 0x1000);
	assert_int_equal(out[0].site, 0x4000 - 5);
	/* c returned to below all (0x1000 is the outermost's: all gone),
	 * and pushed more than it kept: 4 dropped below its 2. */
	n = hwt_an_slices_stack(runs, 3, out, 8, &dropped);
	assert_int_equal(n, 2);
	assert_int_equal(out[0].ret, 0x6000);
	assert_int_equal(out[1].ret, 0x5000);
	assert_int_equal(dropped, 4);
	/* At most 2 of b's 3. */
	n = hwt_an_slices_stack(runs, 2, out, 2, &dropped);
	assert_int_equal(n, 2);
	assert_int_equal(out[1].ret, 0x2000);
	assert_int_equal(dropped, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_branches_and_stack),
		cmocka_unit_test(test_slices_stack),
		cmocka_unit_test(test_pieces),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_code_changes),
		cmocka_unit_test(test_sync_stops),
		cmocka_unit_test(test_tail_mode),
		cmocka_unit_test(test_sync_ends),
		cmocka_unit_test(test_walks),
		cmocka_unit_test(test_walks_full),
		cmocka_unit_test(test_branch_ends),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

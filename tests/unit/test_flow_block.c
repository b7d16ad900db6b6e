/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Block decoder tests: tiny x86-64 programs as raw bytes in a buffer image
 * and the PT our encoder writes for them. Each run is rendered as text (one
 * line per instruction, "[...]" per event, ptxed-like) and compared.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <hwt/flow.h>
#include <hwt/pt.h>

#include "flow/block_int.h"
#include "trace_build.h"

/* An empty trace; a test builds one at a time. */
static struct tb new_trace(void)
{
	static uint8_t mem[8192];

	return (struct tb) TB_INIT(mem);
}

/* ------------------------------------------------------------------ */
/* Running the decoder into text                                       */
/* ------------------------------------------------------------------ */

struct out {
	char text[1 << 16];
	size_t len;
	uint64_t ninsn, nblocks;
};

static void emit(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(o->text + o->len, sizeof(o->text) - o->len, fmt, ap);
	va_end(ap);
	if (n > 0 && (size_t) n < sizeof(o->text) - o->len)
		o->len += (size_t) n;
}

static void emit_event(struct out *o, const struct hwt_event *ev)
{
	if (ev->status_update)
		return;

	switch (ev->type) {
	case HWT_EV_ENABLED:
		emit(o, "[enabled%s]\n", ev->u.enabled.resumed ? " resumed" : "");
		break;
	case HWT_EV_DISABLED:
		emit(o, "[disabled]\n");
		break;
	case HWT_EV_ASYNC_DISABLED:
		emit(o, "[disabled at %llx]\n",
		     (unsigned long long) ev->u.async_disabled.at);
		break;
	case HWT_EV_ASYNC_BRANCH:
		emit(o, "[interrupt %llx -> %llx]\n",
		     (unsigned long long) ev->u.async_branch.from,
		     (unsigned long long) ev->u.async_branch.to);
		break;
	case HWT_EV_OVERFLOW:
		emit(o, "[overflow %llx]\n",
		     (unsigned long long) ev->u.overflow.ip);
		break;
	case HWT_EV_PAGING:
		emit(o, "[paging %llx]\n", (unsigned long long) ev->u.paging.cr3);
		break;
	default:
		emit(o, "[event %u]\n", ev->type);
		break;
	}
}

static int drain(struct hwt_blk_decoder *d, struct out *o, int status)
{
	while (status >= 0 && (status & HWT_STS_EVENT_PENDING)) {
		struct hwt_event ev;

		status = hwt_blk_event(d, &ev);
		if (status >= 0)
			emit_event(o, &ev);
	}
	return status;
}

static void emit_block(const struct hwt_image *image, struct out *o,
		       const struct hwt_block *b, int show_blocks)
{
	uint64_t ip = b->ip;
	uint32_t i;

	if (show_blocks)
		emit(o, "[block]\n");
	for (i = 0; i < b->ninsn; ++i) {
		struct hwt_insn insn;

		assert_int_equal(hwt_blk_insn_walk(image, b->mode, &ip, &insn),
				 0);
		emit(o, "%llx\n", (unsigned long long) insn.ip);
		/* (A cached block's class is its last instruction's too,
		 * not libipt's "indirect".) */
		if (i + 1 == b->ninsn) {
			assert_true(insn.ip == b->end_ip);
			assert_int_equal(b->iclass, insn.iclass);
		}
	}
	o->ninsn += b->ninsn;
	o->nblocks += 1;
}

/* A decoder of @t (@flags) from @image. */
static struct hwt_blk_decoder *decoder_on(const struct tb *t, uint32_t flags,
					  struct hwt_image *image)
{
	struct hwt_blk_config cfg;
	struct hwt_blk_decoder *d;

	hwt_blk_config_init(&cfg);
	cfg.qry.begin = t->buf;
	cfg.qry.end = t->buf + t->len;
	cfg.flags = flags;
	d = hwt_blk_new(&cfg, image);
	assert_non_null(d);
	return d;
}

/* Decode the whole trace, as ptxed does (resync after errors). */
static void run(struct hwt_image *image, const struct tb *t,
		uint32_t flags, struct out *o, int show_blocks)
{
	struct hwt_blk_decoder *d;

	memset(o, 0, sizeof(*o));
	d = decoder_on(t, flags, image);

	for (;;) {
		int status = hwt_blk_sync_forward(d);

		if (status == -HWT_ERR_EOS)
			break;
		assert_true(status >= 0);

		for (;;) {
			struct hwt_block b;

			status = drain(d, o, status);
			if (status < 0)
				break;
			if (status & HWT_STS_EOS) {
				if (!(status & HWT_STS_IP_SUPPRESSED))
					emit(o, "[end of trace]\n");
				status = -HWT_ERR_EOS;
				break;
			}

			status = hwt_blk_next(d, &b);
			if (b.ninsn)
				emit_block(image, o, &b, show_blocks);
			if (status < 0)
				break;
		}
		if (status == -HWT_ERR_EOS)
			break;

		{
			uint64_t ip = 0;

			hwt_blk_get_ip(d, &ip);
			emit(o, "[error %s at %llx]\n", hwt_errstr(status),
			     (unsigned long long) ip);
		}
	}
	hwt_blk_delete(d);
}

static void check(struct hwt_image *image, const struct tb *t,
		  const char *expected)
{
	static struct out cached, cold;

	run(image, t, 0, &cached, 0);
	if (strcmp(cached.text, expected))
		fprintf(stderr, "got:\n%s\nexpected:\n%s\n", cached.text,
			expected);
	assert_string_equal(cached.text, expected);

	run(image, t, HWT_BLK_NO_CACHE, &cold, 0);
	assert_string_equal(cold.text, expected);
}

static struct hwt_image *image1(uint64_t va, const uint8_t *code, size_t n)
{
	struct hwt_image *image = hwt_image_new();

	assert_non_null(image);
	assert_int_equal(hwt_image_add_buffer(image, code, n, va), 0);
	return image;
}

/* ------------------------------------------------------------------ */
/* Tests                                                               */
/* ------------------------------------------------------------------ */

/* nop; je +2; nop; nop; nop; jmp rax */
static const uint8_t code_cond[] = {
	0x90, 0x74, 0x02, 0x90, 0x90, 0x90, 0xff, 0xe0
};

static void test_cond_taken(void **state)
{
	struct hwt_image *image = image1(0x1000, code_cond, sizeof(code_cond));
	struct tb t = new_trace();

	(void) state;
	tb_psbplus(&t, 0x1000);
	tb_tnt(&t, "t");
	tb_ip(&t, HWT_PT_TIP_PGD, 0x3000);
	check(image, &t, "1000\n1001\n1005\n1006\n[disabled]\n");
	hwt_image_delete(image);
}

static void test_cond_not_taken(void **state)
{
	struct hwt_image *image = image1(0x1000, code_cond, sizeof(code_cond));
	struct tb t = new_trace();

	(void) state;
	tb_psbplus(&t, 0x1000);
	tb_tnt(&t, "n");
	tb_ip(&t, HWT_PT_TIP_PGD, 0);
	check(image, &t, "1000\n1001\n1003\n1004\n1005\n1006\n[disabled]\n");
	hwt_image_delete(image);
}

/* 1000: call 1010; 1005: nop; jmp rax; 1010: nop; ret */
static uint8_t code_call[0x20] = {
	0xe8, 0x0b, 0x00, 0x00, 0x00, 0x90, 0xff, 0xe0,
	[0x10] = 0x90, [0x11] = 0xc3
};

static void test_call_ret_compressed(void **state)
{
	struct hwt_image *image = image1(0x1000, code_call, sizeof(code_call));
	struct tb t = new_trace();
	static struct out o;

	(void) state;
	tb_psbplus(&t, 0x1000);
	tb_tnt(&t, "t");
	tb_ip(&t, HWT_PT_TIP_PGD, 0x3000);
	check(image, &t, "1000\n1010\n1011\n1005\n1006\n[disabled]\n");

	/* As libipt's: decoding code for the first time, a direct call
	 * ends the block (see test_block_boundaries). */
	run(image, &t, 0, &o, 1);
	assert_string_equal(o.text, "[block]\n1000\n[block]\n1010\n1011\n"
			    "[block]\n1005\n1006\n[disabled]\n");
	run(image, &t, HWT_BLK_END_ON_CALL, &o, 1);
	assert_string_equal(o.text, "[block]\n1000\n[block]\n1010\n1011\n"
			    "[block]\n1005\n1006\n[disabled]\n");
	hwt_image_delete(image);
}

static void test_call_ret_uncompressed(void **state)
{
	struct hwt_image *image = image1(0x1000, code_call, sizeof(code_call));
	struct tb t = new_trace();

	(void) state;
	tb_psbplus(&t, 0x1000);
	tb_ip(&t, HWT_PT_TIP, 0x1005);
	tb_ip(&t, HWT_PT_TIP_PGD, 0x3000);
	check(image, &t, "1000\n1010\n1011\n1005\n1006\n[disabled]\n");
	hwt_image_delete(image);
}

/* A compressed return with nothing on the call stack is an error. */
static void test_ret_compressed_empty_stack(void **state)
{
	struct hwt_image *image = image1(0x1000, code_call, sizeof(code_call));
	struct tb t = new_trace();

	(void) state;
	tb_psbplus(&t, 0x1010);
	tb_tnt(&t, "t");
	check(image, &t, "1010\n1011\n[error trace does not match the code "
	      "at 1011]\n");
	hwt_image_delete(image);
}

/* 1000: call rax; 1002: nop; jmp rax; 1010: nop; ret */
static uint8_t code_icall[0x20] = {
	0xff, 0xd0, 0x90, 0xff, 0xe0, [0x10] = 0x90, [0x11] = 0xc3
};

static void test_indirect_call_ret(void **state)
{
	struct hwt_image *image = image1(0x1000, code_icall,
					 sizeof(code_icall));
	struct tb t = new_trace();

	(void) state;
	tb_psbplus(&t, 0x1000);
	tb_ip(&t, HWT_PT_TIP, 0x1010);
	tb_tnt(&t, "t");
	tb_ip(&t, HWT_PT_TIP_PGD, 0x3000);
	check(image, &t, "1000\n1010\n1011\n1002\n1003\n[disabled]\n");

	t.len = 0;
	tb_psbplus(&t, 0x1000);
	tb_ip(&t, HWT_PT_TIP, 0x1010);
	tb_ip(&t, HWT_PT_TIP, 0x1002);
	tb_ip(&t, HWT_PT_TIP_PGD, 0);
	check(image, &t, "1000\n1010\n1011\n1002\n1003\n[disabled]\n");
	hwt_image_delete(image);
}

/* 1000: nop; jmp rax ... 2000: nop; nop; jmp rax */
static uint8_t code_two[0x1010] = {
	0x90, 0xff, 0xe0, [0x1000] = 0x90, [0x1001] = 0x90,
	[0x1002] = 0xff, [0x1003] = 0xe0
};

static void test_pgd_pge(void **state)
{
	struct hwt_image *image = image1(0x1000, code_two, sizeof(code_two));
	struct tb t = new_trace();

	(void) state;
	tb_psbplus(&t, 0x1000);
	tb_ip(&t, HWT_PT_TIP_PGD, 0x5000);
	tb_ip(&t, HWT_PT_TIP_PGE, 0x2000);
	tb_ip(&t, HWT_PT_TIP_PGD, 0);
	check(image, &t, "1000\n1001\n[disabled]\n[enabled]\n"
	      "2000\n2001\n2002\n[disabled]\n");
	hwt_image_delete(image);
}

/* 1000: nop x3; jmp rax. FUP 1002 + TIP 2000: an interrupt at 1002. */
static uint8_t code_irq[0x1010] = {
	0x90, 0x90, 0x90, 0xff, 0xe0, [0x1000] = 0x90, [0x1001] = 0x90,
	[0x1002] = 0xff, [0x1003] = 0xe0
};

static void test_fup_tip_interrupt(void **state)
{
	struct hwt_image *image = image1(0x1000, code_irq, sizeof(code_irq));
	struct tb t = new_trace();

	(void) state;
	tb_psbplus(&t, 0x1000);
	tb_ip(&t, HWT_PT_FUP, 0x1002);
	tb_ip(&t, HWT_PT_TIP, 0x2000);
	tb_ip(&t, HWT_PT_TIP_PGD, 0);
	check(image, &t, "1000\n1001\n[interrupt 1002 -> 2000]\n"
	      "2000\n2001\n2002\n[disabled]\n");

	/* FUP + TIP.PGD: asynchronous disable at 1002. */
	t.len = 0;
	tb_psbplus(&t, 0x1000);
	tb_ip(&t, HWT_PT_FUP, 0x1002);
	tb_ip(&t, HWT_PT_TIP_PGD, 0);
	check(image, &t, "1000\n1001\n[disabled at 1002]\n");
	hwt_image_delete(image);
}

static void test_overflow(void **state)
{
	struct hwt_image *image = image1(0x1000, code_cond, sizeof(code_cond));
	struct tb t = new_trace();

	(void) state;
	tb_psbplus(&t, 0x1000);
	tb_tnt(&t, "n");
	tb_simple(&t, HWT_PT_OVF);
	tb_ip(&t, HWT_PT_FUP, 0x1005);
	tb_ip(&t, HWT_PT_TIP_PGD, 0);
	check(image, &t, "1000\n1001\n[overflow 1005]\n1005\n1006\n"
	      "[disabled]\n");
	hwt_image_delete(image);
}

/* 1000: nop; mov cr3, rax; nop; jmp rax */
static const uint8_t code_cr3[] = {
	0x90, 0x0f, 0x22, 0xd8, 0x90, 0xff, 0xe0
};

static void test_paging_binds_to_mov_cr3(void **state)
{
	struct hwt_image *image = image1(0x1000, code_cr3, sizeof(code_cr3));
	struct tb t = new_trace();

	(void) state;
	tb_psbplus(&t, 0x1000);
	tb_pip(&t, 0xabc000, 0);
	tb_ip(&t, HWT_PT_TIP_PGD, 0x3000);
	check(image, &t, "1000\n1001\n[paging abc000]\n1004\n1005\n"
	      "[disabled]\n");

	/* Without an IP, the disable binds to the MOV CR3 as well. */
	t.len = 0;
	tb_psbplus(&t, 0x1000);
	tb_pip(&t, 0xabc000, 0);
	tb_ip(&t, HWT_PT_TIP_PGD, 0);
	check(image, &t, "1000\n1001\n[paging abc000]\n[disabled]\n");
	hwt_image_delete(image);
}

/* As libipt's pip-pip_mov_cr3-fail: the second PIP finds no MOV CR3
 * before the code ends. */
static void test_pip_pip_mov_cr3_fail(void **state)
{
	static const uint8_t code[] = { 0x0f, 0x22, 0xd8, 0xf4 };
	struct hwt_image *image = image1(0x100000, code, sizeof(code));
	struct tb t = new_trace();

	(void) state;
	tb_psbplus(&t, 0x100000);
	tb_pip(&t, 0xa000, 0);
	tb_pip(&t, 0xb000, 0);
	check(image, &t, "100000\n[paging a000]\n100003\n[error no memory "
	      "mapped at this address at 100004]\n");
	hwt_image_delete(image);
}

/* Running off the mapped code: NOMAP with the IP; resync at the next PSB
 * continues. */
static void test_nomap_resync(void **state)
{
	static const uint8_t nops[] = { 0x90, 0x90 };
	struct hwt_image *image = hwt_image_new();
	struct tb t = new_trace();

	(void) state;
	assert_int_equal(hwt_image_add_buffer(image, nops, 2, 0x1000), 0);
	assert_int_equal(hwt_image_add_buffer(image, code_two + 0x1000, 4,
					      0x2000), 0);
	/* Two TNTs: the query layer's read-ahead stops before the second
	 * PSB, so the resync finds it (as libipt 2.1.2's, checked). */
	tb_psbplus(&t, 0x1000);
	tb_tnt(&t, "t");
	tb_tnt(&t, "t");
	tb_psbplus(&t, 0x2000);
	tb_ip(&t, HWT_PT_TIP_PGD, 0);
	check(image, &t, "1000\n1001\n[error no memory mapped at this address "
	      "at 1002]\n2000\n2001\n2002\n[disabled]\n");
	hwt_image_delete(image);
}

/*
 * 1000: add rax, 1; cmp rax, 3; jb 1000; call 1020; jmp 1000
 * 1020: nop; ret
 */
static uint8_t code_loop[0x30] = {
	0x48, 0x83, 0xc0, 0x01, 0x48, 0x83, 0xf8, 0x03, 0x72, 0xf6,
	0xe8, 0x11, 0x00, 0x00, 0x00, 0xeb, 0xef,
	[0x20] = 0x90, [0x21] = 0xc3
};

/*
 * Block boundaries as libipt's, which depend on its block cache: code seen
 * for the first time ends a block after a direct call and a backward
 * jump; the second time through it does not. (Checked against libipt
 * 2.1.2 on the same program and trace.)
 */
static void test_block_boundaries(void **state)
{
	struct hwt_image *image = image1(0x1000, code_loop, sizeof(code_loop));
	struct tb t = new_trace();
	static struct out o;

	(void) state;
	tb_psbplus(&t, 0x1000);
	tb_tnt(&t, "ntnt");
	tb_ip(&t, HWT_PT_TIP_PGD, 0);
	run(image, &t, 0, &o, 1);
	assert_string_equal(o.text,
			    "[block]\n1000\n1004\n1008\n"
			    "[block]\n100a\n"
			    "[block]\n1020\n1021\n"
			    "[block]\n100f\n"
			    "[block]\n1000\n1004\n1008\n"
			    "[block]\n100a\n1020\n1021\n"
			    "[block]\n100f\n1000\n1004\n1008\n"
			    "[disabled]\n");
	hwt_image_delete(image);
}

static void test_cache_equals_cold(void **state)
{
	struct hwt_image *image = image1(0x1000, code_loop, sizeof(code_loop));
	static struct out a, b;
	struct tb t = new_trace();
	char bits[64];
	unsigned seed = 12345, i, n = 0;
	uint32_t flags[] = { 0, HWT_BLK_END_ON_CALL, HWT_BLK_END_ON_JUMP,
			     HWT_BLK_END_ON_CALL | HWT_BLK_END_ON_JUMP };

	(void) state;
	tb_psbplus(&t, 0x1000);
	/* Loop bits; after each exit the compressed return's bit. */
	for (i = 0; i < 600; ++i) {
		seed = seed * 1103515245u + 12345u;
		bits[n++] = (seed >> 16) & 3 ? 't' : 'n';
		if (bits[n - 1] == 'n')
			bits[n++] = 't';
		if (n >= 40) {
			bits[n] = 0;
			tb_tnt(&t, bits);
			n = 0;
		}
	}
	if (n) {
		bits[n] = 0;
		tb_tnt(&t, bits);
	}
	tb_ip(&t, HWT_PT_TIP_PGD, 0);

	/* The same flow; block boundaries may differ: the cold decoder does
	 * not mimic libipt's cache-dependent ones. */
	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); ++i) {
		run(image, &t, flags[i], &a, 0);
		run(image, &t, flags[i] | HWT_BLK_NO_CACHE, &b, 0);
		assert_true(a.ninsn > 600);
		assert_int_equal(a.ninsn, b.ninsn);
		assert_string_equal(a.text, b.text);
		assert_non_null(strstr(a.text, "[disabled]\n"));
	}
	hwt_image_delete(image);
}

/*
 * The same code in two exec modes: code_loop's first bytes are other
 * instructions in 32-bit mode (48 is dec eax there, not a REX prefix).
 * After a return into compat mode (MODE.Exec bound to its TIP), the
 * cached decoder must not replay what it decoded in 64-bit mode, nor
 * the 64-bit walk what it decoded in 32-bit mode when it comes back.
 */
static void test_cache_exec_mode(void **state)
{
	struct hwt_image *image = image1(0x1000, code_loop, sizeof(code_loop));
	struct tb t = new_trace();

	(void) state;
	tb_psbplus(&t, 0x1000);
	/* 64-bit, then 32-bit, 64-bit, 32-bit, 64-bit. */
	for (unsigned pass = 0; pass < 4; pass++) {
		tb_tnt(&t, "n");
		tb_mode_exec(&t, pass % 2 ? 0x1 : 0x2);
		tb_ip(&t, HWT_PT_TIP, 0x1000);
	}
	tb_tnt(&t, "n");
	tb_ip(&t, HWT_PT_TIP_PGD, 0);
	check(image, &t,
	      "1000\n1004\n1008\n100a\n1020\n1021\n[event 7]\n"
	      "1000\n1001\n1004\n1005\n1008\n100a\n1020\n1021\n"
	      "[event 7]\n"
	      "1000\n1004\n1008\n100a\n1020\n1021\n[event 7]\n"
	      "1000\n1001\n1004\n1005\n1008\n100a\n1020\n1021\n"
	      "[event 7]\n"
	      "1000\n1004\n1008\n100a\n1020\n1021\n"
	      "[disabled]\n");
	hwt_image_delete(image);
}

/*
 * Decode from the PSB at @from (0: from the first), seeded with @seed
 * unless NULL; a line per instruction ("IP mMODE sSPECULATIVE"), per
 * error. On
 * the first status update at or past @cut, "[cut]" and the decoder's
 * state in *@at_cut.
 */
static void run_state(struct hwt_image *image, const struct tb *t,
		      size_t from, const struct hwt_blk_state *seed,
		      size_t cut, struct hwt_blk_state *at_cut, struct out *o)
{
	struct hwt_blk_config cfg;
	struct hwt_blk_decoder *d;
	int status, got = 0;

	memset(o, 0, sizeof(*o));
	hwt_blk_config_init(&cfg);
	cfg.qry.begin = t->buf;
	cfg.qry.end = t->buf + t->len;
	d = hwt_blk_new(&cfg, image);
	assert_non_null(d);
	if (seed)
		hwt_blk_state_seed(d, seed);
	status = from ? hwt_blk_sync_set(d, from) : hwt_blk_sync_forward(d);
	while (status != -HWT_ERR_EOS) {
		struct hwt_block b;
		struct hwt_event ev;
		uint64_t off;

		while (status >= 0 && (status & HWT_STS_EVENT_PENDING)) {
			status = hwt_blk_event(d, &ev);
			if (status >= 0 && at_cut && !got && ev.status_update &&
			    hwt_blk_get_offset(d, &off) >= 0 && off >= cut) {
				got = 1;
				assert_int_equal(
					hwt_blk_get_state(d, at_cut), 0);
				emit(o, "[cut]\n");
			}
		}
		if (status >= 0 && (status & HWT_STS_EOS))
			break;
		if (status >= 0) {
			uint64_t ip;

			status = hwt_blk_next(d, &b);
			ip = b.ip;
			/* (Instructions: where blocks end depends on what
			 * the decoder's cache holds.) */
			for (uint32_t i = 0; i < b.ninsn; i++) {
				struct hwt_insn insn;

				assert_int_equal(hwt_blk_insn_walk(image,
						 b.mode, &ip, &insn), 0);
				emit(o, "%llx m%u s%u\n",
				     (unsigned long long) insn.ip, b.mode,
				     b.speculative);
			}
		}
		if (status < 0 && status != -HWT_ERR_EOS) {
			emit(o, "[error %s]\n", hwt_errstr(status));
			status = hwt_blk_sync_forward(d);
		}
	}
	assert_true(!at_cut || got);
	hwt_blk_delete(d);
}

/*
 * What one decoder carries over a PSB whose PSB+ does not say it again
 * (struct hwt_blk_state): the exec mode (and the query layer's MODE.Exec,
 * which a later PSB+'s is checked against) and the TSX state. A decoder
 * that starts at that PSB knows none of it; seeded with what one decoder
 * had there, it decodes as that one does.
 */
static void test_state_seed(void **state)
{
	struct hwt_image *image = image1(0x1000, code_loop, sizeof(code_loop));
	struct tb t = new_trace();
	static struct out whole, seeded, fresh;
	struct hwt_blk_state st, none;
	const char *after;
	size_t cut;

	(void) state;
	/* 32-bit code; a transaction begins; the PSB+ at @cut says nothing
	 * of either; a later one says 64-bit. */
	tb_simple(&t, HWT_PT_PSB);
	tb_mode_exec(&t, HWT_PT_EXEC_CSD);
	tb_ipc(&t, HWT_PT_FUP, HWT_PT_IPC_SEXT48, 0x1000);
	tb_simple(&t, HWT_PT_PSBEND);
	tb_tnt(&t, "n");
	tb_ip(&t, HWT_PT_TIP, 0x1000);
	tb_mode_tsx(&t, HWT_PT_TSX_INTX);
	tb_ip(&t, HWT_PT_FUP, 0x1000);
	cut = t.len;
	tb_simple(&t, HWT_PT_PSB);
	tb_ipc(&t, HWT_PT_FUP, HWT_PT_IPC_SEXT48, 0x1000);
	tb_simple(&t, HWT_PT_PSBEND);
	tb_tnt(&t, "n");
	tb_ip(&t, HWT_PT_TIP, 0x1000);
	tb_psbplus(&t, 0x1000);
	tb_tnt(&t, "n");
	tb_ip(&t, HWT_PT_TIP_PGD, 0);

	run_state(image, &t, 0, NULL, cut, &st, &whole);
	assert_int_equal(st.mode, HWT_MODE_32);
	assert_int_equal(st.speculative, 1);
	assert_int_equal(st.exec_valid, 1);
	assert_int_equal(st.exec, HWT_PT_EXEC_CSD);
	after = strstr(whole.text, "[cut]\n");
	assert_non_null(after);
	after += strlen("[cut]\n");
	/* 32-bit (add eax at 1001 after dec eax at 1000), speculative, and
	 * the 64-bit PSB+ an error: the mode it says is not the one known. */
	assert_string_equal(after, "1000 m2 s1\n1001 m2 s1\n1004 m2 s1\n"
			    "1005 m2 s1\n1008 m2 s1\n100a m2 s1\n"
			    "1020 m2 s1\n1021 m2 s1\n"
			    "[error bad status update]\n");

	run_state(image, &t, cut, &st, 0, NULL, &seeded);
	assert_string_equal(seeded.text, after);

	/* Unseeded: 64-bit decode of 32-bit code, no transaction, no error.
	 * (So is a decoder seeded with nothing known.) */
	run_state(image, &t, cut, NULL, 0, NULL, &fresh);
	assert_string_equal(fresh.text, "1000 m0 s0\n1004 m0 s0\n"
			    "1008 m0 s0\n100a m0 s0\n1020 m0 s0\n"
			    "1021 m0 s0\n1000 m3 s0\n1004 m3 s0\n"
			    "1008 m3 s0\n100a m3 s0\n1020 m3 s0\n"
			    "1021 m3 s0\n");
	memset(&none, 0, sizeof(none));
	run_state(image, &t, cut, &none, 0, NULL, &seeded);
	assert_string_equal(seeded.text, fresh.text);
	hwt_image_delete(image);
}

/*
 * A return compressed after a PSB against a call before it: followed
 * from the stack kept (libipt's way), an error with
 * HWT_BLK_PSB_CLEARS_STACK (the processor empties its stack at a PSB).
 */
static void test_psb_clears_stack(void **state)
{
	struct hwt_image *image = image1(0x1000, code_loop, sizeof(code_loop));
	struct tb t = new_trace();
	static struct out kept, cleared;

	(void) state;
	tb_psbplus(&t, 0x1000);
	tb_tnt(&t, "n");
	tb_psbplus(&t, 0x1020);
	tb_tnt(&t, "t");
	tb_ip(&t, HWT_PT_TIP_PGD, 0);
	run(image, &t, 0, &kept, 0);
	assert_string_equal(kept.text, "1000\n1004\n1008\n100a\n1020\n1021\n"
			    "100f\n1000\n1004\n1008\n[disabled]\n");
	run(image, &t, HWT_BLK_PSB_CLEARS_STACK, &cleared, 0);
	assert_string_equal(cleared.text, "1000\n1004\n1008\n100a\n1020\n"
			    "1021\n[error trace does not match the code at "
			    "1021]\n");
	hwt_image_delete(image);
}

/* An instruction split over two sections is completed across them. */
static void test_truncated_insn(void **state)
{
	static const uint8_t lo[] = { 0x90, 0x48, 0x83 };
	static const uint8_t hi[] = { 0xc0, 0x01, 0xff, 0xe0 };
	struct hwt_image *image = hwt_image_new();
	struct tb t = new_trace();
	static struct out o;

	(void) state;
	assert_int_equal(hwt_image_add_buffer(image, lo, sizeof(lo), 0x1000),
			 0);
	assert_int_equal(hwt_image_add_buffer(image, hi, sizeof(hi), 0x1003),
			 0);
	tb_psbplus(&t, 0x1000);
	tb_ip(&t, HWT_PT_TIP_PGD, 0);
	check(image, &t, "1000\n1001\n1005\n[disabled]\n");

	/* The truncated instruction ends its block. */
	run(image, &t, 0, &o, 1);
	assert_string_equal(o.text, "[block]\n1000\n1001\n[block]\n1005\n"
			    "[disabled]\n");
	hwt_image_delete(image);
}

static void test_insn_walk(void **state)
{
	struct hwt_image *image = image1(0x1000, code_call, sizeof(code_call));
	struct hwt_insn insn;
	uint64_t ip = 0x1000;

	(void) state;
	assert_int_equal(hwt_blk_insn_walk(image, HWT_MODE_64, &ip, &insn), 0);
	assert_int_equal(insn.size, 5);
	assert_int_equal(insn.iclass, HWT_IC_CALL);
	assert_int_equal(insn.raw[0], 0xe8);
	assert_true(ip == 0x1010);
	assert_int_equal(hwt_blk_insn_walk(image, HWT_MODE_64, &ip, &insn), 0);
	assert_true(ip == 0x1011);
	ip = 0x9000;
	assert_int_equal(hwt_blk_insn_walk(image, HWT_MODE_64, &ip, &insn),
			 -HWT_ERR_NOMAP);
	hwt_image_delete(image);
}

/* ------------------------------------------------------------------ */
/* Switching images                                                    */
/* ------------------------------------------------------------------ */

enum { NVARIANTS = HWT_BLK_KEPT_IMAGES + 3 };

/* Variant k at 1000: k nops; je +2; nop; nop; nop; jmp rax. Each pass
 * takes one TNT bit and a TIP back to 1000, whatever the variant. */
static uint8_t code_variant[NVARIANTS][0x20];

static void make_variant(unsigned k)
{
	static const uint8_t tail[] = { 0x74, 0x02, 0x90, 0x90, 0x90,
					0xff, 0xe0 };

	memset(code_variant[k], 0x90, k);
	memcpy(code_variant[k] + k, tail, sizeof(tail));
}

/* Does @b end a pass? */
static int pass_end(const struct hwt_block *b)
{
	return b->iclass == HWT_IC_JUMP;
}

/* Passes through @base, one random TNT bit each. */
static void variant_trace_at(struct tb *t, unsigned passes, unsigned seed,
			     uint64_t base)
{
	tb_psbplus(t, base);
	for (unsigned i = 0; i < passes; ++i) {
		seed = seed * 1103515245u + 12345u;
		tb_tnt(t, (seed >> 16) & 1 ? "t" : "n");
		tb_ip(t, HWT_PT_TIP, base);
	}
	tb_ip(t, HWT_PT_TIP_PGD, 0);
}

/* ... through 1000, where the variants are. */
static void variant_trace(struct tb *t, unsigned passes, unsigned seed)
{
	variant_trace_at(t, passes, seed, 0x1000);
}

/*
 * Decode @t, switching to images[@order[i]] after the i-th block that
 * ends in the indirect jump (where the cached and the cold decoder agree
 * on the flow, whatever their blocks).
 */
/* @d's trace from its first PSB, as run_switching() says; the number of
 * switches made. */
static size_t decode_switching(struct hwt_blk_decoder *d, struct out *o,
			       struct hwt_image **images,
			       const uint8_t *order, size_t norder)
{
	size_t next = 0;
	int status = hwt_blk_sync_forward(d);

	assert_true(status >= 0);
	for (;;) {
		struct hwt_block b;

		status = drain(d, o, status);
		assert_true(status >= 0);
		if (status & HWT_STS_EOS)
			break;
		status = hwt_blk_next(d, &b);
		assert_true(status >= 0);
		if (b.ninsn)
			emit_block(hwt_blk_image(d), o, &b, 0);
		if (b.ninsn && pass_end(&b) && next < norder) {
			struct hwt_image *to = images[order[next++]];

			assert_int_equal(hwt_blk_set_image(d, to), 0);
			assert_ptr_equal(hwt_blk_image(d), to);
		}
	}
	return next;
}

static void run_switching(struct hwt_image **images, const uint8_t *order,
			  size_t norder, const struct tb *t, uint32_t flags,
			  struct out *o)
{
	struct hwt_blk_decoder *d;

	memset(o, 0, sizeof(*o));
	d = decoder_on(t, flags, images[0]);
	assert_int_equal(decode_switching(d, o, images, order, norder), norder);
	hwt_blk_delete(d);
}

/* Images with other code at the same addresses: each image's blocks come
 * from its own code, also after more images than the decoder keeps. */
static void test_set_image(void **state)
{
	struct hwt_image *images[NVARIANTS];
	static struct out cached, cold;
	static uint8_t order[400];
	struct tb t = new_trace();
	unsigned seed = 777;

	(void) state;
	for (unsigned k = 0; k < NVARIANTS; ++k) {
		make_variant(k);
		images[k] = image1(0x1000, code_variant[k], 0x20);
	}
	/* Mostly a few images, now and then one of all: some come back
	 * after being dropped. */
	for (size_t i = 0; i < sizeof(order); ++i) {
		seed = seed * 1103515245u + 12345u;
		order[i] = (uint8_t) ((seed >> 16) % 8 ? (seed >> 20) % 3 :
					(seed >> 20) % NVARIANTS);
	}
	variant_trace(&t, sizeof(order) + 1, 99);
	run_switching(images, order, sizeof(order), &t, 0, &cached);
	run_switching(images, order, sizeof(order), &t, HWT_BLK_NO_CACHE,
		      &cold);
	assert_true(cached.ninsn > 4 * sizeof(order));
	assert_string_equal(cached.text, cold.text);

	for (unsigned k = 0; k < NVARIANTS; ++k)
		hwt_image_delete(images[k]);
}

/* The next block with instructions, events drained; its status. */
static int next_block(struct hwt_blk_decoder *d, struct out *o,
		      struct hwt_block *b)
{
	int status;

	do {
		status = drain(d, o, hwt_blk_next(d, b));
	} while (status >= 0 && !b->ninsn && !(status & HWT_STS_EOS));
	return status;
}

/* Decode up to the end of a pass (the indirect jump). */
static void to_pass_end(struct hwt_blk_decoder *d, struct out *o)
{
	struct hwt_block b;

	do
		assert_true(next_block(d, o, &b) >= 0);
	while (!pass_end(&b));
}

/*
 * Variants 0 and 1 as images *@a and *@b, a trace of 8 passes in @t, and
 * a decoder that decoded the first pass from *@a, then switched to *@b.
 */
static struct hwt_blk_decoder *two_images(struct tb *t, struct out *o,
					  struct hwt_image **a,
					  struct hwt_image **b)
{
	struct hwt_blk_config cfg;
	struct hwt_blk_decoder *d;

	make_variant(0);
	make_variant(1);
	*a = image1(0x1000, code_variant[0], 0x20);
	*b = image1(0x1000, code_variant[1], 0x20);
	variant_trace(t, 8, 5);

	memset(o, 0, sizeof(*o));
	hwt_blk_config_init(&cfg);
	cfg.qry.begin = t->buf;
	cfg.qry.end = t->buf + t->len;
	d = hwt_blk_new(&cfg, *a);
	assert_non_null(d);
	assert_true(drain(d, o, hwt_blk_sync_forward(d)) >= 0);
	to_pass_end(d, o);
	assert_int_equal(hwt_blk_set_image(d, *b), 0);
	return d;
}

/*
 * The cache of an image left is kept: its code, changed behind the
 * image's back, still decodes as it was cached (white box: a cleared
 * cache would read the new bytes). Forgetting the image drops it.
 */
static void test_set_image_keeps_cache(void **state)
{
	struct hwt_blk_decoder *d;
	struct hwt_image *a, *b;
	static struct out o;
	struct tb t = new_trace();
	struct hwt_block blk;

	(void) state;
	d = two_images(&t, &o, &a, &b);
	code_variant[0][0] = 0xcc;	/* int3: a cold read ends there */
	assert_int_equal(hwt_blk_set_image(d, a), 0);
	assert_true(next_block(d, &o, &blk) >= 0);
	assert_true(blk.ip == 0x1000 && blk.end_ip == 0x1000);
	assert_int_equal(blk.iclass, HWT_IC_COND_JUMP);
	to_pass_end(d, &o);

	/* Forgotten, then given again: read afresh. */
	assert_int_equal(hwt_blk_forget_image(d, a), -HWT_ERR_INVALID);
	assert_int_equal(hwt_blk_set_image(d, b), 0);
	assert_int_equal(hwt_blk_forget_image(d, a), 0);
	assert_int_equal(hwt_blk_set_image(d, a), 0);
	(void) next_block(d, &o, &blk);
	assert_true(blk.ip == 0x1000 && blk.ninsn == 1);
	assert_int_equal(blk.iclass, HWT_IC_FAR_CALL);

	assert_int_equal(hwt_blk_set_image(NULL, a), -HWT_ERR_INVALID);
	assert_int_equal(hwt_blk_set_image(d, NULL), -HWT_ERR_INVALID);
	hwt_blk_delete(d);
	hwt_image_delete(a);
	hwt_image_delete(b);
}

/* An image left may be deleted; one made in its place (malloc tends to
 * give the same address) is not taken for it. */
static void test_set_image_deleted(void **state)
{
	static uint8_t other[0x20];
	struct hwt_blk_decoder *d;
	struct hwt_image *a, *b, *c;
	static struct out o;
	struct tb t = new_trace();
	struct hwt_block blk;
	uintptr_t old_a;

	(void) state;
	d = two_images(&t, &o, &a, &b);
	memcpy(other, code_variant[0], sizeof(other));
	other[0] = 0xcc;
	old_a = (uintptr_t) a;
	hwt_image_delete(a);
	c = image1(0x1000, other, 0x20);
	if ((uintptr_t) c != old_a)
		print_message("(the new image is not where the old was)\n");
	assert_true(hwt_image_id(c) != 0);
	assert_int_equal(hwt_blk_set_image(d, c), 0);
	(void) next_block(d, &o, &blk);
	assert_true(blk.ip == 0x1000 && blk.ninsn == 1);
	assert_int_equal(blk.iclass, HWT_IC_FAR_CALL);
	hwt_blk_delete(d);
	hwt_image_delete(b);
	hwt_image_delete(c);
}

/* Variant @k's code in a file of its own (@path: mkstemp()'s template),
 * and an image of it at 1000. */
static struct hwt_image *variant_file(char *path, unsigned k)
{
	struct hwt_image *image = hwt_image_new();
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	make_variant(k);
	assert_int_equal(write(fd, code_variant[k], 0x20), 0x20);
	close(fd);
	assert_non_null(image);
	assert_int_equal(hwt_image_add_file(image, path, 0, 0x20, 0x1000), 0);
	return image;
}

static struct hwt_image *file_image(const char *path)
{
	struct hwt_image *image = hwt_image_new();

	assert_non_null(image);
	assert_int_equal(hwt_image_add_file(image, path, 0, 0x20, 0x1000), 0);
	return image;
}

/* All of @t with @d, from the start, its instructions into @o. */
static void decode_all(struct hwt_blk_decoder *d, const struct tb *t,
		       struct out *o)
{
	memset(o, 0, sizeof(*o));
	assert_int_equal(hwt_blk_set_trace(d, t->buf, t->buf + t->len), 0);
	(void) decode_switching(d, o, NULL, NULL, 0);
}

/* @d switched to @image (after a release if @release: the process before
 * ended), its cache checked: @used entries in it (white box). */
static void switch_to(struct hwt_blk_decoder *d, struct hwt_image *image,
		      int release, size_t used)
{
	if (release) {
		hwt_blk_release_image(d);
		assert_null(hwt_blk_image(d));
	}
	assert_int_equal(hwt_blk_set_image(d, image), 0);
	blk_cache_check(d);
	assert_int_equal(d->bcache.used, used);
}

/* All of @t with @d, as a decoder without a cache decodes it from
 * @image. */
static void decode_as_cold(struct hwt_blk_decoder *d,
			   struct hwt_image *image, const struct tb *t)
{
	static struct out o, cold;

	decode_all(d, t, &o);
	run(image, t, HWT_BLK_NO_CACHE, &cold, 0);
	assert_true(o.ninsn > 100);
	assert_string_equal(o.text, cold.text);
}

/*
 * A decoder whose image went (hwt_blk_release_image(): a process ended)
 * keeps for the next image the code that one maps from the same file,
 * moved where it maps it elsewhere, and nothing else (white box: the
 * cache's entries after its check, flow/block_int.h); each image's flow
 * is its own code's.
 */
static void test_release_carries(void **state)
{
	char f0[] = "/tmp/hwt-rel-XXXXXX", g0[] = "/tmp/hwt-rel-XXXXXX",
	     f1[] = "/tmp/hwt-rel-XXXXXX";
	struct hwt_image *a, *b, *c, *e, *m;
	static struct out o;
	struct hwt_blk_decoder *d;
	struct tb t = new_trace();
	size_t used;

	(void) state;
	a = variant_file(f0, 0);
	/* The same bytes in another file; another program's. */
	c = variant_file(g0, 0);
	e = variant_file(f1, 1);
	/* Another process of the first program. */
	b = file_image(f0);
	variant_trace(&t, 40, 3);
	d = decoder_on(&t, 0, a);
	decode_all(d, &t, &o);
	used = d->bcache.used;
	assert_true(used > 0);

	switch_to(d, b, 1, used);
	decode_as_cold(d, b, &t);

	/* Other files: nothing carried. */
	switch_to(d, c, 1, 0);
	decode_all(d, &t, &o);
	switch_to(d, e, 1, 0);
	decode_as_cold(d, e, &t);

	/* A process with the file elsewhere (address-space randomisation):
	 * all of it, moved with it; its flow its own. */
	switch_to(d, a, 1, 0);
	decode_all(d, &t, &o);
	used = d->bcache.used;
	m = hwt_image_new();
	assert_non_null(m);
	assert_int_equal(hwt_image_add_file(m, f0, 0, 0x20, 0x5000), 0);
	t = new_trace();
	variant_trace_at(&t, 40, 4, 0x5000);
	switch_to(d, m, 1, used);
	assert_null(hwt_bcache_lookup(&d->bcache, 0x1000));
	assert_non_null(hwt_bcache_lookup(&d->bcache, 0x5000));
	decode_as_cold(d, m, &t);
	assert_int_equal(d->bcache.used, used);

	hwt_blk_delete(d);
	hwt_image_delete(a);
	hwt_image_delete(b);
	hwt_image_delete(c);
	hwt_image_delete(e);
	hwt_image_delete(m);
	unlink(f0);
	unlink(g0);
	unlink(f1);
}

/*
 * A CPU's trace switching to a process not seen before (hwt_blk_set_image()
 * without a release): its cache starts with what the decoder's cache held
 * of the files both map, moved where the new one maps them (white box:
 * the entries after the check); the cache left is kept as it was, graph
 * and all. Each image's flow is its own code's.
 */
static void test_switch_seeds(void **state)
{
	char f0[] = "/tmp/hwt-seed-XXXXXX", f1[] = "/tmp/hwt-seed-XXXXXX";
	struct hwt_image *a, *m, *e;
	static struct out o;
	struct hwt_blk_decoder *d;
	struct tb t = new_trace();
	uint32_t nnodes;
	size_t used;

	(void) state;
	a = variant_file(f0, 0);
	e = variant_file(f1, 2);
	m = hwt_image_new();
	assert_non_null(m);
	assert_int_equal(hwt_image_add_file(m, f0, 0, 0x20, 0x5000), 0);
	variant_trace(&t, 40, 6);
	d = decoder_on(&t, 0, a);
	decode_all(d, &t, &o);
	used = d->bcache.used;
	assert_true(used > 0);
	nnodes = d->bcache.nnodes;
	assert_true(nnodes > 0);

	t = new_trace();
	variant_trace_at(&t, 40, 7, 0x5000);
	switch_to(d, m, 0, used);
	assert_non_null(hwt_bcache_lookup(&d->bcache, 0x5000));
	assert_int_equal(d->nkept, 1);
	assert_int_equal(d->kept[0].bcache.nnodes, nnodes);
	decode_as_cold(d, m, &t);
	/* The seeded cache is the image's: a library mapped beside keeps
	 * it. */
	assert_int_equal(hwt_image_add_file(m, f1, 0, 0x20, 0x9000), 0);
	blk_cache_check(d);
	assert_int_equal(d->bcache.used, used);
	/* Code of another exec mode is not seeded with these. */
	d->mode = HWT_MODE_32;
	blk_cache_check(d);
	assert_int_equal(d->bcache.used, 0);
	d->mode = HWT_MODE_64;
	blk_cache_check(d);
	assert_int_equal(d->bcache.used, used);

	/* Back: the first one's cache as it was; another program's file:
	 * nothing. */
	t = new_trace();
	variant_trace(&t, 40, 8);
	switch_to(d, a, 0, used);
	assert_non_null(hwt_bcache_lookup(&d->bcache, 0x1000));
	assert_null(hwt_bcache_lookup(&d->bcache, 0x5000));
	decode_as_cold(d, a, &t);
	switch_to(d, e, 0, 0);
	decode_as_cold(d, e, &t);

	hwt_blk_delete(d);
	hwt_image_delete(a);
	hwt_image_delete(m);
	hwt_image_delete(e);
	unlink(f0);
	unlink(f1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cond_taken),
		cmocka_unit_test(test_cond_not_taken),
		cmocka_unit_test(test_call_ret_compressed),
		cmocka_unit_test(test_call_ret_uncompressed),
		cmocka_unit_test(test_ret_compressed_empty_stack),
		cmocka_unit_test(test_indirect_call_ret),
		cmocka_unit_test(test_pgd_pge),
		cmocka_unit_test(test_fup_tip_interrupt),
		cmocka_unit_test(test_overflow),
		cmocka_unit_test(test_paging_binds_to_mov_cr3),
		cmocka_unit_test(test_pip_pip_mov_cr3_fail),
		cmocka_unit_test(test_nomap_resync),
		cmocka_unit_test(test_block_boundaries),
		cmocka_unit_test(test_cache_equals_cold),
		cmocka_unit_test(test_cache_exec_mode),
		cmocka_unit_test(test_state_seed),
		cmocka_unit_test(test_psb_clears_stack),
		cmocka_unit_test(test_truncated_insn),
		cmocka_unit_test(test_insn_walk),
		cmocka_unit_test(test_set_image),
		cmocka_unit_test(test_set_image_keeps_cache),
		cmocka_unit_test(test_set_image_deleted),
		cmocka_unit_test(test_release_carries),
		cmocka_unit_test(test_switch_seeds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Where hwt flow --time-range starts a stream's decode (src/cli/seek.c):
 * of the PSBs before the first time in the windows where a decoder
 * starting there knows what one from the trace's start knows, the one
 * before the latest; none where that cannot be had. Traces of
 * PSB+s at TSCs 0x1000, 0x2000, ... with branches between, read in
 * pieces as perf.data streams are.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <hwt/query.h>

#include "cli/cli.h"
#include "trace_build.h"

#define NPSB 10

struct trace {
	uint8_t mem[8192];
	struct tb t;
	uint64_t psb[NPSB];
};

/*
 * PSB+ i at TSC 0x1000 * (i + 1); @hook may put packets before each, or
 * a PSB+ of its own (*@done).
 */
static void build(struct trace *tr,
		  void (*hook)(struct tb *t, int i, int *done), int cyc)
{
	uint8_t m = 0;

	tr->t = (struct tb)TB_INIT(tr->mem);
	for (int i = 0; i < NPSB; i++) {
		int done = 0;
		size_t at = tr->t.len;

		if (hook)
			hook(&tr->t, i, &done);
		/* (A PSB+ of the hook's is all it wrote.) */
		tr->psb[i] = done ? at : tr->t.len;
		if (!done)
			tb_psbplus_tsc(&tr->t, 0x1000 * (uint64_t)(i + 1),
				       0x401000);
		for (int k = 0; k < 12; k++) {
			if (cyc)
				tb_cyc(&tr->t, 30 + (uint64_t)k * 7);
			tb_tnt(&tr->t, "ttn");
			if (cyc && k % 3 == 2)
				tb_mtc(&tr->t, ++m);
		}
		tb_ip(&tr->t, HWT_PT_TIP, 0x401020);
	}
}

/* cli_seek_find() on @tr with the windows @win ("START,END ..."). */
static int seek(struct trace *tr, const char *win, struct cli_seek *sk)
{
	struct cli_select sel = { 0 };
	struct hwt_qry_config cfg;
	struct cli_pieces p;
	int r;

	assert_int_equal(cli_select_parse(&sel, "test", "--time-range", win),
			 1);
	hwt_qry_config_init(&cfg);
	cfg.time.cpuid_0x15_eax = 1;
	cfg.time.cpuid_0x15_ebx = 4;
	cli_pieces_init_mem(&p, tr->mem, tr->t.len);
	/* Several pieces: the walk goes on over their cuts. */
	p.piece = 256;
	r = cli_seek_find(&p, NULL, &cfg, &sel, NULL, sk);
	cli_pieces_fini(&p);
	cli_select_free(&sel);
	return r;
}

static void test_where(void **state)
{
	struct trace tr;
	struct cli_seek sk;

	(void)state;
	build(&tr, NULL, 0);
	assert_true(tr.t.len > 512);
	/* The first TSC in the window is PSB 5's: the last good PSB before
	 * it is PSB 4, and the decode starts at the one before, PSB 3 (its
	 * TSC given). */
	assert_int_equal(seek(&tr, "0x5800,", &sk), 1);
	assert_int_equal(sk.off, tr.psb[3]);
	assert_int_equal(sk.tsc, 0x4000);
	assert_int_equal(sk.have_t, 0);
	assert_int_equal(sk.ovf + sk.bad, 0);
	/* A bound at a PSB's TSC is in the window. */
	assert_int_equal(seek(&tr, "0x6000,0x7000", &sk), 1);
	assert_int_equal(sk.off, tr.psb[3]);
	assert_int_equal(seek(&tr, "0x6001,0x7000", &sk), 1);
	assert_int_equal(sk.off, tr.psb[4]);
	/* Several windows: the earliest start. */
	assert_int_equal(seek(&tr, "0x9000,0xa000 0x7800,0x7900", &sk), 1);
	assert_int_equal(sk.off, tr.psb[5]);
	/* A window open at its start, or one that starts before the second
	 * PSB's end: from the trace's start. */
	assert_int_equal(seek(&tr, ",0x5000", &sk), 0);
	assert_int_equal(seek(&tr, "0x9000, ,0x100", &sk), 0);
	assert_int_equal(seek(&tr, "0x2000,", &sk), 0);
	assert_int_equal(sk.off, 0);
	assert_int_equal(seek(&tr, "0x3000,", &sk), 1);
	assert_int_equal(sk.off, tr.psb[0]);
	assert_int_equal(seek(&tr, "0x4000,", &sk), 1);
	assert_int_equal(sk.off, tr.psb[1]);
	assert_int_equal(seek(&tr, "0x5000,", &sk), 1);
	assert_int_equal(sk.off, tr.psb[2]);
	/* After the trace: no TSC in the window, nothing to show. */
	assert_int_equal(seek(&tr, "0x20000,", &sk), 0);
}

/* A TSC of its own after PSB 4's branches. */
static void tsc(struct tb *t, int i, int *done)
{
	(void)done;
	if (i == 5)
		tb_tsc(t, 0x5800);
}

/* PSB 6 at a TSC before PSB 5's. */
static void back(struct tb *t, int i, int *done)
{
	if (i != 6)
		return;
	tb_psbplus_tsc(t, 0x4000, 0x401000);
	*done = 1;
}

/* An OVF after PSB 2's branches, its IP from a FUP; one before PSB 7 with
 * no IP till PSB 7's FUP. */
static void ovf(struct tb *t, int i, int *done)
{
	(void)done;
	if (i == 3 || i == 7)
		tb_simple(t, HWT_PT_OVF);
	if (i == 3)
		tb_ip(t, HWT_PT_FUP, 0x401000);
}

/* PSB 7's PSB+ without MODE.Exec. */
static void no_mode(struct tb *t, int i, int *done)
{
	if (i != 7)
		return;
	tb_simple(t, HWT_PT_PSB);
	tb_tsc(t, 0x8000);
	tb_ip(t, HWT_PT_FUP, 0x401000);
	tb_simple(t, HWT_PT_PSBEND);
	*done = 1;
}

/* PSB 7's PSB+ says 16-bit code, then 64-bit (a damaged trace). */
static void other_mode(struct tb *t, int i, int *done)
{
	if (i != 7)
		return;
	tb_simple(t, HWT_PT_PSB);
	tb_tsc(t, 0x8000);
	tb_mode_exec(t, 0);
	tb_mode_exec(t, HWT_PT_EXEC_CSL);
	tb_ip(t, HWT_PT_FUP, 0x401000);
	tb_simple(t, HWT_PT_PSBEND);
	*done = 1;
}

/* A MODE.TSX after PSB 4's branches; PSB 8's PSB+ says it again. */
static void tsx(struct tb *t, int i, int *done)
{
	if (i == 5)
		tb_mode_tsx(t, 0);
	if (i != 8)
		return;
	tb_simple(t, HWT_PT_PSB);
	tb_mode_exec(t, HWT_PT_EXEC_CSL);
	tb_tsc(t, 0x9000);
	tb_mode_tsx(t, 0);
	tb_ip(t, HWT_PT_FUP, 0x401000);
	tb_simple(t, HWT_PT_PSBEND);
	*done = 1;
}

static void test_not_there(void **state)
{
	struct trace tr;
	struct cli_seek sk;

	(void)state;
	/* The first TSC in the window need not be a PSB's. */
	build(&tr, tsc, 0);
	assert_int_equal(seek(&tr, "0x5700,", &sk), 1);
	assert_int_equal(sk.off, tr.psb[3]);
	assert_int_equal(seek(&tr, "0x5900,", &sk), 1);
	assert_int_equal(sk.off, tr.psb[3]);
	assert_int_equal(seek(&tr, "0x6001,", &sk), 1);
	assert_int_equal(sk.off, tr.psb[4]);
	/* The time goes back before the window: no seek. */
	build(&tr, back, 0);
	assert_int_equal(seek(&tr, "0x8800,", &sk), 0);
	/* Before that, as ever. */
	assert_int_equal(seek(&tr, "0x5800,", &sk), 1);
	assert_int_equal(sk.off, tr.psb[3]);

	/* Lost data before: counted. Not at a PSB whose IP an OVF waits
	 * for. */
	build(&tr, ovf, 0);
	assert_int_equal(seek(&tr, "0x5800,", &sk), 1);
	assert_int_equal(sk.off, tr.psb[3]);
	assert_int_equal(sk.ovf, 1);
	/* (PSB 8 the last good; PSB 7 waits: PSB 6.) */
	assert_int_equal(seek(&tr, "0xa000,", &sk), 1);
	assert_int_equal(sk.off, tr.psb[6]);
	assert_int_equal(sk.ovf, 1);
	/* (PSB 7 waits: PSB 6 is the last good, and PSB 5 the start.) */
	assert_int_equal(seek(&tr, "0x8800,", &sk), 1);
	assert_int_equal(sk.off, tr.psb[5]);

	/* A PSB+ that does not say the exec mode. */
	build(&tr, no_mode, 0);
	assert_int_equal(seek(&tr, "0x9000,", &sk), 1);
	assert_int_equal(sk.off, tr.psb[5]);

	/* A mode other than the one before: the decoder that ran into it
	 * has an error there, one starting there not. */
	build(&tr, other_mode, 0);
	assert_int_equal(seek(&tr, "0x9000,", &sk), 1);
	assert_int_equal(sk.off, tr.psb[5]);
	assert_int_equal(seek(&tr, "0xa000,", &sk), 1);
	assert_int_equal(sk.off, tr.psb[6]);

	/* The TSX state said before and not again: not there. */
	build(&tr, tsx, 0);
	assert_int_equal(seek(&tr, "0x5800,", &sk), 1);
	assert_int_equal(sk.off, tr.psb[3]);
	assert_int_equal(seek(&tr, "0x8800,", &sk), 1);
	assert_int_equal(sk.off, tr.psb[3]);
	/* (PSB 8 the last good: the one before is PSB 4.) */
	assert_int_equal(seek(&tr, "0xa000,", &sk), 1);
	assert_int_equal(sk.off, tr.psb[4]);
}

/* A bad packet (a reserved opcode) after PSB 2's branches. */
static void bad(struct tb *t, int i, int *done)
{
	(void)done;
	if (i == 3 && t->len < t->size)
		t->buf[t->len++] = 0x55;
}

static void test_bad_packet(void **state)
{
	struct trace tr;
	struct cli_seek sk;

	(void)state;
	build(&tr, bad, 0);
	assert_int_equal(seek(&tr, "0x7800,", &sk), 1);
	assert_int_equal(sk.off, tr.psb[5]);
	assert_int_equal(sk.bad, 1);
	assert_int_equal(sk.ovf, 0);
}

/*
 * CYCs make time through a calibration carried over PSBs: the decode
 * starts with the state one decoder from the start has there (a query
 * decoder's, in the pieces the trace is read in).
 */
/* The time state a decoder from @tr's start has at the PSB at @off. */
static void assert_time_at(struct trace *tr, uint64_t off,
			   const struct hwt_time_tracker *tt)
{
	struct hwt_qry_config cfg;
	struct hwt_time_tracker watched;
	struct hwt_evt_decoder *one;
	struct hwt_event ev;

	hwt_qry_config_init(&cfg);
	cfg.begin = tr->t.buf;
	cfg.end = tr->t.buf + tr->t.len;
	cfg.time.cpuid_0x15_eax = 1;
	cfg.time.cpuid_0x15_ebx = 4;
	one = hwt_evt_new(&cfg);
	assert_non_null(one);
	hwt_evt_time_watch(one, off);
	assert_int_equal(hwt_evt_sync_forward(one), 0);
	while (!hwt_evt_time_watched(one, &watched))
		assert_true(hwt_evt_next(one, &ev) >= 0);
	assert_true(hwt_time_tracker_same(&watched, tt));
	hwt_evt_delete(one);
}

/* One CYC, after PSB 0's branches, and no MTC: its cycles count on. */
static void one_cyc(struct tb *t, int i, int *done)
{
	(void)done;
	if (i == 1)
		tb_cyc(t, 5);
}

/* A CBR after PSB 2's branches, which no PSB+ says again. */
static void cbr(struct tb *t, int i, int *done)
{
	(void)done;
	if (i == 3)
		tb_cbr(t, 24);
}

static void test_calibration(void **state)
{
	struct trace tr;
	struct cli_seek sk;

	(void)state;
	build(&tr, NULL, 1);
	assert_int_equal(seek(&tr, "0x7800,", &sk), 1);
	assert_int_equal(sk.off, tr.psb[5]);
	assert_int_equal(sk.have_t, 1);
	assert_time_at(&tr, sk.off, &sk.t);
	/* (fuzz_seek found it: a state from the trace's first PSBs, which
	 * no estimate from the PSBs before the start has.) */
	build(&tr, one_cyc, 0);
	assert_int_equal(seek(&tr, "0x7800,", &sk), 1);
	assert_int_equal(sk.off, tr.psb[5]);
	assert_int_equal(sk.have_t, 1);
	assert_time_at(&tr, sk.off, &sk.t);
	/* A core:bus ratio from before the PSB: its state too. Before it,
	 * none. */
	build(&tr, cbr, 0);
	assert_int_equal(seek(&tr, "0x7800,", &sk), 1);
	assert_int_equal(sk.have_t, 1);
	assert_time_at(&tr, sk.off, &sk.t);
	assert_int_equal(seek(&tr, "0x4000,", &sk), 1);
	assert_int_equal(sk.off, tr.psb[1]);
	assert_int_equal(sk.have_t, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_where),
		cmocka_unit_test(test_not_there),
		cmocka_unit_test(test_bad_packet),
		cmocka_unit_test(test_calibration),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

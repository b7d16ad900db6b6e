/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The query decoder: small traces built with the encoder, checked against
 * the exact sequence of answers (status bits, TNT bits, TIP targets,
 * events with their IPs and times) that libipt's query decoder gives for
 * the same packets (the cases follow the semantics of libipt's ptunit
 * query tests: sync at PSB+, TNT across packets, deferred TIPs, FUP
 * binding, OVF, event ordering, errata, timing on events).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <hwt/query.h>

#include "trace_build.h"

/* An empty trace; a test builds one at a time. */
static struct tb new_trace(void)
{
	static uint8_t mem[2048];

	return (struct tb) TB_INIT(mem);
}

/* ------------------------------------------------------------------ */
/* Decoder helpers                                                     */
/* ------------------------------------------------------------------ */

static struct hwt_qry_decoder *new_dec(const struct tb *t, uint32_t errata,
				       uint32_t flags)
{
	struct hwt_qry_config cfg;
	struct hwt_qry_decoder *d;

	hwt_qry_config_init(&cfg);
	cfg.begin = t->buf;
	cfg.end = t->buf + t->len;
	cfg.errata = errata;
	cfg.flags = flags;
	d = hwt_qry_new(&cfg);
	assert_non_null(d);
	return d;
}

/* Next event, which must be of @type; returns the status. */
static int expect_event(struct hwt_qry_decoder *d, unsigned type,
			struct hwt_event *ev)
{
	int st = hwt_qry_event(d, ev);

	assert_true(st >= 0);
	assert_int_equal(ev->type, type);
	return st;
}

static int branch(struct hwt_qry_decoder *d, int want)
{
	int taken = -1, st = hwt_qry_cond_branch(d, &taken);

	assert_true(st >= 0);
	assert_int_equal(taken, want);
	return st;
}

/* ------------------------------------------------------------------ */
/* Synchronisation                                                     */
/* ------------------------------------------------------------------ */

static void test_sync_none(void **state)
{
	struct tb t = new_trace();
	struct hwt_qry_decoder *d;
	uint64_t ip = 0;

	(void)state;
	tb_simple(&t, HWT_PT_PAD);
	tb_simple(&t, HWT_PT_PAD);
	d = new_dec(&t, 0, 0);
	assert_int_equal(hwt_qry_sync_forward(d, &ip), -HWT_ERR_EOS);
	assert_int_equal(hwt_qry_sync_backward(d, &ip), -HWT_ERR_EOS);
	hwt_qry_delete(d);
}

static void test_sync_enabled(void **state)
{
	struct tb t = new_trace();
	struct hwt_qry_decoder *d;
	struct hwt_event ev;
	uint64_t ip = 0, off;
	int st;

	(void)state;
	tb_psbplus(&t, 0x401000);
	d = new_dec(&t, 0, 0);
	st = hwt_qry_sync_forward(d, &ip);
	assert_int_equal(st, HWT_STS_EVENT_PENDING);
	assert_int_equal(ip, 0x401000);
	assert_int_equal(hwt_qry_get_sync_offset(d, &off), 0);
	assert_int_equal(off, 0);

	/* The status events: enabled first, then the mode. */
	st = expect_event(d, HWT_EV_ENABLED, &ev);
	assert_int_equal(st, HWT_STS_EVENT_PENDING);
	assert_true(ev.status_update);
	assert_false(ev.ip_suppressed);
	assert_int_equal(ev.u.enabled.ip, 0x401000);
	st = expect_event(d, HWT_EV_EXEC_MODE, &ev);
	assert_int_equal(st, HWT_STS_EOS);
	assert_true(ev.status_update);
	assert_int_equal(ev.u.exec_mode.mode, HWT_MODE_64);
	assert_int_equal(ev.u.exec_mode.ip, 0x401000);
	assert_int_equal(hwt_qry_event(d, &ev), -HWT_ERR_EOS);
	hwt_qry_delete(d);
}

static void test_sync_disabled(void **state)
{
	struct tb t = new_trace();
	struct hwt_qry_decoder *d;
	struct hwt_event ev;
	uint64_t ip = 0x1234;
	int st;

	(void)state;
	tb_simple(&t, HWT_PT_PSB);
	tb_simple(&t, HWT_PT_PSBEND);
	tb_ip(&t, HWT_PT_TIP_PGE, 0x2000);
	d = new_dec(&t, 0, 0);
	st = hwt_qry_sync_forward(d, &ip);
	assert_int_equal(st, HWT_STS_EVENT_PENDING | HWT_STS_IP_SUPPRESSED);
	assert_int_equal(ip, 0x1234);
	st = expect_event(d, HWT_EV_DISABLED, &ev);
	assert_true(ev.status_update);
	assert_true(ev.ip_suppressed);
	assert_int_equal(st, HWT_STS_EVENT_PENDING);
	st = expect_event(d, HWT_EV_ENABLED, &ev);
	assert_false(ev.status_update);
	assert_int_equal(ev.u.enabled.ip, 0x2000);
	assert_int_equal(st, HWT_STS_EOS);
	hwt_qry_delete(d);
}

static void test_sync_backward_set(void **state)
{
	struct tb t = new_trace();
	struct hwt_qry_decoder *d;
	uint64_t ip = 0, off = 0, second;
	int st;

	(void)state;
	tb_psbplus(&t, 0x1000);
	tb_tnt(&t, "t");
	second = t.len;
	tb_psbplus(&t, 0x2000);
	tb_tnt(&t, "n");
	d = new_dec(&t, 0, 0);

	st = hwt_qry_sync_backward(d, &ip);
	assert_true(st >= 0);
	assert_int_equal(ip, 0x2000);
	assert_int_equal(hwt_qry_get_sync_offset(d, &off), 0);
	assert_int_equal(off, second);

	st = hwt_qry_sync_backward(d, &ip);
	assert_true(st >= 0);
	assert_int_equal(ip, 0x1000);
	assert_int_equal(hwt_qry_get_sync_offset(d, &off), 0);
	assert_int_equal(off, 0);

	st = hwt_qry_sync_forward(d, &ip);
	assert_true(st >= 0);
	assert_int_equal(ip, 0x2000);

	st = hwt_qry_sync_set(d, &ip, 0);
	assert_true(st >= 0);
	assert_int_equal(ip, 0x1000);
	/* Not a PSB there. */
	assert_int_equal(hwt_qry_sync_set(d, &ip, 1), -HWT_ERR_NOSYNC);
	assert_int_equal(hwt_qry_sync_set(d, &ip, t.len + 1), -HWT_ERR_EOS);
	hwt_qry_delete(d);
}

/*
 * Skip the @n PSB+ status events after a sync (2 after psbplus(): enabled
 * and exec mode; 1 after a bare PSB, PSBEND: disabled).
 */
static void drain(struct hwt_qry_decoder *d, int st, int n)
{
	struct hwt_event ev;

	while (n-- > 0) {
		assert_true(st & HWT_STS_EVENT_PENDING);
		st = hwt_qry_event(d, &ev);
		assert_true(st >= 0);
		assert_true(ev.status_update);
	}
}

static struct hwt_qry_decoder *start_n(const struct tb *t, uint32_t errata,
				       uint32_t flags, int n)
{
	struct hwt_qry_decoder *d = new_dec(t, errata, flags);
	uint64_t ip;
	int st = hwt_qry_sync_forward(d, &ip);

	assert_true(st >= 0);
	drain(d, st, n);
	return d;
}

static struct hwt_qry_decoder *start(const struct tb *t, uint32_t errata,
				     uint32_t flags)
{
	return start_n(t, errata, flags, 2);
}

/* ------------------------------------------------------------------ */
/* Branches                                                            */
/* ------------------------------------------------------------------ */

static void test_tnt_across_packets(void **state)
{
	static const char bits64[] = "ntttttnntntttttnnt";
	struct tb t = new_trace();
	struct hwt_qry_decoder *d;
	int taken;

	(void)state;
	tb_psbplus(&t, 0x1000);
	tb_tnt(&t, "tnt");
	tb_simple(&t, HWT_PT_PAD);
	tb_tnt(&t, bits64);	/* TNT-64 */
	d = start(&t, 0, 0);
	assert_int_equal(branch(d, 1), 0);
	assert_int_equal(branch(d, 0), 0);
	assert_int_equal(branch(d, 1), 0);
	for (const char *s = bits64; *s; s++)
		assert_int_equal(branch(d, *s == 't'),
				 s[1] ? 0 : HWT_STS_EOS);
	assert_int_equal(hwt_qry_cond_branch(d, &taken), -HWT_ERR_EOS);
	hwt_qry_delete(d);
}

static void test_indirect(void **state)
{
	struct tb t = new_trace();
	struct hwt_qry_decoder *d;
	uint64_t ip = 0;
	int taken;

	(void)state;
	tb_psbplus(&t, 0x1000);
	tb_ip(&t, HWT_PT_TIP, 0x5000);
	tb_ip(&t, HWT_PT_TIP, 0);
	tb_tnt(&t, "t");
	d = start(&t, 0, 0);
	/* No TNT: a conditional branch query does not match. */
	assert_int_equal(hwt_qry_cond_branch(d, &taken), -HWT_ERR_BAD_QUERY);
	assert_int_equal(hwt_qry_indirect_branch(d, &ip), 0);
	assert_int_equal(ip, 0x5000);
	ip = 0;
	assert_int_equal(hwt_qry_indirect_branch(d, &ip),
			 HWT_STS_IP_SUPPRESSED);
	assert_int_equal(ip, 0);
	/* The TNT is cached looking for a TIP; the end is reported. */
	assert_int_equal(hwt_qry_indirect_branch(d, &ip), -HWT_ERR_EOS);
	assert_int_equal(branch(d, 1), HWT_STS_EOS);
	hwt_qry_delete(d);
}

/* A TIP deferred behind TNT bits: found while the bits are unused. */
static void test_deferred_tip(void **state)
{
	struct tb t = new_trace();
	struct hwt_qry_decoder *d;
	uint64_t ip = 0;

	(void)state;
	tb_psbplus(&t, 0x1000);
	tb_tnt(&t, "tn");
	tb_ip(&t, HWT_PT_TIP, 0x7000);
	tb_tnt(&t, "t");
	d = start(&t, 0, 0);
	assert_int_equal(hwt_qry_indirect_branch(d, &ip), 0);
	assert_int_equal(ip, 0x7000);
	assert_int_equal(branch(d, 1), 0);
	assert_int_equal(branch(d, 0), 0);
	assert_int_equal(branch(d, 1), HWT_STS_EOS);
	hwt_qry_delete(d);
}

/* Events wait for the TNT bits before them to be used. */
static void test_event_after_tnt(void **state)
{
	struct tb t = new_trace();
	struct hwt_qry_decoder *d;
	struct hwt_event ev;

	(void)state;
	tb_psbplus(&t, 0x1000);
	tb_tnt(&t, "tt");
	tb_ip(&t, HWT_PT_TIP_PGD, 0x3000);
	d = start(&t, 0, 0);
	assert_int_equal(branch(d, 1), 0);
	assert_int_equal(hwt_qry_event(d, &ev), -HWT_ERR_BAD_QUERY);
	assert_int_equal(branch(d, 1), HWT_STS_EVENT_PENDING);
	assert_int_equal(expect_event(d, HWT_EV_DISABLED, &ev), HWT_STS_EOS);
	assert_false(ev.ip_suppressed);
	assert_int_equal(ev.u.disabled.ip, 0x3000);
	hwt_qry_delete(d);
}

/* ------------------------------------------------------------------ */
/* FUP binding                                                         */
/* ------------------------------------------------------------------ */

static void test_async_branch(void **state)
{
	struct tb t = new_trace();
	struct hwt_qry_decoder *d;
	struct hwt_event ev;
	int taken;

	(void)state;
	tb_psbplus(&t, 0x1000);
	tb_tnt(&t, "t");
	tb_ip(&t, HWT_PT_FUP, 0x1010);
	tb_ip(&t, HWT_PT_TIP, 0x9000);
	d = start(&t, 0, 0);
	assert_int_equal(branch(d, 1), HWT_STS_EVENT_PENDING);
	assert_int_equal(expect_event(d, HWT_EV_ASYNC_BRANCH, &ev),
			 HWT_STS_EOS);
	assert_int_equal(ev.u.async_branch.from, 0x1010);
	assert_int_equal(ev.u.async_branch.to, 0x9000);
	assert_int_equal(hwt_qry_cond_branch(d, &taken), -HWT_ERR_EOS);
	hwt_qry_delete(d);
}

static void test_async_disabled(void **state)
{
	struct tb t = new_trace();
	struct hwt_qry_decoder *d;
	struct hwt_event ev;

	(void)state;
	tb_psbplus(&t, 0x1000);
	tb_ip(&t, HWT_PT_FUP, 0x1010);
	tb_ip(&t, HWT_PT_TIP_PGD, 0);
	tb_ip(&t, HWT_PT_TIP_PGE, 0x2000);
	d = start(&t, 0, 0);
	expect_event(d, HWT_EV_ASYNC_DISABLED, &ev);
	assert_int_equal(ev.u.async_disabled.at, 0x1010);
	assert_true(ev.ip_suppressed);
	assert_int_equal(expect_event(d, HWT_EV_ENABLED, &ev), HWT_STS_EOS);
	assert_int_equal(ev.u.enabled.ip, 0x2000);
	hwt_qry_delete(d);
}

/* PIP and VMCS between FUP and TIP: async branch, VMCS, paging. */
static void test_async_paging_vmcs(void **state)
{
	struct tb t = new_trace();
	struct hwt_qry_decoder *d;
	struct hwt_event ev;

	(void)state;
	tb_psbplus(&t, 0x1000);
	tb_ip(&t, HWT_PT_FUP, 0x1010);
	tb_pip(&t, 0xcafe000, 1);
	tb_vmcs(&t, 0xabc000);
	tb_ip(&t, HWT_PT_TIP, 0x9000);
	tb_pip(&t, 0xbeef000, 0);
	d = start(&t, 0, 0);
	expect_event(d, HWT_EV_ASYNC_BRANCH, &ev);
	assert_int_equal(ev.u.async_branch.to, 0x9000);
	expect_event(d, HWT_EV_ASYNC_VMCS, &ev);
	assert_int_equal(ev.u.async_vmcs.base, 0xabc000);
	assert_int_equal(ev.u.async_vmcs.ip, 0x9000);
	expect_event(d, HWT_EV_ASYNC_PAGING, &ev);
	assert_int_equal(ev.u.async_paging.cr3, 0xcafe000);
	assert_int_equal(ev.u.async_paging.non_root, 1);
	assert_int_equal(ev.u.async_paging.ip, 0x9000);
	/* A PIP on its own binds to a MOV CR3 the flow layer finds. */
	assert_int_equal(expect_event(d, HWT_EV_PAGING, &ev), HWT_STS_EOS);
	assert_int_equal(ev.u.paging.cr3, 0xbeef000);
	hwt_qry_delete(d);
}

/* MODE.Exec binds to the next TIP (after the TIP event itself). */
static void test_mode_exec_tip(void **state)
{
	struct tb t = new_trace();
	struct hwt_qry_decoder *d;
	struct hwt_event ev;
	uint64_t ip;

	(void)state;
	tb_psbplus(&t, 0x1000);
	tb_mode_exec(&t, HWT_PT_EXEC_CSD);
	tb_ip(&t, HWT_PT_TIP, 0x8000);
	/* The same mode again: nothing to report, the TIP stays a TIP. */
	tb_mode_exec(&t, HWT_PT_EXEC_CSD);
	tb_ip(&t, HWT_PT_TIP, 0x8800);
	d = start(&t, 0, 0);
	assert_int_equal(hwt_qry_indirect_branch(d, &ip),
			 HWT_STS_EVENT_PENDING);
	assert_int_equal(ip, 0x8000);
	assert_int_equal(expect_event(d, HWT_EV_EXEC_MODE, &ev), 0);
	assert_int_equal(ev.u.exec_mode.mode, HWT_MODE_32);
	assert_int_equal(ev.u.exec_mode.ip, 0x8000);
	assert_int_equal(hwt_qry_indirect_branch(d, &ip), HWT_STS_EOS);
	assert_int_equal(ip, 0x8800);
	hwt_qry_delete(d);
}

/* TIP.PGE: the enable first, then what binds to it. */
static void test_tip_pge_mode(void **state)
{
	struct tb t = new_trace();
	struct hwt_qry_decoder *d;
	struct hwt_event ev;

	(void)state;
	tb_simple(&t, HWT_PT_PSB);
	tb_simple(&t, HWT_PT_PSBEND);
	tb_mode_exec(&t, HWT_PT_EXEC_CSL);
	tb_ip(&t, HWT_PT_TIP_PGE, 0x4000);
	tb_tnt(&t, "n");
	d = start_n(&t, 0, 0, 1);
	expect_event(d, HWT_EV_ENABLED, &ev);
	assert_int_equal(ev.u.enabled.ip, 0x4000);
	assert_int_equal(expect_event(d, HWT_EV_EXEC_MODE, &ev), 0);
	assert_int_equal(ev.u.exec_mode.mode, HWT_MODE_64);
	assert_int_equal(ev.u.exec_mode.ip, 0x4000);
	assert_int_equal(branch(d, 0), HWT_STS_EOS);
	hwt_qry_delete(d);
}

static void test_tsx(void **state)
{
	struct tb t = new_trace();
	struct hwt_qry_decoder *d;
	struct hwt_event ev;

	(void)state;
	tb_psbplus(&t, 0x1000);
	tb_mode_tsx(&t, HWT_PT_TSX_INTX);
	tb_ip(&t, HWT_PT_FUP, 0x1100);
	/* An abort: MODE.TSX, FUP, TIP is an async branch too. */
	tb_mode_tsx(&t, HWT_PT_TSX_ABORT);
	tb_ip(&t, HWT_PT_FUP, 0x1200);
	tb_ip(&t, HWT_PT_TIP, 0x1300);
	d = start(&t, 0, 0);
	expect_event(d, HWT_EV_TSX, &ev);
	assert_int_equal(ev.u.tsx.ip, 0x1100);
	assert_int_equal(ev.u.tsx.speculative, 1);
	assert_int_equal(ev.u.tsx.aborted, 0);
	expect_event(d, HWT_EV_TSX, &ev);
	assert_int_equal(ev.u.tsx.ip, 0x1200);
	assert_int_equal(ev.u.tsx.aborted, 1);
	assert_int_equal(expect_event(d, HWT_EV_ASYNC_BRANCH, &ev),
			 HWT_STS_EOS);
	assert_int_equal(ev.u.async_branch.from, 0x1200);
	assert_int_equal(ev.u.async_branch.to, 0x1300);
	hwt_qry_delete(d);
}

static void test_ptw_exstop_mwait(void **state)
{
	struct tb t = new_trace();
	struct hwt_qry_decoder *d;
	struct hwt_event ev;

	(void)state;
	tb_psbplus(&t, 0x1000);
	tb_ptw(&t, 1, 0x42, 1);
	tb_ip(&t, HWT_PT_FUP, 0x1004);
	tb_ptw(&t, 1, 0x43, 0);
	tb_mwait(&t, 5, 1);
	tb_exstop(&t, 1);
	tb_ip(&t, HWT_PT_FUP, 0x1008);
	tb_mwait(&t, 6, 0);
	tb_exstop(&t, 0);
	d = start(&t, 0, 0);
	expect_event(d, HWT_EV_PTWRITE, &ev);
	assert_int_equal(ev.u.ptwrite.payload, 0x42);
	assert_int_equal(ev.u.ptwrite.size, 8);
	assert_int_equal(ev.u.ptwrite.ip, 0x1004);
	assert_false(ev.ip_suppressed);
	expect_event(d, HWT_EV_PTWRITE, &ev);
	assert_int_equal(ev.u.ptwrite.payload, 0x43);
	assert_true(ev.ip_suppressed);
	expect_event(d, HWT_EV_MWAIT, &ev);
	assert_int_equal(ev.u.mwait.hints, 5);
	assert_int_equal(ev.u.mwait.ip, 0x1008);
	expect_event(d, HWT_EV_EXSTOP, &ev);
	assert_int_equal(ev.u.exstop.ip, 0x1008);
	expect_event(d, HWT_EV_MWAIT, &ev);
	assert_true(ev.ip_suppressed);
	assert_int_equal(ev.u.mwait.hints, 6);
	assert_int_equal(expect_event(d, HWT_EV_EXSTOP, &ev), HWT_STS_EOS);
	assert_true(ev.ip_suppressed);
	hwt_qry_delete(d);
}

/* ------------------------------------------------------------------ */
/* Overflow                                                            */
/* ------------------------------------------------------------------ */

static void test_ovf_fup(void **state)
{
	struct tb t = new_trace();
	struct hwt_qry_decoder *d;
	struct hwt_event ev;

	(void)state;
	tb_psbplus(&t, 0x1000);
	tb_tsc(&t, 0x5000);
	tb_simple(&t, HWT_PT_OVF);
	tb_tsc(&t, 0x6000);
	tb_ip(&t, HWT_PT_FUP, 0x2000);
	tb_tnt(&t, "t");
	d = start(&t, 0, 0);
	expect_event(d, HWT_EV_OVERFLOW, &ev);
	assert_false(ev.ip_suppressed);
	assert_int_equal(ev.u.overflow.ip, 0x2000);
	/* The time of the OVF, not of the FUP. */
	assert_true(ev.has_tsc);
	assert_int_equal(ev.tsc, 0x5000);
	assert_int_equal(branch(d, 1), HWT_STS_EOS);
	hwt_qry_delete(d);
}

static void test_ovf_disabled(void **state)
{
	struct tb t = new_trace();
	struct hwt_qry_decoder *d;
	struct hwt_event ev;

	(void)state;
	tb_psbplus(&t, 0x1000);
	tb_simple(&t, HWT_PT_OVF);
	tb_pip(&t, 0x1000, 0);
	tb_ip(&t, HWT_PT_TIP_PGE, 0x3000);
	d = start(&t, 0, 0);
	expect_event(d, HWT_EV_OVERFLOW, &ev);
	assert_true(ev.ip_suppressed);
	expect_event(d, HWT_EV_PAGING, &ev);
	assert_int_equal(expect_event(d, HWT_EV_ENABLED, &ev), HWT_STS_EOS);
	assert_int_equal(ev.u.enabled.ip, 0x3000);
	hwt_qry_delete(d);
}

/* An OVF may end PSB+; its events come first. */
static void test_ovf_in_psb(void **state)
{
	struct tb t = new_trace();
	struct hwt_qry_decoder *d;
	struct hwt_event ev;
	uint64_t ip;
	int st;

	(void)state;
	tb_simple(&t, HWT_PT_PSB);
	tb_ip(&t, HWT_PT_FUP, 0x1000);
	tb_simple(&t, HWT_PT_OVF);
	tb_ip(&t, HWT_PT_FUP, 0x1500);
	d = new_dec(&t, 0, 0);
	st = hwt_qry_sync_forward(d, &ip);
	assert_int_equal(st, HWT_STS_EVENT_PENDING);
	assert_int_equal(ip, 0x1000);
	expect_event(d, HWT_EV_ENABLED, &ev);
	assert_true(ev.status_update);
	assert_int_equal(expect_event(d, HWT_EV_OVERFLOW, &ev), HWT_STS_EOS);
	assert_int_equal(ev.u.overflow.ip, 0x1500);
	hwt_qry_delete(d);
}

/* APL12: a FUP after OVF though tracing is disabled (TIP.PGE follows). */
static void test_apl12(void **state)
{
	struct tb t = new_trace();
	struct hwt_qry_decoder *d;
	struct hwt_event ev;

	(void)state;
	tb_psbplus(&t, 0x1000);
	tb_simple(&t, HWT_PT_OVF);
	tb_ip(&t, HWT_PT_FUP, 0x2000);
	tb_ip(&t, HWT_PT_TIP_PGE, 0x3000);

	d = start(&t, 0, 0);
	expect_event(d, HWT_EV_OVERFLOW, &ev);
	assert_int_equal(ev.u.overflow.ip, 0x2000);
	expect_event(d, HWT_EV_ENABLED, &ev);
	hwt_qry_delete(d);

	d = start(&t, HWT_PT_ERRATUM_APL12, 0);
	expect_event(d, HWT_EV_OVERFLOW, &ev);
	assert_true(ev.ip_suppressed);
	assert_int_equal(expect_event(d, HWT_EV_ENABLED, &ev), HWT_STS_EOS);
	assert_int_equal(ev.u.enabled.ip, 0x3000);
	hwt_qry_delete(d);
}

/* APL11: a TIP.PGD after OVF. */
static void test_apl11(void **state)
{
	struct tb t = new_trace();
	struct hwt_qry_decoder *d;
	struct hwt_event ev;
	uint64_t ip;
	int st;

	(void)state;
	tb_psbplus(&t, 0x1000);
	tb_simple(&t, HWT_PT_OVF);
	tb_ip(&t, HWT_PT_TIP_PGD, 0);
	tb_ip(&t, HWT_PT_TIP_PGE, 0x3000);

	d = new_dec(&t, 0, 0);
	st = hwt_qry_sync_forward(d, &ip);
	drain(d, st, 2);
	assert_int_equal(hwt_qry_event(d, &ev), -HWT_ERR_BAD_CONTEXT);
	hwt_qry_delete(d);

	d = start(&t, HWT_PT_ERRATUM_APL11, 0);
	expect_event(d, HWT_EV_OVERFLOW, &ev);
	assert_true(ev.ip_suppressed);
	assert_int_equal(expect_event(d, HWT_EV_ENABLED, &ev), HWT_STS_EOS);
	hwt_qry_delete(d);
}

/* SKD010: the FUP after OVF was lost; resume at the next TIP. */
static void test_skd010(void **state)
{
	struct tb t = new_trace();
	struct hwt_qry_decoder *d;
	struct hwt_event ev;
	int taken;

	(void)state;
	tb_psbplus(&t, 0x1000);
	tb_simple(&t, HWT_PT_OVF);
	tb_ip(&t, HWT_PT_TIP, 0x5000);
	tb_tnt(&t, "t");
	d = start(&t, HWT_PT_ERRATUM_SKD010, 0);
	expect_event(d, HWT_EV_OVERFLOW, &ev);
	assert_false(ev.ip_suppressed);
	assert_int_equal(ev.u.overflow.ip, 0x5000);
	assert_int_equal(hwt_qry_cond_branch(d, &taken), HWT_STS_EOS);
	assert_int_equal(taken, 1);
	hwt_qry_delete(d);
}

/* BDM70: PSB+ while disabled may hold a FUP; a TIP.PGE tells. */
static void test_bdm70(void **state)
{
	struct tb t = new_trace();
	struct hwt_qry_decoder *d;
	uint64_t ip;
	int st;

	(void)state;
	tb_psbplus(&t, 0x1000);
	tb_ip(&t, HWT_PT_TIP_PGE, 0x2000);

	d = new_dec(&t, 0, 0);
	st = hwt_qry_sync_forward(d, &ip);
	assert_int_equal(st, HWT_STS_EVENT_PENDING);
	hwt_qry_delete(d);

	d = new_dec(&t, HWT_PT_ERRATUM_BDM70, 0);
	st = hwt_qry_sync_forward(d, &ip);
	assert_int_equal(st, HWT_STS_EVENT_PENDING | HWT_STS_IP_SUPPRESSED);
	hwt_qry_delete(d);
}

/* ------------------------------------------------------------------ */
/* Standalone events, event trace                                      */
/* ------------------------------------------------------------------ */

static void test_standalone(void **state)
{
	struct tb t = new_trace();
	struct hwt_qry_decoder *d;
	struct hwt_event ev;
	struct hwt_pt_packet p;

	(void)state;
	tb_psbplus(&t, 0x1000);
	tb_cbr(&t, 0x20);
	p = tb_packet(HWT_PT_PWRE);
	p.u.pwre.state = 2;
	p.u.pwre.sub_state = 1;
	p.u.pwre.hw = 1;
	tb_put(&t, &p);
	p = tb_packet(HWT_PT_PWRX);
	p.u.pwrx.last = 3;
	p.u.pwrx.deepest = 4;
	p.u.pwrx.wake = HWT_PT_PWRX_INT;
	tb_put(&t, &p);
	p = tb_packet(HWT_PT_MNT);
	p.u.mnt = 0x1122334455667788ull;
	tb_put(&t, &p);
	tb_ip(&t, HWT_PT_TIP_PGD, 0);
	tb_vmcs(&t, 0x5000);
	tb_simple(&t, HWT_PT_STOP);
	d = start(&t, 0, 0);
	expect_event(d, HWT_EV_CBR, &ev);
	assert_int_equal(ev.u.cbr.ratio, 0x20);
	expect_event(d, HWT_EV_PWRE, &ev);
	assert_int_equal(ev.u.pwre.state, 2);
	assert_int_equal(ev.u.pwre.sub_state, 1);
	assert_int_equal(ev.u.pwre.hw, 1);
	expect_event(d, HWT_EV_PWRX, &ev);
	assert_int_equal(ev.u.pwrx.last, 3);
	assert_int_equal(ev.u.pwrx.deepest, 4);
	assert_int_equal(ev.u.pwrx.interrupt, 1);
	expect_event(d, HWT_EV_MNT, &ev);
	assert_int_equal(ev.u.mnt.payload, 0x1122334455667788ull);
	expect_event(d, HWT_EV_DISABLED, &ev);
	assert_true(ev.ip_suppressed);
	expect_event(d, HWT_EV_VMCS, &ev);
	assert_int_equal(ev.u.vmcs.base, 0x5000);
	assert_int_equal(expect_event(d, HWT_EV_STOP, &ev), HWT_STS_EOS);
	hwt_qry_delete(d);
}

static void test_event_trace(void **state)
{
	struct tb t = new_trace();
	struct hwt_qry_decoder *d;
	struct hwt_event ev;
	uint64_t ip;

	(void)state;
	tb_psbplus(&t, 0x1000);
	tb_evd(&t, 0 /* cr2 */, 0xdead000);
	tb_cfe(&t, 1 /* intr */, 14, 1);
	tb_ip(&t, HWT_PT_FUP, 0x1010);
	tb_ip(&t, HWT_PT_TIP, 0xf000);
	tb_cfe(&t, 2 /* iret */, 0, 1);
	tb_ip(&t, HWT_PT_FUP, 0xf010);
	tb_ip(&t, HWT_PT_TIP, 0x1010);
	/* IF changes: an iflags event with event tracing. */
	tb_mode_exec(&t, HWT_PT_EXEC_CSL | HWT_PT_EXEC_IF);
	tb_ip(&t, HWT_PT_TIP, 0x1020);
	/* Status events: enabled, exec mode, iflags. */
	d = start_n(&t, 0, HWT_QRY_EVENT_TRACE, 3);
	expect_event(d, HWT_EV_INTERRUPT, &ev);
	assert_int_equal(ev.u.interrupt.vector, 14);
	assert_int_equal(ev.u.interrupt.has_cr2, 1);
	assert_int_equal(ev.u.interrupt.cr2, 0xdead000);
	assert_int_equal(ev.u.interrupt.ip, 0x1010);
	/* The FUP is bound by the CFE: the TIP is a plain TIP. */
	assert_int_equal(hwt_qry_indirect_branch(d, &ip),
			 HWT_STS_EVENT_PENDING);
	assert_int_equal(ip, 0xf000);
	expect_event(d, HWT_EV_IRET, &ev);
	assert_int_equal(ev.u.iret.ip, 0xf010);
	assert_int_equal(hwt_qry_indirect_branch(d, &ip), 0);
	assert_int_equal(ip, 0x1010);
	assert_int_equal(hwt_qry_indirect_branch(d, &ip),
			 HWT_STS_EVENT_PENDING);
	assert_int_equal(ip, 0x1020);
	expect_event(d, HWT_EV_IFLAGS, &ev);
	assert_int_equal(ev.u.iflags.iflag, 1);
	assert_int_equal(ev.u.iflags.ip, 0x1020);
	hwt_qry_delete(d);
}

/* ------------------------------------------------------------------ */
/* Time                                                                */
/* ------------------------------------------------------------------ */

static void test_time(void **state)
{
	struct tb t = new_trace();
	struct hwt_qry_decoder *d;
	struct hwt_event ev;
	uint64_t ip, now;
	uint32_t ratio;
	int st;

	(void)state;
	tb_simple(&t, HWT_PT_PSB);
	tb_tsc(&t, 0x100000);
	tb_cbr(&t, 0x10);
	tb_ip(&t, HWT_PT_FUP, 0x1000);
	tb_simple(&t, HWT_PT_PSBEND);
	tb_tnt(&t, "t");
	tb_tsc(&t, 0x200000);
	tb_ip(&t, HWT_PT_TIP, 0x2000);
	tb_tsc(&t, 0x300000);
	tb_cbr(&t, 0x18);
	d = new_dec(&t, 0, 0);
	assert_int_equal(hwt_qry_time(d, &now, NULL, NULL), -HWT_ERR_NO_TIME);
	st = hwt_qry_sync_forward(d, &ip);
	assert_int_equal(st, HWT_STS_EVENT_PENDING);
	expect_event(d, HWT_EV_ENABLED, &ev);
	assert_true(ev.has_tsc);
	assert_int_equal(ev.tsc, 0x100000);
	st = expect_event(d, HWT_EV_CBR, &ev);
	assert_true(ev.status_update);
	assert_int_equal(ev.u.cbr.ratio, 0x10);
	assert_int_equal(ev.tsc, 0x100000);
	assert_int_equal(st, 0);
	assert_int_equal(hwt_qry_core_bus_ratio(d, &ratio), 0);
	assert_int_equal(ratio, 0x10);

	assert_int_equal(branch(d, 1), 0);
	assert_int_equal(hwt_qry_time(d, &now, NULL, NULL), 0);
	assert_int_equal(now, 0x100000);
	assert_int_equal(hwt_qry_indirect_branch(d, &ip),
			 HWT_STS_EVENT_PENDING);
	assert_int_equal(hwt_qry_time(d, &now, NULL, NULL), 0);
	assert_int_equal(now, 0x200000);
	assert_int_equal(expect_event(d, HWT_EV_CBR, &ev), HWT_STS_EOS);
	assert_true(ev.has_tsc);
	assert_int_equal(ev.tsc, 0x300000);
	assert_int_equal(ev.u.cbr.ratio, 0x18);
	hwt_qry_delete(d);
}

/* ------------------------------------------------------------------ */
/* Errors                                                              */
/* ------------------------------------------------------------------ */

static void test_errors_resync(void **state)
{
	struct tb t = new_trace();
	struct hwt_qry_decoder *d;
	struct hwt_event ev;
	uint64_t ip, off;
	size_t bad;
	int st, taken;

	(void)state;
	/* A TNT while tracing is disabled, right after PSB+: the sync
	 * fails, as it looks at the start of the trace. */
	tb_simple(&t, HWT_PT_PSB);
	tb_simple(&t, HWT_PT_PSBEND);
	tb_tnt(&t, "t");
	tb_psbplus(&t, 0x7000);
	tb_tnt(&t, "t");
	tb_ip(&t, HWT_PT_TIP_PGD, 0);
	bad = t.len;
	tb_tnt(&t, "t");
	tb_psbplus(&t, 0x8000);
	tb_tnt(&t, "n");
	t.buf[t.len++] = 0x02;	/* a bad opcode, then the end */
	t.buf[t.len++] = 0xff;

	d = new_dec(&t, 0, 0);
	assert_int_equal(hwt_qry_sync_forward(d, &ip), -HWT_ERR_BAD_CONTEXT);

	st = hwt_qry_sync_forward(d, &ip);
	assert_int_equal(ip, 0x7000);
	drain(d, st, 2);
	assert_int_equal(branch(d, 1), HWT_STS_EVENT_PENDING);
	/* The error met ahead comes when we get there. */
	st = expect_event(d, HWT_EV_DISABLED, &ev);
	assert_int_equal(st, HWT_STS_EVENT_PENDING);
	assert_int_equal(hwt_qry_event(d, &ev), -HWT_ERR_BAD_CONTEXT);
	assert_int_equal(hwt_qry_event(d, &ev), -HWT_ERR_BAD_CONTEXT);
	assert_int_equal(hwt_qry_cond_branch(d, &taken), -HWT_ERR_BAD_CONTEXT);
	assert_int_equal(hwt_qry_get_offset(d, &off), 0);
	assert_int_equal(off, bad);

	st = hwt_qry_sync_forward(d, &ip);
	assert_true(st >= 0);
	assert_int_equal(ip, 0x8000);
	drain(d, st, 2);
	/* The last bit, then the decode error. */
	assert_int_equal(hwt_qry_cond_branch(d, &taken), HWT_STS_EVENT_PENDING);
	assert_int_equal(taken, 0);
	assert_int_equal(hwt_qry_event(d, &ev), -HWT_ERR_BAD_OPC);
	assert_int_equal(hwt_qry_cond_branch(d, &taken), -HWT_ERR_BAD_OPC);
	assert_int_equal(hwt_qry_sync_forward(d, &ip), -HWT_ERR_EOS);
	hwt_qry_delete(d);
}

/* A FUP with no IP known cannot be an async branch source. */
static void test_fup_noip(void **state)
{
	struct tb t = new_trace();
	struct hwt_qry_decoder *d;
	struct hwt_event ev;
	uint64_t ip;
	int st;

	(void)state;
	tb_simple(&t, HWT_PT_PSB);
	tb_simple(&t, HWT_PT_PSBEND);
	tb_ip(&t, HWT_PT_FUP, 0);
	d = new_dec(&t, 0, 0);
	assert_int_equal(hwt_qry_sync_forward(d, &ip), -HWT_ERR_NOIP);
	/* Later in the trace, the error waits for its turn. */
	t.len = 0;
	tb_psbplus(&t, 0x1000);
	tb_ip(&t, HWT_PT_TIP_PGD, 0);
	tb_ip(&t, HWT_PT_FUP, 0);
	hwt_qry_delete(d);
	d = start(&t, 0, 0);
	st = expect_event(d, HWT_EV_DISABLED, &ev);
	assert_int_equal(st, HWT_STS_EVENT_PENDING);
	assert_int_equal(hwt_qry_event(d, &ev), -HWT_ERR_IP_SUPPRESSED);
	hwt_qry_delete(d);
}

/* The event decoder beneath: TNT and TIP are events there. */
static void test_evt(void **state)
{
	struct tb t = new_trace();
	struct hwt_qry_config cfg;
	struct hwt_evt_decoder *e, *snap;
	struct hwt_event ev;

	(void)state;
	tb_psbplus(&t, 0x1000);
	tb_tnt(&t, "tn");
	tb_ip(&t, HWT_PT_TIP, 0x2000);
	hwt_qry_config_init(&cfg);
	cfg.begin = t.buf;
	cfg.end = t.buf + t.len;
	e = hwt_evt_new(&cfg);
	snap = hwt_evt_new(&cfg);
	assert_non_null(e);
	assert_int_equal(hwt_evt_sync_forward(e), 0);
	assert_int_equal(hwt_evt_next(e, &ev), 0);
	assert_int_equal(ev.type, HWT_EV_ENABLED);
	assert_int_equal(hwt_evt_next(e, &ev), 0);
	assert_int_equal(ev.type, HWT_EV_EXEC_MODE);
	assert_int_equal(hwt_evt_next(e, &ev), 0);
	assert_int_equal(ev.type, HWT_EV_TNT);
	assert_int_equal(ev.u.tnt.size, 2);
	assert_int_equal(ev.u.tnt.bits, 2);
	hwt_evt_copy(snap, e);
	assert_int_equal(hwt_evt_next(e, &ev), 0);
	assert_int_equal(ev.type, HWT_EV_TIP);
	assert_int_equal(ev.u.tip.ip, 0x2000);
	assert_int_equal(hwt_evt_next(e, &ev), -HWT_ERR_EOS);
	/* The snapshot replays. */
	assert_int_equal(hwt_evt_next(snap, &ev), 0);
	assert_int_equal(ev.type, HWT_EV_TIP);
	hwt_evt_delete(e);
	hwt_evt_delete(snap);
}

/* Events from @d to the end, their times into @tsc (up to @max). */
static size_t cut_times(struct hwt_evt_decoder *d, uint64_t *tsc, size_t max)
{
	struct hwt_event ev;
	size_t n = 0;

	while (hwt_evt_next(d, &ev) == 0) {
		assert_true(n < max);
		tsc[n++] = ev.has_tsc ? ev.tsc : ~0ull;
	}
	return n;
}

/*
 * Time across a cut (-j): CYCs made time through a calibration that one
 * decoder carries over every PSB. A decoder started at the third PSB
 * with hwt_evt_time_warm()'s estimate gives the times of the decoder
 * that came from the start (the one watching there); without it, not.
 */
static void test_time_cut(void **state)
{
	static uint8_t mem[4096];
	struct tb t = TB_INIT(mem);
	struct hwt_time_tracker watched, warm;
	struct hwt_qry_config cfg;
	struct hwt_evt_decoder *one, *cut, *fresh;
	uint64_t psb[4], a[256], b[256], c[256];
	size_t na, nb, nc, skip;
	uint8_t m = 0;

	(void)state;
	for (int p = 0; p < 4; p++) {
		psb[p] = t.len;
		tb_psbplus_tsc(&t, 0x10000 + 0x1000 * (uint64_t)p, 0x1000);
		for (int i = 0; i < 12; i++) {
			tb_cyc(&t, 30 + (uint64_t)i * 7);
			tb_tnt(&t, "ttn");
			if (i % 3 == 2)
				tb_mtc(&t, ++m);
		}
	}
	hwt_qry_config_init(&cfg);
	cfg.begin = t.buf;
	cfg.end = t.buf + t.len;
	cfg.time.cpuid_0x15_eax = 1;
	cfg.time.cpuid_0x15_ebx = 4;
	one = hwt_evt_new(&cfg);
	cut = hwt_evt_new(&cfg);
	fresh = hwt_evt_new(&cfg);
	assert_non_null(one);
	assert_non_null(cut);
	assert_non_null(fresh);

	/* One decoder from the start, watching the third PSB. */
	hwt_evt_time_watch(one, psb[2]);
	assert_int_equal(hwt_evt_sync_forward(one), 0);
	assert_int_equal(hwt_evt_time_watched(one, &watched), 0);
	na = cut_times(one, a, 256);
	assert_int_equal(hwt_evt_time_watched(one, &watched), 1);

	/* The estimate is what it had there. */
	assert_int_equal(hwt_evt_time_warm(&cfg, psb[2], ~0ull, &warm), 1);
	assert_true(hwt_time_tracker_same(&watched, &warm));
	/* One PSB back is not enough: the CYCs before its first MTC
	 * period are lost to the time since the TSC. */
	assert_int_equal(hwt_evt_time_warm(&cfg, psb[2], psb[2] - psb[1],
					   &warm), 1);
	assert_false(hwt_time_tracker_same(&watched, &warm));
	/* None in reach, not a PSB's offset, or none before it: not
	 * reached. */
	assert_int_equal(hwt_evt_time_warm(&cfg, psb[2], 10, &warm), 0);
	assert_int_equal(hwt_evt_time_warm(&cfg, psb[2] + 1, ~0ull, &warm), 0);
	assert_int_equal(hwt_evt_time_warm(&cfg, psb[0], ~0ull, &warm), 0);

	/* From the cut: seeded, the same times as the one decoder's last
	 * events; fresh, not all of them. */
	assert_int_equal(hwt_evt_time_warm(&cfg, psb[2], ~0ull, &warm), 1);
	hwt_evt_time_seed(cut, &warm);
	assert_int_equal(hwt_evt_sync_set(cut, psb[2]), 0);
	nb = cut_times(cut, b, 256);
	assert_int_equal(hwt_evt_sync_set(fresh, psb[2]), 0);
	nc = cut_times(fresh, c, 256);
	assert_int_equal(nb, nc);
	assert_true(na > nb);
	skip = na - nb;
	assert_memory_equal(a + skip, b, nb * sizeof(*b));
	assert_memory_not_equal(a + skip, c, nc * sizeof(*c));

	/* What the PSB+ sets (its TSC: time and lost MTCs) does not
	 * count; the calibration it does not set does. */
	warm = watched;
	warm.time.lost_mtc += 3;
	warm.time.tsc += 5;
	assert_false(hwt_time_tracker_same(&watched, &warm));
	assert_int_equal(hwt_evt_time_same_from(&cfg, psb[2], &watched, &warm),
			 1);
	warm.cal.cyc_mtc += 1;
	assert_int_equal(hwt_evt_time_same_from(&cfg, psb[2], &watched, &warm),
			 0);

	/* The seed is for one sync only. */
	assert_int_equal(hwt_evt_sync_set(cut, psb[2]), 0);
	nb = cut_times(cut, b, 256);
	assert_memory_equal(b, c, nc * sizeof(*c));

	hwt_evt_delete(one);
	hwt_evt_delete(cut);
	hwt_evt_delete(fresh);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sync_none),
		cmocka_unit_test(test_sync_enabled),
		cmocka_unit_test(test_sync_disabled),
		cmocka_unit_test(test_sync_backward_set),
		cmocka_unit_test(test_tnt_across_packets),
		cmocka_unit_test(test_indirect),
		cmocka_unit_test(test_deferred_tip),
		cmocka_unit_test(test_event_after_tnt),
		cmocka_unit_test(test_async_branch),
		cmocka_unit_test(test_async_disabled),
		cmocka_unit_test(test_async_paging_vmcs),
		cmocka_unit_test(test_mode_exec_tip),
		cmocka_unit_test(test_tip_pge_mode),
		cmocka_unit_test(test_tsx),
		cmocka_unit_test(test_ptw_exstop_mwait),
		cmocka_unit_test(test_ovf_fup),
		cmocka_unit_test(test_ovf_disabled),
		cmocka_unit_test(test_ovf_in_psb),
		cmocka_unit_test(test_apl12),
		cmocka_unit_test(test_apl11),
		cmocka_unit_test(test_skd010),
		cmocka_unit_test(test_bdm70),
		cmocka_unit_test(test_standalone),
		cmocka_unit_test(test_event_trace),
		cmocka_unit_test(test_time),
		cmocka_unit_test(test_errors_resync),
		cmocka_unit_test(test_fup_noip),
		cmocka_unit_test(test_evt),
		cmocka_unit_test(test_time_cut),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

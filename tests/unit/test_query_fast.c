/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The query decoder's fast path (src/query/evt.h: TNT-8, TNT-64, TIP with
 * every IP compression, PAD, MTC, CYC parsed in place) against the general
 * path: random packet streams, long enough that most packets are far from
 * the end (the fast path leaves the last bytes to the general path), are
 * decoded once with hwt_evt_next() alone and once through the query
 * decoder, which takes the fast path whenever nothing binds. Every answer
 * (TNT bits, TIP targets or suppression, events, and the time of each)
 * must be the same. The small hand-made traces of test_query.c mostly end
 * within the fast path's margin, so they run the general path.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <hwt/query.h>

#include "rng.h"
#include "trace_build.h"

/* A stream of what tracing that stays enabled produces. */
static void psbplus(struct tb *t, struct rng *r)
{
	uint64_t tsc = rnd(r) & 0xffffffffffffull;

	tb_psbplus_tsc(t, tsc, rnd(r));
}

/* A stream of what tracing that stays enabled produces. */
static void make_trace(struct tb *t, struct rng *r, size_t size)
{
	static const uint8_t ipcs[] = {
		HWT_PT_IPC_SUPPRESSED, HWT_PT_IPC_UPDATE16, HWT_PT_IPC_UPDATE32,
		HWT_PT_IPC_SEXT48, HWT_PT_IPC_UPDATE48, HWT_PT_IPC_FULL
	};
	uint64_t ip;
	unsigned n;

	t->len = 0;
	psbplus(t, r);
	while (t->len + 64 < size) {
		switch (rndn(r, 16)) {
		case 0: case 1: case 2:
			n = 1 + rndn(r, 6);
			tb_tnt_raw(t, HWT_PT_TNT8, n,
				   rnd(r) & ((1u << n) - 1));
			break;
		case 3: case 4:
			n = 1 + rndn(r, 47);
			tb_tnt_raw(t, HWT_PT_TNT64, n,
				   rnd(r) & ((1ull << n) - 1));
			break;
		case 5: case 6: case 7: case 8:
			/* The IP drawn first, as gcc did in the arguments of
			 * one call (a fixed order: the same streams with clang). */
			ip = rnd(r);
			tb_ipc(t, HWT_PT_TIP, ipcs[rndn(r, 6)], ip);
			break;
		case 9:
			for (n = 1 + rndn(r, 20); n; n--)
				tb_simple(t, HWT_PT_PAD);
			break;
		case 10:
			tb_mtc(t, (uint8_t)rnd(r));
			break;
		case 11:
			/* Mostly one byte; sometimes more. */
			tb_cyc(t, rndn(r, 4) ? rndn(r, 32) : rnd(r) >> 40);
			break;
		case 12:
			/* General path: a MODE.Exec binding to a TIP. */
			tb_mode_exec(t, HWT_PT_EXEC_CSL);
			tb_ipc(t, HWT_PT_TIP, HWT_PT_IPC_SEXT48, rnd(r));
			break;
		case 13:
			tb_cbr(t, (uint8_t)(1 + rndn(r, 50)));
			break;
		case 14:
			tb_tsc(t, rnd(r) & 0xffffffffffffffull);
			break;
		default:
			if (!rndn(r, 8))
				psbplus(t, r);
			else
				tb_simple(t, HWT_PT_PAD);
			break;
		}
	}
}

static void config(struct hwt_qry_config *cfg, const struct tb *t)
{
	hwt_qry_config_init(cfg);
	cfg->begin = t->buf;
	cfg->end = t->buf + t->len;
	cfg->time.cpuid_0x15_eax = 2;
	cfg->time.cpuid_0x15_ebx = 170;
	cfg->time.mtc_freq = 3;
	cfg->time.nom_freq = 36;
}

struct answer {
	struct hwt_event ev;
	int time_err;
	uint64_t tsc;
	uint32_t lost_mtc, lost_cyc;
};

/* The general path alone: every event, with the time right after it. */
static size_t reference(const struct tb *t, struct answer *a, size_t max)
{
	struct hwt_qry_config cfg;
	struct hwt_evt_decoder *e;
	size_t n = 0;
	int err;

	config(&cfg, t);
	e = hwt_evt_new(&cfg);
	assert_non_null(e);
	assert_int_equal(hwt_evt_sync_forward(e), 0);
	for (;;) {
		assert_true(n < max);
		memset(&a[n], 0, sizeof(a[n]));
		err = hwt_evt_next(e, &a[n].ev);
		if (err == -HWT_ERR_EOS)
			break;
		assert_int_equal(err, 0);
		a[n].time_err = hwt_evt_time(e, &a[n].tsc, &a[n].lost_mtc,
					     &a[n].lost_cyc);
		n++;
	}
	hwt_evt_delete(e);
	return n;
}

static void check_time(const struct hwt_qry_decoder *d, const struct answer *a)
{
	uint32_t lost_mtc = 0, lost_cyc = 0;
	uint64_t tsc = 0;

	assert_int_equal(hwt_qry_time(d, &tsc, &lost_mtc, &lost_cyc),
			 a->time_err);
	assert_int_equal(tsc, a->tsc);
	assert_int_equal(lost_mtc, a->lost_mtc);
	assert_int_equal(lost_cyc, a->lost_cyc);
}

/* The query decoder must give the same answers; returns TNT+TIP count. */
static size_t replay(const struct tb *t, const struct answer *a, size_t n)
{
	struct hwt_qry_config cfg;
	struct hwt_qry_decoder *d;
	struct hwt_event ev;
	size_t i, fast = 0;
	uint64_t ip = 0;
	int st, taken;

	config(&cfg, t);
	d = hwt_qry_new(&cfg);
	assert_non_null(d);
	st = hwt_qry_sync_forward(d, &ip);
	assert_true(st >= 0);
	for (i = 0; i < n; i++) {
		const struct hwt_event *want = &a[i].ev;

		switch (want->type) {
		case HWT_EV_TNT:
			for (unsigned b = want->u.tnt.size; b--;) {
				taken = -1;
				st = hwt_qry_cond_branch(d, &taken);
				assert_true(st >= 0);
				assert_int_equal(taken,
						 (want->u.tnt.bits >> b) & 1);
				if (b == want->u.tnt.size - 1u)
					check_time(d, &a[i]);
			}
			fast++;
			break;
		case HWT_EV_TIP:
			ip = 0;
			st = hwt_qry_indirect_branch(d, &ip);
			assert_true(st >= 0);
			assert_int_equal(!!(st & HWT_STS_IP_SUPPRESSED),
					 want->ip_suppressed);
			if (!want->ip_suppressed)
				assert_int_equal(ip, want->u.tip.ip);
			check_time(d, &a[i]);
			fast++;
			break;
		default:
			assert_true(st & HWT_STS_EVENT_PENDING);
			st = hwt_qry_event(d, &ev);
			assert_true(st >= 0);
			assert_int_equal(ev.type, want->type);
			assert_int_equal(ev.ip_suppressed, want->ip_suppressed);
			assert_int_equal(ev.status_update,
					 want->status_update);
			assert_int_equal(ev.has_tsc, want->has_tsc);
			assert_int_equal(ev.tsc, want->tsc);
			assert_memory_equal(&ev.u, &want->u, sizeof(ev.u));
			check_time(d, &a[i]);
			break;
		}
	}
	/* Nothing more, and no bits left over. */
	assert_true(st & HWT_STS_EOS);
	taken = -1;
	assert_true(hwt_qry_cond_branch(d, &taken) < 0);
	hwt_qry_delete(d);
	return fast;
}

static void test_fast_vs_general(void **state)
{
	static uint8_t mem[1 << 16];
	static struct answer a[1 << 15];
	struct tb t = TB_INIT(mem);
	size_t total = 0;

	(void) state;
	for (uint64_t seed = 1; seed <= 40; seed++) {
		struct rng r = { seed };
		size_t n;

		make_trace(&t, &r, 2048 + rndn(&r, 16384));
		n = reference(&t, a, sizeof(a) / sizeof(a[0]));
		total += replay(&t, a, n);
	}
	/* The streams are mostly TNT and TIP: the fast path ran. */
	assert_true(total > 40 * 200);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fast_vs_general),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

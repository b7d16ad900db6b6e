/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target for the query layer. The whole input is the trace (so
 * raw .pt files, e.g. from libipt's pttc suite, are good seeds); which
 * queries are asked, in what pattern, and which errata/flags are on comes
 * from a hash of it. Every path must terminate (the loops here are bounded
 * and abort() if a bound is hit: a decoder that stops making progress is a
 * bug) and answers must be well-formed:
 *
 *  - status bits are HWT_STS_* only; taken is 0 or 1; errors are in range;
 *  - offsets stay inside the trace; sync offsets point at a PSB;
 *  - after an error, hwt_qry_sync_forward() resumes or reports the end;
 *  - the event decoder, and a copy of it taken mid-way, agree;
 *  - time across a cut (hwt_evt_time_warm(), _same_from()) terminates
 *    and a state is the same as itself from a PSB that decodes.
 */
#include <hwt/query.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t fnv(const uint8_t *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

static void check_status(int st)
{
	if (st >= 0)
		CHECK(!(st & ~(HWT_STS_EVENT_PENDING | HWT_STS_IP_SUPPRESSED |
			       HWT_STS_EOS)));
	else
		CHECK(-st > 0 && -st < HWT_ERR_COUNT);
}

static void check_event(const struct hwt_event *ev)
{
	CHECK(ev->type < HWT_EV_NTYPES);
	CHECK(ev->type != HWT_EV_TNT && ev->type != HWT_EV_TIP);
	CHECK(ev->ip_suppressed <= 1 && ev->status_update <= 1 &&
	      ev->has_tsc <= 1);
}

static void run_query(const uint8_t *data, size_t size, uint64_t h,
		      uint32_t errata, uint32_t flags)
{
	struct hwt_qry_config cfg;
	struct hwt_qry_decoder *d;
	struct hwt_event ev;
	uint64_t ip, off, tsc;
	/*
	 * Each call consumes a packet, a TNT bit or a queued event, or ends
	 * in an error; a backward sync may replay the trace, so allow a few.
	 */
	size_t budget = 5 * (16 * size + 64);
	int st, taken, backs = 0;

	hwt_qry_config_init(&cfg);
	cfg.begin = data;
	cfg.end = data + size;
	cfg.errata = errata;
	cfg.flags = flags;
	cfg.time.cpuid_0x15_eax = 2;
	cfg.time.cpuid_0x15_ebx = (uint32_t)(h >> 40) & 0x3f;
	cfg.time.mtc_freq = (uint8_t)((h >> 48) & 0xf);
	cfg.time.nom_freq = (uint8_t)(h >> 56);
	d = hwt_qry_new(&cfg);
	CHECK(d);

	st = (h & 1) ? hwt_qry_sync_backward(d, &ip) :
		       hwt_qry_sync_forward(d, &ip);
	check_status(st);
	while (budget--) {
		unsigned op;

		if (st < 0) {
			/* Resume after any error, or stop at the end. */
			st = hwt_qry_sync_forward(d, &ip);
			check_status(st);
			if (st == -HWT_ERR_EOS)
				break;
			if (st >= 0) {
				CHECK(hwt_qry_get_sync_offset(d, &off) == 0);
				CHECK(off + HWT_PT_PSB_SIZE <= size);
				CHECK(data[off] == 0x02 && data[off + 1] == 0x82);
			}
			continue;
		}
		if (hwt_qry_get_offset(d, &off) == 0)
			CHECK(off <= size);
		(void)hwt_qry_time(d, &tsc, NULL, NULL);

		/* Mostly what the flow layer would ask, sometimes not. */
		h = h * 6364136223846793005ull + 1442695040888963407ull;
		op = (unsigned)(h >> 60);
		if ((st & HWT_STS_EVENT_PENDING) && op < 12) {
			st = hwt_qry_event(d, &ev);
			if (st >= 0)
				check_event(&ev);
		} else if (op < 9) {
			taken = -1;
			st = hwt_qry_cond_branch(d, &taken);
			if (st >= 0)
				CHECK(taken == 0 || taken == 1);
		} else if (op < 14) {
			st = hwt_qry_indirect_branch(d, &ip);
		} else if (op < 15) {
			st = hwt_qry_event(d, &ev);
			if (st >= 0)
				check_event(&ev);
		} else if (backs++ < 4) {
			st = hwt_qry_sync_backward(d, &ip);
			if (st == -HWT_ERR_EOS)
				st = hwt_qry_sync_forward(d, &ip);
			if (st == -HWT_ERR_EOS)
				break;
		}
		check_status(st);
		if (st >= 0 && (st & HWT_STS_EOS)) {
			/* Nothing after the end but the end. */
			CHECK(hwt_qry_cond_branch(d, &taken) < 0);
			st = hwt_qry_sync_forward(d, &ip);
			check_status(st);
			if (st == -HWT_ERR_EOS)
				break;
		}
	}
	CHECK(budget != (size_t)-1);
	hwt_qry_delete(d);
}

/* The raw event stream, with a snapshot replayed alongside. */
static void run_events(const uint8_t *data, size_t size, uint32_t errata,
		       uint32_t flags)
{
	struct hwt_qry_config cfg;
	struct hwt_evt_decoder *d, *snap;
	struct hwt_event ev, sev;
	size_t budget = 16 * size + 64, n = 0;
	int err, serr, replay = 0;

	hwt_qry_config_init(&cfg);
	cfg.begin = data;
	cfg.end = data + size;
	cfg.errata = errata;
	cfg.flags = flags;
	d = hwt_evt_new(&cfg);
	snap = hwt_evt_new(&cfg);
	CHECK(d && snap);

	err = hwt_evt_sync_forward(d);
	while (budget--) {
		if (err < 0) {
			err = hwt_evt_sync_forward(d);
			if (err == -HWT_ERR_EOS)
				break;
			continue;
		}
		if (++n == 7) {
			hwt_evt_copy(snap, d);
			replay = 1;
		}
		err = hwt_evt_next(d, &ev);
		/* Until the first error (then @d resyncs, @snap not). */
		if (replay) {
			serr = hwt_evt_next(snap, &sev);
			CHECK(serr == err);
			if (!err)
				CHECK(!memcmp(&ev, &sev, sizeof(ev)));
			else
				replay = 0;
		}
		if (!err) {
			CHECK(ev.type < HWT_EV_NTYPES);
			if (ev.type == HWT_EV_TNT)
				CHECK(ev.u.tnt.size >= 1 &&
				      ev.u.tnt.size <= 47);
		}
	}
	CHECK(budget != (size_t)-1);
	hwt_evt_delete(d);
	hwt_evt_delete(snap);
}

/*
 * Time across a cut (-j), at the first few PSBs: the estimate ends or
 * says it did not get there, and a state is the same as itself from
 * there unless the PSB+ there does not decode.
 */
static void run_time_cut(const uint8_t *data, size_t size, uint32_t flags)
{
	static const uint8_t psb[4] = { 0x02, 0x82, 0x02, 0x82 };
	struct hwt_time_tracker tt;
	struct hwt_qry_config cfg;
	const uint8_t *p = data;
	int r;

	hwt_qry_config_init(&cfg);
	cfg.begin = data;
	cfg.end = data + size;
	cfg.flags = flags;
	cfg.time.cpuid_0x15_eax = 1;
	cfg.time.cpuid_0x15_ebx = 3;
	for (int i = 0; i < 3; i++, p++) {
		struct hwt_evt_decoder *d;

		p = memmem(p, size - (size_t)(p - data), psb, sizeof(psb));
		if (!p)
			break;
		r = hwt_evt_time_warm(&cfg, (uint64_t)(p - data), size, &tt);
		CHECK(r == 0 || r == 1);
		if (hwt_evt_time_same_from(&cfg, (uint64_t)(p - data), &tt,
					   &tt) == 1)
			continue;
		d = hwt_evt_new(&cfg);
		CHECK(d);
		CHECK(hwt_evt_sync_set(d, (uint64_t)(p - data)) < 0);
		hwt_evt_delete(d);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint32_t all = HWT_PT_ERRATUM_BDM70 | HWT_PT_ERRATUM_SKD007 |
			     HWT_PT_ERRATUM_SKD010 | HWT_PT_ERRATUM_APL12 |
			     HWT_PT_ERRATUM_APL11 | HWT_PT_ERRATUM_SKZ84 |
			     HWT_PT_ERRATUM_SKL168;
	uint64_t h;

	if (!size)
		return 0;
	h = fnv(data, size);
	run_query(data, size, h, 0, 0);
	run_query(data, size, h ^ 0x5a5a5a5a5a5a5a5aull, all,
		  HWT_QRY_EVENT_TRACE | HWT_QRY_KEEP_TCAL_ON_OVF);
	run_events(data, size, (uint32_t)h & all, (uint32_t)(h >> 32) & 0x1f);
	run_time_cut(data, size, (uint32_t)(h >> 40) & HWT_QRY_NO_CYC);
	return 0;
}

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target for where hwt flow --time-range starts a decode
 * (src/cli/seek.c, cli_seek_find()): the input is a raw trace after a
 * 2-byte header that picks the window's start (byte 0: the TSC of the
 * trace's TSC packet of that index, plus byte 1; or, if byte 0 is 255,
 * past every TSC) and the size of the pieces the trace is read in (byte
 * 1), then read whole.
 *
 * None may crash, hang or leak. Where it says a PSB, that PSB must be
 * one: its bytes the PSB pattern, its TSC before the window; and, read
 * whole, the time state it gives must be the one a decoder that came from
 * the trace's start has there (hwt_evt_time_watch()), or one that gives
 * the same times from there (hwt_evt_time_same_from()): else it aborts.
 * (In pieces, the decode's time goes from piece to piece as time_at()'s
 * does: a damaged trace's need not be one decoder's.)
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hwt/pt.h>
#include <hwt/query.h>

#include "cli/cli.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The TSC of the @k-th TSC packet of @buf (the last if fewer), or 0. */
static uint64_t kth_tsc(const uint8_t *buf, size_t len, unsigned k)
{
	struct hwt_pkt_decoder *pd = hwt_pkt_decoder_new(buf, len);
	struct hwt_pt_packet p;
	uint64_t tsc = 0;
	unsigned n = 0;
	int err;

	if (!pd)
		return 0;
	err = hwt_pkt_sync_forward(pd);
	while (err >= 0 && n <= k) {
		err = hwt_pkt_next(pd, &p);
		if (err == 0)
			break;
		if (err < 0) {
			err = hwt_pkt_sync_forward(pd);
			continue;
		}
		if (p.type == HWT_PT_TSC) {
			tsc = p.u.tsc;
			n++;
		}
	}
	hwt_pkt_decoder_delete(pd);
	return tsc;
}

/* The time state a decoder from the start has on reaching @off: 1. */
static int watched(const struct hwt_qry_config *cfg, uint64_t off,
		   struct hwt_time_tracker *tt)
{
	struct hwt_evt_decoder *d = hwt_evt_new(cfg);
	struct hwt_event ev;
	int err, got = 0;
	unsigned steps = 0;

	CHECK(d);
	hwt_evt_time_watch(d, off);
	err = hwt_evt_sync_forward(d);
	while (err != -HWT_ERR_EOS && !(got = hwt_evt_time_watched(d, tt)) &&
	       steps++ < 1000000) {
		err = err < 0 ? hwt_evt_sync_forward(d) : hwt_evt_next(d, &ev);
	}
	hwt_evt_delete(d);
	return got;
}

/*
 * cli_seek_find() over @trace read in pieces of @piece bytes; with
 * @exact, the time it starts with must be one decoder's (one piece).
 */
static void seek(const uint8_t *trace, size_t len, uint64_t start,
		 size_t piece, int exact)
{
	struct cli_select sel = { 0 };
	struct hwt_qry_config cfg;
	struct hwt_time_tracker tt, fresh;
	struct cli_pieces p;
	struct cli_seek sk;
	char win[48];
	int r;

	snprintf(win, sizeof(win), "0x%llx,", (unsigned long long)start);
	CHECK(cli_select_parse(&sel, "fuzz", "--time-range", win) == 1);
	hwt_qry_config_init(&cfg);
	cfg.time.cpuid_0x15_eax = 1;
	cfg.time.cpuid_0x15_ebx = 4;
	cfg.time.mtc_freq = 3;
	cli_pieces_init_mem(&p, trace, len);
	p.piece = piece;

	fuzz_quiet();
	r = cli_seek_find(&p, NULL, &cfg, &sel, NULL, &sk);
	fuzz_loud();
	CHECK(r == 0 || r == 1);
	if (r) {
		CHECK(sk.off + HWT_PT_PSB_SIZE <= len);
		CHECK(trace[sk.off] == 0x02 && trace[sk.off + 1] == 0x82);
		CHECK(cli_select_before(&sel, sk.tsc, NULL));
	}
	if (r && exact) {
		cfg.begin = trace;
		cfg.end = trace + len;
		if (watched(&cfg, sk.off, &tt)) {
			/* (A new decoder's: reset keeps config and flags.) */
			fresh = tt;
			hwt_time_tracker_reset(&fresh);
			CHECK(hwt_time_tracker_same(&tt, sk.have_t ? &sk.t :
								    &fresh) ||
			      hwt_evt_time_same_from(&cfg, sk.off, &tt,
						     sk.have_t ? &sk.t :
								 &fresh) > 0);
		}
	}
	cli_pieces_fini(&p);
	cli_select_free(&sel);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *trace;
	uint64_t start;
	size_t len;

	if (size < 2)
		return 0;
	trace = data + 2;
	len = size - 2;
	start = data[0] == 255 ? UINT64_MAX - 1 :
		kth_tsc(trace, len, data[0]) + data[1];
	/* Small pieces: walks across their cuts. One: the time exact. */
	seek(trace, len, start, 64 + (size_t)data[1] * 16, 0);
	seek(trace, len, start, len ? len : 1, 1);
	return 0;
}

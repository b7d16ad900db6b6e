/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Where hwt flow may start decoding a stream when every line it shows is
 * at or after a time (--time-range with a start in every window): at a
 * PSB before that time, as perf script --time's fast-forward does,
 * instead of at the trace's start (cli.h, cli_seek_find()).
 *
 * Found by reading the packets before it (the packet layer, some ten
 * times cheaper than following the flow through them; where the time
 * needs it, the query layer too, some four times). To print what a decode
 * from the start prints, the PSB must be one where a decoder starting
 * there knows what one that ran into it knows, as at -j's cuts (cuts.c):
 *   - reached at a packet's end, with no OVF waiting for its IP and no
 *     bad packet since the PSB before; its PSB+ whole, with a TSC, the IP
 *     (FUP) and the exec mode (MODE.Exec, the last one's before it, else
 *     it is an error of the decoder that ran into it); the TSX state said
 *     again (MODE.TSX), or none said before it (a CPU that has TSX says
 *     it in every PSB+: none before means no transaction); a query
 *     decoder syncs there (the PSB+'s values are good: a CBR of 0 is
 *     not);
 *   - the time a decoder running into it has: none, where the trace
 *     before has no timing packets but TSCs and CBRs (a PSB+ sets
 *     those); else the one a query decoder from the trace's start has
 *     there, in the pieces the decode reads (each seeded with the time
 *     the one before reached), which costs a pass of the query layer
 *     (events, no flow) over the trace before: exact where a calibration
 *     (CYC) or an MTC's counter carries over PSBs;
 *   - every line before it is before the windows: the trace's TSCs up to
 *     the first one in (or past) a window only go up (the times the
 *     flow gives between two TSCs stay below the second);
 *   - no block packets (BBP, BIP, BEP) before it: a BIP's size is the
 *     BBP's before it, which the query layer may read otherwise;
 *   - another such PSB follows before the windows: the decode runs into
 *     that one as a decode from the start does, and meets what it meets
 *     there (in a damaged trace, an error where the flow does not come
 *     to its PSB+'s IP), as at -j's cuts.
 * Lines in the windows are then the same; what is not looked for in the
 * trace not decoded is the flow's own errors there (code not found, say),
 * which a decode from the start would count as hidden. Lost data there
 * (OVF, bad packets) is counted (@ovf, @bad).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <hwt/perfdata.h>
#include <hwt/pt.h>
#include <hwt/query.h>

#include "cli/cli.h"

/* The last good PSBs the walk passed: the start is the one before the
 * latest. */
#define SEEK_TRIES 2
/* What of a MODE.Exec is the mode. */
#define EXEC_MODE (HWT_PT_EXEC_CSL | HWT_PT_EXEC_CSD)
/* The walk reads the trace in pieces of this size at most. */
#define SEEK_PIECE (4u << 20)

struct seek_psb {
	uint64_t off, tsc;
	uint64_t ovf, bad;	/* lost data before it */
	uint8_t timing;		/* MTC, TMA or CYC packets before it */
};

struct walk {
	const struct cli_select *sel;
	const struct hwt_pd_time_conv *tc;
	/* Time seen so far: the largest TSC, which must never go back. */
	uint64_t max_tsc;
	uint8_t have_tsc, done;
	/* No seek: a time that goes back, a packet whose size the packets
	 * before decide (BIP: the query layer may read them otherwise), no
	 * memory. */
	uint8_t refuse;
	uint8_t ovf_pending, tsx_said, timing, cbr_said;
	/* The last MODE.Exec's mode (CS.L, CS.D), if any. */
	uint8_t mode, have_mode;
	uint64_t ovf, bad;
	struct seek_psb good[SEEK_TRIES];
	size_t ngood;
	/* The PSB+ being read. */
	struct {
		uint64_t off, tsc, ovf, bad;
		uint8_t on, ok, tsc_set, fup, mode, tsx, cbr, timing;
		uint8_t mode_before, have_mode_before;
	} cur;
};

static void psb_begin(struct walk *w, uint64_t off, int clean)
{
	memset(&w->cur, 0, sizeof(w->cur));
	w->cur.on = 1;
	w->cur.off = off;
	w->cur.ok = clean && !w->ovf_pending;
	w->cur.ovf = w->ovf;
	w->cur.bad = w->bad;
	w->cur.timing = w->timing;
	w->cur.mode_before = w->mode;
	w->cur.have_mode_before = w->have_mode;
}

static void psb_end(struct walk *w)
{
	struct seek_psb *g;

	w->cur.on = 0;
	if (!w->cur.ok || !w->cur.tsc_set || !w->cur.fup || !w->cur.mode ||
	    (!w->cur.tsx && w->tsx_said))
		return;
	if (w->ngood == SEEK_TRIES)
		memmove(w->good, w->good + 1, (SEEK_TRIES - 1) *
			sizeof(*w->good));
	else
		w->ngood++;
	g = &w->good[w->ngood - 1];
	g->off = w->cur.off;
	g->tsc = w->cur.tsc;
	g->ovf = w->cur.ovf;
	g->bad = w->cur.bad;
	/* (A CBR before that this PSB+ does not say again: its state.) */
	g->timing = w->cur.timing || (w->cbr_said && !w->cur.cbr);
}

/* A packet at stream offset @off; 0 once the windows are reached. */
static int walk_packet(struct walk *w, const struct hwt_pt_packet *p,
		       uint64_t off, int clean)
{
	if (p->type == HWT_PT_PSB) {
		psb_begin(w, off, clean);
		return 1;
	}
	if (p->type == HWT_PT_BBP || p->type == HWT_PT_BIP ||
	    p->type == HWT_PT_BEP) {
		w->refuse = 1;
		return 0;
	}
	if (p->type == HWT_PT_OVF) {
		w->ovf++;
		w->ovf_pending = 1;
	} else if (hwt_pt_is_ip_packet(p->type)) {
		w->ovf_pending = 0;
	}
	if (p->type == HWT_PT_MODE_EXEC) {
		w->mode = p->u.exec & EXEC_MODE;
		w->have_mode = 1;
	}
	if (p->type == HWT_PT_MODE_TSX)
		w->tsx_said = 1;
	else if (p->type == HWT_PT_MTC || p->type == HWT_PT_TMA ||
		 p->type == HWT_PT_CYC)
		w->timing = 1;
	else if (p->type == HWT_PT_CBR)
		w->cbr_said = 1;
	if (p->type == HWT_PT_TSC) {
		if (w->have_tsc && p->u.tsc < w->max_tsc) {
			w->refuse = 1;
			return 0;
		}
		w->max_tsc = p->u.tsc;
		w->have_tsc = 1;
		if (!cli_select_before(w->sel, p->u.tsc, w->tc)) {
			w->done = 1;
			return 0;
		}
	}
	if (!w->cur.on)
		return 1;
	switch (p->type) {
	case HWT_PT_PSBEND:
		psb_end(w);
		break;
	case HWT_PT_TSC:
		w->cur.tsc = p->u.tsc;
		w->cur.tsc_set = 1;
		break;
	case HWT_PT_FUP:
		w->cur.fup = 1;
		break;
	case HWT_PT_MODE_EXEC:
		w->cur.mode = 1;
		/* One that differs from the mode before is an error of the
		 * decoder that ran into it, which one starting here has not. */
		if (w->cur.have_mode_before &&
		    (p->u.exec & EXEC_MODE) != w->cur.mode_before)
			w->cur.ok = 0;
		break;
	case HWT_PT_MODE_TSX:
		w->cur.tsx = 1;
		break;
	case HWT_PT_CBR:
		w->cur.cbr = 1;
		break;
	case HWT_PT_PAD: case HWT_PT_PIP: case HWT_PT_TMA:
	case HWT_PT_VMCS: case HWT_PT_MNT:
		break;
	default:
		/* Not a PSB+'s (an OVF in it, say): not a place to start. */
		w->cur.ok = 0;
		w->cur.on = 0;
		break;
	}
	return 1;
}

/*
 * Walk [@buf, @buf + @upto) of the stream at @base (where a packet may
 * start; @len may be longer so that one that runs over @upto is whole),
 * from its first PSB if @first, else from offset 0 (a PSB, reached cleanly
 * if @clean). Returns the offset it stopped at, relative to @buf.
 */
static uint64_t walk_buf(struct walk *w, const uint8_t *buf, size_t len,
			 size_t upto, uint64_t base, int first, int clean)
{
	struct hwt_pkt_decoder *pd = hwt_pkt_decoder_new(buf, len);
	struct hwt_pt_packet p[64];
	uint64_t off = 0, at;
	unsigned n;
	int err;

	if (!pd) {
		w->refuse = 1;
		return 0;
	}
	err = first ? hwt_pkt_sync_forward(pd) : hwt_pkt_sync_set(pd, 0);
	while (err >= 0 && hwt_pkt_get_offset(pd, &off) >= 0 && off < upto) {
		err = hwt_pkt_next_batch(pd, p, 64, &n);
		for (unsigned i = 0; i < n; i++) {
			if (!walk_packet(w, &p[i], base + off, clean))
				goto out;
			clean = 1;
			off += p[i].size;
			if (off >= upto)
				goto out;
		}
		if (err == -HWT_ERR_EOS || (!err && n < 64))
			break;
		if (err < 0) {
			/* A bad packet: lost data, and the next PSB is met
			 * by a resync, not as one decoder meets it. */
			w->bad++;
			w->cur.on = 0;
			clean = 0;
			err = hwt_pkt_sync_forward(pd);
			if (hwt_pkt_get_offset(pd, &at) >= 0 && at < upto)
				continue;
			break;
		}
	}
out:
	hwt_pkt_decoder_delete(pd);
	return off;
}

/*
 * The time state the decode has at stream offset @off (a PSB): a query
 * decoder's from the start, piece by piece as the decode reads the
 * trace, each piece's decoder seeded with the state the one before had on
 * reaching the next piece's PSB (flow_run.c's carry). 1 and *@tt, or 0
 * if it did not come there.
 */
static int time_at(const struct cli_pieces *trace, const uint8_t *whole,
		   const struct hwt_qry_config *tmpl, uint64_t off,
		   struct hwt_time_tracker *tt)
{
	struct hwt_qry_config cfg = *tmpl;
	struct hwt_time_tracker carry;
	struct cli_pieces p;
	int have = 0, got = 0;

	cli_pieces_init(&p, trace->size, trace->read, trace->ctx);
	p.piece = trace->piece;
	/* A trace in memory: one piece, not copied. */
	if (whole) {
		p.buf = (uint8_t *)whole;
		p.len = p.cut = trace->size;
		p.last = 1;
	}
	while (!got && (whole || cli_pieces_next(&p) > 0) && p.base <= off) {
		uint64_t to = off < p.base + p.cut ? off - p.base : p.cut;
		struct hwt_evt_decoder *d;
		struct hwt_event ev;
		int err, reached = 0;

		cfg.begin = p.buf;
		cfg.end = p.buf + p.len;
		d = hwt_evt_new(&cfg);
		if (!d)
			break;
		if (have)
			hwt_evt_time_seed(d, &carry);
		hwt_evt_time_watch(d, to);
		err = p.base ? hwt_evt_sync_set(d, 0) : hwt_evt_sync_forward(d);
		while (!(reached = hwt_evt_time_watched(d, &carry)) &&
		       err != -HWT_ERR_EOS)
			err = err < 0 ? hwt_evt_sync_forward(d) :
					hwt_evt_next(d, &ev);
		hwt_evt_delete(d);
		have = reached;
		got = reached && to == off - p.base;
		if (whole)
			break;
	}
	if (!whole)
		cli_pieces_fini(&p);
	if (got)
		*tt = carry;
	return got;
}

/*
 * Does a query decoder sync at the PSB at @off (its PSB+ decodes: a CBR
 * of 0 in it, say, is an error there, which the packets do not show)?
 */
static int syncs_at(const struct cli_pieces *trace,
		    const struct hwt_qry_config *tmpl, uint64_t off)
{
	struct hwt_qry_config cfg = *tmpl;
	struct hwt_evt_decoder *d;
	uint8_t buf[4096];
	size_t len = sizeof(buf);
	int ok;

	if (len > trace->size - off)
		len = (size_t)(trace->size - off);
	if (trace->read(trace->ctx, off, buf, len) < 0)
		return 0;
	cfg.begin = buf;
	cfg.end = buf + len;
	d = hwt_evt_new(&cfg);
	ok = d && hwt_evt_sync_set(d, 0) >= 0;
	hwt_evt_delete(d);
	return ok;
}

int cli_seek_find(const struct cli_pieces *trace, const uint8_t *whole,
		  const struct hwt_qry_config *cfg, const struct cli_select *sel,
		  const struct hwt_pd_time_conv *tc, struct cli_seek *seek)
{
	const struct seek_psb *g;
	struct cli_pieces scan;
	struct walk w;
	int more, clean = 1;
	uint64_t stop = 0;

	memset(seek, 0, sizeof(*seek));
	if (!sel->nwin)
		return 0;
	for (size_t i = 0; i < sel->nwin; i++)
		if (!sel->win[i].from.set)
			return 0;
	memset(&w, 0, sizeof(w));
	w.sel = sel;
	w.tc = tc;
	cli_pieces_init(&scan, trace->size, trace->read, trace->ctx);
	scan.piece = trace->piece < SEEK_PIECE ? trace->piece : SEEK_PIECE;
	while (!w.done && !w.refuse && (more = cli_pieces_next(&scan)) > 0) {
		stop = scan.base + walk_buf(&w, scan.buf, scan.len, scan.cut,
					    scan.base, scan.base == 0, clean);
		/* (The next piece starts at its PSB: met as one decoder
		 * meets it if this walk ended there.) */
		clean = stop == scan.base + scan.cut;
	}
	cli_pieces_fini(&scan);
	/* No TSC in a window: nothing to show (the decode stops early). */
	if (w.refuse || !w.done)
		return 0;
	/*
	 * The good PSB before the latest: the decode comes to the latest as
	 * one from the start does (above).
	 */
	if (w.ngood < 2)
		return 0;
	g = &w.good[w.ngood - 2];
	if (!syncs_at(trace, cfg, g->off) ||
	    (g->timing && !time_at(trace, whole, cfg, g->off, &seek->t)))
		return 0;
	seek->have_t = g->timing;
	seek->off = g->off;
	seek->tsc = g->tsc;
	seek->ovf = g->ovf;
	seek->bad = g->bad;
	return 1;
}

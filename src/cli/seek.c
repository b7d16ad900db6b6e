/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Where hwt flow may start decoding a stream when every line it shows is
 * at or after a time (--time-range with a start in every window): at a
 * PSB before that time, as perf script --time's fast-forward does,
 * instead of at the trace's start (cli.h, cli_seek_find()).
 *
 * Found by reading the packets before it, which is some ten times
 * cheaper than following the flow through them. To print what a decode
 * from the start prints, the PSB must be one where a decoder starting
 * there knows what one that ran into it knows, as at -j's cuts (cuts.c):
 *   - reached at a packet's end, with no OVF waiting for its IP and no
 *     bad packet since the PSB before; its PSB+ whole, with a TSC, the IP
 *     (FUP) and the exec mode (MODE.Exec); the TSX state said again
 *     (MODE.TSX), or none said before it (a CPU that has TSX says it in
 *     every PSB+: none before means no transaction);
 *   - the time a decoder running into it has: none, where its PSB+
 *     sets all of it (a TSC, no calibration carried over); else (CYC
 *     packets' calibration) the state a decoder has after the two PSBs
 *     before it (-j's estimate, hwt_evt_time_warm()), if one that had
 *     the state two PSBs further back comes to it with the same: the
 *     state there no longer depends on what came before;
 *   - every line before it is before the windows: the trace's TSCs up to
 *     the first one in (or past) a window only go up (the times the
 *     flow gives between two TSCs stay below the second);
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

/* The last good PSBs the walk passed, of which two must check out. */
#define SEEK_TRIES 6
/* The walk reads the trace in pieces of this size at most. */
#define SEEK_PIECE (4u << 20)

struct seek_psb {
	uint64_t off, tsc;
	uint64_t back2, back4;	/* the PSBs two and four before it */
	uint64_t ovf, bad;	/* lost data before it */
};

struct walk {
	const struct cli_select *sel;
	const struct hwt_pd_time_conv *tc;
	/* Time seen so far: the largest TSC, which must never go back. */
	uint64_t max_tsc;
	uint8_t have_tsc, back, done;
	uint8_t ovf_pending, tsx_said;
	uint64_t ovf, bad;
	/* The PSBs passed: the last five's offsets (any), and the good. */
	uint64_t psb[5];
	size_t npsb;
	struct seek_psb good[SEEK_TRIES];
	size_t ngood;
	/* The PSB+ being read. */
	struct {
		uint64_t off, tsc, ovf, bad;
		uint8_t on, ok, tsc_set, fup, mode, tsx;
	} cur;
};

static void psb_begin(struct walk *w, uint64_t off, int clean)
{
	memmove(w->psb + 1, w->psb, sizeof(w->psb) - sizeof(w->psb[0]));
	w->psb[0] = off;
	w->npsb++;
	memset(&w->cur, 0, sizeof(w->cur));
	w->cur.on = 1;
	w->cur.off = off;
	w->cur.ok = clean && !w->ovf_pending;
	w->cur.ovf = w->ovf;
	w->cur.bad = w->bad;
}

static void psb_end(struct walk *w)
{
	struct seek_psb *g;

	w->cur.on = 0;
	if (!w->cur.ok || !w->cur.tsc_set || !w->cur.fup || !w->cur.mode ||
	    (!w->cur.tsx && w->tsx_said) || w->npsb < 3)
		return;
	if (w->ngood == SEEK_TRIES)
		memmove(w->good, w->good + 1, (SEEK_TRIES - 1) *
			sizeof(*w->good));
	else
		w->ngood++;
	g = &w->good[w->ngood - 1];
	g->off = w->cur.off;
	g->tsc = w->cur.tsc;
	g->back2 = w->psb[2];
	g->back4 = w->npsb >= 5 ? w->psb[4] : w->psb[2];
	g->ovf = w->cur.ovf;
	g->bad = w->cur.bad;
}

/* A packet at stream offset @off; 0 once the windows are reached. */
static int walk_packet(struct walk *w, const struct hwt_pt_packet *p,
		       uint64_t off, int clean)
{
	if (p->type == HWT_PT_PSB) {
		psb_begin(w, off, clean);
		return 1;
	}
	if (p->type == HWT_PT_OVF) {
		w->ovf++;
		w->ovf_pending = 1;
	} else if (hwt_pt_is_ip_packet(p->type)) {
		w->ovf_pending = 0;
	}
	if (p->type == HWT_PT_MODE_TSX)
		w->tsx_said = 1;
	if (p->type == HWT_PT_TSC) {
		if (w->have_tsc && p->u.tsc < w->max_tsc) {
			w->back = 1;
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
		break;
	case HWT_PT_MODE_TSX:
		w->cur.tsx = 1;
		break;
	case HWT_PT_PAD: case HWT_PT_PIP: case HWT_PT_TMA: case HWT_PT_CBR:
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
		w->back = 1;	/* (no seek) */
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
 * The time state a decoder starting at the PSB at @from with @seed has on
 * reaching the one at @to (offsets in @cfg's buffer): 1, or 0 if it meets
 * an error first.
 */
static int time_reach(const struct hwt_qry_config *cfg, uint64_t from,
		      const struct hwt_time_tracker *seed, uint64_t to,
		      struct hwt_time_tracker *tt)
{
	struct hwt_evt_decoder *d = hwt_evt_new(cfg);
	struct hwt_event ev;
	int got = 0;

	if (!d)
		return 0;
	hwt_evt_time_seed(d, seed);
	hwt_evt_time_watch(d, to);
	if (hwt_evt_sync_set(d, from) >= 0)
		while (!(got = hwt_evt_time_watched(d, tt)) &&
		       hwt_evt_next(d, &ev) >= 0)
			;
	hwt_evt_delete(d);
	return got;
}

/*
 * The time state to start @g's decode with, if it is the one a decoder
 * that ran into it has: none (1) where its PSB+ sets all of it (hwt_evt_time_same_from(): a decoder that had another state there
 * has the same times from there on). Else (a calibration from CYC
 * carries over PSBs) the state a decoder has after the two PSBs before
 * (hwt_evt_time_warm(), -j's estimate), if one that had the state of two
 * PSBs before those reaches it with the same (2, *@tt): the state there
 * no longer depends on what came before. 0: neither.
 */
static int time_start(const struct hwt_qry_config *tmpl,
		      const struct cli_pieces *trace, const struct seek_psb *g,
		      struct hwt_time_tracker *tt)
{
	struct hwt_qry_config cfg = *tmpl;
	struct hwt_time_tracker warm, fresh, before, again;
	/* Past the PSB+ to the first event after it. */
	uint64_t end = g->off + (1u << 20), len, at, at2;
	uint8_t *buf;
	int ok = 0;

	if (end > trace->size)
		end = trace->size;
	len = end - g->back4;
	if (len > (64u << 20) || !(buf = malloc(len ? len : 1)))
		return 0;
	if (trace->read(trace->ctx, g->back4, buf, len) < 0)
		goto out;
	cfg.begin = buf;
	cfg.end = buf + len;
	at = g->off - g->back4;
	at2 = g->back2 - g->back4;
	hwt_time_tracker_reset(&fresh);
	if (hwt_evt_time_warm(&cfg, at, at, &warm) <= 0)
		goto out;
	if (hwt_time_tracker_same(&warm, &fresh) ||
	    hwt_evt_time_same_from(&cfg, at, &warm, &fresh) > 0) {
		ok = 1;
	} else if (at2 && hwt_evt_time_warm(&cfg, at2, at2, &before) > 0 &&
		   time_reach(&cfg, at2, &before, at, &again) &&
		   hwt_time_tracker_same(&again, &warm)) {
		*tt = warm;
		ok = 2;
	}
out:
	free(buf);
	return ok;
}

int cli_seek_find(const struct cli_pieces *trace,
		  const struct hwt_qry_config *cfg, const struct cli_select *sel,
		  const struct hwt_pd_time_conv *tc, struct cli_seek *seek)
{
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
	while (!w.done && !w.back && (more = cli_pieces_next(&scan)) > 0) {
		stop = scan.base + walk_buf(&w, scan.buf, scan.len, scan.cut,
					    scan.base, scan.base == 0, clean);
		/* (The next piece starts at its PSB: met as one decoder
		 * meets it if this walk ended there.) */
		clean = stop == scan.base + scan.cut;
	}
	cli_pieces_fini(&scan);
	/* No TSC in a window: nothing to show (the decode stops early). */
	if (w.back || !w.done)
		return 0;
	/*
	 * Of the good PSBs whose time checks out, the one before the latest:
	 * the decode comes to the latest as one from the start does (above).
	 */
	for (size_t i = w.ngood, later = 0; i-- > 0;) {
		const struct seek_psb *g = &w.good[i];
		int t;

		if (!(t = time_start(cfg, trace, g, &seek->t)) || !later++)
			continue;
		seek->have_t = t == 2;
		seek->off = g->off;
		seek->tsc = g->tsc;
		seek->ovf = g->ovf;
		seek->bad = g->bad;
		return 1;
	}
	return 0;
}

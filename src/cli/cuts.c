/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Where hwt flow -j cuts a trace into segments (cli.h, cli_plan_cuts()):
 * at PSBs where a decoder starting there knows what one decoder running
 * into it knows, so that each segment decodes on its own as one thread
 * would. What cannot be seen from the packets (time, the exec mode and
 * TSX state a PSB+ does not say again, errors at a cut) flow_run.c checks
 * when it prints a segment.
 */
#include <stdint.h>
#include <stdlib.h>

#include <hwt/pt.h>

#include "cli/cli.h"

/* The trace being cut: a perf.data stream's (@hook) piece at @base. */
struct plan {
	const struct cli_flow_hook *hook;
	uint64_t base, size;
};

/*
 * The PSB+ the packet decoder is synchronised at: its TSC, and whether a
 * segment may start there. It must read to PSBEND, with the packets a
 * PSB+ holds, and give the IP (a FUP): else a segment starting there
 * would not know what one thread knows at that point (the IP carried
 * across a damaged PSB+, say, which an error names).
 */
static int psb_scan(struct hwt_pkt_decoder *pd, struct cli_cut *c)
{
	struct hwt_pt_packet p;
	int n = 0, fup = 0;

	c->tsc = 0;
	c->have_tsc = 0;
	while (hwt_pkt_next(pd, &p) > 0) {
		switch (p.type) {
		case HWT_PT_PSB:
			if (n++)
				return 0;
			break;
		case HWT_PT_PSBEND:
			return fup;
		case HWT_PT_TSC:
			c->tsc = p.u.tsc;
			c->have_tsc = 1;
			break;
		case HWT_PT_FUP:
			fup = 1;
			break;
		case HWT_PT_PAD: case HWT_PT_PIP: case HWT_PT_MODE_EXEC:
		case HWT_PT_MODE_TSX: case HWT_PT_TMA: case HWT_PT_CBR:
		case HWT_PT_VMCS: case HWT_PT_MNT:
			break;
		default:
			return 0;
		}
	}
	return 0;
}

/*
 * Does one decoder come to the PSB at @psb as a decoder starting there
 * does? Read from the PSB before. Not if a packet before runs into it
 * (the PSB's first byte ends a packet: one decoder reads on from that
 * packet, not from the PSB), nor while an OVF before it waits for the
 * packet that gives its IP (a FUP, or a TIP of any kind), which comes
 * from this PSB+: one decoder reports the overflow after it.
 * fuzz_cli_perfdata found both: lines printed by -j1 and not by -j2.
 */
static int psb_reached(struct hwt_pkt_decoder *pd, uint64_t psb)
{
	struct hwt_pt_packet p;
	uint64_t off = psb;
	int ovf = 0;

	if (hwt_pkt_sync_set(pd, psb) < 0 || hwt_pkt_sync_backward(pd) < 0)
		return 1;
	while (hwt_pkt_get_offset(pd, &off) >= 0 && off < psb) {
		if (hwt_pkt_next(pd, &p) <= 0)
			return !ovf;
		if (p.type == HWT_PT_OVF)
			ovf = 1;
		else if (hwt_pt_is_ip_packet(p.type))
			ovf = 0;
	}
	return off == psb && !ovf;
}

/*
 * The first PSB after @off (at or after @off + 1), and its TSC. Returns
 * 1 if a segment may start there (psb_scan, psb_reached), 0 if not, -1
 * if there is no PSB.
 */
static int psb_after(struct hwt_pkt_decoder *pd, uint64_t off,
		     struct cli_cut *c)
{
	int ok;

	if (hwt_pkt_sync_set(pd, off) < 0 || hwt_pkt_sync_forward(pd) < 0 ||
	    hwt_pkt_get_sync_offset(pd, &c->off) < 0)
		return -1;
	ok = psb_scan(pd, c);
	if (ok > 0 && !psb_reached(pd, c->off))
		ok = 0;
	return ok;
}

/*
 * The PSB to cut at, at or after @want and before @want + @chunk and
 * @limit; perf.data: where no lost-data note is near (cli_flow_hook), so
 * not the first one: the window cut_ok looks at runs from the PSB before
 * the cut to the PSB after it. Each PSB+ is read once.
 * Returns 0 (offsets in @c are the stream's), 1 if there is none there,
 * -1 if none further.
 */
static int find_cut(const struct plan *pl, struct hwt_pkt_decoder *pd,
		    uint64_t want, uint64_t chunk, uint64_t limit,
		    struct cli_cut *c)
{
	const struct cli_flow_hook *h = pl->hook;
	struct cli_cut prev = { 0 }, cur, next;
	int good, good_next;

	good = psb_after(pd, want - 1, &cur);
	if (h) {
		if (good < 0 || cur.off >= limit)
			return -1;
		prev = cur;
		good = psb_after(pd, prev.off, &cur);
	}
	for (;;) {
		if (good < 0 || cur.off >= limit)
			return -1;
		/* (The scan stands on the first PSB of its window.) */
		if ((h ? prev.off : cur.off) >= want + chunk)
			return 1;
		if (good && !h)
			break;
		good_next = psb_after(pd, cur.off, &next);
		if (good_next < 0) {
			next.off = pl->size;
			next.have_tsc = 0;
		}
		if (good && h->cut_ok(h->ctx, pl->base + prev.off,
				      pl->base + next.off, prev.tsc, next.tsc,
				      prev.have_tsc && next.have_tsc))
			break;
		prev = cur;
		cur = next;
		good = good_next;
	}
	*c = cur;
	c->off += pl->base;
	return 0;
}

size_t cli_plan_cuts(const uint8_t *trace, size_t size, uint64_t base,
		     const struct cli_flow_hook *hook, uint64_t chunk,
		     uint64_t limit, struct cli_cut **cuts)
{
	const struct plan pl = { hook, base, size };
	struct hwt_pkt_decoder *pd;
	struct cli_cut *c = NULL, cut;
	uint64_t want;
	size_t n = 0, cap = 0;

	pd = hwt_pkt_decoder_new(trace, size);
	if (!pd)
		goto one;
	for (want = chunk; want < limit; want += chunk) {
		int r = find_cut(&pl, pd, want, chunk, limit, &cut);

		if (r < 0)
			break;
		if (r > 0)
			continue;
		if (n && cut.off <= c[n - 1].off)
			continue;
		if (n == cap) {
			struct cli_cut *nc;

			cap = cap ? 2 * cap : 64;
			nc = realloc(c, cap * sizeof(*nc));
			if (!nc)
				break;
			c = nc;
		}
		c[n++] = cut;
		if (cut.off - base > want)
			want = cut.off - base;
	}
	hwt_pkt_decoder_delete(pd);
one:
	*cuts = c;
	return n;
}

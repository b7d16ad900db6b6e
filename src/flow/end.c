/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Where a piece of a trace ends (include/hwt/flow.h, struct hwt_blk_end).
 *
 * Pieces are cut at PSBs, but a decode cannot stop right at one: the
 * instructions from the last branch before the PSB to the PSB+'s IP
 * still belong to this piece (the next one starts at that IP), and the
 * decoder only learns the IP from the PSB+ itself. So the piece runs on
 * into the next one's PSB+ (which is why a piece holds it) and stops at
 * the block that starts there.
 */
#include <hwt/flow.h>

void hwt_blk_end_init(struct hwt_blk_end *e, uint64_t next)
{
	e->next = next;
	e->ip = 0;
	e->stopping = 0;
}

/* The query layer reports a PSB+ it runs into as status updates; their
 * offset says which PSB it was. (The sync offset only moves on a sync.) */
int hwt_blk_end_past(const struct hwt_blk_end *e,
		     const struct hwt_blk_decoder *d, int sync)
{
	uint64_t off;
	int err;

	if (!e->next)
		return 0;
	err = sync ? hwt_blk_get_sync_offset(d, &off) :
		     hwt_blk_get_offset(d, &off);
	return err >= 0 && off >= e->next;
}

int hwt_blk_end_event(struct hwt_blk_end *e, const struct hwt_blk_decoder *d,
		      const struct hwt_event *ev)
{
	(void) d;
	if (e->stopping)
		return ev->status_update ? 1 : -1;
	/*
	 * By its PSB, not by where the decoder is: it may have read on into
	 * the next piece's PSB+ before reporting the status updates of a
	 * PSB+ of ours (a PSB+ with tracing off, a TIP.PGE, then the next
	 * PSB: fuzz_cli_perfdata found -j2 stopping early there).
	 */
	if (!ev->status_update || !e->next || ev->psb < e->next)
		return 0;
	/* Tracing off at the next PSB+: nothing more of ours to come. */
	if (!hwt_event_resume_ip(ev, &e->ip))
		return -1;
	e->stopping = 1;
	return 1;
}

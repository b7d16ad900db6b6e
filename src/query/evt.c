/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The event decoder: Intel PT packets -> one stream of events.
 *
 * Most packets bind to a later one: MODE.Exec to the next TIP/TIP.PGE, PIP
 * and VMCS to the TIP of an asynchronous branch, MODE.TSX/PTW/EXSTOP/CFE to
 * a FUP, a FUP (without such a partner) to the TIP of the interrupt, OVF to
 * the FUP or TIP.PGE where tracing resumes, everything in PSB+ to PSBEND.
 * Such packets queue an event keyed by the packet type it waits for; when
 * that packet comes, the queued events are released one by one with its IP
 * and the time at that point. Packets that bind to nothing produce a
 * standalone event at once.
 *
 * The rules (and their order: which event goes first when a packet releases
 * several) are those of libipt's event decoder, which hwt is checked
 * against; the CPU errata that change the packet stream (BDM70, SKD010,
 * APL11, APL12; SKD007, SKZ84 on single packets) are handled here too.
 *
 * Packet handlers return 0 when they produced an event (and have fetched
 * the next packet if they are done with the current one), > 0 when they
 * consumed the packet without an event, < 0 on error.
 */
#include <stdlib.h>
#include <string.h>

#include "pt/packet_internal.h"
#include "query/evt.h"

/* ------------------------------------------------------------------ */
/* Event queue                                                         */
/* ------------------------------------------------------------------ */

static inline uint8_t evq_inc(uint8_t i)
{
	return (uint8_t)((i + 1) & (HWT_EVQ_MAX - 1));
}

static inline uint8_t evq_dec(uint8_t i)
{
	return (uint8_t)((i - 1) & (HWT_EVQ_MAX - 1));
}

static void evq_init(struct hwt_evq *q)
{
	q->begin = 0;
	q->end = 0;
}

static struct hwt_event *evq_standalone(struct hwt_evq *q)
{
	memset(&q->standalone, 0, sizeof(q->standalone));
	return &q->standalone;
}

/*
 * One slot stays free so the event dequeued last stays intact (it is
 * being reported) until the next enqueue.
 */
static struct hwt_event *evq_enqueue(struct hwt_evq *q, uint32_t evb)
{
	uint8_t idx = q->end, end = evq_inc(idx);

	if (q->begin == evq_inc(end))
		return NULL;
	q->end = end;
	q->q[idx].binding = evb;
	memset(&q->q[idx].ev, 0, sizeof(q->q[idx].ev));
	return &q->q[idx].ev;
}

/* Remove the first event bound to any of @evb; keep the others' order. */
static struct hwt_event *evq_dequeue(struct hwt_evq *q, uint32_t evb)
{
	struct hwt_evq_entry entry;
	uint8_t begin = q->begin, end = q->end, idx;

	if (begin == end)
		return NULL;
	if (q->q[begin].binding & evb) {
		q->begin = evq_inc(begin);
		return &q->q[begin].ev;
	}
	for (idx = evq_inc(begin);; idx = evq_inc(idx)) {
		if (idx == end)
			return NULL;
		if (q->q[idx].binding & evb)
			break;
	}
	/* Move the ones before it up a slot; it goes where begin was. */
	entry = q->q[idx];
	for (;;) {
		uint8_t prev = evq_dec(idx);

		q->q[idx] = q->q[prev];
		if (prev == begin)
			break;
		idx = prev;
	}
	q->begin = idx;
	q->q[begin] = entry;
	return &q->q[begin].ev;
}

static struct hwt_event *evq_requeue(struct hwt_evq *q,
				     const struct hwt_event *ev, uint32_t evb)
{
	struct hwt_event copy = *ev, *rev;

	rev = evq_enqueue(q, evb);
	if (rev)
		*rev = copy;
	return rev;
}

static int evq_pending(const struct hwt_evq *q, uint32_t evb)
{
	for (uint8_t i = q->begin; i != q->end; i = evq_inc(i))
		if (q->q[i].binding & evb)
			return 1;
	return 0;
}

static struct hwt_event *evq_find(struct hwt_evq *q, uint32_t evb,
				  uint8_t type)
{
	for (uint8_t i = q->begin; i != q->end; i = evq_inc(i))
		if ((q->q[i].binding & evb) && q->q[i].ev.type == type)
			return &q->q[i].ev;
	return NULL;
}

static struct hwt_event *evq_peek(struct hwt_evq *q, uint32_t evb)
{
	for (uint8_t i = q->begin; i != q->end; i = evq_inc(i))
		if (q->q[i].binding & evb)
			return &q->q[i].ev;
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Packets                                                             */
/* ------------------------------------------------------------------ */

#define OPC_EXT 0x02
#define EXT_OVF 0xf3
#define EXT_TMA 0x73
#define SKZ84_SIZE 8

/*
 * The next packet, advancing past it: its size, or a negative error with
 * the position unchanged (-HWT_ERR_EOS at the end of the trace).
 */
static int cur_next(struct hwt_evt_cursor *c, struct hwt_pt_packet *pkt)
{
	const uint8_t *pos = c->pos;
	int size, adv;

	if (!pos)
		return -HWT_ERR_NOSYNC;
	if (pos >= c->end)
		return -HWT_ERR_EOS;
	size = hwt_pt_decode(pos, c->end, c->bip_size, pkt);
	if (__builtin_expect(size < 0, 0)) {
		/* SKZ84: TSC scaling corrupts a TMA and adds a byte. */
		if (size != -HWT_ERR_BAD_PACKET ||
		    !(c->errata & HWT_PT_ERRATUM_SKZ84) ||
		    c->end - pos < 2 || pos[0] != OPC_EXT || pos[1] != EXT_TMA)
			return size;
		if (c->end - pos < SKZ84_SIZE)
			return -HWT_ERR_EOS;
		memset(pkt, 0, sizeof(*pkt));
		pkt->type = HWT_PT_INVALID;
		pkt->size = SKZ84_SIZE;
		c->pos = pos + SKZ84_SIZE;
		return SKZ84_SIZE;
	}
	adv = size;
	switch (pkt->type) {
	case HWT_PT_CYC:
		/*
		 * SKD007: an OVF may overwrite all but the first byte of a
		 * multi-byte CYC; two short CYCs in a row do not happen
		 * otherwise, so report the OVF.
		 */
		if ((c->errata & HWT_PT_ERRATUM_SKD007) && size == 2 &&
		    (pkt->u.cyc & ~0x1full) == 0x20 && pos + 2 < c->end &&
		    pos[2] == EXT_OVF) {
			memset(&pkt->u, 0, sizeof(pkt->u));
			pkt->type = HWT_PT_OVF;
			pkt->size = 2;
			adv = 3;
			c->bip_size = 0;
		}
		break;
	case HWT_PT_BBP:
		c->bip_size = pkt->u.bbp.sz ? 4 : 8;
		break;
	case HWT_PT_BEP:
	case HWT_PT_OVF:
		c->bip_size = 0;
		break;
	default:
		break;
	}
	c->pos = pos + adv;
	return size;
}

/* ------------------------------------------------------------------ */
/* Decoder state                                                       */
/* ------------------------------------------------------------------ */

static void evt_reset(struct hwt_evt_decoder *d)
{
	memset(&d->packet, 0, sizeof(d->packet));
	d->packet.type = HWT_PT_INVALID;
	d->status = -HWT_ERR_NOSYNC;
	d->event = NULL;
	d->enabled = 0;
	d->bound = 0;
	d->mode_exec_valid = 0;
	if (d->have_exec_seed) {
		uint8_t exec = d->exec_seed;

		d->mode_exec_valid = d->exec_seed_valid;
		d->iflag = !!(exec & HWT_PT_EXEC_IF);
		d->csd = !!(exec & HWT_PT_EXEC_CSD);
		d->csl = !!(exec & HWT_PT_EXEC_CSL);
		d->have_exec_seed = 0;
	}
	hwt_pt_last_ip_init(&d->ip);
	hwt_time_tracker_reset(&d->tt);
	if (d->have_seed) {
		/* What one decoder would have here: see hwt_evt_time_seed(). */
		d->tt.time = d->seed.time;
		d->tt.cal = d->seed.cal;
		d->tt.in_psb = d->seed.in_psb;
		d->have_seed = 0;
	}
	evq_init(&d->evq);
}

void hwt_evt_init(struct hwt_evt_decoder *d,
		  const struct hwt_qry_config *config)
{
	struct hwt_time_config tc = config->time;
	uint32_t tflags = 0;

	memset(d, 0, sizeof(*d));
	d->cur.begin = config->begin;
	d->cur.end = config->end;
	d->cur.errata = config->errata;
	d->errata = config->errata;
	d->flags = config->flags;
	tc.errata |= config->errata;
	if (config->flags & HWT_QRY_NO_CYC)
		tflags |= HWT_TIME_NO_CYC;
	if (config->flags & HWT_QRY_NO_TCAL)
		tflags |= HWT_TIME_NO_TCAL;
	if (config->flags & HWT_QRY_KEEP_TCAL_ON_OVF)
		tflags |= HWT_TIME_KEEP_TCAL_ON_OVF;
	hwt_time_tracker_init(&d->tt, &tc, tflags);
	evt_reset(d);
}

/* Skip PADs here: it gives more useful offsets. Errors are kept for later. */
static int fetch_packet(struct hwt_evt_decoder *d)
{
	int size;

	do {
		size = cur_next(&d->cur, &d->packet);
		if (size < 0) {
			d->packet.type = HWT_PT_INVALID;
			d->packet.size = 0;
			d->status = size;
			break;
		}
	} while (d->packet.type == HWT_PT_PAD);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Time                                                                */
/* ------------------------------------------------------------------ */

/*
 * Configuration errors (no CPUID 0x15, ...) only make time imprecise and are
 * ignored, as lost packets; a TMA out of place is a context error.
 */
static int time_err(int err)
{
	if (err >= 0 || err == -HWT_ERR_BAD_CONFIG)
		return 0;
	return err;
}

/* Apply a timing packet to @tt. @in_psb: the packet is part of PSB+. */
static int time_apply(struct hwt_time_tracker *tt,
		      const struct hwt_pt_packet *pkt, int in_psb)
{
	const struct hwt_time_config *config = &tt->config;
	int tcal = !(tt->flags & HWT_TIME_NO_TCAL);
	uint64_t fcr;
	int err;

	switch (pkt->type) {
	case HWT_PT_TSC:
		if (tcal) {
			err = time_err(hwt_time_cal_update_tsc(&tt->cal,
							       pkt->u.tsc,
							       in_psb));
			if (err < 0)
				return err;
		}
		return time_err(hwt_time_update_tsc(&tt->time, pkt->u.tsc));
	case HWT_PT_CBR:
		if (tcal) {
			err = time_err(hwt_time_cal_update_cbr(&tt->cal, config,
							       pkt->u.cbr,
							       in_psb));
			if (err < 0)
				return err;
		}
		return time_err(hwt_time_update_cbr(&tt->time, pkt->u.cbr));
	case HWT_PT_TMA:
		return time_err(hwt_time_update_tma(&tt->time, config,
						    pkt->u.tma.ctc,
						    pkt->u.tma.fc));
	case HWT_PT_MTC:
		if (tcal) {
			err = time_err(hwt_time_cal_update_mtc(&tt->cal, config,
							       pkt->u.mtc));
			if (err < 0)
				return err;
		}
		return time_err(hwt_time_update_mtc(&tt->time, config,
						    pkt->u.mtc));
	case HWT_PT_CYC:
		if (tt->flags & HWT_TIME_NO_CYC)
			return 0;
		fcr = 0;
		if (tcal) {
			hwt_time_cal_update_cyc(&tt->cal, pkt->u.cyc);
			if (hwt_time_cal_fcr(&tt->cal, &fcr) < 0)
				fcr = 0;
		}
		return time_err(hwt_time_update_cyc(&tt->time, config,
						    pkt->u.cyc, fcr));
	default:
		return 0;
	}
}

static int event_time(struct hwt_event *ev, const struct hwt_time *time)
{
	uint64_t tsc = 0;
	uint32_t lost_mtc = 0, lost_cyc = 0;
	int err;

	err = hwt_time_query_tsc(time, &tsc, &lost_mtc, &lost_cyc);
	ev->tsc = tsc;
	ev->lost_mtc = lost_mtc;
	ev->lost_cyc = lost_cyc;
	if (err < 0)
		return err == -HWT_ERR_NO_TIME ? 0 : err;
	ev->has_tsc = 1;
	return 0;
}

static inline int ev_time(struct hwt_evt_decoder *d, struct hwt_event *ev)
{
	return event_time(ev, &d->tt.time);
}

/* The event's IP from last-IP; an unknown IP suppresses it. */
static int event_ip(uint64_t *ip, struct hwt_event *ev,
		    const struct hwt_pt_last_ip *lip)
{
	int err = hwt_pt_last_ip_query(lip, ip);

	if (err == -HWT_ERR_NOIP || err == -HWT_ERR_IP_SUPPRESSED) {
		ev->ip_suppressed = 1;
		return 0;
	}
	return err;
}

static inline int update_ip(struct hwt_evt_decoder *d,
			    const struct hwt_pt_packet *pkt)
{
	return hwt_pt_last_ip_update(&d->ip, pkt->u.ip.ipc, pkt->u.ip.ip);
}

static inline int last_ip_update(struct hwt_pt_last_ip *lip,
				 const struct hwt_pt_packet *pkt)
{
	return hwt_pt_last_ip_update(lip, pkt->u.ip.ipc, pkt->u.ip.ip);
}

/* A standalone event: reported right away, with the current time. */
static struct hwt_event *standalone(struct hwt_evt_decoder *d, uint8_t type)
{
	struct hwt_event *ev = evq_standalone(&d->evq);

	ev->type = type;
	d->event = ev;
	return ev;
}

/* Publish a standalone event with suppressed IP and move on. */
static int publish_noip(struct hwt_evt_decoder *d, struct hwt_event *ev)
{
	int err;

	ev->ip_suppressed = 1;
	err = ev_time(d, ev);
	if (err < 0)
		return err;
	d->event = ev;
	return fetch_packet(d);
}

static int publish(struct hwt_evt_decoder *d, struct hwt_event *ev)
{
	int err = ev_time(d, ev);

	if (err < 0)
		return err;
	d->event = ev;
	return fetch_packet(d);
}

static uint8_t exec_mode(uint8_t exec)
{
	if (exec & HWT_PT_EXEC_CSL)
		return (exec & HWT_PT_EXEC_CSD) ? HWT_MODE_UNKNOWN :
						  HWT_MODE_64;
	return (exec & HWT_PT_EXEC_CSD) ? HWT_MODE_32 : HWT_MODE_16;
}

static inline int iflags_on(const struct hwt_evt_decoder *d)
{
	return (d->flags & HWT_QRY_EVENT_TRACE) != 0;
}

/* ------------------------------------------------------------------ */
/* Look-ahead                                                          */
/* ------------------------------------------------------------------ */

/*
 * Find the FUP of the PSB+ that @c is in (after its PSB): 1 with @fup set,
 * 0 if the PSB+ holds none (tracing is disabled there), or an error.
 */
static int find_header_fup(struct hwt_pt_packet *fup,
			   const struct hwt_evt_cursor *from)
{
	struct hwt_evt_cursor c = *from;

	for (;;) {
		int err = cur_next(&c, fup);

		if (err < 0)
			return err;
		switch (fup->type) {
		case HWT_PT_FUP:
			return 1;
		case HWT_PT_MODE_EXEC:
		case HWT_PT_MODE_TSX:
		case HWT_PT_PIP:
		case HWT_PT_VMCS:
		case HWT_PT_MNT:
		case HWT_PT_TSC:
		case HWT_PT_CBR:
		case HWT_PT_TMA:
		case HWT_PT_MTC:
		case HWT_PT_CYC:
		case HWT_PT_PAD:
		case HWT_PT_INVALID:
			break;
		case HWT_PT_PSBEND:
		case HWT_PT_OVF:
			return 0;
		default:
			return -HWT_ERR_BAD_CONTEXT;
		}
	}
}

/*
 * BDM70: a PSB+ while tracing is disabled may hold a FUP (and MODE.Exec)
 * anyway; a TIP.PGE right after PSB+ tells. 1 if the erratum applies.
 */
static int check_bdm70(const struct hwt_evt_cursor *from)
{
	struct hwt_evt_cursor c = *from;
	struct hwt_pt_packet pkt;

	for (;;) {
		int err = cur_next(&c, &pkt);

		if (err < 0)
			return err == -HWT_ERR_EOS ? 0 : err;
		switch (pkt.type) {
		case HWT_PT_TIP_PGE:
			return 1;
		case HWT_PT_PAD:
		case HWT_PT_TSC:
		case HWT_PT_CBR:
		case HWT_PT_PSBEND:
		case HWT_PT_PIP:
		case HWT_PT_MODE_EXEC:
		case HWT_PT_MODE_TSX:
		case HWT_PT_VMCS:
		case HWT_PT_TMA:
		case HWT_PT_MTC:
		case HWT_PT_CYC:
		case HWT_PT_MNT:
			break;
		default:
			return 0;
		}
	}
}

/* ------------------------------------------------------------------ */
/* PSB+                                                                */
/* ------------------------------------------------------------------ */

static int header_fup(struct hwt_evt_decoder *d,
		      const struct hwt_pt_packet *pkt)
{
	int enabled = pkt->u.ip.ipc != HWT_PT_IPC_SUPPRESSED;

	if (d->errata & HWT_PT_ERRATUM_BDM70) {
		int err = check_bdm70(&d->cur);

		if (err < 0)
			return err;
		if (err)
			enabled = 0;
	}
	d->enabled = (uint8_t)enabled;
	if (!enabled)
		return 0;
	return update_ip(d, pkt);
}

static struct hwt_event *status_event(struct hwt_evt_decoder *d,
				      uint8_t type)
{
	struct hwt_event *ev = evq_enqueue(&d->evq, EVB_PSBEND);

	if (ev) {
		ev->status_update = 1;
		ev->type = type;
		ev->psb = d->psb;
	}
	return ev;
}

static int header_mode_exec(struct hwt_evt_decoder *d, uint8_t exec)
{
	uint8_t iflag = !!(exec & HWT_PT_EXEC_IF);
	uint8_t csd = !!(exec & HWT_PT_EXEC_CSD);
	uint8_t csl = !!(exec & HWT_PT_EXEC_CSL);
	struct hwt_event *ev;

	/* A known state is checked; the iflag only with event tracing. */
	if (d->mode_exec_valid) {
		if (iflags_on(d) && d->iflag != iflag)
			return -HWT_ERR_BAD_STATUS_UPDATE;
		if (d->csd != csd || d->csl != csl)
			return -HWT_ERR_BAD_STATUS_UPDATE;
	} else {
		d->mode_exec_valid = 1;
		d->iflag = iflag;
		d->csd = csd;
		d->csl = csl;
	}
	ev = status_event(d, HWT_EV_EXEC_MODE);
	if (!ev)
		return -HWT_ERR_NOMEM;
	ev->u.exec_mode.mode = exec_mode(exec);
	if (iflags_on(d)) {
		ev = status_event(d, HWT_EV_IFLAGS);
		if (!ev)
			return -HWT_ERR_NOMEM;
		ev->u.iflags.iflag = iflag;
	}
	return 0;
}

static int decode_header_packet(struct hwt_evt_decoder *d,
				const struct hwt_pt_packet *pkt)
{
	struct hwt_event *ev;
	int err;

	switch (pkt->type) {
	case HWT_PT_FUP:
		return header_fup(d, pkt);
	case HWT_PT_MODE_EXEC:
		return header_mode_exec(d, pkt->u.exec);
	case HWT_PT_MODE_TSX:
		ev = status_event(d, HWT_EV_TSX);
		if (!ev)
			return -HWT_ERR_NOMEM;
		ev->u.tsx.speculative = !!(pkt->u.tsx & HWT_PT_TSX_INTX);
		ev->u.tsx.aborted = !!(pkt->u.tsx & HWT_PT_TSX_ABORT);
		return 0;
	case HWT_PT_PIP:
		ev = status_event(d, HWT_EV_ASYNC_PAGING);
		if (!ev)
			return -HWT_ERR_NOMEM;
		ev->u.async_paging.cr3 = pkt->u.pip.cr3;
		ev->u.async_paging.non_root = pkt->u.pip.nr;
		return 0;
	case HWT_PT_VMCS:
		ev = status_event(d, HWT_EV_ASYNC_VMCS);
		if (!ev)
			return -HWT_ERR_NOMEM;
		ev->u.async_vmcs.base = pkt->u.vmcs;
		return 0;
	case HWT_PT_MNT:
		/* Not a status update, as libipt. */
		ev = evq_enqueue(&d->evq, EVB_PSBEND);
		if (!ev)
			return -HWT_ERR_NOMEM;
		ev->type = HWT_EV_MNT;
		ev->u.mnt.payload = pkt->u.mnt;
		return 0;
	case HWT_PT_CBR:
		err = time_apply(&d->tt, pkt, 1);
		if (err < 0)
			return err;
		ev = status_event(d, HWT_EV_CBR);
		if (!ev)
			return -HWT_ERR_NOMEM;
		ev->u.cbr.ratio = pkt->u.cbr;
		return 0;
	case HWT_PT_TSC:
	case HWT_PT_TMA:
	case HWT_PT_MTC:
	case HWT_PT_CYC:
		return time_apply(&d->tt, pkt, 1);
	case HWT_PT_PAD:
		return 0;
	case HWT_PT_INVALID:
		return d->status;
	default:
		return -HWT_ERR_BAD_CONTEXT;
	}
}

/*
 * PSB+ gives the current state. Its packets are unordered, so all of them
 * bind to PSBEND (or an OVF in its place); the first event, created here,
 * says whether tracing is enabled, which is only known at the end.
 * Returns 1 (PSBEND/OVF is the current packet) or an error.
 */
static int decode_psb(struct hwt_evt_decoder *d)
{
	struct hwt_event *ev;
	int err;

	/* The first time here only: a resync may come back to it. */
	if (d->watch && !d->have_watched &&
	    d->cur.pos - d->packet.size == d->watch) {
		d->watched = d->tt;
		d->have_watched = 1;
	}

	/* No partial events across PSB. */
	if (evq_pending(&d->evq, EVB_ALL))
		return -HWT_ERR_BAD_CONTEXT;

	hwt_pt_last_ip_init(&d->ip);
	d->enabled = 0;
	d->psb = (uint64_t)(d->cur.pos - d->cur.begin) - d->packet.size;

	ev = evq_enqueue(&d->evq, EVB_PSBEND);
	if (!ev)
		return -HWT_ERR_NOMEM;
	ev->status_update = 1;
	ev->psb = d->psb;

	for (;;) {
		fetch_packet(d);
		switch (d->packet.type) {
		case HWT_PT_PSBEND:
			if (d->enabled) {
				ev->type = HWT_EV_ENABLED;
			} else {
				ev->type = HWT_EV_DISABLED;
				ev->ip_suppressed = 1;
			}
			return 1;
		case HWT_PT_OVF:
			/*
			 * Without a FUP we may have lost it in the overflow:
			 * rather than a possibly wrong status, drop it.
			 */
			if (d->enabled)
				ev->type = HWT_EV_ENABLED;
			else if (evq_dequeue(&d->evq, EVB_PSBEND) != ev)
				return -HWT_ERR_INTERNAL;
			return 1;
		default:
			err = decode_header_packet(d, &d->packet);
			if (err < 0)
				return err;
		}
	}
}

static int decode_psbend(struct hwt_evt_decoder *d)
{
	struct hwt_event *ev;
	int err;

	ev = evq_dequeue(&d->evq, EVB_PSBEND);
	if (!ev)
		return 1;
	d->event = ev;

	switch (ev->type) {
	case HWT_EV_ENABLED:
		err = event_ip(&ev->u.enabled.ip, ev, &d->ip);
		break;
	case HWT_EV_EXEC_MODE:
		err = event_ip(&ev->u.exec_mode.ip, ev, &d->ip);
		break;
	case HWT_EV_IFLAGS:
		err = event_ip(&ev->u.iflags.ip, ev, &d->ip);
		break;
	case HWT_EV_TSX:
		err = event_ip(&ev->u.tsx.ip, ev, &d->ip);
		break;
	case HWT_EV_ASYNC_PAGING:
		err = event_ip(&ev->u.async_paging.ip, ev, &d->ip);
		break;
	case HWT_EV_ASYNC_VMCS:
		err = event_ip(&ev->u.async_vmcs.ip, ev, &d->ip);
		break;
	case HWT_EV_DISABLED:
	case HWT_EV_CBR:
	case HWT_EV_MNT:
		err = 0;
		break;
	default:
		err = -HWT_ERR_BAD_CONTEXT;
		break;
	}
	if (err < 0)
		return err;
	return ev_time(d, ev);
}

/* ------------------------------------------------------------------ */
/* Standalone and binding packets                                      */
/* ------------------------------------------------------------------ */

static int decode_mode_exec(struct hwt_evt_decoder *d, uint8_t exec)
{
	uint8_t iflag = !!(exec & HWT_PT_EXEC_IF);
	uint8_t csd = !!(exec & HWT_PT_EXEC_CSD);
	uint8_t csl = !!(exec & HWT_PT_EXEC_CSL);
	const uint32_t evb = EVB_TIP | EVB_FUP_BOUND;
	struct hwt_event *ev;
	int nevents = 0;

	/*
	 * MODE.Exec is split into exec-mode and iflags events for what
	 * changed; if nothing did, it must still bind its TIP: IGNORE.
	 */
	if (!d->mode_exec_valid || d->csl != csl || d->csd != csd) {
		ev = evq_enqueue(&d->evq, evb);
		if (!ev)
			return -HWT_ERR_NOMEM;
		ev->type = HWT_EV_EXEC_MODE;
		ev->u.exec_mode.mode = exec_mode(exec);
		d->csl = csl;
		d->csd = csd;
		nevents++;
	}
	if (iflags_on(d) && (!d->mode_exec_valid || d->iflag != iflag)) {
		ev = evq_enqueue(&d->evq, evb);
		if (!ev)
			return -HWT_ERR_NOMEM;
		ev->type = HWT_EV_IFLAGS;
		ev->u.iflags.iflag = iflag;
		d->iflag = iflag;
		nevents++;
	}
	if (!nevents) {
		ev = evq_enqueue(&d->evq, evb);
		if (!ev)
			return -HWT_ERR_NOMEM;
		ev->type = HWT_EV_IGNORE_;
	}
	d->mode_exec_valid = 1;
	return 1;
}

static int decode_mode_tsx(struct hwt_evt_decoder *d, uint8_t tsx)
{
	struct hwt_event *ev;

	if (d->enabled) {
		/* An abort is a FUP+TIP async branch: no unbound FUP. */
		ev = evq_enqueue(&d->evq, (tsx & HWT_PT_TSX_ABORT) ?
					  EVB_FUP : EVB_FUP_BOUND);
		if (!ev)
			return -HWT_ERR_NOMEM;
	} else {
		ev = standalone(d, HWT_EV_TSX);
	}
	ev->type = HWT_EV_TSX;
	ev->u.tsx.speculative = !!(tsx & HWT_PT_TSX_INTX);
	ev->u.tsx.aborted = !!(tsx & HWT_PT_TSX_ABORT);
	if (d->enabled)
		return 1;
	return publish_noip(d, ev);
}

static int decode_pip(struct hwt_evt_decoder *d,
		      const struct hwt_pt_packet *pkt)
{
	struct hwt_event *ev;

	/* At an async branch (a FUP waits for its TIP), PIP binds there. */
	if (evq_find(&d->evq, EVB_TIP, HWT_EV_ASYNC_BRANCH)) {
		ev = evq_enqueue(&d->evq, EVB_TIP);
		if (!ev)
			return -HWT_ERR_NOMEM;
		ev->type = HWT_EV_ASYNC_PAGING;
		ev->u.async_paging.cr3 = pkt->u.pip.cr3;
		ev->u.async_paging.non_root = pkt->u.pip.nr;
		return 1;
	}
	ev = standalone(d, HWT_EV_PAGING);
	ev->u.paging.cr3 = pkt->u.pip.cr3;
	ev->u.paging.non_root = pkt->u.pip.nr;
	return publish(d, ev);
}

static int decode_vmcs(struct hwt_evt_decoder *d,
		       const struct hwt_pt_packet *pkt)
{
	struct hwt_event *ev;

	/* Between FUP and TIP, VMCS goes before a PIP that came first. */
	ev = evq_find(&d->evq, EVB_TIP, HWT_EV_ASYNC_PAGING);
	if (ev) {
		struct hwt_event *paging = evq_enqueue(&d->evq, EVB_TIP);

		if (!paging)
			return -HWT_ERR_NOMEM;
		*paging = *ev;
		memset(ev, 0, sizeof(*ev));
		ev->type = HWT_EV_ASYNC_VMCS;
		ev->u.async_vmcs.base = pkt->u.vmcs;
		return 1;
	}
	if (evq_find(&d->evq, EVB_TIP, HWT_EV_ASYNC_BRANCH)) {
		ev = evq_enqueue(&d->evq, EVB_TIP);
		if (!ev)
			return -HWT_ERR_NOMEM;
		ev->type = HWT_EV_ASYNC_VMCS;
		ev->u.async_vmcs.base = pkt->u.vmcs;
		return 1;
	}
	/* Binds to VMPTRLD/VMLAUNCH/VMRESUME: for the flow layer. */
	ev = standalone(d, HWT_EV_VMCS);
	ev->u.vmcs.base = pkt->u.vmcs;
	return publish(d, ev);
}

static int decode_exstop(struct hwt_evt_decoder *d,
			 const struct hwt_pt_packet *pkt)
{
	struct hwt_event *ev;

	ev = evq_dequeue(&d->evq, EVB_EXSTOP);
	if (ev) {
		if (ev->type != HWT_EV_MWAIT)
			return -HWT_ERR_INTERNAL;
		/*
		 * With an IP, MWAIT and EXSTOP both bind to the FUP (MWAIT
		 * first); without, both are standalone: MWAIT now, EXSTOP
		 * on the next call (the packet stays current).
		 */
		if (pkt->u.exstop_ip) {
			if (!evq_requeue(&d->evq, ev, EVB_FUP_BOUND))
				return -HWT_ERR_NOMEM;
		} else {
			ev->u.mwait.ip = 0;
			ev->ip_suppressed = 1;
			d->event = ev;
			return ev_time(d, ev);
		}
	}
	if (pkt->u.exstop_ip) {
		ev = evq_enqueue(&d->evq, EVB_FUP_BOUND);
		if (!ev)
			return -HWT_ERR_NOMEM;
		ev->type = HWT_EV_EXSTOP;
		return 1;
	}
	ev = standalone(d, HWT_EV_EXSTOP);
	return publish_noip(d, ev);
}

static int decode_mwait(struct hwt_evt_decoder *d,
			const struct hwt_pt_packet *pkt)
{
	struct hwt_event *ev = evq_enqueue(&d->evq, EVB_EXSTOP);

	if (!ev)
		return -HWT_ERR_NOMEM;
	ev->type = HWT_EV_MWAIT;
	ev->u.mwait.hints = pkt->u.mwait.hints;
	ev->u.mwait.ext = pkt->u.mwait.ext;
	return 1;
}

static int decode_ptw(struct hwt_evt_decoder *d,
		      const struct hwt_pt_packet *pkt)
{
	struct hwt_event *ev;
	uint8_t size;

	switch (pkt->u.ptw.plc) {
	case 0:
		size = 4;
		break;
	case 1:
		size = 8;
		break;
	default:
		return -HWT_ERR_BAD_PACKET;
	}
	if (pkt->u.ptw.ip) {
		ev = evq_enqueue(&d->evq, EVB_FUP_BOUND);
		if (!ev)
			return -HWT_ERR_NOMEM;
	} else {
		ev = standalone(d, HWT_EV_PTWRITE);
	}
	ev->type = HWT_EV_PTWRITE;
	ev->u.ptwrite.size = size;
	ev->u.ptwrite.payload = pkt->u.ptw.payload;
	if (pkt->u.ptw.ip)
		return 1;
	return publish_noip(d, ev);
}

static int decode_fup(struct hwt_evt_decoder *d,
		      const struct hwt_pt_packet *pkt)
{
	struct hwt_event *ev;
	uint64_t *ip;
	int err;

	for (;;) {
		err = update_ip(d, pkt);
		if (err < 0)
			return err;
		if (evq_pending(&d->evq, EVB_FUP_BOUND))
			d->bound = 1;

		ev = evq_dequeue(&d->evq, EVB_FUP | EVB_FUP_BOUND);
		if (!ev) {
			uint64_t from;

			if (d->bound)
				return 1;
			/*
			 * An unbound FUP is the source of an asynchronous
			 * branch; it needs an IP.
			 */
			err = hwt_pt_last_ip_query(&d->ip, &from);
			if (err < 0)
				return err;
			ev = evq_enqueue(&d->evq, EVB_TIP);
			if (!ev)
				return -HWT_ERR_NOMEM;
			ev->type = HWT_EV_ASYNC_BRANCH;
			ev->u.async_branch.from = from;
			return 1;
		}
		if (ev->type != HWT_EV_IGNORE_)
			break;
	}
	d->event = ev;

	switch (ev->type) {
	case HWT_EV_OVERFLOW:
		/* Keep the time of the OVF: it hints how long it lasted. */
		d->enabled = 1;
		return event_ip(&ev->u.overflow.ip, ev, &d->ip);
	case HWT_EV_RSM:
	case HWT_EV_SIPI:
		err = ev_time(d, ev);
		if (err < 0)
			return err;
		return ev->ip_suppressed ? 0 : -HWT_ERR_INTERNAL;
	case HWT_EV_TSX:
		ip = &ev->u.tsx.ip;
		break;
	case HWT_EV_EXSTOP:
		ip = &ev->u.exstop.ip;
		break;
	case HWT_EV_MWAIT:
		ip = &ev->u.mwait.ip;
		break;
	case HWT_EV_PTWRITE:
		ip = &ev->u.ptwrite.ip;
		break;
	case HWT_EV_EXEC_MODE:
		ip = &ev->u.exec_mode.ip;
		break;
	case HWT_EV_IFLAGS:
		ip = &ev->u.iflags.ip;
		break;
	case HWT_EV_INTERRUPT:
		ip = &ev->u.interrupt.ip;
		break;
	case HWT_EV_IRET:
		ip = &ev->u.iret.ip;
		break;
	case HWT_EV_SMI:
		ip = &ev->u.smi.ip;
		break;
	case HWT_EV_INIT:
		ip = &ev->u.init.ip;
		break;
	case HWT_EV_VMENTRY:
		ip = &ev->u.vmentry.ip;
		break;
	case HWT_EV_VMEXIT:
		ip = &ev->u.vmexit.ip;
		break;
	case HWT_EV_SHUTDOWN:
		ip = &ev->u.shutdown.ip;
		break;
	case HWT_EV_UINTR:
		ip = &ev->u.uintr.ip;
		break;
	case HWT_EV_UIRET:
		ip = &ev->u.uiret.ip;
		break;
	default:
		return -HWT_ERR_BAD_CONTEXT;
	}
	err = ev_time(d, ev);
	if (err < 0)
		return err;
	return event_ip(ip, ev, &d->ip);
}

/* ------------------------------------------------------------------ */
/* Overflow                                                            */
/* ------------------------------------------------------------------ */

/*
 * After an OVF: the offset to just after the FUP it binds to (> 0), 0 if a
 * packet shows tracing was disabled when the overflow resolved, or an error.
 */
static int find_ovf_fup(const struct hwt_evt_cursor *from)
{
	struct hwt_evt_cursor c = *from;
	struct hwt_pt_packet pkt;
	int offset = 0;

	for (;;) {
		int size = cur_next(&c, &pkt);

		if (size < 0)
			return size;
		if (!size)
			return -HWT_ERR_BAD_PACKET;
		if (c.pos - from->pos > INT32_MAX)
			return -HWT_ERR_OVERFLOW;
		offset = (int)(c.pos - from->pos);
		switch (pkt.type) {
		case HWT_PT_FUP:
			return offset;
		case HWT_PT_PAD:
		case HWT_PT_MNT:
		case HWT_PT_CBR:
		case HWT_PT_TSC:
		case HWT_PT_TMA:
		case HWT_PT_MTC:
		case HWT_PT_CYC:
		case HWT_PT_INVALID:
		case HWT_PT_BBP:
		case HWT_PT_BIP:
		case HWT_PT_BEP:
			break;
		case HWT_PT_PSBEND:
		case HWT_PT_TIP:
		case HWT_PT_TIP_PGD:
		case HWT_PT_TNT8:
		case HWT_PT_TNT64:
			return -HWT_ERR_BAD_CONTEXT;
		default:
			return 0;
		}
	}
}

/* Resume at @ip (from @pkt at @c) with tracing enabled: overflow event. */
static int recover_ovf_at_ip(struct hwt_evt_decoder *d,
			     const struct hwt_evt_cursor *c,
			     const struct hwt_pt_packet *pkt,
			     const struct hwt_pt_packet *ippkt,
			     const struct hwt_time_tracker *tt)
{
	struct hwt_event *ev;
	int err;

	err = last_ip_update(&d->ip, ippkt);
	if (err < 0)
		return err;
	ev = standalone(d, HWT_EV_OVERFLOW);
	/* The overflow event has the time of the OVF. */
	err = ev_time(d, ev);
	if (err < 0)
		return err;
	d->cur = *c;
	d->packet = *pkt;
	d->tt = *tt;
	d->enabled = 1;
	return event_ip(&ev->u.overflow.ip, ev, &d->ip);
}

/* Resume after @pkt (at @c) with tracing disabled: overflow event. */
static int recover_ovf_disabled(struct hwt_evt_decoder *d,
				const struct hwt_evt_cursor *c,
				const struct hwt_pt_packet *pkt,
				const struct hwt_time_tracker *tt)
{
	struct hwt_event *ev = standalone(d, HWT_EV_OVERFLOW);
	int err;

	ev->ip_suppressed = 1;
	err = ev_time(d, ev);
	if (err < 0)
		return err;
	d->cur = *c;
	d->packet = *pkt;
	d->tt = *tt;
	return 0;
}

/* Skip @offset bytes of packets (keeping time), tracing disabled. */
static int recover_ovf_at_offset(struct hwt_evt_decoder *d, uint64_t offset)
{
	const uint8_t *target = d->cur.pos + offset;
	struct hwt_event *ev;
	int err;

	for (;;) {
		int size = cur_next(&d->cur, &d->packet);

		if (size < 0)
			return size;
		if (d->cur.pos >= target) {
			if (d->cur.pos > target)
				return -HWT_ERR_INTERNAL;
			break;
		}
		switch (d->packet.type) {
		case HWT_PT_MODE_EXEC:
		case HWT_PT_MODE_TSX:
		case HWT_PT_PIP:
		case HWT_PT_VMCS:
		case HWT_PT_INVALID:
			return -HWT_ERR_INTERNAL;
		default:
			err = time_apply(&d->tt, &d->packet, 0);
			if (err < 0)
				return err;
		}
	}
	ev = standalone(d, HWT_EV_OVERFLOW);
	return publish_noip(d, ev);
}

/*
 * SKD010: the FUP after an OVF may be missing though tracing is enabled.
 * Look ahead for proof either way; if tracing is enabled, resume at the
 * next IP we get. 0 if handled (overflow event), > 0 if not, or an error.
 */
static int handle_skd010(struct hwt_evt_decoder *d)
{
	struct hwt_evt_cursor c = d->cur;
	struct hwt_time_tracker tt = d->tt;
	struct hwt_pt_packet pkt, fup;
	int tsx_found = 0;
	uint8_t tsx = 0;
	int err;

	for (;;) {
		err = cur_next(&c, &pkt);
		if (err < 0)
			return err == -HWT_ERR_EOS ? 1 : err;

		switch (pkt.type) {
		case HWT_PT_TIP_PGE:
			return 1;
		case HWT_PT_TIP_PGD:
			err = recover_ovf_disabled(d, &c, &pkt, &tt);
			if (err < 0)
				return err;
			return fetch_packet(d);
		case HWT_PT_TNT8:
		case HWT_PT_TNT64:
			/* Enabled, but we cannot know how many bits to skip. */
			return 1;
		case HWT_PT_PIP:
		case HWT_PT_VMCS:
		case HWT_PT_MODE_EXEC:
			/* Changes lost like the others in the overflow. */
			break;
		case HWT_PT_MODE_TSX:
			/* A second one: tracing is disabled. */
			if (tsx_found)
				return 1;
			tsx_found = 1;
			tsx = pkt.u.tsx;
			break;
		case HWT_PT_FUP:
			d->packet = pkt;
			if (tsx_found) {
				struct hwt_event *ev;

				ev = evq_enqueue(&d->evq, EVB_FUP_BOUND);
				if (!ev)
					return -HWT_ERR_NOMEM;
				ev->type = HWT_EV_TSX;
				ev->u.tsx.speculative =
					!!(tsx & HWT_PT_TSX_INTX);
				ev->u.tsx.aborted = !!(tsx & HWT_PT_TSX_ABORT);
			}
			return recover_ovf_at_ip(d, &c, &pkt, &pkt, &tt);
		case HWT_PT_TIP:
			err = recover_ovf_at_ip(d, &c, &pkt, &pkt, &tt);
			if (err < 0)
				return err;
			return fetch_packet(d);
		case HWT_PT_PSB:
			/* Tracing is enabled iff the PSB+ holds a FUP. */
			err = find_header_fup(&fup, &c);
			if (err < 0)
				return err == -HWT_ERR_EOS ? 1 : err;
			if (!err)
				return 1;
			return recover_ovf_at_ip(d, &c, &pkt, &fup, &tt);
		case HWT_PT_PSBEND:
			return -HWT_ERR_BAD_CONTEXT;
		case HWT_PT_OVF:
		case HWT_PT_STOP:
			return 1;
		case HWT_PT_PAD:
		case HWT_PT_MNT:
		case HWT_PT_PWRE:
		case HWT_PT_PWRX:
		case HWT_PT_EVD:
			break;
		case HWT_PT_EXSTOP:
			if (!pkt.u.exstop_ip)
				break;
			return 1;
		case HWT_PT_PTW:
			if (!pkt.u.ptw.ip)
				break;
			return 1;
		case HWT_PT_CFE:
			if (!pkt.u.cfe.ip)
				break;
			return 1;
		case HWT_PT_TSC:
		case HWT_PT_CBR:
		case HWT_PT_TMA:
		case HWT_PT_MTC:
		case HWT_PT_CYC:
			err = time_apply(&tt, &pkt, 0);
			if (err < 0)
				return err;
			break;
		default:
			/* MWAIT (binds a FUP), unknown and invalid packets. */
			return 1;
		}
	}
}

/*
 * APL11: an OVF may be followed by a TIP.PGD (tracing was disabled before
 * the overflow resolved). Resume after it, tracing disabled.
 */
static int handle_apl11(struct hwt_evt_decoder *d)
{
	struct hwt_evt_cursor c = d->cur;
	struct hwt_time_tracker tt = d->tt;
	struct hwt_pt_packet pkt;
	int err;

	for (;;) {
		err = cur_next(&c, &pkt);
		if (err < 0)
			return err;
		switch (pkt.type) {
		case HWT_PT_TIP_PGD:
			err = recover_ovf_disabled(d, &c, &pkt, &tt);
			if (err < 0)
				return err;
			return fetch_packet(d);
		case HWT_PT_TSC:
		case HWT_PT_CBR:
		case HWT_PT_TMA:
		case HWT_PT_MTC:
		case HWT_PT_CYC:
			err = time_apply(&tt, &pkt, 0);
			if (err < 0)
				return err;
			break;
		case HWT_PT_PAD:
		case HWT_PT_MNT:
		case HWT_PT_CFE:
		case HWT_PT_EVD:
			break;
		default:
			return 1;
		}
	}
}

/*
 * APL12: an OVF resolving while tracing is disabled may still give a FUP.
 * @offset is where that FUP ends; look further for proof that tracing is
 * disabled and if so resume after the FUP, disabled.
 */
static int handle_apl12(struct hwt_evt_decoder *d, uint64_t offset)
{
	struct hwt_evt_cursor c = d->cur;
	struct hwt_pt_packet pkt;
	int err;

	if ((uint64_t)(c.end - c.pos) < offset)
		return -HWT_ERR_INTERNAL;
	c.pos += offset;
	for (;;) {
		err = cur_next(&c, &pkt);
		if (err < 0)
			return err == -HWT_ERR_EOS ? 1 : err;
		switch (pkt.type) {
		case HWT_PT_TNT8:
		case HWT_PT_TNT64:
		case HWT_PT_TIP:
		case HWT_PT_TIP_PGD:
			return 1;
		case HWT_PT_PSB:
			err = find_header_fup(&pkt, &c);
			if (err != 0)
				return err == -HWT_ERR_EOS ? 1 : err;
			return recover_ovf_at_offset(d, offset);
		case HWT_PT_STOP:
		case HWT_PT_TIP_PGE:
			return recover_ovf_at_offset(d, offset);
		case HWT_PT_PSBEND:
		case HWT_PT_OVF:
			return 1;
		case HWT_PT_PAD:
		case HWT_PT_FUP:
		case HWT_PT_TSC:
		case HWT_PT_CBR:
		case HWT_PT_TMA:
		case HWT_PT_MTC:
		case HWT_PT_CYC:
		case HWT_PT_EXSTOP:
		case HWT_PT_MWAIT:
		case HWT_PT_PWRE:
		case HWT_PT_PWRX:
		case HWT_PT_PTW:
		case HWT_PT_MNT:
		case HWT_PT_PIP:
		case HWT_PT_VMCS:
		case HWT_PT_MODE_EXEC:
		case HWT_PT_MODE_TSX:
		case HWT_PT_CFE:
		case HWT_PT_EVD:
			break;
		default:
			return 1;
		}
	}
}

static int decode_ovf(struct hwt_evt_decoder *d)
{
	struct hwt_time_tracker tt;
	struct hwt_event *ev;
	int err, offset;

	/* An OVF ends PSB+ like PSBEND: publish those events first. */
	err = decode_psbend(d);
	if (err <= 0)
		return err;

	/* Start over, keeping time (and calibration if asked to). */
	tt = d->tt;
	evt_reset(d);
	d->tt.time = tt.time;
	if (tt.flags & HWT_TIME_KEEP_TCAL_ON_OVF) {
		hwt_time_cal_update_ovf(&tt.cal);
		d->tt.cal = tt.cal;
	}

	/*
	 * The overflow resolves with tracing enabled (it binds to a FUP,
	 * with only timing packets before it) or disabled (a standalone
	 * event; TIP.PGE follows eventually).
	 */
	offset = find_ovf_fup(&d->cur);
	if (offset <= 0) {
		if (d->errata & HWT_PT_ERRATUM_SKD010) {
			err = handle_skd010(d);
			if (err <= 0)
				return err;
		}
		if ((d->errata & HWT_PT_ERRATUM_APL11) &&
		    offset == -HWT_ERR_BAD_CONTEXT) {
			err = handle_apl11(d);
			if (err <= 0)
				return err;
		}
		/* An overflow at the end of the trace is standalone. */
		if (offset < 0 && offset != -HWT_ERR_EOS)
			return offset;
		ev = standalone(d, HWT_EV_OVERFLOW);
		return publish_noip(d, ev);
	}

	if (d->errata & HWT_PT_ERRATUM_APL12) {
		err = handle_apl12(d, (uint64_t)offset);
		if (err <= 0)
			return err;
	}

	ev = evq_enqueue(&d->evq, EVB_FUP_BOUND);
	if (!ev)
		return -HWT_ERR_NOMEM;
	ev->type = HWT_EV_OVERFLOW;
	err = ev_time(d, ev);
	if (err < 0)
		return err;
	return 1;
}

/* ------------------------------------------------------------------ */
/* TIP, TIP.PGE, TIP.PGD, TNT                                          */
/* ------------------------------------------------------------------ */

/* The TIP's own event goes first: the async branch, or the TIP itself. */
static int decode_tip_event(struct hwt_evt_decoder *d)
{
	struct hwt_event *ev, *async;
	int err;

	d->bound = 1;
	async = evq_find(&d->evq, EVB_TIP, HWT_EV_ASYNC_BRANCH);
	if (async) {
		ev = evq_dequeue(&d->evq, EVB_TIP);
		if (!ev)
			return -HWT_ERR_INTERNAL;
		if (ev != async) {
			struct hwt_event tmp = *async;

			*async = *ev;
			*ev = tmp;
		}
		if (ev->type != HWT_EV_ASYNC_BRANCH)
			return -HWT_ERR_INTERNAL;
		d->event = ev;
		err = event_ip(&ev->u.async_branch.to, ev, &d->ip);
		if (err < 0)
			return err;
		return ev_time(d, ev);
	}
	ev = standalone(d, HWT_EV_TIP);
	err = event_ip(&ev->u.tip.ip, ev, &d->ip);
	if (err < 0)
		return err;
	return ev_time(d, ev);
}

static int decode_tip(struct hwt_evt_decoder *d,
		      const struct hwt_pt_packet *pkt)
{
	struct hwt_event *ev;
	int err;

	if (!d->enabled)
		return -HWT_ERR_BAD_CONTEXT;
	for (;;) {
		err = update_ip(d, pkt);
		if (err < 0)
			return err;
		if (!d->bound)
			return decode_tip_event(d);
		ev = evq_dequeue(&d->evq, EVB_TIP);
		if (!ev)
			return 1;
		if (ev->type != HWT_EV_IGNORE_)
			break;
	}
	d->event = ev;
	switch (ev->type) {
	case HWT_EV_EXEC_MODE:
		err = event_ip(&ev->u.exec_mode.ip, ev, &d->ip);
		break;
	case HWT_EV_ASYNC_PAGING:
		err = event_ip(&ev->u.async_paging.ip, ev, &d->ip);
		break;
	case HWT_EV_ASYNC_VMCS:
		err = event_ip(&ev->u.async_vmcs.ip, ev, &d->ip);
		break;
	case HWT_EV_IFLAGS:
		err = event_ip(&ev->u.iflags.ip, ev, &d->ip);
		break;
	case HWT_EV_ASYNC_BRANCH:
		return -HWT_ERR_INTERNAL;
	default:
		return -HWT_ERR_BAD_CONTEXT;
	}
	if (err < 0)
		return err;
	return ev_time(d, ev);
}

static int decode_tip_pge(struct hwt_evt_decoder *d,
			  const struct hwt_pt_packet *pkt)
{
	struct hwt_event *ev;
	int err;

	for (;;) {
		err = update_ip(d, pkt);
		if (err < 0)
			return err;
		/* The enable event goes first; bound marks it sent. */
		if (!d->bound) {
			ev = standalone(d, HWT_EV_ENABLED);
			err = event_ip(&ev->u.enabled.ip, ev, &d->ip);
			if (err < 0)
				return err;
			d->enabled = 1;
			d->bound = 1;
			return ev_time(d, ev);
		}
		ev = evq_dequeue(&d->evq, EVB_TIP);
		if (!ev)
			return 1;
		if (ev->type != HWT_EV_IGNORE_)
			break;
	}
	d->event = ev;
	switch (ev->type) {
	case HWT_EV_EXEC_MODE:
		err = event_ip(&ev->u.exec_mode.ip, ev, &d->ip);
		break;
	case HWT_EV_IFLAGS:
		err = event_ip(&ev->u.iflags.ip, ev, &d->ip);
		break;
	default:
		return -HWT_ERR_BAD_CONTEXT;
	}
	if (err < 0)
		return err;
	return ev_time(d, ev);
}

static int decode_tip_pgd(struct hwt_evt_decoder *d,
			  const struct hwt_pt_packet *pkt)
{
	struct hwt_event *ev;
	int err;

	err = update_ip(d, pkt);
	if (err < 0)
		return err;

	/*
	 * A MODE.Exec that changed nothing binds here, silently (libipt
	 * reports a context error for it).
	 */
	do
		ev = evq_dequeue(&d->evq, EVB_TIP);
	while (ev && ev->type == HWT_EV_IGNORE_);
	if (!ev) {
		if (d->bound)
			return 1;
		ev = standalone(d, HWT_EV_DISABLED);
		err = event_ip(&ev->u.disabled.ip, ev, &d->ip);
		if (err < 0)
			return err;
		err = ev_time(d, ev);
		if (err < 0)
			return err;
		d->enabled = 0;
		return fetch_packet(d);
	}

	d->event = ev;
	switch (ev->type) {
	case HWT_EV_ASYNC_BRANCH: {
		uint64_t at = ev->u.async_branch.from;

		ev->type = HWT_EV_ASYNC_DISABLED;
		ev->u.async_disabled.at = at;
		err = event_ip(&ev->u.async_disabled.ip, ev, &d->ip);
		d->enabled = 0;
		d->bound = 1;
		break;
	}
	case HWT_EV_ASYNC_PAGING:
	case HWT_EV_ASYNC_VMCS:
		/* They follow the async disable made above. */
		if (!d->bound)
			return -HWT_ERR_INTERNAL;
		/* fall through */
	case HWT_EV_EXEC_MODE:
		/*
		 * Tracing is off when these are applied: the IP they bind to
		 * is never reached, so it is suppressed.
		 */
		ev->ip_suppressed = 1;
		err = 0;
		break;
	default:
		return -HWT_ERR_BAD_CONTEXT;
	}
	if (err < 0)
		return err;
	return ev_time(d, ev);
}

static int decode_tnt(struct hwt_evt_decoder *d,
		      const struct hwt_pt_packet *pkt)
{
	struct hwt_event *ev;

	if (!d->enabled)
		return -HWT_ERR_BAD_CONTEXT;
	ev = standalone(d, HWT_EV_TNT);
	ev->u.tnt.bits = pkt->u.tnt.payload;
	ev->u.tnt.size = pkt->u.tnt.bits;
	return publish(d, ev);
}

/* ------------------------------------------------------------------ */
/* Event trace: CFE, EVD                                               */
/* ------------------------------------------------------------------ */

enum {
	CFE_INTR = 0x01,
	CFE_IRET = 0x02,
	CFE_SMI = 0x03,
	CFE_RSM = 0x04,
	CFE_SIPI = 0x05,
	CFE_INIT = 0x06,
	CFE_VMENTRY = 0x07,
	CFE_VMEXIT = 0x08,
	CFE_VMEXIT_INTR = 0x09,
	CFE_SHUTDOWN = 0x0a,
	CFE_UINTR = 0x0c,
	CFE_UIRET = 0x0d
};

enum {
	EVD_CR2 = 0x00,
	EVD_VMXQ = 0x01,
	EVD_VMXR = 0x02
};

/*
 * A CFE event: with CFE.IP it binds to the FUP that follows; otherwise,
 * while tracing is enabled, to a FUP that may follow (@fup_if_enabled);
 * else it is standalone without IP.
 */
static int cfe_bind(struct hwt_evt_decoder *d, const struct hwt_event *tmpl,
		    int ip, int fup_if_enabled)
{
	struct hwt_event *ev;

	if (ip) {
		if (!evq_requeue(&d->evq, tmpl, EVB_FUP_BOUND))
			return -HWT_ERR_NOMEM;
		return 1;
	}
	if (fup_if_enabled && d->enabled) {
		ev = evq_requeue(&d->evq, tmpl, EVB_FUP);
		if (!ev)
			return -HWT_ERR_NOMEM;
		return 1;
	}
	ev = evq_standalone(&d->evq);
	*ev = *tmpl;
	return publish_noip(d, ev);
}

static int decode_cfe(struct hwt_evt_decoder *d,
		      const struct hwt_pt_packet *pkt)
{
	struct hwt_event tmpl, *ev;
	int ip = pkt->u.cfe.ip;

	/* An EVD may have queued the event this CFE completes. */
	ev = evq_dequeue(&d->evq, EVB_CFE);
	memset(&tmpl, 0, sizeof(tmpl));

	switch (pkt->u.cfe.type) {
	case CFE_INTR:
		if (ev) {
			if (ev->type != HWT_EV_INTERRUPT)
				return -HWT_ERR_BAD_CONTEXT;
			tmpl = *ev;
		}
		tmpl.type = HWT_EV_INTERRUPT;
		tmpl.u.interrupt.vector = pkt->u.cfe.vector;
		return cfe_bind(d, &tmpl, ip, 1);
	case CFE_VMEXIT:
	case CFE_VMEXIT_INTR:
		if (ev) {
			if (ev->type != HWT_EV_VMEXIT)
				return -HWT_ERR_BAD_CONTEXT;
			tmpl = *ev;
		}
		tmpl.type = HWT_EV_VMEXIT;
		if (pkt->u.cfe.type == CFE_VMEXIT_INTR) {
			tmpl.u.vmexit.has_vector = 1;
			tmpl.u.vmexit.vector = pkt->u.cfe.vector;
		}
		return cfe_bind(d, &tmpl, ip, 1);
	default:
		break;
	}

	if (ev) {
		/* EVD only queues events for the CFE types above. */
		switch (pkt->u.cfe.type) {
		case CFE_IRET:
		case CFE_SMI:
		case CFE_RSM:
		case CFE_SIPI:
		case CFE_INIT:
		case CFE_VMENTRY:
		case CFE_SHUTDOWN:
		case CFE_UINTR:
		case CFE_UIRET:
			return -HWT_ERR_BAD_CONTEXT;
		default:
			return -HWT_ERR_INTERNAL;
		}
	}

	switch (pkt->u.cfe.type) {
	case CFE_IRET:
		tmpl.type = HWT_EV_IRET;
		return cfe_bind(d, &tmpl, ip, 0);
	case CFE_SMI:
		tmpl.type = HWT_EV_SMI;
		return cfe_bind(d, &tmpl, ip, 1);
	case CFE_RSM:
	case CFE_SIPI:
		if (ip)
			return -HWT_ERR_BAD_PACKET;
		/* Their IP is never known: the event is suppressed. */
		tmpl.ip_suppressed = 1;
		if (pkt->u.cfe.type == CFE_RSM) {
			tmpl.type = HWT_EV_RSM;
		} else {
			tmpl.type = HWT_EV_SIPI;
			tmpl.u.sipi.vector = pkt->u.cfe.vector;
		}
		return cfe_bind(d, &tmpl, 0, 1);
	case CFE_INIT:
		tmpl.type = HWT_EV_INIT;
		return cfe_bind(d, &tmpl, ip, 1);
	case CFE_VMENTRY:
		tmpl.type = HWT_EV_VMENTRY;
		return cfe_bind(d, &tmpl, ip, 0);
	case CFE_SHUTDOWN:
		tmpl.type = HWT_EV_SHUTDOWN;
		return cfe_bind(d, &tmpl, ip, 0);
	case CFE_UINTR:
		tmpl.type = HWT_EV_UINTR;
		tmpl.u.uintr.vector = pkt->u.cfe.vector;
		return cfe_bind(d, &tmpl, ip, 1);
	case CFE_UIRET:
		tmpl.type = HWT_EV_UIRET;
		return cfe_bind(d, &tmpl, ip, 0);
	default:
		/*
		 * Unknown types only add information: ignore them, and the
		 * FUP they may bind.
		 */
		if (ip) {
			ev = evq_enqueue(&d->evq, EVB_FUP_BOUND);
			if (!ev)
				return -HWT_ERR_NOMEM;
			ev->type = HWT_EV_IGNORE_;
		}
		return 1;
	}
}

static int decode_evd(struct hwt_evt_decoder *d,
		      const struct hwt_pt_packet *pkt)
{
	struct hwt_event *ev = evq_peek(&d->evq, EVB_CFE);

	switch (pkt->u.evd.type) {
	case EVD_CR2:
		if (ev)
			return -HWT_ERR_BAD_CONTEXT;
		ev = evq_enqueue(&d->evq, EVB_CFE);
		if (!ev)
			return -HWT_ERR_NOMEM;
		ev->type = HWT_EV_INTERRUPT;
		ev->u.interrupt.has_cr2 = 1;
		ev->u.interrupt.cr2 = pkt->u.evd.payload;
		return 1;
	case EVD_VMXQ:
	case EVD_VMXR:
		if (!ev) {
			ev = evq_enqueue(&d->evq, EVB_CFE);
			if (!ev)
				return -HWT_ERR_NOMEM;
			ev->type = HWT_EV_VMEXIT;
		}
		if (ev->type != HWT_EV_VMEXIT)
			return -HWT_ERR_BAD_CONTEXT;
		if (pkt->u.evd.type == EVD_VMXQ) {
			if (ev->u.vmexit.has_vmxq)
				return -HWT_ERR_BAD_CONTEXT;
			ev->u.vmexit.has_vmxq = 1;
			ev->u.vmexit.vmxq = pkt->u.evd.payload;
		} else {
			if (ev->u.vmexit.has_vmxr)
				return -HWT_ERR_BAD_CONTEXT;
			ev->u.vmexit.has_vmxr = 1;
			ev->u.vmexit.vmxr = pkt->u.evd.payload;
		}
		return 1;
	default:
		return 1;
	}
}

/* ------------------------------------------------------------------ */
/* The packet loop                                                     */
/* ------------------------------------------------------------------ */

static int decode_packet(struct hwt_evt_decoder *d)
{
	const struct hwt_pt_packet *pkt = &d->packet;
	struct hwt_event *ev;
	int err;

	switch (pkt->type) {
	case HWT_PT_TNT8:
	case HWT_PT_TNT64:
		return decode_tnt(d, pkt);
	case HWT_PT_TIP:
		return decode_tip(d, pkt);
	case HWT_PT_FUP:
		return decode_fup(d, pkt);
	case HWT_PT_CYC:
	case HWT_PT_MTC:
	case HWT_PT_TSC:
	case HWT_PT_TMA:
		err = time_apply(&d->tt, pkt, 0);
		return err < 0 ? err : 1;
	case HWT_PT_CBR:
		err = time_apply(&d->tt, pkt, 0);
		if (err < 0)
			return err;
		ev = standalone(d, HWT_EV_CBR);
		ev->u.cbr.ratio = pkt->u.cbr;
		return publish(d, ev);
	case HWT_PT_PAD:
		return 1;
	case HWT_PT_MODE_EXEC:
		return decode_mode_exec(d, pkt->u.exec);
	case HWT_PT_MODE_TSX:
		return decode_mode_tsx(d, pkt->u.tsx);
	case HWT_PT_PIP:
		return decode_pip(d, pkt);
	case HWT_PT_PTW:
		return decode_ptw(d, pkt);
	case HWT_PT_PSB:
		err = decode_psb(d);
		if (err <= 0)
			return err;
		return decode_packet(d);
	case HWT_PT_PSBEND:
		return decode_psbend(d);
	case HWT_PT_TIP_PGE:
		return decode_tip_pge(d, pkt);
	case HWT_PT_TIP_PGD:
		return decode_tip_pgd(d, pkt);
	case HWT_PT_EXSTOP:
		return decode_exstop(d, pkt);
	case HWT_PT_PWRE:
		ev = standalone(d, HWT_EV_PWRE);
		ev->u.pwre.state = pkt->u.pwre.state;
		ev->u.pwre.sub_state = pkt->u.pwre.sub_state;
		ev->u.pwre.hw = !!pkt->u.pwre.hw;
		return publish(d, ev);
	case HWT_PT_PWRX:
		ev = standalone(d, HWT_EV_PWRX);
		ev->u.pwrx.last = pkt->u.pwrx.last;
		ev->u.pwrx.deepest = pkt->u.pwrx.deepest;
		ev->u.pwrx.interrupt = !!(pkt->u.pwrx.wake & HWT_PT_PWRX_INT);
		ev->u.pwrx.store = !!(pkt->u.pwrx.wake & HWT_PT_PWRX_STORE);
		ev->u.pwrx.autonomous = !!(pkt->u.pwrx.wake & HWT_PT_PWRX_HW);
		return publish(d, ev);
	case HWT_PT_MWAIT:
		return decode_mwait(d, pkt);
	case HWT_PT_VMCS:
		return decode_vmcs(d, pkt);
	case HWT_PT_OVF:
		return decode_ovf(d);
	case HWT_PT_STOP:
		ev = standalone(d, HWT_EV_STOP);
		return publish(d, ev);
	case HWT_PT_MNT:
		ev = standalone(d, HWT_EV_MNT);
		ev->u.mnt.payload = pkt->u.mnt;
		return publish(d, ev);
	case HWT_PT_CFE:
		return decode_cfe(d, pkt);
	case HWT_PT_EVD:
		return decode_evd(d, pkt);
	case HWT_PT_BEP:
		/*
		 * PEBS via PT (libipt does not know these): a BEP with IP
		 * binds the next FUP, which must not become an async branch.
		 */
		if (pkt->u.bep_ip) {
			ev = evq_enqueue(&d->evq, EVB_FUP_BOUND);
			if (!ev)
				return -HWT_ERR_NOMEM;
			ev->type = HWT_EV_IGNORE_;
		}
		return 1;
	case HWT_PT_BBP:
	case HWT_PT_BIP:
		return 1;
	case HWT_PT_INVALID:
		return d->status < 0 ? d->status : 1;
	default:
		return -HWT_ERR_BAD_OPC;
	}
}

/* Decode packets until one produces an event. */
static int fetch_event(struct hwt_evt_decoder *d)
{
	for (;;) {
		int err = decode_packet(d);

		if (err <= 0)
			return err;
		if (d->event)
			return -HWT_ERR_INTERNAL;
		/* The packet was consumed without an event: the next one
		 * is not bound (yet). */
		d->bound = 0;
		fetch_packet(d);
	}
}

/* ------------------------------------------------------------------ */
/* For the fast path (evt.h)                                           */
/* ------------------------------------------------------------------ */

void hwt_evt_fetch_packet(struct hwt_evt_decoder *d)
{
	fetch_packet(d);
}

int hwt_evt_time_apply(struct hwt_evt_decoder *d)
{
	return time_apply(&d->tt, &d->packet, 0);
}

/* ------------------------------------------------------------------ */
/* Public interface                                                    */
/* ------------------------------------------------------------------ */

struct hwt_evt_decoder *hwt_evt_new(const struct hwt_qry_config *config)
{
	struct hwt_evt_decoder *d;

	if (!config || !config->begin || config->end < config->begin)
		return NULL;
	d = malloc(sizeof(*d));
	if (d)
		hwt_evt_init(d, config);
	return d;
}

void hwt_evt_delete(struct hwt_evt_decoder *d)
{
	free(d);
}

void hwt_evt_copy(struct hwt_evt_decoder *dst,
		  const struct hwt_evt_decoder *src)
{
	if (dst && src && dst != src) {
		*dst = *src;
		dst->event = NULL;
	}
}

/* Synchronised at a PSB: decode its PSB+ up to PSBEND/OVF. */
static int evt_start(struct hwt_evt_decoder *d)
{
	int err;

	d->status = 0;
	fetch_packet(d);
	switch (d->packet.type) {
	case HWT_PT_PSB:
		err = decode_psb(d);
		return err < 0 ? err : 0;
	case HWT_PT_INVALID:
		return d->status < 0 ? d->status : -HWT_ERR_INTERNAL;
	default:
		return -HWT_ERR_NOSYNC;
	}
}

int hwt_evt_sync_forward(struct hwt_evt_decoder *d)
{
	struct hwt_evt_cursor *c;
	const uint8_t *from, *psb;

	if (!d)
		return -HWT_ERR_INVALID;
	c = &d->cur;
	/*
	 * The cursor stands past the packet under decode (one packet of
	 * look-ahead): search from that packet, so that a PSB where an error
	 * was reported is not skipped. As the packet layer: standing on the
	 * sync point, search from the byte after it; else from up to 15 bytes
	 * back, for a PSB the packet before ran into.
	 */
	from = c->pos ? c->pos - d->packet.size : c->begin;
	evt_reset(d);
	if (c->sync && from == c->sync) {
		if (from >= c->end)
			return -HWT_ERR_EOS;
		from++;
	} else {
		from -= from - c->begin < HWT_PT_PSB_SIZE ?
			from - c->begin : HWT_PT_PSB_SIZE - 1;
	}
	psb = hwt_pt_find_psb(from, c->end);
	if (!psb)
		return -HWT_ERR_EOS;
	c->pos = psb;
	c->sync = psb;
	c->bip_size = 0;
	return evt_start(d);
}

int hwt_evt_sync_backward(struct hwt_evt_decoder *d)
{
	const uint8_t *start, *sync, *psb;
	struct hwt_evt_cursor *c;
	int err;

	if (!d)
		return -HWT_ERR_INVALID;
	c = &d->cur;
	start = c->pos ? c->pos : c->end;
	sync = start;
	for (;;) {
		evt_reset(d);
		do {
			psb = hwt_pt_find_psb_backward(c->begin,
						       c->pos ? c->pos : c->end,
						       c->end);
			if (!psb)
				return -HWT_ERR_EOS;
			c->pos = psb;
			c->sync = psb;
			c->bip_size = 0;
		} while (sync <= psb);
		sync = psb;
		err = evt_start(d);
		if (c->pos < start)
			return err;
	}
}

int hwt_evt_sync_set(struct hwt_evt_decoder *d, uint64_t offset)
{
	struct hwt_evt_cursor *c;

	if (!d)
		return -HWT_ERR_INVALID;
	evt_reset(d);
	c = &d->cur;
	if (offset > (uint64_t)(c->end - c->begin))
		return -HWT_ERR_EOS;
	c->pos = c->begin + offset;
	c->sync = c->pos;
	c->bip_size = 0;
	return evt_start(d);
}

int hwt_evt_get_exec(const struct hwt_evt_decoder *d, uint8_t *exec)
{
	*exec = (uint8_t)((d->iflag ? HWT_PT_EXEC_IF : 0) |
			  (d->csd ? HWT_PT_EXEC_CSD : 0) |
			  (d->csl ? HWT_PT_EXEC_CSL : 0));
	return d->mode_exec_valid;
}

void hwt_evt_exec_seed(struct hwt_evt_decoder *d, int valid, uint8_t exec)
{
	d->have_exec_seed = 1;
	d->exec_seed_valid = valid ? 1 : 0;
	d->exec_seed = exec;
}

void hwt_evt_time_seed(struct hwt_evt_decoder *d,
		       const struct hwt_time_tracker *tt)
{
	d->seed = *tt;
	d->have_seed = 1;
}

void hwt_evt_time_watch(struct hwt_evt_decoder *d, uint64_t offset)
{
	d->watch = offset < (uint64_t)(d->cur.end - d->cur.begin) ?
		   d->cur.begin + offset : NULL;
	d->have_watched = 0;
}

int hwt_evt_time_watched(const struct hwt_evt_decoder *d,
			 struct hwt_time_tracker *tt)
{
	if (!d->have_watched)
		return 0;
	*tt = d->watched;
	return 1;
}

int hwt_evt_time_warm(const struct hwt_qry_config *config, uint64_t offset,
		      uint64_t max, struct hwt_time_tracker *tt)
{
	struct hwt_evt_decoder *d = hwt_evt_new(config);
	const uint8_t *psb, *from, *lo;
	struct hwt_event ev;
	int err, found;

	if (!d)
		return -HWT_ERR_NOMEM;
	*tt = d->tt;
	hwt_evt_time_watch(d, offset);
	if (!d->watch) {
		hwt_evt_delete(d);
		return 0;
	}
	/* Two PSBs back (not more than @max): a TSC period, or two MTC
	 * ones. (Not the whole way: the search is backwards.) */
	from = d->watch;
	lo = max < (uint64_t)(d->watch - d->cur.begin) ? d->watch - max :
							 d->cur.begin;
	for (int i = 0; i < 2; i++) {
		psb = hwt_pt_find_psb_backward(lo, from, d->cur.end);
		if (!psb)
			break;
		from = psb;
	}
	err = from < d->watch ? hwt_evt_sync_set(d, (uint64_t)(from -
							  d->cur.begin)) :
				-HWT_ERR_EOS;
	/* As a decoder on its way there: past errors to the next PSB. */
	while (!d->have_watched && err != -HWT_ERR_EOS) {
		/* Past it: a resync went over it, or never stopped there. */
		if (d->cur.pos && d->cur.pos - d->packet.size > d->watch)
			break;
		if (err < 0) {
			err = hwt_evt_sync_forward(d);
			continue;
		}
		err = hwt_evt_next(d, &ev);
	}
	found = d->have_watched;
	if (found)
		*tt = d->watched;
	hwt_evt_delete(d);
	return found;
}

/* A decoder at the PSB at @offset, starting with @tt's time. */
static struct hwt_evt_decoder *
time_from(const struct hwt_qry_config *config, uint64_t offset,
	  const struct hwt_time_tracker *tt)
{
	struct hwt_evt_decoder *d = hwt_evt_new(config);

	if (!d)
		return NULL;
	hwt_evt_time_seed(d, tt);
	if (hwt_evt_sync_set(d, offset) < 0) {
		hwt_evt_delete(d);
		return NULL;
	}
	return d;
}

static int stamp_same(const struct hwt_event *a, const struct hwt_event *b)
{
	return a->has_tsc == b->has_tsc && a->tsc == b->tsc &&
	       a->lost_mtc == b->lost_mtc && a->lost_cyc == b->lost_cyc;
}

int hwt_evt_time_same_from(const struct hwt_qry_config *config,
			   uint64_t offset, const struct hwt_time_tracker *a,
			   const struct hwt_time_tracker *b)
{
	struct hwt_evt_decoder *da = time_from(config, offset, a);
	struct hwt_evt_decoder *db = time_from(config, offset, b);
	struct hwt_event ea, eb;
	int same = da && db, ra, rb;

	/*
	 * The PSB+'s packets set most of the time (a TSC, a CBR): the two
	 * are the same from there if its events have the same times, and
	 * then so do the decoders (the first event after it included). An
	 * error, or the end, before that is as good: a decoder starts over
	 * after it (the same error for both: the same packets).
	 */
	while (same) {
		ra = hwt_evt_next(da, &ea);
		rb = hwt_evt_next(db, &eb);
		if (ra < 0 || rb < 0) {
			same = ra == rb ? 2 : 0;
			break;
		}
		same = ea.type == eb.type && stamp_same(&ea, &eb);
		if (!ea.status_update)
			break;
	}
	if (same == 1)
		same = hwt_time_tracker_same(&da->tt, &db->tt);
	hwt_evt_delete(da);
	hwt_evt_delete(db);
	return same != 0;
}

int hwt_evt_get_offset(const struct hwt_evt_decoder *d, uint64_t *offset)
{
	if (!d || !offset)
		return -HWT_ERR_INVALID;
	if (!d->cur.pos)
		return -HWT_ERR_NOSYNC;
	*offset = (uint64_t)(d->cur.pos - d->cur.begin) - d->packet.size;
	return 0;
}

int hwt_evt_get_sync_offset(const struct hwt_evt_decoder *d,
			    uint64_t *offset)
{
	if (!d || !offset)
		return -HWT_ERR_INVALID;
	if (!d->cur.sync)
		return -HWT_ERR_NOSYNC;
	*offset = (uint64_t)(d->cur.sync - d->cur.begin);
	return 0;
}

int hwt_evt_pos(const struct hwt_evt_decoder *d, uint64_t *offset)
{
	if (!d || !offset)
		return -HWT_ERR_INVALID;
	if (!d->cur.pos)
		return -HWT_ERR_NOSYNC;
	*offset = (uint64_t)(d->cur.pos - d->cur.begin);
	return 0;
}

int hwt_evt_next(struct hwt_evt_decoder *d, struct hwt_event *event)
{
	struct hwt_event *ev;
	int err;

	if (!d || !event)
		return -HWT_ERR_INVALID;
	err = fetch_event(d);
	if (err < 0) {
		d->event = NULL;
		return err;
	}
	ev = d->event;
	d->event = NULL;
	if (!ev)
		return -HWT_ERR_INTERNAL;
	*event = *ev;
	return 0;
}

int hwt_evt_time(const struct hwt_evt_decoder *d, uint64_t *tsc,
		 uint32_t *lost_mtc, uint32_t *lost_cyc)
{
	if (!d || !tsc)
		return -HWT_ERR_INVALID;
	return hwt_time_query_tsc(&d->tt.time, tsc, lost_mtc, lost_cyc);
}

int hwt_event_resume_ip(const struct hwt_event *ev, uint64_t *ip)
{
	if (ev->ip_suppressed)
		return 0;
	switch (ev->type) {
	case HWT_EV_ENABLED:
		*ip = ev->u.enabled.ip;
		return 1;
	case HWT_EV_EXEC_MODE:
		*ip = ev->u.exec_mode.ip;
		return 1;
	case HWT_EV_TSX:
		*ip = ev->u.tsx.ip;
		return 1;
	default:
		return 0;
	}
}

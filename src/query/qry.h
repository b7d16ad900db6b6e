/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The query decoder's state and its two hot questions, inline, for the
 * flow layer's fast path: a conditional branch costs a shift and a test
 * while the TNT cache holds bits, and an indirect branch one TIP packet
 * parsed in place (evt.h). hwt_qry_cond_branch() and
 * hwt_qry_indirect_branch() are these with argument checks; everything
 * else (refilling the TNT cache, events, errors) goes out of line to the
 * general path in query.c, so both ways give the same answers.
 */
#ifndef HWT_QUERY_QRY_H
#define HWT_QUERY_QRY_H

#include <stdint.h>

#include "query/evt.h"

struct hwt_qry_decoder {
	/* The TNT cache, hot: bit @tnt_index of @tnt is the next branch. */
	uint64_t tnt;
	uint64_t tnt_index;	/* 0: empty */
	int status;		/* 0, or the error fetching @event */
	struct hwt_event event;	/* the next event */
	struct hwt_time last_time;	/* at the last event consumed */
	struct hwt_evt_decoder evd;
};

/* Append @size bits to the TNT cache (the first one highest). */
static inline int hwt_qry_tnt_add_(struct hwt_qry_decoder *d, uint64_t bits,
				   uint8_t size)
{
	uint64_t index;

	if (!size)
		return 0;
	if (size > 64)
		return -HWT_ERR_INTERNAL;
	index = d->tnt_index;
	if (index)
		index = size < 64 ? index << size : 0;
	else
		index = 1ull << (size - 1);
	if (!index)
		return -HWT_ERR_OVERFLOW;
	d->tnt_index = index;
	d->tnt = size < 64 ? d->tnt << size : 0;
	d->tnt |= size < 64 ? bits & ((1ull << size) - 1) : bits;
	return 0;
}

/*
 * Direct mode, for the flow layer's fast path: TNT bits and TIP targets
 * taken from the raw packets, without making events, while there is
 * nothing else: no timing packets, nothing queued, no errors. The decoder
 * normally runs one event and one packet ahead; here both are set aside
 * (the lookahead event @pending, then the packets from @cur on, which
 * hwt_evt_cur_next_fast_() parses as the general path does), and
 * hwt_qry_direct_end_() sets the decoder up as if it had answered the
 * same queries the general way: the packets taken consumed, the last IP
 * and time as they left it, and the next event fetched ahead again.
 * The caller keeps the TNT cache (@tnt, @tnt_index) in the decoder.
 */
struct hwt_qry_direct {
	struct hwt_evt_cursor cur;	/* the packets not taken yet */
	struct hwt_pt_last_ip ip;	/* the last IP after those taken */
	uint8_t pending;		/* the lookahead event is not taken */
	uint8_t moved;			/* something was taken */
	uint8_t peeked;			/* @next is the packet at @cur */
	const uint8_t *after;		/* ... and this is after it */
	struct hwt_pt_packet next;
};

/* Enter direct mode, if the decoder's state allows it: 1, else 0. */
static inline int hwt_qry_direct_begin_(const struct hwt_qry_decoder *d,
					struct hwt_qry_direct *x)
{
	const struct hwt_evt_decoder *e = &d->evd;

	if (d->status || e->status || e->evq.begin != e->evq.end ||
	    !e->enabled || e->cur.bip_size || !e->cur.pos)
		return 0;
	x->cur = e->cur;
	switch (d->event.type) {
	case HWT_EV_TIP:
		/* Its packet is the current one, done with. */
		if (!e->bound || e->packet.type != HWT_PT_TIP)
			return 0;
		break;
	case HWT_EV_TNT:
		/* The packet after it is parsed; it starts again from it. */
		if (e->bound || (e->packet.type != HWT_PT_TNT8 &&
				 e->packet.type != HWT_PT_TNT64 &&
				 e->packet.type != HWT_PT_TIP))
			return 0;
		x->cur.pos -= e->packet.size;
		break;
	default:
		return 0;
	}
	x->ip = e->ip;
	x->pending = 1;
	x->moved = 0;
	x->peeked = 0;
	return 1;
}

/*
 * The next packet, if it is a TNT or a TIP (else 0: leave direct mode),
 * in @x->next, @x->after the position after it. Parsed once, however
 * often asked for, until something is taken.
 */
static inline __attribute__((always_inline)) int
hwt_qry_direct_peek_(struct hwt_qry_direct *x)
{
	struct hwt_evt_cursor c;

	if (!x->peeked) {
		c = x->cur;
		if (!hwt_evt_cur_next_fast_(&c, &x->next))
			return 0;
		x->after = c.pos;
		x->peeked = 1;
	}
	return x->next.type == HWT_PT_TNT8 || x->next.type == HWT_PT_TNT64 ||
	       x->next.type == HWT_PT_TIP;
}

/* The peeked packet is taken. */
static inline void hwt_qry_direct_take_(struct hwt_qry_direct *x)
{
	x->cur.pos = x->after;
	x->peeked = 0;
	x->moved = 1;
}

/*
 * With the TNT cache empty: fill it from the next event if that is a TNT,
 * as hwt_qry_cond_slow_() does. Returns the new @tnt_index, or 0.
 */
static inline __attribute__((always_inline)) uint64_t
hwt_qry_direct_tnt_(struct hwt_qry_decoder *d, struct hwt_qry_direct *x)
{
	uint64_t bits;
	uint8_t size;

	if (x->pending) {
		if (d->event.type != HWT_EV_TNT || !d->event.u.tnt.size)
			return 0;
		bits = d->event.u.tnt.bits;
		size = d->event.u.tnt.size;
		x->pending = 0;
		x->moved = 1;
	} else {
		if (!hwt_qry_direct_peek_(x) || x->next.type == HWT_PT_TIP ||
		    !x->next.u.tnt.bits)
			return 0;
		bits = x->next.u.tnt.payload;
		size = x->next.u.tnt.bits;
		hwt_qry_direct_take_(x);
	}
	d->tnt_index = 0;
	(void) hwt_qry_tnt_add_(d, bits, size);
	return d->tnt_index;
}

/* With the TNT cache empty: is the status clean, i.e. is the next event
 * a TNT or a TIP? 0 if it is not known here. */
static inline __attribute__((always_inline)) int
hwt_qry_direct_clean_(const struct hwt_qry_decoder *d,
		      struct hwt_qry_direct *x)
{
	if (x->pending)
		return d->event.type == HWT_EV_TNT ||
		       d->event.type == HWT_EV_TIP;
	return hwt_qry_direct_peek_(x);
}

/* The next event if it is a TIP with an IP, as hwt_qry_indirect_()
 * takes it: 1 and *@ip, or 0. */
static inline __attribute__((always_inline)) int
hwt_qry_direct_tip_(const struct hwt_qry_decoder *d,
		    struct hwt_qry_direct *x, uint64_t *ip)
{
	struct hwt_pt_last_ip lip;

	if (x->pending) {
		if (d->event.type != HWT_EV_TIP || d->event.ip_suppressed)
			return 0;
		*ip = d->event.u.tip.ip;
		x->pending = 0;
		x->moved = 1;
		return 1;
	}
	if (!hwt_qry_direct_peek_(x) || x->next.type != HWT_PT_TIP)
		return 0;
	lip = x->ip;
	hwt_evt_update_ip_(&lip, x->next.u.ip.ipc, x->next.u.ip.ip);
	if (!lip.have_ip || lip.suppressed)
		return 0;
	x->ip = lip;
	*ip = lip.ip;
	hwt_qry_direct_take_(x);
	return 1;
}

/* Leave direct mode (see above); the TNT cache must be in @d. */
void hwt_qry_direct_end_(struct hwt_qry_decoder *d, struct hwt_qry_direct *x);

/* The general path (query.c). */
int hwt_qry_cond_slow_(struct hwt_qry_decoder *d, int *taken);
uint64_t hwt_qry_refill_(struct hwt_qry_decoder *d);
int hwt_qry_indirect_slow_(struct hwt_qry_decoder *d, uint64_t *ip);
void hwt_qry_fetch_slow_(struct hwt_qry_decoder *d);

/* The status bits once the TNT cache is empty. */
static inline int hwt_qry_status_empty_(const struct hwt_qry_decoder *d)
{
	if (d->status == -HWT_ERR_EOS)
		return HWT_STS_EOS;
	return d->event.type != HWT_EV_TNT && d->event.type != HWT_EV_TIP ?
	       HWT_STS_EVENT_PENDING : 0;
}

/* Status bits: an event or the end is only announced with no TNT left. */
static inline int hwt_qry_status_(const struct hwt_qry_decoder *d)
{
	return d->tnt_index ? 0 : hwt_qry_status_empty_(d);
}

/* Fetch the next event; an error is kept for later. */
static inline __attribute__((always_inline)) void
hwt_qry_fetch_(struct hwt_qry_decoder *d)
{
	int err = hwt_evt_next_fast(&d->evd, &d->event);

	if (__builtin_expect(err > 0, 1))
		return;
	if (err < 0) {
		d->status = err;
		memset(&d->event, 0xff, sizeof(d->event));
		return;
	}
	hwt_qry_fetch_slow_(d);
}

/* hwt_qry_cond_branch() without the argument checks. */
static inline __attribute__((always_inline)) int
hwt_qry_cond_(struct hwt_qry_decoder *d, int *taken)
{
	uint64_t index = d->tnt_index;

	if (__builtin_expect(index > 1, 1)) {
		*taken = (d->tnt & index) != 0;
		d->tnt_index = index >> 1;
		return 0;
	}
	if (index) {
		*taken = (d->tnt & 1) != 0;
		d->tnt_index = 0;
		return hwt_qry_status_(d);
	}
	return hwt_qry_cond_slow_(d, taken);
}

/* hwt_qry_indirect_branch() without the argument checks. */
static inline __attribute__((always_inline)) int
hwt_qry_indirect_(struct hwt_qry_decoder *d, uint64_t *ip)
{
	int status = 0;

	if (__builtin_expect(d->status < 0 || d->event.type != HWT_EV_TIP, 0))
		return hwt_qry_indirect_slow_(d, ip);
	if (d->event.ip_suppressed)
		status = HWT_STS_IP_SUPPRESSED;
	else
		*ip = d->event.u.tip.ip;
	d->last_time = d->evd.tt.time;
	hwt_qry_fetch_(d);
	return status | hwt_qry_status_(d);
}

#endif /* HWT_QUERY_QRY_H */

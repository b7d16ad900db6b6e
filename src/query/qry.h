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

/*
 * Direct mode, for the flow layer's fast path: TNT bits and TIP targets
 * taken from the raw packets, without making events, while there is
 * nothing else: no timing packets, nothing queued, no errors. The decoder
 * normally runs one event and one packet ahead; here both are set aside
 * and the packets are parsed again, one ahead: the next one is always
 * known (@kind), so that "is the status clean?" (is the next event a TNT
 * or a TIP) costs a compare, a TNT refill a few moves and a TIP's target
 * is ready when asked for. The first of them is the decoder's lookahead
 * event (@pending). hwt_qry_direct_end_() sets the decoder up as if it
 * had answered the same queries the general way: the packets taken
 * consumed, the last IP and time as they left it, and the next event
 * fetched ahead again. The caller keeps the TNT cache (@tnt, @tnt_index)
 * and writes it back first.
 *
 * All of it is plain values, meant to live in registers: the caller
 * copies it for anything out of line.
 */
enum {
	HWT_QRY_DX_OTHER = 0,	/* not a TNT or TIP: direct mode ends there */
	HWT_QRY_DX_TNT,		/* a TNT with bits, to take */
	HWT_QRY_DX_TIP,		/* a TIP with an IP, to take */
	HWT_QRY_DX_HOLD		/* a TNT or TIP the general path must take */
};

struct hwt_qry_direct {
	const uint8_t *pos;	/* the next packet (the first not taken) */
	const uint8_t *after;	/* after it */
	const uint8_t *limit;	/* packets are parsed only before this */
	uint64_t lip;		/* the last IP after the packets taken */
	uint64_t val;		/* the next packet's bits, or its target */
	uint64_t top;		/* TNT: the index of its first bit */
	uint8_t kind;		/* of the next packet, HWT_QRY_DX_* */
	uint8_t moved;		/* something was taken */
	uint8_t tip;		/* a TIP was taken */
};

/*
 * A TNT-8 by its byte: its bits below the stop bit (first highest) in
 * the low byte, the index of the first bit (the stop bit's value / 4) in
 * the high one; for the even bytes from 4 on only. A load, where the
 * arithmetic took eight instructions a packet (python3: 3% of hwt
 * coverage's).
 */
#define HWT_QRY_TNT8_STOP(b) ((b) >= 128 ? 128 : (b) >= 64 ? 64 :	\
			      (b) >= 32 ? 32 : (b) >= 16 ? 16 :		\
			      (b) >= 8 ? 8 : 4)
#define HWT_QRY_TNT8(b)							\
	(uint16_t) ((((b) >> 1) & ((HWT_QRY_TNT8_STOP(b) >> 1) - 1)) |	\
		    ((HWT_QRY_TNT8_STOP(b) >> 2) << 8))
#define HWT_QRY_TNT8_4(b) HWT_QRY_TNT8(b), HWT_QRY_TNT8((b) + 1),	\
	HWT_QRY_TNT8((b) + 2), HWT_QRY_TNT8((b) + 3)
#define HWT_QRY_TNT8_16(b) HWT_QRY_TNT8_4(b), HWT_QRY_TNT8_4((b) + 4),	\
	HWT_QRY_TNT8_4((b) + 8), HWT_QRY_TNT8_4((b) + 12)
#define HWT_QRY_TNT8_64(b) HWT_QRY_TNT8_16(b), HWT_QRY_TNT8_16((b) + 16), \
	HWT_QRY_TNT8_16((b) + 32), HWT_QRY_TNT8_16((b) + 48)

/*
 * Parse the packet at @x->pos into @x->kind (and @val, @top, @after), as
 * hwt_evt_cur_next_fast_() and the last-IP update do (PADs skipped: they
 * stay before @pos until the packet after them is taken). Anything that is
 * not a well-formed TNT or TIP, or too close to the end, is OTHER.
 */
static inline __attribute__((always_inline)) void
hwt_qry_direct_parse_(struct hwt_qry_direct *x)
{
	static const uint16_t tnt8[256] = {
		HWT_QRY_TNT8_64(0), HWT_QRY_TNT8_64(64),
		HWT_QRY_TNT8_64(128), HWT_QRY_TNT8_64(192)
	};
	static const int8_t ipc_size[8] = { 0, 2, 4, 6, 6, -1, 8, -1 };
	/* The bits of the last IP a TIP replaces, by its IP compression
	 * (all of them where it is sign-extended from 48 bits). */
	static const uint64_t ipc_mask[8] = {
		0, 0xffffull, 0xffffffffull, ~0ull, 0xffffffffffffull, 0,
		~0ull, 0
	};
	const uint8_t *p = x->pos;
	uint64_t v, mask;
	unsigned b;
	int n;

	for (;;) {
		if (__builtin_expect(p >= x->limit, 0))
			break;
		b = *p;
		if (__builtin_expect(!(b & 1) && b > 2, 1)) {
			/* TNT-8 */
			x->val = tnt8[b] & 0xff;
			x->top = tnt8[b] >> 8;
			x->after = p + 1;
			x->kind = HWT_QRY_DX_TNT;
			return;
		}
		if ((b & 0x1f) == 0x0d) {
			n = ipc_size[b >> 5];
			if (n <= 0) {
				/* Suppressed: the general path's to take;
				 * reserved: the packet layer's to report. */
				x->kind = n ? HWT_QRY_DX_OTHER : HWT_QRY_DX_HOLD;
				x->after = p + 1;
				return;
			}
			v = hwt_evt_le64_(p + 1);
			if (b >> 5 == HWT_PT_IPC_SEXT48)
				v = (uint64_t) ((int64_t) (v << 16) >> 16);
			mask = ipc_mask[b >> 5];
			x->val = (x->lip & ~mask) | (v & mask);
			x->after = p + 1 + n;
			x->kind = HWT_QRY_DX_TIP;
			return;
		}
		if (!b) {
			++p;
			continue;
		}
		if (b == 0x02 && p[1] == 0xa3) {
			/* TNT-64: no stop bit, or only one, is malformed. */
			v = hwt_evt_le64_(p + 2) & 0xffffffffffffull;
			if (v <= 1)
				break;
			n = 63 - __builtin_clzll(v);
			x->val = v & ~(1ull << n);
			x->top = 1ull << (n - 1);
			x->after = p + 8;
			x->kind = HWT_QRY_DX_TNT;
			return;
		}
		break;
	}
	x->kind = HWT_QRY_DX_OTHER;
}

/* Enter direct mode, if the decoder's state allows it: 1, else 0 (then
 * @x->kind is OTHER and nothing is ever taken). */
static inline int hwt_qry_direct_begin_(const struct hwt_qry_decoder *d,
					struct hwt_qry_direct *x)
{
	const struct hwt_evt_decoder *e = &d->evd;
	const uint8_t *pos = e->cur.pos;

	/* Nothing taken yet, nothing to take: what the caller sees if the
	 * decoder's state does not allow direct mode. */
	x->kind = HWT_QRY_DX_OTHER;
	x->moved = 0;
	x->tip = 0;
	if (d->status || e->status || e->evq.begin != e->evq.end ||
	    !e->enabled || e->cur.bip_size || !pos)
		return 0;
	switch (d->event.type) {
	case HWT_EV_TIP:
		/* Its packet is the current one, done with. */
		if (!e->bound || e->packet.type != HWT_PT_TIP)
			return 0;
		x->kind = d->event.ip_suppressed ? HWT_QRY_DX_HOLD :
						    HWT_QRY_DX_TIP;
		x->val = d->event.u.tip.ip;
		break;
	case HWT_EV_TNT:
		/* The packet after it is parsed; it starts again from it. */
		if (e->bound || (e->packet.type != HWT_PT_TNT8 &&
				 e->packet.type != HWT_PT_TNT64 &&
				 e->packet.type != HWT_PT_TIP))
			return 0;
		pos -= e->packet.size;
		/* As the TNT cache takes it (hwt_qry_tnt_add_()). */
		if (!d->event.u.tnt.size || d->event.u.tnt.size > 64) {
			x->kind = HWT_QRY_DX_HOLD;
		} else {
			x->kind = HWT_QRY_DX_TNT;
			x->top = 1ull << (d->event.u.tnt.size - 1);
			x->val = d->event.u.tnt.bits &
				 (((x->top - 1) << 1) | 1);
		}
		break;
	default:
		return 0;
	}
	x->pos = pos;
	x->after = pos;
	/* hwt_evt_cur_next_fast_()'s margin: @end - @p >= the margin. */
	x->limit = e->cur.end - e->cur.begin >= HWT_EVT_FAST_MARGIN - 1 ?
		   e->cur.end - (HWT_EVT_FAST_MARGIN - 1) : e->cur.begin;
	x->lip = e->ip.ip;
	return 1;
}

/* Take the next packet, a TNT (its bits are @val from @top down). */
static inline __attribute__((always_inline)) void
hwt_qry_direct_take_tnt_(struct hwt_qry_direct *x)
{
	x->pos = x->after;
	x->moved = 1;
	hwt_qry_direct_parse_(x);
}

/* Take the next packet, a TIP (its target is @val). */
static inline __attribute__((always_inline)) void
hwt_qry_direct_take_tip_(struct hwt_qry_direct *x)
{
	x->lip = x->val;
	x->tip = 1;
	hwt_qry_direct_take_tnt_(x);
}

/* Leave direct mode (see above); the TNT cache must be in @d. */
void hwt_qry_direct_end_(struct hwt_qry_decoder *d,
			 const struct hwt_qry_direct *x);

/* The general path (query.c). */
int hwt_qry_cond_slow_(struct hwt_qry_decoder *d, int *taken);
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

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The event decoder's state, for the query layer (and any layer above that
 * wants to embed one by value or copy it cheaply for look-ahead).
 *
 * Everything is plain data pointing into the borrowed trace buffer, so a
 * struct copy is a complete snapshot; @event is only set while an event is
 * being produced (NULL between calls), so copies never alias.
 */
#ifndef HWT_QUERY_EVT_H
#define HWT_QUERY_EVT_H

#include <stdint.h>
#include <string.h>

#include <hwt/query.h>

/* What an event waits for (a bit set: it binds to the first of them). */
enum {
	EVB_PSBEND = 1u << 0,
	EVB_TIP = 1u << 1,
	EVB_FUP = 1u << 2,
	EVB_FUP_BOUND = 1u << 3,
	EVB_EXSTOP = 1u << 4,
	EVB_CFE = 1u << 5,
	EVB_ALL = 0xffffffffu
};

/*
 * Internal-only event types: IGNORE binds a packet (a MODE.Exec that
 * changes nothing, a CFE of unknown type) without reporting anything;
 * INVALID marks the current event slot after an error.
 */
#define HWT_EV_IGNORE_ ((uint8_t)HWT_EV_NTYPES)
#define HWT_EV_INVALID_ ((uint8_t)0xff)

/* Must be a power of two; one slot stays free (see evq_enqueue()). */
#define HWT_EVQ_MAX 16

struct hwt_evq_entry {
	struct hwt_event ev;
	uint32_t binding;
};

struct hwt_evq {
	struct hwt_evq_entry q[HWT_EVQ_MAX];
	uint8_t begin, end;
	struct hwt_event standalone;
};

/* A position in the trace: packets are decoded by the packet layer. */
struct hwt_evt_cursor {
	const uint8_t *begin, *end;
	const uint8_t *pos;	/* next packet; NULL until synchronised */
	const uint8_t *sync;
	uint32_t errata;	/* SKD007, SKZ84 act on single packets */
	uint8_t bip_size;
};

struct hwt_evt_decoder {
	struct hwt_evt_cursor cur;
	struct hwt_pt_packet packet;	/* the packet being processed */
	struct hwt_pt_last_ip ip;
	struct hwt_time_tracker tt;	/* time, calibration, config */
	struct hwt_evq evq;
	struct hwt_event *event;	/* the event produced, if any */
	int status;		/* the packet fetch error, delivered later */
	uint32_t flags;		/* HWT_QRY_* */
	uint32_t errata;
	uint8_t mode_exec_valid, iflag, csd, csl;
	uint64_t psb;		/* the PSB+ being read: its offset */
	uint8_t enabled;	/* tracing is enabled (PacketEn) */
	uint8_t bound;		/* @packet is bound: not standalone */
	/* The exec state across a cut (hwt_qry_exec_seed()): for the next
	 * reset, @exec_seed valid or not. */
	uint8_t have_exec_seed, exec_seed_valid, exec_seed;
	/* Time across a -j cut (hwt_qry_time_seed(), _watch()). */
	uint8_t have_seed, have_watched;
	const uint8_t *watch;		/* the PSB at the cut */
	struct hwt_time_tracker seed;	/* @tt after the next reset */
	struct hwt_time_tracker watched; /* @tt on reaching @watch */
};

void hwt_evt_init(struct hwt_evt_decoder *d,
		  const struct hwt_qry_config *config);

/* The general path's packet fetch (PADs skipped, errors kept for later)
 * and timing-packet update, for the fast path below. */
void hwt_evt_fetch_packet(struct hwt_evt_decoder *d);
/* hwt_qry_get_exec(), hwt_qry_exec_seed() */
int hwt_evt_get_exec(const struct hwt_evt_decoder *d, uint8_t *exec);
void hwt_evt_exec_seed(struct hwt_evt_decoder *d, int valid, uint8_t exec);
int hwt_evt_time_apply(struct hwt_evt_decoder *d);

/* ------------------------------------------------------------------ */
/* The fast path                                                       */
/* ------------------------------------------------------------------ */

/*
 * Most of a trace is TNT and TIP packets with nothing queued to bind to
 * them, and timing packets in between. For those the general path (each
 * packet decoded through the packet layer's checks, a standalone event
 * cleared and stamped with the time, copied out, and a TIP handled twice:
 * once for its event, once to find nothing bound to it) does far more
 * than the query decoder needs. The fast path does exactly what the
 * general path would do on the same state, or leaves the state to it.
 * It is inline so that the query decoder's hot functions hold it whole.
 */

static inline uint64_t hwt_evt_le64_(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

/* Far enough from the end that the packets parsed below are complete. */
#define HWT_EVT_FAST_MARGIN 16

/*
 * The packet at the cursor if it is one of the common ones, decoded as
 * the packet layer does (PADs skipped): 1 with @pkt filled and the cursor
 * past it, or 0 to leave it to the general fetch (the cursor may have
 * moved past PADs only). Outside BBP..BEP only: there TNT-8 may be a BIP.
 */
static inline __attribute__((always_inline)) int
hwt_evt_cur_next_fast_(struct hwt_evt_cursor *c, struct hwt_pt_packet *pkt)
{
	static const int8_t ipc_size[8] = { 0, 2, 4, 6, 6, -1, 8, -1 };
	const uint8_t *pos = c->pos;

	if (c->bip_size)
		return 0;
	for (;;) {
		uint64_t v;
		uint8_t b;
		int n;

		if (c->end - pos < HWT_EVT_FAST_MARGIN)
			return 0;
		b = pos[0];
		if ((b & 0x1f) == 0x0d) {
			/* TIP; reserved IPCs are the packet layer's to report. */
			n = ipc_size[b >> 5];
			if (n < 0)
				return 0;
			v = hwt_evt_le64_(pos + 1);
			pkt->type = HWT_PT_TIP;
			pkt->size = (uint8_t)(1 + n);
			pkt->u.ip.ipc = (uint8_t)(b >> 5);
			pkt->u.ip.ip = n == 8 ? v : v & ((1ull << (8 * n)) - 1);
			c->pos = pos + 1 + n;
			return 1;
		}
		if (!(b & 1)) {
			if (b > 2) {
				unsigned bits = 30u - (unsigned)__builtin_clz(b);

				pkt->type = HWT_PT_TNT8;
				pkt->size = 1;
				pkt->u.tnt.bits = (uint8_t)bits;
				pkt->u.tnt.payload = (b >> 1) & ~(1u << bits);
				c->pos = pos + 1;
				return 1;
			}
			if (!b) {
				c->pos = ++pos;
				continue;
			}
			if (pos[1] != 0xa3)
				return 0;
			/* TNT-64: no stop bit, or only one, is malformed. */
			v = hwt_evt_le64_(pos + 2) & 0xffffffffffffull;
			if (v <= 1)
				return 0;
			n = 63 - __builtin_clzll(v);
			pkt->type = HWT_PT_TNT64;
			pkt->size = 8;
			pkt->u.tnt.bits = (uint8_t)n;
			pkt->u.tnt.payload = v & ~(1ull << n);
			c->pos = pos + 8;
			return 1;
		}
		if (b == 0x59) {
			pkt->type = HWT_PT_MTC;
			pkt->size = 2;
			pkt->u.mtc = pos[1];
			c->pos = pos + 2;
			return 1;
		}
		/* One-byte CYC; SKD007 looks at two-byte ones only. */
		if ((b & 7) == 3) {
			pkt->type = HWT_PT_CYC;
			pkt->size = 1;
			pkt->u.cyc = b >> 3;
			c->pos = pos + 1;
			return 1;
		}
		return 0;
	}
}

static inline __attribute__((always_inline)) void
hwt_evt_fetch_fast_(struct hwt_evt_decoder *d)
{
	if (!hwt_evt_cur_next_fast_(&d->cur, &d->packet))
		hwt_evt_fetch_packet(d);
}

/* The last IP after a TIP, as hwt_pt_last_ip_update(); @ipc is valid. */
static inline __attribute__((always_inline)) void
hwt_evt_update_ip_(struct hwt_pt_last_ip *lip, unsigned ipc, uint64_t payload)
{
	uint64_t keep;

	switch (ipc) {
	case HWT_PT_IPC_SUPPRESSED:
		lip->suppressed = 1;
		return;
	case HWT_PT_IPC_UPDATE16:
		keep = ~0xffffull;
		break;
	case HWT_PT_IPC_UPDATE32:
		keep = ~0xffffffffull;
		break;
	case HWT_PT_IPC_SEXT48:
		keep = 0;
		payload = (uint64_t)((int64_t)(payload << 16) >> 16);
		break;
	case HWT_PT_IPC_UPDATE48:
		keep = ~0xffffffffffffull;
		break;
	default:
		keep = 0;
		break;
	}
	lip->ip = (lip->ip & keep) | payload;
	lip->have_ip = 1;
	lip->suppressed = 0;
}

/*
 * hwt_evt_next() for the common case: with nothing queued and tracing
 * enabled, the next TNT or TIP event after any timing packets. Returns 1
 * with only @ev's type, ip_suppressed and u.tnt / u.tip set; 0 when the
 * next event needs the general path (hwt_evt_next(), which then goes on
 * from the same state); or an error, as hwt_evt_next().
 */
static inline __attribute__((always_inline)) int
hwt_evt_next_fast(struct hwt_evt_decoder *d, struct hwt_event *ev)
{
	struct hwt_pt_packet *pkt = &d->packet;
	int err;

	/* Nothing may bind; TNT and TIP need tracing enabled. */
	if (d->evq.begin != d->evq.end || !d->enabled)
		return 0;
	for (;;) {
		switch (pkt->type) {
		case HWT_PT_TNT8:
		case HWT_PT_TNT64:
			ev->type = HWT_EV_TNT;
			ev->ip_suppressed = 0;
			ev->u.tnt.bits = pkt->u.tnt.payload;
			ev->u.tnt.size = pkt->u.tnt.bits;
			hwt_evt_fetch_fast_(d);
			return 1;
		case HWT_PT_TIP:
			if (d->bound) {
				/* Its event is out and nothing else binds. */
				d->bound = 0;
				hwt_evt_fetch_fast_(d);
				continue;
			}
			hwt_evt_update_ip_(&d->ip, pkt->u.ip.ipc, pkt->u.ip.ip);
			d->bound = 1;
			ev->type = HWT_EV_TIP;
			if (d->ip.have_ip && !d->ip.suppressed) {
				ev->ip_suppressed = 0;
				ev->u.tip.ip = d->ip.ip;
			} else {
				ev->ip_suppressed = 1;
				ev->u.tip.ip = 0;
			}
			return 1;
		case HWT_PT_MTC:
		case HWT_PT_CYC:
		case HWT_PT_TSC:
		case HWT_PT_TMA:
			err = hwt_evt_time_apply(d);
			if (err < 0)
				return err;
			d->bound = 0;
			hwt_evt_fetch_fast_(d);
			continue;
		default:
			return 0;
		}
	}
}

#endif /* HWT_QUERY_EVT_H */

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
	uint8_t enabled;	/* tracing is enabled (PacketEn) */
	uint8_t bound;		/* @packet is bound: not standalone */
};

void hwt_evt_init(struct hwt_evt_decoder *d,
		  const struct hwt_qry_config *config);

#endif /* HWT_QUERY_EVT_H */

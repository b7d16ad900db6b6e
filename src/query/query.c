/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The query decoder: the event decoder plus a TNT cache, answering the
 * three questions the flow layer asks (next conditional branch, next
 * indirect branch target, next event), as libipt's pt_qry_*.
 *
 * One event is always fetched ahead (@event). TNT events go into the
 * cache; a TIP event waits for hwt_qry_indirect_branch(); anything else is
 * announced with HWT_STS_EVENT_PENDING, but only once the TNT cache is
 * empty: the caller must first walk the code the cached bits describe to
 * reach the place the event belongs to. Errors met while fetching ahead
 * are kept in @status and reported when the caller gets to them.
 */
#include <stdlib.h>
#include <string.h>

#include "query/qry.h"

void hwt_qry_config_init(struct hwt_qry_config *config)
{
	if (config)
		memset(config, 0, sizeof(*config));
}

static void qry_reset(struct hwt_qry_decoder *d)
{
	d->status = -HWT_ERR_NOSYNC;
	d->tnt = 0;
	d->tnt_index = 0;
	hwt_time_init(&d->last_time);
}

struct hwt_qry_decoder *hwt_qry_new(const struct hwt_qry_config *config)
{
	struct hwt_qry_decoder *d;

	if (!config || !config->begin || config->end < config->begin)
		return NULL;
	d = malloc(sizeof(*d));
	if (!d)
		return NULL;
	memset(d, 0, sizeof(*d));
	hwt_evt_init(&d->evd, config);
	qry_reset(d);
	memset(&d->event, 0xff, sizeof(d->event));
	return d;
}

void hwt_qry_delete(struct hwt_qry_decoder *d)
{
	free(d);
}

static inline int tnt_empty(const struct hwt_qry_decoder *d)
{
	return d->tnt_index == 0;
}

/* Append @size bits to the TNT cache (the first one highest). */
static int tnt_add(struct hwt_qry_decoder *d, uint64_t bits, uint8_t size)
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

static inline int event_pending(const struct hwt_event *ev)
{
	return ev->type != HWT_EV_TNT && ev->type != HWT_EV_TIP;
}

static inline int status_flags(const struct hwt_qry_decoder *d)
{
	return hwt_qry_status_(d);
}

/* Fetch the next event the general way; an error is kept for later. */
void __attribute__((noinline)) hwt_qry_fetch_slow_(struct hwt_qry_decoder *d)
{
	int err = hwt_evt_next(&d->evd, &d->event);

	if (err < 0) {
		d->status = err;
		memset(&d->event, 0xff, sizeof(d->event));
	}
}

static inline __attribute__((always_inline)) void
fetch_event(struct hwt_qry_decoder *d)
{
	hwt_qry_fetch_(d);
}

/*
 * Synchronised: the start IP comes from the PSB+ status events, which the
 * caller must see too, so look at them on a copy of the event decoder.
 */
static int qry_start(struct hwt_qry_decoder *d, uint64_t *ip)
{
	struct hwt_evt_decoder evd;
	struct hwt_event ev;
	int status = HWT_STS_IP_SUPPRESSED;

	hwt_evt_copy(&evd, &d->evd);
	for (;;) {
		int err;

		/* Only the PSB+ we start at (not one right after it). */
		if (evd.cur.pos != d->evd.cur.pos)
			break;
		err = hwt_evt_next(&evd, &ev);
		if (err < 0) {
			if (err != -HWT_ERR_EOS)
				return err;
			break;
		}
		if (!ev.status_update)
			break;
		if (ev.type == HWT_EV_ENABLED) {
			status &= ~HWT_STS_IP_SUPPRESSED;
			if (ip)
				*ip = ev.u.enabled.ip;
			break;
		}
	}

	d->status = 0;
	fetch_event(d);
	return status | status_flags(d);
}

int hwt_qry_sync_forward(struct hwt_qry_decoder *d, uint64_t *ip)
{
	int err;

	if (!d)
		return -HWT_ERR_INVALID;
	qry_reset(d);
	err = hwt_evt_sync_forward(&d->evd);
	if (err < 0)
		return err;
	return qry_start(d, ip);
}

int hwt_qry_sync_backward(struct hwt_qry_decoder *d, uint64_t *ip)
{
	const uint8_t *start, *sync, *pos;
	int err;

	if (!d)
		return -HWT_ERR_INVALID;
	start = d->evd.cur.pos ? d->evd.cur.pos : d->evd.cur.end;
	sync = start;
	for (;;) {
		qry_reset(d);
		do {
			err = hwt_evt_sync_backward(&d->evd);
			if (err < 0)
				return err;
			pos = d->evd.cur.pos;
		} while (sync <= pos);
		sync = pos;

		err = qry_start(d, ip);
		if (err < 0) {
			/* A PSB+ cut by the end of the trace: go further. */
			if (err != -HWT_ERR_EOS)
				return err;
			continue;
		}
		/* Inside or right after PSB+ we may find it again. */
		if (d->evd.cur.pos < start)
			return err;
	}
}

int hwt_qry_sync_set(struct hwt_qry_decoder *d, uint64_t *ip,
		     uint64_t offset)
{
	int err;

	if (!d)
		return -HWT_ERR_INVALID;
	qry_reset(d);
	err = hwt_evt_sync_set(&d->evd, offset);
	if (err < 0)
		return err;
	return qry_start(d, ip);
}

int hwt_qry_get_offset(const struct hwt_qry_decoder *d, uint64_t *offset)
{
	if (!d)
		return -HWT_ERR_INVALID;
	return hwt_evt_get_offset(&d->evd, offset);
}

int hwt_qry_get_sync_offset(const struct hwt_qry_decoder *d,
			    uint64_t *offset)
{
	if (!d)
		return -HWT_ERR_INVALID;
	return hwt_evt_get_sync_offset(&d->evd, offset);
}

/* Move a TNT event into the cache and fetch the next event. */
static int cache_tnt(struct hwt_qry_decoder *d)
{
	int err;

	if (d->status < 0)
		return d->status;
	if (d->event.type != HWT_EV_TNT)
		return 0;
	err = tnt_add(d, d->event.u.tnt.bits, d->event.u.tnt.size);
	if (err < 0)
		return err;
	fetch_event(d);
	return 0;
}

void hwt_qry_direct_end_(struct hwt_qry_decoder *d,
			 const struct hwt_qry_direct *x)
{
	struct hwt_evt_decoder *e = &d->evd;

	if (!x->moved)
		return;
	/* Time stood still in direct mode (it stops at timing packets). */
	d->last_time = e->tt.time;
	if (x->tip) {
		e->ip.ip = x->lip;
		e->ip.have_ip = 1;
		e->ip.suppressed = 0;
	}
	e->cur.pos = x->pos;
	e->bound = 0;
	hwt_evt_fetch_packet(e);
	fetch_event(d);
}

/* The TNT cache is empty: refill it from the next event. */
int __attribute__((noinline))
hwt_qry_cond_slow_(struct hwt_qry_decoder *d, int *taken)
{
	int err;

	/* The time of the TNT packet. */
	d->last_time = d->evd.tt.time;
	err = cache_tnt(d);
	if (err < 0)
		return err;
	if (tnt_empty(d)) {
		/* Errors met ahead come out once the bits are used up. */
		if (d->status < 0)
			return d->status;
		return -HWT_ERR_BAD_QUERY;
	}
	*taken = (d->tnt & d->tnt_index) != 0;
	d->tnt_index >>= 1;
	return status_flags(d);
}

int hwt_qry_cond_branch(struct hwt_qry_decoder *d, int *taken)
{
	if (__builtin_expect(!d || !taken, 0))
		return -HWT_ERR_INVALID;
	return hwt_qry_cond_(d, taken);
}

/* The next event is not a TIP (or there was an error). */
int __attribute__((noinline))
hwt_qry_indirect_slow_(struct hwt_qry_decoder *d, uint64_t *ip)
{
	int err;

	if (d->status < 0)
		return d->status;
	/* A TIP may be deferred behind a TNT: cache the TNT. */
	err = cache_tnt(d);
	if (err < 0)
		return err;
	if (d->event.type != HWT_EV_TIP) {
		if (d->status < 0)
			return d->status;
		return -HWT_ERR_BAD_QUERY;
	}
	return hwt_qry_indirect_(d, ip);
}

int hwt_qry_indirect_branch(struct hwt_qry_decoder *d, uint64_t *ip)
{
	if (!d || !ip)
		return -HWT_ERR_INVALID;
	return hwt_qry_indirect_(d, ip);
}

int hwt_qry_event(struct hwt_qry_decoder *d, struct hwt_event *event)
{
	if (!d || !event)
		return -HWT_ERR_INVALID;
	/* Events come after the code the cached TNT bits describe. */
	if (!tnt_empty(d))
		return -HWT_ERR_BAD_QUERY;
	if (d->status < 0)
		return d->status;
	if (!event_pending(&d->event))
		return -HWT_ERR_BAD_QUERY;
	*event = d->event;
	d->last_time = d->evd.tt.time;
	fetch_event(d);
	return status_flags(d);
}

int hwt_qry_time(const struct hwt_qry_decoder *d, uint64_t *tsc,
		 uint32_t *lost_mtc, uint32_t *lost_cyc)
{
	if (!d || !tsc)
		return -HWT_ERR_INVALID;
	return hwt_time_query_tsc(&d->last_time, tsc, lost_mtc, lost_cyc);
}

int hwt_qry_core_bus_ratio(const struct hwt_qry_decoder *d, uint32_t *cbr)
{
	if (!d || !cbr)
		return -HWT_ERR_INVALID;
	return hwt_time_query_cbr(&d->last_time, cbr);
}

void hwt_qry_time_seed(struct hwt_qry_decoder *d,
		       const struct hwt_time_tracker *tt)
{
	hwt_evt_time_seed(&d->evd, tt);
}

int hwt_qry_get_exec(const struct hwt_qry_decoder *d, uint8_t *exec)
{
	if (!d || !exec)
		return -HWT_ERR_INVALID;
	return hwt_evt_get_exec(&d->evd, exec);
}

void hwt_qry_exec_seed(struct hwt_qry_decoder *d, int valid, uint8_t exec)
{
	if (d)
		hwt_evt_exec_seed(&d->evd, valid, exec);
}

void hwt_qry_time_watch(struct hwt_qry_decoder *d, uint64_t offset)
{
	hwt_evt_time_watch(&d->evd, offset);
}

int hwt_qry_time_watched(const struct hwt_qry_decoder *d,
			 struct hwt_time_tracker *tt)
{
	return hwt_evt_time_watched(&d->evd, tt);
}

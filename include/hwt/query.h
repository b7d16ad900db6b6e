/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hwt query layer: Intel PT packets -> what the flow layer asks for.
 *
 * The flow layer walks the code; whenever it reaches a conditional branch
 * it asks for the next TNT bit, at an indirect branch (or uncompressed
 * return) for the next TIP target, and between instructions it drains
 * events (enable/disable, overflow, interrupts, mode changes, ...). This
 * layer turns the packet stream into exactly those answers, applying the
 * packet-ordering rules of the SDM (PSB+, FUP binding, deferred TIPs,
 * OVF, event trace) and the errata of the CPU.
 *
 * Semantics follow libipt's query decoder (pt_qry_*), which is the
 * reference hwt is tested against; the names map one to one.
 *
 * Prefix: hwt_qry_ (the decoder), hwt_event (events, shared with flow).
 */
#ifndef HWT_QUERY_H
#define HWT_QUERY_H

#include <stddef.h>
#include <stdint.h>

#include <hwt/pt.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Execution modes (from MODE.Exec). */
enum hwt_exec_mode {
	HWT_MODE_UNKNOWN = 0,
	HWT_MODE_16,
	HWT_MODE_32,
	HWT_MODE_64
};

enum hwt_event_type {
	HWT_EV_ENABLED,		/* tracing enabled (TIP.PGE) */
	HWT_EV_DISABLED,	/* tracing disabled (TIP.PGD) */
	HWT_EV_ASYNC_DISABLED,	/* disabled asynchronously (FUP+TIP.PGD) */
	HWT_EV_ASYNC_BRANCH,	/* interrupt, exception, ... (FUP+TIP) */
	HWT_EV_PAGING,		/* PIP bound to a MOV CR3 */
	HWT_EV_ASYNC_PAGING,	/* PIP at an async branch */
	HWT_EV_OVERFLOW,	/* OVF: trace data was lost */
	HWT_EV_EXEC_MODE,
	HWT_EV_TSX,
	HWT_EV_STOP,		/* TraceStop */
	HWT_EV_VMCS,
	HWT_EV_ASYNC_VMCS,
	HWT_EV_EXSTOP,
	HWT_EV_MWAIT,
	HWT_EV_PWRE,
	HWT_EV_PWRX,
	HWT_EV_PTWRITE,
	HWT_EV_TICK,		/* a timing packet, when asked for */
	HWT_EV_CBR,
	HWT_EV_MNT,
	HWT_EV_TIP,		/* (event trace) */
	HWT_EV_TNT,
	HWT_EV_IFLAGS,
	HWT_EV_INTERRUPT,
	HWT_EV_IRET,
	HWT_EV_SMI,
	HWT_EV_RSM,
	HWT_EV_SIPI,
	HWT_EV_INIT,
	HWT_EV_VMENTRY,
	HWT_EV_VMEXIT,
	HWT_EV_SHUTDOWN,
	HWT_EV_UINTR,
	HWT_EV_UIRET,
	HWT_EV_NTYPES
};

struct hwt_event {
	uint8_t type;		/* enum hwt_event_type */
	uint8_t ip_suppressed;	/* the event's IP is not known */
	uint8_t status_update;	/* part of PSB+: state, not a change */
	uint8_t has_tsc;
	uint32_t lost_mtc, lost_cyc;
	uint64_t tsc;		/* valid if has_tsc */
	/* A status update's PSB, as a trace offset: a decoder may have read
	 * on past it (up to the next PSB+) by the time it is reported. */
	uint64_t psb;
	union {
		struct { uint64_t ip; uint8_t resumed; } enabled;
		struct { uint64_t ip; } disabled;
		struct { uint64_t at, ip; } async_disabled;
		struct { uint64_t from, to; } async_branch;
		struct { uint64_t cr3; uint8_t non_root; } paging;
		struct { uint64_t cr3; uint8_t non_root; uint64_t ip; }
			async_paging;
		struct { uint64_t ip; } overflow;
		struct { uint8_t mode; uint64_t ip; } exec_mode;
		struct { uint64_t ip; uint8_t speculative, aborted; } tsx;
		struct { uint64_t base; } vmcs;
		struct { uint64_t base, ip; } async_vmcs;
		struct { uint64_t ip; } exstop;
		struct { uint64_t ip; uint32_t hints, ext; } mwait;
		struct { uint8_t state, sub_state, hw; } pwre;
		struct { uint8_t last, deepest, interrupt, store, autonomous; }
			pwrx;
		struct { uint64_t ip; uint8_t size; uint64_t payload; } ptwrite;
		struct { uint64_t ip; } tick;
		struct { uint16_t ratio; } cbr;
		struct { uint64_t payload; } mnt;
		struct { uint64_t ip; } tip;
		struct { uint64_t bits; uint8_t size; } tnt;
		struct { uint8_t iflag; uint64_t ip; } iflags;
		struct { uint8_t has_cr2, vector; uint64_t cr2, ip; } interrupt;
		struct { uint64_t ip; } iret;
		struct { uint64_t ip; } smi;
		struct { uint64_t ip; } rsm;
		struct { uint8_t vector; } sipi;
		struct { uint64_t ip; } init;
		struct { uint64_t ip; } vmentry;
		struct {
			uint8_t has_vector, has_vmxr, has_vmxq, vector;
			uint64_t vmxr, vmxq;
			uint64_t ip;
		} vmexit;
		struct { uint64_t ip; } shutdown;
		struct { uint8_t vector; uint64_t ip; } uintr;
		struct { uint64_t ip; } uiret;
	} u;
};

/*
 * Where execution goes on after @ev, if it says: 1 and *@ip (a TIP.PGE's
 * IP, or a MODE's; as a PSB+'s status update, that PSB+'s FUP IP: where
 * a decode starting there starts), or 0.
 */
int hwt_event_resume_ip(const struct hwt_event *ev, uint64_t *ip);

/* Status bits returned (>= 0) by the query functions, as libipt's pts_*. */
#define HWT_STS_EVENT_PENDING 0x1	/* call hwt_qry_event() */
#define HWT_STS_IP_SUPPRESSED 0x2	/* the returned IP is not valid */
#define HWT_STS_EOS           0x4	/* no more trace */

/* Decoder configuration: the trace and what the trace does not say. */
struct hwt_qry_config {
	const uint8_t *begin, *end;	/* the trace (borrowed) */
	struct hwt_pt_cpu cpu;
	uint32_t errata;		/* HWT_PT_ERRATUM_*; see cpu.c */
	struct hwt_time_config time;
	uint32_t flags;			/* HWT_QRY_* */
	/* IP filter ranges (IA32_RTIT_ADDRn), for the SKL014 erratum. */
	struct {
		uint8_t cfg;		/* 0 off, 1 filter, 2 stop */
		uint64_t a, b;
	} addr_filter[4];
};

#define HWT_QRY_TICK      0x1u	/* report HWT_EV_TICK on timing packets */
#define HWT_QRY_NO_CYC    0x2u	/* ignore CYC for time */
#define HWT_QRY_NO_TCAL   0x4u
#define HWT_QRY_KEEP_TCAL_ON_OVF 0x8u
#define HWT_QRY_EVENT_TRACE 0x10u /* CFE/EVD event trace enabled */
/*
 * (CFE/EVD packets are always decoded; HWT_QRY_EVENT_TRACE adds the
 * HWT_EV_IFLAGS events from MODE.Exec's IF bit, as libipt's
 * enable_iflags_events, and checks IF in PSB+ against the known state.)
 *
 * HWT_QRY_TICK is for the flow layer: the query layer itself never
 * reports HWT_EV_TICK (as libipt, ticks are synthesized by the block
 * decoder from the time of TIP/TNT events; see hwt_evt_next()).
 */

void hwt_qry_config_init(struct hwt_qry_config *config);

struct hwt_qry_decoder;

struct hwt_qry_decoder *hwt_qry_new(const struct hwt_qry_config *config);
void hwt_qry_delete(struct hwt_qry_decoder *decoder);

/*
 * Synchronise at the next/previous PSB or at @offset (which must be a
 * PSB). On success returns status bits and sets *@ip to the IP the trace
 * starts at (HWT_STS_IP_SUPPRESSED if tracing is disabled there).
 */
int hwt_qry_sync_forward(struct hwt_qry_decoder *d, uint64_t *ip);
int hwt_qry_sync_backward(struct hwt_qry_decoder *d, uint64_t *ip);
int hwt_qry_sync_set(struct hwt_qry_decoder *d, uint64_t *ip,
		     uint64_t offset);

int hwt_qry_get_offset(const struct hwt_qry_decoder *d, uint64_t *offset);
int hwt_qry_get_sync_offset(const struct hwt_qry_decoder *d,
			    uint64_t *offset);

/* The outcome of the next conditional branch: *@taken = 0/1. */
int hwt_qry_cond_branch(struct hwt_qry_decoder *d, int *taken);

/* The target of the next indirect branch (or uncompressed return). */
int hwt_qry_indirect_branch(struct hwt_qry_decoder *d, uint64_t *ip);

/* The next pending event; only valid after HWT_STS_EVENT_PENDING. */
int hwt_qry_event(struct hwt_qry_decoder *d, struct hwt_event *event);

/* Current time estimate; -HWT_ERR_NO_TIME before any timing packet. */
int hwt_qry_time(const struct hwt_qry_decoder *d, uint64_t *tsc,
		 uint32_t *lost_mtc, uint32_t *lost_cyc);
int hwt_qry_core_bus_ratio(const struct hwt_qry_decoder *d, uint32_t *cbr);

/*
 * The last MODE.Exec (HWT_PT_EXEC_* bits): one decoder carries it over
 * every PSB, and checks a PSB+'s against it; a decoder that syncs knows
 * none. hwt_qry_get_exec() gives it (1), or 0 if there is none;
 * hwt_qry_exec_seed() makes the next sync start knowing @exec (@valid 1)
 * or none, once. For a trace decoded in pieces (hwt_blk_state).
 */
int hwt_qry_get_exec(const struct hwt_qry_decoder *d, uint8_t *exec);
void hwt_qry_exec_seed(struct hwt_qry_decoder *d, int valid, uint8_t exec);

/* Time across a cut: hwt_evt_time_seed() and the like, below. */
void hwt_qry_time_seed(struct hwt_qry_decoder *d,
		       const struct hwt_time_tracker *tt);
void hwt_qry_time_watch(struct hwt_qry_decoder *d, uint64_t offset);
int hwt_qry_time_watched(const struct hwt_qry_decoder *d,
			 struct hwt_time_tracker *tt);

/*
 * The event decoder underneath (libipt's pt_evt_*, which libipt 2.1's block
 * and instruction decoders use directly): the trace as one sequence of
 * events, conditional branches (HWT_EV_TNT: u.tnt.size bits, bit size-1
 * first) and indirect branches (HWT_EV_TIP) included, each with the time
 * at its packet. The query decoder above is this plus a TNT cache.
 *
 * Errors from hwt_evt_next() are sticky until the next sync (the decoder
 * stays at the offending packet). hwt_evt_copy() snapshots the whole state
 * (a plain copy, no allocation) for look-ahead, e.g. to find a TIP behind
 * a TNT that is still in use; both decoders must come from hwt_evt_new()
 * with the same trace.
 */
struct hwt_evt_decoder;

struct hwt_evt_decoder *hwt_evt_new(const struct hwt_qry_config *config);
void hwt_evt_delete(struct hwt_evt_decoder *d);
void hwt_evt_copy(struct hwt_evt_decoder *dst,
		  const struct hwt_evt_decoder *src);

/* Returns 0 or an error; the PSB+ events are the first ones to come. */
int hwt_evt_sync_forward(struct hwt_evt_decoder *d);
int hwt_evt_sync_backward(struct hwt_evt_decoder *d);
int hwt_evt_sync_set(struct hwt_evt_decoder *d, uint64_t offset);

/* Offset of the packet being processed / of the last sync point. */
int hwt_evt_get_offset(const struct hwt_evt_decoder *d, uint64_t *offset);
int hwt_evt_get_sync_offset(const struct hwt_evt_decoder *d,
			    uint64_t *offset);
/* Offset of the next packet to read (libipt's pt_evt_pos). */
int hwt_evt_pos(const struct hwt_evt_decoder *d, uint64_t *offset);

/* The next event: 0, -HWT_ERR_EOS at the end, or an error. */
int hwt_evt_next(struct hwt_evt_decoder *d, struct hwt_event *event);

/* The time after the packets decoded so far. */
int hwt_evt_time(const struct hwt_evt_decoder *d, uint64_t *tsc,
		 uint32_t *lost_mtc, uint32_t *lost_cyc);

/*
 * Time across a cut, for decoders that each take a part of one trace (-j)
 * and must print the times one decoder would. One decoder carries its
 * time and calibration (CYC's cycles per TSC tick) over every PSB; a
 * decoder that starts at a PSB knows neither. So:
 * - hwt_evt_time_warm() estimates the state a decoder has on reaching
 *   the PSB at @offset, by decoding the packets from two PSBs before it
 *   (up to @max bytes back). Returns 1, or 0 if it did not get there
 *   (then *@tt is the state of a decoder that starts there), or an
 *   error.
 * - hwt_evt_time_seed(): the next sync (or resync) starts from @tt's
 *   time and calibration instead of none; once.
 * - hwt_evt_time_watch(): keep the state on first reaching the PSB at
 *   @offset; hwt_evt_time_watched() gives it (1), or 0 if not reached.
 * - hwt_evt_time_same_from(): 1 if decoders starting at the PSB at
 *   @offset with @a and with @b give the same times from there on (its
 *   PSB+ may set all that differs: a decoder that resynchronised at it
 *   had no time before it), else 0.
 * The decoder of the part before a cut watches it, the decoder of the
 * part after is seeded with the estimate; if the two states are not the
 * same (hwt_time_tracker_same(), then hwt_evt_time_same_from()), the
 * part after must be decoded again, seeded with the watched state.
 */
int hwt_evt_time_warm(const struct hwt_qry_config *config, uint64_t offset,
		      uint64_t max, struct hwt_time_tracker *tt);
void hwt_evt_time_seed(struct hwt_evt_decoder *d,
		       const struct hwt_time_tracker *tt);
void hwt_evt_time_watch(struct hwt_evt_decoder *d, uint64_t offset);
int hwt_evt_time_watched(const struct hwt_evt_decoder *d,
			 struct hwt_time_tracker *tt);
int hwt_evt_time_same_from(const struct hwt_qry_config *config,
			   uint64_t offset, const struct hwt_time_tracker *a,
			   const struct hwt_time_tracker *b);

#ifdef __cplusplus
}
#endif

#endif /* HWT_QUERY_H */

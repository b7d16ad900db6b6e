/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hwt packet layer: Intel Processor Trace packets (Intel SDM Vol. 3C,
 * chapter "Intel Processor Trace", section "Trace Packets and Data Types").
 *
 * Prefixes:
 *   hwt_pt_      packets as values: decode/encode one packet, names, last-IP
 *   hwt_pkt_     the packet decoder object (alloc / sync / next / free)
 *   hwt_time_    time tracking from TSC/TMA/MTC/CYC/CBR
 *
 * Everything here is pure computation on caller-owned buffers: no I/O, no
 * globals, no allocation on the per-packet path.
 */
#ifndef HWT_PT_H
#define HWT_PT_H

#include <stddef.h>
#include <stdint.h>

#include <hwt/error.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Packets                                                             */
/* ------------------------------------------------------------------ */

enum hwt_pt_type {
	HWT_PT_INVALID = 0,
	HWT_PT_PAD,
	HWT_PT_PSB,
	HWT_PT_PSBEND,
	HWT_PT_TNT8,
	HWT_PT_TNT64,
	HWT_PT_TIP,
	HWT_PT_TIP_PGE,
	HWT_PT_TIP_PGD,
	HWT_PT_FUP,
	HWT_PT_PIP,
	HWT_PT_MODE_EXEC,
	HWT_PT_MODE_TSX,
	HWT_PT_TSC,
	HWT_PT_MTC,
	HWT_PT_TMA,
	HWT_PT_CYC,
	HWT_PT_CBR,
	HWT_PT_VMCS,
	HWT_PT_OVF,
	HWT_PT_MNT,
	HWT_PT_STOP,		/* TRACESTOP */
	HWT_PT_PTW,
	HWT_PT_EXSTOP,
	HWT_PT_MWAIT,
	HWT_PT_PWRE,
	HWT_PT_PWRX,
	HWT_PT_BBP,
	HWT_PT_BIP,
	HWT_PT_BEP,
	HWT_PT_CFE,
	HWT_PT_EVD,
	HWT_PT_NTYPES
};

/* IP compression (the IPBytes field of TIP, TIP.PGE, TIP.PGD and FUP). */
enum hwt_pt_ipc {
	HWT_PT_IPC_SUPPRESSED = 0,	/* no payload */
	HWT_PT_IPC_UPDATE16 = 1,	/* ip[15:0], rest from last IP */
	HWT_PT_IPC_UPDATE32 = 2,	/* ip[31:0], rest from last IP */
	HWT_PT_IPC_SEXT48 = 3,		/* ip[47:0], sign-extended */
	HWT_PT_IPC_UPDATE48 = 4,	/* ip[47:0], ip[63:48] from last IP */
	HWT_PT_IPC_FULL = 6		/* ip[63:0] */
};

/* Size in bytes of the payload for @ipc, or -HWT_ERR_BAD_PACKET (5, 7). */
int hwt_pt_ipc_size(unsigned ipc);

/* MODE.Exec bits. */
#define HWT_PT_EXEC_CSL 0x1u	/* CS.L: 64-bit code */
#define HWT_PT_EXEC_CSD 0x2u	/* CS.D: 32-bit default operand size */
#define HWT_PT_EXEC_IF  0x4u	/* RFLAGS.IF (event trace) */

/* MODE.TSX bits. */
#define HWT_PT_TSX_INTX  0x1u
#define HWT_PT_TSX_ABORT 0x2u

/* PWRX wake reasons. */
#define HWT_PT_PWRX_INT   0x1u	/* interrupt */
#define HWT_PT_PWRX_STORE 0x4u	/* store to monitored address */
#define HWT_PT_PWRX_HW    0x8u	/* autonomous (hardware) */

/*
 * One decoded packet. Fields hold the payload exactly as encoded (an IP
 * packet keeps its compressed IP; use hwt_pt_last_ip to expand it), so
 * decode -> encode reproduces the original bytes.
 */
struct hwt_pt_packet {
	uint8_t type;	/* enum hwt_pt_type */
	uint8_t size;	/* bytes in the trace, opcode included */
	union {
		/* TIP, TIP.PGE, TIP.PGD, FUP */
		struct {
			uint8_t ipc;	/* enum hwt_pt_ipc */
			uint64_t ip;	/* the payload bits only */
		} ip;
		/* TNT-8, TNT-64: @bits branches, bit (@bits - 1) is the
		 * oldest; 1 = taken. The stop bit is not included. */
		struct {
			uint8_t bits;
			uint64_t payload;
		} tnt;
		struct {
			uint64_t cr3;	/* CR3[51:5], low bits zero */
			uint8_t nr;	/* non-root (VMX) */
		} pip;
		uint8_t exec;	/* MODE.Exec: HWT_PT_EXEC_* */
		uint8_t tsx;	/* MODE.TSX: HWT_PT_TSX_* */
		uint64_t tsc;	/* 56 bits */
		uint8_t mtc;	/* CTC[N+7:N] */
		struct {
			uint16_t ctc;	/* CTC[15:0] */
			uint16_t fc;	/* fast counter, 9 bits */
		} tma;
		uint64_t cyc;	/* cycle count */
		uint8_t cbr;	/* core:bus ratio */
		uint64_t vmcs;	/* VMCS pointer, bits [51:12], low bits zero */
		uint64_t mnt;
		struct {
			uint8_t plc;	/* payload size code: 0 = 4 bytes, 1 = 8 */
			uint8_t ip;	/* a FUP follows */
			uint64_t payload;
		} ptw;
		uint8_t exstop_ip;	/* a FUP follows */
		struct {
			uint32_t hints;
			uint32_t ext;
		} mwait;
		struct {
			uint8_t state;
			uint8_t sub_state;
			uint8_t hw;	/* hardware-initiated */
		} pwre;
		struct {
			uint8_t last;		/* last core C-state */
			uint8_t deepest;	/* deepest core C-state */
			uint8_t wake;		/* HWT_PT_PWRX_* */
		} pwrx;
		struct {
			uint8_t type;	/* block type */
			uint8_t sz;	/* 1: BIPs carry 4 bytes, 0: 8 bytes */
		} bbp;
		struct {
			uint8_t id;	/* item id, bits [7:3] of the header */
			uint64_t value;
		} bip;
		uint8_t bep_ip;		/* a FUP follows */
		struct {
			uint8_t type;
			uint8_t vector;
			uint8_t ip;	/* a FUP follows */
		} cfe;
		struct {
			uint8_t type;
			uint64_t payload;
		} evd;
	} u;
};

/* Size in bytes of a PSB packet; the packet layer's sync unit. */
#define HWT_PT_PSB_SIZE 16

/* The longest packet (a 15-byte CYC); useful for buffer sizing. */
#define HWT_PT_MAX_PACKET_SIZE 16

/*
 * Decode the one packet at @pos (stateless). @bip_size is 0 outside a
 * BBP..BEP block, else the size of BIP payloads there (4 or 8): the BIP
 * header byte pattern is a valid TNT-8 outside blocks.
 *
 * Returns the packet size (> 0), -HWT_ERR_EOS if the packet does not fit
 * before @end, -HWT_ERR_BAD_OPC or -HWT_ERR_BAD_PACKET.
 */
int hwt_pt_decode(const uint8_t *pos, const uint8_t *end, unsigned bip_size,
		  struct hwt_pt_packet *packet);

/*
 * The next packet at or after @pos that decodes (outside a BBP..BEP
 * block), for scans that want what a trace says rather than where it
 * breaks: the bytes before it are skipped one at a time, counted in
 * *@skipped (if not NULL), where a decoder would resynchronise at the
 * next PSB. Returns its position (its size is @packet->size), or NULL if
 * none decodes before @end. A scan: for (p = buf; (p =
 * hwt_pt_scan_next(p, end, &pkt, NULL)); p += pkt.size).
 */
const uint8_t *hwt_pt_scan_next(const uint8_t *pos, const uint8_t *end,
				struct hwt_pt_packet *packet,
				uint64_t *skipped);

/*
 * Encode @packet at @pos. @packet->size is ignored (derived from the
 * fields). Returns the number of bytes written, -HWT_ERR_EOS if it does not
 * fit, -HWT_ERR_BAD_PACKET/-HWT_ERR_INVALID if it cannot be encoded.
 */
int hwt_pt_encode(uint8_t *pos, const uint8_t *end,
		  const struct hwt_pt_packet *packet);

/* The lower-case SDM-style name ("tip.pge", "tnt.8", ...). Never NULL. */
const char *hwt_pt_type_name(unsigned type);

/* Does this packet type carry an IP (TIP, TIP.PGE, TIP.PGD, FUP)? */
static inline int hwt_pt_is_ip_packet(unsigned type)
{
	return type == HWT_PT_TIP || type == HWT_PT_TIP_PGE ||
	       type == HWT_PT_TIP_PGD || type == HWT_PT_FUP;
}

/* ------------------------------------------------------------------ */
/* Last-IP: expand compressed IPs                                      */
/* ------------------------------------------------------------------ */

struct hwt_pt_last_ip {
	uint64_t ip;
	uint8_t have_ip;	/* an IP has been seen since the last reset */
	uint8_t suppressed;	/* the last IP packet was suppressed */
};

static inline void hwt_pt_last_ip_init(struct hwt_pt_last_ip *lip)
{
	lip->ip = 0;
	lip->have_ip = 0;
	lip->suppressed = 0;
}

/*
 * Apply an IP payload to @lip. Returns 0 or -HWT_ERR_BAD_PACKET for a
 * reserved @ipc; leaves @lip unchanged on error.
 */
int hwt_pt_last_ip_update(struct hwt_pt_last_ip *lip, unsigned ipc,
			  uint64_t payload);

/* The current IP, -HWT_ERR_NOIP or -HWT_ERR_IP_SUPPRESSED. */
int hwt_pt_last_ip_query(const struct hwt_pt_last_ip *lip, uint64_t *ip);

/*
 * The cheapest compression that encodes @ip given @lip (as an encoder
 * tracking the same last-IP would choose), and the payload to store.
 */
unsigned hwt_pt_ipc_choose(const struct hwt_pt_last_ip *lip, uint64_t ip,
			   uint64_t *payload);

/* ------------------------------------------------------------------ */
/* The packet decoder object                                           */
/* ------------------------------------------------------------------ */

struct hwt_pkt_decoder;

/*
 * A decoder over [@buf, @buf + @size). The buffer is borrowed: it must
 * outlive the decoder. Returns NULL on allocation failure.
 * The decoder starts unsynchronised; call hwt_pkt_sync_forward() or
 * hwt_pkt_sync_set().
 */
struct hwt_pkt_decoder *hwt_pkt_decoder_new(const uint8_t *buf, size_t size);
void hwt_pkt_decoder_delete(struct hwt_pkt_decoder *decoder);

/*
 * Move to the next PSB after the current position (or the first one).
 * Returns 0, or -HWT_ERR_EOS when there is no further PSB.
 */
int hwt_pkt_sync_forward(struct hwt_pkt_decoder *decoder);

/* Move to the last PSB before the current position (or the end). */
int hwt_pkt_sync_backward(struct hwt_pkt_decoder *decoder);

/* Start decoding at @offset, which need not be a PSB (ptdump --no-sync). */
int hwt_pkt_sync_set(struct hwt_pkt_decoder *decoder, uint64_t offset);

/* Offset of the next packet to decode; -HWT_ERR_NOSYNC before a sync. */
int hwt_pkt_get_offset(const struct hwt_pkt_decoder *decoder,
		       uint64_t *offset);

/* Offset of the last synchronisation point. */
int hwt_pkt_get_sync_offset(const struct hwt_pkt_decoder *decoder,
			    uint64_t *offset);

/*
 * Decode the next packet and advance past it. Returns its size (> 0),
 * 0 at the end of the buffer, or a negative error; on error the position
 * stays at the offending packet (so hwt_pkt_get_offset() names it) and the
 * caller resynchronises with hwt_pkt_sync_forward().
 */
int hwt_pkt_next(struct hwt_pkt_decoder *decoder,
		 struct hwt_pt_packet *packet);

/*
 * Decode up to @max packets into @packets; *@count is how many. Returns 0
 * (then *@count < @max means the end of the buffer), or the error that
 * stopped the batch after *@count good packets, with the position at the
 * offending packet as for hwt_pkt_next(). For hot loops: the per-packet
 * work stays in one tight loop.
 */
int hwt_pkt_next_batch(struct hwt_pkt_decoder *decoder,
		       struct hwt_pt_packet *packets, unsigned max,
		       unsigned *count);

/* ------------------------------------------------------------------ */
/* CPU identification (for errata)                                     */
/* ------------------------------------------------------------------ */

enum hwt_pt_vendor {
	HWT_PT_VENDOR_UNKNOWN = 0,
	HWT_PT_VENDOR_INTEL
};

struct hwt_pt_cpu {
	uint8_t vendor;	/* enum hwt_pt_vendor */
	uint16_t family;
	uint8_t model;
	uint8_t stepping;
};

/*
 * Parse "f/m[/s]" (decimal, as ptdump's --cpu) or "none"/"auto"-free
 * spellings. Returns 0 or -HWT_ERR_INVALID.
 */
int hwt_pt_cpu_parse(struct hwt_pt_cpu *cpu, const char *str);

/* ------------------------------------------------------------------ */
/* Time tracking (TSC, TMA, MTC, CYC, CBR)                             */
/* ------------------------------------------------------------------ */

/*
 * Errata hwt works around, by Intel's specification-update names. The
 * packet layer needs SKD007 and SKZ84 (ptdump), time tracking SKL168; the
 * others are for the flow decoder.
 */
#define HWT_PT_ERRATUM_BDM70  0x001u	/* PSB+ may hold FUP, MODE.Exec */
#define HWT_PT_ERRATUM_BDM64  0x002u	/* bad packet after a TSX abort */
#define HWT_PT_ERRATUM_SKD007 0x004u	/* OVF may cut a multi-byte CYC */
#define HWT_PT_ERRATUM_SKD022 0x008u	/* VM entry clearing TraceEn: FUP */
#define HWT_PT_ERRATUM_SKD010 0x010u	/* FUP may be dropped after OVF */
#define HWT_PT_ERRATUM_SKL014 0x020u	/* TIP.PGD may lack the target IP */
#define HWT_PT_ERRATUM_APL12  0x040u	/* OVF may be followed by a FUP */
#define HWT_PT_ERRATUM_APL11  0x080u	/* OVF may be followed by TIP.PGD */
#define HWT_PT_ERRATUM_SKL168 0x100u	/* CYC (+MTC) dropped before PSB */
#define HWT_PT_ERRATUM_SKZ84  0x200u	/* TSC scaling corrupts TMA (+1 byte) */

/*
 * The errata of @cpu as HWT_PT_ERRATUM_* bits in @errata. Returns 0, or
 * -HWT_ERR_NOT_SUPPORTED for a cpu hwt has no errata list for (then
 * @errata is 0).
 */
int hwt_pt_cpu_errata(const struct hwt_pt_cpu *cpu, uint32_t *errata);

/*
 * Identify the cpu this runs on (ptdump's --cpu auto). Returns 0, or
 * -HWT_ERR_NOT_SUPPORTED if it is not an Intel x86 cpu.
 */
int hwt_pt_cpu_host(struct hwt_pt_cpu *cpu);

/*
 * Time model. TSC packets carry the full TSC; TMA ties it to the crystal
 * clock (CTC) and the fast counter FC (in TSC ticks); MTC packets carry
 * CTC bits [mtc_freq + 7 : mtc_freq]; CYC packets count core cycles since
 * the previous CYC-eligible packet. Core cycles become TSC ticks through
 * the fast-counter:cycles ratio (FCR), which calibration estimates from
 * MTC or TSC periods, or from the nominal frequency and CBR.
 *
 * FCR values are fixed point with HWT_TIME_FCR_SHIFT fractional bits.
 */
#define HWT_TIME_FCR_SHIFT 8

/* What the trace itself does not say; from the tracing system. */
struct hwt_time_config {
	uint32_t cpuid_0x15_eax;	/* TSC:CTC ratio, denominator */
	uint32_t cpuid_0x15_ebx;	/* TSC:CTC ratio, numerator */
	uint8_t mtc_freq;	/* IA32_RTIT_CTL.MTCFreq: MTC every 2^n CTC */
	uint8_t nom_freq;	/* MSR_PLATFORM_INFO[15:8]; 0: unknown */
	uint32_t errata;	/* HWT_PT_ERRATUM_* */
};

/* The time estimate. Plain data; copy it to keep a snapshot. */
struct hwt_time {
	uint64_t tsc;		/* the estimated TSC */
	uint64_t base;		/* TSC at the last TSC/MTC, less TMA's FC */
	uint64_t fc;		/* fast counter ticks since @base */
	uint32_t ctc;		/* CTC (shifted into place) at the last MTC/TMA */
	uint32_t ctc_cyc;	/* CTC when @fc was last cleared */
	uint32_t lost_mtc;	/* MTCs that could not be used since the TSC */
	uint32_t lost_cyc;	/* CYCs that could not be used since TSC/MTC */
	uint8_t cbr;
	uint8_t have_tsc;
	uint8_t have_cbr;
	uint8_t have_tma;
	uint8_t have_mtc;
};

/* Forget everything (also: after a resynchronisation). */
void hwt_time_init(struct hwt_time *time);

/*
 * The estimated TSC. @tsc is set even without a TSC packet (then it is
 * time relative to the first MTC) and -HWT_ERR_NO_TIME is returned.
 * @lost_mtc and @lost_cyc may be NULL.
 */
int hwt_time_query_tsc(const struct hwt_time *time, uint64_t *tsc,
		       uint32_t *lost_mtc, uint32_t *lost_cyc);

/* The last core:bus ratio, or -HWT_ERR_NO_CBR. */
int hwt_time_query_cbr(const struct hwt_time *time, uint32_t *cbr);

/*
 * Apply one timing packet's payload.
 * Errors: -HWT_ERR_BAD_PACKET (CBR 0; CTC going back by more than one
 * wrap), -HWT_ERR_BAD_CONFIG (MTC/TMA/CYC need both cpuid_0x15 values),
 * -HWT_ERR_BAD_CONTEXT (a TMA out of context: without a preceding TSC, or
 * a second one), -HWT_ERR_INTERNAL (inconsistent state). The time stays
 * usable after an error.
 */
int hwt_time_update_tsc(struct hwt_time *time, uint64_t tsc);
int hwt_time_update_cbr(struct hwt_time *time, uint8_t cbr);
int hwt_time_update_tma(struct hwt_time *time,
			const struct hwt_time_config *config, uint16_t ctc,
			uint16_t fc);
int hwt_time_update_mtc(struct hwt_time *time,
			const struct hwt_time_config *config, uint8_t ctc);
/* @fcr: from hwt_time_cal_fcr(); 0 counts the CYC as lost. */
int hwt_time_update_cyc(struct hwt_time *time,
			const struct hwt_time_config *config, uint64_t cyc,
			uint64_t fcr);

/* Calibration: estimates the FCR for hwt_time_update_cyc(). */
struct hwt_time_cal {
	uint64_t fcr;		/* valid if @have_fcr */
	uint64_t tsc;		/* the last TSC */
	uint64_t cyc_tsc;	/* cycles since @tsc */
	uint64_t cyc_mtc;	/* cycles since the last MTC */
	uint32_t ctc;		/* CTC (shifted into place) at the last MTC */
	uint32_t lost_mtc;	/* MTCs not used for calibration */
	uint8_t have_fcr;
	uint8_t have_mtc;
	uint8_t check_skl168;	/* the next MTC is the first after a PSB */
};

void hwt_time_cal_init(struct hwt_time_cal *cal);

/* The estimated FCR, or -HWT_ERR_NO_TIME before the first estimate. */
int hwt_time_cal_fcr(const struct hwt_time_cal *cal, uint64_t *fcr);

/* Provide an FCR estimate (e.g. an initial one); shifted as above. */
void hwt_time_cal_set_fcr(struct hwt_time_cal *cal, uint64_t fcr);

/*
 * Feed packets to calibration. @in_psb: the packet is part of PSB+
 * (a TSC there is periodic, one outside may follow a loss of time; a CBR
 * outside PSB+ is a frequency change and restarts calibration).
 */
void hwt_time_cal_update_psb(struct hwt_time_cal *cal,
			     const struct hwt_time_config *config);
int hwt_time_cal_update_tsc(struct hwt_time_cal *cal, uint64_t tsc,
			    int in_psb);
int hwt_time_cal_update_cbr(struct hwt_time_cal *cal,
			    const struct hwt_time_config *config, uint8_t cbr,
			    int in_psb);
int hwt_time_cal_update_mtc(struct hwt_time_cal *cal,
			    const struct hwt_time_config *config, uint8_t ctc);
void hwt_time_cal_update_cyc(struct hwt_time_cal *cal, uint64_t cyc);
/* After an overflow: forget the periods in flight, keep the FCR. */
void hwt_time_cal_update_ovf(struct hwt_time_cal *cal);

/*
 * Time and calibration driven by whole packets, with ptdump's policy.
 * Flags for hwt_time_tracker_init():
 */
#define HWT_TIME_NO_TCAL	  0x1u	/* no calibration: CYCs are lost */
#define HWT_TIME_NO_CYC		  0x2u	/* ignore CYC packets */
#define HWT_TIME_KEEP_TCAL_ON_OVF 0x4u	/* else OVF restarts calibration */

struct hwt_time_tracker {
	struct hwt_time time;
	struct hwt_time_cal cal;
	struct hwt_time_config config;
	uint32_t flags;
	uint8_t in_psb;		/* between PSB and PSBEND */
};

void hwt_time_tracker_init(struct hwt_time_tracker *tracker,
			   const struct hwt_time_config *config,
			   uint32_t flags);

/* Forget time and calibration (after a resync); keeps config and flags. */
void hwt_time_tracker_reset(struct hwt_time_tracker *tracker);

/*
 * 1 if @a and @b hold the same time and calibration state (field by
 * field: the packets that follow give both the same times), else 0. The
 * calibration counts only where CYCs are used (neither HWT_TIME_NO_CYC
 * nor HWT_TIME_NO_TCAL): nothing else reads it.
 */
int hwt_time_tracker_same(const struct hwt_time_tracker *a,
			  const struct hwt_time_tracker *b);

/*
 * Account for @packet (any type; non-timing packets other than PSB,
 * PSBEND and OVF are ignored). Calibration and time are both updated even
 * if one fails; returns 0 or the first error (see hwt_time_update_tsc()).
 * A CYC while no FCR is known is counted in lost_cyc, not an error.
 */
int hwt_time_tracker_update(struct hwt_time_tracker *tracker,
			    const struct hwt_pt_packet *packet);

#ifdef __cplusplus
}
#endif

#endif /* HWT_PT_H */

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Traces for the unit tests, written packet by packet with hwt's own
 * encoder (hwt_pt_encode) into a buffer the test owns. A packet that does
 * not encode or does not fit fails the test.
 */
#ifndef HWT_TESTS_TRACE_BUILD_H
#define HWT_TESTS_TRACE_BUILD_H

#include <stddef.h>
#include <stdint.h>

#include <hwt/pt.h>

struct tb {
	uint8_t *buf;
	size_t len, size;
};

/* An empty trace written into the array @mem. */
#define TB_INIT(mem) { .buf = (mem), .len = 0, .size = sizeof(mem) }

/* A packet of @type with every field zero, to fill in and tb_put(). */
struct hwt_pt_packet tb_packet(uint8_t type);
void tb_put(struct tb *t, const struct hwt_pt_packet *p);

/* A packet without payload (PSB, PSBEND, OVF, PAD, STOP, ...). */
void tb_simple(struct tb *t, uint8_t type);

/* An IP packet (TIP, TIP.PGE, TIP.PGD, FUP) with the payload @ipc keeps of
 * @ip (none when suppressed). */
void tb_ipc(struct tb *t, uint8_t type, uint8_t ipc, uint64_t ip);
/* The same with @ip sign-extended from 48 bits; @ip 0: suppressed. */
void tb_ip(struct tb *t, uint8_t type, uint64_t ip);

/* Branches as a string, oldest first, as pttc writes them: "tnt" = taken,
 * not taken, taken. Up to 6 in a TNT-8, else a TNT-64. */
void tb_tnt(struct tb *t, const char *bits);
/* A TNT-8 or TNT-64 (@type) of @nbits branches, the oldest the highest. */
void tb_tnt_raw(struct tb *t, uint8_t type, unsigned nbits, uint64_t payload);

/* PSB, MODE.Exec 64-bit, FUP @fup (none if 0), PSBEND. */
void tb_psbplus(struct tb *t, uint64_t fup);
/* PSB, MODE.Exec 64-bit, TSC @tsc, FUP @fup, PSBEND. */
void tb_psbplus_tsc(struct tb *t, uint64_t tsc, uint64_t fup);

void tb_mode_exec(struct tb *t, uint8_t bits);
void tb_mode_tsx(struct tb *t, uint8_t bits);
void tb_tsc(struct tb *t, uint64_t tsc);
void tb_mtc(struct tb *t, uint8_t ctc);
void tb_cyc(struct tb *t, uint64_t cyc);
void tb_cbr(struct tb *t, uint8_t ratio);
void tb_pip(struct tb *t, uint64_t cr3, uint8_t nr);
void tb_vmcs(struct tb *t, uint64_t base);
void tb_ptw(struct tb *t, uint8_t plc, uint64_t payload, uint8_t ip);
void tb_exstop(struct tb *t, uint8_t ip);
void tb_mwait(struct tb *t, uint32_t hints, uint32_t ext);
void tb_cfe(struct tb *t, uint8_t type, uint8_t vector, uint8_t ip);
void tb_evd(struct tb *t, uint8_t type, uint64_t payload);

#endif /* HWT_TESTS_TRACE_BUILD_H */

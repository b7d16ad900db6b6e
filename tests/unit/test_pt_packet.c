/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Packet layer: hwt_pt_decode / hwt_pt_encode for every packet type.
 *
 * The byte vectors are written by hand from the packet tables of the Intel
 * SDM Vol. 3C ("Trace Packets and Data Types"), with the expected field
 * values worked out by hand, so that the decoder and the encoder are checked
 * against the manual and not only against each other.
 *
 * Where the SDM and libipt 2.1.2 disagree, hwt follows libipt (it is the
 * reference decoder we are compared against) and the test says so:
 *  - PWRE: the SDM puts the HW bit at bit 7 of byte 2 (Linux perf reads it
 *    there too); libipt reads bit 3. hwt reads bit 3.
 *  - "Packet bits listed as RSVD are not guaranteed to be 0" (SDM): libipt
 *    ignores reserved bits (MODE, CBR byte 3, PWRE, PWRX, CFE, EVD) except in
 *    TMA, where a non-zero reserved byte or FC[15:9] is a bad packet. hwt
 *    does the same, so such packets decode but re-encode with the reserved
 *    bits cleared (test_reserved_bits_ignored).
 *  - CYC: libipt rejects a CYC whose payload would exceed 64 bits, so the
 *    longest valid CYC is 9 bytes (61 payload bits), not the 15 bytes its
 *    own pt_pl_cyc_max_size suggests. hwt agrees.
 *  - libipt 2.1.2 does not know BBP/BIP/BEP (they are unknown opcodes
 *    there); hwt decodes them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <hwt/pt.h>

/* ------------------------------------------------------------------ */
/* Helpers                                                             */
/* ------------------------------------------------------------------ */

/* splitmix64: deterministic values for the round-trip sweeps. */
static uint64_t rnd(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

#define CHECK_FIELD(name, field, want, got)                                  \
	do {                                                                 \
		if ((uint64_t)(want) != (uint64_t)(got))                     \
			fail_msg("%s: %s: want 0x%llx, got 0x%llx", (name),  \
				 (field), (unsigned long long)(want),         \
				 (unsigned long long)(got));                  \
	} while (0)

/* Compare the fields that are meaningful for @want->type. */
#define CF(field) CHECK_FIELD(name, #field, want->u.field, got->u.field)

static void check_packet(const char *name, const struct hwt_pt_packet *want,
			 const struct hwt_pt_packet *got)
{
	CHECK_FIELD(name, "type", want->type, got->type);
	CHECK_FIELD(name, "size", want->size, got->size);

	switch (want->type) {
	case HWT_PT_TNT8:
	case HWT_PT_TNT64:
		CF(tnt.bits);
		CF(tnt.payload);
		break;
	case HWT_PT_TIP:
	case HWT_PT_TIP_PGE:
	case HWT_PT_TIP_PGD:
	case HWT_PT_FUP:
		CF(ip.ipc);
		CF(ip.ip);
		break;
	case HWT_PT_PIP:
		CHECK_FIELD(name, "pip.cr3", want->u.pip.cr3, got->u.pip.cr3);
		CF(pip.nr);
		break;
	case HWT_PT_MODE_EXEC:
		CF(exec);
		break;
	case HWT_PT_MODE_TSX:
		CF(tsx);
		break;
	case HWT_PT_TSC:
		CF(tsc);
		break;
	case HWT_PT_MTC:
		CF(mtc);
		break;
	case HWT_PT_TMA:
		CF(tma.ctc);
		CF(tma.fc);
		break;
	case HWT_PT_CYC:
		CF(cyc);
		break;
	case HWT_PT_CBR:
		CF(cbr);
		break;
	case HWT_PT_VMCS:
		CF(vmcs);
		break;
	case HWT_PT_MNT:
		CF(mnt);
		break;
	case HWT_PT_PTW:
		CF(ptw.plc);
		CF(ptw.ip);
		CF(ptw.payload);
		break;
	case HWT_PT_EXSTOP:
		CF(exstop_ip);
		break;
	case HWT_PT_MWAIT:
		CF(mwait.hints);
		CF(mwait.ext);
		break;
	case HWT_PT_PWRE:
		CF(pwre.state);
		CF(pwre.sub_state);
		CF(pwre.hw);
		break;
	case HWT_PT_PWRX:
		CF(pwrx.last);
		CF(pwrx.deepest);
		CF(pwrx.wake);
		break;
	case HWT_PT_BBP:
		CF(bbp.type);
		CF(bbp.sz);
		break;
	case HWT_PT_BIP:
		CF(bip.id);
		CF(bip.value);
		break;
	case HWT_PT_BEP:
		CF(bep_ip);
		break;
	case HWT_PT_CFE:
		CF(cfe.type);
		CF(cfe.vector);
		CF(cfe.ip);
		break;
	case HWT_PT_EVD:
		CF(evd.type);
		CF(evd.payload);
		break;
	default:
		/* PAD, PSB, PSBEND, OVF, STOP: no payload. */
		break;
	}
}
#undef CF

/*
 * Decode @len bytes copied to the end of an exactly sized heap block, so
 * that ASan reports any read past @end.
 */
static int decode_exact(const uint8_t *bytes, size_t len, unsigned bip,
			struct hwt_pt_packet *pkt)
{
	uint8_t *copy = malloc(len ? len : 1);
	int ret;

	assert_non_null(copy);
	if (len)
		memcpy(copy, bytes, len);
	ret = hwt_pt_decode(copy, copy + len, bip, pkt);
	free(copy);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Hand-written vectors from the SDM packet tables                     */
/* ------------------------------------------------------------------ */

struct vec {
	const char *name;
	uint8_t bytes[HWT_PT_MAX_PACKET_SIZE];
	uint8_t len;
	uint8_t bip;	/* bip_size to decode with */
	struct hwt_pt_packet want;
};

#define PSB_BYTES                                                          \
	{ 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,                  \
	  0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82 }

/* The IP payload bytes used by the IP-packet vectors, and what they mean
 * for each size. */
#define IPB 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11
#define IP16 0x7788ull
#define IP32 0x55667788ull
#define IP48 0x334455667788ull
#define IP64 0x1122334455667788ull

#define IPVEC(nm, opc, t)                                                  \
	{ nm " suppressed", { (opc) | 0x00 }, 1, 0,                        \
	  { .type = (t), .size = 1, .u.ip = { 0, 0 } } },                  \
	{ nm " update16", { (opc) | 0x20, IPB }, 3, 0,                     \
	  { .type = (t), .size = 3, .u.ip = { 1, IP16 } } },               \
	{ nm " update32", { (opc) | 0x40, IPB }, 5, 0,                     \
	  { .type = (t), .size = 5, .u.ip = { 2, IP32 } } },               \
	{ nm " sext48", { (opc) | 0x60, IPB }, 7, 0,                       \
	  { .type = (t), .size = 7, .u.ip = { 3, IP48 } } },               \
	{ nm " update48", { (opc) | 0x80, IPB }, 7, 0,                     \
	  { .type = (t), .size = 7, .u.ip = { 4, IP48 } } },               \
	{ nm " full", { (opc) | 0xc0, IPB }, 9, 0,                         \
	  { .type = (t), .size = 9, .u.ip = { 6, IP64 } } }

static const struct vec vectors[] = {
	{ "pad", { 0x00 }, 1, 0, { .type = HWT_PT_PAD, .size = 1 } },
	{ "psb", PSB_BYTES, 16, 0, { .type = HWT_PT_PSB, .size = 16 } },
	{ "psbend", { 0x02, 0x23 }, 2, 0,
	  { .type = HWT_PT_PSBEND, .size = 2 } },

	/* TNT-8: 1 B1..BN 0 from bit N+1 down; B1 (oldest) is the bit
	 * just below the stop bit, i.e. bit (bits - 1) of the payload. */
	{ "tnt8 N", { 0x04 }, 1, 0,
	  { .type = HWT_PT_TNT8, .size = 1, .u.tnt = { 1, 0x0 } } },
	{ "tnt8 T", { 0x06 }, 1, 0,
	  { .type = HWT_PT_TNT8, .size = 1, .u.tnt = { 1, 0x1 } } },
	{ "tnt8 NT", { 0x0a }, 1, 0,
	  { .type = HWT_PT_TNT8, .size = 1, .u.tnt = { 2, 0x1 } } },
	{ "tnt8 TNT", { 0x1a }, 1, 0,
	  { .type = HWT_PT_TNT8, .size = 1, .u.tnt = { 3, 0x5 } } },
	{ "tnt8 6xT", { 0xfe }, 1, 0,
	  { .type = HWT_PT_TNT8, .size = 1, .u.tnt = { 6, 0x3f } } },
	{ "tnt8 6xN", { 0x80 }, 1, 0,
	  { .type = HWT_PT_TNT8, .size = 1, .u.tnt = { 6, 0x00 } } },
	{ "tnt8 NTNTNT", { 0xaa }, 1, 0,
	  { .type = HWT_PT_TNT8, .size = 1, .u.tnt = { 6, 0x15 } } },

	/* TNT-64: 02 a3, 6 payload bytes, stop bit = highest set bit. */
	{ "tnt64 1 bit", { 0x02, 0xa3, 0x02, 0, 0, 0, 0, 0 }, 8, 0,
	  { .type = HWT_PT_TNT64, .size = 8, .u.tnt = { 1, 0 } } },
	{ "tnt64 14 bits", { 0x02, 0xa3, 0xaa, 0x55, 0, 0, 0, 0 }, 8, 0,
	  { .type = HWT_PT_TNT64, .size = 8, .u.tnt = { 14, 0x15aa } } },
	{ "tnt64 47 bits",
	  { 0x02, 0xa3, 0x01, 0x00, 0x00, 0x00, 0x00, 0x80 }, 8, 0,
	  { .type = HWT_PT_TNT64, .size = 8, .u.tnt = { 47, 1 } } },
	{ "tnt64 47 taken",
	  { 0x02, 0xa3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff }, 8, 0,
	  { .type = HWT_PT_TNT64, .size = 8,
	    .u.tnt = { 47, 0x7fffffffffffull } } },

	/* IP packets: IPBytes in bits 7:5 of the header. */
	IPVEC("tip", 0x0d, HWT_PT_TIP),
	IPVEC("tip.pge", 0x11, HWT_PT_TIP_PGE),
	IPVEC("tip.pgd", 0x01, HWT_PT_TIP_PGD),
	IPVEC("fup", 0x1d, HWT_PT_FUP),
	/* The packet keeps the raw payload; sign extension is last-IP's. */
	{ "fup sext48 negative",
	  { 0x7d, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80 }, 7, 0,
	  { .type = HWT_PT_FUP, .size = 7,
	    .u.ip = { 3, 0x800000000000ull } } },

	/* PIP: 02 43, payload[0] = NR, payload[47:1] = CR3[51:5]. */
	{ "pip nr", { 0x02, 0x43, 0x01, 0x45, 0x23, 0x01, 0x00, 0x00 }, 8, 0,
	  { .type = HWT_PT_PIP, .size = 8,
	    .u.pip = { .cr3 = 0x12345000ull, .nr = 1 } } },
	{ "pip root", { 0x02, 0x43, 0x00, 0x45, 0x23, 0x01, 0x00, 0x00 }, 8,
	  0, { .type = HWT_PT_PIP, .size = 8,
	       .u.pip = { .cr3 = 0x12345000ull, .nr = 0 } } },
	{ "pip max", { 0x02, 0x43, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff }, 8, 0,
	  { .type = HWT_PT_PIP, .size = 8,
	    .u.pip = { .cr3 = 0xfffffffffffe0ull, .nr = 1 } } },

	/* MODE: 99, leaf in bits 7:5 (000 exec, 001 tsx). */
	{ "mode.exec 16-bit", { 0x99, 0x00 }, 2, 0,
	  { .type = HWT_PT_MODE_EXEC, .size = 2, .u.exec = 0 } },
	{ "mode.exec CS.L", { 0x99, 0x01 }, 2, 0,
	  { .type = HWT_PT_MODE_EXEC, .size = 2, .u.exec = HWT_PT_EXEC_CSL } },
	{ "mode.exec CS.D", { 0x99, 0x02 }, 2, 0,
	  { .type = HWT_PT_MODE_EXEC, .size = 2, .u.exec = HWT_PT_EXEC_CSD } },
	{ "mode.exec IF", { 0x99, 0x04 }, 2, 0,
	  { .type = HWT_PT_MODE_EXEC, .size = 2, .u.exec = HWT_PT_EXEC_IF } },
	{ "mode.exec all", { 0x99, 0x07 }, 2, 0,
	  { .type = HWT_PT_MODE_EXEC, .size = 2, .u.exec = 7 } },
	{ "mode.tsx none", { 0x99, 0x20 }, 2, 0,
	  { .type = HWT_PT_MODE_TSX, .size = 2, .u.tsx = 0 } },
	{ "mode.tsx intx", { 0x99, 0x21 }, 2, 0,
	  { .type = HWT_PT_MODE_TSX, .size = 2, .u.tsx = HWT_PT_TSX_INTX } },
	{ "mode.tsx abort", { 0x99, 0x22 }, 2, 0,
	  { .type = HWT_PT_MODE_TSX, .size = 2, .u.tsx = HWT_PT_TSX_ABORT } },

	/* TSC: 19 + TSC[55:0]. */
	{ "tsc", { 0x19, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07 }, 8, 0,
	  { .type = HWT_PT_TSC, .size = 8, .u.tsc = 0x07060504030201ull } },
	{ "tsc max", { 0x19, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff }, 8, 0,
	  { .type = HWT_PT_TSC, .size = 8, .u.tsc = 0xffffffffffffffull } },

	/* MTC: 59 + CTC[N+7:N]. */
	{ "mtc", { 0x59, 0xab }, 2, 0,
	  { .type = HWT_PT_MTC, .size = 2, .u.mtc = 0xab } },

	/* TMA: 02 73 CTC[7:0] CTC[15:8] rsvd FC[7:0] {rsvd, FC[8]}. */
	{ "tma", { 0x02, 0x73, 0x34, 0x12, 0x00, 0xff, 0x01 }, 7, 0,
	  { .type = HWT_PT_TMA, .size = 7,
	    .u.tma = { .ctc = 0x1234, .fc = 0x1ff } } },
	{ "tma zero", { 0x02, 0x73, 0x00, 0x00, 0x00, 0x00, 0x00 }, 7, 0,
	  { .type = HWT_PT_TMA, .size = 7, .u.tma = { .ctc = 0, .fc = 0 } } },

	/* CYC: byte 0 = Cyc[4:0] Exp 1 1; then Cyc[k+6:k] Exp per byte. */
	{ "cyc 0", { 0x03 }, 1, 0,
	  { .type = HWT_PT_CYC, .size = 1, .u.cyc = 0 } },
	{ "cyc 31", { 0xfb }, 1, 0,
	  { .type = HWT_PT_CYC, .size = 1, .u.cyc = 31 } },
	{ "cyc 32", { 0x07, 0x02 }, 2, 0,
	  { .type = HWT_PT_CYC, .size = 2, .u.cyc = 32 } },
	{ "cyc 3 bytes", { 0x0f, 0x03, 0xfe }, 3, 0,
	  { .type = HWT_PT_CYC, .size = 3, .u.cyc = 0x7f021 } },
	{ "cyc 9 bytes",
	  { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe }, 9, 0,
	  { .type = HWT_PT_CYC, .size = 9, .u.cyc = 0x1fffffffffffffffull } },

	/* CBR: 02 03 ratio rsvd. */
	{ "cbr", { 0x02, 0x03, 0x2a, 0x00 }, 4, 0,
	  { .type = HWT_PT_CBR, .size = 4, .u.cbr = 0x2a } },
	{ "cbr max", { 0x02, 0x03, 0xff, 0x00 }, 4, 0,
	  { .type = HWT_PT_CBR, .size = 4, .u.cbr = 0xff } },

	/* VMCS: 02 c8 + VMCS pointer[51:12]. */
	{ "vmcs", { 0x02, 0xc8, 0x01, 0x02, 0x03, 0x04, 0x05 }, 7, 0,
	  { .type = HWT_PT_VMCS, .size = 7, .u.vmcs = 0x504030201000ull } },

	{ "ovf", { 0x02, 0xf3 }, 2, 0, { .type = HWT_PT_OVF, .size = 2 } },

	/* MNT: 02 c3 88 + 8 payload bytes. */
	{ "mnt",
	  { 0x02, 0xc3, 0x88, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08 },
	  11, 0,
	  { .type = HWT_PT_MNT, .size = 11, .u.mnt = 0x0807060504030201ull } },

	{ "tracestop", { 0x02, 0x83 }, 2, 0,
	  { .type = HWT_PT_STOP, .size = 2 } },

	/* PTW: 02, then IP(7) PayloadBytes(6:5) 10010. */
	{ "ptw 4", { 0x02, 0x12, 0x78, 0x56, 0x34, 0x12 }, 6, 0,
	  { .type = HWT_PT_PTW, .size = 6,
	    .u.ptw = { .plc = 0, .ip = 0, .payload = 0x12345678 } } },
	{ "ptw 4 ip", { 0x02, 0x92, 0x78, 0x56, 0x34, 0x12 }, 6, 0,
	  { .type = HWT_PT_PTW, .size = 6,
	    .u.ptw = { .plc = 0, .ip = 1, .payload = 0x12345678 } } },
	{ "ptw 8", { 0x02, 0x32, IPB }, 10, 0,
	  { .type = HWT_PT_PTW, .size = 10,
	    .u.ptw = { .plc = 1, .ip = 0, .payload = IP64 } } },
	{ "ptw 8 ip", { 0x02, 0xb2, IPB }, 10, 0,
	  { .type = HWT_PT_PTW, .size = 10,
	    .u.ptw = { .plc = 1, .ip = 1, .payload = IP64 } } },

	{ "exstop", { 0x02, 0x62 }, 2, 0,
	  { .type = HWT_PT_EXSTOP, .size = 2, .u.exstop_ip = 0 } },
	{ "exstop ip", { 0x02, 0xe2 }, 2, 0,
	  { .type = HWT_PT_EXSTOP, .size = 2, .u.exstop_ip = 1 } },

	/* MWAIT: 02 c2 + hints (4 bytes) + extensions (4 bytes). */
	{ "mwait",
	  { 0x02, 0xc2, 0x01, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00 }, 10,
	  0, { .type = HWT_PT_MWAIT, .size = 10,
	       .u.mwait = { .hints = 1, .ext = 3 } } },
	{ "mwait c6",
	  { 0x02, 0xc2, 0x20, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00 }, 10,
	  0, { .type = HWT_PT_MWAIT, .size = 10,
	       .u.mwait = { .hints = 0x20, .ext = 1 } } },

	/* PWRE: 02 22, byte 3 = C-state(7:4) sub C-state(3:0); HW at byte 2
	 * bit 3 as libipt has it (the SDM says bit 7). */
	{ "pwre", { 0x02, 0x22, 0x00, 0x21 }, 4, 0,
	  { .type = HWT_PT_PWRE, .size = 4,
	    .u.pwre = { .state = 2, .sub_state = 1, .hw = 0 } } },
	{ "pwre hw", { 0x02, 0x22, 0x08, 0xf0 }, 4, 0,
	  { .type = HWT_PT_PWRE, .size = 4,
	    .u.pwre = { .state = 0xf, .sub_state = 0, .hw = 1 } } },

	/* PWRX: 02 a2, last(7:4) deepest(3:0), wake reason, 3 rsvd. */
	{ "pwrx int", { 0x02, 0xa2, 0x21, 0x01, 0x00, 0x00, 0x00 }, 7, 0,
	  { .type = HWT_PT_PWRX, .size = 7,
	    .u.pwrx = { .last = 2, .deepest = 1,
			.wake = HWT_PT_PWRX_INT } } },
	{ "pwrx store", { 0x02, 0xa2, 0x63, 0x04, 0x00, 0x00, 0x00 }, 7, 0,
	  { .type = HWT_PT_PWRX, .size = 7,
	    .u.pwrx = { .last = 6, .deepest = 3,
			.wake = HWT_PT_PWRX_STORE } } },
	{ "pwrx hw", { 0x02, 0xa2, 0x00, 0x08, 0x00, 0x00, 0x00 }, 7, 0,
	  { .type = HWT_PT_PWRX, .size = 7,
	    .u.pwrx = { .last = 0, .deepest = 0,
			.wake = HWT_PT_PWRX_HW } } },

	/* BBP: 02 63, SZ(7) Type(4:0). */
	{ "bbp sz4", { 0x02, 0x63, 0x81 }, 3, 0,
	  { .type = HWT_PT_BBP, .size = 3, .u.bbp = { .type = 1, .sz = 1 } } },
	{ "bbp sz8", { 0x02, 0x63, 0x02 }, 3, 0,
	  { .type = HWT_PT_BBP, .size = 3, .u.bbp = { .type = 2, .sz = 0 } } },
	{ "bbp type 31", { 0x02, 0x63, 0x1f }, 3, 0,
	  { .type = HWT_PT_BBP, .size = 3,
	    .u.bbp = { .type = 31, .sz = 0 } } },

	/* BIP: ID(7:3) 100, then 4 or 8 payload bytes (per the BBP). */
	{ "bip 4", { 0x0c, 0x78, 0x56, 0x34, 0x12 }, 5, 4,
	  { .type = HWT_PT_BIP, .size = 5,
	    .u.bip = { .id = 1, .value = 0x12345678 } } },
	{ "bip 8", { 0xfc, IPB }, 9, 8,
	  { .type = HWT_PT_BIP, .size = 9,
	    .u.bip = { .id = 31, .value = IP64 } } },
	{ "bip 8 id 0", { 0x04, 0, 0, 0, 0, 0, 0, 0, 0 }, 9, 8,
	  { .type = HWT_PT_BIP, .size = 9, .u.bip = { .id = 0, .value = 0 } } },

	{ "bep", { 0x02, 0x33 }, 2, 0,
	  { .type = HWT_PT_BEP, .size = 2, .u.bep_ip = 0 } },
	{ "bep ip", { 0x02, 0xb3 }, 2, 0,
	  { .type = HWT_PT_BEP, .size = 2, .u.bep_ip = 1 } },

	/* CFE: 02 13, IP(7) rsvd(6:5) Type(4:0), Vector. */
	{ "cfe intr ip", { 0x02, 0x13, 0x81, 0x20 }, 4, 0,
	  { .type = HWT_PT_CFE, .size = 4,
	    .u.cfe = { .type = 1, .vector = 0x20, .ip = 1 } } },
	{ "cfe", { 0x02, 0x13, 0x0e, 0xff }, 4, 0,
	  { .type = HWT_PT_CFE, .size = 4,
	    .u.cfe = { .type = 14, .vector = 0xff, .ip = 0 } } },

	/* EVD: 02 53, rsvd(7:5)? Type(4:0), Payload[63:0]. */
	{ "evd", { 0x02, 0x53, 0x01, IPB }, 11, 0,
	  { .type = HWT_PT_EVD, .size = 11,
	    .u.evd = { .type = 1, .payload = IP64 } } },
	{ "evd type 31", { 0x02, 0x53, 0x1f, 0, 0, 0, 0, 0, 0, 0, 0 }, 11, 0,
	  { .type = HWT_PT_EVD, .size = 11,
	    .u.evd = { .type = 31, .payload = 0 } } },
};

#define NVEC (sizeof(vectors) / sizeof(vectors[0]))

/* Every type but INVALID has at least one vector. */
static void test_vectors_cover_all_types(void **state)
{
	int seen[HWT_PT_NTYPES] = { 0 };

	(void)state;
	for (size_t i = 0; i < NVEC; i++)
		seen[vectors[i].want.type] = 1;
	for (unsigned t = HWT_PT_INVALID + 1; t < HWT_PT_NTYPES; t++)
		if (!seen[t])
			fail_msg("no vector for %s", hwt_pt_type_name(t));
}

static void test_vectors_decode(void **state)
{
	(void)state;
	for (size_t i = 0; i < NVEC; i++) {
		const struct vec *v = &vectors[i];
		struct hwt_pt_packet pkt;
		int ret;

		memset(&pkt, 0xa5, sizeof(pkt));
		ret = decode_exact(v->bytes, v->len, v->bip, &pkt);
		if (ret != v->len)
			fail_msg("%s: decode returned %d, want %u", v->name,
				 ret, v->len);
		check_packet(v->name, &v->want, &pkt);

		/* Trailing bytes do not change the packet. */
		memset(&pkt, 0x5a, sizeof(pkt));
		{
			uint8_t buf[HWT_PT_MAX_PACKET_SIZE + 4];

			memset(buf, 0, sizeof(buf));
			memcpy(buf, v->bytes, v->len);
			ret = hwt_pt_decode(buf, buf + sizeof(buf), v->bip,
					    &pkt);
		}
		if (ret != v->len)
			fail_msg("%s: decode with tail returned %d", v->name,
				 ret);
		check_packet(v->name, &v->want, &pkt);
	}
}

static void test_vectors_encode(void **state)
{
	(void)state;
	for (size_t i = 0; i < NVEC; i++) {
		const struct vec *v = &vectors[i];
		uint8_t buf[HWT_PT_MAX_PACKET_SIZE + 4];
		int ret;

		memset(buf, 0xee, sizeof(buf));
		ret = hwt_pt_encode(buf, buf + sizeof(buf), &v->want);
		if (ret != v->len)
			fail_msg("%s: encode returned %d, want %u", v->name,
				 ret, v->len);
		if (memcmp(buf, v->bytes, v->len))
			fail_msg("%s: encoded bytes differ", v->name);
		if (buf[v->len] != 0xee)
			fail_msg("%s: encode wrote past its size", v->name);

		/* Too little room: nothing useful, -EOS. */
		ret = hwt_pt_encode(buf, buf + v->len - 1, &v->want);
		if (ret != -HWT_ERR_EOS)
			fail_msg("%s: short encode returned %d", v->name, ret);
	}
}

/* (c) Every proper prefix of a packet is -HWT_ERR_EOS. */
static void test_vectors_truncated(void **state)
{
	(void)state;
	for (size_t i = 0; i < NVEC; i++) {
		const struct vec *v = &vectors[i];

		for (size_t k = 0; k < v->len; k++) {
			struct hwt_pt_packet pkt;
			int ret = decode_exact(v->bytes, k, v->bip, &pkt);

			if (ret != -HWT_ERR_EOS)
				fail_msg("%s: prefix of %zu bytes: got %d (%s)",
					 v->name, k, ret, hwt_errstr(ret));
		}
	}
}

/* ------------------------------------------------------------------ */
/* Reserved and unknown encodings                                      */
/* ------------------------------------------------------------------ */

struct bad {
	const char *name;
	uint8_t bytes[HWT_PT_MAX_PACKET_SIZE + 4];
	uint8_t len;
	int err;
};

static const struct bad bad_vectors[] = {
	/* IPBytes 101 and 111 are reserved, for all four IP packets. */
	{ "tip ipc 5", { 0xad, IPB }, 9, -HWT_ERR_BAD_PACKET },
	{ "tip ipc 7", { 0xed, IPB }, 9, -HWT_ERR_BAD_PACKET },
	{ "tip.pge ipc 5", { 0xb1, IPB }, 9, -HWT_ERR_BAD_PACKET },
	{ "tip.pge ipc 7", { 0xf1, IPB }, 9, -HWT_ERR_BAD_PACKET },
	{ "tip.pgd ipc 5", { 0xa1, IPB }, 9, -HWT_ERR_BAD_PACKET },
	{ "tip.pgd ipc 7", { 0xe1, IPB }, 9, -HWT_ERR_BAD_PACKET },
	{ "fup ipc 5", { 0xbd, IPB }, 9, -HWT_ERR_BAD_PACKET },
	{ "fup ipc 7", { 0xfd, IPB }, 9, -HWT_ERR_BAD_PACKET },
	/* Reserved IPBytes is known before the payload is: a 1-byte buffer
	 * already says bad packet (as libipt). */
	{ "fup ipc 5 alone", { 0xbd }, 1, -HWT_ERR_BAD_PACKET },
	/* TNT-64 without a stop bit, or with nothing but the stop bit
	 * (libipt: "bit size 0" is a bad packet). */
	{ "tnt64 no stop bit", { 0x02, 0xa3, 0, 0, 0, 0, 0, 0 }, 8,
	  -HWT_ERR_BAD_PACKET },
	{ "tnt64 empty", { 0x02, 0xa3, 0x01, 0, 0, 0, 0, 0 }, 8,
	  -HWT_ERR_BAD_PACKET },
	/* MODE leaves 010..111 are reserved. */
	{ "mode leaf 2", { 0x99, 0x40 }, 2, -HWT_ERR_BAD_PACKET },
	{ "mode leaf 3", { 0x99, 0x61 }, 2, -HWT_ERR_BAD_PACKET },
	{ "mode leaf 7", { 0x99, 0xe0 }, 2, -HWT_ERR_BAD_PACKET },
	/* TMA: the byte between CTC and FC, and FC[15:9] (libipt). */
	{ "tma rsvd byte", { 0x02, 0x73, 0x34, 0x12, 0x01, 0xff, 0x01 }, 7,
	  -HWT_ERR_BAD_PACKET },
	{ "tma fc bit 9", { 0x02, 0x73, 0x34, 0x12, 0x00, 0xff, 0x03 }, 7,
	  -HWT_ERR_BAD_PACKET },
	{ "tma fc bit 15", { 0x02, 0x73, 0x34, 0x12, 0x00, 0x00, 0x80 }, 7,
	  -HWT_ERR_BAD_PACKET },
	/* PTW PayloadBytes 10 and 11 are reserved. */
	{ "ptw plc 2", { 0x02, 0x52, IPB }, 10, -HWT_ERR_BAD_PACKET },
	{ "ptw plc 3", { 0x02, 0x72, IPB }, 10, -HWT_ERR_BAD_PACKET },
	{ "ptw plc 2 ip", { 0x02, 0xd2, IPB }, 10, -HWT_ERR_BAD_PACKET },
	{ "ptw plc 3 ip", { 0x02, 0xf2, IPB }, 10, -HWT_ERR_BAD_PACKET },
	/* ... known before the payload (libipt). */
	{ "ptw plc 2 alone", { 0x02, 0x52 }, 2, -HWT_ERR_BAD_PACKET },
	/* A CYC with more than 64 payload bits (10 bytes). */
	{ "cyc 10 bytes",
	  { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02 }, 10,
	  -HWT_ERR_BAD_PACKET },
	/* 02 82 that is not followed by the full PSB pattern. */
	{ "psb broken",
	  { 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	    0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x83 }, 16,
	  -HWT_ERR_BAD_PACKET },
	{ "psb broken early",
	  { 0x02, 0x82, 0x00, 0x82, 0x02, 0x82, 0x02, 0x82,
	    0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82 }, 16,
	  -HWT_ERR_BAD_PACKET },

	/* Unknown one-byte opcodes: odd bytes that are none of CYC
	 * (xxxxxx11), TIP/TIP.PGE/TIP.PGD/FUP (low 5 bits 01101, 10001,
	 * 00001, 11101), TSC 19, MTC 59, MODE 99. */
	{ "opc 05", { 0x05 }, 1, -HWT_ERR_BAD_OPC },
	{ "opc 09", { 0x09 }, 1, -HWT_ERR_BAD_OPC },
	{ "opc 15", { 0x15 }, 1, -HWT_ERR_BAD_OPC },
	{ "opc 25", { 0x25 }, 1, -HWT_ERR_BAD_OPC },
	{ "opc 39", { 0x39, 0, 0, 0, 0, 0, 0, 0 }, 8, -HWT_ERR_BAD_OPC },
	{ "opc 79", { 0x79, 0, 0, 0, 0, 0, 0, 0 }, 8, -HWT_ERR_BAD_OPC },
	{ "opc b9", { 0xb9, 0, 0, 0, 0, 0, 0, 0 }, 8, -HWT_ERR_BAD_OPC },
	{ "opc d9", { 0xd9, 0, 0, 0, 0, 0, 0, 0 }, 8, -HWT_ERR_BAD_OPC },
	{ "opc f9", { 0xf9, 0, 0, 0, 0, 0, 0, 0 }, 8, -HWT_ERR_BAD_OPC },
	/* Unknown extended opcodes. */
	{ "ext 00", { 0x02, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0 }, 11,
	  -HWT_ERR_BAD_OPC },
	{ "ext 02", { 0x02, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0 }, 11,
	  -HWT_ERR_BAD_OPC },
	{ "ext 04", { 0x02, 0x04, 0, 0, 0, 0, 0, 0, 0, 0, 0 }, 11,
	  -HWT_ERR_BAD_OPC },
	{ "ext ff", { 0x02, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0 }, 11,
	  -HWT_ERR_BAD_OPC },
	/* Unknown EXT2 codes (only 88 = MNT is defined). */
	{ "ext2 00", { 0x02, 0xc3, 0x00, 0, 0, 0, 0, 0, 0, 0, 0 }, 11,
	  -HWT_ERR_BAD_OPC },
	{ "ext2 89", { 0x02, 0xc3, 0x89, 0, 0, 0, 0, 0, 0, 0, 0 }, 11,
	  -HWT_ERR_BAD_OPC },
};

#define NBAD (sizeof(bad_vectors) / sizeof(bad_vectors[0]))

static void test_reserved_and_unknown(void **state)
{
	(void)state;
	for (size_t i = 0; i < NBAD; i++) {
		const struct bad *b = &bad_vectors[i];
		struct hwt_pt_packet pkt;
		int ret;

		for (unsigned bip = 0; bip <= 8; bip += 4) {
			ret = decode_exact(b->bytes, b->len, bip, &pkt);
			if (ret != b->err)
				fail_msg("%s (bip %u): got %d (%s), want %d",
					 b->name, bip, ret, hwt_errstr(ret),
					 b->err);
		}
	}
}

/* Sweep all one-byte and extended opcodes: each decodes to something
 * plausible or fails with BAD_OPC/BAD_PACKET, never anything else. */
static void test_opcode_sweep(void **state)
{
	(void)state;
	for (unsigned b0 = 0; b0 < 256; b0++) {
		for (unsigned b1 = 0; b1 < 256; b1++) {
			uint8_t buf[HWT_PT_MAX_PACKET_SIZE];
			struct hwt_pt_packet pkt;
			int ret;

			memset(buf, 0, sizeof(buf));
			buf[0] = (uint8_t)b0;
			buf[1] = (uint8_t)b1;
			/* Give TNT-64 a stop bit and PSB its pattern. */
			buf[7] = 0x80;
			if (b0 == 0x02 && b1 == 0x82)
				for (int i = 0; i < 16; i += 2) {
					buf[i] = 0x02;
					buf[i + 1] = 0x82;
				}
			ret = hwt_pt_decode(buf, buf + sizeof(buf), 0, &pkt);
			if (ret == -HWT_ERR_BAD_OPC ||
			    ret == -HWT_ERR_BAD_PACKET)
				continue;
			if (ret <= 0 || ret > HWT_PT_MAX_PACKET_SIZE)
				fail_msg("%02x %02x: got %d", b0, b1, ret);
			if (pkt.size != ret || pkt.type == HWT_PT_INVALID ||
			    pkt.type >= HWT_PT_NTYPES)
				fail_msg("%02x %02x: bad packet %u/%u", b0, b1,
					 pkt.type, pkt.size);
			/* Outside a block, there are no BIPs. */
			if (pkt.type == HWT_PT_BIP)
				fail_msg("%02x: BIP outside a block", b0);
		}
	}
}

/* The first byte alone decides which one-byte opcodes are known. */
static void test_one_byte_opcode_map(void **state)
{
	(void)state;
	for (unsigned b = 0; b < 256; b++) {
		uint8_t buf[HWT_PT_MAX_PACKET_SIZE];
		struct hwt_pt_packet pkt;
		int want_type, ret;

		memset(buf, 0, sizeof(buf));
		buf[0] = (uint8_t)b;
		if ((b & 3) == 3)
			want_type = HWT_PT_CYC;
		else if (b == 0x00)
			want_type = HWT_PT_PAD;
		else if (b == 0x02)
			continue;	/* extended opcode escape */
		else if (!(b & 1))
			want_type = HWT_PT_TNT8;
		else if ((b & 0x1f) == 0x0d)
			want_type = HWT_PT_TIP;
		else if ((b & 0x1f) == 0x11)
			want_type = HWT_PT_TIP_PGE;
		else if ((b & 0x1f) == 0x01)
			want_type = HWT_PT_TIP_PGD;
		else if ((b & 0x1f) == 0x1d)
			want_type = HWT_PT_FUP;
		else if (b == 0x19)
			want_type = HWT_PT_TSC;
		else if (b == 0x59)
			want_type = HWT_PT_MTC;
		else if (b == 0x99)
			want_type = HWT_PT_MODE_EXEC;
		else
			want_type = -1;

		ret = hwt_pt_decode(buf, buf + sizeof(buf), 0, &pkt);
		if (want_type < 0) {
			if (ret != -HWT_ERR_BAD_OPC)
				fail_msg("%02x: got %d, want BAD_OPC", b, ret);
			continue;
		}
		/* Reserved IPBytes (5, 7) are BAD_PACKET. */
		if (want_type >= HWT_PT_TIP && want_type <= HWT_PT_FUP &&
		    ((b >> 5) == 5 || (b >> 5) == 7)) {
			if (ret != -HWT_ERR_BAD_PACKET)
				fail_msg("%02x: got %d, want BAD_PACKET", b,
					 ret);
			continue;
		}
		if (ret < 0 || pkt.type != want_type)
			fail_msg("%02x: got %d type %u, want type %d", b, ret,
				 pkt.type, want_type);
	}
}

/* Reserved bits that libipt ignores are ignored here too: the packet
 * decodes, and re-encodes with those bits cleared. */
static void test_reserved_bits_ignored(void **state)
{
	static const struct {
		const char *name;
		uint8_t in[HWT_PT_MAX_PACKET_SIZE];
		uint8_t canon[HWT_PT_MAX_PACKET_SIZE];
		uint8_t len;
	} cases[] = {
		{ "mode.exec bits 4:3", { 0x99, 0x19 }, { 0x99, 0x01 }, 2 },
		{ "mode.tsx bits 4:2", { 0x99, 0x3d }, { 0x99, 0x21 }, 2 },
		{ "cbr byte 3", { 0x02, 0x03, 0x10, 0xff },
		  { 0x02, 0x03, 0x10, 0x00 }, 4 },
		/* The SDM's HW bit (byte 2, bit 7) is a reserved bit to
		 * libipt and hwt. */
		{ "pwre byte 2", { 0x02, 0x22, 0xf7, 0x21 },
		  { 0x02, 0x22, 0x00, 0x21 }, 4 },
		{ "pwrx rsvd", { 0x02, 0xa2, 0x21, 0xf2, 0xff, 0xff, 0xff },
		  { 0x02, 0xa2, 0x21, 0x02, 0x00, 0x00, 0x00 }, 7 },
		{ "bbp bits 6:5", { 0x02, 0x63, 0xe3 }, { 0x02, 0x63, 0x83 },
		  3 },
		{ "cfe bits 6:5", { 0x02, 0x13, 0xe1, 0x20 },
		  { 0x02, 0x13, 0x81, 0x20 }, 4 },
		{ "evd bits 7:5", { 0x02, 0x53, 0xe1, IPB },
		  { 0x02, 0x53, 0x01, IPB }, 11 },
		/* Not reserved bits, but the same effect: a CYC with a
		 * needless all-zero extension byte decodes (as in libipt)
		 * and re-encodes in its shortest form. */
		{ "cyc non-minimal", { 0x0f, 0x00 }, { 0x0b }, 2 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct hwt_pt_packet pkt, canon;
		uint8_t buf[HWT_PT_MAX_PACKET_SIZE];
		int ret, n;

		ret = decode_exact(cases[i].in, cases[i].len, 0, &pkt);
		if (ret != cases[i].len)
			fail_msg("%s: decode returned %d", cases[i].name, ret);
		n = hwt_pt_encode(buf, buf + sizeof(buf), &pkt);
		if (n <= 0)
			fail_msg("%s: encode returned %d", cases[i].name, n);
		if (memcmp(buf, cases[i].canon, (size_t)n))
			fail_msg("%s: not re-encoded canonically",
				 cases[i].name);
		ret = hwt_pt_decode(buf, buf + n, 0, &canon);
		assert_int_equal(ret, n);
		canon.size = pkt.size;	/* only the size may differ */
		check_packet(cases[i].name, &pkt, &canon);
	}
}

/* BIP headers are TNT-8 outside a block; inside one they are BIPs of the
 * block's size, while other even bytes stay TNT-8. */
static void test_bip_needs_block(void **state)
{
	const uint8_t bip[] = { 0x0c, 1, 2, 3, 4, 5, 6, 7, 8 };
	struct hwt_pt_packet pkt;

	(void)state;
	assert_int_equal(decode_exact(bip, sizeof(bip), 0, &pkt), 1);
	assert_int_equal(pkt.type, HWT_PT_TNT8);
	assert_int_equal(pkt.u.tnt.bits, 2);
	assert_int_equal(pkt.u.tnt.payload, 2);

	assert_int_equal(decode_exact(bip, sizeof(bip), 4, &pkt), 5);
	assert_int_equal(pkt.type, HWT_PT_BIP);
	assert_int_equal(pkt.u.bip.id, 1);
	assert_int_equal(pkt.u.bip.value, 0x04030201);

	assert_int_equal(decode_exact(bip, sizeof(bip), 8, &pkt), 9);
	assert_int_equal(pkt.type, HWT_PT_BIP);
	assert_int_equal(pkt.u.bip.value, 0x0807060504030201ull);

	/* 0x0a (low bits 010) is not a BIP header. */
	{
		const uint8_t tnt[] = { 0x0a, 0, 0, 0, 0 };

		assert_int_equal(decode_exact(tnt, sizeof(tnt), 4, &pkt), 1);
		assert_int_equal(pkt.type, HWT_PT_TNT8);
	}
	/* Only 4 and 8 are BIP sizes. */
	assert_int_equal(hwt_pt_decode(bip, bip + sizeof(bip), 3, &pkt),
			 -HWT_ERR_INVALID);
}

static void test_decode_bad_args(void **state)
{
	const uint8_t b[] = { 0x00 };
	struct hwt_pt_packet pkt;

	(void)state;
	assert_int_equal(hwt_pt_decode(NULL, b + 1, 0, &pkt), -HWT_ERR_INVALID);
	assert_int_equal(hwt_pt_decode(b, b + 1, 0, NULL), -HWT_ERR_INVALID);
	assert_int_equal(hwt_pt_decode(b, b, 0, &pkt), -HWT_ERR_EOS);
}

/* ------------------------------------------------------------------ */
/* Encode -> decode round trips over many values                       */
/* ------------------------------------------------------------------ */

/* A random valid packet of @type; @bip receives the BIP size to decode
 * with (BIP only). */
static void random_packet(uint64_t *rs, unsigned type,
			  struct hwt_pt_packet *p, unsigned *bip)
{
	uint64_t r = rnd(rs);

	memset(p, 0, sizeof(*p));
	p->type = (uint8_t)type;
	*bip = 0;
	switch (type) {
	case HWT_PT_TNT8:
		p->u.tnt.bits = (uint8_t)(1 + r % 6);
		p->u.tnt.payload = (r >> 8) & ((1ull << p->u.tnt.bits) - 1);
		break;
	case HWT_PT_TNT64:
		p->u.tnt.bits = (uint8_t)(1 + r % 47);
		p->u.tnt.payload = (r >> 8) & ((1ull << p->u.tnt.bits) - 1);
		break;
	case HWT_PT_TIP:
	case HWT_PT_TIP_PGE:
	case HWT_PT_TIP_PGD:
	case HWT_PT_FUP: {
		static const uint8_t ipcs[] = { 0, 1, 2, 3, 4, 6 };
		unsigned n;

		p->u.ip.ipc = ipcs[r % 6];
		n = (unsigned)hwt_pt_ipc_size(p->u.ip.ipc);
		p->u.ip.ip = n == 8 ? rnd(rs) :
			     rnd(rs) & ((1ull << (8 * n)) - 1);
		break;
	}
	case HWT_PT_PIP:
		p->u.pip.cr3 = rnd(rs) & 0xfffffffffffe0ull;
		p->u.pip.nr = r & 1;
		break;
	case HWT_PT_MODE_EXEC:
		p->u.exec = r & 7;
		break;
	case HWT_PT_MODE_TSX:
		p->u.tsx = r & 3;
		break;
	case HWT_PT_TSC:
		p->u.tsc = r >> 8;
		break;
	case HWT_PT_MTC:
		p->u.mtc = (uint8_t)r;
		break;
	case HWT_PT_TMA:
		p->u.tma.ctc = (uint16_t)r;
		p->u.tma.fc = (uint16_t)((r >> 16) & 0x1ff);
		break;
	case HWT_PT_CYC:
		/* All lengths: 1 to 9 bytes (5 + 7k bits). */
		p->u.cyc = rnd(rs) >> (3 + r % 61);
		break;
	case HWT_PT_CBR:
		p->u.cbr = (uint8_t)r;
		break;
	case HWT_PT_VMCS:
		p->u.vmcs = rnd(rs) & 0xffffffffff000ull;
		break;
	case HWT_PT_MNT:
		p->u.mnt = rnd(rs);
		break;
	case HWT_PT_PTW:
		p->u.ptw.plc = r & 1;
		p->u.ptw.ip = (r >> 1) & 1;
		p->u.ptw.payload = p->u.ptw.plc ? rnd(rs) : rnd(rs) >> 32;
		break;
	case HWT_PT_EXSTOP:
		p->u.exstop_ip = r & 1;
		break;
	case HWT_PT_MWAIT:
		p->u.mwait.hints = (uint32_t)r;
		p->u.mwait.ext = (uint32_t)(r >> 32);
		break;
	case HWT_PT_PWRE:
		p->u.pwre.state = r & 0xf;
		p->u.pwre.sub_state = (r >> 4) & 0xf;
		p->u.pwre.hw = (r >> 8) & 1;
		break;
	case HWT_PT_PWRX:
		p->u.pwrx.last = r & 0xf;
		p->u.pwrx.deepest = (r >> 4) & 0xf;
		p->u.pwrx.wake = (r >> 8) & 0xf;
		break;
	case HWT_PT_BBP:
		p->u.bbp.type = r & 0x1f;
		p->u.bbp.sz = (r >> 5) & 1;
		break;
	case HWT_PT_BIP:
		*bip = (r & 1) ? 4 : 8;
		p->size = (uint8_t)(1 + *bip);	/* the encoder's BIP size */
		p->u.bip.id = (r >> 1) & 0x1f;
		p->u.bip.value = *bip == 4 ? rnd(rs) >> 32 : rnd(rs);
		break;
	case HWT_PT_BEP:
		p->u.bep_ip = r & 1;
		break;
	case HWT_PT_CFE:
		p->u.cfe.type = r & 0x1f;
		p->u.cfe.ip = (r >> 5) & 1;
		p->u.cfe.vector = (uint8_t)(r >> 8);
		break;
	case HWT_PT_EVD:
		p->u.evd.type = r & 0x1f;
		p->u.evd.payload = rnd(rs);
		break;
	default:
		break;
	}
}

static void test_roundtrip_random(void **state)
{
	uint64_t rs = 12345;

	(void)state;
	for (unsigned type = HWT_PT_INVALID + 1; type < HWT_PT_NTYPES; type++) {
		for (int iter = 0; iter < 2000; iter++) {
			struct hwt_pt_packet in, out;
			uint8_t buf[HWT_PT_MAX_PACKET_SIZE + 8];
			uint8_t buf2[HWT_PT_MAX_PACKET_SIZE + 8];
			unsigned bip;
			int n, m;

			random_packet(&rs, type, &in, &bip);
			n = hwt_pt_encode(buf, buf + sizeof(buf), &in);
			if (n <= 0 || n > HWT_PT_MAX_PACKET_SIZE)
				fail_msg("%s #%d: encode returned %d",
					 hwt_pt_type_name(type), iter, n);
			memset(&out, 0xa5, sizeof(out));
			m = decode_exact(buf, (size_t)n, bip, &out);
			if (m != n)
				fail_msg("%s #%d: decode returned %d, want %d",
					 hwt_pt_type_name(type), iter, m, n);
			in.size = (uint8_t)n;
			check_packet(hwt_pt_type_name(type), &in, &out);

			/* And back: decode -> encode gives the same bytes. */
			m = hwt_pt_encode(buf2, buf2 + sizeof(buf2), &out);
			if (m != n || memcmp(buf, buf2, (size_t)n))
				fail_msg("%s #%d: re-encode differs",
					 hwt_pt_type_name(type), iter);

			/* Every proper prefix is -EOS. */
			for (int k = 0; k < n; k++)
				if (decode_exact(buf, (size_t)k, bip, &out) !=
				    -HWT_ERR_EOS)
					fail_msg("%s #%d: prefix %d not EOS",
						 hwt_pt_type_name(type), iter,
						 k);
		}
	}
}

/* TNT: every bit count and every pattern of TNT-8; TNT-64 edges. */
static void test_roundtrip_tnt_exhaustive(void **state)
{
	(void)state;
	for (unsigned bits = 1; bits <= 6; bits++) {
		for (uint64_t pl = 0; pl < (1ull << bits); pl++) {
			struct hwt_pt_packet in = { .type = HWT_PT_TNT8 }, out;
			uint8_t b;

			in.u.tnt.bits = (uint8_t)bits;
			in.u.tnt.payload = pl;
			assert_int_equal(hwt_pt_encode(&b, &b + 1, &in), 1);
			assert_int_equal(b, (uint8_t)((pl | 1u << bits) << 1));
			assert_int_equal(hwt_pt_decode(&b, &b + 1, 0, &out), 1);
			assert_int_equal(out.u.tnt.bits, bits);
			assert_int_equal(out.u.tnt.payload, pl);
		}
	}
	for (unsigned bits = 1; bits <= 47; bits++) {
		const uint64_t pls[] = { 0, 1, (1ull << bits) - 1,
					 0x5555555555555555ull &
					 ((1ull << bits) - 1) };

		for (size_t i = 0; i < 4; i++) {
			struct hwt_pt_packet in = { .type = HWT_PT_TNT64 }, out;
			uint8_t b[8];

			in.u.tnt.bits = (uint8_t)bits;
			in.u.tnt.payload = pls[i];
			assert_int_equal(hwt_pt_encode(b, b + 8, &in), 8);
			assert_int_equal(hwt_pt_decode(b, b + 8, 0, &out), 8);
			assert_int_equal(out.type, HWT_PT_TNT64);
			assert_int_equal(out.u.tnt.bits, bits);
			assert_int_equal(out.u.tnt.payload, pls[i]);
		}
	}
}

/* CYC: sizes step at 2^5, 2^12, 2^19, ... up to 2^61 - 1 (9 bytes). */
static void test_roundtrip_cyc_lengths(void **state)
{
	(void)state;
	for (unsigned bytes = 1; bytes <= 9; bytes++) {
		unsigned bits = 5 + 7 * (bytes - 1);
		const uint64_t vals[] = {
			bytes == 1 ? 0 : 1ull << (bits - 7),
			(bits >= 64 ? ~0ull : (1ull << bits)) - 1,
		};

		for (size_t i = 0; i < 2; i++) {
			struct hwt_pt_packet in = { .type = HWT_PT_CYC }, out;
			uint8_t b[HWT_PT_MAX_PACKET_SIZE];
			int n;

			in.u.cyc = vals[i];
			n = hwt_pt_encode(b, b + sizeof(b), &in);
			if (n != (int)bytes)
				fail_msg("cyc 0x%llx: %d bytes, want %u",
					 (unsigned long long)vals[i], n, bytes);
			assert_int_equal(decode_exact(b, (size_t)n, 0, &out),
					 n);
			assert_int_equal(out.u.cyc, vals[i]);
		}
	}
}

/* ------------------------------------------------------------------ */
/* Encoder rejections                                                  */
/* ------------------------------------------------------------------ */

static void expect_encode_error(const char *name,
				const struct hwt_pt_packet *p)
{
	uint8_t buf[64];
	int ret = hwt_pt_encode(buf, buf + sizeof(buf), p);

	if (ret != -HWT_ERR_INVALID && ret != -HWT_ERR_BAD_PACKET)
		fail_msg("%s: encode returned %d, want an error", name, ret);
}

static void test_encode_rejects(void **state)
{
	struct hwt_pt_packet p;

	(void)state;
#define REJECT(nm, ...)                                                     \
	do {                                                                \
		memset(&p, 0, sizeof(p));                                   \
		__VA_ARGS__;                                                \
		expect_encode_error(nm, &p);                                \
	} while (0)

	REJECT("invalid type", p.type = HWT_PT_INVALID);
	REJECT("type ntypes", p.type = HWT_PT_NTYPES);
	REJECT("tnt8 0 bits", p.type = HWT_PT_TNT8, p.u.tnt.bits = 0);
	REJECT("tnt8 7 bits", p.type = HWT_PT_TNT8, p.u.tnt.bits = 7);
	REJECT("tnt8 wide payload", p.type = HWT_PT_TNT8, p.u.tnt.bits = 2,
	       p.u.tnt.payload = 4);
	REJECT("tnt64 48 bits", p.type = HWT_PT_TNT64, p.u.tnt.bits = 48);
	REJECT("tnt64 0 bits", p.type = HWT_PT_TNT64, p.u.tnt.bits = 0);
	REJECT("tip ipc 5", p.type = HWT_PT_TIP, p.u.ip.ipc = 5);
	REJECT("fup ipc 7", p.type = HWT_PT_FUP, p.u.ip.ipc = 7);
	REJECT("tip upd16 wide", p.type = HWT_PT_TIP, p.u.ip.ipc = 1,
	       p.u.ip.ip = 0x10000);
	REJECT("tip sext48 wide", p.type = HWT_PT_TIP_PGE, p.u.ip.ipc = 3,
	       p.u.ip.ip = 0xffff800000000000ull);
	REJECT("tip suppressed with ip", p.type = HWT_PT_TIP_PGD,
	       p.u.ip.ipc = 0, p.u.ip.ip = 1);
	REJECT("pip unaligned", p.type = HWT_PT_PIP, p.u.pip.cr3 = 0x1010);
	REJECT("pip wide", p.type = HWT_PT_PIP, p.u.pip.cr3 = 1ull << 52);
	REJECT("mode.exec bit 3", p.type = HWT_PT_MODE_EXEC, p.u.exec = 8);
	REJECT("mode.tsx bit 2", p.type = HWT_PT_MODE_TSX, p.u.tsx = 4);
	REJECT("tsc 57 bits", p.type = HWT_PT_TSC, p.u.tsc = 1ull << 56);
	REJECT("tma fc 10 bits", p.type = HWT_PT_TMA, p.u.tma.fc = 0x200);
	REJECT("vmcs unaligned", p.type = HWT_PT_VMCS, p.u.vmcs = 0x1800);
	REJECT("vmcs wide", p.type = HWT_PT_VMCS, p.u.vmcs = 1ull << 52);
	REJECT("ptw plc 2", p.type = HWT_PT_PTW, p.u.ptw.plc = 2);
	REJECT("ptw 4 wide", p.type = HWT_PT_PTW, p.u.ptw.plc = 0,
	       p.u.ptw.payload = 1ull << 32);
	REJECT("pwre state 16", p.type = HWT_PT_PWRE, p.u.pwre.state = 16);
	REJECT("pwrx wake 16", p.type = HWT_PT_PWRX, p.u.pwrx.wake = 16);
	REJECT("bbp type 32", p.type = HWT_PT_BBP, p.u.bbp.type = 32);
	REJECT("bip no size", p.type = HWT_PT_BIP, p.size = 0);
	REJECT("bip id 32", p.type = HWT_PT_BIP, p.size = 5,
	       p.u.bip.id = 32);
	REJECT("bip 4 wide", p.type = HWT_PT_BIP, p.size = 5,
	       p.u.bip.value = 1ull << 32);
	REJECT("cfe type 32", p.type = HWT_PT_CFE, p.u.cfe.type = 32);
	REJECT("evd type 32", p.type = HWT_PT_EVD, p.u.evd.type = 32);
	/* A CYC payload of 62+ bits needs a 10-byte CYC, which decoders
	 * (libipt, hwt) reject as malformed: it cannot round-trip. */
	REJECT("cyc 2^61", p.type = HWT_PT_CYC, p.u.cyc = 1ull << 61);
	REJECT("cyc max", p.type = HWT_PT_CYC, p.u.cyc = ~0ull);
#undef REJECT
}

/* ------------------------------------------------------------------ */
/* Small API pieces                                                    */
/* ------------------------------------------------------------------ */

static void test_ipc_size(void **state)
{
	(void)state;
	assert_int_equal(hwt_pt_ipc_size(HWT_PT_IPC_SUPPRESSED), 0);
	assert_int_equal(hwt_pt_ipc_size(HWT_PT_IPC_UPDATE16), 2);
	assert_int_equal(hwt_pt_ipc_size(HWT_PT_IPC_UPDATE32), 4);
	assert_int_equal(hwt_pt_ipc_size(HWT_PT_IPC_SEXT48), 6);
	assert_int_equal(hwt_pt_ipc_size(HWT_PT_IPC_UPDATE48), 6);
	assert_int_equal(hwt_pt_ipc_size(HWT_PT_IPC_FULL), 8);
	assert_int_equal(hwt_pt_ipc_size(5), -HWT_ERR_BAD_PACKET);
	assert_int_equal(hwt_pt_ipc_size(7), -HWT_ERR_BAD_PACKET);
	assert_int_equal(hwt_pt_ipc_size(8), -HWT_ERR_BAD_PACKET);
	assert_int_equal(hwt_pt_ipc_size(~0u), -HWT_ERR_BAD_PACKET);
}

static void test_type_names(void **state)
{
	(void)state;
	assert_string_equal(hwt_pt_type_name(HWT_PT_PAD), "pad");
	assert_string_equal(hwt_pt_type_name(HWT_PT_PSB), "psb");
	assert_string_equal(hwt_pt_type_name(HWT_PT_PSBEND), "psbend");
	assert_string_equal(hwt_pt_type_name(HWT_PT_TNT8), "tnt.8");
	assert_string_equal(hwt_pt_type_name(HWT_PT_TNT64), "tnt.64");
	assert_string_equal(hwt_pt_type_name(HWT_PT_TIP), "tip");
	assert_string_equal(hwt_pt_type_name(HWT_PT_TIP_PGE), "tip.pge");
	assert_string_equal(hwt_pt_type_name(HWT_PT_TIP_PGD), "tip.pgd");
	assert_string_equal(hwt_pt_type_name(HWT_PT_FUP), "fup");
	assert_string_equal(hwt_pt_type_name(HWT_PT_MODE_EXEC), "mode.exec");
	assert_string_equal(hwt_pt_type_name(HWT_PT_MODE_TSX), "mode.tsx");
	/* Every type has its own non-empty name; out of range is not NULL. */
	for (unsigned a = 0; a < HWT_PT_NTYPES; a++) {
		const char *na = hwt_pt_type_name(a);

		assert_non_null(na);
		assert_true(na[0] != '\0');
		for (unsigned b = a + 1; b < HWT_PT_NTYPES; b++)
			if (!strcmp(na, hwt_pt_type_name(b)))
				fail_msg("types %u and %u share name %s", a, b,
					 na);
	}
	assert_non_null(hwt_pt_type_name(HWT_PT_NTYPES));
	assert_non_null(hwt_pt_type_name(~0u));
}

static void test_is_ip_packet(void **state)
{
	(void)state;
	for (unsigned t = 0; t < HWT_PT_NTYPES; t++)
		assert_int_equal(hwt_pt_is_ip_packet(t),
				 t == HWT_PT_TIP || t == HWT_PT_TIP_PGE ||
				 t == HWT_PT_TIP_PGD || t == HWT_PT_FUP);
}

/* A scan takes each packet that decodes and counts the bytes between. */
static void test_scan_next(void **state)
{
	/* A bad escape, a TSC, two bad escapes, a TNT-8, a TIP cut short by
	 * the end (its bytes read again as a TIP.PGE and a TNT-8). */
	const uint8_t b[] = { 0x02, 0x19, 1, 2, 3, 4, 5, 6, 7, 0x02, 0x02,
			      0x06, 0x6d, 0x11, 0x22 };
	const ptrdiff_t at[] = { 1, 11, 13, 14 };
	const unsigned type[] = { HWT_PT_TSC, HWT_PT_TNT8, HWT_PT_TIP_PGE,
				  HWT_PT_TNT8 };
	const uint8_t *end = b + sizeof(b), *pos = b;
	struct hwt_pt_packet pkt;
	uint64_t skipped = 0;
	size_t n = 0;

	(void)state;
	for (; (pos = hwt_pt_scan_next(pos, end, &pkt, &skipped));
	     pos += pkt.size, n++) {
		assert_true(n < 4);
		assert_int_equal(pos - b, at[n]);
		assert_int_equal(pkt.type, type[n]);
	}
	assert_int_equal(n, 4);
	assert_int_equal(skipped, 4);
	/* The TSC's value, not a byte of it read as a packet. */
	assert_non_null(hwt_pt_scan_next(b, end, &pkt, NULL));
	assert_int_equal(pkt.size, 8);
	assert_int_equal(pkt.u.tsc, 0x07060504030201ull);

	/* Nothing that decodes: every byte counted; none at all. */
	skipped = 0;
	assert_null(hwt_pt_scan_next(b, b + 1, &pkt, &skipped));
	assert_int_equal(skipped, 1);
	assert_null(hwt_pt_scan_next(end, end, &pkt, &skipped));
	assert_null(hwt_pt_scan_next(NULL, end, &pkt, &skipped));
	assert_int_equal(skipped, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors_cover_all_types),
		cmocka_unit_test(test_vectors_decode),
		cmocka_unit_test(test_vectors_encode),
		cmocka_unit_test(test_vectors_truncated),
		cmocka_unit_test(test_reserved_and_unknown),
		cmocka_unit_test(test_opcode_sweep),
		cmocka_unit_test(test_one_byte_opcode_map),
		cmocka_unit_test(test_reserved_bits_ignored),
		cmocka_unit_test(test_bip_needs_block),
		cmocka_unit_test(test_decode_bad_args),
		cmocka_unit_test(test_scan_next),
		cmocka_unit_test(test_roundtrip_random),
		cmocka_unit_test(test_roundtrip_tnt_exhaustive),
		cmocka_unit_test(test_roundtrip_cyc_lengths),
		cmocka_unit_test(test_encode_rejects),
		cmocka_unit_test(test_ipc_size),
		cmocka_unit_test(test_type_names),
		cmocka_unit_test(test_is_ip_packet),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Intel PT packet encoding: the exact inverse of packet.c. Used by tests,
 * benchmarks and software trace sources, so it rejects values that would
 * not survive the round trip instead of silently truncating them.
 */
#include <hwt/pt.h>

#include <string.h>

static void store_le(uint8_t *p, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++, v >>= 8)
		p[i] = (uint8_t)v;
}

static int fits(uint64_t v, unsigned bits)
{
	return bits >= 64 || !(v >> bits);
}

/* Write @n bytes: @hdr (up to 3 bytes) then @n - @nhdr payload bytes. */
static int emit(uint8_t *pos, const uint8_t *end, const uint8_t *hdr,
		unsigned nhdr, uint64_t payload, unsigned n)
{
	if (end - pos < (ptrdiff_t)n)
		return -HWT_ERR_EOS;
	memcpy(pos, hdr, nhdr);
	store_le(pos + nhdr, payload, n - nhdr);
	return (int)n;
}

static int encode_ip(uint8_t *pos, const uint8_t *end, uint8_t opc,
		     const struct hwt_pt_packet *pkt)
{
	int n = hwt_pt_ipc_size(pkt->u.ip.ipc);
	uint8_t hdr;

	if (n < 0)
		return n;
	if (!fits(pkt->u.ip.ip, 8u * (unsigned)n))
		return -HWT_ERR_INVALID;
	hdr = (uint8_t)(opc | pkt->u.ip.ipc << 5);
	return emit(pos, end, &hdr, 1, pkt->u.ip.ip, 1u + (unsigned)n);
}

static int encode_cyc(uint8_t *pos, const uint8_t *end, uint64_t v)
{
	uint8_t buf[HWT_PT_MAX_PACKET_SIZE];
	unsigned n = 0;

	/* The decoder (like libipt) takes at most 8 extension bytes. */
	if (!fits(v, 61))
		return -HWT_ERR_INVALID;
	buf[n] = (uint8_t)(((v & 0x1f) << 3) | 0x3);
	v >>= 5;
	while (v) {
		buf[n] |= n == 0 ? 0x4 : 0x1;
		n++;
		buf[n] = (uint8_t)((v & 0x7f) << 1);
		v >>= 7;
	}
	n++;
	if (end - pos < (ptrdiff_t)n)
		return -HWT_ERR_EOS;
	memcpy(pos, buf, n);
	return (int)n;
}

int hwt_pt_encode(uint8_t *pos, const uint8_t *end,
		  const struct hwt_pt_packet *pkt)
{
	uint8_t h[3] = { 0x02, 0, 0 };

	if (!pos || !end || !pkt)
		return -HWT_ERR_INVALID;

	switch (pkt->type) {
	case HWT_PT_PAD:
		h[0] = 0;
		return emit(pos, end, h, 1, 0, 1);
	case HWT_PT_PSB:
		if (end - pos < HWT_PT_PSB_SIZE)
			return -HWT_ERR_EOS;
		for (int i = 0; i < HWT_PT_PSB_SIZE; i += 2) {
			pos[i] = 0x02;
			pos[i + 1] = 0x82;
		}
		return HWT_PT_PSB_SIZE;
	case HWT_PT_PSBEND:
		h[1] = 0x23;
		return emit(pos, end, h, 2, 0, 2);
	case HWT_PT_OVF:
		h[1] = 0xf3;
		return emit(pos, end, h, 2, 0, 2);
	case HWT_PT_STOP:
		h[1] = 0x83;
		return emit(pos, end, h, 2, 0, 2);
	case HWT_PT_TNT8:
		if (pkt->u.tnt.bits < 1 || pkt->u.tnt.bits > 6 ||
		    !fits(pkt->u.tnt.payload, pkt->u.tnt.bits))
			return -HWT_ERR_INVALID;
		h[0] = (uint8_t)((pkt->u.tnt.payload |
				  1u << pkt->u.tnt.bits) << 1);
		return emit(pos, end, h, 1, 0, 1);
	case HWT_PT_TNT64:
		if (pkt->u.tnt.bits < 1 || pkt->u.tnt.bits > 47 ||
		    !fits(pkt->u.tnt.payload, pkt->u.tnt.bits))
			return -HWT_ERR_INVALID;
		h[1] = 0xa3;
		return emit(pos, end, h, 2,
			    pkt->u.tnt.payload | 1ull << pkt->u.tnt.bits, 8);
	case HWT_PT_TIP:
		return encode_ip(pos, end, 0x0d, pkt);
	case HWT_PT_TIP_PGE:
		return encode_ip(pos, end, 0x11, pkt);
	case HWT_PT_TIP_PGD:
		return encode_ip(pos, end, 0x01, pkt);
	case HWT_PT_FUP:
		return encode_ip(pos, end, 0x1d, pkt);
	case HWT_PT_PIP:
		if ((pkt->u.pip.cr3 & 0x1f) || !fits(pkt->u.pip.cr3, 52) ||
		    pkt->u.pip.nr > 1)
			return -HWT_ERR_INVALID;
		h[1] = 0x43;
		return emit(pos, end, h, 2,
			    (pkt->u.pip.cr3 >> 5) << 1 | pkt->u.pip.nr, 8);
	case HWT_PT_MODE_EXEC:
	case HWT_PT_MODE_TSX: {
		int tsx = pkt->type == HWT_PT_MODE_TSX;
		uint8_t bits = tsx ? pkt->u.tsx : pkt->u.exec;

		if (bits & ~(tsx ? 0x3 : 0x7))
			return -HWT_ERR_INVALID;
		h[0] = 0x99;
		h[1] = (uint8_t)((tsx ? 0x20 : 0) | bits);
		return emit(pos, end, h, 2, 0, 2);
	}
	case HWT_PT_TSC:
		if (!fits(pkt->u.tsc, 56))
			return -HWT_ERR_INVALID;
		h[0] = 0x19;
		return emit(pos, end, h, 1, pkt->u.tsc, 8);
	case HWT_PT_MTC:
		h[0] = 0x59;
		return emit(pos, end, h, 1, pkt->u.mtc, 2);
	case HWT_PT_TMA:
		if (pkt->u.tma.fc > 0x1ff)
			return -HWT_ERR_INVALID;
		h[1] = 0x73;
		return emit(pos, end, h, 2,
			    pkt->u.tma.ctc |
			    (uint64_t)(pkt->u.tma.fc & 0xff) << 24 |
			    (uint64_t)(pkt->u.tma.fc >> 8) << 32, 7);
	case HWT_PT_CYC:
		return encode_cyc(pos, end, pkt->u.cyc);
	case HWT_PT_CBR:
		h[1] = 0x03;
		return emit(pos, end, h, 2, pkt->u.cbr, 4);
	case HWT_PT_VMCS:
		if ((pkt->u.vmcs & 0xfff) || !fits(pkt->u.vmcs, 52))
			return -HWT_ERR_INVALID;
		h[1] = 0xc8;
		return emit(pos, end, h, 2, pkt->u.vmcs >> 12, 7);
	case HWT_PT_MNT:
		h[1] = 0xc3;
		h[2] = 0x88;
		return emit(pos, end, h, 3, pkt->u.mnt, 11);
	case HWT_PT_PTW:
		if (pkt->u.ptw.plc > 1 || pkt->u.ptw.ip > 1 ||
		    (pkt->u.ptw.plc == 0 && !fits(pkt->u.ptw.payload, 32)))
			return -HWT_ERR_INVALID;
		h[1] = (uint8_t)(0x12 | pkt->u.ptw.plc << 5 | pkt->u.ptw.ip << 7);
		return emit(pos, end, h, 2, pkt->u.ptw.payload,
			    pkt->u.ptw.plc ? 10 : 6);
	case HWT_PT_EXSTOP:
		if (pkt->u.exstop_ip > 1)
			return -HWT_ERR_INVALID;
		h[1] = (uint8_t)(0x62 | pkt->u.exstop_ip << 7);
		return emit(pos, end, h, 2, 0, 2);
	case HWT_PT_MWAIT:
		h[1] = 0xc2;
		return emit(pos, end, h, 2,
			    pkt->u.mwait.hints |
			    (uint64_t)pkt->u.mwait.ext << 32, 10);
	case HWT_PT_PWRE:
		if (pkt->u.pwre.state > 0xf || pkt->u.pwre.sub_state > 0xf ||
		    pkt->u.pwre.hw > 1)
			return -HWT_ERR_INVALID;
		h[1] = 0x22;
		return emit(pos, end, h, 2,
			    (uint64_t)pkt->u.pwre.hw << 3 |
			    (uint64_t)(pkt->u.pwre.state << 4 |
				       pkt->u.pwre.sub_state) << 8, 4);
	case HWT_PT_PWRX:
		if (pkt->u.pwrx.last > 0xf || pkt->u.pwrx.deepest > 0xf ||
		    pkt->u.pwrx.wake > 0xf)
			return -HWT_ERR_INVALID;
		h[1] = 0xa2;
		return emit(pos, end, h, 2,
			    (uint64_t)(pkt->u.pwrx.last << 4 |
				       pkt->u.pwrx.deepest) |
			    (uint64_t)pkt->u.pwrx.wake << 8, 7);
	case HWT_PT_BBP:
		if (pkt->u.bbp.type > 0x1f || pkt->u.bbp.sz > 1)
			return -HWT_ERR_INVALID;
		h[1] = 0x63;
		h[2] = (uint8_t)(pkt->u.bbp.sz << 7 | pkt->u.bbp.type);
		return emit(pos, end, h, 3, 0, 3);
	case HWT_PT_BIP: {
		/* The payload size is the enclosing BBP's: taken from size. */
		unsigned n = pkt->size == 5 ? 4 : pkt->size == 9 ? 8 : 0;

		if (!n || pkt->u.bip.id > 0x1f ||
		    !fits(pkt->u.bip.value, 8 * n))
			return -HWT_ERR_INVALID;
		h[0] = (uint8_t)(pkt->u.bip.id << 3 | 0x4);
		return emit(pos, end, h, 1, pkt->u.bip.value, 1 + n);
	}
	case HWT_PT_BEP:
		if (pkt->u.bep_ip > 1)
			return -HWT_ERR_INVALID;
		h[1] = (uint8_t)(0x33 | pkt->u.bep_ip << 7);
		return emit(pos, end, h, 2, 0, 2);
	case HWT_PT_CFE:
		if (pkt->u.cfe.type > 0x1f || pkt->u.cfe.ip > 1)
			return -HWT_ERR_INVALID;
		h[1] = 0x13;
		return emit(pos, end, h, 2,
			    (uint64_t)(pkt->u.cfe.ip << 7 | pkt->u.cfe.type) |
			    (uint64_t)pkt->u.cfe.vector << 8, 4);
	case HWT_PT_EVD:
		if (pkt->u.evd.type > 0x1f)
			return -HWT_ERR_INVALID;
		h[1] = 0x53;
		h[2] = pkt->u.evd.type;
		return emit(pos, end, h, 3, pkt->u.evd.payload, 11);
	default:
		return -HWT_ERR_INVALID;
	}
}

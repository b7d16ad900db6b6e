/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Intel PT packet decoding: where a packet is parsed.
 *
 * The first byte selects the packet (one-byte opcodes) or the 0x02 escape
 * (two-byte opcodes, and 0x02 0xc3 for the three-byte MNT). The order of the
 * tests below follows packet frequency in real traces: TNT-8 and the IP
 * packets dominate, PAD and timing packets follow.
 *
 * Reserved encodings are rejected the way libipt rejects them, so that hwt
 * and libipt agree on what a valid stream is.
 */
#include <hwt/pt.h>

#include <stdlib.h>
#include <string.h>

#include "pt/packet_internal.h"

static const uint8_t psb_pattern[HWT_PT_PSB_SIZE] = {
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
};

int hwt_pt_ipc_size(unsigned ipc)
{
	static const int8_t size[8] = { 0, 2, 4, 6, 6, -1, 8, -1 };

	if (ipc > 7 || size[ipc] < 0)
		return -HWT_ERR_BAD_PACKET;
	return size[ipc];
}

/* Little-endian load of @n (<= 8) bytes; x86 is little-endian, and a
 * fixed-size memcpy compiles to a single load. */
static inline uint64_t load_le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	switch (n) {
	case 1: return p[0];
	case 2: { uint16_t x; memcpy(&x, p, 2); return x; }
	case 4: { uint32_t x; memcpy(&x, p, 4); return x; }
	case 8: memcpy(&v, p, 8); return v;
	default: memcpy(&v, p, n & 7); return v;	/* 3, 5, 6 or 7 */
	}
#else
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
#endif
}

/* Index of the highest set bit; @x != 0. */
static inline unsigned msb(uint64_t x)
{
	return 63u - (unsigned)__builtin_clzll(x);
}

static inline int need(const uint8_t *pos, const uint8_t *end, size_t n)
{
	return (size_t)(end - pos) >= n;
}

static int decode_ip(const uint8_t *pos, const uint8_t *end, uint8_t type,
		     struct hwt_pt_packet *pkt)
{
	unsigned ipc = pos[0] >> 5;
	int n = hwt_pt_ipc_size(ipc);

	if (n < 0)
		return n;
	if (!need(pos, end, 1 + (size_t)n))
		return -HWT_ERR_EOS;
	pkt->type = type;
	pkt->size = (uint8_t)(1 + n);
	pkt->u.ip.ipc = (uint8_t)ipc;
	pkt->u.ip.ip = n ? load_le(pos + 1, (unsigned)n) : 0;
	return 1 + n;
}

static int decode_cyc(const uint8_t *pos, const uint8_t *end,
		      struct hwt_pt_packet *pkt)
{
	const uint8_t *p = pos;
	uint64_t value = *p >> 3;
	unsigned shift = 5;
	int more = *p & 0x4;

	p++;
	while (more) {
		uint64_t bits;

		if (p >= end)
			return -HWT_ERR_EOS;
		bits = *p >> 1;
		more = *p & 1;
		p++;
		/* libipt's bound: more than 64 payload bits is malformed. */
		if (shift + 7 > 64)
			return -HWT_ERR_BAD_PACKET;
		value |= bits << shift;
		shift += 7;
	}
	pkt->type = HWT_PT_CYC;
	pkt->size = (uint8_t)(p - pos);
	pkt->u.cyc = value;
	return (int)(p - pos);
}

/* One-byte opcodes with bit 0 set: CYC, TIP family, TSC, MTC, MODE. */
static int decode_odd(const uint8_t *pos, const uint8_t *end,
		      struct hwt_pt_packet *pkt)
{
	uint8_t b = pos[0];

	if ((b & 3) == 3)
		return decode_cyc(pos, end, pkt);

	switch (b & 0x1f) {
	case 0x0d:
		return decode_ip(pos, end, HWT_PT_TIP, pkt);
	case 0x11:
		return decode_ip(pos, end, HWT_PT_TIP_PGE, pkt);
	case 0x01:
		return decode_ip(pos, end, HWT_PT_TIP_PGD, pkt);
	case 0x1d:
		return decode_ip(pos, end, HWT_PT_FUP, pkt);
	case 0x19:
		break;
	default:
		return -HWT_ERR_BAD_OPC;
	}

	switch (b) {
	case 0x19:	/* TSC */
		if (!need(pos, end, 8))
			return -HWT_ERR_EOS;
		pkt->type = HWT_PT_TSC;
		pkt->size = 8;
		pkt->u.tsc = load_le(pos + 1, 7);
		return 8;
	case 0x59:	/* MTC */
		if (!need(pos, end, 2))
			return -HWT_ERR_EOS;
		pkt->type = HWT_PT_MTC;
		pkt->size = 2;
		pkt->u.mtc = pos[1];
		return 2;
	case 0x99:	/* MODE */
		if (!need(pos, end, 2))
			return -HWT_ERR_EOS;
		switch (pos[1] >> 5) {
		case 0:
			pkt->type = HWT_PT_MODE_EXEC;
			pkt->u.exec = pos[1] & 0x7;
			break;
		case 1:
			pkt->type = HWT_PT_MODE_TSX;
			pkt->u.tsx = pos[1] & 0x3;
			break;
		default:
			return -HWT_ERR_BAD_PACKET;
		}
		pkt->size = 2;
		return 2;
	default:
		return -HWT_ERR_BAD_OPC;
	}
}

static int fixed(struct hwt_pt_packet *pkt, uint8_t type, int size)
{
	pkt->type = type;
	pkt->size = (uint8_t)size;
	return size;
}

/* Two-byte opcodes: 0x02 followed by the extended opcode. */
static int decode_ext(const uint8_t *pos, const uint8_t *end,
		      struct hwt_pt_packet *pkt)
{
	uint8_t b;

	if (!need(pos, end, 2))
		return -HWT_ERR_EOS;
	b = pos[1];

	/* PTW's extended opcode carries its payload size and IP bit. */
	if ((b & 0x1f) == 0x12) {
		unsigned plc = (b >> 5) & 3;
		unsigned n = plc == 0 ? 4 : plc == 1 ? 8 : 0;

		if (!n)
			return -HWT_ERR_BAD_PACKET;
		if (!need(pos, end, 2 + n))
			return -HWT_ERR_EOS;
		pkt->u.ptw.plc = (uint8_t)plc;
		pkt->u.ptw.ip = b >> 7;
		pkt->u.ptw.payload = load_le(pos + 2, n);
		return fixed(pkt, HWT_PT_PTW, (int)(2 + n));
	}

	switch (b) {
	case 0x82:	/* PSB */
		if (!need(pos, end, HWT_PT_PSB_SIZE))
			return -HWT_ERR_EOS;
		if (memcmp(pos, psb_pattern, HWT_PT_PSB_SIZE))
			return -HWT_ERR_BAD_PACKET;
		return fixed(pkt, HWT_PT_PSB, HWT_PT_PSB_SIZE);
	case 0x23:
		return fixed(pkt, HWT_PT_PSBEND, 2);
	case 0xf3:
		return fixed(pkt, HWT_PT_OVF, 2);
	case 0x83:
		return fixed(pkt, HWT_PT_STOP, 2);
	case 0xa3: {	/* TNT-64 */
		uint64_t payload;

		if (!need(pos, end, 8))
			return -HWT_ERR_EOS;
		payload = load_le(pos + 2, 6);
		/* No stop bit, or only a stop bit: libipt rejects both. */
		if (payload <= 1)
			return -HWT_ERR_BAD_PACKET;
		pkt->u.tnt.bits = (uint8_t)msb(payload);
		pkt->u.tnt.payload = payload & ~(1ull << pkt->u.tnt.bits);
		return fixed(pkt, HWT_PT_TNT64, 8);
	}
	case 0x43: {	/* PIP */
		uint64_t payload;

		if (!need(pos, end, 8))
			return -HWT_ERR_EOS;
		payload = load_le(pos + 2, 6);
		pkt->u.pip.nr = payload & 1;
		pkt->u.pip.cr3 = (payload >> 1) << 5;
		return fixed(pkt, HWT_PT_PIP, 8);
	}
	case 0x03:	/* CBR */
		if (!need(pos, end, 4))
			return -HWT_ERR_EOS;
		pkt->u.cbr = pos[2];
		return fixed(pkt, HWT_PT_CBR, 4);
	case 0x73:	/* TMA */
		if (!need(pos, end, 7))
			return -HWT_ERR_EOS;
		if (pos[4] || (pos[6] & 0xfe))
			return -HWT_ERR_BAD_PACKET;
		pkt->u.tma.ctc = (uint16_t)load_le(pos + 2, 2);
		pkt->u.tma.fc = (uint16_t)(pos[5] | (pos[6] & 1) << 8);
		return fixed(pkt, HWT_PT_TMA, 7);
	case 0xc8:	/* VMCS */
		if (!need(pos, end, 7))
			return -HWT_ERR_EOS;
		pkt->u.vmcs = load_le(pos + 2, 5) << 12;
		return fixed(pkt, HWT_PT_VMCS, 7);
	case 0xc3:	/* EXT2: MNT is the only one defined */
		if (!need(pos, end, 3))
			return -HWT_ERR_EOS;
		if (pos[2] != 0x88)
			return -HWT_ERR_BAD_OPC;
		if (!need(pos, end, 11))
			return -HWT_ERR_EOS;
		pkt->u.mnt = load_le(pos + 3, 8);
		return fixed(pkt, HWT_PT_MNT, 11);
	case 0x62:
	case 0xe2:	/* EXSTOP */
		pkt->u.exstop_ip = b >> 7;
		return fixed(pkt, HWT_PT_EXSTOP, 2);
	case 0xc2:	/* MWAIT */
		if (!need(pos, end, 10))
			return -HWT_ERR_EOS;
		pkt->u.mwait.hints = (uint32_t)load_le(pos + 2, 4);
		pkt->u.mwait.ext = (uint32_t)load_le(pos + 6, 4);
		return fixed(pkt, HWT_PT_MWAIT, 10);
	case 0x22:	/* PWRE: bit positions as libipt has them */
		if (!need(pos, end, 4))
			return -HWT_ERR_EOS;
		pkt->u.pwre.hw = (pos[2] >> 3) & 1;
		pkt->u.pwre.sub_state = pos[3] & 0xf;
		pkt->u.pwre.state = pos[3] >> 4;
		return fixed(pkt, HWT_PT_PWRE, 4);
	case 0xa2:	/* PWRX */
		if (!need(pos, end, 7))
			return -HWT_ERR_EOS;
		pkt->u.pwrx.deepest = pos[2] & 0xf;
		pkt->u.pwrx.last = pos[2] >> 4;
		pkt->u.pwrx.wake = pos[3] & 0xf;
		return fixed(pkt, HWT_PT_PWRX, 7);
	case 0x63:	/* BBP */
		if (!need(pos, end, 3))
			return -HWT_ERR_EOS;
		pkt->u.bbp.sz = pos[2] >> 7;
		pkt->u.bbp.type = pos[2] & 0x1f;
		return fixed(pkt, HWT_PT_BBP, 3);
	case 0x33:
	case 0xb3:	/* BEP */
		pkt->u.bep_ip = b >> 7;
		return fixed(pkt, HWT_PT_BEP, 2);
	case 0x13:	/* CFE */
		if (!need(pos, end, 4))
			return -HWT_ERR_EOS;
		pkt->u.cfe.ip = pos[2] >> 7;
		pkt->u.cfe.type = pos[2] & 0x1f;
		pkt->u.cfe.vector = pos[3];
		return fixed(pkt, HWT_PT_CFE, 4);
	case 0x53:	/* EVD */
		if (!need(pos, end, 11))
			return -HWT_ERR_EOS;
		pkt->u.evd.type = pos[2] & 0x1f;
		pkt->u.evd.payload = load_le(pos + 3, 8);
		return fixed(pkt, HWT_PT_EVD, 11);
	default:
		return -HWT_ERR_BAD_OPC;
	}
}

static inline int decode_one(const uint8_t *pos, const uint8_t *end,
			     unsigned bip_size, struct hwt_pt_packet *pkt)
{
	uint8_t b = pos[0];

	if (b & 1)
		return decode_odd(pos, end, pkt);

	/* Even first byte: TNT-8, or PAD/escape, or BIP inside a block. */
	if (b > 2) {
		if (bip_size && (b & 7) == 4) {
			if (!need(pos, end, 1 + (size_t)bip_size))
				return -HWT_ERR_EOS;
			pkt->u.bip.id = b >> 3;
			pkt->u.bip.value = load_le(pos + 1, bip_size);
			return fixed(pkt, HWT_PT_BIP, (int)(1 + bip_size));
		}
		pkt->u.tnt.bits = (uint8_t)(msb(b) - 1);
		pkt->u.tnt.payload = (b >> 1) & ~(1u << pkt->u.tnt.bits);
		return fixed(pkt, HWT_PT_TNT8, 1);
	}
	if (b == 0)
		return fixed(pkt, HWT_PT_PAD, 1);
	return decode_ext(pos, end, pkt);
}

int hwt_pt_decode(const uint8_t *pos, const uint8_t *end, unsigned bip_size,
		  struct hwt_pt_packet *pkt)
{
	if (!pos || !end || !pkt || (bip_size && bip_size != 4 && bip_size != 8))
		return -HWT_ERR_INVALID;
	if (pos >= end)
		return -HWT_ERR_EOS;
	return decode_one(pos, end, bip_size, pkt);
}

const uint8_t *hwt_pt_scan_next(const uint8_t *pos, const uint8_t *end,
				struct hwt_pt_packet *pkt, uint64_t *skipped)
{
	for (; pos && pos < end; pos++) {
		if (decode_one(pos, end, 0, pkt) > 0)
			return pos;
		if (skipped)
			++*skipped;
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* The decoder object                                                  */
/* ------------------------------------------------------------------ */

struct hwt_pkt_decoder {
	const uint8_t *begin, *end;
	const uint8_t *pos;	/* NULL until synchronised */
	const uint8_t *sync;	/* last sync point */
	unsigned bip_size;	/* inside a BBP..BEP block: 4 or 8 */
};

struct hwt_pkt_decoder *hwt_pkt_decoder_new(const uint8_t *buf, size_t size)
{
	struct hwt_pkt_decoder *d;

	if (!buf && size)
		return NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->begin = buf;
	d->end = buf + size;
	return d;
}

void hwt_pkt_decoder_delete(struct hwt_pkt_decoder *d)
{
	free(d);
}

/*
 * A PSB is the last 16 bytes of a run of 02 82 pairs, as in libipt's
 * pt_find_psb(): the packets before a PSB may end in 02 82 themselves
 * (MTC with CTC 0x02, then TNT-8 0x82), and the first match of the
 * pattern would then start inside them.
 */
static int psb_ends_run(const uint8_t *p, const uint8_t *end)
{
	return end - p < HWT_PT_PSB_SIZE + 2 || p[HWT_PT_PSB_SIZE] != 0x02 ||
	       p[HWT_PT_PSB_SIZE + 1] != 0x82;
}

const uint8_t *hwt_pt_find_psb(const uint8_t *from, const uint8_t *end)
{
	const uint8_t *p;

	if (from >= end)
		return NULL;
	p = memmem(from, (size_t)(end - from), psb_pattern, HWT_PT_PSB_SIZE);
	if (!p)
		return NULL;
	while (!psb_ends_run(p, end))
		p += 2;
	return p;
}

const uint8_t *hwt_pt_find_psb_backward(const uint8_t *begin,
					const uint8_t *before,
					const uint8_t *end)
{
	const uint8_t *p = before;

	/* A PSB starts strictly before @before and ends inside the buffer. */
	while (p > begin) {
		p--;
		if (*p == 0x02 && end - p >= HWT_PT_PSB_SIZE &&
		    !memcmp(p, psb_pattern, HWT_PT_PSB_SIZE) &&
		    psb_ends_run(p, end))
			return p;
	}
	return NULL;
}

static void set_sync(struct hwt_pkt_decoder *d, const uint8_t *psb)
{
	d->pos = psb;
	d->sync = psb;
	d->bip_size = 0;
}

int hwt_pkt_sync_forward(struct hwt_pkt_decoder *d)
{
	const uint8_t *from, *psb;

	if (!d)
		return -HWT_ERR_INVALID;
	from = d->pos ? d->pos : d->begin;
	/*
	 * As libipt: standing on the sync point, look from the byte after
	 * it (a sync_set point need not be a PSB, and one may start right
	 * after it); else from up to 15 bytes back, to find a PSB that the
	 * packet before (cut short, or misdecoded garbage) ran into.
	 */
	if (d->sync && from == d->sync) {
		if (from == d->end)
			return -HWT_ERR_EOS;
		from++;
	} else {
		from -= from - d->begin < HWT_PT_PSB_SIZE ?
			from - d->begin : HWT_PT_PSB_SIZE - 1;
	}
	psb = hwt_pt_find_psb(from, d->end);
	if (!psb)
		return -HWT_ERR_EOS;
	set_sync(d, psb);
	return 0;
}

int hwt_pkt_sync_backward(struct hwt_pkt_decoder *d)
{
	const uint8_t *psb;

	if (!d)
		return -HWT_ERR_INVALID;
	psb = hwt_pt_find_psb_backward(d->begin, d->pos ? d->pos : d->end,
				       d->end);
	if (!psb)
		return -HWT_ERR_EOS;
	set_sync(d, psb);
	return 0;
}

int hwt_pkt_sync_set(struct hwt_pkt_decoder *d, uint64_t offset)
{
	if (!d)
		return -HWT_ERR_INVALID;
	if (offset > (uint64_t)(d->end - d->begin))
		return -HWT_ERR_EOS;
	d->pos = d->begin + offset;
	d->sync = d->pos;
	d->bip_size = 0;
	return 0;
}

int hwt_pkt_get_offset(const struct hwt_pkt_decoder *d, uint64_t *offset)
{
	if (!d || !offset)
		return -HWT_ERR_INVALID;
	if (!d->pos)
		return -HWT_ERR_NOSYNC;
	*offset = (uint64_t)(d->pos - d->begin);
	return 0;
}

int hwt_pkt_get_sync_offset(const struct hwt_pkt_decoder *d, uint64_t *offset)
{
	if (!d || !offset)
		return -HWT_ERR_INVALID;
	if (!d->sync)
		return -HWT_ERR_NOSYNC;
	*offset = (uint64_t)(d->sync - d->begin);
	return 0;
}

int hwt_pkt_next(struct hwt_pkt_decoder *d, struct hwt_pt_packet *pkt)
{
	int size;

	if (!d || !pkt)
		return -HWT_ERR_INVALID;
	if (!d->pos)
		return -HWT_ERR_NOSYNC;
	if (d->pos >= d->end)
		return 0;
	size = decode_one(d->pos, d->end, d->bip_size, pkt);
	if (size < 0)
		return size;
	d->pos += size;

	switch (pkt->type) {
	case HWT_PT_BBP:
		d->bip_size = pkt->u.bbp.sz ? 4 : 8;
		break;
	case HWT_PT_BEP:
	case HWT_PT_OVF:
		d->bip_size = 0;
		break;
	default:
		break;
	}
	return size;
}

int hwt_pkt_next_batch(struct hwt_pkt_decoder *d, struct hwt_pt_packet *pkts,
		       unsigned max, unsigned *count)
{
	const uint8_t *pos, *end;
	unsigned n = 0;
	int size = 0;

	if (!d || !pkts || !count)
		return -HWT_ERR_INVALID;
	*count = 0;
	if (!d->pos)
		return -HWT_ERR_NOSYNC;
	pos = d->pos;
	end = d->end;
	while (n < max && pos < end) {
		struct hwt_pt_packet *p = &pkts[n];

		size = decode_one(pos, end, d->bip_size, p);
		if (size < 0)
			break;
		pos += size;
		n++;
		if (__builtin_expect(p->type == HWT_PT_BBP, 0))
			d->bip_size = p->u.bbp.sz ? 4 : 8;
		else if (__builtin_expect(p->type == HWT_PT_BEP ||
					  p->type == HWT_PT_OVF, 0))
			d->bip_size = 0;
	}
	d->pos = pos;
	*count = n;
	return size < 0 ? size : 0;
}

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target for the packet layer. Besides hunting crashes (built
 * with ASan/UBSan), it checks properties and abort()s when one fails:
 *
 *  1. Stateless decode at every offset: a decoded packet fits the buffer,
 *     its size is consistent, every proper prefix of it is -HWT_ERR_EOS, and
 *     hwt_pt_encode() reproduces the input bytes exactly, except for bits
 *     the decoder deliberately ignores (see canonical()).
 *  2. The decoder object (sync forward, decode all, resync after errors)
 *     returns exactly the stateless decodes, errors leave the position on
 *     the offending packet, resync makes progress, and the batch interface
 *     gives the same packets and errors as hwt_pkt_next().
 *  3. Last-IP: expansion matches a reference, and hwt_pt_ipc_choose()
 *     round-trips and is never bigger than the compression the trace used.
 *  4. sync_forward and sync_backward enumerate the same PSBs; sync_set
 *     anywhere decodes what the stateless decoder sees there.
 */
#include <hwt/pt.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * The bytes hwt_pt_encode() must produce for the packet decoded from
 * @in (@n bytes). Reserved bits that the decoder ignores, as libipt does,
 * cannot survive the round trip (the encoder writes zeros); neither can
 * the needless zero extension bytes of a non-minimal CYC. Everything else
 * must be reproduced bit for bit. Returns the canonical size.
 */
static unsigned canonical(const uint8_t *in, unsigned n,
			  const struct hwt_pt_packet *pkt, uint8_t *out)
{
	memcpy(out, in, n);
	switch (pkt->type) {
	case HWT_PT_MODE_EXEC:
		out[1] &= 0x07;		/* bits 4:3 reserved */
		break;
	case HWT_PT_MODE_TSX:
		out[1] &= 0x23;		/* bits 4:2 reserved */
		break;
	case HWT_PT_CBR:
		out[3] = 0;		/* reserved byte */
		break;
	case HWT_PT_PWRE:
		out[2] &= 0x08;		/* libipt's HW bit only */
		break;
	case HWT_PT_PWRX:
		out[3] &= 0x0f;		/* wake reason only */
		out[4] = out[5] = out[6] = 0;
		break;
	case HWT_PT_BBP:
	case HWT_PT_CFE:
		out[2] &= 0x9f;		/* bits 6:5 reserved */
		break;
	case HWT_PT_EVD:
		out[2] &= 0x1f;		/* bits 7:5 reserved */
		break;
	case HWT_PT_CYC: {
		/* Drop trailing bytes without payload bits. */
		unsigned last = 0;

		for (unsigned i = 1; i < n; i++)
			if (in[i] >> 1)
				last = i;
		if (last == 0)
			out[0] &= (uint8_t)~0x4;
		else
			out[last] &= (uint8_t)~0x1;
		return last + 1;
	}
	default:
		break;
	}
	return n;
}

/* (1) for one decoded packet at @pos (with @avail bytes available). */
static void check_packet(const uint8_t *pos, size_t avail, unsigned bip,
			 const struct hwt_pt_packet *pkt, int ret,
			 uint8_t *tail, unsigned pick)
{
	uint8_t want[HWT_PT_MAX_PACKET_SIZE], got[HWT_PT_MAX_PACKET_SIZE + 8];
	struct hwt_pt_packet again;
	unsigned n;
	int m;

	CHECK(ret > 0 && ret <= HWT_PT_MAX_PACKET_SIZE);
	CHECK((size_t)ret <= avail);
	CHECK(pkt->size == ret);
	CHECK(pkt->type > HWT_PT_INVALID && pkt->type < HWT_PT_NTYPES);
	CHECK((pkt->type == HWT_PT_BIP) == (bip && ret == (int)bip + 1 &&
					    (pos[0] & 7) == 4));

	/* Encode reproduces the input (modulo ignored bits). */
	n = canonical(pos, (unsigned)ret, pkt, want);
	m = hwt_pt_encode(got, got + sizeof(got), pkt);
	if (m != (int)n || memcmp(got, want, n)) {
		fprintf(stderr, "round trip failed for %s (%d bytes, encoded"
			" %d):", hwt_pt_type_name(pkt->type), ret, m);
		for (int i = 0; i < ret; i++)
			fprintf(stderr, " %02x", pos[i]);
		fprintf(stderr, "\n");
		abort();
	}
	/* The canonical form decodes to itself. */
	CHECK(hwt_pt_decode(got, got + m, bip, &again) == m);
	CHECK(again.type == pkt->type);

	/* Proper prefixes are -EOS: placed at the very end of a heap block
	 * so that ASan sees any read past @end. Checking all of them makes
	 * long inputs much slower; the longest prefix and one picked by
	 * @pick cover them over a run. */
	for (int i = 0; i < 2; i++) {
		int k = i ? (int)(pick % (unsigned)ret) : ret - 1;
		uint8_t *p = tail + HWT_PT_MAX_PACKET_SIZE - k;

		memcpy(p, pos, (size_t)k);
		CHECK(hwt_pt_decode(p, p + k, bip, &again) == -HWT_ERR_EOS);
	}
}

static int is_decode_error(int ret)
{
	return ret == -HWT_ERR_EOS || ret == -HWT_ERR_BAD_OPC ||
	       ret == -HWT_ERR_BAD_PACKET;
}

/*
 * (1): every offset, outside blocks and, for BIP-like bytes, inside. Past
 * the first 512 bytes only every 8th offset (the phase taken from the
 * input), which keeps long inputs ~4x faster; mutations move bytes
 * around, so all offsets get their turn over a run, and the packets of
 * the decoded stream are checked in full by object_pass() anyway.
 */
static void stateless_pass(const uint8_t *data, size_t size, uint8_t *tail)
{
	size_t phase = size ? data[0] % 8 : 0;

	for (size_t i = 0; i < size; i++) {
		if (i >= 512 && i % 8 != phase)
			continue;
		for (unsigned bip = 0; bip <= 8; bip += 4) {
			struct hwt_pt_packet pkt;
			int ret;

			if (bip && (data[i] & 7) != 4)
				break;
			ret = hwt_pt_decode(data + i, data + size, bip, &pkt);
			if (ret > 0)
				check_packet(data + i, size - i, bip, &pkt, ret,
					     tail, (unsigned)i);
			else
				CHECK(is_decode_error(ret));
		}
	}
}

/* ------------------------------------------------------------------ */
/* Last-IP                                                             */
/* ------------------------------------------------------------------ */

static uint64_t ref_expand(uint64_t last, unsigned ipc, uint64_t payload)
{
	switch (ipc) {
	case HWT_PT_IPC_UPDATE16:
		return (last >> 16 << 16) | (payload & 0xffff);
	case HWT_PT_IPC_UPDATE32:
		return (last >> 32 << 32) | (payload & 0xffffffff);
	case HWT_PT_IPC_SEXT48:
		payload &= 0xffffffffffffull;
		return payload >> 47 ? payload | 0xffff000000000000ull
				     : payload;
	case HWT_PT_IPC_UPDATE48:
		return (last >> 48 << 48) | (payload & 0xffffffffffffull);
	default:
		return payload;
	}
}

static void check_last_ip(struct hwt_pt_last_ip *lip,
			  const struct hwt_pt_packet *pkt)
{
	struct hwt_pt_last_ip before = *lip, tmp;
	uint64_t ip = 0, payload = 0, got = 0;
	unsigned ipc;

	CHECK(hwt_pt_last_ip_update(lip, pkt->u.ip.ipc, pkt->u.ip.ip) == 0);
	if (pkt->u.ip.ipc == HWT_PT_IPC_SUPPRESSED) {
		CHECK(lip->ip == before.ip);
		CHECK(hwt_pt_last_ip_query(lip, &ip) ==
		      (before.have_ip ? -HWT_ERR_IP_SUPPRESSED
				      : -HWT_ERR_NOIP));
		return;
	}
	CHECK(hwt_pt_last_ip_query(lip, &ip) == 0);
	CHECK(ip == ref_expand(before.ip, pkt->u.ip.ipc, pkt->u.ip.ip));

	/* An encoder in @before's state would not need more bytes. */
	ipc = hwt_pt_ipc_choose(&before, ip, &payload);
	CHECK(hwt_pt_ipc_size(ipc) > 0);
	if (before.have_ip)
		CHECK(hwt_pt_ipc_size(ipc) <= hwt_pt_ipc_size(pkt->u.ip.ipc));
	tmp = before;
	CHECK(hwt_pt_last_ip_update(&tmp, ipc, payload) == 0);
	CHECK(hwt_pt_last_ip_query(&tmp, &got) == 0 && got == ip);
}

/* ------------------------------------------------------------------ */
/* The decoder object                                                  */
/* ------------------------------------------------------------------ */

/* What a decoding run saw: packets (ret > 0) and errors (ret < 0). */
struct event {
	uint64_t offset;
	int ret;
	uint8_t type;
};

struct log {
	struct event *ev;
	size_t n, cap;
};

static void log_add(struct log *log, uint64_t offset, int ret, uint8_t type)
{
	CHECK(log->n < log->cap);
	log->ev[log->n].offset = offset;
	log->ev[log->n].ret = ret;
	log->ev[log->n].type = type;
	log->n++;
}

static uint64_t offset_of(const struct hwt_pkt_decoder *d)
{
	uint64_t off = 0;

	CHECK(hwt_pkt_get_offset(d, &off) == 0);
	return off;
}

static uint64_t sync_offset_of(const struct hwt_pkt_decoder *d)
{
	uint64_t off = 0;

	CHECK(hwt_pkt_get_sync_offset(d, &off) == 0);
	return off;
}

/* After an error: resynchronise; 0 to go on, -1 at the end. Each resync
 * must move the sync point forward, or decoding could loop forever. */
static int resync(struct hwt_pkt_decoder *d, const uint8_t *data,
		  size_t size, struct log *log)
{
	uint64_t before = sync_offset_of(d), off;
	struct hwt_pt_packet pkt;
	int ret = hwt_pkt_sync_forward(d);

	if (ret < 0) {
		CHECK(ret == -HWT_ERR_EOS);
		CHECK(sync_offset_of(d) == before);
		return -1;
	}
	off = offset_of(d);
	CHECK(off > before);
	CHECK(off == sync_offset_of(d));
	CHECK(hwt_pt_decode(data + off, data + size, 0, &pkt) ==
	      HWT_PT_PSB_SIZE);
	log_add(log, off, 0, HWT_PT_PSB);
	return 0;
}

/* (2): decode everything with hwt_pkt_next(), checking each packet
 * against the stateless decoder. */
static void object_pass(const uint8_t *data, size_t size, struct log *log,
			struct hwt_pt_last_ip *lip, uint8_t *tail)
{
	struct hwt_pkt_decoder *d = hwt_pkt_decoder_new(data, size);

	CHECK(d);
	if (hwt_pkt_sync_forward(d) < 0)
		goto out;
	log_add(log, offset_of(d), 0, HWT_PT_PSB);
	hwt_pt_last_ip_init(lip);
	for (;;) {
		struct hwt_pt_packet pkt, ref;
		uint64_t off = offset_of(d);
		int ret = hwt_pkt_next(d, &pkt);

		if (ret == 0) {
			CHECK(off == size);
			break;
		}
		if (ret < 0) {
			CHECK(is_decode_error(ret));
			CHECK(offset_of(d) == off);
			CHECK(hwt_pkt_next(d, &pkt) == ret);
			CHECK(offset_of(d) == off);
			log_add(log, off, ret, 0);
			if (resync(d, data, size, log) < 0)
				break;
			hwt_pt_last_ip_init(lip);
			continue;
		}
		CHECK(offset_of(d) == off + (uint64_t)ret);
		/* Same as the stateless decoder, in or out of a block. */
		CHECK(hwt_pt_decode(data + off, data + size,
				    pkt.type == HWT_PT_BIP ? (unsigned)ret - 1
							   : 0,
				    &ref) == ret);
		CHECK(ref.type == pkt.type);
		check_packet(data + off, size - off,
			     pkt.type == HWT_PT_BIP ? (unsigned)ret - 1 : 0,
			     &pkt, ret, tail, (unsigned)off);
		log_add(log, off, ret, pkt.type);
		if (hwt_pt_is_ip_packet(pkt.type))
			check_last_ip(lip, &pkt);
	}
out:
	hwt_pkt_decoder_delete(d);
}

/* The same with hwt_pkt_next_batch() and batch size @max. */
static void batch_pass(const uint8_t *data, size_t size, struct log *log,
		       unsigned max)
{
	struct hwt_pkt_decoder *d = hwt_pkt_decoder_new(data, size);
	struct hwt_pt_packet pkts[16];

	CHECK(d && max <= 16);
	if (hwt_pkt_sync_forward(d) < 0)
		goto out;
	log_add(log, offset_of(d), 0, HWT_PT_PSB);
	for (;;) {
		uint64_t off = offset_of(d);
		unsigned count = ~0u;
		int ret = hwt_pkt_next_batch(d, pkts, max, &count);

		CHECK(count <= max);
		for (unsigned i = 0; i < count; i++) {
			CHECK(pkts[i].size > 0);
			log_add(log, off, pkts[i].size, pkts[i].type);
			off += pkts[i].size;
		}
		CHECK(offset_of(d) == off);
		if (ret < 0) {
			CHECK(is_decode_error(ret));
			log_add(log, off, ret, 0);
			if (resync(d, data, size, log) < 0)
				break;
			continue;
		}
		CHECK(ret == 0);
		if (count < max) {
			CHECK(off == size);
			break;
		}
	}
out:
	hwt_pkt_decoder_delete(d);
}

static void compare_logs(const struct log *a, const struct log *b)
{
	CHECK(a->n == b->n);
	for (size_t i = 0; i < a->n; i++) {
		CHECK(a->ev[i].offset == b->ev[i].offset);
		CHECK(a->ev[i].ret == b->ev[i].ret);
		CHECK(a->ev[i].type == b->ev[i].type);
	}
}

/* (4) forward and backward sync see the same PSBs, in opposite order. */
static void sync_pass(const uint8_t *data, size_t size, uint64_t *psbs,
		      size_t cap)
{
	struct hwt_pkt_decoder *d = hwt_pkt_decoder_new(data, size);
	size_t n = 0;

	CHECK(d);
	while (hwt_pkt_sync_forward(d) == 0) {
		struct hwt_pt_packet pkt;
		uint64_t off = offset_of(d);

		CHECK(n < cap);
		CHECK(n == 0 || off > psbs[n - 1]);
		CHECK(hwt_pt_decode(data + off, data + size, 0, &pkt) ==
		      HWT_PT_PSB_SIZE);
		CHECK(pkt.type == HWT_PT_PSB);
		psbs[n++] = off;
	}
	hwt_pkt_decoder_delete(d);

	d = hwt_pkt_decoder_new(data, size);
	CHECK(d);
	while (hwt_pkt_sync_backward(d) == 0) {
		uint64_t off = offset_of(d);

		CHECK(n > 0);
		if (off != psbs[n - 1]) {
			fprintf(stderr, "sync_backward found a PSB at 0x%llx,"
				" sync_forward at 0x%llx\n",
				(unsigned long long)off,
				(unsigned long long)psbs[n - 1]);
			abort();
		}
		n--;
	}
	CHECK(n == 0);
	hwt_pkt_decoder_delete(d);
}

/* (4) sync_set at a few offsets chosen by the input. */
static void sync_set_pass(const uint8_t *data, size_t size)
{
	struct hwt_pkt_decoder *d = hwt_pkt_decoder_new(data, size);
	struct hwt_pt_packet pkt, ref;

	CHECK(d);
	CHECK(hwt_pkt_sync_set(d, size + 1) == -HWT_ERR_EOS);
	for (size_t k = 0; k < 4 && k < size; k++) {
		uint64_t off = data[k] * (uint64_t)size / 256;

		CHECK(hwt_pkt_sync_set(d, off) == 0);
		CHECK(offset_of(d) == off && sync_offset_of(d) == off);
		for (int i = 0; i < 8; i++) {
			int ret = hwt_pkt_next(d, &pkt);

			if (ret <= 0) {
				CHECK(ret == 0 ? off == size
					       : is_decode_error(ret));
				break;
			}
			if (pkt.type == HWT_PT_BBP)
				break;	/* blocks: covered by object_pass */
			CHECK(hwt_pt_decode(data + off, data + size, 0, &ref) ==
			      ret);
			CHECK(ref.type == pkt.type);
			off += (uint64_t)ret;
			CHECK(offset_of(d) == off);
		}
		/* Back to the last PSB before where we stopped, if any. */
		off = offset_of(d);
		if (hwt_pkt_sync_backward(d) == 0) {
			CHECK(offset_of(d) < off);
			CHECK(hwt_pt_decode(data + offset_of(d), data + size, 0,
					    &pkt) == HWT_PT_PSB_SIZE);
		}
	}
	hwt_pkt_decoder_delete(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct log a = { 0 }, b = { 0 };
	struct hwt_pt_last_ip lip;
	uint8_t *tail;
	uint64_t *psbs;

	tail = malloc(HWT_PT_MAX_PACKET_SIZE);
	CHECK(tail);
	stateless_pass(data, size, tail);

	/* Each event is a packet (>= 1 byte), or an error followed by a
	 * sync to a later PSB: at most 2 per byte, plus the first sync. */
	a.cap = b.cap = 2 * size + 2;
	a.ev = malloc(a.cap * sizeof(*a.ev));
	b.ev = malloc(b.cap * sizeof(*b.ev));
	CHECK(a.ev && b.ev);
	object_pass(data, size, &a, &lip, tail);
	free(tail);
	batch_pass(data, size, &b, size ? 1u + data[size - 1] % 16u : 1u);
	compare_logs(&a, &b);
	free(a.ev);
	free(b.ev);

	psbs = malloc((size / HWT_PT_PSB_SIZE + 1) * sizeof(*psbs));
	CHECK(psbs);
	sync_pass(data, size, psbs, size / HWT_PT_PSB_SIZE + 1);
	free(psbs);

	sync_set_pass(data, size);
	return 0;
}

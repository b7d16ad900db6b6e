/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The packet decoder object: synchronisation (forward, backward, set),
 * offsets, errors and resynchronisation, BBP..BEP blocks.
 *
 * Synchronisation follows libipt's packet decoder (pt_pkt_sync_forward and
 * friends in libipt 2.1.2), except that hwt_pkt_next() returns 0 at the
 * end of the buffer where libipt returns -pte_eos. In particular (checked
 * against libipt with the same bytes):
 *  - a PSB is the last 16 bytes of a run of 02 82 pairs;
 *  - sync_forward from the sync point searches from the next byte (the
 *    sync point may be a sync_set offset that is not a PSB), and from
 *    elsewhere from up to 15 bytes back, so a PSB that a bad packet ran
 *    into is found again.
 * Where libipt's word-wise backward search would return a PSB at or after
 * the current position (inside a long 02 82 run), hwt returns the last PSB
 * strictly before it.
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
/* A little trace builder                                              */
/* ------------------------------------------------------------------ */

#define MAXPKT 64

struct trace {
	uint8_t buf[1024];
	size_t len;
	/* Every packet written: offset, type and size. */
	size_t npkt;
	uint64_t off[MAXPKT];
	uint8_t type[MAXPKT];
	uint8_t size[MAXPKT];
};

static void put(struct trace *t, const struct hwt_pt_packet *p)
{
	int n = hwt_pt_encode(t->buf + t->len, t->buf + sizeof(t->buf), p);

	assert_true(n > 0);
	assert_true(t->npkt < MAXPKT);
	t->off[t->npkt] = t->len;
	t->type[t->npkt] = p->type;
	t->size[t->npkt] = (uint8_t)n;
	t->npkt++;
	t->len += (size_t)n;
}

static void put_type(struct trace *t, unsigned type)
{
	struct hwt_pt_packet p;

	memset(&p, 0, sizeof(p));
	p.type = (uint8_t)type;
	switch (type) {
	case HWT_PT_TNT8:
		p.u.tnt.bits = 3;
		p.u.tnt.payload = 5;
		break;
	case HWT_PT_TSC:
		p.u.tsc = 0x123456789aull;
		break;
	case HWT_PT_CBR:
		p.u.cbr = 0x20;
		break;
	case HWT_PT_MODE_EXEC:
		p.u.exec = HWT_PT_EXEC_CSL;
		break;
	case HWT_PT_CYC:
		p.u.cyc = 0x1234;
		break;
	case HWT_PT_MTC:
		p.u.mtc = 0x42;
		break;
	default:
		break;
	}
	put(t, &p);
}

static void put_ip(struct trace *t, unsigned type, unsigned ipc,
		   uint64_t ip)
{
	struct hwt_pt_packet p = { .type = (uint8_t)type };

	p.u.ip.ipc = (uint8_t)ipc;
	p.u.ip.ip = ip;
	put(t, &p);
}

/* Raw bytes that are not recorded as packets (junk, partial packets). */
static void put_raw(struct trace *t, const uint8_t *bytes, size_t n)
{
	assert_true(t->len + n <= sizeof(t->buf));
	memcpy(t->buf + t->len, bytes, n);
	t->len += n;
}

/* Copy the trace to an exactly sized heap buffer so ASan sees overreads. */
static uint8_t *exact_copy(const struct trace *t)
{
	uint8_t *p = malloc(t->len ? t->len : 1);

	assert_non_null(p);
	memcpy(p, t->buf, t->len);
	return p;
}

static uint64_t offset_of(const struct hwt_pkt_decoder *d)
{
	uint64_t off = ~0ull;

	assert_int_equal(hwt_pkt_get_offset(d, &off), 0);
	return off;
}

static uint64_t sync_offset_of(const struct hwt_pkt_decoder *d)
{
	uint64_t off = ~0ull;

	assert_int_equal(hwt_pkt_get_sync_offset(d, &off), 0);
	return off;
}

/*
 * Three PSB segments with junk before the first one (so that no PSB is at
 * an 8-byte aligned offset, which a word-wise search might assume) and a
 * few packets after the last.
 */
struct segs {
	struct trace t;
	uint64_t psb[3];
	size_t first_pkt;	/* index of the first PSB in t.off */
};

static void build_segments(struct segs *s)
{
	static const uint8_t junk[] = { 0x00, 0x00, 0x00 };

	memset(s, 0, sizeof(*s));
	put_raw(&s->t, junk, sizeof(junk));

	s->first_pkt = s->t.npkt;
	s->psb[0] = s->t.len;
	put_type(&s->t, HWT_PT_PSB);
	put_type(&s->t, HWT_PT_TSC);
	put_type(&s->t, HWT_PT_CBR);
	put_ip(&s->t, HWT_PT_FUP, HWT_PT_IPC_SEXT48, 0x401000);
	put_type(&s->t, HWT_PT_MODE_EXEC);
	put_type(&s->t, HWT_PT_PSBEND);
	put_ip(&s->t, HWT_PT_TIP_PGE, HWT_PT_IPC_UPDATE16, 0x1010);
	put_type(&s->t, HWT_PT_TNT8);
	put_type(&s->t, HWT_PT_PAD);
	put_ip(&s->t, HWT_PT_TIP, HWT_PT_IPC_UPDATE32, 0x00402000);

	s->psb[1] = s->t.len;
	put_type(&s->t, HWT_PT_PSB);
	put_ip(&s->t, HWT_PT_FUP, HWT_PT_IPC_FULL, 0x402000);
	put_type(&s->t, HWT_PT_PSBEND);
	put_type(&s->t, HWT_PT_CYC);
	put_type(&s->t, HWT_PT_TNT8);
	put_type(&s->t, HWT_PT_MTC);
	put_ip(&s->t, HWT_PT_TIP_PGD, HWT_PT_IPC_SUPPRESSED, 0);

	s->psb[2] = s->t.len;
	put_type(&s->t, HWT_PT_PSB);
	put_type(&s->t, HWT_PT_PSBEND);
	put_type(&s->t, HWT_PT_OVF);
	put_ip(&s->t, HWT_PT_FUP, HWT_PT_IPC_UPDATE48, 0x123456789abcull);
	put_type(&s->t, HWT_PT_TNT8);
	put_type(&s->t, HWT_PT_PAD);

	assert_true(s->psb[0] % 8 && s->psb[1] % 8 && s->psb[2] % 8);
}

/* Decode from the current position to the end, checking each packet
 * against the trace's record starting at index @i. Returns the index
 * after the last packet. */
static size_t decode_all(struct hwt_pkt_decoder *d, const struct trace *t,
			 size_t i)
{
	struct hwt_pt_packet pkt;
	int ret;

	for (;;) {
		uint64_t off = offset_of(d);

		ret = hwt_pkt_next(d, &pkt);
		if (ret == 0)
			break;
		if (ret < 0)
			fail_msg("offset 0x%llx: %s", (unsigned long long)off,
				 hwt_errstr(ret));
		assert_true(i < t->npkt);
		if (off != t->off[i] || pkt.type != t->type[i] ||
		    ret != t->size[i] || pkt.size != t->size[i])
			fail_msg("packet %zu: got %s/%d at 0x%llx, want %s/%u "
				 "at 0x%llx", i, hwt_pt_type_name(pkt.type),
				 ret, (unsigned long long)off,
				 hwt_pt_type_name(t->type[i]), t->size[i],
				 (unsigned long long)t->off[i]);
		assert_int_equal(offset_of(d), off + (uint64_t)ret);
		i++;
	}
	assert_int_equal(offset_of(d), t->len);
	return i;
}

/* ------------------------------------------------------------------ */
/* Tests                                                               */
/* ------------------------------------------------------------------ */

static void test_unsynced(void **state)
{
	struct segs s;
	struct hwt_pkt_decoder *d;
	struct hwt_pt_packet pkt;
	uint64_t off;

	(void)state;
	build_segments(&s);
	d = hwt_pkt_decoder_new(s.t.buf, s.t.len);
	assert_non_null(d);
	assert_int_equal(hwt_pkt_get_offset(d, &off), -HWT_ERR_NOSYNC);
	assert_int_equal(hwt_pkt_get_sync_offset(d, &off), -HWT_ERR_NOSYNC);
	assert_int_equal(hwt_pkt_next(d, &pkt), -HWT_ERR_NOSYNC);
	hwt_pkt_decoder_delete(d);
	hwt_pkt_decoder_delete(NULL);
}

static void test_sync_forward_all(void **state)
{
	struct segs s;
	struct hwt_pkt_decoder *d;
	uint8_t *buf;

	(void)state;
	build_segments(&s);
	buf = exact_copy(&s.t);
	d = hwt_pkt_decoder_new(buf, s.t.len);
	assert_non_null(d);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(hwt_pkt_sync_forward(d), 0);
		assert_int_equal(offset_of(d), s.psb[i]);
		assert_int_equal(sync_offset_of(d), s.psb[i]);
	}
	assert_int_equal(hwt_pkt_sync_forward(d), -HWT_ERR_EOS);
	/* A failed sync leaves the decoder where it was. */
	assert_int_equal(offset_of(d), s.psb[2]);
	hwt_pkt_decoder_delete(d);
	free(buf);
}

static void test_decode_whole_trace(void **state)
{
	struct segs s;
	struct hwt_pkt_decoder *d;
	struct hwt_pt_packet pkt;
	uint8_t *buf;
	size_t end;

	(void)state;
	build_segments(&s);
	buf = exact_copy(&s.t);
	d = hwt_pkt_decoder_new(buf, s.t.len);
	assert_int_equal(hwt_pkt_sync_forward(d), 0);
	end = decode_all(d, &s.t, s.first_pkt);
	assert_int_equal(end, s.t.npkt);
	/* 0 again and again at the end. */
	assert_int_equal(hwt_pkt_next(d, &pkt), 0);
	assert_int_equal(hwt_pkt_next(d, &pkt), 0);
	/* Decoding through later PSBs does not move the sync point. */
	assert_int_equal(sync_offset_of(d), s.psb[0]);
	hwt_pkt_decoder_delete(d);
	free(buf);
}

/* Decoding reaches the next PSB; syncing forward from there stays on it
 * (as libipt), and from inside it moves to the one after. */
static void test_sync_forward_after_decoding(void **state)
{
	struct segs s;
	struct hwt_pkt_decoder *d;
	struct hwt_pt_packet pkt;

	(void)state;
	build_segments(&s);
	d = hwt_pkt_decoder_new(s.t.buf, s.t.len);
	assert_int_equal(hwt_pkt_sync_forward(d), 0);
	while (offset_of(d) < s.psb[1])
		assert_true(hwt_pkt_next(d, &pkt) > 0);
	assert_int_equal(offset_of(d), s.psb[1]);
	assert_int_equal(hwt_pkt_sync_forward(d), 0);
	assert_int_equal(offset_of(d), s.psb[1]);
	/* Past the PSB (decoded it): the next one. */
	assert_int_equal(hwt_pkt_next(d, &pkt), HWT_PT_PSB_SIZE);
	assert_int_equal(hwt_pkt_sync_forward(d), 0);
	assert_int_equal(offset_of(d), s.psb[2]);
	hwt_pkt_decoder_delete(d);
}

static void test_sync_backward(void **state)
{
	struct segs s;
	struct hwt_pkt_decoder *d;
	struct hwt_pt_packet pkt;
	uint8_t *buf;

	(void)state;
	build_segments(&s);
	buf = exact_copy(&s.t);
	d = hwt_pkt_decoder_new(buf, s.t.len);
	/* From the end, each PSB in turn. */
	for (int i = 2; i >= 0; i--) {
		assert_int_equal(hwt_pkt_sync_backward(d), 0);
		assert_int_equal(offset_of(d), s.psb[i]);
		assert_int_equal(sync_offset_of(d), s.psb[i]);
	}
	assert_int_equal(hwt_pkt_sync_backward(d), -HWT_ERR_EOS);
	assert_int_equal(offset_of(d), s.psb[0]);

	/* From the middle of segment 1: back to PSB 1, then PSB 0. */
	assert_int_equal(hwt_pkt_sync_set(d, s.psb[1] + 16), 0);
	assert_int_equal(hwt_pkt_next(d, &pkt) > 0, 1);
	assert_int_equal(hwt_pkt_sync_backward(d), 0);
	assert_int_equal(offset_of(d), s.psb[1]);
	assert_int_equal(hwt_pkt_sync_backward(d), 0);
	assert_int_equal(offset_of(d), s.psb[0]);

	/* Forward and backward agree. */
	assert_int_equal(hwt_pkt_sync_forward(d), 0);
	assert_int_equal(offset_of(d), s.psb[1]);
	hwt_pkt_decoder_delete(d);
	free(buf);
}

static void test_sync_set(void **state)
{
	struct segs s;
	struct hwt_pkt_decoder *d;
	struct hwt_pt_packet pkt;
	uint8_t *buf;

	(void)state;
	build_segments(&s);
	buf = exact_copy(&s.t);
	d = hwt_pkt_decoder_new(buf, s.t.len);
	/* Any packet boundary, PSB or not, decodes the rest exactly. */
	for (size_t i = 0; i < s.t.npkt; i++) {
		assert_int_equal(hwt_pkt_sync_set(d, s.t.off[i]), 0);
		assert_int_equal(offset_of(d), s.t.off[i]);
		assert_int_equal(sync_offset_of(d), s.t.off[i]);
		assert_int_equal(decode_all(d, &s.t, i), s.t.npkt);
	}
	/* The very end is allowed and yields 0; beyond it is not. */
	assert_int_equal(hwt_pkt_sync_set(d, s.t.len), 0);
	assert_int_equal(hwt_pkt_next(d, &pkt), 0);
	assert_int_equal(hwt_pkt_sync_set(d, s.t.len + 1), -HWT_ERR_EOS);
	assert_int_equal(hwt_pkt_sync_set(d, ~0ull), -HWT_ERR_EOS);
	/* Failed: still at the end. */
	assert_int_equal(offset_of(d), s.t.len);
	hwt_pkt_decoder_delete(d);
	free(buf);
}

/* An unknown opcode in segment 0: the error names it and leaves the
 * decoder on it; resync continues at PSB 1 and decodes to the end. */
static void test_error_and_resync(void **state)
{
	struct segs s;
	struct hwt_pkt_decoder *d;
	struct hwt_pt_packet pkt;
	uint64_t bad_off;
	size_t bad, i;

	(void)state;
	build_segments(&s);
	/* Corrupt the TNT-8 after TIP.PGE (its opcode becomes 0xd9). */
	for (i = s.first_pkt; i < s.t.npkt; i++)
		if (s.t.type[i] == HWT_PT_TNT8)
			break;
	assert_true(i < s.t.npkt && s.t.off[i] < s.psb[1]);
	bad = i;
	bad_off = s.t.off[bad];
	s.t.buf[bad_off] = 0xd9;

	d = hwt_pkt_decoder_new(s.t.buf, s.t.len);
	assert_int_equal(hwt_pkt_sync_forward(d), 0);
	for (i = s.first_pkt; i < bad; i++)
		assert_int_equal(hwt_pkt_next(d, &pkt), s.t.size[i]);
	assert_int_equal(hwt_pkt_next(d, &pkt), -HWT_ERR_BAD_OPC);
	assert_int_equal(offset_of(d), bad_off);
	/* Sticky: the decoder does not skip the bad byte by itself. */
	assert_int_equal(hwt_pkt_next(d, &pkt), -HWT_ERR_BAD_OPC);
	assert_int_equal(offset_of(d), bad_off);

	assert_int_equal(hwt_pkt_sync_forward(d), 0);
	assert_int_equal(offset_of(d), s.psb[1]);
	for (i = 0; i < s.t.npkt && s.t.off[i] != s.psb[1]; i++)
		;
	assert_int_equal(decode_all(d, &s.t, i), s.t.npkt);
	hwt_pkt_decoder_delete(d);
}

/* A reserved encoding (MODE leaf 2) is BAD_PACKET, same handling. */
static void test_bad_packet_and_resync(void **state)
{
	struct segs s;
	struct hwt_pkt_decoder *d;
	struct hwt_pt_packet pkt;
	uint64_t off;
	size_t i;

	(void)state;
	build_segments(&s);
	for (i = s.first_pkt; i < s.t.npkt; i++)
		if (s.t.type[i] == HWT_PT_MODE_EXEC)
			break;
	assert_true(i < s.t.npkt);
	off = s.t.off[i];
	s.t.buf[off + 1] = 0x40;

	d = hwt_pkt_decoder_new(s.t.buf, s.t.len);
	assert_int_equal(hwt_pkt_sync_forward(d), 0);
	for (;;) {
		int ret = hwt_pkt_next(d, &pkt);

		if (ret < 0) {
			assert_int_equal(ret, -HWT_ERR_BAD_PACKET);
			break;
		}
		assert_true(ret > 0);
	}
	assert_int_equal(offset_of(d), off);
	assert_int_equal(hwt_pkt_sync_forward(d), 0);
	assert_int_equal(offset_of(d), s.psb[1]);
	hwt_pkt_decoder_delete(d);
}

/* A packet cut by the end of the buffer: -EOS, position on the packet. */
static void test_truncated_tail(void **state)
{
	struct trace t;
	struct hwt_pkt_decoder *d;
	struct hwt_pt_packet pkt;
	uint8_t *buf;
	uint64_t tsc_off;

	(void)state;
	memset(&t, 0, sizeof(t));
	put_type(&t, HWT_PT_PSB);
	put_type(&t, HWT_PT_PSBEND);
	tsc_off = t.len;
	put_type(&t, HWT_PT_TSC);
	t.len -= 3;	/* cut the TSC */

	buf = exact_copy(&t);
	d = hwt_pkt_decoder_new(buf, t.len);
	assert_int_equal(hwt_pkt_sync_forward(d), 0);
	assert_int_equal(hwt_pkt_next(d, &pkt), HWT_PT_PSB_SIZE);
	assert_int_equal(hwt_pkt_next(d, &pkt), 2);
	assert_int_equal(hwt_pkt_next(d, &pkt), -HWT_ERR_EOS);
	assert_int_equal(offset_of(d), tsc_off);
	assert_int_equal(hwt_pkt_sync_forward(d), -HWT_ERR_EOS);
	hwt_pkt_decoder_delete(d);
	free(buf);
}

/* Buffers without a (complete) PSB. */
static void test_no_psb(void **state)
{
	static const uint8_t partial[] = {
		0x00, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
		0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02,
	};
	struct hwt_pkt_decoder *d;
	uint8_t *buf = malloc(sizeof(partial));

	(void)state;
	assert_non_null(buf);
	memcpy(buf, partial, sizeof(partial));
	d = hwt_pkt_decoder_new(buf, sizeof(partial));
	assert_int_equal(hwt_pkt_sync_forward(d), -HWT_ERR_EOS);
	assert_int_equal(hwt_pkt_sync_backward(d), -HWT_ERR_EOS);
	hwt_pkt_decoder_delete(d);

	/* An empty buffer. */
	d = hwt_pkt_decoder_new(buf, 0);
	assert_non_null(d);
	assert_int_equal(hwt_pkt_sync_forward(d), -HWT_ERR_EOS);
	assert_int_equal(hwt_pkt_sync_backward(d), -HWT_ERR_EOS);
	assert_int_equal(hwt_pkt_sync_set(d, 0), 0);
	{
		struct hwt_pt_packet pkt;

		assert_int_equal(hwt_pkt_next(d, &pkt), 0);
	}
	hwt_pkt_decoder_delete(d);
	free(buf);
}

/*
 * A PSB right after packets whose last bytes happen to be 02 82: MTC with
 * CTC 0x02, then TNT-8 0x82. The pattern 02 82 now runs for 18 bytes;
 * the PSB is the last 16 of them. libipt's pt_sync_forward finds it there
 * (pt_find_psb walks to the end of the run); the first match of the
 * pattern, at offset 1, is inside the MTC.
 */
static void test_sync_psb_after_0282(void **state)
{
	struct trace t;
	struct hwt_pkt_decoder *d;
	struct hwt_pt_packet mtc = { .type = HWT_PT_MTC, .u.mtc = 0x02 };
	struct hwt_pt_packet tnt = { .type = HWT_PT_TNT8 };
	struct hwt_pt_packet pkt;

	(void)state;
	memset(&t, 0, sizeof(t));
	put(&t, &mtc);
	/* TNT-8 0x82: stop bit 7, six branches, only the newest taken. */
	tnt.u.tnt.bits = 6;
	tnt.u.tnt.payload = 1;
	put(&t, &tnt);
	assert_int_equal(t.buf[2], 0x82);
	put_type(&t, HWT_PT_PSB);
	put_type(&t, HWT_PT_PSBEND);
	assert_int_equal(t.off[2], 3);

	d = hwt_pkt_decoder_new(t.buf, t.len);
	assert_int_equal(hwt_pkt_sync_forward(d), 0);
	assert_int_equal(offset_of(d), 3);
	assert_int_equal(hwt_pkt_next(d, &pkt), HWT_PT_PSB_SIZE);
	assert_int_equal(hwt_pkt_next(d, &pkt), 2);
	assert_int_equal(pkt.type, HWT_PT_PSBEND);

	/* Backward agrees. */
	assert_int_equal(hwt_pkt_sync_set(d, t.len), 0);
	assert_int_equal(hwt_pkt_sync_backward(d), 0);
	assert_int_equal(offset_of(d), 3);
	hwt_pkt_decoder_delete(d);
}

/*
 * sync_set to a non-PSB offset, an error right there, then sync_forward:
 * a PSB that starts within the next 16 bytes must be found (libipt
 * searches from the sync point + 1 in that case, not + 16).
 */
static void test_resync_after_error_at_sync_set(void **state)
{
	struct trace t;
	struct hwt_pkt_decoder *d;
	struct hwt_pt_packet pkt;
	static const uint8_t bad[] = { 0xd9 };

	(void)state;
	memset(&t, 0, sizeof(t));
	put_raw(&t, bad, sizeof(bad));
	put_type(&t, HWT_PT_PSB);
	put_type(&t, HWT_PT_PSBEND);

	d = hwt_pkt_decoder_new(t.buf, t.len);
	assert_int_equal(hwt_pkt_sync_set(d, 0), 0);
	assert_int_equal(hwt_pkt_next(d, &pkt), -HWT_ERR_BAD_OPC);
	assert_int_equal(offset_of(d), 0);
	assert_int_equal(hwt_pkt_sync_forward(d), 0);
	assert_int_equal(offset_of(d), 1);
	hwt_pkt_decoder_delete(d);
}

/* BIP exists only between BBP and BEP, with the BBP's payload size. */
static void test_bip_blocks(void **state)
{
	struct trace t;
	struct hwt_pkt_decoder *d;
	struct hwt_pt_packet bbp4 = { .type = HWT_PT_BBP,
				      .u.bbp = { .type = 1, .sz = 1 } };
	struct hwt_pt_packet bbp8 = { .type = HWT_PT_BBP,
				      .u.bbp = { .type = 2, .sz = 0 } };
	struct hwt_pt_packet bip4 = { .type = HWT_PT_BIP, .size = 5,
				      .u.bip = { .id = 1, .value = 0x1234 } };
	struct hwt_pt_packet bip8 = { .type = HWT_PT_BIP, .size = 9,
				      .u.bip = { .id = 1,
						 .value = 0x123456789ull } };
	struct hwt_pt_packet bep = { .type = HWT_PT_BEP, .u.bep_ip = 1 };
	/* TNT-8 0x0c (two branches: taken, not taken) looks like a BIP
	 * header with id 1. */
	struct hwt_pt_packet tnt = { .type = HWT_PT_TNT8,
				     .u.tnt = { .bits = 2, .payload = 2 } };
	uint8_t *buf;

	(void)state;
	memset(&t, 0, sizeof(t));
	put_type(&t, HWT_PT_PSB);
	put_type(&t, HWT_PT_PSBEND);
	put(&t, &tnt);
	put(&t, &bbp4);
	put(&t, &bip4);
	put(&t, &bip4);
	put(&t, &bep);
	put_ip(&t, HWT_PT_FUP, HWT_PT_IPC_SEXT48, 0x401000);
	put(&t, &tnt);
	put(&t, &bbp8);
	put(&t, &bip8);
	put_type(&t, HWT_PT_PAD);	/* other packets inside a block */
	put(&t, &bip8);
	put(&t, &bep);
	put(&t, &tnt);
	assert_int_equal(t.buf[t.off[2]], 0x0c);
	assert_int_equal(t.buf[t.off[4]], 0x0c);

	buf = exact_copy(&t);
	d = hwt_pkt_decoder_new(buf, t.len);
	assert_int_equal(hwt_pkt_sync_forward(d), 0);
	assert_int_equal(decode_all(d, &t, 0), t.npkt);

	/* A sync point starts outside any block: resync into the middle of
	 * the first block sees the BIP header as TNT-8. */
	{
		struct hwt_pt_packet pkt;

		assert_int_equal(hwt_pkt_sync_set(d, t.off[4]), 0);
		assert_int_equal(hwt_pkt_next(d, &pkt), 1);
		assert_int_equal(pkt.type, HWT_PT_TNT8);
	}
	hwt_pkt_decoder_delete(d);
	free(buf);
}

/*
 * A packet that ran into a following PSB: TIP with a full IP whose
 * payload swallows half the PSB. libipt starts its forward search up to
 * 15 bytes before the current position to find such a PSB again.
 */
static void test_resync_finds_partly_consumed_psb(void **state)
{
	struct trace t;
	struct hwt_pkt_decoder *d;
	struct hwt_pt_packet pkt;
	static const uint8_t tip_full = 0xcd;

	(void)state;
	memset(&t, 0, sizeof(t));
	put_raw(&t, &tip_full, 1);
	put_type(&t, HWT_PT_PSB);
	put_type(&t, HWT_PT_PSBEND);

	d = hwt_pkt_decoder_new(t.buf, t.len);
	assert_int_equal(hwt_pkt_sync_set(d, 0), 0);
	assert_int_equal(hwt_pkt_next(d, &pkt), 9);
	assert_int_equal(pkt.type, HWT_PT_TIP);
	assert_int_equal(offset_of(d), 9);
	assert_int_equal(hwt_pkt_sync_forward(d), 0);
	assert_int_equal(offset_of(d), 1);
	hwt_pkt_decoder_delete(d);
}

/* hwt_pkt_next_batch gives the same packets as hwt_pkt_next, in batches
 * of any size, and stops at errors the same way. */
static void test_next_batch(void **state)
{
	static const unsigned maxes[] = { 1, 2, 3, 7, 64 };
	struct segs s;
	struct hwt_pkt_decoder *d;
	struct hwt_pt_packet pkts[64];
	unsigned count;
	uint8_t *buf;

	(void)state;
	build_segments(&s);
	buf = exact_copy(&s.t);
	d = hwt_pkt_decoder_new(buf, s.t.len);
	for (size_t m = 0; m < sizeof(maxes) / sizeof(maxes[0]); m++) {
		size_t i = s.first_pkt;

		assert_int_equal(hwt_pkt_sync_set(d, s.psb[0]), 0);
		for (;;) {
			uint64_t off = offset_of(d);

			assert_int_equal(hwt_pkt_next_batch(d, pkts, maxes[m],
							    &count), 0);
			assert_true(count <= maxes[m]);
			for (unsigned k = 0; k < count; k++, i++) {
				assert_true(i < s.t.npkt);
				assert_int_equal(off, s.t.off[i]);
				assert_int_equal(pkts[k].type, s.t.type[i]);
				assert_int_equal(pkts[k].size, s.t.size[i]);
				off += pkts[k].size;
			}
			assert_int_equal(offset_of(d), off);
			if (count < maxes[m])
				break;
		}
		assert_int_equal(i, s.t.npkt);
		assert_int_equal(offset_of(d), s.t.len);
		/* At the end: 0 and nothing. */
		assert_int_equal(hwt_pkt_next_batch(d, pkts, maxes[m], &count),
				 0);
		assert_int_equal(count, 0);
	}

	/* max 0: nothing decoded, nothing moved. */
	assert_int_equal(hwt_pkt_sync_set(d, s.psb[0]), 0);
	assert_int_equal(hwt_pkt_next_batch(d, pkts, 0, &count), 0);
	assert_int_equal(count, 0);
	assert_int_equal(offset_of(d), s.psb[0]);

	/* An error after some good packets: those are returned, the
	 * position is at the bad one, and it stays there. The last packet
	 * of segment 0 gets an unknown opcode. */
	{
		uint64_t bad_off = 0;

		for (size_t i = 0; i < s.t.npkt; i++)
			if (s.t.off[i] + s.t.size[i] == s.psb[1])
				bad_off = s.t.off[i];
		assert_true(bad_off > s.psb[0]);
		buf[bad_off] = 0xd9;
		assert_int_equal(hwt_pkt_sync_set(d, s.psb[0]), 0);
		assert_int_equal(hwt_pkt_next_batch(d, pkts, 64, &count),
				 -HWT_ERR_BAD_OPC);
		assert_true(count > 0);
		assert_int_equal(pkts[count - 1].type, HWT_PT_PAD);
		assert_int_equal(offset_of(d), bad_off);
		assert_int_equal(hwt_pkt_next_batch(d, pkts, 64, &count),
				 -HWT_ERR_BAD_OPC);
		assert_int_equal(count, 0);
		assert_int_equal(offset_of(d), bad_off);
		assert_int_equal(hwt_pkt_sync_forward(d), 0);
		assert_int_equal(offset_of(d), s.psb[1]);
	}

	/* Unsynchronised and bad arguments. */
	hwt_pkt_decoder_delete(d);
	d = hwt_pkt_decoder_new(buf, s.t.len);
	assert_int_equal(hwt_pkt_next_batch(d, pkts, 64, &count),
			 -HWT_ERR_NOSYNC);
	assert_int_equal(count, 0);
	assert_int_equal(hwt_pkt_next_batch(NULL, pkts, 64, &count),
			 -HWT_ERR_INVALID);
	assert_int_equal(hwt_pkt_next_batch(d, NULL, 64, &count),
			 -HWT_ERR_INVALID);
	assert_int_equal(hwt_pkt_next_batch(d, pkts, 64, NULL),
			 -HWT_ERR_INVALID);
	hwt_pkt_decoder_delete(d);
	free(buf);
}

/* Batches track BBP..BEP blocks like hwt_pkt_next. */
static void test_next_batch_blocks(void **state)
{
	struct trace t;
	struct hwt_pkt_decoder *d;
	struct hwt_pt_packet bbp = { .type = HWT_PT_BBP,
				     .u.bbp = { .type = 1, .sz = 1 } };
	struct hwt_pt_packet bip = { .type = HWT_PT_BIP, .size = 5,
				     .u.bip = { .id = 1, .value = 7 } };
	struct hwt_pt_packet bep = { .type = HWT_PT_BEP };
	struct hwt_pt_packet tnt = { .type = HWT_PT_TNT8,
				     .u.tnt = { .bits = 2, .payload = 2 } };
	struct hwt_pt_packet pkts[16];
	unsigned count;

	(void)state;
	memset(&t, 0, sizeof(t));
	put_type(&t, HWT_PT_PSB);
	put(&t, &bbp);
	put(&t, &bip);
	put(&t, &bep);
	put(&t, &tnt);
	put(&t, &bbp);
	put(&t, &bip);
	d = hwt_pkt_decoder_new(t.buf, t.len);
	for (unsigned max = 1; max <= 16; max++) {
		size_t i = 0;

		assert_int_equal(hwt_pkt_sync_set(d, 0), 0);
		do {
			assert_int_equal(hwt_pkt_next_batch(d, pkts, max,
							    &count), 0);
			for (unsigned k = 0; k < count; k++, i++) {
				assert_true(i < t.npkt);
				assert_int_equal(pkts[k].type, t.type[i]);
				assert_int_equal(pkts[k].size, t.size[i]);
			}
		} while (count == max);
		assert_int_equal(i, t.npkt);
	}
	hwt_pkt_decoder_delete(d);
}

static void test_bad_args(void **state)
{
	struct hwt_pkt_decoder *d;
	struct hwt_pt_packet pkt;
	uint64_t off;
	uint8_t b = 0;

	(void)state;
	assert_int_equal(hwt_pkt_sync_forward(NULL), -HWT_ERR_INVALID);
	assert_int_equal(hwt_pkt_sync_backward(NULL), -HWT_ERR_INVALID);
	assert_int_equal(hwt_pkt_sync_set(NULL, 0), -HWT_ERR_INVALID);
	assert_int_equal(hwt_pkt_get_offset(NULL, &off), -HWT_ERR_INVALID);
	assert_int_equal(hwt_pkt_get_sync_offset(NULL, &off),
			 -HWT_ERR_INVALID);
	assert_int_equal(hwt_pkt_next(NULL, &pkt), -HWT_ERR_INVALID);
	d = hwt_pkt_decoder_new(&b, 1);
	assert_non_null(d);
	assert_int_equal(hwt_pkt_get_offset(d, NULL), -HWT_ERR_INVALID);
	assert_int_equal(hwt_pkt_sync_set(d, 0), 0);
	assert_int_equal(hwt_pkt_next(d, NULL), -HWT_ERR_INVALID);
	assert_int_equal(hwt_pkt_next(d, &pkt), 1);
	assert_int_equal(pkt.type, HWT_PT_PAD);
	hwt_pkt_decoder_delete(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unsynced),
		cmocka_unit_test(test_sync_forward_all),
		cmocka_unit_test(test_decode_whole_trace),
		cmocka_unit_test(test_sync_forward_after_decoding),
		cmocka_unit_test(test_sync_backward),
		cmocka_unit_test(test_sync_set),
		cmocka_unit_test(test_error_and_resync),
		cmocka_unit_test(test_bad_packet_and_resync),
		cmocka_unit_test(test_truncated_tail),
		cmocka_unit_test(test_no_psb),
		cmocka_unit_test(test_sync_psb_after_0282),
		cmocka_unit_test(test_resync_after_error_at_sync_set),
		cmocka_unit_test(test_bip_blocks),
		cmocka_unit_test(test_resync_finds_partly_consumed_psb),
		cmocka_unit_test(test_next_batch),
		cmocka_unit_test(test_next_batch_blocks),
		cmocka_unit_test(test_bad_args),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

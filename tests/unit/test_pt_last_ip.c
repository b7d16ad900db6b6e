/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Last-IP expansion (SDM "IP Compression") and hwt_pt_ipc_choose.
 *
 * IPBytes 000: suppressed; 001: IP[15:0] over last IP; 010: IP[31:0] over
 * last IP; 011: IP[47:0] sign-extended from bit 47; 100: IP[47:0] over last
 * IP; 110: the full IP; 101 and 111 reserved. Like libipt, an update
 * compression with no IP seen yet applies to an all-zero last IP.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <hwt/pt.h>

static uint64_t rnd(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t query(const struct hwt_pt_last_ip *lip)
{
	uint64_t ip = 0;

	assert_int_equal(hwt_pt_last_ip_query(lip, &ip), 0);
	return ip;
}

static void test_empty(void **state)
{
	struct hwt_pt_last_ip lip;
	uint64_t ip = 42;

	(void)state;
	hwt_pt_last_ip_init(&lip);
	assert_int_equal(hwt_pt_last_ip_query(&lip, &ip), -HWT_ERR_NOIP);
	/* Suppressed with nothing seen is still "no IP". */
	assert_int_equal(hwt_pt_last_ip_update(&lip, HWT_PT_IPC_SUPPRESSED, 0),
			 0);
	assert_int_equal(hwt_pt_last_ip_query(&lip, &ip), -HWT_ERR_NOIP);
	/* A NULL @ip is allowed (only the status is wanted). */
	assert_int_equal(hwt_pt_last_ip_query(&lip, NULL), -HWT_ERR_NOIP);
}

/* (e) One hand-worked example per compression. */
static void test_each_compression(void **state)
{
	struct hwt_pt_last_ip lip;
	uint64_t ip;

	(void)state;
	hwt_pt_last_ip_init(&lip);

	assert_int_equal(hwt_pt_last_ip_update(&lip, HWT_PT_IPC_FULL,
					       0xffffffff81234567ull), 0);
	assert_int_equal(query(&lip), 0xffffffff81234567ull);

	assert_int_equal(hwt_pt_last_ip_update(&lip, HWT_PT_IPC_UPDATE16,
					       0xabcd), 0);
	assert_int_equal(query(&lip), 0xffffffff8123abcdull);

	assert_int_equal(hwt_pt_last_ip_update(&lip, HWT_PT_IPC_UPDATE32,
					       0x00401000), 0);
	assert_int_equal(query(&lip), 0xffffffff00401000ull);

	assert_int_equal(hwt_pt_last_ip_update(&lip, HWT_PT_IPC_UPDATE48,
					       0x7f0012345678ull), 0);
	assert_int_equal(query(&lip), 0xffff7f0012345678ull);

	/* sext48, bit 47 clear: upper bits zero. */
	assert_int_equal(hwt_pt_last_ip_update(&lip, HWT_PT_IPC_SEXT48,
					       0x7fffdeadbeefull), 0);
	assert_int_equal(query(&lip), 0x00007fffdeadbeefull);

	/* sext48, bit 47 set: upper bits one (kernel addresses). */
	assert_int_equal(hwt_pt_last_ip_update(&lip, HWT_PT_IPC_SEXT48,
					       0x800000001000ull), 0);
	assert_int_equal(query(&lip), 0xffff800000001000ull);

	/* Suppressed: the IP is not available, but last IP is kept for the
	 * next update. */
	assert_int_equal(hwt_pt_last_ip_update(&lip, HWT_PT_IPC_SUPPRESSED,
					       0), 0);
	assert_int_equal(hwt_pt_last_ip_query(&lip, &ip),
			 -HWT_ERR_IP_SUPPRESSED);
	assert_int_equal(hwt_pt_last_ip_update(&lip, HWT_PT_IPC_UPDATE16,
					       0x2000), 0);
	assert_int_equal(query(&lip), 0xffff800000002000ull);

	/* Payload bits above the compression's width are ignored. */
	assert_int_equal(hwt_pt_last_ip_update(&lip, HWT_PT_IPC_UPDATE16,
					       0xffffffff00003000ull), 0);
	assert_int_equal(query(&lip), 0xffff800000003000ull);
}

/* An update compression first thing applies to zero (libipt). */
static void test_update_without_ip(void **state)
{
	struct hwt_pt_last_ip lip;

	(void)state;
	hwt_pt_last_ip_init(&lip);
	assert_int_equal(hwt_pt_last_ip_update(&lip, HWT_PT_IPC_UPDATE16,
					       0x1234), 0);
	assert_int_equal(query(&lip), 0x1234);
	hwt_pt_last_ip_init(&lip);
	assert_int_equal(hwt_pt_last_ip_update(&lip, HWT_PT_IPC_UPDATE48,
					       0x800000000000ull), 0);
	assert_int_equal(query(&lip), 0x800000000000ull);
}

static void test_reserved(void **state)
{
	struct hwt_pt_last_ip lip, before;

	(void)state;
	hwt_pt_last_ip_init(&lip);
	assert_int_equal(hwt_pt_last_ip_update(&lip, HWT_PT_IPC_FULL, 0x1000),
			 0);
	before = lip;
	for (unsigned ipc = 5; ipc < 16; ipc++) {
		if (ipc == HWT_PT_IPC_FULL)
			continue;
		assert_int_equal(hwt_pt_last_ip_update(&lip, ipc, 0xffff),
				 -HWT_ERR_BAD_PACKET);
		/* Unchanged on error. */
		assert_memory_equal(&lip, &before, sizeof(lip));
	}
	/* ... also when suppressed. */
	assert_int_equal(hwt_pt_last_ip_update(&lip, HWT_PT_IPC_SUPPRESSED, 0),
			 0);
	before = lip;
	assert_int_equal(hwt_pt_last_ip_update(&lip, 7, 0),
			 -HWT_ERR_BAD_PACKET);
	assert_memory_equal(&lip, &before, sizeof(lip));
}

/* A reference expansion, written independently of the library. */
static uint64_t expand(uint64_t last, unsigned ipc, uint64_t payload)
{
	switch (ipc) {
	case 1:
		return (last >> 16 << 16) | (payload & 0xffff);
	case 2:
		return (last >> 32 << 32) | (payload & 0xffffffff);
	case 3:
		payload &= 0xffffffffffffull;
		return payload & (1ull << 47) ? payload | 0xffff000000000000ull
					      : payload;
	case 4:
		return (last >> 48 << 48) | (payload & 0xffffffffffffull);
	default:
		return payload;
	}
}

static void test_random_vs_reference(void **state)
{
	static const unsigned ipcs[] = { 1, 2, 3, 4, 6 };
	struct hwt_pt_last_ip lip;
	uint64_t rs = 7, ref = 0;

	(void)state;
	hwt_pt_last_ip_init(&lip);
	for (int i = 0; i < 100000; i++) {
		unsigned ipc = ipcs[rnd(&rs) % 5];
		uint64_t payload = rnd(&rs);

		assert_int_equal(hwt_pt_last_ip_update(&lip, ipc, payload), 0);
		ref = expand(ref, ipc, payload);
		assert_int_equal(query(&lip), ref);
	}
}

/* ------------------------------------------------------------------ */
/* hwt_pt_ipc_choose                                                   */
/* ------------------------------------------------------------------ */

/*
 * The choice must (1) reproduce @ip from @lip and (2) be no bigger than
 * any compression that would also reproduce it. The payload for a given
 * compression that yields @ip is unique (the low bits of @ip), so it is
 * enough to try each cheaper compression with that payload.
 */
static void check_choose(const struct hwt_pt_last_ip *lip, uint64_t ip)
{
	static const unsigned ipcs[] = { 1, 2, 3, 4, 6 };
	struct hwt_pt_last_ip tmp;
	uint64_t payload = 0, got = 0;
	unsigned ipc;
	int size;

	ipc = hwt_pt_ipc_choose(lip, ip, &payload);
	size = hwt_pt_ipc_size(ipc);
	if (size <= 0)
		fail_msg("ip 0x%llx: chose ipc %u", (unsigned long long)ip,
			 ipc);
	/* The payload fits the compression (so the encoder accepts it). */
	if (size < 8 && payload >> (8 * size))
		fail_msg("ip 0x%llx: payload 0x%llx too wide for ipc %u",
			 (unsigned long long)ip, (unsigned long long)payload,
			 ipc);
	tmp = *lip;
	assert_int_equal(hwt_pt_last_ip_update(&tmp, ipc, payload), 0);
	assert_int_equal(hwt_pt_last_ip_query(&tmp, &got), 0);
	if (got != ip)
		fail_msg("ip 0x%llx (last 0x%llx): ipc %u payload 0x%llx "
			 "expands to 0x%llx", (unsigned long long)ip,
			 (unsigned long long)lip->ip, ipc,
			 (unsigned long long)payload, (unsigned long long)got);

	for (size_t i = 0; i < sizeof(ipcs) / sizeof(ipcs[0]); i++) {
		int other = hwt_pt_ipc_size(ipcs[i]);
		uint64_t pl;

		if (other >= size)
			continue;
		/* Updates relative to a last IP need one (no IP: the
		 * decoder would expand against 0, which an encoder must not
		 * rely on). */
		if (!lip->have_ip && ipcs[i] != 3 && ipcs[i] != 6)
			continue;
		pl = ip & ((1ull << (8 * other)) - 1);
		tmp = *lip;
		assert_int_equal(hwt_pt_last_ip_update(&tmp, ipcs[i], pl), 0);
		assert_int_equal(hwt_pt_last_ip_query(&tmp, &got), 0);
		if (got == ip)
			fail_msg("ip 0x%llx (last 0x%llx): chose ipc %u (%d "
				 "bytes) but ipc %u (%d bytes) works",
				 (unsigned long long)ip,
				 (unsigned long long)lip->ip, ipc, size,
				 ipcs[i], other);
	}
}

static void test_choose_examples(void **state)
{
	struct hwt_pt_last_ip lip;
	uint64_t payload;

	(void)state;
	hwt_pt_last_ip_init(&lip);
	/* No last IP: a user address fits sext48, a non-canonical one
	 * needs the full 8 bytes. */
	assert_int_equal(hwt_pt_ipc_choose(&lip, 0x401000, &payload),
			 HWT_PT_IPC_SEXT48);
	assert_int_equal(payload, 0x401000);
	assert_int_equal(hwt_pt_ipc_choose(&lip, 0xffffffff81000000ull,
					   &payload), HWT_PT_IPC_SEXT48);
	assert_int_equal(payload, 0xffff81000000ull);
	assert_int_equal(hwt_pt_ipc_choose(&lip, 0x1234000000000000ull,
					   &payload), HWT_PT_IPC_FULL);
	assert_int_equal(payload, 0x1234000000000000ull);

	assert_int_equal(hwt_pt_last_ip_update(&lip, HWT_PT_IPC_FULL,
					       0x00007f0000401000ull), 0);
	assert_int_equal(hwt_pt_ipc_choose(&lip, 0x00007f0000401234ull,
					   &payload), HWT_PT_IPC_UPDATE16);
	assert_int_equal(payload, 0x1234);
	assert_int_equal(hwt_pt_ipc_choose(&lip, 0x00007f0000501234ull,
					   &payload), HWT_PT_IPC_UPDATE32);
	assert_int_equal(payload, 0x00501234);
	assert_int_equal(hwt_pt_ipc_choose(&lip, 0x00007f0000401000ull,
					   &payload), HWT_PT_IPC_UPDATE16);
	assert_int_equal(payload, 0x1000);

	/* Suppressed: the last IP still counts for compression. */
	assert_int_equal(hwt_pt_last_ip_update(&lip, HWT_PT_IPC_SUPPRESSED, 0),
			 0);
	assert_int_equal(hwt_pt_ipc_choose(&lip, 0x00007f0000400000ull,
					   &payload), HWT_PT_IPC_UPDATE16);
	check_choose(&lip, 0x00007f0000400000ull);
}

/* Random IPs near and far from random last IPs, plus edge cases. */
static void test_choose_random(void **state)
{
	static const uint64_t edges[] = {
		0, 1, 0xffff, 0x10000, 0xffffffff, 0x100000000ull,
		0x7fffffffffffull, 0x800000000000ull, 0xffff800000000000ull,
		0xffff7fffffffffffull, 0x0000ffffffffffffull,
		0xffffffffffffffffull, 0x8000000000000000ull,
	};
	struct hwt_pt_last_ip lip;
	uint64_t rs = 99;

	(void)state;
	hwt_pt_last_ip_init(&lip);
	for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++)
		check_choose(&lip, edges[i]);
	for (size_t a = 0; a < sizeof(edges) / sizeof(edges[0]); a++) {
		hwt_pt_last_ip_init(&lip);
		assert_int_equal(hwt_pt_last_ip_update(&lip, HWT_PT_IPC_FULL,
						       edges[a]), 0);
		for (size_t b = 0; b < sizeof(edges) / sizeof(edges[0]); b++)
			check_choose(&lip, edges[b]);
	}

	for (int i = 0; i < 200000; i++) {
		uint64_t last = rnd(&rs), r = rnd(&rs), ip;

		/* Differ from last in a random number of low bits. */
		ip = last ^ (r >> (r & 63));
		if (i & 1)
			ip = rnd(&rs) >> (rnd(&rs) & 63);
		hwt_pt_last_ip_init(&lip);
		if (i % 5) {
			assert_int_equal(hwt_pt_last_ip_update(
				&lip, HWT_PT_IPC_FULL, last), 0);
			if (i % 7 == 0)
				assert_int_equal(hwt_pt_last_ip_update(
					&lip, HWT_PT_IPC_SUPPRESSED, 0), 0);
		}
		check_choose(&lip, ip);
	}
}

/* Encoder-side tracking: an encoder choosing compressions and a decoder
 * expanding them stay in step over a long sequence of IPs, through the
 * packet encoder and decoder. */
static void test_choose_stream_roundtrip(void **state)
{
	struct hwt_pt_last_ip enc, dec;
	uint64_t rs = 5, ip = 0xffffffff81000000ull;

	(void)state;
	hwt_pt_last_ip_init(&enc);
	hwt_pt_last_ip_init(&dec);
	for (int i = 0; i < 100000; i++) {
		struct hwt_pt_packet pkt = { .type = HWT_PT_TIP }, out;
		uint8_t buf[HWT_PT_MAX_PACKET_SIZE];
		uint64_t r = rnd(&rs), got;
		int n;

		switch (r % 4) {
		case 0:
			ip += r >> 56;		/* a short jump */
			break;
		case 1:
			ip ^= (r >> 8) & 0xffffff;
			break;
		case 2:
			ip = rnd(&rs) & 0x7fffffffffffull;	/* user */
			break;
		default:
			ip = rnd(&rs);		/* anything */
			break;
		}
		pkt.u.ip.ipc = (uint8_t)hwt_pt_ipc_choose(&enc, ip,
							  &pkt.u.ip.ip);
		n = hwt_pt_encode(buf, buf + sizeof(buf), &pkt);
		assert_true(n > 0);
		assert_int_equal(hwt_pt_last_ip_update(&enc, pkt.u.ip.ipc,
						       pkt.u.ip.ip), 0);
		assert_int_equal(hwt_pt_decode(buf, buf + n, 0, &out), n);
		assert_int_equal(hwt_pt_last_ip_update(&dec, out.u.ip.ipc,
						       out.u.ip.ip), 0);
		assert_int_equal(hwt_pt_last_ip_query(&dec, &got), 0);
		assert_int_equal(got, ip);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_each_compression),
		cmocka_unit_test(test_update_without_ip),
		cmocka_unit_test(test_reserved),
		cmocka_unit_test(test_random_vs_reference),
		cmocka_unit_test(test_choose_examples),
		cmocka_unit_test(test_choose_random),
		cmocka_unit_test(test_choose_stream_roundtrip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

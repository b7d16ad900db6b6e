/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The CLI's line formatting (src/cli/cli.h): cli_put_hex16() and
 * cli_put_hex(), which make eight hex digits at once in a word, against
 * printf's "%016llx" and "%llx" on every nibble value at every position,
 * runs of each digit and random words; cli_put_dec() against "%llu" on
 * the numbers around each power of ten and random ones; and the output
 * buffer's inline
 * reserve and commit (src/cli/outbuf.c grows or flushes it) against the
 * plain concatenation of what was written, in memory and to a file. And
 * the memo of disassembly texts (src/cli/disasm.c) against formatting
 * every time: the same bytes at another address or in another mode, other
 * bytes at the same address (code that changed), slots taken over by
 * other addresses, texts too long for a slot, bytes that do not decode.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <hwt/flow.h>

#include "cli/cli.h"
#include "rng.h"

static void check_hex(uint64_t v)
{
	char want[40], got[40];
	char *end;

	snprintf(want, sizeof(want), "%016llx", (unsigned long long)v);
	memset(got, 'X', sizeof(got));
	end = cli_put_hex16(got, v);
	assert_ptr_equal(end, got + 16);
	assert_memory_equal(got, want, 16);
	assert_int_equal(got[16], 'X');	/* nothing beyond */

	snprintf(want, sizeof(want), "%llx", (unsigned long long)v);
	memset(got, 'X', sizeof(got));
	end = cli_put_hex(got, v);
	assert_int_equal(end - got, strlen(want));
	assert_memory_equal(got, want, strlen(want));
	assert_int_equal(*end, 'X');
}

static void test_hex(void **state)
{
	struct rng r = { 16 };

	(void)state;
	check_hex(0);
	check_hex(UINT64_MAX);
	/* Each nibble value at each position, alone and over a background
	 * of every other value. */
	for (unsigned pos = 0; pos < 16; pos++)
		for (uint64_t nib = 0; nib < 16; nib++)
			for (uint64_t bg = 0; bg < 16; bg++) {
				uint64_t fill = bg * 0x1111111111111111ull;
				uint64_t mask = 0xfull << (4 * pos);

				check_hex(nib << (4 * pos));
				check_hex((fill & ~mask) | nib << (4 * pos));
			}
	for (unsigned bits = 0; bits < 64; bits++) {
		check_hex(1ull << bits);
		check_hex((1ull << bits) - 1);
	}
	for (unsigned i = 0; i < 200000; i++) {
		uint64_t v = rnd(&r);

		/* Short values too: the lengths cli_put_hex() picks. */
		check_hex(v >> rndn(&r, 64));
	}
}

static void check_dec(uint64_t v)
{
	char want[40], got[40];
	char *end;
	size_t n;

	n = (size_t)snprintf(want, sizeof(want), "%llu", (unsigned long long)v);
	memset(got, 'X', sizeof(got));
	end = cli_put_dec(got, v);
	assert_ptr_equal(end, got + n);
	assert_memory_equal(got, want, n);
	assert_int_equal(got[n], 'X');	/* nothing beyond */
}

/* The length is the bit length's guess and a compare: each side of
 * every power of ten, and of every power of two, where the guess moves. */
static void test_dec(void **state)
{
	struct rng r = { 10 };
	uint64_t p = 1;

	(void)state;
	check_dec(0);
	check_dec(UINT64_MAX);
	for (unsigned k = 0; k < 20; k++, p *= 10) {
		check_dec(p - 1);
		check_dec(p);
		check_dec(p + 1);
	}
	for (unsigned bits = 0; bits < 64; bits++) {
		check_dec(1ull << bits);
		check_dec((1ull << bits) - 1);
	}
	for (unsigned i = 0; i < 200000; i++)
		check_dec(rnd(&r) >> rndn(&r, 64));
}

/* Lines of random length through reserve/commit, then the whole. */
static void fill(struct cli_out *o, char *want, size_t *wlen, struct rng *r)
{
	*wlen = 0;
	for (unsigned i = 0; i < 5000; i++) {
		size_t n = rndn(r, 9) == 0 ? 4000 + rndn(r, 9000) :
					      rndn(r, 120);
		char *p = cli_out_reserve(o, n + 1);

		for (size_t k = 0; k < n; k++)
			p[k] = want[*wlen + k] = (char)('a' + (i + k) % 26);
		p[n] = want[*wlen + n] = '\n';
		*wlen += n + 1;
		cli_out_commit(o, p + n + 1);
	}
}

static void test_out(void **state)
{
	size_t cap = 5000 * 13002, wlen, got;
	char *want = malloc(cap), *back = malloc(cap);
	struct rng r = { 17 };
	struct cli_out o;
	FILE *f;

	(void)state;
	assert_non_null(want);
	assert_non_null(back);
	assert_int_equal(cli_out_init(&o, NULL), 0);
	fill(&o, want, &wlen, &r);
	assert_int_equal(o.len, wlen);
	assert_memory_equal(o.buf, want, wlen);
	cli_out_fini(&o);

	f = tmpfile();
	assert_non_null(f);
	assert_int_equal(cli_out_init(&o, f), 0);
	fill(&o, want, &wlen, &r);
	cli_out_fini(&o);
	rewind(f);
	got = fread(back, 1, cap, f);
	assert_int_equal(got, wlen);
	assert_memory_equal(back, want, wlen);
	fclose(f);
	free(want);
	free(back);
}

/* The memo's text of @raw (@size bytes, @mode, @ip) is Zydis's now. */
static size_t check_text(struct cli_disasm *d, struct cli_disasm_memo *m,
			 unsigned mode, const uint8_t *raw, size_t size,
			 uint64_t ip)
{
	char want[256];
	const char *got;
	size_t tlen = 0;
	int len = cli_disasm_format(d, mode, raw, size, ip, want,
				    sizeof(want));

	/* (Twice: made, then kept.) */
	for (int k = 0; k < 2; k++) {
		got = cli_disasm_text(d, m, mode, raw, size, ip, &tlen);
		if (len < 0 || (size_t)len != size) {
			/* Callers pass an instruction's own bytes. */
			if (len < 0)
				assert_null(got);
			continue;
		}
		assert_non_null(got);
		assert_int_equal(tlen, strlen(want));
		assert_string_equal(got, want);
	}
	return len < 0 ? 0 : strlen(want);
}

static void test_disasm_memo(void **state)
{
	static const uint8_t nop[] = { 0x90 }, ret[] = { 0xc3 };
	static const uint8_t jmp0[] = { 0xeb, 0x00 }, rex[] = { 0x40 };
	static const uint8_t pushf[] = { 0x9c };
	/* vgf2p8affineinvqb ymm15 {k2} {z}, ymm10, [rcx+rbp*4-0x390CA05A]
	 * {1to4}, 0xC5: 76 characters, more than a slot holds. */
	static const uint8_t evex[] = { 0x62, 0x73, 0xad, 0xba, 0xcf, 0xbc,
					0xa9, 0xa6, 0x5f, 0xf3, 0xc6, 0xc5 };
	struct cli_disasm *d = cli_disasm_new(0);
	struct cli_disasm_memo *m = cli_disasm_memo_new();
	struct rng r = { 18 };
	unsigned nok = 0;

	(void)state;
	assert_non_null(d);
	assert_non_null(m);
	check_text(d, m, HWT_MODE_64, nop, 1, 0x1000);
	/* Other code at the same address. */
	check_text(d, m, HWT_MODE_64, ret, 1, 0x1000);
	/* The same bytes elsewhere: another target. */
	check_text(d, m, HWT_MODE_64, jmp0, 2, 0x1000);
	check_text(d, m, HWT_MODE_64, jmp0, 2, 0x2000);
	check_text(d, m, HWT_MODE_64, jmp0, 2, 0x1000);
	/* inc eax in 32-bit code, a prefix alone in 64-bit code. */
	check_text(d, m, HWT_MODE_32, rex, 1, 0x3000);
	check_text(d, m, HWT_MODE_64, rex, 1, 0x3000);
	check_text(d, m, HWT_MODE_32, rex, 1, 0x3000);
	/* pushfq, then pushfd: the same byte at the same address. */
	check_text(d, m, HWT_MODE_64, pushf, 1, 0x3000);
	check_text(d, m, HWT_MODE_32, pushf, 1, 0x3000);
	check_text(d, m, HWT_MODE_16, pushf, 1, 0x3000);
	assert_true(check_text(d, m, HWT_MODE_64, evex, sizeof(evex),
			       0x4000) >= 72);
	check_text(d, m, HWT_MODE_64, nop, 1, 0x4000);
	/* Random bytes at random addresses, more than the slots: each as
	 * long as the instruction it starts (a third EVEX). */
	for (unsigned i = 0; i < 300000; i++) {
		uint8_t raw[15];
		char tmp[256];
		unsigned mode = HWT_MODE_16 + rndn(&r, 3);
		uint64_t ip = 0x400000 + rndn(&r, 1 << 20);
		int len;

		for (unsigned k = 0; k < sizeof(raw); k++)
			raw[k] = (uint8_t)rnd(&r);
		if (i % 3 == 0)
			raw[0] = 0x62;	/* EVEX */
		len = cli_disasm_format(d, mode, raw, sizeof(raw), ip, tmp,
					sizeof(tmp));
		if (len <= 0)
			continue;
		nok++;
		check_text(d, m, mode, raw, (size_t)len, ip);
	}
	assert_true(nok > 100000);
	cli_disasm_memo_delete(m);
	cli_disasm_delete(d);
}

/* The memo by image (cli_disasm_text_at()): *@want, or NULL. */
static void check_at(struct cli_disasm *d, struct cli_disasm_memo *m,
		     const struct hwt_image *image, unsigned mode,
		     uint64_t ip, size_t size, const char *want)
{
	size_t tlen = 0;

	/* (Twice: made, then kept.) */
	for (int k = 0; k < 2; k++) {
		struct cli_image_key img = cli_image_key(image);
		const char *got = cli_disasm_text_at(d, m, &img, mode, ip,
						     size, &tlen);

		if (!want) {
			assert_null(got);
			continue;
		}
		assert_non_null(got);
		assert_int_equal(tlen, strlen(want));
		assert_string_equal(got, want);
	}
}

static void test_disasm_at(void **state)
{
	static const uint8_t nop[] = { 0x90 }, ret[] = { 0xc3 };
	static const uint8_t rex[] = { 0x40 }, ud[] = { 0x0f, 0xff };
	/* mov rax, rbx, its last byte in a section of its own */
	static const uint8_t mov_lo[] = { 0x48, 0x89 }, mov_hi[] = { 0xd8 };
	struct cli_disasm *d = cli_disasm_new(0);
	struct cli_disasm_memo *m = cli_disasm_memo_new();
	struct hwt_image *a = hwt_image_new(), *b = hwt_image_new();
	char tmp[256];

	(void)state;
	assert_non_null(d);
	assert_non_null(m);
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(hwt_image_add_buffer(a, nop, 1, 0x1000), 0);
	assert_int_equal(hwt_image_add_buffer(b, ret, 1, 0x1000), 0);
	check_at(d, m, a, HWT_MODE_64, 0x1000, 1, "nop");
	/* Another image, other code at the same address; and back. */
	check_at(d, m, b, HWT_MODE_64, 0x1000, 1, "ret");
	check_at(d, m, a, HWT_MODE_64, 0x1000, 1, "nop");
	/* Another mode: inc eax, then a prefix alone. */
	assert_int_equal(hwt_image_add_buffer(a, rex, 1, 0x3000), 0);
	assert_true(cli_disasm_format(d, HWT_MODE_32, rex, 1, 0x3000, tmp,
				      sizeof(tmp)) == 1);
	check_at(d, m, a, HWT_MODE_32, 0x3000, 1, tmp);
	check_at(d, m, a, HWT_MODE_64, 0x3000, 1, NULL);
	check_at(d, m, a, HWT_MODE_32, 0x3000, 1, tmp);
	/* The image changed (a new generation): a section over the nop. */
	check_at(d, m, a, HWT_MODE_64, 0x1000, 1, "nop");
	assert_int_equal(hwt_image_add_buffer(a, ret, 1, 0x1000), 0);
	check_at(d, m, a, HWT_MODE_64, 0x1000, 1, "ret");
	/* Bytes in two sections; bytes that do not decode; none. */
	assert_int_equal(hwt_image_add_buffer(a, mov_lo, 2, 0x2000), 0);
	assert_int_equal(hwt_image_add_buffer(a, mov_hi, 1, 0x2002), 0);
	check_at(d, m, a, HWT_MODE_64, 0x2000, 3, NULL);
	assert_int_equal(hwt_image_add_buffer(a, ud, 2, 0x4000), 0);
	check_at(d, m, a, HWT_MODE_64, 0x4000, 2, NULL);
	check_at(d, m, a, HWT_MODE_64, 0x5000, 1, NULL);
	/* The bytes' memo still tells them apart from the image's. */
	check_text(d, m, HWT_MODE_64, nop, 1, 0x1000);
	check_at(d, m, a, HWT_MODE_64, 0x1000, 1, "ret");
	hwt_image_delete(a);
	hwt_image_delete(b);
	cli_disasm_memo_delete(m);
	cli_disasm_delete(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hex),
		cmocka_unit_test(test_dec),
		cmocka_unit_test(test_out),
		cmocka_unit_test(test_disasm_memo),
		cmocka_unit_test(test_disasm_at),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hwt coverage's AFL maps (CLI_MAP_SIZE counters): adding them up and
 * hashing them (and, for many traces, both and clearing in one pass), at
 * a cost that matters next to decoding a small trace.
 */
#include <stdint.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "cli/cli.h"

static inline uint8_t add_sat(uint8_t a, uint8_t b)
{
	uint8_t v = (uint8_t)(a + b);

	return v < a ? 0xff : v;
}

void cli_map_add(uint8_t *restrict dst, const uint8_t *restrict src)
{
#ifdef __SSE2__
	for (size_t i = 0; i < CLI_MAP_SIZE; i += 16) {
		__m128i a = _mm_loadu_si128((const __m128i *)(dst + i));
		__m128i b = _mm_loadu_si128((const __m128i *)(src + i));

		_mm_storeu_si128((__m128i *)(dst + i), _mm_adds_epu8(a, b));
	}
#else
	for (size_t i = 0; i < CLI_MAP_SIZE; i++)
		dst[i] = add_sat(dst[i], src[i]);
#endif
}

/* Bit i set if byte i of @p[0..63] is not zero. */
static uint64_t map_chunk_mask(const uint8_t *p)
{
#ifdef __SSE2__
	const __m128i zero = _mm_setzero_si128();
	uint64_t mask = 0;

	for (unsigned k = 0; k < 4; k++) {
		__m128i v = _mm_loadu_si128((const __m128i *)(p + 16 * k));
		unsigned z = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, zero));

		mask |= (uint64_t)(~z & 0xffffu) << (16 * k);
	}
	return mask;
#else
	uint64_t mask = 0;

	for (unsigned i = 0; i < 64; i++)
		mask |= (uint64_t)(p[i] != 0) << i;
	return mask;
#endif
}

/*
 * Most cells are zero, and a zero byte only multiplies FNV-1a's hash by
 * the prime: a run of k zeros is one multiply by prime^k. The cells set
 * are found 64 at a time, from a mask, without a branch per cell; @sum
 * (unless NULL) takes each, and @clear (@map, or NULL) loses it. (With
 * many small traces (hwt coverage T1 T2 ...), hashing each trace's map a
 * byte at a time took longer than decoding the trace; then clearing the
 * map and adding it to the union, a pass over the 64 KiB each, were most
 * of what was left. A table of prime^(64q) made once, for one multiply
 * per run of any length, was no faster: the two multiplies per cell set
 * are the time.)
 */
static uint64_t map_walk(const uint8_t *map, uint8_t *sum, uint8_t *clear,
			 size_t *edges)
{
	const uint64_t prime = 0x100000001b3ull;
	uint64_t pw[65], h = 0xcbf29ce484222325ull, mask;
	size_t next = 0, n = 0, j, k;

	pw[0] = 1;
	for (k = 1; k <= 64; k++)
		pw[k] = pw[k - 1] * prime;
	/*
	 * @h is the hash up to cell @next, but for the multiply by the prime
	 * that the last cell set owes: that one and the zeros' up to the next
	 * cell set are one multiply (one in the chain of multiplies per cell
	 * set, not two: a map of 4,850 cells set, a synthetic slice's, in
	 * 8-10 us instead of 10-14).
	 */
	for (size_t c = 0; c < CLI_MAP_SIZE; c += 64) {
		for (mask = map_chunk_mask(map + c); mask; mask &= mask - 1) {
			j = c + (size_t)__builtin_ctzll(mask);
			for (k = j - next; k > 64; k -= 64)
				h *= pw[64];
			h = (h * pw[k]) ^ map[j];
			if (sum)
				sum[j] = add_sat(sum[j], map[j]);
			if (clear)
				clear[j] = 0;
			next = j;
			n++;
		}
	}
	for (k = CLI_MAP_SIZE - next; k > 64; k -= 64)
		h *= pw[64];
	*edges = n;
	return h * pw[k];
}

uint64_t cli_map_hash(const uint8_t *map, size_t *edges)
{
	return map_walk(map, NULL, NULL, edges);
}

uint64_t cli_map_take(uint8_t *map, uint8_t *sum, size_t *edges)
{
	return map_walk(map, sum, map, edges);
}

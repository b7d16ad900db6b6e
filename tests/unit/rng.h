/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Random numbers for the tests that make their inputs: splitmix64 with
 * fixed seeds, the same streams on every run.
 */
#ifndef HWT_TESTS_RNG_H
#define HWT_TESTS_RNG_H

#include <stdint.h>

struct rng {
	uint64_t s;
};

static inline uint64_t rnd(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static inline unsigned rndn(struct rng *r, unsigned n)
{
	return (unsigned)(rnd(r) % n);
}

#endif /* HWT_TESTS_RNG_H */

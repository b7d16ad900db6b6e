/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bench_fuzz: a fuzzer's loop on the library (libxdc's use, without the
 * CLI's files and printing): many small traces of one program, each
 * folded into a cleared AFL map, by one decoder that hwt_blk_set_trace()
 * moves from trace to trace (its block cache warm), and by a new decoder
 * for each trace, to compare.
 *
 *   bench_fuzz [-s SLICE] [-c COUNT] [-n ROUNDS] --raw FILE[:FROM[-TO]]:BASE
 *              ... TRACE[:FROM[-TO]] ...
 *
 * Several TRACEs (or ranges) are the slices, in memory. One TRACE is cut
 * into COUNT slices (default 200) of at least SLICE bytes (default 16K),
 * each from a PSB to a PSB, spread over it. A round folds every slice
 * once: the map cleared,
 * hwt_blk_set_trace() (or hwt_blk_new()), hwt_blk_sync_forward(), then
 * hwt_blk_fold_next() and hwt_blk_next() where it must, the map's previous
 * location reset at every event (as hwt coverage does). Prints, for the
 * best of ROUNDS (default 5) rounds with one decoder (kept from round to
 * round, after a round to warm it up) and for one round with a decoder
 * each: microseconds a slice, nanoseconds a canonical block, slices a
 * second; exits 1 if the two ways count other instructions or blocks.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <hwt/flow.h>
#include <hwt/image.h>
#include <hwt/pt.h>

#include "flow/slurp.h"
#include "fold_loop.h"

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The first PSB at or after @off (where hwt syncs), or @size. */
static size_t psb_at(const uint8_t *buf, size_t size, size_t off)
{
	struct hwt_pkt_decoder *pd;
	uint64_t at = size - off;

	if (off >= size)
		return size;
	pd = hwt_pkt_decoder_new(buf + off, size - off);
	if (pd && hwt_pkt_sync_forward(pd) == 0)
		hwt_pkt_get_sync_offset(pd, &at);
	hwt_pkt_decoder_delete(pd);
	return off + (size_t)at;
}

struct slice {
	const uint8_t *begin, *end;
};

/* What a round folded. */
struct counts {
	uint64_t ninsn, nblocks;
};

/* The map's previous location starts over at every event and sync. */
static void fold_at(void *ctx, struct hwt_blk_fold *fold, enum fold_at at,
		    int status, const struct hwt_event *ev)
{
	(void) ctx;
	(void) status;
	(void) ev;
	if (at != FOLD_AT_END)
		fold->prev = 0;
}

/* Fold the trace @d is set to into @map (cleared here). */
static void fold_one(struct hwt_blk_decoder *d, uint8_t *map,
		     struct counts *c)
{
	static const struct fold_loop how = {
		.max_syncs = ~0u, .max_steps = ~0u, .fast = 1, .at = fold_at,
	};
	struct hwt_blk_fold fold;

	memset(map, 0, HWT_BLK_FOLD_MAP_SIZE);
	hwt_blk_fold_init(&fold, map);
	fold_loop_run(&how, d, &fold);
	c->ninsn += fold.ninsn;
	c->nblocks += fold.nblocks;
}

/*
 * One round over @s[0..@n). @warm: *@dp decodes them all (made at the
 * first slice if NULL, and kept for the next round, as a fuzzer keeps
 * its decoder); else a new decoder each. Seconds.
 */
static double round_of(const struct slice *s, size_t n,
		       struct hwt_blk_decoder **dp, int warm,
		       const struct hwt_blk_config *config,
		       struct hwt_image *image, uint8_t *map, struct counts *c)
{
	struct hwt_blk_config cfg = *config;
	double t0 = now();

	memset(c, 0, sizeof(*c));
	for (size_t k = 0; k < n; k++) {
		if (warm && *dp) {
			if (hwt_blk_set_trace(*dp, s[k].begin, s[k].end) < 0)
				exit(1);
		} else {
			cfg.qry.begin = s[k].begin;
			cfg.qry.end = s[k].end;
			hwt_blk_delete(*dp);
			*dp = hwt_blk_new(&cfg, image);
			if (!*dp)
				exit(1);
		}
		fold_one(*dp, map, c);
	}
	return now() - t0;
}

int main(int argc, char **argv)
{
	static uint8_t map[HWT_BLK_FOLD_MAP_SIZE];
	size_t slice = 16 << 10, count = 200, n = 0, size, bytes = 0;
	struct hwt_image *image = hwt_image_new();
	struct counts c[2];
	struct hwt_blk_config cfg;
	struct raw *traces = NULL;
	size_t ntraces = 0;
	unsigned rounds = 5;
	struct slice *s;
	uint8_t *buf = NULL;
	int i;

	if (!image)
		return 1;
	hwt_image_set_symbols(image, 0);
	for (i = 1; i < argc; i++) {
		struct raw r;

		if (!strcmp(argv[i], "-s") && i + 1 < argc)
			slice = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "-c") && i + 1 < argc)
			count = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "-n") && i + 1 < argc)
			rounds = (unsigned)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--raw") && i + 1 < argc) {
			if (parse_raw(argv[++i], &r) < 0 ||
			    hwt_image_add_file(image, r.file, r.offset, r.size,
					       r.base) < 0) {
				fprintf(stderr, "bench_fuzz: bad --raw %s\n",
					argv[i]);
				return 2;
			}
			free(r.file);
		} else if (argv[i][0] != '-') {
			traces = realloc(traces,
					 (ntraces + 1) * sizeof(*traces));
			if (!traces || parse_range(argv[i], &traces[ntraces++]))
				goto usage;
		} else
			goto usage;
	}
	if (!ntraces || !count || !rounds || !slice)
		goto usage;

	if (ntraces > 1) {
		/* The slices given. */
		s = calloc(ntraces, sizeof(*s));
		if (!s)
			return 1;
		for (n = 0; n < ntraces; n++) {
			uint8_t *b = slurp_range("bench_fuzz", traces[n].file,
						 traces[n].offset,
						 traces[n].size, &size);

			s[n].begin = b;
			s[n].end = b + size;
			bytes += size;
		}
	} else {
		buf = slurp_range("bench_fuzz", traces[0].file,
				  traces[0].offset, traces[0].size, &size);
		s = calloc(count, sizeof(*s));
		if (!s)
			return 1;
		for (size_t k = 0; k < count; k++) {
			size_t from = psb_at(buf, size, size / count * k);
			size_t to = psb_at(buf, size, from + slice);

			if (from >= size || (n && buf + from < s[n - 1].end))
				continue;
			s[n].begin = buf + from;
			s[n].end = buf + to;
			bytes += to - from;
			n++;
		}
	}
	if (!n) {
		fprintf(stderr, "bench_fuzz: %s: no PSB\n", traces[0].file);
		return 1;
	}
	hwt_blk_config_init(&cfg);
	/* As hwt coverage: blocks end at every branch. */
	cfg.flags = HWT_BLK_END_ON_CALL | HWT_BLK_END_ON_JUMP;

	printf("%zu slices, %zu bytes (%zu a slice)\n", n, bytes, bytes / n);
	for (int warm = 1; warm >= 0; warm--) {
		struct hwt_blk_decoder *d = NULL;
		double best = 0;

		/* (The warm way's first round warms the decoder up and is not
		 * counted; the cold way, ten times slower, runs once.) */
		for (unsigned r = 0; r < (warm ? rounds + 1 : 1); r++) {
			double t = round_of(s, n, &d, warm, &cfg, image, map,
					    &c[warm]);

			if (warm && !r)
				continue;
			if (!best || t < best)
				best = t;
		}
		hwt_blk_delete(d);
		printf("  %-22s %9.1f us a slice %7.2f ns a block "
		       "%9.0f slices/s\n",
		       warm ? "one decoder (warm)" : "a decoder each (cold)",
		       best / (double)n * 1e6,
		       best / (double)c[warm].nblocks * 1e9, (double)n / best);
	}
	printf("  %llu instructions, %llu canonical blocks a round\n",
	       (unsigned long long)c[1].ninsn,
	       (unsigned long long)c[1].nblocks);
	for (size_t k = 0; !buf && k < n; k++)
		free((void *)s[k].begin);
	for (size_t k = 0; k < ntraces; k++)
		free(traces[k].file);
	free(traces);
	free(s);
	free(buf);
	hwt_image_delete(image);
	if (c[0].ninsn != c[1].ninsn || c[0].nblocks != c[1].nblocks) {
		fprintf(stderr, "bench_fuzz: the two ways differ\n");
		return 1;
	}
	return 0;

usage:
	fprintf(stderr, "usage: bench_fuzz [-s SLICE] [-c COUNT] [-n ROUNDS] "
		"--raw FILE[:FROM[-TO]]:BASE ... TRACE[:FROM[-TO]] ...\n");
	return 2;
}

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ipt_blk: libipt's block decoder (pt_blk_*) over a trace, as a benchmark
 * peer and cross-check oracle for hwt's. Not built by CMake (it needs
 * libipt 2.1.2, which scripts/fetch-libipt.sh builds): bench/run-flow.sh
 * and scripts/crosscheck-libipt.sh compile it against that.
 *
 *   ipt_blk [--blocks] [--end-on-call] [--end-on-jump] [-n ROUNDS]
 *           --raw FILE[:FROM[-TO]]:BASE ... TRACE[:FROM[-TO]] ...
 *
 * Each --raw maps bytes FROM..TO of FILE (default: all of it) at BASE, as
 * hwt's --raw does, so both decoders get the same image. The sections go
 * through an image section cache, as in libipt's ptxed: without one,
 * libipt maps a section again each time the flow enters it.
 *
 * Several traces (or ranges of one) are decoded one after the other, each
 * by a new decoder (libipt's decoders take their trace when allocated),
 * all with the one section cache, whose sections keep their block caches
 * (as a fuzzer using libipt would decode its runs); the counts are the
 * sums. With -n ROUNDS, all of them ROUNDS times (the traces read once),
 * "seconds" the best round's: libipt's caches warm, as a fuzzer's are.
 *
 * Prints "insn N", "blocks N" (as libipt's ptxed --stat:blocks counts them),
 * "errors N", then "seconds S" and "maxrss_kb N"
 * (getrusage) on stdout;
 * the first decode error on stderr. With --blocks, first one line per
 * block: "IP END_IP NINSN" (hex, hex, decimal).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include <intel-pt.h>

#include "slurp.h"

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Decode @trace with a new decoder over @iscache's sections. */
static int decode(const struct pt_config *tmpl, uint8_t *trace, size_t size,
		  struct pt_image_section_cache *iscache, const int *isids,
		  int nisids, int show_blocks, uint64_t *ninsn,
		  uint64_t *nblocks, uint64_t *nerrors)
{
	struct pt_config config = *tmpl;
	struct pt_block_decoder *dec;

	config.begin = trace;
	config.end = trace + size;
	dec = pt_blk_alloc_decoder(&config);
	if (!dec)
		return -1;
	for (int i = 0; i < nisids; i++)
		if (pt_image_add_cached(pt_blk_get_image(dec), iscache,
					isids[i], NULL) < 0) {
			pt_blk_free_decoder(dec);
			return -1;
		}
	for (;;) {
		int st = pt_blk_sync_forward(dec);

		if (st < 0) {
			if (st != -pte_eos)
				(*nerrors)++;
			break;
		}
		for (;;) {
			struct pt_block block;

			while (st >= 0 && (st & pts_event_pending)) {
				struct pt_event ev;

				st = pt_blk_event(dec, &ev, sizeof(ev));
			}
			if (st < 0 || (st & pts_eos))
				break;
			st = pt_blk_next(dec, &block, sizeof(block));
			/* Counted as libipt's ptxed counts them: empty blocks
			 * too, but not an empty one with an error. */
			*ninsn += block.ninsn;
			*nblocks += st >= 0 || block.ninsn;
			if (show_blocks && block.ninsn)
				printf("%" PRIx64 " %" PRIx64 " %u\n", block.ip,
				       block.end_ip, block.ninsn);
			if (st < 0)
				break;
		}
		if (st < 0 && st != -pte_eos) {
			if (!(*nerrors)++)
				fprintf(stderr, "ipt_blk: first error: %s\n",
					pt_errstr(pt_errcode(st)));
			if (show_blocks)
				printf("error %s\n", pt_errstr(pt_errcode(st)));
		}
	}
	pt_blk_free_decoder(dec);
	return 0;
}

int main(int argc, char **argv)
{
	int show_blocks = 0, end_on_call = 0, end_on_jump = 0, i;
	uint64_t ninsn = 0, nblocks = 0, nerrors = 0;
	struct pt_image_section_cache *iscache;
	struct raw *raws = NULL, *traces = NULL;
	int nraws = 0, ntraces = 0, rounds = 1, *isids;
	struct pt_config config;
	double seconds = 0, setup, best = 0;
	uint8_t **bufs;
	size_t *sizes;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--blocks"))
			show_blocks = 1;
		else if (!strcmp(argv[i], "--end-on-call"))
			end_on_call = 1;
		else if (!strcmp(argv[i], "--end-on-jump"))
			end_on_jump = 1;
		else if (!strcmp(argv[i], "-n") && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--raw") && i + 1 < argc) {
			raws = realloc(raws, (size_t)(nraws + 1) * sizeof(*raws));
			if (!raws || parse_raw(argv[++i], &raws[nraws++]) < 0)
				goto usage;
		}
		else if (argv[i][0] != '-') {
			traces = realloc(traces,
					 (size_t)(ntraces + 1) * sizeof(*traces));
			if (!traces ||
			    parse_range(argv[i], &traces[ntraces++]) < 0)
				goto usage;
		}
		else
			goto usage;
	}
	if (!nraws || !ntraces || rounds < 1)
		goto usage;
	bufs = calloc((size_t)ntraces, sizeof(*bufs));
	sizes = calloc((size_t)ntraces, sizeof(*sizes));
	if (!bufs || !sizes)
		return 1;
	for (i = 0; i < ntraces; i++)
		bufs[i] = slurp_range("ipt_blk", traces[i].file,
				      traces[i].offset, traces[i].size,
				      &sizes[i]);

	pt_config_init(&config);
	config.flags.variant.block.end_on_call = end_on_call;
	config.flags.variant.block.end_on_jump = end_on_jump;

	double t0 = now();

	iscache = pt_iscache_alloc(NULL);
	isids = calloc((size_t)nraws, sizeof(*isids));
	if (!iscache || !isids) {
		fprintf(stderr, "ipt_blk: cannot set up the section cache\n");
		return 1;
	}
	for (i = 0; i < nraws; i++) {
		isids[i] = pt_iscache_add_file(iscache, raws[i].file,
					       raws[i].offset, raws[i].size,
					       raws[i].base);
		if (isids[i] < 0) {
			fprintf(stderr, "ipt_blk: cannot map %s\n",
				raws[i].file);
			return 1;
		}
	}
	setup = now() - t0;
	for (int r = 0; r < rounds; r++) {
		ninsn = nblocks = nerrors = 0;
		t0 = now();
		for (i = 0; i < ntraces; i++)
			if (decode(&config, bufs[i], sizes[i], iscache, isids,
				   nraws, show_blocks && !r, &ninsn, &nblocks,
				   &nerrors) < 0) {
				fprintf(stderr, "ipt_blk: cannot set up the "
					"decoder\n");
				return 1;
			}
		seconds = now() - t0;
		if (!r || seconds < best)
			best = seconds;
	}
	/* One round: with the section cache set up (as before -n). */
	seconds = rounds > 1 ? best : best + setup;
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	pt_iscache_free(iscache);
	printf("insn %" PRIu64 "\nblocks %" PRIu64 "\nerrors %" PRIu64
	       "\nseconds %.6f\nmaxrss_kb %ld\n", ninsn, nblocks, nerrors,
	       seconds, ru.ru_maxrss);
	for (i = 0; i < nraws; i++)
		free(raws[i].file);
	for (i = 0; i < ntraces; i++) {
		free(traces[i].file);
		free(bufs[i]);
	}
	free(bufs);
	free(sizes);
	free(raws);
	free(traces);
	free(isids);
	return 0;

usage:
	fprintf(stderr, "usage: ipt_blk [--blocks] [--end-on-call] [--end-on-jump] [-n ROUNDS] --raw FILE[:FROM[-TO]]:BASE ... TRACE[:FROM[-TO]] ...\n");
	return 2;
}

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ipt_blk: libipt's block decoder (pt_blk_*) over a trace, as a benchmark
 * peer and cross-check oracle for hwt's. Not built by CMake (it needs
 * libipt 2.1.2, which scripts/fetch-libipt.sh builds): bench/run-flow.sh
 * and scripts/crosscheck-libipt.sh compile it against that.
 *
 *   ipt_blk [--blocks] [--end-on-call] [--end-on-jump] --raw FILE:BASE TRACE
 *
 * Prints "insn N", "blocks N", "errors N", then "seconds S" and "maxrss_kb N"
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

static uint8_t *slurp(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long n;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET))
		goto fail;
	buf = malloc(n ? (size_t)n : 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n)
		goto fail;
	fclose(f);
	*size = (size_t)n;
	return buf;
fail:
	fprintf(stderr, "ipt_blk: %s: %s\n", path, strerror(errno));
	exit(1);
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	const char *raw = NULL, *trace_path = NULL;
	int show_blocks = 0, end_on_call = 0, end_on_jump = 0, i;
	uint64_t ninsn = 0, nblocks = 0, nerrors = 0, base;
	size_t size;
	char *colon, *file;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--blocks"))
			show_blocks = 1;
		else if (!strcmp(argv[i], "--end-on-call"))
			end_on_call = 1;
		else if (!strcmp(argv[i], "--end-on-jump"))
			end_on_jump = 1;
		else if (!strcmp(argv[i], "--raw") && i + 1 < argc)
			raw = argv[++i];
		else if (argv[i][0] != '-' && !trace_path)
			trace_path = argv[i];
		else
			goto usage;
	}
	if (!raw || !trace_path || !(colon = strrchr(raw, ':')))
		goto usage;
	file = strndup(raw, (size_t)(colon - raw));
	base = strtoull(colon + 1, NULL, 0);

	uint8_t *trace = slurp(trace_path, &size);
	struct pt_config config;

	pt_config_init(&config);
	config.begin = trace;
	config.end = trace + size;
	config.flags.variant.block.end_on_call = end_on_call;
	config.flags.variant.block.end_on_jump = end_on_jump;

	struct stat st_file;

	if (stat(file, &st_file)) {
		fprintf(stderr, "ipt_blk: %s: %s\n", file, strerror(errno));
		return 1;
	}

	double t0 = now();
	struct pt_block_decoder *dec = pt_blk_alloc_decoder(&config);

	if (!dec || pt_image_add_file(pt_blk_get_image(dec), file, 0,
				      (uint64_t)st_file.st_size, NULL, base) < 0) {
		fprintf(stderr, "ipt_blk: cannot set up the decoder\n");
		return 1;
	}
	for (;;) {
		int st = pt_blk_sync_forward(dec);

		if (st < 0) {
			if (st != -pte_eos)
				nerrors++;
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
			ninsn += block.ninsn;
			nblocks += block.ninsn != 0;
			if (show_blocks && block.ninsn)
				printf("%" PRIx64 " %" PRIx64 " %u\n", block.ip,
				       block.end_ip, block.ninsn);
			if (st < 0)
				break;
		}
		if (st < 0 && st != -pte_eos) {
			if (!nerrors++)
				fprintf(stderr, "ipt_blk: first error: %s\n",
					pt_errstr(pt_errcode(st)));
			if (show_blocks)
				printf("error %s\n", pt_errstr(pt_errcode(st)));
		}
	}
	double t1 = now();
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	pt_blk_free_decoder(dec);
	printf("insn %" PRIu64 "\nblocks %" PRIu64 "\nerrors %" PRIu64
	       "\nseconds %.6f\nmaxrss_kb %ld\n", ninsn, nblocks, nerrors,
	       t1 - t0, ru.ru_maxrss);
	free(trace);
	free(file);
	return 0;

usage:
	fprintf(stderr, "usage: ipt_blk [--blocks] [--end-on-call] [--end-on-jump] --raw FILE:BASE TRACE\n");
	return 2;
}

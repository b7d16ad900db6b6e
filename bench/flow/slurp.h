/* SPDX-License-Identifier: BSD-2-Clause */
/* A file (or part of one) in memory, for the libipt harnesses (ipt_blk.c,
 * ipt_sb.c). */
#ifndef HWT_BENCH_FLOW_SLURP_H
#define HWT_BENCH_FLOW_SLURP_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* @path's bytes (exits with a message naming @prog if it cannot). */
static inline uint8_t *slurp(const char *prog, const char *path, size_t *size)
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
	fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
	exit(1);
}

/* @size bytes of @path from @offset (exits with a message if it cannot). */
static inline uint8_t *slurp_range(const char *prog, const char *path,
			    uint64_t offset, uint64_t size, size_t *got)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = malloc(size ? (size_t)size : 1);

	if (!f || !buf || fseek(f, (long)offset, SEEK_SET) ||
	    fread(buf, 1, (size_t)size, f) != (size_t)size) {
		fprintf(stderr, "%s: %s: %s\n", prog, path,
			errno ? strerror(errno) : "short read");
		exit(1);
	}
	fclose(f);
	*got = (size_t)size;
	return buf;
}

#endif /* HWT_BENCH_FLOW_SLURP_H */

/* SPDX-License-Identifier: BSD-2-Clause */
/* A whole file in memory, for the libipt harnesses (ipt_blk.c, ipt_sb.c). */
#ifndef HWT_BENCH_FLOW_SLURP_H
#define HWT_BENCH_FLOW_SLURP_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* @path's bytes (exits with a message naming @prog if it cannot). */
static uint8_t *slurp(const char *prog, const char *path, size_t *size)
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

#endif /* HWT_BENCH_FLOW_SLURP_H */

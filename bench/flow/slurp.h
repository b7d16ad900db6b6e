/* SPDX-License-Identifier: BSD-2-Clause */
/* Files (or parts of them) in memory, and FILE[:FROM[-TO]][:BASE]
 * arguments, for the harnesses (ipt_blk.c, ipt_sb.c, ../bench_fuzz.c). */
#ifndef HWT_BENCH_FLOW_SLURP_H
#define HWT_BENCH_FLOW_SLURP_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

/* A file range at an address (--raw), or a trace range. */
struct raw {
	char *file;
	uint64_t offset, size, base;
};

/* FILE[:FROM[-TO]] into @r (with a copy of FILE), numbers in C syntax;
 * 0 or -1. */
static inline int parse_range(const char *arg, struct raw *r)
{
	char *colon, *end;
	struct stat st;

	memset(r, 0, sizeof(*r));
	r->file = strdup(arg);
	if (!r->file)
		return -1;
	colon = strrchr(r->file, ':');
	if (colon && colon[1] >= '0' && colon[1] <= '9') {
		uint64_t to = 0;

		r->offset = strtoull(colon + 1, &end, 0);
		if (*end == '-')
			to = strtoull(end + 1, &end, 0);
		if (*end || (to && to <= r->offset))
			return -1;
		r->size = to ? to - r->offset : 0;
		*colon = 0;
	}
	if (stat(r->file, &st)) {
		fprintf(stderr, "%s: %s\n", r->file, strerror(errno));
		exit(1);
	}
	if (r->offset > (uint64_t)st.st_size)
		return -1;
	if (!r->size || r->size > (uint64_t)st.st_size - r->offset)
		r->size = (uint64_t)st.st_size - r->offset;
	return 0;
}

/* FILE[:FROM[-TO]]:BASE; 0 or -1. */
static inline int parse_raw(const char *arg, struct raw *r)
{
	const char *colon = strrchr(arg, ':');
	uint64_t base;
	char *end, *file;
	int ret;

	if (!colon)
		return -1;
	base = strtoull(colon + 1, &end, 0);
	if (*end || end == colon + 1)
		return -1;
	file = strndup(arg, (size_t)(colon - arg));
	if (!file)
		return -1;
	ret = parse_range(file, r);
	free(file);
	r->base = base;
	return ret;
}

#endif /* HWT_BENCH_FLOW_SLURP_H */

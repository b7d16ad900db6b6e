/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * perf record -z: the records of PERF_RECORD_COMPRESSED. perf compresses
 * what it reads from its ring buffers as one zstd stream cut into
 * compressed records of at most 64 KiB; a record may start in one and end
 * in the next, so the decompressed bytes not yet handed out stay at the
 * front of the buffer and the next compressed record's follow them, as in
 * perf's own reader. AUX trace is written uncompressed beside them.
 *
 * Records from a compressed record carry its file offset (their own has
 * none); errors say where in its decompressed bytes they are.
 */
#include <stdlib.h>
#include <string.h>

#ifdef HWT_HAVE_ZSTD
#include <zstd.h>
#endif

#include "common/grow.h"
#include "perfdata/reader_int.h"

/* What one compressed record may expand to: perf's are 64 KiB of a
 * stream of records that compresses a few times; more is a bomb. */
#define Z_MAX_OUT (64u << 20)

struct pdr_z {
	uint8_t *buf;
	size_t len, pos, cap;
	uint64_t off;		/* the compressed record the front came from */
	uint64_t last_off;	/* the last one fed, whose bytes start at */
	size_t last_at;		/* ... this position */
#ifdef HWT_HAVE_ZSTD
	ZSTD_DStream *ds;
#endif
};

const char *pdr_z_unfinished(const struct hwt_pd_reader *r)
{
	if (!r->z)
		return NULL;
	if (r->z->len > r->z->pos)
		return "inside a record";
	return NULL;
}

void pdr_z_reset(struct hwt_pd_reader *r)
{
	if (!r->z)
		return;
	r->z->len = r->z->pos = 0;
#ifdef HWT_HAVE_ZSTD
	if (r->z->ds)
		ZSTD_initDStream(r->z->ds);
#endif
}

void pdr_z_free(struct hwt_pd_reader *r)
{
	if (!r->z)
		return;
#ifdef HWT_HAVE_ZSTD
	ZSTD_freeDStream(r->z->ds);
#endif
	free(r->z->buf);
	free(r->z);
	r->z = NULL;
}

#ifdef HWT_HAVE_ZSTD
int pdr_z_feed(struct hwt_pd_reader *r, const uint8_t *data, size_t n,
	       uint64_t off)
{
	ZSTD_inBuffer in = { data, n, 0 };
	struct pdr_z *z = r->z;
	size_t start;

	if (!z) {
		z = r->z = calloc(1, sizeof(*z));
		if (!z || !(z->ds = ZSTD_createDStream()))
			return pdr_fail(r, HWT_ERR_NOMEM, off,
					"cannot set up zstd");
		ZSTD_initDStream(z->ds);
	}
	/* What is left of the last ones goes first, named by the compressed
	 * record it started in. */
	if (z->pos >= z->last_at)
		z->off = z->last_off;
	if (z->len > z->pos)
		memmove(z->buf, z->buf + z->pos, z->len - z->pos);
	z->len -= z->pos;
	z->pos = 0;
	start = z->len;
	if (!start)
		z->off = off;
	z->last_off = off;
	z->last_at = start;
	for (;;) {
		ZSTD_outBuffer out;
		size_t ret;

		if (hwt_grow((void **)&z->buf, &z->cap,
			     z->len + ZSTD_DStreamOutSize(), 1) < 0)
			return pdr_fail(r, HWT_ERR_NOMEM, off,
					"PERF_RECORD_COMPRESSED: out of memory");
		out.dst = z->buf + z->len;
		out.size = z->cap - z->len;
		out.pos = 0;
		ret = ZSTD_decompressStream(z->ds, &out, &in);
		if (ZSTD_isError(ret))
			return pdr_fail(r, HWT_ERR_BAD_FORMAT, off,
					"PERF_RECORD_COMPRESSED: zstd: %s",
					ZSTD_getErrorName(ret));
		z->len += out.pos;
		if (z->len - start > Z_MAX_OUT)
			return pdr_fail(r, HWT_ERR_BAD_FORMAT, off,
					"PERF_RECORD_COMPRESSED: expands to "
					"more than %u bytes", Z_MAX_OUT);
		/*
		 * Done when the input is used up and the output not full
		 * (zstd would have more to give). perf's stream is one
		 * frame, flushed at each compressed record: that it is open
		 * at the end says nothing.
		 */
		if (in.pos == in.size && out.pos < out.size)
			return 0;
	}
}
#else
int pdr_z_feed(struct hwt_pd_reader *r, const uint8_t *data, size_t n,
	       uint64_t off)
{
	(void)data;
	(void)n;
	return pdr_fail(r, HWT_ERR_NOT_SUPPORTED, off,
			"PERF_RECORD_COMPRESSED (perf record -z): hwt was "
			"built without zstd");
}
#endif

int pdr_z_next(struct hwt_pd_reader *r, struct hwt_pd_record *rec)
{
	struct pdr_z *z = r->z;
	const uint8_t *p;
	size_t avail;
	uint16_t size;
	int err;

	if (!z || (avail = z->len - z->pos) < 8)
		return 0;
	if (z->pos >= z->last_at)
		z->off = z->last_off;
	p = z->buf + z->pos;
	size = pdr_u16(p + 6);
	if (size < 8)
		return pdr_fail(r, HWT_ERR_BAD_FORMAT, z->off,
				"in PERF_RECORD_COMPRESSED at +0x%zx: record "
				"size %u is smaller than its header", z->pos,
				size);
	if (size > avail)
		return 0;
	memset(rec, 0, sizeof(*rec));
	rec->type = pdr_u32(p);
	rec->misc = pdr_u16(p + 4);
	rec->size = size;
	rec->file_offset = z->off;
	rec->compressed = 1;
	if (pdr_payload_size(p, rec->type, size))
		return pdr_fail(r, HWT_ERR_BAD_FORMAT, z->off,
				"in PERF_RECORD_COMPRESSED at +0x%zx: %s with "
				"data after it (perf writes those uncompressed)",
				z->pos, hwt_pd_record_name(rec->type));
	rec->raw = p;
	err = pdr_decode(r, rec);
	if (err < 0)
		return err;
	z->pos += size;
	return 1;
}

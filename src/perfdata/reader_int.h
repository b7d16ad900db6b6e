/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Internals of the perf.data reader, shared by reader.c (header, attrs,
 * the record loop and the byte source), feature.c (feature sections) and
 * record.c (record bodies).
 */
#ifndef HWT_PERFDATA_READER_INT_H
#define HWT_PERFDATA_READER_INT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <hwt/perfdata.h>

/*
 * Where the bytes come from. A regular file is mapped one window at a time
 * (pointers are valid until the next get); anything else (a pipe) is read
 * with read(2) into a buffer that only ever moves forward.
 */
struct pdr_src {
	int fd;
	int stream;
	uint64_t size;			/* file size; UINT64_MAX when streaming */
	size_t page;
	/* mapped window */
	uint8_t *win;
	uint64_t win_off;
	size_t win_len;
	/* stream buffer: buf[0] is at stream offset buf_off */
	uint8_t *buf;
	uint64_t buf_off;
	size_t buf_len, buf_cap;
	int eof;
};

/* Open addressing, id -> attr index; key 0 is the empty slot. */
struct pdr_idmap {
	uint64_t *keys;
	uint32_t *vals;
	size_t cap, n;
};

struct hwt_pd_reader {
	char name[128];			/* for messages */
	char errmsg[448];
	int own_fd;
	struct pdr_src src;

	struct hwt_pd_info info;
	struct hwt_pd_build_id *bids;
	size_t capbids;
	struct hwt_pd_exit *exits;

	/* individually allocated, so pointers survive HEADER_ATTR growth */
	struct hwt_pd_attr **attrs;
	size_t nattrs, capattrs;
	struct pdr_idmap ids;

	uint64_t data_begin, data_end;	/* data_end UINT64_MAX in a stream */
	uint64_t pos;
	/* header records before this offset were applied on an earlier pass */
	uint64_t applied_until;
	int failed;
	uint64_t unknown;
	/* hwt_pd_open_raw(): records only, no header; user types unknown;
	 * the attr of identifier 0 (not in @ids: 0 is its empty key), or 0 */
	int raw;
	size_t raw_zero;

	/* aligned copies of arrays handed out in records */
	uint64_t *scratch;
	size_t scratch_cap;

	/* PERF_RECORD_COMPRESSED: the records it held (compressed.c) */
	struct pdr_z *z;
};

/*
 * perf record -z: PERF_RECORD_COMPRESSED holds a piece of one zstd stream
 * of records, and a record may continue in the next one. pdr_z_feed()
 * decompresses a compressed record's payload (at file offset @off) after
 * what is left of the previous ones; pdr_z_next() hands out the next whole
 * record from it (1), 0 if none is whole yet, or an error.
 * pdr_z_unfinished() says what is cut off if the file ends now (NULL:
 * nothing); pdr_z_reset() forgets it all (rewind).
 */
int pdr_z_feed(struct hwt_pd_reader *r, const uint8_t *data, size_t n,
	       uint64_t off);
int pdr_z_next(struct hwt_pd_reader *r, struct hwt_pd_record *rec);
const char *pdr_z_unfinished(const struct hwt_pd_reader *r);
void pdr_z_reset(struct hwt_pd_reader *r);
void pdr_z_free(struct hwt_pd_reader *r);

static inline uint16_t pdr_u16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint32_t pdr_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint64_t pdr_u64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* Record the message "NAME: offset 0x..: ..." and return -@code: a
 * macro, so that callers see the value returned (a constant, mostly) and
 * gcc knows their error paths return non-zero (no maybe-uninitialized
 * warnings for outputs set only on success). */
void pdr_failf(struct hwt_pd_reader *r, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
#define pdr_fail(r, code, off, ...) \
	(pdr_failf((r), (off), __VA_ARGS__), -(code))

/* Add an attr (copied from @attr_bytes, @attr_len bytes as in the file). */
int pdr_add_attr(struct hwt_pd_reader *r, const uint8_t *attr_bytes,
		 size_t attr_len, const uint8_t *ids, size_t nids,
		 uint64_t off);
const struct hwt_pd_attr *pdr_find_id(const struct hwt_pd_reader *r,
				      uint64_t id);

/* Whether pdr_feature() reads feature @feat (others are only noted). */
int pdr_feature_known(unsigned int feat);
/* Parse one feature section's bytes @p[0..n) found at file offset @off. */
int pdr_feature(struct hwt_pd_reader *r, unsigned int feat, const uint8_t *p,
		size_t n, uint64_t off);
/* A build id record (feature section or HEADER_BUILD_ID), header included. */
int pdr_build_id(struct hwt_pd_reader *r, const uint8_t *p, size_t n,
		 uint64_t off);

/* Decode the record at @rec->raw (type, misc, size, file_offset set). */
int pdr_decode(struct hwt_pd_reader *r, struct hwt_pd_record *rec);

/* perf's size of a HEADER_TRACING_DATA / AUXTRACE payload after a record. */
uint64_t pdr_payload_size(const uint8_t *rec, uint32_t type, uint16_t size);

#endif /* HWT_PERFDATA_READER_INT_H */

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * perf.data reader: the file header, the attrs and their ids, the record
 * loop, and the byte source under it (mapped windows for files, read(2)
 * for pipes). Feature sections are in feature.c, record bodies in record.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfdata/reader_int.h"

#define PD_MAGIC	0x32454c4946524550ull	/* "PERFILE2" read little-endian */
#define PD_MAGIC_SWAP	0x50455246494c4532ull	/* "2ELIFREP": big-endian writer */
#define PD_MAGIC_V1	0x454c494646524550ull	/* "PERFFILE": perf before 2.6.35 */
#define PD_FILE_HDR	104	/* magic, size, attr_size, 3 sections, bitmap */
#define PD_PIPE_HDR	16	/* magic, size */

/*
 * Big enough that remapping is rare, small enough that what the caller
 * touched of one window does not add up to much resident memory.
 */
#define PD_WINDOW	(8u << 20)
#define PD_STREAM_CHUNK	(64u << 10)
/* Attrs past this size are not a perf_event_attr of any perf version. */
#define PD_ATTR_MAX	4096u
/*
 * Header parts read whole into memory; real ones are far smaller (a
 * system-wide recording of many events has a few MiB of ids).
 */
#define PD_SECTION_MAX	(256ull << 20)

void pdr_failf(struct hwt_pd_reader *r, uint64_t off, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(r->errmsg, sizeof(r->errmsg), "%s: offset 0x%llx: %s",
		 r->name, (unsigned long long)off, msg);
}

/* ---- byte source ---------------------------------------------------- */

static void src_unmap(struct pdr_src *s)
{
	if (s->win)
		munmap(s->win, s->win_len);
	s->win = NULL;
	s->win_len = 0;
}

/*
 * Make [off, off + len) addressable at *@p. Returns how many of those
 * bytes exist (less than @len at the end of the input), or a negative
 * error. Earlier pointers are invalid afterwards.
 */
static int64_t src_get_map(struct pdr_src *s, uint64_t off, uint64_t len,
			   const uint8_t **p)
{
	uint64_t avail, base, need, maplen;
	void *m;

	if (off >= s->size)
		return 0;
	avail = s->size - off < len ? s->size - off : len;
	if (avail == 0)
		return 0;
	if (s->win && off >= s->win_off &&
	    off + avail <= s->win_off + s->win_len) {
		*p = s->win + (off - s->win_off);
		return (int64_t)avail;
	}
	src_unmap(s);
	base = off & ~(uint64_t)(s->page - 1);
	need = off - base + avail;
	maplen = need > PD_WINDOW ? need : PD_WINDOW;
	if (maplen > s->size - base)
		maplen = s->size - base;
	if (maplen > SIZE_MAX)
		return -HWT_ERR_NOMEM;
	m = mmap(NULL, (size_t)maplen, PROT_READ, MAP_SHARED, s->fd,
		 (off_t)base);
	if (m == MAP_FAILED)
		return errno == ENOMEM ? -HWT_ERR_NOMEM : -HWT_ERR_IO;
	madvise(m, (size_t)maplen, MADV_SEQUENTIAL);
	s->win = m;
	s->win_off = base;
	s->win_len = (size_t)maplen;
	*p = s->win + (off - base);
	return (int64_t)avail;
}

static int src_fill(struct pdr_src *s, uint64_t want)
{
	while (s->buf_len < want && !s->eof) {
		ssize_t got;

		if (s->buf_len == s->buf_cap) {
			/* grow only as data arrives: a lying size costs nothing */
			uint64_t cap = s->buf_cap ? 2 * (uint64_t)s->buf_cap
						  : PD_STREAM_CHUNK;
			uint8_t *nb;

			if (cap > want && want > s->buf_cap)
				cap = want;
			if (cap > SIZE_MAX)
				return -HWT_ERR_NOMEM;
			nb = realloc(s->buf, (size_t)cap);
			if (!nb)
				return -HWT_ERR_NOMEM;
			s->buf = nb;
			s->buf_cap = (size_t)cap;
		}
		got = read(s->fd, s->buf + s->buf_len, s->buf_cap - s->buf_len);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			return -HWT_ERR_IO;
		}
		if (got == 0)
			s->eof = 1;
		s->buf_len += (size_t)got;
	}
	return 0;
}

static int64_t src_get_stream(struct pdr_src *s, uint64_t off, uint64_t len,
			      const uint8_t **p)
{
	int err;

	if (off < s->buf_off)
		return -HWT_ERR_INTERNAL;
	/* drop what is behind @off, reading and discarding any gap */
	while (off > s->buf_off) {
		uint64_t drop = off - s->buf_off;

		if (drop >= s->buf_len) {
			s->buf_off += s->buf_len;
			s->buf_len = 0;
			if (off == s->buf_off)
				break;
			err = src_fill(s, off - s->buf_off < PD_STREAM_CHUNK ?
					  off - s->buf_off : PD_STREAM_CHUNK);
			if (err)
				return err;
			if (!s->buf_len)
				return 0;
			continue;
		}
		memmove(s->buf, s->buf + drop, s->buf_len - (size_t)drop);
		s->buf_len -= (size_t)drop;
		s->buf_off = off;
	}
	err = src_fill(s, len);
	if (err)
		return err;
	*p = s->buf;
	return (int64_t)(s->buf_len < len ? s->buf_len : len);
}

static int64_t src_get(struct pdr_src *s, uint64_t off, uint64_t len,
		       const uint8_t **p)
{
	return s->stream ? src_get_stream(s, off, len, p)
			 : src_get_map(s, off, len, p);
}

/* Read [off, off + len) of a regular file into a new buffer. */
static int read_range(struct hwt_pd_reader *r, uint64_t off, uint64_t len,
		      uint8_t **out)
{
	uint8_t *buf;
	size_t done = 0;

	*out = NULL;
	if (len > SIZE_MAX || off > r->src.size || len > r->src.size - off)
		return pdr_fail(r, HWT_ERR_BAD_FORMAT, off,
				"%llu bytes past the end of the file (%llu bytes)",
				(unsigned long long)len,
				(unsigned long long)r->src.size);
	buf = malloc(len ? (size_t)len : 1);
	if (!buf)
		return pdr_fail(r, HWT_ERR_NOMEM, off,
				"cannot allocate %llu bytes",
				(unsigned long long)len);
	while (done < len) {
		ssize_t got = pread(r->src.fd, buf + done, (size_t)len - done,
				    (off_t)(off + done));

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			free(buf);
			return pdr_fail(r, HWT_ERR_IO, off + done,
					"read failed: %s",
					got ? strerror(errno) : "unexpected end of file");
		}
		done += (size_t)got;
	}
	*out = buf;
	return 0;
}

/* ---- attrs and ids ------------------------------------------------- */

static int pdr_map_id(struct hwt_pd_reader *r, uint64_t id, uint32_t idx)
{
	struct pdr_idmap *m = &r->ids;
	size_t i;

	if (id == 0)	/* synthesized records carry id 0: means "the first" */
		return 0;
	if (2 * (m->n + 1) > m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 64;
		uint64_t *keys = calloc(cap, sizeof(*keys));
		uint32_t *vals = calloc(cap, sizeof(*vals));

		if (!keys || !vals) {
			free(keys);
			free(vals);
			return -HWT_ERR_NOMEM;
		}
		for (size_t j = 0; j < m->cap; j++) {
			if (!m->keys[j])
				continue;
			i = (size_t)(m->keys[j] * 0x9e3779b97f4a7c15ull) & (cap - 1);
			while (keys[i])
				i = (i + 1) & (cap - 1);
			keys[i] = m->keys[j];
			vals[i] = m->vals[j];
		}
		free(m->keys);
		free(m->vals);
		m->keys = keys;
		m->vals = vals;
		m->cap = cap;
	}
	i = (size_t)(id * 0x9e3779b97f4a7c15ull) & (m->cap - 1);
	while (m->keys[i] && m->keys[i] != id)
		i = (i + 1) & (m->cap - 1);
	if (!m->keys[i])
		m->n++;
	m->keys[i] = id;
	m->vals[i] = idx;
	return 0;
}

const struct hwt_pd_attr *pdr_find_id(const struct hwt_pd_reader *r,
				      uint64_t id)
{
	const struct pdr_idmap *m = &r->ids;
	size_t i;

	if (!m->cap || !id)
		return NULL;
	i = (size_t)(id * 0x9e3779b97f4a7c15ull) & (m->cap - 1);
	while (m->keys[i]) {
		if (m->keys[i] == id)
			return m->vals[i] < r->nattrs ? r->attrs[m->vals[i]]
						      : NULL;
		i = (i + 1) & (m->cap - 1);
	}
	return NULL;
}

int pdr_add_attr(struct hwt_pd_reader *r, const uint8_t *attr_bytes,
		 size_t attr_len, const uint8_t *ids, size_t nids, uint64_t off)
{
	struct hwt_pd_attr *a;
	uint64_t *idcopy = NULL;
	size_t n = attr_len < sizeof(a->attr) ? attr_len : sizeof(a->attr);
	int err;

	if (r->nattrs >= UINT32_MAX)
		return pdr_fail(r, HWT_ERR_OVERFLOW, off, "too many attrs");
	if (r->nattrs == r->capattrs) {
		size_t cap = r->capattrs ? 2 * r->capattrs : 8;
		struct hwt_pd_attr **na = realloc(r->attrs, cap * sizeof(*na));

		if (!na)
			return pdr_fail(r, HWT_ERR_NOMEM, off, "out of memory");
		r->attrs = na;
		r->capattrs = cap;
	}
	a = calloc(1, sizeof(*a));
	if (nids) {
		if (nids > SIZE_MAX / sizeof(*idcopy))
			idcopy = NULL;
		else
			idcopy = malloc(nids * sizeof(*idcopy));
	}
	if (!a || (nids && !idcopy)) {
		free(a);
		free(idcopy);
		return pdr_fail(r, HWT_ERR_NOMEM, off, "out of memory");
	}
	/* an older perf's attr is zero-filled, a newer one's tail ignored */
	memcpy(&a->attr, attr_bytes, n);
	a->attr.size = sizeof(a->attr);
	a->file_attr_size = (uint32_t)attr_len;
	if (nids)
		memcpy(idcopy, ids, nids * sizeof(*idcopy));
	a->ids = idcopy;
	a->nids = nids;
	r->attrs[r->nattrs] = a;
	for (size_t i = 0; i < nids; i++) {
		err = pdr_map_id(r, idcopy[i], (uint32_t)r->nattrs);
		if (err) {
			free(idcopy);
			free(a);
			return pdr_fail(r, -err, off, "out of memory");
		}
	}
	r->nattrs++;
	return 0;
}

static int read_attrs(struct hwt_pd_reader *r, const uint8_t *hdr)
{
	uint64_t attr_size = pdr_u64(hdr + 16);
	uint64_t off = pdr_u64(hdr + 24), size = pdr_u64(hdr + 32);
	uint8_t *buf, *ids;
	uint64_t n, total_ids = 0;
	int err;

	if (attr_size < PERF_ATTR_SIZE_VER0 + 16 || attr_size > PD_ATTR_MAX)
		return pdr_fail(r, HWT_ERR_BAD_FORMAT, 16,
				"attr size %llu is not that of any perf_event_attr",
				(unsigned long long)attr_size);
	if (off > r->src.size || size > r->src.size - off)
		return pdr_fail(r, HWT_ERR_BAD_FORMAT, 24,
				"attrs section [%#llx, +%llu) is past the end of the file (%llu bytes)",
				(unsigned long long)off, (unsigned long long)size,
				(unsigned long long)r->src.size);
	if (size > PD_SECTION_MAX)
		return pdr_fail(r, HWT_ERR_NOT_SUPPORTED, 32,
				"attrs section of %llu bytes is larger than hwt reads",
				(unsigned long long)size);
	if (size % attr_size)
		return pdr_fail(r, HWT_ERR_BAD_FORMAT, 24,
				"attrs section size %llu is not a multiple of attr size %llu",
				(unsigned long long)size,
				(unsigned long long)attr_size);
	err = read_range(r, off, size, &buf);
	if (err)
		return err;
	n = size / attr_size;
	for (uint64_t i = 0; i < n; i++) {
		const uint8_t *e = buf + i * attr_size;
		uint64_t eoff = off + i * attr_size;
		/* the ids section sits after the attr in each entry */
		const uint8_t *sec = e + attr_size - 16;
		uint64_t ioff = pdr_u64(sec), isize = pdr_u64(sec + 8);

		if (ioff > r->src.size || isize > r->src.size - ioff) {
			free(buf);
			return pdr_fail(r, HWT_ERR_BAD_FORMAT,
					eoff + attr_size - 16,
					"attr %llu: ids [%#llx, +%llu) are past the end of the file (%llu bytes)",
					(unsigned long long)i,
					(unsigned long long)ioff,
					(unsigned long long)isize,
					(unsigned long long)r->src.size);
		}
		/* ids may all point at one section: bound what is copied */
		total_ids += isize;
		if (total_ids > PD_SECTION_MAX) {
			free(buf);
			return pdr_fail(r, HWT_ERR_NOT_SUPPORTED,
					eoff + attr_size - 8,
					"attr %llu: more than %llu bytes of ids in all",
					(unsigned long long)i, PD_SECTION_MAX);
		}
		if (isize % 8) {
			free(buf);
			return pdr_fail(r, HWT_ERR_BAD_FORMAT,
					eoff + attr_size - 8,
					"attr %llu: ids size %llu is not a multiple of 8",
					(unsigned long long)i,
					(unsigned long long)isize);
		}
		err = read_range(r, ioff, isize, &ids);
		if (!err) {
			err = pdr_add_attr(r, e, (size_t)attr_size - 16, ids,
					   (size_t)(isize / 8), eoff);
			free(ids);
		}
		if (err) {
			free(buf);
			return err;
		}
	}
	free(buf);
	return 0;
}

/* ---- file header --------------------------------------------------- */

static int read_features(struct hwt_pd_reader *r)
{
	uint64_t nsec = 0, toff = r->data_end;
	uint8_t *table;
	int err, i = 0;

	for (unsigned int b = 0; b < 256; b++)
		nsec += (r->info.features[b / 64] >> (b % 64)) & 1;
	if (!nsec)
		return 0;
	err = read_range(r, toff, nsec * 16, &table);
	if (err)
		return pdr_fail(r, -err, toff,
				"the table of %llu feature sections is past the end of the file",
				(unsigned long long)nsec);
	for (unsigned int b = 0; b < 256; b++) {
		uint64_t soff, ssize;
		uint8_t *sec;

		if (!((r->info.features[b / 64] >> (b % 64)) & 1))
			continue;
		soff = pdr_u64(table + 16 * i);
		ssize = pdr_u64(table + 16 * i + 8);
		i++;
		if (soff > r->src.size || ssize > r->src.size - soff) {
			free(table);
			return pdr_fail(r, HWT_ERR_BAD_FORMAT, toff + 16 * (i - 1),
					"feature %u section [%#llx, +%llu) is past the end of the file",
					b, (unsigned long long)soff,
					(unsigned long long)ssize);
		}
		if (!pdr_feature_known(b))
			continue;
		if (ssize > PD_SECTION_MAX) {
			free(table);
			return pdr_fail(r, HWT_ERR_NOT_SUPPORTED, toff + 16 * (i - 1),
					"feature %s section of %llu bytes is larger than hwt reads",
					hwt_pd_feature_name(b),
					(unsigned long long)ssize);
		}
		err = read_range(r, soff, ssize, &sec);
		if (!err) {
			err = pdr_feature(r, b, sec, (size_t)ssize, soff);
			free(sec);
		}
		if (err) {
			free(table);
			return err;
		}
	}
	free(table);
	return 0;
}

static int read_file_header(struct hwt_pd_reader *r, uint64_t hsize)
{
	uint8_t hdr[PD_FILE_HDR];
	uint8_t *p;
	uint64_t doff, dsize;
	int err;

	if (hsize < PD_FILE_HDR)
		return pdr_fail(r, HWT_ERR_BAD_FORMAT, 8,
				"header size %llu (expected %d, or %d for pipe mode)",
				(unsigned long long)hsize, PD_FILE_HDR,
				PD_PIPE_HDR);
	if (r->src.stream)
		return pdr_fail(r, HWT_ERR_NOT_SUPPORTED, 0,
				"a perf.data file (not pipe mode) cannot be read from a pipe; "
				"give the file, or record with -o -");
	err = read_range(r, 0, PD_FILE_HDR, &p);
	if (err)
		return err;
	memcpy(hdr, p, sizeof(hdr));
	free(p);
	memcpy(r->info.features, hdr + 72, sizeof(r->info.features));
	doff = pdr_u64(hdr + 40);
	dsize = pdr_u64(hdr + 48);
	if (doff > r->src.size || dsize > r->src.size - doff)
		return pdr_fail(r, HWT_ERR_BAD_FORMAT, 40,
				"data section [%#llx, +%llu) is past the end of the file (%llu bytes)",
				(unsigned long long)doff,
				(unsigned long long)dsize,
				(unsigned long long)r->src.size);
	r->info.data_offset = doff;
	r->info.data_size = dsize;
	r->data_begin = doff;
	r->data_end = doff + dsize;
	err = read_attrs(r, hdr);
	if (err)
		return err;
	return read_features(r);
}

static int read_header(struct hwt_pd_reader *r)
{
	const uint8_t *p = NULL;
	int64_t got = src_get(&r->src, 0, PD_PIPE_HDR, &p);
	uint64_t magic, hsize;

	if (got < 0)
		return pdr_fail(r, (int)-got, 0, "cannot read the header: %s",
				hwt_errstr((int)got));
	if (got < 8)
		return pdr_fail(r, HWT_ERR_BAD_FORMAT, 0,
				"file too short for a perf.data header (%lld bytes)",
				(long long)got);
	magic = pdr_u64(p);
	if (magic == PD_MAGIC_SWAP)
		return pdr_fail(r, HWT_ERR_NOT_SUPPORTED, 0,
				"big-endian (byte-swapped) perf.data is not supported");
	if (magic == PD_MAGIC_V1)
		return pdr_fail(r, HWT_ERR_NOT_SUPPORTED, 0,
				"old perf.data format (magic PERFFILE) is not supported");
	if (magic != PD_MAGIC)
		return pdr_fail(r, HWT_ERR_BAD_FORMAT, 0,
				"not a perf.data file (bad magic %#llx)",
				(unsigned long long)magic);
	if (got < PD_PIPE_HDR)
		return pdr_fail(r, HWT_ERR_BAD_FORMAT, 8,
				"file too short for a perf.data header (%lld bytes)",
				(long long)got);
	hsize = pdr_u64(p + 8);
	if (hsize == PD_PIPE_HDR) {
		r->info.pipe_mode = 1;
		r->data_begin = PD_PIPE_HDR;
		r->data_end = r->src.stream ? UINT64_MAX : r->src.size;
		return 0;
	}
	return read_file_header(r, hsize);
}

/* ---- open / close -------------------------------------------------- */

/* How a raw stream's records are laid out, where they are: [begin, end)
 * of the file. */
struct raw_range {
	uint64_t sample_type;
	const struct hwt_pd_raw_type *types;
	size_t ntypes;
	uint64_t begin, end;
};

static int raw_attr(struct hwt_pd_reader *r, uint64_t sample_type,
		    const uint64_t *id)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.sample_type = sample_type;
	attr.sample_id_all = 1;
	return pdr_add_attr(r, (const uint8_t *)&attr, sizeof(attr),
			    (const uint8_t *)id, id ? 1 : 0, 0);
}

/* A raw stream has no header: its attrs are made up from the caller's
 * sample types, with sample_id_all as the kernel writes sideband. */
static int raw_setup(struct hwt_pd_reader *r, const struct raw_range *raw)
{
	uint64_t end = raw->end ? raw->end : r->src.size;
	int err;

	if (r->src.stream)
		return pdr_fail(r, HWT_ERR_NOT_SUPPORTED, 0,
				"raw sideband must be a regular file");
	if (raw->begin > r->src.size || end > r->src.size || end < raw->begin)
		return pdr_fail(r, HWT_ERR_INVALID, raw->begin,
				"range %#llx-%#llx is not inside the file (%llu bytes)",
				(unsigned long long)raw->begin,
				(unsigned long long)end,
				(unsigned long long)r->src.size);
	r->raw = 1;
	r->data_begin = raw->begin;
	r->data_end = end;
	err = raw_attr(r, raw->sample_type, NULL);
	for (size_t i = 0; !err && i < raw->ntypes; i++) {
		const struct hwt_pd_raw_type *t = &raw->types[i];
		size_t j;

		/* The first type given for an identifier counts (libipt). */
		for (j = 0; j < i; j++)
			if (raw->types[j].identifier == t->identifier)
				break;
		if (j < i)
			continue;

		/* The identifier must be where the record's last 8 bytes
		 * are, whatever the layout. */
		if (!(t->sample_type & PERF_SAMPLE_IDENTIFIER))
			return pdr_fail(r, HWT_ERR_BAD_CONFIG, 0,
					"sample type %#llx of identifier %llu has no PERF_SAMPLE_IDENTIFIER",
					(unsigned long long)t->sample_type,
					(unsigned long long)t->identifier);
		if (!t->identifier) {
			r->raw_zero = r->nattrs;
			err = raw_attr(r, t->sample_type, NULL);
		} else {
			err = raw_attr(r, t->sample_type, &t->identifier);
		}
	}
	return err;
}

static int reader_open(struct hwt_pd_reader **rp, int fd, int own,
		       const char *name, const struct raw_range *raw,
		       char *err, size_t errlen)
{
	struct hwt_pd_reader *r;
	struct stat st;
	int ret;

	*rp = NULL;
	r = calloc(1, sizeof(*r));
	if (!r) {
		if (err && errlen)
			snprintf(err, errlen, "%s: out of memory", name);
		if (own)
			close(fd);
		return -HWT_ERR_NOMEM;
	}
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->own_fd = own;
	r->src.fd = fd;
	r->src.page = (size_t)sysconf(_SC_PAGESIZE);
	if (fstat(fd, &st) < 0) {
		ret = pdr_fail(r, HWT_ERR_IO, 0, "%s", strerror(errno));
		goto fail;
	}
	if (S_ISREG(st.st_mode)) {
		r->src.size = (uint64_t)st.st_size;
	} else {
		r->src.stream = 1;
		r->src.size = UINT64_MAX;
	}
	ret = raw ? raw_setup(r, raw) : read_header(r);
	if (ret)
		goto fail;
	r->pos = r->data_begin;
	*rp = r;
	return 0;
fail:
	if (err && errlen)
		snprintf(err, errlen, "%s", r->errmsg);
	hwt_pd_close(r);
	return ret;
}

/* @path opened (and owned) for a reader: perf.data, or raw if @raw. */
static int open_path(struct hwt_pd_reader **r, const char *path,
		     const struct raw_range *raw, char *err, size_t errlen)
{
	int fd;

	if (!r || !path)
		return -HWT_ERR_INVALID;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		*r = NULL;
		if (err && errlen)
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -HWT_ERR_IO;
	}
	return reader_open(r, fd, 1, path, raw, err, errlen);
}

/* The caller's @fd (not closed by the reader), named by its number. */
static int open_fd(struct hwt_pd_reader **r, int fd,
		   const struct raw_range *raw, char *err, size_t errlen)
{
	char name[32];

	if (!r || fd < 0)
		return -HWT_ERR_INVALID;
	snprintf(name, sizeof(name), "fd %d", fd);
	return reader_open(r, fd, 0, name, raw, err, errlen);
}

int hwt_pd_open(struct hwt_pd_reader **r, const char *path, char *err,
		size_t errlen)
{
	if (r && path && !strcmp(path, "-"))
		return reader_open(r, STDIN_FILENO, 0, "<stdin>", NULL, err,
				   errlen);
	return open_path(r, path, NULL, err, errlen);
}

int hwt_pd_open_fd(struct hwt_pd_reader **r, int fd, char *err, size_t errlen)
{
	return open_fd(r, fd, NULL, err, errlen);
}

int hwt_pd_open_raw(struct hwt_pd_reader **r, const char *path,
		    uint64_t sample_type, const struct hwt_pd_raw_type *types,
		    size_t ntypes, uint64_t begin, uint64_t end, char *err,
		    size_t errlen)
{
	struct raw_range raw = { sample_type, types, ntypes, begin, end };

	return open_path(r, path, &raw, err, errlen);
}

int hwt_pd_open_raw_fd(struct hwt_pd_reader **r, int fd, uint64_t sample_type,
		       const struct hwt_pd_raw_type *types, size_t ntypes,
		       char *err, size_t errlen)
{
	struct raw_range raw = { sample_type, types, ntypes, 0, 0 };

	return open_fd(r, fd, &raw, err, errlen);
}

void hwt_pd_close(struct hwt_pd_reader *r)
{
	if (!r)
		return;
	src_unmap(&r->src);
	free(r->src.buf);
	if (r->own_fd)
		close(r->src.fd);
	for (size_t i = 0; i < r->nattrs; i++) {
		free((void *)r->attrs[i]->ids);
		free((void *)r->attrs[i]->name);
		free(r->attrs[i]);
	}
	free(r->attrs);
	free(r->ids.keys);
	free(r->ids.vals);
	free((void *)r->info.hostname);
	free((void *)r->info.osrelease);
	free((void *)r->info.version);
	free((void *)r->info.arch);
	free((void *)r->info.cpudesc);
	free((void *)r->info.cpuid);
	for (size_t i = 0; i < r->info.ncmdline; i++)
		free((void *)r->info.cmdline[i]);
	free((void *)r->info.cmdline);
	for (size_t i = 0; i < r->info.nbuild_ids; i++)
		free((void *)r->bids[i].filename);
	free(r->bids);
	free(r->exits);
	free(r->scratch);
	pdr_z_free(r);
	free(r);
}

/* ---- accessors ----------------------------------------------------- */

const struct hwt_pd_info *hwt_pd_get_info(const struct hwt_pd_reader *r)
{
	return r ? &r->info : NULL;
}

size_t hwt_pd_nattrs(const struct hwt_pd_reader *r)
{
	return r ? r->nattrs : 0;
}

const struct hwt_pd_attr *hwt_pd_get_attr(const struct hwt_pd_reader *r,
					  size_t i)
{
	return r && i < r->nattrs ? r->attrs[i] : NULL;
}

const char *hwt_pd_errmsg(const struct hwt_pd_reader *r)
{
	return r ? r->errmsg : "no reader";
}

uint64_t hwt_pd_unknown_records(const struct hwt_pd_reader *r)
{
	return r ? r->unknown : 0;
}

int hwt_pd_rewind(struct hwt_pd_reader *r)
{
	if (!r || r->src.stream)
		return -HWT_ERR_INVALID;
	if (r->pos > r->applied_until)
		r->applied_until = r->pos;
	r->pos = r->data_begin;
	r->failed = 0;
	r->errmsg[0] = '\0';
	pdr_z_reset(r);
	return 0;
}

/* ---- the record loop ----------------------------------------------- */

static int next_fail(struct hwt_pd_reader *r, int err)
{
	r->failed = 1;
	return err;
}

/* The end of the records: 0, unless compressed ones were cut off. */
static int data_end(struct hwt_pd_reader *r, uint64_t pos)
{
	const char *cut = pdr_z_unfinished(r);

	if (cut)
		return next_fail(r, pdr_fail(r, HWT_ERR_EOS, pos,
					     "the compressed records end %s",
					     cut));
	return 0;
}

int hwt_pd_next(struct hwt_pd_reader *r, struct hwt_pd_record *rec)
{
	const uint8_t *p = NULL;
	uint64_t pos, left, payload, total;
	uint16_t size;
	int64_t got;
	int err;

	if (!r || !rec)
		return -HWT_ERR_INVALID;
	if (r->failed)
		return 0;
	/* The records of a compressed record come before the next one. */
	err = pdr_z_next(r, rec);
	if (err)
		return err < 0 ? next_fail(r, err) : 1;
	pos = r->pos;
	if (pos >= r->data_end)
		return data_end(r, pos);
	left = r->data_end - pos;
	got = src_get(&r->src, pos, left < 8 ? left : 8, &p);
	if (got < 0)
		return next_fail(r, pdr_fail(r, (int)-got, pos,
					     "cannot read: %s", hwt_errstr((int)got)));
	if (got == 0 && r->src.stream)
		return data_end(r, pos);	/* a pipe ends where it ends */
	if (got < 8)
		return next_fail(r, pdr_fail(r, HWT_ERR_EOS, pos,
					     "truncated record header (%lld of 8 bytes)",
					     (long long)got));
	memset(rec, 0, sizeof(*rec));
	rec->type = pdr_u32(p);
	rec->misc = pdr_u16(p + 4);
	size = pdr_u16(p + 6);
	rec->size = size;
	rec->file_offset = pos;
	if (size < 8)
		return next_fail(r, pdr_fail(r, HWT_ERR_BAD_FORMAT, pos,
					     "record type %u: size %u is smaller than its header",
					     rec->type, size));
	if (size > left)
		return next_fail(r, pdr_fail(r, HWT_ERR_EOS, pos,
					     "record type %u size %u runs past the end of the data (%llu bytes left)",
					     rec->type, size,
					     (unsigned long long)left));
	got = src_get(&r->src, pos, size, &p);
	if (got >= 0 && got < size)
		return next_fail(r, pdr_fail(r, HWT_ERR_EOS, pos,
					     "record type %u size %u truncated at %lld bytes",
					     rec->type, size, (long long)got));
	if (got < 0)
		return next_fail(r, pdr_fail(r, (int)-got, pos,
					     "cannot read: %s", hwt_errstr((int)got)));
	payload = r->raw ? 0 : pdr_payload_size(p, rec->type, size);
	if (payload > left - size || payload > SIZE_MAX - size)
		return next_fail(r, pdr_fail(r, HWT_ERR_EOS, pos,
					     "%s: %llu bytes of data after the record run past the end (%llu bytes left)",
					     hwt_pd_record_name(rec->type),
					     (unsigned long long)payload,
					     (unsigned long long)(left - size)));
	total = size + payload;
	if (payload) {
		got = src_get(&r->src, pos, total, &p);
		if (got < 0)
			return next_fail(r, pdr_fail(r, (int)-got, pos,
						     "cannot read %llu bytes: %s",
						     (unsigned long long)total,
						     hwt_errstr((int)got)));
		if ((uint64_t)got < total)
			return next_fail(r, pdr_fail(r, HWT_ERR_EOS, pos + size,
						     "%s: data truncated at %llu of %llu bytes",
						     hwt_pd_record_name(rec->type),
						     (unsigned long long)(got - size),
						     (unsigned long long)payload));
	}
	rec->raw = p;
	err = pdr_decode(r, rec);
	if (err < 0)
		return next_fail(r, err);
	/* Returned itself (it is in the file), its records next. */
	if (rec->type == HWT_PD_COMPRESSED && !r->raw) {
		err = pdr_z_feed(r, p + 8, size - 8, pos);
		if (err < 0)
			return next_fail(r, err);
	}
	r->pos = pos + total;
	return 1;
}

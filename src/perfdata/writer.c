/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * perf.data writer: the file layout perf record writes,
 *
 *   file header | attr ids | attrs | data ... | feature table | features
 *
 * The header goes out as a placeholder when the file is created and is
 * rewritten by hwt_pd_writer_close(). The ids and attrs are written when
 * the data starts (attrs are fixed by then), so that after a write error
 * (a full disk) the file holds everything up to the last complete record
 * and close can still describe it in the header. Records are encoded here
 * (writer_records.c) and buffered; the buffer only ever holds whole
 * records, so a failed flush can be cut back to a record boundary.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfdata/writer.h"

#define PD_MAGIC "PERFILE2"
#define PD_BUF_SIZE (256u * 1024)
/* perf aligns strings in feature sections to this (NAME_ALIGN). */
#define PD_NAME_ALIGN 64u

struct pd_file_section {
	uint64_t offset, size;
};

struct pd_file_header {
	char magic[8];
	uint64_t size;
	uint64_t attr_size;	/* one attr in the attrs section, with its ids section */
	struct pd_file_section attrs, data, event_types;
	uint64_t features[4];
};

_Static_assert(sizeof(struct pd_file_header) == 104, "perf_file_header");

struct pd_wattr {
	struct perf_event_attr attr;
	uint64_t *ids;
	size_t nids;
	char *name;
};

struct pd_wbuild_id {
	int32_t pid;
	uint8_t id[20];
	uint8_t size;
	char *filename;
};

/* Where an AUXTRACE record and its data are (perf's auxtrace index). */
struct pd_aux_index {
	uint64_t offset, size;
};

/* A growable byte buffer for feature sections. */
struct pd_dbuf {
	uint8_t *p;
	size_t len, cap;
	int nomem;
};

struct hwt_pd_writer {
	int fd;
	char *path;
	int err;		/* first write error: sticky */
	char errmsg[320];	/* of that, else of the last refused call */

	struct pd_wattr *attrs;
	size_t nattrs;

	int data_started;
	uint64_t attrs_offset;
	uint64_t data_offset;
	uint64_t pos;		/* file offset of buf[0]: end of complete records */

	uint8_t *buf;
	size_t buf_len;

	uint8_t rec[HWT_PD_MAX_RECORD];	/* the record being encoded */

	char *strings[HWT_PD_FEAT_LAST];
	int have_nrcpus;
	uint32_t nr_avail, nr_online;
	char **cmdline;
	int ncmdline;
	int have_cmdline;
	struct pd_wbuild_id *bids;
	size_t nbids;
	struct hwt_pd_exit *exits;
	size_t nexits;
	struct pd_aux_index *aux_index;
	size_t naux_index, aux_index_cap;
};

static void vmsg(struct hwt_pd_writer *w, const char *fmt, va_list ap)
{
	int n = snprintf(w->errmsg, sizeof(w->errmsg), "%s: ", w->path);

	if (n < 0 || (size_t)n >= sizeof(w->errmsg))
		n = 0;
	vsnprintf(w->errmsg + n, sizeof(w->errmsg) - (size_t)n, fmt, ap);
}

/* An error after which the file cannot grow: every later call fails. */
static int set_err(struct hwt_pd_writer *w, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int set_err(struct hwt_pd_writer *w, int code, const char *fmt, ...)
{
	va_list ap;

	if (w->err)
		return w->err;
	va_start(ap, fmt);
	vmsg(w, fmt, ap);
	va_end(ap);
	w->err = code;
	return code;
}

int hwt_pd_writer_refuse(struct hwt_pd_writer *w, int code,
			 const char *fmt, ...)
{
	va_list ap;

	if (w->err)
		return code;	/* keep the message of the write error */
	va_start(ap, fmt);
	vmsg(w, fmt, ap);
	va_end(ap);
	return code;
}

/* Returns 0 or -errno; *@done says how far it got either way. */
static int pwrite_all(int fd, const void *p, size_t n, uint64_t off,
		      size_t *done)
{
	const uint8_t *b = p;
	size_t d = 0;
	int ret = 0;

	while (d < n) {
		ssize_t k = pwrite(fd, b + d, n - d, (off_t)(off + d));

		if (k < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			break;
		}
		if (k == 0) {
			ret = -EIO;
			break;
		}
		d += (size_t)k;
	}
	if (done)
		*done = d;
	return ret;
}

static int io_err(struct hwt_pd_writer *w, int neg_errno, uint64_t off,
		  const char *what)
{
	return set_err(w, -HWT_ERR_IO, "write of %s at offset %llu: %s", what,
		       (unsigned long long)off, strerror(-neg_errno));
}

/*
 * The bytes of the whole records at the start of @buf that fit in @n
 * bytes. The buffer holds records this file wrote, so their sizes can be
 * trusted; an AUXTRACE record is followed by its data.
 */
static size_t whole_records(const uint8_t *buf, size_t len, size_t n)
{
	size_t off = 0;

	while (off + sizeof(struct perf_event_header) <= len) {
		struct perf_event_header h;
		uint64_t sz;

		memcpy(&h, buf + off, sizeof(h));
		sz = h.size;
		if (h.type == HWT_PD_AUXTRACE && off + 16 <= len) {
			uint64_t data;

			memcpy(&data, buf + off + 8, sizeof(data));
			sz += data;
		}
		if (!sz || off + sz > n)
			break;
		off += (size_t)sz;
	}
	return off;
}

/* After a failed data write: drop the partial record at the end. */
static void cut_back(struct hwt_pd_writer *w, uint64_t good_end)
{
	w->pos = good_end;
	w->buf_len = 0;
	/* Frees the space of the torn record: close may need it for the
	 * feature sections. Best effort, the header says how much is good. */
	if (ftruncate(w->fd, (off_t)good_end) < 0)
		(void)0;
}

static int flush_buf(struct hwt_pd_writer *w)
{
	size_t done;
	int ret;

	if (!w->buf_len)
		return 0;
	ret = pwrite_all(w->fd, w->buf, w->buf_len, w->pos, &done);
	if (ret < 0) {
		uint64_t at = w->pos + done;

		cut_back(w, w->pos + whole_records(w->buf, w->buf_len, done));
		return io_err(w, ret, at, "data");
	}
	w->pos += w->buf_len;
	w->buf_len = 0;
	return 0;
}

static struct pd_wattr *find_attr(struct hwt_pd_writer *w, uint64_t id)
{
	if (!w->nattrs)
		return NULL;
	if (id) {
		for (size_t i = 0; i < w->nattrs; i++)
			for (size_t j = 0; j < w->attrs[i].nids; j++)
				if (w->attrs[i].ids[j] == id)
					return &w->attrs[i];
	}
	return &w->attrs[0];
}

const struct perf_event_attr *hwt_pd_writer_attr_of(struct hwt_pd_writer *w,
						    uint64_t id,
						    uint64_t *first_id)
{
	struct pd_wattr *a = find_attr(w, id);

	if (!a)
		return NULL;
	*first_id = a->nids ? a->ids[0] : 0;
	return &a->attr;
}

/* The ids and attrs, then the data. */
static int start_data(struct hwt_pd_writer *w)
{
	size_t nids = 0, len, done, k = 0;
	uint64_t ids_off = sizeof(struct pd_file_header), off;
	uint8_t *blk;
	int ret;

	if (w->data_started)
		return 0;
	for (size_t i = 0; i < w->nattrs; i++)
		nids += w->attrs[i].nids;
	len = nids * 8 + w->nattrs * HWT_PD_FILE_ATTR_SIZE;
	blk = calloc(1, len ? len : 1);
	if (!blk)
		return set_err(w, -HWT_ERR_NOMEM, "out of memory");
	for (size_t i = 0; i < w->nattrs; i++) {
		memcpy(blk + k, w->attrs[i].ids, w->attrs[i].nids * 8);
		k += w->attrs[i].nids * 8;
	}
	w->attrs_offset = ids_off + k;
	off = ids_off;
	for (size_t i = 0; i < w->nattrs; i++) {
		struct pd_file_section ids = {
			.offset = w->attrs[i].nids ? off : 0,
			.size = w->attrs[i].nids * 8,
		};

		memcpy(blk + k, &w->attrs[i].attr, sizeof(w->attrs[i].attr));
		memcpy(blk + k + sizeof(w->attrs[i].attr), &ids, sizeof(ids));
		k += HWT_PD_FILE_ATTR_SIZE;
		off += ids.size;
	}
	ret = pwrite_all(w->fd, blk, len, ids_off, &done);
	free(blk);
	if (ret < 0)
		return io_err(w, ret, ids_off + done, "attrs");
	w->data_offset = ids_off + len;
	w->pos = w->data_offset;
	w->data_started = 1;
	return 0;
}

int hwt_pd_writer_new(struct hwt_pd_writer **wp, const char *path,
		      char *err, size_t errlen)
{
	struct pd_file_header h;
	struct hwt_pd_writer *w;
	int ret;

	if (err && errlen)
		err[0] = '\0';
	if (!wp || !path) {
		if (err && errlen)
			snprintf(err, errlen, "no output file");
		return -HWT_ERR_INVALID;
	}
	*wp = NULL;
	w = calloc(1, sizeof(*w));
	if (w) {
		w->path = strdup(path);
		w->buf = malloc(PD_BUF_SIZE);
	}
	if (!w || !w->path || !w->buf) {
		if (w) {
			free(w->path);
			free(w->buf);
		}
		free(w);
		if (err && errlen)
			snprintf(err, errlen, "%s: out of memory", path);
		return -HWT_ERR_NOMEM;
	}
	w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (w->fd < 0) {
		ret = set_err(w, -HWT_ERR_IO, "cannot create: %s",
			      strerror(errno));
		goto fail;
	}
	/* A header that reads as an empty file until close rewrites it. */
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, PD_MAGIC, sizeof(h.magic));
	h.size = sizeof(h);
	h.attr_size = HWT_PD_FILE_ATTR_SIZE;
	ret = pwrite_all(w->fd, &h, sizeof(h), 0, NULL);
	if (ret < 0) {
		ret = io_err(w, ret, 0, "the file header");
		goto fail;
	}
	*wp = w;
	return 0;
fail:
	if (err && errlen)
		snprintf(err, errlen, "%s", w->errmsg);
	if (w->fd >= 0)
		close(w->fd);
	free(w->path);
	free(w->buf);
	free(w);
	return ret;
}

const char *hwt_pd_writer_errmsg(const struct hwt_pd_writer *w)
{
	return w ? w->errmsg : "";
}

int hwt_pd_writer_add_attr(struct hwt_pd_writer *w,
			   const struct perf_event_attr *attr,
			   const uint64_t *ids, size_t nids, const char *name)
{
	struct pd_wattr *a, *na;

	if (!w || !attr || (nids && !ids))
		return -HWT_ERR_INVALID;
	if (w->err)
		return w->err;
	if (w->data_started)
		return hwt_pd_writer_refuse(w, -HWT_ERR_INVALID,
					    "attr added after the first record");
	if (nids > (1u << 20))
		return hwt_pd_writer_refuse(w, -HWT_ERR_INVALID,
					    "%zu ids for one attr", nids);
	na = realloc(w->attrs, (w->nattrs + 1) * sizeof(*na));
	if (!na)
		return -HWT_ERR_NOMEM;
	w->attrs = na;
	a = &w->attrs[w->nattrs];
	memset(a, 0, sizeof(*a));
	a->attr = *attr;
	/* We write the whole struct, so that is the size perf must read. */
	a->attr.size = sizeof(a->attr);
	if (nids) {
		a->ids = malloc(nids * sizeof(*ids));
		if (!a->ids)
			return -HWT_ERR_NOMEM;
		memcpy(a->ids, ids, nids * sizeof(*ids));
	}
	a->nids = nids;
	if (name) {
		a->name = strdup(name);
		if (!a->name) {
			free(a->ids);
			return -HWT_ERR_NOMEM;
		}
	}
	w->nattrs++;
	return 0;
}

/* The features that are one string (hwt_pd_writer_set_string()). */
static int string_feature(int feat)
{
	switch (feat) {
	case HWT_PD_FEAT_HOSTNAME:
	case HWT_PD_FEAT_OSRELEASE:
	case HWT_PD_FEAT_VERSION:
	case HWT_PD_FEAT_ARCH:
	case HWT_PD_FEAT_CPUDESC:
	case HWT_PD_FEAT_CPUID:
		return 1;
	default:
		return 0;
	}
}

int hwt_pd_writer_set_string(struct hwt_pd_writer *w,
			     enum hwt_pd_feature feat, const char *value)
{
	char *s;

	if (!w || !value || !string_feature(feat))
		return -HWT_ERR_INVALID;
	s = strdup(value);
	if (!s)
		return -HWT_ERR_NOMEM;
	free(w->strings[feat]);
	w->strings[feat] = s;
	return 0;
}

int hwt_pd_writer_set_nrcpus(struct hwt_pd_writer *w, uint32_t avail,
			     uint32_t online)
{
	if (!w)
		return -HWT_ERR_INVALID;
	w->have_nrcpus = 1;
	w->nr_avail = avail;
	w->nr_online = online;
	return 0;
}

static void free_cmdline(struct hwt_pd_writer *w)
{
	for (int i = 0; i < w->ncmdline; i++)
		free(w->cmdline[i]);
	free(w->cmdline);
	w->cmdline = NULL;
	w->ncmdline = 0;
	w->have_cmdline = 0;
}

int hwt_pd_writer_set_cmdline(struct hwt_pd_writer *w, int argc,
			      const char *const *argv)
{
	if (!w || argc < 0 || (argc && !argv))
		return -HWT_ERR_INVALID;
	free_cmdline(w);
	w->cmdline = calloc((size_t)argc + 1, sizeof(*w->cmdline));
	if (!w->cmdline)
		return -HWT_ERR_NOMEM;
	for (int i = 0; i < argc; i++) {
		w->cmdline[i] = strdup(argv[i] ? argv[i] : "");
		if (!w->cmdline[i]) {
			w->ncmdline = i;
			free_cmdline(w);
			return -HWT_ERR_NOMEM;
		}
	}
	w->ncmdline = argc;
	w->have_cmdline = 1;
	return 0;
}

int hwt_pd_writer_add_build_id(struct hwt_pd_writer *w,
			       const struct hwt_pd_build_id *bid)
{
	struct pd_wbuild_id *nb, *b;

	if (!w || !bid || !bid->filename || bid->size > sizeof(bid->id))
		return -HWT_ERR_INVALID;
	nb = realloc(w->bids, (w->nbids + 1) * sizeof(*nb));
	if (!nb)
		return -HWT_ERR_NOMEM;
	w->bids = nb;
	b = &w->bids[w->nbids];
	b->pid = bid->pid;
	memcpy(b->id, bid->id, sizeof(b->id));
	b->size = bid->size ? bid->size : sizeof(b->id);
	b->filename = strdup(bid->filename);
	if (!b->filename)
		return -HWT_ERR_NOMEM;
	w->nbids++;
	return 0;
}

int hwt_pd_writer_add_exit(struct hwt_pd_writer *w,
			   const struct hwt_pd_exit *e)
{
	struct hwt_pd_exit *n;

	if (!w || !e)
		return -HWT_ERR_INVALID;
	n = realloc(w->exits, (w->nexits + 1) * sizeof(*n));
	if (!n)
		return -HWT_ERR_NOMEM;
	w->exits = n;
	n[w->nexits] = *e;
	n[w->nexits].reserved = 0;
	w->nexits++;
	return 0;
}

/* ---- records ---- */

/*
 * perf finds the trace through the AUXTRACE feature, an index of the
 * AUXTRACE records: without it, perf script refuses to print fields of
 * the samples it synthesizes from the trace (-F ip,addr).
 */
static int index_auxtrace(struct hwt_pd_writer *w, uint64_t offset,
			  uint64_t size)
{
	if (w->naux_index == w->aux_index_cap) {
		size_t cap = w->aux_index_cap ? w->aux_index_cap * 2 : 16;
		struct pd_aux_index *n = realloc(w->aux_index,
						 cap * sizeof(*n));

		if (!n)
			return set_err(w, -HWT_ERR_NOMEM, "out of memory");
		w->aux_index = n;
		w->aux_index_cap = cap;
	}
	w->aux_index[w->naux_index].offset = offset;
	w->aux_index[w->naux_index].size = size;
	w->naux_index++;
	return 0;
}

int hwt_pd_writer_emit(struct hwt_pd_writer *w, const void *rec, size_t len,
		       const void *data, size_t dlen, size_t pad)
{
	static const uint8_t zeros[8];
	size_t total = len + dlen + pad;
	struct perf_event_header h;
	int ret;

	if (w->err)
		return w->err;
	ret = start_data(w);
	if (ret < 0)
		return ret;
	if (total > PD_BUF_SIZE - w->buf_len) {
		ret = flush_buf(w);
		if (ret < 0)
			return ret;
	}
	memcpy(&h, rec, sizeof(h));
	if (h.type == HWT_PD_AUXTRACE) {
		/* perf's index counts the record, not its data. */
		ret = index_auxtrace(w, w->pos + w->buf_len, len);
		if (ret < 0)
			return ret;
	}
	if (total <= PD_BUF_SIZE) {
		memcpy(w->buf + w->buf_len, rec, len);
		if (dlen)
			memcpy(w->buf + w->buf_len + len, data, dlen);
		memset(w->buf + w->buf_len + len + dlen, 0, pad);
		w->buf_len += total;
		return 0;
	}
	/* Trace data larger than the buffer goes straight to the file. */
	{
		const void *part[3] = { rec, data, zeros };
		size_t plen[3] = { len, dlen, pad }, done = 0;
		uint64_t off = w->pos;

		for (int i = 0; i < 3; i++) {
			ret = pwrite_all(w->fd, part[i], plen[i], off, &done);
			off += done;
			if (ret < 0) {
				cut_back(w, w->pos);
				return io_err(w, ret, off, "data");
			}
		}
		w->pos = off;
	}
	return 0;
}

uint8_t *hwt_pd_writer_scratch(struct hwt_pd_writer *w)
{
	return w->rec;
}

/* ---- feature sections ---- */

static void db_put(struct pd_dbuf *b, const void *p, size_t n)
{
	if (b->nomem)
		return;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		uint8_t *np;

		while (cap < b->len + n)
			cap *= 2;
		np = realloc(b->p, cap);
		if (!np) {
			b->nomem = 1;
			return;
		}
		b->p = np;
		b->cap = cap;
	}
	if (n)
		memcpy(b->p + b->len, p, n);
	b->len += n;
}

static void db_u32(struct pd_dbuf *b, uint32_t v)
{
	db_put(b, &v, sizeof(v));
}

static void db_zeros(struct pd_dbuf *b, size_t n)
{
	static const uint8_t zeros[PD_NAME_ALIGN];

	while (n) {
		size_t k = n < sizeof(zeros) ? n : sizeof(zeros);

		db_put(b, zeros, k);
		n -= k;
	}
}

/* perf's do_write_string: u32 length incl. NUL, aligned to 64, then the
 * string zero-padded to that length. */
static void db_string(struct pd_dbuf *b, const char *s)
{
	size_t olen = strlen(s) + 1;
	size_t len = (olen + PD_NAME_ALIGN - 1) / PD_NAME_ALIGN * PD_NAME_ALIGN;

	db_u32(b, (uint32_t)len);
	db_put(b, s, olen);
	db_zeros(b, len - olen);
}

static int is_kernel_dso(const char *name)
{
	size_t n = strlen(name);

	return name[0] == '[' || (n > 3 && !strcmp(name + n - 3, ".ko"));
}

/* perf's struct perf_record_header_build_id, then the name. */
static void db_build_id(struct pd_dbuf *b, const struct pd_wbuild_id *bid)
{
	size_t olen = strlen(bid->filename) + 1;
	size_t len = (olen + PD_NAME_ALIGN - 1) / PD_NAME_ALIGN * PD_NAME_ALIGN;
	struct perf_event_header h = {
		.type = 0,
		.misc = (is_kernel_dso(bid->filename) ? PERF_RECORD_MISC_KERNEL
						      : PERF_RECORD_MISC_USER) |
			HWT_PD_MISC_BUILD_ID_SIZE,
		.size = (uint16_t)(36 + len),
	};
	uint8_t id[24] = { 0 };

	memcpy(id, bid->id, bid->size);
	id[20] = bid->size;
	db_put(b, &h, sizeof(h));
	db_put(b, &bid->pid, sizeof(bid->pid));
	db_put(b, id, sizeof(id));
	db_put(b, bid->filename, olen);
	db_zeros(b, len - olen);
}

static int has_event_desc(const struct hwt_pd_writer *w)
{
	for (size_t i = 0; i < w->nattrs; i++)
		if (w->attrs[i].name && w->attrs[i].nids)
			return 1;
	return 0;
}

/* Feature @feat into @b; 0 if it is not set. */
static int feature(const struct hwt_pd_writer *w, int feat, struct pd_dbuf *b)
{
	if (string_feature(feat)) {
		if (!w->strings[feat])
			return 0;
		db_string(b, w->strings[feat]);
		return 1;
	}
	switch (feat) {
	case HWT_PD_FEAT_NRCPUS:
		if (!w->have_nrcpus)
			return 0;
		db_u32(b, w->nr_avail);
		db_u32(b, w->nr_online);
		return 1;
	case HWT_PD_FEAT_CMDLINE:
		if (!w->have_cmdline)
			return 0;
		db_u32(b, (uint32_t)w->ncmdline);
		for (int i = 0; i < w->ncmdline; i++)
			db_string(b, w->cmdline[i]);
		return 1;
	case HWT_PD_FEAT_BUILD_ID:
		if (!w->nbids)
			return 0;
		for (size_t i = 0; i < w->nbids; i++)
			db_build_id(b, &w->bids[i]);
		return 1;
	case HWT_PD_FEAT_HWT_EXIT:
		if (!w->nexits)
			return 0;
		_Static_assert(sizeof(struct hwt_pd_exit) == 40, "exit entry");
		db_u32(b, (uint32_t)w->nexits);
		db_u32(b, (uint32_t)sizeof(struct hwt_pd_exit));
		db_put(b, w->exits, w->nexits * sizeof(*w->exits));
		return 1;
	case HWT_PD_FEAT_AUXTRACE: {
		uint64_t n = 0;

		/* Only the records that made it into the file (data
		 * included: cut_back() never leaves a torn one). */
		for (size_t i = 0; i < w->naux_index; i++)
			n += w->aux_index[i].offset < w->pos;
		if (!n)
			return 0;
		db_put(b, &n, sizeof(n));
		for (size_t i = 0; i < w->naux_index; i++)
			if (w->aux_index[i].offset < w->pos)
				db_put(b, &w->aux_index[i],
				       sizeof(w->aux_index[i]));
		return 1;
	}
	case HWT_PD_FEAT_EVENT_DESC: {
		uint32_t n = 0;

		if (!has_event_desc(w))
			return 0;
		/* Only named attrs with ids: perf finds the evsel to name by
		 * its first id. */
		for (size_t i = 0; i < w->nattrs; i++)
			n += w->attrs[i].name && w->attrs[i].nids;
		db_u32(b, n);
		db_u32(b, (uint32_t)sizeof(struct perf_event_attr));
		for (size_t i = 0; i < w->nattrs; i++) {
			const struct pd_wattr *a = &w->attrs[i];

			if (!a->name || !a->nids)
				continue;
			db_put(b, &a->attr, sizeof(a->attr));
			db_u32(b, (uint32_t)a->nids);
			db_string(b, a->name);
			db_put(b, a->ids, a->nids * 8);
		}
		return 1;
	}
	default:
		return 0;
	}
}

/*
 * The feature table and sections at the end of the data. Returns the
 * bitmap of what was written through @features.
 */
static int write_features(struct hwt_pd_writer *w, uint64_t features[4])
{
	struct pd_file_section sec[256];
	struct pd_dbuf blob = { 0 }, tab = { 0 };
	size_t nsec = 0, done;
	uint64_t off;
	int ret = 0;

	memset(features, 0, 4 * sizeof(uint64_t));
	/* Sections go in bit order, hwt's own after perf's. */
	for (int f = 1; f < 256; f++) {
		size_t before = blob.len;

		if (!feature(w, f, &blob))
			continue;
		sec[nsec].offset = before;
		sec[nsec].size = blob.len - before;
		nsec++;
		features[f / 64] |= 1ull << (f % 64);
	}
	if (!nsec)
		return 0;
	off = w->pos + nsec * sizeof(sec[0]);
	for (size_t i = 0; i < nsec; i++) {
		sec[i].offset += off;
		db_put(&tab, &sec[i], sizeof(sec[i]));
	}
	db_put(&tab, blob.p, blob.len);
	if (tab.nomem || blob.nomem) {
		ret = set_err(w, -HWT_ERR_NOMEM, "out of memory");
	} else {
		ret = pwrite_all(w->fd, tab.p, tab.len, w->pos, &done);
		if (ret < 0)
			ret = io_err(w, ret, w->pos + done, "the features");
	}
	free(tab.p);
	free(blob.p);
	if (ret < 0) {
		memset(features, 0, 4 * sizeof(uint64_t));
		cut_back(w, w->pos);
	}
	return ret;
}

static void writer_free(struct hwt_pd_writer *w)
{
	for (size_t i = 0; i < w->nattrs; i++) {
		free(w->attrs[i].ids);
		free(w->attrs[i].name);
	}
	free(w->attrs);
	for (int i = 0; i < HWT_PD_FEAT_LAST; i++)
		free(w->strings[i]);
	free_cmdline(w);
	for (size_t i = 0; i < w->nbids; i++)
		free(w->bids[i].filename);
	free(w->bids);
	free(w->exits);
	free(w->aux_index);
	free(w->buf);
	free(w->path);
	free(w);
}

int hwt_pd_writer_close(struct hwt_pd_writer *w, char *err, size_t errlen)
{
	struct pd_file_header h;
	uint64_t features[4] = { 0 };
	int ret;

	if (err && errlen)
		err[0] = '\0';
	if (!w)
		return 0;
	/* After a data error the file still gets a header describing the
	 * records that made it, and features if there is room for them. */
	if (!w->err)
		flush_buf(w);
	if (!w->data_started)
		start_data(w);
	if (w->data_started) {
		write_features(w, features);
		memset(&h, 0, sizeof(h));
		memcpy(h.magic, PD_MAGIC, sizeof(h.magic));
		h.size = sizeof(h);
		h.attr_size = HWT_PD_FILE_ATTR_SIZE;
		h.attrs.offset = w->attrs_offset;
		h.attrs.size = w->nattrs * HWT_PD_FILE_ATTR_SIZE;
		h.data.offset = w->data_offset;
		h.data.size = w->pos - w->data_offset;
		memcpy(h.features, features, sizeof(h.features));
		ret = pwrite_all(w->fd, &h, sizeof(h), 0, NULL);
		if (ret < 0)
			io_err(w, ret, 0, "the file header");
	}
	if (close(w->fd) < 0)
		set_err(w, -HWT_ERR_IO, "close: %s", strerror(errno));
	ret = w->err;
	if (ret && err && errlen)
		snprintf(err, errlen, "%s", w->errmsg);
	writer_free(w);
	return ret;
}

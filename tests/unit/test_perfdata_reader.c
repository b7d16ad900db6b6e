/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The perf.data reader. Files are assembled byte by byte here from the
 * layouts in <linux/perf_event.h> and perf's file format (every record
 * type, id matching with several attrs, attr sizes of other perf versions,
 * broken headers and records, truncation at every length, pipe mode read
 * through a pipe); real files come from the installed perf (skipped
 * without it) and are checked against `perf script`.
 *
 * With HWT_PD_SEED_DIR=DIR set, the assembled files are also written to
 * DIR (that is how fuzz/corpus/perfdata/hand-* were made).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifdef HWT_HAVE_ZSTD
#include <zstd.h>
#endif

#include <hwt/perfdata.h>

/* ---- byte assembly ------------------------------------------------- */

struct buf {
	uint8_t *p;
	size_t n, cap;
};

static void put(struct buf *b, const void *d, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = 2 * (b->n + n) + 64;
		b->p = realloc(b->p, b->cap);
		assert_non_null(b->p);
	}
	if (d)
		memcpy(b->p + b->n, d, n);
	else
		memset(b->p + b->n, 0, n);
	b->n += n;
}

static void put_u8(struct buf *b, uint8_t v) { put(b, &v, 1); }
static void put_u16(struct buf *b, uint16_t v) { put(b, &v, 2); }
static void put_u32(struct buf *b, uint32_t v) { put(b, &v, 4); }
static void put_u64(struct buf *b, uint64_t v) { put(b, &v, 8); }

static void pad8(struct buf *b)
{
	while (b->n % 8)
		put_u8(b, 0);
}

/* A NUL-terminated string, zero-padded to 8 (as in kernel records). */
static void put_cstr(struct buf *b, const char *s)
{
	put(b, s, strlen(s) + 1);
	pad8(b);
}

/* perf's string: u32 length (a multiple of 64), then the padded string. */
static void put_pstr(struct buf *b, const char *s)
{
	uint32_t len = (uint32_t)((strlen(s) + 1 + 63) / 64 * 64);
	size_t at = b->n;

	put_u32(b, len);
	put(b, NULL, len);
	memcpy(b->p + at + 4, s, strlen(s));
}

static void patch(struct buf *b, size_t off, const void *v, size_t n)
{
	assert_true(off + n <= b->n);
	memcpy(b->p + off, v, n);
}

static void patch_u64(struct buf *b, size_t off, uint64_t v)
{
	patch(b, off, &v, 8);
}

static size_t rec_begin(struct buf *b, uint32_t type, uint16_t misc)
{
	size_t at = b->n;

	put_u32(b, type);
	put_u16(b, misc);
	put_u16(b, 0);
	return at;
}

static void rec_end(struct buf *b, size_t at)
{
	uint16_t size;

	pad8(b);
	size = (uint16_t)(b->n - at);
	patch(b, at + 6, &size, 2);
}

/* The sample_id_all trailer for @st: TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER. */
static void put_sid(struct buf *b, uint64_t st, uint32_t pid, uint32_t tid,
		    uint64_t time, uint64_t id, uint32_t cpu)
{
	if (st & PERF_SAMPLE_TID) {
		put_u32(b, pid);
		put_u32(b, tid);
	}
	if (st & PERF_SAMPLE_TIME)
		put_u64(b, time);
	if (st & PERF_SAMPLE_ID)
		put_u64(b, id);
	if (st & PERF_SAMPLE_STREAM_ID)
		put_u64(b, 0);
	if (st & PERF_SAMPLE_CPU) {
		put_u32(b, cpu);
		put_u32(b, 0);
	}
	if (st & PERF_SAMPLE_IDENTIFIER)
		put_u64(b, id);
}

struct fattr {
	struct perf_event_attr attr;
	const uint64_t *ids;
	size_t nids;
};

struct feat {
	unsigned int bit;
	struct buf body;
};

struct layout {
	size_t attrs_off, ids_off, data_off, feat_off;
};

/*
 * header | attrs (@attr_sz bytes each + ids section) | ids | data |
 * feature table | feature bodies. @feats sorted by bit.
 */
static struct layout build_file(struct buf *out, const struct fattr *attrs,
				size_t nattrs, size_t attr_sz,
				const struct buf *data, const struct feat *feats,
				size_t nfeats)
{
	struct layout l;
	size_t nids = 0, ido, fo;
	uint64_t bits[4] = { 0 };

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < nattrs; i++)
		nids += attrs[i].nids;
	l.attrs_off = 104;
	l.ids_off = l.attrs_off + nattrs * (attr_sz + 16);
	l.data_off = l.ids_off + 8 * nids;
	l.feat_off = l.data_off + data->n;
	for (size_t i = 0; i < nfeats; i++)
		bits[feats[i].bit / 64] |= 1ull << (feats[i].bit % 64);

	put(out, "PERFILE2", 8);
	put_u64(out, 104);
	put_u64(out, attr_sz + 16);
	put_u64(out, l.attrs_off);
	put_u64(out, nattrs * (attr_sz + 16));
	put_u64(out, l.data_off);
	put_u64(out, data->n);
	put_u64(out, 0);
	put_u64(out, 0);
	put(out, bits, sizeof(bits));

	ido = l.ids_off;
	for (size_t i = 0; i < nattrs; i++) {
		struct perf_event_attr a = attrs[i].attr;
		size_t n = attr_sz < sizeof(a) ? attr_sz : sizeof(a);

		a.size = (uint32_t)attr_sz;
		put(out, &a, n);
		/* a newer perf's fields we do not know: must be ignored */
		for (size_t j = n; j < attr_sz; j++)
			put_u8(out, 0xab);
		put_u64(out, ido);
		put_u64(out, 8 * attrs[i].nids);
		ido += 8 * attrs[i].nids;
	}
	for (size_t i = 0; i < nattrs; i++)
		put(out, attrs[i].ids, 8 * attrs[i].nids);
	put(out, data->p, data->n);
	fo = l.feat_off + 16 * nfeats;
	for (size_t i = 0; i < nfeats; i++) {
		put_u64(out, fo);
		put_u64(out, feats[i].body.n);
		fo += feats[i].body.n;
	}
	for (size_t i = 0; i < nfeats; i++)
		put(out, feats[i].body.p, feats[i].body.n);
	return l;
}

static int memfile(const void *p, size_t n)
{
	int fd = memfd_create("pd", MFD_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, p, n), (ssize_t)n);
	return fd;
}

/* A pipe holding @n bytes, write end closed (small inputs only). */
static int pipefile(const void *p, size_t n)
{
	int fds[2];

	assert_int_equal(pipe(fds), 0);
	assert_true(n <= 65536);
	if (n)
		assert_int_equal(write(fds[1], p, n), (ssize_t)n);
	close(fds[1]);
	return fds[0];
}

static char errbuf[512];

static struct hwt_pd_reader *open_fd_ok(int fd)
{
	struct hwt_pd_reader *r = NULL;
	int ret = hwt_pd_open_fd(&r, fd, errbuf, sizeof(errbuf));

	if (ret)
		fail_msg("open: %d %s", ret, errbuf);
	assert_non_null(r);
	return r;
}

/* Opening @b fails with @code and a message containing @what. */
static void open_fails(const struct buf *b, int code, const char *what)
{
	struct hwt_pd_reader *r = (struct hwt_pd_reader *)1;
	int fd = memfile(b->p, b->n);
	int ret = hwt_pd_open_fd(&r, fd, errbuf, sizeof(errbuf));

	close(fd);
	if (ret != code || !strstr(errbuf, what))
		fail_msg("expected %d '%s', got %d '%s'", code, what, ret,
			 errbuf);
	assert_null(r);
}

static struct hwt_pd_record next_ok(struct hwt_pd_reader *r, uint32_t type)
{
	struct hwt_pd_record rec;
	int ret = hwt_pd_next(r, &rec);

	if (ret != 1)
		fail_msg("next: %d %s", ret, hwt_pd_errmsg(r));
	if (rec.type != type)
		fail_msg("type %u (%s), expected %u (%s) at %#" PRIx64,
			 rec.type, hwt_pd_record_name(rec.type), type,
			 hwt_pd_record_name(type), rec.file_offset);
	return rec;
}

static void save_seed(const char *name, const struct buf *b)
{
	const char *dir = getenv("HWT_PD_SEED_DIR");
	char path[512];
	FILE *f;

	if (!dir)
		return;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(b->p, 1, b->n, f), b->n);
	assert_int_equal(fclose(f), 0);
}

static void feat_free(struct feat *f, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(f[i].body.p);
}

/* ---- a file with every record type --------------------------------- */

#define ST_ALL (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |      \
		PERF_SAMPLE_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |     \
		PERF_SAMPLE_IDENTIFIER)

static const uint64_t ids_a[] = { 101, 102 };

static struct fattr attr_all(void)
{
	struct fattr a;

	memset(&a, 0, sizeof(a));
	a.attr.type = PERF_TYPE_SOFTWARE;
	a.attr.config = PERF_COUNT_SW_DUMMY;
	a.attr.sample_type = ST_ALL;
	a.attr.sample_id_all = 1;
	a.attr.mmap2 = 1;
	a.ids = ids_a;
	a.nids = 2;
	return a;
}

/* A kernel record's trailer for attr_all: pid 10, tid 11, cpu 2. */
static void sid_all(struct buf *b, uint64_t time)
{
	put_sid(b, ST_ALL, 10, 11, time, 101, 2);
}

static size_t nrecs_all;	/* records build_all_data() writes */

static void build_all_data(struct buf *d)
{
	size_t at;

	memset(d, 0, sizeof(*d));
	at = rec_begin(d, PERF_RECORD_MMAP, PERF_RECORD_MISC_USER);
	put_u32(d, 10); put_u32(d, 11);
	put_u64(d, 0x400000); put_u64(d, 0x1000); put_u64(d, 0);
	put_cstr(d, "/bin/a");
	sid_all(d, 1000);
	rec_end(d, at);

	at = rec_begin(d, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
	put_u32(d, 10); put_u32(d, 11);
	put_u64(d, 0x7f0000000000); put_u64(d, 0x26000); put_u64(d, 0x1000);
	put_u32(d, 8); put_u32(d, 1); put_u64(d, 1234); put_u64(d, 5);
	put_u32(d, PROT_READ | PROT_EXEC); put_u32(d, MAP_PRIVATE);
	put_cstr(d, "/usr/lib/libc.so.6");
	sid_all(d, 1001);
	rec_end(d, at);

	at = rec_begin(d, PERF_RECORD_MMAP2,
		       PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID);
	put_u32(d, 10); put_u32(d, 11);
	put_u64(d, 0x500000); put_u64(d, 0x2000); put_u64(d, 0);
	put_u8(d, 20); put_u8(d, 0); put_u16(d, 0);
	for (uint8_t i = 0; i < 20; i++)
		put_u8(d, (uint8_t)(0xc0 + i));
	put_u32(d, PROT_READ); put_u32(d, MAP_SHARED);
	put_cstr(d, "/x");
	sid_all(d, 1002);
	rec_end(d, at);

	at = rec_begin(d, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
	put_u32(d, 10); put_u32(d, 11);
	put_cstr(d, "prog");
	sid_all(d, 1003);
	rec_end(d, at);

	at = rec_begin(d, PERF_RECORD_FORK, 0);
	put_u32(d, 12); put_u32(d, 10); put_u32(d, 13); put_u32(d, 11);
	put_u64(d, 77);
	sid_all(d, 1004);
	rec_end(d, at);

	at = rec_begin(d, PERF_RECORD_EXIT, 0);
	put_u32(d, 12); put_u32(d, 10); put_u32(d, 13); put_u32(d, 11);
	put_u64(d, 78);
	sid_all(d, 1005);
	rec_end(d, at);

	at = rec_begin(d, PERF_RECORD_LOST, 0);
	put_u64(d, 101); put_u64(d, 5);
	sid_all(d, 1006);
	rec_end(d, at);

	at = rec_begin(d, PERF_RECORD_LOST_SAMPLES, 0);
	put_u64(d, 7);
	sid_all(d, 1007);
	rec_end(d, at);

	at = rec_begin(d, PERF_RECORD_THROTTLE, 0);
	put_u64(d, 1); put_u64(d, 101); put_u64(d, 3);
	sid_all(d, 1008);
	rec_end(d, at);

	at = rec_begin(d, PERF_RECORD_UNTHROTTLE, 0);
	put_u64(d, 2); put_u64(d, 101); put_u64(d, 4);
	sid_all(d, 1009);
	rec_end(d, at);

	at = rec_begin(d, PERF_RECORD_ITRACE_START, 0);
	put_u32(d, 10); put_u32(d, 11);
	sid_all(d, 1010);
	rec_end(d, at);

	at = rec_begin(d, PERF_RECORD_AUX, 0);
	put_u64(d, 0x100); put_u64(d, 0x200);
	put_u64(d, PERF_AUX_FLAG_TRUNCATED | PERF_AUX_FLAG_PARTIAL);
	sid_all(d, 1011);
	rec_end(d, at);

	at = rec_begin(d, PERF_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT |
			  PERF_RECORD_MISC_SWITCH_OUT_PREEMPT);
	sid_all(d, 1012);
	rec_end(d, at);

	at = rec_begin(d, PERF_RECORD_SWITCH_CPU_WIDE, 0);
	put_u32(d, 20); put_u32(d, 21);
	sid_all(d, 1013);
	rec_end(d, at);

	at = rec_begin(d, PERF_RECORD_KSYMBOL, 0);
	put_u64(d, 0xffffffff81000000ull); put_u32(d, 64);
	put_u16(d, PERF_RECORD_KSYMBOL_TYPE_BPF); put_u16(d, 0);
	put_cstr(d, "bpf_prog_x");
	sid_all(d, 1014);
	rec_end(d, at);

	at = rec_begin(d, PERF_RECORD_TEXT_POKE, 0);
	put_u64(d, 0xffffffff81000100ull); put_u16(d, 2); put_u16(d, 3);
	put(d, "\x66\x90\xe8\x01\x02", 5);
	pad8(d);
	sid_all(d, 1015);
	rec_end(d, at);

	/* identifier 102, ip, pid/tid, time, addr absent, id, cpu, period */
	at = rec_begin(d, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	put_u64(d, 102); put_u64(d, 0x401000);
	put_u32(d, 10); put_u32(d, 11); put_u64(d, 1016);
	put_u64(d, 102); put_u32(d, 3); put_u32(d, 0); put_u64(d, 1000);
	rec_end(d, at);

	at = rec_begin(d, HWT_PD_AUXTRACE_INFO, 0);
	put_u32(d, HWT_PD_AUXTRACE_INTEL_PT); put_u32(d, 0);
	for (uint64_t i = 1; i <= 4; i++)
		put_u64(d, i);
	rec_end(d, at);

	at = rec_begin(d, HWT_PD_AUXTRACE, 0);
	put_u64(d, 16); put_u64(d, 0); put_u64(d, 0x55);
	put_u32(d, 0); put_u32(d, 11); put_u32(d, 2); put_u32(d, 0);
	rec_end(d, at);
	for (uint8_t i = 0; i < 16; i++)
		put_u8(d, (uint8_t)(0xa0 + i));

	at = rec_begin(d, HWT_PD_AUXTRACE_ERROR, 0);
	put_u32(d, 1); put_u32(d, 6); put_u32(d, 2); put_u32(d, 10);
	put_u32(d, 11); put_u32(d, 1); put_u64(d, 0x401000); put_u64(d, 99);
	put_cstr(d, "decoder error");
	rec_end(d, at);

	at = rec_begin(d, HWT_PD_TIME_CONV, 0);
	put_u64(d, 10); put_u64(d, 1536); put_u64(d, 1000);
	put_u64(d, 0); put_u64(d, 0); put_u8(d, 1); put_u8(d, 0);
	rec_end(d, at);

	at = rec_begin(d, HWT_PD_FINISHED_ROUND, 0);
	rec_end(d, at);

	at = rec_begin(d, 123, 0);	/* a type nobody knows */
	put_u64(d, 0x1234);
	rec_end(d, at);

	at = rec_begin(d, HWT_PD_ID_INDEX, 0);
	put_u64(d, 1);
	put_u64(d, 555); put_u64(d, 0); put_u64(d, 0); put_u64(d, 0);
	rec_end(d, at);

	nrecs_all = 24;
}

static size_t build_all_feats(struct feat *f)
{
	size_t n = 0, at;
	struct fattr fa;
	struct buf *b;

	memset(f, 0, 16 * sizeof(*f));
	f[n].bit = HWT_PD_FEAT_BUILD_ID;
	b = &f[n++].body;
	/* sized build id (16 bytes), then an old one without the size bit */
	at = rec_begin(b, 0, PERF_RECORD_MISC_EXT_RESERVED |
			  PERF_RECORD_MISC_USER);
	put_u32(b, 10);
	for (uint8_t i = 0; i < 20; i++)
		put_u8(b, i < 16 ? (uint8_t)(0x10 + i) : 0);
	put_u8(b, 16); put_u8(b, 0); put_u16(b, 0);
	put_cstr(b, "/usr/lib/libc.so.6");
	rec_end(b, at);
	at = rec_begin(b, 0, PERF_RECORD_MISC_KERNEL);
	put_u32(b, (uint32_t)-1);
	for (uint8_t i = 0; i < 24; i++)
		put_u8(b, (uint8_t)(0x30 + i));
	put_cstr(b, "[kernel.kallsyms]");
	rec_end(b, at);

	f[n].bit = HWT_PD_FEAT_HOSTNAME;
	put_pstr(&f[n++].body, "testhost");
	f[n].bit = HWT_PD_FEAT_OSRELEASE;
	put_pstr(&f[n++].body, "6.1.0-test");
	f[n].bit = HWT_PD_FEAT_VERSION;
	put_pstr(&f[n++].body, "6.1.99");
	f[n].bit = HWT_PD_FEAT_ARCH;
	put_pstr(&f[n++].body, "x86_64");
	f[n].bit = HWT_PD_FEAT_NRCPUS;
	put_u32(&f[n].body, 8);
	put_u32(&f[n++].body, 4);
	f[n].bit = HWT_PD_FEAT_CPUDESC;
	put_pstr(&f[n++].body, "Test CPU @ 1GHz");
	f[n].bit = HWT_PD_FEAT_CPUID;
	put_pstr(&f[n++].body, "GenuineIntel,6,85,4");
	f[n].bit = HWT_PD_FEAT_TOTAL_MEM;
	put_u64(&f[n++].body, 123456);
	f[n].bit = HWT_PD_FEAT_CMDLINE;
	put_u32(&f[n].body, 3);
	put_pstr(&f[n].body, "perf");
	put_pstr(&f[n].body, "record");
	put_pstr(&f[n++].body, "-e dummy");
	f[n].bit = HWT_PD_FEAT_EVENT_DESC;
	b = &f[n++].body;
	put_u32(b, 1);
	put_u32(b, sizeof(struct perf_event_attr));
	fa = attr_all();
	fa.attr.size = sizeof(fa.attr);	/* perf ends its list at size 0 */
	put(b, &fa.attr, sizeof(fa.attr));
	put_u32(b, 2);
	put_pstr(b, "dummy:u");
	put_u64(b, 101);
	put_u64(b, 102);
	/* a feature the reader only notes */
	f[n].bit = HWT_PD_FEAT_CPU_TOPOLOGY;
	put(&f[n++].body, "\x01\x02\x03", 3);
	f[n].bit = HWT_PD_FEAT_CLOCK_DATA;
	put_u32(&f[n].body, 1);
	put_u32(&f[n].body, 1);	/* CLOCK_MONOTONIC */
	put_u64(&f[n].body, 1700000000000000000ull);
	put_u64(&f[n++].body, 5000);
	return n;
}

static void build_all(struct buf *file, struct layout *l)
{
	struct fattr a = attr_all();
	struct buf d;
	struct feat f[16];
	size_t nf = build_all_feats(f);

	build_all_data(&d);
	*l = build_file(file, &a, 1, sizeof(struct perf_event_attr), &d, f, nf);
	free(d.p);
	feat_free(f, nf);
}

static void check_sid_all(const struct hwt_pd_record *rec, uint64_t time)
{
	assert_int_equal(rec->sid.present, HWT_PD_SID_TID | HWT_PD_SID_TIME |
			 HWT_PD_SID_ID | HWT_PD_SID_CPU | HWT_PD_SID_IDENTIFIER);
	assert_int_equal(rec->sid.pid, 10);
	assert_int_equal(rec->sid.tid, 11);
	assert_int_equal(rec->sid.time, time);
	assert_int_equal(rec->sid.id, 101);
	assert_int_equal(rec->sid.cpu, 2);
}

static void read_all_records(struct hwt_pd_reader *r)
{
	const struct hwt_pd_attr *a = hwt_pd_get_attr(r, 0);
	struct hwt_pd_record rec;
	uint64_t unknown;

	rec = next_ok(r, PERF_RECORD_MMAP);
	assert_ptr_equal(rec.attr, a);
	check_sid_all(&rec, 1000);
	assert_int_equal(rec.misc, PERF_RECORD_MISC_USER);
	assert_int_equal(rec.u.mmap.pid, 10);
	assert_int_equal(rec.u.mmap.tid, 11);
	assert_int_equal(rec.u.mmap.start, 0x400000);
	assert_int_equal(rec.u.mmap.len, 0x1000);
	assert_int_equal(rec.u.mmap.is_mmap2, 0);
	assert_string_equal(rec.u.mmap.filename, "/bin/a");
	assert_int_equal(rec.file_offset, hwt_pd_get_info(r)->data_offset);
	assert_int_equal(rec.size, 8 + 32 + 8 + 40);

	rec = next_ok(r, PERF_RECORD_MMAP2);
	check_sid_all(&rec, 1001);
	assert_int_equal(rec.u.mmap.is_mmap2, 1);
	assert_int_equal(rec.u.mmap.start, 0x7f0000000000);
	assert_int_equal(rec.u.mmap.pgoff, 0x1000);
	assert_int_equal(rec.u.mmap.maj, 8);
	assert_int_equal(rec.u.mmap.min, 1);
	assert_int_equal(rec.u.mmap.ino, 1234);
	assert_int_equal(rec.u.mmap.ino_generation, 5);
	assert_int_equal(rec.u.mmap.prot, PROT_READ | PROT_EXEC);
	assert_int_equal(rec.u.mmap.flags, MAP_PRIVATE);
	assert_int_equal(rec.u.mmap.build_id_size, 0);
	assert_string_equal(rec.u.mmap.filename, "/usr/lib/libc.so.6");

	rec = next_ok(r, PERF_RECORD_MMAP2);
	assert_int_equal(rec.u.mmap.build_id_size, 20);
	assert_int_equal(rec.u.mmap.build_id[0], 0xc0);
	assert_int_equal(rec.u.mmap.build_id[19], 0xc0 + 19);
	assert_int_equal(rec.u.mmap.maj, 0);
	assert_int_equal(rec.u.mmap.ino, 0);
	assert_int_equal(rec.u.mmap.flags, MAP_SHARED);
	assert_string_equal(rec.u.mmap.filename, "/x");

	rec = next_ok(r, PERF_RECORD_COMM);
	check_sid_all(&rec, 1003);
	assert_int_equal(rec.u.comm.exec, 1);
	assert_int_equal(rec.u.comm.pid, 10);
	assert_string_equal(rec.u.comm.comm, "prog");

	rec = next_ok(r, PERF_RECORD_FORK);
	assert_int_equal(rec.u.task.pid, 12);
	assert_int_equal(rec.u.task.ppid, 10);
	assert_int_equal(rec.u.task.tid, 13);
	assert_int_equal(rec.u.task.ptid, 11);
	assert_int_equal(rec.u.task.time, 77);
	rec = next_ok(r, PERF_RECORD_EXIT);
	assert_int_equal(rec.u.task.time, 78);
	check_sid_all(&rec, 1005);

	rec = next_ok(r, PERF_RECORD_LOST);
	assert_int_equal(rec.u.lost.id, 101);
	assert_int_equal(rec.u.lost.lost, 5);
	rec = next_ok(r, PERF_RECORD_LOST_SAMPLES);
	assert_int_equal(rec.u.lost_samples.lost, 7);
	rec = next_ok(r, PERF_RECORD_THROTTLE);
	assert_int_equal(rec.u.throttle.time, 1);
	assert_int_equal(rec.u.throttle.id, 101);
	assert_int_equal(rec.u.throttle.stream_id, 3);
	rec = next_ok(r, PERF_RECORD_UNTHROTTLE);
	assert_int_equal(rec.u.throttle.stream_id, 4);
	check_sid_all(&rec, 1009);
	rec = next_ok(r, PERF_RECORD_ITRACE_START);
	assert_int_equal(rec.u.itrace_start.pid, 10);
	assert_int_equal(rec.u.itrace_start.tid, 11);
	rec = next_ok(r, PERF_RECORD_AUX);
	assert_int_equal(rec.u.aux.aux_offset, 0x100);
	assert_int_equal(rec.u.aux.aux_size, 0x200);
	assert_int_equal(rec.u.aux.flags,
			 PERF_AUX_FLAG_TRUNCATED | PERF_AUX_FLAG_PARTIAL);

	rec = next_ok(r, PERF_RECORD_SWITCH);
	assert_int_equal(rec.u.sw.out, 1);
	assert_int_equal(rec.u.sw.preempt, 1);
	assert_int_equal(rec.u.sw.cpu_wide, 0);
	check_sid_all(&rec, 1012);
	rec = next_ok(r, PERF_RECORD_SWITCH_CPU_WIDE);
	assert_int_equal(rec.u.sw.out, 0);
	assert_int_equal(rec.u.sw.cpu_wide, 1);
	assert_int_equal(rec.u.sw.next_prev_pid, 20);
	assert_int_equal(rec.u.sw.next_prev_tid, 21);

	rec = next_ok(r, PERF_RECORD_KSYMBOL);
	assert_int_equal(rec.u.ksymbol.addr, 0xffffffff81000000ull);
	assert_int_equal(rec.u.ksymbol.len, 64);
	assert_int_equal(rec.u.ksymbol.ksym_type, PERF_RECORD_KSYMBOL_TYPE_BPF);
	assert_string_equal(rec.u.ksymbol.name, "bpf_prog_x");
	rec = next_ok(r, PERF_RECORD_TEXT_POKE);
	assert_int_equal(rec.u.text_poke.addr, 0xffffffff81000100ull);
	assert_int_equal(rec.u.text_poke.old_len, 2);
	assert_int_equal(rec.u.text_poke.new_len, 3);
	assert_memory_equal(rec.u.text_poke.bytes, "\x66\x90\xe8\x01\x02", 5);
	check_sid_all(&rec, 1015);

	rec = next_ok(r, PERF_RECORD_SAMPLE);
	assert_ptr_equal(rec.attr, a);
	assert_int_equal(rec.u.sample.ip, 0x401000);
	assert_int_equal(rec.u.sample.period, 1000);
	assert_int_equal(rec.u.sample.sample_type, ST_ALL);
	assert_int_equal(rec.u.sample.raw_size, 56);
	assert_int_equal(rec.sid.pid, 10);
	assert_int_equal(rec.sid.tid, 11);
	assert_int_equal(rec.sid.time, 1016);
	assert_int_equal(rec.sid.id, 102);
	assert_int_equal(rec.sid.cpu, 3);

	rec = next_ok(r, HWT_PD_AUXTRACE_INFO);
	assert_null(rec.attr);
	assert_int_equal(rec.sid.present, 0);
	assert_int_equal(rec.u.auxtrace_info.type, HWT_PD_AUXTRACE_INTEL_PT);
	assert_int_equal(rec.u.auxtrace_info.npriv, 4);
	assert_int_equal(rec.u.auxtrace_info.priv[0], 1);
	assert_int_equal(rec.u.auxtrace_info.priv[3], 4);

	rec = next_ok(r, HWT_PD_AUXTRACE);
	assert_int_equal(rec.size, 48);
	assert_int_equal(rec.u.auxtrace.size, 16);
	assert_int_equal(rec.u.auxtrace.reference, 0x55);
	assert_int_equal(rec.u.auxtrace.tid, 11);
	assert_int_equal(rec.u.auxtrace.cpu, 2);
	assert_int_equal(rec.u.auxtrace.data_file_offset, rec.file_offset + 48);
	for (int i = 0; i < 16; i++)
		assert_int_equal(rec.u.auxtrace.data[i], 0xa0 + i);

	rec = next_ok(r, HWT_PD_AUXTRACE_ERROR);
	assert_int_equal(rec.u.auxtrace_error.code, 6);
	assert_int_equal(rec.u.auxtrace_error.fmt, 1);
	assert_int_equal(rec.u.auxtrace_error.ip, 0x401000);
	assert_int_equal(rec.u.auxtrace_error.time, 99);
	assert_string_equal(rec.u.auxtrace_error.msg, "decoder error");

	rec = next_ok(r, HWT_PD_TIME_CONV);
	assert_int_equal(rec.u.time_conv.time_shift, 10);
	assert_int_equal(rec.u.time_conv.time_mult, 1536);
	assert_int_equal(rec.u.time_conv.time_zero, 1000);
	assert_int_equal(rec.u.time_conv.extended, 1);
	assert_int_equal(rec.u.time_conv.cap_user_time_zero, 1);

	next_ok(r, HWT_PD_FINISHED_ROUND);
	unknown = hwt_pd_unknown_records(r);
	rec = next_ok(r, 123);
	assert_int_equal(rec.size, 16);
	assert_null(rec.attr);
	assert_int_equal(hwt_pd_unknown_records(r), unknown + 1);
	next_ok(r, HWT_PD_ID_INDEX);
	assert_int_equal(hwt_pd_next(r, &rec), 0);
	assert_int_equal(hwt_pd_next(r, &rec), 0);
}

static void test_all_records(void **state)
{
	struct buf file;
	struct layout l;
	struct hwt_pd_reader *r;
	const struct hwt_pd_info *info;
	const struct hwt_pd_attr *a;
	int fd;

	(void)state;
	build_all(&file, &l);
	save_seed("hand-all.data", &file);
	fd = memfile(file.p, file.n);
	r = open_fd_ok(fd);
	info = hwt_pd_get_info(r);
	assert_int_equal(info->pipe_mode, 0);
	assert_int_equal(info->data_offset, l.data_off);
	assert_int_equal(info->data_size, l.feat_off - l.data_off);
	assert_string_equal(info->hostname, "testhost");
	assert_string_equal(info->osrelease, "6.1.0-test");
	assert_string_equal(info->version, "6.1.99");
	assert_string_equal(info->arch, "x86_64");
	assert_string_equal(info->cpudesc, "Test CPU @ 1GHz");
	assert_string_equal(info->cpuid, "GenuineIntel,6,85,4");
	assert_int_equal(info->nr_cpus_avail, 8);
	assert_int_equal(info->nr_cpus_online, 4);
	assert_int_equal(info->total_mem, 123456);
	assert_int_equal(info->ncmdline, 3);
	assert_string_equal(info->cmdline[0], "perf");
	assert_string_equal(info->cmdline[2], "-e dummy");
	assert_int_equal(info->clockid, 1);
	assert_int_equal(info->clock_tod_ns, 1700000000000000000ull);
	assert_int_equal(info->clock_ns, 5000);
	assert_int_equal(info->features[0],
			 (1ull << HWT_PD_FEAT_BUILD_ID) |
			 (1ull << HWT_PD_FEAT_HOSTNAME) |
			 (1ull << HWT_PD_FEAT_OSRELEASE) |
			 (1ull << HWT_PD_FEAT_VERSION) |
			 (1ull << HWT_PD_FEAT_ARCH) |
			 (1ull << HWT_PD_FEAT_NRCPUS) |
			 (1ull << HWT_PD_FEAT_CPUDESC) |
			 (1ull << HWT_PD_FEAT_CPUID) |
			 (1ull << HWT_PD_FEAT_TOTAL_MEM) |
			 (1ull << HWT_PD_FEAT_CMDLINE) |
			 (1ull << HWT_PD_FEAT_EVENT_DESC) |
			 (1ull << HWT_PD_FEAT_CPU_TOPOLOGY) |
			 (1ull << HWT_PD_FEAT_CLOCK_DATA));
	assert_int_equal(info->nbuild_ids, 2);
	assert_int_equal(info->build_ids[0].pid, 10);
	assert_int_equal(info->build_ids[0].size, 16);
	assert_int_equal(info->build_ids[0].id[15], 0x1f);
	assert_string_equal(info->build_ids[0].filename, "/usr/lib/libc.so.6");
	assert_int_equal(info->build_ids[1].pid, -1);
	assert_int_equal(info->build_ids[1].size, 20);
	assert_int_equal(info->build_ids[1].id[19], 0x30 + 19);
	assert_string_equal(info->build_ids[1].filename, "[kernel.kallsyms]");

	assert_int_equal(hwt_pd_nattrs(r), 1);
	assert_null(hwt_pd_get_attr(r, 1));
	a = hwt_pd_get_attr(r, 0);
	assert_int_equal(a->attr.type, PERF_TYPE_SOFTWARE);
	assert_int_equal(a->attr.sample_type, ST_ALL);
	assert_int_equal(a->attr.size, sizeof(struct perf_event_attr));
	assert_int_equal(a->file_attr_size, sizeof(struct perf_event_attr));
	assert_int_equal(a->nids, 2);
	assert_int_equal(a->ids[1], 102);
	assert_string_equal(a->name, "dummy:u");

	read_all_records(r);
	/* a second pass sees the same */
	assert_int_equal(hwt_pd_rewind(r), 0);
	read_all_records(r);
	assert_int_equal(hwt_pd_unknown_records(r), 2);
	hwt_pd_close(r);
	close(fd);
	free(file.p);
}

/* ---- ids and attrs ------------------------------------------------- */

#define ST_ID (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_IDENTIFIER)

static void put_comm(struct buf *d, uint64_t st, uint64_t id, const char *s)
{
	size_t at = rec_begin(d, PERF_RECORD_COMM, 0);

	put_u32(d, 5); put_u32(d, 6);
	put_cstr(d, s);
	put_sid(d, st, 5, 6, 42, id, 0);
	rec_end(d, at);
}

/*
 * perf record -z: the records of a zstd stream cut into compressed
 * records (here of 37 bytes, unpadded as perf writes them), so that many
 * records start in one and end in the next. They come out in order,
 * after the compressed record that completes them; a stream that ends
 * inside a record is an error naming an offset, a damaged one no crash.
 */
static void test_compressed(void **state)
{
#ifdef HWT_HAVE_ZSTD
	static const uint64_t ids[] = { 1 };
	struct buf plain = { 0 }, d = { 0 }, file;
	struct hwt_pd_reader *r;
	struct hwt_pd_record rec;
	struct fattr a;
	char name[32];
	size_t cn, ncomp = 0, n;
	uint8_t *c;
	int fd, ret;

	(void)state;
	memset(&a, 0, sizeof(a));
	a.attr.type = PERF_TYPE_SOFTWARE;
	a.attr.sample_type = ST_ID;
	a.attr.sample_id_all = 1;
	a.ids = ids;
	a.nids = 1;
	for (int i = 0; i < 300; i++) {
		snprintf(name, sizeof(name), "comm-%d-%.*s", i, i % 9, "xxxxxxxxx");
		put_comm(&plain, ST_ID, 1, name);
	}
	for (int damage = 0; damage < 3; damage++) {
		/* 0: whole; 1: a byte of the stream changed; 2: the stream
		 * ends 20 bytes into the last record. */
		size_t in = damage == 2 ? plain.n - 20 : plain.n, end;

		cn = ZSTD_compressBound(in);
		c = malloc(cn);
		assert_non_null(c);
		cn = ZSTD_compress(c, cn, plain.p, in, 3);
		assert_false(ZSTD_isError(cn));
		end = cn;
		d.n = 0;
		for (size_t off = 0; off < end; off += 37) {
			size_t at = rec_begin(&d, HWT_PD_COMPRESSED, 0);
			uint16_t size;

			n = end - off < 37 ? end - off : 37;
			put(&d, c + off, n);
			if (damage == 1 && off == 37 * 3)
				d.p[d.n - 5] ^= 0x5a;
			size = (uint16_t)(d.n - at);
			patch(&d, at + 6, &size, 2);
		}
		build_file(&file, &a, 1, sizeof(a.attr), &d, NULL, 0);
		if (damage == 0)
			save_seed("hand-compressed.data", &file);
		fd = memfile(file.p, file.n);
		r = open_fd_ok(fd);
		n = 0;
		ncomp = 0;
		while ((ret = hwt_pd_next(r, &rec)) > 0) {
			if (rec.type == HWT_PD_COMPRESSED) {
				ncomp++;
				continue;
			}
			/* zstd without checksums may turn a changed byte
			 * into other bytes: records, but not these. */
			if (damage == 1)
				continue;
			assert_int_equal(rec.type, PERF_RECORD_COMM);
			snprintf(name, sizeof(name), "comm-%zu-%.*s", n,
				 (int)(n % 9), "xxxxxxxxx");
			assert_string_equal(rec.u.comm.comm, name);
			assert_int_equal(rec.sid.time, 42);
			n++;
		}
		if (damage == 0) {
			assert_int_equal(ret, 0);
			assert_int_equal(n, 300);
			assert_int_equal(ncomp, (cn + 36) / 37);
		} else if (damage == 2) {
			/* An error naming the offset where the file ends. */
			assert_true(ret < 0);
			assert_true(n < 300);
			assert_non_null(strstr(hwt_pd_errmsg(r), "offset 0x"));
			assert_non_null(strstr(hwt_pd_errmsg(r),
					       "compressed records end inside a record"));
		} else if (ret < 0) {
			assert_non_null(strstr(hwt_pd_errmsg(r), "offset 0x"));
		}
		hwt_pd_close(r);
		close(fd);
		free(file.p);
		free(c);
	}
	free(plain.p);
	free(d.p);
#else
	(void)state;
	skip();
#endif
}

static void test_id_matching(void **state)
{
	static const uint64_t ids1[] = { 1, 2 }, ids2[] = { 3 };
	struct fattr a[2];
	struct buf d = { 0 }, file;
	struct hwt_pd_reader *r;
	struct hwt_pd_record rec;
	size_t at;
	int fd;

	(void)state;
	memset(a, 0, sizeof(a));
	for (int i = 0; i < 2; i++) {
		a[i].attr.type = PERF_TYPE_HARDWARE;
		a[i].attr.config = (uint64_t)i;
		a[i].attr.sample_type = ST_ID | (i ? PERF_SAMPLE_PERIOD : 0);
		a[i].attr.sample_id_all = 1;
	}
	a[0].ids = ids1;
	a[0].nids = 2;
	a[1].ids = ids2;
	a[1].nids = 1;
	put_comm(&d, ST_ID, 3, "second");
	put_comm(&d, ST_ID, 2, "first");
	put_comm(&d, ST_ID, 0, "synthesized");
	put_comm(&d, ST_ID, 99, "nobody");
	/*
	 * An id index's idx is the mmap index (per cpu/thread), not the
	 * attr: perf writes idx 0 for the first cpu of every event.
	 */
	at = rec_begin(&d, HWT_PD_ID_INDEX, 0);
	put_u64(&d, 2);
	put_u64(&d, 3); put_u64(&d, 0); put_u64(&d, 0); put_u64(&d, 6);
	put_u64(&d, 77); put_u64(&d, 1); put_u64(&d, 1); put_u64(&d, 6);
	rec_end(&d, at);
	put_comm(&d, ST_ID, 3, "still second");
	put_comm(&d, ST_ID, 77, "not an attr's");
	/* a sample of the second attr: identifier, pid/tid, time, period */
	at = rec_begin(&d, PERF_RECORD_SAMPLE, 0);
	put_u64(&d, 3); put_u32(&d, 5); put_u32(&d, 6); put_u64(&d, 43);
	put_u64(&d, 12345);
	rec_end(&d, at);
	build_file(&file, a, 2, sizeof(struct perf_event_attr), &d, NULL, 0);
	save_seed("hand-ids.data", &file);
	fd = memfile(file.p, file.n);
	r = open_fd_ok(fd);
	assert_int_equal(hwt_pd_nattrs(r), 2);

	rec = next_ok(r, PERF_RECORD_COMM);
	assert_ptr_equal(rec.attr, hwt_pd_get_attr(r, 1));
	assert_int_equal(rec.sid.id, 3);
	assert_string_equal(rec.u.comm.comm, "second");
	rec = next_ok(r, PERF_RECORD_COMM);
	assert_ptr_equal(rec.attr, hwt_pd_get_attr(r, 0));
	assert_int_equal(rec.sid.time, 42);
	rec = next_ok(r, PERF_RECORD_COMM);
	assert_ptr_equal(rec.attr, hwt_pd_get_attr(r, 0));
	assert_string_equal(rec.u.comm.comm, "synthesized");
	/* unknown id: no attr, so no trailer layout, so no sample id */
	rec = next_ok(r, PERF_RECORD_COMM);
	assert_null(rec.attr);
	assert_int_equal(rec.sid.present, 0);
	assert_int_equal(rec.u.comm.pid, 5);
	next_ok(r, HWT_PD_ID_INDEX);
	rec = next_ok(r, PERF_RECORD_COMM);
	assert_ptr_equal(rec.attr, hwt_pd_get_attr(r, 1));
	assert_string_equal(rec.u.comm.comm, "still second");
	rec = next_ok(r, PERF_RECORD_COMM);
	assert_null(rec.attr);
	rec = next_ok(r, PERF_RECORD_SAMPLE);
	assert_ptr_equal(rec.attr, hwt_pd_get_attr(r, 1));
	assert_int_equal(rec.u.sample.period, 12345);
	assert_int_equal(rec.sid.time, 43);
	assert_int_equal(rec.sid.present, HWT_PD_SID_TID | HWT_PD_SID_TIME |
			 HWT_PD_SID_IDENTIFIER);
	assert_int_equal(hwt_pd_next(r, &rec), 0);
	hwt_pd_close(r);
	close(fd);
	free(file.p);
	free(d.p);
}

/* Attrs of an older (64-byte) and a newer (larger) perf_event_attr. */
static void test_attr_sizes(void **state)
{
	static const size_t sizes[] = { PERF_ATTR_SIZE_VER0,
					PERF_ATTR_SIZE_VER5,
					sizeof(struct perf_event_attr) + 24 };

	(void)state;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		static const uint64_t ids[] = { 7, 8, 9 };
		struct fattr a[2];
		struct buf d = { 0 }, file;
		struct hwt_pd_reader *r;
		struct hwt_pd_record rec;
		const struct hwt_pd_attr *pa;
		int fd;

		memset(a, 0, sizeof(a));
		for (int j = 0; j < 2; j++) {
			a[j].attr.type = PERF_TYPE_SOFTWARE;
			a[j].attr.sample_type = ST_ID;
			a[j].attr.sample_id_all = 1;
			/* past VER0 and VER5: lost in the smaller files */
			a[j].attr.branch_sample_type = 0x99;
			a[j].attr.aux_sample_size = 0x77;
			a[j].ids = ids + 2 * j;
			a[j].nids = 2 - (size_t)j;
		}
		put_comm(&d, ST_ID, 9, "x");
		build_file(&file, a, 2, sizes[i], &d, NULL, 0);
		fd = memfile(file.p, file.n);
		r = open_fd_ok(fd);
		assert_int_equal(hwt_pd_nattrs(r), 2);
		pa = hwt_pd_get_attr(r, 1);
		assert_int_equal(pa->file_attr_size, sizes[i]);
		assert_int_equal(pa->attr.size, sizeof(struct perf_event_attr));
		assert_int_equal(pa->attr.sample_type, ST_ID);
		assert_int_equal(pa->attr.sample_id_all, 1);
		assert_int_equal(pa->attr.branch_sample_type,
				 sizes[i] > PERF_ATTR_SIZE_VER2 ? 0x99 : 0);
		assert_int_equal(pa->attr.aux_sample_size,
				 sizes[i] > PERF_ATTR_SIZE_VER6 ? 0x77 : 0);
		assert_int_equal(pa->nids, 1);
		assert_int_equal(pa->ids[0], 9);
		assert_int_equal(hwt_pd_get_attr(r, 0)->nids, 2);
		rec = next_ok(r, PERF_RECORD_COMM);
		assert_ptr_equal(rec.attr, hwt_pd_get_attr(r, 1));
		assert_int_equal(rec.sid.id, 9);
		hwt_pd_close(r);
		close(fd);
		free(file.p);
		free(d.p);
	}
}

/* ---- broken files -------------------------------------------------- */

static void test_bad_headers(void **state)
{
	struct buf file, b = { 0 };
	struct layout l;
	char msg[64];

	(void)state;
	open_fails(&b, -HWT_ERR_BAD_FORMAT, "offset 0x0: file too short");
	put(&b, "PERFILE", 7);
	open_fails(&b, -HWT_ERR_BAD_FORMAT, "offset 0x0: file too short");
	put(&b, "3", 1);
	put_u64(&b, 104);
	open_fails(&b, -HWT_ERR_BAD_FORMAT, "bad magic");
	memcpy(b.p, "2ELIFREP", 8);
	open_fails(&b, -HWT_ERR_NOT_SUPPORTED, "big-endian");
	memcpy(b.p, "PERFFILE", 8);
	open_fails(&b, -HWT_ERR_NOT_SUPPORTED, "PERFFILE");
	memcpy(b.p, "PERFILE2", 8);
	b.n = 12;
	open_fails(&b, -HWT_ERR_BAD_FORMAT, "offset 0x8: file too short");
	free(b.p);

	build_all(&file, &l);
	patch_u64(&file, 8, 50);
	open_fails(&file, -HWT_ERR_BAD_FORMAT, "offset 0x8: header size 50");
	patch_u64(&file, 8, 104);
	/* attr_size 0, tiny, absurd */
	patch_u64(&file, 16, 0);
	open_fails(&file, -HWT_ERR_BAD_FORMAT, "offset 0x10: attr size 0");
	patch_u64(&file, 16, 40);
	open_fails(&file, -HWT_ERR_BAD_FORMAT, "offset 0x10: attr size 40");
	patch_u64(&file, 16, 1ull << 40);
	open_fails(&file, -HWT_ERR_BAD_FORMAT, "offset 0x10: attr size");
	patch_u64(&file, 16, sizeof(struct perf_event_attr) + 16);
	/* attrs section not a multiple, past the end */
	patch_u64(&file, 32, 100);
	open_fails(&file, -HWT_ERR_BAD_FORMAT, "offset 0x18: attrs section size");
	patch_u64(&file, 32, 144ull << 50);
	open_fails(&file, -HWT_ERR_BAD_FORMAT, "offset 0x18: attrs section");
	patch_u64(&file, 32, sizeof(struct perf_event_attr) + 16);
	patch_u64(&file, 24, file.n);
	snprintf(msg, sizeof(msg), "offset 0x18: attrs section [%#zx, +144)",
		 file.n);
	open_fails(&file, -HWT_ERR_BAD_FORMAT, msg);
	patch_u64(&file, 24, l.attrs_off);
	/* ids past the end, ids size odd */
	patch_u64(&file, l.attrs_off + sizeof(struct perf_event_attr), file.n - 8);
	snprintf(msg, sizeof(msg), "offset %#zx: attr 0: ids [%#zx, +16)",
		 l.attrs_off + sizeof(struct perf_event_attr), file.n - 8);
	open_fails(&file, -HWT_ERR_BAD_FORMAT, msg);
	patch_u64(&file, l.attrs_off + sizeof(struct perf_event_attr), l.ids_off);
	patch_u64(&file, l.attrs_off + sizeof(struct perf_event_attr) + 8, 12);
	open_fails(&file, -HWT_ERR_BAD_FORMAT, "ids size 12");
	patch_u64(&file, l.attrs_off + sizeof(struct perf_event_attr) + 8, 16);
	/* data section past the end */
	patch_u64(&file, 48, file.n);
	open_fails(&file, -HWT_ERR_BAD_FORMAT, "offset 0x28: data section");
	patch_u64(&file, 48, l.feat_off - l.data_off);
	patch_u64(&file, 40, 1ull << 63);
	open_fails(&file, -HWT_ERR_BAD_FORMAT, "offset 0x28: data section");
	patch_u64(&file, 40, l.data_off);
	/* a feature section past the end (the first: BUILD_ID) */
	patch_u64(&file, l.feat_off + 8, file.n);
	snprintf(msg, sizeof(msg), "offset %#zx: feature 2 section", l.feat_off);
	open_fails(&file, -HWT_ERR_BAD_FORMAT, msg);
	free(file.p);
}

/* Sections that fit in the file but not in what hwt reads into memory. */
static void test_huge_sections(void **state)
{
	const uint64_t big = 144ull << 21;	/* 288 MiB of attrs */
	struct hwt_pd_reader *r = NULL;
	struct buf file;
	struct layout l;
	int fd;

	(void)state;
	build_all(&file, &l);
	/* a sparse file: the size is there, the memory is not used */
	fd = memfile(file.p, file.n);
	assert_int_equal(ftruncate(fd, (off_t)(big + 4096)), 0);
	patch_u64(&file, 32, big);
	assert_int_equal(pwrite(fd, file.p, 104, 0), 104);
	assert_int_equal(hwt_pd_open_fd(&r, fd, errbuf, sizeof(errbuf)),
			 -HWT_ERR_NOT_SUPPORTED);
	assert_non_null(strstr(errbuf, "offset 0x20: attrs section of 301989888 bytes"));
	patch_u64(&file, 32, 144);
	assert_int_equal(pwrite(fd, file.p, 104, 0), 104);
	/* the BUILD_ID feature section, 288 MiB long */
	patch_u64(&file, l.feat_off + 8, big);
	assert_int_equal(pwrite(fd, file.p, file.n, 0), (ssize_t)file.n);
	assert_int_equal(hwt_pd_open_fd(&r, fd, errbuf, sizeof(errbuf)),
			 -HWT_ERR_NOT_SUPPORTED);
	assert_non_null(strstr(errbuf, "feature BUILD_ID section of 301989888 bytes"));
	close(fd);
	free(file.p);
}

/* Damage @d past a good COMM: next() gives the COMM, then an error. */
static void bad_record(struct buf *d, size_t bad_at, const char *what)
{
	struct fattr a = attr_all();
	struct buf file;
	struct layout l;
	struct hwt_pd_reader *r;
	struct hwt_pd_record rec;
	char off[64];
	int fd, ret;

	l = build_file(&file, &a, 1, sizeof(struct perf_event_attr), d, NULL, 0);
	fd = memfile(file.p, file.n);
	r = open_fd_ok(fd);
	next_ok(r, PERF_RECORD_COMM);
	ret = hwt_pd_next(r, &rec);
	snprintf(off, sizeof(off), "offset %#zx: ", l.data_off + bad_at);
	if (ret >= 0 || !strstr(hwt_pd_errmsg(r), what) ||
	    !strstr(hwt_pd_errmsg(r), off))
		fail_msg("%s: got %d '%s'", what, ret, hwt_pd_errmsg(r));
	/* the reader stays stopped */
	assert_int_equal(hwt_pd_next(r, &rec), 0);
	hwt_pd_close(r);
	close(fd);
	free(file.p);
	free(d->p);
	memset(d, 0, sizeof(*d));
}

static size_t good_comm(struct buf *d)
{
	size_t at = rec_begin(d, PERF_RECORD_COMM, 0);

	put_u32(d, 10); put_u32(d, 11);
	put_cstr(d, "ok");
	sid_all(d, 1);
	rec_end(d, at);
	return d->n;
}

static void test_bad_records(void **state)
{
	struct buf d = { 0 };
	size_t at, bad;
	uint16_t sz;

	(void)state;
	/* size 0 (would loop forever), then 4 */
	bad = good_comm(&d);
	rec_begin(&d, PERF_RECORD_COMM, 0);
	put_u64(&d, 0);
	bad_record(&d, bad, "size 0 is smaller than its header");
	bad = good_comm(&d);
	at = rec_begin(&d, PERF_RECORD_MMAP, 0);
	sz = 4;
	patch(&d, at + 6, &sz, 2);
	bad_record(&d, bad, "size 4");

	/* past the end of the data section, a partial header */
	bad = good_comm(&d);
	at = rec_begin(&d, PERF_RECORD_COMM, 0);
	put_u64(&d, 0);
	sz = 64;
	patch(&d, at + 6, &sz, 2);
	bad_record(&d, bad, "runs past the end of the data");
	bad = good_comm(&d);
	put_u32(&d, 3);
	bad_record(&d, bad, "truncated record header (4 of 8 bytes)");

	/* a string that runs into the trailer */
	bad = good_comm(&d);
	at = rec_begin(&d, PERF_RECORD_COMM, 0);
	put_u32(&d, 1); put_u32(&d, 1);
	put(&d, "abcdefgh", 8);
	sid_all(&d, 2);
	d.p[d.n - 40] = 1;	/* not a NUL: pid of the trailer */
	rec_end(&d, at);
	bad_record(&d, bad + 16, "not NUL-terminated");
	/* too short for the trailer */
	bad = good_comm(&d);
	at = rec_begin(&d, PERF_RECORD_EXIT, 0);
	put(&d, NULL, 32);
	rec_end(&d, at);
	bad_record(&d, bad, "too short for its 40-byte sample id");
	/* MMAP2 too short for its fields */
	bad = good_comm(&d);
	at = rec_begin(&d, PERF_RECORD_MMAP2, 0);
	put(&d, NULL, 40);
	sid_all(&d, 2);
	rec_end(&d, at);
	bad_record(&d, bad, "PERF_RECORD_MMAP2 of 88 bytes");
	/* a build id longer than 20 bytes */
	bad = good_comm(&d);
	at = rec_begin(&d, PERF_RECORD_MMAP2, PERF_RECORD_MISC_MMAP_BUILD_ID);
	put(&d, NULL, 32);
	put_u8(&d, 21);
	put(&d, NULL, 31);
	put_cstr(&d, "f");
	sid_all(&d, 2);
	rec_end(&d, at);
	bad_record(&d, bad + 8 + 32, "build id size 21");
	/* AUXTRACE data runs past the end, absurdly */
	bad = good_comm(&d);
	at = rec_begin(&d, HWT_PD_AUXTRACE, 0);
	put_u64(&d, 1ull << 62);
	put(&d, NULL, 32);
	rec_end(&d, at);
	put(&d, NULL, 64);
	bad_record(&d, bad, "PERF_RECORD_AUXTRACE: 4611686018427387904 bytes of data");
	/* AUXTRACE_ERROR message without a NUL in its 64 bytes */
	bad = good_comm(&d);
	at = rec_begin(&d, HWT_PD_AUXTRACE_ERROR, 0);
	put(&d, NULL, 20);
	put_u32(&d, 1);
	put(&d, NULL, 16);
	for (int i = 0; i < 72; i++)
		put_u8(&d, 'x');
	rec_end(&d, at);
	bad_record(&d, bad + 8 + 40, "not NUL-terminated");
	/* an id index claiming more entries than it holds */
	bad = good_comm(&d);
	at = rec_begin(&d, HWT_PD_ID_INDEX, 0);
	put_u64(&d, UINT64_MAX / 2);
	put(&d, NULL, 32);
	rec_end(&d, at);
	bad_record(&d, bad + 8, "entries do not fit");
	/* TEXT_POKE bytes past the record */
	bad = good_comm(&d);
	at = rec_begin(&d, PERF_RECORD_TEXT_POKE, 0);
	put_u64(&d, 0); put_u16(&d, 100); put_u16(&d, 100);
	put_u32(&d, 0);
	sid_all(&d, 2);
	rec_end(&d, at);
	bad_record(&d, bad, "PERF_RECORD_TEXT_POKE of 64 bytes");
	/* a HEADER_ATTR whose attr is larger than the record */
	bad = good_comm(&d);
	at = rec_begin(&d, HWT_PD_HEADER_ATTR, 0);
	put_u32(&d, 1); put_u32(&d, 4000);
	put(&d, NULL, 120);
	rec_end(&d, at);
	bad_record(&d, bad + 12, "attr size 4000");
}

/* Every prefix of a valid file is refused with an offset, never read. */
static void test_truncated_file(void **state)
{
	struct buf file;
	struct layout l;
	size_t nrec = 0;

	(void)state;
	build_all(&file, &l);
	for (size_t len = 0; len <= file.n; len++) {
		struct hwt_pd_reader *r = NULL;
		struct hwt_pd_record rec;
		int fd = memfile(file.p, len), ret;

		ret = hwt_pd_open_fd(&r, fd, errbuf, sizeof(errbuf));
		if (len < file.n) {
			if (ret >= 0 || !strstr(errbuf, "offset 0x"))
				fail_msg("length %zu: %d '%s'", len, ret, errbuf);
			assert_null(r);
		} else {
			assert_int_equal(ret, 0);
			while ((ret = hwt_pd_next(r, &rec)) > 0)
				nrec++;
			assert_int_equal(ret, 0);
			hwt_pd_close(r);
		}
		close(fd);
	}
	assert_int_equal(nrec, nrecs_all);
	free(file.p);
}

/* ---- pipe mode ----------------------------------------------------- */

#define ST_PIPE (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID)

static size_t pipe_bounds[16], npipe_bounds;

static void build_pipe(struct buf *b)
{
	struct perf_event_attr attr;
	size_t at;

	memset(b, 0, sizeof(*b));
	npipe_bounds = 0;
	put(b, "PERFILE2", 8);
	put_u64(b, 16);
	pipe_bounds[npipe_bounds++] = b->n;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.sample_type = ST_PIPE;
	attr.sample_id_all = 1;
	at = rec_begin(b, HWT_PD_HEADER_ATTR, 0);
	put(b, &attr, sizeof(attr));
	put_u64(b, 7);
	put_u64(b, 8);
	rec_end(b, at);
	pipe_bounds[npipe_bounds++] = b->n;

	at = rec_begin(b, HWT_PD_EVENT_UPDATE, 0);
	put_u64(b, 2);	/* NAME */
	put_u64(b, 7);
	put_cstr(b, "pipe-ev");
	rec_end(b, at);
	pipe_bounds[npipe_bounds++] = b->n;

	at = rec_begin(b, HWT_PD_HEADER_FEATURE, 0);
	put_u64(b, HWT_PD_FEAT_HOSTNAME);
	put_pstr(b, "pipehost");
	rec_end(b, at);
	pipe_bounds[npipe_bounds++] = b->n;

	at = rec_begin(b, HWT_PD_HEADER_FEATURE, 0);
	put_u64(b, HWT_PD_FEAT_NRCPUS);
	put_u32(b, 4);
	put_u32(b, 2);
	rec_end(b, at);
	pipe_bounds[npipe_bounds++] = b->n;

	/* tracing data: 16 bytes follow the record */
	at = rec_begin(b, HWT_PD_HEADER_TRACING_DATA, 0);
	put_u32(b, 16);
	rec_end(b, at);
	put(b, "tracing-data-16b", 16);
	pipe_bounds[npipe_bounds++] = b->n;

	at = rec_begin(b, HWT_PD_HEADER_BUILD_ID, PERF_RECORD_MISC_USER);
	put_u32(b, 33);
	put(b, NULL, 24);
	put_cstr(b, "/bin/p");
	rec_end(b, at);
	pipe_bounds[npipe_bounds++] = b->n;

	at = rec_begin(b, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
	put_u32(b, 33); put_u32(b, 33);
	put_cstr(b, "p");
	put_sid(b, ST_PIPE, 33, 33, 500, 8, 0);
	rec_end(b, at);
	pipe_bounds[npipe_bounds++] = b->n;

	at = rec_begin(b, HWT_PD_AUXTRACE, 0);
	put_u64(b, 24); put_u64(b, 0); put_u64(b, 1);
	put_u32(b, 0); put_u32(b, 33); put_u32(b, (uint32_t)-1); put_u32(b, 0);
	rec_end(b, at);
	for (uint8_t i = 0; i < 24; i++)
		put_u8(b, i);
	pipe_bounds[npipe_bounds++] = b->n;

	at = rec_begin(b, PERF_RECORD_EXIT, 0);
	put_u32(b, 33); put_u32(b, 1); put_u32(b, 33); put_u32(b, 1);
	put_u64(b, 600);
	put_sid(b, ST_PIPE, 33, 33, 600, 7, 0);
	rec_end(b, at);
	pipe_bounds[npipe_bounds++] = b->n;
}

static void read_pipe_records(struct hwt_pd_reader *r, int again)
{
	const struct hwt_pd_info *info = hwt_pd_get_info(r);
	struct hwt_pd_record rec;

	assert_int_equal(info->pipe_mode, 1);
	rec = next_ok(r, HWT_PD_HEADER_ATTR);
	assert_int_equal(rec.file_offset, 16);
	assert_int_equal(hwt_pd_nattrs(r), 1);
	assert_int_equal(hwt_pd_get_attr(r, 0)->nids, 2);
	assert_int_equal(hwt_pd_get_attr(r, 0)->ids[1], 8);
	/* a second pass knows what the first learned */
	if (!again)
		assert_null(hwt_pd_get_attr(r, 0)->name);
	next_ok(r, HWT_PD_EVENT_UPDATE);
	assert_string_equal(hwt_pd_get_attr(r, 0)->name, "pipe-ev");
	next_ok(r, HWT_PD_HEADER_FEATURE);
	assert_string_equal(info->hostname, "pipehost");
	next_ok(r, HWT_PD_HEADER_FEATURE);
	assert_int_equal(info->nr_cpus_avail, 4);
	assert_int_equal(info->nr_cpus_online, 2);
	assert_true(info->features[0] & (1ull << HWT_PD_FEAT_HOSTNAME));
	next_ok(r, HWT_PD_HEADER_TRACING_DATA);
	next_ok(r, HWT_PD_HEADER_BUILD_ID);
	assert_int_equal(info->nbuild_ids, 1);
	assert_int_equal(info->build_ids[0].pid, 33);
	assert_string_equal(info->build_ids[0].filename, "/bin/p");
	rec = next_ok(r, PERF_RECORD_COMM);
	assert_ptr_equal(rec.attr, hwt_pd_get_attr(r, 0));
	assert_int_equal(rec.sid.time, 500);
	assert_int_equal(rec.sid.id, 8);
	assert_int_equal(rec.u.comm.exec, 1);
	rec = next_ok(r, HWT_PD_AUXTRACE);
	assert_int_equal(rec.u.auxtrace.size, 24);
	assert_int_equal(rec.u.auxtrace.cpu, UINT32_MAX);
	for (int i = 0; i < 24; i++)
		assert_int_equal(rec.u.auxtrace.data[i], i);
	rec = next_ok(r, PERF_RECORD_EXIT);
	assert_int_equal(rec.u.task.time, 600);
	assert_int_equal(rec.sid.id, 7);
	assert_int_equal(hwt_pd_next(r, &rec), 0);
	assert_int_equal(info->data_offset, 0);
	assert_int_equal(info->data_size, 0);
}

static void test_pipe_mode(void **state)
{
	struct hwt_pd_reader *r;
	struct buf b;
	int fd, saved;

	(void)state;
	build_pipe(&b);
	save_seed("hand-pipe.data", &b);
	/* through a pipe */
	fd = pipefile(b.p, b.n);
	r = open_fd_ok(fd);
	assert_int_equal(hwt_pd_nattrs(r), 0);
	read_pipe_records(r, 0);
	assert_int_equal(hwt_pd_rewind(r), -HWT_ERR_INVALID);
	hwt_pd_close(r);
	close(fd);

	/* the same as standard input, by the name "-" */
	fd = pipefile(b.p, b.n);
	saved = dup(STDIN_FILENO);
	assert_true(saved >= 0);
	assert_int_equal(dup2(fd, STDIN_FILENO), STDIN_FILENO);
	close(fd);
	assert_int_equal(hwt_pd_open(&r, "-", errbuf, sizeof(errbuf)), 0);
	read_pipe_records(r, 0);
	hwt_pd_close(r);
	assert_int_equal(dup2(saved, STDIN_FILENO), STDIN_FILENO);
	close(saved);

	/* a pipe-mode file: rewinds, without adding the attr twice */
	fd = memfile(b.p, b.n);
	r = open_fd_ok(fd);
	read_pipe_records(r, 0);
	assert_int_equal(hwt_pd_rewind(r), 0);
	read_pipe_records(r, 1);
	assert_int_equal(hwt_pd_nattrs(r), 1);
	hwt_pd_close(r);
	close(fd);
	free(b.p);
}

/* A pipe cut anywhere ends cleanly at a record boundary, else errs. */
static void test_pipe_truncated(void **state)
{
	struct buf b;

	(void)state;
	build_pipe(&b);
	for (size_t len = 0; len <= b.n; len++) {
		struct hwt_pd_reader *r = NULL;
		struct hwt_pd_record rec;
		int fd = pipefile(b.p, len), ret;
		size_t n = 0, whole = 0;

		ret = hwt_pd_open_fd(&r, fd, errbuf, sizeof(errbuf));
		if (len < 16) {
			assert_true(ret < 0);
			assert_non_null(strstr(errbuf, "offset 0x"));
			close(fd);
			continue;
		}
		assert_int_equal(ret, 0);
		while ((ret = hwt_pd_next(r, &rec)) > 0)
			n++;
		for (size_t i = 1; i < npipe_bounds; i++)
			whole += pipe_bounds[i] <= len;
		assert_int_equal(n, whole);
		if (ret == 0) {
			int boundary = 0;

			for (size_t i = 0; i < npipe_bounds; i++)
				boundary |= pipe_bounds[i] == len;
			assert_true(boundary);
		} else {
			assert_non_null(strstr(hwt_pd_errmsg(r), "offset 0x"));
		}
		hwt_pd_close(r);
		close(fd);
	}
	free(b.p);
}

/* A file-mode perf.data cannot be streamed: its attrs point backwards. */
static void test_file_on_pipe(void **state)
{
	struct hwt_pd_reader *r = NULL;
	struct buf file;
	struct layout l;
	int fd;

	(void)state;
	build_all(&file, &l);
	fd = pipefile(file.p, file.n);
	assert_int_equal(hwt_pd_open_fd(&r, fd, errbuf, sizeof(errbuf)),
			 -HWT_ERR_NOT_SUPPORTED);
	assert_non_null(strstr(errbuf, "pipe"));
	close(fd);
	free(file.p);
	assert_int_equal(hwt_pd_open(&r, "/nonexistent/perf.data", errbuf,
				     sizeof(errbuf)), -HWT_ERR_IO);
	assert_non_null(strstr(errbuf, "/nonexistent/perf.data"));
}

/* ---- time conversion and names ------------------------------------- */

static void test_time_conv(void **state)
{
	/* mult 1536 / 2^10 = 1.5 ns per tick, from 1000 ns */
	struct hwt_pd_time_conv tc = { .time_shift = 10, .time_mult = 1536,
				       .time_zero = 1000 };

	(void)state;
	assert_int_equal(hwt_pd_tsc_to_perf_time(&tc, 0), 1000);
	/* 4096 ticks: quot 4 * 1536 = 6144 */
	assert_int_equal(hwt_pd_tsc_to_perf_time(&tc, 4096), 7144);
	/* 4097: + rem 1 * 1536 >> 10 = 1 */
	assert_int_equal(hwt_pd_tsc_to_perf_time(&tc, 4097), 7145);
	/* 2^40 ticks = 1.5 * 2^40 ns: no overflow of tsc * mult */
	assert_int_equal(hwt_pd_tsc_to_perf_time(&tc, 1ull << 40),
			 1000 + 3 * (1ull << 39));
	assert_int_equal(hwt_pd_perf_time_to_tsc(&tc, 7144), 4096);
	assert_int_equal(hwt_pd_perf_time_to_tsc(&tc, 1000 + 3 * (1ull << 39)),
			 1ull << 40);
	/* 1000 + 3 ns = 2 ticks */
	assert_int_equal(hwt_pd_perf_time_to_tsc(&tc, 1003), 2);
	tc.time_mult = 0;
	assert_int_equal(hwt_pd_perf_time_to_tsc(&tc, 1003), 0);

	/* short counters: only the bits under the mask count, from cycles */
	tc = (struct hwt_pd_time_conv){ .time_shift = 0, .time_mult = 1,
					.time_zero = 0, .time_cycles = 0x1000,
					.time_mask = 0xfff, .extended = 1,
					.cap_user_time_short = 1 };
	assert_int_equal(hwt_pd_tsc_to_perf_time(&tc, 0x5123), 0x1123);
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(hwt_pd_record_name(PERF_RECORD_MMAP2),
			    "PERF_RECORD_MMAP2");
	assert_string_equal(hwt_pd_record_name(PERF_RECORD_SWITCH_CPU_WIDE),
			    "PERF_RECORD_SWITCH_CPU_WIDE");
	assert_string_equal(hwt_pd_record_name(HWT_PD_HEADER_ATTR),
			    "PERF_RECORD_ATTR");
	assert_string_equal(hwt_pd_record_name(HWT_PD_FINISHED_INIT),
			    "PERF_RECORD_FINISHED_INIT");
	assert_null(hwt_pd_record_name(0));
	assert_null(hwt_pd_record_name(22));
	assert_null(hwt_pd_record_name(63));
	assert_null(hwt_pd_record_name(83));
	assert_null(hwt_pd_record_name(UINT32_MAX));
	assert_string_equal(hwt_pd_feature_name(HWT_PD_FEAT_CLOCK_DATA),
			    "CLOCK_DATA");
	assert_string_equal(hwt_pd_feature_name(0), "unknown feature");
	assert_string_equal(hwt_pd_feature_name(300), "unknown feature");
}

/* ---- real files from perf ------------------------------------------ */

#define MAXLINES 1024

/*
 * perf script sorts records by time across its per-cpu buffers, the file
 * holds them in buffer order: compare the two as sorted lists of lines.
 */
struct lines {
	char l[MAXLINES][320];
	size_t n;
};

static int cmp_line(const void *a, const void *b)
{
	return strcmp(a, b);
}

static void add_line(struct lines *ls, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void add_line(struct lines *ls, const char *fmt, ...)
{
	va_list ap;

	assert_true(ls->n < MAXLINES);
	va_start(ap, fmt);
	vsnprintf(ls->l[ls->n++], sizeof(ls->l[0]), fmt, ap);
	va_end(ap);
}

static void same_lines(struct lines *a, struct lines *b)
{
	qsort(a->l, a->n, sizeof(a->l[0]), cmp_line);
	qsort(b->l, b->n, sizeof(b->l[0]), cmp_line);
	for (size_t i = 0; i < a->n && i < b->n; i++) {
		if (getenv("HWT_PD_TEST_VERBOSE"))
			printf("  %s\n", a->l[i]);
		assert_string_equal(a->l[i], b->l[i]);
	}
	assert_int_equal(a->n, b->n);
}

static void fmt_time(char *t, size_t n, uint64_t ns)
{
	snprintf(t, n, "%" PRIu64 ".%06" PRIu64, ns / 1000000000,
		 ns % 1000000000 / 1000);
}

/*
 * `perf script --show-mmap-events --show-task-events`: one line per
 * record, "comm pid [cpu] time: PERF_RECORD_X ..." -> "KIND TIME" and,
 * for MMAP2, " pid/tid start len pgoff path".
 */
static void perf_script(const char *file, struct lines *out)
{
	char cmd[512], line[1024];
	FILE *f;

	snprintf(cmd, sizeof(cmd),
		 "perf script --show-mmap-events --show-task-events -i %s 2>/dev/null",
		 file);
	f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char *k = strstr(line, "PERF_RECORD_"), *t, *sp;
		char kind[32] = "", time[32] = "";
		uint32_t pid = 0, tid = 0;
		uint64_t start = 0, len = 0, pgoff = 0;

		if (!k)
			continue;
		line[strcspn(line, "\n")] = '\0';
		sscanf(k, "%31[A-Z_0-9]", kind);
		/* the time is the word ending in ':' before the kind */
		k[-1] = '\0';
		t = strrchr(line, ' ');
		snprintf(time, sizeof(time), "%s", t ? t + 1 : "");
		time[strcspn(time, ":")] = '\0';
		if (strcmp(kind, "PERF_RECORD_MMAP2")) {
			add_line(out, "%s %s", kind, time);
			continue;
		}
		sscanf(k + strlen(kind), " %u/%u: [%" SCNx64 "(%" SCNx64 ") @ %" SCNx64,
		       &pid, &tid, &start, &len, &pgoff);
		sp = strrchr(k, ' ');
		add_line(out, "%s %s %u/%u %" PRIx64 " %" PRIx64 " %" PRIx64 " %s",
			 kind, time, pid, tid, start, len, pgoff, sp + 1);
	}
	pclose(f);
}

static int have_perf(void)
{
	return system("perf --version >/dev/null 2>&1") == 0;
}

static void compare_with_perf(const char *file, struct hwt_pd_reader *r)
{
	static struct lines theirs, ours;
	size_t counts[3] = { 0 };
	struct hwt_pd_record rec;
	int ret;

	theirs.n = ours.n = 0;
	perf_script(file, &theirs);
	while ((ret = hwt_pd_next(r, &rec)) > 0) {
		const char *name = hwt_pd_record_name(rec.type);
		const struct hwt_pd_mmap *m = &rec.u.mmap;
		char t[32];

		if (rec.type != PERF_RECORD_MMAP && rec.type != PERF_RECORD_MMAP2 &&
		    rec.type != PERF_RECORD_COMM && rec.type != PERF_RECORD_EXIT &&
		    rec.type != PERF_RECORD_FORK)
			continue;
		counts[0] += rec.type == PERF_RECORD_MMAP2;
		counts[1] += rec.type == PERF_RECORD_COMM;
		counts[2] += rec.type == PERF_RECORD_EXIT;
		fmt_time(t, sizeof(t), rec.sid.time);
		if (rec.type != PERF_RECORD_MMAP2)
			add_line(&ours, "%s %s", name, t);
		else
			add_line(&ours, "%s %s %u/%u %" PRIx64 " %" PRIx64 " %" PRIx64 " %s",
				 name, t, m->pid, m->tid, m->start, m->len,
				 m->pgoff, m->filename);
	}
	assert_int_equal(ret, 0);
	same_lines(&ours, &theirs);
	/* /bin/true ran: its exec, a mapping of it, its exit */
	assert_true(counts[0] >= 1 && counts[1] >= 1 && counts[2] >= 1);
}

static void test_perf_file(void **state)
{
	char file[] = "/tmp/hwt-pd-test-XXXXXX", cmd[256];
	struct hwt_pd_reader *r;
	const struct hwt_pd_info *info;
	int fd;

	(void)state;
	if (!have_perf())
		skip();
	fd = mkstemp(file);
	assert_true(fd >= 0);
	close(fd);
	snprintf(cmd, sizeof(cmd),
		 "perf record -q -e dummy -o %s -- /bin/true >/dev/null 2>&1", file);
	if (system(cmd) != 0) {
		unlink(file);
		skip();
	}
	assert_int_equal(hwt_pd_open(&r, file, errbuf, sizeof(errbuf)), 0);
	info = hwt_pd_get_info(r);
	assert_int_equal(info->pipe_mode, 0);
	assert_non_null(info->hostname);
	assert_non_null(info->arch);
	assert_true(info->ncmdline >= 6);
	assert_string_equal(info->cmdline[info->ncmdline - 1], "/bin/true");
	assert_int_equal(hwt_pd_nattrs(r), 1);
	assert_string_equal(hwt_pd_get_attr(r, 0)->name, "dummy");
	assert_int_equal(hwt_pd_get_attr(r, 0)->attr.config, PERF_COUNT_SW_DUMMY);
	compare_with_perf(file, r);
	hwt_pd_close(r);
	unlink(file);
}

static void test_perf_pipe(void **state)
{
	char file[] = "/tmp/hwt-pd-test-XXXXXX", cmd[256];
	struct hwt_pd_reader *r;
	uint8_t *data;
	ssize_t n;
	int fd, pfd;

	(void)state;
	if (!have_perf())
		skip();
	fd = mkstemp(file);
	assert_true(fd >= 0);
	snprintf(cmd, sizeof(cmd),
		 "perf record -q -e dummy -o - -- /bin/true > %s 2>/dev/null", file);
	if (system(cmd) != 0) {
		close(fd);
		unlink(file);
		skip();
	}
	data = malloc(65536);
	assert_non_null(data);
	n = read(fd, data, 65536);
	close(fd);
	/* small enough for a pipe's buffer: read it as a stream */
	assert_true(n > 16 && n < 65536);
	pfd = pipefile(data, (size_t)n);
	r = open_fd_ok(pfd);
	assert_int_equal(hwt_pd_get_info(r)->pipe_mode, 1);
	compare_with_perf(file, r);
	assert_int_equal(hwt_pd_nattrs(r), 1);
	/* named by an EVENT_UPDATE record */
	assert_string_equal(hwt_pd_get_attr(r, 0)->name, "dummy");
	assert_non_null(hwt_pd_get_info(r)->hostname);
	hwt_pd_close(r);
	close(pfd);
	free(data);
	unlink(file);
}

/*
 * Two events, so records are matched to attrs by id: every sample's event
 * name, tid, time and ip as `perf script -F event,tid,time,ip` shows them.
 */
static void test_perf_samples(void **state)
{
	static struct lines theirs, ours;
	char file[] = "/tmp/hwt-pd-test-XXXXXX", cmd[512], line[512], t[32];
	struct hwt_pd_reader *r;
	struct hwt_pd_record rec;
	FILE *f;
	int fd, ret;

	(void)state;
	if (!have_perf())
		skip();
	fd = mkstemp(file);
	assert_true(fd >= 0);
	close(fd);
	snprintf(cmd, sizeof(cmd),
		 "perf record -q -e cpu-clock,dummy -c 100000 -o %s -- /bin/ls -R /usr/include/linux >/dev/null 2>&1",
		 file);
	if (system(cmd) != 0) {
		unlink(file);
		skip();
	}
	assert_int_equal(hwt_pd_open(&r, file, errbuf, sizeof(errbuf)), 0);
	assert_int_equal(hwt_pd_nattrs(r), 2);
	snprintf(cmd, sizeof(cmd),
		 "perf script -F event,tid,time,ip -i %s 2>/dev/null", file);
	f = popen(cmd, "r");
	assert_non_null(f);
	theirs.n = ours.n = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned int tid;
		char time[32], event[64];
		uint64_t ip;

		if (sscanf(line, "%u %31[0-9.]: %63[^:]: %" SCNx64, &tid, time,
			   event, &ip) == 4)
			add_line(&theirs, "%u %s %s %" PRIx64, tid, time,
				 event, ip);
	}
	pclose(f);
	while ((ret = hwt_pd_next(r, &rec)) > 0) {
		if (rec.type != PERF_RECORD_SAMPLE)
			continue;
		assert_non_null(rec.attr);
		fmt_time(t, sizeof(t), rec.sid.time);
		add_line(&ours, "%u %s %s %" PRIx64, rec.sid.tid, t,
			 rec.attr->name, rec.u.sample.ip);
	}
	assert_int_equal(ret, 0);
	/* ~2 ms of CPU at one sample per 0.1 ms */
	assert_true(theirs.n > 0);
	same_lines(&ours, &theirs);
	hwt_pd_close(r);
	unlink(file);
}

/*
 * A raw sideband stream (hwt_pd_open_raw): kernel records with the
 * trailer of the caller's sample_type, no header; perf's own record
 * types are unknown there; a range selects part of the file.
 */
static void test_raw_stream(void **state)
{
	const uint64_t st = PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			    PERF_SAMPLE_IDENTIFIER;
	struct hwt_pd_reader *r = NULL;
	struct hwt_pd_record rec;
	struct buf d = { 0 };
	size_t at, second, cut;
	char path[] = "/tmp/hwt-raw-XXXXXX";
	int fd;

	(void)state;
	at = rec_begin(&d, PERF_RECORD_MMAP, PERF_RECORD_MISC_USER);
	put_u32(&d, 7); put_u32(&d, 7);
	put_u64(&d, 0x1000); put_u64(&d, 0x20); put_u64(&d, 0x100);
	put_cstr(&d, "a.bin");
	put_sid(&d, st, 7, 8, 5, 99, 0);
	rec_end(&d, at);
	second = d.n;
	/* AUXTRACE_INFO is perf's, not the kernel's: unknown here. */
	at = rec_begin(&d, HWT_PD_AUXTRACE_INFO, 0);
	put_u64(&d, 0);
	rec_end(&d, at);
	at = rec_begin(&d, PERF_RECORD_SWITCH_CPU_WIDE, PERF_RECORD_MISC_SWITCH_OUT);
	put_u32(&d, 9); put_u32(&d, 10);
	put_sid(&d, st, 7, 8, 6, 99, 0);
	rec_end(&d, at);
	cut = d.n;
	at = rec_begin(&d, PERF_RECORD_ITRACE_START, 0);
	put_u32(&d, 7); put_u32(&d, 8);
	put_sid(&d, st, 7, 8, 7, 99, 0);
	rec_end(&d, at);
	put(&d, d.p + at, 12);		/* the same again, cut short */

	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, d.p, d.n), (ssize_t)d.n);
	close(fd);
	save_seed("hand-raw.sb", &d);

	assert_int_equal(hwt_pd_open_raw(&r, path, st, NULL, 0, 0, 0, errbuf,
					 sizeof(errbuf)), 0);
	assert_int_equal(hwt_pd_nattrs(r), 1);
	assert_int_equal(hwt_pd_next(r, &rec), 1);
	assert_int_equal(rec.type, PERF_RECORD_MMAP);
	assert_int_equal(rec.file_offset, 0);
	assert_int_equal(rec.u.mmap.start, 0x1000);
	assert_int_equal(rec.u.mmap.pgoff, 0x100);
	assert_string_equal(rec.u.mmap.filename, "a.bin");
	assert_int_equal(rec.sid.pid, 7);
	assert_int_equal(rec.sid.tid, 8);
	assert_int_equal(rec.sid.time, 5);
	assert_int_equal(rec.sid.id, 99);
	assert_int_equal(hwt_pd_next(r, &rec), 1);
	assert_int_equal(rec.type, HWT_PD_AUXTRACE_INFO);
	assert_int_equal(hwt_pd_next(r, &rec), 1);
	assert_int_equal(rec.type, PERF_RECORD_SWITCH_CPU_WIDE);
	assert_true(rec.u.sw.out);
	assert_int_equal(rec.u.sw.next_prev_pid, 9);
	assert_int_equal(rec.sid.time, 6);
	assert_int_equal(hwt_pd_next(r, &rec), 1);
	assert_int_equal(rec.type, PERF_RECORD_ITRACE_START);
	assert_int_equal(rec.sid.time, 7);
	assert_int_equal(hwt_pd_unknown_records(r), 1);
	/* The record cut short: an error naming its offset, then the end. */
	assert_true(hwt_pd_next(r, &rec) < 0);
	{
		char want[64];

		snprintf(want, sizeof(want), "offset %#zx", d.n - 12);
		assert_non_null(strstr(hwt_pd_errmsg(r), want));
	}
	assert_int_equal(hwt_pd_next(r, &rec), 0);
	hwt_pd_close(r);

	/* [second, cut): the unknown record and the switch only. */
	assert_int_equal(hwt_pd_open_raw(&r, path, st, NULL, 0, second, cut,
					 errbuf, sizeof(errbuf)), 0);
	assert_int_equal(hwt_pd_next(r, &rec), 1);
	assert_int_equal(rec.file_offset, second);
	assert_int_equal(hwt_pd_next(r, &rec), 1);
	assert_int_equal(rec.type, PERF_RECORD_SWITCH_CPU_WIDE);
	assert_int_equal(hwt_pd_next(r, &rec), 0);
	hwt_pd_close(r);

	/* A trailer the records are too short for: an error at offset 0. */
	assert_int_equal(hwt_pd_open_raw(&r, path, st | PERF_SAMPLE_ID |
					 PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU,
					 NULL, 0, 0, 0, errbuf, sizeof(errbuf)),
			 0);
	assert_true(hwt_pd_next(r, &rec) < 0);
	assert_non_null(strstr(hwt_pd_errmsg(r), "offset 0x0"));
	hwt_pd_close(r);

	/* A range outside the file, a missing file. */
	assert_true(hwt_pd_open_raw(&r, path, st, NULL, 0, 0, d.n + 1, errbuf,
				    sizeof(errbuf)) < 0);
	assert_null(r);
	assert_non_null(strstr(errbuf, "not inside the file"));
	assert_int_equal(hwt_pd_open_raw(&r, "/nonexistent/x.sb", st, NULL, 0,
					 0, 0, errbuf, sizeof(errbuf)),
			 -HWT_ERR_IO);
	assert_null(r);
	unlink(path);
	free(d.p);
}

/*
 * Per-event layouts (libipt's --pevent:sample-config): the record's last
 * 8 bytes name its event; identifier 0 is perf's synthesized records;
 * an unknown identifier falls back to the stream's sample_type.
 */
static void test_raw_types(void **state)
{
	const uint64_t st_a = PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			      PERF_SAMPLE_IDENTIFIER;
	const uint64_t st_b = PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			      PERF_SAMPLE_IDENTIFIER;
	/* The second entry of 9 does not count (libipt takes the first). */
	const struct hwt_pd_raw_type types[] = {
		{ 0, st_a }, { 7, st_a }, { 9, st_b }, { 9, st_a },
	};
	const struct hwt_pd_raw_type bad[] = { { 3, PERF_SAMPLE_TIME } };
	struct hwt_pd_reader *r = NULL;
	struct hwt_pd_record rec;
	struct buf d = { 0 };
	size_t at;
	int fd;

	(void)state;
	/* ITRACE_START of event 7, of event 9, synthesized (0), and of an
	 * event not configured (TIME|IDENTIFIER, the stream's type). */
	at = rec_begin(&d, PERF_RECORD_ITRACE_START, 0);
	put_u32(&d, 1); put_u32(&d, 2);
	put_u32(&d, 1); put_u32(&d, 2); put_u64(&d, 100); put_u64(&d, 7);
	rec_end(&d, at);
	at = rec_begin(&d, PERF_RECORD_ITRACE_START, 0);
	put_u32(&d, 3); put_u32(&d, 4);
	put_u64(&d, 200); put_u32(&d, 5); put_u32(&d, 0); put_u64(&d, 9);
	rec_end(&d, at);
	at = rec_begin(&d, PERF_RECORD_ITRACE_START, 0);
	put_u32(&d, 6); put_u32(&d, 6);
	put_u32(&d, 6); put_u32(&d, 6); put_u64(&d, 300); put_u64(&d, 0);
	rec_end(&d, at);
	at = rec_begin(&d, PERF_RECORD_ITRACE_START, 0);
	put_u32(&d, 8); put_u32(&d, 8);
	put_u64(&d, 400); put_u64(&d, 12345);
	rec_end(&d, at);

	fd = memfile(d.p, d.n);
	assert_int_equal(hwt_pd_open_raw_fd(&r, fd, PERF_SAMPLE_TIME |
					    PERF_SAMPLE_IDENTIFIER, types, 4,
					    errbuf, sizeof(errbuf)), 0);
	assert_int_equal(hwt_pd_nattrs(r), 4);
	assert_int_equal(hwt_pd_next(r, &rec), 1);
	assert_ptr_equal(rec.attr, hwt_pd_get_attr(r, 2));
	assert_int_equal(rec.u.itrace_start.pid, 1);
	assert_int_equal(rec.sid.time, 100);
	assert_int_equal(rec.sid.pid, 1);
	assert_int_equal(hwt_pd_next(r, &rec), 1);
	assert_ptr_equal(rec.attr, hwt_pd_get_attr(r, 3));
	assert_int_equal(rec.u.itrace_start.pid, 3);
	assert_int_equal(rec.sid.time, 200);
	assert_int_equal(rec.sid.cpu, 5);
	assert_int_equal(hwt_pd_next(r, &rec), 1);
	assert_ptr_equal(rec.attr, hwt_pd_get_attr(r, 1));
	assert_int_equal(rec.sid.time, 300);
	assert_int_equal(hwt_pd_next(r, &rec), 1);
	assert_ptr_equal(rec.attr, hwt_pd_get_attr(r, 0));
	assert_int_equal(rec.sid.time, 400);
	assert_int_equal(hwt_pd_next(r, &rec), 0);
	hwt_pd_close(r);

	/* A type whose records cannot name their event. */
	assert_true(hwt_pd_open_raw_fd(&r, fd, 0, bad, 1, errbuf,
				       sizeof(errbuf)) < 0);
	assert_null(r);
	assert_non_null(strstr(errbuf, "no PERF_SAMPLE_IDENTIFIER"));
	close(fd);
	free(d.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_records),
		cmocka_unit_test(test_id_matching),
		cmocka_unit_test(test_compressed),
		cmocka_unit_test(test_attr_sizes),
		cmocka_unit_test(test_bad_headers),
		cmocka_unit_test(test_huge_sections),
		cmocka_unit_test(test_bad_records),
		cmocka_unit_test(test_truncated_file),
		cmocka_unit_test(test_pipe_mode),
		cmocka_unit_test(test_pipe_truncated),
		cmocka_unit_test(test_file_on_pipe),
		cmocka_unit_test(test_time_conv),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_perf_file),
		cmocka_unit_test(test_perf_pipe),
		cmocka_unit_test(test_perf_samples),
		cmocka_unit_test(test_raw_stream),
		cmocka_unit_test(test_raw_types),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

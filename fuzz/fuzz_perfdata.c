/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target for the perf.data reader. The input is the file: it is
 * read from a memfd (the mapped-window path: file mode and pipe-mode
 * files, rewind and a second pass) and, when small, from a pipe (the
 * read(2) path). Every record and all info are walked, and answers must
 * be well-formed:
 *
 *  - open fails with a message naming an offset, or gives a reader;
 *  - records move forward and lie inside the input (those from inside
 *    a PERF_RECORD_COMPRESSED name one that came before); strings and
 *    data handed out lie inside their record (ASan checks each byte read);
 *  - errors name an offset; after one, next() returns 0;
 *  - a second pass after rewind gives the same records (unless attrs or
 *    ids arrived as records: then the second pass knows them earlier).
 *
 * The same bytes are also read as a raw sideband stream (run_raw).
 */
#include <hwt/perfdata.h>

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Far more than any input of the fuzzer's size can hold. */
#define MAX_RECORDS 100000

static volatile uint64_t sink;

static void touch(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t h = 0;

	for (size_t i = 0; i < n; i++)
		h = h * 31 + b[i];
	sink += h;
}

static void touch_str(const char *s)
{
	if (s)
		touch(s, strlen(s) + 1);
}

static void check_info(struct hwt_pd_reader *r)
{
	const struct hwt_pd_info *info = hwt_pd_get_info(r);

	touch_str(info->hostname);
	touch_str(info->osrelease);
	touch_str(info->version);
	touch_str(info->arch);
	touch_str(info->cpudesc);
	touch_str(info->cpuid);
	for (size_t i = 0; i < info->ncmdline; i++)
		touch_str(info->cmdline[i]);
	for (size_t i = 0; i < info->nbuild_ids; i++) {
		CHECK(info->build_ids[i].size <= 20);
		touch_str(info->build_ids[i].filename);
	}
	for (size_t i = 0; i < hwt_pd_nattrs(r); i++) {
		const struct hwt_pd_attr *a = hwt_pd_get_attr(r, i);

		CHECK(a);
		CHECK(a->attr.size == sizeof(a->attr));
		touch(a->ids, a->nids * sizeof(*a->ids));
		touch_str(a->name);
	}
	CHECK(!hwt_pd_get_attr(r, hwt_pd_nattrs(r)));
}

/* A string handed out for @rec lies inside its raw bytes. */
static void check_in_record(const struct hwt_pd_record *rec, const void *p,
			    size_t n)
{
	const uint8_t *b = p;

	CHECK(b >= rec->raw && b + n <= rec->raw + rec->size);
}

static void check_rec_str(const struct hwt_pd_record *rec, const char *s)
{
	CHECK(s);
	check_in_record(rec, s, strlen(s) + 1);
}

/* One pass; returns the fingerprint of the records and their count. */
static uint64_t walk(struct hwt_pd_reader *r, uint64_t size, size_t *count,
		     int *last, int *learned)
{
	struct hwt_pd_record rec;
	uint64_t h = 0, prev_end = 0;
	size_t n = 0;
	int ret;

	while ((ret = hwt_pd_next(r, &rec)) > 0) {
		CHECK(n++ < MAX_RECORDS);
		CHECK(rec.size >= 8);
		/* A compressed record's records name it, and come after. */
		if (rec.compressed) {
			CHECK(rec.file_offset < prev_end);
		} else {
			CHECK(rec.file_offset >= prev_end);
			CHECK(rec.file_offset + rec.size <= size);
			prev_end = rec.file_offset + rec.size;
		}
		touch(rec.raw, rec.size);
		if (rec.type == HWT_PD_HEADER_ATTR || rec.type == HWT_PD_ID_INDEX)
			*learned = 1;
		switch (rec.type) {
		case PERF_RECORD_MMAP:
		case PERF_RECORD_MMAP2:
			check_rec_str(&rec, rec.u.mmap.filename);
			CHECK(rec.u.mmap.build_id_size <= 20);
			break;
		case PERF_RECORD_COMM:
			check_rec_str(&rec, rec.u.comm.comm);
			break;
		case PERF_RECORD_KSYMBOL:
			check_rec_str(&rec, rec.u.ksymbol.name);
			break;
		case PERF_RECORD_TEXT_POKE:
			check_in_record(&rec, rec.u.text_poke.bytes,
					(size_t)rec.u.text_poke.old_len +
						rec.u.text_poke.new_len);
			break;
		case HWT_PD_AUXTRACE_ERROR:
			check_rec_str(&rec, rec.u.auxtrace_error.msg);
			break;
		case HWT_PD_AUXTRACE_INFO:
			touch(rec.u.auxtrace_info.priv,
			      rec.u.auxtrace_info.npriv * sizeof(uint64_t));
			break;
		case HWT_PD_AUXTRACE:
			CHECK(rec.u.auxtrace.data_file_offset ==
			      rec.file_offset + rec.size);
			CHECK(rec.u.auxtrace.data_file_offset +
				      rec.u.auxtrace.size <= size);
			touch(rec.u.auxtrace.data, rec.u.auxtrace.size);
			prev_end += rec.u.auxtrace.size;
			break;
		case PERF_RECORD_SAMPLE:
			CHECK(rec.u.sample.raw == rec.raw + 8);
			CHECK(rec.u.sample.raw_size == rec.size - 8u);
			break;
		default:
			break;
		}
		h = h * 0x100000001b3ull + rec.type + rec.file_offset +
		    rec.sid.time + rec.sid.present;
	}
	if (ret < 0) {
		CHECK(-ret > 0 && -ret < HWT_ERR_COUNT);
		CHECK(strstr(hwt_pd_errmsg(r), "offset 0x"));
		CHECK(hwt_pd_next(r, &rec) == 0);
	}
	*count = n;
	*last = ret;
	return h;
}

static void run(int fd, uint64_t size, int seekable)
{
	struct hwt_pd_reader *r = NULL;
	char err[512] = "";
	size_t n1, n2;
	uint64_t h1, h2;
	int ret, last1, last2, learned = 0;

	ret = hwt_pd_open_fd(&r, fd, err, sizeof(err));
	if (ret < 0) {
		CHECK(!r);
		CHECK(-ret > 0 && -ret < HWT_ERR_COUNT);
		CHECK(strstr(err, "offset 0x"));
		return;
	}
	CHECK(r);
	check_info(r);
	h1 = walk(r, size, &n1, &last1, &learned);
	check_info(r);
	if (seekable) {
		CHECK(hwt_pd_rewind(r) == 0);
		h2 = walk(r, size, &n2, &last2, &learned);
		CHECK(learned || (h1 == h2 && n1 == n2 && last1 == last2));
	} else {
		CHECK(hwt_pd_rewind(r) == -HWT_ERR_INVALID);
	}
	hwt_pd_close(r);
}

/* Per-event layouts, as libipt's perf-get-opts.bash would give them. */
static const struct hwt_pd_raw_type raw_types[] = {
	{ 0, PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_IDENTIFIER },
	{ 7, PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_IDENTIFIER },
	{ 9, PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
	     PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER },
};

/*
 * The same bytes as a raw sideband stream (hwt_pd_open_raw_fd) with
 * sample_type @st, and the per-event layouts above if @types.
 */
static void run_raw(int fd, uint64_t st, int types, uint64_t size)
{
	struct hwt_pd_reader *r = NULL;
	struct hwt_pd_record rec;
	uint64_t prev_end = 0;
	char err[512] = "";
	size_t n = 0;
	int ret;

	ret = hwt_pd_open_raw_fd(&r, fd, st, types ? raw_types : NULL,
				 types ? 3 : 0, err, sizeof(err));
	if (ret < 0) {
		CHECK(!r);
		CHECK(strstr(err, "offset 0x"));
		return;
	}
	while ((ret = hwt_pd_next(r, &rec)) > 0) {
		CHECK(n++ < MAX_RECORDS);
		CHECK(!rec.compressed);
		CHECK(rec.file_offset >= prev_end);
		CHECK(rec.file_offset + rec.size <= size);
		prev_end = rec.file_offset + rec.size;
		touch(rec.raw, rec.size);
		if (rec.type == PERF_RECORD_MMAP || rec.type == PERF_RECORD_MMAP2)
			check_rec_str(&rec, rec.u.mmap.filename);
		if (rec.type == PERF_RECORD_COMM)
			check_rec_str(&rec, rec.u.comm.comm);
	}
	if (ret < 0)
		CHECK(strstr(hwt_pd_errmsg(r), "offset 0x"));
	CHECK(hwt_pd_nattrs(r) == (types ? 4u : 1u));
	hwt_pd_close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int mfd = -1;
	int fds[2];

	if (mfd < 0) {
		mfd = memfd_create("fuzz_perfdata", MFD_CLOEXEC);
		CHECK(mfd >= 0);
	}
	CHECK(ftruncate(mfd, 0) == 0);
	CHECK(pwrite(mfd, data, size, 0) == (ssize_t)size);
	run(mfd, size, 1);
	/* Raw: the layouts the seeds have, and one picked by the first
	 * byte from the trailer's fields, so that every layout is tried. */
	{
		static const uint64_t fields[] = {
			PERF_SAMPLE_TID, PERF_SAMPLE_TIME, PERF_SAMPLE_ID,
			PERF_SAMPLE_STREAM_ID, PERF_SAMPLE_CPU,
			PERF_SAMPLE_IDENTIFIER,
		};
		uint64_t st = 0;

		for (size_t i = 0; size && i < 6; i++)
			if (data[0] & (1u << i))
				st |= fields[i];
		run_raw(mfd, 0, 0, size);
		run_raw(mfd, PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
				     PERF_SAMPLE_IDENTIFIER, 1, size);
		run_raw(mfd, st, 0, size);
	}

	/* the pipe path, for what fits in a pipe without a second thread */
	if (size <= 65536 && pipe(fds) == 0) {
		fcntl(fds[1], F_SETPIPE_SZ, 65536);
		if (write(fds[1], data, size) == (ssize_t)size) {
			close(fds[1]);
			run(fds[0], size, 0);
		} else {
			close(fds[1]);
		}
		close(fds[0]);
	}
	return 0;
}

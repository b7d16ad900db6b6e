/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The perf.data writer: records of every type written and read back with
 * the reader (typed fields, sample ids, attrs, features), the buffer and
 * direct-write paths, and write errors (a full device, a file size limit)
 * that must leave a readable file of whole records.
 * (perf's own acceptance of the files: tests/cli/perfdata_writer.sh.)
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmocka.h>

#include <hwt/perfdata.h>

#define ID_A 101
#define ID_B0 201
#define ID_B1 202

#define ST_A (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | \
	      PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |  \
	      PERF_SAMPLE_CPU)
#define ST_B (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | \
	      PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU |      \
	      PERF_SAMPLE_PERIOD)

static char *tmp_path(void)
{
	const char *dir = getenv("TMPDIR");
	char *path;
	int fd;

	if (asprintf(&path, "%s/hwt-pdw-XXXXXX", dir ? dir : "/tmp") < 0)
		fail();
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	return path;
}

static uint64_t rnd(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void add_attrs(struct hwt_pd_writer *w)
{
	static const uint64_t ids_a[] = { ID_A };
	static const uint64_t ids_b[] = { ID_B0, ID_B1 };
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.sample_type = ST_A;
	attr.sample_id_all = 1;
	attr.mmap2 = attr.comm = attr.task = 1;
	assert_int_equal(hwt_pd_writer_add_attr(w, &attr, ids_a, 1, "dummy:u"),
			 0);
	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.sample_period = 4000;
	attr.sample_type = ST_B;
	attr.sample_id_all = 1;
	assert_int_equal(hwt_pd_writer_add_attr(w, &attr, ids_b, 2, NULL), 0);
}

/* ---- the record set ---- */

#define MAXREC 40
#define BIG_AUX (300 * 1024 + 3)	/* past the writer's buffer, unaligned */

struct recset {
	struct hwt_pd_record rec[MAXREC];
	size_t n;
	uint8_t *big;
	uint8_t small[44];
	uint64_t priv[HWT_PD_PT_INFO_NR];
	uint8_t poke[5];
	uint8_t sample_raw[7 * 8];
	uint8_t id_index[8 + 8 + 2 * 32];
	uint8_t unknown[24];
};

static struct hwt_pd_record *add(struct recset *s, uint32_t type,
				 uint16_t misc, uint64_t id)
{
	struct hwt_pd_record *r = &s->rec[s->n++];
	uint64_t k = s->n;

	assert_true(s->n <= MAXREC);
	memset(r, 0, sizeof(*r));
	r->type = type;
	r->misc = misc;
	r->sid.pid = (uint32_t)(1000 + k);
	r->sid.tid = (uint32_t)(2000 + k);
	r->sid.time = 1000000000ull * k + 7;
	r->sid.id = id;
	r->sid.stream_id = 0x5000 + k;
	r->sid.cpu = (uint32_t)(k % 4);
	return r;
}

static void build(struct recset *s)
{
	struct hwt_pd_record *r;
	uint64_t seed = 42, v;
	struct perf_event_header h;

	memset(s, 0, sizeof(*s));
	s->big = malloc(BIG_AUX);
	assert_non_null(s->big);
	for (size_t i = 0; i < BIG_AUX; i++)
		s->big[i] = (uint8_t)rnd(&seed);
	for (size_t i = 0; i < sizeof(s->small); i++)
		s->small[i] = (uint8_t)(0x80 + i);
	for (size_t i = 0; i < HWT_PD_PT_INFO_NR; i++)
		s->priv[i] = 0x1111 * (i + 1);

	r = add(s, PERF_RECORD_COMM, PERF_RECORD_MISC_USER, ID_A);
	r->u.comm = (struct hwt_pd_comm){ 10, 11, "exe-name", 1 };
	r = add(s, PERF_RECORD_COMM, PERF_RECORD_MISC_USER, ID_A);
	r->u.comm = (struct hwt_pd_comm){ 10, 12, "1234567", 0 };	/* 8 with NUL */
	r = add(s, PERF_RECORD_MMAP, PERF_RECORD_MISC_USER, ID_A);
	r->u.mmap.pid = 10;
	r->u.mmap.tid = 10;
	r->u.mmap.start = 0x400000;
	r->u.mmap.len = 0x1000;
	r->u.mmap.pgoff = 0x2000;
	r->u.mmap.filename = "/bin/x";
	r = add(s, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, ID_A);
	r->u.mmap = (struct hwt_pd_mmap){
		.pid = 10, .tid = 10, .start = 0x7f1234560000ull,
		.len = 0x23000, .pgoff = 0x3000, .maj = 259, .min = 3,
		.ino = 0x123456789ull, .ino_generation = 77,
		.prot = 5, .flags = 2, .is_mmap2 = 1,
		.filename = "/usr/lib/x86_64-linux-gnu/libc.so.6" };
	r = add(s, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, 0);
	r->u.mmap = (struct hwt_pd_mmap){
		.pid = 10, .tid = 10, .start = 0x7f0000000000ull, .len = 0x1000,
		.prot = 5, .flags = 2, .build_id_size = 20, .is_mmap2 = 1,
		.filename = "[vdso]" };
	for (int i = 0; i < 20; i++)
		r->u.mmap.build_id[i] = (uint8_t)(0xe0 + i);
	r = add(s, PERF_RECORD_FORK, 0, ID_A);
	r->u.task = (struct hwt_pd_task){ 20, 10, 21, 11, 555 };
	r = add(s, PERF_RECORD_EXIT, 0, ID_A);
	r->u.task = (struct hwt_pd_task){ 20, 10, 21, 11, 666 };
	/* B's trailer has no ID or STREAM_ID but ADDR does not belong. */
	r = add(s, PERF_RECORD_LOST, 0, ID_B1);
	r->u.lost = (struct hwt_pd_lost){ ID_B1, 99 };
	r = add(s, PERF_RECORD_LOST_SAMPLES, 0, ID_B0);
	r->u.lost_samples.lost = 12345;
	r = add(s, PERF_RECORD_THROTTLE, 0, ID_A);
	r->u.throttle = (struct hwt_pd_throttle){ 1, ID_A, 3 };
	r = add(s, PERF_RECORD_UNTHROTTLE, 0, ID_A);
	r->u.throttle = (struct hwt_pd_throttle){ 4, ID_A, 6 };
	r = add(s, PERF_RECORD_ITRACE_START, 0, ID_A);
	r->u.itrace_start = (struct hwt_pd_itrace_start){ 30, 31 };
	r = add(s, PERF_RECORD_AUX, 0, ID_A);
	r->u.aux = (struct hwt_pd_aux){ 0x4000, 0x800,
		PERF_AUX_FLAG_TRUNCATED | PERF_AUX_FLAG_PARTIAL };
	r = add(s, HWT_PD_AUXTRACE_INFO, 0, 0);
	r->u.auxtrace_info = (struct hwt_pd_auxtrace_info){
		HWT_PD_AUXTRACE_INTEL_PT, s->priv, HWT_PD_PT_INFO_NR };
	r = add(s, HWT_PD_AUXTRACE, 0, 0);
	r->u.auxtrace = (struct hwt_pd_auxtrace){ .size = sizeof(s->small),
		.offset = 0, .reference = 0xabc, .idx = 1, .tid = 31,
		.cpu = UINT32_MAX, .data = s->small };
	r = add(s, HWT_PD_AUXTRACE, 0, 0);
	r->u.auxtrace = (struct hwt_pd_auxtrace){ .size = BIG_AUX,
		.offset = 48, .reference = 0xdef, .idx = 0, .tid = 31,
		.cpu = 2, .data = s->big };
	r = add(s, HWT_PD_AUXTRACE_ERROR, 0, 0);
	r->u.auxtrace_error = (struct hwt_pd_auxtrace_error){
		.type = 1, .code = 5, .cpu = 2, .pid = 30, .tid = 31, .fmt = 1,
		.ip = 0x401234, .time = 987654321, .msg = "overflow" };
	r = add(s, PERF_RECORD_SWITCH, 0, ID_A);
	r->u.sw.out = 1;
	r->u.sw.preempt = 1;
	r = add(s, PERF_RECORD_SWITCH, 0, ID_A);
	r = add(s, PERF_RECORD_SWITCH_CPU_WIDE, 0, ID_A);
	r->u.sw = (struct hwt_pd_switch){ .out = 1, .cpu_wide = 1,
		.next_prev_pid = 40, .next_prev_tid = 41 };
	r = add(s, HWT_PD_TIME_CONV, 0, 0);
	r->u.time_conv = (struct hwt_pd_time_conv){ 31, 894784853, 17,
		0xffffff, 0xfffffff, 1, 1, 1 };
	r = add(s, HWT_PD_TIME_CONV, 0, 0);
	r->u.time_conv = (struct hwt_pd_time_conv){ .time_shift = 10,
		.time_mult = 1000, .time_zero = 5 };
	r = add(s, HWT_PD_FINISHED_ROUND, 0, 0);
	r = add(s, PERF_RECORD_KSYMBOL, 0, ID_A);
	r->u.ksymbol = (struct hwt_pd_ksymbol){ 0xffffffffa0000000ull, 512,
		PERF_RECORD_KSYMBOL_TYPE_BPF, 0, "bpf_prog_0123456789abcdef" };
	memcpy(s->poke, "\x0f\x1f\x44\xe9\x01", 5);
	r = add(s, PERF_RECORD_TEXT_POKE, 0, ID_A);
	r->u.text_poke = (struct hwt_pd_text_poke){ 0xffffffff81000010ull, 2,
						    3, s->poke };
	/* A sample encoded from its fields with B's sample_type. */
	r = add(s, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, ID_B1);
	r->u.sample.ip = 0x401000;
	r->u.sample.addr = 0x601000;
	r->u.sample.period = 4000;
	/* One copied from its body, laid out for A. */
	r = add(s, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, ID_A);
	{
		uint64_t body[7] = { ID_A, 0x402000,
				     (uint64_t)r->sid.tid << 32 | r->sid.pid,
				     r->sid.time, ID_A, r->sid.stream_id,
				     r->sid.cpu };

		memcpy(s->sample_raw, body, sizeof(body));
		r->u.sample.raw = s->sample_raw;
		r->u.sample.raw_size = sizeof(body);
		r->u.sample.ip = 0x402000;
	}
	h = (struct perf_event_header){ HWT_PD_ID_INDEX, 0,
					sizeof(s->id_index) };
	memcpy(s->id_index, &h, sizeof(h));
	v = 2;
	memcpy(s->id_index + 8, &v, 8);
	for (int i = 0; i < 2; i++) {
		uint64_t e[4] = { i ? ID_B0 : ID_A, (uint64_t)i, 1, UINT64_MAX };

		memcpy(s->id_index + 16 + 32 * i, e, sizeof(e));
	}
	r = add(s, HWT_PD_ID_INDEX, 0, 0);
	r->size = sizeof(s->id_index);
	r->raw = s->id_index;
	/* A type nobody knows, copied as it is. */
	h = (struct perf_event_header){ 120, 0x1234, sizeof(s->unknown) };
	memcpy(s->unknown, &h, sizeof(h));
	memcpy(s->unknown + 8, "sixteen  bytes!", 16);
	r = add(s, 120, 0x1234, 0);
	r->size = sizeof(s->unknown);
	r->raw = s->unknown;
}

/* ---- comparison ---- */

static int is_kernel_type(uint32_t t)
{
	return t >= PERF_RECORD_MMAP && t < PERF_RECORD_MAX &&
	       t != PERF_RECORD_SAMPLE;
}

static void expect_sid(const struct hwt_pd_record *want,
		       const struct hwt_pd_record *got)
{
	uint64_t st = want->sid.id == ID_B0 || want->sid.id == ID_B1 ? ST_B
								      : ST_A;
	/* Records without an id belong to the first attr, and get its id. */
	uint64_t id = want->sid.id ? want->sid.id : ID_A;

	if (!is_kernel_type(want->type) && want->type != PERF_RECORD_SAMPLE) {
		assert_int_equal(got->sid.present, 0);
		return;
	}
	assert_int_equal(got->sid.pid, want->sid.pid);
	assert_int_equal(got->sid.tid, want->sid.tid);
	assert_int_equal(got->sid.time, want->sid.time);
	assert_int_equal(got->sid.cpu, want->sid.cpu);
	assert_int_equal(got->sid.id, id);
	assert_int_equal(got->sid.stream_id,
			 st & PERF_SAMPLE_STREAM_ID ? want->sid.stream_id : 0);
	assert_non_null(got->attr);
	assert_int_equal(got->attr->attr.sample_type, st);
}

static void expect_record(const struct hwt_pd_record *want,
			  const struct hwt_pd_record *got)
{
	const struct hwt_pd_mmap *wm = &want->u.mmap, *gm = &got->u.mmap;

	assert_int_equal(got->type, want->type);
	assert_int_equal(got->size % 8, 0);
	switch (want->type) {
	case PERF_RECORD_COMM:
		assert_int_equal(got->u.comm.pid, want->u.comm.pid);
		assert_int_equal(got->u.comm.tid, want->u.comm.tid);
		assert_string_equal(got->u.comm.comm, want->u.comm.comm);
		assert_int_equal(got->u.comm.exec, want->u.comm.exec);
		assert_int_equal(!!(got->misc & PERF_RECORD_MISC_COMM_EXEC),
				 want->u.comm.exec);
		/* pid, tid, the name padded to 8, ST_A's 48-byte trailer */
		assert_int_equal(got->size,
				 8 + 8 + (strlen(want->u.comm.comm) + 8) / 8 * 8 + 48);
		break;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		assert_int_equal(gm->pid, wm->pid);
		assert_int_equal(gm->tid, wm->tid);
		assert_int_equal(gm->start, wm->start);
		assert_int_equal(gm->len, wm->len);
		assert_int_equal(gm->pgoff, wm->pgoff);
		assert_string_equal(gm->filename, wm->filename);
		if (want->type == PERF_RECORD_MMAP)
			break;
		assert_int_equal(gm->is_mmap2, 1);
		assert_int_equal(gm->prot, wm->prot);
		assert_int_equal(gm->flags, wm->flags);
		assert_int_equal(gm->build_id_size, wm->build_id_size);
		assert_int_equal(!!(got->misc & PERF_RECORD_MISC_MMAP_BUILD_ID),
				 !!wm->build_id_size);
		if (wm->build_id_size) {
			assert_memory_equal(gm->build_id, wm->build_id,
					    wm->build_id_size);
		} else {
			assert_int_equal(gm->maj, wm->maj);
			assert_int_equal(gm->min, wm->min);
			assert_int_equal(gm->ino, wm->ino);
			assert_int_equal(gm->ino_generation, wm->ino_generation);
		}
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		assert_memory_equal(&got->u.task, &want->u.task,
				    sizeof(want->u.task));
		break;
	case PERF_RECORD_LOST:
		assert_int_equal(got->u.lost.id, want->u.lost.id);
		assert_int_equal(got->u.lost.lost, want->u.lost.lost);
		break;
	case PERF_RECORD_LOST_SAMPLES:
		assert_int_equal(got->u.lost_samples.lost,
				 want->u.lost_samples.lost);
		break;
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		assert_int_equal(got->u.throttle.time, want->u.throttle.time);
		assert_int_equal(got->u.throttle.id, want->u.throttle.id);
		assert_int_equal(got->u.throttle.stream_id,
				 want->u.throttle.stream_id);
		break;
	case PERF_RECORD_ITRACE_START:
		assert_int_equal(got->u.itrace_start.pid,
				 want->u.itrace_start.pid);
		assert_int_equal(got->u.itrace_start.tid,
				 want->u.itrace_start.tid);
		break;
	case PERF_RECORD_AUX:
		assert_int_equal(got->u.aux.aux_offset, want->u.aux.aux_offset);
		assert_int_equal(got->u.aux.aux_size, want->u.aux.aux_size);
		assert_int_equal(got->u.aux.flags, want->u.aux.flags);
		break;
	case HWT_PD_AUXTRACE_INFO:
		assert_int_equal(got->u.auxtrace_info.type,
				 want->u.auxtrace_info.type);
		assert_int_equal(got->u.auxtrace_info.npriv,
				 want->u.auxtrace_info.npriv);
		assert_memory_equal(got->u.auxtrace_info.priv,
				    want->u.auxtrace_info.priv,
				    want->u.auxtrace_info.npriv * 8);
		break;
	case HWT_PD_AUXTRACE: {
		const struct hwt_pd_auxtrace *wa = &want->u.auxtrace,
					     *ga = &got->u.auxtrace;
		uint64_t padded = (wa->size + 7) & ~7ull;

		assert_int_equal(got->size, 48);
		/* The writer pads the data to 8 bytes, as perf record does. */
		assert_int_equal(ga->size, padded);
		assert_int_equal(ga->offset, wa->offset);
		assert_int_equal(ga->reference, wa->reference);
		assert_int_equal(ga->idx, wa->idx);
		assert_int_equal(ga->tid, wa->tid);
		assert_int_equal(ga->cpu, wa->cpu);
		assert_int_equal(ga->data_file_offset, got->file_offset + 48);
		assert_memory_equal(ga->data, wa->data, wa->size);
		for (uint64_t i = wa->size; i < padded; i++)
			assert_int_equal(ga->data[i], 0);
		break;
	}
	case HWT_PD_AUXTRACE_ERROR: {
		const struct hwt_pd_auxtrace_error *we = &want->u.auxtrace_error,
						   *ge = &got->u.auxtrace_error;

		assert_int_equal(ge->type, we->type);
		assert_int_equal(ge->code, we->code);
		assert_int_equal(ge->cpu, we->cpu);
		assert_int_equal(ge->pid, we->pid);
		assert_int_equal(ge->tid, we->tid);
		assert_int_equal(ge->fmt, we->fmt);
		assert_int_equal(ge->ip, we->ip);
		assert_int_equal(ge->time, we->time);
		assert_string_equal(ge->msg, we->msg);
		break;
	}
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		assert_int_equal(got->u.sw.out, want->u.sw.out);
		assert_int_equal(got->u.sw.preempt, want->u.sw.preempt);
		assert_int_equal(got->u.sw.cpu_wide,
				 want->type == PERF_RECORD_SWITCH_CPU_WIDE);
		assert_int_equal(!!(got->misc & PERF_RECORD_MISC_SWITCH_OUT),
				 want->u.sw.out);
		assert_int_equal(got->u.sw.next_prev_pid,
				 want->u.sw.next_prev_pid);
		assert_int_equal(got->u.sw.next_prev_tid,
				 want->u.sw.next_prev_tid);
		break;
	case HWT_PD_TIME_CONV:
		assert_memory_equal(&got->u.time_conv, &want->u.time_conv,
				    offsetof(struct hwt_pd_time_conv,
					     cap_user_time_zero));
		assert_int_equal(got->u.time_conv.cap_user_time_zero,
				 want->u.time_conv.cap_user_time_zero);
		assert_int_equal(got->u.time_conv.cap_user_time_short,
				 want->u.time_conv.cap_user_time_short);
		assert_int_equal(got->u.time_conv.extended,
				 want->u.time_conv.extended);
		assert_int_equal(got->size, want->u.time_conv.extended ? 56 : 32);
		break;
	case HWT_PD_FINISHED_ROUND:
		assert_int_equal(got->size, 8);
		break;
	case PERF_RECORD_KSYMBOL:
		assert_int_equal(got->u.ksymbol.addr, want->u.ksymbol.addr);
		assert_int_equal(got->u.ksymbol.len, want->u.ksymbol.len);
		assert_int_equal(got->u.ksymbol.ksym_type,
				 want->u.ksymbol.ksym_type);
		assert_int_equal(got->u.ksymbol.flags, want->u.ksymbol.flags);
		assert_string_equal(got->u.ksymbol.name, want->u.ksymbol.name);
		break;
	case PERF_RECORD_TEXT_POKE:
		assert_int_equal(got->u.text_poke.addr, want->u.text_poke.addr);
		assert_int_equal(got->u.text_poke.old_len,
				 want->u.text_poke.old_len);
		assert_int_equal(got->u.text_poke.new_len,
				 want->u.text_poke.new_len);
		assert_memory_equal(got->u.text_poke.bytes,
				    want->u.text_poke.bytes, 5);
		break;
	case PERF_RECORD_SAMPLE:
		assert_int_equal(got->u.sample.ip, want->u.sample.ip);
		if (want->sid.id == ID_B1) {
			assert_int_equal(got->u.sample.addr, want->u.sample.addr);
			assert_int_equal(got->u.sample.period,
					 want->u.sample.period);
			assert_int_equal(got->size, 8 + 7 * 8);
		} else {
			assert_int_equal(got->u.sample.raw_size,
					 want->u.sample.raw_size);
			assert_memory_equal(got->u.sample.raw,
					    want->u.sample.raw,
					    want->u.sample.raw_size);
		}
		break;
	default:	/* written from raw */
		assert_int_equal(got->size, want->size);
		{
			uint16_t misc;

			memcpy(&misc, (const uint8_t *)want->raw + 4,
			       sizeof(misc));
			assert_int_equal(got->misc, misc);
		}
		assert_memory_equal(got->raw, want->raw, want->size);
		break;
	}
	expect_sid(want, got);
}

static void set_features(struct hwt_pd_writer *w)
{
	static const char *const argv[] = { "hwt", "record", "--", "a b" };
	struct hwt_pd_build_id bid = { .pid = -1, .size = 20,
				       .filename = "/usr/bin/true" };

	for (int i = 0; i < 20; i++)
		bid.id[i] = (uint8_t)i;
	assert_int_equal(hwt_pd_writer_set_string(w, HWT_PD_FEAT_HOSTNAME,
						  "host-x"), 0);
	assert_int_equal(hwt_pd_writer_set_string(w, HWT_PD_FEAT_OSRELEASE,
						  "6.1.0-test"), 0);
	assert_int_equal(hwt_pd_writer_set_string(w, HWT_PD_FEAT_VERSION,
						  "hwt 0.1"), 0);
	assert_int_equal(hwt_pd_writer_set_string(w, HWT_PD_FEAT_ARCH,
						  "x86_64"), 0);
	/* 63 characters: with the NUL exactly one 64-byte unit */
	assert_int_equal(hwt_pd_writer_set_string(w, HWT_PD_FEAT_CPUDESC,
		"Intel(R) Core(TM) i7 CPU @ 2.40GHz, 63 characters long.........."), 0);
	assert_int_equal(hwt_pd_writer_set_string(w, HWT_PD_FEAT_CPUID,
						  "GenuineIntel,6,142,10"), 0);
	assert_int_equal(hwt_pd_writer_set_string(w, HWT_PD_FEAT_CMDLINE,
						  "x"), -HWT_ERR_INVALID);
	assert_int_equal(hwt_pd_writer_set_nrcpus(w, 8, 6), 0);
	assert_int_equal(hwt_pd_writer_set_cmdline(w, 4, argv), 0);
	assert_int_equal(hwt_pd_writer_add_build_id(w, &bid), 0);
	bid.filename = "[kernel.kallsyms]";
	bid.size = 16;
	assert_int_equal(hwt_pd_writer_add_build_id(w, &bid), 0);
}

static void expect_features(const struct hwt_pd_info *info)
{
	assert_string_equal(info->hostname, "host-x");
	assert_string_equal(info->osrelease, "6.1.0-test");
	assert_string_equal(info->version, "hwt 0.1");
	assert_string_equal(info->arch, "x86_64");
	assert_string_equal(info->cpudesc,
		"Intel(R) Core(TM) i7 CPU @ 2.40GHz, 63 characters long..........");
	assert_string_equal(info->cpuid, "GenuineIntel,6,142,10");
	assert_int_equal(info->nr_cpus_avail, 8);
	assert_int_equal(info->nr_cpus_online, 6);
	assert_int_equal(info->ncmdline, 4);
	assert_string_equal(info->cmdline[0], "hwt");
	assert_string_equal(info->cmdline[3], "a b");
	assert_int_equal(info->nbuild_ids, 2);
	assert_string_equal(info->build_ids[0].filename, "/usr/bin/true");
	assert_int_equal(info->build_ids[0].size, 20);
	assert_int_equal(info->build_ids[0].pid, -1);
	assert_int_equal(info->build_ids[0].id[19], 19);
	assert_string_equal(info->build_ids[1].filename, "[kernel.kallsyms]");
	assert_int_equal(info->build_ids[1].size, 16);
	for (int f = HWT_PD_FEAT_BUILD_ID; f <= HWT_PD_FEAT_CPUID; f++)
		assert_true(info->features[0] >> f & 1);
	assert_true(info->features[0] >> HWT_PD_FEAT_CMDLINE & 1);
	assert_true(info->features[0] >> HWT_PD_FEAT_EVENT_DESC & 1);
	/* the index of the AUXTRACE records, which perf needs */
	assert_true(info->features[0] >> HWT_PD_FEAT_AUXTRACE & 1);
	assert_false(info->features[0] >> HWT_PD_FEAT_TOTAL_MEM & 1);
}

static struct hwt_pd_reader *open_or_fail(const char *path)
{
	struct hwt_pd_reader *r = NULL;
	char err[512];
	int ret = hwt_pd_open(&r, path, err, sizeof(err));

	if (ret < 0)
		fail_msg("open %s: %s", path, err);
	return r;
}

static void test_round_trip(void **state)
{
	struct hwt_pd_writer *w;
	struct hwt_pd_reader *r;
	struct hwt_pd_record got;
	const struct hwt_pd_attr *a;
	struct recset *s = malloc(sizeof(*s));
	char *path = tmp_path(), err[256];
	size_t i;

	(void)state;
	assert_non_null(s);
	build(s);
	assert_int_equal(hwt_pd_writer_new(&w, path, err, sizeof(err)), 0);
	add_attrs(w);
	set_features(w);
	for (i = 0; i < s->n; i++)
		if (hwt_pd_write(w, &s->rec[i]) < 0)
			fail_msg("record %zu (type %u): %s", i, s->rec[i].type,
				 hwt_pd_writer_errmsg(w));
	assert_int_equal(hwt_pd_writer_close(w, err, sizeof(err)), 0);

	r = open_or_fail(path);
	assert_int_equal(hwt_pd_nattrs(r), 2);
	a = hwt_pd_get_attr(r, 0);
	assert_int_equal(a->attr.size, sizeof(struct perf_event_attr));
	assert_int_equal(a->file_attr_size, sizeof(struct perf_event_attr));
	assert_int_equal(a->attr.sample_type, ST_A);
	assert_int_equal(a->attr.config, PERF_COUNT_SW_DUMMY);
	assert_int_equal(a->attr.mmap2, 1);
	assert_int_equal(a->nids, 1);
	assert_int_equal(a->ids[0], ID_A);
	assert_non_null(a->name);
	assert_string_equal(a->name, "dummy:u");
	a = hwt_pd_get_attr(r, 1);
	assert_int_equal(a->attr.sample_type, ST_B);
	assert_int_equal(a->attr.sample_period, 4000);
	assert_int_equal(a->nids, 2);
	assert_int_equal(a->ids[1], ID_B1);
	assert_null(a->name);
	expect_features(hwt_pd_get_info(r));

	for (i = 0; i < s->n; i++) {
		int ret = hwt_pd_next(r, &got);

		if (ret != 1)
			fail_msg("record %zu: %d %s", i, ret, hwt_pd_errmsg(r));
		expect_record(&s->rec[i], &got);
	}
	assert_int_equal(hwt_pd_next(r, &got), 0);
	assert_int_equal(hwt_pd_unknown_records(r), 1);
	hwt_pd_close(r);
	unlink(path);
	free(path);
	free(s->big);
	free(s);
}

/* Many records through the buffer, with every string length mod 8. */
static void test_many_records(void **state)
{
	enum { N = 20000 };
	struct hwt_pd_writer *w;
	struct hwt_pd_reader *r;
	struct hwt_pd_record rec, got;
	char *path = tmp_path(), err[256], name[32];
	const struct hwt_pd_info *info;
	uint64_t bytes = 0;

	(void)state;
	assert_int_equal(hwt_pd_writer_new(&w, path, err, sizeof(err)), 0);
	add_attrs(w);
	for (int i = 0; i < N; i++) {
		memset(&rec, 0, sizeof(rec));
		rec.type = PERF_RECORD_COMM;
		snprintf(name, sizeof(name), "%.*s%d", i % 9, "abcdefghi", i);
		rec.u.comm.pid = (uint32_t)i;
		rec.u.comm.tid = (uint32_t)i + 1;
		rec.u.comm.comm = name;
		rec.sid.time = (uint64_t)i * 3;
		assert_int_equal(hwt_pd_write(w, &rec), 0);
	}
	assert_int_equal(hwt_pd_writer_close(w, err, sizeof(err)), 0);
	r = open_or_fail(path);
	for (int i = 0; i < N; i++) {
		assert_int_equal(hwt_pd_next(r, &got), 1);
		snprintf(name, sizeof(name), "%.*s%d", i % 9, "abcdefghi", i);
		assert_int_equal(got.type, PERF_RECORD_COMM);
		assert_int_equal(got.u.comm.pid, i);
		assert_int_equal(got.u.comm.tid, i + 1);
		assert_string_equal(got.u.comm.comm, name);
		assert_int_equal(got.sid.time, (uint64_t)i * 3);
		assert_int_equal(got.sid.id, ID_A);
		bytes += got.size;
	}
	assert_int_equal(hwt_pd_next(r, &got), 0);
	info = hwt_pd_get_info(r);
	assert_int_equal(info->data_size, bytes);
	assert_true(bytes > 2 * 256 * 1024);	/* several buffer flushes */
	/* only the attr name */
	assert_int_equal(info->features[0], 1u << HWT_PD_FEAT_EVENT_DESC);
	hwt_pd_close(r);
	unlink(path);
	free(path);
}

static void test_misuse(void **state)
{
	struct hwt_pd_writer *w;
	struct hwt_pd_record rec;
	struct perf_event_attr attr;
	char *path = tmp_path(), err[256], *longname;

	(void)state;
	assert_int_equal(hwt_pd_writer_new(&w, path, err, sizeof(err)), 0);
	add_attrs(w);
	longname = malloc(70000);
	assert_non_null(longname);
	memset(longname, 'x', 69999);
	longname[69999] = '\0';
	memset(&rec, 0, sizeof(rec));
	rec.type = PERF_RECORD_COMM;
	rec.u.comm.comm = longname;
	/* Too big for a 16-bit record size: refused, writer still usable. */
	assert_int_equal(hwt_pd_write(w, &rec), -HWT_ERR_INVALID);
	rec.u.comm.comm = "ok";
	assert_int_equal(hwt_pd_write(w, &rec), 0);
	memset(&attr, 0, sizeof(attr));
	assert_int_equal(hwt_pd_writer_add_attr(w, &attr, NULL, 0, NULL),
			 -HWT_ERR_INVALID);
	assert_non_null(strstr(hwt_pd_writer_errmsg(w), "after the first"));
	/* An unknown type without its bytes. */
	memset(&rec, 0, sizeof(rec));
	rec.type = 150;
	assert_int_equal(hwt_pd_write(w, &rec), -HWT_ERR_INVALID);
	assert_non_null(strstr(hwt_pd_writer_errmsg(w), "raw"));
	/* Refusals do not spoil the file. */
	assert_int_equal(hwt_pd_writer_close(w, err, sizeof(err)), 0);
	free(longname);
	unlink(path);
	free(path);
	assert_int_equal(hwt_pd_writer_new(&w, "/nonexistent-dir/x.data", err,
					   sizeof(err)), -HWT_ERR_IO);
	assert_non_null(strstr(err, "/nonexistent-dir/x.data"));
}

static void test_dev_full(void **state)
{
	struct hwt_pd_writer *w = NULL;
	char err[256];
	int ret;

	(void)state;
	if (access("/dev/full", W_OK) < 0)
		skip();
	ret = hwt_pd_writer_new(&w, "/dev/full", err, sizeof(err));
	assert_int_equal(ret, -HWT_ERR_IO);
	assert_null(w);
	assert_non_null(strstr(err, "/dev/full"));
	assert_non_null(strstr(err, "offset 0"));
	assert_non_null(strstr(err, strerror(ENOSPC)));
}

/*
 * A file size limit hit in the middle of the data: writes fail from then
 * on with the reason, and the file reads back as the records before the
 * limit, each whole.
 */
static void test_file_size_limit(void **state)
{
	enum { N = 50000 };
	const uint64_t LIMIT = 300 * 1024;
	struct hwt_pd_writer *w;
	struct hwt_pd_reader *r;
	struct hwt_pd_record rec, got;
	struct rlimit old, lim;
	char *path = tmp_path(), err[512];
	void (*old_sig)(int);
	int i, ret = 0, nread = 0;
	uint16_t last_size = 0;

	(void)state;
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	if (old.rlim_cur != RLIM_INFINITY && old.rlim_cur < 4 * LIMIT)
		skip();
	lim = old;
	lim.rlim_cur = LIMIT;
	old_sig = signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);

	assert_int_equal(hwt_pd_writer_new(&w, path, err, sizeof(err)), 0);
	add_attrs(w);
	assert_int_equal(hwt_pd_writer_set_string(w, HWT_PD_FEAT_HOSTNAME,
						  "h"), 0);
	for (i = 0; i < N && ret == 0; i++) {
		memset(&rec, 0, sizeof(rec));
		rec.type = PERF_RECORD_MMAP;
		rec.u.mmap.start = (uint64_t)i << 12;
		rec.u.mmap.filename = "/a/file";
		ret = hwt_pd_write(w, &rec);
	}
	assert_int_equal(ret, -HWT_ERR_IO);
	assert_non_null(strstr(hwt_pd_writer_errmsg(w), "offset"));
	assert_int_equal(hwt_pd_writer_close(w, err, sizeof(err)), -HWT_ERR_IO);
	setrlimit(RLIMIT_FSIZE, &old);
	signal(SIGXFSZ, old_sig);
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, strerror(EFBIG)));

	r = open_or_fail(path);
	while ((ret = hwt_pd_next(r, &got)) == 1) {
		assert_int_equal(got.type, PERF_RECORD_MMAP);
		assert_int_equal(got.u.mmap.start, (uint64_t)nread << 12);
		assert_string_equal(got.u.mmap.filename, "/a/file");
		last_size = got.size;
		nread++;
	}
	if (ret < 0)
		fail_msg("%s", hwt_pd_errmsg(r));
	/* Everything up to the limit, less at most one record. */
	assert_true(hwt_pd_get_info(r)->data_offset +
		    hwt_pd_get_info(r)->data_size <= LIMIT);
	assert_true(hwt_pd_get_info(r)->data_offset +
		    hwt_pd_get_info(r)->data_size > LIMIT - last_size);
	assert_true(nread > 1000);
	hwt_pd_close(r);
	unlink(path);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_many_records),
		cmocka_unit_test(test_misuse),
		cmocka_unit_test(test_dev_full),
		cmocka_unit_test(test_file_size_limit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

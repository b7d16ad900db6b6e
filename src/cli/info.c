/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hwt info: what a perf.data file holds, in one streaming pass: header
 * features, events, AUX area type and streams, threads, time span, record
 * counts and every kind of lost data. Memory follows the number of
 * threads and streams, never the size of the file.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hwt/perfdata.h>

#include "cli/cli.h"
#include "common/grow.h"

void help_info(void)
{
	printf(
"usage: hwt info FILE\n"
"\n"
"Summarise the perf.data FILE (\"-\": a pipe-mode stream on standard\n"
"input): the recording machine (header features), the events, the AUX\n"
"area trace type and its parameters, the AUX streams (per CPU or per\n"
"thread: bytes of trace and number of chunks), the threads seen with\n"
"their command names, the time span, the number of records of each type\n"
"and the lost data: LOST and LOST_SAMPLES records, AUX records flagged\n"
"TRUNCATED, OVERWRITE, PARTIAL or COLLISION, and AUXTRACE_ERRORs.\n"
"The file is read once, front to back.\n"
"\n"
"The exit status is 1 if the file cannot be read to its end (what was\n"
"read is summarised first).\n");
}

struct info_stream {
	uint32_t idx, cpu, tid;
	uint64_t bytes, chunks;
};

struct info_thread {
	uint32_t tid, pid;
	char comm[32];
};

#define INFO_MAX_TYPES 4
#define INFO_MAX_ERRMSGS 5

struct info_state {
	uint64_t counts[128], other_types, records;
	uint64_t first_time, last_time;
	int have_time;

	struct info_stream *streams;
	size_t nstreams, capstreams;
	struct info_thread *threads;
	size_t nthreads, capthreads;

	uint32_t aux_types[INFO_MAX_TYPES];
	size_t naux_types;
	uint64_t pt_priv[HWT_PD_PT_INFO_NR];
	size_t npt_priv;
	int have_pt_info;

	uint64_t lost_records, lost_events;
	uint64_t lost_samples_records, lost_samples;
	uint64_t aux_records, aux_bytes;
	uint64_t aux_truncated, aux_overwrite, aux_partial, aux_collision;
	uint64_t auxtrace_errors;
	char errmsgs[INFO_MAX_ERRMSGS][160];
	size_t nerrmsgs;
};

static const struct info_thread *thread_find(const struct info_state *st,
					     uint32_t tid)
{
	size_t lo = 0, hi = st->nthreads;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (st->threads[mid].tid == tid)
			return &st->threads[mid];
		if (st->threads[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* The thread @tid, added if new; NULL if out of memory. */
static struct info_thread *thread_get(struct info_state *st, uint32_t tid,
				      uint32_t pid)
{
	size_t lo = 0, hi = st->nthreads;
	struct info_thread *t;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (st->threads[mid].tid == tid) {
			st->threads[mid].pid = pid;
			return &st->threads[mid];
		}
		if (st->threads[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (hwt_grow((void **)&st->threads, &st->capthreads, st->nthreads + 1,
		 sizeof(*st->threads)))
		return NULL;
	memmove(&st->threads[lo + 1], &st->threads[lo],
		(st->nthreads - lo) * sizeof(*st->threads));
	st->nthreads++;
	t = &st->threads[lo];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->pid = pid;
	return t;
}

static void copy_comm(char *dst, size_t size, const char *src)
{
	size_t i;

	for (i = 0; src && src[i] && i + 1 < size; i++)
		dst[i] = (unsigned char)src[i] < 0x20 || src[i] == 0x7f ?
			 '?' : src[i];
	dst[i] = '\0';
}

static int stream_add(struct info_state *st, const struct hwt_pd_auxtrace *a)
{
	struct info_stream *s;
	size_t i;

	for (i = 0; i < st->nstreams; i++) {
		s = &st->streams[i];
		if (s->idx == a->idx && s->cpu == a->cpu && s->tid == a->tid)
			goto found;
	}
	if (hwt_grow((void **)&st->streams, &st->capstreams, st->nstreams + 1,
		 sizeof(*st->streams)))
		return -1;
	s = &st->streams[st->nstreams++];
	memset(s, 0, sizeof(*s));
	s->idx = a->idx;
	s->cpu = a->cpu;
	s->tid = a->tid;
found:
	s->bytes += a->size;
	s->chunks++;
	return 0;
}

static void note_auxtrace_info(struct info_state *st,
			       const struct hwt_pd_auxtrace_info *ai)
{
	size_t i;

	for (i = 0; i < st->naux_types; i++)
		if (st->aux_types[i] == ai->type)
			break;
	if (i == st->naux_types && i < INFO_MAX_TYPES)
		st->aux_types[st->naux_types++] = ai->type;
	if (ai->type == HWT_PD_AUXTRACE_INTEL_PT && !st->have_pt_info) {
		st->have_pt_info = 1;
		st->npt_priv = ai->npriv < HWT_PD_PT_INFO_NR ? ai->npriv :
			       HWT_PD_PT_INFO_NR;
		if (ai->priv)
			memcpy(st->pt_priv, ai->priv,
			       st->npt_priv * sizeof(*st->pt_priv));
		else
			st->npt_priv = 0;
	}
}

static int info_record(struct info_state *st, const struct hwt_pd_record *rec)
{
	struct info_thread *t;

	st->records++;
	if (rec->type < 128)
		st->counts[rec->type]++;
	else
		st->other_types++;
	/* Synthesized records (existing threads, maps) carry time 0. */
	if ((rec->sid.present & HWT_PD_SID_TIME) && rec->sid.time) {
		if (!st->have_time || rec->sid.time < st->first_time)
			st->first_time = rec->sid.time;
		if (!st->have_time || rec->sid.time > st->last_time)
			st->last_time = rec->sid.time;
		st->have_time = 1;
	}

	switch (rec->type) {
	case PERF_RECORD_COMM:
		t = thread_get(st, rec->u.comm.tid, rec->u.comm.pid);
		if (!t)
			return -1;
		copy_comm(t->comm, sizeof(t->comm), rec->u.comm.comm);
		break;
	case PERF_RECORD_FORK: {
		const struct info_thread *parent;
		char comm[32] = "";

		/* A new thread starts with its parent's name. */
		parent = thread_find(st, rec->u.task.ptid);
		if (parent)
			memcpy(comm, parent->comm, sizeof(comm));
		t = thread_get(st, rec->u.task.tid, rec->u.task.pid);
		if (!t)
			return -1;
		/* perf writes in rounds: the child's COMM may come first. */
		if (!t->comm[0])
			memcpy(t->comm, comm, sizeof(comm));
		break;
	}
	case PERF_RECORD_LOST:
		st->lost_records++;
		st->lost_events += rec->u.lost.lost;
		break;
	case PERF_RECORD_LOST_SAMPLES:
		st->lost_samples_records++;
		st->lost_samples += rec->u.lost_samples.lost;
		break;
	case PERF_RECORD_AUX:
		st->aux_records++;
		st->aux_bytes += rec->u.aux.aux_size;
		st->aux_truncated += !!(rec->u.aux.flags &
					PERF_AUX_FLAG_TRUNCATED);
		st->aux_overwrite += !!(rec->u.aux.flags &
					PERF_AUX_FLAG_OVERWRITE);
		st->aux_partial += !!(rec->u.aux.flags & PERF_AUX_FLAG_PARTIAL);
		st->aux_collision += !!(rec->u.aux.flags &
					PERF_AUX_FLAG_COLLISION);
		break;
	case HWT_PD_AUXTRACE:
		if (stream_add(st, &rec->u.auxtrace))
			return -1;
		break;
	case HWT_PD_AUXTRACE_INFO:
		note_auxtrace_info(st, &rec->u.auxtrace_info);
		break;
	case HWT_PD_AUXTRACE_ERROR:
		if (st->nerrmsgs < INFO_MAX_ERRMSGS) {
			const struct hwt_pd_auxtrace_error *e =
				&rec->u.auxtrace_error;
			char msg[100];

			copy_comm(msg, sizeof(msg), e->msg);
			snprintf(st->errmsgs[st->nerrmsgs++],
				 sizeof(st->errmsgs[0]),
				 "cpu %d pid %d tid %d ip 0x%" PRIx64 ": %s",
				 (int32_t)e->cpu, (int32_t)e->pid,
				 (int32_t)e->tid, e->ip, msg);
		}
		st->auxtrace_errors++;
		break;
	default:
		break;
	}
	return 0;
}

static const char *attr_type_name(uint32_t type)
{
	switch (type) {
	case PERF_TYPE_HARDWARE:
		return "hardware";
	case PERF_TYPE_SOFTWARE:
		return "software";
	case PERF_TYPE_TRACEPOINT:
		return "tracepoint";
	case PERF_TYPE_HW_CACHE:
		return "hw-cache";
	case PERF_TYPE_RAW:
		return "raw";
	case PERF_TYPE_BREAKPOINT:
		return "breakpoint";
	default:
		return "pmu";
	}
}

static void put_time(FILE *f, uint64_t ns)
{
	fprintf(f, "%" PRIu64 ".%06" PRIu64, ns / 1000000000u,
		ns % 1000000000u / 1000u);
}

static void print_str(FILE *f, const char *label, const char *value)
{
	char buf[256];

	if (!value)
		return;
	copy_comm(buf, sizeof(buf), value);
	fprintf(f, "%-12s %s\n", label, buf);
}

static void print_header(FILE *f, const struct hwt_pd_info *info,
			 const char *path)
{
	size_t i;
	uint32_t feat;
	int any = 0;

	fprintf(f, "file         %s%s\n", path,
		info->pipe_mode ? " (pipe mode)" : "");
	if (!info->pipe_mode)
		fprintf(f, "data         %" PRIu64 " bytes at offset 0x%" PRIx64
			"\n", info->data_size, info->data_offset);
	print_str(f, "hostname", info->hostname);
	print_str(f, "os release", info->osrelease);
	print_str(f, "perf", info->version);
	print_str(f, "arch", info->arch);
	if (info->nr_cpus_avail || info->nr_cpus_online)
		fprintf(f, "%-12s %u available, %u online\n", "cpus",
			info->nr_cpus_avail, info->nr_cpus_online);
	print_str(f, "cpu", info->cpudesc);
	print_str(f, "cpuid", info->cpuid);
	if (info->total_mem)
		fprintf(f, "%-12s %" PRIu64 " kB\n", "memory", info->total_mem);
	if (info->ncmdline && info->cmdline) {
		fprintf(f, "%-12s", "cmdline");
		for (i = 0; i < info->ncmdline; i++) {
			char buf[256];

			copy_comm(buf, sizeof(buf), info->cmdline[i]);
			fprintf(f, " %s", buf);
		}
		fputc('\n', f);
	}
	if (info->nbuild_ids)
		fprintf(f, "%-12s %zu\n", "build ids", info->nbuild_ids);
	for (i = 0; i < info->nexits; i++) {
		const struct hwt_pd_exit *e = &info->exits[i];

		fprintf(f, "%-12s pid %" PRIu32 ": ", i ? "" : "exits",
			e->pid);
		if (e->signal)
			fprintf(f, "killed by signal %" PRIu32, e->signal);
		else
			fprintf(f, "exit status %" PRIu32, e->code);
		if (e->flags & HWT_PD_EXIT_HAVE_IP)
			fprintf(f, " at 0x%" PRIx64, e->ip);
		if (e->flags & HWT_PD_EXIT_HAVE_TIME)
			fprintf(f, ", time %" PRIu64, e->time);
		fputc('\n', f);
	}
	fprintf(f, "%-12s", "features");
	for (feat = 1; feat < 256; feat++) {
		/* In pipe mode perf ends the features with a record for
		 * HEADER_LAST_FEATURE: a marker, not a feature. */
		if (!(info->features[feat / 64] & (1ull << (feat % 64))) ||
		    (info->pipe_mode && feat == HWT_PD_FEAT_LAST))
			continue;
		if (feat < HWT_PD_FEAT_LAST || feat == HWT_PD_FEAT_HWT_EXIT)
			fprintf(f, " %s", hwt_pd_feature_name(feat));
		else
			fprintf(f, " feature-%u", feat);
		any = 1;
	}
	fprintf(f, "%s\n", any ? "" : " none");
}

static void print_events(FILE *f, const struct hwt_pd_reader *r)
{
	size_t i, n = hwt_pd_nattrs(r);

	fprintf(f, "events       %zu\n", n);
	for (i = 0; i < n; i++) {
		const struct hwt_pd_attr *a = hwt_pd_get_attr(r, i);
		char name[128];

		if (!a)
			continue;
		copy_comm(name, sizeof(name), a->name ? a->name : "?");
		fprintf(f, "  %-20s type %u (%s) config 0x%llx sample_type "
			"0x%llx%s ids %zu\n", name, a->attr.type,
			attr_type_name(a->attr.type),
			(unsigned long long)a->attr.config,
			(unsigned long long)a->attr.sample_type,
			a->attr.sample_id_all ? " sample_id_all" : "",
			a->nids);
	}
}

static void print_aux(FILE *f, const struct info_state *st)
{
	static const char *const pt_names[HWT_PD_PT_INFO_NR] = {
		"pmu_type", "time_shift", "time_mult", "time_zero",
		"cap_user_time_zero", "tsc_bit", "noretcomp_bit",
		"have_sched_switch", "snapshot_mode", "per_cpu_mmaps",
		"mtc_bit", "mtc_freq_bits", "tsc_ctc_ratio_n",
		"tsc_ctc_ratio_d", "cyc_bit", "max_non_turbo_ratio",
		"filter_str_len",
	};
	size_t i;

	fprintf(f, "auxtrace    ");
	if (!st->naux_types)
		fprintf(f, " none");
	for (i = 0; i < st->naux_types; i++) {
		const char *name = hwt_pd_auxtrace_name(st->aux_types[i]);

		fprintf(f, " %s (type %u)", name ? name : "unknown",
			st->aux_types[i]);
	}
	fputc('\n', f);
	if (st->have_pt_info && st->npt_priv) {
		fprintf(f, "  intel_pt  ");
		for (i = 0; i < st->npt_priv; i++)
			fprintf(f, "%s%s %" PRIu64, i && i % 4 == 0 ?
				"\n            " : " ", pt_names[i],
				st->pt_priv[i]);
		fputc('\n', f);
	}
	fprintf(f, "aux streams  %zu\n", st->nstreams);
	for (i = 0; i < st->nstreams; i++) {
		const struct info_stream *s = &st->streams[i];

		fprintf(f, "  idx %u cpu %d tid %d: %" PRIu64 " bytes in %"
			PRIu64 " chunks\n", s->idx, (int32_t)s->cpu,
			(int32_t)s->tid, s->bytes, s->chunks);
	}
}

static void print_threads(FILE *f, const struct info_state *st)
{
	size_t i, nproc = 0;

	for (i = 0; i < st->nthreads; i++)
		nproc += st->threads[i].tid == st->threads[i].pid;
	fprintf(f, "threads      %zu (%zu processes)\n", st->nthreads, nproc);
	for (i = 0; i < st->nthreads; i++)
		fprintf(f, "  pid %d tid %d %s\n", (int32_t)st->threads[i].pid,
			(int32_t)st->threads[i].tid, st->threads[i].comm);
}

static void print_records(FILE *f, const struct info_state *st,
			  uint64_t unknown)
{
	uint32_t type;

	fprintf(f, "time        ");
	if (st->have_time) {
		fputc(' ', f);
		put_time(f, st->first_time);
		fprintf(f, " to ");
		put_time(f, st->last_time);
		fprintf(f, " (");
		put_time(f, st->last_time - st->first_time);
		fprintf(f, " s)\n");
	} else {
		fprintf(f, " none\n");
	}
	fprintf(f, "records      %" PRIu64 "\n", st->records);
	for (type = 0; type < 128; type++) {
		const char *name = hwt_pd_record_name(type);

		if (!st->counts[type])
			continue;
		if (name)
			fprintf(f, "  %-30s %" PRIu64 "\n", name,
				st->counts[type]);
		else
			fprintf(f, "  type %-25u %" PRIu64 "\n", type,
				st->counts[type]);
	}
	if (st->other_types)
		fprintf(f, "  %-30s %" PRIu64 "\n", "other types",
			st->other_types);
	if (unknown)
		fprintf(f, "  %-30s %" PRIu64 "\n", "(of unknown types)", unknown);
}

static void print_lost(FILE *f, const struct info_state *st)
{
	size_t i;

	if (!st->lost_records && !st->lost_samples_records &&
	    !st->aux_truncated && !st->aux_overwrite && !st->aux_partial &&
	    !st->aux_collision && !st->auxtrace_errors) {
		fprintf(f, "lost data    none\n");
		return;
	}
	fprintf(f, "lost data\n");
	if (st->lost_records)
		fprintf(f, "  %" PRIu64 " LOST records: %" PRIu64
			" events lost\n", st->lost_records, st->lost_events);
	if (st->lost_samples_records)
		fprintf(f, "  %" PRIu64 " LOST_SAMPLES records: %" PRIu64
			" samples lost\n", st->lost_samples_records,
			st->lost_samples);
	if (st->aux_truncated)
		fprintf(f, "  %" PRIu64 " of %" PRIu64 " AUX records TRUNCATED "
			"(trace lost: the buffer was full)\n",
			st->aux_truncated, st->aux_records);
	if (st->aux_overwrite)
		fprintf(f, "  %" PRIu64 " of %" PRIu64 " AUX records OVERWRITE "
			"(snapshot: older trace overwritten)\n",
			st->aux_overwrite, st->aux_records);
	if (st->aux_partial)
		fprintf(f, "  %" PRIu64 " of %" PRIu64 " AUX records PARTIAL "
			"(the trace has a gap)\n", st->aux_partial,
			st->aux_records);
	if (st->aux_collision)
		fprintf(f, "  %" PRIu64 " of %" PRIu64 " AUX records COLLISION "
			"(samples collided)\n", st->aux_collision,
			st->aux_records);
	if (st->auxtrace_errors) {
		fprintf(f, "  %" PRIu64 " AUXTRACE_ERROR records\n",
			st->auxtrace_errors);
		for (i = 0; i < st->nerrmsgs; i++)
			fprintf(f, "    %s\n", st->errmsgs[i]);
	}
}

int cmd_info(int argc, char **argv)
{
	enum { OPT_HELP = 256 };
	static const struct option long_opts[] = {
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	struct info_state *st;
	struct hwt_pd_reader *r = NULL;
	struct hwt_pd_record rec;
	char err[512];
	int c, ret, status = 0;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", long_opts, NULL)) != -1) {
		switch (c) {
		case 'h':
		case OPT_HELP:
			help_info();
			return 0;
		default:
			cli_bad_option("info", c, argv[optind - 1]);
			return 2;
		}
	}
	if (cli_one_file("info", argc, optind) < 0)
		return 2;
	st = calloc(1, sizeof(*st));
	if (!st) {
		fprintf(stderr, "hwt info: out of memory\n");
		return 1;
	}
	err[0] = '\0';
	ret = hwt_pd_open(&r, argv[optind], err, sizeof(err));
	if (ret < 0) {
		cli_pd_open_error("hwt info", argv[optind], err, ret);
		free(st);
		return 1;
	}
	while ((ret = hwt_pd_next(r, &rec)) > 0) {
		if (info_record(st, &rec)) {
			fprintf(stderr, "hwt info: out of memory\n");
			status = 1;
			break;
		}
	}
	/* Pipe mode: header and attrs are complete only now. */
	print_header(stdout, hwt_pd_get_info(r), argv[optind]);
	print_events(stdout, r);
	print_aux(stdout, st);
	print_threads(stdout, st);
	print_records(stdout, st, hwt_pd_unknown_records(r));
	print_lost(stdout, st);
	if (fflush(stdout))
		status = 1;
	if (ret < 0) {
		cli_pd_open_error("hwt info", argv[optind], hwt_pd_errmsg(r), ret);
		status = 1;
	}
	hwt_pd_close(r);
	free(st->streams);
	free(st->threads);
	free(st);
	return status;
}

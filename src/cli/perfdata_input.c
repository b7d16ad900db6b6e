/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * perf.data as input of hwt flow, calls, coverage and dump: the Intel PT
 * trace of a `perf record -e intel_pt//` file, decoded with its sideband.
 *
 * One pass over the file collects
 *   - the sideband (MMAP/MMAP2, COMM, FORK, EXIT, SWITCH, ITRACE_START,
 *     ...), sorted by time and fed to a process model (hwt_proc_*);
 *   - AUXTRACE_INFO (how the trace was configured), TIME_CONV and the
 *     CPUID feature (errata), which become the decoder configuration;
 *   - the AUX streams: the AUXTRACE chunks of each buffer (idx: one per
 *     thread, or one per cpu with per-cpu mmaps), concatenated in file
 *     order;
 *   - every sign of lost data: LOST records, AUX records with the
 *     TRUNCATED, PARTIAL or COLLISION flag, AUXTRACE_ERROR records and
 *     gaps between the AUX offsets of consecutive chunks. Each becomes a
 *     note of its stream, placed by trace offset (AUX offsets) or by time.
 *
 * Memory: the trace stays in the file. A stream is a list of chunks
 * (where each one's bytes are in the file), read in pieces when it is
 * decoded (struct cli_pieces: cut at PSBs, 64 MiB each), so what is
 * resident is a piece, the images and the sorted sideband, not the AUX
 * data of the file. A pipe cannot be read twice: there the chunks'
 * bytes are copied into one heap buffer per stream as they pass.
 *
 * Decoding (flow.c through struct cli_flow_hook): each stream gets a view
 * of the process model that follows its pid (per-thread mode) or the
 * thread running on its cpu (cpu mode). Before each block the decoder's
 * TSC is converted to perf time; when that passes the next sideband
 * change the view is advanced, and the decoder is handed the image of the
 * process it is in. Streams are decoded one after the other.
 *
 * -j N cuts a stream at PSBs into segments decoded on N threads, each
 * thread with a view of its own (a fork of the stream's context; views
 * share the model, whose file checks take its lock). To print what -j1
 * prints:
 *   - a view depends only on the latest time seen, and a thread's
 *     segments come in stream order, so its view only goes forward;
 *   - lost-data notes print at the syncs where they are due, so a cut is
 *     made only where none is due from the PSB before to the PSB after
 *     it (hook_cut_ok), and each segment prints the notes between its
 *     cut and the next;
 *   - what a segment could not know, in stream order: a time that jumped
 *     ahead in a damaged trace (a view past a sideband change its own
 *     times did not reach, a later segment's note due) is found by
 *     hook_seg_check, and the rest of the stream is then decoded on one
 *     thread; notes a segment left (no sync after them) print at the next
 *     one's first sync (hook_seg_join).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include <hwt/flow.h>
#include <hwt/perfdata.h>
#include <hwt/proc.h>
#include <hwt/pt.h>

#include "cli/cli.h"
#include "common/grow.h"

/* Lost data, placed in its stream by trace offset or by perf time. */
struct pd_note {
	uint64_t key;
	uint64_t seq;		/* file order, for a stable sort */
	char *text;
};

struct pd_notes {
	struct pd_note *v;
	size_t n, cap;
};

/*
 * Where an AUXTRACE chunk went: aux buffer offset -> stream offset, and
 * where its bytes are in the file.
 */
struct pd_chunk {
	uint64_t aux_offset, size, pos;
	uint64_t file_off;
};

/* What lost data a stream had (--stat). */
struct pd_losses {
	uint64_t lost_records, lost_events;
	uint64_t truncated, partial, collision;
	uint64_t gaps, gap_bytes;
	uint64_t errors;
};

struct pd_stream;

/* What stream_read() reads from. */
struct pd_reading {
	const struct cli_pd *pd;
	const struct pd_stream *st;
};

struct pd_stream {
	uint32_t idx, tid, cpu;
	uint32_t pid;
	uint8_t *data;		/* pipe mode: the trace, copied */
	size_t cap;
	uint64_t size;
	struct pd_chunk *chunks;
	size_t nchunks, chunks_cap;
	struct pd_notes by_off, by_time;
	struct pd_losses loss;
	uint64_t end_time;	/* the latest time known to be in the trace */
	uint8_t have_end_time;
	struct pd_reading reading;
};

/* A sideband record copied out of the reader (its pointers die). */
struct pd_sb {
	struct hwt_pd_record rec;
	uint64_t time, seq;
};

/* Lost-data records before they are assigned to streams. */
#define AUX_PROGRESS UINT32_MAX	/* type of an AUX record without loss */
struct pd_loss_rec {
	uint32_t type;		/* PERF_RECORD_* or HWT_PD_* */
	uint64_t time, seq;
	uint32_t cpu, tid;
	uint8_t have_cpu, have_tid, have_time;
	struct hwt_pd_aux aux;
	uint64_t lost;
	char *msg;		/* AUXTRACE_ERROR */
	uint32_t code;
};

struct cli_pd {
	const char *prog;
	const char *path;
	struct hwt_pd_reader *r;
	int fd;			/* the file, for the trace; -1 for a pipe */
	struct hwt_proc_model *model;

	uint8_t have_info, per_cpu, snapshot;
	uint32_t aux_type;
	uint64_t priv[HWT_PD_PT_INFO_NR];
	size_t npriv;
	char *filter;

	struct hwt_pd_time_conv tc;
	uint8_t have_tc;
	uint8_t tsc_enabled;	/* the trace has TSC packets */
	uint64_t pt_config;
	uint8_t have_pt_attr;

	struct hwt_pt_cpu cpu;
	uint8_t have_cpu;

	struct pd_stream *streams;
	size_t nstreams, streams_cap;

	struct pd_sb *sb;
	size_t nsb, sb_cap;
	uint64_t *sb_times;	/* sorted: when the sideband changes */
	size_t nsb_times;

	struct pd_loss_rec *losses;
	size_t nlosses, losses_cap;

	uint64_t seq;
	uint64_t nwarnings;
};

/* ------------------------------------------------------------------ */
/* Small helpers                                                       */
/* ------------------------------------------------------------------ */

static char *xstrdup_printf(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static char *xstrdup_printf(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	return s;
}

static int note_add(struct pd_notes *ns, uint64_t key, uint64_t seq,
		    char *text)
{
	if (!text)
		return -1;
	if (hwt_grow((void **)&ns->v, &ns->cap, ns->n + 1, sizeof(*ns->v))) {
		free(text);
		return -1;
	}
	ns->v[ns->n].key = key;
	ns->v[ns->n].seq = seq;
	ns->v[ns->n].text = text;
	ns->n++;
	return 0;
}

static int note_cmp(const void *a, const void *b)
{
	const struct pd_note *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void notes_free(struct pd_notes *ns)
{
	for (size_t i = 0; i < ns->n; i++)
		free(ns->v[i].text);
	free(ns->v);
	memset(ns, 0, sizeof(*ns));
}

int cli_pd_is_perfdata(const char *path)
{
	char magic[8];
	ssize_t n;
	int fd;

	/* Raw PT cannot come from standard input; perf.data can. */
	if (!strcmp(path, "-"))
		return 1;
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	n = read(fd, magic, sizeof(magic));
	close(fd);
	/* File and pipe mode share the magic; byte-swapped: other endian. */
	return n == (ssize_t)sizeof(magic) &&
	       (!memcmp(magic, "PERFILE2", 8) || !memcmp(magic, "2ELIFREP", 8));
}

/* ------------------------------------------------------------------ */
/* Collecting                                                          */
/* ------------------------------------------------------------------ */

static struct pd_stream *stream_of_idx(struct cli_pd *pd, uint32_t idx)
{
	struct pd_stream *st;

	for (size_t i = 0; i < pd->nstreams; i++)
		if (pd->streams[i].idx == idx)
			return &pd->streams[i];
	if (hwt_grow((void **)&pd->streams, &pd->streams_cap, pd->nstreams + 1,
		 sizeof(*pd->streams)))
		return NULL;
	st = &pd->streams[pd->nstreams++];
	memset(st, 0, sizeof(*st));
	st->idx = idx;
	return st;
}

static int add_chunk(struct cli_pd *pd, const struct hwt_pd_record *rec)
{
	const struct hwt_pd_auxtrace *a = &rec->u.auxtrace;
	struct pd_stream *st = stream_of_idx(pd, a->idx);
	struct pd_chunk *last;

	if (!st)
		return -HWT_ERR_NOMEM;
	if (!st->nchunks) {
		st->tid = a->tid;
		st->cpu = a->cpu;
	}
	if (a->size > UINT64_MAX - st->size ||
	    (pd->fd < 0 && (a->size > SIZE_MAX - st->size ||
			    hwt_grow((void **)&st->data, &st->cap,
				 (size_t)(st->size + a->size), 1))) ||
	    hwt_grow((void **)&st->chunks, &st->chunks_cap, st->nchunks + 1,
		 sizeof(*st->chunks)))
		return -HWT_ERR_NOMEM;
	last = st->nchunks ? &st->chunks[st->nchunks - 1] : NULL;
	/*
	 * The AUX offsets of consecutive chunks are contiguous unless the
	 * buffer wrapped before perf read it (or it is a snapshot).
	 */
	if (last && !pd->snapshot &&
	    a->offset != last->aux_offset + last->size) {
		uint64_t end = last->aux_offset + last->size;

		st->loss.gaps++;
		if (a->offset > end)
			st->loss.gap_bytes += a->offset - end;
		if (note_add(&st->by_off, st->size, pd->seq,
			     xstrdup_printf("[warning: trace data lost: "
					    "the AUX data jumps from offset "
					    "0x%" PRIx64 " to 0x%" PRIx64
					    " (PERF_RECORD_AUXTRACE at file "
					    "offset 0x%" PRIx64 ")]",
					    end, a->offset,
					    rec->file_offset)))
			return -HWT_ERR_NOMEM;
	}
	st->chunks[st->nchunks].aux_offset = a->offset;
	st->chunks[st->nchunks].size = a->size;
	st->chunks[st->nchunks].pos = st->size;
	st->chunks[st->nchunks].file_off = a->data_file_offset;
	st->nchunks++;
	if (pd->fd < 0 && a->size)
		memcpy(st->data + st->size, a->data, (size_t)a->size);
	st->size += a->size;
	return 0;
}

static int add_sideband(struct cli_pd *pd, const struct hwt_pd_record *rec)
{
	const char *str = NULL;
	struct pd_sb *sb;
	size_t slen = 0;
	char *copy;

	switch (rec->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		str = rec->u.mmap.filename;
		break;
	case PERF_RECORD_COMM:
		str = rec->u.comm.comm;
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
	case PERF_RECORD_ITRACE_START:
		break;
	default:
		return 0;
	}
	if (hwt_grow((void **)&pd->sb, &pd->sb_cap, pd->nsb + 1, sizeof(*pd->sb)))
		return -HWT_ERR_NOMEM;
	if (str)
		slen = strlen(str) + 1;
	copy = malloc(rec->size + slen + 1);
	if (!copy)
		return -HWT_ERR_NOMEM;
	sb = &pd->sb[pd->nsb++];
	sb->rec = *rec;
	/* The attrs may move as a pipe's attr records arrive. */
	sb->rec.attr = NULL;
	if (rec->raw && rec->size)
		memcpy(copy, rec->raw, rec->size);
	sb->rec.raw = (const uint8_t *)copy;
	if (str) {
		memcpy(copy + rec->size, str, slen);
		if (rec->type == PERF_RECORD_COMM)
			sb->rec.u.comm.comm = copy + rec->size;
		else
			sb->rec.u.mmap.filename = copy + rec->size;
	}
	sb->time = rec->sid.time;
	if (!(rec->sid.present & HWT_PD_SID_TIME) &&
	    (rec->type == PERF_RECORD_FORK || rec->type == PERF_RECORD_EXIT))
		sb->time = rec->u.task.time;
	sb->seq = pd->seq;
	return 0;
}

static int add_loss(struct cli_pd *pd, const struct hwt_pd_record *rec)
{
	struct pd_loss_rec *l;

	if (hwt_grow((void **)&pd->losses, &pd->losses_cap, pd->nlosses + 1,
		 sizeof(*pd->losses)))
		return -HWT_ERR_NOMEM;
	l = &pd->losses[pd->nlosses++];
	memset(l, 0, sizeof(*l));
	l->type = rec->type;
	/* An AUX record without loss only says how far the trace got. */
	if (rec->type == PERF_RECORD_AUX &&
	    !(rec->u.aux.flags & (PERF_AUX_FLAG_TRUNCATED |
				  PERF_AUX_FLAG_PARTIAL |
				  PERF_AUX_FLAG_COLLISION)))
		l->type = AUX_PROGRESS;
	l->seq = pd->seq;
	l->time = rec->sid.time;
	l->have_time = !!(rec->sid.present & HWT_PD_SID_TIME);
	l->cpu = rec->sid.cpu;
	l->have_cpu = !!(rec->sid.present & HWT_PD_SID_CPU);
	l->tid = rec->sid.tid;
	l->have_tid = !!(rec->sid.present & HWT_PD_SID_TID);
	switch (rec->type) {
	case PERF_RECORD_LOST:
		l->lost = rec->u.lost.lost;
		break;
	case PERF_RECORD_LOST_SAMPLES:
		l->lost = rec->u.lost_samples.lost;
		break;
	case PERF_RECORD_AUX:
		l->aux = rec->u.aux;
		break;
	case HWT_PD_AUXTRACE_ERROR: {
		const struct hwt_pd_auxtrace_error *e = &rec->u.auxtrace_error;

		/* Its own fields say where, not the (absent) trailer. */
		l->cpu = e->cpu;
		l->have_cpu = e->cpu != UINT32_MAX;
		l->tid = e->tid;
		l->have_tid = e->tid != UINT32_MAX;
		l->time = e->time;
		l->have_time = e->time != 0;
		l->code = e->code;
		l->aux.aux_offset = e->ip;
		l->msg = strdup(e->msg ? e->msg : "");
		if (!l->msg)
			return -HWT_ERR_NOMEM;
		break;
	}
	default:
		break;
	}
	return 0;
}

static int add_info(struct cli_pd *pd, const struct hwt_pd_record *rec)
{
	const struct hwt_pd_auxtrace_info *ai = &rec->u.auxtrace_info;
	size_t n = ai->npriv;

	if (pd->have_info)
		return 0;
	pd->have_info = 1;
	pd->aux_type = ai->type;
	if (ai->type != HWT_PD_AUXTRACE_INTEL_PT)
		return 0;
	if (n > HWT_PD_PT_INFO_NR)
		n = HWT_PD_PT_INFO_NR;
	memcpy(pd->priv, ai->priv, n * sizeof(*pd->priv));
	pd->npriv = n;
	/* The filter string follows the words, NUL-padded to 8 bytes. */
	if (ai->npriv > HWT_PD_PT_INFO_NR && n > HWT_PD_PT_FILTER_STR_LEN &&
	    pd->priv[HWT_PD_PT_FILTER_STR_LEN]) {
		size_t words = ai->npriv - HWT_PD_PT_INFO_NR;
		uint64_t len = pd->priv[HWT_PD_PT_FILTER_STR_LEN];

		if (len > words * 8)
			len = words * 8;
		pd->filter = strndup((const char *)(ai->priv +
						    HWT_PD_PT_INFO_NR),
				     (size_t)len);
		if (!pd->filter)
			return -HWT_ERR_NOMEM;
	}
	return 0;
}

static int sb_cmp(const void *a, const void *b)
{
	const struct pd_sb *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void model_warn(void *ctx, uint64_t time, uint32_t pid,
		       const char *msg)
{
	struct cli_pd *pd = ctx;

	pd->nwarnings++;
	fprintf(stderr, "%s: warning: pid %" PRIu32 " at time %" PRIu64
		": %s\n", pd->prog, pid, time, msg);
}

static int collect(struct cli_pd *pd)
{
	struct hwt_pd_record rec;
	int err;

	while ((err = hwt_pd_next(pd->r, &rec)) > 0) {
		pd->seq++;
		switch (rec.type) {
		case HWT_PD_AUXTRACE_INFO:
			err = add_info(pd, &rec);
			break;
		case HWT_PD_TIME_CONV:
			pd->tc = rec.u.time_conv;
			pd->have_tc = 1;
			err = 0;
			break;
		case HWT_PD_AUXTRACE:
			err = add_chunk(pd, &rec);
			break;
		case PERF_RECORD_AUX:
		case PERF_RECORD_LOST:
		case PERF_RECORD_LOST_SAMPLES:
		case HWT_PD_AUXTRACE_ERROR:
			err = add_loss(pd, &rec);
			break;
		default:
			err = add_sideband(pd, &rec);
			break;
		}
		if (err < 0) {
			fprintf(stderr, "%s: %s: %s.\n", pd->prog, pd->path,
				hwt_errstr(err));
			return -1;
		}
	}
	if (err < 0) {
		/* What was read so far is still worth decoding. */
		fprintf(stderr, "%s: warning: %s: %s; decoding what came "
			"before.\n", pd->prog, pd->path, hwt_pd_errmsg(pd->r));
		pd->nwarnings++;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Configuration                                                       */
/* ------------------------------------------------------------------ */

/* "GenuineIntel,6,142,10": vendor, family, model, stepping. */
static int parse_cpuid(struct hwt_pt_cpu *cpu, const char *s)
{
	unsigned long f, m, st = 0;
	const char *p = strchr(s, ',');
	char *end;

	if (!p || strncmp(s, "GenuineIntel", (size_t)(p - s)) ||
	    p - s != 12)
		return -1;
	errno = 0;
	f = strtoul(p + 1, &end, 10);
	if (*end != ',' || errno)
		return -1;
	m = strtoul(end + 1, &end, 10);
	if ((*end != ',' && *end) || errno)
		return -1;
	if (*end == ',')
		st = strtoul(end + 1, &end, 10);
	if (errno || f > UINT16_MAX || m > UINT8_MAX || st > UINT8_MAX)
		return -1;
	memset(cpu, 0, sizeof(*cpu));
	cpu->vendor = HWT_PT_VENDOR_INTEL;
	cpu->family = (uint16_t)f;
	cpu->model = (uint8_t)m;
	cpu->stepping = (uint8_t)st;
	return 0;
}

static uint64_t priv_word(const struct cli_pd *pd, unsigned i)
{
	return i < pd->npriv ? pd->priv[i] : 0;
}

/* The intel_pt event's attr: its config says which packets there are. */
static void find_pt_attr(struct cli_pd *pd)
{
	size_t n = hwt_pd_nattrs(pd->r);

	for (size_t i = 0; i < n; i++) {
		const struct hwt_pd_attr *a = hwt_pd_get_attr(pd->r, i);

		if (a && pd->npriv > HWT_PD_PT_PMU_TYPE &&
		    a->attr.type == priv_word(pd, HWT_PD_PT_PMU_TYPE)) {
			pd->pt_config = a->attr.config;
			pd->have_pt_attr = 1;
			return;
		}
	}
}

/*
 * The *_BIT and MTC_FREQ_BITS words are masks of the attr's config (perf
 * fills them by parsing "tsc", "mtc_period", ... against the PMU's format),
 * not bit numbers: perf -D prints "TSC bit 0x400".
 */
static int config_has(const struct cli_pd *pd, unsigned word)
{
	return (pd->pt_config & priv_word(pd, word)) != 0;
}

static void configure(struct cli_pd *pd)
{
	const struct hwt_pd_info *info = hwt_pd_get_info(pd->r);

	if (info && info->cpuid && !parse_cpuid(&pd->cpu, info->cpuid))
		pd->have_cpu = 1;
	pd->per_cpu = priv_word(pd, HWT_PD_PT_PER_CPU_MMAPS) != 0;
	pd->snapshot = priv_word(pd, HWT_PD_PT_SNAPSHOT_MODE) != 0;
	if (!pd->have_tc && pd->npriv > HWT_PD_PT_CAP_USER_TIME_ZERO) {
		pd->tc.time_shift = priv_word(pd, HWT_PD_PT_TIME_SHIFT);
		pd->tc.time_mult = priv_word(pd, HWT_PD_PT_TIME_MULT);
		pd->tc.time_zero = priv_word(pd, HWT_PD_PT_TIME_ZERO);
		pd->tc.cap_user_time_zero =
			priv_word(pd, HWT_PD_PT_CAP_USER_TIME_ZERO) != 0;
		pd->have_tc = 1;
	}
	find_pt_attr(pd);
	/* Without the attr, assume TSC (perf's default config has it). */
	pd->tsc_enabled = !pd->have_pt_attr ||
			  config_has(pd, HWT_PD_PT_TSC_BIT);
	if (pd->tsc_enabled && (!pd->have_tc || !pd->tc.time_mult)) {
		fprintf(stderr, "%s: warning: %s: no TSC conversion: the "
			"mappings at each stream's end are used.\n", pd->prog,
			pd->path);
		pd->tsc_enabled = 0;
	}
}

void cli_pd_qry_config(const struct cli_pd *pd, struct hwt_qry_config *q)
{
	struct hwt_time_config *t = &q->time;

	/* Command-line values win; perf.data fills what was not given. */
	if (!q->cpu.vendor && pd->have_cpu)
		q->cpu = pd->cpu;
	if (pd->aux_type != HWT_PD_AUXTRACE_INTEL_PT)
		return;
	if (!t->mtc_freq && pd->have_pt_attr &&
	    config_has(pd, HWT_PD_PT_MTC_BIT) &&
	    priv_word(pd, HWT_PD_PT_MTC_FREQ_BITS)) {
		uint64_t mask = priv_word(pd, HWT_PD_PT_MTC_FREQ_BITS);

		t->mtc_freq = (uint8_t)((pd->pt_config & mask) >>
					__builtin_ctzll(mask));
	}
	/* perf stores CPUID.15H as the TSC:CTC ratio n/d = EBX/EAX. */
	if (!t->cpuid_0x15_eax && !t->cpuid_0x15_ebx &&
	    priv_word(pd, HWT_PD_PT_TSC_CTC_D) <= UINT32_MAX &&
	    priv_word(pd, HWT_PD_PT_TSC_CTC_N) <= UINT32_MAX) {
		t->cpuid_0x15_eax =
			(uint32_t)priv_word(pd, HWT_PD_PT_TSC_CTC_D);
		t->cpuid_0x15_ebx =
			(uint32_t)priv_word(pd, HWT_PD_PT_TSC_CTC_N);
	}
	/* No CYC asked: none to use (-j then need not match calibration
	 * across cuts: see hwt_time_tracker_same()). */
	if (pd->have_pt_attr && priv_word(pd, HWT_PD_PT_CYC_BIT) &&
	    !config_has(pd, HWT_PD_PT_CYC_BIT))
		q->flags |= HWT_QRY_NO_CYC;
	if (!t->nom_freq &&
	    priv_word(pd, HWT_PD_PT_MAX_NONTURBO_RATIO) <= UINT8_MAX)
		t->nom_freq =
			(uint8_t)priv_word(pd, HWT_PD_PT_MAX_NONTURBO_RATIO);
}

/* ------------------------------------------------------------------ */
/* Streams and their notes                                             */
/* ------------------------------------------------------------------ */

/* Where AUX offset @aux is in the stream's concatenated bytes. */
static uint64_t stream_pos(const struct pd_stream *st, uint64_t aux)
{
	for (size_t i = 0; i < st->nchunks; i++) {
		const struct pd_chunk *c = &st->chunks[i];

		if (aux < c->aux_offset)
			return c->pos;
		if (aux - c->aux_offset <= c->size)
			return c->pos + (aux - c->aux_offset);
	}
	return st->size;
}

static int loss_matches(const struct cli_pd *pd, const struct pd_stream *st,
			const struct pd_loss_rec *l)
{
	if (pd->nstreams == 1)
		return 1;
	if (pd->per_cpu)
		return !l->have_cpu || l->cpu == st->cpu;
	return !l->have_tid || l->tid == st->tid;
}

static const char *aux_flag_text(uint64_t flags)
{
	if (flags & PERF_AUX_FLAG_TRUNCATED)
		return "the AUX buffer was full: trace data lost after this "
		       "point (PERF_RECORD_AUX truncated)";
	if (flags & PERF_AUX_FLAG_PARTIAL)
		return "partial trace data: gaps in this AUX record "
		       "(PERF_RECORD_AUX partial)";
	return "trace data collided with a sample (PERF_RECORD_AUX "
	       "collision)";
}

static int assign_loss(struct cli_pd *pd, struct pd_stream *st,
		       const struct pd_loss_rec *l)
{
	struct pd_losses *c = &st->loss;

	switch (l->type) {
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
		c->lost_records++;
		c->lost_events += l->lost;
		return note_add(&st->by_time, l->time, l->seq,
				xstrdup_printf("[warning: %" PRIu64 " %s lost "
					       "(%s at time %" PRIu64 ")]",
					       l->lost,
					       l->type == PERF_RECORD_LOST ?
					       "sideband records" : "samples",
					       l->type == PERF_RECORD_LOST ?
					       "PERF_RECORD_LOST" :
					       "PERF_RECORD_LOST_SAMPLES",
					       l->time));
	case HWT_PD_AUXTRACE_ERROR:
		c->errors++;
		return note_add(&st->by_time, l->have_time ? l->time : 0,
				l->seq,
				xstrdup_printf("[warning: trace error reported "
					       "by perf: %s (code %" PRIu32
					       ", ip 0x%" PRIx64 ", "
					       "PERF_RECORD_AUXTRACE_ERROR at "
					       "time %" PRIu64 ")]",
					       l->msg, l->code,
					       l->aux.aux_offset, l->time));
	case PERF_RECORD_AUX: {
		uint64_t f = l->aux.flags, at = l->aux.aux_offset;

		if (f & PERF_AUX_FLAG_TRUNCATED) {
			c->truncated++;
			at += l->aux.aux_size;
		} else if (f & PERF_AUX_FLAG_PARTIAL) {
			c->partial++;
		} else {
			c->collision++;
		}
		return note_add(&st->by_off, stream_pos(st, at), l->seq,
				xstrdup_printf("[warning: %s; aux offset 0x%"
					       PRIx64 " size 0x%" PRIx64
					       ", time %" PRIu64 "]",
					       aux_flag_text(f),
					       l->aux.aux_offset,
					       l->aux.aux_size, l->time));
	}
	default:
		(void)pd;
		return 0;
	}
}

static void note_end_time(struct pd_stream *st, const struct pd_loss_rec *l)
{
	/* perf writes an AUX record once the data is out. */
	if (l->have_time && (!st->have_end_time || l->time > st->end_time)) {
		st->end_time = l->time;
		st->have_end_time = 1;
	}
}

static int place_losses(struct cli_pd *pd)
{
	for (size_t i = 0; i < pd->nlosses; i++) {
		const struct pd_loss_rec *l = &pd->losses[i];
		size_t matched = 0;

		for (size_t s = 0; s < pd->nstreams; s++) {
			struct pd_stream *st = &pd->streams[s];

			if (!loss_matches(pd, st, l))
				continue;
			matched++;
			if (l->type == AUX_PROGRESS ||
			    l->type == PERF_RECORD_AUX)
				note_end_time(st, l);
			if (l->type != AUX_PROGRESS &&
			    assign_loss(pd, st, l) < 0)
				return -HWT_ERR_NOMEM;
		}
		/* Lost data is never dropped: unplaced, every stream has it. */
		for (size_t s = 0; !matched && l->type != AUX_PROGRESS &&
				   s < pd->nstreams; s++)
			if (assign_loss(pd, &pd->streams[s], l) < 0)
				return -HWT_ERR_NOMEM;
	}
	for (size_t s = 0; s < pd->nstreams; s++) {
		struct pd_stream *st = &pd->streams[s];

		if (st->by_off.n)
			qsort(st->by_off.v, st->by_off.n,
			      sizeof(*st->by_off.v), note_cmp);
		if (st->by_time.n)
			qsort(st->by_time.v, st->by_time.n,
			      sizeof(*st->by_time.v), note_cmp);
	}
	return 0;
}

/* Sort the sideband by time and build the model from it. */
static int build_model(struct cli_pd *pd, const struct cli_pd_files *files)
{
	struct hwt_proc_config cfg;
	const struct hwt_pd_info *info = hwt_pd_get_info(pd->r);
	const char *home = getenv("HOME");
	char *cache = NULL;
	int err;

	hwt_proc_config_init(&cfg);
	cfg.warn = model_warn;
	cfg.warn_ctx = pd;
	if (files) {
		cfg.root = files->symfs;
		cfg.vdso_path = files->vdso;
		cfg.buildid_dir = files->buildid_dir;
		cfg.debug_dir = files->debug_dir;
		cfg.no_symbols = files->no_symbols;
	}
	cfg.no_image_cache = cli_env_on("HWT_NO_IMAGE_CACHE");
	/* perf's build-id cache, where perf record saves the vdso too. */
	if (!cfg.buildid_dir && home && *home &&
	    asprintf(&cache, "%s/.debug", home) >= 0)
		cfg.buildid_dir = cache;
	pd->model = hwt_proc_new(&cfg);
	free(cache);
	if (!pd->model)
		return -HWT_ERR_NOMEM;
	if (info && info->nbuild_ids) {
		err = hwt_proc_add_build_ids(pd->model, info->build_ids,
					     info->nbuild_ids);
		if (err < 0)
			return err;
	}
	if (pd->nsb)
		qsort(pd->sb, pd->nsb, sizeof(*pd->sb), sb_cmp);
	pd->sb_times = malloc((pd->nsb ? pd->nsb : 1) *
			      sizeof(*pd->sb_times));
	if (!pd->sb_times)
		return -HWT_ERR_NOMEM;
	for (size_t i = 0; i < pd->nsb; i++) {
		err = hwt_proc_add(pd->model, &pd->sb[i].rec);
		if (err < 0) {
			fprintf(stderr, "%s: warning: %s: %s record at file "
				"offset 0x%" PRIx64 ": %s.\n", pd->prog,
				pd->path, hwt_pd_record_name(pd->sb[i].rec.type),
				pd->sb[i].rec.file_offset, hwt_errstr(err));
			pd->nwarnings++;
		}
		if (!pd->nsb_times ||
		    pd->sb_times[pd->nsb_times - 1] != pd->sb[i].time)
			pd->sb_times[pd->nsb_times++] = pd->sb[i].time;
	}
	return 0;
}

static int sb_is_pid(const struct pd_sb *sb, uint32_t pid)
{
	const struct hwt_pd_record *r = &sb->rec;

	switch (r->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		return r->u.mmap.pid == pid;
	case PERF_RECORD_COMM:
		return r->u.comm.pid == pid;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		return r->u.task.pid == pid;
	default:
		return (r->sid.present & HWT_PD_SID_TID) && r->sid.pid == pid;
	}
}

/* A CPU's stream (which thread runs is the sideband's), not a thread's. */
static int stream_on_cpu(const struct cli_pd *pd, const struct pd_stream *st)
{
	return pd->per_cpu || st->tid == UINT32_MAX;
}

/* The latest time known to be in the stream's trace, if any. */
static uint64_t stream_end(const struct pd_stream *st)
{
	return st->have_end_time ? st->end_time : UINT64_MAX;
}

/*
 * Per-thread mode: whose address space a stream runs in, and the time
 * its code is taken from when the trace has no timestamps: the last AUX
 * record (perf writes one when the data is out), else the process's last
 * sideband; before its exit either way.
 */
static void stream_owner(struct cli_pd *pd, struct pd_stream *st)
{
	if (stream_on_cpu(pd, st)) {
		st->pid = UINT32_MAX;
		return;
	}
	st->pid = hwt_proc_pid_of(pd->model, st->tid);
	for (size_t i = pd->nsb; i-- > 0;) {
		const struct pd_sb *sb = &pd->sb[i];

		if (!sb_is_pid(sb, st->pid))
			continue;
		if (sb->rec.type == PERF_RECORD_EXIT) {
			const struct hwt_pd_task *t = &sb->rec.u.task;

			/* Another thread's end is not the stream's. */
			if (t->tid != st->tid && t->tid != t->pid)
				continue;
			if (st->have_end_time && st->end_time >= sb->time)
				st->end_time = sb->time ? sb->time - 1 : 0;
			continue;
		}
		if (!st->have_end_time) {
			st->end_time = sb->time;
			st->have_end_time = 1;
		}
		break;
	}
}

static void free_sideband(struct cli_pd *pd)
{
	for (size_t i = 0; i < pd->nsb; i++)
		free((void *)pd->sb[i].rec.raw);
	free(pd->sb);
	pd->sb = NULL;
	pd->nsb = pd->sb_cap = 0;
}

/* The reader's messages name the file already; else name it here. */
void cli_pd_open_error(const char *prog, const char *path, const char *err,
		       int ret)
{
	if (err[0] && !strncmp(err, path, strlen(path)))
		fprintf(stderr, "%s: %s\n", prog, err);
	else
		fprintf(stderr, "%s: %s: %s\n", prog, path,
			err[0] ? err : hwt_errstr(ret));
}

const char **cli_pd_files_slot(struct cli_pd_files *f, const char *name)
{
	if (!strcmp(name, "symfs"))
		return &f->symfs;
	if (!strcmp(name, "vdso"))
		return &f->vdso;
	if (!strcmp(name, "buildid-dir"))
		return &f->buildid_dir;
	if (!strcmp(name, "debug-dir"))
		return &f->debug_dir;
	return NULL;
}

int cli_pd_open(struct cli_pd **out, const char *path, const char *prog)
{
	return cli_pd_open_files(out, path, prog, NULL);
}

int cli_pd_open_files(struct cli_pd **out, const char *path, const char *prog,
		      const struct cli_pd_files *files)
{
	struct cli_pd *pd;
	char err[256];
	int ret;

	*out = NULL;
	pd = calloc(1, sizeof(*pd));
	if (!pd) {
		fprintf(stderr, "%s: out of memory.\n", prog);
		return -1;
	}
	pd->prog = prog;
	pd->path = path;
	pd->fd = -1;
	err[0] = '\0';
	ret = hwt_pd_open(&pd->r, path, err, sizeof(err));
	if (ret < 0) {
		cli_pd_open_error(prog, path, err, ret);
		free(pd);
		return -1;
	}
	/* The trace is read from the file again when it is decoded. */
	if (!hwt_pd_get_info(pd->r)->pipe_mode) {
		pd->fd = open(path, O_RDONLY | O_CLOEXEC);
		if (pd->fd < 0) {
			fprintf(stderr, "%s: %s: %s.\n", prog, path,
				strerror(errno));
			goto fail;
		}
	}
	if (collect(pd) < 0)
		goto fail;
	if (pd->have_info && pd->aux_type != HWT_PD_AUXTRACE_INTEL_PT) {
		const char *name = hwt_pd_auxtrace_name(pd->aux_type);

		if (name)
			fprintf(stderr, "%s: %s: not supported yet: %s trace "
				"(only intel_pt is decoded).\n", prog, path,
				name);
		else
			fprintf(stderr, "%s: %s: not supported yet: AUX trace "
				"type %" PRIu32 ".\n", prog, path,
				pd->aux_type);
		goto fail;
	}
	if (!pd->nstreams) {
		fprintf(stderr, "%s: %s: no AUX area trace data in this file "
			"(%s): record with -e intel_pt// to decode program "
			"flow.\n", prog, path,
			pd->have_info ? "AUXTRACE_INFO but no AUXTRACE records" :
					"no AUXTRACE_INFO record");
		goto fail;
	}
	if (!pd->have_info)
		fprintf(stderr, "%s: warning: %s: no AUXTRACE_INFO record: "
			"assuming intel_pt.\n", prog, path);
	configure(pd);
	if (build_model(pd, files) < 0 || place_losses(pd) < 0) {
		fprintf(stderr, "%s: out of memory.\n", prog);
		goto fail;
	}
	for (size_t i = 0; i < pd->nstreams; i++)
		stream_owner(pd, &pd->streams[i]);
	*out = pd;
	return 0;

fail:
	cli_pd_close(pd);
	return -1;
}

void cli_pd_close(struct cli_pd *pd)
{
	if (!pd)
		return;
	for (size_t i = 0; i < pd->nstreams; i++) {
		struct pd_stream *st = &pd->streams[i];

		free(st->data);
		free(st->chunks);
		notes_free(&st->by_off);
		notes_free(&st->by_time);
	}
	free(pd->streams);
	for (size_t i = 0; i < pd->nlosses; i++)
		free(pd->losses[i].msg);
	free(pd->losses);
	free_sideband(pd);
	free(pd->sb_times);
	free(pd->filter);
	hwt_proc_delete(pd->model);
	hwt_pd_close(pd->r);
	if (pd->fd >= 0)
		close(pd->fd);
	free(pd);
}

size_t cli_pd_nstreams(const struct cli_pd *pd)
{
	return pd->nstreams;
}

/* The chunk that holds stream offset @pos (chunks are in stream order). */
static const struct pd_chunk *chunk_at(const struct pd_stream *st,
				       uint64_t pos)
{
	size_t lo = 0, hi = st->nchunks;

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (st->chunks[mid].pos <= pos)
			lo = mid;
		else
			hi = mid;
	}
	return &st->chunks[lo];
}

static int stream_read(void *ctx, uint64_t pos, uint8_t *buf, size_t len)
{
	const struct pd_reading *rd = ctx;
	const struct pd_stream *st = rd->st;
	const struct pd_chunk *c;

	/* An empty stream may have no data at all (NULL + 0 is UB). */
	if (!len)
		return 0;
	if (rd->pd->fd < 0) {
		memcpy(buf, st->data + pos, len);
		return 0;
	}
	c = chunk_at(st, pos);
	while (len) {
		uint64_t in = pos - c->pos;
		size_t n = c->size - in < len ? (size_t)(c->size - in) : len;
		ssize_t got = n ? pread(rd->pd->fd, buf, n,
					 (off_t)(c->file_off + in)) : 0;

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0 || (size_t)got < n) {
			fprintf(stderr, "%s: %s: reading the trace at file "
				"offset 0x%" PRIx64 ": %s.\n", rd->pd->prog,
				rd->pd->path, c->file_off + in,
				got < 0 ? strerror(errno) :
					  "unexpected end of file");
			return -1;
		}
		buf += n;
		pos += n;
		len -= n;
		c++;
	}
	return 0;
}

void cli_pd_stream_pieces(struct cli_pd *pd, size_t i, struct cli_pieces *p)
{
	struct pd_stream *st = &pd->streams[i];

	st->reading.pd = pd;
	st->reading.st = st;
	cli_pieces_init(p, st->size, stream_read, &st->reading);
}

void cli_pd_stream_header(const struct cli_pd *pd, size_t i,
			  struct cli_out *out)
{
	const struct pd_stream *st = &pd->streams[i];
	const char *comm = NULL;

	if (stream_on_cpu(pd, st)) {
		cli_out_printf(out, "# stream idx %" PRIu32 ": cpu %" PRIu32
			       ", %" PRIu64 " bytes\n", st->idx, st->cpu,
			       st->size);
	} else {
		comm = hwt_proc_comm(pd->model, st->tid, stream_end(st));
		cli_out_printf(out, "# stream idx %" PRIu32 ": pid %" PRIu32
			       " tid %" PRIu32 " comm %s, %" PRIu64
			       " bytes\n",
			       st->idx, st->pid, st->tid, comm ? comm : "?",
			       st->size);
	}
	if (i == 0 && pd->snapshot)
		cli_out_printf(out, "# snapshot mode: each AUX chunk is a "
			       "separate snapshot\n");
	if (i == 0 && pd->filter)
		cli_out_printf(out, "# address filter: %s\n", pd->filter);
	if (i == 0 && !pd->tsc_enabled)
		cli_out_printf(out, "# no timestamps: code as mapped at each "
			       "stream's end\n");
}

void cli_pd_stream_notes(const struct cli_pd *pd, size_t i,
			 struct cli_out *out)
{
	const struct pd_stream *st = &pd->streams[i];

	for (size_t k = 0; k < st->by_off.n; k++)
		cli_out_printf(out, "%016" PRIx64 "  %s\n", st->by_off.v[k].key,
			       st->by_off.v[k].text);
	for (size_t k = 0; k < st->by_time.n; k++)
		cli_out_printf(out, "%s\n", st->by_time.v[k].text);
}

/* ------------------------------------------------------------------ */
/* Decoding                                                            */
/* ------------------------------------------------------------------ */

struct pd_decode {
	struct cli_pd *pd;
	struct pd_stream *st;
	struct hwt_proc_view *view;
	uint64_t next_change;	/* advance the view at or after this time */
	uint64_t now;
	uint8_t have_now;
	uint32_t view_pid;
	uint32_t tid;		/* the thread running (cpu mode: last seen) */
	/* The next notes to print, and the first ones not to (-j: those of
	 * later segments). */
	size_t next_off, next_time;
	size_t end_off, end_time;
	uint64_t max_now;	/* the latest time seen: where the view is */
	const struct pd_decode *parent;	/* -j: the stream's, of a fork */
	struct cli_seg_notes seg;	/* a fork's segment */
};

/* The first sideband time after @t. */
static uint64_t next_change_after(const struct cli_pd *pd, uint64_t t)
{
	size_t lo = 0, hi = pd->nsb_times;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pd->sb_times[mid] <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < pd->nsb_times ? pd->sb_times[lo] : UINT64_MAX;
}

static void view_to(struct pd_decode *d, uint64_t t)
{
	struct cli_pd *pd = d->pd;
	uint32_t pid, tid;
	int err;

	err = hwt_proc_view_advance(d->view, t);
	if (err < 0)
		fprintf(stderr, "%s: warning: time %" PRIu64 ": %s.\n",
			pd->prog, t, hwt_errstr(err));
	if (pd->per_cpu &&
	    hwt_proc_ran_last(pd->model, d->st->cpu, t, &pid, &tid) >= 0) {
		if (pid != d->view_pid) {
			err = hwt_proc_view_set_pid(d->view, pid);
			if (err >= 0)
				d->view_pid = pid;
		}
		if (pid == d->view_pid)
			d->tid = tid;
	}
	d->next_change = next_change_after(pd, t);
}

/*
 * Whether the note by offset @o (if before @o_end) or the one by time @t
 * (if before @t_end) is due at stream offset @off (if @have_off) and the
 * decoder's time.
 */
static int note_due(const struct pd_decode *d, size_t o, size_t o_end,
		    size_t t, size_t t_end, uint64_t off, int have_off)
{
	const struct pd_stream *st = d->st;

	return (t < t_end && d->have_now && st->by_time.v[t].key <= d->now) ||
	       (o < o_end && have_off && st->by_off.v[o].key <= off);
}

/* A fork's sync: what seg_check needs to know. */
static void fork_sync(struct pd_decode *d, uint64_t off, int have_off)
{
	const struct pd_stream *st = d->st;
	struct cli_seg_notes *sn = &d->seg;

	if (!sn->synced) {
		sn->synced = 1;
		sn->first_off = off;
		sn->have_first_off = (uint8_t)have_off;
		sn->first_now = d->now;
		sn->have_first_now = d->have_now;
		/* Its own notes due here too: the order of the two sets
		 * would be this one's, not file order. */
		sn->first_due = (uint8_t)note_due(d, d->next_off, d->end_off,
						  d->next_time, d->end_time,
						  off, have_off);
	}
	if (note_due(d, d->end_off, st->by_off.n, d->end_time, st->by_time.n,
		     off, have_off))
		sn->overrun = 1;
}

/* The first of the notes [@i, @end) by offset, as a decoder offset. */
static uint64_t note_off(const struct pd_decode *d, size_t i, size_t end,
			 uint64_t base)
{
	uint64_t key;

	if (i >= end)
		return UINT64_MAX;
	key = d->st->by_off.v[i].key;
	return key > base ? key - base : 0;
}

static int hook_sync(void *ctx, struct hwt_blk_decoder *dec, uint64_t base,
		     uint64_t *quiet)
{
	struct pd_decode *d = ctx;
	struct hwt_image *image;
	uint64_t tsc, off = 0, later;
	int have_off;

	if (d->pd->tsc_enabled && hwt_blk_time(dec, &tsc, NULL, NULL) >= 0) {
		d->now = hwt_pd_tsc_to_perf_time(&d->pd->tc, tsc);
		d->have_now = 1;
		if (d->now > d->max_now)
			d->max_now = d->now;
		if (d->now >= d->next_change)
			view_to(d, d->now);
	}
	have_off = hwt_blk_get_offset(dec, &off) >= 0;
	off += base;
	if (d->parent)
		fork_sync(d, off, have_off);
	/* Another process: its image, with the blocks the decoder kept of
	 * it if it ran before (a new decoder may start with an old one). */
	image = hwt_proc_view_image(d->view);
	if (hwt_blk_image(dec) != image && hwt_blk_set_image(dec, image) < 0)
		fprintf(stderr, "%s: warning: out of memory switching to pid "
			"%" PRIu32 "'s image.\n", d->pd->prog, d->view_pid);
	/* Until the time moves, only notes by offset (this one's, or, in a
	 * fork, a later segment's) can come due. */
	*quiet = note_off(d, d->next_off, d->end_off, base);
	if (d->parent) {
		later = note_off(d, d->end_off, d->st->by_off.n, base);
		if (later < *quiet)
			*quiet = later;
	}
	return note_due(d, d->next_off, d->end_off, d->next_time, d->end_time,
			off, have_off);
}

static void print_notes(struct pd_decode *d, struct cli_out *out,
			uint64_t off, int have_off, int all)
{
	const struct pd_stream *st = d->st;

	for (;;) {
		const struct pd_note *o = d->next_off < d->end_off ?
					  &st->by_off.v[d->next_off] : NULL;
		const struct pd_note *t = d->next_time < d->end_time ?
					  &st->by_time.v[d->next_time] : NULL;

		if (o && !all && !(have_off && o->key <= off))
			o = NULL;
		if (t && !all && !(d->have_now && t->key <= d->now))
			t = NULL;
		if (!o && !t)
			return;
		/* Both due: file order says which came first. */
		if (o && (!t || o->seq <= t->seq)) {
			cli_out_printf(out, "%s\n", o->text);
			d->next_off++;
		} else {
			cli_out_printf(out, "%s\n", t->text);
			d->next_time++;
		}
	}
}

static void hook_notes(void *ctx, struct hwt_blk_decoder *dec,
		       uint64_t base, struct cli_out *out)
{
	struct pd_decode *d = ctx;
	uint64_t off = 0;
	int have_off = dec && hwt_blk_get_offset(dec, &off) >= 0;

	print_notes(d, out, base + off, have_off, dec == NULL);
}

static struct hwt_image *hook_image(void *ctx)
{
	struct pd_decode *d = ctx;

	return hwt_proc_view_image(d->view);
}

static void hook_task(void *ctx, uint32_t *pid, uint32_t *tid)
{
	struct pd_decode *d = ctx;

	*pid = hwt_proc_view_pid(d->view);
	*tid = d->tid;
}

static void hook_stat(void *ctx, struct cli_out *out)
{
	const struct pd_decode *d = ctx;
	const struct pd_losses *l = &d->st->loss;

	cli_out_printf(out, "lost sideband records: %" PRIu64 " (%" PRIu64
		       " events)\n", l->lost_records, l->lost_events);
	cli_out_printf(out, "aux truncated: %" PRIu64 "\n", l->truncated);
	cli_out_printf(out, "aux partial: %" PRIu64 "\n", l->partial);
	cli_out_printf(out, "aux collision: %" PRIu64 "\n", l->collision);
	cli_out_printf(out, "aux gaps: %" PRIu64 " (%" PRIu64 " bytes)\n",
		       l->gaps, l->gap_bytes);
	cli_out_printf(out, "trace errors: %" PRIu64 "\n", l->errors);
}

static int decode_init(struct pd_decode *d, struct cli_pd *pd,
		       struct pd_stream *st)
{
	memset(d, 0, sizeof(*d));
	d->pd = pd;
	d->st = st;
	d->view_pid = st->pid;
	d->tid = st->tid;
	d->end_off = st->by_off.n;
	d->end_time = st->by_time.n;
	d->view = hwt_proc_view_new(pd->model, st->pid);
	if (!d->view)
		return -1;
	if (!pd->tsc_enabled) {
		/*
		 * No timestamps: the trace cannot say when it ran, so the
		 * code is what was mapped at the stream's end.
		 */
		view_to(d, stream_end(st));
		d->next_change = UINT64_MAX;
	}
	return 0;
}

/* -j: another thread's view of the stream (see struct cli_flow_hook). */
static void *hook_fork(void *ctx)
{
	const struct pd_decode *parent = ctx;
	struct pd_decode *d = malloc(sizeof(*d));

	if (!d || decode_init(d, parent->pd, parent->st) < 0) {
		free(d);
		return NULL;
	}
	d->parent = parent;
	return d;
}

static void hook_unfork(void *fork)
{
	struct pd_decode *d = fork;

	if (d)
		hwt_proc_view_delete(d->view);
	free(d);
}

/* The first note with a key at or above @key. */
static size_t note_at(const struct pd_notes *n, uint64_t key)
{
	size_t lo = 0, hi = n->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (n->v[mid].key < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Time notes are printed when the decoder's time passes them; without
 * timestamps only at the end. */
static int time_notes_due(const struct pd_decode *d)
{
	return d->pd->tsc_enabled && d->st->by_time.n;
}

static int hook_cut_ok(void *ctx, uint64_t off_lo, uint64_t off_hi,
		       uint64_t tsc_lo, uint64_t tsc_hi, int have_tsc)
{
	const struct pd_decode *d = ctx;
	const struct pd_stream *st = d->st;
	size_t k = note_at(&st->by_off, off_lo);

	if (k < st->by_off.n && st->by_off.v[k].key <= off_hi)
		return 0;
	if (!time_notes_due(d))
		return 1;
	if (!have_tsc)
		return 0;
	tsc_lo = hwt_pd_tsc_to_perf_time(&d->pd->tc, tsc_lo);
	tsc_hi = hwt_pd_tsc_to_perf_time(&d->pd->tc, tsc_hi);
	k = note_at(&st->by_time, tsc_lo);
	return !(k < st->by_time.n && st->by_time.v[k].key <= tsc_hi);
}

/* Where the notes of the segment from @c start. */
static struct cli_note_pos cut_notes(const struct pd_decode *d,
				     const struct cli_cut *c)
{
	const struct pd_decode *p = d->parent ? d->parent : d;
	struct cli_note_pos pos;

	/* (The stream's place: the pieces before are printed, and the
	 * segments of this one wait for the first.) */
	if (!c)
		return (struct cli_note_pos){ p->next_off, p->next_time };
	pos.off = note_at(&d->st->by_off, c->off);
	/* (Else time notes wait for the end, and the stream's place among
	 * them stays at 0 till then; cuts have a TSC where they count.) */
	pos.time = time_notes_due(d) && c->have_tsc ?
		   note_at(&d->st->by_time,
			   hwt_pd_tsc_to_perf_time(&d->pd->tc, c->tsc)) : 0;
	return pos;
}

static void hook_seg(void *fork, const struct cli_cut *from,
		     const struct cli_cut *to, struct cli_seg_notes *sn)
{
	struct pd_decode *d = fork;

	memset(&d->seg, 0, sizeof(d->seg));
	d->seg.start = cut_notes(d, from);
	d->seg.max_before = d->max_now;
	d->next_off = d->seg.start.off;
	d->next_time = d->seg.start.time;
	if (to) {
		struct cli_note_pos end = cut_notes(d, to);

		d->end_off = end.off;
		d->end_time = end.time;
	} else {
		d->end_off = d->st->by_off.n;
		d->end_time = d->st->by_time.n;
	}
	/* Its time is its own (a sync without one would take the last). */
	d->have_now = 0;
	*sn = d->seg;
}

static void hook_seg_end(void *fork, struct cli_seg_notes *sn)
{
	struct pd_decode *d = fork;

	d->seg.end.off = d->next_off;
	d->seg.end.time = d->next_time;
	d->seg.max_now = d->max_now;
	d->seg.last_now = d->now;
	d->seg.have_now = d->have_now;
	*sn = d->seg;
}

static void hook_resume(void *ctx)
{
	struct pd_decode *d = ctx;

	if (d->pd->tsc_enabled && d->max_now >= d->next_change)
		view_to(d, d->max_now);
}

/*
 * One thread's decode would differ where the segment's view or notes
 * depended on what came before it: the stream's latest time (d->max_now)
 * past a sideband change that the segment's own times did not reach (a
 * damaged TSC that jumped ahead), a note of a later segment due, or notes
 * the segments before left that are not due at its first sync.
 */
static int hook_seg_check(void *ctx, const struct cli_seg_notes *sn,
			  int notes)
{
	struct pd_decode *d = ctx;
	const struct pd_stream *st = d->st;

	if (!sn->synced)
		return 0;
	if (notes && sn->overrun)
		goto alone;
	if (d->pd->tsc_enabled) {
		uint64_t lo = sn->max_before > sn->first_now ?
			      sn->max_before : sn->first_now;

		if (!sn->have_first_now)
			goto alone;
		if (d->max_now > lo &&
		    next_change_after(d->pd, lo) <= d->max_now)
			goto alone;
	}
	if (!notes)
		return 0;
	if (sn->first_due && (sn->start.off > d->next_off ||
			      sn->start.time > d->next_time))
		goto alone;
	if (sn->start.off > d->next_off &&
	    (!sn->have_first_off ||
	     st->by_off.v[sn->start.off - 1].key > sn->first_off))
		goto alone;
	if (sn->start.time > d->next_time &&
	    st->by_time.v[sn->start.time - 1].key > sn->first_now)
		goto alone;
	return 0;
alone:
	hook_resume(d);
	return 1;
}

static void hook_seg_join(void *ctx, const struct cli_seg_notes *sn,
			  struct cli_out *out)
{
	struct pd_decode *d = ctx;

	/* (out NULL: notes print at the end, from the stream's start.) */
	if (sn->synced && out) {
		if (d->next_off < sn->start.off ||
		    d->next_time < sn->start.time) {
			d->end_off = sn->start.off;
			d->end_time = sn->start.time;
			print_notes(d, out, 0, 0, 1);
			d->end_off = d->st->by_off.n;
			d->end_time = d->st->by_time.n;
		}
		d->next_off = sn->end.off;
		d->next_time = sn->end.time;
	}
	if (sn->max_now > d->max_now)
		d->max_now = sn->max_now;
	if (sn->have_now) {
		d->now = sn->last_now;
		d->have_now = 1;
	}
}

static const struct cli_flow_hook pd_hook = {
	.sync = hook_sync,
	.notes = hook_notes,
	.stat = hook_stat,
	.image = hook_image,
	.task = hook_task,
	.fork = hook_fork,
	.unfork = hook_unfork,
	.cut_ok = hook_cut_ok,
	.seg = hook_seg,
	.seg_end = hook_seg_end,
	.seg_check = hook_seg_check,
	.seg_join = hook_seg_join,
	.resume = hook_resume,
};

int cli_pd_each_stream(struct cli_pd *pd, cli_pd_stream_fn fn, void *ctx)
{
	int ret = 0;

	for (size_t i = 0; i < pd->nstreams; i++) {
		struct pd_stream *st = &pd->streams[i];
		struct cli_flow_hook hook;
		struct cli_pieces trace;
		struct pd_decode d;

		if (decode_init(&d, pd, st) < 0) {
			fprintf(stderr, "%s: out of memory.\n", pd->prog);
			return -1;
		}
		hook = pd_hook;
		hook.ctx = &d;
		hook.on_cpu = (uint8_t)stream_on_cpu(pd, st);
		hook.cpu = st->cpu;
		hook.pid = st->pid;
		hook.tid = st->tid;
		cli_pd_stream_pieces(pd, i, &trace);
		if (fn(ctx, i, &trace, hwt_proc_view_image(d.view), &hook) < 0)
			ret = -1;
		cli_pieces_fini(&trace);
		hwt_proc_view_delete(d.view);
	}
	return ret;
}

struct pd_flow_ctx {
	struct cli_pd *pd;
	struct flow *fl;
	struct cli_out *out;
};

static int flow_one(void *ctx, size_t i, struct cli_pieces *trace,
		    struct hwt_image *image, const struct cli_flow_hook *hook)
{
	struct pd_flow_ctx *c = ctx;

	cli_pd_stream_header(c->pd, i, c->out);
	return cli_flow_stream(c->fl, trace, image, hook, c->out);
}

int cli_pd_flow(struct cli_pd *pd, struct flow *fl, struct cli_out *out)
{
	struct pd_flow_ctx c = { pd, fl, out };
	int r = cli_pd_each_stream(pd, flow_one, &c);

	cli_flow_streams_done(fl);
	return r;
}

void cli_pd_stream_ids(const struct cli_pd *pd, size_t i, uint32_t *pid,
		       uint32_t *tid)
{
	*pid = pd->streams[i].pid;
	*tid = pd->streams[i].tid;
}

int cli_pd_time_conv(const struct cli_pd *pd, struct hwt_pd_time_conv *tc)
{
	if (!pd->have_tc)
		return -1;
	*tc = pd->tc;
	return 0;
}

int cli_pd_ran_on(const struct cli_pd *pd, uint32_t cpu, uint32_t pid,
		  uint32_t tid)
{
	return hwt_proc_ran_on(pd->model, cpu, pid, tid);
}

int cli_pd_has_time(const struct cli_pd *pd)
{
	return pd->tsc_enabled;
}

int cli_pd_stream_cpu(const struct cli_pd *pd, size_t i, uint32_t *cpu)
{
	const struct pd_stream *st = &pd->streams[i];

	if (!stream_on_cpu(pd, st))
		return -1;
	*cpu = st->cpu;
	return 0;
}

int cli_pd_any_cpu(const struct cli_pd *pd)
{
	for (size_t i = 0; i < pd->nstreams; i++)
		if (stream_on_cpu(pd, &pd->streams[i]))
			return 1;
	return 0;
}

int cli_pd_stream_task_at(const struct cli_pd *pd, size_t i, uint64_t ns,
			  uint32_t *pid, uint32_t *tid)
{
	const struct pd_stream *st = &pd->streams[i];
	uint64_t end = stream_end(st);

	if (!stream_on_cpu(pd, st)) {
		*pid = st->pid;
		*tid = st->tid;
		return 0;
	}
	return hwt_proc_ran_last(pd->model, st->cpu, ns < end ? ns : end,
				 pid, tid) < 0 ? -1 : 0;
}

int cli_pd_stream_end_task(const struct cli_pd *pd, size_t i, uint32_t *pid,
			   uint32_t *tid)
{
	const struct pd_stream *st = &pd->streams[i];

	if (!stream_on_cpu(pd, st)) {
		*pid = st->pid;
		*tid = st->tid;
		return 0;
	}
	return hwt_proc_ran_last(pd->model, st->cpu, stream_end(st), pid,
				 tid) < 0 ? -1 : 0;
}

static uint64_t end_or(const struct pd_stream *st, uint64_t until)
{
	uint64_t end = stream_end(st);

	return until < end ? until : end;
}

const char *cli_pd_task_comm(const struct cli_pd *pd, size_t i, uint32_t tid,
			     uint64_t until)
{
	return hwt_proc_comm(pd->model, tid, end_or(&pd->streams[i], until));
}

struct hwt_proc_view *cli_pd_end_view(struct cli_pd *pd, size_t i,
				      uint32_t pid, uint64_t until)
{
	struct hwt_proc_view *v = hwt_proc_view_new(pd->model, pid);

	if (v && hwt_proc_view_advance(v, end_or(&pd->streams[i], until)) < 0) {
		hwt_proc_view_delete(v);
		return NULL;
	}
	return v;
}

const char *cli_pd_debug_dir(const struct cli_pd *pd)
{
	return hwt_proc_debug_dir(pd->model);
}

const struct hwt_pd_info *cli_pd_info(const struct cli_pd *pd)
{
	return hwt_pd_get_info(pd->r);
}

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Sideband records printed as libipt's tools print them (--sb:compact,
 * --sb:verbose, with offset, file name and time), and the warnings and
 * errors about them.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/ipt_sb_int.h"

/* ------------------------------------------------------------------ */
/* Text                                                                */
/* ------------------------------------------------------------------ */

void sb_emit(struct cli_sb *sb, struct cli_text *t)
{
	sb->write(sb->write_ctx, t->buf, t->len);
	t->len = 0;
}

static const char *warning_text(int code)
{
	switch (code) {
	case SBW_LOST:
		return "sideband lost";
	case SBW_TRACE_LOST:
		return "trace lost";
	case SBW_SECTION_LOST:
		return "image section lost";
	default:
		return "bad errcode";
	}
}

void sb_report(struct cli_sb *sb, const struct sb_chan *ch, int code)
{
	struct cli_text t = { .len = 0 };

	if (code >= 0 && !sb->warn)
		return;
	cli_put(&t, "[%s:%016" PRIx64 " sideband ", ch->filename, ch->rec_off);
	if (sb->ptxed)
		cli_put(&t, "%s: ", code < 0 ? "error" : "warning");
	else
		cli_put(&t, "error: ");
	cli_put(&t, "%s]\n",
	        code < 0 ? cli_ipt_errstr(code) : warning_text(code));
	sb_emit(sb, &t);
}

/* ------------------------------------------------------------------ */
/* Printing records                                                    */
/* ------------------------------------------------------------------ */

static uint64_t le64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint32_t le32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

#define SID_TYPES (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | \
		   PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |               \
		   PERF_SAMPLE_IDENTIFIER)

/* The record types libipt's pevent reader takes apart (pev_read()). */
static int libipt_knows(uint32_t type)
{
	switch (type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_LOST:
	case PERF_RECORD_COMM:
	case PERF_RECORD_EXIT:
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
	case PERF_RECORD_FORK:
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_AUX:
	case PERF_RECORD_ITRACE_START:
	case PERF_RECORD_LOST_SAMPLES:
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		return 1;
	default:
		return 0;
	}
}

int sb_parse_trailer(const struct hwt_pd_record *rec, struct trailer *tr)
{
	uint64_t st = rec->attr ? rec->attr->attr.sample_type : 0;
	size_t n = 8u * (size_t)__builtin_popcountll(st & SID_TYPES);
	const uint8_t *p;

	memset(tr, 0, sizeof(*tr));
	/* libipt reads no samples of other records: no time (due at
	 * once), nothing between the braces. */
	if (!libipt_knows(rec->type))
		return 0;
	if (rec->size < 8u + n)
		return -HWT_ERR_BAD_PACKET;
	p = rec->raw + rec->size - n;
	if (st & PERF_SAMPLE_TID) {
		tr->pid = le32(p);
		tr->tid = le32(p + 4);
		tr->present |= HWT_PD_SID_TID;
		p += 8;
	}
	if (st & PERF_SAMPLE_TIME) {
		tr->time = le64(p);
		tr->present |= HWT_PD_SID_TIME;
		p += 8;
	}
	if (st & PERF_SAMPLE_ID) {
		tr->id = le64(p);
		tr->present |= HWT_PD_SID_ID;
		p += 8;
	}
	if (st & PERF_SAMPLE_STREAM_ID) {
		tr->stream_id = le64(p);
		tr->present |= HWT_PD_SID_STREAM_ID;
		p += 8;
	}
	if (st & PERF_SAMPLE_CPU) {
		tr->cpu = le32(p);
		tr->present |= HWT_PD_SID_CPU;
		p += 8;
	}
	if (st & PERF_SAMPLE_IDENTIFIER) {
		tr->identifier = le64(p);
		tr->present |= HWT_PD_SID_IDENTIFIER;
	}
	return 0;
}

/* One field in libipt's compact or verbose form. */
#define FIELD(t, verbose, name, fmt, ...)                                 \
	((verbose) ? cli_put((t), "\n  " name ": " fmt, __VA_ARGS__)         \
		   : cli_put((t), fmt, __VA_ARGS__))

static void put_record(struct cli_text *t, const struct hwt_pd_record *rec,
		       int v)
{
	const char *sep = v ? "" : ", ";
	const char *sfx;

	switch (rec->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2: {
		const struct hwt_pd_mmap *m = &rec->u.mmap;
		int two = rec->type == PERF_RECORD_MMAP2;

		cli_put(t, "PERF_RECORD_MMAP%s%s", two ? "2" : "",
		        v ? "" : "  ");
		if (v)
			cli_put(t, "\n  pid: %x\n  tid: %x", m->pid, m->tid);
		else
			cli_put(t, "%x/%x", m->pid, m->tid);
		FIELD(t, v, "addr", "%s%" PRIx64, sep, m->start);
		FIELD(t, v, "len", "%s%" PRIx64, sep, m->len);
		FIELD(t, v, "pgoff", "%s%" PRIx64, sep, m->pgoff);
		if (two) {
			/* From the record's bytes: libipt prints a build id
			 * (PERF_RECORD_MISC_MMAP_BUILD_ID) as the device and
			 * inode fields it shares a union with. The reader
			 * checked that the record holds them. */
			const uint8_t *u = rec->raw + 8 + 32;

			FIELD(t, v, "maj", "%s%x", sep, le32(u));
			FIELD(t, v, "min", "%s%x", sep, le32(u + 4));
			FIELD(t, v, "ino", "%s%" PRIx64, sep, le64(u + 8));
			FIELD(t, v, "ino_generation", "%s%" PRIx64, sep,
			      le64(u + 16));
			FIELD(t, v, "prot", "%s%x", sep, m->prot);
			FIELD(t, v, "flags", "%s%x", sep, m->flags);
		}
		FIELD(t, v, "filename", "%s%s", sep, m->filename);
		return;
	}
	case PERF_RECORD_LOST:
		cli_put(t, "PERF_RECORD_LOST%s", v ? "" : "  ");
		FIELD(t, v, "id", "%s%" PRIx64, "", rec->u.lost.id);
		FIELD(t, v, "lost", "%s%" PRIx64, sep, rec->u.lost.lost);
		return;
	case PERF_RECORD_COMM:
		sfx = rec->u.comm.exec ? ".EXEC" : "";
		if (v)
			cli_put(t, "PERF_RECORD_COMM%s\n  pid: %x\n  tid: %x"
			        "\n  comm: %s", sfx, rec->u.comm.pid,
			        rec->u.comm.tid, rec->u.comm.comm);
		else
			cli_put(t, "PERF_RECORD_COMM%s  %x/%x, %s", sfx,
			        rec->u.comm.pid, rec->u.comm.tid,
			        rec->u.comm.comm);
		return;
	case PERF_RECORD_EXIT:
	case PERF_RECORD_FORK: {
		const struct hwt_pd_task *k = &rec->u.task;

		sfx = rec->type == PERF_RECORD_EXIT ? "EXIT" : "FORK";
		if (v)
			cli_put(t, "PERF_RECORD_%s\n  pid: %x\n  ppid: %x\n  tid: %x"
			        "\n  ptid: %x\n  time: %" PRIx64, sfx, k->pid,
			        k->ppid, k->tid, k->ptid, k->time);
		else
			cli_put(t, "PERF_RECORD_%s  %x/%x, %x/%x, %" PRIx64,
			        sfx, k->pid, k->tid, k->ppid, k->ptid, k->time);
		return;
	}
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE: {
		const struct hwt_pd_throttle *th = &rec->u.throttle;

		sfx = rec->type == PERF_RECORD_THROTTLE ? "" : "UN";
		if (v)
			cli_put(t, "PERF_RECORD_%sTHROTTLE\n  time: %" PRIx64
			        "\n  id: %" PRIx64 "\n  stream_id: %" PRIx64,
			        sfx, th->time, th->id, th->stream_id);
		else
			cli_put(t, "PERF_RECORD_%sTHROTTLE  %" PRIx64 ", %" PRIx64
			        ", %" PRIx64, sfx, th->time, th->id,
			        th->stream_id);
		return;
	}
	case PERF_RECORD_AUX: {
		const struct hwt_pd_aux *a = &rec->u.aux;

		sfx = a->flags & PERF_AUX_FLAG_TRUNCATED ? ".TRUNCATED" : "";
		if (v)
			cli_put(t, "PERF_RECORD_AUX%s\n  aux offset: %" PRIx64
			        "\n  aux size: %" PRIx64 "\n  flags: %" PRIx64,
			        sfx, a->aux_offset, a->aux_size, a->flags);
		else
			cli_put(t, "PERF_RECORD_AUX%s  %" PRIx64 ", %" PRIx64
			        ", %" PRIx64, sfx, a->aux_offset, a->aux_size,
			        a->flags);
		return;
	}
	case PERF_RECORD_ITRACE_START: {
		uint32_t pid = rec->u.itrace_start.pid;
		uint32_t tid = rec->u.itrace_start.tid;

		if (v)
			cli_put(t, "PERF_RECORD_ITRACE_START\n  pid: %x"
			        "\n  tid: %x", pid, tid);
		else
			cli_put(t, "PERF_RECORD_ITRACE_START  %x/%x", pid, tid);
		return;
	}
	case PERF_RECORD_LOST_SAMPLES:
		cli_put(t, "PERF_RECORD_LOST_SAMPLES%s", v ? "" : "  ");
		FIELD(t, v, "lost", "%s%" PRIx64, "",
		      rec->u.lost_samples.lost);
		return;
	case PERF_RECORD_SWITCH:
		cli_put(t, "PERF_RECORD_SWITCH.%s",
		        rec->u.sw.out ? "OUT" : "IN");
		return;
	case PERF_RECORD_SWITCH_CPU_WIDE: {
		const char *pfx = rec->u.sw.out ? "next" : "prev";

		sfx = rec->u.sw.out ? "OUT" : "IN";
		if (v)
			cli_put(t, "PERF_RECORD_SWITCH_CPU_WIDE.%s\n  %s pid: "
			        "%x\n  %s tid: %x", sfx, pfx,
			        rec->u.sw.next_prev_pid, pfx,
			        rec->u.sw.next_prev_tid);
		else
			cli_put(t, "PERF_RECORD_SWITCH_CPU_WIDE.%s  %x/%x", sfx,
			        rec->u.sw.next_prev_pid,
			        rec->u.sw.next_prev_tid);
		return;
	}
	default:
		if (v)
			cli_put(t, "UNKNOWN\n  type: %x\n  misc: %x", rec->type,
			        rec->misc);
		else
			cli_put(t, "UNKNOWN (%x, %x)", rec->type, rec->misc);
		return;
	}
}

static void put_samples(struct cli_text *t, const struct trailer *tr, int v)
{
	if (!v)
		cli_put(t, "  {");
	if (tr->present & HWT_PD_SID_TID)
		v ? cli_put(t, "\n  pid: %x\n  tid: %x", tr->pid, tr->tid)
		  : cli_put(t, " %x/%x", tr->pid, tr->tid);
	if (tr->present & HWT_PD_SID_TIME)
		v ? cli_put(t, "\n  time: %" PRIx64, tr->time)
		  : cli_put(t, " %" PRIx64, tr->time);
	if (tr->present & HWT_PD_SID_ID)
		v ? cli_put(t, "\n  id: %" PRIx64, tr->id)
		  : cli_put(t, " %" PRIx64, tr->id);
	if (tr->present & HWT_PD_SID_CPU)
		v ? cli_put(t, "\n  cpu: %x", tr->cpu)
		  : cli_put(t, " cpu-%x", tr->cpu);
	if (tr->present & HWT_PD_SID_STREAM_ID)
		v ? cli_put(t, "\n  stream id: %" PRIx64, tr->stream_id)
		  : cli_put(t, " %" PRIx64, tr->stream_id);
	if (tr->present & HWT_PD_SID_IDENTIFIER)
		v ? cli_put(t, "\n  identifier: %" PRIx64, tr->identifier)
		  : cli_put(t, " %" PRIx64, tr->identifier);
	if (!v)
		cli_put(t, " }");
}

void sb_print_record(struct cli_sb *sb, const struct sb_chan *ch)
{
	struct cli_text t = { .len = 0 };
	uint32_t f = sb->flags;

	if (!f)
		return;
	if ((f & SBP_FILENAME) && (f & SBP_OFFSET))
		cli_put(&t, "%s:%016" PRIx64 "  ", ch->filename, ch->rec_off);
	else if (f & SBP_FILENAME)
		cli_put(&t, "%s  ", ch->filename);
	else if (f & SBP_OFFSET)
		cli_put(&t, "%016" PRIx64 "  ", ch->rec_off);
	if ((f & SBP_TIME) && (ch->tr.present & HWT_PD_SID_TIME))
		cli_put(&t, "%016" PRIx64 "  ", ch->tsc);
	if (f & (SBP_COMPACT | SBP_VERBOSE)) {
		put_record(&t, &ch->rec, !!(f & SBP_VERBOSE));
		put_samples(&t, &ch->tr, !!(f & SBP_VERBOSE));
	}
	cli_put(&t, "\n");
	sb_emit(sb, &t);
}


/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hwt sideband: the sideband records of a perf.data file in time order,
 * one per line.
 *
 * perf writes records in rounds, each sorted only within itself, so the
 * lines are formatted while reading, kept, and stable-sorted by sample
 * time before printing. Only sideband is kept (samples and trace bytes
 * are not), so memory follows the sideband, not the trace.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hwt/perfdata.h>

#include "cli/cli.h"
#include "common/grow.h"

void help_sideband(void)
{
	printf(
"usage: hwt sideband [options] FILE\n"
"\n"
"Print the sideband records of the perf.data FILE (\"-\": a pipe-mode\n"
"stream on standard input) in time order, one per line:\n"
"\n"
"  TIME CPU PID/TID TYPE DETAILS\n"
"\n"
"TIME is seconds.microseconds as perf prints it (\"-\" if the record has\n"
"no time; those come first, in file order; an AUXTRACE_ERROR's own time\n"
"counts), CPU the sample CPU (\"-\" if\n"
"not recorded), TYPE perf's name (PERF_RECORD_MMAP2, PERF_RECORD_COMM, ...).\n"
"Mappings show start, length and page offset in hex, then the path;\n"
"COMM the name (\"exec:\" first for an exec), FORK/EXIT the parent\n"
"pid/tid, AUX the range and its flags, AUXTRACE (one line per chunk of\n"
"trace) size, offset, idx, tid and cpu. Samples are not listed, nor\n"
"PERF_RECORD_FINISHED_ROUND. Records with the same time keep file order.\n"
"\n"
"options:\n"
"  --file-order       do not sort: the records as the file has them\n"
"  --pid LIST, --tid LIST, -C LIST, --time-range \"START,END ...\"\n"
"                     only the records of these threads (pid or tid\n"
"                     listed), sample CPUs and times (perf's seconds),\n"
"                     as perf script chooses its events\n");
}

struct sb_line {
	uint64_t time;
	uint64_t seq;
	size_t off, len;
	int has_time;
};

struct sb_state {
	struct sb_line *lines;
	size_t nlines, caplines;
	char *text;
	size_t ntext, captext;
};

/* A string from the file, shown safely: control bytes as '?'. */
static void put_str(struct cli_text *f, const char *s)
{
	if (!s)
		return;
	for (; *s && f->len < sizeof(f->buf) - 1; s++)
		f->buf[f->len++] = (unsigned char)*s < 0x20 || *s == 0x7f ?
				   '?' : *s;
}

static void put_aux_flags(struct cli_text *f, uint64_t flags)
{
	static const struct {
		uint64_t bit;
		const char *name;
	} names[] = {
		{ PERF_AUX_FLAG_TRUNCATED, "TRUNCATED" },
		{ PERF_AUX_FLAG_OVERWRITE, "OVERWRITE" },
		{ PERF_AUX_FLAG_PARTIAL, "PARTIAL" },
		{ PERF_AUX_FLAG_COLLISION, "COLLISION" },
	};
	const char *sep = " ";

	cli_put(f, " flags 0x%" PRIx64, flags);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (flags & names[i].bit) {
			cli_put(f, "%s%s", sep, names[i].name);
			sep = "|";
		}
	}
}

/* The pid/tid a record is about: its own fields, else the sample id. */
static int record_task(const struct hwt_pd_record *rec, uint32_t *pid,
		       uint32_t *tid)
{
	switch (rec->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		*pid = rec->u.mmap.pid;
		*tid = rec->u.mmap.tid;
		return 1;
	case PERF_RECORD_COMM:
		*pid = rec->u.comm.pid;
		*tid = rec->u.comm.tid;
		return 1;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		*pid = rec->u.task.pid;
		*tid = rec->u.task.tid;
		return 1;
	case PERF_RECORD_ITRACE_START:
		*pid = rec->u.itrace_start.pid;
		*tid = rec->u.itrace_start.tid;
		return 1;
	default:
		break;
	}
	if (rec->sid.present & HWT_PD_SID_TID) {
		*pid = rec->sid.pid;
		*tid = rec->sid.tid;
		return 1;
	}
	return 0;
}

static void put_details(struct cli_text *f, const struct hwt_pd_record *rec)
{
	const char *name;

	switch (rec->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2: {
		const struct hwt_pd_mmap *m = &rec->u.mmap;

		cli_put(f, " 0x%" PRIx64 " 0x%" PRIx64 " 0x%" PRIx64 " ",
		    m->start, m->len, m->pgoff);
		put_str(f, m->filename);
		break;
	}
	case PERF_RECORD_COMM:
		cli_put(f, " %s", rec->u.comm.exec ? "exec: " : "");
		put_str(f, rec->u.comm.comm);
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		cli_put(f, " parent %d/%d", (int32_t)rec->u.task.ppid,
		    (int32_t)rec->u.task.ptid);
		break;
	case PERF_RECORD_LOST:
		cli_put(f, " id %" PRIu64 " lost %" PRIu64, rec->u.lost.id,
		    rec->u.lost.lost);
		break;
	case PERF_RECORD_LOST_SAMPLES:
		cli_put(f, " lost %" PRIu64, rec->u.lost_samples.lost);
		break;
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		cli_put(f, " id %" PRIu64 " stream_id %" PRIu64,
		    rec->u.throttle.id, rec->u.throttle.stream_id);
		break;
	case PERF_RECORD_AUX:
		cli_put(f, " offset 0x%" PRIx64 " size 0x%" PRIx64,
		    rec->u.aux.aux_offset, rec->u.aux.aux_size);
		put_aux_flags(f, rec->u.aux.flags);
		break;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		cli_put(f, " %s%s", rec->u.sw.out ? "OUT" : "IN",
		    rec->u.sw.out && rec->u.sw.preempt ? " preempt" : "");
		if (rec->u.sw.cpu_wide)
			cli_put(f, " %s %d/%d", rec->u.sw.out ? "next" : "prev",
			    (int32_t)rec->u.sw.next_prev_pid,
			    (int32_t)rec->u.sw.next_prev_tid);
		break;
	case PERF_RECORD_KSYMBOL:
		cli_put(f, " 0x%" PRIx64 " len %u type %u ",
		    rec->u.ksymbol.addr, rec->u.ksymbol.len,
		    rec->u.ksymbol.ksym_type);
		put_str(f, rec->u.ksymbol.name);
		break;
	case PERF_RECORD_TEXT_POKE:
		cli_put(f, " 0x%" PRIx64 " old_len %u new_len %u",
		    rec->u.text_poke.addr, rec->u.text_poke.old_len,
		    rec->u.text_poke.new_len);
		break;
	case HWT_PD_AUXTRACE:
		cli_put(f, " size 0x%" PRIx64 " offset 0x%" PRIx64
		    " ref 0x%" PRIx64 " idx %u tid %d cpu %d",
		    rec->u.auxtrace.size, rec->u.auxtrace.offset,
		    rec->u.auxtrace.reference, rec->u.auxtrace.idx,
		    (int32_t)rec->u.auxtrace.tid, (int32_t)rec->u.auxtrace.cpu);
		break;
	case HWT_PD_AUXTRACE_INFO:
		name = hwt_pd_auxtrace_name(rec->u.auxtrace_info.type);
		cli_put(f, " type %u %s", rec->u.auxtrace_info.type,
		    name ? name : "unknown");
		break;
	case HWT_PD_AUXTRACE_ERROR: {
		const struct hwt_pd_auxtrace_error *e = &rec->u.auxtrace_error;

		cli_put(f, " type %u code %u cpu %d pid %d tid %d ip 0x%" PRIx64
		    " ", e->type, e->code, (int32_t)e->cpu, (int32_t)e->pid,
		    (int32_t)e->tid, e->ip);
		put_str(f, e->msg);
		break;
	}
	case HWT_PD_TIME_CONV:
		cli_put(f, " time_shift %" PRIu64 " time_mult %" PRIu64
		    " time_zero %" PRIu64, rec->u.time_conv.time_shift,
		    rec->u.time_conv.time_mult, rec->u.time_conv.time_zero);
		break;
	default:
		break;
	}
}

/* A record the options choose (its thread, CPU, time): as perf script's
 * --pid, --tid, --cpu and --time choose its sideband events. */
static int sb_chosen(const struct cli_select *sel,
		     const struct hwt_pd_record *rec, int has_time,
		     uint64_t time)
{
	uint32_t pid = 0, tid = 0;
	int have_task = record_task(rec, &pid, &tid);

	return cli_select_task(sel, have_task, (uint64_t)pid << 32 | tid) &&
	       cli_select_cpu(sel, !!(rec->sid.present & HWT_PD_SID_CPU),
			      rec->sid.cpu) &&
	       cli_select_ns(sel, has_time, time);
}

static int sb_add(struct sb_state *st, const struct hwt_pd_record *rec,
		  uint64_t seq, const struct cli_select *sel)
{
	struct cli_text f;
	struct sb_line *l;
	const char *name = hwt_pd_record_name(rec->type);
	uint32_t pid, tid;
	int has_time = !!(rec->sid.present & HWT_PD_SID_TIME);
	uint64_t time = rec->sid.time;

	/* An AUXTRACE_ERROR has no sample id but a time of its own. */
	if (!has_time && rec->type == HWT_PD_AUXTRACE_ERROR &&
	    rec->u.auxtrace_error.time) {
		has_time = 1;
		time = rec->u.auxtrace_error.time;
	}
	if (!sb_chosen(sel, rec, has_time, time))
		return 0;
	f.len = 0;
	if (has_time)
		cli_put(&f, "%5" PRIu64 ".%06" PRIu64, time / 1000000000u,
		    time % 1000000000u / 1000u);
	else
		cli_put(&f, "%12s", "-");
	if (rec->sid.present & HWT_PD_SID_CPU)
		cli_put(&f, " %u", rec->sid.cpu);
	else
		cli_put(&f, " -");
	if (record_task(rec, &pid, &tid))
		cli_put(&f, " %d/%d", (int32_t)pid, (int32_t)tid);
	else
		cli_put(&f, " -/-");
	if (name)
		cli_put(&f, " %s", name);
	else
		cli_put(&f, " PERF_RECORD_%u", rec->type);
	put_details(&f, rec);
	cli_put(&f, "\n");

	if (hwt_grow((void **)&st->lines, &st->caplines, st->nlines + 1,
		 sizeof(*st->lines)) ||
	    hwt_grow((void **)&st->text, &st->captext, st->ntext + f.len, 1))
		return -1;
	memcpy(st->text + st->ntext, f.buf, f.len);
	l = &st->lines[st->nlines++];
	l->time = time;
	l->has_time = has_time;
	l->seq = seq;
	l->off = st->ntext;
	l->len = f.len;
	st->ntext += f.len;
	return 0;
}

static int line_cmp(const void *a, const void *b)
{
	const struct sb_line *x = a, *y = b;

	if (x->has_time != y->has_time)
		return x->has_time < y->has_time ? -1 : 1;
	if (x->has_time && x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int cmd_sideband(int argc, char **argv)
{
	enum { OPT_HELP = 256, OPT_FILE_ORDER, OPT_PID, OPT_TID, OPT_TIME };
	static const struct option long_opts[] = {
		{ "help", no_argument, NULL, OPT_HELP },
		{ "file-order", no_argument, NULL, OPT_FILE_ORDER },
		{ "pid", required_argument, NULL, OPT_PID },
		{ "tid", required_argument, NULL, OPT_TID },
		{ "cpus", required_argument, NULL, 'C' },
		{ "time-range", required_argument, NULL, OPT_TIME },
		{ NULL, 0, NULL, 0 },
	};
	struct sb_state st = { 0 };
	struct cli_select sel = { 0 };
	struct hwt_pd_reader *r = NULL;
	struct hwt_pd_record rec;
	struct cli_out out;
	char err[512];
	uint64_t seq = 0;
	int c, ret, file_order = 0, status = 0;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hC:", long_opts, NULL)) != -1) {
		switch (c) {
		case 'h':
		case OPT_HELP:
			help_sideband();
			cli_select_free(&sel);
			return 0;
		case OPT_PID:
		case OPT_TID:
		case OPT_TIME:
		case 'C':
			if (cli_select_parse(&sel, "hwt sideband",
					     c == 'C' ? "-C" :
					     c == OPT_PID ? "--pid" :
					     c == OPT_TID ? "--tid" :
					     "--time-range", optarg) < 0) {
				cli_select_free(&sel);
				return 2;
			}
			break;
		case OPT_FILE_ORDER:
			file_order = 1;
			break;
		default:
			cli_bad_option("sideband", c, argv[optind - 1]);
			cli_select_free(&sel);
			return 2;
		}
	}
	if (cli_select_tsc_bounds(&sel)) {
		fprintf(stderr, "hwt sideband: --time-range: the records' times "
			"are perf's: give seconds, not a TSC\n");
		cli_select_free(&sel);
		return 2;
	}
	if (cli_one_file("sideband", argc, optind) < 0) {
		cli_select_free(&sel);
		return 2;
	}
	err[0] = '\0';
	ret = hwt_pd_open(&r, argv[optind], err, sizeof(err));
	if (ret < 0) {
		cli_pd_open_error("hwt sideband", argv[optind], err, ret);
		cli_select_free(&sel);
		return 1;
	}
	while ((ret = hwt_pd_next(r, &rec)) > 0) {
		seq++;
		if (rec.type == PERF_RECORD_SAMPLE ||
		    rec.type == HWT_PD_FINISHED_ROUND)
			continue;
		if (sb_add(&st, &rec, seq, &sel)) {
			fprintf(stderr, "hwt sideband: out of memory\n");
			status = 1;
			break;
		}
	}
	if (ret < 0) {
		cli_pd_open_error("hwt sideband", argv[optind], hwt_pd_errmsg(r), ret);
		status = 1;
	}
	if (!file_order && st.nlines)
		qsort(st.lines, st.nlines, sizeof(*st.lines), line_cmp);
	if (cli_out_init(&out, stdout) == 0) {
		for (size_t i = 0; i < st.nlines; i++)
			cli_out_write(&out, st.text + st.lines[i].off,
				      st.lines[i].len);
		cli_out_fini(&out);
		if (out.failed)
			status = 1;
	}
	hwt_pd_close(r);
	free(st.lines);
	free(st.text);
	cli_select_free(&sel);
	return status;
}

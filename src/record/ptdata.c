/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * An intel_pt perf.data file as `perf record --per-thread -e intel_pt//u`
 * writes it: one attr (the intel_pt event, which also carries the
 * sideband), AUXTRACE_INFO with the trace configuration and the TSC
 * conversion, then sideband records and, per buffer, PERF_RECORD_AUX
 * (where the data is in the buffer) followed by PERF_RECORD_AUXTRACE and
 * the bytes. perf's decoder reads it; so does hwt's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <hwt/proc.h>
#include <hwt/pt.h>
#include <hwt/record.h>

/* The id of the one attr: every record's sample id names it. */
#define PT_ATTR_ID 42

struct hwt_rec_pt {
	struct hwt_pd_writer *w;
	uint32_t cpu;		/* of the sideband's sample ids */
	uint64_t info[HWT_PD_PT_INFO_NR];
	char **bid_paths;	/* paths already in HEADER_BUILD_ID */
	size_t nbid_paths;
	char errmsg[384];
};

void hwt_rec_pt_scan(const uint8_t *trace, size_t size,
		     struct hwt_rec_pt_scan *scan)
{
	const uint8_t *pos = trace, *end = trace + size;
	struct hwt_pt_packet pkt;

	memset(scan, 0, sizeof(*scan));
	for (; (pos = hwt_pt_scan_next(pos, end, &pkt, &scan->nbad));
	     pos += pkt.size) {
		switch (pkt.type) {
		case HWT_PT_TSC:
			if (!scan->have_tsc)
				scan->first_tsc = pkt.u.tsc;
			scan->have_tsc = 1;
			scan->last_tsc = pkt.u.tsc;
			break;
		case HWT_PT_MTC:
			scan->have_mtc = 1;
			break;
		case HWT_PT_CYC:
			scan->have_cyc = 1;
			break;
		case HWT_PT_PSB:
			scan->npsb++;
			break;
		case HWT_PT_OVF:
			scan->novf++;
			break;
		default:
			break;
		}
	}
}

uint32_t hwt_rec_pt_pmu_type(uint32_t fallback)
{
	FILE *f = fopen("/sys/bus/event_source/devices/intel_pt/type", "r");
	unsigned t = fallback;

	if (f) {
		if (fscanf(f, "%u", &t) != 1)
			t = fallback;
		fclose(f);
	}
	return t;
}

void hwt_rec_pt_config_init(struct hwt_rec_pt_config *c)
{
	memset(c, 0, sizeof(*c));
	c->pmu_type = hwt_rec_pt_pmu_type(8);
	c->config = HWT_REC_PT_CFG_PT | HWT_REC_PT_CFG_BRANCH |
		    HWT_REC_PT_CFG_TSC |
		    3ull << HWT_REC_PT_CFG_PSB_PERIOD_SHIFT;
	c->event_name = "intel_pt//u";
	c->time_shift = 31;
	c->time_mult = (uint64_t)(((unsigned __int128)1000000000u << 31) /
				  2400000000u);
	c->tsc_ctc_n = 2;
	c->tsc_ctc_d = 1;
	c->max_nonturbo_ratio = 24;
	c->cpu = -1;
}

static int fail(struct hwt_rec_pt *w, int ret)
{
	snprintf(w->errmsg, sizeof(w->errmsg), "%s",
		 hwt_pd_writer_errmsg(w->w));
	return ret;
}

/* The sample id every record carries: the attr's, at @time. */
static void sid(struct hwt_rec_pt *w, struct hwt_pd_record *rec,
		uint64_t time, uint32_t pid, uint32_t tid)
{
	rec->sid.pid = pid;
	rec->sid.tid = tid;
	rec->sid.time = time;
	rec->sid.id = PT_ATTR_ID;
	rec->sid.cpu = w->cpu;
}

static int put(struct hwt_rec_pt *w, const struct hwt_pd_record *rec)
{
	int ret = hwt_pd_write(w->w, rec);

	return ret < 0 ? fail(w, ret) : 0;
}

void hwt_rec_pt_set_features(struct hwt_pd_writer *pw,
			     const struct hwt_rec_pt_config *c)
{
	const struct { enum hwt_pd_feature f; const char *s; } str[] = {
		{ HWT_PD_FEAT_HOSTNAME, c->hostname },
		{ HWT_PD_FEAT_OSRELEASE, c->osrelease },
		{ HWT_PD_FEAT_VERSION, c->version },
		{ HWT_PD_FEAT_ARCH, c->arch },
		{ HWT_PD_FEAT_CPUDESC, c->cpudesc },
		{ HWT_PD_FEAT_CPUID, c->cpuid },
	};

	for (size_t i = 0; i < sizeof(str) / sizeof(str[0]); i++)
		if (str[i].s)
			hwt_pd_writer_set_string(pw, str[i].f, str[i].s);
	if (c->nr_cpus_avail)
		hwt_pd_writer_set_nrcpus(pw, c->nr_cpus_avail,
					 c->nr_cpus_online);
	if (c->argc && c->argv)
		hwt_pd_writer_set_cmdline(pw, c->argc, c->argv);
}

/* perf's priv words; the *_BIT ones are config masks, not bit numbers
 * (perf tests `config & word`, and finds the MTC period in its mask). */
static void info_words(uint64_t *p, const struct hwt_rec_pt_config *c,
		       size_t filter_len)
{
	p[HWT_PD_PT_PMU_TYPE] = c->pmu_type;
	p[HWT_PD_PT_TIME_SHIFT] = c->time_shift;
	p[HWT_PD_PT_TIME_MULT] = c->time_mult;
	p[HWT_PD_PT_TIME_ZERO] = c->time_zero;
	p[HWT_PD_PT_CAP_USER_TIME_ZERO] = 1;
	p[HWT_PD_PT_TSC_BIT] = HWT_REC_PT_CFG_TSC;
	p[HWT_PD_PT_NORETCOMP_BIT] = HWT_REC_PT_CFG_NORETCOMP;
	p[HWT_PD_PT_HAVE_SCHED_SWITCH] = 0;
	p[HWT_PD_PT_SNAPSHOT_MODE] = c->snapshot;
	p[HWT_PD_PT_PER_CPU_MMAPS] = c->cpu >= 0;
	p[HWT_PD_PT_MTC_BIT] = HWT_REC_PT_CFG_MTC;
	p[HWT_PD_PT_MTC_FREQ_BITS] = 0xfull << HWT_REC_PT_CFG_MTC_PERIOD_SHIFT;
	p[HWT_PD_PT_TSC_CTC_N] = c->tsc_ctc_n;
	p[HWT_PD_PT_TSC_CTC_D] = c->tsc_ctc_d;
	p[HWT_PD_PT_CYC_BIT] = HWT_REC_PT_CFG_CYC;
	p[HWT_PD_PT_MAX_NONTURBO_RATIO] = c->max_nonturbo_ratio;
	p[HWT_PD_PT_FILTER_STR_LEN] = filter_len;
}

static int put_info(struct hwt_rec_pt *w, const struct hwt_rec_pt_config *c)
{
	size_t flen = c->filter ? strlen(c->filter) : 0;
	/* The filter string follows the words, NUL-padded to 8 bytes. */
	size_t nwords = HWT_PD_PT_INFO_NR + (flen ? flen / 8 + 1 : 0);
	struct hwt_pd_record rec;
	uint64_t *priv = calloc(nwords, sizeof(*priv));
	int ret;

	if (!priv)
		return -HWT_ERR_NOMEM;
	info_words(priv, c, flen);
	memcpy(w->info, priv, sizeof(w->info));
	if (flen)
		memcpy(priv + HWT_PD_PT_INFO_NR, c->filter, flen);
	memset(&rec, 0, sizeof(rec));
	rec.type = HWT_PD_AUXTRACE_INFO;
	rec.u.auxtrace_info.type = HWT_PD_AUXTRACE_INTEL_PT;
	rec.u.auxtrace_info.priv = priv;
	rec.u.auxtrace_info.npriv = nwords;
	ret = put(w, &rec);
	free(priv);
	return ret;
}

int hwt_rec_pt_new(struct hwt_rec_pt **out, const char *path,
		   const struct hwt_rec_pt_config *c, char *err,
		   size_t errlen)
{
	uint64_t id = PT_ATTR_ID;
	struct perf_event_attr attr;
	struct hwt_rec_pt *w;
	int ret;

	*out = NULL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -HWT_ERR_NOMEM;
	ret = hwt_pd_writer_new(&w->w, path, err, errlen);
	if (ret < 0) {
		free(w);
		return ret;
	}
	w->cpu = c->cpu >= 0 ? (uint32_t)c->cpu : 0;

	/* As perf record sets it up: the event is also the sideband's. */
	memset(&attr, 0, sizeof(attr));
	attr.type = c->pmu_type;
	attr.size = sizeof(attr);
	attr.config = c->config;
	attr.sample_period = 1;
	attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			   PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			   PERF_SAMPLE_IDENTIFIER;
	attr.read_format = PERF_FORMAT_ID;
	attr.disabled = 1;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	attr.enable_on_exec = 1;
	attr.sample_id_all = 1;
	attr.mmap = 1;
	attr.mmap2 = 1;
	attr.comm = 1;
	attr.comm_exec = 1;
	attr.task = 1;
	attr.context_switch = c->context_switch;
	ret = hwt_pd_writer_add_attr(w->w, &attr, &id, 1, c->event_name);
	if (ret < 0) {
		fail(w, ret);
	} else {
		hwt_rec_pt_set_features(w->w, c);
		ret = put_info(w, c);
	}
	if (ret < 0) {
		snprintf(err, errlen, "%s", w->errmsg[0] ? w->errmsg :
			 hwt_errstr(ret));
		hwt_rec_pt_close(w, NULL, 0);
		return ret;
	}
	*out = w;
	return 0;
}

const uint64_t *hwt_rec_pt_info_words(const struct hwt_rec_pt *w)
{
	return w->info;
}

const char *hwt_rec_pt_errmsg(const struct hwt_rec_pt *w)
{
	return w->errmsg;
}

int hwt_rec_pt_comm(struct hwt_rec_pt *w, uint64_t time, uint32_t pid,
		    uint32_t tid, const char *comm, int exec)
{
	struct hwt_pd_record rec;

	memset(&rec, 0, sizeof(rec));
	rec.type = PERF_RECORD_COMM;
	rec.misc = PERF_RECORD_MISC_USER;
	rec.u.comm.pid = pid;
	rec.u.comm.tid = tid;
	rec.u.comm.comm = comm;
	rec.u.comm.exec = (uint8_t)!!exec;
	sid(w, &rec, time, pid, tid);
	return put(w, &rec);
}

static int task(struct hwt_rec_pt *w, uint32_t type, uint64_t time,
		uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid)
{
	struct hwt_pd_record rec;

	memset(&rec, 0, sizeof(rec));
	rec.type = type;
	rec.u.task = (struct hwt_pd_task){ pid, ppid, tid, ptid, time };
	sid(w, &rec, time, pid, tid);
	return put(w, &rec);
}

int hwt_rec_pt_fork(struct hwt_rec_pt *w, uint64_t time, uint32_t pid,
		    uint32_t ppid, uint32_t tid, uint32_t ptid)
{
	return task(w, PERF_RECORD_FORK, time, pid, ppid, tid, ptid);
}

int hwt_rec_pt_exit(struct hwt_rec_pt *w, uint64_t time, uint32_t pid,
		    uint32_t ppid, uint32_t tid, uint32_t ptid)
{
	return task(w, PERF_RECORD_EXIT, time, pid, ppid, tid, ptid);
}

int hwt_rec_pt_itrace_start(struct hwt_rec_pt *w, uint64_t time,
			    uint32_t pid, uint32_t tid)
{
	struct hwt_pd_record rec;

	memset(&rec, 0, sizeof(rec));
	rec.type = PERF_RECORD_ITRACE_START;
	rec.u.itrace_start.pid = pid;
	rec.u.itrace_start.tid = tid;
	sid(w, &rec, time, pid, tid);
	return put(w, &rec);
}

int hwt_rec_pt_lost(struct hwt_rec_pt *w, uint64_t time, uint32_t pid,
		    uint32_t tid, uint64_t lost)
{
	struct hwt_pd_record rec;

	memset(&rec, 0, sizeof(rec));
	rec.type = PERF_RECORD_LOST;
	rec.u.lost.lost = lost;
	sid(w, &rec, time, pid, tid);
	return put(w, &rec);
}

int hwt_rec_pt_switch(struct hwt_rec_pt *w, uint64_t time, uint32_t pid,
		      uint32_t tid, int out)
{
	struct hwt_pd_record rec;

	memset(&rec, 0, sizeof(rec));
	rec.type = PERF_RECORD_SWITCH;
	rec.u.sw.out = (uint8_t)!!out;
	sid(w, &rec, time, pid, tid);
	return put(w, &rec);
}

void hwt_rec_pt_set_cpu(struct hwt_rec_pt *w, uint32_t cpu)
{
	w->cpu = cpu;
}

int hwt_rec_pt_round(struct hwt_rec_pt *w)
{
	struct hwt_pd_record rec;

	memset(&rec, 0, sizeof(rec));
	rec.type = HWT_PD_FINISHED_ROUND;
	return put(w, &rec);
}

/* HEADER_BUILD_ID names each file once. */
static int add_build_id(struct hwt_rec_pt *w, const char *path,
			const uint8_t id[20], uint8_t size)
{
	struct hwt_pd_build_id bid = { .pid = -1, .size = size };
	char **n;
	int ret;

	for (size_t i = 0; i < w->nbid_paths; i++)
		if (!strcmp(w->bid_paths[i], path))
			return 0;
	n = realloc(w->bid_paths, (w->nbid_paths + 1) * sizeof(*n));
	if (!n)
		return -HWT_ERR_NOMEM;
	w->bid_paths = n;
	n[w->nbid_paths] = strdup(path);
	if (!n[w->nbid_paths])
		return -HWT_ERR_NOMEM;
	w->nbid_paths++;
	memcpy(bid.id, id, 20);
	bid.filename = path;
	ret = hwt_pd_writer_add_build_id(w->w, &bid);
	return ret < 0 ? fail(w, ret) : 0;
}

int hwt_rec_pt_mmap(struct hwt_rec_pt *w, uint64_t time, uint32_t pid,
		    uint32_t tid, const struct hwt_rec_pt_map *m)
{
	struct hwt_pd_record rec;
	struct hwt_pd_mmap *mm = &rec.u.mmap;
	struct stat st;
	int ret;

	memset(&rec, 0, sizeof(rec));
	rec.type = PERF_RECORD_MMAP2;
	rec.misc = PERF_RECORD_MISC_USER;
	mm->pid = pid;
	mm->tid = tid;
	mm->start = m->start;
	mm->len = m->len;
	mm->pgoff = m->pgoff;
	mm->prot = m->prot;
	mm->flags = m->flags;
	mm->is_mmap2 = 1;
	mm->filename = m->path;
	if (m->path[0] == '/' && m->path[1] != '/') {
		/* (Its own length, as perf records it: perf script and
		 * the build-id cache name it so.) */
		ret = hwt_image_build_id(m->path, mm->build_id);
		if (ret > 0) {
			mm->build_id_size = (uint8_t)ret;
			ret = add_build_id(w, m->path, mm->build_id,
					   mm->build_id_size);
			if (ret < 0)
				return ret;
		} else if (!stat(m->path, &st)) {
			mm->maj = major(st.st_dev);
			mm->min = minor(st.st_dev);
			mm->ino = st.st_ino;
		}
	}
	sid(w, &rec, time, pid, tid);
	return put(w, &rec);
}

int hwt_rec_pt_trace(struct hwt_rec_pt *w, const struct hwt_rec_pt_aux *a)
{
	size_t done = 0;
	int n = 0, ret;

	do {
		size_t len = a->size - done;
		struct hwt_pd_record rec;

		if (len > HWT_REC_PT_CHUNK)
			len = HWT_REC_PT_CHUNK;
		memset(&rec, 0, sizeof(rec));
		rec.type = PERF_RECORD_AUX;
		rec.u.aux.aux_offset = a->offset + done;
		rec.u.aux.aux_size = len;
		rec.u.aux.flags = a->flags;
		sid(w, &rec, a->time, a->pid, a->tid);
		if (a->cpu >= 0)
			rec.sid.cpu = (uint32_t)a->cpu;
		ret = put(w, &rec);
		if (ret < 0)
			return ret;

		memset(&rec, 0, sizeof(rec));
		rec.type = HWT_PD_AUXTRACE;
		rec.u.auxtrace.size = len;
		rec.u.auxtrace.offset = a->offset + done;
		/* Never 0: perf 6.1 crashes on a reference of 0. */
		rec.u.auxtrace.reference = a->reference ? a->reference :
			((uint64_t)a->idx + 1) << 40 | (a->offset + done);
		rec.u.auxtrace.idx = a->idx;
		rec.u.auxtrace.tid = a->tid;
		rec.u.auxtrace.cpu = (uint32_t)a->cpu;
		rec.u.auxtrace.data = a->data + done;
		ret = put(w, &rec);
		if (ret < 0)
			return ret;
		done += len;
		n++;
	} while (done < a->size);
	return n;
}

int hwt_rec_pt_add_exit(struct hwt_rec_pt *w, const struct hwt_pd_exit *e)
{
	int ret = hwt_pd_writer_add_exit(w->w, e);

	return ret < 0 ? fail(w, ret) : 0;
}

int hwt_rec_pt_close(struct hwt_rec_pt *w, char *err, size_t errlen)
{
	int ret;

	if (!w)
		return 0;
	ret = hwt_pd_writer_close(w->w, err, errlen);
	for (size_t i = 0; i < w->nbid_paths; i++)
		free(w->bid_paths[i]);
	free(w->bid_paths);
	free(w);
	return ret;
}

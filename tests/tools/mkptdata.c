/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mkptdata: pack a raw Intel PT trace and the ELF it ran into a perf.data
 * file as `perf record --per-thread -e intel_pt//u -- PROG` writes it, with
 * hwt's perf.data writer. For tests only: `perf script --itrace=b` is an
 * independent decoder of our traces, and perf's acceptance of the file is
 * the check of the writer.
 *
 *   mkptdata [options] --pt TRACE --elf PROG OUT.data
 *     --load ADDR     where PROG's first segment is mapped (default: its
 *                     own addresses, right for non-PIE executables)
 *     --pid N --tid N --comm NAME   (1234, the pid, PROG's base name)
 *     --tsc-hz N      TSC frequency for the time conversion (2.4 GHz)
 *     --time-zero NS  perf time at TSC 0 (0)
 *     --tsc-ctc N:D   TSC:CTC ratio of MTC/TMA timing (2:1)
 *     --cpu N         the CPU of the AUXTRACE record and the sideband;
 *                     -1 (default): per-thread buffers
 *     --switch PID:ELF:N   with --cpu: a second process PID running ELF
 *                     (mapped as PROG is), and N context switches that
 *                     hand the CPU to it and back, evenly over the
 *                     trace's time (the trace is the same code's, so it
 *                     decodes in either process)
 *     --thread TID:N  with --cpu: as --switch, to a second thread TID of
 *                     the same process
 *     --cpu2 N:PID:TID:TRACE  with --cpu: a second CPU N's buffer, TRACE,
 *                     run by thread TID of PID (PID the first's: a thread
 *                     of its process; else a process running PROG, mapped
 *                     as PROG is), all the trace's time
 *     --move K        with --cpu N: the thread moves from CPU to CPU: the
 *                     trace cut at K - 1 PSBs (the first at or after each
 *                     K-th of it) into K parts, part i in the buffer of
 *                     CPU N + i, with the switches out of the CPU before
 *                     and into this one just before the part's first TSC
 *     --remap ELF     PROG's code mapped again from ELF (the same code
 *                     under other names) halfway through the trace's time
 *     --exit PID:SIG:X  how process PID ended (hwt's HWT_EXIT feature):
 *                     SIG 0: exited with status X; else killed by signal
 *                     SIG at instruction X (up to two of them)
 *     --losses N      lost data at N places: the trace in N + 1 AUX
 *                     records, all but the first PARTIAL (notes placed
 *                     by trace offset), and N LOST records evenly over
 *                     the trace's time (placed by time)
 *     --pmu-type N    intel_pt's PMU type (default: sysfs, else 8)
 *     --cpuid STR     the CPUID feature ("GenuineIntel,6,142,10")
 *     --show          print the records as perf script -D must show them
 *                     (see --all-records)
 *
 *   mkptdata --all-records OUT.data
 *     one record of every type the writer encodes, no trace; prints what
 *     it wrote, one line per record, for tests/cli/perfdata_writer.sh to
 *     compare with perf's view of the file.
 *
 * The attr's config has the TSC, MTC and CYC bits of the packets the
 * trace holds, so that perf's decoder expects what it finds.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <hwt/perfdata.h>
#include <hwt/record.h>

struct opts {
	const char *pt, *elf, *out, *comm, *cpuid;
	uint64_t load;
	int have_load;
	uint32_t pid, tid;
	int have_tid;
	uint64_t tsc_hz, time_zero;
	uint64_t tsc_ctc_n, tsc_ctc_d;
	int32_t cpu;
	uint32_t pmu_type;
	int all_records;
	char sw_elf[PATH_MAX];	/* --switch */
	uint32_t sw_pid, sw_n;
	uint32_t sw_tid;	/* --thread: the pid's */
	char c2_pt[PATH_MAX];	/* --cpu2 */
	uint32_t c2_cpu, c2_pid, c2_tid;
	int have_c2;
	uint64_t losses;	/* --losses */
	uint32_t move;		/* --move: parts */
	const char *remap;	/* --remap */
	struct hwt_pd_exit exits[2];	/* --exit */
	size_t nexits;
	FILE *show;	/* where the records go as perf must show them */
};

static int die(const char *fmt, const char *arg)
{
	fprintf(stderr, "mkptdata: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n");
	return 1;
}

static int num(const char *s, uint64_t *v)
{
	char *end;

	if (!s || !*s)
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return (errno || *end) ? -1 : 0;
}

static uint8_t *load_file(const char *path, size_t *len)
{
	struct stat st;
	uint8_t *p;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t done = 0;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || st.st_size <= 0) {
		close(fd);
		return NULL;
	}
	p = malloc((size_t)st.st_size);
	while (p && done < (size_t)st.st_size) {
		ssize_t k = read(fd, p + done, (size_t)st.st_size - done);

		if (k <= 0) {
			free(p);
			p = NULL;
			break;
		}
		done += (size_t)k;
	}
	close(fd);
	*len = done;
	return p;
}

/* The recording machine, as the tests expect it. */
static void features(struct hwt_rec_pt_config *c, const char *cpuid,
		     int argc, char **argv)
{
	c->hostname = "hwt-test";
	c->osrelease = "6.1.0-hwt";
	c->version = "6.1.hwt";
	c->arch = "x86_64";
	c->nr_cpus_avail = 4;
	c->nr_cpus_online = 4;
	c->cpudesc = "Intel(R) Core(TM) i7-8650U CPU @ 1.90GHz";
	c->cpuid = cpuid;
	c->argc = argc;
	c->argv = (const char *const *)argv;
}

/* What perf script -D must show of a record: see write_all_records(). */
static void show(FILE *f, const struct hwt_pd_record *rec)
{
	const char *name = hwt_pd_record_name(rec->type);

	if (rec->type < HWT_PD_HEADER_ATTR)
		fprintf(f, "%s\t%u %llu %u/%u", name ? name : "?", rec->sid.cpu,
		       (unsigned long long)rec->sid.time, rec->sid.pid,
		       rec->sid.tid);
	else
		fprintf(f, "%s\t0 0", name ? name : "?");
}

static int check(struct hwt_rec_pt *w, int ret)
{
	if (ret < 0) {
		fprintf(stderr, "mkptdata: %s (%s)\n", hwt_errstr(ret),
			hwt_rec_pt_errmsg(w));
		return -1;
	}
	return 0;
}

/* ---- the intel_pt file ---- */

/* The start of a record's line for --show (@type 0: FINISHED_ROUND). */
static void show_pt(const struct opts *o, uint32_t type, uint64_t time)
{
	struct hwt_pd_record rec;

	memset(&rec, 0, sizeof(rec));
	rec.type = type ? type : HWT_PD_FINISHED_ROUND;
	rec.sid.pid = o->pid;
	rec.sid.tid = o->tid;
	rec.sid.time = time;
	rec.sid.cpu = o->cpu >= 0 ? (uint32_t)o->cpu : 0;
	show(o->show, &rec);
	if (!type)
		fprintf(o->show, "\n");
}

/*
 * The executable PT_LOAD segments of @elf as MMAP2 records, the way the
 * kernel reports a file mapping: page-aligned start and page offset.
 */
static int put_mmaps(struct hwt_rec_pt *w, const struct opts *o,
		     uint64_t time, int *nmaps)
{
	char path[PATH_MAX];
	const Elf64_Ehdr *eh;
	const Elf64_Phdr *ph;
	uint64_t bias = 0, low = UINT64_MAX;
	uint8_t *img;
	size_t len;
	int ret = 0;

	*nmaps = 0;
	if (!realpath(o->elf, path))
		return die("%s: cannot open", o->elf), -1;
	img = load_file(path, &len);
	if (!img)
		return die("%s: cannot read", o->elf), -1;
	eh = (const void *)img;
	if (len < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_phentsize != sizeof(*ph) ||
	    eh->e_phoff > len ||
	    (len - eh->e_phoff) / sizeof(*ph) < eh->e_phnum) {
		free(img);
		return die("%s: not a 64-bit ELF file", o->elf), -1;
	}
	ph = (const void *)(img + eh->e_phoff);
	for (unsigned i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_vaddr < low)
			low = ph[i].p_vaddr & ~0xfffull;
	if (o->have_load && low != UINT64_MAX)
		bias = o->load - low;
	for (unsigned i = 0; i < eh->e_phnum && !ret; i++) {
		struct hwt_rec_pt_map m = { 0 };

		if (ph[i].p_type != PT_LOAD || !(ph[i].p_flags & PF_X))
			continue;
		m.start = (ph[i].p_vaddr & ~0xfffull) + bias;
		m.len = ((ph[i].p_vaddr + ph[i].p_memsz + 0xfff) & ~0xfffull) +
			bias - m.start;
		m.pgoff = ph[i].p_offset & ~0xfffull;
		m.prot = PROT_READ | PROT_EXEC;
		m.flags = MAP_PRIVATE;
		m.path = path;
		ret = check(w, hwt_rec_pt_mmap(w, time, o->pid, o->tid, &m));
		show_pt(o, PERF_RECORD_MMAP2, time);
		fprintf(o->show, "\t%u/%u:\t[%#llx(%#llx) @ %#llx\tr-xp %s\n",
			o->pid, o->tid, (unsigned long long)m.start,
			(unsigned long long)m.len,
			(unsigned long long)m.pgoff, path);
		(*nmaps)++;
	}
	free(img);
	return ret;
}

/* --switch: the second process, then the switches between the two. */
static int put_switches(struct hwt_rec_pt *w, const struct opts *o,
			uint64_t t_start, const struct hwt_pd_time_conv *tc,
			const struct hwt_rec_pt_scan *ti)
{
	struct opts b = *o;
	uint64_t first = hwt_pd_tsc_to_perf_time(tc, ti->first_tsc);
	uint64_t last = hwt_pd_tsc_to_perf_time(tc, ti->last_tsc);
	int nmaps;

	if (o->sw_tid) {
		b.tid = o->sw_tid;
		if (check(w, hwt_rec_pt_comm(w, t_start, b.pid, b.tid,
					     "second", 0)))
			return -1;
	} else {
		b.pid = b.tid = o->sw_pid;
		b.elf = o->sw_elf;
		if (check(w, hwt_rec_pt_comm(w, t_start, b.pid, b.tid,
					     "second", 1)) ||
		    put_mmaps(w, &b, t_start, &nmaps))
			return -1;
	}
	for (uint32_t k = 1; k <= o->sw_n; k++) {
		uint64_t t = first + (last - first) / (o->sw_n + 1) * k;
		const struct opts *from = k % 2 ? o : &b, *to = k % 2 ? &b : o;

		if (check(w, hwt_rec_pt_switch(w, t, from->pid, from->tid, 1)) ||
		    check(w, hwt_rec_pt_switch(w, t, to->pid, to->tid, 0)))
			return -1;
		show_pt(from, PERF_RECORD_SWITCH, t);
		fprintf(o->show, "	SWITCH OUT\n");
		show_pt(to, PERF_RECORD_SWITCH, t);
		fprintf(o->show, "	SWITCH IN\n");
	}
	return 0;
}

/* --cpu2: the thread on the second CPU, from the start. */
static int put_cpu2(struct hwt_rec_pt *w, const struct opts *o,
		    const struct opts *b, uint64_t t_start)
{
	int same = b->pid == o->pid, nmaps, ret;

	hwt_rec_pt_set_cpu(w, (uint32_t)b->cpu);
	ret = check(w, hwt_rec_pt_comm(w, t_start, b->pid, b->tid, "second",
				       !same));
	show_pt(b, PERF_RECORD_COMM, t_start);
	fprintf(o->show, "\t%ssecond:%u/%u\n", same ? "" : "exec: ",
		b->pid, b->tid);
	if (!ret && !same)
		ret = put_mmaps(w, b, t_start, &nmaps);
	if (!ret)
		ret = check(w, hwt_rec_pt_itrace_start(w, t_start, b->pid,
						       b->tid));
	show_pt(b, PERF_RECORD_ITRACE_START, t_start);
	fprintf(o->show, "\tpid: %u tid: %u\n", b->pid, b->tid);
	hwt_rec_pt_set_cpu(w, (uint32_t)o->cpu);
	return ret;
}

/* --move: at most this many parts. */
#define MOVE_MAX 16

/*
 * --move: where the parts start (@parts[0] 0, @parts[n] @tlen): cut at the
 * first PSB at or after each @k-th of the trace, past the cut before.
 * Returns the number of parts (fewer if the PSBs are too few).
 */
static size_t cut_parts(const uint8_t *trace, size_t tlen, uint32_t k,
			size_t *parts)
{
	static const uint8_t psb[16] = { 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
					 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
					 0x02, 0x82, 0x02, 0x82 };
	size_t n = 0, at;

	parts[n++] = 0;
	for (uint32_t i = 1; i < k; i++) {
		at = tlen / k * i;
		if (at <= parts[n - 1])
			at = parts[n - 1] + 1;
		while (at + sizeof(psb) <= tlen &&
		       memcmp(trace + at, psb, sizeof(psb)))
			at++;
		if (at + sizeof(psb) > tlen)
			break;
		parts[n++] = at;
	}
	parts[n] = tlen;
	return n;
}

/* --move: the thread leaves CPU cpu + k - 1 for CPU cpu + k just before
 * part k's first TSC. */
static int put_moves(struct hwt_rec_pt *w, const struct opts *o,
		     const struct hwt_pd_time_conv *tc, const uint8_t *trace,
		     const size_t *parts, size_t nparts)
{
	for (size_t k = 1; k < nparts; k++) {
		struct hwt_rec_pt_scan ti;
		struct opts c = *o;
		uint64_t t;

		hwt_rec_pt_scan(trace + parts[k], parts[k + 1] - parts[k], &ti);
		if (!ti.have_tsc)
			return die("%s: --move: a part without a TSC", o->pt);
		t = hwt_pd_tsc_to_perf_time(tc, ti.first_tsc) - 1;
		c.cpu = o->cpu + (int32_t)k - 1;
		hwt_rec_pt_set_cpu(w, (uint32_t)c.cpu);
		if (check(w, hwt_rec_pt_switch(w, t, o->pid, o->tid, 1)))
			return -1;
		show_pt(&c, PERF_RECORD_SWITCH, t);
		fprintf(o->show, "	SWITCH OUT\n");
		c.cpu++;
		hwt_rec_pt_set_cpu(w, (uint32_t)c.cpu);
		if (check(w, hwt_rec_pt_switch(w, t, o->pid, o->tid, 0)))
			return -1;
		show_pt(&c, PERF_RECORD_SWITCH, t);
		fprintf(o->show, "	SWITCH IN\n");
	}
	hwt_rec_pt_set_cpu(w, (uint32_t)o->cpu);
	return 0;
}

/* The AUX and AUXTRACE records of buffer @idx, in @nchunks pieces. */
static int put_aux(struct hwt_rec_pt *w, const struct opts *o,
		   uint32_t idx, const uint8_t *trace, size_t tlen,
		   uint64_t nchunks, uint64_t t_end)
{
	struct hwt_rec_pt_aux aux = { 0 };

	aux.time = t_end;
	aux.idx = idx;
	aux.pid = o->pid;
	aux.tid = o->tid;
	aux.cpu = o->cpu;
	for (uint64_t k = 0, at = 0; k < nchunks; k++) {
		/* Anywhere but where a chunk would be padded (to 8 bytes),
		 * which would put PADs inside a packet. */
		uint64_t to = k == nchunks - 1 ? tlen :
			      (tlen / nchunks * (k + 1) + 40) & ~7ull;

		aux.offset = at;
		aux.reference = (0x1d2c3b4a5968ull ^ tlen ^ idx) + at;
		aux.data = trace + at;
		aux.size = to - at;
		aux.flags = k ? PERF_AUX_FLAG_PARTIAL : 0;
		if (check(w, hwt_rec_pt_trace(w, &aux)))
			return -1;
		show_pt(o, PERF_RECORD_AUX, t_end);
		fprintf(o->show, "\toffset: %#" PRIx64 " size: %#" PRIx64
			" flags: %#" PRIx64 "\n", at, to - at, aux.flags);
		show_pt(o, HWT_PD_AUXTRACE, 0);
		fprintf(o->show, "\tsize: %#" PRIx64 " offset: %#" PRIx64
			" ref: %#llx idx: %u tid: %u cpu: %d\n",
			(to - at + 7) & ~(uint64_t)7, at,
			(unsigned long long)aux.reference, idx, o->tid, o->cpu);
		at = to;
	}
	return 0;
}

/* The EXIT record of @o's thread, on its CPU (per thread: 0). */
static int put_exit(struct hwt_rec_pt *w, const struct opts *o,
		    uint64_t t_end)
{
	hwt_rec_pt_set_cpu(w, o->cpu >= 0 ? (uint32_t)o->cpu : 0);
	if (check(w, hwt_rec_pt_exit(w, t_end, o->pid, o->pid, o->tid,
				     o->tid)))
		return -1;
	show_pt(o, PERF_RECORD_EXIT, t_end);
	fprintf(o->show, "\t(%u:%u):(%u:%u)\n", o->pid, o->tid, o->pid, o->tid);
	return 0;
}

static int write_pt(const struct opts *o, int argc, char **argv)
{
	struct hwt_pd_time_conv tc = { 0 };
	struct hwt_rec_pt_config c;
	struct hwt_rec_pt_scan ti, ti2;
	struct hwt_rec_pt *w;
	const uint64_t *priv;
	uint64_t t_start, t_end;
	struct opts b = *o;	/* --cpu2's thread */
	size_t parts[MOVE_MAX + 1], nparts = 0;
	char err[512];
	uint8_t *trace, *trace2 = NULL;
	size_t tlen, tlen2 = 0;
	int nmaps;

	trace = load_file(o->pt, &tlen);
	if (!trace)
		return die("%s: cannot read (or empty)", o->pt);
	hwt_rec_pt_scan(trace, tlen, &ti);
	if (o->move)
		nparts = cut_parts(trace, tlen, o->move, parts);
	if (o->have_c2) {
		trace2 = load_file(o->c2_pt, &tlen2);
		if (!trace2) {
			free(trace);
			return die("%s: cannot read (or empty)", o->c2_pt);
		}
		hwt_rec_pt_scan(trace2, tlen2, &ti2);
		b.cpu = (int32_t)o->c2_cpu;
		b.pid = o->c2_pid;
		b.tid = o->c2_tid;
	}

	/* As `perf record --per-thread -e intel_pt//u` sets it up, with
	 * the packets the trace holds. */
	hwt_rec_pt_config_init(&c);
	c.pmu_type = o->pmu_type;
	c.config = HWT_REC_PT_CFG_PT | HWT_REC_PT_CFG_BRANCH |
		   3ull << HWT_REC_PT_CFG_PSB_PERIOD_SHIFT;
	if (ti.have_tsc)
		c.config |= HWT_REC_PT_CFG_TSC;
	if (ti.have_mtc)
		c.config |= HWT_REC_PT_CFG_MTC |
			    3ull << HWT_REC_PT_CFG_MTC_PERIOD_SHIFT;
	if (ti.have_cyc)
		c.config |= HWT_REC_PT_CFG_CYC;
	c.time_shift = 31;
	c.time_mult = (uint64_t)(((unsigned __int128)1000000000u << 31) /
				 o->tsc_hz);
	c.time_zero = o->time_zero;
	c.tsc_ctc_n = (uint32_t)o->tsc_ctc_n;
	c.tsc_ctc_d = (uint32_t)o->tsc_ctc_d;
	/* The bus runs at 100 MHz. */
	c.max_nonturbo_ratio = (uint32_t)(o->tsc_hz / 100000000u);
	c.cpu = o->cpu;
	features(&c, o->cpuid, argc, argv);
	if (hwt_rec_pt_new(&w, o->out, &c, err, sizeof(err)) < 0) {
		free(trace);
		free(trace2);
		return die("%s", err);
	}
	priv = hwt_rec_pt_info_words(w);
	show_pt(o, HWT_PD_AUXTRACE_INFO, 0);
	fprintf(o->show, "\ttype: 1\tPMU Type %u\tTime Shift %llu\tTime Muliplier %llu"
	       "\tTSC bit %#llx\tNoRETComp bit %#llx\tPer-cpu maps %d"
	       "\tMTC bit %#llx\tCYC bit %#llx\n", o->pmu_type,
	       (unsigned long long)priv[HWT_PD_PT_TIME_SHIFT],
	       (unsigned long long)priv[HWT_PD_PT_TIME_MULT],
	       (unsigned long long)priv[HWT_PD_PT_TSC_BIT],
	       (unsigned long long)priv[HWT_PD_PT_NORETCOMP_BIT],
	       o->cpu >= 0, (unsigned long long)priv[HWT_PD_PT_MTC_BIT],
	       (unsigned long long)priv[HWT_PD_PT_CYC_BIT]);

	/* Sideband a microsecond before the trace starts, the end one
	 * after its last timestamp. */
	tc.time_shift = c.time_shift;
	tc.time_mult = c.time_mult;
	tc.time_zero = c.time_zero;
	if (trace2 && ti2.first_tsc < ti.first_tsc)
		ti.first_tsc = ti2.first_tsc;
	if (trace2 && ti2.last_tsc > ti.last_tsc)
		ti.last_tsc = ti2.last_tsc;
	t_start = hwt_pd_tsc_to_perf_time(&tc, ti.first_tsc);
	t_end = hwt_pd_tsc_to_perf_time(&tc, ti.last_tsc) + 1000000;
	t_start = t_start > 1000 ? t_start - 1000 : 0;

	if (check(w, hwt_rec_pt_comm(w, t_start, o->pid, o->tid, o->comm, 1)))
		goto fail;
	show_pt(o, PERF_RECORD_COMM, t_start);
	fprintf(o->show, "\texec: %s:%u/%u\n", o->comm, o->pid, o->tid);

	if (put_mmaps(w, o, t_start, &nmaps))
		goto fail;
	if (!nmaps) {
		die("%s: no executable segment", o->elf);
		goto fail;
	}

	if (check(w, hwt_rec_pt_itrace_start(w, t_start, o->pid, o->tid)))
		goto fail;
	show_pt(o, PERF_RECORD_ITRACE_START, t_start);
	fprintf(o->show, "\tpid: %u tid: %u\n", o->pid, o->tid);

	if (trace2 && put_cpu2(w, o, &b, t_start))
		goto fail;
	if (nparts > 1 && put_moves(w, o, &tc, trace, parts, nparts))
		goto fail;
	if (o->sw_n && put_switches(w, o, t_start, &tc, &ti))
		goto fail;
	if (o->remap) {
		struct opts r = *o;

		r.elf = o->remap;
		if (put_mmaps(w, &r, (hwt_pd_tsc_to_perf_time(&tc,
							      ti.first_tsc) +
				      hwt_pd_tsc_to_perf_time(&tc,
							      ti.last_tsc)) / 2,
			      &nmaps))
			goto fail;
	}
	for (uint64_t k = 1; k <= o->losses; k++) {
		uint64_t first = hwt_pd_tsc_to_perf_time(&tc, ti.first_tsc);
		uint64_t last = hwt_pd_tsc_to_perf_time(&tc, ti.last_tsc);
		uint64_t t = first + (last - first) / (o->losses + 1) * k + 7;

		if (check(w, hwt_rec_pt_lost(w, t, o->pid, o->tid, k)))
			goto fail;
		show_pt(o, PERF_RECORD_LOST, t);
		fprintf(o->show, "\tlost: %" PRIu64 "\n", k);
	}

	if (check(w, hwt_rec_pt_round(w)))
		goto fail;
	show_pt(o, 0, 0);

	if (nparts > 1) {
		for (size_t k = 0; k < nparts; k++) {
			b.cpu = o->cpu + (int32_t)k;
			if (put_aux(w, &b, (uint32_t)k, trace + parts[k],
				    parts[k + 1] - parts[k], 1, t_end))
				goto fail;
		}
	} else if (put_aux(w, o, 0, trace, tlen, o->losses + 1, t_end) ||
		   (trace2 && put_aux(w, &b, 1, trace2, tlen2, 1, t_end))) {
		goto fail;
	}
	/* (A thread that moved ends on the last CPU: b is --move's there.) */
	if (nparts > 1)
		b.cpu = o->cpu + (int32_t)nparts - 1;
	if (put_exit(w, nparts > 1 ? &b : o, t_end) ||
	    (trace2 && put_exit(w, &b, t_end)))
		goto fail;

	if (check(w, hwt_rec_pt_round(w)))
		goto fail;
	show_pt(o, 0, 0);
	for (size_t k = 0; k < o->nexits; k++)
		if (check(w, hwt_rec_pt_add_exit(w, &o->exits[k])))
			goto fail;
	free(trace);
	free(trace2);
	if (hwt_rec_pt_close(w, err, sizeof(err)) < 0)
		return die("%s", err);
	return 0;
fail:
	free(trace);
	free(trace2);
	hwt_rec_pt_close(w, err, sizeof(err));
	return 1;
}

/* ---- one record of every type ---- */

enum { ID_DUMMY = 101, ID_CLOCK0 = 201, ID_CLOCK1 = 202 };

static int wcheck(int ret, const char *what)
{
	if (ret < 0) {
		fprintf(stderr, "mkptdata: %s: %s\n", what, hwt_errstr(ret));
		return -1;
	}
	return 0;
}

static int put(struct hwt_pd_writer *w, struct hwt_pd_record *rec)
{
	int ret = hwt_pd_write(w, rec);

	if (ret < 0) {
		fprintf(stderr, "mkptdata: record type %u: %s (%s)\n",
			rec->type, hwt_errstr(ret), hwt_pd_writer_errmsg(w));
		return -1;
	}
	return 0;
}

/* A sample id for @pid at @time, of the dummy attr unless @id. */
static void sid(struct hwt_pd_record *rec, uint32_t pid, uint64_t time,
		uint64_t id)
{
	rec->sid.pid = pid;
	/* The child's records come from its second thread: the trailer's
	 * tid differs from its pid, so a swap shows. */
	rec->sid.tid = pid == 200 ? 201 : pid;
	rec->sid.time = time;
	rec->sid.id = id ? id : ID_DUMMY;
	rec->sid.cpu = 1;
}

static int write_all_records(const struct opts *o, int argc, char **argv)
{
	static const uint8_t poke[6] = { 0x0f, 0x1f, 0x44, 0xe8, 0x10, 0x20 };
	uint64_t ids_dummy[1] = { ID_DUMMY };
	uint64_t ids_clock[2] = { ID_CLOCK0, ID_CLOCK1 };
	struct perf_event_attr attr;
	struct hwt_pd_writer *w;
	struct hwt_pd_record rec;
	uint64_t t = 1000000000;	/* 1 s */
	uint8_t id_index[8 + 8 + 3 * 32];
	char err[512];

	if (hwt_pd_writer_new(&w, o->out, err, sizeof(err)) < 0)
		return die("%s", err);

	/* The sideband attr `perf record -e dummy` uses, and a sampling one;
	 * both with IDENTIFIER so perf can tell their records apart. */
	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.sample_period = 1;
	attr.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |
			   PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			   PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
	attr.read_format = PERF_FORMAT_ID;
	attr.sample_id_all = 1;
	attr.mmap = attr.mmap2 = attr.comm = attr.comm_exec = 1;
	attr.task = attr.context_switch = attr.ksymbol = 1;
	attr.exclude_kernel = 1;
	if (wcheck(hwt_pd_writer_add_attr(w, &attr, ids_dummy, 1, "dummy:u"),
		  "attr"))
		goto fail;
	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.sample_period = 100000;
	attr.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |
			   PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			   PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU |
			   PERF_SAMPLE_PERIOD;
	attr.read_format = PERF_FORMAT_ID;
	attr.sample_id_all = 1;
	if (wcheck(hwt_pd_writer_add_attr(w, &attr, ids_clock, 2, "cpu-clock"),
		  "attr"))
		goto fail;
	{
		struct hwt_rec_pt_config c;

		hwt_rec_pt_config_init(&c);
		features(&c, "GenuineIntel,6,142,10", argc, argv);
		hwt_rec_pt_set_features(w, &c);
	}
	{
		struct hwt_pd_build_id bid = { .pid = -1, .size = 20,
					       .filename = "/usr/bin/hwt-test" };

		for (int i = 0; i < 20; i++)
			bid.id[i] = (uint8_t)(0xa0 + i);
		if (wcheck(hwt_pd_writer_add_build_id(w, &bid), "build id"))
			goto fail;
	}

	/* Each record as perf script -D shows it: its name, "CPU TIME
	 * PID/TID" from the sample id ("0 0" for perf's own records), then
	 * the strings its line must hold, tab-separated. */
#define PUT(...)							\
	do {								\
		if (put(w, &rec))					\
			goto fail;					\
		show(stdout, &rec);					\
		printf(__VA_ARGS__);					\
		printf("\n");						\
		memset(&rec, 0, sizeof(rec));				\
		t += 1000;						\
	} while (0)

	memset(&rec, 0, sizeof(rec));
	rec.type = PERF_RECORD_COMM;
	rec.misc = PERF_RECORD_MISC_USER;
	rec.u.comm = (struct hwt_pd_comm){ 100, 100, "parent", 1 };
	sid(&rec, 100, t, 0);
	PUT("%s", "\texec: parent:100/100");

	rec.type = PERF_RECORD_MMAP;
	rec.misc = PERF_RECORD_MISC_USER;
	rec.u.mmap.pid = 100;
	rec.u.mmap.tid = 100;
	rec.u.mmap.start = 0x400000;
	rec.u.mmap.len = 0x3000;
	rec.u.mmap.pgoff = 0;
	rec.u.mmap.filename = "/usr/bin/parent";
	sid(&rec, 100, t, 0);
	PUT("%s", "\t100/100:\t[0x400000(0x3000) @ 0]\t/usr/bin/parent");

	rec.type = PERF_RECORD_MMAP2;
	rec.misc = PERF_RECORD_MISC_USER;
	rec.u.mmap.pid = 100;
	rec.u.mmap.tid = 100;
	rec.u.mmap.start = 0x7f0000001000;
	rec.u.mmap.len = 0x20000;
	rec.u.mmap.pgoff = 0x1000;
	rec.u.mmap.maj = 8;
	rec.u.mmap.min = 1;
	rec.u.mmap.ino = 4242;
	rec.u.mmap.prot = PROT_READ | PROT_EXEC;
	rec.u.mmap.flags = MAP_PRIVATE;
	/* Seven bytes plus the NUL: no padding; the next one needs it. */
	rec.u.mmap.filename = "/lib/la";
	sid(&rec, 100, t, 0);
	PUT("%s", "\t100/100:\t[0x7f0000001000(0x20000) @ 0x1000 08:01 4242 0]\tr-xp /lib/la");

	rec.type = PERF_RECORD_MMAP2;
	rec.misc = PERF_RECORD_MISC_USER;
	rec.u.mmap.pid = 100;
	rec.u.mmap.tid = 100;
	rec.u.mmap.start = 0x7f0000100000;
	rec.u.mmap.len = 0x5000;
	rec.u.mmap.pgoff = 0;
	rec.u.mmap.prot = PROT_READ | PROT_EXEC;
	rec.u.mmap.flags = MAP_PRIVATE;
	rec.u.mmap.build_id_size = 20;
	for (int i = 0; i < 20; i++)
		rec.u.mmap.build_id[i] = (uint8_t)(0x10 + i);
	rec.u.mmap.filename = "/lib/libbuildid.so.1";
	sid(&rec, 100, t, 0);
	PUT("%s", "\t100/100:\t[0x7f0000100000(0x5000) @ 0 <101112131415161718191a1b1c1d1e1f20212223>]\tr-xp /lib/libbuildid.so.1");

	rec.type = PERF_RECORD_FORK;
	rec.u.task = (struct hwt_pd_task){ 200, 100, 200, 100, t };
	sid(&rec, 200, t, 0);
	PUT("%s", "\t(200:200):(100:100)");

	rec.type = PERF_RECORD_COMM;
	rec.misc = PERF_RECORD_MISC_USER;
	rec.u.comm = (struct hwt_pd_comm){ 200, 200, "child-name", 0 };
	sid(&rec, 200, t, 0);
	PUT("%s", "\t: child-name:200/200");

	rec.type = PERF_RECORD_ITRACE_START;
	rec.u.itrace_start = (struct hwt_pd_itrace_start){ 200, 200 };
	sid(&rec, 200, t, 0);
	PUT("%s", "\tpid: 200 tid: 200");

	rec.type = PERF_RECORD_SWITCH;
	rec.u.sw.out = 1;
	rec.u.sw.preempt = 1;
	sid(&rec, 200, t, 0);
	PUT("%s", "\tOUT preempt");

	rec.type = PERF_RECORD_SWITCH;
	sid(&rec, 200, t, 0);
	PUT("%s", "\tSWITCH IN");

	rec.type = PERF_RECORD_SWITCH_CPU_WIDE;
	rec.u.sw.out = 1;
	rec.u.sw.cpu_wide = 1;
	rec.u.sw.next_prev_pid = 300;
	rec.u.sw.next_prev_tid = 301;
	sid(&rec, 200, t, 0);
	PUT("%s", "\tOUT next pid/tid: 300/301");

	rec.type = PERF_RECORD_SAMPLE;
	rec.misc = PERF_RECORD_MISC_USER;
	rec.u.sample.ip = 0x401234;
	rec.u.sample.addr = 0xdead000;
	rec.u.sample.period = 100000;
	sid(&rec, 200, t, ID_CLOCK1);
	PUT("\t200/201: 0x401234 period: 100000 addr: 0xdead000");

	rec.type = PERF_RECORD_LOST;
	rec.u.lost = (struct hwt_pd_lost){ ID_DUMMY, 7 };
	sid(&rec, 200, t, 0);
	PUT("\tid:%u: lost:7", ID_DUMMY);

	rec.type = PERF_RECORD_LOST_SAMPLES;
	rec.u.lost_samples.lost = 9;
	sid(&rec, 200, t, ID_CLOCK0);
	PUT("%s", "\tid:201: lost samples :9");

	rec.type = PERF_RECORD_THROTTLE;
	rec.u.throttle = (struct hwt_pd_throttle){ t, ID_CLOCK0, 0 };
	sid(&rec, 200, t, ID_CLOCK0);
	PUT("%s", "");

	rec.type = PERF_RECORD_UNTHROTTLE;
	rec.u.throttle = (struct hwt_pd_throttle){ t, ID_CLOCK0, 0 };
	sid(&rec, 200, t, ID_CLOCK0);
	PUT("%s", "");

	rec.type = PERF_RECORD_AUX;
	rec.u.aux = (struct hwt_pd_aux){ 0x1000, 0x2000,
					 PERF_AUX_FLAG_TRUNCATED };
	sid(&rec, 200, t, 0);
	PUT("%s", "\toffset: 0x1000 size: 0x2000 flags: 0x1 [T]");

	rec.type = PERF_RECORD_KSYMBOL;
	rec.u.ksymbol = (struct hwt_pd_ksymbol){ 0xffffffffc0001000ull, 0x80,
		PERF_RECORD_KSYMBOL_TYPE_BPF, 0, "bpf_prog_hwt" };
	sid(&rec, 200, t, 0);
	PUT("%s", "\taddr ffffffffc0001000 len 128 type 1 flags 0x0 name bpf_prog_hwt");

	rec.type = PERF_RECORD_TEXT_POKE;
	rec.u.text_poke = (struct hwt_pd_text_poke){ 0xffffffff81000000ull, 3,
						     3, poke };
	sid(&rec, 200, t, 0);
	PUT("%s", "\tffffffff81000000 old len 3 new len 3\tOld bytes: 0f 1f 44\tNew bytes: e8 10 20");

	rec.type = PERF_RECORD_EXIT;
	rec.u.task = (struct hwt_pd_task){ 200, 100, 200, 100, t };
	sid(&rec, 200, t, 0);
	PUT("%s", "\t(200:200):(100:100)");

	rec.type = HWT_PD_FINISHED_ROUND;
	PUT("%s", "");

	rec.type = HWT_PD_TIME_CONV;
	rec.u.time_conv = (struct hwt_pd_time_conv){ 31, 894784853, 12345,
						     0, 0, 1, 0, 1 };
	PUT("%s", "\tTime Shift 31\tTime Muliplier 894784853\tTime Zero 12345");

	rec.type = HWT_PD_AUXTRACE_ERROR;
	rec.u.auxtrace_error = (struct hwt_pd_auxtrace_error){
		.type = 1, .code = 6, .cpu = 1, .pid = 200, .tid = 200,
		.fmt = 1, .ip = 0x401000, .time = t,
		.msg = "hwt test error" };
	PUT("%s", "\terror type 1 time 1.000021000 cpu 1 pid 200 tid 200 ip 0x401000 code 6: hwt test error");

	/* ID_INDEX is written as it is: nr, then id, idx, cpu, tid each. */
	{
		uint64_t v[1 + 3 * 4] = { 3, ID_DUMMY, 0, 1, UINT64_MAX,
					  ID_CLOCK0, 1, 0, UINT64_MAX,
					  ID_CLOCK1, 1, 1, UINT64_MAX };
		struct perf_event_header h = { HWT_PD_ID_INDEX, 0,
					       sizeof(id_index) };

		memcpy(id_index, &h, sizeof(h));
		memcpy(id_index + 8, v, sizeof(v));
		rec.type = HWT_PD_ID_INDEX;
		rec.size = sizeof(id_index);
		rec.raw = id_index;
		PUT("%s", "\tnr: 3\tid: 101 idx: 0 cpu: 1 tid: -1\tid: 201 idx: 1 cpu: 0 tid: -1\tid: 202 idx: 1 cpu: 1 tid: -1");
	}
	rec.type = HWT_PD_FINISHED_ROUND;
	PUT("%s", "");
#undef PUT
	if (hwt_pd_writer_close(w, err, sizeof(err)) < 0)
		return die("%s", err);
	return 0;
fail:
	hwt_pd_writer_close(w, err, sizeof(err));
	return 1;
}

int main(int argc, char **argv)
{
	struct opts o = {
		.pid = 1234,
		.tsc_hz = 2400000000u,
		.tsc_ctc_n = 2,
		.tsc_ctc_d = 1,
		.cpu = -1,
		.cpuid = "GenuineIntel,6,142,10",
	};
	uint64_t v;
	int i;

	o.pmu_type = hwt_rec_pt_pmu_type(8);
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--all-records")) {
			o.all_records = 1;
			continue;
		}
		if (!strcmp(a, "--show")) {
			o.show = stdout;
			continue;
		}
		if (a[0] != '-' || a[1] != '-')
			break;
		if (!val)
			return die("%s: missing value", a);
		i++;
		if (!strcmp(a, "--pt")) {
			o.pt = val;
		} else if (!strcmp(a, "--elf")) {
			o.elf = val;
		} else if (!strcmp(a, "--comm")) {
			o.comm = val;
		} else if (!strcmp(a, "--cpuid")) {
			o.cpuid = val;
		} else if (!strcmp(a, "--switch")) {
			if (sscanf(val, "%" SCNu32 ":%4095[^:]:%" SCNu32,
				   &o.sw_pid, o.sw_elf, &o.sw_n) != 3 ||
			    !o.sw_n)
				return die("--switch %s: want PID:ELF:N", val);
		} else if (!strcmp(a, "--remap")) {
			o.remap = val;
		} else if (!strcmp(a, "--thread")) {
			if (sscanf(val, "%" SCNu32 ":%" SCNu32, &o.sw_tid,
				   &o.sw_n) != 2 || !o.sw_n || !o.sw_tid)
				return die("--thread %s: want TID:N", val);
		} else if (!strcmp(a, "--cpu2")) {
			if (sscanf(val, "%" SCNu32 ":%" SCNu32 ":%" SCNu32
				   ":%4095s", &o.c2_cpu, &o.c2_pid, &o.c2_tid,
				   o.c2_pt) != 4)
				return die("--cpu2 %s: want N:PID:TID:TRACE",
					   val);
			o.have_c2 = 1;
		} else if (!strcmp(a, "--exit")) {
			struct hwt_pd_exit *e = &o.exits[o.nexits];
			uint64_t x;

			if (o.nexits == 2 ||
			    sscanf(val, "%" SCNu32 ":%" SCNu32 ":%" SCNi64,
				   &e->pid, &e->signal, &x) != 3)
				return die("--exit %s: want PID:SIG:X, at most "
					   "two", val);
			if (e->signal) {
				e->ip = x;
				e->flags = HWT_PD_EXIT_HAVE_IP;
			} else {
				e->code = (uint32_t)x;
			}
			o.nexits++;
		} else if (!strcmp(a, "--tsc-ctc")) {
			if (sscanf(val, "%" SCNu64 ":%" SCNu64, &o.tsc_ctc_n,
				   &o.tsc_ctc_d) != 2 || !o.tsc_ctc_d)
				return die("--tsc-ctc %s: want N:D", val);
		} else if (num(val, &v)) {
			return die("%s: not a number", a);
		} else if (!strcmp(a, "--load")) {
			o.load = v;
			o.have_load = 1;
		} else if (!strcmp(a, "--pid")) {
			o.pid = (uint32_t)v;
		} else if (!strcmp(a, "--tid")) {
			o.tid = (uint32_t)v;
			o.have_tid = 1;
		} else if (!strcmp(a, "--tsc-hz") && v) {
			o.tsc_hz = v;
		} else if (!strcmp(a, "--time-zero")) {
			o.time_zero = v;
		} else if (!strcmp(a, "--cpu")) {
			o.cpu = (int32_t)v;
		} else if (!strcmp(a, "--pmu-type")) {
			o.pmu_type = (uint32_t)v;
		} else if (!strcmp(a, "--losses")) {
			o.losses = v;
		} else if (!strcmp(a, "--move")) {
			if (v < 2 || v > MOVE_MAX)
				return die("--move %s: want 2 to 16 parts", val);
			o.move = (uint32_t)v;
		} else {
			return die("%s: unknown option", a);
		}
	}
	if (i != argc - 1 || (!o.all_records && (!o.pt || !o.elf))) {
		fprintf(stderr,
			"usage: mkptdata [options] --pt TRACE --elf PROG OUT.data\n"
			"       mkptdata --all-records OUT.data\n");
		return 2;
	}
	o.out = argv[i];
	if (!o.have_tid)
		o.tid = o.pid;
	if (o.sw_n && o.cpu < 0)
		return die("%s", "--switch and --thread need --cpu");
	if (o.have_c2 && (o.cpu < 0 || o.c2_cpu == (uint32_t)o.cpu ||
			  o.c2_tid == o.tid))
		return die("%s", "--cpu2: with --cpu, another CPU and another "
			   "thread");
	if (o.move && (o.cpu < 0 || o.have_c2 || o.sw_n || o.losses))
		return die("%s", "--move: with --cpu, not with --cpu2, "
			   "--switch, --thread or --losses");
	if (o.sw_tid && (o.sw_pid || o.sw_tid == o.tid))
		return die("%s", "--thread: not with --switch, nor the "
			   "first thread's tid");
	if (o.all_records)
		return write_all_records(&o, argc, argv);
	if (!o.show) {
		o.show = fopen("/dev/null", "w");
		if (!o.show)
			return die("%s", "/dev/null: cannot open");
	}
	if (!o.comm) {
		const char *slash = strrchr(o.elf, '/');

		o.comm = slash ? slash + 1 : o.elf;
	}
	return write_pt(&o, argc, argv);
}

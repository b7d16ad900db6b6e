/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hwt record layer: turning what a trace source wrote into perf.data.
 *
 * Three parts:
 *   hwt_rec_pt_    an intel_pt perf.data file as `perf record --per-thread
 *                  -e intel_pt//u` writes it: the attr, AUXTRACE_INFO,
 *                  header features, sideband records and the per-thread
 *                  AUX streams. Used by `hwt record` and by the tests'
 *                  mkptdata.
 *   hwt_rec_vsb_   one line of the text sideband of vgpt, the portable
 *                  source (src/record/vgpt/README.md): untrusted input,
 *                  parsed without allocation.
 *   hwt_rec_vgpt_  a whole vgpt recording (PREFIX.sb, PREFIX.TID.pt,
 *                  PREFIX.PID.ADDR.bin) into perf.data.
 *
 * Prefix: hwt_rec_. Below it: perfdata (the writer), proc (build ids),
 * pt (scanning the trace).
 */
#ifndef HWT_RECORD_H
#define HWT_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include <hwt/error.h>
#include <hwt/perfdata.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* What a trace holds                                                  */
/* ------------------------------------------------------------------ */

struct hwt_rec_pt_scan {
	uint8_t have_tsc, have_mtc, have_cyc;
	uint64_t first_tsc, last_tsc;	/* if @have_tsc */
	uint64_t npsb;
	uint64_t novf;			/* OVF packets: data the unit lost */
	uint64_t nbad;			/* bytes that are no packet */
};

/* Scan @size bytes of Intel PT: packet kinds, TSC range, OVF count. */
void hwt_rec_pt_scan(const uint8_t *trace, size_t size,
		     struct hwt_rec_pt_scan *scan);

/* ------------------------------------------------------------------ */
/* intel_pt perf.data                                                  */
/* ------------------------------------------------------------------ */

/* intel_pt's config bits (/sys/bus/event_source/devices/intel_pt/format). */
#define HWT_REC_PT_CFG_PT	  (1ull << 0)
#define HWT_REC_PT_CFG_CYC	  (1ull << 1)
#define HWT_REC_PT_CFG_MTC	  (1ull << 9)
#define HWT_REC_PT_CFG_TSC	  (1ull << 10)
#define HWT_REC_PT_CFG_NORETCOMP  (1ull << 11)
#define HWT_REC_PT_CFG_BRANCH	  (1ull << 13)
#define HWT_REC_PT_CFG_MTC_PERIOD_SHIFT 14	/* 4 bits */
#define HWT_REC_PT_CFG_PSB_PERIOD_SHIFT 24	/* 4 bits */

struct hwt_rec_pt_config {
	uint32_t pmu_type;	/* attr.type of intel_pt */
	uint64_t config;	/* attr.config: HWT_REC_PT_CFG_* */
	const char *event_name;	/* EVENT_DESC name ("intel_pt//u") */
	/* TSC -> perf time: zero + tsc * mult >> shift (AUXTRACE_INFO) */
	uint64_t time_shift, time_mult, time_zero;
	uint32_t tsc_ctc_n, tsc_ctc_d;	/* CPUID.15H: TSC/CTC = n/d */
	uint32_t max_nonturbo_ratio;
	int32_t cpu;		/* >= 0: one cpu's buffer; -1: per thread */
	uint8_t snapshot;	/* snapshot (ring) mode */
	uint8_t context_switch;	/* SWITCH records will follow */
	const char *filter;	/* address filter, perf's syntax, or NULL */
	/* header features; NULL (0) leaves one out */
	const char *hostname, *osrelease, *version, *arch, *cpudesc, *cpuid;
	uint32_t nr_cpus_avail, nr_cpus_online;
	int argc;
	const char *const *argv;	/* CMDLINE */
};

/*
 * Defaults as perf's: pmu_type from sysfs (8 if there is no intel_pt),
 * PT|BRANCH|TSC with a PSB period of 2^(3+11) bytes, a 2.4 GHz TSC, per
 * thread, no features.
 */
void hwt_rec_pt_config_init(struct hwt_rec_pt_config *c);

/* intel_pt's PMU type from sysfs, or @fallback without the unit. */
uint32_t hwt_rec_pt_pmu_type(uint32_t fallback);

/* The header features of @c (strings, NRCPUS, CMDLINE) into @w. */
void hwt_rec_pt_set_features(struct hwt_pd_writer *w,
			     const struct hwt_rec_pt_config *c);

struct hwt_rec_pt;

/*
 * Create @path with the attr, the features and AUXTRACE_INFO of @c (the
 * strings are copied). Negative HWT_ERR_* with a message in @err.
 */
int hwt_rec_pt_new(struct hwt_rec_pt **w, const char *path,
		   const struct hwt_rec_pt_config *c, char *err,
		   size_t errlen);

/* Sideband. Times are perf times; records go out in the order given. */
int hwt_rec_pt_comm(struct hwt_rec_pt *w, uint64_t time, uint32_t pid,
		    uint32_t tid, const char *comm, int exec);
int hwt_rec_pt_fork(struct hwt_rec_pt *w, uint64_t time, uint32_t pid,
		    uint32_t ppid, uint32_t tid, uint32_t ptid);
int hwt_rec_pt_exit(struct hwt_rec_pt *w, uint64_t time, uint32_t pid,
		    uint32_t ppid, uint32_t tid, uint32_t ptid);
int hwt_rec_pt_itrace_start(struct hwt_rec_pt *w, uint64_t time,
			    uint32_t pid, uint32_t tid);
int hwt_rec_pt_switch(struct hwt_rec_pt *w, uint64_t time, uint32_t pid,
		      uint32_t tid, int out);
/* PERF_RECORD_LOST: @lost sideband records lost (the kernel's ring was
 * full). */
int hwt_rec_pt_lost(struct hwt_rec_pt *w, uint64_t time, uint32_t pid,
		    uint32_t tid, uint64_t lost);
int hwt_rec_pt_round(struct hwt_rec_pt *w);	/* FINISHED_ROUND */
/*
 * The CPU in the sample id of the sideband records that follow (a
 * recording of several CPUs: each CPU's switches name it); at first the
 * config's cpu (0 per thread). AUX records name their buffer's cpu.
 */
void hwt_rec_pt_set_cpu(struct hwt_rec_pt *w, uint32_t cpu);

struct hwt_rec_pt_map {
	uint64_t start, len, pgoff;
	uint32_t prot, flags;	/* PROT_*, MAP_* */
	const char *path;	/* a file, or "//anon" */
};

/*
 * MMAP2 of @m in @pid. A file that has a build id gets it in the record
 * (PERF_RECORD_MISC_MMAP_BUILD_ID) and in HEADER_BUILD_ID, once per
 * path; other files get their device and inode; an unreadable file is
 * recorded without either.
 */
int hwt_rec_pt_mmap(struct hwt_rec_pt *w, uint64_t time, uint32_t pid,
		    uint32_t tid, const struct hwt_rec_pt_map *m);

struct hwt_rec_pt_aux {
	uint64_t time;		/* when the data was out (AUX records) */
	uint32_t idx;		/* the buffer: one per thread (or cpu) */
	uint32_t pid, tid;	/* the sample id of the AUX records */
	int32_t cpu;		/* -1 per thread */
	uint64_t flags;		/* PERF_AUX_FLAG_* of the AUX records */
	uint64_t reference;	/* of the AUXTRACE records (0: made up) */
	uint64_t offset;	/* where @data starts in the buffer's stream */
	const uint8_t *data;
	size_t size;
};

/*
 * The trace of one buffer: AUX and AUXTRACE records, in chunks of at most
 * HWT_REC_PT_CHUNK bytes (a full disk then still leaves the chunks that
 * fit). Returns the number of chunks written or a negative HWT_ERR_*.
 */
#define HWT_REC_PT_CHUNK (4u << 20)
int hwt_rec_pt_trace(struct hwt_rec_pt *w, const struct hwt_rec_pt_aux *a);

/* How a process ended (hwt's HWT_EXIT feature). */
int hwt_rec_pt_add_exit(struct hwt_rec_pt *w, const struct hwt_pd_exit *e);

/* The priv words written to AUXTRACE_INFO (HWT_PD_PT_INFO_NR of them). */
const uint64_t *hwt_rec_pt_info_words(const struct hwt_rec_pt *w);

/* Why the last call failed; write errors stick (see hwt_pd_writer). */
const char *hwt_rec_pt_errmsg(const struct hwt_rec_pt *w);

/*
 * Write the header and features and close. 0, or a negative HWT_ERR_*
 * with the message in @err; what was written stays readable.
 */
int hwt_rec_pt_close(struct hwt_rec_pt *w, char *err, size_t errlen);

/* ------------------------------------------------------------------ */
/* vgpt's sideband                                                     */
/* ------------------------------------------------------------------ */

enum hwt_rec_vsb_kind {
	HWT_REC_VSB_UNKNOWN = 0,	/* a keyword this hwt does not know */
	HWT_REC_VSB_COMM,	/* comm TIME PID TID EXE */
	HWT_REC_VSB_THREAD,	/* thread TIME PID TID */
	HWT_REC_VSB_EXIT,	/* exit TIME PID TID */
	HWT_REC_VSB_MMAP,	/* mmap TIME PID START LEN PGOFF PROT PATH */
	HWT_REC_VSB_FORK,	/* fork TIME PPID PID */
	HWT_REC_VSB_EXEC,	/* exec TIME PID PATH */
	HWT_REC_VSB_SWITCH,	/* switch TIME PID TID out|in */
	HWT_REC_VSB_MUNMAP,	/* munmap TIME PID START LEN */
};

struct hwt_rec_vsb_line {
	enum hwt_rec_vsb_kind kind;
	uint64_t time;
	uint32_t pid, tid, ppid;
	uint64_t start, len, pgoff;
	uint32_t prot;		/* PROT_READ | PROT_WRITE | PROT_EXEC */
	uint8_t out;		/* switch: 1 out, 0 in */
	const char *path;	/* comm, mmap, exec: the rest of the line */
	const char *keyword;	/* the first word (for messages) */
	size_t keyword_len;
};

/*
 * Parse one NUL-terminated line (no newline). 0 with @l filled: a known
 * line, or kind HWT_REC_VSB_UNKNOWN for a word this hwt does not know
 * (newer sources add lines: skip it with a warning). A malformed line:
 * -HWT_ERR_BAD_FORMAT and *@why says what is wrong (a static string),
 * *@col where (a byte offset in @line).
 */
int hwt_rec_vsb_parse(const char *line, struct hwt_rec_vsb_line *l,
		      const char **why, size_t *col);

/* The keyword of @kind ("mmap", ...). */
const char *hwt_rec_vsb_name(enum hwt_rec_vsb_kind kind);

/* ------------------------------------------------------------------ */
/* A vgpt recording into perf.data                                     */
/* ------------------------------------------------------------------ */

struct hwt_rec_vgpt_config {
	const char *prefix;	/* vgpt's --vgpt-out */
	const char *out;	/* the perf.data to write */
	uint8_t snapshot;	/* vgpt ran with --vgpt-ring */
	const char *filter;	/* perf's syntax, for AUXTRACE_INFO */
	int argc;
	const char *const *argv;	/* the CMDLINE feature */
	const struct hwt_pd_exit *exits;	/* how processes ended */
	size_t nexits;
	/* Each problem that does not stop the conversion. */
	void (*warn)(void *ctx, const char *msg);
	void *warn_ctx;
};

struct hwt_rec_vgpt_stats {
	uint32_t nprocs, nthreads;	/* processes and threads traced */
	uint32_t nstreams;		/* trace files written */
	uint64_t insns;			/* instructions retired, all processes */
	uint64_t trace_bytes;		/* bytes of PT written */
	uint64_t lost;			/* OVF packets, missing or cut streams */
	uint32_t unended;		/* threads whose end is not recorded */
	uint32_t execs;			/* execs whose new image is not traced */
	uint32_t warnings;		/* unknown or malformed lines, ... */
	uint64_t file_bytes;		/* size of the perf.data */
};

/*
 * Convert. Returns 0, or a negative HWT_ERR_* with a message in @err (a
 * write error: what was written stays readable, @stats says what it
 * holds). Sideband lines that cannot be used are warnings, never fatal.
 */
int hwt_rec_vgpt_import(const struct hwt_rec_vgpt_config *c,
			struct hwt_rec_vgpt_stats *stats, char *err,
			size_t errlen);

#ifdef __cplusplus
}
#endif

#endif /* HWT_RECORD_H */

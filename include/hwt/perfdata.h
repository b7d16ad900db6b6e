/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hwt perf.data layer: read and write the files `perf record` writes.
 *
 * The format is perf's (tools/perf/Documentation/perf.data-file-format.txt):
 * a file header, the attrs with their sample ids, a data section of
 * records (kernel records as in <linux/perf_event.h>, perf's own "user"
 * records from 64 on), and feature sections after the data. Pipe mode (a
 * stream with attrs and features as records) is read too.
 *
 * Records are handed out one at a time, decoded into plain structs
 * (struct hwt_pd_record); pointers in them are valid until the next call.
 * The trace bytes that follow a PERF_RECORD_AUXTRACE are part of its
 * record. Reading is streaming: the file is mapped in windows, so memory
 * does not grow with the file.
 *
 * The writer takes the same structs, so read -> write -> read gives the
 * same records.
 *
 * Untrusted input: every size and offset is checked; errors name the file
 * offset (hwt_pd_errmsg()). Unknown record types are returned with
 * type-specific fields left zero (and counted), never fatal.
 *
 * Prefix: hwt_pd_.
 */
#ifndef HWT_PERFDATA_H
#define HWT_PERFDATA_H

#include <stddef.h>
#include <stdint.h>

#include <linux/perf_event.h>

#include <hwt/error.h>

#ifdef __cplusplus
extern "C" {
#endif

/* perf's own record types (tools/perf/util/event.h: enum perf_user_event_type). */
enum hwt_pd_user_type {
	HWT_PD_HEADER_ATTR = 64,
	HWT_PD_HEADER_EVENT_TYPE = 65,
	HWT_PD_HEADER_TRACING_DATA = 66,
	HWT_PD_HEADER_BUILD_ID = 67,
	HWT_PD_FINISHED_ROUND = 68,
	HWT_PD_ID_INDEX = 69,
	HWT_PD_AUXTRACE_INFO = 70,
	HWT_PD_AUXTRACE = 71,
	HWT_PD_AUXTRACE_ERROR = 72,
	HWT_PD_THREAD_MAP = 73,
	HWT_PD_CPU_MAP = 74,
	HWT_PD_STAT_CONFIG = 75,
	HWT_PD_STAT = 76,
	HWT_PD_STAT_ROUND = 77,
	HWT_PD_EVENT_UPDATE = 78,
	HWT_PD_TIME_CONV = 79,
	HWT_PD_HEADER_FEATURE = 80,
	HWT_PD_COMPRESSED = 81,
	HWT_PD_FINISHED_INIT = 82,
};

/* perf's feature bits (tools/perf/util/header.h: HEADER_*). */
enum hwt_pd_feature {
	HWT_PD_FEAT_TRACING_DATA = 1,
	HWT_PD_FEAT_BUILD_ID = 2,
	HWT_PD_FEAT_HOSTNAME = 3,
	HWT_PD_FEAT_OSRELEASE = 4,
	HWT_PD_FEAT_VERSION = 5,
	HWT_PD_FEAT_ARCH = 6,
	HWT_PD_FEAT_NRCPUS = 7,
	HWT_PD_FEAT_CPUDESC = 8,
	HWT_PD_FEAT_CPUID = 9,
	HWT_PD_FEAT_TOTAL_MEM = 10,
	HWT_PD_FEAT_CMDLINE = 11,
	HWT_PD_FEAT_EVENT_DESC = 12,
	HWT_PD_FEAT_CPU_TOPOLOGY = 13,
	HWT_PD_FEAT_NUMA_TOPOLOGY = 14,
	HWT_PD_FEAT_BRANCH_STACK = 15,
	HWT_PD_FEAT_PMU_MAPPINGS = 16,
	HWT_PD_FEAT_GROUP_DESC = 17,
	HWT_PD_FEAT_AUXTRACE = 18,
	HWT_PD_FEAT_STAT = 19,
	HWT_PD_FEAT_CACHE = 20,
	HWT_PD_FEAT_SAMPLE_TIME = 21,
	HWT_PD_FEAT_MEM_TOPOLOGY = 22,
	HWT_PD_FEAT_CLOCKID = 23,
	HWT_PD_FEAT_DIR_FORMAT = 24,
	HWT_PD_FEAT_BPF_PROG_INFO = 25,
	HWT_PD_FEAT_BPF_BTF = 26,
	HWT_PD_FEAT_COMPRESSED = 27,
	HWT_PD_FEAT_CPU_PMU_CAPS = 28,
	HWT_PD_FEAT_CLOCK_DATA = 29,
	HWT_PD_FEAT_HYBRID_TOPOLOGY = 30,
	HWT_PD_FEAT_PMU_CAPS = 31,
	HWT_PD_FEAT_LAST,
	/*
	 * hwt's own features, far above perf's: perf reads the sections of
	 * the features it knows and skips the rest, so a file with these is
	 * still perf's to read.
	 */
	HWT_PD_FEAT_HWT_EXIT = 224,	/* how processes ended: hwt_pd_exit */
};

/* AUX area types (perf's enum auxtrace_type). */
enum hwt_pd_auxtrace_type {
	HWT_PD_AUXTRACE_UNKNOWN = 0,
	HWT_PD_AUXTRACE_INTEL_PT = 1,
	HWT_PD_AUXTRACE_INTEL_BTS = 2,
	HWT_PD_AUXTRACE_CS_ETM = 3,
	HWT_PD_AUXTRACE_ARM_SPE = 4,
	HWT_PD_AUXTRACE_S390_CPUMSF = 5,
	HWT_PD_AUXTRACE_HISI_PTT = 6,
};

/*
 * intel_pt's AUXTRACE_INFO private words (perf's enum INTEL_PT_*), index
 * into struct hwt_pd_auxtrace_info.priv.
 */
enum hwt_pd_intel_pt_info {
	HWT_PD_PT_PMU_TYPE = 0,
	HWT_PD_PT_TIME_SHIFT,
	HWT_PD_PT_TIME_MULT,
	HWT_PD_PT_TIME_ZERO,
	HWT_PD_PT_CAP_USER_TIME_ZERO,
	HWT_PD_PT_TSC_BIT,
	HWT_PD_PT_NORETCOMP_BIT,
	HWT_PD_PT_HAVE_SCHED_SWITCH,
	HWT_PD_PT_SNAPSHOT_MODE,
	HWT_PD_PT_PER_CPU_MMAPS,
	HWT_PD_PT_MTC_BIT,
	HWT_PD_PT_MTC_FREQ_BITS,
	HWT_PD_PT_TSC_CTC_N,
	HWT_PD_PT_TSC_CTC_D,
	HWT_PD_PT_CYC_BIT,
	HWT_PD_PT_MAX_NONTURBO_RATIO,
	HWT_PD_PT_FILTER_STR_LEN,
	HWT_PD_PT_INFO_NR	/* words before the filter string */
};

/* Which fields of a sample id are present (from the attr's sample_type). */
#define HWT_PD_SID_TID       0x01u
#define HWT_PD_SID_TIME      0x02u
#define HWT_PD_SID_ID        0x04u
#define HWT_PD_SID_STREAM_ID 0x08u
#define HWT_PD_SID_CPU       0x10u
#define HWT_PD_SID_IDENTIFIER 0x20u

/* The sample_id_all trailer of a non-sample record, or those fields of a
 * PERF_RECORD_SAMPLE. Fields not present are 0; see @present. */
struct hwt_pd_sample_id {
	uint32_t pid, tid;
	uint64_t time;
	uint64_t id;
	uint64_t stream_id;
	uint32_t cpu;
	uint32_t present;	/* HWT_PD_SID_* */
};

struct hwt_pd_attr {
	struct perf_event_attr attr;	/* normalised to this header's size */
	uint32_t file_attr_size;	/* attr size as it was in the file */
	const uint64_t *ids;
	size_t nids;
	const char *name;		/* from EVENT_DESC, or NULL */
};

/* MMAP and MMAP2 (@is_mmap2). */
struct hwt_pd_mmap {
	uint32_t pid, tid;
	uint64_t start, len, pgoff;
	uint32_t maj, min;		/* MMAP2 without build id */
	uint64_t ino, ino_generation;
	uint32_t prot, flags;
	uint8_t build_id[20];
	uint8_t build_id_size;		/* MMAP2 with PERF_RECORD_MISC_MMAP_BUILD_ID */
	uint8_t is_mmap2;
	const char *filename;
};

/* COMM; @exec from PERF_RECORD_MISC_COMM_EXEC. */
struct hwt_pd_comm {
	uint32_t pid, tid;
	const char *comm;
	uint8_t exec;
};

/* FORK and EXIT. */
struct hwt_pd_task {
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
};

struct hwt_pd_lost {
	uint64_t id, lost;
};

struct hwt_pd_lost_samples {
	uint64_t lost;
};

struct hwt_pd_throttle {
	uint64_t time, id, stream_id;
};

/* PERF_RECORD_AUX: @flags are PERF_AUX_FLAG_*. */
struct hwt_pd_aux {
	uint64_t aux_offset, aux_size, flags;
};

struct hwt_pd_itrace_start {
	uint32_t pid, tid;
};

/* SWITCH (@cpu_wide 0) and SWITCH_CPU_WIDE (@cpu_wide 1, next/prev set). */
struct hwt_pd_switch {
	uint8_t out;			/* PERF_RECORD_MISC_SWITCH_OUT */
	uint8_t preempt;		/* ..._SWITCH_OUT_PREEMPT */
	uint8_t cpu_wide;
	uint32_t next_prev_pid, next_prev_tid;
};

/* PERF_RECORD_AUXTRACE and the trace bytes that follow it. */
struct hwt_pd_auxtrace {
	uint64_t size, offset, reference;
	uint32_t idx, tid, cpu;
	const uint8_t *data;		/* @size bytes */
	uint64_t data_file_offset;	/* where @data starts in the file */
};

struct hwt_pd_auxtrace_info {
	uint32_t type;			/* enum hwt_pd_auxtrace_type */
	const uint64_t *priv;
	size_t npriv;
};

struct hwt_pd_auxtrace_error {
	uint32_t type, code, cpu, pid, tid, fmt;
	uint64_t ip, time;
	uint32_t machine_pid, vcpu;
	const char *msg;
};

struct hwt_pd_time_conv {
	uint64_t time_shift, time_mult, time_zero;
	uint64_t time_cycles, time_mask;	/* if @extended */
	uint8_t cap_user_time_zero, cap_user_time_short, extended;
};

struct hwt_pd_ksymbol {
	uint64_t addr;
	uint32_t len;
	uint16_t ksym_type, flags;
	const char *name;
};

struct hwt_pd_text_poke {
	uint64_t addr;
	uint16_t old_len, new_len;
	const uint8_t *bytes;		/* old_len + new_len bytes */
};

/* The common fields of PERF_RECORD_SAMPLE (per the attr's sample_type). */
struct hwt_pd_sample {
	uint64_t ip, addr, period;
	uint64_t sample_type;		/* of the attr it was decoded with */
	const uint8_t *raw;		/* the whole body, for other fields */
	size_t raw_size;
};

struct hwt_pd_record {
	uint32_t type;			/* PERF_RECORD_* or enum hwt_pd_user_type */
	uint16_t misc;
	uint16_t size;			/* header.size (AUXTRACE data not included) */
	uint64_t file_offset;		/* of the header; in a compressed
					 * record: that record's */
	uint8_t compressed;		/* from a PERF_RECORD_COMPRESSED */
	const uint8_t *raw;		/* the record, header included */
	struct hwt_pd_sample_id sid;	/* trailer or sample fields */
	const struct hwt_pd_attr *attr;	/* matched by id; NULL if none */
	union {
		struct hwt_pd_mmap mmap;
		struct hwt_pd_comm comm;
		struct hwt_pd_task task;
		struct hwt_pd_lost lost;
		struct hwt_pd_lost_samples lost_samples;
		struct hwt_pd_throttle throttle;
		struct hwt_pd_aux aux;
		struct hwt_pd_itrace_start itrace_start;
		struct hwt_pd_switch sw;
		struct hwt_pd_auxtrace auxtrace;
		struct hwt_pd_auxtrace_info auxtrace_info;
		struct hwt_pd_auxtrace_error auxtrace_error;
		struct hwt_pd_time_conv time_conv;
		struct hwt_pd_ksymbol ksymbol;
		struct hwt_pd_text_poke text_poke;
		struct hwt_pd_sample sample;
	} u;
};

/* perf's own name of a record type ("PERF_RECORD_MMAP2", ...), or NULL. */
const char *hwt_pd_record_name(uint32_t type);
/* perf's name of an AUX area type ("intel_pt", ...), or NULL. */
const char *hwt_pd_auxtrace_name(uint32_t type);
/* perf's name of a feature ("HOSTNAME", ...); "unknown feature" if none. */
const char *hwt_pd_feature_name(uint32_t feat);

/* ------------------------------------------------------------------ */
/* Reader                                                              */
/* ------------------------------------------------------------------ */

struct hwt_pd_build_id {
	int32_t pid;
	uint8_t id[20];
	uint8_t size;
	const char *filename;
};

/*
 * How a process ended (HWT_PD_FEAT_HWT_EXIT), as its recorder saw it:
 * perf.data has no record for it (PERF_RECORD_EXIT carries no status).
 * In the file: u32 count, u32 entry size (40), then the entries as here.
 */
struct hwt_pd_exit {
	uint32_t pid;
	uint32_t tid;		/* the thread that took the signal, or 0 */
	uint64_t time;		/* perf time of the end, or 0 if unknown */
	uint32_t signal;	/* killed by this signal; 0: exited */
	uint32_t code;		/* exit code if @signal is 0 */
	uint64_t ip;		/* the instruction that faulted, if HAVE_IP */
	uint32_t flags;		/* HWT_PD_EXIT_* */
	uint32_t reserved;
};

#define HWT_PD_EXIT_HAVE_IP   0x1u	/* @ip is known */
#define HWT_PD_EXIT_HAVE_TIME 0x2u	/* @time is known */

/* What the header and feature sections say. Strings NULL if absent. */
struct hwt_pd_info {
	int pipe_mode;
	uint64_t features[4];		/* bitmap, bit = enum hwt_pd_feature */
	const char *hostname, *osrelease, *version, *arch, *cpudesc, *cpuid;
	uint32_t nr_cpus_avail, nr_cpus_online;
	uint64_t total_mem;		/* kB */
	const char *const *cmdline;
	size_t ncmdline;
	const struct hwt_pd_build_id *build_ids;
	size_t nbuild_ids;
	const struct hwt_pd_exit *exits;	/* HWT_PD_FEAT_HWT_EXIT */
	size_t nexits;
	uint64_t data_offset, data_size;	/* 0 in pipe mode */
	/* HEADER_CLOCK_DATA, if present */
	uint32_t clockid;
	uint64_t clock_tod_ns, clock_ns;
};

struct hwt_pd_reader;

/*
 * Open @path ("-" for standard input, read as pipe mode). On failure
 * returns a negative HWT_ERR_* and, if @err is not NULL, a message naming
 * the offset in @err.
 */
int hwt_pd_open(struct hwt_pd_reader **r, const char *path,
		char *err, size_t errlen);
/* The same from an open descriptor (not closed by the reader). */
int hwt_pd_open_fd(struct hwt_pd_reader **r, int fd, char *err, size_t errlen);
void hwt_pd_close(struct hwt_pd_reader *r);

/* A sample type for the records of one event (by its identifier). */
struct hwt_pd_raw_type {
	uint64_t identifier;
	uint64_t sample_type;	/* must include PERF_SAMPLE_IDENTIFIER */
};

/*
 * A raw stream of perf records without a file header: what the kernel
 * wrote to a perf_event ring buffer, as libipt's pevent sideband files
 * (perf-read-sideband.bash, pttc) hold it. Every record has the
 * sample_id_all trailer laid out by @sample_type (PERF_SAMPLE_*), or, as
 * libipt's --pevent:sample-config, by the type in @types whose identifier
 * is the record's last 8 bytes (the trailer's IDENTIFIER; 0 for records
 * perf synthesized; the first entry of an identifier counts). attr 0 is
 * made from @sample_type, then one per identifier in @types, so
 * rec->attr says which layout was used. The records are
 * [@begin, @end) of the file (@end 0: to its end); file_offset is the
 * offset in the file. Records of perf's own types (64 and up) count as
 * unknown. Errors as hwt_pd_open() (a type without IDENTIFIER is one).
 */
int hwt_pd_open_raw(struct hwt_pd_reader **r, const char *path,
		    uint64_t sample_type, const struct hwt_pd_raw_type *types,
		    size_t ntypes, uint64_t begin, uint64_t end, char *err,
		    size_t errlen);
/* The same from an open regular file (not closed by the reader). */
int hwt_pd_open_raw_fd(struct hwt_pd_reader **r, int fd, uint64_t sample_type,
		       const struct hwt_pd_raw_type *types, size_t ntypes,
		       char *err, size_t errlen);

const struct hwt_pd_info *hwt_pd_get_info(const struct hwt_pd_reader *r);
size_t hwt_pd_nattrs(const struct hwt_pd_reader *r);
const struct hwt_pd_attr *hwt_pd_get_attr(const struct hwt_pd_reader *r,
					  size_t i);

/*
 * The next record of the data section, in file order. Returns 1 with
 * *@rec filled, 0 at the end, or a negative HWT_ERR_* (message from
 * hwt_pd_errmsg(): it names the offset). After an error, further calls
 * return 0. In pipe mode, attr and feature records update the attrs and
 * the info as they pass, and are returned too.
 */
int hwt_pd_next(struct hwt_pd_reader *r, struct hwt_pd_record *rec);

/* The message of the last error. */
const char *hwt_pd_errmsg(const struct hwt_pd_reader *r);

/* How many records of types the reader does not know were seen so far. */
uint64_t hwt_pd_unknown_records(const struct hwt_pd_reader *r);

/*
 * Restart at the first record (files only; -HWT_ERR_INVALID on a pipe):
 * for two passes, sideband first and trace second.
 */
int hwt_pd_rewind(struct hwt_pd_reader *r);

/* perf's conversion of a TSC value to perf time with a TIME_CONV record. */
uint64_t hwt_pd_tsc_to_perf_time(const struct hwt_pd_time_conv *tc,
				 uint64_t tsc);
uint64_t hwt_pd_perf_time_to_tsc(const struct hwt_pd_time_conv *tc,
				 uint64_t ns);

/* ------------------------------------------------------------------ */
/* Writer                                                              */
/* ------------------------------------------------------------------ */

struct hwt_pd_writer;

int hwt_pd_writer_new(struct hwt_pd_writer **w, const char *path,
		      char *err, size_t errlen);

/* Attrs must all be added before the first record. @name may be NULL. */
int hwt_pd_writer_add_attr(struct hwt_pd_writer *w,
			   const struct perf_event_attr *attr,
			   const uint64_t *ids, size_t nids, const char *name);

/* A string feature (HOSTNAME, OSRELEASE, VERSION, ARCH, CPUDESC, CPUID). */
int hwt_pd_writer_set_string(struct hwt_pd_writer *w,
			     enum hwt_pd_feature feat, const char *value);
int hwt_pd_writer_set_nrcpus(struct hwt_pd_writer *w, uint32_t avail,
			     uint32_t online);
int hwt_pd_writer_set_cmdline(struct hwt_pd_writer *w, int argc,
			      const char *const *argv);
int hwt_pd_writer_add_build_id(struct hwt_pd_writer *w,
			       const struct hwt_pd_build_id *bid);
/* How a process ended (the HWT_EXIT feature; see struct hwt_pd_exit). */
int hwt_pd_writer_add_exit(struct hwt_pd_writer *w,
			   const struct hwt_pd_exit *e);

/*
 * Append a record: encoded from @rec's type, misc, typed fields (u) and
 * sample id (the trailer laid out as the attr of @rec->sid.id wants, or
 * the first attr's). Records of types the writer does not know are copied
 * from @rec->raw. AUXTRACE writes @rec->u.auxtrace.data after the record.
 */
int hwt_pd_write(struct hwt_pd_writer *w, const struct hwt_pd_record *rec);

/*
 * Write the attrs, the feature sections and the file header, and close.
 * Returns an error (with the message in @err) if anything could not be
 * written; what was written before stays readable as far as it goes.
 */
int hwt_pd_writer_close(struct hwt_pd_writer *w, char *err, size_t errlen);

/*
 * Why the last call failed ("" if none did): a write error names the
 * file, the offset and the reason, and sticks (later calls fail too); a
 * refused record or attr names what was wrong and the writer goes on.
 */
const char *hwt_pd_writer_errmsg(const struct hwt_pd_writer *w);

#ifdef __cplusplus
}
#endif

#endif /* HWT_PERFDATA_H */

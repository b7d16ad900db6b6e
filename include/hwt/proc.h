/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hwt process model: which code each thread could run, over time, built
 * from perf.data sideband (MMAP/MMAP2, COMM exec, FORK, EXIT, SWITCH,
 * ITRACE_START).
 *
 * Per pid, a timeline of address-space changes: a mapping appears
 * (MMAP2), the address space is replaced (exec, seen as COMM with
 * PERF_RECORD_MISC_COMM_EXEC), copied (FORK of a new process) or shared
 * (FORK of a thread), or ends (EXIT). A view follows one pid along its
 * timeline and keeps an hwt_image in step, so a flow decoder asks for
 * code at trace time t and sees the mappings that existed at t.
 *
 * Files are opened by the path in the record (below an optional root
 * directory, as perf's --symfs), checked against the build id when the
 * record or the file's build-id table has one. When the file is gone or
 * is another build, the copy in a build-id cache (perf's ~/.debug layout:
 * DIR/.build-id/ab/cdef... naming the file, or a directory holding `elf'
 * or `vdso') is used if it has the right build id; else the mapping is
 * left out, with a warning. Anonymous and special mappings are kept as
 * mappings without code, except [vdso], read from a copy saved by the
 * recorder when one is given, else from the build-id cache.
 *
 * Prefix: hwt_proc_.
 */
#ifndef HWT_PROC_H
#define HWT_PROC_H

#include <stddef.h>
#include <stdint.h>

#include <hwt/image.h>
#include <hwt/perfdata.h>

#ifdef __cplusplus
extern "C" {
#endif

struct hwt_proc_config {
	const char *root;		/* prefix for file paths, or NULL */
	const char *vdso_path;		/* saved [vdso] bytes, or NULL */
	const char *buildid_dir;	/* a build-id cache, or NULL */
	const char *debug_dir;		/* separate debug files by build id
					 * (hwt_image_set_debug_dir()), or
					 * NULL: /usr/lib/debug, below @root
					 * if given */
	int no_symbols;			/* views' images without symbols
					 * (hwt_image_set_symbols()) */
	int no_image_cache;		/* each view's images map and read
					 * their files themselves, not through
					 * one hwt_image_cache (a reference) */
	/* Called for each problem (file missing, build id mismatch, ...). */
	void (*warn)(void *ctx, uint64_t time, uint32_t pid, const char *msg);
	void *warn_ctx;
};

void hwt_proc_config_init(struct hwt_proc_config *config);

/* One mapping as the model keeps it. */
struct hwt_proc_map {
	uint64_t start, len, pgoff;
	uint64_t time;			/* when it appeared */
	uint32_t prot;
	const char *path;		/* as recorded */
	uint8_t build_id[20];
	uint8_t build_id_size;
};

struct hwt_proc_model;

struct hwt_proc_model *hwt_proc_new(const struct hwt_proc_config *config);
void hwt_proc_delete(struct hwt_proc_model *m);

/*
 * Feed one record. Records must come in time order (sort sideband by
 * sid.time first; perf writes in rounds). Records the model does not use
 * are ignored; returns 0 or a negative HWT_ERR_*.
 */
int hwt_proc_add(struct hwt_proc_model *m, const struct hwt_pd_record *rec);

/* Build ids from the file's HEADER_BUILD_ID feature, by path. */
int hwt_proc_add_build_ids(struct hwt_proc_model *m,
			   const struct hwt_pd_build_id *ids, size_t n);

/*
 * The mappings of @pid at @time (sorted by start, later ones shadowing
 * earlier ones already resolved). Returns how many; *@maps owned by the
 * model, valid until the next call into it.
 */
size_t hwt_proc_maps(struct hwt_proc_model *m, uint32_t pid, uint64_t time,
		     const struct hwt_proc_map **maps);

/* Where the model's images find separate debug files (the config's
 * debug_dir, or ROOT/usr/lib/debug; NULL: /usr/lib/debug), for readers of
 * the same files' DWARF (hwt_an_lines_set_debug_dir()). */
const char *hwt_proc_debug_dir(const struct hwt_proc_model *m);

/* The pid of thread @tid (tid itself if unknown). */
uint32_t hwt_proc_pid_of(const struct hwt_proc_model *m, uint32_t tid);

/* The command name of @tid at @time, or NULL. */
const char *hwt_proc_comm(const struct hwt_proc_model *m, uint32_t tid,
			  uint64_t time);

/*
 * CPU mode: the thread that ran on @cpu at @time (from SWITCH_CPU_WIDE
 * and ITRACE_START). -HWT_ERR_NOMAP if not known.
 */
int hwt_proc_running(const struct hwt_proc_model *m, uint32_t cpu,
		     uint64_t time, uint32_t *pid, uint32_t *tid);

/* CPU mode: did @pid/@tid run on @cpu (at any time)? 1 or 0. */
int hwt_proc_ran_on(const struct hwt_proc_model *m, uint32_t cpu,
		    uint32_t pid, uint32_t tid);

/*
 * The last thread known to run on @cpu at or before @time: after a switch
 * out with no switch in (a lost record), the one that left, as perf's
 * decoder takes it. What a decoder follows: it depends on @time alone,
 * not on the times asked before. -HWT_ERR_NOMAP if none yet.
 */
int hwt_proc_ran_last(const struct hwt_proc_model *m, uint32_t cpu,
		      uint64_t time, uint32_t *pid, uint32_t *tid);

/*
 * A view: an image that follows one pid through time. Views of one model
 * may be used on several threads at once (each view on one), once all
 * records are in.
 */
struct hwt_proc_view;

struct hwt_proc_view *hwt_proc_view_new(struct hwt_proc_model *m,
					uint32_t pid);
void hwt_proc_view_delete(struct hwt_proc_view *v);

/*
 * Bring the image to @time (only forward; an earlier time is a no-op).
 * Returns 1 if the image changed, 0 if not, or a negative HWT_ERR_*.
 */
int hwt_proc_view_advance(struct hwt_proc_view *v, uint64_t time);

/*
 * Switch the view to another pid (CPU mode), at the current time.
 * Returns 1 if it switched (the image is another one), 0 if @pid is
 * followed already, or a negative HWT_ERR_*.
 */
int hwt_proc_view_set_pid(struct hwt_proc_view *v, uint32_t pid);

/*
 * The image of the pid followed, owned by the view. Each pid has its
 * own: the view keeps those of the 16 pids it left last, brought up to
 * date when it comes back to one (its generation changes when mappings
 * change), and deletes older ones (a pid coming back after that gets a
 * new image). Valid until the view is deleted or switches pids.
 */
struct hwt_image *hwt_proc_view_image(struct hwt_proc_view *v);
/* The pid followed (0 before any). */
uint32_t hwt_proc_view_pid(const struct hwt_proc_view *v);

#ifdef __cplusplus
}
#endif

#endif /* HWT_PROC_H */

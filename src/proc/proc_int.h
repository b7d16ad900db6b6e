/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Internals of the process model, shared by model.c (records in, queries),
 * view.c (images that follow a pid) and buildid.c (reading ELF notes).
 *
 * Everything is an array: appended in time order (timelines) or kept
 * sorted by a key (pids, tids, cpus, strings) and searched by bisection.
 */
#ifndef HWT_PROC_INT_H
#define HWT_PROC_INT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <hwt/proc.h>

#include "common/grow.h"

/* Interned strings: indices are stable, @sorted orders them for lookup. */
struct proc_strs {
	char **s;
	size_t n, cap;
	uint32_t *sorted;
	size_t capsorted;
};

enum proc_op_kind {
	PROC_OP_MAP,	/* @map appears */
	PROC_OP_CLEAR,	/* the address space is replaced (exec, new pid) */
};

struct proc_op {
	uint64_t time;
	uint32_t kind;
	uint32_t map;
};

/* One address space: the timeline of a pid. */
struct proc_space {
	uint32_t pid;
	uint8_t ended;		/* the leader's EXIT was seen */
	struct proc_op *ops;
	size_t nops, capops;
};

struct proc_mapx {
	struct hwt_proc_map map;
	uint32_t file;		/* index into the path strings */
	uint8_t code;		/* executable user-space file or [vdso] */
};

enum proc_file_state {
	PROC_FILE_UNCHECKED,
	PROC_FILE_READABLE,
	PROC_FILE_MISSING,
};

/* Warnings given once per file. */
#define PROC_WARNED_MISSING  0x1u
#define PROC_WARNED_MISMATCH 0x2u
#define PROC_WARNED_MAP      0x4u

/* What is known about a path; parallel to the path strings. */
struct proc_file {
	char *open_path;	/* below config.root, or the vdso copy */
	uint8_t state;		/* enum proc_file_state */
	uint8_t warned;		/* PROC_WARNED_* */
	uint8_t has_id;		/* the file has a build-id note */
	uint8_t has_hdr_id;	/* HEADER_BUILD_ID names this path */
	uint8_t cache_tried;	/* looked for in the build-id cache */
	uint8_t id_len;		/* @id's length, if @has_id */
	uint8_t hdr_len;	/* @hdr_id's, as recorded (0: not said) */
	uint8_t id[20];		/* zero padded */
	uint8_t hdr_id[20];
};

struct proc_comm {
	uint64_t time;
	uint32_t comm;		/* index into the comm strings */
};

struct proc_thread {
	uint32_t tid, pid;
	struct proc_comm *comms;
	size_t ncomms, capcomms;
};

struct proc_run {
	uint64_t time;
	uint32_t pid, tid;
	uint32_t known;
};

struct proc_cpu {
	uint32_t cpu;
	struct proc_run *runs;
	size_t nruns, capruns;
};

struct hwt_proc_model {
	struct hwt_proc_config config;	/* strings owned (copied) */
	uint64_t now;			/* latest record time */

	struct proc_strs paths, comms;
	struct proc_file *files;	/* paths.n of them */
	size_t capfiles;

	struct proc_mapx *maps;
	size_t nmaps, capmaps;

	struct proc_space *spaces;	/* sorted by pid */
	size_t nspaces, capspaces;
	struct proc_thread *threads;	/* sorted by tid */
	size_t nthreads, capthreads;
	struct proc_cpu *cpus;		/* sorted by cpu */
	size_t ncpus, capcpus;

	struct hwt_proc_map *scratch;	/* hwt_proc_maps' answer */
	size_t capscratch;

	/* Views on several threads: what they learn of files (@files) and
	 * their warnings. */
	pthread_mutex_t lock;

	/* The views' images' files and symbols, or NULL (no_image_cache). */
	struct hwt_image_cache *icache;
};

/* The space of @pid, or NULL. */
struct proc_space *proc_space_find(const struct hwt_proc_model *m,
				   uint32_t pid);

/* Warn through config.warn, printf-style. */
void proc_warn(const struct hwt_proc_model *m, uint64_t time, uint32_t pid,
	       const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif /* HWT_PROC_INT_H */

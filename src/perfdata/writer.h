/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Between the perf.data writer's file handling (writer.c) and its record
 * encoder (writer_records.c). Not a public interface.
 */
#ifndef HWT_PERFDATA_WRITER_H
#define HWT_PERFDATA_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include <hwt/perfdata.h>

/* header.size is 16 bits and records stay 8-byte aligned. */
#define HWT_PD_MAX_RECORD 65528u

/* An attr in the attrs section: the attr and its ids' file section. */
#define HWT_PD_FILE_ATTR_SIZE (sizeof(struct perf_event_attr) + 16)

/* perf's PERF_RECORD_MISC_BUILD_ID_SIZE: the build id record has a size. */
#define HWT_PD_MISC_BUILD_ID_SIZE (1u << 15)

/*
 * The attr whose ids hold @id, else the first one; NULL if there are
 * none. *@first_id is that attr's first id (0 if it has none).
 */
const struct perf_event_attr *hwt_pd_writer_attr_of(struct hwt_pd_writer *w,
						    uint64_t id,
						    uint64_t *first_id);

/* HWT_PD_MAX_RECORD bytes to encode a record in. */
uint8_t *hwt_pd_writer_scratch(struct hwt_pd_writer *w);

/*
 * Append a record of @len bytes, then @dlen bytes of @data and @pad zero
 * bytes (the trace of an AUXTRACE record). Starts the data section.
 */
int hwt_pd_writer_emit(struct hwt_pd_writer *w, const void *rec, size_t len,
		       const void *data, size_t dlen, size_t pad);

/*
 * Refuse a call (bad arguments) with a message for hwt_pd_writer_errmsg():
 * returns @code; the writer stays usable.
 */
int hwt_pd_writer_refuse(struct hwt_pd_writer *w, int code,
			 const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif /* HWT_PERFDATA_WRITER_H */

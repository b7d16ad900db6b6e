/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Inside the perf_event sideband of hwt ptdump and ptxed (ipt_sb.h):
 *   ipt_sb.c        options, channels in time order, the session
 *   ipt_sb_print.c  records as libipt prints them, warnings and errors
 *   ipt_sb_apply.c  process contexts, records applied, the trace's
 *                   place (kernel or user) and context switches
 */
#ifndef HWT_CLI_IPT_SB_INT_H
#define HWT_CLI_IPT_SB_INT_H

#include <stddef.h>
#include <stdint.h>

#include <hwt/perfdata.h>

#include "cli/cli.h"
#include "cli/ipt_sb.h"

struct hwt_event;
struct hwt_blk_decoder;
struct hwt_image;

/* What --sb:* asks to print (libipt's ptsbp_* flags). */
#define SBP_COMPACT  0x1u
#define SBP_VERBOSE  0x2u
#define SBP_FILENAME 0x4u
#define SBP_OFFSET   0x8u
#define SBP_TIME     0x10u

/* libipt-sb's warnings (enum pt_sb_error_code), positive like theirs. */
enum sb_warning {
	SBW_LOST = 1,		/* "sideband lost" */
	SBW_TRACE_LOST,		/* "trace lost" */
	SBW_SECTION_LOST,	/* "image section lost" */
};

enum sb_abi { ABI_UNKNOWN, ABI_X64, ABI_X32, ABI_IA32 };

/* Where the trace is, as far as the events tell. */
enum sb_loc {
	LOC_UNKNOWN,
	LOC_KERNEL,
	LOC_LIKELY_KERNEL,
	LOC_USER,
	LOC_LIKELY_USER,
};

/* A mapping of a context: an mmap of a file, or an ELF file (kcore). */
struct sb_map {
	char *path;
	uint64_t pgoff, len, vaddr;
	int elf;
};

struct sb_maps {
	struct sb_map *v;
	size_t n, cap;
};

struct sb_ctx {
	struct sb_ctx *next;		/* in the session's list */
	uint32_t pid;
	unsigned refs;
	enum sb_abi abi;
	struct sb_maps maps;
	struct hwt_image *image;	/* made at the first switch to it */
	char name[16];			/* "pid-N", as libipt names images */
};

/* What --pevent:* set when a channel was given. */
struct sb_config {
	uint64_t sample_type, time_zero, tsc_offset, kernel_start;
	uint32_t time_mult;
	uint16_t time_shift;
	const char *sysroot, *vdso[4];	/* by enum sb_abi */
	/* --pevent:sample-config (the session's; copied for channels) */
	struct hwt_pd_raw_type *types;
	size_t ntypes;
};

/* The sample_id_all trailer, field by field (perf's order). */
struct trailer {
	uint32_t pid, tid, cpu;
	uint64_t time, id, stream_id, identifier;
	uint32_t present;		/* HWT_PD_SID_* */
};

struct sb_chan {
	struct sb_chan *next;
	struct hwt_pd_reader *rd;
	char *filename;			/* as given, for messages */
	uint64_t begin;			/* of the records in the file */
	struct sb_config cfg;
	int primary;
	struct hwt_pd_record rec;	/* the record fetched last */
	uint64_t rec_off;		/* its offset, for messages */
	int have;			/* rec is valid, not yet applied */
	struct trailer tr;		/* rec's samples, read once */
	uint64_t tsc;			/* when rec is due */
	enum sb_loc loc;
	struct sb_ctx *ctx, *next_ctx;
};

struct cli_sb {
	struct hwt_blk_decoder *dec;	/* ptxed's (cli_sb_attach()) */
	int ptxed;
	cli_sb_write_fn *write;
	void *write_ctx;

	uint32_t flags;			/* SBP_* */
	int warn, show_switch;
	struct sb_config cfg;		/* for the next --pevent */

	struct sb_chan *given;		/* in the order given, until start */
	struct sb_chan *active;		/* by tsc */
	struct sb_chan *retired;	/* at their end */
	struct sb_chan *removed;	/* after an error */

	struct sb_ctx *ctxs;
	struct sb_maps kernel;		/* --pevent:kcore */
	struct sb_ctx *image_ctx;	/* whose image the decoder has, if
					 * not the user's --raw/--elf one */
};

/* ipt_sb_print.c */
void sb_emit(struct cli_sb *sb, struct cli_text *t);
/*
 * A problem with @ch's current record: @code > 0 a warning (shown with
 * --sb:warn), < 0 an error (always shown). Decoding goes on either way,
 * as libipt's tools do.
 */
void sb_report(struct cli_sb *sb, const struct sb_chan *ch, int code);
/* The trailer of @rec, laid out as its attr says (the sample type of
 * its event, or --pevent:sample-type's): -HWT_ERR_BAD_PACKET if the
 * record is too short for it. None (nothing present) for record types
 * libipt does not take apart, as libipt. */
int sb_parse_trailer(const struct hwt_pd_record *rec, struct trailer *tr);
void sb_print_record(struct cli_sb *sb, const struct sb_chan *ch);

/* ipt_sb_apply.c */
int sb_maps_add(struct sb_maps *m, const char *path, uint64_t pgoff,
		uint64_t len, uint64_t vaddr, int elf);
void sb_maps_free(struct sb_maps *m);
void sb_ctx_put(struct cli_sb *sb, struct sb_ctx *c);
/*
 * @ch sees @ev: its record, if due, is applied (returns 1); else the
 * location is followed and a prepared switch made where it fits.
 * Returns -HWT_ERR_EOS when a channel at its end has nothing left to do.
 */
int sb_present(struct cli_sb *sb, struct sb_chan *ch,
	       const struct hwt_event *ev);

#endif /* HWT_CLI_IPT_SB_INT_H */

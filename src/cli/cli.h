/* SPDX-License-Identifier: BSD-2-Clause */
/* The hwt command line: subcommands and the helpers they share. */
#ifndef HWT_CLI_H
#define HWT_CLI_H

#include <stddef.h>
#include <stdint.h>

/* Each subcommand: argv[0] is the subcommand name. Returns the exit code. */
int cmd_dump(int argc, char **argv);
int cmd_ptdump(int argc, char **argv);

/* One-paragraph help for each subcommand (printed by `hwt help CMD`). */
void help_dump(void);
void help_ptdump(void);

/*
 * A read-only view of (part of) a file, mmap'd. Named as FILE[:from[-to]]
 * (from/to: byte offsets in C notation, to exclusive), as ptdump does.
 */
struct cli_input {
	const uint8_t *data;	/* the selected range */
	size_t size;
	uint64_t offset;	/* file offset of data[0] */
	void *map;		/* mapping to release (page aligned) */
	size_t map_size;
};

/*
 * Open @spec. On failure print one line "hwt: ..." naming the problem to
 * stderr and return -1. An empty file (or range) is an error.
 */
int cli_input_open(struct cli_input *in, const char *spec, const char *prog);
void cli_input_close(struct cli_input *in);

/* Parse an unsigned integer (C notation) into @value; 0 or -1. */
int cli_parse_u64(const char *str, uint64_t *value);

#endif

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libipt's perf_event sideband for hwt ptdump and hwt ptxed: the --sb:*
 * and --pevent:* options, the records printed in time order between
 * packets or instructions, and (ptxed) the process images they describe,
 * switched as the trace moves between processes. It behaves as libipt's
 * libipt-sb with its pevent decoder does, so that libipt's test
 * expectations hold for hwt: see doc/howto-flow.md, "Sideband".
 *
 * A sideband file is a raw stream of perf records (hwt_pd_open_raw()),
 * one per channel: --pevent:primary (may switch the decoder's image) or
 * --pevent:secondary (adds mappings only).
 */
#ifndef HWT_CLI_IPT_SB_H
#define HWT_CLI_IPT_SB_H

#include <stddef.h>
#include <stdint.h>

struct hwt_blk_decoder;
struct hwt_event;

struct cli_sb;

/* Where text goes: called with whole lines. */
typedef void cli_sb_write_fn(void *ctx, const char *text, size_t len);

/*
 * @ptxed selects ptxed's defaults and its wording of sideband errors.
 * Process images are made and switched only with a decoder attached
 * (cli_sb_attach(); ptxed): ptdump prints only.
 */
struct cli_sb *cli_sb_new(int ptxed, cli_sb_write_fn *write,
			  void *write_ctx);
/* The session owns the process images it gives the decoder: detach the
 * decoder (cli_sb_attach(sb, NULL)) and delete it first. */
void cli_sb_delete(struct cli_sb *sb);

/* ptxed: the decoder whose image context switches set (or NULL). */
void cli_sb_attach(struct cli_sb *sb, struct hwt_blk_decoder *dec);

/*
 * An option at @argv[*i]: 0 if it is not a sideband option, 1 if it was
 * taken (*i moved past its argument, if any), -1 after a message on
 * stderr.
 */
int cli_sb_option(struct cli_sb *sb, const char *prog, int argc, char **argv,
		  int *i);

/* The options' help lines, text starting at column @width + 2. */
void cli_sb_help(int ptxed, int width);

/* Any --pevent channel given? */
int cli_sb_active(const struct cli_sb *sb);

/* Read each channel's first record; call once, after the options. */
void cli_sb_start(struct cli_sb *sb);

/* ptdump: print the records due at @tsc (UINT64_MAX: all that are left). */
void cli_sb_dump(struct cli_sb *sb, uint64_t tsc);

/* ptxed: the decoder's event @ev; records due are printed and applied. */
void cli_sb_event(struct cli_sb *sb, const struct hwt_event *ev);

#endif /* HWT_CLI_IPT_SB_H */

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hwt ptxed: a drop-in for libipt's ptxed. Same command line, same output
 * (instructions, events, diagnostics and their wording, statistics), so
 * libipt's test expectations and scripts written for ptxed keep working.
 *
 * Both --block-decoder (the default) and --insn-decoder run hwt's block
 * decoder; the instruction decoder's output is the block decoder's
 * instructions one by one. Disassembly is Zydis' (Intel syntax, or AT&T
 * with --att), not XED's: the text differs from ptxed's, everything else
 * does not.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hwt/analysis.h>
#include <hwt/flow.h>
#include <hwt/image.h>
#include <hwt/pt.h>

#include "cli/cli.h"
#include "cli/ipt_sb.h"

#ifndef HWT_VERSION
#define HWT_VERSION "0.1.0"
#endif

#define STAT_INSN   0x1u
#define STAT_BLOCKS 0x2u

struct ptxed_options {
	const char *pt;			/* --pt argument */
	struct hwt_blk_config config;
	uint32_t stat_flags;
	unsigned insn_decoder:1;
	unsigned no_inst:1;
	unsigned quiet:1;
	unsigned stats:1;
	unsigned track_blocks:1;
	unsigned att:1;
	unsigned offset:1;
	unsigned time:1;
	unsigned raw_insn:1;
	unsigned check:1;
	unsigned event_time:1;
	unsigned event_ip:1;
	unsigned cpu_error:1;		/* print ptxed's config error */
};

struct ptxed {
	const struct ptxed_options *opt;
	struct hwt_image *image;
	struct hwt_blk_decoder *dec;
	struct cli_disasm *dis;
	struct cli_disasm_memo *memo;	/* the instructions' texts */
	struct hwt_an_walks *walks;	/* the blocks' walks, or NULL */
	struct cli_sb *sb;		/* --pevent sideband, or NULL */
	struct cli_out out;
	uint64_t ninsn, nblocks;
	uint64_t time;			/* tsc of the last event */
	uint64_t offset;		/* trace offset of the current block */
};

/* ------------------------------------------------------------------ */
/* Diagnostics                                                         */
/* ------------------------------------------------------------------ */

/* "[offset, ip: what: error]" */
static void diagnose(struct ptxed *px, uint64_t ip, const char *what, int err)
{
	uint64_t pos = 0;
	int e = hwt_blk_get_offset(px->dec, &pos);

	if (e < 0) {
		cli_out_printf(&px->out, "could not determine offset: %s\n",
			       cli_ipt_errstr(e));
		cli_out_printf(&px->out, "[?, %" PRIx64 ": %s: %s]\n", ip,
			       what, cli_ipt_errstr(err));
		return;
	}
	cli_out_printf(&px->out, "[%" PRIx64 ", %" PRIx64 ": %s: %s]\n", pos,
		       ip, what, cli_ipt_errstr(err));
}

/*
 * The instruction after the last one of @block, the way ptxed finds it:
 * fall-through, or the target of a direct branch. Returns 0 or an error.
 */
static int block_next_ip(const struct ptxed *px,
			 const struct hwt_block *block, uint64_t *next)
{
	struct hwt_insn_info info;
	const uint8_t *code;
	size_t avail;
	int err;

	if (block->truncated) {
		code = block->raw;
		avail = block->size;
	} else {
		err = hwt_image_read(hwt_blk_image(px->dec), block->end_ip, &code,
				     &avail);
		if (err < 0)
			return err;
	}
	err = hwt_insn_decode(&info, code, avail, block->end_ip, block->mode);
	if (err < 0)
		return err;
	*next = (info.flags & HWT_INSN_DIRECT) ? info.target :
						 block->end_ip + info.size;
	return 0;
}

/* ptxed's choice of IP for an error after @block. */
static void diagnose_block(struct ptxed *px, const char *what, int err,
			   const struct hwt_block *block)
{
	uint64_t ip, next;

	if (px->opt->insn_decoder) {
		/* The instruction decoder names the instruction it failed
		 * at, which is where the block decoder stopped. */
		if (hwt_blk_get_ip(px->dec, &ip) < 0)
			ip = block->ninsn ? block->end_ip : block->ip;
		diagnose(px, ip, what, err);
		return;
	}
	if (!block->ninsn) {
		ip = block->ip;
	} else {
		ip = block->end_ip;
		if ((err == -HWT_ERR_NOMAP || err == -HWT_ERR_BAD_INSN) &&
		    block_next_ip(px, block, &next) == 0)
			ip = next;
	}
	diagnose(px, ip, what, err);
}

/* ------------------------------------------------------------------ */
/* Instructions and blocks                                             */
/* ------------------------------------------------------------------ */

/* The line prefix: offset, time, speculation mark and the IP. */
static char *insn_prefix(const struct ptxed *px, char *p, uint64_t ip,
			 int speculative)
{
	const struct ptxed_options *opt = px->opt;

	if (opt->offset) {
		p = cli_put_hex16(p, px->offset);
		*p++ = ' ';
		*p++ = ' ';
	}
	if (opt->time) {
		p = cli_put_hex16(p, px->time);
		*p++ = ' ';
		*p++ = ' ';
	}
	if (speculative) {
		*p++ = '?';
		*p++ = ' ';
	}
	return cli_put_hex16(p, ip);
}

/* Room for one instruction line: columns plus disassembly. */
#define INSN_LINE_MAX 512

/* An instruction's line from its text (--no-inst: none), without its
 * bytes (print_insn() prints them where asked). */
static void print_text(struct ptxed *px, uint64_t ip, int speculative,
		       const char *text, size_t tlen)
{
	char *p = cli_out_reserve(&px->out, INSN_LINE_MAX);

	p = insn_prefix(px, p, ip, speculative);
	if (text) {
		*p++ = ' ';
		*p++ = ' ';
		memcpy(p, text, tlen);
		p += tlen;
	}
	*p++ = '\n';
	cli_out_commit(&px->out, p);
}

static void print_insn(struct ptxed *px, const struct hwt_insn *insn)
{
	const struct ptxed_options *opt = px->opt;
	static const char hex[] = "0123456789abcdef";
	char *p = cli_out_reserve(&px->out, INSN_LINE_MAX);
	const char *text;
	size_t tlen = 0;

	p = insn_prefix(px, p, insn->ip, insn->speculative);
	if (!opt->no_inst) {
		int ok;

		text = cli_disasm_text(px->dis, px->memo, insn->mode,
				       insn->raw, insn->size, insn->ip, &tlen);
		ok = text != NULL;

		if (opt->raw_insn || !ok) {
			unsigned i;

			for (i = 0; i < insn->size && i < 15; i++) {
				*p++ = ' ';
				*p++ = hex[insn->raw[i] >> 4];
				*p++ = hex[insn->raw[i] & 0xf];
			}
			for (; i < 15; i++) {
				*p++ = ' ';
				*p++ = ' ';
				*p++ = ' ';
			}
		}
		if (ok) {
			*p++ = ' ';
			*p++ = ' ';
			memcpy(p, text, tlen);
			p += tlen;
		} else {
			static const char msg[] = " [decode error]";

			memcpy(p, msg, sizeof(msg) - 1);
			p += sizeof(msg) - 1;
		}
	}
	*p++ = '\n';
	cli_out_commit(&px->out, p);
}

/* Is @ours a class libipt's ptxed --check accepts for @ref? */
static int iclass_ok(int ours, int ref, const char *mnemonic)
{
	if (ours == ref)
		return 1;
	/* libipt >= 2.1 may call any branch with a trace target indirect. */
	if (ours == HWT_IC_INDIRECT && ref != HWT_IC_OTHER &&
	    ref != HWT_IC_COND_JUMP && ref != HWT_IC_PTWRITE)
		return 1;
	/* vmlaunch/vmresume: a far jump to the flow layer, a far return
	 * to ptxed's table. */
	if (mnemonic && (!strcmp(mnemonic, "vmlaunch") ||
			 !strcmp(mnemonic, "vmresume")))
		return ours == HWT_IC_FAR_JUMP || ours == HWT_IC_FAR_RETURN;
	return 0;
}

static void check_insn(struct ptxed *px, const struct hwt_insn *insn,
		       int check_class)
{
	const char *mnemonic = NULL;
	int ref;

	ref = cli_disasm_class(px->dis, insn->mode, insn->raw, insn->size,
			       &mnemonic);
	if (ref < 0) {
		cli_out_printf(&px->out, "[%" PRIx64 ", %" PRIx64
			       ": check error: invalid instruction]\n",
			       px->offset, insn->ip);
		return;
	}
	if (check_class && insn->iclass != HWT_IC_UNKNOWN &&
	    !iclass_ok(insn->iclass, ref, mnemonic))
		cli_out_printf(&px->out, "[%" PRIx64 ", %" PRIx64
			       ": iclass error: iclass: %s, zydis iclass: %s]\n",
			       px->offset, insn->ip,
			       cli_iclass_name(insn->iclass),
			       mnemonic ? mnemonic : "?");
}

/* The instruction at *@ip of @block; advances *@ip within the block. */
static int block_insn(const struct ptxed *px, const struct hwt_block *block,
		      uint64_t *ip, struct hwt_insn *insn)
{
	if (*ip == block->end_ip && block->truncated) {
		memset(insn, 0, sizeof(*insn));
		if (!block->size || block->size > sizeof(insn->raw))
			return -HWT_ERR_BAD_INSN;
		insn->ip = *ip;
		insn->size = block->size;
		insn->iclass = block->iclass;
		insn->mode = block->mode;
		insn->speculative = block->speculative;
		memcpy(insn->raw, block->raw, block->size);
		*ip += block->size;
		return 0;
	}
	/* The decoder's image: a context switch changes it. */
	return hwt_blk_insn_walk(hwt_blk_image(px->dec), block->mode, ip,
				 insn);
}

/* The fetch error at @ip, as ptxed prints it. */
static void fetch_error(struct ptxed *px, uint64_t ip, int speculative,
			int err)
{
	char *p = cli_out_reserve(&px->out, 64);

	cli_out_commit(&px->out, insn_prefix(px, p, ip, speculative));
	cli_out_printf(&px->out, " [fetch error: %s]\n", cli_ipt_errstr(err));
}

/*
 * print_block() from @block's kept walk (hwt_an_walks_get()): where each
 * instruction starts is the one before's end, or after a direct call or
 * jump inside the block its target, and its text comes from the memo by
 * the image, so hot code is neither walked nor read again (walking each
 * instruction was half of hwt ptxed's time). An instruction whose text
 * the memo cannot give (it does not decode, or its bytes are not in one
 * piece) is walked and printed the general way. 0: not done here (the
 * caller walks the block), else 1.
 */
static int print_walked(struct ptxed *px, const struct hwt_block *block)
{
	struct hwt_image *image = hwt_blk_image(px->dec);
	struct cli_image_key key = cli_image_key(image);
	struct hwt_an_walk w;
	struct hwt_insn insn;
	uint64_t ip = block->ip, cur = ip, next;
	const char *text = NULL;
	size_t tlen = 0;
	uint32_t i, k = 0;
	int err, again;

	if (!px->walks || block->truncated || px->opt->raw_insn)
		return 0;
	err = hwt_an_walks_get(px->walks, image, block, &w);
	if (err == -HWT_ERR_NOMEM)
		return 0;
	for (i = 0; i < w.ninsn; i++) {
		cur = ip;
		if (!px->opt->no_inst) {
			text = cli_disasm_text_at(px->dis, px->memo, &key,
						  block->mode, cur, w.sizes[i],
						  &tlen);
			if (!text) {
				next = cur;
				again = hwt_blk_insn_walk(image, block->mode,
							  &next, &insn);
				if (again < 0) {
					err = again;
					break;
				}
				insn.speculative = block->speculative;
				print_insn(px, &insn);
			}
		}
		if (text || px->opt->no_inst)
			print_text(px, cur, block->speculative, text, tlen);
		ip = hwt_an_walk_next(&w, i, cur, &k);
	}
	if (err < 0) {
		/* At the instruction that could not be read: the walk's
		 * next one, or the one read again here. */
		if (i == w.ninsn)
			cur = ip;
		fetch_error(px, cur, block->speculative, err);
	}
	/* Walking the block must end at its last instruction. */
	if (cur != block->end_ip)
		diagnose(px, cur, "reconstruct error", -HWT_ERR_NOSYNC);
	return 1;
}

static void print_block(struct ptxed *px, const struct hwt_block *block)
{
	const struct ptxed_options *opt = px->opt;
	struct hwt_insn insn;
	uint64_t ip, cur = 0;
	uint32_t n;
	int err;

	if (opt->track_blocks && !opt->insn_decoder) {
		if (opt->stats)
			cli_out_printf(&px->out, "[block %" PRIx64 "]\n",
				       px->nblocks);
		else
			cli_out_printf(&px->out, "[block]\n");
	}
	if (!block->ninsn || print_walked(px, block))
		return;

	ip = block->ip;
	for (n = block->ninsn;;) {
		cur = ip;
		err = block_insn(px, block, &ip, &insn);
		if (err < 0) {
			fetch_error(px, cur, block->speculative, err);
			break;
		}
		insn.speculative = block->speculative;
		print_insn(px, &insn);
		if (!--n)
			break;
	}
	/* Walking the block must end at its last instruction. */
	if (cur != block->end_ip)
		diagnose(px, cur, "reconstruct error", -HWT_ERR_NOSYNC);
}

static void check_block(struct ptxed *px, const struct hwt_block *block)
{
	struct hwt_insn insn;
	uint64_t ip, cur = 0;
	uint32_t n;
	int err;

	ip = block->ip;
	for (n = block->ninsn; n > 0; n--) {
		cur = ip;
		err = block_insn(px, block, &ip, &insn);
		if (err < 0) {
			cli_out_printf(&px->out, "[%" PRIx64 ", %" PRIx64
				       ": fetch error: %s]\n", px->offset, cur,
				       cli_ipt_errstr(err));
			return;
		}
		if (px->opt->insn_decoder)
			check_insn(px, &insn, 1);
		else
			check_insn(px, &insn, n == 1);
	}
	if (block->ninsn && cur != block->end_ip)
		cli_out_printf(&px->out, "[%" PRIx64 ", %" PRIx64
			       ": error: did not reach end: %" PRIx64 "]\n",
			       px->offset, cur, block->end_ip);
}

static void __attribute__((noinline))
show_block(struct ptxed *px, const struct hwt_block *block)
{
	if (!px->opt->quiet)
		print_block(px, block);
	if (px->opt->check)
		check_block(px, block);
}

static inline void account_block(struct ptxed *px,
				 const struct hwt_block *block)
{
	px->ninsn += block->ninsn;
	px->nblocks += 1;
	if (!px->opt->quiet || px->opt->check)
		show_block(px, block);
}

static void account_blocks(struct ptxed *px, const struct hwt_block *b,
			   size_t n)
{
	uint64_t ninsn = 0;

	if (!px->opt->quiet || px->opt->check) {
		for (size_t i = 0; i < n; i++)
			account_block(px, &b[i]);
		return;
	}
	for (size_t i = 0; i < n; i++)
		ninsn += b[i].ninsn;
	px->ninsn += ninsn;
	px->nblocks += n;
}

/* ------------------------------------------------------------------ */
/* Events                                                              */
/* ------------------------------------------------------------------ */

static int drain_events(struct ptxed *px, int status)
{
	const struct ptxed_options *opt = px->opt;
	struct hwt_event ev;
	char text[256];
	uint64_t offset;
	int err;

	while (status & HWT_STS_EVENT_PENDING) {
		offset = 0;
		if (opt->offset) {
			err = hwt_blk_get_offset(px->dec, &offset);
			if (err < 0)
				return err;
		}
		status = hwt_blk_event(px->dec, &ev);
		if (status < 0)
			return status;
		px->time = ev.tsc;
		if (!opt->quiet && !ev.status_update) {
			cli_ipt_event(text, sizeof(text), &ev, opt->event_ip);

			char *p = cli_out_reserve(&px->out, 64 + sizeof(text));

			*p++ = '[';
			if (opt->offset) {
				p = cli_put_hex16(p, offset);
				*p++ = ' ';
				*p++ = ' ';
			}
			if (opt->event_time && ev.has_tsc) {
				p = cli_put_hex16(p, ev.tsc);
				*p++ = ' ';
				*p++ = ' ';
			}
			for (const char *s = text; *s; s++)
				*p++ = *s;
			*p++ = ']';
			*p++ = '\n';
			cli_out_commit(&px->out, p);
		}
		/* Every event, status updates too: they carry the time. */
		if (px->sb)
			cli_sb_event(px->sb, &ev);
	}
	return status;
}

/* ------------------------------------------------------------------ */
/* The decode loop, as ptxed's                                         */
/* ------------------------------------------------------------------ */

/* Blocks per hwt_blk_next_batch(). */
#define BATCH 256

static void decode(struct ptxed *px)
{
	const struct ptxed_options *opt = px->opt;
	uint64_t sync = 0, new_sync;
	struct hwt_block block, batch[BATCH];
	int status, err;
	size_t n;

	for (;;) {
		memset(&block, 0, sizeof(block));

		status = hwt_blk_sync_forward(px->dec);
		if (status < 0) {
			if (status == -HWT_ERR_EOS)
				break;
			diagnose_block(px, "sync error", status, &block);
			/* No progress: we never will. ptxed reports the
			 * error twice to show that it tried again. */
			err = hwt_blk_get_offset(px->dec, &new_sync);
			if (err < 0 || new_sync <= sync)
				break;
			sync = new_sync;
			continue;
		}

		for (;;) {
			status = drain_events(px, status);
			if (status < 0)
				break;
			if (status & HWT_STS_EOS) {
				if (!(status & HWT_STS_IP_SUPPRESSED) &&
				    !opt->quiet)
					cli_out_printf(&px->out,
						       "[end of trace]\n");
				status = -HWT_ERR_EOS;
				break;
			}
			if (opt->offset || opt->check) {
				err = hwt_blk_get_offset(px->dec, &px->offset);
				if (err < 0) {
					status = err;
					break;
				}
				memset(&block, 0, sizeof(block));
				status = hwt_blk_next(px->dec, &block);
			} else {
				/* No per-block offset: many at once. */
				status = hwt_blk_next_batch(px->dec, batch,
							    BATCH, &n);
				if (!n)
					break;
				account_blocks(px, batch, n - 1);
				block = batch[n - 1];
			}
			if (status < 0) {
				/* What was executed up to the error. */
				if (block.ninsn)
					account_block(px, &block);
				break;
			}
			account_block(px, &block);
		}

		if (!status)
			status = -HWT_ERR_INTERNAL;
		if (status == -HWT_ERR_EOS)
			break;
		diagnose_block(px, "error", status, &block);
	}
}

/* ------------------------------------------------------------------ */
/* Command line                                                        */
/* ------------------------------------------------------------------ */

static void print_help(const char *name)
{
	printf("usage: %s [<options>]\n\n", name);
	printf("options:\n"
	       "  --help|-h                            this text.\n"
	       "  --version                            display version information and exit.\n"
	       "  --att                                print instructions in att format.\n"
	       "  --no-inst                            do not print instructions (only addresses).\n"
	       "  --quiet|-q                           do not print anything (except errors).\n"
	       "  --offset                             print the offset into the trace file.\n"
	       "  --time                               print the current timestamp.\n"
	       "  --raw-insn                           print the raw bytes of each instruction.\n"
	       "  --check                              perform checks (expensive).\n"
	       "  --iscache-limit <size>               accepted and ignored (hwt maps files once).\n"
	       "  --event:time                         print the tsc for events if available.\n"
	       "  --event:ip                           print the ip of events if available.\n"
	       "  --event:tick                         request tick events.\n"
	       "  --event:iflags                       request iflags events.\n"
	       "  --filter:addr<n>_cfg <cfg>           set IA32_RTIT_CTL.ADDRn_CFG to <cfg>.\n"
	       "  --filter:addr<n>_a <base>            set IA32_RTIT_ADDRn_A to <base>.\n"
	       "  --filter:addr<n>_b <limit>           set IA32_RTIT_ADDRn_B to <limit>.\n"
	       "  --stat                               print statistics (even when quiet).\n"
	       "                                       collects all statistics unless one or more are selected.\n"
	       "  --stat:insn                          collect number of instructions.\n"
	       "  --stat:blocks                        collect number of blocks.\n"
	       "  --verbose|-v                         accepted (no section load messages).\n"
	       "  --pt <file>[:<from>[-<to>]]          load the processor trace data from <file>.\n"
	       "                                       an optional offset or range can be given.\n"
	       "  --elf <<file>[:<base>]               load an ELF from <file> at address <base>.\n"
	       "                                       use the default load address if <base> is omitted.\n"
	       "  --raw <file>[:<from>[-<to>]]:<base>  load a raw binary from <file> at address <base>.\n"
	       "                                       an optional offset or range can be given.\n"
	       "  --cpu none|auto|f/m[/s]              set cpu to the given value and decode according to:\n"
	       "                                         none     spec (default)\n"
	       "                                         auto     current cpu (Intel only)\n"
	       "                                         f/m[/s]  family/model[/stepping]\n"
	       "  --mtc-freq <n>                       set the MTC frequency (IA32_RTIT_CTL[17:14]) to <n>.\n"
	       "  --nom-freq <n>                       set the nominal frequency (MSR_PLATFORM_INFO[15:8]) to <n>.\n"
	       "  --cpuid-0x15.eax                     set the value of cpuid[0x15].eax.\n"
	       "  --cpuid-0x15.ebx                     set the value of cpuid[0x15].ebx.\n"
	       "  --insn-decoder                       print instruction by instruction (as ptxed's\n"
	       "                                       instruction flow decoder).\n"
	       "  --insn:keep-tcal-on-ovf              preserve timing calibration on overflow.\n"
	       "  --block-decoder                      use the block decoder (default).\n"
	       "  --block:show-blocks                  show blocks in the output.\n"
	       "  --block:end-on-call                  set the end-on-call block decoder flag.\n"
	       "  --block:end-on-jump                  set the end-on-jump block decoder flag.\n"
	       "  --block:keep-tcal-on-ovf             preserve timing calibration on overflow.\n");
	cli_sb_help(1, 37);
	printf("\n"
	       "You must specify at least one binary or ELF file (--raw|--elf).\n"
	       "You must specify exactly one processor trace file (--pt).\n"
	       "\n"
	       "Differences from libipt's ptxed: instructions are disassembled with\n"
	       "Zydis, not XED, so the instruction text differs (addresses, events,\n"
	       "errors and statistics do not; libipt's tests use --no-inst). --check\n"
	       "compares hwt's instruction classes with Zydis' mnemonics. Both\n"
	       "decoder choices run hwt's block decoder. For perf.data files\n"
	       "(sideband included) see 'hwt flow'.\n");
}

void help_ptxed(void)
{
	print_help("hwt ptxed");
}

/* --filter:addrN_cfg/_a/_b; 1 if @arg is one, -1 on a bad value. */
static int filter_option(const char *prog, const char *arg,
			 const char *value, struct hwt_qry_config *qry)
{
	unsigned n;
	char what[4];
	uint64_t v;

	if (strncmp(arg, "--filter:addr", 13) || arg[13] < '0' ||
	    arg[13] > '3' || arg[14] != '_')
		return 0;
	n = (unsigned)(arg[13] - '0');
	if (strlen(arg + 15) >= sizeof(what))
		return 0;
	strcpy(what, arg + 15);
	if (!strcmp(what, "cfg")) {
		if (cli_ipt_get_arg(prog, arg, value, 15, &v))
			return -1;
		qry->addr_filter[n].cfg = (uint8_t)v;
	} else if (!strcmp(what, "a")) {
		if (cli_ipt_get_arg(prog, arg, value, UINT64_MAX, &v))
			return -1;
		qry->addr_filter[n].a = v;
	} else if (!strcmp(what, "b")) {
		if (cli_ipt_get_arg(prog, arg, value, UINT64_MAX, &v))
			return -1;
		qry->addr_filter[n].b = v;
	} else {
		return 0;
	}
	return 1;
}

/* Flags without argument. Returns 1 if @arg was one. */
static int flag_option(const char *arg, struct ptxed_options *opt)
{
	struct hwt_blk_config *cfg = &opt->config;

	if (!strcmp(arg, "--att"))
		opt->att = 1;
	else if (!strcmp(arg, "--no-inst"))
		opt->no_inst = 1;
	else if (!strcmp(arg, "--quiet") || !strcmp(arg, "-q"))
		opt->quiet = 1;
	else if (!strcmp(arg, "--offset"))
		opt->offset = 1;
	else if (!strcmp(arg, "--time"))
		opt->time = 1;
	else if (!strcmp(arg, "--raw-insn"))
		opt->raw_insn = 1;
	else if (!strcmp(arg, "--check"))
		opt->check = 1;
	else if (!strcmp(arg, "--event:time"))
		opt->event_time = 1;
	else if (!strcmp(arg, "--event:ip"))
		opt->event_ip = 1;
	else if (!strcmp(arg, "--event:tick"))
		cfg->flags |= HWT_BLK_ENABLE_TICK;
	else if (!strcmp(arg, "--event:iflags"))
		cfg->qry.flags |= HWT_QRY_EVENT_TRACE;
	else if (!strcmp(arg, "--stat"))
		opt->stats = 1;
	else if (!strcmp(arg, "--stat:insn")) {
		opt->stats = 1;
		opt->stat_flags |= STAT_INSN;
	} else if (!strcmp(arg, "--stat:blocks")) {
		opt->stats = 1;
		opt->stat_flags |= STAT_BLOCKS;
	} else if (!strcmp(arg, "--verbose") || !strcmp(arg, "-v"))
		;
	else if (!strcmp(arg, "--insn:keep-tcal-on-ovf") ||
		 !strcmp(arg, "--block:keep-tcal-on-ovf"))
		cfg->qry.flags |= HWT_QRY_KEEP_TCAL_ON_OVF;
	else if (!strcmp(arg, "--block:show-blocks"))
		opt->track_blocks = 1;
	else if (!strcmp(arg, "--block:end-on-call"))
		cfg->flags |= HWT_BLK_END_ON_CALL;
	else if (!strcmp(arg, "--block:end-on-jump"))
		cfg->flags |= HWT_BLK_END_ON_JUMP;
	else
		return 0;
	return 1;
}

/* Options with a number. Returns 1 if @arg was one, -1 on error. */
static int number_option(const char *prog, const char *arg, const char *value,
			 struct ptxed_options *opt)
{
	struct hwt_time_config *time = &opt->config.qry.time;
	uint64_t v;

	if (!strcmp(arg, "--mtc-freq")) {
		if (cli_ipt_get_arg(prog, arg, value, UINT8_MAX, &v))
			return -1;
		time->mtc_freq = (uint8_t)v;
	} else if (!strcmp(arg, "--nom-freq")) {
		if (cli_ipt_get_arg(prog, arg, value, UINT8_MAX, &v))
			return -1;
		time->nom_freq = (uint8_t)v;
	} else if (!strcmp(arg, "--cpuid-0x15.eax")) {
		if (cli_ipt_get_arg(prog, arg, value, UINT32_MAX, &v))
			return -1;
		time->cpuid_0x15_eax = (uint32_t)v;
	} else if (!strcmp(arg, "--cpuid-0x15.ebx")) {
		if (cli_ipt_get_arg(prog, arg, value, UINT32_MAX, &v))
			return -1;
		time->cpuid_0x15_ebx = (uint32_t)v;
	} else if (!strcmp(arg, "--iscache-limit")) {
		if (cli_ipt_get_arg(prog, arg, value, UINT64_MAX, &v))
			return -1;
	} else {
		return 0;
	}
	return 1;
}

/*
 * ptxed's command line, in order (--raw/--elf load as they come). Returns
 * 0 to go on, 1 for done (help, version), -1 for an error.
 */
static int parse_args(int argc, char **argv, struct ptxed_options *opt,
		      struct hwt_image *image, struct cli_sb *sb)
{
	const char *prog = argv[0];
	int i, r;

	for (i = 1; i < argc; i++) {
		const char *arg = argv[i];
		const char *next = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
			print_help(prog);
			return 1;
		}
		if (!strcmp(arg, "--version")) {
			printf("%s-%s / hwt-%s\n", prog, HWT_VERSION,
			       HWT_VERSION);
			return 1;
		}
		if (flag_option(arg, opt))
			continue;
		if (!strcmp(arg, "--pt")) {
			if (!next) {
				fprintf(stderr, "%s: --pt: missing argument.\n",
					prog);
				return -1;
			}
			if (opt->pt) {
				fprintf(stderr, "%s: duplicate pt sources: %s.\n",
					prog, next);
				return -1;
			}
			opt->pt = next;
			i++;
			continue;
		}
		if (!strcmp(arg, "--raw") || !strcmp(arg, "--elf")) {
			int raw = arg[2] == 'r';

			if (!next) {
				fprintf(stderr, "%s: %s: missing argument.\n",
					prog, arg);
				return -1;
			}
			if (raw ? cli_image_raw(image, next, prog) :
				  cli_image_elf(image, next, prog, 1)) {
				fprintf(stderr, "%s: %s: failed to load '%s'.\n",
					prog, arg, next);
				return -1;
			}
			i++;
			continue;
		}
		if (!strcmp(arg, "--insn-decoder") ||
		    !strcmp(arg, "--block-decoder")) {
			if (opt->pt) {
				fprintf(stderr, "%s: please specify %s before "
					"the pt source file.\n", prog, arg);
				return -1;
			}
			opt->insn_decoder = arg[2] == 'i';
			continue;
		}
		if (!strcmp(arg, "--cpu")) {
			if (opt->pt) {
				fprintf(stderr, "%s: please specify cpu before "
					"the pt source file.\n", prog);
				return -1;
			}
			if (cli_ipt_parse_cpu(prog, next, &opt->config.qry.cpu))
				return -1;
			i++;
			continue;
		}
		r = cli_sb_option(sb, prog, argc, argv, &i);
		if (r < 0)
			return -1;
		if (r > 0)
			continue;
		r = filter_option(prog, arg, next, &opt->config.qry);
		if (r && opt->pt) {
			fprintf(stderr, "%s: please specify %s before --pt.\n",
				prog, arg);
			return -1;
		}
		if (!r)
			r = number_option(prog, arg, next, opt);
		if (r < 0)
			return -1;
		if (r > 0) {
			i++;
			continue;
		}
		fprintf(stderr, "%s: unknown option: %s.\n", prog, arg);
		return -1;
	}
	return 0;
}

static void print_stats(struct ptxed *px)
{
	const struct ptxed_options *opt = px->opt;

	if (opt->stat_flags & STAT_INSN)
		cli_out_printf(&px->out, "insn: %" PRIu64 ".\n", px->ninsn);
	if (opt->stat_flags & STAT_BLOCKS)
		cli_out_printf(&px->out, "blocks:\t%" PRIu64 ".\n",
			       px->nblocks);
}

static void sb_write(void *ctx, const char *text, size_t len)
{
	cli_out_write(ctx, text, len);
}

int cmd_ptxed(int argc, char **argv)
{
	const char *prog = argv[0];
	struct ptxed_options opt;
	struct cli_input in;
	struct ptxed px;
	uint32_t errata = 0;
	int ret;

	memset(&opt, 0, sizeof(opt));
	memset(&px, 0, sizeof(px));
	hwt_blk_config_init(&opt.config);

	px.image = hwt_image_new();
	if (!px.image) {
		fprintf(stderr, "%s: failed to allocate image.\n", prog);
		return 1;
	}
	/* ptxed prints no symbols: --elf maps the code alone. */
	hwt_image_set_symbols(px.image, 0);
	px.sb = cli_sb_new(1, sb_write, &px.out);
	if (!px.sb) {
		fprintf(stderr, "%s: out of memory.\n", prog);
		hwt_image_delete(px.image);
		return 1;
	}
	ret = parse_args(argc, argv, &opt, px.image, px.sb);
	if (!ret && !opt.pt) {
		fprintf(stderr, "%s: no pt file.\n", prog);
		ret = -1;
	}
	if (ret) {
		cli_sb_delete(px.sb);
		hwt_image_delete(px.image);
		return ret > 0 ? 0 : 1;
	}
	if (!cli_sb_active(px.sb)) {
		cli_sb_delete(px.sb);
		px.sb = NULL;
	}
	if (opt.stats && !opt.stat_flags)
		opt.stat_flags = STAT_INSN |
				 (opt.insn_decoder ? 0 : STAT_BLOCKS);

	if (cli_input_open(&in, opt.pt, prog) < 0) {
		cli_sb_delete(px.sb);
		hwt_image_delete(px.image);
		return 1;
	}
	px.opt = &opt;
	if (cli_out_init(&px.out, stdout) < 0) {
		fprintf(stderr, "%s: out of memory.\n", prog);
		ret = 1;
		goto out;
	}
	if (opt.config.qry.cpu.vendor &&
	    hwt_pt_cpu_errata(&opt.config.qry.cpu, &errata) < 0)
		cli_out_printf(&px.out, "[0, 0: config error: %s]\n",
			       "unknown cpu");
	opt.config.qry.errata = errata;
	opt.config.qry.time.errata = errata;
	opt.config.qry.begin = in.data;
	opt.config.qry.end = in.data + in.size;

	if (!opt.no_inst || opt.check) {
		px.dis = cli_disasm_new(opt.att);
		px.memo = cli_disasm_memo_new();
		if (!px.dis || !px.memo) {
			fprintf(stderr, "%s: failed to set up the "
				"disassembler.\n", prog);
			ret = 1;
			goto out;
		}
	}
	/* (Without it, blocks are walked an instruction at a time: what
	 * HWT_WALK_EACH=1 asks, the tests' reference.) */
	if (!opt.quiet && !cli_env_on("HWT_WALK_EACH"))
		px.walks = hwt_an_walks_new();
	if (px.sb)
		cli_sb_start(px.sb);
	px.dec = hwt_blk_new(&opt.config, px.image);
	if (!px.dec) {
		fprintf(stderr, "%s: failed to create decoder.\n", prog);
		ret = 1;
		goto out;
	}
	cli_sb_attach(px.sb, px.dec);

	decode(&px);
	if (opt.stats)
		print_stats(&px);
	ret = 0;

out:
	cli_out_fini(&px.out);
	if (px.out.failed || fflush(stdout)) {
		fprintf(stderr, "%s: error writing output: %s\n", prog,
			strerror(errno));
		ret = 1;
	}
	cli_sb_attach(px.sb, NULL);
	hwt_blk_delete(px.dec);
	cli_sb_delete(px.sb);
	cli_disasm_delete(px.dis);
	cli_disasm_memo_delete(px.memo);
	hwt_an_walks_delete(px.walks);
	hwt_image_delete(px.image);
	cli_input_close(&in);
	return ret;
}

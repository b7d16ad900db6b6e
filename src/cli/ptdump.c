/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hwt ptdump: a drop-in for libipt's ptdump. Same command line, same
 * output (columns, diagnostics and their wording, resynchronisation), so
 * scripts and expectations written for ptdump keep working.
 *
 * Output is built per line in a buffer and written in large blocks; with
 * --quiet nothing is formatted at all, only the tracking that can produce
 * diagnostics runs.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hwt/pt.h>

#include "cli/cli.h"
#include "cli/ipt_sb.h"

#ifndef HWT_VERSION
#define HWT_VERSION "0.1.0"
#endif

/* ------------------------------------------------------------------ */
/* Options                                                             */
/* ------------------------------------------------------------------ */

struct ptdump_options {
	const char *file;
	struct hwt_pt_cpu cpu;
	struct hwt_time_config time;
	unsigned show_offset:1;
	unsigned show_raw:1;
	unsigned show_last_ip:1;
	unsigned show_exec_mode:1;
	unsigned track_time:1;
	unsigned show_time:1;
	unsigned show_tcal:1;
	unsigned time_delta:1;
	unsigned keep_tcal_on_ovf:1;
	unsigned quiet:1;
	unsigned no_pad:1;
	unsigned no_sync:1;
	unsigned no_tcal:1;
	unsigned no_wall_clock:1;
	unsigned no_timing:1;
	unsigned no_cyc:1;
};

/* ------------------------------------------------------------------ */
/* Output                                                              */
/* ------------------------------------------------------------------ */

#define OUT_SIZE (1u << 16)
/* The longest line we build, with room to spare. */
#define LINE_MAX_LEN 256

struct out {
	size_t len;
	int failed;
	char buf[OUT_SIZE];
};

static void out_flush(struct out *out)
{
	if (out->len && fwrite(out->buf, 1, out->len, stdout) != out->len)
		out->failed = 1;
	out->len = 0;
}

/* Room for one more line. */
static char *out_line(struct out *out)
{
	if (OUT_SIZE - out->len < LINE_MAX_LEN)
		out_flush(out);
	return out->buf + out->len;
}

static void out_commit(struct out *out, const char *end)
{
	out->len = (size_t)(end - out->buf);
}

/* ------------------------------------------------------------------ */
/* Diagnostics, in libipt's words                                      */
/* ------------------------------------------------------------------ */

static const char hexdigits[] = "0123456789abcdef";

/* @v in hex, at least @width digits (zero padded). */
static char *put_hex(char *p, uint64_t v, unsigned width)
{
	unsigned n = v ? (unsigned)(67 - __builtin_clzll(v)) / 4 : 1;

	if (n < width)
		n = width;
	for (unsigned i = n; i-- > 0; v >>= 4)
		p[i] = hexdigits[v & 0xf];
	return p + n;
}

/* "[offset: what: error]" or "[offset: what]" for @err == 0. */
static void diag_str(struct out *out, uint64_t offset, const char *what,
		     const char *errstr)
{
	char *p = out_line(out);

	*p++ = '[';
	p = put_hex(p, offset, 1);
	*p++ = ':';
	*p++ = ' ';
	p = cli_put_str(p, what);
	if (errstr) {
		*p++ = ':';
		*p++ = ' ';
		p = cli_put_str(p, errstr);
	}
	*p++ = ']';
	*p++ = '\n';
	out_commit(out, p);
}

static void diag(struct out *out, uint64_t offset, const char *what, int err)
{
	diag_str(out, offset, what, err ? cli_ipt_errstr(err) : NULL);
}

/* ------------------------------------------------------------------ */
/* One output line                                                     */
/* ------------------------------------------------------------------ */

/*
 * The columns of a line. The sizes (terminator included) are ptdump's:
 * longer text is cut, which shows with --time-delta on large deltas.
 * Only TNT payloads use more than 24 characters of @payload.
 */
struct line {
	char opcode[10];
	char payload[48];
	char track_id[5];
	char track[17];
	unsigned skip:1;	/* packet filtered out (--no-pad, ...) */
	unsigned skip_time:1;	/* no time update at this packet */
	unsigned skip_tcal:1;	/* no calibration update at this packet */
};

/* Empty columns (cheaper than clearing the whole line per packet). */
static void line_clear(struct line *line)
{
	line->opcode[0] = '\0';
	line->payload[0] = '\0';
	line->track_id[0] = '\0';
	line->track[0] = '\0';
	line->skip = 0;
	line->skip_time = 0;
	line->skip_tcal = 0;
}

#define set_field(field, ...) \
	((void)snprintf((field), sizeof(field), __VA_ARGS__))

static void set_str(char *field, size_t size, const char *s)
{
	size_t n = strlen(s);

	if (n >= size)
		n = size - 1;
	memcpy(field, s, n);
	field[n] = '\0';
}

#define set_text(field, s) set_str((field), sizeof(field), (s))

/* Left-aligned in a column of @width (printf's "%-*s"). */
static char *put_col(char *p, const char *s, size_t width)
{
	size_t n = 0;

	while (*s) {
		*p++ = *s++;
		n++;
	}
	for (; n < width; n++)
		*p++ = ' ';
	return p;
}

static void emit_line(struct out *out, const struct ptdump_options *opt,
		      uint64_t offset, const uint8_t *raw, unsigned raw_size,
		      const struct line *line)
{
	char *p = out_line(out), *col;
	int sep = 0;

	if (opt->show_offset) {
		col = p;
		p = put_hex(p, offset, 16);
		p = put_col(p, "", 17 - (size_t)(p - col));
		sep = 1;
	}
	if (opt->show_raw) {
		if (sep)
			*p++ = ' ';
		col = p;
		for (unsigned i = 0; i < raw_size; i++)
			p = put_hex(p, raw[i], 2);
		if (p - col < 33)
			p = put_col(p, "", 33 - (size_t)(p - col));
		sep = 1;
	}
	if (sep)
		*p++ = ' ';
	if (line->payload[0])
		p = put_col(p, line->opcode, 10);
	else
		p = cli_put_str(p, line->opcode);

	if (line->track_id[0]) {
		*p++ = ' ';
		p = put_col(p, line->payload, 25);
		*p++ = ' ';
		p = put_col(p, line->track_id, 5);
		p = cli_put_str(p, line->track);
	} else if (line->payload[0]) {
		*p++ = ' ';
		p = cli_put_str(p, line->payload);
	}
	*p++ = '\n';
	out_commit(out, p);
}

/* ------------------------------------------------------------------ */
/* Tracking state                                                      */
/* ------------------------------------------------------------------ */

struct ptdump {
	const struct ptdump_options *opt;
	const uint8_t *buf;
	size_t size;
	uint32_t errata;
	struct hwt_pkt_decoder *decoder;

	struct hwt_pt_last_ip last_ip;
	struct hwt_time time;
	struct hwt_time_cal cal;
	uint64_t shown_tsc;	/* for --time-delta */
	uint64_t shown_fcr;
	int in_psb;
	struct cli_sb *sb;	/* --pevent sideband, or NULL */

	struct out out;
};

static void tracking_reset(struct ptdump *pd)
{
	hwt_pt_last_ip_init(&pd->last_ip);
	hwt_time_init(&pd->time);
	hwt_time_cal_init(&pd->cal);
	pd->shown_tsc = 0;
	pd->shown_fcr = 0;
	pd->in_psb = 0;
}

/* ------------------------------------------------------------------ */
/* Payloads                                                            */
/* ------------------------------------------------------------------ */

static void fmt_ip(struct line *line, const struct hwt_pt_packet *pkt)
{
	char *p = line->payload;
	uint64_t ip = pkt->u.ip.ip;
	unsigned ipc = pkt->u.ip.ipc;

	*p++ = hexdigits[ipc & 0xf];
	*p++ = ':';
	*p++ = ' ';
	switch (ipc) {
	case HWT_PT_IPC_SUPPRESSED:
		p = cli_put_str(p, "????????????????");
		break;
	case HWT_PT_IPC_UPDATE16:
		p = cli_put_str(p, "????????????");
		p = put_hex(p, ip & 0xffff, 4);
		break;
	case HWT_PT_IPC_UPDATE32:
		p = cli_put_str(p, "????????");
		p = put_hex(p, ip & 0xffffffff, 8);
		break;
	case HWT_PT_IPC_UPDATE48:
		p = cli_put_str(p, "????");
		p = put_hex(p, ip & 0xffffffffffffull, 12);
		break;
	case HWT_PT_IPC_SEXT48:
		ip = (uint64_t)((int64_t)(ip << 16) >> 16);
		p = put_hex(p, ip, 16);
		break;
	default:
		p = put_hex(p, ip, 16);
		break;
	}
	*p = '\0';
}

static void fmt_tnt(struct line *line, const struct hwt_pt_packet *pkt)
{
	unsigned bits = pkt->u.tnt.bits, i;
	char *p = line->payload;

	if (bits > sizeof(line->payload) - 1)
		bits = sizeof(line->payload) - 1;
	for (i = bits; i > 0; i--)
		*p++ = (pkt->u.tnt.payload >> (i - 1)) & 1 ? '!' : '.';
	*p = '\0';
}

static void fmt_hex(char *field, uint64_t v, unsigned width)
{
	*put_hex(field, v, width) = '\0';
}

static const char *exec_mode_name(unsigned exec)
{
	if (exec & HWT_PT_EXEC_CSL)
		return exec & HWT_PT_EXEC_CSD ? "unknown" : "64-bit";
	return exec & HWT_PT_EXEC_CSD ? "32-bit" : "16-bit";
}

static void fmt_mode_exec(struct line *line, const struct hwt_pt_packet *pkt)
{
	unsigned exec = pkt->u.exec;
	char *p = line->payload;
	int any = 0;

	if (exec & HWT_PT_EXEC_CSD) {
		p = cli_put_str(p, "cs.d");
		any = 1;
	}
	if (exec & HWT_PT_EXEC_CSL) {
		p = cli_put_str(p, any ? ", cs.l" : "cs.l");
		any = 1;
	}
	if (exec & HWT_PT_EXEC_IF)
		p = cli_put_str(p, any ? ", if" : "if");
	*p = '\0';
}

static void fmt_mode_tsx(struct line *line, const struct hwt_pt_packet *pkt)
{
	unsigned tsx = pkt->u.tsx;
	char *p = line->payload;

	if (tsx & HWT_PT_TSX_INTX)
		p = cli_put_str(p, "intx");
	if (tsx & HWT_PT_TSX_ABORT)
		p = cli_put_str(p, (tsx & HWT_PT_TSX_INTX) ? ", abrt" : "abrt");
	*p = '\0';
}

/* ptdump names exactly one wake reason; anything else is "bad". */
static const char *pwrx_reason(unsigned wake)
{
	switch (wake & (HWT_PT_PWRX_INT | HWT_PT_PWRX_STORE |
			HWT_PT_PWRX_HW)) {
	case HWT_PT_PWRX_INT:
		return "int";
	case HWT_PT_PWRX_STORE:
		return " st";
	case HWT_PT_PWRX_HW:
		return " hw";
	}
	return "bad";
}

/* CFE types whose vector is printed, and how. */
#define CFE_INTR 0x01
#define CFE_SIPI 0x05
#define CFE_VMEXIT_INTR 0x09
#define CFE_UINTR 0x0c

static void fmt_cfe(struct line *line, const struct hwt_pt_packet *pkt)
{
	const char *ip = pkt->u.cfe.ip ? ", ip" : "";

	switch (pkt->u.cfe.type) {
	case CFE_INTR:
	case CFE_VMEXIT_INTR:
	case CFE_UINTR:
		set_field(line->payload, "%u: %u%s", pkt->u.cfe.type,
			  pkt->u.cfe.vector, ip);
		break;
	case CFE_SIPI:
		set_field(line->payload, "%u: %x%s", pkt->u.cfe.type,
			  pkt->u.cfe.vector, ip);
		break;
	default:
		set_field(line->payload, "%u%s", pkt->u.cfe.type, ip);
		break;
	}
}

/* ------------------------------------------------------------------ */
/* Tracking columns                                                    */
/* ------------------------------------------------------------------ */

static void track_last_ip(struct ptdump *pd, struct line *line,
			  uint64_t offset, const struct hwt_pt_packet *pkt)
{
	int quiet = pd->opt->quiet;
	uint64_t ip;
	int err;

	if (!quiet)
		set_text(line->track_id, "ip");

	err = hwt_pt_last_ip_update(&pd->last_ip, pkt->u.ip.ipc,
				    pkt->u.ip.ip);
	if (err >= 0)
		err = hwt_pt_last_ip_query(&pd->last_ip, &ip);
	if (err == -HWT_ERR_IP_SUPPRESSED) {
		if (!quiet)
			set_text(line->track, "<suppressed>");
	} else if (err < 0) {
		if (!quiet)
			set_text(line->track, "<unavailable>");
		diag(&pd->out, offset, "error tracking last-ip", err);
	} else if (!quiet) {
		fmt_hex(line->track, ip, 16);
	}
}

static void show_tcal(struct ptdump *pd, struct line *line, uint64_t offset)
{
	const double scale = (double)(1u << HWT_TIME_FCR_SHIFT);
	int quiet = pd->opt->quiet;
	uint64_t fcr;
	int err;

	if (!quiet)
		set_text(line->track_id, "fcr");

	err = hwt_time_cal_fcr(&pd->cal, &fcr);
	if (err < 0) {
		if (!quiet)
			set_text(line->track, "<unavailable>");
		diag(&pd->out, offset, "error printing time", err);
		return;
	}

	if (!quiet) {
		char tmp[64];

		if (pd->opt->time_delta)
			snprintf(tmp, sizeof(tmp), "%+.3f",
				 (double)fcr / scale -
				 (double)pd->shown_fcr / scale);
		else
			snprintf(tmp, sizeof(tmp), "%.3f", (double)fcr / scale);
		set_text(line->track, tmp);
	}
	if (pd->opt->time_delta)
		pd->shown_fcr = fcr;
}

static void show_time(struct ptdump *pd, struct line *line, uint64_t offset)
{
	int quiet = pd->opt->quiet;
	uint64_t tsc;
	int err;

	if (!quiet)
		set_text(line->track_id, "tsc");

	err = hwt_time_query_tsc(&pd->time, &tsc, NULL, NULL);
	if (err < 0 && !(err == -HWT_ERR_NO_TIME && pd->opt->no_wall_clock)) {
		diag(&pd->out, offset, "error printing time", err);
		if (!quiet)
			set_text(line->track, "<unavailable>");
		return;
	}

	if (pd->opt->time_delta) {
		if (!quiet) {
			char tmp[24];

			if (pd->shown_tsc <= tsc) {
				tmp[0] = '+';
				*put_hex(tmp + 1, tsc - pd->shown_tsc, 1) = 0;
			} else {
				tmp[0] = '-';
				*put_hex(tmp + 1, pd->shown_tsc - tsc, 1) = 0;
			}
			/* Cut to the column like ptdump: "-" + 16 digits. */
			set_text(line->track, tmp);
		}
		pd->shown_tsc = tsc;
	} else if (!quiet) {
		fmt_hex(line->track, tsc, 16);
	}
}

/* The time columns after a timing packet updated the state. */
static void show_timing(struct ptdump *pd, struct line *line,
			uint64_t offset)
{
	if (pd->opt->show_tcal && !line->skip_tcal)
		show_tcal(pd, line, offset);
	if (pd->opt->show_time && !line->skip_time)
		show_time(pd, line, offset);
}

static void cal_error(struct ptdump *pd, uint64_t offset, int err)
{
	if (err < 0)
		diag_str(&pd->out, offset, "error calibrating time",
			 cli_ipt_errstr(err));
}

static void time_error(struct ptdump *pd, uint64_t offset, int err)
{
	if (err < 0)
		diag_str(&pd->out, offset, "error updating time",
			 cli_ipt_errstr(err));
}

static void track_timing(struct ptdump *pd, struct line *line,
			 uint64_t offset, const struct hwt_pt_packet *pkt)
{
	const struct ptdump_options *opt = pd->opt;
	const struct hwt_time_config *cfg = &opt->time;
	int tcal = !opt->no_tcal;
	uint64_t fcr = 0;
	int err;

	switch (pkt->type) {
	case HWT_PT_TSC:
		if (tcal)
			cal_error(pd, offset,
				  hwt_time_cal_update_tsc(&pd->cal, pkt->u.tsc,
							  pd->in_psb));
		time_error(pd, offset, hwt_time_update_tsc(&pd->time,
							   pkt->u.tsc));
		break;
	case HWT_PT_CBR:
		if (tcal)
			cal_error(pd, offset,
				  hwt_time_cal_update_cbr(&pd->cal, cfg,
							  pkt->u.cbr,
							  pd->in_psb));
		time_error(pd, offset, hwt_time_update_cbr(&pd->time,
							   pkt->u.cbr));
		line->skip_time = 1;
		break;
	case HWT_PT_TMA:
		time_error(pd, offset,
			   hwt_time_update_tma(&pd->time, cfg,
					       pkt->u.tma.ctc, pkt->u.tma.fc));
		line->skip_tcal = 1;
		break;
	case HWT_PT_MTC:
		if (tcal)
			cal_error(pd, offset,
				  hwt_time_cal_update_mtc(&pd->cal, cfg,
							  pkt->u.mtc));
		time_error(pd, offset, hwt_time_update_mtc(&pd->time, cfg,
							   pkt->u.mtc));
		break;
	case HWT_PT_CYC:
		if (tcal) {
			err = hwt_time_cal_fcr(&pd->cal, &fcr);
			if (err < 0)
				diag(&pd->out, offset, "calibration error",
				     err);
			hwt_time_cal_update_cyc(&pd->cal, pkt->u.cyc);
		}
		err = hwt_time_update_cyc(&pd->time, cfg, pkt->u.cyc, fcr);
		if (err < 0)
			time_error(pd, offset, err);
		else if (!fcr)
			diag(&pd->out, offset,
			     "error updating time: no calibration", 0);
		line->skip_tcal = 1;
		break;
	default:
		return;
	}
	show_timing(pd, line, offset);
	if (pd->sb) {
		uint64_t tsc;

		/* Without time yet, records of time 0 are due. */
		(void)hwt_time_query_tsc(&pd->time, &tsc, NULL, NULL);
		cli_sb_dump(pd->sb, tsc);
	}
}

/* ------------------------------------------------------------------ */
/* Packets                                                             */
/* ------------------------------------------------------------------ */

/*
 * Track one packet and, unless quiet, fill in @line. Diagnostics go out
 * as they arise, before the packet's own line (as ptdump does).
 */
static void do_packet(struct ptdump *pd, struct line *line, uint64_t offset,
		      const struct hwt_pt_packet *pkt)
{
	const struct ptdump_options *opt = pd->opt;

	switch (pkt->type) {
	case HWT_PT_PSB:
		if (opt->track_time)
			hwt_time_cal_update_psb(&pd->cal, &opt->time);
		pd->in_psb = 1;
		break;
	case HWT_PT_PSBEND:
		pd->in_psb = 0;
		break;
	case HWT_PT_PAD:
		line->skip = opt->no_pad;
		break;
	case HWT_PT_OVF:
		if (!opt->track_time)
			break;
		if (opt->keep_tcal_on_ovf)
			hwt_time_cal_update_ovf(&pd->cal);
		else
			hwt_time_cal_init(&pd->cal);
		break;
	case HWT_PT_TIP:
	case HWT_PT_TIP_PGE:
	case HWT_PT_TIP_PGD:
	case HWT_PT_FUP:
		if (opt->show_last_ip)
			track_last_ip(pd, line, offset, pkt);
		break;
	case HWT_PT_TSC:
	case HWT_PT_CBR:
	case HWT_PT_TMA:
	case HWT_PT_MTC:
		if (opt->track_time)
			track_timing(pd, line, offset, pkt);
		line->skip = opt->no_timing;
		break;
	case HWT_PT_CYC:
		if (opt->track_time && !opt->no_cyc)
			track_timing(pd, line, offset, pkt);
		line->skip = opt->no_timing || opt->no_cyc;
		break;
	default:
		break;
	}
}

/* The opcode and payload columns; not used when quiet. */
static void fmt_packet(struct line *line, const struct hwt_pt_packet *pkt,
		       const struct ptdump_options *opt)
{
	/* ptdump's names are the SDM's, as hwt_pt_type_name(). */
	set_text(line->opcode, hwt_pt_type_name(pkt->type));

	switch (pkt->type) {
	case HWT_PT_TIP:
	case HWT_PT_TIP_PGE:
	case HWT_PT_TIP_PGD:
	case HWT_PT_FUP:
		fmt_ip(line, pkt);
		break;
	case HWT_PT_TNT8:
	case HWT_PT_TNT64:
		fmt_tnt(line, pkt);
		break;
	case HWT_PT_PIP:
		set_field(line->payload, "%" PRIx64 "%s", pkt->u.pip.cr3,
			  pkt->u.pip.nr ? ", nr" : "");
		set_text(line->track_id, "cr3");
		fmt_hex(line->track, pkt->u.pip.cr3, 16);
		break;
	case HWT_PT_VMCS:
		fmt_hex(line->payload, pkt->u.vmcs, 1);
		set_text(line->track_id, "vmcs");
		fmt_hex(line->track, pkt->u.vmcs, 16);
		break;
	case HWT_PT_MODE_EXEC:
		fmt_mode_exec(line, pkt);
		if (opt->show_exec_mode) {
			set_text(line->track_id, "em");
			set_text(line->track, exec_mode_name(pkt->u.exec));
		}
		break;
	case HWT_PT_MODE_TSX:
		fmt_mode_tsx(line, pkt);
		break;
	case HWT_PT_TSC:
		fmt_hex(line->payload, pkt->u.tsc, 1);
		break;
	case HWT_PT_CBR:
		fmt_hex(line->payload, pkt->u.cbr, 1);
		break;
	case HWT_PT_TMA: {
		char *p = put_hex(line->payload, pkt->u.tma.ctc, 1);

		p = cli_put_str(p, ", ");
		*put_hex(p, pkt->u.tma.fc, 1) = '\0';
		break;
	}
	case HWT_PT_MTC:
		fmt_hex(line->payload, pkt->u.mtc, 1);
		break;
	case HWT_PT_CYC:
		fmt_hex(line->payload, pkt->u.cyc, 1);
		break;
	case HWT_PT_MNT:
		fmt_hex(line->payload, pkt->u.mnt, 1);
		break;
	case HWT_PT_EXSTOP:
		set_text(line->payload, pkt->u.exstop_ip ? "ip" : "");
		break;
	case HWT_PT_MWAIT:
		set_field(line->payload, "%08x, %08x", pkt->u.mwait.hints,
			  pkt->u.mwait.ext);
		break;
	case HWT_PT_PWRE:
		set_field(line->payload, "c%u.%u%s",
			  (pkt->u.pwre.state + 1u) & 0xf,
			  (pkt->u.pwre.sub_state + 1u) & 0xf,
			  pkt->u.pwre.hw ? ", hw" : "");
		break;
	case HWT_PT_PWRX:
		set_field(line->payload, "%s: c%u, c%u",
			  pwrx_reason(pkt->u.pwrx.wake),
			  (pkt->u.pwrx.last + 1u) & 0xf,
			  (pkt->u.pwrx.deepest + 1u) & 0xf);
		break;
	case HWT_PT_PTW:
		set_field(line->payload, "%x: %" PRIx64 "%s",
			  pkt->u.ptw.plc, pkt->u.ptw.payload,
			  pkt->u.ptw.ip ? ", ip" : "");
		break;
	case HWT_PT_CFE:
		fmt_cfe(line, pkt);
		break;
	case HWT_PT_EVD:
		set_field(line->payload, "%u: %" PRIx64, pkt->u.evd.type,
			  pkt->u.evd.payload);
		break;
	/* libipt does not know the PEBS block packets; our own format. */
	case HWT_PT_BBP:
		set_field(line->payload, "%x: %u", pkt->u.bbp.type,
			  pkt->u.bbp.sz ? 4u : 8u);
		break;
	case HWT_PT_BIP:
		set_field(line->payload, "%x: %" PRIx64, pkt->u.bip.id,
			  pkt->u.bip.value);
		break;
	case HWT_PT_BEP:
		set_text(line->payload, pkt->u.bep_ip ? "ip" : "");
		break;
	default:
		break;
	}
}

/* ------------------------------------------------------------------ */
/* Errata in the packet stream                                         */
/* ------------------------------------------------------------------ */

#define OPC_EXT 0x02
#define EXT_OVF 0xf3
#define EXT_TMA 0x73
/* A TMA hit by SKZ84 is followed by a bogus byte. */
#define SKZ84_SIZE 8

/*
 * SKD007: an OVF may replace all but the first byte of a multi-byte CYC.
 * Its 02 then reads as the second CYC byte (payload 0x20..0x3f) and f3 as
 * a further CYC. Two short CYCs in a row do not happen otherwise (only
 * when the counter wraps, with a full payload), so report the OVF.
 * Returns the bytes to skip, or 0.
 */
static unsigned skd007(const struct ptdump *pd, uint64_t offset,
		       struct hwt_pt_packet *pkt)
{
	if (pkt->size != 2 || (pkt->u.cyc & ~0x1full) != 0x20)
		return 0;
	if (offset + 2 >= pd->size || pd->buf[offset + 2] != EXT_OVF)
		return 0;

	memset(&pkt->u, 0, sizeof(pkt->u));
	pkt->type = HWT_PT_OVF;
	pkt->size = 2;
	return 3;
}

/* SKZ84: corrupted TMA reserved bits; show it as one invalid packet. */
static int skz84(const struct ptdump *pd, uint64_t offset)
{
	return offset + 1 < pd->size && pd->buf[offset] == OPC_EXT &&
	       pd->buf[offset + 1] == EXT_TMA;
}

/* ------------------------------------------------------------------ */
/* Synchronisation                                                     */
/* ------------------------------------------------------------------ */

/*
 * Synchronise at the next PSB, as ptdump does: the packet decoder stands
 * where decoding stopped (@pos); it looks from a bit before there, to
 * find a PSB a preceding (bad) packet swallowed the start of, but not at
 * the PSB it last synchronised at. Returns 0, or -HWT_ERR_EOS when there
 * is none.
 */
static int resync(struct ptdump *pd)
{
	return hwt_pkt_sync_forward(pd->decoder);
}

/* ------------------------------------------------------------------ */
/* The dump loop                                                       */
/* ------------------------------------------------------------------ */

/* Show (or only track, when quiet) one decoded packet. */
static void show_packet(struct ptdump *pd, uint64_t offset,
			const struct hwt_pt_packet *pkt)
{
	const struct ptdump_options *opt = pd->opt;
	struct line line;

	line_clear(&line);
	if (opt->quiet) {
		do_packet(pd, &line, offset, pkt);
		return;
	}
	fmt_packet(&line, pkt, opt);
	do_packet(pd, &line, offset, pkt);
	if (!line.skip)
		emit_line(&pd->out, opt, offset, pd->buf + offset, pkt->size,
			  &line);
}

/*
 * A decode error at @offset: SKZ84's corrupted TMA is shown and skipped
 * (returns 0), anything else is diagnosed and returned for a resync.
 */
static int decode_error(struct ptdump *pd, uint64_t offset, int err)
{
	const struct ptdump_options *opt = pd->opt;
	struct line line;

	if (err != -HWT_ERR_BAD_PACKET ||
	    !(pd->errata & HWT_PT_ERRATUM_SKZ84) || !skz84(pd, offset)) {
		diag(&pd->out, offset, "error decoding packet", err);
		return err;
	}
	if (opt->show_raw && offset + SKZ84_SIZE > pd->size) {
		diag(&pd->out, offset, "bad packet size", -HWT_ERR_BAD_PACKET);
		return -HWT_ERR_BAD_PACKET;
	}
	if (!opt->quiet) {
		line_clear(&line);
		set_text(line.opcode, "<invalid>");
		emit_line(&pd->out, opt, offset, pd->buf + offset, SKZ84_SIZE,
			  &line);
	}
	return 0;
}

/* Continue decoding at @offset; 0, or -HWT_ERR_EOS past the end. */
static int skip_to(struct ptdump *pd, uint64_t offset)
{
	if (offset >= pd->size)
		return -HWT_ERR_EOS;
	return hwt_pkt_sync_set(pd->decoder, offset);
}

#define BATCH 256

/*
 * Decode and show packets until the end (returns 0) or an error that
 * calls for a resync (returns it, diagnosed).
 */
static int dump_packets(struct ptdump *pd)
{
	const struct ptdump_options *opt = pd->opt;
	int check_skd007 = !!(pd->errata & HWT_PT_ERRATUM_SKD007);
	/* Quiet with nothing to track: decoding is all there is to do. */
	int idle = opt->quiet && !opt->track_time && !opt->show_last_ip &&
		   !check_skd007;
	struct hwt_pt_packet pkts[BATCH];
	uint64_t offset;
	unsigned count, i, skip;
	int err;

	for (;;) {
		if (hwt_pkt_get_offset(pd->decoder, &offset) < 0)
			return -HWT_ERR_INTERNAL;
		err = hwt_pkt_next_batch(pd->decoder, pkts, BATCH, &count);
		for (i = 0, skip = 0; i < count && !idle; i++) {
			if (check_skd007 && pkts[i].type == HWT_PT_CYC)
				skip = skd007(pd, offset, &pkts[i]);
			show_packet(pd, offset, &pkts[i]);
			if (skip)
				break;
			offset += pkts[i].size;
		}
		if (skip) {
			/* The rest of the batch is decoded again from here. */
			if (skip_to(pd, offset + skip) < 0)
				return 0;
			continue;
		}

		if (err == -HWT_ERR_EOS)
			return 0;
		if (err < 0) {
			/* The decoder stopped at the offending packet. */
			if (hwt_pkt_get_offset(pd->decoder, &offset) < 0)
				return -HWT_ERR_INTERNAL;
			err = decode_error(pd, offset, err);
			if (err < 0)
				return err;
			if (skip_to(pd, offset + SKZ84_SIZE) < 0)
				return 0;
			continue;
		}
		if (count < BATCH)
			return 0;
	}
}

static int dump(struct ptdump *pd)
{
	int err;

	if (pd->opt->no_sync) {
		err = hwt_pkt_sync_set(pd->decoder, 0);
	} else {
		err = resync(pd);
	}
	if (err == -HWT_ERR_EOS)
		return 0;
	if (err < 0) {
		diag(&pd->out, 0, "sync error", err);
		return err;
	}

	while (dump_packets(pd) < 0) {
		err = resync(pd);
		if (err == -HWT_ERR_EOS)
			return 0;
		if (err < 0) {
			diag(&pd->out, 0, "sync error", err);
			return err;
		}
		tracking_reset(pd);
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Command line                                                        */
/* ------------------------------------------------------------------ */

static void print_help(const char *name)
{
	printf("usage: %s [<options>] <ptfile>[:<from>[-<to>]\n\n", name);
	printf("options:\n"
	       "  --help|-h                 this text.\n"
	       "  --version                 display version information and exit.\n"
	       "  --no-sync                 don't try to sync to the first PSB, assume a valid\n"
	       "                            sync point at the beginning of the trace.\n"
	       "  --quiet                   don't print anything but errors.\n"
	       "  --no-pad                  don't show PAD packets.\n"
	       "  --no-timing               don't show timing packets.\n"
	       "  --no-cyc                  don't show CYC packets and ignore them when tracking time.\n"
	       "  --no-offset               don't show the offset as the first column.\n"
	       "  --raw                     show raw packet bytes.\n"
	       "  --lastip                  show last IP updates on packets with IP payloads.\n"
	       "  --exec-mode               show the current execution mode on mode.exec packets.\n"
	       "  --time                    show the estimated TSC on timing packets.\n"
	       "  --tcal                    show time calibration information.\n"
	       "  --time-delta              show timing information as delta.\n"
	       "  --no-tcal                 skip timing calibration.\n"
	       "                            this will result in errors when CYC packets are encountered.\n"
	       "  --no-wall-clock           suppress the no-time error and print relative time.\n"
	       "  --keep-tcal-on-ovf        preserve timing calibration on overflow.\n"
	       "  --cpu none|auto|f/m[/s]   set cpu to the given value and decode according to:\n"
	       "                              none     spec (default)\n"
	       "                              auto     current cpu (Intel only)\n"
	       "                              f/m[/s]  family/model[/stepping]\n"
	       "  --mtc-freq <n>            set the MTC frequency (IA32_RTIT_CTL[17:14]) to <n>.\n"
	       "  --nom-freq <n>            set the nominal frequency (MSR_PLATFORM_INFO[15:8]) to <n>.\n"
	       "  --cpuid-0x15.eax          set the value of cpuid[0x15].eax.\n"
	       "  --cpuid-0x15.ebx          set the value of cpuid[0x15].ebx.\n");
	cli_sb_help(0, 26);
	printf("  <ptfile>[:<from>[-<to>]]  load the processor trace data from <ptfile>;\n"
	       "                            an optional offset or range can be given.\n"
	       "\n"
	       "Unlike libipt's ptdump, PEBS block packets (bbp, bip, bep) are\n"
	       "shown rather than reported as unknown opcodes.\n");
}

void help_ptdump(void)
{
	print_help("hwt ptdump");
}

/* Flags without an argument: name and the bit they set. */
enum flag {
	F_NO_SYNC, F_QUIET, F_NO_PAD, F_NO_TIMING, F_NO_CYC, F_NO_OFFSET,
	F_RAW, F_LASTIP, F_EXEC_MODE, F_TIME_DELTA, F_NO_TCAL,
	F_NO_WALL_CLOCK, F_KEEP_TCAL
};

static const struct {
	const char *name;
	enum flag flag;
} flags[] = {
	{ "--no-sync", F_NO_SYNC },
	{ "--quiet", F_QUIET },
	{ "--no-pad", F_NO_PAD },
	{ "--no-timing", F_NO_TIMING },
	{ "--no-cyc", F_NO_CYC },
	{ "--no-offset", F_NO_OFFSET },
	{ "--raw", F_RAW },
	{ "--lastip", F_LASTIP },
	{ "--exec-mode", F_EXEC_MODE },
	{ "--time-delta", F_TIME_DELTA },
	{ "--no-tcal", F_NO_TCAL },
	{ "--no-wall-clock", F_NO_WALL_CLOCK },
	{ "--keep-tcal-on-ovf", F_KEEP_TCAL },
};

static void set_flag(struct ptdump_options *opt, enum flag flag)
{
	switch (flag) {
	case F_NO_SYNC: opt->no_sync = 1; break;
	case F_QUIET: opt->quiet = 1; break;
	case F_NO_PAD: opt->no_pad = 1; break;
	case F_NO_TIMING: opt->no_timing = 1; break;
	case F_NO_CYC: opt->no_cyc = 1; break;
	case F_NO_OFFSET: opt->show_offset = 0; break;
	case F_RAW: opt->show_raw = 1; break;
	case F_LASTIP: opt->show_last_ip = 1; break;
	case F_EXEC_MODE: opt->show_exec_mode = 1; break;
	case F_TIME_DELTA: opt->time_delta = 1; break;
	case F_NO_TCAL: opt->no_tcal = 1; break;
	case F_NO_WALL_CLOCK: opt->no_wall_clock = 1; break;
	case F_KEEP_TCAL: opt->keep_tcal_on_ovf = 1; break;
	}
}

static int find_flag(const char *arg, enum flag *flag)
{
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		if (!strcmp(arg, flags[i].name)) {
			*flag = flags[i].flag;
			return 1;
		}
	}
	return 0;
}

/* An option taking a number: where it goes and its range. */
static int number_option(const char *prog, const char *name,
			 const char *arg, struct ptdump_options *opt,
			 int *matched)
{
	uint64_t v;

	*matched = 1;
	if (!strcmp(name, "--mtc-freq")) {
		if (cli_ipt_get_arg(prog, name, arg, UINT8_MAX, &v))
			return -1;
		opt->time.mtc_freq = (uint8_t)v;
	} else if (!strcmp(name, "--nom-freq")) {
		if (cli_ipt_get_arg(prog, name, arg, UINT8_MAX, &v))
			return -1;
		opt->time.nom_freq = (uint8_t)v;
	} else if (!strcmp(name, "--cpuid-0x15.eax")) {
		if (cli_ipt_get_arg(prog, name, arg, UINT32_MAX, &v))
			return -1;
		opt->time.cpuid_0x15_eax = (uint32_t)v;
	} else if (!strcmp(name, "--cpuid-0x15.ebx")) {
		if (cli_ipt_get_arg(prog, name, arg, UINT32_MAX, &v))
			return -1;
		opt->time.cpuid_0x15_ebx = (uint32_t)v;
	} else {
		*matched = 0;
	}
	return 0;
}

/* Returns 0 to go on, 1 for done (help, version), -1 for an error. */
static int parse_args(int argc, char **argv, struct ptdump_options *opt,
		      struct cli_sb *sb)
{
	const char *prog = argv[0];
	enum flag flag;
	int idx, matched;

	for (idx = 1; idx < argc; idx++) {
		const char *arg = argv[idx];

		if (arg[0] != '-') {
			opt->file = arg;
			if (idx < argc - 1) {
				fprintf(stderr, "%s: [<options>] <ptfile>.  "
					"Use --help or -h for help.\n", prog);
				return -1;
			}
			break;
		}
		if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
			print_help(prog);
			return 1;
		}
		if (!strcmp(arg, "--version")) {
			printf("%s-%s / hwt-%s\n", prog, HWT_VERSION,
			       HWT_VERSION);
			return 1;
		}
		if (find_flag(arg, &flag)) {
			set_flag(opt, flag);
		} else if (!strcmp(arg, "--time") || !strcmp(arg, "--tcal")) {
			int time = !strcmp(arg, "--time");

			if (time ? opt->show_tcal : opt->show_time) {
				fprintf(stderr, "%s: specify either --time "
					"or --tcal.\n", prog);
				return -1;
			}
			opt->track_time = 1;
			if (time)
				opt->show_time = 1;
			else
				opt->show_tcal = 1;
		} else if (!strcmp(arg, "--cpu")) {
			if (cli_ipt_parse_cpu(prog, argv[++idx], &opt->cpu))
				return -1;
		} else if ((matched = cli_sb_option(sb, prog, argc, argv,
						    &idx)) != 0) {
			if (matched < 0)
				return -1;
			/* Records are placed by the trace's time. */
			if (cli_sb_active(sb))
				opt->track_time = 1;
		} else {
			if (number_option(prog, arg, argv[idx + 1], opt,
					  &matched))
				return -1;
			if (!matched) {
				fprintf(stderr, "%s: unknown option: %s.\n",
					prog, arg);
				return -1;
			}
			idx++;
		}
	}
	return 0;
}

/* Sideband lines go out between packet lines, in order. */
static void sb_write(void *ctx, const char *text, size_t len)
{
	struct out *out = ctx;

	out_flush(out);
	if (fwrite(text, 1, len, stdout) != len)
		out->failed = 1;
}

int cmd_ptdump(int argc, char **argv)
{
	struct ptdump_options opt;
	struct cli_input in;
	struct ptdump *pd;
	int err, ret;

	memset(&opt, 0, sizeof(opt));
	opt.show_offset = 1;

	pd = calloc(1, sizeof(*pd));
	if (!pd || !(pd->sb = cli_sb_new(0, sb_write, &pd->out))) {
		fprintf(stderr, "%s: out of memory.\n", argv[0]);
		free(pd);
		return 1;
	}
	pd->opt = &opt;
	ret = parse_args(argc, argv, &opt, pd->sb);
	if (!ret && !opt.file) {
		fprintf(stderr, "%s: No processor trace file specified.\n",
			argv[0]);
		ret = -1;
	}
	if (ret) {
		cli_sb_delete(pd->sb);
		free(pd);
		return ret > 0 ? 0 : 1;
	}
	if (cli_sb_active(pd->sb)) {
		cli_sb_start(pd->sb);
	} else {
		cli_sb_delete(pd->sb);
		pd->sb = NULL;
	}

	if (opt.cpu.vendor) {
		err = hwt_pt_cpu_errata(&opt.cpu, &pd->errata);
		if (err < 0)
			diag_str(&pd->out, 0, "failed to determine errata",
				 "unknown cpu");
		opt.time.errata = pd->errata;
	}

	if (cli_input_open(&in, opt.file, argv[0]) < 0) {
		out_flush(&pd->out);
		cli_sb_delete(pd->sb);
		free(pd);
		return 1;
	}
	pd->buf = in.data;
	pd->size = in.size;

	ret = 0;
	pd->decoder = hwt_pkt_decoder_new(in.data, in.size);
	if (!pd->decoder) {
		diag(&pd->out, 0, "failed to allocate decoder", 0);
		ret = 1;
	} else {
		tracking_reset(pd);
		if (dump(pd) < 0)
			ret = 1;
		else if (pd->sb)
			cli_sb_dump(pd->sb, UINT64_MAX);
		hwt_pkt_decoder_delete(pd->decoder);
	}

	out_flush(&pd->out);
	if (pd->out.failed || fflush(stdout)) {
		fprintf(stderr, "%s: error writing output: %s\n", argv[0],
			strerror(errno));
		ret = 1;
	}
	cli_input_close(&in);
	cli_sb_delete(pd->sb);
	free(pd);
	return ret;
}

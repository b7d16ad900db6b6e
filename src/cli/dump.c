/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hwt dump: one Intel PT packet per line, in hwt's own format.
 *
 *   OFFSET            PACKET     FIELDS
 *   0000000000000000  psb
 *   0000000000000010  fup        sext48 0000ffffff001000   ip=0xffffffffff001000
 *   0000000000000019  tnt.8      TT.T
 *
 * Decode errors are reported in line at their offset, then decoding
 * resynchronises at the next PSB; the byte count skipped is reported too.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hwt/pt.h>
#include <hwt/query.h>

#include "cli/cli.h"

/* Hand-rolled hex: snprintf dominates text output time otherwise. */
static char *put_hex(char *p, uint64_t v, int digits)
{
	static const char hex[16] = "0123456789abcdef";

	for (int i = digits - 1; i >= 0; i--, v >>= 4)
		p[i] = hex[v & 0xf];
	return p + digits;
}

static char *put_str(char *p, const char *s, size_t pad)
{
	size_t n = strlen(s);

	memcpy(p, s, n);
	for (; n < pad; n++)
		p[n] = ' ';
	return p + n;
}

struct dump_opts {
	int show_offset;
	int show_raw;
	int show_lastip;
	int no_pad;
	int quiet;
	int no_sync;
	int stat;
	int show_time;
	int time_delta;
	struct hwt_pt_cpu cpu;
	struct hwt_time_config tcfg;
};

struct dump_state {
	const struct dump_opts *o;
	const struct cli_input *in;
	struct hwt_pt_last_ip lip;
	struct hwt_time_tracker time;
	uint64_t last_tsc;
	int have_last_tsc;
	uint64_t count[HWT_PT_NTYPES];
	uint64_t bytes[HWT_PT_NTYPES];
	uint64_t errors;
	uint64_t skipped;
};

void help_dump(void)
{
	printf(
"usage: hwt dump [options] FILE[:FROM[-TO]]\n"
"\n"
"Print the Intel PT packets in FILE (raw PT bytes), one per line:\n"
"file offset, packet name, decoded fields. FROM/TO select a byte range\n"
"(TO exclusive). Decoding starts at the first PSB; after a malformed packet\n"
"the error is printed with its offset and decoding resumes at the next PSB.\n"
"The exit status is 1 if any part of the trace could not be decoded.\n"
"A perf.data file (perf record -e intel_pt//) is dumped stream by stream:\n"
"a '# stream idx N: ...' line, its lost-data warnings, then its packets\n"
"(offsets within the stream).\n"
"\n"
"options:\n"
"  --lastip           show the full IP that IP packets expand to\n"
"  --no-pad           do not show PAD packets\n"
"  --raw              show the raw packet bytes\n"
"  --no-offset        do not show offsets\n"
"  --no-sync          decode from FROM even if it is not a PSB\n"
"  --quiet            decode only; report errors and the summary\n"
"  --stat             print packet counts and bytes per type at the end\n"
"  --time             show the estimated TSC on timing packets\n"
"  --time-delta       show the TSC delta to the previous timing packet\n"
"  --cpu F/M[/S]      the CPU that produced the trace (errata)\n"
"  --mtc-freq N       IA32_RTIT_CTL.MTCFreq\n"
"  --nom-freq N       nominal core:bus ratio (CPUID 0x16 / 100 MHz)\n"
"  --cpuid-0x15.eax N CPUID leaf 0x15 EAX (TSC:crystal denominator)\n"
"  --cpuid-0x15.ebx N CPUID leaf 0x15 EBX (TSC:crystal numerator)\n");
}

static const char *ipc_name(unsigned ipc)
{
	static const char *const names[8] = {
		"suppressed", "upd16", "upd32", "sext48",
		"upd48", "ipc5", "full", "ipc7",
	};
	return names[ipc & 7];
}

/* The compressed payload as hex with the bits it does not carry as '?'. */
static int fmt_ip_payload(char *buf, size_t n, unsigned ipc, uint64_t ip)
{
	int bytes = hwt_pt_ipc_size(ipc);
	char *p = buf;

	if (n < 32)
		return 0;
	p = put_str(p, ipc_name(ipc), 11);
	if (bytes <= 0)
		return (int)(p - buf);
	if (ipc == HWT_PT_IPC_SEXT48)
		ip = (uint64_t)((int64_t)(ip << 16) >> 16);
	put_hex(p, ip, 16);
	if (ipc != HWT_PT_IPC_SEXT48)
		memset(p, '?', 16 - 2 * (size_t)bytes);
	return (int)(p + 16 - buf);
}

static int fmt_tnt(char *buf, size_t n, unsigned bits, uint64_t payload)
{
	size_t i;

	if (n <= bits)
		return 0;
	for (i = 0; i < bits; i++)
		buf[i] = (payload >> (bits - 1 - i)) & 1 ? 'T' : '.';
	buf[i] = '\0';
	return (int)i;
}

static const char *exec_mode(uint8_t exec)
{
	switch (exec & (HWT_PT_EXEC_CSL | HWT_PT_EXEC_CSD)) {
	case HWT_PT_EXEC_CSL:
		return "64-bit";
	case HWT_PT_EXEC_CSD:
		return "32-bit";
	case 0:
		return "16-bit";
	default:
		return "cs.l+cs.d(reserved)";
	}
}

/* The fields column for @p; returns the number of characters written. */
static int fmt_fields(char *b, size_t n, const struct hwt_pt_packet *p)
{
	switch (p->type) {
	case HWT_PT_TNT8:
	case HWT_PT_TNT64:
		return fmt_tnt(b, n, p->u.tnt.bits, p->u.tnt.payload);
	case HWT_PT_TIP:
	case HWT_PT_TIP_PGE:
	case HWT_PT_TIP_PGD:
	case HWT_PT_FUP:
		return fmt_ip_payload(b, n, p->u.ip.ipc, p->u.ip.ip);
	case HWT_PT_PIP:
		return snprintf(b, n, "cr3=0x%016" PRIx64 "%s", p->u.pip.cr3,
				p->u.pip.nr ? " nr" : "");
	case HWT_PT_MODE_EXEC:
		return snprintf(b, n, "%s%s", exec_mode(p->u.exec),
				p->u.exec & HWT_PT_EXEC_IF ? " if" : "");
	case HWT_PT_MODE_TSX:
		return snprintf(b, n, "%s",
				p->u.tsx & HWT_PT_TSX_ABORT ? "abort" :
				p->u.tsx & HWT_PT_TSX_INTX ? "begin" : "commit");
	case HWT_PT_TSC:
		return snprintf(b, n, "tsc=0x%" PRIx64, p->u.tsc);
	case HWT_PT_MTC:
		return snprintf(b, n, "ctc=0x%02x", p->u.mtc);
	case HWT_PT_TMA:
		return snprintf(b, n, "ctc=0x%04x fc=0x%03x", p->u.tma.ctc,
				p->u.tma.fc);
	case HWT_PT_CYC:
		return snprintf(b, n, "cyc=0x%" PRIx64, p->u.cyc);
	case HWT_PT_CBR:
		return snprintf(b, n, "ratio=%u", p->u.cbr);
	case HWT_PT_VMCS:
		return snprintf(b, n, "vmcs=0x%016" PRIx64, p->u.vmcs);
	case HWT_PT_MNT:
		return snprintf(b, n, "payload=0x%016" PRIx64, p->u.mnt);
	case HWT_PT_PTW:
		return snprintf(b, n, "payload=0x%0*" PRIx64 "%s",
				p->u.ptw.plc ? 16 : 8, p->u.ptw.payload,
				p->u.ptw.ip ? " ip" : "");
	case HWT_PT_EXSTOP:
		return snprintf(b, n, "%s", p->u.exstop_ip ? "ip" : "");
	case HWT_PT_MWAIT:
		return snprintf(b, n, "hints=0x%08x ext=0x%08x",
				p->u.mwait.hints, p->u.mwait.ext);
	case HWT_PT_PWRE:
		return snprintf(b, n, "c%u.%u%s", p->u.pwre.state,
				p->u.pwre.sub_state, p->u.pwre.hw ? " hw" : "");
	case HWT_PT_PWRX: {
		static const char *const reason[4] = { "int", "", "store", "hw" };
		int len = snprintf(b, n, "last=c%u deepest=c%u wake=",
				   p->u.pwrx.last, p->u.pwrx.deepest);
		const char *sep = "";

		for (unsigned bit = 0; bit < 4; bit++) {
			if (!(p->u.pwrx.wake & (1u << bit)) || !*reason[bit])
				continue;
			len += snprintf(b + len, n - (size_t)len, "%s%s", sep,
					reason[bit]);
			sep = ",";
		}
		if (!*sep)
			len += snprintf(b + len, n - (size_t)len, "none");
		return len;
	}
	case HWT_PT_BBP:
		return snprintf(b, n, "type=%u bip-size=%u", p->u.bbp.type,
				p->u.bbp.sz ? 4 : 8);
	case HWT_PT_BIP:
		return snprintf(b, n, "id=%u value=0x%" PRIx64, p->u.bip.id,
				p->u.bip.value);
	case HWT_PT_BEP:
		return snprintf(b, n, "%s", p->u.bep_ip ? "ip" : "");
	case HWT_PT_CFE:
		return snprintf(b, n, "type=%u vector=0x%02x%s", p->u.cfe.type,
				p->u.cfe.vector, p->u.cfe.ip ? " ip" : "");
	case HWT_PT_EVD:
		return snprintf(b, n, "type=%u payload=0x%016" PRIx64,
				p->u.evd.type, p->u.evd.payload);
	default:
		if (n)
			b[0] = '\0';
		return 0;
	}
}

static void track_time(struct dump_state *s, const struct hwt_pt_packet *p,
		       uint64_t offset)
{
	int err = hwt_time_tracker_update(&s->time, p);

	if (err < 0 && !s->o->quiet)
		printf("%016" PRIx64 "  warning: time: %s\n", offset,
		       hwt_errstr(err));
}

static void print_packet(struct dump_state *s, uint64_t offset,
			 const struct hwt_pt_packet *p, const uint8_t *raw)
{
	char line[256];
	size_t len = 0;
	int timing;

	if (s->o->show_offset) {
		put_hex(line, offset, 16);
		line[16] = line[17] = ' ';
		len = 18;
	}
	len = (size_t)(put_str(line + len, hwt_pt_type_name(p->type), 11) -
		       line);
	len += (size_t)fmt_fields(line + len, sizeof(line) - len, p);

	if (s->o->show_lastip && hwt_pt_is_ip_packet(p->type)) {
		uint64_t ip;
		int err = hwt_pt_last_ip_query(&s->lip, &ip);

		if (!err)
			len += (size_t)snprintf(line + len, sizeof(line) - len,
						"   ip=0x%016" PRIx64, ip);
		else
			len += (size_t)snprintf(line + len, sizeof(line) - len,
						"   ip=<%s>", hwt_errstr(err));
	}

	timing = p->type == HWT_PT_TSC || p->type == HWT_PT_TMA ||
		 p->type == HWT_PT_MTC || p->type == HWT_PT_CYC ||
		 p->type == HWT_PT_CBR;
	if (timing && (s->o->show_time || s->o->time_delta)) {
		uint64_t tsc;
		int err = hwt_time_query_tsc(&s->time.time, &tsc, NULL, NULL);

		if (err < 0) {
			len += (size_t)snprintf(line + len, sizeof(line) - len,
						"   time=<none>");
		} else {
			if (s->o->show_time)
				len += (size_t)snprintf(line + len,
							sizeof(line) - len,
							"   time=0x%016" PRIx64,
							tsc);
			if (s->o->time_delta)
				len += (size_t)snprintf(line + len,
							sizeof(line) - len,
							"   delta=+0x%" PRIx64,
							s->have_last_tsc ?
							tsc - s->last_tsc : 0);
			s->last_tsc = tsc;
			s->have_last_tsc = 1;
		}
	}

	if (s->o->show_raw) {
		len += (size_t)snprintf(line + len, sizeof(line) - len, "   [");
		for (unsigned i = 0; i < p->size && len + 4 < sizeof(line); i++)
			len += (size_t)snprintf(line + len, sizeof(line) - len,
						i ? " %02x" : "%02x", raw[i]);
		len += (size_t)snprintf(line + len, sizeof(line) - len, "]");
	}

	while (len > 0 && line[len - 1] == ' ')
		len--;
	line[len++] = '\n';
	fwrite(line, 1, len, stdout);
}

static void report_error(struct dump_state *s, uint64_t offset, int err)
{
	uint64_t abs = s->in->offset + offset;

	if (s->o->quiet)
		fprintf(stderr, "hwt dump: offset 0x%" PRIx64 ": %s\n", abs,
			hwt_errstr(err));
	else
		printf("%016" PRIx64 "  error: %s (byte 0x%02x)\n", abs,
		       hwt_errstr(err), s->in->data[offset]);
	s->errors++;
}

static void handle_packet(struct dump_state *s, const struct hwt_pt_packet *p,
			  uint64_t off)
{
	const struct dump_opts *o = s->o;

	s->count[p->type]++;
	s->bytes[p->type] += p->size;
	if (o->quiet && !o->show_time && !o->time_delta)
		return;
	if (hwt_pt_is_ip_packet(p->type))
		hwt_pt_last_ip_update(&s->lip, p->u.ip.ipc, p->u.ip.ip);
	else if (p->type == HWT_PT_OVF || p->type == HWT_PT_PSB)
		hwt_pt_last_ip_init(&s->lip);
	if (o->show_time || o->time_delta)
		track_time(s, p, off);
	if (!o->quiet && !(o->no_pad && p->type == HWT_PT_PAD))
		print_packet(s, s->in->offset + off, p, s->in->data + off);
}

/* Decode the whole input. The hot loop is the quiet one. */
static int dump(struct dump_state *s)
{
	struct hwt_pkt_decoder *d;
	const struct dump_opts *o = s->o;
	int err;

	d = hwt_pkt_decoder_new(s->in->data, s->in->size);
	if (!d) {
		fprintf(stderr, "hwt dump: out of memory\n");
		return -1;
	}
	if (o->no_sync)
		err = hwt_pkt_sync_set(d, 0);
	else
		err = hwt_pkt_sync_forward(d);
	if (err < 0) {
		fprintf(stderr, "hwt dump: no PSB found in 0x%zx bytes at offset "
			"0x%" PRIx64 ": not an Intel PT trace?\n",
			s->in->size, s->in->offset);
		hwt_pkt_decoder_delete(d);
		return -1;
	}
	if (!o->no_sync) {
		uint64_t first;

		hwt_pkt_get_offset(d, &first);
		s->skipped += first;
		if (first && !o->quiet)
			printf("%016" PRIx64 "  sync: skipped 0x%" PRIx64
			       " bytes before the first PSB\n",
			       s->in->offset + first, first);
	}

	for (;;) {
		struct hwt_pt_packet batch[256];
		uint64_t off, resync;
		unsigned n;

		hwt_pkt_get_offset(d, &off);
		err = hwt_pkt_next_batch(d, batch, 256, &n);
		for (unsigned i = 0; i < n; i++) {
			const struct hwt_pt_packet *p = &batch[i];

			handle_packet(s, p, off);
			off += p->size;
		}
		if (!err) {
			if (n < 256)
				break;
			continue;
		}

		report_error(s, off, err);
		if (hwt_pkt_sync_forward(d) < 0) {
			s->skipped += s->in->size - off;
			break;
		}
		hwt_pkt_get_offset(d, &resync);
		s->skipped += resync - off;
		if (!o->quiet)
			printf("%016" PRIx64 "  resync: skipped 0x%" PRIx64
			       " bytes\n", s->in->offset + resync,
			       resync - off);
		hwt_pt_last_ip_init(&s->lip);
		hwt_time_tracker_reset(&s->time);
	}
	hwt_pkt_decoder_delete(d);
	return 0;
}

static void print_stat(const struct dump_state *s)
{
	uint64_t total = 0, bytes = 0;

	printf("%-10s %14s %14s\n", "packet", "count", "bytes");
	for (unsigned t = 1; t < HWT_PT_NTYPES; t++) {
		if (!s->count[t])
			continue;
		printf("%-10s %14" PRIu64 " %14" PRIu64 "\n",
		       hwt_pt_type_name(t), s->count[t], s->bytes[t]);
		total += s->count[t];
		bytes += s->bytes[t];
	}
	printf("%-10s %14" PRIu64 " %14" PRIu64 "\n", "total", total, bytes);
	printf("%-10s %14" PRIu64 " %14" PRIu64 "\n", "errors", s->errors,
	       s->skipped);
}

enum {
	OPT_LASTIP = 256, OPT_NO_PAD, OPT_RAW, OPT_NO_OFFSET, OPT_NO_SYNC,
	OPT_QUIET, OPT_STAT, OPT_TIME, OPT_TIME_DELTA, OPT_CPU, OPT_MTC_FREQ,
	OPT_NOM_FREQ, OPT_CPUID_EAX, OPT_CPUID_EBX, OPT_HELP
};

static const struct option long_opts[] = {
	{ "lastip", no_argument, NULL, OPT_LASTIP },
	{ "no-pad", no_argument, NULL, OPT_NO_PAD },
	{ "raw", no_argument, NULL, OPT_RAW },
	{ "no-offset", no_argument, NULL, OPT_NO_OFFSET },
	{ "no-sync", no_argument, NULL, OPT_NO_SYNC },
	{ "quiet", no_argument, NULL, OPT_QUIET },
	{ "stat", no_argument, NULL, OPT_STAT },
	{ "time", no_argument, NULL, OPT_TIME },
	{ "time-delta", no_argument, NULL, OPT_TIME_DELTA },
	{ "cpu", required_argument, NULL, OPT_CPU },
	{ "mtc-freq", required_argument, NULL, OPT_MTC_FREQ },
	{ "nom-freq", required_argument, NULL, OPT_NOM_FREQ },
	{ "cpuid-0x15.eax", required_argument, NULL, OPT_CPUID_EAX },
	{ "cpuid-0x15.ebx", required_argument, NULL, OPT_CPUID_EBX },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

static int parse_num(const char *opt, const char *arg, uint64_t max,
		     uint64_t *value)
{
	if (cli_parse_u64(arg, value) || *value > max) {
		fprintf(stderr, "hwt dump: --%s: bad value '%s' (0..%" PRIu64
			")\n", opt, arg, max);
		return -1;
	}
	return 0;
}

static int parse_opts(int argc, char **argv, struct dump_opts *o)
{
	uint64_t v;
	int c;

	memset(o, 0, sizeof(*o));
	o->show_offset = 1;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":", long_opts, NULL)) != -1) {
		switch (c) {
		case OPT_LASTIP: o->show_lastip = 1; break;
		case OPT_NO_PAD: o->no_pad = 1; break;
		case OPT_RAW: o->show_raw = 1; break;
		case OPT_NO_OFFSET: o->show_offset = 0; break;
		case OPT_NO_SYNC: o->no_sync = 1; break;
		case OPT_QUIET: o->quiet = 1; break;
		case OPT_STAT: o->stat = 1; break;
		case OPT_TIME: o->show_time = 1; break;
		case OPT_TIME_DELTA: o->time_delta = 1; break;
		case OPT_CPU:
			if (hwt_pt_cpu_parse(&o->cpu, optarg) < 0) {
				fprintf(stderr, "hwt dump: --cpu: bad value '%s' "
					"(expected family/model[/stepping])\n",
					optarg);
				return -1;
			}
			break;
		case OPT_MTC_FREQ:
			if (parse_num("mtc-freq", optarg, 15, &v))
				return -1;
			o->tcfg.mtc_freq = (uint8_t)v;
			break;
		case OPT_NOM_FREQ:
			if (parse_num("nom-freq", optarg, 255, &v))
				return -1;
			o->tcfg.nom_freq = (uint8_t)v;
			break;
		case OPT_CPUID_EAX:
			if (parse_num("cpuid-0x15.eax", optarg, UINT32_MAX, &v))
				return -1;
			o->tcfg.cpuid_0x15_eax = (uint32_t)v;
			break;
		case OPT_CPUID_EBX:
			if (parse_num("cpuid-0x15.ebx", optarg, UINT32_MAX, &v))
				return -1;
			o->tcfg.cpuid_0x15_ebx = (uint32_t)v;
			break;
		case OPT_HELP:
			help_dump();
			exit(0);
		default:
			cli_bad_option("dump", c, argv[optind - 1]);
			return -1;
		}
	}
	return 0;
}

/*
 * perf.data: the packets of each AUX stream after its header line and its
 * lost-data warnings (by stream offset, then by time).
 */
static int dump_perfdata(struct dump_opts *o, const char *path)
{
	struct hwt_qry_config q;
	struct cli_pd *pd;
	struct cli_out hdr;
	int ret = 0;

	if (cli_pd_open(&pd, path, "hwt dump"))
		return 1;
	memset(&q, 0, sizeof(q));
	q.cpu = o->cpu;
	q.time = o->tcfg;
	cli_pd_qry_config(pd, &q);
	o->cpu = q.cpu;
	o->tcfg = q.time;
	(void)hwt_pt_cpu_errata(&o->cpu, &o->tcfg.errata);
	for (size_t i = 0; i < cli_pd_nstreams(pd); i++) {
		struct cli_pieces trace;
		struct cli_input in;
		struct dump_state *s;
		int more;

		if (cli_out_init(&hdr, stdout) < 0 ||
		    !(s = calloc(1, sizeof(*s)))) {
			fprintf(stderr, "hwt dump: out of memory\n");
			ret = 1;
			break;
		}
		cli_pd_stream_header(pd, i, &hdr);
		cli_pd_stream_notes(pd, i, &hdr);
		cli_out_fini(&hdr);
		memset(&in, 0, sizeof(in));
		s->o = o;
		s->in = &in;
		hwt_pt_last_ip_init(&s->lip);
		hwt_time_tracker_init(&s->time, &o->tcfg, 0);
		/* Pieces start at a PSB (but the first) and end at one. */
		cli_pd_stream_pieces(pd, i, &trace);
		while ((more = cli_pieces_next(&trace)) > 0) {
			in.data = trace.buf;
			in.size = (size_t)trace.cut;
			in.offset = trace.base;
			if (in.size && dump(s) < 0)
				ret = 1;
		}
		if (more < 0)
			ret = 1;
		cli_pieces_fini(&trace);
		if (o->stat)
			print_stat(s);
		if (s->errors) {
			fprintf(stderr, "hwt dump: %s: stream %zu: %" PRIu64
				" decode error%s, 0x%" PRIx64 " bytes skipped\n",
				path, i, s->errors, s->errors == 1 ? "" : "s",
				s->skipped);
			ret = 1;
		}
		free(s);
	}
	cli_pd_close(pd);
	if (fflush(stdout)) {
		perror("hwt dump: writing output");
		ret = 1;
	}
	return ret;
}

int cmd_dump(int argc, char **argv)
{
	static char outbuf[1 << 16];
	struct dump_opts o;
	struct dump_state *s;
	struct cli_input in;
	int ret;

	if (parse_opts(argc, argv, &o))
		return 2;
	if (optind + 1 != argc) {
		fprintf(stderr, optind == argc ?
			"hwt dump: no trace file given; see 'hwt help dump'\n" :
			"hwt dump: more than one trace file given\n");
		return 2;
	}
	if (cli_pd_is_perfdata(argv[optind])) {
		setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
		return dump_perfdata(&o, argv[optind]);
	}
	if (cli_input_open(&in, argv[optind], "hwt dump"))
		return 1;

	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
	s = calloc(1, sizeof(*s));
	if (!s) {
		cli_input_close(&in);
		fprintf(stderr, "hwt dump: out of memory\n");
		return 1;
	}
	s->o = &o;
	s->in = &in;
	hwt_pt_last_ip_init(&s->lip);
	/* A CPU without an errata list is fine: no workarounds apply. */
	(void)hwt_pt_cpu_errata(&o.cpu, &o.tcfg.errata);
	hwt_time_tracker_init(&s->time, &o.tcfg, 0);

	ret = dump(s);
	if (!ret && o.stat)
		print_stat(s);
	if (fflush(stdout)) {
		perror("hwt dump: writing output");
		ret = -1;
	}
	if (!ret && s->errors) {
		fprintf(stderr, "hwt dump: %s: %" PRIu64 " decode error%s, 0x%"
			PRIx64 " bytes skipped\n", argv[optind], s->errors,
			s->errors == 1 ? "" : "s", s->skipped);
		ret = -1;
	}
	free(s);
	cli_input_close(&in);
	return ret ? 1 : 0;
}

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ipt_sb: libipt's block decoder with libipt-sb's perf_event sideband, as
 * libipt's ptxed drives them, for cross-checking hwt ptxed's sideband
 * (scripts/crosscheck-libipt.sh). libipt's ptxed itself needs XED, which
 * Debian does not have; this prints blocks instead of instructions. Not
 * built by CMake: it needs libipt 2.1.2 with SIDEBAND and PEVENT, which
 * scripts/fetch-libipt.sh builds.
 *
 *   ipt_sb [--tick] [--ids | --sample-type T [--sample-config ID:T]...]
 *          --raw FILE:BASE --pevent FILE.sb
 *          [--kernel-start ADDR] TRACE
 *
 * prints, in order: the sideband records (ptxed's --sb:compact
 * --sb:offset), warnings and errors (--sb:warn), context switches
 * (--sb:switch), the events [enabled], [resumed], [disabled] and, with
 * --tick, [tick] (ptxed's --event:tick), each block as "IP END_IP NINSN"
 * (hex, hex, decimal) and "[error]" for a decode error. The sample type
 * is TID|TIME, the time conversion the identity.
 *
 * With --ids, the stream is --gen-ids': the default sample type
 * TID|TIME|IDENTIFIER, and a sample configuration (libipt's
 * --pevent:sample-config) for events 0, 7 (the same) and 9
 * (TID|TIME|ID|CPU|IDENTIFIER). Else --sample-type TYPE and
 * --sample-config ID:TYPE (up to 16) say it, as ptxed's --pevent:*.
 *
 *   ipt_sb --gen|--gen-ids SEED BIN BASE OUT.sb
 *
 * writes a random sideband stream of that sample type for the code BIN
 * mapped at BASE: processes 1-3 map it (MMAP), tracing starts in process
 * 1, then, at random times 0-6, more MMAPs (some of them kernel ones),
 * context switches of both kinds, exec (COMM.EXEC and a new MMAP), fork,
 * exit, LOST and AUX records (truncated or not). --gen-ids: see above.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <intel-pt.h>
#include <libipt-sb.h>

#include "slurp.h"

/* ---- the random sideband stream ------------------------------------ */

static uint64_t rng;

static uint32_t rnd(uint32_t n)
{
	rng = rng * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(rng >> 33) % n;
}

static FILE *out;

static void u16(uint16_t v) { fwrite(&v, 2, 1, out); }
static void u32(uint32_t v) { fwrite(&v, 4, 1, out); }
static void u64(uint64_t v) { fwrite(&v, 8, 1, out); }

/*
 * With --gen-ids, each record names its event in an IDENTIFIER at the
 * end: event 9's trailer is TID|TIME|ID|CPU|IDENTIFIER, the others'
 * (0, 7, and 5, which the sample configuration does not name)
 * TID|TIME|IDENTIFIER. Without, the trailer is TID|TIME.
 */
static int ids_mode;
static uint64_t cur_id;

#define ST_PLAIN 0x6ull			/* TID | TIME */
#define ST_A     0x10006ull		/* TID | TIME | IDENTIFIER */
#define ST_B     0x100c6ull		/* TID | TIME | ID | CPU | IDENTIFIER */

static size_t trailer_size(void)
{
	if (!ids_mode)
		return 16;
	return cur_id == 9 ? 40 : 24;
}

/* A record of @body bytes (a multiple of 8) and its trailer; picks the
 * record's event. */
static void header(uint32_t type, uint16_t misc, size_t body)
{
	static const uint64_t ids[] = { 0, 7, 9, 5 };

	cur_id = ids[rnd(4)];
	u32(type);
	u16(misc);
	u16((uint16_t)(8 + body + trailer_size()));
}

static void trailer(uint32_t pid, uint64_t time)
{
	u32(pid);
	u32(pid);
	u64(time);
	if (!ids_mode)
		return;
	if (cur_id == 9) {
		u64(0x1234);		/* ID */
		u32(1);			/* CPU, reserved */
		u32(0);
	}
	u64(cur_id);
}

static void mmap_rec(const char *bin, uint32_t pid, uint64_t base,
		     uint64_t len, uint16_t misc, uint64_t time)
{
	size_t n = strlen(bin) + 1, pad = (8 - n % 8) % 8;
	static const char zero[8];

	header(1, misc, 32 + n + pad);
	u32(pid);
	u32(pid);
	u64(base);
	u64(len);
	u64(0);
	fwrite(bin, 1, n, out);
	fwrite(zero, 1, pad, out);
	trailer(pid, time);
}

static int gen(uint64_t seed, const char *bin, uint64_t base,
	       const char *path)
{
	size_t len;
	uint64_t t = 0;
	int n;

	free(slurp("ipt_sb", bin, &len));
	out = fopen(path, "wb");
	if (!out)
		return 1;
	rng = seed * 0x9e3779b97f4a7c15ull + 1;
	for (uint32_t pid = 1; pid <= 3; pid++)
		mmap_rec(bin, pid, base, len, 2, 0);
	header(12, 0, 8);			/* ITRACE_START */
	u32(1);
	u32(1);
	trailer(1, 0);
	n = 4 + (int)rnd(12);
	while (n--) {
		uint32_t pid = 1 + rnd(3), other = 1 + rnd(3);

		t += rnd(3) == 0;
		if (t > 6)
			break;
		switch (rnd(9)) {
		case 0:				/* MMAP, user or kernel */
			mmap_rec(bin, pid, base, len, rnd(4) ? 2 : 1, t);
			break;
		case 1:				/* SWITCH in or out */
			header(14, rnd(2) ? 0x2000 : 0, 0);
			trailer(pid, t);
			break;
		case 2:				/* SWITCH_CPU_WIDE */
			header(15, rnd(2) ? 0x2000 : 0, 8);
			u32(other);
			u32(other);
			trailer(pid, t);
			break;
		case 3:				/* exec, then its code */
			header(3, 0x2000, 16);
			u32(pid);
			u32(pid);
			u64(0x6f6f66);		/* "foo" */
			trailer(pid, t);
			mmap_rec(bin, pid, base, len, 2, t);
			break;
		case 4:				/* FORK or EXIT */
			header(rnd(2) ? 7 : 4, 0, 24);
			u32(pid);
			u32(other);
			u32(pid);
			u32(other);
			u64(t);
			trailer(pid, t);
			break;
		case 5:				/* LOST */
			header(2, 0, 16);
			u64(1);
			u64(2);
			trailer(pid, t);
			break;
		case 6:				/* AUX */
			header(11, 0, 24);
			u64(0);
			u64(0x100);
			u64(rnd(2));
			trailer(pid, t);
			break;
		default:			/* ITRACE_START */
			header(12, 0, 8);
			u32(pid);
			u32(pid);
			trailer(pid, t);
			break;
		}
	}
	return fclose(out) ? 1 : 0;
}

/* ---- the decode, as ptxed's ----------------------------------------- */

static int print_error(int errcode, const char *filename, uint64_t offset,
		       void *priv)
{
	(void)priv;
	printf("[%s:%016" PRIx64 " sideband %s: %s]\n",
	       filename ? filename : "<unknown>", offset,
	       errcode < 0 ? "error" : "warning",
	       errcode < 0 ? pt_errstr(pt_errcode(errcode))
			   : pt_sb_errstr((enum pt_sb_error_code)errcode));
	return 0;
}

static int print_switch(const struct pt_sb_context *context, void *priv)
{
	const char *name = pt_image_name(pt_sb_ctx_image(context));

	(void)priv;
	printf("[context: %s]\n", name ? name : "<unknown>");
	return 0;
}

static int drain(struct pt_block_decoder *dec, struct pt_sb_session *sb,
		 int status)
{
	while (status & pts_event_pending) {
		struct pt_image *image = NULL;
		struct pt_event ev;
		int err;

		status = pt_blk_event(dec, &ev, sizeof(ev));
		if (status < 0)
			return status;
		if (!ev.status_update) {
			if (ev.type == ptev_enabled)
				puts(ev.variant.enabled.resumed ? "[resumed]"
								: "[enabled]");
			else if (ev.type == ptev_disabled ||
				 ev.type == ptev_async_disabled)
				puts("[disabled]");
			else if (ev.type == ptev_tick)
				puts("[tick]");
		}
		err = pt_sb_event(sb, &image, &ev, sizeof(ev), stdout,
				  ptsbp_compact | ptsbp_file_offset);
		if (err < 0)
			return err;
		if (image) {
			err = pt_blk_set_image(dec, image);
			if (err < 0)
				return err;
		}
	}
	return status;
}

int main(int argc, char **argv)
{
	const char *raw = NULL, *pevent = NULL, *trace = NULL;
	uint64_t kernel_start = UINT64_MAX, base;
	uint64_t sample_type = ST_PLAIN, conf[16][2];
	unsigned nconf = 0;
	int tick = 0;
	struct pt_image_section_cache *iscache;
	struct pt_sb_pevent_config pcfg;
	struct pt_block_decoder *dec;
	struct pt_sb_session *sb;
	struct pt_image *image;
	struct pt_config cfg;
	char *colon, *file;
	uint8_t *buf;
	size_t size;
	int status, isid;

	if (argc == 6 && (!strcmp(argv[1], "--gen") ||
			  !strcmp(argv[1], "--gen-ids"))) {
		ids_mode = !strcmp(argv[1], "--gen-ids");
		return gen(strtoull(argv[2], NULL, 0), argv[3],
			   strtoull(argv[4], NULL, 0), argv[5]);
	}
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--raw") && i + 1 < argc)
			raw = argv[++i];
		else if (!strcmp(argv[i], "--pevent") && i + 1 < argc)
			pevent = argv[++i];
		else if (!strcmp(argv[i], "--tick"))
			tick = 1;
		else if (!strcmp(argv[i], "--ids"))
			ids_mode = 1;
		else if (!strcmp(argv[i], "--sample-type") && i + 1 < argc)
			sample_type = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--sample-config") && i + 1 < argc &&
			 nconf < 16) {
			char *e;

			conf[nconf][0] = strtoull(argv[++i], &e, 0);
			conf[nconf++][1] = strtoull(e + (*e == ':'), NULL, 0);
		}
		else if (!strcmp(argv[i], "--kernel-start") && i + 1 < argc)
			kernel_start = strtoull(argv[++i], NULL, 0);
		else
			trace = argv[i];
	}
	if (!raw || !pevent || !trace || !(colon = strrchr(raw, ':'))) {
		fprintf(stderr, "usage: ipt_sb [--tick] --raw FILE:BASE --pevent "
			"FILE.sb [--kernel-start ADDR] TRACE\n");
		return 2;
	}
	file = strndup(raw, (size_t)(colon - raw));
	base = strtoull(colon + 1, NULL, 0);

	iscache = pt_iscache_alloc(NULL);
	sb = pt_sb_alloc(iscache);
	image = pt_image_alloc(NULL);
	if (!iscache || !sb || !image)
		return 1;
	pt_sb_notify_error(sb, print_error, NULL);
	pt_sb_notify_switch(sb, print_switch, NULL);
	isid = pt_iscache_add_file(iscache, file, 0, UINT64_MAX, base);
	if (isid < 0 || pt_image_add_cached(image, iscache, isid, NULL) < 0) {
		fprintf(stderr, "ipt_sb: cannot map %s\n", file);
		return 1;
	}

	memset(&pcfg, 0, sizeof(pcfg));
	pcfg.size = sizeof(pcfg);
	pcfg.filename = pevent;
	if (ids_mode) {
		/* As perf-get-opts.bash writes it: every event, and 0. */
		static const uint64_t ids[][2] = {
			{ 0, ST_A }, { 7, ST_A }, { 9, ST_B },
		};

		sample_type = ST_A;
		memcpy(conf, ids, sizeof(ids));
		nconf = 3;
	}
	pcfg.sample_type = sample_type;
	if (nconf) {
		struct pev_sample_config *sc =
			malloc(sizeof(*sc) + nconf * sizeof(sc->stypes[0]));

		if (!sc)
			return 1;
		sc->nstypes = (uint8_t)nconf;
		for (unsigned k = 0; k < nconf; k++) {
			sc->stypes[k].identifier = conf[k][0];
			sc->stypes[k].sample_type = conf[k][1];
		}
		pcfg.sample_config = sc;
	}
	pcfg.time_mult = 1;
	pcfg.kernel_start = kernel_start;
	pcfg.primary = 1;
	if (pt_sb_alloc_pevent_decoder(sb, &pcfg) < 0 ||
	    pt_sb_init_decoders(sb) < 0) {
		fprintf(stderr, "ipt_sb: cannot load %s\n", pevent);
		return 1;
	}

	buf = slurp("ipt_sb", trace, &size);
	pt_config_init(&cfg);
	cfg.begin = buf;
	cfg.end = buf + size;
	cfg.flags.variant.block.enable_tick_events = tick;
	dec = pt_blk_alloc_decoder(&cfg);
	if (!dec || pt_blk_set_image(dec, image) < 0)
		return 1;

	for (;;) {
		status = pt_blk_sync_forward(dec);
		if (status < 0)
			break;
		for (;;) {
			struct pt_block block;

			status = drain(dec, sb, status);
			if (status < 0 || (status & pts_eos))
				break;
			memset(&block, 0, sizeof(block));
			status = pt_blk_next(dec, &block, sizeof(block));
			if (block.ninsn)
				printf("%" PRIx64 " %" PRIx64 " %u\n", block.ip,
				       block.end_ip, block.ninsn);
			if (status < 0)
				break;
		}
		if (status == -pte_eos || (status >= 0 && (status & pts_eos)))
			break;
		puts("[error]");
	}
	fflush(stdout);
	pt_blk_free_decoder(dec);
	pt_sb_free(sb);
	pt_image_free(image);
	pt_iscache_free(iscache);
	free(pcfg.sample_config);	/* libipt-sb keeps it, never frees it */
	free(buf);
	free(file);
	return 0;
}

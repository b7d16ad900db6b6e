/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * gen_pt: write a synthetic, deterministic Intel PT trace for benchmarks.
 *
 *   gen_pt [-s SIZE] [-S SEED] [-q] OUT
 *
 * SIZE takes K/M/G suffixes (default 128M); the file is exactly SIZE bytes.
 *
 * The packet mix imitates a user-space, cycle-accurate trace as perf
 * records it: mostly TNT-8 (conditional branches and compressed returns),
 * some TNT-64, TIPs whose IPs compress like real code (mostly 16/32-bit
 * updates, sometimes a jump into another module, rarely uncompressed),
 * a PSB+ every 4 KiB, MTC every few hundred bytes, CYC before many
 * packets, and the occasional PAD, MODE, PIP, CBR and FUP/TIP.PGD ...
 * TIP.PGE (a trip into the untraced kernel). Everything is encoded with
 * hwt_pt_encode and IPs are compressed with the same last-IP a decoder
 * keeps, so the trace decodes without errors.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hwt/pt.h>

#define BUF_SIZE	(1u << 20)
/* More than the largest group of packets one step emits (a PSB+). */
#define STEP_MAX	256
#define PSB_PERIOD	4096
#define MTC_SHIFT	3		/* as perf's default mtc_period */
#define NMODULES	4

struct rng {
	uint64_t s;
};

/* splitmix64: tiny, fast and good enough for a packet mix. */
static uint64_t rng_next(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t rng_below(struct rng *r, uint64_t n)
{
	return rng_next(r) % n;
}

/* True with probability @num / 1000. */
static int rng_permille(struct rng *r, unsigned num)
{
	return rng_below(r, 1000) < num;
}

struct gen {
	FILE *out;
	const char *path;
	uint8_t *buf;
	size_t fill;
	uint64_t written;	/* bytes flushed */
	uint64_t size;		/* target file size */
	struct rng rng;
	struct hwt_pt_last_ip lip;
	uint64_t ip;		/* where the simulated program is */
	uint64_t last_psb;	/* trace offset of the last PSB */
	uint64_t next_mtc;	/* trace offset after which an MTC is due */
	uint64_t ctc;		/* crystal clock, in CTC ticks */
	uint64_t tsc;
	uint8_t cbr;
	uint64_t cr3;
	int in_tsx;
	uint64_t counts[HWT_PT_NTYPES];
};

/* Code is placed in a few modules, as a dynamically linked program is. */
static const uint64_t module_base[NMODULES] = {
	0x0000555555554000ull,	/* the executable */
	0x00007f3a1c200000ull,	/* libc */
	0x00007f3a1c600000ull,	/* another library */
	0x00007ffff7fc3000ull,	/* ld.so / vdso */
};

static uint64_t offset(const struct gen *g)
{
	return g->written + g->fill;
}

static int flush(struct gen *g)
{
	if (g->fill && fwrite(g->buf, 1, g->fill, g->out) != g->fill) {
		fprintf(stderr, "gen_pt: %s: %s\n", g->path, strerror(errno));
		return -1;
	}
	g->written += g->fill;
	g->fill = 0;
	return 0;
}

static void put(struct gen *g, const struct hwt_pt_packet *pkt)
{
	int n = hwt_pt_encode(g->buf + g->fill, g->buf + BUF_SIZE, pkt);

	/* The generator only builds valid packets into reserved space. */
	if (n <= 0) {
		fprintf(stderr, "gen_pt: cannot encode a %s packet: %s\n",
			hwt_pt_type_name(pkt->type), hwt_errstr(n));
		abort();
	}
	g->fill += (size_t)n;
	g->counts[pkt->type]++;
}

static void put_simple(struct gen *g, unsigned type)
{
	struct hwt_pt_packet pkt;

	memset(&pkt, 0, sizeof(pkt));
	pkt.type = (uint8_t)type;
	put(g, &pkt);
}

/* An IP packet for @ip, compressed as hardware would (or as @force says). */
static void put_ip(struct gen *g, unsigned type, uint64_t ip, int force)
{
	struct hwt_pt_packet pkt;
	uint64_t payload;
	unsigned ipc;

	ipc = hwt_pt_ipc_choose(&g->lip, ip, &payload);
	if (force == HWT_PT_IPC_FULL) {
		ipc = HWT_PT_IPC_FULL;
		payload = ip;
	} else if (force == HWT_PT_IPC_UPDATE48 && g->lip.have_ip &&
		   !((g->lip.ip ^ ip) >> 48)) {
		ipc = HWT_PT_IPC_UPDATE48;
		payload = ip & 0xffffffffffffull;
	} else if (force == HWT_PT_IPC_SUPPRESSED) {
		ipc = HWT_PT_IPC_SUPPRESSED;
		payload = 0;
	}
	memset(&pkt, 0, sizeof(pkt));
	pkt.type = (uint8_t)type;
	pkt.u.ip.ipc = (uint8_t)ipc;
	pkt.u.ip.ip = payload;
	put(g, &pkt);
	hwt_pt_last_ip_update(&g->lip, ipc, payload);
}

static void put_cyc(struct gen *g)
{
	struct hwt_pt_packet pkt;
	uint64_t cycles;

	/* Mostly a few cycles between packets; now and then a stall. */
	if (rng_permille(&g->rng, 950))
		cycles = 1 + rng_below(&g->rng, 60);
	else
		cycles = 64 + rng_below(&g->rng, 20000);
	memset(&pkt, 0, sizeof(pkt));
	pkt.type = HWT_PT_CYC;
	pkt.u.cyc = cycles;
	put(g, &pkt);
	g->tsc += cycles;
}

static void put_mtc(struct gen *g)
{
	struct hwt_pt_packet pkt;
	unsigned ticks = rng_permille(&g->rng, 20) ? 2 : 1;

	g->ctc += (uint64_t)ticks << MTC_SHIFT;
	g->tsc += 700ull * ticks;
	memset(&pkt, 0, sizeof(pkt));
	pkt.type = HWT_PT_MTC;
	pkt.u.mtc = (uint8_t)(g->ctc >> MTC_SHIFT);
	put(g, &pkt);
	g->next_mtc = offset(g) + 128 + rng_below(&g->rng, 384);
}

static void put_cbr(struct gen *g)
{
	struct hwt_pt_packet pkt;

	memset(&pkt, 0, sizeof(pkt));
	pkt.type = HWT_PT_CBR;
	pkt.u.cbr = g->cbr;
	put(g, &pkt);
}

static void put_mode_exec(struct gen *g)
{
	struct hwt_pt_packet pkt;

	memset(&pkt, 0, sizeof(pkt));
	pkt.type = HWT_PT_MODE_EXEC;
	pkt.u.exec = HWT_PT_EXEC_CSL;
	put(g, &pkt);
}

static void put_tsc(struct gen *g)
{
	struct hwt_pt_packet pkt;

	memset(&pkt, 0, sizeof(pkt));
	pkt.type = HWT_PT_TSC;
	pkt.u.tsc = g->tsc & ((1ull << 56) - 1);
	put(g, &pkt);
}

static void put_pip(struct gen *g)
{
	struct hwt_pt_packet pkt;

	memset(&pkt, 0, sizeof(pkt));
	pkt.type = HWT_PT_PIP;
	pkt.u.pip.cr3 = g->cr3;
	put(g, &pkt);
}

/* PSB+: the sync point hardware emits every PSB_PERIOD bytes or so. */
static void put_psb_plus(struct gen *g)
{
	struct hwt_pt_packet pkt;

	g->last_psb = offset(g);
	put_simple(g, HWT_PT_PSB);
	hwt_pt_last_ip_init(&g->lip);	/* PSB resets last-IP */

	put_tsc(g);
	memset(&pkt, 0, sizeof(pkt));
	pkt.type = HWT_PT_TMA;
	pkt.u.tma.ctc = (uint16_t)g->ctc;
	pkt.u.tma.fc = (uint16_t)rng_below(&g->rng, 0x200);
	put(g, &pkt);
	put_cbr(g);
	if (rng_permille(&g->rng, 100))
		put_pip(g);
	put_mode_exec(g);
	if (g->in_tsx) {
		memset(&pkt, 0, sizeof(pkt));
		pkt.type = HWT_PT_MODE_TSX;
		pkt.u.tsx = HWT_PT_TSX_INTX;
		put(g, &pkt);
	}
	put_ip(g, HWT_PT_FUP, g->ip, -1);
	put_simple(g, HWT_PT_PSBEND);
}

static void put_tnt8(struct gen *g)
{
	struct hwt_pt_packet pkt;
	unsigned bits = rng_permille(&g->rng, 750) ? 6 :
			1 + (unsigned)rng_below(&g->rng, 5);

	memset(&pkt, 0, sizeof(pkt));
	pkt.type = HWT_PT_TNT8;
	pkt.u.tnt.bits = (uint8_t)bits;
	pkt.u.tnt.payload = rng_next(&g->rng) & ((1ull << bits) - 1);
	put(g, &pkt);
	g->ip += 8 * bits;
}

static void put_tnt64(struct gen *g)
{
	struct hwt_pt_packet pkt;
	unsigned bits = rng_permille(&g->rng, 600) ? 47 :
			7 + (unsigned)rng_below(&g->rng, 40);

	memset(&pkt, 0, sizeof(pkt));
	pkt.type = HWT_PT_TNT64;
	pkt.u.tnt.bits = (uint8_t)bits;
	pkt.u.tnt.payload = rng_next(&g->rng) & ((1ull << bits) - 1);
	put(g, &pkt);
	g->ip += 8 * bits;
}

/*
 * Where an indirect branch goes: mostly near (a switch, a return to a
 * caller in the same function neighbourhood: 16-bit update), often
 * elsewhere in the module (32-bit), sometimes another module.
 */
static uint64_t branch_target(struct gen *g)
{
	uint64_t r = rng_below(&g->rng, 1000);

	if (r < 550)
		return (g->ip & ~0xffffull) | rng_below(&g->rng, 0x10000);
	if (r < 930)
		return (g->ip & ~0xffffffull) | rng_below(&g->rng, 0x1000000);
	return module_base[rng_below(&g->rng, NMODULES)] +
	       rng_below(&g->rng, 0x400000);
}

static void put_tip(struct gen *g)
{
	uint64_t r = rng_below(&g->rng, 1000);
	int force = -1;

	g->ip = branch_target(g);
	/* Encoders need not compress: keep the wide forms in the mix. */
	if (r < 15)
		force = HWT_PT_IPC_FULL;
	else if (r < 40)
		force = HWT_PT_IPC_UPDATE48;
	put_ip(g, HWT_PT_TIP, g->ip, force);
}

/*
 * A trip into the (untraced) kernel: a syscall is a far branch, so it
 * ends with TIP.PGD alone; an interrupt binds a FUP to the interrupted
 * instruction first. Tracing resumes with TIP.PGE at the return address,
 * possibly after a context switch (PIP) and with fresh timing.
 */
static void put_kernel_trip(struct gen *g)
{
	int irq = rng_permille(&g->rng, 400);

	if (irq)
		put_ip(g, HWT_PT_FUP, g->ip, -1);
	else
		g->ip += 2;	/* after the syscall instruction */
	put_ip(g, HWT_PT_TIP_PGD, 0, HWT_PT_IPC_SUPPRESSED);

	if (rng_permille(&g->rng, 200)) {
		g->cr3 = (0x100000ull + rng_below(&g->rng, 0x10000)) << 12;
		put_pip(g);
	}
	if (rng_permille(&g->rng, 300))
		put_mtc(g);
	if (rng_permille(&g->rng, 200)) {
		g->tsc += 5000 + rng_below(&g->rng, 100000);
		put_tsc(g);
	}
	if (rng_permille(&g->rng, 100)) {
		g->cbr = (uint8_t)(0x18 + rng_below(&g->rng, 0x18));
		put_cbr(g);
	}
	put_mode_exec(g);
	put_ip(g, HWT_PT_TIP_PGE, g->ip, -1);
}

/* A transaction begins or commits: MODE.TSX binds to a FUP. */
static void put_tsx(struct gen *g)
{
	struct hwt_pt_packet pkt;

	g->in_tsx = !g->in_tsx;
	memset(&pkt, 0, sizeof(pkt));
	pkt.type = HWT_PT_MODE_TSX;
	pkt.u.tsx = g->in_tsx ? HWT_PT_TSX_INTX : 0;
	put(g, &pkt);
	put_ip(g, HWT_PT_FUP, g->ip, -1);
}

static void step(struct gen *g)
{
	uint64_t r;

	if (offset(g) - g->last_psb >= PSB_PERIOD) {
		put_psb_plus(g);
		return;
	}
	if (offset(g) >= g->next_mtc) {
		put_mtc(g);
		return;
	}
	/* Cycle-accurate mode: CYC precedes many packets. */
	if (rng_permille(&g->rng, 300))
		put_cyc(g);

	r = rng_below(&g->rng, 10000);
	if (r < 6600)
		put_tnt8(g);
	else if (r < 7100)
		put_tnt64(g);
	else if (r < 9900)
		put_tip(g);
	else if (r < 9930)
		put_kernel_trip(g);
	else if (r < 9960) {
		unsigned n = 1 + (unsigned)rng_below(&g->rng, 4);

		while (n--)
			put_simple(g, HWT_PT_PAD);
	} else if (r < 9970)
		put_tsx(g);
	else if (r < 9985) {
		g->cbr = (uint8_t)(0x18 + rng_below(&g->rng, 0x18));
		put_cbr(g);
	} else
		put_mode_exec(g);
}

static int generate(struct gen *g)
{
	put_psb_plus(g);
	g->next_mtc = offset(g) + 200;
	while (offset(g) + STEP_MAX <= g->size) {
		if (BUF_SIZE - g->fill < STEP_MAX && flush(g))
			return -1;
		step(g);
	}
	/* Pad to the exact size so the trace ends on a packet boundary. */
	while (offset(g) < g->size) {
		if (g->fill == BUF_SIZE && flush(g))
			return -1;
		put_simple(g, HWT_PT_PAD);
	}
	return flush(g);
}

static int parse_size(const char *s, uint64_t *size)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		return -1;
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	default: break;
	}
	if (*end == 'i' && end[1] == 'B')
		end += 2;
	else if (*end == 'B')
		end++;
	if (*end || v < 4096)
		return -1;
	*size = v;
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: gen_pt [-s SIZE] [-S SEED] [-q] OUT\n"
		"  -s SIZE   trace size, K/M/G suffixes allowed, >= 4K "
		"(default 128M)\n"
		"  -S SEED   PRNG seed (default 1); the output depends only on "
		"SIZE and SEED\n"
		"  -q        do not print the packet statistics\n");
}

static void print_stats(const struct gen *g)
{
	uint64_t total = 0;

	for (unsigned t = 0; t < HWT_PT_NTYPES; t++)
		total += g->counts[t];
	fprintf(stderr, "gen_pt: %s: %llu bytes, %llu packets\n", g->path,
		(unsigned long long)g->size, (unsigned long long)total);
	for (unsigned t = 0; t < HWT_PT_NTYPES; t++) {
		if (!g->counts[t])
			continue;
		fprintf(stderr, "  %-10s %12llu  %5.2f%%\n",
			hwt_pt_type_name(t),
			(unsigned long long)g->counts[t],
			100.0 * (double)g->counts[t] / (double)total);
	}
}

int main(int argc, char **argv)
{
	struct gen g;
	uint64_t seed = 1;
	int quiet = 0, c, ret;

	memset(&g, 0, sizeof(g));
	g.size = 128ull << 20;
	while ((c = getopt(argc, argv, "s:S:qh")) != -1) {
		switch (c) {
		case 's':
			if (parse_size(optarg, &g.size)) {
				fprintf(stderr, "gen_pt: bad size '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'S':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 'q':
			quiet = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind + 1 != argc) {
		usage(stderr);
		return 2;
	}

	g.path = argv[optind];
	g.rng.s = seed;
	g.ip = module_base[0] + 0x1040;
	g.tsc = 0x00001a2b3c4d5e6full;
	g.ctc = 0x1230;
	g.cbr = 0x24;
	g.cr3 = 0x12345000ull;
	hwt_pt_last_ip_init(&g.lip);
	g.buf = malloc(BUF_SIZE);
	g.out = fopen(g.path, "wb");
	if (!g.buf || !g.out) {
		fprintf(stderr, "gen_pt: %s: %s\n", g.path, strerror(errno));
		return 1;
	}
	ret = generate(&g);
	if (fclose(g.out) && !ret) {
		fprintf(stderr, "gen_pt: %s: %s\n", g.path, strerror(errno));
		ret = -1;
	}
	free(g.buf);
	if (ret) {
		remove(g.path);
		return 1;
	}
	if (!quiet)
		print_stats(&g);
	return 0;
}

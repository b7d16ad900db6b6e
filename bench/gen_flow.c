/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * gen_flow: write a synthetic program (raw x86-64 code) and an Intel PT
 * trace of its execution, for program-flow benchmarks and cross-checks.
 *
 *   gen_flow [-s SIZE] [-S SEED] [-f FUNCS] [-l LEVELS] [-m MTC] [-b] [-e]
 *            [-c] OUT
 *
 * Writes OUT.bin (the code, to be mapped at 0x400000: --raw OUT.bin:0x400000)
 * and OUT.pt (at least SIZE bytes of trace; K/M/G suffixes, default 64M).
 *
 * The program is a call tree: main (level 0) calls, in an endless loop,
 * each of the FUNCS functions of level 1; a function of level l calls
 * functions of level l + 1, directly or indirectly. Functions are 4..14
 * blocks of plain instructions ended by a conditional jump forward (taken
 * at random: a coin flip, or with -b as real code's are), an indirect
 * jump (TIP), a call, an indirect call (TIP), a fall-through or the
 * return: a compressed return (one taken TNT bit)
 * if its call came after the last PSB, else a TIP, as the hardware does
 * (a decoder starting at any PSB has no call stack; hwt flow -j relies
 * on that).
 * So the trace has loops, calls, returns, indirect branches and a large
 * image of many distinct blocks (FUNCS * (LEVELS - 1) functions, about 9
 * blocks each). A PSB+ (with the current IP in its FUP) is written every
 * 4 KiB, as a real trace has. The trace ends with TIP.PGD; with -e, it
 * ends right after a call instead of anywhere. With -m N, an MTC packet
 * follows every N instructions or so (a real trace's timing: perf's
 * intel_pt default, mtc_period=3, gives one every few hundred to thousand
 * instructions).
 *
 * A coin flip per conditional jump is the worst case for a decoder (and
 * for the cpu that ran the code): every bit picks the next block at
 * random. Real code's are mostly one way: in the vgpt recordings of
 * bench/run-flow.sh, each jcc went its own usual way 91% (python3), 92%
 * (xz) and 94% (gzip) of the times it ran. With -b each jcc gets a usual
 * way and a bias, drawn from python3's: the share of executions whose
 * jcc had a bias of 0.50-0.55, 0.55-0.60, ... 0.95-1.00 (BIAS_MILLE). The
 * code is the same as without -b (the bias has a generator of its own);
 * only the trace differs.
 *
 * The packets: TNT-64s of up to 47 bits and TIPs with a full 8-byte IP.
 * With -c, as processors (and vgpt) write them: short TNTs of up to 6
 * bits, and IPs compressed against the last one as tightly as it allows
 * (hwt_pt_ipc_choose(): 2, 4 or 6 bytes here).
 *
 * Prints "gen_flow: code N bytes, trace N bytes, N instructions" and,
 * with -b, how often a jcc went its usual way.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>

#include <hwt/pt.h>

#define BASE		0x400000ull
#define PSB_PERIOD	4096
#define MAX_DEPTH	64

enum term { T_FALL, T_JCC, T_IJMP, T_CALL, T_ICALL, T_RET, T_LOOP };

static const uint8_t term_len[] = {
	[T_FALL] = 0, [T_JCC] = 6, [T_IJMP] = 2, [T_CALL] = 5,
	[T_ICALL] = 2, [T_RET] = 1, [T_LOOP] = 5,
};

/* Plain instructions: add rax,1; nop; mov rax,rbx; lea rax,[rsp]; xor rcx,rcx */
static const struct { uint8_t len, b[4]; } plain[] = {
	{ 4, { 0x48, 0x83, 0xc0, 0x01 } },
	{ 1, { 0x90 } },
	{ 3, { 0x48, 0x89, 0xd8 } },
	{ 4, { 0x48, 0x8d, 0x04, 0x24 } },
	{ 3, { 0x48, 0x31, 0xc9 } },
};
#define NPLAIN (sizeof(plain) / sizeof(plain[0]))

struct block {
	uint64_t addr;		/* first instruction */
	uint64_t taddr;		/* the terminating branch */
	uint32_t tgt;		/* block (jcc, ijmp) or function (calls) */
	uint32_t bias;		/* jcc, with -b: P(usual way) * 2^32 */
	uint8_t usual;		/* jcc, with -b: taken (1) or not */
	uint8_t term;
	uint8_t nplain;
	uint8_t plain[6];
};

/* python3's jcc biases (see above), per mille, by 0.05 from 0.50. */
static const uint16_t BIAS_MILLE[10] = {
	44, 24, 24, 24, 28, 40, 27, 70, 76, 643,
};

struct func {
	uint32_t first;		/* index of its first block */
	uint32_t nblocks;
	uint32_t level;
};

struct rng {
	uint64_t s;
};

static uint64_t rng_next(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint32_t rng_range(struct rng *r, uint32_t lo, uint32_t hi)
{
	return lo + (uint32_t)(rng_next(r) % (hi - lo + 1));
}

struct prog {
	struct func *funcs;
	struct block *blocks;
	uint32_t nfuncs, nblocks, fpl, levels;
	uint8_t *code;
	size_t code_size;
	int biased;
	uint64_t njcc, nusual;
};

struct out {
	uint8_t *buf;
	size_t len, cap;
	uint64_t bits;		/* pending TNT bits, oldest highest */
	unsigned nbits;
	uint8_t compact;	/* -c */
	struct hwt_pt_last_ip lip;	/* -c: the decoder's last IP */
};

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p) {
		fprintf(stderr, "gen_flow: out of memory\n");
		exit(1);
	}
	return p;
}

static void put(struct out *o, const void *p, size_t n)
{
	if (o->len + n > o->cap) {
		o->cap = o->cap ? o->cap * 2 : 1u << 20;
		o->buf = xrealloc(o->buf, o->cap);
	}
	memcpy(o->buf + o->len, p, n);
	o->len += n;
}

static void put_le(struct out *o, uint64_t v, unsigned n)
{
	uint8_t b[8];

	for (unsigned i = 0; i < n; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	put(o, b, n);
}

/* TIP/FUP/PGE with a full 64-bit IP (IPBytes = 6), or with -c as tightly
 * as the last IP allows (hwt_pt_ipc_choose(), as vgpt writes them). */
static void put_ip(struct out *o, uint8_t opc, uint64_t ip)
{
	unsigned ipc = HWT_PT_IPC_FULL;
	uint64_t payload = ip;
	uint8_t b;

	if (o->compact) {
		ipc = hwt_pt_ipc_choose(&o->lip, ip, &payload);
		(void)hwt_pt_last_ip_update(&o->lip, ipc, payload);
	}
	b = (uint8_t)(opc | (ipc << 5));
	put(o, &b, 1);
	put_le(o, payload, (unsigned)hwt_pt_ipc_size(ipc));
}

/* Pending bits as TNT-64: 47 bits at most, then a stop bit above them. */
static void flush_tnt(struct out *o)
{
	static const uint8_t hdr[] = { 0x02, 0xa3 };

	if (!o->nbits)
		return;
	if (o->compact) {
		/* Short TNT: the bits above bit 0, a stop bit above them. */
		uint8_t b = (uint8_t)(((1u << o->nbits) | o->bits) << 1);

		put(o, &b, 1);
		o->bits = 0;
		o->nbits = 0;
		return;
	}
	put(o, hdr, 2);
	put_le(o, (1ull << o->nbits) | o->bits, 6);
	o->bits = 0;
	o->nbits = 0;
}

static void tnt(struct out *o, int taken)
{
	o->bits = (o->bits << 1) | (taken ? 1 : 0);
	if (++o->nbits == (o->compact ? 6u : 47u))
		flush_tnt(o);
}

static void psb(struct out *o, uint64_t ip)
{
	static const uint8_t psb_bytes[] = { 0x02, 0x82 };
	static const uint8_t mode_exec64[] = { 0x99, 0x01 };
	static const uint8_t psbend[] = { 0x02, 0x23 };

	flush_tnt(o);
	for (int i = 0; i < 8; i++)
		put(o, psb_bytes, 2);
	/* (A PSB clears the decoder's last IP.) */
	hwt_pt_last_ip_init(&o->lip);
	put(o, mode_exec64, 2);
	put_ip(o, 0x1d, ip);		/* FUP */
	put(o, psbend, 2);
}

/* A usual way and a bias for each jcc (-b), from generator @r. */
static void draw_biases(struct prog *p, struct rng *r)
{
	for (uint32_t i = 0; i < p->nblocks; i++) {
		struct block *bl = &p->blocks[i];
		uint32_t pick = rng_range(r, 0, 999), k = 0;
		double lo;

		if (bl->term != T_JCC)
			continue;
		while (k < 9 && pick >= BIAS_MILLE[k])
			pick -= BIAS_MILLE[k++];
		lo = 0.5 + 0.05 * k;
		bl->bias = (uint32_t) ((lo + 0.05 * (double) (rng_next(r) >> 11) /
					      (double) (1ull << 53)) *
				       4294967295.0);
		bl->usual = (uint8_t) (rng_next(r) & 1);
	}
}

static void build(struct prog *p, struct rng *r)
{
	uint32_t f, b, nb, fpl = p->fpl, L = p->levels;

	p->nfuncs = 1 + fpl * (L - 1);
	p->funcs = xrealloc(NULL, p->nfuncs * sizeof(*p->funcs));
	p->nblocks = 0;
	for (f = 0; f < p->nfuncs; f++) {
		p->funcs[f].level = f ? 1 + (f - 1) / fpl : 0;
		p->funcs[f].first = p->nblocks;
		p->funcs[f].nblocks = f ? rng_range(r, 4, 14) : fpl + 1;
		p->nblocks += p->funcs[f].nblocks;
	}
	p->blocks = xrealloc(NULL, p->nblocks * sizeof(*p->blocks));

	uint64_t addr = BASE;
	for (f = 0; f < p->nfuncs; f++) {
		struct func *fn = &p->funcs[f];

		nb = fn->nblocks;
		for (b = 0; b < nb; b++) {
			struct block *bl = &p->blocks[fn->first + b];
			int leaf = fn->level == L - 1;
			uint32_t next_level = 1 + fn->level * fpl;

			bl->nplain = (uint8_t)rng_range(r, 1, 6);
			bl->addr = addr;
			for (unsigned i = 0; i < bl->nplain; i++) {
				bl->plain[i] = (uint8_t)rng_range(r, 0, NPLAIN - 1);
				addr += plain[bl->plain[i]].len;
			}
			bl->tgt = 0;
			if (b == nb - 1) {
				bl->term = f ? T_RET : T_LOOP;
			} else if (!f) {
				bl->term = T_CALL;
				bl->tgt = 1 + b;
			} else {
				static const uint8_t pick[] = {
					T_JCC, T_JCC, T_FALL, T_IJMP,
					T_CALL, T_CALL, T_ICALL,
				};
				bl->term = pick[rng_range(r, 0, leaf ? 3 : 6)];
				if (bl->term == T_JCC || bl->term == T_IJMP)
					bl->tgt = rng_range(r, b + 1, nb - 1);
				else if (bl->term == T_CALL || bl->term == T_ICALL)
					bl->tgt = next_level + rng_range(r, 0, fpl - 1);
			}
			bl->taddr = addr;
			addr += term_len[bl->term];
		}
		addr = (addr + 15) & ~15ull;
	}

	p->code_size = addr - BASE;
	p->code = xrealloc(NULL, p->code_size);
	memset(p->code, 0xcc, p->code_size);
	for (f = 0; f < p->nfuncs; f++) {
		struct func *fn = &p->funcs[f];

		for (b = 0; b < fn->nblocks; b++) {
			struct block *bl = &p->blocks[fn->first + b];
			uint8_t *c = p->code + (bl->addr - BASE);
			uint64_t next = bl->taddr + term_len[bl->term], dst = 0;

			for (unsigned i = 0; i < bl->nplain; i++) {
				memcpy(c, plain[bl->plain[i]].b, plain[bl->plain[i]].len);
				c += plain[bl->plain[i]].len;
			}
			switch (bl->term) {
			case T_JCC:	/* je rel32 */
				dst = p->blocks[fn->first + bl->tgt].addr;
				*c++ = 0x0f;
				*c++ = 0x84;
				break;
			case T_CALL:	/* call rel32 */
				dst = p->blocks[p->funcs[bl->tgt].first].addr;
				*c++ = 0xe8;
				break;
			case T_LOOP:	/* jmp rel32 */
				dst = p->blocks[fn->first].addr;
				*c++ = 0xe9;
				break;
			case T_ICALL:	/* call rax */
				c[0] = 0xff;
				c[1] = 0xd0;
				continue;
			case T_IJMP:	/* jmp rax */
				c[0] = 0xff;
				c[1] = 0xe0;
				continue;
			case T_RET:
				c[0] = 0xc3;
				continue;
			default:
				continue;
			}
			uint32_t rel = (uint32_t)(dst - next);
			for (int i = 0; i < 4; i++)
				c[i] = (uint8_t)(rel >> (8 * i));
		}
	}
}

struct frame {
	uint32_t f, b;
	uint64_t epoch;		/* PSBs written before the call */
};

/*
 * Run the program until the trace has @size bytes; returns the number of
 * instructions executed (up to and including the last branch).
 */
static uint64_t run(struct prog *p, struct rng *r, struct out *o,
		    uint64_t size, int end_on_call, uint64_t mtc_period)
{
	struct frame stack[MAX_DEPTH];
	unsigned depth = 0;
	uint32_t f = 0, b = 0;
	uint64_t ninsn = 0, last_psb = 0, epoch = 0, next_mtc = mtc_period;
	uint8_t ctc = 0;

	psb(o, p->blocks[0].addr);
	for (;;) {
		const struct func *fn = &p->funcs[f];
		const struct block *bl = &p->blocks[fn->first + b];

		if (o->len - last_psb > PSB_PERIOD) {
			psb(o, bl->addr);
			last_psb = o->len;
			epoch++;
		}
		ninsn += bl->nplain + (bl->term != T_FALL);
		if (mtc_period && ninsn >= next_mtc) {
			/* As the hardware does, between any two packets
			 * (pending TNT bits go on after it). */
			uint8_t mtc[2] = { 0x59, ctc++ };

			put(o, mtc, 2);
			next_mtc = ninsn + mtc_period;
		}
		switch (bl->term) {
		case T_FALL:
			b++;
			break;
		case T_JCC: {
			int taken;

			if (p->biased) {
				int usual = (uint32_t) rng_next(r) < bl->bias;

				taken = usual ? bl->usual : !bl->usual;
				p->njcc++;
				p->nusual += (uint64_t) usual;
			} else {
				taken = (int) (rng_next(r) & 1);
			}

			tnt(o, taken);
			b = taken ? bl->tgt : b + 1;
			break;
		}
		case T_IJMP:
			flush_tnt(o);
			b = bl->tgt;
			put_ip(o, 0x0d, p->blocks[fn->first + b].addr);
			break;
		case T_CALL:
		case T_ICALL:
			stack[depth].f = f;
			stack[depth].b = b + 1;
			stack[depth].epoch = epoch;
			depth++;
			if (bl->term == T_ICALL) {
				flush_tnt(o);
				put_ip(o, 0x0d, p->blocks[p->funcs[bl->tgt].first].addr);
			}
			f = bl->tgt;
			b = 0;
			if (end_on_call && o->len >= size)
				return ninsn;
			break;
		case T_RET:
			depth--;
			f = stack[depth].f;
			b = stack[depth].b;
			if (stack[depth].epoch == epoch) {
				tnt(o, 1);
			} else {
				flush_tnt(o);
				put_ip(o, 0x0d, p->blocks[p->funcs[f].first + b].addr);
			}
			break;
		case T_LOOP:
			b = 0;
			break;
		}
		if (!end_on_call && o->len >= size)
			return ninsn;
	}
}

static uint64_t parse_size(const char *s)
{
	char *end;
	uint64_t v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		return 0;
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	}
	return *end ? 0 : v;
}

static int write_file(const char *prefix, const char *ext, const void *p,
		      size_t n)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s%s", prefix, ext);
	f = fopen(path, "wb");
	if (!f || fwrite(p, 1, n, f) != n || fclose(f)) {
		fprintf(stderr, "gen_flow: %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t size = 64ull << 20, ninsn;
	struct rng r = { 1 };
	struct prog p = { .fpl = 200, .levels = 6 };
	struct out o = { 0 };
	int c, end_on_call = 0;
	uint64_t mtc_period = 0;
	static const uint8_t pgd = 0x01;	/* TIP.PGD, IP suppressed */

	while ((c = getopt(argc, argv, "s:S:f:l:m:bec")) != -1) {
		switch (c) {
		case 's':
			size = parse_size(optarg);
			break;
		case 'S':
			r.s = strtoull(optarg, NULL, 0);
			break;
		case 'f':
			p.fpl = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'l':
			p.levels = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'e':
			end_on_call = 1;
			break;
		case 'b':
			p.biased = 1;
			break;
		case 'c':
			o.compact = 1;
			break;
		case 'm':
			mtc_period = strtoull(optarg, NULL, 0);
			break;
		default:
			goto usage;
		}
	}
	if (optind + 1 != argc || !size || p.fpl < 1 || p.levels < 2 ||
	    p.levels > MAX_DEPTH - 1)
		goto usage;

	build(&p, &r);
	if (p.biased) {
		struct rng br = { r.s ^ 0x62696173ull };

		draw_biases(&p, &br);
	}
	ninsn = run(&p, &r, &o, size, end_on_call, mtc_period);
	flush_tnt(&o);
	put(&o, &pgd, 1);
	if (write_file(argv[optind], ".bin", p.code, p.code_size) ||
	    write_file(argv[optind], ".pt", o.buf, o.len))
		return 1;
	printf("gen_flow: code %zu bytes (%u functions, %u blocks), trace %zu bytes, %llu instructions\n",
	       p.code_size, p.nfuncs, p.nblocks, o.len,
	       (unsigned long long)ninsn);
	if (p.biased)
		printf("gen_flow: %llu jcc, %.1f%% their usual way\n",
		       (unsigned long long) p.njcc,
		       p.njcc ? 100.0 * (double) p.nusual / (double) p.njcc : 0.0);
	free(p.funcs);
	free(p.blocks);
	free(p.code);
	free(o.buf);
	return 0;

usage:
	fprintf(stderr, "usage: gen_flow [-s SIZE] [-S SEED] [-f FUNCS] [-l LEVELS] [-m MTC] [-b] [-e] [-c] OUT\n");
	return 2;
}

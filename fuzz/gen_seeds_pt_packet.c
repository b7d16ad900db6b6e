/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Writes the seed corpus of fuzz_pt_packet (fuzz/corpus/pt_packet/) with
 * hwt's own encoder. Not built by CMake; to regenerate:
 *
 *   make && cc -std=c17 -Iinclude fuzz/gen_seeds_pt_packet.c \
 *      build/libhwt.a -o /tmp/gen_seeds && /tmp/gen_seeds fuzz/corpus/pt_packet
 *
 * The output is deterministic.
 */
#include <hwt/pt.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct out {
	uint8_t buf[4096];
	size_t len;
	struct hwt_pt_last_ip lip;	/* for put_ip() */
};

static void put(struct out *o, const struct hwt_pt_packet *p)
{
	int n = hwt_pt_encode(o->buf + o->len, o->buf + sizeof(o->buf), p);

	if (n <= 0) {
		fprintf(stderr, "cannot encode %s: %s\n",
			hwt_pt_type_name(p->type), hwt_errstr(n));
		exit(1);
	}
	o->len += (size_t)n;
}

static void raw(struct out *o, const uint8_t *b, size_t n)
{
	memcpy(o->buf + o->len, b, n);
	o->len += n;
}

static void simple(struct out *o, unsigned type)
{
	struct hwt_pt_packet p;

	memset(&p, 0, sizeof(p));
	p.type = (uint8_t)type;
	put(o, &p);
}

static void psb(struct out *o)
{
	simple(o, HWT_PT_PSB);
	hwt_pt_last_ip_init(&o->lip);
}

/* An IP packet with the compression an encoder would pick. */
static void put_ip(struct out *o, unsigned type, uint64_t ip)
{
	struct hwt_pt_packet p = { .type = (uint8_t)type };
	uint64_t payload;

	p.u.ip.ipc = (uint8_t)hwt_pt_ipc_choose(&o->lip, ip, &payload);
	p.u.ip.ip = payload;
	hwt_pt_last_ip_update(&o->lip, p.u.ip.ipc, payload);
	put(o, &p);
}

static void tnt(struct out *o, unsigned bits, uint64_t payload)
{
	struct hwt_pt_packet p = { .type = bits > 6 ? HWT_PT_TNT64
						    : HWT_PT_TNT8 };

	p.u.tnt.bits = (uint8_t)bits;
	p.u.tnt.payload = payload & ((1ull << bits) - 1);
	put(o, &p);
}

static void save(struct out *o, const char *dir, const char *name)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(o->buf, 1, o->len, f) != o->len || fclose(f)) {
		perror(path);
		exit(1);
	}
	memset(o, 0, sizeof(*o));
}

/* One of every packet type, with typical values. */
static void all_types(struct out *o)
{
	struct hwt_pt_packet p;

	psb(o);
#define P(...)                                                              \
	do {                                                                \
		memset(&p, 0, sizeof(p));                                   \
		__VA_ARGS__;                                                \
		put(o, &p);                                                 \
	} while (0)
	P(p.type = HWT_PT_TSC, p.u.tsc = 0x1234567890ull);
	P(p.type = HWT_PT_TMA, p.u.tma.ctc = 0x1234, p.u.tma.fc = 0x1ab);
	P(p.type = HWT_PT_CBR, p.u.cbr = 0x24);
	P(p.type = HWT_PT_PIP, p.u.pip.cr3 = 0x1234560, p.u.pip.nr = 1);
	P(p.type = HWT_PT_VMCS, p.u.vmcs = 0x12345000);
	P(p.type = HWT_PT_MODE_EXEC, p.u.exec = HWT_PT_EXEC_CSL);
	P(p.type = HWT_PT_MODE_TSX, p.u.tsx = HWT_PT_TSX_INTX);
	put_ip(o, HWT_PT_FUP, 0x401000);
	simple(o, HWT_PT_PSBEND);
	put_ip(o, HWT_PT_TIP_PGE, 0x401010);
	tnt(o, 6, 0x2a);
	tnt(o, 40, 0x123456789aull);
	put_ip(o, HWT_PT_TIP, 0x7fff12345678ull);
	P(p.type = HWT_PT_MTC, p.u.mtc = 0x42);
	P(p.type = HWT_PT_CYC, p.u.cyc = 0x3ff);
	P(p.type = HWT_PT_PTW, p.u.ptw.plc = 1, p.u.ptw.ip = 1,
	  p.u.ptw.payload = 0xdeadbeefcafef00dull);
	put_ip(o, HWT_PT_FUP, 0x401020);
	P(p.type = HWT_PT_PTW, p.u.ptw.plc = 0, p.u.ptw.payload = 0x1234);
	P(p.type = HWT_PT_MWAIT, p.u.mwait.hints = 0x20, p.u.mwait.ext = 1);
	P(p.type = HWT_PT_PWRE, p.u.pwre.state = 2, p.u.pwre.sub_state = 1);
	P(p.type = HWT_PT_EXSTOP, p.u.exstop_ip = 1);
	put_ip(o, HWT_PT_FUP, 0x401030);
	P(p.type = HWT_PT_PWRX, p.u.pwrx.last = 2, p.u.pwrx.deepest = 6,
	  p.u.pwrx.wake = HWT_PT_PWRX_INT);
	P(p.type = HWT_PT_CFE, p.u.cfe.type = 1, p.u.cfe.vector = 0x20,
	  p.u.cfe.ip = 1);
	put_ip(o, HWT_PT_FUP, 0xffffffff81000000ull);
	P(p.type = HWT_PT_EVD, p.u.evd.type = 1, p.u.evd.payload = 0x1000);
	P(p.type = HWT_PT_BBP, p.u.bbp.type = 1, p.u.bbp.sz = 1);
	P(p.type = HWT_PT_BIP, p.size = 5, p.u.bip.id = 1,
	  p.u.bip.value = 0x1234);
	P(p.type = HWT_PT_BEP, p.u.bep_ip = 1);
	put_ip(o, HWT_PT_FUP, 0xffffffff81000010ull);
	simple(o, HWT_PT_PAD);
	P(p.type = HWT_PT_MNT, p.u.mnt = 0x0102030405060708ull);
	simple(o, HWT_PT_OVF);
	put_ip(o, HWT_PT_FUP, 0x401040);
	put_ip(o, HWT_PT_TIP_PGD, 0x401050);
	P(p.type = HWT_PT_TIP_PGD);	/* suppressed */
	simple(o, HWT_PT_STOP);
	psb(o);
	simple(o, HWT_PT_PSBEND);
#undef P
}

/* BBP blocks of both payload sizes, with BIP headers that look like
 * TNT-8 outside the block. */
static void blocks(struct out *o)
{
	struct hwt_pt_packet p;

	psb(o);
	simple(o, HWT_PT_PSBEND);
	for (unsigned sz = 0; sz < 2; sz++) {
		memset(&p, 0, sizeof(p));
		p.type = HWT_PT_BBP;
		p.u.bbp.type = (uint8_t)(sz ? 0x1 : 0x2);
		p.u.bbp.sz = (uint8_t)sz;
		put(o, &p);
		for (unsigned id = 0; id < 32; id += 5) {
			memset(&p, 0, sizeof(p));
			p.type = HWT_PT_BIP;
			p.size = sz ? 5 : 9;
			p.u.bip.id = (uint8_t)id;
			p.u.bip.value = sz ? 0x80000000u + id
					   : 0xffffffff81000000ull + id;
			put(o, &p);
		}
		memset(&p, 0, sizeof(p));
		p.type = HWT_PT_BEP;
		p.u.bep_ip = (uint8_t)sz;
		put(o, &p);
		if (sz)
			put_ip(o, HWT_PT_FUP, 0x401000);
		tnt(o, 2, 2);	/* 0x0c: a BIP header, but outside */
	}
}

/* IPs near and far: every compression. */
static void ips(struct out *o)
{
	static const uint64_t seq[] = {
		0x401000, 0x401234, 0x40abcd, 0x7fff00401000ull,
		0xffffffff81000000ull, 0xffffffff81001000ull,
		0xffff800000000000ull, 0x1234000000401000ull,
		0x1234000000401010ull, 0x1234ffff00401010ull, 0x401000,
	};
	static const unsigned types[] = { HWT_PT_TIP, HWT_PT_FUP,
					  HWT_PT_TIP_PGE, HWT_PT_TIP_PGD };

	psb(o);
	put_ip(o, HWT_PT_FUP, 0x401000);
	simple(o, HWT_PT_PSBEND);
	for (size_t i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
		put_ip(o, types[i % 4], seq[i]);
		tnt(o, 1 + i % 6, i);
	}
}

/* Timing packets: TSC, TMA, MTC, CYC of every length, CBR. */
static void timing(struct out *o)
{
	struct hwt_pt_packet p;

	psb(o);
	memset(&p, 0, sizeof(p));
	p.type = HWT_PT_TSC;
	p.u.tsc = 0xffffffffffffffull;
	put(o, &p);
	memset(&p, 0, sizeof(p));
	p.type = HWT_PT_TMA;
	p.u.tma.ctc = 0xffff;
	p.u.tma.fc = 0x1ff;
	put(o, &p);
	simple(o, HWT_PT_PSBEND);
	for (unsigned k = 0; k < 9; k++) {
		memset(&p, 0, sizeof(p));
		p.type = HWT_PT_CYC;
		p.u.cyc = (1ull << (5 + 7 * k)) - 1;
		put(o, &p);
		memset(&p, 0, sizeof(p));
		p.type = HWT_PT_MTC;
		p.u.mtc = (uint8_t)(k * 37);
		put(o, &p);
	}
	memset(&p, 0, sizeof(p));
	p.type = HWT_PT_CBR;
	p.u.cbr = 0xff;
	put(o, &p);
}

/* Errors: an unknown opcode, a reserved encoding, then a good segment,
 * and a packet cut by the end of the buffer. */
static void errors(struct out *o)
{
	static const uint8_t bad_opc[] = { 0xd9 };
	static const uint8_t bad_mode[] = { 0x99, 0x40 };
	static const uint8_t cut_tsc[] = { 0x19, 0x01, 0x02 };

	psb(o);
	simple(o, HWT_PT_PSBEND);
	tnt(o, 3, 5);
	raw(o, bad_opc, sizeof(bad_opc));
	tnt(o, 3, 5);
	psb(o);
	simple(o, HWT_PT_PSBEND);
	raw(o, bad_mode, sizeof(bad_mode));
	psb(o);
	simple(o, HWT_PT_PSBEND);
	put_ip(o, HWT_PT_TIP, 0x401000);
	raw(o, cut_tsc, sizeof(cut_tsc));
}

/* PSB right after bytes 02 82 (MTC 0x02, TNT-8 0x82), and a PSB that a
 * preceding packet runs into. */
static void psb_edges(struct out *o)
{
	static const uint8_t mtc_tnt[] = { 0x59, 0x02, 0x82 };
	static const uint8_t tip_full[] = { 0xcd };

	raw(o, mtc_tnt, sizeof(mtc_tnt));
	psb(o);
	simple(o, HWT_PT_PSBEND);
	raw(o, tip_full, sizeof(tip_full));
	psb(o);
	simple(o, HWT_PT_PSBEND);
	tnt(o, 1, 1);
}

/* Reserved bits that decoders ignore. */
static void reserved_bits(struct out *o)
{
	static const uint8_t b[] = {
		0x99, 0x19,			/* MODE.Exec bits 4:3 */
		0x99, 0x3d,			/* MODE.TSX bits 4:2 */
		0x02, 0x03, 0x10, 0xff,		/* CBR byte 3 */
		0x02, 0x22, 0xf7, 0x21,		/* PWRE byte 2 */
		0x02, 0xa2, 0x21, 0xf2, 0xff, 0xff, 0xff,	/* PWRX */
		0x02, 0x63, 0xe3,		/* BBP bits 6:5 */
		0x0c, 1, 2, 3, 4,		/* BIP */
		0x02, 0x33,			/* BEP */
		0x02, 0x13, 0xe1, 0x20,		/* CFE bits 6:5 */
		0x02, 0x53, 0xe1, 1, 2, 3, 4, 5, 6, 7, 8,	/* EVD */
		0x0f, 0x01, 0x00,		/* CYC, non-minimal */
	};

	psb(o);
	simple(o, HWT_PT_PSBEND);
	raw(o, b, sizeof(b));
}

/* A longer random but valid stream. */
static uint64_t rnd(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void random_stream(struct out *o, uint64_t seed)
{
	uint64_t s = seed, ip = 0x401000;

	psb(o);
	simple(o, HWT_PT_PSBEND);
	while (o->len < 400) {
		uint64_t r = rnd(&s);
		struct hwt_pt_packet p;

		memset(&p, 0, sizeof(p));
		switch (r % 10) {
		case 0: case 1: case 2:
			tnt(o, 1 + (r >> 8) % 6, (r >> 16) & 0x3f);
			break;
		case 3: case 4:
			ip += (r >> 8) & 0xfff;
			if ((r >> 20) % 8 == 0)
				ip = rnd(&s) & 0x7fffffffffffull;
			put_ip(o, (r >> 24) & 1 ? HWT_PT_TIP : HWT_PT_FUP, ip);
			break;
		case 5:
			p.type = HWT_PT_CYC;
			p.u.cyc = (r >> 8) >> ((r >> 2) % 50);
			put(o, &p);
			break;
		case 6:
			p.type = HWT_PT_MTC;
			p.u.mtc = (uint8_t)(r >> 8);
			put(o, &p);
			break;
		case 7:
			if ((r >> 8) % 8 == 0) {
				psb(o);
				simple(o, HWT_PT_PSBEND);
			} else {
				simple(o, HWT_PT_PAD);
			}
			break;
		case 8:
			tnt(o, 7 + (r >> 8) % 41, (r >> 16) & 0x3f);
			break;
		default:
			p.type = HWT_PT_TSC;
			p.u.tsc = r >> 8;
			put(o, &p);
			break;
		}
	}
}

int main(int argc, char **argv)
{
	static struct out o;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	all_types(&o);
	save(&o, argv[1], "all_types.pt");
	blocks(&o);
	save(&o, argv[1], "blocks.pt");
	ips(&o);
	save(&o, argv[1], "ips.pt");
	timing(&o);
	save(&o, argv[1], "timing.pt");
	errors(&o);
	save(&o, argv[1], "errors.pt");
	psb_edges(&o);
	save(&o, argv[1], "psb_edges.pt");
	reserved_bits(&o);
	save(&o, argv[1], "reserved_bits.pt");
	random_stream(&o, 1);
	save(&o, argv[1], "random1.pt");
	random_stream(&o, 2);
	save(&o, argv[1], "random2.pt");
	return 0;
}

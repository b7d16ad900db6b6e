/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target for the analysis layer's "how did I get here"
 * (hwt_an_last_): random packets over a fixed small code image, as
 * fuzz_flow's, after a PSB+ that enables tracing there. The first input
 * byte picks the ring's size, the stack's depth, whether the trace is a
 * CPU's (a thread switch at given trace offsets), whether the decoder
 * moves between two images (the same addresses, other code) as perf.data
 * input does at a process switch, and whether the sync ends the decode
 * early (as hwt last --at does; at a sync picked by the input's size).
 *
 * Differential: each input is analysed twice, with the blocks' walks
 * kept and replayed and with every block walked again (HWT_AN_NO_MEMO);
 * the branches, the call stack and the end must be the same, else it
 * aborts. And a third time as hwt last does it, from blocks that end at
 * every branch, unwalked (HWT_AN_BRANCH_ENDS): the same where both ran
 * to the trace's end (the bounds below count the decoder's batches,
 * which then differ). Work is bounded through the sync callback (a
 * trace may loop in code that needs no trace).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <hwt/analysis.h>

#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * 1000: add rax, 1; cmp rax, 3; jb 1000; call 1030; jmp rax
 * 1011: call 1017; call rax; ret; syscall; jmp 1000
 * 1030: nop; je 1038; ret; 1034: int3 ...; 1038: jmp 1000; jmp rax
 */
static const uint8_t code[] = {
	0x48, 0x83, 0xc0, 0x01, 0x48, 0x83, 0xf8, 0x03, 0x72, 0xf6,
	0xe8, 0x21, 0x00, 0x00, 0x00, 0xff, 0xe0,
	0xe8, 0x01, 0x00, 0x00, 0x00, 0xff, 0xd0, 0xc3, 0x0f, 0x05,
	0xeb, 0xe3, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
	0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
	/* 1030 */
	0x90, 0x74, 0x04, 0xc3, 0xcc, 0xcc, 0xcc, 0xcc,
	/* 1038 */
	0xeb, 0xc6, 0xff, 0xe0
};

/* The other process's: jb made jae, and at 1030 a call 1011 (a direct
 * call inside a block) where the nop and je were. */
static uint8_t code2[sizeof(code)];

static const uint8_t psb_plus[] = {
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	0x99, 0x01,					/* mode.exec 64 */
	0x7d, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00,	/* fup 0x1000 */
	0x02, 0x23					/* psbend */
};

enum { MAX_SYNCS = 1 << 16 };

struct run {
	struct hwt_an_last *l;
	struct hwt_image *images[2];
	unsigned syncs;
	unsigned end_at;	/* the sync that ends the decode (--at), or 0 */
	uint64_t last_off;
	uint32_t blk_flags;	/* the decoder's, besides PSB_CLEARS_STACK */
	int err;		/* hwt_an_last_run()'s */
	uint8_t on_cpu, switch_images;
};

/* Before each event and block (where the time may move or the offset
 * reaches the next 32 bytes): a bound, and (as perf.data input does) the
 * process and thread the trace offset says. */
static int sync_cb(void *ctx, struct hwt_blk_decoder *dec, uint64_t *quiet)
{
	struct run *r = ctx;
	uint64_t off = 0;
	unsigned k;

	(void)hwt_blk_get_offset(dec, &off);
	/* Code that needs no trace may loop: a batch of blocks a call. */
	r->syncs += off == r->last_off ? 256 : 1;
	r->last_off = off;
	if (r->syncs > MAX_SYNCS)
		return -HWT_ERR_INTERNAL;	/* stop: enough work */
	if (r->end_at && r->syncs >= r->end_at)
		return 1;			/* as hwt last --at */
	k = (unsigned)(off >> 5) & 3;
	*quiet = ((off >> 5) + 1) << 5;
	if (r->switch_images &&
	    hwt_blk_image(dec) != r->images[k & 1])
		CHECK(hwt_blk_set_image(dec, r->images[k & 1]) >= 0);
	if (r->on_cpu)
		CHECK(hwt_an_last_task(r->l, 10 + (k & 1), 100 + k) >= 0);
	return 0;
}

static void analyse(struct run *r, const uint8_t *trace, size_t n,
		    const struct hwt_an_last_config *c)
{
	struct hwt_blk_config cfg;
	int err;

	r->l = hwt_an_last_new(c);
	CHECK(r->l != NULL);
	/* A CPU's: the threads' runs kept (all four sync_cb names). */
	for (unsigned k = 0; r->on_cpu && k < 4; k++)
		CHECK(hwt_an_last_watch(r->l, 10 + (k & 1), 100 + k) >= 0);
	r->syncs = 0;
	r->last_off = UINT64_MAX;
	hwt_blk_config_init(&cfg);
	cfg.flags |= HWT_BLK_PSB_CLEARS_STACK | r->blk_flags;
	cfg.qry.begin = trace;
	cfg.qry.end = trace + n;
	err = hwt_an_last_run(r->l, &cfg, r->images[0], 0, sync_cb, r);
	CHECK(err == 0 || err == -HWT_ERR_INTERNAL ||
	      (err == 1 && r->end_at));
	r->err = err;
}

static void same(struct hwt_an_last *a, struct hwt_an_last *b)
{
	const struct hwt_an_branch *ba, *bb;
	const struct hwt_an_frame *fa, *fb;
	struct hwt_an_last_end ea, eb;
	size_t na, nb, da, db;

	na = hwt_an_last_branches(a, &ba);
	nb = hwt_an_last_branches(b, &bb);
	CHECK(na == nb);
	for (size_t i = 0; i < na; i++) {
		CHECK(ba[i].kind == bb[i].kind && ba[i].from == bb[i].from &&
		      ba[i].to == bb[i].to && ba[i].error == bb[i].error);
		CHECK(ba[i].pid == bb[i].pid && ba[i].tid == bb[i].tid);
		CHECK(ba[i].have_tsc == bb[i].have_tsc &&
		      ba[i].tsc == bb[i].tsc);
	}
	na = hwt_an_last_stack(a, &fa, &da);
	nb = hwt_an_last_stack(b, &fb, &db);
	CHECK(na == nb && da == db);
	for (size_t i = 0; i < na; i++)
		CHECK(fa[i].kind == fb[i].kind && fa[i].site == fb[i].site &&
		      fa[i].entry == fb[i].entry && fa[i].ret == fb[i].ret);
	hwt_an_last_end(a, &ea);
	hwt_an_last_end(b, &eb);
	CHECK(ea.insns == eb.insns && ea.errors == eb.errors &&
	      ea.have_ip == eb.have_ip && (!ea.have_ip || ea.ip == eb.ip));
}

/* The runs kept are the same both ways; composed, each thread's stack
 * has at most the frames asked for. */
static void same_slices(struct hwt_an_last *a, struct hwt_an_last *b,
			size_t max)
{
	const struct hwt_an_slice *sa, *sb;
	const struct hwt_an_slice *runs[64];
	struct hwt_an_frame out[16];
	size_t na = hwt_an_last_slices(a, &sa), nb = hwt_an_last_slices(b, &sb);
	size_t n = 0, dropped;

	CHECK(na == nb);
	for (size_t i = 0; i < na; i++) {
		CHECK(sa[i].pid == sb[i].pid && sa[i].tid == sb[i].tid &&
		      sa[i].npops == sb[i].npops &&
		      sa[i].nframes == sb[i].nframes &&
		      sa[i].dropped == sb[i].dropped);
		CHECK(sa[i].nframes <= max);
		for (size_t k = 0; k < sa[i].nframes; k++)
			CHECK(sa[i].frames[k].ret == sb[i].frames[k].ret &&
			      sa[i].frames[k].site == sb[i].frames[k].site);
		for (size_t k = 0; k < sa[i].npops; k++)
			CHECK(sa[i].pops[k].ret == sb[i].pops[k].ret &&
			      sa[i].pops[k].kind == sb[i].pops[k].kind);
		if (sa[i].pid == 10 && n < 64)
			runs[n++] = &sa[i];
	}
	CHECK(hwt_an_slices_stack(runs, n, out, max < 16 ? max : 16,
				  &dropped) <= max);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct hwt_image *images[2];
	struct hwt_an_last_config c;
	struct run memo, walk, ends;
	uint8_t *trace;
	size_t n;

	if (size < 1 || size > 1 << 16)
		return 0;
	if (!images[0]) {
		memcpy(code2, code, sizeof(code));
		code2[8] = 0x73;
		code2[0x30] = 0xe8;	/* call 1011: 1035 - 0x24 */
		code2[0x31] = 0xdc;
		code2[0x32] = 0xff;
		code2[0x33] = 0xff;
		code2[0x34] = 0xff;
		for (int i = 0; i < 2; i++) {
			images[i] = hwt_image_new();
			CHECK(images[i] != NULL);
			CHECK(hwt_image_add_buffer(images[i],
						   i ? code2 : code,
						   sizeof(code), 0x1000) >= 0);
		}
	}
	n = sizeof(psb_plus) + size - 1;
	trace = malloc(n);
	CHECK(trace != NULL);
	memcpy(trace, psb_plus, sizeof(psb_plus));
	memcpy(trace + sizeof(psb_plus), data + 1, size - 1);

	memset(&c, 0, sizeof(c));
	c.nbranches = (size_t)1 << (data[0] & 7);
	c.max_depth = 1 + ((data[0] >> 3) & 3) * 3;
	memset(&memo, 0, sizeof(memo));
	memo.images[0] = images[0];
	memo.images[1] = images[1];
	memo.on_cpu = (data[0] >> 5) & 1;
	memo.switch_images = (data[0] >> 6) & 1;
	memo.end_at = data[0] >> 7 ? 1 + (unsigned)(size % 97) : 0;
	walk = memo;
	ends = memo;
	ends.blk_flags = HWT_BLK_END_ON_CALL | HWT_BLK_END_ON_JUMP;

	analyse(&memo, trace, n, &c);
	c.flags = HWT_AN_NO_MEMO;
	analyse(&walk, trace, n, &c);
	same(memo.l, walk.l);
	same_slices(memo.l, walk.l, c.max_depth);
	c.flags = HWT_AN_BRANCH_ENDS;
	analyse(&ends, trace, n, &c);
	if (!memo.err && !ends.err) {
		same(memo.l, ends.l);
		same_slices(memo.l, ends.l, c.max_depth);
	}

	hwt_an_last_delete(memo.l);
	hwt_an_last_delete(walk.l);
	hwt_an_last_delete(ends.l);
	free(trace);
	return 0;
}

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A trace decoded in pieces cut at PSBs (cli.h, struct cli_pieces), so
 * that a perf.data file's AUX streams need not be held whole in memory.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hwt/pt.h>

#include "cli/cli.h"

/* Big enough that the PSB+ at a cut is noise, small enough to not matter
 * next to the images. */
#define PIECE_DEFAULT (64u << 20)
#define PIECE_MIN 4096u

void cli_pieces_init(struct cli_pieces *p, uint64_t size,
		     int (*read)(void *ctx, uint64_t pos, uint8_t *buf,
				 size_t len),
		     void *ctx)
{
	const char *env = getenv("HWT_PIECE_SIZE");
	uint64_t v;

	memset(p, 0, sizeof(*p));
	p->size = size;
	p->read = read;
	p->ctx = ctx;
	p->piece = PIECE_DEFAULT;
	/* For tests: many cuts in a small trace. */
	if (env && cli_parse_u64(env, &v) == 0 && v >= PIECE_MIN &&
	    v <= SIZE_MAX / 2)
		p->piece = (size_t)v;
}

static int mem_read(void *ctx, uint64_t pos, uint8_t *buf, size_t len)
{
	memcpy(buf, (const uint8_t *)ctx + pos, len);
	return 0;
}

void cli_pieces_init_mem(struct cli_pieces *p, const uint8_t *buf,
			 uint64_t size)
{
	cli_pieces_init(p, size, mem_read, (void *)buf);
}

void cli_pieces_fini(struct cli_pieces *p)
{
	free(p->buf);
	memset(p, 0, sizeof(*p));
}

/*
 * Where to stop decoding in [buf, buf + len): the last PSB but one, so
 * that the PSB+ there is whole in the piece (it ends before the last
 * PSB). 0 if there is no such PSB after offset 0.
 */
static uint64_t find_cut(const uint8_t *buf, size_t len)
{
	struct hwt_pkt_decoder *d = hwt_pkt_decoder_new(buf, len);
	uint64_t off = 0;

	if (!d)
		return 0;
	if (hwt_pkt_sync_backward(d) < 0 || hwt_pkt_sync_backward(d) < 0 ||
	    hwt_pkt_get_sync_offset(d, &off) < 0)
		off = 0;
	hwt_pkt_decoder_delete(d);
	return off;
}

int cli_pieces_next(struct cli_pieces *p)
{
	size_t want;

	if (p->last)
		return 0;
	p->base += p->cut;
	p->len = p->cut = 0;
	if (p->base >= p->size && p->base)
		return 0;
	want = p->piece;
	for (;;) {
		if (want >= p->size - p->base)
			want = (size_t)(p->size - p->base);
		/* Never a NULL buffer, even for an empty stream: decoders
		 * take [buf, buf + len) and NULL + 0 is undefined. */
		if (want > p->cap || !p->buf) {
			uint8_t *nb = realloc(p->buf, want ? want : 1);

			if (!nb) {
				fprintf(stderr, "hwt: out of memory (a piece "
					"of %zu bytes of trace).\n", want);
				return -1;
			}
			p->buf = nb;
			p->cap = want;
		}
		if (p->read(p->ctx, p->base, p->buf, want) < 0)
			return -1;
		p->len = want;
		if (p->base + want == p->size) {
			p->cut = want;
			p->last = 1;
			return 1;
		}
		p->cut = find_cut(p->buf, want);
		if (p->cut)
			return 1;
		/* No PSB to cut at (a broken trace): a bigger piece. */
		want = want > SIZE_MAX / 2 ? SIZE_MAX : 2 * want;
	}
}

void cli_pieces_seek(struct cli_pieces *p, uint64_t off)
{
	p->base = off;
	p->cut = 0;
	p->len = 0;
	p->last = 0;
}

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hwt flow --srcline: each instruction's source line (perf script's
 * srcline), from the DWARF of the file it comes from (hwt_an_lines_).
 * A line is looked up once an address and image: hot code's instructions
 * come millions of times, and a lookup is a binary search of the line
 * table. A memo belongs to one thread.
 */
#include <stdlib.h>
#include <string.h>

#include <hwt/analysis.h>

#include "cli/cli.h"

#define SRCLINE_BITS 16

/* An address's line, ready to print: the name and ":LINE". */
struct srcline_slot {
	uint64_t ip, id, gen;		/* id 0: empty */
	const char *name;		/* the file's last part; NULL: none */
	uint16_t len;
	uint8_t nlen;
	char num[13];			/* ":LINE" */
};

struct cli_srcline {
	struct hwt_an_lines *lines;
	struct srcline_slot *slot;	/* 1 << SRCLINE_BITS */
};

struct cli_srcline *cli_srcline_new(const char *debug_dir)
{
	struct cli_srcline *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->lines = hwt_an_lines_new();
	s->slot = calloc((size_t)1 << SRCLINE_BITS, sizeof(*s->slot));
	if (!s->lines || !s->slot ||
	    hwt_an_lines_set_debug_dir(s->lines, debug_dir) < 0) {
		cli_srcline_delete(s);
		return NULL;
	}
	return s;
}

void cli_srcline_delete(struct cli_srcline *s)
{
	if (!s)
		return;
	hwt_an_lines_delete(s->lines);
	free(s->slot);
	free(s);
}

char *cli_put_srcline(struct cli_srcline *s, const struct cli_image_key *img,
		      uint64_t ip, char *p)
{
	struct srcline_slot *e = &s->slot[(ip ^ ip >> SRCLINE_BITS ^ img->gen) &
					  ((1u << SRCLINE_BITS) - 1)];

	if (e->ip != ip || e->id != img->id || e->gen != img->gen ||
	    !e->id) {
		const char *file = NULL, *base;
		unsigned line = 0;

		e->ip = ip;
		e->id = img->id;
		e->gen = img->gen;
		e->name = NULL;
		if (hwt_an_lines_find(s->lines, img->image, ip, &file,
				      &line) == 1) {
			size_t len;

			base = strrchr(file, '/');
			e->name = base ? base + 1 : file;
			len = strlen(e->name);
			/* (An output line has room for a name this long.) */
			e->len = (uint16_t)(len > 200 ? 200 : len);
			e->nlen = (uint8_t)snprintf(e->num, sizeof(e->num),
						    ":%u", line);
		}
	}
	if (!e->name)
		return p;
	*p++ = ' ';
	*p++ = ' ';
	memcpy(p, e->name, e->len);
	p += e->len;
	memcpy(p, e->num, sizeof(e->num));
	return p + e->nlen;
}

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

#define SRCLINE_BITS 14

struct srcline_slot {
	uint64_t ip, id, gen;		/* id 0: empty */
	const char *name;		/* the file's last part; NULL: none */
	unsigned line;
	size_t len;
};

struct cli_srcline {
	struct hwt_an_lines *lines;
	struct srcline_slot slot[1u << SRCLINE_BITS];
};

struct cli_srcline *cli_srcline_new(void)
{
	struct cli_srcline *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->lines = hwt_an_lines_new();
	if (!s->lines) {
		free(s);
		return NULL;
	}
	return s;
}

void cli_srcline_delete(struct cli_srcline *s)
{
	if (!s)
		return;
	hwt_an_lines_delete(s->lines);
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
			base = strrchr(file, '/');
			e->name = base ? base + 1 : file;
			e->len = strlen(e->name);
			/* (An output line has room for a name this long.) */
			if (e->len > 200)
				e->len = 200;
			e->line = line;
		}
	}
	if (!e->name)
		return p;
	*p++ = ' ';
	*p++ = ' ';
	memcpy(p, e->name, e->len);
	p += e->len;
	*p++ = ':';
	return p + sprintf(p, "%u", e->line);
}

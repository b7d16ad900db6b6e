/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * vgpt's text sideband, one line at a time (src/record/vgpt/README.md):
 *
 *   KIND TIME FIELD... [PATH]
 *
 * fields separated by one space, TIME and ids decimal, addresses, sizes
 * and offsets hex, PATH the rest of the line. The line is untrusted: every
 * number is checked for digits and range, and a line that does not parse
 * says which field is wrong. A keyword this hwt does not know is not an
 * error: newer sources add lines.
 */
#include <string.h>
#include <sys/mman.h>

#include <hwt/record.h>

struct field {
	const char *p;
	size_t col;
	const char *why;
};

static const char *const names[] = {
	[HWT_REC_VSB_UNKNOWN] = "?",
	[HWT_REC_VSB_COMM] = "comm",
	[HWT_REC_VSB_THREAD] = "thread",
	[HWT_REC_VSB_EXIT] = "exit",
	[HWT_REC_VSB_MMAP] = "mmap",
	[HWT_REC_VSB_FORK] = "fork",
	[HWT_REC_VSB_EXEC] = "exec",
	[HWT_REC_VSB_SWITCH] = "switch",
	[HWT_REC_VSB_MUNMAP] = "munmap",
};

const char *hwt_rec_vsb_name(enum hwt_rec_vsb_kind kind)
{
	if ((unsigned)kind >= sizeof(names) / sizeof(names[0]))
		return "?";
	return names[kind];
}

/* The next field: one space, then at least one character. */
static int next_field(struct field *f, const char *line, const char *what)
{
	if (*f->p != ' ' || !f->p[1] || f->p[1] == ' ') {
		f->col = (size_t)(f->p - line);
		f->why = what;
		return -1;
	}
	f->p++;
	return 0;
}

static int number(struct field *f, const char *line, int hex,
		  uint64_t max, uint64_t *v, const char *what)
{
	const char *s;
	uint64_t x = 0;
	unsigned base = hex ? 16 : 10;

	if (next_field(f, line, what))
		return -1;
	for (s = f->p; *s && *s != ' '; s++) {
		unsigned d;

		if (*s >= '0' && *s <= '9')
			d = (unsigned)(*s - '0');
		else if (hex && *s >= 'a' && *s <= 'f')
			d = (unsigned)(*s - 'a' + 10);
		else if (hex && *s >= 'A' && *s <= 'F')
			d = (unsigned)(*s - 'A' + 10);
		else
			break;
		if (x > (max - d) / base)
			goto bad;
		x = x * base + d;
	}
	if (s == f->p || (*s && *s != ' '))
		goto bad;
	f->p = s;
	*v = x;
	return 0;
bad:
	f->col = (size_t)(f->p - line);
	f->why = what;
	return -1;
}

static int id(struct field *f, const char *line, uint32_t *v,
	      const char *what)
{
	uint64_t x;

	if (number(f, line, 0, UINT32_MAX, &x, what))
		return -1;
	*v = (uint32_t)x;
	return 0;
}

static int hex(struct field *f, const char *line, uint64_t *v,
	       const char *what)
{
	return number(f, line, 1, UINT64_MAX, v, what);
}

/* The rest of the line, at least one character. */
static int rest(struct field *f, const char *line, const char **path,
		const char *what)
{
	if (next_field(f, line, what))
		return -1;
	*path = f->p;
	f->p += strlen(f->p);
	return 0;
}

/* PROT: three characters, [r-][w-][x-]. */
static int prot(struct field *f, const char *line, uint32_t *v)
{
	static const char want[3] = { 'r', 'w', 'x' };
	static const uint32_t bit[3] = { PROT_READ, PROT_WRITE, PROT_EXEC };

	if (next_field(f, line, "PROT is not [r-][w-][x-]"))
		return -1;
	*v = 0;
	for (int i = 0; i < 3; i++) {
		if (f->p[i] == want[i]) {
			*v |= bit[i];
		} else if (f->p[i] != '-') {
			f->col = (size_t)(f->p - line);
			f->why = "PROT is not [r-][w-][x-]";
			return -1;
		}
	}
	f->p += 3;
	return 0;
}

static int fields(struct field *f, const char *line,
		  struct hwt_rec_vsb_line *l)
{
	uint64_t out;

	switch (l->kind) {
	case HWT_REC_VSB_COMM:
		return id(f, line, &l->pid, "PID is not a decimal id") ||
		       id(f, line, &l->tid, "TID is not a decimal id") ||
		       rest(f, line, &l->path, "no EXE");
	case HWT_REC_VSB_THREAD:
	case HWT_REC_VSB_EXIT:
		return id(f, line, &l->pid, "PID is not a decimal id") ||
		       id(f, line, &l->tid, "TID is not a decimal id");
	case HWT_REC_VSB_MMAP:
		return id(f, line, &l->pid, "PID is not a decimal id") ||
		       hex(f, line, &l->start, "START is not hex") ||
		       hex(f, line, &l->len, "LEN is not hex") ||
		       hex(f, line, &l->pgoff, "PGOFF is not hex") ||
		       prot(f, line, &l->prot) ||
		       rest(f, line, &l->path, "no PATH");
	case HWT_REC_VSB_FORK:
		return id(f, line, &l->ppid, "PPID is not a decimal id") ||
		       id(f, line, &l->pid, "PID is not a decimal id");
	case HWT_REC_VSB_EXEC:
		return id(f, line, &l->pid, "PID is not a decimal id") ||
		       rest(f, line, &l->path, "no PATH");
	case HWT_REC_VSB_SWITCH:
		if (id(f, line, &l->pid, "PID is not a decimal id") ||
		    id(f, line, &l->tid, "TID is not a decimal id") ||
		    next_field(f, line, "no out|in"))
			return -1;
		out = !strncmp(f->p, "out", 3) && (!f->p[3] || f->p[3] == ' ');
		if (!out && !(!strncmp(f->p, "in", 2) &&
			      (!f->p[2] || f->p[2] == ' '))) {
			f->col = (size_t)(f->p - line);
			f->why = "not out or in";
			return -1;
		}
		l->out = (uint8_t)out;
		f->p += out ? 3 : 2;
		return 0;
	case HWT_REC_VSB_MUNMAP:
		return id(f, line, &l->pid, "PID is not a decimal id") ||
		       hex(f, line, &l->start, "START is not hex") ||
		       hex(f, line, &l->len, "LEN is not hex");
	default:
		return 0;
	}
}

int hwt_rec_vsb_parse(const char *line, struct hwt_rec_vsb_line *l,
		      const char **why, size_t *col)
{
	struct field f = { .p = line };
	size_t n = strcspn(line, " ");

	memset(l, 0, sizeof(*l));
	*why = NULL;
	*col = 0;
	l->keyword = line;
	l->keyword_len = n;
	for (size_t k = 1; k < sizeof(names) / sizeof(names[0]); k++)
		if (strlen(names[k]) == n && !strncmp(line, names[k], n))
			l->kind = (enum hwt_rec_vsb_kind)k;
	if (!n) {
		*why = "no keyword";
		return -HWT_ERR_BAD_FORMAT;
	}
	/* Every line, known or not, has its time second. */
	f.p = line + n;
	if (number(&f, line, 0, UINT64_MAX, &l->time,
		   "TIME is not a decimal number") ||
	    fields(&f, line, l))
		goto bad;
	/* Known lines end here; newer sources may add fields at the end. */
	return 0;
bad:
	*why = f.why;
	*col = f.col;
	return -HWT_ERR_BAD_FORMAT;
}

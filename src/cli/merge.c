/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hwt flow on the CPUs' streams of a perf.data (perf record -a): the
 * streams are decoded one after the other into a temporary file, as they
 * would print, and cut into ranges where the time or the thread changes;
 * at the end the ranges are printed in time order (as perf script orders
 * its samples), each thread's lines after a line naming it and its CPU.
 * The cuts come in the order of the text (struct cli_mark, from each
 * segment as it is printed), so a range is where one cut is and the next.
 */
#include <inttypes.h>
#include <errno.h>
#include <unistd.h>

#include "cli/cli.h"

struct range {
	uint64_t pos, key, task;
	uint32_t stream;
	uint8_t head;			/* a stream's header lines */
	uint8_t have_key, have_task;
};

struct cli_merge {
	FILE *f;
	struct range *r;
	size_t n, cap;
	uint32_t *cpus;			/* of each stream */
	size_t nstreams, cpucap;
	/* The stream now: its time and thread so far. */
	uint64_t key, task;
	uint8_t have_key, have_task, in_stream;
};

static struct range *push(struct cli_merge *m, uint64_t pos)
{
	if (m->n == m->cap) {
		size_t ncap = m->cap ? 2 * m->cap : 1024;
		struct range *nr = realloc(m->r, ncap * sizeof(*nr));

		/* Output we cannot order is output we would lose: stop. */
		if (!nr) {
			fprintf(stderr, "hwt: out of memory for output\n");
			exit(1);
		}
		m->r = nr;
		m->cap = ncap;
	}
	memset(&m->r[m->n], 0, sizeof(m->r[0]));
	m->r[m->n].pos = pos;
	return &m->r[m->n++];
}


struct cli_merge *cli_merge_new(void)
{
	struct cli_merge *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->f = cli_tmpfile("hwt flow");
	if (!m->f) {
		free(m);
		return NULL;
	}
	/* What comes before the first stream is the first's header. */
	push(m, 0)->head = 1;
	return m;
}

void cli_merge_delete(struct cli_merge *m)
{
	if (!m)
		return;
	fclose(m->f);
	free(m->r);
	free(m->cpus);
	free(m);
}

FILE *cli_merge_file(const struct cli_merge *m)
{
	return m->f;
}

void cli_merge_stream(struct cli_merge *m, uint64_t pos, uint32_t cpu)
{
	if (m->nstreams == m->cpucap) {
		size_t ncap = m->cpucap ? 2 * m->cpucap : 16;
		uint32_t *nc = realloc(m->cpus, ncap * sizeof(*nc));

		if (!nc) {
			fprintf(stderr, "hwt: out of memory for output\n");
			exit(1);
		}
		m->cpus = nc;
		m->cpucap = ncap;
	}
	m->cpus[m->nstreams] = cpu;
	push(m, pos)->stream = (uint32_t)m->nstreams++;
	m->have_key = m->have_task = 0;
	m->in_stream = 1;
}

void cli_merge_mark(struct cli_merge *m, uint64_t pos, const struct cli_mark *c)
{
	uint64_t key = m->key, task = c->have_task ? c->task : m->task;
	uint8_t have_key = m->have_key, have_task = c->have_task || m->have_task;
	struct range *last = m->n ? &m->r[m->n - 1] : NULL;

	if (!m->in_stream || !last)
		return;
	/* A stream's time does not go back: a damaged TSC keeps its place. */
	if (c->have_key && (!have_key || c->key > key)) {
		key = c->key;
		have_key = 1;
	}
	if (have_key == m->have_key && key == m->key &&
	    have_task == m->have_task && task == m->task)
		return;
	m->key = key;
	m->task = task;
	m->have_key = have_key;
	m->have_task = have_task;
	/* Nothing since the last cut: it takes this one's place. */
	if (last->pos != pos) {
		uint32_t stream = last->stream;

		last = push(m, pos);
		last->stream = stream;
	}
	last->key = key;
	last->task = task;
	last->have_key = have_key;
	last->have_task = have_task;
}

void cli_merge_stream_end(struct cli_merge *m, uint64_t pos)
{
	push(m, pos)->head = 1;
	m->in_stream = 0;
}

/*
 * A stream's ranges before its first time have that time; 0 if some
 * stream with lines has no time at all (nothing to order them by).
 */
static int fill_keys(struct cli_merge *m, uint64_t size)
{
	for (size_t i = 0; i < m->n;) {
		size_t j = i, first = SIZE_MAX, text = 0;

		if (m->r[i].head) {
			i++;
			continue;
		}
		for (; j < m->n && !m->r[j].head; j++) {
			uint64_t to = j + 1 < m->n ? m->r[j + 1].pos : size;

			if (m->r[j].have_key && first == SIZE_MAX)
				first = j;
			text += to > m->r[j].pos;
		}
		if (first == SIZE_MAX && text)
			return 0;
		for (size_t k = i; k < first && k < j; k++) {
			m->r[k].key = m->r[first].key;
			m->r[k].have_key = 1;
		}
		i = j;
	}
	return 1;
}

/* Ranges in time order; equal times as they came: by stream, and in a
 * stream's order. */
static int by_time(const void *a, const void *b)
{
	const struct range *x = *(const struct range *const *)a;
	const struct range *y = *(const struct range *const *)b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x < y ? -1 : x > y;
}

static uint64_t range_end(const struct cli_merge *m, const struct range *r,
			  uint64_t size)
{
	size_t i = (size_t)(r - m->r);

	return i + 1 < m->n ? m->r[i + 1].pos : size;
}

/*
 * The file read through a window per stream (and one for the headers):
 * each reads its ranges in the order of the file, so memory stays a
 * window a stream, whatever the size of the output.
 */
#define WINDOW (64u << 10)

struct window {
	char *buf;
	uint64_t at;		/* file offset of @buf[0] */
	size_t len;
};

static int copy_range(FILE *f, uint64_t size, struct window *w, uint64_t pos,
		      uint64_t to, struct cli_out *out)
{
	while (pos < to) {
		if (pos < w->at || pos >= w->at + w->len) {
			size_t want = size - pos < WINDOW ?
					      (size_t)(size - pos) : WINDOW;
			ssize_t got = pread(fileno(f), w->buf, want,
					    (off_t)pos);

			if (got <= 0) {
				fprintf(stderr, "hwt flow: cannot read the "
					"temporary file: %s\n",
					got < 0 ? strerror(errno) :
						  "it is short");
				return -1;
			}
			w->at = pos;
			w->len = (size_t)got;
		}
		{
			uint64_t end = w->at + w->len < to ? w->at + w->len :
							     to;

			cli_out_write(out, w->buf + (pos - w->at),
				      (size_t)(end - pos));
			pos = end;
		}
	}
	return 0;
}

int cli_merge_print(struct cli_merge *m, struct cli_out *out)
{
	const struct range *prev = NULL;
	struct range **order = NULL;
	struct window *win = NULL;
	uint64_t size;
	size_t nbody = 0, nwin = m->nstreams + 1;
	int timed, ret = -1;

	if (fflush(m->f) || (size = (uint64_t)ftello(m->f)) == (uint64_t)-1) {
		fprintf(stderr, "hwt flow: cannot write the temporary file: "
			"%s\n", strerror(errno));
		return -1;
	}
	order = malloc((m->n ? m->n : 1) * sizeof(*order));
	win = calloc(nwin, sizeof(*win));
	for (size_t i = 0; win && i < nwin; i++)
		if (!(win[i].buf = malloc(WINDOW)))
			goto oom;
	if (!order || !win)
		goto oom;
	/* The streams' headers first, as they came. */
	for (size_t i = 0; i < m->n; i++) {
		struct range *r = &m->r[i];

		if (!r->head)
			order[nbody++] = r;
		else if (copy_range(m->f, size, &win[m->nstreams], r->pos,
				    range_end(m, r, size), out) < 0)
			goto out;
	}
	timed = fill_keys(m, size);
	/* (Equal keys keep the file's order: a stream's ranges are read in
	 * its order.) */
	if (timed)
		qsort(order, nbody, sizeof(*order), by_time);
	cli_out_printf(out, timed ? "# all streams in time order\n" :
		       "# all streams, one after the other (a stream has no "
		       "time to order them by)\n");
	for (size_t i = 0; i < nbody; i++) {
		const struct range *r = order[i];
		uint64_t to = range_end(m, r, size);

		if (to <= r->pos)
			continue;
		if (!prev || prev->stream != r->stream ||
		    prev->have_task != r->have_task || prev->task != r->task) {
			if (r->have_task)
				cli_out_printf(out, "[pid %" PRIu32 " tid %"
					       PRIu32 " cpu %" PRIu32 "]\n",
					       (uint32_t)(r->task >> 32),
					       (uint32_t)r->task,
					       m->cpus[r->stream]);
			else
				cli_out_printf(out, "[cpu %" PRIu32 "]\n",
					       m->cpus[r->stream]);
		}
		if (copy_range(m->f, size, &win[r->stream], r->pos, to, out) < 0)
			goto out;
		prev = r;
	}
	ret = 0;
	goto out;
oom:
	fprintf(stderr, "hwt flow: out of memory.\n");
out:
	for (size_t i = 0; win && i < nwin; i++)
		free(win[i].buf);
	free(win);
	free(order);
	return ret;
}

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hwt flow on the CPUs' streams of a perf.data (perf record -a): the
 * streams are decoded one after the other into a temporary file, as they
 * would print, and cut into ranges where the time or the thread changes;
 * at the end the ranges are printed in time order (as perf script orders
 * its samples), each thread's lines after a line naming it and its CPU.
 * The cuts come in the order of the text (struct cli_mark, from each
 * segment as it is printed), so a range is where one cut is and the next.
 *
 * A stream's time never goes back (a mark's is raised to the one before),
 * so each stream's ranges are in time order already: printing is a merge
 * of the streams' lists, each read in its order from a second temporary
 * file (the ranges), and the text through a window per stream. Memory is
 * a few windows a stream, whatever the size of the output (a range can be
 * a line: with CYC every block has a time of its own).
 *
 * Lines chosen (--pid, --tid, -C, --time-range: cli_merge_select()) go
 * the same way, a range being one thread's at one time: the ranges not
 * chosen are left out, and the streams print in time order or one after
 * the other (then each where it came, with a CPU's threads named where
 * they change, as without a choice). Ranges of errors and lost-data
 * notes (cli_mark.note) are chosen by their time only.
 */
#include <inttypes.h>
#include <errno.h>
#include <unistd.h>

#include <hwt/perfdata.h>

#include "cli/cli.h"
#include "common/grow.h"

struct range {
	uint64_t pos, key, task;
	uint8_t have_key, have_task, note;
};

struct mstream {
	uint32_t cpu;
	uint8_t on_cpu;
	uint64_t body, end;	/* its text: [@body, @end) */
	uint64_t first, n;	/* its ranges in the ranges' file */
	uint64_t first_key;	/* of its first range with a time */
	uint8_t have_key;
};

/* Ranges written at a time. */
#define RANGES_BUF 4096

struct cli_merge {
	FILE *f;		/* the text */
	FILE *rf;		/* the ranges, in order */
	struct range buf[RANGES_BUF];
	size_t nbuf;
	uint64_t nranges;	/* written or in @buf */
	struct mstream *streams;
	size_t nstreams, cap;
	/* The stream now: its open range (not yet written), and whether
	 * one is open. */
	struct range cur;
	uint8_t open, in_stream;
	int failed;
	/* What to print (cli_merge_select()). */
	const struct cli_select *sel;
	struct hwt_pd_time_conv tc;	/* if @have_tc */
	uint8_t have_tc, unordered;
	uint8_t notes_hidden;	/* notes outside the times chosen */
};

static void fatal_oom(void)
{
	/* Output we cannot order is output we would lose: stop. */
	fprintf(stderr, "hwt: out of memory for output\n");
	exit(1);
}

struct cli_merge *cli_merge_new(void)
{
	struct cli_merge *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->f = cli_tmpfile("hwt flow");
	m->rf = m->f ? cli_tmpfile("hwt flow") : NULL;
	if (!m->rf) {
		if (m->f)
			fclose(m->f);
		free(m);
		return NULL;
	}
	return m;
}

void cli_merge_delete(struct cli_merge *m)
{
	if (!m)
		return;
	fclose(m->f);
	fclose(m->rf);
	free(m->streams);
	free(m);
}

void cli_merge_select(struct cli_merge *m, const struct cli_select *sel,
		      const struct hwt_pd_time_conv *tc, int ordered)
{
	m->sel = sel && sel->set ? sel : NULL;
	m->have_tc = tc != NULL;
	if (tc)
		m->tc = *tc;
	m->unordered = !ordered;
}

FILE *cli_merge_file(const struct cli_merge *m)
{
	return m->f;
}

static void put_range(struct cli_merge *m, const struct range *r)
{
	if (m->nbuf == RANGES_BUF) {
		if (fwrite(m->buf, sizeof(m->buf[0]), m->nbuf, m->rf) !=
		    m->nbuf)
			m->failed = 1;
		m->nbuf = 0;
	}
	m->buf[m->nbuf++] = *r;
	m->nranges++;
	m->streams[m->nstreams - 1].n++;
}

void cli_merge_stream(struct cli_merge *m, uint64_t pos, uint32_t cpu,
		      int on_cpu)
{
	struct mstream *s;

	if (hwt_grow((void **)&m->streams, &m->cap, m->nstreams + 1,
		     sizeof(*m->streams)) < 0)
		fatal_oom();
	s = &m->streams[m->nstreams++];
	memset(s, 0, sizeof(*s));
	s->cpu = cpu;
	s->on_cpu = (uint8_t)!!on_cpu;
	s->body = s->end = pos;
	s->first = m->nranges;
	memset(&m->cur, 0, sizeof(m->cur));
	m->cur.pos = pos;
	m->open = 1;
	m->in_stream = 1;
}

void cli_merge_mark(struct cli_merge *m, uint64_t pos, const struct cli_mark *c)
{
	struct range r;
	struct mstream *s;

	if (!m->in_stream)
		return;
	s = &m->streams[m->nstreams - 1];
	r = m->cur;
	r.pos = pos;
	if (c->have_task) {
		r.task = c->task;
		r.have_task = 1;
	}
	/* A stream's time does not go back: a damaged TSC keeps its place. */
	if (c->have_key && (!r.have_key || c->key > r.key)) {
		r.key = c->key;
		r.have_key = 1;
	}
	r.note = c->note;
	if (r.have_key == m->cur.have_key && r.key == m->cur.key &&
	    r.have_task == m->cur.have_task && r.task == m->cur.task &&
	    r.note == m->cur.note)
		return;
	if (r.have_key && !s->have_key) {
		s->first_key = r.key;
		s->have_key = 1;
	}
	/* Text since the last cut: that range is done. (Else this one
	 * takes its place.) */
	if (pos != m->cur.pos)
		put_range(m, &m->cur);
	m->cur = r;
}

void cli_merge_stream_end(struct cli_merge *m, uint64_t pos)
{
	if (!m->in_stream)
		return;
	if (pos != m->cur.pos)
		put_range(m, &m->cur);
	m->streams[m->nstreams - 1].end = pos;
	m->in_stream = 0;
}

/*
 * A file read through a window: the text of a stream, the ranges of a
 * stream, each read in its order. @elem bytes an item.
 */
struct window {
	char *buf;
	size_t cap, len, elem;
	uint64_t at;		/* item (byte) index of @buf[0] */
};

/* Item @i of @f (of @count in all) into the window; its address. */
static const void *item(FILE *f, struct window *w, uint64_t i, uint64_t count)
{
	if (i < w->at || i >= w->at + w->len) {
		uint64_t left = count - i;
		size_t want = left < w->cap ? (size_t)left : w->cap;
		ssize_t got = pread(fileno(f), w->buf, want * w->elem,
				    (off_t)(i * w->elem));

		if (got < (ssize_t)w->elem) {
			fprintf(stderr, "hwt flow: cannot read the temporary "
				"file: %s\n", got < 0 ? strerror(errno) :
				"it is short");
			return NULL;
		}
		w->at = i;
		w->len = (size_t)got / w->elem;
	}
	return w->buf + (i - w->at) * w->elem;
}

/* [@pos, @to) of the text to @out, through @w. */
static int copy_text(FILE *f, uint64_t size, struct window *w, uint64_t pos,
		     uint64_t to, struct cli_out *out)
{
	while (pos < to) {
		const char *p = item(f, w, pos, size);
		uint64_t end;

		if (!p)
			return -1;
		end = w->at + w->len < to ? w->at + w->len : to;
		cli_out_write(out, p, (size_t)(end - pos));
		pos = end;
	}
	return 0;
}

/* A stream's place in the merge: its next range, and where it ends. */
struct cursor {
	struct window text, ranges;
	uint64_t next;		/* ranges read */
	struct range r;
	uint64_t r_end;		/* @r's text ends there */
	uint8_t live;
};

#define TEXT_WINDOW (64u << 10)
#define RANGE_WINDOW 1024u

/*
 * The stream's next range into @k->r (each has text: one is written only
 * once text follows its mark); 0 when none is left.
 */
static int advance(struct cli_merge *m, size_t si, struct cursor *k)
{
	const struct mstream *s = &m->streams[si];
	const struct range *r, *nx;
	uint64_t i;

	k->live = 0;
	if (k->next == s->n)
		return 0;
	i = s->first + k->next++;
	r = item(m->rf, &k->ranges, i, m->nranges);
	if (!r)
		return -1;
	k->r = *r;
	if (k->next < s->n) {
		nx = item(m->rf, &k->ranges, i + 1, m->nranges);
		if (!nx)
			return -1;
		k->r_end = nx->pos;
	} else {
		k->r_end = s->end;
	}
	/* Before the stream's first time: that time. */
	if (!k->r.have_key) {
		k->r.key = s->first_key;
		k->r.have_key = s->have_key;
	}
	k->live = 1;
	return 1;
}

/*
 * Is @k's range chosen (cli_merge_select())? Errors and lost-data notes
 * whatever the threads (whose trace it was is not known), in the times
 * chosen; those not, counted.
 */
static int chosen(struct cli_merge *m, size_t si, const struct cursor *k)
{
	const struct range *r = &k->r;

	if (!m->sel)
		return 1;
	if (!cli_select_cpu(m->sel, m->streams[si].on_cpu, m->streams[si].cpu))
		return 0;
	if (!cli_select_time(m->sel, r->have_key, r->key,
			     m->have_tc ? &m->tc : NULL)) {
		m->notes_hidden |= r->note;
		return 0;
	}
	return r->note || cli_select_task(m->sel, r->have_task, r->task);
}

/* The streams one after the other, less what is not chosen. */
static int print_in_order(struct cli_merge *m, struct cursor *k,
			  struct window *head, uint64_t size,
			  struct cli_out *out)
{
	for (size_t i = 0; i <= m->nstreams; i++) {
		uint64_t from = i ? m->streams[i - 1].end : 0;
		uint64_t to = i < m->nstreams ? m->streams[i].body : size;
		uint64_t prev_task = 0;
		uint8_t prev_have = 0;
		int r;

		if (copy_text(m->f, size, head, from, to, out) < 0)
			return -1;
		if (i == m->nstreams)
			break;
		while ((r = advance(m, i, &k[i])) > 0) {
			const struct range *g = &k[i].r;

			if (!chosen(m, i, &k[i]))
				continue;
			if (m->streams[i].on_cpu && g->have_task &&
			    (!prev_have || g->task != prev_task))
				cli_out_printf(out, "[pid %" PRIu32 " tid %"
					       PRIu32 "]\n",
					       (uint32_t)(g->task >> 32),
					       (uint32_t)g->task);
			if (g->have_task) {
				prev_task = g->task;
				prev_have = 1;
			}
			if (copy_text(m->f, size, &k[i].text, g->pos,
				      k[i].r_end, out) < 0)
				return -1;
		}
		if (r < 0)
			return -1;
	}
	return 0;
}

/* The streams' ranges in time order (see above). */
static int print_ordered(struct cli_merge *m, struct cursor *k,
			 struct window *head, uint64_t size,
			 struct cli_out *out)
{
	size_t prev = SIZE_MAX;
	uint64_t prev_task = 0;
	uint8_t prev_have = 0;
	int timed = 1;

	/* The streams' headers first, as they came: the text before each
	 * stream's and after the last. */
	for (size_t i = 0; i <= m->nstreams; i++) {
		uint64_t from = i ? m->streams[i - 1].end : 0;
		uint64_t to = i < m->nstreams ? m->streams[i].body : size;

		if (copy_text(m->f, size, head, from, to, out) < 0)
			return -1;
	}
	/* A stream with text but no time: nothing to order them by. */
	for (size_t i = 0; i < m->nstreams; i++)
		if (!m->streams[i].have_key &&
		    m->streams[i].end > m->streams[i].body)
			timed = 0;
	cli_out_printf(out, timed ? "# all streams in time order\n" :
		       "# all streams, one after the other (a stream has no "
		       "time to order them by)\n");
	for (size_t i = 0; i < m->nstreams; i++)
		if (advance(m, i, &k[i]) < 0)
			return -1;
	for (;;) {
		size_t best = SIZE_MAX;
		struct cursor *c;

		/* The earliest; equal times by stream (a stream's own
		 * ranges come in its order); untimed, stream by stream. */
		for (size_t i = 0; i < m->nstreams; i++)
			if (k[i].live &&
			    (best == SIZE_MAX ||
			     (timed && k[i].r.key < k[best].r.key)))
				best = i;
		if (best == SIZE_MAX)
			return 0;
		c = &k[best];
		if (!chosen(m, best, c)) {
			if (advance(m, best, c) < 0)
				return -1;
			continue;
		}
		if (best != prev || c->r.have_task != prev_have ||
		    c->r.task != prev_task) {
			if (c->r.have_task)
				cli_out_printf(out, "[pid %" PRIu32 " tid %"
					       PRIu32 " cpu %" PRIu32 "]\n",
					       (uint32_t)(c->r.task >> 32),
					       (uint32_t)c->r.task,
					       m->streams[best].cpu);
			else
				cli_out_printf(out, "[cpu %" PRIu32 "]\n",
					       m->streams[best].cpu);
		}
		prev = best;
		prev_task = c->r.task;
		prev_have = c->r.have_task;
		if (copy_text(m->f, size, &c->text, c->r.pos, c->r_end, out) <
			    0 ||
		    advance(m, best, c) < 0)
			return -1;
	}
}

void cli_merge_hidden(struct cli_merge *m)
{
	m->notes_hidden = 1;
}

int cli_merge_print(struct cli_merge *m, struct cli_out *out)
{
	struct cursor *k = NULL;
	struct window head = { 0 };
	uint64_t size;
	int ret = -1;

	if (m->nbuf && fwrite(m->buf, sizeof(m->buf[0]), m->nbuf, m->rf) !=
			       m->nbuf)
		m->failed = 1;
	m->nbuf = 0;
	if (m->failed || fflush(m->rf) || fflush(m->f) ||
	    (size = (uint64_t)ftello(m->f)) == (uint64_t)-1) {
		fprintf(stderr, "hwt flow: cannot write the temporary file: "
			"%s\n", strerror(errno));
		return -1;
	}
	k = calloc(m->nstreams + 1, sizeof(*k));
	head.buf = malloc(TEXT_WINDOW);
	head.cap = TEXT_WINDOW;
	head.elem = 1;
	if (!k || !head.buf)
		goto oom;
	for (size_t i = 0; i < m->nstreams; i++) {
		k[i].text = (struct window){ malloc(TEXT_WINDOW), TEXT_WINDOW,
					     0, 1, 0 };
		k[i].ranges = (struct window){
			malloc(RANGE_WINDOW * sizeof(struct range)),
			RANGE_WINDOW, 0, sizeof(struct range), 0 };
		if (!k[i].text.buf || !k[i].ranges.buf)
			goto oom;
	}
	ret = m->unordered ? print_in_order(m, k, &head, size, out) :
			     print_ordered(m, k, &head, size, out);
	/* (Lost data is never silent.) */
	if (m->notes_hidden)
		fprintf(stderr, "hwt flow: the trace has errors or lost data "
			"outside the times chosen (not shown)\n");
	goto out;
oom:
	fprintf(stderr, "hwt flow: out of memory.\n");
out:
	for (size_t i = 0; k && i < m->nstreams; i++) {
		free(k[i].text.buf);
		free(k[i].ranges.buf);
	}
	free(k);
	free(head.buf);
	return ret;
}

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hwt calls --timeline: the function-call history as a timeline, in the
 * Chrome trace-event JSON format that Perfetto's UI (ui.perfetto.dev) and
 * chrome://tracing open: one complete event ("ph":"X") per call of a
 * function, per thread, nested as the calls were. The history gives its
 * lines in order, each with its depth and its time at its start: a line
 * at depth d ends the calls open deeper than d, and at d goes on with the
 * function open there (after a return to it) or ends it and starts its
 * own (a jump to another function). Each call ends where the thread's
 * next line at its depth or above starts; the thread's last calls end at
 * its last line's start (counting instructions: its end).
 *
 * The clock: the instructions (one a nanosecond; exact, in the order
 * the history has them), or with @time_clock the lines' TSC, converted
 * to perf's nanoseconds where the perf.data says how, else ticks as
 * nanoseconds: only as fine as the trace's timing packets (a trace with
 * a TSC per PSB and no MTC or CYC, as the portable source writes, shows
 * the calls between two of them as zero long). Lines without a time have
 * their thread's time before.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hwt/perfdata.h>

#include "cli/calls.h"
#include "common/grow.h"

#define LINE_DEPTH 200

struct open_call {
	uint64_t key, start;
	uint8_t named;
};

/* A thread: its open calls, at depths 0 .. @n - 1 (unopened: key 0). */
struct lthread {
	uint64_t task;
	struct open_call open[LINE_DEPTH + 1];
	uint8_t used[LINE_DEPTH + 1];
	int n;
	uint64_t last;		/* its last line's end */
};

struct calls_timeline {
	struct cli_out *out;
	struct hwt_pd_time_conv tc;
	uint8_t have_tc;
	int timed;		/* the lines' times; else instructions */
	uint8_t started;
	uint64_t insns;		/* the clock without times */
	struct lthread *threads;
	size_t n, cap, cur;
	uint64_t events;
	int failed;
};

struct calls_timeline *calls_timeline_new(struct cli_out *out,
					  int time_clock,
					  const struct hwt_pd_time_conv *tc)
{
	struct calls_timeline *tl = calloc(1, sizeof(*tl));

	if (!tl)
		return NULL;
	tl->out = out;
	tl->timed = time_clock;
	if (tc) {
		tl->tc = *tc;
		tl->have_tc = 1;
	}
	return tl;
}

static void start(struct calls_timeline *tl)
{
	tl->started = 1;
	cli_out_printf(tl->out, "{\"displayTimeUnit\":\"ns\",\"otherData\":"
		       "{\"clock\":\"%s\"},\"traceEvents\":[\n",
		       !tl->timed ? "instructions" :
		       tl->have_tc ? "perf time (ns)" : "TSC ticks");
}

static void put_name(struct cli_out *out, int named, uint64_t key)
{
	char *p = cli_out_reserve(out, 6 * 200 + 32);

	if (!named) {
		p = cli_put_str(p, "?? 0x");
		p = cli_put_hex(p, key);
	} else {
		const char *s = (const char *)(uintptr_t)key;

		for (size_t i = 0; s[i] && i < 200; i++) {
			unsigned char c = (unsigned char)s[i];

			if (c == '"' || c == '\\') {
				*p++ = '\\';
				*p++ = (char)c;
			} else if (c < 0x20 || c >= 0x7f) {
				/* (Names are bytes; JSON wants UTF-8.) */
				p += sprintf(p, "\\u%04x", c);
			} else {
				*p++ = (char)c;
			}
		}
	}
	cli_out_commit(out, p);
}

/* Nanoseconds as JSON's microseconds. */
static void put_us(struct cli_out *out, uint64_t ns)
{
	cli_out_printf(out, "%" PRIu64 ".%03" PRIu64, ns / 1000, ns % 1000);
}

static void end_call(struct calls_timeline *tl, const struct lthread *th,
		     const struct open_call *c, uint64_t end)
{
	cli_out_printf(tl->out, "%s{\"ph\":\"X\",\"pid\":%" PRIu32
		       ",\"tid\":%" PRIu32 ",\"name\":\"",
		       tl->events ? ",\n" : "", (uint32_t)(th->task >> 32),
		       (uint32_t)th->task);
	put_name(tl->out, c->named, c->key);
	cli_out_printf(tl->out, "\",\"ts\":");
	put_us(tl->out, c->start);
	cli_out_printf(tl->out, ",\"dur\":");
	put_us(tl->out, end > c->start ? end - c->start : 0);
	cli_out_printf(tl->out, "}");
	tl->events++;
}

/* End @th's calls at depth @d and deeper, at @end. */
static void end_from(struct calls_timeline *tl, struct lthread *th, int d,
		     uint64_t end)
{
	for (int k = th->n; k-- > d;)
		if (th->used[k]) {
			end_call(tl, th, &th->open[k], end);
			th->used[k] = 0;
		}
	if (th->n > d)
		th->n = d;
}

static struct lthread *thread_of(struct calls_timeline *tl, uint64_t task)
{
	if (tl->cur < tl->n && tl->threads[tl->cur].task == task)
		return &tl->threads[tl->cur];
	for (size_t i = 0; i < tl->n; i++)
		if (tl->threads[i].task == task) {
			tl->cur = i;
			return &tl->threads[i];
		}
	if (hwt_grow((void **)&tl->threads, &tl->cap, tl->n + 1,
		     sizeof(*tl->threads)) < 0)
		return NULL;
	memset(&tl->threads[tl->n], 0, sizeof(tl->threads[0]));
	tl->threads[tl->n].task = task;
	tl->cur = tl->n;
	return &tl->threads[tl->n++];
}

void calls_timeline_skip(struct calls_timeline *tl, uint64_t ninsn)
{
	tl->insns += ninsn;
}

int calls_timeline_add(struct calls_timeline *tl, uint64_t task, int depth,
		       int named, uint64_t key, uint64_t ninsn, int has_tsc,
		       uint64_t tsc)
{
	struct lthread *th;
	uint64_t t;

	if (tl->failed)
		return -1;
	if (!tl->started)
		start(tl);
	th = thread_of(tl, task);
	if (!th) {
		tl->failed = 1;
		fprintf(stderr, "hwt calls: out of memory for the timeline\n");
		return -1;
	}
	if (!tl->timed) {
		t = tl->insns;
		tl->insns += ninsn;
	} else if (has_tsc) {
		t = tl->have_tc ? hwt_pd_tsc_to_perf_time(&tl->tc, tsc) : tsc;
		/* (A thread's clock does not go back: a damaged TSC.) */
		if (t < th->last)
			t = th->last;
	} else {
		t = th->last;
	}
	depth = depth < 0 ? 0 : depth > LINE_DEPTH ? LINE_DEPTH : depth;
	end_from(tl, th, depth + 1, t);
	if (th->n > depth && th->used[depth] &&
	    (th->open[depth].key != key || th->open[depth].named != named))
		end_from(tl, th, depth, t);
	if (th->n <= depth || !th->used[depth]) {
		th->open[depth] = (struct open_call){ key, t, (uint8_t)named };
		th->used[depth] = 1;
	}
	if (th->n <= depth)
		th->n = depth + 1;
	th->last = tl->timed ? t : tl->insns;
	return 0;
}

/* A name as a JSON string's body (put_name()'s escaping). */
static void put_text(struct cli_out *out, const char *s)
{
	put_name(out, 1, (uint64_t)(uintptr_t)s);
}

int calls_timeline_finish(struct calls_timeline *tl,
			  const char *(*comm)(void *ctx, uint32_t tid),
			  void *ctx)
{
	if (!tl->started)
		start(tl);
	for (size_t i = 0; i < tl->n; i++)
		end_from(tl, &tl->threads[i], 0, tl->threads[i].last);
	/* The threads' names (metadata events), where known. */
	for (size_t i = 0; comm && i < tl->n; i++) {
		const struct lthread *th = &tl->threads[i];
		const char *name = comm(ctx, (uint32_t)th->task);

		if (!name)
			continue;
		cli_out_printf(tl->out, "%s{\"ph\":\"M\",\"pid\":%" PRIu32
			       ",\"tid\":%" PRIu32 ",\"name\":\"thread_name\","
			       "\"args\":{\"name\":\"",
			       tl->events ? ",\n" : "",
			       (uint32_t)(th->task >> 32), (uint32_t)th->task);
		put_text(tl->out, name);
		cli_out_printf(tl->out, "\"}}");
		tl->events++;
	}
	cli_out_printf(tl->out, "\n]}\n");
	return tl->failed ? -1 : 0;
}

void calls_timeline_delete(struct calls_timeline *tl)
{
	if (!tl)
		return;
	free(tl->threads);
	free(tl);
}

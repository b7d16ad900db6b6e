/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hwt flow's lines of CPUs' streams in time order (src/cli/merge.c): the
 * streams' text written as hwt flow writes it, with the marks of time and
 * thread its segments give, then printed by the merge; the whole output
 * is compared. Ranges go in time order, by stream where times are equal,
 * each thread's lines after a [pid P tid T cpu C] line where the stream
 * or the thread changes; the streams' headers first; a stream's lines
 * before its first time take that time; without a time in a stream with
 * lines, the streams one after the other.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cli/cli.h"

#define TASK(pid, tid) ((uint64_t)(pid) << 32 | (tid))

struct run {
	struct cli_merge *m;
	struct cli_out text;
};

static void r_start(struct run *r)
{
	r->m = cli_merge_new();
	assert_non_null(r->m);
	assert_int_equal(cli_out_init(&r->text, cli_merge_file(r->m)), 0);
}

static void r_text(struct run *r, const char *t)
{
	cli_out_write(&r->text, t, strlen(t));
}

/* A stream: its header, then its marks and text in the order given. */
static void r_stream(struct run *r, uint32_t cpu, const char *head)
{
	r_text(r, head);
	cli_merge_stream(r->m, cli_out_pos(&r->text), cpu, 1);
}

static void r_mark(struct run *r, int have_key, uint64_t key, int have_task,
		   uint64_t task)
{
	struct cli_mark c = { 0, key, task, (uint8_t)have_key,
			      (uint8_t)have_task, 0 };

	cli_merge_mark(r->m, cli_out_pos(&r->text), &c);
}

static void r_end(struct run *r)
{
	cli_merge_stream_end(r->m, cli_out_pos(&r->text));
}

/* Print the merge into memory and compare with @want. */
static void r_check(struct run *r, const char *want)
{
	struct cli_out out;

	cli_out_flush(&r->text);
	assert_int_equal(cli_out_init(&out, NULL), 0);
	assert_int_equal(cli_merge_print(r->m, &out), 0);
	cli_out_write(&out, "", 1);
	assert_string_equal(out.buf, want);
	cli_out_fini(&out);
	cli_out_fini(&r->text);
	cli_merge_delete(r->m);
}

/* Two CPUs' threads at interleaved times; equal times by stream. */
static void test_time_order(void **state)
{
	struct run r;

	(void)state;
	r_start(&r);
	r_stream(&r, 0, "# cpu 0\n");
	r_mark(&r, 1, 10, 1, TASK(1, 1));
	r_text(&r, "a10\n");
	r_mark(&r, 1, 30, 0, 0);
	r_text(&r, "a30\n");
	r_mark(&r, 0, 0, 1, TASK(1, 2));	/* another thread, same time */
	r_text(&r, "b30\n");
	r_end(&r);
	r_stream(&r, 3, "# cpu 3\n");
	r_mark(&r, 1, 20, 1, TASK(5, 5));
	r_text(&r, "c20\n");
	r_mark(&r, 1, 30, 0, 0);
	r_text(&r, "c30\n");
	r_mark(&r, 1, 40, 0, 0);
	r_text(&r, "c40\n");
	r_end(&r);
	r_check(&r, "# cpu 0\n# cpu 3\n# all streams in time order\n"
		    "[pid 1 tid 1 cpu 0]\na10\n"
		    "[pid 5 tid 5 cpu 3]\nc20\n"
		    "[pid 1 tid 1 cpu 0]\na30\n"
		    "[pid 1 tid 2 cpu 0]\nb30\n"
		    "[pid 5 tid 5 cpu 3]\nc30\nc40\n");
}

/*
 * A stream's time that goes back keeps its place; the lines before its
 * first time have that time; a mark with nothing after it before the
 * next is not a range of its own; a stream's text before any thread is
 * named is its CPU's.
 */
static void test_stream_rules(void **state)
{
	struct run r;

	(void)state;
	r_start(&r);
	r_stream(&r, 1, "# cpu 1\n");
	r_text(&r, "early\n");
	r_mark(&r, 1, 50, 0, 0);
	r_text(&r, "x50\n");
	r_mark(&r, 1, 5, 0, 0);		/* back: stays at 50 */
	r_text(&r, "x5\n");
	r_mark(&r, 1, 60, 0, 0);
	r_mark(&r, 1, 70, 0, 0);	/* nothing at 60 */
	r_text(&r, "x70\n");
	r_end(&r);
	r_stream(&r, 2, "# cpu 2\n");
	r_mark(&r, 1, 40, 1, TASK(7, 8));
	r_text(&r, "y40\n");
	r_mark(&r, 1, 55, 0, 0);
	r_text(&r, "y55\n");
	r_mark(&r, 1, 65, 0, 0);
	r_text(&r, "y65\n");
	r_end(&r);
	r_check(&r, "# cpu 1\n# cpu 2\n# all streams in time order\n"
		    "[pid 7 tid 8 cpu 2]\ny40\n"
		    "[cpu 1]\nearly\nx50\nx5\n"
		    "[pid 7 tid 8 cpu 2]\ny55\ny65\n"
		    "[cpu 1]\nx70\n");
}

/* A stream with lines but no time: the streams in turn. */
static void test_untimed(void **state)
{
	struct run r;

	(void)state;
	r_start(&r);
	r_stream(&r, 0, "# cpu 0\n");
	r_mark(&r, 1, 90, 1, TASK(1, 1));
	r_text(&r, "a90\n");
	r_end(&r);
	r_stream(&r, 1, "# cpu 1\n");
	r_mark(&r, 0, 0, 1, TASK(2, 2));
	r_text(&r, "b\n");
	r_end(&r);
	r_stream(&r, 2, "# cpu 2\n");	/* no lines: no matter */
	r_end(&r);
	r_check(&r, "# cpu 0\n# cpu 1\n# cpu 2\n# all streams, one after "
		    "the other (a stream has no time to order them by)\n"
		    "[pid 1 tid 1 cpu 0]\na90\n[pid 2 tid 2 cpu 1]\nb\n");
}

/* Ranges longer than the window the merge reads the file through. */
static void test_long_ranges(void **state)
{
	static char big[3][200001];
	struct run r;
	char *want, *p;

	(void)state;
	for (int k = 0; k < 3; k++) {
		for (size_t i = 0; i < sizeof(big[k]) - 2; i++)
			big[k][i] = (char)('a' + (i * 7 + (size_t)k) % 26);
		big[k][sizeof(big[k]) - 2] = '\n';
		big[k][sizeof(big[k]) - 1] = 0;
	}
	r_start(&r);
	r_stream(&r, 0, "");
	r_mark(&r, 1, 2, 1, TASK(1, 1));
	r_text(&r, big[1]);
	r_end(&r);
	r_stream(&r, 1, "");
	r_mark(&r, 1, 1, 1, TASK(2, 2));
	r_text(&r, big[0]);
	r_mark(&r, 1, 3, 0, 0);
	r_text(&r, big[2]);
	r_end(&r);
	want = malloc(4 * sizeof(big[0]) + 200);
	assert_non_null(want);
	p = want + sprintf(want, "# all streams in time order\n"
				 "[pid 2 tid 2 cpu 1]\n%s", big[0]);
	p += sprintf(p, "[pid 1 tid 1 cpu 0]\n%s", big[1]);
	sprintf(p, "[pid 2 tid 2 cpu 1]\n%s", big[2]);
	r_check(&r, want);
	free(want);
}

/*
 * More ranges than the merge writes at a time (4096) and reads at a time
 * (1024 a stream): three streams of 5000 lines each, their times
 * interleaved (line k of stream s at 3k + s; equal times at every tenth,
 * which go by stream).
 */
static void test_many_ranges(void **state)
{
	enum { LINES = 5000, STREAMS = 3 };
	struct run r;
	char line[32], *want, *p;

	(void)state;
	r_start(&r);
	for (int s = 0; s < STREAMS; s++) {
		r_stream(&r, (uint32_t)s, "");
		for (int k = 0; k < LINES; k++) {
			uint64_t key = (uint64_t)(k % 10 ? 3 * k + s : 3 * k);

			r_mark(&r, 1, key, 1, TASK(s + 1, s + 1));
			snprintf(line, sizeof(line), "%d:%d\n", s, k);
			r_text(&r, line);
		}
		r_end(&r);
	}
	want = malloc((size_t)LINES * STREAMS * 64 + 64);
	assert_non_null(want);
	p = want + sprintf(want, "# all streams in time order\n");
	for (int k = 0; k < LINES; k++)
		for (int s = 0; s < STREAMS; s++)
			p += sprintf(p, "[pid %d tid %d cpu %d]\n%d:%d\n", s + 1,
				     s + 1, s, s, k);
	r_check(&r, want);
	free(want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_time_order),
		cmocka_unit_test(test_stream_rules),
		cmocka_unit_test(test_untimed),
		cmocka_unit_test(test_long_ranges),
		cmocka_unit_test(test_many_ranges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hwt calls' history of CPUs' streams (src/cli/calls.c, calls_merge_*):
 * decodes given as their function segments and frame operations, two
 * CPUs' streams in which two threads change places, replayed into one
 * history. Each thread's frames go on across the CPUs only if the slices
 * come in time order and each thread's frames are put by while the other
 * runs; without time, the streams come one after the other, each
 * thread's frames starting again with each. The printed history is
 * compared whole.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cli/calls.h"

#define TASK(pid) ((uint64_t)(pid) << 32 | (pid))

/* A decode's output, as calls_seg_block() and calls_seg_task() make it. */
struct build {
	struct calls_seg c;
	uint64_t task;
	char text[256];		/* the decode's text (an error line, say) */
	size_t len;
};

/* A stream's first decode. */
static void b_start(struct build *b, struct calls_names *names)
{
	memset(b, 0, sizeof(*b));
	calls_seg_start(&b->c, names, 1);
}

static void b_task(struct build *b, uint32_t pid, int timed, uint64_t tsc)
{
	calls_seg_task(&b->c, pid, pid, timed, tsc, b->len);
	b->task = TASK(pid);
}

static void b_text(struct build *b, const char *t)
{
	size_t n = strlen(t);

	assert_true(b->len + n <= sizeof(b->text));
	memcpy(b->text + b->len, t, n);
	b->len += n;
}

static void b_op(struct build *b, enum calls_op_kind kind, uint64_t ip)
{
	struct calls_seg *c = &b->c;

	c->ops = realloc(c->ops, (c->nops + 1) * sizeof(*c->ops));
	assert_non_null(c->ops);
	c->ops[c->nops++] = (struct calls_op){
		.ip = ip, .before = c->nrecs, .kind = (uint8_t)kind
	};
	c->ops_cap = c->nops;
}

static void b_rec(struct build *b, const char *name, uint64_t ip)
{
	struct calls_seg *c = &b->c;

	c->recs = realloc(c->recs, (c->nrecs + 1) * sizeof(*c->recs));
	assert_non_null(c->recs);
	c->recs[c->nrecs++] = (struct calls_rec){
		.name = name, .start = ip, .ip = ip, .ninsn = 1,
		.task = b->task, .text_at = b->len,
	};
	c->recs_cap = c->nrecs;
	c->new_seg = 1;
}

/* Give @b's decode to a stream's history; another one starts in @b. */
static void take(struct calls_hist *h, struct build *b)
{
	struct calls_names *names = b->c.names;

	assert_int_equal(calls_take(h, &b->c, b->text, 0, b->len, 1), 0);
	calls_take_end(h, &b->c);
	calls_seg_free(&b->c);
	memset(b, 0, sizeof(*b));
	calls_seg_start(&b->c, names, 0);
}

/* ... and end the stream. */
static void stream(struct calls_merge *m, uint32_t cpu, struct build *b)
{
	struct calls_hist *h = calls_hist_new_log(m, cpu);

	assert_non_null(h);
	take(h, b);
	assert_int_equal(calls_print(h, NULL), 0);
	calls_hist_delete(h);
	calls_seg_free(&b->c);
}

/* The streams' slices replayed into one history that prints what @sel
 * chooses (NULL: all), printed; @m deleted. */
static char *replay_chosen(struct calls_merge *m, const struct cli_select *sel)
{
	struct calls_hist *h = calls_hist_new(NULL, 0);
	struct cli_out out;
	char *text;

	assert_non_null(h);
	calls_hist_select(h, sel, NULL);
	assert_int_equal(calls_merge_replay(m, h), 0);
	assert_int_equal(cli_out_init(&out, NULL), 0);
	assert_int_equal(calls_print(h, &out), 0);
	text = strndup(out.buf, out.len);
	assert_non_null(text);
	free(out.buf);
	calls_hist_delete(h);
	calls_merge_delete(m);
	return text;
}

static char *replay(struct calls_merge *m)
{
	return replay_chosen(m, NULL);
}

/*
 * CPU 0: thread 1 runs main, calls f (returning to 0x105); thread 2 then
 * runs g. CPU 1: thread 2 runs h, calls k (returning to 0x205); thread 1
 * then returns to 0x105 and runs main. Times (@timed): 10, 30 on CPU 0,
 * 20, 40 on CPU 1.
 */
static struct calls_merge *run_streams(struct calls_names *names,
					int timed)
{
	struct calls_merge *m = calls_merge_new();
	struct build b;

	assert_non_null(m);
	b_start(&b, names);
	b_task(&b, 1, timed, 10);
	b_rec(&b, "main", 0x100);
	b_op(&b, OP_PUSH, 0x105);
	b_rec(&b, "f", 0x300);
	b_task(&b, 2, timed, 30);
	b_rec(&b, "g", 0x400);
	stream(m, 0, &b);

	b_start(&b, names);
	b_task(&b, 2, timed, 20);
	b_rec(&b, "h", 0x200);
	b_op(&b, OP_PUSH, 0x205);
	b_rec(&b, "k", 0x500);
	b_task(&b, 1, timed, 40);
	b_op(&b, OP_RETURN, 0x105);
	b_rec(&b, "main", 0x105);
	stream(m, 1, &b);
	return m;
}

static char *run(struct calls_names *names, int timed)
{
	return replay(run_streams(names, timed));
}

static void test_timed(void **state)
{
	char *text = run(*state, 1);

	/* Thread 2's k frame is still open when it runs g on CPU 0, and
	 * thread 1's return on CPU 1 closes the frame of its call on CPU 0. */
	assert_string_equal(text,
			    "[pid 1 tid 1 cpu 0]\n"
			    "1\tmain\tinst 1,1\n"
			    "2\t  f\tinst 2,2\n"
			    "[pid 2 tid 2 cpu 1]\n"
			    "3\th\tinst 3,3\n"
			    "4\t  k\tinst 4,4\n"
			    "[pid 2 tid 2 cpu 0]\n"
			    "5\t  g\tinst 5,5\n"
			    "[pid 1 tid 1 cpu 1]\n"
			    "6\tmain\tinst 6,6\n");
	free(text);
}

static void test_untimed(void **state)
{
	char *text = run(*state, 0);

	/* Stream after stream, frames forgotten between: thread 1's return
	 * on CPU 1 finds no frame and goes a level up. */
	assert_string_equal(text,
			    "[pid 1 tid 1 cpu 0]\n"
			    "1\t  main\tinst 1,1\n"
			    "2\t    f\tinst 2,2\n"
			    "[pid 2 tid 2 cpu 0]\n"
			    "3\t  g\tinst 3,3\n"
			    "[pid 2 tid 2 cpu 1]\n"
			    "4\t  h\tinst 4,4\n"
			    "5\t    k\tinst 5,5\n"
			    "[pid 1 tid 1 cpu 1]\n"
			    "6\tmain\tinst 6,6\n");
	free(text);
}

/*
 * A stream whose time goes back (a damaged TSC) keeps its slices' order:
 * CPU 0's thread 2 (time 20) comes after its thread 1 (time 50), CPU 1's
 * thread 3 (time 30) before both.
 */
static void test_time_back(void **state)
{
	struct calls_merge *m = calls_merge_new();
	struct build b;
	char *text;

	assert_non_null(m);
	b_start(&b, *state);
	b_task(&b, 1, 1, 50);
	b_rec(&b, "one", 0x100);
	b_task(&b, 2, 1, 20);
	b_rec(&b, "two", 0x200);
	stream(m, 0, &b);
	b_start(&b, *state);
	b_task(&b, 3, 1, 30);
	b_rec(&b, "three", 0x300);
	stream(m, 1, &b);
	text = replay(m);
	assert_string_equal(text,
			    "[pid 3 tid 3 cpu 1]\n"
			    "1\tthree\tinst 1,1\n"
			    "[pid 1 tid 1 cpu 0]\n"
			    "2\tone\tinst 2,2\n"
			    "[pid 2 tid 2 cpu 0]\n"
			    "3\ttwo\tinst 3,3\n");
	free(text);
}

/*
 * Text made after a thread change goes with the new thread's slice, also
 * where the decode ends before that thread's first line (a -j cut, a
 * piece): CPU 0's thread 1 (time 10) then thread 2 (time 30), whose error
 * line comes before a cut and its line after; CPU 1's thread 3 at 20.
 */
static void test_text_after_task(void **state)
{
	struct calls_merge *m = calls_merge_new();
	struct calls_hist *h;
	struct build b;
	char *text;

	assert_non_null(m);
	h = calls_hist_new_log(m, 0);
	assert_non_null(h);
	b_start(&b, *state);
	b_task(&b, 1, 1, 10);
	b_rec(&b, "one", 0x100);
	b_task(&b, 2, 1, 30);
	b_text(&b, "[error in 2]\n");
	take(h, &b);
	b_task(&b, 2, 1, 31);
	b_rec(&b, "two", 0x200);
	take(h, &b);
	assert_int_equal(calls_print(h, NULL), 0);
	calls_hist_delete(h);
	calls_seg_free(&b.c);
	b_start(&b, *state);
	b_task(&b, 3, 1, 20);
	b_rec(&b, "three", 0x300);
	stream(m, 1, &b);
	text = replay(m);
	assert_string_equal(text,
			    "[pid 1 tid 1 cpu 0]\n"
			    "1\tone\tinst 1,1\n"
			    "[pid 3 tid 3 cpu 1]\n"
			    "2\tthree\tinst 2,2\n"
			    "[error in 2]\n"
			    "[pid 2 tid 2 cpu 0]\n"
			    "3\ttwo\tinst 3,3\n");
	free(text);
}

static int setup(void **state)
{
	*state = calls_names_new();
	return *state ? 0 : -1;
}

static int teardown(void **state)
{
	calls_names_delete(*state);
	return 0;
}

/* run()'s streams, chosen by thread and by CPU: the lines keep their
 * numbers and depths; a thread line where the one shown changes. */
static void test_chosen(void **state)
{
	uint32_t tid2 = 2, cpu0 = 0;
	struct cli_select by_tid = { 0 }, by_cpu = { 0 };
	char *text;

	by_tid.tids = &tid2;
	by_tid.ntids = 1;
	by_tid.set = 1;
	by_cpu.cpus = &cpu0;
	by_cpu.ncpus = 1;
	by_cpu.set = 1;
	for (int k = 0; k < 2; k++) {
		text = replay_chosen(run_streams(*state, 1),
				     k ? &by_cpu : &by_tid);
		assert_string_equal(text, k ?
				    "[pid 1 tid 1 cpu 0]\n"
				    "1\tmain\tinst 1,1\n"
				    "2\t  f\tinst 2,2\n"
				    "[pid 2 tid 2 cpu 0]\n"
				    "5\t  g\tinst 5,5\n" :
				    "[pid 2 tid 2 cpu 1]\n"
				    "3\th\tinst 3,3\n"
				    "4\t  k\tinst 4,4\n"
				    "[pid 2 tid 2 cpu 0]\n"
				    "5\t  g\tinst 5,5\n");
		free(text);
	}
}

/*
 * One thread: main (time 10) calls f (20), which calls g (30); the lines
 * of times 20 to 30 (TSC bounds), printed and folded: the folded stacks
 * keep main, which is not chosen, as their caller.
 */
static void test_chosen_time(void **state)
{
	struct cli_window w = { { 20, 1, 1 }, { 30, 1, 1 } };
	struct cli_select sel = { 0 };
	struct calls_tree *tree = calls_tree_new();
	struct calls_hist *h;
	struct cli_out out, fo;
	struct build b;
	static const char *const names[] = { "main", "f", "g" };

	sel.win = &w;
	sel.nwin = 1;
	sel.set = 1;
	assert_non_null(tree);
	for (int fold = 0; fold < 2; fold++) {
		h = calls_hist_new(NULL, 0);
		assert_non_null(h);
		calls_hist_select(h, &sel, NULL);
		if (fold)
			calls_hist_fold_into(h, tree);
		b_start(&b, *state);
		b_task(&b, 1, 1, 10);
		for (int i = 0; i < 3; i++) {
			if (i)
				b_op(&b, OP_PUSH, 0x105 + (uint64_t)i);
			b_rec(&b, names[i], 0x100 * (uint64_t)(i + 1));
			b.c.recs[i].tsc = 10 * (uint64_t)(i + 1);
			b.c.recs[i].has_tsc = 1;
		}
		take(h, &b);
		calls_seg_free(&b.c);
		assert_int_equal(cli_out_init(&out, NULL), 0);
		assert_int_equal(calls_print(h, &out), 0);
		calls_hist_delete(h);
		if (!fold) {
			assert_int_equal(out.len, strlen("2\t  f\tinst 2,2\n"
							 "3\t    g\tinst 3,3\n"));
			assert_memory_equal(out.buf, "2\t  f\tinst 2,2\n"
						     "3\t    g\tinst 3,3\n",
					    out.len);
		} else {
			assert_int_equal(out.len, 0);
		}
		free(out.buf);
	}
	assert_int_equal(cli_out_init(&fo, NULL), 0);
	assert_int_equal(calls_tree_print_folded(tree, &fo), 0);
	assert_int_equal(fo.len, strlen("main;f 1\nmain;f;g 1\n"));
	assert_memory_equal(fo.buf, "main;f 1\nmain;f;g 1\n", fo.len);
	free(fo.buf);
	calls_tree_delete(tree);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_timed),
		cmocka_unit_test(test_untimed),
		cmocka_unit_test(test_time_back),
		cmocka_unit_test(test_text_after_task),
		cmocka_unit_test(test_chosen),
		cmocka_unit_test(test_chosen_time),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

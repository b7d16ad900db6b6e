/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What hwt flow, calls and last choose to show (src/cli/select.c): the
 * options' lists and time windows as perf script takes them, and which
 * threads, CPUs and times they choose, bounds included.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <hwt/perfdata.h>

#include "cli/cli.h"

static int opt(struct cli_select *s, const char *o, const char *arg)
{
	return cli_select_parse(s, "test", o, arg);
}

static void test_lists(void **state)
{
	struct cli_select s = { 0 };

	(void)state;
	assert_int_equal(opt(&s, "--tid", "5,7"), 1);
	assert_int_equal(opt(&s, "--pid", "100"), 1);
	assert_int_equal(opt(&s, "-C", "0,2-3"), 1);
	assert_true(s.set);
	assert_int_equal(s.ncpus, 3);
	/* pid or tid */
	assert_true(cli_select_task(&s, 1, (uint64_t)1 << 32 | 7));
	assert_true(cli_select_task(&s, 1, (uint64_t)100 << 32 | 101));
	assert_false(cli_select_task(&s, 1, (uint64_t)1 << 32 | 6));
	assert_false(cli_select_task(&s, 0, (uint64_t)100 << 32 | 5));
	assert_true(cli_select_cpu(&s, 1, 3));
	assert_false(cli_select_cpu(&s, 1, 1));
	assert_false(cli_select_cpu(&s, 0, 0));
	assert_int_equal(opt(&s, "--nothing", "1"), 0);
	cli_select_free(&s);
	assert_false(s.set);
	/* Nothing asked: all. */
	assert_true(cli_select_task(&s, 0, 0));
	assert_true(cli_select_cpu(&s, 0, 0));
	assert_true(cli_select_time(&s, 0, 0, NULL));
}

static void test_bad(void **state)
{
	static const char *const bad[][2] = {
		{ "--tid", "" }, { "--tid", "1,,2" }, { "--tid", "x" },
		{ "--tid", "1-2" }, { "-C", "3-1" }, { "-C", "1-" },
		{ "--pid", "99999999999" }, { "--tid", NULL },
		{ "--time-range", "" }, { "--time-range", "5" },
		{ "--time-range", "2,1" }, { "--time-range", "0x2,0x1" },
		{ "--time-range", "1.0000000001," },
		{ "--time-range", "1.2.3," }, { "--time-range", "0x,1" },
		{ "--time-range", "0x1g," }, { "--time-range", ".," },
		{ "--time-range", "99999999999999,," },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct cli_select s = { 0 };

		assert_int_equal(opt(&s, bad[i][0], bad[i][1]), -1);
		cli_select_free(&s);
	}
}

/* Seconds to the ns (perf's), 0xTSC, open ends, several windows. */
static void test_windows(void **state)
{
	struct cli_select s = { 0 };
	struct hwt_pd_time_conv tc = { 0 };

	(void)state;
	/* perf time = tsc (shift 0, mult 1) */
	tc.time_mult = 1;
	assert_int_equal(opt(&s, "--time-range",
			     "13364.9210428,13364.921042864 20,21 ,0x5"), 1);
	assert_int_equal(s.nwin, 3);
	assert_int_equal(s.win[0].from.v, 13364921042800ull);
	assert_int_equal(s.win[0].to.v, 13364921042864ull);
	assert_false(s.win[0].from.tsc);
	assert_int_equal(s.win[1].from.v, 20000000000ull);
	assert_int_equal(s.win[1].to.v, 21000000000ull);
	assert_false(s.win[2].from.set);
	assert_true(s.win[2].to.tsc);
	assert_true(cli_select_seconds(&s));
	assert_true(cli_select_time(&s, 1, 13364921042800ull, &tc));
	assert_true(cli_select_time(&s, 1, 13364921042864ull, &tc));
	assert_false(cli_select_time(&s, 1, 13364921042865ull, &tc));
	assert_false(cli_select_time(&s, 1, 13364921042799ull, &tc));
	assert_true(cli_select_time(&s, 1, 5, &tc));
	assert_false(cli_select_time(&s, 1, 6, &tc));
	assert_true(cli_select_time(&s, 1, 20000000000ull, &tc));
	assert_true(cli_select_time(&s, 1, 21000000000ull, &tc));
	assert_false(cli_select_time(&s, 1, 21000000001ull, &tc));
	assert_false(cli_select_time(&s, 0, 5, &tc));
	cli_select_free(&s);
	assert_int_equal(opt(&s, "--time-range", "0x10,0x20"), 1);
	assert_false(cli_select_seconds(&s));
	assert_true(cli_select_time(&s, 1, 0x10, NULL));
	assert_true(cli_select_time(&s, 1, 0x20, NULL));
	assert_false(cli_select_time(&s, 1, 0x21, NULL));
	cli_select_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lists),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_windows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

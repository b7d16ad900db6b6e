/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Time tracking. Expected values are worked out by hand in the comments:
 * TSC = base + CTC ticks * ebx / eax (+ CYC cycles * FCR / 256).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <hwt/pt.h>

/* TSC:CTC = 4:1, MTC every 16 CTC ticks (payload = CTC[11:4]). */
static const struct hwt_time_config cfg4 = {
	.cpuid_0x15_eax = 1,
	.cpuid_0x15_ebx = 4,
	.mtc_freq = 4,
};

static uint64_t tsc_of(const struct hwt_time *time)
{
	uint64_t tsc = ~0ull;

	assert_int_equal(hwt_time_query_tsc(time, &tsc, NULL, NULL), 0);
	return tsc;
}

static void test_no_time(void **state)
{
	struct hwt_time time;
	uint64_t tsc = 1;
	uint32_t cbr, lost_mtc = 1, lost_cyc = 1;

	(void)state;
	hwt_time_init(&time);
	assert_int_equal(hwt_time_query_tsc(&time, &tsc, &lost_mtc, &lost_cyc),
			 -HWT_ERR_NO_TIME);
	assert_int_equal(tsc, 0);
	assert_int_equal(lost_mtc, 0);
	assert_int_equal(lost_cyc, 0);
	assert_int_equal(hwt_time_query_cbr(&time, &cbr), -HWT_ERR_NO_CBR);
}

static void test_tsc_tma_mtc(void **state)
{
	struct hwt_time time;

	(void)state;
	hwt_time_init(&time);
	assert_int_equal(hwt_time_update_tsc(&time, 0x1000), 0);
	assert_int_equal(tsc_of(&time), 0x1000);

	/* The TSC was 8 ticks past CTC 0x123: CTC 0x123 was at 0xff8. */
	assert_int_equal(hwt_time_update_tma(&time, &cfg4, 0x0123, 8), 0);
	assert_int_equal(tsc_of(&time), 0x1000);
	assert_int_equal(time.base, 0xff8);

	/* CTC 0x130: 13 ticks * 4 = 0x34 after 0xff8. */
	assert_int_equal(hwt_time_update_mtc(&time, &cfg4, 0x13), 0);
	assert_int_equal(tsc_of(&time), 0x102c);

	/* One MTC period: 16 * 4 = 0x40. */
	assert_int_equal(hwt_time_update_mtc(&time, &cfg4, 0x14), 0);
	assert_int_equal(tsc_of(&time), 0x106c);

	/* A new TSC overrides the estimate. */
	assert_int_equal(hwt_time_update_tsc(&time, 0x5000), 0);
	assert_int_equal(tsc_of(&time), 0x5000);
}

static void test_mtc_wrap(void **state)
{
	struct hwt_time time;

	(void)state;
	hwt_time_init(&time);
	hwt_time_update_tsc(&time, 0x1000);
	/* CTC 0xff0, exactly on an MTC: no offset. */
	assert_int_equal(hwt_time_update_tma(&time, &cfg4, 0x0ff0, 0), 0);
	/* 0x00 after 0xff: CTC 0x1000, 16 ticks -> 0x40. */
	assert_int_equal(hwt_time_update_mtc(&time, &cfg4, 0x00), 0);
	assert_int_equal(tsc_of(&time), 0x1040);
	/* Lost MTCs within one wrap still count: 0x00 -> 0x03 is 48. */
	assert_int_equal(hwt_time_update_mtc(&time, &cfg4, 0x03), 0);
	assert_int_equal(tsc_of(&time), 0x1040 + 0xc0);
}

static void test_mtc_ignored_before_tma(void **state)
{
	struct hwt_time time;

	(void)state;
	hwt_time_init(&time);
	hwt_time_update_tsc(&time, 0x1000);
	/* Between TSC and TMA: would look like an overflow; ignored. */
	assert_int_equal(hwt_time_update_mtc(&time, &cfg4, 0x77), 0);
	assert_int_equal(tsc_of(&time), 0x1000);
	assert_int_equal(hwt_time_update_tma(&time, &cfg4, 0x0100, 0), 0);
	assert_int_equal(hwt_time_update_mtc(&time, &cfg4, 0x11), 0);
	assert_int_equal(tsc_of(&time), 0x1040);
}

static void test_tma_context(void **state)
{
	struct hwt_time time;

	(void)state;
	hwt_time_init(&time);
	assert_int_equal(hwt_time_update_tma(&time, &cfg4, 0, 0),
			 -HWT_ERR_BAD_CONTEXT);
	hwt_time_update_tsc(&time, 0x1000);
	assert_int_equal(hwt_time_update_tma(&time, &cfg4, 0, 0), 0);
	assert_int_equal(hwt_time_update_tma(&time, &cfg4, 0, 0),
			 -HWT_ERR_BAD_CONTEXT);
}

static void test_mtc_without_tsc(void **state)
{
	struct hwt_time time;
	uint64_t tsc;

	(void)state;
	hwt_time_init(&time);
	/* The first MTC only starts the count. */
	assert_int_equal(hwt_time_update_mtc(&time, &cfg4, 0x40), 0);
	assert_int_equal(hwt_time_query_tsc(&time, &tsc, NULL, NULL),
			 -HWT_ERR_NO_TIME);
	assert_int_equal(tsc, 0);
	/* Two periods later: 32 * 4 = 0x80, relative to the first MTC. */
	assert_int_equal(hwt_time_update_mtc(&time, &cfg4, 0x42), 0);
	assert_int_equal(hwt_time_query_tsc(&time, &tsc, NULL, NULL),
			 -HWT_ERR_NO_TIME);
	assert_int_equal(tsc, 0x80);
}

static void test_mtc_low_freq_ctc(void **state)
{
	/* MTCFreq 0: MTC carries CTC[7:0], TSC:CTC = 5:2. */
	const struct hwt_time_config cfg = {
		.cpuid_0x15_eax = 2, .cpuid_0x15_ebx = 5, .mtc_freq = 0,
	};
	struct hwt_time time;

	(void)state;
	hwt_time_init(&time);
	hwt_time_update_tsc(&time, 0x1000);
	/* Only CTC[7:0] = 0x34 of the TMA matter. */
	assert_int_equal(hwt_time_update_tma(&time, &cfg, 0x1234, 0), 0);
	/* 0x40 - 0x34 = 12 ticks * 5 / 2 = 30 = 0x1e. */
	assert_int_equal(hwt_time_update_mtc(&time, &cfg, 0x40), 0);
	assert_int_equal(tsc_of(&time), 0x101e);
	/* 3 ticks * 5 / 2 = 7 (rounded down). */
	assert_int_equal(hwt_time_update_mtc(&time, &cfg, 0x43), 0);
	assert_int_equal(tsc_of(&time), 0x1025);
}

static void test_mtc_high_freq_tma(void **state)
{
	/* MTCFreq 9: MTC carries CTC[16:9]; TMA only CTC[15:0]. */
	const struct hwt_time_config cfg = {
		.cpuid_0x15_eax = 1, .cpuid_0x15_ebx = 4, .mtc_freq = 9,
	};
	struct hwt_time time;

	(void)state;
	hwt_time_init(&time);
	hwt_time_update_tsc(&time, 0x1000);
	assert_int_equal(hwt_time_update_tma(&time, &cfg, 0x0100, 0), 0);
	/* MTC 0x81: CTC 0x10200. CTC[16] comes from the MTC: the TMA was
	 * at 0x10100, 0x100 ticks * 4 = 0x400. */
	assert_int_equal(hwt_time_update_mtc(&time, &cfg, 0x81), 0);
	assert_int_equal(tsc_of(&time), 0x1400);

	hwt_time_init(&time);
	hwt_time_update_tsc(&time, 0x1000);
	assert_int_equal(hwt_time_update_tma(&time, &cfg, 0xfe00, 0), 0);
	/* MTC 0x81: CTC[15:0] 0x0200 is below 0xfe00, so the TMA was in
	 * the previous 64K: 0x0fe00 -> 0x10200 = 0x400 ticks = 0x1000. */
	assert_int_equal(hwt_time_update_mtc(&time, &cfg, 0x81), 0);
	assert_int_equal(tsc_of(&time), 0x2000);
}

static void test_bad_config(void **state)
{
	const struct hwt_time_config cfg = { .mtc_freq = 4 };
	struct hwt_time time;

	(void)state;
	hwt_time_init(&time);
	hwt_time_update_tsc(&time, 0x1000);
	assert_int_equal(hwt_time_update_tma(&time, &cfg, 0x100, 0), 0);
	assert_int_equal(hwt_time_update_mtc(&time, &cfg, 0x11),
			 -HWT_ERR_BAD_CONFIG);
	assert_int_equal(tsc_of(&time), 0x1000);
}

static void test_cbr(void **state)
{
	struct hwt_time time;
	uint32_t cbr = 0;

	(void)state;
	hwt_time_init(&time);
	assert_int_equal(hwt_time_update_cbr(&time, 0), -HWT_ERR_BAD_PACKET);
	assert_int_equal(hwt_time_update_cbr(&time, 0x2a), 0);
	assert_int_equal(hwt_time_query_cbr(&time, &cbr), 0);
	assert_int_equal(cbr, 0x2a);
}

static void test_cyc_without_calibration(void **state)
{
	struct hwt_time time;
	uint32_t lost_cyc = 0;
	uint64_t tsc;

	(void)state;
	hwt_time_init(&time);
	hwt_time_update_tsc(&time, 0x1000);
	/* FCR 0: the cycles cannot be converted and are counted lost. */
	assert_int_equal(hwt_time_update_cyc(&time, &cfg4, 100, 0), 0);
	assert_int_equal(hwt_time_update_cyc(&time, &cfg4, 100, 0), 0);
	assert_int_equal(hwt_time_query_tsc(&time, &tsc, NULL, &lost_cyc), 0);
	assert_int_equal(tsc, 0x1000);
	assert_int_equal(lost_cyc, 2);
	/* A TSC makes up for it. */
	hwt_time_update_tsc(&time, 0x2000);
	assert_int_equal(hwt_time_query_tsc(&time, &tsc, NULL, &lost_cyc), 0);
	assert_int_equal(lost_cyc, 0);
}

static void test_cyc_after_tsc(void **state)
{
	struct hwt_time time;

	(void)state;
	hwt_time_init(&time);
	hwt_time_update_tsc(&time, 0x1000);
	/* FCR 1.5 (384 / 256): 10 cycles = 15 ticks. */
	assert_int_equal(hwt_time_update_cyc(&time, &cfg4, 10, 384), 0);
	assert_int_equal(tsc_of(&time), 0x100f);
	/* 3 cycles = 4.5 ticks, truncated per CYC: 4. */
	assert_int_equal(hwt_time_update_cyc(&time, &cfg4, 3, 384), 0);
	assert_int_equal(tsc_of(&time), 0x1013);
}

/* CYC calibrated from MTC periods, including a CYC spanning MTCs. */
static void test_cyc_mtc_calibration(void **state)
{
	struct hwt_time_cal cal;
	struct hwt_time time;
	uint64_t fcr = 0;

	(void)state;
	hwt_time_init(&time);
	hwt_time_cal_init(&cal);
	assert_int_equal(hwt_time_cal_fcr(&cal, &fcr), -HWT_ERR_NO_TIME);

	/* PSB+: TSC 0x1000 at CTC 0x100. */
	hwt_time_cal_update_psb(&cal, &cfg4);
	assert_int_equal(hwt_time_cal_update_tsc(&cal, 0x1000, 1), 0);
	hwt_time_update_tsc(&time, 0x1000);
	hwt_time_update_tma(&time, &cfg4, 0x100, 0);

	/* MTC CTC 0x110: time 0x1040; calibration needs a second MTC. */
	assert_int_equal(hwt_time_cal_update_mtc(&cal, &cfg4, 0x11), 0);
	assert_int_equal(hwt_time_update_mtc(&time, &cfg4, 0x11), 0);
	assert_int_equal(tsc_of(&time), 0x1040);
	assert_int_equal(hwt_time_cal_fcr(&cal, &fcr), -HWT_ERR_NO_TIME);

	/* 32 cycles, uncalibrated: lost. */
	hwt_time_cal_update_cyc(&cal, 32);
	assert_int_equal(hwt_time_update_cyc(&time, &cfg4, 32, 0), 0);
	assert_int_equal(tsc_of(&time), 0x1040);

	/* MTC CTC 0x120: 16 ticks = 64 TSC over 32 cycles: FCR 2.0. */
	assert_int_equal(hwt_time_cal_update_mtc(&cal, &cfg4, 0x12), 0);
	assert_int_equal(hwt_time_cal_fcr(&cal, &fcr), 0);
	assert_int_equal(fcr, 2 << HWT_TIME_FCR_SHIFT);
	assert_int_equal(hwt_time_update_mtc(&time, &cfg4, 0x12), 0);
	assert_int_equal(tsc_of(&time), 0x1080);

	/* 16 cycles = 32 ticks, then 8 cycles = 16 ticks. */
	hwt_time_cal_update_cyc(&cal, 16);
	assert_int_equal(hwt_time_update_cyc(&time, &cfg4, 16, fcr), 0);
	assert_int_equal(tsc_of(&time), 0x10a0);
	hwt_time_cal_update_cyc(&cal, 8);
	assert_int_equal(hwt_time_update_cyc(&time, &cfg4, 8, fcr), 0);
	assert_int_equal(tsc_of(&time), 0x10b0);

	/* MTC CTC 0x130: the MTC wins over the CYC estimate: 0x10c0.
	 * FCR: 64 ticks / 24 cycles = 16384 / 24 = 682 (2.664). */
	assert_int_equal(hwt_time_cal_update_mtc(&cal, &cfg4, 0x13), 0);
	assert_int_equal(hwt_time_cal_fcr(&cal, &fcr), 0);
	assert_int_equal(fcr, 682);
	assert_int_equal(hwt_time_update_mtc(&time, &cfg4, 0x13), 0);
	assert_int_equal(tsc_of(&time), 0x10c0);

	/* MTC CTC 0x140 without cycles: calibration waits for cycles. */
	assert_int_equal(hwt_time_cal_update_mtc(&cal, &cfg4, 0x14), 0);
	assert_int_equal(hwt_time_update_mtc(&time, &cfg4, 0x14), 0);
	assert_int_equal(tsc_of(&time), 0x1100);

	/* 48 cycles since the last CYC, which was before MTC 0x130: one
	 * period (64 ticks = 16384 / 682 = 24 cycles) is accounted for by
	 * that MTC; 24 cycles remain = 24 * 682 / 256 = 63 ticks. */
	hwt_time_cal_update_cyc(&cal, 48);
	assert_int_equal(hwt_time_update_cyc(&time, &cfg4, 48, fcr), 0);
	assert_int_equal(tsc_of(&time), 0x1100 + 63);

	/* MTC CTC 0x150: calibration over both periods: 128 ticks / 48
	 * cycles = 32768 / 48 = 682. */
	assert_int_equal(hwt_time_cal_update_mtc(&cal, &cfg4, 0x15), 0);
	assert_int_equal(hwt_time_cal_fcr(&cal, &fcr), 0);
	assert_int_equal(fcr, 682);
	assert_int_equal(hwt_time_update_mtc(&time, &cfg4, 0x15), 0);
	assert_int_equal(tsc_of(&time), 0x1140);
}

static void test_cyc_spanning_too_few(void **state)
{
	struct hwt_time time;

	(void)state;
	hwt_time_init(&time);
	hwt_time_update_tsc(&time, 0x1000);
	hwt_time_update_tma(&time, &cfg4, 0x100, 0);
	/* A CYC opens the period at CTC 0x100. */
	hwt_time_update_cyc(&time, &cfg4, 4, 512);
	assert_int_equal(tsc_of(&time), 0x1008);
	hwt_time_update_mtc(&time, &cfg4, 0x11);
	hwt_time_update_mtc(&time, &cfg4, 0x12);
	assert_int_equal(tsc_of(&time), 0x1080);
	/* Since CTC 0x110, 16 ticks = 64 TSC = 32 cycles at FCR 2 went to
	 * earlier periods; 20 cycles are fewer: none for this one. */
	hwt_time_update_cyc(&time, &cfg4, 20, 512);
	assert_int_equal(tsc_of(&time), 0x1080);
	/* Nothing was added, so the next CYC is still the period's first
	 * as far as the estimate knows: 40 - 32 = 8 cycles = 16 ticks. */
	hwt_time_update_cyc(&time, &cfg4, 40, 512);
	assert_int_equal(tsc_of(&time), 0x1090);
	/* From then on CYCs count in full: 20 cycles = 40 ticks. */
	hwt_time_update_cyc(&time, &cfg4, 20, 512);
	assert_int_equal(tsc_of(&time), 0x1090 + 40);
}

static void test_tsc_calibration(void **state)
{
	struct hwt_time_cal cal;
	uint64_t fcr = 0;

	(void)state;
	hwt_time_cal_init(&cal);
	assert_int_equal(hwt_time_cal_update_tsc(&cal, 0x1000, 1), 0);
	hwt_time_cal_update_cyc(&cal, 0x100);
	/* A TSC outside PSB+ restarts the interval without estimating. */
	assert_int_equal(hwt_time_cal_update_tsc(&cal, 0x1400, 0), 0);
	assert_int_equal(hwt_time_cal_fcr(&cal, &fcr), -HWT_ERR_NO_TIME);
	hwt_time_cal_update_cyc(&cal, 0x100);
	/* 0x800 ticks over 0x100 cycles: FCR 8. */
	assert_int_equal(hwt_time_cal_update_tsc(&cal, 0x1c00, 1), 0);
	assert_int_equal(hwt_time_cal_fcr(&cal, &fcr), 0);
	assert_int_equal(fcr, 8 << HWT_TIME_FCR_SHIFT);

	/* Across the 56-bit wrap: 0x20 ticks over 0x10 cycles: FCR 2. */
	hwt_time_cal_update_tsc(&cal, 0xfffffffffffff0ull, 1);
	hwt_time_cal_update_cyc(&cal, 0x10);
	assert_int_equal(hwt_time_cal_update_tsc(&cal, 0x10, 1), 0);
	assert_int_equal(hwt_time_cal_fcr(&cal, &fcr), 0);
	assert_int_equal(fcr, 2 << HWT_TIME_FCR_SHIFT);

	/* Once MTCs are seen, TSCs no longer calibrate. */
	hwt_time_cal_update_mtc(&cal, &cfg4, 0x10);
	hwt_time_cal_update_cyc(&cal, 0x10);
	assert_int_equal(hwt_time_cal_update_tsc(&cal, 0x1000, 1), 0);
	assert_int_equal(hwt_time_cal_fcr(&cal, &fcr), 0);
	assert_int_equal(fcr, 2 << HWT_TIME_FCR_SHIFT);
}

static void test_cbr_calibration(void **state)
{
	const struct hwt_time_config cfg = {
		.cpuid_0x15_eax = 1, .cpuid_0x15_ebx = 4, .mtc_freq = 4,
		.nom_freq = 4,
	};
	struct hwt_time_cal cal;
	uint64_t fcr = 0;

	(void)state;
	hwt_time_cal_init(&cal);
	/* Nominal ratio 4, core ratio 3: 4/3 TSC ticks per cycle. */
	assert_int_equal(hwt_time_cal_update_cbr(&cal, &cfg, 3, 1), 0);
	assert_int_equal(hwt_time_cal_fcr(&cal, &fcr), 0);
	assert_int_equal(fcr, 1024 / 3);
	assert_int_equal(hwt_time_cal_update_cbr(&cal, &cfg, 0, 1),
			 -HWT_ERR_BAD_PACKET);

	/* Without the nominal frequency a CBR in PSB+ changes nothing... */
	assert_int_equal(hwt_time_cal_update_cbr(&cal, &cfg4, 2, 1), 0);
	assert_int_equal(hwt_time_cal_fcr(&cal, &fcr), 0);
	assert_int_equal(fcr, 1024 / 3);
	/* ...and one outside (a frequency change) drops the estimate. */
	assert_int_equal(hwt_time_cal_update_cbr(&cal, &cfg4, 2, 0), 0);
	assert_int_equal(hwt_time_cal_fcr(&cal, &fcr), -HWT_ERR_NO_TIME);
}

static void test_cal_ovf(void **state)
{
	struct hwt_time_cal cal;
	uint64_t fcr = 0;

	(void)state;
	hwt_time_cal_init(&cal);
	hwt_time_cal_update_mtc(&cal, &cfg4, 0x10);
	hwt_time_cal_update_cyc(&cal, 32);
	hwt_time_cal_update_mtc(&cal, &cfg4, 0x11);
	assert_int_equal(hwt_time_cal_fcr(&cal, &fcr), 0);
	assert_int_equal(fcr, 512);

	/* The estimate survives; the period in flight does not: the next
	 * MTC starts a new one instead of spanning the overflow. */
	hwt_time_cal_update_cyc(&cal, 100);
	hwt_time_cal_update_ovf(&cal);
	hwt_time_cal_update_mtc(&cal, &cfg4, 0x20);
	assert_int_equal(hwt_time_cal_fcr(&cal, &fcr), 0);
	assert_int_equal(fcr, 512);
	hwt_time_cal_update_cyc(&cal, 16);
	hwt_time_cal_update_mtc(&cal, &cfg4, 0x21);
	assert_int_equal(hwt_time_cal_fcr(&cal, &fcr), 0);
	assert_int_equal(fcr, 1024);
}

static void test_skl168(void **state)
{
	struct hwt_time_config cfg = cfg4;
	struct hwt_time_cal cal;
	uint64_t fcr = 0;

	(void)state;
	cfg.errata = HWT_PT_ERRATUM_SKL168;
	hwt_time_cal_init(&cal);
	hwt_time_cal_set_fcr(&cal, 512);
	hwt_time_cal_update_mtc(&cal, &cfg, 0x10);

	/* First MTC after PSB, two periods on: an MTC went missing with
	 * the CYC; skip (would be 128 / 16 = 8.0). */
	hwt_time_cal_update_psb(&cal, &cfg);
	hwt_time_cal_update_cyc(&cal, 16);
	assert_int_equal(hwt_time_cal_update_mtc(&cal, &cfg, 0x12), 0);
	assert_int_equal(hwt_time_cal_fcr(&cal, &fcr), 0);
	assert_int_equal(fcr, 512);
	assert_int_equal(cal.lost_mtc, 1);

	/* Later MTCs are taken: 64 / 16 = 4.0. */
	hwt_time_cal_update_cyc(&cal, 16);
	assert_int_equal(hwt_time_cal_update_mtc(&cal, &cfg, 0x13), 0);
	assert_int_equal(hwt_time_cal_fcr(&cal, &fcr), 0);
	assert_int_equal(fcr, 1024);
	assert_int_equal(cal.lost_mtc, 0);

	/* Without the erratum the same sequence is taken: 128 / 16. */
	hwt_time_cal_init(&cal);
	hwt_time_cal_update_mtc(&cal, &cfg4, 0x10);
	hwt_time_cal_update_psb(&cal, &cfg4);
	hwt_time_cal_update_cyc(&cal, 16);
	hwt_time_cal_update_mtc(&cal, &cfg4, 0x12);
	assert_int_equal(hwt_time_cal_fcr(&cal, &fcr), 0);
	assert_int_equal(fcr, 8 << HWT_TIME_FCR_SHIFT);
}

static void test_skl168_lost_cyc(void **state)
{
	/* TSC:CTC 1000:1, so one 16-tick MTC period is 16000 ticks. */
	struct hwt_time_config cfg = {
		.cpuid_0x15_eax = 1, .cpuid_0x15_ebx = 1000, .mtc_freq = 4,
		.errata = HWT_PT_ERRATUM_SKL168,
	};
	struct hwt_time_cal cal;
	uint64_t fcr = 0;

	(void)state;
	hwt_time_cal_init(&cal);
	hwt_time_cal_set_fcr(&cal, 512);
	hwt_time_cal_update_mtc(&cal, &cfg, 0x10);
	hwt_time_cal_update_psb(&cal, &cfg);
	/* 100 cycles, at FCR 2 plus a lost 4096-cycle wrap (minus slack)
	 * that is 2 * (100 + 0xf00) = 7880 ticks < 16000: suspect. */
	hwt_time_cal_update_cyc(&cal, 100);
	hwt_time_cal_update_mtc(&cal, &cfg, 0x11);
	assert_int_equal(hwt_time_cal_fcr(&cal, &fcr), 0);
	assert_int_equal(fcr, 512);

	/* Without the erratum: 16000 * 256 / 100 = 40960. */
	cfg.errata = 0;
	hwt_time_cal_init(&cal);
	hwt_time_cal_update_mtc(&cal, &cfg, 0x10);
	hwt_time_cal_update_psb(&cal, &cfg);
	hwt_time_cal_update_cyc(&cal, 100);
	hwt_time_cal_update_mtc(&cal, &cfg, 0x11);
	assert_int_equal(hwt_time_cal_fcr(&cal, &fcr), 0);
	assert_int_equal(fcr, 40960);
}

static struct hwt_pt_packet pkt(unsigned type)
{
	struct hwt_pt_packet p = { .type = (uint8_t)type };

	return p;
}

static void test_tracker(void **state)
{
	struct hwt_time_tracker tr;
	struct hwt_pt_packet p;

	(void)state;
	hwt_time_tracker_init(&tr, &cfg4, 0);
	assert_int_equal(hwt_time_tracker_update(&tr, &(struct hwt_pt_packet){
		.type = HWT_PT_PSB }), 0);
	p = pkt(HWT_PT_TSC);
	p.u.tsc = 0x1000;
	assert_int_equal(hwt_time_tracker_update(&tr, &p), 0);
	p = pkt(HWT_PT_TMA);
	p.u.tma.ctc = 0x100;
	assert_int_equal(hwt_time_tracker_update(&tr, &p), 0);
	p = pkt(HWT_PT_PSBEND);
	assert_int_equal(hwt_time_tracker_update(&tr, &p), 0);

	/* MTC, 32 cycles, MTC: FCR 2.0; then 8 cycles = 16 ticks. */
	p = pkt(HWT_PT_MTC);
	p.u.mtc = 0x11;
	assert_int_equal(hwt_time_tracker_update(&tr, &p), 0);
	p = pkt(HWT_PT_CYC);
	p.u.cyc = 32;
	assert_int_equal(hwt_time_tracker_update(&tr, &p), 0);
	assert_int_equal(tr.time.lost_cyc, 1);
	p = pkt(HWT_PT_MTC);
	p.u.mtc = 0x12;
	assert_int_equal(hwt_time_tracker_update(&tr, &p), 0);
	p = pkt(HWT_PT_CYC);
	p.u.cyc = 8;
	assert_int_equal(hwt_time_tracker_update(&tr, &p), 0);
	assert_int_equal(tsc_of(&tr.time), 0x1090);

	/* OVF restarts calibration by default. */
	p = pkt(HWT_PT_OVF);
	assert_int_equal(hwt_time_tracker_update(&tr, &p), 0);
	assert_int_equal(tr.cal.have_fcr, 0);

	/* A second TMA after the TSC is out of context. */
	p = pkt(HWT_PT_TMA);
	assert_int_equal(hwt_time_tracker_update(&tr, &p),
			 -HWT_ERR_BAD_CONTEXT);

	hwt_time_tracker_reset(&tr);
	assert_int_equal(tr.time.have_tsc, 0);
}

/* Feed @tr a TSC, an MTC, @cyc cycles and another MTC. */
static void same_feed(struct hwt_time_tracker *tr, uint64_t cyc)
{
	struct hwt_pt_packet p = pkt(HWT_PT_TSC);

	p.u.tsc = 0x1000;
	hwt_time_tracker_update(tr, &p);
	p = pkt(HWT_PT_MTC);
	p.u.mtc = 1;
	hwt_time_tracker_update(tr, &p);
	p = pkt(HWT_PT_CYC);
	p.u.cyc = cyc;
	hwt_time_tracker_update(tr, &p);
	p = pkt(HWT_PT_MTC);
	p.u.mtc = 2;
	hwt_time_tracker_update(tr, &p);
}

static void test_tracker_same(void **state)
{
	struct hwt_time_tracker a, b;

	(void)state;
	hwt_time_tracker_init(&a, &cfg4, 0);
	hwt_time_tracker_init(&b, &cfg4, 0);
	assert_true(hwt_time_tracker_same(&a, &b));
	same_feed(&a, 40);
	assert_false(hwt_time_tracker_same(&a, &b));
	same_feed(&b, 40);
	assert_true(hwt_time_tracker_same(&a, &b));

	/* Another calibration (cycles per MTC period), the same time. */
	hwt_time_tracker_reset(&b);
	same_feed(&b, 80);
	assert_int_equal(a.time.tsc, b.time.tsc);
	assert_true(a.cal.fcr != b.cal.fcr);
	assert_false(hwt_time_tracker_same(&a, &b));

	/* Without CYCs nothing reads the calibration. */
	hwt_time_tracker_init(&a, &cfg4, HWT_TIME_NO_CYC);
	hwt_time_tracker_init(&b, &cfg4, HWT_TIME_NO_CYC);
	same_feed(&a, 40);
	same_feed(&b, 40);
	hwt_time_cal_set_fcr(&b.cal, 12345);
	assert_true(hwt_time_tracker_same(&a, &b));
	b.time.lost_mtc++;
	assert_false(hwt_time_tracker_same(&a, &b));
}

static void test_tracker_flags(void **state)
{
	struct hwt_time_tracker tr;
	struct hwt_pt_packet p;

	(void)state;
	hwt_time_tracker_init(&tr, &cfg4, HWT_TIME_NO_CYC |
			      HWT_TIME_KEEP_TCAL_ON_OVF);
	hwt_time_cal_set_fcr(&tr.cal, 512);
	p = pkt(HWT_PT_TSC);
	p.u.tsc = 0x1000;
	hwt_time_tracker_update(&tr, &p);
	p = pkt(HWT_PT_CYC);
	p.u.cyc = 8;
	assert_int_equal(hwt_time_tracker_update(&tr, &p), 0);
	assert_int_equal(tsc_of(&tr.time), 0x1000);
	assert_int_equal(tr.time.lost_cyc, 0);
	p = pkt(HWT_PT_OVF);
	hwt_time_tracker_update(&tr, &p);
	assert_int_equal(tr.cal.have_fcr, 1);

	/* No calibration: every CYC is lost. */
	hwt_time_tracker_init(&tr, &cfg4, HWT_TIME_NO_TCAL);
	hwt_time_cal_set_fcr(&tr.cal, 512);
	p = pkt(HWT_PT_TSC);
	p.u.tsc = 0x1000;
	hwt_time_tracker_update(&tr, &p);
	p = pkt(HWT_PT_CYC);
	p.u.cyc = 8;
	hwt_time_tracker_update(&tr, &p);
	assert_int_equal(tsc_of(&tr.time), 0x1000);
	assert_int_equal(tr.time.lost_cyc, 1);
}

static void test_cpu(void **state)
{
	struct hwt_pt_cpu cpu;
	uint32_t errata = 1;

	(void)state;
	assert_int_equal(hwt_pt_cpu_parse(&cpu, "6/142"), 0);
	assert_int_equal(cpu.vendor, HWT_PT_VENDOR_INTEL);
	assert_int_equal(cpu.family, 6);
	assert_int_equal(cpu.model, 142);
	assert_int_equal(cpu.stepping, 0);
	assert_int_equal(hwt_pt_cpu_errata(&cpu, &errata), 0);
	assert_true(errata & HWT_PT_ERRATUM_SKL168);
	assert_true(errata & HWT_PT_ERRATUM_SKD007);

	assert_int_equal(hwt_pt_cpu_parse(&cpu, "0x6/0x55/4"), 0);
	assert_int_equal(cpu.model, 0x55);
	assert_int_equal(cpu.stepping, 4);
	assert_int_equal(hwt_pt_cpu_errata(&cpu, &errata), 0);
	assert_true(errata & HWT_PT_ERRATUM_SKZ84);
	assert_false(errata & HWT_PT_ERRATUM_SKL168);

	assert_int_equal(hwt_pt_cpu_parse(&cpu, "0/0"), 0);
	assert_int_equal(hwt_pt_cpu_errata(&cpu, &errata),
			 -HWT_ERR_NOT_SUPPORTED);
	assert_int_equal(errata, 0);

	assert_int_equal(hwt_pt_cpu_parse(&cpu, "6"), -HWT_ERR_INVALID);
	assert_int_equal(hwt_pt_cpu_parse(&cpu, "6/"), -HWT_ERR_INVALID);
	assert_int_equal(hwt_pt_cpu_parse(&cpu, "6/256"), -HWT_ERR_INVALID);
	assert_int_equal(hwt_pt_cpu_parse(&cpu, "6/1/2/3"), -HWT_ERR_INVALID);
	assert_int_equal(hwt_pt_cpu_parse(&cpu, "-1/1"), -HWT_ERR_INVALID);
	assert_int_equal(hwt_pt_cpu_parse(&cpu, "auto"), -HWT_ERR_INVALID);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_time),
		cmocka_unit_test(test_tsc_tma_mtc),
		cmocka_unit_test(test_mtc_wrap),
		cmocka_unit_test(test_mtc_ignored_before_tma),
		cmocka_unit_test(test_tma_context),
		cmocka_unit_test(test_mtc_without_tsc),
		cmocka_unit_test(test_mtc_low_freq_ctc),
		cmocka_unit_test(test_mtc_high_freq_tma),
		cmocka_unit_test(test_bad_config),
		cmocka_unit_test(test_cbr),
		cmocka_unit_test(test_cyc_without_calibration),
		cmocka_unit_test(test_cyc_after_tsc),
		cmocka_unit_test(test_cyc_mtc_calibration),
		cmocka_unit_test(test_cyc_spanning_too_few),
		cmocka_unit_test(test_tsc_calibration),
		cmocka_unit_test(test_cbr_calibration),
		cmocka_unit_test(test_cal_ovf),
		cmocka_unit_test(test_skl168),
		cmocka_unit_test(test_skl168_lost_cyc),
		cmocka_unit_test(test_tracker),
		cmocka_unit_test(test_tracker_flags),
		cmocka_unit_test(test_tracker_same),
		cmocka_unit_test(test_cpu),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

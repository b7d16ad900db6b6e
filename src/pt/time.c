/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Time tracking from TSC, TMA, MTC, CYC and CBR packets (Intel SDM Vol. 3C,
 * "Timing Packets" and "Calculating Frequency with Intel PT").
 *
 * The estimate is base + fc: @base moves at TSC packets (to the TSC) and at
 * MTC packets (by the CTC period since the previous MTC/TMA, converted to
 * TSC ticks with CPUID.15H); @fc accumulates CYC packets (core cycles
 * converted with the calibrated FCR) within one MTC period.
 *
 * The semantics, including the rounding and the handling of lost packets,
 * follow libipt's decoders so that tools built on this agree with ptdump
 * to the tick.
 */
#include <string.h>

#include <hwt/pt.h>

/* CTC bits an MTC packet carries, and the CTC bits a TMA packet carries. */
#define MTC_BITS 8
#define TMA_CTC_BITS 16
#define TMA_CTC_MASK 0xffffu
#define TSC_BITS 56

/*
 * Left shift for CTC arithmetic. MTCFreq is 4 bits in hardware but a
 * configuration may say more; the count wraps as x86's shl does, which
 * keeps the result defined and equal to what x86 builds of other decoders
 * compute for such configurations.
 */
static uint32_t shl32(uint32_t value, unsigned count)
{
	return value << (count & 31);
}

/*
 * CTC ticks from @last to @ctc, allowing for one wrap of the CTC bits MTC
 * packets provide. More than one wrap (lost MTCs) cannot be told apart.
 */
static int ctc_delta(const struct hwt_time_config *config, uint32_t ctc,
		     uint32_t last, uint32_t *delta)
{
	if (ctc < last) {
		ctc += shl32(1, config->mtc_freq + MTC_BITS);
		if (ctc < last)
			return -HWT_ERR_BAD_PACKET;
	}
	*delta = ctc - last;
	return 0;
}

/* CTC ticks to fast counter (TSC) ticks: CPUID.15H gives TSC/CTC. */
static int ctc_to_fc(const struct hwt_time_config *config, uint64_t ctc,
		     uint64_t *fc)
{
	if (!config->cpuid_0x15_eax || !config->cpuid_0x15_ebx)
		return -HWT_ERR_BAD_CONFIG;
	*fc = ctc * config->cpuid_0x15_ebx / config->cpuid_0x15_eax;
	return 0;
}

/* ------------------------------------------------------------------ */
/* The estimate                                                        */
/* ------------------------------------------------------------------ */

void hwt_time_init(struct hwt_time *time)
{
	memset(time, 0, sizeof(*time));
}

int hwt_time_query_tsc(const struct hwt_time *time, uint64_t *tsc,
		       uint32_t *lost_mtc, uint32_t *lost_cyc)
{
	*tsc = time->tsc;
	if (lost_mtc)
		*lost_mtc = time->lost_mtc;
	if (lost_cyc)
		*lost_cyc = time->lost_cyc;
	return time->have_tsc ? 0 : -HWT_ERR_NO_TIME;
}

int hwt_time_query_cbr(const struct hwt_time *time, uint32_t *cbr)
{
	if (!time->have_cbr)
		return -HWT_ERR_NO_CBR;
	*cbr = time->cbr;
	return 0;
}

int hwt_time_update_tsc(struct hwt_time *time, uint64_t tsc)
{
	time->tsc = tsc;
	time->base = tsc;
	time->fc = 0;
	time->ctc = 0;
	time->have_tsc = 1;
	time->have_tma = 0;
	time->have_mtc = 0;
	/* A full timestamp makes up for whatever was lost before. */
	time->lost_mtc = 0;
	time->lost_cyc = 0;
	return 0;
}

int hwt_time_update_cbr(struct hwt_time *time, uint8_t cbr)
{
	if (!cbr)
		return -HWT_ERR_BAD_PACKET;
	time->cbr = cbr;
	time->have_cbr = 1;
	return 0;
}

int hwt_time_update_tma(struct hwt_time *time,
			const struct hwt_time_config *config, uint16_t ctc,
			uint16_t fc)
{
	unsigned mtc_hi = config->mtc_freq + MTC_BITS;

	/* TMA belongs right after a TSC, once. */
	if (!time->have_tsc || time->have_tma)
		return -HWT_ERR_BAD_CONTEXT;
	/* MTCs between TSC and TMA are ignored, so none can have counted. */
	if (time->have_mtc)
		return -HWT_ERR_INTERNAL;

	/* The TSC was taken @fc ticks into the current CTC tick. */
	time->have_tma = 1;
	time->base -= fc;
	time->fc += fc;

	/*
	 * With MTC bits all within TMA's CTC, the TMA serves as the previous
	 * MTC. Otherwise the next MTC supplies the high bits (see
	 * hwt_time_update_mtc()).
	 */
	if (mtc_hi <= TMA_CTC_BITS)
		time->have_mtc = 1;

	time->ctc = ctc & (shl32(1, mtc_hi) - 1);
	time->ctc_cyc = time->ctc;
	return 0;
}

int hwt_time_update_mtc(struct hwt_time *time,
			const struct hwt_time_config *config, uint8_t payload)
{
	uint32_t ctc, last_ctc, delta;
	uint64_t fc;
	int had_mtc = time->have_mtc;
	int err;

	/*
	 * Between TSC and TMA an MTC would look like a CTC overflow; the
	 * MTCs after the TMA cover its period.
	 */
	if (time->have_tsc && !time->have_tma)
		return 0;

	last_ctc = time->ctc;
	ctc = shl32(payload, config->mtc_freq);

	/* A new CYC period starts here if the previous one saw cycles. */
	if (time->fc || time->lost_cyc || !had_mtc)
		time->ctc_cyc = ctc;

	/* Set up for the next packet first: errors below lose only this
	 * one period. */
	time->have_mtc = 1;
	time->fc = 0;
	time->ctc = ctc;
	time->lost_cyc = 0;

	if (!had_mtc) {
		uint32_t lo, hi;

		/*
		 * Without TMA there is no telling where in the MTC period
		 * tracing began; start counting from this MTC.
		 */
		if (!time->have_tma)
			return 0;

		/* Else the TMA would have been taken as an MTC. */
		if (last_ctc & ~TMA_CTC_MASK)
			return -HWT_ERR_INTERNAL;

		/*
		 * TMA gave the low CTC bits only; borrow the high ones from
		 * this MTC, one TMA period back if the low bits wrapped
		 * since (assuming no MTC was lost around the TMA). Bits
		 * beyond what MTC covers are dropped after the borrow.
		 */
		lo = ctc & TMA_CTC_MASK;
		hi = ctc & ~TMA_CTC_MASK;
		if (lo < last_ctc) {
			hi -= 1u << TMA_CTC_BITS;
			hi &= shl32(0xff, config->mtc_freq);
		}
		last_ctc |= hi;
	}

	err = ctc_delta(config, ctc, last_ctc, &delta);
	if (err < 0) {
		time->lost_mtc++;
		return err;
	}
	err = ctc_to_fc(config, delta, &fc);
	if (err < 0)
		return err;

	time->base += fc;
	time->tsc = time->base;
	return 0;
}

/*
 * The cycles of a CYC that fall into the current MTC period. A CYC counts
 * cycles since the previous CYC, which may lie MTC periods back; the
 * earlier periods were already accounted for by those MTCs, so take off
 * what they would have held at the calibrated rate. If that is more than
 * the CYC says, attribute it all to the earlier periods: running slow
 * beats running ahead.
 */
static int cyc_this_period(const struct hwt_time *time,
			   const struct hwt_time_config *config, uint64_t fcr,
			   uint64_t *cyc)
{
	uint64_t fc, before;
	uint32_t delta;
	int err;

	if (time->ctc == time->ctc_cyc)
		return 0;

	err = ctc_delta(config, time->ctc, time->ctc_cyc, &delta);
	if (err < 0)
		return err;
	err = ctc_to_fc(config, delta, &fc);
	if (err < 0)
		return err;

	before = (fc << HWT_TIME_FCR_SHIFT) / fcr;
	*cyc = *cyc > before ? *cyc - before : 0;
	return 0;
}

int hwt_time_update_cyc(struct hwt_time *time,
			const struct hwt_time_config *config, uint64_t cyc,
			uint64_t fcr)
{
	int err;

	if (!fcr) {
		time->lost_cyc++;
		return 0;
	}

	/* Only the first CYC in an MTC period can reach back further. */
	if (!time->fc) {
		err = cyc_this_period(time, config, fcr, &cyc);
		if (err < 0)
			return err;
	}

	time->fc += (cyc * fcr) >> HWT_TIME_FCR_SHIFT;
	time->tsc = time->base + time->fc;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Calibration                                                         */
/* ------------------------------------------------------------------ */

void hwt_time_cal_init(struct hwt_time_cal *cal)
{
	memset(cal, 0, sizeof(*cal));
}

int hwt_time_cal_fcr(const struct hwt_time_cal *cal, uint64_t *fcr)
{
	if (!cal->have_fcr)
		return -HWT_ERR_NO_TIME;
	*fcr = cal->fcr;
	return 0;
}

void hwt_time_cal_set_fcr(struct hwt_time_cal *cal, uint64_t fcr)
{
	cal->fcr = fcr;
	cal->have_fcr = 1;
}

void hwt_time_cal_update_psb(struct hwt_time_cal *cal,
			     const struct hwt_time_config *config)
{
	if (config->errata & HWT_PT_ERRATUM_SKL168)
		cal->check_skl168 = 1;
}

int hwt_time_cal_update_tsc(struct hwt_time_cal *cal, uint64_t tsc,
			    int in_psb)
{
	uint64_t last = cal->tsc, cyc = cal->cyc_tsc, delta;

	cal->tsc = tsc;
	cal->cyc_tsc = 0;

	/*
	 * Only calibrate between periodic TSCs (in PSB+): one outside may
	 * follow a loss of time. MTC periods are shorter, hence better.
	 */
	if (!in_psb || !last || !cyc || cal->have_mtc)
		return 0;

	if (tsc < last) {
		tsc += 1ull << TSC_BITS;
		if (tsc < last)
			return -HWT_ERR_BAD_PACKET;
	}
	delta = tsc - last;
	if (delta >> (64 - HWT_TIME_FCR_SHIFT))
		return -HWT_ERR_INTERNAL;

	hwt_time_cal_set_fcr(cal, (delta << HWT_TIME_FCR_SHIFT) / cyc);
	return 0;
}

int hwt_time_cal_update_cbr(struct hwt_time_cal *cal,
			    const struct hwt_time_config *config, uint8_t cbr,
			    int in_psb)
{
	/* Outside PSB+, a CBR is a frequency change: start over. */
	if (!in_psb)
		hwt_time_cal_init(cal);

	/* Core cycles per TSC tick is CBR / nominal ratio. */
	if (!config->nom_freq)
		return 0;
	if (!cbr)
		return -HWT_ERR_BAD_PACKET;

	hwt_time_cal_set_fcr(cal, ((uint64_t)config->nom_freq <<
				   HWT_TIME_FCR_SHIFT) / cbr);
	return 0;
}

/*
 * SKL168: a PSB may swallow a CYC (and an MTC) right before it. Called
 * for the first MTC period after a PSB; says whether to skip it.
 */
static int skl168_suspect(const struct hwt_time_cal *cal,
			  const struct hwt_time_config *config, uint32_t delta,
			  uint64_t cyc, uint64_t fc)
{
	/* A lost MTC shows as a period longer than one. */
	if (shl32(1, config->mtc_freq) < delta)
		return 1;

	/*
	 * A lost CYC is one counter wrap (4096 cycles) less: compare with
	 * the previous estimate, allowing a little variation. At low MTC
	 * frequencies one wrap is within the noise; don't guess there.
	 */
	if (config->mtc_freq < 10 && cal->have_fcr) {
		uint64_t expected = (cal->fcr * (cyc + 0xf00)) >>
				    HWT_TIME_FCR_SHIFT;

		if (expected < fc)
			return 1;
	}
	return 0;
}

int hwt_time_cal_update_mtc(struct hwt_time_cal *cal,
			    const struct hwt_time_config *config,
			    uint8_t payload)
{
	uint32_t last_ctc = cal->ctc, ctc, delta;
	uint64_t cyc = cal->cyc_mtc, fc, fcr;
	int check_skl168 = cal->check_skl168;
	int err;

	cal->check_skl168 = 0;
	ctc = shl32(payload, config->mtc_freq);

	/* A period needs two MTCs. */
	if (!cal->have_mtc) {
		cal->have_mtc = 1;
		cal->cyc_mtc = 0;
		cal->ctc = ctc;
		return 0;
	}

	/* No cycles yet: let the period extend to the next MTC. */
	if (!cyc)
		return 0;

	cal->cyc_mtc = 0;
	cal->ctc = ctc;

	/* Counted as lost unless it gives an estimate below. */
	cal->lost_mtc++;

	err = ctc_delta(config, ctc, last_ctc, &delta);
	if (err < 0)
		return err;
	err = ctc_to_fc(config, delta, &fc);
	if (err < 0)
		return err;
	if (fc >> (64 - HWT_TIME_FCR_SHIFT))
		return -HWT_ERR_INTERNAL;
	fcr = (fc << HWT_TIME_FCR_SHIFT) / cyc;

	if (check_skl168 && skl168_suspect(cal, config, delta, cyc, fc))
		return 0;

	hwt_time_cal_set_fcr(cal, fcr);
	cal->lost_mtc = 0;
	return 0;
}

void hwt_time_cal_update_cyc(struct hwt_time_cal *cal, uint64_t cyc)
{
	cal->cyc_mtc += cyc;
	cal->cyc_tsc += cyc;
}

void hwt_time_cal_update_ovf(struct hwt_time_cal *cal)
{
	cal->tsc = 0;
	cal->cyc_tsc = 0;
	cal->cyc_mtc = 0;
	cal->ctc = 0;
	cal->have_mtc = 0;
}

/* ------------------------------------------------------------------ */
/* Packet-driven tracker                                               */
/* ------------------------------------------------------------------ */

void hwt_time_tracker_init(struct hwt_time_tracker *tracker,
			   const struct hwt_time_config *config,
			   uint32_t flags)
{
	tracker->config = *config;
	tracker->flags = flags;
	hwt_time_tracker_reset(tracker);
}

void hwt_time_tracker_reset(struct hwt_time_tracker *tracker)
{
	hwt_time_init(&tracker->time);
	hwt_time_cal_init(&tracker->cal);
	tracker->in_psb = 0;
}

int hwt_time_tracker_same(const struct hwt_time_tracker *a,
			  const struct hwt_time_tracker *b)
{
	const struct hwt_time *t = &a->time, *u = &b->time;
	const struct hwt_time_cal *c = &a->cal, *e = &b->cal;

	/* Calibration only where it is used: for CYCs, none without. */
	int cal = !(a->flags & (HWT_TIME_NO_CYC | HWT_TIME_NO_TCAL));

	/* Not memcmp(): the padding between fields is not state. */
	if (cal && !(c->fcr == e->fcr && c->tsc == e->tsc &&
		     c->cyc_tsc == e->cyc_tsc && c->cyc_mtc == e->cyc_mtc &&
		     c->ctc == e->ctc && c->lost_mtc == e->lost_mtc &&
		     c->have_fcr == e->have_fcr &&
		     c->have_mtc == e->have_mtc &&
		     c->check_skl168 == e->check_skl168))
		return 0;
	return a->flags == b->flags &&
	       t->tsc == u->tsc && t->base == u->base && t->fc == u->fc &&
	       t->ctc == u->ctc && t->ctc_cyc == u->ctc_cyc &&
	       t->lost_mtc == u->lost_mtc && t->lost_cyc == u->lost_cyc &&
	       t->cbr == u->cbr && t->have_tsc == u->have_tsc &&
	       t->have_cbr == u->have_cbr && t->have_tma == u->have_tma &&
	       t->have_mtc == u->have_mtc && a->in_psb == b->in_psb;
}

static int first_error(int a, int b)
{
	return a < 0 ? a : b;
}

int hwt_time_tracker_update(struct hwt_time_tracker *tracker,
			    const struct hwt_pt_packet *packet)
{
	const struct hwt_time_config *config = &tracker->config;
	int tcal = !(tracker->flags & HWT_TIME_NO_TCAL);
	int cal_err = 0, err;
	uint64_t fcr = 0;

	switch (packet->type) {
	case HWT_PT_PSB:
		tracker->in_psb = 1;
		hwt_time_cal_update_psb(&tracker->cal, config);
		return 0;
	case HWT_PT_PSBEND:
		tracker->in_psb = 0;
		return 0;
	case HWT_PT_OVF:
		if (tracker->flags & HWT_TIME_KEEP_TCAL_ON_OVF)
			hwt_time_cal_update_ovf(&tracker->cal);
		else
			hwt_time_cal_init(&tracker->cal);
		return 0;
	case HWT_PT_TSC:
		if (tcal)
			cal_err = hwt_time_cal_update_tsc(&tracker->cal,
							  packet->u.tsc,
							  tracker->in_psb);
		err = hwt_time_update_tsc(&tracker->time, packet->u.tsc);
		return first_error(cal_err, err);
	case HWT_PT_CBR:
		if (tcal)
			cal_err = hwt_time_cal_update_cbr(&tracker->cal, config,
							  packet->u.cbr,
							  tracker->in_psb);
		err = hwt_time_update_cbr(&tracker->time, packet->u.cbr);
		return first_error(cal_err, err);
	case HWT_PT_TMA:
		return hwt_time_update_tma(&tracker->time, config,
					   packet->u.tma.ctc, packet->u.tma.fc);
	case HWT_PT_MTC:
		if (tcal)
			cal_err = hwt_time_cal_update_mtc(&tracker->cal, config,
							  packet->u.mtc);
		err = hwt_time_update_mtc(&tracker->time, config,
					  packet->u.mtc);
		return first_error(cal_err, err);
	case HWT_PT_CYC:
		if (tracker->flags & HWT_TIME_NO_CYC)
			return 0;
		if (tcal) {
			/* Estimate first: this CYC is not in the estimate. */
			(void)hwt_time_cal_fcr(&tracker->cal, &fcr);
			hwt_time_cal_update_cyc(&tracker->cal, packet->u.cyc);
		}
		return hwt_time_update_cyc(&tracker->time, config,
					   packet->u.cyc, fcr);
	default:
		return 0;
	}
}

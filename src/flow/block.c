/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The block decoder: trace answers (query layer) + code (image) -> blocks
 * of sequentially executed instructions and events between them.
 *
 * Where a block ends and where an event is reported relative to the
 * instructions follow libipt's block decoder, so that ptxed-style output
 * is identical. The shape of it:
 *
 *   - With no event pending, a block runs until an instruction needs
 *     trace (conditional/indirect branch, return, far transfer). That
 *     instruction ends the block; its answer gives the next block's IP.
 *   - With an event pending, the block runs to where the event binds (an
 *     IP, or an instruction kind such as MOV CR3 for a paging event) and
 *     the event is reported after the block.
 *   - Events that bind to an instruction (paging, vmcs, ptwrite, iret,
 *     vmentry) postpone proceeding past it until all of them are
 *     reported ("process_insn").
 *
 * Hot code goes through the block cache (bcache.c): runs of straight-line
 * instructions are decoded once and then walked without touching Zydis.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <hwt/flow.h>

#include "flow/block_int.h"

/* Instruction kinds beyond enum hwt_insn_class / HWT_INSN_* flags. */
enum {
	BLK_K_IRET = 0x1,	/* iret, sysret, sysexit */
	BLK_K_UIRET = 0x2
};

/* ------------------------------------------------------------------ */
/* Instructions                                                        */
/* ------------------------------------------------------------------ */

static unsigned blk_kind(const uint8_t *p, size_t n, unsigned mode)
{
	size_t i = 0;
	int rep = 0;

	/* Only far returns get here; find the opcode behind any prefixes. */
	for (; i < n; ++i) {
		uint8_t b = p[i];

		if (b == 0xf3) {
			rep = 1;
			continue;
		}
		if (b == 0x66 || b == 0x67 || b == 0xf0 || b == 0xf2 ||
		    b == 0x2e || b == 0x36 || b == 0x3e || b == 0x26 ||
		    b == 0x64 || b == 0x65)
			continue;
		if (mode == HWT_MODE_64 && (b & 0xf0) == 0x40)
			continue;
		break;
	}
	if (i >= n)
		return 0;
	if (p[i] == 0xcf)
		return BLK_K_IRET;
	if (p[i] != 0x0f || i + 1 >= n)
		return 0;
	if (p[i + 1] == 0x07 || p[i + 1] == 0x35)
		return BLK_K_IRET;
	if (rep && p[i + 1] == 0x01 && i + 2 < n && p[i + 2] == 0xec)
		return BLK_K_UIRET;
	return 0;
}

/*
 * Decode the instruction at @ip. An instruction that runs past the end of
 * its section is completed from the following memory (@truncated).
 * Returns 0, -HWT_ERR_NOMAP or -HWT_ERR_BAD_INSN.
 */
static int blk_decode(const struct hwt_image *image, uint64_t ip,
		      unsigned mode, struct blk_insn *insn)
{
	struct hwt_insn_info info;
	const uint8_t *code;
	size_t avail;
	int err;

	err = hwt_image_read(image, ip, &code, &avail);
	if (err < 0)
		return err;

	insn->ip = ip;
	insn->truncated = 0;
	insn->sec_end = ip + avail;
	insn->sec_delta = (uintptr_t) code - (uintptr_t) ip;

	err = hwt_insn_decode(&info, code, avail, ip, mode);
	if (err < 0) {
		uint8_t buf[15];
		size_t n;

		if (avail >= sizeof(buf))
			return err;

		memcpy(buf, code, avail);
		for (n = avail; n < sizeof(buf);) {
			const uint8_t *more;
			size_t len;

			if (hwt_image_read(image, ip + n, &more, &len) < 0)
				break;
			if (len > sizeof(buf) - n)
				len = sizeof(buf) - n;
			memcpy(buf + n, more, len);
			n += len;
		}
		if (n == avail)
			return -HWT_ERR_BAD_INSN;

		err = hwt_insn_decode(&info, buf, n, ip, mode);
		if (err < 0)
			return err;

		insn->truncated = 1;
		memcpy(insn->raw, buf, info.size);
		code = insn->raw;
		avail = info.size;
	}

	insn->size = info.size;
	insn->iclass = info.iclass;
	insn->flags = info.flags;
	insn->target = info.target;
	insn->kind = 0;
	if (info.iclass == HWT_IC_FAR_RETURN)
		insn->kind = (uint8_t) blk_kind(code, info.size < avail ?
						info.size : avail, mode);
	return 0;
}

static int insn_is_far_branch(const struct blk_insn *insn)
{
	return insn->iclass == HWT_IC_FAR_CALL ||
	       insn->iclass == HWT_IC_FAR_RETURN ||
	       insn->iclass == HWT_IC_FAR_JUMP;
}

static int insn_is_branch(const struct blk_insn *insn)
{
	return hwt_insn_class_branches(insn->iclass);
}

static int insn_changes_cr3(const struct blk_insn *insn)
{
	return !!(insn->flags & HWT_INSN_MOV_CR3);
}

static int insn_binds_to_pip(const struct blk_insn *insn)
{
	return (insn->flags & (HWT_INSN_MOV_CR3 | HWT_INSN_VMENTRY)) ||
	       insn_is_far_branch(insn);
}

static int insn_binds_to_vmcs(const struct blk_insn *insn)
{
	return (insn->flags & (HWT_INSN_VMPTRLD | HWT_INSN_VMENTRY)) ||
	       insn_is_far_branch(insn);
}

static int insn_is_ptwrite(const struct blk_insn *insn)
{
	return insn->iclass == HWT_IC_PTWRITE;
}

static int insn_is_iret(const struct blk_insn *insn)
{
	return insn->kind == BLK_K_IRET;
}

static int insn_is_uiret(const struct blk_insn *insn)
{
	return insn->kind == BLK_K_UIRET;
}

static int insn_is_vmentry(const struct blk_insn *insn)
{
	return !!(insn->flags & HWT_INSN_VMENTRY);
}

static int insn_false(const struct blk_insn *insn)
{
	(void) insn;
	return 0;
}

static int insn_skl014(const struct blk_insn *insn)
{
	switch (insn->iclass) {
	case HWT_IC_CALL:
	case HWT_IC_JUMP:
		return !!(insn->flags & HWT_INSN_DIRECT);
	case HWT_IC_OTHER:
		return insn_changes_cr3(insn);
	default:
		return 0;
	}
}

/* The next IP if it does not need trace; -HWT_ERR_BAD_QUERY if it does. */
static int insn_next_ip(uint64_t *ip, const struct blk_insn *insn)
{
	switch (insn->iclass) {
	case HWT_IC_OTHER:
	case HWT_IC_PTWRITE:
		*ip = insn->ip + insn->size;
		return 0;

	case HWT_IC_CALL:
	case HWT_IC_JUMP:
		if (insn->flags & HWT_INSN_DIRECT) {
			*ip = insn->target;
			return 0;
		}
		return -HWT_ERR_BAD_QUERY;

	case HWT_IC_UNKNOWN:
		return -HWT_ERR_BAD_INSN;

	default:
		return -HWT_ERR_BAD_QUERY;
	}
}

static int blk_range_is_contiguous(const struct hwt_blk_decoder *d,
				   uint64_t begin, uint64_t end, size_t steps)
{
	struct blk_insn insn;
	uint64_t ip = begin;

	while (ip != end) {
		int err;

		if (!steps--)
			return 0;

		err = blk_decode(d->image, ip, d->mode, &insn);
		if (err < 0)
			return err;

		err = insn_next_ip(&ip, &insn);
		if (err < 0)
			return err;
	}
	return 1;
}

/* ------------------------------------------------------------------ */
/* Return compression                                                  */
/* ------------------------------------------------------------------ */

/* A push by the cached walk: logged for its graph node. */
static void blk_walk_push(struct hwt_blk_decoder *d, uint64_t ip)
{
	retstack_push(&d->retstack, ip);
	if (d->nrec < BLK_REC_MAX)
		d->rec[d->nrec] = ip;
	d->nrec += 1;
}

static void blk_log_call(struct hwt_blk_decoder *d, uint64_t ip,
			 const struct hwt_bc_entry *e)
{
	uint64_t next = ip + e->size;

	/* call next; pop reg - position independent code, no return. */
	if ((e->flags & HWT_INSN_DIRECT) && e->target == next)
		return;
	blk_walk_push(d, next);
}

/* ------------------------------------------------------------------ */
/* Status, events and queries                                          */
/* ------------------------------------------------------------------ */

/* Make the query layer's next event the in-progress one, if any.
 * Returns 1 if an event is in progress, 0 if none, or an error. */
static int blk_fetch_event(struct hwt_blk_decoder *d)
{
	int status;

	if (d->process_event)
		return 1;

	if (!(d->status & HWT_STS_EVENT_PENDING))
		return 0;

	status = hwt_qry_event(d->qry, &d->event);
	if (status < 0)
		return status;

	d->status = status;
	d->process_event = 1;
	return 1;
}

/*
 * Synthesize a tick event at @ip if time moved since the last thing we
 * consumed. @need_tsc: only with wall-clock time (TNT, as libipt).
 */
int hwt_blk_tick_(struct hwt_blk_decoder *d, uint64_t ip, int need_tsc)
{
	uint32_t lost_mtc = 0, lost_cyc = 0;
	uint64_t tsc = 0;
	int err;

	/* The slot is busy: the event carries its own time. */
	if (d->process_event)
		return 0;

	err = hwt_qry_time(d->qry, &tsc, &lost_mtc, &lost_cyc);
	if (err < 0 && err != -HWT_ERR_NO_TIME)
		return 0;
	if (err < 0 && need_tsc)
		return 0;
	if (tsc == d->tsc)
		return 0;

	d->tsc = tsc;
	memset(&d->event, 0, sizeof(d->event));
	d->event.type = HWT_EV_TICK;
	d->event.u.tick.ip = ip;
	d->event.has_tsc = err == 0;
	d->event.tsc = tsc;
	d->event.lost_mtc = lost_mtc;
	d->event.lost_cyc = lost_cyc;
	d->process_event = 1;
	return 1;
}

/*
 * Use trace for one last step past @insn (which needs it) to the next
 * block's IP. @tick: a TNT-based tick may be reported here (the block
 * ends with this instruction).
 */
static int blk_proceed_with_trace(struct hwt_blk_decoder *d,
				  const struct blk_insn *insn, int tick)
{
	int kind = blk_exit_of(insn->iclass, insn->flags);

	if (kind < 0)
		return kind;
	return blk_take_exit(d, (unsigned) kind, insn->target,
			     insn->ip + insn->size, tick);
}

/* ------------------------------------------------------------------ */
/* Walking the code                                                    */
/* ------------------------------------------------------------------ */

static int blk_end_on(const struct hwt_blk_decoder *d, unsigned iclass)
{
	return ((d->config.flags & HWT_BLK_END_ON_CALL) &&
		iclass == HWT_IC_CALL) ||
	       ((d->config.flags & HWT_BLK_END_ON_JUMP) &&
		iclass == HWT_IC_JUMP);
}

/* Is an instruction of section (@delta, @end) alien to the block? Sets the
 * block's section if it is empty. */
static int blk_switches_section(struct hwt_blk_decoder *d,
				const struct hwt_block *block,
				uintptr_t delta, uint64_t end)
{
	if (!block->ninsn) {
		d->blk_sec_delta = delta;
		d->blk_sec_end = end;
		return 0;
	}
	return d->blk_sec_delta != delta || d->blk_sec_end != end;
}

/*
 * Add the instruction at @d->ip to @block. Returns 1 if added, 0 if it
 * does not fit (block full, truncated instruction already last, other
 * section), or an error.
 */
static int blk_proceed_one_insn(struct hwt_blk_decoder *d,
				struct hwt_block *block, struct blk_insn *insn)
{
	int err;

	if (block->ninsn >= BLK_MAX_INSN || block->truncated)
		return 0;

	err = blk_decode(d->image, d->ip, d->mode, insn);
	if (err < 0)
		return err;

	if (blk_switches_section(d, block, insn->sec_delta, insn->sec_end))
		return 0;

	if (insn->truncated) {
		memcpy(block->raw, insn->raw, insn->size);
		block->size = insn->size;
		block->truncated = 1;
	}

	if (insn->iclass == HWT_IC_CALL &&
	    !((insn->flags & HWT_INSN_DIRECT) &&
	      insn->target == insn->ip + insn->size))
		retstack_push(&d->retstack, insn->ip + insn->size);

	block->iclass = insn->iclass;
	block->end_ip = insn->ip;
	block->size = insn->size;
	block->ninsn += 1;
	return 1;
}

/*
 * Proceed without trace until @pred holds for an instruction (returns 1,
 * @d->ip at it), the block ends (0) or trace is needed (-BAD_QUERY, @d->ip
 * at the instruction needing it). @insn: the last instruction reached.
 */
static int blk_proceed_to_insn(struct hwt_blk_decoder *d,
			       struct hwt_block *block, struct blk_insn *insn,
			       int (*pred)(const struct blk_insn *))
{
	for (;;) {
		int status;

		status = blk_proceed_one_insn(d, block, insn);
		if (status <= 0)
			return status;

		if (pred(insn))
			return 1;

		status = insn_next_ip(&d->ip, insn);
		if (status < 0)
			return status;

		if (blk_end_on(d, insn->iclass))
			return 0;
	}
}

/* Proceed without trace until @d->ip == @ip (1), as blk_proceed_to_insn. */
static int blk_proceed_to_ip(struct hwt_blk_decoder *d,
			     struct hwt_block *block, struct blk_insn *insn,
			     uint64_t ip)
{
	for (;;) {
		int status;

		if (d->ip == ip)
			return 1;

		status = blk_proceed_one_insn(d, block, insn);
		if (status <= 0)
			return status;

		status = insn_next_ip(&d->ip, insn);
		if (status < 0)
			return status;

		if (blk_end_on(d, insn->iclass))
			return d->ip == ip;
	}
}

/* IA32_RTIT_ADDRn filtering: is tracing enabled at @ip? */
static int blk_filter_check(const struct hwt_blk_decoder *d, uint64_t ip)
{
	const struct hwt_qry_config *c = &d->config.qry;
	int n, have_filter = 0;

	for (n = 0; n < 4; ++n)
		if (c->addr_filter[n].cfg == 2 && c->addr_filter[n].a <= ip &&
		    ip <= c->addr_filter[n].b)
			return 0;

	for (n = 0; n < 4; ++n) {
		if (c->addr_filter[n].cfg != 1)
			continue;
		have_filter = 1;
		if (c->addr_filter[n].a <= ip && ip <= c->addr_filter[n].b)
			return 1;
	}
	return !have_filter;
}

/* SKL014: a TIP.PGD without IP may also come from a direct branch that
 * leaves the filter region; find the branch by the filter configuration. */
static int blk_proceed_skl014(struct hwt_blk_decoder *d,
			      struct hwt_block *block, struct blk_insn *insn)
{
	for (;;) {
		uint64_t ip;
		int status;

		status = blk_proceed_to_insn(d, block, insn, insn_skl014);
		if (status <= 0)
			return status;

		if (insn_changes_cr3(insn))
			return status;

		status = insn_next_ip(&ip, insn);
		if (status < 0)
			return status;

		if (!blk_filter_check(d, ip))
			return 1;

		d->ip = ip;
		if (blk_end_on(d, insn->iclass))
			return 0;
	}
}

static int blk_proceed_to_disabled(struct hwt_blk_decoder *d,
				   struct hwt_block *block,
				   struct blk_insn *insn,
				   const struct hwt_event *ev)
{
	if (!ev->ip_suppressed)
		return blk_proceed_to_ip(d, block, insn, ev->u.disabled.ip);

	/* Without a filter configuration SKL014 cannot apply; assuming it
	 * would disable tracing too early. */
	if (d->filter && (d->config.qry.errata & HWT_PT_ERRATUM_SKL014))
		return blk_proceed_skl014(d, block, insn);

	/* Far branches and CPL changes need trace: the caller binds the
	 * event to the instruction that needs it. */
	return blk_proceed_to_insn(d, block, insn, insn_changes_cr3);
}

/* Where tracing is expected to resume after a synchronous disable at
 * @insn: after a call, its return; else unknown. */
static void blk_set_disable_resume_ip(struct hwt_blk_decoder *d,
				      const struct blk_insn *insn)
{
	if (insn->iclass == HWT_IC_CALL || insn->iclass == HWT_IC_FAR_CALL)
		d->ip = insn->ip + insn->size;
	else
		d->ip = 0;
}

/*
 * Events binding to an instruction kind (ptwrite, iret, vmentry, uiret):
 * without an IP the next such instruction; with one, the instruction at
 * it. We proceed past it so it ends the block. *@ev_ip gets its IP.
 */
static int blk_proceed_to_kind(struct hwt_blk_decoder *d,
			       struct hwt_block *block, struct blk_insn *insn,
			       struct hwt_event *ev, uint64_t *ev_ip,
			       int (*pred)(const struct blk_insn *))
{
	int status;

	if (ev->ip_suppressed) {
		status = blk_proceed_to_insn(d, block, insn, pred);
		if (status <= 0)
			return status;

		*ev_ip = insn->ip;
		ev->ip_suppressed = 0;
		return 1;
	}

	status = blk_proceed_to_ip(d, block, insn, *ev_ip);
	if (status <= 0)
		return status;

	status = blk_proceed_one_insn(d, block, insn);
	if (status <= 0)
		return status;

	return 1;
}

/* SKD022: an async disable at VMLAUNCH/VMRESUME may come from a bogus FUP;
 * make it a synchronous disable. Returns 1 if the event was changed. */
static int blk_handle_skd022(struct hwt_blk_decoder *d, struct hwt_event *ev)
{
	struct blk_insn insn;
	uint64_t ip;

	if (blk_decode(d->image, ev->u.async_disabled.at, d->mode, &insn) < 0)
		return 0;
	if (!insn_is_vmentry(&insn))
		return 0;

	ip = ev->u.async_disabled.ip;
	ev->type = HWT_EV_DISABLED;
	ev->u.disabled.ip = ip;
	return 1;
}

static int blk_postpone_insn(struct hwt_blk_decoder *d,
			     const struct blk_insn *insn)
{
	if (d->process_insn)
		return -HWT_ERR_INTERNAL;

	d->process_insn = 1;
	d->insn = *insn;
	return blk_status(d, HWT_STS_EVENT_PENDING);
}

static void blk_clear_postponed_insn(struct hwt_blk_decoder *d)
{
	d->process_insn = 0;
	d->bound_paging = 0;
	d->bound_vmcs = 0;
	d->bound_ptwrite = 0;
	d->bound_iret = 0;
	d->bound_vmentry = 0;
	d->bound_uiret = 0;
}

static int blk_proceed_postponed_insn(struct hwt_blk_decoder *d)
{
	int status;

	if (!d->process_insn)
		return 0;

	if (d->enabled) {
		status = insn_next_ip(&d->ip, &d->insn);
		if (status < 0) {
			if (status != -HWT_ERR_BAD_QUERY)
				return status;

			status = blk_proceed_with_trace(d, &d->insn, 0);
			if (status < 0)
				return status;
		}
	}

	blk_clear_postponed_insn(d);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Proceeding without events: the hot path                             */
/* ------------------------------------------------------------------ */

/* Without the cache: one instruction at a time. */
static int blk_proceed_no_event_uncached(struct hwt_blk_decoder *d,
					 struct hwt_block *block)
{
	struct blk_insn insn;
	int status;

	memset(&insn, 0, sizeof(insn));
	status = blk_proceed_to_insn(d, block, &insn, insn_false);
	if (status < 0) {
		if (status != -HWT_ERR_BAD_QUERY)
			return status;

		return blk_proceed_with_trace(d, &insn, 1);
	}
	return 0;
}

/* Is @ip in the section of the current block? */
static int blk_in_block_section(const struct hwt_blk_decoder *d, uint64_t ip)
{
	const uint8_t *code;
	size_t avail;

	if (hwt_image_read(d->image, ip, &code, &avail) < 0)
		return 0;
	return (uintptr_t) code - (uintptr_t) ip == d->blk_sec_delta &&
	       ip + avail == d->blk_sec_end;
}

static int blk_sec(struct hwt_blk_decoder *d, const struct blk_insn *insn)
{
	return hwt_bcache_sec_of(&d->bcache, d->image, insn->sec_end,
				 insn->sec_delta);
}

/* Returns 0, or an error if the section cannot be recorded. */
static int bce_set_last(struct hwt_blk_decoder *d, struct hwt_bc_entry *e,
			const struct blk_insn *insn, unsigned mode)
{
	int sec = blk_sec(d, insn);

	if (sec < 0)
		return sec;
	e->sec = (uint16_t) sec;
	e->mode = (uint8_t) mode;
	e->size = insn->size;
	e->iclass = insn->iclass;
	e->flags = insn->flags;
	e->kind = insn->kind;
	e->target = insn->target;
	e->truncated = insn->truncated;
	return 0;
}

static void blk_add_decode(struct hwt_blk_decoder *d,
			   const struct blk_insn *insn)
{
	struct hwt_bc_entry e;

	memset(&e, 0, sizeof(e));
	e.ip = insn->ip;
	e.ninsn = 1;
	e.qual = HWT_BCQ_DECODE;
	if (bce_set_last(d, &e, insn, d->mode) < 0)
		return;
	(void) hwt_bcache_add(&d->bcache, &e);
}

/* An entry at @insn to continue at @nip (the next instruction). */
static void blk_add_trampoline(struct hwt_blk_decoder *d,
			       const struct blk_insn *insn, uint64_t nip)
{
	struct hwt_bc_entry e;
	int64_t disp = (int64_t) (nip - insn->ip);
	int sec;

	if (disp != (int16_t) disp) {
		blk_add_decode(d, insn);
		return;
	}
	sec = blk_sec(d, insn);
	if (sec < 0)
		return;

	memset(&e, 0, sizeof(e));
	e.ip = insn->ip;
	e.ninsn = 1;
	e.disp = (int16_t) disp;
	e.qual = HWT_BCQ_AGAIN;
	e.mode = d->mode;
	e.sec = (uint16_t) sec;
	(void) hwt_bcache_add(&d->bcache, &e);
}

/* Chain @insn (followed by @nip) in front of the entry at @nip. Returns 1
 * if linked, 0 if there is no entry at @nip, or an error. */
static int blk_link(struct hwt_blk_decoder *d, const struct blk_insn *insn,
		    uint64_t nip)
{
	const struct hwt_bc_entry *next;
	struct hwt_bc_entry e;
	int64_t disp;

	next = hwt_bcache_lookup(&d->bcache, nip);
	if (!next)
		return 0;
	if (next->mode != d->mode)
		return -HWT_ERR_INTERNAL;

	disp = (int64_t) (nip + (uint64_t) (int64_t) next->disp - insn->ip);
	if (next->ninsn + 1 > 0xff || disp != (int16_t) disp) {
		blk_add_trampoline(d, insn, nip);
		return 1;
	}

	e = *next;
	e.ip = insn->ip;
	e.ninsn = (uint8_t) (next->ninsn + 1);
	e.disp = (int16_t) disp;
	(void) hwt_bcache_add(&d->bcache, &e);
	return 1;
}

/*
 * Decode the block at @d->ip one instruction at a time and make cache
 * entries for it, as libipt does: the block ends where trace is needed,
 * but also after a direct call, a backward direct jump, on leaving the
 * section, on meeting code that is already cached, and after 0x400
 * instructions - the next pass through the same code runs on.
 */
static int blk_fill_cache(struct hwt_blk_decoder *d, struct hwt_block *block)
{
	struct blk_insn *stack = d->fill;
	unsigned depth = 0, steps = BLK_FILL_STEPS;
	int status;

	for (;;) {
		struct blk_insn *insn = &stack[depth];
		uint64_t nip;

		status = blk_proceed_one_insn(d, block, insn);
		if (status <= 0)
			return status;

		status = insn_next_ip(&d->ip, insn);
		if (status == -HWT_ERR_BAD_QUERY) {
			struct hwt_bc_entry e;

			memset(&e, 0, sizeof(e));
			e.ip = insn->ip;
			e.ninsn = 1;
			switch (insn->iclass) {
			case HWT_IC_CALL:
				e.qual = HWT_BCQ_IND_CALL;
				break;
			case HWT_IC_RETURN:
				e.qual = HWT_BCQ_RETURN;
				break;
			case HWT_IC_COND_JUMP:
				e.qual = HWT_BCQ_COND;
				break;
			default:
				e.qual = HWT_BCQ_INDIRECT;
				break;
			}
			if (block->truncated)
				e.qual = HWT_BCQ_DECODE;
			if (bce_set_last(d, &e, insn, d->mode) >= 0)
				(void) hwt_bcache_add(&d->bcache, &e);

			status = blk_proceed_with_trace(d, insn, 1);
			if (status < 0)
				return status;
			break;
		}
		if (status < 0)
			return status;

		nip = d->ip;
		if (insn->iclass == HWT_IC_CALL ||
		    (insn->iclass == HWT_IC_JUMP &&
		     (nip < insn->ip + insn->size ||
		      (d->config.flags & HWT_BLK_END_ON_JUMP))) ||
		    block->truncated || !blk_in_block_section(d, nip)) {
			blk_add_decode(d, insn);
			break;
		}

		if (hwt_bcache_lookup(&d->bcache, nip)) {
			status = blk_link(d, insn, nip);
			if (status < 0)
				return status;
			break;
		}

		if (!--steps) {
			blk_add_trampoline(d, insn, nip);
			break;
		}

		depth += 1;
	}

	/* Chain the instructions before the last one, innermost first. */
	while (depth--) {
		const struct blk_insn *insn = &stack[depth];

		status = blk_link(d, insn, stack[depth + 1].ip);
		if (status <= 0)
			return status;
	}
	return 0;
}

/* The instruction at @d->ip crosses the section end: it ends the block. */
static int blk_proceed_truncated(struct hwt_blk_decoder *d,
				 struct hwt_block *block)
{
	struct blk_insn insn;
	int status;

	status = blk_decode(d->image, d->ip, d->mode, &insn);
	if (status < 0)
		return status;
	if (!insn.truncated)
		return -HWT_ERR_INTERNAL;

	memcpy(block->raw, insn.raw, insn.size);
	block->iclass = insn.iclass;
	block->size = insn.size;
	block->truncated = 1;

	if (insn.iclass == HWT_IC_CALL &&
	    !((insn.flags & HWT_INSN_DIRECT) &&
	      insn.target == insn.ip + insn.size))
		retstack_push(&d->retstack, insn.ip + insn.size);

	status = insn_next_ip(&d->ip, &insn);
	if (status == -HWT_ERR_BAD_QUERY)
		return blk_proceed_with_trace(d, &insn, 1);
	return status;
}

/* The instruction at @ip (entry @e, "decode") needs trace. */
static int blk_exit_trace(const struct hwt_bc_entry *e, uint64_t ip,
			  struct blk_exit *x)
{
	int kind = blk_exit_of(e->iclass, e->flags);

	if (kind < 0)
		return kind;
	x->kind = (uint8_t) kind;
	x->target = e->target;
	x->next = ip + e->size;
	return 1;
}

/* No entry at @d->ip: decode on if it is in the block's section. */
static int blk_exit_uncached(struct hwt_blk_decoder *d, struct hwt_block *block)
{
	if (!blk_in_block_section(d, d->ip))
		return 0;
	return blk_fill_cache(d, block);
}

/* The cache lookup with the table in locals (nothing is added to the
 * cache while they are in use). */
static inline const struct hwt_bc_entry *
bc_find(const struct hwt_bc_entry *slots, size_t mask, uint64_t ip)
{
	size_t i = hwt_bcache_slot_(ip, mask);

	for (;;) {
		const struct hwt_bc_entry *e = &slots[i];

		if (__builtin_expect(e->ip == ip, 1) && e->ninsn)
			return e;
		if (!e->ninsn)
			return NULL;
		i = (i + 1) & mask;
	}
}

/*
 * Proceed without events through cached code: one lookup per entry, no
 * instruction decoding. Block boundaries and block->iclass as libipt's.
 * The cache must be current (blk_cache_check()).
 *
 * Returns 1 when the walk met only cached entries and stopped at an
 * instruction that needs trace or at a block boundary, described in *@x
 * for the caller to take (the walk can then be replayed from a graph
 * node); else the status of finishing the block some other way (decoding
 * uncached code, a truncated instruction) or an error. Either way @d->ip
 * and @block are up to date, the IP and instruction count having lived in
 * locals. Section indices are interned, so equal indices mean the same
 * section. Pushes go through blk_walk_push().
 */
static int blk_walk_cached(struct hwt_blk_decoder *d, struct hwt_block *block,
			   struct blk_exit *x)
{
	const struct hwt_bcache *bc = &d->bcache;
	const struct hwt_bc_entry *slots = bc->slots, *e;
	const struct hwt_bc_sec *sec;
	size_t mask = bc->mask;
	uint64_t ip = d->ip, nip;
	uint32_t ninsn = block->ninsn;
	unsigned sec_idx;

	x->kind = HWT_BCX_NONE;
	x->target = 0;
	x->next = 0;
	e = bc_find(slots, mask, ip);
	if (!e)
		return blk_fill_cache(d, block);
	sec = hwt_bcache_secof(bc, e);
	if (blk_switches_section(d, block, sec->delta, sec->end))
		return 0;
	sec_idx = e->sec;

	for (;;) {
		/* @e is at @ip and in the block's section. */
		if (ninsn + e->ninsn > BLK_MAX_INSN)
			break;

		nip = ip + (uint64_t) (int64_t) e->disp;
		ninsn += e->ninsn;
		block->end_ip = nip;
		block->size = e->size;
		block->mode = e->mode;

		if (__builtin_expect(e->qual != HWT_BCQ_AGAIN, 1)) {
			block->ninsn = ninsn;
			d->ip = nip;
		}
		switch (e->qual) {
		case HWT_BCQ_AGAIN:
			block->iclass = HWT_IC_UNKNOWN;
			ip = nip;
			break;

		case HWT_BCQ_COND:
			block->iclass = HWT_IC_COND_JUMP;
			x->kind = HWT_BCX_COND;
			x->target = e->target;
			x->next = nip + e->size;
			return 1;

		case HWT_BCQ_DECODE:
			if (e->truncated)
				return blk_proceed_truncated(d, block);

			block->iclass = e->iclass;
			switch (e->iclass) {
			case HWT_IC_OTHER:
			case HWT_IC_PTWRITE:
				ip = nip + e->size;
				break;
			case HWT_IC_CALL:
				blk_log_call(d, nip, e);
				/* fall through */
			case HWT_IC_JUMP:
				if (e->flags & HWT_INSN_DIRECT) {
					ip = e->target;
					break;
				}
				/* fall through */
			default:
				return blk_exit_trace(e, nip, x);
			case HWT_IC_UNKNOWN:
				return -HWT_ERR_BAD_INSN;
			}
			d->ip = ip;
			if (blk_end_on(d, e->iclass))
				return 1;

			e = bc_find(slots, mask, ip);
			if (!e)
				return blk_exit_uncached(d, block);
			if (e->sec != sec_idx) {
				sec = hwt_bcache_secof(bc, e);
				if (sec->delta != d->blk_sec_delta ||
				    sec->end != d->blk_sec_end)
					return 1;
				sec_idx = e->sec;
			}
			continue;

		case HWT_BCQ_IND_CALL:
			block->iclass = HWT_IC_CALL;
			blk_walk_push(d, nip + e->size);
			x->kind = HWT_BCX_INDIRECT;
			return 1;

		case HWT_BCQ_RETURN:
			block->iclass = HWT_IC_RETURN;
			x->kind = HWT_BCX_RETURN;
			return 1;

		case HWT_BCQ_INDIRECT:
			/* (The entry keeps the class libipt's cache does not:
			 * its callers need not walk the block to learn it.) */
			block->iclass = e->iclass;
			x->kind = HWT_BCX_INDIRECT;
			return 1;

		default:
			return -HWT_ERR_INTERNAL;
		}

		/* HWT_BCQ_AGAIN: on at @ip. */
		e = bc_find(slots, mask, ip);
		if (!e) {
			block->ninsn = ninsn;
			d->ip = ip;
			return blk_fill_cache(d, block);
		}
		if (e->sec != sec_idx) {
			sec = hwt_bcache_secof(bc, e);
			if (sec->delta != d->blk_sec_delta ||
			    sec->end != d->blk_sec_end)
				break;
			sec_idx = e->sec;
		}
	}

	/* The block is full or leaves its section at @ip. */
	block->ninsn = ninsn;
	d->ip = ip;
	return 1;
}

/* Make a graph node of the walk from @ip that made @block and ended at
 * @x. Returns its index or HWT_BC_NO_NODE. */
static uint32_t blk_record(struct hwt_blk_decoder *d, uint64_t ip,
			   const struct hwt_block *block,
			   const struct blk_exit *x)
{
	struct hwt_bc_node node;

	if (d->nrec > BLK_REC_MAX)
		return HWT_BC_NO_NODE;

	memset(&node, 0, sizeof(node));
	node.ip = ip;
	node.end_ip = block->end_ip;
	node.ninsn = block->ninsn;
	node.mode = block->mode;
	node.iclass = block->iclass;
	node.size = block->size;
	node.exit = x->kind;
	node.target = x->target;
	node.next = x->kind == HWT_BCX_NONE ? d->ip : x->next;
	node.loc = blk_afl_loc(ip);
	node.op = (uint8_t) (x->kind | (d->nrec ? HWT_BCO_PUSH : 0) |
			     (blk_node_runs_on(x->kind, block->iclass) ?
			      HWT_BCO_RUNS_ON : 0));
	if (d->teller.ops) {
		/* Named while the image maps its code as it ran. */
		struct hwt_block b;
		int err;

		hwt_bcache_node_block(&node, &b);
		err = d->teller.ops->node(d->teller.ctx, d->image, &b);
		if (err < 0) {
			if (!d->teller.err)
				d->teller.err = err;
			return HWT_BC_NO_NODE;
		}
		d->bcache.tally_image = hwt_image_id(d->image);
	}
	return hwt_bcache_node_add(&d->bcache, &node, d->rec, d->nrec);
}

/*
 * What blk_walk_cached() did from @n->ip, again: the pushes, the block and
 * @d->ip; then the exit. (@d->blk_sec_* are not set: they are only read
 * while the block that sets them is being made.)
 */
static inline __attribute__((always_inline)) int
blk_replay(struct hwt_blk_decoder *d, struct hwt_block *block,
	   const struct hwt_bc_node *n)
{
	if (__builtin_expect(n->npush != 0, 0)) {
		const uint64_t *p = &d->bcache.pushes[n->push];

		for (unsigned k = 0; k < n->npush; ++k)
			retstack_push(&d->retstack, p[k]);
	}
	block->ninsn = n->ninsn;
	block->end_ip = n->end_ip;
	block->size = n->size;
	block->mode = n->mode;
	block->iclass = n->iclass;
	if (n->exit == HWT_BCX_NONE) {
		d->ip = n->next;
		return 0;
	}
	d->ip = n->end_ip;
	return blk_take_exit(d, n->exit, n->target, n->next, 1);
}

/* The walk from @d->ip, recorded in the graph where it can be. */
static int blk_walk_record(struct hwt_blk_decoder *d, struct hwt_block *block)
{
	uint64_t ip = d->ip;
	struct blk_exit x;
	int status;

	d->nrec = 0;
	status = blk_walk_cached(d, block, &x);
	if (status <= 0)
		return status;
	if (d->use_graph)
		(void) blk_record(d, ip, block, &x);
	return blk_take_exit(d, x.kind, x.target, x.next, 1);
}

static int blk_proceed_no_event_cached(struct hwt_blk_decoder *d,
				       struct hwt_block *block)
{
	blk_cache_check(d);
	if (d->use_graph) {
		uint32_t n = hwt_bcache_node_find(&d->bcache, d->ip);

		if (n != HWT_BC_NO_NODE)
			return blk_replay(d, block, &d->bcache.nodes[n]);
	}
	return blk_walk_record(d, block);
}

static int blk_proceed_no_event(struct hwt_blk_decoder *d,
				struct hwt_block *block)
{
	if (d->use_cache)
		return blk_proceed_no_event_cached(d, block);
	return blk_proceed_no_event_uncached(d, block);
}

/* ------------------------------------------------------------------ */
/* Events                                                              */
/* ------------------------------------------------------------------ */

/*
 * An event is in progress: proceed to where it binds and indicate it. If
 * the block ends first (full, section switch, or trace needed), return
 * status without HWT_STS_EVENT_PENDING; the event waits for the next block.
 */
static int blk_proceed_event(struct hwt_blk_decoder *d,
			     struct hwt_block *block)
{
	struct hwt_event *ev = &d->event;
	struct blk_insn insn;
	uint64_t ip = 0;
	int status;

	memset(&insn, 0, sizeof(insn));
	switch (ev->type) {
	case HWT_EV_DISABLED:
		if (ev->status_update)
			break;

		status = blk_proceed_to_disabled(d, block, &insn, ev);
		if (status <= 0) {
			/* It also binds to the next branch needing trace. */
			if (status != -HWT_ERR_BAD_QUERY)
				return status;

			blk_set_disable_resume_ip(d, &insn);
		}
		break;

	case HWT_EV_ASYNC_DISABLED:
		status = blk_proceed_to_ip(d, block, &insn,
					   ev->u.async_disabled.at);
		if (status <= 0)
			return status;

		if ((d->config.qry.errata & HWT_PT_ERRATUM_SKD022) &&
		    blk_handle_skd022(d, ev))
			return blk_proceed_event(d, block);
		break;

	case HWT_EV_ASYNC_BRANCH:
		status = blk_proceed_to_ip(d, block, &insn,
					   ev->u.async_branch.from);
		if (status <= 0)
			return status;
		break;

	case HWT_EV_PAGING:
		if (!d->enabled)
			break;

		status = blk_proceed_to_insn(d, block, &insn,
					     insn_binds_to_pip);
		if (status <= 0)
			return status;

		d->bound_paging = 1;
		return blk_postpone_insn(d, &insn);

	case HWT_EV_VMCS:
		if (!d->enabled)
			break;

		status = blk_proceed_to_insn(d, block, &insn,
					     insn_binds_to_vmcs);
		if (status <= 0)
			return status;

		d->bound_vmcs = 1;
		return blk_postpone_insn(d, &insn);

	case HWT_EV_PTWRITE:
		if (!d->enabled)
			break;

		status = blk_proceed_to_kind(d, block, &insn, ev,
					     &ev->u.ptwrite.ip,
					     insn_is_ptwrite);
		if (status <= 0)
			return status;

		d->bound_ptwrite = 1;
		return blk_postpone_insn(d, &insn);

	case HWT_EV_IRET:
		if (!d->enabled)
			break;

		status = blk_proceed_to_kind(d, block, &insn, ev,
					     &ev->u.iret.ip, insn_is_iret);
		if (status <= 0)
			return status;

		d->bound_iret = 1;
		return blk_postpone_insn(d, &insn);

	case HWT_EV_VMENTRY:
		if (!d->enabled)
			break;

		status = blk_proceed_to_kind(d, block, &insn, ev,
					     &ev->u.vmentry.ip,
					     insn_is_vmentry);
		if (status <= 0)
			return status;

		d->bound_vmentry = 1;
		return blk_postpone_insn(d, &insn);

	case HWT_EV_UIRET:
		if (!d->enabled)
			break;

		status = blk_proceed_to_kind(d, block, &insn, ev,
					     &ev->u.uiret.ip, insn_is_uiret);
		if (status <= 0)
			return status;

		d->bound_uiret = 1;
		return blk_postpone_insn(d, &insn);

	case HWT_EV_EXSTOP:
	case HWT_EV_MWAIT:
		if (!d->enabled || ev->ip_suppressed)
			break;

		ip = ev->type == HWT_EV_EXSTOP ? ev->u.exstop.ip :
						 ev->u.mwait.ip;
		status = blk_proceed_to_ip(d, block, &insn, ip);
		if (status <= 0)
			return status;
		break;

	case HWT_EV_ASYNC_PAGING:
	case HWT_EV_ASYNC_VMCS:
	case HWT_EV_EXEC_MODE:
	case HWT_EV_TSX:
	case HWT_EV_IFLAGS:
	case HWT_EV_INTERRUPT:
	case HWT_EV_SMI:
	case HWT_EV_INIT:
	case HWT_EV_VMEXIT:
	case HWT_EV_SHUTDOWN:
	case HWT_EV_UINTR:
		if (ev->ip_suppressed)
			break;

		switch (ev->type) {
		case HWT_EV_ASYNC_PAGING: ip = ev->u.async_paging.ip; break;
		case HWT_EV_ASYNC_VMCS: ip = ev->u.async_vmcs.ip; break;
		case HWT_EV_EXEC_MODE: ip = ev->u.exec_mode.ip; break;
		case HWT_EV_TSX: ip = ev->u.tsx.ip; break;
		case HWT_EV_IFLAGS: ip = ev->u.iflags.ip; break;
		case HWT_EV_INTERRUPT: ip = ev->u.interrupt.ip; break;
		case HWT_EV_SMI: ip = ev->u.smi.ip; break;
		case HWT_EV_INIT: ip = ev->u.init.ip; break;
		case HWT_EV_VMEXIT: ip = ev->u.vmexit.ip; break;
		case HWT_EV_SHUTDOWN: ip = ev->u.shutdown.ip; break;
		default: ip = ev->u.uintr.ip; break;
		}

		status = blk_proceed_to_ip(d, block, &insn, ip);
		if (status <= 0)
			return status;
		break;

	case HWT_EV_ENABLED:
		/*
		 * A PSB+ while tracing: the flow reaches its IP before what
		 * comes after the PSB. A block ends there, as it does for the
		 * PSB+'s MODE.Exec: a piece of a trace cut at this PSB ends
		 * at the block starting there (hwt_blk_end_block()), and a
		 * PSB+ need not hold a MODE.Exec.
		 */
		if (!ev->status_update || !d->enabled || ev->ip_suppressed)
			break;
		status = blk_proceed_to_ip(d, block, &insn,
					   ev->u.enabled.ip);
		if (status <= 0)
			return status;
		break;

	case HWT_EV_TIP:
	case HWT_EV_TNT:
		return -HWT_ERR_INTERNAL;

	default:
		/* overflow, stop, pwre, pwrx, tick, cbr, mnt, rsm, sipi:
		 * they bind to no instruction. */
		break;
	}

	return blk_status(d, HWT_STS_EVENT_PENDING);
}

/* BDM64: the branch before a TSX abort may have produced corrupt trace.
 * Returns 1 if handled, 0 if it seems not to apply, or an error. */
static int blk_handle_bdm64(struct hwt_blk_decoder *d,
			    const struct hwt_block *block,
			    const struct hwt_event *ev)
{
	struct blk_insn insn;
	int status;

	if (!ev->u.tsx.aborted || !block->ninsn)
		return 0;

	if (blk_decode(d->image, block->end_ip, block->mode, &insn) < 0)
		return 0;
	if (!insn_is_branch(&insn))
		return 0;

	status = blk_range_is_contiguous(d, d->ip, ev->u.tsx.ip,
					 BLK_BDM64_STEPS);
	if (status > 0)
		return status;

	d->ip = ev->u.tsx.ip;
	return 1;
}

static int blk_postpone_trailing_tsx(struct hwt_blk_decoder *d,
				     const struct hwt_block *block,
				     const struct hwt_event *ev)
{
	if (ev->ip_suppressed)
		return 0;

	if (block && (d->config.qry.errata & HWT_PT_ERRATUM_BDM64) &&
	    blk_handle_bdm64(d, block, ev) < 0)
		return 1;

	return d->ip != ev->u.tsx.ip;
}

/* The IP an event binds to, for events that bind to an IP if they have
 * one and tracing is enabled. */
static int blk_event_ip(const struct hwt_event *ev, uint64_t *ip)
{
	switch (ev->type) {
	case HWT_EV_EXSTOP: *ip = ev->u.exstop.ip; return 1;
	case HWT_EV_MWAIT: *ip = ev->u.mwait.ip; return 1;
	case HWT_EV_IFLAGS: *ip = ev->u.iflags.ip; return 1;
	case HWT_EV_INTERRUPT: *ip = ev->u.interrupt.ip; return 1;
	case HWT_EV_SMI: *ip = ev->u.smi.ip; return 1;
	case HWT_EV_INIT: *ip = ev->u.init.ip; return 1;
	case HWT_EV_VMEXIT: *ip = ev->u.vmexit.ip; return 1;
	case HWT_EV_SHUTDOWN: *ip = ev->u.shutdown.ip; return 1;
	case HWT_EV_UINTR: *ip = ev->u.uintr.ip; return 1;
	default: return 0;
	}
}

/*
 * After a block, after an event and after synchronising: is there an event
 * at the current IP to indicate? If not, proceed past any postponed
 * instruction. @block: the block just ended, or NULL.
 */
int hwt_blk_trailing_event_(struct hwt_blk_decoder *d,
			    struct hwt_block *block)
{
	struct hwt_event *ev = &d->event;
	uint64_t ip = 0;
	int status;

	status = blk_fetch_event(d);
	if (status < 0) {
		/* Report it when the user asks for the event. */
		d->deferred = status;
		status = blk_proceed_postponed_insn(d);
		if (status < 0)
			return status;
		return blk_status(d, HWT_STS_EVENT_PENDING);
	}
	if (!status)
		goto no_event;

	switch (ev->type) {
	case HWT_EV_DISABLED:
		if (!d->process_insn)
			break;

		/* A sync disable may bind to a CR3-changing instruction ... */
		if (ev->ip_suppressed && insn_changes_cr3(&d->insn))
			return blk_status(d, HWT_STS_EVENT_PENDING);

		/* ... or to the next branch that needs trace. */
		status = insn_next_ip(&d->ip, &d->insn);
		if (status < 0) {
			if (status != -HWT_ERR_BAD_QUERY)
				return status;

			blk_set_disable_resume_ip(d, &d->insn);
			return blk_status(d, HWT_STS_EVENT_PENDING);
		}

		blk_clear_postponed_insn(d);
		if (!ev->ip_suppressed && d->ip == ev->u.disabled.ip)
			return blk_status(d, HWT_STS_EVENT_PENDING);
		break;

	case HWT_EV_ASYNC_DISABLED:
		status = blk_proceed_postponed_insn(d);
		if (status < 0)
			return status;

		if (d->ip != ev->u.async_disabled.at)
			break;

		/* With SKD022 the event became a sync disable: it is
		 * processed on the next block. */
		if ((d->config.qry.errata & HWT_PT_ERRATUM_SKD022) &&
		    blk_handle_skd022(d, ev))
			break;

		return blk_status(d, HWT_STS_EVENT_PENDING);

	case HWT_EV_ASYNC_BRANCH:
		status = blk_proceed_postponed_insn(d);
		if (status < 0)
			return status;

		if (d->ip != ev->u.async_branch.from)
			break;

		return blk_status(d, HWT_STS_EVENT_PENDING);

	case HWT_EV_PAGING:
	case HWT_EV_VMCS:
		if (!d->enabled)
			return blk_status(d, HWT_STS_EVENT_PENDING);

		/* Normally indicated on the event flow, unless it binds to
		 * the instruction a previous event bound to (one each). */
		if (!d->process_insn)
			break;

		if (ev->type == HWT_EV_PAGING) {
			if (d->bound_paging || !insn_binds_to_pip(&d->insn))
				break;
			d->bound_paging = 1;
		} else {
			if (d->bound_vmcs || !insn_binds_to_vmcs(&d->insn))
				break;
			d->bound_vmcs = 1;
		}
		return blk_status(d, HWT_STS_EVENT_PENDING);

	case HWT_EV_PTWRITE:
	case HWT_EV_IRET:
	case HWT_EV_VMENTRY:
	case HWT_EV_UIRET: {
		uint8_t *bound;
		int binds;

		if (!d->enabled)
			return blk_status(d, HWT_STS_EVENT_PENDING);

		switch (ev->type) {
		case HWT_EV_PTWRITE:
			bound = &d->bound_ptwrite;
			binds = insn_is_ptwrite(&d->insn);
			break;
		case HWT_EV_IRET:
			bound = &d->bound_iret;
			binds = insn_is_iret(&d->insn);
			break;
		case HWT_EV_VMENTRY:
			bound = &d->bound_vmentry;
			binds = insn_is_vmentry(&d->insn);
			break;
		default:
			bound = &d->bound_uiret;
			binds = insn_is_uiret(&d->insn);
			break;
		}

		if (!d->process_insn || *bound || !ev->ip_suppressed || !binds)
			break;

		*bound = 1;
		return blk_status(d, HWT_STS_EVENT_PENDING);
	}

	case HWT_EV_ASYNC_PAGING:
	case HWT_EV_ASYNC_VMCS:
		status = blk_proceed_postponed_insn(d);
		if (status < 0)
			return status;

		ip = ev->type == HWT_EV_ASYNC_PAGING ? ev->u.async_paging.ip :
						       ev->u.async_vmcs.ip;
		if (!ev->ip_suppressed && d->ip != ip)
			break;

		return blk_status(d, HWT_STS_EVENT_PENDING);

	case HWT_EV_EXEC_MODE:
		status = blk_proceed_postponed_insn(d);
		if (status < 0)
			return status;

		/* With event trace, MODE.Exec may come while disabled. */
		if (!d->enabled)
			return blk_status(d, HWT_STS_EVENT_PENDING);

		if (!ev->ip_suppressed && d->ip != ev->u.exec_mode.ip)
			break;

		return blk_status(d, HWT_STS_EVENT_PENDING);

	case HWT_EV_TSX:
		status = blk_proceed_postponed_insn(d);
		if (status < 0)
			return status;

		if (blk_postpone_trailing_tsx(d, block, ev))
			break;

		return blk_status(d, HWT_STS_EVENT_PENDING);

	case HWT_EV_EXSTOP:
	case HWT_EV_MWAIT:
	case HWT_EV_IFLAGS:
	case HWT_EV_INTERRUPT:
	case HWT_EV_SMI:
	case HWT_EV_INIT:
	case HWT_EV_VMEXIT:
	case HWT_EV_SHUTDOWN:
	case HWT_EV_UINTR:
		status = blk_proceed_postponed_insn(d);
		if (status < 0)
			return status;

		(void) blk_event_ip(ev, &ip);
		if (!ev->ip_suppressed && d->enabled && d->ip != ip)
			break;

		return blk_status(d, HWT_STS_EVENT_PENDING);

	case HWT_EV_RSM:
	case HWT_EV_SIPI:
		status = blk_proceed_postponed_insn(d);
		if (status < 0)
			return status;

		if (!ev->ip_suppressed)
			return -HWT_ERR_INTERNAL;

		return blk_status(d, HWT_STS_EVENT_PENDING);

	case HWT_EV_ENABLED:
		status = blk_proceed_postponed_insn(d);
		if (status < 0)
			return status;

		/* A PSB+ while tracing binds to its IP (blk_proceed_event). */
		if (ev->status_update && d->enabled && !ev->ip_suppressed &&
		    d->ip != ev->u.enabled.ip)
			break;

		return blk_status(d, HWT_STS_EVENT_PENDING);

	case HWT_EV_TIP:
	case HWT_EV_TNT:
		return -HWT_ERR_INTERNAL;

	default:
		/* overflow, stop, pwre, pwrx, tick, cbr, mnt: they bind to
		 * no instruction. */
		status = blk_proceed_postponed_insn(d);
		if (status < 0)
			return status;

		return blk_status(d, HWT_STS_EVENT_PENDING);
	}

no_event:
	status = blk_proceed_postponed_insn(d);
	if (status < 0)
		return status;

	return blk_status(d, 0);
}

static int blk_proceed(struct hwt_blk_decoder *d, struct hwt_block *block)
{
	int status;

	status = blk_fetch_event(d);
	if (status < 0)
		return status;
	if (status)
		return blk_proceed_event(d, block);

	if (!d->enabled)
		return (d->status & HWT_STS_EOS) ? -HWT_ERR_EOS :
						   -HWT_ERR_NO_ENABLE;

	status = blk_proceed_no_event(d, block);
	if (status < 0)
		return status;

	return blk_after_block(d, block);
}

/* ------------------------------------------------------------------ */
/* Public API                                                          */
/* ------------------------------------------------------------------ */

void hwt_blk_config_init(struct hwt_blk_config *config)
{
	if (!config)
		return;

	memset(config, 0, sizeof(*config));
	hwt_qry_config_init(&config->qry);
}

/* The query decoder of a block decoder configured with @config. */
static struct hwt_qry_decoder *blk_qry_new(const struct hwt_qry_config *config)
{
	struct hwt_qry_config qcfg = *config;

	/* Ticks are synthesized here from the query layer's time. */
	qcfg.flags &= ~HWT_QRY_TICK;
	return hwt_qry_new(&qcfg);
}

struct hwt_blk_decoder *hwt_blk_new(const struct hwt_blk_config *config,
				    struct hwt_image *image)
{
	struct hwt_blk_decoder *d;
	int n;

	if (!config || !image)
		return NULL;

	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;

	d->config = *config;
	d->image = image;
	d->use_cache = !(config->flags & HWT_BLK_NO_CACHE);
	d->use_graph = d->use_cache && !(config->flags & HWT_BLK_NO_GRAPH);
	for (n = 0; n < 4; ++n)
		if (config->qry.addr_filter[n].cfg)
			d->filter = 1;

	d->qry = blk_qry_new(&config->qry);
	if (!d->qry)
		goto fail;

	if (hwt_bcache_init(&d->bcache) < 0)
		goto fail;
	d->bcache.teller = &d->teller;

	d->status = 0;
	return d;

fail:
	hwt_qry_delete(d->qry);
	free(d);
	return NULL;
}

int hwt_blk_set_trace(struct hwt_blk_decoder *d, const uint8_t *begin,
		      const uint8_t *end)
{
	struct hwt_qry_config qcfg;
	struct hwt_qry_decoder *qry;

	if (!d || !begin || end < begin)
		return -HWT_ERR_INVALID;
	qcfg = d->config.qry;
	qcfg.begin = begin;
	qcfg.end = end;
	qry = blk_qry_new(&qcfg);
	if (!qry)
		return -HWT_ERR_NOMEM;
	hwt_qry_delete(d->qry);
	d->qry = qry;
	d->config.qry = qcfg;
	d->have_seed = 0;
	memset(&d->ip, 0, offsetof(struct hwt_blk_decoder, retstack) +
				  sizeof(d->retstack) -
				  offsetof(struct hwt_blk_decoder, ip));
	return 0;
}

void hwt_blk_delete(struct hwt_blk_decoder *d)
{
	if (!d)
		return;

	hwt_bcache_fini(&d->bcache);
	for (uint32_t i = 0; i < d->nkept; ++i)
		hwt_bcache_fini(&d->kept[i].bcache);
	hwt_qry_delete(d->qry);
	free(d);
}

/* A kept cache's key: the image (by id: the image may be deleted, and
 * another made at its address, while its cache is kept) and the mode. */
static uint64_t blk_kept_key(const struct hwt_image *image, unsigned mode)
{
	return hwt_image_id(image) << 2 | (mode & 3);
}

/* The kept cache of @key, or NULL. */
static struct blk_kept *blk_kept_find(struct hwt_blk_decoder *d,
				      uint64_t key)
{
	for (uint32_t i = 0; i < d->nkept; ++i)
		if (d->kept[i].key == key)
			return &d->kept[i];
	return NULL;
}

static void blk_kept_drop(struct hwt_blk_decoder *d, struct blk_kept *k)
{
	hwt_bcache_fini(&k->bcache);
	*k = d->kept[--d->nkept];
}

/* A place for a new image's cache: a fresh one, or the one used least
 * recently, started over (so its memory is given back). */
static struct blk_kept *blk_kept_new(struct hwt_blk_decoder *d)
{
	struct blk_kept *k = &d->kept[0];

	if (d->nkept < HWT_BLK_KEPT_IMAGES) {
		k = &d->kept[d->nkept];
		if (hwt_bcache_init(&k->bcache) < 0)
			return NULL;
		k->bcache.teller = &d->teller;
		d->nkept++;
		return k;
	}
	for (uint32_t i = 1; i < d->nkept; ++i)
		if (d->kept[i].used < k->used)
			k = &d->kept[i];
	blk_kept_drop(d, k);
	return blk_kept_new(d);
}

/*
 * Make the kept cache of @image's code in @mode the decoder's, keeping
 * the decoder's (0), or -HWT_ERR_NOMEM (nothing changed).
 */
static int blk_cache_swap(struct hwt_blk_decoder *d,
			  const struct hwt_image *image, unsigned mode)
{
	struct hwt_bcache left;
	struct blk_kept *k;
	int fresh = 0;

	k = blk_kept_find(d, blk_kept_key(image, mode));
	if (!k) {
		k = blk_kept_new(d);
		fresh = 1;
	}
	if (!k)
		return -HWT_ERR_NOMEM;
	/* Nothing outside the cache points into it between calls (runs
	 * find their node from the IP), so it moves as a whole. */
	left = d->bcache;
	d->bcache = k->bcache;
	k->bcache = left;
	k->key = blk_kept_key(d->image, left.mode);
	k->used = ++d->switches;
	if (fresh) {
		d->bcache.mode = (uint8_t) mode;
		/* A process seen first on this CPU starts with what the one
		 * before it decoded of the files both map (libc, the loader,
		 * the program itself after a fork), moved where it maps
		 * them. */
		if (left.mode == mode && left.used) {
			hwt_bcache_carry(&d->bcache, &k->bcache, image);
			d->bcache.generation = hwt_image_generation(image);
			d->bcache.image_id = hwt_image_id(image);
		}
	}
	return 0;
}

int hwt_blk_set_image(struct hwt_blk_decoder *d, struct hwt_image *image)
{
	int err;

	if (!d || !image)
		return -HWT_ERR_INVALID;
	if (image == d->image)
		return 0;
	if (d->bcache.carry) {
		/* (Released: the cache is the next image's to carry.) */
		d->image = image;
		return 0;
	}
	err = blk_cache_swap(d, image, d->mode);
	if (err < 0)
		return err;
	d->image = image;
	return 0;
}

void hwt_blk_cache_mode_(struct hwt_blk_decoder *d)
{
	const struct hwt_bcache *bc = &d->bcache;

	/* An empty cache is anyone's (a new decoder's, before its first
	 * mode), unless one is kept for the mode; out of memory, this one
	 * starts over. */
	if ((bc->used || bc->nnodes ||
	     blk_kept_find(d, blk_kept_key(d->image, d->mode))) &&
	    blk_cache_swap(d, d->image, d->mode) == 0)
		return;
	hwt_bcache_clear(&d->bcache);
	d->bcache.mode = d->mode;
}

int hwt_blk_tally(struct hwt_blk_decoder *d,
		  const struct hwt_blk_tally_ops *ops, void *ctx)
{
	int err;

	if (!d || (ops && (!ops->node || !ops->count)))
		return -HWT_ERR_INVALID;
	err = hwt_blk_tally_flush(d);
	if (ops && ops == d->teller.ops && ctx == d->teller.ctx)
		return err;
	/* Nodes named to another, or to none, are made again. */
	hwt_bcache_graph_clear(&d->bcache);
	for (uint32_t i = 0; i < d->nkept; ++i)
		hwt_bcache_graph_clear(&d->kept[i].bcache);
	d->teller.ops = ops;
	d->teller.ctx = ctx;
	d->teller.err = 0;
	return err;
}

int hwt_blk_tally_flush(struct hwt_blk_decoder *d)
{
	int err;

	if (!d)
		return -HWT_ERR_INVALID;
	hwt_bcache_tell(&d->bcache);
	for (uint32_t i = 0; i < d->nkept; ++i)
		hwt_bcache_tell(&d->kept[i].bcache);
	err = d->teller.err;
	d->teller.err = 0;
	return err;
}

struct hwt_image *hwt_blk_image(const struct hwt_blk_decoder *d)
{
	return d ? d->image : NULL;
}

void hwt_blk_cache_changed_(struct hwt_blk_decoder *d, uint64_t gen)
{
	struct hwt_bcache *bc = &d->bcache;
	uint64_t id = hwt_image_id(d->image);

	/* (A cache made of another image's code is that image's, unless
	 * that one is gone.) */
	if (bc->image_id == id || bc->carry)
		hwt_bcache_carry(bc, bc, d->image);
	else
		hwt_bcache_clear(bc);
	bc->generation = gen;
	bc->image_id = id;
	bc->carry = 0;
}

void hwt_blk_release_image(struct hwt_blk_decoder *d)
{
	if (!d)
		return;
	while (d->nkept)
		blk_kept_drop(d, &d->kept[d->nkept - 1]);
	/* (Generation 0 is never an image's: the next check carries.) */
	d->bcache.generation = 0;
	d->bcache.carry = 1;
	d->image = NULL;
}

int hwt_blk_forget_image(struct hwt_blk_decoder *d,
			 const struct hwt_image *image)
{
	struct blk_kept *k;

	if (!d || !image || image == d->image)
		return -HWT_ERR_INVALID;
	for (unsigned mode = 0; mode < 4; mode++) {
		k = blk_kept_find(d, blk_kept_key(image, mode));
		if (k)
			blk_kept_drop(d, k);
	}
	return 0;
}

static void blk_reset(struct hwt_blk_decoder *d)
{
	d->ip = 0;
	d->status = 0;
	d->deferred = 0;
	d->mode = HWT_MODE_UNKNOWN;
	d->enabled = 0;
	d->speculative = 0;
	if (d->have_seed) {
		d->mode = d->seed.mode;
		d->speculative = d->seed.speculative;
		d->have_seed = 0;
	}
	d->process_event = 0;
	blk_clear_postponed_insn(d);
	d->tsc = 0;
	d->cbr = 0;
	d->cr3 = 0;
	d->vmcs = 0;
	memset(&d->event, 0, sizeof(d->event));
	retstack_init(&d->retstack);
}

static int blk_start(struct hwt_blk_decoder *d, int status, uint64_t ip)
{
	if (status < 0)
		return status;

	d->status = status;
	if (!(status & HWT_STS_IP_SUPPRESSED)) {
		d->enabled = 1;
		d->ip = ip;
	}

	/* Indicate events that precede the first instruction. */
	return hwt_blk_trailing_event_(d, NULL);
}

int hwt_blk_sync_forward(struct hwt_blk_decoder *d)
{
	uint64_t ip = 0;
	int status;

	if (!d)
		return -HWT_ERR_INVALID;

	blk_reset(d);
	status = hwt_qry_sync_forward(d->qry, &ip);
	return blk_start(d, status, ip);
}

int hwt_blk_sync_backward(struct hwt_blk_decoder *d)
{
	uint64_t ip = 0;
	int status;

	if (!d)
		return -HWT_ERR_INVALID;

	blk_reset(d);
	status = hwt_qry_sync_backward(d->qry, &ip);
	return blk_start(d, status, ip);
}

int hwt_blk_sync_set(struct hwt_blk_decoder *d, uint64_t offset)
{
	uint64_t ip = 0;
	int status;

	if (!d)
		return -HWT_ERR_INVALID;

	blk_reset(d);
	status = hwt_qry_sync_set(d->qry, &ip, offset);
	return blk_start(d, status, ip);
}

int hwt_blk_get_offset(const struct hwt_blk_decoder *d, uint64_t *offset)
{
	if (!d || !offset)
		return -HWT_ERR_INVALID;

	return hwt_qry_get_offset(d->qry, offset);
}

int hwt_blk_get_sync_offset(const struct hwt_blk_decoder *d,
			    uint64_t *offset)
{
	if (!d || !offset)
		return -HWT_ERR_INVALID;

	return hwt_qry_get_sync_offset(d->qry, offset);
}

int hwt_blk_get_ip(const struct hwt_blk_decoder *d, uint64_t *ip)
{
	if (!d || !ip)
		return -HWT_ERR_INVALID;

	*ip = d->ip;
	return 0;
}

int hwt_blk_get_state(const struct hwt_blk_decoder *d,
		      struct hwt_blk_state *st)
{
	if (!d || !st)
		return -HWT_ERR_INVALID;

	memset(st, 0, sizeof(*st));
	st->mode = d->mode;
	st->speculative = d->speculative;
	st->exec_valid = hwt_qry_get_exec(d->qry, &st->exec) > 0;
	if (!st->exec_valid)
		st->exec = 0;
	return 0;
}

void hwt_blk_state_seed(struct hwt_blk_decoder *d,
			const struct hwt_blk_state *st)
{
	if (!d || !st)
		return;
	d->seed = *st;
	d->have_seed = 1;
	hwt_qry_exec_seed(d->qry, st->exec_valid, st->exec);
}

int hwt_blk_time(const struct hwt_blk_decoder *d, uint64_t *tsc,
		 uint32_t *lost_mtc, uint32_t *lost_cyc)
{
	if (!d || !tsc)
		return -HWT_ERR_INVALID;

	return hwt_qry_time(d->qry, tsc, lost_mtc, lost_cyc);
}

int hwt_blk_core_bus_ratio(const struct hwt_blk_decoder *d, uint32_t *cbr)
{
	if (!d || !cbr)
		return -HWT_ERR_INVALID;

	return hwt_qry_core_bus_ratio(d->qry, cbr);
}

void hwt_blk_time_seed(struct hwt_blk_decoder *d,
		       const struct hwt_time_tracker *tt)
{
	hwt_qry_time_seed(d->qry, tt);
}

void hwt_blk_time_watch(struct hwt_blk_decoder *d, uint64_t offset)
{
	hwt_qry_time_watch(d->qry, offset);
}

int hwt_blk_time_watched(const struct hwt_blk_decoder *d,
			 struct hwt_time_tracker *tt)
{
	return hwt_qry_time_watched(d->qry, tt);
}

static inline void blk_begin(const struct hwt_blk_decoder *d,
			     struct hwt_block *block)
{
	memset(block, 0, sizeof(*block));
	block->ip = d->ip;
	block->mode = d->mode;
	block->speculative = d->speculative;
}

int hwt_blk_next(struct hwt_blk_decoder *d, struct hwt_block *block)
{
	int err;

	if (!d || !block)
		return -HWT_ERR_INVALID;

	blk_begin(d, block);
	if (d->deferred) {
		err = d->deferred;
		d->deferred = 0;
		return err;
	}

	return blk_proceed(d, block);
}

static int blk_process_event(struct hwt_blk_decoder *d, struct hwt_event *ev)
{
	/* A PSB+'s first status update: tracing on or off there. */
	if (ev->status_update && (d->config.flags & HWT_BLK_PSB_CLEARS_STACK) &&
	    (ev->type == HWT_EV_ENABLED || ev->type == HWT_EV_DISABLED))
		retstack_init(&d->retstack);

	switch (ev->type) {
	case HWT_EV_ENABLED:
		/* Tracing resumes where it was disabled (after a call: at
		 * its return). */
		if (ev->u.enabled.ip == d->ip)
			ev->u.enabled.resumed = 1;

		if (ev->status_update)
			return d->enabled ? 0 : -HWT_ERR_BAD_CONTEXT;
		if (ev->ip_suppressed)
			return -HWT_ERR_NOIP;
		if (d->enabled)
			return -HWT_ERR_BAD_CONTEXT;

		d->ip = ev->u.enabled.ip;
		d->enabled = 1;
		return 0;

	case HWT_EV_ASYNC_DISABLED:
		if (d->ip != ev->u.async_disabled.at)
			return -HWT_ERR_BAD_QUERY;
		/* fall through */
	case HWT_EV_DISABLED:
		if (ev->status_update)
			return d->enabled ? -HWT_ERR_BAD_CONTEXT : 0;
		if (!d->enabled)
			return -HWT_ERR_BAD_CONTEXT;

		/* Keep @d->ip: where we expect tracing to resume. */
		d->enabled = 0;
		return 0;

	case HWT_EV_ASYNC_BRANCH:
		if (d->ip != ev->u.async_branch.from)
			return -HWT_ERR_BAD_QUERY;
		if (ev->status_update || !d->enabled)
			return -HWT_ERR_BAD_CONTEXT;

		d->ip = ev->u.async_branch.to;
		return 0;

	case HWT_EV_ASYNC_PAGING:
		if (!ev->ip_suppressed && d->ip != ev->u.async_paging.ip)
			return -HWT_ERR_BAD_QUERY;
		/* fall through */
	case HWT_EV_PAGING:
		d->cr3 = ev->u.paging.cr3;
		return 0;

	case HWT_EV_ASYNC_VMCS:
		if (!ev->ip_suppressed && d->ip != ev->u.async_vmcs.ip)
			return -HWT_ERR_BAD_QUERY;
		/* fall through */
	case HWT_EV_VMCS:
		d->vmcs = ev->u.vmcs.base;
		return 0;

	case HWT_EV_OVERFLOW:
		if (ev->status_update)
			return -HWT_ERR_BAD_CONTEXT;

		/* A suppressed IP: the overflow resolved while disabled; the
		 * old IP would only mislead. */
		if (ev->ip_suppressed) {
			d->enabled = 0;
			d->ip = 0;
		} else {
			d->enabled = 1;
			d->ip = ev->u.overflow.ip;
		}
		/* TSX state is unknown: assume normal execution. */
		d->speculative = 0;
		return 0;

	case HWT_EV_EXEC_MODE:
		if (d->enabled && !ev->ip_suppressed &&
		    d->ip != ev->u.exec_mode.ip)
			return -HWT_ERR_BAD_QUERY;
		if (ev->status_update && d->enabled &&
		    d->mode != HWT_MODE_UNKNOWN &&
		    d->mode != ev->u.exec_mode.mode)
			return -HWT_ERR_BAD_CONTEXT;

		d->mode = ev->u.exec_mode.mode;
		return 0;

	case HWT_EV_TSX:
		if (!ev->ip_suppressed && d->ip != ev->u.tsx.ip)
			return -HWT_ERR_BAD_QUERY;

		d->speculative = ev->u.tsx.speculative;
		return 0;

	case HWT_EV_STOP:
		if (ev->status_update || d->enabled)
			return -HWT_ERR_BAD_CONTEXT;
		return 0;

	case HWT_EV_CBR:
		d->cbr = ev->u.cbr.ratio;
		return 0;

	case HWT_EV_EXSTOP:
	case HWT_EV_MWAIT:
	case HWT_EV_IFLAGS:
	case HWT_EV_INTERRUPT:
	case HWT_EV_SMI:
	case HWT_EV_INIT:
	case HWT_EV_VMEXIT:
	case HWT_EV_SHUTDOWN:
	case HWT_EV_UINTR: {
		uint64_t ip = 0;

		(void) blk_event_ip(ev, &ip);
		if (!ev->ip_suppressed && d->enabled && d->ip != ip)
			return -HWT_ERR_BAD_QUERY;
		return 0;
	}

	case HWT_EV_RSM:
	case HWT_EV_SIPI:
		return ev->ip_suppressed ? 0 : -HWT_ERR_INTERNAL;

	case HWT_EV_TIP:
	case HWT_EV_TNT:
		return -HWT_ERR_BAD_QUERY;

	default:
		/* pwre, pwrx, ptwrite, tick, mnt, iret, vmentry, uiret */
		return 0;
	}
}

int hwt_blk_event(struct hwt_blk_decoder *d, struct hwt_event *event)
{
	int err;

	if (!d || !event)
		return -HWT_ERR_INVALID;

	if (d->deferred) {
		err = d->deferred;
		d->deferred = 0;
		return err;
	}

	if (!d->process_event)
		return -HWT_ERR_BAD_QUERY;

	err = blk_process_event(d, &d->event);
	if (err < 0)
		return err;

	*event = d->event;
	d->process_event = 0;
	d->tsc = event->tsc;

	return hwt_blk_trailing_event_(d, NULL);
}

int hwt_blk_insn_walk(const struct hwt_image *image, unsigned mode,
		      uint64_t *ip, struct hwt_insn *insn)
{
	struct blk_insn bi;
	const uint8_t *code;
	size_t avail;
	int err;

	if (!image || !ip || !insn)
		return -HWT_ERR_INVALID;

	memset(insn, 0, sizeof(*insn));
	insn->ip = *ip;
	insn->mode = (uint8_t) mode;

	err = blk_decode(image, *ip, mode, &bi);
	if (err < 0)
		return err;

	insn->size = bi.size;
	insn->iclass = bi.iclass;
	if (bi.truncated) {
		memcpy(insn->raw, bi.raw, bi.size);
	} else {
		err = hwt_image_read(image, *ip, &code, &avail);
		if (err < 0)
			return err;
		memcpy(insn->raw, code, bi.size);
	}

	if (insn_next_ip(ip, &bi) < 0)
		*ip = bi.ip + bi.size;
	return 0;
}

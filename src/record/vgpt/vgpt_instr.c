/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Instrumentation: every superblock execution appends one record to the
 * exit log (vgpt.h) with plain IR stores, no helper call.
 *
 * Chasing and loop unrolling are off, so a superblock is straight-line
 * code whose only branch instruction is its last one. Each way out (each
 * side exit, the final jump) has a static descriptor (struct vgpt_xp); the
 * record (vgpt.h) is a byte that says all a conditional branch or plain
 * jump needs, or an inline word for a call, return or indirect jump (the
 * return address or the target), or else the descriptor's address, plus
 * the target when that is only known at run time:
 *
 *   block start:  p = pos; [if (p >= limit) drain(); p = pos]
 *   side exit:    w = align8(p); if (guard) *w = desc(xp) (StoreG);
 *                 pos = guard ? w + 8 : p
 *   final jump:   *p = byte(xp); pos = p + 1
 *             or  w = align8(p); *w = inline(xp, next) or desc(xp)
 *                 [, w[1] = inline(JMP, next) or next]; pos = w + 8 or 16
 *
 * pos is the log position in the guest state (%rbp-relative). Words are
 * aligned so that the drain reads the log a word at a time without the
 * position depending on what the words held; the bytes skipped are zero
 * (the drain clears what it read).
 *
 * A side exit that ends the last instruction (a jcc), when the final jump
 * is constant, needs no guard: *p = guard ? byte(xp_side) :
 * byte(xp_final) is written once before it, and the final jump writes
 * nothing. (Guarded stores are 4 or 8 bytes wide on amd64, so the other
 * side exits write desc records.)
 *
 * The check for a full log [...] is made only by superblocks that can
 * close a loop: those with an exit to their own start or before it, or
 * to a target known only at run time. Every cycle of execution passes one
 * (along the others the start addresses grow), and the scheduler bounds
 * the rest (LOG_ROOM).
 *
 * What the last instruction is (conditional branch, call, return, ...) is
 * read from its bytes, not from VEX's jump kinds: the PT decoder classifies
 * instructions by their bytes too, and VEX expresses the same instruction
 * in several ways (a jcc exit may point at either successor; rep string
 * instructions loop by exiting to themselves).
 */
#include "vgpt.h"

#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_machine.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_threadstate.h"
#include "libvex_guest_offsets.h"

UChar *vgpt_logs[NLOGS];
UChar *vgpt_log;
UInt vgpt_log_bytes = LOG_BYTES;

/*
 * The log position lives in the guest state's first shadow area (which
 * no other part of Valgrind uses without a tool that asks for it), at
 * offset 0: one %rbp-relative load and store per superblock, no 64-bit
 * address constants. The limit (where the log is full) is at offset 8:
 * the logs take turns with the drain thread.
 */
static Int pos_off = -1;	/* its guest state offset (IR Get/Put) */

UChar *vgpt_log_get(ThreadId tid)
{
	UChar *p;

	VG_(get_shadow_regs_area)(tid, (UChar *)&p, 1, 0, sizeof(p));
	return p;
}

void vgpt_log_reset(ThreadId tid)
{
	UChar *p[2] = { vgpt_log, vgpt_log + vgpt_log_bytes };

	VG_(set_shadow_regs_area)(tid, 1, 0, sizeof(p), (const UChar *)p);
}

Int vgpt_log_index(const UChar *p)
{
	for (Int i = 0; i < NLOGS; i++)
		if (vgpt_logs[i] && p >= vgpt_logs[i] &&
		    p <= vgpt_logs[i] + LOG_ROOM)
			return i;
	return -1;
}

Long vgpt_log_used(ThreadId tid)
{
	UChar *p = vgpt_log_get(tid);

	return p >= vgpt_log && p <= vgpt_log + LOG_ROOM ? p - vgpt_log : -1;
}

static VgHashTable *sbis;	/* struct vgpt_sbi by nraddr */
Addr vgpt_xlate_ip;		/* the superblock being translated */
static Bool warned_cond_mid;

void vgpt_instr_init(void)
{
	sbis = VG_(HT_construct)("vgpt.sbis");
	vgpt_logs[0] = VG_(calloc)("vgpt.log", 1, LOG_ROOM + LOG_PAD);
	vgpt_log = vgpt_logs[0];
}

const struct vgpt_sbi *vgpt_sbi_find(Addr nraddr)
{
	return VG_(HT_lookup)(sbis, nraddr);
}

static Word sbi_cmp(const void *a, const void *b)
{
	const struct vgpt_sbi *x = a, *y = b;

	return x->sb != y->sb;
}

/* Valgrind drops a translation: its descriptors may still be in the log. */
void vgpt_discard(Addr orig_addr, VexGuestExtents vge)
{
	struct vgpt_sbi key = { .node.key = orig_addr, .sb = vge.base[0] };
	struct vgpt_sbi *s;

	vgpt_drain(0);
	s = VG_(HT_gen_remove)(sbis, &key, sbi_cmp);
	if (s)
		VG_(free)(s);
}

/* Drain when the log is full (called from translated code at the start
 * of a superblock: the guest IP is its address). */
static void log_full(void)
{
	vgpt_log_full(VG_(get_IP)(VG_(get_running_tid)()));
}

/* ------------------------------------------------------------------ */
/* Instruction classes                                                 */
/* ------------------------------------------------------------------ */

/* Valgrind's magic preamble: four rotates VEX takes as part of the one
 * 19-byte instruction it reports for the whole special sequence. */
static const UChar creq_preamble[16] = {
	0x48, 0xc1, 0xc7, 0x03, 0x48, 0xc1, 0xc7, 0x0d,
	0x48, 0xc1, 0xc7, 0x3d, 0x48, 0xc1, 0xc7, 0x33
};

static Bool is_special(Addr a, UInt len)
{
	return len == 19 && !VG_(memcmp)((const void *)a, creq_preamble, 16);
}

/* Architectural instructions in one VEX instruction (IMark). */
static UInt insn_weight(Addr a, UInt len)
{
	return is_special(a, len) ? 5 : 1;
}

/* The PT class of the instruction at @a, from its bytes (64-bit code). */
static enum xkind classify(Addr a, UInt len)
{
	const UChar *p = (const UChar *)a, *end = p + len;
	UChar op;

	/* xchg %rdx,%rdx after the preamble: call *%rax, unredirected. */
	if (is_special(a, len))
		return p[16] == 0x48 && p[17] == 0x87 && p[18] == 0xd2 ?
		       XK_NOREDIR : XK_NONE;
	for (; p < end; p++) {
		op = *p;
		if (op == 0x66 || op == 0x67 || op == 0xf0 || op == 0xf2 ||
		    op == 0xf3 || op == 0x2e || op == 0x36 || op == 0x3e ||
		    op == 0x26 || op == 0x64 || op == 0x65 ||
		    (op >= 0x40 && op <= 0x4f))
			continue;
		break;
	}
	if (p >= end)
		return XK_NONE;
	op = *p;
	if ((op >= 0x70 && op <= 0x7f) || (op >= 0xe0 && op <= 0xe3))
		return XK_COND;
	/* A call to the next instruction (position-independent code
	 * reading its address) is no call to decoders: nothing to push. */
	if (op == 0xe8)
		return p + 5 <= end && !p[1] && !p[2] && !p[3] && !p[4] ?
		       XK_NONE : XK_CALL;
	if (op == 0xc3 || op == 0xc2)
		return XK_RET;
	if (op == 0xcd || op == 0xcc || op == 0xce)
		return XK_FAR;
	if (op == 0x0f && p + 1 < end) {
		UChar op2 = p[1];

		if (op2 >= 0x80 && op2 <= 0x8f)
			return XK_COND;
		if (op2 == 0x05 || op2 == 0x34)
			return XK_FAR;
		return XK_NONE;
	}
	if (op == 0xff && p + 1 < end) {
		UInt reg = (p[1] >> 3) & 7;

		if (reg == 2)
			return XK_ICALL;
		if (reg == 4)
			return XK_IJMP;
		if (reg == 3 || reg == 5)
			return XK_FAR;
	}
	return XK_NONE;
}

/* ------------------------------------------------------------------ */
/* IR                                                                  */
/* ------------------------------------------------------------------ */

static IRExpr *u64(ULong v)
{
	return IRExpr_Const(IRConst_U64(v));
}

/* The fast record of an exit (vgpt.h), or 0: it needs a slow one. */
static UChar fast_byte(const struct vgpt_xp *x)
{
	if (vgpt_clo_truth || vgpt_filtering ||
	    (x->kind != XK_TNT0 && x->kind != XK_TNT1 &&
	     x->kind != XK_NONE) ||
	    (x->flags & (XF_DYN | XF_REDIR)) || x->ninsn > R_NINSN_MAX)
		return 0;
	return (UChar)(1 | (x->kind != XK_NONE) << 1 |
		       (x->kind == XK_TNT1) << 2 | x->ninsn << 3);
}

static IRExpr *slow_word(const struct vgpt_xp *x)
{
	ULong r = (ULong)(HWord)x;

	tl_assert(!(r >> 48));
	return u64(r << 8 | (x->flags & XF_DYN ? R_DYN : 0));
}

static IRTemp tmp_ty(IRSB *out, IRType ty, IRExpr *e)
{
	IRTemp t = newIRTemp(out->tyenv, ty);

	addStmtToIRSB(out, IRStmt_WrTmp(t, e));
	return t;
}

static IRTemp tmp(IRSB *out, IRExpr *e)
{
	return tmp_ty(out, Ity_I64, e);
}

static IRExpr *add(IRTemp t, ULong v)
{
	return IRExpr_Binop(Iop_Add64, IRExpr_RdTmp(t), u64(v));
}

static void store(IRSB *out, IRExpr *addr, IRExpr *data)
{
	addStmtToIRSB(out, IRStmt_Store(Iend_LE, addr, data));
}

static void put_pos(IRSB *out, IRExpr *e)
{
	addStmtToIRSB(out, IRStmt_Put(pos_off, IRExpr_RdTmp(tmp(out, e))));
}

/* The log position = p + @n. */
static void advance(IRSB *out, IRTemp p, ULong n)
{
	put_pos(out, add(p, n));
}

/* p = the log position, after draining a full log if @check. */
static IRTemp log_prologue(IRSB *out, Bool check)
{
	IRTemp p0, lim, full, p;
	IRDirty *di;

	p0 = tmp(out, IRExpr_Get(pos_off, Ity_I64));
	if (!check)
		return p0;
	/* Not(p < limit). */
	lim = tmp(out, IRExpr_Get(pos_off + 8, Ity_I64));
	full = tmp_ty(out, Ity_I1,
		      IRExpr_Binop(Iop_CmpLT64U, IRExpr_RdTmp(p0),
				   IRExpr_RdTmp(lim)));
	full = tmp_ty(out, Ity_I1, IRExpr_Unop(Iop_Not1, IRExpr_RdTmp(full)));
	/* The helper changes the position and the limit, and reads the
	 * guest IP. */
	di = unsafeIRDirty_0_N(0, "vgpt_log_full",
			       VG_(fnptr_to_fnentry)(&log_full),
			       mkIRExprVec_0());
	di->guard = IRExpr_RdTmp(full);
	di->nFxState = 2;
	di->fxState[0].fx = Ifx_Modify;
	di->fxState[0].offset = pos_off;
	di->fxState[0].size = 16;
	di->fxState[1].fx = Ifx_Read;
	di->fxState[1].offset = OFFSET_amd64_RIP;
	di->fxState[1].size = 8;
	for (Int i = 0; i < 2; i++) {
		di->fxState[i].nRepeats = 0;
		di->fxState[i].repeatLen = 0;
	}
	addStmtToIRSB(out, IRStmt_Dirty(di));
	/* Loaded again: the guard used once folds into the call's jump. */
	p = tmp(out, IRExpr_Get(pos_off, Ity_I64));
	return p;
}

/* Where an 8-byte record goes: @p rounded up to a multiple of 8. */
static IRTemp word_pos(IRSB *out, IRTemp p)
{
	return tmp(out, IRExpr_Binop(Iop_And64,
				     IRExpr_RdTmp(tmp(out, add(p, 7))),
				     u64(~7ULL)));
}

/* The record of a side exit taken when @g (a slow one: guarded stores
 * are 4 or 8 bytes wide). */
static void side_exit(IRSB *out, IRTemp p, const struct vgpt_xp *x,
		      IRExpr *g)
{
	IRTemp w = word_pos(out, p);

	addStmtToIRSB(out, IRStmt_StoreG(Iend_LE, IRExpr_RdTmp(w),
					 slow_word(x), g));
	put_pos(out, IRExpr_ITE(g, IRExpr_RdTmp(tmp(out, add(w, 8))),
				IRExpr_RdTmp(p)));
}

/* One unguarded record for a last side exit (taken when @g) and the
 * constant final jump after it. */
static void both_exits(IRSB *out, IRTemp p, const struct vgpt_xp *xs,
		       const struct vgpt_xp *xf, IRExpr *g)
{
	UChar bs = fast_byte(xs), bf = fast_byte(xf);
	IRTemp r;

	if (bs && bf) {
		/* 8 bytes: the fast record and zeros (vgpt.h). */
		r = tmp(out, IRExpr_ITE(g, u64(bs), u64(bf)));
		store(out, IRExpr_RdTmp(p), IRExpr_RdTmp(r));
		advance(out, p, 1);
	} else {
		IRTemp w = word_pos(out, p);

		r = tmp(out, IRExpr_ITE(g, slow_word(xs), slow_word(xf)));
		store(out, IRExpr_RdTmp(w), IRExpr_RdTmp(r));
		advance(out, w, 8);
	}
}

/* The inline record type of an exit (vgpt.h), or 0: it needs a desc. */
static UInt inline_type(const struct vgpt_xp *x)
{
	if (vgpt_clo_truth || vgpt_filtering || (x->flags & XF_REDIR) ||
	    x->ninsn > R_NINSN_MAX)
		return 0;
	switch (x->kind) {
	case XK_CALL:
		return x->flags & XF_DYN ? 0 : R_CALL;
	case XK_ICALL:
		return R_CALL;
	case XK_RET:
		return R_RET;
	case XK_IJMP:
		return R_JMP;
	default:
		return 0;
	}
}

/* The inline record @tag with address @a (an atom). */
static IRExpr *inline_word(IRSB *out, ULong tag, IRExpr *a)
{
	if (a->tag == Iex_Const)
		return u64(a->Iex.Const.con->Ico.U64 << 8 | tag);
	return IRExpr_RdTmp(tmp(out, IRExpr_Binop(Iop_Or64,
		IRExpr_RdTmp(tmp(out, IRExpr_Binop(Iop_Shl64, a,
				IRExpr_Const(IRConst_U8(8))))), u64(tag))));
}

/* The record of the final jump, to @next. */
static void final_exit(IRSB *out, IRTemp p, const struct vgpt_xp *x,
		       IRExpr *next)
{
	UChar b = fast_byte(x);
	UInt type = inline_type(x);
	IRTemp w;

	if (b) {
		store(out, IRExpr_RdTmp(p), u64(b));
		advance(out, p, 1);
		return;
	}
	w = word_pos(out, p);
	if (type == R_CALL && x->kind == XK_ICALL) {
		store(out, IRExpr_RdTmp(w),
		      u64((ULong)x->fall << 8 | R_INLINE(R_CALL, x->ninsn)));
		store(out, IRExpr_RdTmp(tmp(out, add(w, 8))),
		      inline_word(out, R_INLINE(R_JMP, 0), next));
		advance(out, w, 16);
	} else if (type == R_CALL) {
		store(out, IRExpr_RdTmp(w),
		      u64((ULong)x->fall << 8 | R_INLINE(R_CALL, x->ninsn)));
		advance(out, w, 8);
	} else if (type) {
		store(out, IRExpr_RdTmp(w),
		      inline_word(out, R_INLINE(type, x->ninsn), next));
		advance(out, w, 8);
	} else if (x->flags & XF_DYN) {
		store(out, IRExpr_RdTmp(w), slow_word(x));
		store(out, IRExpr_RdTmp(tmp(out, add(w, 8))), next);
		advance(out, w, 16);
	} else {
		store(out, IRExpr_RdTmp(w), slow_word(x));
		advance(out, w, 8);
	}
}

/* Only register traffic after statement @i: nothing that can fault or
 * leave, so a record written before @i describes the block's end. */
static Bool quiet_after(const IRSB *in, Int i)
{
	for (i++; i < in->stmts_used; i++) {
		const IRStmt *st = in->stmts[i];

		switch (st->tag) {
		case Ist_NoOp:
		case Ist_Put:
		case Ist_PutI:
		case Ist_AbiHint:
			break;
		case Ist_WrTmp:
			if (st->Ist.WrTmp.data->tag == Iex_Load)
				return False;
			break;
		default:
			return False;
		}
	}
	return True;
}

/* The translation being made. */
struct instr {
	const VgCallbackClosure *c;
	struct vgpt_sbi *s;
	Addr insn;		/* current instruction */
	UInt len, weight, before;
};

static struct vgpt_xp *new_xp(struct instr *in, Addr dst, Bool dyn,
			      Bool completed)
{
	struct vgpt_sbi *s = in->s;
	struct vgpt_xp *x = &s->xp[s->nxp++];
	UChar kind = XK_NONE;

	x->sb = s->sb;
	x->sbi = s;
	x->fall = in->insn + in->len;
	x->next = dyn ? 0 : dst;
	x->ninsn = in->before + (completed ? in->weight : 0);
	if (completed && in->len)
		kind = (UChar)classify(in->insn, in->len);
	if (kind == XK_COND && !dyn)
		kind = dst == x->fall ? XK_TNT0 : XK_TNT1;
	x->kind = kind;
	x->flags = (UChar)((dyn ? XF_DYN : 0) |
			   (s->node.key != s->sb ? XF_REDIR : 0) |
			   (s->in_filter ? XF_SB_IN : 0));
	if (vgpt_filtering && in->len && vgpt_in_filter(in->insn))
		x->flags |= XF_SRC_IN;
	return x;
}

/*
 * Instructions and exits of @in, to size the translation's record; and
 * whether it can close a loop (an exit to @sb or before, or to a target
 * known only at run time). A return closes no cycle of its own: the
 * call that pushed its target comes back only through a loop of the
 * caller's, which has one of the others (or through the scheduler's
 * bound, LOG_ROOM, for code that loops by returns).
 */
static Bool count(const IRSB *in, Addr sb, UInt *nimarks, UInt *nexits)
{
	Bool back = (in->next->tag != Iex_Const && in->jumpkind != Ijk_Ret) ||
		    (in->next->tag == Iex_Const &&
		     (Addr)in->next->Iex.Const.con->Ico.U64 <= sb);

	*nimarks = 0;
	*nexits = 1;
	for (Int i = 0; i < in->stmts_used; i++) {
		const IRStmt *st = in->stmts[i];

		if (st->tag == Ist_IMark) {
			(*nimarks)++;
		} else if (st->tag == Ist_Exit && *nimarks) {
			(*nexits)++;
			if ((Addr)st->Ist.Exit.dst->Ico.U64 <= sb)
				back = True;
		}
	}
	return back;
}

static struct vgpt_sbi *sbi_new(const VgCallbackClosure *c, UInt ni, UInt nx)
{
	struct vgpt_sbi *s;
	SizeT size;

	size = sizeof(*s) + nx * sizeof(struct vgpt_xp) +
	       ni * 2 * sizeof(UShort);
	s = VG_(calloc)("vgpt.sbi", 1, size);
	s->node.key = c->nraddr;
	s->sb = c->readdr;
	s->xp = (struct vgpt_xp *)(s + 1);
	s->ioff = (UShort *)(s->xp + nx);
	s->ibefore = s->ioff + ni;
	s->in_filter = vgpt_filtering && vgpt_in_filter(s->sb);
	return s;
}

IRSB *vgpt_instrument(VgCallbackClosure *closure, IRSB *in,
		      const VexGuestLayout *layout,
		      const VexGuestExtents *vge,
		      const VexArchInfo *archinfo_host,
		      IRType gWordTy, IRType hWordTy)
{
	struct instr ins = { .c = closure };
	struct vgpt_sbi *s;
	struct vgpt_xp *x;
	IRSB *out;
	IRTemp p = IRTemp_INVALID;
	Bool merged = False, last_imark = False, check;
	UInt ni, nx;
	Addr dst;

	pos_off = layout->total_sizeB;
	(void)archinfo_host;
	(void)hWordTy;
	if (gWordTy != Ity_I64)
		VG_(tool_panic)("vgpt: 64-bit guests only");

	/* Valgrind translates what the thread runs next. */
	vgpt_xlate_ip = closure->nraddr;
	vgpt_check_code(vge);
	check = count(in, closure->readdr, &ni, &nx) ||
		closure->readdr != closure->nraddr;
	s = ins.s = sbi_new(closure, ni, nx);
	out = deepCopyIRSBExceptStmts(in);
	for (Int i = 0; i < in->stmts_used; i++) {
		IRStmt *st = in->stmts[i];

		if (!st || st->tag == Ist_NoOp)
			continue;
		if (st->tag == Ist_IMark) {
			if (s->nimarks) {
				ins.before += ins.weight;
				if (!warned_cond_mid && ins.len &&
				    classify(ins.insn, ins.len) == XK_COND) {
					VG_(umsg)("vgpt: conditional branch "
						  "inside a superblock at "
						  "%#lx: trace is wrong\n",
						  ins.insn);
					warned_cond_mid = True;
				}
			} else {
				/* After the --smc-check self-check, whose
				 * exit retires nothing. */
				p = log_prologue(out, check);
			}
			ins.insn = (Addr)st->Ist.IMark.addr;
			ins.len = st->Ist.IMark.len;
			ins.weight = insn_weight(ins.insn, ins.len);
			s->ioff[s->nimarks] = (UShort)(ins.insn - s->sb);
			s->ibefore[s->nimarks++] = (UShort)ins.before;
			last_imark = s->nimarks == ni;
			vgpt_note_code(ins.insn);
		} else if (st->tag == Ist_Exit && s->nimarks) {
			IRExpr *g = st->Ist.Exit.guard;

			dst = (Addr)st->Ist.Exit.dst->Ico.U64;
			x = new_xp(&ins, dst, False, dst != ins.insn);
			if (last_imark && in->next->tag == Iex_Const &&
			    quiet_after(in, i)) {
				Addr fd = (Addr)in->next->Iex.Const.con->Ico.U64;

				both_exits(out, p, x, new_xp(&ins, fd, False,
							     fd != ins.insn),
					   g);
				merged = True;
			} else {
				side_exit(out, p, x, g);
			}
		}
		addStmtToIRSB(out, st);
	}
	tl_assert(s->nimarks);
	if (!merged) {
		/* A constant target that is the instruction itself is a rep
		 * string instruction going round again. */
		if (in->next->tag == Iex_Const) {
			dst = (Addr)in->next->Iex.Const.con->Ico.U64;
			x = new_xp(&ins, dst, False, dst != ins.insn);
		} else {
			x = new_xp(&ins, 0, True, True);
		}
		final_exit(out, p, x, in->next);
	}
	vgpt_xlate_ip = 0;
	VG_(HT_add_node)(sbis, s);
	return out;
}

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vgpt: a Valgrind tool that records the control flow of an unmodified
 * program as a genuine Intel PT packet stream, one per thread, plus a text
 * sideband (README.md in this folder describes the files and the model).
 *
 * How: chasing and loop unrolling are switched off, so every superblock is
 * straight-line code whose only branch instruction is its last one. Each
 * way out of a superblock (each side exit and the final jump) gets a static
 * descriptor and one dirty helper call: guarded by the exit's own guard for
 * side exits, unconditional before the final jump. The helper therefore
 * runs exactly once per superblock execution and knows how many guest
 * instructions retired, which instruction ended the flow and where the
 * flow goes next; that is all a PT encoder needs.
 *
 * What the last instruction is (conditional branch, call, return, ...) is
 * read from its bytes, not from VEX's jump kinds: the PT decoder classifies
 * instructions by their bytes too, and VEX expresses the same instruction
 * in several ways (a jcc exit may point at either successor; rep string
 * instructions loop by exiting to themselves).
 *
 * The packets are encoded by hwt's own encoder (src/pt/encode.c), compiled
 * into this tool: it needs only memcpy, which Valgrind's core provides.
 */
#include "pub_tool_basics.h"
#include "pub_tool_aspacemgr.h"
#include "pub_tool_clientstate.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_machine.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_options.h"
#include "pub_tool_threadstate.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_vki.h"
#include "pub_tool_vkiscnums.h"

#include <hwt/pt.h>

enum {
	OUT_BUF = 1 << 18,	/* per-thread PT buffer */
	OUT_HIGH = OUT_BUF - 512, /* flush when a helper leaves more */
	TRUTH_BUF = 1 << 16,
	SB_BUF = 1 << 14,
	PSB_PERIOD = 4096,	/* bytes of trace between PSB+ */
	RETSTACK = 64,		/* as deep as the hardware's (and decoders') */
};

/* What the instruction that ended a superblock execution means for PT. */
enum xkind {
	XK_NONE,	/* no branch, direct jump, or not completed */
	XK_COND,	/* jcc, loop*, jrcxz: one TNT bit */
	XK_CALL,	/* direct call: push only */
	XK_ICALL,	/* indirect call: push + TIP */
	XK_IJMP,	/* indirect jump: TIP */
	XK_RET,		/* near return: TNT (compressed) or TIP */
	XK_FAR,		/* syscall / sysenter / int: TIP.PGD, IP suppressed */
};

/*
 * One way out of one translation. @ninsn is the number of guest
 * instructions that retired when the flow leaves this way (the exiting
 * instruction itself only if it completed: a rep iteration or a fault
 * exits to the instruction itself).
 */
struct vgpt_xp {
	Addr sb;	/* superblock start (the redirected address) */
	Addr nraddr;	/* != sb: a Valgrind redirection */
	Addr fall;	/* address after the exiting instruction */
	UInt ninsn;
	UChar kind;	/* enum xkind */
};

struct vgpt_thread {
	Int fd;
	Int truth_fd;
	Int os_tid;
	Bool enabled;		/* TIP.PGE sent, no TIP.PGD since */
	Bool need_tsc;		/* another thread ran since our last packet */
	UInt tnt_n;		/* pending TNT bits (<= 6) */
	UInt tnt_bits;
	ULong last_ip;		/* IP compression state */
	ULong written;		/* bytes already written to fd */
	ULong psb_at;		/* stream offset where the next PSB+ is due */
	ULong insns;		/* instructions retired by this thread */
	UInt len;
	UInt tlen;
	UInt rs_top;		/* return stack: ring of RETSTACK entries */
	UInt rs_n;
	Addr rs[RETSTACK];
	UChar *buf;
	HChar *tbuf;
};

/* Options. */
static const HChar *clo_out = "vgpt";
static Bool clo_truth = False;

/* The clock of all TSC packets: guest instructions retired by all threads,
 * in the order Valgrind ran them. */
static ULong icount;

static struct vgpt_thread **threads;	/* by Valgrind ThreadId */
static struct vgpt_thread *cur;		/* the thread running client code */
static ThreadId cur_tid;

/* Sideband: one file shared with forked children (they inherit the open
 * file), appended to in whole lines. */
static Int sb_fd = -1;
static HChar *sb_buf;
static UInt sb_len;

/* Executable segments already described in the sideband. */
struct seg_seen {
	Addr start;
	Addr end;
	ULong offset;
	const HChar *name;	/* owned copy, or NULL */
};
static struct seg_seen *segs;
static UInt nsegs, segs_cap;
static Addr seg_lo = 1, seg_hi;		/* last segment checked */

static ULong stat_bytes;
static ULong stat_threads;
static Bool warned_cond_mid;

/* The one function of src/pt/packet.c that encode.c needs; packet.c
 * itself allocates with the C library, which a tool cannot use. */
int hwt_pt_ipc_size(unsigned ipc)
{
	static const signed char size[8] = { 0, 2, 4, 6, 6, -1, 8, -1 };

	if (ipc > 7 || size[ipc] < 0)
		return -HWT_ERR_BAD_PACKET;
	return size[ipc];
}

/* ------------------------------------------------------------------ */
/* Files                                                               */
/* ------------------------------------------------------------------ */

static Int open_out(const HChar *path, Bool append)
{
	Int flags = VKI_O_CREAT | VKI_O_WRONLY | VKI_O_TRUNC |
		    (append ? VKI_O_APPEND : 0);
	SysRes r = VG_(open)(path, flags, 0644);

	if (sr_isError(r)) {
		VG_(umsg)("vgpt: cannot create %s\n", path);
		VG_(exit)(1);
	}
	return (Int)sr_Res(r);
}

static void write_all(Int fd, const void *p, UInt n, const HChar *what)
{
	const UChar *b = p;

	while (n) {
		Int w = VG_(write)(fd, b, (Int)n);

		if (w <= 0) {
			VG_(umsg)("vgpt: write error on %s\n", what);
			VG_(exit)(1);
		}
		b += w;
		n -= (UInt)w;
	}
}

static void sb_flush(void)
{
	if (sb_len && sb_fd >= 0)
		write_all(sb_fd, sb_buf, sb_len, "sideband");
	sb_len = 0;
}

/* One sideband line (no newline in @fmt). */
static void sb_line(const HChar *fmt, ...) PRINTF_CHECK(1, 2);
static void sb_line(const HChar *fmt, ...)
{
	va_list vargs;
	UInt n;

	if (sb_len > SB_BUF - 1024)
		sb_flush();
	va_start(vargs, fmt);
	n = VG_(vsnprintf)(sb_buf + sb_len, SB_BUF - 1 - sb_len, fmt, vargs);
	va_end(vargs);
	sb_len += n;
	if (sb_len > SB_BUF - 2)
		sb_len = SB_BUF - 2;
	sb_buf[sb_len++] = '\n';
}

static void thread_flush(struct vgpt_thread *t)
{
	if (t->len)
		write_all(t->fd, t->buf, t->len, "trace");
	t->written += t->len;
	stat_bytes += t->len;
	t->len = 0;
	if (t->tlen)
		write_all(t->truth_fd, t->tbuf, t->tlen, "truth");
	t->tlen = 0;
}

/* ------------------------------------------------------------------ */
/* Packets                                                             */
/* ------------------------------------------------------------------ */

static void put(struct vgpt_thread *t, const struct hwt_pt_packet *p)
{
	int n = hwt_pt_encode(t->buf + t->len, t->buf + OUT_BUF, p);

	tl_assert(n > 0);
	t->len += (UInt)n;
}

static void flush_tnt(struct vgpt_thread *t)
{
	struct hwt_pt_packet p = { .type = HWT_PT_TNT8 };

	if (!t->tnt_n)
		return;
	p.u.tnt.bits = (UChar)t->tnt_n;
	p.u.tnt.payload = t->tnt_bits;
	put(t, &p);
	t->tnt_n = 0;
	t->tnt_bits = 0;
}

static inline void put_tnt(struct vgpt_thread *t, UInt taken)
{
	t->tnt_bits = t->tnt_bits << 1 | taken;
	if (++t->tnt_n == 6)
		flush_tnt(t);
}

/* An IP packet, compressed against the last IP as tightly as possible. */
static void put_ip(struct vgpt_thread *t, UChar type, ULong ip)
{
	struct hwt_pt_packet p = { .type = type };
	ULong diff = ip ^ t->last_ip;
	ULong top = ip >> 47;

	flush_tnt(t);
	if (!(diff >> 16)) {
		p.u.ip.ipc = HWT_PT_IPC_UPDATE16;
		p.u.ip.ip = ip & 0xffffULL;
	} else if (!(diff >> 32)) {
		p.u.ip.ipc = HWT_PT_IPC_UPDATE32;
		p.u.ip.ip = ip & 0xffffffffULL;
	} else if (top == 0 || top == 0x1ffffULL) {
		p.u.ip.ipc = HWT_PT_IPC_SEXT48;
		p.u.ip.ip = ip & 0xffffffffffffULL;
	} else {
		p.u.ip.ipc = HWT_PT_IPC_FULL;
		p.u.ip.ip = ip;
	}
	t->last_ip = ip;
	put(t, &p);
}

static void put_simple(struct vgpt_thread *t, UChar type)
{
	struct hwt_pt_packet p = { .type = type };

	if (type == HWT_PT_MODE_EXEC)
		p.u.exec = HWT_PT_EXEC_CSL;
	put(t, &p);
}

static void put_tsc(struct vgpt_thread *t)
{
	struct hwt_pt_packet p = { .type = HWT_PT_TSC };

	flush_tnt(t);
	p.u.tsc = icount & ((1ULL << 56) - 1);
	put(t, &p);
	t->need_tsc = False;
}

static void put_pgd(struct vgpt_thread *t)
{
	struct hwt_pt_packet p = { .type = HWT_PT_TIP_PGD };

	flush_tnt(t);
	p.u.ip.ipc = HWT_PT_IPC_SUPPRESSED;
	put(t, &p);
	t->enabled = False;
}

/*
 * PSB+. A decoder may start at any PSB with an empty return stack, so ours
 * is emptied too: no return is compressed against a call before the PSB.
 */
static void put_psb(struct vgpt_thread *t, Addr ip)
{
	flush_tnt(t);
	put_simple(t, HWT_PT_PSB);
	t->last_ip = 0;
	put_tsc(t);
	if (t->enabled) {
		put_simple(t, HWT_PT_MODE_EXEC);
		put_ip(t, HWT_PT_FUP, ip);
	}
	put_simple(t, HWT_PT_PSBEND);
	t->rs_n = 0;
	t->psb_at = t->written + t->len + PSB_PERIOD;
}

static void enable(struct vgpt_thread *t, Addr ip)
{
	put_tsc(t);
	put_simple(t, HWT_PT_MODE_EXEC);
	put_ip(t, HWT_PT_TIP_PGE, ip);
	t->enabled = True;
}

/* ------------------------------------------------------------------ */
/* Threads                                                             */
/* ------------------------------------------------------------------ */

static struct vgpt_thread *thread_new(void)
{
	struct vgpt_thread *t = VG_(calloc)("vgpt.thread", 1, sizeof(*t));
	HChar path[VKI_PATH_MAX];

	t->os_tid = VG_(gettid)();
	t->buf = VG_(malloc)("vgpt.buf", OUT_BUF);
	VG_(snprintf)(path, sizeof(path), "%s.%d.pt", clo_out, t->os_tid);
	t->fd = open_out(path, False);
	t->truth_fd = -1;
	if (clo_truth) {
		t->tbuf = VG_(malloc)("vgpt.truth", TRUTH_BUF);
		VG_(snprintf)(path, sizeof(path), "%s.%d.truth", clo_out,
			      t->os_tid);
		t->truth_fd = open_out(path, False);
	}
	put_psb(t, 0);
	stat_threads++;
	sb_line("thread %llu %d %d", icount, VG_(getpid)(), t->os_tid);
	return t;
}

static void thread_free(struct vgpt_thread *t)
{
	VG_(close)(t->fd);
	if (t->truth_fd >= 0)
		VG_(close)(t->truth_fd);
	VG_(free)(t->buf);
	if (t->tbuf)
		VG_(free)(t->tbuf);
	VG_(free)(t);
}

static void thread_end(ThreadId tid)
{
	struct vgpt_thread *t = threads[tid];

	if (!t)
		return;
	flush_tnt(t);
	thread_flush(t);
	sb_line("exit %llu %d %d", icount, VG_(getpid)(), t->os_tid);
	thread_free(t);
	threads[tid] = NULL;
	if (cur == t)
		cur = NULL;
}

static void start_client_code(ThreadId tid, ULong blocks_done)
{
	(void)blocks_done;
	if (!threads[tid])
		threads[tid] = thread_new();
	if (tid != cur_tid)
		threads[tid]->need_tsc = True;
	cur = threads[tid];
	cur_tid = tid;
}

/* ------------------------------------------------------------------ */
/* Ground truth                                                        */
/* ------------------------------------------------------------------ */

static HChar *put_hex(HChar *p, ULong v)
{
	HChar tmp[16];
	Int n = 0;

	do {
		tmp[n++] = "0123456789abcdef"[v & 0xf];
		v >>= 4;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

static void truth_line(struct vgpt_thread *t, Addr sb, UInt n)
{
	HChar *p;

	if (t->tlen > TRUTH_BUF - 64)
		thread_flush(t);
	p = t->tbuf + t->tlen;
	p = put_hex(p, sb);
	*p++ = ' ';
	p = put_hex(p, n);
	*p++ = '\n';
	t->tlen = (UInt)(p - t->tbuf);
}

/* ------------------------------------------------------------------ */
/* The run-time helper: once per superblock execution                  */
/* ------------------------------------------------------------------ */

static VG_REGPARM(2) void vgpt_leave(const struct vgpt_xp *x, Addr next)
{
	struct vgpt_thread *t = cur;

	if (UNLIKELY(!t->enabled)) {
		enable(t, x->sb);
	} else if (UNLIKELY(x->nraddr != x->sb)) {
		/* Valgrind ran other code than the program's at nraddr:
		 * an asynchronous transfer, as an interrupt would be. */
		put_ip(t, HWT_PT_FUP, x->nraddr);
		put_ip(t, HWT_PT_TIP, x->sb);
	} else if (UNLIKELY(t->need_tsc)) {
		put_tsc(t);
	}
	if (x->ninsn) {
		icount += x->ninsn;
		t->insns += x->ninsn;
		if (t->tbuf)
			truth_line(t, x->sb, x->ninsn);
	}

	switch (x->kind) {
	case XK_NONE:
		break;
	case XK_COND:
		put_tnt(t, next != x->fall);
		break;
	case XK_CALL:
	case XK_ICALL:
		t->rs[t->rs_top] = x->fall;
		t->rs_top = (t->rs_top + 1) % RETSTACK;
		if (t->rs_n < RETSTACK)
			t->rs_n++;
		if (x->kind == XK_ICALL)
			put_ip(t, HWT_PT_TIP, next);
		break;
	case XK_IJMP:
		put_ip(t, HWT_PT_TIP, next);
		break;
	case XK_RET: {
		UInt top = (t->rs_top + RETSTACK - 1) % RETSTACK;

		/* Like the hardware (and decoders): only a compressed
		 * return pops the stack. */
		if (t->rs_n && t->rs[top] == next) {
			t->rs_top = top;
			t->rs_n--;
			put_tnt(t, 1);
		} else {
			put_ip(t, HWT_PT_TIP, next);
		}
		break;
	}
	case XK_FAR:
		put_pgd(t);
		break;
	}

	if (UNLIKELY(t->written + t->len >= t->psb_at) && t->enabled)
		put_psb(t, next);
	if (UNLIKELY(t->len > OUT_HIGH))
		thread_flush(t);
}

/* ------------------------------------------------------------------ */
/* Instrumentation                                                     */
/* ------------------------------------------------------------------ */

/* Valgrind's client request preamble: four rotates VEX takes as part of
 * the one 19-byte instruction it reports for the whole sequence. */
static const UChar creq_preamble[16] = {
	0x48, 0xc1, 0xc7, 0x03, 0x48, 0xc1, 0xc7, 0x0d,
	0x48, 0xc1, 0xc7, 0x3d, 0x48, 0xc1, 0xc7, 0x33
};

/* Architectural instructions in one VEX instruction (IMark). */
static UInt insn_weight(Addr a, UInt len)
{
	if (len == 19 && !VG_(memcmp)((const void *)a, creq_preamble, 16))
		return 5;
	return 1;
}

/* The PT class of the instruction at @a, from its bytes (64-bit code). */
static enum xkind classify(Addr a, UInt len)
{
	const UChar *p = (const UChar *)a, *end = p + len;
	UChar op;

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
	if (op == 0xe8)
		return XK_CALL;
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

static Bool seg_equal(const struct seg_seen *s, const NSegment *seg,
		      const HChar *name)
{
	if (s->start != seg->start || s->end != seg->end ||
	    s->offset != (ULong)seg->offset)
		return False;
	if (!s->name || !name)
		return s->name == name;
	return !VG_(strcmp)(s->name, name);
}

/* Anonymous executable memory (the vdso, generated code) has no file to
 * decode from: save its bytes as they are now. */
static const HChar *dump_anon(const NSegment *seg)
{
	HChar path[VKI_PATH_MAX];
	Int fd;

	VG_(snprintf)(path, sizeof(path), "%s.%d.%lx.bin", clo_out,
		      VG_(getpid)(), seg->start);
	fd = open_out(path, False);
	write_all(fd, (const void *)seg->start,
		  (UInt)(seg->end - seg->start + 1), path);
	VG_(close)(fd);
	return VG_(strdup)("vgpt.seg", path);
}

/* Describe the executable segment holding @a in the sideband, once. */
static void note_code(Addr a)
{
	const NSegment *seg;
	const HChar *name = NULL;
	struct seg_seen *s;
	ULong offset;

	if (a >= seg_lo && a <= seg_hi)
		return;
	seg = VG_(am_find_nsegment)(a);
	if (!seg)
		return;
	seg_lo = seg->start;
	seg_hi = seg->end;
	if (seg->kind == SkFileC)
		name = VG_(am_get_filename)(seg);
	for (UInt i = 0; i < nsegs; i++)
		if (seg_equal(&segs[i], seg, name))
			return;
	if (nsegs == segs_cap) {
		segs_cap = segs_cap ? 2 * segs_cap : 64;
		segs = VG_(realloc)("vgpt.segs", segs,
				    segs_cap * sizeof(*segs));
	}
	s = &segs[nsegs++];
	s->start = seg->start;
	s->end = seg->end;
	s->offset = (ULong)seg->offset;
	s->name = name ? VG_(strdup)("vgpt.seg", name) : NULL;
	offset = s->offset;
	if (!name) {
		name = dump_anon(seg);
		offset = 0;
	}
	sb_line("mmap %llu %d %lx %lx %llx %c%c%c %s", icount, VG_(getpid)(),
		seg->start, seg->end - seg->start + 1, offset,
		seg->hasR ? 'r' : '-', seg->hasW ? 'w' : '-',
		seg->hasX ? 'x' : '-', name);
}

static void add_leave(IRSB *out, const struct vgpt_xp *x, IRExpr *next,
		      IRExpr *guard)
{
	IRDirty *di = unsafeIRDirty_0_N(
		2, "vgpt_leave", VG_(fnptr_to_fnentry)(&vgpt_leave),
		mkIRExprVec_2(mkIRExpr_HWord((HWord)x), next));

	if (guard)
		di->guard = guard;
	addStmtToIRSB(out, IRStmt_Dirty(di));
}

static struct vgpt_xp *new_xp(const VgCallbackClosure *c, Addr insn,
			      UInt len, UInt before, UInt weight,
			      Bool completed)
{
	struct vgpt_xp *x = VG_(malloc)("vgpt.xp", sizeof(*x));

	x->sb = c->readdr;
	x->nraddr = c->nraddr;
	x->fall = insn + len;
	x->ninsn = before + (completed ? weight : 0);
	x->kind = (UChar)(completed && len ? classify(insn, len) : XK_NONE);
	return x;
}

static IRSB *vgpt_instrument(VgCallbackClosure *closure, IRSB *in,
			     const VexGuestLayout *layout,
			     const VexGuestExtents *vge,
			     const VexArchInfo *archinfo_host,
			     IRType gWordTy, IRType hWordTy)
{
	IRSB *out;
	Addr insn = 0;
	UInt len = 0, weight = 0, before = 0, nimarks = 0;
	Bool completed;
	Addr dst;

	(void)layout;
	(void)vge;
	(void)archinfo_host;
	(void)hWordTy;
	if (gWordTy != Ity_I64)
		VG_(tool_panic)("vgpt: 64-bit guests only");

	out = deepCopyIRSBExceptStmts(in);
	for (Int i = 0; i < in->stmts_used; i++) {
		IRStmt *st = in->stmts[i];

		if (!st || st->tag == Ist_NoOp)
			continue;
		if (st->tag == Ist_IMark) {
			if (nimarks++) {
				before += weight;
				if (!warned_cond_mid && len &&
				    classify(insn, len) == XK_COND) {
					VG_(umsg)("vgpt: conditional branch "
						  "inside a superblock at "
						  "%#lx: trace is wrong\n",
						  insn);
					warned_cond_mid = True;
				}
			}
			insn = (Addr)st->Ist.IMark.addr;
			len = st->Ist.IMark.len;
			weight = insn_weight(insn, len);
			note_code(insn);
		} else if (st->tag == Ist_Exit) {
			dst = (Addr)st->Ist.Exit.dst->Ico.U64;
			completed = dst != insn;
			add_leave(out, new_xp(closure, insn, len, before,
					      weight, completed),
				  mkIRExpr_HWord(dst), st->Ist.Exit.guard);
		}
		addStmtToIRSB(out, st);
	}

	/* The final jump: a constant target that is the instruction itself
	 * is a rep string instruction going round again. */
	completed = True;
	if (in->next->tag == Iex_Const) {
		dst = (Addr)in->next->Iex.Const.con->Ico.U64;
		completed = dst != insn;
	}
	add_leave(out, new_xp(closure, insn, len, before, weight, completed),
		  in->next, NULL);
	return out;
}

/* ------------------------------------------------------------------ */
/* Events outside translated code                                      */
/* ------------------------------------------------------------------ */

/* A signal handler is entered where the thread was: an asynchronous far
 * transfer (FUP there, then tracing off until the handler's first block). */
static void pre_deliver_signal(ThreadId tid, Int sig, Bool alt_stack)
{
	struct vgpt_thread *t = threads[tid];

	(void)sig;
	(void)alt_stack;
	if (!t || !t->enabled)
		return;
	put_ip(t, HWT_PT_FUP, VG_(get_IP)(tid));
	put_pgd(t);
}

static void pre_syscall(ThreadId tid, UInt sysno, UWord *args, UInt nargs)
{
	(void)tid;
	(void)nargs;
	if (sysno != __NR_execve && sysno != __NR_execveat)
		return;
	/* The image goes away if this works: leave nothing buffered. */
	sb_line("exec %llu %d %s", icount, VG_(getpid)(),
		sysno == __NR_execve ? (const HChar *)args[0] : "?");
	for (ThreadId i = 0; i < VG_N_THREADS; i++)
		if (threads[i]) {
			flush_tnt(threads[i]);
			thread_flush(threads[i]);
		}
	sb_flush();
}

static void post_syscall(ThreadId tid, UInt sysno, UWord *args, UInt nargs,
			 SysRes res)
{
	(void)tid;
	(void)sysno;
	(void)args;
	(void)nargs;
	(void)res;
}

/* In a forked child only the forking thread lives on, in a new trace:
 * what is buffered belongs to the parent, which writes it. */
static void atfork_child(ThreadId tid)
{
	Int ppid = VG_(getppid)();

	for (ThreadId i = 0; i < VG_N_THREADS; i++)
		if (threads[i]) {
			thread_free(threads[i]);
			threads[i] = NULL;
		}
	cur = NULL;
	cur_tid = 0;
	sb_len = 0;
	sb_line("fork %llu %d %d", icount, ppid, VG_(getpid)());
	(void)tid;
}

static void thread_exit(ThreadId tid)
{
	thread_end(tid);
}

/* ------------------------------------------------------------------ */
/* Tool interface                                                      */
/* ------------------------------------------------------------------ */

static Bool process_cmd_line_option(const HChar *arg)
{
	if VG_STR_CLO(arg, "--vgpt-out", clo_out) {
	} else if VG_BOOL_CLO(arg, "--vgpt-truth", clo_truth) {
	} else {
		return False;
	}
	return True;
}

static void print_usage(void)
{
	VG_(printf)(
"    --vgpt-out=PREFIX         write PREFIX.TID.pt, PREFIX.sb [vgpt]\n"
"    --vgpt-truth=yes|no       also write PREFIX.TID.truth, the executed\n"
"                              superblocks (tests) [no]\n");
}

static void print_debug_usage(void)
{
	VG_(printf)("    (none)\n");
}

static void post_clo_init(void)
{
	HChar path[VKI_PATH_MAX];

	/* Straight-line superblocks: the helper placement relies on it. */
	VG_(clo_vex_control).guest_chase = False;
	VG_(clo_vex_control).iropt_unroll_thresh = 0;

	threads = VG_(calloc)("vgpt.threads", VG_N_THREADS, sizeof(*threads));
	sb_buf = VG_(malloc)("vgpt.sb", SB_BUF);
	VG_(snprintf)(path, sizeof(path), "%s.sb", clo_out);
	sb_fd = open_out(path, True);
	sb_line("comm %llu %d %d %s", icount, VG_(getpid)(), VG_(gettid)(),
		VG_(args_the_exename));
}

static void fini(Int exitcode)
{
	ULong insns = icount;

	for (ThreadId i = 0; i < VG_N_THREADS; i++)
		thread_end(i);
	sb_flush();
	if (VG_(clo_verbosity) > 0)
		VG_(umsg)("vgpt: %llu threads, %llu instructions, %llu bytes "
			  "of trace, %llu.%03llu bits/insn, exit %d\n",
			  stat_threads, insns, stat_bytes,
			  insns ? stat_bytes * 8 / insns : 0,
			  insns ? stat_bytes * 8000 / insns % 1000 : 0,
			  exitcode);
}

static void pre_clo_init(void)
{
	VG_(details_name)("vgpt");
	VG_(details_version)(NULL);
	VG_(details_description)("Intel PT trace writer (hwt)");
	VG_(details_copyright_author)("Copyright (C) 2026, the hwt authors.");
	VG_(details_bug_reports_to)("the hwt authors");
	VG_(details_avg_translation_sizeB)(300);

	VG_(basic_tool_funcs)(post_clo_init, vgpt_instrument, fini);
	VG_(needs_command_line_options)(process_cmd_line_option, print_usage,
					print_debug_usage);
	VG_(needs_syscall_wrapper)(pre_syscall, post_syscall);
	VG_(track_start_client_code)(start_client_code);
	VG_(track_pre_thread_ll_exit)(thread_exit);
	VG_(track_pre_deliver_signal)(pre_deliver_signal);
	VG_(atfork)(NULL, NULL, atfork_child);
}

VG_DETERMINE_INTERFACE_VERSION(pre_clo_init)

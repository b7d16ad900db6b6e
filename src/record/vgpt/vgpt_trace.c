/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The exit log turned into PT packets, per thread.
 *
 * Translated code appends one record per superblock execution to a byte
 * log (vgpt.h, vgpt_instr.c). The log belongs to the thread that runs
 * (Valgrind runs one at a time); it is drained here when it fills, before
 * another thread runs, and before anything that has to see the packets
 * and the clock up to date (syscalls, signals, translations of new code,
 * thread exit).
 *
 * The drain loop keeps the hot state (output position, pending TNT bits,
 * the instruction count, the last IP) in locals and reads the log a word
 * at a time: up to eight one-byte records, or an inline call, return or
 * indirect jump; everything rare (enabling, PSB+, flushing, desc records,
 * truth, --vgpt-filter) is out of line, with the state written back
 * first (SAVE/LOAD).
 *
 * The packets are encoded by hwt's own encoder and IP compression
 * (src/pt/encode.c, last_ip.c), compiled into this tool; only TNT-8 bytes
 * and the TIPs of the drain's hot path are written here directly.
 */
#include "vgpt.h"
#include "pt/last_ip_choose.h"

#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_machine.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_threadstate.h"

ULong vgpt_icount;
Addr vgpt_resume_ip;
struct vgpt_thread **vgpt_threads;
struct vgpt_thread *vgpt_cur;
ULong vgpt_stat_bytes, vgpt_stat_made, vgpt_stat_lost, vgpt_stat_threads;

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
/* Packets                                                             */
/* ------------------------------------------------------------------ */

static void put(struct vgpt_thread *t, const struct hwt_pt_packet *p)
{
	int n = hwt_pt_encode(t->buf + t->len, t->buf + OUT_BUF, p);

	tl_assert(n > 0);
	t->len += (UInt)n;
}

/*
 * TNT bits wait in t->tnt, oldest in bit 0, and go out in TNT-8 packets
 * of up to six (the densest TNT: 6 bits a byte), oldest in the packet's
 * most significant payload bit, behind a stop bit, shifted left by one.
 * Collecting them oldest-first keeps the drain loop's dependency chains
 * short (an OR at a position, an add), and a batch of 48 goes out as
 * eight packets at once.
 */
static const UChar rev6[64] = {
#define R2(n) n, n + 32, n + 16, n + 48
#define R4(n) R2(n), R2(n + 8), R2(n + 4), R2(n + 12)
	R4(0), R4(2), R4(1), R4(3)
#undef R4
#undef R2
};

/* Packets for the @n (<= 6) bits in the low end of @bits. */
static inline UChar tnt8(ULong bits, UInt n)
{
	return (UChar)((rev6[bits & 63] >> (6 - n) | 1u << n) << 1);
}

static inline void store64(UChar *p, ULong v)
{
	__builtin_memcpy(p, &v, sizeof(v));
}

/* TNT_BATCH bits as packets in one store (the buffer has OUT_SLACK). */
static inline UInt tnt_batch(UChar *p, ULong bits)
{
	ULong w = bits & 0xffffff;

	/* Eight groups of six bits to the eight bytes, ... */
	w |= (bits >> 24 & 0xffffff) << 32;
	w = (w & 0x00000fff00000fffULL) | (w >> 12 & 0x00000fff00000fffULL) << 16;
	w = (w & 0x003f003f003f003fULL) | (w >> 6 & 0x003f003f003f003fULL) << 8;
	/* ... each reversed (oldest bit to bit 7) ... */
	w = (w & 0x0f0f0f0f0f0f0f0fULL) << 4 | (w >> 4 & 0x0f0f0f0f0f0f0f0fULL);
	w = (w & 0x3333333333333333ULL) << 2 | (w >> 2 & 0x3333333333333333ULL);
	w = (w & 0x5555555555555555ULL) << 1 | (w >> 1 & 0x5555555555555555ULL);
	/* ... then shifted to bits 6-1 behind a stop bit (bits 1-0 were
	 * zero: the byte's low bit takes its neighbour's zero). */
	store64(p, w >> 1 | 0x8080808080808080ULL);
	return TNT_BATCH / 6;
}

/* All @ntnt pending bits @tnt as packets at @p; returns the bytes. */
static inline UInt tnt_out(UChar *p, ULong tnt, UInt ntnt)
{
	UInt n = 0;

	for (; ntnt >= 6; ntnt -= 6, tnt >>= 6)
		p[n++] = tnt8(tnt, 6);
	if (ntnt)
		p[n++] = tnt8(tnt, ntnt);
	return n;
}

static void flush_tnt(struct vgpt_thread *t)
{
	t->len += tnt_out(t->buf + t->len, t->tnt, t->ntnt);
	t->tnt = 0;
	t->ntnt = 0;
}

static void put_tnt(struct vgpt_thread *t, UInt taken)
{
	t->tnt |= (ULong)taken << t->ntnt;
	if (++t->ntnt >= TNT_BATCH)
		flush_tnt(t);
}

/*
 * An IP packet of opcode @opc (TIP, FUP, ...) at @p, compressed against
 * @lip as tightly as possible (hwt_pt_ipc_choose), header and payload in
 * one little-endian store (the buffer has OUT_SLACK to spare). Returns
 * the bytes. The drain's path for indirect branches: hwt_pt_encode's
 * generality costs a few times more there.
 */
static inline UInt ip_out(UChar *p, struct hwt_pt_last_ip *lip, UChar opc,
			  Addr ip)
{
	uint64_t payload;
	UInt ipc = hwt_pt_ipc_choose_inline(lip, ip, &payload);
	UInt n = (UInt)hwt_pt_ipc_size(ipc);

	p[0] = (UChar)(opc | ipc << 5);
	__builtin_memcpy(p + 1, &payload, sizeof(payload));
	lip->ip = ip;
	lip->have_ip = 1;
	lip->suppressed = 0;
	return 1 + n;
}

/* An IP packet, compressed against the last IP as tightly as possible. */
static void put_ip(struct vgpt_thread *t, UChar type, Addr ip)
{
	static const UChar opc[] = {
		[HWT_PT_TIP] = 0x0d, [HWT_PT_TIP_PGE] = 0x11,
		[HWT_PT_TIP_PGD] = 0x01, [HWT_PT_FUP] = 0x1d,
	};

	flush_tnt(t);
	t->len += ip_out(t->buf + t->len, &t->lip, opc[type], ip);
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
	p.u.tsc = vgpt_icount & ((1ULL << 56) - 1);
	put(t, &p);
}

/* Tracing stops (syscall, signal: the IP is suppressed, as user-only
 * tracing has it) or leaves the filter ranges (the IP is the target). */
static void put_pgd(struct vgpt_thread *t, Bool has_ip, Addr ip)
{
	struct hwt_pt_packet p = { .type = HWT_PT_TIP_PGD };

	if (has_ip) {
		put_ip(t, HWT_PT_TIP_PGD, ip);
	} else {
		flush_tnt(t);
		p.u.ip.ipc = HWT_PT_IPC_SUPPRESSED;
		put(t, &p);
	}
	t->enabled = False;
}

static void set_lim(struct vgpt_thread *t)
{
	ULong d = t->psb_at - t->written;

	t->lim = d < OUT_BUF - OUT_SLACK ? (UInt)d : OUT_BUF - OUT_SLACK;
}

/*
 * PSB+. A decoder may start at any PSB with an empty return stack, so ours
 * is emptied too: no return is compressed against a call before the PSB.
 * @ip is where the flow is, for the FUP (only while enabled).
 */
static void put_psb(struct vgpt_thread *t, Addr ip)
{
	flush_tnt(t);
	if (t->psbs) {
		UInt cap = (UInt)(vgpt_clo_ring / vgpt_clo_psb) + 4;

		t->psbs[t->npsbs++ % cap] = t->written + t->len;
	}
	put_simple(t, HWT_PT_PSB);
	hwt_pt_last_ip_init(&t->lip);
	put_tsc(t);
	if (t->enabled) {
		put_simple(t, HWT_PT_MODE_EXEC);
		put_ip(t, HWT_PT_FUP, ip);
	}
	put_simple(t, HWT_PT_PSBEND);
	t->rs_n = 0;
	t->psb_due = False;
	t->psb_at = t->written + t->len + vgpt_clo_psb;
	set_lim(t);
}

static void enable(struct vgpt_thread *t, Addr ip)
{
	put_tsc(t);
	put_simple(t, HWT_PT_MODE_EXEC);
	put_ip(t, HWT_PT_TIP_PGE, ip);
	t->enabled = True;
}

/* Room for the next record's packets. */
static void out_room(struct vgpt_thread *t)
{
	if (t->len >= OUT_BUF - OUT_SLACK)
		vgpt_thread_flush(t);
	set_lim(t);
}

/* A PSB+ when one is due; @ip is where the flow is. Not while an exit
 * waits to learn whether it leaves the filter ranges (its packet comes
 * first). */
static void psb_if_due(struct vgpt_thread *t, Addr ip)
{
	if ((t->psb_due || t->written + t->len >= t->psb_at) && !t->pend)
		put_psb(t, ip);
}

static void push(struct vgpt_thread *t, Addr ret)
{
	t->rs[t->rs_top] = ret;
	t->rs_top = (t->rs_top + 1) % RETSTACK;
	if (t->rs_n < RETSTACK)
		t->rs_n++;
}

/*
 * A return that matches the top of the stack pops it and is compressed.
 * Decoders differ on the other returns: libipt and hwt leave their stack
 * alone, perf's decoder pops it. Emptying the stack there makes every
 * later compressed return read the same in both.
 */
static Bool pop_if(struct vgpt_thread *t, Addr next)
{
	UInt top = (t->rs_top + RETSTACK - 1) % RETSTACK;

	if (!t->rs_n || t->rs[top] != next) {
		t->rs_n = 0;
		return False;
	}
	t->rs_top = top;
	t->rs_n--;
	return True;
}

/* The packets of the instruction that ended a superblock execution. */
static void leave(struct vgpt_thread *t, UChar kind, Addr fall, Addr next)
{
	switch (kind) {
	case XK_NONE:
		break;
	case XK_TNT0:
	case XK_TNT1:
		put_tnt(t, kind == XK_TNT1);
		break;
	case XK_COND:
		put_tnt(t, next != fall);
		break;
	case XK_CALL:
		push(t, fall);
		break;
	case XK_ICALL:
		push(t, fall);
		put_ip(t, HWT_PT_TIP, next);
		break;
	case XK_IJMP:
		put_ip(t, HWT_PT_TIP, next);
		break;
	case XK_RET:
		if (pop_if(t, next))
			put_tnt(t, 1);
		else
			put_ip(t, HWT_PT_TIP, next);
		break;
	case XK_FAR:
		put_pgd(t, False, 0);
		break;
	case XK_NOREDIR:
		/* The bytes are no branch, yet Valgrind calls *%rax: an
		 * asynchronous transfer for a decoder. */
		put_ip(t, HWT_PT_FUP, fall);
		put_ip(t, HWT_PT_TIP, next);
		break;
	}
}

/* A superblock starts running (@sb; @nraddr is what the program jumped
 * to, != @sb for a Valgrind redirection, an asynchronous transfer). */
static void enter(struct vgpt_thread *t, Addr sb, Addr nraddr)
{
	if (!t->enabled) {
		enable(t, sb);
	} else if (nraddr != sb) {
		put_ip(t, HWT_PT_FUP, nraddr);
		put_ip(t, HWT_PT_TIP, sb);
	}
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

	if (t->tlen > TRUTH_BUF - 64) {
		vgpt_file_write(t->truth, t->tbuf, t->tlen);
		t->tlen = 0;
	}
	p = t->tbuf + t->tlen;
	p = put_hex(p, sb);
	*p++ = ' ';
	p = put_hex(p, n);
	*p++ = '\n';
	t->tlen = (UInt)(p - t->tbuf);
}

static void retired(struct vgpt_thread *t, Addr sb, UInt n)
{
	vgpt_icount += n;
	t->insns += n;
	if (t->tbuf && n)
		truth_line(t, sb, n);
}

/* ------------------------------------------------------------------ */
/* --vgpt-filter                                                       */
/* ------------------------------------------------------------------ */

/*
 * Whether an exit inside the ranges gives its usual packet or TIP.PGD
 * depends on where it goes, which the next record tells (its superblock's
 * XF_SB_IN), so the exit waits in t->pend until then.
 */
static void resolve(struct vgpt_thread *t, Bool target_in)
{
	const struct vgpt_xp *x = t->pend;

	if (!x)
		return;
	t->pend = NULL;
	if (target_in) {
		leave(t, x->kind, x->fall, t->pend_next);
		return;
	}
	/* The decoder sees the call before tracing stops: it pushes. */
	if (x->kind == XK_CALL || x->kind == XK_ICALL)
		push(t, x->fall);
	put_pgd(t, True, t->pend_next);
}

/* The flow is known to be at t->flow_ip: a waiting exit went there. */
static void settle(struct vgpt_thread *t)
{
	if (t->pend && t->flow_known)
		resolve(t, vgpt_in_filter(t->flow_ip));
}

static void record_filtered(struct vgpt_thread *t, const struct vgpt_xp *x,
			    Addr next)
{
	Bool in = (x->flags & XF_SB_IN) != 0;

	resolve(t, in);
	if (in)
		enter(t, x->sb, x->sbi->node.key);
	retired(t, x->sb, x->ninsn);
	if (!(x->flags & XF_SRC_IN) || !t->enabled)
		return;
	if (x->kind == XK_FAR) {
		leave(t, x->kind, x->fall, next);
	} else {
		t->pend = x;
		t->pend_next = next;
	}
}

/* ------------------------------------------------------------------ */
/* Draining the log                                                    */
/* ------------------------------------------------------------------ */

static inline ULong load64(const UChar *p)
{
	ULong v;

	__builtin_memcpy(&v, p, sizeof(v));
	return v;
}

/* A slow record at @p: its descriptor and where the flow goes. */
static inline const UChar *slow_record(const UChar *p,
				       const struct vgpt_xp **x, Addr *next)
{
	ULong r = load64(p);

	*x = R_XP(r);
	if (r & R_DYN) {
		*next = load64(p + 8);
		return p + 16;
	}
	*next = (*x)->next;
	return p + 8;
}

/* One desc record, the general way (state in *t). */
static void desc_record(struct vgpt_thread *t, const struct vgpt_xp *x,
			Addr next)
{
	enter(t, x->sb, x->sbi->node.key);
	retired(t, x->sb, x->ninsn);
	leave(t, x->kind, x->fall, next);
	if (t->len >= t->lim)
		out_room(t);
	psb_if_due(t, next);
	t->flow_ip = next;
	t->flow_known = True;
}

/* Every record the general way (--vgpt-truth, --vgpt-filter: all desc). */
static void drain_slow(struct vgpt_thread *t, const UChar *p,
		       const UChar *end)
{
	const struct vgpt_xp *x;
	Addr next;

	while (p < end) {
		tl_assert(!*p);
		p = slow_record(p, &x, &next);
		if (!vgpt_filtering) {
			desc_record(t, x, next);
			continue;
		}
		record_filtered(t, x, next);
		if (t->len >= t->lim)
			out_room(t);
		psb_if_due(t, next);
		t->flow_ip = next;
		t->flow_known = True;
	}
}

#define ONES 0x0101010101010101ULL
#define GATHER 0x0102040810204080ULL	/* bit 0 of byte k -> bit 56 + k */

/* Four fast records' TNT flags (low nibble) and taken flags (high): the
 * taken bits of the TNT ones, oldest first, and their number << 4. */
static UChar tnt_pack[256];

static void tnt_pack_init(void)
{
	for (UInt i = 0; i < 256; i++) {
		UInt bits = 0, n = 0;

		for (UInt k = 0; k < 4; k++)
			if (i >> k & 1)
				bits |= (i >> (4 + k) & 1) << n++;
		tnt_pack[i] = (UChar)(bits | n << 4);
	}
}

/*
 * A word of fast records (and zeros after the last one: padding before
 * an 8-byte record, or the end), without a branch per record: the
 * instructions they retired (their counts summed by a multiply), and
 * the TNT bits of the conditional branches, oldest in bit 0 (*@nbits of
 * them; the TNT and taken flags gathered into bytes by multiplies, then
 * packed by a table unless the TNT ones come first).
 */
static inline ULong fast_word(ULong w, UInt *bits, UInt *nbits)
{
	UInt tm = (UInt)(((w >> 1) & ONES) * GATHER >> 56);
	UInt gm = (UInt)(((w >> 2) & ONES) * GATHER >> 56) & tm;

	if (LIKELY(!(tm & (tm + 1)))) {
		*bits = gm;
		*nbits = (UInt)__builtin_ctz(~tm);
	} else {
		UInt e0 = tnt_pack[(tm & 15) | (gm & 15) << 4];
		UInt e1 = tnt_pack[(tm >> 4) | (gm >> 4) << 4];

		*bits = (e0 & 15) | (e1 & 15) << (e0 >> 4);
		*nbits = (e0 >> 4) + (e1 >> 4);
	}
	return ((w >> 3) & 0x1f * ONES) * ONES >> 56;
}

/* Two words of fast records in one go, as fast_word (SSE2, which every
 * x86-64 has: bit 7 of each byte gathered by pmovmskb, bytes summed by
 * psadbw). */
typedef char v16qi __attribute__((vector_size(16)));
typedef unsigned long long v2du __attribute__((vector_size(16)));

static inline ULong fast_words2(const UChar *p, UInt *bits, UInt *nbits)
{
	v2du v, c;
	UInt tm, gm;

	__builtin_memcpy(&v, p, sizeof(v));
	tm = (UInt)__builtin_ia32_pmovmskb128((v16qi)(v << 6));
	gm = (UInt)__builtin_ia32_pmovmskb128((v16qi)(v << 5)) & tm;
	c = (v2du)__builtin_ia32_psadbw128((v16qi)((v >> 3) & (0x1f * ONES)),
					   (v16qi){ 0 });
	if (LIKELY(!(tm & (tm + 1)))) {
		*bits = gm;
		*nbits = (UInt)__builtin_ctz(~tm);
	} else {
		UInt b = 0, n = 0;

		for (UInt i = 0; i < 16; i += 4) {
			UInt e = tnt_pack[(tm >> i & 15) | (gm >> i & 15) << 4];

			b |= (e & 15) << n;
			n += e >> 4;
		}
		*bits = b;
		*nbits = n;
	}
	return c[0] + c[1];
}

/*
 * A TIP to @ip at @p, the last IP being @last (@have: there is one): the
 * compression hwt_pt_ipc_choose picks, header and payload in one store
 * for canonical user addresses (16, 32 or 48 bits: ipc 1, 2 or 3, 2 * ipc
 * bytes of payload). Returns the bytes.
 */
static inline UInt tip_out(UChar *p, struct hwt_pt_last_ip *lip, Addr last,
			   Bool have, Addr ip)
{
	ULong diff = last ^ ip;
	UInt ipc;

	if (UNLIKELY(!have || ip >> 47)) {
		lip->ip = last;
		lip->have_ip = have;
		return ip_out(p, lip, 0x0d, ip);
	}
	ipc = 1 + (diff >> 16 != 0) + (diff >> 32 != 0);
	store64(p, (ULong)ip << 8 | 0x0d | ipc << 5);
	return 1 + 2 * ipc;
}

/*
 * The common case (no truth, no filter). Records of 8 bytes are aligned
 * to 8 and fast ones are followed by zeros (vgpt.h), so the log is read
 * a word at a time: a word is 8 fast records or fewer then zeros
 * (fast_word), or an inline record (no descriptor; its TIP is
 * encoded here), or a desc one (the general way). The position never
 * depends on what a word held (but for a desc record), so the loads run
 * ahead of the work. The output position, the pending TNT bits, the
 * instruction count and the last IP are locals: the byte stores of the
 * packets would make the compiler reload them from *t otherwise.
 */
static void drain_fast(struct vgpt_thread *t, const UChar *p,
		       const UChar *end, Addr now)
{
	UChar *buf = t->buf;
	UInt len = t->len, lim = t->lim, ntnt = t->ntnt;
	ULong tnt = t->tnt, n = 0;
	Bool enabled = t->enabled, known = t->flow_known;
	Bool have = t->lip.have_ip;
	Addr flow = t->flow_ip, last = t->lip.ip;
	const struct vgpt_xp *x;
	Addr next;

#define SAVE() do { t->len = len; t->tnt = tnt; t->ntnt = ntnt; \
		    vgpt_icount += n; t->insns += n; n = 0; \
		    t->flow_ip = flow; t->flow_known = known; \
		    t->lip.ip = last; t->lip.have_ip = have; } while (0)
#define LOAD() do { len = t->len; lim = t->lim; tnt = t->tnt; \
		    ntnt = t->ntnt; enabled = t->enabled; \
		    flow = t->flow_ip; known = t->flow_known; \
		    have = t->lip.have_ip; last = t->lip.ip; } while (0)
#define ROOM() do { if (UNLIKELY(len >= lim)) { \
		    SAVE(); out_room(t); LOAD(); } } while (0)
/* The same where the flow's IP is known: a PSB+ there if one is due
 * (else lim stays below len, and so out_room at every record, until the
 * end of the drain). */
#define ROOM_KNOWN() do { if (UNLIKELY(len >= lim)) { \
		    SAVE(); out_room(t); psb_if_due(t, flow); LOAD(); } \
		    } while (0)
/* Tracing was off: the thread resumed at flow (start_client_code, after
 * a syscall). */
#define ENABLE() do { if (UNLIKELY(!enabled)) { tl_assert(known); \
		    SAVE(); enable(t, flow); LOAD(); } } while (0)

	if (!tnt_pack[255])
		tnt_pack_init();
	while (p < end) {
		ULong w = load64(p);
		Addr a;

		p += 8;
		if (w & 1) {
			UInt bits, nbits;

			ENABLE();
			/* Not past the end: what is there is stale. */
			if (p < end && (*p & 1)) {
				n += fast_words2(p - 8, &bits, &nbits);
				p += 8;
			} else {
				n += fast_word(w, &bits, &nbits);
			}
			tnt |= (ULong)bits << ntnt;
			ntnt += nbits;
			known = False;
			if (UNLIKELY(ntnt >= TNT_BATCH)) {
				len += tnt_batch(buf + len, tnt);
				tnt >>= TNT_BATCH;
				ntnt -= TNT_BATCH;
				ROOM();
			}
			continue;
		}
		if (UNLIKELY(!(w & 0xff))) {
			p = slow_record(p - 8, &x, &next);
			SAVE();
			desc_record(t, x, next);
			LOAD();
			continue;
		}
		ENABLE();
		n += w >> 3 & R_NINSN_MAX;
		a = R_ADDR(w);
		switch (w >> 1 & 3) {
		case R_CALL:
			push(t, a);
			known = False;
			continue;
		case R_RET:
			if (UNLIKELY(p == end))
				a = vgpt_log_target(now, a);
			flow = a;
			known = True;
			if (!pop_if(t, a))
				break;
			/* A compressed return. */
			tnt |= 1ULL << ntnt;
			if (UNLIKELY(++ntnt >= TNT_BATCH)) {
				len += tnt_batch(buf + len, tnt);
				tnt = 0;
				ntnt = 0;
			}
			ROOM_KNOWN();
			continue;
		default:
			if (UNLIKELY(p == end))
				a = vgpt_log_target(now, a);
			flow = a;
			known = True;
			break;
		}
		len += tnt_out(buf + len, tnt, ntnt);
		tnt = 0;
		ntnt = 0;
		len += tip_out(buf + len, &t->lip, last, have, a);
		last = a;
		have = True;
		ROOM_KNOWN();
	}
	SAVE();
#undef ENABLE
#undef ROOM_KNOWN
#undef ROOM
#undef SAVE
#undef LOAD
}

/*
 * Turn the records of @t in @log (up to @end) into packets. @now: where the thread is (for the last record's target); @ip:
 * where its flow is now (the next superblock), 0 if not known here.
 * Here or on the drain thread.
 */
void vgpt_drain_log(struct vgpt_thread *t, const UChar *log,
		    const UChar *end, Addr now, Addr ip)
{
	if (end != log) {
		if (vgpt_filtering || t->tbuf)
			drain_slow(t, log, end);
		else
			drain_fast(t, log, end, now);
	}
	if (ip) {
		t->flow_ip = ip;
		t->flow_known = True;
		psb_if_due(t, ip);
	}
}

/*
 * Turn the log into packets, here and now (after what the drain thread
 * has). @ip: where the flow of the thread whose records these are is now
 * (the next superblock), 0 if not known here.
 */
void vgpt_drain(Addr ip)
{
	struct vgpt_thread *t = vgpt_cur;
	UChar *end, *log;
	Int k;

	vgpt_dt_wait_idle();
	vgpt_resume_ip = 0;
	if (!t)
		return;
	end = vgpt_log_get(t->tid);
	k = vgpt_log_index(end);
	tl_assert(k >= 0);
	log = vgpt_logs[k];
	/* Not the log being written: the position a signal frame saved
	 * (an empty log, pre_deliver_signal) came back with the return from
	 * the handler. */
	tl_assert(log == vgpt_log || end == log);
	vgpt_log_reset(t->tid);
	vgpt_dt_count_drained(end - log);
	vgpt_drain_log(t, log, end, VG_(get_IP)(t->tid), ip);
}

/* The log of the running thread is full (@ip: as for vgpt_drain): to the
 * drain thread, or drained here. */
void vgpt_log_full(Addr ip)
{
	if (!vgpt_dt_hand_over(vgpt_cur, ip))
		vgpt_drain(ip);
	vgpt_dt_choose();
}

/* ------------------------------------------------------------------ */
/* Events outside translated code (the log is drained)                 */
/* ------------------------------------------------------------------ */

/*
 * The image changed under code that may have run (munmap, code rewritten):
 * every thread starts a new PSB+ before it runs more, so that a decoder
 * that switches images by time has a TSC right there. @ip: as for
 * vgpt_drain.
 */
void vgpt_image_changed(Addr ip)
{
	struct vgpt_thread *t = vgpt_cur;

	vgpt_drain(ip);
	for (ThreadId i = 0; i < VG_N_THREADS; i++)
		if (vgpt_threads[i])
			vgpt_threads[i]->psb_due = True;
	if (t && (t->flow_known || !t->enabled)) {
		settle(t);
		put_psb(t, t->flow_ip);
	}
}

/* @t runs again (at t->flow_ip); @other_ran: another thread ran since. */
void vgpt_switch_in(struct vgpt_thread *t, Bool other_ran)
{
	settle(t);
	if (t->psb_due)
		put_psb(t, t->flow_ip);
	else if (other_ran && t->enabled)
		put_tsc(t);
}

/* How many instructions of translation @s retired before the one at @ip
 * (-1: @ip is not one of its instructions). */
static Int retired_before(const struct vgpt_sbi *s, Addr ip)
{
	for (UInt i = 0; i < s->nimarks; i++)
		if (s->sb + s->ioff[i] == ip)
			return s->ibefore[i];
	return -1;
}

enum { SB_MAX_BYTES = 4096 };	/* more than VEX puts in a superblock */

/*
 * The translation a synchronous signal at @ip stopped after *@k > 0
 * instructions, if it did: the one at the flow's position when that is
 * known, else the only one that has @ip as a later instruction. Unknown
 * only costs the clock those instructions (the packets need no more than
 * the FUP): with --vgpt-truth every record is slow, the flow known.
 */
static const struct vgpt_sbi *stopped_in(const struct vgpt_thread *t,
					 Addr ip, Int *k)
{
	const struct vgpt_sbi *s, *found = NULL;

	if (t->flow_known) {
		s = t->flow_ip != ip ? vgpt_sbi_find(t->flow_ip) : NULL;
		*k = s ? retired_before(s, ip) : -1;
		return *k > 0 ? s : NULL;
	}
	for (Addr a = ip - 1; a && ip - a < SB_MAX_BYTES; a--) {
		Int n;

		s = vgpt_sbi_find(a);
		if (!s || (n = retired_before(s, ip)) <= 0)
			continue;
		if (found)
			return NULL;
		found = s;
		*k = n;
	}
	return found;
}

/*
 * A signal is delivered to @t at @ip: an asynchronous transfer (FUP where
 * the thread was, tracing off until the handler's first block). A
 * synchronous signal stops a superblock in the middle: the instructions
 * before the faulting one retired.
 */
void vgpt_async(struct vgpt_thread *t, Addr ip)
{
	Int k = 0;
	const struct vgpt_sbi *s = stopped_in(t, ip, &k);

	if (s) {
		if (vgpt_filtering) {
			resolve(t, s->in_filter);
			if (s->in_filter)
				enter(t, s->sb, s->node.key);
		} else {
			enter(t, s->sb, s->node.key);
		}
		retired(t, s->sb, (UInt)k);
	}
	t->flow_ip = ip;
	t->flow_known = True;
	if (vgpt_filtering)
		resolve(t, vgpt_in_filter(ip));
	if (t->enabled) {
		put_ip(t, HWT_PT_FUP, ip);
		put_pgd(t, False, 0);
	}
	out_room(t);
}

/* ------------------------------------------------------------------ */
/* Threads and their output                                            */
/* ------------------------------------------------------------------ */

struct vgpt_thread *vgpt_thread_new(ThreadId tid, Bool append)
{
	struct vgpt_thread *t = VG_(calloc)("vgpt.thread", 1, sizeof(*t));
	HChar *path;

	t->tid = tid;
	t->os_tid = VG_(gettid)();
	t->buf = VG_(malloc)("vgpt.buf", OUT_BUF);
	path = vgpt_path("%s.%d.pt", vgpt_clo_out, t->os_tid);
	t->file = vgpt_file_open(path, append);
	VG_(free)(path);
	if (vgpt_clo_ring) {
		t->ring = VG_(malloc)("vgpt.ring", vgpt_clo_ring);
		t->psbs = VG_(malloc)("vgpt.psbs", sizeof(*t->psbs) *
				      (vgpt_clo_ring / vgpt_clo_psb + 4));
	}
	if (vgpt_clo_truth) {
		t->tbuf = VG_(malloc)("vgpt.truth", TRUTH_BUF);
		path = vgpt_path("%s.%d.truth", vgpt_clo_out, t->os_tid);
		t->truth = vgpt_file_open(path, append);
		VG_(free)(path);
	}
	hwt_pt_last_ip_init(&t->lip);
	put_psb(t, 0);
	vgpt_stat_threads++;
	vgpt_sb_line("thread %llu %d %d", vgpt_icount, VG_(getpid)(),
		     t->os_tid);
	return t;
}

/* The bytes in the buffer go to the file, or to the ring. */
void vgpt_thread_flush(struct vgpt_thread *t)
{
	ULong n = t->len;

	if (t->ring) {
		const UChar *p = t->buf;

		while (n) {
			ULong at = (t->written + t->len - n) % vgpt_clo_ring;
			ULong k = vgpt_clo_ring - at < n ?
				  vgpt_clo_ring - at : n;

			VG_(memcpy)(t->ring + at, p, k);
			p += k;
			n -= k;
		}
	} else if (n) {
		vgpt_file_write(t->file, t->buf, n);
	}
	t->written += t->len;
	t->len = 0;
	set_lim(t);
	if (t->tlen) {
		vgpt_file_write(t->truth, t->tbuf, t->tlen);
		t->tlen = 0;
	}
}

/*
 * --vgpt-ring: write what the ring keeps, from its first PSB on, in place
 * of what an earlier snapshot of this image wrote.
 */
void vgpt_thread_snapshot(struct vgpt_thread *t)
{
	UInt cap = (UInt)(vgpt_clo_ring / vgpt_clo_psb) + 4;
	ULong from, keep, best = t->written;

	if (!t->ring)
		return;
	vgpt_thread_flush(t);
	keep = t->written > vgpt_clo_ring ? t->written - vgpt_clo_ring : 0;
	for (UInt i = t->npsbs > cap ? t->npsbs - cap : 0; i < t->npsbs; i++) {
		ULong at = t->psbs[i % cap];

		if (at >= keep && at < best)
			best = at;
	}
	vgpt_file_truncate(t->file, 0);
	for (from = best; from < t->written;) {
		ULong at = from % vgpt_clo_ring;
		ULong k = vgpt_clo_ring - at;

		if (k > t->written - from)
			k = t->written - from;
		vgpt_file_write(t->file, t->ring + at, k);
		from += k;
	}
}

/* Free @t without writing anything (a forked child's copy). */
void vgpt_thread_forget(struct vgpt_thread *t)
{
	vgpt_file_close(t->file);
	if (t->truth)
		vgpt_file_close(t->truth);
	VG_(free)(t->buf);
	if (t->ring) {
		VG_(free)(t->ring);
		VG_(free)(t->psbs);
	}
	if (t->tbuf)
		VG_(free)(t->tbuf);
	VG_(free)(t);
}

/* The thread ended (the log is drained): write everything. */
void vgpt_thread_end(struct vgpt_thread *t)
{
	if (vgpt_filtering)
		resolve(t, False);
	flush_tnt(t);
	vgpt_thread_flush(t);
	vgpt_thread_snapshot(t);
	vgpt_stat_bytes += t->file->size;
	vgpt_stat_made += t->written;
	vgpt_sb_line("exit %llu %d %d", vgpt_icount, VG_(getpid)(),
		     t->os_tid);
	vgpt_thread_forget(t);
}

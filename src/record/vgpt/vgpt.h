/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vgpt internals shared by its parts:
 *   vgpt_main.c    tool interface, options, threads, syscalls, signals
 *   vgpt_instr.c   instrumentation: the exit log written by plain IR
 *   vgpt_trace.c   the log turned into PT packets; signals; threads' output,
 *                  truth and rings
 *   vgpt_image.c   code mappings in the sideband, saved bytes, SMC, munmap
 *   vgpt_out.c     files, write errors, sideband lines
 *   vgpt_filter.c  --vgpt-filter: which code is inside the traced ranges
 * README.md in this folder describes the files written and the model.
 */
#ifndef VGPT_H
#define VGPT_H

#include "pub_tool_basics.h"
#include "pub_tool_hashtable.h"
#include "pub_tool_tooliface.h"

#include <hwt/pt.h>

enum {
	OUT_BUF = 1 << 18,	/* per-thread packet buffer */
	OUT_SLACK = 256,	/* more than one log record can emit */
	TRUTH_BUF = 1 << 16,
	RETSTACK = 64,		/* as deep as the hardware's (and decoders') */
	TNT_BATCH = 48,		/* pending TNT bits: 8 TNT-8 packets */
	LOG_BYTES = 1 << 14,	/* exit log drained at 16 KiB: stays in L1 */
	LOG_BYTES_DT = 1 << 18,	/* handed to the drain thread at 256 KiB */
	/*
	 * Only superblocks that can close a loop check for a full log
	 * (vgpt_instr.c); the others rely on the scheduler: Valgrind leaves
	 * translated code (and we drain, start_client_code) at the latest
	 * after SCHEDULING_QUANTUM (100000) superblocks, each at most 24
	 * bytes (7 to align, 16). The part beyond the limit is touched only
	 * in that case.
	 */
	LOG_ROOM = LOG_BYTES_DT + 24 * 100000 + 4096,
	LOG_PAD = 16,		/* a fast record's zeros at the very end */
	NLOGS = 6,		/* logs: written, drained, spare */
};

/*
 * The exit log is a byte stream of records, one per superblock execution
 * (two for an indirect call):
 *
 *   fast:   1 byte, bit 0 set: a plain jump (bit 1 clear) or a
 *           conditional branch of known direction (bit 1 set, bit 2
 *           taken) that ended @ninsn <= 31 instructions (bits 3-7).
 *           Nothing else is needed to encode it.
 *   inline: 8 bytes little endian, bit 0 clear, bits 1-2 the type (not
 *           0), bits 3-7 @ninsn <= 31, bits 8-63 an address, its bits
 *           63-56 those of bit 55 (every canonical address fits; the
 *           whole target of the log's last record is the thread's IP,
 *           vgpt_log_target()):
 *             R_CALL  a direct call; the address is the return address
 *             R_RET   a return; the address is its target
 *             R_JMP   an indirect jump; the address is its target
 *           An indirect call is R_CALL then R_JMP with @ninsn 0.
 *   desc:   8 bytes little endian, low byte 0: bits 8-55 the descriptor's
 *           address, bit 56 (R_DYN) the target follows in 8 more bytes.
 *           Everything else: syscalls, redirections, side exits, more
 *           than 31 instructions.
 *
 * Inline and desc records start at a multiple of 8. A fast record is
 * written as 8 bytes, the record and zeros, so the bytes skipped to get
 * to an 8-byte record are zero, as are those after the last record up to
 * the next multiple of 8 (what comes after is not read), without ever
 * clearing the log: the drain reads words, fast records (then zeros) or
 * an 8-byte record.
 * --vgpt-truth and --vgpt-filter use desc records only (they need the
 * superblock of every record).
 */
#define R_NINSN_MAX	31
#define R_XP(r)		((const struct vgpt_xp *)((r) >> 8 & ((1ULL << 48) - 1)))
#define R_DYN		(1ULL << 56)
enum { R_CALL = 1, R_RET = 2, R_JMP = 3 };
#define R_INLINE(type, ninsn)	((ULong)(type) << 1 | (ULong)(ninsn) << 3)
#define R_ADDR(r)	((Addr)((Long)(r) >> 8))

/*
 * What the instruction that ended a superblock execution means for PT. A
 * conditional branch whose direction is known at translation time (every
 * exit with a constant target) is XK_TNT0 or XK_TNT1.
 */
enum xkind {
	XK_NONE = 0,	/* no branch, direct jump, or not completed */
	XK_TNT0 = 1,	/* jcc, loop*, jrcxz: not taken */
	XK_TNT1 = 2,	/* ... taken (the drain relies on 0, 1, 2) */
	XK_COND,	/* ... direction known only at run time */
	XK_CALL,	/* direct call: push only */
	XK_ICALL,	/* indirect call: push + TIP */
	XK_IJMP,	/* indirect jump: TIP */
	XK_RET,		/* near return: TNT (compressed) or TIP */
	XK_FAR,		/* syscall / sysenter / int: TIP.PGD, IP suppressed */
	XK_NOREDIR,	/* Valgrind's call-noredir sequence: FUP + TIP */
};

/* Exit flags. */
enum {
	XF_DYN = 1,	/* the target follows in the log */
	XF_REDIR = 2,	/* the superblock is a Valgrind redirection */
	XF_SRC_IN = 4,	/* --vgpt-filter: the exiting instruction is inside */
	XF_SB_IN = 8,	/* --vgpt-filter: the superblock starts inside */
};

struct vgpt_sbi;

/*
 * One way out of one translation: what the log records (its address).
 * @ninsn is the number of guest instructions that retired when the flow
 * leaves this way (the exiting instruction itself only if it completed: a
 * rep iteration or a fault exits to the instruction itself).
 */
struct vgpt_xp {
	Addr sb;		/* superblock start (the redirected address) */
	Addr next;		/* the target, unless XF_DYN */
	Addr fall;		/* address after the exiting instruction */
	const struct vgpt_sbi *sbi;
	UInt ninsn;
	UChar kind;		/* enum xkind */
	UChar flags;
};

/*
 * One translation: its exits and its instructions (for an execution that
 * a synchronous signal cuts short). Keyed by the guest address it was
 * made for (nraddr), as Valgrind discards it.
 */
struct vgpt_sbi {
	VgHashNode node;	/* key: nraddr */
	Addr sb;
	UInt nimarks;
	UInt nxp;
	struct vgpt_xp *xp;	/* nxp, after the instruction table */
	UShort *ioff;		/* instruction start - sb */
	UShort *ibefore;	/* instructions retired before it */
	UChar in_filter;	/* XF_SB_IN of its exits */
};

/* The per-thread PT encoder state. */
struct vgpt_thread {
	ThreadId tid;
	Int os_tid;
	Bool enabled;		/* TIP.PGE sent, no TIP.PGD since */
	Bool psb_due;		/* the image changed: PSB+ before more */
	Bool dead;		/* its trace file failed */
	ULong tnt;		/* pending TNT bits, oldest in bit 0 ... */
	UInt ntnt;		/* ... fewer than TNT_BATCH of them */
	struct hwt_pt_last_ip lip;
	UInt rs_top;		/* return stack: ring of RETSTACK entries */
	UInt rs_n;
	Addr rs[RETSTACK];
	Addr flow_ip;		/* where the flow is (next block) ... */
	Bool flow_known;	/* ... if known (not after a fast record) */
	/* --vgpt-filter: an exit whose packet waits for its target's side */
	const struct vgpt_xp *pend;
	Addr pend_next;

	UChar *buf;
	UInt len;
	UInt lim;		/* len at which out_room() must act */
	ULong written;		/* stream offset of buf[0] */
	ULong psb_at;		/* stream offset where the next PSB+ is due */
	ULong insns;		/* instructions retired by this thread */

	struct vgpt_file *file;
	/* --vgpt-ring */
	UChar *ring;
	ULong *psbs;		/* stream offsets of the last PSBs */
	UInt npsbs;
	/* --vgpt-truth */
	struct vgpt_file *truth;
	HChar *tbuf;
	UInt tlen;
};

/* An output file: errors are reported once, with its name. */
struct vgpt_file {
	Bool failed;
	Bool shared;		/* others append too: never cut back */
	ULong size;		/* bytes written (after the open offset) */
	ULong base;		/* file offset where our bytes start */
	HChar *path;
};

/* Options. */
extern const HChar *vgpt_clo_out;
extern Bool vgpt_clo_truth;
extern ULong vgpt_clo_ring;
extern ULong vgpt_clo_psb;
extern Bool vgpt_continued;	/* this image follows an execve */

/* State of the run. */
extern ULong vgpt_icount;		/* the clock: see README "Clock" */
extern struct vgpt_thread **vgpt_threads;	/* by ThreadId */
extern struct vgpt_thread *vgpt_cur;	/* whose records the log holds */
/* Trace bytes in the files, made (more with --vgpt-ring), lost. */
extern ULong vgpt_stat_bytes, vgpt_stat_made, vgpt_stat_lost;
extern ULong vgpt_stat_threads;

/* The exit log: written by translated code, read by vgpt_drain() (or the
 * drain thread, vgpt_dt.c). Where the next record goes and where the log
 * is full are in the running thread's guest state. There are NLOGS of
 * them (LOG_ROOM + LOG_PAD bytes each);
 * the one written now is vgpt_log, full at vgpt_log_bytes. */
extern UChar *vgpt_logs[NLOGS];
extern UChar *vgpt_log;
extern UInt vgpt_log_bytes;
UChar *vgpt_log_get(ThreadId tid);
void vgpt_log_reset(ThreadId tid);	/* empty: at vgpt_log */
Int vgpt_log_index(const UChar *p);	/* of the log @p is in, or -1 */
/* How far the position of @tid is into vgpt_log, or -1 if it is not in
 * it (a position a signal frame saved, see vgpt_drain). */
Long vgpt_log_used(ThreadId tid);
/*
 * The whole target of the log's last record, a return or indirect jump to
 * @a (56 bits of it), the thread being at @ip: it is there, unless a
 * signal stopped it in a later superblock (which the low 56 bits tell);
 * only a non-canonical target loses bits, and nothing runs after a jump
 * there: the fault at it is delivered (pre_deliver_signal drains).
 */
static inline Addr vgpt_log_target(Addr ip, Addr a)
{
	return (ip ^ a) << 8 ? a : ip;
}

/* vgpt_instr.c */
IRSB *vgpt_instrument(VgCallbackClosure *closure, IRSB *in,
		      const VexGuestLayout *layout,
		      const VexGuestExtents *vge,
		      const VexArchInfo *archinfo_host,
		      IRType gWordTy, IRType hWordTy);
void vgpt_instr_init(void);
void vgpt_discard(Addr orig_addr, VexGuestExtents vge);
extern Addr vgpt_xlate_ip;
const struct vgpt_sbi *vgpt_sbi_find(Addr nraddr);

/* vgpt_trace.c */
void vgpt_drain(Addr ip);
void vgpt_log_full(Addr ip);
/* Where the running thread resumes after a syscall whose log went to the
 * drain thread (0: it did not, or something drained since). */
extern Addr vgpt_resume_ip;
void vgpt_drain_log(struct vgpt_thread *t, const UChar *log,
		    const UChar *end, Addr now, Addr ip);

/* vgpt_dt.c: the drain thread */
enum { DT_NO, DT_AUTO, DT_YES };	/* --vgpt-drain-thread */
extern Int vgpt_clo_drain_thread;
extern ULong vgpt_clo_drain_window;	/* log bytes a measurement takes */
extern ULong vgpt_stat_handed;		/* logs drained on the thread */
extern ULong vgpt_stat_full_waits;	/* ... the program waited for a free log */
extern ULong vgpt_stat_windows[2];	/* windows inline, on the thread */
extern ULong vgpt_stat_rate[2];		/* their last cost (ticks/KiB) */
void vgpt_dt_start(void);
void vgpt_dt_syscall_begin(void);
void vgpt_dt_syscall_end(void);
void vgpt_dt_choose(void);
void vgpt_dt_count_drained(Long bytes);
Bool vgpt_dt_hand_over(struct vgpt_thread *t, Addr ip);
void vgpt_dt_wait_idle(void);
void vgpt_dt_forked(void);
struct vgpt_thread *vgpt_thread_new(ThreadId tid, Bool append);
void vgpt_thread_end(struct vgpt_thread *t);
void vgpt_thread_forget(struct vgpt_thread *t);
void vgpt_thread_flush(struct vgpt_thread *t);
void vgpt_thread_snapshot(struct vgpt_thread *t);
void vgpt_switch_in(struct vgpt_thread *t, Bool other_ran);
void vgpt_async(struct vgpt_thread *t, Addr ip);
void vgpt_image_changed(Addr ip);

/* vgpt_image.c */
void vgpt_note_code(Addr a);
void vgpt_check_code(const VexGuestExtents *vge);
void vgpt_unmapped(Addr a, SizeT len);
void vgpt_protect(Addr a, SizeT len, Bool w);

/* vgpt_out.c */
struct vgpt_file *vgpt_file_open(const HChar *path, Bool append);
void vgpt_file_write(struct vgpt_file *f, const void *p, ULong n);
void vgpt_file_truncate(struct vgpt_file *f, ULong size);
void vgpt_file_close(struct vgpt_file *f);
void vgpt_sb_open(Bool append);
void vgpt_sb_line(const HChar *fmt, ...) PRINTF_CHECK(1, 2);
void vgpt_sb_flush(void);
void vgpt_sb_forget(void);
HChar *vgpt_path(const HChar *fmt, ...) PRINTF_CHECK(1, 2);

/* vgpt_filter.c */
extern Bool vgpt_filtering;
Bool vgpt_filter_parse(const HChar *arg);
Bool vgpt_in_filter(Addr a);
void vgpt_filter_report(void);

#endif

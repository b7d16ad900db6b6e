/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hwt analysis layer: answers about a trace, above the flow layer.
 *
 *   hwt_an_last_   "how did I get here": decode a thread's trace to its
 *                  end and keep the last N branches and the call stack
 *                  there (with signal handlers as frames of their own).
 *   hwt_an_lines_  source file and line of an address, from the DWARF
 *                  line tables (elfutils libdw) of the file mapped there.
 *   hwt_an_walks_  the branches inside a block and its last instruction,
 *                  from a walk of its instructions kept per block.
 *   hwt_an_cover_  source-line coverage: the blocks a trace ran counted,
 *                  their lines' counts as an lcov tracefile.
 *
 * Prefix: hwt_an_.
 */
#ifndef HWT_ANALYSIS_H
#define HWT_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <hwt/flow.h>
#include <hwt/image.h>

#ifdef __cplusplus
extern "C" {
#endif

enum hwt_an_kind {
	HWT_AN_COND = 1,	/* a taken conditional branch */
	HWT_AN_JUMP,		/* jmp (direct or indirect) */
	HWT_AN_CALL,
	HWT_AN_RETURN,
	HWT_AN_SYSCALL,		/* syscall, int: into the kernel and back */
	HWT_AN_SIGNAL,		/* an interrupt: a signal handler runs */
	HWT_AN_SIGRETURN,	/* back from a handler to where it interrupted */
	HWT_AN_LOST,		/* trace lost (overflow) or a decode error */
	HWT_AN_INTERRUPT,	/* the kernel ran (an interrupt, a switch to
				 * another thread) and the thread went on
				 * where it was */
};

/* One branch. @to is 0 while unknown (the trace ends in the kernel). */
struct hwt_an_branch {
	uint64_t from, to;
	uint64_t tsc;		/* the decoder's time at the branch */
	uint8_t kind;		/* enum hwt_an_kind */
	uint8_t have_tsc;
	int error;		/* HWT_AN_LOST: a negative HWT_ERR_*, or 0 */
	uint32_t pid, tid;	/* the thread's (hwt_an_last_task()), or 0 */
};

/* A frame of the call stack at the end of the trace. */
struct hwt_an_frame {
	uint64_t site;		/* the call, or the interrupted instruction */
	uint64_t entry;		/* the first instruction run after it */
	uint64_t ret;		/* where it returns (a signal frame: resumes) */
	uint8_t kind;		/* HWT_AN_CALL or HWT_AN_SIGNAL */
};

/*
 * What a walk of a block's instructions tells: the direct calls and jumps
 * it runs on over (each a taken branch), and its last instruction (the
 * one whose branch the next block says). Walks are kept per block (image
 * id and generation, first IP, length, mode) and replayed: hot blocks are
 * walked once.
 */
struct hwt_an_inner {
	uint64_t from, to;	/* the call or jump, and its target */
	uint64_t next;		/* the instruction after it */
	uint8_t call;		/* a call (else a jump) */
};

struct hwt_an_walk {
	const struct hwt_an_inner *inner;	/* valid until the next call */
	uint32_t ninner;
	uint32_t ninsn;		/* instructions walked (all but at an error) */
	uint64_t last;		/* the last instruction walked */
	uint8_t last_size;	/* the block's last instruction's size and */
	uint8_t last_iclass;	/* class (enum hwt_insn_class), if walked */
	/* Each instruction's size, @ninsn of them (instruction lines):
	 * valid until the next call. */
	const uint8_t *sizes;
};

/*
 * Where the instruction after the @i-th of walk @w starts, the @i-th
 * starting at @ip: at its end, or, if it is the next of the walk's direct
 * calls and jumps (*@k, from 0 at the block's first), at its target.
 */
static inline uint64_t hwt_an_walk_next(const struct hwt_an_walk *w,
					uint32_t i, uint64_t ip, uint32_t *k)
{
	if (*k < w->ninner && w->inner[*k].from == ip)
		return w->inner[(*k)++].to;
	return ip + w->sizes[i];
}

struct hwt_an_walks;

struct hwt_an_walks *hwt_an_walks_new(void);
void hwt_an_walks_delete(struct hwt_an_walks *w);

/*
 * The walk of block @b (from a decoder whose image is @image) into *@out:
 * 0, or a negative HWT_ERR_* if an instruction cannot be read (then *@out
 * has the instructions before it, not kept) or there is no memory.
 */
int hwt_an_walks_get(struct hwt_an_walks *w, const struct hwt_image *image,
		     const struct hwt_block *b, struct hwt_an_walk *out);

/*
 * Start loading where hwt_an_walks_get() will look for @b's walk: a
 * caller that has the next blocks in hand (a batch) and work to do for
 * each asks for one a few blocks ahead, so that the table's cache miss
 * (nearly every lookup's cost on a large trace) overlaps that work.
 */
void hwt_an_walks_prefetch(const struct hwt_an_walks *w,
			   const struct hwt_image *image,
			   const struct hwt_block *b);

struct hwt_an_last_config {
	size_t nbranches;	/* how many of the last branches to keep */
	size_t max_depth;	/* call stack frames kept (deepest dropped) */
	uint32_t flags;		/* HWT_AN_* */
};

/* Walk every block's instructions: no walk kept and replayed (testing). */
#define HWT_AN_NO_MEMO 0x1u
/*
 * The blocks end at every branch (their decoder's HWT_BLK_END_ON_CALL |
 * HWT_BLK_END_ON_JUMP): nothing inside one branches, and a block's last
 * instruction is told by its end_ip, size and class, so that only
 * truncated blocks and those the decoder's cache cut short (class
 * HWT_IC_UNKNOWN) are walked. The same branches, without a lookup of
 * the kept walks per block (a cache miss each on a large trace).
 */
#define HWT_AN_BRANCH_ENDS 0x2u

struct hwt_an_last;

struct hwt_an_last *hwt_an_last_new(const struct hwt_an_last_config *c);
void hwt_an_last_delete(struct hwt_an_last *l);

/*
 * Where the thread is known to have stopped (the instruction that
 * faulted): if the trace ends before it on a path that needs no trace
 * (straight code, direct jumps and calls), that path is added.
 */
void hwt_an_last_stop(struct hwt_an_last *l, uint64_t ip);

/*
 * A CPU's trace (perf record -a): the thread running from here on, as the
 * sideband says. Each thread has a call stack of its own (the one at the
 * end is the last thread's) and the branches name their thread. Call it
 * from @sync (below), which is asked before each event and block. Without
 * it, all is one thread's (pid and tid 0). 0, or -HWT_ERR_NOMEM.
 */
int hwt_an_last_task(struct hwt_an_last *l, uint32_t pid, uint32_t tid);

/*
 * A CPU's trace: keep the runs ("slices") of thread @pid/@tid on this
 * CPU, from hwt_an_last_task() naming it to its naming another or the
 * end: its time at the start, the returns it made to frames it did not
 * push in the run (below them: its callers when it came to the CPU), and
 * the frames it pushed that are still open at the run's end. A thread
 * that moves between CPUs has its runs in several CPUs' traces; its
 * call stack is theirs composed in time order (hwt_an_slices_stack()).
 * 0, or -HWT_ERR_NOMEM.
 */
int hwt_an_last_watch(struct hwt_an_last *l, uint32_t pid, uint32_t tid);

struct hwt_an_slice {
	uint32_t pid, tid;
	uint64_t tsc;		/* at its start, if @have_tsc */
	uint8_t have_tsc;
	/* the returns below the run's own frames: kind and ret, in order */
	struct hwt_an_frame *pops;
	size_t npops;
	/* its frames open at its end, outermost first; @dropped more
	 * were pushed below them than max_depth keeps */
	struct hwt_an_frame *frames;
	size_t nframes, dropped;
};

/* The slices of the threads watched, in order (the last maybe still
 * open: as far as decoded); valid until the next call of the analysis. */
size_t hwt_an_last_slices(struct hwt_an_last *l,
			  const struct hwt_an_slice **s);

/*
 * A thread's call stack from its slices in time order (of all CPUs'
 * traces): each slice's returns applied to the stack the ones before
 * made (a return goes back to the innermost frame of its kind that
 * returns there; none: nothing happens, as one trace has it), then its
 * frames pushed. The innermost @max frames into @out, innermost first
 * (as hwt_an_last_stack()); returns their number, *@dropped the frames
 * left out below. (A return that went past frames the slice pushed
 * itself, a longjmp to a caller on another CPU, leaves those.)
 */
size_t hwt_an_slices_stack(const struct hwt_an_slice *const *slices,
			   size_t n, struct hwt_an_frame *out, size_t max,
			   size_t *dropped);

/*
 * Decode @cfg's trace with @image to its end. @sync (may be NULL) is
 * called as perf.data input needs to bring the decoder's image to its
 * time (the blocks are walked in the image the decoder has then): before
 * each event, and before a block where the decoder's time
 * (hwt_blk_time()) may have moved since the last call, or its offset
 * (hwt_blk_get_offset()) is what @sync set *@quiet to or more (*@quiet
 * is 0 before the call: asked before every block); the blocks between
 * come in batches (hwt_blk_next_batch_until()). A negative value from it
 * stops the decode, which returns it; 1 ends the decode there as if the
 * trace ended (the last branch goes to where the decoder stands: a time
 * reached, say), and it returns 1. Decode errors are kept as
 * HWT_AN_LOST branches (decoding goes on at the next PSB). Returns 0 (1:
 * @sync ended it) or a negative HWT_ERR_* (out of memory), or @sync's.
 *
 * A long trace may come in pieces, each starting at a PSB, one call each
 * in order: @next is the offset in this piece of the PSB where the next
 * one starts (its PSB+ must be in this piece), 0 for the last piece. A
 * piece's decode stops at that PSB+, after the blocks up to its IP; the
 * next piece's decoder starts with the time, exec mode and TSX state
 * this one had there, as one decoder goes on over the PSB.
 */
int hwt_an_last_run(struct hwt_an_last *l, const struct hwt_blk_config *cfg,
		    struct hwt_image *image, uint64_t next,
		    int (*sync)(void *ctx, struct hwt_blk_decoder *dec,
				uint64_t *quiet),
		    void *ctx);

/*
 * Decode with @dec, the caller's, not with a decoder of its own for each
 * piece: each run sets its piece's trace and image on it
 * (hwt_blk_set_trace(), hwt_blk_set_image()), so that code it decoded
 * for other streams (the same program's other processes, the libraries
 * they share; hwt_bcache_carry()) is not decoded again. The caller
 * releases its image where a stream's process ends
 * (hwt_blk_release_image()) and deletes it. NULL: a decoder of its own.
 */
void hwt_an_last_lend(struct hwt_an_last *l, struct hwt_blk_decoder *dec);

/*
 * Keep the blocks' walks in @walks (hwt_an_walks_get()), lent until
 * called again (NULL: a table of its own, made when first needed): the
 * runs of all the streams of a perf.data share one (3 MiB of zeroed
 * memory each otherwise, a stream being often a short process). Its
 * walks are keyed by image: another stream's never stand for this one's.
 */
void hwt_an_last_use_walks(struct hwt_an_last *l, struct hwt_an_walks *walks);

/* The last branches, oldest first (valid until the next call). */
size_t hwt_an_last_branches(struct hwt_an_last *l,
			    const struct hwt_an_branch **b);
/* The call stack at the end, innermost first; *@dropped frames deeper
 * than max_depth were left out. */
size_t hwt_an_last_stack(struct hwt_an_last *l,
			 const struct hwt_an_frame **f, size_t *dropped);

struct hwt_an_last_end {
	uint64_t ip;		/* the last instruction decoded */
	uint64_t tsc;		/* the time at the end */
	uint64_t insns;		/* instructions decoded */
	uint64_t errors;	/* decode errors */
	uint8_t have_ip, have_tsc;
};

void hwt_an_last_end(const struct hwt_an_last *l, struct hwt_an_last_end *e);

/* ---- source lines ---- */

struct hwt_an_lines;

struct hwt_an_lines *hwt_an_lines_new(void);
void hwt_an_lines_delete(struct hwt_an_lines *s);

/*
 * Where the separate debug files of files without DWARF are:
 * @dir/.build-id/ab/cdef....debug (hwt_image_debug_file(); NULL, the
 * default: /usr/lib/debug). The directory is copied. Before the first
 * lookup: -HWT_ERR_INVALID after, or -HWT_ERR_NOMEM.
 */
int hwt_an_lines_set_debug_dir(struct hwt_an_lines *s, const char *dir);

/*
 * The source line of the instruction at @vaddr: the file @image maps
 * there, its DWARF (or its separate debug file's, by build id: see
 * above). 1 with *@file (owned by @s) and *@line set,
 * 0 if there is no line information, or a negative HWT_ERR_*.
 */
int hwt_an_lines_find(struct hwt_an_lines *s, const struct hwt_image *image,
		      uint64_t vaddr, const char **file, unsigned *line);

/* As hwt_an_lines_find(), for byte @off of the file at @path (what an
 * image says the byte comes from: hwt_image_origin()). */
int hwt_an_lines_at(struct hwt_an_lines *s, const char *path, uint64_t off,
		    const char **file, unsigned *line);

/*
 * Every row of the line tables of the file at @path (its compile units'
 * in order; a line may come more than once): @fn(@ctx, file, line), the
 * file's name owned by @s. Returns 0 (also for a file without DWARF),
 * the first non-zero value of @fn, or -HWT_ERR_NOMEM.
 */
int hwt_an_lines_each(struct hwt_an_lines *s, const char *path,
		      int (*fn)(void *ctx, const char *file, unsigned line),
		      void *ctx);

/*
 * Every function defined in the file at @path's DWARF (out-of-line
 * copies, with an entry address): @fn(@ctx, file, line, name, off) with
 * where it is declared, its name (the linkage name where there is one:
 * C++'s mangled) and the file offset of its entry. Returns as
 * hwt_an_lines_each().
 */
int hwt_an_lines_funcs(struct hwt_an_lines *s, const char *path,
		       int (*fn)(void *ctx, const char *file, unsigned line,
				 const char *name, uint64_t off),
		       void *ctx);

/*
 * The code of the file at @path that its line tables give lines for, a
 * row's at a time: @fn(@ctx, off, code, len, mode, file, line) with the
 * file offset of the row's address, the file's bytes from there to the
 * next row's address (len of them: instructions start at each row), the
 * exec mode of the file's code (enum hwt_exec_mode, by its ELF header:
 * x86 only) and the row's source line (as hwt_an_lines_at() gives it).
 * In address order. Returns as hwt_an_lines_each().
 */
int hwt_an_lines_code(struct hwt_an_lines *s, const char *path,
		      int (*fn)(void *ctx, uint64_t off, const uint8_t *code,
				size_t len, unsigned mode, const char *file,
				unsigned line),
		      void *ctx);

/*
 * The ELF file at @path as its program headers lay it out: 1 with *@base
 * (its lowest PT_LOAD's address, page-aligned: where a disassembler
 * loads it) and *@end (past its highest); 0 if it is not an ELF file
 * with PT_LOADs, or -HWT_ERR_NOMEM.
 */
int hwt_an_lines_layout(struct hwt_an_lines *s, const char *path,
			uint64_t *base, uint64_t *end);

/* The link-time address of byte @off of the ELF file at @path: 1, or 0
 * if no PT_LOAD holds it (or it is not ELF), or -HWT_ERR_NOMEM. */
int hwt_an_lines_link(struct hwt_an_lines *s, const char *path, uint64_t off,
		      uint64_t *addr);

/* ---- source-line coverage ---- */

struct hwt_an_cover;

struct hwt_an_cover *hwt_an_cover_new(void);
void hwt_an_cover_delete(struct hwt_an_cover *c);

/*
 * Count one run of block @b, in @image (the decoder's when it gave the
 * block: the code it ran is resolved to the file it comes from the first
 * time a block comes). 0, or -HWT_ERR_NOMEM (or -HWT_ERR_INVALID).
 */
int hwt_an_cover_block(struct hwt_an_cover *c, const struct hwt_image *image,
		       const struct hwt_block *b);

/*
 * Walk new blocks with @walks (hwt_an_walks_get()), lent until called
 * again (NULL: a table of the cover's own, made when first needed): a
 * thread's covers of several -j segments share one (64 Ki slots, 3 MiB
 * of zero pages each otherwise).
 */
void hwt_an_cover_use_walks(struct hwt_an_cover *c,
			    struct hwt_an_walks *walks);

/* Where the reports (hwt_an_cover_lcov(), hwt_an_cover_drcov()) find the
 * debug files of files without DWARF: hwt_an_lines_set_debug_dir(). The
 * directory is copied. 0, or -HWT_ERR_NOMEM. */
int hwt_an_cover_set_debug_dir(struct hwt_an_cover *c, const char *dir);

/*
 * A block that ends in a conditional jump leaves its outcome pending: the
 * next block counted tells it (taken unless it starts where the jump
 * falls through), or hwt_an_cover_goto() where the flow goes on without
 * a block (at an event's IP, where a -j segment ends); after a gap in the
 * flow (a sync, an error, an overflow) hwt_an_cover_cut() drops it.
 */
void hwt_an_cover_goto(struct hwt_an_cover *c, uint64_t ip);
void hwt_an_cover_cut(struct hwt_an_cover *c);

/*
 * The blocks the decoder's fold takes without giving them out
 * (hwt_blk_tally(d, &hwt_an_cover_tally, cover)): each graph node's
 * block is resolved when the node is made, and its counts added when
 * told. The fold's last block (and the outcome its first one tells) are
 * the caller's: hwt_an_cover_block() and hwt_an_cover_goto().
 */
extern const struct hwt_blk_tally_ops hwt_an_cover_tally;

/* Add @src's counts to @dst's (by file and offset: any images). */
int hwt_an_cover_merge(struct hwt_an_cover *dst, struct hwt_an_cover *src);

/* What a merge from @c does first, now: its blocks' counts moved to its
 * instructions' (a -j segment's thread does it, not the one that adds
 * the segments up). 0 or -HWT_ERR_NOMEM. */
int hwt_an_cover_flatten(struct hwt_an_cover *c);

struct hwt_an_cover_sum {
	uint64_t files;		/* source files */
	uint64_t found, hit;	/* their lines, and those that ran */
	uint64_t funcs, funcs_hit;	/* their functions, and those entered */
	/* their conditional jumps' outcomes (two each: taken, not), and
	 * those that happened */
	uint64_t branches, branches_hit;
	uint64_t insns;		/* distinct instructions that ran in files */
	uint64_t insns_no_line;	/* ... with no line information */
};

/*
 * An lcov tracefile of the counts to @out (NULL: only *@sum), test name
 * @test (may be NULL): every line of the line tables of each file that
 * ran (from its DWARF or its debug file's), with the times it ran: the
 * count of its instruction that ran most often, 0 for a line that did
 * not; every function defined there, with the times its entry ran
 * (copies of one function in several units summed); every conditional
 * jump that ran, as two branches of its line (taken, not taken). 0, or a
 * negative HWT_ERR_*.
 */
int hwt_an_cover_lcov(struct hwt_an_cover *c, FILE *out, const char *test,
		      struct hwt_an_cover_sum *sum);

/*
 * A drcov file (version 2, as DynamoRIO's drcov writes it; Lighthouse,
 * bncov, Cartographer read it) of the code that ran, to @out: a module a
 * file, its base the address its ELF program headers load it at (0 for a
 * file that is not ELF: offsets in the file), and the instructions that
 * ran as blocks of bytes from there, adjacent ones joined. No DWARF
 * needed. *@nmodules, *@nbbs (may be NULL): how many. 0, or a negative
 * HWT_ERR_*.
 */
int hwt_an_cover_drcov(struct hwt_an_cover *c, FILE *out, size_t *nmodules,
		       size_t *nbbs);

#ifdef __cplusplus
}
#endif

#endif /* HWT_ANALYSIS_H */

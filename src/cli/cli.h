/* SPDX-License-Identifier: BSD-2-Clause */
/* The hwt command line: subcommands and the helpers they share. */
#ifndef HWT_CLI_H
#define HWT_CLI_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hwt/flow.h>
#include <hwt/image.h>

/* Each subcommand: argv[0] is the subcommand name. Returns the exit code. */
int cmd_dump(int argc, char **argv);
int cmd_ptdump(int argc, char **argv);
int cmd_ptxed(int argc, char **argv);
int cmd_flow(int argc, char **argv);
int cmd_calls(int argc, char **argv);
int cmd_coverage(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_sideband(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_last(int argc, char **argv);

/* One-paragraph help for each subcommand (printed by `hwt help CMD`). */
void help_dump(void);
void help_ptdump(void);
void help_ptxed(void);
void help_flow(void);
void help_calls(void);
void help_coverage(void);
void help_info(void);
void help_sideband(void);
void help_record(void);
void help_last(void);

/* Is the switch @name on in the environment (set, not empty, not "0")?
 * The tests' reference paths (HWT_ONE_BLOCK, HWT_WALK_EACH, HWT_NO_CACHE:
 * every instruction decoded, no block cache carried from process to
 * process; HWT_NO_IMAGE_CACHE: each process's image maps its files and
 * reads their symbols itself). */
static inline int cli_env_on(const char *name)
{
	const char *v = getenv(name);

	return v && *v && strcmp(v, "0");
}

/*
 * A read-only view of (part of) a file, mmap'd. Named as FILE[:from[-to]]
 * (from/to: byte offsets in C notation, to exclusive), as ptdump does.
 */
struct cli_input {
	const uint8_t *data;	/* the selected range */
	size_t size;
	uint64_t offset;	/* file offset of data[0] */
	void *map;		/* mapping to release (page aligned) */
	size_t map_size;
};

/*
 * Open @spec. On failure print one line "hwt: ..." naming the problem to
 * stderr and return -1. An empty file (or range) is an error.
 */
int cli_input_open(struct cli_input *in, const char *spec, const char *prog);
/* The same, read into *@buf (the caller's, grown with realloc() as needed
 * to *@cap) instead of mapped: for many small files, a mapping each costs
 * more (page tables made and torn down) than the copy. */
int cli_input_read(struct cli_input *in, const char *spec, const char *prog,
		   uint8_t **buf, size_t *cap);
void cli_input_close(struct cli_input *in);

/* Parse an unsigned integer (C notation) into @value; 0 or -1. */
int cli_parse_u64(const char *str, uint64_t *value);
/* Split "from[-to]" (a FILE:FROM[-TO] suffix); returns the number of
 * parts parsed (1 or 2) or -1. */
int cli_parse_range(const char *arg, uint64_t *from, uint64_t *to);

/*
 * Command-line mistakes, said as "hwt CMD: ...; see 'hwt help CMD'":
 * getopt_long's ':' (@arg needs a value) or '?' (@arg is unknown); and
 * the one file a command takes, left after the options (0, or -1 after
 * the message).
 */
void cli_bad_option(const char *cmd, int c, const char *arg);
int cli_one_file(const char *cmd, int argc, int first);

/* ---- image options (image_args.c) ---- */

struct hwt_image;

/* --raw FILE[:FROM[-TO]]:BASE. 0, or -1 after a message on stderr. */
int cli_image_raw(struct hwt_image *image, const char *arg, const char *prog);
/*
 * --elf FILE[:ADDR]: with @load_address ADDR is where the lowest segment
 * goes (ptxed), else a bias added to every segment's address.
 */
int cli_image_elf(struct hwt_image *image, const char *arg, const char *prog,
		  int load_address);

/* ---- libipt's wording (libipt_compat.c) ---- */

struct hwt_event;

/* libipt's pt_errstr() text for the hwt error that stands for it. */
const char *cli_ipt_errstr(int err);
/* ptxed's name of an exec mode (enum hwt_exec_mode). */
const char *cli_ipt_exec_mode(unsigned mode);

struct hwt_pt_cpu;
/* --cpu none|auto|f/m[/s] for the libipt drop-ins; 0 or -1 (reported). */
int cli_ipt_parse_cpu(const char *prog, const char *arg,
		      struct hwt_pt_cpu *cpu);

/* A numeric option argument (C notation, at most @max); 0 or -1. */
int cli_ipt_get_arg(const char *prog, const char *option, const char *arg,
		    uint64_t max, uint64_t *value);

/*
 * ptxed's text of @ev, without the brackets, offset and time: "enabled",
 * "exec mode: 64-bit", ... (@print_ip: ptxed's --event:ip). Writes at
 * most @size bytes including the terminator; returns the length.
 */
size_t cli_ipt_event(char *buf, size_t size, const struct hwt_event *ev,
		     int print_ip);

/* ---- disassembly (disasm.c, Zydis) ---- */

struct cli_disasm;

struct cli_disasm *cli_disasm_new(int att);
void cli_disasm_delete(struct cli_disasm *d);
/* Format the instruction in @raw; returns its length or -1. */
int cli_disasm_format(const struct cli_disasm *d, unsigned mode,
		      const uint8_t *raw, size_t size, uint64_t ip, char *buf,
		      size_t len);
/*
 * The text of the @size-byte instruction @raw at @ip, formatted once and
 * kept in @memo (the same address, mode and bytes give the same text; hot
 * code's instructions come millions of times, and formatting them was
 * half of hwt ptxed's time): NUL-terminated, *@tlen bytes, valid until
 * the next call with @memo; NULL if it does not decode. A memo belongs to
 * one thread.
 */
struct cli_disasm_memo;

/*
 * hwt flow --srcline (srcline.c): "  FILE:LINE" (the file's last part) of
 * the instruction at @ip in @img's image written at @p, from its DWARF;
 * nothing where there is no line. Returns the end. Looked up once an
 * address and image; a memo belongs to one thread.
 */
struct cli_srcline;

struct cli_srcline *cli_srcline_new(const char *debug_dir);
void cli_srcline_delete(struct cli_srcline *s);
struct cli_image_key;
char *cli_put_srcline(struct cli_srcline *s, const struct cli_image_key *img,
		      uint64_t ip, char *p);

struct cli_disasm_memo *cli_disasm_memo_new(void);
void cli_disasm_memo_delete(struct cli_disasm_memo *m);
const char *cli_disasm_text(const struct cli_disasm *d,
			    struct cli_disasm_memo *m, unsigned mode,
			    const uint8_t *raw, size_t size, uint64_t ip,
			    size_t *tlen);
/*
 * The same for the @size-byte instruction at @ip in @img's image, kept by
 * the image (its id and generation: within one the bytes at an address do
 * not change) instead of the bytes, so that a text kept costs no read of
 * the image. NULL if it does not decode or its bytes are not in one piece
 * of the image (the caller reads them itself then). The key is made once
 * for a block's instructions (two calls an instruction were 4% of hwt
 * ptxed's time).
 */
struct cli_image_key {
	const struct hwt_image *image;
	uint64_t id, gen;
};

static inline struct cli_image_key cli_image_key(const struct hwt_image *i)
{
	return (struct cli_image_key){ i, hwt_image_id(i),
				       hwt_image_generation(i) };
}

const char *cli_disasm_text_at(const struct cli_disasm *d,
			       struct cli_disasm_memo *m,
			       const struct cli_image_key *img, unsigned mode,
			       uint64_t ip, size_t size, size_t *tlen);
/* Classify by mnemonic (enum hwt_insn_class), or -1 if undecodable. */
int cli_disasm_class(const struct cli_disasm *d, unsigned mode,
		     const uint8_t *raw, size_t size, const char **mnemonic);
/* ptxed's name of an instruction class. */
const char *cli_iclass_name(unsigned iclass);

/* ---- buffered output (outbuf.c) ---- */

struct cli_out {
	char *buf;
	size_t len, cap;
	FILE *f;		/* NULL: collect in memory */
	uint64_t flushed;	/* bytes written to @f */
	int failed;		/* a write failed */
};

/* @f NULL: grow in memory. Returns 0 or -1 (out of memory). */
int cli_out_init(struct cli_out *o, FILE *f);
void cli_out_fini(struct cli_out *o);	/* flushes */
void cli_out_flush(struct cli_out *o);
/*
 * Room for @n more bytes at the returned pointer; then cli_out_commit().
 * Inline, for a line an instruction: a call each was a tenth of hwt
 * flow's time.
 */
char *cli_out_reserve_more_(struct cli_out *o, size_t n);
static inline char *cli_out_reserve(struct cli_out *o, size_t n)
{
	if (o->cap - o->len >= n)
		return o->buf + o->len;
	return cli_out_reserve_more_(o, n);
}

static inline void cli_out_commit(struct cli_out *o, const char *end)
{
	if (end >= o->buf && end <= o->buf + o->cap)
		o->len = (size_t)(end - o->buf);
}
/* Where the next byte goes: bytes written to @o so far. */
static inline uint64_t cli_out_pos(const struct cli_out *o)
{
	return o->flushed + o->len;
}
void cli_out_write(struct cli_out *o, const void *data, size_t n);
void cli_out_printf(struct cli_out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * A block's times (hwt_blk_time()): before it was decoded and after. Only
 * its last instruction can take trace (a TNT bit, a TIP), so it has the
 * time after and the others the time before: what each instruction
 * prints then does not depend on where the decoder ended its blocks
 * (which depends on its block cache's history: -j's decoders differ).
 */
struct cli_blk_time {
	uint64_t before, after;
	uint8_t have_before, have_after;
};

/* The time of a block's instruction (@last: its last), or 0 if unknown. */
static inline int cli_blk_time_of(const struct cli_blk_time *t, int last,
				  uint64_t *tsc)
{
	*tsc = last ? t->after : t->before;
	return last ? t->have_after : t->have_before;
}

/*
 * Where a symbol lookup's answer (hwt_image_symbol_range(), or _extent():
 * from the address asked) holds: [lo, hi), in that image (by id: an
 * address may be reused) while its generation stays.
 */
struct cli_sym_span {
	uint64_t id, gen, lo, hi;
};

/* Does @s hold @ip of the image with id @id and generation @gen? */
static inline int cli_sym_span_has_key(const struct cli_sym_span *s,
				       uint64_t id, uint64_t gen, uint64_t ip)
{
	return ip >= s->lo && ip < s->hi && id == s->id && gen == s->gen;
}

/* hwt coverage's maps (covmap.c). */
#define CLI_MAP_SIZE HWT_BLK_FOLD_MAP_SIZE
/* @dst += @src, cell by cell, saturating at 255 (as the counters do). */
void cli_map_add(uint8_t *restrict dst, const uint8_t *restrict src);
/* cli_fnv1a() of @map, and the number of its cells set (*@edges). */
uint64_t cli_map_hash(const uint8_t *map, size_t *edges);
/* The same, with @map added to @sum (as cli_map_add()) and cleared, in
 * one pass over the cells set. */
uint64_t cli_map_take(uint8_t *map, uint8_t *sum, size_t *edges);

/* FNV-1a, 64 bits. */
static inline uint64_t cli_fnv1a(const void *data, size_t n)
{
	const uint8_t *p = data;
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/* Text built piece by piece in a fixed buffer: what does not fit is cut,
 * the buffer never overflows and stays a C string. */
struct cli_text {
	char buf[8192];
	size_t len;
};
void cli_put(struct cli_text *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * @v's 8 hex digits as the bytes of a word, the first digit in its lowest
 * byte: a nibble a byte, then '0'..'9' or 'a'..'f' for all eight at once
 * (an address a line was a fifth of hwt flow's printing, a digit at a
 * time).
 */
static inline uint64_t cli_hex8_(uint32_t v)
{
	uint64_t x = v, letters;

	x = (x | x << 16) & 0x0000ffff0000ffffull;
	x = (x | x << 8) & 0x00ff00ff00ff00ffull;
	x = (x | x << 4) & 0x0f0f0f0f0f0f0f0full;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	x = __builtin_bswap64(x);
#endif
	letters = (x + 0x0606060606060606ull) >> 4 & 0x0101010101010101ull;
	return x + 0x3030303030303030ull + letters * ('a' - '0' - 10);
}

/* @v as 16 hex digits, zero padded; returns the end. */
static inline char *cli_put_hex16(char *p, uint64_t v)
{
	uint64_t hi = cli_hex8_((uint32_t)(v >> 32));
	uint64_t lo = cli_hex8_((uint32_t)v);

	memcpy(p, &hi, 8);
	memcpy(p + 8, &lo, 8);
	return p + 16;
}

/* @s without its NUL; returns the end. */
static inline char *cli_put_str(char *p, const char *s)
{
	while (*s)
		*p++ = *s++;
	return p;
}

/*
 * @v in decimal; returns the end. Two digits a division (the numbers of
 * hwt calls' lines were most of its printing), written in place from the
 * end: the length comes first, from the bit length (log10 2 is about
 * 1233 / 4096) and one compare. (Made in a buffer, each number was
 * copied by a call of memcpy; the numbers were 15% of hwt calls'
 * instructions on the shell loop's recording, now 13%.)
 */
static inline char *cli_put_dec(char *p, uint64_t v)
{
	static const char pairs[] =
		"00010203040506070809101112131415161718192021222324"
		"25262728293031323334353637383940414243444546474849"
		"50515253545556575859606162636465666768697071727374"
		"75767778798081828384858687888990919293949596979899";
	static const uint64_t pow10[20] = {
		1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull,
		1000000ull, 10000000ull, 100000000ull, 1000000000ull,
		10000000000ull, 100000000000ull, 1000000000000ull,
		10000000000000ull, 100000000000000ull,
		1000000000000000ull, 10000000000000000ull,
		100000000000000000ull, 1000000000000000000ull,
		10000000000000000000ull,
	};
	uint64_t w = v | 1;
	unsigned t = (unsigned)(64 - __builtin_clzll(w)) * 1233u >> 12;
	char *end = p + t + (w >= pow10[t]), *q = end;
	uint32_t x;

	/* (Below 2^32 the divisions are 32-bit ones: one of 64 bits by 100
	 * took 13 instructions, one of 32 bits 7.) */
	while (v > UINT32_MAX) {
		unsigned r = (unsigned)(v % 100);

		v /= 100;
		q -= 2;
		memcpy(q, &pairs[2 * r], 2);
	}
	x = (uint32_t)v;
	while (x >= 100) {
		unsigned r = x % 100;

		x /= 100;
		q -= 2;
		memcpy(q, &pairs[2 * r], 2);
	}
	if (x >= 10)
		memcpy(q - 2, &pairs[2 * x], 2);
	else
		q[-1] = (char)('0' + x);
	return end;
}

/* perf's time @ns as perf script --ns prints it: SECONDS.NNNNNNNNN. */
static inline char *cli_put_perf_time(char *p, uint64_t ns)
{
	uint64_t frac = ns % 1000000000u;

	p = cli_put_dec(p, ns / 1000000000u);
	*p++ = '.';
	for (int k = 8; k >= 0; k--, frac /= 10)
		p[k] = (char)('0' + frac % 10);
	return p + 9;
}

/*
 * @v in hex without leading zeros; returns the end. (A digit at a time:
 * for the 6 to 12 digits of an address, faster than cli_put_hex16()'s
 * eight at once and a shift, measured.)
 */
static inline char *cli_put_hex(char *p, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	unsigned n = v ? (unsigned)(67 - __builtin_clzll(v)) / 4 : 1;

	for (unsigned i = n; i-- > 0; v >>= 4)
		p[i] = digits[v & 0xf];
	return p + n;
}

struct hwt_pd_time_conv;

/*
 * What to show of a perf.data (select.c): threads (--pid LIST, --tid
 * LIST), CPUs (-C LIST) and time windows (--time-range "START,END ...":
 * perf's seconds, as perf script's --time, or 0xTSC; an end left out is
 * open), as perf script selects its samples. A thread matches if its pid
 * or its tid is listed; a time if it is in a window (bounds included).
 */
struct cli_bound {
	uint64_t v;		/* perf ns, or a TSC if @tsc */
	uint8_t set, tsc;
};

struct cli_window {
	struct cli_bound from, to;
};

struct cli_select {
	uint32_t *pids, *tids, *cpus;
	size_t npids, ntids, ncpus, pidcap, tidcap, cpucap;
	struct cli_window *win;
	size_t nwin, wincap;
	uint8_t set;		/* any of them given */
};

/* @argv[*@i] if it is one of the options: 1 (*@i at its argument), 0 if
 * not one, -1 after a message. */
int cli_select_option(struct cli_select *s, const char *prog, int argc,
		      char **argv, int *i);
/* The same for option @opt ("--pid", ...) and its argument @arg. */
int cli_select_parse(struct cli_select *s, const char *prog, const char *opt,
		     const char *arg);
void cli_select_free(struct cli_select *s);
int cli_select_threads(const struct cli_select *s);
/* A bound is in seconds (it needs the file's TIME_CONV). */
int cli_select_seconds(const struct cli_select *s);
int cli_select_task(const struct cli_select *s, int have_task, uint64_t task);
int cli_select_cpu(const struct cli_select *s, int have_cpu, uint32_t cpu);
/* @tsc in a window (@tc: the file's conversion, for bounds in seconds). */
int cli_select_time(const struct cli_select *s, int have_key, uint64_t tsc,
		    const struct hwt_pd_time_conv *tc);
/* Perf's time @ns in a window whose bounds are all seconds. */
int cli_select_ns(const struct cli_select *s, int have_ns, uint64_t ns);
/* A bound is a TSC (0x...). */
int cli_select_tsc_bounds(const struct cli_select *s);
/* One time, as a window's bound (seconds or 0xTSC): 0, or -1. */
int cli_parse_time(const char *arg, struct cli_bound *b);
/* @tsc before every window's start (none open): nor an earlier time. */
int cli_select_before(const struct cli_select *s, uint64_t tsc,
		      const struct hwt_pd_time_conv *tc);
/* @tsc after every window's end (none open): no later time is chosen. */
int cli_select_past(const struct cli_select *s, uint64_t tsc,
		    const struct hwt_pd_time_conv *tc);

/*
 * hwt flow on the CPUs' streams of a perf.data (merge.c): their text in
 * a temporary file, in ranges cut where the time or the thread changes,
 * printed at the end in time order (by stream where times are equal),
 * each thread's lines after a line [pid P tid T cpu C]. A stream's
 * text is cli_merge_stream() .. cli_merge_stream_end(), and its marks
 * (segments give them in the order of their text) apply where the text
 * is then (cli_out_pos()); what comes between streams is their
 * headers, printed first. Without a time in every stream with text, the
 * streams one after the other.
 */
struct cli_mark {
	uint64_t at;		/* in the text that has it */
	uint64_t key;		/* the time from here on (a TSC) */
	uint64_t task;		/* the thread: pid << 32 | tid */
	uint8_t have_key, have_task;
	/* What follows is an error or a lost-data note (whose trace it
	 * was is not known): shown whatever threads and times are chosen. */
	uint8_t note;
};

struct cli_merge;

struct cli_merge *cli_merge_new(void);	/* NULL after a message */
void cli_merge_delete(struct cli_merge *m);
/*
 * Print only the ranges @sel chooses (NULL: all; @tc for its bounds in
 * seconds), and (@ordered 0) the streams one after the other, each with
 * its text where it is, a CPU stream's threads named [pid P tid T] where
 * they change: what the decode printed, less what is not chosen.
 */
void cli_merge_select(struct cli_merge *m, const struct cli_select *sel,
		      const struct hwt_pd_time_conv *tc, int ordered);
/* Where the streams' text goes (with a cli_out). */
FILE *cli_merge_file(const struct cli_merge *m);
/* A stream starts at @pos: CPU @cpu's if @on_cpu, else a thread's. */
void cli_merge_stream(struct cli_merge *m, uint64_t pos, uint32_t cpu,
		      int on_cpu);
void cli_merge_mark(struct cli_merge *m, uint64_t pos,
		   const struct cli_mark *c);
void cli_merge_stream_end(struct cli_merge *m, uint64_t pos);
/* The file's text, ordered, to @out. Returns 0, or -1 after a message. */
int cli_merge_print(struct cli_merge *m, struct cli_out *out);
/* Lost data outside the times chosen, not decoded: said as the rest. */
void cli_merge_hidden(struct cli_merge *m);

/*
 * An unlinked temporary file under $TMPDIR (or /tmp), read and written;
 * NULL after a message naming @who.
 */
FILE *cli_tmpfile(const char *who);

/* ---- work done on threads, printed in order (order.c) ---- */

struct cli_order {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	size_t n;		/* items */
	size_t next;		/* the next one a worker takes */
	size_t printed;		/* items printed (and their memory free) */
	size_t ahead;		/* how far past them workers may take */
};

void cli_order_init(struct cli_order *q, size_t n, size_t ahead);
void cli_order_fini(struct cli_order *q);
/* A worker's next item, waiting while it would be @ahead past the
 * printed ones; SIZE_MAX when none is left (or cli_order_stop()). */
size_t cli_order_take(struct cli_order *q);
/* The worker's item is done: *@done = 1, under the lock. */
void cli_order_done(struct cli_order *q, int *done);
/* The printing thread: wait for *@done. */
void cli_order_wait(struct cli_order *q, const int *done);
/* @n items printed (and *@done, if any, cleared for a slot's reuse). */
void cli_order_printed(struct cli_order *q, size_t n, int *done);
/* No more items taken. */
void cli_order_stop(struct cli_order *q);

/* ---- a trace read in pieces (pieces.c) ---- */

/*
 * A trace too large to hold whole (a perf.data AUX stream, read from the
 * file) is decoded piece by piece. A piece is [base, base + len) of the
 * trace; its decode stops at the PSB at @cut (the piece holds that PSB+
 * whole), where the next piece starts. Cutting at a PSB is what -j does:
 * the decoders drop at every PSB+ what does not survive a cut, so the
 * output is that of the whole trace. Pieces are 64 MiB unless the
 * environment's HWT_PIECE_SIZE says otherwise (tests use it for many cuts).
 */
struct cli_pieces {
	/* Copy [pos, pos + len) of the trace: 0, or -1 after a message. */
	int (*read)(void *ctx, uint64_t pos, uint8_t *buf, size_t len);
	void *ctx;
	uint64_t size;		/* of the whole trace */
	size_t piece;		/* wanted piece size */
	uint8_t *buf;		/* the current piece */
	size_t cap, len;
	uint64_t base, cut;
	int last;
};

void cli_pieces_init(struct cli_pieces *p, uint64_t size,
		     int (*read)(void *ctx, uint64_t pos, uint8_t *buf,
				 size_t len),
		     void *ctx);
/* The same for a trace in memory, [@buf, @buf + @size) (borrowed). */
void cli_pieces_init_mem(struct cli_pieces *p, const uint8_t *buf,
			 uint64_t size);
/* The next piece: 1, 0 after the last, -1 after a message. */
int cli_pieces_next(struct cli_pieces *p);
/* The next piece starts at @off (a PSB; before the first piece). */
void cli_pieces_seek(struct cli_pieces *p, uint64_t off);
void cli_pieces_fini(struct cli_pieces *p);

struct hwt_qry_config;

/*
 * Where a decode whose lines shown are all at or after the start of each
 * of @sel's windows may begin (seek.c): a PSB before them where a decoder
 * knows what one running from the trace's start knows, so that the lines
 * in the windows are the same. @trace: as the decode reads it (in its
 * pieces), @whole: the trace if it is in memory (a raw trace: one piece),
 * else NULL. Returns 1 and *@seek, or 0: from the start (a window with no
 * start, a time that goes back, no such PSB). @cfg: the trace's
 * configuration (its begin and end are not read).
 */
struct cli_seek {
	uint64_t off, tsc;	/* the PSB and its PSB+'s TSC */
	uint64_t ovf, bad;	/* overflows, bad packets before it */
	/* The decode's time state there, where the PSB+ does not set all
	 * of it (MTC, TMA or CYC packets before). */
	struct hwt_time_tracker t;
	uint8_t have_t;
};

int cli_seek_find(const struct cli_pieces *trace, const uint8_t *whole,
		  const struct hwt_qry_config *cfg, const struct cli_select *sel,
		  const struct hwt_pd_time_conv *tc, struct cli_seek *seek);

/* ---- perf.data input (perfdata_input.c) ---- */

struct cli_pd;
struct hwt_blk_decoder;
struct hwt_qry_config;

/* Does @path start with perf.data's magic (file or pipe mode)? "-" does. */
int cli_pd_is_perfdata(const char *path);
/*
 * Read the whole file: sideband into a process model, the AUX streams
 * into memory. 0, or -1 after a message on stderr (no AUX data, a trace
 * type hwt cannot decode yet, a broken file).
 */
int cli_pd_open(struct cli_pd **pd, const char *path, const char *prog);
/* "PROG: PATH: why" for hwt_pd_open()'s failure @ret with message @err
 * (which may name the file already). */
void cli_pd_open_error(const char *prog, const char *path, const char *err,
		       int ret);
/*
 * Where the code of the recorded files is (NULL: the defaults): @symfs a
 * root the recorded paths are below (perf's --symfs), @vdso a copy of
 * the vdso, @buildid_dir a build-id cache (default $HOME/.debug, perf's),
 * @debug_dir separate debug files (default /usr/lib/debug, below @symfs
 * if given).
 */
struct cli_pd_files {
	const char *symfs, *vdso, *buildid_dir, *debug_dir;
	int no_symbols;		/* the images need no symbols */
};
/* The field of @f that option @name (without its dashes: "symfs",
 * "vdso", "buildid-dir", "debug-dir") sets, or NULL if it is none of
 * them: the commands that read a perf.data's files take the same four. */
const char **cli_pd_files_slot(struct cli_pd_files *f, const char *name);
/* Their help, for the commands' help texts. */
#define CLI_PD_FILES_HELP						\
	"  --symfs DIR                   perf.data: recorded paths (and\n"	\
	"                                /usr/lib/debug) are below DIR\n"	\
	"  --vdso FILE                   perf.data: a copy of the vdso\n"	\
	"  --buildid-dir DIR             perf.data: a build-id cache with the\n" \
	"                                files gone or rebuilt since (default\n" \
	"                                ~/.debug, where perf record puts them)\n" \
	"  --debug-dir DIR               where the debug files of stripped ELF\n" \
	"                                files are: DIR/.build-id/ab/cdef.debug\n" \
	"                                (default /usr/lib/debug)\n"
int cli_pd_open_files(struct cli_pd **pd, const char *path, const char *prog,
		      const struct cli_pd_files *files);
void cli_pd_close(struct cli_pd *pd);
/* Fill what @q does not set yet (cpu, time) from the file. */
void cli_pd_qry_config(const struct cli_pd *pd, struct hwt_qry_config *q);
size_t cli_pd_nstreams(const struct cli_pd *pd);
/* Stream @i's trace, in pieces (from the file, not held in memory). */
void cli_pd_stream_pieces(struct cli_pd *pd, size_t i,
			  struct cli_pieces *p);
/* "# stream idx 0: pid 1234 tid 1234 comm calls, 123 bytes" (+ notes). */
void cli_pd_stream_header(const struct cli_pd *pd, size_t i,
			  struct cli_out *out);
/* The stream's lost-data warnings, by stream offset, then by time. */
void cli_pd_stream_notes(const struct cli_pd *pd, size_t i,
			 struct cli_out *out);

/* A segment boundary: a PSB's stream offset and the TSC in its PSB+. */
struct cli_cut {
	uint64_t off, tsc;
	int have_tsc;
};

/* Where a segment is in its stream's lost-data notes (by offset, by time). */
struct cli_note_pos {
	size_t off, time;
};

/* What a segment decoded on its own saw (-j), for its stream's context. */
struct cli_seg_notes {
	struct cli_note_pos start, end;	/* the notes it printed */
	uint64_t first_off, first_now;	/* at its first sync */
	uint64_t max_before, max_now;	/* latest time (perf), before/after */
	uint64_t last_now;
	uint8_t synced, have_first_off, have_first_now, have_now;
	uint8_t first_due;		/* own notes due at its first sync */
	uint8_t overrun;		/* a later segment's note was due */
};

/*
 * What flow.c asks of a perf.data stream while it decodes: @sync before
 * each block (bring the image to the decoder's time; returns 1 if lost-data
 * notes are due; *@quiet: the decoder offset before which, while the
 * decoder's time stays the same, another @sync would do nothing), @notes
 * to print those (all remaining ones if @dec is NULL), @stat for --stat.
 * @base is the stream offset of the decoder's trace (the piece it
 * decodes).
 */
struct cli_flow_hook {
	void *ctx;
	/* A CPU's stream (threads take turns in it), not a thread's: CPU
	 * @cpu's. */
	uint8_t on_cpu;
	uint32_t cpu;
	/* A thread's stream: its pid and tid. */
	uint32_t pid, tid;
	int (*sync)(void *ctx, struct hwt_blk_decoder *dec, uint64_t base,
		    uint64_t *quiet);
	void (*notes)(void *ctx, struct hwt_blk_decoder *dec, uint64_t base,
		      struct cli_out *out);
	void (*stat)(void *ctx, struct cli_out *out);
	/* The image of the process the stream is in now (sync switches the
	 * decoder to it). */
	struct hwt_image *(*image)(void *ctx);
	/* ... its pid, and the thread running (cpu mode: the last one the
	 * sideband has seen there): hwt calls keeps a stack per thread. */
	void (*task)(void *ctx, uint32_t *pid, uint32_t *tid);

	/*
	 * -j: a stream cut at PSBs into segments decoded on threads, to
	 * print what one thread prints. Each thread has a context of its
	 * own (@fork, freed by @unfork) with a view of the processes that
	 * only goes forward: a thread's segments of one stream come in
	 * stream order. A cut is where @cut_ok says no lost-data note is
	 * due between the PSB before and the PSB after it (stream offsets;
	 * TSCs if @have_tsc), so the syncs that print each note are those
	 * of one segment. @seg hands a context the segment [@from, @to)
	 * (@from NULL: a piece's first, which goes on from where @ctx is;
	 * @to NULL: to the end); @seg_end says what it saw.
	 * In stream order, @seg_check says whether a segment decoded alone
	 * printed what one thread does (its notes too if @notes print where
	 * they are due): else (1; a time that jumped in a damaged trace, a
	 * note due elsewhere) @ctx is made ready to decode from that segment
	 * on itself. @seg_join prints the notes that the segments before
	 * left, due at this one's first sync (out NULL: notes print at the
	 * end, or not), and takes the segment's place. @resume brings
	 * @ctx's view to where the segments took the stream, before it
	 * decodes.
	 */
	void *(*fork)(void *ctx);
	void (*unfork)(void *fork);
	int (*cut_ok)(void *ctx, uint64_t off_lo, uint64_t off_hi,
		      uint64_t tsc_lo, uint64_t tsc_hi, int have_tsc);
	void (*seg)(void *fork, const struct cli_cut *from,
		    const struct cli_cut *to, struct cli_seg_notes *sn);
	void (*seg_end)(void *fork, struct cli_seg_notes *sn);
	int (*seg_check)(void *ctx, const struct cli_seg_notes *sn,
			 int notes);
	void (*seg_join)(void *ctx, const struct cli_seg_notes *sn,
			 struct cli_out *out);
	void (*resume)(void *ctx);
};

/*
 * @hook->sync (with @hctx), unless it would do nothing: asked before every
 * block, the decoder's time is mostly the one the hook saw last and no
 * note by offset is near (a fifth of hwt calls' time on gzip). @q keeps
 * what it saw; zero it where the decoder starts again (a sync, a new
 * decoder). Returns the hook's answer (0, or 1: notes are due), or -1
 * when it was not asked (nothing changed).
 */
struct cli_sync_quiet {
	uint8_t valid, have_tsc;
	uint64_t tsc, off;
};

/* (Inline: it is asked before every block; hwt calls on gzip's recording
 * took 5% longer with a call.) */
static inline int cli_hook_sync(const struct cli_flow_hook *hook, void *hctx,
				struct cli_sync_quiet *q,
				struct hwt_blk_decoder *dec, uint64_t base)
{
	uint64_t tsc = 0, off;
	int have_tsc, due;

	have_tsc = hwt_blk_time(dec, &tsc, NULL, NULL) >= 0;
	if (q->valid && have_tsc == q->have_tsc && tsc == q->tsc &&
	    hwt_blk_get_offset(dec, &off) >= 0 && off < q->off)
		return -1;
	due = hook->sync(hctx, dec, base, &q->off);
	q->valid = 1;
	q->have_tsc = (uint8_t)have_tsc;
	q->tsc = tsc;
	return due;
}

/*
 * cuts.c: the PSBs to cut @trace (@size bytes at stream offset @base; a
 * perf.data stream's piece if @hook) at for -j, about @chunk apart and
 * before @limit, in *@cuts (stream offsets; to free). Returns how many.
 */
size_t cli_plan_cuts(const uint8_t *trace, size_t size, uint64_t base,
		     const struct cli_flow_hook *hook, uint64_t chunk,
		     uint64_t limit, struct cli_cut **cuts);

struct flow;	/* flow.h: the state of one flow/calls/coverage command */

/* flow_run.c: decode one stream with @image, printing the usual output. */
int cli_flow_stream(struct flow *fl, struct cli_pieces *trace,
		    struct hwt_image *image, const struct cli_flow_hook *hook,
		    struct cli_out *out);

/* The streams are done: what they shared goes (the decoder kept from one
 * to the next, before the totals' end takes its memory: lines, DWARF). */
void cli_flow_streams_done(struct flow *fl);
/* perfdata_input.c: decode every stream of @pd through cli_flow_stream. */
int cli_pd_flow(struct cli_pd *pd, struct flow *fl, struct cli_out *out);

struct hwt_image;
struct hwt_pd_info;

/*
 * Call @fn for each stream with its trace (to read in pieces), an image
 * that follows its process and the hook that keeps the image at the
 * decoder's time. -1 if any call returned < 0.
 */
typedef int (*cli_pd_stream_fn)(void *ctx, size_t i, struct cli_pieces *trace,
				struct hwt_image *image,
				const struct cli_flow_hook *hook);
int cli_pd_each_stream(struct cli_pd *pd, cli_pd_stream_fn fn, void *ctx);
/* Whose stream @i is (pid UINT32_MAX in cpu mode). */
void cli_pd_stream_ids(const struct cli_pd *pd, size_t i, uint32_t *pid,
		       uint32_t *tid);
/* Stream @i's cpu if it is a CPU's (perf record -a: which thread runs
 * is the sideband's), else -1. */
int cli_pd_stream_cpu(const struct cli_pd *pd, size_t i, uint32_t *cpu);
/* Some stream is a CPU's. */
int cli_pd_any_cpu(const struct cli_pd *pd);
/* CPU mode: did @pid/@tid run on @cpu (the sideband's switches)? */
int cli_pd_ran_on(const struct cli_pd *pd, uint32_t cpu, uint32_t pid,
		  uint32_t tid);
/* The trace has TSC packets, and the file their conversion to time. */
int cli_pd_has_time(const struct cli_pd *pd);
/* The file's conversion of TSC to perf time: 0, or -1 if none. */
struct hwt_pd_time_conv;
int cli_pd_time_conv(const struct cli_pd *pd, struct hwt_pd_time_conv *tc);
/* The thread stream @i ends in: its own, or the one the sideband puts
 * on its CPU last before its end; -1 if none is known. */
int cli_pd_stream_end_task(const struct cli_pd *pd, size_t i, uint32_t *pid,
			   uint32_t *tid);
/* ... the one at perf time @ns (or at its end, if that is before). */
int cli_pd_stream_task_at(const struct cli_pd *pd, size_t i, uint64_t ns,
			  uint32_t *pid, uint32_t *tid);
/* Thread @tid's command name at stream @i's end, or at perf time @until
 * if that is earlier (NULL if unknown). */
const char *cli_pd_task_comm(const struct cli_pd *pd, size_t i, uint32_t tid,
			     uint64_t until);
struct hwt_proc_view;
/* Process @pid as mapped at stream @i's end, or at @until if earlier, to
 * name what ran in it (its image: hwt_proc_view_image()); the caller
 * deletes it. NULL: none. */
struct hwt_proc_view *cli_pd_end_view(struct cli_pd *pd, size_t i,
				      uint32_t pid, uint64_t until);
/* The file's header information (features: exits, ...). */
const struct hwt_pd_info *cli_pd_info(const struct cli_pd *pd);
/* Where the files' debug files are (--debug-dir, or below --symfs; NULL:
 * /usr/lib/debug): for their source lines as for their symbols. */
const char *cli_pd_debug_dir(const struct cli_pd *pd);

#endif

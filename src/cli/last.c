/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hwt last: "how did I get here". For each thread of a perf.data file,
 * how its process ended (hwt record's HWT_EXIT feature: exit code, or the
 * signal and the instruction that faulted), the call stack where its
 * trace ends and the last branches before that, with symbols and source
 * lines. The analysis is the library's (hwt_an_last, hwt_an_lines).
 *
 * Which thread took a fatal signal: the process's thread that ran last,
 * the one whose trace has the latest TSC (one thread runs at a time
 * under the portable source, and each stream gets a TSC when it runs
 * again after another).
 *
 * --at TIME: the same as if the recording had ended at TIME: each
 * stream's decode ends at the first time past it (last_sync()), its
 * last TSC and the thread on its CPU are those up to it, and only an
 * exit before it counts.
 */
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hwt/analysis.h>
#include <hwt/perfdata.h>
#include <hwt/proc.h>
#include <hwt/pt.h>
#include <hwt/record.h>

#include "cli/cli.h"
#include "common/grow.h"

void help_last(void)
{
	printf(
"usage: hwt last [-n N] [--depth N] [--no-lines] [--[perf-]time] [--at TIME]\n"
"                [--pid LIST] [--tid LIST] [-C LIST] [--symfs DIR] [--vdso FILE]\n"
"                [--buildid-dir DIR] [--debug-dir DIR] FILE\n"
"\n"
"How each thread of the perf.data FILE got to where its trace ends: how\n"
"its process ended (exit code, or the signal that killed it and the\n"
"instruction that faulted, as hwt record saw it), the call stack there\n"
"(innermost first; signal handlers are frames of their own) and its last\n"
"N taken branches (oldest first), each with its function and, where the\n"
"file has DWARF line information, file:line. When a signal killed the\n"
"program this is the path to the crash.\n"
"\n"
"  -n N                          branches to show per thread (default 16)\n"
"  --depth N                     call stack frames to show (default 64)\n"
"  --no-lines                    no source lines\n"
"  --time                        each branch's time (the TSC, as hwt flow\n"
"                                --time shows it)\n"
"  --perf-time                   ... as perf's time (seconds with ns, as\n"
"                                perf script --ns)\n"
"  --at TIME                     as if the recording ended at TIME (perf's\n"
"                                seconds, as perf script prints them, or\n"
"                                0xTSC): each trace's call stack and last\n"
"                                branches then, of the thread on its CPU\n"
"                                then\n"
"  --pid LIST, --tid LIST        only the traces that end in these threads\n"
"  -C LIST                       only these CPUs' traces (0,2-3)\n"
CLI_PD_FILES_HELP
"\n"
"A CPU's trace (perf record -a) shows the call stack of the thread that\n"
"ran last on it and the last branches of all that ran, each thread's\n"
"named where its branches start; a thread that went on on another CPU\n"
"is said to, its end is that CPU's. A thread's call stack goes with it\n"
"from CPU to CPU (its runs on each, composed in time order).\n");
}

struct last_opts {
	size_t n, depth;
	int lines, time, perf_time;
	const char *file;
	/* --pid, --tid, -C: the streams shown (their end's thread, CPU) */
	struct cli_select sel;
	/* --at TIME: as if the recording ended there (a window up to it) */
	struct cli_select at;
	struct cli_window at_win;
	const char *at_text;
	struct cli_pd_files files;	/* --symfs, --vdso, ... */
};

/* Where a stream ends: its last TSC packet, the thread it ends in. */
struct stream_end {
	uint64_t tsc;
	uint32_t pid, tid;
	uint8_t have_task;
};

/* A run of a thread on a CPU (struct hwt_an_slice, its arrays ours),
 * from the stream @stream, the @seq-th kept. */
struct kept {
	struct hwt_an_slice s;
	size_t stream, seq;
};

struct last_ctx {
	const struct last_opts *o;
	struct cli_pd *pd;
	struct hwt_an_lines *lines;
	struct hwt_blk_config cfg;
	uint32_t an_flags;		/* hwt_an_last_config's */
	struct stream_end *ends;	/* per stream */
	int failed;
	/*
	 * CPUs' streams: a first pass keeps the runs of the threads the
	 * streams end in (@collect), so that a thread that moved between
	 * CPUs has its call stack across them (call_stack()).
	 */
	int collect;
	struct kept *kept;
	size_t nkept, cap_kept;
	struct hwt_an_frame *stack;	/* call_stack()'s */
	size_t shown;			/* streams printed */
	struct hwt_pd_time_conv tc;	/* --perf-time, --at */
	uint64_t at_ns;			/* --at, in perf's time */
	/* One decoder for all the streams (hwt_an_last_lend()): made at
	 * the first piece, released at each stream's end. And one table
	 * of the blocks' walks (hwt_an_last_use_walks()). */
	struct hwt_blk_decoder *dec;
	struct hwt_an_walks *walks;
};

/* The perf time names are taken at: --at's, else the end of the stream. */
static uint64_t names_at(const struct last_ctx *c)
{
	return c->o->at.nwin ? c->at_ns : UINT64_MAX;
}

static const char *kind_name(uint8_t kind)
{
	switch (kind) {
	case HWT_AN_COND: return "jcc";
	case HWT_AN_JUMP: return "jmp";
	case HWT_AN_CALL: return "call";
	case HWT_AN_RETURN: return "ret";
	case HWT_AN_SYSCALL: return "syscall";
	case HWT_AN_SIGNAL: return "signal";
	case HWT_AN_SIGRETURN: return "sigret";
	case HWT_AN_INTERRUPT: return "irq";
	default: return "lost";
	}
}

/* "0x401136 lookup+0x16 (calc.c:41)" */
static void where(struct last_ctx *c, const struct hwt_image *image,
		  uint64_t ip, char *buf, size_t len)
{
	const char *name, *file, *base;
	uint64_t off;
	unsigned line;
	int n;

	n = snprintf(buf, len, "0x%" PRIx64, ip);
	if (hwt_image_symbol(image, ip, &name, &off) >= 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, off ? " %s+0x%" PRIx64 :
			      " %s", name, off);
	if (c->lines && (size_t)n < len &&
	    hwt_an_lines_find(c->lines, image, ip, &file, &line) == 1) {
		base = strrchr(file, '/');
		snprintf(buf + n, len - (size_t)n, " (%s:%u)",
			 base ? base + 1 : file, line);
	}
}

static const struct hwt_pd_exit *exit_of(const struct last_ctx *c,
					 uint32_t pid)
{
	const struct hwt_pd_info *info = cli_pd_info(c->pd);

	for (size_t i = 0; info && i < info->nexits; i++)
		if (info->exits[i].pid == pid)
			return &info->exits[i];
	return NULL;
}

/*
 * Did stream @i run last in the process it ends in (so it took the
 * signal)? A CPU's stream: of those ending in that process.
 */
static int ran_last(const struct last_ctx *c, size_t i)
{
	const struct stream_end *e = c->ends;

	for (size_t k = 0; k < cli_pd_nstreams(c->pd); k++)
		if (k != i && e[k].have_task && e[k].pid == e[i].pid &&
		    e[k].tsc > e[i].tsc)
			return 0;
	return 1;
}

/*
 * A CPU's stream whose last thread ran on afterwards on another CPU (it
 * moved there): the stream of the CPU where it ran last, or -1.
 */
static long moved_to(const struct last_ctx *c, size_t i)
{
	const struct stream_end *e = c->ends;
	uint32_t cpu;
	long to = -1;

	if (!e[i].have_task || cli_pd_stream_cpu(c->pd, i, &cpu) < 0)
		return -1;
	for (size_t k = 0; k < cli_pd_nstreams(c->pd); k++)
		if (k != i && e[k].have_task && e[k].pid == e[i].pid &&
		    e[k].tid == e[i].tid && e[k].tsc > e[i].tsc &&
		    (to < 0 || e[k].tsc > e[to].tsc))
			to = (long)k;
	return to;
}

/*
 * The images that name addresses: a thread's stream, its process's at
 * the end (@own); a CPU's, each process's as mapped at the stream's end,
 * by the pid of the branch.
 */
struct namer {
	struct cli_pd *pd;
	size_t stream;
	uint64_t until;		/* names_at() */
	int on_cpu;
	struct hwt_image *own;
	struct {
		uint32_t pid;
		struct hwt_proc_view *v;
	} *views;
	size_t n, cap;
};

static const struct hwt_image *image_of(struct namer *nm, uint32_t pid)
{
	struct hwt_proc_view *v;

	if (!nm->on_cpu)
		return nm->own;
	for (size_t i = 0; i < nm->n; i++)
		if (nm->views[i].pid == pid)
			return hwt_proc_view_image(nm->views[i].v);
	if (hwt_grow((void **)&nm->views, &nm->cap, nm->n + 1,
		     sizeof(*nm->views)) < 0)
		return nm->own;
	v = cli_pd_end_view(nm->pd, nm->stream, pid, nm->until);
	if (!v)
		return nm->own;
	nm->views[nm->n].pid = pid;
	nm->views[nm->n++].v = v;
	return hwt_proc_view_image(v);
}

static void namer_fini(struct namer *nm)
{
	for (size_t i = 0; i < nm->n; i++)
		hwt_proc_view_delete(nm->views[i].v);
	free(nm->views);
}

static void signame(uint32_t sig, char *buf, size_t len)
{
	const char *s = sig < 65 ? sigabbrev_np((int)sig) : NULL;

	snprintf(buf, len, "SIG%s", s ? s : "?");
}

/* Whose trace this is, and how it ended. */
struct whose {
	uint32_t pid, tid;
	uint8_t known, on_cpu;
	uint32_t cpu;
};

static void header(struct last_ctx *c, size_t i, const struct whose *w,
		   const struct hwt_pd_exit *e, int took, int stopped,
		   const struct hwt_image *image, FILE *f)
{
	const char *comm = w->known ? cli_pd_task_comm(c->pd, i, w->tid,
						       names_at(c)) : NULL;
	char sig[32], at[512];
	long to = w->on_cpu && w->known ? moved_to(c, i) : -1;
	uint32_t cpu;

	if (!w->on_cpu)
		fprintf(f, "# thread %" PRIu32 "/%" PRIu32 " %s: ", w->pid,
			w->tid, comm ? comm : "?");
	else if (w->known)
		fprintf(f, "# cpu %" PRIu32 ", thread %" PRIu32 "/%" PRIu32
			" %s at %s: ", w->cpu, w->pid, w->tid,
			comm ? comm : "?", stopped ? c->o->at_text : "the end");
	else
		fprintf(f, "# cpu %" PRIu32 " (no thread known to run on "
			"it): ", w->cpu);
	if (to >= 0 && cli_pd_stream_cpu(c->pd, (size_t)to, &cpu) >= 0) {
		/* Its end is another stream's. */
		fprintf(f, "it went on on cpu %" PRIu32 ", where its trace "
			"%s\n", cpu, c->o->at.nwin ? "is then" : "ends");
		return;
	}
	if (stopped) {
		if (!w->on_cpu)
			fprintf(f, "at %s, ", c->o->at_text);
		fprintf(f, "%s\n", stopped > 1 ? "its trace starts after that" :
				    "the trace goes on");
		return;
	}
	if (!e) {
		fprintf(f, "the trace ends (how the process ended is not "
			"recorded)\n");
		return;
	}
	if (!e->signal) {
		fprintf(f, "its process exited with status %" PRIu32 "\n",
			e->code);
		return;
	}
	signame(e->signal, sig, sizeof(sig));
	if (!took) {
		fprintf(f, "its process was killed by signal %" PRIu32
			" (%s) while another thread ran\n", e->signal, sig);
		return;
	}
	fprintf(f, "killed by signal %" PRIu32 " (%s)", e->signal, sig);
	if (e->flags & HWT_PD_EXIT_HAVE_IP) {
		where(c, image, e->ip, at, sizeof(at));
		fprintf(f, " at %s", at);
	}
	fprintf(f, ": the path to the crash\n");
}

/* The stack @fr (@n frames, innermost first, @dropped more below). */
static void print_stack(struct last_ctx *c, struct hwt_an_last *l,
			const struct hwt_an_frame *fr, size_t n,
			size_t dropped, const struct hwt_pd_exit *e, int took,
			int stopped, const struct hwt_image *image, FILE *f)
{
	struct hwt_an_last_end end;
	size_t k = 0;
	char w[512];

	hwt_an_last_end(l, &end);
	fprintf(f, "call stack at %s, innermost first:\n",
		stopped ? c->o->at_text : "the end");
	if (took && e && e->signal && (e->flags & HWT_PD_EXIT_HAVE_IP)) {
		where(c, image, e->ip, w, sizeof(w));
		fprintf(f, "  #%zu  %s  <- faulted here\n", k++, w);
	} else if (end.have_ip) {
		where(c, image, end.ip, w, sizeof(w));
		fprintf(f, "  #%zu  %s  <- %s\n", k++, w,
			stopped ? "here then" : "the trace ends here");
	}
	for (size_t i = 0; i < n && i < c->o->depth; i++, k++) {
		where(c, image, fr[i].site, w, sizeof(w));
		if (fr[i].kind == HWT_AN_SIGNAL)
			fprintf(f, "  #%zu  <signal handler> interrupted %s\n",
				k, w);
		else
			fprintf(f, "  #%zu  %s\n", k, w);
	}
	if (n > c->o->depth || dropped)
		fprintf(f, "  ... %zu more frames\n",
			(n > c->o->depth ? n - c->o->depth : 0) + dropped);
	else if (!n)
		fprintf(f, "  (no call seen in the trace)\n");
}

static void print_branches(struct last_ctx *c, struct hwt_an_last *l,
			   struct namer *nm, FILE *f)
{
	const struct hwt_image *image;
	const struct hwt_an_branch *b;
	size_t n = hwt_an_last_branches(l, &b);
	char from[512], to[512];
	const char *comm;

	fprintf(f, "last %zu branches, oldest first:\n", n);
	for (size_t i = 0; i < n; i++) {
		/* A CPU's: where another thread's branches start. */
		if (nm->on_cpu && (!i || b[i].tid != b[i - 1].tid ||
				   b[i].pid != b[i - 1].pid)) {
			comm = cli_pd_task_comm(c->pd, nm->stream, b[i].tid,
						nm->until);
			fprintf(f, "  -- thread %" PRIu32 "/%" PRIu32 " %s\n",
				b[i].pid, b[i].tid, comm ? comm : "?");
		}
		image = image_of(nm, b[i].pid);
		if (c->o->perf_time && b[i].have_tsc) {
			char t[32];

			*cli_put_perf_time(t, hwt_pd_tsc_to_perf_time(
						      &c->tc, b[i].tsc)) = 0;
			fprintf(f, "  %s", t);
		} else if (c->o->time && b[i].have_tsc) {
			fprintf(f, "  %016" PRIx64, b[i].tsc);
		} else if (c->o->time) {
			fprintf(f, "  %16s", "-");
		}
		if (b[i].kind == HWT_AN_LOST) {
			fprintf(f, "  [trace lost at 0x%" PRIx64 ": %s]\n",
				b[i].from, hwt_errstr(b[i].error));
			continue;
		}
		where(c, image, b[i].from, from, sizeof(from));
		if (b[i].to)
			where(c, image, b[i].to, to, sizeof(to));
		else
			snprintf(to, sizeof(to), "(the kernel)");
		fprintf(f, "  %-7s %s -> %s\n", kind_name(b[i].kind), from, to);
	}
}

/* The first pass: the runs @l kept of stream @i, copied. */
static int keep_slices(struct last_ctx *c, struct hwt_an_last *l, size_t i)
{
	const struct hwt_an_slice *sl;
	size_t n = hwt_an_last_slices(l, &sl);

	for (size_t k = 0; k < n; k++) {
		struct kept *kp;

		if (hwt_grow((void **)&c->kept, &c->cap_kept, c->nkept + 1,
			     sizeof(*c->kept)) < 0)
			goto oom;
		kp = &c->kept[c->nkept];
		kp->s = sl[k];
		kp->stream = i;
		kp->seq = c->nkept++;
		kp->s.pops = malloc((sl[k].npops + 1) * sizeof(*kp->s.pops));
		kp->s.frames = malloc((sl[k].nframes + 1) *
				      sizeof(*kp->s.frames));
		if (!kp->s.pops || !kp->s.frames)
			goto oom;
		if (sl[k].npops)
			memcpy(kp->s.pops, sl[k].pops,
			       sl[k].npops * sizeof(*kp->s.pops));
		if (sl[k].nframes)
			memcpy(kp->s.frames, sl[k].frames,
			       sl[k].nframes * sizeof(*kp->s.frames));
	}
	return 0;
oom:
	fprintf(stderr, "hwt last: out of memory\n");
	return -1;
}

/* Did @pid/@tid run on more than one CPU (runs kept from two streams)? */
static int moved(const struct last_ctx *c, uint32_t pid, uint32_t tid)
{
	size_t first = SIZE_MAX;

	for (size_t k = 0; k < c->nkept; k++) {
		const struct kept *kp = &c->kept[k];

		if (kp->s.pid != pid || kp->s.tid != tid)
			continue;
		if (first == SIZE_MAX)
			first = kp->stream;
		else if (kp->stream != first)
			return 1;
	}
	return 0;
}

/* Runs in time order (a stream's keep their order). */
static int by_time(const void *a, const void *b)
{
	const struct kept *x = *(const struct kept *const *)a;
	const struct kept *y = *(const struct kept *const *)b;
	uint64_t tx = x->s.have_tsc ? x->s.tsc : 0;
	uint64_t ty = y->s.have_tsc ? y->s.tsc : 0;

	if (tx != ty)
		return tx < ty ? -1 : 1;
	if (x->stream != y->stream)
		return x->stream < y->stream ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * The call stack of @pid/@tid at the end of its last run on stream @i's
 * CPU: its runs on all CPUs up to then, in time order, composed. Returns
 * the frames in @out (innermost first, at most @max).
 */
static size_t call_stack(struct last_ctx *c, size_t i, uint32_t pid,
			 uint32_t tid, struct hwt_an_frame *out, size_t max,
			 size_t *dropped)
{
	const struct kept **runs = malloc((c->nkept + 1) * sizeof(*runs));
	const struct hwt_an_slice **sl = malloc((c->nkept + 1) *
						sizeof(*sl));
	size_t n = 0, upto = 0, got = 0;

	*dropped = 0;
	if (!runs || !sl)
		goto out;
	for (size_t k = 0; k < c->nkept; k++)
		if (c->kept[k].s.pid == pid && c->kept[k].s.tid == tid)
			runs[n++] = &c->kept[k];
	qsort(runs, n, sizeof(*runs), by_time);
	for (size_t k = 0; k < n; k++) {
		sl[k] = &runs[k]->s;
		if (runs[k]->stream == i)
			upto = k + 1;
	}
	got = hwt_an_slices_stack(sl, upto, out, max, dropped);
out:
	free(runs);
	free(sl);
	return got;
}

/* The analysis asks before each event and block, as flow.c does. */
struct piece_sync {
	const struct cli_flow_hook *hook;
	uint64_t base;		/* of the piece in the stream */
	struct cli_sync_quiet quiet;	/* (a new one each piece) */
	struct hwt_an_last *l;	/* a CPU's stream: told who runs */
	int nomem;
	const struct last_ctx *c;
};

static int last_sync(void *ctx, struct hwt_blk_decoder *dec,
		     uint64_t *quiet)
{
	struct piece_sync *ps = ctx;
	const struct last_ctx *c = ps->c;
	uint32_t pid, tid;
	uint64_t tsc;
	int due;

	/* --at: the decode ends at the first time past it (before its
	 * sideband is applied). */
	if (c->o->at.nwin && hwt_blk_time(dec, &tsc, NULL, NULL) >= 0 &&
	    !cli_select_time(&c->o->at, 1, tsc, &c->tc))
		return 1;

	due = cli_hook_sync(ps->hook, ps->hook->ctx, &ps->quiet, dec,
			    ps->base);
	/* Until the time moves, the hook is asked again at this offset. */
	*quiet = ps->quiet.valid ? ps->quiet.off : 0;
	if (due < 0)
		return 0;
	if (ps->l) {
		/* (UINT32_MAX: no thread known to run yet.) */
		ps->hook->task(ps->hook->ctx, &pid, &tid);
		if (pid != UINT32_MAX &&
		    hwt_an_last_task(ps->l, pid, tid) < 0)
			ps->nomem = 1;
	}
	/* (1 would end the decode: notes due are not the analysis'.) */
	return 0;
}

/* Stream @i is one the options choose: its CPU, the thread it ends in. */
static int chosen(const struct last_ctx *c, size_t i)
{
	const struct cli_select *s = &c->o->sel;
	const struct stream_end *e = &c->ends[i];
	uint32_t cpu = 0;
	int on_cpu = cli_pd_stream_cpu(c->pd, i, &cpu) >= 0;

	return cli_select_cpu(s, on_cpu, cpu) &&
	       cli_select_task(s, e->have_task,
			       (uint64_t)e->pid << 32 | e->tid);
}

/*
 * The trace is read and decoded piece by piece (cut at PSBs, as flow
 * does): memory is one piece, whatever the size of the stream; the call
 * stack and the last branches carry from piece to piece.
 */
static int one(void *ctx, size_t i, struct cli_pieces *trace,
	       struct hwt_image *image, const struct cli_flow_hook *hook)
{
	struct last_ctx *c = ctx;
	struct hwt_an_last_config lc = { c->o->n, c->o->depth + 1,
					  c->an_flags };
	struct hwt_blk_config cfg = c->cfg;
	struct piece_sync ps = { hook, 0, { 0, 0, 0, 0 }, NULL, 0, c };
	struct namer nm = { c->pd, i, names_at(c), 0, NULL, NULL, 0, 0 };
	const struct hwt_pd_exit *e = NULL;
	const struct hwt_image *names;
	struct hwt_an_last_end end;
	struct hwt_an_last *l;
	struct whose w;
	int took, more = 0, ret = 0, stopped = 0, r;

	(void)image;	/* hook->image(), as the process changes */
	/* (The first pass keeps every stream's runs of the threads.) */
	if (!c->collect && !chosen(c, i))
		return 0;
	l = hwt_an_last_new(&lc);
	if (!l) {
		fprintf(stderr, "hwt last: out of memory\n");
		return -1;
	}
	memset(&w, 0, sizeof(w));
	w.on_cpu = cli_pd_stream_cpu(c->pd, i, &w.cpu) >= 0;
	nm.on_cpu = w.on_cpu;
	if (w.on_cpu)
		ps.l = l;
	for (size_t k = 0; c->collect && k < cli_pd_nstreams(c->pd); k++)
		if (c->ends[k].have_task &&
		    hwt_an_last_watch(l, c->ends[k].pid, c->ends[k].tid) < 0)
			ps.nomem = 1;
	/* Whose process's exit to look for: the sideband's (--at: one
	 * before that time). */
	if (c->ends[i].have_task)
		e = exit_of(c, c->ends[i].pid);
	if (e && c->o->at.nwin && (!e->time || e->time > c->at_ns))
		e = NULL;
	took = ran_last(c, i);
	if (took && e && e->signal && (e->flags & HWT_PD_EXIT_HAVE_IP))
		hwt_an_last_stop(l, e->ip);
	while (!ret && !stopped && (more = cli_pieces_next(trace)) > 0) {
		cfg.qry.begin = trace->buf;
		cfg.qry.end = trace->buf + trace->len;
		ps.base = trace->base;
		memset(&ps.quiet, 0, sizeof(ps.quiet));
		if (!c->dec)
			c->dec = hwt_blk_new(&cfg, hook->image(hook->ctx));
		if (!c->walks)
			c->walks = hwt_an_walks_new();
		hwt_an_last_lend(l, c->dec);
		hwt_an_last_use_walks(l, c->walks);
		/* Each piece starts in the process the last one ended in. */
		r = hwt_an_last_run(l, &cfg, hook->image(hook->ctx),
				    trace->last ? 0 : trace->cut, last_sync,
				    &ps);
		if (r < 0 || ps.nomem) {
			fprintf(stderr, "hwt last: out of memory\n");
			ret = -1;
		}
		/* (--at: the time is reached; the rest is later.) */
		stopped = r > 0;
	}
	/* (2: nothing before it.) */
	if (stopped) {
		hwt_an_last_end(l, &end);
		stopped = end.insns ? 1 : 2;
	}
	if (!ret && more < 0)
		ret = -1;
	if (!ret && c->collect) {
		ret = keep_slices(c, l, i);
	} else if (!ret) {
		const struct hwt_an_frame *fr;
		size_t nfr, dropped;

		/* The thread the trace ended in names the places. */
		nm.own = hook->image(hook->ctx);
		if (w.on_cpu) {
			hook->task(hook->ctx, &w.pid, &w.tid);
			w.known = w.pid != UINT32_MAX;
		} else {
			cli_pd_stream_ids(c->pd, i, &w.pid, &w.tid);
			w.known = 1;
		}
		names = image_of(&nm, w.pid);
		if (c->shown++)
			printf("\n");
		header(c, i, &w, e, took, stopped, names, stdout);
		/* A thread that ran on other CPUs: its stack across them. */
		if (w.on_cpu && w.known && moved(c, w.pid, w.tid)) {
			nfr = call_stack(c, i, w.pid, w.tid, c->stack,
					 c->o->depth + 1, &dropped);
			fr = c->stack;
		} else {
			nfr = hwt_an_last_stack(l, &fr, &dropped);
		}
		print_stack(c, l, fr, nfr, dropped, e, took, stopped, names,
			    stdout);
		print_branches(c, l, &nm, stdout);
		hwt_an_last_end(l, &end);
		if (end.errors)
			printf("(%" PRIu64 " decode errors in this trace)\n",
			       end.errors);
	}
	namer_fini(&nm);
	hwt_an_last_delete(l);
	/* (The stream's process ended: its cache goes to the next.) */
	if (c->dec)
		hwt_blk_release_image(c->dec);
	return ret;
}

static int parse(int argc, char **argv, struct last_opts *o)
{
	enum { OPT_DEPTH = 256, OPT_NO_LINES, OPT_TIME, OPT_HELP, OPT_PID,
	       OPT_TID, OPT_PERF_TIME, OPT_AT, OPT_FILES };
	static const struct option long_opts[] = {
		{ "depth", required_argument, NULL, OPT_DEPTH },
		{ "no-lines", no_argument, NULL, OPT_NO_LINES },
		{ "time", no_argument, NULL, OPT_TIME },
		{ "perf-time", no_argument, NULL, OPT_PERF_TIME },
		{ "pid", required_argument, NULL, OPT_PID },
		{ "tid", required_argument, NULL, OPT_TID },
		{ "cpus", required_argument, NULL, 'C' },
		{ "at", required_argument, NULL, OPT_AT },
		/* (o->files, by name: cli_pd_files_slot()) */
		{ "symfs", required_argument, NULL, OPT_FILES },
		{ "vdso", required_argument, NULL, OPT_FILES },
		{ "buildid-dir", required_argument, NULL, OPT_FILES },
		{ "debug-dir", required_argument, NULL, OPT_FILES },
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int c, idx = 0;

	o->n = 16;
	o->depth = 64;
	o->lines = 1;
	o->time = 0;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":n:hC:", long_opts, &idx)) !=
	       -1) {
		switch (c) {
		case OPT_PID:
		case OPT_TID:
		case 'C':
			if (cli_select_parse(&o->sel, "hwt last",
					     c == 'C' ? "-C" : c == OPT_PID ?
					     "--pid" : "--tid", optarg) < 0)
				return 2;
			break;
		case 'n':
		case OPT_DEPTH:
			if (cli_parse_u64(optarg, &v) || v > 1000000) {
				fprintf(stderr, "hwt last: %s %s: not a count "
					"(0 to 1000000); see 'hwt help last'\n",
					c == 'n' ? "-n" : "--depth", optarg);
				return 2;
			}
			if (c == 'n')
				o->n = (size_t)v;
			else
				o->depth = (size_t)v;
			break;
		case OPT_NO_LINES:
			o->lines = 0;
			break;
		case OPT_TIME:
			o->time = 1;
			break;
		case OPT_PERF_TIME:
			o->time = 1;
			o->perf_time = 1;
			break;
		case OPT_AT:
			if (cli_parse_time(optarg, &o->at_win.to) < 0) {
				fprintf(stderr, "hwt last: --at %s: not a time "
					"(perf's seconds, as perf script "
					"prints them, or 0xTSC)\n", optarg);
				return 2;
			}
			/* (A window up to it, not freed.) */
			o->at.win = &o->at_win;
			o->at.nwin = 1;
			o->at.set = 1;
			o->at_text = optarg;
			break;
		case OPT_FILES:
			*cli_pd_files_slot(&o->files, long_opts[idx].name) =
				optarg;
			break;
		case 'h':
		case OPT_HELP:
			help_last();
			return -1;
		default:
			cli_bad_option("last", c, argv[optind - 1]);
			return 2;
		}
	}
	if (cli_one_file("last", argc, optind) < 0)
		return 2;
	o->file = argv[optind];
	return 0;
}

/*
 * CPUs' streams where a thread a stream ends in ran on another stream's
 * CPU too (the sideband says): its runs are worth keeping (call_stack()).
 */
static int threads_moved(const struct last_ctx *c)
{
	size_t n = cli_pd_nstreams(c->pd);
	uint32_t cpu, other;

	for (size_t i = 0; i < n; i++) {
		const struct stream_end *e = &c->ends[i];

		if (!e->have_task || cli_pd_stream_cpu(c->pd, i, &cpu) < 0)
			continue;
		for (size_t k = 0; k < n; k++)
			if (k != i &&
			    cli_pd_stream_cpu(c->pd, k, &other) >= 0 &&
			    other != cpu &&
			    cli_pd_ran_on(c->pd, other, e->pid, e->tid))
				return 1;
	}
	return 0;
}

/* --at: the last TSC packet of @len bytes of trace at or before the time
 * into *@tsc (left as it is if none). */
static void last_tsc_at(const struct last_ctx *c, const uint8_t *buf,
			size_t len, uint64_t *tsc)
{
	const uint8_t *pos = buf, *end = buf + len;
	struct hwt_pt_packet pkt;

	for (; (pos = hwt_pt_scan_next(pos, end, &pkt, NULL)); pos += pkt.size)
		if (pkt.type == HWT_PT_TSC &&
		    cli_select_time(&c->o->at, 1, pkt.u.tsc, &c->tc))
			*tsc = pkt.u.tsc;
}

/*
 * Does @size bytes of trace have a TSC: the last in @scan. Where the
 * trace has them, its last PSB+ has one and none after it is earlier, so
 * the bytes from there are scanned, not all (on python3's recording, 6%
 * of hwt last's instructions were this scan); else all.
 */
static int last_tsc(const uint8_t *buf, size_t size,
		    struct hwt_rec_pt_scan *scan)
{
	struct hwt_pkt_decoder *d = hwt_pkt_decoder_new(buf, size);
	uint64_t off = 0;

	if (d && hwt_pkt_sync_backward(d) >= 0 &&
	    hwt_pkt_get_sync_offset(d, &off) >= 0) {
		hwt_rec_pt_scan(buf + off, size - (size_t)off, scan);
		if (scan->have_tsc) {
			hwt_pkt_decoder_delete(d);
			return 1;
		}
	}
	hwt_pkt_decoder_delete(d);
	hwt_rec_pt_scan(buf, size, scan);
	return scan->have_tsc;
}

int cmd_last(int argc, char **argv)
{
	struct last_opts o;
	struct last_ctx c;
	uint32_t errata = 0;
	int ret;

	memset(&o, 0, sizeof(o));
	ret = parse(argc, argv, &o);
	if (ret) {
		cli_select_free(&o.sel);
		return ret < 0 ? 0 : ret;
	}
	if (!cli_pd_is_perfdata(o.file)) {
		fprintf(stderr, "hwt last: %s: not a perf.data file (hwt last "
			"reads what hwt record or perf record write)\n",
			o.file);
		cli_select_free(&o.sel);
		return 1;
	}
	memset(&c, 0, sizeof(c));
	c.o = &o;
	if (cli_pd_open_files(&c.pd, o.file, "hwt last", &o.files) < 0) {
		cli_select_free(&o.sel);
		return 1;
	}
	if ((o.perf_time || o.at.nwin) && cli_pd_time_conv(c.pd, &c.tc) < 0) {
		fprintf(stderr, "hwt last: %s: --%s: the file has no "
			"TIME_CONV (perf's time)%s.\n", o.file,
			o.at.nwin ? "at" : "perf-time",
			o.at.nwin ? "" : "; --time prints the TSC");
		ret = 1;
		goto out;
	}
	if (o.at.nwin && !cli_pd_has_time(c.pd)) {
		fprintf(stderr, "hwt last: %s: --at: its trace has no time (no "
			"TSC)\n", o.file);
		ret = 1;
		goto out;
	}
	if (o.at.nwin)
		c.at_ns = o.at_win.to.tsc ?
			  hwt_pd_tsc_to_perf_time(&c.tc, o.at_win.to.v) :
			  o.at_win.to.v;
	if (o.sel.ncpus && !cli_pd_any_cpu(c.pd)) {
		fprintf(stderr, "hwt last: %s: -C: its streams are threads' "
			"(perf record --per-thread), not CPUs'.\n", o.file);
		ret = 1;
		goto out;
	}
	hwt_blk_config_init(&c.cfg);
	/* As hwt flow (the processor's stack is empty at a PSB): the same
	 * returns whole or in pieces, each piece's decoder new at a PSB. */
	c.cfg.flags |= HWT_BLK_PSB_CLEARS_STACK;
	/* Blocks that end at every branch need no walk (HWT_AN_BRANCH_ENDS),
	 * for all the blocks they add. HWT_LAST_WALK=1: blocks that run on
	 * over direct calls and jumps, each walked (the tests' reference). */
	if (!cli_env_on("HWT_LAST_WALK")) {
		c.cfg.flags |= HWT_BLK_END_ON_CALL | HWT_BLK_END_ON_JUMP;
		c.an_flags = HWT_AN_BRANCH_ENDS;
	}
	if (cli_env_on("HWT_NO_CACHE"))
		c.cfg.flags |= HWT_BLK_NO_CACHE;
	cli_pd_qry_config(c.pd, &c.cfg.qry);
	if (c.cfg.qry.cpu.vendor &&
	    hwt_pt_cpu_errata(&c.cfg.qry.cpu, &errata) >= 0) {
		c.cfg.qry.errata = errata;
		c.cfg.qry.time.errata = errata;
	}
	c.ends = calloc(cli_pd_nstreams(c.pd) + 1, sizeof(*c.ends));
	c.lines = o.lines ? hwt_an_lines_new() : NULL;
	if (!c.ends || (o.lines && (!c.lines ||
	    hwt_an_lines_set_debug_dir(c.lines,
				       cli_pd_debug_dir(c.pd)) < 0))) {
		fprintf(stderr, "hwt last: out of memory\n");
		ret = 1;
		goto out;
	}
	for (size_t i = 0; i < cli_pd_nstreams(c.pd); i++) {
		struct stream_end *se = &c.ends[i];
		struct hwt_rec_pt_scan scan;
		struct cli_pieces trace;
		int more;

		cli_pd_stream_pieces(c.pd, i, &trace);
		while ((more = cli_pieces_next(&trace)) > 0) {
			if (o.at.nwin) {
				last_tsc_at(&c, trace.buf, (size_t)trace.cut,
					    &se->tsc);
				continue;
			}
			if (last_tsc(trace.buf, (size_t)trace.cut, &scan))
				se->tsc = scan.last_tsc;
		}
		cli_pieces_fini(&trace);
		if (more < 0) {
			ret = 1;
			goto out;
		}
		se->have_task = (o.at.nwin ?
				 cli_pd_stream_task_at(c.pd, i, c.at_ns,
						       &se->pid, &se->tid) :
				 cli_pd_stream_end_task(c.pd, i, &se->pid,
							&se->tid)) >= 0;
	}
	c.stack = calloc(o.depth + 1, sizeof(*c.stack));
	if (!c.stack) {
		fprintf(stderr, "hwt last: out of memory\n");
		ret = 1;
		goto out;
	}
	/* A thread that moved between CPUs: the threads' runs on each
	 * first. */
	if (threads_moved(&c)) {
		c.collect = 1;
		if (cli_pd_each_stream(c.pd, one, &c) < 0) {
			ret = 1;
			goto out;
		}
		c.collect = 0;
	}
	ret = cli_pd_each_stream(c.pd, one, &c) < 0 ? 1 : 0;
	if (fflush(stdout)) {
		fprintf(stderr, "hwt last: error writing output\n");
		ret = 1;
	}
out:
	for (size_t k = 0; k < c.nkept; k++) {
		free(c.kept[k].s.pops);
		free(c.kept[k].s.frames);
	}
	free(c.kept);
	free(c.stack);
	hwt_blk_delete(c.dec);
	hwt_an_walks_delete(c.walks);
	hwt_an_lines_delete(c.lines);
	free(c.ends);
	cli_pd_close(c.pd);
	cli_select_free(&o.sel);
	return ret;
}

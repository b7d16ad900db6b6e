/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The commands hwt flow, hwt calls and hwt coverage: help, options,
 * several traces of hwt coverage (a corpus), and the main function, which
 * picks the input (a raw trace, a perf.data) and the output.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hwt/analysis.h>
#include <hwt/flow.h>
#include <hwt/image.h>
#include <hwt/pt.h>

#include "cli/calls.h"
#include "cli/cli.h"
#include "cli/flow.h"

/* ------------------------------------------------------------------ */
/* Several traces (hwt coverage): a fuzzer's runs, or its corpus        */
/* ------------------------------------------------------------------ */

/*
 * Each trace is decoded on its own, as if alone, into a map of its own,
 * but one decoder per thread decodes them all (hwt_blk_set_trace()): its
 * block cache is warm after the first, as libxdc keeps its cache from one
 * run of the fuzzed program to the next. With -j N, N threads take the
 * traces in turn (a trace is not cut: they are many, and small), and
 * they print in order, from a ring of slots.
 */
struct corpus {
	struct flow *fl;
	struct corpus_slot {
		struct seg s;
		uint8_t failed;		/* not read, or no memory: said so */
		/* its map's, which went into its thread's union */
		uint64_t hash;
		size_t edges;
	} *slots;			/* trace k in slots[k % nslots] */
	size_t nslots;
	struct cli_order order;		/* of the traces */
};

/* A thread's: its decoder (with its walks, and the cover --lcov counts
 * all its traces into: the decoder's graph stays warm), a buffer for the
 * traces it reads, the map it folds them into (cleared after each), and
 * the union of its traces'. */
struct corpus_thread {
	struct corpus *c;
	struct hwt_blk_decoder *dec;
	struct hwt_an_walks *walks;
	struct hwt_an_cover *cover;
	uint8_t *buf;
	size_t cap;
	uint8_t *map, *sum;
};

static void corpus_thread_fini(struct corpus_thread *th)
{
	hwt_blk_delete(th->dec);
	hwt_an_walks_delete(th->walks);
	hwt_an_cover_delete(th->cover);
	free(th->buf);
	free(th->map);
	free(th->sum);
}

/* Trace @k into its slot, with @th's decoder (made here if none). */
static void corpus_decode(struct corpus_thread *th, size_t k)
{
	struct corpus *c = th->c;
	struct hwt_blk_decoder **dec = &th->dec;
	struct flow f = *c->fl;
	struct corpus_slot *sl = &c->slots[k % c->nslots];
	struct cli_input in;

	memset(&in, 0, sizeof(in));
	sl->failed = 1;
	if (!th->map)
		th->map = calloc(1, MAP_SIZE);
	if (!th->sum)
		th->sum = calloc(1, MAP_SIZE);
	/* (--lcov: the thread's cover for all its traces; theirs are added
	 * up into one file anyway.) */
	if (f.opt->lines && !th->cover)
		th->cover = hwt_an_cover_new();
	if (!th->map || !th->sum || (f.opt->lines && !th->cover) ||
	    flow_seg_init_map(&f, &sl->s, th->map, th->cover) < 0) {
		fprintf(stderr, "%s: out of memory.\n", f.opt->prog);
		goto out;
	}
	if (cli_input_read(&in, f.opt->traces[k], f.opt->prog, &th->buf,
			   &th->cap) < 0)
		goto out;
	sl->failed = 0;
	f.trace = in.data;
	f.size = in.size;
	sl->s.first = 1;
	if (*dec && hwt_blk_set_trace(*dec, f.trace, f.trace + f.size) < 0) {
		hwt_blk_delete(*dec);
		*dec = NULL;
	}
	if (!*dec)
		*dec = flow_new_decoder(&f, f.image);
	/* (Without a decoder, it tries to make one, and says so.) */
	sl->s.walks = th->walks;
	flow_decode_segment(&f, &sl->s, *dec, 1);
	/* (Kept with a decoder that stays, else freed there.) */
	th->walks = sl->s.walks;
	sl->s.walks = NULL;
	cli_input_close(&in);
	sl->hash = cli_map_take(th->map, th->sum, &sl->edges);
out:
	/* (The map and the cover are the thread's: no one else frees
	 * them.) */
	sl->s.fold.map = NULL;
	sl->s.cover = NULL;
}

static void *corpus_worker(void *arg)
{
	struct corpus_thread *th = arg;
	struct corpus *c = th->c;
	size_t k;

	while ((k = cli_order_take(&c->order)) != SIZE_MAX) {
		corpus_decode(th, k);
		cli_order_done(&c->order, &c->slots[k % c->nslots].s.done);
	}
	return NULL;
}

/* Trace @k's lines; its counts added to @all (its map went into its
 * thread's union). Returns 0, or 1 if it gave nothing (not read, or not a
 * trace: said so). */
static int corpus_print(struct corpus *c, size_t k, struct totals *all,
			struct cli_out *out)
{
	struct corpus_slot *sl = &c->slots[k % c->nslots];
	struct flow_options o = *c->fl->opt;
	struct flow f = *c->fl;
	struct totals t;

	if (sl->failed) {
		flow_seg_free(&sl->s);
		return 1;
	}
	/* (The union's bitmap and lines are the ones written, at the
	 * end.) */
	o.bitmap_out = NULL;
	o.lcov_out = NULL;
	o.drcov_out = NULL;
	f.opt = &o;
	memset(&t, 0, sizeof(t));
	cli_out_printf(out, "# trace %s\n", o.traces[k]);
	t.hash = sl->hash;
	t.edges = sl->edges;
	t.hashed = 1;
	flow_consume(&f, &sl->s, &t, out);
	(void)flow_finish(&f, &t, out);
	if (flow_add_totals(all, &t) < 0) {
		fprintf(stderr, "%s: out of memory.\n", o.prog);
		flow_totals_free(&t);
		return 1;
	}
	flow_totals_free(&t);
	return flow_not_a_trace(&t, o.prog, o.traces[k]);
}

/* All the traces, then their union. Returns 0, or 1 if a trace could not
 * be read or gave nothing, after a message. */
static int run_traces(struct flow *fl, struct totals *all,
		      struct cli_out *out)
{
	const struct flow_options *opt = fl->opt;
	unsigned jobs = opt->jobs ? opt->jobs : 1, nth = 0;
	/* ct[jobs]: this thread's (if no other runs) */
	struct corpus_thread *ct;
	pthread_t *th = NULL;
	struct corpus c;
	int ret = 0;

	memset(&c, 0, sizeof(c));
	c.fl = fl;
	c.nslots = jobs > 1 ? 4 * (size_t)jobs : 1;
	c.slots = calloc(c.nslots, sizeof(*c.slots));
	ct = calloc((size_t)jobs + 1, sizeof(*ct));
	cli_order_init(&c.order, opt->ntraces, c.nslots);
	if (jobs > 1)
		th = calloc(jobs, sizeof(*th));
	if (!c.slots || !ct || (jobs > 1 && !th)) {
		fprintf(stderr, "%s: out of memory.\n", opt->prog);
		ret = -1;
		goto out;
	}
	for (unsigned i = 0; i <= jobs; i++)
		ct[i].c = &c;
	for (unsigned i = 0; i < jobs && jobs > 1; i++) {
		if (pthread_create(&th[i], NULL, corpus_worker, &ct[i]))
			break;
		nth++;
	}
	for (size_t k = 0; k < opt->ntraces; k++) {
		struct corpus_slot *sl = &c.slots[k % c.nslots];

		if (!nth) {
			/* One thread (or none could start): in turn. */
			corpus_decode(&ct[jobs], k);
		} else {
			cli_order_wait(&c.order, &sl->s.done);
		}
		if (corpus_print(&c, k, all, out))
			ret = 1;
		cli_order_printed(&c.order, k + 1, &sl->s.done);
	}
	for (unsigned i = 0; i < nth; i++)
		pthread_join(th[i], NULL);
	/* (Saturating sums: in any order, the same. The covers are added
	 * up by file and offset: likewise.) */
	for (unsigned i = 0; i <= jobs; i++) {
		if (ct[i].sum)
			cli_map_add(all->map, ct[i].sum);
		if (ct[i].cover && all->cover &&
		    hwt_an_cover_merge(all->cover, ct[i].cover) < 0) {
			fprintf(stderr, "%s: out of memory.\n", opt->prog);
			ret = -1;
		}
	}
	cli_out_printf(out, "# all traces\n");
	if (flow_finish(fl, all, out) < 0)
		ret = -1;
out:
	for (unsigned i = 0; ct && i <= jobs; i++)
		corpus_thread_fini(&ct[i]);
	free(ct);
	free(th);
	free(c.slots);
	cli_order_fini(&c.order);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Command line                                                        */
/* ------------------------------------------------------------------ */

static const char common_help[] =
	"image:\n"
	"  --raw FILE[:FROM[-TO]]:BASE   map (part of) FILE at address BASE\n"
	"  --elf FILE[:BIAS]             map the loadable segments of an ELF file,\n"
	"                                each at its address + BIAS; symbols\n"
	"trace:\n"
	"  TRACE[:FROM[-TO]]             the Intel PT trace (or a range of it)\n"
	"  FILE.data                     or a perf.data of `perf record -e intel_pt//`:\n"
	"                                each AUX stream is decoded with the code\n"
	"                                its sideband says was mapped, after a line\n"
	"                                '# stream idx N: ...'; lost data prints as\n"
	"                                [warning: ...] where it happened\n"
	CLI_PD_FILES_HELP
	"  --cpu none|auto|F/M[/S]       decode for this cpu's errata\n"
	"  --mtc-freq N, --nom-freq N, --cpuid-0x15.eax N, --cpuid-0x15.ebx N\n"
	"                                timing parameters, as for ptxed\n"
	"  --no-cyc                      time without CYC packets, as ptdump\n"
	"                                --no-cyc (a perf.data says so itself)\n"
	"  --filter:addrN_cfg/_a/_b V    IP filter configuration, as for ptxed\n";

/* flow's and calls' lines: which to show (select.c). */
static const char select_help[] =
	"choose (as perf script's --pid, --tid, --cpu, --time):\n"
	"  --pid LIST, --tid LIST        the lines of these threads (1,2)\n"
	"  -C LIST                       of these CPUs' streams (0,2-3)\n"
	"  --time-range \"START,END ...\"  of these times: perf's seconds\n"
	"                                (as perf script, hwt sideband) or\n"
	"                                0xTSC (as --time); an end left out\n"
	"                                is open. Errors and lost-data notes\n"
	"                                print whatever threads are chosen,\n"
	"                                in the CPUs and times chosen. With a\n"
	"                                START to each, hwt flow decodes from\n"
	"                                a PSB before them (-v says where):\n"
	"                                the trace before is read, its lost\n"
	"                                data said, its decode errors not\n"
	"                                looked for (HWT_NO_SEEK=1: all).\n";

void help_flow(void)
{
	printf("usage: hwt flow [--insn|--blocks|--branches|--stat] [options] "
	       "TRACE\n\n"
	       "The program flow of an Intel PT trace.\n"
	       "  --insn          one line per instruction (default):\n"
	       "                  [TSC  ]IP  [SYMBOL+0xOFF]  [DISASSEMBLY]\n"
	       "  --blocks        one line per block: IP END_IP NINSN  "
	       "[SYMBOL+0xOFF]\n"
	       "  --branches      one line per taken branch: 0xFROM 0xTO\n"
	       "                  (instructions' branches; interrupts and\n"
	       "                  tracing gaps are not branches)\n"
	       "  --stat          counts only\n"
	       "  --disasm        disassemble (Zydis, Intel syntax)\n"
	       "  --srcline       each instruction's source FILE:LINE,\n"
	       "                  from the DWARF of its file (or its\n"
	       "                  debug file's), after the symbol\n"
	       "  --time          print the estimated TSC per block\n"
	       "  --perf-time     ... as perf's time (perf.data): seconds\n"
	       "                  with ns, as perf script --ns prints it\n"
	       "  --no-sym        no symbol lookup\n"
	       "  --no-events     do not print events ([enabled], ...)\n"
	       "  --by-stream     several CPUs' streams (perf record -a):\n"
	       "                  one after the other, not in time order\n"
	       "  -j N            decode on N threads (same output)\n"
	       "  -v              say how -j cut the trace (stderr)\n"
	       "\n%s%s\n"
	       "A perf.data of several CPUs' streams prints in time order\n"
	       "(as perf script): the streams' headers, then the runs of\n"
	       "lines of each CPU's threads by their time (equal times by\n"
	       "CPU), each after [pid P tid T cpu C] where the CPU or\n"
	       "thread changes (the text held in a file under $TMPDIR).\n"
	       "Events print as ptxed prints them. Errors print as\n"
	       "[error at offset 0xOFF, ip 0xIP: MESSAGE]; decoding resumes at\n"
	       "the next PSB. With -j, the trace is cut at PSBs (a perf.data\n"
	       "stream too: each thread follows its processes), each\n"
	       "segment starting with the time one thread has there. With\n"
	       "--time an instruction has the time after the trace up to it\n"
	       "(a branch's own TNT bit or TIP included). A branch whose\n"
	       "target is only known after a PSB is resolved at the PSB's IP,\n"
	       "in all modes. Lines chosen: a stream none of whose can be\n"
	       "(another thread's or CPU's) is not decoded; --by-stream\n"
	       "prints the streams one after the other, each thread's\n"
	       "lines after [pid P tid T] where it changes.\n",
	       common_help, select_help);
}

void help_calls(void)
{
	printf("usage: hwt calls [options] TRACE\n\n"
	       "Function-call history: one line per function segment,\n"
	       "  N<TAB>[indent]NAME<TAB>inst FIRST,LAST[<TAB>tsc TSC]\n"
	       "indented two spaces per call level (the lowest level seen is\n"
	       "0; at most 200 levels). A segment starts where the function\n"
	       "changes (after a call or a return, at a jump into another\n"
	       "symbol, where code runs into the next symbol), after an\n"
	       "interrupt or a gap in the trace, and where the cpu goes to\n"
	       "another thread (cpu-mode perf.data): each thread has a stack\n"
	       "of its own, and its lines follow a line [pid P tid T]\n"
	       "where the thread changes. The streams of several cpus\n"
	       "(perf record -a) are one history: the runs of threads on\n"
	       "cpus in time order, each after a line [pid P tid T cpu C],\n"
	       "a thread's stack going on on the cpu it moved to.\n"
	       "Instructions are numbered from 1.\n"
	       "Errors and notes of lost data print between the lines, where\n"
	       "they happened. Lines are held to the end, beyond 64 Ki in a\n"
	       "file under $TMPDIR. -j N prints what -j1 prints.\n"
	       "  --time          the TSC at the segment's start\n"
	       "  --perf-time     ... as perf's time (perf.data): seconds\n"
	       "                  with ns, as perf script --ns prints it\n"
	       "  --stream        print the lines as they come, indented\n"
	       "                  from the first line's level (a return\n"
	       "                  above it stays at 0, as in perf script's\n"
	       "                  call trace); nothing held to the end\n"
	       "                  (each cpu's stream a history of its own)\n"
	       "  --folded        the lines as folded stacks, a flame\n"
	       "                  graph's input (flamegraph.pl, inferno,\n"
	       "                  speedscope): CALLER;...;FUNCTION COUNT,\n"
	       "                  each function's own instructions at that\n"
	       "                  stack of callers ([unknown]: one the trace\n"
	       "                  started in and never returned to),\n"
	       "                  \"pid P tid T;\" first\n"
	       "                  with several threads; all else on stderr\n"
	       "  --timeline      the calls as a timeline: Chrome trace-\n"
	       "                  event JSON (Perfetto's UI, chrome://\n"
	       "                  tracing), an event per call of a function,\n"
	       "                  per thread; all else on stderr\n"
	       "  --clock insn|time  --timeline's clock: instructions (one a\n"
	       "                  nanosecond, default), or the TSC (perf's\n"
	       "                  time, as fine as the trace's timing)\n"
	       "\n%s%s"
	       "Lines not chosen keep their numbers and instructions (and\n"
	       "depths: every thread is decoded); --folded keeps a chosen\n"
	       "thread's callers from outside the times chosen. The text\n"
	       "between lines (errors, lost-data notes) prints whatever is\n"
	       "chosen.\n",
	       common_help, select_help);
}

void help_coverage(void)
{
	printf("usage: hwt coverage [-o FILE] [options] TRACE...\n\n"
	       "AFL-style edge coverage: a 64 KiB bitmap of (from, to) block\n"
	       "transitions, index = hash(to) ^ (hash(from) >> 1), counters\n"
	       "saturating at 255. Blocks end at every branch. Prints the\n"
	       "number of edges (non-zero cells) and the FNV-1a 64 hash of the\n"
	       "bitmap. No edge crosses a PSB, an enable, a disable or an\n"
	       "overflow, so -j N gives the same bitmap as -j1. A perf.data\n"
	       "stream's lost-data warnings print before its counts.\n"
	       "Several raw traces of one program (a fuzzer's runs, a corpus):\n"
	       "each is decoded on its own, as if alone, and printed after a\n"
	       "line '# trace NAME', then their union after '# all traces'\n"
	       "(-o writes the union's bitmap); one decoder per thread decodes\n"
	       "them all, its block cache warm after the first, and -j N\n"
	       "decodes N traces at a time.\n"
	       "  -o FILE         write the bitmap (65536 bytes) to FILE\n"
	       "  --lcov FILE     and the source lines' coverage, an lcov\n"
	       "                  tracefile (genhtml, lcov, IDEs): every\n"
	       "                  line of the DWARF line tables of each\n"
	       "                  file that ran, with the times its most\n"
	       "                  run instruction ran (0: not run), every\n"
	       "                  function with the times its entry ran,\n"
	       "                  every conditional jump with the times\n"
	       "                  it was taken and not ('-': not run);\n"
	       "                  prints 'lines: HIT of FOUND in N\n"
	       "                  source files', 'functions: HIT of N',\n"
	       "                  'branches: HIT of N'\n"
	       "  --drcov FILE    and the code that ran as a drcov file\n"
	       "                  (Lighthouse, bncov, Cartographer: no\n"
	       "                  DWARF needed): a module a file, blocks\n"
	       "                  from where its ELF program headers load\n"
	       "                  it; prints 'drcov: N modules, M blocks'\n"
	       "  -j N            decode on N threads\n"
	       "  -v              say how -j cut the trace (stderr)\n"
	       "\n%s", common_help);
}

static int get_num(const char *prog, const char *opt, const char *arg,
		   uint64_t max, uint64_t *v)
{
	if (!arg || cli_parse_u64(arg, v) || *v > max) {
		fprintf(stderr, "%s: %s: bad or missing argument%s%s.\n", prog,
			opt, arg ? ": " : "", arg ? arg : "");
		return -1;
	}
	return 0;
}

/* The options; @images gets the index in @argv of each --raw and --elf. */
static int parse_opts(int argc, char **argv, struct flow_options *opt,
		      int *images, int *nimages_out, void (*help)(void))
{
	const char *prog = argv[0];
	struct hwt_qry_config *q = &opt->config.qry;
	uint64_t v;
	int nimages = 0, r;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *next = i + 1 < argc ? argv[i + 1] : NULL;
		const char **slot;

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			help();
			return 1;
		} else if (a[0] != '-' || !strcmp(a, "-")) {
			if (opt->trace && opt->mode != MODE_COVERAGE) {
				fprintf(stderr, "%s: more than one trace: %s.\n",
					prog, a);
				return -1;
			}
			if (!opt->trace)
				opt->trace = a;
			opt->traces[opt->ntraces++] = a;
		} else if (!strcmp(a, "--raw") || !strcmp(a, "--elf")) {
			if (!next) {
				fprintf(stderr, "%s: %s: missing argument.\n",
					prog, a);
				return -1;
			}
			images[nimages++] = i;
			i++;
		} else if (opt->mode <= MODE_STAT &&
			   (!strcmp(a, "--insn") || !strcmp(a, "--blocks") ||
			    !strcmp(a, "--branches") || !strcmp(a, "--stat"))) {
			opt->mode = a[2] == 'i' ? MODE_INSN :
				    a[3] == 'l' ? MODE_BLOCKS :
				    a[3] == 'r' ? MODE_BRANCHES : MODE_STAT;
		} else if (opt->mode == MODE_INSN && !strcmp(a, "--disasm")) {
			opt->disasm = 1;
		} else if (opt->mode == MODE_INSN && !strcmp(a, "--srcline")) {
			opt->srcline = 1;
		} else if (!strcmp(a, "--time")) {
			opt->time = 1;
		} else if (!strcmp(a, "--perf-time")) {
			opt->time = 1;
			opt->perf_time = 1;
		} else if (opt->mode == MODE_CALLS &&
			   !strcmp(a, "--stream")) {
			opt->stream = 1;
		} else if (opt->mode == MODE_CALLS &&
			   !strcmp(a, "--folded")) {
			opt->folded = 1;
		} else if (opt->mode == MODE_CALLS &&
			   !strcmp(a, "--timeline")) {
			opt->timeline = 1;
		} else if (opt->mode == MODE_CALLS &&
			   !strcmp(a, "--clock")) {
			if (!next || (strcmp(next, "insn") &&
				      strcmp(next, "time"))) {
				fprintf(stderr, "%s: --clock: insn or time.\n",
					prog);
				return -1;
			}
			opt->time_clock = next[0] == 't';
			i++;
		} else if (opt->mode <= MODE_STAT &&
			   !strcmp(a, "--by-stream")) {
			opt->by_stream = 1;
		} else if (!strcmp(a, "--no-sym")) {
			opt->no_sym = 1;
		} else if (!strcmp(a, "--no-events")) {
			opt->events = 0;
		} else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
			opt->verbose = 1;
		} else if (!strcmp(a, "-j") || !strncmp(a, "-j", 2)) {
			const char *n = a[2] ? a + 2 : next;

			if (!n || cli_parse_u64(n, &v) || !v || v > 1024) {
				fprintf(stderr, "%s: -j: want 1..1024 threads.\n",
					prog);
				return -1;
			}
			opt->jobs = (unsigned)v;
			if (!a[2])
				i++;
		} else if (opt->mode == MODE_COVERAGE && !strcmp(a, "-o")) {
			if (!next) {
				fprintf(stderr, "%s: -o: missing argument.\n",
					prog);
				return -1;
			}
			opt->bitmap_out = next;
			i++;
		} else if (opt->mode == MODE_COVERAGE &&
			   (!strcmp(a, "--lcov") || !strcmp(a, "--drcov"))) {
			if (!next) {
				fprintf(stderr, "%s: %s: missing argument.\n",
					prog, a);
				return -1;
			}
			*(a[2] == 'l' ? &opt->lcov_out : &opt->drcov_out) =
				next;
			opt->lines = 1;
			i++;
		} else if (!strncmp(a, "--", 2) &&
			   (slot = cli_pd_files_slot(&opt->files, a + 2))) {
			if (!next) {
				fprintf(stderr, "%s: %s: missing argument.\n",
					prog, a);
				return -1;
			}
			*slot = next;
			i++;
		} else if (!strcmp(a, "--cpu")) {
			if (cli_ipt_parse_cpu(prog, next, &q->cpu))
				return -1;
			i++;
		} else if (!strcmp(a, "--mtc-freq") ||
			   !strcmp(a, "--nom-freq")) {
			if (get_num(prog, a, next, UINT8_MAX, &v))
				return -1;
			if (a[2] == 'm')
				q->time.mtc_freq = (uint8_t)v;
			else
				q->time.nom_freq = (uint8_t)v;
			i++;
		} else if (!strcmp(a, "--no-cyc")) {
			q->flags |= HWT_QRY_NO_CYC;
		} else if (!strcmp(a, "--cpuid-0x15.eax") ||
			   !strcmp(a, "--cpuid-0x15.ebx")) {
			if (get_num(prog, a, next, UINT32_MAX, &v))
				return -1;
			if (a[14] == 'a')
				q->time.cpuid_0x15_eax = (uint32_t)v;
			else
				q->time.cpuid_0x15_ebx = (uint32_t)v;
			i++;
		} else if (!strncmp(a, "--filter:addr", 13) && a[13] >= '0' &&
			   a[13] <= '3' && a[14] == '_') {
			unsigned n = (unsigned)(a[13] - '0');

			if (get_num(prog, a, next,
				    !strcmp(a + 15, "cfg") ? 15 : UINT64_MAX,
				    &v))
				return -1;
			if (!strcmp(a + 15, "cfg"))
				q->addr_filter[n].cfg = (uint8_t)v;
			else if (!strcmp(a + 15, "a"))
				q->addr_filter[n].a = v;
			else if (!strcmp(a + 15, "b"))
				q->addr_filter[n].b = v;
			else
				goto unknown;
			i++;
		} else if (opt->mode != MODE_COVERAGE &&
			   (r = cli_select_option(&opt->sel, prog, argc, argv,
						  &i)) != 0) {
			if (r < 0)
				return -1;
		} else {
unknown:
			fprintf(stderr, "%s: unknown option: %s (see 'hwt help "
				"%s').\n", prog, a, prog);
			return -1;
		}
	}
	if (!opt->trace) {
		fprintf(stderr, "%s: no trace file given (see 'hwt help %s').\n",
			prog, prog);
		return -1;
	}
	if ((opt->folded || opt->timeline) && opt->stream) {
		fprintf(stderr, "%s: --%s takes the whole history; not with "
			"--stream.\n", prog,
			opt->folded ? "folded" : "timeline");
		return -1;
	}
	if (opt->folded && opt->timeline) {
		fprintf(stderr, "%s: --folded or --timeline, not both.\n",
			prog);
		return -1;
	}
	if (opt->sel.set && opt->mode == MODE_STAT) {
		fprintf(stderr, "%s: --pid, --tid, -C and --time-range choose "
			"lines: not with --stat (counts are the trace's).\n",
			prog);
		return -1;
	}
	if (opt->time_clock && !opt->timeline) {
		fprintf(stderr, "%s: --clock is --timeline's.\n", prog);
		return -1;
	}
	/* (The lines' times, for the timeline.) */
	if (opt->time_clock)
		opt->time = 1;
	for (size_t k = 0; opt->ntraces > 1 && k < opt->ntraces; k++) {
		if (cli_pd_is_perfdata(opt->traces[k])) {
			fprintf(stderr, "%s: %s: a perf.data file is decoded "
				"alone (its streams are several traces).\n",
				prog, opt->traces[k]);
			return -1;
		}
	}
	if (cli_pd_is_perfdata(opt->trace)) {
		if (nimages)
			fprintf(stderr, "%s: warning: --raw and --elf are "
				"ignored with perf.data: its sideband says "
				"what was mapped.\n", prog);
	} else if (!nimages) {
		fprintf(stderr, "%s: warning: no --raw or --elf image: every "
			"instruction will be missing.\n", prog);
	}
	*nimages_out = nimages;
	return 0;
}

/* Are symbols never looked up? (Calls find functions by name.) */
static int symbols_unused(const struct flow_options *opt)
{
	return opt->mode == MODE_STAT || opt->mode == MODE_COVERAGE ||
	       opt->mode == MODE_BRANCHES ||
	       (opt->no_sym && opt->mode != MODE_CALLS);
}

/*
 * The options, then the images (in their order): only then is the mode
 * known, which says whether reading the files' symbols is worth its time.
 */
static int parse_args(int argc, char **argv, struct flow_options *opt,
		      struct hwt_image *image, void (*help)(void))
{
	int *images = calloc((size_t)argc, sizeof(*images));
	int nimages = 0, ret;

	opt->traces = calloc((size_t)argc, sizeof(*opt->traces));
	if (!images || !opt->traces) {
		fprintf(stderr, "%s: out of memory.\n", argv[0]);
		free(images);
		return -1;
	}
	ret = parse_opts(argc, argv, opt, images, &nimages, help);
	if (!ret && symbols_unused(opt))
		hwt_image_set_symbols(image, 0);
	if (!ret && opt->files.debug_dir &&
	    hwt_image_set_debug_dir(image, opt->files.debug_dir) < 0) {
		fprintf(stderr, "%s: out of memory.\n", argv[0]);
		ret = -1;
	}
	for (int k = 0; !ret && k < nimages; k++) {
		const char *a = argv[images[k]], *next = argv[images[k] + 1];

		if (a[2] == 'r' ? cli_image_raw(image, next, argv[0]) :
				  cli_image_elf(image, next, argv[0], 0))
			ret = -1;
	}
	free(images);
	return ret;
}

/* What the lines chosen (--pid, ...) need of the trace (@have_tc: the
 * perf.data's TIME_CONV): 0, or -1 after a message. */
static int check_select(const struct flow_options *opt, struct cli_pd *pd,
			int have_tc)
{
	const struct cli_select *s = &opt->sel;
	const char *why = NULL;

	if (!s->set)
		return 0;
	if (!pd && (cli_select_threads(s) || s->ncpus))
		why = "--pid, --tid and -C choose among a perf.data's "
		      "threads and CPUs; this is a raw trace";
	else if (pd && s->ncpus && !cli_pd_any_cpu(pd))
		why = "-C: its streams are threads' (perf record "
		      "--per-thread), not CPUs'";
	else if (pd && s->nwin && !cli_pd_has_time(pd))
		why = "--time-range: its trace has no time (no TSC)";
	else if (cli_select_seconds(s) && !have_tc)
		why = "--time-range: seconds are perf's time, which needs a "
		      "perf.data's TIME_CONV; give TSC values (0x...)";
	if (!why)
		return 0;
	fprintf(stderr, "%s: %s: %s.\n", opt->prog, opt->trace, why);
	return -1;
}

/* --perf-time needs the file's TIME_CONV: 0, or -1 after a message. */
static int check_perf_time(const struct flow_options *opt, int have_tc)
{
	if (!opt->perf_time || have_tc)
		return 0;
	fprintf(stderr, "%s: %s: --perf-time: perf's time needs a perf.data's "
		"TIME_CONV; --time prints the TSC.\n", opt->prog, opt->trace);
	return -1;
}

/* All @pd's streams are CPUs'. */
static int on_cpus(struct cli_pd *pd)
{
	size_t n = cli_pd_nstreams(pd);
	uint32_t cpu;

	for (size_t i = 0; i < n; i++)
		if (cli_pd_stream_cpu(pd, i, &cpu) < 0)
			return 0;
	return 1;
}

/*
 * hwt calls on a perf.data of CPUs' streams (perf record -a): one history
 * of them all (calls.h), so that a thread's calls go on where it moves to
 * another CPU. Not with --stream, which prints before the later streams
 * are decoded.
 */
static int merge_cpus(struct cli_pd *pd, const struct flow_options *opt)
{
	if (opt->mode != MODE_CALLS || opt->stream || cli_pd_nstreams(pd) < 2)
		return 0;
	return on_cpus(pd);
}

/*
 * hwt flow's lines on a perf.data of CPUs' streams: in time order (as
 * perf script prints them), unless --by-stream. Counts are counts.
 */
static int order_cpus(struct cli_pd *pd, const struct flow_options *opt)
{
	if ((opt->mode != MODE_INSN && opt->mode != MODE_BLOCKS &&
	     opt->mode != MODE_BRANCHES) || opt->by_stream ||
	    cli_pd_nstreams(pd) < 2 || !cli_pd_has_time(pd))
		return 0;
	return on_cpus(pd);
}

/*
 * The CPUs' streams decoded into the merge's file, then printed from it
 * in time order. Returns the exit code.
 */
static int flow_by_time(struct flow *fl, struct cli_pd *pd, struct totals *t,
			struct cli_out *out, int ordered)
{
	struct cli_out text;
	int ret = 1, got;

	fl->all = pd ? t : NULL;
	fl->by_time = cli_merge_new();
	if (!fl->by_time)
		return 1;
	cli_merge_select(fl->by_time, &fl->opt->sel,
			 fl->have_tc ? &fl->tc : NULL, ordered);
	/* (One thread: a -j segment does not know the stream's time before
	 * it, to which a time going back in a damaged trace is raised:
	 * fuzz_cli_perfdata found lines not made at -j2.) */
	fl->skip_before = fl->opt->sel.nwin != 0 && fl->opt->jobs <= 1;
	fl->seek = fl->opt->sel.nwin != 0 && fl->opt->mode != MODE_CALLS &&
		   fl->opt->mode != MODE_STAT &&
		   fl->opt->mode != MODE_COVERAGE && !cli_env_on("HWT_NO_SEEK");
	if (cli_out_init(&text, cli_merge_file(fl->by_time)) < 0) {
		fprintf(stderr, "%s: out of memory.\n", fl->opt->prog);
		goto out;
	}
	if (pd) {
		got = cli_pd_flow(pd, fl, &text);
	} else {
		/* A raw trace: one stream, chosen by its time. */
		cli_merge_stream(fl->by_time, cli_out_pos(&text), 0, 0);
		got = flow_run_raw(fl, t, &text) < 0 ? -1 : 0;
		cli_merge_stream_end(fl->by_time, cli_out_pos(&text));
	}
	if (got == 0) {
		cli_out_flush(&text);
		if (text.failed)
			fprintf(stderr, "%s: cannot write the temporary file: "
				"%s\n", fl->opt->prog, strerror(errno));
		else if (cli_merge_print(fl->by_time, out) == 0 &&
			 flow_finish(fl, t, out) == 0)
			ret = 0;
	}
	cli_out_fini(&text);
out:
	cli_merge_delete(fl->by_time);
	fl->by_time = NULL;
	return ret;
}

/* calls --timeline: a thread's name (comm) at the end of the file. */
static const char *thread_comm(void *ctx, uint32_t tid)
{
	struct cli_pd *pd = ctx;
	size_t n = cli_pd_nstreams(pd);

	return n ? cli_pd_task_comm(pd, n - 1, tid, UINT64_MAX) : NULL;
}

/* calls --folded: the stacks, to stdout. */
static int print_folded(struct calls_tree *tree)
{
	struct cli_out fo;
	int ret;

	if (cli_out_init(&fo, stdout) < 0)
		return -1;
	ret = calls_tree_print_folded(tree, &fo);
	cli_out_fini(&fo);
	return fo.failed ? -1 : ret;
}

static int flow_main(int argc, char **argv, enum flow_mode mode,
		     void (*help)(void))
{
	const char *prog = argv[0];
	struct flow_options opt;
	struct cli_input in;
	struct cli_out out, jout;
	struct totals t;
	struct flow fl;
	struct cli_pd *pd = NULL;
	uint32_t errata = 0;
	int ret;

	memset(&in, 0, sizeof(in));
	memset(&out, 0, sizeof(out));
	memset(&jout, 0, sizeof(jout));
	memset(&opt, 0, sizeof(opt));
	memset(&fl, 0, sizeof(fl));
	fl.walk_each = cli_env_on("HWT_WALK_EACH");
	memset(&t, 0, sizeof(t));
	hwt_blk_config_init(&opt.config);
	if (cli_env_on("HWT_NO_CACHE"))
		opt.config.flags |= HWT_BLK_NO_CACHE;
	opt.prog = prog;
	opt.mode = mode;
	opt.events = 1;
	opt.jobs = 1;

	fl.image = hwt_image_new();
	if (!fl.image) {
		fprintf(stderr, "%s: out of memory.\n", prog);
		return 1;
	}
	ret = parse_args(argc, argv, &opt, fl.image, help);
	if (ret) {
		hwt_image_delete(fl.image);
		free(opt.traces);
		cli_select_free(&opt.sel);
		return ret > 0 ? 0 : 1;
	}
	if (opt.mode == MODE_COVERAGE || opt.mode == MODE_BRANCHES ||
	    opt.mode == MODE_STAT || opt.mode == MODE_CALLS)
		opt.events = 0;
	/* Only a block's last instruction branches: no walk of the others
	 * (--branches: none at all, as hwt last; HWT_WALK_EACH=1, blocks
	 * that run on, walked). */
	if (opt.mode == MODE_COVERAGE || opt.mode == MODE_CALLS ||
	    (opt.mode == MODE_BRANCHES && !fl.walk_each))
		opt.config.flags |= HWT_BLK_END_ON_CALL | HWT_BLK_END_ON_JUMP;
	/* As the processor (and perf): what -j segments start with. */
	opt.config.flags |= HWT_BLK_PSB_CLEARS_STACK;
	if (cli_pd_is_perfdata(opt.trace)) {
		opt.files.no_symbols = symbols_unused(&opt);
		if (cli_pd_open_files(&pd, opt.trace, prog, &opt.files) < 0) {
			hwt_image_delete(fl.image);
			free(opt.traces);
			cli_select_free(&opt.sel);
			return 1;
		}
		cli_pd_qry_config(pd, &opt.config.qry);
	}
	opt.lines_debug_dir = pd ? cli_pd_debug_dir(pd) : opt.files.debug_dir;
	if (opt.config.qry.cpu.vendor &&
	    hwt_pt_cpu_errata(&opt.config.qry.cpu, &errata) < 0)
		fprintf(stderr, "%s: warning: no errata known for this cpu.\n",
			prog);
	opt.config.qry.errata = errata;
	opt.config.qry.time.errata = errata;

	fl.have_tc = pd && cli_pd_time_conv(pd, &fl.tc) == 0;
	if ((!pd && opt.ntraces < 2 &&
	     cli_input_open(&in, opt.trace, prog) < 0) ||
	    check_select(&opt, pd, fl.have_tc) < 0 ||
	    check_perf_time(&opt, fl.have_tc) < 0) {
		cli_input_close(&in);
		cli_pd_close(pd);
		hwt_image_delete(fl.image);
		free(opt.traces);
		cli_select_free(&opt.sel);
		return 1;
	}
	fl.opt = &opt;
	fl.want_times = opt.time || opt.sel.nwin;
	fl.trace = in.data;
	fl.size = in.size;
	ret = 1;
	/* --folded, --timeline: those on stdout, all else (headers, notes,
	 * errors) on stderr. */
	if (cli_out_init(&out, opt.folded || opt.timeline ? stderr : stdout) <
		    0 ||
	    cli_out_init(&jout, stdout) < 0)
		goto out;
	if (opt.folded && !(fl.tree = calls_tree_new())) {
		fprintf(stderr, "%s: out of memory.\n", prog);
		goto out;
	}
	if (opt.timeline) {
		fl.timeline = calls_timeline_new(&jout, opt.time_clock,
						 fl.have_tc ? &fl.tc : NULL);
		if (!fl.timeline) {
			fprintf(stderr, "%s: out of memory.\n", prog);
			goto out;
		}
	}
	if (opt.disasm) {
		fl.dis = cli_disasm_new(0);
		if (!fl.dis) {
			fprintf(stderr, "%s: cannot set up the disassembler.\n",
				prog);
			goto out;
		}
	}
	if (opt.mode == MODE_CALLS) {
		fl.names = calls_names_new();
		if (!fl.names) {
			fprintf(stderr, "%s: out of memory.\n", prog);
			goto out;
		}
	}
	if (flow_totals_init(&fl, &t, &out) < 0)
		goto out;
	/* Symbols may be loaded lazily: not on several threads at once. */
	{
		const char *name;
		uint64_t off;

		(void)hwt_image_symbol(fl.image, 0, &name, &off);
	}
	if (opt.ntraces > 1) {
		ret = run_traces(&fl, &t, &out) ? 1 : 0;
		goto out;
	}
	/* (-j decodes every segment: what one thread has at the next.) */
	fl.stop_past = opt.jobs <= 1;
	if (pd && order_cpus(pd, &opt)) {
		ret = flow_by_time(&fl, pd, &t, &out, 1);
	} else if (opt.sel.set && opt.mode != MODE_CALLS) {
		ret = flow_by_time(&fl, pd, &t, &out, 0);
	} else if (pd) {
		fl.all = &t;
		fl.merge = merge_cpus(pd, &opt) ? calls_merge_new() : NULL;
		if (cli_pd_flow(pd, &fl, &out) == 0 &&
		    (!fl.merge || calls_merge_replay(fl.merge, t.calls) == 0)) {
			if (opt.mode == MODE_STAT || opt.mode == MODE_COVERAGE)
				cli_out_printf(&out, "# all streams\n");
			if (fl.merge)
				cli_out_printf(&out, "# all streams, each "
					       "thread's calls across cpus\n");
			if (flow_finish(&fl, &t, &out) == 0)
				ret = 0;
		}
	} else {
		struct span whole = { 1, 0, 0, fl.size, NULL };

		if (flow_run(&fl, &whole, &t, &out) >= 0 &&
		    flow_finish(&fl, &t, &out) == 0)
			ret = 0;
	}
	/* (Streams not chosen are not decoded.) */
	if (!fl.skipped && flow_not_a_trace(&t, prog, opt.trace))
		ret = 1;
	if (!ret && fl.tree)
		ret = print_folded(fl.tree) < 0;
	if (!ret && fl.timeline)
		ret = calls_timeline_finish(fl.timeline, pd ? thread_comm : NULL,
					    pd) < 0;

out:
	cli_out_fini(&out);
	cli_out_fini(&jout);
	if (out.failed || jout.failed || fflush(stdout)) {
		fprintf(stderr, "%s: error writing output: %s\n", prog,
			strerror(errno));
		ret = 1;
	}
	flow_totals_free(&t);
	cli_flow_streams_done(&fl);
	calls_merge_delete(fl.merge);
	calls_tree_delete(fl.tree);
	calls_timeline_delete(fl.timeline);
	calls_names_delete(fl.names);
	cli_disasm_delete(fl.dis);
	hwt_image_delete(fl.image);
	cli_input_close(&in);
	cli_pd_close(pd);
	free(opt.traces);
	cli_select_free(&opt.sel);
	return ret;
}

int cmd_flow(int argc, char **argv)
{
	return flow_main(argc, argv, MODE_INSN, help_flow);
}

int cmd_calls(int argc, char **argv)
{
	return flow_main(argc, argv, MODE_CALLS, help_calls);
}

int cmd_coverage(int argc, char **argv)
{
	return flow_main(argc, argv, MODE_COVERAGE, help_coverage);
}

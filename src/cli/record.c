/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hwt record: run a program under a trace source and write perf.data.
 *
 * Sources: the trace unit (intel_pt, through perf_event_open's AUX area:
 * not written yet) and the portable one, vgpt, a Valgrind tool that
 * writes genuine Intel PT for any x86-64 program. vgpt's files go to a
 * work directory next to the output, OUT.code/; the library converts them
 * (hwt_rec_vgpt_import); then the trace files go and only the generated
 * code the program ran (vgpt.PID.ADDR.bin, named by the perf.data) stays.
 * If the conversion fails, everything stays, for --vgpt-import.
 *
 * Exit status, as timeout(1) and env(1): the program's (128 + N if a
 * signal N killed it), 125 if hwt record itself failed (also bad command
 * lines), 126 if the program cannot be executed, 127 if it is not found.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hwt/record.h>

#include "cli/cli.h"
#include "cli/record.h"

#define EXIT_FAILED 125
/* vgpt's smallest ring: 2 of its PSB periods (4 KiB by default). */
#define REC_VGPT_RING_MIN 8192u
#define PT_SYSFS "/sys/bus/event_source/devices/intel_pt"

void help_record(void)
{
	printf(
"usage: hwt record [-o FILE] [--source auto|valgrind|intel_pt] [-q]\n"
"                  [--ring SIZE] [--filter FUNC[@IMAGE][,...]] [--one-cpu]\n"
"                  -- CMD [ARGS]\n"
"       hwt record -p PID ...            (trace unit only)\n"
"       hwt record --vgpt-import PREFIX [-o FILE]\n"
"\n"
"Run CMD with its control flow traced and write the trace to FILE\n"
"(default hwt.data), in perf.data format: per-thread Intel PT streams\n"
"with their sideband (processes, threads, mappings with build ids), as\n"
"`perf record --per-thread -e intel_pt//u` writes. hwt flow, calls,\n"
"last, ... and perf script decode it without the live process.\n"
"\n"
"  -o, --output FILE  the perf.data to write (default hwt.data)\n"
"  --source S         auto (default): the trace unit if there is one,\n"
"                     else valgrind, saying so; valgrind: the portable\n"
"                     source (vgpt, a Valgrind tool; any x86-64 Linux\n"
"                     program, ~50x slower); intel_pt: the trace unit\n"
"                     (needs " PT_SYSFS ")\n"
"  -p, --pid PID      attach to a running process (trace unit only)\n"
"  --ring SIZE        keep only the last SIZE bytes of trace per thread\n"
"                     (K, M, G suffixes), written when the program ends\n"
"                     or dies by a signal (snapshot mode)\n"
"  --filter F         trace only inside the functions F: FUNC[@IMAGE],\n"
"                     comma-separated\n"
"  --one-cpu          the portable source: make the packets on the\n"
"                     program's CPU (by default a second one, if there\n"
"                     is one and it measures faster, makes them while\n"
"                     the program runs)\n"
"  -q, --quiet        no summary line\n"
"  --vgpt-import P    convert the files of `valgrind --tool=vgpt\n"
"                     --vgpt-out=P` (P.sb, P.TID.pt) instead of running\n"
"\n"
"Generated code the program ran is saved in FILE.code/ and named in\n"
"FILE. Threads, forked children and the programs they exec are traced\n"
"(a thread's stream goes on across its execve, as perf's does).\n"
"\n"
"Exit status: the program's (128+N if signal N killed it); 125 if hwt\n"
"record failed (the summary says what was written); 126 if CMD cannot\n"
"be executed; 127 if it is not found.\n");
}

struct record_opts {
	const char *out;
	const char *source;
	const char *import;
	const char *filter;
	uint64_t ring;
	long pid;
	int quiet, truth, one_cpu;
	int argc;
	char **argv;
	int cmdline_argc;
	const char *const *cmdline;
};

static int usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "hwt record: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "; see 'hwt help record'\n");
	return EXIT_FAILED;
}

/* SIZE with an optional K, M or G (powers of 1024). */
static int parse_size(const char *s, uint64_t *v)
{
	char *end;
	unsigned shift = 0;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 0);
	if (errno)
		return -1;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	default: break;
	}
	if ((*end == 'i' || *end == 'I') && shift && (end[1] == 'B' ||
						       end[1] == 'b'))
		end += 2;
	else if ((*end == 'B' || *end == 'b') && shift)
		end++;
	if (*end || !*v || *v > (UINT64_MAX >> shift))
		return -1;
	*v <<= shift;
	return 0;
}

/* FUNC[@IMAGE][,...] -> perf's "filter FUNC @ IMAGE,..." */
static char *perf_filter(const char *spec)
{
	size_t cap = strlen(spec) * 2 + 64, len = 0;
	char *out = malloc(cap);
	const char *p = spec;

	if (!out)
		return NULL;
	out[0] = '\0';
	while (*p) {
		size_t n = strcspn(p, ",");
		const char *at = memchr(p, '@', n);

		if (!n || at == p || (at && at == p + n - 1) ||
		    memchr(p, ' ', n)) {
			free(out);
			return NULL;
		}
		if (at)
			len += (size_t)snprintf(out + len, cap - len,
						"%sfilter %.*s @ %.*s",
						len ? "," : "",
						(int)(at - p), p,
						(int)(p + n - at - 1), at + 1);
		else
			len += (size_t)snprintf(out + len, cap - len,
						"%sfilter %.*s",
						len ? "," : "", (int)n, p);
		p += n;
		if (*p == ',') {
			p++;
			if (!*p) {
				free(out);
				return NULL;
			}
		}
	}
	return out;
}

static int parse_args(int argc, char **argv, struct record_opts *o)
{
	enum { OPT_SOURCE = 256, OPT_RING, OPT_FILTER, OPT_TRUTH,
	       OPT_IMPORT, OPT_ONE_CPU, OPT_HELP };
	static const struct option long_opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "source", required_argument, NULL, OPT_SOURCE },
		{ "pid", required_argument, NULL, 'p' },
		{ "ring", required_argument, NULL, OPT_RING },
		{ "filter", required_argument, NULL, OPT_FILTER },
		{ "quiet", no_argument, NULL, 'q' },
		{ "vgpt-truth", no_argument, NULL, OPT_TRUTH },
		{ "one-cpu", no_argument, NULL, OPT_ONE_CPU },
		{ "vgpt-import", required_argument, NULL, OPT_IMPORT },
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int c;

	memset(o, 0, sizeof(*o));
	o->out = "hwt.data";
	o->source = "auto";
	o->pid = -1;
	o->cmdline_argc = argc;
	o->cmdline = (const char *const *)argv;
	optind = 1;
	opterr = 0;
	/* '+': the command's own options are not ours. */
	while ((c = getopt_long(argc, argv, "+:o:p:qh", long_opts,
				NULL)) != -1) {
		switch (c) {
		case 'o':
			if (!*optarg)
				return usage_error("-o: empty file name");
			o->out = optarg;
			break;
		case OPT_SOURCE:
			o->source = optarg;
			break;
		case 'p':
			errno = 0;
			o->pid = strtol(optarg, &end, 10);
			if (errno || *end || o->pid <= 0 || o->pid > INT32_MAX)
				return usage_error("-p %s: not a process id",
						   optarg);
			break;
		case OPT_RING:
			if (parse_size(optarg, &o->ring))
				return usage_error("--ring %s: not a size "
						   "(bytes, or with K, M, G)",
						   optarg);
			break;
		case OPT_FILTER:
			o->filter = optarg;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case OPT_TRUTH:
			o->truth = 1;
			break;
		case OPT_ONE_CPU:
			o->one_cpu = 1;
			break;
		case OPT_IMPORT:
			o->import = optarg;
			break;
		case 'h':
		case OPT_HELP:
			help_record();
			return -1;
		case ':':
			return usage_error("%s needs a value",
					   argv[optind - 1]);
		default:
			return usage_error("unknown option '%s'",
					   argv[optind - 1]);
		}
	}
	o->argc = argc - optind;
	o->argv = argv + optind;
	if (o->import && (o->argc || o->pid > 0))
		return usage_error("--vgpt-import converts files: no command "
				   "or -p with it");
	if (!o->import && !o->argc && o->pid <= 0)
		return usage_error("no command given (hwt record [options] "
				   "-- CMD [ARGS])");
	if (o->argc && o->pid > 0)
		return usage_error("-p and a command: give one of them");
	if (strcmp(o->source, "auto") && strcmp(o->source, "valgrind") &&
	    strcmp(o->source, "vgpt") && strcmp(o->source, "intel_pt"))
		return usage_error("--source %s: unknown (auto, valgrind, "
				   "intel_pt)", o->source);
	return 0;
}

/*
 * Which source: 0 the portable one, else the exit status of the
 * message printed.
 */
static int pick_source(const struct record_opts *o)
{
	int have_pt = !access(PT_SYSFS, F_OK);

	if (!strcmp(o->source, "intel_pt")) {
		if (!have_pt)
			fprintf(stderr, "hwt record: --source intel_pt: this "
				"machine has no Intel PT trace unit (%s is "
				"absent: not an Intel CPU with PT, a virtual "
				"machine that hides it, or no kernel support); "
				"--source valgrind records without it\n",
				PT_SYSFS);
		else
			fprintf(stderr, "hwt record: --source intel_pt: "
				"recording with the trace unit "
				"(perf_event_open AUX area) is not written yet; "
				"use --source valgrind, or perf record -e "
				"intel_pt//u and hwt on its perf.data\n");
		return EXIT_FAILED;
	}
	if (o->pid > 0) {
		fprintf(stderr, "hwt record: -p %ld: the portable source "
			"cannot attach to a running process (Valgrind must "
			"start the program); %s\n", o->pid,
			have_pt ? "the trace unit can, in a later hwt" :
				  "attaching needs a trace unit (" PT_SYSFS
				  " is absent)");
		return EXIT_FAILED;
	}
	if (!strcmp(o->source, "auto") && !o->quiet)
		fprintf(stderr, "hwt record: %s: using the portable source "
			"(vgpt under Valgrind: every instruction, but slower)\n",
			have_pt ? "Intel PT is present, but recording with it "
				  "is not written yet" :
				  "no Intel PT trace unit (" PT_SYSFS
				  " is absent)");
	return 0;
}

static void warn_cb(void *ctx, const char *msg)
{
	(void)ctx;
	fprintf(stderr, "hwt record: warning: %s\n", msg);
}

static const char *signame(int sig)
{
	const char *s = sigabbrev_np(sig);
	static char buf[16];

	if (s) {
		snprintf(buf, sizeof(buf), "SIG%s", s);
		return buf;
	}
	return "an unknown signal";
}

static void summary(const struct record_opts *o,
		    const struct hwt_rec_vgpt_stats *s)
{
	uint64_t bits = s->insns ? s->trace_bytes * 8000 / s->insns : 0;

	fprintf(stderr, "hwt record: %" PRIu32 " process%s, %" PRIu32 " thread%s, "
	       "%" PRIu64 " instructions, %" PRIu64 " bytes of trace "
	       "(%" PRIu64 ".%03" PRIu64 " bits/insn%s), lost data: %" PRIu64
	       "; wrote %s (%" PRIu64 " bytes)\n",
	       s->nprocs, s->nprocs == 1 ? "" : "es", s->nthreads,
	       s->nthreads == 1 ? "" : "s", s->insns, s->trace_bytes,
	       bits / 1000, bits % 1000,
	       o->ring ? ", the last of each thread's ring" : "",
	       s->lost + s->unended, o->out, s->file_bytes);
	if (s->execs)
		fprintf(stderr, "hwt record: %" PRIu32 " process%s exec'd another "
		       "program: not traced after the execve\n", s->execs,
		       s->execs == 1 ? "" : "es");
}

/*
 * Tidy @dir: remove our own files (vgpt.*, vg.*.log), except saved code
 * if @keep_code; with @out, vgpt.TID.truth becomes OUT.TID.truth (the
 * tests' ground truth). Then remove @dir if it is empty.
 */
static void tidy_dir(const char *dir, int keep_code, const char *out)
{
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((de = readdir(d))) {
		const char *n = de->d_name;
		size_t len = strlen(n);
		char path[PATH_MAX + 256], to[PATH_MAX + 256];

		if (strncmp(n, "vgpt.", 5) && strncmp(n, "vg.", 3))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, n);
		if (out && !strncmp(n, "vgpt.", 5) && len > 11 &&
		    !strcmp(n + len - 6, ".truth")) {
			snprintf(to, sizeof(to), "%s.%s", out, n + 5);
			if (rename(path, to))
				fprintf(stderr, "hwt record: warning: %s: %s\n",
					to, strerror(errno));
		} else if (!keep_code || len < 5 ||
			   strcmp(n + len - 4, ".bin")) {
			unlink(path);
		}
	}
	closedir(d);
	rmdir(dir);
}

/* The exits to record: the program's wait status, Valgrind's logs. */
static size_t exits_of(const struct rec_logs *lg, pid_t pid, int status,
		       struct hwt_pd_exit *e)
{
	size_t n = 0;

	memset(e, 0, sizeof(*e));
	e->pid = (uint32_t)pid;
	if (WIFSIGNALED(status))
		e->signal = (uint32_t)WTERMSIG(status);
	else
		e->code = (uint32_t)WEXITSTATUS(status);
	/* @e has room for the program and every log's entry. */
	for (size_t i = 0; i < lg->nexits; i++) {
		if (lg->exits[i].pid == (uint32_t)pid) {
			e->ip = lg->exits[i].ip;
			e->flags = lg->exits[i].flags;
		} else {
			e[++n] = lg->exits[i];
		}
	}
	return n + 1;
}

static int import(const struct record_opts *o, const char *prefix,
		  const struct hwt_pd_exit *exits, size_t nexits,
		  struct hwt_rec_vgpt_stats *st)
{
	struct hwt_rec_vgpt_config c;
	char err[512], *filter = NULL;
	int ret;

	memset(&c, 0, sizeof(c));
	if (o->filter) {
		filter = perf_filter(o->filter);
		if (!filter)
			return -HWT_ERR_NOMEM;
	}
	c.prefix = prefix;
	c.out = o->out;
	c.snapshot = o->ring != 0;
	c.filter = filter;
	c.argc = o->cmdline_argc;
	c.argv = o->cmdline;
	c.exits = exits;
	c.nexits = nexits;
	c.warn = warn_cb;
	ret = hwt_rec_vgpt_import(&c, st, err, sizeof(err));
	if (ret < 0)
		fprintf(stderr, "hwt record: %s\n", err);
	free(filter);
	return ret;
}

static int prepare_dir(const char *out, char *dir, size_t dlen,
		       char *prefix, size_t plen)
{
	char abs[PATH_MAX];
	const char *slash = strrchr(out, '/');

	/* Absolute: the perf.data names the saved code by this path. */
	if (slash) {
		char parent[PATH_MAX];

		snprintf(parent, sizeof(parent), "%.*s",
			 (int)(slash - out) ? (int)(slash - out) : 1, out);
		if (!realpath(parent, abs))
			return fprintf(stderr, "hwt record: %s: %s\n", parent,
				       strerror(errno)), -1;
		snprintf(dir, dlen, "%s/%s.code", abs, slash + 1);
	} else {
		if (!getcwd(abs, sizeof(abs)))
			return fprintf(stderr, "hwt record: getcwd: %s\n",
				       strerror(errno)), -1;
		snprintf(dir, dlen, "%s/%s.code", abs, out);
	}
	tidy_dir(dir, 0, NULL);
	if (mkdir(dir, 0755) && errno != EEXIST)
		return fprintf(stderr, "hwt record: %s: %s\n", dir,
			       strerror(errno)), -1;
	snprintf(prefix, plen, "%s/vgpt", dir);
	return 0;
}

static int run_vgpt(const struct record_opts *o)
{
	char vglib[PATH_MAX], program[PATH_MAX], dir[PATH_MAX + 8];
	char prefix[PATH_MAX + 16];
	struct hwt_pd_exit exits[REC_MAX_EXITS + 1];
	struct hwt_rec_vgpt_stats st;
	struct rec_logs *lg;
	struct rec_run r;
	size_t nexits;
	int status = 0, rc, failed;
	pid_t pid;

	if (o->ring && o->ring < REC_VGPT_RING_MIN)
		return fprintf(stderr, "hwt record: --ring %" PRIu64 ": the "
			       "portable source keeps whole PSB periods of "
			       "%u bytes, at least 2 (--ring 8K), so that "
			       "what it keeps holds a PSB to decode from\n",
			       o->ring, REC_VGPT_RING_MIN / 2), EXIT_FAILED;
	if (rec_find_program("valgrind", program, sizeof(program)))
		return fprintf(stderr, "hwt record: the portable source needs "
			       "valgrind, which is not on PATH (Debian: "
			       "apt-get install valgrind)\n"), EXIT_FAILED;
	if (rec_find_vgpt(vglib, sizeof(vglib)))
		return fprintf(stderr, "hwt record: the vgpt tool is not "
			       "built (no BUILD/vgpt/vgpt-amd64-linux next "
			       "to hwt; HWT_VGPT_LIB names its directory)\n"),
		       EXIT_FAILED;
	rc = rec_find_program(o->argv[0], program, sizeof(program));
	if (rc)
		return fprintf(stderr, "hwt record: %s: %s\n", o->argv[0],
			       rc == 127 ? "command not found" :
			       "permission denied (not executable)"), rc;
	if (prepare_dir(o->out, dir, sizeof(dir), prefix, sizeof(prefix)))
		return EXIT_FAILED;

	memset(&r, 0, sizeof(r));
	r.vglib = vglib;
	r.dir = dir;
	r.prefix = prefix;
	r.program = program;
	r.argc = o->argc;
	r.argv = o->argv;
	r.ring = o->ring;
	r.filter = o->filter;
	r.truth = o->truth;
	r.one_cpu = o->one_cpu;
	if (rec_run(&r, &pid, &status))
		return EXIT_FAILED;
	lg = malloc(sizeof(*lg));
	if (!lg)
		return fprintf(stderr, "hwt record: out of memory\n"),
		       EXIT_FAILED;
	rec_read_logs(dir, lg);
	failed = lg->nerrors > 0;
	nexits = exits_of(lg, pid, status, exits);
	if (import(o, prefix, exits, nexits, &st) < 0)
		failed = 1;
	free(lg);
	if (!o->quiet || failed)
		summary(o, &st);
	if (WIFSIGNALED(status))
		fprintf(stderr, "hwt record: %s was killed by signal %d (%s); "
			"'hwt last %s' shows how it got there\n", o->argv[0],
			WTERMSIG(status), signame(WTERMSIG(status)), o->out);
	if (failed) {
		fprintf(stderr, "hwt record: the recording is incomplete; "
			"vgpt's files are kept in %s (hwt record "
			"--vgpt-import %s converts them again)\n", dir, prefix);
		return EXIT_FAILED;
	}
	tidy_dir(dir, 1, o->truth ? o->out : NULL);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

int cmd_record(int argc, char **argv)
{
	struct record_opts o;
	struct hwt_rec_vgpt_stats st;
	int ret;

	ret = parse_args(argc, argv, &o);
	if (ret)
		return ret < 0 ? 0 : ret;
	if (o.import) {
		ret = import(&o, o.import, NULL, 0, &st);
		if (!o.quiet || ret < 0)
			summary(&o, &st);
		return ret < 0 ? EXIT_FAILED : 0;
	}
	ret = pick_source(&o);
	if (ret)
		return ret;
	return run_vgpt(&o);
}

/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libipt's perf_event sideband for hwt ptdump and hwt ptxed (ipt_sb.h):
 * the options, and the channels (one per --pevent file) kept sorted by
 * the time of their next record. ptdump prints the records due at each
 * timing packet. ptxed hands every decoder event over: first each record
 * due at the event's time is printed and applied, then every channel sees
 * the event (ipt_sb_apply.c), to follow whether the trace is in the
 * kernel or in user space and make the context switches prepared.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hwt/query.h>

#include "cli/cli.h"
#include "cli/ipt_sb_int.h"

/* ------------------------------------------------------------------ */
/* Channels                                                            */
/* ------------------------------------------------------------------ */

/* perf time to TSC, as perf_event_mmap_page's time_* fields say. */
static int time_to_tsc(const struct sb_config *c, uint64_t time,
		       uint64_t *tsc)
{
	uint64_t quot, rem;

	/* Synthesized records have time 0: the beginning. */
	if (!time) {
		*tsc = 0;
		return 0;
	}
	if (!c->time_mult)
		return -HWT_ERR_BAD_CONFIG;
	time -= c->time_zero;
	quot = time / c->time_mult;
	rem = time % c->time_mult;
	quot <<= c->time_shift;
	rem <<= c->time_shift;
	*tsc = quot + rem / c->time_mult;
	return 0;
}

/* --pevent:tsc-offset moves records earlier, without wrapping around. */
static uint64_t apply_offset(uint64_t tsc, uint64_t offset)
{
	if (offset <= tsc)
		return tsc - offset;
	if ((int64_t)offset >= 0)
		return 0;
	return tsc <= offset ? tsc - offset : UINT64_MAX;
}

/* The next record: 0, -HWT_ERR_EOS at the end, or an error (reported). */
static int fetch(struct cli_sb *sb, struct sb_chan *ch)
{
	int ret;

	ch->have = 0;
	ret = hwt_pd_next(ch->rd, &ch->rec);
	if (ret == 0)
		return -HWT_ERR_EOS;
	if (ret < 0) {
		/* The reader's message names the file and the offset. */
		struct cli_text t = { .len = 0 };

		cli_put(&t, "[sideband error: %s]\n", hwt_pd_errmsg(ch->rd));
		sb_emit(sb, &t);
		return ret;
	}
	ch->rec_off = ch->rec.file_offset - ch->begin;
	ret = sb_parse_trailer(&ch->rec, &ch->tr);
	if (ret < 0) {
		sb_report(sb, ch, ret);
		return ret;
	}
	ch->tsc = 0;
	if (ch->tr.present & HWT_PD_SID_TIME) {
		ret = time_to_tsc(&ch->cfg, ch->tr.time, &ch->tsc);
		if (ret < 0) {
			sb_report(sb, ch, ret);
			return ret;
		}
		ch->tsc = apply_offset(ch->tsc, ch->cfg.tsc_offset);
	}
	ch->have = 1;
	return 0;
}

/* Into @list by tsc, before those due at the same time (as libipt). */
static void insert(struct sb_chan **list, struct sb_chan *ch)
{
	while (*list && (*list)->tsc < ch->tsc)
		list = &(*list)->next;
	ch->next = *list;
	*list = ch;
}

static void push(struct sb_chan **list, struct sb_chan *ch)
{
	ch->next = *list;
	*list = ch;
}

/* ------------------------------------------------------------------ */
/* The session                                                         */
/* ------------------------------------------------------------------ */

/* The paths of @c, its own (later options change the session's). */
static int config_own(struct sb_config *c)
{
	const char **paths[] = { &c->sysroot, &c->vdso[ABI_X64],
				 &c->vdso[ABI_X32], &c->vdso[ABI_IA32] };
	int ok = 1;

	c->types = NULL;
	c->ntypes = 0;
	for (size_t k = 0; k < sizeof(paths) / sizeof(paths[0]); k++) {
		if (*paths[k] && !(*paths[k] = strdup(*paths[k])))
			ok = 0;
	}
	return ok ? 0 : -1;
}

static void config_free(struct sb_config *c)
{
	free((void *)c->sysroot);
	for (int i = 0; i < 4; i++)
		free((void *)c->vdso[i]);
	free(c->types);
}

static void chan_free(struct cli_sb *sb, struct sb_chan *ch)
{
	hwt_pd_close(ch->rd);
	sb_ctx_put(sb, ch->ctx);
	sb_ctx_put(sb, ch->next_ctx);
	config_free(&ch->cfg);
	free(ch->filename);
	free(ch);
}

static void chans_free(struct cli_sb *sb, struct sb_chan *ch)
{
	while (ch) {
		struct sb_chan *next = ch->next;

		chan_free(sb, ch);
		ch = next;
	}
}

struct cli_sb *cli_sb_new(int ptxed, cli_sb_write_fn *write,
			  void *write_ctx)
{
	struct cli_sb *sb = calloc(1, sizeof(*sb));

	if (!sb)
		return NULL;
	sb->ptxed = ptxed;
	sb->write = write;
	sb->write_ctx = write_ctx;
	sb->cfg.time_mult = 1;
	/* ptxed: all user space unless told where the kernel starts. */
	sb->cfg.kernel_start = ptxed ? UINT64_MAX : 0;
	return sb;
}

void cli_sb_delete(struct cli_sb *sb)
{
	if (!sb)
		return;
	chans_free(sb, sb->given);
	chans_free(sb, sb->active);
	chans_free(sb, sb->retired);
	chans_free(sb, sb->removed);
	while (sb->ctxs) {
		struct sb_ctx *c = sb->ctxs;

		sb->ctxs = c->next;
		sb_ctx_put(sb, c);
	}
	sb_ctx_put(sb, sb->image_ctx);
	sb_maps_free(&sb->kernel);
	config_free(&sb->cfg);
	free(sb);
}

void cli_sb_attach(struct cli_sb *sb, struct hwt_blk_decoder *dec)
{
	if (sb)
		sb->dec = dec;
}

int cli_sb_active(const struct cli_sb *sb)
{
	return sb && (sb->given || sb->active || sb->retired);
}

/* "FILE[:FROM[-TO]]" as libipt's tools take a sideband file. */
static int add_channel(struct cli_sb *sb, const char *prog, const char *arg,
		       int primary)
{
	uint64_t from = 0, to = 0;
	struct sb_chan *ch, **tail;
	char err[512], *colon;
	int ret, parts;

	ch = calloc(1, sizeof(*ch));
	if (!ch || !(ch->filename = strdup(arg))) {
		free(ch);
		fprintf(stderr, "%s: out of memory.\n", prog);
		return -1;
	}
	colon = strrchr(ch->filename, ':');
	parts = colon ? cli_parse_range(colon + 1, &from, &to) : -1;
	/* A name with a ':' that is not a range stays a name. */
	if (parts > 0 && !(parts == 2 && to <= from))
		*colon = '\0';
	else
		from = to = 0;
	ret = hwt_pd_open_raw(&ch->rd, ch->filename, sb->cfg.sample_type,
			      sb->cfg.types, sb->cfg.ntypes, from, to, err,
			      sizeof(err));
	if (ret < 0) {
		fprintf(stderr, "%s: error loading %s: %s.\n", prog, arg, err);
		free(ch->filename);
		free(ch);
		return -1;
	}
	ch->begin = from;
	ch->cfg = sb->cfg;
	if (config_own(&ch->cfg)) {
		fprintf(stderr, "%s: out of memory.\n", prog);
		chan_free(sb, ch);
		return -1;
	}
	ch->primary = primary;
	for (tail = &sb->given; *tail; tail = &(*tail)->next)
		;
	*tail = ch;
	return 0;
}

static int set_path(const char **dst, const char *prog, const char *opt,
		    const char *arg)
{
	char *copy;

	if (!arg) {
		fprintf(stderr, "%s: %s: missing argument.\n", prog, opt);
		return -1;
	}
	copy = strdup(arg);
	if (!copy) {
		fprintf(stderr, "%s: out of memory.\n", prog);
		return -1;
	}
	free((void *)*dst);
	*dst = copy;
	return 0;
}

static const struct {
	const char *name;
	uint32_t set, clear;
} sb_flags[] = {
	{ "--sb", SBP_COMPACT, SBP_VERBOSE },
	{ "--sb:compact", SBP_COMPACT, SBP_VERBOSE },
	{ "--sb:verbose", SBP_VERBOSE, SBP_COMPACT },
	{ "--sb:filename", SBP_FILENAME, 0 },
	{ "--sb:offset", SBP_OFFSET, 0 },
	{ "--sb:time", SBP_TIME, 0 },
};

void cli_sb_help(int ptxed, int width)
{
	static const struct {
		const char *opt, *text;
		int ptxed_only;
	} lines[] = {
		{ "--sb:compact | --sb", "show sideband records in compact format.", 0 },
		{ "--sb:verbose", "show sideband records in verbose format.", 0 },
		{ "--sb:filename", "show the filename on sideband records.", 0 },
		{ "--sb:offset", "show the offset on sideband records.", 0 },
		{ "--sb:time", "show the time on sideband records.", 0 },
		{ "--sb:switch", "print the new image name on context switches.", 1 },
		{ "--sb:warn", "show sideband warnings.", 0 },
		{ NULL, "load a perf_event sideband stream from <file>;\n"
			"the options below apply to files given after them.", 0 },
		{ "--pevent:sample-type <val>", "set perf_event_attr.sample_type to <val> (default: 0).", 0 },
		{ "--pevent:sample-config <id>:<val>", "records whose IDENTIFIER is <id> have sample type <val>.", 0 },
		{ "--pevent:time-zero <val>", "set perf_event_mmap_page.time_zero to <val> (default: 0).", 0 },
		{ "--pevent:time-shift <val>", "set perf_event_mmap_page.time_shift to <val> (default: 0).", 0 },
		{ "--pevent:time-mult <val>", "set perf_event_mmap_page.time_mult to <val> (default: 1).", 0 },
		{ "--pevent:tsc-offset <val>", "show perf events <val> ticks earlier.", 0 },
		{ "--pevent:kernel-start <val>", "the start address of the kernel.", 1 },
		{ "--pevent:sysroot <path>", "prepend <path> to sideband filenames.", 1 },
		{ "--pevent:kcore <file>", "load the kernel from a core dump.", 1 },
		{ "--pevent:vdso-x64 <file>", "use <file> as 64-bit vdso.", 1 },
		{ "--pevent:vdso-x32 <file>", "use <file> as x32 vdso.", 1 },
		{ "--pevent:vdso-ia32 <file>", "use <file> as 32-bit vdso.", 1 },
	};

	for (size_t k = 0; k < sizeof(lines) / sizeof(lines[0]); k++) {
		const char *t = lines[k].text, *nl;
		int indent = 0;

		if (lines[k].ptxed_only && !ptxed)
			continue;
		if (lines[k].opt) {
			printf("  %-*s%s", width, lines[k].opt,
			       (int)strlen(lines[k].opt) < width ? "" : "  ");
		} else {
			printf("  %s <file>[:<from>[-<to>]]\n",
			       ptxed ? "--pevent:primary/secondary"
				     : "--pevent[:primary/:secondary]");
			indent = width + 2;
		}
		/* Further lines of the text start in its column. */
		for (;; t = nl + 1, indent = width + 2) {
			nl = strchr(t, '\n');
			printf("%*s%.*s\n", indent, "",
			       (int)(nl ? nl - t : (long)strlen(t)), t);
			if (!nl)
				break;
		}
	}
	if (!ptxed)
		printf("  --pevent:kernel-start, :sysroot, :kcore, :vdso-* "
		       "<val>\n%*staken and ignored, as by libipt's ptdump.\n",
		       width + 2, "");
}

int cli_sb_option(struct cli_sb *sb, const char *prog, int argc, char **argv,
		  int *i)
{
	const char *arg = argv[*i];
	const char *next = *i + 1 < argc ? argv[*i + 1] : NULL;
	struct sb_config *c = &sb->cfg;
	int primary;
	uint64_t v;

	for (size_t k = 0; k < sizeof(sb_flags) / sizeof(sb_flags[0]); k++) {
		if (!strcmp(arg, sb_flags[k].name)) {
			sb->flags = (sb->flags & ~sb_flags[k].clear) |
				    sb_flags[k].set;
			return 1;
		}
	}
	if (!strcmp(arg, "--sb:warn")) {
		sb->warn = 1;
		return 1;
	}
	if (sb->ptxed && !strcmp(arg, "--sb:switch")) {
		sb->show_switch = 1;
		return 1;
	}
	if (strncmp(arg, "--pevent", 8) || (arg[8] && arg[8] != ':'))
		return 0;

	if (!strcmp(arg, "--pevent:primary") ||
	    !strcmp(arg, "--pevent:secondary") ||
	    (!sb->ptxed && !strcmp(arg, "--pevent"))) {
		if (!next) {
			fprintf(stderr, "%s: %s: missing argument.\n", prog,
				arg);
			return -1;
		}
		++*i;
		primary = strcmp(arg + 8, ":secondary") != 0;
		return add_channel(sb, prog, next, primary) ? -1 : 1;
	}
	if (!strcmp(arg, "--pevent:sample-type") ||
	    !strcmp(arg, "--pevent:time-zero") ||
	    !strcmp(arg, "--pevent:time-shift") ||
	    !strcmp(arg, "--pevent:time-mult") ||
	    !strcmp(arg, "--pevent:tsc-offset") ||
	    !strcmp(arg, "--pevent:kernel-start")) {
		const char *what = arg + 9;
		/* A shift of 64 or more would be undefined (libipt takes
		 * it); no clock needs one. */
		uint64_t max = !strcmp(what, "time-shift") ? 63 :
			       !strcmp(what, "time-mult") ? UINT32_MAX :
							    UINT64_MAX;

		if (cli_ipt_get_arg(prog, arg, next, max, &v))
			return -1;
		++*i;
		if (!strcmp(what, "sample-type"))
			c->sample_type = v;
		else if (!strcmp(what, "time-zero"))
			c->time_zero = v;
		else if (!strcmp(what, "time-shift"))
			c->time_shift = (uint16_t)v;
		else if (!strcmp(what, "time-mult"))
			c->time_mult = (uint32_t)v;
		else if (!strcmp(what, "tsc-offset"))
			c->tsc_offset = v;
		else
			c->kernel_start = v;
		return 1;
	}
	if (!strcmp(arg, "--pevent:sysroot") ||
	    !strcmp(arg, "--pevent:vdso-x64") ||
	    !strcmp(arg, "--pevent:vdso-x32") ||
	    !strcmp(arg, "--pevent:vdso-ia32")) {
		const char *what = arg + 9;
		const char **dst = !strcmp(what, "sysroot") ? &c->sysroot :
				   !strcmp(what, "vdso-x64") ? &c->vdso[ABI_X64] :
				   !strcmp(what, "vdso-x32") ? &c->vdso[ABI_X32] :
				   &c->vdso[ABI_IA32];

		if (set_path(dst, prog, arg, next))
			return -1;
		++*i;
		return 1;
	}
	if (!strcmp(arg, "--pevent:kcore")) {
		/* ptdump takes it, as libipt's does, and has no image. */
		if (!sb->ptxed && next) {
			++*i;
			return 1;
		}
		if (!next) {
			fprintf(stderr, "%s: %s: missing argument.\n", prog,
				arg);
			return -1;
		}
		if (access(next, R_OK) ||
		    sb_maps_add(&sb->kernel, next, 0, 0, 0, 1) < 0) {
			fprintf(stderr, "%s: --pevent:kcore: failed to load "
				"'%s'.\n", prog, next);
			return -1;
		}
		++*i;
		return 1;
	}
	if (!strcmp(arg, "--pevent:sample-config")) {
		/* ID:TYPE, as libipt's perf-get-opts.bash writes them. */
		struct hwt_pd_raw_type t, *nt;
		char *end;

		if (!next) {
			fprintf(stderr, "%s: %s: missing argument.\n", prog,
				arg);
			return -1;
		}
		errno = 0;
		t.identifier = strtoull(next, &end, 0);
		if (!errno && end != next && *end == ':' && next[0] != '-' &&
		    end[1] && end[1] != '-')
			t.sample_type = strtoull(end + 1, &end, 0);
		if (errno || *end || next[0] == '-') {
			fprintf(stderr, "%s: %s: bad argument: %s (want "
				"<identifier>:<sample type>).\n", prog, arg,
				next);
			return -1;
		}
		nt = realloc(c->types, (c->ntypes + 1) * sizeof(*nt));
		if (!nt) {
			fprintf(stderr, "%s: out of memory.\n", prog);
			return -1;
		}
		nt[c->ntypes++] = t;
		c->types = nt;
		++*i;
		return 1;
	}
	fprintf(stderr, "%s: unknown option: %s.\n", prog, arg);
	return -1;
}

void cli_sb_start(struct cli_sb *sb)
{
	struct sb_chan *rev = NULL;

	/* libipt starts them last first, each before those of equal time:
	 * records of the same time come in the order the files were given. */
	while (sb->given) {
		struct sb_chan *ch = sb->given;

		sb->given = ch->next;
		push(&rev, ch);
	}
	while (rev) {
		struct sb_chan *ch = rev;

		rev = ch->next;
		ch->next = NULL;
		if (fetch(sb, ch) < 0)
			push(&sb->removed, ch);
		else
			insert(&sb->active, ch);
	}
}

/* After a record of @ch was used: the next one, or the end. */
static void advance(struct cli_sb *sb, struct sb_chan *ch)
{
	int ret = fetch(sb, ch);

	if (ret == -HWT_ERR_EOS)
		push(&sb->retired, ch);
	else if (ret < 0)
		push(&sb->removed, ch);
	else
		insert(&sb->active, ch);
}

void cli_sb_dump(struct cli_sb *sb, uint64_t tsc)
{
	while (sb->active && sb->active->tsc <= tsc) {
		struct sb_chan *ch = sb->active;

		sb->active = ch->next;
		ch->next = NULL;
		sb_print_record(sb, ch);
		advance(sb, ch);
	}
}

/* Every channel in @list sees @ev; those with nothing left go. */
static void present_all(struct cli_sb *sb, struct sb_chan **list,
			const struct hwt_event *ev)
{
	while (*list) {
		struct sb_chan *ch = *list;

		if (sb_present(sb, ch, ev) < 0) {
			*list = ch->next;
			push(&sb->removed, ch);
			continue;
		}
		list = &ch->next;
	}
}

void cli_sb_event(struct cli_sb *sb, const struct hwt_event *ev)
{
	/* The time is used even without has_tsc: records may be placed by
	 * relative time. */
	while (sb->active && sb->active->tsc <= ev->tsc) {
		struct sb_chan *ch = sb->active;

		sb->active = ch->next;
		ch->next = NULL;
		sb_print_record(sb, ch);
		(void)sb_present(sb, ch, ev);
		advance(sb, ch);
	}
	present_all(sb, &sb->active, ev);
	present_all(sb, &sb->retired, ev);
}


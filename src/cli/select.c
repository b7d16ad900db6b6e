/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What to show of a perf.data: the threads (--pid, --tid), the CPUs (-C)
 * and the time windows (--time-range), as perf script's --pid, --tid,
 * --cpu and --time select its samples. The windows' bounds are perf's
 * time in seconds (as perf script and hwt sideband print it) or TSC
 * values (0x..., as hwt flow --time prints them); a line's time is its
 * TSC, converted with the file's TIME_CONV where a bound is in seconds.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hwt/perfdata.h>

#include "cli/cli.h"
#include "common/grow.h"

void cli_select_free(struct cli_select *s)
{
	free(s->pids);
	free(s->tids);
	free(s->cpus);
	free(s->win);
	memset(s, 0, sizeof(*s));
}

/* "N", or "N-M" where @ranges; appended to *@v. -1: not a list. */
static int parse_list(const char *arg, int ranges, uint32_t **v, size_t *n,
		      size_t *cap)
{
	const char *p = arg;

	for (;;) {
		char *end;
		unsigned long a, b;

		if (*p < '0' || *p > '9')
			return -1;
		errno = 0;
		a = strtoul(p, &end, 10);
		b = a;
		if (ranges && *end == '-') {
			p = end + 1;
			if (*p < '0' || *p > '9')
				return -1;
			b = strtoul(p, &end, 10);
		}
		if (errno || a > UINT32_MAX || b > UINT32_MAX || b < a ||
		    b - a > 65535)
			return -1;
		for (unsigned long x = a; x <= b; x++) {
			if (hwt_grow((void **)v, cap, *n + 1, sizeof(**v)) < 0)
				return -1;
			(*v)[(*n)++] = (uint32_t)x;
		}
		if (!*end)
			return 0;
		if (*end != ',')
			return -1;
		p = end + 1;
	}
}

/*
 * One bound of a window, [@p, @e): empty (open), 0xHEX (a TSC), or
 * seconds with up to 9 decimals (perf's time, in ns). 0 or -1.
 */
static int parse_bound(const char *p, const char *e, struct cli_bound *b)
{
	uint64_t v = 0;
	unsigned frac = 0;
	int dot = 0, digits = 0;

	memset(b, 0, sizeof(*b));
	if (p == e)
		return 0;
	b->set = 1;
	if (e - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		char *end;

		/* (A bound ends at ',', ' ' or the end: no hex digit.) */
		b->tsc = 1;
		if (!isxdigit((unsigned char)p[2]))
			return -1;
		errno = 0;
		b->v = strtoull(p + 2, &end, 16);
		return errno || end != e ? -1 : 0;
	}
	for (; p < e; p++) {
		if (*p == '.' && !dot) {
			dot = 1;
			continue;
		}
		if (*p < '0' || *p > '9' || (dot && frac == 9))
			return -1;
		if (v > (UINT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*p - '0');
		frac += dot;
		digits++;
	}
	if (!digits)
		return -1;
	for (; frac < 9; frac++) {
		if (v > UINT64_MAX / 10)
			return -1;
		v *= 10;
	}
	b->v = v;
	return 0;
}

/* "A,B" windows, separated by spaces. */
static int parse_windows(struct cli_select *s, const char *arg)
{
	const char *p = arg;
	int any = 0;

	for (;;) {
		const char *e, *comma;
		struct cli_window w;

		while (*p == ' ')
			p++;
		if (!*p)
			return any ? 0 : -1;
		e = strchr(p, ' ');
		if (!e)
			e = p + strlen(p);
		comma = memchr(p, ',', (size_t)(e - p));
		if (!comma || parse_bound(p, comma, &w.from) < 0 ||
		    parse_bound(comma + 1, e, &w.to) < 0)
			return -1;
		if (w.from.set && w.to.set && w.from.tsc == w.to.tsc &&
		    w.to.v < w.from.v)
			return -1;
		if (hwt_grow((void **)&s->win, &s->wincap, s->nwin + 1,
			     sizeof(*s->win)) < 0)
			return -1;
		s->win[s->nwin++] = w;
		any = 1;
		p = e;
	}
}

int cli_select_parse(struct cli_select *s, const char *prog, const char *a,
		     const char *arg)
{
	int r;

	if (!strcmp(a, "--pid"))
		r = arg ? parse_list(arg, 0, &s->pids, &s->npids, &s->pidcap) : -1;
	else if (!strcmp(a, "--tid"))
		r = arg ? parse_list(arg, 0, &s->tids, &s->ntids, &s->tidcap) : -1;
	else if (!strcmp(a, "-C") || !strcmp(a, "--cpus"))
		r = arg ? parse_list(arg, 1, &s->cpus, &s->ncpus, &s->cpucap) : -1;
	else if (!strcmp(a, "--time-range"))
		r = arg ? parse_windows(s, arg) : -1;
	else
		return 0;
	if (r < 0) {
		fprintf(stderr, "%s: %s: %s%s%s.\n", prog, a,
			arg ? "bad argument: " : "missing argument",
			arg ? arg : "",
			!arg ? "" :
			a[2] == 't' && a[3] == 'i' && a[4] == 'm' ?
				" (want START,END: seconds as perf script's "
				"--time, or 0xTSC; either may be left out)" :
			a[1] == 'C' || a[2] == 'c' ?
				" (want a list of CPUs: 0,2-3)" :
				" (want a list of numbers: 1,2)");
		return -1;
	}
	s->set = 1;
	return 1;
}

int cli_select_option(struct cli_select *s, const char *prog, int argc,
		      char **argv, int *i)
{
	int r = cli_select_parse(s, prog, argv[*i],
				 *i + 1 < argc ? argv[*i + 1] : NULL);

	if (r > 0)
		(*i)++;
	return r;
}

int cli_select_threads(const struct cli_select *s)
{
	return s->npids || s->ntids;
}

/* A bound given as a TSC (@tsc) or in seconds (!@tsc). */
static int any_bound(const struct cli_select *s, int tsc)
{
	for (size_t i = 0; i < s->nwin; i++)
		if ((s->win[i].from.set && s->win[i].from.tsc == tsc) ||
		    (s->win[i].to.set && s->win[i].to.tsc == tsc))
			return 1;
	return 0;
}

int cli_select_seconds(const struct cli_select *s)
{
	return any_bound(s, 0);
}

static int in_list(const uint32_t *v, size_t n, uint32_t x)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == x)
			return 1;
	return 0;
}

int cli_select_task(const struct cli_select *s, int have_task, uint64_t task)
{
	if (!s->npids && !s->ntids)
		return 1;
	if (!have_task)
		return 0;
	return (s->npids && in_list(s->pids, s->npids, (uint32_t)(task >> 32))) ||
	       (s->ntids && in_list(s->tids, s->ntids, (uint32_t)task));
}

int cli_select_cpu(const struct cli_select *s, int have_cpu, uint32_t cpu)
{
	if (!s->ncpus)
		return 1;
	return have_cpu && in_list(s->cpus, s->ncpus, cpu);
}

/* @b against @tsc (and @ns, its perf time, if @tc): <0, 0, >0. */
static int cmp_bound(const struct cli_bound *b, uint64_t tsc,
		     const struct hwt_pd_time_conv *tc)
{
	uint64_t t = tsc;

	if (!b->tsc)
		t = tc ? hwt_pd_tsc_to_perf_time(tc, tsc) : 0;
	return t < b->v ? -1 : t > b->v;
}

int cli_select_time(const struct cli_select *s, int have_key, uint64_t tsc,
		    const struct hwt_pd_time_conv *tc)
{
	if (!s->nwin)
		return 1;
	if (!have_key)
		return 0;
	for (size_t i = 0; i < s->nwin; i++) {
		const struct cli_window *w = &s->win[i];

		if ((!w->from.set || cmp_bound(&w->from, tsc, tc) >= 0) &&
		    (!w->to.set || cmp_bound(&w->to, tsc, tc) <= 0))
			return 1;
	}
	return 0;
}

int cli_select_past(const struct cli_select *s, uint64_t tsc,
		    const struct hwt_pd_time_conv *tc)
{
	if (!s->nwin)
		return 0;
	for (size_t i = 0; i < s->nwin; i++)
		if (!s->win[i].to.set || cmp_bound(&s->win[i].to, tsc, tc) <= 0)
			return 0;
	return 1;
}

int cli_select_ns(const struct cli_select *s, int have_ns, uint64_t ns)
{
	if (!s->nwin)
		return 1;
	if (!have_ns)
		return 0;
	for (size_t i = 0; i < s->nwin; i++) {
		const struct cli_window *w = &s->win[i];

		if ((!w->from.set || ns >= w->from.v) &&
		    (!w->to.set || ns <= w->to.v))
			return 1;
	}
	return 0;
}

int cli_select_tsc_bounds(const struct cli_select *s)
{
	return any_bound(s, 1);
}

int cli_parse_time(const char *arg, struct cli_bound *b)
{
	if (parse_bound(arg, arg + strlen(arg), b) < 0 || !b->set)
		return -1;
	return 0;
}

int cli_select_before(const struct cli_select *s, uint64_t tsc,
		      const struct hwt_pd_time_conv *tc)
{
	if (!s->nwin)
		return 0;
	for (size_t i = 0; i < s->nwin; i++)
		if (!s->win[i].from.set ||
		    cmp_bound(&s->win[i].from, tsc, tc) >= 0)
			return 0;
	return 1;
}

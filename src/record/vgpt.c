/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A vgpt recording into perf.data: the sideband lines become perf's
 * records, each thread's PREFIX.TID.pt its AUX stream.
 *
 *   comm    COMM with the exec flag (the command name is the basename)
 *   thread  ITRACE_START, after a FORK for a thread other than the main one
 *   exit    the thread's AUX stream, then EXIT
 *   mmap    MMAP2 (with the build id of an ELF file)
 *   fork    FORK of the child process
 *   exec    COMM exec, if the exec happened (see exec_worked())
 *   switch  SWITCH out or in
 *   munmap  MMAP2 of "//anon" without PROT_EXEC over the range: perf.data
 *           has no munmap record, and an anonymous mapping replaces what
 *           was there as munmap leaves nothing, for perf and hwt alike
 *
 * Times: each process counts guest instructions (its PT clock, in its TSC
 * packets), so TSC = perf time (time_mult 1, shift 0), both one more than
 * the tool's count: perf takes a time of 0 for "no time", and the decoder
 * of perf 6.1 crashes on a TSC packet of 0, which is how vgpt's clock
 * starts. The TSC packets are rewritten in place (same size; nothing else
 * in the trace changes). A forked child's
 * clock goes on from its parent's at the fork: clocks of different
 * processes are not comparable, but each process's records only meet its
 * own trace, and sorting by time keeps each process's order.
 *
 * vgpt writes an mmap line when code in a mapping is first translated, so
 * the trace may run that code before the next TSC packet says it is
 * later than the line: a decoder that applies sideband by time would not
 * see the mapping yet. Each MMAP2 is therefore dated back to the last
 * event of its process it cannot move across (its start, an exec, a
 * mapping change that overlaps it): the mapping existed from then on as
 * far as any trace can tell, since none of its code ran before the line.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hwt/pt.h>
#include <hwt/record.h>

/* perf time = the tool's time + CLOCK_BASE; see the top of the file. */
#define CLOCK_BASE 1

struct vline {
	struct hwt_rec_vsb_line l;
	uint64_t time;		/* the record's time (mmap: dated back) */
	size_t seq;		/* file order */
	size_t lineno;
	uint8_t skip;		/* an exec that did not happen */
	uint8_t cont;		/* exec: the new image is traced on;
				 * thread: the main thread going on after it */
};

struct vthread {
	uint32_t tid, pid;
	uint32_t lives;		/* thread lines: the file holds the last */
	size_t last_exit;	/* index of the exit line of the last life */
	uint8_t have_exit, emitted;
	uint32_t idx;		/* AUX buffer */
};

struct vproc {
	uint32_t pid, ppid;
	uint8_t have_ppid;
	uint8_t exec_cont;	/* an exec whose image is traced went by */
	uint64_t first, last;	/* time of its first and last line */
};

struct import {
	const struct hwt_rec_vgpt_config *c;
	struct hwt_rec_vgpt_stats *st;
	struct hwt_rec_pt *w;
	char *text;		/* the sideband, lines NUL-terminated */
	struct vline *v;
	size_t nv;
	struct vline **order;	/* by (time, seq) */
	struct vthread *threads;
	size_t nthreads;
	struct vproc *procs;
	size_t nprocs;
	char *err;
	size_t errlen;
};

static void warn(struct import *im, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void warn(struct import *im, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	im->st->warnings++;
	if (!im->c->warn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	im->c->warn(im->c->warn_ctx, msg);
}

static int error(struct import *im, int ret, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int error(struct import *im, int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(im->err, im->errlen, fmt, ap);
	va_end(ap);
	return ret;
}

/* ---- reading the sideband ---- */

static char *read_text(const char *path, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap + 1), *nb;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t k;

	if (fd < 0 || !buf) {
		if (fd >= 0)
			close(fd);
		free(buf);
		return NULL;
	}
	while ((k = read(fd, buf + n, cap - n)) > 0) {
		n += (size_t)k;
		if (n == cap) {
			nb = cap < SIZE_MAX / 4 ? realloc(buf, 2 * cap + 1) :
						  NULL;
			if (!nb) {
				k = -1;
				break;
			}
			buf = nb;
			cap *= 2;
		}
	}
	close(fd);
	if (k < 0) {
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

static int parse_lines(struct import *im, size_t len)
{
	size_t nlines = 0, lineno = 0;
	char *p = im->text, *end = im->text + len;

	for (char *q = p; q < end; q++)
		nlines += *q == '\n';
	im->v = calloc(nlines + 1, sizeof(*im->v));
	if (!im->v)
		return -HWT_ERR_NOMEM;
	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		struct vline *v = &im->v[im->nv];
		const char *why;
		size_t col;

		lineno++;
		if (!nl) {
			/* A writer that died mid-line: nothing to trust. */
			warn(im, "sideband line %zu is cut short (no newline); "
			     "left out", lineno);
			break;
		}
		*nl = '\0';
		if (memchr(p, '\0', (size_t)(nl - p))) {
			warn(im, "sideband line %zu holds a NUL byte; left out",
			     lineno);
		} else if (hwt_rec_vsb_parse(p, &v->l, &why, &col) < 0) {
			warn(im, "sideband line %zu, column %zu: %s; left out",
			     lineno, col + 1, why);
		} else if (v->l.time > UINT64_MAX - CLOCK_BASE) {
			warn(im, "sideband line %zu: time out of range; left "
			     "out", lineno);
		} else if (v->l.kind == HWT_REC_VSB_UNKNOWN) {
			warn(im, "sideband line %zu: unknown line '%.*s' "
			     "(from a newer vgpt?); left out", lineno,
			     (int)(v->l.keyword_len > 32 ? 32 :
				   v->l.keyword_len), v->l.keyword);
		} else {
			v->seq = im->nv;
			v->lineno = lineno;
			v->l.time += CLOCK_BASE;
			v->time = v->l.time;
			im->nv++;
		}
		p = nl + 1;
	}
	return 0;
}

/* ---- processes and threads ---- */

static struct vproc *proc_find(const struct import *im, uint32_t pid)
{
	for (size_t i = 0; i < im->nprocs; i++)
		if (im->procs[i].pid == pid)
			return &im->procs[i];
	return NULL;
}

/* A new zeroed element at the end of *@arr (of *@n items of @size). */
static void *append(void *arr, size_t *n, size_t size)
{
	void **a = arr;
	char *p = realloc(*a, (*n + 1) * size);

	if (!p)
		return NULL;
	*a = p;
	memset(p + *n * size, 0, size);
	return p + (*n)++ * size;
}

static struct vproc *proc_get(struct import *im, uint32_t pid)
{
	struct vproc *p = proc_find(im, pid);

	if (p)
		return p;
	p = append(&im->procs, &im->nprocs, sizeof(*p));
	if (p) {
		p->pid = pid;
		p->first = UINT64_MAX;
	}
	return p;
}

static struct vthread *thread_find(struct import *im, uint32_t tid)
{
	for (size_t i = 0; i < im->nthreads; i++)
		if (im->threads[i].tid == tid)
			return &im->threads[i];
	return NULL;
}

static struct vthread *thread_get(struct import *im, uint32_t tid)
{
	struct vthread *t = thread_find(im, tid);

	if (t)
		return t;
	t = append(&im->threads, &im->nthreads, sizeof(*t));
	if (t) {
		t->tid = tid;
		t->idx = (uint32_t)(im->nthreads - 1);
	}
	return t;
}

/* The line after line @i of the same process, or NULL. */
static const struct hwt_rec_vsb_line *next_of_pid(const struct import *im,
						  size_t i)
{
	uint32_t pid = im->v[i].l.pid;

	for (size_t j = i + 1; j < im->nv; j++)
		if (im->v[j].l.pid == pid)
			return &im->v[j].l;
	return NULL;
}

/*
 * Whether exec line @i is followed by the new image's own lines (vgpt
 * with --trace-children=yes: a comm line of the pid comes next).
 */
static int exec_continued(const struct import *im, size_t i)
{
	const struct hwt_rec_vsb_line *next = next_of_pid(im, i);

	return next && next->kind == HWT_REC_VSB_COMM;
}

/* Learn processes, threads and their lives from the lines. */
static int survey(struct import *im)
{
	for (size_t i = 0; i < im->nv; i++) {
		const struct hwt_rec_vsb_line *l = &im->v[i].l;
		struct vproc *p = proc_get(im, l->pid);
		struct vthread *t;

		if (!p)
			return -HWT_ERR_NOMEM;
		if (l->time < p->first)
			p->first = l->time;
		if (l->time > p->last)
			p->last = l->time;
		if (l->kind == HWT_REC_VSB_FORK) {
			p->ppid = l->ppid;
			p->have_ppid = 1;
		}
		if (l->kind == HWT_REC_VSB_EXEC && exec_continued(im, i)) {
			im->v[i].cont = 1;
			p->exec_cont = 1;
		}
		if (l->kind != HWT_REC_VSB_THREAD &&
		    l->kind != HWT_REC_VSB_EXIT)
			continue;
		t = thread_get(im, l->tid);
		if (!t)
			return -HWT_ERR_NOMEM;
		if (l->kind == HWT_REC_VSB_THREAD) {
			/* After a traced exec the main thread's stream goes
			 * on in the same file: the same life. */
			if (p->exec_cont && l->tid == l->pid && t->lives &&
			    !t->have_exit) {
				p->exec_cont = 0;
				im->v[i].cont = 1;
				continue;
			}
			t->pid = l->pid;
			t->lives++;
			t->have_exit = 0;
		} else {
			t->last_exit = i;
			t->have_exit = 1;
		}
	}
	return 0;
}

/*
 * Whether exec line @i took effect: vgpt writes the line before the
 * system call, which may fail. If it worked, this process writes nothing
 * more (vgpt without --trace-children=yes) or starts again with a comm
 * line (with it); if it failed, the process goes on with its old lines.
 */
static int exec_worked(const struct import *im, size_t i)
{
	const struct hwt_rec_vsb_line *next = next_of_pid(im, i);

	return !next || next->kind == HWT_REC_VSB_COMM;
}

static int overlaps(const struct hwt_rec_vsb_line *a,
		    const struct hwt_rec_vsb_line *b)
{
	return a->start < b->start + b->len && b->start < a->start + a->len;
}

/* See the top of the file: the earliest time an mmap line can have. */
static uint64_t date_back(const struct import *im, size_t i)
{
	const struct hwt_rec_vsb_line *m = &im->v[i].l;

	while (i-- > 0) {
		const struct vline *v = &im->v[i];

		if (v->l.pid != m->pid || v->skip)
			continue;
		switch (v->l.kind) {
		case HWT_REC_VSB_COMM:
		case HWT_REC_VSB_FORK:
		case HWT_REC_VSB_EXEC:
			return v->l.time;
		case HWT_REC_VSB_MMAP:
		case HWT_REC_VSB_MUNMAP:
			if (overlaps(&v->l, m))
				return v->l.time;
			break;
		default:
			break;
		}
	}
	return m->time;
}

static int by_time(const void *a, const void *b)
{
	const struct vline *x = *(const struct vline *const *)a;
	const struct vline *y = *(const struct vline *const *)b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int plan(struct import *im)
{
	for (size_t i = 0; i < im->nv; i++) {
		struct vline *v = &im->v[i];

		if (v->l.kind == HWT_REC_VSB_EXEC && !exec_worked(im, i))
			v->skip = 1;
		else if (v->l.kind == HWT_REC_VSB_MMAP)
			v->time = date_back(im, i);
	}
	im->order = malloc((im->nv ? im->nv : 1) * sizeof(*im->order));
	if (!im->order)
		return -HWT_ERR_NOMEM;
	for (size_t i = 0; i < im->nv; i++)
		im->order[i] = &im->v[i];
	qsort(im->order, im->nv, sizeof(*im->order), by_time);
	return 0;
}

/* ---- writing ---- */

static int write_fail(struct import *im, int ret)
{
	return error(im, ret, "%s", hwt_rec_pt_errmsg(im->w)[0] ?
		     hwt_rec_pt_errmsg(im->w) : hwt_errstr(ret));
}

/* TSC packets on the perf.data clock: a 7-byte payload, 56 bits. */
static void shift_tsc(uint8_t *trace, size_t size)
{
	const uint8_t *pos = trace, *end = trace + size;
	struct hwt_pt_packet pkt;

	for (; (pos = hwt_pt_scan_next(pos, end, &pkt, NULL)); pos += pkt.size) {
		uint8_t *at = trace + (pos - trace);
		uint64_t tsc;

		if (pkt.type != HWT_PT_TSC || pkt.size != 8)
			continue;
		tsc = (pkt.u.tsc + CLOCK_BASE) & ((1ull << 56) - 1);
		for (int i = 1; i < 8; i++, tsc >>= 8)
			at[i] = (uint8_t)tsc;
	}
}

/* The stream of @t (its PREFIX.TID.pt) as AUX records at @time. */
static int emit_trace(struct import *im, struct vthread *t, uint64_t time)
{
	struct hwt_rec_pt_aux a = { 0 };
	struct hwt_rec_pt_scan scan;
	char path[PATH_MAX];
	struct stat sb;
	void *map;
	int fd, ret;

	if (t->emitted)
		return 0;
	t->emitted = 1;
	snprintf(path, sizeof(path), "%s.%" PRIu32 ".pt", im->c->prefix,
		 t->tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &sb) < 0) {
		warn(im, "thread %" PRIu32 ": %s: %s: its trace is lost",
		     t->tid, path, strerror(errno));
		im->st->lost++;
		if (fd >= 0)
			close(fd);
		return 0;
	}
	if (!sb.st_size) {
		close(fd);
		warn(im, "thread %" PRIu32 ": %s is empty: its trace is lost",
		     t->tid, path);
		im->st->lost++;
		return 0;
	}
	/* Private and writable: shift_tsc() changes our copy only. */
	map = mmap(NULL, (size_t)sb.st_size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return error(im, -HWT_ERR_IO, "%s: %s", path, strerror(errno));
	shift_tsc(map, (size_t)sb.st_size);
	hwt_rec_pt_scan(map, (size_t)sb.st_size, &scan);
	if (scan.novf)
		warn(im, "thread %" PRIu32 ": %" PRIu64 " OVF packets: the "
		     "source lost trace there", t->tid, scan.novf);
	im->st->lost += scan.novf;
	a.time = time;
	a.idx = t->idx;
	a.pid = t->pid;
	a.tid = t->tid;
	a.cpu = -1;
	a.flags = im->c->snapshot ? PERF_AUX_FLAG_OVERWRITE : 0;
	a.data = map;
	a.size = (size_t)sb.st_size;
	ret = hwt_rec_pt_trace(im->w, &a);
	munmap(map, (size_t)sb.st_size);
	if (ret < 0)
		return write_fail(im, ret);
	im->st->nstreams++;
	im->st->trace_bytes += a.size;
	return 0;
}

static uint32_t ppid_of(const struct import *im, uint32_t pid)
{
	const struct vproc *p = proc_find(im, pid);

	return p && p->have_ppid ? p->ppid : pid;
}

/* The kernel's comm: the file name, at most 15 characters. */
static void comm_of(char comm[16], const char *path)
{
	const char *slash = strrchr(path, '/');

	snprintf(comm, 16, "%s", slash ? slash + 1 : path);
}

static int emit_mmap(struct import *im, const struct vline *v)
{
	const struct hwt_rec_vsb_line *l = &v->l;
	struct hwt_rec_pt_map m = { 0 };
	char real[PATH_MAX];

	m.start = l->start;
	m.len = l->len;
	if (l->kind == HWT_REC_VSB_MUNMAP) {
		m.flags = MAP_PRIVATE | MAP_ANONYMOUS;
		m.path = "//anon";
	} else {
		m.pgoff = l->pgoff;
		m.prot = l->prot;
		m.flags = MAP_PRIVATE;
		/* Saved code (PREFIX.PID.ADDR.bin) may be named relative
		 * to where the recording ran. */
		m.path = l->path[0] != '/' && realpath(l->path, real) ?
			 real : l->path;
	}
	return hwt_rec_pt_mmap(im->w, v->time, l->pid, l->pid, &m);
}

/* A thread's end: its stream, then EXIT. */
static int emit_exit(struct import *im, const struct vline *v,
		     struct vthread *t)
{
	const struct hwt_rec_vsb_line *l = &v->l;
	uint32_t ppid = l->tid == l->pid ? ppid_of(im, l->pid) : l->pid;
	int ret;

	if (t && t->have_exit && t->last_exit == v->seq) {
		ret = emit_trace(im, t, l->time);
		if (ret < 0)
			return ret;
	}
	return hwt_rec_pt_exit(im->w, l->time, l->pid, ppid, l->tid,
			       l->tid == l->pid ? ppid : l->pid);
}

/*
 * exec: the old image's threads end (their trace with them), but for the
 * main thread when the new image is traced: its stream goes on, as the
 * kernel keeps the thread (and perf its AUX buffer) across an execve.
 */
static int emit_exec(struct import *im, const struct vline *v)
{
	const struct hwt_rec_vsb_line *l = &v->l;
	char comm[16];
	int ret;

	for (size_t i = 0; i < im->nthreads; i++) {
		struct vthread *t = &im->threads[i];

		if (t->pid != l->pid || t->emitted || t->have_exit)
			continue;
		if (v->cont && t->tid == l->pid)
			continue;
		ret = emit_trace(im, t, l->time);
		if (ret < 0)
			return ret;
		if (t->tid != l->pid) {
			ret = hwt_rec_pt_exit(im->w, l->time, l->pid, l->pid,
					      t->tid, l->pid);
			if (ret < 0)
				return ret;
		}
	}
	/* A traced image's own comm line says it. */
	if (v->cont)
		return 0;
	im->st->execs++;
	comm_of(comm, l->path);
	return hwt_rec_pt_comm(im->w, l->time, l->pid, l->pid, comm, 1);
}

static int emit_line(struct import *im, const struct vline *v)
{
	const struct hwt_rec_vsb_line *l = &v->l;
	struct vthread *t;
	char comm[16];
	int ret;

	switch (l->kind) {
	case HWT_REC_VSB_COMM:
		comm_of(comm, l->path);
		return hwt_rec_pt_comm(im->w, l->time, l->pid, l->tid, comm,
				       1);
	case HWT_REC_VSB_THREAD:
		if (v->cont)
			return 0;
		t = thread_find(im, l->tid);
		if (t && t->lives > 1 && !t->emitted) {
			warn(im, "thread %" PRIu32 " started %" PRIu32 " times "
			     "(an id used again, or an exec followed): only "
			     "the last one's trace is left", l->tid, t->lives);
			im->st->lost += t->lives - 1;
			t->lives = 1;
		}
		if (l->tid != l->pid) {
			ret = hwt_rec_pt_fork(im->w, l->time, l->pid, l->pid,
					      l->tid, l->pid);
			if (ret < 0)
				return ret;
		}
		return hwt_rec_pt_itrace_start(im->w, l->time, l->pid, l->tid);
	case HWT_REC_VSB_EXIT:
		return emit_exit(im, v, thread_find(im, l->tid));
	case HWT_REC_VSB_MMAP:
	case HWT_REC_VSB_MUNMAP:
		return emit_mmap(im, v);
	case HWT_REC_VSB_FORK:
		return hwt_rec_pt_fork(im->w, l->time, l->pid, l->ppid, l->pid,
				       l->ppid);
	case HWT_REC_VSB_EXEC:
		return v->skip ? 0 : emit_exec(im, v);
	case HWT_REC_VSB_SWITCH:
		return hwt_rec_pt_switch(im->w, l->time, l->pid, l->tid,
					 l->out);
	default:
		return 0;
	}
}

/* Trace files the sideband does not name: reported, never dropped
 * silently. */
static void orphans(struct import *im)
{
	char dir[PATH_MAX];
	const char *base, *slash = strrchr(im->c->prefix, '/');
	size_t blen;
	struct dirent *de;
	DIR *d;

	if (slash) {
		snprintf(dir, sizeof(dir), "%.*s",
			 (int)(slash - im->c->prefix + 1), im->c->prefix);
		base = slash + 1;
	} else {
		snprintf(dir, sizeof(dir), ".");
		base = im->c->prefix;
	}
	blen = strlen(base);
	d = opendir(dir);
	if (!d)
		return;
	while ((de = readdir(d))) {
		const char *n = de->d_name;
		char *end;
		unsigned long tid;
		size_t len = strlen(n);

		if (strncmp(n, base, blen) || n[blen] != '.' || len < blen + 5 ||
		    strcmp(n + len - 3, ".pt"))
			continue;
		errno = 0;
		tid = strtoul(n + blen + 1, &end, 10);
		if (errno || end != n + len - 3 || tid > UINT32_MAX)
			continue;
		if (!thread_find(im, (uint32_t)tid)) {
			warn(im, "%s: a trace the sideband does not mention: "
			     "left out", n);
			im->st->lost++;
		}
	}
	closedir(d);
}

static void stats(struct import *im)
{
	for (size_t i = 0; i < im->nprocs; i++) {
		const struct vproc *p = &im->procs[i];

		im->st->nprocs++;
		if (p->first != UINT64_MAX)
			im->st->insns += p->last - p->first;
	}
	for (size_t i = 0; i < im->nthreads; i++)
		im->st->nthreads += im->threads[i].lives ? 1 : 0;
}

static int convert(struct import *im)
{
	struct hwt_rec_pt_config pc;
	char path[PATH_MAX];
	size_t len;
	int ret;

	snprintf(path, sizeof(path), "%s.sb", im->c->prefix);
	im->text = read_text(path, &len);
	if (!im->text)
		return error(im, -HWT_ERR_IO, "%s: %s", path, strerror(errno));
	ret = parse_lines(im, len);
	if (ret >= 0)
		ret = survey(im);
	if (ret >= 0)
		ret = plan(im);
	if (ret < 0)
		return error(im, ret, "%s", hwt_errstr(ret));
	if (!im->nthreads)
		return error(im, -HWT_ERR_BAD_FORMAT, "%s: no thread was "
			     "traced (no thread line)", path);
	orphans(im);
	stats(im);

	hwt_rec_pt_config_init(&pc);
	/* The tool's clock counts instructions: one tick per ns. */
	pc.time_shift = 0;
	pc.time_mult = 1;
	pc.time_zero = 0;
	pc.max_nonturbo_ratio = 10;
	pc.snapshot = im->c->snapshot;
	pc.filter = im->c->filter;
	pc.argc = im->c->argc;
	pc.argv = im->c->argv;
	pc.arch = "x86_64";
	pc.nr_cpus_avail = 1;
	pc.nr_cpus_online = 1;
	pc.cpudesc = "vgpt: Intel PT written by a Valgrind tool";
	for (size_t i = 0; i < im->nv; i++)
		if (im->v[i].l.kind == HWT_REC_VSB_SWITCH)
			pc.context_switch = 1;
	ret = hwt_rec_pt_new(&im->w, im->c->out, &pc, im->err, im->errlen);
	if (ret < 0)
		return ret;
	for (size_t i = 0; i < im->c->nexits; i++) {
		struct hwt_pd_exit e = im->c->exits[i];
		const struct vproc *p = proc_find(im, e.pid);

		/* It ended when its last line was written. */
		if (!(e.flags & HWT_PD_EXIT_HAVE_TIME) && p) {
			e.time = p->last;
			e.flags |= HWT_PD_EXIT_HAVE_TIME;
		}
		ret = hwt_rec_pt_add_exit(im->w, &e);
		if (ret < 0)
			return write_fail(im, ret);
	}
	for (size_t i = 0; i < im->nv; i++) {
		ret = emit_line(im, im->order[i]);
		if (ret < 0)
			return im->err[0] ? ret : write_fail(im, ret);
	}
	/* Threads whose end is not in the sideband (killed): their trace
	 * as far as it was written, at the last time of their process. */
	for (size_t i = 0; i < im->nthreads; i++) {
		struct vthread *t = &im->threads[i];
		const struct vproc *p = proc_find(im, t->pid);

		if (t->emitted)
			continue;
		if (!t->have_exit) {
			warn(im, "thread %" PRIu32 " has no exit line: killed? "
			     "the end of its trace may be missing", t->tid);
			im->st->unended++;
		}
		ret = emit_trace(im, t, p ? p->last : 0);
		if (ret < 0)
			return ret;
	}
	ret = hwt_rec_pt_round(im->w);
	return ret < 0 ? write_fail(im, ret) : 0;
}

int hwt_rec_vgpt_import(const struct hwt_rec_vgpt_config *c,
			struct hwt_rec_vgpt_stats *stats_out, char *err,
			size_t errlen)
{
	struct hwt_rec_vgpt_stats dummy;
	struct import im = { .c = c, .err = err, .errlen = errlen };
	struct stat sb;
	char cerr[256];
	int ret, cret;

	im.st = stats_out ? stats_out : &dummy;
	memset(im.st, 0, sizeof(*im.st));
	if (errlen)
		err[0] = '\0';
	ret = convert(&im);
	cerr[0] = '\0';
	cret = hwt_rec_pt_close(im.w, cerr, sizeof(cerr));
	if (cret < 0 && ret >= 0) {
		ret = cret;
		snprintf(err, errlen, "%s", cerr);
	}
	if (im.w && !stat(c->out, &sb))
		im.st->file_bytes = (uint64_t)sb.st_size;
	free(im.order);
	free(im.v);
	free(im.text);
	free(im.threads);
	free(im.procs);
	return ret;
}

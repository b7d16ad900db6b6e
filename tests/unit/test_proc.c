/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The process model, fed with records built by hand: mappings over time,
 * exec, fork of processes and threads, exit and pid reuse, comm names,
 * which thread ran on a CPU, and views whose images follow a pid (with
 * this test's own executable as the mapped file, so code and symbols can
 * be checked against what runs).
 */
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <hwt/proc.h>

int hwt_proc_test_probe(int x);
int hwt_proc_test_probe(int x)
{
	return x * 5 + 2;
}

/* ---- records ---- */

static struct hwt_pd_record rec_base(uint32_t type, uint32_t pid,
				     uint32_t tid, uint64_t time)
{
	struct hwt_pd_record r;

	memset(&r, 0, sizeof(r));
	r.type = type;
	r.misc = PERF_RECORD_MISC_USER;
	r.sid.pid = pid;
	r.sid.tid = tid;
	r.sid.time = time;
	r.sid.present = HWT_PD_SID_TID | HWT_PD_SID_TIME;
	return r;
}

static struct hwt_pd_record mmap2(uint32_t pid, uint32_t tid, uint64_t time,
				  uint64_t start, uint64_t len, uint64_t pgoff,
				  uint32_t prot, const char *path)
{
	struct hwt_pd_record r = rec_base(PERF_RECORD_MMAP2, pid, tid, time);

	r.u.mmap.pid = pid;
	r.u.mmap.tid = tid;
	r.u.mmap.start = start;
	r.u.mmap.len = len;
	r.u.mmap.pgoff = pgoff;
	r.u.mmap.prot = prot;
	r.u.mmap.is_mmap2 = 1;
	r.u.mmap.filename = path;
	return r;
}

static struct hwt_pd_record comm(uint32_t pid, uint32_t tid, uint64_t time,
				 const char *name, int exec)
{
	struct hwt_pd_record r = rec_base(PERF_RECORD_COMM, pid, tid, time);

	r.u.comm.pid = pid;
	r.u.comm.tid = tid;
	r.u.comm.comm = name;
	r.u.comm.exec = (uint8_t)exec;
	if (exec)
		r.misc |= PERF_RECORD_MISC_COMM_EXEC;
	return r;
}

static struct hwt_pd_record task(uint32_t type, uint32_t pid, uint32_t tid,
				 uint32_t ppid, uint32_t ptid, uint64_t time)
{
	struct hwt_pd_record r = rec_base(type, pid, tid, time);

	r.u.task.pid = pid;
	r.u.task.tid = tid;
	r.u.task.ppid = ppid;
	r.u.task.ptid = ptid;
	r.u.task.time = time;
	return r;
}

static void add(struct hwt_proc_model *m, struct hwt_pd_record r)
{
	assert_int_equal(hwt_proc_add(m, &r), 0);
}

#define RX (PROT_READ | PROT_EXEC)

/* The maps of @pid at @time as "start+len@pgoff:path;..." */
static const char *maps_str(struct hwt_proc_model *m, uint32_t pid,
			    uint64_t time)
{
	static char buf[1024];
	const struct hwt_proc_map *maps;
	size_t n, i, len = 0;

	buf[0] = '\0';
	n = hwt_proc_maps(m, pid, time, &maps);
	for (i = 0; i < n; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len,
					"%s%llx+%llx@%llx:%s", i ? ";" : "",
					(unsigned long long)maps[i].start,
					(unsigned long long)maps[i].len,
					(unsigned long long)maps[i].pgoff,
					maps[i].path);
	return buf;
}

/* ---- the model ---- */

static void test_maps_timeline(void **state)
{
	struct hwt_proc_model *m = hwt_proc_new(NULL);

	(void)state;
	assert_non_null(m);
	add(m, mmap2(100, 100, 10, 0x1000, 0x3000, 0, RX, "/a"));
	add(m, mmap2(100, 100, 20, 0x8000, 0x1000, 0x2000, RX, "/b"));
	/* Over the middle of /a: /a is cut in two around it. */
	add(m, mmap2(100, 101, 30, 0x2000, 0x800, 0x5000, PROT_READ, "/c"));

	assert_string_equal(maps_str(m, 100, 9), "");
	assert_string_equal(maps_str(m, 100, 10), "1000+3000@0:/a");
	assert_string_equal(maps_str(m, 100, 25),
			    "1000+3000@0:/a;8000+1000@2000:/b");
	assert_string_equal(maps_str(m, 100, 30),
			    "1000+1000@0:/a;2000+800@5000:/c;"
			    "2800+1800@1800:/a;8000+1000@2000:/b");
	/* Times only move forward: an earlier one counts as the latest. */
	add(m, mmap2(100, 100, 5, 0x20000, 0x1000, 0, RX, "/d"));
	assert_string_equal(maps_str(m, 100, 29),
			    "1000+3000@0:/a;8000+1000@2000:/b");
	assert_string_equal(maps_str(m, 100, 30),
			    "1000+1000@0:/a;2000+800@5000:/c;"
			    "2800+1800@1800:/a;8000+1000@2000:/b;"
			    "20000+1000@0:/d");
	/* The thread of a mapping belongs to its pid. */
	assert_int_equal(hwt_proc_pid_of(m, 101), 100);
	assert_int_equal(hwt_proc_pid_of(m, 555), 555);
	assert_string_equal(maps_str(m, 555, 100), "");

	/* Each map says when it appeared. */
	{
		const struct hwt_proc_map *maps;

		assert_int_equal(hwt_proc_maps(m, 100, 25, &maps), 2);
		assert_int_equal(maps[0].time, 10);
		assert_int_equal(maps[1].time, 20);
		assert_int_equal(maps[1].prot, RX);
	}
	hwt_proc_delete(m);
}

static void test_exec_fork_exit(void **state)
{
	struct hwt_proc_model *m = hwt_proc_new(NULL);

	(void)state;
	add(m, comm(100, 100, 0, "perf-exec", 0));
	add(m, comm(100, 100, 5, "sh", 1));
	add(m, mmap2(100, 100, 6, 0x1000, 0x1000, 0, RX, "/bin/sh"));
	add(m, mmap2(100, 100, 7, 0x9000, 0x1000, 0, RX, "/lib/libc"));
	/* A child process: the parent's space at the fork. */
	add(m, task(PERF_RECORD_FORK, 200, 200, 100, 100, 10));
	add(m, mmap2(100, 100, 11, 0x5000, 0x1000, 0, RX, "/lib/late"));
	assert_string_equal(maps_str(m, 200, 10),
			    "1000+1000@0:/bin/sh;9000+1000@0:/lib/libc");
	assert_string_equal(maps_str(m, 200, 9), "");
	assert_string_equal(maps_str(m, 100, 11),
			    "1000+1000@0:/bin/sh;5000+1000@0:/lib/late;"
			    "9000+1000@0:/lib/libc");
	assert_string_equal(hwt_proc_comm(m, 200, 10), "sh");
	assert_null(hwt_proc_comm(m, 200, 9));

	/* The child execs: its space is replaced, the parent's is not. */
	add(m, comm(200, 200, 20, "ls", 1));
	add(m, mmap2(200, 200, 21, 0x4000, 0x2000, 0x1000, RX, "/bin/ls"));
	assert_string_equal(maps_str(m, 200, 20), "");
	assert_string_equal(maps_str(m, 200, 21), "4000+2000@1000:/bin/ls");
	assert_string_equal(maps_str(m, 200, 19),
			    "1000+1000@0:/bin/sh;9000+1000@0:/lib/libc");
	assert_string_equal(maps_str(m, 100, 21),
			    "1000+1000@0:/bin/sh;5000+1000@0:/lib/late;"
			    "9000+1000@0:/lib/libc");
	assert_string_equal(hwt_proc_comm(m, 200, 19), "sh");
	assert_string_equal(hwt_proc_comm(m, 200, 20), "ls");
	assert_string_equal(hwt_proc_comm(m, 100, 0), "perf-exec");
	assert_string_equal(hwt_proc_comm(m, 100, 30), "sh");

	/* A thread: shares the space, inherits the comm. */
	add(m, task(PERF_RECORD_FORK, 100, 101, 100, 100, 30));
	assert_int_equal(hwt_proc_pid_of(m, 101), 100);
	assert_int_equal(hwt_proc_pid_of(m, 200), 200);
	assert_string_equal(hwt_proc_comm(m, 101, 30), "sh");
	assert_string_equal(maps_str(m, 101, 30), "");
	add(m, comm(100, 101, 31, "worker", 0));
	assert_string_equal(hwt_proc_comm(m, 101, 31), "worker");
	assert_string_equal(hwt_proc_comm(m, 100, 31), "sh");
	/* A thread's exit ends nothing. */
	add(m, task(PERF_RECORD_EXIT, 100, 101, 100, 100, 32));
	add(m, mmap2(100, 100, 33, 0x7000, 0x1000, 0, RX, "/lib/more"));
	assert_string_equal(maps_str(m, 100, 33),
			    "1000+1000@0:/bin/sh;5000+1000@0:/lib/late;"
			    "7000+1000@0:/lib/more;9000+1000@0:/lib/libc");

	/* The child exits; its pid comes back without a fork (lost
	 * records): a fresh space, not the old one. */
	add(m, task(PERF_RECORD_EXIT, 200, 200, 100, 100, 40));
	assert_string_equal(maps_str(m, 200, 40), "4000+2000@1000:/bin/ls");
	add(m, mmap2(200, 200, 50, 0x6000, 0x1000, 0, RX, "/bin/new"));
	assert_string_equal(maps_str(m, 200, 50), "6000+1000@0:/bin/new");
	assert_string_equal(maps_str(m, 200, 45), "4000+2000@1000:/bin/ls");
	/* And forked again: the parent's space, nothing of the old one. */
	add(m, task(PERF_RECORD_FORK, 200, 200, 100, 100, 60));
	assert_string_equal(maps_str(m, 200, 60),
			    "1000+1000@0:/bin/sh;5000+1000@0:/lib/late;"
			    "7000+1000@0:/lib/more;9000+1000@0:/lib/libc");
	hwt_proc_delete(m);
}

static struct hwt_pd_record sw(uint32_t cpu, uint64_t time, int cpu_wide,
			       int out, uint32_t pid, uint32_t tid,
			       uint32_t np_pid, uint32_t np_tid)
{
	struct hwt_pd_record r = rec_base(cpu_wide ?
					  PERF_RECORD_SWITCH_CPU_WIDE :
					  PERF_RECORD_SWITCH, pid, tid, time);

	r.sid.cpu = cpu;
	r.sid.present |= HWT_PD_SID_CPU;
	r.u.sw.cpu_wide = (uint8_t)cpu_wide;
	r.u.sw.out = (uint8_t)out;
	r.u.sw.next_prev_pid = np_pid;
	r.u.sw.next_prev_tid = np_tid;
	return r;
}

/* @query (hwt_proc_running, hwt_proc_ran_last) must name this thread. */
static void expect_on(int (*query)(const struct hwt_proc_model *, uint32_t,
				   uint64_t, uint32_t *, uint32_t *),
		      struct hwt_proc_model *m, uint32_t cpu, uint64_t time,
		      uint32_t pid, uint32_t tid)
{
	uint32_t p = ~0u, t = ~0u;

	if (query(m, cpu, time, &p, &t) != 0)
		fail_msg("no thread on cpu %u at %llu", cpu,
			 (unsigned long long)time);
	assert_int_equal(p, pid);
	assert_int_equal(t, tid);
}

static void expect_not_running(struct hwt_proc_model *m, uint32_t cpu,
			       uint64_t time)
{
	uint32_t p, t;

	assert_int_equal(hwt_proc_running(m, cpu, time, &p, &t),
			 -HWT_ERR_NOMAP);
}

static void test_running(void **state)
{
	struct hwt_proc_model *m = hwt_proc_new(NULL);
	struct hwt_pd_record r;
	uint32_t p, t;

	(void)state;
	r = rec_base(PERF_RECORD_ITRACE_START, 100, 101, 10);
	r.sid.cpu = 2;
	r.sid.present |= HWT_PD_SID_CPU;
	r.u.itrace_start.pid = 100;
	r.u.itrace_start.tid = 101;
	add(m, r);
	/* cpu 0: only switch-in records, at 15 and 25. */
	add(m, sw(0, 15, 1, 0, 7, 8, 0, 0));
	/* 101 leaves cpu 2 for 300/301 at 20; 300 comes in at 21. */
	add(m, sw(2, 20, 1, 1, 100, 101, 300, 301));
	add(m, sw(2, 21, 1, 0, 300, 301, 100, 101));
	add(m, sw(0, 25, 1, 0, 0, 0, 7, 8));

	expect_not_running(m, 2, 9);
	expect_on(hwt_proc_running, m, 2, 10, 100, 101);
	expect_on(hwt_proc_running, m, 2, 19, 100, 101);
	expect_on(hwt_proc_running, m, 2, 20, 300, 301);
	expect_on(hwt_proc_running, m, 2, 1000, 300, 301);
	expect_not_running(m, 0, 14);
	expect_on(hwt_proc_running, m, 0, 15, 7, 8);
	expect_on(hwt_proc_running, m, 0, 25, 0, 0);
	expect_not_running(m, 1, 20);
	assert_int_equal(hwt_proc_pid_of(m, 301), 300);
	assert_int_equal(hwt_proc_pid_of(m, 101), 100);

	/* Per-thread switches: in names the thread, out leaves it unknown;
	 * what ran last is the one that left. */
	add(m, sw(3, 30, 0, 0, 400, 401, 0, 0));
	add(m, sw(3, 40, 0, 1, 400, 401, 0, 0));
	expect_on(hwt_proc_running, m, 3, 35, 400, 401);
	expect_not_running(m, 3, 40);
	expect_on(hwt_proc_ran_last, m, 3, 40, 400, 401);
	expect_on(hwt_proc_ran_last, m, 3, 1000, 400, 401);
	add(m, sw(3, 50, 0, 0, 500, 501, 0, 0));
	add(m, sw(3, 60, 0, 1, 500, 501, 0, 0));
	add(m, sw(3, 61, 0, 1, 500, 501, 0, 0));
	expect_on(hwt_proc_ran_last, m, 3, 45, 400, 401);
	expect_on(hwt_proc_ran_last, m, 3, 55, 500, 501);
	expect_on(hwt_proc_ran_last, m, 3, 70, 500, 501);
	expect_on(hwt_proc_ran_last, m, 2, 1000, 300, 301);
	assert_int_equal(hwt_proc_ran_last(m, 3, 29, &p, &t), -HWT_ERR_NOMAP);
	assert_int_equal(hwt_proc_ran_last(m, 1, 29, &p, &t), -HWT_ERR_NOMAP);

	/* Without a CPU in the sample id nothing is known. */
	r = sw(5, 50, 1, 0, 9, 9, 0, 0);
	r.sid.present &= ~HWT_PD_SID_CPU;
	add(m, r);
	expect_not_running(m, 5, 60);
	hwt_proc_delete(m);
}

/* Records with odd values are taken or ignored, never a crash. */
static void test_odd_records(void **state)
{
	struct hwt_proc_model *m = hwt_proc_new(NULL);
	struct hwt_proc_view *v = hwt_proc_view_new(m, 1);
	struct hwt_pd_record r;
	const struct hwt_proc_map *maps;

	(void)state;
	add(m, mmap2(1, 1, 1, 0x1000, 0, 0, RX, "/x"));
	add(m, mmap2(1, 1, 2, ~0ull - 0xff, 0x1000, 0, RX, "/x"));
	add(m, mmap2(1, 1, 3, 0x1000, 0x1000, ~0ull, RX, NULL));
	r = comm(1, 1, 4, NULL, 1);
	add(m, r);
	r = rec_base(12345, 1, 1, 5);
	add(m, r);
	add(m, task(PERF_RECORD_FORK, 1, 1, 1, 1, 6));
	add(m, task(PERF_RECORD_FORK, 2, 2, 2, 2, 6));
	add(m, task(PERF_RECORD_EXIT, 77, 77, 1, 1, 7));
	(void)hwt_proc_maps(m, 1, ~0ull, &maps);
	assert_true(hwt_proc_view_advance(v, ~0ull) >= 0);
	assert_int_equal(hwt_proc_add(NULL, &r), -HWT_ERR_INVALID);
	assert_int_equal(hwt_proc_add(m, NULL), -HWT_ERR_INVALID);
	assert_int_equal(hwt_proc_maps(NULL, 1, 1, &maps), 0);
	assert_null(hwt_proc_view_new(NULL, 1));
	hwt_proc_view_delete(v);
	hwt_proc_delete(m);
	hwt_proc_delete(NULL);
}

/* ---- views: this executable's text mapping ---- */

struct text_map {
	uint64_t start, len, pgoff;
	char path[4096];
};

static int find_text(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct text_map *t = arg;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t end;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		t->start = info->dlpi_addr + (ph->p_vaddr & ~4095ull);
		t->pgoff = ph->p_offset & ~4095ull;
		end = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
		t->len = ((end + 4095) & ~4095ull) - t->start;
		break;
	}
	return 1;
}

/* The text mapping as the kernel's MMAP2 record of this test says it. */
static void self_text(struct text_map *t)
{
	ssize_t n;

	memset(t, 0, sizeof(*t));
	dl_iterate_phdr(find_text, t);
	assert_true(t->len > 0);
	n = readlink("/proc/self/exe", t->path, sizeof(t->path) - 1);
	assert_true(n > 0);
	t->path[n] = '\0';
}

struct warnings {
	int n;
	char last[512];
	uint64_t time;
	uint32_t pid;
};

static void on_warn(void *ctx, uint64_t time, uint32_t pid, const char *msg)
{
	struct warnings *w = ctx;

	w->n++;
	w->time = time;
	w->pid = pid;
	snprintf(w->last, sizeof(w->last), "%s", msg);
}

static uint64_t probe_addr(void)
{
	return (uint64_t)(uintptr_t)&hwt_proc_test_probe;
}

static void expect_probe(struct hwt_proc_view *v, uint64_t delta)
{
	const struct hwt_image *image = hwt_proc_view_image(v);
	const uint8_t *p;
	const char *name;
	uint64_t off;
	size_t n;

	assert_int_equal(hwt_image_read(image, probe_addr() + delta, &p, &n),
			 0);
	assert_true(n >= 8);
	assert_memory_equal(p, (const void *)(uintptr_t)probe_addr(), 8);
	assert_int_equal(hwt_image_symbol(image, probe_addr() + delta + 1,
					  &name, &off), 0);
	assert_string_equal(name, "hwt_proc_test_probe");
	assert_int_equal(off, 1);
}

static void expect_no_code(struct hwt_proc_view *v, uint64_t vaddr)
{
	const uint8_t *p;
	size_t n;

	assert_int_equal(hwt_image_read(hwt_proc_view_image(v), vaddr, &p,
					&n), -HWT_ERR_NOMAP);
}

static void test_view(void **state)
{
	struct warnings w = { 0 };
	struct hwt_proc_config cfg;
	struct hwt_proc_model *m;
	struct hwt_proc_view *v;
	struct hwt_image *image;
	struct text_map t;
	uint64_t gen, moved = 0x100000000000ull;

	(void)state;
	self_text(&t);
	hwt_proc_config_init(&cfg);
	cfg.warn = on_warn;
	cfg.warn_ctx = &w;
	m = hwt_proc_new(&cfg);
	v = hwt_proc_view_new(m, 100);
	image = hwt_proc_view_image(v);

	add(m, comm(100, 100, 10, "test", 1));
	add(m, mmap2(100, 100, 20, t.start, t.len, t.pgoff, RX, t.path));
	/* The same text again, elsewhere, later. */
	add(m, mmap2(100, 100, 30, t.start + moved, t.len, t.pgoff, RX,
		     t.path));
	/* Data over the second copy's first page: no code there. */
	add(m, mmap2(100, 100, 40, t.start + moved, 0x1000, 0,
		     PROT_READ | PROT_WRITE, "//anon"));
	add(m, comm(100, 100, 50, "other", 1));

	assert_int_equal(hwt_proc_view_advance(v, 19), 0);
	expect_no_code(v, probe_addr());
	gen = hwt_image_generation(image);
	assert_int_equal(hwt_proc_view_advance(v, 20), 1);
	assert_true(hwt_image_generation(image) != gen);
	expect_probe(v, 0);
	expect_no_code(v, probe_addr() + moved);
	/* Nothing new: no change. */
	gen = hwt_image_generation(image);
	assert_int_equal(hwt_proc_view_advance(v, 29), 0);
	assert_true(hwt_image_generation(image) == gen);
	assert_int_equal(hwt_proc_view_advance(v, 35), 1);
	expect_probe(v, 0);
	expect_probe(v, moved);
	assert_int_equal(hwt_proc_view_advance(v, 40), 1);
	expect_no_code(v, t.start + moved);
	if (probe_addr() >= t.start + 0x1000)
		expect_probe(v, moved);
	/* Back in time is a no-op. */
	assert_int_equal(hwt_proc_view_advance(v, 25), 0);
	expect_no_code(v, t.start + moved);
	/* The exec empties the image; the image object stays. */
	assert_int_equal(hwt_proc_view_advance(v, 50), 1);
	assert_ptr_equal(hwt_proc_view_image(v), image);
	expect_no_code(v, probe_addr());
	assert_int_equal(w.n, 0);

	/* Another view, straight to time 45: only what is left then. */
	{
		struct hwt_proc_view *v2 = hwt_proc_view_new(m, 100);

		assert_int_equal(hwt_proc_view_advance(v2, 45), 1);
		expect_probe(v2, 0);
		expect_no_code(v2, t.start + moved);
		/* Switching pid: an empty one, then back to the same image
		 * (a decoder keeps its blocks), the time gone by applied. */
		struct hwt_image *img100 = hwt_proc_view_image(v2);

		assert_int_equal(hwt_proc_view_set_pid(v2, 999), 1);
		assert_ptr_not_equal(hwt_proc_view_image(v2), img100);
		expect_no_code(v2, probe_addr());
		assert_int_equal(hwt_proc_view_set_pid(v2, 999), 0);
		assert_int_equal(hwt_proc_view_advance(v2, 50), 0);
		assert_int_equal(hwt_proc_view_set_pid(v2, 100), 1);
		assert_ptr_equal(hwt_proc_view_image(v2), img100);
		expect_no_code(v2, probe_addr());
		hwt_proc_view_delete(v2);
	}
	hwt_proc_view_delete(v);
	hwt_proc_delete(m);
}

/*
 * A view that moves between more pids than it keeps images of: each pid
 * maps this executable's text at an address of its own, and wherever
 * the view goes, it has that pid's code and no other's, also for a pid
 * whose image was dropped (and made again), and for mappings made while
 * the view was elsewhere.
 */
static void test_view_many_pids(void **state)
{
	enum { NPIDS = 40 };
	const uint64_t apart = 0x10000000000ull;
	struct hwt_proc_model *m = hwt_proc_new(NULL);
	struct hwt_proc_view *v;
	struct text_map t;
	uint64_t seed = 7;

	(void)state;
	self_text(&t);
	for (uint32_t p = 1; p <= NPIDS; p++)
		add(m, mmap2(p, p, 10, t.start + p * apart, t.len, t.pgoff,
			     RX, t.path));
	/* Later, pid 1 maps it a second time, elsewhere. */
	add(m, mmap2(1, 1, 500, t.start + (NPIDS + 1) * apart, t.len,
		     t.pgoff, RX, t.path));
	v = hwt_proc_view_new(m, 1);
	assert_non_null(v);
	assert_int_equal(hwt_proc_view_advance(v, 20), 1);
	expect_probe(v, apart);
	for (int i = 0; i < 600; i++) {
		uint32_t p, other;

		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		/* Mostly a few pids, now and then any. */
		p = 1 + (uint32_t)((seed >> 33) % ((seed >> 60) ? 6 : NPIDS));
		other = p % NPIDS + 1;
		assert_true(hwt_proc_view_set_pid(v, p) >= 0);
		assert_true(hwt_proc_view_advance(v, 20 + (uint64_t)i) >= 0);
		expect_probe(v, p * apart);
		expect_no_code(v, probe_addr() + other * apart);
		if (p == 1 && i >= 480)
			expect_probe(v, (NPIDS + 1) * apart);
		else if (p == 1)
			expect_no_code(v, probe_addr() + (NPIDS + 1) * apart);
	}
	hwt_proc_view_delete(v);
	hwt_proc_delete(m);
}

/* The GNU build id of this executable, read from its loaded notes. */
static int find_build_id(struct dl_phdr_info *info, size_t size, void *arg)
{
	uint8_t *id = arg;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const uint8_t *p, *end;

		if (ph->p_type != PT_NOTE)
			continue;
		p = (const uint8_t *)(uintptr_t)(info->dlpi_addr + ph->p_vaddr);
		end = p + ph->p_memsz;
		while (p + 12 <= end) {
			const ElfW(Nhdr) *nh = (const void *)p;
			const uint8_t *name = p + 12;
			const uint8_t *desc = name + ((nh->n_namesz + 3) & ~3u);

			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    !memcmp(name, "GNU", 4)) {
				id[0] = (uint8_t)nh->n_descsz;
				memcpy(id + 1, desc, nh->n_descsz > 20 ? 20 :
				       nh->n_descsz);
				return 1;
			}
			p = desc + ((nh->n_descsz + 3) & ~3u);
		}
	}
	return 1;
}

static void test_build_id(void **state)
{
	struct warnings w = { 0 };
	struct hwt_proc_config cfg;
	struct hwt_proc_model *m;
	struct hwt_proc_view *v;
	struct hwt_pd_record r;
	struct hwt_pd_build_id bid;
	struct text_map t;
	uint8_t id[21] = { 0 };

	(void)state;
	self_text(&t);
	dl_iterate_phdr(find_build_id, id);
	if (!id[0])
		skip();
	hwt_proc_config_init(&cfg);
	cfg.warn = on_warn;
	cfg.warn_ctx = &w;

	/* The right id in the record: code, no warning. */
	m = hwt_proc_new(&cfg);
	v = hwt_proc_view_new(m, 1);
	r = mmap2(1, 1, 5, t.start, t.len, t.pgoff, RX, t.path);
	memcpy(r.u.mmap.build_id, id + 1, id[0]);
	r.u.mmap.build_id_size = id[0];
	add(m, r);
	assert_int_equal(hwt_proc_view_advance(v, 5), 1);
	expect_probe(v, 0);
	assert_int_equal(w.n, 0);

	/* A wrong one: left out, one warning naming the file. */
	r = mmap2(2, 2, 6, t.start, t.len, t.pgoff, RX, t.path);
	memcpy(r.u.mmap.build_id, id + 1, id[0]);
	r.u.mmap.build_id[3] ^= 0x55;
	r.u.mmap.build_id_size = id[0];
	add(m, r);
	assert_int_equal(hwt_proc_view_set_pid(v, 2), 1);
	assert_int_equal(hwt_proc_view_advance(v, 6), 0);
	expect_no_code(v, probe_addr());
	assert_int_equal(w.n, 1);
	assert_int_equal(w.pid, 2);
	assert_int_equal(w.time, 6);
	assert_non_null(strstr(w.last, t.path));
	assert_non_null(strstr(w.last, "build id"));
	hwt_proc_view_delete(v);
	hwt_proc_delete(m);

	/* From the header's table: right, then wrong. */
	w.n = 0;
	m = hwt_proc_new(&cfg);
	memset(&bid, 0, sizeof(bid));
	bid.pid = -1;
	memcpy(bid.id, id + 1, id[0]);
	bid.size = id[0];
	bid.filename = t.path;
	assert_int_equal(hwt_proc_add_build_ids(m, &bid, 1), 0);
	add(m, mmap2(1, 1, 5, t.start, t.len, t.pgoff, RX, t.path));
	v = hwt_proc_view_new(m, 1);
	assert_int_equal(hwt_proc_view_advance(v, 5), 1);
	expect_probe(v, 0);
	assert_int_equal(w.n, 0);
	hwt_proc_view_delete(v);
	hwt_proc_delete(m);

	m = hwt_proc_new(&cfg);
	bid.id[0] ^= 1;
	add(m, mmap2(1, 1, 5, t.start, t.len, t.pgoff, RX, t.path));
	/* Given after the records: still counts. */
	assert_int_equal(hwt_proc_add_build_ids(m, &bid, 1), 0);
	v = hwt_proc_view_new(m, 1);
	assert_int_equal(hwt_proc_view_advance(v, 5), 0);
	expect_no_code(v, probe_addr());
	assert_int_equal(w.n, 1);
	hwt_proc_view_delete(v);
	hwt_proc_delete(m);
}

static void test_missing_and_root(void **state)
{
	struct warnings w = { 0 };
	struct hwt_proc_config cfg;
	struct hwt_proc_model *m;
	struct hwt_proc_view *v;
	struct text_map t;
	char dir[] = "/tmp/hwt_test_proc_XXXXXX", link[4200];

	(void)state;
	self_text(&t);
	hwt_proc_config_init(&cfg);
	cfg.warn = on_warn;
	cfg.warn_ctx = &w;

	/* A file that is not there: one warning for several mappings. */
	m = hwt_proc_new(&cfg);
	v = hwt_proc_view_new(m, 1);
	add(m, mmap2(1, 1, 5, 0x1000, 0x1000, 0, RX, "/nonexistent/lib.so"));
	add(m, mmap2(1, 1, 6, 0x5000, 0x1000, 0, RX, "/nonexistent/lib.so"));
	/* Non-code mappings are never opened. */
	add(m, mmap2(1, 1, 7, 0x9000, 0x1000, 0, RX, "[heap]"));
	add(m, mmap2(1, 1, 7, 0xa000, 0x1000, 0, RX, "//anon"));
	add(m, mmap2(1, 1, 7, 0xb000, 0x1000, 0, PROT_READ, "/nonexistent/d"));
	/* Nothing could be mapped: the image did not change. */
	assert_int_equal(hwt_proc_view_advance(v, 10), 0);
	assert_int_equal(w.n, 1);
	assert_int_equal(w.time, 5);
	assert_non_null(strstr(w.last, "/nonexistent/lib.so"));
	expect_no_code(v, 0x1000);
	/* [vdso] without a copy: one warning. */
	add(m, mmap2(1, 1, 11, 0x7000, 0x2000, 0, RX, "[vdso]"));
	assert_int_equal(hwt_proc_view_advance(v, 11), 0);
	assert_int_equal(w.n, 2);
	assert_non_null(strstr(w.last, "vdso"));
	hwt_proc_view_delete(v);
	hwt_proc_delete(m);

	/* Under a root: /exe there is this executable. */
	assert_non_null(mkdtemp(dir));
	snprintf(link, sizeof(link), "%s/exe", dir);
	assert_int_equal(symlink(t.path, link), 0);
	w.n = 0;
	cfg.root = dir;
	m = hwt_proc_new(&cfg);
	v = hwt_proc_view_new(m, 1);
	add(m, mmap2(1, 1, 5, t.start, t.len, t.pgoff, RX, "/exe"));
	add(m, mmap2(1, 1, 5, 0x1000, 0x1000, 0, RX, t.path));
	assert_int_equal(hwt_proc_view_advance(v, 5), 1);
	expect_probe(v, 0);
	/* The real path is not below the root. */
	expect_no_code(v, 0x1000);
	assert_int_equal(w.n, 1);
	assert_non_null(strstr(w.last, dir));
	hwt_proc_view_delete(v);
	hwt_proc_delete(m);
	unlink(link);
	rmdir(dir);
}

/* libc's text mapping, as find_text() gives the executable's. */
static int find_libc_text(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct text_map *t = arg;

	if (!info->dlpi_name || !strstr(info->dlpi_name, "/libc.so.6") ||
	    !realpath(info->dlpi_name, t->path))
		return 0;
	return find_text(info, size, arg);
}

/* Whether some address of @t (mapped in @v's image) is named @name. */
static int text_names(struct hwt_proc_view *v, const struct text_map *t,
		      const char *name)
{
	for (uint64_t a = t->start; a < t->start + t->len; a += 32) {
		const char *n;
		uint64_t off;

		if (!hwt_image_symbol(hwt_proc_view_image(v), a, &n, &off) &&
		    !strcmp(n, name))
			return 1;
	}
	return 0;
}

/*
 * Under a root (perf's --symfs), the debug files are the root's too:
 * ROOT/usr/lib/debug/.build-id/. libc with its debug file (libc6-dbg,
 * which valgrind pulls in; else skipped) placed below a root: its local
 * names come from there; not where @debug_dir says another directory,
 * nor once the root has no debug file (the machine's own is not the
 * root's).
 */
static void test_debug_below_root(void **state)
{
	struct hwt_proc_config cfg;
	struct hwt_proc_model *m;
	struct hwt_proc_view *v;
	struct text_map t;
	uint8_t id[20];
	char hex[41], dbg[128], dir[] = "/tmp/hwt_test_dbgroot_XXXXXX";
	char p[4300], empty[4300];
	static const char *const sub[] = {
		"/usr", "/usr/lib", "/usr/lib/debug", "/usr/lib/debug/.build-id",
	};

	(void)state;
	memset(&t, 0, sizeof(t));
	dl_iterate_phdr(find_libc_text, &t);
	if (!t.len || hwt_image_build_id(t.path, id) <= 0)
		skip();
	for (int i = 0; i < 20; i++)
		sprintf(hex + 2 * i, "%02x", id[i]);
	snprintf(dbg, sizeof(dbg), "/usr/lib/debug/.build-id/%.2s/%s.debug",
		 hex, hex + 2);
	if (access(dbg, R_OK))
		skip();
	assert_non_null(mkdtemp(dir));
	snprintf(p, sizeof(p), "%s/libc.so.6", dir);
	assert_int_equal(symlink(t.path, p), 0);
	for (size_t i = 0; i < sizeof(sub) / sizeof(sub[0]); i++) {
		snprintf(p, sizeof(p), "%s%s", dir, sub[i]);
		assert_int_equal(mkdir(p, 0700), 0);
	}
	snprintf(p, sizeof(p), "%s/usr/lib/debug/.build-id/%.2s", dir, hex);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s%s", dir, dbg);
	assert_int_equal(symlink(dbg, p), 0);
	snprintf(empty, sizeof(empty), "%s/usr", dir);

	/* k 2: the root has no debug file, the machine's /usr/lib/debug
	 * does (it is not the root's). */
	for (int k = 0; k < 3; k++) {
		if (k == 2)
			assert_int_equal(unlink(p), 0);
		hwt_proc_config_init(&cfg);
		cfg.root = dir;
		cfg.debug_dir = k == 1 ? empty : NULL;
		m = hwt_proc_new(&cfg);
		v = hwt_proc_view_new(m, 1);
		add(m, mmap2(1, 1, 5, t.start, t.len, t.pgoff, RX,
			     "/libc.so.6"));
		assert_int_equal(hwt_proc_view_advance(v, 5), 1);
		/* (.dynsym's, either way.) */
		assert_true(text_names(v, &t, "malloc"));
		assert_int_equal(text_names(v, &t, "__strlen_avx2"), !k);
		hwt_proc_view_delete(v);
		hwt_proc_delete(m);
	}

	for (int i = 4; i >= 0; i--) {
		if (i == 4)
			snprintf(p, sizeof(p), "%s/usr/lib/debug/.build-id/%.2s",
				 dir, hex);
		else
			snprintf(p, sizeof(p), "%s%s", dir, sub[i]);
		assert_int_equal(rmdir(p), 0);
	}
	snprintf(p, sizeof(p), "%s/libc.so.6", dir);
	unlink(p);
	assert_int_equal(rmdir(dir), 0);
}

/*
 * The build-id cache (perf's ~/.debug layout): a file that is gone, or is
 * another build, is found there by the recorded build id; the vdso too.
 * Both leaf forms perf wrote over time: the link names the file, or a
 * directory holding `elf'.
 */
static void test_buildid_cache(void **state)
{
	struct warnings w = { 0 };
	struct hwt_proc_config cfg;
	struct hwt_proc_model *m;
	struct hwt_proc_view *v;
	struct hwt_pd_record r;
	struct text_map t;
	uint8_t id[21] = { 0 };
	char dir[] = "/tmp/hwt_test_cache_XXXXXX";
	char hex[41], sub[4300], leaf[4400], elf[4500];

	(void)state;
	self_text(&t);
	dl_iterate_phdr(find_build_id, id);
	if (!id[0])
		skip();
	for (int i = 0; i < id[0]; i++)
		sprintf(hex + 2 * i, "%02x", id[1 + i]);
	assert_non_null(mkdtemp(dir));
	snprintf(sub, sizeof(sub), "%s/.build-id", dir);
	assert_int_equal(mkdir(sub, 0700), 0);
	snprintf(sub, sizeof(sub), "%s/.build-id/%.2s", dir, hex);
	assert_int_equal(mkdir(sub, 0700), 0);
	snprintf(leaf, sizeof(leaf), "%s/%s", sub, hex + 2);

	hwt_proc_config_init(&cfg);
	cfg.warn = on_warn;
	cfg.warn_ctx = &w;
	cfg.buildid_dir = dir;
	for (int form = 0; form < 2; form++) {
		if (form == 0) {
			assert_int_equal(symlink(t.path, leaf), 0);
		} else {
			assert_int_equal(mkdir(leaf, 0700), 0);
			snprintf(elf, sizeof(elf), "%s/elf", leaf);
			assert_int_equal(symlink(t.path, elf), 0);
		}
		w.n = 0;
		m = hwt_proc_new(&cfg);
		v = hwt_proc_view_new(m, 1);
		/* Gone: another path, this build id. */
		r = mmap2(1, 1, 5, t.start, t.len, t.pgoff, RX,
			  "/nonexistent/hwt-test-exe");
		memcpy(r.u.mmap.build_id, id + 1, id[0]);
		r.u.mmap.build_id_size = id[0];
		add(m, r);
		assert_int_equal(hwt_proc_view_advance(v, 5), 1);
		expect_probe(v, 0);
		assert_int_equal(w.n, 0);
		/* The vdso, by the build id the recording has for it. */
		r = mmap2(1, 1, 6, 0x10000000, t.len, t.pgoff, RX, "[vdso]");
		memcpy(r.u.mmap.build_id, id + 1, id[0]);
		r.u.mmap.build_id_size = id[0];
		add(m, r);
		assert_int_equal(hwt_proc_view_advance(v, 6), 1);
		expect_probe(v, 0x10000000 - t.start);
		/* Another build in the cache: left out, with a warning. */
		r = mmap2(1, 1, 7, 0x20000000, t.len, t.pgoff, RX,
			  "/nonexistent/other");
		memcpy(r.u.mmap.build_id, id + 1, id[0]);
		r.u.mmap.build_id[0] ^= 1;
		r.u.mmap.build_id_size = id[0];
		add(m, r);
		assert_int_equal(hwt_proc_view_advance(v, 7), 0);
		expect_no_code(v, 0x20000000 + (probe_addr() - t.start));
		assert_int_equal(w.n, 1);
		assert_non_null(strstr(w.last, "/nonexistent/other"));
		hwt_proc_view_delete(v);
		hwt_proc_delete(m);
		if (form == 1)
			assert_int_equal(unlink(elf), 0);
		assert_int_equal(form ? rmdir(leaf) : unlink(leaf), 0);
	}
	rmdir(sub);
	snprintf(sub, sizeof(sub), "%s/.build-id", dir);
	rmdir(sub);
	rmdir(dir);
}

/* The vdso: saved from this process, mapped where it is. */
static void test_vdso(void **state)
{
	uint64_t base = getauxval(AT_SYSINFO_EHDR);
	const ElfW(Ehdr) *eh = (const void *)(uintptr_t)base;
	const ElfW(Phdr) *ph;
	struct warnings w = { 0 };
	struct hwt_proc_config cfg;
	struct hwt_proc_model *m;
	struct hwt_proc_view *v;
	char path[] = "/tmp/hwt_test_vdso_XXXXXX";
	uint64_t size = 0;
	const uint8_t *p;
	size_t n;
	int fd;

	(void)state;
	if (!base)
		skip();
	ph = (const void *)((const uint8_t *)eh + eh->e_phoff);
	for (int i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD &&
		    ph[i].p_offset + ph[i].p_filesz > size)
			size = ph[i].p_offset + ph[i].p_filesz;
	assert_true(size > 0);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, eh, size), (ssize_t)size);
	close(fd);

	hwt_proc_config_init(&cfg);
	cfg.warn = on_warn;
	cfg.warn_ctx = &w;
	cfg.vdso_path = path;
	m = hwt_proc_new(&cfg);
	v = hwt_proc_view_new(m, 1);
	add(m, mmap2(1, 1, 5, base, (size + 4095) & ~4095ull, 0, RX,
		     "[vdso]"));
	assert_int_equal(hwt_proc_view_advance(v, 5), 1);
	assert_int_equal(hwt_image_read(hwt_proc_view_image(v), base + 64,
					&p, &n), 0);
	assert_memory_equal(p, (const uint8_t *)eh + 64, 64);
	assert_int_equal(w.n, 0);
	hwt_proc_view_delete(v);
	hwt_proc_delete(m);
	unlink(path);
}

static uint64_t rnd(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void count_warn(void *ctx, uint64_t time, uint32_t pid,
		       const char *msg)
{
	(void)time;
	(void)pid;
	(void)msg;
	(*(int *)ctx)++;
}

/*
 * Random records among few pids, tids and cpus, with views following
 * along: no crash, the maps are sorted and disjoint, and where the model
 * has a mapping without code (anything but this executable) the view's
 * image has nothing.
 */
static void test_random_records(void **state)
{
	static const uint32_t types[] = {
		PERF_RECORD_MMAP, PERF_RECORD_MMAP2, PERF_RECORD_COMM,
		PERF_RECORD_FORK, PERF_RECORD_EXIT, PERF_RECORD_SWITCH,
		PERF_RECORD_SWITCH_CPU_WIDE, PERF_RECORD_ITRACE_START,
		PERF_RECORD_LOST, 999,
	};
	const char *paths[] = { "/nonexistent/a", "[vdso]", "//anon",
				"[heap]", "", NULL };
	struct hwt_proc_config cfg;
	struct hwt_proc_model *m;
	struct hwt_proc_view *views[3];
	struct text_map t;
	uint64_t seed = 99, time = 0;
	uint32_t vpid[3] = { 1, 2, 3 };
	int warnings = 0, i, k, checked = 0;

	(void)state;
	self_text(&t);
	paths[5] = t.path;
	hwt_proc_config_init(&cfg);
	cfg.warn = count_warn;
	cfg.warn_ctx = &warnings;
	m = hwt_proc_new(&cfg);
	for (k = 0; k < 3; k++)
		views[k] = hwt_proc_view_new(m, (uint32_t)k + 1);
	for (i = 0; i < 3000; i++) {
		struct hwt_pd_record r;
		uint32_t pid = 1 + (uint32_t)(rnd(&seed) % 4);
		uint32_t tid = rnd(&seed) % 2 ? pid : pid + 10;
		const struct hwt_proc_map *maps;
		size_t n, j;

		time += rnd(&seed) % 3;
		r = rec_base(types[rnd(&seed) % (sizeof(types) /
						 sizeof(types[0]))],
			     pid, tid, time);
		if (rnd(&seed) % 2)
			r.sid.present |= HWT_PD_SID_CPU;
		r.sid.cpu = (uint32_t)(rnd(&seed) % 3);
		r.misc |= (uint16_t)(rnd(&seed) % 2 ? PERF_RECORD_MISC_SWITCH_OUT : 0);
		switch (r.type) {
		case PERF_RECORD_MMAP:
		case PERF_RECORD_MMAP2:
			r.u.mmap.pid = pid;
			r.u.mmap.tid = tid;
			r.u.mmap.start = t.start + (rnd(&seed) % 8) * 0x1000;
			r.u.mmap.len = (rnd(&seed) % 4) * 0x1000;
			r.u.mmap.pgoff = rnd(&seed) % 2 ? t.pgoff :
					 rnd(&seed) << 12;
			r.u.mmap.prot = (uint32_t)(rnd(&seed) % 8);
			r.u.mmap.is_mmap2 = r.type == PERF_RECORD_MMAP2;
			r.u.mmap.filename = paths[rnd(&seed) % 6];
			if (rnd(&seed) % 4 == 0) {
				r.u.mmap.build_id_size = (uint8_t)(rnd(&seed) % 21);
				r.u.mmap.build_id[0] = (uint8_t)rnd(&seed);
			}
			break;
		case PERF_RECORD_COMM:
			r.u.comm.pid = pid;
			r.u.comm.tid = tid;
			r.u.comm.comm = rnd(&seed) % 2 ? "a" : "b";
			r.u.comm.exec = (uint8_t)(rnd(&seed) % 2);
			break;
		case PERF_RECORD_FORK:
		case PERF_RECORD_EXIT:
			r.u.task.pid = pid;
			r.u.task.tid = tid;
			r.u.task.ppid = 1 + (uint32_t)(rnd(&seed) % 4);
			r.u.task.ptid = r.u.task.ppid;
			break;
		case PERF_RECORD_SWITCH:
		case PERF_RECORD_SWITCH_CPU_WIDE:
			r.u.sw.out = (uint8_t)(rnd(&seed) % 2);
			r.u.sw.cpu_wide = r.type == PERF_RECORD_SWITCH_CPU_WIDE;
			r.u.sw.next_prev_pid = 1 + (uint32_t)(rnd(&seed) % 4);
			r.u.sw.next_prev_tid = r.u.sw.next_prev_pid;
			break;
		case PERF_RECORD_ITRACE_START:
			r.u.itrace_start.pid = pid;
			r.u.itrace_start.tid = tid;
			break;
		default:
			break;
		}
		assert_int_equal(hwt_proc_add(m, &r), 0);

		n = hwt_proc_maps(m, pid, time - rnd(&seed) % 5, &maps);
		for (j = 0; j + 1 < n; j++)
			assert_true(maps[j].start + maps[j].len <=
				    maps[j + 1].start);
		k = (int)(rnd(&seed) % 3);
		if (rnd(&seed) % 8 == 0) {
			assert_true(hwt_proc_view_set_pid(views[k], pid) >= 0);
			vpid[k] = pid;
		}
		assert_true(hwt_proc_view_advance(views[k], time) >= 0);
		n = hwt_proc_maps(m, vpid[k], time, &maps);
		for (j = 0; j < n; j++) {
			if (maps[j].path && !strcmp(maps[j].path, t.path))
				continue;
			expect_no_code(views[k], maps[j].start);
			checked++;
		}
		{
			uint32_t p, q;

			(void)hwt_proc_running(m, r.sid.cpu, time, &p, &q);
			(void)hwt_proc_comm(m, tid, time);
		}
	}
	assert_true(checked > 1000);
	/* Problems were warned about, once per file and kind at most. */
	assert_true(warnings > 0);
	assert_true(warnings <= 3 * 6);
	for (k = 0; k < 3; k++)
		hwt_proc_view_delete(views[k]);
	hwt_proc_delete(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_maps_timeline),
		cmocka_unit_test(test_exec_fork_exit),
		cmocka_unit_test(test_running),
		cmocka_unit_test(test_odd_records),
		cmocka_unit_test(test_view),
		cmocka_unit_test(test_view_many_pids),
		cmocka_unit_test(test_build_id),
		cmocka_unit_test(test_missing_and_root),
		cmocka_unit_test(test_debug_below_root),
		cmocka_unit_test(test_buildid_cache),
		cmocka_unit_test(test_vdso),
		cmocka_unit_test(test_random_records),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vgpt: a Valgrind tool that records the control flow of an unmodified
 * program as a genuine Intel PT packet stream, one per thread, plus a text
 * sideband (README.md in this folder describes the files and the model;
 * vgpt.h lists the parts).
 *
 * This file: options, and the events outside translated code: threads
 * starting, switching and ending, syscalls (fork, execve), signals, memory
 * mapped and unmapped. Each first drains the exit log, so that the packets
 * and the clock are up to date when it acts.
 */
#include "vgpt.h"

#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_clientstate.h"
#include "pub_tool_machine.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_options.h"
#include "pub_tool_threadstate.h"
#include "pub_tool_vki.h"
#include "pub_tool_vkiscnums.h"
#include "pub_tool_xarray.h"

const HChar *vgpt_clo_out = "vgpt";
Bool vgpt_clo_truth = False;
ULong vgpt_clo_ring = 0;
ULong vgpt_clo_psb = 1 << 12;
Bool vgpt_continued = False;

static ULong clo_continue;
static ThreadId cur_tid = VG_INVALID_THREADID;
static Bool ran;		/* a thread ran client code */

/* ------------------------------------------------------------------ */
/* Threads                                                             */
/* ------------------------------------------------------------------ */

/* @tid runs client code now: the log (of whoever ran last) is drained,
 * and a thread that runs after another one says so. */
static void start_client_code(ThreadId tid, ULong blocks_done)
{
	struct vgpt_thread *t = vgpt_threads[tid];
	struct vgpt_thread *prev = cur_tid != VG_INVALID_THREADID ?
				   vgpt_threads[cur_tid] : NULL;
	Bool other_ran = tid != cur_tid;
	Long used;

	(void)blocks_done;
	/*
	 * The same thread after a scheduling quantum (records in its log:
	 * no syscall, signal or new code since the last drain, which would
	 * have emptied it): its log goes on, drained when full. That keeps
	 * the log within LOG_ROOM too (see there).
	 */
	used = t && t == vgpt_cur && !other_ran ? vgpt_log_used(tid) : -1;
	if (used > 0) {
		if (used >= vgpt_log_bytes)
			vgpt_log_full(VG_(get_IP)(tid));
		return;
	}
	/* Back from a syscall whose log went to the drain thread, where it
	 * went in, nothing drained since: the drain thread has the flow. */
	if (used == 0 && vgpt_resume_ip &&
	    vgpt_resume_ip == VG_(get_IP)(tid)) {
		vgpt_resume_ip = 0;
		return;
	}
	vgpt_drain(prev ? VG_(get_IP)(cur_tid) : 0);
	if (other_ran && prev)
		vgpt_sb_line("switch %llu %d %d out", vgpt_icount,
			     VG_(getpid)(), prev->os_tid);
	if (!t)
		t = vgpt_threads[tid] = vgpt_thread_new(tid, vgpt_continued);
	/* After the first thread, also when the last one to run exited. */
	if (other_ran && ran)
		vgpt_sb_line("switch %llu %d %d in", vgpt_icount,
			     VG_(getpid)(), t->os_tid);
	ran = True;
	/* Between superblocks, the guest IP is where the flow goes next. */
	t->flow_ip = VG_(get_IP)(tid);
	t->flow_known = True;
	vgpt_switch_in(t, other_ran);
	vgpt_cur = t;
	cur_tid = tid;
	/* A new thread has a copy of its parent's position. */
	vgpt_log_reset(tid);
}

static void end_thread(ThreadId tid)
{
	struct vgpt_thread *t = vgpt_threads[tid];

	if (!t)
		return;
	vgpt_drain(0);
	/* Where it stopped, as for a signal: a fatal one may have cut a
	 * superblock short; one that another's exit_group stopped ends
	 * there too. */
	vgpt_async(t, VG_(get_IP)(tid));
	vgpt_thread_end(t);
	vgpt_threads[tid] = NULL;
	if (vgpt_cur == t)
		vgpt_cur = NULL;
	if (cur_tid == tid)
		cur_tid = VG_INVALID_THREADID;
}

/* ------------------------------------------------------------------ */
/* Syscalls, signals, memory                                           */
/* ------------------------------------------------------------------ */

/*
 * The image after a successful execve is traced by a new vgpt (with
 * --trace-children=yes) that must continue the files and the clock: it
 * gets --vgpt-continue=TIME on its command line, which Valgrind builds
 * from VG_(args_for_valgrind) in its execve wrapper, after this hook.
 */
static void set_arg(const HChar *opt, HChar *arg)
{
	XArray *args = VG_(args_for_valgrind);
	Bool found = False;

	for (Word i = 0; i < VG_(sizeXA)(args); i++) {
		HChar **p = VG_(indexXA)(args, i);

		if (!VG_(strncmp)(*p, opt, VG_(strlen)(opt))) {
			*p = arg;
			found = True;
		}
	}
	if (!found)
		VG_(addToXA)(args, &arg);
}

static void pass_clock(void)
{
	set_arg("--vgpt-continue=",
		vgpt_path("--vgpt-continue=%llu", vgpt_icount));
	/* The program may have changed its directory. */
	set_arg("--vgpt-out=", vgpt_path("--vgpt-out=%s", vgpt_clo_out));
}

static void pre_syscall_drain(ThreadId tid, UInt sysno, UWord *args,
			      UInt nargs)
{
	Bool fork = sysno == __NR_clone || sysno == __NR_fork ||
		    sysno == __NR_vfork || sysno == __NR_clone3;
	Bool exec = sysno == __NR_execve || sysno == __NR_execveat;
	struct vgpt_thread *t = vgpt_threads[tid];
	Addr ip = VG_(get_IP)(tid);

	(void)nargs;
	/*
	 * The packets up to the syscall (its TIP.PGD) must come before
	 * anything after it, but most syscalls need nothing more of them: a
	 * log worth it goes to the drain thread, and the thread resumes at
	 * @ip (start_client_code). (What the syscall does to the image,
	 * the sideband or the threads drains first: vgpt_drain.)
	 */
	if (!fork && !exec && t && t == vgpt_cur &&
	    vgpt_log_used(tid) >= LOG_BYTES && vgpt_dt_hand_over(t, ip)) {
		vgpt_resume_ip = ip;
		return;
	}
	vgpt_drain(ip);
	/* A child's sideband lines come after its parent's. */
	if (fork)
		vgpt_sb_flush();
	if (!exec)
		return;
	/* The image goes away if this works: leave nothing buffered. */
	vgpt_sb_line("exec %llu %d %s", vgpt_icount, VG_(getpid)(),
		     sysno == __NR_execve ? (const HChar *)args[0] : "?");
	for (ThreadId i = 0; i < VG_N_THREADS; i++) {
		struct vgpt_thread *u = vgpt_threads[i];

		if (!u)
			continue;
		vgpt_thread_flush(u);
		vgpt_thread_snapshot(u);
	}
	vgpt_sb_flush();
	pass_clock();
}

static void pre_syscall(ThreadId tid, UInt sysno, UWord *args, UInt nargs)
{
	pre_syscall_drain(tid, sysno, args, nargs);
	vgpt_dt_syscall_begin();
}

static void post_syscall(ThreadId tid, UInt sysno, UWord *args, UInt nargs,
			 SysRes res)
{
	vgpt_dt_syscall_end();
	(void)tid;
	(void)sysno;
	(void)args;
	(void)nargs;
	(void)res;
}

static void pre_deliver_signal(ThreadId tid, Int sig, Bool alt_stack)
{
	struct vgpt_thread *t = vgpt_threads[tid];

	(void)sig;
	(void)alt_stack;
	vgpt_drain(0);	/* a synchronous one stops a superblock midway */
	/* The signal frame saves the log position (in the shadow state) and
	 * the return from the handler restores it: an empty log. */
	vgpt_log_reset(tid);
	if (t)
		vgpt_async(t, VG_(get_IP)(tid));
}

/* In a forked child only the forking thread lives on, in a new trace:
 * what is buffered belongs to the parent, which writes it. */
static void atfork_child(ThreadId tid)
{
	Int ppid = VG_(getppid)();

	for (ThreadId i = 0; i < VG_N_THREADS; i++)
		if (vgpt_threads[i]) {
			vgpt_thread_forget(vgpt_threads[i]);
			vgpt_threads[i] = NULL;
		}
	vgpt_cur = NULL;
	cur_tid = VG_INVALID_THREADID;
	ran = False;
	vgpt_dt_forked();
	VG_(memset)(vgpt_log, 0, LOG_ROOM + LOG_PAD);
	vgpt_log_reset(tid);
	vgpt_sb_forget();
	vgpt_sb_line("fork %llu %d %d", vgpt_icount, ppid, VG_(getpid)());
}

static void new_mem_mmap(Addr a, SizeT len, Bool r, Bool w, Bool x,
			 ULong di_handle)
{
	(void)r;
	(void)w;
	(void)x;
	(void)di_handle;
	vgpt_unmapped(a, len);	/* what it maps over */
}

static void copy_mem_remap(Addr from, Addr to, SizeT len)
{
	(void)to;
	vgpt_unmapped(from, len);
}

static void change_mem_mprotect(Addr a, SizeT len, Bool r, Bool w, Bool x)
{
	(void)r;
	(void)x;
	vgpt_protect(a, len, w);
}

/* ------------------------------------------------------------------ */
/* Tool interface                                                      */
/* ------------------------------------------------------------------ */

/* SIZE[k|m|g] (powers of 1024). */
static Bool parse_size(const HChar *s, ULong *v)
{
	HChar *end;
	ULong n = VG_(strtoull10)(s, &end);

	switch (*end) {
	case 'k': case 'K': n <<= 10; end++; break;
	case 'm': case 'M': n <<= 20; end++; break;
	case 'g': case 'G': n <<= 30; end++; break;
	}
	if (end == s || *end)
		return False;
	*v = n;
	return True;
}

static Bool process_cmd_line_option(const HChar *arg)
{
	const HChar *v = NULL;

	if VG_STR_CLO(arg, "--vgpt-out", vgpt_clo_out) {
	} else if VG_BOOL_CLO(arg, "--vgpt-truth", vgpt_clo_truth) {
	} else if VG_STR_CLO(arg, "--vgpt-drain-thread", v) {
		if (!VG_(strcmp)(v, "auto"))
			vgpt_clo_drain_thread = DT_AUTO;
		else if (!VG_(strcmp)(v, "yes"))
			vgpt_clo_drain_thread = DT_YES;
		else if (!VG_(strcmp)(v, "no"))
			vgpt_clo_drain_thread = DT_NO;
		else
			VG_(fmsg_bad_option)(arg, "auto, yes or no\n");
	} else if VG_STR_CLO(arg, "--vgpt-drain-window", v) {
		if (!parse_size(v, &vgpt_clo_drain_window) ||
		    vgpt_clo_drain_window < (1 << 10))
			VG_(fmsg_bad_option)(arg, "a size of 1k or more\n");
	} else if VG_STR_CLO(arg, "--vgpt-ring", v) {
		if (!parse_size(v, &vgpt_clo_ring))
			VG_(fmsg_bad_option)(arg, "a size: N[k|m|g]\n");
	} else if VG_STR_CLO(arg, "--vgpt-psb", v) {
		if (!parse_size(v, &vgpt_clo_psb) || vgpt_clo_psb < 256 ||
		    vgpt_clo_psb > (1ULL << 30))
			VG_(fmsg_bad_option)(arg, "a size from 256 to 1g\n");
	} else if VG_STR_CLO(arg, "--vgpt-filter", v) {
		if (!vgpt_filter_parse(v))
			VG_(fmsg_bad_option)(arg,
					     "FUNC[@OBJ][,FUNC[@OBJ]...]\n");
	} else if VG_STR_CLO(arg, "--vgpt-continue", v) {
		HChar *end;

		clo_continue = VG_(strtoull10)(v, &end);
		if (end == v || *end)
			VG_(fmsg_bad_option)(arg, "a time\n");
		vgpt_continued = True;
	} else {
		return False;
	}
	return True;
}

static void print_usage(void)
{
	VG_(printf)(
"    --vgpt-out=PREFIX         write PREFIX.TID.pt, PREFIX.sb [vgpt]\n"
"    --vgpt-truth=yes|no       also write PREFIX.TID.truth, the executed\n"
"                              superblocks (tests) [no]\n"
"    --vgpt-ring=SIZE          keep only the last SIZE bytes of trace per\n"
"                              thread, written when it ends [off]\n"
"    --vgpt-psb=BYTES          trace bytes between PSB+ [4k]\n"
"    --vgpt-filter=FUNC[@OBJ][,...]  trace only inside these functions\n"
"    --vgpt-drain-thread=yes|no  make packets on another CPU while the\n"
"                              program runs (if there is one) [yes]\n");
}

static void print_debug_usage(void)
{
	VG_(printf)(
"    --vgpt-continue=TIME      (set by vgpt for an execve'd image)\n");
}

static void post_clo_init(void)
{
	/* Straight-line superblocks: the exit log relies on it. */
	VG_(clo_vex_control).guest_chase = False;
	VG_(clo_vex_control).iropt_unroll_thresh = 0;

	/* (Here, after all the options, VG_(fmsg_bad_option)() only
	 * prints: the run went on, and a ring shorter than a PSB period
	 * kept nothing.) */
	if (vgpt_clo_ring && vgpt_clo_ring < 2 * vgpt_clo_psb) {
		VG_(fmsg)("--vgpt-ring=%llu: at least 2 PSB periods "
			  "(--vgpt-psb=%llu), so that the bytes kept hold a "
			  "PSB to decode from\n", vgpt_clo_ring, vgpt_clo_psb);
		VG_(exit)(1);
	}
	/* Files are opened for each write: the program may chdir. */
	if (vgpt_clo_out[0] != '/')
		vgpt_clo_out = vgpt_path("%s/%s", VG_(get_startup_wd)(),
					 vgpt_clo_out);
	vgpt_icount = clo_continue;
	vgpt_threads = VG_(calloc)("vgpt.threads", VG_N_THREADS,
				   sizeof(*vgpt_threads));
	vgpt_instr_init();
	vgpt_dt_start();
	vgpt_sb_open(vgpt_continued);
	vgpt_sb_line("comm %llu %d %d %s", vgpt_icount, VG_(getpid)(),
		     VG_(gettid)(), VG_(args_the_exename));
}

static void fini(Int exitcode)
{
	ULong insns;

	vgpt_drain(0);
	for (ThreadId i = 0; i < VG_N_THREADS; i++)
		end_thread(i);
	vgpt_sb_flush();
	if (vgpt_filtering)
		vgpt_filter_report();
	insns = vgpt_icount - clo_continue;
	if (VG_(clo_verbosity) > 0) {
		VG_(umsg)("vgpt: %llu threads, %llu instructions, %llu bytes "
			  "of trace, %llu.%03llu bits/insn, exit %d\n",
			  vgpt_stat_threads, insns, vgpt_stat_bytes,
			  insns ? vgpt_stat_bytes * 8 / insns : 0,
			  insns ? vgpt_stat_bytes * 8000 / insns % 1000 : 0,
			  exitcode);
		if (vgpt_clo_ring)
			VG_(umsg)("vgpt: --vgpt-ring kept the last %llu of "
				  "%llu bytes made\n", vgpt_stat_bytes,
				  vgpt_stat_made);
		if (vgpt_stat_handed)
			VG_(umsg)("vgpt: %llu logs drained on another CPU "
				  "(%llu times the program waited for one)\n",
				  vgpt_stat_handed, vgpt_stat_full_waits);
		if (vgpt_stat_windows[0] + vgpt_stat_windows[1])
			VG_(umsg)("vgpt: drain thread used for %llu of %llu "
				  "windows (cost, ticks per KiB of log: "
				  "%llu in place, %llu on the thread)\n",
				  vgpt_stat_windows[1],
				  vgpt_stat_windows[0] + vgpt_stat_windows[1],
				  vgpt_stat_rate[0], vgpt_stat_rate[1]);
		if (vgpt_stat_lost)
			VG_(umsg)("vgpt: %llu bytes LOST (write errors)\n",
				  vgpt_stat_lost);
		else
			VG_(umsg)("vgpt: nothing lost\n");
	}
}

static void pre_clo_init(void)
{
	VG_(details_name)("vgpt");
	VG_(details_version)(NULL);
	VG_(details_description)("Intel PT trace writer (hwt)");
	VG_(details_copyright_author)("Copyright (C) 2026, the hwt authors.");
	VG_(details_bug_reports_to)("the hwt authors");
	VG_(details_avg_translation_sizeB)(300);

	VG_(basic_tool_funcs)(post_clo_init, vgpt_instrument, fini);
	VG_(needs_command_line_options)(process_cmd_line_option, print_usage,
					print_debug_usage);
	VG_(needs_syscall_wrapper)(pre_syscall, post_syscall);
	VG_(needs_superblock_discards)(vgpt_discard);
	VG_(track_start_client_code)(start_client_code);
	VG_(track_pre_thread_ll_exit)(end_thread);
	VG_(track_pre_deliver_signal)(pre_deliver_signal);
	VG_(track_new_mem_mmap)(new_mem_mmap);
	VG_(track_die_mem_munmap)(vgpt_unmapped);
	VG_(track_copy_mem_remap)(copy_mem_remap);
	VG_(track_change_mem_mprotect)(change_mem_mprotect);
	VG_(atfork)(NULL, NULL, atfork_child);
}

VG_DETERMINE_INTERFACE_VERSION(pre_clo_init)

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The drain thread: full exit logs turned into packets on another CPU
 * while the program runs on.
 *
 * Valgrind runs one client thread at a time, so a second CPU idles, and
 * the drain (vgpt_trace.c) is a third of the recording's time on programs
 * with many indirect branches. When a log fills in translated code
 * (log_full), it is handed to this thread, and the program goes on
 * writing the next of NLOGS logs. Everything else that drains (syscalls,
 * signals, thread switches, discarded translations, new code, the end)
 * first waits until this thread is idle, then drains as before. So the
 * encoder state (struct vgpt_thread, vgpt_icount, the files) is this
 * thread's while it has work and the rest of vgpt's otherwise, and
 * packets go out in the order of the records.
 *
 * The thread is a bare clone (Valgrind has no threads for tools) with its
 * own stack, all signals blocked (the kernel delivers none to it), and
 * its own descriptor table, every client descriptor closed in it before
 * the client runs on: a client's dup2 cannot land on a trace file being
 * written, and nothing the thread closes later can drop a client's
 * record locks. Of Valgrind it calls only syscall wrappers and
 * VG_(memset)/VG_(memcpy) (and VG_(umsg) on a write error). While the
 * logs go to it, it spins for the next one for a while (wait_change())
 * and then sleeps on a futex, woken for DT_BATCH logs at a time (or when
 * the program waits for it), so wakes are few: each is a syscall on the
 * program's time, and on this project's VM (nested virtualisation) a
 * costly one. The program spins, then sleeps, too when every log is
 * taken.
 *
 * Whether it pays depends on the machine: the logs move from one CPU's
 * cache to the other's (the program claims each free log before it
 * writes it, claim()), and the thread's wakes are interrupts to the
 * program's CPU. On the VMs this project runs on, the same recording of
 * sqlite3 took 2.3 s with the thread and 3.0 s without on one host; on
 * another 2.9-3.4 s with it and 3.6 s without (6-7 s with it before the
 * claim). So with --vgpt-drain-thread=auto (the default) the program
 * measures what its log costs it, in time stamp counter ticks (the drain
 * included when it drains in place, the waits for the thread when not;
 * the time in syscalls left out), over windows of 8 MiB of log (fewer
 * where the tests ask, --vgpt-drain-window: they check that switching
 * loses nothing), and uses the cheaper way: the first windows alternate,
 * then a window now and then tries the other way again: after PROBE_MIN
 * windows, twice as many each time the other way stays dearer, up to
 * PROBE_MAX (a probe that loses costs its window up to twice: about 1%
 * of the time). The host's noise is kept out of the rates (vgpt_dt_choose):
 * a lone window at over twice its way's rate is dropped, later windows
 * count a quarter, and the way in use is left only when it costs an
 * eighth more than the other.
 *
 * Used with more than one CPU, --vgpt-drain-thread=auto or yes, and
 * neither --vgpt-truth nor --vgpt-filter (their drain is drain_slow's). A
 * forked child starts its own; execve ends it (after a drain).
 */
#include "vgpt.h"

#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcsignal.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_vki.h"
#include "pub_tool_vkiscnums.h"

/* Not in the tool headers (see vgpt_out.c). */
extern SysRes VG_(do_syscall)(UWord sysno, RegWord a1, RegWord a2,
			      RegWord a3, RegWord a4, RegWord a5, RegWord a6,
			      RegWord a7, RegWord a8);
/* The client's descriptors are those below it (Valgrind's own above). */
extern Int VG_(fd_soft_limit);

Int vgpt_clo_drain_thread = DT_AUTO;
ULong vgpt_clo_drain_window = 8 << 20;
ULong vgpt_stat_handed;
ULong vgpt_stat_full_waits;
ULong vgpt_stat_windows[2];
ULong vgpt_stat_rate[2];

enum {
	DT_STACK = 256 << 10,
	DT_SPIN_TICKS = 1 << 20, /* spin this long before sleeping, */
	DT_SPIN_IDLE = 1 << 13,	/* ... the thread while logs are drained
				 * in place (a few microseconds) */
	DT_BATCH = NLOGS / 2,	/* logs waiting when the thread is woken */
	FUTEX_WAIT_PRIVATE = 128,
	FUTEX_WAKE_PRIVATE = 129,
	CLOSE_RANGE_NR = 436,
	PROBE_FIRST = 4,	/* windows that alternate at the start */
	PROBE_MIN = 8,		/* then the other way after this many, */
	PROBE_MAX = 128,	/* doubling up to this many */
};

/* A log handed over. */
struct job {
	struct vgpt_thread *t;
	UChar *log;		/* vgpt_logs[@k] */
	const UChar *end;
	Addr ip;		/* where the thread is, its flow goes on */
	UInt k;
};

static struct job jobs[NLOGS];	/* ring: job k is jobs[k % NLOGS] */
static UInt tail;		/* jobs handed over (the program's) */
static UInt head;		/* jobs done (the drain thread's) */
static UInt busy[NLOGS];	/* the log is with the drain thread */
static Int dt_sleeps;		/* the drain thread waits on @tail */
static Int prog_waits;		/* the program waits on @head */
static UInt ready;		/* the drain thread closed what it must */
static Bool running;		/* there is a drain thread in this process */
static Bool use;		/* full logs go to it (else drained in place) */

/* The measurement (DT_AUTO; see above). */
static struct {
	ULong t0;		/* ticks when the window began (0: not yet) */
	ULong bytes;		/* log bytes in it */
	ULong excluded;		/* ticks in syscalls in it */
	ULong sys;		/* ticks when the syscall under way began */
	ULong rate[2];		/* ticks per KiB [use], smoothed (0: none) */
	UInt windows;		/* windows done */
	UInt stay;		/* windows since the last probe */
	UInt every;		/* windows between probes */
	Bool probing;		/* the window under way is a probe */
	Bool last;		/* the way of the last window */
	Bool spike;		/* it cost over twice its rate */
} ch;
static UChar *stack;

/* Start @fn on @top in a new thread with @flags (clone); it exits when
 * @fn returns. Returns the thread's id or -errno. */
Long vgpt_dt_clone(ULong flags, void *top, void (*fn)(void));
__asm__(
	".text\n"
	".globl vgpt_dt_clone\n"
	".type vgpt_dt_clone, @function\n"
	"vgpt_dt_clone:\n"
	"	subq $16, %rsi\n"
	"	movq %rdx, (%rsi)\n"
	"	xorl %edx, %edx\n"
	"	xorl %r10d, %r10d\n"
	"	xorl %r8d, %r8d\n"
	"	movl $" VG_STRINGIFY(__NR_clone) ", %eax\n"
	"	syscall\n"
	"	testq %rax, %rax\n"
	"	jz 1f\n"
	"	ret\n"
	"1:	xorl %ebp, %ebp\n"
	"	movq (%rsp), %rax\n"
	"	call *%rax\n"
	"	movl $" VG_STRINGIFY(__NR_exit) ", %eax\n"
	"	xorl %edi, %edi\n"
	"	syscall\n"
	"	hlt\n"
	".size vgpt_dt_clone, .-vgpt_dt_clone\n"
	".previous\n");

static void futex(UInt *word, Int op, UInt val)
{
	VG_(do_syscall)(__NR_futex, (RegWord)word, (RegWord)op, val, 0, 0, 0,
			0, 0);
}

static inline void pause_cpu(void)
{
	__asm__ __volatile__("pause" ::: "memory");
}

static inline ULong ticks(void)
{
	UInt lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return (ULong)hi << 32 | lo;
}

/* Full logs go to the thread (@on) or are drained in place from now on
 * (the running thread's log is empty). The logs still with the thread
 * are drained first, so that the next window, in place, is not charged
 * for them. */
static void set_use(Bool on)
{
	if (!on)
		vgpt_dt_wait_idle();
	use = on;
	vgpt_log_bytes = on ? LOG_BYTES_DT : LOG_BYTES;
	if (vgpt_cur)
		vgpt_log_reset(vgpt_cur->tid);
}

/*
 * Wait until *@word != @seen, spinning for up to @spin TSC ticks, then
 * sleeping on the futex with *@flag set (the other side wakes whoever set
 * it, after changing *@word: both sequentially consistent, so no wake is
 * lost).
 *
 * A wake is a futex syscall on the waker's time, and on this project's
 * AMD host under nested virtualisation it took the program 31-43 us, a
 * wake per three logs: 50-150 ms of a 3 s sqlite3 recording. So the
 * drain thread, while the logs go to it, spins for about as long as the
 * program takes to fill a log or two (DT_SPIN_TICKS, 1 Mi ticks: 0.3-0.5
 * ms at 2-3 GHz) before it sleeps: sqlite3 2.97-3.04 s -> 2.84-2.92 s
 * there, for about 1 s more CPU time on the CPU it has to itself.
 */
static void wait_change(UInt *word, UInt seen, Int *flag, ULong spin)
{
	ULong t0 = ticks();

	for (UInt i = 0;; i++) {
		if (__atomic_load_n(word, __ATOMIC_ACQUIRE) != seen)
			return;
		pause_cpu();
		if (!(i & 63) && ticks() - t0 > spin)
			break;
	}
	while (__atomic_load_n(word, __ATOMIC_ACQUIRE) == seen) {
		__atomic_store_n(flag, 1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(word, __ATOMIC_SEQ_CST) == seen)
			futex(word, FUTEX_WAIT_PRIVATE, seen);
		__atomic_store_n(flag, 0, __ATOMIC_SEQ_CST);
	}
}

/* *@word changed: wake its waiter, if it sleeps. */
static void changed(UInt *word, UInt v, Int *flag)
{
	__atomic_store_n(word, v, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(flag, __ATOMIC_SEQ_CST))
		futex(word, FUTEX_WAKE_PRIVATE, 1);
}

/* Wake the drain thread if it sleeps (@tail is stored). */
static void kick(void)
{
	if (__atomic_load_n(&dt_sleeps, __ATOMIC_SEQ_CST))
		futex(&tail, FUTEX_WAKE_PRIVATE, 1);
}

static void dt_main(void)
{
	UInt h = 0;

	/* The copies of the client's descriptors (see above). */
	if (sr_isError(VG_(do_syscall)(CLOSE_RANGE_NR, 0,
				       (RegWord)VG_(fd_soft_limit) - 1, 0, 0,
				       0, 0, 0, 0)))
		for (Int fd = 0; fd < VG_(fd_soft_limit); fd++)
			VG_(close)(fd);
	__atomic_store_n(&ready, 1, __ATOMIC_SEQ_CST);
	futex(&ready, FUTEX_WAKE_PRIVATE, 1);

	for (;;) {
		struct job *j;

		wait_change(&tail, h, &dt_sleeps,
			    __atomic_load_n(&use, __ATOMIC_RELAXED) ?
			    DT_SPIN_TICKS : DT_SPIN_IDLE);
		j = &jobs[h % NLOGS];
		vgpt_drain_log(j->t, j->log, j->end, j->ip, j->ip);
		__atomic_store_n(&busy[j->k], 0, __ATOMIC_RELEASE);
		changed(&head, ++h, &prog_waits);
	}
}

/* More than one CPU for this process? */
static Bool cpus_to_spare(void)
{
	ULong mask[16];
	SysRes r;
	UInt n = 0;

	VG_(memset)(mask, 0, sizeof(mask));
	r = VG_(do_syscall)(__NR_sched_getaffinity, 0, sizeof(mask),
			    (RegWord)mask, 0, 0, 0, 0, 0);
	if (sr_isError(r))
		return False;
	for (UInt i = 0; i < 16; i++)
		n += (UInt)__builtin_popcountll(mask[i]);
	return n > 1;
}

/* A drain thread for this process, where it pays (see above). */
void vgpt_dt_start(void)
{
	vki_sigset_t all, old;
	Long tid;

	running = False;
	vgpt_log_bytes = LOG_BYTES;
	if (vgpt_clo_drain_thread == DT_NO || vgpt_clo_truth || vgpt_filtering ||
	    !cpus_to_spare())
		return;
	for (UInt i = 0; i < NLOGS; i++) {
		if (!vgpt_logs[i])
			vgpt_logs[i] = VG_(calloc)("vgpt.log", 1,
						   LOG_ROOM + LOG_PAD);
		busy[i] = 0;
	}
	if (!stack)
		stack = VG_(malloc)("vgpt.dt.stack", DT_STACK);
	head = tail = 0;
	ready = 0;
	dt_sleeps = prog_waits = 0;

	VG_(memset)(&all, 0xff, sizeof(all));
	VG_(sigprocmask)(VKI_SIG_SETMASK, &all, &old);
	VG_(memset)(&ch, 0, sizeof(ch));
	ch.every = PROBE_MIN;
	tid = vgpt_dt_clone(VKI_CLONE_VM | VKI_CLONE_FS | VKI_CLONE_SIGHAND |
			    VKI_CLONE_THREAD | VKI_CLONE_SYSVSEM,
			    stack + DT_STACK, dt_main);
	VG_(sigprocmask)(VKI_SIG_SETMASK, &old, NULL);
	if (tid < 0)
		return;		/* then the program drains */
	while (!__atomic_load_n(&ready, __ATOMIC_SEQ_CST))
		futex(&ready, FUTEX_WAIT_PRIVATE, 0);
	running = True;
	use = True;
	vgpt_log_bytes = LOG_BYTES_DT;
}

/* @bytes of log drained in place or handed over. */
static void count(Long bytes)
{
	if (bytes > 0)
		ch.bytes += (ULong)bytes;
}

/* The running thread enters a syscall (its log is drained or handed
 * over): the time until it is back is not the recording's. */
void vgpt_dt_syscall_begin(void)
{
	ch.sys = ticks();
}

void vgpt_dt_syscall_end(void)
{
	if (ch.sys)
		ch.excluded += ticks() - ch.sys;
	ch.sys = 0;
	vgpt_dt_choose();
}

/*
 * At the end of a window, choose (see above); only where the log of the
 * thread that ran last is empty (just drained or handed over: not so
 * after a syscall in which another thread ran), as a switch starts it
 * again.
 */
void vgpt_dt_choose(void)
{
	ULong now, cost, *r;
	Bool next, best, dearer;

	if (!running || vgpt_clo_drain_thread != DT_AUTO ||
	    ch.bytes < vgpt_clo_drain_window || !vgpt_cur ||
	    vgpt_log_used(vgpt_cur->tid) != 0)
		return;
	now = ticks();
	if (!ch.t0 || now - ch.t0 <= ch.excluded) {
		ch.t0 = now;		/* no measure: start again */
		ch.bytes = ch.excluded = 0;
		return;
	}
	cost = (now - ch.t0 - ch.excluded) / (ch.bytes >> 10);
	r = &ch.rate[use];
	/* A window that costs more than twice the rate of its way, alone,
	 * is the host's doing (seen here: 2.3x to 2.9x, once in 30 to 60
	 * windows), not the program's: it does not count. Two in a row
	 * do. */
	if (*r && ch.last == use && cost > 2 * *r && !ch.spike) {
		ch.spike = True;
		ch.t0 = now;
		ch.bytes = ch.excluded = 0;
		return;
	}
	ch.spike = False;
	/* The first window of a way replaces its rate, which is old (the
	 * program may be elsewhere now); the next ones count a quarter. */
	*r = !*r || ch.last != use ? cost : (3 * *r + cost) / 4;
	ch.last = use;
	vgpt_stat_windows[use]++;
	vgpt_stat_rate[use] = *r;
	ch.windows++;
	best = ch.rate[1] < ch.rate[0];
	/* Rates within an eighth of each other are the same to the noise. */
	dearer = ch.rate[use] > ch.rate[!use] + ch.rate[!use] / 8;
	if (ch.windows < PROBE_FIRST || !ch.rate[!use]) {
		next = !use;
	} else if (ch.probing) {
		/* Back to the way that was dearer: probe sooner. */
		next = best;
		ch.probing = False;
		ch.every = next == use ? PROBE_MIN :
			   ch.every * 2 > PROBE_MAX ? PROBE_MAX : ch.every * 2;
	} else if (!dearer) {
		next = use;
		if (++ch.stay >= ch.every) {
			next = !use;	/* the other way again, for a window */
			ch.probing = True;
			ch.stay = 0;
		}
	} else {
		/* The way in use got dearer: where the other stays dearer,
		 * this one is probed soon. */
		next = !use;
		ch.every = PROBE_MIN;
		ch.stay = 0;
	}
	if (next != use)
		set_use(next);
	ch.t0 = ticks();
	ch.bytes = ch.excluded = 0;
}

/*
 * Make @n bytes at @p (a multiple of 8) this CPU's before translated code
 * writes them: the drain thread read them last, so every cache line of
 * the log is elsewhere, and translated code asks for them one store at a
 * time as it goes, each a wait of up to a cross-CPU round trip (on the
 * AMD host under nested virtualisation this project runs on, 450-540 ns)
 * that fills the store buffer. A string store asks for them all at once.
 * sqlite3 with the thread: 6-7 s -> 2.9-3.4 s here (in place: 3.6 s).
 * Not VG_(memset), Valgrind's loop of word stores: slower in each of four
 * interleaved pairs (2.91 s against 3.16 s in the quietest).
 */
static void claim(UChar *p, ULong n)
{
	ULong words = n / 8;

	__asm__ __volatile__("rep stosq"
			     : "+D"(p), "+c"(words)
			     : "a"(0ULL)
			     : "memory");
}

/*
 * The log of @t is full: hand it to the drain thread (@ip: where the
 * thread is, the superblock about to run) and go on in a free one.
 * False if there is no drain thread for it: drain here.
 */
Bool vgpt_dt_hand_over(struct vgpt_thread *t, Addr ip)
{
	const UChar *end;
	Int k;

	if (!running || !use || !t || t->tbuf || vgpt_filtering)
		return False;
	end = vgpt_log_get(t->tid);
	k = vgpt_log_index(end);
	tl_assert(k >= 0 && !busy[k]);
	count(end - vgpt_logs[k]);
	busy[k] = 1;
	jobs[tail % NLOGS] = (struct job){ .t = t, .log = vgpt_logs[k],
					   .end = end, .ip = ip, .k = (UInt)k };
	/* Woken for a few logs at a time: a wake is a syscall on the
	 * program's time (and, where the two threads share a CPU after
	 * all, a switch). */
	__atomic_store_n(&tail, tail + 1, __ATOMIC_SEQ_CST);
	if (tail - __atomic_load_n(&head, __ATOMIC_ACQUIRE) >= DT_BATCH)
		kick();
	vgpt_stat_handed++;

	/* A free log: with NLOGS logs and a job per busy one, one is free
	 * once the oldest job is done. */
	for (;;) {
		UInt h = __atomic_load_n(&head, __ATOMIC_ACQUIRE);

		for (k = 0; k < NLOGS; k++)
			if (!__atomic_load_n(&busy[k], __ATOMIC_ACQUIRE))
				break;
		if (k < NLOGS)
			break;
		vgpt_stat_full_waits++;
		kick();
		wait_change(&head, h, &prog_waits, DT_SPIN_TICKS);
	}
	vgpt_log = vgpt_logs[k];
	claim(vgpt_log, vgpt_log_bytes);
	vgpt_log_reset(t->tid);
	return True;
}

/* @bytes of the running thread's log were drained in place. */
void vgpt_dt_count_drained(Long bytes)
{
	count(bytes);
}

/* Everything handed over is drained (then the encoder state is ours). */
void vgpt_dt_wait_idle(void)
{
	UInt t = tail, h;

	if (!running)
		return;
	if (__atomic_load_n(&head, __ATOMIC_ACQUIRE) != t)
		kick();
	while ((h = __atomic_load_n(&head, __ATOMIC_ACQUIRE)) != t)
		wait_change(&head, h, &prog_waits, DT_SPIN_TICKS);
}

/* In a forked child only the forking thread lives on (and the drain was
 * idle: pre_syscall): a drain thread of its own. */
void vgpt_dt_forked(void)
{
	if (running)
		vgpt_dt_start();
}

# SPDX-License-Identifier: BSD-2-Clause
# The portable trace source (src/record/vgpt, a Valgrind tool) against its
# own ground truth: each program runs under vgpt with --vgpt-truth=yes; for
# every thread, the PT stream is decoded by `hwt flow` with the images the
# sideband names, and must be exactly the truth:
#
#   the truth lists, per executed superblock, its start address S and the
#   number N >= 1 of instructions that retired in it (a rep instruction
#   counts once, when it completes). Cutting the decoded instruction
#   sequence into consecutive pieces of N instructions, piece k must start
#   at S(k), and the pieces must use up the decoded sequence exactly.
#
# Also: `hwt ptdump` finds no error in any stream, -j2 decodes what -j1
# decodes, and two mutations (a truth line dropped, one TNT bit flipped in
# the trace) are caught, so the comparison can fail.
#
#   bash tests/cli/vgpt.sh path/to/hwt BUILD_DIR
set -u

if [ $# -ne 2 ]; then
	echo "usage: $0 HWT BUILD_DIR" >&2
	exit 2
fi
hwt=$1
vglib=$2/vgpt
if ! command -v valgrind >/dev/null; then
	echo "vgpt.sh: valgrind is not installed; skipped" >&2
	exit 0
fi
if [ ! -x "$vglib/vgpt-amd64-linux" ]; then
	echo "vgpt.sh: vgpt not built (no valgrind.pc, or a sanitizer build); skipped" >&2
	exit 0
fi
if ! command -v gcc >/dev/null; then
	echo "vgpt.sh: gcc is not installed; skipped" >&2
	exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hwt-vgpt.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failures=0
checks=0

fail() {
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}

# A program with loops, direct, indirect and recursive calls, returns
# deeper than the return stack, longjmp, libc calling back (qsort), rep
# string instructions (including a zero count), generated code in
# anonymous memory, a synchronous and asynchronous signals, a fork and a
# second thread.
cat > "$tmp/prog.c" <<'EOF'
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile int hits, ticks;
static jmp_buf env;

static int add(int a, int b) { return a + b; }
static int mul(int a, int b) { return a * b; }
static int (*const ops[])(int, int) = { add, mul };

static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
static int cmp(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }
static void on_usr1(int sig) { (void)sig; hits++; }
static void on_alrm(int sig) { (void)sig; ticks++; }
static void deep(int n) { if (n > 0) deep(n - 1); else longjmp(env, 1); hits++; }

static void *worker(void *arg)
{
	long s = 0;

	(void)arg;
	for (long i = 0; i < 1000; i++)
		s += ops[i & 1]((int)i, 3);
	return (void *)s;
}

int main(void)
{
	static const unsigned char code[] = { 0xb8, 42, 0, 0, 0, 0xc3 };
	int v[64], acc = 0;
	char a[300], b[300];
	unsigned char *m;
	pthread_t th;
	void *ret, *d, *s;
	long n;

	for (int i = 0; i < 64; i++)
		v[i] = (i * 7919) % 64;
	qsort(v, 64, sizeof(v[0]), cmp);
	for (int i = 0; i < 200; i++)
		acc = ops[i % 2](acc, i) & 0xffff;
	acc += fib(15);

	d = a; n = sizeof(a);
	__asm__ volatile("rep stosb" : "+D"(d), "+c"(n) : "a"(1) : "memory");
	d = b; s = a; n = sizeof(a);
	__asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
	d = b; s = a; n = sizeof(a);
	__asm__ volatile("repe cmpsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory", "cc");
	n = 0;
	__asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");

	m = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return 1;
	memcpy(m, code, sizeof(code));
	acc += ((int (*)(void))m)();

	signal(SIGUSR1, on_usr1);
	raise(SIGUSR1);
	if (!setjmp(env))
		deep(70);

	signal(SIGALRM, on_alrm);
	setitimer(ITIMER_REAL, &(struct itimerval){ { 0, 2000 }, { 0, 2000 } }, NULL);
	for (volatile unsigned long spin = 0; ticks < 3; spin++)
		;
	setitimer(ITIMER_REAL, &(struct itimerval){ { 0, 0 }, { 0, 0 } }, NULL);

	if (fork() == 0)
		_exit(fib(10) == 55 ? 0 : 1);
	wait(NULL);
	pthread_create(&th, NULL, worker, NULL);
	pthread_join(th, &ret);
	printf("%d %d %d %ld\n", acc, v[63], hits, (long)ret);
	return 0;
}
EOF
if ! gcc -O1 -g -pthread -o "$tmp/prog" "$tmp/prog.c" 2> "$tmp/cc.err"; then
	cat "$tmp/cc.err" >&2
	echo "FAIL: cannot compile the test program" >&2
	exit 1
fi

# Decoded instructions against a truth file (the method is described there).
cmp_awk=$(cd "$(dirname "$0")/../data" && pwd)/truth_cmp.awk

# --raw options for every code mapping of the sideband: "mmap TIME PID
# START LEN PGOFF PROT PATH".
images() {
	local kind time pid start len pgoff prot path
	raw=()
	while read -r kind time pid start len pgoff prot path; do
		[ "$kind" = mmap ] || continue
		raw+=(--raw "$path:0x$pgoff-0x$(printf %x $((16#$pgoff + 16#$len))):0x$start")
	done < "$1"
}

# vgpt_run NAME CMD...: record, then check every thread's stream.
vgpt_run() {
	local name=$1 out pt tid nthreads=0
	shift
	out=$tmp/$name
	if ! VALGRIND_LIB=$vglib valgrind -q --tool=vgpt --vgpt-out="$out" \
	     --vgpt-truth=yes "$@" > "$out.stdout" 2> "$out.stderr"; then
		fail "$name: valgrind --tool=vgpt failed"
		cat "$out.stderr" >&2
		return
	fi
	if [ -s "$out.stderr" ]; then
		fail "$name: vgpt printed messages"
		cat "$out.stderr" >&2
	fi
	images "$out.sb"
	for pt in "$out".*.pt; do
		tid=${pt#"$out".}
		tid=${tid%.pt}
		nthreads=$((nthreads + 1))
		checks=$((checks + 1))
		if ! "$hwt" ptdump "$pt" > "$out.dump" 2>&1 ||
		   grep -qi error "$out.dump"; then
			fail "$name/$tid: hwt ptdump reports errors"
			grep -i error "$out.dump" | head -3 >&2
		fi
		checks=$((checks + 1))
		if ! "$hwt" flow --no-sym "${raw[@]}" "$pt" > "$out.$tid.flow" 2>&1; then
			fail "$name/$tid: hwt flow failed"
		elif grep -q '^\[error' "$out.$tid.flow"; then
			fail "$name/$tid: decode errors"
			grep '^\[error' "$out.$tid.flow" | head -3 >&2
		elif ! awk -f "$cmp_awk" "$out.$tid.truth" "$out.$tid.flow" \
		     > "$out.$tid.cmp"; then
			fail "$name/$tid: decode differs from the truth: $(cat "$out.$tid.cmp")"
		else
			echo "$name/$tid: $(cat "$out.$tid.cmp")"
		fi
	done
	[ "$nthreads" -gt 0 ] || fail "$name: no trace written"
	eval "threads_$name=$nthreads"
}

vgpt_run true /bin/true
vgpt_run prog "$tmp/prog"
vgpt_run ls /bin/ls -l /

# The program's own view: two threads and a forked child traced, the
# generated code saved and mapped from the sideband.
checks=$((checks + 1))
[ "${threads_prog:-0}" -eq 3 ] || fail "prog: ${threads_prog:-0} streams, expected 3"
checks=$((checks + 1))
grep -q '^fork ' "$tmp/prog.sb" && grep -q '^mmap .* rwx .*\.bin$' "$tmp/prog.sb" ||
	fail "prog: sideband lacks the fork or the anonymous code"
checks=$((checks + 1))
[ "$(cat "$tmp/prog.stdout")" = "$("$tmp/prog")" ] ||
	fail "prog: output under vgpt differs from native"

# Decoding from every PSB (-j2 cuts there) gives the same flow: vgpt never
# compresses a return across a PSB.
main=$(head -n 1 "$tmp/prog.sb" | cut -d' ' -f3)
images "$tmp/prog.sb"
checks=$((checks + 1))
"$hwt" flow --no-sym -j 2 "${raw[@]}" "$tmp/prog.$main.pt" > "$tmp/j2.flow" 2>&1
cmp -s "$tmp/j2.flow" "$tmp/prog.$main.flow" || fail "prog: -j2 decode differs"

# The comparison can fail: a superblock missing from the truth ...
checks=$((checks + 1))
sed '100d' "$tmp/prog.$main.truth" > "$tmp/bad.truth"
if awk -f "$cmp_awk" "$tmp/bad.truth" "$tmp/prog.$main.flow" > /dev/null; then
	fail "a truth with a superblock missing compares equal"
fi
# ... and one conditional branch turned around in the trace.
checks=$((checks + 1))
off=$("$hwt" ptdump "$tmp/prog.$main.pt" | awk '$2 == "tnt.8" { n++ } $2 == "tnt.8" && n == 200 { print $1; exit }')
cp "$tmp/prog.$main.pt" "$tmp/bad.pt"
off=$((16#$off))
byte=$(od -An -tu1 -j "$off" -N1 "$tmp/bad.pt" | tr -d ' ')
printf "\\$(printf %03o $((byte ^ 2)))" |
	dd of="$tmp/bad.pt" bs=1 seek="$off" conv=notrunc status=none
"$hwt" flow --no-sym "${raw[@]}" "$tmp/bad.pt" > "$tmp/bad.flow" 2>&1
if awk -f "$cmp_awk" "$tmp/prog.$main.truth" "$tmp/bad.flow" > /dev/null; then
	fail "a trace with a TNT bit flipped compares equal"
fi

echo "vgpt.sh: $checks checks, $failures failures"
[ "$failures" -eq 0 ]

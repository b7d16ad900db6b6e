# SPDX-License-Identifier: BSD-2-Clause
# hwt record with the portable source, through perf.data:
#
#  (1) exactness: for /bin/ls, gzip, a multithreaded program, one taking
#      signals, one that dlopens a library, one that runs code it wrote
#      (saved beside the perf.data) and one that forks and execs,
#      `hwt record --vgpt-truth` then `hwt flow` on the perf.data must be,
#      thread by thread, the ground truth vgpt wrote beside it
#      (tests/cli/vgpt/cmp.awk: superblock by superblock), with no
#      decode error, one stream per truth file;
#  (2) independence: `perf script --itrace=b` (perf's own decoder, Debian
#      linux-perf) lists, thread by thread, exactly the taken branches
#      `hwt flow --branches` lists, and reports no trace error: the file
#      and its Intel PT are genuine, not merely self-consistent.
#
# The program that takes signals is where decoders differed: perf pops its
# return stack at every return, libipt and hwt only at compressed ones
# (vgpt empties its stack after a return it does not compress, so both
# read alike), and a branch taken just before an interrupt goes to where
# the interrupt came (hwt lists it, as perf does).
#
#   bash tests/cli/record.sh path/to/hwt BUILD_DIR
. "$(dirname "$0")/lib.bash" record "$@"
wants gcc gzip
wants_vgpt
vgpt_awk=$src/tests/cli/vgpt
cmp_awk=(-f "$vgpt_awk/hex.awk" -f "$vgpt_awk/cmp.awk")
have_perf=1
command -v perf >/dev/null || have_perf=0
branches=0

# ---- the programs --------------------------------------------------------

cat >"$tmp/mt.c" <<'EOF'
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long total;

static long work(long n) { return n < 2 ? n : work(n - 1) + work(n - 2); }

static void *run(void *arg)
{
	long v = work(14 + (long)arg);

	pthread_mutex_lock(&lock);
	total += v;
	pthread_mutex_unlock(&lock);
	return NULL;
}

int main(void)
{
	pthread_t t[4];

	for (long i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, run, (void *)i);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	printf("%ld\n", total);
	return 0;
}
EOF
cat >"$tmp/sig.c" <<'EOF'
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static volatile int usr1, alrm, info;

static void on_usr1(int sig) { (void)sig; usr1++; }
static void on_alrm(int sig) { (void)sig; alrm++; }
static void on_info(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (si->si_signo == sig)
		info++;
}

int main(void)
{
	struct sigaction sa;

	signal(SIGUSR1, on_usr1);
	for (int i = 0; i < 3; i++)
		raise(SIGUSR1);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_info;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGUSR2, &sa, NULL);
	kill(getpid(), SIGUSR2);
	signal(SIGALRM, on_alrm);
	setitimer(ITIMER_REAL, &(struct itimerval){ { 0, 2000 }, { 0, 2000 } }, NULL);
	for (volatile unsigned long spin = 0; alrm < 3; spin++)
		;
	setitimer(ITIMER_REAL, &(struct itimerval){ { 0, 0 }, { 0, 0 } }, NULL);
	printf("%d %d %d\n", usr1, info, alrm >= 3);
	return 0;
}
EOF
cat >"$tmp/plug.c" <<'EOF'
int plug_sum(const int *v, int n)
{
	int s = 0;

	for (int i = 0; i < n; i++)
		s += v[i] & 1 ? v[i] : -v[i];
	return s;
}
EOF
cat >"$tmp/dl.c" <<'EOF'
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int v[100], (*sum)(const int *, int);
	void *h;

	(void)argc;
	for (int i = 0; i < 100; i++)
		v[i] = i * 7;
	h = dlopen(argv[1], RTLD_NOW);
	if (!h)
		return 1;
	sum = (int (*)(const int *, int))dlsym(h, "plug_sum");
	printf("%d\n", sum ? sum(v, 100) : -1);
	dlclose(h);
	return 0;
}
EOF
cat >"$tmp/fe.c" <<'EOF'
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

int main(void)
{
	char *args[] = { "true", NULL };
	pid_t pid;
	int st;

	pid = fork();
	if (pid == 0) {
		/* A failed exec goes on; the second one's image is
		 * traced on in the same stream. */
		execv("/nonexistent/hwt-test", args);
		fib(12);
		execv("/bin/true", args);
		_exit(127);
	}
	waitpid(pid, &st, 0);
	printf("%d %d\n", fib(15), WEXITSTATUS(st));
	return 0;
}
EOF
cat >"$tmp/jit.c" <<'EOF'
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

int main(void)
{
	/* add edi, esi; mov eax, edi; ret */
	static const unsigned char code[] = { 0x01, 0xf7, 0x89, 0xf8, 0xc3 };
	unsigned char *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int s = 0;

	if (m == MAP_FAILED)
		return 1;
	memcpy(m, code, sizeof(code));
	for (int i = 0; i < 100; i++)
		s = ((int (*)(int, int))m)(s, i);
	printf("%d\n", s);
	return 0;
}
EOF
for p in mt sig dl fe jit; do
	extra=
	[ $p = mt ] && extra=-pthread
	[ $p = dl ] && extra=-ldl
	if ! gcc -O1 -g $extra -o "$tmp/$p" "$tmp/$p.c" 2>"$tmp/cc.err"; then
		cat "$tmp/cc.err" >&2
		echo "FAIL: cannot compile $p.c" >&2
		exit 1
	fi
done
gcc -O1 -g -shared -fPIC -o "$tmp/libplug.so" "$tmp/plug.c" || exit 1
(seq 1 5000; printf 'hwt record test data\n%.0s' $(seq 1 200)) >"$tmp/gz.in"

# ---- helpers --------------------------------------------------------------

# split FLOW PREFIX: one file per stream, PREFIX.TID, from "# stream idx
# I: pid P tid T ..." headers.
split_streams() {
	awk -v out="$2" '/^# stream idx/ { f = out "." $8; printf "" > f; next }
		f { print > f }' "$1"
}

# record NAME CMD...: record with the truth, check the exit status (0).
record() {
	local name=$1
	shift
	check
	if ! (cd "$tmp" && "$hwt" record -q --vgpt-truth -o "$name.data" \
	      -- "$@" >"$name.stdout" 2>"$name.stderr"); then
		fail "$name: hwt record exit $? ($*)"
		head -n 5 "$tmp/$name.stderr" >&2
		return 1
	fi
	if [ -s "$tmp/$name.stderr" ]; then
		fail "$name: hwt record printed messages"
		head -n 5 "$tmp/$name.stderr" >&2
	fi
}

# exact NAME: every stream of NAME.data against its truth.
exact() {
	local name=$1 t tid n=0 nt=0
	"$hwt" flow --no-sym "$tmp/$name.data" >"$tmp/$name.flow" 2>"$tmp/$name.flow.err" ||
		fail "$name: hwt flow exit $?"
	check
	if grep -q '^\[error' "$tmp/$name.flow"; then
		fail "$name: decode errors"
		grep '^\[error' "$tmp/$name.flow" | head -n 3 >&2
	fi
	split_streams "$tmp/$name.flow" "$tmp/$name.st"
	for t in "$tmp/$name.data".*.truth; do
		[ -e "$t" ] || continue
		nt=$((nt + 1))
		tid=${t%.truth}
		tid=${tid##*.}
		check
		if [ ! -e "$tmp/$name.st.$tid" ]; then
			fail "$name/$tid: a truth but no stream in the perf.data"
		elif ! awk "${cmp_awk[@]}" "$t" "$tmp/$name.st.$tid" >"$tmp/$name.cmp"; then
			fail "$name/$tid: perf.data decode differs from the truth: $(cat "$tmp/$name.cmp")"
		else
			n=$((n + 1))
			echo "$name/$tid: $(cat "$tmp/$name.cmp")"
		fi
	done
	check
	[ "$nt" -gt 0 ] || fail "$name: no truth file"
	[ "$(grep -c '^# stream idx' "$tmp/$name.flow")" -eq "$nt" ] ||
		fail "$name: $(grep -c '^# stream idx' "$tmp/$name.flow") streams, $nt truth files"
	eval "streams_$name=$n"
	# --stat folds blocks in the library, asking the sideband only
	# between folds: the same instructions, stream by stream.
	check
	"$hwt" flow --stat "$tmp/$name.data" 2>/dev/null |
		awk '/^# stream idx/ { s = $8 } /^insn:/ && s { print s, $2; s = "" }' \
		>"$tmp/$name.stat"
	for f in "$tmp/$name.st".*; do
		echo "${f##*.} $(grep -c '^[0-9a-f]' "$f")"
	done | sort >"$tmp/$name.count"
	sort "$tmp/$name.stat" | cmp -s - "$tmp/$name.count" ||
		fail "$name: flow --stat counts differ from the instructions decoded: $(tr '\n' ' ' <"$tmp/$name.stat") vs $(tr '\n' ' ' <"$tmp/$name.count")"
}

# with_perf NAME: perf script's branches, thread by thread.
with_perf() {
	local name=$1 tid n
	[ $have_perf -eq 1 ] || return 0
	check
	if ! perf script --itrace=be -F hw:tid,ip,addr -i "$tmp/$name.data" \
	     >"$tmp/$name.perf" 2>"$tmp/$name.perf.err" &&
	   ! perf script --force --itrace=be -F hw:tid,ip,addr \
	     -i "$tmp/$name.data" >"$tmp/$name.perf" 2>"$tmp/$name.perf.err"; then
		fail "$name: perf script exit $?: $(head -n 3 "$tmp/$name.perf.err")"
		return
	fi
	"$hwt" flow --branches "$tmp/$name.data" >"$tmp/$name.hbr" ||
		fail "$name: hwt flow --branches exit $?"
	split_streams "$tmp/$name.hbr" "$tmp/$name.hb"
	if grep -q 'instruction trace error' "$tmp/$name.perf"; then
		fail "$name: perf reports trace errors: $(grep -m1 'instruction trace error' "$tmp/$name.perf")"
	fi
	for f in "$tmp/$name.hb".*; do
		tid=${f##*.}
		# perf also lists the trace's starts and ends (from or to 0).
		awk -v t="$tid" '$1 == t && $3 == "=>" && $2 != "0" && $4 != "0" {
			print "0x" $2 " 0x" $4 }' "$tmp/$name.perf" >"$tmp/$name.pb.$tid"
		n=$(wc -l <"$tmp/$name.pb.$tid")
		check
		if [ "$n" -lt 10 ]; then
			fail "$name/$tid: perf lists only $n branches"
		elif ! cmp -s "$f" "$tmp/$name.pb.$tid"; then
			fail "$name/$tid: hwt flow --branches and perf script differ"
			diff "$f" "$tmp/$name.pb.$tid" | head -n 6 >&2
		else
			branches=$((branches + n))
		fi
	done
}

# ---- (1) and (2) ------------------------------------------------------------

record ls /bin/ls -l /usr/bin && { exact ls; with_perf ls; }
record gzip gzip -c gz.in && { exact gzip; with_perf gzip; }
cmp -s <(gzip -dc "$tmp/gzip.stdout") "$tmp/gz.in" ||
	fail "gzip: output under hwt record is not the input compressed"
record mt ./mt && { exact mt; with_perf mt; }
check
[ "${streams_mt:-0}" -eq 5 ] || fail "mt: ${streams_mt:-0} exact streams, expected 5"
record sig ./sig && { exact sig; with_perf sig; }
check
[ "$(cat "$tmp/sig.stdout")" = "3 1 1" ] || fail "sig: output '$(cat "$tmp/sig.stdout")'"
record dl ./dl ./libplug.so && { exact dl; with_perf dl; }
check
"$hwt" sideband "$tmp/dl.data" | grep -q 'MMAP2.*libplug.so' ||
	fail "dl: no MMAP2 of the dlopened library"
record jit ./jit && { exact jit; with_perf jit; }
check
"$hwt" sideband "$tmp/jit.data" | grep -q 'MMAP2 .*jit.data.code/vgpt\.[0-9]*\.[0-9a-f]*\.[0-9a-f]*\.bin' &&
	ls "$tmp"/jit.data.code/vgpt.*.bin >/dev/null 2>&1 ||
	fail "jit: the generated code is not saved in jit.data.code/ and mapped"
record fe ./fe && { exact fe; with_perf fe; }
check
[ "${streams_fe:-0}" -eq 2 ] || fail "fe: ${streams_fe:-0} exact streams, expected 2 (parent, child with the program it execs)"
check
"$hwt" sideband "$tmp/fe.data" >"$tmp/fe.sb"
grep -q 'PERF_RECORD_FORK' "$tmp/fe.sb" && grep -q 'PERF_RECORD_COMM.*exec.*true' "$tmp/fe.sb" ||
	fail "fe: no FORK or no COMM exec of /bin/true in the sideband"
check
if grep -q 'PERF_RECORD_COMM.*exec.*hwt-test' "$tmp/fe.sb"; then
	fail "fe: the failed exec became a COMM exec"
fi
# The exec'd program ran traced: the child's decode runs its code (the
# mapping of true after the COMM exec: true runs some 50 instructions of
# its own).
cat >"$tmp/inrange.awk" <<'EOF'
BEGIN { split(r, a, " "); lo = hex(a[1]); hi = lo + hex(a[2]) }
/^[0-9a-f]+$/ { v = hex($1); if (v >= lo && v < hi) n++ }
END { exit !(n >= 20) }
EOF
check
child=$(awk '/PERF_RECORD_FORK/ { split($3, a, "/"); print a[1]; exit }' "$tmp/fe.sb")
range=$(awk -v p="$child/" 'index($3, p) == 1 && $4 == "PERF_RECORD_MMAP2" &&
	$NF ~ /\/true$/ { sub(/^0x/, "", $5); sub(/^0x/, "", $6); print $5, $6; exit }' \
	"$tmp/fe.sb")
if [ -z "$range" ]; then
	fail "fe: no MMAP2 of true in the child $child"
elif ! awk -v r="$range" -f "$vgpt_awk/hex.awk" -f "$tmp/inrange.awk" \
	"$tmp/fe.st.$child"; then
	fail "fe: the child's decode does not run true's code ($range)"
fi

# The perf.data holds what perf writes: build ids, the HWT_EXIT feature,
# no saved code left behind when there was none.
check
"$hwt" info "$tmp/ls.data" >"$tmp/ls.info"
grep -q 'BUILD_ID' "$tmp/ls.info" && grep -q 'HWT_EXIT' "$tmp/ls.info" &&
	grep -q 'lost data    none' "$tmp/ls.info" ||
	fail "ls: hwt info lacks BUILD_ID, HWT_EXIT or says data was lost"
check
[ ! -e "$tmp/ls.data.code" ] || fail "ls: an empty ls.data.code was left"

# The comparison can fail: a truth with a superblock dropped.
check
t=$(ls "$tmp"/ls.data.*.truth | head -n 1)
tid=${t%.truth}
tid=${tid##*.}
sed '50d' "$t" >"$tmp/bad.truth"
if awk "${cmp_awk[@]}" "$tmp/bad.truth" "$tmp/ls.st.$tid" >/dev/null; then
	fail "a truth with a superblock missing compares equal"
fi

finish "$branches branches compared with perf script"

# SPDX-License-Identifier: BSD-2-Clause
# hwt last on the perf.data that perf record writes and hwt record does
# not (record_bad.sh and record_modes.sh test it on hwt record's files):
#
#  (1) a CPU's trace (perf record -a, a PER_CPU_MMAPS file): which thread
#      runs is the sideband's. The branches are those of the thread's own
#      trace; with a second process (other symbol names) or a second
#      thread taking turns on the CPU, each branch is named in the process
#      it ran in, under a line saying whose branches follow, and the end
#      names the thread that ran last. The branches are the last ones
#      hwt flow --branches lists.
#  (2) --time, and a stream read in pieces (perf.data's 64 MiB; here 4
#      and 64 KiB): each piece's decoder starts with the time (and CYC
#      calibration) the one before had at its PSB, so the branches' times
#      are those of the stream decoded whole.
#  (3) Batches: hwt last, hwt calls (--time too), hwt flow (instructions,
#      --blocks, --branches) take the blocks of a perf.data in batches that
#      end where the time may move or a note of lost data by offset comes
#      due (hwt_blk_next_batch_until()). On CYC traces with losses, hwt
#      calls --time, flow --branches and flow --time print what they print
#      with the blocks one at a time (HWT_ONE_BLOCK=1: lines, times,
#      notes), and hwt
#      last's branches are the last of flow --branches'.
#  (4) How the process ended (hwt's HWT_EXIT feature, mkptdata --exit):
#      a thread's trace names the signal and the faulting instruction and
#      puts it on top of the stack; a CPU's trace names the end of the
#      process the CPU ended in, not the other one's; of two CPUs'
#      streams ending in the killed process, the one that ends later took
#      the signal (not the one that starts later).
#  (5) Another machine's files: the program built with DWARF (yasm -g
#      dwarf2), stripped, its debug file apart, and gone from the path
#      the recording names. hwt last --symfs ROOT (the program at
#      ROOT/PATH, the debug file under ROOT/usr/lib/debug/.build-id) and
#      --debug-dir DIR (the stripped program where it ran) name the
#      functions and the source lines as the unstripped program at its
#      recorded path does; without them, neither. And --buildid-dir
#      (perf's ~/.debug layout) with the program gone, by ids that a name
#      made of 20 zero-padded bytes would miss (SHA-1's 20 ending in
#      zeros, md5's 16): the recording keeps each id's own length, which
#      perf shows as readelf does.
#
# The files are mkptdata's (tests/tools) from tests/data/perfdata_loop.asm
# and its trace, as tests/cli/perfdata_flow.sh makes them.
#
#   bash tests/cli/last.sh path/to/hwt BUILD_DIR
. "$(dirname "$0")/lib.bash" last "$@"
mkptdata=$build/mkptdata
built "$build/ptgen" "$mkptdata"
needs yasm ld nm objcopy awk strip readelf

. "$src/tests/data/perfdata_loop.bash"
perfdata_loop "$tmp" loop 20000 "$build" || {
	echo "FAIL: building the loop program and its trace" >&2
	exit 1
}
# The same trace with a CYC after each TNT and an MTC after every
# eighth: times between TSCs come from the CYC calibration.
awk '{ print } /^tnt/ { n++; print "cyc 40"
	if (n % 8 == 0) { ctc = (ctc + 1) % 256; print "mtc " ctc } }' \
	"$tmp/loop.ptdesc" >"$tmp/cyc.ptdesc"
"$build/ptgen" "$tmp/cyc.pt" <"$tmp/cyc.ptdesc" || {
	echo "FAIL: the CYC trace" >&2
	exit 1
}

# And with a CYC after every fourth TNT only (an MTC every 16th): the
# decoder, one packet ahead, often sees a time that is not the one it
# gives yet, where the packets would go on without a stop.
awk '{ print } /^tnt/ { n++; if (n % 4 == 0) print "cyc 40"
	if (n % 16 == 0) { ctc = (ctc + 1) % 256; print "mtc " ctc } }' \
	"$tmp/loop.ptdesc" >"$tmp/cyc4.ptdesc"
"$build/ptgen" "$tmp/cyc4.pt" <"$tmp/cyc4.ptdesc" || {
	echo "FAIL: the CYC trace (every fourth TNT)" >&2
	exit 1
}

# mk NAME TRACE OPTIONS...: $tmp/NAME.data.
mk() {
	local name=$1 pt=$2
	shift 2
	"$mkptdata" "$@" --pt "$tmp/$pt.pt" --elf "$tmp/loop" \
		"$tmp/$name.data" 2>"$tmp/mk.err" || {
		echo "FAIL: mkptdata $name" >&2
		cat "$tmp/mk.err" >&2
		exit 1
	}
}
mk thread loop
mk cpu loop --cpu 0
mk procs loop --cpu 0 --switch "4321:$tmp/loop.b:40"
mk threads loop --cpu 0 --thread 1235:40
mk cyc cyc
mk cycprocs cyc --cpu 0 --switch "4321:$tmp/loop.b:40"
mk kill loop --exit 1234:11:0x401042
mk procsexit loop --cpu 0 --switch "4321:$tmp/loop.b:40" \
	--exit 1234:0:3 --exit 4321:11:0x401042
mk procskill loop --cpu 0 --switch "4321:$tmp/loop.b:40" \
	--exit 4321:0:3 --exit 1234:11:0x401042
mk cycloss cyc --losses 13
mk cyclossthreads cyc --cpu 0 --thread 1235:33 --losses 25
mk cyc4loss cyc4 --losses 13
mk cyc4lossthreads cyc4 --cpu 0 --thread 1235:33 --losses 25

# last NAME FILE ARGS...: hwt last's output in $tmp/NAME; a crash, a
# hang or an exit code other than 0 is a failure.
last() {
	local name=$1 file=$2
	shift 2
	run "hwt last $* $file" "$hwt" last "$@" "$tmp/$file.data"
	[ "$rc" -eq 0 ] || fail "$desc: exit $rc: $(head -n 2 "$tmp/err")"
	cp "$tmp/out" "$tmp/$name"
}

# The branch lines, without the lines naming threads.
branches() {
	sed -n '/^last [0-9]* branches/,$p' "$1" | grep -v '^  -- thread '
}

# ---- (1) a CPU's trace -----------------------------------------------------

last thread thread -n 300
last cpu cpu -n 300
check
grep -q '^# cpu 0, thread 1234/1234 loop at the end: the trace ends' \
	"$tmp/cpu" || fail "a CPU's trace: header: $(head -n 1 "$tmp/cpu")"
check
[ "$(grep -c '^  -- thread 1234/1234 loop$' "$tmp/cpu")" -eq 1 ] ||
	fail "a CPU's trace, one thread: not one line naming it"
check
if grep -q 'trace lost' "$tmp/cpu"; then
	fail "a CPU's trace: trace lost (the code not found)"
	grep -m 3 'trace lost' "$tmp/cpu" >&2
elif [ "$(branches "$tmp/thread" | wc -l)" -lt 300 ]; then
	fail "the thread's trace: fewer than 300 branches"
elif ! branches "$tmp/thread" | cmp -s - <(branches "$tmp/cpu"); then
	fail "a CPU's trace: not the thread's branches"
	diff <(branches "$tmp/thread") <(branches "$tmp/cpu") | head >&2
fi
check
# The call stack, as for the thread's own trace.
sed -n '2,/^last/p' "$tmp/thread" >"$tmp/stack.thread"
sed -n '2,/^last/p' "$tmp/cpu" >"$tmp/stack.cpu"
cmp -s "$tmp/stack.thread" "$tmp/stack.cpu" ||
	fail "a CPU's trace: not the thread's call stack"

# Two processes taking turns: the same code (the same trace), other
# names. Every branch is named in its own process: under "-- thread
# 4321/4321 ..." only loop.b's names (btop, bf0, ...), under 1234's only
# loop's. The addresses and kinds are the one thread's.
last procs procs -n 200000
last all thread -n 200000
check
awk '/^  -- thread / { who = $3; turns[who]++; next }
	/^  (jcc|jmp|call|ret) / {
		n[who]++
		b = ($3 ~ /^b/ || $6 ~ /^b/)
		p = ($3 !~ /^b/ && $6 !~ /^b/)
		if (who == "4321/4321" ? !b : !p) bad++
	}
	END {
		if (bad || turns["1234/1234"] < 10 || turns["4321/4321"] < 10 ||
		    n["1234/1234"] < 1000 || n["4321/4321"] < 1000) {
			printf "bad %d turns %d/%d branches %d/%d\n", bad,
				turns["1234/1234"], turns["4321/4321"],
				n["1234/1234"], n["4321/4321"]
			exit 1
		}
	}' "$tmp/procs" >"$tmp/awk.out" ||
	fail "two processes on a CPU: $(cat "$tmp/awk.out")"
# kind, from, to: the addresses alone.
addrs() {
	branches "$1" | awk '$1 !~ /^last/ { print $1, $2, $(NF - 1) }'
}
check
if ! cmp -s <(addrs "$tmp/all") <(addrs "$tmp/procs"); then
	fail "two processes on a CPU: not the one thread's branches"
	diff <(addrs "$tmp/all") <(addrs "$tmp/procs") | head >&2
fi
check
grep -q '^# cpu 0, thread [0-9]*/[0-9]* [a-z.]* at the end' "$tmp/procs" ||
	fail "two processes: header: $(head -n 1 "$tmp/procs")"

# Two threads of one process: the same names, the turns said.
last threads threads -n 200000
check
[ "$(grep -c '^  -- thread 1234/1235 ' "$tmp/threads")" -ge 10 ] ||
	fail "two threads on a CPU: fewer than 10 turns of thread 1235"
check
cmp -s <(addrs "$tmp/all") <(addrs "$tmp/threads") ||
	fail "two threads on a CPU: not the one thread's branches"

# hwt last's jumps, calls, returns and taken jccs are the last ones hwt
# flow --branches lists (the analysis against the flow layer's own
# output), on a thread's trace and on a CPU's with two processes.
for f in thread procs cycloss cyclossthreads; do
	"$hwt" last -n 5000 --no-lines "$tmp/$f.data" |
		awk '$1 ~ /^(jcc|jmp|call|ret)$/ && $0 ~ / -> / {
			to = ""; for (i = 3; i <= NF; i++) if ($i == "->") to = $(i + 1)
			print $2, to }' >"$tmp/last.br"
	"$hwt" flow --branches "$tmp/$f.data" | grep '^0x' | tail -n 4999 \
		>"$tmp/flow.br"
	check
	if [ "$(wc -l <"$tmp/last.br")" -ne 4999 ]; then
		fail "$f.data: hwt last -n 5000: not 4999 branches and a syscall"
	elif ! cmp -s "$tmp/flow.br" "$tmp/last.br"; then
		fail "$f.data: hwt last's branches are not flow --branches' last"
		diff "$tmp/flow.br" "$tmp/last.br" | head -n 5 >&2
	fi
done

# ---- (2) --time, and pieces ------------------------------------------------

last time cyc -n 200000 --time
check
if ! grep -Eq '^  [0-9a-f]{16}  (jcc|jmp|call|ret) ' "$tmp/time"; then
	fail "--time: no branch with a time: $(sed -n 6p "$tmp/time")"
elif [ "$(branches "$tmp/time" | cut -c 3-18 | sort -u | wc -l)" -lt 10000 ]
then
	fail "--time: fewer than 10000 times (the CYCs not used)"
fi
for f in cyc cycprocs; do
	last whole $f -n 200000 --time
	for size in 4096 65536; do
		check
		HWT_PIECE_SIZE=$size "$hwt" last -n 200000 --time \
			"$tmp/$f.data" >"$tmp/piece" 2>&1
		if ! cmp -s "$tmp/whole" "$tmp/piece"; then
			fail "$f.data in $size-byte pieces: not what it is whole"
			diff "$tmp/whole" "$tmp/piece" | head -n 6 >&2
		fi
	done
done

# ---- (3) batches ------------------------------------------------------------

for f in cycloss cyclossthreads cyc4loss cyc4lossthreads; do
	for cmd in "calls --time" "flow --branches" "flow --time"; do
		# shellcheck disable=SC2086
		"$hwt" $cmd "$tmp/$f.data" >"$tmp/many" 2>&1
		# shellcheck disable=SC2086
		HWT_ONE_BLOCK=1 "$hwt" $cmd "$tmp/$f.data" >"$tmp/one" 2>&1
		check
		if [ "$(grep -c '^\[warning: ' "$tmp/many")" -lt 13 ] ||
		   [ "$(wc -l <"$tmp/many")" -lt 10000 ]; then
			fail "$f.data: hwt $cmd: fewer than 13 notes or" \
				"10000 lines"
		elif ! cmp -s "$tmp/one" "$tmp/many"; then
			fail "$f.data: hwt $cmd: not what one block at a" \
				"time prints"
			diff "$tmp/one" "$tmp/many" | head -n 6 >&2
		fi
	done
done

# ---- (4) exits ---------------------------------------------------------------

# first_line NAME PATTERN: the header of $tmp/NAME must match.
first_line() {
	check
	head -n 1 "$tmp/$1" | grep -Eq -- "$2" ||
		fail "$1: header: $(head -n 1 "$tmp/$1")"
}
last kill kill -n 5
first_line kill '^# thread 1234/1234 loop: killed by signal 11 \(SIGSEGV\) at 0x401042 f3\+0x5: the path to the crash$'
check
grep -q '^  #0  0x401042 f3+0x5  <- faulted here$' "$tmp/kill" ||
	fail "kill: the faulting instruction not on top of the stack"
# The CPU ends in 1234 (procs above).
last procsexit procsexit -n 5
first_line procsexit '^# cpu 0, thread 1234/1234 loop at the end: its process exited with status 3$'
last procskill procskill -n 5
first_line procskill '^# cpu 0, thread 1234/1234 loop at the end: killed by signal 11 \(SIGSEGV\) at 0x401042 f3\+0x5'

# Two CPUs' streams (mkptdata --cpu2), two threads of the killed process:
# the one whose trace ends later (its TSCs shifted by 50 M) took the
# signal, whichever CPU it ran on; a thread of another process on the
# other CPU takes nothing from it.
killed='killed by signal 11 \(SIGSEGV\) at 0x401042 f3\+0x5: the path to the crash$'
other='its process was killed by signal 11 \(SIGSEGV\) while another thread ran$'
# cpu0 PT cpu1 PT NAME: each stream's header, and its branches the one
# thread's.
cpus2() {
	local name=$3
	mk "$name" "$1" --cpu 0 --cpu2 "1:$4:$tmp/$2.pt" --exit 1234:11:0x401042
	last "$name" "$name" -n 300
	grep '^# ' "$tmp/$name" >"$tmp/$name.heads"
	check
	[ "$(sed -n '/^# cpu 1,/,/^# /p' "$tmp/$name" | branches /dev/stdin |
		wc -l)" -ge 300 ] ||
		fail "$name: cpu 1's stream: fewer than 300 branches"
	check
	cmp -s <(sed -n '/^# cpu 1,/,$p' "$tmp/$name" | branches /dev/stdin) \
		<(branches "$tmp/thread") ||
		fail "$name: cpu 1's branches are not the thread's"
}
awk '/^tsc / { printf "tsc %.0f\n", $2 + 50000000; next } { print }' \
	"$tmp/loop.ptdesc" >"$tmp/late.ptdesc"
"$build/ptgen" "$tmp/late.pt" <"$tmp/late.ptdesc" || fail "the late trace"
cpus2 loop late cpus2 1234:1235
check
grep -Eq "^# cpu 0, thread 1234/1234 loop at the end: $other" \
	"$tmp/cpus2.heads" && grep -Eq \
	"^# cpu 1, thread 1234/1235 second at the end: $killed" \
	"$tmp/cpus2.heads" || fail "two CPUs, cpu 1 later: $(cat "$tmp/cpus2.heads")"
cpus2 late loop cpus2swap 1234:1235
check
grep -Eq "^# cpu 0, thread 1234/1234 loop at the end: $killed" \
	"$tmp/cpus2swap.heads" && grep -Eq \
	"^# cpu 1, thread 1234/1235 second at the end: $other" \
	"$tmp/cpus2swap.heads" ||
	fail "two CPUs, cpu 0 later: $(cat "$tmp/cpus2swap.heads")"
# A trace that starts before the other and ends after it (its TSCs ten
# times as far apart, from 50 M earlier): the one whose trace ends later
# took the signal, not the one whose trace starts later.
awk '/^tsc / { if (!t0) t0 = $2
	printf "tsc %.0f\n", t0 - 50000000 + ($2 - t0) * 10; next } { print }' \
	"$tmp/loop.ptdesc" >"$tmp/long.ptdesc"
"$build/ptgen" "$tmp/long.pt" <"$tmp/long.ptdesc" || fail "the long trace"
cpus2 loop long cpus2long 1234:1235
check
grep -Eq "^# cpu 0, thread 1234/1234 loop at the end: $other" \
	"$tmp/cpus2long.heads" && grep -Eq \
	"^# cpu 1, thread 1234/1235 second at the end: $killed" \
	"$tmp/cpus2long.heads" ||
	fail "two CPUs, cpu 1 from before to after: $(cat "$tmp/cpus2long.heads")"
# (The streams in 4 KiB pieces: the last piece's time is the end's.)
HWT_PIECE_SIZE=4096 "$hwt" last -n 300 "$tmp/cpus2long.data" \
	>"$tmp/cpus2long.piece" 2>&1
cmp -s "$tmp/cpus2long" "$tmp/cpus2long.piece" ||
	fail "two CPUs, cpu 1 from before to after, in pieces: $(grep '^# ' \
		"$tmp/cpus2long.piece")"
cpus2 loop late cpus2other 4321:4321
check
grep -Eq "^# cpu 0, thread 1234/1234 loop at the end: $killed" \
	"$tmp/cpus2other.heads" && grep -Eq \
	'^# cpu 1, thread 4321/4321 second at the end: the trace ends \(how the process ended is not recorded\)$' \
	"$tmp/cpus2other.heads" ||
	fail "two CPUs, two processes: $(cat "$tmp/cpus2other.heads")"

# The thread moves from cpu to cpu (mkptdata --move 3: its trace in three
# parts, in three CPUs' buffers): its end, and the crash, are cpu 2's; the
# CPUs it left say where it went on.
mk moved loop --cpu 0 --move 3 --exit 1234:11:0x401042
last moved moved -n 5
grep '^# ' "$tmp/moved" >"$tmp/moved.heads"
check
[ "$(grep -c '^# cpu [01], thread 1234/1234 loop at the end: it went on on cpu 2, where its trace ends$' \
	"$tmp/moved.heads")" = 2 ] &&
	grep -Eq "^# cpu 2, thread 1234/1234 loop at the end: $killed" \
		"$tmp/moved.heads" ||
	fail "moved thread: $(cat "$tmp/moved.heads")"

# Its call stack goes with it: the loop program with a PSB+ in each call
# of f1 from f3 (two calls deep), its trace cut after the fourth PSB+'s
# first TNT, in three CPUs' buffers; the last CPU's part starts at that
# PSB+ in f1_loop and makes no call or return. Its stack at the end is
# f1_loop in f3 in top, the callers' frames pushed on the CPUs before
# (each CPU's stack on its own: no call seen there).
perfdata_loop "$tmp" deep 200 "$build" deep || {
	echo "FAIL: the deep loop program and its trace" >&2
	exit 1
}
awk '/^psbend$/ { n++ } { print } n == 4 && /^tnt/ { exit }' \
	"$tmp/deep.ptdesc" >"$tmp/cut.ptdesc"
"$build/ptgen" "$tmp/cut.pt" <"$tmp/cut.ptdesc" &&
	"$mkptdata" --cpu 0 --move 3 --pt "$tmp/cut.pt" --elf "$tmp/deep" \
		"$tmp/cut3.data" 2>"$tmp/mk.err" || {
	echo "FAIL: the cut deep trace: $(cat "$tmp/mk.err")" >&2
	exit 1
}
last cut3 cut3
sed -n '/^# cpu 2,/,$p' "$tmp/cut3" >"$tmp/cut3.cpu2"
check
grep -q '^last 1 branches' "$tmp/cut3.cpu2" &&
	grep -q '^  #0  0x401033 f1_loop+0x2  <- the trace ends here$' \
		"$tmp/cut3.cpu2" &&
	grep -q '^  #1  0x40103d f3$' "$tmp/cut3.cpu2" &&
	grep -q '^  #2  0x401013 top+0x6$' "$tmp/cut3.cpu2" ||
	fail "moved thread's stack on cpu 2: $(cat "$tmp/cut3.cpu2")"

# ---- (5) --symfs, --debug-dir ------------------------------------------------

# The loop program again, with DWARF lines: the same code, so the same
# trace. Recorded at $tmp/ran/loop, read from elsewhere.
mkdir -p "$tmp/ran" "$tmp/root$tmp/ran" || exit 1
yasm -g dwarf2 -f elf64 -DITER=20000 "$src/tests/data/perfdata_loop.asm" \
	-o "$tmp/dw.o" || exit 1
# ran_build NAME BUILD_ID: $tmp/ran/loop linked with ld's --build-id=
# BUILD_ID, its id in $id, and its recording $tmp/NAME.data; hwt last -n
# 40 of it in $tmp/NAME.ref.
ran_build() {
	ld -Ttext=0x401000 -e _start --build-id="$2" -o "$tmp/ran/loop" \
		"$tmp/dw.o" || exit 1
	id=$(readelf -n "$tmp/ran/loop" | awk '/Build ID:/ { print $3; exit }')
	"$mkptdata" --pt "$tmp/loop.pt" --elf "$tmp/ran/loop" "$tmp/$1.data" \
		2>"$tmp/mk.err" || {
		echo "FAIL: mkptdata $1: $(cat "$tmp/mk.err")" >&2
		exit 1
	}
	last "$1.ref" "$1" -n 40
}
ran_build ran sha1
# (And hwt flow's source lines, from the same model's directory.)
"$hwt" flow --srcline "$tmp/ran.data" 2>&1 | head -n 3000 >"$tmp/ran.flow.ref"
mkdir -p "$tmp/root/usr/lib/debug/.build-id/${id:0:2}" \
	"$tmp/dbg/.build-id/${id:0:2}" || exit 1
objcopy --only-keep-debug "$tmp/ran/loop" \
	"$tmp/root/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" &&
	cp "$tmp/root/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" \
		"$tmp/dbg/.build-id/${id:0:2}/" &&
	strip -s -o "$tmp/root$tmp/ran/loop" "$tmp/ran/loop" || exit 1
check
grep -q 'f1_loop+0x2 (perfdata_loop.asm:[0-9]*) ->' "$tmp/ran.ref" ||
	fail "the program with DWARF: no names and lines: $(head -n 12 "$tmp/ran.ref")"
[ -n "$id" ] && ! nm "$tmp/root$tmp/ran/loop" 2>/dev/null | grep -q . ||
	fail "no build id ($id), or the stripped program has symbols"
rm -f "$tmp/ran/loop"
last ran.symfs ran -n 40 --symfs "$tmp/root"
check
cmp -s "$tmp/ran.ref" "$tmp/ran.symfs" ||
	fail "--symfs: $(diff "$tmp/ran.ref" "$tmp/ran.symfs" | head -n 6)"
"$hwt" flow --srcline --symfs "$tmp/root" "$tmp/ran.data" 2>&1 |
	head -n 3000 >"$tmp/ran.flow.symfs"
check
[ "$(grep -c 'f1_loop+0x2 *perfdata_loop.asm:42$' "$tmp/ran.flow.ref")" -gt 10 ] ||
	fail "hwt flow --srcline: $(sed -n '1,3p;100,103p' "$tmp/ran.flow.ref")"
cmp -s "$tmp/ran.flow.ref" "$tmp/ran.flow.symfs" ||
	fail "hwt flow --srcline --symfs: $(diff "$tmp/ran.flow.ref" "$tmp/ran.flow.symfs" | head -n 6)"
last ran.none ran -n 40
check
! grep -q 'f1_loop\|perfdata_loop.asm' "$tmp/ran.none" ||
	fail "names or lines without the program: $(head -n 8 "$tmp/ran.none")"
cp "$tmp/root$tmp/ran/loop" "$tmp/ran/loop" || exit 1
last ran.dbg ran -n 40 --debug-dir "$tmp/dbg"
last ran.nodbg ran -n 40
check
cmp -s "$tmp/ran.ref" "$tmp/ran.dbg" ||
	fail "--debug-dir: $(diff "$tmp/ran.ref" "$tmp/ran.dbg" | head -n 6)"
! grep -q 'f1_loop\|perfdata_loop.asm' "$tmp/ran.nodbg" ||
	fail "the stripped program named without --debug-dir: $(head -n 8 "$tmp/ran.nodbg")"
# (The branches are there all the same.)
[ "$(branches "$tmp/ran.nodbg" | grep -c ' -> ')" = 40 ] ||
	fail "the stripped program: not 40 branches: $(head -n 8 "$tmp/ran.nodbg")"

for bid in 0x55e7f96344edbdd6da9fc0c2705166b30ce30000 md5; do
	ran_build bid "$bid"
	rm -rf "$tmp/cache"
	mkdir -p "$tmp/cache/.build-id/${id:0:2}" || exit 1
	mv "$tmp/ran/loop" "$tmp/cache/.build-id/${id:0:2}/${id:2}" || exit 1
	last bid.cache bid -n 40 --buildid-dir "$tmp/cache"
	last bid.none bid -n 40 --buildid-dir "$tmp/ran"
	check
	case $bid:${#id} in
	0x*:40 | md5:32) ;;
	*) fail "build id $bid: readelf gives '$id'" ;;
	esac
	grep -q 'f1_loop+0x2 (perfdata_loop.asm:[0-9]*) ->' "$tmp/bid.ref" ||
		fail "build id $bid: no names and lines: $(head -n 8 "$tmp/bid.ref")"
	cmp -s "$tmp/bid.ref" "$tmp/bid.cache" ||
		fail "--buildid-dir, build id $bid: $(diff "$tmp/bid.ref" "$tmp/bid.cache" | head -n 6)"
	! grep -q 'f1_loop' "$tmp/bid.none" ||
		fail "build id $bid: named with the program gone: $(head -n 8 "$tmp/bid.none")"
	if command -v perf >/dev/null 2>&1 && perf version >/dev/null 2>&1; then
		check
		perf buildid-list -i "$tmp/bid.data" 2>/dev/null |
			grep -q "^$id  *$tmp/ran/loop\$" ||
			fail "perf buildid-list, build id $bid: want $id, got $(perf buildid-list -i "$tmp/bid.data" 2>&1 | head -n 3)"
		perf script -D -i "$tmp/bid.data" 2>/dev/null |
			grep -q "PERF_RECORD_MMAP2 .*<$id>.*$tmp/ran/loop\$" ||
			fail "perf script -D, build id $bid: no MMAP2 with <$id>"
	fi
done

finish

# SPDX-License-Identifier: BSD-2-Clause
# perf.data input of hwt flow, calls, coverage and dump, and the
# independent cross-check: `perf script --itrace=b`, perf's own Intel PT
# decoder, must list the same taken branches as `hwt flow --branches` on
# the same perf.data.
#
# The files are intel_pt perf.data as `perf record --per-thread -e
# intel_pt//u` writes them, packed by mkptdata (tests/tools) from an ELF
# and its trace from ptgen: examples/calls.asm with examples/calls.ptdesc,
# and tests/data/perfdata_loop.asm (calls, returns, indirect calls and
# jumps, loops) with a trace that tests/data/perfdata_loop.awk writes
# branch by branch. Also: the perf.data decode is the raw decode with
# --elf; -j N prints what -j1 prints; lost data (an AUX record patched to
# TRUNCATED) is a warning where it happened and counted by --stat; cpu
# mode (a patched PER_CPU_MMAPS word) and pipe mode (perf inject -o -)
# decode the same; a thread whose trace is in three CPUs' buffers (it
# moved) is one function-call history in hwt calls; a file without AUX data, an AUX type hwt cannot decode
# yet and a mapped ELF that is gone give clear messages and no crash.
#
# Only the parts that run perf (the cross-check, pipe mode, a file
# without AUX data) need it; without perf they are skipped.
#
#   bash tests/cli/perfdata_flow.sh path/to/hwt BUILD_DIR
. "$(dirname "$0")/lib.bash" perfdata_flow "$@"
ptgen=$build/ptgen
mkptdata=$build/mkptdata
built "$ptgen" "$mkptdata"
needs yasm ld nm objcopy od dd truncate
have_perf=1
command -v perf >/dev/null || have_perf=0
compared=0

# run NAME CMD...: stdout to $tmp/NAME.out, stderr to $tmp/NAME.err; a
# crash (signal) or a timeout is a failure. Returns the exit code.
run_as() {
	local name=$1
	shift
	timeout 120 "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
	local rc=$?
	if [ $rc -ge 124 ]; then
		fail "$name: exit $rc (crash or timeout): $*"
		head -n 5 "$tmp/$name.err" >&2
	fi
	return $rc
}

# same DESC FILE1 FILE2: the two files must be equal and not empty.
same() {
	check
	if [ ! -s "$2" ]; then
		fail "$1: no output"
	elif ! cmp -s "$2" "$3"; then
		fail "$1"
		diff -u "$2" "$3" | head -n 30 >&2
	fi
}

# contains DESC FILE PATTERN: grep -E PATTERN must match a line of FILE.
contains() {
	check
	if ! grep -Eq -- "$3" "$2"; then
		fail "$1: no line matching '$3' in:"
		head -n 20 "$2" >&2
	fi
}

# The perf.data decode without its '# ...' header and '[...]' lines.
strip() {
	grep -v '^[#[]' "$1"
}

# record_at FILE TYPE SIZE: the file offset of the first record header
# (8-byte aligned) of this type and size, or nothing.
record_at() {
	od -An -v -tu4 -w8 "$1" |
		awk -v t="$2" -v sz="$3" \
			'$1 == t && int($2 / 65536) == sz { print (NR - 1) * 8; exit }'
}

# poke FILE OFFSET BYTE...: overwrite bytes in place.
poke() {
	local f=$1 off=$2
	shift 2
	for b in "$@"; do
		printf "\\$(printf '%03o' "$b")" |
			dd of="$f" bs=1 seek="$off" conv=notrunc 2>/dev/null
		off=$((off + 1))
	done
}

# ---- the programs, their traces, their perf.data --------------------

# As the Makefile's example target builds it.
yasm -f elf64 "$src/examples/calls.asm" -o "$tmp/calls.o" &&
	ld -Ttext=0x401000 -e _start -o "$tmp/calls" "$tmp/calls.o" &&
	"$ptgen" "$tmp/calls.pt" <"$src/examples/calls.ptdesc" || {
	echo "FAIL: building the calls example" >&2
	exit 1
}

. "$src/tests/data/perfdata_loop.bash"
perfdata_loop "$tmp" loop 3000 "$build" || {
	echo "FAIL: building the loop program and its trace" >&2
	exit 1
}

for p in calls loop; do
	"$mkptdata" --pt "$tmp/$p.pt" --elf "$tmp/$p" "$tmp/$p.data" \
		2>"$tmp/mk.err" || {
		echo "FAIL: mkptdata $p" >&2
		cat "$tmp/mk.err" >&2
		exit 1
	}
done

# ---- (1) the same taken branches as perf's decoder -------------------

if [ $have_perf -eq 0 ]; then
	echo "perfdata_flow.sh: skipped: perf is not installed (cross-check" \
		"with perf script --itrace=b, pipe mode, no-AUX file)"
else
	for p in calls loop; do
		check
		run_as hwt_br "$hwt" flow --branches "$tmp/$p.data" ||
			fail "hwt flow --branches $p.data: exit $?"
		strip "$tmp/hwt_br.out" >"$tmp/$p.hwt"
		# -F hw:...: the fields of the synthesized branches event (the
		# intel_pt event itself has no ADDR). --force only if perf
		# refuses the file (it checks the owner).
		run_as perf_br perf script --itrace=be -F hw:ip,addr \
			-i "$tmp/$p.data" || {
			run_as perf_br perf script --force --itrace=be \
				-F hw:ip,addr -i "$tmp/$p.data" ||
				fail "perf script on $p.data: exit $?"
		}
		# perf also reports the trace start (0 => ip) and end (ip =>
		# 0) as branches; hwt does not. Errors print as lines of
		# their own: there must be none.
		awk '$2 == "=>" && $1 != "0" && $3 != "0" {
			print "0x" $1 " 0x" $3 }' "$tmp/perf_br.out" \
			>"$tmp/$p.perf"
		if grep -q 'instruction trace error' "$tmp/perf_br.out"; then
			fail "perf reports trace errors in $p.data:"
			grep 'instruction trace error' "$tmp/perf_br.out" |
				head -n 5 >&2
		fi
		n=$(wc -l <"$tmp/$p.perf")
		if [ "$n" -lt 10 ]; then
			fail "perf script lists only $n branches of $p.data"
		fi
		same "hwt flow --branches vs perf script --itrace=b ($p)" \
			"$tmp/$p.perf" "$tmp/$p.hwt"
		cmp -s "$tmp/$p.perf" "$tmp/$p.hwt" &&
			compared=$((compared + n))
		# hwt calls --folded: each instruction counted at its call
		# stack, as perf's instruction samples with their call chains
		# (--itrace=i1ig) folded: the same stacks and counts.
		run_as fold "$hwt" calls --folded "$tmp/$p.data" ||
			fail "hwt calls --folded $p.data: exit $?"
		sort "$tmp/fold.out" >"$tmp/$p.fold"
		perf script --itrace=i1ig -F ip,sym --force -i "$tmp/$p.data" \
			2>/dev/null | awk '
			function flush() {
				if (!n) return
				s = f[n]
				for (i = n - 1; i >= 1; i--) s = s ";" f[i]
				c[s]++; n = 0 }
			NF == 0 { flush(); next }
			{ f[++n] = NF > 1 ? $2 : "?? 0x" $1 }
			END { flush(); for (s in c) print s, c[s] }' |
			sort >"$tmp/$p.pfold"
		check
		[ "$(wc -l <"$tmp/$p.pfold")" -ge 4 ] ||
			fail "perf's call chains of $p.data: too few stacks"
		same "hwt calls --folded vs perf's call chains ($p)" \
			"$tmp/$p.pfold" "$tmp/$p.fold"
	done

	# Two CPUs' buffers (mkptdata --cpu2; cpu 1 runs a second thread
	# of the process, running the same loop): each CPU's branches,
	# hwt's stream by stream, perf's by -C. And -j2 prints what -j1 does.
	# Both CPUs' branches in time order (hwt's default), against perf's
	# ordered by their time, then CPU.
	check
	if ! "$mkptdata" --cpu 0 --cpu2 "1:1234:1235:$tmp/loop.pt" \
		--pt "$tmp/loop.pt" --elf "$tmp/loop" "$tmp/cpus.data" \
		2>"$tmp/mk.err"; then
		fail "mkptdata --cpu2: $(cat "$tmp/mk.err")"
	else
		run_as cpus "$hwt" flow --branches --by-stream \
			"$tmp/cpus.data" ||
			fail "hwt flow --branches cpus.data: exit $?"
		run_as cpust "$hwt" flow --branches "$tmp/cpus.data" ||
			fail "hwt flow --branches cpus.data in time order: exit $?"
		awk '/^\[pid [0-9]+ tid [0-9]+ cpu [0-9]+\]$/ { c = $6 + 0 }
		     /^0x/ { print c, $0 }' "$tmp/cpust.out" >"$tmp/cpust.hwt"
		perf script --itrace=b -F cpu,time,ip,addr --ns --force \
			-i "$tmp/cpus.data" 2>/dev/null |
			awk '$4 == "=>" && $3 != "0" && $5 != "0" {
				gsub(/[\[\]:]/, "")
				print $2, $1 + 0, NR, "0x" $3, "0x" $5 }' |
			sort -s -k1,1n -k2,2n -k3,3n |
			awk '{ print $2, $4, $5 }' >"$tmp/cpust.perf"
		same "two CPUs: branches in time order, hwt vs perf script" \
			"$tmp/cpust.perf" "$tmp/cpust.hwt"
		check
		[ "$(grep -c '^\[pid ' "$tmp/cpust.out")" -gt 10 ] ||
			fail "two CPUs in time order: the CPUs do not take turns"
		for c in 0 1; do
			awk -v c="$c" '/^# stream idx / { on = ($6 == c ",") }
				on && /^0x/' "$tmp/cpus.out" >"$tmp/cpus$c.hwt"
			perf script --itrace=b -F ip,addr -C "$c" --force \
				-i "$tmp/cpus.data" 2>/dev/null |
				awk '$2 == "=>" && $1 != "0" && $3 != "0" {
					print "0x" $1 " 0x" $3 }' >"$tmp/cpus$c.perf"
			same "two CPUs: cpu $c's branches, hwt vs perf script" \
				"$tmp/cpus$c.perf" "$tmp/cpus$c.hwt"
		done
		check
		[ "$(grep -c '^# stream idx ' "$tmp/cpus.out")" -eq 2 ] ||
			fail "two CPUs: not two streams in hwt's output"
		run_as cpusj "$hwt" flow --branches --by-stream -j2 \
			"$tmp/cpus.data" ||
			fail "hwt flow --branches -j2 cpus.data: exit $?"
		same "two CPUs: flow --branches -j2 vs -j1" "$tmp/cpus.out" \
			"$tmp/cpusj.out"
		run_as cpustj "$hwt" flow --branches -j2 "$tmp/cpus.data" ||
			fail "hwt flow --branches -j2 cpus.data in time order: exit $?"
		same "two CPUs in time order: flow --branches -j2 vs -j1" \
			"$tmp/cpust.out" "$tmp/cpustj.out"

		# Lines chosen as perf script chooses its samples: by
		# thread, by CPU, by time (perf's seconds, as perf script
		# prints them: bounds at branches' times and between), and
		# by both; perf's in their (time, CPU) order as above.
		perf script --itrace=b -F time --ns --force \
			-i "$tmp/cpus.data" 2>/dev/null | tr -d ' :' |
			sort -u >"$tmp/cpus.times"
		t5=$(sed -n 5p "$tmp/cpus.times")
		t20=$(sed -n 20p "$tmp/cpus.times")
		check
		[ -n "$t5" ] && [ -n "$t20" ] ||
			fail "two CPUs: fewer than 20 times in perf's branches"
		k=0
		for sel in "--tid 1235" "-C 0" "--time $t5,$t20" \
			"--time ${t5%??},${t20%??}" "--tid 1234 --time $t20," \
			"-C 1 --time ,$t20"; do
			k=$((k + 1))
			# shellcheck disable=SC2086
			perf script --itrace=b -F cpu,time,ip,addr --ns \
				--force -i "$tmp/cpus.data" $sel 2>/dev/null |
				awk '$4 == "=>" && $3 != "0" && $5 != "0" {
					gsub(/[\[\]:]/, "")
					print $2, $1 + 0, NR, "0x" $3, "0x" $5 }' |
				sort -s -k1,1n -k2,2n -k3,3n |
				awk '{ print $4, $5 }' >"$tmp/sel$k.perf"
			# shellcheck disable=SC2086
			run_as "sel$k" "$hwt" flow --branches \
				${sel/--time /--time-range } "$tmp/cpus.data"
			grep '^0x' "$tmp/sel$k.out" >"$tmp/sel$k.hwt"
			same "two CPUs: branches chosen by $sel, hwt vs perf" \
				"$tmp/sel$k.perf" "$tmp/sel$k.hwt"
		done
		# --perf-time: the instruction lines' times are perf's
		# times of its branch samples, all of them.
		run_as pt "$hwt" flow --perf-time "$tmp/cpus.data"
		awk '$1 ~ /^[0-9]+\.[0-9]{9}$/ { print $1 }' "$tmp/pt.out" |
			sort -u >"$tmp/pt.hwt"
		same "flow --perf-time: perf script's times" \
			"$tmp/cpus.times" "$tmp/pt.hwt"
		check
		[ "$(wc -l <"$tmp/sel3.hwt")" -gt 100 ] &&
			[ "$(wc -l <"$tmp/sel3.hwt")" -lt 10000 ] ||
			fail "two CPUs: the time window chose $(wc -l \
				<"$tmp/sel3.hwt") branches"
	fi

	# Pipe mode, as perf writes to a pipe: from a file and from stdin.
	if perf inject -i "$tmp/calls.data" -o - >"$tmp/pipe.data" \
		2>/dev/null; then
		run_as pipe "$hwt" flow --branches "$tmp/pipe.data" ||
			fail "hwt flow on a pipe-mode file: exit $?"
		strip "$tmp/pipe.out" >"$tmp/pipe.hwt"
		same "pipe-mode perf.data vs the file" "$tmp/calls.hwt" \
			"$tmp/pipe.hwt"
		run_as pipe "$hwt" flow --branches - <"$tmp/pipe.data" ||
			fail "hwt flow - <pipe.data: exit $?"
		strip "$tmp/pipe.out" >"$tmp/pipe.hwt"
		same "pipe-mode perf.data on stdin" "$tmp/calls.hwt" \
			"$tmp/pipe.hwt"
	else
		fail "perf inject -o - (pipe mode) failed"
	fi
fi

# ---- (2) the perf.data decode is the raw decode with --elf -----------

# What mkptdata records of the machine, given by hand to the raw decode:
# the CPUID feature and the AUXTRACE_INFO timing words (TSC:CTC 2/1,
# max non-turbo ratio 24).
timing="--cpu 6/142/10 --cpuid-0x15.eax 1 --cpuid-0x15.ebx 2 --nom-freq 24"
for p in calls loop; do
	for cmd in "flow --branches" "flow --insn --disasm" "flow --blocks" \
		"calls --time" "coverage"; do
		# shellcheck disable=SC2086
		run_as pd "$hwt" $cmd "$tmp/$p.data" ||
			fail "hwt $cmd $p.data: exit $?"
		# shellcheck disable=SC2086
		run_as raw "$hwt" $cmd $timing --elf "$tmp/$p" "$tmp/$p.pt" ||
			fail "hwt $cmd --elf $p: exit $?"
		# coverage adds the totals of all streams after '# all streams'
		awk '/^# all streams/ { exit } !/^#/' "$tmp/pd.out" \
			>"$tmp/pd.one"
		same "hwt $cmd: $p.data vs $p.pt --elf $p" \
			"$tmp/raw.out" "$tmp/pd.one"
	done
	contains "stream header of $p.data" "$tmp/pd.out" \
		"^# stream idx 0: pid 1234 tid 1234 comm $p, [0-9]+ bytes$"

	run_as j1 "$hwt" flow --blocks -j1 "$tmp/$p.data"
	run_as j4 "$hwt" flow --blocks -j4 "$tmp/$p.data"
	same "hwt flow -j4 vs -j1 ($p.data)" "$tmp/j1.out" "$tmp/j4.out"

	run_as pdd "$hwt" dump "$tmp/$p.data" || fail "hwt dump $p.data: exit $?"
	# perf pads each AUXTRACE chunk to 8 bytes (PAD packets).
	cp "$tmp/$p.pt" "$tmp/$p.pad" && truncate -s %8 "$tmp/$p.pad"
	run_as rawd "$hwt" dump "$tmp/$p.pad"
	strip "$tmp/pdd.out" >"$tmp/pdd.one"
	same "hwt dump: $p.data vs $p.pt" "$tmp/rawd.out" "$tmp/pdd.one"
	contains "hwt dump header of $p.data" "$tmp/pdd.out" \
		"^# stream idx 0: pid 1234 tid 1234 comm $p"
done

# ---- the trace read in pieces: the same output ------------------------

# A stream is read from the file in pieces cut at PSBs (64 MiB unless
# HWT_PIECE_SIZE says otherwise); cut into pieces of 4 KiB, the loop
# trace decodes and dumps exactly as when it is read whole.
check
[ "$(stat -c %s "$tmp/loop.pt")" -gt 16384 ] ||
	fail "loop.pt is too small to be cut into pieces"
for cmd in "flow --blocks" "flow --branches" "calls --time" "coverage" \
	"flow --stat" "dump --lastip"; do
	# shellcheck disable=SC2086
	run_as whole "$hwt" $cmd "$tmp/loop.data"
	# shellcheck disable=SC2086
	run_as cut env HWT_PIECE_SIZE=4096 "$hwt" $cmd "$tmp/loop.data" ||
		fail "hwt $cmd in 4 KiB pieces: exit $?"
	same "hwt $cmd: in 4 KiB pieces vs whole" "$tmp/whole.out" \
		"$tmp/cut.out"
done

# ---- cpu mode: the stream of a cpu, its thread from the sideband -----

# mkptdata --cpu 0 puts the trace in cpu 0's buffer, and the writer sets
# the AUXTRACE_INFO word PER_CPU_MMAPS (priv[9], at +16 + 9 * 8): the
# buffers are per cpu, so the thread comes from ITRACE_START/SWITCH on
# that cpu. Checked here, since everything below rests on it.
per_cpu() {
	local off
	off=$(record_at "$1" 70 152)
	check
	if [ -z "$off" ]; then
		fail "no AUXTRACE_INFO in $1"
		return 1
	fi
	if [ "$(od -An -tu1 -j $((off + 88)) -N 1 "$1" | tr -d ' ')" != 1 ]; then
		fail "$1: PER_CPU_MMAPS is not set"
		return 1
	fi
}

"$mkptdata" --cpu 0 --pt "$tmp/calls.pt" --elf "$tmp/calls" \
	"$tmp/cpu.data" || fail "mkptdata --cpu 0"
if per_cpu "$tmp/cpu.data"; then
	run_as cpu "$hwt" flow --branches "$tmp/cpu.data" ||
		fail "hwt flow on cpu.data: exit $?"
	contains "cpu stream header" "$tmp/cpu.out" \
		'^# stream idx 0: cpu 0, [0-9]+ bytes$'
	strip "$tmp/cpu.out" >"$tmp/cpu.hwt"
	"$hwt" flow --branches --elf "$tmp/calls" "$tmp/calls.pt" \
		>"$tmp/calls.raw" 2>/dev/null
	same "cpu mode decode vs the raw decode" "$tmp/calls.raw" \
		"$tmp/cpu.hwt"
fi

# ---- cpu mode, two processes: the image follows the switches --------

# A second process runs the same code under other names (objcopy), and
# the cpu goes to it and back 6 times over the loop's trace: each block's
# symbol says whose image decoded it. The decoder keeps each image's
# block cache (hwt_blk_set_image): the flow must still be the raw one.
"$mkptdata" --cpu 0 --switch "4321:$tmp/loop.b:6" \
	--pt "$tmp/loop.pt" --elf "$tmp/loop" "$tmp/cpu2.data" ||
	fail "mkptdata --switch"
if per_cpu "$tmp/cpu2.data"; then
	run_as cpu2 "$hwt" flow --blocks "$tmp/cpu2.data" ||
		fail "hwt flow --blocks on cpu2.data: exit $?"
	"$hwt" flow --blocks --elf "$tmp/loop" "$tmp/loop.pt" \
		>"$tmp/loop.blocks" 2>/dev/null
	strip "$tmp/cpu2.out" | awk '{ print $1, $2, $3 }' >"$tmp/cpu2.b"
	strip "$tmp/loop.blocks" | awk '{ print $1, $2, $3 }' >"$tmp/loop.b3"
	same "two processes: the blocks of the raw decode" "$tmp/loop.b3" \
		"$tmp/cpu2.b"
	# Runs of blocks named from one image or the other: 7 (the first
	# process, then 6 switches), each of many blocks.
	check
	runs=$(strip "$tmp/cpu2.out" | awk 'NF >= 4 {
		b = ($4 ~ /^b/); if (NR == 1 || b != last) n++; last = b }
		END { print n + 0 }')
	[ "$runs" = 7 ] ||
		fail "two processes: $runs runs of one image's symbols, want 7"
	# A line names the thread where the cpu changes hands (7: the first
	# too), before the lines it ran: under 4321's, loop.b's names only.
	# In instruction lines too, and -j2 (512-byte segments) prints them
	# as -j1 does.
	run_as cpu2i "$hwt" flow "$tmp/cpu2.data"
	for f in cpu2 cpu2i; do
		check
		awk '/^\[pid / { who = $2; n++; next }
			/^[0-9a-f]+ / {
				s = $NF; if ($0 ~ /^[0-9a-f]+  [^ ]+$/) s = $2
				if ((who == 4321) != (s ~ /^b/)) bad++; lines++ }
			END { if (n != 7 || bad || lines < 1000) {
				printf "%d thread lines, %d of %d lines misnamed\n",
					n, bad, lines; exit 1 } }' \
			"$tmp/$f.out" >"$tmp/awk.out" ||
			fail "two processes, $f: $(cat "$tmp/awk.out")"
	done
	run_as cpu2j env HWT_SEGMENT_SIZE=512 "$hwt" flow -j2 "$tmp/cpu2.data"
	same "two processes: flow -j2 vs -j1, thread lines" "$tmp/cpu2i.out" \
		"$tmp/cpu2j.out"
	# --disasm's texts kept by image (two processes' images), against
	# a walk and a read of every instruction.
	run_as cpu2d "$hwt" flow --disasm "$tmp/cpu2.data"
	run_as cpu2e env HWT_WALK_EACH=1 "$hwt" flow --disasm "$tmp/cpu2.data"
	same "two processes: flow --disasm from kept walks vs each walked" \
		"$tmp/cpu2e.out" "$tmp/cpu2d.out"
	contains "two processes: flow --disasm" "$tmp/cpu2d.out" '  (dec|jnz|jne) '
	run_as cpu2s "$hwt" flow --stat "$tmp/cpu2.data"
	"$hwt" flow --stat --elf "$tmp/loop" "$tmp/loop.pt" >"$tmp/loop.stat" \
		2>/dev/null
	contains "two processes: --stat" "$tmp/cpu2s.out" \
		"^insn: $(awk '/^insn:/ { print $2; exit }' \
			"$tmp/loop.stat")\$"
	run_as cpu2c "$hwt" coverage "$tmp/cpu2.data"
	"$hwt" coverage --elf "$tmp/loop" "$tmp/loop.pt" >"$tmp/loop.cov" \
		2>/dev/null
	contains "raw coverage" "$tmp/loop.cov" '^hash: [0-9a-f]{16}$'
	contains "two processes: coverage" "$tmp/cpu2c.out" \
		"^$(grep -m1 '^hash: ' "$tmp/loop.cov")\$"
fi

# ---- cpu mode: a thread that moves from cpu to cpu -----------------

# The loop program with a PSB+ in each call of f1 from f3, two calls deep
# (perfdata_loop deep), its trace cut at PSBs into 3 parts, each in the
# buffer of another cpu (mkptdata --move: the sideband switches the thread
# out of one cpu and into the next). hwt calls follows the thread across
# the cpus, one history: its lines are those of the trace as one cpu's
# (mkptdata without --move), but for the lines where it moved (a function
# that goes on after the move starts a line again, as after a switch) and
# the [pid tid cpu] line before each cpu's. -j2 with small segments,
# --time and a history that goes to the temporary file every 3 lines print
# the same.
perfdata_loop "$tmp" deep 200 "$build" deep || fail "perfdata_loop deep"
"$mkptdata" --cpu 0 --pt "$tmp/deep.pt" --elf "$tmp/deep" \
	"$tmp/deep1.data" || fail "mkptdata deep"
"$mkptdata" --cpu 0 --move 3 --pt "$tmp/deep.pt" --elf "$tmp/deep" \
	"$tmp/deep3.data" || fail "mkptdata --move 3"
# hwt calls output: the lines of one function that follow each other
# joined, and numbered again.
join_lines() {
	awk '/^#/ || /^\[pid / { next }
	     { split($0, f, "\t"); split(f[3], r, /[ ,]/)
	       if (f[2] == last) { hi = r[3]; next }
	       if (last != "") print ++n "\t" last "\tinst " lo "," hi
	       last = f[2]; lo = r[2]; hi = r[3] }
	     END { if (last != "") print ++n "\t" last "\tinst " lo "," hi }' "$1"
}
if per_cpu "$tmp/deep3.data"; then
	run_as deep1c "$hwt" calls "$tmp/deep1.data"
	run_as deep3c "$hwt" calls "$tmp/deep3.data"
	join_lines "$tmp/deep1c.out" >"$tmp/deep1.j"
	join_lines "$tmp/deep3c.out" >"$tmp/deep3.j"
	same "a thread moved to 3 cpus: its calls as on one" "$tmp/deep1.j" \
		"$tmp/deep3.j"
	contains "moved: two calls deep where it moved" "$tmp/deep3c.out" \
		'^\[pid 1234 tid 1234 cpu 1\]$'
	check
	awk '/^\[pid 1234 tid 1234 cpu 1\]$/ { getline; print; exit }' \
		"$tmp/deep3c.out" | grep -Eq $'^[0-9]+\t    f1_loop\t' ||
		fail "moved: the first line on cpu 1 is not f1_loop two deep"
	check
	[ "$(grep -c '^\[pid ' "$tmp/deep3c.out")" = 3 ] ||
		fail "moved: $(grep -c '^\[pid ' "$tmp/deep3c.out") thread lines, want 3"
	check
	[ "$(grep -c '^# stream idx' "$tmp/deep3c.out")" = 3 ] ||
		fail "moved: not 3 streams"
	run_as deep3j env HWT_SEGMENT_SIZE=256 "$hwt" calls -j2 \
		"$tmp/deep3.data"
	same "moved: calls -j2 vs -j1" "$tmp/deep3c.out" "$tmp/deep3j.out"
	run_as deep3s env HWT_CALLS_CHUNK=3 "$hwt" calls "$tmp/deep3.data"
	same "moved: calls through the temporary file" "$tmp/deep3c.out" \
		"$tmp/deep3s.out"
	run_as deep3t "$hwt" calls --time "$tmp/deep3.data"
	check
	sed 's/\ttsc [0-9a-f]*$//' "$tmp/deep3t.out" >"$tmp/deep3t.cut"
	same "moved: calls --time, but the times" "$tmp/deep3c.out" \
		"$tmp/deep3t.cut"
	# Two threads, each on its cpu all the time: one after the other.
	"$mkptdata" --cpu 0 --cpu2 "1:1234:1235:$tmp/deep.pt" \
		--pt "$tmp/deep.pt" --elf "$tmp/deep" "$tmp/two.data" ||
		fail "mkptdata --cpu2 deep"
	run_as twoc "$hwt" calls "$tmp/two.data"
	run_as twoj env HWT_SEGMENT_SIZE=256 "$hwt" calls -j2 "$tmp/two.data"
	same "two threads on two cpus: calls -j2 vs -j1" "$tmp/twoc.out" \
		"$tmp/twoj.out"
	check
	[ "$(grep '^\[pid ' "$tmp/twoc.out" | tr '\n' ' ')" = \
	  "[pid 1234 tid 1234 cpu 0] [pid 1234 tid 1235 cpu 1] " ] ||
		fail "two threads: $(grep '^\[pid ' "$tmp/twoc.out" | tr '\n' ' ')"
	# The folded stacks of the moved thread are those of one cpu's.
	run_as deep1o "$hwt" calls --folded "$tmp/deep1.data"
	run_as deep3o "$hwt" calls --folded "$tmp/deep3.data"
	same "moved: calls --folded as on one cpu" "$tmp/deep1o.out" \
		"$tmp/deep3o.out"
	contains "moved: calls --folded" "$tmp/deep3o.out" \
		'^top;f3;f1_loop [0-9]+$'
	check
	! grep -q 'unknown' "$tmp/deep3o.out" ||
		fail "moved: calls --folded: unknown callers"
	# --stream prints each stream as it comes, as before.
	run_as deep3r "$hwt" calls --stream "$tmp/deep3.data"
	check
	[ "$(grep -c $'^1\t' "$tmp/deep3r.out")" = 3 ] ||
		fail "--stream: not 3 histories"
fi

# ---- cpu mode: hwt flow's lines of the cpus in time order ----------

# hwt flow on CPUs' streams prints their lines in time order (perf
# script's order), each thread's after a line [pid P tid T cpu C] where
# the cpu or the thread changes, the streams' headers first. The thread
# moved across 3 cpus: its lines are those of the trace as one cpu's (its
# time is the trace's order), in 3 runs, on cpus 0, 1 and 2. Two threads
# on two cpus at once: each cpu's lines, with their thread, are those
# --by-stream prints, the cpus take turns, --time's times never go back,
# and flow prints the lines of flow --time. -j2 and -j3 with small
# segments print what -j1 prints, in every mode.

# Each line of hwt flow's output with its cpu and thread ("?": none named
# yet), sorted by cpu (keeping their order): --by-stream's or merged.
by_cpu() {
	awk '/^# stream idx [0-9]+: cpu / { cpu = $6 + 0; task = "?"; next }
	     /^#/ { next }
	     /^\[pid [0-9]+ tid [0-9]+\]$/ { task = $2 "/" $4 + 0; next }
	     /^\[pid [0-9]+ tid [0-9]+ cpu [0-9]+\]$/ {
		cpu = $6 + 0; task = $2 "/" $4; next }
	     /^\[cpu [0-9]+\]$/ { cpu = $2 + 0; task = "?"; next }
	     { print cpu "\t" task "\t" $0 }' "$1" | sort -s -t "$tab" -k1,1n
}
tab=$'\t'
if per_cpu "$tmp/deep3.data" && [ -s "$tmp/two.data" ]; then
	run_as deep1f "$hwt" flow "$tmp/deep1.data"
	run_as deep3f "$hwt" flow "$tmp/deep3.data"
	grep -v '^#\|^\[pid ' "$tmp/deep1f.out" >"$tmp/deep1f.lines"
	grep -v '^#\|^\[pid ' "$tmp/deep3f.out" >"$tmp/deep3f.lines"
	same "in time order: the moved thread's lines as on one cpu" \
		"$tmp/deep1f.lines" "$tmp/deep3f.lines"
	check
	[ "$(grep '^\[pid ' "$tmp/deep3f.out" | tr '\n' ' ')" = \
	  "[pid 1234 tid 1234 cpu 0] [pid 1234 tid 1234 cpu 1] [pid 1234 tid 1234 cpu 2] " ] ||
		fail "in time order: moved: $(grep '^\[pid ' "$tmp/deep3f.out" | tr '\n' ' ')"
	check
	[ "$(head -n 4 "$tmp/deep3f.out" | sed 's/,.*//' | tr '\n' '|')" = \
	  "# stream idx 0: cpu 0|# stream idx 1: cpu 1|# stream idx 2: cpu 2|# all streams in time order|" ] ||
		fail "in time order: not the headers, then the lines"
	for m in "--insn --time" "--blocks" "--branches" "--insn --disasm"; do
		n=${m// /}
		run_as "twot$n" "$hwt" flow $m "$tmp/two.data"
		run_as "twos$n" "$hwt" flow --by-stream $m "$tmp/two.data"
		by_cpu "$tmp/twot$n.out" >"$tmp/twot$n.cpu"
		by_cpu "$tmp/twos$n.out" >"$tmp/twos$n.cpu"
		same "in time order, two threads ($m): each cpu's lines" \
			"$tmp/twos$n.cpu" "$tmp/twot$n.cpu"
		check
		[ "$(grep -c '^\[pid ' "$tmp/twot$n.out")" -gt 10 ] ||
			fail "in time order, two threads ($m): no turns"
		for f in two deep3; do
			[ "$f" = two ] || run_as "${f}t$n" "$hwt" flow $m \
				"$tmp/$f.data"
			run_as "${f}j$n" env HWT_SEGMENT_SIZE=256 "$hwt" flow \
				-j2 $m "$tmp/$f.data"
			same "in time order, $f ($m): -j2 vs -j1" \
				"$tmp/${f}t$n.out" "$tmp/${f}j$n.out"
			run_as "${f}k$n" env HWT_SEGMENT_SIZE=300 "$hwt" flow \
				-j3 $m "$tmp/$f.data"
			same "in time order, $f ($m): -j3 vs -j1" \
				"$tmp/${f}t$n.out" "$tmp/${f}k$n.out"
		done
	done
	check
	awk '/^[0-9a-f]{16}  [0-9a-f]{16}  / {
		if ($1 < last) back++; last = $1; n++ }
	     END { if (n < 1000 || back) {
		printf "%d timed lines, %d going back\n", n, back; exit 1 } }' \
		"$tmp/twot--insn--time.out" >"$tmp/awk.out" ||
		fail "in time order, two threads: $(cat "$tmp/awk.out")"
	run_as twoi "$hwt" flow "$tmp/two.data"
	sed 's/^[0-9a-f]\{16\}  //' "$tmp/twot--insn--time.out" \
		>"$tmp/twot.cut"
	same "in time order, two threads: flow as flow --time" \
		"$tmp/twot.cut" "$tmp/twoi.out"
	contains "--by-stream: stream by stream" "$tmp/twos--blocks.out" \
		'^\[pid 1234 tid 1235\]$'
fi

# ---- lines chosen: --pid, --tid, -C, --time-range ------------------

# What is chosen is what the whole output has of those threads, CPUs and
# times (perf script's cross-check of it is above): flow's lines in every
# mode, in time order and --by-stream, -j2 and -j3 as -j1; all chosen
# prints the output as it was; hwt calls keeps its numbers, depths and
# instruction counts, --folded a chosen thread's callers; hwt last the
# streams whose trace ends in the thread. Lost data prints whatever is
# chosen (below, with the files that have it).

# The lines (not [pid ...] ones) that follow a [pid P tid T...] line of
# tid $2 in $1, with the files' headers.
of_tid() {
	awk -v t="$2" '/^\[pid /{ on = ($4 == t "]" || $4 == t); next }
		/^#/ || on' "$1"
}
if per_cpu "$tmp/two.data"; then
	for m in "--insn" "--blocks" "--branches"; do
		run_as "sa$m" "$hwt" flow $m "$tmp/two.data"
		run_as "sb$m" "$hwt" flow $m --tid 1235 "$tmp/two.data"
		of_tid "$tmp/sa$m.out" 1235 >"$tmp/sa$m.want"
		grep -v '^\[pid ' "$tmp/sb$m.out" >"$tmp/sb$m.got"
		same "--tid 1235 ($m): tid 1235's lines" "$tmp/sa$m.want" \
			"$tmp/sb$m.got"
		run_as "sc$m" "$hwt" flow $m -C 0,1 "$tmp/two.data"
		same "-C 0,1 ($m): all, as without" "$tmp/sa$m.out" \
			"$tmp/sc$m.out"
		run_as "sd$m" "$hwt" flow $m --by-stream "$tmp/two.data"
		run_as "se$m" "$hwt" flow $m --by-stream -C 0-1 "$tmp/two.data"
		same "--by-stream -C 0-1 ($m): all, as without" \
			"$tmp/sd$m.out" "$tmp/se$m.out"
		run_as "sf$m" "$hwt" flow $m --by-stream --tid 1234 \
			"$tmp/two.data"
		of_tid "$tmp/sd$m.out" 1234 >"$tmp/sd$m.want"
		grep -v '^\[pid ' "$tmp/sf$m.out" >"$tmp/sf$m.got"
		same "--by-stream --tid 1234 ($m): tid 1234's lines" \
			"$tmp/sd$m.want" "$tmp/sf$m.got"
		for sel in "--tid 1235" "-C 1" "--time-range 0x1d2c3b4a8078,0x1d2c3b4aa788"; do
			# shellcheck disable=SC2086
			run_as sj env HWT_SEGMENT_SIZE=256 "$hwt" flow -j2 $m \
				$sel "$tmp/two.data"
			# shellcheck disable=SC2086
			run_as sk env HWT_SEGMENT_SIZE=300 "$hwt" flow -j3 $m \
				--by-stream $sel "$tmp/two.data"
			# shellcheck disable=SC2086
			run_as s1 "$hwt" flow $m $sel "$tmp/two.data"
			# shellcheck disable=SC2086
			run_as s2 "$hwt" flow $m --by-stream $sel "$tmp/two.data"
			same "$sel ($m): -j2 vs -j1" "$tmp/s1.out" "$tmp/sj.out"
			same "$sel ($m) --by-stream: -j3 vs -j1" "$tmp/s2.out" \
				"$tmp/sk.out"
		done
	done
	# A TSC window: the lines of --time whose TSC is in it (the two
	# threads' lines in the 3rd to 5th of 11 TSC packets).
	run_as st "$hwt" flow --time --by-stream "$tmp/two.data"
	run_as su "$hwt" flow --time --by-stream \
		--time-range 0x1d2c3b4a8078,0x1d2c3b4aa788 "$tmp/two.data"
	awk '/^#/ || (/^[0-9a-f]{16}  / && $1 >= "00001d2c3b4a8078" &&
		      $1 <= "00001d2c3b4aa788")' "$tmp/st.out" >"$tmp/st.want"
	grep -v '^\[pid ' "$tmp/su.out" >"$tmp/su.got"
	same "--time-range 0xA,0xB: the lines of --time in it" \
		"$tmp/st.want" "$tmp/su.got"
	check
	[ "$(grep -c '^0000' "$tmp/su.got")" -gt 100 ] &&
		[ "$(grep -c '^0000' "$tmp/su.got")" -lt \
		  "$(grep -c '^0000' "$tmp/st.out")" ] ||
		fail "--time-range 0xA,0xB: $(grep -c '^0000' "$tmp/su.got") lines"
	# A raw trace: its TSC chooses as well (-j2 as -j1).
	run_as rt "$hwt" flow --time --elf "$tmp/deep" "$tmp/deep.pt"
	run_as ru "$hwt" flow --time --elf "$tmp/deep" \
		--time-range 0x1d2c3b4a8078,0x1d2c3b4aa788 "$tmp/deep.pt"
	run_as rv env HWT_SEGMENT_SIZE=256 "$hwt" flow -j2 --time \
		--elf "$tmp/deep" --time-range 0x1d2c3b4a8078,0x1d2c3b4aa788 \
		"$tmp/deep.pt"
	awk '/^[0-9a-f]{16}  / && $1 >= "00001d2c3b4a8078" &&
	     $1 <= "00001d2c3b4aa788"' "$tmp/rt.out" >"$tmp/rt.want"
	grep '^[0-9a-f]\{16\}  ' "$tmp/ru.out" >"$tmp/ru.got"
	same "raw trace --time-range 0xA,0xB: the lines of --time in it" \
		"$tmp/rt.want" "$tmp/ru.got"
	same "raw trace --time-range: -j2 vs -j1" "$tmp/ru.out" "$tmp/rv.out"
	# Two windows: the lines of each.
	run_as sv "$hwt" flow --time --by-stream --time-range \
		"0x1d2c3b4a8078,0x1d2c3b4a8078 0x1d2c3b4aa788,0x1d2c3b4aa788" \
		"$tmp/two.data"
	awk '/^#/ || /^00001d2c3b4a8078  / || /^00001d2c3b4aa788  /' \
		"$tmp/st.out" >"$tmp/sv.want"
	grep -v '^\[pid ' "$tmp/sv.out" >"$tmp/sv.got"
	same "--time-range: two windows" "$tmp/sv.want" "$tmp/sv.got"

	# --perf-time: --time's lines, each TSC as one perf time (going up
	# with it); a window of that time in seconds chooses what the TSC's
	# chooses.
	run_as pa "$hwt" flow --time "$tmp/two.data"
	run_as pb "$hwt" flow --perf-time "$tmp/two.data"
	paste -d ' ' "$tmp/pa.out" "$tmp/pb.out" |
		awk '$1 ~ /^[0-9a-f]{16}$/ {
			if (!($4 ~ /^[0-9]+\.[0-9]{9}$/) || $2 != $5) bad++
			if (($1 in t) && t[$1] != $4) bad++
			t[$1] = $4; n++ }
		     END { for (a in t) for (b in t)
			if ((a < b) != (t[a] < t[b]) && a != b) bad++
			if (!n || bad) { print n " lines, " bad " bad"; exit 1 } }' \
		>"$tmp/pt.awk" ||
		fail "flow --perf-time vs --time: $(cat "$tmp/pt.awk")"
	sed 's/^[0-9a-f]\{16\}  //' "$tmp/pa.out" >"$tmp/pa.cut"
	sed 's/^[0-9]*\.[0-9]\{9\}  //' "$tmp/pb.out" >"$tmp/pb.cut"
	same "flow --perf-time: --time's lines" "$tmp/pa.cut" "$tmp/pb.cut"
	for k in 2 3 7; do
		tsc=$(awk '$1 ~ /^[0-9a-f]{16}$/ { print $1 }' "$tmp/pa.out" |
			sort -u | sed -n "${k}p")
		sec=$(awk -v t="$tsc" '$1 == t { print $4; exit }' \
			<(paste -d ' ' "$tmp/pa.out" "$tmp/pb.out"))
		run_as pc "$hwt" flow --time-range "0x$tsc,0x$tsc" \
			"$tmp/two.data"
		run_as pd "$hwt" flow --time-range "$sec,$sec" "$tmp/two.data"
		same "--time-range $sec,$sec as 0x$tsc,0x$tsc" "$tmp/pc.out" \
			"$tmp/pd.out"
	done
	run_as pe "$hwt" calls --perf-time "$tmp/two.data"
	run_as pf "$hwt" calls --time "$tmp/two.data"
	check
	[ "$(cut -f 1-3 "$tmp/pe.out" | md5sum)" = \
	  "$(cut -f 1-3 "$tmp/pf.out" | md5sum)" ] &&
		grep -Eq '^[0-9]+	.*	time [0-9]+\.[0-9]{9}$' "$tmp/pe.out" ||
		fail "calls --perf-time: not --time's lines with perf's times"

	# hwt calls: tid 1235's lines, numbered as in the whole history.
	run_as ca "$hwt" calls --time "$tmp/two.data"
	run_as cb "$hwt" calls --time --tid 1235 "$tmp/two.data"
	of_tid "$tmp/ca.out" 1235 >"$tmp/ca.want"
	grep -v '^\[pid ' "$tmp/cb.out" >"$tmp/cb.got"
	same "calls --tid 1235: its lines, numbers kept" "$tmp/ca.want" \
		"$tmp/cb.got"
	check
	[ "$(grep -m 1 '^[0-9]' "$tmp/cb.got" | cut -f 1)" -gt 1 ] ||
		fail "calls --tid 1235: numbered from 1"
	run_as cc "$hwt" calls --time --time-range \
		0x1d2c3b4a8078,0x1d2c3b4aa788 "$tmp/two.data"
	awk -F '\t' '/^#/ || ($4 >= "tsc 00001d2c3b4a8078" &&
			      $4 <= "tsc 00001d2c3b4aa788")' \
		"$tmp/ca.out" >"$tmp/cc.want"
	grep -v '^\[pid ' "$tmp/cc.out" >"$tmp/cc.got"
	same "calls --time-range: the lines of the window" "$tmp/cc.want" \
		"$tmp/cc.got"
	for sel in "--tid 1235" "--time-range 0x1d2c3b4a8078,0x1d2c3b4aa788"; do
		for f in "" --folded --timeline; do
			# shellcheck disable=SC2086
			run_as c1 "$hwt" calls $f $sel "$tmp/two.data"
			# shellcheck disable=SC2086
			run_as c2 env HWT_SEGMENT_SIZE=256 "$hwt" calls -j2 $f \
				$sel "$tmp/two.data"
			same "calls $f $sel: -j2 vs -j1" "$tmp/c1.out" \
				"$tmp/c2.out"
		done
	done
	# --folded: tid 1235's stacks, without "pid P tid T;" (one thread);
	# a window's stacks keep their callers from before it.
	run_as cf "$hwt" calls --folded "$tmp/two.data"
	run_as cg "$hwt" calls --folded --tid 1235 "$tmp/two.data"
	sed -n 's/^pid 1234 tid 1235;//p' "$tmp/cf.out" >"$tmp/cf.want"
	same "calls --folded --tid 1235: its stacks" "$tmp/cf.want" \
		"$tmp/cg.out"
	run_as ch "$hwt" calls --folded --time-range \
		0x1d2c3b4a8078,0x1d2c3b4aa788 "$tmp/two.data"
	contains "calls --folded --time-range: callers kept" "$tmp/ch.out" \
		'^pid 1234 tid 1235;top;f3;f1_loop [0-9]+$'
	check
	[ "$(awk '{ n += $NF } END { print n }' "$tmp/ch.out")" -lt \
	  "$(awk '{ n += $NF } END { print n }' "$tmp/cf.out")" ] ||
		fail "calls --folded --time-range: not fewer instructions"
	# --timeline: one thread's events, on the whole history's clock.
	run_as ct "$hwt" calls --timeline "$tmp/two.data"
	run_as cu "$hwt" calls --timeline --tid 1235 "$tmp/two.data"
	grep '"tid":1235,"name"' "$tmp/ct.out" >"$tmp/ct.want"
	grep '"tid":1235,"name"' "$tmp/cu.out" >"$tmp/cu.got"
	same "calls --timeline --tid 1235: its events, same times" \
		"$tmp/ct.want" "$tmp/cu.got"
	check
	! grep -q '"tid":1234,' "$tmp/cu.out" ||
		fail "calls --timeline --tid 1235: tid 1234's events"

	# hwt last --at T: as if the recording ended at T: the one-CPU
	# file's thread in f1_loop, called by f3 from top (at its end: in
	# done, no call), its last branches those of flow --branches up to
	# T; the thread that moved over 3 CPUs the same on the CPU it is on
	# then (its callers from the CPUs before: the runs kept up to T).
	run_as at0 "$hwt" last --no-lines "$tmp/deep1.data"
	contains "last: deep1's end" "$tmp/at0.out" \
		'#0  0x401049 done\+0x5  <- the trace ends here'
	for t in 0x1d2c3b4a9400 0x1d2c3b4c0000 0x1d2c3b4d8000; do
		run_as at1 "$hwt" last -n 6 --no-lines --at $t "$tmp/deep1.data"
		run_as at3 "$hwt" last -n 6 --no-lines --at $t "$tmp/deep3.data"
		check
		[ "$(grep -A 3 '^call stack at' "$tmp/at1.out" | tr -s ' ' |
			tr '\n' '|')" = "call stack at $t, innermost first:| #0 0x401033 f1_loop+0x2 <- here then| #1 0x40103d f3| #2 0x401013 top+0x6|" ] ||
			fail "last --at $t: not in f1_loop from f3 from top"
		sed 1d "$tmp/at1.out" >"$tmp/at1.blk"
		awk '/^# cpu/ { on = /the trace goes on$/; next } on && NF' \
			"$tmp/at3.out" >"$tmp/at3.blk"
		same "last --at $t: the moved thread as on one cpu" \
			"$tmp/at1.blk" "$tmp/at3.blk"
		"$hwt" flow --branches --time-range ",$t" "$tmp/deep1.data" |
			grep '^0x' | tail -n 6 >"$tmp/at.want"
		awk '/ -> / { print $2, $(NF - 1) }' "$tmp/at1.out" \
			>"$tmp/at.got"
		same "last --at $t: flow's branches up to then" \
			"$tmp/at.want" "$tmp/at.got"
	done
	run_as at4 "$hwt" last --at 0x1d2c3b4a6cf0 "$tmp/deep3.data"
	contains "last --at: a cpu whose trace is later" "$tmp/at4.out" \
		'^# cpu 2 .*: its trace starts after that$'
	# Named as mapped then: deep.b's code (the same, other names)
	# mapped over deep's halfway through (mkptdata --remap). hwt last
	# --at a time before names with deep's symbols, one after with
	# deep.b's, in a CPU's stream and in a thread's; hwt flow names each
	# block with the mapping it ran in: deep's, then deep.b's.
	for c in "--cpu 0" ""; do
		# shellcheck disable=SC2086
		"$mkptdata" $c --remap "$tmp/deep.b" --pt "$tmp/deep.pt" \
			--elf "$tmp/deep" "$tmp/remap.data" >/dev/null ||
			fail "mkptdata $c --remap"
		run_as rm1 "$hwt" last -n 3 --no-lines --at 0x1d2c3b4a9400 \
			"$tmp/remap.data"
		run_as rm2 "$hwt" last -n 3 --no-lines --at 0x1d2c3b4d8000 \
			"$tmp/remap.data"
		contains "last --at before a remap ($c)" "$tmp/rm1.out" \
			'#0  0x401033 f1_loop\+0x2  <- here then'
		contains "last --at after a remap ($c)" "$tmp/rm2.out" \
			'#0  0x401033 bf1_loop\+0x2  <- here then'
		check
		! grep -q ' b[a-z_0-9]*\(+0x[0-9a-f]*\)\{0,1\}$' "$tmp/rm1.out" ||
			fail "last --at before a remap ($c): deep.b's names"
		run_as rm3 "$hwt" flow --blocks "$tmp/remap.data"
		check
		awk '/^[0-9a-f]{16} / { b = $NF ~ /^b/; if (b) nb++; else if (nb) bad++
			     else n++ }
		     END { exit !(n > 100 && nb > 100 && !bad) }' \
			"$tmp/rm3.out" ||
			fail "flow --blocks with a remap ($c): not deep's, then deep.b's"
	done

	# hwt last: the streams that end in the thread, or of the CPU.
	run_as la "$hwt" last "$tmp/two.data"
	run_as lb "$hwt" last --tid 1235 "$tmp/two.data"
	run_as lc "$hwt" last -C 0 "$tmp/two.data"
	awk '/^$/ { n++; next } n == 1' "$tmp/la.out" >"$tmp/lb.want"
	awk '/^$/ { n++; next } n == 0' "$tmp/la.out" >"$tmp/lc.want"
	same "last --tid 1235: cpu 1's" "$tmp/lb.want" "$tmp/lb.out"
	same "last -C 0: cpu 0's" "$tmp/lc.want" "$tmp/lc.out"
fi

# What cannot be chosen says why, exit 1; bad lists and windows too.
for bad in "flow --stat --tid 1:choose lines: not with --stat" \
	"flow --tid 1 $tmp/calls.pt:this is a raw trace" \
	"flow --time-range 1,2 $tmp/calls.pt:give TSC values" \
	"flow --time-range 2,1:bad argument: 2,1" \
	"flow --time-range 1.0000000001,:bad argument" \
	"flow --time-range 5:bad argument" \
	"flow -C 1-x:want a list of CPUs" \
	"flow --pid:want a list of numbers" \
	"flow -C 0 $tmp/calls.data:streams are threads'" \
	"last -C 0 $tmp/calls.data:streams are threads'" \
	"last --time-range 1,2:unknown option" \
	"last --at 1,2:not a time" \
	"flow --perf-time $tmp/calls.pt:perf's time needs" \
	"flow --tid 1 $tmp/nonexistent.pt:nonexistent.pt"; do
	args=${bad%%:*}
	case $args in
	*"$tmp"*) ;;
	*) args="$args $tmp/two.data" ;;
	esac
	# shellcheck disable=SC2086
	run_as sbad "$hwt" $args
	rc=$?
	check
	[ $rc -ne 0 ] || fail "hwt $args: exit 0"
	contains "hwt $args: says why" "$tmp/sbad.err" "${bad#*:}"
done

# ---- -j: a stream cut at PSBs, the segments decoded on threads -----

# The loop program at 60,000 iterations (a 600 KB trace: 10 and more
# segments), packed with lost data at 300 trace offsets and 300 times,
# per thread and on a cpu handed to a second process 400 times; and the
# same trace with 12 bytes overwritten. -j2 and -j3 must print what -j1
# prints. A damaged TSC can take a segment's time past its end, where a
# segment would print a later one's notes, or take the stream's view
# where the segments after do not see it: hwt decodes the rest of the
# stream on one thread then (-v says so), which the damaged files make
# happen in the middle of a piece.
perfdata_loop "$tmp" big 60000 "$build" || {
	echo "FAIL: building the big loop program and its trace" >&2
	exit 1
}
cp "$tmp/big.pt" "$tmp/bad.pt"
for ob in 199412:25 201222:153 251438:255 310944:255 388765:25 389052:25 \
	401311:25 567623:255 573350:25 576361:85 600165:25 601117:153; do
	poke "$tmp/bad.pt" "${ob%:*}" "${ob#*:}"
done
for p in big bad; do
	"$mkptdata" --losses 300 --pt "$tmp/$p.pt" --elf "$tmp/big" \
		"$tmp/j$p.data" &&
		"$mkptdata" --cpu 0 --switch "4321:$tmp/big.b:400" \
			--losses 100 --pt "$tmp/$p.pt" --elf "$tmp/big" \
			"$tmp/jc$p.data" ||
		fail "mkptdata -j files ($p)"
done
for f in jbig jcbig jbad jcbad; do
	alone=0
	for cmd in "flow --blocks" "flow --branches" "flow --insn --time" \
		"coverage" "flow --stat" "calls --time"; do
		# shellcheck disable=SC2086
		run_as j1 "$hwt" $cmd "$tmp/$f.data"
		contains "$f.data has lost-data notes" "$tmp/j1.out" \
			'^\[warning: |^lost sideband records: 300 |^# all'
		for j in 2 3; do
			# shellcheck disable=SC2086
			run_as jn "$hwt" $cmd -v -j$j "$tmp/$f.data"
			same "hwt $cmd -j$j vs -j1 ($f.data)" "$tmp/j1.out" \
				"$tmp/jn.out"
			contains "hwt $cmd -j$j -v ($f.data): segments" \
				"$tmp/jn.err" ': [0-9]{2,} segments$'
			grep -q 'the rest on one thread' \
				"$tmp/jn.err" && alone=$((alone + 1))
		done
	done
	# Whole traces decode on threads to the end; the damaged ones go on
	# on one thread where their time jumped (in most runs: not where the
	# thread's own segments before saw the jump).
	check
	case $f:$alone in
	j*big:0 | j*bad:[1-9]*) ;;
	*) fail "-j: $alone runs of 10 on $f.data went on on one thread" ;;
	esac
done
# Read in pieces of 200,000 bytes: each piece is cut again.
for f in jbig jcbad; do
	run_as j1 env HWT_PIECE_SIZE=200000 "$hwt" flow --blocks "$tmp/$f.data"
	run_as jn env HWT_PIECE_SIZE=200000 "$hwt" flow --blocks -j3 \
		"$tmp/$f.data"
	same "in pieces: flow --blocks -j3 vs -j1 ($f.data)" "$tmp/j1.out" \
		"$tmp/jn.out"
done
# A stream is read in pieces (64 MiB), each with a decoder of its own:
# each must start with what the one before had at its first PSB (the
# time and CYC calibration, the exec mode and TSX state), as one decoder
# goes on over it. The big trace with a CYC after each TNT and an MTC
# after every eighth (times between TSCs come from the calibration),
# read in 64 KiB pieces (with 512-byte segments at -j2), must print what
# it prints in one piece.
awk '{ print } /^tnt/ { n++; print "cyc 40"
	if (n % 8 == 0) { ctc = (ctc + 1) % 256; print "mtc " ctc } }' \
	"$tmp/big.ptdesc" >"$tmp/cyc.ptdesc"
if "$build/ptgen" "$tmp/cyc.pt" <"$tmp/cyc.ptdesc" &&
	"$mkptdata" --pt "$tmp/cyc.pt" --elf "$tmp/big" "$tmp/cyc.data"; then
	for cmd in "flow --insn --time" "calls --time"; do
		# shellcheck disable=SC2086
		run_as j1 "$hwt" $cmd "$tmp/cyc.data"
		for j in 1 2; do
			# shellcheck disable=SC2086
			run_as jn env HWT_PIECE_SIZE=65536 HWT_SEGMENT_SIZE=512 \
				"$hwt" $cmd -j$j "$tmp/cyc.data"
			same "64 KiB pieces: $cmd -j$j vs one piece (cyc.data)" \
				"$tmp/j1.out" "$tmp/jn.out"
		done
	done
	# (Times from CYCs: more than one per TSC.)
	check
	[ "$(cut -f4 "$tmp/j1.out" | sort -u | wc -l)" -gt 10000 ] ||
		fail "cyc.data: calls --time shows few times"
	# A piece's first segment that ends in an error at the next one's
	# PSB (one byte damaged): from there one thread decodes, and it must
	# start with what the piece before left, as the segment did (it
	# started with nothing: 23 lines of flow --insn --time differed).
	cp "$tmp/cyc.pt" "$tmp/cycbad.pt"
	poke "$tmp/cycbad.pt" 140652 25
	if "$mkptdata" --pt "$tmp/cycbad.pt" --elf "$tmp/big" \
		"$tmp/cycbad.data"; then
		run_as j1 env HWT_PIECE_SIZE=4096 HWT_SEGMENT_SIZE=512 \
			"$hwt" flow --insn --time "$tmp/cycbad.data"
		run_as jn env HWT_PIECE_SIZE=4096 HWT_SEGMENT_SIZE=512 \
			"$hwt" flow --insn --time -j2 -v "$tmp/cycbad.data"
		same "a piece's first segment on one thread: -j2 vs -j1" \
			"$tmp/j1.out" "$tmp/jn.out"
		contains "a piece's first segment on one thread (-v)" \
			"$tmp/jn.err" 'segment 0 at 0x[0-9a-f]+ ends in an error'
	else
		fail "the damaged CYC trace's perf.data"
	fi
else
	fail "the CYC trace and its perf.data"
fi

# Segments of 512 bytes: some cuts fall where the cpu went to the other
# process, and a block's symbol is from the process that ran it (hwt
# calls: a line starts where the process changes).
for f in jcbig jcbad; do
	for cmd in "flow --blocks" "calls"; do
		# shellcheck disable=SC2086
		run_as j1 "$hwt" $cmd "$tmp/$f.data"
		# shellcheck disable=SC2086
		run_as jn env HWT_SEGMENT_SIZE=512 "$hwt" $cmd -j2 -v \
			"$tmp/$f.data"
		same "512-byte segments: $cmd -j2 vs -j1 ($f.data)" \
			"$tmp/j1.out" "$tmp/jn.out"
		contains "512-byte segments ($cmd, $f.data)" "$tmp/jn.err" \
			': [0-9]{3,} segments$'
	done
	# hwt calls: all lines but the last few through the temporary file.
	run_as jn env HWT_CALLS_CHUNK=3 "$hwt" calls "$tmp/$f.data"
	same "calls through the file ($f.data)" "$tmp/j1.out" "$tmp/jn.out"
	# --stream: the same lines and notes, in the same places; only the
	# indentation may differ.
	run_as j1 "$hwt" calls --time "$tmp/$f.data"
	run_as jn env HWT_SEGMENT_SIZE=512 "$hwt" calls --time --stream -j2 \
		"$tmp/$f.data"
	sed 's/\t */\t/' "$tmp/j1.out" >"$tmp/j1.flat"
	sed 's/\t */\t/' "$tmp/jn.out" >"$tmp/jn.flat"
	same "calls --stream -j2 vs calls, indentation aside ($f.data)" \
		"$tmp/j1.flat" "$tmp/jn.flat"
done

# Lines chosen: lost data prints whatever threads are chosen (whose trace
# it was is not known), in the same places among the lines, and in the
# times chosen (hwt calls: wherever); the damaged file's errors too. A
# thread's stream of another thread is not decoded.
for f in jcbig jcbad; do
	for cmd in flow calls; do
		run_as k1 "$hwt" $cmd "$tmp/$f.data"
		grep '^\[warning\|^\[error' "$tmp/k1.out" >"$tmp/k1.notes"
		for sel in "--tid 4321" "--time-range 0x0,0xffffffffffffffff"; do
			# shellcheck disable=SC2086
			run_as k2 "$hwt" $cmd $sel "$tmp/$f.data"
			grep '^\[warning\|^\[error' "$tmp/k2.out" \
				>"$tmp/k2.notes"
			same "$cmd $sel: all notes ($f.data)" "$tmp/k1.notes" \
				"$tmp/k2.notes"
			# shellcheck disable=SC2086
			run_as k3 env HWT_SEGMENT_SIZE=512 "$hwt" $cmd -j2 $sel \
				"$tmp/$f.data"
			same "$cmd $sel: -j2 vs -j1 ($f.data)" "$tmp/k2.out" \
				"$tmp/k3.out"
		done
	done
	run_as k1 "$hwt" flow "$tmp/$f.data"
	run_as k4 "$hwt" flow --tid 4321 "$tmp/$f.data"
	of_tid "$tmp/k1.out" 4321 >"$tmp/k4.want"
	grep -v '^\[pid ' "$tmp/k4.out" >"$tmp/k4.got"
	check
	# (The notes print in place: between the other thread's lines too.)
	[ "$(grep -vc '^\[warning\|^\[error' "$tmp/k4.got")" -eq \
	  "$(grep -vc '^\[warning\|^\[error' "$tmp/k4.want")" ] ||
		fail "flow --tid 4321: not the lines of 4321 ($f.data)"
done
check
[ "$(grep -c '^\[error' "$tmp/k1.notes")" -gt 0 ] ||
	fail "jcbad.data: no errors to keep"
# Outside the times chosen: not shown, but said (lost data is never
# silent); the decode stops past them (the rest could only be hidden),
# which -j does not.
run_as k6 "$hwt" flow --time-range 0x0,0x1 "$tmp/jcbig.data"
check
! grep -q '^\[warning' "$tmp/k6.out" &&
	grep -q 'errors or lost data outside the times chosen' \
		"$tmp/k6.err" ||
	fail "flow --time-range 0x0,0x1: notes shown or not said"
tsc=$("$hwt" flow --time "$tmp/jcbig.data" | awk '$1 ~ /^[0-9a-f]{16}$/ { print $1 }' |
	sort -u | sed -n 40p)
for m in --insn --blocks --branches; do
	run_as k7 "$hwt" flow $m --time-range ",0x$tsc" "$tmp/jcbig.data"
	run_as k8 env HWT_SEGMENT_SIZE=4096 "$hwt" flow -j2 $m \
		--time-range ",0x$tsc" "$tmp/jcbig.data"
	same "flow $m --time-range ,0x$tsc: stopping past it vs -j2" \
		"$tmp/k8.out" "$tmp/k7.out"
done
# A start to every window: each stream's decode starts at a PSB before
# them (perf script --time's fast-forward; -v says where), and prints
# what the decode from the trace's start prints (HWT_NO_SEEK=1), stderr
# included: windows from the first tenth to the last, every line mode,
# -j2, two windows, 64 KiB pieces; one CPU's, two CPUs' and a thread's
# streams, a CYC trace (the calibration it has at the PSB), lost data
# before the window (sideband notes, bad packets, an OVF: said, not
# shown), a raw trace. Not where the time goes back (jcbad.data's
# damaged TSCs), nor with a window open at its start.
awk '/^psb$/ { if (++n == 300) print "ovf" } { print }' "$tmp/big.ptdesc" \
	>"$tmp/ovf.ptdesc"
"$build/ptgen" "$tmp/ovf.pt" <"$tmp/ovf.ptdesc" &&
	"$mkptdata" --pt "$tmp/ovf.pt" --elf "$tmp/big" "$tmp/ovf.data" \
		>/dev/null || fail "the OVF trace's perf.data"
# seek_same DESC FLOW-ARGS...: the same with and without the seek, which
# -v says was made.
seek_same() {
	local desc=$1
	shift
	run_as sk1 "$hwt" flow -v "$@"
	run_as sk0 env HWT_NO_SEEK=1 "$hwt" flow "$@"
	same "$desc: as from the start" "$tmp/sk0.out" "$tmp/sk1.out"
	grep -v 'decoding from the PSB\|segments\{0,1\}$' "$tmp/sk1.err" \
		>"$tmp/sk1.e"
	check
	cmp -s "$tmp/sk0.err" "$tmp/sk1.e" || fail "$desc: stderr differs"
	grep -q 'decoding from the PSB at 0x[0-9a-f]*[1-9a-f]' "$tmp/sk1.err" ||
		fail "$desc: decoded from the trace's start"
}
# tsc_at FILE Q: the TSC of the lines Q% into flow --time's times.
tsc_at() {
	"$hwt" flow --time "$@" 2>/dev/null |
		awk '$1 ~ /^[0-9a-f]{16}$/ { print $1 }' | sort -u >"$tmp/sk.tsc"
	sed -n "$(($(wc -l <"$tmp/sk.tsc") * q / 100 + 1))p" "$tmp/sk.tsc"
}
for f in two deep1 cyc jcbig jbig ovf; do
	[ -s "$tmp/$f.data" ] || continue
	for q in 10 50 90; do
		t=0x$(tsc_at "$tmp/$f.data")
		for m in --insn --blocks --branches; do
			[ $q = 50 ] || [ $m = --branches ] || continue
			seek_same "$f.data $m --time-range $t," $m --time \
				--time-range "$t," "$tmp/$f.data"
		done
	done
	t2=0x$(q=95 tsc_at "$tmp/$f.data")
	seek_same "$f.data: a closed window" --time-range "$t,$t2" \
		"$tmp/$f.data"
	seek_same "$f.data: two windows" --branches --time \
		--time-range "$t2,$t2 $t," "$tmp/$f.data"
	seek_same "$f.data: -j2" -j2 --time-range "$t," "$tmp/$f.data"
	seek_same "$f.data: --by-stream" --by-stream --time-range "$t," \
		"$tmp/$f.data"
	HWT_PIECE_SIZE=65536 seek_same "$f.data: in 64 KiB pieces" --time \
		--time-range "$t," "$tmp/$f.data"
done
# A window from just past a PSB's TSC: the lines after that PSB are in
# it, their times from the calibration the decode started with there.
t=$("$hwt" dump "$tmp/cyc.data" |
	awk '$2 == "tsc" && ++n == 200 { sub("tsc=", "", $3); print $3 }')
seek_same "cyc.data: from just past a PSB's TSC" --time \
	--time-range "$(printf '0x%x' $((t + 1)))," "$tmp/cyc.data"
# A damaged trace: a TNT bit flipped before the 300th PSB, so the flow
# does not come to its PSB+'s IP (an error there). Windows from just past
# the TSCs of PSBs 299 to 301: the decode from a PSB before prints the
# lines the decode from the start prints; where it starts at the damaged
# PSB itself, the error of the flow before it is not looked for (the
# decode from the start says on stderr that one is outside the times).
l=$(awk '/^psb$/ && ++n == 300 { print last; exit } /^tnt/ { last = NR }' \
	"$tmp/big.ptdesc")
awk -v l="$l" 'NR == l { b = substr($2, length($2))
		$2 = substr($2, 1, length($2) - 1) (b == "!" ? "." : "!") }
	{ print }' "$tmp/big.ptdesc" >"$tmp/mis.ptdesc"
"$build/ptgen" "$tmp/mis.pt" <"$tmp/mis.ptdesc" &&
	"$mkptdata" --pt "$tmp/mis.pt" --elf "$tmp/big" "$tmp/mis.data" \
		>/dev/null || fail "the damaged trace's perf.data"
run_as mis "$hwt" flow --branches "$tmp/mis.data"
contains "mis.data: an error at the 300th PSB" "$tmp/mis.out" \
	'^\[error at offset 0x5ec0, ip 0x[0-9a-f]+: trace does not match'
for k in 299 300 301; do
	t=$("$hwt" dump "$tmp/mis.data" |
		awk -v k=$k '$2 == "tsc" && ++n == k { sub("tsc=", "", $3); print $3 }')
	run_as sk1 "$hwt" flow -v --branches \
		--time-range "$(printf '0x%x' $((t + 1)))," "$tmp/mis.data"
	run_as sk0 env HWT_NO_SEEK=1 "$hwt" flow --branches \
		--time-range "$(printf '0x%x' $((t + 1)))," "$tmp/mis.data"
	same "mis.data: from past PSB $k's TSC: as from the start" \
		"$tmp/sk0.out" "$tmp/sk1.out"
	contains "mis.data: from past PSB $k's TSC: a seek" "$tmp/sk1.err" \
		'decoding from the PSB at 0x[0-9a-f]*[1-9a-f]'
done
# The overflow (2% into ovf.data): a line of --branches too; in a window
# from 1% in, shown; in one from 10% in, said.
for q in 1 10; do
	t=0x$(tsc_at "$tmp/ovf.data")
	run_as sk$q "$hwt" flow --branches -v --time-range "$t," \
		"$tmp/ovf.data"
done
check
grep -q '^\[overflow, ip: 000000000040100d\]$' "$tmp/sk1.out" &&
	! grep -q 'outside the times chosen' "$tmp/sk1.err" &&
	! grep -q '^\[overflow' "$tmp/sk10.out" &&
	grep -q 'lost data outside the times chosen' "$tmp/sk10.err" &&
	grep -q 'decoding from the PSB' "$tmp/sk10.err" ||
	fail "ovf.data: the overflow not shown in its window, or not said"
t=0x$(q=50 tsc_at "$tmp/jcbad.data")
run_as sk3 "$hwt" flow -v --time-range "$t," "$tmp/jcbad.data"
run_as sk4 "$hwt" flow -v --time-range ",$t" "$tmp/ovf.data"
check
! grep -q 'decoding from' "$tmp/sk3.err" "$tmp/sk4.err" ||
	fail "a seek where the time goes back, or with a window open"
t=0x$(q=50 tsc_at --elf "$tmp/big" "$tmp/big.pt")
seek_same "a raw trace" --time --elf "$tmp/big" --time-range "$t," \
	"$tmp/big.pt"
seek_same "a raw trace, -j2" -j2 --elf "$tmp/big" --time-range "$t," \
	"$tmp/big.pt"

run_as k5 "$hwt" flow --tid 9 "$tmp/jbig.data"
check
[ "$(cat "$tmp/k5.out")" = "$(head -n 1 "$tmp/k5.out")" ] &&
	grep -q '^# stream idx 0: pid 1234 tid 1234' "$tmp/k5.out" ||
	fail "flow --tid 9 of tid 1234's stream: not its header alone"

# ---- lost data: an AUX record that says the buffer was full ----------

# PERF_RECORD_AUX (11) with the sample id trailer is 0x40 bytes: make it
# say that only the first 0x400 bytes came out and the rest was lost.
cp "$tmp/loop.data" "$tmp/trunc.data"
off=$(record_at "$tmp/trunc.data" 11 64)
check
if [ -z "$off" ]; then
	fail "no PERF_RECORD_AUX in loop.data to patch"
else
	poke "$tmp/trunc.data" $((off + 16)) 0 4 0 0 0 0 0 0	# aux_size
	poke "$tmp/trunc.data" $((off + 24)) 1			# TRUNCATED
	run_as tr "$hwt" flow --branches "$tmp/trunc.data" ||
		fail "hwt flow on trunc.data: exit $?"
	contains "truncation warning" "$tmp/tr.out" \
		'^\[warning: the AUX buffer was full.*aux offset 0x0 size 0x400'
	# Where it happened: branches before and after it (the trace
	# itself is whole, the record only says what was lost).
	check
	awk '/^\[warning: the AUX buffer/ { w = NR } /^0x/ { if (w) a++; else b++ }
		END { exit !(w && a > 100 && b > 100) }' "$tmp/tr.out" ||
		fail "the truncation warning is not inside the branch list"
	run_as trs "$hwt" flow --stat "$tmp/trunc.data"
	contains "--stat counts the truncation" "$tmp/trs.out" \
		'^aux truncated: 1$'
	run_as trd "$hwt" dump "$tmp/trunc.data"
	contains "hwt dump lists the truncation" "$tmp/trd.out" \
		'^0000000000000400  \[warning: the AUX buffer was full'
fi

# ---- (3) bad input --------------------------------------------------

# A perf.data without AUX data.
if [ $have_perf -eq 1 ]; then
	if perf record -q -e dummy -o "$tmp/dummy.data" -- true \
		>/dev/null 2>&1; then
		for cmd in "flow" "calls" "coverage" "dump"; do
			check
			# shellcheck disable=SC2086
			if run_as noaux "$hwt" $cmd "$tmp/dummy.data"; then
				fail "hwt $cmd on a perf.data without AUX data:" \
					"exit 0"
			fi
			contains "hwt $cmd: no AUX data message" \
				"$tmp/noaux.err" "no AUX area trace data"
		done
	else
		fail "perf record -e dummy does not work here"
	fi
fi

# An AUX type hwt cannot decode yet: AUXTRACE_INFO (70) of intel_pt is
# 8 + 8 + 17 * 8 = 0x98 bytes; its type (u32 at +8) becomes intel_bts.
cp "$tmp/calls.data" "$tmp/bts.data"
off=$(record_at "$tmp/bts.data" 70 152)
check
if [ -z "$off" ]; then
	fail "no AUXTRACE_INFO in calls.data to patch"
else
	poke "$tmp/bts.data" $((off + 8)) 2
	for cmd in flow dump; do
		check
		if run_as bts "$hwt" $cmd "$tmp/bts.data"; then
			fail "hwt $cmd on intel_bts data: exit 0"
		fi
		contains "hwt $cmd: intel_bts not supported" "$tmp/bts.err" \
			"not supported yet: intel_bts"
	done
fi

# The mapped ELF is gone: a warning naming it, the decode goes on with
# "no memory mapped" errors.
cp "$tmp/calls" "$tmp/gone"
"$mkptdata" --pt "$tmp/calls.pt" --elf "$tmp/gone" "$tmp/gone.data" ||
	fail "mkptdata gone.data"
rm -f "$tmp/gone"
for cmd in flow calls; do
	run_as gone "$hwt" $cmd "$tmp/gone.data"
	contains "hwt $cmd: warning names the missing ELF" "$tmp/gone.err" \
		"warning: .*$tmp/gone"
	contains "hwt $cmd: NOMAP errors" "$tmp/gone.out" \
		'^\[error at offset 0x[0-9a-f]+, ip 0x401000: no memory mapped'
done

# A truncated file: whatever came before its end is decoded or reported.
head -c 700 "$tmp/calls.data" >"$tmp/short.data"
run_as short "$hwt" flow "$tmp/short.data"
check
if [ ! -s "$tmp/short.err" ]; then
	fail "hwt flow on a truncated perf.data: no message"
fi

finish "$compared branches compared with perf script"

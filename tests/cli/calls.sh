# SPDX-License-Identifier: BSD-2-Clause
# Golden tests of `hwt calls` on a tiny ELF program (yasm, ld) and traces
# written by ptgen:
#  - a line starts where the function changes, as gdb's record
#    function-call-history has it: after a call or a return, at a jump to
#    another function, a jump to the next instruction when that is
#    another symbol, and code that falls through into the next symbol;
#  - -j N prints what -j1 prints: a function cut by a PSB (a -j cut) is
#    one line, and a return across cuts goes back to the right depth;
#  - lines beyond memory go to a temporary file; when there is none,
#    hwt calls says so and fails;
#  - --stream prints the lines as they come, indented from the first;
#  - in a cpu-mode perf.data (mkptdata), each thread has a stack of its
#    own.
#
#   bash tests/cli/calls.sh path/to/hwt BUILD_DIR
. "$(dirname "$0")/lib.bash" calls "$@"
ptgen=$build/ptgen
mkptdata=$build/mkptdata
wants yasm ld
built "$ptgen" "$mkptdata"

#   401000 _start: call a      401005 call c      40100a call spin
#   40100f jmp rax
#   401011 a: nop              401012 jmp b (to the next instruction)
#   401014 b: nop              401015 ret
#   401016 c: nop              (falls through into d)
#   401017 d: nop              401018 ret
#   401019 spin: mov ecx, 25   40101e .l: dec ecx   401020 jnz .l
#   401022 ret
cat >"$tmp/prog.asm" <<'EOF'
bits 64
global _start:function
global a:function
global b:function
global c:function
global d:function
global spin:function
section .text
_start:
	call a
	call c
	call spin
	jmp rax
a:
	nop
	jmp short b
b:
	nop
	ret
c:
	nop
d:
	nop
	ret
spin:
	mov ecx, 25
.l:
	dec ecx
	jnz .l
	ret
EOF
yasm -f elf64 -o "$tmp/prog.o" "$tmp/prog.asm" &&
	ld -Ttext=0x401000 -e _start -o "$tmp/prog" "$tmp/prog.o" || exit 1

# The returns of a and c are compressed (TNT); the loop is cut by two
# PSB+s at .l (24 taken jnz in all), and returns with a TIP, as a CPU
# writes it after a PSB.
psb_l=(psb "mode.exec 64" "fup 0x40101e" psbend)
ptgen_trace t psb "mode.exec 64" psbend "tip.pge 0x401000" "tnt !!" \
	"tnt !!!!!!!!" "${psb_l[@]}" "tnt !!!!!!!!" "${psb_l[@]}" \
	"tnt !!!!!!!!." "tip 0x40100f" "tip.pgd -"

cat >"$tmp/golden" <<'EOF'
1	_start	inst 1,1
2	  a	inst 2,3
3	  b	inst 4,5
4	_start	inst 6,6
5	  c	inst 7,7
6	  d	inst 8,9
7	_start	inst 10,10
8	  spin	inst 11,62
9	_start	inst 63,63
EOF
golden "calls" "$hwt" calls --elf "$tmp/prog" "$tmp/t.pt" <"$tmp/golden"
for j in 2 3; do
	golden "calls -j$j, cut at each PSB" env HWT_SEGMENT_SIZE=16 \
		"$hwt" calls -j$j --elf "$tmp/prog" "$tmp/t.pt" <"$tmp/golden"
done
run "calls -j2 -v" env HWT_SEGMENT_SIZE=16 "$hwt" calls -j2 -v \
	--elf "$tmp/prog" "$tmp/t.pt"
if ! grep -q ': 3 segments$' "$tmp/err"; then
	fail "calls -j2: not cut in 3 segments"
	cat "$tmp/err" >&2
fi

# --folded: each line's instructions at its stack of callers (b runs
# where a jumped to it, at a's level; d where c fell into it), summed;
# the lines of a -j2 cut at each PSB and those through the file count
# the same.
cat >"$tmp/golden.fold" <<'EOF'
_start 4
_start;a 2
_start;b 2
_start;c 1
_start;d 2
_start;spin 52
EOF
golden "calls --folded" "$hwt" calls --folded --elf "$tmp/prog" \
	"$tmp/t.pt" <"$tmp/golden.fold"
golden "calls --folded -j2, cut at each PSB" env HWT_SEGMENT_SIZE=16 \
	HWT_CALLS_CHUNK=2 "$hwt" calls --folded -j2 --elf "$tmp/prog" \
	"$tmp/t.pt" <"$tmp/golden.fold"
run "calls --folded --stream" "$hwt" calls --folded --stream \
	--elf "$tmp/prog" "$tmp/t.pt"
if [ "$rc" = 0 ] || [ -s "$tmp/out" ] ||
	! grep -q 'not with --stream' "$tmp/err"; then
	fail "calls --folded --stream: rc $rc, no message"
fi

# --timeline: a call per function call, as Chrome trace-event JSON
# (Perfetto's UI), timed by instructions: a ends where b starts (a jump to
# another function), _start at the end of the trace.
cat >"$tmp/golden.json" <<'EOF'
{"displayTimeUnit":"ns","otherData":{"clock":"instructions"},"traceEvents":[
{"ph":"X","pid":0,"tid":0,"name":"a","ts":0.001,"dur":0.002},
{"ph":"X","pid":0,"tid":0,"name":"b","ts":0.003,"dur":0.002},
{"ph":"X","pid":0,"tid":0,"name":"c","ts":0.006,"dur":0.001},
{"ph":"X","pid":0,"tid":0,"name":"d","ts":0.007,"dur":0.002},
{"ph":"X","pid":0,"tid":0,"name":"spin","ts":0.010,"dur":0.052},
{"ph":"X","pid":0,"tid":0,"name":"_start","ts":0.000,"dur":0.063}
]}
EOF
golden "calls --timeline" "$hwt" calls --timeline --elf "$tmp/prog" \
	"$tmp/t.pt" <"$tmp/golden.json"
golden "calls --timeline -j2, cut at each PSB" env HWT_SEGMENT_SIZE=16 \
	HWT_CALLS_CHUNK=2 "$hwt" calls --timeline -j2 --elf "$tmp/prog" \
	"$tmp/t.pt" <"$tmp/golden.json"
run "calls --timeline --folded" "$hwt" calls --timeline --folded \
	--elf "$tmp/prog" "$tmp/t.pt"
[ "$rc" != 0 ] && [ ! -s "$tmp/out" ] ||
	fail "calls --timeline --folded: rc $rc"
run "calls --clock time without --timeline" "$hwt" calls --clock time \
	--elf "$tmp/prog" "$tmp/t.pt"
[ "$rc" != 0 ] && grep -q "timeline" "$tmp/err" ||
	fail "calls --clock without --timeline: rc $rc, no message"

# 210 levels of recursion: lines deeper than 200 levels print at 200.
#   402000 deep: mov ecx, 210   402005 call r   40200a jmp rax
#   40200c r: dec ecx   40200e jz .out   402010 call r   402015 .out: ret
cat >"$tmp/deep.asm" <<'EOF'
bits 64
global deep:function
global r:function
section .text
deep:
	mov ecx, 210
	call r
	jmp rax
r:
	dec ecx
	jz .out
	call r
.out:
	ret
EOF
yasm -f elf64 -o "$tmp/deep.o" "$tmp/deep.asm" &&
	ld -Ttext=0x402000 -e deep -o "$tmp/deep" "$tmp/deep.o" || exit 1
# 209 jz not taken, 1 taken; the 64 innermost returns compressed, the
# others with a TIP (the decoder's return stack holds 64).
pk=(psb "mode.exec 64" psbend "tip.pge 0x402000")
for ((i = 0; i < 209; i++)); do pk+=("tnt ."); done
pk+=("tnt !")
for ((i = 0; i < 64; i++)); do pk+=("tnt !"); done
for ((i = 0; i < 145; i++)); do pk+=("tip 0x402015"); done
pk+=("tip 0x40200a" "tip.pgd -")
ptgen_trace deep "${pk[@]}"
run "calls, 210 levels" "$hwt" calls --elf "$tmp/deep" "$tmp/deep.pt"
deepest=$(awk -F'\t' '{ match($2, /^ */); if (RLENGTH > m) m = RLENGTH }
	END { print m }' "$tmp/out")
flat=$(awk -F'\t' '$2 == "r" { n++ } END { print n + 0 }' "$tmp/out")
if [ "$rc" != 0 ] || [ "$(wc -l <"$tmp/out")" != 421 ] ||
	[ "$deepest" != 400 ] || [ "$flat" != 0 ]; then
	fail "calls, 210 levels: rc $rc, $(wc -l <"$tmp/out") lines," \
		"deepest indent $deepest, $flat of r unindented"
	head -n 3 "$tmp/err" >&2
fi

# A block that starts inside a function (after a jump within it) and
# falls through into the next symbol, ending at neither a call nor a
# return: the line changes where the next symbol starts, not where the
# block does.
#   403000 fall: call e        403005 jmp rax
#   403007 e: nop              403008 jz .x (taken, within e)
#   40300a nop                 40300b .x: nop (falls through into f)
#   40300c f: nop              40300d jz .y   40300f .y: ret
cat >"$tmp/fall.asm" <<'EOF2'
bits 64
global fall:function
global e:function
global f:function
section .text
fall:
	call e
	jmp rax
e:
	nop
	jz .x
	nop
.x:
	nop
f:
	nop
	jz .y
.y:
	ret
EOF2
yasm -f elf64 -o "$tmp/fall.o" "$tmp/fall.asm" &&
	ld -Ttext=0x403000 -e fall -o "$tmp/fall" "$tmp/fall.o" || exit 1
ptgen_trace fall psb "mode.exec 64" psbend "tip.pge 0x403000" "tnt !.!" \
	"tip.pgd -"
cat >"$tmp/golden.fall" <<'EOF2'
1	fall	inst 1,1
2	  e	inst 2,4
3	  f	inst 5,7
4	fall	inst 8,8
EOF2
golden "calls, a block from inside a function into the next symbol" \
	"$hwt" calls --elf "$tmp/fall" "$tmp/fall.pt" <"$tmp/golden.fall"

# Every line but the last written to the file and read back.
golden "calls, lines through the file" env HWT_CALLS_CHUNK=2 \
	"$hwt" calls --elf "$tmp/prog" "$tmp/t.pt" <"$tmp/golden"
run "calls without a temporary directory" env HWT_CALLS_CHUNK=2 \
	TMPDIR="$tmp/none" "$hwt" calls --elf "$tmp/prog" "$tmp/t.pt"
if [ "$rc" = 0 ] || [ -s "$tmp/out" ] ||
	! grep -q 'cannot make a temporary file' "$tmp/err"; then
	fail "calls without a temporary directory: rc $rc, no message"
fi

# --stream: lines as they come, the same where no return goes above the
# first line (also with -j, and with no temporary directory: nothing goes
# to a file); a trace that starts in b and returns above it prints b at
# level 0 there, and at 1 without --stream (indented from the lowest).
golden "calls --stream" "$hwt" calls --stream --elf "$tmp/prog" \
	"$tmp/t.pt" <"$tmp/golden"
golden "calls --stream -j2, cut at each PSB" env HWT_SEGMENT_SIZE=16 \
	HWT_CALLS_CHUNK=2 TMPDIR="$tmp/none" "$hwt" calls --stream -j2 \
	--elf "$tmp/prog" "$tmp/t.pt" <"$tmp/golden"
ptgen_trace up psb "mode.exec 64" psbend "tip.pge 0x401014" \
	"tip 0x401005" "tip.pgd 0x40100a"
golden "calls, a return above the first line" "$hwt" calls \
	--elf "$tmp/prog" "$tmp/up.pt" <<'EOF'
1	  b	inst 1,2
2	_start	inst 3,3
3	  c	inst 4,4
4	  d	inst 5,6
EOF
# Its caller not seen yet when b ran, then named by the return to it:
# b's stack is _start;b.
golden "calls --folded, a return above the first line" "$hwt" calls \
	--folded --elf "$tmp/prog" "$tmp/up.pt" <<'EOF'
_start 1
_start;b 2
_start;c 1
_start;d 2
EOF
golden "calls --stream, a return above the first line" "$hwt" calls \
	--stream --elf "$tmp/prog" "$tmp/up.pt" <<'EOF'
1	b	inst 1,2
2	_start	inst 3,3
3	  c	inst 4,4
4	  d	inst 5,6
EOF

# Two threads of one process take turns on cpu 0 (mkptdata --thread: the
# switches at a third and two thirds of the trace's time, TSC 6000 and
# 9000). Thread 1234 is interrupted in b, two frames deep (the call of a,
# the interrupt); 1235 resumes at 0x401005, after a call of its own, and
# is interrupted in spin; 1234 resumes in b, one level down, and returns
# to _start. With one stack for both, b and all after it printed a level
# deeper. A line of another thread than the line before says whose it is.
# -j2 in 16-byte segments cuts at a PSB+ in a spin loop.
psb_t() { printf '%s\n' psb "tsc $1" "mode.exec 64" "fup 0x40101e" psbend; }
mapfile -t tk < <(printf '%s\n' psb "tsc 3000" "mode.exec 64" psbend \
	"tip.pge 0x401000" "fup 0x401015" "tip.pgd -" \
	"tsc 6100" "tip.pge 0x401005" "tnt !" "tnt !!!!"
	psb_t 6200
	printf '%s\n' "tnt !!!!" "fup 0x40101e" "tip.pgd -" \
		"tsc 9100" "tip.pge 0x401015" "tip 0x401005" "tnt !" \
		"tnt !!!!"
	psb_t 9200
	printf '%s\n' "tnt !!!!" "fup 0x40101e" "tip.pgd -" "tsc 12000")
ptgen_trace threads "${tk[@]}"
"$mkptdata" --cpu 0 --thread 1235:2 --pt "$tmp/threads.pt" \
	--elf "$tmp/prog" "$tmp/threads.data" >/dev/null ||
	fail "mkptdata --thread"
cat >"$tmp/golden" <<'EOF'
# stream idx 0: cpu 0, 160 bytes
1	_start	inst 1,1
2	  a	inst 2,3
3	  b	inst 4,4
[pid 1234 tid 1235]
4	_start	inst 5,5
5	  c	inst 6,6
6	  d	inst 7,8
7	_start	inst 9,9
8	  spin	inst 10,26
[pid 1234 tid 1234]
9	  b	inst 27,27
10	_start	inst 28,28
11	  c	inst 29,29
12	  d	inst 30,31
13	_start	inst 32,32
14	  spin	inst 33,49
EOF
golden "calls, two threads" "$hwt" calls "$tmp/threads.data" <"$tmp/golden"
golden "calls -j2, two threads" env HWT_SEGMENT_SIZE=16 "$hwt" calls -j2 \
	"$tmp/threads.data" <"$tmp/golden"
run "calls -j2 -v, two threads" env HWT_SEGMENT_SIZE=16 "$hwt" calls -j2 -v \
	"$tmp/threads.data"
if ! grep -q ': 2 segments$' "$tmp/err"; then
	fail "calls -j2, two threads: not cut in 2 segments"
	cat "$tmp/err" >&2
fi
golden "calls --stream, two threads" "$hwt" calls --stream \
	"$tmp/threads.data" <"$tmp/golden"
# Each thread its own stacks (b where 1234 resumed in it, under a's
# caller); the headers and thread lines go to stderr.
cat >"$tmp/golden.fold" <<'EOF'
pid 1234 tid 1234;_start 3
pid 1234 tid 1234;_start;a 2
pid 1234 tid 1234;_start;b 2
pid 1234 tid 1234;_start;c 1
pid 1234 tid 1234;_start;d 2
pid 1234 tid 1234;_start;spin 17
pid 1234 tid 1235;_start 2
pid 1234 tid 1235;_start;c 1
pid 1234 tid 1235;_start;d 2
pid 1234 tid 1235;_start;spin 17
EOF
golden "calls --folded, two threads" "$hwt" calls --folded \
	"$tmp/threads.data" <"$tmp/golden.fold"
golden "calls --folded -j2, two threads" env HWT_SEGMENT_SIZE=16 "$hwt" \
	calls --folded -j2 "$tmp/threads.data" <"$tmp/golden.fold"
check
grep -q '^# stream idx 0: cpu 0' "$tmp/err" ||
	fail "calls --folded: the stream header not on stderr"

# --timeline of the two threads, by instructions and by time (perf's
# nanoseconds from the TSCs: 3000 ticks at 2.4 GHz are 1250 ns): each
# thread's calls nest, none overlaps another but inside it; the threads
# take turns; by time, 1235's first call starts after the switch at TSC
# 6000 (2500 ns) and 1234's last ones after 9000.
nested() {
	awk -F'[:,]' '/"ph":"X"/ {
		for (i = 1; i < NF; i++) {
			if ($i == "\"tid\"") tid = $(i + 1)
			if ($i == "\"ts\"") ts = $(i + 1)
			if ($i == "\"dur\"") dur = $(i + 1) }
		sub(/}.*/, "", dur)
		printf "%s %.3f %.3f\n", tid, ts, ts + dur }' "$1" |
		sort -k1,1n -k2,2n -k3,3nr | awk '
		$1 != tid { tid = $1; n = 0 }
		{ while (n && $2 >= end[n]) n--
		  if (n && $3 > end[n]) { bad++; print "overlap: " $0 }
		  end[++n] = $3; events++ }
		END { print events + 0, "events", bad + 0, "overlapping" }'
}
for clock in insn time; do
	run "calls --timeline --clock $clock, two threads" "$hwt" calls \
		--timeline --clock $clock "$tmp/threads.data"
	cp "$tmp/out" "$tmp/threads.$clock.json"
	check
	[ "$(nested "$tmp/threads.$clock.json" | tail -n 1)" = \
	  "10 events 0 overlapping" ] ||
		fail "calls --timeline --clock $clock, two threads:" \
			"$(nested "$tmp/threads.$clock.json" | tail -n 3)"
	golden "calls --timeline --clock $clock -j2, two threads" \
		env HWT_SEGMENT_SIZE=16 "$hwt" calls --timeline \
		--clock $clock -j2 "$tmp/threads.data" \
		<"$tmp/threads.$clock.json"
done
check
grep -q '"clock":"perf time (ns)"' "$tmp/threads.time.json" ||
	fail "--timeline by time: not perf's clock"
check
grep -Eq '"tid":1235,"name":"c","ts":2\.[0-9]{3},' "$tmp/threads.time.json" ||
	fail "--timeline by time: 1235's c not after the switch"
check
grep -Eq '"tid":1234,"name":"c","ts":3\.[0-9]{3},' "$tmp/threads.time.json" ||
	fail "--timeline by time: 1234's c not after the switch back"
check
grep -q '^{"ph":"M","pid":1234,"tid":1234,"name":"thread_name","args":{"name":"prog"}}' \
	"$tmp/threads.time.json" &&
	grep -q '^{"ph":"M","pid":1234,"tid":1235,"name":"thread_name","args":{"name":"second"}}' \
		"$tmp/threads.time.json" ||
	fail "--timeline: the threads not named (comm)"

finish

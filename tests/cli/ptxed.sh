# SPDX-License-Identifier: BSD-2-Clause
# Bad input to `hwt ptxed`, `hwt flow`, `hwt calls` and `hwt coverage`:
# each case must end in a clear message and the documented exit code,
# never a crash or a hang. (libipt's suite checks ptxed's good output.)
#
#   bash tests/cli/ptxed.sh path/to/hwt BUILD_DIR
. "$(dirname "$0")/lib.bash" ptxed "$@"

# A failure shows what the command said.
fail_run() {
	fail "$*"
	echo "  exit code: $rc; stderr:" >&2
	head -n 5 "$tmp/err" | sed 's/^/    /' >&2
	echo "  stdout:" >&2
	head -n 5 "$tmp/out" | sed 's/^/    /' >&2
}

# expect_err CODE REGEX: exit code CODE and REGEX on stderr.
expect_err() {
	no_crash || return
	if [ "$rc" -ne "$1" ]; then
		fail_run "$desc: exit code $rc, expected $1"
	elif ! grep -qE "$2" "$tmp/err"; then
		fail_run "$desc: stderr does not match '$2'"
	fi
}

# Inputs: a tiny program, a valid trace for it, files that are not what
# they claim to be.
printf '\x90\x90\xc3' >"$tmp/code.bin"
# psb, psbend, tip.pge 0x1000 (sext48), tip.pgd (suppressed)
printf '\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82' >"$tmp/ok.pt"
printf '\x02\x23\x71\x00\x10\x00\x00\x00\x00\x01' >>"$tmp/ok.pt"
echo "this is not an ELF file, nor a trace" >"$tmp/text.txt"
head -c 4096 /dev/urandom >"$tmp/random.bin"
: >"$tmp/empty.pt"

# ---- ptxed's command line
run "ptxed without --pt" "$hwt" ptxed --raw "$tmp/code.bin:0x1000"
expect_err 1 'no pt file'

run "ptxed --pt missing file" "$hwt" ptxed --raw "$tmp/code.bin:0x1000" \
	--pt "$tmp/nope.pt"
expect_err 1 'nope.pt.*(No such file|cannot open)'

run "ptxed --pt empty file" "$hwt" ptxed --raw "$tmp/code.bin:0x1000" \
	--pt "$tmp/empty.pt"
expect_err 1 'empty'

run "ptxed --raw missing file" "$hwt" ptxed --raw "$tmp/nope.bin:0x1000" \
	--pt "$tmp/ok.pt"
expect_err 1 'nope.bin.*No such file'

run "ptxed --raw without base" "$hwt" ptxed --raw "$tmp/code.bin" \
	--pt "$tmp/ok.pt"
expect_err 1 'base address'

run "ptxed --elf not an ELF file" "$hwt" ptxed --elf "$tmp/text.txt" \
	--pt "$tmp/ok.pt"
expect_err 1 'not an ELF'

run "ptxed --elf not an ELF file, with base" "$hwt" ptxed \
	--elf "$tmp/text.txt:0x400000" --pt "$tmp/ok.pt"
expect_err 1 'not an ELF'

run "ptxed duplicate --pt" "$hwt" ptxed --raw "$tmp/code.bin:0x1000" \
	--pt "$tmp/ok.pt" --pt "$tmp/ok.pt"
expect_err 1 'duplicate pt sources'

run "ptxed --cpu after --pt" "$hwt" ptxed --raw "$tmp/code.bin:0x1000" \
	--pt "$tmp/ok.pt" --cpu 6/142
expect_err 1 'specify cpu before'

run "ptxed bad --cpu" "$hwt" ptxed --cpu six --pt "$tmp/ok.pt"
expect_err 1 'f/m\[/s\]'

run "ptxed --pevent:primary missing file" "$hwt" ptxed \
	--pevent:primary "$tmp/nope.sb" --pt "$tmp/ok.pt"
expect_err 1 'error loading .*nope.sb.*No such file'

run "ptxed --pevent:primary without argument" "$hwt" ptxed --pevent:primary
expect_err 1 'pevent:primary: missing argument'

run "ptxed --pevent:time-mult bad number" "$hwt" ptxed \
	--pevent:time-mult ten --pt "$tmp/ok.pt"
expect_err 1 'time-mult: bad argument'

run "ptxed --pevent:time-shift 64" "$hwt" ptxed \
	--pevent:time-shift 64 --pt "$tmp/ok.pt"
expect_err 1 'time-shift: value too big'

run "ptxed --pevent:sample-config bad argument" "$hwt" ptxed \
	--pevent:sample-config 1-0x4 --pt "$tmp/ok.pt"
expect_err 1 'sample-config: bad argument: 1-0x4'

run "ptxed --pevent:sample-config without IDENTIFIER" "$hwt" ptxed \
	--pevent:sample-config 1:0x4 --pevent:primary "$tmp/ok.pt" \
	--pt "$tmp/ok.pt"
expect_err 1 'no PERF_SAMPLE_IDENTIFIER'

run "ptxed unknown --pevent option" "$hwt" ptxed --pevent:frob 1 \
	--pt "$tmp/ok.pt"
expect_err 1 'unknown option: --pevent:frob'

run "ptxed unknown option" "$hwt" ptxed --frobnicate --pt "$tmp/ok.pt"
expect_err 1 'unknown option: --frobnicate'

run "ptxed --mtc-freq too big" "$hwt" ptxed --mtc-freq 256 --pt "$tmp/ok.pt"
expect_err 1 'value too big'

run "ptxed --filter:addr0_cfg missing argument" "$hwt" ptxed \
	--filter:addr0_cfg
expect_err 1 'missing argument'

run "ptxed --help" "$hwt" ptxed --help
no_crash && { [ "$rc" -eq 0 ] && grep -q -- '--block:show-blocks' "$tmp/out" ||
	fail_run "$desc: no help text"; }

# ---- good and bad traces
run "ptxed valid trace" "$hwt" ptxed --raw "$tmp/code.bin:0x1000" \
	--pt "$tmp/ok.pt" --no-inst --stat:insn
if no_crash; then
	printf '[enabled]\n0000000000001000\n0000000000001001\n0000000000001002\n[disabled]\ninsn: 3.\n' >"$tmp/want"
	[ "$rc" -eq 0 ] && cmp -s "$tmp/out" "$tmp/want" ||
		fail_run "$desc: unexpected output (see below)"
fi

# ---- perf_event sideband (libipt's suite has the rest)
# Records as the kernel writes them, sample_type 0 (no trailer).
le() { # le BYTES VALUE
	local i v=$2
	for ((i = 0; i < $1; i++)); do
		printf '\\x%02x' $((v & 0xff))
		v=$((v >> 8))
	done
}
mmap_rec() { # mmap_rec PID ADDR LEN PGOFF FILE (name padded to 8)
	local name=$5 pad
	pad=$(( (8 - (${#name} + 1) % 8) % 8 ))
	le 4 1; le 2 2; le 2 $((8 + 32 + ${#name} + 1 + pad))
	le 4 "$1"; le 4 "$1"; le 8 "$2"; le 8 "$3"; le 8 "$4"
	printf '%s' "$name"; le $((1 + pad)) 0
}
itrace_rec() { le 4 12; le 2 0; le 2 16; le 4 "$1"; le 4 "$1"; }
printf "$(mmap_rec 1 0x1000 3 0 "$tmp/code.bin")$(itrace_rec 1)" \
	>"$tmp/ok.sb"

# The code comes from the sideband alone: no --raw.
run "ptxed image from sideband" "$hwt" ptxed --pevent:primary "$tmp/ok.sb" \
	--sb:compact --sb:switch --pt "$tmp/ok.pt" --no-inst --stat:insn
if no_crash; then
	{
		printf 'PERF_RECORD_MMAP  1/1, 1000, 3, 0, %s  { }\n' "$tmp/code.bin"
		printf 'PERF_RECORD_ITRACE_START  1/1  { }\n[context: pid-1]\n'
		printf '[enabled]\n0000000000001000\n0000000000001001\n'
		printf '0000000000001002\n[disabled]\ninsn: 3.\n'
	} >"$tmp/want"
	[ "$rc" -eq 0 ] && cmp -s "$tmp/out" "$tmp/want" ||
		fail_run "$desc: unexpected output (see below)"
fi

# A mapping of a file that is not there: an error naming the record's
# offset; the decode goes on and finds no code at the trace's IP.
printf "$(mmap_rec 1 0x1000 3 0 "$tmp/gone.bin")$(itrace_rec 1)" >"$tmp/gone.sb"
run "ptxed sideband maps a missing file" "$hwt" ptxed \
	--pevent:primary "$tmp/gone.sb" --pt "$tmp/ok.pt" --no-inst
no_crash && { [ "$rc" -eq 0 ] &&
	grep -q "gone.sb:0000000000000000 sideband error" "$tmp/out" &&
	grep -q '^\[1a, 1000: error: no memory mapped' "$tmp/out" ||
	fail_run "$desc: no sideband error, or no decode error at 0x1000"; }

# A record cut short, after a PERF_RECORD_LOST: a warning for that, and
# the reader's message naming the offset; the trace is still decoded with
# the --raw image.
{ printf "$(le 4 2; le 2 0; le 2 24; le 8 1; le 8 5)"
  head -c 12 "$tmp/ok.sb"; } >"$tmp/cut.sb"
run "ptxed sideband record cut short" "$hwt" ptxed \
	--raw "$tmp/code.bin:0x1000" --pevent:primary "$tmp/cut.sb" --sb:warn \
	--pt "$tmp/ok.pt" --no-inst --stat:insn
no_crash && { [ "$rc" -eq 0 ] &&
	grep -q 'cut.sb:0000000000000000 sideband warning: sideband lost' \
		"$tmp/out" &&
	grep -q 'sideband error: .*offset 0x18' "$tmp/out" &&
	grep -qx 'insn: 3.' "$tmp/out" ||
	fail_run "$desc: no warning, no error naming offset 0x18, or no decode"; }

# A record type libipt's reader does not take apart (KSYMBOL) has no
# samples for it: no time, nothing between the braces (as libipt's
# ptdump prints it), though its trailer holds pid/tid and time 5.
printf "$(le 4 17; le 2 0; le 2 48; le 8 0x1000; le 4 4; le 2 1; le 2 0
	  le 8 0x78; le 4 1; le 4 1; le 8 5)" >"$tmp/unknown.sb"
run "ptdump sideband record libipt does not know" "$hwt" ptdump \
	--sb:compact --sb:time --pevent:sample-type 0x6 \
	--pevent "$tmp/unknown.sb" "$tmp/ok.pt"
no_crash && { [ "$rc" -eq 0 ] &&
	grep -qx 'UNKNOWN (11, 0)  { }' "$tmp/out" ||
	fail_run "$desc: not 'UNKNOWN (11, 0)  { }'"; }

for i in 1 2 3 4; do
	head -c 512 /dev/urandom >"$tmp/rnd.sb"
	run "ptxed random sideband $i" "$hwt" ptxed --raw "$tmp/code.bin:0x1000" \
		--pevent:sample-type 0x102c7 --pevent:primary "$tmp/rnd.sb" \
		--sb:verbose --sb:warn --pt "$tmp/ok.pt"
	no_crash || cp "$tmp/rnd.sb" "${TMPDIR:-/tmp}/hwt-ptxed-crash-$i.sb"
	run "ptdump random sideband $i" "$hwt" ptdump --sb:compact --sb:time \
		--pevent:sample-type 0x102c7 --pevent "$tmp/rnd.sb" "$tmp/ok.pt"
	no_crash
done

run "ptxed trace that is not PT" "$hwt" ptxed --raw "$tmp/code.bin:0x1000" \
	--pt "$tmp/text.txt"
no_crash && { [ "$rc" -eq 0 ] || fail_run "$desc: exit code $rc"; }

for i in 1 2 3 4 5 6 7 8; do
	# Random bytes behind a PSB: errors, never a crash.
	{ head -c 16 "$tmp/ok.pt"; head -c 2048 /dev/urandom; } >"$tmp/rnd.pt"
	run "ptxed random trace $i" "$hwt" ptxed --raw "$tmp/random.bin:0x1000" \
		--pt "$tmp/rnd.pt" --check
	no_crash || cp "$tmp/rnd.pt" "${TMPDIR:-/tmp}/hwt-ptxed-crash-$i.pt"
	run "flow -j2 random trace $i" "$hwt" flow -j2 --raw \
		"$tmp/random.bin:0x1000" "$tmp/rnd.pt"
	no_crash
done

# ---- flow, calls, coverage
for cmd in flow calls coverage; do
	run "$cmd without trace" "$hwt" $cmd --raw "$tmp/code.bin:0x1000"
	expect_err 1 'no trace'
	run "$cmd missing trace" "$hwt" $cmd "$tmp/nope.pt"
	expect_err 1 'nope.pt'
	run "$cmd non-ELF --elf" "$hwt" $cmd --elf "$tmp/text.txt" "$tmp/ok.pt"
	expect_err 1 'not an ELF'
	# Nothing decoded at all is a failure (ptxed, above, exits 0 as
	# libipt's does).
	run "$cmd not PT" "$hwt" $cmd --raw "$tmp/code.bin:0x1000" "$tmp/text.txt"
	expect_err 1 'no PSB'
	run "$cmd unknown option" "$hwt" $cmd --frobnicate "$tmp/ok.pt"
	expect_err 1 'unknown option'
done
run "flow -j0" "$hwt" flow -j0 --raw "$tmp/code.bin:0x1000" "$tmp/ok.pt"
expect_err 1 '\-j'
run "coverage -o unwritable" "$hwt" coverage -o "$tmp/no/such/dir/map" \
	--raw "$tmp/code.bin:0x1000" "$tmp/ok.pt"
expect_err 1 'cannot write'

finish

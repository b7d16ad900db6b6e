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

run "ptxed --sb" "$hwt" ptxed --sb:compact --pt "$tmp/ok.pt"
expect_err 1 'sideband is not supported'

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

# SPDX-License-Identifier: BSD-2-Clause
# hwt record --vgpt-import on hand-written vgpt output: the sideband lines
# the documented format has and the ones announced for it (switch,
# munmap), unknown and malformed lines (warnings, never fatal), trace
# files the sideband does not name and a sideband without threads.
#
# The trace is ptgen's for examples/calls.asm. Checks: the records the
# lines become (hwt sideband, perf script --show-*-events), the decode
# through the perf.data equals the raw decode with --elf, perf lists the
# same branches, and a munmap of the code before the trace makes the
# decode fail (so munmap is applied, not dropped).
#
#   bash tests/cli/record_import.sh path/to/hwt BUILD_DIR
. "$(dirname "$0")/lib.bash" record_import "$@"
ptgen=$build/ptgen
needs yasm ld

cd "$tmp" || exit 1
yasm -f elf64 "$src/examples/calls.asm" -o calls.o &&
	ld -Ttext=0x401000 -e _start -o calls calls.o &&
	"$ptgen" calls.pt <"$src/examples/calls.ptdesc" || {
	echo "FAIL: cannot build the example and its trace" >&2
	exit 1
}
tsc=$((0x1d2c3b4a5968))

# sideband DIR [LINE...]: the common lines, then the given ones, then
# the exit after the trace.
sideband() {
	local dir=$1
	shift
	mkdir -p "$dir"
	{
		echo "comm 0 100 100 $tmp/calls"
		echo "mmap 0 100 401000 1000 1000 r-x $tmp/calls"
		echo "thread 0 100 100"
		for l in "$@"; do
			echo "$l"
		done
		echo "exit $((tsc + 1000)) 100 100"
	} >"$dir/vgpt.sb"
	cp calls.pt "$dir/vgpt.100.pt"
}

sideband a "switch 1000 100 100 out" "switch 2000 100 100 in" \
	"munmap 3000 100 500000 1000" "frobnicate 4000 100 x y z" \
	"mmap zz" "switch 5000 100 100 sideways"
check
"$hwt" record --vgpt-import a/vgpt -o a.data >a.out 2>a.err ||
	fail "import: exit $?: $(head -n 3 a.err)"
check
grep -q "line 7: unknown line 'frobnicate'" a.err &&
	grep -q "line 8, column 6: TIME is not a decimal number" a.err &&
	grep -q "line 9, column 21: not out or in" a.err ||
	fail "import: unknown and malformed lines not reported as warnings: $(cat a.err)"
check
grep -q "lost data: 0" a.err || fail "import: summary: $(tail -n 1 a.err)"

"$hwt" sideband a.data >a.sb
check
grep -q '0.000001 0 100/100 PERF_RECORD_SWITCH OUT' a.sb &&
	grep -q '0.000002 0 100/100 PERF_RECORD_SWITCH IN' a.sb ||
	fail "switch lines are not SWITCH records at their times: $(grep SWITCH a.sb)"
check
grep -q 'PERF_RECORD_MMAP2 0x500000 0x1000 0x0 //anon' a.sb ||
	fail "munmap is not an anonymous MMAP2 over the range"
check
grep -q 'PERF_RECORD_COMM exec: calls' a.sb &&
	grep -q 'PERF_RECORD_ITRACE_START' a.sb &&
	grep -q 'PERF_RECORD_EXIT' a.sb ||
	fail "comm, thread or exit lines missing from the records"

# The decode through the perf.data is the raw one.
check
"$hwt" flow --no-sym a.data | grep -v '^#' >a.flow
"$hwt" flow --no-sym --elf calls calls.pt >raw.flow
if [ ! -s raw.flow ] || ! cmp -s a.flow raw.flow; then
	fail "perf.data decode differs from the raw decode"
	diff a.flow raw.flow | head -n 5 >&2
fi

if command -v perf >/dev/null; then
	check
	perf script --force --show-switch-events --show-mmap-events -i a.data \
		>a.perf 2>a.perf.err
	grep -q 'PERF_RECORD_SWITCH OUT' a.perf &&
		grep -q 'PERF_RECORD_SWITCH IN' a.perf &&
		grep -q '\[0x500000(0x1000) @ 0 .*---p //anon' a.perf ||
		fail "perf script does not show the switches and the munmap: $(head -n 3 a.perf.err)"
	check
	perf script --force --itrace=be -F hw:ip,addr -i a.data 2>/dev/null |
		awk '$2 == "=>" && $1 != "0" && $3 != "0" { print "0x" $1 " 0x" $3 }' >a.pbr
	"$hwt" flow --branches a.data | grep -v '^#' >a.hbr
	[ -s a.pbr ] && cmp -s a.pbr a.hbr ||
		fail "perf script and hwt flow --branches differ on the import"
fi

# munmap of the code before the trace runs: its code is gone.
sideband b "munmap 5 100 401000 1000"
check
"$hwt" record -q --vgpt-import b/vgpt -o b.data 2>b.err ||
	fail "import b: exit $?"
"$hwt" flow --no-sym b.data >b.flow 2>&1
grep -q '^\[error' b.flow ||
	fail "a munmap of the code does not take the code away"

# A trace the sideband does not name; a sideband without threads.
sideband c
cp calls.pt c/vgpt.200.pt
check
"$hwt" record --vgpt-import c/vgpt -o c.data 2>c.err
grep -q "vgpt.200.pt: a trace the sideband does not mention" c.err &&
	grep -q "lost data: 1" c.err ||
	fail "an unnamed trace file is not reported as lost: $(cat c.err)"
mkdir -p d
echo "comm 0 100 100 /bin/true" >d/vgpt.sb
check
"$hwt" record -q --vgpt-import d/vgpt -o d.data 2>d.err
rc=$?
[ $rc -eq 125 ] && grep -q "no thread was traced" d.err ||
	fail "a sideband without threads: exit $rc: $(cat d.err)"
check
"$hwt" record -q --vgpt-import nowhere/vgpt -o e.data 2>e.err
rc=$?
[ $rc -eq 125 ] && grep -q "nowhere/vgpt.sb: No such file" e.err ||
	fail "a missing sideband: exit $rc: $(cat e.err)"

finish

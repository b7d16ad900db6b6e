# SPDX-License-Identifier: BSD-2-Clause
# `hwt coverage` with several traces (a fuzzer's runs, a corpus): each is
# decoded on its own, as if alone, by one decoder whose block cache stays
# warm (hwt_blk_set_trace()), and printed after '# trace NAME'; then the
# union ('# all traces'; -o writes its bitmap). The traces are slices,
# from PSB to PSB, of a program's trace written by bench/gen_flow.c, one
# with a corrupted byte, some overlapping others, the whole trace twice
# (so that the union's counters saturate). Each trace's lines
# must be what `hwt coverage` prints for it alone, -j N's output what one
# thread's is, the union the counters' saturating sum, and every hash the
# FNV-1a of its bitmap (computed here). Bad arguments: clear messages.
#
#   bash tests/cli/coverage.sh path/to/hwt BUILD_DIR
. "$(dirname "$0")/lib.bash" coverage "$@"
gen=$build/gen_flow
built "$gen"

"$gen" -s 160K -S 7 "$tmp/g" >/dev/null || exit 1
raw="$tmp/g.bin:0x400000"
"$hwt" dump --no-pad "$tmp/g.pt" | awk '$2 == "psb" { print "0x" $1 }' \
	>"$tmp/psbs"
npsb=$(wc -l <"$tmp/psbs")
[ "$npsb" -ge 30 ] || { echo "FAIL: only $npsb PSBs in gen_flow's trace" >&2; exit 1; }
psb() { sed -n "$(($1 + 1))p" "$tmp/psbs"; }

# A copy with a byte in the middle of a PSB period corrupted.
cp "$tmp/g.pt" "$tmp/bad.pt"
printf '\xd9' | dd of="$tmp/bad.pt" bs=1 seek=$(($(psb 12) + 1500)) \
	conv=notrunc 2>/dev/null

traces=("$tmp/g.pt:$(psb 0)-$(psb 3)" "$tmp/g.pt:$(psb 3)-$(psb 4)"
	"$tmp/bad.pt:$(psb 10)-$(psb 14)" "$tmp/g.pt:$(psb 20)-$(psb 29)"
	"$tmp/g.pt:$(psb 1)-$(psb 25)" "$tmp/g.pt:$(psb 29)" "$tmp/g.pt"
	"$tmp/g.pt")

# FNV-1a 64 of a file, as 16 hex digits (bash wraps at 64 bits).
fnv() {
	local h=$((0xcbf29ce484222325)) b
	for b in $(od -An -v -tu1 "$1"); do
		h=$(((h ^ b) * 0x100000001b3))
	done
	printf '%016x\n' "$h"
}

run "several traces" "$hwt" coverage -o "$tmp/all.map" --raw "$raw" \
	"${traces[@]}"
cp "$tmp/out" "$tmp/multi"
no_crash && [ "$rc" -eq 0 ] || fail "several traces: exit $rc"
[ "$(grep -c '^# trace ' "$tmp/multi")" -eq ${#traces[@]} ] ||
	fail "several traces: not a '# trace' line each"

# Each as alone; its map for the union below.
sum_insn=0
sum_blocks=0
sum_errors=0
k=0
for t in "${traces[@]}"; do
	k=$((k + 1))
	"$hwt" coverage -o "$tmp/map$k" --raw "$raw" "$t" >"$tmp/one" 2>&1
	check
	# (The k-th '# trace' section, which must name trace k.)
	awk -v k=$k '/^# / { on = /^# trace / && ++n == k; if (on) print; next }
		on' "$tmp/multi" >"$tmp/part"
	{ echo "# trace $t"; cat "$tmp/one"; } | cmp -s - "$tmp/part" || {
		fail "trace $k: not what it prints alone"
		{ echo "# trace $t"; cat "$tmp/one"; } | diff - "$tmp/part" |
			head -n 10 >&2
	}
	check
	want=$(fnv "$tmp/map$k")
	grep -qx "hash: $want" "$tmp/one" ||
		fail "trace $k: hash is not the FNV-1a of its bitmap ($want)"
	sum_insn=$((sum_insn + $(sed -n 's/^insn: //p' "$tmp/one")))
	sum_blocks=$((sum_blocks + $(sed -n 's/^blocks: //p' "$tmp/one")))
	sum_errors=$((sum_errors + $(sed -n 's/^errors: //p' "$tmp/one")))
done
# (The damaged trace has an error, and says where.)
check
grep -q '^\[error at offset 0x' "$tmp/multi" ||
	fail "the corrupted byte gave no error line"

# The union: the sums, the saturating sum of the maps, its hash.
sed -n '/^# all traces$/,$p' "$tmp/multi" >"$tmp/union"
check
[ "$(sed -n 's/^insn: //p' "$tmp/union")" = "$sum_insn" ] &&
	[ "$(sed -n 's/^blocks: //p' "$tmp/union")" = "$sum_blocks" ] &&
	[ "$(sed -n 's/^errors: //p' "$tmp/union")" = "$sum_errors" ] ||
	fail "all traces: not the sums ($sum_insn insn, $sum_blocks blocks, $sum_errors errors)"
for k in $(seq 1 ${#traces[@]}); do
	od -An -v -tu1 -w1 "$tmp/map$k" | tr -d ' ' >"$tmp/col$k"
done
paste -d ' ' "$tmp"/col[0-9]* | awk '{
	s = 0; for (i = 1; i <= NF; i++) s += $i
	print (s > 255 ? 255 : s) }' >"$tmp/want.col"
od -An -v -tu1 -w1 "$tmp/all.map" | tr -d ' ' >"$tmp/all.col"
check
grep -qx 255 "$tmp/want.col" ||
	fail "all traces: no counter saturates (the test needs one that does)"
check
cmp -s "$tmp/want.col" "$tmp/all.col" ||
	fail "all traces: -o is not the saturating sum of the traces' maps"
check
grep -qx "hash: $(fnv "$tmp/all.map")" "$tmp/union" ||
	fail "all traces: hash is not the FNV-1a of -o's bitmap"
check
grep -qx "edges: $(grep -cv '^0$' "$tmp/all.col")" "$tmp/union" ||
	fail "all traces: edges is not the count of cells set"

# Threads take traces in turn; the output is one thread's.
for j in 2 3 8; do
	run "-j$j" "$hwt" coverage -j$j --raw "$raw" "${traces[@]}"
	no_crash && cmp -s "$tmp/out" "$tmp/multi" || {
		fail "several traces -j$j: not -j1's output"
		diff "$tmp/multi" "$tmp/out" | head -n 10 >&2
	}
done

# A trace that is not one, and one that is not there: said, the others
# still printed, exit 1.
run "not a trace" "$hwt" coverage -j2 --raw "$raw" "${traces[0]}" \
	"$tmp/g.bin" "$tmp/none.pt" "${traces[1]}"
no_crash && [ "$rc" -eq 1 ] || fail "not a trace: exit $rc, not 1"
check
grep -q "g.bin: no PSB found" "$tmp/err" && grep -q "none.pt" "$tmp/err" ||
	fail "not a trace: no message naming each"
check
[ "$(grep -c '^# trace ' "$tmp/out")" -eq 3 ] &&
	grep -qx "# trace ${traces[1]}" "$tmp/out" ||
	fail "not a trace: the traces that are should still print"

# Several traces: coverage only, and no perf.data among them.
printf 'PERFILE2' >"$tmp/x.data"
run "perf.data among several" "$hwt" coverage --raw "$raw" "${traces[0]}" \
	"$tmp/x.data"
no_crash && [ "$rc" -ne 0 ] && grep -q "x.data: a perf.data file is decoded alone" \
	"$tmp/err" || fail "perf.data among several: exit $rc, $(head -c 200 "$tmp/err")"
run "flow, two traces" "$hwt" flow --raw "$raw" "${traces[0]}" "${traces[1]}"
no_crash && [ "$rc" -ne 0 ] && grep -q "more than one trace" "$tmp/err" ||
	fail "flow with two traces: exit $rc"

finish

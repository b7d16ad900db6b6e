#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# bench/count-flow.sh [--size SIZE] [--no-real] [BUILD_DIR]
#
# Instruction counts (valgrind --tool=callgrind, "I refs") of the flow
# decoders on one generated trace (bench/gen_flow.c, seed 1, default 8M)
# and on small real-program traces recorded with vgpt (bench/vgpt-traces.sh
# --scale small; skipped with a message if vgpt is not built):
#   hwt ptxed --block-decoder --quiet, hwt flow --stat, hwt coverage, and
#   libipt's block decoder (BUILD_DIR/ipt_blk, built by bench/run-flow.sh)
#   if present.
# Unlike wall-clock time these do not depend on the load of a shared
# machine, so they show whether a change pays. Prints per row the total,
# per block (hwt ptxed's block count, which is libipt's) and the ratio to
# libipt.
#
# The callgrind outputs stay in BUILD_DIR/count-flow/ for
# callgrind_annotate.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
size=8M
real=1

while [[ $# -gt 0 ]]; do
	case $1 in
	--size) size=$2; shift 2 ;;
	--no-real) real=0; shift ;;
	-h|--help) sed -n '3,19p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "count-flow: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
build=$(cd "${1:-$REPO/build}" && pwd)
hwt=$build/hwt
gen=$build/gen_flow
out=$build/count-flow

die() { echo "count-flow: error: $*" >&2; exit 1; }
[[ -x $gen && -x $hwt ]] || die "$gen or $hwt not built (make)"
command -v valgrind >/dev/null || die "valgrind is not installed"
mkdir -p "$out"
[[ -x $build/ipt_blk ]] ||
	echo "count-flow: no $build/ipt_blk (run bench/run-flow.sh once): hwt only" >&2

# count NAME CMD...: the "I refs" of one run.
count() {
	local name=$1
	shift
	valgrind --tool=callgrind --callgrind-out-file="$out/$name.out" \
		"$@" >/dev/null 2>"$out/$name.log" || die "$name failed (see $out/$name.log)"
	awk '/I *refs:/ { gsub(",", "", $NF); print $NF }' "$out/$name.log"
}

# row LABEL IR BLOCKS REF
row() {
	awk -v l="$1" -v n="$2" -v b="$3" -v ref="$4" 'BEGIN {
		printf "  %-34s %14.0f Ir %8.1f Ir/block", l, n, n / b
		if (ref != "")
			printf " %6.2fx libipt", ref / n
		printf "\n"
	}'
}

# bench NAME TRACE IMAGE-OPTIONS...
bench() {
	local name=$1 trace=$2 blocks ref=""
	shift 2
	blocks=$("$hwt" ptxed --block-decoder --quiet --stat --stat:blocks \
		"$@" --pt "$trace" | awk '$1 == "blocks:" { sub(/\.$/, "", $2); print $2 }')
	[[ -n $blocks && $blocks -gt 0 ]] || die "$name: no blocks decoded"
	[[ -x $build/ipt_blk ]] && ref=$(count "$name-libipt" "$build/ipt_blk" "$@" "$trace")
	echo "== $name: $trace ($(stat -c %s "$trace") bytes, $blocks blocks)"
	row "hwt ptxed --block-decoder --quiet" \
		"$(count "$name-ptxed" "$hwt" ptxed --block-decoder --quiet "$@" --pt "$trace")" \
		"$blocks" "$ref"
	row "hwt flow --stat" "$(count "$name-stat" "$hwt" flow --stat "$@" "$trace")" \
		"$blocks" "$ref"
	row "hwt coverage" "$(count "$name-coverage" "$hwt" coverage "$@" "$trace")" \
		"$blocks" "$ref"
	[[ -n $ref ]] && row "libipt pt_blk (ipt_blk)" "$ref" "$blocks" "$ref"
	return 0
}

prog=$out/trace-$size
if [[ ! -s $prog.pt || ! -s $prog.bin || $gen -nt $prog.pt ]]; then
	"$gen" -s "$size" -S 1 "$prog.tmp" >/dev/null
	mv "$prog.tmp.bin" "$prog.bin"
	mv "$prog.tmp.pt" "$prog.pt"
fi
bench synthetic "$prog.pt" --raw "$prog.bin:0x400000"

if ((real)); then
	bash "$REPO/bench/vgpt-traces.sh" --scale small "$build" "$build/bench-real" \
		>"$out/real.list" || die "bench/vgpt-traces.sh failed"
	# shellcheck disable=SC2086
	while IFS=$'\t' read -r name trace opts; do bench "$name" "$trace" $opts; done <"$out/real.list"
fi
exit 0

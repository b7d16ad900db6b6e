#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# bench/count-flow.sh [--size SIZE] [BUILD_DIR]
#
# Instruction counts (valgrind --tool=callgrind, "I refs") of the flow
# decoders on one generated trace (bench/gen_flow.c, seed 1, default 8M):
#   hwt ptxed --block-decoder --quiet, hwt coverage, and libipt's block
#   decoder (BUILD_DIR/ipt_blk, built by bench/run-flow.sh) if present.
# Unlike wall-clock time these do not depend on the load of a shared
# machine, so they show whether a change pays. Prints per row the total,
# per block (libipt's block count) and the ratio to libipt.
#
# The callgrind outputs stay in BUILD_DIR/count-flow/ for
# callgrind_annotate.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
size=8M

while [[ $# -gt 0 ]]; do
	case $1 in
	--size) size=$2; shift 2 ;;
	-h|--help) sed -n '3,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
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

prog=$out/trace-$size
if [[ ! -s $prog.pt || ! -s $prog.bin || $gen -nt $prog.pt ]]; then
	"$gen" -s "$size" -S 1 "$prog.tmp" >/dev/null
	mv "$prog.tmp.bin" "$prog.bin"
	mv "$prog.tmp.pt" "$prog.pt"
fi
image=(--raw "$prog.bin:0x400000")

blocks=$("$hwt" ptxed --block-decoder --quiet --stat --stat:blocks \
	"${image[@]}" --pt "$prog.pt" | awk '$1 == "blocks:" { sub(/\.$/, "", $2); print $2 }')
[[ -n $blocks && $blocks -gt 0 ]] || die "no blocks decoded"

# count NAME CMD...: the "I refs" of one run.
count() {
	local name=$1
	shift
	valgrind --tool=callgrind --callgrind-out-file="$out/$name.out" \
		"$@" >/dev/null 2>"$out/$name.log" || die "$name failed (see $out/$name.log)"
	awk '/I *refs:/ { gsub(",", "", $NF); print $NF }' "$out/$name.log"
}

ref=""
[[ -x $build/ipt_blk ]] && ref=$(count libipt "$build/ipt_blk" "${image[@]}" "$prog.pt")

echo "== count-flow: $prog.pt ($(stat -c %s "$prog.pt") bytes, $blocks blocks)"
row() {
	awk -v l="$1" -v n="$2" -v b="$blocks" -v ref="$ref" 'BEGIN {
		printf "  %-34s %14d Ir %8.1f Ir/block", l, n, n / b
		if (ref != "")
			printf " %6.2fx libipt", ref / n
		printf "\n"
	}'
}
row "hwt ptxed --block-decoder --quiet" \
	"$(count ptxed "$hwt" ptxed --block-decoder --quiet "${image[@]}" --pt "$prog.pt")"
row "hwt coverage" "$(count coverage "$hwt" coverage "${image[@]}" "$prog.pt")"
[[ -n $ref ]] && row "libipt pt_blk (ipt_blk)" "$ref"
exit 0

#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# bench/run-corpus.sh [--count N] [--slice SIZE] [--rounds N] [BUILD_DIR]
#
# Many small traces of one program, as a fuzzer decodes them (one per run
# of the fuzzed program: libxdc's use) or as a corpus is measured: N
# slices of about SIZE bytes (default 200 of 64K), each from a PSB to a
# PSB, spread over each trace of bench/run-flow.sh (the synthetic one and,
# if run-flow.sh made them, gzip's, xz's and python3's vgpt recordings).
# Each slice is decoded on its own, as if alone, by
#   hwt coverage S1 S2 ...        one process, one decoder for all
#                                 (hwt_blk_set_trace(): its block cache
#                                 stays warm), and with -j2
#   hwt coverage S                one process per slice (a cold cache each)
#   libipt's block decoder        one process, a new pt_blk decoder per
#                                 slice over one section cache (whose
#                                 sections keep their block caches)
# and, without the CLI's files and printing, the loop of a fuzzer that
# keeps its decoder: libipt's (ipt_blk -n: the best of several rounds
# over the slices, its section caches warm) against the library's
# (bench/bench_fuzz.c: one decoder, hwt_blk_set_trace(); and a new
# decoder per slice), the slices in memory.
# Prints the best wall clock of N rounds (one round of the per-process
# runs), slices/s, MB/s, the speed-up over libipt and the peak RSS, and
# checks that hwt and libipt count the same instructions (exit 1 if not).
# Nothing here asserts on timings.
#
# Needs BUILD_DIR/hwt and what bench/run-flow.sh leaves in BUILD_DIR: its
# traces, and ipt_blk (without it, hwt only). Environment: BENCH_ROUNDS,
# BENCH_FLOW_SIZE and BENCH_FLOW_SEED as for run-flow.sh.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
count=200
slice=64K
rounds=${BENCH_ROUNDS:-3}
flow_size=${BENCH_FLOW_SIZE:-64M}
seed=${BENCH_FLOW_SEED:-1}

while [[ $# -gt 0 ]]; do
	case $1 in
	--count) count=$2; shift 2 ;;
	--slice) slice=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	-h|--help) sed -n '3,31p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "run-corpus: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
build=$(cd "${1:-$REPO/build}" && pwd)
hwt=$build/hwt
ipt_blk=$build/ipt_blk
die() { echo "run-corpus: error: $*" >&2; exit 1; }
[[ -x $hwt ]] || die "$hwt not built (make)"
[[ -x /usr/bin/time ]] || die "/usr/bin/time is needed (Debian: time)"
[[ -x $ipt_blk ]] ||
	{ echo "run-corpus: no $ipt_blk (run bench/run-flow.sh once): hwt only" >&2; ipt_blk=""; }
case $slice in
*K) slice=$(( ${slice%K} << 10 )) ;;
*M) slice=$(( ${slice%M} << 20 )) ;;
esac

differ=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The offset of the first PSB at or after $2 in trace $1 (empty if none).
psb_at() {
	"$hwt" dump --no-pad "$1:$2-$(( $2 + (1 << 20) ))" 2>/dev/null |
		awk '$2 == "psb" { print "0x" $1; exit }'
}

# Best wall clock (and peak RSS) of $rounds runs of "$@", stdout to $tmp/out.
# (The clock is date's: /usr/bin/time's has 10 ms steps.)
best() {
	local r t0 t1 t m bt="" bm=""
	for ((r = 0; r < rounds; r++)); do
		t0=$(date +%s%N)
		/usr/bin/time -f '%e %M' -o "$tmp/time" "$@" >"$tmp/out" 2>"$tmp/err" ||
			{ cat "$tmp/err" >&2; die "$1 failed"; }
		t1=$(date +%s%N)
		t=$(( t1 - t0 ))
		read -r _ m <"$tmp/time"
		if [[ -z $bt ]] || (( t < bt )); then
			bt=$t bm=$m
		fi
	done
	echo "$(awk -v t="$bt" 'BEGIN { printf "%.4f", t / 1e9 }') $bm"
}

line() { # name seconds rss_kb bytes [ref_seconds]
	awk -v n="$1" -v s="$2" -v m="$3" -v b="$4" -v c="$nslices" -v ref="${5:-}" 'BEGIN {
		if (s <= 0) s = 0.0001
		printf "  %-38s %7.4f s %9.0f slices/s %8.1f MB/s", n, s, c / s, b / s / 1e6
		if (ref != "") printf "  %6.2fx libipt", ref / s
		if (m > 0) printf "  %6.1f MB RSS", m / 1024
		printf "\n" }'
}

corpus() { # name trace image-options...
	local name=$1 trace=$2 size off k start end bytes=0 slices=()
	shift 2
	size=$(stat -c %s "$trace")
	for ((k = 0; k < count; k++)); do
		off=$(( size * k / count ))
		start=$(psb_at "$trace" "$off") || true
		[[ -n $start ]] || continue
		end=$(psb_at "$trace" $(( start + slice ))) || true
		[[ -n $end ]] || end=$size
		(( end > start )) || continue
		slices+=("$trace:$start-$end")
		bytes=$(( bytes + end - start ))
	done
	nslices=${#slices[@]}
	(( nslices )) || { echo "== $name: no PSB found"; return; }
	echo "== $name: $nslices slices, $bytes bytes ($(( bytes / nslices )) a slice)"

	local ref="" r t m insn lib_insn=""
	if [[ -n $ipt_blk ]]; then
		read -r t m < <(best "$ipt_blk" "$@" "${slices[@]}")
		lib_insn=$(awk '$1 == "insn" { print $2 }' "$tmp/out")
		ref=$t
		line "libipt pt_blk, one process" "$t" "$m" "$bytes"
	fi
	read -r t m < <(best "$hwt" coverage "$@" "${slices[@]}")
	insn=$(awk '/^# all traces/ { all = 1 } all && $1 == "insn:" { print $2 }' "$tmp/out")
	line "hwt coverage, one process" "$t" "$m" "$bytes" "$ref"
	read -r t m < <(best "$hwt" coverage -j2 "$@" "${slices[@]}")
	line "hwt coverage -j2, one process" "$t" "$m" "$bytes" "$ref"
	local start_ns end_ns
	start_ns=$(date +%s%N)
	for s in "${slices[@]}"; do
		"$hwt" coverage "$@" "$s" >/dev/null
	done
	end_ns=$(date +%s%N)
	line "hwt coverage, a process per slice" \
		"$(awk -v a="$start_ns" -v b="$end_ns" 'BEGIN { print (b - a) / 1e9 }')" \
		0 "$bytes" "$ref"
	# The library's loop against libipt's, both with warm caches: the
	# best of several rounds over the slices in one process.
	local warm_ref="" us
	if [[ -n $ipt_blk ]]; then
		"$ipt_blk" -n $((rounds + 1)) "$@" "${slices[@]}" >"$tmp/out" ||
			die "$ipt_blk -n failed"
		warm_ref=$(awk '$1 == "seconds" { print $2 }' "$tmp/out")
		line "libipt pt_blk, caches warm (a round)" "$warm_ref" 0 "$bytes"
	fi
	if [[ -x $build/bench_fuzz ]]; then
		"$build/bench_fuzz" -n "$rounds" "$@" "${slices[@]}" >"$tmp/out" ||
			die "bench_fuzz failed"
		us=$(awk '/one decoder/ { print $4 }' "$tmp/out")
		line "library loop, one decoder (warm)" \
			"$(awk -v u="$us" -v n="$nslices" 'BEGIN { print u * n / 1e6 }')" \
			0 "$bytes" "$warm_ref"
		us=$(awk '/a decoder each/ { print $5 }' "$tmp/out")
		line "library loop, a new decoder each" \
			"$(awk -v u="$us" -v n="$nslices" 'BEGIN { print u * n / 1e6 }')" \
			0 "$bytes"
		[[ $(awk '/instructions/ { print $1 }' "$tmp/out") == "$insn" ]] || {
			echo "  instructions DIFFER: bench_fuzz $(awk '/instructions/ { print $1 }' "$tmp/out"), hwt coverage $insn"
			differ=1
		}
	fi
	if [[ -n $lib_insn ]]; then
		if [[ $insn == "$lib_insn" ]]; then
			echo "  instructions: $insn (hwt and libipt)"
		else
			echo "  instructions DIFFER: hwt $insn, libipt $lib_insn"
			differ=1
		fi
	else
		echo "  instructions: $insn (hwt)"
	fi
}

synthetic=$build/bench-flow-$flow_size-s$seed
[[ -s $synthetic.pt ]] || die "no $synthetic.pt (run bench/run-flow.sh once)"
corpus "synthetic" "$synthetic.pt" --raw "$synthetic.bin:0x400000"

list=$build/bench-real.list
if [[ -s $list ]]; then
	# shellcheck disable=SC2086
	while IFS=$'\t' read -r name trace opts; do
		[[ -s $trace ]] && corpus "$name (vgpt)" "$trace" $opts
	done <"$list"
fi
exit $differ

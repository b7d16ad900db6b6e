#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# bench/run-flow.sh [--size SIZE] [--rounds N] [BUILD_DIR]
#
# Program-flow benchmark: one generated program and trace (bench/gen_flow.c:
# loops, calls, returns, indirect branches, ~1000 functions / ~9000 distinct
# blocks), decoded by
#   hwt ptxed --block-decoder --quiet   (one thread)
#   hwt flow --stat -j2
#   hwt coverage
#   libipt 2.1.2's block decoder         (bench/flow/ipt_blk.c, pt_blk_*)
# Prints, best wall clock of N, MB/s of trace and instructions/s (the
# instruction count is libipt's, checked against hwt ptxed --stat), the
# speed-up over libipt and the peak RSS (/usr/bin/time, else getrusage).
#
# The trace is cached in BUILD_DIR (regenerated when gen_flow is rebuilt),
# libipt in REPO/.cache/libipt (scripts/fetch-libipt.sh). Nothing here
# asserts on timings.
#
# Environment: BENCH_FLOW_SIZE (default 64M), BENCH_ROUNDS (3),
# BENCH_FLOW_SEED (1), LIBIPT_DIR, BENCH_TIMEOUT (900 s per run).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
size=${BENCH_FLOW_SIZE:-64M}
rounds=${BENCH_ROUNDS:-3}
seed=${BENCH_FLOW_SEED:-1}
libipt_dir=${LIBIPT_DIR:-$REPO/.cache/libipt}
run_timeout=${BENCH_TIMEOUT:-900}

while [[ $# -gt 0 ]]; do
	case $1 in
	--size) size=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	-h|--help) sed -n '3,22p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "bench-flow: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
build=$(cd "${1:-$REPO/build}" && pwd)
hwt=$build/hwt
gen=$build/gen_flow

die() { echo "bench-flow: error: $*" >&2; exit 1; }
[[ -x $gen && -x $hwt ]] || die "$gen or $hwt not built (make)"

# ---- the program and its trace
prog=$build/bench-flow-$size-s$seed
if [[ ! -s $prog.pt || ! -s $prog.bin || $gen -nt $prog.pt ]]; then
	echo "== generating $prog.{bin,pt}"
	"$gen" -s "$size" -S "$seed" "$prog.tmp"
	mv "$prog.tmp.bin" "$prog.bin"
	mv "$prog.tmp.pt" "$prog.pt"
fi
trace=$prog.pt
bytes=$(stat -c %s "$trace")
image=(--raw "$prog.bin:0x400000")

# ---- libipt's block decoder
echo "== libipt (scripts/fetch-libipt.sh $libipt_dir)"
ipt_blk=""
if bash "$REPO/scripts/fetch-libipt.sh" "$libipt_dir" >"$build/libipt-fetch.log" 2>&1; then
	grep '^fetch-libipt:' "$build/libipt-fetch.log" | tail -n 1
	lib=$libipt_dir/build/lib
	inc=$libipt_dir/build/libipt/include
	if ${CC:-cc} -O2 -std=c17 -D_GNU_SOURCE -I"$inc" \
		"$REPO/bench/flow/ipt_blk.c" -L"$lib" -Wl,-rpath,"$lib" -lipt \
		-o "$build/ipt_blk" 2>"$build/ipt_blk.log"; then
		ipt_blk=$build/ipt_blk
	else
		cat "$build/ipt_blk.log" >&2
	fi
else
	tail -n 20 "$build/libipt-fetch.log" >&2
fi
[[ -n $ipt_blk ]] || echo "bench-flow: libipt's block decoder unavailable; timing hwt only" >&2

# ---- timing
log=$build/bench-flow.log
: >"$log"
have_time=0
[[ -x /usr/bin/time ]] && have_time=1

# measure N CMD...: "SECONDS MAXRSS_KB" of the best run, or "FAIL rc".
measure() {
	local n=$1 i t0 t1 rc best="" rss=0 r
	shift
	for ((i = 0; i < n; i++)); do
		rc=0
		t0=$EPOCHREALTIME
		if ((have_time)); then
			timeout "$run_timeout" /usr/bin/time -f '%M' -o "$build/bench-flow.rss" \
				"$@" >/dev/null 2>>"$log" || rc=$?
		else
			timeout "$run_timeout" "$@" >/dev/null 2>>"$log" || rc=$?
		fi
		t1=$EPOCHREALTIME
		if [[ $rc -ne 0 ]]; then
			echo "FAIL $rc"
			return
		fi
		if ((have_time)); then
			r=$(tail -n 1 "$build/bench-flow.rss")
			((r > rss)) && rss=$r
		fi
		best=$(awk -v a="$t0" -v b="$t1" -v best="$best" \
			'BEGIN { t = b - a; if (best == "" || t < best) best = t; printf "%.6f", best }')
	done
	echo "$best $rss"
}

# The instruction count: libipt's, else hwt ptxed's; both when they can be
# compared (a mismatch is reported, not fatal: scripts/crosscheck-libipt.sh
# is the check).
hwt_insn=$("$hwt" ptxed --quiet --stat --stat:insn "${image[@]}" --pt "$trace" |
	awk '$1 == "insn:" { sub(/\.$/, "", $2); print $2 }')
insn=$hwt_insn
if [[ -n $ipt_blk ]]; then
	ipt_insn=$("$ipt_blk" "${image[@]}" "$trace" | awk '$1 == "insn" { print $2 }')
	if [[ $ipt_insn != "$hwt_insn" ]]; then
		echo "bench-flow: warning: instruction counts differ: hwt $hwt_insn, libipt $ipt_insn" >&2
	fi
	insn=$ipt_insn
fi

echo "== bench-flow: $trace ($bytes bytes, $insn instructions, seed $seed), image $(stat -c %s "$prog.bin") bytes, $(nproc) cpus"
echo "-- best of $rounds; peak RSS of the process"

ref=""
[[ -n $ipt_blk ]] && ref=$(measure "$rounds" "$ipt_blk" "${image[@]}" "$trace")

# row LABEL "SECONDS RSS"
row() {
	local label=$1 m=$2
	if [[ $m == FAIL* ]]; then
		printf '  %-34s failed (exit %s; see %s)\n' "$label" "${m#FAIL }" "$log"
		return
	fi
	awk -v l="$label" -v m="$m" -v b="$bytes" -v n="$insn" -v ref="$ref" 'BEGIN {
		split(m, a, " "); t = a[1]; rss = a[2]
		printf "  %-34s %8.3f s %8.1f MB/s %8.1f Minsn/s", l, t, b / t / 1e6, n / t / 1e6
		if (ref != "" && ref !~ /^FAIL/ && t > 0) {
			split(ref, r, " ")
			printf " %6.2fx libipt", r[1] / t
		} else {
			printf "        -      "
		}
		if (rss > 0)
			printf "  %7.1f MB RSS", rss / 1024
		printf "\n"
	}'
}

row "hwt ptxed --block-decoder --quiet" \
	"$(measure "$rounds" "$hwt" ptxed --block-decoder --quiet "${image[@]}" --pt "$trace")"
row "hwt flow --stat -j2" \
	"$(measure "$rounds" "$hwt" flow --stat -j2 "${image[@]}" "$trace")"
row "hwt coverage" \
	"$(measure "$rounds" "$hwt" coverage "${image[@]}" "$trace")"
[[ -n $ref ]] && row "libipt pt_blk (ipt_blk)" "$ref"
exit 0

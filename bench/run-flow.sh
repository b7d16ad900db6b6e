#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# bench/run-flow.sh [--size SIZE] [--rounds N] [--no-real] [BUILD_DIR]
#
# Program-flow benchmark. Traces:
#   synthetic  a generated program and trace (bench/gen_flow.c: loops,
#              calls, returns, indirect branches, ~1000 functions / ~9000
#              distinct blocks; TIPs with full 8-byte IPs, TNT-64 only),
#              twice: each conditional jump a coin flip (the worst case),
#              and with -b mostly one way, biased as python3's are
#   gzip, xz, python3
#              real programs recorded with vgpt (bench/vgpt-traces.sh;
#              skipped with a message if vgpt is not built): TNT-8,
#              compressed IPs, several code images
# each decoded, with the same images, by
#   hwt ptxed --block-decoder --quiet   (one thread, every block made)
#   hwt flow --stat, hwt flow --stat -j2 (hwt ptxed has no -j: its
#                                        blocks, libipt's, depend on the
#                                        one decoder's cache history)
#   hwt coverage, hwt coverage -j2       (AFL-style edge map)
#   libipt 2.1.2's block decoder         (bench/flow/ipt_blk.c, pt_blk_*)
# The runs take turns, N rounds of libipt and each of hwt's, so that a
# slow phase of a shared host falls on all of them. Prints per run the
# best wall clock of N (and the user+sys CPU time of that run), MB/s of
# trace and instructions/s (the instruction count is libipt's, checked
# against hwt ptxed's), the speed-up over libipt twice (best over best,
# and the median of each round's libipt run over hwt's run) and the peak
# RSS (/usr/bin/time). Wall clock on a shared machine is noisy:
# bench/count-flow.sh gives the load-independent instruction counts.
#
# Traces are cached in BUILD_DIR (the synthetic one regenerated when
# gen_flow is rebuilt), libipt in REPO/.cache/libipt
# (scripts/fetch-libipt.sh). Nothing here asserts on timings.
#
# Environment: BENCH_FLOW_SIZE (synthetic trace size, default 64M),
# BENCH_ROUNDS (3), BENCH_FLOW_SEED (1), LIBIPT_DIR, BENCH_TIMEOUT (900 s
# per run).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
size=${BENCH_FLOW_SIZE:-64M}
rounds=${BENCH_ROUNDS:-3}
seed=${BENCH_FLOW_SEED:-1}
libipt_dir=${LIBIPT_DIR:-$REPO/.cache/libipt}
run_timeout=${BENCH_TIMEOUT:-900}
real=1

while [[ $# -gt 0 ]]; do
	case $1 in
	--size) size=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	--no-real) real=0; shift ;;
	-h|--help) sed -n '3,30p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "bench-flow: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
build=$(cd "${1:-$REPO/build}" && pwd)
hwt=$build/hwt
gen=$build/gen_flow

die() { echo "bench-flow: error: $*" >&2; exit 1; }
[[ -x $gen && -x $hwt ]] || die "$gen or $hwt not built (make)"
[[ -x /usr/bin/time ]] || die "/usr/bin/time is needed (Debian: time)"

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

log=$build/bench-flow.log
: >"$log"

# once CMD...: "WALL CPU MAXRSS_KB" of one run, or "FAIL rc".
once() {
	local rc=0 t0 t1
	t0=$EPOCHREALTIME
	timeout "$run_timeout" /usr/bin/time -f '%U %S %M' \
		-o "$build/bench-flow.time" "$@" >/dev/null 2>>"$log" || rc=$?
	t1=$EPOCHREALTIME
	if [[ $rc -ne 0 ]]; then
		echo "FAIL $rc"
		return
	fi
	awk -v r="$(tail -n 1 "$build/bench-flow.time")" -v t0="$t0" -v t1="$t1" \
		'BEGIN { split(r, a, " "); printf "%.6f %s %d\n", t1 - t0, a[1] + a[2], a[3] }'
}

# row LABEL RUNS BYTES INSN REFRUNS: RUNS and REFRUNS are "WALL CPU RSS"
# triples, one per round (or "FAIL rc"), the reference's (libipt's) from
# the same rounds. Prints the best wall clock (and that run's CPU time),
# MB/s and instructions/s at it, the best over libipt's best, the median
# of the rounds' own ratios (libipt's run over hwt's in the same round:
# a slow phase of a shared host falls on both) and the peak RSS.
row() {
	local label=$1 runs=$2 bytes=$3 insn=$4 ref=$5
	if [[ $runs == *FAIL* ]]; then
		printf '  %-34s failed (%s; see %s)\n' "$label" \
			"$(grep -o 'FAIL [0-9]*' <<<"$runs" | head -n 1)" "$log"
		return
	fi
	awk -v l="$label" -v m="$runs" -v b="$bytes" -v n="$insn" -v ref="$ref" '
	function best(s, out,   a, k, i, t) {
		k = split(s, a, " "); t = -1
		for (i = 1; i + 2 <= k; i += 3)
			if (t < 0 || a[i] < t) { t = a[i]; out[1] = a[i]; out[2] = a[i + 1] }
		return t
	}
	BEGIN {
		k = split(m, a, " "); rss = 0
		for (i = 3; i <= k; i += 3) if (a[i] > rss) rss = a[i]
		t = best(m, bm); c = bm[2]
		if (t <= 0) t = 0.005
		printf "  %-34s %7.2f s (cpu %6.2f) %8.1f MB/s %8.1f Minsn/s", l, t, c, b / t / 1e6, n / t / 1e6
		if (ref != "" && ref !~ /FAIL/) {
			split(ref, r, " "); nr = 0
			for (i = 1; i <= k; i += 3)
				if (a[i] > 0) q[++nr] = r[i] / a[i]
			# (insertion sort: a handful of rounds)
			for (i = 2; i <= nr; i++)
				for (j = i; j > 1 && q[j - 1] > q[j]; j--) { x = q[j]; q[j] = q[j - 1]; q[j - 1] = x }
			med = nr % 2 ? q[(nr + 1) / 2] : (q[nr / 2] + q[nr / 2 + 1]) / 2
			printf " %6.2fx %6.2fx", best(ref, br) / t, med
		} else {
			printf "        -        -"
		}
		printf "  %7.1f MB RSS\n", rss / 1024
	}'
}

# bench NAME TRACE IMAGE-OPTIONS...: the runs take turns, round by round
# (libipt, then each of hwt's), so that the host's slow phases fall on
# all of them alike.
bench() {
	local name=$1 trace=$2 bytes hwt_insn insn ipt_insn ref="" i j
	shift 2
	bytes=$(stat -c %s "$trace")
	hwt_insn=$("$hwt" ptxed --quiet --stat --stat:insn "$@" --pt "$trace" |
		awk '$1 == "insn:" { sub(/\.$/, "", $2); print $2 }')
	insn=$hwt_insn
	if [[ -n $ipt_blk ]]; then
		ipt_insn=$("$ipt_blk" "$@" "$trace" | awk '$1 == "insn" { print $2 }')
		if [[ $ipt_insn != "$hwt_insn" ]]; then
			echo "bench-flow: warning: $name: instruction counts differ: hwt $hwt_insn, libipt $ipt_insn" >&2
		fi
		insn=$ipt_insn
	fi
	echo "== $name: $trace ($bytes bytes, $insn instructions)"
	local labels=("hwt ptxed --block-decoder --quiet" "hwt flow --stat"
		"hwt flow --stat -j2" "hwt coverage" "hwt coverage -j2")
	local runs=("" "" "" "" "")
	for ((i = 0; i < rounds; i++)); do
		[[ -n $ipt_blk ]] && ref+="$(once "$ipt_blk" "$@" "$trace") "
		runs[0]+="$(once "$hwt" ptxed --block-decoder --quiet "$@" --pt "$trace") "
		runs[1]+="$(once "$hwt" flow --stat "$@" "$trace") "
		runs[2]+="$(once "$hwt" flow --stat -j2 "$@" "$trace") "
		runs[3]+="$(once "$hwt" coverage "$@" "$trace") "
		runs[4]+="$(once "$hwt" coverage -j2 "$@" "$trace") "
	done
	for j in "${!labels[@]}"; do
		row "${labels[j]}" "${runs[j]}" "$bytes" "$insn" "$ref"
	done
	[[ -n $ref ]] && row "libipt pt_blk (ipt_blk)" "$ref" "$bytes" "$insn" "$ref"
	return 0
}

echo "-- $rounds rounds, the runs taking turns; best wall clock (user+sys CPU of that run); x libipt: best over best, then the median of the rounds' ratios; peak RSS; $(nproc) cpus, load $(cut -d' ' -f1-3 /proc/loadavg)"

# ---- the synthetic program and its traces: each jcc a coin flip (the
# worst case), and (-b) mostly one way, as real code's are
for bias in "" -b; do
	prog=$build/bench-flow-$size-s$seed$bias
	if [[ ! -s $prog.pt || ! -s $prog.bin || $gen -nt $prog.pt ]]; then
		echo "== generating $prog.{bin,pt}"
		"$gen" -s "$size" -S "$seed" $bias "$prog.tmp"
		mv "$prog.tmp.bin" "$prog.bin"
		mv "$prog.tmp.pt" "$prog.pt"
	fi
	bench "synthetic (gen_flow -s $size -S $seed${bias:+ $bias})" "$prog.pt" \
		--raw "$prog.bin:0x400000"
done

# ---- real programs, recorded with vgpt
if ((real)); then
	list=$build/bench-real.list
	bash "$REPO/bench/vgpt-traces.sh" "$build" "$build/bench-real" >"$list" ||
		die "bench/vgpt-traces.sh failed"
	# (Paths with blanks in the images would need more than this.)
	# shellcheck disable=SC2086
	while IFS=$'\t' read -r name trace opts; do bench "$name (vgpt)" "$trace" $opts; done <"$list"
fi
exit 0

#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# bench/run.sh [--size SIZE] [--rounds N] [BUILD_DIR]
#
# Packet-decode benchmark: hwt dump, hwt ptdump and libipt's ptdump over
# the same synthetic trace (bench/gen_pt.c), wall clock, best of N.
#   1. decode only (--quiet): MB/s and the speed-up over libipt ptdump
#   2. full text output to /dev/null, for reference
#   3. BUILD_DIR/bench_pt, if built: the library without the CLI
#
# The trace is cached in BUILD_DIR (regenerated when gen_pt is rebuilt),
# libipt in REPO/.cache/libipt (scripts/fetch-libipt.sh). Nothing here
# asserts on timings.
#
# Environment: BENCH_SIZE (default 128M), BENCH_ROUNDS (3),
# BENCH_TEXT_ROUNDS (1), BENCH_SEED (1), LIBIPT_DIR, BENCH_TIMEOUT (900 s
# per run).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
size=${BENCH_SIZE:-128M}
rounds=${BENCH_ROUNDS:-3}
text_rounds=${BENCH_TEXT_ROUNDS:-1}
seed=${BENCH_SEED:-1}
libipt_dir=${LIBIPT_DIR:-$REPO/.cache/libipt}
run_timeout=${BENCH_TIMEOUT:-900}

while [[ $# -gt 0 ]]; do
	case $1 in
	--size) size=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	--text-rounds) text_rounds=$2; shift 2 ;;
	-h|--help) sed -n '3,18p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "bench: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
build=$(cd "${1:-$REPO/build}" && pwd)
hwt=$build/hwt
gen=$build/gen_pt

die() { echo "bench: error: $*" >&2; exit 1; }
[[ -x $gen ]] || die "$gen not built (make)"

# ---- the trace
trace=$build/bench-$size-s$seed.pt
if [[ ! -s $trace || $gen -nt $trace ]]; then
	echo "== generating $trace"
	"$gen" -s "$size" -S "$seed" "$trace.tmp" 2>&1
	mv "$trace.tmp" "$trace"
fi
bytes=$(stat -c %s "$trace")

# ---- libipt's ptdump, the reference
echo "== libipt (scripts/fetch-libipt.sh $libipt_dir)"
if bash "$REPO/scripts/fetch-libipt.sh" "$libipt_dir" >"$build/libipt-fetch.log" 2>&1; then
	grep '^fetch-libipt:' "$build/libipt-fetch.log" | tail -n 1
	ptdump=$libipt_dir/build/bin/ptdump
else
	tail -n 20 "$build/libipt-fetch.log" >&2
	echo "bench: libipt ptdump unavailable; timing hwt only" >&2
	ptdump=""
fi

# ---- timing
log=$build/bench.log
: >"$log"

# best_of N CMD...: print the best wall-clock seconds, or "FAIL rc".
best_of() {
	local n=$1 i t0 t1 best="" rc
	shift
	for ((i = 0; i < n; i++)); do
		t0=$EPOCHREALTIME
		rc=0
		timeout "$run_timeout" "$@" >/dev/null 2>>"$log" || rc=$?
		t1=$EPOCHREALTIME
		if [[ $rc -ne 0 ]]; then
			echo "FAIL $rc"
			return
		fi
		best=$(awk -v a="$t0" -v b="$t1" -v best="$best" \
			'BEGIN { t = b - a; if (best == "" || t < best) best = t; printf "%.6f", best }')
	done
	echo "$best"
}

has_cmd() {
	[[ -x $hwt ]] && "$hwt" help "$1" >/dev/null 2>&1
}

# row LABEL SECONDS [REF_SECONDS]
row() {
	local label=$1 t=$2 ref=${3:-}
	if [[ $t == FAIL* ]]; then
		printf '  %-24s failed (exit %s; see %s)\n' "$label" "${t#FAIL }" "$log"
		return
	fi
	awk -v l="$label" -v t="$t" -v b="$bytes" -v ref="$ref" 'BEGIN {
		printf "  %-24s %8.3f s %9.1f MB/s", l, t, b / t / 1e6
		if (ref != "" && ref !~ /^FAIL/ && t > 0)
			printf "   %6.2fx libipt ptdump", ref / t
		printf "\n"
	}'
}

# section TITLE ROUNDS EXTRA_ARGS...: hwt dump, hwt ptdump, libipt ptdump.
section() {
	local title=$1 n=$2 ref="" t_dump="" t_ptdump=""
	shift 2
	echo "-- $title, best of $n"
	[[ -n $ptdump ]] && ref=$(best_of "$n" "$ptdump" "$@" "$trace")
	if has_cmd dump; then
		t_dump=$(best_of "$n" "$hwt" dump "$@" "$trace")
		row "hwt dump $*" "$t_dump" "$ref"
	else
		echo "  hwt dump $*: not available"
	fi
	if has_cmd ptdump; then
		t_ptdump=$(best_of "$n" "$hwt" ptdump "$@" "$trace")
		row "hwt ptdump $*" "$t_ptdump" "$ref"
	else
		echo "  hwt ptdump $*: not available"
	fi
	if [[ -n $ref ]]; then
		row "libipt ptdump $*" "$ref"
	fi
}

echo "== bench: $trace ($bytes bytes, seed $seed), $(nproc) cpus"
section "decode only (--quiet)" "$rounds" --quiet
section "text output to /dev/null" "$text_rounds"
if [[ -x $build/bench_pt ]]; then
	echo "-- in-process (bench_pt), best of $rounds"
	"$build/bench_pt" -n "$rounds" "$trace" | sed 's/^/  /' ||
		echo "  bench_pt failed"
fi

#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# bench/run-jobs.sh [--iter N] [--rounds N] [--jobs "1 2"] [--data FILE]...
#                   [BUILD_DIR]
#
# -j on perf.data: a stream cut at PSBs and decoded on threads, each with
# its own view of the processes. The files: tests/data/perfdata_loop.asm
# at N iterations (default 400000: about 4 MB of trace, 5.3 M
# instructions; tests/data/perfdata_loop.bash), packed by mkptdata per
# thread with lost data at 300 places (notes the cuts must avoid), and on
# a cpu handed to a second process 2000 times; then each --data FILE (a
# `hwt record` file, say). For each, hwt flow --stat, coverage, flow
# --blocks and calls (output to a file) with each -j: the best wall clock of
# the rounds and the CPU time (user + sys) of that run, in ms, and
# whether the output is the -j1 output. Nothing here asserts on timings;
# a different output is an error (exit 1).
# Environment: BENCH_ROUNDS (the default of --rounds).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
iter=400000
rounds=${BENCH_ROUNDS:-5}
jobs="1 2"
data=()
while [ $# -gt 0 ]; do
	case $1 in
	--iter) iter=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	--jobs) jobs=$2; shift 2 ;;
	--data) data+=("$2"); shift 2 ;;
	-h|--help) sed -n '3,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
		exit 0 ;;
	-*) echo "run-jobs: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
build=$(cd "${1:-$REPO/build}" && pwd)
for t in hwt ptgen mkptdata; do
	[ -x "$build/$t" ] || { echo "run-jobs: no $build/$t" >&2; exit 1; }
done
for c in yasm ld objcopy nm; do
	command -v $c >/dev/null || { echo "run-jobs: needs $c" >&2; exit 1; }
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$REPO/tests/data/perfdata_loop.bash"
perfdata_loop "$tmp" loop "$iter" "$build"
"$build/mkptdata" --losses 300 --pt "$tmp/loop.pt" --elf "$tmp/loop" \
	"$tmp/thread.data"
"$build/mkptdata" --cpu 0 --switch "4321:$tmp/loop.b:2000" --losses 300 \
	--pt "$tmp/loop.pt" --elf "$tmp/loop" "$tmp/cpu.data"

# time1 OUT CMD...: one run; "wall cpu" in ms, the output in OUT.
time1() {
	local out=$1 TIMEFORMAT='%3R %3U %3S' t
	shift
	t=$( { time "$@" >"$out" 2>/dev/null; } 2>&1)
	awk -v t="$t" 'BEGIN { split(t, a, " ");
		printf "%.0f %.0f", a[1] * 1000, (a[2] + a[3]) * 1000 }'
}

status=0
printf "%-22s %-14s %-4s %10s %10s  %s\n" file mode -j "wall (ms)" \
	"cpu (ms)" output
for f in "$tmp/thread.data" "$tmp/cpu.data" "${data[@]}"; do
	name=$(basename "$f")
	for mode in "flow --stat" coverage "flow --blocks" calls; do
		for j in $jobs; do
			best=""
			for ((r = 0; r < rounds; r++)); do
				# shellcheck disable=SC2086
				t=$(time1 "$tmp/out" "$build/hwt" $mode -j$j "$f")
				if [ -z "$best" ] ||
				   [ "${t% *}" -lt "${best% *}" ]; then
					best=$t
				fi
			done
			if [ "$j" = 1 ]; then
				mv "$tmp/out" "$tmp/ref"
				same=-
			elif cmp -s "$tmp/out" "$tmp/ref"; then
				same="same as -j1"
			else
				same="DIFFERS from -j1"
				status=1
			fi
			printf "%-22s %-14s %-4s %10s %10s  %s\n" "$name" \
				"$mode" "$j" "${best% *}" "${best#* }" "$same"
		done
	done
done
exit $status

#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# bench/run-switch.sh [--iter N] [--switches "0 1000 5000"] [--rounds N]
#                     [--hwt HWT] [BUILD_DIR]
#
# What a context switch costs the decoder: a CPU-wide perf.data whose cpu
# goes back and forth between two processes, decoded by hwt flow --stat
# and hwt coverage. The program is tests/data/perfdata_loop.asm at N
# iterations (80000: 1.06 M instructions, an 810 KB trace written with
# ptgen as tests/cli/perfdata_flow.sh writes it); the second process runs
# the same code (objcopy'd, other symbol names), so every count gives the
# same flow and only the switches differ (tests/tools/mkptdata --switch).
# Prints per count of switches the CPU time (user + sys, mean of the
# rounds) and, from the count with no switch, the cost of one switch.
# --hwt times another hwt binary (an older build) on the same files.
# Nothing here asserts on timings. Needs yasm, ld, objcopy.
# Environment: BENCH_ROUNDS (the default of --rounds).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
iter=80000
switches="0 1000 5000"
rounds=${BENCH_ROUNDS:-7}
hwt=""
while [ $# -gt 0 ]; do
	case $1 in
	--iter) iter=$2; shift 2 ;;
	--switches) switches=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	--hwt) hwt=$2; shift 2 ;;
	-*) echo "run-switch: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
build=$(cd "${1:-$REPO/build}" && pwd)
for t in hwt ptgen mkptdata; do
	[ -x "$build/$t" ] || { echo "run-switch: no $build/$t" >&2; exit 1; }
done
hwt=${hwt:-$build/hwt}
for c in yasm ld objcopy nm; do
	command -v $c >/dev/null || { echo "run-switch: needs $c" >&2; exit 1; }
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$REPO/tests/data/perfdata_loop.bash"
perfdata_loop "$tmp" loop "$iter" "$build"

clock() {	# CPU time in ms, mean of the rounds
	local TIMEFORMAT='%3U %3S' t
	t=$( { time for ((r = 0; r < rounds; r++)); do
		"$@" >/dev/null 2>&1 || true; done; } 2>&1)
	awk -v t="$t" -v n="$rounds" 'BEGIN { split(t, a, " ");
		printf "%.1f", (a[1] + a[2]) * 1000 / n }'
}

printf "%-9s %-8s %-12s %-12s %s\n" switches insn "flow (ms)" \
	"coverage (ms)" "per switch (us, flow / coverage)"
base_f="" base_c=""
for n in $switches; do
	f="$tmp/sw$n.data"
	if [ "$n" = 0 ]; then
		"$build/mkptdata" --cpu 0 --pt "$tmp/loop.pt" --elf "$tmp/loop" "$f"
	else
		"$build/mkptdata" --cpu 0 --switch "4321:$tmp/loop.b:$n" \
			--pt "$tmp/loop.pt" --elf "$tmp/loop" "$f"
	fi
	insn=$("$hwt" flow --stat "$f" |
		awk '/^insn:/ && !i { i = $2 } END { print i }')
	tf=$(clock "$hwt" flow --stat "$f")
	tc=$(clock "$hwt" coverage "$f")
	if [ "$n" = 0 ]; then
		base_f=$tf base_c=$tc per="-"
	elif [ -n "$base_f" ]; then
		per=$(awk -v a="$tf" -v b="$base_f" -v c="$tc" -v d="$base_c" \
			-v n="$n" 'BEGIN { printf "%.2f / %.2f",
				(a - b) * 1000 / n, (c - d) * 1000 / n }')
	else
		per="(no 0 run)"
	fi
	printf "%-9s %-8s %-12s %-12s %s\n" "$n" "$insn" "$tf" "$tc" "$per"
done

#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# bench/ab-flow.sh [--rounds N] [--mode MODE] [--trace NAME]... [--build DIR]
#                  HWT_A HWT_B [HWT_C ...]
#
# hwt binaries against each other on the flow benchmark's traces, the
# way doc/flow-speed.md compares builds: the CPU time of each run (perf
# stat's task-clock; user+sys from /usr/bin/time without perf), the
# binaries taking turns (A, B, A, B, ...) so that a slow phase of a shared
# host falls on all of them, N rounds; per trace and binary the minimum
# and the median in ms, and the first binary's minimum over each one's.
# Before timing, it checks that all binaries print the same for each
# trace (coverage: edges, map hash, blocks, instructions; ptxed and flow:
# their --stat), and stops if not: a faster build with other output is
# not a result.
#
#   --mode MODE   coverage (default): hwt coverage
#                 ptxed: hwt ptxed --block-decoder --quiet
#                 flow: hwt flow --stat
#   --trace NAME  synthetic, or a name of BUILD/bench-real.list (gzip, xz,
#                 python3); repeatable; default all there are
#   --rounds N    rounds (default 7)
#   --build DIR   where bench/run-flow.sh left the traces (default build)
#
# Make the traces with bench/run-flow.sh first (BENCH_FLOW_SIZE and
# BENCH_FLOW_SEED as there). Keep a copy of the binary before a change
# (cp build/hwt /tmp/hwt.before), and build each with its own profile
# (`make pgo` after changing the decoder). Nothing here asserts on time.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
size=${BENCH_FLOW_SIZE:-64M}
seed=${BENCH_FLOW_SEED:-1}
rounds=7
mode=coverage
build=$REPO/build
names=()

die() { echo "ab-flow: error: $*" >&2; exit 1; }

while [[ $# -gt 0 ]]; do
	case $1 in
	--rounds) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || die "--rounds needs a count"
		rounds=$2; shift 2 ;;
	--mode) mode=${2:-}; shift 2 ;;
	--trace) names+=("${2:-}"); shift 2 ;;
	--build) build=${2:-}; shift 2 ;;
	-h|--help) sed -n '3,29p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) die "unknown option $1 (see --help)" ;;
	*) break ;;
	esac
done
case $mode in
coverage|ptxed|flow) ;;
*) die "--mode is coverage, ptxed or flow, not '$mode'" ;;
esac
[[ $# -ge 2 ]] || die "give two hwt binaries or more (see --help)"
bins=("$@")
for b in "${bins[@]}"; do
	[[ -x $b ]] || die "$b is not an executable"
done

# The traces: NAME, TRACE, image options (as bench/run-flow.sh runs them).
declare -A tr_file tr_opts
order=()
syn=$build/bench-flow-$size-s$seed
if [[ -s $syn.pt && -s $syn.bin ]]; then
	tr_file[synthetic]=$syn.pt
	tr_opts[synthetic]="--raw $syn.bin:0x400000"
	order+=(synthetic)
fi
if [[ -s $build/bench-real.list ]]; then
	while IFS=$'\t' read -r name trace opts; do
		tr_file[$name]=$trace
		tr_opts[$name]=$opts
		order+=("$name")
	done <"$build/bench-real.list"
fi
((${#order[@]})) || die "no traces in $build: run bench/run-flow.sh first"
if ((${#names[@]})); then
	for n in "${names[@]}"; do
		[[ -n ${tr_file[$n]:-} ]] || die "no trace '$n' (there are: ${order[*]})"
	done
	order=("${names[@]}")
fi

# cmdline BIN NAME CHECK: the mode's command into @cmd; with CHECK, its
# --stat form.
cmdline() {
	local bin=$1 name=$2 check=$3 opts
	# (Paths with blanks in the images would need more than this.)
	read -r -a opts <<<"${tr_opts[$name]}"
	case $mode in
	coverage) cmd=("$bin" coverage "${opts[@]}" "${tr_file[$name]}") ;;
	ptxed)
		cmd=("$bin" ptxed --block-decoder --quiet)
		((check)) && cmd+=(--stat)
		cmd+=("${opts[@]}" --pt "${tr_file[$name]}") ;;
	flow) cmd=("$bin" flow --stat "${opts[@]}" "${tr_file[$name]}") ;;
	esac
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

use_perf=0
if command -v perf >/dev/null &&
	perf stat -x, -e task-clock -o "$tmp/probe" true 2>/dev/null &&
	grep -q task-clock "$tmp/probe"; then
	use_perf=1
fi
[[ -x /usr/bin/time ]] || ((use_perf)) ||
	die "needs perf or /usr/bin/time (Debian: linux-perf, time)"

# cpu_ms BIN NAME: the CPU time of one run, in ms.
cpu_ms() {
	local cmd
	cmdline "$1" "$2" 0
	if ((use_perf)); then
		perf stat -x, -e task-clock -o "$tmp/stat" -- "${cmd[@]}" \
			>/dev/null 2>&1 || return 1
		awk -F, '$3 ~ /^task-clock/ { printf "%.1f\n", $1 }' "$tmp/stat"
	else
		/usr/bin/time -f '%U %S' -o "$tmp/time" -- "${cmd[@]}" \
			>/dev/null 2>&1 || return 1
		awk '{ printf "%.1f\n", ($1 + $2) * 1000 }' "$tmp/time"
	fi
}

# min and median of the numbers in FILE
stats() { sort -n "$1" | awk '{ a[NR] = $1 } END { printf "%.0f %.0f\n", a[1], a[int((NR + 1) / 2)] }'; }

echo "-- $mode, $rounds rounds, $(if ((use_perf)); then echo task-clock; else echo user+sys; fi) in ms (min / median); x: the first binary's min over this one's"
echo "-- $(nproc) cpus, load $(cut -d' ' -f1-3 /proc/loadavg)"
for i in "${!bins[@]}"; do echo "   [$i] ${bins[$i]}"; done
for name in "${order[@]}"; do
	# Same output from every binary, or no timing.
	for ((i = 0; i < ${#bins[@]}; i++)); do
		cmdline "${bins[$i]}" "$name" 1
		"${cmd[@]}" >"$tmp/out$i" 2>&1 || die "${bins[$i]} failed on $name"
		((i)) || continue
		if ! cmp -s "$tmp/out0" "$tmp/out$i"; then
			diff "$tmp/out0" "$tmp/out$i" | head -n 10 >&2
			die "$name: [$i] prints other than [0]"
		fi
	done
	for ((i = 0; i < ${#bins[@]}; i++)); do : >"$tmp/t$i"; done
	for ((r = 0; r < rounds; r++)); do
		for ((i = 0; i < ${#bins[@]}; i++)); do
			cpu_ms "${bins[$i]}" "$name" >>"$tmp/t$i" || die "${bins[$i]} failed on $name"
		done
	done
	line=$(printf '%-10s' "$name")
	read -r ref _ < <(stats "$tmp/t0")
	for ((i = 0; i < ${#bins[@]}; i++)); do
		read -r mn md < <(stats "$tmp/t$i")
		line+=$(awk -v i="$i" -v mn="$mn" -v md="$md" -v ref="$ref" 'BEGIN {
			printf "  [%d] %5d / %5d ms", i, mn, md
			if (i > 0) printf " (%.3fx)", (mn > 0 ? ref / mn : 0) }')
	done
	echo "$line"
done

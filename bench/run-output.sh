#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# bench/run-output.sh [--mb N] [--rounds N] [--old HWT] [BUILD_DIR]
#
# The outputs that print a line per instruction, branch or function
# segment, written to /dev/null: how fast hwt makes the text, apart from
# the decoder (bench/run-flow.sh) and from the terminal or disk.
#   hwt flow               IP and symbol+offset per instruction
#   hwt flow --time        the same with each instruction's TSC
#   hwt flow --disasm      with Zydis' disassembly (formatted once per
#                          instruction, kept: cli_disasm_text())
#   hwt flow --branches    one line per taken branch
#   hwt calls              function-call history
#   hwt ptxed              libipt ptxed's format, with disassembly
# on the first N MiB (default 3) of each vgpt trace (bench/vgpt-traces.sh:
# gzip, xz, python3; raw traces with their --raw images). Prints the best
# wall clock of the rounds (default 3), lines and MB of output, lines/s;
# with --old HWT also that binary's time on the same command, after
# checking that both print the same (md5 of the output). Nothing here
# asserts on timings. Environment: BENCH_OUTPUT_MB, BENCH_ROUNDS.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mb=${BENCH_OUTPUT_MB:-3}
rounds=${BENCH_ROUNDS:-3}
old=""
while [[ $# -gt 0 ]]; do
	case $1 in
	--mb) mb=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	--old) old=$2; shift 2 ;;
	-h|--help) sed -n '3,23p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "bench-output: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
build=$(cd "${1:-$REPO/build}" && pwd)
hwt=$build/hwt
die() { echo "bench-output: error: $*" >&2; exit 1; }
[[ -x $hwt ]] || die "$hwt not built (make)"
[[ -z $old || -x $old ]] || die "$old: not an executable"

# shellcheck source=bench/lib.bash
. "$REPO/bench/lib.bash"

list=$(vgpt_list "$build")

echo "-- best wall clock of $rounds, output to /dev/null; $(nproc) cpus, load $(cut -d' ' -f1-3 /proc/loadavg)"
while IFS=$'\t' read -r name trace opts; do
	cut=$build/bench-output-$name-${mb}M.pt
	head -c $((mb << 20)) "$trace" >"$cut"
	echo "== $name: first $mb MiB of $trace"
	for cmd in "flow" "flow --time" "flow --disasm" "flow --branches" \
		   "calls" "ptxed"; do
		# shellcheck disable=SC2086
		if [[ $cmd == ptxed ]]; then
			args=(ptxed $opts --pt "$cut")
		else
			args=($cmd $opts "$cut")
		fi
		read -r lines bytes < <("$hwt" "${args[@]}" 2>/dev/null |
			wc -lc)
		t=$(best "$rounds" "$hwt" "${args[@]}")
		line=$(awk -v c="$cmd" -v t="$t" -v l="$lines" -v b="$bytes" 'BEGIN {
			printf "  hwt %-16s %8.3f s  %11d lines  %8.1f MB  %6.1f M lines/s",
				c, t, l, b / 1e6, l / t / 1e6 }')
		if [[ -n $old ]]; then
			if [[ $("$hwt" "${args[@]}" 2>&1 | md5sum) != \
			      $("$old" "${args[@]}" 2>&1 | md5sum) ]]; then
				line+="  (old: prints otherwise)"
			else
				to=$(best "$rounds" "$old" "${args[@]}")
				line+=$(awk -v t="$t" -v o="$to" 'BEGIN {
					printf "  old %8.3f s  %5.2fx", o, o / t }')
			fi
		fi
		echo "$line"
	done
done <"$list"

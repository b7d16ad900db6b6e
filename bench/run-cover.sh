#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# bench/run-cover.sh [--mb N] [--rounds N] [BUILD_DIR]
#
# Coverage for people against the map: on each vgpt trace (bench/
# vgpt-traces.sh: gzip, xz, python3; raw traces with their --raw images)
#   hwt coverage                      the AFL map alone
#   hwt coverage --lcov F             source lines (the programs' DWARF,
#                                     if any: Debian's binaries have none,
#                                     so mostly the counting by file)
#   hwt coverage --drcov F            the code that ran, by file
#   hwt coverage --lcov F --drcov G   both
#   ... --lcov with HWT_NO_TALLY=1    every block given out and counted
#                                     one by one (the decoder's tally off)
#   hwt coverage -j2 --lcov F
# and hwt flow --srcline on the first N MiB (default 3), to /dev/null.
# Prints the best wall clock of the rounds (default 3), the times the
# map's, and whether the tally's files are the ones the blocks given out
# make (cmp). Nothing here asserts on timings. Environment:
# BENCH_COVER_MB, BENCH_ROUNDS.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mb=${BENCH_COVER_MB:-3}
rounds=${BENCH_ROUNDS:-3}
while [[ $# -gt 0 ]]; do
	case $1 in
	--mb) mb=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	-h|--help) sed -n '3,22p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "bench-cover: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
build=$(cd "${1:-$REPO/build}" && pwd)
hwt=$build/hwt
die() { echo "bench-cover: error: $*" >&2; exit 1; }
[[ -x $hwt ]] || die "$hwt not built (make)"
out=$(mktemp -d "${TMPDIR:-/tmp}/hwt-bench-cover.XXXXXX")
trap 'rm -rf "$out"' EXIT

# shellcheck source=bench/lib.bash
. "$REPO/bench/lib.bash"

list=$(vgpt_list "$build")

echo "-- best wall clock of $rounds; $(nproc) cpus, load $(cut -d' ' -f1-3 /proc/loadavg)"
while IFS=$'\t' read -r name trace opts; do
	echo "== $name: $trace ($(($(stat -c %s "$trace") >> 20)) MiB)"
	# shellcheck disable=SC2086
	map=$(best "$rounds" "$hwt" coverage $opts "$trace")
	printf "  %-34s %8.3f s\n" "coverage (the map)" "$map"
	for what in "--lcov $out/a.info" "--drcov $out/a.drcov" \
		    "--lcov $out/a.info --drcov $out/a.drcov" \
		    "NO_TALLY --lcov $out/b.info --drcov $out/b.drcov" \
		    "-j2 --lcov $out/c.info --drcov $out/c.drcov"; do
		env=()
		if [[ $what == NO_TALLY* ]]; then
			env=(HWT_NO_TALLY=1)
			what=${what#NO_TALLY }
		fi
		# shellcheck disable=SC2086
		t=$(best "$rounds" env "${env[@]}" "$hwt" coverage $what $opts \
			"$trace")
		# (The options without their files.)
		label=$(echo "$what" | sed 's/ [^ -][^ ]*//g')
		[[ ${#env[@]} -eq 0 ]] || label+=" one by one"
		awk -v l="coverage $label" -v t="$t" -v m="$map" 'BEGIN {
			printf "  %-34s %8.3f s  %5.2fx the map\n", l, t, t / m }'
	done
	if cmp -s "$out/a.info" "$out/b.info" &&
	   cmp -s "$out/a.drcov" "$out/b.drcov" &&
	   cmp -s "$out/a.info" "$out/c.info" &&
	   cmp -s "$out/a.drcov" "$out/c.drcov"; then
		echo "  files: the tally's = one by one's = -j2's"
	else
		echo "  files: DIFFER between the tally, one by one and -j2"
	fi
	cut=$out/cut.pt
	head -c $((mb << 20)) "$trace" >"$cut"
	# shellcheck disable=SC2086
	lines=$("$hwt" flow --srcline $opts "$cut" 2>/dev/null | wc -l)
	# shellcheck disable=SC2086
	t=$(best "$rounds" "$hwt" flow --srcline $opts "$cut")
	# shellcheck disable=SC2086
	t0=$(best "$rounds" "$hwt" flow $opts "$cut")
	awk -v t="$t" -v t0="$t0" -v l="$lines" -v mb="$mb" 'BEGIN {
		printf "  %-34s %8.3f s  %d lines, %.1f M/s (flow: %.3f s)\n",
			"flow --srcline, first " mb " MiB",
			t, l, l / t / 1e6, t0 }'
done <"$list"

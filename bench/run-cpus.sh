#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# bench/run-cpus.sh [--iter N] [--rounds N] [BUILD_DIR]
#
# What CPU-wide files (perf record -a) cost the outputs that put the CPUs'
# streams together, against the same trace as one CPU's or stream by
# stream. The program is tests/data/perfdata_loop.asm at N iterations
# (default 300000: a 5 MB trace, written with ptgen as
# tests/cli/perfdata_flow.sh writes it), packed by tests/tools/mkptdata:
#   one    the trace in one CPU's buffer
#   moved  the thread moved across 3 CPUs (--move 3)
#   two    two threads running it at once on two CPUs (--cpu2)
# and timed (best wall clock of the rounds, default 3; peak RSS):
#   hwt flow --time       merged in time order, and --by-stream
#   hwt calls             one history across the CPUs
#   hwt last              (a first pass where a thread moved)
#   hwt flow --time-range from 90% of the time on, with and without the
#                         seek to a PSB before it
# Output to /dev/null. Nothing here asserts on timings. Needs yasm, ld,
# objcopy, nm and GNU time (/usr/bin/time) for the RSS.
# Environment: BENCH_ROUNDS (the default of --rounds).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
iter=300000
rounds=${BENCH_ROUNDS:-3}
while [ $# -gt 0 ]; do
	case $1 in
	--iter) iter=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	-h|--help) sed -n '3,21p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "run-cpus: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
build=$(cd "${1:-$REPO/build}" && pwd)
for t in hwt ptgen mkptdata; do
	[ -x "$build/$t" ] || { echo "run-cpus: no $build/$t" >&2; exit 1; }
done
for c in yasm ld objcopy nm; do
	command -v $c >/dev/null || { echo "run-cpus: needs $c" >&2; exit 1; }
done
[ -x /usr/bin/time ] || { echo "run-cpus: needs /usr/bin/time" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$REPO/tests/data/perfdata_loop.bash"
perfdata_loop "$tmp" loop "$iter" "$build"
mk() {	# mk NAME OPTIONS...
	local out=$tmp/$1.data
	shift
	"$build/mkptdata" --cpu 0 "$@" --pt "$tmp/loop.pt" \
		--elf "$tmp/loop" "$out" >/dev/null
}
mk one
mk moved --move 3
mk two --cpu2 "1:1234:1235:$tmp/loop.pt"

# best wall clock (s) and the largest peak RSS (MB) of the rounds
measure() {
	local best="" rss=0 t m
	for ((r = 0; r < rounds; r++)); do
		/usr/bin/time -f '%e %M' -o "$tmp/time" "$@" >/dev/null \
			2>/dev/null || true
		read -r t m <"$tmp/time"
		if [ -z "$best" ] || awk -v a="$t" -v b="$best" \
			'BEGIN { exit !(a < b) }'; then
			best=$t
		fi
		[ "$m" -gt "$rss" ] && rss=$m
	done
	printf "%6.2f s %6.1f MB" "$best" "$(awk -v k="$rss" \
		'BEGIN { print k / 1024 }')"
}

printf "%-6s %-32s %-22s %s\n" file command time lines
for f in one moved two; do
	for cmd in "flow --time" "flow --time --by-stream" "calls" "last"; do
		[ "$f" = one ] && [ "$cmd" = "flow --time --by-stream" ] &&
			continue
		# shellcheck disable=SC2086
		lines=$("$build/hwt" $cmd "$tmp/$f.data" 2>/dev/null | wc -l)
		# shellcheck disable=SC2086
		printf "%-6s %-32s %-22s %s\n" "$f" "hwt $cmd" \
			"$(measure "$build/hwt" $cmd "$tmp/$f.data")" "$lines"
	done
done
# A window over the last tenth of the time (--time-range T,): decoded
# from a PSB before it (src/cli/seek.c), and from the trace's start
# (HWT_NO_SEEK=1).
for f in one two; do
	t=$("$build/hwt" dump "$tmp/$f.data" |
		awk '$2 == "tsc" { sub("tsc=", "", $3); print $3 }' | sort -u |
		awk '{ a[NR] = $1 } END { print a[int(NR * 0.9) + 1] }')
	for env in "" HWT_NO_SEEK=1; do
		lines=$(env $env "$build/hwt" flow --time --time-range "$t," \
			"$tmp/$f.data" 2>/dev/null | wc -l)
		printf "%-6s %-32s %-22s %s\n" "$f" \
			"${env:+$env }hwt flow --time-range 90%," \
			"$(measure env $env "$build/hwt" flow --time \
				--time-range "$t," "$tmp/$f.data")" "$lines"
	done
done

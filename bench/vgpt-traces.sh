#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# bench/vgpt-traces.sh [--scale full|small|tiny] BUILD_DIR OUT_DIR
#
# Real-program traces for the flow benchmarks, recorded with vgpt (the
# portable trace source, src/record/vgpt: BUILD_DIR/vgpt as VALGRIND_LIB)
# and kept in OUT_DIR (recorded again only when missing):
#   gzip     gzip -6 of a text file (compression loops, TNT-8 heavy)
#   xz       xz -1 of the same file (deeper calls, more branches)
#   python3  a Python script building, dumping, parsing and sorting a dict
#            (an interpreter: indirect branches, many images; -S -E:
#            no site packages, the start-up would be most of it)
# The input and the script are generated here, so the workloads are the
# same on every machine (the traces differ with the programs' builds).
# --scale small records smaller runs (for callgrind, bench/count-flow.sh),
# --scale tiny yet smaller ones (scripts/crosscheck-libipt.sh).
#
# Prints one line per trace on stdout, tab-separated:
#   NAME  TRACE  RAW-OPTIONS
# RAW-OPTIONS are the --raw FILE:FROM-TO:BASE options of every code
# mapping of the traced process (the sideband's mmap lines, as
# tests/cli/vgpt.sh uses them), for hwt and for bench/flow/ipt_blk.c
# alike. Only the .pt and .sb outputs of vgpt are used.
#
# Without vgpt (not built, or valgrind missing) there are no traces: a
# message on stderr says so; likewise for a program that is not installed.
set -euo pipefail

scale=full
while [[ $# -gt 0 ]]; do
	case $1 in
	--scale) scale=$2; shift 2 ;;
	-h|--help) sed -n '3,28p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "vgpt-traces: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
[[ $# -eq 2 ]] || { echo "usage: $0 [--scale full|small|tiny] BUILD_DIR OUT_DIR" >&2; exit 2; }
build=$(cd "$1" && pwd)
mkdir -p "$2"
out=$(cd "$2" && pwd)
vglib=$build/vgpt

if ! command -v valgrind >/dev/null; then
	echo "vgpt-traces: valgrind is not installed: no real-program traces" >&2
	exit 0
fi
if [[ ! -x $vglib/vgpt-amd64-linux ]]; then
	echo "vgpt-traces: vgpt is not built in $vglib (needs valgrind's pkg-config file, no sanitizers): no real-program traces" >&2
	exit 0
fi

case $scale in
full) lines=100000 pyn=8000 ;;
small) lines=8000 pyn=150 ;;
tiny) lines=800 pyn=10 ;;
*) echo "vgpt-traces: --scale full, small or tiny" >&2; exit 2 ;;
esac

# The inputs: numbers in words, text that compresses as text does.
input=$out/input-$scale.txt
if [[ ! -s $input ]]; then
	awk -v n="$lines" 'BEGIN {
		split("zero one two three four five six seven eight nine", w, " ")
		for (i = 1; i <= n; i++) {
			x = (i * 7919) % 100003; s = ""
			do { s = w[x % 10 + 1] " " s; x = int(x / 10) } while (x)
			printf "%d: %s\n", i, s
		}
	}' >"$input.tmp"
	mv "$input.tmp" "$input"
fi
script=$out/work-$scale.py
cat >"$script" <<EOF
import json
d = {}
for i in range($pyn):
    d["k%d" % i] = [i, str(i * 7), {"x": i % 13, "y": [i] * (i % 5)}]
s = json.dumps(d, sort_keys=True)
e = json.loads(s)
print(len(s), sum(len(v[1]) for v in sorted(e.values(), key=lambda v: v[1])))
EOF

# --raw options for the code mappings of process PID in sideband SB.
raw_options() {
	local sb=$1 pid=$2 kind time p start len pgoff prot path
	local opts=()
	while read -r kind time p start len pgoff prot path; do
		[[ $kind == mmap && $p == "$pid" ]] || continue
		opts+=(--raw "$path:0x$pgoff-0x$(printf %x $((16#$pgoff + 16#$len))):0x$start")
	done <"$sb"
	echo "${opts[*]}"
}

# record NAME CMD...: the trace of the main thread (PREFIX.PID.pt).
record() {
	local name=$1 prefix=$out/$1-$scale pid
	shift
	if [[ ! -s $prefix.sb ]] || ! ls "$prefix".*.pt >/dev/null 2>&1; then
		rm -f "$prefix".*.pt "$prefix.sb"
		if ! VALGRIND_LIB=$vglib valgrind -q --tool=vgpt --vgpt-out="$prefix" \
			"$@" >/dev/null 2>"$prefix.log"; then
			echo "vgpt-traces: $name: recording failed (see $prefix.log)" >&2
			rm -f "$prefix".*.pt "$prefix.sb"
			return
		fi
	fi
	pid=$(awk '$1 == "comm" { print $3; exit }' "$prefix.sb")
	[[ -s $prefix.$pid.pt ]] || { echo "vgpt-traces: $name: no trace for pid $pid" >&2; return; }
	printf '%s\t%s\t%s\n' "$name" "$prefix.$pid.pt" "$(raw_options "$prefix.sb" "$pid")"
}

# The programs themselves, not wrappers (pyenv shims are shell scripts).
prog() {
	local p
	p=$(command -v "$1" 2>/dev/null) || return 1
	readlink -f "$p"
}

if p=$(prog gzip); then record gzip "$p" -6 -c "$input"; else echo "vgpt-traces: gzip not installed: skipped" >&2; fi
if p=$(prog xz); then record xz "$p" -1 -T1 -c "$input"; else echo "vgpt-traces: xz not installed: skipped" >&2; fi
if p=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) && [[ -x $p ]]; then
	record python3 "$(readlink -f "$p")" -S -E "$script"
else
	echo "vgpt-traces: python3 not installed: skipped" >&2
fi
exit 0

#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# bench/run-record.sh [--mb N] [--rounds N] [BUILD_DIR]
#
# Recording overhead of vgpt (src/record/vgpt, the Valgrind tool that
# writes Intel PT) on four workloads, side by side:
#   native                    the program alone
#   valgrind --tool=none      Valgrind's own cost, the floor for any tool
#   valgrind --tool=vgpt      recording (trace files to a temporary dir)
# Workloads (deterministic): gzip -9 and xz -3 of N MB of generated text
# (bench/gen-text.awk, a seeded generator), a small pure-Python program
# (python3 -S -E), a scripted sqlite3 session (:memory:).
#
# Prints, best of N rounds, user+sys CPU seconds and wall seconds, the
# ratios vgpt/native and vgpt/none for both, and vgpt's bits per
# instruction (trace bytes * 8 / instructions, from its -v summary). With
# a second CPU vgpt makes the packets on a thread of its own while the
# program runs, where it measures that this is faster
# (src/record/vgpt/README.md, "The drain thread"): the wall clock is the
# time the program takes to record, CPU seconds count that thread too
# (--vgpt-drain-thread=no or =yes in VGPT_OPTS: never or always). Wall clock
# on a shared machine is noisy; nothing here asserts on timings.
#
# Environment: BENCH_RECORD_MB (default 4), BENCH_ROUNDS (3), VGPT_OPTS
# (more vgpt options).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mb=${BENCH_RECORD_MB:-4}
rounds=${BENCH_ROUNDS:-3}

while [[ $# -gt 0 ]]; do
	case $1 in
	--mb) mb=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	-h|--help) sed -n '3,25p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "bench-record: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
build=$(cd "${1:-$REPO/build}" && pwd)
vglib=$build/vgpt

if ! command -v valgrind >/dev/null || [[ ! -x $vglib/vgpt-amd64-linux ]]; then
	echo "bench-record: valgrind or vgpt ($vglib) missing; skipped"
	exit 0
fi
for p in gzip xz python3 sqlite3; do
	command -v $p >/dev/null || { echo "bench-record: $p missing (make deps)" >&2; exit 1; }
done
python=$(command -v python3)
# A pyenv shim is a shell script: run the interpreter itself.
[[ -x /usr/bin/python3 ]] && python=/usr/bin/python3

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hwt-bench-record.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

input=$build/bench-record-${mb}M.txt
if [[ ! -s $input || $REPO/bench/gen-text.awk -nt $input ]]; then
	awk -v seed=1 -v size=$((mb * 1000000)) -f "$REPO/bench/gen-text.awk" > "$input.tmp"
	mv "$input.tmp" "$input"
fi

cat > "$tmp/work.py" <<'EOF'
def sieve(n):
    s = bytearray([1]) * (n + 1)
    s[0] = s[1] = 0
    for i in range(2, int(n ** 0.5) + 1):
        if s[i]:
            s[i * i::i] = bytes(len(range(i * i, n + 1, i)))
    return s

t = 0
for r in range(10):
    d = {}
    for i in range(60000):
        k = str(i * 7919 % 10007)
        d[k] = d.get(k, 0) + i
    t += sum(sorted(d.values())[:100])
    t += sum(1 for c in sieve(200000) if c)
    t += len(" ".join(str(x) for x in range(20000)).split("1"))
print(t)
EOF
cat > "$tmp/work.sql" <<'EOF'
CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c INTEGER);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200000)
INSERT INTO t SELECT i, printf('k%d', i * 7919 % 100003), i % 97 FROM n;
CREATE INDEX tb ON t(b);
SELECT c, count(*), sum(a) FROM t GROUP BY c ORDER BY 2 DESC, 1 LIMIT 3;
SELECT count(*) FROM t WHERE b LIKE 'k1%';
SELECT sum(length(t1.b)) FROM t t1 JOIN t t2 ON t2.b = t1.b WHERE t1.a % 10 = 0;
EOF

names=(gzip xz python3 sqlite3)
cmds=("gzip -9 -c $input"
      "xz -3 -T1 -c $input"
      "$python -S -E $tmp/work.py"
      "sqlite3 :memory:")
stdin=(/dev/null /dev/null /dev/null "$tmp/work.sql")

# run MODE I: one timed run; prints "CPU WALL"
run() {
	local mode=$1 i=$2 pre=()
	# shellcheck disable=SC2206 # VGPT_OPTS: words
	case $mode in
	none) pre=(valgrind -q --tool=none) ;;
	vgpt) pre=(env VALGRIND_LIB="$vglib" valgrind -v --tool=vgpt
		   --vgpt-out="$tmp/out" ${VGPT_OPTS:-}) ;;
	esac
	rm -f "$tmp"/out.*
	# shellcheck disable=SC2086
	/usr/bin/time -o "$tmp/time" -f "%U %S %e" "${pre[@]}" ${cmds[i]} \
		< "${stdin[i]}" > "$tmp/stdout" 2> "$tmp/stderr" ||
		{ echo "bench-record: ${names[i]} ($mode) failed" >&2; cat "$tmp/stderr" >&2; exit 1; }
	awk '{ printf "%.3f %.3f\n", $1 + $2, $3 }' "$tmp/time"
}

min() { awk -v a="$1" -v b="$2" 'BEGIN { print (b == "" || a + 0 < b + 0) ? a : b }'; }

echo "== vgpt recording overhead: best of $rounds, user+sys CPU seconds (wall in parentheses)"
echo "   input: $mb MB generated text ($input)"
printf '%-8s %15s %15s %15s %15s %15s %9s\n' workload native none vgpt \
	vgpt/native vgpt/none bits/insn
for i in "${!names[@]}"; do
	declare -A cpu=() wall=()
	for r in $(seq "$rounds"); do
		for mode in native none vgpt; do
			read -r c w < <(run $mode "$i")
			cpu[$mode]=$(min "$c" "${cpu[$mode]:-}")
			wall[$mode]=$(min "$w" "${wall[$mode]:-}")
		done
	done
	# "vgpt: T threads, N instructions, B bytes of trace, ..."
	bits=$(awk '/vgpt: .* instructions, .* bytes of trace/ {
		for (k = 1; k <= NF; k++) {
			if ($(k + 1) ~ /^instructions/) n = $k
			if ($(k + 1) == "bytes") b = $k
		}
		if (n > 0) printf "%.3f", b * 8 / n }' "$tmp/stderr")
	printf '%-8s %6s (%6s) %6s (%6s) %6s (%6s) %5.2fx (%5.2fx) %5.2fx (%5.2fx) %9s\n' \
		"${names[i]}" "${cpu[native]}" "${wall[native]}" \
		"${cpu[none]}" "${wall[none]}" "${cpu[vgpt]}" "${wall[vgpt]}" \
		"$(awk -v a="${cpu[vgpt]}" -v b="${cpu[native]}" 'BEGIN { print a / b }')" \
		"$(awk -v a="${wall[vgpt]}" -v b="${wall[native]}" 'BEGIN { print a / b }')" \
		"$(awk -v a="${cpu[vgpt]}" -v b="${cpu[none]}" 'BEGIN { print a / b }')" \
		"$(awk -v a="${wall[vgpt]}" -v b="${wall[none]}" 'BEGIN { print a / b }')" \
		"${bits:-?}"
	grep -q 'vgpt: nothing lost' "$tmp/stderr" ||
		echo "bench-record: ${names[i]}: vgpt reports lost data" >&2
done

# SPDX-License-Identifier: BSD-2-Clause
# The portable trace source (src/record/vgpt, a Valgrind tool) against its
# own ground truth: each program runs under vgpt with --vgpt-truth=yes; for
# every thread, the PT stream is decoded by `hwt flow` with the images the
# sideband names, and must be exactly the truth (tests/cli/vgpt/cmp.awk).
# Programs: /bin/true, tests/cli/vgpt/prog.c (calls, returns, longjmp,
# rep, generated code, signals, a fork, a thread), /bin/ls, gzip -9,
# sqlite3 (if installed).
#
# --vgpt-truth=yes makes every log record a slow one (vgpt.h), so the
# default fast records are checked by decoding a run without the truth
# against the truth of a run with it (deterministic programs: ls, gzip,
# sqlite3).
#
# Also: `hwt ptdump` finds no error in any stream, -j2 decodes what -j1
# decodes, and two mutations (a truth line dropped, one TNT bit flipped in
# the trace) are caught, so the comparison can fail.
#
#   bash tests/cli/vgpt.sh path/to/hwt BUILD_DIR
. "$(dirname "$0")/vgpt/lib.bash" vgpt "$@"

cc prog "$vgpt_dir/prog.c" -pthread
awk -v seed=2 -v size=30000 -f "$src/bench/gen-text.awk" > "$tmp/text"
# A directory that lists the same every time (ls -l / did not: the link
# counts of /proc and /tmp follow the machine's processes and files).
mkdir "$tmp/dir"
for i in $(seq 30); do
	head -c $((i * i * 37)) "$tmp/text" > "$tmp/dir/f$i"
	ln -s "f$i" "$tmp/dir/l$i"
done
mkdir "$tmp/dir/sub"
touch -h -d '2024-02-03 04:05:06' "$tmp/dir"/* "$tmp/dir"

record true /bin/true && check_streams true
record prog "$tmp/prog" && check_streams prog 3
record ls /bin/ls -l "$tmp/dir" && check_streams ls
record gzip gzip -9 -c "$tmp/text" && check_streams gzip

# The fast records: the same run without the truth decodes to the truth.
fast ls /bin/ls -l "$tmp/dir"
fast gzip gzip -9 -c "$tmp/text"

# An interpreter (sqlite3's VDBE): an indirect jump per operation, whose
# TIPs take 16 and 32 bits, calls and returns in between.
if command -v sqlite3 > /dev/null; then
	cat > "$tmp/vdbe.sql" <<'EOF'
CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300)
INSERT INTO t SELECT i, printf('k%d', i * 7919 % 1009) FROM n;
SELECT count(*), max(t1.b) FROM t t1 JOIN t t2 ON t2.b = t1.b;
EOF
	record sqlite3 sqlite3 :memory: -init "$tmp/vdbe.sql" < /dev/null &&
		check_streams sqlite3
	fast sqlite3 sqlite3 :memory: -init "$tmp/vdbe.sql" < /dev/null
else
	echo "vgpt: sqlite3 is not installed; its run skipped" >&2
fi

# The program's own view: two threads and a forked child traced, the
# generated code saved and mapped from the sideband.
check
grep -q '^fork ' "$tmp/prog.sb" && grep -q '^mmap .* rwx .*\.bin$' "$tmp/prog.sb" ||
	fail "prog: sideband lacks the fork or the anonymous code"
check
[ "$(cat "$tmp/prog.stdout")" = "$("$tmp/prog")" ] ||
	fail "prog: output under vgpt differs from native"

# Decoding from every PSB (-j2 cuts there) gives the same flow: vgpt never
# compresses a return across a PSB.
main=$(head -n 1 "$tmp/prog.sb" | cut -d' ' -f3)
raw=$(awk -v pid="$main" -f "$vgpt_dir/hex.awk" -f "$vgpt_dir/images.awk" \
	"$tmp/prog.sb" "$tmp/prog.$main.pt.psbs" |
	awk '{ for (i = 3; i <= NF; i++) if (!seen[$i]++) printf " %s", $i }')
check
# shellcheck disable=SC2086
"$hwt" flow --no-sym $raw "$tmp/prog.$main.pt" > "$tmp/j1.flow" 2>&1
# shellcheck disable=SC2086
"$hwt" flow --no-sym -j 2 $raw "$tmp/prog.$main.pt" > "$tmp/j2.flow" 2>&1
cmp -s "$tmp/j2.flow" "$tmp/j1.flow" || fail "prog: -j2 decode differs"

# The comparison can fail: a superblock missing from the truth ...
check
sed '100d' "$tmp/prog.$main.truth" > "$tmp/bad.truth"
if truth_cmp "$tmp/bad.truth" "$tmp/prog.$main.flow" > /dev/null; then
	fail "a truth with a superblock missing compares equal"
fi
# ... and one conditional branch turned around in the trace.
check
off=$("$hwt" ptdump "$tmp/prog.$main.pt" | awk '$2 == "tnt.8" { n++ } $2 == "tnt.8" && n == 200 { print $1; exit }')
cp "$tmp/prog.$main.pt" "$tmp/bad.pt"
off=$((16#$off))
byte=$(od -An -tu1 -j "$off" -N1 "$tmp/bad.pt" | tr -d ' ')
printf "\\$(printf %03o $((byte ^ 2)))" |
	dd of="$tmp/bad.pt" bs=1 seek="$off" conv=notrunc status=none
decode "$tmp/prog" "$tmp/bad.pt" "$main" > "$tmp/bad.flow" 2>&1
if truth_cmp "$tmp/prog.$main.truth" "$tmp/bad.flow" > /dev/null; then
	fail "a trace with a TNT bit flipped compares equal"
fi

finish

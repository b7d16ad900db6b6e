# SPDX-License-Identifier: BSD-2-Clause
# vgpt (src/record/vgpt) options, each checked against the ground truth:
#   --vgpt-ring=32k   each stream is at most 32 KiB, starts with a PSB, and
#                     decodes to the end of the truth (also after death by
#                     SIGSEGV)
#   --vgpt-filter     the decode is the truth restricted to the named
#                     functions (tests/cli/vgpt/filter_cmp.awk)
#   a file size limit (ulimit -f): vgpt names the file on stderr, the
#                     program runs on, the trace stays whole packets and
#                     decodes to a prefix of the truth; -v reports the loss
#   -v                the summary: threads, instructions, trace bytes,
#                     bits/insn, and that nothing was lost
# Mutations: a truth whose last superblock is dropped, the filter truth
# restricted to other functions.
#
#   bash tests/cli/vgpt_modes.sh path/to/hwt BUILD_DIR
. "$(dirname "$0")/vgpt/lib.bash" vgpt_modes "$@"

cc loop "$vgpt_dir/loop.c"
cc signals "$vgpt_dir/signals.c"
cc filter "$vgpt_dir/filter.c" -O2 -no-pie -fno-pie

# ---- ring
# check_ring NAME: every stream fits, starts with a PSB, ends the truth.
check_ring() {
	local name=$1 pt tid n
	for pt in "$tmp/$name".*.pt; do
		tid=${pt#"$tmp/$name".}
		tid=${tid%.pt}
		check
		if [ "$(stat -c %s "$pt")" -gt 32768 ] ||
		   [ "$("$hwt" ptdump "$pt" | awk 'NR == 1 { print $2 }')" != psb ]; then
			fail "$name/$tid: over 32 KiB or no PSB first"
			continue
		fi
		check
		decode "$tmp/$name" "$pt" > "$pt.flow"
		n=$(grep -vc '^\[' "$pt.flow")
		if truth_cmp "$tmp/$name.$tid.truth" "$pt.flow" -v suffix="$n" > "$pt.cmp"; then
			echo "$name/$tid: $(cat "$pt.cmp")"
		else
			fail "$name/$tid: the ring's trace is not the end of the truth: $(cat "$pt.cmp")"
		fi
		check
		sed '$d' "$tmp/$name.$tid.truth" > "$pt.badtruth"
		if truth_cmp "$pt.badtruth" "$pt.flow" -v suffix="$n" > /dev/null; then
			fail "$name/$tid: a truth without its last superblock compares equal"
		fi
	done
}

record ring --vgpt-ring=32k -- "$tmp/loop" 1000000 && check_ring ring
check
(VALGRIND_LIB=$vglib valgrind -q --tool=vgpt --vgpt-out="$tmp/ringdie" \
	--vgpt-truth=yes --vgpt-ring=32k "$tmp/signals" die > /dev/null \
	2> "$tmp/ringdie.stderr"; exit $?) 2> /dev/null
[ $? -eq 139 ] || fail "ringdie: valgrind did not die of SIGSEGV"
check_ring ringdie
# A ring of fewer than 2 PSB periods stops the run, before the program
# (it used to say "Bad option" and go on, to keep no trace at all).
check
VALGRIND_LIB=$vglib valgrind -q --tool=vgpt --vgpt-out="$tmp/ringsmall" \
	--vgpt-ring=4k "$tmp/loop" 10 > "$tmp/ringsmall.out" 2> "$tmp/ringsmall.err"
rc=$?
if [ $rc -ne 1 ] || [ -s "$tmp/ringsmall.out" ] ||
   ! grep -q -- '--vgpt-ring=4096: at least 2 PSB periods' "$tmp/ringsmall.err"; then
	fail "ringsmall: exit $rc, $(head -c 200 "$tmp/ringsmall.err")"
fi

# ---- filter
record filter --vgpt-filter=fa,tail,cmp -- "$tmp/filter"
objdump -d --no-show-raw-insn "$tmp/filter" > "$tmp/filter.dis"
main=$(head -n 1 "$tmp/filter.sb" | cut -d' ' -f3)
decode "$tmp/filter" "$tmp/filter.$main.pt" > "$tmp/filter.flow"
check
if awk -v funcs=fa,tail,cmp -f "$vgpt_dir/hex.awk" -f "$vgpt_dir/filter_cmp.awk" "$tmp/filter.dis" \
       "$tmp/filter.$main.truth" "$tmp/filter.flow" > "$tmp/filter.cmp"; then
	echo "filter: $(cat "$tmp/filter.cmp")"
else
	fail "filter: $(cat "$tmp/filter.cmp")"
fi
check
grep -q 'tip.pgd' <("$hwt" ptdump "$tmp/filter.$main.pt") || fail "filter: no TIP.PGD"
check
if awk -v funcs=fa,tail -f "$vgpt_dir/hex.awk" -f "$vgpt_dir/filter_cmp.awk" "$tmp/filter.dis" \
       "$tmp/filter.$main.truth" "$tmp/filter.flow" > /dev/null; then
	fail "filter: the truth of other functions compares equal"
fi
check
VALGRIND_LIB=$vglib valgrind -q --tool=vgpt --vgpt-out="$tmp/nofn" \
	--vgpt-filter=no_such_function /bin/true 2> "$tmp/nofn.stderr"
grep -q 'no_such_function never ran' "$tmp/nofn.stderr" ||
	fail "filter: a function that never ran is not reported"

# ---- a file size limit, and the -v summary
# (About 680 KB of trace against 300 KiB: one whole 256 KiB buffer fits.)
record full "$tmp/loop" 1500000
check
(ulimit -f 300
 VALGRIND_LIB=$vglib valgrind -q -v --tool=vgpt --vgpt-out="$tmp/lim" \
	"$tmp/loop" 1500000 > "$tmp/lim.stdout" 2> "$tmp/lim.stderr")
rc=$?
main=$(head -n 1 "$tmp/lim.sb" | cut -d' ' -f3)
if [ $rc -ne 0 ] || ! cmp -s "$tmp/lim.stdout" "$tmp/full.stdout"; then
	fail "lim: the program did not run on (exit $rc)"
fi
check
grep -q "vgpt: cannot write $tmp/lim.$main.pt: file too large" "$tmp/lim.stderr" &&
	grep -q 'bytes LOST' "$tmp/lim.stderr" ||
	{ fail "lim: the error or the loss is not reported"; cat "$tmp/lim.stderr" >&2; }
check
size=$(stat -c %s "$tmp/lim.$main.pt")
if [ "$size" -eq 0 ] || [ "$size" -gt 307200 ]; then
	fail "lim: $size bytes of trace"
elif "$hwt" ptdump "$tmp/lim.$main.pt" 2>&1 | grep -qi error; then
	fail "lim: the cut trace does not end on a packet"
fi
check
decode "$tmp/lim" "$tmp/lim.$main.pt" > "$tmp/lim.flow"
truth=$(ls "$tmp"/full.*.truth | head -n 1)
if truth_cmp "$truth" "$tmp/lim.flow" -v prefix=1 > "$tmp/lim.cmp"; then
	echo "lim: $(cat "$tmp/lim.cmp")"
else
	fail "lim: the cut trace is not a prefix of the truth: $(cat "$tmp/lim.cmp")"
fi
check
VALGRIND_LIB=$vglib valgrind -v --tool=vgpt --vgpt-out="$tmp/sum" /bin/true 2> "$tmp/sum.stderr"
grep -Eq 'vgpt: 1 threads, [0-9]+ instructions, [0-9]+ bytes of trace, [0-9]+\.[0-9]{3} bits/insn, exit 0' \
	"$tmp/sum.stderr" && grep -q 'vgpt: nothing lost' "$tmp/sum.stderr" ||
	fail "-v: no summary"

finish

# SPDX-License-Identifier: BSD-2-Clause
# hwt record's modes through perf.data, and hwt calls on a real program:
#
#  (1) hwt calls keeps its depth across system calls and calls into
#      libc: in a program that calls work() 40 times, which calls leaf()
#      and puts(), every work line has one indentation, every leaf line
#      one level deeper, main one level above (no drift);
#  (2) --filter work: only work's instructions are traced; tracing is
#      enabled again each time a call out of work returns (one enable per
#      call of work and per call out of it), hwt calls shows only work, at
#      one depth, and perf script --itrace=b lists the branches hwt lists;
#  (3) --ring 8K: each thread's trace is at most 8 KiB, starts at a PSB,
#      decodes without errors, and is exactly the end of the ground truth
#      (tests/cli/vgpt/cmp.awk with suffix=N);
#  (4) hwt last in 4 KiB pieces prints what it prints for the whole trace;
#  (5) --one-cpu records the branches the default run records;
#  (6) a shell and its children, which map libc at other addresses (bash
#      maps libtinfo before it): one decoder for all the streams, its
#      block cache carried from process to process and moved with the
#      library, gives the branches (hwt flow) and the last branches and
#      stacks (hwt last) that decoding every instruction gives
#      (HWT_NO_CACHE=1, the reference); and the processes' images, with
#      their files mapped and symbols read once for all of them (libc's
#      placed at both addresses), the function calls (hwt calls, also
#      with -j2) and last branches that images reading their own files
#      give (HWT_NO_IMAGE_CACHE=1); hwt last's blocks that end at every
#      branch, unwalked, the last branches (with their times) of blocks
#      that run on over direct calls and jumps, walked (HWT_LAST_WALK=1);
#  (7) hwt calls' lines against hwt flow's, on the shell's recording: the
#      runs of one function, by the symbol of each instruction line (and
#      the functions without one, "?? ADDR" in hwt calls, as one), are the
#      same, instruction for instruction; hwt calls keeps each symbol's
#      range (hwt_image_symbol_range()) down to its start, hwt flow the
#      last 16 ranges, so where either takes the wrong one they part.
#
#   bash tests/cli/record_modes.sh path/to/hwt BUILD_DIR
. "$(dirname "$0")/lib.bash" record_modes "$@"
wants gcc
wants_vgpt
vgpt_awk=$src/tests/cli/vgpt

cat >"$tmp/prog.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>

static int __attribute__((noinline)) leaf(int x) { return x * 3 + 1; }

int __attribute__((noinline)) work(int n)
{
	int s = 0;

	for (int i = 0; i < n; i++)
		s += leaf(i) & 7 ? 1 : 2;
	printf("%d\n", s);
	return s;
}

int main(int argc, char **argv)
{
	int s = 0, rounds = argc > 1 ? atoi(argv[1]) : 40;

	for (int k = 0; k < rounds; k++)
		s += work(10 + k % 3);
	return s == 0;
}
EOF
gcc -O1 -g -o "$tmp/prog" "$tmp/prog.c" || exit 1

# rec NAME OPTIONS... -- CMD...: hwt record into NAME.data, quietly.
rec() {
	local name=$1
	shift
	check
	if ! (cd "$tmp" && "$hwt" record -q -o "$name.data" "$@" \
	      >"$name.stdout" 2>"$name.stderr"); then
		fail "$name: hwt record exit $?"
		head -n 5 "$tmp/$name.stderr" >&2
		return 1
	fi
}

# indents NAME FUNC: the distinct indentations of FUNC's lines in hwt calls.
indents() {
	awk -F'\t' -v f="$2" '{ n = $2; sub(/^ */, "", n) }
		n == f { print length($2) - length(n) }' "$tmp/$1.calls" |
		sort -u
}

# ---- (1) hwt calls: no drift ----------------------------------------------

if rec plain -- ./prog; then
	"$hwt" calls "$tmp/plain.data" >"$tmp/plain.calls" 2>/dev/null
	w=$(indents plain work)
	l=$(indents plain leaf)
	m=$(indents plain main)
	check
	if [ "$(grep -c $'\twork\t\|\t *work\t' "$tmp/plain.calls")" -lt 80 ]; then
		fail "hwt calls: fewer than 80 work segments"
	elif [ "$(echo "$w" | wc -l)" -ne 1 ] || [ "$(echo "$l" | wc -l)" -ne 1 ] ||
	     [ "$(echo "$m" | wc -l)" -ne 1 ]; then
		fail "hwt calls: the depth drifts (main at '$m', work at '$w', leaf at '$l')"
	elif [ "$l" -ne $((w + 2)) ] || [ "$m" -ne $((w - 2)) ]; then
		fail "hwt calls: main at $m, work at $w, leaf at $l: want one level apart"
	fi
	# Calls' return addresses from the kept walks (the last
	# instruction's size), as when each is walked again: a return
	# address off by one byte changes this program's lines.
	HWT_WALK_EACH=1 "$hwt" calls "$tmp/plain.data" >"$tmp/plain.each" \
		2>/dev/null
	cmp -s "$tmp/plain.calls" "$tmp/plain.each" ||
		fail "hwt calls: the kept walks' lines are not those with each" \
			"last instruction walked"
fi

# ---- (2) --filter ---------------------------------------------------------

if rec filt --filter work -- ./prog; then
	"$hwt" flow "$tmp/filt.data" >"$tmp/filt.flow" 2>"$tmp/filt.err"
	check
	bad=$(awk '/^[0-9a-f]+  / && $2 !~ /^work\+0x/' "$tmp/filt.flow" | head -n 3)
	[ -z "$bad" ] || fail "--filter work: instructions outside work: $bad"
	check
	n=$(grep -c '^\[enabled' "$tmp/filt.flow")
	# 40 calls of work; each calls leaf 10..12 times and printf once.
	want=$(awk 'BEGIN { for (k = 0; k < 40; k++) n += 1 + 10 + k % 3 + 1; print n }')
	[ "$n" -eq "$want" ] ||
		fail "--filter work: $n enables, want $want (each entry and return)"
	"$hwt" calls "$tmp/filt.data" >"$tmp/filt.calls" 2>/dev/null
	check
	awk -F'\t' '!/^#/ && $2 != "work" { bad = 1 } END { exit bad }' \
		"$tmp/filt.calls" ||
		fail "--filter work: hwt calls shows more than work at depth 0"
	if command -v perf >/dev/null; then
		"$hwt" flow --branches "$tmp/filt.data" 2>/dev/null |
			grep '^0x' >"$tmp/filt.hwt"
		perf script --itrace=b -F ip,addr -i "$tmp/filt.data" 2>/dev/null |
			awk '$2 == "=>" && $1 != "0" && $3 != "0" {
				print "0x" $1 " 0x" $3 }' >"$tmp/filt.perf"
		check
		if [ ! -s "$tmp/filt.hwt" ] || ! cmp -s "$tmp/filt.hwt" "$tmp/filt.perf"; then
			fail "--filter work: perf script --itrace=b lists other branches"
			diff "$tmp/filt.hwt" "$tmp/filt.perf" | head -n 5 >&2
		fi
	fi
fi

# ---- (3) --ring -----------------------------------------------------------

if rec ring --ring 8K --vgpt-truth -- ./prog 3000; then
	"$hwt" info "$tmp/ring.data" >"$tmp/ring.info"
	check
	awk '/^  idx / { n++; if ($7 + 0 > 8192 || $7 + 0 < 1024) bad = 1 }
		END { exit !(n == 1 && !bad) }' "$tmp/ring.info" ||
		fail "--ring 8K: want one stream of 1..8 KiB: $(grep '^  idx' "$tmp/ring.info")"
	"$hwt" flow --no-sym "$tmp/ring.data" >"$tmp/ring.flow" 2>/dev/null
	check
	if grep -q '^\[error' "$tmp/ring.flow"; then
		fail "--ring 8K: decode errors"
	fi
	n=$(grep -c '^[0-9a-f]' "$tmp/ring.flow")
	truth=$(ls "$tmp"/ring.data.*.truth 2>/dev/null | head -n 1)
	check
	if [ -z "$truth" ]; then
		fail "--ring 8K: no truth file beside ring.data"
	elif ! awk -v suffix="$n" -f "$vgpt_awk/hex.awk" -f "$vgpt_awk/cmp.awk" \
		"$truth" "$tmp/ring.flow" >"$tmp/ring.cmp"; then
		fail "--ring 8K: not the end of the truth: $(cat "$tmp/ring.cmp")"
	fi
	# The comparison can fail: the truth without its last superblock.
	check
	if [ -n "$truth" ]; then
		sed '$d' "$truth" >"$tmp/ring.badtruth"
		if awk -v suffix="$n" -f "$vgpt_awk/hex.awk" -f "$vgpt_awk/cmp.awk" \
			"$tmp/ring.badtruth" "$tmp/ring.flow" >/dev/null; then
			fail "--ring 8K: a cut truth compares equal"
		fi
	fi
fi

# ---- (4) hwt last reads a long trace in pieces ------------------------------

# Pieces of 4 KiB asked (cut at PSBs, as every perf.data decode is cut at
# 64 MiB; vgpt writes a PSB+ about every 4 KiB, so about 16 KiB each): the
# last 100000 branches span several pieces, and the call stack and the
# branches carry across them: the output is that of the whole stream.
if rec long -- ./prog 3000; then
	size=$("$hwt" info "$tmp/long.data" | awk '/^  idx / { print $7; exit }')
	check
	[ "${size:-0}" -gt 65536 ] ||
		fail "hwt last in pieces: want a trace of more than 64 KiB, got ${size:-none}"
	"$hwt" last -n 100000 "$tmp/long.data" >"$tmp/long.whole" 2>&1
	HWT_PIECE_SIZE=4096 "$hwt" last -n 100000 "$tmp/long.data" \
		>"$tmp/long.pieces" 2>&1
	check
	if [ "$(grep -c '^  [a-z]' "$tmp/long.whole")" -lt 100000 ]; then
		fail "hwt last -n 100000: fewer than 100000 branches: $(head -n 3 "$tmp/long.whole")"
	elif ! cmp -s "$tmp/long.whole" "$tmp/long.pieces"; then
		fail "hwt last in 4 KiB pieces differs from the whole stream"
		diff "$tmp/long.whole" "$tmp/long.pieces" | head -n 5 >&2
	fi
fi

# ---- (5) --one-cpu: the same branches, made on the program's CPU -----------

# (The default may make the packets on another CPU, vgpt's drain thread.
# The program is deterministic: both runs take the same branches.)
if rec onecpu --one-cpu -- ./prog 3000 && [ -s "$tmp/long.data" ]; then
	"$hwt" flow --branches "$tmp/long.data" 2>&1 | grep -v '^#' >"$tmp/long.br"
	"$hwt" flow --branches "$tmp/onecpu.data" 2>&1 | grep -v '^#' >"$tmp/onecpu.br"
	check
	if [ "$(wc -l <"$tmp/onecpu.br")" -lt 100000 ]; then
		fail "--one-cpu: fewer than 100000 branches: $(head -n 3 "$tmp/onecpu.br")"
	elif ! cmp -s "$tmp/long.br" "$tmp/onecpu.br"; then
		fail "--one-cpu: the branches differ from the default run's"
		diff "$tmp/long.br" "$tmp/onecpu.br" | head -n 5 >&2
	fi
fi

# ---- (6) one decoder for all the processes, its cache carried ------------

if rec shell -- bash -c './prog 3 >/dev/null; ./prog 5 >/dev/null'; then
	"$hwt" sideband "$tmp/shell.data" >"$tmp/shell.sb" 2>&1
	libc=$(awk '$4 == "PERF_RECORD_MMAP2" && $NF ~ /\/libc\.so/ { print $5 }' \
		"$tmp/shell.sb" | sort -u | wc -l)
	# against VAR=VALUE C WHY: C on the shell's recording (shell.out) is
	# what it prints with VAR=VALUE (shell.ref), WHY that reference; the
	# caller's checks of shell.ref first (its status).
	against() {
		# (word splitting of $2 intended)
		# shellcheck disable=SC2086
		"$hwt" $2 "$tmp/shell.data" >"$tmp/shell.out" 2>&1
		# shellcheck disable=SC2086
		env "$1" "$hwt" $2 "$tmp/shell.data" >"$tmp/shell.ref" 2>&1
	}
	same_as_ref() {
		if ! cmp -s "$tmp/shell.out" "$tmp/shell.ref"; then
			fail "shell: $1 differs from $2"
			diff "$tmp/shell.out" "$tmp/shell.ref" | head -n 5 >&2
		fi
	}
	for c in "flow --branches" "last -n 300"; do
		against HWT_NO_CACHE=1 "$c"
		check
		if [ "$libc" -lt 2 ] || [ "$(grep -c '^# stream\|^# thread' "$tmp/shell.ref")" -lt 3 ]; then
			fail "shell: want libc at 2 addresses or more and 3 threads or more, got $libc and $(grep -c '^# ' "$tmp/shell.ref")"
		elif [ "$(grep -c ' -> \|^0x' "$tmp/shell.ref")" -lt 900 ]; then
			fail "shell: $c: fewer than 900 branches: $(head -n 3 "$tmp/shell.ref")"
		else
			same_as_ref "$c" "what every instruction decoded gives (HWT_NO_CACHE)"
		fi
	done
	for c in "calls" "calls -j2" "last -n 300"; do
		against HWT_NO_IMAGE_CACHE=1 "$c"
		check
		# (Functions of libc and of the program, by name.)
		if [ "$(grep -c 'puts\|printf' "$tmp/shell.ref")" -lt 8 ] ||
		   [ "$(grep -c 'work' "$tmp/shell.ref")" -lt 8 ]; then
			fail "shell: $c: want libc's and the program's functions by name: $(grep -m 3 . "$tmp/shell.ref")"
		else
			same_as_ref "$c" "what images reading their own files give (HWT_NO_IMAGE_CACHE)"
		fi
	done
	for c in "last -n 300" "last -n 5000 --time"; do
		against HWT_LAST_WALK=1 "$c"
		check
		if [ "$(grep -c ' -> ' "$tmp/shell.ref")" -lt 900 ]; then
			fail "shell: $c: fewer than 900 branches: $(head -n 3 "$tmp/shell.ref")"
		else
			same_as_ref "$c" "walked blocks' (HWT_LAST_WALK)"
		fi
	done
fi

# ---- (7) hwt calls against hwt flow ---------------------------------------

# runs_flow FILE / runs_calls FILE: "NAME COUNT" for each run of
# instructions in one function (a stream's header as it is).
runs_flow() {
	awk '/^# stream/ { if (n) print name, n; n = 0; name = ""; print; next }
	     /^[0-9a-f]+( |$)/ { s = NF < 2 ? "?" : $2
		sub(/\+0x[0-9a-f]+$/, "", s)
		if (s != name) { if (n) print name, n; name = s; n = 0 }
		n++ }
	     END { if (n) print name, n }' "$1"
}
runs_calls() {
	awk -F'\t' '/^# stream/ { if (n) print name, n; n = 0; name = ""; print; next }
	     NF >= 3 && $3 ~ /^inst [0-9]+,[0-9]+$/ { s = $2; sub(/^ +/, "", s)
		if (s ~ /^\?\?/) s = "?"
		split(substr($3, 6), r, ",")
		if (s != name) { if (n) print name, n; name = s; n = 0 }
		n += r[2] - r[1] + 1 }
	     END { if (n) print name, n }' "$1"
}
if [ -s "$tmp/shell.data" ]; then
	"$hwt" flow "$tmp/shell.data" >"$tmp/shell.flow" 2>/dev/null
	"$hwt" calls "$tmp/shell.data" >"$tmp/shell.calls" 2>/dev/null
	runs_flow "$tmp/shell.flow" >"$tmp/shell.fruns"
	runs_calls "$tmp/shell.calls" >"$tmp/shell.cruns"
	check
	if [ "$(grep -vc '^# ' "$tmp/shell.fruns")" -lt 2000 ]; then
		fail "hwt flow on the shell: few runs of functions: $(grep -vc '^# ' "$tmp/shell.fruns")"
	elif ! grep -q '^work ' "$tmp/shell.fruns"; then
		fail "hwt flow on the shell: no run of work: $(grep -m 5 -v '^# ' "$tmp/shell.fruns")"
	elif ! cmp -s "$tmp/shell.fruns" "$tmp/shell.cruns"; then
		fail "hwt calls and hwt flow part: $(diff "$tmp/shell.fruns" "$tmp/shell.cruns" | head -n 6)"
	fi
fi

finish

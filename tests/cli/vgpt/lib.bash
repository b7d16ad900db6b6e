# SPDX-License-Identifier: BSD-2-Clause
# Shared by tests/cli/vgpt*.sh: record programs under vgpt (the Valgrind
# tool in src/record/vgpt) and check that decoding its trace gives its
# ground truth, superblock for superblock.
#
#   . "$(dirname "$0")/vgpt/lib.bash" NAME "$@"	(the test's HWT BUILD_DIR)
#
# sets vglib and vgpt_dir (this folder) beside what ../lib.bash sets and
# provides (hwt, build, src, tmp, fail, check, finish ...), and provides
#   cc NAME SRC [GCC ARGS]      compile a test program into $tmp/NAME
#   record NAME [VGPT OPTS --] PROG ARGS
#                               run PROG under vgpt (--vgpt-truth=yes
#                               unless OPTS says otherwise) into
#                               $tmp/NAME.*; fails on a non-zero exit
#                               or any message of the tool
#   decode PREFIX PT [TID]      the instructions of one stream (hwt flow
#                               --insn, no events), decoded with the
#                               code the sideband says was there when
#                               it ran (below)
#   truth_cmp TRUTH FLOW        decode == truth? prints the verdict
#   check_streams NAME          every stream of a recording: no ptdump
#                               error, decode == truth
#   fast NAME CMD...            CMD recorded without the truth (fast log
#                               records) decodes to NAME's truth
#   mutant NAME FILTER...       NAME's main stream, decoded with its
#                               sideband passed through FILTER, must not
#                               give its truth
#
# Time-aware decoding: a stream is cut at its PSBs; each piece, from a
# PSB (time T, its TSC) to the next (time T'; the decode goes on to that
# PSB's PSBEND, whose FUP says where the flow is), is decoded with the code
# mappings of its process as of T (mmap/munmap lines up to T, the later
# replacing what they overlap), plus those first written in [T, T') that
# overlap none of them. vgpt starts a PSB+ in every thread when code is
# unmapped or rewritten, so no piece needs two versions of one address.
# A process sees its parent's mappings up to its fork, and after an
# execve (a `comm` line of its pid) only its own new ones.
. "$(dirname "${BASH_SOURCE[0]}")/../lib.bash" "$@"
wants_vgpt
wants gcc
vgpt_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

cc() {
	local out=$1 src=$2
	shift 2
	if ! gcc -O1 -g -o "$tmp/$out" "$src" "$@" 2> "$tmp/$out.cc.err"; then
		cat "$tmp/$out.cc.err" >&2
		echo "FAIL: cannot compile $src" >&2
		exit 1
	fi
}

record() {
	local name=$1 opts=() truth=--vgpt-truth=yes
	shift
	if printf '%s\n' "$@" | grep -qx -- --; then
		while [ "$1" != -- ]; do
			case $1 in --vgpt-truth=*) truth=$1 ;; *) opts+=("$1") ;; esac
			shift
		done
		shift
	fi
	check
	if ! VALGRIND_LIB=$vglib valgrind -q --tool=vgpt --vgpt-out="$tmp/$name" \
	     "$truth" "${opts[@]}" "$@" > "$tmp/$name.stdout" 2> "$tmp/$name.stderr"; then
		fail "$name: valgrind --tool=vgpt failed"
		cat "$tmp/$name.stderr" >&2
		return 1
	fi
	if [ -s "$tmp/$name.stderr" ]; then
		fail "$name: vgpt printed messages"
		cat "$tmp/$name.stderr" >&2
		return 1
	fi
}

# Per PSB of a trace: "OFFSET TIME END" (vgpt/psbs.awk).
psbs() {
	"$hwt" ptdump "$1" | awk -f "$vgpt_dir/hex.awk" -f "$vgpt_dir/psbs.awk"
}

decode() {
	local prefix=$1 pt=$2 tid=${3:-} pid from to args
	if [ -z "$tid" ]; then
		tid=${pt#"$prefix".}
		tid=${tid%.pt}
	fi
	pid=$(awk -v tid="$tid" '$1 == "thread" && $4 == tid { print $3; exit }' "$prefix.sb")
	psbs "$pt" > "$pt.psbs"
	awk -v pid="$pid" -f "$vgpt_dir/hex.awk" -f "$vgpt_dir/images.awk" \
		"$prefix.sb" "$pt.psbs" |
	while read -r from to args; do
		# shellcheck disable=SC2086
		[ "$to" = end ] && to= || to=-$to
		"$hwt" flow --no-sym $args "$pt:$from$to"
	done | grep -v '^\['
}

# truth_cmp TRUTH FLOW [AWK OPTS]
truth_cmp() {
	local truth=$1 flow=$2
	shift 2
	awk "$@" -f "$vgpt_dir/hex.awk" -f "$vgpt_dir/cmp.awk" "$truth" "$flow"
}

# check_streams NAME [MIN]: every stream of $tmp/NAME; at least MIN.
check_streams() {
	local name=$1 min=${2:-1} out=$tmp/$1 pt tid n=0
	for pt in "$out".*.pt; do
		[ -e "$pt" ] || break
		tid=${pt#"$out".}
		tid=${tid%.pt}
		n=$((n + 1))
		check
		if ! "$hwt" ptdump "$pt" > "$pt.dump" 2>&1 || grep -qi error "$pt.dump"; then
			fail "$name/$tid: hwt ptdump reports errors"
			grep -i error "$pt.dump" | head -3 >&2
		fi
		check
		decode "$out" "$pt" > "$out.$tid.flow" 2> "$out.$tid.flow.err"
		if [ -s "$out.$tid.flow.err" ] || grep -q '^\[error' "$out.$tid.flow"; then
			fail "$name/$tid: decode errors"
			head -3 "$out.$tid.flow.err" >&2
		elif ! truth_cmp "$out.$tid.truth" "$out.$tid.flow" > "$out.$tid.cmp"; then
			fail "$name/$tid: decode differs from the truth: $(cat "$out.$tid.cmp")"
		else
			echo "$name/$tid: $(cat "$out.$tid.cmp")"
		fi
	done
	check
	[ "$n" -ge "$min" ] || fail "$name: $n streams, expected at least $min"
}

# fast NAME CMD...: the run without the truth decodes to NAME's truth
# (--vgpt-truth=yes makes every log record a slow one; deterministic CMD).
# With the drain thread (where there is a second CPU), without it, and
# switching between the two after every log (auto, with windows too small
# to hold one: where there is only one CPU, the same as no).
fast() {
	local name=$1 main truth dt n opts
	shift
	truth=$(ls "$tmp/$name".*.truth | head -n 1)
	for dt in yes no switch; do
		n=$name-fast-$dt
		opts=(--vgpt-drain-thread="$dt")
		[ "$dt" = switch ] &&
			opts=(--vgpt-drain-thread=auto --vgpt-drain-window=1k)
		record "$n" --vgpt-truth=no "${opts[@]}" -- "$@" || return
		check
		main=$(head -n 1 "$tmp/$n.sb" | cut -d' ' -f3)
		decode "$tmp/$n" "$tmp/$n.$main.pt" > "$tmp/$n.flow"
		if truth_cmp "$truth" "$tmp/$n.flow" > "$tmp/$n.cmp"; then
			echo "$name without truth, drain thread $dt: $(cat "$tmp/$n.cmp")"
		else
			fail "$name: the run without the truth (drain thread $dt) decodes otherwise: $(cat "$tmp/$n.cmp")"
		fi
	done
}

# mutant NAME FILTER...: a mutation that must be caught.
mutant() {
	local name=$1 main
	shift
	main=$(head -n 1 "$tmp/$name.sb" | cut -d' ' -f3)
	check
	"$@" < "$tmp/$name.sb" > "$tmp/m$name.sb"
	cp "$tmp/$name.$main.pt" "$tmp/m$name.$main.pt"
	decode "$tmp/m$name" "$tmp/m$name.$main.pt" > "$tmp/m$name.flow" 2>&1
	if truth_cmp "$tmp/$name.$main.truth" "$tmp/m$name.flow" > /dev/null; then
		fail "$name: the sideband edited by '$*' still decodes to the truth"
	fi
}

#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# scripts/libipt-suite.sh [OPTIONS] BUILD_DIR [TEST...]
#
# Run libipt's pttc test suite (test/src/*.ptt, and test/pevent/src/*.ptt
# with perf_event sideband) against hwt: libipt's pttc assembles each .ptt
# into a trace, sideband files and expected tool output (one .exp per tool
# and per `cpu' directive), libipt's script/test.bash runs the tool and
# diffs. We count the results per expectation ourselves: an expectation
# passed iff test.bash removed its .diff. Only ptdump expectations count
# unless --ptxed is given (`make libipt-suite' gives it).
#
# The last lines printed are exactly
#     libipt-ptxed: N passed, N failed      (with --ptxed)
#     libipt-ptdump: N passed, N failed
# and the exit status is non-zero if any expectation failed that is not
# listed in tests/libipt-exceptions.txt (or if the suite could not run).
#
# Options:
#   --ptdump CMD    the ptdump command, split on spaces (default:
#                   "BUILD_DIR/hwt ptdump"; env LIBIPT_SUITE_PTDUMP). Use
#                   .cache/libipt/build/bin/ptdump to check the harness
#                   against libipt's own ptdump (all must pass).
#   --ptxed         also count ptxed expectations, run with --ptxed-cmd
#   --ptxed-cmd CMD the ptxed command (default "BUILD_DIR/hwt ptxed"; env
#                   LIBIPT_SUITE_PTXED)
#   --libipt DIR    where libipt is fetched and built (default
#                   REPO/.cache/libipt; env LIBIPT_DIR)
#   --work DIR      scratch directory, emptied first (default
#                   BUILD_DIR/libipt-suite); kept for inspecting .diff files
#   --exceptions F  known failures (default REPO/tests/libipt-exceptions.txt)
#   --timeout SECS  per tool run (default 30)
#   --show N        print the first N failing diffs (default 3)
#   --list N        list at most N failures (default 100; all of them are
#                   written to WORK/ptdump-failures.txt)
#   -j N            parallel jobs (default nproc)
#   TEST...         only these .ptt tests (names, globs allowed: 'tnt*')
#
# Exceptions file: one name per line, `NAME # reason'. NAME is an
# expectation (`tip-ptdump', `apl11-ptdump-cpu_6_122', `tip-ptxed') or a
# .ptt test name (`apl11', covering all of its expectations, ptdump's and
# ptxed's). '#' lines are comments.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

usage() {
	sed -n '3,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//'
	exit 2
}

die() {
	echo "libipt-suite: error: $*" >&2
	# Keep the contract: the last lines state the outcome.
	[[ ${with_ptxed:-0} -eq 0 ]] || echo "libipt-ptxed: 0 passed, 1 failed"
	echo "libipt-ptdump: 0 passed, 1 failed"
	exit 1
}

ptdump_cmd=${LIBIPT_SUITE_PTDUMP:-}
ptxed_cmd=${LIBIPT_SUITE_PTXED:-}
with_ptxed=0
libipt_dir=${LIBIPT_DIR:-$REPO/.cache/libipt}
work=""
exceptions=$REPO/tests/libipt-exceptions.txt
tool_timeout=30
show=3
list_max=100
jobs=$(nproc 2>/dev/null || echo 2)

while [[ $# -gt 0 ]]; do
	case $1 in
	--ptdump) ptdump_cmd=$2; shift 2 ;;
	--ptxed) with_ptxed=1; shift ;;
	--ptxed-cmd) ptxed_cmd=$2; with_ptxed=1; shift 2 ;;
	--libipt) libipt_dir=$2; shift 2 ;;
	--work) work=$2; shift 2 ;;
	--exceptions) exceptions=$2; shift 2 ;;
	--timeout) tool_timeout=$2; shift 2 ;;
	--show) show=$2; shift 2 ;;
	--list) list_max=$2; shift 2 ;;
	-j) jobs=$2; shift 2 ;;
	-h|--help) usage ;;
	--) shift; break ;;
	-*) echo "libipt-suite: unknown option $1" >&2; usage ;;
	*) break ;;
	esac
done
[[ $# -ge 1 ]] || usage
[[ -d $1 ]] || die "$1: no such build directory"
build=$(cd "$1" && pwd)
shift
[[ -n $work ]] || work=$build/libipt-suite
[[ -n $ptdump_cmd ]] || ptdump_cmd="$build/hwt ptdump"
[[ -n $ptxed_cmd ]] || ptxed_cmd="$build/hwt ptxed"

echo "== libipt suite: fetching/building libipt's pttc"
bash "$REPO/scripts/fetch-libipt.sh" "$libipt_dir" >"$build/libipt-fetch.log" 2>&1 ||
	{ tail -n 30 "$build/libipt-fetch.log" >&2; die "fetching libipt failed (log: $build/libipt-fetch.log)"; }
grep '^fetch-libipt:' "$build/libipt-fetch.log"
libipt_dir=$(cd "$libipt_dir" && pwd)
pttc=$libipt_dir/build/bin/pttc
test_bash=$libipt_dir/src/script/test.bash
[[ -x $pttc && -f $test_bash ]] || die "no pttc/test.bash under $libipt_dir"
command -v yasm >/dev/null || die "yasm is not installed (pttc needs it)"

# A command as test.bash wants it: -d/-x take one word, -D/-X the rest.
# Relative paths are resolved now because test.bash runs in $work. Every
# run is wrapped in timeout(1) so a hanging tool fails one test, not CI.
# Sets tool_args (not echoed: die must not run in a command substitution).
tool_words() {
	local -a w
	read -ra w <<<"$1"
	[[ ${#w[@]} -gt 0 ]] || die "empty tool command"
	if [[ ${w[0]} == */* ]]; then
		[[ -x ${w[0]} ]] || die "${w[0]}: not an executable"
		w[0]=$(cd "$(dirname "${w[0]}")" && pwd)/$(basename "${w[0]}")
	else
		command -v "${w[0]}" >/dev/null || die "${w[0]}: command not found"
	fi
	tool_args="-k 5 $tool_timeout ${w[*]}"
}
tool_words "$ptdump_cmd"
ptdump_args=$tool_args
if [[ $with_ptxed -eq 1 ]]; then
	tool_words "$ptxed_cmd"
	ptxed_args=$tool_args
else
	# ptxed expectations are generated anyway; don't run a real ptxed.
	ptxed_args="-k 5 $tool_timeout true"
fi

# The tests to run: the suite's own and those with perf_event sideband.
# Only files that exist: a name without glob characters stays itself.
ptt_dirs=("$libipt_dir/src/test/src" "$libipt_dir/src/test/pevent/src")
ptts=()
shopt -s nullglob
for t in "${@:-*}"; do
	t=${t%.ptt}
	m=()
	for d in "${ptt_dirs[@]}"; do
		# shellcheck disable=SC2206 # $t is a glob on purpose
		for f in "$d"/$t.ptt; do
			[[ -f $f ]] && m+=("$f")
		done
	done
	[[ ${#m[@]} -gt 0 ]] || die "no test matches $t"
	ptts+=("${m[@]}")
done
shopt -u nullglob

rm -rf "$work"
mkdir -p "$work"
echo "== libipt suite: ${#ptts[@]} tests, ptdump: $ptdump_cmd$([[ $with_ptxed -eq 1 ]] && echo ", ptxed: $ptxed_cmd")"
echo "   scratch: $work"

# test.bash writes <test>[-tool][-cpu_F_M[_S]].{exp,out,diff} into the
# current directory; names are unique per test, so batches can run in
# parallel. Its own exit status is not used: we count files.
start=$(date +%s)
(
	cd "$work"
	printf '%s\0' "${ptts[@]}" |
		xargs -0 -n 8 -P "$jobs" bash "$test_bash" -l -g "$pttc" \
			-d timeout -D "$ptdump_args" -x timeout -X "$ptxed_args" \
			>test.log 2>&1 || true
)
echo "   ran in $(($(date +%s) - start)) s (log: $work/test.log)"

# Known failures: name -> reason.
declare -A known=()
if [[ -f $exceptions ]]; then
	while IFS= read -r line; do
		name=${line%%#*}
		name=${name//[[:space:]]/}
		[[ -n $name ]] || continue
		reason=""
		[[ $line == *#* ]] && reason=${line#*#} && reason=${reason# }
		known[$name]=${reason:-no reason given}
	done <"$exceptions"
fi

# An expectation's tool, as test.bash derives it:
# <test>-<tool>[-cpu_F_M[_S]].exp.
exp_tool() {
	local b=${1%.exp}
	[[ $b =~ ^(.*)-cpu_[0-9]+_[0-9]+(_[0-9]+)?$ ]] && b=${BASH_REMATCH[1]}
	echo "${b##*-}"
}

# The .ptt an expectation came from: the longest test name it starts with.
declare -A is_test=()
for p in "${ptts[@]}"; do
	t=$(basename "$p" .ptt)
	is_test[$t]=1
done
exp_test() {
	local b=${1%.exp}
	while [[ $b == *-* ]]; do
		b=${b%-*}
		[[ -n ${is_test[$b]:-} ]] && { echo "$b"; return; }
	done
	echo "$b"
}

status=0
summary=()
declare -A failing=()	# failing expectations and tests, for stale exceptions

# The reason an expectation (or test) is a known failure, or nothing.
known_reason() {
	local name=$1 test=$2
	if [[ -n ${known[$name]:-} ]]; then
		echo "${known[$name]}"
	elif [[ -n ${known[$test]:-} ]]; then
		echo "${known[$test]}"
	fi
}

count_tool() {
	local tool=$1 pass=0 unexpected=0 e name line reason i
	local -a fnames=() ftests=() fnotes=()
	shopt -s nullglob
	for e in "$work"/*.exp; do
		e=$(basename "$e")
		[[ $(exp_tool "$e") == "$tool" ]] || continue
		name=${e%.exp}
		if [[ -e $work/$name.diff ]]; then
			fnames+=("$name")
			ftests+=("$(exp_test "$name")")
			fnotes+=("")
		else
			pass=$((pass + 1))
		fi
	done
	shopt -u nullglob

	# A pttc error leaves no .exp at all: one failure for the whole test.
	while IFS= read -r line; do
		name=$(basename "${line%%: *}" .ptt)
		fnames+=("$name")
		ftests+=("$name")
		fnotes+=(" (${line#*: })")
	done < <(grep -E '\.ptt: .*(failed with|did not produce|unexpected|unknown tool)' \
			"$work/test.log" | sort -u || true)

	if [[ $((pass + ${#fnames[@]})) -eq 0 ]]; then
		fnames+=("(none)")
		ftests+=("")
		fnotes+=(" no $tool expectations were produced; see $work/test.log")
	fi

	local fail=${#fnames[@]}
	if [[ $fail -gt 0 ]]; then
		echo "-- libipt-$tool failures (all in $work/$tool-failures.txt):"
		for ((i = 0; i < fail; i++)); do
			failing[${fnames[i]}]=1
			failing[${ftests[i]}]=1
			reason=$(known_reason "${fnames[i]}" "${ftests[i]}")
			if [[ -n $reason ]]; then
				echo "   ${fnames[i]}${fnotes[i]}  (known: $reason)"
			else
				echo "   ${fnames[i]}${fnotes[i]}"
				unexpected=$((unexpected + 1))
			fi
		done >"$work/$tool-failures.txt"
		head -n "$list_max" "$work/$tool-failures.txt"
		[[ $fail -le $list_max ]] ||
			echo "   ... and $((fail - list_max)) more"
		local shown=0
		for ((i = 0; i < fail && shown < show; i++)); do
			[[ -f $work/${fnames[i]}.diff ]] || continue
			echo "-- ${fnames[i]}.diff (first 30 lines)"
			head -n 30 "$work/${fnames[i]}.diff"
			shown=$((shown + 1))
		done
		echo "-- libipt-$tool: $((fail - unexpected)) of $fail failures are documented exceptions"
	fi
	[[ $unexpected -eq 0 ]] || status=1
	summary+=("libipt-$tool: $pass passed, $fail failed")
}

# ptdump last: its line must be the final one.
if [[ $with_ptxed -eq 1 ]]; then
	count_tool ptxed
fi
count_tool ptdump

# Exceptions that pass now should be dropped from the list. Only names of
# tests that ran and of expectations of a counted tool are judged.
for name in "${!known[@]}"; do
	[[ -z ${failing[$name]:-} ]] || continue
	if [[ -z ${is_test[$name]:-} ]]; then
		[[ -e $work/$name.exp ]] || continue
		tool=$(exp_tool "$name.exp")
		[[ $tool == ptdump || ( $tool == ptxed && $with_ptxed -eq 1 ) ]] || continue
	fi
	echo "note: '$name' is listed in $exceptions but passes now"
done

printf '%s\n' "${summary[@]}"
exit $status

# SPDX-License-Identifier: BSD-2-Clause
# Shared by tests/cli/*.sh, which ctest runs as `bash SCRIPT HWT BUILD_DIR`:
#
#   . "$(dirname "$0")/lib.bash" NAME "$@"
#
# sets hwt (an absolute path: tests cd), build, src (the source tree), tmp
# (a fresh directory, removed at exit unless KEEP is set), failures and
# checks; and provides
#   fail MSG          a failure, said on stderr
#   check             count one check
#   finish [MORE]     "NAME: N checks, M failures[, MORE]", then exit:
#                     0 only without failures
#   needs CMD...      a missing command fails the test: CI installs it
#                     (Makefile DEB_PKGS), so its absence is a defect
#   wants CMD...      a missing command skips the test (exit 0), saying so
#   built FILE...     a missing build product fails the test
#   ptgen_trace NAME PACKETS...  $tmp/NAME.pt written by ptgen
#   golden DESC CMD... <<EXPECTED  CMD's whole stdout, and exit code 0
#   wants_vgpt        skips unless valgrind and the vgpt tool are there;
#                     sets vglib (HWT_VGPT_LIB overrides BUILD_DIR/vgpt)
#   run DESC CMD...   CMD with a time limit (60 s), one check: sets desc
#                     and rc, output in $tmp/out and $tmp/err; a crash,
#                     a hang or a sanitizer report is a failure
#   no_crash          true unless the last run crashed or hung
#   at_exit CMD       also run CMD at exit (before tmp is removed)
set -u

if [ $# -ne 3 ]; then
	echo "usage: $0 HWT BUILD_DIR" >&2
	exit 2
fi
test_name_=$1
hwt=$(readlink -f "$2")
build=$(readlink -f "$3")
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
failures=0
checks=0
at_exit_=

fail() {
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}

check() {
	checks=$((checks + 1))
}

finish() {
	echo "$test_name_: $checks checks, $failures failures${1:+, $1}"
	[ "$failures" -eq 0 ]
	exit
}

run() {
	desc=$1
	shift
	timeout 60 "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	check
	crashed=0
	if [ "$rc" -ge 124 ] || grep -qE 'Sanitizer|runtime error:' "$tmp/err"; then
		crashed=1
		fail "$desc: crashed, hung or a sanitizer report (exit $rc)"
		head -n 20 "$tmp/err" | sed 's/^/    stderr: /' >&2
	fi
}

no_crash() {
	[ "$crashed" -eq 0 ]
}

# require_ EXIT CMD...: the first command not installed ends the test
# with EXIT (1: a failure, 0: skipped).
require_() {
	local code=$1 cmd

	shift
	for cmd in "$@"; do
		command -v "$cmd" >/dev/null && continue
		if [ "$code" -ne 0 ]; then
			echo "$test_name_: FAIL: $cmd is not installed (see DEB_PKGS in the Makefile)" >&2
		else
			echo "$test_name_: $cmd is not installed; skipped" >&2
		fi
		exit "$code"
	done
}

needs() {
	require_ 1 "$@"
}

wants() {
	require_ 0 "$@"
}

built() {
	local f

	for f in "$@"; do
		if [ ! -x "$f" ]; then
			echo "$test_name_: FAIL: $f not built" >&2
			exit 1
		fi
	done
}

# ptgen_trace NAME PACKETS...: $tmp/NAME.pt from ptgen's packet lines
# (tests/tools/ptgen.c); a failure ends the test.
ptgen_trace() {
	local name=$1
	shift
	printf '%s\n' "$@" | "$build/ptgen" "$tmp/$name.pt" || {
		echo "FAIL: ptgen $name" >&2
		exit 1
	}
}

# golden DESC CMD... <<EXPECTED: one check; CMD's stdout must be EXPECTED
# and its exit code 0.
golden() {
	local desc=$1 rc
	shift
	check
	cat >"$tmp/want"
	timeout 60 "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ $rc -ne 0 ] || ! cmp -s "$tmp/want" "$tmp/out"; then
		fail "$desc (exit $rc)"
		diff -u "$tmp/want" "$tmp/out" | head -n 40 >&2
		head -n 5 "$tmp/err" >&2
	fi
}

wants_vgpt() {
	wants valgrind
	vglib=${HWT_VGPT_LIB:-$build/vgpt}
	if [ ! -x "$vglib/vgpt-amd64-linux" ]; then
		echo "$test_name_: vgpt not built (no valgrind.pc, or a sanitizer build); skipped" >&2
		exit 0
	fi
}

at_exit() {
	at_exit_="$at_exit_$1;"
}

cleanup_() {
	eval "$at_exit_"
	[ -n "${KEEP:-}" ] || rm -rf "$tmp"
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hwt-$test_name_.XXXXXX")
trap cleanup_ EXIT

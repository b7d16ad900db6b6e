# SPDX-License-Identifier: BSD-2-Clause
# vgpt (src/record/vgpt) at the events outside straight-line code, each
# program's decode == its truth, stream by stream (tests/cli/vgpt/lib.bash):
#   signals.c   int3 and a SIGSEGV handler that returns: synchronous
#               signals in the middle of a superblock; a jump to a
#               non-canonical address (its TIP has all 64 bits); then
#               death by SIGSEGV (the trace ends where the thread stopped)
#   threads.c   four threads taking turns: `switch` lines, TSC on return
#   exec.c      fork, a failing execve, two execve under
#               --trace-children=yes: the new image continues the stream
#               and the clock
#   creq.c      client requests and a function wrapper (call-noredir)
# signals.c and creq.c also run without the truth (fast records), and that
# decode must be the truth too. Mutations: a `switch` line misplaced, the
# last image's mappings left out.
#
#   bash tests/cli/vgpt_events.sh path/to/hwt BUILD_DIR
. "$(dirname "$0")/vgpt/lib.bash" vgpt_events "$@"

cc signals "$vgpt_dir/signals.c"
cc threads "$vgpt_dir/threads.c" -pthread
cc exec "$vgpt_dir/exec.c"
cc creq "$vgpt_dir/creq.c"

# ---- synchronous signals
record signals "$tmp/signals" && check_streams signals
check
[ "$(cat "$tmp/signals.stdout")" = "3 3 $(
	"$tmp/signals" | cut -d' ' -f3)" ] || fail "signals: not 3 traps, 3 faults"
fast signals "$tmp/signals"

# Death by SIGSEGV: valgrind exits 139 like the program; the trace is
# complete up to the fault.
check
(VALGRIND_LIB=$vglib valgrind -q --tool=vgpt --vgpt-out="$tmp/die" \
	--vgpt-truth=yes "$tmp/signals" die > /dev/null 2> "$tmp/die.stderr"; exit $?) 2> /dev/null
rc=$?
if [ "$rc" -ne 139 ] || ! grep -q 'signal 11 (SIGSEGV)' "$tmp/die.stderr"; then
	fail "die: exit $rc, expected death by SIGSEGV"
	cat "$tmp/die.stderr" >&2
else
	check_streams die
fi

# ---- threads
# (--fair-sched=yes: a thread that yields lets the next one run, so
# the switches do not depend on the machine's load.)
record threads --fair-sched=yes -- "$tmp/threads" && check_streams threads 5
# A thread stops running (`out`, or its `exit`) and another runs (`in`) at
# the same time; the next `out` is the latter's.
cat > "$tmp/switch.awk" <<'EOF'
$1 == "thread" && !started { running = $4; started = 1 }
$1 == "exit" && $4 == running { running = ""; t = $2 }
$1 != "switch" { next }
$5 == "out" { if ($4 != running) bad = bad " " NR; running = ""; t = $2 }
$5 == "in" { if (running != "" || $2 != t) bad = bad " " NR; running = $4; n++ }
END { if (bad != "" || n < 20) { print n " switches, bad lines" bad; exit 1 } }
EOF
check
awk -f "$tmp/switch.awk" "$tmp/threads.sb" > "$tmp/switch.check" ||
	fail "threads: switch lines: $(cat "$tmp/switch.check")"
check
awk '$1 == "switch" && !done { $5 = $5 == "in" ? "out" : "in"; done = 1 } 1' \
	"$tmp/threads.sb" > "$tmp/bad.sb"
if awk -f "$tmp/switch.awk" "$tmp/bad.sb" > /dev/null; then
	fail "threads: a misplaced switch line passes the check"
fi

# ---- fork and execve
record exec --trace-children=yes -- "$tmp/exec" /bin/true && check_streams exec 2
check
[ "$(grep -c '^comm ' "$tmp/exec.sb")" -eq 3 ] &&
	[ "$(grep -c '^exec ' "$tmp/exec.sb")" -eq 3 ] &&
	grep -q '^fork ' "$tmp/exec.sb" ||
	fail "exec: the sideband lacks the fork, execve or comm lines"
check
[ "$(cat "$tmp/exec.stdout")" = "$("$tmp/exec" /bin/true)" ] ||
	fail "exec: output under vgpt differs from native"
# The main stream without the mappings of its last image (/bin/true, at
# the address the first image's program had) must not decode to the truth.
main=$(head -n 1 "$tmp/exec.sb" | cut -d' ' -f3)
mutant exec awk -v pid="$main" \
	'$1 == "comm" && $3 == pid { n++ } !(n == 2 && $1 == "mmap" && $3 == pid)'

# ---- client requests, function wrapping
record creq "$tmp/creq" && check_streams creq
check
[ "$(cat "$tmp/creq.stdout")" = 30 ] || fail "creq: the wrapper did not run"
fast creq "$tmp/creq"

finish

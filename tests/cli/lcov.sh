# SPDX-License-Identifier: BSD-2-Clause
# hwt coverage --lcov and --drcov, hwt flow --srcline: source lines and
# coverage from a trace, against the known counts of an assembly program,
# gcov, addr2line and objdump.
#
# tests/data/perfdata_loop.asm (40 turns; built with yasm's DWARF, the
# same code as perfdata_flow.sh's build) with its trace from ptgen: every
# line's count is what the program's loop makes it (written out below),
# the data lines 0; the same trace given twice (hwt coverage's several
# traces) counts twice, and so does a perf.data of two CPUs running it
# (each stream with the code its sideband maps; -j2 the same file).
#
# tests/cli/vgpt/cover.c is built twice at -O0: with -g, recorded by hwt
# record (the portable source), and with --coverage, run with the same
# argument and counted by gcov. At -O0 each statement's code is its own,
# so every line both tools count must have the same count: hwt's is the
# count of the line's most run instruction, gcov's its blocks'. (Lines
# only one of them names are left out: gcov counts a function's entry on
# its declaration and a case on its label, the line table on the brace.)
# drcov: the asm program's code is one block from its base; the C
# program's module holds exactly the bytes of the instructions hwt flow
# lists in it (sized by objdump), from base 0 (a PIE).
#
# Also: the lines not run are there with 0 (never(), a branch not taken),
# and the branches never run with "-" (never()'s, as gcov's "never
# executed"),
# lcov reads the file as hwt counts it, genhtml makes a page of it,
# clang's DWARF (no .debug_aranges, DWARF 5's file 0) counts the same
# functions, -j2 writes the same file (in small segments too), the
# decoder's tally of the blocks it folds counts what the blocks given out
# one by one count, the AFL map is the one without --lcov, LF/LH
# agree with the lines and the summary, the union of two recordings in
# one file, a source named from a relative compile directory, a program
# without DWARF (its instructions counted as without a line), bad
# arguments.
#
#   bash tests/cli/lcov.sh path/to/hwt BUILD_DIR
. "$(dirname "$0")/lib.bash" lcov "$@"
built "$build/ptgen"
needs yasm ld nm objcopy objdump readelf addr2line gcc clang gcov awk join \
	lcov genhtml python3
prog=$src/tests/cli/vgpt/cover.c
cd "$tmp" || exit 1

# lines INFO SRC: "LINE COUNT" of source file SRC in lcov file INFO.
lines() {
	awk -v sf="SF:$2" '$0 == sf { on = 1; next } /^end_of_record/ { on = 0 }
		on && /^DA:/ { split(substr($0, 4), a, ","); print a[1], a[2] }' "$1"
}

# ---- the assembly program: every count known --------------------------
. "$src/tests/data/perfdata_loop.bash"
asm=$src/tests/data/perfdata_loop.asm
perfdata_loop "$tmp" loop 40 "$build" &&
	yasm -g dwarf2 -f elf64 -DITER=40 "$asm" -o loopg.o &&
	ld -Ttext=0x401000 -e _start -o loopg loopg.o || {
	echo "FAIL: building the loop program and its trace" >&2
	exit 1
}
check
cmp -s <(objcopy -O binary -j .text loop /dev/stdout) \
	<(objcopy -O binary -j .text loopg /dev/stdout) ||
	fail "the loop program with DWARF has other code"
run "coverage --lcov, asm" "$hwt" coverage --lcov asm.info --elf loopg loop.pt
no_crash && [ "$rc" -eq 0 ] || fail "coverage --lcov, asm: exit $rc"
# Line: count, by the source's text (the loop's 40 turns: a quarter each
# to f0, f1, f2, f3 through the table, f3 calling f1 too; odd turns call
# odd; f1's loop turns three times a call).
want() {
	local n
	n=$(grep -nxF "$1" "$asm" | head -n 1 | cut -d: -f1)
	[ -n "$n" ] && echo "$n $2"
}
{
	want '	mov r12d, ITER' 1; want '	lea rbx, [rel table]' 1
	want '	mov eax, r12d' 40; want '	and eax, 3' 40
	want '	call [rbx + rax * 8]' 40; want '	test r12d, 1' 40
	want '	jz .even' 40; want '	call odd' 20; want '	dec r12d' 40
	want '	jnz top' 40; want '	jmp done' 1; want '	mov ecx, 3' 20
	want '	dec ecx' 60; want '	jnz f1_loop' 60
	want '	jmp [rel f2ptr]' 10; want '	call f1' 10
	want '	mov eax, 60' 1; want '	syscall' 1
	want '	dq f0, f1, f2, f3' 0; want '	dq f2b' 0
} | sort -k1,1 > asm.want
lines asm.info "$asm" | sort -k1,1 > asm.got
check
[ "$(wc -l < asm.want)" -eq 20 ] || fail "the expected lines: not 20"
check
join asm.want asm.got | awk '$2 != $3 { print "    line " $1 ": " $3 ", not " $2; bad = 1 }
	END { exit bad }' >&2 && [ "$(join asm.want asm.got | wc -l)" -eq 20 ] ||
	fail "asm: line counts are not the program's"
# The returns: f0's, f1's, f2b's, f3's and odd's (10, 20, 10, 10, 20).
check
awk '/^f0:|^f1:|^f2b:|^f3:|^odd:/ { f = $1 } /^\tret$/ && f { print NR, f; f = "" }' \
	"$asm" | while read -r n f; do
	case $f in f1:|odd:) echo "$n 20" ;; *) echo "$n 10" ;; esac
done | sort -k1,1 | join - asm.got | awk 'NF != 3 || $2 != $3 { bad = 1 }
	END { exit bad || NR != 5 }' || fail "asm: the returns' counts"
check
grep -qx 'lines: 23 of 26 in 1 source files' "$tmp/out" ||
	fail "asm: summary $(grep '^lines' "$tmp/out")"
# The trace twice (several traces: each alone, then the union): twice.
run "coverage --lcov, asm, twice" "$hwt" coverage --lcov asm2.info \
	--elf loopg loop.pt loop.pt
lines asm2.info "$asm" | sort -k1,1 > asm2.got
check
join asm.got asm2.got | awk '$3 != 2 * $2 { bad = 1 } END { exit bad || NR != 26 }' ||
	fail "asm: the same trace twice does not count twice"
# Five times on two threads (each thread counts its traces into one
# cover, its decoder's graph warm): five times, one by one's file.
run "coverage -j2 --lcov, asm, five times" "$hwt" coverage -j2 --lcov \
	asm5.info --elf loopg loop.pt loop.pt loop.pt loop.pt loop.pt
HWT_NO_TALLY=1 "$hwt" coverage --lcov asm5n.info --elf loopg loop.pt \
	loop.pt loop.pt loop.pt loop.pt > /dev/null 2>&1
lines asm5.info "$asm" | sort -k1,1 > asm5.got
check
join asm.got asm5.got | awk '$3 != 5 * $2 { bad = 1 } END { exit bad || NR != 26 }' &&
	cmp -s asm5.info asm5n.info ||
	fail "asm: the same trace five times (-j2) does not count five times"
# A perf.data of two CPUs (mkptdata: cpu 1 runs a second thread through
# the same loop), each stream decoded with the code its sideband maps:
# every count twice the trace's; -j2 the same file.
if ! "$build/mkptdata" --cpu 0 --cpu2 "1:1234:1235:$tmp/loop.pt" \
	--pt loop.pt --elf "$tmp/loopg" cpus.data 2> mk.err; then
	fail "mkptdata --cpu2: $(cat mk.err)"
else
	run "coverage --lcov, two CPUs" "$hwt" coverage --lcov cpus.info cpus.data
	lines cpus.info "$asm" | sort -k1,1 > cpus.got
	check
	join asm.got cpus.got | awk '$3 != 2 * $2 { bad = 1 } END { exit bad || NR != 26 }' ||
		fail "two CPUs: the counts are not twice the trace's"
	"$hwt" coverage -j2 --lcov cpus2.info cpus.data > /dev/null 2>&1
	check
	cmp -s cpus.info cpus2.info || fail "two CPUs: -j2 wrote another file"
fi

# ---- a C program recorded, against gcov --------------------------------
wants_vgpt
cp "$prog" cover.c
if ! gcc -O0 -g -o cover cover.c ||
   ! gcc -O0 --coverage -o gcovered cover.c ||
   ! gcc -O0 -o nodwarf cover.c; then
	echo "FAIL: cannot compile $prog" >&2
	exit 1
fi

# rec NAME ARG: NAME.data, a run of ./cover ARG (or PROG ARG).
rec() {
	check
	if ! "$hwt" record -q -o "$1.data" -- "${3:-./cover}" "$2" \
	     >"$1.stdout" 2>"$1.stderr"; then
		fail "$1: hwt record exit $?"
		head -n 5 "$1.stderr" >&2
	fi
}

rec r25 25
run "coverage --lcov" "$hwt" coverage --lcov r25.info r25.data
[ "$rc" -eq 0 ] || fail "coverage --lcov: exit $rc"
lines r25.info "$tmp/cover.c" > hwt.lines
check
[ "$(wc -l < hwt.lines)" -ge 25 ] ||
	fail "cover.c: $(wc -l < hwt.lines) lines in the lcov file, not >= 25"

# gcov's counts of the same run: "LINE COUNT", 0 for #####.
./gcovered 25 > gcov.stdout
gcov -b -c -o . gcovered-cover.gcda > /dev/null 2>&1
awk -F: '!/^ *[-#0-9]+\*?: *[0-9]+:/ { next }
	{ c = $1; gsub(/ /, "", c); l = $2; gsub(/ /, "", l) }
	c == "-" || l == 0 { next } { sub(/\*$/, "", c) }
	c == "#####" { c = 0 } { print l, c }' cover.c.gcov > gcov.lines
check
cmp -s r25.stdout gcov.stdout || fail "the two builds printed different sums"
join <(sort -k1,1 hwt.lines) <(sort -k1,1 gcov.lines) > both
check
n=$(wc -l < both)
[ "$n" -ge 20 ] || fail "only $n lines counted by both hwt and gcov"
check
if awk '$2 != $3 { bad = 1; print "    line " $1 ": hwt " $2 ", gcov " $3 }
	END { exit !bad }' both >&2; then
	fail "line counts differ from gcov's"
fi
# What the comparison covers: lines not run, lines run once, a loop's.
check
awk '$2 == 0 { z++ } $2 == 1 { o++ } $2 == 25 { l++ } $2 == 26 { t++ }
	END { exit !(z >= 2 && o >= 3 && l >= 3 && t == 1) }' both ||
	fail "the lines both count lack zeros, ones, the loop's body or test"
# Functions: the times each was entered, as gcov's "called".
check
awk '/^function / { print $2, $4 }' cover.c.gcov | sort > gcov.funcs
awk -v sf="SF:$tmp/cover.c" '$0 == sf { on = 1; next } /^end_of_record/ { on = 0 }
	on && /^FNDA:/ { split(substr($0, 6), a, ","); print a[2], a[1] }' \
	r25.info | sort > hwt.funcs
[ "$(wc -l < gcov.funcs)" -eq 4 ] && cmp -s gcov.funcs hwt.funcs || {
	fail "function counts differ from gcov's"
	diff gcov.funcs hwt.funcs | head -n 8 >&2
}
# Branches: each conditional jump's outcomes, as gcov -b counts them on a
# line that has one (gcov's fallthrough arc and the other; a switch's
# three arcs are two jumps' four outcomes here: left out).
awk -F: '/^ *[-#0-9]+\*?: *[0-9]+:/ { l = $2 + 0 } /^branch/ {
	split($0, w, " "); n[l]++; if (/\(fallthrough\)/) f[l] = w[4]; else t[l] = w[4] }
	END { for (l in n) if (n[l] == 2 && (l in f) && (l in t)) print l, t[l], f[l] }' \
	cover.c.gcov | sort -k1,1 > gcov.br
awk -v sf="SF:$tmp/cover.c" '$0 == sf { on = 1; next } /^end_of_record/ { on = 0 }
	on && /^BRDA:/ { split(substr($0, 6), a, ","); k = a[1]
		jumps[k] = a[2] + 1 > jumps[k] ? a[2] + 1 : jumps[k]
		if (a[3] == 0) t[k] = a[4]; else f[k] = a[4] }
	END { for (k in jumps) if (jumps[k] == 1) print k, t[k], f[k] }' r25.info |
	sort -k1,1 > hwt.br
check
[ "$(wc -l < gcov.br)" -ge 5 ] && [ "$(join gcov.br hwt.br | wc -l)" -eq "$(wc -l < gcov.br)" ] &&
	join gcov.br hwt.br | awk '$2 != $4 || $3 != $5 { print "    line " $1 ": gcov " $2 "/" $3 ", hwt " $4 "/" $5; bad = 1 }
		END { exit bad }' >&2 ||
	fail "branch counts differ from gcov's ($(wc -l < gcov.br) lines)"
# never(): its lines are there, not run; its jump's two branches too,
# never run ("-"), as gcov lists them ("never executed"): no other line
# of either has such.
check
body=$(grep -n 'return v \* 7;' cover.c | cut -d: -f1)
grep -qx "$body 0" hwt.lines || fail "never()'s line $body: not 0 in the lcov file"
check
awk -F: '/^ *[-#0-9]+\*?: *[0-9]+:/ { l = $2 + 0 }
	/^branch.*never executed/ { print l }' cover.c.gcov | sort -u > gcov.never
awk -v sf="SF:$tmp/cover.c" '$0 == sf { on = 1; next } /^end_of_record/ { on = 0 }
	on && /^BRDA:.*,-$/ { split(substr($0, 6), a, ","); print a[1] }' r25.info |
	sort > hwt.never.all
sort -u hwt.never.all > hwt.never
[ "$(wc -l < gcov.never)" -eq 1 ] && cmp -s gcov.never hwt.never &&
	[ "$(wc -l < hwt.never.all)" -eq 2 ] ||
	fail "the branches never run: gcov's lines $(echo $(cat gcov.never)), hwt's $(echo $(cat hwt.never))"

# The summary, LF and LH agree with the DA lines.
check
awk -F'[:,]' '/^DA:/ { f++; if ($3 > 0) h++ } /^LF:/ { lf += $2 }
	/^LH:/ { lh += $2 } END { exit !(f == lf && h == lh) }' r25.info ||
	fail "LF/LH do not add up to the DA lines"
check
read -r hit found files fhit ffound bhit bfound < <(awk -F'[:,]' '
	/^DA:/ { f++; if ($3 > 0) h++ } /^SF:/ { s++ }
	/^FNDA:/ { ff++; if ($2 > 0) fh++ }
	/^BRDA:/ { bf++; if ($5 > 0) bh++ }
	END { print h, f, s, fh, ff, bh, bf }' r25.info)
grep -qx "lines: $hit of $found in $files source files" "$tmp/out" &&
	grep -qx "functions: $fhit of $ffound" "$tmp/out" &&
	grep -qx "branches: $bhit of $bfound" "$tmp/out" ||
	fail "summary: not 'lines: $hit of $found in $files source files', 'functions: $fhit of $ffound', 'branches: $bhit of $bfound'"
# lcov's own reading of the file, and genhtml's page of cover.c.
check
lcov --summary --rc lcov_branch_coverage=1 r25.info > lcov.sum 2>&1
grep -qF "($hit of $found lines)" lcov.sum &&
	grep -qF "($fhit of $ffound functions)" lcov.sum &&
	grep -qF "($bhit of $bfound branches)" lcov.sum ||
	fail "lcov --summary does not read $hit of $found lines, $fhit of $ffound functions, $bhit of $bfound branches"
check
lcov --extract r25.info "$tmp/cover.c" -o mine.info > /dev/null 2>&1 &&
	genhtml mine.info -o html > genhtml.out 2>&1 &&
	[ -n "$(find html -name 'cover.c.gcov.html')" ] ||
	fail "genhtml: no page of cover.c ($(tail -n 2 genhtml.out))"

# -j2: the same file; the map is the one without --lcov.
run "coverage -j2 --lcov" "$hwt" coverage -j2 --lcov j2.info r25.data
check
cmp -s r25.info j2.info || fail "-j2 --lcov wrote another file"
# ... and a longer run cut into segments of 512 bytes (a jump's outcome
# across a cut is the next segment's first block's place), five times:
# the files must not depend on the threads' timing (a file once named by
# a freed name's address counted libc's code as another file's, one run
# in five; the drcov modules came in the order the files did).
rec r100k 100000
"$hwt" coverage --lcov j1s.info --drcov j1s.drcov r100k.data > /dev/null 2>&1
for k in 1 2 3 4 5; do
	HWT_SEGMENT_SIZE=512 "$hwt" coverage -j2 -v --lcov j2s.info \
		--drcov j2s.drcov r100k.data > j2s.out 2> j2s.err
	check
	grep -qE '[0-9]{2,} segments' j2s.err && cmp -s j1s.info j2s.info &&
		cmp -s j1s.drcov j2s.drcov || {
		fail "-j2 --lcov --drcov in small segments wrote other files ($(grep -m1 segments j2s.err))"
		diff j1s.info j2s.info | head -n 6 >&2
		break
	}
done
# The blocks the decoder folds are counted by it (hwt_blk_tally());
# given out one by one to be counted instead (HWT_NO_TALLY=1), the same
# files, here and in the small segments.
HWT_NO_TALLY=1 "$hwt" coverage --lcov j1n.info --drcov j1n.drcov \
	r100k.data > /dev/null 2>&1
HWT_NO_TALLY=1 HWT_SEGMENT_SIZE=512 "$hwt" coverage -j2 --lcov j2n.info \
	--drcov j2n.drcov r100k.data > /dev/null 2>&1
check
cmp -s j1s.info j1n.info && cmp -s j1s.drcov j1n.drcov &&
	cmp -s j1s.info j2n.info && cmp -s j1s.drcov j2n.drcov || {
	fail "the blocks given out count otherwise than the decoder's tally"
	diff j1s.info j1n.info | head -n 6 >&2
}
"$hwt" coverage r25.data | grep -E '^(edges|hash)' > map.plain
"$hwt" coverage --lcov x.info r25.data | grep -E '^(edges|hash)' > map.lcov
check
[ -s map.plain ] && cmp -s map.plain map.lcov ||
	fail "the map with --lcov is not the map without"

# Several streams' counts add up: a run with 10 turns, in the same file
# as its own stream? No: two files' counts, each decoded alone, and the
# union of a process that runs the program twice.
rec r10 10
"$hwt" coverage --lcov r10.info r10.data > /dev/null
lines r10.info "$tmp/cover.c" > r10.lines
printf '#!/bin/sh\n./cover 25\n./cover 10\n' > twice.sh
chmod +x twice.sh
rec twice "" ./twice.sh
"$hwt" coverage --lcov twice.info twice.data > /dev/null
lines twice.info "$tmp/cover.c" > twice.lines
check
join <(sort -k1,1 hwt.lines) <(sort -k1,1 r10.lines) |
	awk '{ print $1, $2 + $3 }' | sort -k1,1 | cmp -s - <(sort -k1,1 twice.lines) ||
	fail "two runs in one recording: not the sum of each run's counts"

# A source file named from a relative compile directory (as Debian's
# -fdebug-prefix-map builds are): the name from the build's root.
mkdir -p sub
gcc -O0 -g -fdebug-prefix-map="$tmp"=. -o sub/cover cover.c
rec rel 3 ./sub/cover
"$hwt" coverage --lcov rel.info rel.data > /dev/null
check
grep -qx 'SF:cover.c' rel.info || fail "relative compile directory: no SF:cover.c"

# Without DWARF: no lines of it, its instructions said to have none.
rec nod 3 ./nodwarf
run "coverage --lcov, no DWARF" "$hwt" coverage --lcov nod.info nod.data
check
! grep -q 'cover\.c' nod.info || fail "no DWARF: cover.c lines in the file"
check
grep -qE '^insn without a line: [1-9][0-9]* of ' "$tmp/out" ||
	fail "no DWARF: the instructions without a line not said"

# hwt flow --srcline: each instruction's line, as addr2line (binutils)
# reads the DWARF, for every instruction of the program that ran; -j2 and
# the walk of each instruction (HWT_WALK_EACH) print the same.
run "flow --srcline" "$hwt" flow --srcline r25.data
cp "$tmp/out" sl.flow
rt=$(awk '$2 == "main+0x0" { print $1; exit }' sl.flow)
link=$(nm cover | awk '$3 == "main" { print $1 }')
check
if [ -z "$rt" ] || [ -z "$link" ]; then
	fail "flow --srcline: no main in the flow ($rt) or the binary ($link)"
else
	awk -v bias=$((0x$rt - 0x$link)) '$1 ~ /^[0-9a-f]+$/ && length($1) == 16 {
		a = strtonum("0x" $1) - bias
		if (a >= 0 && a < 0x100000) printf "%x %s\n", a, $NF }' sl.flow |
		sort -u > sl.ours
	cut -d' ' -f1 sl.ours | addr2line -e cover |
		sed 's/ (discriminator [0-9]*)//; s|.*/||' > sl.theirs
	paste -d' ' sl.ours sl.theirs | awk '
		{ known = $3 !~ /^\?\?/ && $3 !~ /:\?$/; has = $2 ~ /:[0-9]+$/ }
		known || has { n++; if ($2 != $3) { bad++; if (bad < 5) print "    " $0 } }
		END { exit bad || n < 60 }' >&2 ||
		fail "flow --srcline: lines are not addr2line's"
fi
"$hwt" flow --srcline -j2 r25.data > sl.j2 2>/dev/null
HWT_WALK_EACH=1 "$hwt" flow --srcline r25.data > sl.each 2>/dev/null
check
cmp -s sl.flow sl.j2 && cmp -s sl.flow sl.each ||
	fail "flow --srcline: -j2 or HWT_WALK_EACH=1 prints another flow"

# clang's DWARF 5, without .debug_aranges, naming its unit's own file as
# file 0: the lines found by the units' ranges, the functions' files by
# the file table.
check
if ! clang -O0 -g -o clang.cover cover.c 2> clang.err; then
	fail "clang: cannot compile cover.c"
else
	rec clang 25 ./clang.cover
	"$hwt" coverage --lcov clang.info clang.data > /dev/null
	awk -v sf="SF:$tmp/cover.c" '$0 == sf { on = 1; next }
		/^end_of_record/ { on = 0 }
		on && /^FNDA:/ { split(substr($0, 6), a, ","); print a[2], a[1] }' \
		clang.info | sort > clang.funcs
	lines clang.info "$tmp/cover.c" > clang.lines
	check
	cmp -s gcov.funcs clang.funcs || fail "clang: function counts are not gcov's"
	check
	awk '$2 > 0 { n++ } END { exit n < 15 }' clang.lines ||
		fail "clang: fewer than 15 lines of cover.c ran"
fi
# drcov_bbs FILE: "MODULE-PATH BASE START SIZE" per block of a drcov file
# (version 2: the module table's text, then 8-byte little-endian blocks).
drcov_bbs() {
	python3 - "$1" <<'EOF'
import struct, sys
d = open(sys.argv[1], 'rb').read()
head, _, rest = d.partition(b'BB Table: ')
count, _, bbs = rest.partition(b' bbs\n')
mods = {}
for l in head.decode().splitlines():
    f = [x.strip() for x in l.split(',')]
    if len(f) == 7 and f[0].isdigit():
        mods[int(f[0])] = (f[6], int(f[1], 16))
assert len(bbs) == 8 * int(count), 'BB table size'
for k in range(0, len(bbs), 8):
    s, z, m = struct.unpack('<IHH', bbs[k:k + 8])
    print(mods[m][0], hex(mods[m][1]), s, z)
EOF
}

# ---- drcov: the bytes of the instructions that ran ---------------------
# The asm program: all of its code ran, from _start to done's syscall, as
# one block from the program's base (0x400000: its first PT_LOAD).
run "coverage --drcov, asm" "$hwt" coverage --drcov asm.drcov --elf loopg loop.pt
check
grep -qx 'drcov: 1 modules, 1 blocks' "$tmp/out" ||
	fail "asm drcov: $(grep '^drcov' "$tmp/out")"
last=$(objdump -d -w loopg | awk -F'\t' '$3 ~ /^syscall/ { sub(/:$/, "", $1); gsub(/ /, "", $1); print $1 }')
check
[ "$(drcov_bbs asm.drcov)" = "loopg 0x400000 4096 $((0x$last + 2 - 0x401000))" ] ||
	fail "asm drcov: $(drcov_bbs asm.drcov | head -n 3), not one block to syscall's end"

# The C program (PIE): the bytes of the instructions hwt flow says ran in
# it, sized by objdump, are the bytes of its module's blocks.
run "coverage --drcov" "$hwt" coverage --drcov r25.drcov r25.data
"$hwt" flow r25.data 2>/dev/null > r25.flow
rt=$(awk '$2 == "main+0x0" { print $1; exit }' r25.flow)
link=$(nm cover | awk '$3 == "main" { print $1 }')
hi=$(readelf -lW cover | awk '$1 == "LOAD" { e = strtonum($3) + strtonum($6); if (e > m) m = e } END { print m }')
check
if [ -z "$rt" ] || [ -z "$link" ] || [ -z "$hi" ]; then
	fail "drcov: no main in the flow ($rt) or the binary ($link)"
else
	bias=$((0x$rt - 0x$link))
	objdump -d -w cover | awk -F'\t' 'NF >= 3 && $1 ~ /^ *[0-9a-f]+:$/ {
		a = $1; sub(/:$/, "", a); gsub(/ /, "", a)
		print strtonum("0x" a), split($2, b, " ") }' > sizes
	awk -v bias="$bias" -v hi="$hi" '{ a = strtonum("0x" $1) - bias }
		$1 ~ /^[0-9a-f]+$/ && length($1) == 16 && a >= 0 && a < hi { print a }' r25.flow | sort -u |
		awk 'NR == FNR { size[$1] = $2; next }
		     { for (i = 0; i < size[$1]; i++) print $1 + i }' sizes - |
		sort -n -u > flow.bytes
	drcov_bbs r25.drcov | awk '$1 ~ /\/cover$/ {
		for (i = 0; i < $4; i++) print $3 + i }' | sort -n -u > drcov.bytes
	check
	[ "$(wc -l < flow.bytes)" -ge 200 ] && cmp -s flow.bytes drcov.bytes || {
		fail "drcov: the module's bytes are not those of the instructions that ran ($(wc -l < flow.bytes) and $(wc -l < drcov.bytes))"
		diff flow.bytes drcov.bytes | head -n 5 >&2
	}
	check
	drcov_bbs r25.drcov | awk '$1 ~ /\/cover$/ && $2 != "0x0" { bad = 1 }
		END { exit bad }' || fail "drcov: a PIE's base is not 0"
fi
run "--drcov without a file" "$hwt" coverage r25.data --drcov
check
[ "$rc" -ne 0 ] && grep -q -- '--drcov: missing argument' "$tmp/err" ||
	fail "--drcov without a file: exit $rc"

# Bad arguments: clear messages, non-zero exits.
run "--lcov without a file" "$hwt" coverage r25.data --lcov
check
[ "$rc" -ne 0 ] && grep -q -- '--lcov: missing argument' "$tmp/err" ||
	fail "--lcov without a file: exit $rc, $(head -c 200 "$tmp/err")"
run "--lcov, a file that cannot be written" "$hwt" coverage --lcov \
	"$tmp/no/such/dir/x.info" r25.data
check
[ "$rc" -ne 0 ] && grep -q 'cannot write' "$tmp/err" ||
	fail "--lcov unwritable: exit $rc, $(head -c 200 "$tmp/err")"
run "--lcov in hwt flow" "$hwt" flow --lcov x.info r25.data
check
[ "$rc" -ne 0 ] || fail "hwt flow --lcov: exit 0"

finish

# SPDX-License-Identifier: BSD-2-Clause
# Symbols beyond .symtab/.dynsym, as `hwt flow` prints them:
#  - PLT stubs are NAME@plt at the addresses objdump labels them (every
#    stub of a gcc-built program that calls into libc);
#  - a stripped library (libc) gets the local names of its separate debug
#    file (/usr/lib/debug/.build-id, Debian's libc6-dbg) if installed;
#  - a stripped program gets them from its debug file in --debug-dir DIR
#    (DIR/.build-id/ab/cdef.debug), and not without it;
#  - and its source lines (--srcline, coverage --lcov): built with -g and
#    build ids that a path made of 20 zero-padded bytes would miss (20
#    bytes ending in zeros, md5's 16), the lines are those of the program
#    before it was stripped, and there are none without --debug-dir.
# Each address is given to the decoder as a trace that enables tracing
# there (ptgen), and the first instruction line must name it.
#
#   bash tests/cli/symbols.sh path/to/hwt BUILD_DIR
. "$(dirname "$0")/lib.bash" symbols "$@"
ptgen=$build/ptgen
wants gcc objdump nm objcopy strip readelf addr2line

# first_line ELF ADDR NAME [OPTION...]: the first instruction line of a
# decode that starts at ADDR in ELF (mapped at its own addresses), with
# hwt flow's OPTIONs.
first_line() {
	printf 'psb\nmode.exec 64\npsbend\ntip.pge %s\ntip.pgd -\n' "$2" |
		"$ptgen" "$tmp/t.pt" || return 1
	"$hwt" flow "${@:4}" --elf "$1" "$tmp/t.pt" 2>/dev/null |
		awk '/^[0-9a-f]+  / { print; exit }'
}

# expect ELF ADDR NAME [OPTION...]: the line names ADDR as NAME+0x0.
expect() {
	local line
	check
	line=$(first_line "$@")
	case $line in
	*"  $3+0x0") ;;
	*) fail "$2 in $1: want $3+0x0, got '$line'" ;;
	esac
}

cat >"$tmp/prog.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	char *s = malloc(64);

	snprintf(s, 64, "%s", argv[0]);
	puts(s);
	printf("%zu %d\n", strlen(s), strcmp(s, argc > 1 ? argv[1] : ""));
	free(s);
	return 0;
}

static int __attribute__((noinline, used)) local_helper(int x)
{
	return x * 3;
}
EOF
gcc -O1 -o "$tmp/prog" "$tmp/prog.c" || exit 1

# objdump's labels of the stubs: "0000000000001030 <puts@plt>:".
objdump -d "$tmp/prog" | awk '/^[0-9a-f]+ <[^>+]+@plt>:$/ {
	gsub(/[<>:]/, "", $2); print "0x" $1, $2 }' >"$tmp/plt"
n=$(wc -l <"$tmp/plt")
if [ "$n" -lt 5 ]; then
	fail "objdump lists only $n PLT stubs in prog"
fi
while read -r addr name; do
	expect "$tmp/prog" "$addr" "$name"
done <"$tmp/plt"

# libc: stripped; its local symbols are in libc6-dbg's debug file.
libc=$(gcc -print-file-name=libc.so.6)
libc=$(readlink -f "$libc")
id=$(readelf -n "$libc" 2>/dev/null | awk '/Build ID:/ { print $3; exit }')
dbg=/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
if [ -z "$id" ] || [ ! -f "$dbg" ]; then
	echo "symbols.sh: no debug file for $libc (libc6-dbg); that part skipped"
else
	for sym in __strlen_avx2 __memcpy_avx_unaligned_erms __libc_start_call_main; do
		addr=$(nm "$dbg" | awk -v s="$sym" '$3 == s { print "0x" $1; exit }')
		if [ -z "$addr" ]; then
			fail "nm finds no $sym in $dbg"
			continue
		fi
		expect "$libc" "$addr" "$sym"
	done
	# Not in the stripped file itself: the names come from the debug file.
	check
	if nm "$libc" 2>/dev/null | grep -q ' __strlen_avx2$'; then
		fail "$libc has __strlen_avx2 itself: the test proves nothing"
	fi
fi

# prog stripped, its debug file where --debug-dir says.
objcopy --only-keep-debug "$tmp/prog" "$tmp/prog.debug" || exit 1
strip -s -o "$tmp/prog.stripped" "$tmp/prog" || exit 1
id=$(readelf -n "$tmp/prog" | awk '/Build ID:/ { print $3; exit }')
check
if [ -z "$id" ]; then
	fail "gcc gave prog no build id"
else
	mkdir -p "$tmp/dbg/.build-id/${id:0:2}"
	cp "$tmp/prog.debug" "$tmp/dbg/.build-id/${id:0:2}/${id:2}.debug"
	for sym in main local_helper; do
		addr=$(nm "$tmp/prog" | awk -v s="$sym" '$3 == s { print "0x" $1; exit }')
		check
		if [ -z "$addr" ]; then
			fail "nm finds no $sym in prog"
			continue
		fi
		if nm "$tmp/prog.stripped" 2>/dev/null | grep -q " $sym\$"; then
			fail "the stripped prog has $sym: the test proves nothing"
		fi
		expect "$tmp/prog.stripped" "$addr" "$sym" --debug-dir "$tmp/dbg"
		# Without it, the default directory has no such build id.
		check
		line=$("$hwt" flow --elf "$tmp/prog.stripped" "$tmp/t.pt" 2>&1 |
			awk '/^[0-9a-f]+/ { print; exit }')
		case $line in
		*"$sym"*) fail "$sym named without --debug-dir: '$line'" ;;
		"${addr#0x}") ;;
		*) fail "want the bare address $addr without --debug-dir, got '$line'" ;;
		esac
	done
fi

# Source lines from the debug file (hwt_an_lines_set_debug_dir()).
# srcline ELF ADDR [OPTION...]: the FILE:LINE of the first instruction
# line, or nothing.
srcline() {
	first_line "$1" "$2" x --srcline "${@:3}" |
		awk '{ for (i = 1; i <= NF; i++) if ($i ~ /\.c:[0-9]+$/) print $i }'
}
for bid in 0x0102030405060708090a0b0c0d0e0f1011120000 md5; do
	gcc -O1 -g -Wl,--build-id=$bid -o "$tmp/progg" "$tmp/prog.c" || exit 1
	id=$(readelf -n "$tmp/progg" | awk '/Build ID:/ { print $3; exit }')
	check
	case $bid:${#id} in
	0x*:40 | md5:32) ;;
	*) fail "build id $bid: readelf gives '$id'"; continue ;;
	esac
	rm -rf "$tmp/dbgg"
	mkdir -p "$tmp/dbgg/.build-id/${id:0:2}"
	objcopy --only-keep-debug "$tmp/progg" \
		"$tmp/dbgg/.build-id/${id:0:2}/${id:2}.debug" || exit 1
	strip -s -o "$tmp/progg.stripped" "$tmp/progg" || exit 1
	for sym in main local_helper; do
		addr=$(nm "$tmp/progg" | awk -v s="$sym" '$3 == s { print "0x" $1; exit }')
		want=$(addr2line -e "$tmp/progg" "$addr")
		want=${want##*/}
		whole=$(srcline "$tmp/progg" "$addr")
		got=$(srcline "$tmp/progg.stripped" "$addr" --debug-dir "$tmp/dbgg")
		none=$(srcline "$tmp/progg.stripped" "$addr")
		check
		case $want in
		prog.c:[0-9]*) ;;
		*) fail "addr2line gives '$want' for $sym"; continue ;;
		esac
		[ "$whole" = "$want" ] ||
			fail "$sym in the unstripped prog: want $want, got '$whole'"
		[ "$got" = "$want" ] ||
			fail "$sym, build id $bid, --debug-dir: want $want, got '$got'"
		[ -z "$none" ] ||
			fail "$sym: a source line without --debug-dir: '$none'"
	done
	# coverage --lcov: the same lines, hit.
	first_line "$tmp/progg" "$(nm "$tmp/progg" |
		awk '$3 == "local_helper" { print "0x" $1; exit }')" x >/dev/null
	check
	"$hwt" coverage --lcov "$tmp/a.info" --elf "$tmp/progg" "$tmp/t.pt" \
		>/dev/null 2>&1 &&
	"$hwt" coverage --lcov "$tmp/b.info" --debug-dir "$tmp/dbgg" \
		--elf "$tmp/progg.stripped" "$tmp/t.pt" >/dev/null 2>&1 &&
	"$hwt" coverage --lcov "$tmp/c.info" \
		--elf "$tmp/progg.stripped" "$tmp/t.pt" >/dev/null 2>&1 ||
		fail "hwt coverage --lcov failed"
	grep -q '^DA:' "$tmp/a.info" ||
		fail "coverage --lcov of the unstripped prog: no lines"
	cmp -s "$tmp/a.info" "$tmp/b.info" ||
		fail "coverage --lcov with --debug-dir (build id $bid) differs from the unstripped prog's"
	! grep -q '^DA:' "$tmp/c.info" ||
		fail "coverage --lcov: lines without --debug-dir"
done

finish

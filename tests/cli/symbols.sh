# SPDX-License-Identifier: BSD-2-Clause
# Symbols beyond .symtab/.dynsym, as `hwt flow` prints them:
#  - PLT stubs are NAME@plt at the addresses objdump labels them (every
#    stub of a gcc-built program that calls into libc);
#  - a stripped library (libc) gets the local names of its separate debug
#    file (/usr/lib/debug/.build-id, Debian's libc6-dbg) if installed;
#  - a stripped program gets them from its debug file in --debug-dir DIR
#    (DIR/.build-id/ab/cdef.debug), and not without it.
# Each address is given to the decoder as a trace that enables tracing
# there (ptgen), and the first instruction line must name it.
#
#   bash tests/cli/symbols.sh path/to/hwt BUILD_DIR
. "$(dirname "$0")/lib.bash" symbols "$@"
ptgen=$build/ptgen
wants gcc objdump nm objcopy strip readelf

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

finish

# SPDX-License-Identifier: BSD-2-Clause
# Sourced by tests/cli/perfdata_flow.sh and bench scripts:
#
#   perfdata_loop DIR NAME ITER BUILD_DIR [deep]
#
# writes
#   DIR/NAME     tests/data/perfdata_loop.asm at ITER iterations (an ELF at
#                0x401000: calls, returns, indirect calls and jumps, loops)
#   DIR/NAME.pt  its trace, branch by branch from perfdata_loop.awk through
#                ptgen (about 10 bytes an iteration, a PSB every 81 bytes;
#                with deep, a PSB in each call of f1 from f3 instead)
#   DIR/NAME.b   the same program with other symbol names (objcopy), for a
#                second process running the same code
# Returns non-zero if a step failed. Needs yasm, ld, nm, objcopy.
perfdata_loop() {
	local dir=$1 name=$2 iter=$3 build=$4 deep=${5:+1} data syms names="" s

	data=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
	yasm -f elf64 -DITER="$iter" "$data/perfdata_loop.asm" \
		-o "$dir/$name.o" &&
		ld -Ttext=0x401000 -e _start -o "$dir/$name" "$dir/$name.o" ||
		return 1
	# The symbol addresses the trace description needs, as 0x... numbers.
	syms=$(nm "$dir/$name" | awk '$3 ~ /^(top|f0|f1|f1_loop|f2|f2b|f3)$/ {
		a = $1; sub(/^0+/, "", a); printf "-v %s=0x%s ", $3, a }')
	# Where f3's call of f1 and top's indirect call return to.
	syms="$syms $(objdump -d "$dir/$name" | awk '
		/^[0-9a-f]+ <(top|f3)>:$/ { fn = $2; want = 1; next }
		want && /\tcall/ { want = 2; next }
		want == 2 { a = $1; sub(/:$/, "", a)
			    printf "-v %sret=0x%s ", fn == "<top>:" ? "top" : "f3", a
			    want = 0 }')"
	[ -n "$deep" ] && syms="$syms -v deep=1"
	# shellcheck disable=SC2086
	awk -v iter="$iter" -v tsc=32075810494824 $syms \
		-f "$data/perfdata_loop.awk" >"$dir/$name.ptdesc" &&
		"$build/ptgen" "$dir/$name.pt" <"$dir/$name.ptdesc" || return 1
	for s in top f0 f1 f1_loop f2 f2b f3 odd 'done' _start; do
		names="$names --redefine-sym $s=b$s"
	done
	# shellcheck disable=SC2086
	objcopy $names "$dir/$name" "$dir/$name.b"
}

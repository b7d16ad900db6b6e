# SPDX-License-Identifier: BSD-2-Clause
# Golden tests of `hwt ptxed`, `hwt flow`, `hwt calls` and `hwt coverage`
# on a tiny program (assembled with yasm here) and traces written by
# ptgen (tests/tools/ptgen.c, hwt's own packet encoder): instruction by
# instruction, with and without return compression, with filtering (a
# disable/enable gap), an overflow and a corrupted byte in the middle, two
# damaged PSB+s in a row, and code that is not in the image. -j N must
# print what -j1 prints, also where a cut falls on a PSB an error breaks.
#
#   bash tests/cli/flow.sh path/to/hwt BUILD_DIR
. "$(dirname "$0")/lib.bash" flow "$@"
ptgen=$build/ptgen
wants yasm
built "$ptgen"

# The program: a loop calling a function twice, then two indirect jumps.
#   1000 mov ecx, 2      1005 call f     100a dec ecx    100c jnz 1005
#   100e jmp rax         1020 f: nop     1021 ret        1030 nop
#   1031 jmp rbx
cat >"$tmp/prog.asm" <<'EOF'
bits 64
org 0x1000
start:
	mov ecx, 2
again:
	call func
	dec ecx
	jnz again
	jmp rax
	times 0x20 - ($ - $$) db 0xcc
func:
	nop
	ret
	times 0x30 - ($ - $$) db 0xcc
done:
	nop
	jmp rbx
EOF
yasm -f bin -o "$tmp/prog.bin" "$tmp/prog.asm" || exit 1
raw="$tmp/prog.bin:0x1000"

# Compressed returns: the ret's TNT bit is taken.
ptgen_trace ret psb psbend "mode.exec 64" "tip.pge 0x1000" "tnt !!!." \
	"tip 0x1030" "tip.pgd -"
# Uncompressed returns: a TIP each.
ptgen_trace tipret psb psbend "mode.exec 64" "tip.pge 0x1000" "tip 0x100a" \
	"tnt !" "tip 0x100a" "tnt ." "tip 0x1030" "tip.pgd -"
# Filtering: f is outside the traced range.
ptgen_trace filter psb psbend "mode.exec 64" "tip.pge 0x1000" "tip.pgd 0x1020" \
	"tip.pge 0x100a" "tnt ." "tip 0x1030" "tip.pgd -"
# An overflow after the first return.
ptgen_trace ovf psb psbend "mode.exec 64" "tip.pge 0x1000" "tnt !!" ovf \
	"fup 0x100a" "tnt ." "tip 0x1030" "tip.pgd -"
# A corrupted byte; decoding resumes at the next PSB.
ptgen_trace corrupt psb psbend "mode.exec 64" "tip.pge 0x1000" "tnt !!" \
	"raw 0xd9" "tnt ..." psb "mode.exec 64" "fup 0x100a" psbend "tnt ." \
	"tip 0x1030" "tip.pgd -"
# Two damaged PSB+s in a row: the second one is where the decoder
# resynchronises after the first; it goes on to the PSB after that.
ptgen_trace badpsbs psb psbend "mode.exec 64" "tip.pge 0x1000" "tnt !!" \
	psb "raw 0xd9" psbend psb "raw 0xd9" psbend psb "mode.exec 64" \
	"fup 0x100a" psbend "tnt ." "tip 0x1030" "tip.pgd -"

golden "ptxed, compressed returns" "$hwt" ptxed --raw "$raw" \
	--pt "$tmp/ret.pt" --no-inst <<'EOF'
[enabled]
[exec mode: 64-bit]
0000000000001000
0000000000001005
0000000000001020
0000000000001021
000000000000100a
000000000000100c
0000000000001005
0000000000001020
0000000000001021
000000000000100a
000000000000100c
000000000000100e
0000000000001030
0000000000001031
[disabled]
EOF

golden "ptxed, uncompressed returns, --insn-decoder --stat" "$hwt" ptxed \
	--insn-decoder --raw "$raw" --pt "$tmp/tipret.pt" --no-inst --stat <<'EOF'
[enabled]
[exec mode: 64-bit]
0000000000001000
0000000000001005
0000000000001020
0000000000001021
000000000000100a
000000000000100c
0000000000001005
0000000000001020
0000000000001021
000000000000100a
000000000000100c
000000000000100e
0000000000001030
0000000000001031
[disabled]
insn: 14.
EOF

golden "ptxed, disassembly" "$hwt" ptxed --raw "$raw" --pt "$tmp/filter.pt" <<'EOF'
[enabled]
[exec mode: 64-bit]
0000000000001000  mov ecx, 0x02
0000000000001005  call 0x0000000000001020
[disabled]
[enabled]
000000000000100a  dec ecx
000000000000100c  jnz 0x0000000000001005
000000000000100e  jmp rax
0000000000001030  nop
0000000000001031  jmp rbx
[disabled]
EOF

golden "ptxed, overflow" "$hwt" ptxed --raw "$raw" --pt "$tmp/ovf.pt" \
	--no-inst --event:ip <<'EOF'
[enabled, ip: 0000000000001000]
[exec mode: 64-bit, ip: 0000000000001000]
0000000000001000
0000000000001005
0000000000001020
0000000000001021
000000000000100a
000000000000100c
[overflow, ip: 000000000000100a]
000000000000100a
000000000000100c
000000000000100e
0000000000001030
0000000000001031
[disabled]
EOF

golden "ptxed, corrupted byte" "$hwt" ptxed --raw "$raw" \
	--pt "$tmp/corrupt.pt" --no-inst <<'EOF'
[enabled]
[exec mode: 64-bit]
0000000000001000
0000000000001005
0000000000001020
0000000000001021
000000000000100a
000000000000100c
[1c, 100c: error: unknown opcode]
000000000000100a
000000000000100c
000000000000100e
0000000000001030
0000000000001031
[disabled]
EOF

golden "flow --branches" "$hwt" flow --branches --raw "$raw" \
	"$tmp/ret.pt" <<'EOF'
0x1005 0x1020
0x1021 0x100a
0x100c 0x1005
0x1005 0x1020
0x1021 0x100a
0x100e 0x1030
EOF

golden "flow --branches, uncompressed returns" "$hwt" flow --branches \
	--raw "$raw" "$tmp/tipret.pt" <<'EOF'
0x1005 0x1020
0x1021 0x100a
0x100c 0x1005
0x1005 0x1020
0x1021 0x100a
0x100e 0x1030
EOF

# The call that leaves the filter is a branch to where the disable says
# (perf script --itrace=b lists it so too).
golden "flow --branches, filtered" "$hwt" flow --branches --raw "$raw" \
	"$tmp/filter.pt" <<'EOF'
0x1005 0x1020
0x100e 0x1030
EOF

golden "flow, corrupted byte" "$hwt" flow --disasm --raw "$raw" \
	"$tmp/corrupt.pt" <<'EOF'
[enabled, ip: 0000000000001000]
[exec mode: 64-bit, ip: 0000000000001000]
0000000000001000  mov ecx, 0x02
0000000000001005  call 0x0000000000001020
0000000000001020  nop
0000000000001021  ret
000000000000100a  dec ecx
000000000000100c  jnz 0x0000000000001005
[error at offset 0x1c, ip 0x1005: unknown packet opcode]
000000000000100a  dec ecx
000000000000100c  jnz 0x0000000000001005
000000000000100e  jmp rax
0000000000001030  nop
0000000000001031  jmp rbx
[disabled]
EOF

golden "flow, two damaged PSB+s in a row" "$hwt" flow --raw "$raw" \
	"$tmp/badpsbs.pt" <<'EOF'
[enabled, ip: 0000000000001000]
[exec mode: 64-bit, ip: 0000000000001000]
0000000000001000
0000000000001005
0000000000001020
0000000000001021
000000000000100a
000000000000100c
[error at offset 0x2c, ip 0x1005: unknown packet opcode]
[error at offset 0x3f, ip 0x0: unknown packet opcode]
000000000000100a
000000000000100c
000000000000100e
0000000000001030
0000000000001031
[disabled]
EOF

golden "flow --blocks, overflow" "$hwt" flow --blocks --raw "$raw" \
	"$tmp/ovf.pt" <<'EOF'
[enabled, ip: 0000000000001000]
[exec mode: 64-bit, ip: 0000000000001000]
0000000000001000 0000000000001021     4
000000000000100a 000000000000100c     2
[overflow, ip: 000000000000100a]
000000000000100a 000000000000100c     2
000000000000100e 000000000000100e     1
0000000000001030 0000000000001031     2
[disabled]
EOF

golden "flow --stat" "$hwt" flow --stat --raw "$raw" "$tmp/ret.pt" <<'EOF'
insn: 14
blocks: 6
events: 4
errors: 0
EOF

golden "calls" "$hwt" calls --raw "$raw" "$tmp/ret.pt" <<'EOF'
1	?? 0x1000	inst 1,2
2	  ?? 0x1020	inst 3,4
3	?? 0x100a	inst 5,7
4	  ?? 0x1020	inst 8,9
5	?? 0x100a	inst 10,14
EOF

golden "coverage" "$hwt" coverage -o "$tmp/map" --raw "$raw" \
	"$tmp/ret.pt" <<'EOF'
edges: 6
hash: f578e2c4a9c01ddd
blocks: 6
insn: 14
errors: 0
EOF
check
if [ "$(stat -c %s "$tmp/map" 2>/dev/null)" != 65536 ]; then
	fail "coverage -o: no 64 KiB bitmap"
fi

# Code that is not in the image: the error names the IP; decoding goes on
# at the next PSB.
ptgen_trace nomap psb psbend "mode.exec 64" "tip.pge 0x1000" "tnt !!!." \
	"tip 0x5000" "tnt !!" pad pad pad pad pad pad pad pad pad pad pad pad \
	pad pad pad pad psb "mode.exec 64" "fup 0x1030" psbend "tip.pgd -"
# Where the decoder stands at the error is its own business: mask it.
golden "flow, missing image" sh -c '"$0" flow --no-events --raw "$1" "$2" |
	sed "s/offset 0x[0-9a-f]*/offset X/"' "$hwt" "$raw" \
	"$tmp/nomap.pt" <<'EOF'
0000000000001000
0000000000001005
0000000000001020
0000000000001021
000000000000100a
000000000000100c
0000000000001005
0000000000001020
0000000000001021
000000000000100a
000000000000100c
000000000000100e
[error at offset X, ip 0x5000: no memory mapped at this address]
0000000000001030
0000000000001031
EOF

# -j: a long trace with a PSB every 97 loop iterations, overflows and
# corrupted bytes; every output mode must match the single-threaded one.
cat >"$tmp/loop.asm" <<'EOF'
bits 64
org 0x1000
top:
	dec ecx
	jnz top
	call f
	jmp short top
	times 0x20 - ($ - $$) db 0xcc
f:
	nop
	ret
EOF
yasm -f bin -o "$tmp/loop.bin" "$tmp/loop.asm" || exit 1
awk 'BEGIN {
	print "psb"; print "tsc 0x1000"; print "mode.exec 64"; print "psbend"
	print "tip.pge 0x1000"
	for (i = 0; i < 60000; i++) {
		if (i && i % 97 == 0) {
			print "psb"; printf "tsc %d\n", 4096 + i * 100
			print "mode.exec 64"; print "fup 0x1000"; print "psbend"
		}
		if (i % 5003 == 2500) print "raw 0xd9 0x02 0x03"
		else if (i % 7919 == 4000) { print "ovf"; print "fup 0x1000" }
		print "tnt !!!.!"
	}
	print "tip.pgd -"
}' | "$ptgen" "$tmp/long.pt" || exit 1
for mode in --insn --blocks --branches --stat; do
	"$hwt" flow $mode --raw "$tmp/loop.bin:0x1000" "$tmp/long.pt" \
		>"$tmp/j1" 2>&1
	for j in 2 3 7; do
		check
		"$hwt" flow $mode -j$j --raw "$tmp/loop.bin:0x1000" \
			"$tmp/long.pt" >"$tmp/jn" 2>&1
		if ! cmp -s "$tmp/j1" "$tmp/jn"; then
			fail "flow $mode -j$j differs from -j1"
			diff "$tmp/j1" "$tmp/jn" | head -n 10 >&2
		fi
	done
done
"$hwt" coverage --raw "$tmp/loop.bin:0x1000" "$tmp/long.pt" >"$tmp/j1"
"$hwt" coverage -j3 --raw "$tmp/loop.bin:0x1000" "$tmp/long.pt" >"$tmp/jn"
check
cmp -s "$tmp/j1" "$tmp/jn" || {
	fail "coverage -j3 differs from -j1"
}
# The long trace has errors and overflows, but no instruction is lost.
"$hwt" ptxed --raw "$tmp/loop.bin:0x1000" --pt "$tmp/long.pt" --quiet \
	--stat:insn >"$tmp/px"
check
want=$(grep '^insn:' "$tmp/j1")
got=$(sed -n 's/^insn: \([0-9]*\)\.$/insn: \1/p' "$tmp/px")
[ "$want" = "$got" ] || {
	fail "ptxed --stat:insn '$got' != coverage '$want'"
}

# A trace of loop.bin: tracing on at 0x1000, 3000 iterations (each a TNT
# !!!.!, after awk $3), every 97th after awk $2, which writes what comes
# there: psbplus(i, MODE) is a PSB+ with a TSC, MODE.Exec MODE (none if
# ""), a FUP to 0x1000 (where an iteration starts); p is the period.
loop_trace() {
	awk '
function psbplus(i, mode) {
	print "psb"; printf "tsc %d\n", 4096 + i * 100
	if (mode != "")
		print "mode.exec " mode
	print "fup 0x1000"; print "psbend"
}
BEGIN {
	print "psb"; print "tsc 0x1000"; print "mode.exec 64"; print "psbend"
	print "tip.pge 0x1000"
	for (i = 0; i < 3000; i++) {
		p = int(i / 97)
		if (i && i % 97 == 0) {
			'"$2"'
		}
		'"$3"'
		print "tnt !!!.!"
	}
	print "tip.pgd -"
}' | "$ptgen" "$1"
}

# An OVF right before a PSB, tracing off since the PSB before: the OVF's
# IP comes from the PSB+, and one decoder reports the overflow after it,
# so no segment may start at that PSB (fuzz_cli_perfdata found -j2
# dropping the [overflow]). Segments of 64 bytes make each PSB with an
# IP a cut.
loop_trace "$tmp/ovfpsb.pt" '
	if (i % 3 == 0) {
		print "fup 0x1000"; print "tip.pgd -"
		print "psb"; print "mode.exec 64"; print "psbend"
		print "ovf"
	}
	psbplus(i, 64)' '' || exit 1
for mode in --insn --blocks; do
	"$hwt" flow $mode --raw "$tmp/loop.bin:0x1000" "$tmp/ovfpsb.pt" \
		>"$tmp/j1" 2>&1
	for j in 2 3; do
		check
		HWT_SEGMENT_SIZE=64 "$hwt" flow $mode -j$j \
			--raw "$tmp/loop.bin:0x1000" "$tmp/ovfpsb.pt" \
			>"$tmp/jn" 2>&1
		if ! cmp -s "$tmp/j1" "$tmp/jn"; then
			fail "flow $mode -j$j, OVF before a PSB: differs from -j1"
			diff "$tmp/j1" "$tmp/jn" | head -n 6 >&2
		fi
	done
done
check
[ "$(grep -c '^\[overflow\]' "$tmp/j1")" -ge 5 ] ||
	fail "the OVF-before-PSB trace has no overflows to lose"

# What a PSB+ need not say again: the exec mode and the TSX state. One
# decoder keeps what it had (a transaction going on over a PSB); a segment
# starting there does not (fuzz_cli_perfdata found the '?' of speculative
# instructions lost at -j2), and decodes again from what the one before
# had. Here transactions span the PSBs of every fourth period, the PSB+s
# of others have no MODE.Exec, and a late one says 32-bit code: one
# decoder, with the 64-bit mode carried, takes that as an error.
loop_trace "$tmp/carry.pt" '
	psbplus(i, p == 26 ? 32 : p % 4 == 1 ? "" : 64)' '
	if (p % 4 == 2 && i % 97 == 80) {
		print "mode.tsx begin"; print "fup 0x1000"
	}
	if (p % 4 == 3 && i % 97 == 20) {
		print "mode.tsx commit"; print "fup 0x1000"
	}' || exit 1
# A PSB that starts in the last byte of the packet before: a TIP.PGE
# (tracing off since a PGD and a PSB+ without IP) to 0x20000001000, whose
# last byte is 0x02, then 0x82 0x02 ...: one decoder reads on from the
# PGE (enabled where no code is, a TNT, an error) and resynchronises at
# that PSB, so no segment may start there (fuzz_cli_perfdata found -j2
# losing the "[enabled]" and the error).
loop_trace "$tmp/inpsb.pt" '
	if (i % 3 == 0) {
		print "tip.pgd -"
		print "psb"; print "mode.exec 64"; print "psbend"
		print "tip.pge/3 0x20000001000"
		printf "raw"
		for (k = 0; k < 15; k++)
			printf " 0x%s", k % 2 ? "02" : "82"
		printf "\n"
		printf "tsc %d\n", 4096 + i * 100
		print "mode.exec 64"; print "fup 0x1000"; print "psbend"
	} else
		psbplus(i, 64)' '' || exit 1
# Tracing off at a PSB+ (no FUP), a TIP.PGE, then the next PSB right
# after: the query decoder reads on into that PSB+ before it reports the
# status updates of the one before, so a segment ending at it must tell
# its PSB+ from the next one's by the PSB they belong to, not by where
# the decoder is (fuzz_cli_perfdata found -j2 stopping early there). Some
# PGEs go to where no code is: an error, then one decoder resynchronises
# past the next PSB.
loop_trace "$tmp/pgepsb.pt" '
	if (i % 3 == 0) {
		print "tip.pgd -"
		print "psb"; print "mode.exec 64"; print "psbend"
		printf "tip.pge %s\n", i % 2 ? "0x20000001000" : "0x1000"
	}
	psbplus(i, 64)' '' || exit 1
# A return compressed after a PSB against a call before it: the
# processor empties its call stack at a PSB, so that a decoder can start
# at any (perf's decoder empties its own there too), and so does hwt
# flow's. One decoder kept it (as libipt does) and followed these
# returns where a segment starting at the PSB could not.
loop_trace "$tmp/retpsb.pt" '
	if (i % 3 == 0) {
		print "tnt !!!."
		print "psb"; printf "tsc %d\n", 4096 + i * 100
		print "mode.exec 64"; print "fup 0x1020"; print "psbend"
		print "tnt !"
	} else
		psbplus(i, 64)' '' || exit 1
for t in carry inpsb pgepsb retpsb; do
	for mode in --insn --blocks --stat; do
		"$hwt" flow $mode --raw "$tmp/loop.bin:0x1000" "$tmp/$t.pt" \
			>"$tmp/j1" 2>&1
		for j in 2 3; do
			check
			HWT_SEGMENT_SIZE=64 "$hwt" flow $mode -j$j -v \
				--raw "$tmp/loop.bin:0x1000" "$tmp/$t.pt" \
				>"$tmp/jn" 2>"$tmp/jn.err"
			grep -v "^flow: " "$tmp/jn.err" >>"$tmp/jn"
			if ! cmp -s "$tmp/j1" "$tmp/jn"; then
				fail "flow $mode -j$j, $t.pt: differs from -j1"
				diff "$tmp/j1" "$tmp/jn" | head -n 6 >&2
			fi
		done
		# (What there is to lose.)
		if [ $t = carry ] && [ $mode = --insn ]; then
			check
			[ "$(grep -c '^? ' "$tmp/j1")" -ge 500 ] ||
				fail "carry.pt: no instructions in transactions"
			check
			[ "$(grep -c 'error' "$tmp/j1")" -eq 1 ] ||
				fail "carry.pt: not one error (mode.exec 32)"
			check
			[ "$(grep -c "TSX state: decoded again" \
				"$tmp/jn.err")" -ge 10 ] ||
				fail "carry.pt: no segment decoded again"
		elif [ $t = retpsb ] && [ $mode = --insn ]; then
			check
			[ "$(grep -c 'ip 0x1021: trace does not match the code' \
				"$tmp/j1")" -ge 8 ] ||
				fail "retpsb.pt: returns after a PSB followed"
		elif [ $t = inpsb ] && [ $mode = --insn ]; then
			check
			[ "$(grep -c '^\[enabled, ip: 0*20000001000\]' \
				"$tmp/j1")" -ge 8 ] ||
				fail "inpsb.pt: no PGEs before PSBs"
		fi
	done
done

# Damage at PSBs: a FUP with no TIP right before one, which the PSB
# breaks (the error is at the PSB), and PSB+s whose IP is not where the
# flow is. In 2 KiB segments some cut falls on such a PSB: the segment
# before cannot know where one thread goes on after the error, so the
# rest decodes on one thread (-v says so), and the output is still -j1's.
awk 'BEGIN {
	print "psb"; print "tsc 0x1000"; print "mode.exec 64"; print "psbend"
	print "tip.pge 0x1000"
	for (i = 0; i < 60000; i++) {
		if (i && i % 97 == 0) {
			if (i % 1067 == 0) print "fup 0x1005"
			print "psb"; printf "tsc %d\n", 4096 + i * 100
			print "mode.exec 64"
			print (i % 1358 ? "fup 0x1000" : "fup 0x2000")
			print "psbend"
		}
		print "tnt !!!.!"
	}
	print "tip.pgd -"
}' | "$ptgen" "$tmp/long2.pt" || exit 1
for mode in --insn --blocks --stat; do
	"$hwt" flow $mode --raw "$tmp/loop.bin:0x1000" "$tmp/long2.pt" \
		>"$tmp/d1" 2>&1
	HWT_SEGMENT_SIZE=2048 "$hwt" flow $mode -j2 -v \
		--raw "$tmp/loop.bin:0x1000" "$tmp/long2.pt" >"$tmp/dn" \
		2>"$tmp/dn.err"
	check
	cmp -s "$tmp/d1" "$tmp/dn" || {
		fail "flow $mode -j2, errors at cuts: differs from -j1"
		diff "$tmp/d1" "$tmp/dn" | head -n 10 >&2
	}
	check
	grep -q "ends in an error at the next's PSB: the rest on one" \
		"$tmp/dn.err" || fail "flow $mode -j2 -v: no error at a cut"
done

# Time across cuts. CYC packets count cycles, made time by a calibration
# (cycles per TSC tick, from MTC periods) that one decoder carries over
# every PSB; a decoder starting at a cut has none. Each -j segment starts
# with an estimate (the packets from two PSBs back), checked against what
# the decoder before the cut had there; where they differ, the segment is
# decoded again from the latter (the rest on one thread if the next one
# misses too). And an instruction's
# time must not depend on where a decoder's block cache ended its blocks.
# In 2 KiB segments, -j prints what -j1 prints: with an MTC every third
# TNT (the estimates hold), every 301st (they do not), and with MTCs but
# no CYCs, where the calibration's period goes back to the first MTC
# (--no-cyc says that it does not matter).
cyc_trace() {
	awk -v every="$1" -v cyc="${3:-1}" 'BEGIN {
		print "psb"; print "tsc 0x100000"; print "tma 0x10 0x4"
		print "cbr 20"; print "mode.exec 64"; print "psbend"
		print "tip.pge 0x1000"
		for (i = 0; i < 6000; i++) {
			if (i && i % 97 == 0) {
				print "psb"; printf "tsc %d\n", 1048576 + i * 1000
				printf "tma %d 0x4\n", (16 + i * 4) % 65536
				print "cbr 20"; print "mode.exec 64"
				print "fup 0x1000"; print "psbend"
			}
			if (cyc) print "cyc " (30 + (i * 7) % 50)
			print "tnt !!!.!"
			if (i % every == 0) printf "mtc %d\n", (m++) % 256
		}
		print "tip.pgd -"
	}' | "$ptgen" "$tmp/$2.pt" || exit 1
}
cyc_trace 3 cyc
cyc_trace 301 cycsparse
cyc_trace 3 mtconly 0
cp "$tmp/mtconly.pt" "$tmp/mtcnocyc.pt"
for t in cyc cycsparse mtconly mtcnocyc; do
	tcfg="--cpuid-0x15.eax 1 --cpuid-0x15.ebx 2 --mtc-freq 0"
	[ $t = mtcnocyc ] && tcfg="$tcfg --no-cyc"
	for cmd in "flow --insn --time" "calls --time"; do
		# shellcheck disable=SC2086
		"$hwt" $cmd $tcfg --raw "$tmp/loop.bin:0x1000" "$tmp/$t.pt" \
			>"$tmp/t1" 2>&1
		[ "$cmd" = "calls --time" ] || cp "$tmp/t1" "$tmp/t1.insn"
		for j in 2 3 7; do
			check
			# shellcheck disable=SC2086
			HWT_SEGMENT_SIZE=2048 "$hwt" $cmd -j$j -v $tcfg \
				--raw "$tmp/loop.bin:0x1000" "$tmp/$t.pt" \
				>"$tmp/tn" 2>"$tmp/tn.err"
			if ! cmp -s "$tmp/t1" "$tmp/tn"; then
				fail "$t: $cmd -j$j differs from -j1"
				diff "$tmp/t1" "$tmp/tn" | head -n 6 >&2
			fi
			check
			n=$(sed -n 's/.*: \([0-9]*\) segments$/\1/p' \
				"$tmp/tn.err")
			[ "${n:-0}" -ge 5 ] ||
				fail "$t: $cmd -j$j: ${n:-no} segments"
			check
			if [ $t = cyc ] || [ $t = mtcnocyc ]; then
				! grep -q "one thread" "$tmp/tn.err" ||
					fail "$t: $cmd -j$j fell back to one thread"
			else
				# One segment decoded again, then the rest on
				# one thread (the next one missed too).
				grep -q "time: decoded again" "$tmp/tn.err" &&
				grep -q "one thread's time: the rest on one" \
					"$tmp/tn.err" ||
					fail "$t: $cmd -j$j: no time check failed"
			fi
		done
	done
	# The times move: CYCs (or MTCs) between TSCs.
	check
	n=$(awk '{ print $1 }' "$tmp/t1.insn" | sort -u | wc -l)
	[ "$n" -gt 50 ] || fail "$t: only $n distinct times"
done

# Instruction lines come from the blocks' kept walks (hwt_an_walks_get():
# where each instruction starts, direct calls and jumps inside a block
# followed), --disasm's texts from the disassembly memo by image;
# HWT_WALK_EACH=1 walks and reads every instruction (the reference): the
# same lines, on bench/gen_flow's program (calls, jumps, indirect
# branches, thousands of blocks), whole and with a corrupted byte, in one
# thread and in 16 KiB segments on two.
gen=$build/gen_flow
built "$gen"
"$gen" -s 256K -S 3 "$tmp/g" >/dev/null || fail "gen_flow"
cp "$tmp/g.pt" "$tmp/gbad.pt"
printf '\xd9' | dd of="$tmp/gbad.pt" bs=1 seek=100000 conv=notrunc 2>/dev/null

# same_walks DESC MIN ARGS...: hwt ARGS prints MIN lines or more, and
# what it prints with HWT_WALK_EACH=1 (every instruction walked and read).
same_walks() {
	local desc=$1 min=$2

	shift 2
	"$hwt" "$@" >"$tmp/walks" 2>&1
	HWT_WALK_EACH=1 "$hwt" "$@" >"$tmp/each" 2>&1
	check
	if [ "$(wc -l <"$tmp/walks")" -lt "$min" ]; then
		fail "$desc: fewer than $min lines"
	elif ! cmp -s "$tmp/walks" "$tmp/each"; then
		fail "$desc: the kept walks' lines are not those of a walk" \
			"of every instruction"
		diff "$tmp/each" "$tmp/walks" | head -n 5 >&2
	fi
}

for t in g gbad; do
	for j in 1 2; do
		for o in --time "--time --disasm"; do
			# shellcheck disable=SC2086
			same_walks "flow -j$j $o $t.pt" 100000 flow -j$j $o \
				--raw "$tmp/g.bin:0x400000" "$tmp/$t.pt"
		done
		check
		[ $t = g ] || grep -q '^\[error' "$tmp/walks" ||
			fail "gbad.pt -j$j: no error reported"
		# hwt calls: what an indirect branch is comes from the kept
		# walks too, a call's return address from its block.
		same_walks "calls -j$j $t.pt" 10000 calls -j$j --time \
			--raw "$tmp/g.bin:0x400000" "$tmp/$t.pt"
		# --branches: blocks that end at every branch, unwalked
		# (HWT_WALK_EACH=1: blocks that run on, walked).
		same_walks "flow --branches -j$j $t.pt" 40000 flow -j$j \
			--branches --raw "$tmp/g.bin:0x400000" "$tmp/$t.pt"
	done
done

# hwt ptxed's lines come from the kept walks too, the texts from the
# disassembly memo by image. The same output with each of ptxed's
# printing options, also with the image in two files cut inside an
# instruction (0x1001 is one: its bytes are in two sections, and what
# follows the first file's end in memory is not its rest).
g=$tmp/g.bin
head -c $((0x1001)) "$g" >"$tmp/g.lo"
tail -c +$((0x1002)) "$g" >"$tmp/g.hi"
halves=(--raw "$tmp/g.lo:0x400000" --raw "$tmp/g.hi:0x401001")
for t in g gbad; do
	for o in "" --no-inst --att "--offset --time" --block:show-blocks \
		--insn-decoder; do
		# shellcheck disable=SC2086
		same_walks "ptxed $o $t.pt" 100000 ptxed $o \
			--raw "$g:0x400000" --pt "$tmp/$t.pt"
	done
	same_walks "ptxed $t.pt, two files" 100000 ptxed "${halves[@]}" \
		--pt "$tmp/$t.pt"
	same_walks "flow --disasm $t.pt, two files" 100000 flow --disasm \
		"${halves[@]}" "$tmp/$t.pt"
	check
	grep -q '^0000000000400fff  *mov rax, rbx$' "$tmp/walks" ||
		fail "flow --disasm $t.pt, two files: not the instruction" \
			"across them"
done

finish

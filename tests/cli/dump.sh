# SPDX-License-Identifier: BSD-2-Clause
# Golden tests of `hwt dump` output on tiny hand-made traces. The traces are
# written here with printf from the byte tables of the Intel SDM (the CLI
# cannot encode); the expected lines were worked out by hand from the same
# tables.
#
#   bash tests/cli/dump.sh path/to/hwt BUILD_DIR
. "$(dirname "$0")/lib.bash" dump "$@"

# hexfile FILE BYTE...: write the bytes (two hex digits each) to FILE.
hexfile() {
	local f=$1 s="" b

	shift
	for b in "$@"; do
		s="$s\\x$b"
	done
	printf '%b' "$s" >"$f"
}

# expect_rc N: the exit code of the last run.
expect_rc() {
	if [ "$rc" -ne "$1" ]; then
		fail "$desc: exit code $rc, want $1"
		sed 's/^/    stderr: /' "$tmp/err" >&2
	fi
}

# expect_out / expect_err: the whole of stdout / stderr, from stdin.
expect_out() {
	cat >"$tmp/want"
	if ! diff -u "$tmp/want" "$tmp/out" >"$tmp/diff"; then
		fail "$desc: stdout differs (- want, + got)"
		sed 's/^/    /' "$tmp/diff" >&2
	fi
}

expect_err() {
	cat >"$tmp/want"
	if ! diff -u "$tmp/want" "$tmp/err" >"$tmp/diff"; then
		fail "$desc: stderr differs (- want, + got)"
		sed 's/^/    /' "$tmp/diff" >&2
	fi
}

# expect_line LINE: stdout has this exact line.
expect_line() {
	if ! grep -qxF -- "$1" "$tmp/out"; then
		fail "$desc: no line '$1'"
		sed 's/^/    /' "$tmp/out" | head -n 20 >&2
	fi
}

PSB=(02 82 02 82 02 82 02 82 02 82 02 82 02 82 02 82)

# ---------------------------------------------------------------------
# Every packet type once, with the offsets in the comments.
hexfile "$tmp/all.pt" "${PSB[@]}" 02 23 \
	19 01 02 03 04 05 06 07 \
	02 73 34 12 00 ff 01 \
	02 03 2a 00 \
	02 43 01 45 23 01 00 00 \
	02 c8 01 02 03 04 05 \
	99 01 \
	99 21 \
	7d 88 77 66 55 44 33 \
	31 34 12 \
	1a \
	02 a3 aa 55 00 00 00 00 \
	4d 78 56 34 12 \
	0f 03 fe \
	59 ab \
	02 92 78 56 34 12 \
	9d 88 77 66 55 44 33 \
	02 c2 01 00 00 00 03 00 00 00 \
	02 22 08 21 \
	02 e2 \
	dd 88 77 66 55 44 33 22 11 \
	02 a2 21 01 00 00 00 \
	02 13 81 20 \
	1d \
	02 53 01 88 77 66 55 44 33 22 11 \
	02 63 81 \
	0c 78 56 34 12 \
	02 b3 \
	7d 00 10 00 00 00 80 \
	01 \
	00 \
	02 f3 \
	02 c3 88 01 02 03 04 05 06 07 08 \
	02 83 \
	02 32 88 77 66 55 44 33 22 11

# TSC 7 bytes LE; TMA CTC 0x1234, FC 0x1ff; PIP payload 0x1234501 ->
# NR=1, CR3 = 0x91a280 << 5; VMCS 0x0504030201 << 12; TNT-8 0x1a -> 3 bits
# 101; TNT-64 0x55aa -> 14 bits after the stop bit; CYC 0f 03 fe -> 1 |
# 1 << 5 | 0x7f << 12; PWRE HW is bit 3 of byte 2 (as libipt); sext48
# 0x800000001000 -> ffff800000001000; the BIP after the 4-byte BBP.
run "all packet types" "$hwt" dump "$tmp/all.pt"
expect_rc 0
expect_out <<'EOF'
0000000000000000  psb
0000000000000010  psbend
0000000000000012  tsc        tsc=0x7060504030201
000000000000001a  tma        ctc=0x1234 fc=0x1ff
0000000000000021  cbr        ratio=42
0000000000000025  pip        cr3=0x0000000012345000 nr
000000000000002d  vmcs       vmcs=0x0000504030201000
0000000000000034  mode.exec  64-bit
0000000000000036  mode.tsx   begin
0000000000000038  fup        sext48     0000334455667788
000000000000003f  tip.pge    upd16      ????????????1234
0000000000000042  tnt.8      T.T
0000000000000043  tnt.64     .T.T.TT.T.T.T.
000000000000004b  tip        upd32      ????????12345678
0000000000000050  cyc        cyc=0x7f021
0000000000000053  mtc        ctc=0xab
0000000000000055  ptw        payload=0x12345678 ip
000000000000005b  fup        upd48      ????334455667788
0000000000000062  mwait      hints=0x00000001 ext=0x00000003
000000000000006c  pwre       c2.1 hw
0000000000000070  exstop     ip
0000000000000072  fup        full       1122334455667788
000000000000007b  pwrx       last=c2 deepest=c1 wake=int
0000000000000082  cfe        type=1 vector=0x20 ip
0000000000000086  fup        suppressed
0000000000000087  evd        type=1 payload=0x1122334455667788
0000000000000092  bbp        type=1 bip-size=4
0000000000000095  bip        id=1 value=0x12345678
000000000000009a  bep        ip
000000000000009c  fup        sext48     ffff800000001000
00000000000000a3  tip.pgd    suppressed
00000000000000a4  pad
00000000000000a5  ovf
00000000000000a7  mnt        payload=0x0807060504030201
00000000000000b2  stop
00000000000000b4  ptw        payload=0x1122334455667788
EOF
expect_err </dev/null

# ---------------------------------------------------------------------
# Field variants: execution modes, TSX states, power, blocks, no-IP bits.
hexfile "$tmp/var.pt" "${PSB[@]}" 02 23 \
	99 00 99 02 99 06 99 20 99 22 \
	02 22 00 10 \
	02 a2 00 05 00 00 00 \
	02 a2 31 00 00 00 00 \
	02 63 02 \
	0c 01 02 03 04 05 06 07 08 \
	06 \
	02 33 \
	0c \
	02 62 \
	02 13 0e ff \
	02 12 01 00 00 00
run "field variants" "$hwt" dump "$tmp/var.pt"
expect_rc 0
expect_out <<'EOF'
0000000000000000  psb
0000000000000010  psbend
0000000000000012  mode.exec  16-bit
0000000000000014  mode.exec  32-bit
0000000000000016  mode.exec  32-bit if
0000000000000018  mode.tsx   commit
000000000000001a  mode.tsx   abort
000000000000001c  pwre       c1.0
0000000000000020  pwrx       last=c0 deepest=c0 wake=int,store
0000000000000027  pwrx       last=c3 deepest=c1 wake=none
000000000000002e  bbp        type=2 bip-size=8
0000000000000031  bip        id=1 value=0x807060504030201
000000000000003a  tnt.8      T
000000000000003b  bep
000000000000003d  tnt.8      T.
000000000000003e  exstop
0000000000000040  cfe        type=14 vector=0xff
0000000000000044  ptw        payload=0x00000001
EOF

# ---------------------------------------------------------------------
# Junk before the first PSB, an unknown opcode, and a packet cut by the
# end of the file: errors in line at their offsets, resync at the next
# PSB, exit status 1 and a summary on stderr.
hexfile "$tmp/err.pt" 00 00 00 "${PSB[@]}" 02 23 1a d9 1a "${PSB[@]}" 02 23 06 19 01 02
run "errors" "$hwt" dump "$tmp/err.pt"
expect_rc 1
expect_out <<'EOF'
0000000000000003  sync: skipped 0x3 bytes before the first PSB
0000000000000003  psb
0000000000000013  psbend
0000000000000015  tnt.8      T.T
0000000000000016  error: unknown packet opcode (byte 0xd9)
0000000000000018  resync: skipped 0x2 bytes
0000000000000018  psb
0000000000000028  psbend
000000000000002a  tnt.8      T
000000000000002b  error: packet truncated at end of trace (byte 0x19)
EOF
expect_err <<EOF
hwt dump: $tmp/err.pt: 2 decode errors, 0x8 bytes skipped
EOF

run "errors --quiet" "$hwt" dump --quiet "$tmp/err.pt"
expect_rc 1
expect_out </dev/null
expect_err <<EOF
hwt dump: offset 0x16: unknown packet opcode
hwt dump: offset 0x2b: packet truncated at end of trace
hwt dump: $tmp/err.pt: 2 decode errors, 0x8 bytes skipped
EOF

# --no-offset drops the offset column of packets, not of errors; --stat
# counts packets and bytes per type, and errors and skipped bytes.
run "--stat --no-pad --no-offset" "$hwt" dump --stat --no-pad --no-offset \
	"$tmp/err.pt"
expect_rc 1
expect_out <<'EOF'
0000000000000003  sync: skipped 0x3 bytes before the first PSB
psb
psbend
tnt.8      T.T
0000000000000016  error: unknown packet opcode (byte 0xd9)
0000000000000018  resync: skipped 0x2 bytes
psb
psbend
tnt.8      T
000000000000002b  error: packet truncated at end of trace (byte 0x19)
packet              count          bytes
psb                     2             32
psbend                  2              4
tnt.8                   2              2
total                   6             38
errors                  2              8
EOF

# ---------------------------------------------------------------------
# Last-IP and raw bytes. TIP.PGE sext48 0x401000; TIP upd16 0x1234 over
# it; a suppressed TIP; upd32 0x00500000; OVF resets last IP, so the next
# upd16 expands against zero; a new PSB likewise (FUP suppressed, no IP).
hexfile "$tmp/ip.pt" "${PSB[@]}" 02 23 \
	71 00 10 40 00 00 00 \
	2d 34 12 \
	0d \
	4d 00 00 50 00 \
	02 f3 \
	2d 00 11 \
	"${PSB[@]}" \
	1d
run "--lastip --raw" "$hwt" dump --lastip --raw "$tmp/ip.pt"
expect_rc 0
expect_line '0000000000000012  tip.pge    sext48     0000000000401000   ip=0x0000000000401000   [71 00 10 40 00 00 00]'
expect_line '0000000000000019  tip        upd16      ????????????1234   ip=0x0000000000401234   [2d 34 12]'
expect_line '000000000000001d  tip        upd32      ????????00500000   ip=0x0000000000500000   [4d 00 00 50 00]'
expect_line '0000000000000022  ovf           [02 f3]'
expect_line '0000000000000024  tip        upd16      ????????????1100   ip=0x0000000000001100   [2d 00 11]'
expect_line '0000000000000000  psb           [02 82 02 82 02 82 02 82 02 82 02 82 02 82 02 82]'
if ! grep -qE '^000000000000001c  tip        suppressed +ip=<[^>]*suppressed[^>]*> +\[0d\]$' "$tmp/out"; then
	fail "$desc: suppressed TIP line"
fi
if ! grep -qE '^0000000000000037  fup        suppressed +ip=<[^>]+> +\[1d\]$' "$tmp/out"; then
	fail "$desc: FUP after PSB line"
fi
[ "$(wc -l <"$tmp/out")" -eq 10 ] || fail "$desc: want 10 lines"

# ---------------------------------------------------------------------
# Ranges: offsets are file offsets. From the PSB at 0x27 to the end.
run "range from a PSB" "$hwt" dump "$tmp/ip.pt:0x27"
expect_rc 0
expect_out <<'EOF'
0000000000000027  psb
0000000000000037  fup        suppressed
EOF

# --no-sync at a packet boundary; the range cuts the second packet.
run "range, --no-sync, cut packet" "$hwt" dump --no-sync "$tmp/ip.pt:0x12-0x1a"
expect_rc 1
expect_out <<'EOF'
0000000000000012  tip.pge    sext48     0000000000401000
0000000000000019  error: packet truncated at end of trace (byte 0x2d)
EOF

# A range without a PSB: nothing to decode, and it says so.
run "range without a PSB" "$hwt" dump "$tmp/ip.pt:0x10-0x1a"
expect_rc 1
expect_out </dev/null
if ! grep -qE '^hwt dump: .*no PSB.*0x10' "$tmp/err"; then
	fail "$desc: stderr: $(cat "$tmp/err")"
fi

# --no-pad hides PAD; the rest stays.
hexfile "$tmp/pad.pt" "${PSB[@]}" 00 00 02 23 00 06
run "--no-pad" "$hwt" dump --no-pad "$tmp/pad.pt"
expect_rc 0
expect_out <<'EOF'
0000000000000000  psb
0000000000000012  psbend
0000000000000015  tnt.8      T
EOF

# ---------------------------------------------------------------------
# A PSB right after MTC 0x02 and TNT-8 0x82: the bytes 02 82 run for 18
# bytes, and the PSB is the last 16 of them (as libipt finds it).
hexfile "$tmp/s0282.pt" 59 02 82 "${PSB[@]}" 02 23 06
run "PSB after 02 82" "$hwt" dump "$tmp/s0282.pt"
expect_rc 0
expect_out <<'EOF'
0000000000000003  sync: skipped 0x3 bytes before the first PSB
0000000000000003  psb
0000000000000013  psbend
0000000000000015  tnt.8      T
EOF

# --no-sync from offset 0 decodes the MTC and the TNT-8 too.
run "--no-sync from 0" "$hwt" dump --no-sync "$tmp/s0282.pt"
expect_rc 0
expect_out <<'EOF'
0000000000000000  mtc        ctc=0x02
0000000000000002  tnt.8      .....T
0000000000000003  psb
0000000000000013  psbend
0000000000000015  tnt.8      T
EOF

# ---------------------------------------------------------------------
run "--help" "$hwt" dump --help
expect_rc 0
grep -q '^usage: hwt dump' "$tmp/out" || fail "$desc: no usage line"

finish

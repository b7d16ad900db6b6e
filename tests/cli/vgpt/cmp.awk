# SPDX-License-Identifier: BSD-2-Clause
# awk -f hex.awk -f cmp.awk TRUTH FLOW: the decoded instructions (hwt flow
# --insn; event lines "[...]" and stream headers "# ..." ignored) against
# a vgpt truth file ("START N" per executed superblock, hex): cutting the decoded sequence into consecutive pieces
# of N instructions, piece k must start at START(k), and the pieces must
# use up the decoded sequence exactly.
#
# -v suffix=COUNT: the decode (COUNT instructions) covers only the end of
# the truth (--vgpt-ring): it must equal the truth from the superblock
# on after which COUNT instructions remain.
# -v prefix=1: the decode may end early (a trace cut by a write error),
# anywhere, but not before the first superblock.
NR == FNR { ts[++nt] = $1; tn[nt] = hex($2); next }
FNR == 1 && suffix {
	left = 0
	for (i = nt; i >= 1 && left < suffix; i--)
		left += tn[i]
	if (left != suffix) {
		printf "no superblock of the truth starts %d instructions before its end\n", suffix
		bad = 1; exit 1
	}
	first = i
}
/^[[#]/ { next }
{
	a = $1; sub(/^0+/, "", a); ndec++
	if (rem == 0) {
		if (++i > nt) {
			printf "decode has more instructions than the truth (#%d at %s)\n", ndec, a
			bad = 1; exit 1
		}
		if (a != ts[i]) {
			printf "superblock %d: truth starts at %s, decode has %s (instruction #%d)\n", i, ts[i], a, ndec
			bad = 1; exit 1
		}
		rem = tn[i]
	}
	rem--
}
END {
	if (bad)
		exit 1
	if (prefix && ndec) {
		printf "a prefix: %d instructions, %d of %d superblocks\n", ndec, i, nt
		exit 0
	}
	if (rem != 0 || i != nt) {
		printf "decode ends early: at superblock %d of %d, %d instructions short\n", i, nt, rem
		exit 1
	}
	printf "%d superblocks, %d instructions", nt - first, ndec
	if (suffix)
		printf " (the last of %d)", nt
	printf "\n"
}

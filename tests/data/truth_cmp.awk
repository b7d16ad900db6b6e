# SPDX-License-Identifier: BSD-2-Clause
# Decoded instructions (hwt flow --no-sym output: one address a line;
# lines starting with [ or # are events and headers) against a vgpt truth
# file (one line per executed superblock: START N, hex). Cutting the
# decoded sequence into consecutive pieces of N instructions, piece k must
# start at START(k), and the pieces must use up the sequence exactly.
#
#   awk -f truth_cmp.awk TRUTH FLOW
function hex(s,   i, v) {
	v = 0
	for (i = 1; i <= length(s); i++)
		v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
	return v
}
NR == FNR { ts[++nt] = $1; tn[nt] = hex($2); next }
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
	if (rem != 0 || i != nt) {
		printf "decode ends early: at superblock %d of %d, %d instructions short\n", i, nt, rem
		exit 1
	}
	printf "%d superblocks, %d instructions\n", nt, ndec
}

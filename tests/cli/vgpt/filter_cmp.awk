# SPDX-License-Identifier: BSD-2-Clause
# awk -v funcs=F1,F2,... -f hex.awk -f filter_cmp.awk DISASM TRUTH FLOW
# --vgpt-filter: the decoded instructions (hwt flow --insn) must be the
# truth's instructions that lie inside the named functions, in order.
# DISASM is `objdump -d --no-show-raw-insn` of a non-PIE program: it gives
# each instruction of those functions and the one after it, so that a
# truth superblock ("START N") that starts inside expands to its N
# instructions (all of which must be inside: nothing falls out of a
# function without a branch here); one that starts outside is skipped.
BEGIN {
	nf = split(funcs, f, ",")
	for (i = 1; i <= nf; i++)
		want["<" f[i] ">:"] = 1
}
FILENAME == ARGV[1] {
	if ($2 in want) { in_f = 1; last = ""; next }
	if (NF == 0) { in_f = 0; next }
	if (in_f && $1 ~ /^[0-9a-f]+:$/) {
		a = substr($1, 1, length($1) - 1)
		sub(/^0+/, "", a)
		inside[a] = 1
		if (last != "")
			succ[last] = a
		last = a
	}
	next
}
FILENAME == ARGV[2] {
	if (!($1 in inside))
		next
	a = $1
	for (k = hex($2); k > 0; k--) {
		if (!(a in inside)) {
			printf "truth superblock %s leaves the functions without a branch\n", $1
			bad = 1; exit 1
		}
		exp_[++ne] = a
		a = succ[a]
	}
	next
}
/^\[/ { next }
{
	a = $1; sub(/^0+/, "", a); nd++
	if (nd > ne || a != exp_[nd]) {
		printf "instruction %d: the truth inside the functions has %s, the decode %s\n", nd, (nd > ne ? "nothing" : exp_[nd]), a
		bad = 1; exit 1
	}
}
END {
	if (bad)
		exit 1
	if (nd != ne) {
		printf "the decode has %d instructions, the truth inside the functions %d\n", nd, ne
		exit 1
	}
	printf "%d instructions inside %s\n", nd, funcs
}

# SPDX-License-Identifier: BSD-2-Clause
# hwt ptdump TRACE | awk -f hex.awk -f psbs.awk: per PSB, "OFFSET TIME END"
# (decimal): where it starts, its TSC, and the end of its PSB+ (after
# PSBEND).
$2 == "psb" { off = hex($1); time = -1; next }
time < 0 && $2 == "tsc" { time = hex($3) }
$2 == "psbend" { printf "%d %d %d\n", off, time, hex($1) + 2 }

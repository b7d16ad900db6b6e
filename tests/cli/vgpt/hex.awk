# SPDX-License-Identifier: BSD-2-Clause
# hex(S): the value of the hex digits S (either case), for the vgpt test
# awk scripts (awk -f hex.awk -f SCRIPT).
function hex(s,   i, v) {
	v = 0
	s = tolower(s)
	for (i = 1; i <= length(s); i++)
		v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
	return v
}

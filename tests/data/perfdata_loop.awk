# SPDX-License-Identifier: BSD-2-Clause
# The Intel PT of tests/data/perfdata_loop.asm, as a ptgen description.
# Variables: iter (the ITER it was assembled with), tsc (first TSC), and
# the symbol addresses top f0 f1 f2 f2b f3 (from nm, with 0x).
# A PSB+ every 8 iterations at `top', where no call is outstanding, so
# every return is compressed (one taken TNT bit). With deep=1 (and f1_loop,
# f3ret: the address after f3's call, topret: after top's), the PSB+ is in
# f1 called from f3 instead, two calls deep, in each of f3's iterations:
# those two returns are TIPs (the processor forgets its calls at a PSB).
function bit(b) {
	bits = bits b
	if (length(bits) == 6)
		flush()
}
function flush() {
	if (bits != "")
		print "tnt " bits
	bits = ""
}
function tip(ip) {
	flush()
	print "tip " ip
}
function psb(ip) {
	flush()
	print "psb"
	printf "tsc %.0f\n", tsc
	tsc += 5000
	print "cbr 24"
	print "mode.exec 64"
	print "fup " ip
	print "psbend"
}
function f1_body() {
	bit("!"); bit("!"); bit(".")	# dec ecx; jnz f1_loop: 3 rounds
	bit("!")			# ret
}
BEGIN {
	bits = ""
	print "psb"
	printf "tsc %.0f\n", tsc
	tsc += 5000
	print "cbr 24"
	print "mode.exec 64"
	print "psbend"
	print "tip.pge 0x401000"
	for (n = iter; n > 0; n--) {
		if (!deep && (iter - n) % 8 == 0 && n != iter)
			psb(top)
		k = n % 4
		tip(k == 0 ? f0 : k == 1 ? f1 : k == 2 ? f2 : f3)
		if (k == 0) {
			bit("!")
		} else if (k == 1) {
			f1_body()
		} else if (k == 2) {
			tip(f2b)
			bit("!")
		} else if (deep) {
			bit("!")		# f1: jnz f1_loop taken
			psb(f1_loop)
			bit("!"); bit(".")
			tip(f3ret)		# f1's return
			tip(topret)		# f3's
		} else {
			f1_body()
			bit("!")
		}
		if (n % 2 == 0) {
			bit("!")		# jz .even taken
		} else {
			bit(".")
			bit("!")		# odd: ret
		}
		bit(n > 1 ? "!" : ".")		# jnz top
	}
	flush()
	print "tip.pgd -"
}

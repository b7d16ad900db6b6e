# SPDX-License-Identifier: BSD-2-Clause
# awk -v pid=PID -f hex.awk -f images.awk PREFIX.sb PT.psbs
# The code of process PID for each piece of one of its streams (lib.bash,
# "Time-aware decoding"). PT.psbs: "OFFSET TIME END" per PSB, decimal.
# Prints "FROM TO ARGS" (TO "end" for the last piece, else the END of the
# next piece's PSB+), ARGS the --raw options of hwt flow; consecutive
# pieces with the same code are merged.
NR == FNR {
	n++
	kind[n] = $1; time[n] = $2 + 0
	if ($1 == "fork") {
		par[$4] = $3; ftime[$4] = $2 + 0
		next
	}
	lpid[n] = $3
	if ($1 == "comm") {
		ncomm[$3]++
		ctime[$3, ncomm[$3]] = $2 + 0; cline[$3, ncomm[$3]] = n
	} else if ($1 == "mmap") {
		s = hex($4); len = hex($5)
		lo[n] = s; hi[n] = s + len
		path = $8
		for (k = 9; k <= NF; k++)
			path = path " " $k
		arg[n] = sprintf("--raw %s:0x%x-0x%x:0x%x", path, hex($6), hex($6) + len, s)
	} else if ($1 == "munmap") {
		lo[n] = hex($4); hi[n] = hex($4) + hex($5)
	}
	next
}
{ off[++np] = $1; pt[np] = $2 + 0; pend[np] = $3 }

# The mmap/munmap lines process @p sees at time @t, oldest first, into
# cand[1..nc]: its ancestors' up to each fork, unless an execve (a comm
# line that is not a fork child's first) started a new image.
function lineage(p, t,   chain, nch, q, cut, k, c, first, e, l) {
	nch = 0; q = p; cut = t
	while (q != "") {
		chain[++nch] = q; ccut[nch] = cut
		# the latest comm of q at or before cut
		first[nch] = 0
		for (c = 1; c <= ncomm[q]; c++)
			if (ctime[q, c] <= cut)
				first[nch] = cline[q, c]
		if (first[nch] || !(q in par))
			break
		cut = ftime[q]; q = par[q]
	}
	nc = 0
	for (k = nch; k >= 1; k--)
		for (l = first[k] + 1; l <= n; l++)
			if (lpid[l] == chain[k] && (kind[l] == "mmap" || kind[l] == "munmap") &&
			    (k == 1 || time[l] <= ccut[k]))
				cand[++nc] = l
}

function image(t0, t1,   k, l, m, ni, ok, s) {
	ni = 0
	for (k = 1; k <= nc; k++) {
		l = cand[k]
		if (time[l] > t0)
			continue
		for (m = 1; m <= ni; m++)
			if (img[m] && lo[img[m]] < hi[l] && lo[l] < hi[img[m]])
				img[m] = 0
		if (kind[l] == "mmap")
			img[++ni] = l
	}
	for (k = 1; k <= nc; k++) {
		l = cand[k]
		if (time[l] <= t0 || (t1 >= 0 && time[l] >= t1) || kind[l] != "mmap")
			continue
		ok = 1
		for (m = 1; m <= ni; m++)
			if (img[m] && lo[img[m]] < hi[l] && lo[l] < hi[img[m]])
				ok = 0
		if (ok)
			img[++ni] = l
	}
	s = ""
	for (m = 1; m <= ni; m++)
		if (img[m])
			s = s " " arg[img[m]]
	return s
}

END {
	for (i = 1; i <= np; i++) {
		lineage(pid, pt[i])
		a = image(pt[i], i < np ? pt[i + 1] : -1)
		if (i > 1 && a == prev)
			continue
		if (i > 1)
			print from, pend[i], prev
		from = off[i]; prev = a
	}
	if (np)
		print from, "end", prev
}

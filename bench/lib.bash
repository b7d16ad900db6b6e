# SPDX-License-Identifier: BSD-2-Clause
# Shared by bench/run-output.sh and bench/run-cover.sh (sourced; $REPO set).

# best N CMD...: the best wall clock of N runs, in seconds.
best() {
	local n=$1 i t0 t1 b=""
	shift
	for ((i = 0; i < n; i++)); do
		t0=$EPOCHREALTIME
		"$@" >/dev/null 2>&1 || true
		t1=$EPOCHREALTIME
		b=$(awk -v t="$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" \
			-v b="$b" 'BEGIN { print (b == "" || t < b) ? t : b }')
	done
	echo "$b"
}

# vgpt_list BUILD: the vgpt traces (bench/vgpt-traces.sh, recorded once
# into BUILD/bench-real), their list's path on stdout; dies without them.
vgpt_list() {
	local list=$1/bench-real.list
	bash "$REPO/bench/vgpt-traces.sh" "$1" "$1/bench-real" >"$list" ||
		die "bench/vgpt-traces.sh failed"
	[[ -s $list ]] || die "no vgpt traces (vgpt not built?)"
	echo "$list"
}

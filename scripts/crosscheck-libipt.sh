#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# scripts/crosscheck-libipt.sh [--libipt DIR] [--work DIR] BUILD_DIR
#
# Cross-check hwt's block decoder against libipt 2.1.2's on generated
# traces (BUILD_DIR/gen_flow: different seeds, image sizes, traces that
# end anywhere or right after a call), with every block-decoder flag
# combination (none, end-on-call, end-on-jump, both):
#   - `hwt ptxed --quiet --stat --stat:insn --stat:blocks` must report
#     exactly the instruction and block counts of libipt's pt_blk_*
#     decoder (bench/flow/ipt_blk.c, built here against DIR/build/lib),
#     and `hwt flow --stat -j2` the same instruction count;
#   - on the smaller traces, the flow must be identical block by block:
#     `hwt ptxed --block:show-blocks --no-inst` reduced to
#     "IP END_IP NINSN" per block against ipt_blk --blocks;
#   - the same on real programs recorded with vgpt (bench/vgpt-traces.sh
#     --scale tiny: gzip, xz, python3; skipped with a message if vgpt is
#     not built): counts for all, block by block for gzip and xz;
#   - sideband: `hwt ptxed --pevent:*` against libipt-sb driven as
#     libipt's ptxed drives it (bench/flow/ipt_sb.c), on random perf_event
#     sideband streams over the traces of libipt's test/pevent suite;
#   - perf.data from `hwt record` through libipt's perf-read-aux.bash,
#     perf-read-sideband.bash and perf-get-opts.bash into hwt ptxed: the
#     same output as libipt-sb for every stream, and for one process the
#     instructions of hwt flow on the perf.data, no errors.
# Prints "libipt-crosscheck: N passed, N failed"; exits non-zero on a
# failure or when libipt cannot be built.
#
# Environment: CROSSCHECK_SIZE (trace size for the count checks, default
# 4M), CROSSCHECK_BLOCK_SIZE (block-by-block checks, default 512K),
# CROSSCHECK_SB_SEEDS (random sideband streams per trace and kernel
# start, default 20).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
libipt_dir=$REPO/.cache/libipt
work=""
size=${CROSSCHECK_SIZE:-4M}
bsize=${CROSSCHECK_BLOCK_SIZE:-512K}

while [[ $# -gt 0 ]]; do
	case $1 in
	--libipt) libipt_dir=$2; shift 2 ;;
	--work) work=$2; shift 2 ;;
	-h|--help) sed -n '3,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "crosscheck: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
[[ $# -eq 1 ]] || { echo "usage: $0 [--libipt DIR] [--work DIR] BUILD_DIR" >&2; exit 2; }
build=$(cd "$1" && pwd)
hwt=$build/hwt
gen=$build/gen_flow
work=${work:-$build/crosscheck}
mkdir -p "$work"

die() {
	echo "crosscheck: error: $*" >&2
	echo "libipt-crosscheck: 0 passed, 1 failed"
	exit 1
}
[[ -x $hwt && -x $gen ]] || die "$hwt or $gen not built (make)"

bash "$REPO/scripts/fetch-libipt.sh" "$libipt_dir" >"$work/fetch.log" 2>&1 ||
	{ tail -n 20 "$work/fetch.log" >&2; die "libipt unavailable"; }
lib=$libipt_dir/build/lib
inc=$libipt_dir/build/libipt/include
[[ -f $lib/libipt.so && -f $inc/intel-pt.h ]] || die "no libipt library in $lib"
ipt_blk=$work/ipt_blk
${CC:-cc} -O2 -std=c17 -D_GNU_SOURCE -Wall -Wextra -I"$inc" \
	"$REPO/bench/flow/ipt_blk.c" -L"$lib" -Wl,-rpath,"$lib" -lipt \
	-o "$ipt_blk" || die "cannot build $ipt_blk"
echo "crosscheck: libipt $(cat "$libipt_dir/VERSION") ($lib), hwt $hwt"

passed=0 failed=0
ok() { passed=$((passed + 1)); echo "  ok    $*"; }
bad() { failed=$((failed + 1)); echo "  FAIL  $*"; }

# flag combinations: hwt ptxed options | ipt_blk options | label
flagsets=(
	"||none"
	"--block:end-on-call|--end-on-call|end-on-call"
	"--block:end-on-jump|--end-on-jump|end-on-jump"
	"--block:end-on-call --block:end-on-jump|--end-on-call --end-on-jump|both"
)

# count_check NAME TRACE IMAGE-OPTIONS...: hwt ptxed's counts against
# ipt_blk's, every flag set.
count_check() {
	local name=$1 trace=$2 fs hopt iopt label out want got
	shift 2
	for fs in "${flagsets[@]}"; do
		IFS='|' read -r hopt iopt label <<<"$fs"
		# shellcheck disable=SC2086
		out=$("$ipt_blk" $iopt "$@" "$trace")
		want=$(awk '$1 == "insn" || $1 == "blocks" || $1 == "errors" { printf "%s %s ", $1, $2 }' <<<"$out")
		# shellcheck disable=SC2086
		got=$("$hwt" ptxed --quiet --stat --stat:insn --stat:blocks $hopt \
			"$@" --pt "$trace" 2>&1 |
			awk '$1 == "insn:" || $1 == "blocks:" { sub(/:$/, "", $1); sub(/\.$/, "", $2); printf "%s %s ", $1, $2 }
			     /error/ { e++ } END { printf "errors %d ", e }') || true
		if [[ $got == "$want" ]]; then
			ok "$name $label: $want"
		else
			bad "$name $label: hwt '$got' libipt '$want'"
		fi
	done
	# hwt flow cuts the trace at PSBs with -j: same instructions.
	want=$(awk '$1 == "insn" { print $2 }' <<<"$out")
	got=$("$hwt" flow --stat -j2 "$@" "$trace" 2>&1 |
		awk '$1 == "insn:" { print $2 }') || true
	if [[ $got == "$want" ]]; then
		ok "$name flow --stat -j2: insn $got"
	else
		bad "$name flow --stat -j2: hwt insn '$got' libipt '$want'"
	fi
}

# block_check NAME TRACE IMAGE-OPTIONS...: block-by-block flow, every flag
# set.
block_check() {
	local name=$1 trace=$2 fs hopt iopt label
	shift 2
	for fs in "${flagsets[@]}"; do
		IFS='|' read -r hopt iopt label <<<"$fs"
		# shellcheck disable=SC2086
		"$ipt_blk" --blocks $iopt "$@" "$trace" |
			awk 'NF == 3' >"$work/$name.$label.libipt"
		# shellcheck disable=SC2086
		"$hwt" ptxed --no-inst --block:show-blocks $hopt \
			"$@" --pt "$trace" 2>&1 |
			awk 'function out() { if (n) printf "%s %s %d\n", first, last, n; n = 0 }
			     /^\[block\]/ { out(); next }
			     /^[0-9a-f]+$/ { v = $1; sub(/^0+/, "", v); if (v == "") v = "0"
					     if (!n) first = v; last = v; n++; next }
			     /^\[/ { next }
			     { out(); print "other: " $0 }
			     END { out() }' >"$work/$name.$label.hwt"
		if cmp -s "$work/$name.$label.libipt" "$work/$name.$label.hwt"; then
			ok "$name $label: $(wc -l <"$work/$name.$label.hwt") blocks identical"
		else
			bad "$name $label: block flow differs: diff $work/$name.$label.libipt $work/$name.$label.hwt"
			diff "$work/$name.$label.libipt" "$work/$name.$label.hwt" | head -n 6 | sed 's/^/        /'
		fi
	done
}

# gen NAME GEN_ARGS...
gen() {
	local name=$1
	shift
	"$gen" "$@" "$work/$name" | sed 's/^/  /'
}

echo "-- instruction and block counts ($size traces)"
gen s1 -s "$size" -S 1
count_check s1 "$work/s1.pt" --raw "$work/s1.bin:0x400000"
gen s2e -s "$size" -S 2 -e
count_check s2e "$work/s2e.pt" --raw "$work/s2e.bin:0x400000"
gen s3small -s "$size" -S 3 -f 12 -l 4
count_check s3small "$work/s3small.pt" --raw "$work/s3small.bin:0x400000"
gen s4e -s "$size" -S 4 -f 50 -e
count_check s4e "$work/s4e.pt" --raw "$work/s4e.bin:0x400000"

echo "-- block-by-block flow ($bsize traces)"
gen b5 -s "$bsize" -S 5
block_check b5 "$work/b5.pt" --raw "$work/b5.bin:0x400000"
gen b6e -s "$bsize" -S 6 -e -f 30
block_check b6e "$work/b6e.pt" --raw "$work/b6e.bin:0x400000"
# Conditional jumps mostly one way, as real code's (gen_flow -b): runs of
# bits that go the same way, as the fold's memo (flow --stat) takes them.
gen b7b -s "$bsize" -S 7 -b
count_check b7b "$work/b7b.pt" --raw "$work/b7b.bin:0x400000"
block_check b7b "$work/b7b.pt" --raw "$work/b7b.bin:0x400000"
# The packets as processors write them (gen_flow -c): short TNTs and IPs
# compressed against the last one, over a large image's blocks.
gen s8c -s "$size" -S 8 -c
count_check s8c "$work/s8c.pt" --raw "$work/s8c.bin:0x400000"
gen b9c -s "$bsize" -S 9 -c -e
block_check b9c "$work/b9c.pt" --raw "$work/b9c.bin:0x400000"

# Real programs (vgpt; bench/vgpt-traces.sh --scale tiny): several code
# images, TNT-8, compressed IPs. Counts for all, blocks for the smaller.
echo "-- real programs (vgpt)"
bash "$REPO/bench/vgpt-traces.sh" --scale tiny "$build" "$work/real" \
	>"$work/real.list" || die "bench/vgpt-traces.sh failed"
# shellcheck disable=SC2086
while IFS=$'\t' read -r name trace opts; do
	count_check "$name" "$trace" $opts
	[[ $name == python3 ]] || block_check "$name" "$trace" $opts
done <"$work/real.list"

# Sideband: hwt ptxed --pevent:* against libipt-sb, as libipt's ptxed
# drives it (bench/flow/ipt_sb.c), on random sideband streams over the
# traces of libipt's test/pevent suite: the records, warnings, context
# switches and events must come in the same order around the same flow
# (runs of blocks between them: an image switch resets hwt's block cache
# but not libipt's, so blocks may be cut differently).
echo "-- sideband (random streams, libipt-sb)"
ipt_sb=$work/ipt_sb
sbinc=$libipt_dir/build/sideband/include
[[ -f $sbinc/libipt-sb.h && -f $lib/libipt-sb.so ]] ||
	die "libipt was built without SIDEBAND/PEVENT"
${CC:-cc} -O2 -std=c17 -D_GNU_SOURCE -Wall -Wextra -I"$inc" -I"$sbinc" \
	"$REPO/bench/flow/ipt_sb.c" -L"$lib" -Wl,-rpath,"$lib" -lipt -lipt-sb \
	-o "$ipt_sb" || die "cannot build $ipt_sb"
sbwork=$work/sideband
rm -rf "$sbwork"
mkdir -p "$sbwork"
# Runs of blocks as one line (see above).
# shellcheck disable=SC2016 # awk programs
merge_runs='function out() { if (n) printf "%s %s %d\n", first, last, n; n = 0 }
	NF == 3 && $1 ~ /^[0-9a-f]+$/ && $2 ~ /^[0-9a-f]+$/ && $3 ~ /^[0-9]+$/ {
		if (!n) first = $1; last = $2; n += $3; next }
	{ out(); print }
	END { out() }'
# hwt ptxed --block:show-blocks --no-inst as ipt_sb prints it.
# shellcheck disable=SC2016 # awk programs
as_ipt_sb='function out() { if (n) printf "%s %s %d\n", first, last, n; n = 0 }
	/^\[block\]$/ { out(); next }
	/^[0-9a-f]+$/ && length($0) == 16 { v = $1; sub(/^0+/, "", v)
		if (v == "") v = "0"; if (!n) first = v; last = v; n++; next }
	/^\[(enabled|resumed|disabled|tick)\]$/ || /^\[context: / ||
	    / sideband (warning|error): / { out(); print; next }
	/^\[/ { out(); if (/error/) print "[error]"; next }
	{ out(); print }
	END { out() }'
sb_seeds=${CROSSCHECK_SB_SEEDS:-20}
sb_same=0
# sb_run SB KIND KERNEL_START: make stream SB, compare (counts in
# same, names the first difference in first_diff).
sb_run() {
	local sb=$1 kind=$2 ks=$3 tick mode gen=--gen
	local -a topt opts cfg=()
	[[ $kind == ids ]] && gen=--gen-ids
	"$ipt_sb" "$gen" "$seed" "$sbwork/$t.bin" "$org" "$sb"
	[[ $kind == plain ]] && cfg=(--pevent:sample-type 0x6)
	[[ $kind == ids ]] && cfg=(--pevent:sample-type 0x10006
		--pevent:sample-config 0:0x10006
		--pevent:sample-config 7:0x10006
		--pevent:sample-config 9:0x100c6)
	for tick in tick fast; do
		topt=()
		[[ $tick == fast ]] || topt=(--tick)
		[[ $kind == ids ]] && topt+=(--ids)
		(cd "$sbwork" &&
		 "$ipt_sb" "${topt[@]}" --raw "$t.bin:$org" --pevent "$sb" \
			${ks:+--kernel-start "$ks"} "$t.pt" 2>&1 |
			awk "$merge_runs") >"$sb.$tick.libipt"
	done
	# Block by block with ticks, in batches with ticks, and in batches
	# without (the graph's fast path).
	for mode in blocks.tick batch.tick batch.fast; do
		[[ $kind == ids && $mode != batch.tick ]] && continue
		opts=()
		[[ $mode == blocks.* ]] && opts+=(--block:show-blocks)
		[[ $mode == *.tick ]] && opts+=(--event:tick)
		(cd "$sbwork" &&
		 "$hwt" ptxed --raw "$t.bin:$org" "${opts[@]}" --no-inst \
			--sb:compact --sb:offset --sb:switch --sb:warn "${cfg[@]}" \
			${ks:+--pevent:kernel-start "$ks"} \
			--pevent:primary "$sb" --pt "$t.pt" 2>&1 |
			awk "$as_ipt_sb" | awk "$merge_runs") >"$sb.$mode.hwt"
		if cmp -s "$sb.${mode#*.}.libipt" "$sb.$mode.hwt"; then
			same=$((same + 1))
		elif [[ -z $first_diff ]]; then
			first_diff=$sb.$mode
		fi
	done
}
for ptt in "$libipt_dir"/src/test/pevent/src/*.ptt; do
	t=$(basename "$ptt" .ptt)
	(cd "$sbwork" && "$libipt_dir/build/bin/pttc" "$ptt" >/dev/null) ||
		{ bad "sideband $t: pttc failed"; continue; }
	org=$(awk '$1 == "org" { print $2; exit }' "$ptt")
	kmid=$(printf '%#x' $((org + 8)))
	same=0 first_diff=""
	for ((seed = 1; seed <= sb_seeds; seed++)); do
		# Without a kernel start (all user space) and with one in the
		# middle of the code, so that the trace moves in and out.
		for ks in "" "$kmid"; do
			# Plain streams (one layout) three ways; streams
			# whose records name their events, each with its
			# layout (--pevent:sample-config), in batches.
			for kind in plain ids; do
				sb=$sbwork/$t-$seed${ks:+-k}-$kind.sb
				sb_run "$sb" "$kind" "$ks"
			done
		done
	done
	sb_same=$((sb_same + same))
	if [[ -z $first_diff ]]; then
		ok "sideband $t: $same runs of $((4 * sb_seeds)) streams, same output"
	else
		want=${first_diff%.*.*}.${first_diff##*.}.libipt
		bad "sideband $t: $((8 * sb_seeds - same)) of $((8 * sb_seeds)) runs differ: diff $want $first_diff.hwt"
		diff "$want" "$first_diff.hwt" | head -n 6 | sed 's/^/        /'
	fi
done
echo "   sideband: $sb_same runs the same as libipt-sb's"

# perf.data to ptxed the way libipt documents it: a program recorded
# with hwt record (the portable source), its trace and sideband cut out
# by libipt's perf-read-aux.bash and perf-read-sideband.bash, the options
# from its perf-get-opts.bash (per-event sample types, time conversion);
# hwt ptxed must decode what hwt flow decodes from the perf.data itself,
# without errors.
echo "-- perf.data through libipt's scripts (hwt record, hwt ptxed)"
scripts=$libipt_dir/src/script
command -v gawk >/dev/null || die "gawk is needed by libipt's scripts"
command -v perf >/dev/null || die "perf is needed by libipt's scripts"
pdwork=$work/perfdata
rm -rf "$pdwork"
mkdir -p "$pdwork"
printf 'hwt %.0s' {1..2000} >"$pdwork/input.txt"
printf '\xff\xe0' >"$pdwork/dummy.bin"
pd_check() {
	local name=$1 dir=$pdwork/$1 want got opts aux n=0 same=0 k
	local -a ref=() words sbs
	shift
	mkdir -p "$dir"
	(cd "$dir" && "$hwt" record -q -o perf.data -- "$@" >/dev/null) ||
		{ bad "perf.data $name: hwt record failed"; return; }
	(cd "$dir" && bash "$scripts/perf-read-aux.bash" perf.data &&
	 bash "$scripts/perf-read-sideband.bash" perf.data) >"$dir/scripts.log" 2>&1 ||
		{ bad "perf.data $name: libipt's scripts failed: $dir/scripts.log"; return; }
	opts=$(cd "$dir" && bash "$scripts/perf-get-opts.bash" perf.data) ||
		{ bad "perf.data $name: perf-get-opts.bash failed"; return; }
	# The same sideband setup for ipt_sb (libipt-sb), which takes one
	# file (hwt record's streams all have "cpu 0").
	sbs=("$dir"/perf.data-sideband*.pevent)
	[[ ${#sbs[@]} -eq 1 && -f ${sbs[0]} ]] ||
		{ bad "perf.data $name: not one sideband file: ${sbs[*]}"; return; }
	read -ra words <<<"$opts"
	for ((k = 0; k < ${#words[@]}; k++)); do
		case ${words[k]} in
		--pevent:sample-type) ref+=(--sample-type "${words[k + 1]}") ;;
		--pevent:sample-config) ref+=(--sample-config "${words[k + 1]}") ;;
		esac
	done
	# Every stream, against libipt-sb: the same records, switches and
	# events around the same flow, errors included (a dummy image first,
	# as libipt's ptxed wants one).
	for aux in "$dir"/perf.data-aux-idx*.bin; do
		n=$((n + 1))
		# shellcheck disable=SC2086 # the options are words
		(cd "$dir" && "$ipt_sb" "${ref[@]}" --raw "$pdwork/dummy.bin:0x1000" \
			--pevent "${sbs[0]}" "$aux" 2>&1 |
			awk "$merge_runs") >"$aux.libipt"
		# shellcheck disable=SC2086
		(cd "$dir" && "$hwt" ptxed $opts --raw "$pdwork/dummy.bin:0x1000" \
			--sb:compact --sb:offset --sb:switch --sb:warn --no-inst \
			--pt "$aux" 2>&1 |
			awk "$as_ipt_sb" | awk "$merge_runs") >"$aux.hwt"
		cmp -s "$aux.libipt" "$aux.hwt" && same=$((same + 1))
	done
	if [[ $n -gt 0 && $same -eq $n ]]; then
		ok "perf.data $name: $n stream(s), hwt ptxed the same as libipt-sb"
	else
		bad "perf.data $name: $((n - same)) of $n streams differ from libipt-sb (diff $dir/*.libipt *.hwt)"
	fi
	[[ $n -eq 1 ]] || return 0
	# One process: hwt ptxed decodes what hwt flow decodes, no errors.
	# (per stream, then all streams: the last)
	want=$("$hwt" flow --stat "$dir/perf.data" 2>&1 |
		awk '$1 == "insn:" { n = $2 } END { print n }')
	# shellcheck disable=SC2086 # the options are words
	got=$(cd "$dir" && "$hwt" ptxed $opts --pt perf.data-aux-idx0.bin \
		--no-inst --stat --stat:insn 2>&1 |
		awk '/error/ { e++ } $1 == "insn:" { sub(/\.$/, "", $2); n = $2 }
		     END { printf "%s errors %d", n, e }')
	if [[ -n $want && $got == "$want errors 0" ]]; then
		ok "perf.data $name: hwt ptxed $(grep -o -- '--pevent:[a-z-]*' <<<"$opts" | sort -u | tr '\n' ' ')gives insn $want as hwt flow"
	else
		bad "perf.data $name: hwt ptxed insn '$got', hwt flow insn '$want' ($dir)"
	fi
}
pd_check echo /bin/echo hello
pd_check gzip gzip -c "$pdwork/input.txt"
# Three processes, one sideband file (all on "cpu 0"): libipt-sb switches
# each stream's image at every process's ITRACE_START, so some blocks
# fail to decode; hwt ptxed must fail exactly where libipt does.
pd_check sh /bin/sh -c '/bin/echo a; /bin/true'

echo "libipt-crosscheck: $passed passed, $failed failed"
[[ $failed -eq 0 ]]

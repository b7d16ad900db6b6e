# SPDX-License-Identifier: BSD-2-Clause
# Run every libFuzzer target built in BUILD_FUZZ_DIR, sharing SECONDS
# between them (`make fuzz` calls this after building with -DHWT_FUZZ=ON).
#
#   bash fuzz/run.sh BUILD_FUZZ_DIR SECONDS
#
# Each fuzz_NAME starts from its seed corpus fuzz/corpus/NAME/ plus every
# *.pt file (*.sb for fuzz_cli_sideband) below the directories listed
# (colon-separated) in $HWT_FUZZ_EXTRA_SEEDS (CI points it at the traces
# and sideband files libipt's pttc suite generates). Corpora are copied to a scratch directory, so the repository
# is never modified; new inputs found stay there. Exits non-zero if any
# target crashes or fails a check; the scratch directory (with the crash
# artifacts) is then kept and named.
set -u

if [ $# -ne 2 ]; then
	echo "usage: $0 BUILD_FUZZ_DIR SECONDS" >&2
	exit 2
fi
build=$1
seconds=$2
case $seconds in
'' | *[!0-9]*)
	echo "$0: SECONDS must be a positive integer, not '$seconds'" >&2
	exit 2
	;;
esac

here=$(cd "$(dirname "$0")" && pwd)
targets=()
for t in "$build"/fuzz_*; do
	[ -f "$t" ] && [ -x "$t" ] && targets+=("$t")
done
if [ ${#targets[@]} -eq 0 ]; then
	echo "$0: no fuzz_* targets in $build (configure with -DHWT_FUZZ=ON)" >&2
	exit 2
fi

per=$((seconds / ${#targets[@]}))
[ "$per" -ge 1 ] || per=1

scratch=$(mktemp -d "${TMPDIR:-/tmp}/hwt-fuzz.XXXXXX")
failed=0

for t in "${targets[@]}"; do
	name=$(basename "$t")
	short=${name#fuzz_}
	work=$scratch/$short
	mkdir -p "$work/corpus" "$work/artifacts"

	nseeds=0
	# The sideband target reads pttc's sideband files, the rest traces.
	pattern='*.pt'
	[ "$short" = cli_sideband ] && pattern='*.sb'
	if [ -d "$here/corpus/$short" ]; then
		cp -- "$here/corpus/$short"/* "$work/corpus/" 2>/dev/null
	fi
	if [ -n "${HWT_FUZZ_EXTRA_SEEDS:-}" ]; then
		IFS=: read -r -a extra <<<"$HWT_FUZZ_EXTRA_SEEDS"
		for dir in "${extra[@]}"; do
			[ -n "$dir" ] || continue
			if [ ! -e "$dir" ]; then
				echo "$name: extra seed dir $dir does not exist" >&2
				continue
			fi
			# Prefix with a counter: seeds from different
			# directories may share a name.
			while IFS= read -r -d '' f; do
				nseeds=$((nseeds + 1))
				cp -- "$f" "$work/corpus/extra-$nseeds-$(basename "$f")"
			done < <(find "$dir" -type f -name "$pattern" -print0)
		done
	fi
	total=$(find "$work/corpus" -type f | wc -l)

	echo "== $name: ${per}s, $total seed(s) ($nseeds extra)"
	"$t" -max_total_time="$per" -timeout=25 -print_final_stats=1 \
		-artifact_prefix="$work/artifacts/" "$work/corpus" \
		>"$work/log" 2>&1
	rc=$?
	grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb|#[0-9]+ +DONE)' \
		"$work/log" | sed "s/^/   /"
	if [ $rc -ne 0 ]; then
		failed=1
		echo "!! $name failed (exit $rc); last lines of $work/log:" >&2
		tail -n 40 "$work/log" >&2
		find "$work/artifacts" -type f -printf '   artifact: %p\n' >&2
	fi
done

if [ $failed -ne 0 ]; then
	echo "fuzz: FAILED; corpora, logs and artifacts kept in $scratch" >&2
	exit 1
fi
rm -rf "$scratch"
echo "fuzz: all ${#targets[@]} target(s) ran ${per}s each without a failure"

# SPDX-License-Identifier: BSD-2-Clause
# Bad input to `hwt dump` and `hwt ptdump`: every case must end in a clear
# one-line error on stderr and a non-zero exit, never a crash (exit code
# 128+ or a sanitizer report) or a hang. Random bytes must not crash, and
# the decode errors they cause must name offsets.
#
#   bash tests/cli/bad_input.sh path/to/hwt BUILD_DIR
. "$(dirname "$0")/lib.bash" bad_input "$@"


show() {
	echo "  command exit code: $rc" >&2
	echo "  stderr:" >&2
	head -n 10 "$tmp/err" | sed 's/^/    /' >&2
	echo "  stdout (first lines):" >&2
	head -n 5 "$tmp/out" | sed 's/^/    /' >&2
}

# expect_error DESC REGEX CMD...: non-zero exit, nothing on stdout, and
# exactly one line on stderr that matches REGEX (extended, as grep -E).
expect_error() {
	local regex=$2
	local d=$1

	shift 2
	run "$d" "$@"
	no_crash || return
	if [ "$rc" -eq 0 ]; then
		fail "$desc: exit code 0"
		show
		return
	fi
	if [ -s "$tmp/out" ]; then
		fail "$desc: unexpected output on stdout"
		show
		return
	fi
	if [ "$(wc -l <"$tmp/err")" -ne 1 ]; then
		fail "$desc: want one line on stderr, got $(wc -l <"$tmp/err")"
		show
		return
	fi
	if ! grep -qE -- "$regex" "$tmp/err"; then
		fail "$desc: stderr does not match /$regex/"
		show
	fi
}

# Deterministic pseudo-random bytes (Park-Miller; exact in awk's doubles).
random_file() {
	local file=$1 size=$2 seed=$3

	awk -v n="$size" -v s="$seed" 'BEGIN {
		x = s % 2147483646 + 1
		for (i = 0; i < n; i++) {
			x = (x * 16807) % 2147483647
			printf "\\%03o", int(x / 8388608) % 256
		}
	}' >"$file.esc"
	printf '%b' "$(cat "$file.esc")" >"$file"
	rm -f "$file.esc"
}

psb='\002\202\002\202\002\202\002\202\002\202\002\202\002\202\002\202'
psbend='\002\043'

# A small valid trace: PSB, PSBEND, TNT-8, PAD (20 bytes).
printf '%b' "$psb$psbend"'\006\000' >"$tmp/ok.pt"
: >"$tmp/empty.pt"
mkdir "$tmp/dir.pt"

for cmd in dump ptdump; do
	if [ $cmd = dump ]; then
		p='^hwt dump: '
	else
		p='^ptdump: '
	fi

	expect_error "$cmd: no arguments" "$p.*([Nn]o .*(file|trace)|usage)" \
		"$hwt" $cmd
	expect_error "$cmd: non-existent file" \
		"${p}cannot open $tmp/missing.pt: No such file" \
		"$hwt" $cmd "$tmp/missing.pt"
	expect_error "$cmd: empty file" "$p.*empty" "$hwt" $cmd "$tmp/empty.pt"
	expect_error "$cmd: directory" "$p.*not a regular file" \
		"$hwt" $cmd "$tmp/dir.pt"
	expect_error "$cmd: unknown option" "${p}unknown option.*--bogus" \
		"$hwt" $cmd --bogus "$tmp/ok.pt"
	# (ptdump, as libipt's, wants the file last.)
	if [ $cmd = dump ]; then
		set -- "$tmp/ok.pt" --cpu
	else
		set -- --cpu
	fi
	expect_error "$cmd: option without its value" \
		"$p.*--cpu.*(missing|needs|requires|argument|value)" \
		"$hwt" $cmd "$@"
	expect_error "$cmd: option after the file" "$p" \
		"$hwt" $cmd "$tmp/ok.pt" --bogus
	expect_error "$cmd: bad option value" "$p.*(cpu|f/m)" \
		"$hwt" $cmd --cpu nonsense "$tmp/ok.pt"
	expect_error "$cmd: two files" "$p" "$hwt" $cmd "$tmp/ok.pt" "$tmp/ok.pt"

	# Ranges (the file is 20 = 0x14 bytes).
	expect_error "$cmd: range start beyond the end" \
		"$p.*0x100.*beyond the end" "$hwt" $cmd "$tmp/ok.pt:0x100"
	expect_error "$cmd: range start at the end" "$p.*0x14.*beyond the end" \
		"$hwt" $cmd "$tmp/ok.pt:20"
	expect_error "$cmd: range end beyond the end" "$p.*bad range" \
		"$hwt" $cmd "$tmp/ok.pt:0-0x100"
	expect_error "$cmd: range end before start" "$p.*bad range" \
		"$hwt" $cmd "$tmp/ok.pt:8-4"
	expect_error "$cmd: empty range" "$p.*bad range" \
		"$hwt" $cmd "$tmp/ok.pt:4-4"
	# Not a range: then it is part of the file name, which is missing.
	expect_error "$cmd: malformed range" "${p}cannot open .*ok.pt:abc" \
		"$hwt" $cmd "$tmp/ok.pt:abc"
	expect_error "$cmd: malformed range (trailing dash)" \
		"${p}cannot open .*ok.pt:4-" "$hwt" $cmd "$tmp/ok.pt:4-"

	# The valid trace itself is fine (so the cases above fail for the
	# reason they test).
	run "$cmd: valid trace" "$hwt" $cmd "$tmp/ok.pt"
	if no_crash && [ "$rc" -ne 0 ]; then
		fail "$desc: exit $rc"
		show
	fi
done

# Random bytes, alone (no PSB) and after a PSB, in several sizes, with
# output options that take different paths. No crash; decode errors name
# their offset.
i=0
for size in 1 2 15 16 17 100 1000 4096 65536; do
	i=$((i + 1))
	random_file "$tmp/rnd$i.pt" $size $((i * 7919))
	{
		printf '%b' "$psb$psbend"
		cat "$tmp/rnd$i.pt"
	} >"$tmp/psbrnd$i.pt"

	for f in "$tmp/rnd$i.pt" "$tmp/psbrnd$i.pt"; do
		for opts in "" "--raw --lastip" "--time --time-delta --stat" \
			"--no-sync --no-pad" "--quiet"; do
			# shellcheck disable=SC2086
			run "dump $opts $(basename "$f") ($size)" \
				"$hwt" dump $opts "$f"
			no_crash || continue
			# Every error line starts with its offset or names one
			# (the closing summary only counts them).
			bad=$(grep -hi 'error' "$tmp/out" "$tmp/err" |
				grep -vE '^[0-9a-f]{8,} +error|offset 0x[0-9a-f]+' |
				grep -vE '[0-9]+ decode errors?\b|^errors +[0-9]+ +[0-9]+$' |
				head -n 3)
			if [ -n "$bad" ]; then
				fail "$desc: error without an offset: $bad"
			fi
		done
		for opts in "" "--raw --lastip --exec-mode" \
			"--time --time-delta" "--tcal" "--no-sync --no-pad" \
			"--quiet" "--no-timing --no-cyc --no-offset"; do
			# shellcheck disable=SC2086
			run "ptdump $opts $(basename "$f") ($size)" \
				"$hwt" ptdump $opts "$f"
			no_crash || continue
			if [ "$rc" -ne 0 ]; then
				fail "$desc: exit $rc"
				show
			fi
			# ptdump's format: [OFFSET: what: why].
			bad=$(grep -i 'error' "$tmp/out" |
				grep -vE '^\[[0-9a-f]+: ' | head -n 3)
			if [ -n "$bad" ]; then
				fail "$desc: error without an offset: $bad"
			fi
		done
	done
	# A decode that hits garbage after a PSB reports it (dump: exit 1
	# and an error line) -- except when the garbage is valid packets.
	run "dump psbrnd$i ($size)" "$hwt" dump "$tmp/psbrnd$i.pt"
	if [ "$rc" -ne 0 ] && ! grep -qE '^[0-9a-f]{8,} +error' "$tmp/out"; then
		fail "$desc: exit $rc but no error line"
		show
	fi
done

finish

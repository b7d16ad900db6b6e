# SPDX-License-Identifier: BSD-2-Clause
# `hwt sideband` and `hwt info` on perf.data files the installed perf
# writes (perf record -e dummy: sideband only, works without a trace
# unit). hwt's listing is compared with `perf script --show-mmap-events
# --show-task-events` record by record: type, pid/tid, time, and for
# mappings start, length, page offset and path. Then bad input: every case
# a one-line error, a non-zero exit, never a crash.
#
#   bash tests/cli/sideband.sh path/to/hwt BUILD_DIR
. "$(dirname "$0")/lib.bash" sideband "$@"

# perf's listing -> "TIME TYPE PID/TID DETAILS", hex without 0x and
# leading zeros. perf script lines look like
#   COMM PID [CPU] TIME: PERF_RECORD_MMAP2 PID/TID: [0xSTART(0xLEN) @ PGOFF
#       MAJ:MIN INO GEN]: PROT PATH
#   ... PERF_RECORD_COMM exec: NAME:PID/TID
#   ... PERF_RECORD_FORK(PID:TID):(PPID:PTID)
norm_perf() {
	awk '
	function hex(s) {
		sub(/^0x/, "", s)
		sub(/^0+/, "", s)
		return s == "" ? "0" : tolower(s)
	}
	{
		for (i = 1; i <= NF; i++)
			if ($i ~ /^PERF_RECORD_/)
				break
		if (i > NF)
			next
		time = $(i - 1)
		sub(/:$/, "", time)
		type = $i
		if (type ~ /^PERF_RECORD_(MMAP|MMAP2)$/) {
			pt = $(i + 1)
			sub(/:$/, "", pt)
			b = $(i + 2)
			sub(/^\[/, "", b)
			split(b, se, "(")
			len = se[2]
			sub(/\)$/, "", len)
			pgoff = $(i + 4)
			sub(/\]:$/, "", pgoff)
			for (j = i + 4; j <= NF; j++)
				if ($j ~ /\]:$/)
					break
			path = $(j + 2)
			for (k = j + 3; k <= NF; k++)
				path = path " " $k
			print time, type, pt, hex(se[1]), hex(len), hex(pgoff), path
		} else if (type ~ /^PERF_RECORD_COMM/) {
			exec = ""
			if (type == "PERF_RECORD_COMM" && $(i + 1) == "exec:") {
				exec = "exec "
				rest = $(i + 2)
				for (k = i + 3; k <= NF; k++)
					rest = rest " " $k
			} else {
				rest = $(i + 1)
				for (k = i + 2; k <= NF; k++)
					rest = rest " " $k
			}
			n = match(rest, /:[-0-9]+\/[-0-9]+$/)
			print time, "PERF_RECORD_COMM", substr(rest, n + 1), \
				exec substr(rest, 1, n - 1)
		} else if (type ~ /^PERF_RECORD_(FORK|EXIT)\(/) {
			t = type
			gsub(/[():]/, " ", t)
			split(t, f, " ")
			print time, f[1], f[2] "/" f[3], f[4] "/" f[5]
		}
	}'
}

# hwt's listing -> the same: "TIME CPU PID/TID TYPE DETAILS".
norm_hwt() {
	awk '
	function hex(s) {
		sub(/^0x/, "", s)
		sub(/^0+/, "", s)
		return s == "" ? "0" : tolower(s)
	}
	$4 ~ /^PERF_RECORD_(MMAP|MMAP2)$/ {
		path = $8
		for (k = 9; k <= NF; k++)
			path = path " " $k
		print $1, $4, $3, hex($5), hex($6), hex($7), path
		next
	}
	$4 == "PERF_RECORD_COMM" {
		rest = $5
		for (k = 6; k <= NF; k++)
			rest = rest " " $k
		sub(/^exec: /, "exec ", rest)
		print $1, $4, $3, rest
		next
	}
	$4 ~ /^PERF_RECORD_(FORK|EXIT)$/ {
		print $1, $4, $3, $6
	}'
}

# count FILE TYPE: lines of TYPE in a normalised listing.
count() {
	awk -v t="$2" '$2 == t { n++ } END { print n + 0 }' "$1"
}

# compare NAME DATA: hwt sideband vs perf script on DATA.
compare() {
	name=$1
	data=$2
	check
	if ! perf script --show-mmap-events --show-task-events -i "$data" \
		>"$tmp/$name.perf.raw" 2>"$tmp/$name.perf.err"; then
		fail "$name: perf script failed on its own file"
		head -n 5 "$tmp/$name.perf.err" >&2
		return
	fi
	"$hwt" sideband "$data" >"$tmp/$name.hwt.raw" 2>"$tmp/$name.hwt.err"
	rc=$?
	if [ $rc -ne 0 ]; then
		fail "$name: hwt sideband exit $rc"
		head -n 5 "$tmp/$name.hwt.err" >&2
		return
	fi
	norm_perf <"$tmp/$name.perf.raw" >"$tmp/$name.perf"
	norm_hwt <"$tmp/$name.hwt.raw" >"$tmp/$name.hwt"
	n=$(wc -l <"$tmp/$name.perf")
	if [ "$n" -lt 3 ]; then
		fail "$name: perf script listed only $n records"
		return
	fi
	if ! cmp -s "$tmp/$name.perf" "$tmp/$name.hwt"; then
		fail "$name: hwt sideband differs from perf script" \
			"(< perf, > hwt)"
		diff "$tmp/$name.perf" "$tmp/$name.hwt" | head -n 20 >&2
		return
	fi
	echo "$name: $n records agree with perf script" \
		"($(count "$tmp/$name.hwt" PERF_RECORD_MMAP2) MMAP2," \
		"$(count "$tmp/$name.hwt" PERF_RECORD_COMM) COMM," \
		"$(count "$tmp/$name.hwt" PERF_RECORD_FORK) FORK," \
		"$(count "$tmp/$name.hwt" PERF_RECORD_EXIT) EXIT)"
}

# expect NAME FILE TYPE MIN: at least MIN records of TYPE.
expect_at_least() {
	check
	got=$(count "$2" "$3")
	if [ "$got" -lt "$4" ]; then
		fail "$1: $got $3 records, expected at least $4"
	fi
}

# record NAME CMD...: a perf.data of CMD; 1 if perf cannot record here.
record() {
	name=$1
	shift
	perf record -q -e dummy -o "$tmp/$name.data" -- "$@" \
		>"$tmp/$name.rec.out" 2>"$tmp/$name.rec.err" ||
		return 1
	[ -s "$tmp/$name.data" ]
}

have_perf=0
if command -v perf >/dev/null 2>&1 && record probe /bin/true; then
	have_perf=1
else
	echo "SKIP: perf missing or cannot record here: comparisons skipped"
fi

if [ $have_perf -eq 1 ]; then
	compare true "$tmp/probe.data"
	expect_at_least true "$tmp/true.hwt" PERF_RECORD_MMAP2 1

	if record pipeline sh -c 'ls / | wc -l >/dev/null'; then
		compare pipeline "$tmp/pipeline.data"
		# sh forks ls and wc, both exec, all three exit.
		expect_at_least pipeline "$tmp/pipeline.hwt" PERF_RECORD_FORK 2
		expect_at_least pipeline "$tmp/pipeline.hwt" PERF_RECORD_EXIT 3
		check
		if [ "$(grep -c ' exec ' "$tmp/pipeline.hwt")" -lt 3 ]; then
			fail "pipeline: fewer than 3 exec COMMs"
		fi
		# Records chosen (--pid, --tid, -C, --time-range: perf's
		# seconds): the listing's lines of those threads, sample
		# CPUs and times.
		"$hwt" sideband "$tmp/pipeline.data" >"$tmp/sel.all"
		task=$(awk '$3 ~ /^[0-9]+\/[0-9]+$/ { print $3 }' \
			"$tmp/sel.all" | sort -u | tail -n 1)
		times=$(awk '$1 ~ /\./ { print $1 }' "$tmp/sel.all" | sort -u)
		t3=$(echo "$times" | sed -n 3p)
		t6=$(echo "$times" | sed -n 6p)
		for sel in "--tid ${task#*/}" "--pid ${task%/*}" "-C 0" \
			"--time-range $t3,${t6}999" "--pid ${task%/*} --time-range $t3,"; do
			# shellcheck disable=SC2086
			"$hwt" sideband $sel "$tmp/pipeline.data" \
				>"$tmp/sel.got" 2>"$tmp/sel.err"
			# shellcheck disable=SC2086
			set -- $sel
			awk -v o="$1" -v v="$2" -v o2="${3:-}" -v v2="${4:-}" '
			function ok(o, v,   a, b, w) {
				split($3, a, "/")
				if (o == "--tid") return a[2] == v
				if (o == "--pid") return a[1] == v
				if (o == "-C") return $2 == v
				if (o == "--time-range") {
					split(v, w, ",")
					t = $1
					if ($1 !~ /\./) return 0
					return (w[1] == "" || t >= w[1] + 0) &&
					       (w[2] == "" || t <= w[2] + 0)
				}
				return 1
			}
			ok(o, v) && (o2 == "" || ok(o2, v2))' \
				"$tmp/sel.all" >"$tmp/sel.want"
			check
			cmp -s "$tmp/sel.want" "$tmp/sel.got" ||
				fail "sideband $sel: not the listing's records"
		done
		check
		[ -s "$tmp/sel.got" ] && [ "$(wc -l <"$tmp/sel.got")" -lt \
			"$(wc -l <"$tmp/sel.all")" ] ||
			fail "sideband: the last choice chose all or none"
		"$hwt" sideband --time-range 0x1,0x2 "$tmp/pipeline.data" \
			>/dev/null 2>"$tmp/sel.err" &&
			fail "sideband --time-range 0x1,0x2: exit 0"
		grep -q "give seconds" "$tmp/sel.err" ||
			fail "sideband --time-range 0x1,0x2: no reason given"
	else
		fail "pipeline: perf record failed"
	fi

	if [ -x "$build/pdthreads" ] && record threads "$build/pdthreads"; then
		compare threads "$tmp/threads.data"
		# 3 threads and a child: 4 FORKs, 5 EXITs, named threads.
		expect_at_least threads "$tmp/threads.hwt" PERF_RECORD_FORK 4
		expect_at_least threads "$tmp/threads.hwt" PERF_RECORD_EXIT 5
		check
		if [ "$(grep -c ' pdworker' "$tmp/threads.hwt")" -ne 3 ]; then
			fail "threads: expected 3 COMMs of the named threads"
		fi
	else
		echo "SKIP: $build/pdthreads missing: threaded case skipped"
	fi

	# perf record -z: the sideband inside PERF_RECORD_COMPRESSED (zstd),
	# records cut across compressed records included; perf may lack -z.
	if perf record -q -z -e dummy -o "$tmp/z.data" -- \
		sh -c 'ls -R /usr/include >/dev/null; ls / | wc -l >/dev/null' \
		>/dev/null 2>&1 && [ -s "$tmp/z.data" ]; then
		compare compressed "$tmp/z.data"
		expect_at_least compressed "$tmp/compressed.hwt" PERF_RECORD_EXIT 3
		check
		"$hwt" info "$tmp/z.data" | grep -q 'PERF_RECORD_COMPRESSED' ||
			fail "compressed: hwt info counts no PERF_RECORD_COMPRESSED"
	else
		echo "SKIP: perf record -z is not available: compressed case skipped"
	fi

	# Pipe mode: the same stream read by perf and by hwt from stdin.
	if perf record -q -e dummy -o - -- sh -c 'true | true' \
		>"$tmp/pipe.data" 2>/dev/null && [ -s "$tmp/pipe.data" ]; then
		check
		perf script --show-mmap-events --show-task-events -i - \
			<"$tmp/pipe.data" 2>/dev/null | norm_perf >"$tmp/pipe.perf"
		"$hwt" sideband - <"$tmp/pipe.data" 2>"$tmp/pipe.err" |
			norm_hwt >"$tmp/pipe.hwt"
		if [ ! -s "$tmp/pipe.perf" ]; then
			fail "pipe: perf script listed nothing"
		elif ! cmp -s "$tmp/pipe.perf" "$tmp/pipe.hwt"; then
			fail "pipe: hwt sideband - differs from perf script"
			diff "$tmp/pipe.perf" "$tmp/pipe.hwt" | head -n 20 >&2
			head -n 3 "$tmp/pipe.err" >&2
		else
			echo "pipe: $(wc -l <"$tmp/pipe.hwt") records agree"
		fi
	fi

	# hwt info on the pipeline: the threads and counts the listing has.
	check
	if "$hwt" info "$tmp/pipeline.data" >"$tmp/info.out" 2>"$tmp/info.err"
	then
		nmmap2=$(count "$tmp/pipeline.hwt" PERF_RECORD_MMAP2)
		nfork=$(count "$tmp/pipeline.hwt" PERF_RECORD_FORK)
		grep -q "^  PERF_RECORD_MMAP2 *$nmmap2\$" "$tmp/info.out" ||
			fail "info: MMAP2 count is not $nmmap2"
		grep -q "^  PERF_RECORD_FORK *$nfork\$" "$tmp/info.out" ||
			fail "info: FORK count is not $nfork"
		grep -q "^events *1\$" "$tmp/info.out" ||
			fail "info: not 1 event"
		grep -q "^  dummy .*type 1 (software)" "$tmp/info.out" ||
			fail "info: the dummy event is not named"
		grep -q "tid [0-9]* ls\$" "$tmp/info.out" ||
			fail "info: thread 'ls' missing"
		grep -q "tid [0-9]* wc\$" "$tmp/info.out" ||
			fail "info: thread 'wc' missing"
		grep -q "^lost data *none\$" "$tmp/info.out" ||
			fail "info: lost data not reported as none"
		grep -q "^arch *$(uname -m)\$" "$tmp/info.out" ||
			fail "info: arch is not $(uname -m)"
	else
		fail "info: exit status $?"
		head -n 5 "$tmp/info.err" >&2
	fi
fi

# ---- files hwt's writer made (tests/tools/mkptdata): lost data, AUX ----

mkptdata=$build/mkptdata
ptgen=$build/ptgen

# has FILE REGEX DESC: a line of FILE matches.
has() {
	check
	grep -qE "$2" "$1" || fail "$3 (no line matching '$2')"
}

if [ -x "$mkptdata" ]; then
	# One record of each type, among them LOST 7, LOST_SAMPLES 9, an AUX
	# record flagged TRUNCATED and an AUXTRACE_ERROR.
	"$mkptdata" --all-records "$tmp/all.data" >"$tmp/all.list" ||
		fail "mkptdata --all-records failed"
	"$hwt" info "$tmp/all.data" >"$tmp/all.info" 2>&1 ||
		fail "info on mkptdata --all-records: exit $?"
	has "$tmp/all.info" '^lost data$' "info: lost data not reported"
	has "$tmp/all.info" '^  1 LOST records: 7 events lost$' \
		"info: LOST not counted"
	has "$tmp/all.info" '^  1 LOST_SAMPLES records: 9 samples lost$' \
		"info: LOST_SAMPLES not counted"
	has "$tmp/all.info" '^  1 of 1 AUX records TRUNCATED' \
		"info: TRUNCATED AUX not counted"
	has "$tmp/all.info" '^  1 AUXTRACE_ERROR records$' \
		"info: AUXTRACE_ERROR not counted"
	has "$tmp/all.info" 'hwt test error' \
		"info: the AUXTRACE_ERROR's message is not shown"
	"$hwt" sideband "$tmp/all.data" >"$tmp/all.sb" 2>&1 ||
		fail "sideband on mkptdata --all-records: exit $?"
	has "$tmp/all.sb" ' PERF_RECORD_LOST id [0-9]+ lost 7$' \
		"sideband: LOST"
	has "$tmp/all.sb" ' PERF_RECORD_AUX offset 0x1000 size 0x2000 flags 0x1 TRUNCATED$' \
		"sideband: AUX with its flag"
	has "$tmp/all.sb" '^ *1\.000021 .* PERF_RECORD_AUXTRACE_ERROR ' \
		"sideband: AUXTRACE_ERROR at its own time"
	check
	# Every record mkptdata wrote but the sample and the round ends.
	want=$(grep -cvE '^PERF_RECORD_(SAMPLE|FINISHED_ROUND)' "$tmp/all.list")
	got=$(wc -l <"$tmp/all.sb")
	[ "$got" -eq "$want" ] ||
		fail "sideband: $got lines for $want sideband records"
	# Sorted by time: the listing's times never go back.
	check
	awk '$1 != "-" { if ($1 + 0 < last) bad = 1; last = $1 + 0 }
	     END { exit bad }' "$tmp/all.sb" ||
		fail "sideband: times out of order"
else
	echo "SKIP: $mkptdata missing: writer-made files skipped"
fi

if [ -x "$mkptdata" ] && [ -x "$ptgen" ] &&
	"$ptgen" "$tmp/calls.pt" <"$src/examples/calls.ptdesc" &&
	"$mkptdata" --pt "$tmp/calls.pt" --elf /bin/true --pid 4321 \
		--comm ptprog "$tmp/pt.data" >/dev/null; then
	# An intel_pt file in thread mode: its AUXTRACE_INFO parameters and
	# one stream holding the trace (padded to 8 bytes, as perf does).
	"$hwt" info "$tmp/pt.data" >"$tmp/pt.info" 2>&1 ||
		fail "info on an intel_pt file: exit $?"
	bytes=$(( ($(wc -c <"$tmp/calls.pt") + 7) / 8 * 8 ))
	has "$tmp/pt.info" '^auxtrace +intel_pt \(type 1\)$' \
		"info: intel_pt not recognised"
	has "$tmp/pt.info" 'per_cpu_mmaps 0' "info: intel_pt parameters"
	has "$tmp/pt.info" '^aux streams +1$' "info: not one AUX stream"
	has "$tmp/pt.info" "^  idx 0 cpu -1 tid 4321: $bytes bytes in 1 chunks\$" \
		"info: the stream's bytes"
	has "$tmp/pt.info" '^  pid 4321 tid 4321 ptprog$' "info: the thread"
	has "$tmp/pt.info" '^  intel_pt//u .*type [0-9]+ \(pmu\)' \
		"info: the intel_pt event"
else
	echo "SKIP: ptgen or mkptdata missing or failing: intel_pt info skipped"
fi

# ---- bad input ----

# bad DESC CMD FILE: a one-line error on stderr, exit 1, no crash.
bad() {
	desc=$1
	shift
	check
	timeout 60 "$@" >"$tmp/bad.out" 2>"$tmp/bad.err"
	rc=$?
	if [ $rc -eq 124 ]; then
		fail "$desc: timed out"
	elif [ $rc -ge 128 ]; then
		fail "$desc: crashed (exit $rc)"
	elif [ $rc -eq 0 ]; then
		fail "$desc: exit status 0"
	elif grep -qE 'Sanitizer|runtime error:' "$tmp/bad.err"; then
		fail "$desc: sanitizer report"
	elif [ "$(wc -l <"$tmp/bad.err")" -ne 1 ] ||
		! grep -q '^hwt [a-z]*: ' "$tmp/bad.err"; then
		fail "$desc: not a one-line 'hwt CMD: ...' error"
		head -n 5 "$tmp/bad.err" >&2
	fi
}

: >"$tmp/empty"
# Deterministic junk, and junk behind perf's magic.
awk 'BEGIN { srand(4); for (i = 0; i < 4096; i++)
	printf "%c", 1 + int(rand() * 255) }' >"$tmp/random"
{ printf 'PERFILE2'; cat "$tmp/random"; } >"$tmp/magic-random"
# A PT trace: PSBs.
for i in 1 2 3 4 5 6 7 8; do printf '\002\202'; done >"$tmp/pt.bin"

for cmd in info sideband; do
	bad "$cmd: missing file" "$hwt" $cmd "$tmp/does-not-exist"
	bad "$cmd: empty file" "$hwt" $cmd "$tmp/empty"
	bad "$cmd: random bytes" "$hwt" $cmd "$tmp/random"
	bad "$cmd: magic and random bytes" "$hwt" $cmd "$tmp/magic-random"
	bad "$cmd: a PT trace" "$hwt" $cmd "$tmp/pt.bin"
	bad "$cmd: a directory" "$hwt" $cmd "$tmp"
	if [ $have_perf -eq 1 ]; then
		pd=$tmp/pipeline.data
		size=$(wc -c <"$pd")
		for cut in 4 8 64 104 200 $((size / 2)) $((size - 1)); do
			head -c $cut "$pd" >"$tmp/cut"
			bad "$cmd: perf.data cut at $cut of $size bytes" \
				"$hwt" $cmd "$tmp/cut"
		done
		# The first record's size (at data offset + 6) broken: the
		# error comes from the record loop, after the header.
		data=$(od -An -t u8 -j 40 -N 8 "$pd" | tr -d ' ')
		for sz in '\000\000' '\377\377' '\007\000'; do
			cp "$pd" "$tmp/broken"
			printf "$sz" | dd of="$tmp/broken" bs=1 \
				seek=$((data + 6)) conv=notrunc 2>/dev/null
			bad "$cmd: first record's size set to $sz" \
				"$hwt" $cmd "$tmp/broken"
		done
	fi
done
check
"$hwt" help info >"$tmp/help" 2>&1 && grep -q '^usage: hwt info' "$tmp/help" ||
	fail "hwt help info"
check
"$hwt" help sideband >"$tmp/help" 2>&1 &&
	grep -q '^usage: hwt sideband' "$tmp/help" || fail "hwt help sideband"

finish

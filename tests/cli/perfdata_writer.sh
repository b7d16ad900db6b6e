# SPDX-License-Identifier: BSD-2-Clause
# perf itself as the judge of hwt's perf.data writer (BUILD_DIR/mkptdata):
#  - a file with one record of every type: `perf script -D` must show each
#    record, in file order, with the cpu, time and fields written, `perf
#    report -D` the same types, `perf script --show-*-events` the same
#    sideband; no warning of a damaged file;
#  - write errors: a full device and a file size limit give a message, and
#    the truncated file still reads in perf, as a prefix of the records;
#  - an intel_pt file built from examples/calls.asm and the trace ptgen
#    writes for it: `perf script --itrace=b` decodes a branch list without
#    errors, every address inside the program; the same as one cpu's
#    buffer, and as each of two cpus' buffers.
# Skips (exit 0) without perf; the intel_pt part without yasm and ld.
#
#   bash tests/cli/perfdata_writer.sh path/to/hwt BUILD_DIR
. "$(dirname "$0")/lib.bash" perfdata_writer "$@"
if ! command -v perf >/dev/null 2>&1 || ! perf version >/dev/null 2>&1; then
	echo "perfdata_writer: perf not installed; skipped" >&2
	exit 0
fi
mk=$build/mkptdata
built "$mk"

# What perf says when it does not like a file. (Warnings about the records'
# content - lost events, a trace error record - are not about the file.)
damaged='fail|invalid|corrupt|unprocessable|incompatib|can.t (open|read|process|parse)|cannot|bad |not a perf|unsupported|truncat|size field|unknown|mismatch|overlap|no samples'

# perf_ok DESC STDERR: no complaint about the file on STDERR.
perf_ok() {
	check
	if grep -qiE "$damaged" "$2"; then
		fail "$1: perf complains:"
		grep -iE "$damaged" "$2" | head -n 5 | sed 's/^/    /' >&2
	fi
}

# The records of `perf script -D` / `perf report -D` output, one per line,
# in file order: OFFSET <tab> TYPE <tab> CPU TIME <tab> TEXT, the text with
# its continuation lines and runs of blanks squeezed to one space.
records() {
	awk '
	function hex(s,   i, v) {
		v = 0
		s = tolower(substr(s, 3))
		for (i = 1; i <= length(s); i++)
			v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
		return v
	}
	function flush() {
		if (head != "") {
			gsub(/[ \t]+/, " ", text)
			print head "\t" text
		}
		head = ""
	}
	/^-?[0-9]+ -?[0-9]+ 0x[0-9a-f]+ \[0x[0-9a-f]+\]: PERF_RECORD_/ {
		flush()
		text = $0
		sub(/^[^]]*\]: /, "", text)
		type = text
		sub(/[(: ].*/, "", type)
		head = sprintf("%d\t%s\t%s %s", hex($3), type, $1, $2)
		next
	}
	head != "" && /^([ \t]|\.\.\.|: )/ { text = text " " $0; next }
	{ flush() }
	END { flush() }' | sort -n -k1,1
}

# compare DESC EXPECTED GOT: records in GOT (from records()) match the
# lines mkptdata printed (TYPE <tab> CPU TIME <tab> STRING...) one by one.
compare() {
	local desc=$1 i n ngot want got wtype wct wtoks gtype gct gtext tok
	local -a exp act

	mapfile -t exp <"$2"
	mapfile -t act <"$3"
	n=${#exp[@]}
	ngot=${#act[@]}
	check
	if [ "$n" -ne "$ngot" ]; then
		fail "$desc: perf shows $ngot records, $n were written"
	fi
	[ "$ngot" -lt "$n" ] && n=$ngot
	for ((i = 0; i < n; i++)); do
		want=${exp[$i]}
		got=${act[$i]}
		IFS=$'\t' read -r wtype wct wtoks <<<"$want"
		IFS=$'\t' read -r _ gtype gct gtext <<<"$got"
		wct=$(cut -d' ' -f1,2 <<<"$wct")	# cpu time, no pid/tid
		check
		if [ "$wtype" != "$gtype" ] || [ "$wct" != "$gct" ]; then
			fail "$desc: record $i: perf shows '$gtype' at cpu/time '$gct', written '$wtype' at '$wct'"
			continue
		fi
		IFS=$'\t' read -r -a toks <<<"$wtoks"
		for tok in "${toks[@]}"; do
			if [[ "$gtext" != *"$tok"* ]]; then
				fail "$desc: record $i ($wtype): '$tok' not in perf's '$gtext'"
			fi
		done
	done
}

# ---- one record of every type -------------------------------------------
f=$tmp/all.data
if ! "$mk" --all-records "$f" >"$tmp/all.exp" 2>"$tmp/mk.err"; then
	fail "mkptdata --all-records: $(cat "$tmp/mk.err")"
fi
echo "perfdata_writer: $(wc -l <"$tmp/all.exp") records written"

check
if ! perf script -D --force -i "$f" >"$tmp/script.out" 2>"$tmp/script.err"; then
	fail "perf script -D rejects the file: $(head -n 3 "$tmp/script.err")"
fi
perf_ok "perf script -D" "$tmp/script.err"
records <"$tmp/script.out" >"$tmp/script.rec"
compare "perf script -D" "$tmp/all.exp" "$tmp/script.rec"

check
if ! perf report -D --force -i "$f" >"$tmp/report.out" 2>"$tmp/report.err"; then
	fail "perf report -D rejects the file: $(head -n 3 "$tmp/report.err")"
fi
perf_ok "perf report -D" "$tmp/report.err"
check
if ! diff <(cut -f1 "$tmp/all.exp") \
	  <(records <"$tmp/report.out" | cut -f2) >"$tmp/diff"; then
	fail "perf report -D: record types differ from what was written:"
	head -n 10 "$tmp/diff" | sed 's/^/    /' >&2
fi
check
if ! grep -q 'hostname : hwt-test' <(perf report --header-only --force -i "$f" 2>&1) ||
   ! grep -q 'cpuid : GenuineIntel,6,142,10' <(perf report --header-only --force -i "$f" 2>&1) ||
   ! grep -q 'event : name = cpu-clock, , id = { 201, 202 }' <(perf report --header-only --force -i "$f" 2>&1); then
	fail "perf report --header-only: features or attrs not as written"
fi

# The sideband as perf script lists it, in time (here: file) order, each
# line with the pid/tid, cpu and time of the record's sample id.
check
if ! perf script --show-mmap-events --show-task-events --show-switch-events \
	-F pid,tid,cpu,time --force -i "$f" >"$tmp/sb.out" 2>"$tmp/sb.err"; then
	fail "perf script --show-*-events rejects the file"
fi
perf_ok "perf script --show-*-events" "$tmp/sb.err"
sbtypes='PERF_RECORD_(COMM|MMAP|MMAP2|FORK|EXIT|SWITCH|SWITCH_CPU_WIDE)'
grep -E "^$sbtypes	" "$tmp/all.exp" |
while IFS=$'\t' read -r type sid toks; do
	read -r cpu time pidtid <<<"$sid"
	printf '%s\t-\t%s [%03d] %d.%06d: %s\t%s\n' "$type" "$pidtid" "$cpu" \
		$((time / 1000000000)) $((time % 1000000000 / 1000)) "$type" "$toks"
done >"$tmp/sb.exp"
grep -E "$sbtypes" "$tmp/sb.out" | while IFS= read -r l; do
	l=$(tr -s ' ' <<<"$l")
	t=${l#*PERF_RECORD_}
	printf '0\tPERF_RECORD_%s\t-\t%s\n' "${t%%[(: ]*}" "$l"
done >"$tmp/sb.rec"
compare "perf script --show-*-events" "$tmp/sb.exp" "$tmp/sb.rec"

# ---- write errors --------------------------------------------------------
check
if [ -w /dev/full ]; then
	"$mk" --all-records /dev/full >/dev/null 2>"$tmp/full.err"
	rc=$?
	if [ "$rc" -ne 1 ] || ! grep -q '/dev/full: .*offset 0: No space left on device' "$tmp/full.err"; then
		fail "/dev/full: exit $rc, message '$(cat "$tmp/full.err")'"
	fi
fi

# A file size limit (in 1 KiB units) in the data, then in the features:
# the tool fails with the reason, perf reads the records that made it.
for kib in 1 2; do
	f=$tmp/limit$kib.data
	(
		trap '' XFSZ
		ulimit -f "$kib"
		exec "$mk" --all-records "$f"
	) >/dev/null 2>"$tmp/limit.err"
	rc=$?
	check
	if [ "$rc" -ne 1 ] || ! grep -q "$f: .*File too large" "$tmp/limit.err"; then
		fail "size limit ${kib}K: exit $rc, message '$(cat "$tmp/limit.err")'"
		continue
	fi
	check
	if ! perf script -D --force -i "$f" >"$tmp/script.out" 2>"$tmp/script.err"; then
		fail "size limit ${kib}K: perf rejects the file: $(head -n 3 "$tmp/script.err")"
		continue
	fi
	perf_ok "size limit ${kib}K" "$tmp/script.err"
	records <"$tmp/script.out" >"$tmp/limit.rec"
	n=$(wc -l <"$tmp/limit.rec")
	check
	if [ "$n" -lt 1 ] || [ "$(stat -c %s "$f")" -gt $((kib * 1024)) ]; then
		fail "size limit ${kib}K: $n records, $(stat -c %s "$f") bytes"
		continue
	fi
	head -n "$n" "$tmp/all.exp" >"$tmp/limit.exp"
	compare "size limit ${kib}K" "$tmp/limit.exp" "$tmp/limit.rec"
	echo "perfdata_writer: ${kib} KiB limit: $n of $(wc -l <"$tmp/all.exp") records readable"
done

# ---- intel_pt: perf decodes our trace ------------------------------------
if ! command -v yasm >/dev/null 2>&1 || ! command -v ld >/dev/null 2>&1; then
	echo "skipped: intel_pt part (needs yasm and ld)"
else
	ex=$tmp/calls
	yasm -f elf64 "$src/examples/calls.asm" -o "$ex.o" &&
	ld -Ttext=0x401000 -e _start -o "$ex" "$ex.o" &&
	"$build/ptgen" "$ex.pt" <"$src/examples/calls.ptdesc"
	check
	if [ $? -ne 0 ]; then
		fail "cannot build the example program and its trace"
	elif ! "$mk" --show --pt "$ex.pt" --elf "$ex" "$tmp/pt.data" \
			>"$tmp/pt.exp" 2>"$tmp/mk.err"; then
		fail "mkptdata --pt: $(cat "$tmp/mk.err")"
	else
		check
		perf script -D --force -i "$tmp/pt.data" >"$tmp/pt.out" \
			2>"$tmp/pt.err" || fail "perf script -D rejects the intel_pt file"
		records <"$tmp/pt.out" >"$tmp/pt.rec"
		compare "intel_pt file, perf script -D" "$tmp/pt.exp" "$tmp/pt.rec"

		check
		if ! perf script --itrace=b -F ip,addr --force -i "$tmp/pt.data" \
				>"$tmp/br.out" 2>"$tmp/br.err"; then
			fail "perf script --itrace=b: $(head -n 3 "$tmp/br.err")"
		fi
		perf_ok "perf script --itrace=b" "$tmp/br.err"
		check
		if grep -qi 'error' "$tmp/br.err"; then
			fail "perf script --itrace=b: $(grep -i error "$tmp/br.err")"
		fi
		# decoder errors are samples of --itrace=e
		perf script --itrace=e --force -i "$tmp/pt.data" >"$tmp/e.out" 2>&1
		check
		if [ -s "$tmp/e.out" ]; then
			fail "perf's decoder reports errors: $(head -n 3 "$tmp/e.out")"
		fi
		# the executable segment of the program
		read -r lo size < <(readelf -lW "$ex" |
			awk '$1 == "LOAD" && / E / { print $3, $6 }')
		lo=$((lo))
		hi=$((lo + size))
		nbr=0
		while read -r from arrow to; do
			[ "$arrow" = "=>" ] || continue
			nbr=$((nbr + 1))
			for a in $((0x$from)) $((0x$to)); do
				check
				if [ "$a" -ne 0 ] && { [ "$a" -lt "$lo" ] || [ "$a" -ge "$hi" ]; }; then
					fail "branch $from => $to: outside the program [$lo, $hi)"
				fi
			done
		done <"$tmp/br.out"
		check
		# Tracing starts at _start (the TIP.PGE) and ends at the
		# system call of done (the TIP.PGD); branches in between.
		if [ "$nbr" -lt 3 ] ||
		   [ "$(head -n 1 "$tmp/br.out" | tr -s ' ')" != " 0 => 401000" ] ||
		   [ "$(tail -n 1 "$tmp/br.out" | tr -s ' ')" != " 401027 => 0" ]; then
			fail "perf's branch list: $nbr branches:"
			head -n 5 "$tmp/br.out" | sed 's/^/    /' >&2
		fi
		echo "perfdata_writer: perf decodes $nbr branches from the intel_pt file"

		# The same trace as cpu 1's buffer (per-cpu mmaps): perf finds
		# the thread in the sideband and decodes the same branches.
		check
		if ! "$mk" --cpu 1 --pt "$ex.pt" --elf "$ex" "$tmp/cpu.data" ||
		   ! perf script --itrace=b -F ip,addr --force \
			-i "$tmp/cpu.data" >"$tmp/cpu.out" 2>"$tmp/cpu.err"; then
			fail "cpu mode: $(head -n 3 "$tmp/cpu.err")"
		elif ! cmp -s "$tmp/br.out" "$tmp/cpu.out"; then
			fail "cpu mode: perf's branches differ from per-thread mode"
		fi
		perf_ok "cpu mode" "$tmp/cpu.err"

		# Two CPUs' buffers (mkptdata --cpu2: a second thread on cpu
		# 2, or another process's): perf shows each record at the cpu
		# it was written for, and decodes each buffer into the
		# branches of the one above.
		for who in 1234:1235 4321:4321; do
			check
			if ! "$mk" --show --cpu 1 --cpu2 "2:$who:$ex.pt" \
				--pt "$ex.pt" --elf "$ex" "$tmp/cpus.data" \
				>"$tmp/cpus.exp" 2>"$tmp/mk.err"; then
				fail "mkptdata --cpu2 $who: $(cat "$tmp/mk.err")"
				continue
			fi
			perf script -D --force -i "$tmp/cpus.data" \
				>"$tmp/cpus.out" 2>"$tmp/cpus.err" ||
				fail "two CPUs ($who): perf script -D rejects the file"
			records <"$tmp/cpus.out" >"$tmp/cpus.rec"
			compare "two CPUs ($who), perf script -D" \
				"$tmp/cpus.exp" "$tmp/cpus.rec"
			for c in 1 2; do
				check
				perf script --itrace=b -F ip,addr --force -C $c \
					-i "$tmp/cpus.data" >"$tmp/cpus.br" \
					2>"$tmp/cpus.err"
				cmp -s "$tmp/br.out" "$tmp/cpus.br" ||
					fail "two CPUs ($who): perf's branches of cpu $c differ"
			done
			perf_ok "two CPUs ($who)" "$tmp/cpus.err"
		done
	fi
fi

finish

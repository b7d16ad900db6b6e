# SPDX-License-Identifier: BSD-2-Clause
# Deterministic text for the recording benchmark (bench/run-record.sh):
#   awk -v seed=S -v size=BYTES -f bench/gen-text.awk > OUT
# Lines of words drawn from a fixed vocabulary with a skewed (Zipf-like)
# frequency, and some numbers; compresses about 2.7:1 with gzip -9, like
# prose. The generator is Park-Miller (16807 * x mod 2^31 - 1): exact in
# any awk's double arithmetic, so every awk writes the same bytes.
BEGIN {
	x = seed + 1
	# vocabulary: 4000 pronounceable words
	split("ka re mo ti su ne la pi do fu an ex or in th st qu ch er on", syl, " ")
	for (i = 0; i < 4000; i++) {
		n = 1 + i % 3 + int(i / 1500); w = ""
		v = i * 7 + 3
		for (k = 0; k < n; k++) { w = w syl[1 + v % 20]; v = int(v / 20) + k * 13 }
		voc[i] = w
	}
	out = 0; line = ""
	while (out < size) {
		x = (x * 16807) % 2147483647; u = x / 2147483647
		if (u < 0.03) { x = (x * 16807) % 2147483647; wd = int(x / 2147.483647) }
		else { x = (x * 16807) % 2147483647; r = x / 2147483647; wd = voc[int(4000 * r * r * r)] }
		line = line (line == "" ? "" : " ") wd
		if (length(line) > 70) { print line "."; out += length(line) + 2; line = "" }
	}
}

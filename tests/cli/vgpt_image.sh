# SPDX-License-Identifier: BSD-2-Clause
# vgpt (src/record/vgpt) when the code at an address changes, decoded with
# the code the sideband says was there when it ran (tests/cli/vgpt/lib.bash,
# "Time-aware decoding"); each decode == the truth:
#   smc.c   code generated, run, rewritten in place, run again (six
#           versions): each is saved in its own .bin, with a later `mmap`
#   dl.c    two libraries dlopen'ed and dlclose'd in turn at one address:
#           `munmap` lines, then the other library's `mmap`
#   patch.c the program's own text patched in place after it ran: saved
#           with its new bytes (--smc-check=all: Valgrind's default checks
#           only code that does not come from a file, and keeps running
#           the old translation)
# Both also run without the truth (fast records). Mutations: decoding
# with only the first version of the code, or without the munmap lines,
# must not give the truth.
#
#   bash tests/cli/vgpt_image.sh path/to/hwt BUILD_DIR
. "$(dirname "$0")/vgpt/lib.bash" vgpt_image "$@"

cc smc "$vgpt_dir/smc.c"
cc dl "$vgpt_dir/dl.c" -ldl
cc liba.so "$vgpt_dir/liba.c" -shared -fPIC
cc libb.so "$vgpt_dir/libb.c" -shared -fPIC
cc patch "$vgpt_dir/patch.c"

# ---- self-modifying code
record smc "$tmp/smc" && check_streams smc
check
[ "$(grep -c '^mmap .* rwx .*\.bin$' "$tmp/smc.sb")" -eq 6 ] ||
	fail "smc: $(grep -c '\.bin$' "$tmp/smc.sb") versions of the code saved, expected 6"
check
[ "$(cat "$tmp/smc.stdout")" = "$("$tmp/smc")" ] || fail "smc: output differs from native"
fast smc "$tmp/smc"
mutant smc sed '/\.bin$/{x;s/^/x/;/^xx/{x;d};x}'

# ---- dlopen, dlclose, dlopen at the same address
record dl "$tmp/dl" "$tmp/liba.so" "$tmp/libb.so" && check_streams dl
check
a=$(awk '$1 == "mmap" && $8 ~ /liba.so$/ { print $4 }' "$tmp/dl.sb" | sort -u)
b=$(awk '$1 == "mmap" && $8 ~ /libb.so$/ { print $4 }' "$tmp/dl.sb" | sort -u)
[ -n "$a" ] && [ "$a" = "$b" ] && [ "$(grep -c '^munmap ' "$tmp/dl.sb")" -ge 4 ] ||
	fail "dl: the libraries are not at one address ($a, $b), or no munmap lines"
fast dl "$tmp/dl" "$tmp/liba.so" "$tmp/libb.so"
mutant dl sed '/^munmap /d'

# ---- file-backed code patched in place
record patch --smc-check=all -- "$tmp/patch" && check_streams patch
check
[ "$(cat "$tmp/patch.stdout")" = 14 ] || fail "patch: the patched code did not run"
mutant patch sed '/\.bin$/d'

finish

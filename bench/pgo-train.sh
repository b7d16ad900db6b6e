#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# bench/pgo-train.sh DIR [GENERATOR] [JOBS] [WERROR]: the profile `make`
# builds the library with (profile-guided optimisation, gcc only).
#
# Builds hwt and gen_flow instrumented (-fprofile-generate) into DIR, runs
# the decoder's hot paths on a synthetic trace (gen_flow: calls, returns,
# loops, indirect branches at random; not one of bench/run-flow.sh's
# traces) and the commands that read a perf.data on a recording of a
# shell loop (hwt record with vgpt, built here too, uninstrumented), and
# leaves the profile in DIR/profile, named by object path relative to the
# build directory (-fprofile-prefix-path), so that the build in another
# directory finds it (CMake's HWT_PGO_PROFILE). WERROR
# (ON or OFF, default ON): this build is the one whose warnings are errors
# (the build with the profile has gcc's notes on a stale profile).
# Prints the profile's directory, or nothing if the compiler is not gcc.
set -euo pipefail

dir=$1
gen=${2:-$(command -v ninja >/dev/null 2>&1 && echo Ninja || echo "Unix Makefiles")}
jobs=${3:-$(nproc)}
werror=${4:-ON}
cc=${CC:-cc}

if ! "$cc" --version 2>/dev/null | grep -q "Free Software Foundation"; then
	echo "pgo-train: $cc is not gcc: building without a profile" >&2
	exit 0
fi
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
profile=$dir/profile
rm -rf "$profile"
cmake -S "$(dirname "$0")/.." -B "$dir" -G "$gen" -DHWT_BENCH=ON \
	-DHWT_WERROR="$werror" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER="$cc" \
	-DHWT_PGO_PROFILE= \
	"-DCMAKE_C_FLAGS=-fprofile-generate=$profile -fprofile-prefix-path=$dir -fprofile-update=atomic" \
	-DCMAKE_EXE_LINKER_FLAGS=-fprofile-generate \
	-DCMAKE_SHARED_LINKER_FLAGS=-fprofile-generate >&2
cmake --build "$dir" -j "$jobs" --target hwt gen_flow >&2

# The runs bench/run-flow.sh measures: every block, the folds with and
# without the map, one thread and two.
"$dir/gen_flow" -s 16M -S 7 "$dir/train" >&2
img=(--raw "$dir/train.bin:0x400000")
"$dir/hwt" coverage "${img[@]}" "$dir/train.pt" >/dev/null
"$dir/hwt" coverage -j2 "${img[@]}" "$dir/train.pt" >/dev/null
"$dir/hwt" flow --stat "${img[@]}" "$dir/train.pt" >/dev/null
"$dir/hwt" flow --stat -j2 "${img[@]}" "$dir/train.pt" >/dev/null
"$dir/hwt" ptxed --block-decoder --quiet "${img[@]}" --pt "$dir/train.pt" >/dev/null
"$dir/hwt" ptxed --quiet --stat --stat:insn "${img[@]}" --pt "$dir/train.pt" >/dev/null

# A recording of real programs (hwt record, with vgpt: the portable
# source), for the commands that read a perf.data and look at every
# block: hwt last, hwt calls, hwt flow's lines. Trained on the synthetic
# trace alone, their code is laid out for a trace without symbols or
# processes: hwt last on python3's recording took 4.54 s of user time
# against 3.57 s built without a profile; with this, 3.58 s
# (doc/howto-flow.md). Skipped where vgpt cannot be built or run.
if cmake --build "$dir" -j "$jobs" --target vgpt-amd64-linux >&2 &&
	"$dir/hwt" record -q -o "$dir/train.data" -- sh -c \
		'for i in 1 2 3 4 5; do ls -l /usr/bin; sort /etc/passwd; date; done' \
		>/dev/null; then
	"$dir/hwt" last "$dir/train.data" >/dev/null
	"$dir/hwt" calls "$dir/train.data" >/dev/null
	"$dir/hwt" calls --folded "$dir/train.data" >/dev/null
	"$dir/hwt" flow "$dir/train.data" >/dev/null
	"$dir/hwt" coverage "$dir/train.data" >/dev/null
else
	echo "pgo-train: no recording (vgpt): hwt last and hwt calls untrained" >&2
fi
rm -f "$dir/train.pt" "$dir/train.data"
echo "$profile"

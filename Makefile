# SPDX-License-Identifier: BSD-2-Clause
# Conventional front end over CMake: `make`, `make check`, `make deps`.
#   make            build everything into build/ (CLI: build/hwt)
#   make check      build and run all tests
#   make asan       build into build-asan/ with ASan+UBSan and run all tests
#   make tsan       build into build-tsan/ with ThreadSanitizer and run the
#                   tests whose commands run threads (-j, several traces)
#   make fuzz       build the libFuzzer targets into build-fuzz/ and run each
#                   for FUZZ_SECONDS
#   make bench      run the benchmarks (bench/run.sh, run-flow.sh,
#                   run-output.sh, run-cover.sh, run-record.sh,
#                   run-switch.sh, run-jobs.sh)
#   make libipt-suite  run libipt's pttc suite against build/hwt (ptdump, ptxed)
#   make example    record the bundled example (examples/calc.c, which
#                   crashes) with hwt record; show hwt calls and hwt last
#   make example-pt decode a hand-made trace (examples/calls.asm)
#   make deps       apt-get install what is missing (Debian bookworm)
#   make pgo        train the profile the library is built with again
#                   (bench/pgo-train.sh; with gcc, `make` does it once, when
#                   it configures build/; PGO=0: without)

BUILD        ?= build
GENERATOR    ?= $(shell command -v ninja >/dev/null 2>&1 && echo Ninja || echo "Unix Makefiles")
CMAKE_FLAGS  ?=
WERROR       ?= ON
FUZZ_SECONDS ?= 20
JOBS         ?= $(shell nproc)
PGO          ?= 1
PGO_BUILD    = $(BUILD)-pgo
PGO_TRAIN    = bash bench/pgo-train.sh $(PGO_BUILD) "$(GENERATOR)" $(JOBS) $(WERROR)

# Debian packages needed to build and test; checked with dpkg before apt-get.
DEB_PKGS = cmake ninja-build gcc clang libclang-rt-14-dev libcmocka-dev \
           pkg-config yasm binutils dpkg-dev ca-certificates curl \
           libzydis-dev libelf-dev libdw-dev libiberty-dev libipt-dev libzstd-dev \
           linux-perf valgrind gzip xz-utils python3 sqlite3 gawk lcov

.PHONY: all check asan tsan fuzz bench libipt-suite deps clean configure example example-pt pgo

all: deps configure
	cmake --build $(BUILD) -j $(JOBS)

configure:
	@test -f $(BUILD)/CMakeCache.txt || { \
	  profile=$(if $(filter 1,$(PGO)),$$($(PGO_TRAIN))) && \
	  cmake -S . -B $(BUILD) -G "$(GENERATOR)" -DHWT_WERROR=$(WERROR) \
	    -DHWT_PGO_PROFILE=$$profile $(CMAKE_FLAGS); }

# Train again and rebuild the library with the new profile (a build/ not
# configured yet: make all, which trains first).
pgo: deps
	@if test -f $(BUILD)/CMakeCache.txt; then \
	  profile=$$($(PGO_TRAIN)) && \
	  cmake -S . -B $(BUILD) -DHWT_PGO_PROFILE=$$profile && \
	  cmake --build $(BUILD) --target clean && \
	  cmake --build $(BUILD) -j $(JOBS); \
	else $(MAKE) all; fi

check: all
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# vgpt cannot be built with sanitizers; the recording tests use the plain
# build's (HWT_VGPT_LIB) when there is one, so hwt record and hwt last run
# under ASan too.
VGPT_PLAIN = $(wildcard $(CURDIR)/build/vgpt/vgpt-amd64-linux)
asan: deps
	HWT_VGPT_LIB=$(if $(VGPT_PLAIN),$(CURDIR)/build/vgpt) \
	$(MAKE) BUILD=build-asan PGO=0 CMAKE_FLAGS="-DHWT_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang" check

# gcc's ThreadSanitizer (vgpt is not built: the plain build's records,
# as for asan). A report is a
# failure even where the test's own comparison passed: each goes to a
# file of its own (log_path), and any file fails the target.
TSAN_TESTS = cli/(flow|coverage|calls|perfdata_flow|last|lcov)$$
TSAN_LOGS  = $(CURDIR)/build-tsan/tsan-reports
tsan: deps
	$(MAKE) BUILD=build-tsan PGO=0 CMAKE_FLAGS="-DCMAKE_BUILD_TYPE=RelWithDebInfo -DHWT_BENCH=OFF -DCMAKE_C_FLAGS=-fsanitize=thread -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread" all
	rm -rf $(TSAN_LOGS) && mkdir -p $(TSAN_LOGS)
	cd build-tsan && TSAN_OPTIONS="halt_on_error=1 log_path=$(TSAN_LOGS)/report" \
	  HWT_VGPT_LIB=$(if $(VGPT_PLAIN),$(CURDIR)/build/vgpt) \
	  ctest --output-on-failure -j $(JOBS) -R '$(TSAN_TESTS)'
	@if ls $(TSAN_LOGS)/report.* >/dev/null 2>&1; then \
	  head -n 60 $(TSAN_LOGS)/report.*; echo "ThreadSanitizer reports above"; exit 1; \
	else echo "tsan: no ThreadSanitizer report"; fi

fuzz: deps
	@test -f build-fuzz/CMakeCache.txt || \
	  CC=clang cmake -S . -B build-fuzz -G "$(GENERATOR)" -DHWT_WERROR=$(WERROR) \
	    -DHWT_FUZZ=ON -DHWT_BENCH=OFF -DCMAKE_BUILD_TYPE=Debug \
	    -DCMAKE_C_FLAGS="-O1 -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all" \
	    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined"
	cmake --build build-fuzz -j $(JOBS)
	bash fuzz/run.sh build-fuzz $(FUZZ_SECONDS)

# The bundled example: a small C program with recursive calls and a crash,
# compiled with -g, recorded with the portable source (no trace unit
# needed), its calls (its own functions: the C library's are in the trace
# too) and how it got to the crash.
EX = $(BUILD)/examples
EXARGS = "1+2*3" "x*(y+1)" "2*(z+1)"
example: all
	@mkdir -p $(EX)
	gcc -g -O0 -o $(EX)/calc examples/calc.c
	@rc=0; $(BUILD)/hwt record -o $(EX)/calc.data -- $(EX)/calc $(EXARGS) || rc=$$?; \
	  echo "(hwt record: exit status $$rc = 128 + SIGSEGV: the example crashes on purpose)"; \
	  test $$rc -eq 139
	$(BUILD)/hwt calls $(EX)/calc.data | grep -E '	 *(main|expr|term|factor|lookup)	' | \
	  tail -n 24 | awk -F'\t' '{ l[NR] = $$0; i = match($$2, /[^ ]/) - 1; \
	  if (NR == 1 || i < m) m = i } END { for (k = 1; k <= NR; k++) { \
	  split(l[k], f, "\t"); print f[1] "\t" substr(f[2], m + 1) "\t" f[3] } }'
	$(BUILD)/hwt last -n 8 $(EX)/calc.data

# The hand-made one: a tiny program assembled from examples/calls.asm and
# the trace a CPU would write for it, from examples/calls.ptdesc (hwt's
# packet encoder), decoded three ways.
example-pt: all
	@mkdir -p $(EX)
	yasm -f elf64 examples/calls.asm -o $(EX)/calls.o
	ld -Ttext=0x401000 -e _start -o $(EX)/calls $(EX)/calls.o
	$(BUILD)/ptgen $(EX)/calls.pt < examples/calls.ptdesc
	$(BUILD)/hwt dump --lastip $(EX)/calls.pt
	$(BUILD)/hwt calls --elf $(EX)/calls $(EX)/calls.pt
	$(BUILD)/hwt flow --disasm --elf $(EX)/calls $(EX)/calls.pt

bench: all
	bash bench/run.sh $(BUILD)
	bash bench/run-flow.sh $(BUILD)
	bash bench/run-output.sh $(BUILD)
	bash bench/run-cover.sh $(BUILD)
	bash bench/run-corpus.sh $(BUILD)
	bash bench/run-record.sh $(BUILD)
	bash bench/run-switch.sh $(BUILD)
	bash bench/run-jobs.sh $(BUILD)

libipt-suite: all
	bash scripts/libipt-suite.sh --ptxed $(BUILD)

deps:
	@missing=""; for p in $(DEB_PKGS); do \
	  dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "make deps: installing$$missing"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q $$missing; \
	fi

clean:
	rm -rf build build-pgo build-asan build-tsan build-fuzz

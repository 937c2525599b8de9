# heed - build, test, install.
#   make demo      build examples/translate and train it with its defaults (dates -> ISO dates)
#   make test      build and run every test (installs Debian packages first if missing)
#   make sanitize  build and run both test binaries under AddressSanitizer + UBSan
#   make tsan      the tests that start std::threads of their own, under ThreadSanitizer
#   make fuzz      libFuzzer on the checkpoint and safetensors loaders, FUZZ_SECONDS each (default 600)
#   make soak      train with checkpoints for SOAK_MINUTES (default 30) under random SIGKILLs
#   make bench     heed vs PyTorch CPU eager, side by side
#   make install PREFIX=/usr/local [DESTDIR=...]   headers, libheed.a, heed.pc, lib/cmake/heed
#   make USE_MPI=1 also builds build/libheed_mpi.a (data parallel training over Open MPI);
#   make test-mpi  its tests under mpirun -np 2 (installs Open MPI first if missing)
#   make bench-allreduce, make bench-overlap   MPI_Allreduce cost; overlap with backward or not
#
# The library is built twice from the same sources: build/libheed.a (float) and
# build/libheed_f64.a (-DHEED_DOUBLE, for the finite-difference gradient checks).

# Build on every core unless the caller chose (-jN on the command line wins).
ifeq ($(MAKELEVEL)$(filter -j% j%,$(MAKEFLAGS)),0)
MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 2)
endif

CXX      ?= g++
# The library runs on any x86-64-v2 CPU (SSE4.2, every x86-64 since 2009) and picks its hot
# kernels for the CPU it runs on (core/cpu.h): core/*_avx2.cpp and core/*_avx512.cpp are
# compiled for those levels, with LEVEL_FLAGS below. `make ARCH=native` (or
# ARCH=-march=native) builds everything for this machine: a little faster here, and not
# portable (a libheed.a built so on an AVX-512 machine dies with SIGILL on an AVX2 one).
ARCH     ?= -march=x86-64-v2 -mtune=generic
ifeq ($(ARCH),native)
override ARCH := -march=native
endif
CXXFLAGS ?= -O3 $(ARCH)
PREFIX   ?= /usr/local
BUILD    ?= build
DESTDIR  ?=

MULTIARCH := $(shell $(CXX) -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
BLAS_INC  := /usr/include/$(MULTIARCH)/openblas-openmp
BLAS_LIB  := /usr/lib/$(MULTIARCH)/openblas-openmp

# The generated include tree (see "public include tree" below); defined before any rule uses it.
INC       := $(BUILD)/include
UMBRELLA  := $(INC)/heed/heed.h

# The double build exists only for the finite-difference gradient checks: -O1 compiles it
# about a quarter faster than -O3, and its tests still run in seconds.
F64FLAGS ?= $(patsubst -O%,-O1,$(CXXFLAGS)) -DHEED_DOUBLE

# -fno-math-errno: heed never reads errno after a math call, and without the flag GCC keeps
# every loop that calls std::sqrt scalar (to set errno on a negative input); results are
# the same bits either way (sqrt is correctly rounded).
# -fno-trapping-math: heed never enables or reads floating-point exception flags, and without
# the flag GCC may not compute an arithmetic operation on a path that did not ask for it (it
# might raise a flag there), so a loop whose body GCC has split into branches stays scalar.
# The fastmath kernels (core/fastmath.h) are written branch-free, but GCC's own passes
# re-split them: in fastmath::exp, `hi + lo` after the clamp `hi > 89 ? 89 : hi` is moved
# into the unclamped arm, and every exp, tanh, sigmoid, erf and GELU loop ran one float at a
# time (1M tanh: 5.6 ms on one core, 1.3 ms with the flag; GELU was 20% of a GPT step, the
# LSTM layer's gates 19% of its step). Values are the same bits either way: each lane does the
# same IEEE operations, and no reassociation or contraction is enabled by this flag.
# `make test` checks that those loops vectorise (check-vectorised below).
BASEFLAGS := -std=c++17 -Wall -Wextra -Wno-unused-parameter -fno-math-errno -fno-trapping-math -fopenmp -MMD -MP -I$(BLAS_INC) -I$(BUILD)/include
LDLIBS    := -L$(BLAS_LIB) -Wl,-rpath,$(BLAS_LIB) -lopenblas -fopenmp

# The per-level kernel files (core/cpu.h); `override` so that a CXXFLAGS given on the command
# line (make sanitize, make fuzz) still gets them. x86-64-v3 is AVX2 + FMA + BMI2; x86-64-v4
# adds AVX-512 F/BW/DQ/VL/CD, and GCC's autovectoriser uses all 512 bits only when asked.
AVX2_FLAGS   := -march=x86-64-v3
AVX512_FLAGS := -march=x86-64-v4 -mprefer-vector-width=512
$(BUILD)/%_avx2.o: override CXXFLAGS += $(AVX2_FLAGS)
$(BUILD)/%_avx512.o: override CXXFLAGS += $(AVX512_FLAGS)

LIB_DIRS  := core autograd layers optim
# Files named *_mpi.{h,cpp} need MPI: they stay out of libheed.a and the umbrella header,
# and go into libheed_mpi.a (section "data parallel training over MPI" below).
# Each folder and its subfolders (autograd/attention/, layers/attention/), bottom layer first.
find_in    = $(foreach d,$(LIB_DIRS),$(sort $(shell find $(d) -name '$(1)')))
LIB_SRCS  := $(filter-out %_mpi.cpp,$(call find_in,*.cpp))
HEADERS   := $(filter-out %_mpi.h,$(call find_in,*.h))
MPI_SRCS  := $(call find_in,*_mpi.cpp)
MPI_HEADERS := $(call find_in,*_mpi.h)
OBJS_F32  := $(LIB_SRCS:%.cpp=$(BUILD)/f32/%.o)
OBJS_F64  := $(LIB_SRCS:%.cpp=$(BUILD)/f64/%.o)

# tests/test_*.cpp run in float (goldens, behaviour); tests/gradcheck_*.cpp in double.
TEST_F32_SRCS := tests/main.cpp $(wildcard tests/test_*.cpp)
TEST_F64_SRCS := tests/main.cpp $(wildcard tests/gradcheck_*.cpp)
TEST_F32_OBJS := $(TEST_F32_SRCS:%.cpp=$(BUILD)/f32/%.o)
TEST_F64_OBJS := $(TEST_F64_SRCS:%.cpp=$(BUILD)/f64/%.o)
EXAMPLES      := $(patsubst examples/%.cpp,$(BUILD)/examples/%,$(wildcard examples/*.cpp))
BENCHES       := $(patsubst tests/bench/%.cpp,$(BUILD)/bench/%,$(wildcard tests/bench/*.cpp))

.PHONY: all deps test check-vectorised test-mpi bench-allreduce bench-overlap install-mpi check-install-mpi check-portable sanitize tsan fuzz fuzz-seeds soak soak-tiny demo examples bench goldens install uninstall check-install clean

all: $(BUILD)/libheed.a

# ---- dependencies: Debian packages, installed when missing (as root) ----
# One line per package: name:file-that-proves-it-is-installed. Add a package with its own
# `DEPS += name:/path` line.
DEPS := libopenblas-openmp-dev:$(BLAS_LIB)/libopenblas.so
DEPS += libopenblas-openmp-dev:$(BLAS_INC)/cblas.h
DEPS += doctest-dev:/usr/include/doctest/doctest.h
DEPS += pkgconf:/usr/bin/pkg-config
DEPS += libstb-dev:/usr/include/stb/stb_image_write.h
DEPS += fonts-dejavu-core:/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf
DEPS += fortunes:/usr/share/games/fortunes/cookie
DEPS += nlohmann-json3-dev:/usr/include/nlohmann/json.hpp

deps:
	@missing=""; \
	for d in $(DEPS); do [ -e "$${d#*:}" ] || case " $$missing " in *" $${d%%:*} "*) ;; *) missing="$$missing $${d%%:*}";; esac; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "heed: installing$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null || exit 1; \
	  else \
	    echo "heed: missing Debian packages:$$missing"; \
	    echo "run:  sudo apt-get update && sudo apt-get install -y$$missing"; exit 1; \
	  fi; \
	fi

# ---- the two libraries ----
# The flags this build directory's objects were compiled with, rewritten only when they
# change (`make ARCH=-march=native`, then `make`): every object depends on it, so a change
# rebuilds them all instead of mixing two -march levels in one libheed.a, which would die
# with SIGILL on the older CPU. `:=` takes the flags before the per-level files' overrides.
FLAGS_STAMP := $(BUILD)/compile-flags
STAMP_TEXT := $(BASEFLAGS) | $(CXXFLAGS) | $(F64FLAGS)
$(FLAGS_STAMP): FORCE
	@mkdir -p $(@D)
	@echo '$(STAMP_TEXT)' | cmp -s - $@ || echo '$(STAMP_TEXT)' > $@
FORCE:

$(BUILD)/f32/%.o: %.cpp $(FLAGS_STAMP) | deps $(UMBRELLA)
	@mkdir -p $(@D)
	$(CXX) $(BASEFLAGS) $(CXXFLAGS) -c $< -o $@

$(BUILD)/f64/%.o: %.cpp $(FLAGS_STAMP) | deps $(UMBRELLA)
	@mkdir -p $(@D)
	$(CXX) $(BASEFLAGS) $(F64FLAGS) -c $< -o $@

$(BUILD)/libheed.a: $(OBJS_F32)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/libheed_f64.a: $(OBJS_F64)
	@rm -f $@
	ar rcs $@ $^

# ---- the public include tree: <heed/heed.h> and <heed/core/...> ----
# Programs write `#include <heed/heed.h>`. That umbrella is generated: it includes every header
# of core/, autograd/, layers/ and optim/, bottom layer first, so it can never miss a new one.
# In the tree, build/include/heed/{core,autograd,layers,optim} link to the sources; `make install`
# copies the same layout to $(PREFIX)/include/heed.
$(UMBRELLA): $(HEADERS) Makefile
	@mkdir -p $(@D)
	@for d in $(LIB_DIRS); do ln -sfnr $$d $(@D)/$$d; done
	@{ echo '// heed.h - everything in one include:  #include <heed/heed.h>'; \
	   echo '// Generated by the Makefile from the headers of core/ autograd/ layers/ optim/ (bottom layer'; \
	   echo '// first). Tensors and ops are in namespace heed, layers and losses in heed::nn, optimizers in'; \
	   echo '// heed::optim. Read the README for the order in which to study them.'; \
	   echo '#pragma once'; \
	   for h in $(HEADERS); do echo "#include <heed/$$h>"; done; } > $@.tmp && mv $@.tmp $@

# ---- tests ----
# Every test file begins with #include "helpers.h" (doctest, the standard headers and the few
# heed headers the helpers use: core/tensor.h, core/error.h, core/parallel.h and
# autograd/gradcheck.h). It is precompiled once per build (-x c++-header, same flags) and
# given to each test file with -include, so the test files skip parsing it; main.cpp defines
# doctest's runner before its include, so it has its own rule.
# Each test file includes the other heed headers it uses by name, not the umbrella, and -MMD
# records them: touching layers/multihead_attention.h recompiles the tests that include it
# (and the library files that do), not all of them. A header in helpers.h, above all
# core/tensor.h, still recompiles every test.
# Test files compile at -O1 (TEST_CXXFLAGS): they are glue around library calls, and the
# library they test keeps CXXFLAGS. At -O3 each test file took about twice the compile time.
TEST_CXXFLAGS ?= $(patsubst -O%,-O1,$(CXXFLAGS))
PCH_F32 := $(BUILD)/f32/tests/pch/helpers.h.gch
PCH_F64 := $(BUILD)/f64/tests/pch/helpers.h.gch
$(PCH_F32): tests/helpers.h $(FLAGS_STAMP) | deps $(UMBRELLA)
	@mkdir -p $(@D)
	$(CXX) $(BASEFLAGS) $(TEST_CXXFLAGS) -x c++-header $< -o $@

$(PCH_F64): tests/helpers.h $(FLAGS_STAMP) | deps $(UMBRELLA)
	@mkdir -p $(@D)
	$(CXX) $(BASEFLAGS) $(F64FLAGS) -x c++-header $< -o $@

$(BUILD)/f32/tests/%.o: tests/%.cpp $(PCH_F32) $(FLAGS_STAMP) | deps $(UMBRELLA)
	@mkdir -p $(@D)
	$(CXX) $(BASEFLAGS) $(TEST_CXXFLAGS) -include $(PCH_F32:.gch=) -c $< -o $@

$(BUILD)/f64/tests/%.o: tests/%.cpp $(PCH_F64) $(FLAGS_STAMP) | deps $(UMBRELLA)
	@mkdir -p $(@D)
	$(CXX) $(BASEFLAGS) $(F64FLAGS) -include $(PCH_F64:.gch=) -c $< -o $@

# Tests that compare the library's float results bit for bit with a formula written in the
# test compile with the library's own flags, without the -O1 header: at -O3 GCC contracts
# a * b + c into an FMA and -O1 does not, which changes the last bit.
TEST_EXACT := test_fastmath
$(TEST_EXACT:%=$(BUILD)/f32/tests/%.o): $(BUILD)/f32/tests/%.o: tests/%.cpp $(FLAGS_STAMP) | deps $(UMBRELLA)
	@mkdir -p $(@D)
	$(CXX) $(BASEFLAGS) $(CXXFLAGS) -include tests/helpers.h -c $< -o $@

$(BUILD)/f32/tests/main.o: tests/main.cpp $(FLAGS_STAMP) | deps $(UMBRELLA)
	@mkdir -p $(@D)
	$(CXX) $(BASEFLAGS) $(TEST_CXXFLAGS) -c $< -o $@

$(BUILD)/f64/tests/main.o: tests/main.cpp $(FLAGS_STAMP) | deps $(UMBRELLA)
	@mkdir -p $(@D)
	$(CXX) $(BASEFLAGS) $(F64FLAGS) -c $< -o $@

$(BUILD)/tests_f32: $(TEST_F32_OBJS) $(BUILD)/libheed.a
	$(CXX) $(LDFLAGS) $^ -o $@ $(LDLIBS)

$(BUILD)/tests_f64: $(TEST_F64_OBJS) $(BUILD)/libheed_f64.a
	$(CXX) $(LDFLAGS) $^ -o $@ $(LDLIBS)

# The loops of core/fastmath.h functions must vectorise with the library's flags: compile
# tests/vectorised_probe.cpp as the library is compiled and compare GCC's report with the
# lines marked VECTORISE.
check-vectorised:
	@want=$$(grep -n 'VECTORISE' tests/vectorised_probe.cpp | cut -d: -f1 | sort -u); \
	got=$$($(CXX) $(filter-out -MMD -MP,$(BASEFLAGS)) $(CXXFLAGS) -fopt-info-vec-optimized -c \
	  tests/vectorised_probe.cpp -o /dev/null 2>&1 | sed -n 's/^[^:]*vectorised_probe.cpp:\([0-9]*\):[0-9]*: optimized: loop vectorized.*/\1/p' | sort -u); \
	missing=""; for l in $$want; do echo "$$got" | grep -qx "$$l" || missing="$$missing $$l"; done; \
	if [ -n "$$missing" ]; then echo "check-vectorised: tests/vectorised_probe.cpp lines $$missing did not vectorise with these flags"; exit 1; fi; \
	echo "check-vectorised: $$(echo "$$want" | wc -l) fastmath loops vectorise"

# Every example has a --smoke run (tiny sizes, seconds) that exits 1 unless its loss falls
# and its PNGs are valid files of the size drawn; translate runs once per --model.
SMOKE_EXAMPLES := translate char_gpt classify lstm_vs_attention

test: $(BUILD)/tests_f32 $(BUILD)/tests_f64 $(SMOKE_EXAMPLES:%=$(BUILD)/examples/%) $(BUILD)/soak/soak
	@$(MAKE) --no-print-directory check-vectorised
	$(BUILD)/tests_f32
	@$(MAKE) --no-print-directory check-portable
	$(BUILD)/tests_f64
	@$(MAKE) --no-print-directory soak-tiny
	@mkdir -p $(BUILD)/smoke
	@for e in $(SMOKE_EXAMPLES); do echo "$(BUILD)/examples/$$e --smoke --out $(BUILD)/smoke"; \
	  $(BUILD)/examples/$$e --smoke --out $(BUILD)/smoke || exit 1; done
	$(BUILD)/examples/translate --smoke --model transformer --out $(BUILD)/smoke
	@$(MAKE) --no-print-directory check-install

# ---- portability: the default build on older CPUs, and every kernel level on this one ----
# The default build must run on any x86-64-v2 CPU. check-portable runs, under QEMU's user-mode
# emulation of a Nehalem (SSE4.2, the v2 baseline) and a Haswell (AVX2 + FMA), the README's
# complete program (taken from README.md) and a quick subset of the float tests, and compares
# what they print with the same programs run natively at that level (HEED_CPU, and OpenBLAS
# told the same core with OPENBLAS_CORETYPE, so both sides sum in the same order): every
# line but doctest's assertion count, which is larger natively, where test_packed_gemm also
# runs the levels above the emulated CPU's. Then the
# whole float suite runs once per level this CPU supports below its best (the best is
# `make test`'s own run), so every kernel variant is tested wherever CI lands.
# Any unexpected instruction kills the emulated run with SIGILL. (QEMU's warnings about CPU
# features it does not emulate go to stderr, which is not compared.)
PORTABLE   := $(BUILD)/portable
# test cases that take well under a second natively (QEMU is 10-50x slower)
QEMU_TESTS := -sf=*test_packed_gemm*,*test_softmax*,*test_lstm_layer*,*test_gru_layer*
QEMU_CPUS  := Nehalem:v2:NEHALEM Haswell:avx2:HASWELL

$(PORTABLE)/readme_program.cpp: README.md
	@mkdir -p $(@D)
	@awk '/^```cpp/ { inside = 1; block = ""; next } /^```/ && inside { inside = 0; if (block ~ /int main/) { printf "%s", block; exit } next } inside { block = block $$0 "\n" }' $< > $@
	@grep -q 'int main' $@ || { echo "check-portable: no complete program (a cpp block with main) in README.md"; exit 1; }

$(PORTABLE)/readme_program: $(PORTABLE)/readme_program.cpp $(BUILD)/libheed.a | $(UMBRELLA)
	$(CXX) $(BASEFLAGS) $(CXXFLAGS) -I$(INC) $< -o $@ $(BUILD)/libheed.a $(LDLIBS)

$(PORTABLE)/cpu_levels: tests/portable/cpu_levels.cpp $(BUILD)/libheed.a | $(UMBRELLA)
	@mkdir -p $(@D)
	$(CXX) $(BASEFLAGS) $(CXXFLAGS) -I$(INC) $< -o $@ $(BUILD)/libheed.a $(LDLIBS)

check-portable: DEPS += qemu-user:/usr/bin/qemu-x86_64
check-portable: $(BUILD)/tests_f32 $(PORTABLE)/readme_program $(PORTABLE)/cpu_levels | deps
	@case "$(CXXFLAGS)" in *-march=native*) echo "check-portable: skipped (built with -march=native, which is not portable)"; exit 0;; esac; \
	for f in $(BUILD)/f32/core/*_avx2.o $(BUILD)/f32/core/*_avx512.o; do \
	  weak=$$(nm -C --defined-only $$f | grep -E ' [WVu] '); \
	  [ -z "$$weak" ] || { echo "check-portable: $$f defines shared symbols another file may link to:"; echo "$$weak"; exit 1; }; \
	done; \
	for c in $(QEMU_CPUS); do \
	  cpu=$${c%%:*}; rest=$${c#*:}; level=$${rest%%:*}; blas=$${rest#*:}; \
	  for prog in "$(PORTABLE)/readme_program" "$(BUILD)/tests_f32 $(QEMU_TESTS) --no-colors --no-version"; do \
	    HEED_CPU=$$level OPENBLAS_CORETYPE=$$blas $$prog > $(PORTABLE)/native.txt || \
	      { cat $(PORTABLE)/native.txt; echo "check-portable: $$prog failed natively at HEED_CPU=$$level"; exit 1; }; \
	    OPENBLAS_CORETYPE=$$blas qemu-x86_64 -cpu $$cpu $$prog > $(PORTABLE)/emulated.txt 2> $(PORTABLE)/qemu.err || \
	      { cat $(PORTABLE)/emulated.txt $(PORTABLE)/qemu.err; echo "check-portable: $$prog failed under qemu-x86_64 -cpu $$cpu"; exit 1; }; \
	    for f in native emulated; do grep -v 'assertions:' $(PORTABLE)/$$f.txt | tr -s ' ' > $(PORTABLE)/$$f.cmp; done; \
	    diff $(PORTABLE)/native.cmp $(PORTABLE)/emulated.cmp || \
	      { echo "check-portable: $$prog printed differently under qemu-x86_64 -cpu $$cpu"; exit 1; }; \
	    echo "check-portable: $$(echo $$prog | cut -d' ' -f1) under qemu-x86_64 -cpu $$cpu printed what it prints natively at $$level: $$(grep -E 'loss|test cases' $(PORTABLE)/native.txt | tail -n 1)"; \
	  done; \
	done; \
	levels=$$($(PORTABLE)/cpu_levels) || exit 1; best=$$(echo "$$levels" | tail -n 1); \
	for level in $$levels; do [ $$level = $$best ] && continue; \
	  echo "HEED_CPU=$$level $(BUILD)/tests_f32"; HEED_CPU=$$level $(BUILD)/tests_f32 || exit 1; \
	done

# AddressSanitizer + UndefinedBehaviorSanitizer: the library and both test binaries built
# into $(BUILD)/sanitize and run; any report stops the run. The caching allocator poisons
# free blocks and the slack past each buffer under ASan (core/allocator.cpp), which
# tests/test_sanitizer.cpp proves.
SANITIZE := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
sanitize: deps
	@$(MAKE) --no-print-directory BUILD=$(BUILD)/sanitize CXXFLAGS="-O1 -g $(ARCH) $(SANITIZE)" \
	  LDFLAGS="$(SANITIZE)" $(BUILD)/sanitize/tests_f32 $(BUILD)/sanitize/tests_f64
	UBSAN_OPTIONS=print_stacktrace=1 $(BUILD)/sanitize/tests_f32
	UBSAN_OPTIONS=print_stacktrace=1 $(BUILD)/sanitize/tests_f64

# ThreadSanitizer over the test cases that start std::threads of their own: backward passes
# on two threads into one parameter, models trained on separate threads, grad mode per
# thread, RoPE's cache read by several threads, the generator drawn from two threads, the
# allocator's per-thread caches, a new thread's OpenMP count. The library and just those
# test files are built with -fsanitize=thread into $(BUILD)/tsan, and those cases run; any
# report stops the run. GCC's libgomp is not instrumented (TSan would take its barriers for
# races), so heed's own parallel regions run on one thread here: OMP_NUM_THREADS=1 sets
# heed's thread count (core/parallel.cpp), and no case chosen asks for more.
TSAN       := -fsanitize=thread -fno-omit-frame-pointer
TSAN_SRCS  := tests/main.cpp tests/test_threads.cpp tests/test_allocator.cpp \
              tests/test_determinism.cpp tests/test_parallel.cpp
TSAN_CASES := threads:*,*held by different threads*,*freed on another thread*,*each other's blocks*
TSAN_CASES := $(TSAN_CASES),*generator drawn from two std::threads*,*std::thread's first GEMM*
tsan: deps
	@$(MAKE) --no-print-directory BUILD=$(BUILD)/tsan CXXFLAGS="-O1 -g $(ARCH) $(TSAN)" \
	  LDFLAGS="$(TSAN)" $(BUILD)/tsan/tests_tsan
	OMP_NUM_THREADS=1 TSAN_OPTIONS="halt_on_error=1 abort_on_error=1" \
	  $(BUILD)/tsan/tests_tsan -tc="$(TSAN_CASES)"

$(BUILD)/tests_tsan: $(TSAN_SRCS:%.cpp=$(BUILD)/f32/%.o) $(BUILD)/libheed.a
	$(CXX) $(LDFLAGS) $^ -o $@ $(LDLIBS)

# libFuzzer on the two file readers (clang 14 from Debian, installed by this target's deps):
# the library built with clang under ASan + UBSan into $(BUILD)/fuzz, then, FUZZ_SECONDS each,
#   fuzz_checkpoint   the checkpoint loader, seeded with valid checkpoints of every target in
#                     tests/fuzz/targets.h (tests/fuzz/corpus)
#   fuzz_safetensors  the safetensors reader, seeded with valid files and known attacks
#                     (tests/fuzz/corpus_safetensors, tests/fuzz/write_safetensors_seeds.py)
# A finding stops the run and leaves crash-*/timeout-* files in $(BUILD)/fuzz: keep a
# checkpoint one in tests/fuzz/regressions/ (tests/test_fuzz_regressions.cpp replays them) and
# a safetensors one in tests/fuzz/corpus_safetensors/ (tests/test_safetensors.cpp replays them).
FUZZ_SECONDS ?= 600
FUZZ_CXX     := clang++-14
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all
fuzz: DEPS += clang-14:/usr/bin/clang++-14
fuzz: DEPS += libclang-rt-14-dev:/usr/lib/llvm-14/lib/clang/14.0.6/lib/linux/libclang_rt.fuzzer-x86_64.a
fuzz: DEPS += libomp-14-dev:/usr/lib/llvm-14/lib/libomp.so
fuzz: deps
	@$(MAKE) --no-print-directory BUILD=$(BUILD)/fuzz CXX=$(FUZZ_CXX) \
	  CXXFLAGS="-O1 -g $(ARCH) $(FUZZ_SAN) -fsanitize=fuzzer-no-link" $(BUILD)/fuzz/libheed.a
	$(FUZZ_CXX) -I$(BUILD)/fuzz/include $(BASEFLAGS) -O1 -g $(ARCH) $(FUZZ_SAN) \
	  -fsanitize=fuzzer tests/fuzz/fuzz_checkpoint.cpp -o $(BUILD)/fuzz/fuzz_checkpoint \
	  $(BUILD)/fuzz/libheed.a $(LDLIBS)
	$(FUZZ_CXX) -I$(BUILD)/fuzz/include $(BASEFLAGS) -O1 -g $(ARCH) $(FUZZ_SAN) \
	  -fsanitize=fuzzer tests/fuzz/fuzz_safetensors.cpp -o $(BUILD)/fuzz/fuzz_safetensors \
	  $(BUILD)/fuzz/libheed.a $(LDLIBS)
	@mkdir -p $(BUILD)/fuzz/corpus $(BUILD)/fuzz/corpus_safetensors
	cd $(BUILD)/fuzz && ./fuzz_checkpoint -max_total_time=$(FUZZ_SECONDS) -timeout=10 \
	  -rss_limit_mb=4096 -print_final_stats=1 corpus $(CURDIR)/tests/fuzz/corpus
	cd $(BUILD)/fuzz && ./fuzz_safetensors -max_total_time=$(FUZZ_SECONDS) -timeout=10 \
	  -rss_limit_mb=4096 -print_final_stats=1 corpus_safetensors $(CURDIR)/tests/fuzz/corpus_safetensors

# The fuzzer's seeds (committed under tests/fuzz/corpus; rerun when the format changes).
fuzz-seeds: $(BUILD)/libheed.a $(UMBRELLA)
	@mkdir -p $(BUILD)/fuzz-seeds tests/fuzz/corpus
	$(CXX) $(BASEFLAGS) $(CXXFLAGS) tests/fuzz/write_seeds.cpp -o $(BUILD)/fuzz-seeds/write_seeds \
	  $(BUILD)/libheed.a $(LDLIBS)
	$(BUILD)/fuzz-seeds/write_seeds tests/fuzz/corpus

# The long run (tests/soak/soak.cpp): seq2seq training with a checkpoint every 2 seconds,
# SIGKILLed at random moments and resumed, against a run never killed; passes when the two
# end bit for bit equal, every checkpoint loaded after every kill and no temporary file is
# left. Resident memory is printed as it goes. One thread per trainer, niced.
# soak-tiny, part of `make test`, is the same mechanism in seconds, and a sabotaged resume
# (one batch skipped) that must be caught (exit 3).
SOAK_MINUTES ?= 30
$(BUILD)/soak/soak: tests/soak/soak.cpp $(BUILD)/libheed.a | $(UMBRELLA)
	@mkdir -p $(@D)
	$(CXX) $(BASEFLAGS) $(CXXFLAGS) -I$(INC) $< -o $@ $(BUILD)/libheed.a $(LDLIBS)

soak: $(BUILD)/soak/soak
	nice -n 10 $(BUILD)/soak/soak run --minutes $(SOAK_MINUTES) --dir $(BUILD)/soak/run

soak-tiny: $(BUILD)/soak/soak
	$(BUILD)/soak/soak run --seconds 4 --mean-kill 0.6 --ckpt-seconds 0.2 --min-kills 2 --dir $(BUILD)/soak/tiny
	@echo "soak-tiny: now a resume that skips one batch; the driver must report the difference (exit 3)"
	@$(BUILD)/soak/soak run --seconds 3 --mean-kill 0.6 --ckpt-seconds 0.2 --min-kills 1 --sabotage \
	  --dir $(BUILD)/soak/sabotage; s=$$?; [ $$s = 3 ] && echo "soak-tiny: caught" || \
	  { echo "soak-tiny: the sabotaged resume was not caught (exit $$s)"; exit 1; }

# Install into a scratch prefix and build a program against it twice: with pkg-config, and as
# a ten-line CMake project (find_package(heed 0.2 REQUIRED), heed::heed). The program prints
# heed::version(), which must equal core/version.h's, heed.pc's and the CMake package's.
check-install: DEPS += cmake:/usr/bin/cmake
check-install: $(BUILD)/libheed.a $(UMBRELLA) | deps
	@rm -rf $(BUILD)/install-check && mkdir -p $(BUILD)/install-check/cmake
	@$(MAKE) --no-print-directory install PREFIX=$(abspath $(BUILD))/install-check/prefix >/dev/null
	@printf '#include <heed/heed.h>\n#include <cstdio>\nint main() { heed::Tensor x = heed::ones({2, 3}).requires_grad_();\n  heed::Tensor y = heed::sum(heed::matmul(x, heed::ones({3, 2})));\n  y.backward();\n  std::printf("%%s\\n", heed::version());\n  return x.grad().at({1, 2}) == 2 ? 0 : 1; }\n' > $(BUILD)/install-check/app.cpp
	@PKG_CONFIG_PATH=$(abspath $(BUILD))/install-check/prefix/lib/pkgconfig \
	  $(CXX) -std=c++17 $(BUILD)/install-check/app.cpp -o $(BUILD)/install-check/app \
	  $$(PKG_CONFIG_PATH=$(abspath $(BUILD))/install-check/prefix/lib/pkgconfig pkg-config --cflags --libs heed)
	@v=$$($(BUILD)/install-check/app) || { echo "check-install: the pkg-config program failed"; exit 1; }; \
	  pc=$$(PKG_CONFIG_PATH=$(abspath $(BUILD))/install-check/prefix/lib/pkgconfig pkg-config --modversion heed); \
	  [ "$$v" = "$(HEED_VERSION)" ] && [ "$$pc" = "$(HEED_VERSION)" ] || \
	  { echo "check-install: versions differ: core/version.h $(HEED_VERSION), heed::version() $$v, heed.pc $$pc"; exit 1; }
	@echo "check-install: a program built with pkg-config against the installed heed ran correctly (version $(HEED_VERSION))"
	@printf 'cmake_minimum_required(VERSION 3.16)\nproject(app CXX)\nfind_package(heed 0.2 REQUIRED)\nif(NOT heed_VERSION STREQUAL "$(HEED_VERSION)")\n  message(FATAL_ERROR "heed package version $${heed_VERSION}, core/version.h $(HEED_VERSION)")\nendif()\nadd_executable(app ../app.cpp)\ntarget_link_libraries(app PRIVATE heed::heed)\n' \
	  > $(BUILD)/install-check/cmake/CMakeLists.txt
	@cd $(BUILD)/install-check/cmake && \
	  cmake -S . -B build -DCMAKE_PREFIX_PATH=$(abspath $(BUILD))/install-check/prefix \
	    -DCMAKE_CXX_COMPILER="$(lastword $(CXX))" >build.log 2>&1 && \
	  cmake --build build >>build.log 2>&1 || { cat build.log; echo "check-install: the CMake project failed to build"; exit 1; }
	@v=$$($(BUILD)/install-check/cmake/build/app) && [ "$$v" = "$(HEED_VERSION)" ] || \
	  { echo "check-install: the CMake-built program failed or printed version '$$v'"; exit 1; }
	@echo "check-install: a CMake project (find_package(heed 0.2), heed::heed) built and ran correctly"

# ---- examples, demo, benchmarks ----
# Each examples/*.cpp is one program; examples/common/*.h are header-only helpers they share.
# Pictures are drawn with Debian's libstb (stb_truetype, stb_image_write: -lstb holds them).
EXAMPLE_LIBS := -lstb
$(BUILD)/examples/%: examples/%.cpp $(BUILD)/libheed.a | $(UMBRELLA)
	@mkdir -p $(@D)
	$(CXX) $(BASEFLAGS) $(CXXFLAGS) -I$(INC) $< -o $@ $(BUILD)/libheed.a $(EXAMPLE_LIBS) $(LDLIBS)

examples: $(EXAMPLES)

demo: $(BUILD)/examples/translate
	@mkdir -p $(BUILD)/demo
	$(BUILD)/examples/translate --out $(BUILD)/demo --min-accuracy 99

$(BUILD)/bench/%: tests/bench/%.cpp $(BUILD)/libheed.a | $(UMBRELLA)
	@mkdir -p $(@D)
	$(CXX) $(BASEFLAGS) $(CXXFLAGS) -I$(INC) $< -o $@ $(BUILD)/libheed.a $(LDLIBS)

# PyTorch's side runs on the pthread OpenBLAS (tests/bench/bench_models_torch.py).
bench: DEPS += libopenblas0-pthread:/usr/lib/$(MULTIARCH)/openblas-pthread/libopenblas.so.0
bench: deps $(BENCHES) $(BUILD)/portable/cpu_levels
	@echo "bench: heed $(HEED_VERSION), kernels for $$($(BUILD)/portable/cpu_levels --in-use), $(ARCH),$$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
	/usr/bin/python3 tests/bench/bench_torch.py $(BUILD)/bench/bench_core
	/usr/bin/python3 tests/bench/bench_attention_torch.py $(BUILD)/bench/bench_attention
	$(BUILD)/bench/bench_block_sparse $(BUILD)/bench/heed_block_sparse.txt
	/usr/bin/python3 tests/bench/bench_block_sparse_torch.py $(BUILD)/bench/heed_block_sparse.txt
	/usr/bin/python3 tests/bench/bench_models_torch.py
	$(BUILD)/bench/bench_models --busy gpt_baby seq2seq lstm gru
	$(BUILD)/bench/bench_models --anomaly gpt_baby seq2seq
	$(BUILD)/bench/bench_denormals
	/usr/bin/python3 tests/bench/bench_generate_torch.py

# ---- PyTorch goldens (needs python3-torch; the committed .bin files keep `make test` free of it) ----
goldens:
	@for g in tests/golden/gen_*.py; do echo "/usr/bin/python3 $$g"; /usr/bin/python3 $$g || exit 1; done

# ---- install ----
# heed's version, read from core/version.h (the one place it is written): heed.pc, heed-mpi.pc
# and heedConfigVersion.cmake carry it, and check-install proves heed::version() agrees.
HEED_VERSION := $(shell sed -n 's/^\#define HEED_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$$/\2/p' core/version.h | paste -sd.)

# CMake's find_package(heed): lib/cmake/heed/heedConfig.cmake defines heed::heed (and
# heed::heed_mpi when libheed_mpi.a is installed beside it); the prefix is found from the
# file's own place, so an installed tree can be moved.
define HEED_CMAKE_CONFIG
# heedConfig.cmake - find_package(heed) for heed $(HEED_VERSION) (written by heed's `make install`).
#   find_package(heed 0.2 REQUIRED)
#   target_link_libraries(app PRIVATE heed::heed)      # heed::heed_mpi: data parallel over MPI
get_filename_component(_heed_prefix "$${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
include(CMakeFindDependencyMacro)
find_dependency(OpenMP COMPONENTS CXX)
if(NOT TARGET heed::heed)
  add_library(heed::heed STATIC IMPORTED)
  set_target_properties(heed::heed PROPERTIES
    IMPORTED_LOCATION "$${_heed_prefix}/lib/libheed.a"
    INTERFACE_INCLUDE_DIRECTORIES "$${_heed_prefix}/include"
    INTERFACE_COMPILE_FEATURES cxx_std_17
    INTERFACE_LINK_LIBRARIES "OpenMP::OpenMP_CXX;$(BLAS_LIB)/libopenblas.so"
    INTERFACE_LINK_OPTIONS "LINKER:-rpath,$(BLAS_LIB)")
endif()
if(EXISTS "$${_heed_prefix}/lib/libheed_mpi.a" AND NOT TARGET heed::heed_mpi)
  find_package(MPI QUIET COMPONENTS C)
  if(MPI_C_FOUND)
    add_library(heed::heed_mpi STATIC IMPORTED)
    set_target_properties(heed::heed_mpi PROPERTIES
      IMPORTED_LOCATION "$${_heed_prefix}/lib/libheed_mpi.a"
      INTERFACE_COMPILE_DEFINITIONS "OMPI_SKIP_MPICXX;MPICH_SKIP_MPICXX"
      INTERFACE_LINK_LIBRARIES "heed::heed;MPI::MPI_C")
  endif()
endif()
unset(_heed_prefix)
endef

# 0.x: a new minor version may change the API, so 0.2 accepts 0.2.x only; from 1.0 on, the
# same major version and no older than asked.
define HEED_CMAKE_VERSION
# heedConfigVersion.cmake - heed $(HEED_VERSION) (written by heed's `make install`).
set(PACKAGE_VERSION "$(HEED_VERSION)")
if(PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION)
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
elseif(NOT PACKAGE_FIND_VERSION_MAJOR EQUAL $(word 1,$(subst ., ,$(HEED_VERSION))))
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
elseif(PACKAGE_FIND_VERSION_MAJOR EQUAL 0 AND NOT PACKAGE_FIND_VERSION_MINOR EQUAL $(word 2,$(subst ., ,$(HEED_VERSION))))
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
else()
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
  if(PACKAGE_FIND_VERSION VERSION_EQUAL PACKAGE_VERSION)
    set(PACKAGE_VERSION_EXACT TRUE)
  endif()
endif()
if(NOT CMAKE_SIZEOF_VOID_P EQUAL 8)  # libheed.a is a 64-bit x86 library
  set(PACKAGE_VERSION "$${PACKAGE_VERSION} (64-bit)")
  set(PACKAGE_VERSION_UNSUITABLE TRUE)
endif()
endef
export HEED_CMAKE_CONFIG HEED_CMAKE_VERSION

install: $(BUILD)/libheed.a $(UMBRELLA)
	@for h in $(HEADERS); do \
	  mkdir -p $(DESTDIR)$(PREFIX)/include/heed/$$(dirname $$h); \
	  install -m 644 $$h $(DESTDIR)$(PREFIX)/include/heed/$$h; \
	done
	install -m 644 $(UMBRELLA) $(DESTDIR)$(PREFIX)/include/heed/heed.h
	install -d $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/lib/cmake/heed
	install -m 644 $(BUILD)/libheed.a $(DESTDIR)$(PREFIX)/lib/
	@printf 'prefix=%s\nincludedir=$${prefix}/include\nlibdir=$${prefix}/lib\n\nName: heed\nDescription: reverse-mode autograd with attention layers\nVersion: %s\nCflags: -I$${includedir} -fopenmp\nLibs: -L$${libdir} -lheed -L%s -Wl,-rpath,%s -lopenblas -fopenmp\n' \
	  '$(PREFIX)' '$(HEED_VERSION)' '$(BLAS_LIB)' '$(BLAS_LIB)' > $(DESTDIR)$(PREFIX)/lib/pkgconfig/heed.pc
	@printf '%s\n' "$$HEED_CMAKE_CONFIG" > $(DESTDIR)$(PREFIX)/lib/cmake/heed/heedConfig.cmake
	@printf '%s\n' "$$HEED_CMAKE_VERSION" > $(DESTDIR)$(PREFIX)/lib/cmake/heed/heedConfigVersion.cmake

uninstall:
	rm -rf $(DESTDIR)$(PREFIX)/include/heed
	rm -f $(DESTDIR)$(PREFIX)/lib/libheed.a $(DESTDIR)$(PREFIX)/lib/pkgconfig/heed.pc
	rm -rf $(DESTDIR)$(PREFIX)/lib/cmake/heed
	rm -f $(DESTDIR)$(PREFIX)/lib/libheed_mpi.a $(DESTDIR)$(PREFIX)/lib/pkgconfig/heed-mpi.pc

# ---- data parallel training over MPI (optim/*_mpi.*; optional) ----
# `make USE_MPI=1` adds build/libheed_mpi.a to `all` and to `install` (with heed-mpi.pc,
# which requires heed.pc); `make test-mpi` builds the MPI tests with mpicxx and runs them on
# 2 processes of this machine. Open MPI refuses root unless told, and --oversubscribe lets
# 2 ranks share fewer cores; the shared-memory transport (vader) keeps it on this machine.
# ccache: make MPICXX="ccache mpicxx".
MPICXX    ?= mpicxx
MPIFLAGS  := -DOMPI_SKIP_MPICXX -DMPICH_SKIP_MPICXX  # the C API only (MPI-2's C++ bindings are gone in MPI-3)
MPIRUN    := mpirun --allow-run-as-root --oversubscribe --mca btl self,vader
MPI_DEPS  := libopenmpi-dev:/usr/include/$(MULTIARCH)/mpi/mpi.h openmpi-bin:/usr/bin/mpirun
MPI_OBJS  := $(MPI_SRCS:%.cpp=$(BUILD)/mpi/%.o)
MPI_TEST_SRCS := tests/mpi/main_mpi.cpp tests/mpi/test_data_parallel.cpp
ifeq ($(USE_MPI),1)
all: $(BUILD)/libheed_mpi.a
install: install-mpi
DEPS += $(MPI_DEPS)
endif
test-mpi bench-allreduce bench-overlap install-mpi check-install-mpi $(BUILD)/libheed_mpi.a: DEPS += $(MPI_DEPS)
$(BUILD)/examples/char_gpt_mpi: DEPS += $(MPI_DEPS)

$(BUILD)/mpi/%.o: %.cpp $(FLAGS_STAMP) | deps $(UMBRELLA)
	@mkdir -p $(@D)
	$(MPICXX) $(MPIFLAGS) $(BASEFLAGS) $(CXXFLAGS) -c $< -o $@

$(BUILD)/libheed_mpi.a: $(MPI_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/tests_mpi: $(MPI_TEST_SRCS) $(BUILD)/libheed_mpi.a $(BUILD)/libheed.a | deps $(UMBRELLA)
	$(MPICXX) $(MPIFLAGS) $(BASEFLAGS) $(CXXFLAGS) -I$(INC) $(MPI_TEST_SRCS) -o $@ \
	  $(BUILD)/libheed_mpi.a $(BUILD)/libheed.a $(LDLIBS)

$(BUILD)/mpi/dead_rank: tests/mpi/dead_rank.cpp $(BUILD)/libheed_mpi.a $(BUILD)/libheed.a | deps $(UMBRELLA)
	$(MPICXX) $(MPIFLAGS) $(BASEFLAGS) $(CXXFLAGS) -I$(INC) $< -o $@ $(BUILD)/libheed_mpi.a $(BUILD)/libheed.a $(LDLIBS)

# The character GPT with its data parallel path compiled in (-DHEED_WITH_MPI).
$(BUILD)/examples/char_gpt_mpi: examples/char_gpt.cpp $(BUILD)/libheed_mpi.a $(BUILD)/libheed.a | deps $(UMBRELLA)
	@mkdir -p $(@D)
	$(MPICXX) $(MPIFLAGS) $(BASEFLAGS) $(CXXFLAGS) -DHEED_WITH_MPI -I$(INC) $< -o $@ \
	  $(BUILD)/libheed_mpi.a $(BUILD)/libheed.a $(EXAMPLE_LIBS) $(LDLIBS)

# Each rank runs the doctest cases; one rank's failure fails mpirun. `timeout` turns a hang
# (a rank stuck in a collective its peer never joins) into a failure.
test-mpi: $(BUILD)/tests_mpi $(BUILD)/mpi/dead_rank $(BUILD)/examples/char_gpt_mpi
	timeout 300 $(MPIRUN) -np 2 $(BUILD)/tests_mpi --no-colors
	MPIRUN="$(MPIRUN)" tests/mpi/dead_rank.sh $(BUILD)/mpi/dead_rank
	@mkdir -p $(BUILD)/smoke-mpi
	timeout 300 $(MPIRUN) -np 2 $(BUILD)/examples/char_gpt_mpi --smoke --out $(BUILD)/smoke-mpi
	@$(MAKE) --no-print-directory check-install-mpi

# heed-mpi.pc: install both libraries into a scratch prefix, build with mpicxx and pkg-config.
check-install-mpi: $(BUILD)/libheed_mpi.a $(BUILD)/libheed.a $(UMBRELLA)
	@rm -rf $(BUILD)/install-check-mpi && mkdir -p $(BUILD)/install-check-mpi
	@$(MAKE) --no-print-directory install install-mpi PREFIX=$(abspath $(BUILD))/install-check-mpi/prefix >/dev/null
	@printf '#include <heed/heed.h>\n#include <heed/optim/distributed_mpi.h>\nint main(int argc, char** argv) { heed::dist::MpiGuard mpi(argc, argv);\n  return heed::dist::world_size() == 1 ? 0 : 1; }\n' > $(BUILD)/install-check-mpi/app.cpp
	@PKG_CONFIG_PATH=$(abspath $(BUILD))/install-check-mpi/prefix/lib/pkgconfig \
	  $(MPICXX) $(MPIFLAGS) -std=c++17 $(BUILD)/install-check-mpi/app.cpp -o $(BUILD)/install-check-mpi/app \
	  $$(PKG_CONFIG_PATH=$(abspath $(BUILD))/install-check-mpi/prefix/lib/pkgconfig pkg-config --cflags --libs heed-mpi)
	@$(BUILD)/install-check-mpi/app && echo "check-install-mpi: a program built with mpicxx and pkg-config heed-mpi ran correctly"

# MPI_Allreduce time on buffers of 1e4 .. 1e7 floats, 2 ranks (README's scaling estimate).
bench-allreduce: $(BUILD)/bench-mpi/bench_allreduce
	$(MPIRUN) -np 2 $<

$(BUILD)/bench-mpi/bench_allreduce: tests/bench/mpi/bench_allreduce.cpp | deps
	@mkdir -p $(@D)
	$(MPICXX) -O2 $< -o $@

# Gradient averaging after backward vs overlapped with it, against compute alone (README).
bench-overlap: $(BUILD)/bench-mpi/bench_overlap
	$(MPIRUN) -np 2 $<

$(BUILD)/bench-mpi/bench_overlap: tests/bench/mpi/bench_overlap.cpp $(BUILD)/libheed_mpi.a $(BUILD)/libheed.a | deps $(UMBRELLA)
	@mkdir -p $(@D)
	$(MPICXX) $(MPIFLAGS) $(BASEFLAGS) $(CXXFLAGS) -I$(INC) $< -o $@ $(BUILD)/libheed_mpi.a $(BUILD)/libheed.a $(LDLIBS)

install-mpi: $(BUILD)/libheed_mpi.a $(UMBRELLA)
	@for h in $(MPI_HEADERS); do \
	  mkdir -p $(DESTDIR)$(PREFIX)/include/heed/$$(dirname $$h); \
	  install -m 644 $$h $(DESTDIR)$(PREFIX)/include/heed/$$h; \
	done
	install -d $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 644 $(BUILD)/libheed_mpi.a $(DESTDIR)$(PREFIX)/lib/
	@printf 'prefix=%s\nincludedir=$${prefix}/include\nlibdir=$${prefix}/lib\n\nName: heed-mpi\nDescription: data parallel training for heed over MPI (compile with mpicxx)\nVersion: %s\nRequires: heed\nCflags: -I$${includedir}\nLibs: -L$${libdir} -lheed_mpi\n' \
	  '$(PREFIX)' '$(HEED_VERSION)' > $(DESTDIR)$(PREFIX)/lib/pkgconfig/heed-mpi.pc

clean:
	rm -rf $(BUILD)

-include $(PCH_F32:.gch=.d) $(PCH_F64:.gch=.d)
-include $(MPI_OBJS:.o=.d) $(OBJS_F32:.o=.d) $(OBJS_F64:.o=.d) $(TEST_F32_OBJS:.o=.d) $(TEST_F64_OBJS:.o=.d) $(EXAMPLES:=.d) $(BENCHES:=.d) $(BUILD)/soak/soak.d

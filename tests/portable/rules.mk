# tests/portable/rules.mk - check-portable, a step of `make test` (included by the top-level
# Makefile).
# The default build must run on any x86-64-v2 CPU. check-portable runs, under QEMU's user-mode
# emulation of a Nehalem (SSE4.2, the v2 baseline) and a Haswell (AVX2 + FMA), the README's
# complete program ($(BUILD)/readme/program, written from README.md by tests/readme/rules.mk)
# and a quick subset of the float tests, and compares what they print with the same
# programs run natively at that level (HEED_CPU, and OpenBLAS told the same core with
# OPENBLAS_CORETYPE, so both sides sum in the same order): every line but doctest's
# assertion count, which is larger natively, where test_packed_gemm also runs the levels
# above the emulated CPU's. Then the whole float suite runs once per level this CPU supports
# below its best (the best is `make test`'s own run), so every kernel variant is tested
# wherever CI lands.
# Any unexpected instruction kills the emulated run with SIGILL. (QEMU's warnings about CPU
# features it does not emulate go to stderr, which is not compared.)
# The compared runs multiply on OpenBLAS (HEED_GEMM=openblas), whose kernels OPENBLAS_CORETYPE
# fixes on both sides; oneDNN picks its own from what the CPU reports, so its runs under QEMU
# (the GEMM tests on every engine and the quick subset) must pass, not print the same.
PORTABLE   := $(BUILD)/portable
# test cases that are quick natively: QEMU translates every instruction, so the whole suite
# would be too slow under it (test_packed_gemm_bf16 runs a scalar model of an AVX-512
# instruction: plain C++ that takes 45 s under QEMU and tests no CPU level). The exclusion
# comes first: the GEMM tests' run appends to the -sf list.
QEMU_TESTS := -sfe=*test_packed_gemm_bf16* -sf=*test_packed_gemm*,*test_softmax*,*test_lstm_layer*,*test_gru_layer*
QEMU_CPUS  := Nehalem:v2:NEHALEM Haswell:avx2:HASWELL

$(PORTABLE)/cpu_levels: tests/portable/cpu_levels.cpp $(BUILD)/libheed.a | $(UMBRELLA)
	@mkdir -p $(@D)
	$(LINK_PROGRAM) $(LDLIBS)

check-portable: DEPS += qemu-user:/usr/bin/qemu-x86_64
check-portable: $(BUILD)/tests_f32 $(README_BUILD)/program $(PORTABLE)/cpu_levels | deps
	@case "$(CXXFLAGS)" in *-march=native*) echo "check-portable: skipped (built with -march=native, which is not portable)"; exit 0;; esac; \
	for f in $(BUILD)/f32/core/*_avx2.o $(BUILD)/f32/core/*_avx512.o $(BUILD)/f32/core/*_avx512_bf16.o; do \
	  weak=$$(nm -C --defined-only $$f | grep -E ' [WVu] '); \
	  [ -z "$$weak" ] || { echo "check-portable: $$f defines shared symbols another file may link to:"; echo "$$weak"; exit 1; }; \
	done; \
	for c in $(QEMU_CPUS); do \
	  cpu=$${c%%:*}; rest=$${c#*:}; level=$${rest%%:*}; blas=$${rest#*:}; \
	  for prog in "$(README_BUILD)/program" "$(BUILD)/tests_f32 $(QEMU_TESTS) --no-colors --no-version"; do \
	    HEED_GEMM=openblas HEED_CPU=$$level OPENBLAS_CORETYPE=$$blas $$prog > $(PORTABLE)/native.txt || \
	      { cat $(PORTABLE)/native.txt; echo "check-portable: $$prog failed natively at HEED_CPU=$$level"; exit 1; }; \
	    HEED_GEMM=openblas OPENBLAS_CORETYPE=$$blas qemu-x86_64 -cpu $$cpu $$prog > $(PORTABLE)/emulated.txt 2> $(PORTABLE)/qemu.err || \
	      { cat $(PORTABLE)/emulated.txt $(PORTABLE)/qemu.err; echo "check-portable: $$prog failed under qemu-x86_64 -cpu $$cpu"; exit 1; }; \
	    for f in native emulated; do grep -v 'assertions:' $(PORTABLE)/$$f.txt | tr -s ' ' > $(PORTABLE)/$$f.cmp; done; \
	    diff $(PORTABLE)/native.cmp $(PORTABLE)/emulated.cmp || \
	      { echo "check-portable: $$prog printed differently under qemu-x86_64 -cpu $$cpu"; exit 1; }; \
	    echo "check-portable: $$(echo $$prog | cut -d' ' -f1) under qemu-x86_64 -cpu $$cpu printed what it prints natively at $$level: $$(grep -E 'loss|test cases' $(PORTABLE)/native.txt | tail -n 1)"; \
	  done; \
	  qemu-x86_64 -cpu $$cpu $(BUILD)/tests_f32 $(QEMU_TESTS),*test_blas*,*test_gemm_engine* --no-colors --no-version \
	    > $(PORTABLE)/emulated.txt 2> $(PORTABLE)/qemu.err || \
	    { cat $(PORTABLE)/emulated.txt $(PORTABLE)/qemu.err; echo "check-portable: the GEMM tests on oneDNN failed under qemu-x86_64 -cpu $$cpu"; exit 1; }; \
	  echo "check-portable: the GEMM tests and the quick subset on oneDNN under qemu-x86_64 -cpu $$cpu: $$(grep 'test cases' $(PORTABLE)/emulated.txt)"; \
	done; \
	levels=$$($(PORTABLE)/cpu_levels) || exit 1; best=$$(echo "$$levels" | tail -n 1); \
	for level in $$levels; do [ $$level = $$best ] && continue; \
	  echo "HEED_CPU=$$level $(BUILD)/tests_f32"; HEED_CPU=$$level $(BUILD)/tests_f32 || exit 1; \
	done

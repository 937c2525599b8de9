# tests/rules.mk - `make test` and the two test binaries (included by the top-level Makefile).
# tests/test_*.cpp run in float (goldens, behaviour); tests/gradcheck_*.cpp in double.
TEST_F32_SRCS := tests/main.cpp $(wildcard tests/test_*.cpp)
TEST_F64_SRCS := tests/main.cpp $(wildcard tests/gradcheck_*.cpp)
TEST_F32_OBJS := $(TEST_F32_SRCS:%.cpp=$(BUILD)/f32/%.o)
TEST_F64_OBJS := $(TEST_F64_SRCS:%.cpp=$(BUILD)/f64/%.o)

# Every example has a --smoke run (tiny sizes, seconds) that exits 1 unless its loss falls
# and its PNGs are valid files of the size drawn; translate runs once per --model.
SMOKE_EXAMPLES := translate char_gpt classify lstm_vs_attention

# The float suite runs twice: on the default GEMM engine (oneDNN, core/gemm_engine.h) and on
# OpenBLAS. OPENBLAS_TESTS narrows the second run (doctest filters) when CI time is short.
OPENBLAS_TESTS ?=

# In order: the vectorisation check (below), the float suite (on each engine), check-portable
# (tests/portable/rules.mk), the double suite, check-repro (tests/repro/rules.mk), soak-tiny
# (tests/soak/rules.mk), the examples' smoke runs (built by examples/rules.mk) and
# check-install (tests/install/rules.mk). Every step runs even when one before it failed, so
# one red step never hides the state of the others; the last lines name each failed step,
# and make test then fails.
TEST_FAILED := $(BUILD)/test-failed-steps
test: $(BUILD)/tests_f32 $(BUILD)/tests_f64 $(SMOKE_EXAMPLES:%=$(BUILD)/examples/%) $(BUILD)/soak/soak
	@rm -f $(TEST_FAILED)
	@$(MAKE) --no-print-directory check-vectorised || echo "check-vectorised" >> $(TEST_FAILED)
	$(BUILD)/tests_f32 || echo "the float suite on oneDNN ($(BUILD)/tests_f32)" >> $(TEST_FAILED)
	HEED_GEMM=openblas $(BUILD)/tests_f32 $(OPENBLAS_TESTS) || echo "the float suite on OpenBLAS (HEED_GEMM=openblas $(BUILD)/tests_f32)" >> $(TEST_FAILED)
	@$(MAKE) --no-print-directory check-portable || echo "check-portable" >> $(TEST_FAILED)
	$(BUILD)/tests_f64 || echo "the double suite ($(BUILD)/tests_f64)" >> $(TEST_FAILED)
	@$(MAKE) --no-print-directory check-repro || echo "check-repro" >> $(TEST_FAILED)
	@$(MAKE) --no-print-directory soak-tiny || echo "soak-tiny" >> $(TEST_FAILED)
	@mkdir -p $(BUILD)/smoke
	@for e in $(SMOKE_EXAMPLES); do echo "$(BUILD)/examples/$$e --smoke --out $(BUILD)/smoke"; \
	  $(BUILD)/examples/$$e --smoke --out $(BUILD)/smoke || echo "$(BUILD)/examples/$$e --smoke" >> $(TEST_FAILED); done
	$(BUILD)/examples/translate --smoke --model transformer --out $(BUILD)/smoke || echo "$(BUILD)/examples/translate --smoke --model transformer" >> $(TEST_FAILED)
	@$(MAKE) --no-print-directory check-install || echo "check-install" >> $(TEST_FAILED)
	@if [ -s $(TEST_FAILED) ]; then echo "make test: these steps failed:"; sed 's/^/  /' $(TEST_FAILED); exit 1; fi; \
	echo "make test: every step passed"

# Every test file begins with #include "helpers.h" (doctest, the standard headers and the few
# heed headers the helpers use: core/tensor.h, core/error.h, core/parallel.h and
# autograd/engine/gradcheck.h). It is precompiled once per build (-x c++-header, same flags) and
# given to each test file with -include, so the test files skip parsing it; main.cpp defines
# doctest's runner before its include, so it has its own rule.
# Each test file includes the other heed headers it uses by name, not the umbrella, and -MMD
# records them: touching layers/attention/multihead_attention.h recompiles the tests that include it
# (and the library files that do), not all of them. A header in helpers.h, above all
# core/tensor.h, still recompiles every test.
# Test files compile at -O1 (TEST_CXXFLAGS): they are glue around library calls, which -O3
# would only make slower to compile; the library they test keeps CXXFLAGS.
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

# -lstb: test_atomic_write writes and decodes the examples' PNGs (examples/common/canvas.h).
$(BUILD)/tests_f32: $(TEST_F32_OBJS) $(BUILD)/libheed.a
	$(CXX) $(LDFLAGS) $^ -o $@ -lstb $(LDLIBS)

$(BUILD)/tests_f64: $(TEST_F64_OBJS) $(BUILD)/libheed_f64.a
	$(CXX) $(LDFLAGS) $^ -o $@ $(LDLIBS)

# A subset, for working on one op or layer: `make check T="checkpoint gradcheck_arith"` builds
# only the named test files (and tests/main.cpp) against the libraries and runs them. Each
# word W of T selects tests/W.cpp, tests/test_W.cpp and tests/gradcheck_W.cpp, those that
# exist (W may hold a shell pattern: T='golden_*'); test_*.cpp link into build/check/tests_f32
# against libheed.a, gradcheck_*.cpp into build/check/tests_f64 against libheed_f64.a, each
# linked afresh (they hold whichever files T named last). ARGS goes to both doctest runners
# (ARGS='-tc="*flash*"'). A word that selects nothing is an error naming it.
CHECK_SRCS := $(sort $(foreach w,$(T),$(wildcard tests/$(w).cpp tests/test_$(w).cpp tests/gradcheck_$(w).cpp)))
CHECK_F32 := $(filter tests/test_%.cpp,$(CHECK_SRCS))
CHECK_F64 := $(filter tests/gradcheck_%.cpp,$(CHECK_SRCS))
CHECK_UNMATCHED := $(strip $(foreach w,$(T),$(if $(wildcard tests/$(w).cpp tests/test_$(w).cpp tests/gradcheck_$(w).cpp),,$(w))))
ifneq ($(filter check,$(MAKECMDGOALS)),)
ifeq ($(strip $(T)),)
$(error usage: make check T="checkpoint gradcheck_arith" (tests/README.md))
endif
ifneq ($(CHECK_UNMATCHED),)
$(error make check: no tests/W.cpp, tests/test_W.cpp or tests/gradcheck_W.cpp for W in: $(CHECK_UNMATCHED))
endif
endif
.PHONY: check
check: $(if $(CHECK_F32),$(BUILD)/f32/tests/main.o $(CHECK_F32:%.cpp=$(BUILD)/f32/%.o) $(BUILD)/libheed.a) \
       $(if $(CHECK_F64),$(BUILD)/f64/tests/main.o $(CHECK_F64:%.cpp=$(BUILD)/f64/%.o) $(BUILD)/libheed_f64.a)
	@mkdir -p $(BUILD)/check
ifneq ($(CHECK_F32),)
	$(CXX) $(LDFLAGS) $(BUILD)/f32/tests/main.o $(CHECK_F32:%.cpp=$(BUILD)/f32/%.o) $(BUILD)/libheed.a -o $(BUILD)/check/tests_f32 -lstb $(LDLIBS)
	$(BUILD)/check/tests_f32 $(ARGS)
endif
ifneq ($(CHECK_F64),)
	$(CXX) $(LDFLAGS) $(BUILD)/f64/tests/main.o $(CHECK_F64:%.cpp=$(BUILD)/f64/%.o) $(BUILD)/libheed_f64.a -o $(BUILD)/check/tests_f64 $(LDLIBS)
	$(BUILD)/check/tests_f64 $(ARGS)
endif

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

-include $(PCH_F32:.gch=.d) $(PCH_F64:.gch=.d) $(TEST_F32_OBJS:.o=.d) $(TEST_F64_OBJS:.o=.d)

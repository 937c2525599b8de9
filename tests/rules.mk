# tests/rules.mk - `make test` and the two test binaries (included by the top-level Makefile).
# tests/test_*.cpp run in float (goldens, behaviour); tests/gradcheck_*.cpp in double.
# Both binaries are built by one template, test_rules (below, expanded once per precision as
# the Makefile's lib_rules is); what differs between them is in these lines:
#   P     test files            binary             library (LIB_P)      flags (TEST_FLAGS_P)
#   f32   tests/test_*.cpp      build/tests_f32    build/libheed.a      $(TEST_CXXFLAGS)
#   f64   tests/gradcheck_*.cpp build/tests_f64    build/libheed_f64.a  $(F64FLAGS)
TEST_FILES_f32 := test_*
TEST_FILES_f64 := gradcheck_*
# -lstb: test_atomic_write writes and decodes the examples' PNGs (examples/common/canvas.h).
TEST_LIBS_f32  := -lstb
TEST_LIBS_f64  :=

# Every example has a --smoke run (tiny sizes, seconds) that exits 1 unless its loss falls
# and its PNGs are valid files of the size drawn; translate runs once per --model.
SMOKE_EXAMPLES := translate char_gpt classify lstm_vs_attention

# The float suite runs twice: on the default GEMM engine (oneDNN, core/gemm_engine.h) and on
# OpenBLAS. OPENBLAS_TESTS narrows the second run (doctest filters) when CI time is short.
OPENBLAS_TESTS ?=

# In order: the vectorisation check (below), the float suite (on each engine), check-readme
# (README.md's code, compiled from README.md: tests/readme/rules.mk), check-portable
# (tests/portable/rules.mk), the double suite, check-repro (tests/repro/rules.mk), soak-tiny
# (tests/soak/rules.mk), the examples' smoke runs (built by examples/rules.mk) and
# check-install (tests/install/rules.mk). Every step runs even when one before it failed, so
# one red step never hides the state of the others; the last lines name each failed step,
# and make test then fails.
TEST_FAILED := $(BUILD)/test-failed-steps
test: $(PRECISIONS:%=$(BUILD)/tests_%) $(SMOKE_EXAMPLES:%=$(BUILD)/examples/%) $(BUILD)/soak/soak
	@rm -f $(TEST_FAILED)
	@$(MAKE) --no-print-directory check-vectorised || echo "check-vectorised" >> $(TEST_FAILED)
	$(BUILD)/tests_f32 || echo "the float suite on oneDNN ($(BUILD)/tests_f32)" >> $(TEST_FAILED)
	HEED_GEMM=openblas $(BUILD)/tests_f32 $(OPENBLAS_TESTS) || echo "the float suite on OpenBLAS (HEED_GEMM=openblas $(BUILD)/tests_f32)" >> $(TEST_FAILED)
	@$(MAKE) --no-print-directory check-readme || echo "check-readme" >> $(TEST_FAILED)
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
TEST_FLAGS_f32  = $(TEST_CXXFLAGS)
TEST_FLAGS_f64  = $(F64FLAGS)
# For P = f64, $(eval $(call test_rules,f64)) writes (as lib_rules, $$ is a $ kept for the rule):
#   TEST_SRCS_f64 := tests/main.cpp $(wildcard tests/gradcheck_*.cpp)
#   PCH_f64 := build/f64/tests/pch/helpers.h.gch, built from tests/helpers.h with $(TEST_FLAGS_f64)
#   build/f64/tests/%.o: tests/%.cpp $(PCH_f64) ...   compiled with -include of that header
#   build/f64/tests/main.o: tests/main.cpp ...        without it
#   build/tests_f64: $(TEST_OBJS_f64) build/libheed_f64.a   linked with $(TEST_LIBS_f64)
define test_rules
TEST_SRCS_$(1) := tests/main.cpp $$(wildcard tests/$$(TEST_FILES_$(1)).cpp)
TEST_OBJS_$(1) := $$(TEST_SRCS_$(1):%.cpp=$$(BUILD)/$(1)/%.o)
PCH_$(1) := $$(BUILD)/$(1)/tests/pch/helpers.h.gch

$$(PCH_$(1)): tests/helpers.h $$(FLAGS_STAMP) | deps $$(UMBRELLA)
	@mkdir -p $$(@D)
	$$(CXX) $$(BASEFLAGS) $$(TEST_FLAGS_$(1)) -x c++-header $$< -o $$@

$$(BUILD)/$(1)/tests/%.o: tests/%.cpp $$(PCH_$(1)) $$(FLAGS_STAMP) | deps $$(UMBRELLA)
	@mkdir -p $$(@D)
	$$(CXX) $$(BASEFLAGS) $$(TEST_FLAGS_$(1)) -include $$(PCH_$(1):.gch=) -c $$< -o $$@

$$(BUILD)/$(1)/tests/main.o: tests/main.cpp $$(FLAGS_STAMP) | deps $$(UMBRELLA)
	@mkdir -p $$(@D)
	$$(CXX) $$(BASEFLAGS) $$(TEST_FLAGS_$(1)) -c $$< -o $$@

$$(BUILD)/tests_$(1): $$(TEST_OBJS_$(1)) $$(LIB_$(1))
	$$(CXX) $$(LDFLAGS) $$^ -o $$@ $$(TEST_LIBS_$(1)) $$(LDLIBS)
endef
$(foreach P,$(PRECISIONS),$(eval $(call test_rules,$(P))))

# Tests that compare the library's float results bit for bit with a formula written in the
# test compile with the library's own flags, without the -O1 header: at -O3 GCC contracts
# a * b + c into an FMA and -O1 does not, which changes the last bit.
TEST_EXACT := test_fastmath
$(TEST_EXACT:%=$(BUILD)/f32/tests/%.o): $(BUILD)/f32/tests/%.o: tests/%.cpp $(FLAGS_STAMP) | deps $(UMBRELLA)
	@mkdir -p $(@D)
	$(CXX) $(BASEFLAGS) $(CXXFLAGS) -include tests/helpers.h -c $< -o $@

# A subset, for working on one op or layer: `make check T="checkpoint gradcheck_arith"` builds
# only the named test files (and tests/main.cpp) against the libraries and runs them. Each
# word W of T selects tests/W.cpp, tests/test_W.cpp and tests/gradcheck_W.cpp, those that
# exist (W may hold a shell pattern: T='golden_*'); test_*.cpp link into build/check/tests_f32
# against libheed.a, gradcheck_*.cpp into build/check/tests_f64 against libheed_f64.a, each
# linked afresh (they hold whichever files T named last). ARGS goes to both doctest runners
# (ARGS='-tc="*flash*"'). A word that selects nothing is an error naming it.
CHECK_SRCS := $(sort $(foreach w,$(T),$(wildcard tests/$(w).cpp tests/test_$(w).cpp tests/gradcheck_$(w).cpp)))
CHECK_f32 := $(filter tests/test_%.cpp,$(CHECK_SRCS))
CHECK_f64 := $(filter tests/gradcheck_%.cpp,$(CHECK_SRCS))
CHECK_UNMATCHED := $(strip $(foreach w,$(T),$(if $(wildcard tests/$(w).cpp tests/test_$(w).cpp tests/gradcheck_$(w).cpp),,$(w))))
ifneq ($(filter check,$(MAKECMDGOALS)),)
ifeq ($(strip $(T)),)
$(error usage: make check T="checkpoint gradcheck_arith" (tests/README.md))
endif
ifneq ($(CHECK_UNMATCHED),)
$(error make check: no tests/W.cpp, tests/test_W.cpp or tests/gradcheck_W.cpp for W in: $(CHECK_UNMATCHED))
endif
endif
# What `make check` needs and runs for precision P, when T named files of it (CHECK_P): the
# objects and library as prerequisites, and two recipe lines (link, run). The blank line
# before endef ends check_run's second line, so that two expansions side by side stay lines.
check_needs = $(if $(CHECK_$(1)),$(BUILD)/$(1)/tests/main.o $(CHECK_$(1):%.cpp=$(BUILD)/$(1)/%.o) $(LIB_$(1)))
define check_run
$(if $(CHECK_$(1)),$(CXX) $(LDFLAGS) $(BUILD)/$(1)/tests/main.o $(CHECK_$(1):%.cpp=$(BUILD)/$(1)/%.o) $(LIB_$(1)) -o $(BUILD)/check/tests_$(1) $(TEST_LIBS_$(1)) $(LDLIBS)
$(BUILD)/check/tests_$(1) $(ARGS))

endef
.PHONY: check
check: $(foreach P,$(PRECISIONS),$(call check_needs,$(P)))
	@mkdir -p $(BUILD)/check
	$(foreach P,$(PRECISIONS),$(call check_run,$(P)))

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

-include $(foreach P,$(PRECISIONS),$(PCH_$(P):.gch=.d) $(TEST_OBJS_$(P):.o=.d))

# tests/repro/rules.mk - check-repro, a step of `make test` (included by the top-level Makefile).
# The same program on the same machine, threads and engine gives the same bits, whatever ran
# before it in the process and whatever the machine's load. build/repro/repro
# (tests/repro/repro.cpp) runs four whole workloads twice in one process and compares their
# hashes itself; check-repro then runs it once more in a fresh process, with a busy loop taking
# a core (dynamic threads then size heed's own loops by the load: core/parallel.h), and compares
# the two processes' hashes. For each GEMM engine, each CPU level this machine has (HEED_CPU)
# and each precision ("highest", "medium"); about a second a configuration.
REPRO := $(BUILD)/repro/repro
$(REPRO): tests/repro/repro.cpp $(BUILD)/libheed.a | $(UMBRELLA)
	@mkdir -p $(@D)
	$(LINK_PROGRAM) $(LDLIBS)

check-repro: $(REPRO) $(BUILD)/portable/cpu_levels
	@levels=$$($(BUILD)/portable/cpu_levels) || exit 1; failed=0; runs=0; \
	for level in $$levels; do for engine in onednn openblas; do for precision in highest medium; do \
	  set -- HEED_CPU=$$level HEED_GEMM=$$engine HEED_REPRO_PRECISION=$$precision; runs=$$((runs + 1)); \
	  if ! env "$$@" $(REPRO) > $(BUILD)/repro/first.txt; then \
	    echo "check-repro: $$*: a workload differed between two runs in one process"; failed=$$((failed + 1)); continue; fi; \
	  ( while :; do :; done ) & busy=$$!; \
	  env "$$@" $(REPRO) --once > $(BUILD)/repro/fresh.txt; status=$$?; kill $$busy; wait $$busy 2>/dev/null; \
	  if [ $$status -ne 0 ] || ! diff $(BUILD)/repro/first.txt $(BUILD)/repro/fresh.txt > $(BUILD)/repro/diff.txt; then \
	    echo "check-repro: $$*: a fresh process under load gave other bits:"; cat $(BUILD)/repro/diff.txt; failed=$$((failed + 1)); fi; \
	done; done; done; \
	echo "check-repro: $$((runs - failed)) of $$runs configurations (levels: $$(echo $$levels), engines onednn and openblas, highest and medium) gave the same bits twice in one process and in a fresh one under load"; \
	[ $$failed -eq 0 ]

.PHONY: check-repro

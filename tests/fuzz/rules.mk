# tests/fuzz/rules.mk - make fuzz and make fuzz-seeds (included by the top-level Makefile).
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

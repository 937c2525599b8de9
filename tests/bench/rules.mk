# tests/bench/rules.mk - make bench, bench-allreduce and bench-overlap (included by the
# top-level Makefile); tests/bench/README.md says what each benchmark measures.
BENCHES := $(patsubst tests/bench/%.cpp,$(BUILD)/bench/%,$(wildcard tests/bench/*.cpp))
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
	/usr/bin/python3 tests/bench/bench_models_torch.py --bf16
	/usr/bin/python3 tests/bench/bench_generate_torch.py

# ---- over MPI (tests/bench/mpi/; MPICXX and MPIRUN come from optim/mpi.mk) ----
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

-include $(BENCHES:=.d)

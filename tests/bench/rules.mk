# tests/bench/rules.mk - make bench, bench-allreduce and bench-overlap (included by the
# top-level Makefile); tests/bench/README.md says what each benchmark measures.
BENCHES := $(patsubst tests/bench/%.cpp,$(BUILD)/bench/%,$(wildcard tests/bench/*.cpp))
$(BUILD)/bench/%: tests/bench/%.cpp $(BUILD)/libheed.a | $(UMBRELLA)
	@mkdir -p $(@D)
	$(LINK_PROGRAM) $(LDLIBS)

# PyTorch's side: the newest PyTorch that pip installs, into a virtual environment under
# $(BUILD) (never the system python; a few GB with the CUDA libraries its wheel links, unused
# here); Debian's python3-torch (1.13, /usr/bin/python3) when pip cannot. Every table names
# the version that ran. Debian's PyTorch runs on the pthread OpenBLAS
# (tests/bench/bench_models_torch.py).
TORCH_VENV := $(BUILD)/torch-venv
TORCH_PY = $(if $(wildcard $(TORCH_VENV)/ready),$(TORCH_VENV)/bin/python,/usr/bin/python3)
$(TORCH_VENV)/ready:
	@/usr/bin/python3 -m venv $(TORCH_VENV) && $(TORCH_VENV)/bin/pip install -q torch numpy \
	  && $(TORCH_VENV)/bin/python -c 'import torch' && touch $@ \
	  || echo "bench: pip could not install PyTorch into $(TORCH_VENV): Debian's python3-torch runs PyTorch's side"

bench: DEPS += libopenblas0-pthread:/usr/lib/$(MULTIARCH)/openblas-pthread/libopenblas.so.0
bench: DEPS += python3.11-venv:/usr/lib/python3.11/ensurepip/__init__.py
# torch.compile's Inductor builds its CPU kernels with g++ against the Python headers
bench: DEPS += libpython3.11-dev:/usr/include/python3.11/Python.h
bench: deps $(BENCHES) $(BUILD)/portable/cpu_levels
	@$(MAKE) --no-print-directory $(TORCH_VENV)/ready
	@echo "bench: heed $(HEED_VERSION), kernels for $$($(BUILD)/portable/cpu_levels --in-use), $(ARCH),$$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
	@echo "bench: PyTorch from $(TORCH_PY): $$($(TORCH_PY) -c 'import torch; print(torch.__version__)' 2>/dev/null || echo none)"
	$(BUILD)/bench/bench_gemm
	$(TORCH_PY) tests/bench/bench_torch.py $(BUILD)/bench/bench_core
	$(TORCH_PY) tests/bench/bench_attention_torch.py $(BUILD)/bench/bench_attention
	$(BUILD)/bench/bench_block_sparse $(BUILD)/bench/heed_block_sparse.txt
	$(TORCH_PY) tests/bench/bench_block_sparse_torch.py $(BUILD)/bench/heed_block_sparse.txt
	$(TORCH_PY) tests/bench/bench_models_torch.py
	$(BUILD)/bench/bench_models --busy gpt_baby seq2seq lstm gru
	$(BUILD)/bench/bench_models --anomaly gpt_baby seq2seq
	$(BUILD)/bench/bench_denormals
	$(TORCH_PY) tests/bench/bench_models_torch.py --bf16
	$(TORCH_PY) tests/bench/bench_generate_torch.py
	$(TORCH_PY) tests/bench/bench_generate_torch.py --precision medium

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

# heed - build, test, install. This file holds the variables, the two libraries and the
# generated include tree; every other target's rules live in a fragment beside what it builds:
#   make              build/libheed.a                                         (this file)
#   make test         build and run every test (installs Debian packages      tests/rules.mk
#                     first if missing)
#   make check T="checkpoint gradcheck_arith"   build and run only the        tests/rules.mk
#                     named test files (seconds, once the libraries are built)
#   make demo         build examples/translate and train it with its          examples/rules.mk
#                     defaults (dates -> ISO dates); make examples: all examples
#   make bench        heed vs PyTorch CPU eager, side by side                 tests/bench/rules.mk
#   make goldens      regenerate the PyTorch goldens                          tests/golden/rules.mk
#   make sanitize     both test binaries under AddressSanitizer + UBSan       tests/sanitizers.mk
#   make tsan         the tests that start std::threads of their own, under   tests/sanitizers.mk
#                     ThreadSanitizer
#   make fuzz         libFuzzer on the checkpoint and safetensors loaders,    tests/fuzz/rules.mk
#                     FUZZ_SECONDS each (default 600); make fuzz-seeds
#   make soak         train with checkpoints for SOAK_MINUTES (default 30)    tests/soak/rules.mk
#                     under random SIGKILLs
#   make install PREFIX=/usr/local [DESTDIR=...]   headers, libheed.a,       core/install/rules.mk
#                     heed.pc, lib/cmake/heed; make uninstall
#   make USE_MPI=1    also builds build/libheed_mpi.a (data parallel          optim/mpi.mk
#                     training over Open MPI) and installs it
#   make test-mpi     its tests under mpirun -np 2 (installs Open MPI first   tests/mpi/rules.mk
#                     if missing)
#   make bench-allreduce, make bench-overlap   MPI_Allreduce cost; overlap   tests/bench/rules.mk
#                     with backward or not
# Steps of `make test` that are targets of their own: check-vectorised (tests/rules.mk),
# check-portable (tests/portable/rules.mk), check-repro (tests/repro/rules.mk), soak-tiny
# (tests/soak/rules.mk), check-install
# and check-install-mpi (tests/install/rules.mk).
#
# The library is built twice from the same sources: build/libheed.a (float) and
# build/libheed_f64.a (-DHEED_DOUBLE, for the finite-difference gradient checks).

# Build on every core unless the caller chose (-jN on the command line wins).
ifeq ($(MAKELEVEL)$(filter -j% j%,$(MAKEFLAGS)),0)
MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 2)
endif

CXX      ?= g++
# The library runs on any x86-64-v2 CPU (SSE4.2, every x86-64 since 2009) and picks its hot
# kernels for the CPU it runs on (core/cpu.h): core/*_avx2.cpp, core/*_avx512.cpp and
# core/*_avx512_bf16.cpp are compiled for those levels, with the flags below. `make ARCH=native` (or
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

# heed's version, read from core/version.h (the one place it is written): heed.pc, heed-mpi.pc
# and heedConfigVersion.cmake carry it, and check-install proves heed::version() agrees.
HEED_VERSION := $(shell sed -n 's/^\#define HEED_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$$/\2/p' core/version.h | paste -sd.)

# The double build exists only for the finite-difference gradient checks, which need exact
# derivatives, not speed: -O1 compiles faster than -O3 and is enough for them.
F64FLAGS ?= $(patsubst -O%,-O1,$(CXXFLAGS)) -DHEED_DOUBLE

# -fno-math-errno: heed never reads errno after a math call, and without the flag GCC keeps
# every loop that calls std::sqrt scalar (to set errno on a negative input); results are
# the same bits either way (sqrt is correctly rounded).
# -fno-trapping-math: heed never enables or reads floating-point exception flags, and without
# the flag GCC may not compute an arithmetic operation on a path that did not ask for it (it
# might raise a flag there), so a loop whose body GCC has split into branches stays scalar.
# The fastmath kernels (core/fastmath.h) are written branch-free, but GCC's own passes
# re-split them: in fastmath::exp, `hi + lo` after the clamp `hi > 89 ? 89 : hi` is moved
# into the unclamped arm, and without this flag every exp, tanh, sigmoid, erf and GELU loop
# runs one float at a time. Values are the same bits either way: each lane does the same
# IEEE operations, and no reassociation or contraction is enabled by this flag.
# check-vectorised (tests/rules.mk, part of `make test`) fails if one of those loops stops
# vectorising; `make bench` measures them (bench_core's tanh_1M_fwd_bwd, gelu_1M_fwd_bwd).
BASEFLAGS := -std=c++17 -Wall -Wextra -Wno-unused-parameter -fno-math-errno -fno-trapping-math -fopenmp -MMD -MP -I$(BLAS_INC) -I$(BUILD)/include
# oneDNN (Debian libdnnl-dev, the OpenMP build: the same libgomp as heed and OpenBLAS) runs the
# float GEMMs (core/gemm_engine.h); OpenBLAS the double ones, and the float ones if asked.
LDLIBS    := -L$(BLAS_LIB) -Wl,-rpath,$(BLAS_LIB) -lopenblas -ldnnl -fopenmp

# The per-level kernel files (core/cpu.h); `override` so that a CXXFLAGS given on the command
# line (make sanitize, make fuzz) still gets them. x86-64-v3 is AVX2 + FMA + BMI2; x86-64-v4
# adds AVX-512 F/BW/DQ/VL/CD, and GCC's autovectoriser uses all 512 bits only when asked.
AVX2_FLAGS   := -march=x86-64-v3
AVX512_FLAGS := -march=x86-64-v4 -mprefer-vector-width=512
$(BUILD)/%_avx2.o: override CXXFLAGS += $(AVX2_FLAGS)
$(BUILD)/%_avx512.o: override CXXFLAGS += $(AVX512_FLAGS)
# and with AVX512_BF16's dot products (vdpbf16ps): the level avx512_bf16
$(BUILD)/%_avx512_bf16.o: override CXXFLAGS += $(AVX512_FLAGS) -mavx512bf16

LIB_DIRS  := core autograd layers optim
# Files named *_mpi.{h,cpp} need MPI: they stay out of libheed.a and the umbrella header,
# and go into libheed_mpi.a (optim/mpi.mk). Headers named *_compat.h are opt-in spellings
# (layers/torch_compat.h: TORCH_MODULE, namespace torch): installed, never in the umbrella.
# Each folder and its subfolders (autograd/ops/attention/, layers/attention/), bottom layer first.
find_in    = $(foreach d,$(LIB_DIRS),$(sort $(shell find $(d) -name '$(1)')))
LIB_SRCS  := $(filter-out %_mpi.cpp,$(call find_in,*.cpp))
HEADERS   := $(filter-out %_mpi.h %_compat.h,$(call find_in,*.h))
COMPAT_HEADERS := $(call find_in,*_compat.h)
MPI_SRCS  := $(call find_in,*_mpi.cpp)
MPI_HEADERS := $(call find_in,*_mpi.h)

.PHONY: all deps test check-vectorised test-mpi bench-allreduce bench-overlap install-mpi check-install-mpi check-portable sanitize tsan fuzz fuzz-seeds soak soak-tiny demo examples bench goldens install uninstall check-install clean

all: $(BUILD)/libheed.a

# ---- dependencies: Debian packages, installed when missing (as root) ----
# One line per package: name:file-that-proves-it-is-installed. Add a package with its own
# `DEPS += name:/path` line; a target that needs more adds them to its own DEPS
# (`check-install: DEPS += cmake:/usr/bin/cmake`).
DEPS := libopenblas-openmp-dev:$(BLAS_LIB)/libopenblas.so
DEPS += libopenblas-openmp-dev:$(BLAS_INC)/cblas.h
DEPS += doctest-dev:/usr/include/doctest/doctest.h
DEPS += pkgconf:/usr/bin/pkg-config
DEPS += libstb-dev:/usr/include/stb/stb_image_write.h
DEPS += fonts-dejavu-core:/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf
DEPS += fortunes:/usr/share/games/fortunes/cookie
DEPS += nlohmann-json3-dev:/usr/include/nlohmann/json.hpp
DEPS += libdnnl-dev:/usr/include/oneapi/dnnl/dnnl.hpp
DEPS += libdnnl-dev:/usr/lib/$(MULTIARCH)/libdnnl.so

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

# Both precisions are built by the same rules, written once in lib_rules and expanded once per
# precision P of PRECISIONS by $(eval $(call lib_rules,P)). Inside the template $(1) is P and
# $$ is a $ left for the rule itself, so for P = f64 the eval writes:
#   OBJS_f64 := $(LIB_SRCS:%.cpp=build/f64/%.o)
#   build/f64/%.o: %.cpp $(FLAGS_STAMP) | deps $(UMBRELLA)
#   	$(CXX) $(BASEFLAGS) $(FLAGS_f64) -c $< -o $@          (FLAGS_f64 is $(F64FLAGS))
#   build/libheed_f64.a: $(OBJS_f64)
#   	ar rcs $@ $^
# tests/rules.mk does the same for the test binaries (test_rules). What differs between the
# precisions is only in these variables, one line each:
PRECISIONS := f32 f64
LIB_f32    := $(BUILD)/libheed.a
LIB_f64    := $(BUILD)/libheed_f64.a
FLAGS_f32   = $(CXXFLAGS)
FLAGS_f64   = $(F64FLAGS)

define lib_rules
OBJS_$(1) := $$(LIB_SRCS:%.cpp=$$(BUILD)/$(1)/%.o)

$$(BUILD)/$(1)/%.o: %.cpp $$(FLAGS_STAMP) | deps $$(UMBRELLA)
	@mkdir -p $$(@D)
	$$(CXX) $$(BASEFLAGS) $$(FLAGS_$(1)) -c $$< -o $$@

$$(LIB_$(1)): $$(OBJS_$(1))
	@rm -f $$@
	ar rcs $$@ $$^
endef
$(foreach P,$(PRECISIONS),$(eval $(call lib_rules,$(P))))

# A program of one .cpp ($<) against libheed.a: the examples, the benchmarks and the programs
# behind make test's steps. Each rule writes its prerequisites and the libraries it adds in
# front of $(LDLIBS): `$(LINK_PROGRAM) $(LDLIBS)`.
LINK_PROGRAM = $(CXX) $(BASEFLAGS) $(CXXFLAGS) -I$(INC) $< -o $@ $(LIB_f32)

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

# ---- every other target, in the folder of what it builds (the list at the top) ----
include optim/mpi.mk
include tests/rules.mk tests/readme/rules.mk tests/portable/rules.mk tests/soak/rules.mk
include tests/install/rules.mk tests/repro/rules.mk
include tests/sanitizers.mk tests/fuzz/rules.mk tests/mpi/rules.mk
include examples/rules.mk tests/bench/rules.mk tests/golden/rules.mk
include core/install/rules.mk

clean:
	rm -rf $(BUILD)

-include $(foreach P,$(PRECISIONS),$(OBJS_$(P):.o=.d))

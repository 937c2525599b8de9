# heed - build, test, install.
#   make demo      build the library and run a small training program
#   make test      build and run every test (installs Debian packages first if missing)
#   make bench     heed vs PyTorch CPU eager, side by side
#   make install PREFIX=/usr/local [DESTDIR=...]   headers, libheed.a, heed.pc
#
# The library is built twice from the same sources: build/libheed.a (float) and
# build/libheed_f64.a (-DHEED_DOUBLE, for the finite-difference gradient checks).

CXX      ?= g++
ARCH     ?= -march=native
CXXFLAGS ?= -O3 $(ARCH)
PREFIX   ?= /usr/local
BUILD    ?= build
DESTDIR  ?=

MULTIARCH := $(shell $(CXX) -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
BLAS_INC  := /usr/include/$(MULTIARCH)/openblas-openmp
BLAS_LIB  := /usr/lib/$(MULTIARCH)/openblas-openmp
DEB_PKGS  := libopenblas-openmp-dev doctest-dev pkgconf

BASEFLAGS := -std=c++17 -Wall -Wextra -Wno-unused-parameter -fopenmp -MMD -MP -I$(BLAS_INC)
LDLIBS    := -L$(BLAS_LIB) -Wl,-rpath,$(BLAS_LIB) -lopenblas -fopenmp

LIB_DIRS  := core autograd layers optim
LIB_SRCS  := $(wildcard $(addsuffix /*.cpp,$(LIB_DIRS)))
HEADERS   := $(wildcard $(addsuffix /*.h,$(LIB_DIRS)))
OBJS_F32  := $(LIB_SRCS:%.cpp=$(BUILD)/f32/%.o)
OBJS_F64  := $(LIB_SRCS:%.cpp=$(BUILD)/f64/%.o)

# tests/test_*.cpp run in float (goldens, behaviour); tests/gradcheck_*.cpp in double.
TEST_F32_SRCS := tests/main.cpp $(wildcard tests/test_*.cpp)
TEST_F64_SRCS := tests/main.cpp $(wildcard tests/gradcheck_*.cpp)
TEST_F32_OBJS := $(TEST_F32_SRCS:%.cpp=$(BUILD)/f32/%.o)
TEST_F64_OBJS := $(TEST_F64_SRCS:%.cpp=$(BUILD)/f64/%.o)
EXAMPLES      := $(patsubst examples/%.cpp,$(BUILD)/examples/%,$(wildcard examples/*.cpp))
BENCHES       := $(patsubst tests/bench/%.cpp,$(BUILD)/bench/%,$(wildcard tests/bench/*.cpp))

.PHONY: all deps test demo examples bench goldens install uninstall check-install clean

all: $(BUILD)/libheed.a

# ---- dependencies: Debian packages, installed when missing (as root) ----
deps:
	@missing=""; \
	echo '#include <cblas.h>' | $(CXX) -I$(BLAS_INC) -E -x c++ - >/dev/null 2>&1 \
	  && [ -e $(BLAS_LIB)/libopenblas.so ] || missing="$$missing libopenblas-openmp-dev"; \
	echo '#include <doctest/doctest.h>' | $(CXX) -E -x c++ - >/dev/null 2>&1 || missing="$$missing doctest-dev"; \
	command -v pkg-config >/dev/null 2>&1 || missing="$$missing pkgconf"; \
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
$(BUILD)/f32/%.o: %.cpp | deps
	@mkdir -p $(@D)
	$(CXX) $(BASEFLAGS) $(CXXFLAGS) -c $< -o $@

$(BUILD)/f64/%.o: %.cpp | deps
	@mkdir -p $(@D)
	$(CXX) $(BASEFLAGS) $(CXXFLAGS) -DHEED_DOUBLE -c $< -o $@

$(BUILD)/libheed.a: $(OBJS_F32)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/libheed_f64.a: $(OBJS_F64)
	@rm -f $@
	ar rcs $@ $^

# headers are included as <heed/core/...> everywhere; in the tree, build/include/heed -> the source tree
$(BUILD)/include/heed:
	@mkdir -p $(BUILD)/include
	@ln -sfn $(CURDIR) $(BUILD)/include/heed

# ---- tests ----
$(BUILD)/tests_f32: $(TEST_F32_OBJS) $(BUILD)/libheed.a
	$(CXX) $^ -o $@ $(LDLIBS)

$(BUILD)/tests_f64: $(TEST_F64_OBJS) $(BUILD)/libheed_f64.a
	$(CXX) $^ -o $@ $(LDLIBS)

test: $(BUILD)/tests_f32 $(BUILD)/tests_f64
	$(BUILD)/tests_f32
	$(BUILD)/tests_f64
	@$(MAKE) --no-print-directory check-install

# Install into a scratch prefix and build a program against it with pkg-config only.
check-install: $(BUILD)/libheed.a
	@rm -rf $(BUILD)/install-check && mkdir -p $(BUILD)/install-check
	@$(MAKE) --no-print-directory install PREFIX=$(abspath $(BUILD))/install-check/prefix >/dev/null
	@printf '#include <heed/core/heed.h>\nint main() { heed::Tensor x = heed::ones({2, 3}).requires_grad_();\n  heed::Tensor y = heed::sum(heed::matmul(x, heed::ones({3, 2})));\n  y.backward();\n  return x.grad().at({1, 2}) == 2 ? 0 : 1; }\n' > $(BUILD)/install-check/app.cpp
	@PKG_CONFIG_PATH=$(abspath $(BUILD))/install-check/prefix/lib/pkgconfig \
	  $(CXX) -std=c++17 $(BUILD)/install-check/app.cpp -o $(BUILD)/install-check/app \
	  $$(PKG_CONFIG_PATH=$(abspath $(BUILD))/install-check/prefix/lib/pkgconfig pkg-config --cflags --libs heed)
	@$(BUILD)/install-check/app && echo "check-install: a program built with pkg-config against the installed heed ran correctly"

# ---- examples, demo, benchmarks ----
$(BUILD)/examples/%: examples/%.cpp $(BUILD)/libheed.a | $(BUILD)/include/heed
	@mkdir -p $(@D)
	$(CXX) $(BASEFLAGS) $(CXXFLAGS) -I$(BUILD)/include $< -o $@ $(BUILD)/libheed.a $(LDLIBS)

examples: $(EXAMPLES)

demo: $(BUILD)/examples/demo
	$(BUILD)/examples/demo

$(BUILD)/bench/%: tests/bench/%.cpp $(BUILD)/libheed.a | $(BUILD)/include/heed
	@mkdir -p $(@D)
	$(CXX) $(BASEFLAGS) $(CXXFLAGS) -I$(BUILD)/include $< -o $@ $(BUILD)/libheed.a $(LDLIBS)

bench: $(BENCHES)
	$(BUILD)/bench/bench_core $(BUILD)/bench/heed.txt
	/usr/bin/python3 tests/bench/bench_torch.py $(BUILD)/bench/heed.txt
	$(BUILD)/bench/bench_attention $(BUILD)/bench/heed_attention.txt
	/usr/bin/python3 tests/bench/bench_attention_torch.py $(BUILD)/bench/heed_attention.txt

# ---- PyTorch goldens (needs python3-torch; the committed .bin files keep `make test` free of it) ----
goldens:
	@for g in tests/golden/gen_*.py; do echo "/usr/bin/python3 $$g"; /usr/bin/python3 $$g || exit 1; done

# ---- install ----
install: $(BUILD)/libheed.a
	@for d in $(LIB_DIRS); do \
	  mkdir -p $(DESTDIR)$(PREFIX)/include/heed/$$d; \
	  for h in $$d/*.h; do [ -e "$$h" ] && install -m 644 $$h $(DESTDIR)$(PREFIX)/include/heed/$$d/; done; \
	done; true
	install -d $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 644 $(BUILD)/libheed.a $(DESTDIR)$(PREFIX)/lib/
	@printf 'prefix=%s\nincludedir=$${prefix}/include\nlibdir=$${prefix}/lib\n\nName: heed\nDescription: reverse-mode autograd with attention layers\nVersion: 0.1.0\nCflags: -I$${includedir} -fopenmp\nLibs: -L$${libdir} -lheed -L%s -Wl,-rpath,%s -lopenblas -fopenmp\n' \
	  '$(PREFIX)' '$(BLAS_LIB)' '$(BLAS_LIB)' > $(DESTDIR)$(PREFIX)/lib/pkgconfig/heed.pc

uninstall:
	rm -rf $(DESTDIR)$(PREFIX)/include/heed
	rm -f $(DESTDIR)$(PREFIX)/lib/libheed.a $(DESTDIR)$(PREFIX)/lib/pkgconfig/heed.pc

clean:
	rm -rf $(BUILD)

-include $(OBJS_F32:.o=.d) $(OBJS_F64:.o=.d) $(TEST_F32_OBJS:.o=.d) $(TEST_F64_OBJS:.o=.d)

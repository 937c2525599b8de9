# tests/sanitizers.mk - make sanitize and make tsan: the tests rebuilt under the sanitizers
# (included by the top-level Makefile).
# AddressSanitizer + UndefinedBehaviorSanitizer: the library and both test binaries built
# into $(BUILD)/sanitize and run; any report stops the run. The caching allocator poisons
# free blocks and the slack past each buffer under ASan (core/allocator.cpp), which
# tests/test_sanitizer.cpp proves.
SANITIZE := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
sanitize: deps
	@$(MAKE) --no-print-directory BUILD=$(BUILD)/sanitize CXXFLAGS="-O1 -g $(ARCH) $(SANITIZE)" \
	  LDFLAGS="$(SANITIZE)" $(PRECISIONS:%=$(BUILD)/sanitize/tests_%)
	$(foreach P,$(PRECISIONS),$(call run_sanitized,$(P)))

# One recipe line per test binary (the blank line before endef ends it, as check_run's).
define run_sanitized
UBSAN_OPTIONS=print_stacktrace=1 timeout --signal=KILL 2400 $(BUILD)/sanitize/tests_$(1)

endef

# ThreadSanitizer over the test cases that start std::threads of their own: backward passes
# on two threads into one parameter, models trained on separate threads, grad mode per
# thread, RoPE's cache read by several threads, the generator drawn from two threads, the
# allocator's per-thread caches, a new thread's OpenMP count, the data loader's workers
# (with random exceptions, early exits and restarts: tests/test_data_loader_errors.cpp), one
# oneDNN primitive run by several threads.
# The library and just those test files are built with -fsanitize=thread into $(BUILD)/tsan,
# and those cases run; any report stops the run (halt_on_error exits with 66; abort_on_error
# would raise SIGABRT into doctest's signal handler, which then waits forever for the
# threads TSan stopped, so it is not set, and a 900 s timeout bounds the run anyway). GCC's libgomp is not instrumented (TSan
# would take its barriers for races), so heed's own parallel regions run on one thread here:
# OMP_NUM_THREADS=1 sets heed's thread count (core/parallel.cpp), and no case chosen asks
# for more.
TSAN       := -fsanitize=thread -fno-omit-frame-pointer
TSAN_SRCS  := tests/main.cpp tests/test_threads.cpp tests/test_allocator.cpp \
              tests/test_determinism.cpp tests/test_parallel.cpp tests/test_data_loader.cpp \
              tests/test_data_loader_errors.cpp tests/test_gemm_engine.cpp
TSAN_CASES := threads:*,*held by different threads*,*freed on another thread*,*each other's blocks*
TSAN_CASES := $(TSAN_CASES),*generator drawn from two std::threads*,*std::thread's first GEMM*
TSAN_CASES := $(TSAN_CASES),data loader:*,*one primitive run from several threads*
tsan: deps
	@$(MAKE) --no-print-directory BUILD=$(BUILD)/tsan CXXFLAGS="-O1 -g $(ARCH) $(TSAN)" \
	  LDFLAGS="$(TSAN)" $(BUILD)/tsan/tests_tsan
	OMP_NUM_THREADS=1 TSAN_OPTIONS="halt_on_error=1" timeout --signal=KILL 900 \
	  $(BUILD)/tsan/tests_tsan -tc="$(TSAN_CASES)"

$(BUILD)/tests_tsan: $(TSAN_SRCS:%.cpp=$(BUILD)/f32/%.o) $(LIB_f32)
	$(CXX) $(LDFLAGS) $^ -o $@ $(LDLIBS)

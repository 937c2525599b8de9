# tests/install/rules.mk - check-install, a step of `make test`, and check-install-mpi, a step
# of `make test-mpi` (included by the top-level Makefile).
# Install into a scratch prefix and build a program against it twice: with pkg-config, and as
# a small CMake project (find_package(heed MAJOR.MINOR REQUIRED), heed::heed). The program
# (app.cpp) prints heed::version(), which must equal core/version.h's, heed.pc's and the CMake
# package's.
CHECK    := $(abspath $(BUILD))/install-check
CHECK_PC := PKG_CONFIG_PATH=$(CHECK)/prefix/lib/pkgconfig
check-install: DEPS += cmake:/usr/bin/cmake
check-install: $(BUILD)/libheed.a $(UMBRELLA) | deps
	@rm -rf $(CHECK) && mkdir -p $(CHECK)/cmake
	@$(MAKE) --no-print-directory install PREFIX=$(CHECK)/prefix >/dev/null
	@$(CHECK_PC) $(CXX) -std=c++17 tests/install/app.cpp -o $(CHECK)/app \
	  $$($(CHECK_PC) pkg-config --cflags --libs heed)
	@v=$$($(CHECK)/app) || { echo "check-install: the pkg-config program failed"; exit 1; }; \
	  pc=$$($(CHECK_PC) pkg-config --modversion heed); \
	  [ "$$v" = "$(HEED_VERSION)" ] && [ "$$pc" = "$(HEED_VERSION)" ] || \
	  { echo "check-install: versions differ: core/version.h $(HEED_VERSION), heed::version() $$v, heed.pc $$pc"; exit 1; }
	@echo "check-install: a program built with pkg-config against the installed heed ran correctly (version $(HEED_VERSION))"
	@cmake -S tests/install -B $(CHECK)/cmake/build -DCMAKE_PREFIX_PATH=$(CHECK)/prefix \
	    -DHEED_EXPECTED_VERSION=$(HEED_VERSION) -DCMAKE_CXX_COMPILER="$(lastword $(CXX))" \
	    >$(CHECK)/cmake/build.log 2>&1 && \
	  cmake --build $(CHECK)/cmake/build >>$(CHECK)/cmake/build.log 2>&1 || \
	  { cat $(CHECK)/cmake/build.log; echo "check-install: the CMake project failed to build"; exit 1; }
	@v=$$($(CHECK)/cmake/build/app) && [ "$$v" = "$(HEED_VERSION)" ] || \
	  { echo "check-install: the CMake-built program failed or printed version '$$v'"; exit 1; }
	@echo "check-install: a CMake project (find_package(heed $(word 1,$(subst ., ,$(HEED_VERSION))).$(word 2,$(subst ., ,$(HEED_VERSION)))), heed::heed) built and ran correctly"

# heed-mpi.pc: install both libraries into a scratch prefix, build app_mpi.cpp with mpicxx and
# pkg-config, and run it as one process.
CHECK_MPI    := $(abspath $(BUILD))/install-check-mpi
CHECK_MPI_PC := PKG_CONFIG_PATH=$(CHECK_MPI)/prefix/lib/pkgconfig
check-install-mpi: $(BUILD)/libheed_mpi.a $(BUILD)/libheed.a $(UMBRELLA)
	@rm -rf $(CHECK_MPI) && mkdir -p $(CHECK_MPI)
	@$(MAKE) --no-print-directory install install-mpi PREFIX=$(CHECK_MPI)/prefix >/dev/null
	@$(CHECK_MPI_PC) $(MPICXX) $(MPIFLAGS) -std=c++17 tests/install/app_mpi.cpp -o $(CHECK_MPI)/app \
	  $$($(CHECK_MPI_PC) pkg-config --cflags --libs heed-mpi)
	@$(CHECK_MPI)/app && echo "check-install-mpi: a program built with mpicxx and pkg-config heed-mpi ran correctly"

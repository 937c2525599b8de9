# optim/mpi.mk - build/libheed_mpi.a, data parallel training over MPI (optim/*_mpi.*;
# optional; included by the top-level Makefile).
# `make USE_MPI=1` adds build/libheed_mpi.a to `all` and to `install` (with heed-mpi.pc,
# which requires heed.pc; core/install/rules.mk); `make test-mpi` (tests/mpi/rules.mk) builds
# the MPI tests with mpicxx and runs them on 2 processes of this machine. Open MPI refuses
# root unless told, and --oversubscribe lets 2 ranks share fewer cores; the shared-memory
# transport (vader) keeps it on this machine.
# ccache: make MPICXX="ccache mpicxx".
MPICXX    ?= mpicxx
MPIFLAGS  := -DOMPI_SKIP_MPICXX -DMPICH_SKIP_MPICXX  # the C API only (MPI-2's C++ bindings are gone in MPI-3)
MPIRUN    := mpirun --allow-run-as-root --oversubscribe --mca btl self,vader
MPI_DEPS  := libopenmpi-dev:/usr/include/$(MULTIARCH)/mpi/mpi.h openmpi-bin:/usr/bin/mpirun
MPI_OBJS  := $(MPI_SRCS:%.cpp=$(BUILD)/mpi/%.o)
ifeq ($(USE_MPI),1)
all: $(BUILD)/libheed_mpi.a
install: install-mpi
DEPS += $(MPI_DEPS)
endif
test-mpi bench-allreduce bench-overlap install-mpi check-install-mpi $(BUILD)/libheed_mpi.a: DEPS += $(MPI_DEPS)
$(BUILD)/examples/char_gpt_mpi: DEPS += $(MPI_DEPS)

$(BUILD)/mpi/%.o: %.cpp $(FLAGS_STAMP) | deps $(UMBRELLA)
	@mkdir -p $(@D)
	$(MPICXX) $(MPIFLAGS) $(BASEFLAGS) $(CXXFLAGS) -c $< -o $@

$(BUILD)/libheed_mpi.a: $(MPI_OBJS)
	@rm -f $@
	ar rcs $@ $^

-include $(MPI_OBJS:.o=.d)

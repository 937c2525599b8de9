# tests/mpi/rules.mk - make test-mpi (included by the top-level Makefile; MPICXX, MPIFLAGS,
# MPIRUN and build/libheed_mpi.a come from optim/mpi.mk).
MPI_TEST_SRCS := tests/mpi/main_mpi.cpp tests/mpi/test_data_parallel.cpp

$(BUILD)/tests_mpi: $(MPI_TEST_SRCS) $(BUILD)/libheed_mpi.a $(BUILD)/libheed.a | deps $(UMBRELLA)
	$(MPICXX) $(MPIFLAGS) $(BASEFLAGS) $(CXXFLAGS) -I$(INC) $(MPI_TEST_SRCS) -o $@ \
	  $(BUILD)/libheed_mpi.a $(BUILD)/libheed.a $(LDLIBS)

$(BUILD)/mpi/dead_rank: tests/mpi/dead_rank.cpp $(BUILD)/libheed_mpi.a $(BUILD)/libheed.a | deps $(UMBRELLA)
	$(MPICXX) $(MPIFLAGS) $(BASEFLAGS) $(CXXFLAGS) -I$(INC) $< -o $@ $(BUILD)/libheed_mpi.a $(BUILD)/libheed.a $(LDLIBS)

# The character GPT with its data parallel path compiled in (-DHEED_WITH_MPI).
$(BUILD)/examples/char_gpt_mpi: examples/char_gpt.cpp $(BUILD)/libheed_mpi.a $(BUILD)/libheed.a | deps $(UMBRELLA)
	@mkdir -p $(@D)
	$(MPICXX) $(MPIFLAGS) $(BASEFLAGS) $(CXXFLAGS) -DHEED_WITH_MPI -I$(INC) $< -o $@ \
	  $(BUILD)/libheed_mpi.a $(BUILD)/libheed.a $(EXAMPLE_LIBS) $(LDLIBS)

# Each rank runs the doctest cases; one rank's failure fails mpirun. `timeout` turns a hang
# (a rank stuck in a collective its peer never joins) into a failure. check-install-mpi is in
# tests/install/rules.mk.
test-mpi: $(BUILD)/tests_mpi $(BUILD)/mpi/dead_rank $(BUILD)/examples/char_gpt_mpi
	timeout 300 $(MPIRUN) -np 2 $(BUILD)/tests_mpi --no-colors
	MPIRUN="$(MPIRUN)" tests/mpi/dead_rank.sh $(BUILD)/mpi/dead_rank
	@mkdir -p $(BUILD)/smoke-mpi
	timeout 300 $(MPIRUN) -np 2 $(BUILD)/examples/char_gpt_mpi --smoke --out $(BUILD)/smoke-mpi
	@$(MAKE) --no-print-directory check-install-mpi

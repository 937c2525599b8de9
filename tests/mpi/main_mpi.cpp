// main_mpi.cpp - doctest's runner for the MPI tests: every rank runs every test case (they
// call collectives, so all ranks must), rank 0 reports, and the exit code is the worst
// rank's, so a check failing on rank 1 only still fails `make test-mpi`.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <sstream>

#include <heed/optim/distributed_mpi.h>

int main(int argc, char** argv) {
  heed::dist::MpiGuard mpi(argc, argv);
  doctest::Context context(argc, argv);
  std::ostringstream quiet;
  if (heed::dist::rank() != 0) context.setCout(&quiet);
  int failed = context.run();
  int worst = failed;
  MPI_Allreduce(&failed, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (failed && heed::dist::rank() != 0) fprintf(stderr, "rank %d:\n%s", heed::dist::rank(), quiet.str().c_str());
  return worst;
}

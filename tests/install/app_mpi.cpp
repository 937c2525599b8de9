// app_mpi.cpp - check-install-mpi's consumer program (tests/install/rules.mk): built with
// mpicxx and `pkg-config heed-mpi` against a scratch install, and run as one process.
#include <heed/heed.h>
#include <heed/optim/distributed_mpi.h>

int main(int argc, char** argv) {
  heed::dist::MpiGuard mpi(argc, argv);
  return heed::dist::world_size() == 1 ? 0 : 1;
}

// dead_rank.cpp MODE - rank 1 dies at step 5 of a data parallel training loop, by
// std::abort() (MODE abort: a crash) or std::exit(3) (MODE exit: an error exit that skips
// MPI_Finalize); rank 0 goes on to the next gradient averaging, which rank 1 will never
// join. dead_rank.sh runs both under mpirun and `timeout` and checks that the job ends with
// an error naming the dead rank instead of hanging.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include <heed/heed.h>
#include <heed/optim/distributed_mpi.h>

using namespace heed;

int main(int argc, char** argv) {
  dist::MpiGuard mpi(argc, argv);
  const std::string mode = argc > 1 ? argv[1] : "abort";
  auto fc = nn::Linear(16, 16);
  dist::broadcast_parameters(*fc);
  optim::SGD opt(fc->parameters(), optim::SGDOptions(0.01));
  dist::GradientAverager sync(*fc);
  for (int step = 0; step < 1000000; ++step) {
    if (step == 5 && dist::rank() == 1) {
      std::fprintf(stderr, "dead_rank: rank 1 dies (%s) at step 5\n", mode.c_str());
      if (mode == "exit") std::exit(3);
      std::abort();
    }
    opt.zero_grad();
    sum(fc->forward(ones({4, 16}))).backward();
    sync.synchronize();
    opt.step();
  }
  std::printf("dead_rank: rank %d finished, which it must not\n", dist::rank());
  return 0;
}

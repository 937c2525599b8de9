// dead_rank.cpp - rank 1 dies (std::abort) at step 5 of a data parallel training loop; rank
// 0 goes on to the next gradient averaging, which rank 1 will never join. dead_rank.sh
// runs it under mpirun and `timeout` and checks that the job ends with an error naming the
// dead rank instead of hanging.
#include <cstdio>
#include <cstdlib>
#include <memory>

#include <heed/heed.h>
#include <heed/optim/distributed_mpi.h>

using namespace heed;

int main(int argc, char** argv) {
  dist::MpiGuard mpi(argc, argv);
  auto fc = std::make_shared<nn::Linear>(16, 16);
  dist::broadcast_parameters(*fc);
  optim::SGD opt(fc->parameters(), optim::SGDOptions(0.01));
  dist::GradientAverager sync(*fc);
  for (int step = 0; step < 1000000; ++step) {
    if (step == 5 && dist::rank() == 1) {
      std::fprintf(stderr, "dead_rank: rank 1 aborts at step 5\n");
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

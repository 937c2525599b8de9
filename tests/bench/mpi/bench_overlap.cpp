// bench_overlap.cpp - does overlapping gradient averaging with backward pay on the machine
// it runs on? `make bench-overlap` (2 ranks). A stack of 8 Linear(256, 256) + tanh (527k
// parameters), batch 64, one thread per rank; each round times 20 steps of forward,
// backward and GradientAverager::synchronize() for four settings, in alternating order;
// prints the median ms per step over the rounds and the load average.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include <heed/heed.h>
#include <heed/optim/distributed_mpi.h>

using namespace heed;

struct Setting {
  const char* name;
  dist::GradientAveragerOptions options;
};

int main(int argc, char** argv) {
  dist::MpiGuard mpi(argc, argv);
  set_num_threads(1);
  manual_seed(1);
  nn::Sequential net;
  for (int i = 0; i < 8; ++i) {
    net.push_back(nn::Linear(256, 256));
    net.push_back(nn::Tanh());
  }
  dist::broadcast_parameters(net);
  const std::vector<Setting> settings = {
      {"no averaging (compute only)", dist::GradientAveragerOptions()},
      {"after backward, 25 MiB bucket", dist::GradientAveragerOptions().overlap(false)},
      {"overlapped, 25 MiB bucket", dist::GradientAveragerOptions()},
      {"overlapped, 256 KiB buckets", dist::GradientAveragerOptions().bucket_bytes(256 << 10)},
  };
  const int rounds = 7, steps = 20;
  std::vector<std::vector<double>> ms(settings.size());
  Tensor x = randn({64, 256});  // (B, C)
  for (int r = 0; r < rounds; ++r) {
    for (size_t s = 0; s < settings.size(); ++s) {
      std::unique_ptr<dist::GradientAverager> sync;
      if (s > 0) sync = std::make_unique<dist::GradientAverager>(net, settings[s].options);
      dist::barrier();
      auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < steps; ++i) {
        net.zero_grad();
        sum(net.forward(x)).backward();
        if (sync) sync->synchronize();
      }
      double dt = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / steps;
      ms[s].push_back(dist::allreduce_sum(dt) / dist::world_size());
    }
  }
  double load[1] = {0};
  getloadavg(load, 1);
  if (dist::rank() == 0) {
    std::printf("%d ranks, %lld parameters, batch 64, 1 thread each, load average %.2f\n", dist::world_size(),
                (long long)net.num_parameters(), load[0]);
    for (size_t s = 0; s < settings.size(); ++s) {
      std::sort(ms[s].begin(), ms[s].end());
      std::printf("  %-32s %8.2f ms/step (median of %d rounds; min %.2f, max %.2f)\n", settings[s].name,
                  ms[s][rounds / 2], rounds, ms[s].front(), ms[s].back());
    }
  }
  return 0;
}

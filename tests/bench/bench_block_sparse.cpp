// bench_block_sparse.cpp - block-sparse attention (autograd/ops/attention/block_sparse_attention.h) against
// dense flash attention, forward + backward: B = 1, H = 4, D = 64, block 64, the causal
// strided layout strided_layout(T, 64, 7, 16) (each query block keeps its 8 nearest blocks
// and every 16th one back: about 6% of the scores at T = 16384), at T = 4096 and 16384.
// Runs, for each T:
//   sparse        block_sparse_attention with the layout (and the causal mask)
//   flash_causal  flash_attention, causal, default tiles
//   flash_full    flash_attention, no mask (T = 16384 only): the density x full-time target
// The workloads alternate within each round (the machine may be shared: a slow spell hits
// every workload of a round, not one), and each line written is "<name> <median ms>".
// Working memory: allocator peak beyond q, k, v, dO, O and the three gradients.
// bench_block_sparse_torch.py runs PyTorch's dense masked attention with the same layout
// where it fits in memory and prints all side by side.
//
//   build/bench/bench_block_sparse build/bench/heed_block_sparse.txt [rounds]
//   /usr/bin/python3 tests/bench/bench_block_sparse_torch.py build/bench/heed_block_sparse.txt
#include <heed/autograd/ops/attention/block_sparse_attention.h>
#include <heed/heed.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "results_file.h"

using namespace heed;

struct Workload {
  std::string name;
  std::function<void()> step;
  std::vector<double> ms = {};
  double mib = 0;
};

int main(int argc, char** argv) {
  bench::ResultsFile out(argc > 1 ? argv[1] : "build/bench/heed_block_sparse.txt");
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 3;
  manual_seed(0);
  const int64_t B = 1, H = 4, D = 64, b = 64;
  std::printf("threads %d, %d alternating rounds, medians\n", get_num_threads(), rounds);
  std::printf("%-34s %8s %10s %14s\n", "workload (fwd+bwd)", "density", "median ms", "working MiB");
  for (int64_t T : {4096, 16384}) {
    Tensor q = randn({B, H, T, D}).requires_grad_(), k = randn({B, H, T, D}).requires_grad_();
    Tensor v = randn({B, H, T, D}).requires_grad_(), dO = randn({B, H, T, D});
    const nn::BlockLayout layout = nn::strided_layout(T, b, 7, 16);
    const nn::AttentionMask causal = nn::AttentionMask().causal();
    auto step = [&](std::function<Tensor()> attention) {
      return [&, attention] {
        q.set_grad(Tensor()), k.set_grad(Tensor()), v.set_grad(Tensor());
        attention().backward(dO);
      };
    };
    const std::string t = "_T" + std::to_string(T);
    std::vector<Workload> work = {
        {"block_sparse" + t, step([&] { return block_sparse_attention(q, k, v, layout, causal); })},
        {"flash_causal" + t, step([&] { return flash_attention(q, k, v, causal); })}};
    if (T == 16384) work.push_back({"flash_full" + t, step([&] { return flash_attention(q, k, v); })});
    for (Workload& w : work) w.step();  // warm-up (also fills the allocator's cache)
    for (int r = 0; r < rounds; ++r)
      for (Workload& w : work) {
        const auto a = std::chrono::steady_clock::now();
        w.step();
        w.ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count());
      }
    const int64_t one = int64_t(alloc::size_class(q.numel() * sizeof(real)));
    for (Workload& w : work) {
      q.set_grad(Tensor()), k.set_grad(Tensor()), v.set_grad(Tensor());
      alloc::reset_peak_bytes();
      const int64_t before = alloc::stats().live_bytes;
      w.step();  // once more, for the peak; O and the 3 grads are 4 tensors the size of q
      w.mib = double(alloc::stats().peak_bytes - before - 4 * one) / (1 << 20);
      std::sort(w.ms.begin(), w.ms.end());
      const double med = w.ms[w.ms.size() / 2];
      const double density = w.name.rfind("block_sparse", 0) == 0 ? layout.density()
                             : w.name.rfind("flash_causal", 0) == 0 ? 0.5 : 1.0;
      out.add(w.name, med);
      std::printf("%-34s %8.4f %10.1f %14.1f   (rounds:", w.name.c_str(), density, med, w.mib);
      for (double m : w.ms) std::printf(" %.0f", m);
      std::printf(")\n");
    }
    out.add("density" + t, layout.density(), 6);
    if (T == 16384) {
      const double sparse = work[0].ms[work[0].ms.size() / 2];
      const double full = work[2].ms[work[2].ms.size() / 2];
      std::printf("T = %lld: dense causal flash / block-sparse = %.1fx (target >= 8x); "
                  "block-sparse / (density x dense full) = %.2f (target <= 1.5)\n",
                  (long long)T, work[1].ms[work[1].ms.size() / 2] / sparse, sparse / (layout.density() * full));
    }
  }
  return out.write() ? 0 : 1;
}

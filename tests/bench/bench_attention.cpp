// bench_attention.cpp - tiled ("flash") vs composed scaled dot-product attention in heed,
// forward + backward, at T = 512 and 2048 (B = 1, H = 8, D = 64), with and without
// causal masking; bench_attention_torch.py runs PyTorch's F.scaled_dot_product_attention
// (fp32, and bf16 where the CPU has bf16 units) and its composed attention on the same
// workloads and prints them side by side, the ratio against the fastest PyTorch form (Debian's
// torch 1.13 has no SDPA: the composed form is what it offers).
// Each line written to the output file is "<name> <median ms>", as bench_core.cpp;
// the working memory (allocator peak beyond q, k, v, dO, O and the gradients) is printed.
//
//   build/bench/bench_attention build/bench/heed_attention.txt
//   build/torch-venv/bin/python tests/bench/bench_attention_torch.py build/bench/heed_attention.txt
#include <heed/autograd/ops/attention/flash_attention.h>
#include <heed/heed.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "results_file.h"

using namespace heed;

static double median_ms(const std::function<void()>& f, int reps) {
  for (int i = 0; i < 2; ++i) f();  // warm-up (also fills the allocator's cache)
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    auto a = std::chrono::steady_clock::now();
    f();
    auto b = std::chrono::steady_clock::now();
    t.push_back(std::chrono::duration<double, std::milli>(b - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int main(int argc, char** argv) {
  bench::ResultsFile out(argc > 1 ? argv[1] : "build/bench/heed_attention.txt");
  manual_seed(0);
  const int64_t B = 1, H = 8, D = 64;
  std::printf("%-36s %10s %14s\n", "workload (fwd+bwd)", "median ms", "working MiB");
  for (int64_t T : {512, 2048})
    for (bool causal : {false, true})
      for (bool flash : {true, false}) {
        Tensor q = randn({B, H, T, D}).requires_grad_(), k = randn({B, H, T, D}).requires_grad_();
        Tensor v = randn({B, H, T, D}).requires_grad_(), dO = randn({B, H, T, D});
        const nn::AttentionMask m = nn::AttentionMask().causal(causal);
        auto step = [&] {
          q.set_grad(Tensor()), k.set_grad(Tensor()), v.set_grad(Tensor());
          Tensor o = flash ? flash_attention(q, k, v, m) : flash_attention_composed(q, k, v, m);
          o.backward(dO);
        };
        const double ms = median_ms(step, T <= 512 ? 20 : 5);
        q.set_grad(Tensor()), k.set_grad(Tensor()), v.set_grad(Tensor());
        alloc::reset_peak_bytes();
        const int64_t before = alloc::stats().live_bytes;
        step();  // once more, for the peak; O and the 3 grads are 4 tensors the size of q
        const int64_t one = int64_t(alloc::size_class(q.numel() * sizeof(real)));
        const double mib = double(alloc::stats().peak_bytes - before - 4 * one) / (1 << 20);
        const std::string name = std::string("attn_") + (flash ? "flash" : "composed") + "_T" +
                                 std::to_string(T) + (causal ? "_causal" : "") + "_fwd_bwd";
        out.add(name, ms);
        std::printf("%-36s %10.3f %14.1f\n", name.c_str(), ms, mib);
      }
  return out.write() ? 0 : 1;
}

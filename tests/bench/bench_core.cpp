// bench_core.cpp - `make bench`: heed's timings for the core ops; bench_torch.py runs the
// same workloads in PyTorch (CPU, eager, same thread count) and prints both side by side.
// Each line written to build/bench/heed.txt is "<name> <median ms>".
#include <heed/heed.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>

#include "results_file.h"

using namespace heed;

static double median_ms(const std::function<void()>& f, int reps) {
  for (int i = 0; i < 3; ++i) f();  // warm-up (also fills the allocator's cache)
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
  if (argc > 2 || (argc == 2 && argv[1][0] == '-')) {  // one optional argument: a file, not an option
    std::fprintf(stderr, "usage: bench_core [RESULTS_FILE]   (default build/bench/heed.txt)\n");
    return 2;
  }
  bench::ResultsFile out(argc > 1 ? argv[1] : "build/bench/heed.txt");
  manual_seed(0);
  auto report = [&](const char* name, double ms) {
    out.add(name, ms);
    std::printf("%-34s %9.3f ms\n", name, ms);
  };

  {  // matmul forward, square
    Tensor a = randn({512, 512}), b = randn({512, 512});
    report("matmul_512_fwd", median_ms([&] { matmul(a, b); }, 30));
  }
  {  // batched matmul forward + backward (attention-like shapes)
    Tensor a = randn({32, 128, 64}).requires_grad_(), b = randn({32, 64, 128}).requires_grad_();
    report("bmm_32x128x64_fwd_bwd", median_ms([&] { sum(matmul(a, b)).backward(); }, 30));
  }
  {  // broadcast add
    Tensor a = randn({1024, 1024}), b = randn({1024});
    report("add_bcast_1024x1024_fwd", median_ms([&] { add(a, b); }, 50));
  }
  {  // softmax over the last dim, forward + backward
    Tensor x = randn({4096, 512}).requires_grad_(), w = randn({4096, 512});
    report("softmax_4096x512_fwd_bwd", median_ms([&] { sum(softmax(x, -1) * w).backward(); }, 20));
  }
  {  // gelu forward + backward
    Tensor x = randn({1 << 20}).requires_grad_();
    report("gelu_1M_fwd_bwd", median_ms([&] { sum(gelu(x)).backward(); }, 20));
  }
  {  // reduction over dim 0
    Tensor x = randn({4096, 1024});
    report("sum_dim0_4096x1024", median_ms([&] { sum(x, 0); }, 30));
  }
  {  // one MLP training step: 512 -> 1024 -> 512, tanh, MSE
    Tensor x = randn({256, 512}), y = randn({256, 512});
    Tensor w1 = randn({512, 1024}).mul_(0.04).requires_grad_(), b1 = zeros({1024}).requires_grad_();
    Tensor w2 = randn({1024, 512}).mul_(0.03).requires_grad_(), b2 = zeros({512}).requires_grad_();
    report("mlp_step_256x512x1024", median_ms([&] {
             Tensor loss = mean(pow(matmul(tanh(matmul(x, w1) + b1), w2) + b2 - y, 2));
             for (Tensor* p : {&w1, &b1, &w2, &b2}) p->zero_grad();
             loss.backward();
           }, 20));
  }
  {  // tanh forward + backward
    Tensor x = randn({1 << 20}).requires_grad_();
    report("tanh_1M_fwd_bwd", median_ms([&] { sum(tanh(x)).backward(); }, 20));
  }
  {  // exp forward
    Tensor x = randn({1 << 20});
    report("exp_1M_fwd", median_ms([&] { exp(x); }, 30));
  }
  {  // cross_entropy = log_softmax + nll, forward + backward
    Tensor x = randn({4096, 1000}).requires_grad_();
    std::vector<int64_t> ids(4096);
    for (int64_t i = 0; i < 4096; ++i) ids[i] = (i * 7919) % 1000;
    IndexTensor t(ids);
    report("cross_entropy_4096x1000_fwd_bwd",
           median_ms([&] { nn::functional::cross_entropy(x, t).backward(); }, 20));
  }
  {  // layer norm over the last dim, with weight and bias, forward + backward
    Tensor x = randn({4096, 1024}).requires_grad_(), w = randn({4096, 1024});
    Tensor g = ones({1024}).requires_grad_(), b = zeros({1024}).requires_grad_();
    report("layer_norm_4096x1024_fwd_bwd",
           median_ms([&] { sum(layer_norm(x, {1024}, g, b) * w).backward(); }, 20));
  }
  {  // one-layer LSTM over a (B, T, In) batch, forward + backward
    nn::LSTM lstm(nn::LSTMOptions(256, 256));
    Tensor x = randn({32, 50, 256}).requires_grad_();
    report("lstm_32x50x256_fwd_bwd", median_ms([&] { sum(lstm->forward(x).output).backward(); }, 10));
  }
  return out.write() ? 0 : 1;
}

// bench_denormals.cpp - does attention slow down when its numbers underflow? Flash and
// composed attention, forward + backward (B 1, H 4, T 512, D 64), on three inputs:
//   normal      q, k, v ~ N(0, 1)
//   underflow   q ~ N(0, 40^2): scores spread over hundreds, so exp(s - max) of many keys
//               lands in the float denormals (the share is printed); v ~ 1e-36 N(0, 1),
//               so P V and dO V^T are denormal sums too
//   flushed     the underflow inputs with heed::set_flush_denormals(true) (core/denormals.h)
// at the thread settings heed starts with; 7 alternating rounds, each the median of 3
// steps; prints the median of the rounds and underflow / normal. A CPU that takes a
// microcode assist on denormals shows a large ratio; then flushing is worth turning on.
//
//   build/bench/bench_denormals
#include <heed/heed.h>

#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>

using namespace heed;

namespace {

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double step_ms(const std::function<void()>& f) {
  std::vector<double> t;
  for (int i = 0; i < 3; ++i) {
    const auto a = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count());
  }
  return median_of(t);
}

}  // namespace

int main() {
  manual_seed(0);
  const int64_t B = 1, H = 4, T = 512, D = 64;
  const Tensor q = randn({B, H, T, D}), k = randn({B, H, T, D}), v = randn({B, H, T, D});
  const Tensor dO = randn({B, H, T, D});
  const Tensor q_wide = (q * real(40)).detach(), v_tiny = (v * real(1e-36)).detach();
  const Tensor p = softmax(matmul(q_wide, k.transpose(-2, -1)) * real(1.0 / 8), -1);  // (B, H, T, T)
  int64_t denormal = 0;
  for (int64_t i = 0; i < p.numel(); ++i) denormal += p.data()[i] != 0 && p.data()[i] < FLT_MIN;
  std::printf("underflow inputs: %.1f%% of the attention probabilities are denormal\n", 100.0 * denormal / p.numel());
  std::printf("%-10s %10s %12s %10s %18s\n", "attention", "normal ms", "underflow ms", "flushed ms", "underflow / normal");
  for (bool flash : {true, false}) {
    auto run = [&](const Tensor& qq, const Tensor& vv) {
      Tensor a = qq.detach().requires_grad_(), b = k.detach().requires_grad_(), c = vv.detach().requires_grad_();
      Tensor o = flash ? flash_attention(a, b, c, nn::AttentionMask()) : flash_attention_composed(a, b, c, nn::AttentionMask());
      o.backward(dO);  // (B, H, T, D)
    };
    run(q, v);  // warm-up: the allocator's cache
    std::vector<double> normal, underflow, flushed;
    for (int round = 0; round < 7; ++round) {
      normal.push_back(step_ms([&] { run(q, v); }));
      underflow.push_back(step_ms([&] { run(q_wide, v_tiny); }));
      set_flush_denormals(true);
      flushed.push_back(step_ms([&] { run(q_wide, v_tiny); }));
      set_flush_denormals(false);
    }
    const double n = median_of(normal), u = median_of(underflow), f = median_of(flushed);
    std::printf("%-10s %10.2f %12.2f %10.2f %18.2f\n", flash ? "flash" : "composed", n, u, f, u / n);
  }
  return 0;
}

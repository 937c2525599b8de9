// helpers.h - small utilities shared by the tests.
// An include guard, not #pragma once: tests/rules.mk precompiles this header.
// It holds doctest, the standard library and the few heed headers these helpers use; each test
// file includes the other heed headers it uses itself, so that touching one library header
// recompiles only the tests that include it.
#ifndef HEED_TESTS_HELPERS_H
#define HEED_TESTS_HELPERS_H
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <heed/autograd/engine/gradcheck.h>
#include <heed/core/error.h>
#include <heed/core/parallel.h>
#include <heed/core/tensor.h>

namespace heed::test {

// The message of the heed::Error that f throws, or "(no heed::Error thrown)": a sentinel no
// real message contains, so `CHECK(contains(error_of(f), "matmul"))` fails when f succeeds.
template <class F>
std::string error_of(const F& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no heed::Error thrown)";
}

// A leaf tensor of normal values that requires grad.
inline Tensor param(const Shape& s, double scale = 1.0) {
  Tensor t = randn(s);
  t.mul_(real(scale));
  return t.requires_grad_();
}

// Largest |a - b| / (atol + rtol*|b|) over elements; <= 1 means "close".
inline bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-6) {
  if (a.shape() != b.shape()) return false;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double x = a.data()[i], y = b.data()[i];
    if (std::isnan(x) != std::isnan(y)) return false;
    if (std::isinf(y) && x == y) continue;
    if (std::fabs(x - y) > atol + rtol * std::fabs(y)) return false;
  }
  return true;
}

// Random ids in [0, bound) of the given shape (a private generator: the seed is untouched).
inline IndexTensor random_ids(const Shape& s, int64_t bound, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int64_t> u(0, bound - 1);
  std::vector<int64_t> ids(s.numel());
  for (auto& i : ids) i = u(gen);
  return IndexTensor(ids, s);
}

// n normal values from a private generator (the seed is untouched), for raw-buffer kernels.
inline std::vector<real> random_buffer(int64_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> normal;
  std::vector<real> v(n);
  for (real& x : v) x = real(normal(gen));
  return v;
}

// Key-padding masks for the attention tests: (B, Tk), 1 = may attend (the library's one
// mask convention). key_padding: row b is 1 on keys [keys[b].first, keys[b].second).
inline Tensor key_padding(const std::vector<std::pair<int64_t, int64_t>>& keys, int64_t Tk) {
  Tensor m = zeros({int64_t(keys.size()), Tk});
  for (size_t b = 0; b < keys.size(); ++b)
    for (int64_t j = keys[b].first; j < keys[b].second; ++j) m.data()[b * Tk + j] = 1;
  return m;
}

// Right padding: row b sees its first lengths[b] keys.
inline Tensor right_padding(const std::vector<int64_t>& lengths, int64_t Tk) {
  std::vector<std::pair<int64_t, int64_t>> keys;
  for (int64_t n : lengths) keys.push_back({0, n});
  return key_padding(keys, Tk);
}

// Left padding: row b hides its first hidden[b] keys.
inline Tensor left_padding(const std::vector<int64_t>& hidden, int64_t Tk) {
  std::vector<std::pair<int64_t, int64_t>> keys;
  for (int64_t h : hidden) keys.push_back({h, Tk});
  return key_padding(keys, Tk);
}

// (B, Tk), B >= 2: batch 1 hides its first ceil(Tk/2) keys, the others see every key; with
// causal, batch 1's first queries see nothing (fully masked rows: zero output and gradient).
inline Tensor half_left_padding(int64_t B, int64_t Tk) {
  std::vector<int64_t> hidden(B, 0);
  hidden.at(1) = (Tk + 1) / 2;
  return left_padding(hidden, Tk);
}

// For its lifetime: exactly n threads (dynamic threads off); restores both settings after.
struct FixedThreads {
  const int threads = get_num_threads();
  const bool dynamic = get_dynamic_threads();
  explicit FixedThreads(int n) {
    set_dynamic_threads(false);
    set_num_threads(n);
  }
  ~FixedThreads() {
    set_num_threads(threads);
    set_dynamic_threads(dynamic);
  }
};

// Runs gradcheck and reports the first disagreement through doctest.
inline void check_grad(const TensorFn& f, const std::vector<Tensor>& inputs,
                       const GradcheckOptions& opt = GradcheckOptions()) {
  GradcheckResult r = gradcheck(f, inputs, opt);
  CHECK_MESSAGE(r.ok, r.message);
}

// A fused op against its composed twin: runs both on fresh leaf copies of `inputs`, sends one
// random upstream gradient back through each, and checks that the outputs and the gradient
// of every input agree within rtol/atol (allclose).
inline void check_fused_matches_composed(const TensorFn& fused, const TensorFn& composed,
                                         const std::vector<Tensor>& inputs, double rtol,
                                         double atol) {
  auto leaves = [&] {
    std::vector<Tensor> v;
    for (const Tensor& t : inputs) v.push_back(t.detach().clone().requires_grad_());
    return v;
  };
  const std::vector<Tensor> a = leaves(), b = leaves();
  const Tensor ya = fused(a), yb = composed(b);
  CHECK_MESSAGE(allclose(ya, yb, rtol, atol), "fused ", ya, " vs composed ", yb);
  const Tensor dy = randn(ya.shape());
  ya.backward(dy);
  yb.backward(dy);
  for (size_t i = 0; i < a.size(); ++i) {
    CAPTURE(i);
    CHECK_MESSAGE(allclose(a[i].grad(), b[i].grad(), rtol, atol), "gradient of input ", i, ": ",
                  a[i].grad(), " vs ", b[i].grad());
  }
}

}  // namespace heed::test

#endif  // HEED_TESTS_HELPERS_H

// test_empty_shapes.cpp - zero-size dims follow PyTorch; negative and impossible sizes are
// heed::Errors. Regression tests for crashes and hangs found from outside: SIGFPE in 2-D
// matmul with K = 0 and in sum over a zero-size dim, a hang in the allocator for negative
// sizes, and a silently wrapped element count.
#include <cstdint>
#include <string>

#include <heed/core/allocator.h>
#include <heed/core/random.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/linalg.h>
#include <heed/autograd/ops/linear.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/softmax.h>
#include <heed/autograd/ops/views.h>
#include <heed/layers/attention/multihead_attention.h>
#include "helpers.h"

using namespace heed;
using heed::test::error_of;

static bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

static bool all_zero(const Tensor& t) {
  for (int64_t i = 0; i < t.numel(); ++i)
    if (t.data()[i] != 0) return false;
  return true;
}

TEST_CASE("matmul with inner dim 0 gives zeros, forward and backward (was SIGFPE)") {
  Tensor a = zeros({2, 0}).requires_grad_();
  Tensor b = zeros({0, 4}).requires_grad_();
  Tensor c = matmul(a, b);  // (2, 4)
  CHECK(c.shape() == Shape{2, 4});
  CHECK(all_zero(c));
  sum(c).backward();
  CHECK(a.grad().shape() == Shape{2, 0});
  CHECK(b.grad().shape() == Shape{0, 4});

  Tensor x = zeros({3, 2, 0}).requires_grad_();  // batch dims folded into rows
  Tensor y = matmul(x, ones({0, 5}));
  CHECK(y.shape() == Shape{3, 2, 5});
  CHECK(all_zero(y));
  sum(y).backward();
  CHECK(x.grad().shape() == Shape{3, 2, 0});

  Tensor e = matmul(zeros({0, 3}), ones({3, 4}));  // no rows at all
  CHECK(e.shape() == Shape{0, 4});
}

TEST_CASE("linear with a zero-size dim follows PyTorch: zeros or the bias, and zero gradients") {
  // Fill the allocator's cache with many non-zero blocks of every small size first (all
  // alive at once, then freed together), so a buffer left unwritten shows.
  {
    std::vector<Tensor> junk;
    for (int copy = 0; copy < 8; ++copy)
      for (int64_t n = 1; n <= 64; ++n) junk.push_back(full({n}, 7.0f));
  }
  auto check = [](int64_t N, int64_t K, int64_t M, bool with_bias) {
    CAPTURE(N); CAPTURE(K); CAPTURE(M); CAPTURE(with_bias);
    Tensor x = full({N, K}, 1.0f).requires_grad_(), w = full({M, K}, 1.0f).requires_grad_();
    Tensor b = with_bias ? full({M}, 3.0f).requires_grad_() : Tensor();
    Tensor y = linear(x, w, b);  // (N, M)
    REQUIRE(y.shape() == Shape{N, M});
    for (int64_t i = 0; i < y.numel(); ++i) CHECK(y.data()[i] == real(with_bias ? 3 + K : K));
    sum(y * 2.0f).backward();
    CHECK(x.grad().shape() == Shape{N, K});
    CHECK(w.grad().shape() == Shape{M, K});
    for (int64_t i = 0; i < x.grad().numel(); ++i) CHECK(x.grad().data()[i] == real(2 * M));
    for (int64_t i = 0; i < w.grad().numel(); ++i) CHECK(w.grad().data()[i] == real(2 * N));
    if (with_bias)
      for (int64_t i = 0; i < M; ++i) CHECK(b.grad().data()[i] == real(2 * N));
  };
  for (bool with_bias : {false, true}) {
    check(0, 3, 4, with_bias);  // no rows: dW, db are zeros
    check(2, 0, 4, with_bias);  // no input features: y is the bias (or zeros)
    check(2, 3, 0, with_bias);  // no outputs: dx is zeros
  }
}

TEST_CASE("sum over a zero-size dim gives zeros; over a kept dim an empty tensor (was SIGFPE)") {
  Tensor x = zeros({3, 0}).requires_grad_();
  Tensor s0 = sum(x, 0);  // (0): nothing left
  CHECK(s0.shape() == Shape{0});
  Tensor s1 = sum(x, 1);  // (3): sums of no elements
  CHECK(s1.shape() == Shape{3});
  CHECK(all_zero(s1));
  sum(s1).backward();
  CHECK(x.grad().shape() == Shape{3, 0});

  Tensor y = zeros({2, 0, 3}).requires_grad_();
  Tensor t = sum(y, 1, /*keepdim=*/true);  // (2, 1, 3) of zeros
  CHECK(t.shape() == Shape{2, 1, 3});
  CHECK(all_zero(t));
  sum(t).backward();
  CHECK(y.grad().shape() == Shape{2, 0, 3});
  CHECK(sum(zeros({0})).item() == 0);
}

TEST_CASE("softmax over an empty dim is an empty tensor; mean of nothing is an error") {
  CHECK(softmax(zeros({2, 0}), -1).shape() == Shape{2, 0});
  CHECK(softmax(zeros({0, 3}), -1).shape() == Shape{0, 3});
  CHECK(contains(error_of([] { mean(zeros({0})); }), "mean"));  // PyTorch gives NaN
  CHECK(contains(error_of([] { mean(zeros({3, 0}), 1); }), "empty dim"));
}

TEST_CASE("factories reject negative sizes instead of hanging, naming the factory") {
  CHECK(contains(error_of([] { zeros({-1, 3}); }), "zeros: negative size -1 in shape (-1,3)"));
  CHECK(contains(error_of([] { zeros({3, -1}); }), "zeros: negative size -1"));
  CHECK(contains(error_of([] { empty({-1, 3}); }), "empty: negative size -1"));
  CHECK(contains(error_of([] { full({2, -1}, 1.5); }), "full: negative size -1"));
  CHECK(contains(error_of([] { ones({-1}); }), "ones: negative size"));
  CHECK(contains(error_of([] { randn({-1, 2}); }), "randn: negative size"));
  CHECK(contains(error_of([] { rand({2, -1}); }), "rand: negative size"));
  CHECK(contains(error_of([] { Shape{-2, 3}; }), "negative size -2"));
  CHECK(zeros({0, 3}).numel() == 0);  // zero is a size, as in PyTorch
}

TEST_CASE("element counts never overflow silently") {
  const int64_t big = int64_t(1) << 40;
  CHECK(contains(error_of([&] { zeros({big, big}); }), "overflows int64"));
  CHECK(contains(error_of([&] { Shape{big, big}.numel(); }), "(1099511627776,1099511627776)"));
  // Fits int64 but no buffer can hold it: refused before anything is allocated.
  CHECK(contains(error_of([&] { zeros({big, (big >> 20) + 1}); }), "zeros: shape"));
  // A view must not match an overflowed count either.
  CHECK(contains(error_of([&] { zeros({0}).reshape({big, big, 0}); }), "overflows"));
}

TEST_CASE("the allocator refuses impossible sizes without looping") {
  CHECK(contains(error_of([] { alloc::allocate(~std::size_t(0)); }), "allocate: impossible request"));
  CHECK(contains(error_of([] { alloc::allocate((std::size_t(1) << 63) + 1); }), "impossible"));
}

TEST_CASE("multi-head attention over zero keys gives a zero context, with or without weights") {
  manual_seed(0);
  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(8, 2));
  Tensor q = randn({2, 3, 8}).requires_grad_();
  Tensor kv = zeros({2, 0, 8});
  for (bool need_weights : {true, false}) {
    nn::AttentionOutput out = mha->forward(q, kv, kv, {}, {}, need_weights);
    CHECK(out.output.shape() == Shape{2, 3, 8});
    // No key: every context is 0, so the output is out_proj's bias (zero at initialisation).
    CHECK(all_zero(out.output));
    if (need_weights) CHECK(out.weights.shape() == Shape{2, 3, 0});
    sum(out.output).backward();
    CHECK(q.grad().shape() == Shape{2, 3, 8});
    q.set_grad(Tensor());
  }
}

TEST_CASE("arange refuses non-finite bounds, a step of the wrong sign and impossible lengths") {
  CHECK(contains(error_of([] { arange(0, INFINITY, 1); }), "arange: start, end and step must be finite"));
  CHECK(contains(error_of([] { arange(0, NAN, 1); }), "must be finite"));
  CHECK(contains(error_of([] { arange(5, 0, 1); }), "arange: end 0 lies on the wrong side of start 5"));
  CHECK(contains(error_of([] { arange(0, 1e30, 1); }), "arange: (end - start) / step = "));
  CHECK(arange(3, 3, 1).numel() == 0);  // start == end: empty, as PyTorch
  CHECK(arange(5, 0, -2).to_vector() == std::vector<real>{5, 3, 1});
}

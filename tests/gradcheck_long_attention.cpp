// gradcheck_long_attention.cpp - finite-difference checks (double build) of chunked,
// sliding-window and sparse attention w.r.t. q, k and v, with key padding, causal masks
// and queries whose every key is masked (zero context, zero gradient).
#include <heed/core/random.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/attention/attend.h>
#include <heed/autograd/ops/attention/attention_mask.h>
#include <heed/autograd/ops/attention/chunked_attention.h>
#include <heed/autograd/ops/compare.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/shape.h>
#include <heed/autograd/ops/attention/sliding_window_attention.h>
#include <heed/autograd/ops/attention/sparse_attention.h>
#include <heed/autograd/ops/views.h>
#include <heed/layers/attention/chunked_attention.h>
#include <heed/layers/attention/sliding_window_attention.h>
#include <heed/layers/attention/sparse_attention.h>
#include "helpers.h"

using namespace heed;
using heed::test::check_grad;
using heed::test::left_padding;
using heed::test::param;
using nn::AttentionMask;
using V = std::vector<Tensor>;

namespace {

}  // namespace

TEST_CASE("gradcheck long_attention: chunked (chunk not dividing T, padding, causal, Tq != Tk, recompute)") {
  manual_seed(501);
  Tensor q = param({2, 5, 3}), k = param({2, 6, 3}), v = param({2, 6, 2});
  const Tensor pad = left_padding({0, 2}, 6);
  for (bool recompute : {false, true}) {
    CAPTURE(recompute);
    for (const AttentionMask& m : {AttentionMask(), AttentionMask().key_padding(pad).causal(),
                                   AttentionMask().mask(gt(rand({5, 6}), 0.3)).causal()})
      check_grad([&](const V& x) {
        return nn::chunked_attention(x[0], x[1], x[2], m, 2, {}, 0, false, recompute); }, {q, k, v});
  }
  Tensor q4 = param({1, 2, 7, 3}), k4 = param({1, 2, 4, 3}), v4 = param({1, 2, 4, 3});
  check_grad([](const V& x) {  // Tq > Tk causal: the first 3 queries see nothing
    return nn::chunked_attention(x[0], x[1], x[2], AttentionMask().causal(), 3); }, {q4, k4, v4});
}

TEST_CASE("gradcheck long_attention: sliding window, causal and symmetric, padding, empty windows") {
  manual_seed(502);
  const int64_t T = 7;
  Tensor q = param({2, T, 3}), k = param({2, T, 3}), v = param({2, T, 2});
  const Tensor pad = left_padding({0, 3}, T);  // batch 1 hides keys 0, 1, 2
  for (bool causal : {false, true})
    for (int64_t w : {0, 1, 2, 6})
      for (int64_t block : {0, 2, 3}) {
        CAPTURE(causal); CAPTURE(w); CAPTURE(block);
        const AttentionMask m = AttentionMask().key_padding(pad).causal(causal);
        check_grad([&](const V& x) {
          return nn::sliding_window_attention(x[0], x[1], x[2], m, w, {}, 0, false, block); }, {q, k, v});
      }
  // causal, w = 2: batch 1's queries 0..2 see only hidden keys -> zero context, zero gradient
  const AttentionMask m = AttentionMask().key_padding(pad).causal();
  q.set_grad(Tensor()), k.set_grad(Tensor()), v.set_grad(Tensor());
  const Tensor c = nn::sliding_window_attention(q, k, v, m, 2, {}, 0, false, 2);  // (2, T, 2)
  sum(c * randn(c.shape())).backward();
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t d = 0; d < 2; ++d) CHECK(c.at({1, i, d}) == 0);
    for (int64_t d = 0; d < 3; ++d) CHECK(q.grad().at({1, i, d}) == 0);
  }
  for (const Tensor& t : {c, q.grad(), k.grad(), v.grad()})
    for (real x : t.to_vector()) CHECK(std::isfinite(x));
  Tensor q4 = param({1, 2, 5, 3}), k4 = param({1, 2, 5, 3}), v4 = param({1, 2, 5, 2});
  check_grad([](const V& x) {
    return nn::sliding_window_attention(x[0], x[1], x[2], AttentionMask(), 1, 0.7, 0, false, 2); },
    {q4, k4, v4});
}

TEST_CASE("gradcheck long_attention: sparse (strided and fixed patterns, padding, causal)") {
  manual_seed(503);
  const int64_t T = 6;
  Tensor q = param({2, 2, T, 3}), k = param({2, 2, T, 3}), v = param({2, 2, T, 2});
  const Tensor pad = left_padding({0, 2}, T);
  for (const Tensor& S : {nn::strided_pattern(T, 2), nn::strided_pattern(T, 2, false),
                          nn::fixed_pattern(T, 3, 1), nn::fixed_pattern(T, 3, 2, false)})
    for (const AttentionMask& m : {AttentionMask(), AttentionMask().key_padding(pad).causal()})
      check_grad([&](const V& x) {
        const nn::Attended a = nn::sparse_attention(x[0], x[1], x[2], S, m);
        return cat({flatten(a.context), flatten(a.weights)});
      }, {q, k, v});
}

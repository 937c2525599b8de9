// test_linear_attention.cpp - the linear attention kernel against its quadratic reference
// (outputs and gradients, float), its causal and padding semantics, O(T) memory against
// the reference's O(T^2), and the nn::LinearAttention layer.
#include <limits>

#include <heed/core/allocator.h>
#include <heed/core/random.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/attention/attention_mask.h>
#include <heed/autograd/ops/attention/linear_attention.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/shape.h>
#include <heed/autograd/ops/views.h>
#include <heed/layers/attention/linear_attention.h>
#include "helpers.h"

using namespace heed;
using heed::test::allclose;
using heed::test::param;

namespace {

struct Case {
  Shape q, k, v;
  bool causal;
  bool pad;
};

// dL/d{q,k,v} of L = sum(f(q, k, v) * w), and the output.
struct Run {
  Tensor out, dq, dk, dv;
};

template <class F>
Run run(const F& f, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& w) {
  for (const Tensor* t : {&q, &k, &v}) t->set_grad(Tensor());
  Tensor out = f(q, k, v);
  sum(out * w).backward();
  return {out.detach(), q.grad(), k.grad(), v.grad()};
}

// A (B, Tk) padding mask with the last `pad` keys of batch row 0 padded (1 = real key).
Tensor padding(int64_t B, int64_t Tk, int64_t pad) {
  std::vector<int64_t> lengths(B, Tk);
  lengths[0] = Tk - pad;
  return heed::test::right_padding(lengths, Tk);
}

// Peak allocator bytes of one forward + backward, beyond what was live before it.
template <class F>
int64_t peak_bytes(const F& f, const Tensor& q, const Tensor& k, const Tensor& v) {
  for (const Tensor* t : {&q, &k, &v}) t->set_grad(Tensor());
  alloc::PeakScope scope;
  sum(f(q, k, v)).backward();
  return scope.bytes();
}

}  // namespace

TEST_CASE("linear_attention equals the quadratic kernel form in outputs and gradients") {
  manual_seed(11);
  const std::vector<Case> cases = {
      {{2, 1, 4}, {2, 1, 4}, {2, 1, 3}, false, false},
      {{2, 7, 4}, {2, 7, 4}, {2, 7, 3}, false, false},
      {{2, 7, 4}, {2, 7, 4}, {2, 7, 3}, true, false},
      {{2, 7, 4}, {2, 7, 4}, {2, 7, 5}, false, true},
      {{2, 7, 4}, {2, 7, 4}, {2, 7, 5}, true, true},
      {{2, 5, 4}, {2, 9, 4}, {2, 9, 3}, false, true},  // cross: Tq != Tk
      {{2, 5, 4}, {2, 9, 4}, {2, 9, 3}, true, false},  // causal, last query on last key
      {{2, 9, 4}, {2, 5, 4}, {2, 5, 3}, true, true},   // causal, first queries see no key
      {{2, 3, 64, 16}, {2, 3, 64, 16}, {2, 3, 64, 16}, false, true},
      {{2, 3, 64, 16}, {2, 3, 64, 16}, {2, 3, 64, 8}, true, false},
      {{1, 2, 64, 16}, {1, 2, 64, 16}, {1, 2, 64, 16}, true, true},
  };
  for (const Case& c : cases) {
    CAPTURE(c.q);
    CAPTURE(c.k);
    CAPTURE(c.causal);
    CAPTURE(c.pad);
    Tensor q = param(c.q), k = param(c.k), v = param(c.v);
    const Tensor kp = c.pad ? padding(c.k[0], c.k[c.k.size() - 2], 3) : Tensor();
    Shape os = c.q;
    os[os.size() - 1] = c.v.back();
    const Tensor w = randn(os);
    auto fast = [&](const Tensor& a, const Tensor& b, const Tensor& d) {
      return linear_attention(a, b, d, c.causal, kp);
    };
    auto ref = [&](const Tensor& a, const Tensor& b, const Tensor& d) {
      return linear_attention_reference(a, b, d, c.causal, kp);
    };
    const Run f = run(fast, q, k, v, w), r = run(ref, q, k, v, w);
    CHECK(allclose(f.out, r.out, 1e-5, 1e-5));
    CHECK(allclose(f.dq, r.dq, 1e-5, 1e-5));
    CHECK(allclose(f.dk, r.dk, 1e-5, 1e-5));
    CHECK(allclose(f.dv, r.dv, 1e-5, 1e-5));
  }
}

TEST_CASE("causal linear_attention: row i is the non-causal answer over keys 0..i (an RNN)") {
  manual_seed(12);
  Tensor q = randn({2, 2, 6, 4}), k = randn({2, 2, 6, 4}), v = randn({2, 2, 6, 3});
  const Tensor full = linear_attention(q, k, v, true);
  for (int64_t i = 0; i < 6; ++i) {
    CAPTURE(i);
    const Tensor prefix = linear_attention(slice(q, 2, i, i + 1), slice(k, 2, 0, i + 1),
                                           slice(v, 2, 0, i + 1));
    CHECK(allclose(prefix, slice(full, 2, i, i + 1), 1e-6, 1e-6));
  }
}

TEST_CASE("linear_attention: a padded key is dropped; a query with no key gives 0, never NaN") {
  manual_seed(13);
  for (bool causal : {false, true}) {
    CAPTURE(causal);
    Tensor q = param({2, 5, 3}), k = param({2, 5, 3}), v = param({2, 5, 2});
    Tensor kp = ones({2, 5});  // row 0: last two keys padded; row 1: every key padded
    for (int64_t j : {3, 4, 5, 6, 7, 8, 9}) kp.data()[j] = 0;
    const Tensor y = linear_attention(q, k, v, causal, kp);
    sum(y * y).backward();
    // row 0 equals attention over its first three keys alone (causal: its first 3 queries)
    auto first = [](const Tensor& t, int64_t n) { return slice(slice(t, 0, 0, 1), 1, 0, n); };
    const int64_t nq = causal ? 3 : 5;
    const Tensor kept = linear_attention(first(q, nq), first(k, 3), first(v, 3), causal);
    CHECK(allclose(first(y, nq), kept, 1e-6, 1e-6));
    // row 1 sees nothing: zero output and zero gradients
    for (const Tensor& t : {y, q.grad(), k.grad(), v.grad()}) {
      const Tensor row = slice(t, 0, 1, 2);
      CHECK(allclose(row, zeros_like(row), 0, 0));
    }
    // padded keys of row 0 get no gradient
    CHECK(allclose(slice(slice(k.grad(), 0, 0, 1), 1, 3, 5), zeros({1, 2, 3}), 0, 0));
    CHECK(allclose(slice(slice(v.grad(), 0, 0, 1), 1, 3, 5), zeros({1, 2, 2}), 0, 0));
  }
}

TEST_CASE("linear_attention: peak memory grows as T, the quadratic reference's as T^2") {
  // B = 1, H = 2, D = Dv = 16; T and 4T. Figures printed for the README.
  manual_seed(14);
  const int64_t T = 256;
  int64_t fast[2], ref[2];
  for (int s = 0; s < 2; ++s) {
    const int64_t t = T << (2 * s);
    Tensor q = param({1, 2, t, 16}), k = param({1, 2, t, 16}), v = param({1, 2, t, 16});
    for (bool causal : {false, true}) {
      auto f = [&](const Tensor& a, const Tensor& b, const Tensor& c) {
        return linear_attention(a, b, c, causal);
      };
      auto r = [&](const Tensor& a, const Tensor& b, const Tensor& c) {
        return linear_attention_reference(a, b, c, causal);
      };
      const int64_t pf = peak_bytes(f, q, k, v), pr = peak_bytes(r, q, k, v);
      MESSAGE("T=" << t << std::string(causal ? " causal" : " non-causal") << ": linear_attention peak "
                   << pf << " B, quadratic reference peak " << pr << " B");
      if (causal) {
        fast[s] = pf;
        ref[s] = pr;
      }
    }
  }
  const double growth_fast = double(fast[1]) / double(fast[0]);
  const double growth_ref = double(ref[1]) / double(ref[0]);
  MESSAGE("4x the length: linear_attention peak x" << growth_fast << ", reference x" << growth_ref);
  CHECK(growth_fast < 4.5);  // linear (plus a constant)
  CHECK(growth_ref > 10);    // quadratic terms dominate
  CHECK(fast[1] * 20 < ref[1]);
}

TEST_CASE("linear_attention: shape errors name the op") {
  Tensor q = zeros({2, 3, 4}), k = zeros({2, 5, 4}), v = zeros({2, 5, 6});
  CHECK_NOTHROW(linear_attention(q, k, v));
  CHECK_THROWS_WITH_AS(linear_attention(q, zeros({2, 5, 3}), v), doctest::Contains("linear_attention"), Error);
  CHECK_THROWS_AS(linear_attention(q, k, zeros({2, 4, 6})), Error);
  CHECK_THROWS_AS(linear_attention(zeros({3, 4}), zeros({3, 4}), zeros({3, 4})), Error);
  CHECK_THROWS_AS(linear_attention(q, k, v, false, ones({2, 3})), Error);
  CHECK_THROWS_AS(linear_attention(q, k, v, false, ones({2, 1, 5})), Error);
}

TEST_CASE("nn::LinearAttention: projections + heads around the op, causal, padding, repr") {
  manual_seed(15);
  const int64_t B = 2, T = 6, E = 8, H = 2;
  auto att = nn::LinearAttention(nn::LinearAttentionOptions(E, H));
  std::vector<std::string> names;
  for (auto& [n, p] : att->named_parameters()) names.push_back(n);
  CHECK(names == std::vector<std::string>{"q_proj.weight", "q_proj.bias", "k_proj.weight",
                                          "k_proj.bias", "v_proj.weight", "v_proj.bias",
                                          "out_proj.weight", "out_proj.bias"});
  CHECK(att->repr() == "LinearAttention(embed_dim=8, num_heads=2, bias=True, causal=False)");

  Tensor x = randn({B, T, E});
  const Tensor kp = padding(B, T, 2);
  for (bool causal : {false, true}) {
    CAPTURE(causal);
    nn::AttentionMask m = nn::AttentionMask().key_padding(kp).causal(causal);
    const Tensor y = att->forward(x, x, x, m);
    auto heads = [&](const Tensor& t) { return t.reshape({B, T, H, E / H}).transpose(1, 2); };
    const Tensor o = linear_attention_reference(heads(att->q_proj->forward(x)), heads(att->k_proj->forward(x)),
                                                heads(att->v_proj->forward(x)), causal, kp);
    const Tensor expect = att->out_proj->forward(o.transpose(1, 2).reshape({B, T, E}));
    CHECK(y.shape() == Shape{B, T, E});
    CHECK(allclose(y, expect, 1e-5, 1e-5));
  }
  // causal: changing the last input row leaves every earlier output alone
  auto causal_att = nn::LinearAttention(nn::LinearAttentionOptions(E, H).causal(true));
  const Tensor y1 = causal_att->forward(x, x, x);
  const Tensor x2 = cat({slice(x, 1, 0, T - 1), randn({B, 1, E})}, 1);
  const Tensor y2 = causal_att->forward(x2, x2, x2);
  CHECK(allclose(slice(y1, 1, 0, T - 1), slice(y2, 1, 0, T - 1), 1e-6, 1e-6));
  CHECK_FALSE(allclose(slice(y1, 1, T - 1, T), slice(y2, 1, T - 1, T), 1e-3, 1e-3));
  CHECK(causal_att->repr() == "LinearAttention(embed_dim=8, num_heads=2, bias=True, causal=True)");

  CHECK_THROWS_WITH_AS(att->forward(x, x, x, nn::AttentionMask().mask(ones({T, T}))),
                       doctest::Contains("LinearAttention"), Error);
  CHECK_THROWS_AS(nn::LinearAttention(nn::LinearAttentionOptions(8, 3)), Error);
}

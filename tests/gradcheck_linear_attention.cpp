// gradcheck_linear_attention.cpp - finite-difference checks (double build) of the linear
// attention op's hand-written backward (causal and not, padding, Tq != Tk, 3-D and 4-D),
// of its quadratic reference, and of nn::LinearAttention.
#include <heed/core/random.h>
#include <heed/autograd/ops/attention/attention_mask.h>
#include <heed/autograd/ops/attention/linear_attention.h>
#include <heed/layers/attention/linear_attention.h>
#include "helpers.h"

using namespace heed;
using heed::test::check_grad;
using heed::test::param;
using V = std::vector<Tensor>;

namespace {

// 1 = real key; batch row 0 has its last key padded, row 1 its first two.
Tensor padding(int64_t Tk) { return heed::test::key_padding({{0, Tk - 1}, {2, Tk}}, Tk); }

}  // namespace

TEST_CASE("gradcheck linear_attention and its reference: causal or not, padding, Tq != Tk") {
  manual_seed(21);
  const std::vector<std::pair<Shape, Shape>> shapes = {  // q, k (v has Dv = 2)
      {{2, 4, 3}, {2, 4, 3}},
      {{2, 3, 3}, {2, 5, 3}},
      {{2, 5, 3}, {2, 3, 3}},
      {{2, 2, 4, 3}, {2, 2, 4, 3}}};
  for (auto [sq, sk] : shapes) {
    Shape sv = sk;
    sv[sv.size() - 1] = 2;
    Tensor q = param(sq), k = param(sk), v = param(sv);
    for (bool causal : {false, true})
      for (bool pad : {false, true}) {
        CAPTURE(sq);
        CAPTURE(sk);
        CAPTURE(causal);
        CAPTURE(pad);
        const Tensor kp = pad ? padding(sk[sk.size() - 2]) : Tensor();
        check_grad([&](const V& x) { return linear_attention(x[0], x[1], x[2], causal, kp); }, {q, k, v});
        check_grad([&](const V& x) { return linear_attention_reference(x[0], x[1], x[2], causal, kp); },
                   {q, k, v});
      }
  }
}

TEST_CASE("gradcheck linear_attention with only some inputs requiring grad") {
  manual_seed(22);
  Tensor q = param({2, 4, 3}), k = param({2, 4, 3}), v = param({2, 4, 2});
  Tensor qc = q.detach(), kc = k.detach(), vc = v.detach();
  for (bool causal : {false, true}) {
    check_grad([&](const V& x) { return linear_attention(x[0], kc, vc, causal); }, {q});
    check_grad([&](const V& x) { return linear_attention(qc, x[0], vc, causal); }, {k});
    check_grad([&](const V& x) { return linear_attention(qc, kc, x[0], causal); }, {v});
  }
}

TEST_CASE("gradcheck nn::LinearAttention: input and every parameter, causal with padding") {
  manual_seed(23);
  for (bool causal : {false, true}) {
    CAPTURE(causal);
    auto att = nn::LinearAttention(nn::LinearAttentionOptions(4, 2).causal(causal));
    Tensor x = param({2, 3, 4});
    const Tensor kp = padding(3);
    V inputs = {x};
    for (const Tensor& p : att->parameters()) inputs.push_back(p);
    check_grad([&](const V& in) { return att->forward(in[0], in[0], in[0], nn::AttentionMask().key_padding(kp)); },
               inputs);
  }
}

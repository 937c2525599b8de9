// test_attention_core.cpp - behaviour of the shared attention core (attend, visible) and
// of scaled dot-product attention: rows of weights sum to 1 (0 when nothing is visible),
// masks zero what they hide, causal alignment when Tq != Tk, fully masked rows give
// zeros and never NaN, dropout, and the error messages.
#include <algorithm>
#include <cmath>
#include <string>

#include <heed/core/random.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/attention/attend.h>
#include <heed/autograd/ops/attention/attention_mask.h>
#include <heed/autograd/ops/dropout.h>
#include <heed/autograd/ops/linalg.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/reduce_minmax.h>
#include <heed/autograd/ops/attention/scaled_dot_product.h>
#include <heed/autograd/ops/shape.h>
#include <heed/autograd/ops/softmax.h>
#include <heed/autograd/ops/unary.h>
#include <heed/autograd/ops/views.h>
#include <heed/layers/attention/scaled_dot_product.h>
#include "helpers.h"

using namespace heed;
using heed::test::right_padding;
using heed::test::error_of;
using heed::test::allclose;

namespace {

// weights[..., i, :] summed, for every row, as a flat list
std::vector<real> row_sums(const Tensor& w) { return sum(w, -1).to_vector(); }

bool all_finite(const Tensor& t) {
  for (real x : t.to_vector())
    if (!std::isfinite(x)) return false;
  return true;
}

}  // namespace

TEST_CASE("attend: weights are a softmax over keys; rows sum to 1; context = weights @ V") {
  manual_seed(501);
  Tensor e = randn({2, 3, 4}), v = randn({2, 4, 5});
  const nn::Attended a = nn::attend("test", e, v);
  CHECK(a.weights.shape() == Shape{2, 3, 4});
  CHECK(a.context.shape() == Shape{2, 3, 5});
  for (real s : row_sums(a.weights)) CHECK(s == doctest::Approx(1).epsilon(1e-6));
  CHECK(allclose(a.weights, softmax(e, -1)));
  CHECK(allclose(a.context, matmul(a.weights, v)));
}

TEST_CASE("attend: key padding zeroes the padded keys' weights, per batch element") {
  manual_seed(502);
  Tensor e = randn({2, 3, 4}), v = randn({2, 4, 2});
  const nn::Attended a = nn::attend("test", e, v, nn::AttentionMask().key_padding(right_padding({4, 2}, 4)));
  for (real s : row_sums(a.weights)) CHECK(s == doctest::Approx(1).epsilon(1e-6));
  for (int i = 0; i < 3; ++i) {
    CHECK(a.weights.at({1, i, 2}) == 0);
    CHECK(a.weights.at({1, i, 3}) == 0);
    CHECK(a.weights.at({0, i, 3}) > 0);
  }
}

TEST_CASE("attend: causal weights are zero above the aligned diagonal j <= i + (Tk - Tq)") {
  manual_seed(503);
  for (auto [Tq, Tk] : std::vector<std::pair<int64_t, int64_t>>{{4, 4}, {2, 5}, {5, 3}}) {
    CAPTURE(Tq);
    CAPTURE(Tk);
    Tensor e = randn({2, Tq, Tk}), v = randn({2, Tk, 3});
    const nn::Attended a = nn::attend("test", e, v, nn::AttentionMask().causal());
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t i = 0; i < Tq; ++i) {
        real s = 0;
        for (int64_t j = 0; j < Tk; ++j) {
          const real w = a.weights.at({b, i, j});
          if (j > i + (Tk - Tq)) CHECK(w == 0);
          else CHECK(w > 0);
          s += w;
        }
        // a query with no visible key (Tq > Tk, the first Tq - Tk queries) sums to 0
        CHECK(s == doctest::Approx(i + (Tk - Tq) >= 0 ? 1 : 0).epsilon(1e-6));
      }
    CHECK(all_finite(a.context));
  }
  // the last query always sees every key
  Tensor e = randn({1, 2, 5});
  const nn::Attended a = nn::attend("test", e, randn({1, 5, 1}), nn::AttentionMask().causal());
  CHECK(allclose(slice(a.weights, 1, 1, 2), softmax(slice(e, 1, 1, 2), -1)));
}

TEST_CASE("attend: a batch element whose keys are all padding gets zero context and zero grads") {
  manual_seed(504);
  Tensor e = test::param({2, 3, 4}), v = test::param({2, 4, 2});
  const nn::Attended a = nn::attend("test", e, v, nn::AttentionMask().key_padding(right_padding({4, 0}, 4)));
  sum(a.context * randn({2, 3, 2})).backward();
  CHECK(all_finite(a.context));
  CHECK(all_finite(e.grad()));
  CHECK(all_finite(v.grad()));
  for (int i = 0; i < 3; ++i) {
    for (int d = 0; d < 2; ++d) CHECK(a.context.at({1, i, d}) == 0);
    for (int j = 0; j < 4; ++j) {
      CHECK(a.weights.at({1, i, j}) == 0);
      CHECK(e.grad().at({1, i, j}) == 0);
    }
  }
  for (int j = 0; j < 4; ++j) CHECK(v.grad().at({1, j, 0}) == 0);
  CHECK(v.grad().at({0, 0, 0}) != 0);
}

TEST_CASE("attend: full masks broadcast ((Tq, Tk), (B, 1, Tq, Tk)) and combine with padding and causal") {
  manual_seed(505);
  Tensor e = randn({2, 2, 3, 3}), v = randn({2, 2, 3, 2});  // (B, H, Tq, Tk)
  const Tensor full = from_vector({1, 1, 0, 1, 1, 1, 0, 1, 1}, {3, 3});
  const nn::AttentionMask m = nn::AttentionMask().mask(full).key_padding(right_padding({3, 2}, 3)).causal();
  const Tensor vis = nn::visible("test", e.shape(), m);
  const nn::Attended a = nn::attend("test", e, v, m);
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t i = 0; i < 3; ++i)
        for (int64_t j = 0; j < 3; ++j) {
          const bool seen = full.at({i, j}) != 0 && j <= i && j < (b == 0 ? 3 : 2);
          CHECK(vis.at({b, 0, i, j}) == (seen ? 1 : 0));
          CHECK((a.weights.at({b, h, i, j}) > 0) == seen);
        }
  Tensor per_batch = ones({2, 1, 3, 3});
  per_batch.data()[9 + 4] = 0;  // batch 1, query 1 may not see key 1
  const nn::Attended p = nn::attend("test", e, v, nn::AttentionMask().mask(per_batch));
  CHECK(p.weights.at({1, 0, 1, 1}) == 0);
  CHECK(p.weights.at({1, 1, 1, 1}) == 0);
  CHECK(p.weights.at({0, 0, 1, 1}) > 0);
  CHECK_FALSE(nn::visible("test", e.shape(), {}).defined());
}

TEST_CASE("attend: dropout zeroes weights and scales the rest by 1/(1-p), only in training") {
  manual_seed(506);
  Tensor e = randn({2, 4, 6}), v = randn({2, 6, 3});
  const nn::Attended plain = nn::attend("test", e, v);
  CHECK(allclose(nn::attend("test", e, v, {}, 0.5, /*training=*/false).weights, plain.weights));
  manual_seed(9);
  const nn::Attended d1 = nn::attend("test", e, v, {}, 0.5, true);
  manual_seed(9);
  const nn::Attended d2 = nn::attend("test", e, v, {}, 0.5, true);
  CHECK(allclose(d1.weights, d2.weights, 0, 0));
  int zeros = 0;
  for (int64_t i = 0; i < plain.weights.numel(); ++i) {
    const real w = d1.weights.data()[i];
    if (w == 0) ++zeros;
    else CHECK(w == doctest::Approx(plain.weights.data()[i] * 2));
  }
  CHECK(zeros > 0);
  CHECK(zeros < 48);
  CHECK(allclose(d1.context, matmul(d1.weights, v)));  // weights are what multiplied V
}

TEST_CASE("attend and visible: errors name the op and the shapes") {
  Tensor e = randn({2, 3, 4}), v = randn({2, 4, 5});
  std::string msg = error_of([&] { nn::attend("myattn", e, randn({2, 3, 5})); });
  CHECK(msg.find("myattn") == 0);
  CHECK(msg.find("(2,3,4)") != std::string::npos);
  CHECK(msg.find("(2,3,5)") != std::string::npos);
  msg = error_of([&] { nn::attend("myattn", e, v, nn::AttentionMask().key_padding(ones({2, 3}))); });
  CHECK(msg.find("myattn: key padding mask (2,3)") == 0);
  msg = error_of([&] { nn::attend("myattn", e, v, nn::AttentionMask().key_padding(ones({3, 4}))); });
  CHECK(msg.find("key padding mask (3,4)") != std::string::npos);
  msg = error_of([&] { nn::attend("myattn", e, v, nn::AttentionMask().mask(ones({4, 4}))); });
  CHECK(msg.find("myattn") == 0);
  CHECK(msg.find("(4,4)") != std::string::npos);
  msg = error_of([&] { nn::attend("myattn", e, v, nn::AttentionMask().mask(ones({3, 2, 3, 4}))); });
  CHECK(msg.find("myattn: mask (3,2,3,4) does not broadcast to scores (2,3,4)") == 0);
  CHECK(error_of([&] { nn::attend("myattn", e, v, {}, 1.0, true); }).find("myattn: dropout") == 0);
  CHECK(error_of([&] { nn::attend("myattn", e, v, {}, -0.1, false); }).find("myattn: dropout") == 0);
  CHECK(error_of([&] { nn::check_mask("myattn", {3, 4}, nn::AttentionMask().key_padding(ones({3, 4}))); })
            .find("myattn: key padding") == 0);  // needs a batch dim: (Tq, Tk) scores have none
}

// The textbook scaled_dot_product_attention, one query row at a time, written with loops.
static Tensor sdpa_by_hand(const Tensor& q, const Tensor& k, const Tensor& v, double scale) {
  const int64_t B = q.size(0), Tq = q.size(1), Tk = k.size(1), Dk = q.size(2), Dv = v.size(2);
  Tensor c = zeros({B, Tq, Dv});
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < Tq; ++t) {
      std::vector<double> e(Tk);  // e_tj = q_t . k_j * scale
      double m = -INFINITY, s = 0;
      for (int64_t j = 0; j < Tk; ++j) {
        for (int64_t d = 0; d < Dk; ++d) e[j] += double(q.at({b, t, d})) * k.at({b, j, d});
        e[j] *= scale;
        m = std::max(m, e[j]);
      }
      for (int64_t j = 0; j < Tk; ++j) s += std::exp(e[j] - m);
      for (int64_t j = 0; j < Tk; ++j)  // c_t = sum_j alpha_tj v_j
        for (int64_t d = 0; d < Dv; ++d)
          c.data()[(b * Tq + t) * Dv + d] += real(std::exp(e[j] - m) / s * v.at({b, j, d}));
    }
  return c;
}

TEST_CASE("scaled_dot_product_attention: softmax(Q K^T / sqrt(d_k)) V, and the scale override") {
  manual_seed(507);
  Tensor q = randn({2, 3, 4}), k = randn({2, 5, 4}), v = randn({2, 5, 6});
  const nn::Attended a = nn::scaled_dot_product_attention(q, k, v);
  CHECK(allclose(a.context, sdpa_by_hand(q, k, v, 0.5), 1e-5, 1e-6));
  const nn::Attended s = nn::scaled_dot_product_attention(q, k, v, {}, {}, 0, false, 1.7);
  CHECK(allclose(s.context, sdpa_by_hand(q, k, v, 1.7), 1e-5, 1e-6));
  CHECK(allclose(s.weights, softmax(matmul(q, k.transpose(1, 2)) * real(1.7), -1), 1e-5, 1e-6));

  // (B, H, Tq, D): each head on its own
  Tensor qh = randn({2, 3, 4, 2}), kh = randn({2, 3, 4, 2}), vh = randn({2, 3, 4, 2});
  const nn::Attended h = nn::scaled_dot_product_attention(qh, kh, vh, nn::AttentionMask().causal());
  const nn::Attended h1 = nn::scaled_dot_product_attention(
      narrow(qh, 1, 1, 1).squeeze(1), narrow(kh, 1, 1, 1).squeeze(1), narrow(vh, 1, 1, 1).squeeze(1),
      nn::AttentionMask().causal());
  CHECK(allclose(narrow(h.context, 1, 1, 1).squeeze(1), h1.context));
  CHECK(h.weights.at({0, 2, 0, 1}) == 0);
}

TEST_CASE("scaled_dot_product_attention: errors name the function and the shapes") {
  Tensor q = randn({2, 3, 4}), k = randn({2, 5, 4}), v = randn({2, 5, 6});
  const auto msg = [&](const Tensor& a, const Tensor& b, const Tensor& c) {
    return error_of([&] { nn::scaled_dot_product_attention(a, b, c); });
  };
  CHECK(msg(q, randn({2, 5, 3}), v).find("scaled_dot_product_attention: q (2,3,4) and k (2,5,3)") == 0);
  CHECK(msg(q, k, randn({2, 4, 6})).find("k (2,5,4) and v (2,4,6)") != std::string::npos);
  CHECK(msg(q, randn({3, 5, 4}), v).find("batch/head dims differ") != std::string::npos);
  CHECK(msg(randn({3, 4}), randn({5, 4}), randn({5, 6})).find("scaled_dot_product_attention") == 0);
  CHECK(error_of([&] { nn::scaled_dot_product_attention(q, k, v, nn::AttentionMask().mask(ones({3, 4}))); })
            .find("scaled_dot_product_attention: mask (3,4)") == 0);
}

TEST_CASE("ScaledDotProductAttention module: causal option, train/eval dropout, repr") {
  manual_seed(508);
  Tensor q = randn({1, 4, 3}), k = randn({1, 4, 3}), v = randn({1, 4, 2});
  nn::ScaledDotProductAttention causal(nn::ScaledDotProductAttentionOptions().causal(true));
  const nn::Attended a = causal->forward(q, k, v);
  CHECK(allclose(a.weights, nn::scaled_dot_product_attention(q, k, v, nn::AttentionMask().causal()).weights));
  nn::ScaledDotProductAttention drop(nn::ScaledDotProductAttentionOptions().dropout(0.5));
  CHECK(drop->is_training());
  manual_seed(3);
  const Tensor w_train = drop->forward(q, k, v).weights;
  drop->eval();
  const Tensor w_eval = drop->forward(q, k, v).weights;
  CHECK(allclose(w_eval, nn::scaled_dot_product_attention(q, k, v).weights));
  CHECK_FALSE(allclose(w_train, w_eval));
  CHECK(drop->named_parameters().empty());
  CHECK(drop->repr() == "ScaledDotProductAttention(dropout=0.5, causal=False)");
  CHECK(nn::ScaledDotProductAttention(nn::ScaledDotProductAttentionOptions().scale(0.25).causal(true))->repr() ==
        "ScaledDotProductAttention(dropout=0.0, scale=0.25, causal=True)");
  CHECK_THROWS_AS(nn::ScaledDotProductAttention(nn::ScaledDotProductAttentionOptions().dropout(1)), Error);
}

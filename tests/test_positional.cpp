// test_positional.cpp - the defining property of each position encoding (float build):
//   sinusoidal  the formula; PE(pos + k) is PE(pos) rotated by k w_i in each pair
//   learned     gradient reaches only the rows of the positions used
//   RoPE        q(m) . k(n) depends only on m - n; norms are kept; fused op = composed twin
// Relative (Shaw) and ALiBi: tests/test_positional_relative.cpp.
#include <cmath>

#include <heed/core/random.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/dropout.h>
#include <heed/autograd/ops/linalg.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/reduce_minmax.h>
#include <heed/autograd/ops/attention/rope.h>
#include <heed/autograd/ops/shape.h>
#include <heed/autograd/ops/unary.h>
#include <heed/autograd/ops/views.h>
#include <heed/layers/attention/absolute_position.h>
#include <heed/layers/attention/positional.h>
#include <heed/layers/attention/rope.h>
#include "helpers.h"

using namespace heed;
using heed::test::allclose;

namespace {

double max_abs_diff(const Tensor& a, const Tensor& b) {
  REQUIRE(a.shape() == b.shape());
  double m = 0;
  for (int64_t i = 0; i < a.numel(); ++i)
    m = std::max(m, std::fabs(double(a.data()[i]) - double(b.data()[i])));
  return m;
}

}  // namespace

// ---------------------------------------------------------------- sinusoidal

TEST_CASE("positional: sinusoidal_table is the formula, rounded from double, odd d_model too") {
  for (const Shape& s : {Shape{60, 16}, Shape{30, 7}, Shape{5000, 6}}) {
    CAPTURE(s);
    const int64_t L = s[0], d = s[1];
    const Tensor pe = nn::sinusoidal_table(L, d);
    REQUIRE(pe.shape() == Shape{L, d});
    double worst = 0;
    for (int64_t pos = 0; pos < L; ++pos)
      for (int64_t c = 0; c < d; ++c) {
        const double angle = double(pos) / std::pow(10000.0, double(c - c % 2) / double(d));
        const double want = c % 2 == 0 ? std::sin(angle) : std::cos(angle);
        worst = std::max(worst, std::fabs(double(pe.at({pos, c})) - want));
      }
    CHECK(worst <= 1e-7);  // correctly rounded to float (half an ulp of 1 is 6e-8), even at pos 4999
  }
  CHECK(nn::sinusoidal_table(3, 7).at({2, 6}) == real(std::sin(2.0 / std::pow(1e4, 6.0 / 7))));
  CHECK_THROWS_AS(nn::sinusoidal_table(3, 0), Error);
  CHECK_THROWS_AS(nn::sinusoidal_table(-1, 4), Error);
}

TEST_CASE("positional: sinusoidal PE(pos + k) is PE(pos) rotated by k w_i in every pair") {
  // sin(a + b) =  cos b sin a + sin b cos a      [PE(pos+k, 2i)  ]   [ cos kw  sin kw] [PE(pos, 2i)  ]
  // cos(a + b) = -sin b sin a + cos b cos a      [PE(pos+k, 2i+1)] = [-sin kw  cos kw] [PE(pos, 2i+1)]
  // a matrix that depends on k and i but not on pos.
  const int64_t d = 12;
  const Tensor pe = nn::sinusoidal_table(200, d);
  for (int64_t k : {1, 7, 50})
    for (int64_t pos : {0, 3, 99, 149})
      for (int64_t i = 0; i < d / 2; ++i) {
        const double w = std::pow(10000.0, -2.0 * i / d), c = std::cos(k * w), s = std::sin(k * w);
        const double x0 = pe.at({pos, 2 * i}), x1 = pe.at({pos, 2 * i + 1});
        CHECK(pe.at({pos + k, 2 * i}) == doctest::Approx(c * x0 + s * x1).epsilon(1e-5).scale(1));
        CHECK(pe.at({pos + k, 2 * i + 1}) == doctest::Approx(-s * x0 + c * x1).epsilon(1e-5).scale(1));
      }
}

TEST_CASE("positional: SinusoidalPositionalEncoding adds rows offset.., checks T, has buffer pe") {
  manual_seed(1);
  nn::SinusoidalPositionalEncoding enc(8, 20);
  const Tensor table = nn::sinusoidal_table(20, 8);
  Tensor x = randn({2, 5, 8}).requires_grad_();
  Tensor y = enc->forward(x, 3);
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t t = 0; t < 5; ++t)
      for (int64_t c = 0; c < 8; ++c)
        CHECK(y.at({b, t, c}) == x.at({b, t, c}) + table.at({t + 3, c}));
  sum(y).backward();
  CHECK(allclose(x.grad(), ones({2, 5, 8})));
  CHECK(enc->forward(randn({20, 8})).shape() == Shape{20, 8});  // (T, d_model) works too

  CHECK_THROWS_AS(enc->forward(randn({1, 21, 8})), Error);     // T > max_len
  CHECK_THROWS_AS(enc->forward(randn({1, 5, 8}), 16), Error);  // offset + T > max_len
  CHECK_THROWS_AS(enc->forward(randn({1, 5, 9})), Error);      // wrong d_model
  CHECK_THROWS_AS(nn::SinusoidalPositionalEncoding(8, 20, 1.0), Error);
  REQUIRE(enc->named_buffers().size() == 1);
  CHECK(enc->named_buffers()[0].first == "pe");
  CHECK(enc->named_buffers()[0].second.shape() == Shape{1, 20, 8});
  CHECK(enc->named_parameters().empty());
  CHECK(enc->repr() == "SinusoidalPositionalEncoding(d_model=8, max_len=20, dropout=0.0)");

  nn::SinusoidalPositionalEncoding drop(nn::SinusoidalPositionalEncodingOptions(8).max_len(10).dropout(0.5));
  const Tensor ones_in = ones({4, 10, 8});
  const Tensor yt = drop->forward(ones_in);
  int zeros_seen = 0;
  for (int64_t i = 0; i < yt.numel(); ++i) zeros_seen += yt.data()[i] == 0;
  CHECK(zeros_seen > 100);  // ~160 of 320 dropped while training
  drop->eval();
  CHECK(allclose(drop->forward(ones_in), ones_in + nn::sinusoidal_table(10, 8)));
}

// ---------------------------------------------------------------- learned

TEST_CASE("positional: LearnedPositionalEmbedding: gradient reaches only the rows used") {
  manual_seed(2);
  nn::LearnedPositionalEmbedding pos(10, 4);
  Tensor x = randn({2, 3, 4}).requires_grad_();
  const Tensor w = randn({2, 3, 4});
  Tensor y = pos->forward(x, 2);  // positions 2, 3, 4
  for (int64_t t = 0; t < 3; ++t)
    for (int64_t c = 0; c < 4; ++c) CHECK(y.at({1, t, c}) == x.at({1, t, c}) + pos->weight.at({t + 2, c}));
  sum(y * w).backward();
  CHECK(allclose(x.grad(), w));
  for (int64_t r = 0; r < 10; ++r)
    for (int64_t c = 0; c < 4; ++c) {
      const bool used = r >= 2 && r < 5;
      const real want = used ? w.at({0, r - 2, c}) + w.at({1, r - 2, c}) : real(0);  // summed over B
      CHECK(pos->weight.grad().at({r, c}) == doctest::Approx(want).epsilon(1e-6));
    }
  CHECK_THROWS_AS(pos->forward(randn({1, 11, 4})), Error);
  CHECK_THROWS_AS(pos->forward(randn({1, 3, 4}), 8), Error);
  CHECK(pos->repr() == "LearnedPositionalEmbedding(10, 4)");
  CHECK(pos->named_parameters()[0].first == "weight");

  nn::LearnedPositionalEmbedding big(1000, 64);  // N(0, 1), as nn.Embedding
  CHECK(std::fabs(mean(big->weight).item()) < 0.02);
  CHECK(std::sqrt(var(big->weight).item()) == doctest::Approx(1).epsilon(0.02));
}

// ---------------------------------------------------------------- RoPE

TEST_CASE("positional: RoPE scores depend only on m - n; an extra offset on both changes nothing") {
  manual_seed(3);
  const Tensor q = randn({2, 3, 6, 8}), k = randn({2, 3, 6, 8});  // (B, H, T, D)
  auto scores = [&](int64_t q_off, int64_t k_off) {
    return matmul(nn::apply_rotary(q, q_off), transpose(nn::apply_rotary(k, k_off), -2, -1));
  };
  const Tensor s0 = scores(0, 0);
  for (int64_t off : {1, 37, 1000}) {
    CAPTURE(off);
    CHECK(max_abs_diff(scores(off, off), s0) < 2e-5 * (1 + off / 100));
    CHECK(max_abs_diff(scores(off + 2, 2), scores(off, 0)) < 2e-5 * (1 + off / 100));
  }
  CHECK(max_abs_diff(scores(1, 0), s0) > 0.1);  // shifting only q does change them

  // one query and one key, at positions (m, n): only m - n = 2 matters
  const Tensor qv = randn({1, 1, 8}), kv = randn({1, 1, 8});
  auto dot = [&](int64_t m, int64_t n) {
    return sum(nn::apply_rotary(qv, m) * nn::apply_rotary(kv, n)).item();
  };
  CHECK(dot(10, 8) == doctest::Approx(dot(2, 0)).epsilon(1e-5));
  CHECK(dot(502, 500) == doctest::Approx(dot(2, 0)).epsilon(1e-4));
}

TEST_CASE("positional: RoPE keeps every norm, is the identity at position 0, turns (1,0) by m") {
  manual_seed(4);
  const Tensor x = randn({2, 7, 10});
  const Tensor y = nn::apply_rotary(x, 11);
  CHECK(allclose(sqrt(sum(y * y, -1)), sqrt(sum(x * x, -1)), 1e-5, 1e-6));
  CHECK(allclose(nn::apply_rotary(x.reshape({14, 1, 10})), x.reshape({14, 1, 10}), 0, 0));

  const Tensor e0 = from_vector({1, 0}, {1, 2});  // D = 2: theta_0 = 1, angle = m
  for (int64_t m : {1, 5, 100}) {
    const Tensor r = nn::apply_rotary(e0, m);
    CHECK(r.at({0, 0}) == doctest::Approx(std::cos(double(m))).epsilon(1e-6));
    CHECK(r.at({0, 1}) == doctest::Approx(std::sin(double(m))).epsilon(1e-6));
  }
}

TEST_CASE("positional: the fused rotary op equals its composed twin, forward and backward") {
  manual_seed(5);
  for (bool half : {false, true}) {
    CAPTURE(half);
    const RotaryTable t = rotary_table(20, 6, 10000, 0, half);
    Tensor x1 = randn({2, 3, 5, 6}).requires_grad_(), x2 = x1.detach().requires_grad_();
    const Tensor dy = randn({2, 3, 5, 6});
    const Tensor y1 = rotary(x1, t, 4), y2 = rotary_reference(x2, t, 4);
    CHECK(allclose(y1, y2, 1e-6, 1e-6));
    y1.backward(dy);
    y2.backward(dy);
    CHECK(allclose(x1.grad(), x2.grad(), 1e-6, 1e-6));
  }
  CHECK_THROWS_AS(rotary(randn({2, 5, 8}), rotary_table(20, 6)), Error);     // D does not fit
  CHECK_THROWS_AS(rotary(randn({2, 5, 6}), rotary_table(20, 6), 16), Error); // rows past the table
  CHECK_THROWS_AS(rotary_table(4, 5), Error);                                // odd D
}

TEST_CASE("positional: half-split RoPE is interleaved RoPE on features paired (i, i + D/2)") {
  manual_seed(6);
  const int64_t D = 8, h = D / 2;
  const Tensor x = randn({3, 4, D});
  Tensor xp = empty(x.shape());  // xp[.., 2i] = x[.., i], xp[.., 2i+1] = x[.., i + D/2]
  for (int64_t r = 0; r < 12; ++r)
    for (int64_t i = 0; i < h; ++i) {
      xp.data()[r * D + 2 * i] = x.data()[r * D + i];
      xp.data()[r * D + 2 * i + 1] = x.data()[r * D + i + h];
    }
  const Tensor yh = nn::apply_rotary(x, 3, 10000, true), yi = nn::apply_rotary(xp, 3);
  for (int64_t r = 0; r < 12; ++r)
    for (int64_t i = 0; i < h; ++i) {
      CHECK(yh.data()[r * D + i] == yi.data()[r * D + 2 * i]);
      CHECK(yh.data()[r * D + i + h] == yi.data()[r * D + 2 * i + 1]);
    }
}

TEST_CASE("positional: RotaryEmbedding's growing cache gives apply_rotary's values step by step") {
  manual_seed(7);
  nn::RotaryEmbedding rope(nn::RotaryEmbeddingOptions(6).base(500));
  int64_t offset = 0;
  for (int64_t T : {4, 1, 1, 9, 1, 30, 2}) {  // prefill, then decoding steps, then a long chunk
    CAPTURE(offset);
    const Tensor x = randn({2, 2, T, 6});
    CHECK(allclose(rope->forward(x, offset), nn::apply_rotary(x, offset, 500), 0, 0));
    offset += T;
  }
  CHECK(rope->parameters().empty());
  CHECK(rope->named_buffers().empty());
  CHECK(rope->repr() == "RotaryEmbedding(dim=6, base=500.0)");
  CHECK_THROWS_AS(nn::RotaryEmbedding(7), Error);
  CHECK_THROWS_AS(rope->forward(randn({2, 3, 8})), Error);
  CHECK_THROWS_AS(rope->forward(randn({2, 3, 6}), -1), Error);
  CHECK_THROWS_AS(nn::apply_rotary(randn({2, 3, 5})), Error);
}

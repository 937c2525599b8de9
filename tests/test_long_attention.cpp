// test_long_attention.cpp - chunked, sliding-window and sparse attention (float build):
// each equals full attention composed from attend() with the matching mask, in outputs and
// in the gradients of q, k and v; the banded window's memory grows linearly in T; the
// Sparse Transformer patterns match hand-written cases; the modules' options and repr.
#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include <heed/core/allocator.h>
#include <heed/core/random.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/attention/attend.h>
#include <heed/autograd/ops/attention/attention_mask.h>
#include <heed/autograd/ops/attention/chunked_attention.h>
#include <heed/autograd/ops/compare.h>
#include <heed/autograd/ops/dropout.h>
#include <heed/autograd/engine/grad_mode.h>
#include <heed/autograd/ops/linalg.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/reduce_minmax.h>
#include <heed/autograd/ops/shape.h>
#include <heed/autograd/ops/attention/sliding_window_attention.h>
#include <heed/autograd/ops/attention/sparse_attention.h>
#include <heed/autograd/ops/unary.h>
#include <heed/layers/attention/chunked_attention.h>
#include <heed/layers/attention/sliding_window_attention.h>
#include <heed/layers/attention/sparse_attention.h>
#include "helpers.h"

using namespace heed;
using nn::AttentionMask;

namespace {

// max |a - b| / (atol + rtol |b|), atol = rtol * max|b| (elements near zero are compared on
// the scale of the whole tensor). <= 1 means equal to ~1e-5 relative.
double mismatch(const Tensor& a, const Tensor& b, double rtol = 1e-5) {
  REQUIRE(a.shape() == b.shape());
  double top = 0, worst = 0;
  for (int64_t i = 0; i < b.numel(); ++i) top = std::max(top, double(std::fabs(b.data()[i])));
  const double atol = rtol * std::max(top, 1e-30);
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double x = a.data()[i], y = b.data()[i];
    if (std::isnan(x) || std::isnan(y)) return INFINITY;
    worst = std::max(worst, std::fabs(x - y) / (atol + rtol * std::fabs(y)));
  }
  return worst;
}

using Attention = std::function<Tensor(const Tensor&, const Tensor&, const Tensor&)>;

// The reference: full attention composed from the shared core, e = q k^T / sqrt(d_k).
Tensor full_attention(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionMask& m) {
  const Tensor e = matmul(q * real(1 / std::sqrt(double(q.size(-1)))), k.transpose(-2, -1));
  return nn::attend("reference", e, v, m).context;
}

// Outputs and gradients of q, k, v of two attentions agree (loss = sum(out * w)).
void check_same(const Attention& fast, const Attention& ref, const Shape& qs, const Shape& ks,
                int64_t Dv) {
  Shape vs = ks;
  vs[vs.size() - 1] = Dv;
  Tensor q = test::param(qs), k = test::param(ks), v = test::param(vs);
  Shape os = qs;
  os[os.size() - 1] = Dv;
  const Tensor w = randn(os);
  std::vector<Tensor> got[2];
  const Attention* fns[2] = {&fast, &ref};
  for (int r = 0; r < 2; ++r) {
    q.set_grad(Tensor()), k.set_grad(Tensor()), v.set_grad(Tensor());
    const Tensor o = (*fns[r])(q, k, v);
    sum(o * w).backward();
    got[r] = {o.detach(), q.grad(), k.grad(), v.grad()};
  }
  const char* what[4] = {"output", "dq", "dk", "dv"};
  for (int i = 0; i < 4; ++i) {
    CAPTURE(what[i]);
    CHECK(mismatch(got[0][i], got[1][i]) <= 1);
  }
}

// (B, Tk) key padding: batch 0 sees every key, batch b > 0 hides its first Tk/3 keys.
Tensor left_padding(int64_t B, int64_t Tk) {
  Tensor p = ones({B, Tk});
  for (int64_t b = 1; b < B; ++b)
    for (int64_t j = 0; j < Tk / 3; ++j) p.data()[b * Tk + j] = 0;
  return p;
}

Tensor pattern_of(const std::vector<std::vector<int>>& rows) {
  const int64_t n = int64_t(rows.size());
  std::vector<real> d;
  for (const auto& r : rows) d.insert(d.end(), r.begin(), r.end());
  return from_vector(d, {n, int64_t(rows[0].size())});
}

bool same(const Tensor& a, const Tensor& b) { return a.shape() == b.shape() && a.to_vector() == b.to_vector(); }

}  // namespace

TEST_CASE("long_attention: chunked equals full attention (T, chunk sizes, padding, causal, masks)") {
  manual_seed(11);
  const int64_t B = 2, H = 2, D = 8, Dv = 6;
  const std::vector<std::pair<int64_t, int64_t>> lengths = {{1, 1}, {7, 7}, {64, 64}, {33, 20}, {20, 33}};
  for (auto [Tq, Tk] : lengths) {
    const Tensor pad = left_padding(B, Tk);
    const Tensor full = gt(rand({B, 1, Tq, Tk}), 0.3);  // a (B, 1, Tq, Tk) mask
    const Tensor cols = gt(rand({Tk}), 0.2);             // a mask that broadcasts over Tq
    const std::vector<AttentionMask> masks = {
        AttentionMask(), AttentionMask().key_padding(pad), AttentionMask().causal(),
        AttentionMask().key_padding(pad).causal(), AttentionMask().mask(full).causal(),
        AttentionMask().mask(cols).key_padding(pad)};
    for (int64_t C : {1, 3, 8, 64, 100})
      for (size_t mi = 0; mi < masks.size(); ++mi) {
        if (C == 1 && Tq > 7) continue;  // 64 one-row chunks add time, not coverage
        for (bool recompute : {false, true}) {
          CAPTURE(Tq); CAPTURE(Tk); CAPTURE(C); CAPTURE(mi); CAPTURE(recompute);
          const AttentionMask& m = masks[mi];
          check_same([&](auto& q, auto& k, auto& v) {
                       return nn::chunked_attention(q, k, v, m, C, {}, 0, false, recompute); },
                     [&](auto& q, auto& k, auto& v) { return full_attention(q, k, v, m); },
                     {B, H, Tq, D}, {B, H, Tk, D}, Dv);
        }
      }
  }
  // 3-D inputs, and a scale override
  check_same([](auto& q, auto& k, auto& v) { return nn::chunked_attention(q, k, v, {}, 4, 0.5); },
             [](auto& q, auto& k, auto& v) {
               return nn::attend("ref", matmul(q * real(0.5), k.transpose(-2, -1)), v).context; },
             {3, 10, 4}, {3, 9, 4}, 5);
}

TEST_CASE("long_attention: chunked keeps O(C Tk) scores without grad, and in backward with recompute") {
  manual_seed(12);
  const int64_t T = 1024, D = 16, C = 64;
  Tensor q = test::param({1, T, D}), k = test::param({1, T, D}), v = test::param({1, T, D});
  const AttentionMask m = AttentionMask().causal();
  auto peak = [&](const Attention& f, bool grad) {
    q.set_grad(Tensor()), k.set_grad(Tensor()), v.set_grad(Tensor());
    alloc::PeakScope scope;
    if (grad) {
      sum(f(q, k, v)).backward();
    } else {
      NoGradGuard no_grad;
      f(q, k, v);
    }
    return scope.bytes();
  };
  const Attention full = [&](auto& a, auto& b, auto& c) { return full_attention(a, b, c, m); };
  const Attention chunked = [&](auto& a, auto& b, auto& c) { return nn::chunked_attention(a, b, c, m, C); };
  const Attention recomputed = [&](auto& a, auto& b, auto& c) {
    return nn::chunked_attention(a, b, c, m, C, {}, 0, false, true); };
  const int64_t score_bytes = T * T * int64_t(sizeof(real));  // one (T, T) tensor
  const int64_t full_fwd = peak(full, false), chunk_fwd = peak(chunked, false);
  const int64_t full_bwd = peak(full, true), chunk_bwd = peak(chunked, true);
  const int64_t recompute_bwd = peak(recomputed, true);
  MESSAGE("T=1024 C=64 causal, peak KiB: forward no-grad full " << full_fwd / 1024 << ", chunked "
          << chunk_fwd / 1024 << "; forward+backward full " << full_bwd / 1024 << ", chunked "
          << chunk_bwd / 1024 << ", chunked+recompute " << recompute_bwd / 1024);
  CHECK(full_fwd >= score_bytes);
  CHECK(chunk_fwd < score_bytes / 2);        // a few (C, T) slabs, not (T, T)
  CHECK(chunk_bwd >= score_bytes);           // autograd keeps every chunk's weights
  CHECK(recompute_bwd < score_bytes / 2);    // ... unless each chunk is recomputed
}

TEST_CASE("long_attention: sliding window equals full attention with the band mask") {
  manual_seed(13);
  const int64_t B = 2, D = 8, Dv = 4;
  for (int64_t T : {1, 5, 17, 100})
    for (int64_t w : {int64_t{0}, int64_t{1}, int64_t{3}, int64_t{16}, T - 1, T, 2 * T})
      for (int64_t block : {int64_t{0}, int64_t{4}, std::max<int64_t>(w, 1)})
        for (bool causal : {false, true})
          for (bool padded : {false, true}) {
            CAPTURE(T); CAPTURE(w); CAPTURE(block); CAPTURE(causal); CAPTURE(padded);
            AttentionMask m = AttentionMask().causal(causal);
            if (padded) m.key_padding(left_padding(B, T));
            AttentionMask ref = AttentionMask().mask(nn::sliding_window_pattern(T, w, causal));
            if (padded) ref.key_padding(m.key_padding());
            check_same([&](auto& q, auto& k, auto& v) {
                         return nn::sliding_window_attention(q, k, v, m, w, {}, 0, false, block); },
                       [&](auto& q, auto& k, auto& v) { return full_attention(q, k, v, ref); },
                       {B, T, D}, {B, T, D}, Dv);
          }
  // 4-D (B, H, T, D); the window pattern with the core's causal flag is the same reference
  const AttentionMask m = AttentionMask().key_padding(left_padding(2, 30)).causal();
  const AttentionMask ref = AttentionMask(m).mask(nn::sliding_window_pattern(30, 5, false));
  check_same([&](auto& q, auto& k, auto& v) { return nn::sliding_window_attention(q, k, v, m, 5); },
             [&](auto& q, auto& k, auto& v) { return full_attention(q, k, v, ref); },
             {2, 3, 30, 8}, {2, 3, 30, 8}, 8);
}

TEST_CASE("long_attention: sliding window memory grows linearly in T, full attention's quadratically") {
  manual_seed(14);
  const int64_t w = 32, D = 16;
  auto peak = [&](int64_t T, bool banded) {
    Tensor q = test::param({1, T, D}), k = test::param({1, T, D}), v = test::param({1, T, D});
    const AttentionMask m = AttentionMask().causal();
    alloc::PeakScope scope;
    const Tensor o = banded ? nn::sliding_window_attention(q, k, v, m, w)
                            : full_attention(q, k, v, AttentionMask().mask(
                                                          nn::sliding_window_pattern(T, w, true)));
    sum(o).backward();
    return double(scope.bytes());
  };
  std::vector<double> band, full;
  for (int64_t T : {512, 1024, 2048}) {
    band.push_back(peak(T, true));
    full.push_back(peak(T, false));
    MESSAGE("causal window w=32 D=16 T=" << T << " forward+backward peak KiB: banded "
            << band.back() / 1024 << ", full with band mask " << full.back() / 1024);
  }
  for (size_t i = 1; i < band.size(); ++i) {
    CHECK(band[i] / band[i - 1] < 2.3);  // doubling T doubles the banded memory
    CHECK(full[i] / full[i - 1] > 3.3);  // ... and quadruples the full one
  }
  CHECK(band.back() * 8 < full.back());
}

TEST_CASE("long_attention: sliding window errors, w = 0 is the values themselves") {
  const Tensor q = randn({1, 6, 4}), k = randn({1, 6, 4}), v = randn({1, 6, 3});
  CHECK_THROWS_WITH(nn::sliding_window_attention(q, k, v, AttentionMask().mask(ones({6, 6})), 2),
                    doctest::Contains("sliding_window_attention: a full (Tq, Tk) mask"));
  CHECK_THROWS_WITH(nn::sliding_window_attention(q, randn({1, 5, 4}), randn({1, 5, 3}), {}, 2),
                    doctest::Contains("self-attention over one sequence"));
  CHECK_THROWS_WITH(nn::sliding_window_attention(q, k, v, {}, -1), doctest::Contains("window must be >= 0"));
  CHECK_THROWS_WITH(nn::sliding_window_attention(q, k, v, AttentionMask().key_padding(ones({1, 5})), 1),
                    doctest::Contains("key padding mask (1,5) must be (B, T)"));
  CHECK(same(nn::sliding_window_attention(q, k, v, {}, 0), v));  // each query sees only itself
}

TEST_CASE("long_attention: Sparse Transformer patterns match hand-written cases") {
  // strided, l = 3: the previous 3 positions and every 3rd one back (Child et al., fig. 3b)
  CHECK(same(nn::strided_pattern(8, 3), pattern_of({{1, 0, 0, 0, 0, 0, 0, 0},
                                                    {1, 1, 0, 0, 0, 0, 0, 0},
                                                    {1, 1, 1, 0, 0, 0, 0, 0},
                                                    {1, 1, 1, 1, 0, 0, 0, 0},
                                                    {0, 1, 1, 1, 1, 0, 0, 0},
                                                    {0, 0, 1, 1, 1, 1, 0, 0},
                                                    {1, 0, 0, 1, 1, 1, 1, 0},
                                                    {0, 1, 0, 0, 1, 1, 1, 1}})));
  // fixed, l = 4, c = 1: the own block, and the last position of every block (fig. 3c)
  CHECK(same(nn::fixed_pattern(8, 4, 1), pattern_of({{1, 0, 0, 0, 0, 0, 0, 0},
                                                     {1, 1, 0, 0, 0, 0, 0, 0},
                                                     {1, 1, 1, 0, 0, 0, 0, 0},
                                                     {1, 1, 1, 1, 0, 0, 0, 0},
                                                     {0, 0, 0, 1, 1, 0, 0, 0},
                                                     {0, 0, 0, 1, 1, 1, 0, 0},
                                                     {0, 0, 0, 1, 1, 1, 1, 0},
                                                     {0, 0, 0, 1, 1, 1, 1, 1}})));
  // fixed, non-causal, l = 4, c = 2: rows 1 and 5
  const Tensor f = nn::fixed_pattern(8, 4, 2, false);
  CHECK(same(narrow(f, 0, 1, 1), pattern_of({{1, 1, 1, 1, 0, 0, 1, 1}})));
  CHECK(same(narrow(f, 0, 5, 1), pattern_of({{0, 0, 1, 1, 1, 1, 1, 1}})));
  // sliding window: tridiagonal (w = 1), and its causal half
  CHECK(same(nn::sliding_window_pattern(4, 1, false),
             pattern_of({{1, 1, 0, 0}, {1, 1, 1, 0}, {0, 1, 1, 1}, {0, 0, 1, 1}})));
  CHECK(same(nn::sliding_window_pattern(4, 1, true),
             pattern_of({{1, 0, 0, 0}, {1, 1, 0, 0}, {0, 1, 1, 0}, {0, 0, 1, 1}})));
  CHECK(same(nn::sliding_window_pattern(3, 0, false), pattern_of({{1, 0, 0}, {0, 1, 0}, {0, 0, 1}})));
  CHECK(nn::pattern_density(nn::sliding_window_pattern(4, 1, false)) == doctest::Approx(10.0 / 16));
  CHECK_THROWS_WITH(nn::strided_pattern(4, 0), doctest::Contains("stride must be >= 1"));
  CHECK_THROWS_WITH(nn::fixed_pattern(4, 2, 3), doctest::Contains("must be in [0, 2]"));
}

TEST_CASE("long_attention: every pattern holds its diagonal; causal ones are lower triangular; "
          "the non-causal ones are symmetric where they should be") {
  for (int64_t T : {1, 7, 20})
    for (int64_t l : {1, 2, 3, 5})
      for (bool causal : {true, false}) {
        CAPTURE(T); CAPTURE(l); CAPTURE(causal);
        const Tensor s = nn::strided_pattern(T, l, causal), f = nn::fixed_pattern(T, l, 1, causal);
        const Tensor w = nn::sliding_window_pattern(T, l, causal);
        for (const Tensor* p : {&s, &f, &w}) {
          for (int64_t i = 0; i < T; ++i) CHECK(p->at({i, i}) == 1);  // every query sees itself
          if (causal) CHECK(same(*p, tril(*p)));
        }
        if (!causal) {
          CHECK(same(s, s.transpose(0, 1)));
          CHECK(same(w, w.transpose(0, 1)));
          CHECK(same(tril(s), nn::strided_pattern(T, l, true)));
        }
      }
}

TEST_CASE("long_attention: sparse attention equals a naive loop over the allowed keys") {
  manual_seed(15);
  const int64_t B = 2, T = 12, D = 5, Dv = 3;
  const Tensor q = randn({B, T, D}), k = randn({B, T, D}), v = randn({B, T, Dv});
  const Tensor S = nn::strided_pattern(T, 3, false), pad = left_padding(B, T);
  const nn::Attended a = nn::sparse_attention(q, k, v, S, AttentionMask().key_padding(pad).causal());
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < T; ++i) {
      std::vector<double> e(T, -INFINITY);  // scores of the allowed keys
      double top = -INFINITY, z = 0;
      for (int64_t j = 0; j < T; ++j) {
        if (S.at({i, j}) == 0 || pad.at({b, j}) == 0 || j > i) continue;
        e[j] = 0;
        for (int64_t d = 0; d < D; ++d) e[j] += double(q.at({b, i, d})) * k.at({b, j, d});
        e[j] /= std::sqrt(double(D));
        top = std::max(top, e[j]);
      }
      for (int64_t j = 0; j < T; ++j) z += std::isinf(e[j]) ? 0 : std::exp(e[j] - top);
      for (int64_t d = 0; d < Dv; ++d) {
        double c = 0;
        for (int64_t j = 0; j < T; ++j)
          if (!std::isinf(e[j])) c += std::exp(e[j] - top) / z * v.at({b, j, d});
        CHECK(a.context.at({b, i, d}) == doctest::Approx(c).epsilon(1e-5));
      }
    }
  // the weights are zero off the pattern; a sliding-window pattern gives the banded result
  CHECK(same(mul(a.weights, eq(S, 0)), zeros({B, T, T})));
  const Tensor band = nn::sliding_window_attention(q, k, v, AttentionMask().key_padding(pad), 2);
  const nn::Attended viaS = nn::sparse_attention(q, k, v, nn::sliding_window_pattern(T, 2, false),
                                                 AttentionMask().key_padding(pad));
  CHECK(mismatch(band, viaS.context) <= 1);
  CHECK_THROWS_WITH(nn::sparse_attention(q, k, v, full({T, T}, 0.5)), doctest::Contains("only 0 and 1"));
}

TEST_CASE("long_attention: modules, options and repr") {
  manual_seed(16);
  const Tensor q = randn({2, 2, 9, 4}), k = randn({2, 2, 9, 4}), v = randn({2, 2, 9, 4});
  auto ca = nn::ChunkedAttention(nn::ChunkedAttentionOptions(4).causal(true));
  CHECK(ca->repr() == "ChunkedAttention(chunk_size=4, causal=True, dropout=0.0, recompute=False)");
  CHECK(mismatch(ca->forward(q, k, v), full_attention(q, k, v, AttentionMask().causal())) <= 1);
  auto sw = nn::SlidingWindowAttention(
      nn::SlidingWindowAttentionOptions(2).causal(true).dropout(0.1).block(3));
  CHECK(sw->repr() == "SlidingWindowAttention(window=2, causal=True, dropout=0.1)");
  sw->eval();  // no dropout
  CHECK(mismatch(sw->forward(q, k, v),
                 full_attention(q, k, v, AttentionMask().mask(nn::sliding_window_pattern(9, 2, true)))) <= 1);
  sw->train();
  const Tensor dropped = sw->forward(q, k, v);  // training: dropout on the weights
  CHECK(dropped.shape() == Shape({2, 2, 9, 4}));
  auto sa = nn::SparseAttention(
      nn::SparseAttentionOptions(nn::sliding_window_pattern(4, 1, false)).scale(0.5));
  CHECK(sa->repr() == "SparseAttention(pattern=(4, 4), density=0.625, causal=False, dropout=0.0, scale=0.5)");
  CHECK_THROWS_WITH(nn::ChunkedAttention(nn::ChunkedAttentionOptions(0)),
                    doctest::Contains("chunk_size must be >= 1"));
  CHECK_THROWS_WITH(nn::SlidingWindowAttention(nn::SlidingWindowAttentionOptions(2).dropout(1)),
                    doctest::Contains("dropout must be in [0, 1)"));
  CHECK_THROWS_WITH(nn::chunked_attention(q, k, v, AttentionMask().mask(ones({5, 9})), 2),
                    doctest::Contains("chunked_attention: mask (5,9) does not broadcast"));
}

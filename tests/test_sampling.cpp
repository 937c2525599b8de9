// test_sampling.cpp - layers/sampling.h: greedy, temperature, top-k, top-p, their combination
// and the draw. Each rule on hand-built distributions (ties included), the kept sets against a
// brute-force definition, empirical frequencies against the renormalised distribution
// (chi-square), seeds, and every bad argument.
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/reduce_minmax.h>
#include <heed/autograd/ops/shape.h>
#include <heed/autograd/ops/softmax.h>
#include <heed/core/random.h>
#include <heed/layers/sampling.h>
#include "helpers.h"

using namespace heed;
using heed::test::error_of;

namespace {

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

Tensor rows(const std::vector<std::vector<double>>& r) {
  const int64_t B = r.size(), V = r[0].size();
  Tensor t = empty({B, V});
  for (int64_t b = 0; b < B; ++b)
    for (int64_t v = 0; v < V; ++v) t.data()[b * V + v] = real(r[b][v]);
  return t;
}

// Logits whose softmax is exactly proportional to p (log p; 0 -> -inf).
Tensor logits_of(const std::vector<double>& p) {
  std::vector<double> z;
  for (double x : p) z.push_back(x > 0 ? std::log(x) : -kInf);
  return rows({z});
}

// The indices of row b that a filter left finite.
std::set<int64_t> kept(const Tensor& filtered, int64_t b = 0) {
  std::set<int64_t> s;
  const int64_t V = filtered.size(1);
  for (int64_t v = 0; v < V; ++v)
    if (std::isfinite(double(filtered.data()[b * V + v]))) s.insert(v);
  return s;
}

std::vector<double> softmax_row(const Tensor& z, int64_t b) {
  const int64_t V = z.size(1);
  double m = -kInf, total = 0;
  for (int64_t v = 0; v < V; ++v) m = std::max(m, double(z.data()[b * V + v]));
  std::vector<double> q(V);
  for (int64_t v = 0; v < V; ++v) total += q[v] = std::exp(double(z.data()[b * V + v]) - m);
  for (double& x : q) x /= total;
  return q;
}

// Pearson's chi-square of `counts` (n draws) against probabilities q, over the tokens with
// q > 0; also fails if any token with q == 0 was drawn.
double chi_square(const std::vector<int64_t>& counts, const std::vector<double>& q, int64_t n, int& dof) {
  double chi = 0;
  dof = -1;
  for (size_t v = 0; v < q.size(); ++v) {
    if (q[v] == 0) {
      CHECK(counts[v] == 0);
      continue;
    }
    const double e = q[v] * n;
    chi += (counts[v] - e) * (counts[v] - e) / e;
    ++dof;
  }
  return chi;
}

// chi-square 99.9% quantiles for 1..7 degrees of freedom.
double chi_square_999(int dof) {
  static const double q[] = {0, 10.83, 13.82, 16.27, 18.47, 20.52, 22.46, 24.32};
  REQUIRE(dof >= 1);
  REQUIRE(dof <= 7);
  return q[dof];
}

// n draws of sample(logits, o) over a (B, V) batch of identical rows, counted per token.
std::vector<int64_t> draw_counts(const std::vector<double>& z, const nn::SamplingOptions& o, int64_t n) {
  const int64_t B = 1000;
  Tensor batch = rows(std::vector<std::vector<double>>(B, z));
  std::vector<int64_t> counts(z.size(), 0);
  for (int64_t i = 0; i < n / B; ++i) {
    const IndexTensor y = nn::sample(batch, o);
    REQUIRE(y.shape() == Shape({B}));
    for (int64_t b = 0; b < B; ++b) ++counts[y[b]];
  }
  return counts;
}

}  // namespace

TEST_CASE("sampling: greedy is argmax, ties to the lowest index as torch.argmax") {
  const Tensor z = rows({{0.5, 2, -1, 2}, {-kInf, -kInf, -kInf, -kInf}, {3, 3, 3, 3}, {-kInf, -7, kInf, kInf}});
  const IndexTensor g = nn::greedy(z);
  CHECK(g.shape() == Shape({4}));
  CHECK(g.vec() == std::vector<int64_t>({1, 0, 0, 2}));
  const Tensor r = randn({16, 33});
  CHECK(nn::greedy(r).vec() == argmax(r, 1).vec());
  CHECK(nn::greedy(empty({0, 5})).shape() == Shape({0}));
}

TEST_CASE("sampling: temperature 0 is greedy and draws no random number") {
  const Tensor z = randn({32, 50});
  manual_seed(3);
  const IndexTensor y = nn::sample(z, nn::SamplingOptions().temperature(0).top_k(5).top_p(0.5));
  const double next = rand_uniform();
  manual_seed(3);
  CHECK(rand_uniform() == next);  // sample() took nothing from the generator
  CHECK(y.vec() == argmax(z, 1).vec());
  const Tensor p = nn::sampling_probabilities(z, nn::SamplingOptions().temperature(0));
  for (int64_t b = 0; b < 32; ++b)
    for (int64_t v = 0; v < 50; ++v) CHECK(p.at({b, v}) == (v == y[b] ? 1 : 0));
}

TEST_CASE("sampling: apply_temperature divides the logits; the distribution sharpens as it falls") {
  const Tensor z = rows({{1, -2, 0.5, -kInf}});
  const Tensor h = nn::apply_temperature(z, 0.5);
  CHECK(h.to_vector() == std::vector<real>({2, -4, 1, -real(kInf)}));
  const std::vector<double> q1 = softmax_row(nn::apply_temperature(z, 1), 0), q2 = softmax_row(nn::apply_temperature(z, 2), 0);
  CHECK(q1[0] > q2[0]);  // the likeliest token loses mass as t grows
  CHECK(q1[1] < q2[1]);
  // sampling_probabilities at temperature t is softmax(z / t), here with every filter off.
  const Tensor p = nn::sampling_probabilities(z, nn::SamplingOptions().temperature(2));
  for (int v = 0; v < 4; ++v) CHECK(p.at({0, v}) == doctest::Approx(q2[v]).epsilon(1e-6));
}

TEST_CASE("sampling: top_k_filter keeps the k largest of each row, ties with the k-th included") {
  const Tensor z = rows({{1, 5, 3, 5, 2}, {4, 3, 3, 3, 0}, {0, 1, 2, 3, 4}});
  CHECK(kept(nn::top_k_filter(z, 1), 0) == std::set<int64_t>({1, 3}));  // tie at the top
  CHECK(kept(nn::top_k_filter(z, 2), 0) == std::set<int64_t>({1, 3}));
  CHECK(kept(nn::top_k_filter(z, 3), 0) == std::set<int64_t>({1, 2, 3}));
  CHECK(kept(nn::top_k_filter(z, 1), 1) == std::set<int64_t>({0}));
  CHECK(kept(nn::top_k_filter(z, 2), 1) == std::set<int64_t>({0, 1, 2, 3}));  // tie at the boundary
  CHECK(kept(nn::top_k_filter(z, 2), 2) == std::set<int64_t>({3, 4}));
  // the kept logits are unchanged; k = 0 and k >= V keep everything
  const Tensor f = nn::top_k_filter(z, 3);
  CHECK(f.at({2, 4}) == 4);
  CHECK(f.at({2, 1}) == -real(kInf));
  CHECK(nn::top_k_filter(z, 0).to_vector() == z.to_vector());
  CHECK(nn::top_k_filter(z, 5).to_vector() == z.to_vector());
  CHECK(nn::top_k_filter(z, 99).to_vector() == z.to_vector());
}

TEST_CASE("sampling: top_p_filter keeps the smallest set whose probability reaches p") {
  const Tensor z = logits_of({0.4, 0.3, 0.2, 0.1});
  const double e = 1e-6;
  CHECK(kept(nn::top_p_filter(z, 0.01)) == std::set<int64_t>({0}));  // the likeliest always stays
  CHECK(kept(nn::top_p_filter(z, 0.4 - e)) == std::set<int64_t>({0}));
  CHECK(kept(nn::top_p_filter(z, 0.4 + e)) == std::set<int64_t>({0, 1}));
  CHECK(kept(nn::top_p_filter(z, 0.7 - e)) == std::set<int64_t>({0, 1}));
  CHECK(kept(nn::top_p_filter(z, 0.7 + e)) == std::set<int64_t>({0, 1, 2}));
  CHECK(kept(nn::top_p_filter(z, 0.9 + e)) == std::set<int64_t>({0, 1, 2, 3}));
  CHECK(kept(nn::top_p_filter(z, 1)) == std::set<int64_t>({0, 1, 2, 3}));
  // unsorted input: the rule is on probabilities, not positions
  CHECK(kept(nn::top_p_filter(logits_of({0.1, 0.2, 0.4, 0.3}), 0.5)) == std::set<int64_t>({2, 3}));
}

TEST_CASE("sampling: top_p_filter keeps every token tied with the last one the nucleus needs") {
  // 0.4 + 0.2 reaches 0.5 at the second token; the two other 0.2 tokens are as likely: kept.
  CHECK(kept(nn::top_p_filter(logits_of({0.2, 0.4, 0.2, 0.2}), 0.5)) == std::set<int64_t>({0, 1, 2, 3}));
  CHECK(kept(nn::top_p_filter(logits_of({0.2, 0.4, 0.2, 0.2}), 0.3)) == std::set<int64_t>({1}));
  // equal logits: one token already reaches p = 0.1, all four are tied with it
  CHECK(kept(nn::top_p_filter(rows({{1, 1, 1, 1}}), 0.1)) == std::set<int64_t>({0, 1, 2, 3}));
  // a banned token (-inf) is never brought back, even by p = 1
  CHECK(kept(nn::top_p_filter(logits_of({0.5, 0, 0.5}), 1)) == std::set<int64_t>({0, 2}));
}

TEST_CASE("sampling: top_p_filter's kept set meets the definition on random distributions") {
  for (unsigned seed = 0; seed < 40; ++seed) {
    manual_seed(100 + seed);
    const Tensor z = randn({3, 17}) * real(1 + seed % 4);
    const double p = 0.05 + 0.9 * ((seed * 37) % 100) / 100.0;
    const Tensor f = nn::top_p_filter(z, p);
    for (int64_t b = 0; b < 3; ++b) {
      const std::vector<double> q = softmax_row(z, b);
      const std::set<int64_t> s = kept(f, b);
      double in = 0, min_in = 1, max_out = 0, above_min = 0;
      for (int64_t v = 0; v < 17; ++v) {
        if (s.count(v)) in += q[v], min_in = std::min(min_in, q[v]);
        else max_out = std::max(max_out, q[v]);
      }
      for (int64_t v : s)
        if (q[v] > min_in) above_min += q[v];
      CHECK(in >= p - 1e-12);           // it reaches p
      CHECK(max_out < min_in);          // it is the likeliest tokens, ties never split
      CHECK(above_min < p + 1e-12);     // without its least likely tokens it would not reach p
    }
  }
}

TEST_CASE("sampling: the combination is temperature, then top-k, then top-p on what top-k left") {
  // logits log(0.35, 0.25, 0.2, 0.12, 0.08) at temperature 1: top-k 3 leaves 0.35, 0.25, 0.2,
  // renormalised 0.4375, 0.3125, 0.25; top-p 0.7 then needs two of them (0.75 >= 0.7).
  // On the full distribution top-p 0.7 would need three (0.35 + 0.25 = 0.6 < 0.7).
  const Tensor z = logits_of({0.35, 0.25, 0.2, 0.12, 0.08});
  const Tensor p = nn::sampling_probabilities(z, nn::SamplingOptions().top_k(3).top_p(0.7));
  CHECK(p.at({0, 0}) == doctest::Approx(0.35 / 0.6).epsilon(1e-6));
  CHECK(p.at({0, 1}) == doctest::Approx(0.25 / 0.6).epsilon(1e-6));
  for (int v = 2; v < 5; ++v) CHECK(p.at({0, v}) == 0);
  CHECK(kept(nn::top_p_filter(z, 0.7)) == std::set<int64_t>({0, 1, 2}));
  // the same as composing the public filters, on random rows and settings
  manual_seed(5);
  const Tensor r = randn({6, 40}) * real(2);
  const auto o = nn::SamplingOptions().temperature(0.7).top_k(12).top_p(0.8);
  const Tensor composed = nn::top_p_filter(nn::top_k_filter(nn::apply_temperature(r, 0.7), 12), 0.8);
  const Tensor probs = nn::sampling_probabilities(r, o);
  for (int64_t b = 0; b < 6; ++b) {
    const std::vector<double> q = softmax_row(composed, b);
    for (int64_t v = 0; v < 40; ++v) CHECK(probs.at({b, v}) == doctest::Approx(q[v]).epsilon(1e-5));
  }
}

TEST_CASE("sampling: draws match the renormalised distribution (chi-square, fixed seed)") {
  const std::vector<double> z = {1.0, 0.2, -0.5, 0.9, -2.0, 0.0, 1.3};
  const int64_t n = 30000;
  const nn::SamplingOptions settings[] = {nn::SamplingOptions(), nn::SamplingOptions().temperature(0.6),
                                          nn::SamplingOptions().top_k(4), nn::SamplingOptions().top_p(0.75),
                                          nn::SamplingOptions().temperature(1.5).top_k(5).top_p(0.9)};
  for (const auto& o : settings) {
    manual_seed(11);
    const std::vector<int64_t> counts = draw_counts(z, o, n);
    const Tensor p = nn::sampling_probabilities(rows({z}), o);
    std::vector<double> q(z.size());
    for (size_t v = 0; v < z.size(); ++v) q[v] = p.at({0, int64_t(v)});
    int dof = 0;
    const double chi = chi_square(counts, q, n, dof);
    INFO("temperature ", o.temperature(), " top_k ", o.top_k(), " top_p ", o.top_p(), ": chi-square ", chi, ", ", dof, " dof");
    CHECK(chi < chi_square_999(dof));
  }
  // sample_categorical alone draws from softmax(z)
  manual_seed(12);
  Tensor batch = rows(std::vector<std::vector<double>>(n, z));
  const IndexTensor y = nn::sample_categorical(batch);
  std::vector<int64_t> counts(z.size(), 0);
  for (int64_t b = 0; b < n; ++b) ++counts[y[b]];
  int dof = 0;
  const double chi = chi_square(counts, softmax_row(rows({z}), 0), n, dof);
  CHECK(dof == 6);
  CHECK(chi < chi_square_999(dof));
}

TEST_CASE("sampling: top-k never draws outside the k, and a -inf token is never drawn") {
  manual_seed(21);
  const Tensor z = randn({200, 30});
  Tensor banned = z.clone();
  for (int64_t b = 0; b < 200; ++b) banned.data()[b * 30 + b % 30] = -real(kInf);
  for (int round = 0; round < 20; ++round) {
    const IndexTensor y = nn::sample(z, nn::SamplingOptions().top_k(3).temperature(3));
    const IndexTensor w = nn::sample(banned, nn::SamplingOptions().temperature(5));
    for (int64_t b = 0; b < 200; ++b) {
      const std::set<int64_t> top3 = kept(nn::top_k_filter(select(z, 0, b).reshape({1, 30}), 3));
      REQUIRE(top3.size() == 3);
      CHECK(top3.count(y[b]) == 1);
      CHECK(w[b] != b % 30);
    }
  }
}

TEST_CASE("sampling: the same seed gives the same draws, one uniform per row") {
  const Tensor z = randn({64, 20});
  const auto o = nn::SamplingOptions().temperature(0.9).top_k(10).top_p(0.95);
  manual_seed(42);
  const IndexTensor a = nn::sample(z, o);
  const double after_a = rand_uniform();
  manual_seed(42);
  const IndexTensor b = nn::sample(z, o);
  CHECK(a.vec() == b.vec());
  manual_seed(42);
  for (int i = 0; i < 64; ++i) rand_uniform();
  CHECK(rand_uniform() == after_a);  // 64 rows took 64 numbers
  manual_seed(43);
  CHECK(nn::sample(z, o).vec() != a.vec());
  // sample() at these settings is sample_categorical() of the composed filters, draw for draw
  manual_seed(42);
  const IndexTensor c = nn::sample_categorical(nn::top_p_filter(nn::top_k_filter(nn::apply_temperature(z, 0.9), 10), 0.95));
  CHECK(c.vec() == a.vec());
}

TEST_CASE("sampling: a tiny temperature is greedy without overflowing") {
  const Tensor z = rows({{30, 29.5, -1}, {-3, 2, 1.99}});
  manual_seed(1);
  const IndexTensor y = nn::sample(z, nn::SamplingOptions().temperature(1e-300));
  CHECK(y.vec() == std::vector<int64_t>({0, 1}));
}

TEST_CASE("sampling: bad arguments are heed::Errors naming the function and the value") {
  const Tensor z = randn({2, 5});
  using O = nn::SamplingOptions;
  const std::string neg_t = error_of([&] { nn::sample(z, O().temperature(-0.5)); });
  CHECK(contains(neg_t, "sample: temperature"));
  CHECK(contains(neg_t, "-0.5"));
  CHECK(contains(error_of([&] { nn::sample(z, O().temperature(kNaN)); }), "temperature must be >= 0 and finite"));
  CHECK(contains(error_of([&] { nn::sample(z, O().temperature(kInf)); }), "inf"));
  CHECK(contains(error_of([&] { nn::sample(z, O().top_k(-2)); }), "sample: top_k must be >= 0 (0: every token), got -2"));
  CHECK(contains(error_of([&] { nn::sample(z, O().top_p(0)); }), "sample: top_p must be in (0, 1]"));
  CHECK(contains(error_of([&] { nn::sample(z, O().top_p(1.5)); }), "got 1.5"));
  CHECK(contains(error_of([&] { nn::sample(z, O().top_p(kNaN)); }), "got nan"));
  CHECK(contains(error_of([&] { nn::sampling_probabilities(z, O().top_p(-1)); }), "sampling_probabilities: top_p"));
  CHECK(contains(error_of([&] { nn::apply_temperature(z, 0); }), "apply_temperature: temperature must be > 0"));
  CHECK(contains(error_of([&] { nn::top_k_filter(z, -1); }), "top_k_filter: k must be >= 0"));
  CHECK(contains(error_of([&] { nn::top_p_filter(z, 2); }), "top_p_filter: p must be in (0, 1]"));
  // logits: shape, NaN, +inf and all -inf where a softmax is taken
  CHECK(contains(error_of([&] { nn::sample(randn({5})); }), "sample: logits must be 2-D (B, V), got shape (5)"));
  CHECK(contains(error_of([&] { nn::greedy(randn({2, 3, 4})); }), "greedy: logits must be 2-D"));
  CHECK(contains(error_of([&] { nn::sample(empty({2, 0})); }), "sample: logits has no tokens"));
  CHECK(contains(error_of([&] { nn::greedy(Tensor()); }), "greedy: logits is an undefined tensor"));
  const Tensor nan = rows({{0, 1, 2}, {0, kNaN, 1}});
  CHECK(contains(error_of([&] { nn::greedy(nan); }), "greedy: logits[1, 1] is NaN"));
  CHECK(contains(error_of([&] { nn::sample(nan, O().temperature(0)); }), "logits[1, 1] is NaN"));
  CHECK(contains(error_of([&] { nn::top_k_filter(nan, 2); }), "top_k_filter: logits[1, 1] is NaN"));
  CHECK(contains(error_of([&] { nn::apply_temperature(nan, 1); }), "apply_temperature: logits[1, 1] is NaN"));
  const Tensor inf = rows({{0, kInf, 2}});
  CHECK(contains(error_of([&] { nn::sample(inf); }), "sample: logits[0, 1] is +inf"));
  CHECK(contains(error_of([&] { nn::top_p_filter(inf, 0.5); }), "top_p_filter: logits[0, 1] is +inf"));
  CHECK(nn::greedy(inf).vec() == std::vector<int64_t>({1}));  // argmax is defined with +inf
  const Tensor dead = rows({{0, 1, 2}, {-kInf, -kInf, -kInf}});
  CHECK(contains(error_of([&] { nn::sample_categorical(dead); }), "sample_categorical: every logit of row 1 is -inf"));
  CHECK(contains(error_of([&] { nn::sample(dead, O().top_k(1)); }), "sample: every logit of row 1 is -inf"));
}

// sampling.cpp - greedy, temperature, top-k, top-p and the categorical draw (sampling.h).
//
// Every function reads the (B, V) logits row by row in double and writes a new tensor; the
// rows are independent and small (V is a vocabulary), so this runs on one thread, which also
// keeps the generator's draws in row order.
#include "sampling.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "../core/error.h"
#include "../core/random.h"

namespace heed::nn {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Checks what every function needs: (B, V), V > 0, no NaN; with `needs_softmax`, also no
// +inf and at least one finite logit per row. Returns V.
int64_t check_logits(const char* op, const Tensor& logits, bool needs_softmax) {
  HEED_CHECK(logits.defined(), op, "logits is an undefined tensor");
  HEED_CHECK(logits.dim() == 2, op, "logits must be 2-D (B, V), got shape ", logits.shape());
  const int64_t B = logits.size(0), V = logits.size(1);
  HEED_CHECK(V > 0, op, "logits has no tokens (shape ", logits.shape(), ")");
  const real* z = logits.data();
  for (int64_t b = 0; b < B; ++b) {
    bool any_finite = false;
    for (int64_t v = 0; v < V; ++v) {
      const double x = z[b * V + v];
      HEED_CHECK(!std::isnan(x), op, "logits[", b, ", ", v, "] is NaN");
      HEED_CHECK(!(needs_softmax && x == kInf), op, "logits[", b, ", ", v,
                 "] is +inf: softmax is undefined (mark a banned token with -inf)");
      any_finite = any_finite || std::isfinite(x);
    }
    HEED_CHECK(!needs_softmax || any_finite, op, "every logit of row ", b,
               " is -inf: there is no token to sample");
  }
  return V;
}

// Row b of the logits as doubles.
std::vector<double> row(const Tensor& logits, int64_t b) {
  const int64_t V = logits.size(1);
  const real* z = logits.data() + b * V;
  return std::vector<double>(z, z + V);
}

// A new (B, V) tensor whose row b is f(row b as doubles).
template <class RowFn>
Tensor map_rows(const Tensor& logits, RowFn f) {
  const int64_t B = logits.size(0), V = logits.size(1);
  Tensor out = empty(logits.shape());
  for (int64_t b = 0; b < B; ++b) {
    const std::vector<double> r = f(row(logits, b));
    for (int64_t v = 0; v < V; ++v) out.data()[b * V + v] = real(r[v]);
  }
  return out;
}

// ---- the rules on one row of logits z (V), in double; -inf marks a removed token

// w_v = exp(z_v - max z): the unnormalised softmax (-inf -> 0).
std::vector<double> softmax_weights(const std::vector<double>& z) {
  const double m = *std::max_element(z.begin(), z.end());
  std::vector<double> w(z.size());
  for (size_t v = 0; v < z.size(); ++v) w[v] = std::exp(z[v] - m);
  return w;
}

// z < (the k-th largest z) -> -inf; k = 0 or k >= V: nothing.
void top_k_row(std::vector<double>& z, int64_t k) {
  if (k == 0 || k >= int64_t(z.size())) return;
  std::vector<double> sorted = z;
  std::nth_element(sorted.begin(), sorted.begin() + (k - 1), sorted.end(), std::greater<double>());
  const double cut = sorted[k - 1];
  for (double& x : z)
    if (x < cut) x = -kInf;
}

// Tokens less likely than q_(n), the last one the nucleus needs, -> -inf; p = 1: nothing.
void top_p_row(std::vector<double>& z, double p) {
  if (p == 1) return;
  const std::vector<double> w = softmax_weights(z);
  std::vector<double> sorted = w;
  std::sort(sorted.begin(), sorted.end(), std::greater<double>());
  // The total is summed in the running sum's order, so the last prefix equals it and the
  // loop always finds n: cum >= p * total.
  const double total = std::accumulate(sorted.begin(), sorted.end(), 0.0);
  double cum = 0, threshold = sorted.back();
  for (double s : sorted) {
    cum += s;
    if (cum >= p * total) {
      threshold = s;  // q_(n) (unnormalised): ties with it stay
      break;
    }
  }
  for (size_t v = 0; v < z.size(); ++v)
    if (w[v] < threshold) z[v] = -kInf;
}

// The index whose cumulative weight first passes u * total, u in [0, 1); a rounding
// shortfall at the end falls back to the last token with any weight.
int64_t draw_row(const std::vector<double>& w, double u) {
  const double target = u * std::accumulate(w.begin(), w.end(), 0.0);
  int64_t pick = -1;
  double cum = 0;
  for (size_t v = 0; v < w.size(); ++v) {
    if (w[v] == 0) continue;
    pick = int64_t(v);
    cum += w[v];
    if (cum > target) break;
  }
  return pick;
}

// sample()'s chain on one row, temperature > 0: (z - max z) / t, then top-k, then top-p.
// Subtracting the maximum first changes no probability and keeps a tiny temperature from
// overflowing the largest logit to +inf.
std::vector<double> filtered_row(std::vector<double> z, const SamplingOptions& o) {
  const double m = *std::max_element(z.begin(), z.end());
  for (double& x : z) x = (x - m) / o.temperature();
  top_k_row(z, o.top_k());
  top_p_row(z, o.top_p());
  return z;
}

void check_options(const char* op, const SamplingOptions& o) {
  HEED_CHECK(o.temperature() >= 0 && std::isfinite(o.temperature()), op,
             "temperature must be >= 0 and finite (0: greedy), got ", o.temperature());
  HEED_CHECK(o.top_k() >= 0, op, "top_k must be >= 0 (0: every token), got ", o.top_k());
  HEED_CHECK(o.top_p() > 0 && o.top_p() <= 1, op, "top_p must be in (0, 1] (1: every token), got ", o.top_p());
}

}  // namespace

IndexTensor greedy(const Tensor& logits) {
  const int64_t V = check_logits("greedy", logits, false), B = logits.size(0);
  std::vector<int64_t> out(B);
  for (int64_t b = 0; b < B; ++b) {
    const real* z = logits.data() + b * V;
    out[b] = std::max_element(z, z + V) - z;  // the first of equal maxima
  }
  return IndexTensor(out, {B});
}

Tensor apply_temperature(const Tensor& logits, double temperature) {
  check_logits("apply_temperature", logits, false);
  HEED_CHECK(temperature > 0 && std::isfinite(temperature), "apply_temperature",
             "temperature must be > 0 and finite, got ", temperature, " (greedy() is temperature 0)");
  return map_rows(logits, [&](std::vector<double> z) {
    for (double& x : z) x /= temperature;
    return z;
  });
}

Tensor top_k_filter(const Tensor& logits, int64_t k) {
  check_logits("top_k_filter", logits, false);
  HEED_CHECK(k >= 0, "top_k_filter", "k must be >= 0 (0: every token), got ", k);
  return map_rows(logits, [&](std::vector<double> z) {
    top_k_row(z, k);
    return z;
  });
}

Tensor top_p_filter(const Tensor& logits, double p) {
  check_logits("top_p_filter", logits, true);
  HEED_CHECK(p > 0 && p <= 1, "top_p_filter", "p must be in (0, 1] (1: every token), got ", p);
  return map_rows(logits, [&](std::vector<double> z) {
    top_p_row(z, p);
    return z;
  });
}

IndexTensor sample_categorical(const Tensor& logits) {
  check_logits("sample_categorical", logits, true);
  const int64_t B = logits.size(0);
  std::vector<int64_t> out(B);
  Draws draws;  // one uniform per row, rows in order
  for (int64_t b = 0; b < B; ++b) out[b] = draw_row(softmax_weights(row(logits, b)), draws.uniform());
  return IndexTensor(out, {B});
}

Tensor sampling_probabilities(const Tensor& logits, const SamplingOptions& o) {
  check_options("sampling_probabilities", o);
  check_logits("sampling_probabilities", logits, o.temperature() > 0);
  if (o.temperature() == 0) {
    const IndexTensor g = greedy(logits);
    Tensor one_hot = zeros(logits.shape());
    for (int64_t b = 0; b < logits.size(0); ++b) one_hot.data()[b * logits.size(1) + g[b]] = 1;
    return one_hot;
  }
  return map_rows(logits, [&](std::vector<double> z) {
    std::vector<double> w = softmax_weights(filtered_row(std::move(z), o));
    const double total = std::accumulate(w.begin(), w.end(), 0.0);
    for (double& x : w) x /= total;
    return w;
  });
}

IndexTensor sample(const Tensor& logits, const SamplingOptions& o) {
  check_options("sample", o);
  check_logits("sample", logits, o.temperature() > 0);
  if (o.temperature() == 0) return greedy(logits);
  const int64_t B = logits.size(0);
  std::vector<int64_t> out(B);
  Draws draws;  // one uniform per row, rows in order, as sample_categorical
  for (int64_t b = 0; b < B; ++b) out[b] = draw_row(softmax_weights(filtered_row(row(logits, b), o)), draws.uniform());
  return IndexTensor(out, {B});
}

}  // namespace heed::nn

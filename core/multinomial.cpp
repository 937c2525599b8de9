// multinomial.cpp - drawing category ids from rows of probabilities (multinomial.h has the
// method and the checks, each with PyTorch's message).
#include "multinomial.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "error.h"
#include "random.h"

namespace heed {

namespace {

// One row with replacement: the first c whose running sum passes u ~ U[0, total).
void draw_with_replacement(const real* p, int64_t C, int64_t n, Draws& d, int64_t* out) {
  std::vector<double> cdf(static_cast<size_t>(C));
  double run = 0;
  for (int64_t c = 0; c < C; ++c) cdf[c] = run += double(p[c]);
  int64_t last = C - 1;  // the last category of non-zero probability: where rounding lands
  while (last > 0 && p[last] == 0) --last;
  for (int64_t s = 0; s < n; ++s) {
    const double u = d.uniform() * run;
    const int64_t c = std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin();
    out[s] = std::min(c, last);
  }
}

// One row without replacement: the n largest keys p_c / E_c, E_c ~ Exp(1); a zero-probability
// category has key 0 and comes after every other, lower ids first.
void draw_without_replacement(const real* p, int64_t C, int64_t n, Draws& d, int64_t* out) {
  std::vector<double> key(static_cast<size_t>(C));
  for (int64_t c = 0; c < C; ++c) {
    const double e = -std::log1p(-d.uniform());  // Exp(1); 0 when u = 0, and p / 0 = inf wins
    key[c] = p[c] == 0 ? 0.0 : double(p[c]) / e;
  }
  std::vector<int64_t> ids(static_cast<size_t>(C));
  std::iota(ids.begin(), ids.end(), int64_t(0));
  std::partial_sort(ids.begin(), ids.begin() + n, ids.end(), [&](int64_t a, int64_t b) {
    return key[a] != key[b] ? key[a] > key[b] : a < b;
  });
  std::copy(ids.begin(), ids.begin() + n, out);
}

}  // namespace

IndexTensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement) {
  const char* op = "multinomial";
  HEED_CHECK(probs.dim() == 1 || probs.dim() == 2, op, "prob_dist must be 1 or 2 dim; got shape ",
             probs.shape());
  const int64_t C = probs.size(-1), rows = probs.dim() == 2 ? probs.size(0) : 1;
  HEED_CHECK(C > 0, op, "the number of categories must be positive; got shape ", probs.shape());
  HEED_CHECK(num_samples > 0, op, "cannot sample n_sample <= 0 samples (got ", num_samples, ")");
  HEED_CHECK(replacement || num_samples <= C, op, "cannot sample n_sample > prob_dist.size(-1) ",
             "samples without replacement (", num_samples, " > ", C, ")");
  const real* p = probs.data();
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (int64_t c = 0; c < C; ++c) {
      const real v = p[r * C + c];
      HEED_CHECK(std::isfinite(double(v)) && v >= 0, op, "probability tensor contains either `inf`, "
                 "`nan` or element < 0 (", v, " at row ", r, ", category ", c, ")");
      sum += double(v);
    }
    HEED_CHECK(sum > 0, op, "invalid multinomial distribution (sum of probabilities <= 0) in row ", r);
  }
  std::vector<int64_t> ids(size_t(rows * num_samples));
  Draws d;
  for (int64_t r = 0; r < rows; ++r) {
    if (replacement) draw_with_replacement(p + r * C, C, num_samples, d, ids.data() + r * num_samples);
    else draw_without_replacement(p + r * C, C, num_samples, d, ids.data() + r * num_samples);
  }
  return probs.dim() == 2 ? IndexTensor(std::move(ids), {rows, num_samples})
                          : IndexTensor(std::move(ids), {num_samples});
}

IndexTensor Tensor::multinomial(int64_t num_samples, bool replacement) const {
  return heed::multinomial(*this, num_samples, replacement);
}

}  // namespace heed

// alibi.cpp - ALiBi slopes (the reference code's get_slopes) and the bias tensor.
#include "alibi.h"

#include <cmath>
#include <cstdlib>
#include <vector>

#include "../../../core/error.h"

namespace heed {

// n a power of 2: start = 2^(-8/n), slopes start^1, start^2, ..., start^n.
static std::vector<double> slopes_power_of_2(int64_t n) {
  const double start = std::pow(2.0, -8.0 / double(n));
  std::vector<double> m(n);
  for (int64_t h = 0; h < n; ++h) m[h] = std::pow(start, double(h + 1));
  return m;
}

// The reference code (ofirpress/attention_with_linear_biases):
//   get_slopes(n) = get_slopes_power_of_2(c) + get_slopes(2c)[0::2][:n - c],  c = 2^floor(log2 n)
static std::vector<double> slopes(int64_t n) {
  int64_t c = 1;
  while (2 * c <= n) c *= 2;  // the largest power of 2 <= n
  std::vector<double> m = slopes_power_of_2(c);
  if (c == n) return m;
  const std::vector<double> finer = slopes_power_of_2(2 * c);
  for (int64_t h = 0; int64_t(m.size()) < n; h += 2) m.push_back(finer[h]);
  return m;
}

Tensor alibi_slopes(int64_t num_heads) {
  HEED_CHECK(num_heads >= 1, "alibi_slopes", "num_heads must be >= 1; got ", num_heads);
  const std::vector<double> m = slopes(num_heads);
  Tensor t = empty({num_heads});  // (H)
  for (int64_t h = 0; h < num_heads; ++h) t.data()[h] = real(m[h]);
  return t;
}

Tensor alibi_bias(int64_t num_heads, int64_t Tq, int64_t Tk, bool symmetric) {
  HEED_CHECK(num_heads >= 1 && Tq >= 0 && Tk >= 0, "alibi_bias", "need num_heads >= 1, Tq >= 0, "
             "Tk >= 0; got ", num_heads, ", ", Tq, ", ", Tk);
  const std::vector<double> m = slopes(num_heads);
  Tensor bias = empty({num_heads, Tq, Tk});  // (H, Tq, Tk)
  real* p = bias.data();
  for (int64_t h = 0; h < num_heads; ++h)
    for (int64_t i = 0; i < Tq; ++i)
      for (int64_t j = 0; j < Tk; ++j) {
        const int64_t dist = query_position(i, Tq, Tk) - j;  // query minus key position
        p[(h * Tq + i) * Tk + j] = real(-m[h] * double(symmetric ? std::llabs(dist) : dist));
      }
  return bias;
}

}  // namespace heed

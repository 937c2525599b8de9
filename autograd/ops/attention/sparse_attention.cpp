// sparse_attention.cpp - the pattern generators, and sparse attention as scaled dot-product
// attention whose mask includes the pattern.
#include "sparse_attention.h"

#include <functional>

#include "../../../core/error.h"
#include "../../engine/node.h"
#include "../arith.h"
#include "scaled_dot_product.h"
#include "sliding_window_attention.h"

namespace heed {

namespace {

// A (T, T) 0/1 tensor with S_ij = allowed(i, j), and j <= causal_last_key(i, T, T) when causal.
Tensor make_pattern(const char* op, int64_t T, bool causal,
                    const std::function<bool(int64_t, int64_t)>& allowed) {
  HEED_CHECK(T >= 0, op, "T must be >= 0, got ", T);
  Tensor S = empty({T, T});
  real* p = S.data();
  for (int64_t i = 0; i < T; ++i)
    for (int64_t j = 0; j < T; ++j)
      *p++ = (!causal || j <= causal_last_key(i, T, T)) && allowed(i, j) ? real(1) : real(0);
  return S;
}

}  // namespace

// A(1) = { j : i - l <= j <= i },  A(2) = { j : (i - j) mod l = 0 },  j <= i
Tensor strided_pattern(int64_t T, int64_t l, bool causal) {
  HEED_CHECK(l >= 1, "strided_pattern", "stride must be >= 1, got ", l);
  return make_pattern("strided_pattern", T, causal, [l](int64_t i, int64_t j) {
    const int64_t d = i > j ? i - j : j - i;
    return d <= l || d % l == 0;
  });
}

// A(1) = { j : floor(j / l) = floor(i / l) },  A(2) = { j : j mod l >= l - c },  j <= i
Tensor fixed_pattern(int64_t T, int64_t l, int64_t c, bool causal) {
  HEED_CHECK(l >= 1, "fixed_pattern", "block must be >= 1, got ", l);
  HEED_CHECK(c >= 0 && c <= l, "fixed_pattern", "c (summary positions per block) must be in [0, ",
             l, "], got ", c);
  return make_pattern("fixed_pattern", T, causal, [l, c](int64_t i, int64_t j) {
    return j / l == i / l || j % l >= l - c;
  });
}

// { j : |i - j| <= w }  or, causal,  { j : i - w <= j <= i }
Tensor sliding_window_pattern(int64_t T, int64_t w, bool causal) {
  HEED_CHECK(w >= 0, "sliding_window_pattern", "window must be >= 0, got ", w);
  return make_pattern("sliding_window_pattern", T, false,  // in_window applies causal
                      [T, w, causal](int64_t i, int64_t j) { return in_window(i, j, T, w, causal); });
}

double pattern_density(const Tensor& pattern) {
  if (pattern.numel() == 0) return 0;
  int64_t n = 0;
  for (int64_t i = 0; i < pattern.numel(); ++i) n += pattern.data()[i] != 0;
  return double(n) / double(pattern.numel());
}

// c, alpha = SDPA(q, k, v) with mask = pattern * mask (and the key padding, causal flag)
Attended sparse_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& pattern,
                          const AttentionMask& mask, std::optional<double> scale, double dropout_p,
                          bool training) {
  HEED_CHECK(pattern.defined(), "sparse_attention", "the pattern is undefined");
  for (int64_t i = 0; i < pattern.numel(); ++i)
    HEED_CHECK(pattern.data()[i] == 0 || pattern.data()[i] == 1, "sparse_attention",
               "the pattern must hold only 0 and 1 (1 = may attend), found ", pattern.data()[i]);
  check_mask_values("sparse_attention", "mask", mask.mask());  // before it is mixed with the pattern
  AttentionMask m = mask;
  m.mask(mask.mask().defined() ? mul(mask.mask().detach(), pattern.detach()) : pattern.detach());
  Attended a = scaled_dot_product_attention(q, k, v, m, {}, dropout_p, training, scale);
  a.context = named("sparse_attention", a.context, {q, k, v});
  return a;
}

}  // namespace heed

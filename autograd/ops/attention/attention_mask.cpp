// attention_mask.cpp - the mask checks, the causal triangle and the combined visibility.
#include "attention_mask.h"

#include <cmath>
#include <limits>

#include "../../../core/error.h"
#include "../arith.h"
#include "../compare.h"

namespace heed {

namespace {

constexpr real kInf = std::numeric_limits<real>::infinity();

// The flat index of the first element of `t` for which bad(value) holds, or -1.
template <class Bad>
int64_t first_bad(const Tensor& t, Bad bad) {
  const real* p = t.data();
  for (int64_t i = 0, n = t.numel(); i < n; ++i)
    if (bad(p[i])) return i;
  return -1;
}

}  // namespace

// Row r of the chunk is query i = first_row + r; tril keeps j <= r + k, so k is
// causal_last_key(first_row, Tq, Tk) (the rule is a diagonal: one offset serves every row).
Tensor causal_mask(int64_t Tq, int64_t Tk, int64_t first_row, int64_t rows) {
  HEED_CHECK(Tq >= 0 && Tk >= 0, "causal_mask", "Tq = ", Tq, " and Tk = ", Tk, " must be >= 0");
  HEED_CHECK(first_row >= 0 && first_row <= Tq, "causal_mask", "first_row ", first_row,
             " is outside the Tq = ", Tq, " query rows");
  if (rows == -1) rows = Tq - first_row;
  HEED_CHECK(rows >= 0 && rows <= Tq - first_row, "causal_mask", "rows ", rows, " from first_row ",
             first_row, " go past the Tq = ", Tq, " query rows (rows = -1: all the rest)");
  return tril(ones({rows, Tk}), causal_last_key(first_row, Tq, Tk));
}

void check_mask_values(const char* op, const char* what, const Tensor& m) {
  if (!m.defined()) return;
  const int64_t i = first_bad(m, [](real x) { return !(x == 0 || x == 1); });
  if (i < 0) return;
  fail(op, what, " ", m.shape(), " holds ", m.data()[i], " at flat index ", i,
       "; heed's masks are 0/1 with 1 = may attend (the opposite of PyTorch's True = ignore). "
       "From PyTorch: a key_padding_mask or boolean attn_mask (True = ignore) -> pass 1 - mask; "
       "a float attn_mask of 0/-inf (e.g. generate_square_subsequent_mask) -> pass it as "
       "attn_bias instead, or use AttentionMask().causal()");
}

void check_mask(const char* op, const Shape& s, const AttentionMask& m) {
  const int r = s.size();
  HEED_CHECK(r >= 2, op, "scores must be at least (Tq, Tk), got ", s);
  if (m.key_padding().defined()) {
    const Tensor& kp = m.key_padding();
    HEED_CHECK(kp.dim() == 2 && r >= 3 && kp.size(0) == s[0] && kp.size(1) == s[r - 1], op,
               "key padding mask ", kp.shape(), " does not match scores ", s, " (expected (",
               s[0], ",", s[r - 1], "))");
    check_mask_values(op, "key padding mask", kp);
  }
  if (m.mask().defined()) {
    HEED_CHECK(is_broadcastable_to(m.mask().shape(), s), op, "mask ", m.mask().shape(),
               " does not broadcast to scores ", s);
    check_mask_values(op, "mask", m.mask());
  }
}

void check_bias(const char* op, const Shape& s, const Tensor& bias) {
  if (!bias.defined()) return;
  HEED_CHECK(is_broadcastable_to(bias.shape(), s), op, "attn_bias ", bias.shape(),
             " does not broadcast to scores ", s);
  const int64_t i = first_bad(bias, [](real x) { return std::isnan(x) || x == kInf; });
  HEED_CHECK(i < 0, op, "attn_bias ", bias.shape(), " holds ", bias.data()[i], " at flat index ",
             i, "; an additive bias may be any finite value or -inf (hides the key), never NaN "
             "or +inf");
}

Tensor visible(const char* op, const Shape& s, const AttentionMask& m) {
  check_mask(op, s, m);
  const int r = s.size();
  const int64_t Tq = s[r - 2], Tk = s[r - 1];
  Tensor vis;
  if (m.key_padding().defined()) {  // (B, Tk) -> (B, 1.., 1, Tk)
    Shape ks = s;
    for (int i = 1; i < r - 1; ++i) ks[i] = 1;
    vis = m.key_padding().reshape(ks).detach();
  }
  if (m.mask().defined()) vis = vis.defined() ? mul(vis, m.mask().detach()) : m.mask().detach();
  if (m.is_causal()) {
    const Tensor c = causal_mask(Tq, Tk);  // (Tq, Tk)
    vis = vis.defined() ? mul(vis, c) : c;
  }
  return vis;
}

}  // namespace heed

// sparse_attention.h - attention restricted to a fixed 0/1 pattern of (query, key) pairs,
// and generators for the patterns of Child et al. 2019, "Generating Long Sequences with
// Sparse Transformers" (section 4.2), plus the sliding window.
//
// In the README's notation, with S the pattern (S_ij = 1: query i may attend key j):
//   e_ij     = q_i . k_j / sqrt(d_k)                        (scale overridable)
//   alpha_ij = exp(e_ij) / sum_{j' : S_ij' = 1} exp(e_ij')   over the pattern only
//   c_i      = sum_j alpha_ij v_j
// It IS scaled dot-product attention with AttentionMask.mask = S (combined with any other
// mask, key padding and causal): the pattern goes through the one masking path of the core
// (layers/attention_core.h), 1 = may attend.
//
// The patterns (T x T, 0/1; i the query, j the key, l the stride or block length):
//   strided_pattern(T, l)       A(1) = { j : i - l <= j <= i }       the previous l positions
//                               A(2) = { j : (i - j) mod l = 0 }      every l-th position back
//                               S = A(1) u A(2), with j <= i; causal = false drops j <= i
//                               and makes both sets symmetric (|i - j| <= l, |i - j| mod l = 0)
//   fixed_pattern(T, l, c)      A(1) = { j : floor(j / l) = floor(i / l) }   the own block
//                               A(2) = { j : j mod l >= l - c }       the last c of every block
//                               S = A(1) u A(2), with j <= i unless causal = false
//   sliding_window_pattern(T, w, causal)   { j : |i - j| <= w } or { j : i - w <= j <= i }
// Every pattern holds its diagonal (S_ii = 1), causal or not, so no query is left with no
// key: a row comes out all-masked (zero context, zero gradient) only when other masks
// (key padding, or causal with Tq != Tk) remove what the pattern allowed.
//
// Cost: this composed form forms all Tq x Tk scores and masks them, so it costs what full
// attention costs - time O(B H Tq Tk (Dk + Dv)), memory O(B H Tq Tk) - plus the O(Tq Tk)
// pattern; it is the reference that a block-sparse kernel (computing only the ~T sqrt(T)
// allowed scores of a strided pattern with l ~ sqrt(T)) would be tested against. The
// banded sliding window (layers/sliding_window_attention.h) is such a kernel.
//
// Example:
//   Tensor S = nn::strided_pattern(T, 8);                       // (T, T)
//   nn::Attended a = nn::sparse_attention(q, k, v, S);          // a.context (B, [H,] T, Dv)
//   auto sa = std::make_shared<nn::SparseAttention>(nn::SparseAttentionOptions(S).dropout(0.1));
#pragma once
#include <cstdint>
#include <optional>

#include "attention_core.h"
#include "module.h"

namespace heed::nn {

Tensor strided_pattern(int64_t T, int64_t stride, bool causal = true);
Tensor fixed_pattern(int64_t T, int64_t block, int64_t c, bool causal = true);
Tensor sliding_window_pattern(int64_t T, int64_t w, bool causal);

// q (B, [H,] Tq, Dk), k (B, [H,] Tk, Dk), v (B, [H,] Tk, Dv), pattern (Tq, Tk) or any
// 0/1 tensor broadcastable to the scores -> context and weights (B, [H,] Tq, Tk).
// `mask` is combined with the pattern (a key is visible only where both allow it).
Attended sparse_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                          const Tensor& pattern, const AttentionMask& mask = {},
                          std::optional<double> scale = {}, double dropout_p = 0,
                          bool training = false);

// The fraction of 1s in a pattern: what a block-sparse kernel would compute.
double pattern_density(const Tensor& pattern);

class SparseAttentionOptions {
 public:
  explicit SparseAttentionOptions(const Tensor& pattern) : pattern_(pattern) {}
  SparseAttentionOptions& pattern(const Tensor& p) { pattern_ = p; return *this; }
  SparseAttentionOptions& causal(bool on) { causal_ = on; return *this; }  // always also causal
  SparseAttentionOptions& dropout(double p) { dropout_ = p; return *this; }  // on alpha
  SparseAttentionOptions& scale(double s) { scale_ = s; return *this; }  // replaces 1/sqrt(Dk)
  const Tensor& pattern() const { return pattern_; }
  bool causal() const { return causal_; }
  double dropout() const { return dropout_; }
  std::optional<double> scale() const { return scale_; }

 private:
  Tensor pattern_;
  bool causal_ = false;
  double dropout_ = 0;
  std::optional<double> scale_;
};

// No parameters: the pattern (an option, not a trained or saved tensor), the options and
// the train/eval switch for dropout.
class SparseAttention : public Module {
 public:
  explicit SparseAttention(const SparseAttentionOptions& options);
  Attended forward(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionMask& mask = {});
  std::string repr() const override;  // SparseAttention(pattern=(64, 64), density=0.2, ...)

  SparseAttentionOptions options;
};

}  // namespace heed::nn

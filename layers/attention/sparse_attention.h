// sparse_attention.h - nn::SparseAttention, the module around nn::sparse_attention
// (autograd/attention/sparse_attention_op.h: the patterns of Child et al. 2019 and the masks are
// described there). No parameters: the pattern (an option, not a trained or saved
// tensor), the options and the train/eval switch for dropout.
// Built from a block layout (autograd/attention/block_layout.h) instead of a pattern, it runs the
// block-sparse kernel, which computes only the kept blocks and returns no weights (with
// dropout at work in training, the dense form with layout.pattern(): the kernel has none).
//
// Example:
//   auto sa = std::make_shared<nn::SparseAttention>(
//       nn::SparseAttentionOptions(nn::strided_pattern(T, 8)).dropout(0.1));
//   nn::Attended a = sa->forward(q, k, v);   // a.context (B, [H,] T, Dv)
//   nn::SparseAttention fast(nn::SparseAttentionOptions(nn::strided_layout(T, 64, 7, 16)));
#pragma once
#include <cstdint>
#include <optional>

#include "ops.h"
#include "../module.h"

namespace heed::nn {

class SparseAttentionOptions {
 public:
  explicit SparseAttentionOptions(const Tensor& pattern) : pattern_(pattern) {}
  explicit SparseAttentionOptions(const BlockLayout& layout) : layout_(layout) {}
  SparseAttentionOptions& pattern(const Tensor& p) { pattern_ = p; return *this; }
  SparseAttentionOptions& layout(const BlockLayout& l) { layout_ = l; return *this; }  // wins
  SparseAttentionOptions& causal(bool on) { causal_ = on; return *this; }  // always also causal
  SparseAttentionOptions& dropout(double p) { dropout_ = p; return *this; }  // on alpha
  SparseAttentionOptions& scale(double s) { scale_ = s; return *this; }  // replaces 1/sqrt(Dk)
  const Tensor& pattern() const { return pattern_; }
  const BlockLayout& layout() const { return layout_; }
  bool causal() const { return causal_; }
  double dropout() const { return dropout_; }
  std::optional<double> scale() const { return scale_; }

 private:
  Tensor pattern_;
  BlockLayout layout_;
  bool causal_ = false;
  double dropout_ = 0;
  std::optional<double> scale_;
};

class SparseAttention : public Module {
 public:
  explicit SparseAttention(const SparseAttentionOptions& options);
  Attended forward(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionMask& mask = {});
  // SparseAttention(pattern=(64, 64), density=0.2, ...) or (layout=(4, 4), block=16, ...)
  std::string repr() const override;

  SparseAttentionOptions options;
};

}  // namespace heed::nn

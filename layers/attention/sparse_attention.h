// sparse_attention.h - nn::SparseAttention, the module around nn::sparse_attention
// (autograd/ops/attention/sparse_attention.h: the patterns of Child et al. 2019 and the masks are
// described there). No parameters: the pattern (an option, not a trained or saved
// tensor), the options and the train/eval switch for dropout.
// Built from a block layout (autograd/ops/attention/block_layout.h) instead of a pattern, it runs the
// block-sparse kernel, which computes only the kept blocks and returns no weights (with
// dropout at work in training, the dense form with layout.pattern(): the kernel has none).
//
// Example:
//   auto sa = nn::SparseAttention(
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
  HEED_ARG(Tensor, pattern);
  HEED_ARG(BlockLayout, layout);           // wins over pattern
  HEED_ARG(bool, causal) = false;          // always also causal
  HEED_ARG(double, dropout) = 0;           // on alpha
  HEED_ARG(std::optional<double>, scale);  // replaces 1/sqrt(Dk)
};

class SparseAttentionImpl : public Cloneable<SparseAttentionImpl> {
 public:
  explicit SparseAttentionImpl(const SparseAttentionOptions& options);
  Attended forward(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionMask& mask = {});
  // SparseAttention(pattern=(64, 64), density=0.2, ...) or (layout=(4, 4), block=16, ...)
  std::string repr() const override;

  SparseAttentionOptions options;
};
HEED_MODULE(SparseAttention);

}  // namespace heed::nn

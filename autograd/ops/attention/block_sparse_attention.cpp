// block_sparse_attention.cpp - flash attention's tiles restricted to a block layout (the walk
// over kept blocks lives with the tiles, in autograd/ops/attention/flash_attention.cpp), and its reference.
#include "block_sparse_attention.h"

#include "../../../core/error.h"

namespace heed {

Tensor block_sparse_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                              const BlockLayout& layout, const AttentionMask& mask,
                              std::optional<double> scale, FlashBackward backward) {
  HEED_CHECK(layout.defined(), "block_sparse_attention", "the block layout is undefined");
  return detail::flash_attention_named("block_sparse_attention", q, k, v, mask, scale,
                                       FlashOptions().blocks(layout).backward(backward));
}

Tensor block_sparse_attention_composed(const Tensor& q, const Tensor& k, const Tensor& v,
                                       const BlockLayout& layout,
                                       const AttentionMask& mask, std::optional<double> scale) {
  HEED_CHECK(layout.defined(), "block_sparse_attention_composed", "the block layout is undefined");
  return sparse_attention(q, k, v, layout.pattern(), mask, scale).context;
}

// c = block_sparse_attention(q, k, v, layout), or the dense form when dropout acts
Attended sparse_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                          const BlockLayout& layout, const AttentionMask& mask,
                          std::optional<double> scale, double dropout_p, bool training) {
  HEED_CHECK(layout.defined(), "sparse_attention", "the block layout is undefined");
  if (dropout_p > 0 && training)
    return sparse_attention(q, k, v, layout.pattern(), mask, scale, dropout_p, training);
  return {block_sparse_attention(q, k, v, layout, mask, scale), Tensor()};
}

}  // namespace heed

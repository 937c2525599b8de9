// block_sparse_attention.cpp - flash attention's tiles restricted to a block layout (the walk
// over kept blocks lives with the tiles, in autograd/attention/flash_attention.cpp), and its reference.
#include "block_sparse_attention.h"

#include "../../core/error.h"
#include "sparse_attention_op.h"

namespace heed {

Tensor block_sparse_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                              const nn::BlockLayout& layout, const nn::AttentionMask& mask,
                              std::optional<double> scale, FlashBackward backward) {
  HEED_CHECK(layout.defined(), "block_sparse_attention", "the block layout is undefined");
  return detail::flash_attention_named("block_sparse_attention", q, k, v, mask, scale,
                                       FlashOptions().blocks(layout).backward(backward));
}

Tensor block_sparse_attention_composed(const Tensor& q, const Tensor& k, const Tensor& v,
                                       const nn::BlockLayout& layout,
                                       const nn::AttentionMask& mask, std::optional<double> scale) {
  HEED_CHECK(layout.defined(), "block_sparse_attention_composed", "the block layout is undefined");
  return nn::sparse_attention(q, k, v, layout.pattern(), mask, scale).context;
}

}  // namespace heed

// chunked_attention.h - nn::ChunkedAttention, the module around nn::chunked_attention
// (autograd/ops/attention/chunked_attention.h: the equation, shapes, masks and memory are described
// there). No parameters: the options and the train/eval switch for dropout.
//
// Example:
//   auto ca = nn::ChunkedAttention(
//       nn::ChunkedAttentionOptions(256).causal(true).recompute(true));
//   Tensor c = ca->forward(q, k, v);   // (B, [H,] Tq, Dv)
#pragma once
#include <cstdint>
#include <optional>

#include "ops.h"
#include "../module.h"

namespace heed::nn {

class ChunkedAttentionOptions {
 public:
  explicit ChunkedAttentionOptions(int64_t chunk_size) : chunk_size_(chunk_size) {}
  HEED_ARG(int64_t, chunk_size);               // C
  HEED_ARG(bool, causal) = false;              // always causal
  HEED_ARG(double, dropout) = 0;               // on alpha
  HEED_ARG(std::optional<double>, scale);      // replaces 1/sqrt(Dk)
  HEED_ARG(bool, recompute) = false;           // checkpoint chunks
};

class ChunkedAttentionImpl : public Cloneable<ChunkedAttentionImpl> {
 public:
  explicit ChunkedAttentionImpl(const ChunkedAttentionOptions& options);
  // The options' causal flag is added to `mask`; dropout applies while training.
  Tensor forward(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionMask& mask = {});
  std::string repr() const override;  // ChunkedAttention(chunk_size=256, causal=True, ...)

  ChunkedAttentionOptions options;
};
HEED_MODULE(ChunkedAttention);

}  // namespace heed::nn

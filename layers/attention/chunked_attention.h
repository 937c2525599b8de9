// chunked_attention.h - nn::ChunkedAttention, the module around nn::chunked_attention
// (autograd/attention/chunked_attention_op.h: the equation, shapes, masks and memory are described
// there). No parameters: the options and the train/eval switch for dropout.
//
// Example:
//   auto ca = std::make_shared<nn::ChunkedAttention>(
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
  ChunkedAttentionOptions& chunk_size(int64_t c) { chunk_size_ = c; return *this; }  // C
  ChunkedAttentionOptions& causal(bool on) { causal_ = on; return *this; }  // always causal
  ChunkedAttentionOptions& dropout(double p) { dropout_ = p; return *this; }  // on alpha
  ChunkedAttentionOptions& scale(double s) { scale_ = s; return *this; }  // replaces 1/sqrt(Dk)
  ChunkedAttentionOptions& recompute(bool on) { recompute_ = on; return *this; }  // checkpoint chunks
  int64_t chunk_size() const { return chunk_size_; }
  bool causal() const { return causal_; }
  double dropout() const { return dropout_; }
  std::optional<double> scale() const { return scale_; }
  bool recompute() const { return recompute_; }

 private:
  int64_t chunk_size_;
  bool causal_ = false;
  double dropout_ = 0;
  std::optional<double> scale_;
  bool recompute_ = false;
};

class ChunkedAttention : public Module {
 public:
  explicit ChunkedAttention(const ChunkedAttentionOptions& options);
  // The options' causal flag is added to `mask`; dropout applies while training.
  Tensor forward(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionMask& mask = {});
  std::string repr() const override;  // ChunkedAttention(chunk_size=256, causal=True, ...)

  ChunkedAttentionOptions options;
};

}  // namespace heed::nn

// sliding_window_attention.h - nn::SlidingWindowAttention, the module around
// nn::sliding_window_attention (autograd/attention/sliding_window_attention_op.h: the window, the band
// and the masks are described there). No parameters: the options and the train/eval switch
// for dropout.
//
// Example:
//   auto swa = std::make_shared<nn::SlidingWindowAttention>(
//       nn::SlidingWindowAttentionOptions(64).causal(true));
//   Tensor c = swa->forward(q, k, v);   // (B, [H,] T, Dv)
#pragma once
#include <cstdint>
#include <optional>

#include "ops.h"
#include "../module.h"

namespace heed::nn {

class SlidingWindowAttentionOptions {
 public:
  explicit SlidingWindowAttentionOptions(int64_t window) : window_(window) {}
  SlidingWindowAttentionOptions& window(int64_t w) { window_ = w; return *this; }
  SlidingWindowAttentionOptions& causal(bool on) { causal_ = on; return *this; }
  SlidingWindowAttentionOptions& dropout(double p) { dropout_ = p; return *this; }  // on alpha
  SlidingWindowAttentionOptions& scale(double s) { scale_ = s; return *this; }  // replaces 1/sqrt(Dk)
  SlidingWindowAttentionOptions& block(int64_t b) { block_ = b; return *this; }  // 0 = auto
  int64_t window() const { return window_; }
  bool causal() const { return causal_; }
  double dropout() const { return dropout_; }
  std::optional<double> scale() const { return scale_; }
  int64_t block() const { return block_; }

 private:
  int64_t window_;
  bool causal_ = false;
  double dropout_ = 0;
  std::optional<double> scale_;
  int64_t block_ = 0;
};

class SlidingWindowAttention : public Module {
 public:
  explicit SlidingWindowAttention(const SlidingWindowAttentionOptions& options);
  // The options' causal flag is added to `mask` (key padding only; see above).
  Tensor forward(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionMask& mask = {});
  std::string repr() const override;  // SlidingWindowAttention(window=64, causal=True, dropout=0.0)

  SlidingWindowAttentionOptions options;
};

}  // namespace heed::nn

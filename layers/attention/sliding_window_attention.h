// sliding_window_attention.h - nn::SlidingWindowAttention, the module around
// nn::sliding_window_attention (autograd/ops/attention/sliding_window_attention.h: the window, the band
// and the masks are described there). No parameters: the options and the train/eval switch
// for dropout.
//
// Example:
//   auto swa = nn::SlidingWindowAttention(
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
  HEED_ARG(int64_t, window);
  HEED_ARG(bool, causal) = false;
  HEED_ARG(double, dropout) = 0;           // on alpha
  HEED_ARG(std::optional<double>, scale);  // replaces 1/sqrt(Dk)
  HEED_ARG(int64_t, block) = 0;            // 0 = auto
};

class SlidingWindowAttentionImpl : public Cloneable<SlidingWindowAttentionImpl> {
 public:
  explicit SlidingWindowAttentionImpl(const SlidingWindowAttentionOptions& options);
  // The options' causal flag is added to `mask` (key padding only; see above).
  Tensor forward(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionMask& mask = {});
  std::string repr() const override;  // SlidingWindowAttention(window=64, causal=True, dropout=0.0)

  SlidingWindowAttentionOptions options;
};
HEED_MODULE(SlidingWindowAttention);

}  // namespace heed::nn

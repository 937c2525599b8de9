// chunked_attention.h - exact scaled dot-product attention computed C query rows at a
// time, so that only a (C, Tk) slab of scores exists at once (the "query chunking" of
// Rabe & Staats 2021, "Self-attention Does Not Need O(n^2) Memory", section 2, without
// their key chunking).
//
// In the README's notation, for the queries Q_n = rows [n C, n C + C) of Q:
//   Attention(Q_n, K, V) = softmax(Q_n K^T / sqrt(d_k)) V            (scale overridable)
//   e_tj     = q_t . k_j / sqrt(d_k),   alpha_tj = softmax_j(e_tj),   c_t = sum_j alpha_tj v_j
//   C_out    = [ Attention(Q_0, K, V); Attention(Q_1, K, V); ... ]   concatenated over t
// Every row's softmax runs over ALL its keys, so the result is exactly full attention;
// chunking only changes how many rows are in flight. Each chunk goes through
// scaled_dot_product_attention and so through the shared core (layers/attention_core.h):
// the mask convention (1 = may attend), key padding (B, Tk), a full mask (its rows are
// cut per chunk), causal with the last query aligned to the last key (the chunk's rows
// keep their global index i, so the chunk's mask is j <= i + Tk - Tq), and zero context
// for fully masked rows.
//
// Cost:
//   time    O(B H Tq Tk (Dk + Dv)), as full attention (same flops, in Tq / C matmuls)
//   memory  forward without gradient (NoGradGuard): O(B H C Tk) scores live at once.
//           With autograd recording, each chunk's weights alpha (and masked scores) are
//           kept for backward, so the total kept is O(B H Tq Tk) - the same as full
//           attention - unless recompute(true): each chunk then runs under heed::checkpoint
//           (autograd/recompute.h), keeps only its inputs, and backward re-runs one chunk
//           at a time: O(B H C Tk) score memory in backward too, for one extra forward.
//
// Example:
//   Tensor c = nn::chunked_attention(q, k, v, nn::AttentionMask().causal(), 256);
//   auto ca = std::make_shared<nn::ChunkedAttention>(
//       nn::ChunkedAttentionOptions(256).causal(true).recompute(true));
//   Tensor c2 = ca->forward(q, k, v);   // (B, [H,] Tq, Dv)
#pragma once
#include <cstdint>
#include <optional>

#include "attention_core.h"
#include "module.h"

namespace heed::nn {

// q (B, [H,] Tq, Dk), k (B, [H,] Tk, Dk), v (B, [H,] Tk, Dv) -> context (B, [H,] Tq, Dv).
// The weights are not returned (gathering them would undo the saving): use
// scaled_dot_product_attention to inspect them. heed::Error naming chunked_attention for
// chunk_size < 1 or a mask that does not fit; shape errors come from the chunks'
// scaled_dot_product_attention.
Tensor chunked_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                         const AttentionMask& mask, int64_t chunk_size,
                         std::optional<double> scale = {}, double dropout_p = 0,
                         bool training = false, bool recompute = false);

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

// No parameters: the options and the train/eval switch for dropout.
class ChunkedAttention : public Module {
 public:
  explicit ChunkedAttention(const ChunkedAttentionOptions& options);
  // The options' causal flag is added to `mask`; dropout applies while training.
  Tensor forward(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionMask& mask = {});
  std::string repr() const override;  // ChunkedAttention(chunk_size=256, causal=True, ...)

  ChunkedAttentionOptions options;
};

}  // namespace heed::nn

// local_attention.h - nn::LocalAttention, Luong's local attention: the decoder state s_t
// (Luong calls it h_t) attends only to a window of half-width D around an aligned source
// position p_t (Luong, Pham & Manning 2015, "Effective Approaches to Attention-based Neural
// Machine Translation", section 3.2). In the paper's notation:
//
//   e_tj     = score(s_t, h_j)           a Luong score (dot / general / concat), the `align` submodule
//   window   j visible iff |j - p_t| <= D, and not masked otherwise (key padding, mask, causal)
//   local-m  p_t = t (monotonic alignment), or positions given by the caller
//            alpha_tj = softmax_j(e_tj over the window)
//   local-p  p_t = S * sigmoid(v_p^T tanh(W_p s_t))                      W_p (P, Dq), v_p (P)
//            alpha_tj = softmax_j(e_tj over the window) * exp(-(j - p_t)^2 / (2 sigma^2)),  sigma = D/2
//   c_t      = sum_j alpha_tj h_j
//
// Letters: B batch, Tq queries, Tk keys, Dq query dim, Dk key dim, Dv value dim, P the
// width of the position predictor (predict_dim), D the half-width (window).
// Source positions j count from 0. S is the source length of each sequence: the number of
// real keys in its key_padding row when a key padding mask is given (so p_t stays inside
// that sentence, not the padded batch), else Tk. Since sigmoid is in (0, 1), p_t is in
// (0, S): as in the paper, p_t can sit up to one step past the last key, j = S - 1.
//
// The module computes e_tj (its `align` submodule) and p_t; the window, the Gaussian and
// the weighted sum are nn::local_attention (autograd/ops/attention/local_attention.h), built on attend().
// Gradients reach W_p and v_p through the Gaussian.
//
// Initialisation as PyTorch: W_p as an nn.Linear weight, U(+-1/sqrt(Dq)); v_p ~ U(+-1/sqrt(P)).
//
// Example:
//   auto attn = nn::LocalAttention(
//       nn::LocalAttentionOptions(512, 512).mode("local-p").window(10).score("general"));
//   auto [c, alpha] = attn->forward(s, h, h, nn::AttentionMask().key_padding(pad));  // s (B, 512)
#pragma once
#include <memory>
#include <string>

#include "ops.h"
#include "luong_attention.h"
#include "../module.h"

namespace heed::nn {

class LocalAttentionOptions {
 public:
  LocalAttentionOptions(int64_t query_dim, int64_t key_dim) : query_dim_(query_dim), key_dim_(key_dim) {}
  HEED_ARG(int64_t, query_dim);  // Dq
  HEED_ARG(int64_t, key_dim);    // Dk
  // "local-p" (the default: predicted position) or "local-m" (monotonic, p_t = t)
  HEED_ARG(std::string, mode) = "local-p";
  HEED_ARG(int64_t, window) = 10;  // D, half-width; Luong et al. use D = 10
  // the base Luong score: "general" (the default), "dot" (needs Dq == Dk) or "concat"
  HEED_ARG(std::string, score) = "general";
  HEED_ARG(int64_t, predict_dim) = 0;  // P; 0 = Dq (nn::LocalAttention's options hold P)
  HEED_ARG(double, dropout) = 0;       // on alpha
};

class LocalAttentionImpl : public Cloneable<LocalAttentionImpl> {
 public:
  explicit LocalAttentionImpl(const LocalAttentionOptions& options);

  // query (B, Dq) or (B, Tq, Dq), keys (B, Tk, Dk), values (B, Tk, Dv) or undefined (= keys).
  // positions: local-m only, p_t as (B, Tq) for a 3-D query or (B) for a 2-D one; by
  // default p_t = t for a 3-D query (a 2-D query, one decoder step, must give them).
  Attended forward(const Tensor& query, const Tensor& keys, const Tensor& values = Tensor(),
                   const AttentionMask& mask = {}, const Tensor& positions = Tensor());
  // The same with the keys already projected by precompute_keys; values must be given.
  Attended forward_projected(const Tensor& query, const Tensor& projected_keys, const Tensor& values,
                             const AttentionMask& mask = {}, const Tensor& positions = Tensor());
  Tensor precompute_keys(const Tensor& keys) { return align->precompute_keys(keys); }

  // local-p's p_t = S * sigmoid(v_p^T tanh(W_p s_t)): query (B, [Tq,] Dq) -> (B, [Tq]).
  // S from mask.key_padding() per sequence, else Tk (see above).
  Tensor predict_position(const Tensor& query, const AttentionMask& mask, int64_t Tk);

  // LocalAttention(query_dim=4, key_dim=6, mode='local-p', window=2, predict_dim=4, dropout=0.0)
  std::string repr() const override;
  void reset_parameters();

  LocalAttentionOptions options;
  LuongAttention align{nullptr};  // the base score e_tj
  Tensor W_p;  // local-p: (P, Dq)
  Tensor v_p;  // local-p: (P)
};
HEED_MODULE(LocalAttention);

}  // namespace heed::nn

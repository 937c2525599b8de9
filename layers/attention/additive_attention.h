// additive_attention.h - nn::AdditiveAttention, Bahdanau's additive attention
// (Bahdanau, Cho & Bengio 2015, "Neural Machine Translation by Jointly Learning to Align
// and Translate"), in the README's notation:
//
//   e_tj     = v^T tanh(W_s s_t + W_h h_j + b)      alignment score of decoder state s_t and key h_j
//   alpha_tj = exp(e_tj) / sum_k exp(e_tk)          (masked keys get 0: autograd/ops/attention/attend.h)
//   c_t      = sum_j alpha_tj h_j                    (or the values v_j, when they differ from the keys)
//
// (The paper writes the same score as v_a^T tanh(W_a s_{i-1} + U_a h_j).) Bahdanau scores with
// the decoder's previous state s_{t-1}, Luong with the current s_t: the module
// scores whichever state the caller passes as the query.
//
// Letters: B batch, Tq queries (decoder steps), Tk keys (source positions), Dq query dim,
// Dk key dim, Dv value dim, A attention dim. Parameters:
//   W_s (A, Dq)   W_h (A, Dk)   b (A) (with bias(true), the default)   v (A)
// initialised as PyTorch: W_s, W_h and b as nn.Linear's (U(+-1/sqrt(fan_in))), v ~ U(+-1/sqrt(A)).
//
// The same score as it is usually written in PyTorch, with three nn.Linear layers
// (e.g. the PyTorch seq2seq tutorial's BahdanauAttention: Wa, Ua, Va):
//   query_layer  = nn.Linear(Dq, A)               W_s = query_layer.weight   (A, Dq)
//   key_layer    = nn.Linear(Dk, A, bias=False)   W_h = key_layer.weight     (A, Dk)
//   energy_layer = nn.Linear(A, 1, bias=False)    v   = energy_layer.weight[0]  (A)
//   scores = energy_layer(tanh(query_layer(s) + key_layer(h))).squeeze(-1)
// and b = query_layer.bias (A). When key_layer has a bias too, b = query_layer.bias +
// key_layer.bias (two constants added to the same sum are one); a bias in energy_layer
// adds the same constant to every score of a query, which the softmax cancels: drop it.
// v is stored 1-D (A), as the equation has it, and a heed checkpoint is loaded only into
// tensors of exactly the saved shape (optim/checkpoint_file.cpp refuses any mismatch; one
// parameter's exception would weaken that check for all). To bring in torch's (1, A)
// energy_layer.weight, copy it: attn->v.copy_(w) (copy_ needs only the same number of
// elements; under NoGradGuard, as for any parameter). tests/test_scorers.cpp does this.
//
// The score is the only part written here; masking, softmax, dropout and the weighted sum
// are attend()'s (autograd/ops/attention/attend.h), shared by every variant.
//
// The score is one fused op (autograd/ops/attention/additive_score.h). The (B, Tq, Tk, A) tanh activations
// it keeps for backward make it the expensive scorer next to the multiplicative ones
// (layers/attention/luong_attention.h); costs: the README's table.
//
// The encoder side W_h h_j does not depend on the decoder step t, so a decoder computes it
// once per source sentence and reuses it at every step:
//   Tensor hp = attn->precompute_keys(h);          // W_h h, (B, Tk, A), once per sentence
//   for (int64_t t = 0; t < T_out; ++t) {          // dec: an nn::LSTMCell, y_emb[t] (B, E)
//     auto [c, alpha] = attn->forward_projected(s, hp, h, nn::AttentionMask().key_padding(pad));
//     std::tie(s, cell) = dec->forward(cat({y_emb[t], c}, -1), std::make_tuple(s, cell));
//   }                                              // s (B, Dq), c (B, Dk), alpha (B, Tk)
// forward(query, keys, ...) is exactly forward_projected(query, precompute_keys(keys), ...).
//
// Example:
//   auto attn = nn::AdditiveAttention(nn::AdditiveAttentionOptions(256, 512, 128));
//   auto [c, alpha] = attn->forward(s, h, h, nn::AttentionMask().key_padding(pad));
//   // s (B, 256), h (B, Tk, 512), pad (B, Tk) -> c (B, 512), alpha (B, Tk)
//
// Input conventions (2-D or 3-D query, values defaulting to the keys, masks) are every
// scorer module's: layers/attention/scorer.h.
#pragma once
#include <string>

#include "../module.h"
#include "scorer.h"

namespace heed::nn {

class AdditiveAttentionOptions {
 public:
  AdditiveAttentionOptions(int64_t query_dim, int64_t key_dim, int64_t attn_dim)
      : query_dim_(query_dim), key_dim_(key_dim), attn_dim_(attn_dim) {}
  HEED_ARG(int64_t, query_dim);   // Dq
  HEED_ARG(int64_t, key_dim);     // Dk
  HEED_ARG(int64_t, attn_dim);    // A
  HEED_ARG(bool, bias) = true;    // b
  HEED_ARG(double, dropout) = 0;  // on alpha
};

class AdditiveAttentionImpl : public Cloneable<AdditiveAttentionImpl> {
 public:
  explicit AdditiveAttentionImpl(const AdditiveAttentionOptions& options);

  // query (B, Dq) or (B, Tq, Dq), keys (B, Tk, Dk), values (B, Tk, Dv) or undefined (= keys).
  Attended forward(const Tensor& query, const Tensor& keys, const Tensor& values = Tensor(),
                   const AttentionMask& mask = {});
  // The same with the keys already projected by precompute_keys; values must be given.
  Attended forward_projected(const Tensor& query, const Tensor& projected_keys,
                             const Tensor& values, const AttentionMask& mask = {});
  // W_h h: keys (B, Tk, Dk) -> (B, Tk, A).
  Tensor precompute_keys(const Tensor& keys);
  int64_t projected_dim() const { return options.attn_dim(); }  // A
  // e_tj: query (B, Tq, Dq), projected keys (B, Tk, A) -> scores (B, Tq, Tk), unmasked.
  Tensor score(const Tensor& query, const Tensor& projected_keys);

  // AdditiveAttention(query_dim=256, key_dim=512, attn_dim=128, bias=True, dropout=0.0)
  std::string repr() const override;
  void reset_parameters();

  AdditiveAttentionOptions options;
  Tensor W_s;  // (A, Dq)
  Tensor W_h;  // (A, Dk)
  Tensor b;    // (A), undefined without bias
  Tensor v;    // (A)
};
HEED_MODULE(AdditiveAttention);

}  // namespace heed::nn

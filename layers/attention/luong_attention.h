// luong_attention.h - nn::LuongAttention, Luong's multiplicative ("global") attention with
// the dot, general and concat scores, and nn::LuongCombine, his attentional hidden state
// (Luong, Pham & Manning 2015, "Effective Approaches to Attention-based Neural Machine
// Translation"). In the paper's notation:
//
//   dot      e_tj = s_t^T h_j                        (needs Dq == Dk; no parameters)
//   general  e_tj = s_t^T W_a h_j                    W_a (Dq, Dk)
//            rank r > 0: W_a = Q^T K                  Q (r, Dq), K (r, Dk): e_tj = (Q s_t)^T (K h_j)
//   concat   e_tj = v_a^T tanh(W_a [s_t; h_j])       W_a (A, Dq + Dk), v_a (A)
//   then     alpha_tj = softmax_j(e_tj),  c_t = sum_j alpha_tj h_j   (autograd/ops/attention/attend.h)
//   combine  h~_t = tanh(W_c [c_t; s_t])             W_c (Do, Dv + Dq)        (LuongCombine)
//
// Letters: B batch, Tq queries, Tk keys, Dq query dim, Dk key dim, Dv value dim, A attention
// dim, r rank, Do output dim. Input conventions (2-D or 3-D query, values defaulting to the
// keys, masks) are every scorer's: layers/attention/scorer.h.
//
// Low rank (M = Q^T K, a factored bilinear form): the full W_a has Dq * Dk parameters, the factored one
// r * (Dq + Dk). With Dq = Dk = d = 512 and r = d_Q = 64:
//   full 512 * 512 = 262,144    factored 64 * (512 + 512) = 65,536    (4x fewer)
// and the scores cost O(B (Tq Dq + Tk Dk) r + B Tq Tk r) instead of O(B Tk Dq Dk + B Tq Tk Dq).
//
// Every score is "project the keys, then compare with the (projected) query", so the key
// side can be computed once per source sentence (precompute_keys, as for AdditiveAttention):
//   dot: h_j itself   general: W_a h_j (B, Tk, Dq)   rank r: K h_j (B, Tk, r)
//   concat: W_a[:, Dq:] h_j (B, Tk, A), since W_a [s; h] = W_a[:, :Dq] s + W_a[:, Dq:] h
// concat is computed in that split form: the same number, without building [s_t; h_j] for
// every pair (the PyTorch golden, tests/golden/gen_scorers.py, builds it literally).
//
// Cost (time; memory kept for backward):
//   dot      O(B Tq Tk Dk);                      O(B Tq Tk) scores and weights
//   general  O(B Tk Dq Dk + B Tq Tk Dq);         O(B Tk Dq + B Tq Tk)
//   concat   O(B (Tq Dq + Tk Dk) A + B Tq Tk A); O(B Tq Tk A) tanh activations, like additive
//            (the same fused score, autograd/ops/attention/additive_score.h)
//   combine  O(B Tq (Dv + Dq) Do);               O(B Tq (Dv + Dq + Do))
// Initialisation as PyTorch: each W (and Q, K) as an nn.Linear weight, U(+-1/sqrt(fan_in));
// v_a ~ U(+-1/sqrt(A)).
//
// Example:
//   auto attn = nn::LuongAttention(nn::LuongAttentionOptions(512, 512).score("general"));
//   auto comb = nn::LuongCombine(nn::LuongCombineOptions(512, 512, 512));
//   auto [c, alpha] = attn->forward(s, h);  Tensor h_tilde = comb->forward(c, s);  // (B, 512)
#pragma once
#include <string>

#include "../module.h"
#include "scorer.h"

namespace heed::nn {

namespace detail {
struct LuongScore;  // one row of the score table (luong_attention.cpp)
}  // namespace detail

class LuongAttentionOptions {
 public:
  LuongAttentionOptions(int64_t query_dim, int64_t key_dim) : query_dim_(query_dim), key_dim_(key_dim) {}
  HEED_ARG(int64_t, query_dim);  // Dq
  HEED_ARG(int64_t, key_dim);    // Dk
  // "dot", "general" (the default) or "concat"
  HEED_ARG(std::string, score) = "general";
  HEED_ARG(int64_t, rank) = 0;      // general only; 0 = full W_a
  HEED_ARG(int64_t, attn_dim) = 0;  // concat only; 0 = Dq (nn::LuongAttention's options hold Dq)
  HEED_ARG(double, dropout) = 0;    // on alpha
};

class LuongAttentionImpl : public Cloneable<LuongAttentionImpl> {
 public:
  explicit LuongAttentionImpl(const LuongAttentionOptions& options);

  // query (B, Dq) or (B, Tq, Dq), keys (B, Tk, Dk), values (B, Tk, Dv) or undefined (= keys).
  Attended forward(const Tensor& query, const Tensor& keys, const Tensor& values = Tensor(),
                   const AttentionMask& mask = {});
  // The same with the keys already projected by precompute_keys; values must be given.
  Attended forward_projected(const Tensor& query, const Tensor& projected_keys,
                             const Tensor& values, const AttentionMask& mask = {});
  // The key side of the score: keys (B, Tk, Dk) -> (B, Tk, P), P = projected_dim().
  Tensor precompute_keys(const Tensor& keys);
  int64_t projected_dim() const;  // dot: Dk, general: Dq (rank r: r), concat: A
  // e_tj: query (B, Tq, Dq), projected keys (B, Tk, P) -> scores (B, Tq, Tk), unmasked.
  Tensor score(const Tensor& query, const Tensor& projected_keys);

  // LuongAttention(query_dim=4, key_dim=6, score='general', rank=2, dropout=0.0)
  std::string repr() const override;
  void reset_parameters();

  LuongAttentionOptions options;
  Tensor W_a;  // general (Dq, Dk); concat (A, Dq + Dk); undefined for dot and low rank
  Tensor Q;    // general with rank r: (r, Dq)
  Tensor K;    // general with rank r: (r, Dk)
  Tensor v_a;  // concat: (A)

 private:
  // The row of the score table (luong_attention.cpp) the options chose at construction:
  // its check, parameters, key projection, formula and repr. A static row: copying (clone)
  // copies the pointer. Changing options.score() or rank() afterwards is not seen.
  const detail::LuongScore* kind_ = nullptr;
};
HEED_MODULE(LuongAttention);

class LuongCombineOptions {
 public:
  LuongCombineOptions(int64_t context_dim, int64_t query_dim, int64_t out_dim)
      : context_dim_(context_dim), query_dim_(query_dim), out_dim_(out_dim) {}
  HEED_ARG(int64_t, context_dim);  // Dv
  HEED_ARG(int64_t, query_dim);    // Dq
  HEED_ARG(int64_t, out_dim);      // Do
};

// h~_t = tanh(W_c [c_t; s_t]), Luong's attentional hidden state (no bias, as in the paper).
class LuongCombineImpl : public Cloneable<LuongCombineImpl> {
 public:
  explicit LuongCombineImpl(const LuongCombineOptions& options);

  // context (..., Dv), query (..., Dq) with the same leading dims -> (..., Do).
  Tensor forward(const Tensor& context, const Tensor& query);
  std::string repr() const override;  // LuongCombine(context_dim=6, query_dim=4, out_dim=5)
  void reset_parameters();

  LuongCombineOptions options;
  Tensor W_c;  // (Do, Dv + Dq)
};
HEED_MODULE(LuongCombine);

}  // namespace heed::nn

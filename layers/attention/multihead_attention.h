// multihead_attention.h - nn::MultiheadAttention (Vaswani et al. 2017), batch-first.
//
//   head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V)          Attention = softmax(Q K^T / sqrt(d_k)) V
//   MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W^O
//
// query (B, Tq, E), key (B, Tk, kdim), value (B, Tk, vdim) -> output (B, Tq, E), and the
// attention weights (B, Tq, Tk) averaged over heads, or (B, H, Tq, Tk) per head.
// Self-attention passes the same tensor three times; cross-attention passes the encoder
// output as key and value. E embed_dim, H num_heads, d_k / d_v the per-head widths
// (default E / H, which must then be whole).
//
// Masks follow heed's convention (autograd/ops/attention/attention_mask.h: 1 = may attend), NOT
// PyTorch's (True = ignore): torch's key_padding_mask is heed's key_padding == 0.
//   key_padding (B, Tk); mask broadcastable to (B, H, Tq, Tk), e.g. (Tq, Tk) or
//   (B, 1, Tq, Tk); a 3-D mask is read as (B, Tq, Tk), one per batch element (not
//   torch's (B*H, Tq, Tk)); causal aligns the last query with the last key. Mask values
//   other than 0 and 1 are a heed::Error (autograd/ops/attention/attention_mask.h says how to convert).
// attn_bias is torch's FLOAT attn_mask, added to every head's scores Q K^T / sqrt(d_k)
// before the mask and the softmax (-inf hides a key), differentiable: (Tq, Tk) for all,
// or 4-D (B or 1, H or 1, Tq, Tk), e.g. nn::alibi_bias(H, Tq, Tk).unsqueeze(0). A 3-D
// bias is refused: heed would read it as (B, Tq, Tk) and torch as (B*H, Tq, Tk), so say
// which with the 4-D form (torch's (B*H, Tq, Tk) is reshape({B, H, Tq, Tk})).
// A query that sees no key gets a zero context, so its output is out_proj.bias, and
// passes no gradient to the keys and values (never NaN, unlike torch).
//
// Parameters as torch.nn.MultiheadAttention, so its state_dict loads one to one:
//   in_proj_weight (3E, E), in_proj_bias (3E)     when kdim = vdim = E and d_k = d_v = E/H
//   q_proj_weight (H d_k, E), k_proj_weight (H d_k, kdim), v_proj_weight (H d_v, vdim)
//   and in_proj_bias (2 H d_k + H d_v)            otherwise (separate input dims or head dims)
//   out_proj.weight (E, H*d_v), out_proj.bias (E)
// Rows [0, H d_k) of the packed weight and bias project Q, the next H d_k rows K, the
// last H d_v rows V; within each block, head i owns rows [i d, (i+1) d).
// Initialised as torch: xavier_uniform_ on in_proj_weight (or q/k/v_proj_weight), zero
// in_proj_bias and out_proj.bias, out_proj.weight as nn::Linear (kaiming_uniform_).
//
// Self-attention (query, key, value one tensor) with need_weights = false projects with
// ONE GEMM over the packed (3E, E) weight and the flash kernel reads Q, K, V and writes
// the context in place (no head split or merge copies); cross-attention to one memory
// (key, value one tensor) projects Q and [K | V] with a GEMM each. The composed path
// (need_weights = true) is the readable reference, three GEMMs and explicit head copies.
//
// Cost: projections O(B (Tq E + Tk kdim) H d_k + B Tk vdim H d_v + B Tq H d_v E);
// attention O(B H Tq Tk (d_k + d_v)) time and O(B H Tq Tk) memory (scores and weights).
//
// Incremental decoding (layers/attention/kv_cache.h): forward(..., cache) with a KVCache keeps the
// keys and values already projected, so each step projects only the new tokens:
// The call says which (Attending::self or Attending::cross, after the cache):
//   self-attention (query, key, value the t new tokens, (B, t, E)): K and V of the t new tokens
//     are appended to the cache (KVCache(B, H, max_len, d_k, d_v), made by the caller), and
//     the t queries attend to all cached keys, the new ones included: Tk = size() after
//     the append. Masks are for (B, H, t, Tk): .causal() aligns the last query with the
//     last key, so a prompt of any length and then one token at a time give the rows of a
//     full causal forward; key_padding is (B, Tk).
//   cross-attention (key and value the memory (B, Ts, kdim)): the first call, with the
//     cache empty or undefined (then allocated for exactly Ts keys), projects the memory
//     and stores it; later calls project only the queries and attend to the stored keys
//     (key must still be the memory's shape; reset() the cache for a new memory).
// The flash path reads the cache's (B, H, max_len, d) storage in place; the composed path
// (need_weights, attn_bias, dropout) attends to keys()/values(), copies of the filled part.
// Decode under heed::NoGradGuard: the cache refuses tensors that require grad (kv_cache.h).
// A step of t tokens after n cached costs O(B t E (3E + ...)) projections and
// O(B H t (n + t) (d_k + d_v)) attention: O(n) per token, not O(n^2).
//
//   auto mha = nn::MultiheadAttention(nn::MultiheadAttentionOptions(512, 8));
//   auto [y, w] = mha->forward(x, x, x, nn::AttentionMask().key_padding(pad).causal());
//   auto [y2, w2] = mha->forward(x, x, x, nn::AttentionMask().causal(),
//                                nn::alibi_bias(8, T, T).unsqueeze(0));   // + ALiBi bias
//   nn::KVCache kv(B, 8, 1024, 64, 64);                    // decoding, under NoGradGuard
//   Tensor y_t = mha->forward(x_t, x_t, x_t, nn::AttentionMask().causal(), {}, false, true, &kv,
//                             nn::Attending::self).output;
#pragma once
#include <memory>

#include "ops.h"
#include "kv_cache.h"
#include "../linear.h"
#include "../module.h"

namespace heed::nn {

class MultiheadAttentionOptions {
 public:
  MultiheadAttentionOptions(int64_t embed_dim, int64_t num_heads)
      : embed_dim_(embed_dim), num_heads_(num_heads), kdim_(embed_dim), vdim_(embed_dim) {}
  HEED_ARG(int64_t, embed_dim);
  HEED_ARG(int64_t, num_heads);
  HEED_ARG(double, dropout) = 0;
  HEED_ARG(bool, bias) = true;
  // true (heed's default, unlike PyTorch's): query/key/value and the output are (B, T, E).
  // false (PyTorch's default): they are (T, B, E); the weights stay (B, Tq, Tk) as in
  // PyTorch, masks and attn_bias keep their batch-first shapes; no cache.
  HEED_ARG(bool, batch_first) = true;
  HEED_ARG(int64_t, kdim);            // key input width; embed_dim unless set (0 = embed_dim)
  HEED_ARG(int64_t, vdim);            // value input width; likewise
  HEED_ARG(int64_t, head_dim_k) = 0;  // per-head d_k; 0 = embed_dim / num_heads
  HEED_ARG(int64_t, head_dim_v) = 0;  // per-head d_v; 0 = embed_dim / num_heads
  // Block-sparse attention: heads see only the layout's kept blocks (autograd/ops/attention/block_layout.h,
  // shared or one grid per head); the fast path computes only those, the composed path
  // masks the dense scores with layout.pattern().
  HEED_ARG(BlockLayout, block_layout);
  // nn::MultiheadAttention's options hold every 0 above resolved to the size it stands for.
};

// What a cached forward is (there is no cache to say it without): self-attention appends
// the keys and values of the new tokens, cross-attention projects the memory once. Said by
// the caller, never guessed from whether query, key and value are one object.
enum class Attending { unspecified, self, cross };

struct AttentionOutput {
  Tensor output;   // (B, Tq, E)
  Tensor weights;  // (B, Tq, Tk) averaged over heads, (B, H, Tq, Tk) per head, or undefined
};

class MultiheadAttentionImpl : public Cloneable<MultiheadAttentionImpl> {
 public:
  // heed::Error naming MultiheadAttention for sizes <= 0, dropout outside [0, 1), or an
  // embed_dim not divisible by num_heads when d_k or d_v is defaulted.
  explicit MultiheadAttentionImpl(const MultiheadAttentionOptions& options);
  // heed::Error naming MultiheadAttention and the shapes when query is not (B, Tq, E),
  // key / value are not (B, Tk, kdim) / (B, Tk, vdim), or a mask or attn_bias does not fit.
  // need_weights = false (and no dropout at work, no attn_bias) runs the tiled flash
  // kernel, which never forms the (Tq, Tk) weights (autograd/ops/attention/flash_attention.h); with an
  // attn_bias the composed path runs. average_attn_weights = false returns them per head.
  // cache: incremental decoding (above); then Tk is the number of keys attended to, and a
  // heed::Error names MultiheadAttention when the cache's (B, H, d_k, d_v) do not fit, a
  // self-attention cache is undefined, or a cross cache holds another memory's length
  // (KVCache's own errors: overflow past max_len, grad mode on), or the projection weights
  // changed since the cache was filled (KVCache::note_weights). With a cache, `attending`
  // must be Attending::self (key and value hold the same Tq tokens as query; the result
  // depends on their values only) or Attending::cross; unspecified is a heed::Error. A
  // throwing call leaves the cache as it was.
  AttentionOutput forward(const Tensor& query, const Tensor& key, const Tensor& value,
                          const AttentionMask& mask = {}, const Tensor& attn_bias = {},
                          bool need_weights = true, bool average_attn_weights = true,
                          KVCache* cache = nullptr, Attending attending = Attending::unspecified);
  std::string repr() const override;  // MultiheadAttention(embed_dim=8, num_heads=2)
  void reset_parameters();  // xavier_uniform_ projections, zero biases, as PyTorch

  MultiheadAttentionOptions options;
  Tensor in_proj_weight, in_proj_bias;                  // (3E, E) packed form only; bias in both
  Tensor q_proj_weight, k_proj_weight, v_proj_weight;   // separate form only (see above)
  Linear out_proj{nullptr};                     // Linear(H d_v, E)

 private:
  AttentionOutput forward_batch_first(const Tensor& query, const Tensor& key, const Tensor& value,
                                      const AttentionMask& mask, const Tensor& attn_bias, bool need_weights,
                                      bool average_attn_weights, KVCache* cache, Attending attending);
  // The projections and the flash kernel, heads read in place: Concat(heads) (B, Tq, H d_v).
  Tensor flash_context(const Tensor& query, const Tensor& key, const Tensor& value,
                       const AttentionMask& m);
  // With a cache: the number of keys attended to, and step 1 writing K and V into it
  // (multihead_attention.cpp says which).
  int64_t cached_keys(const KVCache& cache, bool self, int64_t B, int64_t Tq, int64_t Tk) const;
  Tensor project_into(KVCache& cache, bool self, const Tensor& query, const Tensor& key,
                      const Tensor& value);
};
HEED_MODULE(MultiheadAttention);

}  // namespace heed::nn

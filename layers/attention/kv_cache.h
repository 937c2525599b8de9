// kv_cache.h - nn::KVCache: the keys and values an attention layer has already computed,
// kept so that decoding one token at a time costs O(T) per token instead of O(T^2).
//
// Generating token t+1 with causal self-attention needs the keys and values of tokens
// 0 .. t, and those of tokens 0 .. t-1 do not change when token t arrives (each depends
// only on its own input and the layers below it). So each step projects K and V for the
// NEW tokens only, appends them here, and lets the new queries attend to everything cached:
//
//   step:  k_new, v_new = x_new W^K, x_new W^V          (B, H, t, d_k), (B, H, t, d_v)
//          cache.append(k_new, v_new)                  written at [size(), size() + t)
//          O = softmax(Q_new K[0 : size()]^T / sqrt(d_k), causal) V[0 : size()]
//
// heed's causal mask aligns the last query with the last key, so t new queries after n
// cached tokens see exactly what rows n .. n+t-1 of a full causal pass see (a prompt of
// any length, then one token at a time). Cross-attention caches the projected encoder
// memory once (nn::MultiheadAttention::forward's `cache`).
//
// Storage, preallocated once for max_len positions and written in place (no step copies
// what is already cached):
//   keys   (B, H, max_len, d_k)     positions [0, size()) filled
//   values (B, H, max_len, d_v)
// Memory, per layer (one KVCache per attention layer), with sizeof(real) = 4 (float) or 8:
//   bytes_per_token() = B * H * (d_k + d_v) * sizeof(real)
//                     = 2 * B * E * sizeof(real)  when d_k = d_v = E / H (the default)
//   bytes()           = bytes_per_token() * max_len   (what is allocated)
// e.g. GPT-small's shapes (E 384, 6 layers, float): 3 KiB per token per layer for B = 1,
// 18 KiB per token for the model, 9 MiB for 512 tokens.
//
// heed tensors are contiguous, so the filled part (B, H, size(), d) cannot be a view of
// the (B, H, max_len, d) storage: keys() / values() return it as a copy (O(size()) per
// call: what the composed reference path reads), while the flash kernel reads the storage
// in place (flash_attention_prefix, autograd/ops/attention/flash_attention.h; `attend` below).
//
// Gradients: the cache stores values, not graph. Decoding runs under heed::NoGradGuard;
// append refuses (heed::Error) a k or v that requires grad while grad mode is on, instead
// of silently cutting the gradient. Each write bumps the storage's version, so a backward
// recorded on the old contents fails loudly instead of reading the new ones.
//
// Beam search: reorder(rows) makes row b the old row rows[b] (rows may have a different
// length: 1 row -> k beams); crop(len) forgets the tokens from len on (speculative
// decoding, a rejected suffix; a window slide needs positions that do not depend on the
// index, e.g. rotary re-applied, and is the caller's choice).
//
// Copying: a copy is DEEP (`auto branch = cache;` clones the storage, so appending to the
// branch never touches the original: what a beam-search or speculative-decoding fork
// needs); moves are cheap. libtorch has no cache class to mirror.
// Exceptions: a throwing call (any heed::Error below) leaves the cache as it was; a step
// over several caches restores them all with KVCache::Rollback.
//
// Weights: a layer that fills the cache records its projection weights' version counters
// (Tensor::version) on the first append (note_weights); a later step after an optimizer
// step or load_state_dict (both bump them) is refused until reset(), instead of attending
// to keys computed with the old weights.
//
// Example (what nn::MultiheadAttention::forward(x, x, x, causal, ..., &cache,
// nn::Attending::self) does):
//   nn::KVCache cache(B, H, 1024, 64, 64);
//   heed::NoGradGuard no_grad;
//   cache.append(k_new, v_new);                                  // (B, H, t, 64) each
//   Tensor o = cache.attend(q_new, nn::AttentionMask().causal()); // (B, H, t, 64)
#pragma once
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "ops.h"
#include "../../autograd/ops/attention/head_layout.h"
#include "../../core/tensor.h"

namespace heed::nn {

class KVCache {
 public:
  KVCache() = default;  // undefined: defined() == false (filled lazily by cross-attention)
  // heed::Error naming KVCache for a size < 1 (head dims may be 0).
  KVCache(int64_t batch, int64_t num_heads, int64_t max_len, int64_t head_dim_k,
          int64_t head_dim_v);
  KVCache(const KVCache& other);             // deep: clones the storage (see above)
  KVCache& operator=(const KVCache& other);  // deep
  KVCache(KVCache&&) = default;              // cheap: takes the storage
  KVCache& operator=(KVCache&&) = default;

  // k (B, H, t, d_k), v (B, H, t, d_v) written at positions [size(), size() + t).
  // heed::Error naming KVCache and the shapes when they do not fit, when size() + t >
  // max_len, or when k or v requires grad with grad mode on (see above); nothing is
  // written then.
  void append(const Tensor& k, const Tensor& v);
  // The same with the heads side by side, as a projection leaves them: k's heads are the
  // columns [k_col, k_col + H d_k) of k (B, t, Wk) (head h at k_col + h d_k), v's the
  // columns [v_col, v_col + H d_v) of v (B, t, Wv). MultiheadAttention appends straight
  // from its (B, t, 3E) projection this way.
  void append_heads(const Tensor& k, const Tensor& v, int64_t k_col = 0, int64_t v_col = 0);

  // O = softmax(mask(q K^T / sqrt(d_k))) V over the cached keys, read in place:
  // q (B, H, Tq, d_k) -> (B, H, Tq, d_v); masks are for (B, H, Tq, size()).
  Tensor attend(const Tensor& q, const AttentionMask& mask = {},
                std::optional<double> scale = {}) const;

  Tensor keys() const;    // (B, H, size(), d_k), a copy of the filled part
  Tensor values() const;  // (B, H, size(), d_v), a copy
  const Tensor& key_storage() const { return keys_; }      // (B, H, max_len, d_k), all of it
  const Tensor& value_storage() const { return values_; }  // (B, H, max_len, d_v)

  bool defined() const { return keys_.defined(); }
  int64_t size() const { return size_; }  // tokens cached = position offset of the next token
  int64_t max_len() const { return defined() ? keys_.size(2) : 0; }
  int64_t batch() const { return defined() ? keys_.size(0) : 0; }
  int64_t num_heads() const { return defined() ? keys_.size(1) : 0; }
  int64_t head_dim_k() const { return defined() ? keys_.size(3) : 0; }
  int64_t head_dim_v() const { return defined() ? values_.size(3) : 0; }

  void reset() { size_ = 0, weights_.clear(), filler_ = nullptr; }  // size() = 0; storage kept
  // Keep the first len tokens. heed::Error naming KVCache unless 0 <= len <= size().
  void crop(int64_t len);
  // Beam search: new row b = old row rows[b], for b < rows.numel() (the new batch size; a
  // new batch size reallocates). heed::Error naming KVCache for rows not 1-D, empty, or
  // with an id outside [0, batch()). O(rows.numel() H size() (d_k + d_v)).
  void reorder(const IndexTensor& rows);

  int64_t bytes_per_token() const;  // B H (d_k + d_v) sizeof(real): per layer, all rows
  int64_t bytes() const;            // bytes_per_token() * max_len(): allocated

  // The weights that compute what is cached. With the cache empty, records them and their
  // versions; otherwise heed::Error naming KVCache and `op` when they are other tensors or
  // have been written since (the weights changed since the cache was filled: reset() it).
  void note_weights(const char* op, const std::vector<Tensor>& weights);
  // The attention that fills the cache ("self-attention" or "cross-attention", a string
  // literal). With the cache empty, records it; otherwise heed::Error naming KVCache and
  // `op` when it is the other one: one cache holds one layer's self-attention tokens or its
  // cross-attention memory, never both mixed.
  void note_filler(const char* op, const char* attention);

  // Strong exception guarantee for a step over several caches (every layer of a decoder):
  // watch() each before it is written; unless commit() is reached, the destructor puts each
  // back as it was (its size, and undefined or empty if it was; the tokens below that size
  // are never overwritten by an append, so cropping restores them).
  class Rollback {
   public:
    Rollback() = default;
    Rollback(const Rollback&) = delete;  // a guard, not a value
    Rollback& operator=(const Rollback&) = delete;
    ~Rollback();
    void watch(KVCache* cache);
    void commit() { saved_.clear(); }

   private:
    struct Saved {
      KVCache* cache;
      bool defined;
      int64_t size;
    };
    std::vector<Saved> saved_;
  };

 private:
  // dst[b, h, at + r, :] = src[b, h, r, :] for r < t, d values each; dst (B, H, L, d). Where
  // src keeps its rows: a HeadLayout (autograd/ops/attention/head_layout.h), as flash attention's.
  static void write_rows(const real* src, const HeadLayout& s, real* dst, int64_t B, int64_t H,
                         int64_t L, int64_t d, int64_t at, int64_t t);
  void append_rows(const Tensor& k, const HeadLayout& ks, const Tensor& v, const HeadLayout& vs,
                   int64_t t);

  Tensor keys_, values_;  // (B, H, max_len, d_k), (B, H, max_len, d_v)
  int64_t size_ = 0;
  std::vector<std::pair<Tensor, uint64_t>> weights_;  // note_weights: each weight, its version
  const char* filler_ = nullptr;                       // note_filler: the attention filling it
};

}  // namespace heed::nn

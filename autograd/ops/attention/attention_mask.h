// attention_mask.h - which keys a query may see: heed's one mask convention, the causal rule
// written once, and the checks every attention path runs on a mask before using it.
//
// Mask convention, one for the whole library: 1 (true) = may attend, 0 = may not.
// NOTE this is the opposite of PyTorch's key_padding_mask / boolean attn_mask, where
// True means "ignore"; heed's masks say what is visible. Every value must be exactly 0
// or 1: anything else (a torch 0/-inf float mask, an inverted boolean mask read as 2 or
// -1, NaN) is a heed::Error that says how to convert, never a silently inverted mask.
//   key_padding  (B, Tk)      1 for a real key, 0 for padding
//   mask         any shape broadcastable to the scores (B, [H,] Tq, Tk), e.g. (Tq, Tk)
//   causal       query i may attend key j only when j <= causal_last_key(i, Tq, Tk): with
//                Tq != Tk the last query is aligned with the last key (a decoder
//                continuing a cache)
// A float mask that is added to the scores (torch's float attn_mask, ALiBi, relative
// biases) is not a mask here: pass it as attn_bias to scaled_dot_product_attention or
// MultiheadAttention (broadcastable to the scores; -inf hides a key, as in torch).
//
// The tiled and banded kernels (flash, linear, sliding window) never form a (Tq, Tk) mask;
// they call causal_last_key and real_key below per element, so every path reads the same
// rule. The composed paths use causal_mask, which is built from causal_last_key too.
//
// Example:
//   AttentionMask m = AttentionMask().key_padding(real_token).causal();  // (B, Tk)
//   Tensor vis = visible("my_attention", scores.shape(), m);  // 0/1, broadcastable
#pragma once
#include <cstdint>

#include "../../../core/tensor.h"

namespace heed {

// The position of query i among the keys: the last query sits at the last key, so with
// Tq queries and Tk keys query i is at key position i + (Tk - Tq) (i itself when Tq = Tk).
// The causal mask, ALiBi and relative positions all measure distances from here.
inline int64_t query_position(int64_t i, int64_t Tq, int64_t Tk) { return i + (Tk - Tq); }

// The causal rule: query i may attend key j exactly when j <= causal_last_key(i, Tq, Tk).
inline int64_t causal_last_key(int64_t i, int64_t Tq, int64_t Tk) {
  return query_position(i, Tq, Tk);
}

// Key padding, element by element: key j of a padding row `pad` (Tk values, or null for
// "no padding") is a real key unless its entry is 0.
inline bool real_key(const real* pad, int64_t j) { return pad == nullptr || pad[j] != 0; }

// Copying: an AttentionMask is a value whose tensors are handles (as torch's masks): a copy
// shares the mask and padding tensors, which the attention ops only read. Its setters
// check nothing and never throw; the ops check the mask against the scores (check_mask).
//
// Example:  AttentionMask().key_padding(real_token).causal()
class AttentionMask {
 public:
  AttentionMask() = default;
  // setters, chained
  AttentionMask& key_padding(const Tensor& m) { key_padding_ = m; return *this; }
  AttentionMask& mask(const Tensor& m) { mask_ = m; return *this; }
  AttentionMask& causal(bool on = true) { causal_ = on; return *this; }
  // getters (undefined tensors when a part is not set)
  const Tensor& key_padding() const { return key_padding_; }  // (B, Tk)
  const Tensor& mask() const { return mask_; }                // broadcastable to the scores
  bool is_causal() const { return causal_; }
  bool empty() const { return !key_padding_.defined() && !mask_.defined() && !causal_; }

 private:
  Tensor key_padding_;  // (B, Tk)
  Tensor mask_;         // broadcastable to the scores
  bool causal_ = false;
};

// The causal rule as a 0/1 tensor (rows, Tk): rows first_row .. first_row + rows - 1 of
// the (Tq, Tk) triangle, entry (r, j) = [j <= causal_last_key(first_row + r, Tq, Tk)].
// rows = -1 means all Tq rows. A chunk of queries takes its own rows of the one triangle.
// heed::Error naming causal_mask for a negative Tq or Tk, or rows outside [0, Tq).
Tensor causal_mask(int64_t Tq, int64_t Tk, int64_t first_row = 0, int64_t rows = -1);

// heed::Error naming `op` unless every value of `m` (the part called `what`, e.g. "key
// padding mask") is exactly 0 or 1; the message gives heed's convention and the
// conversions from PyTorch's. check_mask calls it on both parts; kernels that read a key
// padding mask without check_mask (linear attention) call it themselves.
void check_mask_values(const char* op, const char* what, const Tensor& m);

// heed::Error naming `op` when a part of `m` does not fit scores of shape
// `scores_shape` (B, [H,] Tq, Tk) or holds a value other than 0 and 1. Layers that build
// the scores themselves (multi-head attention) call it first, so that a bad mask is
// reported in their own name.
void check_mask(const char* op, const Shape& scores_shape, const AttentionMask& m);

// heed::Error naming `op` when `bias` does not broadcast to scores of shape `scores_shape`
// (B, [H,] Tq, Tk) without growing them, or holds NaN or +inf (-inf is allowed: it hides
// the key). An undefined bias passes.
void check_bias(const char* op, const Shape& scores_shape, const Tensor& bias);

// The visibility of each score as a 0/1 tensor broadcastable to `scores_shape`
// (B, [H,] Tq, Tk), combining all three parts; undefined when nothing is masked.
// Checks the shapes first (check_mask).
Tensor visible(const char* op, const Shape& scores_shape, const AttentionMask& m);

}  // namespace heed

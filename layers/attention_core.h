// attention_core.h - the part every attention variant shares, written once:
// mask -> softmax -> dropout -> weighted sum. A variant only computes its scores e.
//
//   e        scores               (B, [H,] Tq, Tk)    from the variant's score function
//   alpha    = softmax_j(e  with masked positions set to -inf)
//   alpha    = dropout(alpha)     (training only)
//   c        = alpha @ V          (B, [H,] Tq, Dv)    the context vectors
//
// Shapes are batch-first everywhere: queries (B, Tq, Dq), keys (B, Tk, Dk), values
// (B, Tk, Dv); an RNN decoder's query is (B, Dq) and gives (B, Dv) / weights (B, Tk)
// (its layer calls attend with Tq = 1 and drops that dim again: attend needs (.., Tq, Tk)).
//
// Mask convention, one for the whole library: 1 (true) = may attend, 0 = may not.
// NOTE this is the opposite of PyTorch's key_padding_mask / boolean attn_mask, where
// True means "ignore"; heed's masks say what is visible. Every value must be exactly 0
// or 1: anything else (a torch 0/-inf float mask, an inverted boolean mask read as 2 or
// -1, NaN) is a heed::Error that says how to convert, never a silently inverted mask.
//   key_padding  (B, Tk)      1 for a real key, 0 for padding
//   mask         any shape broadcastable to the scores (B, [H,] Tq, Tk), e.g. (Tq, Tk)
//   causal       query i may attend key j only when j <= i + (Tk - Tq): with Tq != Tk the
//                last query is aligned with the last key (a decoder continuing a cache)
// A float mask that is added to the scores (torch's float attn_mask, ALiBi, relative
// biases) is not a mask here: pass it as attn_bias to scaled_dot_product_attention or
// MultiheadAttention (broadcastable to the scores; -inf hides a key, as in torch).
// A query whose keys are all masked gets a zero context and zero gradients, never NaN
// (softmax of an all -inf row is 0 in heed: autograd/softmax.h; cf. pytorch/pytorch#41508).
#pragma once
#include "../core/tensor.h"

namespace heed::nn {

// Example:  nn::AttentionMask().key_padding(real_token).causal()
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

struct Attended {
  Tensor context;  // (B, [H,] Tq, Dv)
  Tensor weights;  // (B, [H,] Tq, Tk), after dropout (what multiplied V)
};

// c = dropout(softmax(mask(e))) @ V.  scores (B, [H,] Tq, Tk), values (B, [H,] Tk, Dv).
// dropout_p in [0, 1) (heed::Error naming `op` otherwise), applied only when training.
Attended attend(const char* op, const Tensor& scores, const Tensor& values,
                const AttentionMask& m = {}, double dropout_p = 0, bool training = false);

}  // namespace heed::nn

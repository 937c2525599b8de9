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
// True means "ignore"; heed's masks say what is visible.
//   key_padding  (B, Tk)      1 for a real key, 0 for padding
//   mask         any shape broadcastable to the scores (B, [H,] Tq, Tk), e.g. (Tq, Tk)
//   causal       query i may attend key j only when j <= i + (Tk - Tq): with Tq != Tk the
//                last query is aligned with the last key (a decoder continuing a cache)
// A query whose keys are all masked gets a zero context and zero gradients, never NaN
// (softmax of an all -inf row is 0 in heed: autograd/softmax.h; cf. pytorch/pytorch#41508).
#pragma once
#include "../core/tensor.h"

namespace heed::nn {

struct AttentionMask {
  AttentionMask() = default;
  AttentionMask& key_padding(const Tensor& m) { key_padding_ = m; return *this; }
  AttentionMask& mask(const Tensor& m) { mask_ = m; return *this; }
  AttentionMask& causal(bool on = true) { causal_ = on; return *this; }
  bool empty() const { return !key_padding_.defined() && !mask_.defined() && !causal_; }

  Tensor key_padding_;  // (B, Tk)
  Tensor mask_;         // broadcastable to the scores
  bool causal_ = false;
};

// heed::Error naming `op` when a part of `m` does not fit scores of shape
// `scores_shape` (B, [H,] Tq, Tk). Layers that build the scores themselves (multi-head
// attention) call it first, so that a bad mask is reported in their own name.
void check_mask(const char* op, const Shape& scores_shape, const AttentionMask& m);

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

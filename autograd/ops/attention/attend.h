// attend.h - the part every attention variant shares, written once:
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
// The mask and its convention (1 = may attend) are autograd/ops/attention/attention_mask.h's.
// A query whose keys are all masked gets a zero context and zero gradients, never NaN
// (softmax of an all -inf row is 0 in heed: autograd/ops/softmax.h; cf. pytorch/pytorch#41508).
//
// Example:
//   Tensor e = matmul(q, k.transpose(-2, -1));                      // (B, Tq, Tk), any scorer
//   Attended a = attend("my_attention", e, v, AttentionMask().causal());
//   Tensor c = a.context;                                           // (B, Tq, Dv)
#pragma once
#include "attention_mask.h"

namespace heed {

struct Attended {
  Tensor context;  // (B, [H,] Tq, Dv)
  Tensor weights;  // (B, [H,] Tq, Tk), after dropout (what multiplied V)
};

// alpha = softmax_j(e with the hidden scores set to -inf)    scores (B, [H,] Tq, Tk).
// The first half of attend, for a variant that reweights alpha before the weighted sum
// (Luong's local-p). heed::Error naming `op` when the mask does not fit.
Tensor masked_softmax(const char* op, const Tensor& scores, const AttentionMask& m = {});

// c = dropout(softmax(mask(e))) @ V.  scores (B, [H,] Tq, Tk), values (B, [H,] Tk, Dv).
// dropout_p in [0, 1) (heed::Error naming `op` otherwise), applied only when training.
Attended attend(const char* op, const Tensor& scores, const Tensor& values,
                const AttentionMask& m = {}, double dropout_p = 0, bool training = false);

}  // namespace heed

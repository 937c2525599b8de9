// additive_score.h - the score of additive attention (Bahdanau et al. 2015; Luong et al.
// 2015's "concat" score is the same sum) as one fused op; its forward and backward kernels
// over plain pointers; and its twin composed from broadcast add, tanh and matmul.
//
//   e[b, i, j] = sum_a v[a] tanh(qp[b, i, a] + kp[b, j, a])
//
// Shapes: qp (B, Tq, A) the projected queries (W_s s_t + b), kp (B, Tk, A) the projected keys
// (W_h h_j), v (A) -> e (B, Tq, Tk).
//
// Why fused: the composed twin makes three (B, Tq, Tk, A) tensors (the broadcast sum, its
// tanh, and in backward the tanh's gradient) and runs a broadcast add, a tanh, a batched
// matrix-vector product and, in backward, their three backward ops and a reduction over the
// broadcast dims. The fused op writes the tanh once (kept for backward, as the composed
// twin keeps it) and does the whole backward in one pass over it, with no other temporary.
// (Recomputing the tanh in backward instead of keeping it was measured: the tanh is most
// of the op's time, and recomputing it made the op slower than the composed twin.)
//
//   Tensor e = heed::additive_score(qp, kp, v);   // (B, Tq, A), (B, Tk, A), (A) -> (B, Tq, Tk)
#pragma once
#include <cstdint>

#include "../../../core/tensor.h"

namespace heed {

// Throws heed::Error naming "additive_score" and the shapes unless qp is (B, Tq, A),
// kp (B, Tk, A) and v (A).
Tensor additive_score(const Tensor& qp, const Tensor& kp, const Tensor& v);

// The same score composed: tanh(qp.unsqueeze(2) + kp.unsqueeze(1)) @ v. Its gradient is
// those ops'. The reference the fused op is tested against (tests/gradcheck_scorers.cpp).
Tensor additive_score_reference(const Tensor& qp, const Tensor& kp, const Tensor& v);

// The kernels, one argument struct each, in llm.c's fixed order: the backward takes the
// forward's arguments (v and the tanh t the forward wrote) and the gradients.
struct AdditiveScoreArgs {
  int64_t B = 0, Tq = 0, Tk = 0, A = 0;
  const real* qp = nullptr;  // (B, Tq, A)
  const real* kp = nullptr;  // (B, Tk, A)
  const real* v = nullptr;   // (A)
  real* e = nullptr;         // (B, Tq, Tk), written by the forward
  real* t = nullptr;         // (B, Tq, Tk, A), written by the forward
};
// The backward WRITES dqp, dkp and dv (every element; no zeroing needed), or ADDS into dkp
// (+=) when add_dkp is set (the keys' running gradient sum over decoder steps,
// Grads::write_or_add); a null output is not computed. The result does not depend on the
// thread count.
struct AdditiveScoreGrads {
  const real* de = nullptr;  // (B, Tq, Tk)
  real* dqp = nullptr;       // (B, Tq, A)
  real* dkp = nullptr;       // (B, Tk, A)
  real* dv = nullptr;        // (A)
  bool add_dkp = false;
};
void additive_score_forward(const AdditiveScoreArgs& a);
void additive_score_backward(const AdditiveScoreArgs& a, const AdditiveScoreGrads& g);

}  // namespace heed

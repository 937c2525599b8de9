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

#include "../../core/tensor.h"

namespace heed {

// Throws heed::Error naming "additive_score" and the shapes unless qp is (B, Tq, A),
// kp (B, Tk, A) and v (A).
Tensor additive_score(const Tensor& qp, const Tensor& kp, const Tensor& v);

// The same score composed: tanh(qp.unsqueeze(2) + kp.unsqueeze(1)) @ v. Its gradient is
// those ops'. The reference the fused op is tested against (tests/gradcheck_scorers.cpp).
Tensor additive_score_reference(const Tensor& qp, const Tensor& kp, const Tensor& v);

// The kernels, outputs first. Forward writes e (B, Tq, Tk) and t (B, Tq, Tk, A), the tanh
// that backward reads.
void additive_score_forward(real* e, real* t, const real* qp, const real* kp, const real* v,
                            int64_t B, int64_t Tq, int64_t Tk, int64_t A);
// Backward WRITES dqp (B, Tq, A), dkp (B, Tk, A) and dv (A) (every element; no zeroing
// needed), or ADDS into dkp (+=) when add_dkp is set (the keys' running gradient sum over
// decoder steps, Grads::write_or_add); a null output is not computed. de (B, Tq, Tk); t and v
// as the forward's. The result does not depend on the thread count.
void additive_score_backward(real* dqp, real* dkp, real* dv, const real* de, const real* t,
                             const real* v, int64_t B, int64_t Tq, int64_t Tk, int64_t A,
                             bool add_dkp = false);

}  // namespace heed

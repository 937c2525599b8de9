// scorer.h - the shell every scorer module (AdditiveAttention, LuongAttention,
// LocalAttention) runs around its score function, written once:
//   1. check query (B, [Tq,] Dq), projected keys (B, Tk, P) and values (B, Tk, Dv),
//      throwing heed::Error naming the module and the shapes;
//   2. lift a decoder step's query (B, Dq) to (B, 1, Dq), and a (B, Tk) full mask to (B, 1, Tk);
//   3. e = score(query, projected keys), then attend() (autograd/ops/attention/attend.h);
//   4. drop that Tq = 1 dim again (ScorerStep::finish).
//
// Conventions shared by every scorer module (AdditiveAttention, LuongAttention,
// LocalAttention):
//   query   (B, Dq): one decoder step -> context (B, Dv), weights (B, Tk)
//           (B, Tq, Dq): Tq queries at once -> context (B, Tq, Dv), weights (B, Tq, Tk)
//   keys    (B, Tk, Dk);  values (B, Tk, Dv), or undefined to attend over the keys themselves
//   mask    heed's AttentionMask (1 = may attend); with a 2-D query a full mask may be (B, Tk)
//
// Example (inside a scorer module M with options, projected_dim(), precompute_keys, score):
//   Attended M::forward(q, keys, values, mask) { return detail::scorer_forward(kOp, *this, q, keys, values, mask); }
//   Attended M::forward_projected(q, pk, values, mask) { return detail::scorer_attend(kOp, *this, q, pk, values, mask); }
#pragma once
#include <cstdint>

#include "ops.h"

namespace heed::nn::detail {

// Steps 1, 2 and 4 above.
struct ScorerStep {
  Tensor query;        // (B, Tq, Dq)
  AttentionMask mask;  // fits the scores (B, Tq, Tk)
  bool step = false;   // the query was 2-D
  Attended finish(Attended a) const;
};

ScorerStep scorer_inputs(const char* op, const Tensor& query, int64_t query_dim,
                         const Tensor& projected_keys, int64_t projected_dim,
                         const Tensor& values, const AttentionMask& mask);

// heed::Error naming `op` unless keys is (B, Tk, key_dim), with the query's B if one is given.
void check_keys(const char* op, const Tensor& keys, int64_t key_dim, const Tensor& query = Tensor());

// forward: check the keys, project them, then the module's forward_projected (values
// default to the keys).
template <class Scorer>
Attended scorer_forward(const char* op, Scorer& m, const Tensor& query, const Tensor& keys,
                        const Tensor& values, const AttentionMask& mask) {
  check_keys(op, keys, m.options.key_dim(), query);
  return m.forward_projected(query, m.precompute_keys(keys), values.defined() ? values : keys, mask);
}

// forward_projected: steps 1 to 4, with the module's score and dropout.
template <class Scorer>
Attended scorer_attend(const char* op, Scorer& m, const Tensor& query, const Tensor& projected_keys,
                       const Tensor& values, const AttentionMask& mask) {
  const ScorerStep in = scorer_inputs(op, query, m.options.query_dim(), projected_keys,
                                      m.projected_dim(), values, mask);
  const Tensor e = m.score(in.query, projected_keys);  // (B, Tq, Tk)
  return in.finish(attend(op, e, values, in.mask, m.options.dropout(), m.is_training()));
}

}  // namespace heed::nn::detail

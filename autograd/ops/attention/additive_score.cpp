// additive_score.cpp - the fused additive score: the forward and backward kernels over plain
// pointers, the recorded op, and the composed twin.
//
//   forward   (per query row (b, i), per key j)
//     u[a] = qp[b, i, a] + kp[b, j, a]
//     t[a] = tanh(u[a])
//     e[b, i, j] = sum_a v[a] t[a]
//   saved: t (B, Tq, Tk, A) and v
//
//   backward, with s = de[b, i, j] and tanh' = 1 - t^2:
//     dv[a]         += s t[a]
//     g[a]           = s v[a] (1 - t[a]^2)   the gradient reaching u
//     dqp[b, i, a]  += g[a]                  (u = qp + kp: both get g, summed over what
//     dkp[b, j, a]  += g[a]                   they were broadcast along: j for qp, i for kp)
#include "additive_score.h"

#include <algorithm>

#include "../../../core/elementwise.h"
#include "../../../core/error.h"
#include "../../../core/fastmath.h"
#include "../../../core/parallel.h"
#include "../../engine/node.h"
#include "../arith.h"
#include "../linalg.h"
#include "../unary.h"

namespace heed {

// ---------------------------------------------------------------- the kernels
namespace {

// t (Tk, A) = tanh(q[a] + k[j, a]) for every key j of one query row q (A). Written as two
// plain loops over a buffer (no reduction mixed in), so that both vectorise.
void tanh_of_sums(real* __restrict t, const real* __restrict q, const real* __restrict k,
                  int64_t Tk, int64_t A) {
  for (int64_t j = 0; j < Tk; ++j)
    for (int64_t a = 0; a < A; ++a) t[j * A + a] = q[a] + k[j * A + a];
  for (int64_t x = 0; x < Tk * A; ++x) t[x] = fastmath::tanh(t[x]);
}

}  // namespace

void additive_score_forward(const AdditiveScoreArgs& a) {
  const int64_t B = a.B, Tq = a.Tq, Tk = a.Tk, A = a.A;
  const real *qp = a.qp, *kp = a.kp, *v = a.v;
  real *e = a.e, *t = a.t;
  parallel_for(B * Tq, kGrainTranscendental / (Tk * A + 1) + 1, [&](int64_t s, int64_t end) {
    for (int64_t r = s; r < end; ++r) {  // r = b * Tq + i
      const int64_t b = r / Tq;
      real* tr = t + r * Tk * A;  // (Tk, A)
      tanh_of_sums(tr, qp + r * A, kp + b * Tk * A, Tk, A);
      for (int64_t j = 0; j < Tk; ++j) e[r * Tk + j] = real(row_dot(v, tr + j * A, A));
    }
  });
}

void additive_score_backward(const AdditiveScoreArgs& a, const AdditiveScoreGrads& g) {
  const int64_t B = a.B, Tq = a.Tq, Tk = a.Tk, A = a.A;
  const real *t = a.t, *v = a.v, *de = g.de;
  real *dqp = g.dqp, *dkp = g.dkp, *dv = g.dv;
  const bool add_dkp = g.add_dkp;
  // One batch element per task: it owns its rows of dqp and dkp, and its own row of dv
  // partials, which are then added over b in double, in order, so the result does not depend
  // on how the batch was shared among threads. Outputs that are not wanted are computed into
  // scratch rows anyway: that keeps the inner loop free of branches.
  const Tensor part = empty({B, A});  // (B, A) dv partials, from the allocator's cache
  real* dv_part = part.data();
  parallel_for(B, kGrainElementwise / (Tq * Tk * A + 1) + 1, [&](int64_t s, int64_t end) {
    const Tensor scratch = empty({Tq + Tk, A});  // dq, dk when unwanted
    for (int64_t b = s; b < end; ++b) {
      real* dq = dqp ? dqp + b * Tq * A : scratch.data();           // (Tq, A)
      real* dk = dkp ? dkp + b * Tk * A : scratch.data() + Tq * A;  // (Tk, A)
      real* __restrict pv = dv_part + b * A;                        // (A)
      std::fill(dq, dq + Tq * A, real(0));
      if (!(dkp && add_dkp)) std::fill(dk, dk + Tk * A, real(0));
      std::fill(pv, pv + A, real(0));
      for (int64_t i = 0; i < Tq; ++i) {
        real* __restrict dqi = dq + i * A;  // (A)
        for (int64_t j = 0; j < Tk; ++j) {
          const real sij = de[(b * Tq + i) * Tk + j];
          const real* __restrict tj = t + ((b * Tq + i) * Tk + j) * A;  // (A)
          real* __restrict dkj = dk + j * A;                            // (A)
          for (int64_t a = 0; a < A; ++a) {
            const real g = sij * v[a] * (1 - tj[a] * tj[a]);
            pv[a] += sij * tj[a];
            dqi[a] += g;
            dkj[a] += g;
          }
        }
      }
    }
  });
  if (!dv) return;
  for (int64_t a = 0; a < A; ++a) {
    double sum = 0;
    for (int64_t b = 0; b < B; ++b) sum += dv_part[b * A + a];
    dv[a] = real(sum);
  }
}

// ---------------------------------------------------------------- the op
namespace {
void check_shapes(const char* op, const Tensor& qp, const Tensor& kp, const Tensor& v) {
  HEED_CHECK(qp.defined() && kp.defined() && v.defined(), op, "qp, kp and v must be defined");
  HEED_CHECK(qp.dim() == 3 && kp.dim() == 3 && v.dim() == 1 && qp.size(0) == kp.size(0) &&
                 qp.size(2) == kp.size(2) && v.size(0) == qp.size(2),
             op, "expected qp (B, Tq, A), kp (B, Tk, A) and v (A); got qp ", qp.shape(), ", kp ",
             kp.shape(), " and v ", v.shape());
}
}  // namespace

Tensor additive_score(const Tensor& qp, const Tensor& kp, const Tensor& v) {
  check_shapes("additive_score", qp, kp, v);
  const int64_t B = qp.size(0), Tq = qp.size(1), Tk = kp.size(1), A = qp.size(2);
  Tensor e = empty({B, Tq, Tk});        // (B, Tq, Tk)
  Tensor t = empty({B, Tq, Tk, A});     // (B, Tq, Tk, A) the tanh, kept for backward
  AdditiveScoreArgs a;
  a.B = B, a.Tq = Tq, a.Tk = Tk, a.A = A;
  a.qp = qp.data(), a.kp = kp.data(), a.v = v.data(), a.e = e.data(), a.t = t.data();
  additive_score_forward(a);
  return record("additive_score", e, {qp, kp, v},
                [t, v = SavedTensor(v), a, B, Tq, Tk, A](const Tensor& de, Grads& g) {
    const auto [dkp, beta_k] = g.write_or_add(1, {B, Tk, A});  // or += into the keys' running sum
    AdditiveScoreArgs fwd = a;  // v and t, read again from what the closure holds
    fwd.qp = fwd.kp = nullptr, fwd.e = nullptr, fwd.v = v.data(), fwd.t = t.data();
    additive_score_backward(fwd, {de.data(), g.write(0, {B, Tq, A}), dkp, g.write(2, {A}),
                                  beta_k != 0});
  });
}

// ---------------------------------------------------------------- the composed twin
//   (B, Tq, 1, A) + (B, 1, Tk, A) -> (B, Tq, Tk, A) -> tanh -> . v -> (B, Tq, Tk)
Tensor additive_score_reference(const Tensor& qp, const Tensor& kp, const Tensor& v) {
  check_shapes("additive_score_reference", qp, kp, v);
  return matmul(tanh(qp.unsqueeze(2) + kp.unsqueeze(1)), v);
}

}  // namespace heed

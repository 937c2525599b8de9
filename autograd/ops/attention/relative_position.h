// relative_position.h - the two index ops behind relative position representations
// (Shaw et al. 2018, layers/attention/relative_position.h): moving between "one score per key j" and
// "one value per clipped distance r". They are each other's adjoint, so each one's
// backward is the other.
//
// Query i (of Tq) sits at query_position(i, Tq, Tk), aligned with the last key as heed's
// causal mask does (autograd/ops/attention/attention_mask.h); for self-attention (Tq = Tk) that is i.
// The distance from query i to key j is clipped to [-k, k]:
//
//   r(i, j) = clip(j - query_position(i, Tq, Tk), -k, k)
//
// Only distances that occur are given a bucket: they lie in [lo, hi] with
//   lo = max(-k, -(Tk - 1))     hi = min(k, Tq - 1)
// so there are R = hi - lo + 1 <= min(2k + 1, Tq + Tk - 1) buckets, bucket(i, j) = r(i, j) - lo.
//
//   gather_buckets   y[.., i, j] = p[.., i, bucket(i, j)]          p (.., Tq, R) -> (.., Tq, Tk)
//   scatter_buckets  y[.., i, r] = sum_{j : bucket(i, j) = r} a[.., i, j]
//                                                                   a (.., Tq, Tk) -> (.., Tq, R)
// Cost: O(numel of the (.., Tq, Tk) side) time for each, forward and backward; nothing saved.
//
//   heed::RelativeBuckets b = heed::relative_buckets(T, T, 4);   // k = 4
//   Tensor bias = heed::gather_buckets(matmul(q, transpose(table_rows, 0, 1)), b);
#pragma once
#include "attention_mask.h"

namespace heed {

struct RelativeBuckets {
  int64_t Tq = 0, Tk = 0, k = 0;
  int64_t lo = 0, hi = 0;  // the clipped distances that occur: [lo, hi]
  int64_t count() const { return hi - lo + 1; }  // R
  int64_t distance(int64_t i, int64_t j) const {  // r(i, j), in [-k, k]
    const int64_t d = j - query_position(i, Tq, Tk);
    return d < -k ? -k : d > k ? k : d;
  }
  int64_t bucket(int64_t i, int64_t j) const { return distance(i, j) - lo; }
};

// heed::Error for Tq < 1, Tk < 1 or k < 0.
RelativeBuckets relative_buckets(int64_t Tq, int64_t Tk, int64_t k);

Tensor gather_buckets(const Tensor& p, const RelativeBuckets& b);   // (.., Tq, R) -> (.., Tq, Tk)
Tensor scatter_buckets(const Tensor& a, const RelativeBuckets& b);  // (.., Tq, Tk) -> (.., Tq, R)

}  // namespace heed

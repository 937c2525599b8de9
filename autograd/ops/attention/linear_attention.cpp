// linear_attention.cpp - the linear attention kernel, its backward, and its reference.
//
// One slice (b, h): q (Tq, D), k (Tk, D), v (Tk, Dv), padding m (Tk), out (Tq, Dv).
// Query i sees keys 0 .. last(i), with last(i) = causal_last_key(i, Tq, Tk) when causal
// (attention_mask.h), else Tk - 1.
// The non-causal form is the causal kernel in which every query sees every key, so one
// loop serves both: there the key pointer reaches Tk before the first query is answered.
//
//   phi(x) = elu(x) + 1 = x + 1 (x > 0), e^x (x <= 0)      phi'(x) = 1 (x > 0), e^x (x <= 0)
//   (e^x directly, not (e^x - 1) + 1, which would cancel away the digits of a small e^x)
//
//   forward, per slice, for i = 0 .. Tq-1:
//     1. for each new key j <= last(i):  kf = phi(k_j) m_j;  S += kf v_j^T;  z += kf
//     2. qf = phi(q_i);  den_i = qf . z
//     3. out_i = S^T qf / den_i                 (0 when den_i = 0: no visible key)
//   saved: q, k, v, m. S and z are rebuilt in backward rather than stored.
//
//   backward, undoing the steps in reverse:
//     3. out_i = num_i / den_i with num_i = S_i^T qf:
//          dnum_i = dout_i / den_i         dden_i = -(dout_i . out_i) / den_i
//          dqf_i  = S_i dnum_i + z_i dden_i      dS_i = qf dnum_i^T      dz_i = qf dden_i
//        With g_i = S_i dout_i (D), dout_i . out_i = g_i . qf / den_i, so
//          dqf_i = (g_i - (g_i . qf / den_i) z_i) / den_i       c_i := dden_i = -(g_i . qf) / den_i^2
//     2. dq_i = dqf_i * phi'(q_i)
//        Pass A walks i forward, rebuilding S_i and z_i exactly as the forward did; it
//        writes dq and keeps 1/den_i and c_i (Tq numbers each) for pass B.
//     1. Key j entered S_i and z_i for every query i with last(i) >= j, so it collects
//          R_j = sum_{i: last(i) >= j} qf_i (dout_i / den_i)^T   (D, Dv)
//          r_j = sum_{i: last(i) >= j} c_i qf_i                  (D)
//          dkf_j = R_j v_j + r_j       dv_j = R_j^T kf_j        dk_j = dkf_j m_j phi'(k_j)
//        Pass B walks j backward, adding query i to R and r when j reaches last(i): suffix
//        sums (the paper's Algorithm 1), accumulated, never subtracted, one state at a time.
// S, z, R, r are accumulated in double, so long sequences do not lose float precision.
#include "linear_attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "../../../core/allocator.h"
#include "../../../core/error.h"
#include "../../../core/parallel.h"
#include "../arith.h"
#include "attention_mask.h"  // the causal rule, real_key, check_mask_values
#include "../compare.h"
#include "../linalg.h"
#include "../../engine/composed_backward.h"
#include "../../engine/node.h"
#include "../reduce.h"
#include "scaled_dot_product.h"  // check_qkv
#include "../unary.h"

namespace heed {
namespace {

constexpr const char* kOp = "linear_attention";

inline double phi(real x) { return x > 0 ? double(x) + 1 : std::exp(double(x)); }
inline double dphi(real x) { return x > 0 ? 1.0 : std::exp(double(x)); }

struct Dims {
  int64_t BH, H, Tq, Tk, D, Dv;  // H = 1 for (B, T, D) inputs
  bool causal;
  int64_t last(int64_t i) const {  // the last key query i sees
    return causal ? causal_last_key(i, Tq, Tk) : Tk - 1;
  }
};

// Zeroed doubles from the caching allocator, so alloc::stats() and PeakScope count them.
class Scratch {
 public:
  explicit Scratch(int64_t n) : n_(n), p_(static_cast<double*>(alloc::allocate(bytes()))) {
    std::fill(p_, p_ + n_, 0.0);
  }
  ~Scratch() { alloc::deallocate(p_, bytes()); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  double* get() const { return p_; }

 private:
  std::size_t bytes() const { return std::size_t(n_) * sizeof(double); }
  int64_t n_;
  double* p_;
};

Dims check_shapes(const Tensor& q, const Tensor& k, const Tensor& v, bool causal, const Tensor& kp) {
  check_qkv(kOp, q, k, v);
  HEED_CHECK(!kp.defined() || (kp.dim() == 2 && kp.size(0) == q.size(0) && kp.size(1) == k.size(-2)),
             kOp, "key padding mask ", kp.shape(), " must be (B, Tk) = (", q.size(0), ", ",
             k.size(-2), ")");
  check_mask_values(kOp, "key padding mask", kp);  // 1 = real key, as everywhere
  const int64_t H = q.dim() == 4 ? q.size(1) : 1;
  return {q.size(0) * H, H, q.size(-2), k.size(-2), q.size(-1), v.size(-1), causal};
}

// f = phi(x), one row of D features
inline void features(const Dims& d, const real* x, double* f) {
  for (int64_t a = 0; a < d.D; ++a) f[a] = phi(x[a]);
}

// kf = phi(k_j) (into f);  S += kf v_j^T;  z += kf
inline void add_key(const Dims& d, const real* kj, const real* vj, double* S, double* z, double* f) {
  features(d, kj, f);
  for (int64_t a = 0; a < d.D; ++a) {
    z[a] += f[a];
    double* Sa = S + a * d.Dv;
    for (int64_t e = 0; e < d.Dv; ++e) Sa[e] += f[a] * vj[e];
  }
}

// qf = phi(q_i) (into f); returns den_i = qf . z
inline double query_den(const Dims& d, const real* qi, const double* z, double* f) {
  features(d, qi, f);
  double den = 0;
  for (int64_t a = 0; a < d.D; ++a) den += f[a] * z[a];
  return den;
}

void forward_slice(const Dims& d, const real* q, const real* k, const real* v, const real* m,
                   real* out) {
  Scratch buf(d.D * d.Dv + 2 * d.D + d.Dv);
  double *S = buf.get(), *z = S + d.D * d.Dv, *f = z + d.D, *num = f + d.D;
  int64_t j = 0;
  for (int64_t i = 0; i < d.Tq; ++i) {
    for (; j < d.Tk && j <= d.last(i); ++j)  // 1.
      if (real_key(m, j)) add_key(d, k + j * d.D, v + j * d.Dv, S, z, f);
    const double den = query_den(d, q + i * d.D, z, f);  // 2.
    real* oi = out + i * d.Dv;
    if (den == 0) {  // 3.
      std::fill(oi, oi + d.Dv, real(0));
      continue;
    }
    std::fill(num, num + d.Dv, 0.0);
    for (int64_t a = 0; a < d.D; ++a)
      for (int64_t e = 0; e < d.Dv; ++e) num[e] += f[a] * S[a * d.Dv + e];
    for (int64_t e = 0; e < d.Dv; ++e) oi[e] = real(num[e] / den);
  }
}

// Gradients of one slice; dq, dk, dv may each be null (not needed).
void backward_slice(const Dims& d, const real* q, const real* k, const real* v, const real* m,
                    const real* dout, real* dq, real* dk, real* dv) {
  Scratch buf(2 * d.D * d.Dv + 4 * d.D + d.Dv + 2 * d.Tq);
  double *S = buf.get(), *z = S + d.D * d.Dv, *f = z + d.D, *g = f + d.D;
  double *R = g + d.D, *r = R + d.D * d.Dv, *dn = r + d.D;
  double *inv_den = dn + d.Dv, *c = inv_den + d.Tq;

  // Pass A: i forward, rebuilding S_i, z_i; dq_i, 1/den_i and c_i (step 3, then 2).
  int64_t j = 0;
  for (int64_t i = 0; i < d.Tq; ++i) {
    for (; j < d.Tk && j <= d.last(i); ++j)
      if (real_key(m, j)) add_key(d, k + j * d.D, v + j * d.Dv, S, z, f);
    const real *qi = q + i * d.D, *doi = dout + i * d.Dv;
    const double den = query_den(d, qi, z, f);
    if (den == 0) {  // out_i was the constant 0
      inv_den[i] = c[i] = 0;
      if (dq) std::fill(dq + i * d.D, dq + (i + 1) * d.D, real(0));
      continue;
    }
    double gq = 0;  // g_i . qf
    for (int64_t a = 0; a < d.D; ++a) {
      const double* Sa = S + a * d.Dv;
      double s = 0;
      #pragma omp simd reduction(+ : s)  // lets the dot product vectorise
      for (int64_t e = 0; e < d.Dv; ++e) s += Sa[e] * doi[e];
      g[a] = s;
      gq += s * f[a];
    }
    inv_den[i] = 1 / den;
    c[i] = -gq / (den * den);
    if (dq)
      for (int64_t a = 0; a < d.D; ++a)
        dq[i * d.D + a] = real((g[a] - gq / den * z[a]) / den * dphi(qi[a]));
  }
  if (!dk && !dv) return;

  // Pass B: j backward, with the suffix sums R_j, r_j over the queries that see key j (step 1).
  int64_t i = d.Tq - 1;
  for (j = d.Tk - 1; j >= 0; --j) {
    for (; i >= 0 && d.last(i) >= j; --i) {
      if (inv_den[i] == 0) continue;  // a query that saw no key sends nothing back
      features(d, q + i * d.D, f);
      const real* doi = dout + i * d.Dv;
      for (int64_t e = 0; e < d.Dv; ++e) dn[e] = doi[e] * inv_den[i];  // dnum_i
      for (int64_t a = 0; a < d.D; ++a) {
        r[a] += c[i] * f[a];
        double* Ra = R + a * d.Dv;
        for (int64_t e = 0; e < d.Dv; ++e) Ra[e] += f[a] * dn[e];
      }
    }
    const real *kj = k + j * d.D, *vj = v + j * d.Dv;
    if (!real_key(m, j)) {  // kf_j = 0: a padded key gets no gradient
      if (dk) std::fill(dk + j * d.D, dk + (j + 1) * d.D, real(0));
      if (dv) std::fill(dv + j * d.Dv, dv + (j + 1) * d.Dv, real(0));
      continue;
    }
    features(d, kj, f);
    if (dk)
      for (int64_t a = 0; a < d.D; ++a) {
        const double* Ra = R + a * d.Dv;
        double s = r[a];
        #pragma omp simd reduction(+ : s)  // lets the dot product vectorise
        for (int64_t e = 0; e < d.Dv; ++e) s += Ra[e] * vj[e];
        dk[j * d.D + a] = real(s * dphi(kj[a]));
      }
    if (dv) {
      std::fill(dn, dn + d.Dv, 0.0);
      for (int64_t a = 0; a < d.D; ++a)
        for (int64_t e = 0; e < d.Dv; ++e) dn[e] += R[a * d.Dv + e] * f[a];
      for (int64_t e = 0; e < d.Dv; ++e) dv[j * d.Dv + e] = real(dn[e]);
    }
  }
}

// Slices run in parallel; each is (Tq + Tk) D Dv work.
template <class F>
void for_each_slice(const Dims& d, const F& f) {
  const int64_t work = (d.Tq + d.Tk) * (d.D * d.Dv + 1);
  parallel_for(d.BH, kGrainElementwise / (work + 1) + 1, [&](int64_t s0, int64_t s1) {
    for (int64_t s = s0; s < s1; ++s) f(s);
  });
}

}  // namespace

Tensor linear_attention(const Tensor& q, const Tensor& k, const Tensor& v, bool causal,
                        const Tensor& key_padding) {
  const Dims d = check_shapes(q, k, v, causal, key_padding);
  Shape os = q.shape();
  os[os.size() - 1] = d.Dv;
  Tensor out = empty(os);  // (B, [H,] Tq, Dv)
  const real *pq = q.data(), *pk = k.data(), *pv = v.data();
  const real* pm = key_padding.defined() ? key_padding.data() : nullptr;
  real* po = out.data();
  for_each_slice(d, [&](int64_t s) {
    forward_slice(d, pq + s * d.Tq * d.D, pk + s * d.Tk * d.D, pv + s * d.Tk * d.Dv,
                  pm ? pm + (s / d.H) * d.Tk : nullptr, po + s * d.Tq * d.Dv);
  });

  const Tensor kp = key_padding.defined() ? key_padding.detach() : Tensor();  // a mask: no gradient
  return record(kOp, out, {q, k, v}, kDoubleBackward, [q = SavedTensor(q), k = SavedTensor(k), v = SavedTensor(v),
                                      kp = SavedTensor(kp), d, causal](const Tensor& dy, Grads& g) {
    if (g.create_graph())  // the composed twin (composed_backward.h)
      return detail::composed_gradients([&](const std::vector<Tensor>& in) {
        return linear_attention_reference(in[0], in[1], in[2], causal, kp);
      }, {q, k, v}, dy, g);
    for (int i = 0; i < 3; ++i)
      if (g.needs(i)) g[i] = empty((i == 0 ? q : i == 1 ? k : v).shape());
    real *dq = g.needs(0) ? g[0].data() : nullptr, *dk = g.needs(1) ? g[1].data() : nullptr,
         *dv = g.needs(2) ? g[2].data() : nullptr;
    const real *pq = q.data(), *pk = k.data(), *pv = v.data(), *pdy = dy.data();
    const real* pm = kp.defined() ? kp.data() : nullptr;
    for_each_slice(d, [&](int64_t s) {
      const int64_t qo = s * d.Tq * d.D, ko = s * d.Tk * d.D, vo = s * d.Tk * d.Dv;
      backward_slice(d, pq + qo, pk + ko, pv + vo, pm ? pm + (s / d.H) * d.Tk : nullptr,
                     pdy + s * d.Tq * d.Dv, dq ? dq + qo : nullptr, dk ? dk + ko : nullptr,
                     dv ? dv + vo : nullptr);
    });
  });
}

// A_ij = phi(q_i)^T phi(k_j) m_j [j <= last(i)];   out = (A V) / (A 1)
Tensor linear_attention_reference(const Tensor& q, const Tensor& k, const Tensor& v, bool causal,
                                  const Tensor& key_padding) {
  check_shapes(q, k, v, causal, key_padding);
  const int64_t Tq = q.size(-2), Tk = k.size(-2);
  const Tensor qf = elu(q) + 1;  // (B, [H,] Tq, D)
  Tensor kf = elu(k) + 1;        // (B, [H,] Tk, D)
  if (key_padding.defined()) {   // m (B, 1.., Tk, 1)
    std::vector<int64_t> ms(k.dim(), 1);
    ms.front() = k.size(0);
    ms[ms.size() - 2] = Tk;
    kf = kf * ne(key_padding.detach(), 0).reshape(Shape(ms));
  }
  Tensor A = matmul(qf, kf.transpose(-2, -1));  // (B, [H,] Tq, Tk)
  if (causal) A = A * causal_mask(Tq, Tk);  // (Tq, Tk)
  const Tensor num = matmul(A, v);        // (B, [H,] Tq, Dv)
  const Tensor den = sum(A, -1, true);    // (B, [H,] Tq, 1)
  return num / (den + eq(den, 0));        // a query that sees no key: 0 / 1 = 0
}

}  // namespace heed

// flash_attention.cpp - tiled attention: forward with an online softmax, backward from the
// saved log-sum-exp (FlashAttention-2, Algorithms 1 and 2), both over Br x Bc tiles.
//
// For one (batch, head): Q_i is the i-th block of Br query rows, K_j and V_j the j-th
// block of Bc key rows, S the (Br, Bc) tile of scores between them; r a row, c a column.
//
//   forward, for each query block i (one task; tasks run in parallel):
//     0. m = -inf,  l = 0,  A = 0                   m, l (Br)   A (Br, Dv) accumulator
//     for each key block j, stopping at the first one entirely above the causal diagonal:
//     1. S = scale * Q_i K_j^T                      (Br, Bc)   gemm, K_j transposed
//     2. S[r, c] = -inf where key c is hidden from query r   (causal, padding, mask)
//     3. m' = max(m, rowmax(S))
//     4. P = exp(S - m')                            (a row with m' = -inf: P = 0)
//     5. a = exp(m - m');  l = a * l + rowsum(P);  A = a * A;  m = m'
//     6. A += P V_j                                 (Br, Dv)   gemm
//     7. O_i = A / l                                (a row with l = 0: O = 0)
//     8. L_i = m + log(l)                           (a row with l = 0: L = -inf)
//   saved: q, k, v, O, L (B, H, Tq) and the masks; never the scores.
//   Exact, not approximate: after the last key block m is the row max over all visible
//   keys, l = sum_c exp(S_c - m) and A = sum_c exp(S_c - m) v_c, so A / l = softmax(S) V.
//
//   backward, given dO (B, H, Tq, Dv):
//     Delta = rowsum(dO * O)                        (Tq)   = rowsum(P * dP) over all keys
//     then each visible tile replays the forward to its final probabilities and undoes it:
//     1-2.     S = scale * Q_i K_j^T, masked        recomputed exactly as forward
//     3-5, 8.  P = exp(S - L_i)                     the final softmax, exp(S - m) / l
//     undo 6-7, "A += P V_j; O = A / l" (O = P V):   dV_j += P^T dO_i;  dP = dO_i V_j^T
//     undo 3-5, "P = exp(S - m')" (P = softmax(S)):  dS = P * (dP - Delta_i)
//     undo 2, "S = -inf where hidden":               P = 0 there, so dS = 0: no gradient
//     undo 1, "S = scale * Q_i K_j^T":   dQ_i += scale * dS K_j;  dK_j += scale * dS^T Q_i
//   Race-free in parallel, two ways (FlashBackward in the header):
//     by_head    one task per head: for each j, for each i, all of the above
//     by_blocks  pass A, one task per (head, query block i): all j, writes only dQ_i;
//                pass B, one task per (head, key block j): all i, writes only dK_j, dV_j
//                (both passes recompute S and dP)
//
// Working memory per thread: S and dP tiles (Br x Bc each), A (Br x Dv), m and l (Br),
// taken from heed's allocator before the parallel region (so alloc::stats() counts them).
// Inside the region every gemm runs single-threaded (core/parallel.h, OpenBLAS's OpenMP
// build), so each thread multiplies its own tiles.
#include "flash_attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "../core/allocator.h"
#include "../core/blas.h"
#include "../core/elementwise.h"
#include "../core/error.h"
#include "../core/parallel.h"
#include "arith.h"
#include "linalg.h"
#include "node.h"
#include "scaled_dot_product.h"

namespace heed {

namespace {

constexpr const char* kOp = "flash_attention";
constexpr real kNegInf = -std::numeric_limits<real>::infinity();

template <class T>
using Buffer = std::vector<T, CachingAllocator<T>>;  // scratch from heed's allocator

// The sizes, tiles and masks of one call, as the kernels read them.
struct Geometry {
  int64_t B, H, Tq, Tk, D, Dv;
  int64_t Br, Bc;               // tile rows (queries), tile columns (keys)
  real scale;
  bool causal;                  // query r sees key c when c <= nn::causal_last_key(r, Tq, Tk)
  const real* pad = nullptr;    // key padding (B, Tk), or null
  const real* mask = nullptr;   // full mask, or null, element (b, h, r, c) at
  int64_t mb = 0, mh = 0, mr = 0, mc = 0;  // b*mb + h*mh + r*mr + c*mc (0 on broadcast dims)

  int64_t q_blocks() const { return (Tq + Br - 1) / Br; }
  int64_t k_blocks() const { return (Tk + Bc - 1) / Bc; }
  // Causal and key block j starts after the last key that query block i's last row sees:
  // the whole tile is hidden and is never computed (nor is any later key block).
  bool skipped(int64_t i, int64_t j) const {
    const int64_t last_row = std::min(Tq, (i + 1) * Br) - 1;
    return causal && j * Bc > nn::causal_last_key(last_row, Tq, Tk);
  }
};

// Step 4 on one row of a tile: s[c] = exp(s[c] - shift), returns sum_c s[c]: the shared
// vectorised sum (row_accumulate, core/elementwise.h) around fastmath::exp (core/fastmath.h);
// exp(-inf) = 0 exactly, so a hidden key adds nothing.
double exp_row(real* s, int64_t n, real shift) {
  return row_accumulate(n, [s, shift](int64_t c) { return s[c] = fastmath::exp(s[c] - shift); });
}

// A tile's place: head bh = b * H + h, query rows [i0, i0 + br), key rows [j0, j0 + bc).
struct Tile {
  int64_t bh, i0, br, j0, bc;
};

Tile tile(const Geometry& g, int64_t bh, int64_t i, int64_t j) {
  const int64_t i0 = i * g.Br, j0 = j * g.Bc;
  return {bh, i0, std::min(g.Br, g.Tq - i0), j0, std::min(g.Bc, g.Tk - j0)};
}

// Steps 1-2: S = scale * Q_i K_j^T (br, bc), then -inf where a key is hidden.
void scores(const Geometry& g, const Tile& t, const real* q, const real* k, real* S) {
  const real* Qi = q + (t.bh * g.Tq + t.i0) * g.D;  // (br, D)
  const real* Kj = k + (t.bh * g.Tk + t.j0) * g.D;  // (bc, D)
  gemm(false, true, t.br, t.bc, g.D, g.scale, Qi, g.D, Kj, g.D, 0, S, t.bc);
  const int64_t b = t.bh / g.H, h = t.bh % g.H;
  const real* pad = g.pad ? g.pad + b * g.Tk + t.j0 : nullptr;
  for (int64_t r = 0; r < t.br; ++r) {
    real* s = S + r * t.bc;
    if (g.causal)  // hidden: key j0 + c > causal_last_key(i0 + r)
      for (int64_t c = std::max<int64_t>(0, nn::causal_last_key(t.i0 + r, g.Tq, g.Tk) - t.j0 + 1);
           c < t.bc; ++c)
        s[c] = kNegInf;
    if (pad)
      for (int64_t c = 0; c < t.bc; ++c)
        if (!nn::real_key(pad, c)) s[c] = kNegInf;
    if (g.mask) {
      const real* mrow = g.mask + b * g.mb + h * g.mh + (t.i0 + r) * g.mr + t.j0 * g.mc;
      for (int64_t c = 0; c < t.bc; ++c)
        if (mrow[c * g.mc] == 0) s[c] = kNegInf;
    }
  }
}

// Steps 0-8 for query block i of head bh, writing O_i (br, Dv) and L_i (br).
// Scratch: S (Br, Bc), A (Br, Dv), m (Br), l (Br).
void forward_block(const Geometry& g, int64_t bh, int64_t i, const real* q, const real* k,
                   const real* v, real* o, real* lse, real* S, real* A, real* m, double* l) {
  const Tile first = tile(g, bh, i, 0);
  const int64_t br = first.br, Dv = g.Dv;
  std::fill(m, m + br, kNegInf);  // 0. m = -inf, l = 0, A = 0
  std::fill(l, l + br, 0.0);
  std::fill(A, A + br * Dv, real(0));
  for (int64_t j = 0; j < g.k_blocks() && !g.skipped(i, j); ++j) {
    const Tile t = tile(g, bh, i, j);
    scores(g, t, q, k, S);  // 1-2. S = scale * Q_i K_j^T, masked
    for (int64_t r = 0; r < br; ++r) {
      real* s = S + r * t.bc;
      const real mx = std::max(m[r], row_max(s, t.bc));  // 3. m' = max(m, rowmax(S))
      if (mx == kNegInf) {  // nothing visible to this row yet: P = 0, m, l, A unchanged
        std::fill(s, s + t.bc, real(0));
        continue;
      }
      const double rowsum = exp_row(s, t.bc, mx);  // 4. P = exp(S - m')
      const real a = std::exp(m[r] - mx);  // 5. a = exp(m - m'); l = a*l + rowsum(P); A = a*A
      l[r] = a * l[r] + rowsum;
      if (a != 1)
        for (int64_t d = 0; d < Dv; ++d) A[r * Dv + d] *= a;
      m[r] = mx;
    }
    const real* Vj = v + (bh * g.Tk + t.j0) * Dv;  // 6. A += P V_j
    gemm(false, false, br, Dv, t.bc, 1, S, t.bc, Vj, Dv, 1, A, Dv);
  }
  for (int64_t r = 0; r < br; ++r) {
    real* orow = o + (bh * g.Tq + first.i0 + r) * Dv;
    real& L = lse[bh * g.Tq + first.i0 + r];
    if (l[r] == 0) {  // no visible key: O = 0, L = -inf
      std::fill(orow, orow + Dv, real(0));
      L = kNegInf;
      continue;
    }
    const double inv = 1 / l[r];  // 7. O_i = A / l
    for (int64_t d = 0; d < Dv; ++d) orow[d] = real(A[r * Dv + d] * inv);
    L = real(m[r] + std::log(l[r]));  // 8. L_i = m + log(l)
  }
}

// Backward's replay of steps 1-5 and 8: P = exp(S - L_i), with P = 0 in rows L = -inf.
void probabilities(const Geometry& g, const Tile& t, const real* q, const real* k,
                   const real* lse, real* P) {
  scores(g, t, q, k, P);  // 1-2.
  for (int64_t r = 0; r < t.br; ++r) {
    const real L = lse[t.bh * g.Tq + t.i0 + r];
    real* p = P + r * t.bc;
    if (L == kNegInf) std::fill(p, p + t.bc, real(0));
    else exp_row(p, t.bc, L);
  }
}

// dP = dO_i V_j^T, then (undo 3-5) dS = P * (dP - Delta_i), in place in dP.
void score_grads(const Geometry& g, const Tile& t, const real* v, const real* dO,
                 const real* delta, const real* P, real* dP) {
  const real* dOi = dO + (t.bh * g.Tq + t.i0) * g.Dv;  // (br, Dv)
  const real* Vj = v + (t.bh * g.Tk + t.j0) * g.Dv;    // (bc, Dv)
  gemm(false, true, t.br, t.bc, g.Dv, 1, dOi, g.Dv, Vj, g.Dv, 0, dP, t.bc);
  for (int64_t r = 0; r < t.br; ++r) {
    const real dr = delta[t.bh * g.Tq + t.i0 + r];
    for (int64_t c = 0; c < t.bc; ++c) dP[r * t.bc + c] = P[r * t.bc + c] * (dP[r * t.bc + c] - dr);
  }
}

// The threads run_tasks uses: all of OpenMP's, or 1 inside another parallel region.
int threads() {
#ifdef _OPENMP
  if (omp_in_parallel()) return 1;
#endif
  return get_num_threads();
}

// Runs task(t, thread) for t in [0, n) on threads() threads with a dynamic schedule
// (causal tasks differ in cost); `thread` < threads() picks the caller's scratch.
template <class F>
void run_tasks(int64_t n, const F& task) {
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) if (n > 1 && threads() > 1)
  for (int64_t t = 0; t < n; ++t) task(t, omp_get_thread_num());
#else
  for (int64_t t = 0; t < n; ++t) task(t, 0);
#endif
}

Geometry geometry(const Tensor& q, const Tensor& k, const Tensor& v, const nn::AttentionMask& m,
                  double scale, const FlashOptions& options) {
  nn::check_qkv(kOp, q, k, v);
  HEED_CHECK(options.rows() >= 1 && options.cols() >= 1, kOp, "tile sizes must be >= 1, got ",
             options.rows(), " x ", options.cols());
  const bool heads = q.dim() == 4;
  Geometry g;
  g.B = q.size(0);
  g.H = heads ? q.size(1) : 1;
  g.Tq = q.size(-2), g.Tk = k.size(-2), g.D = q.size(-1), g.Dv = v.size(-1);
  g.Br = options.rows(), g.Bc = options.cols();
  g.scale = real(scale);
  g.causal = m.is_causal();
  Shape s = heads ? Shape{g.B, g.H, g.Tq, g.Tk} : Shape{g.B, g.Tq, g.Tk};  // the scores
  nn::check_mask(kOp, s, m);
  if (m.key_padding().defined()) g.pad = m.key_padding().data();
  if (m.mask().defined()) {  // strides of the mask broadcast to s, right-aligned
    s = broadcast_strides(m.mask().shape(), s);
    g.mask = m.mask().data();
    g.mb = s[0], g.mh = heads ? s[1] : 0, g.mr = s[s.size() - 2], g.mc = s[s.size() - 1];
  }
  return g;
}

// Pass A, one task: dQ_i = sum_j scale * dS_ij K_j.  Scratch: P, dS (Br, Bc).
void dq_block(const Geometry& g, int64_t bh, int64_t i, const real* q, const real* k,
              const real* v, const real* dO, const real* lse, const real* delta, real* dq,
              real* P, real* dS) {
  for (int64_t j = 0; j < g.k_blocks() && !g.skipped(i, j); ++j) {
    const Tile t = tile(g, bh, i, j);
    probabilities(g, t, q, k, lse, P);       // 1-5, 8. P = exp(S - L_i)
    score_grads(g, t, v, dO, delta, P, dS);  // undo 6-7 and 3-5: dS = P * (dO_i V_j^T - Delta_i)
    const real* Kj = k + (bh * g.Tk + t.j0) * g.D;  // undo 1: dQ_i += scale * dS K_j
    gemm(false, false, t.br, g.D, t.bc, g.scale, dS, t.bc, Kj, g.D, 1,
         dq + (bh * g.Tq + t.i0) * g.D, g.D);
  }
}

// Pass B, one task: dV_j = sum_i P_ij^T dO_i,  dK_j = sum_i scale * dS_ij^T Q_i, and
// when dq is given (by_head: the task owns the head) also dQ_i += scale * dS_ij K_j.
// Scratch: P, dS (Br, Bc).
void dkv_block(const Geometry& g, int64_t bh, int64_t j, const real* q, const real* k,
               const real* v, const real* dO, const real* lse, const real* delta, real* dq,
               real* dk, real* dv, real* P, real* dS) {
  for (int64_t i = 0; i < g.q_blocks(); ++i) {
    if (g.skipped(i, j)) continue;  // this key block is above the diagonal for query block i
    const Tile t = tile(g, bh, i, j);
    probabilities(g, t, q, k, lse, P);  // 1-5, 8. P = exp(S - L_i)
    if (dv)  // undo 6-7: dV_j += P^T dO_i
      gemm(true, false, t.bc, g.Dv, t.br, 1, P, t.bc, dO + (bh * g.Tq + t.i0) * g.Dv, g.Dv, 1,
           dv + (bh * g.Tk + t.j0) * g.Dv, g.Dv);
    if (!dk && !dq) continue;
    score_grads(g, t, v, dO, delta, P, dS);  // undo 6-7 and 3-5: dS = P * (dP - Delta_i)
    if (dk)  // undo 1: dK_j += scale * dS^T Q_i
      gemm(true, false, t.bc, g.D, t.br, g.scale, dS, t.bc, q + (bh * g.Tq + t.i0) * g.D, g.D, 1,
           dk + (bh * g.Tk + t.j0) * g.D, g.D);
    if (dq)  // undo 1: dQ_i += scale * dS K_j
      gemm(false, false, t.br, g.D, t.bc, g.scale, dS, t.bc, k + (bh * g.Tk + t.j0) * g.D, g.D, 1,
           dq + (bh * g.Tq + t.i0) * g.D, g.D);
  }
}

}  // namespace

Tensor flash_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                       const nn::AttentionMask& mask, std::optional<double> scale,
                       const FlashOptions& options) {
  const Geometry g = geometry(q, k, v, mask, nn::attention_scale(q, scale), options);
  Shape os = q.shape();
  os[os.size() - 1] = g.Dv;
  Tensor o = empty(os);                       // (B, H, Tq, Dv)
  Tensor lse = empty(Shape{g.B, g.H, g.Tq});  // L
  const int64_t BH = g.B * g.H, nq = g.q_blocks(), nt = threads();
  {
    const int64_t per = g.Br * g.Bc + g.Br * g.Dv + g.Br;  // S, A, m
    Buffer<real> scratch(nt * per);
    Buffer<double> sums(nt * g.Br);  // l
    const real *pq = q.data(), *pk = k.data(), *pv = v.data();
    real *po = o.data(), *pl = lse.data();
    run_tasks(BH * nq, [&](int64_t task, int th) {  // the longest causal blocks first
      const int64_t bh = task % BH, i = nq - 1 - task / BH;
      real* S = scratch.data() + th * per;
      forward_block(g, bh, i, pq, pk, pv, po, pl, S, S + g.Br * g.Bc,
                    S + g.Br * g.Bc + g.Br * g.Dv, sums.data() + th * g.Br);
    });
  }
  const Tensor pad = mask.key_padding().defined() ? mask.key_padding().detach() : Tensor();
  const Tensor full = mask.mask().defined() ? mask.mask().detach() : Tensor();
  // saved: q, k, v, O, L; pad and full only keep g.pad and g.mask valid
  return record(kOp, o, {q, k, v}, [q = q.detach(), k = k.detach(), v = v.detach(), o = o.detach(),
                                    lse, pad, full, g, backward = options.backward()](
                                       const Tensor& dO, Grads& gr) {
    const int64_t BH = g.B * g.H, nq = g.q_blocks(), nk = g.k_blocks(), nt = threads();
    const bool need_scores = gr.needs(0) || gr.needs(1);  // dS feeds dQ and dK only
    Tensor dq = gr.needs(0) ? zeros(q.shape()) : Tensor();
    Tensor dk = gr.needs(1) ? zeros(k.shape()) : Tensor();
    Tensor dv = gr.needs(2) ? zeros(v.shape()) : Tensor();
    const real *pq = q.data(), *pk = k.data(), *pv = v.data(), *pdo = dO.data(),
               *pl = lse.data();
    Buffer<real> delta(need_scores ? BH * g.Tq : 0);  // Delta = rowsum(dO * O)
    const real* po = o.data();
    run_tasks(need_scores ? BH : 0, [&](int64_t bh, int) {
      for (int64_t r = bh * g.Tq; r < (bh + 1) * g.Tq; ++r) {
        double s = 0;
        for (int64_t d = 0; d < g.Dv; ++d) s += double(pdo[r * g.Dv + d]) * po[r * g.Dv + d];
        delta[r] = real(s);
      }
    });
    const int64_t per = 2 * g.Br * g.Bc;  // P, dS
    Buffer<real> scratch(nt * per);
    real *pdq = dq.defined() ? dq.data() : nullptr, *pdk = dk.defined() ? dk.data() : nullptr,
         *pdv = dv.defined() ? dv.data() : nullptr;
    const bool by_head = backward == FlashBackward::by_head ||
                         (backward == FlashBackward::automatic && BH % nt == 0);
    if (by_head) {
      run_tasks(BH, [&](int64_t bh, int th) {
        real* P = scratch.data() + th * per;
        for (int64_t j = 0; j < nk; ++j)
          dkv_block(g, bh, j, pq, pk, pv, pdo, pl, delta.data(), pdq, pdk, pdv, P, P + g.Br * g.Bc);
      });
    } else {
      if (pdq)  // pass A, the longest causal query blocks first
        run_tasks(BH * nq, [&](int64_t task, int th) {
          real* P = scratch.data() + th * per;
          dq_block(g, task % BH, nq - 1 - task / BH, pq, pk, pv, pdo, pl, delta.data(), pdq, P,
                   P + g.Br * g.Bc);
        });
      if (pdk || pdv)  // pass B, the longest causal key blocks (the first ones) first
        run_tasks(BH * nk, [&](int64_t task, int th) {
          real* P = scratch.data() + th * per;
          dkv_block(g, task % BH, task / BH, pq, pk, pv, pdo, pl, delta.data(), nullptr, pdk, pdv,
                    P, P + g.Br * g.Bc);
        });
    }
    if (gr.needs(0)) gr[0] = dq;
    if (gr.needs(1)) gr[1] = dk;
    if (gr.needs(2)) gr[2] = dv;
  });
}

// c = softmax(mask(matmul(q, k^T) * scale)) v, through the shared attention core.
Tensor flash_attention_composed(const Tensor& q, const Tensor& k, const Tensor& v,
                                const nn::AttentionMask& mask, std::optional<double> scale) {
  nn::check_qkv("flash_attention_composed", q, k, v);
  const Tensor e = matmul(q, k.transpose(-2, -1)) * real(nn::attention_scale(q, scale));
  return nn::attend("flash_attention_composed", e, v, mask).context;
}

}  // namespace heed

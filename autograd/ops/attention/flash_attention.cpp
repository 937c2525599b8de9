// flash_attention.cpp - tiled attention: forward with an online softmax, backward from the
// saved log-sum-exp (FlashAttention-2, Algorithms 1 and 2), both over Br x Bc tiles.
//
// For one (batch, head): Q_i is the i-th block of Br query rows, K_j and V_j the j-th
// block of Bc key rows, S the (Br, Bc) tile of scores between them; r a row, c a column.
//
//   forward, for each query block i (one task; tasks run in parallel):
//     0. m = -inf,  l = 0,  A = 0                   m, l (Br)   A (Br, Dv) accumulator
//     for each key block j, stopping at the first one entirely above the causal diagonal
//     (with a block layout, for each kept key block j of row i; autograd/ops/attention/block_layout.h):
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
// and each thread's packed key block (KeyBlock, below), all taken from heed's allocator
// before the parallel region (so alloc::stats() counts them, and nothing in the region
// allocates).
// Each thread multiplies its own tiles with heed's register kernel (core/packed_gemm.h) on
// the calling thread: the right-hand operands are packed per key block (K_j, V_j), once for
// all the query blocks that meet it in the backward, and the two that change with the query
// block (dO_i, Q_i) per product. Against a BLAS call per tile this skips BLAS's copy of both
// operands per call and its extra pass over C for beta = 0 (with OpenBLAS those were a large
// share of an attention step at T 2048; bench_attention's attn_T2048 rows time the step). A
// query block of one row (a decoding step) is the
// exception: its two products are matrix-vector, done by gemm (cblas gemv) on K_j and V_j
// in place, since a pack would copy the whole block for that one row.
#include "flash_attention.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include "../../../core/allocator.h"
#include "../../../core/blas.h"
#include "../../../core/packed_gemm.h"
#include "../../../core/elementwise.h"
#include "../../../core/error.h"
#include "../../../core/parallel.h"
#include "../arith.h"
#include "../linalg.h"
#include "../../engine/node.h"
#include "head_layout.h"
#include "scaled_dot_product.h"

namespace heed {

namespace {

constexpr const char* kOp = "flash_attention";
constexpr real kNegInf = -std::numeric_limits<real>::infinity();

template <class T>
using Buffer = std::vector<T, CachingAllocator<T>>;  // scratch from heed's allocator

// The blocks one walk over a row or column of tiles visits, ascending: the indices
// [first, last), or with a block layout the entries [first, last) of its sorted list.
struct Blocks {
  const int64_t* list;
  int64_t first, last;
  struct It {
    const int64_t* list;
    int64_t e;
    int64_t operator*() const { return list ? list[e] : e; }
    It& operator++() { return ++e, *this; }
    bool operator!=(const It& o) const { return e != o.e; }
  };
  It begin() const { return {list, first}; }
  It end() const { return {list, last}; }
};

// The sizes of one call: batch, heads, queries, keys, the q/k and the v width.
struct Sizes {
  int64_t B, H, Tq, Tk, D, Dv;
};

// The sizes, tiles, layouts and masks of one call, as the kernels read them.
struct Geometry : Sizes {
  HeadLayout q, k, v, o;        // where each operand's heads live (dO as O, dq as q, ...)
  int64_t Br, Bc;               // tile rows (queries), tile columns (keys)
  real scale;
  bool causal;                  // query r sees key c when c <= causal_last_key(r, Tq, Tk)
  const real* pad = nullptr;    // key padding (B, Tk), or null
  const real* mask = nullptr;   // full mask, or null, element (b, h, r, c) at
  int64_t mb = 0, mh = 0, mr = 0, mc = 0;  // b*mb + h*mh + r*mr + c*mc (0 on broadcast dims)
  BlockLayout blocks;       // block-sparse: only its kept tiles exist (undefined: all)

  int64_t q_blocks() const { return (Tq + Br - 1) / Br; }
  int64_t k_blocks() const { return (Tk + Bc - 1) / Bc; }
  // Causal and key block j starts after the last key that query block i's last row sees:
  // the whole tile is hidden and is never computed (nor is any later key block).
  // The composed form multiplies the causal tiles never computed by weight 0, so a NaN or
  // inf in them still reaches dq, dk, dv and O; flash puts those back from one scan. Not
  // with a block layout: block-sparse attention never reads a block it does not visit.
  bool replays_skipped() const { return causal && !blocks.defined(); }
  bool skipped(int64_t i, int64_t j) const {
    const int64_t last_row = std::min(Tq, (i + 1) * Br) - 1;
    return causal && j * Bc > causal_last_key(last_row, Tq, Tk);
  }
  // The key blocks query block i of head bh meets: all, or the layout's kept ones, up to
  // the first skipped one.
  Blocks key_blocks(int64_t bh, int64_t i) const {
    const int64_t* list = blocks.defined() ? blocks.key_blocks(bh % H, i).first : nullptr;
    const int64_t n = blocks.defined() ? blocks.key_blocks(bh % H, i).size() : k_blocks();
    int64_t last = 0;
    while (last < n && !skipped(i, list ? list[last] : last)) ++last;
    return {list, 0, last};
  }
  // The query blocks that meet key block j of head bh: all, or the layout's, from the first
  // not skipped (a later query block sees more keys).
  Blocks query_blocks(int64_t bh, int64_t j) const {
    const int64_t* list = blocks.defined() ? blocks.query_blocks(bh % H, j).first : nullptr;
    const int64_t n = blocks.defined() ? blocks.query_blocks(bh % H, j).size() : q_blocks();
    int64_t first = 0;
    while (first < n && skipped(list ? list[first] : first, j)) ++first;
    return {list, first, n};
  }
};

// Step 4 on one row of a tile: s[c] = exp(s[c] - shift), returns sum_c s[c]: the shared
// vectorised sum (row_accumulate, core/elementwise.h) around fastmath::exp (core/fastmath.h);
// exp(-inf) = 0 exactly, so a hidden key adds nothing.
double exp_row(real* s, int64_t n, real shift) {
  return row_accumulate(n, [s, shift](int64_t c) { return s[c] = fastmath::exp(s[c] - shift); });
}

// max(a, b), NaN if either is NaN: a NaN score makes its row NaN, as in the composed
// softmax (std::max(a, NaN) would return a and drop it).
inline real nan_max(real a, real b) { return a != a || b != b ? a + b : a > b ? a : b; }

// A tile's place: head bh = b * H + h, query rows [i0, i0 + br), key rows [j0, j0 + bc).
// keep: a block layout's partial block, its 0/1 mask with rows Bc apart (else null).
struct Tile {
  int64_t bh, b, h, i0, br, j0, bc;
  const uint8_t* keep = nullptr;
};

Tile tile(const Geometry& g, int64_t bh, int64_t i, int64_t j) {
  const int64_t i0 = i * g.Br, j0 = j * g.Bc;
  return {bh, bh / g.H, bh % g.H, i0, std::min(g.Br, g.Tq - i0), j0, std::min(g.Bc, g.Tk - j0),
          g.blocks.defined() ? g.blocks.block_mask(bh % g.H, i, j) : nullptr};
}

// Row r of tile t sees at most keys [j0, j0 + n) under causal: every later column is
// -inf (step 2), exp makes it 0, so steps 3-4 read only the first n (on the diagonal
// tiles, about half the exps).
int64_t causal_cols(const Geometry& g, const Tile& t, int64_t r) {
  if (!g.causal) return t.bc;
  return std::clamp<int64_t>(causal_last_key(t.i0 + r, g.Tq, g.Tk) - t.j0 + 1, 0, t.bc);
}

// Key block j of one head as the tile products read it, packed for heed's register kernel
// (core/packed_gemm.h) once per block and reused by every query block that meets it (in the
// backward's key-block loops, all of them): kt = K_j^T (D, bc) for S = Q_i K_j^T, vt = V_j^T
// (Dv, bc) for dP = dO_i V_j^T, v = V_j (bc, Dv) for A += P V_j, k = K_j (bc, D) for
// dQ_i += dS K_j; `rows` is dO_i or Q_i for the backward's dV_j += P^T dO_i and
// dK_j += dS^T Q_i, packed per product. One per thread (a cache line apart: each pack writes
// the sizes), its buffers (32 KiB each at 128 x 64) sized for the largest tile before the
// parallel region, so packing there allocates nothing and cannot throw.
struct alignas(64) KeyBlock {
  PackedB kt, vt, v, k, rows;
  enum : int { kKt = 1, kVt = 2, kV = 4, kK = 8, kRows = 16 };
  static constexpr int kForward = kKt | kV, kBackward = kKt | kVt | kK | kRows;
  KeyBlock(const Geometry& g, int which) {  // room for the buffers a pass packs
    const int64_t bc = std::min(g.Bc, g.Tk), br = std::min(g.Br, g.Tq);
    if (which & kKt) reserve_b(kt, g.D, bc);
    if (which & kVt) reserve_b(vt, g.Dv, bc);
    if (which & kV) reserve_b(v, bc, g.Dv);
    if (which & kK) reserve_b(k, bc, g.D);
    if (which & kRows) reserve_b(rows, br, std::max(g.D, g.Dv));
  }
  void pack(const Geometry& g, const Tile& t, const real* k_in, const real* v_in, int which) {
    const real* Kj = k_in + g.k.at(t.b, t.h, t.j0);  // (bc, D), rows g.k.row apart
    const real* Vj = v_in + g.v.at(t.b, t.h, t.j0);  // (bc, Dv)
    if (which & kKt) pack_b(kt, Kj, true, g.k.row, g.D, t.bc);
    if (which & kVt) pack_b(vt, Vj, true, g.v.row, g.Dv, t.bc);
    if (which & kV) pack_b(v, Vj, false, g.v.row, t.bc, g.Dv);
    if (which & kK) pack_b(k, Kj, false, g.k.row, t.bc, g.D);
  }
};

// One KeyBlock per thread, each built in place (a copy would not keep the reserved room).
std::vector<KeyBlock> key_blocks(const Geometry& g, int64_t threads, int which) {
  std::vector<KeyBlock> kb;
  kb.reserve(threads);
  for (int64_t t = 0; t < threads; ++t) kb.emplace_back(g, which);
  return kb;
}

// s[c] = value for every key c of row r of tile t hidden from its query (causal, padding,
// mask): step 2 with value = -inf; the backward's dS = 0 there with value = 0.
void hide(const Geometry& g, const Tile& t, int64_t r, real* s, real value) {
  std::fill(s + causal_cols(g, t, r), s + t.bc, value);  // key j0 + c > causal_last_key(i0 + r)
  if (g.pad) {
    const real* pad = g.pad + t.b * g.Tk + t.j0;
    for (int64_t c = 0; c < t.bc; ++c)
      if (!real_key(pad, c)) s[c] = value;
  }
  if (g.mask) {
    const real* mrow = g.mask + t.b * g.mb + t.h * g.mh + (t.i0 + r) * g.mr + t.j0 * g.mc;
    for (int64_t c = 0; c < t.bc; ++c)
      if (mrow[c * g.mc] == 0) s[c] = value;
  }
  if (t.keep)  // a partial block of a block layout
    for (int64_t c = 0; c < t.bc; ++c)
      if (!t.keep[r * g.Bc + c]) s[c] = value;
}

// Steps 1-2: S = scale * Q_i K_j^T (br, bc), then -inf where a key is hidden.
void scores(const Geometry& g, const Tile& t, const real* q, const KeyBlock& kb, real* S) {
  const real* Qi = q + g.q.at(t.b, t.h, t.i0);  // (br, D), rows g.q.row apart
  gemm_packed(false, t.br, Qi, g.q.row, kb.kt, g.scale, false, S, t.bc);
  if (g.blocks.defined()) g.blocks.count_tile();
  for (int64_t r = 0; r < t.br; ++r) hide(g, t, r, S + r * t.bc, kNegInf);
}

// The tensors of one call, each in its layout in the Geometry (dO as o, dq as q, ...). The
// forward reads q, k, v and writes o and lse; the backward reads q, k, v, o, lse, dO and
// delta and accumulates (+=) into dq, dk, dv, each null when not wanted.
struct Operands {
  const real* q = nullptr;
  const real* k = nullptr;
  const real* v = nullptr;
  real* o = nullptr;
  real* lse = nullptr;            // L   (B, H, Tq)
  const real* dO = nullptr;
  const real* delta = nullptr;    // Delta = rowsum(dO * O)   (B, H, Tq)
  real* dq = nullptr;
  real* dk = nullptr;
  real* dv = nullptr;
};

// One thread's scratch for one task: the forward's S (Br, Bc), A (Br, Dv), m (Br) and l (Br);
// the backward's P = S and dS = A, (Br, Bc) each; and its packed key block.
struct Scratch {
  real* S;
  real* A;
  real* m;
  double* l;
  KeyBlock& kb;
};

// Steps 0-8 for query block i of head bh, writing O_i (br, Dv) and L_i (br). `bad` (Dv), when
// given, is this head's last_bad_key of v (below), for the causal tiles never computed.
void forward_block(const Geometry& g, int64_t bh, int64_t i, const Operands& x,
                   const Scratch& sc, const int64_t* bad) {
  const real *q = x.q, *k = x.k, *v = x.v;
  real *o = x.o, *lse = x.lse, *S = sc.S, *A = sc.A, *m = sc.m;
  double* l = sc.l;
  KeyBlock& kb = sc.kb;
  const Tile first = tile(g, bh, i, 0);
  const int64_t br = first.br, Dv = g.Dv;
  std::fill(m, m + br, kNegInf);  // 0. m = -inf, l = 0, A = 0
  std::fill(l, l + br, 0.0);
  std::fill(A, A + br * Dv, real(0));
  // One query row (a decoding step, Tq = 1): the products are matrix-vector, which gemm
  // streams from K_j and V_j in place (core/blas.cpp, M = 1); packing each block would
  // copy all of it for one row. Same steps, same masks.
  const bool one_row = br == 1;
  const real* Qi = q + g.q.at(first.b, first.h, first.i0);  // (br, D)
  for (int64_t j : g.key_blocks(bh, i)) {
    const Tile t = tile(g, bh, i, j);
    const real* Vj = v + g.v.at(t.b, t.h, t.j0);  // (bc, Dv), rows g.v.row apart
    if (one_row) {  // 1-2. s = scale * q K_j^T (1, bc), masked
      gemm(false, true, 1, t.bc, g.D, g.scale, Qi, g.q.row, k + g.k.at(t.b, t.h, t.j0),
           g.k.row, 0, S, t.bc);
      if (g.blocks.defined()) g.blocks.count_tile();
      hide(g, t, 0, S, kNegInf);
    } else {
      kb.pack(g, t, k, v, KeyBlock::kForward);
      scores(g, t, q, kb, S);  // 1-2. S = scale * Q_i K_j^T, masked
    }
    for (int64_t r = 0; r < br; ++r) {
      real* s = S + r * t.bc;
      const int64_t n = causal_cols(g, t, r);  // s[n..bc) = -inf: P = 0 there
      std::fill(s + n, s + t.bc, real(0));
      const real mx = nan_max(m[r], row_max(s, n));  // 3. m' = max(m, rowmax(S))
      if (mx == kNegInf) {  // nothing visible to this row yet: P = 0, m, l, A unchanged
        std::fill(s, s + n, real(0));
        continue;
      }
      const double rowsum = exp_row(s, n, mx);  // 4. P = exp(S - m')
      const real a = std::exp(m[r] - mx);  // 5. a = exp(m - m'); l = a*l + rowsum(P); A = a*A
      l[r] = a * l[r] + rowsum;
      if (a != 1)
        for (int64_t d = 0; d < Dv; ++d) A[r * Dv + d] *= a;
      m[r] = mx;
    }
    if (one_row)  // 6. A += P V_j
      gemm(false, false, 1, Dv, t.bc, 1, S, t.bc, Vj, g.v.row, 1, A, Dv);
    else
      gemm_packed(false, br, S, t.bc, kb.v, 1, true, A, Dv);
  }
  // A value column with a non-finite entry in the keys of the skipped causal tiles (from
  // key block j on): NaN in every row of the block, as 0 * NaN in the composed P V.
  int64_t j = 0;  // the first causal tile never computed
  if (bad)
    while (j < g.k_blocks() && !g.skipped(i, j)) ++j;
  if (bad)
    for (int64_t d = 0; d < Dv; ++d)
      if (bad[d] >= j * g.Bc)
        for (int64_t r = 0; r < br; ++r) A[r * Dv + d] = std::numeric_limits<real>::quiet_NaN();
  for (int64_t r = 0; r < br; ++r) {
    real* orow = o + g.o.at(first.b, first.h, first.i0 + r);
    real& L = lse[bh * g.Tq + first.i0 + r];
    if (l[r] == 0) {  // no visible key: O = A (= sum_c 0 * v_c, 0 for finite v), L = -inf
      std::copy(A + r * Dv, A + (r + 1) * Dv, orow);
      L = kNegInf;
      continue;
    }
    const double inv = 1 / l[r];  // 7. O_i = A / l
    for (int64_t d = 0; d < Dv; ++d) orow[d] = real(A[r * Dv + d] * inv);
    L = real(m[r] + std::log(l[r]));  // 8. L_i = m + log(l)
  }
}

// Backward's replay of steps 1-5 and 8: P = exp(S - L_i), with P = 0 in rows L = -inf.
// A NaN row (L = NaN) is NaN at every key, hidden ones too, as the composed softmax's row.
void probabilities(const Geometry& g, const Tile& t, const real* q, const KeyBlock& kb,
                   const real* lse, real* P) {
  scores(g, t, q, kb, P);  // 1-2.
  for (int64_t r = 0; r < t.br; ++r) {
    const real L = lse[t.bh * g.Tq + t.i0 + r];
    real* p = P + r * t.bc;
    const int64_t n = L == kNegInf ? 0 : L != L ? t.bc : causal_cols(g, t, r);  // P = 0 from n
    std::fill(p + n, p + t.bc, real(0));
    exp_row(p, n, L);
  }
}

// dP = dO_i V_j^T, then (undo 3-5) dS = P * (dP - Delta_i), in place in dP.
// Undo 2 ("S = -inf where hidden") gives dS = 0 at hidden keys; P = 0 there makes that
// so by itself unless the row is NaN (L = NaN) or dP - Delta is not finite (a NaN or inf
// in v or dO: 0 * NaN = NaN), and only those rows pay for setting it.
void score_grads(const Geometry& g, const Tile& t, const KeyBlock& kb, const real* dO,
                 const real* delta, const real* lse, const real* P, real* dP) {
  const real* dOi = dO + g.o.at(t.b, t.h, t.i0);  // (br, Dv), laid out as O
  gemm_packed(false, t.br, dOi, g.o.row, kb.vt, 1, false, dP, t.bc);
  for (int64_t r = 0; r < t.br; ++r) {
    const real dr = delta[t.bh * g.Tq + t.i0 + r], L = lse[t.bh * g.Tq + t.i0 + r];
    for (int64_t c = 0; c < t.bc; ++c) dP[r * t.bc + c] = P[r * t.bc + c] * (dP[r * t.bc + c] - dr);
    if (L != L || !std::isfinite(dr)) hide(g, t, r, dP + r * t.bc, 0);
  }
}

// The threads run_tasks runs on and the per-thread scratch is sized for: the team a
// parallel_for would use now (core/parallel.h), 1 inside another parallel region.
int threads() { return detail::threads_now(); }

// Runs task(t, thread) for t in [0, n) on at most nt threads with a dynamic schedule (causal
// tasks differ in cost); `thread` < nt picks the caller's scratch. The team is asked for nt
// threads, not left to OpenMP's own count: a program may have set that higher (through
// omp_set_num_threads, or on another std::thread, where heed's setting does not reach),
// and scratch[thread] would then run past the buffers sized for nt.
template <class F>
void run_tasks(int64_t n, int nt, const F& task) {
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) if (n > 1 && nt > 1)
  for (int64_t t = 0; t < n; ++t) task(t, omp_get_thread_num());
#else
  for (int64_t t = 0; t < n; ++t) task(t, 0);
#endif
}

// Pass A, one task: dQ_i = sum_j scale * dS_ij K_j.  Scratch: P, dS (Br, Bc), the packed
// key block.
void dq_block(const Geometry& g, int64_t bh, int64_t i, const Operands& x, const Scratch& sc) {
  const real *q = x.q, *k = x.k, *v = x.v, *dO = x.dO, *lse = x.lse, *delta = x.delta;
  real *dq = x.dq, *P = sc.S, *dS = sc.A;
  KeyBlock& kb = sc.kb;
  for (int64_t j : g.key_blocks(bh, i)) {
    const Tile t = tile(g, bh, i, j);
    kb.pack(g, t, k, v, KeyBlock::kKt | KeyBlock::kVt | KeyBlock::kK);
    probabilities(g, t, q, kb, lse, P);       // 1-5, 8. P = exp(S - L_i)
    score_grads(g, t, kb, dO, delta, lse, P, dS);  // undo 6-7, 3-5: dS = P * (dO_i V_j^T - Delta_i)
    gemm_packed(false, t.br, dS, t.bc, kb.k, g.scale, true, dq + g.q.at(t.b, t.h, t.i0),
                g.q.row);  // undo 1: dQ_i += scale * dS K_j
  }
}

// Pass B, one task: dV_j = sum_i P_ij^T dO_i,  dK_j = sum_i scale * dS_ij^T Q_i, and
// when dq is given (by_head: the task owns the head) also dQ_i += scale * dS_ij K_j.
// Scratch: P, dS (Br, Bc), the key block, packed once for every query block.
void dkv_block(const Geometry& g, int64_t bh, int64_t j, const Operands& x, const Scratch& sc) {
  const real *q = x.q, *k = x.k, *v = x.v, *dO = x.dO, *lse = x.lse, *delta = x.delta;
  real *dq = x.dq, *dk = x.dk, *dv = x.dv, *P = sc.S, *dS = sc.A;
  KeyBlock& kb = sc.kb;
  kb.pack(g, tile(g, bh, 0, j), k, v, KeyBlock::kKt | (dk || dq ? KeyBlock::kVt : 0) |
                                          (dq ? KeyBlock::kK : 0));
  for (int64_t i : g.query_blocks(bh, j)) {  // causal: not those above the diagonal
    const Tile t = tile(g, bh, i, j);
    probabilities(g, t, q, kb, lse, P);  // 1-5, 8. P = exp(S - L_i)
    const int64_t qi = g.q.at(t.b, t.h, t.i0), kj = g.k.at(t.b, t.h, t.j0);
    if (dv) {  // undo 6-7: dV_j += P^T dO_i
      pack_b(kb.rows, dO + g.o.at(t.b, t.h, t.i0), false, g.o.row, t.br, g.Dv);
      gemm_packed(true, t.bc, P, t.bc, kb.rows, 1, true, dv + g.v.at(t.b, t.h, t.j0), g.v.row);
    }
    if (!dk && !dq) continue;
    score_grads(g, t, kb, dO, delta, lse, P, dS);  // undo 6-7 and 3-5: dS = P * (dP - Delta_i)
    if (dk) {  // undo 1: dK_j += scale * dS^T Q_i
      pack_b(kb.rows, q + qi, false, g.q.row, t.br, g.D);
      gemm_packed(true, t.bc, dS, t.bc, kb.rows, g.scale, true, dk + kj, g.k.row);
    }
    if (dq)  // undo 1: dQ_i += scale * dS K_j
      gemm_packed(false, t.br, dS, t.bc, kb.k, g.scale, true, dq + qi, g.q.row);
  }
}


// The sizes, scale, tiles and masks of a call whose scores are `scores` = (B, H, Tq, Tk)
// (or (B, Tq, Tk) when `heads` is false); the caller sets the layouts.
Geometry geometry(const char* op, const Sizes& sizes, bool heads, const AttentionMask& m,
                  double scale, const FlashOptions& options) {
  HEED_CHECK(options.rows() >= 1 && options.cols() >= 1, op, "tile sizes must be >= 1, got ",
             options.rows(), " x ", options.cols());
  Geometry g;
  static_cast<Sizes&>(g) = sizes;
  const int64_t B = g.B, H = g.H, Tq = g.Tq, Tk = g.Tk, D = g.D;
  // A tile longer than the sequence is the whole sequence: clamped, so Br * Bc (the scratch
  // per thread) never outgrows the scores however large the options are.
  g.Br = std::min(options.rows(), std::max<int64_t>(Tq, 1));
  g.Bc = std::min(options.cols(), std::max<int64_t>(Tk, 1));
  if (options.blocks().defined()) {  // block-sparse: the layout's blocks are the tiles
    g.blocks = options.blocks();
    const BlockLayout& L = g.blocks;
    HEED_CHECK(L.q_len() == Tq && L.k_len() == Tk && (L.heads() == 1 || L.heads() == H), op,
               "the block layout is for Tq ", L.q_len(), ", Tk ", L.k_len(), " and ", L.heads(),
               " head(s); the scores are Tq ", Tq, ", Tk ", Tk, " with ", H, " head(s)");
    g.Br = g.Bc = L.block();
  }
  // With D = 0 the scores are the empty sum 0 whatever the scale (as when the scale
  // multiplies q, as scaled_dot_product_attention does): uniform weights, O = the mean of
  // the visible values. The default 1/sqrt(0) = inf would make them inf * 0 = NaN.
  g.scale = D == 0 ? real(1) : real(scale);
  g.causal = m.is_causal();
  Shape s = heads ? Shape{B, H, Tq, Tk} : Shape{B, Tq, Tk};  // the scores
  check_mask(op, s, m);
  if (m.key_padding().defined()) g.pad = m.key_padding().data();
  if (m.mask().defined()) {  // strides of the mask broadcast to s, right-aligned
    s = broadcast_strides(m.mask().shape(), s);
    g.mask = m.mask().data();
    g.mb = s[0], g.mh = heads ? s[1] : 0, g.mr = s[s.size() - 2], g.mc = s[s.size() - 1];
  }
  return g;
}


// The composed form also multiplies the pairs the mask hides, by weight 0 (forward P V,
// backward P^T dO, dS K, dS^T Q with dS = 0 there), and 0 * NaN = 0 * inf = NaN. The tiled
// form makes those products too, except in the causal tiles it skips: query row r's block
// skips the keys from skipped_from(r) on. The helpers below put back what a non-finite
// factor there would have given, from one pass over the operand (O(T D) per head).

// The first key whose tile row r's query block skips (Tk when none is skipped).
int64_t skipped_from(const Geometry& g, int64_t r) {
  if (!g.causal) return g.Tk;
  const int64_t last = causal_last_key(std::min(g.Tq, (r / g.Br + 1) * g.Br) - 1, g.Tq, g.Tk);
  return last < 0 ? 0 : std::min(g.Tk, (last / g.Bc + 1) * g.Bc);
}

// last[d], d < width: the last key c of head (b, h) with x[c, d] not finite, -1 if none.
// Only keys some block skips matter (every use compares last[d] with a skipped_from(r)), and
// the first query block skips the most, so the scan starts at skipped_from(0): nothing at all
// for a decoding step (one query, the last, sees every key), where a scan of the whole cache
// would cost as much as the attention itself.
void last_bad_key(const Geometry& g, const HeadLayout& lay, const real* x, int64_t width,
                  int64_t b, int64_t h, int64_t* last) {
  std::fill(last, last + width, -1);
  for (int64_t c = skipped_from(g, 0); c < g.Tk; ++c) {
    const real* xc = x + lay.at(b, h, c);
    if (row_all_finite(xc, width)) continue;  // the common row: one vectorised pass
    for (int64_t d = 0; d < width; ++d)
      if (!std::isfinite(xc[d])) last[d] = c;
  }
}

// from[d], d < width: the first key skipped for some query row r of head (b, h) with
// x[r, d] not finite (or, with lse, whose L is NaN: a NaN row), Tk if none.
void first_bad_skip(const Geometry& g, const HeadLayout& lay, const real* x, int64_t width,
                    int64_t b, int64_t h, const real* lse, int64_t* from) {
  std::fill(from, from + width, g.Tk);
  for (int64_t r = 0; r < g.Tq; ++r) {
    const real* xr = x + lay.at(b, h, r);
    const bool nan_row = lse && lse[(b * g.H + h) * g.Tq + r] != lse[(b * g.H + h) * g.Tq + r];
    if (!nan_row && row_all_finite(xr, width)) continue;  // the common row: one vectorised pass
    for (int64_t d = 0; d < width; ++d)
      if (nan_row || !std::isfinite(xr[d])) from[d] = std::min(from[d], skipped_from(g, r));
  }
}

// The causal backward's share of the above, for head bh: per column, where the skipped
// products turn NaN (at[0, D): last_bad_key of k, for dq; at[D, 2D): first_bad_skip of q,
// for dk; at[2D, 2D + Dv): of dO and the NaN rows, for dv). Read in the pass that computes
// Delta, applied by fill_skipped once the gradients are summed.
void scan_skipped(const Geometry& g, int64_t bh, const real* q, const real* k, const real* dO,
                  const real* lse, int64_t* at) {
  const int64_t b = bh / g.H, h = bh % g.H;
  last_bad_key(g, g.k, k, g.D, b, h, at);
  first_bad_skip(g, g.q, q, g.D, b, h, nullptr, at + g.D);
  first_bad_skip(g, g.o, dO, g.Dv, b, h, lse, at + 2 * g.D);
}

// dq[r, d] = NaN when a key row r skips has k[., d] not finite; dk[c, d] = NaN when c is
// skipped for a row with q[r, d] not finite; dv[c, d] = NaN when c is skipped for a NaN
// row or one with dO[r, d] not finite. A head with nothing to set costs 2D + Dv compares.
void fill_skipped(const Geometry& g, const int64_t* scans, real* dq, real* dk, real* dv) {
  constexpr real kNaN = std::numeric_limits<real>::quiet_NaN();
  const int64_t w = 2 * g.D + g.Dv;
  for (int64_t bh = 0; bh < g.B * g.H; ++bh) {
    const int64_t b = bh / g.H, h = bh % g.H, *at = scans + bh * w;
    const bool any = std::any_of(at, at + g.D, [](int64_t c) { return c >= 0; }) ||
                     std::any_of(at + g.D, at + w, [&](int64_t c) { return c < g.Tk; });
    if (!any) continue;
    for (int64_t r = 0; r < g.Tq && dq; ++r) {
      const int64_t from = skipped_from(g, r);
      for (int64_t d = 0; d < g.D; ++d)
        if (at[d] >= from) dq[g.q.at(b, h, r) + d] = kNaN;
    }
    for (int64_t c = 0; c < g.Tk; ++c) {
      for (int64_t d = 0; d < g.D && dk; ++d)
        if (c >= at[g.D + d]) dk[g.k.at(b, h, c) + d] = kNaN;
      for (int64_t d = 0; d < g.Dv && dv; ++d)
        if (c >= at[2 * g.D + d]) dv[g.v.at(b, h, c) + d] = kNaN;
    }
  }
}

// The forward over every (head, query block): writes O (layout g.o) and L (B, H, Tq).
void forward_all(const Geometry& g, const Operands& x) {
  const int64_t BH = g.B * g.H, nq = g.q_blocks(), nt = threads();
  const int64_t per = g.Br * g.Bc + g.Br * g.Dv + g.Br;  // S, A, m
  Buffer<real> scratch(nt * per);
  Buffer<double> sums(nt * g.Br);  // l
  Buffer<int64_t> bad(g.replays_skipped() ? BH * g.Dv : 0);  // per head, last_bad_key of v
  for (int64_t bh = 0; g.replays_skipped() && bh < BH; ++bh)  // O(T Dv) a head: not worth a team
    last_bad_key(g, g.v, x.v, g.Dv, bh / g.H, bh % g.H, bad.data() + bh * g.Dv);
  std::vector<KeyBlock> kb = key_blocks(g, nt, KeyBlock::kForward);
  run_tasks(BH * nq, nt, [&](int64_t task, int th) {  // the longest causal blocks first
    const int64_t bh = task % BH, i = nq - 1 - task / BH;
    real* S = scratch.data() + th * per;
    const Scratch sc{S, S + g.Br * g.Bc, S + g.Br * g.Bc + g.Br * g.Dv, sums.data() + th * g.Br,
                     kb[th]};
    forward_block(g, bh, i, x, sc, g.replays_skipped() ? bad.data() + bh * g.Dv : nullptr);
  });
}

// The backward: x's dq, dk, dv (null when not wanted) accumulate (+=) in the layouts of q, k,
// v. x.delta is computed here.
void backward_all(const Geometry& g, FlashBackward schedule, Operands x) {
  const real *q = x.q, *k = x.k, *o = x.o, *dO = x.dO, *lse = x.lse;
  real *dq = x.dq, *dk = x.dk, *dv = x.dv;
  const int64_t BH = g.B * g.H, nq = g.q_blocks(), nk = g.k_blocks(), nt = threads();
  const bool need_scores = dq || dk;  // dS feeds dQ and dK only
  Buffer<real> delta(need_scores ? BH * g.Tq : 0);  // Delta = rowsum(dO * O)   (B, H, Tq)
  Buffer<int64_t> scans(g.replays_skipped() ? BH * (2 * g.D + g.Dv) : 0);  // scan_skipped, per head
  run_tasks(need_scores || g.replays_skipped() ? BH : 0, nt, [&](int64_t bh, int) {
    const int64_t b = bh / g.H, h = bh % g.H;
    if (g.replays_skipped()) scan_skipped(g, bh, q, k, dO, lse, scans.data() + bh * (2 * g.D + g.Dv));
    if (!need_scores) return;
    for (int64_t r = 0; r < g.Tq; ++r) {
      const real *dor = dO + g.o.at(b, h, r), *orow = o + g.o.at(b, h, r);
      double s = 0;
      for (int64_t d = 0; d < g.Dv; ++d) s += double(dor[d]) * orow[d];
      delta[bh * g.Tq + r] = real(s);
    }
  });
  x.delta = delta.data();
  const int64_t per = 2 * g.Br * g.Bc;  // P, dS
  Buffer<real> scratch(nt * per);
  std::vector<KeyBlock> kb = key_blocks(g, nt, KeyBlock::kBackward);
  const auto scratch_of = [&](int th) {  // P, dS
    real* P = scratch.data() + th * per;
    return Scratch{P, P + g.Br * g.Bc, nullptr, nullptr, kb[th]};
  };
  const bool by_head = schedule == FlashBackward::by_head ||
                       (schedule == FlashBackward::automatic && BH % nt == 0);
  if (by_head) {
    run_tasks(BH, nt, [&](int64_t bh, int th) {
      for (int64_t j = 0; j < nk; ++j) dkv_block(g, bh, j, x, scratch_of(th));
    });
    if (g.replays_skipped()) fill_skipped(g, scans.data(), dq, dk, dv);
    return;
  }
  if (dq)  // pass A, the longest causal query blocks first
    run_tasks(BH * nq, nt, [&](int64_t task, int th) {
      dq_block(g, task % BH, nq - 1 - task / BH, x, scratch_of(th));
    });
  if (dk || dv) {  // pass B, the longest causal key blocks (the first ones) first
    Operands kv = x;
    kv.dq = nullptr;  // pass A has it
    run_tasks(BH * nk, nt, [&](int64_t task, int th) {
      dkv_block(g, task % BH, task / BH, kv, scratch_of(th));
    });
  }
  if (g.replays_skipped()) fill_skipped(g, scans.data(), dq, dk, dv);
}

// Runs the forward into `out` (layout g.o) and records the op. q, k and v are read from
// inputs[from[0]], inputs[from[1]], inputs[from[2]] at their layouts: {0, 1, 2} for three
// tensors, {0, 0, 0} for one packed (B, T, 3E) projection, whose gradient then gets dQ,
// dK and dV written straight into its columns, with no gather or scatter ({0, 1, 1}: q
// and one packed (B, Tk, 2E) [K | V]).
Tensor attend_tiled(const char* op, const Geometry& g, const std::vector<Tensor>& inputs,
                    std::array<int, 3> from, Tensor out, const AttentionMask& mask,
                    FlashBackward schedule) {
  Tensor lse = empty(Shape{g.B, g.H, g.Tq});  // L
  Operands x;
  x.q = inputs[from[0]].data(), x.k = inputs[from[1]].data(), x.v = inputs[from[2]].data();
  x.o = out.data(), x.lse = lse.data();
  forward_all(g, x);
  SavedTensors saved;  // q, k, v (or the packed projection), then O and L
  for (const Tensor& t : inputs) saved.push_back(t.detach());
  saved.push_back(out.detach());
  saved.push_back(lse);
  // pad and full only keep g.pad and g.mask valid
  const Tensor pad = mask.key_padding().defined() ? mask.key_padding().detach() : Tensor();
  const Tensor full = mask.mask().defined() ? mask.mask().detach() : Tensor();
  return record(op, out, inputs, [saved, pad = SavedTensor(pad), full = SavedTensor(full), g, from,
                                  schedule](const Tensor& dO, Grads& gr) {
    const size_t n = saved.size() - 2;
    std::vector<Tensor> grads(n);  // zeros: the kernels accumulate
    for (size_t i = 0; i < n; ++i)
      if (gr.needs(int(i))) grads[i] = zeros(saved[i].shape());
    auto grad = [&](int which) { return data_or_null(grads[from[which]]); };
    Operands x;
    x.q = saved[from[0]].data(), x.k = saved[from[1]].data(), x.v = saved[from[2]].data();
    x.o = saved[n].data(), x.lse = saved[n + 1].data(), x.dO = dO.data();
    x.dq = grad(0), x.dk = grad(1), x.dv = grad(2);
    backward_all(g, schedule, x);
    for (size_t i = 0; i < n; ++i)
      if (gr.needs(int(i))) gr[int(i)] = grads[i];
  });
}

}  // namespace

Tensor flash_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                       const AttentionMask& mask, std::optional<double> scale,
                       const FlashOptions& options) {
  return detail::flash_attention_named(kOp, q, k, v, mask, scale, options);
}

Tensor detail::flash_attention_named(const char* op, const Tensor& q, const Tensor& k,
                                     const Tensor& v, const AttentionMask& mask,
                                     std::optional<double> scale, const FlashOptions& options) {
  check_qkv(op, q, k, v);
  const bool heads = q.dim() == 4;
  const int64_t B = q.size(0), H = heads ? q.size(1) : 1, Tq = q.size(-2), Tk = k.size(-2);
  const int64_t D = q.size(-1), Dv = v.size(-1);
  Geometry g = geometry(op, {B, H, Tq, Tk, D, Dv}, heads, mask, attention_scale(q, scale),
                        options);
  g.q = split_layout(H, Tq, D), g.k = split_layout(H, Tk, D), g.v = split_layout(H, Tk, Dv);
  g.o = split_layout(H, Tq, Dv);
  Shape os = q.shape();
  os[os.size() - 1] = Dv;
  return attend_tiled(op, g, {q, k, v}, {0, 1, 2}, empty(os), mask, options.backward());
}

Tensor flash_attention_heads(const Tensor& q, const Tensor& k, const Tensor& v,
                             int64_t num_heads, const AttentionMask& mask,
                             std::optional<double> scale, const FlashOptions& options) {
  constexpr const char* op = "flash_attention_heads";
  const int64_t H = num_heads;
  HEED_CHECK(H >= 1, op, "num_heads must be >= 1, got ", H);
  HEED_CHECK(q.dim() == 3 && k.dim() == 3 && v.dim() == 3, op,
             "q, k, v must be (B, Tq|Tk, H*D) with the heads side by side; got q ", q.shape(),
             ", k ", k.shape(), ", v ", v.shape());
  HEED_CHECK(k.size(0) == q.size(0) && v.size(0) == q.size(0) && v.size(1) == k.size(1) &&
                 k.size(2) == q.size(2) && q.size(2) % H == 0 && v.size(2) % H == 0,
             op, "q ", q.shape(), ", k ", k.shape(), ", v ", v.shape(),
             " do not fit (B, Tq, H*D), (B, Tk, H*D), (B, Tk, H*Dv) with H = ", H);
  const int64_t B = q.size(0), Tq = q.size(1), Tk = k.size(1);
  const int64_t D = q.size(2) / H, Dv = v.size(2) / H;
  Geometry g = geometry(op, {B, H, Tq, Tk, D, Dv}, true, mask,
                        scale ? *scale : 1 / std::sqrt(double(D)), options);
  g.q = side_by_side(Tq, H * D, D, 0), g.k = side_by_side(Tk, H * D, D, 0);
  g.v = side_by_side(Tk, H * Dv, Dv, 0), g.o = side_by_side(Tq, H * Dv, Dv, 0);
  return attend_tiled(op, g, {q, k, v}, {0, 1, 2}, empty({B, Tq, H * Dv}), mask,
                      options.backward());
}

Tensor flash_attention_packed(const Tensor& qkv, int64_t num_heads,
                              const AttentionMask& mask, std::optional<double> scale,
                              const FlashOptions& options) {
  constexpr const char* op = "flash_attention_packed";
  const int64_t H = num_heads;
  HEED_CHECK(H >= 1, op, "num_heads must be >= 1, got ", H);
  HEED_CHECK(qkv.dim() == 3 && qkv.size(2) % (3 * H) == 0, op, "qkv ", qkv.shape(),
             " is not (B, T, 3 * H * D) with H = ", H);
  const int64_t B = qkv.size(0), T = qkv.size(1), E = qkv.size(2) / 3, D = E / H;
  Geometry g = geometry(op, {B, H, T, T, D, D}, true, mask,
                        scale ? *scale : 1 / std::sqrt(double(D)), options);
  g.q = side_by_side(T, 3 * E, D, 0), g.k = side_by_side(T, 3 * E, D, E);
  g.v = side_by_side(T, 3 * E, D, 2 * E), g.o = side_by_side(T, E, D, 0);
  return attend_tiled(op, g, {qkv}, {0, 0, 0}, empty({B, T, E}), mask, options.backward());
}

Tensor flash_attention_packed(const Tensor& q, const Tensor& kv, int64_t num_heads,
                              const AttentionMask& mask, std::optional<double> scale,
                              const FlashOptions& options) {
  constexpr const char* op = "flash_attention_packed";
  const int64_t H = num_heads;
  HEED_CHECK(H >= 1, op, "num_heads must be >= 1, got ", H);
  HEED_CHECK(q.dim() == 3 && kv.dim() == 3 && kv.size(0) == q.size(0) && q.size(2) % H == 0 &&
                 kv.size(2) == 2 * q.size(2),
             op, "q ", q.shape(), " and kv ", kv.shape(),
             " are not (B, Tq, H*D) and (B, Tk, 2*H*D) with H = ", H);
  const int64_t B = q.size(0), Tq = q.size(1), Tk = kv.size(1), E = q.size(2), D = E / H;
  Geometry g = geometry(op, {B, H, Tq, Tk, D, D}, true, mask,
                        scale ? *scale : 1 / std::sqrt(double(D)), options);
  g.q = side_by_side(Tq, E, D, 0), g.k = side_by_side(Tk, 2 * E, D, 0);
  g.v = side_by_side(Tk, 2 * E, D, E), g.o = side_by_side(Tq, E, D, 0);
  return attend_tiled(op, g, {q, kv}, {0, 1, 1}, empty({B, Tq, E}), mask, options.backward());
}


namespace {

// k (B, H, L, D), v (B, H, L, Dv) and len in [0, L]: the storage a cache attends to.
void check_prefix(const char* op, const Tensor& k, const Tensor& v, int64_t len) {
  HEED_CHECK(k.dim() == 4 && v.dim() == 4 && v.size(0) == k.size(0) && v.size(1) == k.size(1) &&
                 v.size(2) == k.size(2),
             op, "k ", k.shape(), " and v ", v.shape(), " are not (B, H, L, D) and (B, H, L, Dv)");
  HEED_CHECK(len >= 0 && len <= k.size(2), op, "len ", len, " is outside [0, L = ", k.size(2),
             "] for k ", k.shape());
}

}  // namespace

Tensor flash_attention_prefix(const Tensor& q, const Tensor& k, const Tensor& v, int64_t len,
                              const AttentionMask& mask, std::optional<double> scale,
                              const FlashOptions& options) {
  constexpr const char* op = "flash_attention_prefix";
  check_prefix(op, k, v, len);
  HEED_CHECK(q.dim() == 4 && q.size(0) == k.size(0) && q.size(1) == k.size(1) &&
                 q.size(3) == k.size(3),
             op, "q ", q.shape(), " is not (B, H, Tq, D) for k ", k.shape());
  const int64_t B = q.size(0), H = q.size(1), Tq = q.size(2), L = k.size(2);
  const int64_t D = q.size(3), Dv = v.size(3);
  Geometry g = geometry(op, {B, H, Tq, len, D, Dv}, true, mask, attention_scale(q, scale), options);
  g.q = split_layout(H, Tq, D), g.k = split_layout(H, L, D), g.v = split_layout(H, L, Dv);
  g.o = split_layout(H, Tq, Dv);
  return attend_tiled(op, g, {q, k, v}, {0, 1, 2}, empty({B, H, Tq, Dv}), mask, options.backward());
}

Tensor flash_attention_heads_prefix(const Tensor& q, const Tensor& k, const Tensor& v,
                                    int64_t len, const AttentionMask& mask,
                                    std::optional<double> scale, const FlashOptions& options) {
  HEED_CHECK(k.dim() != 4 || (q.dim() == 3 && q.size(2) == k.size(1) * k.size(3)),
             "flash_attention_heads_prefix", "q ", q.shape(), " is not (B, Tq, H*D) for k ",
             k.shape());
  return detail::flash_attention_heads_prefix_at(q, 0, k, v, len, mask, scale, options);
}

Tensor detail::flash_attention_heads_prefix_at(const Tensor& q, int64_t q0, const Tensor& k,
                                               const Tensor& v, int64_t len,
                                               const AttentionMask& mask,
                                               std::optional<double> scale,
                                               const FlashOptions& options) {
  constexpr const char* op = "flash_attention_heads_prefix";
  check_prefix(op, k, v, len);
  const int64_t B = k.size(0), H = k.size(1), L = k.size(2), D = k.size(3), Dv = v.size(3);
  HEED_CHECK(q.dim() == 3 && q.size(0) == B && q0 >= 0 && q0 + H * D <= q.size(2), op, "q ",
             q.shape(), " has no (B, Tq, H*D) heads at column ", q0, " for k ", k.shape());
  const int64_t Tq = q.size(1);
  Geometry g = geometry(op, {B, H, Tq, len, D, Dv}, true, mask,
                        scale ? *scale : 1 / std::sqrt(double(D)), options);
  g.q = side_by_side(Tq, q.size(2), D, q0), g.k = split_layout(H, L, D);
  g.v = split_layout(H, L, Dv), g.o = side_by_side(Tq, H * Dv, Dv, 0);
  return attend_tiled(op, g, {q, k, v}, {0, 1, 2}, empty({B, Tq, H * Dv}), mask,
                      options.backward());
}

// c = softmax(mask(matmul(q, k^T) * scale)) v, through the shared attention core.
Tensor flash_attention_composed(const Tensor& q, const Tensor& k, const Tensor& v,
                                const AttentionMask& mask, std::optional<double> scale) {
  check_qkv("flash_attention_composed", q, k, v);
  Tensor e = matmul(q, k.transpose(-2, -1));  // (B, [H,] Tq, Tk)
  if (q.size(-1) > 0) e = e * real(attention_scale(q, scale));  // D = 0: e = 0 (geometry)
  return attend("flash_attention_composed", e, v, mask).context;
}

}  // namespace heed

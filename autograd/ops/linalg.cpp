// linalg.cpp - matmul forward and backward.
//
//   C = A @ B                 A: (..., N, K)   B: (..., K, M)   C: (..., N, M)
//   dA = dC @ B^T             (..., N, K)
//   dB = A^T @ dC             (..., K, M)
// Batch dims broadcast; a broadcast operand's gradient is summed over the batches that
// shared it. When B is a plain matrix (a Linear layer's weight), A's batch dims fold into
// its rows, so the whole product is one large gemm: (B*T, K) @ (K, M). Otherwise the
// per-batch products go to gemm_batched (core/blas.h), a batch of products in one call.
#include "linalg.h"

#include <algorithm>

#include "../../core/blas.h"
#include "../../core/elementwise.h"
#include "../../core/error.h"
#include "../engine/node.h"
#include "broadcast.h"
#include "reduce.h"

namespace heed {

namespace {

// Offset (in matrices) of batch `bi` of the output inside an operand with broadcast
// strides `st` over the first `dims` batch dims of `batch`.
int64_t batch_offset(int64_t bi, const Shape& batch, const Shape& st, int dims) {
  int64_t off = 0;
  for (int d = dims - 1; d >= 0; --d) {
    off += (bi % batch[d]) * st[d];
    bi /= batch[d];
  }
  return off;
}

Shape batch_dims(const Shape& s) {
  Shape b = s;
  b.erase(s.size() - 1);
  b.erase(s.size() - 2);
  return b;
}

// C[b] = op(A[b]) @ op(B[b]) (+ C[b] when beta = 1) for every batch b of `batch`; A and B
// broadcast over it with strides sa/sb (in matrices). The trailing batch dims over which each
// operand's offset is one stride times the flat batch index (all of them when A and B are
// contiguous or one is fully broadcast; (3, 1) x (1, 4) splits as 3 x 4) are one
// gemm_batched call (core/blas.h: one oneDNN primitive under "medium" on bf16 units); the
// leading dims left, if any, loop over such calls.
void batched_gemm(bool ta, bool tb, int64_t N, int64_t M, int64_t K, const real* A,
                  const Shape& sa, const real* B, const Shape& sb, real* C, const Shape& batch,
                  real beta = 0) {
  const int64_t lda = ta ? N : K, ldb = tb ? K : M;
  int split = batch.size();   // dims [split, end) are the inner batch
  int64_t inner = 1;          // their product
  int64_t step_a = 0, step_b = 0;  // A's and B's offset per inner batch, in matrices
  for (int d = batch.size() - 1; d >= 0; --d) {
    if (batch[d] != 1) {
      if (inner == 1) step_a = sa[d], step_b = sb[d];
      else if (sa[d] != step_a * inner || sb[d] != step_b * inner) break;
      inner *= batch[d];
    }
    split = d;
  }
  const int64_t outer = batch.numel() / std::max<int64_t>(inner, 1);
  const GemmBatch inner_batch{inner, step_a * N * K, step_b * K * M, N * M};
  for (int64_t o = 0; o < outer; ++o)  // o: the index over dims [0, split)
    gemm_batched(inner_batch, ta, tb, N, M, K, 1, A + batch_offset(o, batch, sa, split) * N * K, lda,
                 B + batch_offset(o, batch, sb, split) * K * M, ldb, beta, C + o * inner * N * M, M);
}

// 2-D or batched product with broadcasting; no graph.
// Rows of A with its batch dims folded in: prod(dims but the last). Not numel / K, which
// divides by zero for K = 0 ((2,0) @ (0,4) is a (2,4) matrix of zeros, as in PyTorch).
int64_t rows_of(const Shape& as) {
  return dims_product(as, 0, as.size() - 1);
}

Tensor matmul_raw(const Tensor& a, const Tensor& b) {
  const Shape &as = a.shape(), &bs = b.shape();
  const int64_t N = as[as.size() - 2], K = as.back(), M = bs.back();
  if (b.dim() == 2) {  // fold A's batch dims into rows
    Shape os = as;
    os[os.size() - 1] = M;
    Tensor c = empty(os);
    gemm(false, false, rows_of(as), M, K, 1, a.data(), K, b.data(), M, 0, c.data(), M);
    return c;
  }
  const Shape ab = batch_dims(as), bb = batch_dims(bs);
  const Shape batch = broadcast_shapes("matmul", ab, bb);
  Shape os = batch;
  os.push_back(N);
  os.push_back(M);
  Tensor c = empty(os);
  batched_gemm(false, false, N, M, K, a.data(), broadcast_strides(ab, batch), b.data(),
               broadcast_strides(bb, batch), c.data(), batch);
  return c;
}

}  // namespace

Tensor matmul(const Tensor& a_in, const Tensor& b_in) {
  HEED_CHECK(a_in.dim() >= 1 && b_in.dim() >= 1, "matmul", "both operands need at least 1 dim; "
             "got shapes ", a_in.shape(), " and ", b_in.shape());
  // 1-D operands become matrices, and the added dim is removed from the result.
  const bool a_vec = a_in.dim() == 1, b_vec = b_in.dim() == 1;
  const Tensor a = a_vec ? a_in.unsqueeze(0) : a_in;  // (1, K)
  const Tensor b = b_vec ? b_in.unsqueeze(1) : b_in;  // (K, 1)
  const int64_t K = a.shape().back(), K2 = b.shape()[b.dim() - 2];
  HEED_CHECK(K == K2, "matmul", "shapes ", a_in.shape(), " and ", b_in.shape(), " do not align");
  if (a.dim() > 2 || b.dim() > 2)
    broadcast_shapes("matmul", batch_dims(a.shape()), batch_dims(b.shape()));

  Tensor c = matmul_raw(a, b);
  c = record("matmul", c, {a, b}, kDoubleBackward,
             [a = SavedTensor(a), b = SavedTensor(b)](const Tensor& dc, Grads& g) {
    const Shape &as = a.shape(), &bs = b.shape();
    if (g.create_graph()) {  // the same products, recorded; a broadcast operand summed back
      if (g.needs(0)) g[0] = sum_to(matmul(dc, b.transpose(-1, -2)), as);
      if (g.needs(1)) g[1] = sum_to(matmul(a.transpose(-1, -2), dc), bs);
      return;
    }
    const int64_t N = as[as.size() - 2], K = as.back(), M = bs.back();
    // Each gradient is written into a new g[i], or added (beta = 1) into the running sum of
    // the gradients its input has received (Grads::write_or_add: an operand used at every step).
    if (b.dim() == 2) {  // rows = prod(A's batch) * N
      const int64_t rows = rows_of(as);
      if (g.needs(0)) {  // dA (rows, K) = dC (rows, M) @ B^T
        const auto [da, beta] = g.write_or_add(0, as);
        gemm(false, true, rows, K, M, 1, dc.data(), M, b.data(), M, beta, da, K);
      }
      if (g.needs(1)) {  // dB (K, M) = A^T (K, rows) @ dC (rows, M)
        const auto [db, beta] = g.write_or_add(1, bs);
        gemm(true, false, K, M, rows, 1, a.data(), K, dc.data(), M, beta, db, M);
      }
      return;
    }
    const Shape batch = batch_dims(dc.shape());
    const Shape one = contiguous_strides(batch);  // dC is never broadcast
    // Input i's gradient (shape s) from the per-batch products (R, C), which `product`
    // writes (beta 0) or adds (beta 1): straight into the gradient when input i was not
    // broadcast over the batch, else into a (batch..., R, C) buffer summed back to s.
    auto batched_grad = [&](int i, const Shape& s, int64_t R, int64_t C, const auto& product) {
      Shape full = batch;
      full.push_back(R);
      full.push_back(C);
      if (full == s) {
        const auto [d, beta] = g.write_or_add(i, s);
        product(d, beta);
      } else {
        Tensor d = empty(full);
        product(d.data(), real(0));
        g[i] = sum_to(d, s);
      }
    };
    const Shape sa = broadcast_strides(batch_dims(as), batch), sb = broadcast_strides(batch_dims(bs), batch);
    if (g.needs(0))  // per batch: dA = dC @ B^T
      batched_grad(0, as, N, K, [&](real* da, real beta) {
        batched_gemm(false, true, N, K, M, dc.data(), one, b.data(), sb, da, batch, beta);
      });
    if (g.needs(1))  // per batch: dB = A^T @ dC
      batched_grad(1, bs, K, M, [&](real* db, real beta) {
        batched_gemm(true, false, K, M, N, a.data(), sa, dc.data(), one, db, batch, beta);
      });
  });
  if (a_vec) c = c.squeeze(-2);
  if (b_vec) c = c.squeeze(-1);
  return c;
}

}  // namespace heed

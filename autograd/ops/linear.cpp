// linear.cpp - y = x @ W^T + b with its backward, each a single gemm over all rows.
//
// Shapes: x is seen as (N, K), N = x.numel() / K (every leading dim folded into rows);
// W (M, K) row-major; y (N, M).
//
//   forward    y  = x @ W^T + b       gemm(no, trans) after y's rows are set to b
//   backward   dx = dy @ W            (N, M) @ (M, K)    gemm(no, no)
//              dW = dy^T @ x          (M, N) @ (N, K)    gemm(trans, no): sums over rows
//              db = sum_n dy[n, :]    column sums of dy
//
// Under "medium" (core/matmul_precision.h) each product reads its inputs rounded to bfloat16.
// W's rounding is shared while W is unchanged inside a Bf16CacheScope (core/bf16_cache.h:
// every use of W in one backward pass, every token of a decoding loop that opens one), and
// the backward rounds dy once for both of its products; the results are the bits of rounding
// at every gemm.
#include "linear.h"

#include <algorithm>

#include "../../core/bf16_cache.h"
#include "../../core/blas.h"
#include "../../core/error.h"
#include "../../core/parallel.h"
#include "../engine/node.h"
#include "arith.h"
#include "broadcast.h"
#include "linalg.h"
#include "reduce_util.h"
#include "shape.h"

namespace heed {

Tensor detail::linear_forward(const Tensor& x, const real* W, const real* b, int64_t M,
                              const Bf16Copy* w16) {
  const int64_t K = x.size(-1), N = dims_product(x.shape(), 0, x.dim() - 1);
  Shape ys = x.shape();
  ys[ys.size() - 1] = M;
  Tensor y = empty(ys);  // (N, M)
  real* py = y.data();
  if (b) {  // y[n, :] = b, then gemm adds into it (beta = 1)
    parallel_for(N, kGrainElementwise / (M + 1) + 1, [&](int64_t lo, int64_t hi) {
      for (int64_t n = lo; n < hi; ++n) std::copy(b, b + M, py + n * M);
    });
  }
  const Bf16Inputs w{false, w16 != nullptr, nullptr, w16 ? w16->bits() : nullptr};
  gemm(w, false, true, N, M, K, 1, x.data(), K, W, K, b ? 1 : 0, py, M);
  return y;
}

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  HEED_CHECK(weight.dim() == 2, "linear", "weight must be (out_features, in_features); got ",
             weight.shape());
  HEED_CHECK(x.dim() >= 1 && x.size(-1) == weight.size(1), "linear", "input ", x.shape(),
             " does not match weight ", weight.shape(), " (the last dims must agree)");
  const int64_t M = weight.size(0), K = weight.size(1);
  HEED_CHECK(!bias.defined() || bias.shape() == Shape{M}, "linear", "bias ", bias.shape(),
             " does not match weight ", weight.shape(), "; expected (", M, ")");
  const int64_t N = dims_product(x.shape(), 0, x.dim() - 1);  // rows: the product of x's leading dims
  const std::shared_ptr<const Bf16Copy> w16 = bf16_cached(weight);  // null: not "medium"
  Tensor y = detail::linear_forward(x, w16 ? w16->data() : weight.data(),
                                    bias.defined() ? bias.data() : nullptr, M, w16.get());
  return record("linear", y, {x, weight, bias}, kDoubleBackward,
                [x = SavedTensor(x), weight = SavedTensor(weight), N, M, K](const Tensor& dy, Grads& g) {
    if (g.create_graph()) {  // the same products, recorded (matmul's create_graph path)
      if (g.needs(0)) g[0] = matmul(dy, weight);
      if (g.needs(1)) g[1] = matmul(dy.reshape({N, M}).transpose(0, 1), x.reshape({N, K}));
      if (g.needs(2)) g[2] = sum_to(dy, {M});
      return;
    }
    // dy (N, M) as the products read it: converted once under "medium", else dy itself
    const Bf16Matrix dy16(dy.data(), M, N, g.needs(0) || g.needs(1) ? M : 0);
    if (real* dx = g.write(0, x.shape())) {  // dx (N, K) = dy (N, M) @ W (M, K)
      const std::shared_ptr<const Bf16Copy> w16 = bf16_cached(weight);
      const Bf16Inputs w{false, w16 != nullptr, nullptr, w16 ? w16->bits() : nullptr};
      gemm(dy16.as_a(w), false, false, N, K, M, 1, dy16.data(), dy16.ld(),
           w16 ? w16->data() : weight.data(), K, 0, dx, K);
    }
    // dW (M, K) = dy^T (M, N) @ x (N, K), or += into a reused weight's running sum
    if (const auto [dw, beta] = g.write_or_add(1, weight.shape()); dw)
      gemm(dy16.as_a(), true, false, M, K, N, 1, dy16.data(), dy16.ld(), x.data(), K, beta, dw, K);
    if (real* db = g.write(2, {M})) detail::column_sums(db, dy.data(), N, M);  // db (M)
  });
}

// y = matmul(x, W^T) + b
Tensor linear_reference(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  const Tensor y = matmul(x, transpose(weight, 0, 1));  // (..., M)
  return bias.defined() ? y + bias : y;
}

}  // namespace heed

// linear.cpp - y = x @ W^T + b and y = gelu(x @ W^T + b), each with its backward, each a
// single gemm over all rows in each direction.
//
// Shapes: x is seen as (N, K), N = x.numel() / K (every leading dim folded into rows);
// W (M, K) row-major; y (N, M).
//
//   linear     forward    y  = x @ W^T + b       gemm_fused(no, trans): b is the product's
//                                                epilogue (core/gemm_epilogue.h)
//              backward   dx = dy @ W            (N, M) @ (M, K)    gemm(no, no)
//                         dW = dy^T @ x          (M, N) @ (N, K)    gemm(trans, no): sums over rows
//                         db = sum_n dy[n, :]    column sums of dy
//   linear_gelu forward   h  = x @ W^T + b,  y = gelu(h),  d = gelu'(h)   one gemm_fused: the
//                                                epilogue writes y and d, h is never stored
//              backward   dh = dy * d,  db = sum_n dh[n, :]     then dx, dW as linear's with dh
//
// Each backward reads its incoming gradient once (core/gradient_pass.h): the bias gradient,
// GELU's derivative and the conversion "medium" makes for the two products are one pass.
// Under "medium" (core/matmul_precision.h) each product reads its inputs rounded to bfloat16.
// W's rounding is shared while W is unchanged inside a Bf16CacheScope (core/bf16_cache.h:
// every use of W in one backward pass, every token of a decoding loop that opens one); the
// results are the bits of rounding at every gemm. Where "medium" runs on bf16 units, what the
// forward converted is kept for the backward (Converted, below: W's copy for dx, x's 16 bits
// for dW), as autocast saves the bf16 casts it multiplied: each operand is converted once per
// step, at the price of x's 16 bits (N K 2 bytes) held until the backward.
#include "linear.h"

#include <algorithm>

#include "../../core/bf16_cache.h"
#include "../../core/blas.h"
#include "../../core/error.h"
#include "../../core/gemm_epilogue.h"
#include "../../core/gradient_pass.h"
#include "../../core/matmul_precision.h"
#include "../../core/parallel.h"
#include "../engine/node.h"
#include "arith.h"
#include "broadcast.h"
#include "../engine/composed_backward.h"
#include "linalg.h"
#include "reduce_util.h"
#include "shape.h"
#include "unary.h"

namespace heed {
namespace {

// What a forward converted under "medium", kept for its backward: W (M, K) rounded (null
// when not "medium"), and x (N, K) as 16 bits (null unless "medium" runs on bf16 units, x has
// more than one row and W's gradient will be asked for: dW = dz^T x reads them).
struct Converted {
  std::shared_ptr<const Bf16Copy> w16;
  std::shared_ptr<const Bf16Matrix> x16;
};

// y = act(x W^T + b) (..., M), and d = act'(x W^T + b) into `derivative` when given (a
// tensor of y's shape): one gemm_fused. x16 (x's 16 bits) is read instead of converting x.
Tensor affine(const Tensor& x, const real* W, const real* b, int64_t M, const Bf16Copy* w16,
              const Bf16Matrix* x16, GemmActivation act, Tensor* derivative) {
  const int64_t K = x.size(-1), N = dims_product(x.shape(), 0, x.dim() - 1);
  Shape ys = x.shape();
  ys[ys.size() - 1] = M;
  Tensor y = empty(ys);  // (N, M)
  GemmEpilogue ep;
  ep.bias = b, ep.activation = act;
  if (derivative) {
    *derivative = empty(ys);
    ep.derivative = derivative->data(), ep.ldd = M;
  }
  const Bf16Inputs w{false, w16 != nullptr, nullptr, w16 ? w16->bits() : nullptr};
  gemm_fused(ep, x16 ? x16->as_a(w) : w, false, true, N, M, K, x.data(), K, W, K, y.data(), M);
  return y;
}

void check_args(const char* op, const Tensor& x, const Tensor& weight, const Tensor& bias) {
  HEED_CHECK(weight.dim() == 2, op, "weight must be (out_features, in_features); got ", weight.shape());
  HEED_CHECK(x.dim() >= 1 && x.size(-1) == weight.size(1), op, "input ", x.shape(),
             " does not match weight ", weight.shape(), " (the last dims must agree)");
  HEED_CHECK(!bias.defined() || bias.shape() == Shape{weight.size(0)}, op, "bias ", bias.shape(),
             " does not match weight ", weight.shape(), "; expected (", weight.size(0), ")");
}

// act(x W^T + b) with W's bfloat16 copy under "medium" (core/bf16_cache.h); what it converted
// goes into `conv` for the backward.
Tensor forward(const Tensor& x, const Tensor& weight, const Tensor& bias, GemmActivation act,
               Tensor* derivative, Converted& conv) {
  conv.w16 = bf16_cached(weight);  // null: not "medium"
  const int64_t K = x.size(-1), N = dims_product(x.shape(), 0, x.dim() - 1);
  if (N > 1 && gemm_on_bf16_units() && any_requires_grad({weight}))
    conv.x16 = std::make_shared<const Bf16Matrix>(x.data(), K, N, K);
  return affine(x, conv.w16 ? conv.w16->data() : weight.data(), bias.defined() ? bias.data() : nullptr,
                weight.size(0), conv.w16.get(), conv.x16.get(), act, derivative);
}

// The backward's two products from dz (N, M), the gradient at the affine map's output, as
// they read it (dz16):  dx (N, K) = dz W,  dW (M, K) = dz^T x, or += into a reused weight's sum.
// The forward's conversions are used while the precision is still "medium" (a guard may have
// changed it between the two passes; then W and x are read as they are, or rounded afresh).
void products(const Bf16Matrix& dz16, const Tensor& x, const Tensor& weight, const Converted& conv,
              int64_t N, int64_t M, int64_t K, Grads& g) {
  const bool medium = gemm_rounds_to_bf16();
  if (real* dx = g.write(0, x.shape())) {
    const std::shared_ptr<const Bf16Copy> w16 = medium && conv.w16 ? conv.w16 : bf16_cached(weight);
    const Bf16Inputs w{false, w16 != nullptr, nullptr, w16 ? w16->bits() : nullptr};
    gemm(dz16.as_a(w), false, false, N, K, M, 1, dz16.data(), dz16.ld(),
         w16 ? w16->data() : weight.data(), K, 0, dx, K);
  }
  if (const auto [dw, beta] = g.write_or_add(1, weight.shape()); dw) {
    const Bf16Inputs xb = medium && conv.x16 ? conv.x16->as_b() : Bf16Inputs{};  // x.data() stays B
    gemm(dz16.as_a(xb), true, false, M, K, N, 1, dz16.data(), dz16.ld(), x.data(), K, beta, dw, K);
  }
}

}  // namespace

Tensor detail::linear_forward(const Tensor& x, const real* W, const real* b, int64_t M,
                              const Bf16Copy* w16) {
  return affine(x, W, b, M, w16, nullptr, GemmActivation::none, nullptr);
}

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  check_args("linear", x, weight, bias);
  const int64_t M = weight.size(0), K = weight.size(1);
  const int64_t N = dims_product(x.shape(), 0, x.dim() - 1);  // rows: the product of x's leading dims
  Converted conv;
  Tensor y = forward(x, weight, bias, GemmActivation::none, nullptr, conv);
  return record("linear", y, {x, weight, bias}, kDoubleBackward,
                [x = SavedTensor(x), weight = SavedTensor(weight), conv, N, M, K](const Tensor& dy, Grads& g) {
    if (g.create_graph()) {  // the same products, recorded (matmul's create_graph path)
      if (g.needs(0)) g[0] = matmul(dy, weight);
      if (g.needs(1)) g[1] = matmul(dy.reshape({N, M}).transpose(0, 1), x.reshape({N, K}));
      if (g.needs(2)) g[2] = sum_to(dy, {M});
      return;
    }
    if (!g.needs(0) && !g.needs(1)) {  // the bias alone: db (M)
      if (real* db = g.write(2, {M})) detail::column_sums(db, dy.data(), N, M);
      return;
    }
    GradientPass pass{dy.data(), N, M};  // db (M) and dy (N, M) as the products read it, one pass
    pass.db = g.write(2, {M});
    products(Bf16Matrix(pass), x, weight, conv, N, M, K, g);
  });
}

Tensor linear_gelu(const Tensor& x, const Tensor& weight, const Tensor& bias, const std::string& approximate) {
  const GemmActivation act = gelu_activation(approximate, "linear_gelu");
  check_args("linear_gelu", x, weight, bias);
  const int64_t M = weight.size(0), K = weight.size(1);
  const int64_t N = dims_product(x.shape(), 0, x.dim() - 1);
  Converted conv;
  if (!any_requires_grad({x, weight, bias})) return forward(x, weight, bias, act, nullptr, conv);
  Tensor d;  // gelu'(h) (N, M), all the backward keeps of h
  Tensor y = forward(x, weight, bias, act, &d, conv);
  return record("linear_gelu", y, {x, weight, bias}, kDoubleBackward,
                [x = SavedTensor(x), weight = SavedTensor(weight), bias = SavedTensor(bias), d, conv, N,
                 M, K, approximate](const Tensor& dy, Grads& g) {
    if (g.create_graph())  // the composed twin (composed_backward.h)
      return detail::composed_gradients([&](const std::vector<Tensor>& in) {
        return linear_gelu_reference(in[0], in[1], in[2], approximate);
      }, {x, weight, bias}, dy, g);
    const Tensor dh = empty({N, M});  // dy * gelu'(h)
    GradientPass pass{dy.data(), N, M, d.data(), dh.data()};
    pass.db = g.write(2, {M});
    products(Bf16Matrix(pass), x, weight, conv, N, M, K, g);
  });
}

// y = matmul(x, W^T) + b
Tensor linear_reference(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  const Tensor y = matmul(x, transpose(weight, 0, 1));  // (..., M)
  return bias.defined() ? y + bias : y;
}

// y = gelu(linear(x, W, b)): the Linear, then the GELU op
Tensor linear_gelu_reference(const Tensor& x, const Tensor& weight, const Tensor& bias,
                             const std::string& approximate) {
  return gelu(linear(x, weight, bias), approximate);
}

}  // namespace heed

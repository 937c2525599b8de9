// linear.h - the affine map of a Linear layer, and the same followed by GELU, each as one
// differentiable op.
//
//   y = x @ W^T + b              x: (..., K)   W: (M, K)   b: (M) or undefined   y: (..., M)
//   y = gelu(x @ W^T + b)        linear_gelu: a Transformer feed-forward's first half
//
// The same as matmul(x, transpose(W)) + b, but W is read transposed by gemm itself
// (trans_b), so W^T is never materialised, and x's leading dims fold into the rows of a
// single gemm; the bias and GELU are that gemm's epilogue (core/gemm_epilogue.h), applied to
// each block of y as it is computed. Derivatives beside the code in linear.cpp.
#pragma once
#include "../../core/bf16_cache.h"
#include "../../core/tensor.h"

namespace heed {

// Throws heed::Error naming "linear" and the shapes when x's last dim is not W's.
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor());

// gelu(linear(x, weight, bias), approximate), fused: one gemm whose epilogue adds b and applies
// GELU ("none": the erf form, "tanh"), keeping GELU's derivative for the backward instead of
// the pre-activation. Its backward is first order in one pass over dy (the bias gradient,
// GELU's derivative and "medium"'s conversion together, core/gradient_pass.h); under
// create_graph it differentiates linear_gelu_reference. heed::Error naming "linear_gelu" for
// the shapes linear refuses and for another approximate.
Tensor linear_gelu(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(),
                   const std::string& approximate = "none");

namespace detail {
// y = x W^T + b (..., M) from raw rows: W points at M rows of x.size(-1) floats, b at M
// floats or null. No graph: linear's forward, and a caller reading some rows of a larger
// weight in place with grad mode off (a cached attention step's Q projection). w16: W is a
// parameter's bfloat16 copy (core/bf16_cache.h), which "medium" need not round again (and
// whose 16 bits the bf16 matmul reads as they are).
Tensor linear_forward(const Tensor& x, const real* W, const real* b, int64_t M,
                      const Bf16Copy* w16 = nullptr);
}  // namespace detail

// The same map composed from matmul, transpose and add: W^T materialised, the gradient
// matmul's. The reference the fused op is tested against (tests/gradcheck_layers.cpp).
Tensor linear_reference(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor());
// linear_gelu composed: gelu(linear(x, weight, bias), approximate), two ops. On the f32 routes
// (dnnl_sgemm, OpenBLAS) the fused op gives its bits, forward and backward
// (tests/test_gemm_epilogue.cpp).
Tensor linear_gelu_reference(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(),
                             const std::string& approximate = "none");

}  // namespace heed

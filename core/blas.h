// blas.h - general matrix multiply, the one BLAS routine heed uses.
//
//   C = alpha * op(A) @ op(B) + beta * C      op(X) = X or X^T
//   op(A): (M, K)   op(B): (K, N)   C: (M, N), all row-major with leading dims lda/ldb/ldc
//
// gemm() runs on the engine core/gemm_engine.h chose: oneDNN's matmul (float build, by
// default; core/onednn_matmul.h), or cblas_sgemm / cblas_dgemm (OpenBLAS; always in the double
// build), passing the transpose flags and leading dimensions, so transposes are never copied;
// on OpenBLAS a single row (M = 1) goes to cblas_sgemv / cblas_dgemv, which reads B once
// instead of packing it.
// gemm_naive() is the plain triple loop it must agree with (tests/test_blas.cpp).
// gemm_fused() is the same product with an epilogue applied to C as part of it (a bias, GELU,
// a residual: core/gemm_epilogue.h).
//
// Under "medium" (core/matmul_precision.h) gemm() rounds A and B to bfloat16 into scratch
// copies (on the stack up to 96 KiB in all, else from heed's caching allocator; split over
// heed's threads when large) and multiplies those; detail::gemm_exact() is the product of the
// values as given, whatever the setting.
//
// An operand that goes into more than one product need not be rounded for each: the caller
// rounds it once (a Bf16Matrix, or a parameter's cached copy, core/bf16_cache.h) and passes
// it as rounded (Bf16Inputs). Rounding a bfloat16 value gives it back, so the product is the
// same bits as gemm() on the unrounded operand when the rounded one is compact, as gemm's own
// copies are (BLAS may sum in another order for another leading dim); only the copying is
// saved. A Linear's
// backward rounds dy once for dx = dy W and dW = dy^T x.
//
// gemm_batched() is `count` products of one shape whose operands lie a fixed stride apart
// (per-head attention products, matmul/bmm on batches):
//   C_i = alpha op(A_i) op(B_i) + beta C_i     A_i = A + i stride_a, B_i, C_i likewise, i < count
// a stride of 0 giving every product the same operand (a broadcast one). For small products
// (below 128^3 multiply-adds each) under "medium" on the bf16 units (gemm_on_bf16_units();
// route onednn_bf16_batched) it is one 3-D oneDNN matmul
// primitive over the batch ({count, M, K} x {count, K, N}, an operand of stride 0 a batch dim
// of 1, which oneDNN broadcasts), its operands rounded to 16 bits for the whole batch in one
// pass. Everywhere else (larger products, float32, one-row products, OpenBLAS, the double
// build) it is detail::gemm_batched_reference(): one gemm() a product, the batches in parallel
// when each is small. Both keep gemm()'s rule: the route is a function of the call, and the primitive is
// keyed on the batch and the thread count, so the same call gives the same bits every time.
// On one thread the primitive sums each value of C as the loop's one-product primitives do
// (the same bits); on more, oneDNN may cut a small batch's work into other K chunks, the
// same exact bf16 products summed in another float32 order (tests/test_gemm_batched.cpp).
// Float32 batches stay on the loop: each product on dnnl_sgemm, as gemm() runs it.
#pragma once
#include <cstddef>
#include <cstdint>

#include "gemm_epilogue.h"
#include "real.h"

namespace heed {

void gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, real alpha,
          const real* A, int64_t lda, const real* B, int64_t ldb, real beta, real* C, int64_t ldc);

// Which operands of gemm() hold bfloat16 values already (under "medium"; ignored otherwise):
// a_rounded, b_rounded say that A, B (the float pointers) hold bfloat16 values; a16, b16, when
// given, are the same values as their 16 bits, compact in the operand's stored layout
// ((a_rows, a_cols), leading dim a_cols), which oneDNN's bf16 matmul reads as they are
// instead of converting A or B again (a parameter's Bf16Copy and a Bf16Matrix made on bf16
// units carry them). A and B stay valid pointers either way: the float routes read them.
struct Bf16Inputs {
  bool a_rounded = false, b_rounded = false;
  const uint16_t* a16 = nullptr;
  const uint16_t* b16 = nullptr;
};
// True when "medium" GEMMs of more than one row run on oneDNN's bf16 matmul (the CPU's bf16
// units, the oneDNN engine, the float build): operands rounded once for several products
// are then kept as 16 bits (Bf16Matrix, core/bf16_cache.h).
bool gemm_on_bf16_units();
void gemm(Bf16Inputs done, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, real alpha,
          const real* A, int64_t lda, const real* B, int64_t ldb, real beta, real* C, int64_t ldc);

// `count` products of one shape, operand i of each at X + i * stride_x (elements; 0: the same
// operand for every product). stride_c > 0 when count > 1 (and C is not empty): the products
// write distinct C's.
struct GemmBatch {
  int64_t count = 1;
  int64_t stride_a = 0, stride_b = 0, stride_c = 0;
};
// C_i = alpha op(A_i) op(B_i) + beta C_i for every i < batch.count, each as gemm() (above).
// heed::Error naming gemm for a negative count or stride, or stride_c = 0 with count > 1.
void gemm_batched(const GemmBatch& batch, bool trans_a, bool trans_b, int64_t M, int64_t N,
                  int64_t K, real alpha, const real* A, int64_t lda, const real* B, int64_t ldb,
                  real beta, real* C, int64_t ldc);

// C (M, N) = act(op(A) op(B) + bias) + R, and D = act'(op(A) op(B) + bias) when ep asks for it:
// the product and its epilogue (core/gemm_epilogue.h) as one call, on gemm()'s routes and
// precision (alpha 1, beta 0: C's old values are never read). On the f32 routes heed applies
// the epilogue to each block of C right after the block's GEMM; on oneDNN's primitives oneDNN
// applies it as bias and post-ops. heed::Error naming gemm when ep asks for D without an
// activation.
void gemm_fused(const GemmEpilogue& ep, Bf16Inputs done, bool trans_a, bool trans_b, int64_t M,
                int64_t N, int64_t K, const real* A, int64_t lda, const real* B, int64_t ldb, real* C,
                int64_t ldc);

// A matrix as the GEMMs under "medium" read it, converted once for all of them: src (rows,
// cols), leading dim ld. Under "highest": src itself, uncopied. Under "medium" on bf16 units
// (gemm_on_bf16_units()): src itself as the float operand plus its 16-bit rounding, compact
// (bits()), what oneDNN's bf16 matmul reads: one pass, float to 16 bits. Otherwise under
// "medium": a compact copy rounded to bfloat16 as floats (rounded()). Pass it to gemm() as
// `gemm(m.as_a(), ..., m.data(), m.ld(), ...)` (or as_b for B). The copies come from heed's
// caching allocator. Not copyable (it owns its copy); a throwing constructor (out of memory)
// leaves nothing allocated.
struct GradientPass;
class Bf16Matrix {
 public:
  Bf16Matrix(const real* src, int64_t ld, int64_t rows, int64_t cols);
  // The gradient dz of a pass (core/gradient_pass.h), written, summed and converted in one pass
  // over dy; data() is pass.dz (pass.dy without dact), compact.
  explicit Bf16Matrix(const GradientPass& pass);
  ~Bf16Matrix();
  Bf16Matrix(const Bf16Matrix&) = delete;
  Bf16Matrix& operator=(const Bf16Matrix&) = delete;
  const real* data() const { return data_; }
  int64_t ld() const { return ld_; }
  bool rounded() const { return rounded_; }         // data() holds bfloat16 values
  const uint16_t* bits() const { return bits_; }    // the 16-bit copy, or nullptr
  Bf16Inputs as_a(Bf16Inputs b = {}) const { return {rounded_, b.b_rounded, bits_, b.b16}; }
  Bf16Inputs as_b(Bf16Inputs a = {}) const { return {a.a_rounded, rounded_, a.a16, bits_}; }

 private:
  const real* data_ = nullptr;
  int64_t ld_ = 0;
  bool rounded_ = false;
  real* copy_ = nullptr;
  uint16_t* bits_ = nullptr;
  std::size_t bytes_ = 0;
};

namespace detail {
// One product, as gemm() was called: what every step below it reads.
struct GemmCall {
  bool trans_a = false, trans_b = false;
  int64_t M = 0, N = 0, K = 0;
  real alpha = 1;
  const real* A = nullptr;  // op(A): (M, K)
  int64_t lda = 0;
  const real* B = nullptr;  // op(B): (K, N)
  int64_t ldb = 0;
  real beta = 0;
  real* C = nullptr;        // (M, N)
  int64_t ldc = 0;
  Bf16Inputs rounded;       // under "medium": operands that hold bfloat16 values already
  GemmEpilogue epilogue;    // applied to C as part of the product (gemm_fused; alpha 1, beta 0)
  int64_t a_rows() const { return trans_a ? K : M; }  // A as stored: (a_rows, a_cols)
  int64_t a_cols() const { return trans_a ? M : K; }
  int64_t b_rows() const { return trans_b ? N : K; }
  int64_t b_cols() const { return trans_b ? K : N; }
};

// Where a product runs. gemm_route() picks it from the call, the engine, the precision and
// oneDNN's route setting (core/onednn_matmul.h) alone, never from what ran before, so the
// same call gives the same bits on its first and its hundredth run.
//   none            M = 0 or N = 0: nothing to write
//   scale_c         K = 0: C = beta C (BLAS would leave C as is for beta = 1 only)
//   openblas_gemv   OpenBLAS, one row: cblas_?gemv streams B once instead of packing it
//   openblas_gemm   OpenBLAS cblas_?gemm
//   onednn_sgemm    oneDNN's dnnl_sgemm (one row, or forced)
//   onednn_matmul   a cached oneDNN f32 matmul primitive
//   onednn_bf16     "medium" on oneDNN's bf16 matmul (the CPU's bf16 units), M > 1
//   onednn_bf16_batched   gemm_batched of more than one product, each below 128^3
//                   multiply-adds and on onednn_bf16: one batched bf16 primitive for all
// Under "medium" every f32 route multiplies copies rounded to bfloat16 (gemm_rounds_copies).
enum class GemmRoute {
  none, scale_c, openblas_gemv, openblas_gemm, onednn_sgemm, onednn_matmul, onednn_bf16,
  onednn_bf16_batched
};
GemmRoute gemm_route(const GemmCall& c);
// gemm_batched's route: onednn_bf16_batched, or else the route each of its products takes
// on the loop (gemm_route(one), one the first product).
GemmRoute gemm_batched_route(const GemmCall& one, const GemmBatch& batch);
const char* gemm_route_name(GemmRoute r);
// Whether gemm() rounds copies of c's operands to bfloat16 before an f32 route: "medium",
// an f32 route, and an operand not rounded already.
bool gemm_rounds_copies(const GemmCall& c, GemmRoute r);
// The route the calling thread's last gemm() took (none before its first).
GemmRoute last_gemm_route();

// gemm_fused's reference: gemm() with beta 0, then apply_epilogue over all of C as a pass of
// its own. On dnnl_sgemm (the same blocks, the same operations) gemm_fused gives its bits.
void gemm_fused_reference(const GemmEpilogue& ep, Bf16Inputs done, bool trans_a, bool trans_b,
                          int64_t M, int64_t N, int64_t K, const real* A, int64_t lda, const real* B,
                          int64_t ldb, real* C, int64_t ldc);

// gemm_batched's reference, and its route off the bf16 units: one gemm() a product, the
// products spread over heed's threads (each single-threaded) when each is below 128^3
// multiply-adds and run one after another (each on all the threads) otherwise. Its bits are
// gemm_batched's wherever gemm_batched runs this loop.
void gemm_batched_reference(const GemmBatch& batch, bool trans_a, bool trans_b, int64_t M,
                            int64_t N, int64_t K, real alpha, const real* A, int64_t lda,
                            const real* B, int64_t ldb, real beta, real* C, int64_t ldc);

// The product of the values as given, whatever the precision setting.
void gemm_exact(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, real alpha,
                const real* A, int64_t lda, const real* B, int64_t ldb, real beta, real* C,
                int64_t ldc);
}  // namespace detail

void gemm_naive(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, real alpha,
                const real* A, int64_t lda, const real* B, int64_t ldb, real beta, real* C,
                int64_t ldc);

}  // namespace heed

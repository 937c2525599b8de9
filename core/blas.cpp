#include "blas.h"

#include <cblas.h>

#include <algorithm>
#include <climits>
#include <type_traits>

#include "allocator.h"
#include "scratch.h"
#include "error.h"
#include "gemm_engine.h"
#include "matmul_precision.h"
#include "onednn_matmul.h"
#include "parallel.h"

namespace heed {

// cblas_sgemm in the float build, cblas_dgemm in the double build.
template <class T>
static void cblas_gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int M, int N, int K, T alpha,
                       const T* A, int lda, const T* B, int ldb, T beta, T* C, int ldc) {
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemm(CblasRowMajor, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
  else
    cblas_dgemm(CblasRowMajor, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

// cblas_sgemv / cblas_dgemv: y = alpha * op(A) x + beta * y, A (rows, cols) row-major.
template <class T>
static void cblas_gemv(CBLAS_TRANSPOSE ta, int rows, int cols, T alpha, const T* A, int lda,
                       const T* x, int incx, T beta, T* y) {
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemv(CblasRowMajor, ta, rows, cols, alpha, A, lda, x, incx, beta, y, 1);
  else
    cblas_dgemv(CblasRowMajor, ta, rows, cols, alpha, A, lda, x, incx, beta, y, 1);
}

namespace {

// n values from src rounded to bfloat16 into dst: as floats (dst) or as their 16 bits (bits,
// what oneDNN's bf16 matmul reads; float build only).
void round_values(const real* src, real* dst, uint16_t* bits, int64_t n) {
#ifndef HEED_DOUBLE
  if (bits) return to_bf16_bits(src, bits, long(n));
#endif
  round_to_bf16(src, dst, long(n));
}

// Matrices to round: `count` of them, src (rows, cols) with leading dim ld, each `stride`
// elements after the one before, into dst (or bits), compact one after another.
struct RoundJob {
  const real* src;
  int64_t ld, rows, cols;
  real* dst;
  uint16_t* bits = nullptr;
  int64_t count = 1, stride = 0;
  int64_t size() const { return count * rows * cols; }
};

// The job's values [lo, hi) of the compact layout, so that threads can share one job.
void round_copy_range(const RoundJob& job, int64_t lo, int64_t hi) {
  const int64_t ld = job.ld, cols = job.cols, per = job.rows * cols;  // per: values a matrix
  const auto out = [&](const real* src, int64_t at, int64_t n) {
    round_values(src, job.dst ? job.dst + at : nullptr, job.bits ? job.bits + at : nullptr, n);
  };
  while (lo < hi) {
    const int64_t m = lo / per, i = lo - m * per, end = std::min(hi, (m + 1) * per);
    const real* src = job.src + m * job.stride;  // matrix m; its value i is at lo
    if (ld == cols) {  // contiguous rows: one loop over the matrix's part, not one call per row
      out(src + i, lo, end - lo);
      lo = end;
      continue;
    }
    const int64_t r = i / cols, c = i % cols, n = std::min(cols - c, end - lo);
    out(src + r * ld + c, lo, n);
    lo += n;
  }
}

// Rounds the jobs' values, split over heed's threads once there are kGrainElementwise of
// them in all (a memory-bound loop, as an element-wise op: one pass reading float32 and
// writing its rounding) and not inside a parallel region (parallel_for runs on the calling
// thread there). Elementwise, so the split changes no bit.
void round_jobs(const RoundJob* jobs, int count) {
  int64_t total = 0;
  for (int j = 0; j < count; ++j) total += jobs[j].size();
  parallel_for(total, kGrainElementwise, [&](int64_t lo, int64_t hi) {
    int64_t start = 0;  // job j holds values [start, start + size) of the whole
    for (int j = 0; j < count; ++j) {
      const RoundJob& job = jobs[j];
      const int64_t a = std::max(lo, start), b = std::min(hi, start + job.size());
      if (a < b) round_copy_range(job, a - start, b - start);
      start += job.size();
    }
  });
}

thread_local detail::GemmRoute t_last_route = detail::GemmRoute::none;

// A batch's products below this many multiply-adds (M N K) are small: the loop spreads them
// over heed's threads, and under "medium" on the bf16 units one batched primitive runs them
// all (1.2-1.25x the loop's speed at 128 x 128 x 64 on one Zen 4 thread). Larger ones run one
// at a time, each on all the threads, where the batched primitive measured no faster
// (0.99-1.16x the loop's time at 256 x 256 x 64).
constexpr int64_t kSmallProduct = 128 * 128 * 128;

#ifndef HEED_DOUBLE
// c as oneDNN reads it, with A and B in `type`'s buffers (c's own, or bf16 copies).
detail::OnednnGemm onednn_call(const detail::GemmCall& c, bool bf16, const void* A, int64_t lda,
                               const void* B, int64_t ldb) {
  detail::OnednnGemm g;
  g.bf16 = bf16;
  g.trans_a = c.trans_a, g.trans_b = c.trans_b;
  g.M = c.M, g.N = c.N, g.K = c.K;
  g.alpha = float(c.alpha), g.beta = float(c.beta);
  g.A = A, g.lda = lda, g.B = B, g.ldb = ldb, g.C = reinterpret_cast<float*>(c.C), g.ldc = c.ldc;
  g.ep = c.epilogue.empty() ? nullptr : &c.epilogue;
  return g;
}
#endif

// C = beta C, for K = 0 (BLAS leaves C untouched then only if beta == 1; make it exact).
void scale_c(const detail::GemmCall& c) {
  for (int64_t i = 0; i < c.M; ++i)
    for (int64_t j = 0; j < c.N; ++j)
      c.C[i * c.ldc + j] = c.beta == 0 ? 0 : c.beta * c.C[i * c.ldc + j];
}

// OpenBLAS with an epilogue: C cut into heed's fixed blocks (detail::for_each_gemm_block), each
// a single-threaded cblas_?gemm (OpenBLAS's OpenMP build runs on one thread inside a parallel
// region) followed by its epilogue while the block is in cache.
void run_openblas_blocks(const detail::GemmCall& c) {
  const int team = detail::gemm_team(c.M, c.N, c.K, detail::gemm_threads());
  detail::for_each_gemm_block(c.M, c.N, team, [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
    const real* A = c.A + (c.trans_a ? r0 : r0 * c.lda);  // op(A) rows r0..
    const real* B = c.B + (c.trans_b ? c0 * c.ldb : c0);  // op(B) columns c0..
    cblas_gemm(c.trans_a ? CblasTrans : CblasNoTrans, c.trans_b ? CblasTrans : CblasNoTrans, int(r1 - r0),
               int(c1 - c0), int(c.K), c.alpha, A, int(c.lda), B, int(c.ldb), c.beta,
               c.C + r0 * c.ldc + c0, int(c.ldc));
    apply_epilogue(c.epilogue, c.C, c.ldc, r0, r1, c0, c1);
  });
}

// OpenBLAS, one row (route openblas_gemv): C (1, N) = alpha a op(B) + beta C is a
// matrix-vector product, C^T = alpha op(B)^T a + beta C^T. sgemm would pack all of B for one
// row (what decoding one token through a Linear does); gemv streams it once. a's K values are
// A[k] (stride 1), or A[k * lda] when A is stored transposed (K, 1). With beta = 0, C is
// zeroed first, so that garbage in it (NaN) never reaches the result.
void run_openblas_gemv(const detail::GemmCall& c) {
  if (c.beta == 0)
    for (int64_t j = 0; j < c.N; ++j) c.C[j] = 0;
  const int inc = c.trans_a ? int(c.lda) : 1;
  if (c.trans_b)  // B (N, K): C^T = B a
    cblas_gemv(CblasNoTrans, int(c.N), int(c.K), c.alpha, c.B, int(c.ldb), c.A, inc, c.beta, c.C);
  else  // B (K, N): C^T = B^T a
    cblas_gemv(CblasTrans, int(c.K), int(c.N), c.alpha, c.B, int(c.ldb), c.A, inc, c.beta, c.C);
}

// The f32 routes on c's operands as they are (after any rounding of copies).
void run_f32(const detail::GemmCall& c, detail::GemmRoute route) {
  using detail::GemmRoute;
  switch (route) {
    case GemmRoute::none: return;
    case GemmRoute::scale_c:
      scale_c(c);
      return apply_epilogue(c.epilogue, c.C, c.ldc, 0, c.M, 0, c.N);
#ifndef HEED_DOUBLE
    case GemmRoute::onednn_sgemm:
    case GemmRoute::onednn_matmul:
      return detail::onednn_gemm(onednn_call(c, false, c.A, c.lda, c.B, c.ldb));
#endif
    default: break;
  }
  for (int64_t v : {c.M, c.N, c.K, c.lda, c.ldb, c.ldc})  // BLAS takes 32-bit sizes
    HEED_CHECK(v <= INT_MAX, "gemm", "size ", v, " exceeds BLAS's 32-bit limit (M=", c.M,
               " N=", c.N, " K=", c.K, ")");
  // OpenBLAS (OpenMP build) runs on the calling thread's omp_get_max_threads() threads, which
  // gemm_threads() sets to the count the user set (core/parallel.h: its K splits follow the
  // team's size). It runs M * N * K <= 262144 on one thread by itself.
  detail::gemm_threads();
  if (route == GemmRoute::openblas_gemv) {
    run_openblas_gemv(c);
    return apply_epilogue(c.epilogue, c.C, c.ldc, 0, 1, 0, c.N);  // one row, in cache
  }
  if (!c.epilogue.empty()) return run_openblas_blocks(c);
  cblas_gemm(c.trans_a ? CblasTrans : CblasNoTrans, c.trans_b ? CblasTrans : CblasNoTrans,
             int(c.M), int(c.N), int(c.K), c.alpha, c.A, int(c.lda), c.B, int(c.ldb), c.beta,
             c.C, int(c.ldc));
}

// "medium" on an f32 route: the float32 product of A and B rounded to bfloat16, each copied
// once in its own layout (transposes stay transposes, as BLAS reads them); an operand the
// caller rounded already is read where it lies. Copies of at most kOnStack values in all go
// on the stack, so the small products made inside parallel regions (flash attention's
// one-row tiles: a (128 x 64) key block and a query row) allocate nothing and cannot throw
// there; larger ones take scratch from heed's allocator. Its own function, so that only
// "medium" calls have the stack buffer in their frame.
constexpr int64_t kOnStack = 24 * 1024;  // 96 KiB of float
[[gnu::noinline]] void run_rounded_f32(const detail::GemmCall& c, detail::GemmRoute route) {
  const int64_t a_size = c.rounded.a_rounded ? 0 : c.a_rows() * c.a_cols();
  const int64_t b_size = c.rounded.b_rounded ? 0 : c.b_rows() * c.b_cols();
  auto run = [&](real* a, real* b) {
    RoundJob jobs[2];
    int count = 0;
    if (a_size) jobs[count++] = {c.A, c.lda, c.a_rows(), c.a_cols(), a};
    if (b_size) jobs[count++] = {c.B, c.ldb, c.b_rows(), c.b_cols(), b};
    round_jobs(jobs, count);
    detail::GemmCall r = c;
    if (a_size) r.A = a, r.lda = c.a_cols();
    if (b_size) r.B = b, r.ldb = c.b_cols();
    run_f32(r, route);
  };
  if (a_size + b_size <= kOnStack) {
    alignas(64) real stack[kOnStack];
    run(stack, stack + a_size);
    return;
  }
  Scratch<real> a(a_size), b(b_size);
  run(a.data, b.data);
}

#ifndef HEED_DOUBLE
// "medium" on oneDNN's bf16 matmul (route onednn_bf16): A and B rounded to bfloat16 as they
// are copied, compact in their own layout, into 16-bit buffers; the CPU's bf16 units multiply
// them and sum in float32 into C. An operand rounded already is copied the same way (rounding
// a bfloat16 value gives it back), so the result does not depend on c.rounded.
// An operand given as 16 bits already (c.rounded.a16, b16) is read where it lies.
void run_onednn_bf16(const detail::GemmCall& c) {
  const uint16_t *a16 = c.rounded.a16, *b16 = c.rounded.b16;
  Scratch<uint16_t> a(a16 ? 0 : c.a_rows() * c.a_cols()), b(b16 ? 0 : c.b_rows() * c.b_cols());
  RoundJob jobs[2];
  int count = 0;
  if (!a16) {
    jobs[count++] = {c.A, c.lda, c.a_rows(), c.a_cols(), nullptr, a.data};
    a16 = a.data;
  }
  if (!b16) {
    jobs[count++] = {c.B, c.ldb, c.b_rows(), c.b_cols(), nullptr, b.data};
    b16 = b.data;
  }
  round_jobs(jobs, count);
  detail::onednn_gemm(onednn_call(c, true, a16, c.a_cols(), b16, c.b_cols()));
}

// gemm_batched on route onednn_bf16_batched: every A_i and B_i rounded to 16 bits in one
// pass, compact in their own layouts (an operand of stride 0 once), then one batched bf16
// primitive for all the products.
void run_onednn_bf16_batched(const detail::GemmCall& c, const GemmBatch& batch) {
  const int64_t na = batch.stride_a ? batch.count : 1, nb = batch.stride_b ? batch.count : 1;
  const int64_t a_size = c.a_rows() * c.a_cols(), b_size = c.b_rows() * c.b_cols();
  Scratch<uint16_t> a(na * a_size), b(nb * b_size);  // (na, a_rows, a_cols), (nb, b_rows, b_cols)
  const RoundJob jobs[2] = {{c.A, c.lda, c.a_rows(), c.a_cols(), nullptr, a.data, na, batch.stride_a},
                            {c.B, c.ldb, c.b_rows(), c.b_cols(), nullptr, b.data, nb, batch.stride_b}};
  round_jobs(jobs, 2);
  detail::OnednnGemm g = onednn_call(c, true, a.data, c.a_cols(), b.data, c.b_cols());
  g.batch = batch.count;
  g.batch_a = batch.stride_a ? a_size : 0, g.batch_b = batch.stride_b ? b_size : 0;
  g.batch_c = batch.stride_c;
  detail::onednn_gemm(g);
}
#endif

// gemm_batched's arguments as its header states them.
void check_batch(const GemmBatch& b, int64_t M, int64_t N, int64_t K) {
  HEED_CHECK(b.count >= 0 && b.stride_a >= 0 && b.stride_b >= 0 && b.stride_c >= 0 &&
                 (b.count <= 1 || b.stride_c > 0 || M == 0 || N == 0),
             "gemm", "a batch of ", b.count, " products (M=", M, " N=", N, " K=", K,
             ") needs strides >= 0 and distinct C's; got strides ", b.stride_a, ", ", b.stride_b,
             ", ", b.stride_c);
}

void run(const detail::GemmCall& c) {
  const detail::GemmRoute route = detail::gemm_route(c);
#ifndef HEED_DOUBLE
  if (route == detail::GemmRoute::onednn_bf16)
    run_onednn_bf16(c);
  else
#endif
  if (detail::gemm_rounds_copies(c, route))
    run_rounded_f32(c, route);
  else
    run_f32(c, route);
  t_last_route = route;
}

detail::GemmCall make_call(Bf16Inputs done, bool trans_a, bool trans_b, int64_t M, int64_t N,
                           int64_t K, real alpha, const real* A, int64_t lda, const real* B,
                           int64_t ldb, real beta, real* C, int64_t ldc) {
  detail::GemmCall c;
  c.trans_a = trans_a, c.trans_b = trans_b;
  c.M = M, c.N = N, c.K = K;
  c.alpha = alpha, c.A = A, c.lda = lda, c.B = B, c.ldb = ldb, c.beta = beta, c.C = C, c.ldc = ldc;
  c.rounded = done;
  return c;
}
}  // namespace

namespace detail {
namespace {
// The f32 route of a product with M, N, K > 0 on the engine in use.
GemmRoute f32_route(const GemmCall& c) {
#ifndef HEED_DOUBLE
  if (gemm_engine() == GemmEngine::onednn) {
    OnednnGemm g;
    g.M = c.M, g.N = c.N, g.K = c.K;
    return onednn_route_for(g) == OnednnRoute::sgemm ? GemmRoute::onednn_sgemm : GemmRoute::onednn_matmul;
  }
#endif
  return c.M == 1 ? GemmRoute::openblas_gemv : GemmRoute::openblas_gemm;
}
}  // namespace

GemmRoute gemm_route(const GemmCall& c) {
  if (c.M == 0 || c.N == 0) return GemmRoute::none;
  if (c.K == 0) return GemmRoute::scale_c;
#ifndef HEED_DOUBLE
  // "medium" on the bf16 units, but not for one row: a matrix-vector product reads each value
  // of B once, and rounding B costs as much as the product.
  if (gemm_rounds_to_bf16() && c.M > 1 && gemm_engine() == GemmEngine::onednn && onednn_has_bf16())
    return GemmRoute::onednn_bf16;
#endif
  return f32_route(c);
}

GemmRoute gemm_batched_route(const GemmCall& one, const GemmBatch& batch) {
  const GemmRoute r = gemm_route(one);
  const bool small = one.M * one.N * one.K < kSmallProduct;
  return batch.count > 1 && small && r == GemmRoute::onednn_bf16 && one.epilogue.empty()
             ? GemmRoute::onednn_bf16_batched
             : r;
}

bool gemm_rounds_copies(const GemmCall& c, GemmRoute r) {
  return r != GemmRoute::none && r != GemmRoute::scale_c && r != GemmRoute::onednn_bf16 &&
         gemm_rounds_to_bf16() && !(c.rounded.a_rounded && c.rounded.b_rounded);
}

const char* gemm_route_name(GemmRoute r) {
  constexpr const char* kNames[] = {"none", "scale_c", "openblas_gemv", "openblas_gemm",
                                    "onednn_sgemm", "onednn_matmul", "onednn_bf16",
                                    "onednn_bf16_batched"};
  return kNames[int(r)];
}

GemmRoute last_gemm_route() { return t_last_route; }
}  // namespace detail

bool gemm_on_bf16_units() {
#ifdef HEED_DOUBLE
  return false;
#else
  return gemm_rounds_to_bf16() && gemm_engine() == GemmEngine::onednn && detail::onednn_has_bf16();
#endif
}

Bf16Matrix::Bf16Matrix(const real* src, int64_t ld, int64_t rows, int64_t cols) : data_(src), ld_(ld) {
  if (!gemm_rounds_to_bf16()) return;
  const int64_t n = rows * cols;
  if (gemm_on_bf16_units()) {  // src stays the float operand; its 16 bits for the bf16 matmul
    bytes_ = std::size_t(n) * sizeof(uint16_t);
    bits_ = n > 0 ? static_cast<uint16_t*>(alloc::allocate(bytes_)) : nullptr;
    const RoundJob job{src, ld, rows, cols, nullptr, bits_};
    round_jobs(&job, 1);
    return;
  }
  bytes_ = std::size_t(n) * sizeof(real);
  copy_ = n > 0 ? static_cast<real*>(alloc::allocate(bytes_)) : nullptr;
  const RoundJob job{src, ld, rows, cols, copy_};
  round_jobs(&job, 1);
  data_ = copy_;
  ld_ = cols;
  rounded_ = true;
}

Bf16Matrix::~Bf16Matrix() {
  if (copy_) alloc::deallocate(copy_, bytes_);
  if (bits_) alloc::deallocate(bits_, bytes_);
}

void gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, real alpha, const real* A,
          int64_t lda, const real* B, int64_t ldb, real beta, real* C, int64_t ldc) {
  run(make_call({}, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc));
}

void gemm(Bf16Inputs done, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, real alpha,
          const real* A, int64_t lda, const real* B, int64_t ldb, real beta, real* C, int64_t ldc) {
  run(make_call(done, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc));
}

void gemm_batched(const GemmBatch& batch, bool trans_a, bool trans_b, int64_t M, int64_t N,
                  int64_t K, real alpha, const real* A, int64_t lda, const real* B, int64_t ldb,
                  real beta, real* C, int64_t ldc) {
  check_batch(batch, M, N, K);
#ifndef HEED_DOUBLE
  const detail::GemmCall c = make_call({}, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
  if (detail::gemm_batched_route(c, batch) == detail::GemmRoute::onednn_bf16_batched) {
    run_onednn_bf16_batched(c, batch);
    t_last_route = detail::GemmRoute::onednn_bf16_batched;
    return;
  }
#endif
  detail::gemm_batched_reference(batch, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

void detail::gemm_batched_reference(const GemmBatch& batch, bool trans_a, bool trans_b, int64_t M,
                                    int64_t N, int64_t K, real alpha, const real* A, int64_t lda,
                                    const real* B, int64_t ldb, real beta, real* C, int64_t ldc) {
  check_batch(batch, M, N, K);
  const auto one = [&](int64_t i) {  // C_i = alpha op(A_i) op(B_i) + beta C_i
    gemm(trans_a, trans_b, M, N, K, alpha, A + i * batch.stride_a, lda, B + i * batch.stride_b, ldb,
         beta, C + i * batch.stride_c, ldc);
  };
  if (batch.count > 1 && M * N * K < kSmallProduct) {
    parallel_for(batch.count, 2, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) one(i);
    });
  } else {
    for (int64_t i = 0; i < batch.count; ++i) one(i);
  }
}

void gemm_fused(const GemmEpilogue& ep, Bf16Inputs done, bool trans_a, bool trans_b, int64_t M,
                int64_t N, int64_t K, const real* A, int64_t lda, const real* B, int64_t ldb, real* C,
                int64_t ldc) {
  HEED_CHECK(!ep.derivative || ep.activation != GemmActivation::none, "gemm",
             "an epilogue's derivative needs an activation (M=", M, " N=", N, " K=", K, ")");
  detail::GemmCall c = make_call(done, trans_a, trans_b, M, N, K, 1, A, lda, B, ldb, 0, C, ldc);
  c.epilogue = ep;
  run(c);
}

void detail::gemm_fused_reference(const GemmEpilogue& ep, Bf16Inputs done, bool trans_a, bool trans_b,
                                  int64_t M, int64_t N, int64_t K, const real* A, int64_t lda,
                                  const real* B, int64_t ldb, real* C, int64_t ldc) {
  gemm(done, trans_a, trans_b, M, N, K, 1, A, lda, B, ldb, 0, C, ldc);
  apply_epilogue(ep, C, ldc, 0, M, 0, N);
}

void detail::gemm_exact(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, real alpha,
                        const real* A, int64_t lda, const real* B, int64_t ldb, real beta, real* C,
                        int64_t ldc) {
  const GemmCall c = make_call({}, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
  run_f32(c, M == 0 || N == 0 ? GemmRoute::none : K == 0 ? GemmRoute::scale_c : f32_route(c));
}

void gemm_naive(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, real alpha,
                const real* A, int64_t lda, const real* B, int64_t ldb, real beta, real* C,
                int64_t ldc) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double acc = 0;
      for (int64_t k = 0; k < K; ++k) {
        const real a = trans_a ? A[k * lda + i] : A[i * lda + k];
        const real b = trans_b ? B[j * ldb + k] : B[k * ldb + j];
        acc += double(a) * double(b);
      }
      C[i * ldc + j] = real(alpha * acc + (beta == 0 ? 0 : beta * C[i * ldc + j]));
    }
}

}  // namespace heed

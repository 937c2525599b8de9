#include "blas.h"

#include <cblas.h>

#include <algorithm>
#include <climits>
#include <type_traits>

#include "allocator.h"
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
// A buffer of n values of T from heed's caching allocator (a GEMM of the same shape next step
// gets the same block back, without touching the system).
template <class T = real>
struct Scratch {
  explicit Scratch(int64_t n) : bytes(std::size_t(n) * sizeof(T)), data(static_cast<T*>(alloc::allocate(bytes))) {}
  ~Scratch() { alloc::deallocate(data, bytes); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  std::size_t bytes;
  T* data;
};

// n values from src rounded to bfloat16 into dst: as floats (dst) or as their 16 bits (bits,
// what oneDNN's bf16 matmul reads; float build only).
void round_values(const real* src, real* dst, uint16_t* bits, int64_t n) {
#ifndef HEED_DOUBLE
  if (bits) return to_bf16_bits(src, bits, long(n));
#endif
  round_to_bf16(src, dst, long(n));
}

// One matrix to round: src (rows, cols) with leading dim ld into dst (or bits), compact.
struct RoundJob {
  const real* src;
  int64_t ld, rows, cols;
  real* dst;
  uint16_t* bits = nullptr;
  int64_t size() const { return rows * cols; }
};

// The job's values [lo, hi) of the compact layout, so that threads can share one matrix.
void round_copy_range(const RoundJob& job, int64_t lo, int64_t hi) {
  const int64_t ld = job.ld, cols = job.cols;
  if (ld == cols) {  // contiguous rows: one loop over the range, not one call per row
    round_values(job.src + lo, job.dst ? job.dst + lo : nullptr, job.bits ? job.bits + lo : nullptr, hi - lo);
    return;
  }
  while (lo < hi) {
    const int64_t r = lo / cols, c = lo % cols, n = std::min(cols - c, hi - lo);
    round_values(job.src + r * ld + c, job.dst ? job.dst + lo : nullptr, job.bits ? job.bits + lo : nullptr, n);
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

// "medium" (core/matmul_precision.h): the float32 product of A and B rounded to bfloat16, each
// copied once in its own layout (transposes stay transposes, as BLAS reads them); an operand
// the caller rounded already (`done`) is read where it lies. Copies of at most kOnStack values
// in all go on the stack, so the small products made inside parallel regions (flash
// attention's one-row tiles: a (128 x 64) key block and a query row) allocate nothing and
// cannot throw there; larger ones take scratch from heed's allocator. Its own function, so
// that only "medium" calls have the stack buffer in their frame.
constexpr int64_t kOnStack = 24 * 1024;  // 96 KiB of float
[[gnu::noinline]] void gemm_rounded(Bf16Inputs done, bool trans_a, bool trans_b, int64_t M,
                                    int64_t N, int64_t K, real alpha, const real* A, int64_t lda,
                                    const real* B, int64_t ldb, real beta, real* C, int64_t ldc) {
  const int64_t ar = trans_a ? K : M, ac = trans_a ? M : K;
  const int64_t br = trans_b ? N : K, bc = trans_b ? K : N;
  const int64_t a_size = done.a_rounded ? 0 : ar * ac, b_size = done.b_rounded ? 0 : br * bc;
  auto run = [&](real* a, real* b) {
    RoundJob jobs[2];
    int count = 0;
    if (a_size) jobs[count++] = {A, lda, ar, ac, a};
    if (b_size) jobs[count++] = {B, ldb, br, bc, b};
    round_jobs(jobs, count);
    detail::gemm_exact(trans_a, trans_b, M, N, K, alpha, a_size ? a : A, a_size ? ac : lda,
                       b_size ? b : B, b_size ? bc : ldb, beta, C, ldc);
  };
  if (a_size + b_size <= kOnStack) {
    alignas(64) real stack[kOnStack];
    run(stack, stack + a_size);
    return;
  }
  Scratch<> a(a_size), b(b_size);
  run(a.data, b.data);
}

// "medium" on oneDNN's bf16 matmul (core/onednn_matmul.h): A and B rounded to bfloat16 as
// they are copied, compact in their own layout, into 16-bit buffers; the CPU's bf16 units
// multiply them and sum in float32 into C. An operand rounded already is copied the same way
// (rounding a bfloat16 value gives it back), so the result does not depend on `done`.
void gemm_onednn_bf16(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, real alpha,
                      const real* A, int64_t lda, const real* B, int64_t ldb, real beta, real* C,
                      int64_t ldc) {
  const int64_t ar = trans_a ? K : M, ac = trans_a ? M : K;
  const int64_t br = trans_b ? N : K, bc = trans_b ? K : N;
  Scratch<uint16_t> a(ar * ac), b(br * bc);
  const RoundJob jobs[2] = {{A, lda, ar, ac, nullptr, a.data}, {B, ldb, br, bc, nullptr, b.data}};
  round_jobs(jobs, 2);
  detail::OnednnGemm g;
  g.bf16 = true;
  g.trans_a = trans_a, g.trans_b = trans_b;
  g.M = M, g.N = N, g.K = K;
  g.alpha = float(alpha), g.beta = float(beta);
  g.A = a.data, g.lda = ac, g.B = b.data, g.ldb = bc, g.C = reinterpret_cast<float*>(C), g.ldc = ldc;
  detail::onednn_gemm(g);
}

// "medium" runs on the CPU's bf16 units when the float build's engine is oneDNN and oneDNN has
// a bf16 matmul here; not for one row (a matrix-vector product reads each value of B once,
// and rounding B costs as much as the product: the float32 path on rounded values is as fast).
bool bf16_on_units(int64_t M) {
#ifdef HEED_DOUBLE
  return false;
#else
  return M > 1 && gemm_engine() == GemmEngine::onednn && detail::onednn_has_bf16();
#endif
}
}  // namespace

Bf16Matrix::Bf16Matrix(const real* src, int64_t ld, int64_t rows, int64_t cols) {
  if (!gemm_rounds_to_bf16()) {
    data_ = src;
    ld_ = ld;
    return;
  }
  const int64_t n = rows * cols;
  bytes_ = std::size_t(n) * sizeof(real);
  copy_ = n > 0 ? static_cast<real*>(alloc::allocate(bytes_)) : nullptr;
  const RoundJob job{src, ld, rows, cols, copy_};
  round_jobs(&job, 1);
  data_ = copy_;
  ld_ = cols;
}

Bf16Matrix::~Bf16Matrix() {
  if (copy_) alloc::deallocate(copy_, bytes_);
}

void gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, real alpha, const real* A,
          int64_t lda, const real* B, int64_t ldb, real beta, real* C, int64_t ldc) {
  gemm(Bf16Inputs{}, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

void gemm(Bf16Inputs done, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, real alpha,
          const real* A, int64_t lda, const real* B, int64_t ldb, real beta, real* C, int64_t ldc) {
  if (M == 0 || N == 0) return;
  if (K > 0 && gemm_rounds_to_bf16() && bf16_on_units(M))
    return gemm_onednn_bf16(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
  if (K > 0 && gemm_rounds_to_bf16() && !(done.a_rounded && done.b_rounded))
    return gemm_rounded(done, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
  detail::gemm_exact(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

void detail::gemm_exact(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, real alpha,
                        const real* A, int64_t lda, const real* B, int64_t ldb, real beta, real* C,
                        int64_t ldc) {
  if (M == 0 || N == 0) return;
  if (K == 0) {  // BLAS leaves C untouched when K == 0 only if beta == 1; make it exact
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) C[i * ldc + j] = beta == 0 ? 0 : beta * C[i * ldc + j];
    return;
  }
#ifndef HEED_DOUBLE
  if (gemm_engine() == GemmEngine::onednn) {
    detail::OnednnGemm g;
    g.trans_a = trans_a, g.trans_b = trans_b;
    g.M = M, g.N = N, g.K = K;
    g.alpha = alpha, g.beta = beta;
    g.A = A, g.lda = lda, g.B = B, g.ldb = ldb, g.C = C, g.ldc = ldc;
    return detail::onednn_gemm(g);
  }
#endif
  for (int64_t v : {M, N, K, lda, ldb, ldc})  // BLAS takes 32-bit sizes
    HEED_CHECK(v <= INT_MAX, "gemm", "size ", v, " exceeds BLAS's 32-bit limit (M=", M, " N=", N,
               " K=", K, ")");
  // OpenBLAS (OpenMP build) runs on the calling thread's omp_get_max_threads() threads;
  // threads_now() sets that to the cores the machine has free (core/parallel.h). It runs
  // M * N * K <= 262144 on one thread by itself; above that a second thread pays, as timing
  // gemm() alone at (32 x 128) @ (128 x 1024) on one thread and two showed (no `make bench`
  // row times a product that small; bench_core's matmul_512_fwd row times a larger one).
  detail::threads_now();
  if (M == 1) {
    // One row, C (1, N) = alpha a op(B) + beta C, is a matrix-vector product: C^T = alpha
    // op(B)^T a + beta C^T. sgemm would pack all of B for one row (what decoding one token
    // through a Linear does: bench_generate's cached path); gemv streams it once. a's K
    // values are A[k] (stride 1), or A[k * lda] when A is stored transposed (K, 1).
    // With beta = 0, C is zeroed first, so that garbage in it (NaN) never reaches the result.
    if (beta == 0)
      for (int64_t j = 0; j < N; ++j) C[j] = 0;
    if (trans_b)  // B (N, K): C^T = B a
      cblas_gemv(CblasNoTrans, int(N), int(K), alpha, B, int(ldb), A, trans_a ? int(lda) : 1, beta, C);
    else  // B (K, N): C^T = B^T a
      cblas_gemv(CblasTrans, int(K), int(N), alpha, B, int(ldb), A, trans_a ? int(lda) : 1, beta, C);
    return;
  }
  cblas_gemm(trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, int(M),
             int(N), int(K), alpha, A, int(lda), B, int(ldb), beta, C, int(ldc));
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

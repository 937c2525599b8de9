#include "blas.h"

#include <cblas.h>

#include <climits>
#include <type_traits>

#include "error.h"
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

void gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, real alpha, const real* A,
          int64_t lda, const real* B, int64_t ldb, real beta, real* C, int64_t ldc) {
  if (M == 0 || N == 0) return;
  if (K == 0) {  // BLAS leaves C untouched when K == 0 only if beta == 1; make it exact
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) C[i * ldc + j] = beta == 0 ? 0 : beta * C[i * ldc + j];
    return;
  }
  for (int64_t v : {M, N, K, lda, ldb, ldc})  // BLAS takes 32-bit sizes
    HEED_CHECK(v <= INT_MAX, "gemm", "size ", v, " exceeds BLAS's 32-bit limit (M=", M, " N=", N,
               " K=", K, ")");
  // OpenBLAS (OpenMP build) runs on the calling thread's omp_get_max_threads() threads;
  // threads_now() sets that to the cores the machine has free (core/parallel.h). It runs
  // M * N * K <= 262144 on one thread by itself; above that a second thread pays: timing gemm()
  // at (32 x 128) @ (128 x 1024), best of 200 calls (AMD EPYC, OpenBLAS 0.3.21), gives 90 us
  // on one thread and 67 us on two.
  detail::threads_now();
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

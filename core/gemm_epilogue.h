// gemm_epilogue.h - what a GEMM does to its output as part of the product (core/blas.h,
// gemm_fused): a bias, an activation and a residual, in that order.
//
//   C = act(op(A) op(B) + bias) + R        bias (N) added to every row, R (M, N)
//   D = act'(op(A) op(B) + bias)           when asked: the derivative a backward reads
//   act = identity, or GELU: F.gelu(approximate="none") (erf form) or "tanh" (core/gelu.h)
//
// A Linear's bias, a Linear + GELU (a Transformer's feed-forward) and a Linear followed by a
// residual add are then one product instead of a product and passes over C after it. Where
// the product runs (detail::gemm_route) decides who applies the epilogue:
//   onednn_sgemm, openblas_*   heed, block by block on heed's team: each block of C (the
//                              fixed blocks the product is cut into, detail::for_each_gemm_block)
//                              gets its epilogue right after its own GEMM, on the thread that
//                              computed it, while it is in cache: no extra pass over C, nothing
//                              allocated. The values are those of the product followed by
//                              apply_epilogue over all of C (the same operations in the same
//                              order), which tests/test_gemm_epilogue.cpp checks bit for bit.
//   onednn_matmul, onednn_bf16 oneDNN: the bias as the matmul's bias, GELU as an eltwise
//                              post-op (gelu_erf, gelu_tanh), R as a binary-add post-op when it is
//                              compact (ld = N; a strided R makes oneDNN fall back to its
//                              reference kernel, so heed adds that one after). oneDNN's GELU is
//                              its own polynomial: within 1e-5 of heed's (relative to max(1, |y|),
//                              tests). When D is asked for, oneDNN (whose post-ops have one output)
//                              adds the bias only and heed applies GELU, D and R in one pass after.
// The epilogue is part of the call: the route rule stays a rule on the call alone.
#pragma once
#include <cstdint>
#include <string>
#include <utility>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "cpu.h"
#include "real.h"

namespace heed {

enum class GemmActivation { none, gelu_erf, gelu_tanh };

// "none" -> gelu_erf, "tanh" -> gelu_tanh (F.gelu's approximate); heed::Error naming `op` and
// the value otherwise.
GemmActivation gelu_activation(const std::string& approximate, const char* op = "gelu");

struct GemmEpilogue {
  const real* bias = nullptr;      // (N), or null
  GemmActivation activation = GemmActivation::none;
  real* derivative = nullptr;      // D (M, N), leading dim ldd: act' at each C before act, or null
  int64_t ldd = 0;
  const real* residual = nullptr;  // R (M, N), leading dim ldr, added after act, or null
  int64_t ldr = 0;
  bool empty() const { return !bias && activation == GemmActivation::none && !residual; }
};

// ep applied to rows [r0, r1), columns [c0, c1) of C (leading dim ldc), which hold the
// product: one loop per row, at the CPU level in use (or at `level`, a level the CPU supports:
// tests run each); the bias and residual adds are the same bits at every level, GELU's
// polynomial within 2 ulps (an FMA where the level has one, core/cpu.h). Serial: it runs on the calling
// thread, inside a parallel region too, and never throws.
void apply_epilogue(const GemmEpilogue& ep, real* C, int64_t ldc, int64_t r0, int64_t r1, int64_t c0,
                    int64_t c1);
void apply_epilogue_at(CpuLevel level, const GemmEpilogue& ep, real* C, int64_t ldc, int64_t r0,
                       int64_t r1, int64_t c0, int64_t c1);

namespace detail {
// How a product on heed's own team is cut (dnnl_sgemm, core/onednn_matmul.cpp; OpenBLAS with
// an epilogue, core/blas.cpp): the longer of C's two sides into `team` blocks of whole
// 16-wide panels (the last may be short), never K, so each value of C is summed in the same
// order whatever the team. Products below kGemmSerialWork multiply-adds run on one thread (a
// fork and join costs more), as OpenBLAS does below the same size.
constexpr int64_t kGemmPanel = 16;
constexpr int64_t kGemmSerialWork = 262144;
std::pair<int64_t, int64_t> gemm_block_range(int64_t n, int b, int blocks);
int gemm_team(int64_t M, int64_t N, int64_t K, int threads);

// block(r0, r1, c0, c1) for each of the `team` blocks of C (M, N), on a team of that many
// threads (OMP_DYNAMIC may give fewer: the blocks stay the same). team <= 1: one call with all
// of C, on the calling thread. block must not throw.
template <class Block>
void for_each_gemm_block(int64_t M, int64_t N, int team, const Block& block) {
  if (team <= 1) return block(int64_t{0}, M, int64_t{0}, N);
  const int64_t longer = M >= N ? M : N;
#pragma omp parallel num_threads(team)
  {
#ifdef _OPENMP
    const int first = omp_get_thread_num(), step = omp_get_num_threads();
#else
    const int first = 0, step = 1;
#endif
    for (int b = first; b < team; b += step) {
      const auto [lo, hi] = gemm_block_range(longer, b, team);
      if (lo < hi) M >= N ? block(lo, hi, int64_t{0}, N) : block(int64_t{0}, M, lo, hi);
    }
  }
}
}  // namespace detail

}  // namespace heed

// onednn_matmul.h - one GEMM on oneDNN (core/gemm_engine.h), float build only.
//
//   C (M, N) = alpha op(A) @ op(B) + beta C      op(A): (M, K)  op(B): (K, N), row-major
//
// Two ways in, chosen by a rule on the call alone (onednn_route_for), so that the same call
// takes the same way, and gives the same bits, on its first call and on every later one:
//   sgemm      dnnl_sgemm, oneDNN's BLAS-style float product: every f32 product. No
//              primitive to make, so a shape that changes every call (a decoding step's growing
//              key length) costs nothing extra, and it allocates nothing, so a steady training
//              step allocates nothing after its first. On gpt_small's shapes it runs at 0.86-1.24x
//              a bare primitive (build/bench/bench_gemm, 2 Zen 4 cores, AVX-512).
//   primitive  a oneDNN matmul primitive made for this exact call: shapes, transposes (as
//              strides: A^T stored (K, M) is the (M, K) matrix with strides (1, lda)), leading
//              dims, data type, alpha (output scale), beta (a sum post-op, so beta = 1
//              accumulates into C without a second pass), the epilogue oneDNN applies (bias,
//              GELU and residual post-ops, core/gemm_epilogue.h) and the thread count (a primitive
//              keeps the team size it was made for), and for a batch of products (3-D, from
//              core/blas.h's gemm_batched) its count and batch strides. Every bf16 product
//              (dnnl_sgemm has no bf16), every batch, and every f32 product when forced
//              (tests run each product both ways). Making
//              one costs 30-100 us (more when oneDNN generates a kernel for it), so
//              primitives are cached, as PyTorch's ideep caches them: an LRU of kCacheCapacity,
//              keyed on everything above. A primitive's run allocates a few small blocks inside
//              oneDNN (its argument map), never from heed's caching allocator.
// The route never depends on how often a call was seen: on AVX-512 and AMX a primitive's
// kernel (brgemm) sums in another order than dnnl_sgemm's.
//
// Buffers are the caller's: A, B and C are wrapped as oneDNN memory in place, and the
// primitive's scratchpad comes from heed's caching allocator (scratchpad mode "user"), so one
// primitive may run on several threads at once. oneDNN runs on the calling thread's OpenMP
// team (the same libgomp runtime as heed; one thread inside a parallel region). Every oneDNN
// failure becomes a heed::Error naming gemm, the shapes and oneDNN's message.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "gemm_epilogue.h"

namespace heed::detail {

// One product's arguments. bf16: A and B hold bfloat16 values (the high 16 bits of a float,
// uint16_t), C stays float.
struct OnednnGemm {
  bool bf16 = false;
  bool trans_a = false, trans_b = false;
  int64_t M = 0, N = 0, K = 0;
  float alpha = 1;
  const void* A = nullptr;
  int64_t lda = 0;
  const void* B = nullptr;
  int64_t ldb = 0;
  float beta = 0;
  float* C = nullptr;
  int64_t ldc = 0;
  // applied to C as part of the product (alpha 1, beta 0), or null: heed's, block by block,
  // on dnnl_sgemm; oneDNN's bias and post-ops on a primitive (core/gemm_epilogue.h)
  const GemmEpilogue* ep = nullptr;
  // batch > 1: `batch` products in one primitive, matrix i of A at A + i * batch_a elements
  // (0: the same A for all, a batch dim of 1 that oneDNN broadcasts), of B and C likewise
  // (batch_c > 0). No epilogue then.
  int64_t batch = 1;
  int64_t batch_a = 0, batch_b = 0, batch_c = 0;
};

// Runs it (M, N, K > 0). heed::Error on any oneDNN failure (a bf16 product on a CPU without
// bf16 units: check onednn_has_bf16() first).
void onednn_gemm(const OnednnGemm& g);

// automatic (the rule above), or every f32 product on one way (tests run each through both).
enum class OnednnRoute { automatic, primitive, sgemm };
void set_onednn_route(OnednnRoute route);
// The way g goes now: primitive or sgemm (never automatic). A function of g's shapes and the
// setting above only.
OnednnRoute onednn_route_for(const OnednnGemm& g);
// The way the calling thread's last onednn_gemm went (automatic before its first).
OnednnRoute onednn_last_route();
// How many primitives the calling thread has run on oneDNN's AMX kernels (brg:..._amx_...),
// which sum K in tiles of 32 bf16 pairs: in another order than its AVX512_BF16 kernels, so a
// product on AMX and the same product on another kernel may differ in the last bits.
int64_t onednn_amx_runs();

constexpr std::size_t kCacheCapacity = 1024;
std::size_t onednn_cached_primitives();  // entries in the LRU now
void onednn_clear_cache();

// Whether oneDNN has a bf16 x bf16 -> f32 matmul on this CPU (AVX512_BF16 or AMX; oneDNN 2.6
// also emulates it on plain AVX-512), asked once by making one.
bool onednn_has_bf16();
// "oneDNN 2.6.3 (f32 matmul: brg:avx512_core; bf16 matmul: brg:avx512_core_amx)", with
// "none on this CPU" for a data type oneDNN refuses.
std::string onednn_describe();

}  // namespace heed::detail

// bench_gemm.cpp - what multiplies heed's matrices on this machine, and how fast.
//
//   build/bench/bench_gemm [--rounds N]
//
// Prints the engine line (heed::gemm_backend(): oneDNN's kernels for f32 and bf16, the kernels
// OpenBLAS picked, how "medium" multiplies) and heed's CPU level, then for each shape of
// gpt_small's training step (B8 T256, width 384: the QKV, output, MLP products and their
// weight gradients) and the 1024^3 peak probe, in GFLOP/s (medians of N rounds, each the best
// of a few calls):
//   openblas    heed::gemm on OpenBLAS (HEED_GEMM=openblas)
//   onednn      heed::gemm on oneDNN (the default): routing, cache lookup and all
//   bare        a oneDNN matmul primitive made once for the shape and executed directly
//   heed/bare   onednn / bare: what heed's routing costs (the target is >= 0.90)
//   bf16        heed::gemm under "medium" (oneDNN's bf16 matmul where the CPU has one,
//               else the rounded float32 product)
// Then heed's own packed GEMM (core/packed_gemm.h: the recurrent steps, flash attention's
// tiles), one thread, at every CPU level this machine has, packed under "highest" and under
// "medium" (float32 FMAs on rounded values, or vdpbf16ps at level avx512_bf16).
#include <heed/heed.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace heed;

namespace {

struct Shape3 {
  const char* what;
  int64_t M, N, K;
  bool ta, tb;
};

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Best seconds per call of f over a few calls (after one untimed).
template <class F>
double best_seconds(const F& f, double flop) {
  f();
  const int reps = std::max(2, std::min(50, int(4e9 / flop)));
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const double t0 = now();
    f();
    best = std::min(best, now() - t0);
  }
  return best;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// C (M, N) = A (M, K) @ B (K, N), B packed once, on the calling thread, per CPU level and
// precision; "medium" names its kernel (the level's bf16 dot products or float32 FMAs).
void packed_table(int rounds) {
  const Shape3 shapes[] = {
      {"lstm step", 32, 1024, 256, false, false},    // h_{t-1} (B, H) @ W_hh^T (H, 4H)
      {"flash S tile", 64, 64, 64, false, true},     // Q_i K_j^T
      {"flash O tile", 64, 64, 64, false, false},    // P V_j
  };
  std::printf("\npacked GEMM, one thread (GFLOP/s, medians of %d rounds):\n", rounds);
  std::printf("%-14s %5s %5s %5s %12s %10s %10s  %s\n", "shape", "M", "N", "K", "level", "highest",
              "medium", "medium kernel");
  for (const Shape3& s : shapes)
    for (CpuLevel level : cpu_supported_levels()) {
      const CpuKernels& kernels = cpu_kernels_at(level);
      std::vector<float> A(s.M * s.K), B(s.K * s.N), C(s.M * s.N);
      for (std::size_t i = 0; i < A.size(); ++i) A[i] = float(i % 7) * 0.1f;
      for (std::size_t i = 0; i < B.size(); ++i) B[i] = float(i % 5) * 0.1f;
      const double flop = 2.0 * s.M * s.N * s.K;
      PackedB exact = pack_b(B.data(), s.tb, s.tb ? s.K : s.N, s.K, s.N), rounded;
      {
        MatmulPrecisionGuard medium("medium");
        rounded = pack_b(B.data(), s.tb, s.tb ? s.K : s.N, s.K, s.N);
      }
      std::vector<double> hi, me;
      for (int r = 0; r < rounds; ++r)
        for (PackedB* p : {&exact, &rounded}) {
          const auto run = [&] {
            gemm_packed_at(kernels, false, s.M, A.data(), s.K, *p, 1, false, C.data(), s.N);
          };
          (p == &exact ? hi : me).push_back(flop / best_seconds(run, flop) * 1e-9);
        }
      std::printf("%-14s %5ld %5ld %5ld %12s %10.1f %10.1f  %s\n", s.what, long(s.M), long(s.N),
                  long(s.K), cpu_level_name(level), median(hi), median(me),
                  kernels.gemm_packed_bf16 != nullptr ? "vdpbf16ps" : "float32 FMAs");
    }
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 3;
  for (int i = 1; i < argc; ++i)
    if (!std::strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = std::atoi(argv[++i]);
  std::printf("engine: %s\n", gemm_backend().c_str());
  std::printf("heed kernels: %s, threads %d\n", cpu_capability(), get_num_threads());
  const Shape3 shapes[] = {
      {"qkv x W^T", 2048, 1152, 384, false, true},   {"proj x W^T", 2048, 384, 384, false, true},
      {"mlp up", 2048, 1536, 384, false, true},      {"mlp down", 2048, 384, 1536, false, true},
      {"dW = dy^T x", 1536, 384, 2048, true, false}, {"dx = dy W", 2048, 384, 1536, false, false},
      {"scores q k^T", 256, 256, 64, false, true},   {"decode x W^T", 1, 1152, 384, false, true},
      {"peak 1024^3", 1024, 1024, 1024, false, false},
  };
  std::printf("%-14s %5s %5s %5s %10s %10s %10s %10s %10s\n", "shape", "M", "N", "K", "openblas",
              "onednn", "bare", "heed/bare", "bf16");
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(eng);
  for (const Shape3& s : shapes) {
    const int64_t lda = s.ta ? s.M : s.K, ldb = s.tb ? s.K : s.N;
    std::vector<float> A(s.M * s.K), B(s.K * s.N), C(s.M * s.N);
    for (std::size_t i = 0; i < A.size(); ++i) A[i] = float(i % 7) * 0.1f;
    for (std::size_t i = 0; i < B.size(); ++i) B[i] = float(i % 5) * 0.1f;
    const double flop = 2.0 * s.M * s.N * s.K;
    auto heed_gemm = [&] {
      gemm(s.ta, s.tb, s.M, s.N, s.K, 1, A.data(), lda, B.data(), ldb, 0, C.data(), s.N);
    };
    using md = dnnl::memory::desc;
    using dims = dnnl::memory::dims;
    using dt = dnnl::memory::data_type;
    const md a(dims{s.M, s.K}, dt::f32, s.ta ? dims{1, lda} : dims{lda, 1});
    const md b(dims{s.K, s.N}, dt::f32, s.tb ? dims{1, ldb} : dims{ldb, 1});
    const md c(dims{s.M, s.N}, dt::f32, dims{s.N, 1});
    const dnnl::matmul prim(dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, b, c), eng));
    dnnl::memory am(a, eng, A.data()), bm(b, eng, B.data()), cm(c, eng, C.data());
    auto bare = [&] {
      prim.execute(stream, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}});
      stream.wait();
    };
    std::vector<double> ob, od, bb, bf;
    for (int r = 0; r < rounds; ++r) {
      set_gemm_engine(GemmEngine::openblas);
      ob.push_back(flop / best_seconds(heed_gemm, flop) * 1e-9);
      set_gemm_engine(GemmEngine::onednn);
      od.push_back(flop / best_seconds(heed_gemm, flop) * 1e-9);
      bb.push_back(flop / best_seconds(bare, flop) * 1e-9);
      MatmulPrecisionGuard medium("medium");
      bf.push_back(flop / best_seconds(heed_gemm, flop) * 1e-9);
    }
    std::printf("%-14s %5ld %5ld %5ld %10.1f %10.1f %10.1f %10.2f %10.1f\n", s.what, long(s.M),
                long(s.N), long(s.K), median(ob), median(od), median(bb), median(od) / median(bb),
                median(bf));
  }
  std::printf("(GFLOP/s, medians of %d rounds; openblas is heed's gemm with HEED_GEMM=openblas%s)\n",
              rounds, openblas_misdetected() ? ", which runs on oneDNN here: OpenBLAS misjudged this CPU" : "");
  packed_table(rounds);
  return 0;
}

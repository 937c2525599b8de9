// test_gemm_engine.cpp - core/gemm_engine.h and core/onednn_matmul.h: which engine runs, the
// guard against OpenBLAS misjudging the CPU (proved in a child process whose OpenBLAS is forced
// to its SSE3 "Prescott" kernels), oneDNN's primitive cache (keys, LRU bound, threads), beta = 0
// over garbage, errors, and the bf16 matmul where the CPU has one. gemm against gemm_naive on
// every engine and route is in test_blas.cpp; the route rule in test_gemm_route.cpp.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <thread>
#include <vector>

#include <heed/core/blas.h>
#include <heed/core/cpu.h>
#include <heed/core/gemm_engine.h>
#include <heed/core/matmul_precision.h>
#include <heed/core/onednn_matmul.h>
#include "gemm_engine_scope.h"
#include "helpers.h"

using namespace heed;
using heed::test::EngineScope;
using heed::test::random_buffer;

namespace {
// C (M, N) = A (M, K) @ B (K, N), all compact, in double.
std::vector<double> reference(const std::vector<real>& A, const std::vector<real>& B, int64_t M,
                              int64_t N, int64_t K) {
  std::vector<double> C(M * N, 0.0);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t k = 0; k < K; ++k)
      for (int64_t j = 0; j < N; ++j) C[i * N + j] += double(A[i * K + k]) * double(B[k * N + j]);
  return C;
}
}  // namespace

TEST_CASE("gemm engine: HEED_GEMM's rule, OpenBLAS's kernel levels, the backend's description") {
  CHECK(gemm_select_engine(nullptr, false) == GemmEngine::onednn);
  CHECK(gemm_select_engine("", false) == GemmEngine::onednn);
  CHECK(gemm_select_engine("onednn", false) == GemmEngine::onednn);
  CHECK(gemm_select_engine("openblas", false) == GemmEngine::openblas);
  CHECK(gemm_select_engine("openblas", true) == GemmEngine::onednn);  // misjudged: never SSE3
  try {
    gemm_select_engine("mkl", false);
    FAIL("HEED_GEMM=mkl was accepted");
  } catch (const Error& e) {
    CHECK(std::string(e.what()) == "HEED_GEMM: unknown GEMM engine 'mkl': onednn or openblas");
  }
  CHECK(openblas_core_level("Prescott") == CpuLevel::v2);
  CHECK(openblas_core_level("Sandybridge") == CpuLevel::v2);  // AVX, no FMA: below AVX2
  CHECK(openblas_core_level("Haswell") == CpuLevel::avx2);
  CHECK(openblas_core_level("Zen") == CpuLevel::avx2);
  CHECK(openblas_core_level("SkylakeX") == CpuLevel::avx512);
  CHECK(openblas_core_level(nullptr) == CpuLevel::v2);
  const std::string text = gemm_backend();
  MESSAGE("gemm_backend(): ", text);
  // HEED_CPU below the machine's level (check-portable's runs) says that it capped oneDNN, and
  // never blames the CPU for a bf16 matmul the cap took away.
  const bool capped = cpu_level() < cpu_machine_level();
  CHECK((text.find(std::string("(HEED_CPU=") + cpu_level_name(cpu_level()) + " caps oneDNN below this CPU's " +
                   cpu_level_name(cpu_machine_level()) + ")") != std::string::npos) == capped);
  if (capped && gemm_engine() == GemmEngine::onednn) CHECK(text.find("none on this CPU") == std::string::npos);
  const std::string packed = cpu_kernels().gemm_packed_bf16 != nullptr ? "vdpbf16ps" : "float32 FMAs";
  CHECK(text.find("packed GEMM under \"medium\": " + packed + " (" + cpu_capability() + ")") != std::string::npos);
  const std::string kernels = std::string("OpenBLAS picked ") + openblas_core() + " kernels; heed's level " + cpu_capability();
  MESSAGE(kernels);
  CHECK(text.find(openblas_core()) != std::string::npos);
  {
    EngineScope on(GemmEngine::onednn);
    CHECK(gemm_backend().rfind("oneDNN ", 0) == 0);
  }
  if (!openblas_misdetected()) {
    EngineScope on(GemmEngine::openblas);
    CHECK(gemm_engine() == GemmEngine::openblas);
    CHECK(gemm_backend().rfind("OpenBLAS ", 0) == 0);
  }
}

// The child: this same test binary, started again with OPENBLAS_CORETYPE=Prescott (OpenBLAS
// reads it when it loads, so only a new process can be given it) and HEED_GEMM=openblas.
TEST_CASE("gemm engine: OpenBLAS forced to its Prescott kernels never runs heed's float GEMMs silently") {
  if (const char* child = std::getenv("HEED_TEST_PRESCOTT_CHILD"); child && *child == '1') {
    std::fprintf(stderr, "child: OpenBLAS %s, level %s, engine %s\n", openblas_core(),
                 cpu_level_name(cpu_level()), gemm_engine_name(gemm_engine()));
    std::vector<real> a(64 * 64, 1), b(64 * 64, 2), c(64 * 64, 0);
    for (int i = 0; i < 3; ++i)  // the warning comes once, however many GEMMs run
      gemm(false, false, 64, 64, 64, 1, a.data(), 64, b.data(), 64, 0, c.data(), 64);
    CHECK(c[0] == 128);
    CHECK(std::string(openblas_core()) == "Prescott");
    const bool guarded = cpu_level() >= CpuLevel::avx2;
    CHECK(openblas_misdetected() == guarded);
    CHECK(gemm_engine() == (guarded ? GemmEngine::onednn : GemmEngine::openblas));
    if (guarded) CHECK(gemm_backend().find("Prescott kernels, below this CPU's level") != std::string::npos);
    return;
  }
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  REQUIRE(n > 0);
  self[n] = '\0';
  char err_path[] = "/tmp/heed_prescott_XXXXXX";
  const int err_fd = mkstemp(err_path);
  REQUIRE(err_fd >= 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    dup2(err_fd, 2);
    const int null_fd = open("/dev/null", O_WRONLY);
    dup2(null_fd, 1);
    setenv("OPENBLAS_CORETYPE", "Prescott", 1);
    setenv("HEED_GEMM", "openblas", 1);
    setenv("HEED_TEST_PRESCOTT_CHILD", "1", 1);
    unsetenv("HEED_CPU");
    execl(self, self, "-tc=*forced to its Prescott*", "--no-colors", static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  close(err_fd);
  std::ifstream in(err_path);
  std::stringstream err;
  err << in.rdbuf();
  std::remove(err_path);
  const std::string text = err.str();
  CAPTURE(text);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);  // the child's own checks passed
  // On an AVX2 or AVX-512 CPU: one line on stderr saying what happened; on an older one (or
  // emulated as one) Prescott's kernels are what the CPU deserves, and nothing is said.
  const std::string warning = "heed: OpenBLAS picked its Prescott kernels on a CPU with ";
  std::size_t count = 0;
  for (std::size_t at = text.find(warning); at != std::string::npos; at = text.find(warning, at + 1)) ++count;
  // The child's level, as it printed it (under qemu-user the child runs on the real CPU).
  // Every level but v2 is AVX2 or above (avx2, avx512, avx512_bf16).
  CHECK(text.find("child: OpenBLAS Prescott, level ") != std::string::npos);
  const bool child_avx2 = text.find("child: OpenBLAS Prescott, level ") != std::string::npos &&
                          text.find(", level v2,") == std::string::npos;
  CHECK(count == (child_avx2 ? 1u : 0u));
  if (count) CHECK(text.find("heed runs its float GEMMs on oneDNN instead") != std::string::npos);
}

TEST_CASE("oneDNN: beta = 0 overwrites NaN in C, beta = 1 accumulates, on both routes") {
  for (auto route : {detail::OnednnRoute::primitive, detail::OnednnRoute::sgemm}) {
    EngineScope on(GemmEngine::onednn, route);
    for (int64_t M : {1, 5}) {
      const int64_t N = 7, K = 9;
      const std::vector<real> A = random_buffer(M * K, 3), B = random_buffer(K * N, 4);
      const std::vector<double> want = reference(A, B, M, N, K);
      std::vector<real> C(M * N, std::numeric_limits<real>::quiet_NaN());
      gemm(false, false, M, N, K, 1, A.data(), K, B.data(), N, 0, C.data(), N);
      for (int64_t i = 0; i < M * N; ++i) REQUIRE(std::fabs(C[i] - want[i]) <= 1e-5 * (1 + std::fabs(want[i])));
      gemm(false, false, M, N, K, 1, A.data(), K, B.data(), N, 1, C.data(), N);  // C += A B
      for (int64_t i = 0; i < M * N; ++i) REQUIRE(std::fabs(C[i] - 2 * want[i]) <= 2e-5 * (1 + std::fabs(want[i])));
    }
  }
}

TEST_CASE("oneDNN: primitives are cached per shape, transposes, leading dims, alpha and beta; the cache is bounded") {
  EngineScope on(GemmEngine::onednn, detail::OnednnRoute::primitive);
  detail::onednn_clear_cache();
  std::vector<real> a(64 * 64, 1), b(64 * 64, 1), c(64 * 64, 0);
  auto run = [&](bool ta, int64_t M, int64_t lda, real alpha, real beta) {
    gemm(ta, false, M, 8, 8, alpha, a.data(), lda, b.data(), 8, beta, c.data(), 8);
  };
  run(false, 4, 8, 1, 0);
  CHECK(detail::onednn_cached_primitives() == 1);
  run(false, 4, 8, 1, 0);  // the same call: the same primitive
  CHECK(detail::onednn_cached_primitives() == 1);
  run(true, 4, 8, 1, 0);   // transposed A
  run(false, 4, 9, 1, 0);  // another leading dim
  run(false, 5, 8, 1, 0);  // another M
  run(false, 4, 8, 2, 0);  // alpha
  run(false, 4, 8, 1, 1);  // beta: a sum post-op
  CHECK(detail::onednn_cached_primitives() == 6);
  for (int64_t m = 1; m <= int64_t(detail::kCacheCapacity) + 8; ++m)
    gemm(false, false, m % 60 + 1, m / 60 + 1, 4, 1, a.data(), 4, b.data(), m / 60 + 1, 0, c.data(), m / 60 + 1);
  CHECK(detail::onednn_cached_primitives() == detail::kCacheCapacity);
  detail::onednn_clear_cache();
  CHECK(detail::onednn_cached_primitives() == 0);
}

TEST_CASE("oneDNN: one primitive run from several threads at once gives each its own product") {
  EngineScope on(GemmEngine::onednn, detail::OnednnRoute::primitive);
  const int64_t M = 48, N = 40, K = 56;
  const std::vector<real> B = random_buffer(K * N, 11);
  std::vector<std::vector<real>> A(4), C(4, std::vector<real>(M * N));
  for (int t = 0; t < 4; ++t) A[t] = random_buffer(M * K, 20 + t);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < 20; ++r)
        gemm(false, false, M, N, K, 1, A[t].data(), K, B.data(), N, 0, C[t].data(), N);
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) {
    const std::vector<double> want = reference(A[t], B, M, N, K);
    for (int64_t i = 0; i < M * N; ++i) REQUIRE(std::fabs(C[t][i] - want[i]) <= 1e-4 * (1 + std::fabs(want[i])));
  }
}

TEST_CASE("oneDNN: bf16 x bf16 -> f32 matmul where the CPU has one, a heed::Error naming gemm where not") {
  const int64_t M = 6, N = 5, K = 33;
  const std::vector<real> A = random_buffer(M * K, 7), B = random_buffer(K * N, 8);
  std::vector<uint16_t> a16(A.size()), b16(B.size());
  to_bf16_bits(A.data(), a16.data(), long(A.size()));
  to_bf16_bits(B.data(), b16.data(), long(B.size()));
  std::vector<real> C(M * N, 0);
  detail::OnednnGemm g;
  g.bf16 = true;
  g.M = M, g.N = N, g.K = K;
  g.A = a16.data(), g.lda = K, g.B = b16.data(), g.ldb = N, g.C = C.data(), g.ldc = N;
  if (!detail::onednn_has_bf16()) {
    const std::string note = std::string("oneDNN has no bf16 matmul on this CPU (") + cpu_capability() +
                             "): the bf16 path is tested on a CPU with AVX512_BF16 or AMX";
    MESSAGE(note);
    try {
      detail::onednn_gemm(g);
      FAIL("a bf16 product ran on a CPU that oneDNN says has no bf16 matmul");
    } catch (const Error& e) {
      const std::string what = e.what();
      CHECK(what.rfind("gemm: oneDNN refused the product (bf16 M=6 N=5 K=33", 0) == 0);
    }
    return;
  }
  MESSAGE("oneDNN's bf16 matmul ran: ", gemm_backend());
  detail::onednn_gemm(g);
  // against the rounded inputs' product summed in double: only the float32 sum's order differs
  std::vector<real> ar(A.size()), br(B.size());
  round_to_bf16(A.data(), ar.data(), long(A.size()));
  round_to_bf16(B.data(), br.data(), long(B.size()));
  const std::vector<double> want = reference(ar, br, M, N, K);
  for (int64_t i = 0; i < M * N; ++i) REQUIRE(std::fabs(C[i] - want[i]) <= 1e-5 * (1 + std::fabs(want[i])));
}

TEST_CASE("to_bf16_bits: the high half of round_to_bf16, NaN kept, ties to even") {
  const float values[] = {1.0f, -2.5f, 1.00390625f /* tie, to even */, 1.01171875f /* tie, up */,
                          3.4e38f /* rounds to inf */, std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::quiet_NaN(), 1e-40f, 0.0f, -0.0f};
  const long n = long(sizeof values / sizeof values[0]);
  std::vector<uint16_t> bits(n);
  to_bf16_bits(values, bits.data(), n);
  for (long i = 0; i < n; ++i) {
    const float r = round_to_bf16(values[i]);
    uint32_t u;
    std::memcpy(&u, &r, 4);
    CAPTURE(values[i]);
    CHECK(bits[i] == uint16_t(u >> 16));
  }
}

#include "gemm_engine.h"

#include <cblas.h>
#include <strings.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sstream>

#include "error.h"
#include "onednn_matmul.h"

namespace heed {
namespace {

// OpenBLAS's x86-64 kernel sets (DYNAMIC_ARCH build, 0.3.21) at AVX2 or above; every other
// name (Prescott, Core2, Nehalem, Sandybridge, Bulldozer, ...) is below.
constexpr struct {
  const char* core;
  CpuLevel level;
} kOpenblasCores[] = {
    {"Haswell", CpuLevel::avx2},     {"Zen", CpuLevel::avx2},
    {"Excavator", CpuLevel::avx2},   {"SkylakeX", CpuLevel::avx512},
    {"Cooperlake", CpuLevel::avx512}, {"SapphireRapids", CpuLevel::avx512},
};

#ifdef HEED_DOUBLE
constexpr bool kHasOnednn = false;  // oneDNN has no float64 matmul
#else
constexpr bool kHasOnednn = true;
#endif

std::atomic<int> g_engine{-1};  // -1 until the first GEMM chooses

// Once per process, on stderr: OpenBLAS misjudged the CPU, and what heed does about it.
void warn_misdetected() {
  static std::once_flag once;
  std::call_once(once, [] {
    std::fprintf(stderr,
                 "heed: OpenBLAS picked its %s kernels on a CPU with %s; %s\n", openblas_core(),
                 cpu_level_name(cpu_level()),
                 kHasOnednn ? "heed runs its float GEMMs on oneDNN instead (core/gemm_engine.h)"
                            : "the double build has no other engine: set OPENBLAS_CORETYPE="
                              "Haswell (AVX2) or SkylakeX (AVX-512) before starting the program");
  });
}

// The rule, in one place: the double build has only OpenBLAS; the float build uses oneDNN
// where OpenBLAS misjudged the CPU, else what was asked.
GemmEngine decide(GemmEngine asked, bool misdetected) {
  if (!kHasOnednn) return GemmEngine::openblas;
  return misdetected ? GemmEngine::onednn : asked;
}

// The rule for this process, saying once on stderr when it overrides what was asked.
GemmEngine apply(GemmEngine asked) {
  const bool misdetected = openblas_misdetected();
  if (misdetected && (asked == GemmEngine::openblas || !kHasOnednn)) warn_misdetected();
  return decide(asked, misdetected);
}

// HEED_GEMM's value: onednn (also when unset or empty) or openblas; heed::Error otherwise.
GemmEngine parse_engine(const char* asked) {
  if (asked == nullptr || *asked == '\0' || std::strcmp(asked, "onednn") == 0) return GemmEngine::onednn;
  if (std::strcmp(asked, "openblas") == 0) return GemmEngine::openblas;
  fail("HEED_GEMM", "unknown GEMM engine '", asked, "': onednn or openblas");
}

}  // namespace

const char* gemm_engine_name(GemmEngine engine) {
  return engine == GemmEngine::onednn ? "onednn" : "openblas";
}

GemmEngine gemm_select_engine(const char* asked, bool misdetected) {
  return decide(parse_engine(asked), misdetected);
}

GemmEngine gemm_engine() {
  int e = g_engine.load(std::memory_order_relaxed);
  if (e < 0) {
    e = int(apply(parse_engine(std::getenv("HEED_GEMM"))));
    g_engine.store(e, std::memory_order_relaxed);
  }
  return GemmEngine(e);
}

void set_gemm_engine(GemmEngine engine) {
  g_engine.store(int(apply(engine)), std::memory_order_relaxed);
}

const char* openblas_core() {
  static const char* core = openblas_get_corename();
  return core;
}

CpuLevel openblas_core_level(const char* core) {
  for (const auto& c : kOpenblasCores)
    if (core != nullptr && strcasecmp(core, c.core) == 0) return c.level;
  return CpuLevel::v2;
}

// Against the level heed's own kernels run at: the machine's, or the one HEED_CPU forced (a
// run that asks heed to act as a v2 CPU may give OpenBLAS v2 kernels too).
bool openblas_misdetected() {
  return openblas_core_level(openblas_core()) < CpuLevel::avx2 && cpu_level() >= CpuLevel::avx2;
}

std::string gemm_backend() {
  std::ostringstream os;
  std::string blas = openblas_get_config();
  blas = blas.substr(0, blas.find(' ', blas.find(' ') + 1));  // "OpenBLAS 0.3.21"
  const bool misdetected = openblas_misdetected();
  const char* misjudged = misdetected ? ", below this CPU's level" : "";
  // HEED_CPU below the machine's level caps oneDNN too (core/onednn_matmul.h): a bf16 matmul
  // missing then is the cap's doing, not the CPU's.
  const bool capped = cpu_level() < cpu_machine_level();
  const std::string cap = capped ? std::string(" (HEED_CPU=") + cpu_level_name(cpu_level()) +
                                       " caps oneDNN below this CPU's " + cpu_level_name(cpu_machine_level()) + ")"
                                 : std::string();
  if (gemm_engine() == GemmEngine::onednn) {
    std::string described = detail::onednn_describe();
    const std::string none = "bf16 matmul: none on this CPU";
    if (capped && described.find(none) != std::string::npos)
      described.replace(described.find(none), none.size(),
                        std::string("bf16 matmul: none at HEED_CPU=") + cpu_level_name(cpu_level()));
    os << described << cap << "; \"medium\" "
       << (detail::onednn_has_bf16() ? "on oneDNN's bf16 matmul"
                                     : "rounds to bf16 and multiplies in float32 (no bf16 matmul)")
       << "; " << blas << " picked " << openblas_core() << " kernels" << misjudged;
  } else {
    os << blas << " (" << openblas_core() << " kernels" << misjudged << ")" << cap
       << (kHasOnednn ? "; \"medium\" rounds to bf16 and multiplies in float32"
                      : "; double build: oneDNN has no float64 matmul");
  }
  if (kHasOnednn)  // heed's own packed GEMM (core/packed_gemm.h), whatever the engine
    os << "; packed GEMM under \"medium\": "
       << (cpu_kernels().gemm_packed_bf16 != nullptr ? "vdpbf16ps" : "float32 FMAs") << " ("
       << cpu_capability() << ")";
  return os.str();
}

}  // namespace heed

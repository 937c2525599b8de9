// cpu.cpp - see cpu.h: what the CPU has, which level runs, and the table of that level.
#include "cpu.h"

#include <cstdlib>
#include <cstring>

#include "error.h"

namespace heed {

namespace detail {
// one per level, each defined in the file compiled for it (core/cpu_v2.cpp, cpu_avx2.cpp,
// cpu_avx512.cpp, cpu_avx512_bf16.cpp)
extern const CpuKernels kCpuKernelsV2, kCpuKernelsAvx2, kCpuKernelsAvx512, kCpuKernelsAvx512Bf16;
}  // namespace detail

const char* cpu_level_name(CpuLevel level) {
  switch (level) {
    case CpuLevel::v2: return "v2";
    case CpuLevel::avx2: return "avx2";
    case CpuLevel::avx512: return "avx512";
    case CpuLevel::avx512_bf16: return "avx512_bf16";
  }
  return "?";
}

// __builtin_cpu_supports reads cpuid and also asks the OS (xgetbv) whether it saves the
// vector registers, so a level is chosen only when its instructions can run.
CpuLevel cpu_machine_level() {
  static const CpuLevel level = [] {
    __builtin_cpu_init();
    const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                      __builtin_cpu_supports("bmi2");
    const bool avx512 = avx2 && __builtin_cpu_supports("avx512f") &&
                        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
                        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512cd");
    const bool bf16 = avx512 && __builtin_cpu_supports("avx512bf16");
    return bf16 ? CpuLevel::avx512_bf16 : avx512 ? CpuLevel::avx512 : avx2 ? CpuLevel::avx2 : CpuLevel::v2;
  }();
  return level;
}

std::vector<CpuLevel> cpu_supported_levels() {
  std::vector<CpuLevel> levels;
  for (int l = 0; l <= int(cpu_machine_level()); ++l) levels.push_back(CpuLevel(l));
  return levels;
}

CpuLevel cpu_select_level(const char* forced, CpuLevel machine) {
  if (forced == nullptr || *forced == '\0') return machine;
  for (CpuLevel level : {CpuLevel::v2, CpuLevel::avx2, CpuLevel::avx512, CpuLevel::avx512_bf16}) {
    if (std::strcmp(forced, cpu_level_name(level)) != 0) continue;
    HEED_CHECK(level <= machine, "HEED_CPU", "level '", forced, "' is above what this CPU supports (",
               cpu_level_name(machine), ")");
    return level;
  }
  fail("HEED_CPU", "unknown level '", forced, "' (v2, avx2, avx512 or avx512_bf16)");
}

// A function-local static: selected once, thread-safely; if HEED_CPU is bad, every call throws
// the same error (a static whose initialiser threw is tried again at the next call).
CpuLevel cpu_level() {
  static const CpuLevel level = cpu_select_level(std::getenv("HEED_CPU"), cpu_machine_level());
  return level;
}

const char* cpu_capability() { return cpu_level_name(cpu_level()); }

const CpuKernels& cpu_kernels_at(CpuLevel level) {
  HEED_CHECK(level <= cpu_machine_level(), "cpu_kernels_at", "level ", cpu_level_name(level),
             " is above what this CPU supports (", cpu_level_name(cpu_machine_level()), ")");
  switch (level) {
    case CpuLevel::avx512_bf16: return detail::kCpuKernelsAvx512Bf16;
    case CpuLevel::avx512: return detail::kCpuKernelsAvx512;
    case CpuLevel::avx2: return detail::kCpuKernelsAvx2;
    case CpuLevel::v2: break;
  }
  return detail::kCpuKernelsV2;
}

const CpuKernels& cpu_kernels() {
  static const CpuKernels& table = cpu_kernels_at(cpu_level());
  return table;
}

}  // namespace heed

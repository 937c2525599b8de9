// matmul_precision.cpp - see matmul_precision.h.
#include "matmul_precision.h"

#include <atomic>
#include <cstring>

#include "cpu.h"
#include "error.h"
#include "real.h"

namespace heed {

namespace {
std::atomic<int> g_precision{int(MatmulPrecision::highest)};
// Added at static initialisation, read after: fixed storage needs no construction order.
constexpr int kMaxListeners = 4;
void (*g_listeners[kMaxListeners])(MatmulPrecision) = {};
std::atomic<int> g_listener_count{0};
}  // namespace

void add_matmul_precision_listener(void (*listener)(MatmulPrecision)) {
  const int n = g_listener_count.load();
  HEED_CHECK(n < kMaxListeners, "add_matmul_precision_listener", "more than ", kMaxListeners, " listeners");
  g_listeners[n] = listener;
  g_listener_count.store(n + 1);
}

const char* matmul_precision_name(MatmulPrecision p) {
  switch (p) {
    case MatmulPrecision::highest: return "highest";
    case MatmulPrecision::high: return "high";
    case MatmulPrecision::medium: return "medium";
  }
  return "?";
}

MatmulPrecision parse_matmul_precision(const std::string& name, const char* op) {
  for (MatmulPrecision p : {MatmulPrecision::highest, MatmulPrecision::high, MatmulPrecision::medium})
    if (name == matmul_precision_name(p)) return p;
  fail(op, "unknown precision '", name, "' (highest, high or medium)");
}

MatmulPrecision matmul_precision() { return MatmulPrecision(g_precision.load(std::memory_order_relaxed)); }
void set_matmul_precision(MatmulPrecision p) {
  g_precision.store(int(p), std::memory_order_relaxed);
  for (int i = 0, n = g_listener_count.load(); i < n; ++i) g_listeners[i](p);
}

void set_float32_matmul_precision(const std::string& name) {
  set_matmul_precision(parse_matmul_precision(name, "set_float32_matmul_precision"));
}
std::string get_float32_matmul_precision() { return matmul_precision_name(matmul_precision()); }

bool gemm_rounds_to_bf16() {
#ifdef HEED_DOUBLE
  return false;
#else
  return matmul_precision() == MatmulPrecision::medium;
#endif
}

MatmulPrecisionGuard::MatmulPrecisionGuard(const std::string& name)
    : MatmulPrecisionGuard(parse_matmul_precision(name, "MatmulPrecisionGuard")) {}
MatmulPrecisionGuard::MatmulPrecisionGuard(MatmulPrecision p) : previous_(matmul_precision()) {
  set_matmul_precision(p);
}
MatmulPrecisionGuard::~MatmulPrecisionGuard() { set_matmul_precision(previous_); }

// The branch-free form of round_to_bf16, which GCC vectorises: a NaN's rounded value is
// replaced by the quieted NaN by a select. Compiled for the CPU's level (core/cpu.h,
// run_at_cpu_level: 8 values an instruction with AVX2), as it runs on every GEMM input
// under "medium"; integer operations only, so every level gives the same bits.
void round_to_bf16(const float* src, float* dst, long n) {
  // Captured by value and stored as float: a store GCC cannot type would, as far as it knows,
  // change the captured pointers, and the loop would not vectorise.
  run_at_cpu_level([src, dst, n] {
    for (long i = 0; i < n; ++i) {
      unsigned u;
      std::memcpy(&u, src + i, 4);
      const unsigned rounded = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
      const unsigned nan = (u | 0x00400000u) & 0xffff0000u;
      const unsigned r = (u & 0x7fffffffu) > 0x7f800000u ? nan : rounded;
      float f;
      std::memcpy(&f, &r, 4);
      dst[i] = f;
    }
  });
}

void to_bf16_bits(const float* src, uint16_t* dst, long n) {
  run_at_cpu_level([src, dst, n] {
    for (long i = 0; i < n; ++i) {
      unsigned u;
      std::memcpy(&u, src + i, 4);
      const unsigned rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
      const unsigned nan = (u | 0x00400000u) >> 16;
      dst[i] = uint16_t((u & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
    }
  });
}

void round_to_bf16(const double* src, double* dst, long n) {
  for (long i = 0; i < n; ++i) dst[i] = round_to_bf16(src[i]);
}

}  // namespace heed

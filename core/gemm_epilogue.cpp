// gemm_epilogue.cpp - the epilogue's loops (core/gemm_epilogue.h) and the cut of a product into
// blocks on heed's team.
#include "gemm_epilogue.h"

#include <algorithm>

#include "error.h"
#include "gelu.h"

namespace heed {

GemmActivation gelu_activation(const std::string& approximate, const char* op) {
  if (approximate == "none") return GemmActivation::gelu_erf;
  if (approximate == "tanh") return GemmActivation::gelu_tanh;
  fail(op, "approximate must be \"none\" or \"tanh\", got \"", approximate, "\"");
}

namespace {

// One row's n values c[j] = act(c[j] + bias[j]) + r[j] (d[j] = act'(c[j] + bias[j])); each term
// only when given. Every combination is its own loop (chosen once per row), so that each
// vectorises.
template <class Act>
void row(real* c, const real* bias, real* d, const real* r, int64_t n, const Act& act) {
  if (d) {
    if (bias)
      for (int64_t j = 0; j < n; ++j) c[j] = act(c[j] + bias[j], d[j]);
    else
      for (int64_t j = 0; j < n; ++j) c[j] = act(c[j], d[j]);
  } else {
    if (bias)
      for (int64_t j = 0; j < n; ++j) c[j] = act(c[j] + bias[j]);
    else
      for (int64_t j = 0; j < n; ++j) c[j] = act(c[j]);
  }
  if (r)
    for (int64_t j = 0; j < n; ++j) c[j] += r[j];
}

struct Identity {
  real operator()(real v) const { return v; }
  real operator()(real v, real& d) const { return d = 1, v; }
};
struct GeluErf {
  real operator()(real v) const { return gelu_math::erf_form(v); }
  real operator()(real v, real& d) const { return gelu_math::erf_form(v, d); }
};
struct GeluTanh {
  real operator()(real v) const { return gelu_math::tanh_form(v); }
  real operator()(real v, real& d) const { return gelu_math::tanh_form(v, d); }
};

template <class Act>
void rows(const GemmEpilogue& ep, real* C, int64_t ldc, int64_t r0, int64_t r1, int64_t c0, int64_t c1,
          const Act& act) {
  for (int64_t i = r0; i < r1; ++i)
    row(C + i * ldc + c0, ep.bias ? ep.bias + c0 : nullptr, ep.derivative ? ep.derivative + i * ep.ldd + c0 : nullptr,
        ep.residual ? ep.residual + i * ep.ldr + c0 : nullptr, c1 - c0, act);
}

}  // namespace

void apply_epilogue_at(CpuLevel level, const GemmEpilogue& ep, real* C, int64_t ldc, int64_t r0,
                       int64_t r1, int64_t c0, int64_t c1) {
  if (ep.empty() || r0 >= r1 || c0 >= c1) return;
  run_at_cpu_level(level, [&] {
    switch (ep.activation) {
      case GemmActivation::none: return rows(ep, C, ldc, r0, r1, c0, c1, Identity());
      case GemmActivation::gelu_erf: return rows(ep, C, ldc, r0, r1, c0, c1, GeluErf());
      case GemmActivation::gelu_tanh: return rows(ep, C, ldc, r0, r1, c0, c1, GeluTanh());
    }
  });
}

void apply_epilogue(const GemmEpilogue& ep, real* C, int64_t ldc, int64_t r0, int64_t r1, int64_t c0,
                    int64_t c1) {
  apply_epilogue_at(cpu_level(), ep, C, ldc, r0, r1, c0, c1);
}

namespace detail {

std::pair<int64_t, int64_t> gemm_block_range(int64_t n, int b, int blocks) {
  const int64_t panels = (n + kGemmPanel - 1) / kGemmPanel, per = panels / blocks, extra = panels % blocks;
  const int64_t p0 = b * per + std::min<int64_t>(b, extra), p1 = p0 + per + (b < extra);
  return {std::min(n, p0 * kGemmPanel), std::min(n, p1 * kGemmPanel)};
}

int gemm_team(int64_t M, int64_t N, int64_t K, int threads) {
  const int64_t panels = (std::max(M, N) + kGemmPanel - 1) / kGemmPanel;
  return M * N * K < kGemmSerialWork ? 1 : int(std::min<int64_t>(threads, panels));
}

}  // namespace detail
}  // namespace heed

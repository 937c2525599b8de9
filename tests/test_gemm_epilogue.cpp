// test_gemm_epilogue.cpp - the fused GEMM epilogue (core/gemm_epilogue.h, gemm_fused) and the
// fused backward pass (core/gradient_pass.h) against their composed references, on every
// engine and route, in "highest" and "medium", at the CPU level in use (check-portable runs
// this file again at every lower level the machine has), and the epilogue's loops at every
// level directly (each against its formulas compiled for that level):
//   bit for bit where the operations are the same: dnnl_sgemm and OpenBLAS with heed's
//     epilogue against the product followed by apply_epilogue; linear_gelu against
//     gelu(linear(...)) whenever a gradient is taken; the gradient pass against the composed
//     multiply, column sums and conversion
//   within 1e-5 of max(1, |y|) where oneDNN applies it (its primitives: the f32 ones forced,
//     the bf16 route), whose GELU is its own and whose kernel with post-ops may sum in
//     another order than without
#include <cmath>
#include <cstring>
#include <vector>

#include <heed/autograd/ops/arith.h>
#include <heed/autograd/engine/grad_mode.h>
#include <heed/autograd/ops/linear.h>
#include <heed/autograd/ops/reduce_util.h>
#include <heed/autograd/ops/shape.h>
#include <heed/autograd/ops/unary.h>
#include <heed/core/blas.h>
#include <heed/core/cpu.h>
#include <heed/core/gelu.h>
#include <heed/core/gemm_epilogue.h>
#include <heed/core/gradient_pass.h>
#include <heed/core/matmul_precision.h>
#include <heed/core/onednn_matmul.h>
#include <heed/core/random.h>
#include "gemm_engine_scope.h"
#include "helpers.h"

using namespace heed;
using heed::test::EngineScope;
using heed::test::random_buffer;

namespace {

bool same_bits(const real* a, const real* b, int64_t n) { return std::memcmp(a, b, std::size_t(n) * sizeof(real)) == 0; }
bool same_bits(const std::vector<real>& a, const std::vector<real>& b) {
  return a.size() == b.size() && same_bits(a.data(), b.data(), int64_t(a.size()));
}
bool same_bits(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && same_bits(a.contiguous().data(), b.contiguous().data(), a.numel());
}

// max |a - b| / max(1, |b|)
double max_rel(const std::vector<real>& a, const std::vector<real>& b) {
  double d = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double e = std::fabs(double(a[i]) - double(b[i])) / std::max(1.0, std::fabs(double(b[i])));
    d = std::isnan(e) ? INFINITY : std::max(d, e);
  }
  return d;
}

// The epilogues a test walks through: bias, GELU in both forms with and without its
// derivative, a compact and a strided residual.
struct Variant {
  bool bias;
  GemmActivation act;
  bool derivative;
  int residual;  // 0 none, 1 compact (ld N), 2 strided (ld N + 3)
  const char* name;
};
constexpr Variant kVariants[] = {
    {true, GemmActivation::none, false, 0, "bias"},
    {true, GemmActivation::gelu_erf, false, 0, "bias, gelu"},
    {true, GemmActivation::gelu_erf, true, 0, "bias, gelu, derivative"},
    {true, GemmActivation::gelu_tanh, false, 0, "bias, gelu tanh"},
    {false, GemmActivation::gelu_tanh, true, 0, "gelu tanh, derivative"},
    {true, GemmActivation::none, false, 1, "bias, residual"},
    {false, GemmActivation::gelu_erf, false, 1, "gelu, residual"},
    {true, GemmActivation::gelu_erf, true, 2, "bias, gelu, derivative, strided residual"},
};

// One fused product: op(A) (M, K), op(B) (K, N), C (M, N) with leading dim N + 1.
struct Fused {
  int64_t M, N, K;
  bool ta, tb;
  std::vector<real> A, B, bias, R;
  int64_t lda, ldb, ldc, ldr;
  Variant v;
  Fused(int64_t m, int64_t n, int64_t k, bool ta_, bool tb_, const Variant& var, unsigned seed)
      : M(m), N(n), K(k), ta(ta_), tb(tb_), v(var) {
    lda = (ta ? M : K) + 1, ldb = (tb ? K : N) + 2, ldc = N + 1, ldr = v.residual == 2 ? N + 3 : N;
    A = random_buffer((ta ? K : M) * lda, seed);
    B = random_buffer((tb ? N : K) * ldb, seed + 1);
    bias = random_buffer(N, seed + 2);
    R = random_buffer(M * ldr, seed + 3);
  }
  // C then D, one after the other: by gemm_fused, or by its reference
  std::vector<real> run(bool reference) const {
    std::vector<real> out(2 * M * ldc, real(-7));
    GemmEpilogue ep;
    ep.bias = v.bias ? bias.data() : nullptr;
    ep.activation = v.act;
    if (v.derivative) ep.derivative = out.data() + M * ldc, ep.ldd = ldc;
    if (v.residual) ep.residual = R.data(), ep.ldr = ldr;
    (reference ? detail::gemm_fused_reference : gemm_fused)(ep, {}, ta, tb, M, N, K, A.data(), lda, B.data(), ldb,
                                                            out.data(), ldc);
    return out;
  }
  detail::GemmCall call() const {
    detail::GemmCall c;
    c.trans_a = ta, c.trans_b = tb, c.M = M, c.N = N, c.K = K, c.A = A.data(), c.lda = lda, c.B = B.data();
    c.ldb = ldb, c.ldc = ldc;
    return c;
  }
};

std::vector<Fused> products(const Variant& v) {
  std::vector<Fused> out;
  unsigned seed = 7;
  // one row (gemv, one block), small (one thread), past the serial size (two blocks of rows or
  // of columns), a short last panel, K = 0 (C = the epilogue of 0)
  for (auto [M, N, K] : {std::tuple<int64_t, int64_t, int64_t>{1, 65, 384}, {7, 5, 16}, {64, 384, 100},
                         {300, 33, 64}, {33, 1536, 96}, {5, 9, 0}}) {
    out.emplace_back(M, N, K, (M + N) % 2 == 0, K % 3 == 0, v, seed);
    seed += 5;
  }
  return out;
}

// f() in "highest" and "medium" on every engine and route (tests/gemm_engine_scope.h)
template <class F>
void in_every_setting(const F& f) {
  for (const char* precision : {"highest", "medium"})
    for (const heed::test::EngineSetting& s : heed::test::kEngineSettings) {
      MatmulPrecisionGuard p(precision);
      EngineScope on(s.engine, s.route);
      const std::string precision_name = precision, setting = s.name;
      CAPTURE(precision_name);
      CAPTURE(setting);
      f();
    }
}

// Whether heed applies the epilogue after its own blocks (the reference's bits), or oneDNN
// as bias and post-ops (within tolerance: oneDNN's GELU, and its kernel's order of sums).
bool heed_applies(detail::GemmRoute r) {
  return r != detail::GemmRoute::onednn_matmul && r != detail::GemmRoute::onednn_bf16;
}

}  // namespace

// The epilogue of one element, by core/gelu.h's formulas.
real epilogue_of(const Variant& v, real c, real bias, real r, real& d) {
  real h = c + (v.bias ? bias : 0);
  d = 1;
  if (v.act == GemmActivation::gelu_erf) h = v.derivative ? gelu_math::erf_form(h, d) : gelu_math::erf_form(h);
  if (v.act == GemmActivation::gelu_tanh) h = v.derivative ? gelu_math::tanh_form(h, d) : gelu_math::tanh_form(h);
  return v.residual ? h + r : h;
}

// At the level in use, the epilogue is the composed ops' bits (the add, the gelu op with its
// derivative); at every level the machine has, its loop is the formulas within 2 ulps (a
// level's loop may fuse a * b + c into one FMA, as fastmath's loops do: tests/test_fastmath.cpp).
TEST_CASE("apply_epilogue == the composed ops at the level in use, bit for bit; == its formulas at every CPU level") {
  const int64_t M = 3, N = 37, ldc = N + 2;
  const std::vector<real> C0 = random_buffer(M * ldc, 1), bias = random_buffer(N, 2), R = random_buffer(M * N, 3);
  for (const Variant& v : kVariants) {
    const std::string variant = v.name;
    CAPTURE(variant);
    std::vector<real> want = C0, want_d(M * ldc, 0);
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 1; j < N - 1; ++j) {
        real d;
        want[i * ldc + j] = epilogue_of(v, C0[i * ldc + j], bias[j], R[i * N + j], d);
        if (v.derivative) want_d[i * ldc + j] = d;
      }
    GemmEpilogue ep;
    ep.bias = v.bias ? bias.data() : nullptr, ep.activation = v.act;
    ep.residual = v.residual ? R.data() : nullptr, ep.ldr = N;
    for (CpuLevel level : cpu_supported_levels()) {
      const std::string level_name = cpu_level_name(level);
      CAPTURE(level_name);
      std::vector<real> C = C0, D(M * ldc, 0);
      ep.derivative = v.derivative ? D.data() : nullptr, ep.ldd = ldc;
      apply_epilogue_at(level, ep, C.data(), ldc, 0, M, 1, N - 1);  // columns 0 and N - 1 untouched
      CHECK(max_rel(C, want) <= 2.4e-7);
      CHECK(max_rel(D, want_d) <= 2.4e-7);
      for (int64_t i = 0; i < M; ++i) CHECK((C[i * ldc] == C0[i * ldc] && C[i * ldc + N - 1] == C0[i * ldc + N - 1]));
    }
    // the composed ops on the rows' columns 1 .. N - 2, at the level in use
    std::vector<real> C = C0, D(M * ldc, 0);
    ep.derivative = v.derivative ? D.data() : nullptr;
    apply_epilogue(ep, C.data(), ldc, 0, M, 1, N - 1);
    Tensor h = narrow(from_vector(C0, {M, ldc}), 1, 1, N - 2);
    if (v.bias) h = h + narrow(from_vector(bias, {N}), 0, 1, N - 2);
    Tensor y = h;
    if (v.act != GemmActivation::none) {
      const Tensor leaf = h.detach().requires_grad_();  // so that gelu writes its derivative
      y = gelu(leaf, v.act == GemmActivation::gelu_erf ? "none" : "tanh");
      if (v.derivative) {
        y.backward(ones_like(y));  // dx = 1 * gelu'(h): the derivative the op wrote
        CHECK(same_bits(narrow(from_vector(D, {M, ldc}), 1, 1, N - 2), leaf.grad()));
      }
    }
    if (v.residual) y = y + narrow(from_vector(R, {M, N}), 1, 1, N - 2);
    CHECK(same_bits(narrow(from_vector(C, {M, ldc}), 1, 1, N - 2), y.detach()));
  }
  if (cpu_machine_level() < CpuLevel::avx512)
    MESSAGE("CPU levels above " << std::string(cpu_level_name(cpu_machine_level())) << " are not on this machine: their epilogue loops were not run");
}

TEST_CASE("gemm_fused == the product, then apply_epilogue: bit for bit where heed applies it, within 1e-5 where oneDNN's post-ops do") {
  in_every_setting([] {
    for (const Variant& v : kVariants)
      for (const Fused& x : products(v)) {
        const std::string variant = v.name;
        CAPTURE(variant);
        CAPTURE(x.M);
        CAPTURE(x.N);
        CAPTURE(x.K);
        const std::vector<real> fused = x.run(false), ref = x.run(true);
        const detail::GemmRoute route = detail::gemm_route(x.call());
        CHECK(detail::last_gemm_route() == route);
        // a primitive with post-ops may sum in another order than one without them
        if (heed_applies(route))
          CHECK(same_bits(fused, ref));
        else
          CHECK(max_rel(fused, ref) <= 1e-5);
        for (int64_t i = 0; i < x.M; ++i) CHECK(fused[i * x.ldc + x.N] == real(-7));  // past N: untouched
      }
  });
}

TEST_CASE("linear_gelu == gelu(linear(...)) bit for bit, forward and backward, on every engine and route; without grad, within 1e-5 where oneDNN applies GELU") {
  manual_seed(3);
  const Tensor x0 = randn({3, 70, 48}), w0 = randn({96, 48}) * 0.2, b0 = randn({96}), dy = randn({3, 70, 96});
  in_every_setting([&] {
    for (const char* approximate : {"none", "tanh"}) {
      const std::string form = approximate;
      CAPTURE(form);
      Tensor out[2], grads[2][3];
      for (int composed = 0; composed < 2; ++composed) {
        const Tensor x = x0.clone().requires_grad_(), w = w0.clone().requires_grad_(), b = b0.clone().requires_grad_();
        out[composed] = composed ? linear_gelu_reference(x, w, b, approximate) : linear_gelu(x, w, b, approximate);
        out[composed].backward(dy);
        grads[composed][0] = x.grad(), grads[composed][1] = w.grad(), grads[composed][2] = b.grad();
      }
      CHECK(same_bits(out[0], out[1]));
      for (int i = 0; i < 3; ++i) CHECK(same_bits(grads[0][i], grads[1][i]));
      NoGradGuard no_grad;  // no derivative: oneDNN's GELU post-op on its primitives
      const Tensor fused = linear_gelu(x0, w0, b0, approximate);
      CHECK(heed::test::allclose(fused, linear_gelu_reference(x0, w0, b0, approximate), 1e-5, 1e-5));
    }
  });
}

TEST_CASE("linear_gelu refuses what linear refuses, naming itself") {
  const Tensor x = randn({2, 4}), w = randn({3, 4});
  CHECK_THROWS_WITH_AS(linear_gelu(randn({2, 5}), w), "linear_gelu: input (2,5) does not match weight (3,4) (the last dims must agree)", Error);
  CHECK_THROWS_WITH_AS(linear_gelu(x, w, randn({4})), "linear_gelu: bias (4) does not match weight (3,4); expected (3)", Error);
  CHECK_THROWS_AS(linear_gelu(x, w, Tensor(), "exact"), Error);
}

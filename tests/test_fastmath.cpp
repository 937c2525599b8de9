// test_fastmath.cpp - the vectorisable float kernels of core/fastmath.h against std:: in
// double (float build), and the ops built on them against their std:: formulas.
//
// Error is measured in ulps of the true result: |got - want| / spacing(want), where
// spacing is the gap between floats at |want| (2^-149 in the denormals), want = std:: in
// double on the same float input. Each function is swept over every exponent (a stride
// through all 2^32 bit patterns), densely where its recipe switches or its result
// over/underflows, and at special values. The bounds asserted are the worst cases an
// exhaustive sweep of all 2^32 inputs found, rounded up (with and without FMA).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <heed/core/cpu.h>
#include <heed/core/fastmath.h>
#include <heed/core/random.h>
#include <heed/autograd/ops/layer_norm.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/reduce_minmax.h>
#include <heed/autograd/ops/unary.h>
#include <heed/layers/loss.h>
#include "helpers.h"

using namespace heed;
namespace fm = heed::fastmath;

namespace {

const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

float from_bits(uint32_t u) {
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

// |got - want| in ulps of want. Infinite and NaN results must match exactly (0 or infinity).
double ulp_error(float got, double want) {
  if (std::isnan(want)) return std::isnan(got) ? 0 : INFINITY;
  if (std::fabs(want) > std::numeric_limits<float>::max())  // overflows float: must be inf
    return std::isinf(got) && (got > 0) == (want > 0) ? 0 : INFINITY;
  if (!std::isfinite(got)) return INFINITY;
  const double a = std::fabs(want);
  int e;
  std::frexp(a, &e);  // a = m 2^e, m in [0.5, 1)
  const double spacing = a < 0x1p-126 ? 0x1p-149 : std::ldexp(1.0, e - 24);
  return std::fabs(double(got) - want) / spacing;
}

// The inputs a sweep visits: a stride through all bit patterns (both signs, every exponent,
// denormals, inf, NaN), plus `dense` ranges walked float by float.
std::vector<float> sweep_inputs(const std::vector<std::pair<float, float>>& dense) {
  std::vector<float> xs;
  for (uint64_t u = 0; u <= 0xffffffffull; u += 16411) xs.push_back(from_bits(uint32_t(u)));
  for (auto [lo, hi] : dense) {
    const float step = (hi - lo) / 20000;  // ~20k points, then every float near each end
    for (float x = lo; x < hi; x += step) xs.push_back(x);
    float x = lo;
    for (int i = 0; i < 2000; ++i) xs.push_back(x = std::nextafter(x, kInf));
    x = hi;
    for (int i = 0; i < 2000; ++i) xs.push_back(x = std::nextafter(x, -kInf));
  }
  const float specials[] = {0.0f, -0.0f, kInf, -kInf, kNaN, 1.0f, -1.0f, 0x1p-149f, -0x1p-149f,
                            0x1p-126f, -0x1p-126f, 0x1.fffffcp-127f, 3.4028235e38f, -3.4028235e38f};
  xs.insert(xs.end(), std::begin(specials), std::end(specials));
  return xs;
}

struct Worst {
  double ulps = 0;
  float x = 0;
};

Worst worst_error(const std::function<float(float)>& f, const std::function<double(double)>& ref,
                  const std::vector<float>& xs) {
  Worst w;
  for (float x : xs) {
    const double e = ulp_error(f(x), ref(double(x)));
    if (e > w.ulps || std::isnan(e)) w = {e, x};
  }
  return w;
}

void check_bound(const std::string& name, const std::function<float(float)>& f,
                 const std::function<double(double)>& ref, double bound,
                 const std::vector<std::pair<float, float>>& dense) {
  const Worst w = worst_error(f, ref, sweep_inputs(dense));
  CAPTURE(name);
  CAPTURE(w.x);
  CHECK(w.ulps <= bound);
}

double phi_ref(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }
double pdf_ref(double x) { return std::exp(-0.5 * x * x) / std::sqrt(2 * M_PI); }

}  // namespace

TEST_CASE("fastmath: error bounds in ulps against std:: in double") {
  check_bound("exp", [](float x) { return fm::exp(x); }, [](double x) { return std::exp(x); }, 1,
              {{-104, -87}, {-1, 1}, {88, 89}});
  check_bound("expm1", [](float x) { return fm::expm1(x); },
              [](double x) { return std::expm1(x); }, 1.5, {{-1e-3f, 1e-3f}, {-1, 1}, {19, 21}, {88, 89}});
  check_bound("log", [](float x) { return fm::log(x); }, [](double x) { return std::log(x); }, 1,
              {{0.5f, 2}, {0x1p-149f, 0x1p-120f}});
  check_bound("tanh", [](float x) { return fm::tanh(x); }, [](double x) { return std::tanh(x); },
              1.5, {{-1, 1}, {0.6f, 0.65f}, {-10, 10}});
  check_bound("sigmoid", [](float x) { return fm::sigmoid(x); },
              [](double x) { return fm::sigmoid(x); }, 2.5, {{-104, -80}, {-10, 10}});
  check_bound("erf", [](float x) { return fm::erf(x); }, [](double x) { return std::erf(x); },
              1.5, {{-1, 1}, {0.7f, 0.8f}, {-5, 5}});
  check_bound("erfc", [](float x) { return fm::erfc(x); }, [](double x) { return std::erfc(x); },
              3, {{-1, 1}, {-0.05f, 0.05f}, {0, 11}, {9, 10.1f}});
  check_bound("normal_cdf", [](float x) { return fm::normal_cdf(x); }, phi_ref, 3.5,
              {{-1, 1}, {-0.05f, 0.05f}, {-15, 0}, {-14.2f, -12.5f}, {0, 8}});
  check_bound("normal_cdf's pdf",
              [](float x) {
                float pdf;
                fm::normal_cdf(x, &pdf);
                return pdf;
              },
              pdf_ref, 2.5, {{-1, 1}, {-14.2f, -12.5f}, {-15, 15}});
}

TEST_CASE("fastmath: special values are std::'s") {
  CHECK(fm::exp(-kInf) == 0);
  CHECK(fm::exp(kInf) == kInf);
  CHECK(std::isnan(fm::exp(kNaN)));
  CHECK(fm::exp(0.0f) == 1);
  CHECK(fm::exp(-0.0f) == 1);
  CHECK(fm::exp(-104.0f) == 0);         // below half the smallest denormal: underflow to 0
  CHECK(fm::exp(-1000.0f) == 0);
  CHECK(fm::exp(-100.0f) > 0);          // a denormal, 3.7e-44, not flushed
  CHECK(fm::exp(88.8f) == kInf);        // just past float's largest
  CHECK(std::isfinite(fm::exp(88.72f)));

  CHECK(fm::expm1(-kInf) == -1);
  CHECK(fm::expm1(kInf) == kInf);
  CHECK(fm::expm1(0.0f) == 0);
  CHECK(std::signbit(fm::expm1(-0.0f)));
  CHECK(std::isnan(fm::expm1(kNaN)));
  CHECK(fm::expm1(1e-10f) == 1e-10f);   // e^x - 1 would give 0

  CHECK(fm::log(0.0f) == -kInf);
  CHECK(fm::log(-0.0f) == -kInf);
  CHECK(std::isnan(fm::log(-1.0f)));
  CHECK(std::isnan(fm::log(-kInf)));
  CHECK(std::isnan(fm::log(kNaN)));
  CHECK(fm::log(kInf) == kInf);
  CHECK(fm::log(1.0f) == 0);
  CHECK(fm::log(0x1p-149f) == doctest::Approx(-149 * std::log(2.0)));  // the smallest denormal

  CHECK(fm::tanh(kInf) == 1);
  CHECK(fm::tanh(-kInf) == -1);
  CHECK(fm::tanh(0.0f) == 0);
  CHECK(std::signbit(fm::tanh(-0.0f)));
  CHECK(std::isnan(fm::tanh(kNaN)));
  CHECK(fm::tanh(1e-30f) == 1e-30f);

  CHECK(fm::sigmoid(0.0f) == 0.5f);
  CHECK(fm::sigmoid(kInf) == 1);
  CHECK(fm::sigmoid(-kInf) == 0);
  CHECK(fm::sigmoid(-100.0f) > 0);      // e^-100, a denormal
  CHECK(std::isnan(fm::sigmoid(kNaN)));

  CHECK(fm::erf(0.0f) == 0);
  CHECK(fm::erf(kInf) == 1);
  CHECK(fm::erf(-kInf) == -1);
  CHECK(std::isnan(fm::erf(kNaN)));
  CHECK(fm::erfc(kInf) == 0);
  CHECK(fm::erfc(-kInf) == 2);
  CHECK(fm::erfc(0.0f) == 1);
  CHECK(std::isnan(fm::erfc(kNaN)));

  CHECK(fm::normal_cdf(0.0f) == 0.5f);
  CHECK(fm::normal_cdf(kInf) == 1);
  CHECK(fm::normal_cdf(-kInf) == 0);
  CHECK(std::isnan(fm::normal_cdf(kNaN)));
  // the left tail keeps its digits, where (1 + erf(x / sqrt 2)) / 2 would be 0 below x ~ -5.5
  CHECK(fm::normal_cdf(-10.0f) == doctest::Approx(7.61985302416e-24).epsilon(1e-6));
}

TEST_CASE("fastmath: the double overloads are std:: itself (the gradcheck build)") {
  for (double x : {-3.5, -0.25, 0.0, 1e-8, 0.7, 12.0}) {
    CAPTURE(x);
    CHECK(fm::exp(x) == std::exp(x));
    CHECK(fm::expm1(x) == std::expm1(x));
    CHECK(fm::tanh(x) == std::tanh(x));
    CHECK(fm::erf(x) == std::erf(x));
    CHECK(fm::erfc(x) == std::erfc(x));
    CHECK(fm::normal_cdf(x) == 0.5 * std::erfc(-x * 0.70710678118654752440));
  }
  CHECK(fm::log(2.5) == std::log(2.5));
}

TEST_CASE("fastmath: a vectorised loop gives what one call gives") {
  // heed::tanh etc. run the kernels in SIMD loops (core/elementwise.h's map); lane for lane
  // the arithmetic is the same IEEE operations, so the results are identical
  std::vector<float> xs = sweep_inputs({{-20, 20}});
  Tensor x = from_vector(xs, {int64_t(xs.size())});
  // (GCC once kept the exp, sigmoid and gelu loops scalar: see -fno-trapping-math in the
  // Makefile. This test proves the values, not the speed.)
  // The loops run at the CPU's level (core/cpu.h), whose AVX2 and AVX-512 copies let GCC fuse
  // a * b + c into one FMA: the one call is compiled for the same level.
  const Tensor outs[] = {exp(x), tanh(x), sigmoid(x), log(x), gelu(x)};
  for (int f = 0; f < 5; ++f) {
    CAPTURE(f);
    std::vector<float> want(xs.size());
    run_at_cpu_level([&] {
      for (size_t i = 0; i < xs.size(); ++i) {
        volatile float xi = xs[i];  // a volatile read keeps this loop scalar
        switch (f) {  // each a direct call, inlined here, compiled for the level
          case 0: want[i] = fm::exp(xi); break;
          case 1: want[i] = fm::tanh(xi); break;
          case 2: want[i] = fm::sigmoid(xi); break;
          case 3: want[i] = fm::log(xi); break;
          default: want[i] = xi * fm::normal_cdf(xi); break;
        }
      }
    });
    int64_t differ = 0;
    for (size_t i = 0; i < xs.size(); ++i) {
      const float a = outs[f].data()[i], b = want[i];
      differ += !(a == b || (std::isnan(a) && std::isnan(b)));
    }
    CHECK(differ == 0);
  }
}

namespace {

// y[i] = f(x[i]) in a loop compiled for `level` (core/cpu.h), as core/elementwise.h's loops
// are; the number of elements where it differs from one call of f at that level (NaN equals NaN).
template <class F>
int64_t level_loop_differs(CpuLevel level, const std::vector<float>& xs, const F& f) {
  std::vector<float> ys(xs.size());
  const float* x = xs.data();
  float* y = ys.data();
  const int64_t n = int64_t(xs.size());
  run_at_cpu_level(level, [&] {
    for (int64_t i = 0; i < n; ++i) y[i] = f(x[i]);
  });
  std::vector<float> want(xs.size());
  run_at_cpu_level(level, [&] {  // one call at a time, compiled for the same level (which
    for (int64_t i = 0; i < n; ++i) {  // may fuse a * b + c)
      volatile float xi = x[i];  // a volatile read keeps this reference loop scalar
      want[i] = f(xi);
    }
  });
  int64_t differ = 0;
  for (int64_t i = 0; i < n; ++i) differ += !(y[i] == want[i] || (std::isnan(y[i]) && std::isnan(want[i])));
  return differ;
}

}  // namespace

TEST_CASE("fastmath: the loops compiled for every CPU level the machine has give what one call gives") {
  const std::vector<float> xs = sweep_inputs({{-20, 20}});
  for (CpuLevel level : cpu_supported_levels()) {
    const char* name = cpu_level_name(level);
    CAPTURE(name);
    CHECK(level_loop_differs(level, xs, [](float v) { return fm::exp(v); }) == 0);
    CHECK(level_loop_differs(level, xs, [](float v) { return fm::expm1(v); }) == 0);
    CHECK(level_loop_differs(level, xs, [](float v) { return fm::log(v); }) == 0);
    CHECK(level_loop_differs(level, xs, [](float v) { return fm::tanh(v); }) == 0);
    CHECK(level_loop_differs(level, xs, [](float v) { return fm::sigmoid(v); }) == 0);
    CHECK(level_loop_differs(level, xs, [](float v) { return fm::erf(v); }) == 0);
    CHECK(level_loop_differs(level, xs, [](float v) { return fm::erfc(v); }) == 0);
    CHECK(level_loop_differs(level, xs, [](float v) { return v * fm::normal_cdf(v); }) == 0);
  }
}

namespace {

// The unary ops (values and gradients) against their formulas written with std:: in double,
// on 200k points of N(0, 3^2) and a few far ones. Returns the worst |a - b| / (atol + rtol |b|).
struct Mismatch {
  double ratio = 0;
  int64_t at = 0;
};

Mismatch worst_mismatch(const Tensor& got, const std::vector<double>& want, double rtol, double atol) {
  Mismatch w;
  for (int64_t i = 0; i < got.numel(); ++i) {
    const double a = got.data()[i], b = want[i];
    const double r = std::isnan(a) != std::isnan(b) ? INFINITY
                                                    : std::fabs(a - b) / (atol + rtol * std::fabs(b));
    if (r > w.ratio) w = {r, i};
  }
  return w;
}

void check_op(const std::string& name, Tensor (*op)(const Tensor&), double (*f)(double),
              double (*df)(double), double rtol = 4e-7) {
  manual_seed(5);
  Tensor x = randn({200000});
  x.mul_(3);
  const float far[] = {-60, -30, -12, -5, -1e-4f, 0, 1e-4f, 5, 12, 30, 60};
  std::copy(std::begin(far), std::end(far), x.data());
  Tensor p = x.detach().requires_grad_();
  Tensor y = op(p);
  sum(y).backward();
  std::vector<double> want(x.numel()), dwant(x.numel());
  for (int64_t i = 0; i < x.numel(); ++i) {
    want[i] = f(x.data()[i]);
    dwant[i] = df(x.data()[i]);
  }
  CAPTURE(name);
  const Mismatch v = worst_mismatch(y, want, rtol, 1e-37);
  const Mismatch d = worst_mismatch(p.grad(), dwant, 1e-6, 1e-7);
  const float xv = x.data()[v.at], xd = x.data()[d.at];
  CAPTURE(xv);
  CAPTURE(xd);
  CHECK(v.ratio <= 1);
  CHECK(d.ratio <= 1);
}

double gelu_ref(double x) { return x * phi_ref(x); }
double dgelu_ref(double x) { return phi_ref(x) + x * pdf_ref(x); }
// 0.5 x (1 + tanh u) = x s, with s = sigmoid(2u): the same function, and in this form the
// reference does not cancel at x << 0 (1 + tanh u loses all of double's digits by x = -8)
double gelu_tanh_ref(double x) {
  const double u = std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x);
  return x / (1 + std::exp(-2 * u));
}
// d/dx = 0.5 (1 + t) + 0.5 x (1 - t^2) u' = s + 2 x s (1 - s) u'
double dgelu_tanh_ref(double x) {
  const double u = std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x);
  const double s = 1 / (1 + std::exp(-2 * u)), s1 = 1 / (1 + std::exp(2 * u));
  return s + 2 * x * s * s1 * std::sqrt(2 / M_PI) * (1 + 3 * 0.044715 * x * x);
}

}  // namespace

TEST_CASE("fastmath ops: exp tanh sigmoid gelu elu and their gradients match std:: formulas") {
  check_op("exp", exp, [](double x) { return std::exp(x); }, [](double x) { return std::exp(x); });
  check_op("tanh", tanh, [](double x) { return std::tanh(x); },
           [](double x) { return 1 - std::tanh(x) * std::tanh(x); });
  check_op("sigmoid", sigmoid, [](double x) { return 1 / (1 + std::exp(-x)); },
           [](double x) { return std::exp(-x) / ((1 + std::exp(-x)) * (1 + std::exp(-x))); });
  check_op("elu", [](const Tensor& t) { return elu(t); },
           [](double x) { return x > 0 ? x : std::expm1(x); },
           [](double x) { return x > 0 ? 1 : std::exp(x); });
  // gelu's relative error follows Phi's, a few ulps (the tail included)
  check_op("gelu", [](const Tensor& t) { return gelu(t); }, gelu_ref, dgelu_ref, 6e-7);
  // the tanh form: u = sqrt(2/pi) (x + 0.044715 x^3) is rounded to float before the exp, and
  // e^(2u) magnifies that relative error 2|u| times (2|u| ~ 70 at x = -9, where y ~ 1e-30)
  check_op("gelu tanh", [](const Tensor& t) { return gelu(t, "tanh"); }, gelu_tanh_ref,
           dgelu_tanh_ref, 1e-5);
}

TEST_CASE("gelu: the derivative saved by the forward pass is the float formula of x, bit for bit") {
  // gelu's forward writes y' beside y and the backward multiplies by it (autograd/ops/unary.cpp);
  // the reference is the backward that re-evaluated the kernels from x, in float
  manual_seed(6);
  Tensor x = randn({50000});
  x.mul_(4);
  const float far[] = {-60, -30, -12, -5, -1e-4f, 0, 1e-4f, 5, 12, 30, 60};
  std::copy(std::begin(far), std::end(far), x.data());
  const Tensor dy = randn({50000});
  for (const std::string approximate : {"none", "tanh"}) {
    CAPTURE(approximate);
    Tensor p = x.detach().requires_grad_();
    const Tensor y = gelu(p, approximate);
    y.backward(dy);
    CHECK(test::allclose(y, gelu(x, approximate), 0, 0));  // the no-grad path: same values
    // the formula compiled for the CPU's level, as the op's loop is (which may fuse a * b + c)
    const bool exact = approximate == "none";
    std::vector<float> wants(x.numel());
    run_at_cpu_level([&] {
    for (int64_t i = 0; i < x.numel(); ++i) {
      const float v = x.data()[i], d = dy.data()[i];
      float want;
      if (exact) {
        float pdf;
        const float cdf = fm::normal_cdf(v, &pdf);
        want = d * (cdf + v * pdf);
      } else {
        const float c = 0.79788456080286535588f, k = 0.044715f;
        const float u = c * (v + k * v * v * v), du = c * (1 + 3 * k * v * v);
        const float e = fm::exp(-2 * std::abs(u)), r = 1 / (1 + e), er = e * r;
        want = d * ((u >= 0 ? r : er) + 2 * v * (er * r) * du);
      }
      wants[i] = want;
    }
    });
    int64_t differ = 0;
    for (int64_t i = 0; i < x.numel(); ++i) {
      const float got = p.grad().data()[i], want = wants[i];
      differ += !(got == want || (std::isnan(got) && std::isnan(want)));
    }
    CHECK(differ == 0);
  }
}

namespace {

// Naive double-precision references for the laned row kernels built on fastmath
// (softmax.cpp, autograd/ops/loss.cpp, layer_norm.cpp, reduce.cpp): straight loops, std::exp.
double lse_ref(const real* x, int64_t n) {
  double m = -INFINITY, s = 0;
  for (int64_t k = 0; k < n; ++k) m = std::max(m, double(x[k]));
  for (int64_t k = 0; k < n; ++k) s += std::exp(double(x[k]) - m);
  return m + std::log(s);
}

}  // namespace

TEST_CASE("fastmath row kernels: cross_entropy, layer_norm and sum agree with naive double loops") {
  manual_seed(8);
  const int64_t N = 300, C = 1003;  // C not a multiple of the 16 lanes or the 256-block
  {  // cross_entropy, mean over N: loss and d loss / d x = (softmax - onehot) / N
    Tensor x = randn({N, C});
    x.mul_(4);
    std::vector<int64_t> ids(N);
    for (int64_t i = 0; i < N; ++i) ids[i] = (i * 37) % C;
    Tensor p = x.detach().requires_grad_();
    Tensor loss = nn::functional::cross_entropy(p, IndexTensor(ids));
    loss.backward();
    double want = 0;
    std::vector<double> dwant(N * C);
    for (int64_t i = 0; i < N; ++i) {
      const real* row = x.data() + i * C;
      const double l = lse_ref(row, C);
      want += (l - row[ids[i]]) / N;
      for (int64_t c = 0; c < C; ++c) dwant[i * C + c] = (std::exp(row[c] - l) - (c == ids[i])) / N;
    }
    CHECK(loss.item() == doctest::Approx(want).epsilon(1e-6));
    CHECK(worst_mismatch(p.grad(), dwant, 1e-5, 1e-10).ratio <= 1);
  }
  {  // layer_norm with weight and bias over the last dim
    Tensor x = randn({N, C}), w = randn({C}), b = randn({C});
    x.add_(full({N, C}, 3));  // an offset, so the mean matters
    Tensor y = layer_norm(x, {C}, w, b);
    std::vector<double> want(N * C);
    for (int64_t i = 0; i < N; ++i) {
      const real* row = x.data() + i * C;
      double mu = 0, var = 0;
      for (int64_t c = 0; c < C; ++c) mu += row[c];
      mu /= C;
      for (int64_t c = 0; c < C; ++c) var += (row[c] - mu) * (row[c] - mu);
      const double rs = 1 / std::sqrt(var / C + 1e-5);
      for (int64_t c = 0; c < C; ++c) want[i * C + c] = (row[c] - mu) * rs * w.data()[c] + b.data()[c];
    }
    CHECK(worst_mismatch(y, want, 1e-5, 1e-6).ratio <= 1);
  }
  {  // sum of 1M elements, in pieces and lanes, against a double loop
    Tensor x = randn({1 << 20});
    double want = 0;
    for (int64_t i = 0; i < x.numel(); ++i) want += x.data()[i];
    CHECK(sum(x).item() == doctest::Approx(want).epsilon(1e-6));
  }
}

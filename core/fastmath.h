// fastmath.h - exp, expm1, log, tanh, sigmoid, erf, erfc and the normal CDF, written so
// that a loop calling them vectorises.
//
// Why not std::. std::exp and friends are calls into libm, one element per call; GCC cannot
// turn `y[i] = std::tanh(x[i])` into SIMD code, so that loop runs one element at a time
// (`make bench`: bench_core's tanh_1M_fwd_bwd row times the fast one). Each function below
// is inline, branch-free arithmetic on one float: every path is computed and the right one
// picked with `c ? a : b`, so GCC -O3 if-converts and vectorises the loop around it.
//
// They are always_inline: a call left out of line (GCC declines to inline a function this
// size at every call site) would keep the loop around it scalar.
//
// One rule keeps that true: no arithmetic inside the arms of `c ? a : b`, only values
// computed before it. An operation that happens only in one arm may trap (it is IEEE
// arithmetic), so GCC will not compute it for every lane, and the loop stays scalar.
// The rule is not enough on its own: GCC 12 moves arithmetic into an arm by itself (in
// scaled_exp, `hi + lo` after the clamp of hi), so heed builds with -fno-trapping-math
// (Makefile), which lets it compute such operations on every lane; without the flag the
// exp, sigmoid and GELU loops ran scalar.
//
// The two builds. In the float build these are the kernels of this file. In the double build
// (HEED_DOUBLE, which the finite-difference gradchecks link) the `double` overloads at the
// bottom call std:: directly, so gradchecks see libm's answers. Ops write fastmath::exp(v)
// with v a `real` and get the right one.
//
// The recipes (fdlibm, Cephes, Cody & Waite):
//   exp    x = n ln2 + r, |r| <= ln2/2, n an integer (ln2 in two parts, so r is exact);
//          e^r = 1 + r + r^2 P(r);  e^x = 2^n e^r, 2^n built from its exponent bits
//   expm1  the same r and n: e^x - 1 = 2^n (e^r - 1) + (2^n - 1), exact in every step but one
//   log    x = 2^k m, m in [sqrt(1/2), sqrt(2)), f = m - 1:
//          log x = k ln2 + f - f^2/2 + f^3 R(f)
//   tanh   |x| < 0.625: x + x^3 T(x^2) (no cancellation near 0); else 1 - 2 / (e^(2|x|) + 1)
//   sigmoid  e = e^-|x| (never overflows): 1 / (1 + e) for x >= 0, e / (1 + e) for x < 0
//   erfc   a = |x|, q = (a - 2) / (a + 2) maps [0, inf) onto [-1, 1):
//          erfc(a) = e^(-a^2) (1 + Q(q)) / (1 + 2a)       (the form of Juffa's erfcx)
//          with e^(-a^2) from a^2 split into an exact head and a small tail, since a^2 ~ 100
//          rounded to float would alone cost 60 ulps; erfc(-a) = 2 - erfc(a)
//   erf    |x| < 0.75: x + x E(x^2); else sign(x) (1 - erfc(|x|))
//   Phi    the normal CDF, Phi(x) = erfc(-x / sqrt 2) / 2, with e^(-x^2/2) split from x itself
// P, R, T, E, Q are minimax polynomials fitted for float (coefficients rounded to float).
//
// Accuracy, float build, against std:: in double (tests/test_fastmath.cpp sweeps every
// exponent, special values and denormals; bounds in ulps of the true result):
//   exp 1, expm1 1, log 1, tanh 2, sigmoid 2, erf 2, erfc 4, Phi 4 (relative in the tails:
//   Phi(-10) ~ 7.6e-24 keeps its digits, where 1 + erf(x / sqrt 2) would give 0).
// Special values as std::: exp(-inf) = 0, exp(inf) = inf, underflow to 0 through the
// denormals, log(0) = -inf, log(x < 0) = NaN, tanh(+-inf) = +-1; NaN in, NaN out.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

namespace heed::fastmath {

namespace detail {

// a * b + c, fused when the whole build targets FMA (make ARCH=native on an FMA machine), else
// two roundings; the results below are within their bounds either way. The default build is
// for x86-64-v2, and its loops compiled for AVX2 and AVX-512 (core/cpu.h) do not fuse either,
// so they give the same bits as the v2 loops.
[[gnu::always_inline]] inline float fmadd(float a, float b, float c) {
#ifdef __FMA__
  return __builtin_fmaf(a, b, c);
#else
  return a * b + c;
#endif
}

[[gnu::always_inline]] inline uint32_t bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

[[gnu::always_inline]] inline float from_bits(uint32_t u) {
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

constexpr float kInf = __builtin_huge_valf();
constexpr float kLog2e = 0x1.715476p+0f;   // 1 / ln 2
constexpr float kLn2Hi = 0x1.63p-1f;       // ln 2 = kLn2Hi + kLn2Lo; n * kLn2Hi is exact
constexpr float kLn2Lo = -0x1.bd0106p-13f;
constexpr float kRound = 0x1.8p+23f;       // t + kRound - kRound rounds t to an integer

// m * e^(hi + lo), |lo| <= 2^-11 |hi| (lo = 0 for a plain exp). Steps:
//   1. clamp hi to [-104, 89]: beyond it e^x is 0 or inf in float anyway (NaN passes)
//   2. n = round((hi + lo) / ln2) by the kRound trick, which also leaves n in the low bits
//      of t, so no float -> int conversion is needed (that one is undefined for NaN)
//   3. r = hi - n ln2 + lo, with hi - n ln2_hi exact (Cody & Waite)
//   4. e^r = 1 + r + r^2 P(r), P fitted on |r| <= 0.357: error 1.3e-10
//   5. times 2^n, as two powers 2^(n/2) and 2^(n - n/2) so that n in [-150, 128] (results
//      from the denormals up to overflow) needs no special case; m multiplies first, so a
//      denormal result is rounded once
[[gnu::always_inline]] inline float scaled_exp(float hi, float lo, float m) {
  hi = hi > 89.0f ? 89.0f : hi;
  hi = hi < -104.0f ? -104.0f : hi;
  const float t = fmadd(hi + lo, kLog2e, kRound);
  const float n = t - kRound;
  const int32_t ni = int32_t(bits(t) - bits(kRound));
  float r = fmadd(n, -kLn2Hi, hi);
  r = r + lo;
  r = fmadd(n, -kLn2Lo, r);
  float p = 0x1.9e1ac2p-13f;
  p = fmadd(p, r, 0x1.6d5dc8p-10f);
  p = fmadd(p, r, 0x1.11130cp-7f);
  p = fmadd(p, r, 0x1.5554dcp-5f);
  p = fmadd(p, r, 0x1.555554p-3f);
  p = fmadd(p, r, 0.5f);
  p = fmadd(p, r * r, r) + 1.0f;
  const int32_t n1 = ni >> 1, n2 = ni - n1;
  const float s1 = from_bits(uint32_t(n1 + 127) << 23), s2 = from_bits(uint32_t(n2 + 127) << 23);
  return ((p * m) * s1) * s2;
}

// x^2 = hi + lo exactly enough: x's top 12 significant bits xh square exactly, and
// x^2 - xh^2 = (x - xh)(x + xh) is a small tail. For |x| < 2^60 or so.
[[gnu::always_inline]] inline void square_hilo(float x, float& hi, float& lo) {
  const float xh = from_bits(bits(x) & 0xfffff000u);
  hi = xh * xh;
  lo = (x - xh) * (x + xh);
}

// erfcx(a) = e^(a^2) erfc(a) = (1 + Q(q)) / (1 + 2a),  q = (a - 2) / (a + 2),  a >= 0.
// Q fitted on q in [-1, 0.7] (a up to 11.3; callers clamp a to 11): error 8e-9.
[[gnu::always_inline]] inline float erfcx_core(float a) {
  // q = (a - 2) / (a + 2), corrected by its residual (a - 2) - q0 (a + 2): near a = 0 an
  // error in q passes into Q(q) almost unscaled
  const float ri = 1.0f / (a + 2.0f);
  const float q0 = (a - 2.0f) * ri;
  const float res = fmadd(q0, -a, fmadd(q0 + 1.0f, -2.0f, a));
  const float q = fmadd(res, ri, q0);
  float p = 0x1.d52f3cp-14f;
  p = fmadd(p, q, 0x1.be6f9cp-13f);
  p = fmadd(p, q, -0x1.d13e52p-12f);
  p = fmadd(p, q, -0x1.85d812p-10f);
  p = fmadd(p, q, 0x1.4d94dcp-10f);
  p = fmadd(p, q, 0x1.1e91bep-7f);
  p = fmadd(p, q, -0x1.074744p-7f);
  p = fmadd(p, q, -0x1.bc3872p-5f);
  p = fmadd(p, q, 0x1.4ffa22p-3f);
  p = fmadd(p, q, -0x1.540774p-3f);
  p = fmadd(p, q, -0x1.7bf5ecp-4f);
  p = fmadd(p, q, 0x1.1ba038p-2f);
  // (1 + p) / (1 + 2a) without rounding 1 + p or 1 + 2a (each would cost up to 2 ulps of a
  // result near 1/2): a first quotient, then one correction by its exact residual
  const float r = 0.5f / (a + 0.5f);                            // ~ 1 / (1 + 2a)
  const float y0 = fmadd(p, r, r);                              // ~ (1 + p) r
  const float e = (p - y0) + fmadd(y0 + y0, -a, 1.0f);          // (1 + p) - y0 (1 + 2a)
  return fmadd(e, r, y0);
}

}  // namespace detail

// e^x
[[gnu::always_inline]] inline float exp(float x) { return detail::scaled_exp(x, 0.0f, 1.0f); }

// e^x - 1, accurate near 0 (elu)
[[gnu::always_inline]] inline float expm1(float x) {
  using namespace detail;
  const float xc = x < -104.0f ? -104.0f : (x > 89.0f ? 89.0f : x);
  const float t = fmadd(xc, kLog2e, kRound);
  const float n = t - kRound;
  const int32_t ni = int32_t(bits(t) - bits(kRound));
  float r = fmadd(n, -kLn2Hi, xc);
  r = fmadd(n, -kLn2Lo, r);
  float p = 0x1.9e1ac2p-13f;
  p = fmadd(p, r, 0x1.6d5dc8p-10f);
  p = fmadd(p, r, 0x1.11130cp-7f);
  p = fmadd(p, r, 0x1.5554dcp-5f);
  p = fmadd(p, r, 0x1.555554p-3f);
  p = fmadd(p, r, 0.5f);
  const float em = fmadd(p, r * r, r);  // e^r - 1
  const int32_t n1 = ni >> 1, n2 = ni - n1;
  const float s1 = from_bits(uint32_t(n1 + 127) << 23), s2 = from_bits(uint32_t(n2 + 127) << 23);
  // 2^n em + (2^n - 1): exact scaling, 2^n - 1 exact for |n| <= 24, one rounding. For x > 20
  // the -1 no longer shows and 2^n alone may overflow its float: use e^x = (1 + em) 2^n.
  const float s = s1 * s2;
  const float small = fmadd(s, em, s - 1.0f);
  const float big = ((em + 1.0f) * s1) * s2;
  const float res = x > 20.0f ? big : small;
  return x == 0.0f ? x : res;  // expm1(-0) = -0
}

// log(x)
[[gnu::always_inline]] inline float log(float x) {
  using namespace detail;
  // denormals (d = 1): scale by 2^23 and take 23 off k; arithmetic, not a branch
  const float d = x < 0x1p-126f ? 1.0f : 0.0f;
  const float xs = x * fmadd(d, 0x1p+23f - 1.0f, 1.0f);
  // 2^k m with m in [sqrt(1/2), sqrt(2)): shift the exponent field by that of sqrt(1/2)
  const uint32_t u = bits(xs) - 0x3f3504f3u;
  const float k = fmadd(d, -23.0f, float(int32_t(u) >> 23));
  const float f = from_bits((u & 0x007fffffu) + 0x3f3504f3u) - 1.0f;  // m - 1, exact
  float p = -0x1.38c32cp-4f;
  p = fmadd(p, f, 0x1.0571ecp-3f);
  p = fmadd(p, f, -0x1.0d8c58p-3f);
  p = fmadd(p, f, 0x1.22d74ep-3f);
  p = fmadd(p, f, -0x1.547162p-3f);
  p = fmadd(p, f, 0x1.99a026p-3f);
  p = fmadd(p, f, -0x1.00022ap-2f);
  p = fmadd(p, f, 0x1.555554p-2f);
  const float z = f * f;
  float y = (f * z) * p;           // f^3 R(f)
  y = fmadd(k, kLn2Lo, y);         // + k ln2_lo
  y = fmadd(-0.5f, z, y);          // - f^2 / 2
  float r = f + y;
  r = fmadd(k, kLn2Hi, r);         // + k ln2_hi last: the largest term
  // Special inputs: r is finite garbage there, and adding inf or NaN overrides it. (Selecting
  // between r and a constant instead would let GCC move r's computation into a branch that
  // it then may not vectorise.)
  float special = x == kInf ? kInf : 0.0f;                 // log(inf) = inf
  special = x == 0.0f ? -kInf : special;                   // log(+-0) = -inf
  special = x >= 0.0f ? special : __builtin_nanf("");      // log(x < 0) = NaN, and NaN
  return r + special;
}

// tanh(x)
[[gnu::always_inline]] inline float tanh(float x) {
  using namespace detail;
  const float a = std::fabs(x);  // tanh is odd: work on |x|, copy x's sign last (-0 too)
  // |x| < 0.625: a + a^3 T(a^2), T fitted on [0, 0.625^2]: error 4.5e-9
  const float s = a * a;
  float p = -0x1.754f46p-8f;
  p = fmadd(p, s, 0x1.52041cp-6f);
  p = fmadd(p, s, -0x1.b836c8p-5f);
  p = fmadd(p, s, 0x1.1106fap-3f);
  p = fmadd(p, s, -0x1.555532p-2f);
  const float small = fmadd(a * s, p, a);
  // |x| >= 0.625: 1 - 2 / (e^(2|x|) + 1) >= 0.55, so the subtraction loses nothing; e^(2|x|) = inf
  // (|x| > 44) gives 1
  const float big = 1.0f - 2.0f / (scaled_exp(2.0f * a, 0.0f, 1.0f) + 1.0f);
  return std::copysign(a < 0.625f ? small : big, x);
}

// 1 / (1 + e^-x)
[[gnu::always_inline]] inline float sigmoid(float x) {
  const float e = exp(-std::fabs(x));
  return (x >= 0.0f ? 1.0f : e) / (1.0f + e);
}

// erfc(x) = 1 - erf(x), with relative accuracy in the right tail
[[gnu::always_inline]] inline float erfc(float x) {
  using namespace detail;
  const float a = std::fabs(x);
  const float ac = a > 11.0f ? 11.0f : a;  // erfc(11) underflows to 0 (NaN passes)
  float hi, lo;
  square_hilo(ac, hi, lo);
  const float e = scaled_exp(-hi, -lo, erfcx_core(ac));  // erfc(|x|)
  const float reflected = 2.0f - e;                      // erfc(-|x|)
  return x < 0.0f ? reflected : e;
}

// erf(x)
[[gnu::always_inline]] inline float erf(float x) {
  using namespace detail;
  // |x| < 0.75: x + x E(x^2), E fitted on [0, 0.75^2]: error 1.6e-9 (x + x E keeps the
  // leading 2/sqrt(pi) exact where x E(x^2) would round it)
  const float s = x * x;
  float p = -0x1.613e52p-11f;
  p = fmadd(p, s, 0x1.4f188ap-8f);
  p = fmadd(p, s, -0x1.b7a75cp-6f);
  p = fmadd(p, s, 0x1.ce2acep-4f);
  p = fmadd(p, s, -0x1.81273ap-2f);
  p = fmadd(p, s, 0x1.06eba8p-3f);
  const float small = fmadd(x, p, x);
  const float big = 1.0f - erfc(std::fabs(x));  // >= erf(0.75) = 0.71: no cancellation
  const float signed_big = x < 0.0f ? -big : big;
  return std::fabs(x) < 0.75f ? small : signed_big;
}

// Phi(x) = P(N(0,1) <= x) = erfc(-x / sqrt 2) / 2, and optionally phi(x) = e^(-x^2/2) / sqrt(2 pi),
// sharing one exp (gelu's backward wants both).
[[gnu::always_inline]] inline float normal_cdf(float x, float* pdf = nullptr) {
  using namespace detail;
  const float xa = std::fabs(x);
  const float xc = xa > 15.5f ? 15.5f : xa;  // Phi(-15.5) underflows to 0 (NaN passes)
  float hi, lo;
  square_hilo(xc, hi, lo);
  const float e = scaled_exp(-0.5f * hi, -0.5f * lo, 1.0f);           // e^(-x^2/2)
  const float h = 0.5f * erfcx_core(xc * 0x1.6a09e6p-1f) * e;         // Phi(-|x|)
  if (pdf) *pdf = e * 0x1.988454p-2f;                                 // 1 / sqrt(2 pi)
  const float upper = 1.0f - h;                                       // Phi(|x|)
  return x < 0.0f ? h : upper;
}

// 1 / (1 + e^-x), the reference form of the float kernel above
inline double sigmoid(double x) {
  if (x >= 0) return 1 / (1 + std::exp(-x));
  const double e = std::exp(x);
  return e / (1 + e);
}

// log(1 + e^x) = max(x, 0) + log(1 + e^-|x|) in double, exact to rounding at every x (e^ is
// only taken of -|x|, so it never overflows), with no threshold: the scalar form of
// binary_cross_entropy_with_logits's loss (PyTorch's formula). heed::softplus
// (autograd/ops/unary.h) is the tensor op, with PyTorch's softplus threshold.
inline double softplus(double x) { return (x > 0 ? x : 0.0) + std::log1p(std::exp(-std::fabs(x))); }

// The double build's versions: libm itself.
inline double exp(double x) { return std::exp(x); }
inline double expm1(double x) { return std::expm1(x); }
inline double log(double x) { return std::log(x); }
inline double tanh(double x) { return std::tanh(x); }
inline double erf(double x) { return std::erf(x); }
inline double erfc(double x) { return std::erfc(x); }
inline double normal_cdf(double x, double* pdf = nullptr) {
  if (pdf) *pdf = std::exp(-0.5 * x * x) * 0.39894228040143267794;
  return 0.5 * std::erfc(-x * 0.70710678118654752440);
}

}  // namespace heed::fastmath

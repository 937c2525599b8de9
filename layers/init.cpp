// init.cpp - the initialisers of init.h, following torch.nn.init line by line.
//
// Every function writes into t's buffer in place under NoGradGuard (as torch's run under
// torch.no_grad()), draws from heed's seeded generator (core/random.h), and leaves a
// tensor with no elements untouched.
#include "init.h"

#include <cmath>
#include <limits>
#include <vector>

#include "../autograd/engine/grad_mode.h"
#include "../core/error.h"
#include "../core/random.h"

namespace heed::nn::init {

//   linear, conv*, sigmoid   1
//   tanh                     5/3
//   relu                     sqrt(2)
//   leaky_relu(slope)        sqrt(2 / (1 + slope^2))
//   selu                     3/4
double calculate_gain(const std::string& nonlinearity, double param) {
  static const char* const kOne[] = {"linear",           "conv1d",           "conv2d",
                                     "conv3d",           "conv_transpose1d", "conv_transpose2d",
                                     "conv_transpose3d", "sigmoid"};
  for (const char* name : kOne)
    if (nonlinearity == name) return 1.0;
  if (nonlinearity == "tanh") return 5.0 / 3.0;
  if (nonlinearity == "relu") return std::sqrt(2.0);
  if (nonlinearity == "leaky_relu") {
    HEED_CHECK(std::isfinite(param), "calculate_gain", "negative_slope ", param,
               " is not a finite number");
    return std::sqrt(2.0 / (1.0 + param * param));
  }
  if (nonlinearity == "selu") return 3.0 / 4.0;
  fail("calculate_gain", "unsupported nonlinearity '", nonlinearity, "'");
}

// w: (out, in, k1, k2, ...)    fan_in = in * k1*k2*...    fan_out = out * k1*k2*...
std::pair<int64_t, int64_t> fans(const Tensor& w) {
  HEED_CHECK(w.dim() >= 2, "fans", "fan in and fan out need a tensor of at least 2 dims; "
             "got shape ", w.shape());
  int64_t receptive = 1;
  for (int d = 2; d < w.dim(); ++d) receptive *= w.size(d);
  return {w.size(1) * receptive, w.size(0) * receptive};
}

// PyTorch's checks: a <= b, both finite and representable in `real`, b - a too.
Tensor uniform_(Tensor t, double a, double b) {
  const double most = double(std::numeric_limits<real>::max());
  HEED_CHECK(std::isfinite(a) && std::isfinite(b) && std::abs(a) <= most && std::abs(b) <= most,
             "uniform_", "bounds a = ", a, " and b = ", b, " must be finite numbers a ",
             sizeof(real) == 4 ? "float" : "double", " can hold");
  HEED_CHECK(a <= b, "uniform_", "expects a <= b; got a = ", a, " > b = ", b);
  HEED_CHECK(b - a <= most, "uniform_", "b - a = ", b - a, " (a = ", a, ", b = ", b,
             ") exceeds the largest ", sizeof(real) == 4 ? "float" : "double");
  heed::detail::check_writable("uniform_", t);
  NoGradGuard ng;
  t.bump_version();  // written in place below (tensor.h: version)
  real* p = t.data();
  Draws d;
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = real(a + (b - a) * d.uniform());
  return t;
}

// PyTorch's check: std >= 0 (NaN fails it). heed also refuses a non-finite mean or std,
// which would fill t with Inf and NaN (PyTorch accepts those and does).
Tensor normal_(Tensor t, double mean, double std) {
  HEED_CHECK(std >= 0, "normal_", "std must be >= 0; got std = ", std);
  HEED_CHECK(std::isfinite(mean) && std::isfinite(std), "normal_", "mean ", mean, " and std ",
             std, " must be finite");
  heed::detail::check_writable("normal_", t);
  NoGradGuard ng;
  t.bump_version();  // written in place below (tensor.h: version)
  real* p = t.data();
  Draws d;
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = real(mean + std * d.normal());
  return t;
}

Tensor constant_(Tensor t, double value) {
  NoGradGuard ng;
  t.fill_(real(value));
  return t;
}

Tensor zeros_(Tensor t) { return constant_(t, 0); }
Tensor ones_(Tensor t) { return constant_(t, 1); }

// A gain scales a standard deviation or bound: it must be finite and >= 0 (PyTorch refuses a
// negative or NaN gain through the uniform_/normal_ it calls; the error here names the op).
static void check_gain(const char* op, double gain) {
  HEED_CHECK(std::isfinite(gain) && gain >= 0, op, "gain must be finite and >= 0; got gain = ", gain);
}

// std = gain * sqrt(2 / (fan_in + fan_out));  uniform bound a = sqrt(3) * std
Tensor xavier_uniform_(Tensor t, double gain) {
  check_gain("xavier_uniform_", gain);
  const auto [fan_in, fan_out] = fans(t);
  if (t.numel() == 0) return t;
  const double std = gain * std::sqrt(2.0 / double(fan_in + fan_out));
  const double a = std::sqrt(3.0) * std;
  return uniform_(t, -a, a);
}

Tensor xavier_normal_(Tensor t, double gain) {
  check_gain("xavier_normal_", gain);
  const auto [fan_in, fan_out] = fans(t);
  if (t.numel() == 0) return t;
  return normal_(t, 0, gain * std::sqrt(2.0 / double(fan_in + fan_out)));
}

namespace {

// std = calculate_gain(nonlinearity, a) / sqrt(fan), fan chosen by mode.
double kaiming_std(const char* op, const Tensor& t, double a, const std::string& mode,
                   const std::string& nonlinearity) {
  HEED_CHECK(mode == "fan_in" || mode == "fan_out", op, "mode '", mode,
             "' not supported; use 'fan_in' or 'fan_out'");
  const auto [fan_in, fan_out] = fans(t);
  const int64_t fan = mode == "fan_in" ? fan_in : fan_out;
  return calculate_gain(nonlinearity, a) / std::sqrt(double(fan));
}

}  // namespace

// U(-b, b), b = sqrt(3) * std = gain * sqrt(3 / fan)
Tensor kaiming_uniform_(Tensor t, double a, const std::string& mode,
                         const std::string& nonlinearity) {
  const double std = kaiming_std("kaiming_uniform_", t, a, mode, nonlinearity);
  if (t.numel() == 0) return t;
  const double bound = std::sqrt(3.0) * std;
  return uniform_(t, -bound, bound);
}

Tensor kaiming_normal_(Tensor t, double a, const std::string& mode,
                        const std::string& nonlinearity) {
  const double std = kaiming_std("kaiming_normal_", t, a, mode, nonlinearity);
  if (t.numel() == 0) return t;
  return normal_(t, 0, std);
}

// torch.nn.init.orthogonal_:
//   1. A = N(0,1) draws of shape (rows, cols), cols = numel / rows; transposed if rows < cols
//      so that it is tall, (m, n) with m >= n
//   2. A = Q R (reduced QR), then Q *= sign(diag(R)): the QR whose R has a positive diagonal
//   3. w = gain * Q (transposed back if step 1 transposed)
// Gram-Schmidt produces exactly that Q (its R diagonal holds norms, which are positive),
// so step 2 is Gram-Schmidt over the n columns of the tall matrix, in double, with each
// projection done twice ("twice is enough", Giraud et al. 2005) to stay orthogonal to
// rounding level. A column that is dependent on the previous ones stays zero, as torch's
// sign(0) = 0 leaves it.
Tensor orthogonal_(Tensor t, double gain) {
  HEED_CHECK(t.dim() >= 2, "orthogonal_", "only tensors with 2 or more dims are supported; "
             "got shape ", t.shape());
  HEED_CHECK(std::isfinite(gain), "orthogonal_", "gain must be finite; got gain = ", gain);
  if (t.numel() == 0) return t;
  const int64_t rows = t.size(0), cols = t.numel() / rows;
  std::vector<double> a(rows * cols);  // (rows, cols)
  {
    Draws d;
    for (double& v : a) v = d.normal();
  }

  // The tall matrix's columns as contiguous vectors: vec(j) has length m.
  const bool wide = rows < cols;
  const int64_t m = wide ? cols : rows, n = wide ? rows : cols;
  std::vector<double> q(n * m);  // q[j*m + i] = tall(i, j)
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      if (wide) q[i * m + j] = a[i * cols + j];  // tall = A^T: column i is A's row i
      else q[j * m + i] = a[i * cols + j];       // tall = A:   column j is A's column j
    }

  for (int64_t j = 0; j < n; ++j) {
    double* v = &q[j * m];
    for (int pass = 0; pass < 2; ++pass)
      for (int64_t k = 0; k < j; ++k) {  // v -= (q_k . v) q_k
        const double* u = &q[k * m];
        double dot = 0;
        for (int64_t i = 0; i < m; ++i) dot += u[i] * v[i];
        for (int64_t i = 0; i < m; ++i) v[i] -= dot * u[i];
      }
    double norm = 0;
    for (int64_t i = 0; i < m; ++i) norm += v[i] * v[i];
    norm = std::sqrt(norm);
    for (int64_t i = 0; i < m; ++i) v[i] = norm > 0 ? v[i] / norm : 0;
  }

  heed::detail::check_writable("orthogonal_", t);
  NoGradGuard ng;
  t.bump_version();  // written in place below (tensor.h: version)
  real* p = t.data();
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      p[i * cols + j] = real(gain * (wide ? q[i * m + j] : q[j * m + i]));
  return t;
}

}  // namespace heed::nn::init

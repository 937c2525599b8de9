#include "gradcheck.h"

#include <cmath>
#include <random>
#include <sstream>

#include "../../core/error.h"
#include "../ops/arith.h"
#include "../ops/reduce.h"
#include "engine.h"
#include "grad_mode.h"

namespace heed {

static void check_eps(double v) {
  HEED_CHECK(std::isfinite(v) && v > 0, "GradcheckOptions", "eps must be finite and > 0; got eps = ", v);
}

static void check_tolerance(const char* name, double v) {
  HEED_CHECK(std::isfinite(v) && v >= 0, "GradcheckOptions", name, " must be finite and >= 0; got ",
             name, " = ", v);
}

// Appended to a failure's message in the float build, where finite differences are too
// coarse to check gradients: most such failures say nothing about the gradient.
static const char* float_build_hint() {
  return sizeof(real) == 4 ? " (this is heed's float build, where finite differences are too "
                             "coarse to check gradients: build with -DHEED_DOUBLE and link "
                             "libheed_f64.a, as tests/gradcheck_*.cpp do)"
                           : "";
}

GradcheckResult gradcheck(const TensorFn& f, const std::vector<Tensor>& inputs,
                          const GradcheckOptions& opt) {
  check_eps(opt.eps());  // the setters store any value: checked here, before f is called
  check_tolerance("atol", opt.atol());
  check_tolerance("rtol", opt.rtol());
  GradcheckResult res;
  // Fixed projection weights w (a private generator, so the global seed is untouched).
  Tensor y0;
  {
    NoGradGuard ng;
    y0 = f(inputs);
  }
  Tensor w = empty(y0.shape());
  std::mt19937_64 gen(12345);
  std::uniform_real_distribution<double> u(0.5, 1.5);
  for (int64_t i = 0; i < w.numel(); ++i) w.data()[i] = real(u(gen) * ((i & 1) ? -1 : 1));

  auto loss = [&]() -> double {
    NoGradGuard ng;
    return double(sum(mul(f(inputs), w)).item());
  };

  // Analytic gradients.
  for (const Tensor& x : inputs)
    if (x.requires_grad()) x.set_grad(Tensor());
  Tensor L = sum(mul(f(inputs), w));
  if (!L.requires_grad()) {
    res.ok = false;
    res.message = "gradcheck: output does not depend on any input that requires grad";
    return res;
  }
  L.backward();

  for (size_t k = 0; k < inputs.size(); ++k) {
    const Tensor& x = inputs[k];
    if (!x.requires_grad()) continue;
    const Tensor g = x.grad();
    real* p = x.data();
    for (int64_t i = 0; i < x.numel(); ++i) {
      const real orig = p[i];
      p[i] = real(orig + opt.eps());
      const double lp = loss();
      p[i] = real(orig - opt.eps());
      const double lm = loss();
      p[i] = orig;
      const double numeric = (lp - lm) / (2 * opt.eps());
      const double analytic = g.defined() ? double(g.data()[i]) : 0.0;
      const double err = std::fabs(analytic - numeric);
      if (err > res.max_abs_error || std::isnan(err)) res.max_abs_error = err;
      if (res.ok && !(err <= opt.atol() + opt.rtol() * std::fabs(numeric))) {
        res.ok = false;
        std::ostringstream os;
        os << "gradcheck: input " << k << " " << x.shape() << " element " << i
           << ": analytic " << analytic << " vs numeric " << numeric << float_build_hint();
        res.message = os.str();
      }
    }
  }
  return res;
}

namespace {

// Fixed weights in +-[0.5, 1.5) for `shape`, from a private generator.
Tensor fixed_weights(const Shape& shape, std::uint64_t seed) {
  Tensor w = empty(shape);
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(0.5, 1.5);
  for (int64_t i = 0; i < w.numel(); ++i) w.data()[i] = real(u(gen) * ((i & 1) ? -1 : 1));
  return w;
}

}  // namespace

GradcheckResult gradgradcheck(const TensorFn& f, const std::vector<Tensor>& inputs,
                              const GradcheckOptions& opt) {
  check_eps(opt.eps());
  check_tolerance("atol", opt.atol());
  check_tolerance("rtol", opt.rtol());
  GradcheckResult res;
  std::vector<Tensor> xs;  // the inputs that require grad
  for (const Tensor& x : inputs)
    if (x.requires_grad()) xs.push_back(x);
  Tensor y0;
  {
    NoGradGuard ng;
    y0 = f(inputs);
  }
  const Tensor w = fixed_weights(y0.shape(), 12345).requires_grad_();
  std::vector<Tensor> v;  // one per input that requires grad
  for (size_t i = 0; i < xs.size(); ++i) v.push_back(fixed_weights(xs[i].shape(), 777 + i));

  // G(x, w), differentiable when `create` (else its value only)
  auto G = [&](bool create) -> Tensor {
    const Tensor L = sum(mul(f(inputs), w));
    const std::vector<Tensor> d = autograd::grad({L}, xs, {}, create, create, true);
    Tensor total = scalar_tensor(0);
    for (size_t i = 0; i < d.size(); ++i)
      if (d[i].defined()) total = add(total, sum(mul(d[i], v[i])));
    return total;
  };

  std::vector<Tensor> vars = xs;  // what G is differentiated by: the inputs, then w
  vars.push_back(w);
  const Tensor g = G(true);
  std::vector<Tensor> analytic(vars.size());
  if (g.requires_grad()) analytic = autograd::grad({g}, vars, {}, false, false, true);

  for (size_t k = 0; k < vars.size(); ++k) {
    const Tensor& x = vars[k];
    real* p = x.data();
    for (int64_t i = 0; i < x.numel(); ++i) {
      const real orig = p[i];
      p[i] = real(orig + opt.eps());
      const double gp = double(G(false).item());
      p[i] = real(orig - opt.eps());
      const double gm = double(G(false).item());
      p[i] = orig;
      const double numeric = (gp - gm) / (2 * opt.eps());
      const double a = analytic[k].defined() ? double(analytic[k].data()[i]) : 0.0;
      const double err = std::fabs(a - numeric);
      if (err > res.max_abs_error || std::isnan(err)) res.max_abs_error = err;
      if (res.ok && !(err <= opt.atol() + opt.rtol() * std::fabs(numeric))) {
        res.ok = false;
        std::ostringstream os;
        os << "gradgradcheck: ";
        if (k + 1 == vars.size()) os << "the output gradient (dy) " << x.shape();
        else os << "input " << k << " " << x.shape();
        os << " element " << i << ": analytic " << a << " vs numeric " << numeric
           << float_build_hint();
        res.message = os.str();
      }
    }
  }
  return res;
}

}  // namespace heed

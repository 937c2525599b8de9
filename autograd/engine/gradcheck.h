// gradcheck.h - compare autograd's gradients with central finite differences.
//
//   L(x) = sum(f(x) * w)            w: fixed random weights, one per output element
//   numeric  dL/dx_i ~ (L(x + eps e_i) - L(x - eps e_i)) / (2 eps)
//   analytic dL/dx_i from L.backward()
// Every input with requires_grad is checked element by element; they agree when
// |analytic - numeric| <= atol + rtol * |numeric|. Meant for the double build
// (libheed_f64.a, tests/gradcheck_*.cpp), where eps = 1e-6 leaves ~1e-9 error. In the float
// build a step of 1e-6 is below float's resolution near 1 (1.2e-7 apart), so the check
// fails; a failure there says to use the double build (-DHEED_DOUBLE, libheed_f64.a).
// eps must be finite and > 0, atol and rtol finite and >= 0 (gradcheck() throws a
// heed::Error naming the value).
//
//   auto r = heed::gradcheck([](const std::vector<Tensor>& x) { return tanh(x[0]); }, {x});
//   CHECK_MESSAGE(r.ok, r.message);
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "../../core/arg.h"
#include "../../core/tensor.h"

namespace heed {

class GradcheckOptions {
 public:
  HEED_ARG(double, eps) = 1e-6;   // finite, > 0
  HEED_ARG(double, atol) = 1e-5;  // finite, >= 0
  HEED_ARG(double, rtol) = 1e-3;  // finite, >= 0
};

struct GradcheckResult {
  bool ok = true;
  double max_abs_error = 0;  // over all checked elements
  std::string message;       // the first disagreement, naming input and element
};

using TensorFn = std::function<Tensor(const std::vector<Tensor>&)>;

GradcheckResult gradcheck(const TensorFn& f, const std::vector<Tensor>& inputs,
                          const GradcheckOptions& options = GradcheckOptions());

// gradgradcheck (PyTorch's): the second derivative, against finite differences of the first.
//   L(x) = sum(f(x) * w)             w: fixed random weights, here a leaf that requires grad
//   G(x, w) = sum_i sum(dL/dx_i * v_i)   dL/dx_i by autograd::grad with create_graph = true,
//                                        v_i fixed random weights
//   numeric  dG/dx_j and dG/dw by central differences of G (first derivatives computed anew)
//   analytic dG/dx_j and dG/dw by autograd::grad through the graph of dL/dx
// Checking dG/dw checks that each backward is differentiable in its incoming gradient dy
// too (a Hessian-vector product differentiates through dy). Same options and tolerances as
// gradcheck; the double build only.
//
//   auto r = heed::gradgradcheck([](const std::vector<Tensor>& x) { return tanh(x[0]); }, {x});
GradcheckResult gradgradcheck(const TensorFn& f, const std::vector<Tensor>& inputs,
                              const GradcheckOptions& options = GradcheckOptions());

}  // namespace heed

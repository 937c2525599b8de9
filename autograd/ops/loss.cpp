// loss.cpp - the losses of loss.h. Each loss is one recorded op with a hand-written
// backward:
//   cross_entropy_loss, nll_loss   class-index losses over P = N * S positions (ClassProblem)
//   mse_loss, binary_cross_entropy(_with_logits), soft_margin_loss   elementwise losses (pointwise_loss)
// Sums run in double (as PyTorch's CPU kernels accumulate float in double), in a fixed
// order, so a loss does not depend on the thread count.
#include "loss.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "../../core/elementwise.h"
#include "../../core/error.h"
#include "../../core/fastmath.h"
#include "../../core/parallel.h"
#include "../engine/composed_backward.h"
#include "../engine/node.h"
#include "arith.h"
#include "indexing.h"
#include "reduce.h"
#include "shape.h"
#include "softmax.h"
#include "unary.h"

namespace heed {

namespace {


// ---------------------------------------------------------------- reductions, both ways

// Mean divides by `denom`: the element count, or the summed class weights of the counted
// positions. `counted` says whether any position counts at all. With none (every target
// ignored, or no elements) the mean is 0 with zero gradient, where PyTorch gives NaN. Counted
// positions whose weights sum to 0 (negative or zero class weights) give total / 0, NaN or
// Inf, exactly as PyTorch: never a silent 0.
//
// Forward: the per-position losses as a tensor of `shape` (None), their sum (Sum), or their
// sum / denom (Mean).
Tensor reduce_losses(const std::vector<double>& loss, Reduction r, const Shape& shape, double denom,
                     bool counted) {
  if (r == Reduction::None) {
    Tensor out = empty(shape);
    for (size_t i = 0; i < loss.size(); ++i) out.data()[i] = real(loss[i]);
    return out;
  }
  double total = 0;
  for (double l : loss) total += l;
  if (r == Reduction::Mean) total = counted ? total / denom : 0;
  return scalar_tensor(real(total));
}

// Backward: the factor s_i by which position i's own derivative reaches the output:
// dy_i (None), dy (Sum), dy / denom (Mean; 0 when nothing is counted, matching the forward).
class Upstream {
 public:
  Upstream(const Tensor& dy, Reduction r, double denom, bool counted)
      : dy_(dy.data()), each_(r == Reduction::None) {
    if (r == Reduction::Sum) k_ = dy.item();
    if (r == Reduction::Mean) k_ = counted ? dy.item() / denom : 0;
  }
  double operator[](int64_t i) const { return each_ ? double(dy_[i]) : k_; }

 private:
  const real* dy_;
  bool each_;
  double k_ = 0;
};

// ---------------------------------------------------------------- class-index losses

// What cross_entropy and nll_loss read from their arguments, checked. The input is seen as
// (N, C, S), S = d1 * d2 * ... (1 for (N, C)): P = N * S positions, each with C class scores
// S apart, x[n, c, s] at (n * C + c) * S + s. A 1-D input (C) with a 0-D target is N = 1.
// Saved by the backward closures: it is exactly what they read besides x.
struct ClassProblem {
  int64_t N = 1, C = 0, S = 1;
  IndexTensor target;     // (N, d1...): one class id (or ignore_index) per position
  int64_t ignore = -100;
  std::vector<double> w;  // (C) class weights; 1 when none was given
  double wsum = 0;        // sum_c w_c

  int64_t positions() const { return N * S; }
  int64_t first(int64_t p) const { return (p / S) * C * S + p % S; }  // offset of x[n, 0, s]
};

ClassProblem class_problem(const char* op, const Tensor& input, const IndexTensor& target,
                           const Tensor& weight, int64_t ignore_index) {
  HEED_CHECK(input.defined(), op, "input is undefined");
  const Shape& xs = input.shape();
  HEED_CHECK(xs.size() >= 1, op, "input must be (C), (N, C) or (N, C, d1...), got ", xs);
  ClassProblem pb;
  pb.ignore = ignore_index;
  Shape expected = xs;  // the input's shape without the class dim
  if (xs.size() == 1) {
    pb.C = xs[0];
    expected = Shape{};
  } else {
    pb.N = xs[0];
    pb.C = xs[1];
    for (int d = 2; d < xs.size(); ++d) pb.S *= xs[d];
    expected.erase(1);
  }
  if (target.shape() != expected) {
    std::string hint;
    if (xs.size() == 3 && target.dim() == 2 && target.size(0) == xs[0] && target.size(1) == xs[1])
      hint = "; for (B, T, C) logits and (B, T) targets pass input.reshape({-1, C}) and "
             "target.reshape({B * T}) (the class dim is 1, as in PyTorch)";
    fail(op, "input ", xs, " and target ", target.shape(), " do not match (expected target ",
         expected, ": the input's shape without its class dim 1)", hint);
  }
  HEED_CHECK(pb.C > 0, op, "input ", xs, " has no classes");
  for (int64_t i = 0; i < target.numel(); ++i) {
    const int64_t y = target[i];
    HEED_CHECK(y == ignore_index || (y >= 0 && y < pb.C), op, "target ", y, " at position ", i,
               " is out of range for C = ", pb.C, " classes (ignore_index = ", ignore_index, ")");
  }
  pb.target = target;
  pb.w.assign(pb.C, 1.0);
  if (weight.defined()) {
    HEED_CHECK(weight.shape() == Shape{pb.C}, op, "weight ", weight.shape(),
               " must have one entry per class, (", pb.C, ")");
    for (int64_t c = 0; c < pb.C; ++c) pb.w[c] = weight.data()[c];
  }
  for (double v : pb.w) pb.wsum += v;
  return pb;
}

// A grain in positions: about kGrainTranscendental scores (an exp each) per parallel chunk.
int64_t position_grain(const ClassProblem& pb) { return kGrainTranscendental / pb.C + 1; }

// Forward kernel of cross_entropy. Per position p, with y = target[p] and x_c its C logits:
//   1. m      = max_c x_c
//   2. lse[p] = m + log sum_c exp(x_c - m)
//   3. loss[p] = (1 - eps) * w_y * (lse - x_y) + eps/C * sum_c w_c * (lse - x_c)
//   4. wpos[p] = w_y, the position's share of Mean's denominator
// An ignored position gets loss 0 and wpos 0, and its lse is not computed.
// Steps 1-2 over contiguous logits (S = 1, the (N, C) case) are vectorised passes
// (core/elementwise.h's row_max, row_sum_exp); over strided ones, plain loops in double.
void cross_entropy_forward(std::vector<double>& loss, std::vector<double>& wpos,
                           std::vector<double>& lse, const real* x, const ClassProblem& pb,
                           double eps) {
  const int64_t C = pb.C, S = pb.S;
  const int64_t* t = pb.target.data();
  parallel_for(pb.positions(), position_grain(pb), [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      const int64_t y = t[p];
      if (y == pb.ignore) {
        loss[p] = wpos[p] = 0;
        continue;
      }
      const real* xp = x + pb.first(p);
      if (S == 1) {
        const real m = row_max(xp, C);
        lse[p] = m + std::log(row_sum_exp(xp, C, m));
      } else {
        double m = -std::numeric_limits<double>::infinity();
        for (int64_t c = 0; c < C; ++c) m = std::max(m, double(xp[c * S]));
        double se = 0;
        for (int64_t c = 0; c < C; ++c) se += std::exp(xp[c * S] - m);
        lse[p] = m + std::log(se);
      }
      double smooth = 0;
      if (eps != 0)
        for (int64_t c = 0; c < C; ++c) smooth += pb.w[c] * (lse[p] - xp[c * S]);
      loss[p] = (1 - eps) * pb.w[y] * (lse[p] - xp[y * S]) + eps / C * smooth;
      wpos[p] = pb.w[y];
    }
  });
}

// Backward kernel of cross_entropy: writes dx (every element; ignored positions get 0).
// Undoing steps 3 and 2 of the forward, with softmax_c = exp(x_c - lse) = d lse / d x_c:
//   3. d loss / d x_c = (1 - eps) * w_y * (softmax_c - [c == y]) + eps/C * sum_k w_k * (softmax_c - [c == k])
//                     = softmax_c * a - (1 - eps) * w_y * [c == y] - eps/C * w_c,
//      a = (1 - eps) * w_y + eps/C * sum_k w_k
//   dx_c = s_p * that, s_p the upstream factor of position p.
// Contiguous logits (S = 1) take a vectorised loop in `real`: x_c - lse as (x_c - hi) - lo,
// with lse = hi + lo split into two reals, so softmax_c is as exact as in double.
void cross_entropy_backward(real* dx, const Upstream& up, const real* x,
                            const std::vector<double>& lse, const ClassProblem& pb, double eps) {
  const int64_t C = pb.C, S = pb.S;
  const int64_t* t = pb.target.data();
  parallel_for(pb.positions(), position_grain(pb), [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      real* dxp = dx + pb.first(p);
      const int64_t y = t[p];
      if (y == pb.ignore) {
        for (int64_t c = 0; c < C; ++c) dxp[c * S] = 0;
        continue;
      }
      const real* xp = x + pb.first(p);
      const double s = up[p];
      const double a = (1 - eps) * pb.w[y] + eps / C * pb.wsum;
      if (S == 1) {
        const real hi = real(lse[p]), lo = real(lse[p] - hi), sa = real(s * a);
        for (int64_t c = 0; c < C; ++c) dxp[c] = fastmath::exp((xp[c] - hi) - lo) * sa;
        if (eps != 0)
          for (int64_t c = 0; c < C; ++c) dxp[c] -= real(s * eps / C * pb.w[c]);
      } else {
        for (int64_t c = 0; c < C; ++c)
          dxp[c * S] = real(s * (std::exp(xp[c * S] - lse[p]) * a - eps / C * pb.w[c]));
      }
      dxp[y * S] -= real(s * (1 - eps) * pb.w[y]);
    }
  });
}

double sum_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}

// Whether any position of pb counts (its target is not ignore_index).
bool any_counted(const ClassProblem& pb) {
  for (int64_t p = 0; p < pb.positions(); ++p)
    if (pb.target[p] != pb.ignore) return true;
  return false;
}

// ---------------------------------------------------------------- elementwise losses

// The reduction of per-position losses as recorded ops: Mean divides by denom (a constant),
// and is 0 when no position counts (as reduce_losses).
Tensor reduce_composed(const Tensor& loss, Reduction r, const Tensor& denom, bool counted) {
  if (r == Reduction::None) return loss;
  if (r == Reduction::Sum || !counted) return r == Reduction::Sum ? sum(loss) : sum(loss) * real(0);
  return sum(loss) / denom;
}

// One node for an elementwise loss l_i = f(i, x_i, y_i); d(i, x_i, y_i) returns the pair
// {dl/dx_i, dl/dy_i}. The backward is dx_i = s_i * dl/dx_i and dy_i = s_i * dl/dy_i.
// twin(x, y) is the per-element loss from recorded ops: a create_graph pass differentiates it
// (composed_backward.h).
template <class F, class D, class Twin>
Tensor pointwise_loss(const char* op, const Tensor& input, const Tensor& target, Reduction r,
                      const F& f, const D& d, const Twin& twin) {
  HEED_CHECK(input.defined() && target.defined(), op, "input or target is undefined");
  HEED_CHECK(input.shape() == target.shape(), op, "input ", input.shape(), " and target ",
             target.shape(), " do not match");
  const int64_t n = input.numel();
  std::vector<double> loss(n);
  const real *xs = input.data(), *ys = target.data();
  parallel_for(n, kGrainElementwise, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) loss[i] = f(i, double(xs[i]), double(ys[i]));
  });
  Tensor out = reduce_losses(loss, r, input.shape(), double(n), n > 0);
  return record(op, out, {input, target}, kDoubleBackward, [input = SavedTensor(input),
                                           target = SavedTensor(target), r, d, n, twin](const Tensor& dy,
                                                                                  Grads& g) {
    if (g.create_graph())
      return detail::composed_gradients([&](const std::vector<Tensor>& in) {
        return reduce_composed(twin(in[0], in[1]), r, scalar_tensor(real(n)), n > 0);
      }, {input, target}, dy, g);
    const Upstream up(dy, r, double(n), n > 0);
    const real *px = input.data(), *py = target.data();
    Tensor dx = g.needs(0) ? empty(input.shape()) : Tensor();
    Tensor dt = g.needs(1) ? empty(target.shape()) : Tensor();
    real* pdx = g.needs(0) ? dx.data() : nullptr;
    real* pdt = g.needs(1) ? dt.data() : nullptr;
    parallel_for(n, kGrainElementwise, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const std::pair<double, double> dl = d(i, double(px[i]), double(py[i]));
        if (pdx) pdx[i] = real(up[i] * dl.first);
        if (pdt) pdt[i] = real(up[i] * dl.second);
      }
    });
    if (g.needs(0)) g[0] = dx;
    if (g.needs(1)) g[1] = dt;
  });
}

// A constant (pos_)weight broadcast to the input's shape, or undefined if none was given.
Tensor broadcast_weight(const char* op, const char* what, const Tensor& w, const Shape& to) {
  if (!w.defined()) return Tensor();
  HEED_CHECK(broadcast_shapes(op, w.shape(), to) == to, op, what, " ", w.shape(),
             " does not broadcast to input ", to);
  return expand(w.detach(), to);
}

}  // namespace

// The class weights as a tensor for the composed twins (undefined when all are 1).
Tensor weight_of(const ClassProblem& pb) {
  bool ones_only = true;
  for (double w : pb.w) ones_only = ones_only && w == 1;
  if (ones_only) return Tensor();
  return from_vector(std::vector<real>(pb.w.begin(), pb.w.end()), {pb.C});
}

// nll_loss composed: loss[p] = -w_y x[p, y] by gather (0 where ignored), then the reduction.
Tensor nll_composed(const Tensor& input, const ClassProblem& pb, Reduction r, bool counted) {
  const int64_t P = pb.positions();
  std::vector<real> wy(P);
  std::vector<int64_t> safe(P);  // ignored positions read class 0, weighted 0
  for (int64_t p = 0; p < P; ++p) {
    const bool kept = pb.target[p] != pb.ignore;
    safe[p] = kept ? pb.target[p] : 0;
    wy[p] = kept ? real(pb.w[safe[p]]) : 0;
  }
  const Tensor x = input.reshape({pb.N, pb.C, pb.S});                                    // (N, C, S)
  const Tensor picked = gather(x, 1, IndexTensor(safe, {pb.N, 1, pb.S})).squeeze(1);     // (N, S)
  const Tensor wy_t = from_vector(wy, {pb.N, pb.S});
  const Tensor loss = (-(picked * wy_t)).reshape(pb.target.shape());
  return reduce_composed(loss, r, sum(wy_t), counted);
}

// ---------------------------------------------------------------- the ops

// loss[p] as in cross_entropy_forward, dx as in cross_entropy_backward. Saved for backward:
// the input, lse and the checked targets and weights (pb); softmax is recomputed from them.
Tensor cross_entropy_loss(const Tensor& input, const IndexTensor& target, const Tensor& weight,
                          Reduction r, int64_t ignore_index, double label_smoothing) {
  const char* op = "cross_entropy";
  const double eps = label_smoothing;
  HEED_CHECK(eps >= 0 && eps <= 1, op, "label_smoothing must be in [0, 1], got ", eps);
  ClassProblem pb = class_problem(op, input, target, weight, ignore_index);
  const int64_t P = pb.positions();
  std::vector<double> loss(P), wpos(P), lse(P);
  cross_entropy_forward(loss, wpos, lse, input.data(), pb, eps);
  const double denom = sum_of(wpos);
  const bool counted = any_counted(pb);
  Tensor out = reduce_losses(loss, r, target.shape(), denom, counted);  // () or (N, d1...)
  return record(op, out, {input}, kDoubleBackward, [input = SavedTensor(input), pb = std::move(pb),
                                   lse = std::move(lse), eps, r, denom, counted](const Tensor& dy, Grads& g) {
    if (g.create_graph())  // the composed twin (composed_backward.h)
      return detail::composed_gradients([&](const std::vector<Tensor>& in) {
        return cross_entropy_loss_reference(in[0], pb.target, weight_of(pb), r, pb.ignore, eps);
      }, {input}, dy, g);
    Tensor dx = empty(input.shape());  // (N, C, d1...)
    cross_entropy_backward(dx.data(), Upstream(dy, r, denom, counted), input.data(), lse, pb, eps);
    g[0] = dx;
  });
}

// loss[p] = -w_y * logp[p, y]        dlogp[p, c] = -s_p * w_y * [c == y]
Tensor nll_loss(const Tensor& input, const IndexTensor& target, const Tensor& weight, Reduction r,
                int64_t ignore_index) {
  const char* op = "nll_loss";
  ClassProblem pb = class_problem(op, input, target, weight, ignore_index);
  const int64_t P = pb.positions();
  std::vector<double> loss(P, 0.0), wpos(P, 0.0);
  const real* x = input.data();
  for (int64_t p = 0; p < P; ++p) {
    const int64_t y = pb.target[p];
    if (y == pb.ignore) continue;
    wpos[p] = pb.w[y];
    loss[p] = -pb.w[y] * x[pb.first(p) + y * pb.S];
  }
  const double denom = sum_of(wpos);
  const bool counted = any_counted(pb);
  Tensor out = reduce_losses(loss, r, target.shape(), denom, counted);
  return record(op, out, {input}, kDoubleBackward, [shape = input.shape(), pb = std::move(pb), r, denom, counted](
                                      const Tensor& dy, Grads& g) {
    // Under create_graph: the loss composed from gather (composed_backward.h). dx depends on
    // dy alone (not on the input), so the twin runs on a stand-in for the input.
    if (g.create_graph())
      return detail::composed_gradients([&](const std::vector<Tensor>& in) {
        return nll_composed(in[0], pb, r, counted);
      }, {zeros(shape).requires_grad_()}, dy, g);
    const Upstream up(dy, r, denom, counted);
    Tensor dx = zeros(shape);
    for (int64_t p = 0; p < pb.positions(); ++p) {
      const int64_t y = pb.target[p];
      if (y != pb.ignore) dx.data()[pb.first(p) + y * pb.S] = real(-up[p] * pb.w[y]);
    }
    g[0] = dx;
  });
}

// loss_i = (x_i - y_i)^2             dx_i = 2 (x_i - y_i)        dy_i = -dx_i
Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction r) {
  return pointwise_loss(
      "mse_loss", input, target, r,
      [](int64_t, double x, double y) { return (x - y) * (x - y); },
      [](int64_t, double x, double y) { return std::make_pair(2 * (x - y), -2 * (x - y)); },
      [](const Tensor& x, const Tensor& y) { return (x - y) * (x - y); });
}

// loss_i = w_i * [(1 - y_i) x_i + L_i * softplus(-x_i)],  L_i = 1 + (p_i - 1) y_i
//   dx_i = w_i * [(1 - y_i) - L_i * sigmoid(-x_i)]         (d softplus(-x)/dx = -sigmoid(-x))
//   dy_i = w_i * [-x_i + (p_i - 1) * softplus(-x_i)]
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const Tensor& weight, const Tensor& pos_weight, Reduction r) {
  const char* op = "binary_cross_entropy_with_logits";
  HEED_CHECK(input.defined(), op, "input is undefined");
  const Tensor w = broadcast_weight(op, "weight", weight, input.shape());
  const Tensor pw = broadcast_weight(op, "pos_weight", pos_weight, input.shape());
  // Per-element weights (1 where none was given); w and pw are captured by value below.
  auto weight_at = [w](int64_t i) { return w.defined() ? double(w.data()[i]) : 1.0; };
  auto pos_at = [pw](int64_t i) { return pw.defined() ? double(pw.data()[i]) : 1.0; };
  return pointwise_loss(
      op, input, target, r,
      [weight_at, pos_at](int64_t i, double x, double y) {
        const double L = 1 + (pos_at(i) - 1) * y;
        return weight_at(i) * ((1 - y) * x + L * fastmath::softplus(-x));
      },
      [weight_at, pos_at](int64_t i, double x, double y) {
        const double p = pos_at(i), L = 1 + (p - 1) * y, wi = weight_at(i);
        return std::make_pair(wi * ((1 - y) - L * fastmath::sigmoid(-x)),
                              wi * (-x + (p - 1) * fastmath::softplus(-x)));
      },
      [w, pw](const Tensor& x, const Tensor& y) {  // softplus(-x) = x itself past -x > 20: within e^-20
        const Tensor sp = softplus(-x);
        const Tensor L = pw.defined() ? (pw - 1) * y + 1 : ones_like(y);
        const Tensor l = (1 - y) * x + L * sp;
        return w.defined() ? w * l : l;
      });
}

// loss_i = softplus(-y_i x_i)    dx_i = -y_i sigmoid(-y_i x_i)    dy_i = -x_i sigmoid(-y_i x_i)
Tensor soft_margin_loss(const Tensor& input, const Tensor& target, Reduction r) {
  return pointwise_loss(
      "soft_margin_loss", input, target, r,
      [](int64_t, double x, double y) { return fastmath::softplus(-y * x); },
      [](int64_t, double x, double y) {
        const double s = fastmath::sigmoid(-y * x);
        return std::make_pair(-y * s, -x * s);
      },
      [](const Tensor& x, const Tensor& y) { return softplus(-(y * x)); });
}

// loss_i = -w_i * [y_i * max(log p_i, -100) + (1 - y_i) * max(log(1 - p_i), -100)]
//   dp_i = w_i * (p_i - y_i) / max((1 - p_i) p_i, 1e-12)       (PyTorch's binary_cross_entropy_backward)
//   dy_i = w_i * [max(log(1 - p_i), -100) - max(log p_i, -100)]
// The clamp at -100 (PyTorch's) keeps the loss finite at p = 0 or 1, and the eps keeps dp
// finite there. dy is the forward's own derivative; PyTorch's, -logit(p), is the same except
// where a log was clamped (p below e^-100 of 0 or 1). p outside [0, 1] (or NaN) is an error.
// The twin (create_graph) composes the clamped logs, so its dp has no eps: second derivatives
// hold inside (0, 1).
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight,
                            Reduction r) {
  const char* op = "binary_cross_entropy";
  HEED_CHECK(input.defined(), op, "input is undefined");
  const real* ps = input.data();
  for (int64_t i = 0; i < input.numel(); ++i)
    HEED_CHECK(ps[i] >= 0 && ps[i] <= 1, op, "all elements of input should be between 0 and 1, got ",
               ps[i], " at element ", i);
  const Tensor w = broadcast_weight(op, "weight", weight, input.shape());
  auto weight_at = [w](int64_t i) { return w.defined() ? double(w.data()[i]) : 1.0; };
  auto clamped_log = [](double v) { return std::max(std::log(v), -100.0); };
  return pointwise_loss(
      op, input, target, r,
      [weight_at, clamped_log](int64_t i, double p, double y) {
        return -weight_at(i) * (y * clamped_log(p) + (1 - y) * clamped_log(1 - p));
      },
      [weight_at, clamped_log](int64_t i, double p, double y) {
        const double wi = weight_at(i);
        return std::make_pair(wi * (p - y) / std::max((1 - p) * p, 1e-12),
                              wi * (clamped_log(1 - p) - clamped_log(p)));
      },
      [w](const Tensor& p, const Tensor& y) {
        const Tensor l = -(y * clamp_min(log(p), -100) + (1 - y) * clamp_min(log(1 - p), -100));
        return w.defined() ? w * l : l;
      });
}


// ---------------------------------------------------------------- the composed twin

// cross_entropy_loss from general ops: log_softmax over the class dim, gather of the target
// class, a mask for ignored positions, then the reduction. Its gradient is those ops'.
Tensor cross_entropy_loss_reference(const Tensor& input, const IndexTensor& target,
                                    const Tensor& weight, Reduction r, int64_t ignore_index,
                                    double label_smoothing) {
  const char* op = "cross_entropy_reference";
  const double eps = label_smoothing;
  HEED_CHECK(eps >= 0 && eps <= 1, op, "label_smoothing must be in [0, 1], got ", eps);
  const ClassProblem pb = class_problem(op, input, target, weight, ignore_index);
  const int64_t P = pb.positions(), C = pb.C;
  // Seen as (N, C, S): keep 1 where the target counts, safe the target with ignored ones
  // replaced by class 0, wy the target's class weight (0 where ignored).
  std::vector<real> keep(P), wy(P);
  std::vector<int64_t> safe(P);
  for (int64_t p = 0; p < P; ++p) {
    const bool kept = pb.target[p] != pb.ignore;
    keep[p] = kept;
    safe[p] = kept ? pb.target[p] : 0;
    wy[p] = kept ? real(pb.w[safe[p]]) : 0;
  }
  std::vector<real> wc(pb.w.begin(), pb.w.end());
  const Tensor x = input.reshape({pb.N, C, pb.S});                                // (N, C, S)
  const Tensor logp = log_softmax(x, 1);                                          // (N, C, S)
  const Tensor picked = gather(logp, 1, IndexTensor(safe, {pb.N, 1, pb.S})).squeeze(1);  // (N, S)
  const Tensor wy_t = from_vector(wy, {pb.N, pb.S}), keep_t = from_vector(keep, {pb.N, pb.S});
  const Tensor nll = -(picked * wy_t);                                            // (N, S)
  const Tensor smooth = -(sum(logp * from_vector(wc, {1, C, 1}), 1) * keep_t);    // (N, S)
  const Tensor loss = (nll * real(1 - eps) + smooth * real(eps / C)).reshape(target.shape());
  if (r == Reduction::None) return loss;
  if (r == Reduction::Sum) return sum(loss);
  const Tensor denom = sum(wy_t);  // Mean over no counted position: 0, as the fused op
  return sum(keep_t).item() == 0 ? sum(loss) * real(0) : sum(loss) / denom;
}

}  // namespace heed

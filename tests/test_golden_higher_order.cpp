// test_golden_higher_order.cpp - higher-order gradients against torch.autograd.grad with
// create_graph=True (tests/golden/higher_order.bin, made by tests/golden/gen_higher_order.py):
// Hessian-vector products through an MLP and through a Transformer encoder layer on the
// composed attention path, a WGAN-GP gradient penalty, and one MAML step.
#include "golden/golden.h"
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/attention/scaled_dot_product.h>
#include <heed/autograd/ops/layer_norm.h>
#include <heed/autograd/ops/loss.h>
#include <heed/autograd/ops/shape.h>
#include <heed/autograd/engine/engine.h>
#include <heed/autograd/ops/linear.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/unary.h>
#include "helpers.h"

using namespace heed;

namespace {

const golden::File& higher_order() {
  static const golden::File f("tests/golden/higher_order.bin");
  return f;
}

void check(const Tensor& actual, const std::string& c, const std::string& array,
           const golden::Tolerance& tol = golden::Tolerance().rtol(1e-4).atol(1e-5)) {
  const golden::Check r = golden::compare(actual, higher_order().array(c, array), c + " " + array, tol);
  CHECK_MESSAGE(r.ok, r.message);
}

Tensor leaf(const std::string& c, const std::string& name) {
  return higher_order().tensor(c, name).requires_grad_();
}

}  // namespace

TEST_CASE("golden: Hessian-vector product through a tanh MLP (autograd::grad, create_graph)") {
  const std::string c = "hvp_mlp";
  const std::vector<std::string> names = {"W1", "b1", "W2", "b2"};
  std::vector<Tensor> params;
  for (const auto& n : names) params.push_back(leaf(c, n));
  const Tensor x = higher_order().tensor(c, "x");
  const Tensor out = linear(tanh(linear(x, params[0], params[1])), params[2], params[3]);
  const Tensor loss = mean(out * out + out);
  check(loss, c, "loss");
  const std::vector<Tensor> grads = autograd::grad({loss}, params, {}, std::nullopt, true);
  Tensor gv = scalar_tensor(0);
  for (size_t i = 0; i < names.size(); ++i) {
    check(grads[i], c, "grad_" + names[i]);
    gv = gv + sum(grads[i] * higher_order().tensor(c, "v_" + names[i]));
  }
  const std::vector<Tensor> hvp = autograd::grad({gv}, params);
  for (size_t i = 0; i < names.size(); ++i) check(hvp[i], c, "hvp_" + names[i]);
  for (const Tensor& p : params) CHECK(!p.grad().defined());
}

TEST_CASE("golden: WGAN-GP gradient penalty on a small critic") {
  const std::string c = "gradient_penalty";
  const Tensor W1 = leaf(c, "W1"), b1 = leaf(c, "b1"), W2 = leaf(c, "W2"), b2 = leaf(c, "b2");
  const Tensor real_x = higher_order().tensor(c, "real"), fake = leaf(c, "fake");
  const Tensor alpha = higher_order().tensor(c, "alpha");
  auto critic = [&](const Tensor& t) { return linear(relu(linear(t, W1, b1)), W2, b2); };  // (8, 1)

  const Tensor interp = alpha * real_x + (1 - alpha) * fake;  // not a leaf
  const Tensor d = critic(interp);
  const Tensor gi = autograd::grad({d}, {interp}, {ones_like(d)}, std::nullopt, true)[0];
  check(gi, c, "grad_interp");
  const Tensor norm = sqrt(sum(gi * gi, 1));
  const Tensor gp = mean((norm - 1) * (norm - 1));
  check(gp, c, "gp");
  const Tensor loss = mean(critic(fake)) - mean(critic(real_x)) + gp * 10;
  check(loss, c, "loss");
  loss.backward();  // into .grad(), as a training step would
  check(W1.grad(), c, "grad_W1");
  check(b1.grad(), c, "grad_b1");
  check(W2.grad(), c, "grad_W2");
  check(b2.grad(), c, "grad_b2");
  check(fake.grad(), c, "grad_fake");
}

TEST_CASE("golden: Hessian-vector product through a Transformer encoder layer, composed attention") {
  const std::string c = "hvp_encoder";
  const std::vector<std::string> names = {"W_in", "b_in", "W_o", "b_o", "g1", "be1",
                                          "W1",   "b1",   "W2",  "b2",  "g2", "be2"};
  std::vector<Tensor> p;
  for (const auto& n : names) p.push_back(leaf(c, n));
  const Tensor x = higher_order().tensor(c, "x"), cw = higher_order().tensor(c, "c");
  const int64_t B = 2, T = 4, E = 8, H = 2, D = E / H;
  // one post-norm encoder layer, as the generator writes it
  auto heads = [&](const Tensor& t) { return t.reshape({B, T, H, D}).transpose(1, 2); };  // (B, H, T, D)
  const Tensor qkv = linear(x, p[0], p[1]);                                              // (B, T, 3E)
  const Attended att = scaled_dot_product_attention(heads(narrow(qkv, 2, 0, E)), heads(narrow(qkv, 2, E, E)),
                                                    heads(narrow(qkv, 2, 2 * E, E)));
  const Tensor a = att.context.transpose(1, 2).reshape({B, T, E});
  const Tensor x1 = layer_norm(x + linear(a, p[2], p[3]), {E}, p[4], p[5]);
  const Tensor y = layer_norm(x1 + linear(relu(linear(x1, p[6], p[7])), p[8], p[9]), {E}, p[10], p[11]);
  const Tensor loss = mean(y * y) + sum(y * cw);
  check(loss, c, "loss");
  const std::vector<Tensor> grads = autograd::grad({loss}, p, {}, std::nullopt, true);
  Tensor gv = scalar_tensor(0);
  for (size_t i = 0; i < names.size(); ++i) {
    check(grads[i], c, "grad_" + names[i]);
    gv = gv + sum(grads[i] * higher_order().tensor(c, "v_" + names[i]));
  }
  const std::vector<Tensor> hvp = autograd::grad({gv}, p);
  for (size_t i = 0; i < names.size(); ++i)
    check(hvp[i], c, "hvp_" + names[i], golden::Tolerance().rtol(1e-3).atol(1e-4));
}

TEST_CASE("golden: one MAML step, the query loss differentiated through an inner SGD step") {
  const std::string c = "maml";
  std::vector<Tensor> params = {leaf(c, "W1"), leaf(c, "b1"), leaf(c, "W2"), leaf(c, "b2")};
  auto mlp = [](const Tensor& t, const std::vector<Tensor>& w) {
    return linear(tanh(linear(t, w[0], w[1])), w[2], w[3]);
  };
  const golden::File& f = higher_order();
  const Tensor inner = mse_loss(mlp(f.tensor(c, "xs"), params), f.tensor(c, "ys"), Reduction::Mean);
  check(inner, c, "inner");
  const std::vector<Tensor> g = autograd::grad({inner}, params, {}, std::nullopt, true);
  std::vector<Tensor> fast;
  for (size_t i = 0; i < params.size(); ++i) fast.push_back(params[i] - g[i] * real(0.1));
  const Tensor outer = mse_loss(mlp(f.tensor(c, "xq"), fast), f.tensor(c, "yq"), Reduction::Mean);
  check(outer, c, "outer");
  outer.backward();  // the meta-gradient, into the parameters' .grad()
  const char* names[] = {"W1", "b1", "W2", "b2"};
  for (size_t i = 0; i < params.size(); ++i) check(params[i].grad(), c, std::string("meta_") + names[i]);
}

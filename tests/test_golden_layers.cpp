// test_golden_layers.cpp - heed's layers against PyTorch's modules (tests/golden/layers.bin).
//
// Each case (made by tests/golden/gen_layers.py, which shows the torch module) stores the
// module's parameters, an input, torch's float64 output, an upstream gradient dy and the
// gradients of the input and of every parameter. The test copies the parameters into the
// heed module, runs forward and backward(dy) in float32, and compares them all (rule:
// tests/golden/golden.h, rtol 1e-5, atol 1e-6 x scale).
#include <utility>

#include <heed/autograd/ops/embedding.h>
#include <heed/autograd/engine/grad_mode.h>
#include <heed/autograd/ops/layer_norm.h>
#include <heed/autograd/ops/linear.h>
#include <heed/layers/activation.h>
#include <heed/layers/functional.h>
#include <heed/layers/embedding.h>
#include <heed/layers/layer_norm.h>
#include <heed/layers/linear.h>
#include <heed/layers/module.h>
#include <heed/layers/sequential.h>
#include "golden/golden.h"
#include "helpers.h"

using namespace heed;

namespace {

const golden::File& layers() {
  static const golden::File f("tests/golden/layers.bin");
  return f;
}

using Names = std::vector<std::pair<std::string, std::string>>;  // golden array -> parameter

Tensor parameter(const nn::Module& m, const std::string& name) {
  for (auto& [n, p] : m.named_parameters())
    if (n == name) return p;
  fail("test_golden_layers", "the module has no parameter '", name, "'");
}

// Copy the case's arrays into the module's parameters; every parameter must be named.
void load(const std::string& c, const nn::Module& m, const Names& names) {
  REQUIRE(names.size() == m.named_parameters().size());
  NoGradGuard ng;
  for (auto& [g, p] : names) {
    Tensor t = parameter(m, p);
    REQUIRE(t.shape() == layers().array(c, g).shape);
    t.copy_(layers().tensor(c, g));
  }
}

// out.backward(dy), then out, x's gradient (if x is given) and every parameter's
// gradient against torch's. Fails if the case holds an array this does not look at.
void compare_all(const std::string& c, const nn::Module& m, const Names& names, const Tensor& out,
                 const Tensor& x, const std::string& x_name = "x") {
  const golden::File& f = layers();
  std::vector<std::string> seen = {"out", "dy", x_name};
  const golden::Check co = golden::compare(out, f.array(c, "out"), c + " out");
  CHECK_MESSAGE(co.ok, co.message);
  if (!co.ok && out.shape() != f.array(c, "out").shape) return;
  out.backward(f.tensor(c, "dy"));
  if (x.defined()) {
    seen.push_back("grad_" + x_name);
    const golden::Check cx = golden::compare(x.grad(), f.array(c, "grad_" + x_name), c + " grad_" + x_name);
    CHECK_MESSAGE(cx.ok, cx.message);
  }
  for (auto& [g, p] : names) {
    seen.push_back(g);
    seen.push_back("grad_" + g);
    const golden::Check cp = golden::compare(parameter(m, p).grad(), f.array(c, "grad_" + g),
                                             c + " grad of " + p);
    CHECK_MESSAGE(cp.ok, cp.message);
  }
  for (const std::string& a : f.arrays(c))
    CHECK_MESSAGE(std::find(seen.begin(), seen.end(), a) != seen.end(), c, " array ", a, " unchecked");
}

Tensor input(const std::string& c) { return layers().tensor(c, "x").requires_grad_(); }

}  // namespace

TEST_CASE("golden layers: Linear(4, 5) on a (2,3,4) input, with and without bias") {
  nn::Linear fc(4, 5);
  load("linear_3d", *fc, {{"weight", "weight"}, {"bias", "bias"}});
  Tensor x = input("linear_3d");
  compare_all("linear_3d", *fc, {{"weight", "weight"}, {"bias", "bias"}}, fc->forward(x), x);

  nn::Linear nb(nn::LinearOptions(4, 5).bias(false));
  load("linear_3d_nobias", *nb, {{"weight", "weight"}});
  Tensor x2 = input("linear_3d_nobias");
  compare_all("linear_3d_nobias", *nb, {{"weight", "weight"}}, nb->forward(x2), x2);
}

TEST_CASE("golden layers: Embedding(10, 4, padding_idx=0) with repeated and padding ids") {
  nn::Embedding emb(nn::EmbeddingOptions(10, 4).padding_idx(0));
  load("embedding_pad0", *emb, {{"weight", "weight"}});
  const IndexTensor ids = layers().indices("embedding_pad0", "ids");
  compare_all("embedding_pad0", *emb, {{"weight", "weight"}}, emb->forward(ids), Tensor(), "ids");
  for (int j = 0; j < 4; ++j) CHECK(emb->weight.grad().at({0, j}) == 0);
}

TEST_CASE("golden layers: LayerNorm(8), LayerNorm((3,4), eps=1e-6), LayerNorm(6, no affine)") {
  const Names wb = {{"weight", "weight"}, {"bias", "bias"}};
  nn::LayerNorm ln8(nn::LayerNormOptions({8}));
  load("layer_norm_8", *ln8, wb);
  Tensor x = input("layer_norm_8");
  compare_all("layer_norm_8", *ln8, wb, ln8->forward(x), x);

  nn::LayerNorm ln34(nn::LayerNormOptions({3, 4}).eps(1e-6));
  load("layer_norm_3x4", *ln34, wb);
  Tensor x2 = input("layer_norm_3x4");
  compare_all("layer_norm_3x4", *ln34, wb, ln34->forward(x2), x2);

  nn::LayerNorm plain(nn::LayerNormOptions({6}).elementwise_affine(false));
  load("layer_norm_noaffine", *plain, {});
  Tensor x3 = input("layer_norm_noaffine");
  compare_all("layer_norm_noaffine", *plain, {}, plain->forward(x3), x3);
}

TEST_CASE("golden layers: Sequential(Linear(4,6), GELU(), Linear(6,3), Tanh()), names 0.* 2.*") {
  nn::Sequential mlp{nn::Linear(4, 6), nn::GELU(),
                     nn::Linear(6, 3), nn::Tanh()};
  const Names names = {{"w0", "0.weight"}, {"b0", "0.bias"}, {"w2", "2.weight"}, {"b2", "2.bias"}};
  load("mlp", *mlp, names);
  Tensor x = input("mlp");
  compare_all("mlp", *mlp, names, mlp->forward(x), x);
}

TEST_CASE("golden layers: PReLU(3) per channel, PReLU() with x = 0 and a negative slope") {
  const Names w = {{"weight", "weight"}};
  nn::PReLU per_channel(nn::PReLUOptions().num_parameters(3));
  load("prelu_channels", *per_channel, w);
  Tensor x = input("prelu_channels");
  compare_all("prelu_channels", *per_channel, w, per_channel(x), x);

  nn::PReLU one;
  load("prelu_one", *one, w);
  Tensor x2 = input("prelu_one");
  compare_all("prelu_one", *one, w, nn::functional::prelu(x2, one->weight), x2);
}

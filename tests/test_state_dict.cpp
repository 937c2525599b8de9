// test_state_dict.cpp - Module::state_dict and load_state_dict (layers/module.h), and a tied
// (shared) parameter seen once by named_parameters, the optimizer, clipping and checkpoints.
#include <heed/core/random.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/linalg.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/shape.h>
#include <heed/autograd/ops/unary.h>
#include <heed/layers/embedding.h>
#include <heed/layers/layer_norm.h>
#include <heed/layers/linear.h>
#include <heed/layers/module.h>
#include <heed/layers/sequential.h>
#include <heed/optim/adam.h>
#include <heed/optim/checkpoint_file.h>
#include <heed/optim/clip.h>
#include <heed/optim/sgd.h>
#include "helpers.h"
#include "tmp_files.h"

using namespace heed;
using doctest::Contains;
using heed::test::error_of;

namespace {

// A language model whose output layer reuses the embedding matrix (Press & Wolf 2017,
// "Using the Output Embedding to Improve Language Models"): registering the same tensor
// under a second name ties them, as nanoGPT's `wte.weight = lm_head.weight` does.
struct TiedHead : nn::Module {
  Tensor weight;
  explicit TiedHead(const Tensor& shared) { weight = register_parameter("weight", shared); }
};
struct TiedLM : nn::Module {
  nn::Embedding wte = register_module("wte", nn::Embedding(5, 3));
  nn::Linear mid = register_module("mid", nn::Linear(3, 3));
  std::shared_ptr<TiedHead> head = register_module("head", std::make_shared<TiedHead>(wte->weight));
  Tensor forward(const IndexTensor& ids) {  // (T) -> (T, 5)
    return matmul(tanh(mid->forward(wte->forward(ids))), head->weight.transpose(0, 1));
  }
};

std::vector<std::string> names(const NamedTensors& nt) {
  std::vector<std::string> out;
  for (const auto& [n, t] : nt) out.push_back(n);
  return out;
}

}  // namespace

TEST_CASE("state_dict lists parameters and buffers in PyTorch's order") {
  // Per module: own parameters, own buffers, then children (torch's _save_to_state_dict).
  // Registered child first, then a buffer, then a parameter: the order is still p, buf, child.
  struct M : nn::Module {
    M() {
      register_module("child", nn::Linear(1, 1));
      register_buffer("buf", zeros({2}));
      register_parameter("p", ones({1}));
    }
  } m;
  CHECK(names(m.state_dict()) == std::vector<std::string>{"p", "buf", "child.weight", "child.bias"});
  nn::Sequential seq(nn::Linear(2, 3), nn::LayerNorm(nn::LayerNormOptions({3})));
  CHECK(names(seq->state_dict()) == std::vector<std::string>{"0.weight", "0.bias", "1.weight", "1.bias"});
  // The tensors are the model's own.
  CHECK(seq->state_dict()[0].second.impl() == seq->named_parameters()[0].second.impl());
}

TEST_CASE("load_state_dict copies values into the model's own tensors") {
  manual_seed(3);
  nn::Linear a(4, 2), b(4, 2);
  const Tensor w_before = b->weight;
  optim::SGD opt(b->parameters(), optim::SGDOptions(0.5));  // built before the load
  const nn::IncompatibleKeys r = b->load_state_dict(a->state_dict());
  CHECK(r.empty());
  CHECK(b->weight.impl() == w_before.impl());  // same tensor, new values
  CHECK(test::allclose(b->weight, a->weight, 0, 0));
  CHECK(test::allclose(b->bias, a->bias, 0, 0));
  CHECK(b->weight.requires_grad());
  CHECK(b->weight.grad_fn() == nullptr);  // no history recorded
  // The optimizer still steps the loaded tensor.
  sum(b->forward(ones({1, 4}))).backward();
  const Tensor g = b->weight.grad().clone(), w0 = b->weight.clone();
  opt.step();
  CHECK(test::allclose(b->weight, w0 - g * real(0.5), 1e-6, 1e-7));
}

TEST_CASE("load_state_dict reports missing and unexpected keys; strict refuses them") {
  nn::Linear a(3, 2), b(3, 2);
  NamedTensors d = a->state_dict();
  d.erase(d.begin() + 1);                  // drop "bias"
  d.emplace_back("extra.weight", ones({2}));
  const Tensor b_bias = b->bias.clone(), a_w = a->weight.clone();
  const std::string e = error_of([&] { b->load_state_dict(d); });
  CHECK(e == "load_state_dict: the state dict does not match the model: missing keys ['bias'], "
             "unexpected keys ['extra.weight']");
  CHECK(!test::allclose(b->weight, a_w, 0, 0));  // strict refusal changed nothing

  const nn::IncompatibleKeys r = b->load_state_dict(d, /*strict=*/false);
  CHECK(r.missing_keys == std::vector<std::string>{"bias"});
  CHECK(r.unexpected_keys == std::vector<std::string>{"extra.weight"});
  CHECK(test::allclose(b->weight, a_w, 0, 0));    // what matched was loaded
  CHECK(test::allclose(b->bias, b_bias, 0, 0));   // what was missing kept its value
}

TEST_CASE("load_state_dict names the key and both shapes of a mismatch, and refuses duplicates") {
  nn::Linear b(3, 2);
  const Tensor w = b->weight.clone();
  CHECK(error_of([&] { b->load_state_dict({{"weight", ones({3, 2})}, {"bias", ones({2})}}); }) ==
        "load_state_dict: size mismatch for 'weight': copying a tensor of shape (3,2) from the state dict, "
        "the shape in the model is (2,3)");
  CHECK(error_of([&] { b->load_state_dict({{"weight", ones({2, 3})}, {"weight", ones({2, 3})}}, false); }) ==
        "load_state_dict: the state dict has key 'weight' twice");
  CHECK(error_of([&] { b->load_state_dict({{"weight", Tensor()}}, false); }) ==
        "load_state_dict: the state dict's tensor 'weight' is undefined");
  CHECK(error_of([&] {  // a mismatch even in non-strict mode, and nothing is loaded before it
          b->load_state_dict({{"bias", zeros({2})}, {"weight", ones({1, 3})}}, false);
        }) != "(no heed::Error thrown)");
  CHECK(test::allclose(b->weight, w, 0, 0));
}

TEST_CASE("a tied parameter: one in named_parameters, both names in state_dict") {
  TiedLM m;
  CHECK(names(m.named_parameters()) == std::vector<std::string>{"wte.weight", "mid.weight", "mid.bias"});
  CHECK(m.parameters().size() == 3);
  CHECK(m.num_parameters() == 15 + 9 + 3);
  CHECK(names(m.state_dict()) == std::vector<std::string>{"wte.weight", "mid.weight", "mid.bias", "head.weight"});
  // Loading writes the one tensor (the last key wins, as in PyTorch).
  NamedTensors d = m.state_dict();
  for (auto& [n, t] : d) t = full(t.shape(), n == "head.weight" ? 2.0 : 1.0);
  m.load_state_dict(d);
  CHECK(m.wte->weight.impl() == m.head->weight.impl());
  CHECK(m.wte->weight.data()[0] == 2);
}

TEST_CASE("a tied parameter gets both uses' gradient and one optimizer step") {
  manual_seed(5);
  TiedLM m;
  const IndexTensor ids({0, 3, 1}, {3});
  Tensor loss = sum(m.forward(ids) * m.forward(ids));
  loss.backward();
  const Tensor g = m.wte->weight.grad().clone();
  // The gradient is the sum over both uses: compare with an untied copy's two gradients.
  {
    TiedLM u;
    u.load_state_dict(m.state_dict());
    Tensor head = m.wte->weight.detach().clone().requires_grad_();
    auto f = [&] { return matmul(tanh(u.mid->forward(u.wte->forward(ids))), head.transpose(0, 1)); };
    sum(f() * f()).backward();
    CHECK(test::allclose(g, u.wte->weight.grad() + head.grad(), 1e-5, 1e-6));
  }
  // SGD steps it once: w - lr * g (twice would be w - 2 lr g).
  optim::SGD opt(m.parameters(), optim::SGDOptions(0.1));
  const Tensor w0 = m.wte->weight.clone();
  opt.step();
  CHECK(test::allclose(m.wte->weight, w0 - g * real(0.1), 1e-6, 1e-7));
  // Adam keeps one state per parameter, not per name.
  optim::Adam adam(m.parameters(), optim::AdamOptions(1e-3));
  adam.step();
  CHECK(adam.state().size() == 2 * 3);  // exp_avg and exp_avg_sq of 3 parameters
}

TEST_CASE("clipping counts a tied parameter's gradient once") {
  TiedLM m;
  m.wte->weight.set_grad(full({5, 3}, 1.0));
  m.mid->weight.set_grad(zeros({3, 3}));
  m.mid->bias.set_grad(zeros({3}));
  const double norm = optim::clip_grad_norm_(m.parameters(), 1.0);
  CHECK(norm == doctest::Approx(std::sqrt(15.0)));  // twice would be sqrt(30)
  CHECK(m.wte->weight.grad().data()[0] == doctest::Approx(1 / std::sqrt(15.0)).epsilon(1e-5));
}

TEST_CASE("a checkpoint stores a tied parameter once and restores the tie's value") {
  test::TmpDir dir;
  manual_seed(8);
  TiedLM a, b;
  save_checkpoint(dir.file("tied.ckpt"), a);
  load_checkpoint(dir.file("tied.ckpt"), b);
  CHECK(test::allclose(b.wte->weight, a.wte->weight, 0, 0));
  CHECK(b.head->weight.impl() == b.wte->weight.impl());
  // The tensor is written once: the file is byte for byte that of the model without the head.
  struct NoHead : nn::Module {
    nn::Embedding wte = register_module("wte", nn::Embedding(5, 3));
    nn::Linear mid = register_module("mid", nn::Linear(3, 3));
  } c;
  c.load_state_dict(a.state_dict(), /*strict=*/false);
  save_checkpoint(dir.file("untied.ckpt"), c);
  CHECK(test::read_bytes(dir.file("tied.ckpt")) == test::read_bytes(dir.file("untied.ckpt")));
}

// test_version_counter.cpp - the autograd core's safety checks: the storage version counter
// that catches an in-place write to a tensor saved for backward (core/tensor.h,
// autograd/engine/node.h SavedTensor), members of an undefined Tensor, optional (undefined)
// parameters, and post-accumulate hooks under gradient checkpointing and self-removal.
#include <functional>

#include <heed/core/version.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/engine/grad_mode.h>
#include <heed/autograd/ops/linalg.h>
#include <heed/autograd/ops/normalize.h>
#include <heed/autograd/engine/recompute.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/reduce_minmax.h>
#include <heed/autograd/ops/shape.h>
#include <heed/autograd/ops/softmax.h>
#include <heed/autograd/ops/topk.h>
#include <heed/autograd/ops/unary.h>
#include <heed/autograd/ops/views.h>
#include <heed/layers/init.h>
#include <heed/layers/linear.h>
#include <heed/layers/module.h>
#include <heed/optim/adam.h>
#include <heed/optim/checkpoint_file.h>
#include <heed/optim/clip.h>
#include <heed/optim/sgd.h>
#include "helpers.h"
#include "tmp_files.h"

using namespace heed;
using heed::test::error_of;

static bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// ---------------------------------------------------------------- the version counter

TEST_CASE("version: every in-place op bumps the storage's counter, shared by views and detach") {
  Tensor x = zeros({2, 3});
  CHECK(x.version() == 0);
  x.fill_(1);
  CHECK(x.version() == 1);
  x.zero_();
  x.add_(ones({2, 3}));
  x.mul_(2);
  x.copy_(ones({2, 3}));
  CHECK(x.version() == 5);
  Tensor v = x.reshape({3, 2}), d = x.detach(), u = x.unsqueeze(0), f = x.flatten();
  CHECK(v.version() == 5);
  d.fill_(0);
  CHECK(x.version() == 6);
  CHECK(v.version() == 6);
  CHECK(u.version() == 6);
  CHECK(f.version() == 6);
  // narrow along dim 0 is a block of x: a view sharing its counter (core/tensor.h, "Views");
  // along dim 1 it is a copy, and in-place ops refuse it
  Tensor n = x.narrow(0, 1, 1);
  n.fill_(5);
  CHECK(n.version() == 7);
  CHECK(x.version() == 7);
  CHECK(contains(error_of([&] { x.narrow(1, 0, 2).fill_(5); }), "a copy made by narrow(dim 1)"));
  CHECK(x.version() == 7);
  x.bump_version();
  CHECK(d.version() == 8);
  CHECK(x.clone().version() == 0);  // a copy has a storage of its own
}

TEST_CASE("version: an in-place write to a saved input is caught in backward (the issue's x * x)") {
  Tensor x = full({2}, 2).requires_grad_();
  Tensor y = x * x;
  x.detach().fill_(100);
  const std::string e = error_of([&] { y.sum().backward(); });
  CHECK(contains(e, "one of the variables needed for gradient computation has been modified by "
                    "an inplace operation: input 0 of 'mul' (shape (2)) is at version 1; "
                    "expected version 0"));
  CHECK(!x.grad().defined());  // nothing was accumulated from the stale values
}

TEST_CASE("version: every op that reads its input in backward saves it (log1p, normalize, log, abs, elu)") {
  // Each op's backward reads x: a write to x between forward and backward must raise, not
  // give the gradient at the new values.
  const std::vector<std::pair<const char*, std::function<Tensor(const Tensor&)>>> ops = {
      {"log1p", [](const Tensor& x) { return log1p(x); }},
      {"normalize", [](const Tensor& x) { return normalize(x, 2.0, 1); }},
      {"log", [](const Tensor& x) { return log(x); }},
      {"abs", [](const Tensor& x) { return abs(x); }},
      {"elu", [](const Tensor& x) { return elu(x); }}};
  for (const auto& [name, f] : ops) {
    const std::string op = name;
    CAPTURE(op);
    Tensor x = full({2, 3}, 0.5).requires_grad_();
    Tensor y = f(x);
    x.detach().fill_(2);
    const std::string e = error_of([&] { y.sum().backward(); });
    CHECK(contains(e, std::string("input 0 of '") + name + "'"));
    CHECK(contains(e, "is at version 1; expected version 0"));
  }
}

TEST_CASE("version: a write to an input the op did not save is allowed, as in PyTorch") {
  Tensor x = full({2}, 2).requires_grad_();
  Tensor y = x + 1;  // add saves nothing
  x.detach().fill_(5);
  y.sum().backward();
  CHECK(x.grad().to_vector() == std::vector<real>{1, 1});
  // and exp saves only its output: writing the input is fine
  Tensor z = full({2}, 0).requires_grad_();
  Tensor e = exp(z);
  z.detach().fill_(3);
  e.sum().backward();
  CHECK(z.grad().to_vector() == std::vector<real>{1, 1});
}

TEST_CASE("version: a write through a view of the saved storage is caught") {
  Tensor x = from_vector({1, 2, 3, 4}, {2, 2}).requires_grad_();
  SUBCASE("reshape") {
    Tensor y = (x * x).sum();
    x.detach().reshape({4}).fill_(0);
    CHECK(contains(error_of([&] { y.backward(); }), "input 0 of 'mul' (shape (2,2)) is at version 1"));
  }
  SUBCASE("view, unsqueeze, squeeze") {
    Tensor y = matmul(x, x).sum();
    x.detach().view({1, 4}).unsqueeze(0).squeeze(0).mul_(3);
    const std::string e = error_of([&] { y.backward(); });
    CHECK(contains(e, "input 0 of 'matmul' (shape (2,2)) is at version 1; expected version 0"));
  }
  SUBCASE("an input that is a view of a leaf, written through the leaf") {
    Tensor xs = x.reshape({4});
    Tensor y = (xs * xs).sum();
    NoGradGuard ng;
    x.add_(ones({2, 2}));
    CHECK(contains(error_of([&] { y.backward(); }), "input 0 of 'mul' (shape (4)) is at version 1"));
  }
  SUBCASE("narrow(0) shares x's storage: a write through it is caught; a transpose's copy refuses writes") {
    Tensor y = (x * x).sum();
    CHECK(contains(error_of([&] { x.detach().transpose(0, 1).select(0, 0).mul_(3); }),
                   "a copy made by transpose"));
    x.detach().narrow(0, 1, 1).fill_(0);
    CHECK(contains(error_of([&] { y.backward(); }), "input 0 of 'mul' (shape (2,2)) is at version 1"));
  }
  SUBCASE("a view saved, the base written") {
    Tensor base = zeros({4});
    Tensor w = base.reshape({2, 2});
    Tensor y = (x * w).sum();
    base.fill_(1);
    CHECK(contains(error_of([&] { y.backward(); }), "input 1 of 'mul' (shape (2,2)) is at version 1; expected version 0"));
  }
}

TEST_CASE("version: saved outputs are checked too (tanh, exp, sigmoid, softmax keep y)") {
  Tensor x = from_vector({0.1f, 0.2f, 0.3f}, {3}).requires_grad_();
  for (int which = 0; which < 4; ++which) {
    CAPTURE(which);
    Tensor y = which == 0 ? tanh(x) : which == 1 ? exp(x) : which == 2 ? sigmoid(x) : softmax(x, 0);
    const char* name = which == 0 ? "'tanh'" : which == 1 ? "'exp'" : which == 2 ? "'sigmoid'" : "'softmax'";
    Tensor loss = y.sum();  // sum saves nothing: the check that fires is the op's own
    {
      NoGradGuard ng;
      y.mul_(2);  // the output itself, in place
    }
    const std::string e = error_of([&] { loss.backward(); });
    CHECK(contains(e, std::string("output 0 of ") + name + " (shape (3)) is at version 1; expected version 0"));
  }
}

TEST_CASE("version: an optimizer step between forward and backward is caught") {
  Tensor w = from_vector({1, 2}, {2}).requires_grad_();
  optim::SGD opt({w}, optim::SGDOptions(0.1));
  Tensor loss = (w * w).sum();
  loss.backward(Tensor(), /*retain_graph=*/true);
  opt.step();  // updates w in place (through data(), with bump_version)
  const std::string e = error_of([&] { loss.backward(); });
  CHECK(contains(e, "'mul'"));
  CHECK(contains(e, "is at version 1; expected version 0"));
  // Adam and the initialisers bump too
  Tensor v = from_vector({1, 2}, {2}).requires_grad_();
  optim::Adam adam({v}, optim::AdamOptions(0.1));
  Tensor l2 = (v * v).sum();
  l2.backward(Tensor(), true);
  adam.step();
  CHECK(contains(error_of([&] { l2.backward(); }), "modified by an inplace operation"));
  Tensor u = zeros({2, 2}).requires_grad_();
  Tensor l3 = (u * u).sum();
  nn::init::normal_(u, 0, 1);
  CHECK(contains(error_of([&] { l3.backward(); }), "modified by an inplace operation"));
}

TEST_CASE("version: a checkpoint input written under NoGradGuard before backward is caught") {
  Tensor w = from_vector({1, 2}, {2}).requires_grad_();
  Tensor x = from_vector({3, 4}, {2}).requires_grad_();
  auto block = [&](const std::vector<Tensor>& in) { return in[0] * w; };
  Tensor y = checkpoint(block, {x}).sum();
  {
    NoGradGuard ng;
    x.add_(ones({2}));  // an optimizer step, say
  }
  const std::string e = error_of([&] { y.backward(); });
  CHECK(contains(e, "input 0 of 'checkpoint' (shape (2)) is at version 1; expected version 0"));
  CHECK(!w.grad().defined());  // the block was not re-run on the new values
}

TEST_CASE("version: a check on a long chain names the op whose input changed") {
  Tensor x = from_vector({1, 2, 3}, {3}).requires_grad_();
  Tensor h = x;
  for (int i = 0; i < 10; ++i) h = h * 0.5 + 1;  // saves nothing
  Tensor mid = h;
  Tensor y = (log(h) * 2.0).sum();  // log saves its input
  mid.detach().fill_(1);
  CHECK(contains(error_of([&] { y.backward(); }), "input 0 of 'log' (shape (3)) is at version 1"));
}

// ---------------------------------------------------------------- undefined tensors

TEST_CASE("every member of an undefined Tensor raises 'use of an undefined tensor'") {
  Tensor u;
  const std::vector<std::pair<const char*, std::function<void()>>> uses = {
      {"shape", [&] { u.shape(); }}, {"dim", [&] { u.dim(); }}, {"size", [&] { u.size(0); }},
      {"numel", [&] { u.numel(); }}, {"data", [&] { u.data(); }}, {"item", [&] { u.item(); }},
      {"at", [&] { u.at({0}); }}, {"to_vector", [&] { u.to_vector(); }},
      {"requires_grad", [&] { u.requires_grad(); }}, {"requires_grad_", [&] { u.requires_grad_(); }},
      {"is_leaf", [&] { u.is_leaf(); }}, {"grad", [&] { u.grad(); }},
      {"zero_grad", [&] { u.zero_grad(); }}, {"set_grad", [&] { u.set_grad(Tensor()); }},
      {"grad_fn", [&] { u.grad_fn(); }}, {"backward", [&] { u.backward(); }},
      {"detach", [&] { u.detach(); }}, {"version", [&] { u.version(); }},
      {"bump_version", [&] { u.bump_version(); }},
      {"register_post_accumulate_grad_hook",
       [&] { u.register_post_accumulate_grad_hook([](const Tensor&) {}); }},
      {"remove_post_accumulate_grad_hook", [&] { u.remove_post_accumulate_grad_hook(1); }},
      {"reshape", [&] { u.reshape({1}); }}, {"view", [&] { u.view({1}); }},
      {"transpose", [&] { u.transpose(0, 1); }}, {"permute", [&] { u.permute({0}); }},
      {"unsqueeze", [&] { u.unsqueeze(0); }}, {"squeeze", [&] { u.squeeze(0); }},
      {"sum", [&] { u.sum(); }}, {"sum(dim)", [&] { u.sum(0); }}, {"mean", [&] { u.mean(); }},
      {"mean(dim)", [&] { u.mean(0); }}, {"max", [&] { u.max(); }}, {"max(dim)", [&] { u.max(0); }},
      {"min", [&] { u.min(); }}, {"min(dim)", [&] { u.min(0); }}, {"argmax", [&] { u.argmax(0); }},
      {"argmin", [&] { u.argmin(0); }}, {"topk", [&] { u.topk(1); }},
      {"softmax", [&] { u.softmax(0); }}, {"log_softmax", [&] { u.log_softmax(0); }},
      {"matmul", [&] { u.matmul(ones({1})); }}, {"select", [&] { u.select(0, 0); }},
      {"narrow", [&] { u.narrow(0, 0, 1); }}, {"flatten", [&] { u.flatten(); }},
      {"exp", [&] { u.exp(); }}, {"log", [&] { u.log(); }}, {"sqrt", [&] { u.sqrt(); }},
      {"tanh", [&] { u.tanh(); }}, {"sigmoid", [&] { u.sigmoid(); }}, {"relu", [&] { u.relu(); }},
      {"abs", [&] { u.abs(); }}, {"neg", [&] { u.neg(); }}, {"pow", [&] { u.pow(2); }},
      {"clone", [&] { u.clone(); }}, {"contiguous", [&] { u.contiguous(); }},
      {"zero_", [&] { u.zero_(); }}, {"fill_", [&] { u.fill_(1); }},
      {"copy_", [&] { u.copy_(ones({1})); }}, {"add_", [&] { u.add_(ones({1})); }},
      {"mul_", [&] { u.mul_(2); }},
  };
  for (const auto& [name, use] : uses) {
    const std::string op = name;
    CAPTURE(op);
    CHECK(contains(error_of(use), "use of an undefined tensor"));
  }
  CHECK(!u.defined());
  CHECK(u.impl() == nullptr);
}

// ---------------------------------------------------------------- optional parameters

namespace {
struct MaybeBias : nn::Module {
  Tensor w = register_parameter("weight", ones({2}));
  Tensor b = register_parameter("bias", Tensor(), false);  // libtorch's optional-parameter idiom
  Tensor forward(const Tensor& x) { return x * w; }
};
}  // namespace

TEST_CASE("an undefined parameter may be registered and is skipped everywhere") {
  auto m = std::make_shared<MaybeBias>();
  REQUIRE(m->parameters().size() == 1);
  CHECK(m->named_parameters()[0].first == "weight");
  CHECK(m->num_parameters() == 2);
  CHECK(contains(m->summary(), "total parameters: 2"));
  m->forward(ones({2})).sum().backward();
  m->zero_grad(true);
  m->forward(ones({2})).sum().backward();
  optim::SGD opt(m->parameters(), optim::SGDOptions(0.5));
  opt.step();
  CHECK(m->w.to_vector() == std::vector<real>{0.5, 0.5});
  heed::test::TmpDir tmp;
  save_checkpoint(tmp.file("m.bin"), *m);
  auto fresh = std::make_shared<MaybeBias>();
  load_checkpoint(tmp.file("m.bin"), *fresh);
  CHECK(fresh->w.to_vector() == std::vector<real>{0.5, 0.5});
}

TEST_CASE("clipping and optimizers skip an absent bias (Linear(...).bias(false))") {
  auto fc = nn::Linear(nn::LinearOptions(3, 2).bias(false));
  REQUIRE(!fc->bias.defined());
  fc->forward(ones({1, 3})).sum().backward();
  const double norm = optim::clip_grad_norm_({fc->weight, fc->bias}, 1);
  CHECK(norm == doctest::Approx(std::sqrt(6.0)).epsilon(1e-5));
  optim::clip_grad_value_({fc->weight, fc->bias}, 0.1);
  CHECK(fc->weight.grad().to_vector()[0] == doctest::Approx(0.1));
  optim::SGD opt({fc->weight, fc->bias}, optim::SGDOptions(0.1));
  opt.step();
  CHECK(contains(error_of([] { optim::SGD({Tensor()}, optim::SGDOptions(0.1)); }), "empty parameter list"));
}

// ---------------------------------------------------------------- post-accumulate hooks

TEST_CASE("a leaf used inside and outside a checkpoint gets its hook once, with the final gradient") {
  for (int order = 0; order < 2; ++order) {
    CAPTURE(order);
    Tensor w = from_vector({1, 2}, {2}).requires_grad_();
    Tensor x = from_vector({3, 5}, {2}).requires_grad_();
    std::vector<std::vector<real>> seen;
    w.register_post_accumulate_grad_hook([&](const Tensor& leaf) { seen.push_back(leaf.grad().to_vector()); });
    auto block = [&](const std::vector<Tensor>& in) { return in[0] * w; };
    // d/dw of sum(x * w) + sum(w * 7) = x + 7
    Tensor inside = checkpoint(block, {x}).sum(), outside = (w * 7.0).sum();
    Tensor loss = order == 0 ? inside + outside : outside + inside;
    loss.backward();
    REQUIRE(seen.size() == 1);
    CHECK(seen[0] == std::vector<real>{10, 12});
    CHECK(x.grad().to_vector() == std::vector<real>{1, 2});
  }
}

TEST_CASE("a hook inside a checkpointed block only, and nested checkpoints, fire once") {
  Tensor w = from_vector({2}, {1}).requires_grad_();
  Tensor x = from_vector({3}, {1}).requires_grad_();
  int calls = 0;
  std::vector<real> last;
  w.register_post_accumulate_grad_hook([&](const Tensor& leaf) { ++calls; last = leaf.grad().to_vector(); });
  auto inner = [&](const std::vector<Tensor>& in) { return in[0] * w; };
  auto outer = [&](const std::vector<Tensor>& in) { return checkpoint(inner, {in[0] * w}); };
  Tensor loss = (checkpoint(outer, {x}) + w * 1.0).sum();  // x w^2 + w: dw = 2 x w + 1
  loss.backward();
  CHECK(calls == 1);
  CHECK(last == std::vector<real>{13});
}

TEST_CASE("a hook that removes itself is safe, and the next hook still runs") {
  Tensor w = from_vector({1}, {1}).requires_grad_();
  std::vector<int> calls;
  int64_t first = 0;
  first = w.register_post_accumulate_grad_hook([&](const Tensor& leaf) {
    calls.push_back(1);
    leaf.remove_post_accumulate_grad_hook(first);  // the one-shot pattern
  });
  w.register_post_accumulate_grad_hook([&](const Tensor&) { calls.push_back(2); });
  (w * 2.0).sum().backward();
  (w * 2.0).sum().backward();
  CHECK(calls == std::vector<int>{1, 2, 2});
}

TEST_CASE("an empty hook is refused at registration") {
  Tensor w = ones({1}).requires_grad_();
  const std::string e = error_of([&] { w.register_post_accumulate_grad_hook(nullptr); });
  CHECK(contains(e, "register_post_accumulate_grad_hook"));
  CHECK(contains(e, "empty"));
  std::function<void(const Tensor&)> none;
  CHECK(contains(error_of([&] { w.register_post_accumulate_grad_hook(none); }), "empty"));
  (w * 2.0).sum().backward();  // and nothing broken was left behind
  CHECK(w.grad().item() == 2);
}

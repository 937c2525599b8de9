// gradcheck_layers.cpp - finite-difference checks (double build) of the layer ops:
// linear, linear_gelu, embedding, layer_norm (and its composed twin), dropout; and of whole modules.
#include <heed/core/random.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/dropout.h>
#include <heed/autograd/ops/embedding.h>
#include <heed/autograd/ops/layer_norm.h>
#include <heed/autograd/ops/linalg.h>
#include <heed/autograd/ops/linear.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/shape.h>
#include <heed/layers/activation.h>
#include <heed/layers/linear.h>
#include <heed/layers/sequential.h>
#include "helpers.h"

using namespace heed;
using heed::test::allclose;
using heed::test::check_grad;
using heed::test::check_fused_matches_composed;
using heed::test::param;
using V = std::vector<Tensor>;

TEST_CASE("gradcheck linear: 1-D, 2-D and 3-D input, with and without bias") {
  manual_seed(11);
  Tensor w = param({3, 4}), b = param({3});
  for (Shape xs : {Shape{4}, Shape{5, 4}, Shape{2, 3, 4}}) {
    CAPTURE(xs);
    Tensor x = param(xs);
    check_grad([](const V& v) { return linear(v[0], v[1], v[2]); }, {x, w, b});
    check_grad([](const V& v) { return linear(v[0], v[1]); }, {x, w});
  }
}

TEST_CASE("linear (fused) == linear_reference (matmul, transpose, add), outputs and gradients") {
  manual_seed(12);
  for (const Shape& xs : {Shape{5}, Shape{3, 5}, Shape{2, 3, 5}}) {
    CAPTURE(xs);
    const Tensor x = param(xs), w = param({4, 5}), b = param({4});
    check_fused_matches_composed([](const V& v) { return linear(v[0], v[1], v[2]); },
                                 [](const V& v) { return linear_reference(v[0], v[1], v[2]); },
                                 {x, w, b}, 1e-12, 1e-12);
    check_fused_matches_composed([](const V& v) { return linear(v[0], v[1]); },
                                 [](const V& v) { return linear_reference(v[0], v[1]); }, {x, w},
                                 1e-12, 1e-12);
  }
}

TEST_CASE("linear equals matmul with the transposed weight, plus the bias") {
  manual_seed(12);
  Tensor x = param({2, 3, 4}), w = param({5, 4}), b = param({5});
  Tensor wt = empty({4, 5});  // W^T, written out by hand (no transpose op needed)
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 4; ++j) wt.data()[j * 5 + i] = w.data()[i * 4 + j];
  CHECK(allclose(linear(x, w, b), matmul(x, wt) + b, 1e-12, 1e-12));
  CHECK_THROWS_AS(linear(param({2, 5}), w, b), Error);
  CHECK_THROWS_AS(linear(x, w, param({4})), Error);
}

TEST_CASE("gradcheck linear_gelu (erf and tanh forms), and == gelu(linear(...)), outputs and gradients") {
  manual_seed(13);
  for (const char* approximate : {"none", "tanh"})
    for (const Shape& xs : {Shape{5}, Shape{3, 5}, Shape{2, 3, 5}}) {
      const std::string form = approximate;
      CAPTURE(form);
      CAPTURE(xs);
      const Tensor x = param(xs), w = param({4, 5}), b = param({4});
      check_grad([&](const V& v) { return linear_gelu(v[0], v[1], v[2], approximate); }, {x, w, b});
      check_grad([&](const V& v) { return linear_gelu(v[0], v[1], Tensor(), approximate); }, {x, w});
      check_fused_matches_composed([&](const V& v) { return linear_gelu(v[0], v[1], v[2], approximate); },
                                   [&](const V& v) { return linear_gelu_reference(v[0], v[1], v[2], approximate); },
                                   {x, w, b}, 1e-12, 1e-12);
    }
}

TEST_CASE("gradcheck embedding: repeated ids; the padding row gets exactly zero gradient") {
  manual_seed(13);
  Tensor w = param({6, 3});
  const IndexTensor ids({1, 0, 4, 1, 1, 5, 0, 2}, {2, 4});
  check_grad([ids](const V& v) { return embedding(ids, v[0]); }, {w});
  // With padding_idx 0, row 0 is a constant of the op: check the other rows numerically
  // with row 0 held fixed (its gradient is checked to be exactly 0 below).
  Tensor row0 = randn({1, 3}), rest = param({5, 3});
  check_grad([ids, row0](const V& v) { return embedding(ids, cat({row0, v[0]}), 0); }, {rest});

  w.set_grad(Tensor());
  sum(embedding(ids, w, 1) * embedding(ids, w, 1)).backward();
  for (int j = 0; j < 3; ++j) CHECK(w.grad().at({1, j}) == 0);  // id 1 appears 3 times
  CHECK(w.grad().at({0, 0}) != 0);
  CHECK(w.grad().at({3, 0}) == 0);  // id 3 never appears
}

TEST_CASE("gradcheck layer_norm: 1 and 2 normalized dims, with and without affine") {
  manual_seed(14);
  const std::vector<std::pair<Shape, Shape>> cases = {{{3, 5}, {5}}, {{2, 3, 4}, {4}},
                                                      {{2, 3, 4}, {3, 4}}, {{6}, {6}}};
  for (auto [xs, ns] : cases) {
    CAPTURE(xs);
    CAPTURE(ns);
    Tensor x = param(xs), w = param(ns), b = param(ns);
    check_grad([ns](const V& v) { return layer_norm(v[0], ns, v[1], v[2]); }, {x, w, b});
    check_grad([ns](const V& v) { return layer_norm(v[0], ns); }, {x});
    check_grad([ns](const V& v) { return layer_norm(v[0], ns, v[1], Tensor(), 1e-3); }, {x, w});
  }
}

TEST_CASE("layer_norm fused == layer_norm_reference (mean/var/sub/div), outputs and gradients") {
  manual_seed(15);
  const std::vector<std::pair<Shape, Shape>> cases = {{{4, 7}, {7}}, {{2, 3, 4}, {3, 4}},
                                                      {{130, 5}, {5}}};  // > one 64-row piece
  for (auto [xs, ns] : cases) {
    CAPTURE(xs);
    const Tensor x = param(xs, 3.0), w = param(ns), b = param(ns);
    check_fused_matches_composed([ns](const V& v) { return layer_norm(v[0], ns, v[1], v[2]); },
                                 [ns](const V& v) { return layer_norm_reference(v[0], ns, v[1], v[2]); },
                                 {x, w, b}, 1e-9, 1e-11);
    check_fused_matches_composed([ns](const V& v) { return layer_norm(v[0], ns); },
                                 [ns](const V& v) { return layer_norm_reference(v[0], ns); }, {x},
                                 1e-9, 1e-11);
  }
  CHECK_THROWS_AS(layer_norm(param({2, 3}), {4}), Error);
  CHECK_THROWS_AS(layer_norm(param({2, 4}), {4}, param({3})), Error);
}

TEST_CASE("gradcheck dropout with a fixed mask (the seed is reset inside the function)") {
  manual_seed(16);
  Tensor x = param({4, 5});
  const auto f = [](const V& v) {
    manual_seed(7);  // every evaluation draws the same mask
    return dropout(v[0], 0.4, true);
  };
  check_grad(f, {x});
  Tensor y = f({x});
  int zeros = 0;
  for (int64_t i = 0; i < y.numel(); ++i) {
    if (y.data()[i] == 0) ++zeros;
    else CHECK(y.data()[i] == doctest::Approx(x.data()[i] / 0.6));
  }
  CHECK(zeros > 0);
  CHECK(zeros < 20);
  CHECK(dropout(x, 0.4, false).data() == x.data());  // eval: x itself
}

TEST_CASE("gradcheck modules: Linear, and Sequential(Linear, Tanh, Linear, GELU)") {
  manual_seed(17);
  auto fc = nn::Linear(4, 3);
  Tensor x = param({2, 5, 4});
  check_grad([fc](const V& v) { return fc->forward(v[0]); }, {x, fc->weight, fc->bias});
  nn::Sequential mlp{nn::Linear(4, 6), nn::Tanh(),
                     nn::Linear(6, 2), nn::GELU()};
  V inputs{x};
  for (const Tensor& p : mlp->parameters()) inputs.push_back(p);
  check_grad([&mlp](const V& v) { return mlp->forward(v[0]); }, inputs);
}

TEST_CASE("gradcheck PReLU: one slope, and one per channel of (N, C, L), x away from 0") {
  manual_seed(18);
  Tensor x = randn({2, 3, 4});
  for (int64_t i = 0; i < x.numel(); ++i) x.data()[i] += x.data()[i] >= 0 ? real(0.2) : real(-0.2);
  x.requires_grad_();  // |x| >= 0.2: no element near the kink at 0
  nn::PReLU one;
  check_grad([one](const V& v) { return one->forward(v[0]); }, {x, one->weight});
  nn::PReLU per_channel(nn::PReLUOptions().num_parameters(3).init(-0.4));
  check_grad([per_channel](const V& v) { return per_channel->forward(v[0]) * v[0]; }, {x, per_channel->weight});
}

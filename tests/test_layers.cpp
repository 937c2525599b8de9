// test_layers.cpp - the layers' behaviour (float build): parameter names and counts,
// train/eval, dropout statistics, initialiser statistics, repr, errors.
#include <cmath>
#include <string>

#include <heed/core/random.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/dropout.h>
#include <heed/autograd/ops/embedding.h>
#include <heed/autograd/engine/grad_mode.h>
#include <heed/autograd/ops/layer_norm.h>
#include <heed/autograd/ops/linear.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/reduce_minmax.h>
#include <heed/autograd/ops/unary.h>
#include <heed/layers/activation.h>
#include <heed/layers/dropout.h>
#include <heed/layers/embedding.h>
#include <heed/layers/init.h>
#include <heed/layers/layer_norm.h>
#include <heed/layers/linear.h>
#include <heed/layers/module.h>
#include <heed/layers/repr.h>
#include <heed/layers/sequential.h>
#include "helpers.h"

using namespace heed;

namespace {

std::vector<std::string> names(const nn::NamedTensors& nt) {
  std::vector<std::string> out;
  for (auto& [n, t] : nt) out.push_back(n);
  return out;
}

struct Stats {
  double mean = 0, std = 0, max_abs = 0;
};

Stats stats(const Tensor& t) {
  Stats s;
  const int64_t n = t.numel();
  for (int64_t i = 0; i < n; ++i) s.mean += t.data()[i];
  s.mean /= double(n);
  for (int64_t i = 0; i < n; ++i) {
    const double d = t.data()[i] - s.mean;
    s.std += d * d;
    s.max_abs = std::max(s.max_abs, std::fabs(double(t.data()[i])));
  }
  s.std = std::sqrt(s.std / double(n));
  return s;
}

// A user-defined model: children named as members, nested containers.
struct Net : nn::Module {
  Net() {
    embed = register_module("embed", nn::Embedding(nn::EmbeddingOptions(10, 4).padding_idx(0)));
    body = register_module("body", nn::Sequential(nn::Sequential{
        nn::Linear(4, 8), nn::ReLU(), nn::Dropout(0.2),
        nn::Sequential(nn::Sequential{nn::LayerNorm(std::vector<int64_t>{8}),
                                                        nn::Linear(8, 2)})}));
  }
  std::string repr() const override { return "Net"; }
  nn::Embedding embed{nullptr};
  nn::Sequential body{nullptr};
};

}  // namespace

TEST_CASE("layers: named_parameters names and order, flat and nested; num_parameters") {
  nn::Sequential seq{nn::Linear(4, 3), nn::ReLU(),
                     nn::Linear(nn::LinearOptions(3, 2).bias(false))};
  CHECK(names(seq->named_parameters()) == std::vector<std::string>{"0.weight", "0.bias", "2.weight"});
  CHECK(seq->num_parameters() == 4 * 3 + 3 + 3 * 2);
  CHECK(seq->size() == 3);
  CHECK(seq[1]->repr() == "ReLU()");
  CHECK_THROWS_AS(seq[3], Error);

  Net net;
  CHECK(names(net.named_parameters()) ==
        std::vector<std::string>{"embed.weight", "body.0.weight", "body.0.bias", "body.3.0.weight",
                                 "body.3.0.bias", "body.3.1.weight", "body.3.1.bias"});
  CHECK(net.num_parameters() == 40 + 32 + 8 + 8 + 8 + 16 + 2);
  CHECK(net.named_parameters()[1].second.shape() == Shape{8, 4});  // Linear weight (out, in)
  CHECK(names(net.embed->named_parameters()) == std::vector<std::string>{"weight"});
}

TEST_CASE("layers: train()/eval() reach every submodule; zero_grad") {
  Net net;
  auto drop = std::dynamic_pointer_cast<nn::DropoutImpl>((*net.body)[2]);
  REQUIRE(drop);
  CHECK(drop->is_training());
  net.eval();
  CHECK_FALSE(drop->is_training());
  CHECK_FALSE((*net.body)[3]->is_training());
  net.train();
  CHECK(drop->is_training());

  Tensor y = net.body->forward(net.embed->forward(IndexTensor({1, 2, 0}, {3})));
  CHECK(y.shape() == Shape{3, 2});
  sum(y).backward();
  for (auto& [n, p] : net.named_parameters()) CHECK_MESSAGE(p.grad().defined(), n);
  net.zero_grad();
  for (auto& [n, p] : net.named_parameters()) CHECK_FALSE(p.grad().defined());
}

TEST_CASE("layers: Dropout is the identity in eval and preserves the mean in training") {
  nn::Dropout drop(0.3);
  Tensor x = ones({100000});
  drop->eval();
  CHECK(drop->forward(x).data() == x.data());
  drop->train();
  manual_seed(5);
  Tensor y = drop->forward(x);
  int64_t dropped = 0;
  for (int64_t i = 0; i < y.numel(); ++i) {
    if (y.data()[i] == 0) ++dropped;
    else CHECK(y.data()[i] == doctest::Approx(1 / 0.7));
  }
  CHECK(std::fabs(mean(y).item() - 1) < 0.02);               // sd of the mean ~0.002
  CHECK(std::fabs(double(dropped) / 100000 - 0.3) < 0.01);  // sd ~0.0015
  manual_seed(5);
  CHECK(drop->forward(x).to_vector() == y.to_vector());  // the seed fixes the mask
  CHECK(nn::Dropout(0.0)->forward(x).data() == x.data());
  CHECK_THROWS_AS(nn::Dropout(1.0), Error);
  CHECK_THROWS_AS(nn::Dropout(-0.1), Error);
  CHECK_THROWS_AS(dropout(x, 1.5, true), Error);
}

TEST_CASE("init: calculate_gain and fans as torch.nn.init") {
  CHECK(nn::init::calculate_gain("linear") == 1);
  CHECK(nn::init::calculate_gain("sigmoid") == 1);
  CHECK(nn::init::calculate_gain("conv2d") == 1);
  CHECK(nn::init::calculate_gain("tanh") == doctest::Approx(5.0 / 3));
  CHECK(nn::init::calculate_gain("relu") == doctest::Approx(std::sqrt(2.0)));
  CHECK(nn::init::calculate_gain("leaky_relu") == doctest::Approx(std::sqrt(2 / (1 + 1e-4))));
  CHECK(nn::init::calculate_gain("leaky_relu", 0.2) == doctest::Approx(std::sqrt(2 / 1.04)));
  CHECK(nn::init::calculate_gain("selu") == doctest::Approx(0.75));
  CHECK_THROWS_AS(nn::init::calculate_gain("swish"), Error);
  CHECK(nn::init::fans(empty({6, 4})) == std::pair<int64_t, int64_t>{4, 6});
  CHECK(nn::init::fans(empty({6, 4, 3, 3})) == std::pair<int64_t, int64_t>{36, 54});
  CHECK_THROWS_AS(nn::init::fans(empty({5})), Error);
}

TEST_CASE("init: xavier and kaiming bounds and std over a 512x512 tensor (5%)") {
  manual_seed(21);
  Tensor w = empty({512, 512});
  const double n = 512;
  {
    nn::init::xavier_uniform_(w);
    const double a = std::sqrt(6 / (n + n));
    Stats s = stats(w);
    CHECK(s.max_abs <= a);
    CHECK(s.max_abs > 0.99 * a);
    CHECK(s.std == doctest::Approx(a / std::sqrt(3.0)).epsilon(0.05));
    CHECK(std::fabs(s.mean) < 0.01 * a);
  }
  {
    nn::init::xavier_normal_(w, 2.0);
    CHECK(stats(w).std == doctest::Approx(2 * std::sqrt(2 / (n + n))).epsilon(0.05));
  }
  {
    nn::init::kaiming_uniform_(w);  // a = 0, fan_in, leaky_relu: gain sqrt(2)
    const double b = std::sqrt(2.0) * std::sqrt(3 / n);
    Stats s = stats(w);
    CHECK(s.max_abs <= b);
    CHECK(s.max_abs > 0.99 * b);
    CHECK(s.std == doctest::Approx(std::sqrt(2 / n)).epsilon(0.05));
  }
  {
    Tensor r = empty({256, 512});  // fan_in 512, fan_out 256
    nn::init::kaiming_normal_(r, 0, "fan_out", "relu");
    CHECK(stats(r).std == doctest::Approx(std::sqrt(2.0 / 256)).epsilon(0.05));
    nn::init::kaiming_normal_(r, 0, "fan_in", "tanh");
    CHECK(stats(r).std == doctest::Approx(5.0 / 3 / std::sqrt(512.0)).epsilon(0.05));
    CHECK_THROWS_AS(nn::init::kaiming_normal_(r, 0, "fan_avg"), Error);
  }
  {
    nn::init::normal_(w, 3, 0.5);
    Stats s = stats(w);
    CHECK(s.mean == doctest::Approx(3).epsilon(0.01));
    CHECK(s.std == doctest::Approx(0.5).epsilon(0.05));
    nn::init::uniform_(w, -2, 4);
    s = stats(w);
    CHECK(s.mean == doctest::Approx(1).epsilon(0.05));
    CHECK(s.max_abs <= 4);
    nn::init::constant_(w, 0.25);
    CHECK(stats(w).mean == 0.25);
    nn::init::zeros_(w);
    CHECK(stats(w).max_abs == 0);
  }
  manual_seed(3);
  Tensor a = empty({4, 4}), b = empty({4, 4});
  nn::init::xavier_uniform_(a);
  manual_seed(3);
  nn::init::xavier_uniform_(b);
  CHECK(a.to_vector() == b.to_vector());  // heed::manual_seed governs the initialisers
}

// max |(W W^T)_ij - gain^2 delta_ij| for a (rows, cols) matrix
static double orth_error(const Tensor& w, int64_t rows, int64_t cols, double gain) {
  double worst = 0;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < rows; ++j) {
      double dot = 0;
      for (int64_t k = 0; k < cols; ++k) dot += double(w.data()[i * cols + k]) * w.data()[j * cols + k];
      worst = std::max(worst, std::fabs(dot - (i == j ? gain * gain : 0)));
    }
  return worst;
}

TEST_CASE("init: orthogonal_ gives W W^T = I (square, wide, >2-D) and W^T W = I (tall)") {
  manual_seed(22);
  Tensor w = empty({512, 512});
  nn::init::orthogonal_(w);
  CHECK(orth_error(w, 512, 512, 1) < 1e-4);
  Tensor wide = empty({3, 7});
  nn::init::orthogonal_(wide, 2.0);
  CHECK(orth_error(wide, 3, 7, 2) < 1e-5);
  Tensor conv = empty({4, 2, 3});  // rows 4, cols 6
  nn::init::orthogonal_(conv);
  CHECK(orth_error(conv, 4, 6, 1) < 1e-5);
  Tensor tall = empty({7, 3});  // columns orthonormal: check W^T through a transposed copy
  nn::init::orthogonal_(tall);
  Tensor tt = empty({3, 7});
  for (int i = 0; i < 7; ++i)
    for (int j = 0; j < 3; ++j) tt.data()[j * 7 + i] = tall.data()[i * 3 + j];
  CHECK(orth_error(tt, 3, 7, 1) < 1e-5);
  CHECK_THROWS_AS(nn::init::orthogonal_(w = empty({5})), Error);
}

TEST_CASE("layers: PyTorch's default initialisation of Linear, Embedding, LayerNorm") {
  manual_seed(23);
  nn::Linear fc(64, 32);
  const double bound = 1 / std::sqrt(64.0);
  CHECK(stats(fc->weight).max_abs <= bound);
  CHECK(stats(fc->weight).std == doctest::Approx(bound / std::sqrt(3.0)).epsilon(0.1));
  CHECK(stats(fc->bias).max_abs <= bound);
  CHECK(fc->weight.requires_grad());
  CHECK(fc->weight.shape() == Shape{32, 64});
  CHECK_FALSE(nn::Linear(nn::LinearOptions(3, 2).bias(false))->bias.defined());

  nn::Embedding emb(nn::EmbeddingOptions(100, 50).padding_idx(-1));  // -1: the last row
  CHECK(*emb->options.padding_idx() == 99);
  for (int j = 0; j < 50; ++j) CHECK(emb->weight.at({99, j}) == 0);
  CHECK(stats(emb->weight).std == doctest::Approx(1).epsilon(0.05));

  nn::LayerNorm ln(nn::LayerNormOptions({3, 4}));
  CHECK(ln->weight.to_vector() == std::vector<real>(12, 1));
  CHECK(ln->bias.to_vector() == std::vector<real>(12, 0));
  CHECK(ln->weight.shape() == Shape{3, 4});
  CHECK(nn::LayerNorm(nn::LayerNormOptions({4}).elementwise_affine(false))->num_parameters() == 0);
}

TEST_CASE("layers: forward values of Linear, Embedding, LayerNorm") {
  nn::Linear fc(3, 2);
  {
    NoGradGuard g;
    fc->weight.copy_(from_vector({1, 2, 3, -1, 0, 1}, {2, 3}));
    fc->bias.copy_(from_vector({0.5, -0.5}, {2}));
  }
  Tensor y = fc->forward(from_vector({1, 1, 1, 2, 0, -1}, {1, 2, 3}));
  CHECK(y.shape() == Shape{1, 2, 2});
  CHECK(y.to_vector() == std::vector<real>{6.5, -0.5, -0.5, -3.5});

  Tensor table = from_vector({0, 0, 1, 2, 3, 4}, {3, 2});
  auto emb = nn::Embedding::from_pretrained(table, true, 0);
  CHECK_FALSE(emb->weight.requires_grad());
  CHECK(emb->weight.data() == table.data());  // shares storage, as PyTorch
  CHECK_FALSE(table.requires_grad());
  Tensor e = emb->forward(IndexTensor({2, 0, 1, 2}, {2, 2}));
  CHECK(e.shape() == Shape{2, 2, 2});
  CHECK(e.to_vector() == std::vector<real>{3, 4, 0, 0, 1, 2, 3, 4});
  auto trainable = nn::Embedding::from_pretrained(table, false, 0);
  CHECK(trainable->weight.requires_grad());
  sum(trainable->forward(IndexTensor({0, 1, 1}))).backward();
  CHECK(trainable->weight.grad().to_vector() == std::vector<real>{0, 0, 2, 2, 0, 0});

  nn::LayerNorm ln(nn::LayerNormOptions({4}));
  Tensor z = ln->forward(from_vector({1, 2, 3, 4, -2, -2, -2, -2}, {2, 4}));
  const double s = 1 / std::sqrt(1.25 + 1e-5);  // biased variance of 1,2,3,4 is 1.25
  CHECK(z.at({0, 0}) == doctest::Approx(-1.5 * s));
  CHECK(z.at({0, 3}) == doctest::Approx(1.5 * s));
  CHECK(z.at({1, 2}) == 0);
}

TEST_CASE("layers: repr as PyTorch prints each module") {
  CHECK(nn::Linear(4, 2)->repr() == "Linear(in_features=4, out_features=2, bias=True)");
  CHECK(nn::Linear(nn::LinearOptions(4, 2).bias(false))->repr() ==
        "Linear(in_features=4, out_features=2, bias=False)");
  CHECK(nn::Embedding(10, 3)->repr() == "Embedding(10, 3)");
  CHECK(nn::Embedding(nn::EmbeddingOptions(10, 3).padding_idx(0))->repr() == "Embedding(10, 3, padding_idx=0)");
  CHECK(nn::Dropout()->repr() == "Dropout(p=0.5, inplace=False)");
  CHECK(nn::Dropout(0.1)->repr() == "Dropout(p=0.1, inplace=False)");
  CHECK(nn::LayerNorm(nn::LayerNormOptions({4}))->repr() == "LayerNorm((4,), eps=1e-05, elementwise_affine=True)");
  CHECK(nn::LayerNorm(nn::LayerNormOptions({3, 4}).eps(1e-6).elementwise_affine(false))->repr() ==
        "LayerNorm((3, 4), eps=1e-06, elementwise_affine=False)");
  CHECK(nn::ReLU()->repr() == "ReLU()");
  CHECK(nn::GELU()->repr() == "GELU(approximate='none')");
  CHECK(nn::GELU(nn::GELUOptions().approximate("tanh"))->repr() == "GELU(approximate='tanh')");
  CHECK(nn::Tanh()->repr() == "Tanh()");
  CHECK(nn::Sigmoid()->repr() == "Sigmoid()");
  CHECK(nn::ELU()->repr() == "ELU(alpha=1.0)");
  CHECK(nn::ELU(nn::ELUOptions().alpha(0.5))->repr() == "ELU(alpha=0.5)");
  CHECK(nn::LeakyReLU()->repr() == "LeakyReLU(negative_slope=0.01)");
  CHECK(nn::Mish()->repr() == "Mish()");
  // nn.Softplus(beta=1.0, threshold=20.0) in Python (its int defaults print as 1 and 20)
  CHECK(nn::Softplus()->repr() == "Softplus(beta=1.0, threshold=20.0)");
  CHECK(nn::Softplus(nn::SoftplusOptions().beta(0.5).threshold(5))->repr() == "Softplus(beta=0.5, threshold=5.0)");
  using nn::detail::py_float;  // Python's repr(float)
  CHECK(py_float(1e-5) == "1e-05");
  CHECK(py_float(0.0001) == "0.0001");
  CHECK(py_float(1.5e-7) == "1.5e-07");
  CHECK(py_float(100000.0) == "100000.0");
  CHECK(py_float(1e16) == "1e+16");
  CHECK(py_float(-2.25) == "-2.25");
  CHECK(py_float(0.1) == "0.1");
  CHECK(py_float(123.456) == "123.456");
  Net net;
  CHECK(net.summary().find("  (body): Sequential\n    (0): Linear(in_features=4, out_features=8, "
                           "bias=True)  [40 params]\n") != std::string::npos);
}

TEST_CASE("layers: bad input is a heed::Error naming the layer and the problem") {
  nn::Linear fc(4, 2);
  const std::string m1 = heed::test::error_of([&] { fc->forward(zeros({3, 5})); });
  CHECK_MESSAGE(m1.find("Linear: input (3,5) does not match in_features 4") == 0, m1);
  CHECK_THROWS_AS(fc->forward(scalar_tensor(1)), Error);
  CHECK_THROWS_AS(nn::Linear(-1, 2), Error);

  nn::Embedding emb(5, 2);
  const std::string m2 = heed::test::error_of([&] { emb->forward(IndexTensor({1, 7, 2})); });
  CHECK_MESSAGE(m2.find("Embedding: ") == 0, m2);
  CHECK_MESSAGE(m2.find("7") != std::string::npos, m2);
  CHECK_MESSAGE(m2.find("[0, 5)") != std::string::npos, m2);
  CHECK_THROWS_AS(emb->forward(IndexTensor({-1})), Error);
  CHECK_THROWS_AS(nn::Embedding(nn::EmbeddingOptions(5, 2).padding_idx(5)), Error);
  CHECK_THROWS_AS(nn::Embedding::from_pretrained(zeros({5})), Error);

  const std::string m3 = heed::test::error_of([] { nn::Dropout(1.0); });
  CHECK_MESSAGE(m3.find("Dropout: p must be in [0, 1)") == 0, m3);

  nn::LayerNorm ln(nn::LayerNormOptions({3, 4}));
  const std::string m4 = heed::test::error_of([&] { ln->forward(zeros({2, 4, 3})); });
  CHECK_MESSAGE(m4.find("LayerNorm: input (2,4,3) does not end in normalized_shape (3, 4)") == 0, m4);
  CHECK_THROWS_AS(nn::LayerNorm(nn::LayerNormOptions({})), Error);
  CHECK_THROWS_AS(nn::GELU(nn::GELUOptions().approximate("fast")), Error);
}

TEST_CASE("layers: PReLU's parameter, initial slopes, values, repr and clone") {
  nn::PReLU act(nn::PReLUOptions().num_parameters(2).init(0.1));
  REQUIRE(act->named_parameters().size() == 1);
  CHECK(act->named_parameters()[0].first == "weight");
  CHECK(act->weight.shape() == Shape{2});
  CHECK(act->weight.to_vector() == std::vector<real>{real(0.1), real(0.1)});
  CHECK(nn::PReLU()->weight.to_vector() == std::vector<real>{real(0.25)});
  CHECK(act->repr() == "PReLU(num_parameters=2)");
  // (1, 2, 2): channel 0 has slope 0.1, channel 1 slope -2 after the write below
  { NoGradGuard g; act->weight.data()[1] = -2; }
  Tensor y = act(from_vector({-1, 3, -0.5, 0}, {1, 2, 2}));
  CHECK(y.to_vector() == std::vector<real>{real(-0.1), 3, 1, 0});
  nn::PReLU copy = act->clone();
  { NoGradGuard g; copy->weight.fill_(7); }
  CHECK(act->weight.data()[1] == -2);  // the clone's parameter is its own
}

TEST_CASE("layers: ops on shapes large enough to run in parallel agree with plain loops") {
  manual_seed(24);
  // linear: (4, 300, 64) @ (200, 64)^T, forward and all three gradients
  Tensor x = randn({4, 300, 64}).requires_grad_(), w = randn({200, 64}).requires_grad_(),
         b = randn({200}).requires_grad_();
  Tensor dy = randn({4, 300, 200});
  linear(x, w, b).backward(dy);
  const real *px = x.data(), *pw = w.data(), *pdy = dy.data();
  double worst = 0;
  for (int64_t n = 0; n < 1200; n += 97)  // a sample of rows
    for (int64_t k = 0; k < 64; ++k) {
      double dx = 0;
      for (int64_t m = 0; m < 200; ++m) dx += double(pdy[n * 200 + m]) * pw[m * 64 + k];
      worst = std::max(worst, std::fabs(dx - x.grad().data()[n * 64 + k]) / (1 + std::fabs(dx)));
    }
  for (int64_t m = 0; m < 200; m += 13) {
    double db = 0, dw0 = 0;
    for (int64_t n = 0; n < 1200; ++n) {
      db += pdy[n * 200 + m];
      dw0 += double(pdy[n * 200 + m]) * px[n * 64];
    }
    worst = std::max(worst, std::fabs(db - b.grad().data()[m]) / (1 + std::fabs(db)));
    worst = std::max(worst, std::fabs(dw0 - w.grad().data()[m * 64]) / (1 + std::fabs(dw0)));
  }
  CHECK(worst < 1e-4);

  // embedding: 20000 ids into a (50, 40) table, padding 3
  std::vector<int64_t> idv(20000);
  for (size_t i = 0; i < idv.size(); ++i) idv[i] = int64_t((i * 7919) % 50);
  const IndexTensor ids(idv, {100, 200});
  Tensor table = randn({50, 40}).requires_grad_();
  Tensor g = randn({100, 200, 40});
  embedding(ids, table, 3).backward(g);
  std::vector<double> expect(50 * 40, 0);
  for (size_t i = 0; i < idv.size(); ++i)
    if (idv[i] != 3)
      for (int j = 0; j < 40; ++j) expect[idv[i] * 40 + j] += g.data()[i * 40 + j];
  worst = 0;
  for (int i = 0; i < 50 * 40; ++i)
    worst = std::max(worst, std::fabs(expect[i] - table.grad().data()[i]) / (1 + std::fabs(expect[i])));
  CHECK(worst < 1e-4);
  for (int j = 0; j < 40; ++j) CHECK(table.grad().at({3, j}) == 0);

  // layer_norm: (2000, 96), fused against composed
  Tensor h = randn({2000, 96}).requires_grad_(), lw = randn({96}).requires_grad_();
  Tensor hd = randn({2000, 96});
  Tensor y1 = layer_norm(h, {96}, lw, Tensor());
  y1.backward(hd);
  const Tensor gh = h.grad(), glw = lw.grad();
  h.set_grad(Tensor());
  lw.set_grad(Tensor());
  const Tensor mu = mean(h, -1, true);
  Tensor y2 = (h - mu) / sqrt(mean((h - mu) * (h - mu), -1, true) + 1e-5) * lw;
  y2.backward(hd);
  CHECK(heed::test::allclose(y1, y2, 1e-4, 1e-4));
  CHECK(heed::test::allclose(gh, h.grad(), 1e-3, 1e-3));
  CHECK(heed::test::allclose(glw, lw.grad(), 1e-3, 1e-2));
}

TEST_CASE("linear's bias gradient: row blocks summed in double match a naive loop, any thread count") {
  // N = 300 rows: four full blocks of 64 and a partial one; M = 70 columns.
  manual_seed(3);
  const int64_t N = 300, K = 5, M = 70;
  const Tensor x = randn({N, K}), w = randn({M, K}), b = randn({M}).requires_grad_();
  const Tensor dy = randn({N, M});
  Tensor db2;
  {
    test::FixedThreads two(2);
    linear(x, w, b).backward(dy);
    db2 = b.grad();
  }
  std::vector<real> naive(M);
  for (int64_t j = 0; j < M; ++j) {
    double acc = 0;
    for (int64_t n = 0; n < N; ++n) acc += dy.data()[n * M + j];
    naive[j] = real(acc);
  }
  CHECK(test::allclose(db2, from_vector(naive, {M}), 1e-6, 1e-6));
  b.set_grad(Tensor());
  test::FixedThreads one(1);
  linear(x, w, b).backward(dy);
  CHECK(test::allclose(b.grad(), db2, 0, 0));
}

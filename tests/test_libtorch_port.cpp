// test_libtorch_port.cpp - the lines a program ported from libtorch types, each written as a
// libtorch user writes it (with torch:: renamed heed::): data::transforms::Normalize,
// data::datasets::TensorDataset, Stack<>() over IndexTensor targets, IndexTensor's to(device),
// t(), full/empty and from_blob, Tensor from_blob, LSTM and GRU outputs as libtorch's tuples,
// chunk, multinomial, detach_(), nn::functional, nn::utils::clip_grad_norm_, and
// grad_fn()->name() as libtorch prints it; with the heed::Error each refuses bad input with.
#include <cmath>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/linalg.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/shape.h>
#include <heed/autograd/ops/unary.h>
#include <heed/autograd/engine/node.h>
#include <heed/core/multinomial.h>
#include <heed/core/random.h>
#include <heed/layers/functional.h>
#include <heed/layers/gru.h>
#include <heed/layers/linear.h>
#include <heed/layers/lstm.h>
#include <heed/optim/clip.h>
#include <heed/optim/data/data.h>
#include "helpers.h"

using namespace heed;
using heed::test::allclose;
using heed::test::error_of;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

// ---------------------------------------------------------------- data

TEST_CASE("port: Normalize<>(mean, stddev) per channel, then Stack<>(), as torch::data::transforms") {
  // 4 images (2, 1, 2): channel 0 all 1, channel 1 all 3
  Tensor images = cat({ones({4, 1, 1, 2}), full({4, 1, 1, 2}, 3)}, 1);
  Tensor labels = arange(4);
  auto ds = data::datasets::TensorDataset(images, labels)
                .map(data::transforms::Normalize<>({0.5, 1.0}, {0.25, 2.0}))
                .map(data::transforms::Stack<>());
  auto loader = data::make_data_loader<data::samplers::SequentialSampler>(std::move(ds), 4);
  int batches = 0;
  for (auto& batch : *loader) {
    ++batches;
    CHECK(batch.data.shape() == Shape{4, 2, 1, 2});
    CHECK(batch.data.select(1, 0).to_vector() == std::vector<real>(8, 2));  // (1 - 0.5) / 0.25
    CHECK(batch.data.select(1, 1).to_vector() == std::vector<real>(8, 1));  // (3 - 1) / 2
    CHECK(batch.target.to_vector() == std::vector<real>{0, 1, 2, 3});
  }
  CHECK(batches == 1);
  // one value for a one-channel image (MNIST's 0.1307, 0.3081), broadcast as libtorch's (1, 1, 1)
  data::transforms::Normalize<> mnist(0.1307, 0.3081);
  CHECK(mnist.mean.shape() == Shape{1, 1, 1});
  CHECK(mnist(full({1, 2, 2}, 0.1307f)).abs().max().item() < 1e-6);
  CHECK(contains(error_of([] { data::transforms::Normalize<>(std::vector<double>{}, {}); }),
                 "Normalize: mean and stddev need at least one value each"));
  // three channels against a one-channel image: the broadcast error of (data - mean)
  CHECK(contains(error_of([] { data::transforms::Normalize<>({0, 0, 0}, {1, 1, 1})(ones({2, 4, 4})); }), "2"));
}

TEST_CASE("port: TensorDataset(x, labels) with IndexTensor labels; Stack<>() deduces the example") {
  Tensor x = arange(12).reshape({6, 2});
  IndexTensor y({0, 1, 2, 0, 1, 2});
  auto ds = data::datasets::TensorDataset(x, y);
  static_assert(std::is_same_v<decltype(ds), data::datasets::TensorDataset<IndexTensor>>);
  CHECK(ds.size().value() == 6);
  auto e = ds.get(4);  // {data[4], target[4]}
  CHECK(e.data.to_vector() == std::vector<real>{8, 9});
  CHECK(e.target.item() == 1);
  CHECK(contains(error_of([&] { ds.get(6); }), "TensorDataset: index 6 is past the end of 6 examples"));
  CHECK(contains(error_of([&] { data::datasets::TensorDataset(x, IndexTensor({1, 2})); }),
                 "TensorDataset: data (6,2) and target (2) must have the same size(0)"));
  CHECK(contains(error_of([] { data::datasets::TensorDataset(scalar_tensor(1)); }), "must have a dim 0"));

  auto loader = data::make_data_loader<data::samplers::SequentialSampler>(
      ds.map(data::transforms::Stack<>()), data::DataLoaderOptions(4));
  std::vector<int64_t> seen;
  for (auto& batch : *loader) {
    static_assert(std::is_same_v<std::decay_t<decltype(batch.target)>, IndexTensor>);
    CHECK(batch.data.size(0) == batch.target.size(0));
    seen.insert(seen.end(), batch.target.vec().begin(), batch.target.vec().end());
  }
  CHECK(seen == y.vec());

  // libtorch's single-tensor TensorDataset: no targets, and Stack<> leaves them undefined
  auto only = data::datasets::TensorDataset(x).map(data::transforms::Stack<>());
  auto batch = only.get_batch({0, 5});
  CHECK(batch.data.to_vector() == std::vector<real>{0, 1, 10, 11});
  CHECK_FALSE(batch.target.defined());
}

// ---------------------------------------------------------------- integer tensors

TEST_CASE("port: IndexTensor to(device), t(), full/empty and from_blob with libtorch's kLong") {
  Device device(cuda::is_available() ? kCUDA : kCPU);
  IndexTensor y = IndexTensor({1, 2, 3, 4, 5, 6}, {2, 3}).to(device);
  CHECK(y.t().shape() == Shape{3, 2});
  CHECK(y.t().vec() == std::vector<int64_t>{1, 4, 2, 5, 3, 6});
  CHECK(IndexTensor({7, 8}).t().vec() == std::vector<int64_t>{7, 8});
  CHECK(contains(error_of([] { IndexTensor::zeros({2, 2, 2}).t(); }), "t: expects an IndexTensor of at most 2 dims"));
  CHECK(contains(error_of([&] { y.to(Device(kCUDA)); }), "heed runs on the CPU only"));
  CHECK(y.to(kLong).vec() == y.vec());
  CHECK(contains(error_of([&] { y.to(kFloat); }), "to_tensor()"));
  CHECK(y.cpu().device().is_cpu());

  IndexTensor pad = IndexTensor::full({2, 3}, -100);
  CHECK(pad.vec() == std::vector<int64_t>(6, -100));
  CHECK(IndexTensor::empty({0, 4}).numel() == 0);
  CHECK(IndexTensor::empty({2}).shape() == Shape{2});
  CHECK(contains(error_of([] { IndexTensor::full({-1}, 0); }), "negative size -1"));
  // torch::full({2}, 0, torch::kLong) is refused with the name to use
  CHECK(contains(error_of([] { full({2}, 0, kLong); }), "IndexTensor::full(shape, id)"));

  std::vector<int64_t> ids = {3, 1, 4, 1, 5, 9};
  IndexTensor blob = from_blob(ids.data(), {2, 3}, kLong);  // torch::from_blob(ids.data(), {2, 3}, torch::kLong)
  CHECK(blob.shape() == Shape{2, 3});
  CHECK(blob.vec() == ids);
  int freed = 0;
  IndexTensor with_deleter = from_blob(ids.data(), {6}, [&](void* p) { freed += p == ids.data(); });
  CHECK(freed == 1);  // copied, so the deleter runs at once
  CHECK(with_deleter.vec() == ids);
  CHECK(contains(error_of([&] { from_blob(ids.data(), {6}, kInt); }), "int64_t ids need dtype kLong"));
  CHECK(contains(error_of([&] { IndexTensor::from_blob(nullptr, {2}); }), "from_blob: a null pointer"));
}

TEST_CASE("port: from_blob over a float buffer shares it and calls the deleter when the last view goes") {
  std::vector<real> buf = {1, 2, 3, 4, 5, 6};
  Tensor x = from_blob(buf.data(), {2, 3});
  CHECK(x.data() == buf.data());
  buf[4] = 50;
  CHECK(x.at({1, 1}) == 50);  // not a copy
  x.mul_(2);
  CHECK(buf[0] == 2);          // writes reach the buffer
  CHECK((x * 1).sum().item() == doctest::Approx(2 * (1 + 2 + 3 + 4 + 50 + 6)));
  int freed = 0;
  {
    Tensor y = from_blob(buf.data(), {6}, [&](void* p) { freed += p == buf.data(); }, requires_grad());
    Tensor v = y.reshape({3, 2});
    (v * v).sum().backward();
    CHECK(y.grad().to_vector() == std::vector<real>{4, 8, 12, 16, 200, 24});  // 2 * y
    y = Tensor();
    CHECK(freed == 0);  // v still shares the storage
    CHECK(v.at({2, 0}) == 100);
  }
  CHECK(freed == 1);
  CHECK(contains(error_of([&] { from_blob(buf.data(), {7, -1}); }), "negative size"));
  CHECK(contains(error_of([] { from_blob(static_cast<real*>(nullptr), {2}); }), "from_blob: a null pointer"));
  CHECK(contains(error_of([&] { from_blob(buf.data(), {2}, Device(kCUDA)); }), "CPU only"));
}

// ---------------------------------------------------------------- LSTM and GRU outputs

TEST_CASE("port: lstm->forward(x) as libtorch's tuple: std::get, std::tie, and heed's binding") {
  manual_seed(1);
  nn::LSTM lstm(nn::LSTMOptions(3, 4).num_layers(2));
  Tensor x = randn({2, 5, 3});
  auto [out, h_n, c_n] = lstm->forward(x);
  CHECK(out.shape() == Shape{2, 5, 4});
  CHECK(c_n.shape() == Shape{2, 2, 4});

  Tensor y = std::get<0>(lstm->forward(x));
  CHECK(allclose(y, out));
  Tensor o;
  std::tuple<Tensor, Tensor> state;
  std::tie(o, state) = lstm->forward(x);
  CHECK(allclose(o, out));
  CHECK(allclose(std::get<0>(state), h_n));
  CHECK(allclose(std::get<1>(state), c_n));
  std::tuple<Tensor, std::tuple<Tensor, Tensor>> lstm_out = lstm->forward(x, state);  // feed it back
  CHECK(std::get<0>(lstm_out).shape() == Shape{2, 5, 4});
  CHECK_FALSE(allclose(std::get<0>(lstm_out), out));  // a different initial state

  nn::LSTMOutput r;  // as a struct member is declared, then assigned
  CHECK_FALSE(r.output.defined());
  r = lstm->forward(x);
  nn::LSTMOutput copy = r;
  copy.h_n = zeros({1});  // the copy's names are its own
  CHECK(r.h_n.shape() == Shape{2, 2, 4});
  CHECK(std::get<0>(std::get<1>(copy)).shape() == Shape{1});
  CHECK(allclose(r.output, out));
}

TEST_CASE("port: gru->forward(x) as libtorch's std::tuple<Tensor, Tensor>") {
  manual_seed(2);
  nn::GRU gru(nn::GRUOptions(3, 4));
  Tensor x = randn({2, 5, 3});
  auto [out, h_n] = gru->forward(x);
  Tensor o, h;
  std::tie(o, h) = gru->forward(x);
  CHECK(allclose(o, out));
  CHECK(allclose(h, h_n));
  CHECK(allclose(std::get<1>(gru->forward(x)), h_n));
  std::tuple<Tensor, Tensor> t = gru->forward(x, h_n);
  CHECK(std::get<1>(t).shape() == Shape{1, 2, 4});
  nn::GRUOutput r;
  r = gru->forward(x);
  CHECK(allclose(r.h_n, h_n));
}

// ---------------------------------------------------------------- ops

TEST_CASE("port: x.chunk(n, dim) as torch.chunk, differentiable") {
  Tensor x = arange(10).reshape({2, 5}).requires_grad_();
  std::vector<Tensor> parts = x.chunk(3, 1);  // sizes 2, 2, 1
  REQUIRE(parts.size() == 3);
  CHECK(parts[0].to_vector() == std::vector<real>{0, 1, 5, 6});
  CHECK(parts[2].shape() == Shape{2, 1});
  CHECK(x.chunk(4, 1).size() == 3);  // ceil(5 / 4) = 2: 2, 2, 1, as torch
  CHECK(chunk(x, 2).size() == 2);
  CHECK(zeros({0, 3}).chunk(3).size() == 3);
  CHECK(parts[1].grad_fn()->name() == "SplitBackward0");
  (parts[0] * 2 + parts[2]).sum().backward();  // parts[0] (2, 2) + parts[2] (2, 1) broadcast
  CHECK(x.grad().to_vector() == std::vector<real>{2, 2, 0, 0, 2, 2, 2, 0, 0, 2});
  CHECK(contains(error_of([&] { x.chunk(0); }), "chunk: expects `chunks` to be greater than 0, got: 0"));
  CHECK(contains(error_of([] { scalar_tensor(1).chunk(2); }), "chunk: expects at least a 1-dimensional tensor"));
  CHECK(contains(error_of([&] { x.chunk(2, 2); }), "dim 2 out of range"));
}

TEST_CASE("port: torch::multinomial: counts follow the probabilities; without replacement ids are distinct") {
  manual_seed(3);
  Tensor probs = from_vector({0.1f, 0.0f, 0.6f, 0.3f}, {4});
  IndexTensor draws = probs.multinomial(20000, /*replacement=*/true);
  CHECK(draws.shape() == Shape{20000});
  std::map<int64_t, int> count;
  for (int64_t id : draws.vec()) ++count[id];
  CHECK(count[1] == 0);  // probability 0 is never drawn
  CHECK(count[2] / 20000.0 == doctest::Approx(0.6).epsilon(0.05));
  CHECK(count[0] / 20000.0 == doctest::Approx(0.1).epsilon(0.1));

  // without replacement (the default): distinct ids, zero-probability ones last
  Tensor rows = from_vector({0, 5, 0, 1, 1, 1, 1, 0}, {2, 4});  // unnormalised, as torch allows
  IndexTensor all = multinomial(rows, 4);
  CHECK(all.shape() == Shape{2, 4});
  for (int r = 0; r < 2; ++r) {
    std::vector<int64_t> row = all.select(0, r).vec();
    CHECK(std::set<int64_t>(row.begin(), row.end()).size() == 4);
  }
  CHECK(all.at({0, 0}) == 1);  // the only non-zero category of row 0 comes first
  CHECK(all.at({1, 3}) == 3);  // row 1's zero comes last
  // first draws of a heavily weighted category: about its share
  int firsts = 0;
  for (int i = 0; i < 2000; ++i) firsts += from_vector({1, 3}, {2}).multinomial(1).item() == 1;
  CHECK(firsts / 2000.0 == doctest::Approx(0.75).epsilon(0.06));

  CHECK(contains(error_of([&] { probs.multinomial(5); }), "cannot sample n_sample > prob_dist.size(-1) samples without replacement"));
  CHECK(contains(error_of([&] { probs.multinomial(0); }), "cannot sample n_sample <= 0 samples"));
  CHECK(contains(error_of([] { from_vector({0.5f, -0.1f}, {2}).multinomial(1); }), "probability tensor contains either `inf`, `nan` or element < 0"));
  CHECK(contains(error_of([] { from_vector({0.5f, std::nanf("")}, {2}).multinomial(1); }), "`nan`"));
  CHECK(contains(error_of([] { zeros({2, 3}).multinomial(1, true); }), "invalid multinomial distribution (sum of probabilities <= 0)"));
  CHECK(contains(error_of([] { zeros({1, 2, 3}).multinomial(1); }), "prob_dist must be 1 or 2 dim"));
}

TEST_CASE("port: detach_() cuts a tensor from its graph in place") {
  Tensor w = randn({3}).requires_grad_();
  Tensor h = w * 2;
  Tensor same = h;  // another handle to the same tensor
  h.detach_();
  CHECK_FALSE(h.requires_grad());
  CHECK_FALSE(same.requires_grad());  // in place: every handle sees it
  CHECK(h.grad_fn() == nullptr);
  CHECK(h.is_leaf());
  w.detach_();
  CHECK_FALSE(w.requires_grad());
  Tensor u;
  CHECK(contains(error_of([&] { u.detach_(); }), "use of an undefined tensor"));
}

// ---------------------------------------------------------------- nn::functional, nn::utils

TEST_CASE("port: nn::functional with libtorch's option structs") {
  namespace F = heed::nn::functional;
  Tensor x = from_vector({-1, 2, -3, 4, 0.5f, -0.5f}, {2, 3});
  CHECK(F::relu(x).to_vector() == relu(x).to_vector());
  CHECK(allclose(F::log_softmax(x, F::LogSoftmaxFuncOptions(1)), log_softmax(x, 1)));
  CHECK(allclose(F::softmax(x, F::SoftmaxFuncOptions(0)), softmax(x, 0)));
  CHECK(allclose(F::softmax(x, 1), softmax(x, 1)));
  CHECK(allclose(F::gelu(x, F::GELUFuncOptions().approximate("tanh")), gelu(x, "tanh")));
  CHECK(allclose(F::elu(x, F::ELUFuncOptions().alpha(0.5)), elu(x, 0.5)));
  CHECK(allclose(F::dropout(x, F::DropoutFuncOptions().p(0.3).training(false)), x));
  CHECK(F::dropout(ones({1000}), F::DropoutFuncOptions().p(0.5)).eq(0).sum().item() > 300);  // training by default
  Tensor w = randn({4, 3});
  CHECK(allclose(F::linear(x, w), matmul(x, w.t())));
  CHECK(allclose(F::embedding(IndexTensor({3, 0}), w), stack({w[3], w[0]})));
  CHECK(allclose(F::layer_norm(x, F::LayerNormFuncOptions({3}).eps(1e-5)), layer_norm(x, {3})));
  CHECK(allclose(F::normalize(x, F::NormalizeFuncOptions().p(1).dim(0)), normalize(x, 1, 0)));
  CHECK(F::cross_entropy(x, IndexTensor({2, 0}), F::CrossEntropyFuncOptions()).item() > 0);
  // inplace, as libtorch: the result is written into x's storage
  Tensor z = x.clone();
  F::relu(z, F::ReLUFuncOptions(true));
  CHECK(z.to_vector() == relu(x).to_vector());
  Tensor p = randn({3}).requires_grad_();
  CHECK(contains(error_of([&] { F::relu(p, F::ReLUFuncOptions().inplace(true)); }), "copy_"));
  CHECK(contains(error_of([&] { F::log_softmax(x, F::LogSoftmaxFuncOptions(2)); }), "out of range"));
}

TEST_CASE("port: nn::utils::clip_grad_norm_ returns the total norm, as libtorch") {
  nn::Linear fc(2, 1);
  for (Tensor& p : fc->parameters()) p.set_grad(full(p.shape(), 3));  // 3 gradients of 3: norm sqrt(27)
  const double total = nn::utils::clip_grad_norm_(fc->parameters(), 1.0);
  CHECK(total == doctest::Approx(std::sqrt(27.0)));
  double after = 0;
  for (const Tensor& p : fc->parameters()) after += (p.grad() * p.grad()).sum().item();
  CHECK(std::sqrt(after) == doctest::Approx(1.0).epsilon(1e-4));
  Tensor one = zeros({2}).requires_grad_();
  one.set_grad(from_vector({3, 4}, {2}));
  CHECK(nn::utils::clip_grad_norm_(one, 10.0) == doctest::Approx(5));
  nn::utils::clip_grad_value_(one, 3.5);
  CHECK(one.grad().to_vector() == std::vector<real>{3, 3.5});
}

// ---------------------------------------------------------------- grad_fn names

TEST_CASE("port: grad_fn()->name() prints libtorch's node names; op_name() keeps heed's") {
  Tensor a = randn({2, 3}).requires_grad_(), b = randn({2, 3}).requires_grad_();
  const std::vector<std::pair<std::string, Tensor>> cases = {
      {"AddBackward0", a + b},
      {"MulBackward0", a * b},
      {"SubBackward0", a - b},
      {"DivBackward0", a / b},
      {"MeanBackward0", a.mean()},
      {"SumBackward0", a.sum()},
      {"TanhBackward0", a.tanh()},
      {"ReluBackward0", relu(a)},
      {"LogSoftmaxBackward0", a.log_softmax(1)},
      {"ViewBackward0", a.reshape({3, 2})},
      {"TransposeBackward0", a.transpose(0, 1)},
      {"SelectBackward0", a.select(0, 1)},
      {"SliceBackward0", a.narrow(1, 0, 2)},
      {"RsubBackward1", 1 - a},
      {"MmBackward0", matmul(a, b.t())},
      {"TBackward0", a.t()},
      {"PowBackward0", a.pow(2)},
      {"NllLossBackward0", nn::functional::cross_entropy(a, IndexTensor({0, 2}))},
  };
  for (const auto& [name, t] : cases) {
    INFO(name, " <- ", t.grad_fn()->op_name());
    CHECK(t.grad_fn()->name() == name);
  }
  CHECK(std::string((a + b).grad_fn()->op_name()) == "add");  // errors, to_dot, anomaly
  CHECK(libtorch_node_name("flash_attention") == "FlashAttentionBackward0");  // heed's own op
  CHECK(libtorch_node_name("AccumulateGrad") == "torch::autograd::AccumulateGrad");
}

// test_libtorch_port_compat.cpp - <heed/layers/torch_compat.h>: a module written with
// libtorch's own spellings (torch::, TORCH_MODULE, TORCH_ARG, TORCH_CHECK) compiles and
// trains unchanged, and the umbrella header alone does not define them; a custom dataset
// as libtorch's (torch::optional size(), torch::tensor(label) targets) loads in batches;
// nn::Functional steps in a SequentialImpl subclass (pytorch/examples' custom-dataset),
// torch::save / torch::load of a model and an optimizer, AT_ASSERT.
#include <heed/heed.h>

#ifdef TORCH_MODULE
#error "<heed/heed.h> must not define TORCH_MODULE: it is opt-in (layers/torch_compat.h)"
#endif

#include <heed/layers/torch_compat.h>
#include <cmath>
#include <optional>
#include <sstream>
#include <type_traits>
#include <vector>
#include "helpers.h"
#include "tmp_files.h"

namespace {

struct NetOptions {
  NetOptions(int64_t in) : in_(in) {}
  TORCH_ARG(int64_t, in);
  TORCH_ARG(int64_t, hidden) = 8;
};

// As a libtorch tutorial writes it, torch:: and all.
struct NetImpl : torch::nn::Module {
  explicit NetImpl(const NetOptions& o)
      : fc1(register_module("fc1", torch::nn::Linear(o.in(), o.hidden()))),
        fc2(register_module("fc2", torch::nn::Linear(o.hidden(), 1))) {}
  torch::Tensor forward(torch::Tensor x) {
    TORCH_CHECK(x.dim() == 2, "Net expects (N, in), got ", x.dim(), " dims");
    return fc2(torch::relu(fc1(x)));
  }
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
};
TORCH_MODULE(Net);

// A custom dataset as a libtorch program writes one: images and integer labels, the label
// made with torch::tensor(int64_t) (an id, so the target type is IndexTensor).
class Digits : public torch::data::datasets::Dataset<Digits, torch::data::Example<torch::Tensor, torch::IndexTensor>> {
 public:
  explicit Digits(int64_t n) : images_(torch::randn({n, 1, 2, 2})), n_(n) {}
  ExampleType get(size_t index) override {
    const int64_t label = int64_t(index % 3);
    return {images_[int64_t(index)], torch::tensor(label)};
  }
  torch::optional<size_t> size() const override { return size_t(n_); }

 private:
  torch::Tensor images_;
  int64_t n_;
};

// As pytorch/examples' custom-dataset builds its network: a SequentialImpl subclass with
// Functional steps (its convolutions left out).
struct NetworkImpl : torch::nn::SequentialImpl {
  NetworkImpl() {
    using namespace torch::nn;
    push_back(Functional(torch::reshape, heed::Shape{-1, 12}));
    push_back(Linear(12, 8));
    push_back(Functional(torch::relu));
    push_back(Linear(8, 3));
    push_back(Functional([](torch::Tensor input) { return torch::log_softmax(input, 1); }));
  }
};
TORCH_MODULE(Network);

}  // namespace

TEST_CASE("port: nn::Functional(torch::relu), Functional(torch::reshape, shape) and a lambda as steps") {
  torch::manual_seed(2);
  Network network;
  CHECK(network->size() == 5);
  CHECK(network->parameters().size() == 4);  // the two Linears'
  torch::Tensor x = torch::randn({4, 3, 4});
  auto* fc1 = static_cast<torch::nn::LinearImpl*>((*network)[1].get());
  auto* fc2 = static_cast<torch::nn::LinearImpl*>((*network)[3].get());
  torch::Tensor want = torch::log_softmax(fc2->forward(torch::relu(fc1->forward(x.reshape({-1, 12})))), 1);
  torch::Tensor out = network->forward(x);
  CHECK(out.shape() == heed::Shape{4, 3});
  CHECK(heed::test::allclose(out, want));
  torch::Tensor loss = torch::nll_loss(out, torch::IndexTensor({0, 1, 2, 0}));
  loss.backward();
  CHECK(fc1->weight.grad().defined());
  torch::nn::Functional f(torch::relu);
  CHECK(f(torch::tensor({-1.0, 2.0})).to_vector() == std::vector<heed::real>{0, 2});
  CHECK(f->repr() == "Functional()");
  std::ostringstream printed;
  printed << network;
  CHECK(printed.str() == network->summary());
  CHECK(printed.str().find("Functional()") != std::string::npos);
  auto copy = network->clone();  // each step copied, the Functionals' functions too
  CHECK(heed::test::allclose(copy->forward(x), out));
}

TEST_CASE("port: torch::save / torch::load of a model and of an optimizer") {
  torch::manual_seed(4);
  heed::test::TmpDir tmp;
  const std::string dir = tmp.dir.string();
  Net net(NetOptions(3));
  torch::optim::Adam opt(net->parameters(), torch::optim::AdamOptions(1e-2));
  torch::Tensor x = torch::randn({8, 3});
  for (int i = 0; i < 2; ++i) {
    opt.zero_grad();
    net(x).pow(2).mean().backward();
    opt.step();
  }
  torch::save(net, dir + "/model.pt");
  torch::save(opt, dir + "/optimizer.pt");

  Net other(NetOptions(3));
  torch::optim::Adam other_opt(other->parameters(), torch::optim::AdamOptions(1e-2));
  CHECK_FALSE(heed::test::allclose(other(x), net(x)));
  torch::load(other, dir + "/model.pt");
  torch::load(other_opt, dir + "/optimizer.pt");
  CHECK(other(x).to_vector() == net(x).to_vector());
  CHECK(other_opt.step_count() == 2);
  const auto a = opt.state(), b = other_opt.state();
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) CHECK(a[i].second.to_vector() == b[i].second.to_vector());
  // the same next step from both
  for (auto* o : {&opt, &other_opt}) o->zero_grad();
  net(x).pow(2).mean().backward();
  other(x).pow(2).mean().backward();
  opt.step();
  other_opt.step();
  CHECK(other->fc1->weight.to_vector() == net->fc1->weight.to_vector());

  CHECK(heed::test::error_of([&] { torch::load(other_opt, dir + "/model.pt"); }).find("holds no optimizer state") !=
        std::string::npos);
  Net wider(NetOptions(3).hidden(9));
  CHECK(heed::test::error_of([&] { torch::load(wider, dir + "/model.pt"); }).find("fc1.weight") != std::string::npos);
}

TEST_CASE("port: a custom Dataset<Self, Example<Tensor, IndexTensor>> with torch::optional size()") {
  static_assert(std::is_same_v<torch::optional<size_t>, std::optional<size_t>>);
  static_assert(std::is_same_v<c10::optional<int>, std::optional<int>>);
  auto ds = Digits(6).map(torch::data::transforms::Stack<>());
  CHECK(ds.size() == torch::optional<size_t>(6));
  auto loader = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(std::move(ds), 4);
  std::vector<int64_t> labels;
  for (auto& batch : *loader) {
    CHECK(batch.data.size(1) == 1);
    for (int64_t i = 0; i < batch.target.numel(); ++i) labels.push_back(batch.target[i]);
    torch::Tensor loss = torch::nn::functional::cross_entropy(batch.data.reshape({-1, 4}).narrow(1, 0, 3), batch.target);
    CHECK(std::isfinite(loss.item<double>()));
  }
  CHECK(labels == std::vector<int64_t>{0, 1, 2, 0, 1, 2});
}

TEST_CASE("port: TORCH_MODULE, TORCH_ARG, TORCH_CHECK and torch:: through torch_compat.h") {
  torch::manual_seed(5);
  Net net(NetOptions(3).hidden(16));
  CHECK(net->fc1->weight.shape() == heed::Shape{16, 3});
  torch::optim::SGD opt(net->parameters(), torch::optim::SGDOptions(0.1));
  torch::Tensor x = torch::randn({32, 3}), y = x.sum(1, true);
  double first = 0, last = 0;
  for (int step = 0; step < 50; ++step) {
    opt.zero_grad();
    torch::Tensor loss = torch::nn::functional::mse_loss(net(x), y);
    loss.backward();
    opt.step();
    (step == 0 ? first : last) = loss.item<double>();
  }
  CHECK(last < first * 0.5);
  const std::string e = heed::test::error_of([&] { net(torch::randn({3})); });
  CHECK(e.find("TORCH_CHECK: Expected x.dim() == 2 to be true, but got false. Net expects (N, in), got 1 dims") !=
        std::string::npos);
  CHECK(heed::test::error_of([] { TORCH_CHECK(1 + 1 == 3); }).find("Expected 1 + 1 == 3 to be true") != std::string::npos);
  CHECK(heed::test::error_of([] { AT_ASSERT(2 < 1); }).find("AT_ASSERT: Expected 2 < 1 to be true, but got false.") !=
        std::string::npos);
  AT_ASSERT(!std::isnan(1.0));  // passes
}

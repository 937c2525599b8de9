// test_libtorch_port_compat.cpp - <heed/layers/torch_compat.h>: a module written with
// libtorch's own spellings (torch::, TORCH_MODULE, TORCH_ARG, TORCH_CHECK) compiles and
// trains unchanged, and the umbrella header alone does not define them; a custom dataset
// as libtorch's (torch::optional size(), torch::tensor(label) targets) loads in batches.
#include <heed/heed.h>

#ifdef TORCH_MODULE
#error "<heed/heed.h> must not define TORCH_MODULE: it is opt-in (layers/torch_compat.h)"
#endif

#include <heed/layers/torch_compat.h>
#include <cmath>
#include <optional>
#include <type_traits>
#include <vector>
#include "helpers.h"

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

}  // namespace

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
}

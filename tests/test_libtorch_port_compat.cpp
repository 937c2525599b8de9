// test_libtorch_port_compat.cpp - <heed/layers/torch_compat.h>: a module written with
// libtorch's own spellings (torch::, TORCH_MODULE, TORCH_ARG, TORCH_CHECK) compiles and
// trains unchanged, and the umbrella header alone does not define them.
#include <heed/heed.h>

#ifdef TORCH_MODULE
#error "<heed/heed.h> must not define TORCH_MODULE: it is opt-in (layers/torch_compat.h)"
#endif

#include <heed/layers/torch_compat.h>
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

}  // namespace

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

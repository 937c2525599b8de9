// app.cpp - the install check's consumer program (tests/install/rules.mk): built against a
// scratch install with pkg-config and as the CMake project beside it. It runs a backward pass
// and prints heed::version(), which the check compares with core/version.h's. It includes the
// opt-in <heed/layers/torch_compat.h> too, installed though kept out of the umbrella.
#include <heed/heed.h>
#include <heed/layers/torch_compat.h>
#include <cstdio>

int main() {
  heed::Tensor x = heed::ones({2, 3}).requires_grad_();
  heed::Tensor y = heed::sum(heed::matmul(x, heed::ones({3, 2})));
  y.backward();
  TORCH_CHECK(torch::zeros({1}).numel() == 1, "torch_compat.h");
  std::printf("%s\n", heed::version());
  return x.grad().at({1, 2}) == 2 ? 0 : 1;
}

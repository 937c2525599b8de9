// demo.cpp - `make demo`: fit y = exp(-4x^2) with a small MLP. Shapes: N samples.
#include <heed/heed.h>

#include <cstdio>

using namespace heed;

int main() {
  manual_seed(0);
  Tensor x = rand({256, 1}) * 4 - 2;  // (N, 1) inputs in [-2, 2)
  Tensor y = exp(-4 * x * x);         // (N, 1) the bump to learn
  auto model = std::make_shared<nn::Sequential>(std::make_shared<nn::Linear>(1, 32),
                                                std::make_shared<nn::Tanh>(),
                                                std::make_shared<nn::Linear>(32, 1));
  optim::Adam opt(model->parameters(), optim::AdamOptions(1e-2));
  for (int step = 0; step <= 1000; ++step) {
    Tensor loss = nn::functional::mse_loss(model->forward(x), y);
    opt.zero_grad();
    loss.backward();
    opt.step();
    if (step % 100 == 0) std::printf("step %4d  loss %.6f\n", step, double(loss.item()));
  }
}

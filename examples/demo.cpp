// demo.cpp - `make demo`: fit y = exp(-4x^2) with a two-layer MLP built from raw tensors.
// Shapes: N samples, H hidden units.
#include <heed/core/heed.h>

#include <cstdio>

using namespace heed;

int main() {
  manual_seed(0);
  Tensor x = rand({256, 1}) * 4 - 2;                  // (N, 1) in [-2, 2)
  Tensor y = exp(-4 * x * x);                         // (N, 1) the bump to learn
  Tensor w1 = randn({1, 32}).requires_grad_();        // (1, H)
  Tensor b1 = zeros({32}).requires_grad_();           // (H)
  Tensor w2 = randn({32, 1}).mul_(0.2).requires_grad_();  // (H, 1)
  Tensor b2 = zeros({1}).requires_grad_();            // (1)
  const real lr = 0.1;
  for (int step = 0; step <= 3000; ++step) {
    Tensor h = tanh(matmul(x, w1) + b1);              // (N, H)
    Tensor loss = mean(pow(matmul(h, w2) + b2 - y, 2));
    for (Tensor* p : {&w1, &b1, &w2, &b2}) p->zero_grad();
    loss.backward();
    NoGradGuard no_grad;                              // plain SGD, not recorded
    for (Tensor* p : {&w1, &b1, &w2, &b2}) p->add_(p->grad(), -lr);
    if (step % 500 == 0) std::printf("step %4d  loss %.5f\n", step, double(loss.item()));
  }
}

// init.h - parameter initialisers, as torch.nn.init (in place, not recorded, seeded by
// heed::manual_seed). Each takes the tensor by value, as libtorch (a copy is a handle to the
// same storage, so `for (const auto& p : model->parameters()) xavier_uniform_(p);` writes
// the parameters), and returns it. fan_in / fan_out of a (out, in, ...) weight are in * receptive
// field and out * receptive field, as PyTorch computes them.
//
//   xavier_uniform_(w)   U(-a, a), a = gain * sqrt(6 / (fan_in + fan_out))     (Glorot 2010)
//   xavier_normal_(w)    N(0, std^2), std = gain * sqrt(2 / (fan_in + fan_out))
//   kaiming_uniform_(w)  U(-b, b), b = gain * sqrt(3 / fan), gain = calculate_gain(nonlinearity, a)
//   kaiming_normal_(w)   N(0, std^2), std = gain / sqrt(fan)                     (He 2015)
//   orthogonal_(w)       rows (or columns) orthonormal, scaled by gain          (Saxe 2013)
//
// Bad arguments are heed::Errors naming the function and the value, as PyTorch's: std < 0 or
// NaN, a > b, a bound a float cannot hold, a negative or NaN gain. heed also refuses a
// non-finite mean, std, gain or leaky_relu slope, which PyTorch turns into Inf/NaN weights.
#pragma once
#include <string>

#include "../core/tensor.h"

namespace heed::nn::init {

double calculate_gain(const std::string& nonlinearity, double param = 0.01);
// {fan_in, fan_out} of a weight of rank >= 2 (heed::Error for rank < 2).
std::pair<int64_t, int64_t> fans(const Tensor& w);

Tensor uniform_(Tensor t, double a = 0, double b = 1);
Tensor normal_(Tensor t, double mean = 0, double std = 1);
Tensor constant_(Tensor t, double value);
Tensor zeros_(Tensor t);
Tensor ones_(Tensor t);
Tensor xavier_uniform_(Tensor t, double gain = 1);
Tensor xavier_normal_(Tensor t, double gain = 1);
// mode: "fan_in" or "fan_out"; nonlinearity: "leaky_relu" (with slope a), "relu", "linear", "tanh", ...
Tensor kaiming_uniform_(Tensor t, double a = 0, const std::string& mode = "fan_in",
                         const std::string& nonlinearity = "leaky_relu");
Tensor kaiming_normal_(Tensor t, double a = 0, const std::string& mode = "fan_in",
                        const std::string& nonlinearity = "leaky_relu");
Tensor orthogonal_(Tensor t, double gain = 1);

}  // namespace heed::nn::init

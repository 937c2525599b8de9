// arg.h - HEED_ARG(type, name): one option of an options class in one line, as libtorch's
// TORCH_ARG (torch/csrc/api/include/torch/arg.h). The option's default follows the macro:
//
//   class LSTMOptions {
//    public:
//     LSTMOptions(int64_t input_size, int64_t hidden_size);   // required arguments stay
//     HEED_ARG(int64_t, num_layers) = 1;
//   };
//   nn::LSTMOptions(64, 128).num_layers(2).bidirectional(true)   // chained, on a temporary
//   opts.num_layers()                                           // read
//
// HEED_ARG(int64_t, num_layers) = 1;  expands to exactly
//
//   auto num_layers(const int64_t& new_num_layers) -> decltype(*this) {
//     this->num_layers_ = new_num_layers;
//     return *this;
//   }
//   const int64_t& num_layers() const { return this->num_layers_; }
//   int64_t num_layers_ = 1;
//
// The setter returns the class the line is written in, by reference (decltype(*this) is
// `LSTMOptions&` there), so chains keep their type. The macro holds no access specifier:
// write the lines under `public:`; the member `num_layers_` is then public too, as a
// struct's field (read the getter; set through the setter). A type with a comma in it
// (std::pair<double, double>) goes through a `using` alias first. The setter stores the
// value as given; what is out of range is a heed::Error where the options are consumed
// (the module's, function's or optimizer's constructor), naming the op and the value.
#pragma once

#define HEED_ARG(T, name)                                   \
  auto name(const T& new_##name)->decltype(*this) {         \
    this->name##_ = new_##name;                             \
    return *this;                                           \
  }                                                         \
  const T& name() const { return this->name##_; }           \
  T name##_

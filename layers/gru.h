// gru.h - nn::GRUCell and nn::GRU, as torch::nn::GRUCell and torch::nn::GRU.
//
//   r = sigmoid(x W_ir^T + b_ir + h W_hr^T + b_hr)         reset gate
//   z = sigmoid(x W_iz^T + b_iz + h W_hz^T + b_hz)         update gate
//   n = tanh   (x W_in^T + b_in + r * (h W_hn^T + b_hn))   candidate
//   h' = (1 - z) * n + z * h
// (Cho et al. 2014, "Learning Phrase Representations using RNN Encoder-Decoder".)
// The step is composed from heed ops (two heed::linear, narrow, sigmoid, tanh, mul, add),
// so its backward is theirs; there is no fused GRU op. nn::GRU projects the input of every
// step at once (one heed::linear over (B, T, In)) and runs only the recurrent half per step.
//
// Parameters have PyTorch's names, shapes and gate order [r | z | n]:
//   weight_ih_l{k}  (3H, In_k)   weight_hh_l{k}  (3H, H)   bias_ih_l{k}, bias_hh_l{k}  (3H)
//   and the suffix _reverse for the backward direction; all start U(-1/sqrt(H), 1/sqrt(H)).
// Options, batch_first (true by default in heed, false in PyTorch), lengths and padding
// masks behave exactly as nn::LSTM's (layers/lstm.h); the state is h alone.
//
// Example:
//   auto gru = std::make_shared<nn::GRU>(nn::GRUOptions(64, 128).num_layers(2));
//   auto [out, h_n] = gru->forward(x);                  // x (B, T, 64) -> out (B, T, 128)
//   auto cell = std::make_shared<nn::GRUCell>(64, 128);
//   h = cell->forward(x_t, h);                           // (B, 64), (B, 128) -> (B, 128)
#pragma once
#include <optional>
#include <vector>

#include "module.h"

namespace heed::nn {

class GRUCellOptions {
 public:
  GRUCellOptions(int64_t input_size, int64_t hidden_size)
      : input_size_(input_size), hidden_size_(hidden_size) {}
  GRUCellOptions& input_size(int64_t v) { input_size_ = v; return *this; }
  GRUCellOptions& hidden_size(int64_t v) { hidden_size_ = v; return *this; }
  GRUCellOptions& bias(bool on) { bias_ = on; return *this; }
  int64_t input_size() const { return input_size_; }
  int64_t hidden_size() const { return hidden_size_; }
  bool bias() const { return bias_; }

 private:
  int64_t input_size_, hidden_size_;
  bool bias_ = true;
};

// One step: x (B, In), h (B, H) (zeros when not given) -> h' (B, H).
class GRUCell : public Module {
 public:
  explicit GRUCell(const GRUCellOptions& options);
  GRUCell(int64_t input_size, int64_t hidden_size)
      : GRUCell(GRUCellOptions(input_size, hidden_size)) {}

  // heed::Error naming GRUCell if x is not (B, input_size) or h is not (B, hidden_size).
  Tensor forward(const Tensor& x, const Tensor& h);
  Tensor forward(const Tensor& x) { return forward(x, Tensor()); }
  std::string repr() const override;  // GRUCell(4, 8) or GRUCell(4, 8, bias=False)
  void reset_parameters();            // every parameter U(-1/sqrt(H), 1/sqrt(H))

  GRUCellOptions options;
  Tensor weight_ih;  // (3H, In)
  Tensor weight_hh;  // (3H, H)
  Tensor bias_ih;    // (3H), undefined without bias
  Tensor bias_hh;    // (3H), undefined without bias
};

class GRUOptions {
 public:
  GRUOptions(int64_t input_size, int64_t hidden_size)
      : input_size_(input_size), hidden_size_(hidden_size) {}
  GRUOptions& input_size(int64_t v) { input_size_ = v; return *this; }
  GRUOptions& hidden_size(int64_t v) { hidden_size_ = v; return *this; }
  GRUOptions& num_layers(int64_t v) { num_layers_ = v; return *this; }
  GRUOptions& bias(bool on) { bias_ = on; return *this; }
  // true (heed's default): x is (B, T, In). false (PyTorch's default): x is (T, B, In).
  GRUOptions& batch_first(bool on) { batch_first_ = on; return *this; }
  // Dropout on each layer's output except the last's, in training mode only.
  GRUOptions& dropout(double p) { dropout_ = p; return *this; }
  GRUOptions& bidirectional(bool on) { bidirectional_ = on; return *this; }
  int64_t input_size() const { return input_size_; }
  int64_t hidden_size() const { return hidden_size_; }
  int64_t num_layers() const { return num_layers_; }
  bool bias() const { return bias_; }
  bool batch_first() const { return batch_first_; }
  double dropout() const { return dropout_; }
  bool bidirectional() const { return bidirectional_; }

 private:
  int64_t input_size_, hidden_size_, num_layers_ = 1;
  bool bias_ = true, batch_first_ = true;
  double dropout_ = 0;
  bool bidirectional_ = false;
};

// What GRU::forward returns:  auto [out, h_n] = gru->forward(x);
struct GRUOutput {
  Tensor output;  // (B, T, dirs * H): the last layer's h at every step, 0 at padded steps
  Tensor h_n;     // (num_layers * dirs, B, H): h after each sequence's last valid step
};

class GRU : public Module {
 public:
  explicit GRU(const GRUOptions& options);
  GRU(int64_t input_size, int64_t hidden_size) : GRU(GRUOptions(input_size, hidden_size)) {}

  // x (B, T, In); h0 (num_layers * dirs, B, H) or undefined for zeros; lengths as nn::LSTM.
  GRUOutput forward(const Tensor& x, const Tensor& h0 = Tensor(),
                    const std::vector<int64_t>& lengths = {});
  // With a (B, T) padding mask (nonzero at valid steps, right-padded) instead of lengths.
  GRUOutput forward(const Tensor& x, const Tensor& h0, const Tensor& padding_mask);
  std::string repr() const override;  // GRU(4, 8, num_layers=2, batch_first=True, ...)
  void reset_parameters();            // every parameter U(-1/sqrt(H), 1/sqrt(H))

  GRUOptions options;
  // Indexed [layer * dirs + direction] (direction 1 is _reverse); biases undefined without bias.
  std::vector<Tensor> weight_ih, weight_hh, bias_ih, bias_hh;
};

}  // namespace heed::nn

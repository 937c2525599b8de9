// recurrent_base.h - what nn::LSTM and nn::GRU (and their cells) share, written once, as
// libtorch's RNNOptionsBase / RNNImplBase:
//   RecurrentCellOptions, RecurrentOptions   the options; LSTMCellOptions, GRUCellOptions,
//                                            LSTMOptions and GRUOptions derive from them
//   RecurrentCellBase, RecurrentBase         the parameters, PyTorch's names and init
// Each setter returns the derived type (`Self`), so chains keep their type:
//   nn::LSTMOptions(64, 128).num_layers(2).bidirectional(true)   // an LSTMOptions&
// A model gates' worth of rows per weight: G = 4 for an LSTM ([i | f | g | o]), 3 for a GRU
// ([r | z | n]); H hidden size, In input size.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "module.h"

namespace heed::nn::detail {

// input_size, hidden_size, bias: what one step needs.
template <class Self>
class RecurrentCellOptions {
 public:
  RecurrentCellOptions(int64_t input_size, int64_t hidden_size)
      : input_size_(input_size), hidden_size_(hidden_size) {}
  Self& input_size(int64_t v) { input_size_ = v; return self(); }
  Self& hidden_size(int64_t v) { hidden_size_ = v; return self(); }
  Self& bias(bool on) { bias_ = on; return self(); }
  int64_t input_size() const { return input_size_; }
  int64_t hidden_size() const { return hidden_size_; }
  bool bias() const { return bias_; }

 protected:
  Self& self() { return static_cast<Self&>(*this); }

 private:
  int64_t input_size_, hidden_size_;
  bool bias_ = true;
};

// The cell's options and what a layer over a whole sequence adds.
template <class Self>
class RecurrentOptions : public RecurrentCellOptions<Self> {
 public:
  using RecurrentCellOptions<Self>::RecurrentCellOptions;
  Self& num_layers(int64_t v) { num_layers_ = v; return this->self(); }
  // true (heed's default): x is (B, T, In). false (PyTorch's default): x is (T, B, In).
  Self& batch_first(bool on) { batch_first_ = on; return this->self(); }
  // Dropout on each layer's output except the last's, in training mode only.
  Self& dropout(double p) { dropout_ = p; return this->self(); }
  Self& bidirectional(bool on) { bidirectional_ = on; return this->self(); }
  int64_t num_layers() const { return num_layers_; }
  bool batch_first() const { return batch_first_; }
  double dropout() const { return dropout_; }
  bool bidirectional() const { return bidirectional_; }

 private:
  int64_t num_layers_ = 1;
  bool batch_first_ = true;
  double dropout_ = 0;
  bool bidirectional_ = false;
};

// The parameters of one cell, registered in PyTorch's order and initialised as PyTorch's
// (every one U(-1/sqrt(H), 1/sqrt(H))).
class RecurrentCellBase : public Module {
 public:
  void reset_parameters();  // every parameter U(-1/sqrt(H), 1/sqrt(H))

  Tensor weight_ih;  // (G*H, In)
  Tensor weight_hh;  // (G*H, H)
  Tensor bias_ih;    // (G*H), undefined without bias
  Tensor bias_hh;    // (G*H), undefined without bias

 protected:
  // heed::Error naming `op` unless both sizes are > 0.
  RecurrentCellBase(const char* op, int64_t gates, int64_t input_size, int64_t hidden_size,
                    bool bias);
  // "LSTMCell(4, 8)" or "LSTMCell(4, 8, bias=False)", as PyTorch prints a cell.
  std::string cell_repr(const char* name) const;

 private:
  int64_t input_size_, hidden_size_;
  bool bias_;
};

// The parameters of every layer and direction, named weight_ih_l{k}, weight_hh_l{k},
// bias_ih_l{k}, bias_hh_l{k} (suffix _reverse for direction 1), registered in PyTorch's
// order; layer k >= 1 reads the previous layer's (B, T, dirs * H) output, so In_k = dirs * H.
class RecurrentBase : public Module {
 public:
  void reset_parameters();  // every parameter U(-1/sqrt(H), 1/sqrt(H))

  // Indexed [layer * dirs + direction] (direction 1 is _reverse); biases undefined without bias.
  std::vector<Tensor> weight_ih;  // each (G*H, In_k)
  std::vector<Tensor> weight_hh;  // each (G*H, H)
  std::vector<Tensor> bias_ih, bias_hh;  // each (G*H)

 protected:
  // heed::Error naming `op` unless sizes > 0, num_layers >= 1 and dropout in [0, 1).
  template <class Self>
  RecurrentBase(const char* op, int64_t gates, const RecurrentOptions<Self>& o)
      : RecurrentBase(op, gates, o.input_size(), o.hidden_size(), o.num_layers(),
                      o.bidirectional(), o.bias(), o.dropout()) {}

 private:
  RecurrentBase(const char* op, int64_t gates, int64_t input_size, int64_t hidden_size,
                int64_t num_layers, bool bidirectional, bool bias, double dropout);
  int64_t hidden_size_;
};

}  // namespace heed::nn::detail

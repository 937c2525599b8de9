// recurrent_base.h - what nn::LSTM and nn::GRU (and their cells) share, written once, as
// libtorch's RNNOptionsBase / RNNImplBase:
//   RecurrentCellOptions, RecurrentOptions   the options; LSTMCellOptions, GRUCellOptions,
//                                            LSTMOptions and GRUOptions are instances of them
//   RecurrentCellBase, RecurrentBase         the parameters, PyTorch's names and init
// Each is a template over the module it is for, so a chain keeps its type:
//   nn::LSTMOptions(64, 128).num_layers(2).bidirectional(true)   // an LSTMOptions&
// A model gates' worth of rows per weight: G = 4 for an LSTM ([i | f | g | o]), 3 for a GRU
// ([r | z | n]); H hidden size, In input size.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "module.h"

namespace heed::nn::detail {

// input_size, hidden_size, bias: what one step needs. `Target` is the module the options
// are for (LSTMCell, GRUCell): it makes LSTMCellOptions and GRUCellOptions two types.
template <class Target>
class RecurrentCellOptions {
 public:
  RecurrentCellOptions(int64_t input_size, int64_t hidden_size)
      : input_size_(input_size), hidden_size_(hidden_size) {}
  HEED_ARG(int64_t, input_size);
  HEED_ARG(int64_t, hidden_size);
  HEED_ARG(bool, bias) = true;
};

// The cell's options and what a layer over a whole sequence adds (`Target`: LSTM, GRU).
template <class Target>
class RecurrentOptions {
 public:
  RecurrentOptions(int64_t input_size, int64_t hidden_size)
      : input_size_(input_size), hidden_size_(hidden_size) {}
  HEED_ARG(int64_t, input_size);
  HEED_ARG(int64_t, hidden_size);
  HEED_ARG(bool, bias) = true;
  HEED_ARG(int64_t, num_layers) = 1;
  // true (heed's default): x is (B, T, In). false (PyTorch's default): x is (T, B, In).
  HEED_ARG(bool, batch_first) = true;
  // Dropout on each layer's output except the last's, in training mode only.
  HEED_ARG(double, dropout) = 0;
  HEED_ARG(bool, bidirectional) = false;
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
  template <class M>
  RecurrentBase(const char* op, int64_t gates, const RecurrentOptions<M>& o)
      : RecurrentBase(op, gates, o.input_size(), o.hidden_size(), o.num_layers(),
                      o.bidirectional(), o.bias(), o.dropout()) {}

 private:
  RecurrentBase(const char* op, int64_t gates, int64_t input_size, int64_t hidden_size,
                int64_t num_layers, bool bidirectional, bool bias, double dropout);
  int64_t hidden_size_;
};

// ---- construction, shared by the recurrent layers and cells ----

// heed::Error naming `op` unless sizes > 0, num_layers >= 1 and dropout in [0, 1).
void check_options(const char* op, int64_t input_size, int64_t hidden_size, int64_t num_layers = 1,
                   double dropout = 0);
// PyTorch's RNNBase.reset_parameters: every parameter U(-k, k), k = 1/sqrt(hidden_size).
void init_uniform(const std::vector<Tensor>& params, int64_t hidden_size);

}  // namespace heed::nn::detail

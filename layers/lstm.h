// lstm.h - nn::LSTMCell and nn::LSTM, as torch::nn::LSTMCell and torch::nn::LSTM.
//
//   i = sigmoid(x W_ii^T + b_ii + h W_hi^T + b_hi)     input gate
//   f = sigmoid(x W_if^T + b_if + h W_hf^T + b_hf)     forget gate
//   g = tanh   (x W_ig^T + b_ig + h W_hg^T + b_hg)     candidate cell
//   o = sigmoid(x W_io^T + b_io + h W_ho^T + b_ho)     output gate
//   c' = f * c + i * g          h' = o * tanh(c')
// (Hochreiter & Schmidhuber 1997, "Long Short-Term Memory"; the forget gate is Gers et
// al. 2000.) LSTMCell's step is one fused op, heed::lstm_cell (autograd/ops/lstm_cell.h); each
// direction of each LSTM layer is one fused op over the whole sequence, heed::lstm_layer
// (autograd/ops/lstm_layer.h: the input projection of every step as one GEMM).
//
// Parameters have PyTorch's names, shapes and gate order [i | f | g | o], so a state dict
// copies over one to one; layer k >= 1 reads the previous layer's (B, T, dirs * H) output:
//   weight_ih_l{k}  (4H, In_k)   weight_hh_l{k}  (4H, H)   bias_ih_l{k}, bias_hh_l{k}  (4H)
//   and the same with the suffix _reverse for the backward direction.
// All start as U(-1/sqrt(H), 1/sqrt(H)), as PyTorch.
//
// heed is batch-first: LSTMOptions::batch_first defaults to true, so x is (B, T, In).
// PyTorch's default is batch_first=False; batch_first(false) takes (T, B, In) as it does.
// h0/c0 and h_n/c_n are (num_layers * dirs, B, H) either way, as in PyTorch.
//
// Example (PyTorch's nn.LSTM(emb, hid, batch_first=True, bidirectional=True) and
// nn.LSTMCell(in, hid)):
//   auto lstm = nn::LSTM(nn::LSTMOptions(64, 128).bidirectional(true));
//   auto [out, h_n, c_n] = lstm->forward(x, {}, lengths);  // x (B, T, 64) -> out (B, T, 256)
//   auto cell = nn::LSTMCell(nn::LSTMCellOptions(64, 128));
//   std::tie(h, c) = cell->forward(x_t, std::make_tuple(h, c));
#pragma once
#include <cstddef>
#include <optional>
#include <type_traits>
#include <tuple>
#include <vector>

#include "recurrent_base.h"

namespace heed::nn {

class LSTMCell;
class LSTM;
// input_size, hidden_size, bias (layers/recurrent_base.h).
using LSTMCellOptions = detail::RecurrentCellOptions<LSTMCell>;

// One step: x (B, In), (h, c) each (B, H) -> (h', c'), zeros when no state is given.
class LSTMCellImpl : public Cloneable<LSTMCellImpl, detail::RecurrentCellBase> {
 public:
  explicit LSTMCellImpl(const LSTMCellOptions& options);
  LSTMCellImpl(int64_t input_size, int64_t hidden_size)
      : LSTMCellImpl(LSTMCellOptions(input_size, hidden_size)) {}

  // heed::Error naming LSTMCell if x is not (B, input_size) or h, c are not (B, hidden_size).
  std::tuple<Tensor, Tensor> forward(const Tensor& x,
                                     const std::optional<std::tuple<Tensor, Tensor>>& hx = {});
  std::string repr() const override;  // LSTMCell(4, 8) or LSTMCell(4, 8, bias=False)

  LSTMCellOptions options;
  // weight_ih (4H, In), weight_hh (4H, H), bias_ih, bias_hh (4H): RecurrentCellBase's.
};
HEED_MODULE(LSTMCell);

// The cell's options and num_layers, batch_first, dropout, bidirectional
// (layers/recurrent_base.h).
using LSTMOptions = detail::RecurrentOptions<LSTM>;

// What LSTM::forward returns: libtorch's std::tuple<Tensor, std::tuple<Tensor, Tensor>> (its
// base class), with names for its three tensors. Each of these spellings works:
//   auto [out, h_n, c_n] = lstm->forward(x);              // a binding sees three tensors
//   Tensor y = std::get<0>(lstm->forward(x));             // std::get sees libtorch's two
//   std::tuple<Tensor, std::tuple<Tensor, Tensor>> state;
//   std::tie(out, state) = lstm->forward(x);              // state = (h_n, c_n)
//   LSTMOutput r = lstm->forward(x);  r.output, r.h_n, r.c_n
// Copying copies the three handles (tensors share storage, as any Tensor copy), and the
// copy's names refer to its own elements. Nothing here throws.
struct LSTMOutput : std::tuple<Tensor, std::tuple<Tensor, Tensor>> {
  using Tuple = std::tuple<Tensor, std::tuple<Tensor, Tensor>>;
  LSTMOutput(Tensor output, Tensor h_n, Tensor c_n)
      : Tuple(std::move(output), std::make_tuple(std::move(h_n), std::move(c_n))) {}
  LSTMOutput() = default;  // three undefined tensors, filled by assignment
  LSTMOutput(const LSTMOutput& o) : Tuple(o) {}
  LSTMOutput& operator=(const LSTMOutput& o) {
    Tuple::operator=(o);
    return *this;
  }
  Tensor& output = std::get<0>(*this);            // (B, T, dirs * H): the last layer's h at
                                                  // every step, 0 at padded steps
  Tensor& h_n = std::get<0>(std::get<1>(*this));  // (num_layers * dirs, B, H): h after each
                                                  // sequence's last valid step
  Tensor& c_n = std::get<1>(std::get<1>(*this));  // (num_layers * dirs, B, H): c likewise
  // The structured binding's elements: output, h_n, c_n.
  template <std::size_t I>
  Tensor& get() const {
    static_assert(I < 3, "LSTMOutput has three tensors: output, h_n, c_n");
    return I == 0 ? output : I == 1 ? h_n : c_n;
  }
};

class LSTMImpl : public Cloneable<LSTMImpl, detail::RecurrentBase> {
 public:
  explicit LSTMImpl(const LSTMOptions& options);
  LSTMImpl(int64_t input_size, int64_t hidden_size) : LSTMImpl(LSTMOptions(input_size, hidden_size)) {}

  // x (B, T, In); hx = (h0, c0), each (num_layers * dirs, B, H), zeros when not given;
  // lengths: valid steps per sequence (each in [1, T]; the rest of the row is padding),
  // as pack_padded_sequence(x, lengths, enforce_sorted=False). Output positions past a
  // sequence's length are 0, as pad_packed_sequence(..., total_length=T) gives.
  LSTMOutput forward(const Tensor& x, const std::optional<std::tuple<Tensor, Tensor>>& hx = {},
                     const std::vector<int64_t>& lengths = {});
  // The same with a (B, T) padding mask instead of lengths: nonzero at valid steps (the
  // "1 for valid, 0 for padding"); each row must be right-padded.
  LSTMOutput forward(const Tensor& x, const std::optional<std::tuple<Tensor, Tensor>>& hx,
                     const Tensor& padding_mask);
  std::string repr() const override;  // LSTM(4, 8, num_layers=2, batch_first=True, ...)

  LSTMOptions options;
  // weight_ih, weight_hh, bias_ih, bias_hh, each indexed [layer * dirs + direction], G = 4:
  // RecurrentBase's.
};
HEED_MODULE(LSTM);

}  // namespace heed::nn

// auto [out, h_n, c_n] = lstm->forward(x): three elements, each a Tensor.
template <>
struct std::tuple_size<heed::nn::LSTMOutput> : std::integral_constant<std::size_t, 3> {};
template <std::size_t I>
struct std::tuple_element<I, heed::nn::LSTMOutput> {
  using type = heed::Tensor;
};

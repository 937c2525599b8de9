// gru.h - nn::GRUCell and nn::GRU, as torch::nn::GRUCell and torch::nn::GRU.
//
//   r = sigmoid(x W_ir^T + b_ir + h W_hr^T + b_hr)         reset gate
//   z = sigmoid(x W_iz^T + b_iz + h W_hz^T + b_hz)         update gate
//   n = tanh   (x W_in^T + b_in + r * (h W_hn^T + b_hn))   candidate
//   h' = (1 - z) * n + z * h
// (Cho et al. 2014, "Learning Phrase Representations using RNN Encoder-Decoder".)
// GRUCell's step is composed from heed ops (heed::gru_cell_reference: two heed::linear,
// narrow, sigmoid, tanh, mul, add), so its backward is theirs; each direction of each GRU
// layer is one fused op over the whole sequence, heed::gru_layer (autograd/ops/gru_layer.h:
// the input projection of every step as one GEMM, a hand-written backward).
//
// Parameters have PyTorch's names, shapes and gate order [r | z | n]:
//   weight_ih_l{k}  (3H, In_k)   weight_hh_l{k}  (3H, H)   bias_ih_l{k}, bias_hh_l{k}  (3H)
//   and the suffix _reverse for the backward direction; all start U(-1/sqrt(H), 1/sqrt(H)).
// Options, batch_first (true by default in heed, false in PyTorch), lengths and padding
// masks behave exactly as nn::LSTM's (layers/lstm.h); the state is h alone.
//
// Example:
//   auto gru = nn::GRU(nn::GRUOptions(64, 128).num_layers(2));
//   auto [out, h_n] = gru->forward(x);                  // x (B, T, 64) -> out (B, T, 128)
//   auto cell = nn::GRUCell(64, 128);
//   h = cell->forward(x_t, h);                           // (B, 64), (B, 128) -> (B, 128)
#pragma once
#include <cstddef>
#include <optional>
#include <tuple>
#include <type_traits>
#include <vector>

#include "recurrent_base.h"

namespace heed::nn {

class GRUCell;
class GRU;
// input_size, hidden_size, bias (layers/recurrent_base.h).
using GRUCellOptions = detail::RecurrentCellOptions<GRUCell>;

// One step: x (B, In), h (B, H) (zeros when not given) -> h' (B, H).
class GRUCellImpl : public Cloneable<GRUCellImpl, detail::RecurrentCellBase> {
 public:
  explicit GRUCellImpl(const GRUCellOptions& options);
  GRUCellImpl(int64_t input_size, int64_t hidden_size)
      : GRUCellImpl(GRUCellOptions(input_size, hidden_size)) {}

  // heed::Error naming GRUCell if x is not (B, input_size) or h is not (B, hidden_size).
  Tensor forward(const Tensor& x, const Tensor& h);
  Tensor forward(const Tensor& x) { return forward(x, Tensor()); }
  std::string repr() const override;  // GRUCell(4, 8) or GRUCell(4, 8, bias=False)

  GRUCellOptions options;
  // weight_ih (3H, In), weight_hh (3H, H), bias_ih, bias_hh (3H): RecurrentCellBase's.
};
HEED_MODULE(GRUCell);

// The cell's options and num_layers, batch_first, dropout, bidirectional
// (layers/recurrent_base.h).
using GRUOptions = detail::RecurrentOptions<GRU>;

// What GRU::forward returns: libtorch's std::tuple<Tensor, Tensor> (its base class), with
// names for its two tensors, as LSTMOutput (layers/lstm.h):
//   auto [out, h_n] = gru->forward(x);   std::get<0>(gru->forward(x));   std::tie(out, h) = ...
// Copying copies the two handles, and the copy's names refer to its own elements.
struct GRUOutput : std::tuple<Tensor, Tensor> {
  using Tuple = std::tuple<Tensor, Tensor>;
  GRUOutput(Tensor output, Tensor h_n) : Tuple(std::move(output), std::move(h_n)) {}
  GRUOutput() = default;  // two undefined tensors, filled by assignment
  GRUOutput(const GRUOutput& o) : Tuple(o) {}
  GRUOutput& operator=(const GRUOutput& o) {
    Tuple::operator=(o);
    return *this;
  }
  Tensor& output = std::get<0>(*this);  // (B, T, dirs * H): the last layer's h at every step,
                                        // 0 at padded steps
  Tensor& h_n = std::get<1>(*this);     // (num_layers * dirs, B, H): h after each sequence's
                                        // last valid step
  template <std::size_t I>
  Tensor& get() const {
    static_assert(I < 2, "GRUOutput has two tensors: output, h_n");
    return I == 0 ? output : h_n;
  }
};

class GRUImpl : public Cloneable<GRUImpl, detail::RecurrentBase> {
 public:
  explicit GRUImpl(const GRUOptions& options);
  GRUImpl(int64_t input_size, int64_t hidden_size) : GRUImpl(GRUOptions(input_size, hidden_size)) {}

  // x (B, T, In); h0 (num_layers * dirs, B, H) or undefined for zeros; lengths as nn::LSTM.
  GRUOutput forward(const Tensor& x, const Tensor& h0 = Tensor(),
                    const std::vector<int64_t>& lengths = {});
  // With a (B, T) padding mask (nonzero at valid steps, right-padded) instead of lengths.
  GRUOutput forward(const Tensor& x, const Tensor& h0, const Tensor& padding_mask);
  std::string repr() const override;  // GRU(4, 8, num_layers=2, batch_first=True, ...)

  GRUOptions options;
  // weight_ih, weight_hh, bias_ih, bias_hh, each indexed [layer * dirs + direction], G = 3:
  // RecurrentBase's.
};
HEED_MODULE(GRU);

}  // namespace heed::nn

template <>
struct std::tuple_size<heed::nn::GRUOutput> : std::integral_constant<std::size_t, 2> {};
template <std::size_t I>
struct std::tuple_element<I, heed::nn::GRUOutput> {
  using type = heed::Tensor;
};

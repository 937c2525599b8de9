// rnn_utils.h - nn::utils::pad_sequence, as torch.nn.utils.rnn.pad_sequence: variable-length
// sequences into one padded batch, with the lengths and the padding mask that heed's
// recurrent layers and attention take.
//
//   sequences  B of them, sequence b of length T_b      Tmax = max_b T_b
//   padded     (B, Tmax, *): row b holds sequence b, then padding_value up to Tmax
//   lengths    {T_0, ..., T_{B-1}}                      -> LSTM/GRU::forward(x, {}, lengths)
//   mask       (B, Tmax): 1 at a real token, 0 at padding (heed's convention)
//                                                       -> AttentionMask().key_padding(mask),
//                                                          LSTM/GRU::forward(x, {}, mask)
// heed is batch-first, so batch_first defaults to true here (torch's default is false, as
// it is for torch's LSTM; heed's LSTMOptions::batch_first defaults to true too).
// batch_first = false gives padded (Tmax, B, *); lengths and mask stay (B, ...) as the
// layers take them. A sequence may be empty (a row of padding), but LSTM and GRU need
// every length >= 1.
//
// Example (token ids -> embeddings -> LSTM, padding id 0):
//   auto batch = nn::utils::pad_sequence({{5, 8, 2}, {7, 3}});   // batch.ids (2, 3): 5 8 2 / 7 3 0
//   Tensor x = emb->forward(batch.ids);                             // (2, 3, E)
//   auto [out, h_n, c_n] = lstm->forward(x, {}, batch.lengths);     // lengths {3, 2}
//   auto [y, w] = mha->forward(out, out, out, nn::AttentionMask().key_padding(batch.mask));
#pragma once
#include <cstdint>
#include <vector>

#include "../core/tensor.h"

namespace heed::nn::utils {

// A padded batch of token ids.
struct PaddedIds {
  IndexTensor ids;               // (B, Tmax), or (Tmax, B) when not batch_first
  std::vector<int64_t> lengths;  // (B)
  Tensor mask;                   // (B, Tmax): 1 = real token, 0 = padding
};

// A padded batch of tensors; `padded` is differentiable w.r.t. every sequence.
struct PaddedTensors {
  Tensor padded;                 // (B, Tmax, *), or (Tmax, B, *) when not batch_first
  std::vector<int64_t> lengths;  // (B)
  Tensor mask;                   // (B, Tmax): 1 = real token, 0 = padding
};

// heed::Error naming pad_sequence when `sequences` is empty.
PaddedIds pad_sequence(const std::vector<std::vector<int64_t>>& sequences, bool batch_first = true,
                       int64_t padding_value = 0);

// Each sequence (T_b, *) with the same trailing dims *. heed::Error naming pad_sequence when
// `sequences` is empty, one is undefined or 0-dim, or their trailing dims differ.
PaddedTensors pad_sequence(const std::vector<Tensor>& sequences, bool batch_first = true,
                           real padding_value = 0);

}  // namespace heed::nn::utils

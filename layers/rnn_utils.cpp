// rnn_utils.cpp - pad_sequence: the lengths and mask first, then the padded batch (ids by
// hand; tensors through cat and stack, so the gradient reaches every sequence).
#include "rnn_utils.h"

#include <algorithm>

#include "../autograd/ops/shape.h"
#include "../core/error.h"

namespace heed::nn::utils {

namespace {

// (B, Tmax) mask: 1 for the first lengths[b] steps of row b, 0 after.
Tensor mask_of(const std::vector<int64_t>& lengths, int64_t Tmax) {
  const int64_t B = int64_t(lengths.size());
  Tensor m = zeros({B, Tmax});
  for (int64_t b = 0; b < B; ++b) std::fill(m.data() + b * Tmax, m.data() + b * Tmax + lengths[b], real(1));
  return m;
}

int64_t longest(const std::vector<int64_t>& lengths) {
  return *std::max_element(lengths.begin(), lengths.end());
}

}  // namespace

PaddedIds pad_sequence(const std::vector<std::vector<int64_t>>& sequences, bool batch_first,
                       int64_t padding_value) {
  HEED_CHECK(!sequences.empty(), "pad_sequence", "got no sequences");
  PaddedIds out;
  for (const auto& s : sequences) out.lengths.push_back(int64_t(s.size()));
  const int64_t B = int64_t(sequences.size()), T = longest(out.lengths);
  std::vector<int64_t> ids(B * T, padding_value);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < out.lengths[b]; ++t)
      ids[batch_first ? b * T + t : t * B + b] = sequences[b][t];
  out.ids = IndexTensor(std::move(ids), batch_first ? Shape{B, T} : Shape{T, B});
  out.mask = mask_of(out.lengths, T);
  return out;
}

// padded_b = cat(sequence_b, full((Tmax - T_b, *), padding_value));  padded = stack(padded_b)
PaddedTensors pad_sequence(const std::vector<Tensor>& sequences, bool batch_first, real padding_value) {
  HEED_CHECK(!sequences.empty(), "pad_sequence", "got no sequences");
  PaddedTensors out;
  for (size_t b = 0; b < sequences.size(); ++b) {
    const Tensor& s = sequences[b];
    HEED_CHECK(s.defined() && s.dim() >= 1, "pad_sequence", "sequence ", b, " must be (T, *); got ",
               s.defined() ? s.shape() : Shape{});
    HEED_CHECK(s.dim() == sequences[0].dim() &&
                   std::equal(s.shape().begin() + 1, s.shape().end(), sequences[0].shape().begin() + 1),
               "pad_sequence", "sequence ", b, " ", s.shape(), " and sequence 0 ",
               sequences[0].shape(), " differ after the time dim");
    out.lengths.push_back(s.size(0));
  }
  const int64_t T = longest(out.lengths);
  std::vector<Tensor> rows;
  for (const Tensor& s : sequences) {
    Shape pad = s.shape();
    pad[0] = T - s.size(0);
    rows.push_back(pad[0] == 0 ? s : cat({s, full(pad, padding_value)}, 0));  // (Tmax, *)
  }
  out.padded = stack(rows, batch_first ? 0 : 1);  // (B, Tmax, *) or (Tmax, B, *)
  out.mask = mask_of(out.lengths, T);
  return out;
}

}  // namespace heed::nn::utils

// embedding.cpp - lookup forward and scatter-add backward.
//
//   forward    y[n, :] = W[ids[n], :]                       n over all N = ids.numel() ids
//   backward   dW[v, :] = sum_{n : ids[n] = v} dy[n, :]     for v != padding_idx
//              dW[padding_idx, :] = 0
// Repeated ids accumulate. The gradient is dense (V, C), as PyTorch's default
// (sparse=False). ids are integers, so they have no gradient.
#include "embedding.h"

#include <algorithm>

#include "../../core/error.h"
#include "../../core/parallel.h"
#include "../engine/composed_backward.h"
#include "../engine/node.h"
#include "arith.h"
#include "indexing.h"

namespace heed {

Tensor embedding(const IndexTensor& ids, const Tensor& weight, std::optional<int64_t> padding_idx,
                 const char* op) {
  HEED_CHECK(weight.dim() == 2, op, "weight must be (num_embeddings, embedding_dim); got ",
             weight.shape());
  const int64_t V = weight.size(0), C = weight.size(1), N = ids.numel();
  HEED_CHECK(!padding_idx || (*padding_idx >= 0 && *padding_idx < V), op, "padding_idx ",
             *padding_idx, " is out of range [0, ", V, ")");
  ids.check_range(op, V);
  Shape ys = ids.shape();
  ys.push_back(C);

  Tensor y = empty(ys);  // (N, C)
  const real* pw = weight.data();
  real* py = y.data();
  parallel_for(N, kGrainElementwise / (C + 1) + 1, [&](int64_t b, int64_t e) {
    for (int64_t n = b; n < e; ++n) std::copy(pw + ids[n] * C, pw + (ids[n] + 1) * C, py + n * C);
  });

  return record("embedding", y, {weight}, kDoubleBackward, [ids, V, C, padding_idx](const Tensor& dy, Grads& g) {
    // Under create_graph: the twin, index_select of the rows with padding rows masked out.
    // dW depends on dy alone (not on W), so the twin runs on a stand-in for W.
    if (g.create_graph()) {
      Tensor keep = ones(dy.shape());  // (N, C): 0 on the rows of padding ids
      if (padding_idx)
        for (int64_t n = 0; n < ids.numel(); ++n)
          if (ids[n] == *padding_idx) std::fill(keep.data() + n * C, keep.data() + (n + 1) * C, real(0));
      const IndexTensor flat(ids.vec());
      return detail::composed_gradients([&](const std::vector<Tensor>& in) {
        return mul(index_select(in[0], 0, flat).reshape(dy.shape()), keep);
      }, {zeros({V, C}).requires_grad_()}, dy, g);
    }
    Tensor dw = zeros(Shape{V, C});  // (V, C)
    const real* pdy = dy.data();
    real* pdw = dw.data();
    const int64_t N = ids.numel(), skip = padding_idx ? *padding_idx : -1;
    // Threads own column chunks, so repeated ids never race.
    const int64_t chunk = 64, chunks = (C + chunk - 1) / chunk;
    parallel_for(chunks, kGrainElementwise / (N * chunk + 1) + 1, [&](int64_t b, int64_t e) {
      for (int64_t c = b; c < e; ++c) {
        const int64_t j0 = c * chunk, j1 = std::min(C, j0 + chunk);
        for (int64_t n = 0; n < N; ++n) {
          if (ids[n] == skip) continue;
          real* row = pdw + ids[n] * C;
          const real* src = pdy + n * C;
          for (int64_t j = j0; j < j1; ++j) row[j] += src[j];
        }
      }
    });
    g[0] = dw;
  });
}

}  // namespace heed

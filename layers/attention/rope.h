// rope.h - rotary position embedding (RoPE: Su et al. 2021, "RoFormer: Enhanced Transformer
// with Rotary Position Embedding"), applied to queries and keys, not added to the input.
//
// RoPE applies rotation matrices to the queries and keys, which extrapolates better to
// longer sequences (Su et al. 2021). In the paper's notation, the query at position m and the key at position n
// are rotated before the dot product:
//
//   f(x, m) = R_{Theta,m} x,   R_{Theta,m} = diag(R(m theta_1), ..., R(m theta_{D/2}))
//   R(a) = [cos a  -sin a; sin a  cos a],   theta_i = base^(-2(i-1)/D),  base = 10000
//   f(q, m)^T f(k, n) = q^T R_{Theta,m}^T R_{Theta,n} k = q^T R_{Theta,n-m} k
//
// so the score depends on the positions only through n - m, and each vector keeps its norm.
// Nothing is learned and nothing is added to V.
// Convention: interleaved pairs (x_{2i}, x_{2i+1}) as the paper (and Meta's LLaMA code);
// GPT-NeoX / Hugging Face pair (x_i, x_{i+D/2}) instead: RotaryEmbeddingOptions::half_split
// (autograd/ops/attention/rope.h has both, and the op's backward).
//
// Shapes: x (B, T, D) or (B, H, T, D), D even, positions along dim -2 starting at `offset`
// (the number of tokens already in a key/value cache when decoding step by step).
// Cost: O(B H T D) time and one output tensor; the cos/sin table is O(T D/2), shared by q
// and k (RotaryEmbedding keeps it between calls and grows it when T + offset outgrows it,
// up to 65536 positions; a window past that gets a table of its own T rows each call).
// Positions must stay <= kMaxRotaryPosition (2^31 - 1, rope.h): a heed::Error names the
// offset otherwise.
//
// Example:
//   auto rope = nn::RotaryEmbedding(64);     // head dim 64
//   Tensor q_rot = rope->forward(q), k_rot = rope->forward(k);  // (B, H, T, 64) each
//   Tensor scores = matmul(q_rot, transpose(k_rot, -2, -1)) / 8;
#pragma once
#include "../../autograd/ops/attention/rope.h"
#include "../module.h"

namespace heed::nn {

// x (..., T, D) rotated for positions offset .. offset + T - 1 (a fresh table each call).
Tensor apply_rotary(const Tensor& x, int64_t positions_offset = 0, double base = 10000,
                    bool half_split = false);

class RotaryEmbeddingOptions {
 public:
  RotaryEmbeddingOptions(int64_t dim) : dim_(dim) {}  // implicit, so RotaryEmbedding(64) reads well
  HEED_ARG(int64_t, dim);
  HEED_ARG(double, base) = 10000;
  HEED_ARG(bool, half_split) = false;
};

// The table of cos/sin rows is a cache, grown by replacing it (never written in place), so a
// (shallow, module.h) copy sharing it stays correct; forward checks its arguments before it
// grows the table, so a throwing call leaves it as it was.
class RotaryEmbeddingImpl : public Cloneable<RotaryEmbeddingImpl> {
 public:
  explicit RotaryEmbeddingImpl(const RotaryEmbeddingOptions& options);  // dim even, base > 0

  // x (..., T, dim) -> the same shape, rotated for positions offset .. offset + T - 1.
  Tensor forward(const Tensor& x, int64_t offset = 0);
  std::string repr() const override;  // RotaryEmbedding(dim=64, base=10000.0)

  RotaryEmbeddingOptions options;

 private:
  RotaryTable cache_;  // positions 0 .. P-1 (P <= 65536), grown by doubling; not a parameter nor a buffer
};
HEED_MODULE(RotaryEmbedding);

}  // namespace heed::nn

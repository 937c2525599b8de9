// rope.h - the rotary position embedding (RoPE, Su et al. 2021, "RoFormer") as one
// differentiable op, and its twin composed from heed's primitive ops.
//
// Each pair of features of the vector at position m is turned by an angle proportional to m:
//
//   theta_i = base^(-2i/D)                     i = 0 .. D/2 - 1, base = 10000
//   [y_a]   [cos m theta_i   -sin m theta_i] [x_a]
//   [y_b] = [sin m theta_i    cos m theta_i] [x_b]
//
// Pairing (a, b) of pair i:
//   interleaved (default)  a = 2i, b = 2i + 1       the RoFormer paper, Meta's LLaMA code
//   half_split             a = i,  b = i + D/2      GPT-NeoX and Hugging Face's rotate_half
// Both give the same scores once q and k use the same pairing; weights trained with one
// need their q/k projection rows permuted to use the other.
//
// Backward: a rotation is orthogonal, so dx = R(-m theta_i) dy:
//   dx_a =  cos * dy_a + sin * dy_b
//   dx_b = -sin * dy_a + cos * dy_b
//
// Shapes: x (..., T, D) with positions along dim -2 (so (B, T, D) or (B, H, T, D)); the
// table RotaryTable::cos/sin is (P, D/2), row r holding position first + r.
// Cost: forward and backward each read and write x once: O(numel(x)) time, no saved
// tensors besides the shared (P, D/2) table.
//
//   heed::RotaryTable t = heed::rotary_table(T, 64);    // positions 0 .. T-1, D = 64
//   Tensor q_rot = heed::rotary(q, t);                  // q (B, H, T, 64)
#pragma once
#include "../../../core/tensor.h"

namespace heed {

struct RotaryTable {
  Tensor cos, sin;          // (P, D/2): cos(m theta_i), sin(m theta_i), m = first + row
  int64_t first = 0;        // the position of row 0
  bool half_split = false;  // the pairing the table is meant for (see above)
};

// The last position a table may hold: 2^31 - 1. The angle m * theta is computed in double,
// whose rounding error grows with m (about m * 2^-53 radians); past 2^31 it exceeds float's
// resolution of cos/sin (2^-24), so larger positions would rotate by noise. Far beyond any
// context length in use.
constexpr int64_t kMaxRotaryPosition = (int64_t(1) << 31) - 1;

// cos/sin of (first + r) * base^(-2i/D) for r < positions, i < D/2, computed in double
// and then rounded. heed::Error for an odd or non-positive D, negative positions, or a last
// position first + positions - 1 past kMaxRotaryPosition.
RotaryTable rotary_table(int64_t positions, int64_t D, double base = 10000, int64_t first = 0,
                         bool half_split = false);

// The fused op: x (..., T, D) rotated by table rows row .. row + T - 1 (positions
// table.first + row ..). heed::Error when D or T do not fit the table.
Tensor rotary(const Tensor& x, const RotaryTable& table, int64_t row = 0);

// The same rotation composed from reshape, narrow, mul, sub, add and cat: the reference
// the fused op is tested against (tests/test_positional.cpp, tests/gradcheck_positional.cpp).
Tensor rotary_reference(const Tensor& x, const RotaryTable& table, int64_t row = 0);

}  // namespace heed

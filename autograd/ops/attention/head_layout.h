// head_layout.h - where a tensor keeps the rows of each attention head, as offsets into its
// data: the one description flash attention (flash_attention.cpp) reads its operands by and
// the KV cache (layers/attention/kv_cache.h) copies keys and values by.
//
// Row r of head h of batch b (its D values adjacent) starts at
//   offset + b * batch + h * head + r * row.
// Two layouts occur:
//   split          (B, H, T, D) contiguous               {0, H T D, T D, D}
//   side by side   (B, T, W), head h in columns [c0 + h D, c0 + (h+1) D)   {c0, T W, D, W}
// the second is how a projection writes heads and the output projection reads them, so
// q, k, v can be read inside a (B, T, 3E) projection and O written as (B, T, H, D).
// A gradient has its input's shape, so it has its input's layout.
#pragma once
#include <cstdint>

namespace heed {

struct HeadLayout {
  int64_t offset, batch, head, row;
  int64_t at(int64_t b, int64_t h, int64_t r) const { return offset + b * batch + h * head + r * row; }
};

inline HeadLayout split_layout(int64_t H, int64_t T, int64_t D) { return {0, H * T * D, T * D, D}; }
inline HeadLayout side_by_side(int64_t T, int64_t W, int64_t D, int64_t c0) {
  return {c0, T * W, D, W};
}

}  // namespace heed

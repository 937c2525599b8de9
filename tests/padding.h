// padding.h - key padding masks the attention tests share.
#pragma once
#include <cstdint>

#include <heed/heed.h>

namespace heed::test {

// Key padding (B, Tk): batch 1 hides its first ceil(Tk/2) keys, so with causal its first
// queries see nothing (fully masked rows: zero output, zero gradient).
inline Tensor left_padding(int64_t B, int64_t Tk) {
  Tensor p = ones({B, Tk});
  for (int64_t j = 0; j < (Tk + 1) / 2; ++j) p.data()[Tk + j] = 0;
  return p;
}

}  // namespace heed::test

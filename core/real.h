// real.h - the one scalar type of a heed build.
//
// heed is compiled twice from the same sources: the normal library (float32,
// build/libheed.a) and a double-precision twin (build/libheed_f64.a, -DHEED_DOUBLE)
// that the finite-difference gradient checks link against. Every kernel is
// written against `real`, so the two builds differ in this one line.
#pragma once
#include <cstdint>

namespace heed {
#ifdef HEED_DOUBLE
using real = double;
#else
using real = float;
#endif
}  // namespace heed

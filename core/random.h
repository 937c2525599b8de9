// random.h - heed's seeded random number generator.
//
// One global generator (std::mt19937_64, whose output the C++ standard fixes) with
// heed's own uniform and Box-Muller normal transforms, so a seed gives the same
// numbers with any compiler or standard library. manual_seed(s) makes a run repeat.
#pragma once
#include <cstdint>

namespace heed {

void manual_seed(uint64_t seed);
double rand_uniform();  // [0, 1)
double rand_normal();   // N(0, 1)

}  // namespace heed

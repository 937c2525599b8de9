// random.h - heed's seeded random number generator.
//
// One global generator (std::mt19937_64, whose output the C++ standard fixes) with
// heed's own uniform and Box-Muller normal transforms, so a seed gives the same
// numbers with any compiler or standard library. manual_seed(s) makes a run repeat.
//
// get_rng_state() / set_rng_state() copy the whole generator out and back in, so a
// computation can be replayed with the same random numbers (autograd/recompute.h re-runs
// a checkpointed block's dropout in backward this way), as torch.get_rng_state().
#pragma once
#include <cstdint>
#include <random>

namespace heed {

void manual_seed(uint64_t seed);
double rand_uniform();  // [0, 1)
double rand_normal();   // N(0, 1)

struct RngState {
  std::mt19937_64 engine;
  bool has_spare = false;  // Box-Muller's second normal, not yet returned
  double spare = 0;
};
RngState get_rng_state();
void set_rng_state(const RngState& state);

}  // namespace heed

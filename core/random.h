// random.h - heed's seeded random number generator.
//
// One global generator (std::mt19937_64, whose output the C++ standard fixes) with
// heed's own uniform and Box-Muller normal transforms, so a seed gives the same
// numbers with any compiler or standard library. manual_seed(s) makes a run repeat.
//
// get_rng_state() / set_rng_state() copy the whole generator out and back in, so a
// computation can be replayed with the same random numbers (autograd/engine/recompute.h re-runs
// a checkpointed block's dropout in backward this way), as torch.get_rng_state().
//
// Threads. As libtorch's default CPU generator, the one generator serves every thread and a
// mutex guards it: two threads drawing at once each get numbers of the one seeded stream,
// never a torn state. Which thread gets which numbers then depends on timing, so a run that
// must repeat draws from one thread. A loop that draws many numbers holds the lock once
// for all of them through a Draws (randn, rand, dropout and the initialisers do).
// Copying: RngState is a value, a snapshot independent of the generator (set_rng_state
// copies it back in); the generator itself is global and not an object to copy. Draws
// holds the lock and is not copyable. Nothing here throws.
#pragma once
#include <cstdint>
#include <mutex>
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

// Holds the generator for a run of draws:  Draws d; for (...) p[i] = d.normal();
// The same numbers as that many rand_uniform() / rand_normal() calls.
class Draws {
 public:
  Draws();
  double uniform();  // [0, 1)
  double normal();   // N(0, 1)

 private:
  std::lock_guard<std::mutex> lock_;
  RngState& s_;
};

}  // namespace heed

#include "random.h"

#include <cmath>
#include <random>

namespace heed {
namespace {
std::mt19937_64& gen() {
  static std::mt19937_64 g(0);
  return g;
}
bool has_spare = false;
double spare = 0;
}  // namespace

void manual_seed(uint64_t seed) {
  gen().seed(seed);
  has_spare = false;
}

RngState get_rng_state() { return RngState{gen(), has_spare, spare}; }

void set_rng_state(const RngState& s) {
  gen() = s.engine;
  has_spare = s.has_spare;
  spare = s.spare;
}

double rand_uniform() { return double(gen()() >> 11) * 0x1.0p-53; }

double rand_normal() {
  // Box-Muller: two uniforms -> two independent normals; the second is kept for next time.
  if (has_spare) {
    has_spare = false;
    return spare;
  }
  double u1;
  do u1 = rand_uniform();
  while (u1 <= 0);
  const double u2 = rand_uniform();
  const double r = std::sqrt(-2.0 * std::log(u1)), th = 2.0 * M_PI * u2;
  spare = r * std::sin(th);
  has_spare = true;
  return r * std::cos(th);
}

}  // namespace heed

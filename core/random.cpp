#include "random.h"

#include <cmath>

namespace heed {
namespace {
std::mutex& mu() {
  static std::mutex m;
  return m;
}
RngState& state() {  // guarded by mu()
  static RngState s{std::mt19937_64(0)};
  return s;
}
}  // namespace

Draws::Draws() : lock_(mu()), s_(state()) {}

double Draws::uniform() { return double(s_.engine() >> 11) * 0x1.0p-53; }

double Draws::normal() {
  // Box-Muller: two uniforms -> two independent normals; the second is kept for next time.
  if (s_.has_spare) {
    s_.has_spare = false;
    return s_.spare;
  }
  double u1;
  do u1 = uniform();
  while (u1 <= 0);
  const double u2 = uniform();
  const double r = std::sqrt(-2.0 * std::log(u1)), th = 2.0 * M_PI * u2;
  s_.spare = r * std::sin(th);
  s_.has_spare = true;
  return r * std::cos(th);
}

double rand_uniform() { return Draws().uniform(); }
double rand_normal() { return Draws().normal(); }

void manual_seed(uint64_t seed) {
  std::lock_guard<std::mutex> lock(mu());
  state() = RngState{std::mt19937_64(seed)};
}

RngState get_rng_state() {
  std::lock_guard<std::mutex> lock(mu());
  return state();
}

void set_rng_state(const RngState& s) {
  std::lock_guard<std::mutex> lock(mu());
  state() = s;
}

}  // namespace heed

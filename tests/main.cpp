// main.cpp - doctest's runner, linked into both test binaries (float and double).
//
// Tests run with dynamic threads off: many of them compare results bit for bit (a checkpointed
// block against the plain one, a resumed run against an unbroken one), and with dynamic threads
// the thread count of each op follows the machine's load, so two runs of the same op may
// reduce in a different order (README, "Determinism"). tests/test_parallel.cpp and
// tests/test_threads.cpp turn them on where they test them.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <heed/core/parallel.h>

int main(int argc, char** argv) {
  heed::set_dynamic_threads(false);
  doctest::Context context(argc, argv);
  return context.run();
}

// The seed for a randomised test: LOCKSTEP_TEST_SEED from the environment
// to replay a failure, otherwise a fresh one from std::random_device.
// Either way it is printed, so a failing run can be replayed.
#ifndef LOCKSTEP_TESTS_TEST_SEED_H_
#define LOCKSTEP_TESTS_TEST_SEED_H_

#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <random>

namespace lockstep {

// Returns the seed and prints `[   SEED   ] LOCKSTEP_TEST_SEED=<n>` to
// stdout. Each call draws anew unless LOCKSTEP_TEST_SEED is set.
// Thread-safety: as std::getenv; do not call while another thread changes
// the environment.
inline uint64_t TestSeed() {
  const char* fixed = std::getenv("LOCKSTEP_TEST_SEED");
  const uint64_t seed = fixed != nullptr ? std::strtoull(fixed, nullptr, 10)
                                         : std::random_device{}();
  std::cout << "[   SEED   ] LOCKSTEP_TEST_SEED=" << seed << std::endl;
  return seed;
}

}  // namespace lockstep

#endif  // LOCKSTEP_TESTS_TEST_SEED_H_

// n floats uniform in [lo, hi) from a seeded generator, for tests that
// compare computations on arbitrary inputs.
#ifndef LOCKSTEP_TESTS_SUPPORT_RANDOM_FLOATS_H_
#define LOCKSTEP_TESTS_SUPPORT_RANDOM_FLOATS_H_

#include <cstdint>
#include <random>
#include <vector>

namespace lockstep {

inline std::vector<float> RandomFloats(uint64_t n, uint32_t seed, float lo = -1,
                                       float hi = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

}  // namespace lockstep

#endif  // LOCKSTEP_TESTS_SUPPORT_RANDOM_FLOATS_H_

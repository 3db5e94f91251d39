// SplitMix64 (Steele, Lea, Flood 2014): a fast, well-mixing 64-bit hash
// and seedable stream, the same on every machine, for everything in
// Lockstep that must be reproducible from a seed (sample orders, initial
// weights, emulated slowdowns, generated data).
// Thread-safety: pure functions.
#ifndef LOCKSTEP_COMMON_HASH_H_
#define LOCKSTEP_COMMON_HASH_H_

#include <cstdint>

namespace lockstep {

// The SplitMix64 output for input x (a bijection on 64-bit values).
inline uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// The next value of the SplitMix64 stream whose state is *state.
inline uint64_t SplitMix64Next(uint64_t* state) {
  const uint64_t x = *state;
  *state += 0x9e3779b97f4a7c15ULL;
  return SplitMix64(x);
}

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_HASH_H_

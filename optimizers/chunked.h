// Shared by the optimizer kernels: the chunked loop shape GCC vectorizes,
// and a vectorized square root.
// Thread-safety: pure inline functions.
#ifndef LOCKSTEP_OPTIMIZERS_CHUNKED_H_
#define LOCKSTEP_OPTIMIZERS_CHUNKED_H_

#include <cmath>
#include <cstddef>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

namespace lockstep {
namespace optimizers {

// GCC at -O2 vectorizes only loops whose trip count is a known multiple of
// the vector width and which need no runtime alias checks (its "very-cheap"
// cost model). So every kernel works on __restrict chunks of kBlock floats,
// inlined with a constant count, and a last chunk of n % kBlock.
constexpr size_t kBlock = 16;

// flatten: the chunk lambdas must be inlined here so their kBlock loops
// see a constant trip count; GCC's inlining limits otherwise leave some
// (AdaGrad's share, Adam's close) out of line and scalar, 3-4x slower.
template <typename Chunk>
[[gnu::flatten]] inline void ForEachChunk(size_t n, Chunk&& chunk) {
  size_t i = 0;
  for (; i + kBlock <= n; i += kBlock) chunk(i, kBlock);
  if (i < n) chunk(i, n - i);
}

// Square roots of x[0, kBlock). A plain std::sqrt loop does not vectorize
// because of errno handling (-fmath-errno); the inputs here are never
// negative, so the vector instruction gives the same, correctly rounded,
// results.
inline void SqrtBlock(float* x) {
#if defined(__SSE2__)
  for (size_t j = 0; j < kBlock; j += 4) {
    _mm_storeu_ps(x + j, _mm_sqrt_ps(_mm_loadu_ps(x + j)));
  }
#else
  for (size_t j = 0; j < kBlock; ++j) x[j] = std::sqrt(x[j]);
#endif
}

}  // namespace optimizers
}  // namespace lockstep

#endif  // LOCKSTEP_OPTIMIZERS_CHUNKED_H_

#include "worker/sample_stream.h"

#include <algorithm>
#include <cassert>
#include <numeric>
#include <random>
#include <span>
#include <utility>

#include "common/hash.h"

namespace lockstep {
namespace {

// Uniform in [0, bound), without modulo bias. REQUIRES: bound >= 1.
uint64_t UniformBelow(std::mt19937_64& rng, uint64_t bound) {
  // 2^64 mod bound: draws below it would make small residues more likely.
  const uint64_t threshold = (0 - bound) % bound;
  while (true) {
    const uint64_t r = rng();
    if (r >= threshold) return r % bound;
  }
}

void Shuffle(std::vector<uint64_t>* items, std::mt19937_64& rng) {
  for (uint64_t i = items->size(); i > 1; --i) {
    const uint64_t j = UniformBelow(rng, i);
    std::swap((*items)[i - 1], (*items)[j]);
  }
}

}  // namespace

std::vector<uint64_t> SampleStream::GlobalPermutation(uint64_t total,
                                                      uint64_t seed) {
  std::vector<uint64_t> permutation(total);
  std::iota(permutation.begin(), permutation.end(), uint64_t{0});
  std::mt19937_64 rng(seed);
  Shuffle(&permutation, rng);
  return permutation;
}

SampleStream::SampleStream(uint64_t total_samples, uint32_t workers,
                           uint32_t rank, uint64_t seed)
    : seed_(seed), rank_(rank) {
  assert(workers >= 1 && rank < workers && total_samples >= workers);
  const std::vector<uint64_t> global = GlobalPermutation(total_samples, seed);
  partition_.reserve((total_samples - rank + workers - 1) / workers);
  for (uint64_t p = rank; p < total_samples; p += workers) {
    partition_.push_back(global[p]);
  }
}

void SampleStream::StartNextPass() {
  ++passes_;
  position_ = 0;
  // Mixing rank and pass through SplitMix64 keeps the per-pass streams of
  // different workers and passes unrelated even for adjacent seeds.
  std::mt19937_64 rng(
      SplitMix64(SplitMix64(SplitMix64(seed_) ^ rank_) ^ passes_));
  Shuffle(&partition_, rng);
}

void SampleStream::SkipTo(uint64_t consumed) {
  assert(consumed_ == 0);
  const uint64_t size = partition_.size();
  for (uint64_t pass = consumed / size; passes_ < pass;) StartNextPass();
  position_ = consumed % size;
  consumed_ = consumed;
}

void SampleStream::Next(uint32_t count, std::vector<uint64_t>* out) {
  out->clear();
  out->reserve(count);
  while (out->size() < count) {
    const uint64_t take =
        std::min<uint64_t>(count - out->size(), partition_.size() - position_);
    const auto part = std::span(partition_).subspan(position_, take);
    out->insert(out->end(), part.begin(), part.end());
    position_ += take;
    // Wrapping eagerly keeps passes() exact when a batch ends a pass.
    if (position_ == partition_.size()) StartNextPass();
  }
  consumed_ += count;
}

}  // namespace lockstep

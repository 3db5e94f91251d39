// SampleStream: the order in which one worker visits its training samples.
//
// All workers agree on one seeded global permutation P of [0, total). Worker
// `rank` of W owns the positions p of P with p % W == rank, in order
// (strided), so the partitions are disjoint, cover every sample and differ
// in size by at most one. Pass 0 walks the owned samples in P order; each
// later pass walks them in a fresh order, shuffled with a generator seeded
// from (seed, rank, pass), so every pass visits every owned sample exactly
// once and the sequence depends only on the constructor arguments.
//
// Equivalence with single-process SGD: if every worker calls Next with the
// same count x, then until the first wrap-around the union of the workers'
// k-th batches is exactly the global slice P[k*W*x, (k+1)*W*x), i.e. the
// samples that single-process SGD with batch size W*x over P would use for
// its k-th step. Synchronous training therefore sees the same batches
// (as sets) whatever W is, which is what makes runs with different worker
// counts comparable.
//
// Thread-safety: not thread-safe; each worker owns its stream.
#ifndef LOCKSTEP_WORKER_SAMPLE_STREAM_H_
#define LOCKSTEP_WORKER_SAMPLE_STREAM_H_

#include <cstdint>
#include <vector>

namespace lockstep {

class SampleStream {
 public:
  // REQUIRES: workers >= 1, rank < workers, total_samples >= workers.
  SampleStream(uint64_t total_samples, uint32_t workers, uint32_t rank,
               uint64_t seed);

  // Replaces *out with the next `count` sample indices of this worker's
  // partition. At the end of the partition the stream wraps around into a
  // reshuffled next pass; a count larger than the partition wraps several
  // times within one call. count 0 leaves *out empty.
  void Next(uint32_t count, std::vector<uint64_t>* out);

  // Moves a fresh stream on as if Next had handed out `consumed` samples
  // (a worker that starts at clock c > 0 of a job it had run before, or
  // that a resumed job restarts, continues where its data was).
  // REQUIRES: consumed() == 0.
  void SkipTo(uint64_t consumed);

  // Samples handed out so far, over all passes.
  uint64_t consumed() const { return consumed_; }
  // Samples this worker owns: ceil((total - rank) / workers).
  uint64_t partition_size() const { return partition_.size(); }
  // Passes completed (the number of wrap-arounds so far).
  uint64_t passes() const { return passes_; }

  // The global permutation P of [0, total): Fisher-Yates driven by
  // std::mt19937_64(seed) with unbiased bounded draws of our own, so P is
  // the same with every standard library.
  static std::vector<uint64_t> GlobalPermutation(uint64_t total, uint64_t seed);

 private:
  void StartNextPass();

  uint64_t seed_;
  uint32_t rank_;
  std::vector<uint64_t> partition_;  // this pass's order
  uint64_t position_ = 0;            // next index into partition_
  uint64_t consumed_ = 0;
  uint64_t passes_ = 0;
};

}  // namespace lockstep

#endif  // LOCKSTEP_WORKER_SAMPLE_STREAM_H_

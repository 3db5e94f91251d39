// The configured per-worker batch list as policies without quotas read it.
// Thread-safety: pure functions.
#ifndef LOCKSTEP_SYNC_POLICIES_CONFIGURED_BATCHES_H_
#define LOCKSTEP_SYNC_POLICIES_CONFIGURED_BATCHES_H_

#include <algorithm>
#include <cstdint>
#include <vector>

namespace lockstep {

// Worker `worker`'s configured batch: `batches[worker]`, the last entry for
// workers beyond the list (a one-entry list means the same batch
// everywhere), 0 for an empty list. Same rule as BspPolicy.
inline uint32_t ConfiguredBatch(const std::vector<uint32_t>& batches,
                                uint32_t worker) {
  if (batches.empty()) return 0;
  return batches[std::min<size_t>(worker, batches.size() - 1)];
}

// Sum of the configured batches of every rank below `worker`, live or not:
// where `worker`'s samples start in each clock's global batch under the
// apply-on-arrival policies. Workers run different clocks there, so the
// slices are fixed by rank and never move when membership changes: a
// departed worker's slice goes unread, no two workers share one.
inline uint64_t RankOffset(const std::vector<uint32_t>& batches,
                           uint32_t worker) {
  uint64_t offset = 0;
  for (uint32_t w = 0; w < worker; ++w) offset += ConfiguredBatch(batches, w);
  return offset;
}

}  // namespace lockstep

#endif  // LOCKSTEP_SYNC_POLICIES_CONFIGURED_BATCHES_H_

// lockstep-snapshot's commands over a snapshot folder (the coordinator's
// manifest.json and each shard's RocksDB store shard-K/): list the rounds,
// inspect one, verify every checksum, export the weights.
// Thread-safety: free functions; each opens the stores read-only, so they
// run beside a live job.
#ifndef LOCKSTEP_TOOLS_SNAPSHOT_SNAPSHOT_TOOL_H_
#define LOCKSTEP_TOOLS_SNAPSHOT_SNAPSHOT_TOOL_H_

#include <cstdint>
#include <ostream>
#include <string>

#include "common/status.h"

namespace lockstep {

// One line per round, whether in the manifest or only in the stores:
// round, clock, time (UTC), size, shards, and complete / failed (why) /
// pruned (older than every round the manifest keeps, its files not yet
// deleted) / not recorded (a round whose writing was cut short; never
// restored).
Status ListSnapshots(const std::string& dir, std::ostream& out);

// Round `round` (0: the newest complete one): its clock, step, job,
// tensors, and per shard the key range and each array's size, chunks and
// CRC-32 (every chunk read and verified on the way).
Status InspectSnapshot(const std::string& dir, uint64_t round,
                       std::ostream& out);

// Reads and verifies every chunk of round `round` (0: every round the
// stores hold). One line per round and shard; Corruption naming the first
// bad chunk when any is bad.
Status VerifySnapshots(const std::string& dir, uint64_t round,
                       std::ostream& out);

// Writes the weights of round `round` (0: the newest complete one) into
// `out_dir`: per dense tensor NAME.npy (float32, the tensor's shape) and
// NAME.f32 (raw little-endian float32), model.f32 (every dense key in key
// order), and for a sparse table sparse_ids.npy (uint64) and
// sparse_weights.npy (rows x dim float32); lists what it wrote.
Status ExportSnapshot(const std::string& dir, uint64_t round,
                      const std::string& out_dir, std::ostream& out);

}  // namespace lockstep

#endif  // LOCKSTEP_TOOLS_SNAPSHOT_SNAPSHOT_TOOL_H_

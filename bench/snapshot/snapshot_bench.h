// The snapshot benchmark: a dense model with Adam state over S shards in
// this process, trained by full-range applies, with a snapshot round every
// few clocks written in the background to each shard's RocksDB, exactly as
// a server shard does (freeze a capture, copy on write, SST ingestion);
// then restored. Each figure is reported next to a baseline measured in
// the same run: the pause next to a clock's apply, the write rate next to
// a plain fsync'd file write of the same bytes, the restore rate next to a
// plain read of those files (page cache dropped for both).
// Thread-safety: RunSnapshotBench is single-caller.
#ifndef LOCKSTEP_BENCH_SNAPSHOT_SNAPSHOT_BENCH_H_
#define LOCKSTEP_BENCH_SNAPSHOT_SNAPSHOT_BENCH_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "common/status.h"

namespace lockstep {

struct SnapshotBenchOptions {
  // Model sizes to run, smallest first (the pause must not grow with it).
  std::vector<uint64_t> params = {10'000'000, 100'000'000};
  uint32_t shards = 2;
  uint32_t rounds = 5;
  uint32_t clocks_per_round = 3;
  size_t chunk_bytes = 1u << 20;
  std::string dir;  // where the stores go; empty = a folder under /tmp
};

// Runs the benchmark and prints its table to `out`.
Status RunSnapshotBench(const SnapshotBenchOptions& options, std::ostream& out);

}  // namespace lockstep

#endif  // LOCKSTEP_BENCH_SNAPSHOT_SNAPSHOT_BENCH_H_

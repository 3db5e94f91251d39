// A snapshot round of a snapshot folder loaded whole, as one shard would
// hold it: every shard store under the folder opened read-only, every
// chunk verified, the parts merged by key and sparse id. For the snapshot
// tool's export and for tests that compare whole models.
// Thread-safety: pure functions over their arguments.
#ifndef LOCKSTEP_TOOLS_SNAPSHOT_WHOLE_ROUND_H_
#define LOCKSTEP_TOOLS_SNAPSHOT_WHOLE_ROUND_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/layout.h"
#include "common/status.h"
#include "server/snapshot/shard_round.h"
#include "server/store/rocksdb_store.h"

namespace lockstep {

// The store of shard `shard` under snapshot folder `dir`.
std::string ShardStoreDir(const std::string& dir, uint32_t shard);

// Opens shard-0, shard-1, ... under `dir` read-only, as many as exist.
StatusOr<std::vector<std::unique_ptr<RocksDbStore>>> OpenShardStores(
    const std::string& dir);

struct WholeRound {
  ShardRoundMeta meta;         // shard 0's meta (layout: the round's own)
  std::vector<float> weights;  // every dense key, in key order
  std::vector<float> state;    // slot-major: state_slots * keys
  // id -> weights (dim floats) then each slot's dim floats.
  std::map<uint64_t, std::vector<float>> sparse;
  int64_t step = 0;
};

// Round `round` of the shards the round's layout names, from `dir`.
// Errors: NotFound (no such round), Corruption naming the chunk.
StatusOr<WholeRound> LoadWholeRound(const std::string& dir, uint64_t round);

}  // namespace lockstep

#endif  // LOCKSTEP_TOOLS_SNAPSHOT_WHOLE_ROUND_H_

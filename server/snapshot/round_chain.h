// Reading an incremental round: the chain of rounds its state is built
// from (a full round, then each incremental round on top of it, in the
// same store), and its arrays resolved through that chain into the whole
// arrays a full round would hold.
// Thread-safety: pure functions over their arguments.
#ifndef LOCKSTEP_SERVER_SNAPSHOT_ROUND_CHAIN_H_
#define LOCKSTEP_SERVER_SNAPSHOT_ROUND_CHAIN_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "server/store/snapshot_store.h"
#include "snapshot_format/shard_round_meta.h"

namespace lockstep {

// The metas of the rounds `round`'s state is built from: a full round
// first, `round` last. NotFound when `round` is not stored; Corruption
// when a parent is missing, undecodable, of another shard or layout, or
// cut in other chunks.
StatusOr<std::vector<ShardRoundMeta>> ReadRoundChain(const SnapshotStore& store,
                                                     uint64_t round);

// The arrays of the chain's last round whose names `want` accepts, whole:
// the full round's, then each incremental round's stored dense chunks
// written over them and its changed sparse rows written over (or added
// to) theirs. Corruption naming the chunk for a bad or missing chunk or
// sizes that disagree with the meta.
StatusOr<std::map<std::string, std::string>> ResolveArrays(
    const SnapshotStore& store, const std::vector<ShardRoundMeta>& chain,
    const std::function<bool(const std::string&)>& want);

// The chunks of `a` that `meta`'s round stores, ascending.
std::vector<uint32_t> StoredChunks(const ShardRoundMeta::Array& a);

// A chunk a round's meta lists but its store lacks (NotFound) is a
// Corruption; any other status stays as it is.
Status ListedChunkStatus(Status status);

// Whether `name` is one of a sparse table's arrays (stored by row).
bool IsSparseArray(const std::string& name);

}  // namespace lockstep

#endif  // LOCKSTEP_SERVER_SNAPSHOT_ROUND_CHAIN_H_

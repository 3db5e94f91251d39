// What a server says to the coordinator of the key ranges it holds: a
// range restored a round (Restored), applied a commit (Committed), was
// promoted from a backup (Promoted), or a backup installed its copy
// (BackupReady). And what the coordinator says to servers of the job's
// clock (Commit), its rounds (SnapshotStart) and its replicas (Promote,
// Follow; and to workers, Reroute). Built here, so no role's file sees how they
// are encoded. Thread-safety: free functions on values.
#ifndef LOCKSTEP_COMMON_WIRE_SHARD_MESSAGES_H_
#define LOCKSTEP_COMMON_WIRE_SHARD_MESSAGES_H_

#include <cstdint>
#include <string>
#include <vector>
#include <zmq.hpp>

namespace lockstep {

// Shard `shard` restored round `round` of recovery epoch `epoch`; its
// state is at `clock`.
zmq::message_t MakeRestoredHeader(uint32_t shard, uint32_t epoch,
                                  uint64_t round, int64_t clock);
// Shard `shard` applied the commit of `clock` (`pushes` pushes in it).
zmq::message_t MakeCommittedHeader(uint32_t shard, int64_t clock,
                                   uint32_t pushes);
// Shard `shard`'s backup here serves it from now on, at `clock`.
zmq::message_t MakePromotedHeader(uint32_t shard, int64_t clock);
// A backup of shard `shard` installed its primary's live copy.
zmq::message_t MakeBackupReadyHeader(uint32_t shard);
// The coordinator's Commit of `clock`: the pushes of `workers` make it.
zmq::message_t MakeCommitHeader(int64_t clock,
                                const std::vector<uint32_t>& workers);
// The coordinator's SnapshotStart: round `round` of the state after
// `clock`; rounds below `keep_from` may go once it is durable.
zmq::message_t MakeSnapshotStartHeader(uint64_t round, int64_t clock,
                                       uint64_t keep_from);
// The coordinator's replicas: promote the backup of `shard` (its other
// backups are at `backups_at`), follow `shard`'s primary at `primary`,
// and (to workers) reach `shard` at `endpoint` from now on.
zmq::message_t MakePromoteHeader(uint32_t shard,
                                 const std::vector<std::string>& backups_at);
zmq::message_t MakeFollowHeader(uint32_t shard, const std::string& primary);
zmq::message_t MakeRerouteHeader(uint32_t shard, const std::string& endpoint);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_WIRE_SHARD_MESSAGES_H_

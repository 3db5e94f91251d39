// A shard's snapshot rounds: its store (RocksDB, one per shard under the
// job's snapshot_dir), the round in flight and the restore of a round at
// start-up. The shard's thread freezes a round (Start: a capture over the
// model's arrays, O(chunks)); a thread of this class copies and writes it
// and then makes fd() readable; Finish, on the shard's thread, joins it and
// hands back the report the coordinator gets (SnapshotDone). A round is
// incremental (server/snapshot/shard_round.h) when the last one was
// durable in this life of the shard and the chain since the last full
// round is shorter than the job's snapshot_full_every.
// Thread-safety: every method on the shard's thread; the writer thread
// touches only the capture, the store and the report until fd() signals.
#ifndef LOCKSTEP_SERVER_SHARD_SHARD_ROUNDS_H_
#define LOCKSTEP_SERVER_SHARD_SHARD_ROUNDS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <zmq.hpp>

#include "common/status.h"
#include "common/wire/message.h"
#include "server/model/shard_model.h"
#include "server/model/snapshot_capture.h"
#include "server/snapshot/shard_restore.h"
#include "server/snapshot/shard_round.h"
#include "server/store/snapshot_store.h"

namespace lockstep {

class ShardRounds {
 public:
  // What a round came to, for the coordinator's SnapshotDone.
  struct Report {
    uint64_t round = 0;
    int64_t clock = 0;
    Status status;
    uint64_t bytes = 0;
    double freeze_ms = 0;
    double write_s = 0;
    uint64_t copied_on_apply = 0;
    uint64_t parent = 0;  // the round this one holds the changes since
    std::map<uint32_t, int64_t> contained;
  };

  ShardRounds() = default;
  ~ShardRounds();  // joins a writer still running
  ShardRounds(const ShardRounds&) = delete;
  ShardRounds& operator=(const ShardRounds&) = delete;

  // Opens shard `shard`'s store under `dir` ("": the job takes no rounds),
  // writing a full round at least every `full_every` rounds (1: every
  // round is full). A store that cannot be opened is logged, and every
  // round then fails saying why.
  void Open(const std::string& dir, uint32_t shard, uint32_t full_every);
  // Welcomed again (a rollback): the round in flight is abandoned (its
  // writer joined, its capture dropped, `model` no longer watched) and the
  // store closed. `model` may be unbuilt.
  void Drop(ShardModel* model);
  // Freezes round `meta.round` of `model` and starts writing it; rounds
  // older than `keep_from` are deleted once it is durable, unless a round
  // from keep_from on is built on them (incremental). A round that
  // cannot start (one still being written, no store) is reported failed
  // at once: the report is returned for the coordinator.
  std::optional<Report> Start(ShardRoundMeta meta, uint64_t keep_from,
                              ShardModel* model);
  // Readable (poll) once the round in flight is written; -1 before Open.
  int fd() const { return round_fd_; }
  // After fd() was readable: the finished round's report (the writer
  // joined, `model` no longer watched); nullopt when nothing finished.
  std::optional<Report> Finish(ShardModel* model);

  // Loads round `round`, written by `shards` shards under `dir`, into
  // `model` (freshly built) as shard `shard` of `layout`.
  static StatusOr<RestoredShard> Restore(const std::string& dir, uint64_t round,
                                         uint32_t shards,
                                         const KeyLayout& layout,
                                         uint32_t shard,
                                         const std::string& optimizer,
                                         ShardModel* model);

 private:
  Status WriteInBackground(const ShardRoundMeta& meta, uint64_t keep_from);
  // Deletes the rounds older than `keep_from` and than every chain of a
  // round from keep_from on.
  Status Prune(uint64_t keep_from);
  void JoinWriter();
  static void Unwatch(ShardModel* model);

  static constexpr size_t kChunkBytes = 1u << 20;
  std::unique_ptr<SnapshotStore> store_;
  std::string store_error_;  // why store_ could not be opened
  std::unique_ptr<SnapshotCapture> capture_;
  // The last finished capture, kept for its image buffers (a shard with
  // snapshots holds a second copy of its arrays, as any double buffer).
  std::unique_ptr<SnapshotCapture> spare_capture_;
  // The durable round whose content spare_capture_'s image holds (0: none
  // this life, or the state was rolled back), and how many incremental
  // rounds lead to it from the last full one.
  uint64_t basis_round_ = 0;
  uint32_t chain_ = 0;
  uint32_t full_every_ = 1;
  // Written by writer_ until it signals round_fd_, then read by Finish.
  Report report_;
  int round_fd_ = -1;
  std::thread writer_;
  // Fault injection for tests (env LOCKSTEP_FAULT_ROUND_DELAY_MS): every
  // round's background write starts this late, so a test can kill a
  // server while its round is in flight. 0 (off) in production.
  int fault_delay_ms_ = 0;
};

// Shard `shard`'s Error for the coordinator when Restore of round `round`
// failed (`failed`), logged. Only damage (Corruption: a checksum, a chunk
// that does not decode) makes the coordinator mark the round failed and
// roll back to the one before (RestoreFailed). A round of another job
// (FailedPrecondition: its tensors or optimizer differ:
// RoundIncompatible) is intact, and a store this node cannot read (a
// folder missing or unmounted, the round absent: RoundUnreadable) says
// nothing of the round: both end the job, marking nothing.
zmq::message_t MakeRestoreFailedHeader(const Status& failed, uint64_t round,
                                       uint32_t shard);

// Shard `shard`'s SnapshotDone of `report`, for the coordinator.
zmq::message_t MakeSnapshotDoneHeader(const ShardRounds::Report& report,
                                      uint32_t shard);

}  // namespace lockstep

#endif  // LOCKSTEP_SERVER_SHARD_SHARD_ROUNDS_H_

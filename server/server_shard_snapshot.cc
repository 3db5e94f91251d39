// ServerShard: snapshot rounds (freeze, background write, report) and
// restore from a round at start-up.
#include <sys/eventfd.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "common/clock.h"
#include "common/logging.h"
#include "server/server_shard.h"
#include "server/snapshot/shard_restore.h"
#include "server/store/rocksdb_store.h"

namespace lockstep {
namespace {

std::string ShardStorePath(const std::string& dir, uint32_t shard) {
  return (std::filesystem::path(dir) / ("shard-" + std::to_string(shard)))
      .string();
}

}  // namespace

void ServerShard::OpenSnapshotStore() {
  round_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (const char* delay = std::getenv("LOCKSTEP_FAULT_ROUND_DELAY_MS")) {
    fault_round_delay_ms_ = std::atoi(delay);
    LS_LOG(Warning) << "fault injection: every round's write starts "
                    << fault_round_delay_ms_ << " ms late";
  }
  if (job_.snapshot_dir.empty()) return;
  auto store = RocksDbStore::Open(ShardStorePath(job_.snapshot_dir, shard_));
  if (!store.ok()) {
    store_error_ = store.status().message();
    LS_LOG(Error) << "snapshot rounds will fail: " << store_error_;
    return;
  }
  store_ = std::move(store).value();
}

void ServerShard::DropSnapshotState() {
  JoinRoundWriter();
  if (dense_ != nullptr) dense_->WatchCapture(nullptr, 0);
  if (sparse_ != nullptr) sparse_->WatchCapture(nullptr, 0);
  capture_.reset();
  store_.reset();
  contained_.clear();
  replay_floor_.clear();
}

Status ServerShard::RestoreFromWelcome(uint64_t round, uint32_t shards) {
  if (round > 0) {
    if (job_.snapshot_dir.empty()) {
      return InvalidArgument("welcome asks to restore without a snapshot_dir");
    }
    Status restored =
        RestoreRound(round, shards)
            .WithContext("restoring round " + std::to_string(round));
    if (!restored.ok()) {
      // The coordinator marks the round failed, so the next resume takes
      // the complete round before it.
      SendToCoordinator(
          MakeErrorHeader(wire::ErrorCode::RestoreFailed, restored.message(),
                          round, wire::Role::Server, static_cast<int>(shard_)));
      return restored;
    }
  }
  OpenSnapshotStore();
  if (epoch_ > 0) {
    flatbuffers::FlatBufferBuilder fbb(64);
    auto body = wire::CreateRestored(fbb, epoch_, round, clock_.applied());
    SendToCoordinator(FinishEnvelope(fbb, wire::Body::Restored, body.Union(),
                                     wire::Role::Server,
                                     static_cast<int>(shard_)));
  }
  return Status::Ok();
}

Status ServerShard::RestoreRound(uint64_t round, uint32_t shards) {
  const double start = NowSeconds();
  std::vector<std::unique_ptr<RocksDbStore>> stores;
  std::vector<const SnapshotStore*> sources;
  for (uint32_t k = 0; k < shards; ++k) {
    LS_ASSIGN_OR_RETURN(auto store, RocksDbStore::OpenReadOnly(
                                        ShardStorePath(job_.snapshot_dir, k)));
    sources.push_back(store.get());
    stores.push_back(std::move(store));
  }
  LS_ASSIGN_OR_RETURN(
      const RestoredShard restored,
      RestoreShard(sources, round, layout_, shard_, job_.optimizer,
                   dense_.get(), sparse_.get()));
  clock_.FinishCommit(restored.clock);
  contained_ = restored.contained;
  replay_floor_ = restored.contained;
  const double seconds = NowSeconds() - start;
  LS_LOG(Info) << "restored round " << round << " (clock " << restored.clock
               << ", step " << restored.step << ") from " << shards
               << " shard stores: " << restored.bytes_read / 1e6 << " MB in "
               << seconds << " s";
  return Status::Ok();
}

void ServerShard::StartRound(const wire::SnapshotStart& start) {
  RoundReport failed;
  failed.round = start.round();
  failed.clock = start.clock();
  const std::string name = "round " + std::to_string(start.round());
  if (writer_.joinable()) {
    failed.status = FailedPrecondition(
        name + ": the previous round is still being written");
    SendSnapshotDone(failed);
    return;
  }
  if (store_ == nullptr) {
    failed.status = IOError(name + ": " + store_error_);
    SendSnapshotDone(failed);
    return;
  }
  const double freeze_start = NowSeconds();
  std::vector<CaptureArray> arrays = dense_->SnapshotArrays();
  const size_t dense_arrays = arrays.size();
  if (sparse_ != nullptr) {
    for (CaptureArray& a : sparse_->SnapshotArrays()) {
      arrays.push_back(std::move(a));
    }
  }
  // The last round's image buffers are reused: no fresh pages to map and
  // fault in, none to unmap on this thread.
  capture_ = std::make_unique<SnapshotCapture>(
      std::move(arrays), kSnapshotChunkBytes, spare_capture_.get());
  spare_capture_.reset();
  dense_->WatchCapture(capture_.get(), 0);
  if (sparse_ != nullptr) sparse_->WatchCapture(capture_.get(), dense_arrays);
  ShardRoundMeta meta;
  meta.round = start.round();
  meta.clock = start.clock();
  meta.shard = shard_;
  meta.layout = layout_;
  meta.job = job_;
  meta.optimizer = job_.optimizer;
  meta.state_slots = optimizer_->state_slots();
  meta.step = dense_->step();
  meta.time = dense_->time();
  meta.sparse_rows = sparse_ ? sparse_->rows() : 0;
  meta.contained = contained_;
  meta.unix_time = UnixSeconds();
  round_ = RoundReport();
  round_.round = meta.round;
  round_.clock = meta.clock;
  round_.contained = contained_;
  round_.freeze_ms = (NowSeconds() - freeze_start) * 1e3;
  writer_ = std::thread(
      [this, meta = std::move(meta), keep_from = start.keep_from()] {
        const double begin = NowSeconds();
        capture_->Run();
        round_.status = WriteRoundInBackground(meta, keep_from);
        round_.write_s = NowSeconds() - begin;
        const uint64_t one = 1;
        // Wakes Serve's poll; FinishRound joins this thread.
        [[maybe_unused]] const ssize_t n = write(round_fd_, &one, sizeof(one));
      });
}

Status ServerShard::WriteRoundInBackground(const ShardRoundMeta& meta,
                                           uint64_t keep_from) {
  if (fault_round_delay_ms_ > 0) {
    std::this_thread::sleep_for(
        std::chrono::milliseconds(fault_round_delay_ms_));
  }
  // A round number the coordinator never recorded (its manifest was not
  // updated before a restart) may exist from an earlier life: replace it.
  LS_RETURN_IF_ERROR(store_->DeleteRound(meta.round));
  LS_RETURN_IF_ERROR(WriteShardRound(*store_, meta, *capture_));
  LS_ASSIGN_OR_RETURN(round_.bytes, store_->RoundBytes(meta.round));
  LS_ASSIGN_OR_RETURN(const std::vector<uint64_t> rounds, store_->ListRounds());
  for (uint64_t r : rounds) {
    if (r < keep_from) LS_RETURN_IF_ERROR(store_->DeleteRound(r));
  }
  return Status::Ok();
}

void ServerShard::FinishRound() {
  uint64_t value = 0;
  if (read(round_fd_, &value, sizeof(value)) != sizeof(value)) return;
  writer_.join();
  dense_->WatchCapture(nullptr, 0);
  if (sparse_ != nullptr) sparse_->WatchCapture(nullptr, 0);
  round_.copied_on_apply = capture_->chunks_copied_by_mutator();
  spare_capture_ = std::move(capture_);
  SendSnapshotDone(round_);
}

void ServerShard::SendSnapshotDone(const RoundReport& report) {
  if (!report.status.ok()) {
    LS_LOG(Error) << "snapshot round " << report.round
                  << " failed: " << report.status.message();
  } else {
    LS_LOG(Debug) << "snapshot round " << report.round
                  << " durable: " << report.bytes << " bytes in "
                  << report.write_s << " s";
  }
  flatbuffers::FlatBufferBuilder fbb(256);
  std::vector<flatbuffers::Offset<wire::PushCutEntry>> cut;
  for (const auto& [worker, clock] : report.contained) {
    cut.push_back(wire::CreatePushCutEntry(fbb, worker, clock));
  }
  auto body = wire::CreateSnapshotDone(
      fbb, report.round, shard_, report.clock,
      report.status.ok() ? report.bytes : 0, report.status.ok(),
      fbb.CreateString(report.status.message()), report.freeze_ms,
      report.write_s, report.copied_on_apply, fbb.CreateVector(cut));
  SendToCoordinator(FinishEnvelope(fbb, wire::Body::SnapshotDone, body.Union(),
                                   wire::Role::Server,
                                   static_cast<int>(shard_)));
}

void ServerShard::JoinRoundWriter() {
  if (writer_.joinable()) writer_.join();
  if (round_fd_ >= 0) close(round_fd_);
  round_fd_ = -1;
}

}  // namespace lockstep

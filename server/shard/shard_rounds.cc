#include "server/shard/shard_rounds.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/logging.h"
#include "server/snapshot/round_chain.h"
#include "server/store/rocksdb_store.h"

namespace lockstep {
namespace {

std::string ShardStorePath(const std::string& dir, uint32_t shard) {
  return (std::filesystem::path(dir) / ("shard-" + std::to_string(shard)))
      .string();
}

}  // namespace

ShardRounds::~ShardRounds() { JoinWriter(); }

void ShardRounds::Open(const std::string& dir, uint32_t shard,
                       uint32_t full_every) {
  full_every_ = std::max<uint32_t>(full_every, 1);
  round_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (const char* delay = std::getenv("LOCKSTEP_FAULT_ROUND_DELAY_MS")) {
    fault_delay_ms_ = std::atoi(delay);
    LS_LOG(Warning) << "fault injection: every round's write starts "
                    << fault_delay_ms_ << " ms late";
  }
  if (dir.empty()) return;
  auto store = RocksDbStore::Open(ShardStorePath(dir, shard));
  if (!store.ok()) {
    store_error_ = store.status().message();
    LS_LOG(Error) << "snapshot rounds will fail: " << store_error_;
    return;
  }
  store_ = std::move(store).value();
}

void ShardRounds::Unwatch(ShardModel* model) {
  if (!model->built()) return;
  model->dense().WatchCapture(nullptr, 0);
  if (model->sparse() != nullptr) model->sparse()->WatchCapture(nullptr, 0);
}

void ShardRounds::Drop(ShardModel* model) {
  JoinWriter();
  Unwatch(model);
  capture_.reset();
  store_.reset();
  basis_round_ = 0;  // the model is rolled back: the next round is full
}

StatusOr<RestoredShard> ShardRounds::Restore(const std::string& dir,
                                             uint64_t round, uint32_t shards,
                                             const KeyLayout& layout,
                                             uint32_t shard,
                                             const std::string& optimizer,
                                             ShardModel* model) {
  std::vector<std::unique_ptr<RocksDbStore>> stores;
  std::vector<const SnapshotStore*> sources;
  for (uint32_t k = 0; k < shards; ++k) {
    LS_ASSIGN_OR_RETURN(auto store,
                        RocksDbStore::OpenReadOnly(ShardStorePath(dir, k)));
    sources.push_back(store.get());
    stores.push_back(std::move(store));
  }
  return RestoreShard(sources, round, layout, shard, optimizer, &model->dense(),
                      model->sparse());
}

std::optional<ShardRounds::Report> ShardRounds::Start(ShardRoundMeta meta,
                                                      uint64_t keep_from,
                                                      ShardModel* model) {
  Report failed;
  failed.round = meta.round;
  failed.clock = meta.clock;
  const std::string name = "round " + std::to_string(meta.round);
  if (writer_.joinable()) {
    failed.status = FailedPrecondition(
        name + ": the previous round is still being written");
    return failed;
  }
  if (store_ == nullptr) {
    failed.status = IOError(name + ": " + store_error_);
    return failed;
  }
  const double freeze_start = NowSeconds();
  std::vector<CaptureArray> arrays = model->dense().SnapshotArrays();
  const size_t dense_arrays = arrays.size();
  if (model->sparse() != nullptr) {
    for (CaptureArray& a : model->sparse()->SnapshotArrays()) {
      arrays.push_back(std::move(a));
    }
  }
  // The last round's image buffers are reused: no fresh pages to map and
  // fault in, none to unmap on this thread.
  capture_ = std::make_unique<SnapshotCapture>(std::move(arrays), kChunkBytes,
                                               spare_capture_.get());
  spare_capture_.reset();
  model->dense().WatchCapture(capture_.get(), 0);
  if (model->sparse() != nullptr) {
    model->sparse()->WatchCapture(capture_.get(), dense_arrays);
  }
  // Changes since the last durable round, while the chain is short enough.
  const bool incremental = basis_round_ != 0 && basis_round_ < meta.round &&
                           chain_ + 1 < full_every_;
  meta.parent = incremental ? basis_round_ : 0;
  report_ = Report();
  report_.round = meta.round;
  report_.clock = meta.clock;
  report_.contained = meta.contained;
  report_.freeze_ms = (NowSeconds() - freeze_start) * 1e3;
  writer_ = std::thread([this, meta = std::move(meta), keep_from] {
    const double begin = NowSeconds();
    capture_->Run();
    report_.status = WriteInBackground(meta, keep_from);
    report_.write_s = NowSeconds() - begin;
    const uint64_t one = 1;
    // Wakes the shard's poll; Finish joins this thread.
    [[maybe_unused]] const ssize_t n = write(round_fd_, &one, sizeof(one));
  });
  return std::nullopt;
}

Status ShardRounds::WriteInBackground(const ShardRoundMeta& meta,
                                      uint64_t keep_from) {
  if (fault_delay_ms_ > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(fault_delay_ms_));
  }
  // A round number the coordinator never recorded (its manifest was not
  // updated before a restart) may exist from an earlier life: replace it.
  LS_RETURN_IF_ERROR(store_->DeleteRound(meta.round));
  ShardRoundMeta written;
  LS_RETURN_IF_ERROR(WriteShardRound(*store_, meta, *capture_, &written));
  report_.parent = written.parent;
  LS_ASSIGN_OR_RETURN(report_.bytes, store_->RoundBytes(meta.round));
  return Prune(keep_from);
}

Status ShardRounds::Prune(uint64_t keep_from) {
  LS_ASSIGN_OR_RETURN(const std::vector<uint64_t> rounds, store_->ListRounds());
  uint64_t needed = keep_from;
  for (uint64_t r : rounds) {
    if (r < keep_from) continue;
    auto chain = ReadRoundChain(*store_, r);
    if (!chain.ok()) {
      // A round that cannot be read whole (one of an earlier life built on
      // a number since reused) holds nothing to keep; it is not restored,
      // and its number is replaced when it comes up again.
      LS_LOG(Warning) << "round " << r << " is not kept for pruning: "
                      << chain.status().message();
      continue;
    }
    needed = std::min(needed, chain->front().round);
  }
  for (uint64_t r : rounds) {
    if (r < needed) LS_RETURN_IF_ERROR(store_->DeleteRound(r));
  }
  return Status::Ok();
}

std::optional<ShardRounds::Report> ShardRounds::Finish(ShardModel* model) {
  uint64_t value = 0;
  if (read(round_fd_, &value, sizeof(value)) != sizeof(value)) {
    return std::nullopt;
  }
  writer_.join();
  Unwatch(model);
  report_.copied_on_apply = capture_->chunks_copied_by_mutator();
  spare_capture_ = std::move(capture_);
  if (report_.status.ok()) {
    chain_ = report_.parent == 0 ? 0 : chain_ + 1;
    basis_round_ = report_.round;
  } else {
    basis_round_ = 0;  // its image is not in the store
  }
  return report_;
}

void ShardRounds::JoinWriter() {
  if (writer_.joinable()) writer_.join();
  if (round_fd_ >= 0) close(round_fd_);
  round_fd_ = -1;
}

zmq::message_t MakeRestoreFailedHeader(const Status& failed, uint64_t round,
                                       uint32_t shard) {
  const StatusCode code = failed.code();
  const auto error = code == StatusCode::kCorruption
                         ? wire::ErrorCode::RestoreFailed
                     : code == StatusCode::kFailedPrecondition
                         ? wire::ErrorCode::RoundIncompatible
                         : wire::ErrorCode::RoundUnreadable;
  const Status said =
      failed.WithContext("restoring round " + std::to_string(round));
  LS_LOG(Error) << said.message()
                << (error == wire::ErrorCode::RestoreFailed
                        ? "; the coordinator rolls back to the round before it"
                        : "; the coordinator ends the job");
  return MakeErrorHeader(error, said.message(), round, wire::Role::Server,
                         static_cast<int>(shard));
}

zmq::message_t MakeSnapshotDoneHeader(const ShardRounds::Report& report,
                                      uint32_t shard) {
  flatbuffers::FlatBufferBuilder fbb(256);
  std::vector<flatbuffers::Offset<wire::PushCutEntry>> cut;
  for (const auto& [worker, clock] : report.contained) {
    cut.push_back(wire::CreatePushCutEntry(fbb, worker, clock));
  }
  auto body = wire::CreateSnapshotDone(
      fbb, report.round, shard, report.clock,
      report.status.ok() ? report.bytes : 0, report.status.ok(),
      fbb.CreateString(report.status.message()), report.freeze_ms,
      report.write_s, report.copied_on_apply, fbb.CreateVector(cut));
  return FinishEnvelope(fbb, wire::Body::SnapshotDone, body.Union(),
                        wire::Role::Server, static_cast<int>(shard));
}

}  // namespace lockstep

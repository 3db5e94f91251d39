#include "server/shard/shard_updater.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "common/logging.h"

namespace lockstep {

void ShardUpdater::Reset(const JobConfig& job, bool on_arrival,
                         const LrSchedule& schedule) {
  on_arrival_ = on_arrival;
  schedule_ = schedule;
  arrival_ = ArrivalClock(job.GlobalBatch());
  contained_.clear();
  replay_floor_.clear();
}

void ShardUpdater::Restored(const RestoredShard& restored) {
  clock_->FinishCommit(restored.clock);
  contained_ = restored.contained;
  replay_floor_ = restored.contained;
}

void ShardUpdater::Start(int64_t eval_every) {
  arrival_.Restore(model_->dense().time());
  images_->Restart(eval_every, Progress());
}

int64_t ShardUpdater::Progress() const {
  return on_arrival_ ? arrival_.clock() : clock_->applied() + 1;
}

void ShardUpdater::ReachedProgress() {
  images_->Reached(Progress(), model_->dense(), model_->sparse());
}

StatusOr<std::optional<uint32_t>> ShardUpdater::ApplyCommit(
    const wire::Commit& commit) {
  const int64_t clock = commit.clock();
  if (clock_->IsApplied(clock)) return std::optional<uint32_t>();
  std::vector<uint32_t> workers, missing;
  if (commit.workers() != nullptr) {
    workers.assign(commit.workers()->begin(), commit.workers()->end());
  }
  const std::vector<const BufferedPush*> pushes =
      clock_->Committed(clock, workers, &missing);
  for (uint32_t w : missing) {
    LS_LOG(Warning) << "commit of clock " << clock << " names worker " << w
                    << " whose push never arrived";
  }
  return Settle(commit, static_cast<uint32_t>(pushes.size()),
                [&](const UpdateStep& step) {
                  return model_->ApplyPushes(pushes, step);
                });
}

StatusOr<std::optional<uint32_t>> ShardUpdater::ApplyReplicatedCommit(
    const wire::Commit& commit, uint32_t pushes,
    const ShardModel::Gradient& gradient) {
  if (clock_->IsApplied(commit.clock())) return std::optional<uint32_t>();
  return Settle(commit, pushes, [&](const UpdateStep& step) {
    return pushes == 0 ? Status::Ok() : model_->ApplyGradient(gradient, step);
  });
}

StatusOr<std::optional<uint32_t>> ShardUpdater::Settle(
    const wire::Commit& commit, uint32_t pushes,
    const std::function<Status(const UpdateStep&)>& apply) {
  const int64_t clock = commit.clock();
  DenseStore& dense = model_->dense();
  // The commit of clock c is the store's whole step c + 1 (its time counts
  // the clocks applied, restored from rounds too).
  const auto number = static_cast<int64_t>(std::llround(dense.time())) + 1;
  if (dense.time() != std::floor(dense.time()) && !warned_partial_clock_) {
    // A round taken under an apply-on-arrival policy inside a logical
    // clock: its open clock's shares stay in the weights.
    LS_LOG(Warning) << "the restored state is " << dense.time()
                    << " clocks in; commits count from clock " << number;
    warned_partial_clock_ = true;
  }
  LS_RETURN_IF_ERROR(
      apply(UpdateStep::Whole(schedule_.RateAt(commit.clock()), number)));
  if (pushes > 0) {
    dense.set_step(dense.step() + 1);
    dense.set_time(static_cast<double>(number));
  }
  // Everything up to this clock is settled; late pushes get dropped.
  clock_->FinishCommit(clock, pushes);
  ReachedProgress();
  SetLogClock(clock);
  return std::optional<uint32_t>(pushes);
}

void ShardUpdater::ApplyOnArrival(const BufferedPush& record, int64_t clock,
                                  int64_t staleness) {
  // One push is a share n_w / X of the logical clock it lands in; the
  // optimizer's state moves once per logical clock (ArrivalClock,
  // UpdateStep), so a clock's pushes computed at one pull move the model
  // exactly as BSP's step does, for every optimizer.
  // The data path checked every frame against the header, so this cannot
  // fail short of a bug; the ack already said Applied.
  Status applied = arrival_.Apply(
      record.batch, clock_->GradScale(staleness), schedule_,
      [&](const UpdateStep& share) {
        return model_->ApplyPushes({&record}, share);
      },
      [&](double lr, int64_t number) { return CloseLogicalClock(lr, number); });
  // Pieces applied before a failure stay applied, and count.
  DenseStore& dense = model_->dense();
  dense.set_time(arrival_.time());
  if (!applied.ok()) {
    LS_LOG(Error) << "admitted push not applied: " << applied.message();
    clock_->CountDrop();
    return;
  }
  dense.set_step(dense.step() + 1);
  clock_->MarkApplied(clock);
  int64_t& newest =
      contained_[static_cast<uint32_t>(record.msg.envelope->sender_rank())];
  newest = std::max(newest, clock);
}

Status ShardUpdater::CloseLogicalClock(double lr, int64_t number) {
  LS_RETURN_IF_ERROR(model_->CloseClock(lr, number));
  // ArrivalClock advanced before the close: Progress() is `number`.
  ReachedProgress();
  return Status::Ok();
}

bool ShardUpdater::AlreadyContained(uint32_t worker, int64_t clock) {
  auto it = replay_floor_.find(worker);
  if (it == replay_floor_.end()) return false;
  if (clock > it->second) {
    replay_floor_.erase(it);
    return false;
  }
  if (replays_skipped_++ == 0) {
    LS_LOG(Info) << "worker " << worker << " pushed clock " << clock
                 << " again, which the restored round holds: skipped";
  }
  return true;
}

}  // namespace lockstep

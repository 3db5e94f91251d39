// A shard's commit path: what its model applies and when. Under BSP-like
// policies a commit applies the committed clock's buffered pushes as one
// whole step; on arrival (SSP, ASP) each admitted push is applied as
// shares of the logical clocks it lands in (ArrivalClock), and a logical
// clock's close replaces the shares' provisional directions with one
// whole step. It keeps the shard's progress (whole clocks of global
// progress the state holds), which the evaluator's images follow, and
// which pushes the state holds (per worker, the newest clock applied; a
// restored round's, so a resumed worker's repeat is not applied twice).
// Thread-safety: not thread-safe; the shard's thread, or its background
// apply while the shard's thread waits for it.
#ifndef LOCKSTEP_SERVER_SHARD_SHARD_UPDATER_H_
#define LOCKSTEP_SERVER_SHARD_SHARD_UPDATER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>

#include "common/job_config.h"
#include "common/lr_schedule.h"
#include "common/status.h"
#include "common/wire/message.h"
#include "server/model/shard_model.h"
#include "server/shard/arrival_clock.h"
#include "server/shard/eval_images.h"
#include "server/shard/shard_clock.h"
#include "server/snapshot/shard_restore.h"

namespace lockstep {

class ShardUpdater {
 public:
  // The objects it updates, owned by the shard and outliving this.
  ShardUpdater(ShardModel* model, ShardClock* clock, EvalImages* images)
      : model_(model), clock_(clock), images_(images) {}

  // A new job or a rollback's timeline: forgets which pushes were applied.
  // `schedule` gives the rate of every step it applies.
  void Reset(const JobConfig& job, bool on_arrival, const LrSchedule& schedule);
  // A resumed coordinator adopted this state under a job whose learning
  // rate may differ: steps from now on follow `schedule`.
  void set_schedule(const LrSchedule& schedule) { schedule_ = schedule; }
  // The model now holds `restored` (a snapshot round): its clock is
  // committed, and the pushes it holds are never applied again.
  void Restored(const RestoredShard& restored);
  // After the model is built and maybe restored: the logical clock and the
  // evaluation images start from the state's time (a restored point is not
  // taken again; a rollback's other timeline goes).
  void Start(int64_t eval_every);

  // Whole clocks of global progress the state holds: the commits applied,
  // or on arrival the logical clocks completed.
  int64_t Progress() const;

  // Applies the commit's pushes (ShardClock::Committed) as one whole step.
  // Returns how many pushes it applied, or nullopt for a commit already
  // applied (a repeat); errors: the apply's.
  StatusOr<std::optional<uint32_t>> ApplyCommit(const wire::Commit& commit);
  // On a backup: the commit its primary applied as `gradient`, the mean
  // of `pushes` pushes (ShardModel::applied_gradient), with the same
  // bookkeeping. Returns as ApplyCommit.
  StatusOr<std::optional<uint32_t>> ApplyReplicatedCommit(
      const wire::Commit& commit, uint32_t pushes,
      const ShardModel::Gradient& gradient);
  // Applies an admitted push of `clock` on arrival, its gradient weighed by
  // its staleness where the policy asks for it. The ack already said
  // Applied, so a failure (a bug) is logged and counted as a drop.
  void ApplyOnArrival(const BufferedPush& record, int64_t clock,
                      int64_t staleness);
  // Whether the restored round already holds `worker`'s push of `clock`:
  // a resumed worker may push such a clock again (it restarts where the
  // policy's clock table had it, which can be behind this shard's cut); it
  // is acknowledged as applied and skipped. A worker's entry goes once it
  // pushes a later clock.
  bool AlreadyContained(uint32_t worker, int64_t clock);
  // Apply-on-arrival: per worker, the newest clock whose push is applied.
  const std::map<uint32_t, int64_t>& contained() const { return contained_; }

 private:
  // A commit's update (`apply`, of `pushes` pushes) and what follows it:
  // the store's step and time, the clock settled, evaluation images.
  StatusOr<std::optional<uint32_t>> Settle(
      const wire::Commit& commit, uint32_t pushes,
      const std::function<Status(const UpdateStep&)>& apply);
  // Ends logical clock `number` - 1 (ArrivalClock's CloseFn).
  Status CloseLogicalClock(double lr, int64_t number);
  // After the state advanced: the evaluation image of a point it reached.
  void ReachedProgress();

  ShardModel* model_;
  ShardClock* clock_;
  EvalImages* images_;
  bool on_arrival_ = false;
  LrSchedule schedule_;
  ArrivalClock arrival_;
  std::map<uint32_t, int64_t> contained_;
  // After a restore: per worker, the newest clock the restored round holds.
  std::map<uint32_t, int64_t> replay_floor_;
  uint64_t replays_skipped_ = 0;
  bool warned_partial_clock_ = false;
};

}  // namespace lockstep

#endif  // LOCKSTEP_SERVER_SHARD_SHARD_UPDATER_H_

// A shard's global progress under the apply-on-arrival policies (SSP, ASP),
// counted in samples applied: logical clock k spans samples [k X, (k + 1) X)
// of the global batch X. A push of n_w samples is a share n_w / X of the
// logical clock it lands in (cut in two where it straddles a boundary),
// and the optimizer's state, the learning-rate schedule and Adam's bias
// corrections advance once per logical clock, when its shares sum to 1
// (UpdateStep in optimizers/optimizer.h). So the schedule follows
// the job's global progress, not the pushing worker's own clock, and a
// fast worker's pushes are steps of the same clocks as everyone else's.
// Progress is kept in whole samples, so boundaries are exact for any X.
// Thread-safety: not thread-safe; owned by the shard's thread.
#ifndef LOCKSTEP_SERVER_SHARD_ARRIVAL_CLOCK_H_
#define LOCKSTEP_SERVER_SHARD_ARRIVAL_CLOCK_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "common/lr_schedule.h"
#include "common/status.h"
#include "optimizers/optimizer.h"

namespace lockstep {

class ArrivalClock {
 public:
  // A part of a push that lies within one logical clock.
  struct Piece {
    int64_t clock = 0;     // the logical clock it lands in (0-based)
    uint32_t samples = 0;  // > 0
    double fraction = 0;   // samples / X
    bool closes = false;   // it completes its clock
  };
  // Applies a share (an UpdateStep of kind kShare) of the push being
  // applied to the shard's state.
  using ShareFn = std::function<Status(const UpdateStep& share)>;
  // Ends logical clock `number` - 1 at rate `lr` (UpdateStep::Close).
  using CloseFn = std::function<Status(double lr, int64_t number)>;

  // REQUIRES: global_batch >= 1.
  explicit ArrivalClock(uint64_t global_batch = 1);

  uint64_t global_batch() const { return global_batch_; }
  uint64_t samples() const { return samples_; }
  // The logical clock the next sample lands in: whole clocks applied.
  int64_t clock() const {
    return static_cast<int64_t>(samples_ / global_batch_);
  }
  // The clocks' worth of samples applied, samples() / X (DenseStore::time).
  double time() const;
  // Continues from a round's time(), rounded to whole samples.
  void Restore(double time);

  // How a push of `batch` samples falls into logical clocks from here:
  // at most ceil(batch / X) + 1 pieces, their samples summing to batch.
  std::vector<Piece> Cut(uint32_t batch) const;
  // Applies a push of `batch` samples, its gradient weighed by
  // `grad_scale`: per piece, `share` at the schedule's rate for the piece's
  // logical clock, then, when the piece completes its clock, `close` at
  // that rate; progress advances piece by piece. Stops at the first error
  // (the pieces before it stay applied).
  Status Apply(uint32_t batch, double grad_scale, const LrSchedule& schedule,
               const ShareFn& share, const CloseFn& close);

 private:
  uint64_t global_batch_;
  uint64_t samples_ = 0;
};

}  // namespace lockstep

#endif  // LOCKSTEP_SERVER_SHARD_ARRIVAL_CLOCK_H_

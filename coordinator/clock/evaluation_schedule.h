// Which evaluations of a job are due, for its out-of-band evaluator (a
// process of its own: no training worker pays for evaluation). A point p
// is the model after p clocks of global progress, p a multiple of
// eval_every: under BSP-like policies after the commit of clock p - 1,
// under apply-on-arrival policies once p x X samples are applied. Every
// server shard keeps an image of its part of the model at each point until
// the evaluator reads it (server/shard/eval_images.h), so
// the evaluator reads exactly the model at p however far training has
// moved on; training never waits for it. The time a point was reached is
// kept for the run's records, so time to target is the training time at
// which the model was that good, not when its evaluation ended.
// Thread-safety: not thread-safe; owned by the coordinator's event loop.
#ifndef LOCKSTEP_COORDINATOR_CLOCK_EVALUATION_SCHEDULE_H_
#define LOCKSTEP_COORDINATOR_CLOCK_EVALUATION_SCHEDULE_H_

#include <cstdint>
#include <deque>
#include <map>
#include <optional>

namespace lockstep {

class EvaluationSchedule {
 public:
  // Due points that may wait for the evaluator besides the one it reads:
  // each shard keeps kMaxWaiting + 1 images (EvalImages::kCapacity). An
  // evaluator further behind skips the oldest points (counted in
  // skipped()), so it always reads the newest ones.
  static constexpr size_t kMaxWaiting = 1;

  // No points when every <= 0.
  explicit EvaluationSchedule(int64_t every = 0) : every_(every) {}

  int64_t every() const { return every_; }
  // Global progress reached `progress` clocks at `wall_s` (training time):
  // every point up to it is due, reached then. `progress` may repeat or
  // stay; a point is due once.
  void Reached(int64_t progress, double wall_s);
  // The oldest due point not handed out yet, now handed out; nullopt when
  // none is due.
  std::optional<int64_t> TakeNext();
  // When `point` was reached; nullopt for a point never reached (or one
  // forgotten by Rewind). Kept until Reported.
  std::optional<double> ReachedAt(int64_t point) const;
  // The evaluation of `point` arrived: its time is no longer needed.
  void Reported(int64_t point) { reached_at_.erase(point); }
  // Training (re)starts from the state after `progress` clocks (a resumed
  // job, a rollback): points up to it are not due (they belong to the
  // timeline before), points after it are forgotten until training
  // reaches them again.
  void StartAt(int64_t progress);
  // Due points not handed out yet.
  size_t waiting() const { return due_.size(); }
  uint64_t skipped() const { return skipped_; }

 private:
  int64_t every_;
  int64_t last_due_ = 0;  // the newest point made due
  std::deque<int64_t> due_;
  std::map<int64_t, double> reached_at_;
  uint64_t skipped_ = 0;
};

}  // namespace lockstep

#endif  // LOCKSTEP_COORDINATOR_CLOCK_EVALUATION_SCHEDULE_H_

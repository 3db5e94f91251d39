// The job's evaluations: the out-of-band evaluator's points as training
// reaches them (EvaluationSchedule), and the end of training - once every
// live worker finished, the evaluator (or, without one, the lowest-ranked
// worker) is asked to evaluate the final model, and the job ends when the
// peer asked for it reports. Driven by the ClockDriver, which owns it.
// Thread-safety: not thread-safe; the coordinator's thread owns it.
#ifndef LOCKSTEP_COORDINATOR_CLOCK_EVALUATION_DRIVER_H_
#define LOCKSTEP_COORDINATOR_CLOCK_EVALUATION_DRIVER_H_

#include <cstdint>
#include <functional>
#include <string>

#include "common/wire/message.h"
#include "coordinator/clock/clock_listener.h"
#include "coordinator/clock/evaluation_schedule.h"
#include "coordinator/state/membership.h"
#include "coordinator/state/outbox.h"
#include "coordinator/state/run_recorder.h"

namespace lockstep {

class EvaluationDriver {
 public:
  // Every reference outlives the driver; `final_model_clock` gives the
  // clock a pull of the final model names.
  EvaluationDriver(Membership& members, Outbox& outbox, RunRecorder& recorder,
                   const ClockListener& listener,
                   std::function<int64_t()> final_model_clock)
      : members_(members),
        outbox_(outbox),
        recorder_(recorder),
        listener_(listener),
        final_model_clock_(std::move(final_model_clock)) {}

  // A job that evaluates every `eval_every` clocks (0: no evaluator).
  void Start(int64_t eval_every) { schedule_ = EvaluationSchedule(eval_every); }
  // Evaluation points resume after `progress` whole clocks.
  void StartAt(int64_t progress) { schedule_.StartAt(progress); }
  // A new timeline (a recovery): training's end is undone, the final
  // evaluation asked again later.
  void Restart();
  // The peer `id` is gone: if it was asked for the final evaluation,
  // another will be (MaybeRequestFinal).
  void Forget(const std::string& id);

  // Global progress reached `progress` whole clocks: evaluation points up
  // to it are due now.
  void Reached(int64_t progress);
  // The evaluator asks for its next point (`peer.pending_admit` holds it).
  void HandleAdmit(Peer& peer, int64_t clock);
  // An evaluation from `id`.
  void HandleEvaluation(const std::string& id, const wire::Evaluation& eval);
  // Answers the evaluator's pending Admit: the next due point, or the
  // final evaluation once training is over and no point is left.
  void AnswerEvaluator();
  // Once every live worker finished: training is over, and the evaluator
  // (or, without one, the lowest-ranked worker; again if the one asked
  // died) is asked for the final evaluation.
  void MaybeRequestFinal();

  bool training_over() const { return training_over_; }
  // The evaluation of the final model came from the peer asked for it.
  bool final_eval_received() const { return final_eval_received_; }

 private:
  Membership& members_;
  Outbox& outbox_;
  RunRecorder& recorder_;
  const ClockListener& listener_;
  std::function<int64_t()> final_model_clock_;
  EvaluationSchedule schedule_;  // the evaluator's points due
  // Every live worker finished its last clock (MaybeRequestFinal).
  bool training_over_ = false;
  // The peer asked for the final evaluation ("" until then, or if it died).
  std::string final_evaluator_;
  bool final_eval_received_ = false;
};

}  // namespace lockstep

#endif  // LOCKSTEP_COORDINATOR_CLOCK_EVALUATION_DRIVER_H_

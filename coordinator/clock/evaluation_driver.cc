#include "coordinator/clock/evaluation_driver.h"

#include <optional>

#include "common/logging.h"
#include "common/wire/worker_messages.h"

namespace lockstep {

namespace {

// An Admission asking `peer` to evaluate the model at `clock` (`final`:
// the final model).
zmq::message_t EvaluateAdmission(int64_t clock, bool final) {
  AdmissionFields admission;
  admission.clock = clock;
  admission.go = !final;
  admission.finished = final;
  admission.evaluate = true;
  return MakeAdmissionHeader(admission);
}

}  // namespace

void EvaluationDriver::Restart() {
  final_eval_received_ = false;
  final_evaluator_.clear();
  training_over_ = false;
}

void EvaluationDriver::Forget(const std::string& id) {
  if (id == final_evaluator_) final_evaluator_.clear();
}

void EvaluationDriver::Reached(int64_t progress) {
  schedule_.Reached(progress, recorder_.WallSeconds());
  AnswerEvaluator();
}

void EvaluationDriver::HandleAdmit(Peer& peer, int64_t clock) {
  peer.pending_admit = clock;  // evaluation points come in order
  AnswerEvaluator();
}

void EvaluationDriver::HandleEvaluation(const std::string& id,
                                        const wire::Evaluation& eval) {
  const bool final = eval.final();
  const int64_t clock = eval.clock();
  // A point's time is when training reached it; the final model's, when
  // training ended.
  const double reached =
      final ? recorder_.TrainSeconds()
            : schedule_.ReachedAt(clock).value_or(recorder_.WallSeconds());
  schedule_.Reported(clock);
  recorder_.RecordEvaluation(clock, eval.test_loss(), eval.test_accuracy(),
                             final, eval.seconds(), reached);
  LS_LOG(Info) << "evaluation at clock " << clock << ": test loss "
               << eval.test_loss() << ", test accuracy " << eval.test_accuracy()
               << " over " << eval.samples() << " samples (" << eval.seconds()
               << " s" << (final ? ", final)" : ")");
  // The job ends (TrainingDone) only on the final evaluation of the peer
  // asked for it, i.e. of the model where training ended.
  if (final && id == final_evaluator_) final_eval_received_ = true;
}

void EvaluationDriver::AnswerEvaluator() {
  Peer* peer = members_.evaluator();
  if (peer == nullptr) return;
  // During a recovery the evaluator is not answered: the shards are
  // rolling back, and it gets a new Start when the recovery ends.
  if (!peer->pending_admit || !peer->started || listener_.Paused()) return;
  std::optional<int64_t> point = schedule_.TakeNext();
  const bool final = !point && training_over_;
  if (!point && !final) return;
  peer->pending_admit.reset();
  const std::string& id = members_.evaluator_id();
  if (final) {
    final_evaluator_ = id;
    LS_LOG(Info) << "training is over; the evaluator runs the final "
                    "evaluation";
  }
  outbox_.Send(id,
               EvaluateAdmission(point.value_or(final_model_clock_()), final));
}

void EvaluationDriver::MaybeRequestFinal() {
  if (final_eval_received_ || !final_evaluator_.empty() ||
      !members_.AllWorkersFinished()) {
    return;
  }
  // Training time stops when the last worker finished, before the final
  // evaluation, so the rates and time to target leave evaluation out.
  if (!training_over_) {
    training_over_ = true;
    recorder_.EndTraining();
  }
  const Peer* evaluator = members_.evaluator();
  if (evaluator != nullptr && evaluator->started) {
    AnswerEvaluator();  // its last points first, then the final model
    return;
  }
  // Without an evaluator, a worker evaluates the final model: training is
  // over, so nobody waits for it.
  const int rank = members_.LowestWorker();
  for (const auto& id : members_.worker_ids()) {
    if (members_.at(id).rank != rank) continue;
    final_evaluator_ = id;
    outbox_.Send(id, EvaluateAdmission(final_model_clock_(), /*final=*/true));
  }
  LS_LOG(Info) << "every worker finished; worker " << rank
               << " runs the final evaluation";
}

}  // namespace lockstep

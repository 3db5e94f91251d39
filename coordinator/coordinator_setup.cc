// Coordinator: setting the job up — the workers' descriptions, the layout,
// the start of training, and workers joining a running job.
#include "common/job_fields.h"
#include "common/logging.h"
#include "common/wire/job_config_codec.h"
#include "common/wire/job_shape_codec.h"
#include "common/wire/layout_codec.h"
#include "coordinator/coordinator.h"

namespace lockstep {

void Coordinator::HandleDescribe(const std::string& id, Peer& peer,
                                 const wire::Describe& describe) {
  if (!peer.welcomed || peer.started) {
    RejectBadMessage(id, FailedPrecondition("describe out of turn"));
    return;
  }
  auto shape = JobShapeFromWire(&describe);
  if (!shape.ok()) {
    RejectBadMessage(id, shape.status());
    return;
  }
  TightenWorkerCaps(describe.capabilities(), &peer.caps);
  const bool evaluator = peer.role == wire::Role::Evaluator;
  const auto rank =
      evaluator ? kEvaluatorShapeKey : static_cast<uint32_t>(peer.rank);
  if (!training_) {
    Status agreed = shapes_.Add(rank, *shape);
    if (!agreed.ok()) {
      abort_status_ = agreed;
      return;
    }
    LS_LOG(Info) << (evaluator ? "the evaluator"
                               : "worker " + std::to_string(rank))
                 << " described " << shape->model.dense_params()
                 << " dense parameters and " << shape->data.train_samples
                 << " training samples";
    StartTrainingIfReady();
    return;
  }
  const std::string diff = ShapeDifference(*shape, *shapes_.agreed());
  if (!diff.empty()) {
    const std::string why = "describes a different job (" + diff + ")";
    Reply(id,
          MakeErrorHeader(wire::ErrorCode::BadRequest, "this process " + why, 0,
                          wire::Role::Coordinator, 0));
    if (evaluator) {
      RemoveEvaluator(id, why);
    } else {
      RemoveWorker(id, why);
    }
    return;
  }
  if (evaluator) {
    // A late (or restarted) evaluator reads the points due from now on.
    (void)shapes_.Add(kEvaluatorShapeKey, *shape);
    SendStart(id, peer);
    return;
  }
  JoinRunningJob(id, peer);
}

void Coordinator::HandleWorkerError(const std::string& id, Peer& peer,
                                    const std::string& message) {
  const std::string who = peer.role == wire::Role::Evaluator
                              ? std::string("the evaluator")
                              : "worker " + std::to_string(peer.rank);
  const std::string why = who + " on " + peer.host + " cannot join: " + message;
  if (training_ && peer.role == wire::Role::Evaluator) {
    RemoveEvaluator(id, why);
    return;
  }
  if (training_) {
    // A late joiner that cannot run: the job goes on without it.
    RemoveWorker(id, why);
    return;
  }
  // Every worker runs the same job, so none of them could run it.
  abort_status_ = FailedPrecondition(why);
}

void Coordinator::StartTrainingIfReady() {
  if (training_ || !abort_status_.ok() ||
      server_ids_.size() < options_.job.servers || !workers_welcomed_ ||
      worker_ids_.size() < options_.job.workers ||
      !shapes_.Complete(WorkerRanks()) || !EvaluatorReady()) {
    return;
  }
  Status started = StartTraining();
  if (!started.ok())
    abort_status_ = started.WithContext("cannot start the job");
}

Status Coordinator::StartTraining() {
  const JobShape& shape = *shapes_.agreed();
  JobConfig& job = options_.job;
  LS_RETURN_IF_ERROR(ResolveJob(shape.data, &job));
  LS_ASSIGN_OR_RETURN(
      schedule_, LrSchedule::Parse(job.lr_schedule, job.lr, job.max_clocks));
  LS_ASSIGN_OR_RETURN(layout_,
                      KeyLayout::Build(shape.model.tensors, job.servers,
                                       shape.model.sparse_dim));
  AssignRanks(server_ids_);
  for (const auto& id : server_ids_) {
    layout_.set_endpoint(peers_[id].rank, peers_[id].endpoint);
  }
  recorder_->SetJob(job);
  budget_ =
      SampleBudget(static_cast<uint64_t>(job.max_clocks) * job.GlobalBatch());
  evaluations_ = EvaluationSchedule(job.evaluators > 0 ? job.eval_every : 0);
  if (restore_) {
    ResumePolicy(*restore_);
    LS_LOG(Info) << "resuming from snapshot round " << restore_->round
                 << " at clock " << restore_->clock + 1;
  }
  for (const auto& id : server_ids_) SendWelcome(id, peers_[id]);
  for (const auto& id : worker_ids_) {
    Peer& peer = peers_[id];
    policy_->OnWorkerJoined(static_cast<uint32_t>(peer.rank), 0, peer.caps);
    SendStart(id, peer);
  }
  if (!evaluator_id_.empty()) SendStart(evaluator_id_, peers_[evaluator_id_]);
  training_ = true;
  LS_LOG(Info) << "all " << job.servers << " servers and " << job.workers
               << " workers ready; training " << job.model << " ("
               << layout_.dense_keys() << " dense keys) under "
               << policy_->name() << " for " << job.max_clocks << " clocks";
  return Status::Ok();
}

void Coordinator::JoinRunningJob(const std::string& id, Peer& peer) {
  const int64_t clock = policy_->CurrentClock();
  Timed([&] {
    policy_->OnWorkerJoined(static_cast<uint32_t>(peer.rank), clock, peer.caps);
    return 0;
  });
  LS_LOG(Warning) << "worker " << peer.rank << " on " << peer.host
                  << " joined the running job at clock " << clock;
  SendStart(id, peer);
}

void Coordinator::SendStart(const std::string& id, Peer& peer) {
  flatbuffers::FlatBufferBuilder fbb(4096);
  auto job = JobConfigToWire(fbb, options_.job);
  auto layout = LayoutToWire(fbb, layout_);
  auto body =
      wire::CreateStart(fbb, job, layout, epoch_, policy_->CurrentClock());
  Reply(id, FinishEnvelope(fbb, wire::Body::Start, body.Union(),
                           wire::Role::Coordinator, 0));
  peer.started = true;
}

}  // namespace lockstep

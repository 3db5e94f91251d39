#include "coordinator/enrollment/enrollment.h"

#include "common/clock.h"
#include "common/job_fields.h"
#include "common/job_resume.h"
#include "common/logging.h"
#include "common/wire/job_shape_codec.h"
#include "common/wire/message.h"
#include "common/wire/placement_messages.h"
#include "coordinator/enrollment/resume_point.h"

namespace lockstep {

void Enrollment::RegisterPeer(const std::string& id, const wire::Register& reg,
                              int64_t credential) {
  const bool is_server = reg.role() == wire::Role::Server;
  const int hint = reg.rank_hint();
  // Before the count below: a new process for a rank (or a credential)
  // still registered would otherwise be refused as one worker too many.
  if (!is_server && members_.workers_welcomed() &&
      !ReplaceWorker(id, hint >= 0 ? members_.WorkerOfRank(hint) : std::nullopt,
                     "worker " + std::to_string(hint))) {
    return;
  }
  if (!is_server &&
      !ReplaceWorker(id, members_.WorkerOfCredential(credential),
                     "worker credential " + std::to_string(credential))) {
    return;
  }
  const size_t have =
      is_server ? members_.server_ids().size() : members_.worker_ids().size();
  // Once training runs, workers may join up to the job's maximum.
  const uint32_t want = is_server   ? job_.servers
                        : training_ ? job_.MaxWorkers()
                                    : job_.workers;
  if (have >= want || (training_ && is_server)) {
    return Refuse(id, std::string("job already has all its ") +
                          (is_server ? "servers" : "workers"));
  }
  if (is_server && flatbuffers::GetString(reg.endpoint()).empty()) {
    host_.RejectBadMessage(
        id, InvalidArgument("server registered without endpoint"));
    return;
  }
  // A worker's liveness counts from here (it is never exempt, unlike a
  // server waiting for its Welcome: Membership::FindSilent).
  Peer peer;
  peer.role = reg.role();
  peer.last_seen_ms = NowMillis();
  peer.rank_hint = hint;
  peer.credential = is_server ? -1 : credential;
  peer.endpoint = flatbuffers::GetString(reg.endpoint());
  peer.host = flatbuffers::GetString(reg.host());
  peer.applied_clock = is_server ? reg.applied_clock() : -1;
  TightenWorkerCaps(reg.capabilities(), &peer.caps);
  members_.Add(id, peer);
  LS_LOG(Info) << RoleName(reg.role()) << " registered from "
               << flatbuffers::GetString(reg.host()) << " pid " << reg.pid()
               << " (" << members_.server_ids().size() << "/" << job_.servers
               << " servers, " << members_.worker_ids().size() << "/"
               << job_.workers << " workers)";
  if (!is_server && members_.workers_welcomed()) {
    // A re-join or a replacement: the others already have their ranks.
    Peer& joiner = members_.at(id);
    joiner.rank = members_.FreeWorkerRank(id);
    SendWelcome(id, joiner);
    return;
  }
  // The last server to register may be what the start waited for, when
  // every worker has already described itself.
  WelcomeWorkersIfReady();
  StartTrainingIfReady();
}

void Enrollment::RegisterEvaluator(const std::string& id,
                                   const wire::Register& reg) {
  if (job_.evaluators == 0) {
    return Refuse(id, "this job runs without an evaluator (--evaluators 0)");
  }
  // A new evaluator process replaces the old one (restarted by a
  // supervisor before it was declared dead) once the old one's connection
  // closed; never a live one.
  if (!members_.evaluator_id().empty() &&
      outbox_.Connected(std::string(members_.evaluator_id()))) {
    return Refuse(id, "the evaluator is held by a live process");
  }
  if (!members_.evaluator_id().empty()) {
    RemoveEvaluator(std::string(members_.evaluator_id()),
                    "replaced by a new evaluator process");
  }
  Peer peer;
  peer.role = wire::Role::Evaluator;
  peer.rank = 0;
  peer.last_seen_ms = NowMillis();
  peer.host = flatbuffers::GetString(reg.host());
  members_.AddEvaluator(id, peer);
  LS_LOG(Info) << "evaluator registered from " << peer.host << " pid "
               << reg.pid();
  // Otherwise it is welcomed together with the workers
  // (WelcomeWorkersIfReady).
  if (members_.workers_welcomed()) SendWelcome(id, members_.at(id));
}

void Enrollment::RemoveEvaluator(const std::string& id,
                                 const std::string& why) {
  LS_LOG(Warning) << "evaluator removed: " << why
                  << (training_ ? "; training goes on" : "");
  members_.RemoveEvaluator(id);
  shapes_.Forget(kEvaluatorShapeKey);
  // Once training is over a worker evaluates the final model in its place
  // (ClockDriver), or the job, which ends on that evaluation, would wait.
  clock_.evaluation().Forget(id);
  if (clock_.evaluation().training_over()) {
    clock_.evaluation().MaybeRequestFinal();
  }
}

StartProgress Enrollment::start_progress() const {
  return {members_.server_ids().size(),
          members_.worker_ids().size(),
          !members_.evaluator_id().empty(),
          shapes_.described(),
          excused_.Vacancies(members_.WorkerRanks()),
          excused_.evaluator()};
}

bool Enrollment::EvaluatorReady() const {
  if (job_.evaluators == 0 || excused_.evaluator()) return true;
  return !members_.evaluator_id().empty() && shapes_.Has(kEvaluatorShapeKey);
}

bool Enrollment::ReplaceWorker(const std::string& id,
                               const std::optional<std::string>& old,
                               const std::string& what) {
  if (!old) return true;
  if (outbox_.Connected(*old)) {
    LS_LOG(Warning) << "refused a registration as " << what
                    << ": its process is still connected";
    Refuse(id, what + " is held by a live process");
    return false;
  }
  RemoveWorker(*old, "replaced by a new worker process", /*replaced=*/true);
  return true;
}

void Enrollment::Refuse(const std::string& id, const std::string& why) {
  outbox_.Send(id, MakeErrorHeader(wire::ErrorCode::BadRequest, why, 0,
                                   wire::Role::Coordinator, 0));
}

void Enrollment::WelcomeWorkersIfReady() {
  if (members_.workers_welcomed() ||
      members_.worker_ids().size() < job_.workers) {
    return;
  }
  members_.WelcomeWorkers();
  for (const auto& id : members_.worker_ids()) {
    SendWelcome(id, members_.at(id));
  }
  if (Peer* evaluator = members_.evaluator()) {
    SendWelcome(members_.evaluator_id(), *evaluator);
  }
  LS_LOG(Info) << "all " << job_.workers << " workers registered; they load "
               << job_.data << " and build " << job_.model;
}

void Enrollment::HandleDescribe(const std::string& id, Peer& peer,
                                const wire::Describe& describe) {
  if (!peer.welcomed || peer.started) {
    host_.RejectBadMessage(id, FailedPrecondition("describe out of turn"));
    return;
  }
  auto shape = JobShapeFromWire(&describe);
  if (!shape.ok()) {
    host_.RejectBadMessage(id, shape.status());
    return;
  }
  TightenWorkerCaps(describe.capabilities(), &peer.caps);
  const bool evaluator = peer.role == wire::Role::Evaluator;
  const auto rank =
      evaluator ? kEvaluatorShapeKey : static_cast<uint32_t>(peer.rank);
  // Before two processes agreed a difference ends the job: the first
  // description is the agreed one only by arrival, so which process is
  // wrong cannot be told. Once two agree (or training runs) the agreed
  // shape is the job's, and one that differs is refused and removed while
  // the job goes on.
  const ShapeAgreement::Verdict verdict =
      shapes_.Judge(rank, *shape, training_);
  switch (verdict.kind) {
    case ShapeAgreement::Verdict::kEndsTheJob:
      host_.Abort(FailedPrecondition(verdict.why));
      return;
    case ShapeAgreement::Verdict::kRefused:
      Refuse(id, "this process " + verdict.why);
      if (evaluator) {
        RemoveEvaluator(id, verdict.why);
      } else {
        RemoveWorker(id, verdict.why);
      }
      return;
    case ShapeAgreement::Verdict::kAgreed:
      LS_LOG(Info) << (evaluator ? "the evaluator"
                                 : "worker " + std::to_string(rank))
                   << " described " << shape->model.dense_params()
                   << " dense parameters and " << shape->data.train_samples
                   << " training samples";
      StartTrainingIfReady();
      return;
    case ShapeAgreement::Verdict::kJoins:
      if (evaluator) {
        SendStart(id, peer);
      } else {
        JoinRunningJob(id, peer);
      }
      return;
  }
}

void Enrollment::HandleWorkerError(const std::string& id, Peer& peer,
                                   wire::ErrorCode code,
                                   const std::string& message) {
  const bool evaluator = peer.role == wire::Role::Evaluator;
  const std::string who = evaluator ? std::string("the evaluator")
                                    : "worker " + std::to_string(peer.rank);
  const std::string why = who + " on " + peer.host + " cannot join: " + message;
  // A late joiner that cannot run, or a device only its machine lacks:
  // the job goes on (or starts) without it.
  if (training_ || code == wire::ErrorCode::DeviceUnavailable) {
    if (evaluator) {
      RemoveEvaluator(id, why);
      if (!training_) excused_.ExcuseEvaluator();
    } else {
      if (!training_) excused_.ExcuseWorker(peer.rank);
      RemoveWorker(id, why);
    }
    if (!training_) StartWithoutTheExcused();
    return;
  }
  // Every worker runs the same job, so none of them could run it.
  host_.Abort(FailedPrecondition(why));
}

void Enrollment::StartWithoutTheExcused() {
  if (excused_.Vacancies(members_.WorkerRanks()) >= job_.workers) {
    host_.Abort(FailedPrecondition(
        "no worker can run the job: every one's device is unusable"));
    return;
  }
  StartTrainingIfReady();
}

void Enrollment::StartTrainingIfReady() {
  if (training_ || host_.aborted() ||
      members_.server_ids().size() < job_.servers ||
      !members_.workers_welcomed() ||
      members_.worker_ids().size() +
              excused_.Vacancies(members_.WorkerRanks()) <
          job_.workers ||
      !shapes_.Complete(members_.WorkerRanks()) || !EvaluatorReady()) {
    return;
  }
  Status started = StartTraining();
  if (!started.ok()) host_.Abort(started.WithContext("cannot start the job"));
}

Status Enrollment::StartTraining() {
  // The order matters: the job is resolved from the data set's sizes
  // before the clock driver reads its clock count; a resumed policy is at
  // its round's clock before any Start carries the current clock; and
  // training_ is set only once everything was sent, so an error leaves a
  // job that never started, to be aborted.
  const JobShape& shape = *shapes_.agreed();
  const JobConfig recorded = job_;
  LS_RETURN_IF_ERROR(ResolveJob(shape.data, &job_));
  // A resumed job carries the dimensions its run resolved: data whose
  // shape changed since would meet rounds of another model.
  if (rounds_.restore()) LS_RETURN_IF_ERROR(CheckResumeChanges(recorded, job_));
  rounds_.RecordResolvedJob();
  LS_RETURN_IF_ERROR(clock_.StartJob());
  LS_ASSIGN_OR_RETURN(layout_,
                      KeyLayout::Build(shape.model.tensors, job_.servers,
                                       shape.model.sparse_dim));
  members_.AssignServerRanks();
  for (const auto& id : members_.server_ids()) {
    layout_.set_endpoint(members_.at(id).rank, members_.at(id).endpoint);
  }
  recorder_.SetJob(job_);
  if (const auto& restore = rounds_.restore()) {
    const ResumePoint point =
        FindResumePoint(*restore, members_.ServerClocks(),
                        clock_.policy().apply_mode() == ApplyMode::kOnCommit);
    adopt_clock_ = point.adopt_clock;
    const ManifestRound& resume = point.round;
    if (adopt_clock_ >= 0) {
      LS_LOG(Info) << "adopting the live servers' state at clock "
                   << adopt_clock_ << " (snapshot round " << restore->round
                   << " is of clock " << restore->clock << ")";
    }
    clock_.ResumeAt(resume);
    LS_LOG(Info) << "resuming from "
                 << (adopt_clock_ >= 0
                         ? std::string("the servers' commit")
                         : "snapshot round " + std::to_string(restore->round))
                 << " at clock " << resume.clock + 1;
  }
  for (const auto& id : members_.server_ids()) {
    SendWelcome(id, members_.at(id));
  }
  for (const auto& id : members_.worker_ids()) {
    Peer& peer = members_.at(id);
    clock_.Join(peer, 0);
    SendStart(id, peer);
  }
  if (Peer* evaluator = members_.evaluator()) {
    SendStart(members_.evaluator_id(), *evaluator);
  }
  training_ = true;
  LS_LOG(Info) << "all " << job_.servers << " servers and " << job_.workers
               << " workers ready; training " << job_.model << " ("
               << layout_.dense_keys() << " dense keys) under "
               << clock_.policy().name() << " for " << job_.max_clocks
               << " clocks";
  return Status::Ok();
}

void Enrollment::JoinRunningJob(const std::string& id, Peer& peer) {
  const int64_t clock = clock_.JoinRunning(peer);
  LS_LOG(Warning) << "worker " << peer.rank << " on " << peer.host
                  << " joined the running job at clock " << clock;
  SendStart(id, peer);
}

void Enrollment::SendWelcome(const std::string& id, Peer& peer) {
  const bool server = peer.role == wire::Role::Server;
  const auto& restore = rounds_.restore();
  const StalenessRule rule = clock_.policy().staleness_rule();
  WelcomeFields welcome;
  welcome.rank = static_cast<uint32_t>(peer.rank);
  // Servers get the layout; workers describe themselves first.
  if (server) welcome.layout = &layout_;
  welcome.on_arrival = clock_.policy().apply_mode() == ApplyMode::kOnArrival;
  welcome.scale_lr_by_staleness = rule.scale_lr;
  welcome.max_staleness = rule.max_staleness;
  welcome.epoch = epoch_.value();
  // Adopted servers keep their state; a replacement server (its clock
  // unknown) cannot be part of an adoption, which is decided once.
  const bool adopted = server && adopt_clock_ >= 0 && !training_;
  if (adopted) welcome.adopt_clock = adopt_clock_;
  // Under --replicas: the shards this server serves, the backups it
  // holds, and where the backups of its own shard are. A server that
  // serves none (it replaced a lost one) restores nothing: its backups
  // are copied live from their primaries.
  const bool replicated = server && job_.replicas > 0;
  if (replicated) {
    failover_.FillWelcome(static_cast<uint32_t>(peer.rank), &welcome);
  }
  // The round to restore goes to servers only: workers learn the clock
  // from their Start.
  const bool restoring = server && restore && !adopted &&
                         (!replicated || !welcome.primaries->empty());
  if (restoring) {
    welcome.restore_round = restore->round;
    welcome.restore_shards = restore->shards;
  }
  if (!server) {
    peer.incarnation = tickets_.IssueInto(peer.role, peer.rank, &welcome);
  }
  outbox_.Send(id, MakeWelcomeHeader(job_, welcome));
  peer.welcomed = true;
  // A server loading a round is silent for a while: the longer limit of a
  // restore applies until it speaks (Membership::FindSilent).
  peer.restoring = restoring;
  peer.last_seen_ms = NowMillis();  // liveness counts from the welcome
}

void Enrollment::SendStart(const std::string& id, Peer& peer) {
  outbox_.Send(id, MakeStartHeader(job_, layout_, epoch_.value(),
                                   clock_.policy().CurrentClock()));
  peer.started = true;
}

void Enrollment::RemoveWorker(const std::string& id, const std::string& why,
                              bool replaced) {
  const Peer gone = members_.RemoveWorker(id);
  LS_LOG(Warning) << "worker " << gone.rank << " removed: " << why << "; "
                  << members_.worker_ids().size() << " workers go on";
  ++dead_workers_;
  if (gone.rank >= 0) shapes_.Forget(static_cast<uint32_t>(gone.rank));
  // Its ticket still proves its rank: the shards refuse it from now on.
  if (gone.incarnation != 0) {
    zmq::message_t fence = MakeFenceHeader(gone.rank, gone.incarnation);
    outbox_.SendToEach(members_.server_ids(), fence);
  }
  if (!training_) return;  // a replacement may still register
  // Only a started worker joined the policy. Its leaving may complete a
  // clock (the policy commits without it), and it may have been the last
  // worker not finished or the one asked for the final evaluation.
  if (gone.started) clock_.WorkerLeft(gone);
  clock_.evaluation().Forget(id);
  clock_.evaluation().MaybeRequestFinal();
  // A replaced worker's successor is registering right now
  // (ReplaceWorker), so the job is not left without workers.
  if (members_.worker_ids().empty() && !replaced) {
    host_.Abort(Unavailable("every worker is gone (last: worker " +
                            std::to_string(gone.rank) + ", " + why + ")"));
  }
}

}  // namespace lockstep

// Coordinator: membership — registration, ranks, welcomes, liveness,
// removal and shutdown.
#include <unistd.h>

#include <algorithm>
#include <set>

#include "common/job_fields.h"
#include "common/logging.h"
#include "common/transport/zmq/zmq_socket.h"
#include "common/wire/job_config_codec.h"
#include "common/wire/layout_codec.h"
#include "coordinator/coordinator.h"
#include "coordinator/rank_assignment.h"

namespace lockstep {
namespace {

wire::ApplyMode WireApplyMode(ApplyMode mode) {
  return mode == ApplyMode::kOnArrival ? wire::ApplyMode::OnArrival
                                       : wire::ApplyMode::OnCommit;
}

}  // namespace

void TightenWorkerCaps(const CapabilityList* list, WorkerCaps* caps) {
  if (list == nullptr) return;
  for (const auto* cap : *list) {
    unsigned long v = 0;
    if (std::sscanf(cap->c_str(), "max_batch=%lu", &v) == 1 && v > 0 &&
        (caps->max_batch == 0 || v < caps->max_batch)) {
      caps->max_batch = static_cast<uint32_t>(v);
    }
  }
}

void Coordinator::HandleRegister(const std::string& id,
                                 const wire::Register& reg) {
  if (peers_.count(id) != 0) return;  // a duplicate: already welcomed
  if (reg.role() == wire::Role::Evaluator) {
    RegisterEvaluator(id, reg);
    return;
  }
  const bool is_server = reg.role() == wire::Role::Server;
  if (!is_server && reg.role() != wire::Role::Worker) {
    RejectBadMessage(
        id, InvalidArgument("only servers, workers and an evaluator register"));
    return;
  }
  if (is_server && training_ &&
      !flatbuffers::GetString(reg.endpoint()).empty() &&
      AcceptReturningServer(id, reg)) {
    return;
  }
  if (!is_server && workers_welcomed_) ReplaceWorkerOfRank(reg.rank_hint());
  auto& ids = is_server ? server_ids_ : worker_ids_;
  const uint32_t want = is_server ? options_.job.servers : options_.job.workers;
  if (ids.size() >= want || (training_ && is_server)) {
    Reply(id, MakeErrorHeader(wire::ErrorCode::BadRequest,
                              std::string("job already has all its ") +
                                  (is_server ? "servers" : "workers"),
                              0, wire::Role::Coordinator, 0));
    return;
  }
  if (is_server && flatbuffers::GetString(reg.endpoint()).empty()) {
    RejectBadMessage(id, InvalidArgument("server registered without endpoint"));
    return;
  }
  Peer peer;
  peer.role = reg.role();
  peer.last_seen_ms = NowMillis();
  peer.rank_hint = reg.rank_hint();
  peer.endpoint = flatbuffers::GetString(reg.endpoint());
  peer.host = flatbuffers::GetString(reg.host());
  TightenWorkerCaps(reg.capabilities(), &peer.caps);
  peers_[id] = peer;
  ids.push_back(id);
  LS_LOG(Info) << RoleName(reg.role()) << " registered from "
               << flatbuffers::GetString(reg.host()) << " pid " << reg.pid()
               << " (" << server_ids_.size() << "/" << options_.job.servers
               << " servers, " << worker_ids_.size() << "/"
               << options_.job.workers << " workers)";
  if (!is_server && workers_welcomed_) {
    // A re-join or a replacement: the others already have their ranks.
    std::set<int> taken;
    for (const auto& other : worker_ids_) {
      if (other != id) taken.insert(peers_[other].rank);
    }
    Peer& joiner = peers_[id];
    joiner.rank = FreeRank(joiner.rank_hint, taken,
                           static_cast<int>(options_.job.workers));
    SendWelcome(id, joiner);
    return;
  }
  WelcomeWorkersIfReady();
  StartTrainingIfReady();
}

void Coordinator::RegisterEvaluator(const std::string& id,
                                    const wire::Register& reg) {
  if (options_.job.evaluators == 0) {
    Reply(id, MakeErrorHeader(wire::ErrorCode::BadRequest,
                              "this job runs without an evaluator "
                              "(--evaluators 0)",
                              0, wire::Role::Coordinator, 0));
    return;
  }
  // A new evaluator process replaces the old one (restarted by a
  // supervisor before it was declared dead).
  if (!evaluator_id_.empty()) {
    RemoveEvaluator(evaluator_id_, "replaced by a new evaluator process");
  }
  Peer peer;
  peer.role = wire::Role::Evaluator;
  peer.rank = 0;
  peer.last_seen_ms = NowMillis();
  peer.host = flatbuffers::GetString(reg.host());
  peers_[id] = peer;
  evaluator_id_ = id;
  LS_LOG(Info) << "evaluator registered from " << peer.host << " pid "
               << reg.pid();
  if (workers_welcomed_) SendWelcome(id, peers_[id]);
}

void Coordinator::RemoveEvaluator(const std::string& id,
                                  const std::string& why) {
  LS_LOG(Warning) << "evaluator removed: " << why
                  << (training_ ? "; training goes on" : "");
  peers_.erase(id);
  if (evaluator_id_ == id) evaluator_id_.clear();
  shapes_.Forget(kEvaluatorShapeKey);
  if (id == final_evaluator_) final_evaluator_.clear();
  if (training_over_) MaybeRequestFinalEvaluation();
}

bool Coordinator::EvaluatorReady() const {
  if (options_.job.evaluators == 0) return true;
  return !evaluator_id_.empty() && shapes_.Has(kEvaluatorShapeKey);
}

void Coordinator::ReplaceWorkerOfRank(int rank) {
  if (rank < 0) return;
  const auto old = std::find_if(
      worker_ids_.begin(), worker_ids_.end(),
      [&](const std::string& w) { return peers_[w].rank == rank; });
  if (old != worker_ids_.end()) {
    RemoveWorker(std::string(*old), "replaced by a new worker process",
                 /*replaced=*/true);
  }
}

void Coordinator::AssignRanks(std::vector<std::string>& ids) {
  std::vector<int> hints;
  hints.reserve(ids.size());
  for (const auto& id : ids) hints.push_back(peers_[id].rank_hint);
  const std::vector<int> ranks = lockstep::AssignRanks(hints);
  std::vector<std::string> by_rank(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    peers_[ids[i]].rank = ranks[i];
    by_rank[ranks[i]] = ids[i];
  }
  ids = std::move(by_rank);
}

std::vector<uint32_t> Coordinator::WorkerRanks() const {
  std::vector<uint32_t> ranks;
  for (const auto& id : worker_ids_) {
    ranks.push_back(static_cast<uint32_t>(peers_.at(id).rank));
  }
  return ranks;
}

void Coordinator::WelcomeWorkersIfReady() {
  if (workers_welcomed_ || worker_ids_.size() < options_.job.workers) return;
  AssignRanks(worker_ids_);
  for (const auto& id : worker_ids_) SendWelcome(id, peers_[id]);
  if (!evaluator_id_.empty()) SendWelcome(evaluator_id_, peers_[evaluator_id_]);
  workers_welcomed_ = true;
  LS_LOG(Info) << "all " << options_.job.workers
               << " workers registered; they load " << options_.job.data
               << " and build " << options_.job.model;
}

void Coordinator::SendWelcome(const std::string& id, Peer& peer) {
  const bool server = peer.role == wire::Role::Server;
  flatbuffers::FlatBufferBuilder fbb(4096);
  auto job = JobConfigToWire(fbb, options_.job);
  // Servers get the layout; workers describe themselves first.
  flatbuffers::Offset<wire::Layout> layout;
  if (server) layout = LayoutToWire(fbb, layout_);
  const StalenessRule rule = policy_->staleness_rule();
  auto body = wire::CreateWelcome(
      fbb, static_cast<uint32_t>(peer.rank), job, layout,
      WireApplyMode(policy_->apply_mode()), rule.scale_lr, rule.max_staleness,
      server && restore_ ? restore_->round : 0,
      server && restore_ ? restore_->shards : 0, epoch_);
  Reply(id, FinishEnvelope(fbb, wire::Body::Welcome, body.Union(),
                           wire::Role::Coordinator, 0));
  peer.welcomed = true;
  peer.restoring = server && restore_.has_value();
  peer.last_seen_ms = NowMillis();  // liveness counts from the welcome
}

void Coordinator::SendShutdown(const std::string& reason) {
  LS_LOG(Info) << "shutting down: " << reason;
  flatbuffers::FlatBufferBuilder fbb(256);
  auto body = wire::CreateShutdown(fbb, fbb.CreateString(reason));
  zmq::message_t header = FinishEnvelope(
      fbb, wire::Body::Shutdown, body.Union(), wire::Role::Coordinator, 0);
  for (const auto& [id, peer] : peers_) {
    zmq::message_t copy;
    copy.copy(header);
    Reply(id, std::move(copy));
  }
}
int Coordinator::LowestWorker() const {
  int best = -1;
  for (const auto& id : worker_ids_) {
    const int rank = peers_.at(id).rank;
    if (best < 0 || rank < best) best = rank;
  }
  return best;
}

void Coordinator::MaybeRequestFinalEvaluation() {
  if (final_eval_received_ || !final_evaluator_.empty() ||
      worker_ids_.empty()) {
    return;
  }
  for (const auto& id : worker_ids_) {
    if (!peers_[id].finished) return;
  }
  if (!training_over_) {
    training_over_ = true;
    recorder_->EndTraining();
  }
  if (!evaluator_id_.empty() && peers_[evaluator_id_].started) {
    AnswerEvaluator();  // its last points first, then the final model
    return;
  }
  // Without an evaluator, a worker evaluates the final model: training is
  // over, so nobody waits for it.
  const int rank = LowestWorker();
  for (const auto& id : worker_ids_) {
    if (peers_[id].rank != rank) continue;
    final_evaluator_ = id;
    flatbuffers::FlatBufferBuilder fbb(128);
    auto body = wire::CreateAdmission(fbb, FinalModelClock(), false, true, 0, 0,
                                      0, true);
    Reply(id, FinishEnvelope(fbb, wire::Body::Admission, body.Union(),
                             wire::Role::Coordinator, 0));
  }
  LS_LOG(Info) << "every worker finished; worker " << rank
               << " runs the final evaluation";
}

void Coordinator::RemoveWorker(const std::string& id, const std::string& why,
                               bool replaced) {
  const Peer gone = peers_[id];
  LS_LOG(Warning) << "worker " << gone.rank << " removed: " << why << "; "
                  << worker_ids_.size() - 1 << " workers go on";
  peers_.erase(id);
  std::erase(worker_ids_, id);
  ++dead_workers_;
  if (gone.rank >= 0) shapes_.Forget(static_cast<uint32_t>(gone.rank));
  if (!training_) return;  // a replacement may still register
  if (gone.started) {
    budget_.Left(static_cast<uint32_t>(gone.rank));
    IssueCommits(Timed([&] {
      return policy_->OnWorkerLeft(static_cast<uint32_t>(gone.rank));
    }));
    AnswerPendingAdmissions();
  }
  if (id == final_evaluator_) final_evaluator_.clear();
  MaybeRequestFinalEvaluation();
  if (worker_ids_.empty() && !replaced) {
    abort_status_ = Unavailable("every worker is gone (last: worker " +
                                std::to_string(gone.rank) + ", " + why + ")");
  }
}

Status Coordinator::CheckLiveness() {
  const int64_t limit_ms = static_cast<int64_t>(options_.job.heartbeat_ms) *
                           options_.dead_after_heartbeats;
  const int64_t now = NowMillis();
  std::vector<std::pair<std::string, std::string>> dead_workers;
  std::vector<std::pair<std::string, std::string>> dead_servers;
  std::string dead_evaluator;
  for (const auto& [id, peer] : peers_) {
    // A server (or the evaluator) waits silently for its Welcome (sent once
    // the workers have registered or described the job; before it the
    // heartbeat interval is not known); the registration deadline covers
    // that wait.
    if (!peer.welcomed && peer.role != wire::Role::Worker) continue;
    // A server restoring a round is silent until it has loaded its part
    // (seconds per GB); the registration deadline bounds that too.
    if (peer.restoring &&
        now - peer.last_seen_ms <= options_.register_timeout_s * 1000) {
      continue;
    }
    if (now - peer.last_seen_ms <= limit_ms) continue;
    const std::string why =
        "sent nothing for " + std::to_string(now - peer.last_seen_ms) + " ms";
    if (peer.role == wire::Role::Evaluator) {
      dead_evaluator = why;
      continue;
    }
    (peer.role == wire::Role::Worker ? dead_workers : dead_servers)
        .emplace_back(id, why);
  }
  if (!dead_evaluator.empty()) RemoveEvaluator(evaluator_id_, dead_evaluator);
  // A lost server's part of the model comes back from the latest complete
  // snapshot round (coordinator_recovery.cc), or the job ends.
  for (const auto& [id, why] : dead_servers) LoseServer(id, why);
  for (const auto& [id, why] : dead_workers) RemoveWorker(id, why);
  return CheckRecoveryDeadline();
}

}  // namespace lockstep

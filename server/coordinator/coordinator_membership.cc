// Coordinator: membership — rank assignment, welcome, liveness, shutdown.
#include <unistd.h>

#include <algorithm>
#include <set>

#include "common/clock.h"
#include "common/logging.h"
#include "server/coordinator/coordinator.h"

namespace lockstep {
namespace {

wire::ApplyMode WireApplyMode(ApplyMode mode) {
  return mode == ApplyMode::kOnArrival ? wire::ApplyMode::OnArrival
                                       : wire::ApplyMode::OnCommit;
}

}  // namespace

void Coordinator::AssignRanks(std::vector<std::string>& ids) {
  const int n = static_cast<int>(ids.size());
  std::vector<std::string> by_rank(n);
  std::vector<std::string> rest;
  for (const auto& id : ids) {
    const int hint = peers_[id].rank_hint;
    if (hint >= 0 && hint < n && by_rank[hint].empty()) {
      by_rank[hint] = id;
    } else {
      rest.push_back(id);
    }
  }
  auto next = rest.begin();
  for (int r = 0; r < n; ++r) {
    if (by_rank[r].empty()) by_rank[r] = *next++;
    peers_[by_rank[r]].rank = r;
  }
  ids = std::move(by_rank);
}

void Coordinator::StartTrainingIfReady() {
  if (training_ || server_ids_.size() < options_.job.servers ||
      worker_ids_.size() < options_.job.workers) {
    return;
  }
  AssignRanks(server_ids_);
  AssignRanks(worker_ids_);
  for (const auto& id : server_ids_) {
    const Peer& peer = peers_[id];
    layout_.set_endpoint(peer.rank, peer.endpoint);
  }
  for (const auto& id : server_ids_) SendWelcome(id, peers_[id]);
  for (const auto& id : worker_ids_) {
    const Peer& peer = peers_[id];
    policy_->OnWorkerJoined(peer.rank, 0, peer.caps);
    SendWelcome(id, peer);
  }
  training_ = true;
  LS_LOG(Info) << "all " << options_.job.servers << " servers and "
               << options_.job.workers << " workers registered; training "
               << options_.job.model << " under " << policy_->name() << " for "
               << options_.job.max_clocks << " clocks";
}

void Coordinator::SendWelcome(const std::string& id, const Peer& peer) {
  flatbuffers::FlatBufferBuilder fbb(4096);
  auto job = options_.job.ToWire(fbb);
  auto layout = layout_.ToWire(fbb);
  const StalenessRule rule = policy_->staleness_rule();
  auto body = wire::CreateWelcome(fbb, static_cast<uint32_t>(peer.rank), job,
                                  layout, WireApplyMode(policy_->apply_mode()),
                                  rule.scale_lr, rule.max_staleness);
  Reply(id, FinishEnvelope(fbb, wire::Body::Welcome, body.Union(),
                           wire::Role::Coordinator, 0));
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

void Coordinator::JoinRunningJob(const std::string& id, Peer& peer) {
  std::set<int> taken;
  for (const auto& other : worker_ids_) {
    if (other != id) taken.insert(peers_[other].rank);
  }
  int rank = peer.rank_hint;
  if (rank < 0 || rank >= static_cast<int>(options_.job.workers) ||
      taken.count(rank) != 0) {
    rank = 0;
    while (taken.count(rank) != 0) ++rank;
  }
  peer.rank = rank;
  const int64_t clock = policy_->CurrentClock();
  Timed([&] {
    policy_->OnWorkerJoined(static_cast<uint32_t>(rank), clock, peer.caps);
    return 0;
  });
  LS_LOG(Warning) << "worker " << rank << " on " << peer.host
                  << " joined the running job at clock " << clock;
  SendWelcome(id, peer);
}

void Coordinator::RemoveWorker(const std::string& id, const std::string& why) {
  const int rank = peers_[id].rank;
  LS_LOG(Warning) << "worker " << rank << " removed: " << why << "; "
                  << worker_ids_.size() - 1 << " workers go on";
  peers_.erase(id);
  std::erase(worker_ids_, id);
  ++dead_workers_;
  if (!training_) return;
  IssueCommits(Timed(
      [&] { return policy_->OnWorkerLeft(static_cast<uint32_t>(rank)); }));
  AnswerPendingAdmissions();
  if (rank == final_evaluator_) final_evaluator_ = -1;
  MaybeRequestFinalEvaluation();
  if (worker_ids_.empty()) {
    abort_status_ = Unavailable("every worker is gone (last: worker " +
                                std::to_string(rank) + ", " + why + ")");
  }
}

int Coordinator::Evaluator() const {
  int best = -1;
  for (const auto& id : worker_ids_) {
    const int rank = peers_.at(id).rank;
    if (best < 0 || rank < best) best = rank;
  }
  return best;
}

void Coordinator::MaybeRequestFinalEvaluation() {
  if (final_eval_received_ || final_evaluator_ >= 0 || worker_ids_.empty()) {
    return;
  }
  for (const auto& id : worker_ids_) {
    if (!peers_[id].finished) return;
  }
  final_evaluator_ = Evaluator();
  for (const auto& id : worker_ids_) {
    if (peers_[id].rank != final_evaluator_) continue;
    flatbuffers::FlatBufferBuilder fbb(128);
    auto body = wire::CreateAdmission(fbb, options_.job.max_clocks, false, true,
                                      0, 0, 0, true);
    Reply(id, FinishEnvelope(fbb, wire::Body::Admission, body.Union(),
                             wire::Role::Coordinator, 0));
  }
  LS_LOG(Info) << "every worker finished; worker " << final_evaluator_
               << " runs the final evaluation";
}

Status Coordinator::CheckLiveness() {
  const int64_t limit_ms = static_cast<int64_t>(options_.job.heartbeat_ms) *
                           options_.dead_after_heartbeats;
  const int64_t now = NowMillis();
  std::vector<std::pair<std::string, std::string>> dead_workers;
  for (const auto& [id, peer] : peers_) {
    if (now - peer.last_seen_ms <= limit_ms) continue;
    const std::string why =
        "sent nothing for " + std::to_string(now - peer.last_seen_ms) + " ms";
    if (peer.role == wire::Role::Worker) {
      dead_workers.emplace_back(id, why);
      continue;
    }
    // Servers hold the model; until snapshots and restore exist, losing
    // one ends the job cleanly instead of training on a partial model.
    Status dead = Unavailable("server " + std::to_string(peer.rank) + " on " +
                              peer.host + " " + why);
    LS_LOG(Error) << dead.message();
    SendShutdown("job aborted: " + dead.message());
    return dead;
  }
  for (const auto& [id, why] : dead_workers) RemoveWorker(id, why);
  return Status::Ok();
}

}  // namespace lockstep

// Coordinator: membership — rank assignment, welcome, liveness, shutdown.
#include <unistd.h>

#include <algorithm>
#include <set>

#include "common/logging.h"
#include "common/zmq_socket.h"
#include "server/coordinator.h"

namespace lockstep {

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
    policy_->OnWorkerJoined(peers_[id].rank, 0);
    SendWelcome(id, peers_[id]);
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
  auto body = wire::CreateWelcome(fbb, static_cast<uint32_t>(peer.rank), job,
                                  layout, policy_->apply_mode());
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
    if (peer.finished) continue;  // told the job is over; it has left
    zmq::message_t copy;
    copy.copy(header);
    Reply(id, std::move(copy));
  }
  // Give the I/O thread a moment to flush before the socket closes.
  ::usleep(200 * 1000);
}

Status Coordinator::CheckLiveness() {
  const int64_t limit_ms = static_cast<int64_t>(options_.job.heartbeat_ms) *
                           options_.dead_after_heartbeats;
  const int64_t now = NowMillis();
  for (const auto& [id, peer] : peers_) {
    if (peer.finished || now - peer.last_seen_ms <= limit_ms) continue;
    // Fault tolerance (re-admission, rollback) comes with the sync-policy
    // and persistence work; until then a lost peer ends the job cleanly.
    Status dead = Unavailable(std::string(wire::EnumNameRole(peer.role)) + " " +
                              std::to_string(peer.rank) + " on " + peer.host +
                              " sent nothing for " +
                              std::to_string(now - peer.last_seen_ms) + " ms");
    LS_LOG(Error) << dead.message();
    SendShutdown("job aborted: " + dead.message());
    return dead;
  }
  return Status::Ok();
}

}  // namespace lockstep

// Who takes part in the job: the peers that registered (servers, workers,
// the evaluator), their ranks, and when each was last heard from. Pure
// state: it sends nothing and decides nothing about the job; the
// Coordinator reads it to decide (a dead peer is reported, not removed).
// Thread-safety: not thread-safe; the coordinator's thread owns it.
#ifndef LOCKSTEP_COORDINATOR_STATE_MEMBERSHIP_H_
#define LOCKSTEP_COORDINATOR_STATE_MEMBERSHIP_H_

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/wire/message.h"
#include "sync_policies/sync_policy.h"

namespace lockstep {

// A worker's Register or Describe capabilities ("max_batch=N").
using CapabilityList =
    flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>;
// Tightens `caps` with `list`: a max_batch below the current cap (or the
// first one) replaces it; unknown entries are ignored.
void TightenWorkerCaps(const CapabilityList* list, WorkerCaps* caps);

struct Peer {
  wire::Role role = wire::Role::Tool;
  int rank = -1;
  // Workers: the incarnation of the ticket its Welcome gave (0: none).
  uint32_t incarnation = 0;
  int rank_hint = -1;
  // Workers: the worker credential its key is
  // (common/security/worker_credentials.h); -1 for the shared worker key.
  int64_t credential = -1;
  std::string endpoint;  // servers: data endpoint
  // Servers that registered again after losing a coordinator: the clock
  // their state is committed up to (-1: none offered).
  int64_t applied_clock = -1;
  std::string host;
  WorkerCaps caps;
  int64_t last_seen_ms = 0;
  // Sent its Welcome: a server serves from then on (before, it is silent
  // and exempt from liveness); a worker loads its data and describes.
  bool welcomed = false;
  // Workers: sent Start and joined the policy.
  bool started = false;
  int64_t clock = -1;                    // workers: clock last admitted to
  uint32_t admitted_batch = 0;           // workers: that clock's quota
  std::optional<int64_t> pending_admit;  // workers: deferred Admit clock
  bool finished = false;                 // workers: told the job is over
  // Servers: welcomed with a round to restore and silent since.
  bool restoring = false;
};

// The peers a liveness scan found silent past their limit, each with why,
// in routing-id order.
struct SilentPeers {
  std::vector<std::pair<std::string, std::string>> workers;
  std::vector<std::pair<std::string, std::string>> servers;
  std::string evaluator;  // why the evaluator is dead; "" when it is not
};

class Membership {
 public:
  // A job whose worker ranks are below `workers` (its most workers).
  explicit Membership(uint32_t workers) : workers_(workers) {}

  // The peer with routing id `id`, or nullptr.
  Peer* Find(const std::string& id);
  // REQUIRES: `id` is registered.
  Peer& at(const std::string& id) { return peers_.at(id); }
  const Peer& at(const std::string& id) const { return peers_.at(id); }
  // The registered peer of `role` and `rank` (>= 0), or nullptr: a
  // worker's heartbeat thread has a socket (a routing id) of its own.
  Peer* FindByRank(wire::Role role, int rank);

  const std::map<std::string, Peer>& peers() const { return peers_; }
  // Servers by rank once training started ("" for a lost shard's slot).
  const std::vector<std::string>& server_ids() const { return server_ids_; }
  // Live workers, by rank once they were welcomed.
  const std::vector<std::string>& worker_ids() const { return worker_ids_; }
  // The evaluator's routing id, "" when none is registered.
  const std::string& evaluator_id() const { return evaluator_id_; }
  // The registered evaluator, or nullptr.
  Peer* evaluator();
  // Every worker of the job registered and was sent its rank.
  bool workers_welcomed() const { return workers_welcomed_; }

  // Adds a server or worker that registered (`peer.role` says which).
  // Every peer counts as heard from at `now_ms` (the coordinator itself
  // was not running).
  void HeardFromAll(int64_t now_ms);
  void Add(const std::string& id, const Peer& peer);
  // Adds the evaluator. REQUIRES: none is registered.
  void AddEvaluator(const std::string& id, const Peer& peer);
  // A server process taking shard `slot` (a returning or replacement one).
  // REQUIRES: the slot is free.
  void PlaceServer(int slot, const std::string& id, const Peer& peer);
  // Removes a worker; returns its record. It is remembered for a while
  // (RecentlyRemoved).
  Peer RemoveWorker(const std::string& id);
  // Whether a message from routing id `id` (sent as `role` `rank`) is one a
  // worker removed lately had in flight: from its socket, or from its
  // heartbeat thread's (by rank, while no live worker holds the rank).
  // Such messages are dropped quietly, not counted as bad.
  bool RecentlyRemoved(const std::string& id, wire::Role role, int rank) const;
  // Removes a server; its slot stays, empty, until a server takes it.
  Peer RemoveServer(const std::string& id);
  // Removes the evaluator (or whatever peer `id` is, when it was replaced).
  void RemoveEvaluator(const std::string& id);

  // Numbers the workers (rank_assignment.h) and orders them by rank; from
  // now on a worker registering gets a free rank at once.
  void WelcomeWorkers();
  // Numbers the servers and orders them by rank.
  void AssignServerRanks();
  // The rank for worker `id` joining a welcomed job: its hint when free.
  int FreeWorkerRank(const std::string& id) const;
  // The live worker of rank `rank`, if any.
  std::optional<std::string> WorkerOfRank(int rank) const;
  // The worker registered with credential `credential` (>= 0), if any.
  std::optional<std::string> WorkerOfCredential(int64_t credential) const;
  // The shard a returning server with `rank_hint` takes: the hint when it
  // is a shard, else the first free slot; -1 when there is none.
  int ServerSlotFor(int rank_hint) const;
  // The ranks of the live workers.
  std::vector<uint32_t> WorkerRanks() const;
  // The clock each registered server said it applied (Register).
  std::vector<int64_t> ServerClocks() const;
  // Lowest live worker rank, or -1.
  int LowestWorker() const;
  // Whether every live worker was told the job is over (false with none).
  bool AllWorkersFinished() const;

  // The peers silent for more than `limit_ms` at `now_ms`. A server (or
  // the evaluator) not yet welcomed is exempt, and so is a server
  // restoring a round for up to `restore_limit_ms`.
  SilentPeers FindSilent(int64_t now_ms, int64_t limit_ms,
                         double restore_limit_ms) const;

 private:
  void AssignRanks(std::vector<std::string>& ids);

  uint32_t workers_;
  std::map<std::string, Peer> peers_;  // by routing id
  std::vector<std::string> server_ids_;
  std::vector<std::string> worker_ids_;
  std::string evaluator_id_;
  bool workers_welcomed_ = false;
  // The last kRememberRemoved removed workers' (routing id, rank).
  static constexpr size_t kRememberRemoved = 256;
  std::deque<std::pair<std::string, int>> removed_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_COORDINATOR_STATE_MEMBERSHIP_H_

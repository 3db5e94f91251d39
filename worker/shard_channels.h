// A client's connections to every server shard, by shard, and where each
// shard is served: a shard whose server is lost is marked so (with a
// coordinator to wait for: nothing is sent to it, its requests wait), and
// a shard the coordinator reroutes (a promoted backup, --replicas) is
// connected at its new endpoint.
// Thread-safety: not thread-safe; one thread, as its PsClient.
#ifndef LOCKSTEP_WORKER_SHARD_CHANNELS_H_
#define LOCKSTEP_WORKER_SHARD_CHANNELS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/layout.h"
#include "common/security/peer_ticket.h"
#include "common/status.h"
#include "common/transport/data_channel.h"
#include "common/wire/message.h"

namespace lockstep {

class ShardChannels {
 public:
  // Connects to every shard of `layout` (endpoints must be set). A shard
  // whose server refuses the connection (it died since the layout was
  // made: every server listens before it registers) is marked lost and
  // waits for the coordinator like a server lost later: a reroute to its
  // promoted backup (`replicated`, --replicas), a rollback or the job's
  // end. With `replicated` a reroute's endpoint refused (a shard promoted
  // twice in a row: the first new server may be gone already) is waited
  // out the same way. Every connection proves `ticket` (with job keys: the
  // Welcome's).
  static StatusOr<ShardChannels> Connect(
      const KeyLayout& layout, double timeout_s, bool replicated = false,
      std::optional<PeerTicket> ticket = std::nullopt);

  // With `wait` a lost server is waited out (someone will say what comes:
  // a reroute or a rollback); without, it is the sender's error.
  void set_wait_for_lost(bool wait) { wait_for_lost_ = wait; }
  size_t size() const { return channels_.size(); }
  DataChannel& at(uint32_t shard) { return *channels_[shard]; }
  const std::string& endpoint(uint32_t shard) const {
    return endpoints_[shard];
  }
  bool lost(uint32_t shard) const { return lost_[shard]; }
  // Counts the channels replaced (Reroute): a poll set built before a
  // change holds sockets that are gone.
  uint64_t generation() const { return generation_; }

  // Sends `msg` to `shard`; to a lost shard, nothing (its request waits).
  Status Send(uint32_t shard, Message&& msg);
  // `shard`'s server is gone (`why`): an error, or marked lost when
  // waiting for lost servers.
  Status MarkLost(uint32_t shard, const Status& why);
  // Connects each (shard, endpoint) rerouted; `after` runs for each shard
  // connected. Returns those shards. Errors: a shard out of range, or
  // after's.
  StatusOr<std::vector<uint32_t>> Reroute(
      const std::vector<std::pair<uint32_t, std::string>>& moves,
      double timeout_s, const std::function<Status(uint32_t)>& after);

 private:
  const PeerTicket* ticket() const { return ticket_ ? &*ticket_ : nullptr; }

  std::vector<std::unique_ptr<DataChannel>> channels_;
  std::vector<std::string> endpoints_;
  std::vector<bool> lost_;  // its server is gone, not rerouted yet
  bool wait_for_lost_ = false;
  bool replicated_ = false;           // Connect's
  std::optional<PeerTicket> ticket_;  // Connect's
  uint64_t generation_ = 0;
};

}  // namespace lockstep

#endif  // LOCKSTEP_WORKER_SHARD_CHANNELS_H_

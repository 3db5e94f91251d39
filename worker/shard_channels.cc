#include "worker/shard_channels.h"

#include <map>

#include "common/logging.h"

namespace lockstep {

StatusOr<ShardChannels> ShardChannels::Connect(
    const KeyLayout& layout, double timeout_s, bool replicated,
    std::optional<PeerTicket> ticket) {
  ShardChannels channels;
  channels.replicated_ = replicated;
  channels.ticket_ = std::move(ticket);
  for (const ShardInfo& shard : layout.shards()) {
    if (shard.endpoint.empty()) {
      return InvalidArgument("shard " + std::to_string(shard.shard) +
                             " has no endpoint");
    }
    auto channel = DataChannel::Connect(shard.endpoint, timeout_s,
                                        /*listening=*/true, channels.ticket());
    channels.lost_.push_back(!channel.ok());
    channels.endpoints_.push_back(shard.endpoint);
    if (channel.ok()) {
      channels.channels_.push_back(std::move(*channel));
      continue;
    }
    LS_LOG(Warning) << "shard " << shard.shard << "'s server at "
                    << shard.endpoint
                    << " is unreachable: " << channel.status().message()
                    << "; waiting for the coordinator";
    channels.channels_.push_back(nullptr);
  }
  return channels;
}

Status ShardChannels::Send(uint32_t shard, Message&& msg) {
  if (lost_[shard]) return Status::Ok();  // sent once it is rerouted
  Status sent = channels_[shard]->Send(std::move(msg));
  if (sent.ok()) return sent;
  return MarkLost(shard, sent);
}

Status ShardChannels::MarkLost(uint32_t shard, const Status& why) {
  Status lost = why.WithContext("server " + std::to_string(shard) + " at " +
                                endpoints_[shard]);
  if (!wait_for_lost_) return lost;
  // Only the coordinator knows what comes: a reroute to the shard's
  // promoted backup, or a rollback.
  LS_LOG(Warning) << lost.message() << "; waiting for the coordinator";
  lost_[shard] = true;
  return Status::Ok();
}

StatusOr<std::vector<uint32_t>> ShardChannels::Reroute(
    const std::vector<std::pair<uint32_t, std::string>>& moves,
    double timeout_s, const std::function<Status(uint32_t)>& after) {
  // Only the newest endpoint of a shard counts: an older one may be gone
  // already (promoted twice).
  std::map<uint32_t, std::string> newest;
  for (const auto& [shard, endpoint] : moves) {
    if (shard >= channels_.size()) {
      return InvalidArgument("the coordinator rerouted shard " +
                             std::to_string(shard) + " of " +
                             std::to_string(channels_.size()));
    }
    newest[shard] = endpoint;
  }
  std::vector<uint32_t> moved;
  for (const auto& [shard, endpoint] : newest) {
    channels_[shard].reset();
    ++generation_;
    auto channel = DataChannel::Connect(endpoint, timeout_s,
                                        /*listening=*/replicated_, ticket());
    if (!channel.ok()) {
      // Waited out like a lost server: a rollback or another reroute.
      LS_LOG(Warning) << "shard " << shard << "'s new server at " << endpoint
                      << " is unreachable: " << channel.status().message();
      lost_[shard] = true;
      continue;
    }
    channels_[shard] = std::move(*channel);
    endpoints_[shard] = endpoint;
    lost_[shard] = false;
    LS_LOG(Warning) << "shard " << shard << " is served at " << endpoint
                    << " now (its backup was promoted)";
    LS_RETURN_IF_ERROR(after(shard));
    moved.push_back(shard);
  }
  return moved;
}

}  // namespace lockstep

#include "coordinator/rounds/round_tracker.h"

namespace lockstep {

bool RoundTracker::Due(int64_t clock, double now_s) const {
  if (pending_ || clock <= last_clock_) return false;
  if (every_clocks_ > 0 && clock >= last_clock_ + every_clocks_) return true;
  return every_s_ > 0 && now_s - last_s_ >= every_s_;
}

void RoundTracker::Begin(ManifestRound started, double now_s) {
  Pending p;
  p.round = std::move(started);
  p.round.complete = true;
  p.round.error.clear();
  p.round.bytes = 0;
  p.round.contained.clear();
  last_s_ = now_s;
  last_clock_ = p.round.clock;
  pending_ = std::move(p);
}

std::optional<ManifestRound> RoundTracker::Report(
    uint64_t round, uint32_t shard, bool ok, const std::string& error,
    uint64_t bytes, std::map<uint32_t, int64_t> contained) {
  if (!pending_ || pending_->round.round != round ||
      shard >= pending_->round.shards || pending_->reported.count(shard) != 0) {
    return std::nullopt;
  }
  ManifestRound& r = pending_->round;
  pending_->reported[shard] = ok;
  r.bytes += bytes;
  if (!contained.empty()) r.contained[shard] = std::move(contained);
  if (!ok && r.complete) {
    r.complete = false;
    r.error = "shard " + std::to_string(shard) + ": " + error;
  }
  if (pending_->reported.size() < r.shards) return std::nullopt;
  ManifestRound done = std::move(r);
  pending_.reset();
  return done;
}

std::optional<ManifestRound> RoundTracker::Abandon(const std::string& why) {
  if (!pending_) return std::nullopt;
  ManifestRound r = std::move(pending_->round);
  pending_.reset();
  r.complete = false;
  r.error = why;
  return r;
}

}  // namespace lockstep

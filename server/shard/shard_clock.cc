#include "server/shard/shard_clock.h"

#include <algorithm>

namespace lockstep {

bool ShardClock::PullReady(int64_t clock) const {
  return rules_.on_arrival || clock - 1 <= std::min(applied_, readable_);
}

void ShardClock::DeferPull(int64_t clock, Message pull) {
  deferred_.emplace_back(clock, std::move(pull));
}

std::vector<Message> ShardClock::TakeReadyPulls() {
  std::vector<Message> ready;
  std::deque<std::pair<int64_t, Message>> waiting;
  for (auto& [clock, pull] : deferred_) {
    if (PullReady(clock)) {
      ready.push_back(std::move(pull));
    } else {
      waiting.emplace_back(clock, std::move(pull));
    }
  }
  deferred_ = std::move(waiting);
  return ready;
}

size_t ShardClock::DeferredOf(int rank) const {
  return std::count_if(deferred_.begin(), deferred_.end(), [rank](auto& d) {
    return d.second.envelope->sender_rank() == rank;
  });
}

wire::PushStatus ShardClock::Buffer(int64_t clock, uint32_t worker,
                                    BufferedPush push) {
  if (clock <= applied_) {
    ++dropped_;
    return wire::PushStatus::Dropped;
  }
  buffered_[clock].try_emplace(worker, std::move(push));
  return wire::PushStatus::Buffered;
}

std::vector<const BufferedPush*> ShardClock::Committed(
    int64_t clock, const std::vector<uint32_t>& workers,
    std::vector<uint32_t>* missing) const {
  std::vector<const BufferedPush*> pushes;
  auto it = buffered_.find(clock);
  for (uint32_t w : workers) {
    const BufferedPush* push = nullptr;
    if (it != buffered_.end()) {
      auto found = it->second.find(w);
      if (found != it->second.end()) push = &found->second;
    }
    if (push != nullptr) {
      pushes.push_back(push);
    } else if (!WasRefused(clock, w)) {
      missing->push_back(w);
    }
  }
  return pushes;
}

void ShardClock::FinishCommit(int64_t clock, size_t applied_pushes) {
  applied_ = std::max(applied_, clock);
  // Pushes of committed clocks that the commit did not name (backup
  // workers' late ones that came before it) are discarded: dropped.
  size_t buffered = 0;
  const auto end = buffered_.upper_bound(clock);
  for (auto it = buffered_.begin(); it != end; ++it) {
    buffered += it->second.size();
  }
  dropped_ += buffered - std::min(buffered, applied_pushes);
  buffered_.erase(buffered_.begin(), end);
  refused_.erase(refused_.begin(), refused_.upper_bound(clock));
}

double ShardClock::GradScale(int64_t staleness) const {
  if (!rules_.scale_lr) return 1.0;
  return 1.0 / static_cast<double>(std::max<int64_t>(0, staleness) + 1);
}

wire::PushStatus ShardClock::Admit(int64_t clock, int64_t clock_read,
                                   int64_t* staleness) {
  *staleness = std::max<int64_t>(0, clock - clock_read);
  if (rules_.max_staleness >= 0 && *staleness > rules_.max_staleness) {
    ++dropped_;
    return wire::PushStatus::Dropped;
  }
  return wire::PushStatus::Applied;
}

void ShardClock::MarkApplied(int64_t clock) {
  applied_ = std::max(applied_, clock);
}

}  // namespace lockstep

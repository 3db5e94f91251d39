#include "coordinator/clock/commit_ledger.h"

#include <algorithm>
#include <cmath>

namespace lockstep {

void CommitLedger::Report(int64_t clock, uint32_t worker, uint32_t batch,
                          double loss) {
  reports_[clock][worker] = {batch, loss};
}

CommitLedger::Committed CommitLedger::Commit(
    int64_t clock, const std::vector<uint32_t>& workers) {
  Committed out;
  double loss_sum = 0;
  uint64_t loss_samples = 0;  // of the reports with a finite loss
  auto it = reports_.find(clock);
  if (it != reports_.end()) {
    for (uint32_t w : workers) {
      auto found = it->second.find(w);
      if (found == it->second.end()) continue;
      out.samples += found->second.batch;
      if (!std::isfinite(found->second.loss)) continue;
      loss_sum += found->second.loss * found->second.batch;
      loss_samples += found->second.batch;
    }
  }
  out.mean_loss = loss_samples > 0 ? loss_sum / loss_samples : NAN;
  reports_.erase(reports_.begin(), reports_.upper_bound(clock));
  return out;
}

bool CommitLedger::Ack(int64_t clock, uint32_t shard) {
  // A promoted backup may apply (and ack) a clock its lost primary had.
  if (clock <= fully_applied_) return false;
  std::set<uint32_t>& shards = acks_[clock];
  shards.insert(shard);
  if (shards.size() < shards_) return false;
  acks_.erase(clock);
  fully_applied_ = std::max(fully_applied_, clock);
  return true;
}

}  // namespace lockstep

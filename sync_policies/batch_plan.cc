#include "sync_policies/batch_plan.h"

namespace lockstep {

bool BatchPlan::Includes(int64_t clock, uint32_t worker) const {
  return clock != clock_ || offsets_.count(worker) != 0;
}

std::optional<uint64_t> BatchPlan::Admit(int64_t clock, uint32_t worker,
                                         const Members& members) {
  if (clock != clock_) {
    clock_ = clock;
    offsets_.clear();
    admitted_.clear();
    uint64_t offset = 0;
    for (const auto& [w, batch] : members) {
      offsets_[w] = offset;
      offset += batch;
    }
  }
  auto it = offsets_.find(worker);
  if (it == offsets_.end()) return std::nullopt;
  admitted_.insert(worker);
  return it->second;
}

void BatchPlan::Leave(uint32_t worker) {
  admitted_.erase(worker);
  if (!admitted_.empty()) return;
  clock_ = -1;
  offsets_.clear();
}

}  // namespace lockstep

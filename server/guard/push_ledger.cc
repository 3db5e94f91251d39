#include "server/guard/push_ledger.h"

namespace lockstep {

std::optional<PushLedger::Answer> PushLedger::Repeat(uint32_t worker,
                                                     uint64_t request_id,
                                                     int64_t clock) const {
  auto it = last_.find(worker);
  if (it == last_.end() || it->second.request_id != request_id ||
      it->second.clock != clock) {
    return std::nullopt;
  }
  return it->second;
}

}  // namespace lockstep

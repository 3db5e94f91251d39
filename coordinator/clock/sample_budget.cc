#include "coordinator/clock/sample_budget.h"

namespace lockstep {

void SampleBudget::Admitted(uint32_t worker, uint64_t batch) {
  in_flight_[worker] = batch;
}

void SampleBudget::Reported(uint32_t worker, uint64_t batch) {
  in_flight_.erase(worker);
  processed_ += batch;
}

void SampleBudget::Restore(uint64_t processed) {
  processed_ = processed;
  in_flight_.clear();
}

uint64_t SampleBudget::Remaining() const {
  const uint64_t used = processed_ + InFlight();
  return used >= total_ ? 0 : total_ - used;
}

uint64_t SampleBudget::InFlight() const {
  uint64_t sum = 0;
  for (const auto& [worker, batch] : in_flight_) sum += batch;
  return sum;
}

}  // namespace lockstep

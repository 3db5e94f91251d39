// The stopping rule of apply-on-arrival policies (SSP, ASP): the job ends
// once its workers have processed max_clocks x X samples between them, the
// work a BSP-family job does in max_clocks clocks, so every policy is
// measured over the same number of samples. A fast worker runs more clocks
// than a slow one; nobody is held to a clock count the straggler sets.
// Counts reported clocks plus those admitted and still in flight (so the
// last admissions do not overshoot); a worker that leaves gives its clock
// in flight back.
// Thread-safety: not thread-safe; owned by the coordinator's event loop.
#ifndef LOCKSTEP_COORDINATOR_CLOCK_SAMPLE_BUDGET_H_
#define LOCKSTEP_COORDINATOR_CLOCK_SAMPLE_BUDGET_H_

#include <cstdint>
#include <map>

namespace lockstep {

// The entry of a snapshot round's policy state that carries processed().
inline constexpr char kProcessedSamplesKey[] = "coordinator/processed_samples";

class SampleBudget {
 public:
  explicit SampleBudget(uint64_t total = 0) : total_(total) {}

  // `worker` was admitted to a clock of `batch` samples (replacing any
  // clock it had in flight, which it then abandoned).
  void Admitted(uint32_t worker, uint64_t batch);
  // `worker` finished a clock of `batch` samples.
  void Reported(uint32_t worker, uint64_t batch);
  // `worker` left: its clock in flight will not be processed.
  void Left(uint32_t worker) { in_flight_.erase(worker); }
  // A job resumed from a round that had processed `processed` samples: the
  // clocks in flight since are redone.
  void Restore(uint64_t processed);

  // Whether what was processed and is in flight reaches the budget: no
  // further clock is admitted.
  bool Spent() const { return Remaining() == 0; }
  // What is neither processed nor in flight.
  uint64_t Remaining() const;
  uint64_t processed() const { return processed_; }
  uint64_t total() const { return total_; }

 private:
  uint64_t InFlight() const;

  uint64_t total_;
  uint64_t processed_ = 0;
  std::map<uint32_t, uint64_t> in_flight_;  // by worker
};

}  // namespace lockstep

#endif  // LOCKSTEP_COORDINATOR_CLOCK_SAMPLE_BUDGET_H_

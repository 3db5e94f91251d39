// The coordinator's bookkeeping of clocks between report and apply:
// workers' reports of a clock until it is committed (so a commit can say
// how many samples and what mean loss it carried), and the servers'
// acknowledgements of applied commits (so the coordinator knows when a
// clock is applied on every shard).
// Thread-safety: not thread-safe; owned by the coordinator's event loop.
#ifndef LOCKSTEP_COORDINATOR_CLOCK_COMMIT_LEDGER_H_
#define LOCKSTEP_COORDINATOR_CLOCK_COMMIT_LEDGER_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <vector>

namespace lockstep {

class CommitLedger {
 public:
  // What a committed clock carried.
  struct Committed {
    uint64_t samples = 0;
    // Over the listed workers' finite losses, weighed by batch; NaN when
    // there is none.
    double mean_loss = 0;
  };

  // REQUIRES: shards >= 1.
  explicit CommitLedger(uint32_t shards) : shards_(shards) {}

  // Worker `worker` reported `clock` with `batch` samples and mean `loss`.
  // A second report of the same (clock, worker) replaces the first.
  void Report(int64_t clock, uint32_t worker, uint32_t batch, double loss);
  // Clock `clock` is committed for `workers`: the batch-weighted totals of
  // their reports. Every report of clocks <= `clock` is then settled and
  // forgotten (a late report of a committed clock does not count).
  Committed Commit(int64_t clock, const std::vector<uint32_t>& workers);
  // Shard `shard` says it applied `clock` (again: counted once). True
  // when that was the last shard.
  bool Ack(int64_t clock, uint32_t shard);
  // The last clock every shard acknowledged (-1 before any).
  int64_t fully_applied() const { return fully_applied_; }
  // Clocks with reports that wait for their commit.
  size_t pending_clocks() const { return reports_.size(); }

 private:
  struct WorkerReport {
    uint32_t batch = 0;
    double loss = 0;
  };

  uint32_t shards_;
  std::map<int64_t, std::map<uint32_t, WorkerReport>> reports_;
  std::map<int64_t, std::set<uint32_t>> acks_;  // shards, by clock
  int64_t fully_applied_ = -1;
};

}  // namespace lockstep

#endif  // LOCKSTEP_COORDINATOR_CLOCK_COMMIT_LEDGER_H_

// The synchronization-policy interface. A policy is pure logic: the
// coordinator feeds it events (worker joined/left, worker finished clock c)
// and asks it for decisions (may w start clock c, w's batch quota, which
// clocks to commit for which workers). It does no I/O and owns no threads.
// Thread-safety: not thread-safe; the coordinator's event loop owns it.
#ifndef LOCKSTEP_SYNC_POLICIES_SYNC_POLICY_H_
#define LOCKSTEP_SYNC_POLICIES_SYNC_POLICY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "schemas/lockstep_generated.h"

namespace lockstep {

// What a worker reports when it finishes a clock.
struct ClockReport {
  uint32_t worker = 0;
  int64_t clock = 0;
  uint32_t batch = 0;
  double compute_s = 0;
  double push_s = 0;
  double pull_s = 0;
  double wait_s = 0;
  double loss = 0;
};

// Apply the buffered pushes of `clock` from exactly `workers`.
struct CommitDecision {
  int64_t clock = 0;
  std::vector<uint32_t> workers;
};

class SyncPolicy {
 public:
  virtual ~SyncPolicy() = default;

  // The policy's name with its parameters, e.g. "bsp".
  virtual std::string name() const = 0;
  // How servers apply pushes under this policy.
  virtual wire::ApplyMode apply_mode() const = 0;

  // Worker `worker` joined and will start at `clock`.
  virtual void OnWorkerJoined(uint32_t worker, int64_t clock) = 0;
  // Worker `worker` left or was declared dead. Returns commits that became
  // possible because the policy no longer waits for it.
  virtual std::vector<CommitDecision> OnWorkerLeft(uint32_t worker) = 0;

  // Whether `worker` may start `clock` now. The coordinator re-asks after
  // every event, so a deferred admission is answered as soon as it holds.
  virtual bool MayStart(uint32_t worker, int64_t clock) const = 0;
  // The batch `worker` processes at `clock`.
  // REQUIRES: MayStart(worker, clock).
  virtual uint32_t BatchQuota(uint32_t worker, int64_t clock) = 0;

  // `report.worker` finished `report.clock` (its pushes are acknowledged by
  // every shard). Returns the commits the coordinator must now issue.
  virtual std::vector<CommitDecision> OnClockDone(
      const ClockReport& report) = 0;
};

}  // namespace lockstep

#endif  // LOCKSTEP_SYNC_POLICIES_SYNC_POLICY_H_

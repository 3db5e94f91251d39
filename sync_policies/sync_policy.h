// The synchronization-policy interface. A policy is pure logic: the
// coordinator feeds it events (worker joined/left, worker finished clock c)
// and asks it for decisions (admit worker w to clock c now or later, with
// which batch quota; which clocks to commit for which workers). It does no
// I/O, owns no threads and reads no clock: times arrive in the reports.
// Thread-safety: not thread-safe; the coordinator's event loop owns it.
#ifndef LOCKSTEP_SYNC_POLICIES_SYNC_POLICY_H_
#define LOCKSTEP_SYNC_POLICIES_SYNC_POLICY_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "sync_policies/policy_state.h"

namespace lockstep {

// How servers apply pushes under a policy: buffered per clock until the
// coordinator commits that clock for a set of workers, or on arrival.
// (The coordinator maps it to the wire's enum when it welcomes a server.)
enum class ApplyMode { kOnCommit, kOnArrival };

// The job as a policy sees it.
struct PolicyJob {
  // Per-worker configured batches; a one-entry list means the same batch
  // for every worker.
  std::vector<uint32_t> batches;
  uint32_t workers = 0;
  // X: the sum of the workers' configured batches.
  uint64_t global_batch = 0;
  uint64_t seed = 1;
};

// What a worker reports when it finishes a clock. Times in seconds.
struct ClockReport {
  uint32_t worker = 0;
  int64_t clock = 0;
  uint32_t batch = 0;
  double compute_s = 0;  // forward/backward plus emulated slowdown
  double push_s = 0;
  double pull_s = 0;
  double wait_s = 0;  // waiting for admission
  double loss = 0;
  double cpu_available = 1;  // share of a CPU the worker had, in [0, 1]
  double mem_available = 1;  // share of memory free, in [0, 1]
};

// What a worker declares when it joins.
struct WorkerCaps {
  uint32_t min_batch = 1;
  uint32_t max_batch = 0;  // 0 = no cap (e.g. a GPU's memory limit)
};

// Apply the buffered pushes of `clock` from exactly `workers`.
struct CommitDecision {
  int64_t clock = 0;
  std::vector<uint32_t> workers;
};

// The answer to an admission request.
struct AdmissionDecision {
  // The clock the worker runs; may be later than the one it asked for
  // (a late backup worker or a re-joining worker jumps to the current clock).
  int64_t clock = 0;
  uint32_t batch = 0;
  // Where the worker's samples start inside the clock's global batch, for
  // global data order: no two workers' slices of a clock overlap, whatever
  // the membership does (barrier policies: BatchPlan; on arrival:
  // RankOffset).
  uint64_t batch_offset = 0;
};

// How servers treat pushes that arrive under apply-on-arrival policies.
struct StalenessRule {
  // Weigh the push's gradient by 1 / (staleness + 1) (staleness: logical
  // clocks a shard completed between the worker's pull and its push).
  bool scale_lr = false;
  // Drop pushes staler than this; -1 = never drop.
  int64_t max_staleness = -1;
};

class SyncPolicy {
 public:
  virtual ~SyncPolicy() = default;

  // The policy's name with its parameters, e.g. "ssp:3".
  virtual std::string name() const = 0;
  // How servers apply pushes under this policy.
  virtual ApplyMode apply_mode() const = 0;
  virtual StalenessRule staleness_rule() const { return {}; }
  // True when workers should draw samples in one global order (clock c's
  // global batch is the next X samples; each worker takes its quota at its
  // offset): for policies whose quotas change, where per-worker partitions
  // would bias the sample order. Resolves --data-order auto.
  virtual bool prefers_global_order() const { return false; }

  // The job continues from a snapshot round: clocks before `clock` count as
  // committed, and workers joining from now on start at `clock` or later.
  // Called once, before any worker joins.
  virtual void ResumeAt(int64_t clock) = 0;

  // The state a resumed job needs to take the same decisions as this one
  // from here on (clock tables, quotas, predictor state), for a snapshot
  // round taken now. Commit policies leave out reports of clocks not yet
  // committed (a resumed job runs those clocks again); apply-on-arrival
  // policies include every report, as their pushes are in the model.
  virtual PolicyState SaveState() const { return {}; }
  // Continues from `state`, saved by a policy of the same name(). Called
  // after ResumeAt, before any worker joins; a worker joining later with a
  // rank that has saved entries picks them up. InvalidArgument when
  // `state` does not fit this policy.
  virtual Status LoadState(const PolicyState& /*state*/) {
    return Status::Ok();
  }

  // Worker `worker` joined (or re-joined) and may start at `clock`.
  virtual void OnWorkerJoined(uint32_t worker, int64_t clock,
                              const WorkerCaps& caps) = 0;
  // Worker `worker` left or was declared dead. Returns commits that became
  // possible because the policy no longer waits for it.
  virtual std::vector<CommitDecision> OnWorkerLeft(uint32_t worker) = 0;

  // `worker` asks to start `clock`. Returns the decision, or nullopt to
  // defer: the coordinator asks again after every event, so a deferred
  // request is answered as soon as the policy allows it.
  virtual std::optional<AdmissionDecision> Admit(uint32_t worker,
                                                 int64_t clock) = 0;

  // `report.worker` finished `report.clock` (every shard acknowledged its
  // push). Returns the commits the coordinator must now issue, in order.
  virtual std::vector<CommitDecision> OnClockDone(
      const ClockReport& report) = 0;

  // The clock a worker joining now starts at.
  virtual int64_t CurrentClock() const = 0;

  // The speed (samples/s) the policy predicted for `worker` in `clock` when
  // it set the worker's quota for that clock, so a report of the clock can
  // be set beside it (the predicted clock time is the quota over it).
  // nullopt when the policy made no prediction for that clock: policies
  // without a speed model, LB-BSP's numerical method, a worker's first
  // clock, or a clock other than the one the policy is waiting for.
  virtual std::optional<double> PredictedSpeed(uint32_t /*worker*/,
                                               int64_t /*clock*/) const {
    return std::nullopt;
  }

  // Named numbers describing the policy's decisions so far (drops, quota
  // of each worker, ...), for /metrics and summary.json. Keys are
  // Prometheus-style names with optional labels: `lockstep_quota{worker="2"}`.
  virtual std::map<std::string, double> Metrics() const { return {}; }
};

}  // namespace lockstep

#endif  // LOCKSTEP_SYNC_POLICIES_SYNC_POLICY_H_

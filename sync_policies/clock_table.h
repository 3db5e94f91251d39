// Per-worker clock bookkeeping for the policies without a commit barrier
// (SSP, ASP): which workers are live, how many clocks each has completed
// (last reported clock + 1) and the last clock each was admitted to.
// Thread-safety: not thread-safe.
#ifndef LOCKSTEP_SYNC_POLICIES_CLOCK_TABLE_H_
#define LOCKSTEP_SYNC_POLICIES_CLOCK_TABLE_H_

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "sync_policies/policy_state.h"

namespace lockstep {

class ClockTable {
 public:
  // `worker` joins (or re-joins) counting as having completed `clock`
  // clocks. A clock below the floor (the highest minimum seen so far) is
  // raised to it, so a joiner never holds back workers already past it.
  // A worker of a loaded state starts at the clocks it had completed (or
  // the floor), whatever `clock` says.
  void Join(uint32_t worker, int64_t clock);
  // Forgets `worker`: its clocks no longer hold anyone back.
  void Leave(uint32_t worker);
  // Every worker counts as having completed at least `clock` clocks (a job
  // resumed from a round). REQUIRES: no worker live.
  void StartAt(int64_t clock) { floor_ = std::max(floor_, clock); }
  // Writes each worker's completed clocks ("completed/<w>", also those
  // loaded but not joined again yet) and the floor ("clock_floor").
  PolicyState SaveState() const;
  // Reads what SaveState wrote: workers joining later start where they
  // were. REQUIRES: no worker live.
  Status LoadState(const PolicyState& state);
  bool IsLive(uint32_t worker) const { return live_.count(worker) != 0; }

  // `worker` finished `clock`. Ignored for departed workers and for clocks
  // older than what the worker already completed.
  void Report(uint32_t worker, int64_t clock);
  // `worker` was admitted to `clock`. REQUIRES: IsLive(worker).
  void Admitted(uint32_t worker, int64_t clock);

  // Clocks `worker` has completed. REQUIRES: IsLive(worker).
  int64_t Completed(uint32_t worker) const;
  // The fewest completed clocks over live workers; the floor when none is
  // live (so a worker re-joining an empty job continues where it was).
  int64_t MinCompleted() const;
  // How far the most advanced admission runs ahead of the slowest worker's
  // completed clocks: max over live of the last admitted clock minus
  // MinCompleted(), at least 0. SSP(s) keeps it <= s.
  int64_t Gap() const;
  // Live workers in rank order.
  std::vector<uint32_t> LiveWorkers() const;
  size_t live_count() const { return live_.size(); }

  // Adds `lockstep_worker_clock{worker="w"}` (completed clocks) per live
  // worker, `lockstep_clock_gap`, `lockstep_min_clock` and
  // `lockstep_live_workers` to `metrics`.
  void AddMetrics(std::map<std::string, double>* metrics) const;

 private:
  struct Entry {
    int64_t completed = 0;
    int64_t admitted = -1;  // -1: not admitted since joining
  };
  void RaiseFloor();

  std::map<uint32_t, Entry> live_;
  // Completed clocks of workers in a loaded state, until they join.
  std::map<uint32_t, int64_t> saved_;
  int64_t floor_ = 0;
};

}  // namespace lockstep

#endif  // LOCKSTEP_SYNC_POLICIES_CLOCK_TABLE_H_

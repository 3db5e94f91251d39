// What a worker's heterogeneity profile (--hetero, hetero_profile.h) makes
// of its clocks: the waits that stand in for slower compute and slower
// links, the CPU reading it reports (its own, or its emulated machine's
// load file), a real CPU quota, and a real shaped link (--real-link) in
// place of an emulated one. A worker without a profile gets none of it.
// Thread-safety: not thread-safe; the worker's thread.
#ifndef LOCKSTEP_WORKER_EMULATION_WORKER_EMULATION_H_
#define LOCKSTEP_WORKER_EMULATION_WORKER_EMULATION_H_

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

#include "common/status.h"
#include "worker/emulation/hetero_profile.h"
#include "worker/emulation/machine_load_monitor.h"
#include "worker/emulation/real_link.h"

namespace lockstep {

class WorkerEmulation {
 public:
  WorkerEmulation() = default;  // no profile, no real link
  // Checks the profile text and the real link's spec ("" for none of
  // either); emulated waits end early once *stop is set.
  static StatusOr<WorkerEmulation> Create(const std::string& hetero,
                                          const std::string& real_link,
                                          const std::atomic<bool>* stop);

  // Once the worker has its rank: the profile seeded per worker (so
  // transient slowdowns differ between workers), its machine's load file
  // (machine=, next to the coordinator's `coordinator` endpoint), and a
  // real CPU quota where the profile asks for one (a warning if refused).
  Status Join(uint64_t seed, uint32_t rank, const std::string& coordinator);

  // The emulated gpu= batch cap; 0 for none.
  uint32_t max_batch() const { return profile_.max_batch(); }
  // At the start of `clock`: the real link takes the profile's step.
  Status StartClock(int64_t clock);
  // What a worker reports of a clock's compute.
  struct ComputeReading {
    double cpu_available = 1;
    // The emulated node's compute time (HeteroProfile::ModeledSeconds);
    // unset: the measured time is reported.
    std::optional<double> compute_s;
  };
  // After a clock's compute of `real_s` seconds on `quota` samples: waits
  // out what the profile adds; returns the CPU reading to report from the
  // process's own share `cpu` (the profile's reading times it, or on an
  // emulated machine that machine's: MachineReading) and the modeled
  // compute time.
  ComputeReading FinishCompute(int64_t clock, uint32_t quota, double real_s,
                               double cpu);
  // The link's time for `bytes` of a pull or push at `clock`, waited after
  // the real transfer (on a real link only its latency, without netem).
  void LinkWait(int64_t clock, uint64_t bytes);

 private:
  explicit WorkerEmulation(const std::atomic<bool>* stop) : stop_(stop) {}

  // Sleeps `seconds` like real compute would (ends early on a stop).
  void Wait(double seconds) const;
  // On a machine= profile, at the end of `clock`: publishes the machine's
  // co-located demand and returns the availability its load file shows
  // (1 - demand); the profile's own reading if the file fails (warned
  // once).
  double MachineReading(int64_t clock);

  const std::atomic<bool>* stop_ = nullptr;
  std::string text_;
  HeteroProfile profile_;
  std::optional<MachineLoadMonitor> machine_load_;  // machine= profiles
  bool machine_load_failed_ = false;
  std::optional<RealLink> real_link_;  // --real-link; unset: emulated
};

}  // namespace lockstep

#endif  // LOCKSTEP_WORKER_EMULATION_WORKER_EMULATION_H_

// LinkProfile: the emulated network link of one worker, the `net=` items of
// its heterogeneity profile (hetero_profile.h):
//   net=MBPS/LATENCY_MS      from clock 0 on
//   net=MBPS/LATENCY_MS@C    from clock C on (a schedule, like xF@C: the
//                            step with the largest C <= clock applies; for
//                            the same C the later item wins)
// Before the first step, and without any, the link is free. Each pull and
// push of the worker then also waits LATENCY_MS plus its payload bytes over
// MBPS megabits per second, as if its bytes crossed that link: the LB-BSP
// paper's micro-benchmark degrades one worker's bandwidth at iteration 150
// (net=1000/0.2,net=50/0.2@150).
// Thread-safety: immutable after parsing; const methods are thread-safe.
#ifndef LOCKSTEP_WORKER_EMULATION_LINK_PROFILE_H_
#define LOCKSTEP_WORKER_EMULATION_LINK_PROFILE_H_

#include <compare>
#include <cstdint>
#include <string>
#include <vector>

namespace lockstep {

class LinkProfile {
 public:
  struct Step {
    int64_t from_clock = 0;
    double mbps = 0;
    double latency_ms = 0;
    bool operator==(const Step&) const = default;
  };

  // Adds the step of one item's value "MBPS/LATENCY_MS[@C]". Returns the
  // reason it is malformed, or "" when it was added. MBPS > 0,
  // LATENCY_MS >= 0, C >= 0.
  std::string AddItem(const std::string& value);
  // Sorts the steps by clock, keeping the last of each clock.
  void Finish();

  bool empty() const { return steps_.empty(); }
  // Seconds `bytes` take over the link at `clock`; 0 before the first step.
  double Seconds(int64_t clock, uint64_t bytes) const;
  // The step in force at `clock`; nullptr before the first (a free link).
  const Step* StepAt(int64_t clock) const;
  // "net=100/0.5,net=10/0.5@150" in clock order; "" when empty.
  std::string ToString() const;

 private:
  std::vector<Step> steps_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_WORKER_EMULATION_LINK_PROFILE_H_

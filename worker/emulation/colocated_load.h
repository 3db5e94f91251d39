// ColocatedLoad: co-located jobs that come and go on a worker's machine,
// the `colo=P/L/D[/LEAD]` items of its heterogeneity profile
// (hetero_profile.h): at each clock, with probability P (a seeded draw that
// depends only on the seed, the item and the clock), a job arrives at a
// random point within that clock and demands a share L of the CPU for D
// clocks (D may be fractional). Jobs of one or several items add up (capped
// at 95%).
//
// The machine's load reading (what a load monitor on it sees) shows a job's
// demand from its arrival; the job slows the worker LEAD clocks later
// (LEAD >= 0, default 0, may be fractional), for D clocks: a job that is
// queued or ramping up is visible on the machine before it takes the
// worker's cores. While a share L is taken, compute runs 1 / (1 - L) times
// slower; a clock costs the mean of that over its span (a job starting
// halfway through slows half of it). The reading at the end of a clock is
// 1 - the demand at that instant. So even with LEAD = 0 a job that arrived
// during clock c shows in c's reading before it slows the whole of c + 1,
// and with LEAD = 1 the reading leads the slowdown by one clock at both of
// its edges: the exogenous signal LB-BSP's NARX predictor is built to use
// (the paper's non-dedicated cluster), which the speed history alone lacks.
// Thread-safety: immutable after parsing; const methods are thread-safe.
#ifndef LOCKSTEP_WORKER_EMULATION_COLOCATED_LOAD_H_
#define LOCKSTEP_WORKER_EMULATION_COLOCATED_LOAD_H_

#include <cstdint>
#include <string>
#include <vector>

namespace lockstep {

class ColocatedLoad {
 public:
  // The most CPU co-located jobs take together.
  static constexpr double kMaxShare = 0.95;

  // Adds one item's value "P/L/D" or "P/L/D/LEAD"; returns why it is
  // malformed, or "". 0 <= P <= 1, 0 < L < 1, D > 0, LEAD >= 0.
  std::string AddItem(const std::string& value);
  void set_seed(uint64_t seed) { seed_ = seed; }

  bool empty() const { return items_.empty(); }
  // The share of the CPU co-located jobs take from the worker at clock
  // position `x` (clock c spans [c, c + 1)).
  double ShareAt(double x) const;
  // The share of the CPU co-located jobs demand at `x`, as the machine's
  // load reading shows it: ShareAt(x + LEAD) for a single item.
  double DemandAt(double x) const;
  // How much slower clock `clock` computes: the mean of 1 / (1 - share)
  // over its span; 1 without jobs.
  double SlowdownOf(int64_t clock) const;
  // The availability reading at the end of `clock`: 1 - demand then.
  double AvailableAtEndOf(int64_t clock) const;
  // "colo=0.05/0.5/20,colo=0.1/0.5/6/1,..." (LEAD only when not 0); ""
  // when empty.
  std::string ToString() const;

 private:
  struct Item {
    double probability = 0;
    double share = 0;
    double clocks = 1;
    double lead = 0;
  };
  // A job demands its share over [arrival, demand_end) and takes it from
  // the worker over [start, end): the same D clocks, LEAD clocks later.
  struct Job {
    double arrival = 0, demand_end = 0, start = 0, end = 0, share = 0;
  };
  // The jobs of every item whose slowdown (or, with `by_demand`, whose
  // demand) overlaps [from, to).
  std::vector<Job> JobsOverlapping(double from, double to,
                                   bool by_demand = false) const;

  uint64_t seed_ = 0;
  std::vector<Item> items_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_WORKER_EMULATION_COLOCATED_LOAD_H_

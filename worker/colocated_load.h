// ColocatedLoad: co-located jobs that come and go on a worker's machine,
// the `colo=P/L/D` items of its heterogeneity profile (hetero_profile.h):
// at each clock, with probability P (a seeded draw that depends only on
// the seed, the item and the clock), a job starts at a random point within
// that clock and takes a share L of the worker's CPU for D clocks (D may
// be fractional). Jobs of one or several items add up (capped at 95%).
//
// While a share L is taken, compute runs 1 / (1 - L) times slower; a clock
// costs the mean of that over its span (a job starting halfway through
// slows half of it). The worker's CPU availability reading is what a load
// monitor sees when the clock ends: 1 - L at that instant. So a job that
// started during clock c shows in c's reading before it slows the whole of
// c + 1: the exogenous signal LB-BSP's NARX predictor is built to use
// (the paper's non-dedicated cluster), which the speed history alone lacks.
// Thread-safety: immutable after parsing; const methods are thread-safe.
#ifndef LOCKSTEP_WORKER_COLOCATED_LOAD_H_
#define LOCKSTEP_WORKER_COLOCATED_LOAD_H_

#include <cstdint>
#include <string>
#include <vector>

namespace lockstep {

class ColocatedLoad {
 public:
  // The most CPU co-located jobs take together.
  static constexpr double kMaxShare = 0.95;

  // Adds one item's value "P/L/D"; returns why it is malformed, or "".
  // 0 <= P <= 1, 0 < L < 1, D > 0.
  std::string AddItem(const std::string& value);
  void set_seed(uint64_t seed) { seed_ = seed; }

  bool empty() const { return items_.empty(); }
  // The share of the CPU co-located jobs take at clock position `x`
  // (clock c spans [c, c + 1)).
  double ShareAt(double x) const;
  // How much slower clock `clock` computes: the mean of 1 / (1 - share)
  // over its span; 1 without jobs.
  double SlowdownOf(int64_t clock) const;
  // The availability reading at the end of `clock`: 1 - share then.
  double AvailableAtEndOf(int64_t clock) const;
  // "colo=0.05/0.5/20,..."; "" when empty.
  std::string ToString() const;

 private:
  struct Item {
    double probability = 0;
    double share = 0;
    double clocks = 1;
  };
  struct Job {
    double start = 0, end = 0, share = 0;
  };
  // The jobs of every item that overlap [from, to).
  std::vector<Job> JobsOverlapping(double from, double to) const;

  uint64_t seed_ = 0;
  std::vector<Item> items_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_WORKER_COLOCATED_LOAD_H_

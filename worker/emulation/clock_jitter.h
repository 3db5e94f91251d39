// ClockJitter: the per-clock noise of a worker's speed, the `jitter=SIGMA`
// item of its heterogeneity profile (hetero_profile.h). Each clock costs
// exp(SIGMA * z) times what it would otherwise, z a standard normal draw
// that depends only on the seed and the clock: a log-normal factor with
// median 1 (mean exp(SIGMA^2 / 2)), independent between clocks, which no
// load reading shows. It stands for what a real node's timing has besides
// its load (cache and memory effects, the OS's own work), so a predictor
// that copies the last clock copies its noise too.
// Thread-safety: immutable after parsing; const methods are thread-safe.
#ifndef LOCKSTEP_WORKER_EMULATION_CLOCK_JITTER_H_
#define LOCKSTEP_WORKER_EMULATION_CLOCK_JITTER_H_

#include <cstdint>
#include <string>

namespace lockstep {

class ClockJitter {
 public:
  // The largest SIGMA: beyond it a clock's cost spans orders of magnitude.
  static constexpr double kMaxSigma = 1;

  // Sets SIGMA from an item's value; returns why it is malformed, or "".
  // 0 <= SIGMA <= kMaxSigma; one jitter= per profile.
  std::string AddItem(const std::string& value);
  void set_seed(uint64_t seed) { seed_ = seed; }

  bool empty() const { return sigma_ == 0; }
  double sigma() const { return sigma_; }
  // The factor of `clock`: exp(SIGMA * z(seed, clock)); 1 when empty.
  double FactorAt(int64_t clock) const;
  // "jitter=0.05"; "" when empty.
  std::string ToString() const;

 private:
  uint64_t seed_ = 0;
  double sigma_ = 0;
  bool given_ = false;
};

}  // namespace lockstep

#endif  // LOCKSTEP_WORKER_EMULATION_CLOCK_JITTER_H_

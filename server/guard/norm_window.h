// The gradient norms a shard accepted, for a guard that needs no tuning
// (PushGuard): the largest median of kSize consecutive positive norms seen
// since the window began. A median is not moved by a minority of workers,
// however large their pushes; its peak is the scale of early training,
// which honest pushes stay within. Not the current median: near
// convergence honest norms are heavy-tailed (a batch the model still gets
// wrong pushes 5,000 times the median of the others, measured on the
// suite's jobs), while the early scale bounds them.
// Thread-safety: the shard's thread only.
#ifndef LOCKSTEP_SERVER_GUARD_NORM_WINDOW_H_
#define LOCKSTEP_SERVER_GUARD_NORM_WINDOW_H_

#include <cstddef>
#include <optional>
#include <vector>

namespace lockstep {

class NormWindow {
 public:
  // Norms kept; a median is given once kWarmup of them were seen.
  static constexpr size_t kSize = 64;
  static constexpr size_t kWarmup = 16;

  // An accepted push's norm. Zero (a push with nothing for this shard's
  // keys) says nothing of the scale and is not kept.
  void Add(double norm);
  // The median of the norms kept; nullopt before kWarmup.
  std::optional<double> Median() const;
  // The largest Median() so far; nullopt before kWarmup.
  std::optional<double> Peak() const { return peak_; }

 private:
  std::vector<double> norms_;  // a ring of at most kSize
  size_t next_ = 0;
  std::optional<double> peak_;
  mutable std::vector<double> scratch_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_SERVER_GUARD_NORM_WINDOW_H_

// LB-BSP's numerical quota method (GPU clusters, where compute time is
// flat in the batch until the device saturates, so "proportional to
// speed" does not apply): a leader/straggler search over the quotas.
//
// Over a monitor window of committed clocks it averages each worker's
// compute time (filtering noise). The straggler is the slowest worker, the
// leader the fastest one with headroom (quota below its max); a step of
// samples moves from the straggler to the leader, within both workers'
// bounds, so the sum of the quotas is unchanged. The gap is measured
// between the two: a worker held at its cap may stay faster than the rest,
// which no move can change. The fast-approach phase
// starts with a large step, X / (2n). When moves start to oscillate (a
// move takes samples from the worker the previous move gave them to) the
// search enters fine-tune: the step halves (down to 1 sample) and the
// window doubles (up to max_window), so later moves are smaller and better
// measured. Once the slowest and fastest averages differ by less than
// `tolerance` the search stops moving (balanced) and keeps watching. When
// moves of a single sample still oscillate, integer quotas cannot do
// better (a worker with 12 samples cannot be balanced within 3%): the
// search stops there too, at that "settled" gap. Balanced, it moves again
// only if the gap exceeds the settled gap plus `tolerance`; a gap above
// `restart_gap` (the load changed) restarts the fast approach. So does,
// once past the fast approach, a worker whose mean time moved more than
// restart_gap from its reference — the mean it had when its quota was last
// more than 10% away — at about the same quota: noise can keep a search
// from ever reaching balanced, a window that straddles the change hides
// it from the gap, and fine-tune's single samples per doubled window cannot
// follow a new load.
// Thread-safety: not thread-safe.
#ifndef LOCKSTEP_SYNC_POLICIES_LBBSP_NUMERICAL_BATCH_SEARCH_H_
#define LOCKSTEP_SYNC_POLICIES_LBBSP_NUMERICAL_BATCH_SEARCH_H_

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "common/status.h"
#include "sync_policies/lbbsp/quota_split.h"
#include "sync_policies/policy_state.h"

namespace lockstep {

class NumericalBatchSearch {
 public:
  struct Options {
    uint32_t initial_window = 3;  // clocks
    uint32_t max_window = 24;     // clocks
    double tolerance = 0.03;      // (slowest - fastest) / slowest
    double restart_gap = 0.25;
  };
  enum class Phase { kFastApproach = 0, kFineTune = 1, kBalanced = 2 };

  // `global_batch` is X, which sets the fast-approach step.
  NumericalBatchSearch(uint64_t global_batch, Options options);

  // Starts over for `workers` live workers: fast approach, first window,
  // no samples, no previous move. Call whenever membership changes.
  void Reset(size_t workers);

  // Feeds the compute times (seconds) of one committed clock, measured
  // under the current `quotas`. When a full window has been collected for
  // every worker in `quotas`, decides and may move a step between two
  // entries of `quotas`, respecting `bounds` (a worker without an entry
  // has default bounds). Returns true if it moved.
  bool OnClock(const std::map<uint32_t, double>& compute_s,
               std::map<uint32_t, uint32_t>* quotas,
               const std::map<uint32_t, QuotaBounds>& bounds);

  // Writes the search's position (phase, step, window, the window's
  // samples so far, the last move) as "search" and "search_samples/<w>".
  void SaveState(PolicyState* state) const;
  // Continues from what SaveState wrote.
  Status LoadState(const PolicyState& state);

  Phase phase() const { return phase_; }
  uint32_t step() const { return step_; }
  uint32_t window() const { return window_; }
  uint64_t moves() const { return moves_; }
  // The last window's (straggler - leader) / straggler compute time; 0
  // before the first window or when no worker has headroom.
  double last_gap() const { return last_gap_; }

 private:
  struct Move {
    uint32_t from;
    uint32_t to;
  };
  // Per-worker mean over the window, or nullopt while incomplete.
  std::optional<std::map<uint32_t, double>> WindowMeans(
      const std::map<uint32_t, uint32_t>& quotas) const;
  // The straggler and the leader, or nullopt if no worker but the
  // straggler has headroom.
  static std::optional<Move> PickMove(
      const std::map<uint32_t, double>& means,
      const std::map<uint32_t, uint32_t>& quotas,
      const std::map<uint32_t, QuotaBounds>& bounds);
  // Updates phase/step/window for a window with relative gap `gap`;
  // returns false if the search should not move.
  bool UpdatePhase(double gap);
  // Whether some worker's time moved more than restart_gap from its
  // reference while its quota stayed near the reference's.
  bool LoadChanged(const std::map<uint32_t, double>& means,
                   const std::map<uint32_t, uint32_t>& quotas) const;
  // Takes each worker's mean as its reference when it has none, or its
  // quota has left the reference's.
  void UpdateReferences(const std::map<uint32_t, double>& means,
                        const std::map<uint32_t, uint32_t>& quotas);
  // Within 10% (at least one sample).
  static bool QuotaNear(double quota, double reference);
  // Moves a step along `move` (halving first on a reversal); false if
  // nothing moved.
  bool MoveStep(const Move& move, std::map<uint32_t, uint32_t>* quotas,
                const std::map<uint32_t, QuotaBounds>& bounds);
  static QuotaBounds BoundsOf(const std::map<uint32_t, QuotaBounds>& bounds,
                              uint32_t worker);

  uint64_t global_batch_;
  Options options_;
  size_t workers_ = 1;
  uint32_t fast_step_ = 1;
  Phase phase_ = Phase::kFastApproach;
  uint32_t step_ = 1;
  uint32_t window_ = 3;
  std::map<uint32_t, std::vector<double>> samples_;
  std::optional<Move> last_move_;
  uint64_t moves_ = 0;
  double last_gap_ = 0;
  double settled_gap_ = 0;  // the gap the search stopped at
  // Each worker's reference: a quota and its mean time at that quota.
  std::map<uint32_t, std::pair<uint32_t, double>> references_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_SYNC_POLICIES_LBBSP_NUMERICAL_BATCH_SEARCH_H_

// CostModel: what a scenario's heterogeneity profiles say a clock costs
// each worker, from the deterministic compute items alone — the cost model
// (linear=, gpu=) times the factor schedule (xF, xF@C). Transient
// slowdowns and co-located jobs (random), emulated links (not compute) and
// CPU quotas (real, unmodelled) are left out. It gives the static split a
// `batch = "proportional"` policy runs with, and the bound on what any
// batch split can gain over BSP's fixed one (LB-BSP's best case).
// Thread-safety: immutable after Create; const methods may be called
// concurrently.
#ifndef LOCKSTEP_TOOLS_EXPERIMENT_COST_MODEL_H_
#define LOCKSTEP_TOOLS_EXPERIMENT_COST_MODEL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "tools/launch/hetero_spec.h"
#include "worker/emulation/hetero_profile.h"

namespace lockstep {

// The most whole samples `profile` computes within `seconds` at `clock`,
// at most `limit` (its TargetSeconds grows with the batch: a bisection).
uint64_t WholeSamplesWithin(const HeteroProfile& profile, int64_t clock,
                            double seconds, uint64_t limit);

class CostModel {
 public:
  // The compute items of each worker's profile (rank -> items) for a job
  // of `workers` workers. InvalidArgument for a profile that does not
  // parse.
  static StatusOr<CostModel> Create(const HeteroProfiles& profiles,
                                    uint32_t workers);

  // X split over `workers` as evenly as it goes (the first ones get one
  // more): BSP's split of a global batch.
  static std::vector<uint32_t> EvenSplit(uint64_t x, uint32_t workers);

  // "linear=0.001+0.0001,transient=0.1/4/3,x2@100" ->
  // "linear=0.001+0.0001,x2@100".
  static std::string ComputeItems(const std::string& items);

  uint32_t workers() const { return static_cast<uint32_t>(models_.size()); }
  // Every worker has a cost model (linear= or gpu=): only then are the
  // split and the bound defined.
  bool complete() const;
  // No worker has a cost model: every worker runs at its own speed.
  bool none() const;

  // Seconds worker `w` takes at `clock` for `batch` samples, linear
  // between whole batches.
  double Seconds(uint32_t w, int64_t clock, double batch) const;
  // A barrier clock with the fixed `batches`: its slowest worker's time.
  double ClockSeconds(int64_t clock,
                      const std::vector<uint32_t>& batches) const;
  // A perfect split of `global_batch`: the time T at which the batches
  // x_i(T) the workers finish within T sum to it (x_i continuous, within
  // a gpu= cap). REQUIRES: complete().
  double BalancedClockSeconds(int64_t clock, double global_batch) const;
  // The whole batches, each >= 1 and within its cap, summing to
  // `global_batch`, whose slowest worker at `clock` is the fastest
  // possible (ties to the lower rank). REQUIRES: complete(),
  // global_batch >= workers().
  std::vector<uint32_t> BalancedSplit(int64_t clock,
                                      uint64_t global_batch) const;
  // How much shorter a perfect split makes a run of `clocks` clocks than
  // the fixed `batches`: sum over the clocks of ClockSeconds over the sum
  // of BalancedClockSeconds at their total. REQUIRES: complete().
  double SplitSpeedupBound(int64_t clocks,
                           const std::vector<uint32_t>& batches) const;

 private:
  explicit CostModel(std::vector<HeteroProfile> models)
      : models_(std::move(models)) {}
  // The samples worker `w` finishes within `seconds`, continuous.
  double SamplesWithin(uint32_t w, int64_t clock, double seconds,
                       double limit) const;
  double Cap(uint32_t w, double limit) const;

  std::vector<HeteroProfile> models_;  // by rank
};

}  // namespace lockstep

#endif  // LOCKSTEP_TOOLS_EXPERIMENT_COST_MODEL_H_

// LB-BSP (Chen et al., SoCC'20, "semi-dynamic load balancing"): BSP with
// per-worker batch quotas x_w(c) re-sized at every barrier so that workers
// finish a clock together. Quotas are integers, within each worker's
// bounds, and sum to the global batch X (fixed for the job) over the
// workers of a clock; servers weight each push by its batch, so a clock is
// statistically the same as a BSP clock of batch X.
//
// When quotas change: the quotas of clock c + 1 are set when c commits.
// A membership change re-splits X over the live workers: at once if no
// live worker has been admitted to the current clock, else from the next
// clock on. So the quotas handed out for one clock never change: a worker
// joining a clock already under way joins at the next one (its Admit is
// deferred until then), and a worker leaving mid-clock takes its share of
// that clock with it.
//
// Methods (LbBspOptions::method):
//  - analytical (CPU clusters): x_w proportional to the predicted speed
//    (samples/s) of w, from one SpeedPredictor per worker fed with
//    batch / compute_s of every committed clock and the CPU and memory
//    readings of its reports.
//  - numerical (GPU clusters): NumericalBatchSearch's leader/straggler
//    moves over each worker's averaged busy time per clock, compute + push
//    + pull (communication is not negligible on GPUs, and a worker behind
//    a slower link is a straggler too).
// Initial quotas are an equal split of X. If the bounds make sum == X
// impossible, quotas are clamped (all at min or all at max) and
// Metrics() reports lockstep_quota_infeasible = 1.
// Thread-safety: not thread-safe (see SyncPolicy).
#ifndef LOCKSTEP_SYNC_POLICIES_LBBSP_LBBSP_POLICY_H_
#define LOCKSTEP_SYNC_POLICIES_LBBSP_LBBSP_POLICY_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/status.h"
#include "sync_policies/bsp_policy.h"
#include "sync_policies/lbbsp/numerical_batch_search.h"
#include "sync_policies/lbbsp/predictor_factory.h"
#include "sync_policies/lbbsp/quota_split.h"
#include "sync_policies/lbbsp/speed_predictor.h"
#include "sync_policies/lbbsp/worker_speed_model.h"
#include "sync_policies/policy_spec.h"

namespace lockstep {

struct LbBspOptions {
  enum class Method { kAnalytical, kNumerical };
  Method method = Method::kAnalytical;
  // The analytical method's predictor; NARX as in the paper.
  PredictorKind predictor = PredictorKind::kNarx;
  // Per-worker bounds from the policy spec (":min=N", ":max=N"); a
  // worker's WorkerCaps tighten them. 0 for max_batch = no cap.
  uint32_t min_batch = 1;
  uint32_t max_batch = 0;
  // Seeds each worker's NARX initial weights (with the worker's rank).
  uint64_t seed = 1;
  NumericalBatchSearch::Options search;
};

class LbBspPolicy : public BspPolicy {
 public:
  // Parses "lbbsp[:analytical[:last|ema|narx] | :numerical][:min=N][:max=N]"
  // (default analytical:narx; per-worker quota bounds 1 <= min <= max); `job`
  // gives the batches (and seed).
  static StatusOr<std::unique_ptr<SyncPolicy>> Create(const PolicySpec& spec,
                                                      const PolicyJob& job);
  static std::vector<std::string> Forms() {
    return {"lbbsp", "lbbsp:analytical:last", "lbbsp:analytical:ema",
            "lbbsp:analytical:narx", "lbbsp:numerical"};
  }

  // `global_batch` is X. REQUIRES: options.max_batch == 0 or
  // options.min_batch <= options.max_batch.
  LbBspPolicy(uint64_t global_batch, LbBspOptions options);

  // "lbbsp:analytical:<predictor>" or "lbbsp:numerical", then ":min=N"
  // and ":max=N" when set.
  std::string name() const override;
  // The worker's bounds are the spec's tightened by `caps`.
  void OnWorkerJoined(uint32_t worker, int64_t clock,
                      const WorkerCaps& caps) override;
  std::vector<CommitDecision> OnWorkerLeft(uint32_t worker) override;
  // As BspPolicy, with the worker's quota; a worker that joined while the
  // current clock was under way is deferred to the next clock.
  std::optional<AdmissionDecision> Admit(uint32_t worker,
                                         int64_t clock) override;
  std::vector<CommitDecision> OnClockDone(const ClockReport& report) override;
  // BspPolicy's metrics plus lockstep_global_batch, lockstep_quota_samples,
  // lockstep_quota_infeasible, lockstep_lbbsp_resplits_total; analytical:
  // lockstep_predictor_rmse{worker="w"} and
  // lockstep_predicted_speed{worker="w"}; numerical: lockstep_lbbsp_phase
  // (0 fast approach, 1 fine tune, 2 balanced), lockstep_lbbsp_step,
  // lockstep_lbbsp_window, lockstep_lbbsp_moves_total.
  std::map<std::string, double> Metrics() const override;
  // Quotas, each worker's predictor, readings and RMSE sums, the numerical
  // search's position. A resumed job whose workers
  // are the saved ones gets the saved quotas for its first clock; other
  // workers get a fresh split.
  PolicyState SaveState() const override;
  Status LoadState(const PolicyState& state) override;
  // Quotas change every clock, so workers draw from one global order.
  bool prefers_global_order() const override { return true; }

  uint64_t global_batch() const { return global_batch_; }
  const LbBspOptions& options() const { return options_; }
  // The quotas of the current clock (CurrentClock()).
  const std::map<uint32_t, uint32_t>& quotas() const { return quotas_; }
  // The bounds in force for `worker` (defaults if unknown).
  QuotaBounds bounds(uint32_t worker) const;
  // Whether the last split met sum == X within the bounds.
  bool feasible() const { return feasible_; }
  const NumericalBatchSearch& search() const { return search_; }
  // RMSE of `worker`'s predictor so far; nullopt without samples.
  std::optional<double> PredictorRmse(uint32_t worker) const;
  // Analytical: the speed `worker`'s predictor gave for `clock` when its
  // quota was set (from the clock's start until it commits).
  std::optional<double> PredictedSpeed(uint32_t worker,
                                       int64_t clock) const override;

 protected:
  uint32_t QuotaOf(uint32_t worker, int64_t clock) const override;
  void OnCommitted(int64_t clock) override;

 private:
  // What LoadState read, until the first clock after a resume starts.
  struct Saved {
    std::map<uint32_t, uint32_t> quotas;
    bool feasible = true;
    std::map<uint32_t, WorkerSpeedModel> models;  // taken as workers join
    std::optional<NumericalBatchSearch> search;
  };

  // `worker`'s predictor before its first observation.
  std::unique_ptr<SpeedPredictor> NewPredictor(uint32_t worker) const;
  // A fresh model for `worker`, or its saved one.
  WorkerSpeedModel TakeModel(uint32_t worker);
  // Saved quotas for the current clock's workers, if they are the saved
  // ones; returns whether it used them.
  bool UseSavedQuotas();
  StatusOr<WorkerSpeedModel> LoadModel(const PolicyState& state,
                                       uint32_t worker) const;

  // The bounds of the spec alone.
  QuotaBounds SpecBounds() const;
  // Feeds each reporter's speed of a committed clock to its predictor.
  void ObserveSpeeds(const std::map<uint32_t, ClockReport>& reports);
  // Splits X over the workers of the current clock: analytical, by
  // predicted speed; numerical, in proportion to the current quotas (a
  // newcomer weighs the mean), restarting the search.
  void Resplit();
  std::map<uint32_t, double> AnalyticalWeights();
  std::map<uint32_t, double> NumericalWeights() const;
  // Live workers that take part in the current clock.
  std::vector<uint32_t> WorkersOfCurrentClock() const;

  uint64_t global_batch_;
  LbBspOptions options_;
  std::map<uint32_t, QuotaBounds> bounds_;
  std::map<uint32_t, uint32_t> quotas_;
  std::map<uint32_t, WorkerSpeedModel> models_;
  // Reports of uncommitted clocks by live workers.
  std::map<int64_t, std::map<uint32_t, ClockReport>> reports_;
  NumericalBatchSearch search_;
  // Live workers admitted to the current clock: while there are any, the
  // clock is under way and its quotas are fixed.
  std::set<uint32_t> admitted_;
  std::optional<Saved> saved_;
  bool membership_changed_ = false;
  bool feasible_ = true;
  uint64_t resplits_ = 0;
};

}  // namespace lockstep

#endif  // LOCKSTEP_SYNC_POLICIES_LBBSP_LBBSP_POLICY_H_

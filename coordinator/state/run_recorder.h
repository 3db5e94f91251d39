// Records a training run: per-worker per-clock metrics (metrics.jsonl),
// evaluations (eval.jsonl), the final summary (summary.json), and the
// `@progress` / `@summary` lines the launcher reads from stdout.
// Thread-safety: not thread-safe; owned by the coordinator's event loop.
#ifndef LOCKSTEP_COORDINATOR_STATE_RUN_RECORDER_H_
#define LOCKSTEP_COORDINATOR_STATE_RUN_RECORDER_H_

#include <cstdint>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/http/prometheus_text.h"
#include "common/job_config.h"
#include "common/status.h"
#include "snapshot_format/snapshot_manifest.h"
#include "sync_policies/sync_policy.h"

namespace lockstep {

class RunRecorder {
 public:
  // `run_dir` may be empty: then nothing is written to disk, but progress
  // and summary lines are still printed.
  // `resumed`: the round a resumed job continues from. Its files are
  // appended to; its time, samples and clocks count on from the round's
  // (so eval.jsonl's times and the summary cover the whole run); and the
  // evaluations eval.jsonl holds of clocks up to the round's count again
  // (the newest accuracy, the time to target).
  static StatusOr<std::unique_ptr<RunRecorder>> Create(
      const std::string& run_dir, const JobConfig& job,
      const std::string& policy_name,
      const std::optional<ManifestRound>& resumed = std::nullopt);

  // The job once resolved (clock count, data size), before training.
  void SetJob(const JobConfig& job) { job_ = job; }
  // Marks the start of training (time zero for wall_s, or a resumed
  // round's time).
  void Start();
  // One worker's clock. `staleness` is the largest staleness of its pushes
  // (apply-on-arrival policies, else 0); `dropped` how many shards dropped
  // its push. `predicted_speed` is the speed the policy predicted for the
  // clock when it set the quota (SyncPolicy::PredictedSpeed): with it the
  // line also has predicted_speed and predicted_compute_s (the batch over
  // it), to set beside compute_s.
  void RecordClock(const ClockReport& report, int64_t staleness,
                   uint32_t dropped,
                   std::optional<double> predicted_speed = std::nullopt);
  // Clock `clock` was committed with `samples` samples in total.
  void RecordCommit(int64_t clock, uint64_t samples, double mean_loss);
  // An evaluation of the model after `clock` (a point of global progress:
  // clocks, or X samples under apply-on-arrival policies), which training
  // reached `reached_s` seconds after Start(); the evaluation itself took
  // `seconds`, out of band (the evaluator's time: no training worker
  // waited for it). eval.jsonl's wall_s and train_s, and time to target,
  // are the time the point was reached, so they do not depend on when the
  // evaluator got to it. Evaluations may arrive out of point order.
  void RecordEvaluation(int64_t clock, double loss, double accuracy, bool final,
                        double seconds, double reached_s);
  // Training is over (every worker finished): train_s stops here.
  void EndTraining();
  // Prints a @progress line if enough time passed since the last one (or
  // `force`).
  void MaybePrintProgress(bool force);
  // Writes summary.json (with `extra` fields added) and prints the
  // @summary line.
  // `policy_metrics` go into a nested "policy_metrics" object.
  Status Finish(const std::map<std::string, double>& extra,
                const std::map<std::string, double>& policy_metrics);
  // The run's counters (without the policy's).
  void AddMetrics(PrometheusText* text) const;

  // Seconds since the job began (a resumed job's from its round's time);
  // the round's time before Start.
  double WallSeconds() const;
  // Wall time of training: until EndTraining, or now.
  double TrainSeconds() const {
    return train_end_s_ >= 0 ? train_end_s_ : WallSeconds();
  }
  int64_t last_committed() const { return last_clock_; }
  // Samples processed since the job began.
  uint64_t samples() const { return samples_; }
  // Commits recorded by this process.
  uint64_t commits() const { return commits_; }
  // Takes up the run from `round`, as if it resumed from it: its time,
  // samples and clocks count on from the round's, the files keep only the
  // round's timeline (RunHistory: the rest moves to undone-*.jsonl), and
  // their evaluations give the newest accuracy and the time to target.
  // Create does it for a resumed job; a resume whose round was damaged
  // does it again for the round before, before any commit.
  Status TakeUpRound(const ManifestRound& round);

 private:
  RunRecorder(std::string run_dir, JobConfig job, std::string policy);
  Status OpenFiles(std::ios::openmode mode);

  std::string run_dir_;
  JobConfig job_;
  std::string policy_;
  std::ofstream metrics_;
  std::ofstream evals_;
  double start_s_ = 0;         // 0 before Start
  double resumed_s_ = 0;       // a resumed round's train_s
  int64_t resumed_from_ = -1;  // a resumed round's clock
  double last_progress_s_ = -1;
  int64_t printed_clock_ = -2;
  double printed_accuracy_ = -2;
  double last_flush_s_ = 0;
  int64_t last_clock_ = -1;
  uint64_t samples_ = 0;
  uint64_t commits_ = 0;
  double loss_ema_ = 0;
  bool have_loss_ = false;
  double test_accuracy_ = -1;
  double test_loss_ = -1;
  std::optional<double> time_to_target_s_;
  double eval_s_ = 0;  // evaluations' time so far (out of band)
  double train_end_s_ = -1;
  // The evaluation of the newest point recorded (the summary's accuracy
  // is the final one's, else that point's).
  int64_t newest_eval_ = -1;
  // Staleness histogram: count of pushes with staleness in bucket i
  // (bucket bounds kStalenessBuckets in the .cc, last bucket = above).
  std::vector<uint64_t> staleness_counts_;
  uint64_t staleness_sum_ = 0;
  uint64_t dropped_pushes_ = 0;
  std::map<uint32_t, double> wait_s_;  // per worker, total
  uint64_t clocks_reported_ = 0;
  // Sums over every worker's clocks, for the share of time in each phase.
  double compute_s_ = 0, push_s_ = 0, pull_s_ = 0, wait_total_s_ = 0;
};

}  // namespace lockstep

#endif  // LOCKSTEP_COORDINATOR_STATE_RUN_RECORDER_H_

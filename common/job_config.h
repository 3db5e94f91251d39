// The job configuration: every setting that defines a training job. The
// coordinator parses it from flags and sends it to every process, so
// servers and workers never disagree about the job. Each field is listed
// once in the field table (job_fields.h), which gives it its flag, help
// text, JSON key and wire encoding; the initializers below are the only
// defaults. Names the registries own (--model, --data, --sync,
// --optimizer) are checked by those registries, not here.
// Thread-safety: value type.
#ifndef LOCKSTEP_COMMON_JOB_CONFIG_H_
#define LOCKSTEP_COMMON_JOB_CONFIG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/job_shape.h"
#include "common/lr_schedule.h"
#include "common/status.h"

namespace lockstep {

struct JobConfig {
  std::string model = "mlp:256,128";
  std::string data = "fashion-mnist";
  // Folder with the Fashion-MNIST IDX .gz files.
  std::string data_dir = "/usr/share/datasets/fashion-mnist";
  // LIBSVM test file; empty = hold out the last 10% of --data.
  std::string test_data;
  std::string sync = "bsp";
  uint32_t servers = 2;
  // Backups per shard, on the next servers
  // (server/replication/replica_stream.h): a lost primary's backup is promoted
  // with no rollback. < servers.
  uint32_t replicas = 0;
  uint32_t workers = 4;
  // The most workers the running job takes (0: `workers`): workers beyond
  // `workers` join once training runs. Needs the global data order.
  uint32_t max_workers = 0;
  // Per-worker batch; a single entry applies to every worker.
  std::vector<uint32_t> batches = {32};
  std::string optimizer = "momentum";
  double lr = 0.05;
  double momentum = 0.9;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double epsilon = 1e-8;
  double weight_decay = 0;
  std::string lr_schedule = "const";
  uint64_t seed = 1;
  double epochs = 5;
  // Total clocks; 0 = derive from epochs once the data's size is known.
  int64_t max_clocks = 0;
  uint64_t train_limit = 0;
  uint64_t test_limit = 0;
  int64_t eval_every = 100;
  // Out-of-band evaluator processes: 1 (the default; lockstep-launch starts
  // it) evaluates the model at every eval_every point and at the end, so
  // no training worker pays for evaluation; 0: no evaluation during
  // training, and the lowest-ranked worker evaluates the final model.
  uint32_t evaluators = 1;
  double target_accuracy = 0;
  // Seconds of training (evaluations left out) after which the coordinator
  // ends the job as if its clocks were done: a same-wall-time stop beside
  // the same-sample stop of max_clocks. 0 = off.
  double budget_s = 0;
  uint32_t heartbeat_ms = 1000;
  // How workers draw samples: "partition" (each worker walks its own
  // strided slice of a seeded permutation), "global" (clock c's global
  // batch is the next X samples of one permutation; a worker takes its
  // quota at its batch offset, so uneven and changing quotas stay
  // unbiased), or "auto" (the policy's preference; see
  // ResolveAutoDataOrder in sync_policies/).
  std::string data_order = "auto";
  // Snapshot rounds: one every snapshot_every_clocks clocks and/or every
  // snapshot_every_s seconds (0 = off), stored under snapshot_dir (each
  // shard's RocksDB in shard-K/, the coordinator's manifest.json), keeping
  // the newest snapshot_keep complete rounds.
  int64_t snapshot_every_clocks = 0;
  double snapshot_every_s = 0;
  std::string snapshot_dir;
  uint32_t snapshot_keep = 3;
  // A shard writes a full round at least every snapshot_full_every rounds;
  // the ones between hold only what changed since the round before
  // (dense chunks whose bytes changed, sparse rows touched). 1: all full.
  uint32_t snapshot_full_every = 8;
  // Poisoned pushes (server/guard/push_guard.h): a shard refuses a push whose
  // values are not all finite, or whose gradient's L2 norm over the
  // shard's keys is above max_grad_norm (0 = no bound); with
  // grad_norm_action "clip" such a push is scaled down to the bound
  // instead. A worker that a shard refuses max_refused_pushes times in a
  // row is removed from the job (0 = never).
  double max_grad_norm = 0;
  // And a push whose norm is above norm_outlier_factor times the peak
  // median of the pushes the shard accepted (0 = off;
  // server/guard/push_guard.h).
  double norm_outlier_factor = 100;
  // How a commit combines its pushes (common/aggregation.h): "mean" (batch
  // weighted), "median" or "trimmed-mean:F"; the robust rules only under
  // policies that commit clocks.
  std::string aggregate = "mean";
  std::string grad_norm_action = "reject";
  uint32_t max_refused_pushes = 3;
  // The largest model a worker may describe, in dense parameters: the
  // servers allocate what the first description says (4 bytes each, and
  // the optimizer's slots).
  uint64_t max_params = uint64_t{1} << 30;

  // Resolved from the data set (ResolveJob), not flags; 0 until then.
  uint64_t train_samples = 0;
  uint64_t input_dim = 0;
  uint32_t classes = 0;

  bool operator==(const JobConfig&) const = default;

  // Batch of worker `rank` (the configured split, before any policy quota).
  uint32_t BatchOf(uint32_t rank) const;
  // Sum of the per-worker batches: the global batch X.
  uint64_t GlobalBatch() const;
  // The largest batch a worker may push for one clock, as the job declares
  // it: X under LB-BSP (its quotas share X), else the largest per-worker
  // batch. A push above it is refused (what a worker states is not
  // trusted beyond that).
  uint64_t MaxPushBatch() const;
  // The learning-rate schedule the job's flags describe (--lr,
  // --lr-schedule over max_clocks, at least 1 before it is resolved).
  StatusOr<LrSchedule> LearningRateSchedule() const;
  uint32_t MaxWorkers() const {
    return max_workers > workers ? max_workers : workers;
  }
  // True when rounds are taken on a schedule.
  bool snapshots() const {
    return snapshot_every_clocks > 0 || snapshot_every_s > 0;
  }
  // True once ResolveJob filled the data-derived fields.
  bool resolved() const { return train_samples > 0 && max_clocks > 0; }
};

// Checks value ranges and cross-field consistency of the settings common/
// owns (counts, batches, rates, schedule, data order, timing).
Status ValidateJobConfig(const JobConfig& config);

// Fills train_samples, input_dim and classes from the data set the workers
// loaded, and derives max_clocks from epochs when it is 0. Errors: an empty
// data set, or epochs that give no sane clock count.
Status ResolveJob(const DataShape& data, JobConfig* config);

// Parses "32" or "16,16,32,64" into per-worker batches.
StatusOr<std::vector<uint32_t>> ParseBatchList(const std::string& text);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_JOB_CONFIG_H_

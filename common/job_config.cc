#include "common/job_config.h"

#include <algorithm>
#include <cmath>

#include "common/aggregation.h"
#include "common/lr_schedule.h"
#include "common/strings.h"

namespace lockstep {

uint32_t JobConfig::BatchOf(uint32_t rank) const {
  if (batches.size() == 1) return batches[0];
  return rank < batches.size() ? batches[rank] : 0;
}

uint64_t JobConfig::MaxPushBatch() const {
  if (sync.rfind("lbbsp", 0) == 0) return GlobalBatch();
  uint32_t largest = 0;
  for (uint32_t b : batches) largest = std::max(largest, b);
  return largest;
}

uint64_t JobConfig::GlobalBatch() const {
  uint64_t total = 0;
  for (uint32_t r = 0; r < workers; ++r) total += BatchOf(r);
  return total;
}

StatusOr<std::vector<uint32_t>> ParseBatchList(const std::string& text) {
  if (!text.empty() && text.back() == ',') {
    return InvalidArgument("--batch: trailing comma in '" + text + "'");
  }
  LS_ASSIGN_OR_RETURN(std::vector<uint32_t> out,
                      ParseSizeList(text, "--batch: bad batch size"));
  if (out.empty()) return InvalidArgument("--batch is empty");
  return out;
}

Status ResolveJob(const DataShape& data, JobConfig* c) {
  if (data.train_samples == 0) return InvalidArgument("the data set is empty");
  c->train_samples = data.train_samples;
  c->input_dim = data.input_dim;
  c->classes = data.classes;
  if (c->max_clocks > 0) return Status::Ok();
  if (!(c->epochs > 0) || !std::isfinite(c->epochs)) {
    return InvalidArgument("--epochs must be > 0 (or give --clocks)");
  }
  if (c->GlobalBatch() == 0) return InvalidArgument("the global batch is 0");
  const double clocks = std::ceil(c->epochs * c->train_samples /
                                  static_cast<double>(c->GlobalBatch()));
  // Far beyond any real job; keeps the cast to int64 defined.
  constexpr double kMaxClocks = 1e15;
  if (clocks > kMaxClocks) {
    return InvalidArgument("--epochs gives more than 1e15 clocks");
  }
  c->max_clocks = static_cast<int64_t>(std::max(1.0, clocks));
  return Status::Ok();
}

namespace {

Status ValidateCounts(const JobConfig& c) {
  if (c.servers < 1 || c.servers > 1024) {
    return InvalidArgument("--servers must be in [1, 1024]");
  }
  if (c.replicas >= c.servers) {
    return InvalidArgument("--replicas must be below --servers (" +
                           std::to_string(c.servers) +
                           "): each backup lives on another server");
  }
  if (c.workers < 1 || c.workers > 4096) {
    return InvalidArgument("--workers must be in [1, 4096]");
  }
  if (c.max_workers != 0 &&
      (c.max_workers < c.workers || c.max_workers > 4096)) {
    return InvalidArgument("--max-workers must be 0 or in [--workers, 4096]");
  }
  if (c.MaxWorkers() > c.workers && c.data_order == "partition") {
    return InvalidArgument(
        "--max-workers above --workers needs --data-order global: a "
        "partition per worker cannot follow a changing worker count");
  }
  if (c.batches.size() != 1 && c.batches.size() != c.workers) {
    return InvalidArgument("--batch lists " + std::to_string(c.batches.size()) +
                           " sizes for " + std::to_string(c.workers) +
                           " workers");
  }
  for (uint32_t b : c.batches) {
    if (b == 0) return InvalidArgument("--batch sizes must be >= 1");
  }
  return Status::Ok();
}

}  // namespace

Status ValidateJobConfig(const JobConfig& c) {
  LS_RETURN_IF_ERROR(ValidateCounts(c));
  if (c.model.empty()) return InvalidArgument("--model is empty");
  if (c.data.empty()) return InvalidArgument("--data is empty");
  if (c.sync.empty()) return InvalidArgument("--sync is empty");
  if (c.optimizer.empty()) return InvalidArgument("--optimizer is empty");
  if (c.data_order != "auto" && c.data_order != "partition" &&
      c.data_order != "global") {
    return InvalidArgument("--data-order must be partition, global or auto");
  }
  if (!(c.lr > 0) || !std::isfinite(c.lr)) {
    return InvalidArgument("--lr must be > 0");
  }
  if (!(c.epochs > 0) && c.max_clocks <= 0) {
    return InvalidArgument("--epochs must be > 0 (or give --clocks)");
  }
  if (c.max_clocks < 0) return InvalidArgument("--clocks must be >= 0");
  if (c.eval_every < 0) return InvalidArgument("--eval-every must be >= 0");
  if (c.evaluators > 1) return InvalidArgument("--evaluators must be 0 or 1");
  if (c.target_accuracy < 0 || c.target_accuracy > 1) {
    return InvalidArgument("--target-accuracy must be in [0, 1]");
  }
  if (!(c.budget_s >= 0) || !std::isfinite(c.budget_s)) {
    return InvalidArgument("--budget-s must be >= 0 seconds");
  }
  if (c.heartbeat_ms < 10) {
    return InvalidArgument("--heartbeat-ms must be >= 10");
  }
  if (c.snapshot_every_clocks < 0 || !(c.snapshot_every_s >= 0)) {
    return InvalidArgument(
        "--snapshot-every-clocks and --snapshot-every-s must be >= 0");
  }
  if (c.snapshot_keep < 1)
    return InvalidArgument("--snapshot-keep must be >= 1");
  if (c.snapshot_full_every < 1)
    return InvalidArgument("--snapshot-full-every must be >= 1 (1: all full)");
  if (!(c.max_grad_norm >= 0) || !std::isfinite(c.max_grad_norm)) {
    return InvalidArgument("--max-grad-norm must be >= 0 (0: no bound)");
  }
  if (!(c.norm_outlier_factor == 0 || c.norm_outlier_factor >= 2) ||
      !std::isfinite(c.norm_outlier_factor)) {
    return InvalidArgument(
        "--norm-outlier-factor must be 0 (off) or at least 2");
  }
  LS_RETURN_IF_ERROR(Aggregation::Parse(c.aggregate).status());
  if (c.grad_norm_action != "reject" && c.grad_norm_action != "clip") {
    return InvalidArgument("--grad-norm-action must be reject or clip");
  }
  // The schedule's length is checked against max_clocks once it is known.
  return c.LearningRateSchedule().status();
}

StatusOr<LrSchedule> JobConfig::LearningRateSchedule() const {
  return LrSchedule::Parse(lr_schedule, lr, std::max<int64_t>(1, max_clocks));
}

}  // namespace lockstep

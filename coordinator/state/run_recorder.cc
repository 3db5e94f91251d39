#include "coordinator/state/run_recorder.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "common/clock.h"
#include "common/json.h"
#include "coordinator/state/run_history.h"

namespace lockstep {
namespace {

// Smoothing of the printed training loss over committed clocks.
constexpr double kLossEma = 0.05;
constexpr double kProgressPeriodS = 0.5;
constexpr double kIdleProgressPeriodS = 10.0;
constexpr double kFlushPeriodS = 1.0;
// Upper bounds of the staleness histogram's buckets (Prometheus `le`),
// doubling, so a few buckets reach from none to beyond 64 clocks.
constexpr int64_t kStalenessBuckets[] = {0, 1, 2, 4, 8, 16, 32, 64};
constexpr size_t kNumBuckets = std::size(kStalenessBuckets) + 1;

// Negative values are the recorder's "none yet" (test_accuracy_ is -1
// before the first evaluation): printed as "nan", which the launcher reads
// as not reported.
std::string Fixed(double v, int digits) {
  if (!std::isfinite(v) || v < 0) return "nan";
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

}  // namespace

RunRecorder::RunRecorder(std::string run_dir, JobConfig job, std::string policy)
    : run_dir_(std::move(run_dir)),
      job_(std::move(job)),
      policy_(std::move(policy)) {}

StatusOr<std::unique_ptr<RunRecorder>> RunRecorder::Create(
    const std::string& run_dir, const JobConfig& job,
    const std::string& policy_name,
    const std::optional<ManifestRound>& resumed) {
  std::unique_ptr<RunRecorder> rec(new RunRecorder(run_dir, job, policy_name));
  if (!run_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(run_dir, ec);
    if (ec) {
      return IOError("cannot create run dir " + run_dir + ": " + ec.message());
    }
  }
  if (resumed) {
    LS_RETURN_IF_ERROR(rec->TakeUpRound(*resumed));
  } else {
    LS_RETURN_IF_ERROR(rec->OpenFiles(std::ios::trunc));
  }
  return rec;
}

Status RunRecorder::OpenFiles(std::ios::openmode mode) {
  if (run_dir_.empty()) return Status::Ok();
  metrics_.open(run_dir_ + "/metrics.jsonl", mode);
  evals_.open(run_dir_ + "/eval.jsonl", mode);
  if (!metrics_ || !evals_) {
    return IOError("cannot write metrics files in " + run_dir_);
  }
  return Status::Ok();
}

Status RunRecorder::TakeUpRound(const ManifestRound& round) {
  resumed_from_ = round.clock;
  resumed_s_ = round.train_s;
  last_clock_ = round.clock;
  samples_ = round.samples;
  test_accuracy_ = -1;
  test_loss_ = -1;
  newest_eval_ = -1;
  time_to_target_s_.reset();
  if (run_dir_.empty()) return Status::Ok();
  metrics_.close();
  evals_.close();
  // The clocks after the round run again: what the files hold of them is
  // of a timeline that was undone (RunHistory).
  LS_ASSIGN_OR_RETURN(const std::vector<KeptEvaluation> kept,
                      RunHistory::KeepUpTo(run_dir_, round.clock));
  for (const KeptEvaluation& e : kept) {
    if (e.clock >= newest_eval_) {
      newest_eval_ = e.clock;
      test_accuracy_ = e.accuracy;
      test_loss_ = e.loss;
    }
    if (job_.target_accuracy > 0 && e.accuracy >= job_.target_accuracy &&
        (!time_to_target_s_ || e.train_s < *time_to_target_s_)) {
      time_to_target_s_ = e.train_s;
    }
  }
  return OpenFiles(std::ios::app);
}

void RunRecorder::Start() { start_s_ = NowSeconds(); }

double RunRecorder::WallSeconds() const {
  return resumed_s_ + (start_s_ > 0 ? NowSeconds() - start_s_ : 0.0);
}

void RunRecorder::RecordClock(const ClockReport& r, int64_t staleness,
                              uint32_t dropped,
                              std::optional<double> predicted_speed) {
  if (staleness_counts_.empty()) staleness_counts_.assign(kNumBuckets, 0);
  size_t bucket = 0;
  while (bucket < std::size(kStalenessBuckets) &&
         staleness > kStalenessBuckets[bucket]) {
    ++bucket;
  }
  ++staleness_counts_[bucket];
  staleness_sum_ += static_cast<uint64_t>(std::max<int64_t>(0, staleness));
  // The counters are kept with or without a run directory: the metrics
  // endpoint and the summary line need them too. A push counts as dropped
  // when any shard dropped it.
  dropped_pushes_ += dropped > 0 ? 1 : 0;
  wait_s_[r.worker] += r.wait_s;
  ++clocks_reported_;
  compute_s_ += r.compute_s;
  push_s_ += r.push_s;
  pull_s_ += r.pull_s;
  wait_total_s_ += r.wait_s;
  if (!metrics_.is_open()) return;
  JsonObject o;
  o.Add("worker", r.worker).Add("clock", r.clock).Add("batch", r.batch);
  o.Add("compute_s", r.compute_s).Add("push_s", r.push_s);
  o.Add("pull_s", r.pull_s).Add("wait_s", r.wait_s).Add("loss", r.loss);
  o.Add("staleness", staleness).Add("dropped", dropped > 0);
  o.Add("dropped_shards", dropped);
  o.Add("cpu_available", r.cpu_available);
  if (predicted_speed.has_value() && *predicted_speed > 0) {
    o.Add("predicted_speed", *predicted_speed);
    o.Add("predicted_compute_s", r.batch / *predicted_speed);
  }
  o.Add("wall_s", WallSeconds());
  metrics_ << o.str() << '\n';
  // One line per worker per clock can be thousands a second: flushed about
  // once a second, so readers follow the run closely without a write per
  // line (Finish flushes the rest).
  if (NowSeconds() - last_flush_s_ > kFlushPeriodS) {
    metrics_.flush();
    last_flush_s_ = NowSeconds();
  }
}

void RunRecorder::RecordCommit(int64_t clock, uint64_t samples,
                               double mean_loss) {
  ++commits_;
  last_clock_ = std::max(last_clock_, clock);
  samples_ += samples;
  // A NaN mean loss (a commit without any listed worker's report) is left
  // out, or the smoothed loss would stay NaN for good.
  if (std::isfinite(mean_loss)) {
    loss_ema_ = have_loss_ ? (1 - kLossEma) * loss_ema_ + kLossEma * mean_loss
                           : mean_loss;
    have_loss_ = true;
  }
}

void RunRecorder::RecordEvaluation(int64_t clock, double loss, double accuracy,
                                   bool final, double seconds,
                                   double reached_s) {
  // Evaluations may arrive out of point order: the summary keeps the newest
  // point's (the final one's above all), and time to target the earliest
  // time any point reached the target.
  if (final || clock >= newest_eval_) {
    test_accuracy_ = accuracy;
    test_loss_ = loss;
    newest_eval_ = final ? INT64_MAX : clock;
  }
  eval_s_ += std::max(0.0, seconds);
  if (job_.target_accuracy > 0 && accuracy >= job_.target_accuracy &&
      (!time_to_target_s_ || reached_s < *time_to_target_s_)) {
    time_to_target_s_ = reached_s;
  }
  if (!evals_.is_open()) return;
  JsonObject o;
  o.Add("clock", clock).Add("wall_s", reached_s).Add("train_s", reached_s);
  o.Add("eval_s", seconds).Add("test_loss", loss);
  o.Add("test_accuracy", accuracy).Add("final", final);
  evals_ << o.str() << '\n';
  evals_.flush();
}

void RunRecorder::EndTraining() {
  if (train_end_s_ < 0) train_end_s_ = WallSeconds();
}

void RunRecorder::MaybePrintProgress(bool force) {
  const double now = NowSeconds();
  if (!force && now - last_progress_s_ < kProgressPeriodS) return;
  // Unchanged state is repeated only now and then (the launcher's
  // progress line stays alive while workers wait at the end).
  const bool changed =
      last_clock_ != printed_clock_ || test_accuracy_ != printed_accuracy_;
  if (!force && !changed && now - last_progress_s_ < kIdleProgressPeriodS) {
    return;
  }
  last_progress_s_ = now;
  printed_clock_ = last_clock_;
  printed_accuracy_ = test_accuracy_;
  const double wall = std::max(1e-9, WallSeconds());
  std::cout << "@progress clock=" << (last_clock_ + 1)
            << " max_clocks=" << job_.max_clocks << " epoch="
            << Fixed(static_cast<double>(samples_) / job_.train_samples, 3)
            << " samples_per_s=" << Fixed(samples_ / wall, 1)
            << " train_loss=" << (have_loss_ ? Fixed(loss_ema_, 4) : "nan")
            << " test_accuracy=" << Fixed(test_accuracy_, 4) << std::endl;
}

void RunRecorder::AddMetrics(PrometheusText* text) const {
  auto line = [&](const std::string& name, double v) { text->Add(name, v); };
  line("lockstep_clock", static_cast<double>(last_clock_ + 1));
  line("lockstep_samples_total", static_cast<double>(samples_));
  line("lockstep_wall_seconds", WallSeconds());
  line("lockstep_train_loss", have_loss_ ? loss_ema_ : NAN);
  line("lockstep_test_accuracy", test_accuracy_ >= 0 ? test_accuracy_ : NAN);
  line("lockstep_dropped_pushes_total", static_cast<double>(dropped_pushes_));
  for (const auto& [w, s] : wait_s_) {
    line("lockstep_wait_seconds_total{worker=\"" + std::to_string(w) + "\"}",
         s);
  }
  uint64_t cumulative = 0;
  for (size_t i = 0; i < staleness_counts_.size(); ++i) {
    cumulative += staleness_counts_[i];
    const std::string le = i < std::size(kStalenessBuckets)
                               ? std::to_string(kStalenessBuckets[i])
                               : "+Inf";
    line("lockstep_staleness_bucket{le=\"" + le + "\"}",
         static_cast<double>(cumulative));
  }
  line("lockstep_staleness_sum", static_cast<double>(staleness_sum_));
  line("lockstep_staleness_count", static_cast<double>(cumulative));
}

Status RunRecorder::Finish(
    const std::map<std::string, double>& extra,
    const std::map<std::string, double>& policy_metrics) {
  // Rates are over training time: the final evaluation comes after it.
  const double wall = TrainSeconds();
  JsonObject o;
  o.Add("policy", policy_).Add("clocks", last_clock_ + 1);
  o.Add("wall_s", WallSeconds()).Add("train_s", wall).Add("eval_s", eval_s_);
  o.Add("samples", samples_);
  o.Add("samples_per_s", wall > 0 ? samples_ / wall : 0.0);
  o.Add("epochs", static_cast<double>(samples_) / job_.train_samples);
  o.Add("workers", job_.workers).Add("servers", job_.servers);
  o.Add("global_batch", job_.GlobalBatch());
  if (test_accuracy_ >= 0) {
    o.Add("test_accuracy", test_accuracy_).Add("test_loss", test_loss_);
  } else {
    o.AddNull("test_accuracy").AddNull("test_loss");
  }
  if (job_.target_accuracy > 0) o.Add("target_accuracy", job_.target_accuracy);
  if (resumed_from_ >= 0) o.Add("resumed_from_clock", resumed_from_);
  if (time_to_target_s_) {
    o.Add("time_to_target_s", *time_to_target_s_);
  } else {
    o.AddNull("time_to_target_s");
  }
  o.Add("dropped_pushes", dropped_pushes_);
  o.Add("clocks_per_s", wall > 0 ? (last_clock_ + 1) / wall : 0.0);
  const double phases =
      std::max(1e-12, compute_s_ + push_s_ + pull_s_ + wait_total_s_);
  o.Add("compute_share", compute_s_ / phases);
  o.Add("push_share", push_s_ / phases);
  o.Add("pull_share", pull_s_ / phases);
  o.Add("wait_share", wait_total_s_ / phases);
  double wait_total = 0;
  for (const auto& [w, s] : wait_s_) wait_total += s;
  o.Add("mean_wait_s_per_clock",
        clocks_reported_ > 0 ? wait_total / clocks_reported_ : 0.0);
  for (const auto& [key, value] : extra) o.Add(key, value);
  JsonObject policy;
  for (const auto& [key, value] : policy_metrics) policy.Add(key, value);
  o.AddRaw("policy_metrics", policy.str());
  // A last @progress line shows the final state before the @summary line.
  MaybePrintProgress(true);
  std::cout << "@summary " << o.str() << std::endl;
  if (run_dir_.empty()) return Status::Ok();
  metrics_.flush();
  std::ofstream out(run_dir_ + "/summary.json", std::ios::trunc);
  out << o.str() << '\n';
  out.close();
  if (!out) return IOError("cannot write " + run_dir_ + "/summary.json");
  return Status::Ok();
}

}  // namespace lockstep

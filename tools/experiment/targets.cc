#include "tools/experiment/targets.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace lockstep {
namespace {

std::string Value(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.6g", v);
  return buf;
}

std::string IntervalCsv(const Interval& i) {
  if (i.empty()) return ",,";
  auto num = [](double v) {
    return std::isinf(v) ? std::string("inf") : Value(v);
  };
  return num(i.median) + "," + num(i.lo) + "," + num(i.hi);
}

// Where a run reached `target`: (seconds, clocks, samples), +inf when it
// never did.
struct Reach {
  double time_s = INFINITY, clocks = INFINITY, samples = INFINITY;
};

Reach ReachOf(const RunMetrics& m, const RunTarget& target) {
  Reach r;
  const EvalPoint* e = m.FirstReaching(target);
  if (e == nullptr) return r;
  // train_s is when training reached the point, not when its evaluation
  // ended, so the evaluator's delay is not counted. Under every policy a
  // point is the model after that many clocks of X samples (on-arrival
  // policies count their progress so too), hence clocks x X samples.
  r.time_s = e->train_s;
  r.clocks = e->clock;
  r.samples = e->clock * m.summary.Get("global_batch");  // NaN if absent
  return r;
}

// The display name of each policy: its chosen sweep point, if any.
// The runs are the chosen groups' (BuildScenarioReport), so all runs of
// a policy share one sweep point and the first names it.
std::string NameOf(const std::vector<RunOutcome>& runs,
                   const std::string& policy) {
  for (const RunOutcome& r : runs) {
    if (r.policy == policy && !r.sweep_point.empty()) {
      return policy + "@" + r.sweep_point;
    }
  }
  return policy;
}

TargetRow RowOf(const std::vector<RunOutcome>& runs, const std::string& policy,
                const std::string& baseline, const RunTarget& target) {
  TargetRow row;
  row.policy = NameOf(runs, policy);
  row.target = target;
  // Paired by seed, as a seed's two runs share its data order. A baseline
  // seed that never reached the target pairs as +inf; a failed run (no
  // metrics) pairs with nothing.
  std::map<uint64_t, double> base;  // seed -> the baseline's time
  for (const RunOutcome& r : runs) {
    if (r.policy == baseline && r.metrics) {
      base[r.seed] = ReachOf(*r.metrics, target).time_s;
    }
  }
  std::vector<double> times, clocks, samples;
  std::vector<std::pair<double, double>> pairs;
  for (const RunOutcome& r : runs) {
    if (r.policy != policy || !r.metrics) continue;
    ++row.runs;
    const Reach reach = ReachOf(*r.metrics, target);
    row.reached += std::isfinite(reach.time_s) ? 1 : 0;
    times.push_back(reach.time_s);
    clocks.push_back(reach.clocks);
    samples.push_back(reach.samples);
    auto b = base.find(r.seed);
    if (b != base.end()) pairs.push_back({b->second, reach.time_s});
  }
  row.time_s = MedianInterval(times);
  row.clocks = MedianInterval(clocks);
  row.samples = MedianInterval(samples);
  row.speedup = RatioInterval(pairs);
  return row;
}

}  // namespace

std::vector<RunTarget> ReportTargets(double main_target,
                                     const std::vector<double>& accuracies,
                                     double loss) {
  // The main target may be one of `accuracies` (the highest, when the job
  // gives none): merged, so it is listed once.
  std::vector<double> all = accuracies;
  if (main_target > 0) all.push_back(main_target);
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  std::vector<RunTarget> targets;
  targets.reserve(all.size() + 1);
  for (double a : all) targets.push_back({a, false});
  if (loss > 0) targets.push_back({loss, true});
  return targets;
}

std::vector<TargetRow> TargetRows(const std::vector<RunOutcome>& runs,
                                  const std::vector<std::string>& policies,
                                  const std::string& baseline,
                                  const std::vector<RunTarget>& targets) {
  std::vector<TargetRow> rows;
  for (const std::string& policy : policies) {
    for (const RunTarget& target : targets) {
      rows.push_back(RowOf(runs, policy, baseline, target));
    }
  }
  return rows;
}

std::string TargetsMarkdown(const std::vector<TargetRow>& rows,
                            const std::string& baseline) {
  std::string md =
      "\nEvery target (accuracy: test accuracy at or above it; loss: test "
      "loss at or below it), from each run's evaluations. Medians over the "
      "seeds, a seed that never reached the target counting as never; in "
      "brackets the " +
      std::string(kIntervalMethod) + "; speedup: " + kRatioMethod +
      ".\n\n| policy | target | reached | time (s) | clocks | samples | "
      "speedup vs " +
      baseline + " |\n|---|---|---|---|---|---|---|\n";
  for (const TargetRow& r : rows) {
    md += "| " + r.policy + " | " + r.target.Text() + " | " +
          std::to_string(r.reached) + "/" + std::to_string(r.runs) + " | " +
          r.time_s.Text(1) + " | " + r.clocks.Text(0) + " | " +
          r.samples.Text(0) + " | " + r.speedup.Text(2, "x", "inf") + " |\n";
  }
  return md;
}

std::string TargetsCsv(const std::vector<TargetRow>& rows) {
  std::string out =
      "policy,target_kind,target,runs,reached,time_s_median,time_s_lo,"
      "time_s_hi,clocks_median,clocks_lo,clocks_hi,samples_median,samples_lo,"
      "samples_hi,speedup,speedup_lo,speedup_hi\n";
  for (const TargetRow& r : rows) {
    out += CsvText(r.policy) + "," + (r.target.loss ? "loss" : "accuracy") +
           "," + Value(r.target.value) + "," + std::to_string(r.runs) + "," +
           std::to_string(r.reached) + "," + IntervalCsv(r.time_s) + "," +
           IntervalCsv(r.clocks) + "," + IntervalCsv(r.samples) + "," +
           IntervalCsv(r.speedup) + "\n";
  }
  return out;
}

std::string BudgetMarkdown(const std::vector<RunOutcome>& runs,
                           const std::vector<std::string>& policies,
                           double budget_s) {
  std::string md = "\nAt the time budget (" + Value(budget_s) +
                   " s of training, evaluations left out): the final "
                   "evaluation of each run; medians over the seeds, in "
                   "brackets the " +
                   std::string(kIntervalMethod) +
                   ".\n\n| policy | test acc at the budget | test loss | "
                   "clocks | samples |\n|---|---|---|---|---|\n";
  // A run stopped by its budget ends training there, and its final
  // evaluation reads the model where training stopped, so the summary's
  // accuracy is the accuracy at the budget.
  for (const std::string& policy : policies) {
    std::vector<double> acc, loss, clocks, samples;
    for (const RunOutcome& r : runs) {
      if (r.policy != policy || !r.metrics) continue;
      const RunSummary& s = r.metrics->summary;
      acc.push_back(s.Get("test_accuracy"));
      loss.push_back(s.Get("test_loss"));
      clocks.push_back(s.Get("clocks"));
      samples.push_back(s.Get("samples"));
    }
    if (acc.empty()) continue;
    md += "| " + NameOf(runs, policy) + " | " + MedianInterval(acc).Text(4) +
          " | " + MedianInterval(loss).Text(4) + " | " +
          MedianInterval(clocks).Text(0) + " | " +
          MedianInterval(samples).Text(0) + " |\n";
  }
  return md;
}

}  // namespace lockstep

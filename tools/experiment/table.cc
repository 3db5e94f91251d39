#include "tools/experiment/table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace lockstep {
namespace {

std::string Cell(const std::optional<Spread>& s, int digits,
                 const std::string& unit = "") {
  return s ? s->Text(digits, unit) : "-";
}

std::optional<Spread> Scaled(std::optional<Spread> s, double factor) {
  if (s) {
    s->median *= factor;
    s->min *= factor;
    s->max *= factor;
  }
  return s;
}

std::string Number(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

// The medians of the workers' time shares: "41 / 1 / 3 / 55".
std::string Shares(const PolicyRow& r) {
  std::string text;
  for (const auto* s :
       {&r.compute_share, &r.push_share, &r.pull_share, &r.wait_share}) {
    // "-" where no run measured it (every run of the policy failed).
    text += (text.empty() ? "" : " / ") +
            (*s ? Number((*s)->median * 100, 0) : std::string("-"));
  }
  return text;
}

std::string CsvCells(const std::optional<Spread>& s) {
  if (!s) return ",,";
  char buf[128];
  std::snprintf(buf, sizeof(buf), "%.6g,%.6g,%.6g", s->median, s->min, s->max);
  return buf;
}

std::string IntervalCells(const Interval& i) {
  if (i.empty()) return ",,";
  char buf[128];
  std::snprintf(buf, sizeof(buf), "%.6g,%.6g,%.6g", i.median, i.lo, i.hi);
  return buf;
}

// The per-run values behind one row.
struct RowValues {
  std::map<std::string, std::vector<double>> by_metric;
  std::vector<std::vector<double>> idle_by_worker;
  void Add(const std::string& metric, double v) {
    by_metric[metric].push_back(v);
  }
  std::optional<Spread> Of(const std::string& metric) const {
    const auto it = by_metric.find(metric);
    return it == by_metric.end() ? std::nullopt : Spread::Of(it->second);
  }
};

// Each policy's time to target by seed, +inf for a run that never
// reached it; failed runs left out.
std::map<std::string, std::map<uint64_t, double>> TimesBySeed(
    const std::vector<RunOutcome>& runs) {
  std::map<std::string, std::map<uint64_t, double>> times;
  for (const RunOutcome& r : runs) {
    if (!r.metrics) continue;
    times[r.policy][r.seed] = r.TimeToTarget().value_or(INFINITY);
  }
  return times;
}

void AddRun(const RunMetrics& m, RowValues* v) {
  const RunSummary& s = m.summary;
  for (const char* key :
       {"wall_s", "clocks_per_s", "samples_per_s", "test_accuracy", "clocks",
        "compute_share", "push_share", "pull_share", "wait_share",
        "dropped_pushes", "policy_overhead_share"}) {
    v->Add(key, s.Get(key));
  }
  v->Add("mean_clock_ms", m.mean_clock_s * 1000);
  v->Add("staleness_p50", m.staleness_p50);
  v->Add("staleness_p99", m.staleness_p99);
  if (m.predictor_rmse_share) v->Add("predictor_rmse", *m.predictor_rmse_share);
  if (m.balance) {
    const ClockBalance& b = *m.balance;
    if (b.predicted_time_mape) v->Add("time_mape", *b.predicted_time_mape);
    if (b.last_value_time_mape) {
      v->Add("last_value_mape", *b.last_value_time_mape);
    }
    v->Add("barrier_idle", b.idle_share);
    v->Add("oracle_idle", b.oracle_idle_share);
    v->Add("clock_ratio", b.clock_time_ratio);
  }
  double sum = 0, max = 0;
  for (size_t w = 0; w < m.idle_share.size(); ++w) {
    if (w >= v->idle_by_worker.size()) v->idle_by_worker.resize(w + 1);
    v->idle_by_worker[w].push_back(m.idle_share[w]);
    sum += m.idle_share[w];
    max = std::max(max, m.idle_share[w]);
  }
  if (!m.idle_share.empty()) {
    v->Add("idle_mean", sum / static_cast<double>(m.idle_share.size()));
    v->Add("idle_max", max);
  }
}

// The intervals of `row` from every policy's times by seed.
void AddIntervals(
    const std::map<std::string, std::map<uint64_t, double>>& times,
    const std::string& baseline, PolicyRow* row) {
  auto own = times.find(row->policy);
  if (own == times.end()) return;
  std::vector<double> values;
  for (const auto& [seed, t] : own->second) values.push_back(t);
  row->time_ci = MedianInterval(values);
  auto base = times.find(baseline);
  if (base == times.end()) return;
  std::vector<std::pair<double, double>> pairs;
  for (const auto& [seed, t] : own->second) {
    auto b = base->second.find(seed);
    if (b != base->second.end()) pairs.push_back({b->second, t});
  }
  row->speedup_ci = RatioInterval(pairs);
}

// Sets `row`'s spreads over its runs from the values `v` collected.
void SetSpreads(const RowValues& v, PolicyRow* row) {
  row->time_to_target_s = v.Of("time_to_target_s");
  row->speedup = v.Of("speedup");
  row->clocks_to_target = v.Of("clocks_to_target");
  row->wall_s = v.Of("wall_s");
  row->mean_clock_ms = v.Of("mean_clock_ms");
  row->clocks_per_s = v.Of("clocks_per_s");
  row->samples_per_s = v.Of("samples_per_s");
  row->test_accuracy = v.Of("test_accuracy");
  row->clocks = v.Of("clocks");
  row->compute_share = v.Of("compute_share");
  row->push_share = v.Of("push_share");
  row->pull_share = v.Of("pull_share");
  row->wait_share = v.Of("wait_share");
  row->idle_mean = v.Of("idle_mean");
  row->idle_max = v.Of("idle_max");
  row->dropped_pushes = v.Of("dropped_pushes");
  row->staleness_p50 = v.Of("staleness_p50");
  row->staleness_p99 = v.Of("staleness_p99");
  row->overhead_share = v.Of("policy_overhead_share");
  row->predictor_rmse_share = v.Of("predictor_rmse");
  row->time_mape = v.Of("time_mape");
  row->last_value_mape = v.Of("last_value_mape");
  row->barrier_idle = v.Of("barrier_idle");
  row->oracle_idle = v.Of("oracle_idle");
  row->clock_ratio = v.Of("clock_ratio");
}

}  // namespace

std::string CsvText(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  }
  return quoted + "\"";
}

std::optional<double> RunOutcome::TimeToTarget() const {
  if (!metrics) return std::nullopt;
  if (main_target <= 0 || metrics->evals.empty()) {
    return metrics->summary.time_to_target_s;
  }
  const EvalPoint* e = metrics->FirstReaching({main_target, false});
  return e ? std::optional<double>(e->train_s) : std::nullopt;
}

std::optional<double> RunOutcome::ClocksToTarget() const {
  if (!metrics) return std::nullopt;
  if (main_target <= 0) return metrics->clocks_to_target;
  const EvalPoint* e = metrics->FirstReaching({main_target, false});
  return e ? std::optional<double>(e->clock) : std::nullopt;
}

std::vector<PolicyRow> PolicyRows(const std::vector<RunOutcome>& runs,
                                  const std::vector<std::string>& policies,
                                  const std::string& baseline) {
  const auto times = TimesBySeed(runs);
  std::map<uint64_t, double> baseline_ttt;  // seed -> time to target
  for (const RunOutcome& r : runs) {
    if (r.policy == baseline && r.TimeToTarget()) {
      baseline_ttt[r.seed] = *r.TimeToTarget();
    }
  }
  std::vector<PolicyRow> rows;
  for (const std::string& policy : policies) {
    PolicyRow row;
    row.policy = policy;
    RowValues v;
    for (const RunOutcome& r : runs) {
      if (r.policy != policy) continue;
      if (!r.metrics) {
        ++row.failed;
        continue;
      }
      ++row.runs;
      row.sweep_point = r.sweep_point;
      AddRun(*r.metrics, &v);
      if (r.ClocksToTarget()) v.Add("clocks_to_target", *r.ClocksToTarget());
      const std::optional<double> ttt = r.TimeToTarget();
      if (!ttt) continue;
      ++row.reached;
      v.Add("time_to_target_s", *ttt);
      auto base = baseline_ttt.find(r.seed);
      if (base != baseline_ttt.end()) v.Add("speedup", base->second / *ttt);
    }
    SetSpreads(v, &row);
    for (const std::vector<double>& w : v.idle_by_worker) {
      auto s = Spread::Of(w);
      row.idle_by_worker.push_back(s ? s->median : NAN);
    }
    AddIntervals(times, baseline, &row);
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string TableMarkdown(const std::vector<PolicyRow>& rows,
                          const std::string& baseline) {
  const bool bounds = std::any_of(rows.begin(), rows.end(),
                                  [](const PolicyRow& r) { return r.bound; });
  std::string out = "| policy | time to target (s) | speedup vs " + baseline;
  out += bounds ? " | bound" : "";
  out +=
      " | reached | clocks to target | mean clock (ms) | samples/s | final "
      "test acc | wall (s) | runs (failed) |\n|---|---|---|";
  out += bounds ? "---|" : "";
  out += "---|---|---|---|---|---|---|\n";
  for (const PolicyRow& r : rows) {
    out += "| " + r.Name() + " | " + r.time_ci.Text(1) + " | " +
           r.speedup_ci.Text(2, "x", "inf") + " | ";
    if (bounds) out += (r.bound ? Number(*r.bound, 2) + "x" : "-") + " | ";
    out += std::to_string(r.reached) + "/" + std::to_string(r.runs) + " | " +
           Cell(r.clocks_to_target, 0) + " | " + Cell(r.mean_clock_ms, 1) +
           " | " + Cell(r.samples_per_s, 0) + " | " + Cell(r.test_accuracy, 4) +
           " | " + Cell(r.wall_s, 1) + " | " + std::to_string(r.runs) + " (" +
           std::to_string(r.failed) + ") |\n";
  }
  return out;
}

namespace {

// "12.3 (15.0)": two shares' medians over the seeds in percent, "-" for a
// missing one (their ranges are in the CSV).
std::string Paired(const std::optional<Spread>& a,
                   const std::optional<Spread>& b) {
  if (!a && !b) return "-";
  const auto median = [](const std::optional<Spread>& s) {
    return s ? Number(s->median * 100, 1) : std::string("-");
  };
  return median(a) + " (" + median(b) + ")";
}

}  // namespace

std::string DetailMarkdown(const std::vector<PolicyRow>& rows) {
  std::string out =
      "| policy | compute / push / pull / wait % | idle % per worker | "
      "dropped pushes | staleness p50 / p99 | policy overhead % | clock-time "
      "MAPE % (last value) | barrier idle % (oracle split) |\n"
      "|---|---|---|---|---|---|---|---|\n";
  for (const PolicyRow& r : rows) {
    std::string idle;
    for (double w : r.idle_by_worker) {
      idle += (idle.empty() ? "" : " / ") + Number(w * 100, 0);
    }
    const std::string staleness =
        r.staleness_p50 ? Number(r.staleness_p50->median, 0) + " / " +
                              Number(r.staleness_p99->median, 0)
                        : "-";
    out += "| " + r.Name() + " | " + Shares(r) + " | " +
           (idle.empty() ? "-" : idle) + " | " + Cell(r.dropped_pushes, 0) +
           " | " + staleness + " | " + Cell(Scaled(r.overhead_share, 100), 2) +
           " | " + Paired(r.time_mape, r.last_value_mape) + " | " +
           Paired(r.barrier_idle, r.oracle_idle) + " |\n";
  }
  return out;
}

std::string TableCsv(const std::vector<PolicyRow>& rows) {
  static const char* const kNames[] = {
      "time_to_target_s", "speedup",
      "clocks_to_target", "wall_s",
      "mean_clock_ms",    "clocks_per_s",
      "samples_per_s",    "test_accuracy",
      "clocks",           "compute_share",
      "push_share",       "pull_share",
      "wait_share",       "idle_mean",
      "idle_max",         "dropped_pushes",
      "staleness_p50",    "staleness_p99",
      "overhead_share",   "predictor_rmse_share",
      "time_mape",        "last_value_mape",
      "barrier_idle",     "oracle_idle",
      "clock_ratio"};
  std::string out = "policy,runs,failed,reached";
  for (const char* m : kNames) {
    for (const char* stat : {"_median", "_min", "_max"}) {
      out += ",";
      out += m;
      out += stat;
    }
  }
  out +=
      ",time_to_target_ci_median,time_to_target_ci_lo,time_to_target_ci_hi,"
      "speedup_ratio,speedup_ratio_lo,speedup_ratio_hi,bound,sweep_point\n";
  for (const PolicyRow& r : rows) {
    out += CsvText(r.policy) + "," + std::to_string(r.runs) + "," +
           std::to_string(r.failed) + "," + std::to_string(r.reached);
    for (const auto* s : {&r.time_to_target_s, &r.speedup,
                          &r.clocks_to_target, &r.wall_s,
                          &r.mean_clock_ms,    &r.clocks_per_s,
                          &r.samples_per_s,    &r.test_accuracy,
                          &r.clocks,           &r.compute_share,
                          &r.push_share,       &r.pull_share,
                          &r.wait_share,       &r.idle_mean,
                          &r.idle_max,         &r.dropped_pushes,
                          &r.staleness_p50,    &r.staleness_p99,
                          &r.overhead_share,   &r.predictor_rmse_share,
                          &r.time_mape,        &r.last_value_mape,
                          &r.barrier_idle,     &r.oracle_idle,
                          &r.clock_ratio}) {
      out += "," + CsvCells(*s);
    }
    out += "," + IntervalCells(r.time_ci) + "," + IntervalCells(r.speedup_ci);
    out += "," + (r.bound ? Number(*r.bound, 6) : "") + "," +
           CsvText(r.sweep_point) + "\n";
  }
  return out;
}

}  // namespace lockstep

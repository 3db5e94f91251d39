#include "tools/experiment/table.h"

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
    text +=
        (text.empty() ? "" : " / ") + Number(*s ? (*s)->median * 100 : NAN, 0);
  }
  return text;
}

// A CSV field, quoted when it holds a separator or a quote.
std::string CsvText(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text)
    quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string CsvCells(const std::optional<Spread>& s) {
  if (!s) return ",,";
  char buf[128];
  std::snprintf(buf, sizeof(buf), "%.6g,%.6g,%.6g", s->median, s->min, s->max);
  return buf;
}

// The per-run values behind one row.
struct RowValues {
  std::map<std::string, std::vector<double>> by_metric;
  std::vector<std::vector<double>> idle_by_worker;
  void Add(const std::string& metric, double v) {
    by_metric[metric].push_back(v);
  }
  std::optional<Spread> Of(const std::string& metric) {
    return Spread::Of(by_metric[metric]);
  }
};

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
  if (m.clocks_to_target) v->Add("clocks_to_target", *m.clocks_to_target);
  if (m.predictor_rmse_share) v->Add("predictor_rmse", *m.predictor_rmse_share);
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

}  // namespace

std::vector<PolicyRow> PolicyRows(const std::vector<RunOutcome>& runs,
                                  const std::vector<std::string>& policies,
                                  const std::string& baseline) {
  std::map<uint64_t, double> baseline_ttt;  // seed -> time to target
  for (const RunOutcome& r : runs) {
    if (r.policy == baseline && r.metrics &&
        r.metrics->summary.time_to_target_s) {
      baseline_ttt[r.seed] = *r.metrics->summary.time_to_target_s;
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
      AddRun(*r.metrics, &v);
      const std::optional<double>& ttt = r.metrics->summary.time_to_target_s;
      if (!ttt) continue;
      ++row.reached;
      v.Add("time_to_target_s", *ttt);
      auto base = baseline_ttt.find(r.seed);
      if (base != baseline_ttt.end()) v.Add("speedup", base->second / *ttt);
    }
    row.time_to_target_s = v.Of("time_to_target_s");
    row.speedup = v.Of("speedup");
    row.clocks_to_target = v.Of("clocks_to_target");
    row.wall_s = v.Of("wall_s");
    row.mean_clock_ms = v.Of("mean_clock_ms");
    row.clocks_per_s = v.Of("clocks_per_s");
    row.samples_per_s = v.Of("samples_per_s");
    row.test_accuracy = v.Of("test_accuracy");
    row.clocks = v.Of("clocks");
    row.compute_share = v.Of("compute_share");
    row.push_share = v.Of("push_share");
    row.pull_share = v.Of("pull_share");
    row.wait_share = v.Of("wait_share");
    row.idle_mean = v.Of("idle_mean");
    row.idle_max = v.Of("idle_max");
    row.dropped_pushes = v.Of("dropped_pushes");
    row.staleness_p50 = v.Of("staleness_p50");
    row.staleness_p99 = v.Of("staleness_p99");
    row.overhead_share = v.Of("policy_overhead_share");
    row.predictor_rmse_share = v.Of("predictor_rmse");
    for (const std::vector<double>& w : v.idle_by_worker) {
      auto s = Spread::Of(w);
      row.idle_by_worker.push_back(s ? s->median : NAN);
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string TableMarkdown(const std::vector<PolicyRow>& rows,
                          const std::string& baseline) {
  std::string out = "| policy | time to target (s) | speedup vs " + baseline;
  out +=
      " | reached | clocks to target | mean clock (ms) | samples/s | final "
      "test acc | wall (s) | runs (failed) |\n"
      "|---|---|---|---|---|---|---|---|---|---|\n";
  for (const PolicyRow& r : rows) {
    out += "| " + r.policy + " | " + Cell(r.time_to_target_s, 1) + " | " +
           Cell(r.speedup, 2, "x") + " | " + std::to_string(r.reached) + "/" +
           std::to_string(r.runs) + " | " + Cell(r.clocks_to_target, 0) +
           " | " + Cell(r.mean_clock_ms, 1) + " | " + Cell(r.samples_per_s, 0) +
           " | " + Cell(r.test_accuracy, 4) + " | " + Cell(r.wall_s, 1) +
           " | " + std::to_string(r.runs) + " (" + std::to_string(r.failed) +
           ") |\n";
  }
  return out;
}

std::string DetailMarkdown(const std::vector<PolicyRow>& rows) {
  std::string out =
      "| policy | compute / push / pull / wait % | idle % per worker | "
      "dropped pushes | staleness p50 / p99 | policy overhead % | predictor "
      "RMSE % |\n|---|---|---|---|---|---|---|\n";
  for (const PolicyRow& r : rows) {
    std::string idle;
    for (double w : r.idle_by_worker) {
      idle += (idle.empty() ? "" : " / ") + Number(w * 100, 0);
    }
    const std::string staleness =
        r.staleness_p50 ? Number(r.staleness_p50->median, 0) + " / " +
                              Number(r.staleness_p99->median, 0)
                        : "-";
    out += "| " + r.policy + " | " + Shares(r) + " | " +
           (idle.empty() ? "-" : idle) + " | " + Cell(r.dropped_pushes, 0) +
           " | " + staleness + " | " + Cell(Scaled(r.overhead_share, 100), 2) +
           " | " + Cell(Scaled(r.predictor_rmse_share, 100), 1) + " |\n";
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
      "overhead_share",   "predictor_rmse_share"};
  std::string out = "policy,runs,failed,reached";
  for (const char* m : kNames) {
    for (const char* stat : {"_median", "_min", "_max"}) {
      out += ",";
      out += m;
      out += stat;
    }
  }
  out += "\n";
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
                          &r.overhead_share,   &r.predictor_rmse_share}) {
      out += "," + CsvCells(*s);
    }
    out += "\n";
  }
  return out;
}

}  // namespace lockstep

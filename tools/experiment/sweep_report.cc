#include "tools/experiment/sweep_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "tools/experiment/interval.h"

namespace lockstep {
namespace {

std::string Num(double v, int digits) {
  if (std::isnan(v)) return "-";
  if (std::isinf(v)) return "never";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

std::string CsvNum(double v) {
  if (std::isnan(v)) return "";
  if (std::isinf(v)) return "inf";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.6g", v);
  return buf;
}

// GROUP,SEED,STATUS,TIME,MEAN,FINAL
std::string SeedCsv(const std::string& group, const SweepSeed& s) {
  return group + "," + std::to_string(s.seed) + "," + (s.ok ? "ok" : "failed") +
         "," + CsvNum(s.time_s) + "," + CsvNum(s.mean_accuracy) + "," +
         CsvNum(s.final_accuracy);
}

// A failed run keeps NaN, so it is left out of the group's medians; a
// finished run that never reached the target has time +inf, so it counts
// there as never. A run without evaluation points scores its final
// accuracy as its mean, so it is still ranked.
SweepSeed SeedOf(const RunOutcome& r) {
  SweepSeed s{r.seed, r.metrics.has_value(), NAN, NAN, NAN};
  if (!r.metrics) return s;
  s.time_s = r.TimeToTarget().value_or(INFINITY);
  s.final_accuracy = r.metrics->summary.Get("test_accuracy");
  double sum = 0;
  for (const EvalPoint& e : r.metrics->evals) sum += e.test_accuracy;
  const size_t n = r.metrics->evals.size();
  s.mean_accuracy = n > 0 ? sum / static_cast<double>(n) : s.final_accuracy;
  return s;
}

void Summarize(SweepGroup* g) {
  std::vector<double> times, finals;
  double mean_sum = 0;
  for (const SweepSeed& s : g->seeds) {
    if (!s.ok) continue;
    ++g->ok;
    times.push_back(s.time_s);
    finals.push_back(s.final_accuracy);
    mean_sum += s.mean_accuracy;
  }
  g->median_time_s = MedianOf(times);
  g->median_final_accuracy = MedianOf(finals);
  g->mean_accuracy = g->ok > 0 ? mean_sum / g->ok : NAN;
}

// Lower is better; NaN is worst.
int CompareLow(double a, double b) {
  a = std::isnan(a) ? INFINITY : a;
  b = std::isnan(b) ? INFINITY : b;
  return a < b ? -1 : (a > b ? 1 : 0);
}

// Higher is better; NaN is worst.
int CompareHigh(double a, double b) {
  // Negated, but a NaN stays NaN, so it is still the worst.
  return CompareLow(std::isnan(a) ? NAN : -a, std::isnan(b) ? NAN : -b);
}

}  // namespace

bool BetterGroup(const SweepGroup& a, const SweepGroup& b,
                 const std::string& criterion) {
  // Strictly better only: on a tie the caller keeps the group it has, the
  // earlier in the spec's order.
  if ((a.ok > 0) != (b.ok > 0)) return a.ok > 0;
  int order = 0;
  if (criterion == "mean-accuracy") {
    order = CompareHigh(a.mean_accuracy, b.mean_accuracy);
    if (order == 0) order = CompareLow(a.median_time_s, b.median_time_s);
  } else if (criterion == "final-accuracy") {
    order = CompareHigh(a.median_final_accuracy, b.median_final_accuracy);
    if (order == 0) order = CompareHigh(a.mean_accuracy, b.mean_accuracy);
  } else {
    order = CompareLow(a.median_time_s, b.median_time_s);
    if (order == 0) order = CompareHigh(a.mean_accuracy, b.mean_accuracy);
  }
  return order < 0;
}

std::vector<SweepGroup> ScoreSweep(const std::vector<RunOutcome>& runs,
                                   const std::vector<std::string>& policies,
                                   const std::string& criterion) {
  std::vector<SweepGroup> groups;
  for (const std::string& policy : policies) {
    // A policy's groups are searched from `first` on: the same sweep point
    // under another policy is another group.
    const size_t first = groups.size();
    for (const RunOutcome& r : runs) {
      if (r.policy != policy) continue;
      auto it = std::find_if(
          groups.begin() + static_cast<std::ptrdiff_t>(first), groups.end(),
          [&](const SweepGroup& g) { return g.sweep_point == r.sweep_point; });
      if (it == groups.end()) {
        SweepGroup g;
        g.policy = policy;
        g.sweep_point = r.sweep_point;
        g.settings = r.sweep_settings;
        g.main_target = r.main_target;
        groups.push_back(std::move(g));
        it = groups.end() - 1;
      }
      it->seeds.push_back(SeedOf(r));
    }
    if (groups.size() == first) continue;
    size_t best = first;
    for (size_t i = first; i < groups.size(); ++i) {
      Summarize(&groups[i]);
      if (BetterGroup(groups[i], groups[best], criterion)) best = i;
    }
    groups[best].chosen = true;
  }
  return groups;
}

std::string CriterionText(const std::string& criterion, double main_target) {
  const std::string target =
      main_target > 0 ? "the main target (" + Num(main_target, 3) + ")"
                      : "the main target";
  if (criterion == "mean-accuracy") {
    return "the highest mean test accuracy over the evaluation points (mean "
           "over the seeds), ties broken by the lower median time to " +
           target;
  }
  if (criterion == "final-accuracy") {
    return "the highest median final test accuracy over the seeds, ties "
           "broken by the higher mean test accuracy over the evaluation "
           "points";
  }
  return "the lowest median time to " + target +
         " over the seeds (a seed that never reached it counts as never), "
         "ties and never-reached broken by the higher mean test accuracy "
         "over the evaluation points";
}

std::string SweepMarkdown(const std::vector<SweepGroup>& groups,
                          const std::string& criterion) {
  const bool swept = std::any_of(groups.begin(), groups.end(), [](auto& g) {
    return !g.sweep_point.empty();
  });
  if (!swept) return "";
  const double target = groups.front().main_target;
  std::string md =
      "\n### Sweep\n\nEach policy's row in the tables above is the best of "
      "its sweep by " +
      CriterionText(criterion, target) +
      ", chosen on the same seeds it is reported on. Every swept "
      "combination (report/sweep.csv has every seed):\n\n| run group | runs "
      "(failed) | "
      "reached | median time to target (s) | mean test acc over evals | "
      "median final test acc | chosen |\n|---|---|---|---|---|---|---|\n";
  for (const SweepGroup& g : groups) {
    if (g.sweep_point.empty()) continue;
    int reached = 0;
    for (const SweepSeed& s : g.seeds)
      reached += s.ok && std::isfinite(s.time_s);
    md += "| " + g.Name() + " | " + std::to_string(g.ok) + " (" +
          std::to_string(g.seeds.size() - g.ok) + ") | " +
          std::to_string(reached) + "/" + std::to_string(g.ok) + " | " +
          Num(g.median_time_s, 1) + " | " + Num(g.mean_accuracy, 4) + " | " +
          Num(g.median_final_accuracy, 4) + " | " +
          (g.chosen ? "**best**" : "") + " |\n";
  }
  return md;
}

std::string SweepCsv(
    const std::vector<std::pair<std::string, std::vector<SweepGroup>>>&
        scenarios,
    const std::string& criterion) {
  // Every swept key of every scenario gets a column, so all rows have the
  // same columns; a group that does not sweep a key leaves it empty.
  std::vector<std::string> keys;  // every swept key, first seen first
  for (const auto& [scenario, groups] : scenarios) {
    for (const SweepGroup& g : groups) {
      for (const SpecSetting& s : g.settings) {
        if (std::find(keys.begin(), keys.end(), s.key) == keys.end()) {
          keys.push_back(s.key);
        }
      }
    }
  }
  std::string out = "scenario,policy,run_group";
  for (const std::string& k : keys) out += "," + CsvText(k);
  out +=
      ",seed,status,time_to_target_s,mean_test_accuracy,final_test_accuracy,"
      "group_median_time_to_target_s,group_mean_test_accuracy,"
      "group_median_final_test_accuracy,criterion,chosen\n";
  for (const auto& [scenario, groups] : scenarios) {
    for (const SweepGroup& g : groups) {
      std::string group =
          CsvText(scenario) + "," + CsvText(g.policy) + "," + CsvText(g.Name());
      for (const std::string& k : keys) {
        auto it =
            std::find_if(g.settings.begin(), g.settings.end(),
                         [&](const SpecSetting& s) { return s.key == k; });
        group += "," + (it == g.settings.end() ? "" : CsvText(it->value));
      }
      // The group's values repeat on each of its seed rows, so every row
      // reads on its own when the file is filtered or sorted.
      const std::string tail = "," + CsvNum(g.median_time_s) + "," +
                               CsvNum(g.mean_accuracy) + "," +
                               CsvNum(g.median_final_accuracy) + "," +
                               criterion + "," + (g.chosen ? "1" : "0") + "\n";
      for (const SweepSeed& s : g.seeds) out += SeedCsv(group, s) + tail;
    }
  }
  return out;
}

}  // namespace lockstep

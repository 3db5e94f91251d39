#include "tools/experiment/scenario_report.h"

#include <algorithm>
#include <cstdio>

#include "sync_policies/policy_spec.h"
#include "tools/experiment/cost_model.h"
#include "tools/experiment/event_table.h"

namespace lockstep {
namespace {

std::vector<std::string> LabelsOf(const ExperimentSpec& spec) {
  std::vector<std::string> labels;
  for (const SpecPolicy& p : spec.policies) labels.push_back(p.label);
  return labels;
}

// Every recorded run of `scenario`, its metrics read when it finished.
// A run that failed, timed out or cannot be read stays in, without
// metrics: the tables count it failed instead of quietly reporting fewer
// seeds. Runs never recorded (not run yet) are left out.
std::vector<RunOutcome> Outcomes(const ExperimentSpec& spec,
                                 const std::vector<RunState>& states,
                                 const std::string& scenario) {
  std::vector<RunOutcome> runs;
  for (const RunState& s : states) {
    if (s.run.scenario != scenario || !s.record) continue;
    RunOutcome r;
    r.policy = s.run.policy_label;
    r.sweep_point = s.run.sweep_point;
    r.sweep_settings = s.run.sweep_settings;
    r.seed = s.run.seed;
    // Per run: a scenario's or policy's job may set its own target.
    r.main_target = MainTarget(spec, s.run.job);
    if (s.record->status == "ok") {
      StatusOr<RunMetrics> metrics = ReadRunMetrics(s.run.dir);
      if (metrics.ok()) r.metrics = std::move(*metrics);
    }
    runs.push_back(std::move(r));
  }
  return runs;
}

std::string Fixed2(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.2f", v);
  return buf;
}

// "Published: 1.54x. Here: 1.69x [1.50x, 2.00x] over 2 seed(s) ..."
std::string PaperComparison(const ExperimentSpec& spec,
                            const ScenarioReport& report) {
  if (spec.paper_policy.empty()) return "";
  std::string text = "**Published: " + spec.paper_policy + " over " +
                     spec.baseline + " " + Fixed2(spec.paper_speedup) + "x. ";
  for (const PolicyRow& r : report.rows) {
    if (r.policy != spec.paper_policy) continue;
    if (r.speedup_ci.empty()) return text + "Here: not measured.**\n\n";
    text += "Here: " + r.speedup_ci.Text(2, "x", "inf") + " over " +
            std::to_string(r.speedup_ci.n) +
            " seed(s) (ratio of the median times to target, 95% paired "
            "bootstrap interval)";
    if (report.bound) {
      text +=
          "; a perfect batch split could give " + Fixed2(*report.bound) + "x";
    }
    return text + ".**\n\n";
  }
  return text + "**\n\n";
}

std::string BoundText(const ScenarioReport& report) {
  if (!report.bound) return "";
  return "\nBound: a perfect batch split's clocks are " +
         Fixed2(*report.bound) + "x shorter than BSP's even split of X = " +
         std::to_string(report.global_batch) +
         " here (the profiles' compute cost, linear/gpu times the xF "
         "schedule, summed over the run's " +
         std::to_string(report.clocks) +
         " clocks; transient, colo, net and cpu items left out). The bound "
         "column puts it beside the measured speedup of the policies that "
         "size batches by speed: time to target also counts clocks to "
         "target, push, pull and the policy's own time.\n";
}

}  // namespace

double MainTarget(const ExperimentSpec& spec, const JobConfig& job) {
  if (job.target_accuracy > 0) return job.target_accuracy;
  return spec.targets.empty() ? 0 : spec.targets.back();
}

bool SplitsBatches(const SpecPolicy& policy) {
  return PolicySpec(policy.sync).name() == "lbbsp" ||
         policy.batch == kProportionalBatch;
}

std::optional<double> SplitBound(const PlannedRun& run) {
  StatusOr<CostModel> model = CostModel::Create(run.profiles, run.job.workers);
  if (!model.ok() || !model->complete()) return std::nullopt;
  return model->SplitSpeedupBound(
      run.job.max_clocks,
      CostModel::EvenSplit(run.job.GlobalBatch(), run.job.workers));
}

ScenarioReport BuildScenarioReport(const ExperimentSpec& spec,
                                   const std::vector<RunState>& states,
                                   const SpecScenario& scenario) {
  ScenarioReport report;
  report.scenario = scenario.name;
  const std::vector<RunOutcome> runs = Outcomes(spec, states, scenario.name);
  const std::vector<std::string> labels = LabelsOf(spec);
  report.groups = ScoreSweep(runs, labels, spec.sweep_criterion);
  for (const std::string& label : labels) {
    auto g =
        std::find_if(report.groups.begin(), report.groups.end(),
                     [&](auto& g) { return g.chosen && g.policy == label; });
    report.chosen_groups.push_back(g == report.groups.end() ? "" : g->Name());
    if (g == report.groups.end()) continue;
    for (const RunOutcome& r : runs) {
      if (r.policy == label && r.sweep_point == g->sweep_point) {
        report.chosen.push_back(r);
      }
    }
  }
  // Only the chosen groups' runs make the tables: a swept policy is shown
  // at its best point, measured on the same seeds as the others.
  report.rows = PolicyRows(report.chosen, labels, spec.baseline);
  // The bound needs the cost model; it is worked out only when a policy's
  // row will show it.
  const bool splits =
      std::any_of(spec.policies.begin(), spec.policies.end(), SplitsBatches);
  const PlannedRun* first = nullptr;
  for (const RunState& s : states) {
    if (s.run.scenario != scenario.name) continue;
    if (first == nullptr) first = &s.run;
    // The largest: a policy's or sweep's job may set its own budget, and
    // the budget table is shown when any run had one.
    report.budget_s = std::max(report.budget_s, s.run.job.budget_s);
  }
  if (first != nullptr) {
    report.main_target = MainTarget(spec, first->job);
    report.global_batch = first->job.GlobalBatch();
    report.clocks = first->job.max_clocks;
    if (splits) report.bound = SplitBound(*first);
  }
  // PolicyRows returns a row per label in the spec's order, so rows[i] is
  // spec.policies[i].
  for (size_t i = 0; i < report.rows.size(); ++i) {
    if (SplitsBatches(spec.policies[i])) report.rows[i].bound = report.bound;
  }
  if (!spec.targets.empty() || spec.target_loss > 0) {
    report.targets = TargetRows(
        report.chosen, labels, spec.baseline,
        ReportTargets(report.main_target, spec.targets, spec.target_loss));
  }
  return report;
}

std::string ScenarioTables(const ExperimentSpec& spec,
                           const SpecScenario& scenario,
                           const ScenarioReport& report,
                           const std::vector<RunState>& states) {
  std::string md = PaperComparison(spec, report);
  md += TableMarkdown(report.rows, spec.baseline) + BoundText(report) + "\n" +
        DetailMarkdown(report.rows);
  if (scenario.event_clock > 0) {
    std::vector<std::pair<std::string, std::string>> groups;
    for (const std::string& g : report.chosen_groups) {
      if (!g.empty()) groups.push_back({g, g});
    }
    md += EventMarkdown(scenario, groups, states);
  }
  if (!report.targets.empty()) {
    md += TargetsMarkdown(report.targets, spec.baseline);
  }
  if (report.budget_s > 0) {
    md += BudgetMarkdown(report.chosen, LabelsOf(spec), report.budget_s);
  }
  return md + SweepMarkdown(report.groups, spec.sweep_criterion);
}

}  // namespace lockstep

#include "tools/experiment/report.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/durable_file.h"
#include "tools/experiment/event_metrics.h"
#include "tools/experiment/plan.h"
#include "tools/experiment/table.h"
#include "tools/run_dir.h"

namespace lockstep {
namespace {

using nlohmann::json;

// The plots of a scenario: the kind report.py draws and its caption.
struct PlotKind {
  const char* kind;
  const char* caption;
};
constexpr PlotKind kPlots[] = {
    {"accuracy-time",
     "Test accuracy vs training time (median over seeds, "
     "min-max shaded)"},
    {"accuracy-clock",
     "Test accuracy vs clock (median over seeds, min-max "
     "shaded)"},
    {"batches", "Batch size per worker over clocks (first seed)"},
    {"clock-times",
     "Each worker's time per clock: compute + push + pull "
     "(first seed)"},
    {"idle", "Idle share per worker (median over seeds)"},
};

std::string PlotFile(const std::string& scenario, const std::string& kind) {
  return "report/" + scenario + "-" + kind + ".png";
}

std::vector<RunOutcome> OutcomesOf(const std::vector<RunState>& states,
                                   const std::string& scenario) {
  std::vector<RunOutcome> runs;
  for (const RunState& s : states) {
    if (s.run.scenario != scenario || !s.record) continue;
    RunOutcome r;
    r.policy = s.run.policy;
    r.seed = s.run.seed;
    if (s.record->status == "ok") {
      StatusOr<RunMetrics> metrics = ReadRunMetrics(s.run.dir);
      if (metrics.ok()) r.metrics = std::move(*metrics);
    }
    runs.push_back(std::move(r));
  }
  return runs;
}

std::vector<std::string> Labels(const ExperimentSpec& spec) {
  std::vector<std::string> labels;
  for (const SpecPolicy& p : spec.policies) labels.push_back(p.label);
  return labels;
}

// "Paper: 1.54x. Here: 1.93x (1.71-2.10) over 3 seeds."
std::string PaperComparison(const ExperimentSpec& spec,
                            const std::vector<PolicyRow>& rows) {
  if (spec.paper_policy.empty()) return "";
  char buf[256];
  std::snprintf(buf, sizeof(buf), "Published: %s over %s %.2fx. ",
                spec.paper_policy.c_str(), spec.baseline.c_str(),
                spec.paper_speedup);
  std::string text = std::string("**") + buf;
  for (const PolicyRow& r : rows) {
    if (r.policy != spec.paper_policy) continue;
    if (!r.speedup) {
      return text + "Here: not measured (not both reached the target).**\n\n";
    }
    text += "Here: " + r.speedup->Text(2, "x");
    return text + " over " + std::to_string(r.speedup->n) + " seed(s).**\n\n";
  }
  return text + "**\n\n";
}

// Versions and machine, from the first run's config.json.
std::string SetupMarkdown(const ExperimentSpec& spec,
                          const std::vector<RunState>& states) {
  std::string md = "\n## Setup\n\nThe spec (`" + spec.name +
                   "`):\n\n```toml\n" + spec.text +
                   (spec.text.ends_with("\n") ? "" : "\n") + "```\n\n";
  for (const RunState& s : states) {
    std::ifstream in(s.run.dir + "/config.json");
    if (!in) continue;
    try {
      const json c = json::parse(in);
      const json& m = c.at("machine");
      char buf[512];
      std::snprintf(
          buf, sizeof(buf),
          "Lockstep %s (protocol %d), built with g++ %s. Machine: %s, %d "
          "CPUs, %.1f GiB, %s. First run started %s.\n",
          c.value("lockstep_version", "?").c_str(),
          c.value("protocol_version", 0), m.value("compiler", "?").c_str(),
          m.value("hostname", "?").c_str(), m.value("nproc", 0),
          m.value("mem_total_kb", 0.0) / (1024.0 * 1024.0),
          m.value("kernel", "?").c_str(),
          c.value("start_time_utc", "?").c_str());
      md += buf;
    } catch (const json::exception&) {
      continue;
    }
    break;
  }
  int failed = 0;
  std::string failures;
  for (const RunState& s : states) {
    if (!s.record || s.record->status == "ok") continue;
    ++failed;
    failures += "- " + s.run.dir + ": " + s.record->status + " (" +
                s.record->exit + ")\n";
  }
  int recorded = 0;
  for (const RunState& s : states) recorded += s.record ? 1 : 0;
  md += "\nRuns: " + std::to_string(states.size()) + " planned, " +
        std::to_string(recorded) + " recorded, " + std::to_string(failed) +
        " failed or timed out.\n" + failures;
  return md;
}

Status RunScript(const ReportCommand& command, std::ostream& err) {
  const pid_t pid = fork();
  if (pid < 0) return IOError("fork failed");
  if (pid == 0) {
    execl(command.python.c_str(), command.python.c_str(),
          command.script.c_str(), command.dir.c_str(),
          static_cast<char*>(nullptr));
    std::perror(("exec " + command.python).c_str());
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return Status();
  err << "lockstep-experiment: the plots need " << command.python
      << " with matplotlib and numpy (Debian: apt-get install "
         "python3-matplotlib); report.md has the tables\n";
  return Internal(command.script + " failed");
}

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

// "87 / 20 / 17 / 5": each worker's median over the runs of `field`.
std::string WorkerMedians(const std::vector<EventMetrics>& runs,
                          std::vector<double> EventMetrics::*field) {
  std::string text;
  const size_t workers = (runs.front().*field).size();
  for (size_t w = 0; w < workers; ++w) {
    std::vector<double> v;
    v.reserve(runs.size());
    for (const EventMetrics& m : runs) v.push_back((m.*field).at(w));
    text += (w ? " / " : "") + Fixed(Median(v), 0);
  }
  return text;
}

// One policy's row around the event: medians over its runs.
std::string EventRow(const std::string& label,
                     const std::vector<EventMetrics>& runs) {
  auto median = [&](auto field) {
    std::vector<double> v;
    v.reserve(runs.size());
    for (const EventMetrics& m : runs) v.push_back(field(m));
    return Median(v);
  };
  std::string row = "| " + label;
  row += " | " + Fixed(median([](auto& m) { return m.before_ms; }), 1);
  row += " | " + Fixed(median([](auto& m) { return m.right_after_ms; }), 1);
  row += " | " + Fixed(median([](auto& m) { return m.settled_ms; }), 1);
  row += " | " + Fixed(median([](auto& m) {
                         return static_cast<double>(m.settle_clocks);
                       }),
                       0);
  row += " | " + Fixed(median([](auto& m) {
                         return static_cast<double>(m.rebalance_clocks);
                       }),
                       0);
  row += " | " + Fixed(100 * median([](auto& m) { return m.gap_before; }), 0);
  row += " / " + Fixed(100 * median([](auto& m) { return m.gap_settled; }), 0);
  row += " | " + WorkerMedians(runs, &EventMetrics::batches_before);
  row += " -> " + WorkerMedians(runs, &EventMetrics::batches_settled);
  return row + " |\n";
}

// Around the scenario's event clock: a row per policy.
std::string EventMarkdown(const SpecScenario& scenario,
                          const std::vector<std::string>& labels,
                          const std::vector<RunState>& states) {
  const std::string c = std::to_string(scenario.event_clock);
  std::string md = "\nAround clock " + c;
  md +=
      " (medians over seeds; a clock's time is its busiest worker's "
      "compute + push + pull):\n\n| policy | clock before (ms) | clocks " +
      c +
      "+0..9 (ms) | settled (ms) | clocks to settled time (+-10%) | clocks "
      "to final batches | busy-time gap before / settled % | batches before "
      "-> settled |\n|---|---|---|---|---|---|---|---|\n";
  for (const std::string& label : labels) {
    std::vector<EventMetrics> runs;
    for (const RunState& s : states) {
      if (s.run.scenario != scenario.name || s.run.policy != label ||
          !s.record || s.record->status != "ok") {
        continue;
      }
      StatusOr<EventMetrics> m =
          ReadEventMetrics(s.run.dir, scenario.event_clock);
      if (m.ok()) runs.push_back(std::move(*m));
    }
    if (!runs.empty()) md += EventRow(label, runs);
  }
  return md;
}

// Each scenario's rows, read from its runs' folders once.
using ScenarioRows = std::map<std::string, std::vector<PolicyRow>>;

ScenarioRows RowsOf(const ExperimentSpec& spec,
                    const std::vector<RunState>& states) {
  ScenarioRows rows;
  for (const SpecScenario& scenario : spec.scenarios) {
    rows[scenario.name] = PolicyRows(OutcomesOf(states, scenario.name),
                                     Labels(spec), spec.baseline);
  }
  return rows;
}

// report.md; `with_plots` links each scenario's PNGs after its tables.
std::string MarkdownOf(const ExperimentSpec& spec,
                       const std::vector<RunState>& states,
                       const ScenarioRows& all_rows, bool with_plots) {
  std::string md = "# " + spec.name + "\n\n";
  if (!spec.description.empty()) md += spec.description + "\n\n";
  if (!spec.paper_claim.empty()) {
    md += "Published result: " + spec.paper_claim +
          (spec.paper_source.empty() ? "" : " (" + spec.paper_source + ")") +
          ".\n\n";
  }
  const std::string order =
      states.empty() ? "global" : states.front().run.job.data_order;
  md += "Medians over " + std::to_string(spec.seeds.size()) +
        " seed(s), min-max in brackets; every policy reads the samples in " +
        order + " order; the speedup pairs runs by seed.\n";
  for (const SpecScenario& scenario : spec.scenarios) {
    md += "\n## " + scenario.name + "\n\n";
    if (!scenario.description.empty()) md += scenario.description + "\n\n";
    if (!scenario.hetero.empty()) {
      md += "Heterogeneity: `" + scenario.hetero + "`\n\n";
    }
    const std::vector<PolicyRow>& rows = all_rows.at(scenario.name);
    md += PaperComparison(spec, rows);
    md += TableMarkdown(rows, spec.baseline) + "\n" + DetailMarkdown(rows);
    if (scenario.event_clock > 0) {
      md += EventMarkdown(scenario, Labels(spec), states);
    }
    md += "\nThe numbers: [report/" + scenario.name + ".csv](report/" +
          scenario.name + ".csv)\n";
    if (!with_plots) continue;
    md += "\n";
    for (const PlotKind& k : kPlots) {
      md += "![" + std::string(k.caption) + "](" +
            PlotFile(scenario.name, k.kind) + ")\n\n";
    }
  }
  return md + SetupMarkdown(spec, states);
}

}  // namespace

std::string ReportMarkdown(const ExperimentSpec& spec,
                           const std::vector<RunState>& states) {
  return MarkdownOf(spec, states, RowsOf(spec, states), false);
}

std::string ReportJson(const ExperimentSpec& spec,
                       const std::vector<RunState>& states) {
  json scenarios = json::array();
  for (const SpecScenario& scenario : spec.scenarios) {
    json policies = json::array();
    for (const SpecPolicy& p : spec.policies) {
      json runs = json::array();
      for (const RunState& s : states) {
        if (s.run.scenario != scenario.name || s.run.policy != p.label ||
            !s.record || s.record->status != "ok") {
          continue;
        }
        runs.push_back({{"seed", s.run.seed}, {"dir", s.run.dir}});
      }
      policies.push_back(
          {{"label", p.label}, {"sync", p.sync}, {"runs", runs}});
    }
    json plots = json::array();
    for (const PlotKind& k : kPlots) {
      plots.push_back({{"kind", k.kind},
                       {"file", PlotFile(scenario.name, k.kind)},
                       {"caption", k.caption}});
    }
    const double target =
        states.empty() ? 0 : states.front().run.job.target_accuracy;
    scenarios.push_back({{"name", scenario.name},
                         {"event_clock", scenario.event_clock},
                         {"policies", policies},
                         {"plots", plots},
                         {"target_accuracy", target}});
  }
  return json({{"name", spec.name},
               {"baseline", spec.baseline},
               {"scenarios", scenarios}})
      .dump(1);
}

int RunReportCommand(const ReportCommand& command, std::ostream& out,
                     std::ostream& err) {
  auto fail = [&](const Status& status) {
    err << "lockstep-experiment: " << status.message() << std::endl;
    return 1;
  };
  StatusOr<ExperimentSpec> spec =
      LoadExperimentSpec(command.dir + "/spec.toml");
  if (!spec.ok()) return fail(spec.status());
  StatusOr<std::vector<PlannedRun>> runs =
      PlanExperiment(*spec, command.dir, "lockstep-launch");
  if (!runs.ok()) return fail(runs.status());
  StatusOr<std::vector<RunState>> states = InspectRuns(*runs);
  if (!states.ok()) return fail(states.status());
  std::error_code ec;
  std::filesystem::create_directories(command.dir + "/report", ec);
  if (ec) return fail(IOError("cannot create " + command.dir + "/report"));
  const ScenarioRows rows = RowsOf(*spec, *states);
  for (const auto& [scenario, scenario_rows] : rows) {
    Status st = WriteFileDurably(command.dir + "/report/" + scenario + ".csv",
                                 TableCsv(scenario_rows));
    if (!st.ok()) return fail(st);
  }
  Status st = WriteFileDurably(command.dir + "/report/report.json",
                               ReportJson(*spec, *states) + "\n");
  if (!st.ok()) return fail(st);
  const std::string md =
      MarkdownOf(*spec, *states, rows, !command.script.empty());
  st = WriteFileDurably(command.dir + "/report.md", md);
  if (!st.ok()) return fail(st);
  if (!command.script.empty()) {
    st = RunScript(command, err);
    if (!st.ok()) return 1;
    out << "report: " << command.dir << "/report.html\n";
  }
  out << "report: " << command.dir << "/report.md\n";
  return 0;
}

}  // namespace lockstep

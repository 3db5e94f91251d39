#include "tools/experiment/report.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/durable_file.h"
#include "tools/experiment/interval.h"
#include "tools/experiment/plan.h"
#include "tools/experiment/run_failures.h"
#include "tools/experiment/scenario_report.h"
#include "tools/launch/run_dir.h"

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
  int failed = 0, recorded = 0;
  for (const RunState& s : states) {
    recorded += s.record ? 1 : 0;
    failed += s.record && s.record->status != "ok" ? 1 : 0;
  }
  md += "\nRuns: " + std::to_string(states.size()) + " planned, " +
        std::to_string(recorded) + " recorded, " + std::to_string(failed) +
        " failed or timed out" +
        (failed > 0 ? " (listed before the tables)" : "") + ".\n";
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

// Each scenario's report, its runs read once.
using ScenarioReports = std::map<std::string, ScenarioReport>;

ScenarioReports ReportsOf(const ExperimentSpec& spec,
                          const std::vector<RunState>& states) {
  ScenarioReports reports;
  for (const SpecScenario& scenario : spec.scenarios) {
    reports[scenario.name] = BuildScenarioReport(spec, states, scenario);
  }
  return reports;
}

bool Swept(const ScenarioReports& reports) {
  for (const auto& [name, r] : reports) {
    for (const SweepGroup& g : r.groups) {
      if (!g.sweep_point.empty()) return true;
    }
  }
  return false;
}

std::string IntroMarkdown(const ExperimentSpec& spec,
                          const std::vector<RunState>& states) {
  const std::string order =
      states.empty() ? "global" : states.front().run.job.data_order;
  return "Medians over " + std::to_string(spec.seeds.size()) +
         " seed(s). Time to target: the median over every seed (a seed that "
         "never reached the target counts as never), in square brackets the " +
         kIntervalMethod + ". Speedup: the " + kRatioMethod +
         ". Other columns: min-max in parentheses. Every policy reads the "
         "samples in " +
         order + " order.\n";
}

// report.md; `with_plots` links each scenario's PNGs after its tables.
std::string MarkdownOf(const ExperimentSpec& spec,
                       const std::vector<RunState>& states,
                       const ScenarioReports& reports, bool with_plots) {
  std::string md = "# " + spec.name + "\n\n";
  if (!spec.description.empty()) md += spec.description + "\n\n";
  if (!spec.paper_claim.empty()) {
    md += "Published result: " + spec.paper_claim +
          (spec.paper_source.empty() ? "" : " (" + spec.paper_source + ")") +
          ".\n\n";
  }
  md += IntroMarkdown(spec, states);
  // Before the tables, so no reader takes a policy's missing runs for a
  // result.
  md += FailedRunsMarkdown(states);
  for (const SpecScenario& scenario : spec.scenarios) {
    md += "\n## " + scenario.name + "\n\n";
    if (!scenario.description.empty()) md += scenario.description + "\n\n";
    if (!scenario.hetero.empty()) {
      md += "Heterogeneity: `" + scenario.hetero + "`\n\n";
    }
    const ScenarioReport& report = reports.at(scenario.name);
    md += ScenarioTables(spec, scenario, report, states);
    md += "\nThe numbers: [report/" + scenario.name + ".csv](report/" +
          scenario.name + ".csv)";
    if (!report.targets.empty()) {
      md += ", [report/" + scenario.name + "-targets.csv](report/" +
            scenario.name + "-targets.csv)";
    }
    if (Swept(reports)) md += ", [report/sweep.csv](report/sweep.csv)";
    md += "\n";
    if (!with_plots) continue;
    md += "\n";
    for (const PlotKind& k : kPlots) {
      md += "![" + std::string(k.caption) + "](" +
            PlotFile(scenario.name, k.kind) + ")\n\n";
    }
  }
  return md + SetupMarkdown(spec, states);
}

std::string JsonOf(const ExperimentSpec& spec,
                   const std::vector<RunState>& states,
                   const ScenarioReports& reports) {
  json scenarios = json::array();
  for (const SpecScenario& scenario : spec.scenarios) {
    const ScenarioReport& report = reports.at(scenario.name);
    json policies = json::array();
    for (size_t i = 0; i < spec.policies.size(); ++i) {
      const std::string& group = report.chosen_groups[i];
      json runs = json::array();
      for (const RunState& s : states) {
        if (s.run.scenario != scenario.name || group.empty() ||
            s.run.policy != group || !s.record || s.record->status != "ok") {
          continue;
        }
        runs.push_back({{"seed", s.run.seed}, {"dir", s.run.dir}});
      }
      policies.push_back(
          {{"label", group.empty() ? spec.policies[i].label : group},
           {"sync", spec.policies[i].sync},
           {"runs", runs}});
    }
    json plots = json::array();
    for (const PlotKind& k : kPlots) {
      plots.push_back({{"kind", k.kind},
                       {"file", PlotFile(scenario.name, k.kind)},
                       {"caption", k.caption}});
    }
    json targets = json::array();
    for (const RunTarget& t :
         ReportTargets(report.main_target, spec.targets, 0)) {
      targets.push_back(t.value);
    }
    scenarios.push_back({{"name", scenario.name},
                         {"event_clock", scenario.event_clock},
                         {"policies", policies},
                         {"plots", plots},
                         {"target_accuracy", report.main_target},
                         {"targets", targets}});
  }
  return json({{"name", spec.name},
               {"baseline", spec.baseline},
               {"scenarios", scenarios}})
      .dump(1);
}

// DIR/report/NAMESUFFIX.
std::string ReportFile(const std::string& dir, const std::string& name,
                       const std::string& suffix) {
  return dir + "/report/" + name + suffix;
}

// The CSV files behind the tables.
Status WriteCsvs(const std::string& dir, const ExperimentSpec& spec,
                 const ScenarioReports& reports) {
  std::vector<std::pair<std::string, std::vector<SweepGroup>>> sweep;
  for (const auto& [scenario, report] : reports) {
    LS_RETURN_IF_ERROR(WriteFileDurably(ReportFile(dir, scenario, ".csv"),
                                        TableCsv(report.rows)));
    if (!report.targets.empty()) {
      LS_RETURN_IF_ERROR(
          WriteFileDurably(ReportFile(dir, scenario, "-targets.csv"),
                           TargetsCsv(report.targets)));
    }
    sweep.push_back({scenario, report.groups});
  }
  if (!Swept(reports)) return Status();
  return WriteFileDurably(dir + "/report/sweep.csv",
                          SweepCsv(sweep, spec.sweep_criterion));
}

}  // namespace

std::string ReportMarkdown(const ExperimentSpec& spec,
                           const std::vector<RunState>& states) {
  return MarkdownOf(spec, states, ReportsOf(spec, states), false);
}

std::string ReportJson(const ExperimentSpec& spec,
                       const std::vector<RunState>& states) {
  return JsonOf(spec, states, ReportsOf(spec, states));
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
  // Tables of nothing but failures would read as a result.
  if (const std::string why = NoResultReason(*states); !why.empty()) {
    return fail(FailedPrecondition("no report of " + command.dir + ": " + why));
  }
  std::error_code ec;
  std::filesystem::create_directories(command.dir + "/report", ec);
  if (ec) return fail(IOError("cannot create " + command.dir + "/report"));
  const ScenarioReports reports = ReportsOf(*spec, *states);
  Status st = WriteCsvs(command.dir, *spec, reports);
  if (!st.ok()) return fail(st);
  st = WriteFileDurably(command.dir + "/report/report.json",
                        JsonOf(*spec, *states, reports) + "\n");
  if (!st.ok()) return fail(st);
  const std::string md =
      MarkdownOf(*spec, *states, reports, !command.script.empty());
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

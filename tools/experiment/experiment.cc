#include "tools/experiment/experiment.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "tools/experiment/plan.h"
#include "tools/experiment/run_failures.h"
#include "tools/launch/launch_host.h"

namespace lockstep {
namespace {

bool UsesRealLinks(const PlannedRun& run) {
  const auto links = std::find(run.argv.begin(), run.argv.end(), "--links");
  return links != run.argv.end() && links + 1 != run.argv.end() &&
         *(links + 1) == "real";
}

// What the runs need of this machine (CheckLaunchHost): the first run's,
// and the first with real links'.
Status CheckRunsHost(const std::vector<PlannedRun>& runs,
                     const std::string& launcher) {
  const std::string dir = std::filesystem::path(launcher).parent_path();
  const auto real = std::find_if(runs.begin(), runs.end(), UsesRealLinks);
  for (const auto& run : {runs.begin(), real}) {
    if (run == runs.end()) continue;
    std::vector<const char*> args;
    for (const std::string& a : run->argv) args.push_back(a.c_str());
    LS_ASSIGN_OR_RETURN(
        const LaunchOptions options,
        ParseLaunchFlags(static_cast<int>(args.size()), args.data()));
    LS_RETURN_IF_ERROR(CheckLaunchHost(options, dir).status());
  }
  return Status::Ok();
}

// The report's tables and failed runs, without its plots and set-up.
void PrintTables(const std::string& md_path, std::ostream& out) {
  std::ifstream md_file(md_path);
  bool blank = false;  // the last line printed was blank
  for (std::string line; std::getline(md_file, line);) {
    if (line.rfind("## Setup", 0) == 0) break;
    // Without the plots, their blank lines would pile up.
    if (line.rfind("![", 0) == 0 || (blank && line.empty())) continue;
    out << line << "\n";
    blank = line.empty();
  }
}

}  // namespace

int RunExperimentCommand(ExperimentCommand command, std::ostream& out,
                         std::ostream& err) {
  StatusOr<ExperimentSpec> spec = LoadExperimentSpec(command.spec_path);
  if (!spec.ok()) {
    err << "lockstep-experiment: " << spec.status().message() << std::endl;
    return 2;
  }
  if (command.out_dir.empty()) command.out_dir = "runs/" + spec->name;
  command.runner.out_dir = command.out_dir;
  command.report.dir = command.out_dir;
  StatusOr<std::vector<PlannedRun>> runs =
      PlanExperiment(*spec, command.out_dir, command.launcher);
  if (!runs.ok()) {
    err << "lockstep-experiment: " << runs.status().message() << std::endl;
    return 2;
  }
  // What the runs need of this machine (the launcher's binaries, real
  // links), once: the first run's is every run's.
  if (Status host = CheckRunsHost(*runs, command.launcher); !host.ok()) {
    err << "lockstep-experiment: " << host.message() << std::endl;
    return 2;
  }
  StatusOr<ExperimentOutcome> outcome =
      RunExperimentPlan(*spec, *runs, command.runner, out);
  if (!outcome.ok()) {
    err << "lockstep-experiment: " << outcome.status().message() << std::endl;
    return 2;
  }
  if (command.runner.dry_run) return 0;
  StatusOr<std::vector<RunState>> states = InspectRuns(*runs);
  if (!states.ok()) {
    err << "lockstep-experiment: " << states.status().message() << std::endl;
    return 1;
  }
  // Stopped before any run finished ok: nothing to report, and the runner
  // said how to go on.
  const bool results = NoResultReason(*states).empty();
  if (outcome->interrupted && !results) return 130;
  // Without results it refuses, saying why.
  const int report = RunReportCommand(command.report, out, err);
  // report.md is written before the plots, which may fail.
  if (results) PrintTables(command.out_dir + "/report.md", out);
  if (outcome->interrupted) return 130;
  if (report != 0) return 1;
  for (const RunState& s : *states) {
    if (s.record && s.record->status != "ok") return 1;
  }
  return 0;
}

}  // namespace lockstep

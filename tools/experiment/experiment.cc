#include "tools/experiment/experiment.h"

#include <fstream>

#include "tools/experiment/plan.h"

namespace lockstep {

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
  const int report = RunReportCommand(command.report, out, err);
  // The report's tables, without its plots and set-up.
  std::ifstream md_file(command.out_dir + "/report.md");
  for (std::string line; std::getline(md_file, line);) {
    if (line.rfind("## Setup", 0) == 0) break;
    if (line.rfind("![", 0) != 0) out << line << "\n";
  }
  if (report != 0) return 1;
  if (outcome->interrupted) return 130;
  for (const RunState& s : *states) {
    if (s.record && s.record->status != "ok") return 1;
  }
  return 0;
}

}  // namespace lockstep

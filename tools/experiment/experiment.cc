#include "tools/experiment/experiment.h"

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
  const std::string md = ReportMarkdown(*spec, *states);
  out << "\n" << md.substr(0, md.find("\n## Setup")) << "\n";
  if (RunReportCommand(command.report, out, err) != 0) return 1;
  if (outcome->interrupted) return 130;
  for (const RunState& s : *states) {
    if (s.record && s.record->status != "ok") return 1;
  }
  return 0;
}

}  // namespace lockstep

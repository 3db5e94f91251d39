// `lockstep-experiment report DIR`: the report of an experiment folder.
// From the runs recorded in DIR (planned again from DIR/spec.toml, the copy
// `run` keeps), it writes
//   DIR/report.md           tables per scenario (scenario_report.h): each
//                           policy's best of its sweep; time to target and
//                           the speedup with 95% intervals, the bound of a
//                           perfect batch split, other medians over seeds
//                           with min-max; every target, the time budget,
//                           the sweep; the published result beside ours,
//                           the spec, the versions and the machine;
//   DIR/report/*.csv        the numbers behind each table (SCENARIO.csv,
//                           SCENARIO-targets.csv, and sweep.csv: every run
//                           group and seed of a sweep);
//   DIR/report/report.json  what the plots need (the chosen run groups'
//                           folders, the targets);
// then runs the plotting script (report.py, matplotlib) with
// /usr/bin/python3, which draws DIR/report/*.png and writes DIR/report.html:
// the same report with its plots embedded, openable with no server.
// Thread-safety: not thread-safe; one report per process.
#ifndef LOCKSTEP_TOOLS_EXPERIMENT_REPORT_H_
#define LOCKSTEP_TOOLS_EXPERIMENT_REPORT_H_

#include <ostream>
#include <string>
#include <vector>

#include "common/status.h"
#include "tools/experiment/runner.h"
#include "tools/experiment/spec.h"

namespace lockstep {

struct ReportCommand {
  std::string dir;
  std::string python = "/usr/bin/python3";
  std::string script;  // report.py; empty: tables only, no plots or HTML
};

// Returns the exit status: 0 written, 1 an error (said on `err`); no run
// finished ok is an error, and nothing is written then (run_failures.h).
int RunReportCommand(const ReportCommand& command, std::ostream& out,
                     std::ostream& err);

// The report.md text of the recorded runs in `states`.
std::string ReportMarkdown(const ExperimentSpec& spec,
                           const std::vector<RunState>& states);

// The report.json text: the spec's shape and every recorded run's folder.
std::string ReportJson(const ExperimentSpec& spec,
                       const std::vector<RunState>& states);

}  // namespace lockstep

#endif  // LOCKSTEP_TOOLS_EXPERIMENT_REPORT_H_

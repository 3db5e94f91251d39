// `lockstep-experiment run`: loads a spec, plans its runs, runs what is
// missing, then writes the report (see report.h) and prints its tables.
// Thread-safety: not thread-safe; one experiment per process.
#ifndef LOCKSTEP_TOOLS_EXPERIMENT_EXPERIMENT_H_
#define LOCKSTEP_TOOLS_EXPERIMENT_EXPERIMENT_H_

#include <ostream>
#include <string>

#include "tools/experiment/report.h"
#include "tools/experiment/runner.h"

namespace lockstep {

struct ExperimentCommand {
  std::string spec_path;
  std::string out_dir;  // empty: runs/<spec name>
  std::string launcher;
  RunnerOptions runner;  // its out_dir is filled in
  ReportCommand report;  // its dir is filled in
};

// Returns the exit status: 0 all runs ok, 1 some failed or timed out (or
// the report could not be written: none finished ok, said on `err` with
// the first failure's reason and log), 2 a bad spec or a value the
// launcher refuses (before any run starts), 130 interrupted.
int RunExperimentCommand(ExperimentCommand command, std::ostream& out,
                         std::ostream& err);

}  // namespace lockstep

#endif  // LOCKSTEP_TOOLS_EXPERIMENT_EXPERIMENT_H_

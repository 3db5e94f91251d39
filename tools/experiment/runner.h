// Runs an experiment's plan through lockstep-launch, one run at a time,
// and keeps a record of each in its run folder (run.json: status, exit,
// wall time, command). A failed or timed-out run is recorded and the
// experiment goes on. Re-running the same plan over the same folder runs
// only what is missing: recorded runs are kept (failed ones too, unless
// retry_failed), a run folder without a record (an interrupted run) is
// cleared and run again, and a record whose command differs from the plan
// (the spec changed) stops the experiment before anything runs.
// Ctrl-C (SIGINT, SIGTERM, SIGHUP) stops the running job through its
// launcher and leaves its folder unrecorded, to be run again next time.
// Thread-safety: not thread-safe; one experiment per process.
#ifndef LOCKSTEP_TOOLS_EXPERIMENT_RUNNER_H_
#define LOCKSTEP_TOOLS_EXPERIMENT_RUNNER_H_

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "common/status.h"
#include "tools/experiment/plan.h"
#include "tools/experiment/spec.h"

namespace lockstep {

// The run.json of one finished run.
struct RunRecord {
  std::string status;  // "ok", "failed" or "timeout"
  std::string exit;    // "exited with status 1"
  double wall_s = 0;
  std::vector<std::string> command;  // the launcher's argv, argv[0] too
  std::string finished_utc;
};

inline constexpr char kRunRecordFile[] = "run.json";
// A run's launcher output, in its folder.
inline constexpr char kLauncherLogFile[] = "launcher.log";

// The record in `dir`, nullopt when there is none; an unreadable record is
// an error.
StatusOr<std::optional<RunRecord>> ReadRunRecord(const std::string& dir);
Status WriteRunRecord(const std::string& dir, const RunRecord& record);

struct RunnerOptions {
  std::string out_dir;
  bool dry_run = false;       // print the plan and its estimate only
  bool retry_failed = false;  // run recorded failures again
};

struct ExperimentOutcome {
  int planned = 0;
  int already_done = 0;  // recorded before this invocation (ok or failed)
  int ran = 0;
  int ok = 0;
  int failed = 0;  // of those run now
  bool interrupted = false;
};

// Runs (or, with dry_run, describes) `runs` into options.out_dir, which
// receives a copy of the spec as spec.toml. Progress goes to `log`.
StatusOr<ExperimentOutcome> RunExperimentPlan(
    const ExperimentSpec& spec, const std::vector<PlannedRun>& runs,
    const RunnerOptions& options, std::ostream& log);

// A planned run and what its folder holds.
struct RunState {
  PlannedRun run;
  std::optional<RunRecord> record;  // finished before
  bool partial = false;             // a folder without a record
  // Whether this invocation runs it.
  bool Todo(bool retry_failed) const {
    return !record || (retry_failed && record->status != "ok");
  }
};

// "SCENARIO / RUN GROUP / seed N", for progress and errors.
std::string RunName(const PlannedRun& run);

// Reads each run's folder. A record whose command differs from the plan
// (the spec changed) is InvalidArgument naming the folder.
StatusOr<std::vector<RunState>> InspectRuns(
    const std::vector<PlannedRun>& runs);

// The dry run's estimate of what is left: each run at the median wall time
// of the recorded runs of its scenario and policy, else at what its
// profiles predict (EstimateRunSeconds); and the bound if every run took
// its timeout.
std::string EstimateText(const ExperimentSpec& spec,
                         const std::vector<RunState>& states,
                         bool retry_failed);

}  // namespace lockstep

#endif  // LOCKSTEP_TOOLS_EXPERIMENT_RUNNER_H_

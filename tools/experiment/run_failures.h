// Which runs of an experiment failed and why: a section of the report when
// some did, and the reason no report is written when none finished ok (a
// report of empty tables would read as a result).
// Thread-safety: free functions on values.
#ifndef LOCKSTEP_TOOLS_EXPERIMENT_RUN_FAILURES_H_
#define LOCKSTEP_TOOLS_EXPERIMENT_RUN_FAILURES_H_

#include <string>
#include <vector>

#include "tools/experiment/runner.h"

namespace lockstep {

// report.md's list of failed runs, before the tables: each failed or
// timed-out run, why (the launcher's exit and its last line) and its log;
// "" when none did.
std::string FailedRunsMarkdown(const std::vector<RunState>& states);

// Why `states` hold no result to report, or "" when a run finished ok:
// every recorded run failed (how many, and the first one's reason and
// log), or no run is recorded yet.
std::string NoResultReason(const std::vector<RunState>& states);

}  // namespace lockstep

#endif  // LOCKSTEP_TOOLS_EXPERIMENT_RUN_FAILURES_H_

#include "tools/experiment/run_failures.h"

namespace lockstep {
namespace {

bool Failed(const RunState& s) { return s.record && s.record->status != "ok"; }

// "uniform / bsp / seed 2: failed (exited with status 1: LAST LINE); log:
// DIR/launcher.log".
std::string FailureLine(const RunState& s) {
  return RunName(s.run) + ": " + s.record->status + " (" + s.record->exit +
         "); log: " + s.run.dir + "/" + kLauncherLogFile;
}

}  // namespace

std::string FailedRunsMarkdown(const std::vector<RunState>& states) {
  std::string lines;
  int failed = 0;
  for (const RunState& s : states) {
    if (!Failed(s)) continue;
    ++failed;
    lines += "- " + FailureLine(s) + "\n";
  }
  if (failed == 0) return "";
  // Bold, not a heading: "## " headings are the scenarios' (and tools
  // such as scripts/readme-experiments.py read them so).
  return "\n**" + std::to_string(failed) + " of " +
         std::to_string(states.size()) +
         " runs failed or timed out**; the tables count them in the runs "
         "(failed) column and leave their numbers out:\n\n" +
         lines;
}

std::string NoResultReason(const std::vector<RunState>& states) {
  int failed = 0;
  const RunState* first = nullptr;
  for (const RunState& s : states) {
    if (s.record && s.record->status == "ok") return "";
    if (!Failed(s)) continue;
    ++failed;
    if (first == nullptr) first = &s;
  }
  if (first == nullptr) {
    return "no run of the " + std::to_string(states.size()) +
           " planned has finished yet: nothing to report";
  }
  return "every recorded run failed (" + std::to_string(failed) + " of " +
         std::to_string(states.size()) +
         " planned), so there is no result to report; the first: " +
         FailureLine(*first);
}

}  // namespace lockstep

#include "coordinator/enrollment/resume_point.h"

#include "coordinator/clock/sample_budget.h"

namespace lockstep {
namespace {

int64_t AdoptableClock(const ManifestRound& restore,
                       const std::vector<int64_t>& server_clocks) {
  int64_t clock = -1;
  for (const int64_t c : server_clocks) {
    if (c < restore.clock || (clock >= 0 && c != clock)) return -1;
    clock = c;
  }
  return clock;
}

}  // namespace

ResumePoint FindResumePoint(const ManifestRound& restore,
                            const std::vector<int64_t>& server_clocks,
                            bool on_commit) {
  ResumePoint point{restore,
                    on_commit ? AdoptableClock(restore, server_clocks) : -1};
  if (point.adopt_clock >= 0) {
    // The servers' newer commits stand: the policy's state is the round's,
    // at the servers' clock (a commit policy's processed samples are X a
    // clock).
    point.round.clock = point.adopt_clock;
    point.round.policy_state.erase(kProcessedSamplesKey);
  }
  return point;
}

}  // namespace lockstep

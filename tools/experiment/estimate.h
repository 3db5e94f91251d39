// A run's duration as its heterogeneity profiles predict it, for the dry
// run's estimate before anything was measured: per clock, the emulated
// compute time the policy waits for (the slowest worker under BSP, SSP and
// ASP, whose jobs end when the slowest worker is done; the N-B fastest
// under backup:B; a split that finishes every worker together under
// LB-BSP), summed over the job's clocks (at most its budget_s), plus the
// start-up of the roles.
// Workers without a cost model count as free, so this is a lower bound.
// Thread-safety: free functions on values.
#ifndef LOCKSTEP_TOOLS_EXPERIMENT_ESTIMATE_H_
#define LOCKSTEP_TOOLS_EXPERIMENT_ESTIMATE_H_

#include "tools/experiment/plan.h"

namespace lockstep {

// Seconds to start the roles and finish a job, measured on this machine.
inline constexpr double kRunStartupS = 0.5;

// The predicted seconds of `run`.
double EstimateRunSeconds(const PlannedRun& run);

}  // namespace lockstep

#endif  // LOCKSTEP_TOOLS_EXPERIMENT_ESTIMATE_H_

#include "tools/experiment/estimate.h"

#include <algorithm>

#include "sync_policies/policy_spec.h"
#include "tools/experiment/cost_model.h"
#include "worker/emulation/hetero_profile.h"

namespace lockstep {
namespace {

// The clock time of a split that finishes every worker together.
double BalancedClockSeconds(const std::vector<HeteroProfile>& profiles,
                            int64_t clock, uint64_t global_batch) {
  double lo = 0, hi = 0;
  for (const HeteroProfile& p : profiles) {
    hi = std::max(hi,
                  p.TargetSeconds(clock, static_cast<uint32_t>(global_batch)));
  }
  for (int i = 0; i < 40; ++i) {
    const double mid = (lo + hi) / 2;
    uint64_t samples = 0;
    for (const HeteroProfile& p : profiles) {
      samples += WholeSamplesWithin(p, clock, mid, global_batch);
    }
    (samples >= global_batch ? hi : lo) = mid;
  }
  return hi;
}

}  // namespace

double EstimateRunSeconds(const PlannedRun& run) {
  const JobConfig& job = run.job;
  std::vector<HeteroProfile> profiles;
  for (uint32_t w = 0; w < job.workers; ++w) {
    auto it = run.profiles.find(w);
    StatusOr<HeteroProfile> p =
        it == run.profiles.end()
            ? StatusOr<HeteroProfile>(HeteroProfile())
            : HeteroProfile::Parse(it->second, job.seed * 1000003 + w);
    profiles.push_back(p.ok() ? *p : HeteroProfile());
  }
  const PolicySpec policy(job.sync);
  uint64_t backups = 0;
  if (policy.name() == "backup" && !policy.params().empty()) {
    PolicySpec::ParseNumber(policy.params()[0], &backups);
  }
  double total = kRunStartupS;
  std::vector<double> times(job.workers);
  for (int64_t c = 0; c < job.max_clocks; ++c) {
    if (policy.name() == "lbbsp") {
      total += BalancedClockSeconds(profiles, c, job.GlobalBatch());
      continue;
    }
    for (uint32_t w = 0; w < job.workers; ++w) {
      times[w] = profiles[w].TargetSeconds(c, job.BatchOf(w));
    }
    std::sort(times.begin(), times.end());
    const size_t waited_for =
        job.workers - std::min<uint64_t>(backups, job.workers - 1);
    total += times[waited_for - 1];
  }
  // A time budget ends the run sooner (evaluations left out).
  if (job.budget_s > 0) total = std::min(total, kRunStartupS + job.budget_s);
  return total;
}

}  // namespace lockstep

// The fixture of the BSP policy's tests (bsp_policy_test.cc: commits and
// admission; bsp_membership_test.cc: workers leaving and coming back):
// helpers that drive a policy, and a referee that checks every commit it
// emits against the BSP rule.
#ifndef LOCKSTEP_TESTS_SYNC_POLICIES_BSP_POLICY_FIXTURE_H_
#define LOCKSTEP_TESTS_SYNC_POLICIES_BSP_POLICY_FIXTURE_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "sync_policies/bsp_policy.h"

namespace lockstep {

class BspPolicyTest : public ::testing::Test {
 protected:
  static void JoinAll(BspPolicy* policy, uint32_t workers) {
    for (uint32_t w = 0; w < workers; ++w) policy->OnWorkerJoined(w, 0, {});
  }

  // Whether `worker` asking for `clock` is admitted now.
  static bool MayStart(BspPolicy* policy, uint32_t worker, int64_t clock) {
    return policy->Admit(worker, clock).has_value();
  }

  // The batch `worker` is admitted with at the current clock.
  static uint32_t Quota(BspPolicy* policy, uint32_t worker) {
    const auto decision = policy->Admit(worker, policy->CurrentClock());
    return decision.has_value() ? decision->batch : 0;
  }

  static std::vector<CommitDecision> Report(BspPolicy* policy, uint32_t worker,
                                            int64_t clock) {
    ClockReport report;
    report.worker = worker;
    report.clock = clock;
    report.batch = 32;
    report.compute_s = 0.01 * (worker + 1);
    return policy->OnClockDone(report);
  }

  static std::vector<int64_t> Clocks(const std::vector<CommitDecision>& d) {
    std::vector<int64_t> out;
    for (const auto& c : d) out.push_back(c.clock);
    return out;
  }

  // Reference bookkeeping for randomised runs: checks every decision the
  // policy emits against the BSP rule.
  struct Referee {
    std::set<uint32_t> live;
    std::map<int64_t, std::set<uint32_t>> reported;  // by live workers only
    int64_t committed = -1;

    void Report(uint32_t worker, int64_t clock) {
      if (clock > committed && live.count(worker) != 0) {
        reported[clock].insert(worker);
      }
    }
    bool Ready(int64_t clock) const {
      auto it = reported.find(clock);
      if (live.empty() || it == reported.end()) return false;
      return std::includes(it->second.begin(), it->second.end(), live.begin(),
                           live.end());
    }
    // Checks `decisions` (just emitted) and then that nothing committable
    // was held back.
    void Check(const std::vector<CommitDecision>& decisions,
               const BspPolicy& policy) {
      for (const auto& d : decisions) {
        ASSERT_EQ(d.clock, committed + 1) << "commits skip or repeat a clock";
        ASSERT_TRUE(Ready(d.clock))
            << "clock " << d.clock << " committed before every live worker "
            << "reported it";
        const std::vector<uint32_t> expected(live.begin(), live.end());
        ASSERT_EQ(d.workers, expected) << "clock " << d.clock;
        committed = d.clock;
        reported.erase(d.clock);
      }
      ASSERT_EQ(policy.committed_clock(), committed);
      ASSERT_FALSE(Ready(committed + 1))
          << "clock " << committed + 1 << " is complete but not committed";
    }
  };
};

}  // namespace lockstep

#endif  // LOCKSTEP_TESTS_SYNC_POLICIES_BSP_POLICY_FIXTURE_H_

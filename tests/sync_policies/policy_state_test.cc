// A policy restored from its saved state takes the same decisions as the
// policy that kept running: same admissions (clock, quota, offset), same
// commits, same predictions, for every policy. And a policy that is not
// given the state decides differently where the state matters (LB-BSP's
// quotas and predictors, SSP's and ASP's per-worker clocks), so the
// comparison can fail.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/job_config.h"
#include "sync_policies/lbbsp/narx_predictor.h"
#include "sync_policies/policy_registry.h"
#include "tests/support/param_names.h"

namespace lockstep {
namespace {

constexpr uint32_t kWorkers = 3;

std::unique_ptr<SyncPolicy> NewPolicy(const std::string& sync) {
  JobConfig job;
  job.sync = sync;
  job.workers = kWorkers;
  job.batches = {64};
  job.seed = 7;
  auto policy = CreateSyncPolicy(job);
  EXPECT_TRUE(policy.ok()) << policy.status().ToString();
  return policy.ok() ? std::move(policy).value() : nullptr;
}

// Worker w's speed (samples/s) and CPU share at `clock`: uneven and
// drifting, so quotas and predictors have something to learn.
double SpeedOf(uint32_t w, int64_t clock) {
  return 500.0 * (w + 1) * (1 + 0.3 * std::sin(0.7 * clock + w));
}
double CpuOf(uint32_t w, int64_t clock) {
  return 0.6 + 0.4 * std::cos(0.3 * clock * (w + 1));
}

// What a policy decided, one line per decision.
std::vector<std::string> RunClocks(SyncPolicy& p, int64_t from, int64_t to) {
  std::vector<std::string> trace;
  for (int64_t clock = from; clock < to; ++clock) {
    std::map<uint32_t, AdmissionDecision> admitted;
    for (uint32_t w = 0; w < kWorkers; ++w) {
      auto d = p.Admit(w, clock);
      if (!d) {
        trace.push_back("defer " + std::to_string(w));
        continue;
      }
      admitted[w] = *d;
      trace.push_back("admit " + std::to_string(w) + " clock " +
                      std::to_string(d->clock) + " batch " +
                      std::to_string(d->batch) + " offset " +
                      std::to_string(d->batch_offset));
    }
    for (const auto& [w, d] : admitted) {
      ClockReport r;
      r.worker = w;
      r.clock = d.clock;
      r.batch = d.batch;
      r.compute_s = d.batch / SpeedOf(w, d.clock);
      r.cpu_available = CpuOf(w, d.clock);
      for (const CommitDecision& c : p.OnClockDone(r)) {
        std::string line = "commit " + std::to_string(c.clock) + ":";
        for (uint32_t cw : c.workers) line += " " + std::to_string(cw);
        trace.push_back(line);
      }
    }
  }
  return trace;
}

// The policy's metrics that reflect learned state (not event counters).
std::map<std::string, double> LearnedMetrics(const SyncPolicy& p) {
  std::map<std::string, double> out;
  for (const auto& [key, value] : p.Metrics()) {
    if (key.starts_with("lockstep_predict") ||
        key.starts_with("lockstep_quota") ||
        key.starts_with("lockstep_lbbsp_phase") ||
        key.starts_with("lockstep_lbbsp_step") ||
        key.starts_with("lockstep_lbbsp_window") ||
        key.starts_with("lockstep_worker_clock")) {
      out[key] = value;
    }
  }
  return out;
}

// `state` without LB-BSP's resplit count: a resumed policy splits again as
// its workers join, and counts it.
PolicyState WithoutCounters(PolicyState state) {
  auto it = state.find("lbbsp");
  if (it != state.end() && it->second.size() == 2) it->second[1] = 0;
  return state;
}

class PolicyStateTest : public ::testing::TestWithParam<std::string> {
 protected:
  static constexpr int64_t kSavedAt = 40;  // clocks before the round
  static constexpr int64_t kAfter = 30;    // clocks compared after it

  // A policy that ran kSavedAt clocks, and its state then.
  std::unique_ptr<SyncPolicy> Ran(PolicyState* state) {
    auto p = NewPolicy(GetParam());
    for (uint32_t w = 0; w < kWorkers; ++w) p->OnWorkerJoined(w, 0, {});
    RunClocks(*p, 0, kSavedAt);
    *state = p->SaveState();
    return p;
  }

  // A policy resumed at kSavedAt, with `state` or without (nullptr).
  std::unique_ptr<SyncPolicy> Resumed(const PolicyState* state) {
    auto p = NewPolicy(GetParam());
    p->ResumeAt(kSavedAt);
    if (state != nullptr) {
      const Status loaded = p->LoadState(*state);
      EXPECT_TRUE(loaded.ok()) << loaded.ToString();
    }
    for (uint32_t w = 0; w < kWorkers; ++w) p->OnWorkerJoined(w, 0, {});
    return p;
  }
};

TEST_P(PolicyStateTest, ARestoredPolicyDecidesLikeTheOneThatKeptRunning) {
  PolicyState state;
  auto original = Ran(&state);
  auto restored = Resumed(&state);
  EXPECT_EQ(LearnedMetrics(*restored), LearnedMetrics(*original));
  const auto want = RunClocks(*original, kSavedAt, kSavedAt + kAfter);
  const auto got = RunClocks(*restored, kSavedAt, kSavedAt + kAfter);
  EXPECT_EQ(got, want);
  EXPECT_EQ(LearnedMetrics(*restored), LearnedMetrics(*original));
  EXPECT_EQ(WithoutCounters(restored->SaveState()),
            WithoutCounters(original->SaveState()));
}

TEST_P(PolicyStateTest, StateSurvivesASecondSaveBeforeWorkersRejoin) {
  PolicyState state;
  Ran(&state);
  auto p = NewPolicy(GetParam());
  p->ResumeAt(kSavedAt);
  ASSERT_TRUE(p->LoadState(state).ok());
  // Saved again before anyone joined (a round right after a resume):
  // nothing the first state held may be lost.
  const PolicyState again = p->SaveState();
  for (const auto& [key, values] : state) {
    if (key.starts_with("completed/") || key == "clock_floor") {
      EXPECT_EQ(again.count(key), 1u) << key;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Policies, PolicyStateTest,
                         ::testing::Values("bsp", "ssp:2", "asp", "backup:1",
                                           "lbbsp:analytical:last",
                                           "lbbsp:analytical:ema", "lbbsp",
                                           "lbbsp:numerical"),
                         PolicyParamName());

TEST(PolicyStateLbBspTest, WithoutTheStateQuotasStartOverFromAnEqualSplit) {
  for (const char* sync : {"lbbsp", "lbbsp:numerical"}) {
    SCOPED_TRACE(sync);
    auto original = NewPolicy(sync);
    for (uint32_t w = 0; w < kWorkers; ++w) original->OnWorkerJoined(w, 0, {});
    RunClocks(*original, 0, 40);
    auto fresh = NewPolicy(sync);
    fresh->ResumeAt(40);
    for (uint32_t w = 0; w < kWorkers; ++w) fresh->OnWorkerJoined(w, 0, {});
    EXPECT_NE(RunClocks(*fresh, 40, 41), RunClocks(*original, 40, 41));
  }
}

TEST(PolicyStateLbBspTest, OtherWorkersThanTheSavedOnesGetAFreshSplit) {
  auto original = NewPolicy("lbbsp");
  for (uint32_t w = 0; w < kWorkers; ++w) original->OnWorkerJoined(w, 0, {});
  RunClocks(*original, 0, 40);
  auto p = NewPolicy("lbbsp");
  p->ResumeAt(40);
  ASSERT_TRUE(p->LoadState(original->SaveState()).ok());
  p->OnWorkerJoined(0, 0, {});
  p->OnWorkerJoined(1, 0, {});
  uint64_t sum = 0;
  for (uint32_t w = 0; w < 2; ++w) {
    auto d = p->Admit(w, 40);
    ASSERT_TRUE(d);
    sum += d->batch;
  }
  EXPECT_EQ(sum, 64u * kWorkers);  // X split over the two that came back
}

TEST(PolicyStateSspTest, AResumedWorkerStartsAtTheClockItHadReached) {
  for (const char* sync : {"ssp:3", "asp"}) {
    SCOPED_TRACE(sync);
    auto p = NewPolicy(sync);
    for (uint32_t w = 0; w < kWorkers; ++w) p->OnWorkerJoined(w, 0, {});
    // Every worker finishes clocks 0..2, then worker 0 also 3..5.
    for (int64_t c = 0; c < 6; ++c) {
      for (uint32_t w = 0; w < (c < 3 ? kWorkers : 1); ++w) {
        ASSERT_TRUE(p->Admit(w, c)) << "worker " << w << " clock " << c;
        ClockReport r;
        r.worker = w;
        r.clock = c;
        r.batch = 64;
        p->OnClockDone(r);
      }
    }
    const PolicyState state = p->SaveState();
    auto resumed = NewPolicy(sync);
    resumed->ResumeAt(p->CurrentClock());
    ASSERT_TRUE(resumed->LoadState(state).ok());
    for (uint32_t w = 0; w < kWorkers; ++w) resumed->OnWorkerJoined(w, 0, {});
    EXPECT_EQ(resumed->Admit(0, 0)->clock, 6);
    EXPECT_EQ(resumed->Admit(1, 0)->clock, 3);
    auto fresh = NewPolicy(sync);
    fresh->ResumeAt(p->CurrentClock());
    for (uint32_t w = 0; w < kWorkers; ++w) fresh->OnWorkerJoined(w, 0, {});
    EXPECT_EQ(fresh->Admit(0, 0)->clock, 3);  // would redo clocks 3..5
  }
}

TEST(PolicyStateErrorsTest, ATruncatedOrForeignStateIsRefusedByName) {
  auto original = NewPolicy("lbbsp");
  for (uint32_t w = 0; w < kWorkers; ++w) original->OnWorkerJoined(w, 0, {});
  RunClocks(*original, 0, 20);
  PolicyState state = original->SaveState();
  state["model/1"].pop_back();
  auto p = NewPolicy("lbbsp");
  Status loaded = p->LoadState(state);
  EXPECT_EQ(loaded.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(loaded.message().find("model/1"), std::string::npos)
      << loaded.message();
  auto ssp = NewPolicy("ssp:1");
  EXPECT_FALSE(ssp->LoadState(original->SaveState()).ok());  // no clocks
  PolicyState bad_clock = {{"clock_floor", {2.5}}};
  EXPECT_FALSE(ssp->LoadState(bad_clock).ok());
}

TEST(NarxStateTest, ARestoredPredictorPredictsBitForBitLikeTheOriginal) {
  NarxPredictor a(11);
  for (int i = 0; i < 40; ++i) {
    a.Observe(SpeedOf(1, i), CpuOf(1, i), 0.9);
  }
  std::vector<double> saved;
  StateWriter out(&saved);
  a.SaveState(&out);
  NarxPredictor b(11);
  StateReader in("narx", saved);
  ASSERT_TRUE(b.LoadState(&in).ok());
  ASSERT_TRUE(in.Finish().ok());
  for (int i = 40; i < 80; ++i) {
    EXPECT_EQ(b.Predict(CpuOf(1, i), 0.9), a.Predict(CpuOf(1, i), 0.9));
    a.Observe(SpeedOf(1, i), CpuOf(1, i), 0.9);
    b.Observe(SpeedOf(1, i), CpuOf(1, i), 0.9);
  }
  NarxPredictor fresh(11);
  EXPECT_NE(fresh.Predict(0.9, 0.9), a.Predict(0.9, 0.9));
}

}  // namespace
}  // namespace lockstep

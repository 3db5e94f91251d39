// The referee itself: fed deliberately broken policies it must flag each
// breakage (and stay silent about the honest policy in the same scenario),
// or the conformance suite's passes would mean nothing.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/job_config.h"
#include "sync_policies/bsp_policy.h"
#include "sync_policies/configured_batches.h"
#include "sync_policies/policy_registry.h"
#include "tests/sync_policies/policy_referee.h"
#include "tests/sync_policies/policy_simulator.h"

namespace lockstep {
namespace {

using sim::PolicyReferee;
using sim::PolicySimulator;
using sim::RefereeSpec;
using sim::SimScenario;
using Kind = RefereeSpec::Kind;

// Forwards every call to the policy it wraps; the broken policies below
// override the call they break.
class Wrapped : public SyncPolicy {
 public:
  explicit Wrapped(std::unique_ptr<SyncPolicy> inner)
      : inner_(std::move(inner)) {}
  std::string name() const override { return inner_->name(); }
  ApplyMode apply_mode() const override { return inner_->apply_mode(); }
  void ResumeAt(int64_t clock) override { inner_->ResumeAt(clock); }
  void OnWorkerJoined(uint32_t worker, int64_t clock,
                      const WorkerCaps& caps) override {
    inner_->OnWorkerJoined(worker, clock, caps);
  }
  std::vector<CommitDecision> OnWorkerLeft(uint32_t worker) override {
    return inner_->OnWorkerLeft(worker);
  }
  std::optional<AdmissionDecision> Admit(uint32_t worker,
                                         int64_t clock) override {
    return inner_->Admit(worker, clock);
  }
  std::vector<CommitDecision> OnClockDone(const ClockReport& report) override {
    return inner_->OnClockDone(report);
  }
  int64_t CurrentClock() const override { return inner_->CurrentClock(); }
  std::map<std::string, double> Metrics() const override {
    return inner_->Metrics();
  }

 protected:
  std::unique_ptr<SyncPolicy> inner_;
};

// Backup(B) that waits for everyone and commits the *last* N - B reporters.
class LastReportersBackup : public Wrapped {
 public:
  LastReportersBackup(std::vector<uint32_t> batches, size_t backups)
      : Wrapped(std::make_unique<BspPolicy>(std::move(batches))),
        backups_(backups) {}
  std::map<std::string, double> Metrics() const override {
    return {{"lockstep_dropped_pushes_total", 0}};
  }
  std::vector<CommitDecision> OnClockDone(const ClockReport& report) override {
    order_[report.clock].push_back(report.worker);
    std::vector<CommitDecision> commits = inner_->OnClockDone(report);
    for (CommitDecision& d : commits) {
      std::vector<uint32_t> last = order_[d.clock];
      last.erase(last.begin(),
                 last.begin() + std::min(backups_, last.size() - 1));
      std::sort(last.begin(), last.end());
      d.workers = last;
    }
    return commits;
  }

 private:
  size_t backups_;
  std::map<int64_t, std::vector<uint32_t>> order_;
};

// LB-BSP whose worker 0 gets one sample more than its quota.
class OffByOneQuota : public Wrapped {
 public:
  using Wrapped::Wrapped;
  std::optional<AdmissionDecision> Admit(uint32_t worker,
                                         int64_t clock) override {
    auto d = inner_->Admit(worker, clock);
    if (d.has_value() && worker == 0) ++d->batch;
    return d;
  }
};

// Offsets from the workers live at each admission (what Lockstep did
// before BatchPlan): after a departure a later admission to the same clock
// moves onto a slice another worker already read.
class LiveSetOffsets : public Wrapped {
 public:
  LiveSetOffsets(std::unique_ptr<SyncPolicy> inner,
                 std::vector<uint32_t> batches)
      : Wrapped(std::move(inner)), batches_(std::move(batches)) {}
  void OnWorkerJoined(uint32_t worker, int64_t clock,
                      const WorkerCaps& caps) override {
    live_.insert(worker);
    inner_->OnWorkerJoined(worker, clock, caps);
  }
  std::vector<CommitDecision> OnWorkerLeft(uint32_t worker) override {
    live_.erase(worker);
    return inner_->OnWorkerLeft(worker);
  }
  std::optional<AdmissionDecision> Admit(uint32_t worker,
                                         int64_t clock) override {
    auto d = inner_->Admit(worker, clock);
    if (d.has_value()) {
      d->batch_offset = 0;
      for (uint32_t w : live_) {
        if (w < worker) d->batch_offset += ConfiguredBatch(batches_, w);
      }
    }
    return d;
  }

 private:
  std::vector<uint32_t> batches_;
  std::set<uint32_t> live_;
};

std::unique_ptr<SyncPolicy> Registered(const std::string& sync,
                                       const SimScenario& s) {
  JobConfig config;
  config.sync = sync;
  config.workers = static_cast<uint32_t>(s.workers.size());
  config.batches = s.batches;
  config.seed = 7;
  auto policy = CreateSyncPolicy(config);
  EXPECT_TRUE(policy.ok()) << policy.status().ToString();
  return std::move(policy).value();
}

uint64_t GlobalBatch(const SimScenario& s) {
  uint64_t x = 0;
  for (uint32_t w = 0; w < s.workers.size(); ++w) {
    x += ConfiguredBatch(s.batches, w);
  }
  return x;
}

// The referee's complaints, told `spec`, about `policy` running `s`.
std::string Complaints(SyncPolicy* policy, const RefereeSpec& spec,
                       const SimScenario& s) {
  ::testing::TestPartResultArray results;
  {
    ::testing::ScopedFakeTestPartResultReporter reporter(
        ::testing::ScopedFakeTestPartResultReporter::
            INTERCEPT_ONLY_CURRENT_THREAD,
        &results);
    PolicyReferee referee(policy, spec, s, GlobalBatch(s));
    PolicySimulator simulator(policy, s, &referee);
    simulator.Run();
  }
  std::string all;
  for (int i = 0; i < results.size(); ++i) {
    all += results.GetTestPartResult(i).message();
    all += "\n";
  }
  return all;
}

RefereeSpec Spec(Kind kind, int64_t staleness = 0, uint32_t backups = 0) {
  RefereeSpec spec;
  spec.kind = kind;
  spec.staleness = staleness;
  spec.backups = backups;
  return spec;
}

TEST(RefereeTest, FlagsSspAdmittingOneClockTooFarAhead) {
  const SimScenario s = sim::UnevenSpeedsScenario();
  auto honest = Registered("ssp:2", s);
  EXPECT_EQ(Complaints(honest.get(), Spec(Kind::kSsp, 2), s), "");
  auto loose = Registered("ssp:3", s);  // claims s = 2, runs s = 3
  EXPECT_THAT(Complaints(loose.get(), Spec(Kind::kSsp, 2), s),
              ::testing::HasSubstr("SSP admitted"));
}

TEST(RefereeTest, FlagsBspCommittingBeforeEveryWorkerReported) {
  const SimScenario s = sim::UnevenSpeedsScenario();
  auto honest = Registered("bsp", s);
  EXPECT_EQ(Complaints(honest.get(), Spec(Kind::kBsp), s), "");
  auto early = Registered("backup:1", s);  // claims BSP
  EXPECT_THAT(Complaints(early.get(), Spec(Kind::kBsp), s),
              ::testing::HasSubstr("committed before live w"));
}

TEST(RefereeTest, FlagsBackupCommittingTheLastReporters) {
  const SimScenario s = sim::UnevenSpeedsScenario();
  auto honest = Registered("backup:1", s);
  EXPECT_EQ(Complaints(honest.get(), Spec(Kind::kBackup, 0, 1), s), "");
  LastReportersBackup last(s.batches, 1);
  const std::string complaints =
      Complaints(&last, Spec(Kind::kBackup, 0, 1), s);
  EXPECT_THAT(complaints, ::testing::HasSubstr("held back"));
  EXPECT_THAT(complaints, ::testing::HasSubstr("not the first N-B"));
}

TEST(RefereeTest, FlagsQuotasNotSummingToTheGlobalBatch) {
  const SimScenario s = sim::UnevenSpeedsScenario();
  auto honest = Registered("lbbsp", s);
  const RefereeSpec spec = RefereeSpec::Of(*honest);
  ASSERT_EQ(spec.kind, Kind::kLbBsp);
  EXPECT_EQ(Complaints(honest.get(), spec, s), "");
  OffByOneQuota broken(Registered("lbbsp", s));
  EXPECT_THAT(Complaints(&broken, spec, s),
              ::testing::HasSubstr("quotas of clock"));
}

TEST(RefereeTest, FlagsSlicesOverlappingAfterAWorkerLeft) {
  // While the slow worker 3 still computes clock 7, worker 1 dies and
  // worker 2 drops out and is back at once: re-admitted to clock 7, worker
  // 2 must keep its own slice, not take worker 1's (the live workers below
  // it are now only worker 0).
  SimScenario s = sim::UnevenSpeedsScenario();
  s.name = "slices-after-a-departure";
  s.clocks = 30;
  s.membership = {{sim::MembershipEvent::Kind::kLeave, 1, 1.0051},
                  {sim::MembershipEvent::Kind::kLeave, 2, 1.0061},
                  {sim::MembershipEvent::Kind::kJoin, 2, 1.0071}};
  for (const char* sync : {"bsp", "lbbsp"}) {
    SCOPED_TRACE(sync);
    auto honest = Registered(sync, s);
    const RefereeSpec spec = RefereeSpec::Of(*honest);
    EXPECT_EQ(Complaints(honest.get(), spec, s), "");
  }
  LiveSetOffsets broken(Registered("bsp", s), s.batches);
  EXPECT_THAT(Complaints(&broken, Spec(Kind::kBsp), s),
              ::testing::HasSubstr("had ["));
}

}  // namespace
}  // namespace lockstep

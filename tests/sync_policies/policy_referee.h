// The conformance suite's referee: follows a PolicySimulator run through
// its observer hooks, keeps its own account of membership, reports and
// commits, and checks every decision of the policy against the rule of
// the policy's family (RefereeSpec reads it off the policy):
//  - BSP and LB-BSP: admission only to the current clock (committed + 1);
//    commits consecutive, each listing exactly the live reporters, never
//    before every live worker admitted to the clock reported it, and never
//    held back once they all did.
//  - SSP(S): admission to c only when every live worker completed c - S
//    clocks, and deferral only when not; never commits.
//  - ASP: never defers, never commits.
//  - Backup(B): commits exactly the first max(1, N - B) live reporters as
//    soon as they are in; counts exactly the late reports as drops.
//  - LB-BSP also: every quota within the worker's bounds, the quotas of
//    each clock sum to X (or as near as the bounds allow).
//  - All: no two workers' slices [offset, offset + batch) of one clock
//    overlap and every slice lies in [0, X), however membership changed
//    during the clock; with membership stable through a barrier clock the
//    slices tile [0, X) in rank order (a clock all of whose admitted
//    workers left may be split afresh).
// Records per clock the admissions and reported compute times, for the
// suite's convergence checks.
// Thread-safety: not thread-safe.
#ifndef LOCKSTEP_TESTS_SYNC_POLICIES_POLICY_REFEREE_H_
#define LOCKSTEP_TESTS_SYNC_POLICIES_POLICY_REFEREE_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "sync_policies/asp_policy.h"
#include "sync_policies/backup_policy.h"
#include "sync_policies/configured_batches.h"
#include "sync_policies/lbbsp/lbbsp_policy.h"
#include "sync_policies/ssp_policy.h"
#include "tests/sync_policies/policy_simulator.h"

namespace lockstep {
namespace sim {

// What the referee needs to know of the policy under test: its family and
// parameters, read off the policy itself.
struct RefereeSpec {
  enum class Kind { kBsp, kSsp, kAsp, kBackup, kLbBsp };
  Kind kind = Kind::kBsp;
  int64_t staleness = 0;  // ssp
  uint32_t backups = 0;   // backup
  LbBspOptions lbbsp;     // lbbsp

  static RefereeSpec Of(const SyncPolicy& policy) {
    RefereeSpec spec;
    // LbBspPolicy derives from BspPolicy, so it is asked first.
    if (const auto* p = dynamic_cast<const LbBspPolicy*>(&policy)) {
      spec.kind = Kind::kLbBsp;
      spec.lbbsp = p->options();
    } else if (const auto* p = dynamic_cast<const SspPolicy*>(&policy)) {
      spec.kind = Kind::kSsp;
      spec.staleness = p->staleness();
    } else if (dynamic_cast<const AspPolicy*>(&policy) != nullptr) {
      spec.kind = Kind::kAsp;
    } else if (const auto* p = dynamic_cast<const BackupPolicy*>(&policy)) {
      spec.kind = Kind::kBackup;
      spec.backups = p->backups();
    }
    return spec;
  }
};

class PolicyReferee : public SimObserver {
 public:
  using Kind = RefereeSpec::Kind;

  // Does not own `policy`.
  PolicyReferee(const SyncPolicy* policy, const RefereeSpec& spec,
                const SimScenario& scenario, uint64_t global_batch)
      : policy_(policy),
        spec_(spec),
        scenario_(scenario),
        global_batch_(global_batch) {}

  void OnJoin(uint32_t w, int64_t clock) override {
    if (barrier()) {
      // A clock under way has no slice for a worker that was not expected
      // in it when its first worker was admitted (LB-BSP: for none, its
      // quotas are fixed): the newcomer starts at the next clock.
      clock = std::max(clock, committed_ + 1);
      const bool under_way = UnderWay(clock);
      if (under_way &&
          (spec_.kind == Kind::kLbBsp || members_[clock].count(w) == 0)) {
        ++clock;
      }
    }
    joined_[w] = clock;
    completed_[w] = clock;
    admitted_.erase(w);
    changed_clocks_.insert(committed_ + 1);
  }

  void OnLeave(uint32_t w, const std::vector<CommitDecision>& c) override {
    joined_.erase(w);
    completed_.erase(w);
    admitted_.erase(w);
    for (auto& [clock, order] : reporters_) {
      order.erase(std::remove(order.begin(), order.end(), w), order.end());
    }
    changed_clocks_.insert(committed_ + 1);
    bool abandoned = true;  // no live worker runs the current clock
    for (const auto& [worker, clock] : admitted_) {
      abandoned = abandoned && clock != committed_ + 1;
    }
    if (abandoned) {  // its quotas and slices are void
      admissions_.erase(committed_ + 1);
      members_.erase(committed_ + 1);
    }
    CheckCommits(c, "after w" + std::to_string(w) + " left");
  }

  void OnAdmit(uint32_t w, int64_t asked, const AdmissionDecision& d) override {
    ASSERT_EQ(joined_.count(w), 1u) << "admitted a departed worker " << w;
    if (barrier()) {
      EXPECT_EQ(d.clock, committed_ + 1) << "w" << w << " asked " << asked;
    } else {
      EXPECT_EQ(d.clock, std::max(asked, completed_[w])) << "w" << w;
    }
    if (spec_.kind == Kind::kSsp) {
      EXPECT_GE(MinCompleted(), d.clock - spec_.staleness)
          << "SSP admitted w" << w << " to " << d.clock
          << " before every live worker completed "
          << d.clock - spec_.staleness;
    }
    if (spec_.kind == Kind::kLbBsp) {
      const QuotaBounds b = BoundsOf(w);
      EXPECT_GE(d.batch, b.min) << "w" << w << " clock " << d.clock;
      EXPECT_LE(d.batch, b.max) << "w" << w << " clock " << d.clock;
    } else {
      EXPECT_EQ(d.batch, ConfiguredBatch(scenario_.batches, w));
    }
    CheckSlice(w, d);
    if (admissions_[d.clock].empty()) {  // the clock's plan: who is expected
      for (const auto& [worker, joined] : joined_) {
        if (joined <= d.clock) members_[d.clock].insert(worker);
      }
    }
    admitted_[w] = d.clock;
    admissions_[d.clock][w] = d;
  }

  void OnDefer(uint32_t w, int64_t asked) override {
    const int64_t start = std::max(asked, completed_[w]);
    switch (spec_.kind) {
      case Kind::kAsp:
        ADD_FAILURE() << "ASP deferred w" << w << " asking " << asked;
        break;
      case Kind::kSsp:
        EXPECT_LT(MinCompleted(), start - spec_.staleness)
            << "SSP deferred w" << w << " for " << start << " without cause";
        break;
      default:  // a worker that joined mid-clock waits for the next
        EXPECT_TRUE(asked > committed_ + 1 || admitted_.count(w) == 0)
            << "deferred w" << w << " asking " << asked;
    }
  }

  void OnReport(const ClockReport& r,
                const std::vector<CommitDecision>& c) override {
    completed_[r.worker] = std::max(completed_[r.worker], r.clock + 1);
    compute_s_[r.clock][r.worker] = r.compute_s;
    if (r.clock > committed_) {
      reporters_[r.clock].push_back(r.worker);
    } else if (spec_.kind == Kind::kBackup) {
      ++late_[r.worker];
      ++late_total_;
    }
    CheckCommits(c, "after w" + std::to_string(r.worker) + " reported " +
                        std::to_string(r.clock));
    if (spec_.kind == Kind::kBackup) CheckDrops();
  }

  void AfterEvent(double now_s) override {
    if (spec_.kind == Kind::kSsp) {
      EXPECT_LE(policy_->Metrics().at("lockstep_clock_gap"), spec_.staleness);
    }
    if (!barrier()) return;
    const int64_t c = committed_ + 1;
    auto it = reporters_.find(c);
    const size_t reported = it == reporters_.end() ? 0 : it->second.size();
    if (spec_.kind == Kind::kBackup) {
      EXPECT_LT(reported, Needed(c)) << "clock " << c << " held back";
      return;
    }
    bool all = reported > 0;
    for (const auto& [w, clock] : admitted_) {
      if (clock == c && !Reported(c, w)) all = false;
    }
    EXPECT_FALSE(all) << "clock " << c
                      << " complete but not committed at t=" << now_s;
  }

  int64_t committed() const { return committed_; }
  uint64_t commits() const { return commits_; }
  // clock -> worker -> admission / reported compute time.
  const std::map<int64_t, std::map<uint32_t, AdmissionDecision>>& admissions()
      const {
    return admissions_;
  }
  const std::map<int64_t, std::map<uint32_t, double>>& compute_s() const {
    return compute_s_;
  }

 private:
  bool barrier() const {
    return spec_.kind != Kind::kSsp && spec_.kind != Kind::kAsp;
  }

  // Whether a live worker was admitted to `clock`.
  bool UnderWay(int64_t clock) const {
    for (const auto& [w, c] : admitted_) {
      if (c == clock) return true;
    }
    return false;
  }

  int64_t MinCompleted() const {
    int64_t min = INT64_MAX;
    for (const auto& [w, c] : completed_) min = std::min(min, c);
    return min;
  }

  bool Reported(int64_t clock, uint32_t w) const {
    auto it = reporters_.find(clock);
    return it != reporters_.end() &&
           std::find(it->second.begin(), it->second.end(), w) !=
               it->second.end();
  }

  size_t Needed(int64_t clock) const {
    size_t n = 0;
    for (const auto& [w, joined] : joined_) n += joined <= clock ? 1 : 0;
    return n > spec_.backups ? n - spec_.backups : 1;
  }

  QuotaBounds BoundsOf(uint32_t w) const {
    const WorkerCaps& caps = scenario_.workers[w].caps;
    QuotaBounds b;
    b.min = std::max(spec_.lbbsp.min_batch, caps.min_batch);
    if (spec_.lbbsp.max_batch != 0) b.max = spec_.lbbsp.max_batch;
    if (caps.max_batch != 0) b.max = std::min(b.max, caps.max_batch);
    return b;
  }

  void CheckCommits(const std::vector<CommitDecision>& commits,
                    const std::string& when) {
    if (!barrier()) {
      EXPECT_TRUE(commits.empty()) << policy_->name() << " committed " << when;
      return;
    }
    for (const CommitDecision& d : commits) {
      SCOPED_TRACE("commit of clock " + std::to_string(d.clock) + " " + when);
      ASSERT_EQ(d.clock, committed_ + 1) << "commits skip or repeat a clock";
      std::vector<uint32_t> expected = reporters_[d.clock];
      if (spec_.kind == Kind::kBackup) {
        ASSERT_EQ(expected.size(), Needed(d.clock)) << "not the first N-B";
      } else {
        for (const auto& [w, clock] : admitted_) {
          EXPECT_FALSE(clock == d.clock && !Reported(d.clock, w))
              << "committed before live w" << w << " reported";
        }
      }
      std::sort(expected.begin(), expected.end());
      EXPECT_EQ(d.workers, expected);
      CheckQuotas(d.clock);
      committed_ = d.clock;
      ++commits_;
      reporters_.erase(d.clock);
    }
  }

  // No slice of `d.clock` that another worker was admitted to overlaps
  // w's, and w's lies within the global batch.
  void CheckSlice(uint32_t w, const AdmissionDecision& d) {
    EXPECT_LE(d.batch_offset + d.batch, global_batch_)
        << "w" << w << " clock " << d.clock << " reads past X";
    for (const auto& [other, o] : admissions_[d.clock]) {
      if (other == w) continue;
      EXPECT_TRUE(d.batch_offset >= o.batch_offset + o.batch ||
                  o.batch_offset >= d.batch_offset + d.batch)
          << "clock " << d.clock << ": w" << w << " gets [" << d.batch_offset
          << ", " << d.batch_offset + d.batch << "), w" << other << " had ["
          << o.batch_offset << ", " << o.batch_offset + o.batch << ")";
    }
  }

  // LB-BSP: the quotas of `clock` sum to X. All: offsets tile the batch
  // when membership was stable during the clock.
  // (When the workers' bounds cannot hold X, the nearest sum they can.)
  void CheckQuotas(int64_t clock) {
    uint64_t sum = 0;
    uint64_t min_sum = 0;
    uint64_t max_sum = 0;
    for (const auto& [w, d] : admissions_[clock]) {
      if (changed_clocks_.count(clock) == 0) {
        EXPECT_EQ(d.batch_offset, sum) << "offset of w" << w;
      }
      sum += d.batch;
      min_sum += BoundsOf(w).min;
      max_sum += BoundsOf(w).max;
    }
    if (spec_.kind == Kind::kLbBsp) {
      EXPECT_EQ(sum, std::clamp(global_batch_, min_sum, max_sum))
          << "quotas of clock " << clock << " (X = " << global_batch_ << ")";
    }
  }

  void CheckDrops() {
    const auto metrics = policy_->Metrics();
    EXPECT_EQ(metrics.at("lockstep_dropped_pushes_total"), late_total_);
    for (const auto& [w, count] : late_) {
      EXPECT_EQ(metrics.at("lockstep_worker_dropped_pushes_total{worker=\"" +
                           std::to_string(w) + "\"}"),
                count);
    }
  }

  const SyncPolicy* policy_;
  RefereeSpec spec_;
  SimScenario scenario_;
  uint64_t global_batch_;
  std::map<uint32_t, int64_t> joined_;     // live workers: join clock
  std::map<uint32_t, int64_t> completed_;  // live workers
  std::map<uint32_t, int64_t> admitted_;   // live workers: last admission
  std::map<int64_t, std::vector<uint32_t>> reporters_;  // live, in order
  std::set<int64_t> changed_clocks_;  // membership changed during these
  std::map<int64_t, std::set<uint32_t>> members_;  // expected per clock
  std::map<uint32_t, uint64_t> late_;
  uint64_t late_total_ = 0;
  int64_t committed_ = -1;
  uint64_t commits_ = 0;
  std::map<int64_t, std::map<uint32_t, AdmissionDecision>> admissions_;
  std::map<int64_t, std::map<uint32_t, double>> compute_s_;
};

}  // namespace sim
}  // namespace lockstep

#endif  // LOCKSTEP_TESTS_SYNC_POLICIES_POLICY_REFEREE_H_

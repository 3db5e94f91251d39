// A discrete-event simulator with a fake clock that drives any SyncPolicy
// the way the coordinator does, for the conformance suite. Each worker
// loops: ask admission -> (if granted) compute for its cost model's time
// -> report the clock -> ask for the next one. Deferred requests are asked
// again after every event. Scripted membership events make workers leave
// (their in-flight clock never reports) and re-join (OnWorkerJoined with
// the policy's CurrentClock(), then Admit(w, 0)). The run ends when every
// live worker has been admitted to a clock >= the scenario's `clocks`; a
// watchdog fails it when no event is left or nothing progresses.
// Thread-safety: not thread-safe; one simulator per test.
#ifndef LOCKSTEP_TESTS_SYNC_POLICIES_POLICY_SIMULATOR_H_
#define LOCKSTEP_TESTS_SYNC_POLICIES_POLICY_SIMULATOR_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <queue>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "sync_policies/sync_policy.h"

namespace lockstep {
namespace sim {

// A worker's cost model: fixed_s + per_sample_s * x for a batch of x (CPU),
// or max(saturation_s, per_sample_s * x) when saturation_s > 0 (GPU), times
// a seeded factor uniform in [1 - jitter, 1 + jitter].
struct SimWorker {
  double fixed_s = 0.005;
  double per_sample_s = 0.0005;
  double saturation_s = 0;
  double jitter = 0;
  WorkerCaps caps;

  double NominalSeconds(uint32_t batch) const {
    const double work = per_sample_s * batch;
    return saturation_s > 0 ? std::max(saturation_s, work) : fixed_s + work;
  }
};

struct MembershipEvent {
  enum class Kind { kLeave, kJoin };
  Kind kind = Kind::kLeave;
  uint32_t worker = 0;
  double time_s = 0;
};

struct SimScenario {
  std::string name;
  std::vector<SimWorker> workers;
  std::vector<uint32_t> batches = {64};  // the job's configured batches
  std::vector<MembershipEvent> membership;
  int64_t clocks = 60;  // K: the run ends once all are admitted to >= K
  uint64_t seed = 1;    // for jitter
};

// Told about every policy call and its answer; checks belong here (gtest
// assertions). All hooks default to doing nothing.
class SimObserver {
 public:
  virtual ~SimObserver() = default;
  virtual void OnJoin(uint32_t /*worker*/, int64_t /*clock*/) {}
  virtual void OnLeave(uint32_t /*worker*/,
                       const std::vector<CommitDecision>& /*commits*/) {}
  virtual void OnAdmit(uint32_t /*worker*/, int64_t /*asked*/,
                       const AdmissionDecision& /*decision*/) {}
  virtual void OnDefer(uint32_t /*worker*/, int64_t /*asked*/) {}
  virtual void OnReport(const ClockReport& /*report*/,
                        const std::vector<CommitDecision>& /*commits*/) {}
  // After each event and the admissions it allowed.
  virtual void AfterEvent(double /*now_s*/) {}
};

class PolicySimulator {
 public:
  // Events without a grant or a commit before the watchdog fires.
  static constexpr uint64_t kNoProgressEvents = 10000;
  static constexpr uint64_t kMaxEvents = 2000000;

  // Does not own `policy` or `observer` (may be null); both outlive Run().
  PolicySimulator(SyncPolicy* policy, SimScenario scenario,
                  SimObserver* observer)
      : policy_(policy),
        scenario_(std::move(scenario)),
        observer_(observer != nullptr ? observer : &no_observer_),
        rng_(scenario_.seed),
        workers_(scenario_.workers.size()) {}

  // Runs the scenario to its end. Fails on a deadlock (nothing left to
  // happen while workers wait), on no progress, or as soon as an observer
  // check failed.
  ::testing::AssertionResult Run() {
    for (uint32_t w = 0; w < workers_.size(); ++w) Join(w);
    for (const MembershipEvent& m : scenario_.membership) {
      Push(m.time_s, m.kind == MembershipEvent::Kind::kLeave ? kLeave : kJoin,
           m.worker);
    }
    AdmitPending();
    observer_->AfterEvent(now_);
    while (!Done()) {
      if (::testing::Test::HasFailure()) return Fail("a check failed");
      if (queue_.empty()) return Fail("deadlock: no event left");
      if (++events_ > kMaxEvents) return Fail("too many events");
      if (events_ - progress_at_ > kNoProgressEvents) {
        return Fail("no progress");
      }
      const Event event = queue_.top();
      queue_.pop();
      now_ = event.time_s;
      Handle(event);
      AdmitPending();
      observer_->AfterEvent(now_);
    }
    if (::testing::Test::HasFailure()) return Fail("a check failed");
    return ::testing::AssertionSuccess();
  }

  double now_s() const { return now_; }
  uint64_t events() const { return events_; }
  const SimScenario& scenario() const { return scenario_; }

 private:
  enum Kind { kFinish, kLeave, kJoin };
  struct Event {
    double time_s = 0;
    uint64_t seq = 0;
    Kind kind = kFinish;
    uint32_t worker = 0;
    uint64_t generation = 0;
    ClockReport report;
    bool operator>(const Event& o) const {
      return time_s != o.time_s ? time_s > o.time_s : seq > o.seq;
    }
  };
  struct WorkerState {
    bool live = false;
    bool finished = false;
    std::optional<int64_t> pending;  // the clock it asks for
    uint64_t generation = 0;         // bumps on leave: cancels its clock
  };

  void Push(double time_s, Kind kind, uint32_t worker,
            ClockReport report = {}) {
    Event e;
    e.time_s = time_s;
    e.seq = seq_++;
    e.kind = kind;
    e.worker = worker;
    e.generation = workers_[worker].generation;
    e.report = report;
    queue_.push(e);
  }

  void Join(uint32_t w) {
    WorkerState& s = workers_[w];
    if (s.live) return;
    s.live = true;
    s.finished = false;
    const int64_t clock = policy_->CurrentClock();
    policy_->OnWorkerJoined(w, clock, scenario_.workers[w].caps);
    observer_->OnJoin(w, clock);
    s.pending = 0;
  }

  void Leave(uint32_t w) {
    WorkerState& s = workers_[w];
    if (!s.live) return;
    s.live = false;
    s.pending.reset();
    ++s.generation;
    const auto commits = policy_->OnWorkerLeft(w);
    if (!commits.empty()) progress_at_ = events_;
    observer_->OnLeave(w, commits);
  }

  void Handle(const Event& e) {
    if (e.kind == kLeave) return Leave(e.worker);
    if (e.kind == kJoin) return Join(e.worker);
    WorkerState& s = workers_[e.worker];
    if (!s.live || e.generation != s.generation) return;  // it died
    const auto commits = policy_->OnClockDone(e.report);
    if (!commits.empty()) progress_at_ = events_;
    observer_->OnReport(e.report, commits);
    s.pending = e.report.clock + 1;
  }

  // Asks for every outstanding request, in rank order, until a pass
  // grants nothing.
  void AdmitPending() {
    for (bool granted = true; granted;) {
      granted = false;
      for (uint32_t w = 0; w < workers_.size(); ++w) {
        WorkerState& s = workers_[w];
        if (!s.live || !s.pending.has_value()) continue;
        const int64_t asked = *s.pending;
        const auto decision = policy_->Admit(w, asked);
        if (!decision.has_value()) {
          observer_->OnDefer(w, asked);
          continue;
        }
        granted = true;
        progress_at_ = events_;
        s.pending.reset();
        observer_->OnAdmit(w, asked, *decision);
        if (decision->clock >= scenario_.clocks) {
          s.finished = true;
          continue;
        }
        Start(w, *decision);
      }
    }
  }

  void Start(uint32_t w, const AdmissionDecision& d) {
    const SimWorker& cost = scenario_.workers[w];
    const double unit = static_cast<double>(rng_() >> 11) * 0x1.0p-53;
    ClockReport report;
    report.worker = w;
    report.clock = d.clock;
    report.batch = d.batch;
    report.compute_s =
        cost.NominalSeconds(d.batch) * (1 + cost.jitter * (2 * unit - 1));
    Push(now_ + report.compute_s, kFinish, w, report);
  }

  bool Done() const {
    bool any = false;
    // A worker that joined while the last clock was under way waits for
    // the next, which the job never runs: it is finished too (the
    // coordinator tells it so).
    const bool ended = policy_->CurrentClock() >= scenario_.clocks;
    for (const WorkerState& s : workers_) {
      if (s.live && !s.finished && !(ended && s.pending.has_value())) {
        return false;
      }
      any = any || s.live;
    }
    return any;
  }

  ::testing::AssertionResult Fail(const std::string& why) const {
    std::ostringstream out;
    out << scenario_.name << ": " << why << " at t=" << now_ << "s after "
        << events_ << " events; waiting:";
    for (uint32_t w = 0; w < workers_.size(); ++w) {
      const WorkerState& s = workers_[w];
      if (s.live && s.pending.has_value()) {
        out << " w" << w << "@" << *s.pending;
      }
    }
    out << "; policy clock " << policy_->CurrentClock();
    return ::testing::AssertionFailure() << out.str();
  }

  SyncPolicy* policy_;
  SimScenario scenario_;
  SimObserver no_observer_;
  SimObserver* observer_;
  std::mt19937_64 rng_;
  std::vector<WorkerState> workers_;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> queue_;
  double now_ = 0;
  uint64_t seq_ = 0;
  uint64_t events_ = 0;
  uint64_t progress_at_ = 0;
};

// The scripted scenarios (d: batches may be equal or not in any of them).
// Per-sample costs 1:1:2:4 with a small fixed cost per clock.
inline std::vector<SimWorker> UnevenWorkers() {
  std::vector<SimWorker> workers(4);
  const double ratio[] = {1, 1, 2, 4};
  for (size_t w = 0; w < workers.size(); ++w) {
    workers[w].per_sample_s = 0.0005 * ratio[w];
  }
  return workers;
}

// (a) Uneven static speeds, equal configured batches.
inline SimScenario UnevenSpeedsScenario() {
  SimScenario s;
  s.name = "uneven-speeds";
  s.workers = UnevenWorkers();
  s.batches = {64};
  s.clocks = 120;
  return s;
}

// (b) Worker 2 dies mid-run; its in-flight clock never reports.
inline SimScenario WorkerDiesScenario() {
  SimScenario s = UnevenSpeedsScenario();
  s.name = "worker-dies";
  s.clocks = 60;
  s.membership = {{MembershipEvent::Kind::kLeave, 2, 2.0137}};
  return s;
}

// (c) Worker 1 dies, then re-joins at the current clock.
inline SimScenario WorkerRejoinsScenario() {
  SimScenario s = UnevenSpeedsScenario();
  s.name = "worker-rejoins";
  s.clocks = 60;
  s.membership = {{MembershipEvent::Kind::kLeave, 1, 1.0051},
                  {MembershipEvent::Kind::kJoin, 1, 2.0203}};
  return s;
}

// (c) The fast worker 0 drops out for 10 ms at a time, often right after
// reporting a clock that is not committed yet: it must report it again.
inline SimScenario QuickRejoinsScenario() {
  SimScenario s = UnevenSpeedsScenario();
  s.name = "quick-rejoins";
  s.clocks = 60;
  for (double t : {0.31, 0.73, 1.17, 1.59, 2.03, 2.41}) {
    s.membership.push_back({MembershipEvent::Kind::kLeave, 0, t});
    s.membership.push_back({MembershipEvent::Kind::kJoin, 0, t + 0.01});
  }
  return s;
}

// (b, c) Every worker dies mid-clock; they come back one by one.
inline SimScenario TotalOutageScenario() {
  SimScenario s = UnevenSpeedsScenario();
  s.name = "total-outage";
  s.clocks = 60;
  for (uint32_t w = 0; w < 4; ++w) {
    s.membership.push_back({MembershipEvent::Kind::kLeave, w, 1.0 + 0.001 * w});
    s.membership.push_back({MembershipEvent::Kind::kJoin, w, 1.5 + 0.02 * w});
  }
  return s;
}

// (d) Equal speeds and batches.
inline SimScenario EqualBatchesScenario() {
  SimScenario s;
  s.name = "equal-batches";
  s.workers.assign(4, SimWorker{});
  s.batches = {32};
  s.clocks = 60;
  return s;
}

// (d) Unequal configured batches on uneven speeds.
inline SimScenario UnequalBatchesScenario() {
  SimScenario s = UnevenSpeedsScenario();
  s.name = "unequal-batches";
  s.batches = {16, 32, 48, 64};
  s.clocks = 60;
  return s;
}

// GPU-like workers (flat below saturation) with per-worker batch caps
// that bind during a fast approach but allow the balanced split.
inline SimScenario GpuCapsScenario() {
  SimScenario s = UnevenSpeedsScenario();
  s.name = "gpu-caps";
  for (SimWorker& w : s.workers) w.saturation_s = 0.012;
  s.workers[0].caps.max_batch = 100;
  s.workers[1].caps.max_batch = 100;
  s.workers[3].caps.min_batch = 8;
  s.clocks = 150;
  return s;
}

// Noisy compute times and seeded random departures and re-joins.
inline SimScenario RandomChurnScenario(uint64_t seed) {
  SimScenario s = UnevenSpeedsScenario();
  s.name = "random-churn";
  s.seed = seed;
  s.clocks = 80;
  std::mt19937_64 rng(seed);
  for (SimWorker& w : s.workers) w.jitter = 0.3;
  double t = 0;
  for (int i = 0; i < 4; ++i) {
    const auto w = static_cast<uint32_t>(rng() % s.workers.size());
    t += 0.3 + static_cast<double>(rng() % 1000) / 1000.0;
    s.membership.push_back({MembershipEvent::Kind::kLeave, w, t});
    t += static_cast<double>(rng() % 1000) / 1000.0;
    s.membership.push_back({MembershipEvent::Kind::kJoin, w, t});
  }
  return s;
}

}  // namespace sim
}  // namespace lockstep

#endif  // LOCKSTEP_TESTS_SYNC_POLICIES_POLICY_SIMULATOR_H_

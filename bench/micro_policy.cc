// Micro-benchmark of a sync policy's decision work per clock: one
// iteration is one full clock of range(0) workers — Admit for every worker,
// then OnClockDone for every worker with plausible timings — as the
// coordinator's event loop feeds it. items = clocks; us_per_clock is the
// policy's decision overhead per clock (LB-BSP's predictor training and
// quota split included), to compare with a clock's compute time.
//
// Workers run at four speeds (1x, 1.5x, 2x, 2.5x of 1000 samples/s) with a
// few percent of deterministic noise, report in order of finishing, and
// take the batch the policy admitted them with, so LB-BSP's quotas and
// backup's late reports behave as in a heterogeneous job.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/job_config.h"
#include "sync_policies/policy_registry.h"
#include "sync_policies/sync_policy.h"

namespace lockstep {
namespace {

constexpr uint32_t kBatch = 32;
// Clocks run before timing: past NARX's warm-up and a full replay window.
constexpr int kWarmupClocks = 64;

double SpeedOf(uint32_t worker) { return 1000.0 * (1.0 + 0.5 * (worker % 4)); }

// Drives one policy through whole clocks.
class ClockDriver {
 public:
  ClockDriver(SyncPolicy* policy, uint32_t workers)
      : policy_(policy), workers_(workers), batches_(workers, kBatch) {
    for (uint32_t w = 0; w < workers; ++w) policy->OnWorkerJoined(w, 0, {});
    // Fastest first: speeds repeat every 4 ranks, 3 is the fastest.
    for (uint32_t residue = 4; residue-- > 0;) {
      for (uint32_t w = residue; w < workers; w += 4) order_.push_back(w);
    }
  }

  // Runs one clock; false if the policy deferred an admission (a sequence
  // this driver does not expect).
  bool RunClock() {
    for (uint32_t w = 0; w < workers_; ++w) {
      std::optional<AdmissionDecision> d = policy_->Admit(w, clock_);
      if (!d.has_value()) return false;
      batches_[w] = d->batch;
    }
    for (uint32_t w : order_) {
      commits_ += policy_->OnClockDone(ReportOf(w)).size();
    }
    ++clock_;
    return true;
  }

  uint64_t commits() const { return commits_; }

 private:
  ClockReport ReportOf(uint32_t w) {
    // A cheap deterministic noise in [-0.04, 0.04).
    noise_ = noise_ * 6364136223846793005ULL + 1442695040888963407ULL;
    const double jitter = static_cast<double>(noise_ >> 40) / (1 << 24);
    ClockReport r;
    r.worker = w;
    r.clock = clock_;
    r.batch = batches_[w];
    r.compute_s = batches_[w] / SpeedOf(w) * (0.96 + 0.08 * jitter);
    r.push_s = 0.002;
    r.pull_s = 0.002;
    r.loss = 0.5;
    r.cpu_available = 0.9 + 0.1 * jitter;
    r.mem_available = 0.8;
    return r;
  }

  SyncPolicy* policy_;
  uint32_t workers_;
  std::vector<uint32_t> batches_;
  std::vector<uint32_t> order_;
  int64_t clock_ = 0;
  uint64_t commits_ = 0;
  uint64_t noise_ = 12345;
};

void BM_PolicyDecisionPerClock(benchmark::State& state, const char* spec) {
  JobConfig config;
  config.sync = spec;
  config.workers = static_cast<uint32_t>(state.range(0));
  config.batches = {kBatch};
  config.seed = 1;
  auto policy = CreateSyncPolicy(config);
  if (!policy.ok()) {
    state.SkipWithError(policy.status().message().c_str());
    return;
  }
  ClockDriver driver(policy->get(), config.workers);
  for (int c = 0; c < kWarmupClocks; ++c) {
    if (!driver.RunClock()) {
      state.SkipWithError("policy deferred an admission during warm-up");
      return;
    }
  }
  const uint64_t warmup_commits = driver.commits();
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    if (!driver.RunClock()) {
      state.SkipWithError("policy deferred an admission");
      return;
    }
  }
  const std::chrono::duration<double, std::micro> elapsed =
      std::chrono::steady_clock::now() - start;
  state.SetItemsProcessed(state.iterations());
  // Wall time, as the coordinator's event loop experiences it.
  state.counters["us_per_clock"] =
      elapsed.count() / static_cast<double>(state.iterations());
  state.counters["commits_per_clock"] =
      benchmark::Counter(static_cast<double>(driver.commits() - warmup_commits),
                         benchmark::Counter::kAvgIterations);
}

int RegisterPolicyBenchmarks() {
  for (const char* spec : {"bsp", "ssp:3", "asp", "backup:1",
                           "lbbsp:analytical:narx", "lbbsp:numerical"}) {
    const std::string name = std::string("BM_PolicyDecisionPerClock/") + spec;
    benchmark::RegisterBenchmark(name.c_str(), BM_PolicyDecisionPerClock, spec)
        ->RangeMultiplier(2)
        ->Range(4, 64)
        ->ArgName("workers");
  }
  return 0;
}
[[maybe_unused]] const int kPolicyBenchmarks = RegisterPolicyBenchmarks();

}  // namespace
}  // namespace lockstep

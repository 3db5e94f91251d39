#include "worker/emulation/worker_emulation.h"

#include <gtest/gtest.h>

#include <atomic>

#include "common/clock.h"

namespace lockstep {
namespace {

TEST(WorkerEmulationTest, WithoutAProfileNothingIsAddedOrChanged) {
  auto e = WorkerEmulation::Create("", "", nullptr);
  ASSERT_TRUE(e.ok());
  ASSERT_TRUE(e->Join(1, 0, "tcp://127.0.0.1:1").ok());
  EXPECT_EQ(e->max_batch(), 0u);
  EXPECT_TRUE(e->StartClock(3).ok());
  const double start = NowSeconds();
  const WorkerEmulation::ComputeReading reading =
      e->FinishCompute(0, 32, 0.01, 0.7);
  EXPECT_DOUBLE_EQ(reading.cpu_available, 0.7);
  EXPECT_FALSE(reading.compute_s.has_value());  // the measured time stands
  EXPECT_DOUBLE_EQ(e->FinishCompute(0, 32, 0.01, 1.5).cpu_available,
                   1.0);  // clamped
  e->LinkWait(0, 1 << 20);
  EXPECT_LT(NowSeconds() - start, 0.05);
}

TEST(WorkerEmulationTest, ASlowerWorkerWaitsOutTheDifference) {
  // x4: a clock takes 4x its real compute time.
  auto e = WorkerEmulation::Create("x4", "", nullptr);
  ASSERT_TRUE(e.ok());
  ASSERT_TRUE(e->Join(1, 0, "tcp://127.0.0.1:1").ok());
  const double start = NowSeconds();
  const WorkerEmulation::ComputeReading reading =
      e->FinishCompute(0, 32, 0.02, 1.0);
  const double cpu = reading.cpu_available;
  const double waited = NowSeconds() - start;
  EXPECT_GE(waited, 0.05);  // 4 x 0.02 - 0.02 = 0.06 s
  EXPECT_LT(waited, 1.0);
  // No cost model: the time is the real one scaled, measured.
  EXPECT_FALSE(reading.compute_s.has_value());
  // The reading is the process's share times the profile's own.
  auto profile = HeteroProfile::Parse("x4", 1 * 1000003 + 0, 1);
  ASSERT_TRUE(profile.ok());
  EXPECT_DOUBLE_EQ(cpu, profile->cpu_available(0));
}

// Under a cost model the clock reports the model's time, not the sleep's
// (whose overshoot would make LB-BSP's quotas differ between two runs of
// one job); a compute that overran the model reports nothing modeled.
TEST(WorkerEmulationTest, ACostModelReportsTheModelsComputeTime) {
  auto e = WorkerEmulation::Create("linear=0.004+0.0005", "", nullptr);
  ASSERT_TRUE(e.ok());
  ASSERT_TRUE(e->Join(1, 0, "tcp://127.0.0.1:1").ok());
  const double start = NowSeconds();
  const WorkerEmulation::ComputeReading fit =
      e->FinishCompute(0, 12, 0.001, 1.0);
  EXPECT_GE(NowSeconds() - start, 0.009);  // 0.004 + 12 x 0.0005 - 0.001
  ASSERT_TRUE(fit.compute_s.has_value());
  EXPECT_EQ(*fit.compute_s, 0.004 + 12 * 0.0005);
  EXPECT_FALSE(e->FinishCompute(0, 12, 0.5, 1.0).compute_s.has_value());
}

TEST(WorkerEmulationTest, AStopEndsAnEmulatedWaitAtOnce) {
  std::atomic<bool> stop{true};
  auto e = WorkerEmulation::Create("x100", "", &stop);
  ASSERT_TRUE(e.ok());
  const double start = NowSeconds();
  e->FinishCompute(0, 32, 1.0, 1.0);  // would wait 99 s
  EXPECT_LT(NowSeconds() - start, 0.5);
}

TEST(WorkerEmulationTest, ABadProfileOrLinkSpecIsRefusedAtCreate) {
  EXPECT_FALSE(WorkerEmulation::Create("cpu=2", "", nullptr).ok());
  EXPECT_FALSE(WorkerEmulation::Create("", "nonsense", nullptr).ok());
}

}  // namespace
}  // namespace lockstep

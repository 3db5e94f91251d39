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
  EXPECT_DOUBLE_EQ(e->FinishCompute(0, 32, 0.01, 0.7), 0.7);
  EXPECT_DOUBLE_EQ(e->FinishCompute(0, 32, 0.01, 1.5), 1.0);  // clamped
  e->LinkWait(0, 1 << 20);
  EXPECT_LT(NowSeconds() - start, 0.05);
}

TEST(WorkerEmulationTest, ASlowerWorkerWaitsOutTheDifference) {
  // x4: a clock takes 4x its real compute time.
  auto e = WorkerEmulation::Create("x4", "", nullptr);
  ASSERT_TRUE(e.ok());
  ASSERT_TRUE(e->Join(1, 0, "tcp://127.0.0.1:1").ok());
  const double start = NowSeconds();
  const double cpu = e->FinishCompute(0, 32, 0.02, 1.0);
  const double waited = NowSeconds() - start;
  EXPECT_GE(waited, 0.05);  // 4 x 0.02 - 0.02 = 0.06 s
  EXPECT_LT(waited, 1.0);
  // The reading is the process's share times the profile's own.
  auto profile = HeteroProfile::Parse("x4", 1 * 1000003 + 0, 1);
  ASSERT_TRUE(profile.ok());
  EXPECT_DOUBLE_EQ(cpu, profile->cpu_available(0));
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

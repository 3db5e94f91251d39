#include "tools/experiment/event_metrics.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "tests/support/temp_dir.h"

namespace lockstep {
namespace {

class EventMetricsTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_FALSE(dir_.empty()); }

  // Two workers, clocks [0, clocks). Before clock 100: 50 / 50 samples,
  // busy 5 / 10 ms. At 100 worker 0 slows to 20 ms; from clock 105 the
  // batches are 30 / 70 and both are busy 10 ms.
  void Write(int clocks) {
    std::ofstream out(dir_ + "/metrics.jsonl");
    for (int c = 0; c < clocks; ++c) {
      const bool moved = c >= 105;
      const double busy0 = c < 100 ? 0.005 : (moved ? 0.010 : 0.020);
      out << "{\"worker\":0,\"clock\":" << c
          << ",\"batch\":" << (moved ? 30 : 50)
          << ",\"compute_s\":" << busy0 - 0.001
          << ",\"push_s\":0.0005,\"pull_s\":0.0005}\n";
      out << "{\"worker\":1,\"clock\":" << c
          << ",\"batch\":" << (moved ? 70 : 50)
          << ",\"compute_s\":0.009,\"push_s\":0.0005,\"pull_s\":0.0005,"
             "\"wait_s\":0.5}\n";
    }
  }

  TempDir tmp_{"lockstep-event"};
  const std::string dir_ = tmp_.path();
};

TEST_F(EventMetricsTest, MeasuresTheClockTimesAndTheRebalanceAroundTheEvent) {
  Write(200);
  auto m = ReadEventMetrics(dir_, 100);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_NEAR(m->before_ms, 10, 1e-9);
  // Clocks 100-104 take 20 ms, 105-109 10 ms.
  EXPECT_NEAR(m->right_after_ms, 15, 1e-9);
  EXPECT_NEAR(m->settled_ms, 10, 1e-9);
  EXPECT_EQ(m->rebalance_clocks, 5);
  // The 5-clock medians around clocks 100..104 are 20 ms, from 105 on
  // 10 ms, the settled time.
  EXPECT_EQ(m->settle_clocks, 5);
  EXPECT_NEAR(m->gap_before, 0.5, 1e-9);
  EXPECT_NEAR(m->gap_settled, 0, 1e-9);
  EXPECT_EQ(m->batches_before, (std::vector<double>{50, 50}));
  EXPECT_EQ(m->batches_settled, (std::vector<double>{30, 70}));
}

TEST_F(EventMetricsTest, NeedsClocksOnBothSidesOfTheEvent) {
  Write(140);
  auto m = ReadEventMetrics(dir_, 100);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("too few clocks around clock 100"),
            std::string::npos);
  EXPECT_FALSE(ReadEventMetrics(dir_ + "/none", 100).ok());
}

}  // namespace
}  // namespace lockstep

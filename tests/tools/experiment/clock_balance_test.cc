// The balance of a run's barrier clocks: clock-time MAPE at the assigned
// quota, the same for the last-value rule on the same run, and barrier idle
// against the oracle split that knows each clock's true speeds.
#include "tools/experiment/clock_balance.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace lockstep {
namespace {

ClockLine Line(uint32_t worker, int64_t clock, uint32_t batch, double compute,
               std::optional<double> predicted = std::nullopt,
               double comm = 0) {
  ClockLine line;
  line.worker = worker;
  line.clock = clock;
  line.batch = batch;
  line.compute_s = compute;
  line.push_s = comm / 2;
  line.pull_s = comm / 2;
  line.predicted_compute_s = predicted;
  return line;
}

TEST(ClockBalanceTest, IdleAndClockTimeAgainstTheOracleSplit) {
  // w0: 60 samples in 0.6 s (100/s), w1: 40 in 0.2 s (200/s). The clock
  // lasts 0.6 s and w1 idles 0.4 s of 1.2. The oracle gives 100 samples
  // as 33 and 67: 0.33 s and 0.335 s.
  const ClockBalance b =
      ComputeClockBalance({Line(0, 0, 60, 0.6), Line(1, 0, 40, 0.2)});
  EXPECT_EQ(b.clocks, 1);
  EXPECT_DOUBLE_EQ(b.idle_share, 0.4 / 1.2);
  EXPECT_NEAR(b.oracle_idle_share, 0.005 / 0.67, 1e-12);
  EXPECT_NEAR(b.clock_time_ratio, 0.6 / 0.335, 1e-12);
  EXPECT_FALSE(b.predicted_time_mape.has_value()) << "no predictions";
  EXPECT_FALSE(b.last_value_time_mape.has_value()) << "no clock before";
}

TEST(ClockBalanceTest, TheOracleBalancesCommunicationToo) {
  // Equal speeds (100/s), but w1 spends 0.1 s more on the network: the even
  // split leaves w0 idle for that long; the oracle gives w0 55 samples and
  // w1 45, so both are busy for 0.55 s.
  const ClockBalance b = ComputeClockBalance(
      {Line(0, 0, 50, 0.5, std::nullopt, 0), Line(1, 0, 50, 0.5, {}, 0.1)});
  EXPECT_NEAR(b.idle_share, 0.1 / 1.2, 1e-12);
  EXPECT_NEAR(b.oracle_idle_share, 0, 1e-9);
  EXPECT_NEAR(b.clock_time_ratio, 0.6 / 0.55, 1e-9);
}

TEST(ClockBalanceTest, AWorkerWhoseNetworkOutlastsTheClockGetsOneSample) {
  // w1's push + pull alone (2 s) outlasts what w0 needs for all 100 samples
  // (1 s): the oracle leaves w1 its minimum of one sample.
  const ClockBalance b = ComputeClockBalance(
      {Line(0, 0, 50, 0.5, std::nullopt, 0), Line(1, 0, 50, 0.5, {}, 2.0)});
  EXPECT_NEAR(b.clock_time_ratio, 2.5 / (2.0 + 0.01), 1e-9);
}

TEST(ClockBalanceTest, MapeOfThePredictedClockTimeAndTheLastValueRule) {
  const std::vector<ClockLine> lines = {
      // Clock 0: an equal split, no prediction yet.
      Line(0, 0, 50, 0.5), Line(1, 0, 50, 0.25),
      // Clock 1: predicted 0.4 s (measured 0.5: 20% off) and 0.25 s (exact);
      // the last-value rule says 40 / 200 = 0.2 s for w1 (20% off) and
      // 60 / 100 = 0.6 for w0 (20% off).
      Line(0, 1, 60, 0.5, 0.4), Line(1, 1, 40, 0.25, 0.25),
      // Clock 2: w1's report is missing: left out of everything.
      Line(0, 2, 60, 0.5, 0.5)};
  const ClockBalance b = ComputeClockBalance(lines);
  EXPECT_EQ(b.clocks, 2);
  EXPECT_EQ(b.predictions, 2);
  ASSERT_TRUE(b.predicted_time_mape.has_value());
  EXPECT_NEAR(*b.predicted_time_mape, 0.1, 1e-12);
  ASSERT_TRUE(b.last_value_time_mape.has_value());
  EXPECT_NEAR(*b.last_value_time_mape, 0.2, 1e-12) << "over the same pairs";
  // From clock 1 on, clock 0 is neither counted nor a previous clock.
  const ClockBalance later = ComputeClockBalance(lines, 1);
  EXPECT_EQ(later.clocks, 1);
  EXPECT_NEAR(*later.predicted_time_mape, 0.1, 1e-12);
  EXPECT_FALSE(later.last_value_time_mape.has_value());
}

TEST(ClockBalanceTest, AClockWithoutComputeIsLeftOut) {
  const ClockBalance b =
      ComputeClockBalance({Line(0, 0, 50, 0.5), Line(1, 0, 0, 0),
                           Line(0, 1, 50, 0.5), Line(1, 1, 50, 0.5)});
  EXPECT_EQ(b.clocks, 1);
  EXPECT_DOUBLE_EQ(b.idle_share, 0);
  EXPECT_DOUBLE_EQ(b.clock_time_ratio, 1);
}

TEST(ClockBalanceTest, ReadsMetricsLinesAndNamesADamagedOne) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("clock-balance-" + std::to_string(getpid())))
                               .string();
  std::ofstream(path)
      << R"({"worker":0,"clock":3,"batch":60,"compute_s":0.5,"push_s":0.01,)"
      << R"("pull_s":0.02,"wait_s":0,"predicted_speed":150,)"
      << R"("predicted_compute_s":0.4})"
      << "\n\n"
      << R"({"worker":1,"clock":3,"batch":40,"compute_s":0.25})"
      << "\n";
  StatusOr<std::vector<ClockLine>> lines = ReadClockLines(path);
  ASSERT_TRUE(lines.ok()) << lines.status().ToString();
  ASSERT_EQ(lines->size(), 2u);
  EXPECT_EQ((*lines)[0].clock, 3);
  EXPECT_EQ((*lines)[0].batch, 60u);
  EXPECT_DOUBLE_EQ((*lines)[0].pull_s, 0.02);
  EXPECT_DOUBLE_EQ((*lines)[0].predicted_compute_s.value_or(0), 0.4);
  EXPECT_FALSE((*lines)[1].predicted_compute_s.has_value());
  std::ofstream(path, std::ios::app) << "{\"worker\":\n";
  StatusOr<std::vector<ClockLine>> bad = ReadClockLines(path);
  EXPECT_EQ(bad.status().code(), StatusCode::kCorruption);
  EXPECT_NE(bad.status().message().find(path + ":4"), std::string::npos)
      << bad.status().message();
  std::filesystem::remove(path);
  EXPECT_EQ(ReadClockLines(path).status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace lockstep

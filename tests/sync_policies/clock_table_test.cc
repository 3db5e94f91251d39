#include "sync_policies/clock_table.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace lockstep {
namespace {

using ::testing::ElementsAre;

TEST(ClockTableTest, CompletedIsLastReportedClockPlusOne) {
  ClockTable t;
  t.Join(0, 0);
  EXPECT_EQ(t.Completed(0), 0);
  t.Report(0, 0);
  t.Report(0, 1);
  EXPECT_EQ(t.Completed(0), 2);
  t.Report(0, 0);
  EXPECT_EQ(t.Completed(0), 2) << "an old report never goes back";
}

TEST(ClockTableTest, MinCompletedIsTheSlowestLiveWorker) {
  ClockTable t;
  t.Join(0, 0);
  t.Join(1, 0);
  t.Report(0, 0);
  t.Report(0, 1);
  EXPECT_EQ(t.MinCompleted(), 0);
  t.Leave(1);
  EXPECT_EQ(t.MinCompleted(), 2);
  EXPECT_THAT(t.LiveWorkers(), ElementsAre(0u));
}

TEST(ClockTableTest, EmptyTableKeepsItsFloor) {
  ClockTable t;
  t.Join(0, 0);
  for (int64_t c = 0; c < 4; ++c) t.Report(0, c);
  t.Leave(0);
  EXPECT_EQ(t.MinCompleted(), 4);
  t.Join(1, 0);
  EXPECT_EQ(t.Completed(1), 4) << "raised to the floor";
}

TEST(ClockTableTest, ReportsOfDepartedWorkersAreIgnored) {
  ClockTable t;
  t.Join(0, 0);
  t.Report(3, 5);
  EXPECT_FALSE(t.IsLive(3));
  EXPECT_EQ(t.live_count(), 1u);
}

TEST(ClockTableTest, GapIsHowFarAdmissionsRunAheadOfTheSlowest) {
  ClockTable t;
  t.Join(0, 0);
  t.Join(1, 0);
  EXPECT_EQ(t.Gap(), 0);
  t.Admitted(0, 0);
  t.Report(0, 0);
  t.Admitted(0, 1);
  t.Report(0, 1);
  t.Admitted(0, 2);
  EXPECT_EQ(t.Gap(), 2);
  std::map<std::string, double> m;
  t.AddMetrics(&m);
  EXPECT_EQ(m.at("lockstep_clock_gap"), 2);
  EXPECT_EQ(m.at("lockstep_worker_clock{worker=\"0\"}"), 2);
  EXPECT_EQ(m.at("lockstep_min_clock"), 0);
}

}  // namespace
}  // namespace lockstep

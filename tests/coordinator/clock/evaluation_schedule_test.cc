#include "coordinator/clock/evaluation_schedule.h"

#include <gtest/gtest.h>

namespace lockstep {
namespace {

TEST(EvaluationScheduleTest, PointsBecomeDueInOrderWithTheTimeTheyWereReached) {
  EvaluationSchedule schedule(25);
  schedule.Reached(24, 1.0);
  EXPECT_FALSE(schedule.TakeNext().has_value());
  schedule.Reached(25, 2.0);
  schedule.Reached(25, 3.0);  // reported again: due once, reached at 2.0
  ASSERT_EQ(schedule.TakeNext(), 25);
  EXPECT_FALSE(schedule.TakeNext().has_value());
  EXPECT_EQ(schedule.ReachedAt(25), 2.0);
  schedule.Reported(25);
  EXPECT_FALSE(schedule.ReachedAt(25).has_value());
}

TEST(EvaluationScheduleTest, AnEvaluatorFarBehindSkipsTheOldestPoints) {
  EvaluationSchedule schedule(10);
  schedule.Reached(10, 1.0);
  ASSERT_EQ(schedule.TakeNext(), 10);  // being read
  // Training jumps 3 points ahead while the evaluator reads 10: only the
  // newest kMaxWaiting wait (each shard keeps kMaxWaiting + 1 images).
  schedule.Reached(40, 4.0);
  EXPECT_EQ(schedule.waiting(), EvaluationSchedule::kMaxWaiting);
  EXPECT_EQ(schedule.skipped(), 3u - EvaluationSchedule::kMaxWaiting);
  ASSERT_EQ(schedule.TakeNext(), 40);
  EXPECT_FALSE(schedule.ReachedAt(20).has_value());
  EXPECT_EQ(schedule.ReachedAt(10), 1.0);  // still to be reported
}

TEST(EvaluationScheduleTest, ARestartForgetsThePointsOfTheOldTimeline) {
  EvaluationSchedule schedule(10);
  schedule.Reached(30, 3.0);
  schedule.StartAt(17);  // rolled back to the state after clock 16
  EXPECT_FALSE(schedule.TakeNext().has_value());
  schedule.Reached(19, 4.0);
  EXPECT_FALSE(schedule.TakeNext().has_value());
  schedule.Reached(20, 5.0);  // reached again on the new timeline
  ASSERT_EQ(schedule.TakeNext(), 20);
  EXPECT_EQ(schedule.ReachedAt(20), 5.0);
}

TEST(EvaluationScheduleTest, WithoutAnIntervalNothingIsDue) {
  EvaluationSchedule schedule(0);
  schedule.Reached(1000, 1.0);
  EXPECT_FALSE(schedule.TakeNext().has_value());
}

}  // namespace
}  // namespace lockstep

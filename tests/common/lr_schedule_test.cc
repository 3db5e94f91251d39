#include "common/lr_schedule.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace lockstep {
namespace {

using ::testing::HasSubstr;

class LrScheduleTest : public ::testing::Test {
 protected:
  static LrSchedule ParseOk(const std::string& text, double base,
                            int64_t total) {
    auto s = LrSchedule::Parse(text, base, total);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? *s : LrSchedule();
  }
};

TEST_F(LrScheduleTest, ConstKeepsTheBaseRateForever) {
  const LrSchedule s = ParseOk("const", 0.05, 100);
  EXPECT_EQ(s.RateAt(0), 0.05);
  EXPECT_EQ(s.RateAt(99), 0.05);
  EXPECT_EQ(s.RateAt(1000000), 0.05);
}

TEST_F(LrScheduleTest, StepMultipliesByGammaAtEachBoundary) {
  const LrSchedule s = ParseOk("step:10:0.5", 0.8, 100);
  EXPECT_DOUBLE_EQ(s.RateAt(0), 0.8);
  EXPECT_DOUBLE_EQ(s.RateAt(9), 0.8);
  EXPECT_DOUBLE_EQ(s.RateAt(10), 0.4);
  EXPECT_DOUBLE_EQ(s.RateAt(19), 0.4);
  EXPECT_DOUBLE_EQ(s.RateAt(20), 0.2);
  EXPECT_DOUBLE_EQ(s.RateAt(35), 0.1);
}

TEST_F(LrScheduleTest, StepEveryClockWithFractionalGamma) {
  const LrSchedule s = ParseOk("step:1:0.9", 1.0, 0);
  EXPECT_DOUBLE_EQ(s.RateAt(0), 1.0);
  EXPECT_DOUBLE_EQ(s.RateAt(1), 0.9);
  EXPECT_DOUBLE_EQ(s.RateAt(3), 0.9 * 0.9 * 0.9);
}

TEST_F(LrScheduleTest, StepWithGammaOneIsConstant) {
  const LrSchedule s = ParseOk("step:5:1", 0.3, 100);
  EXPECT_EQ(s.RateAt(0), 0.3);
  EXPECT_EQ(s.RateAt(500), 0.3);
}

TEST_F(LrScheduleTest, CosineStartsAtBaseHalvesAtMidpointAndEndsAtZero) {
  const LrSchedule s = ParseOk("cosine", 0.1, 200);
  EXPECT_DOUBLE_EQ(s.RateAt(0), 0.1);
  EXPECT_NEAR(s.RateAt(100), 0.05, 1e-15);
  EXPECT_NEAR(s.RateAt(50), 0.1 * 0.5 * (1 + std::sqrt(0.5)), 1e-15);
  EXPECT_NEAR(s.RateAt(200), 0.0, 1e-15);
  for (int64_t c : {201, 250, 300, 1000}) {
    EXPECT_NEAR(s.RateAt(c), 0.0, 1e-15) << "clock " << c << " is past the end";
  }
}

TEST_F(LrScheduleTest, CosineDecreasesMonotonically) {
  const LrSchedule s = ParseOk("cosine", 1.0, 37);
  for (int64_t c = 1; c <= 37; ++c) {
    EXPECT_LT(s.RateAt(c), s.RateAt(c - 1)) << "clock " << c;
  }
}

TEST_F(LrScheduleTest, CosineWithoutClocksDoesNotDivideByZero) {
  const LrSchedule s = ParseOk("cosine", 0.2, 0);
  EXPECT_DOUBLE_EQ(s.RateAt(0), 0.2);
  EXPECT_NEAR(s.RateAt(1), 0.0, 1e-15);
}

TEST_F(LrScheduleTest, ParseRejectsMalformedSchedules) {
  for (const char* text :
       {"", "Const", "linear", "cosine:10", "step", "step:10",
        "step:10:", "step:0:0.5", "step:-5:0.5", "step:10:0", "step:10:-0.5",
        "step:10:1.5", "step:10:nan", "step:10:inf", "step:10:0.5x",
        "step:10:0.5:3", "step:x:0.5"}) {
    SCOPED_TRACE(std::string("'") + text + "'");
    auto s = LrSchedule::Parse(text, 0.1, 100);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(s.status().message(), HasSubstr("'" + std::string(text) + "'"));
    EXPECT_THAT(s.status().message(), HasSubstr("known: const"));
  }
}

}  // namespace
}  // namespace lockstep

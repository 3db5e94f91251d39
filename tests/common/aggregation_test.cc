#include "common/aggregation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace lockstep {
namespace {

using ::testing::HasSubstr;

TEST(AggregationTest, ParsesTheThreeRules) {
  EXPECT_EQ(Aggregation::Parse("mean")->rule, Aggregation::Rule::kMean);
  EXPECT_FALSE(Aggregation::Parse("mean")->robust());
  EXPECT_EQ(Aggregation::Parse("median")->rule, Aggregation::Rule::kMedian);
  const auto trimmed = Aggregation::Parse("trimmed-mean:0.25");
  ASSERT_TRUE(trimmed.ok());
  EXPECT_EQ(trimmed->rule, Aggregation::Rule::kTrimmedMean);
  EXPECT_DOUBLE_EQ(trimmed->trim, 0.25);
  EXPECT_TRUE(trimmed->robust());
}

TEST(AggregationTest, RefusesAnythingElseNamingTheForms) {
  for (const char* bad :
       {"", "avg", "trimmed-mean", "trimmed-mean:", "trimmed-mean:0",
        "trimmed-mean:0.5", "trimmed-mean:-0.1", "trimmed-mean:0.2x",
        "trimmed-mean:nan", "Median"}) {
    const auto parsed = Aggregation::Parse(bad);
    EXPECT_FALSE(parsed.ok()) << bad;
    EXPECT_THAT(parsed.status().message(),
                HasSubstr("mean, median or trimmed-mean:F"))
        << bad;
  }
}

}  // namespace
}  // namespace lockstep

#include "tools/launch/progress.h"

#include <gtest/gtest.h>

#include <cmath>

namespace lockstep {
namespace {

class ProgressTest : public ::testing::Test {};

TEST_F(ProgressTest, ParsesEveryKnownKey) {
  StatusOr<Progress> p = ParseProgressLine(
      "@progress clock=120 max_clocks=2345 epoch=0.51 samples_per_s=5120.3 "
      "train_loss=0.4123 test_accuracy=0.8123");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->clock, 120);
  EXPECT_EQ(p->max_clocks, 2345);
  EXPECT_DOUBLE_EQ(p->epoch, 0.51);
  EXPECT_DOUBLE_EQ(p->samples_per_s, 5120.3);
  EXPECT_DOUBLE_EQ(p->train_loss, 0.4123);
  EXPECT_DOUBLE_EQ(p->test_accuracy, 0.8123);
}

TEST_F(ProgressTest, NanIsAValidValue) {
  StatusOr<Progress> p =
      ParseProgressLine("@progress clock=1 train_loss=nan test_accuracy=nan");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_TRUE(std::isnan(p->train_loss));
  EXPECT_TRUE(std::isnan(p->test_accuracy));
}

TEST_F(ProgressTest, MissingKeysKeepDefaults) {
  StatusOr<Progress> p = ParseProgressLine("@progress clock=7");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->clock, 7);
  EXPECT_EQ(p->max_clocks, -1);
  EXPECT_TRUE(std::isnan(p->epoch));
  EXPECT_TRUE(std::isnan(p->samples_per_s));
  StatusOr<Progress> bare = ParseProgressLine("@progress");
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->clock, -1);
}

TEST_F(ProgressTest, IgnoresUnknownKeysAndExtraSpaces) {
  StatusOr<Progress> p =
      ParseProgressLine("@progress  clock=3   future_key=xyz  epoch=1.5\r");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->clock, 3);
  EXPECT_DOUBLE_EQ(p->epoch, 1.5);
}

TEST_F(ProgressTest, RejectsGarbage) {
  EXPECT_FALSE(ParseProgressLine("").ok());
  EXPECT_FALSE(ParseProgressLine("progress clock=1").ok());
  EXPECT_FALSE(ParseProgressLine("@progressive clock=1").ok());
  EXPECT_FALSE(ParseProgressLine("@progress clock").ok());
  EXPECT_FALSE(ParseProgressLine("@progress =5").ok());
  EXPECT_FALSE(ParseProgressLine("@progress clock=abc").ok());
  EXPECT_FALSE(ParseProgressLine("@progress clock=1.5").ok());
  EXPECT_FALSE(ParseProgressLine("@progress epoch=0.5x").ok());
  EXPECT_FALSE(ParseProgressLine("@progress epoch=").ok());
}

TEST_F(ProgressTest, FormatsAFullLine) {
  Progress p;
  p.clock = 120;
  p.max_clocks = 2345;
  p.epoch = 0.51;
  p.samples_per_s = 5120.3;
  p.train_loss = 0.4123;
  p.test_accuracy = 0.8123;
  EXPECT_EQ(FormatProgress(p),
            "clock 120/2345  epoch 0.51  5120 samples/s  loss 0.4123  "
            "test acc 0.8123");
}

TEST_F(ProgressTest, FormatsMissingAndNanValues) {
  Progress p;
  p.clock = 5;
  p.train_loss = std::nan("");
  EXPECT_EQ(FormatProgress(p), "clock 5  test acc -");
  p.test_accuracy = -1;
  EXPECT_EQ(FormatProgress(p), "clock 5  test acc -");
  EXPECT_EQ(FormatProgress(Progress()), "test acc -");
}

TEST_F(ProgressTest, StripsTags) {
  EXPECT_EQ(StripTag("@endpoint tcp://127.0.0.1:5555", "@endpoint"),
            "tcp://127.0.0.1:5555");
  EXPECT_EQ(StripTag("@endpoint tcp://h:1 \r", "@endpoint"), "tcp://h:1");
  EXPECT_EQ(StripTag("@endpoint", "@endpoint"), "");
  EXPECT_EQ(StripTag("@endpointx y", "@endpoint"), std::nullopt);
  EXPECT_EQ(StripTag("x @endpoint y", "@endpoint"), std::nullopt);
}

TEST_F(ProgressTest, ExtractsLogLevels) {
  EXPECT_EQ(ParseLogLevel("2024-05-01T12:00:00.123Z INFO role=worker rank=2 "
                          "clock=12 hello"),
            LogLevel::kInfo);
  EXPECT_EQ(ParseLogLevel("T DEBUG role=server x"), LogLevel::kDebug);
  EXPECT_EQ(ParseLogLevel("T WARN role=server x"), LogLevel::kWarning);
  EXPECT_EQ(ParseLogLevel("T WARNING role=server x"), LogLevel::kWarning);
  EXPECT_EQ(ParseLogLevel("T ERROR role=coordinator x"), LogLevel::kError);
  EXPECT_EQ(ParseLogLevel("T FATAL x"), LogLevel::kError);
  EXPECT_EQ(ParseLogLevel("Segmentation fault"), std::nullopt);
  EXPECT_EQ(ParseLogLevel("ERROR"), std::nullopt);
  EXPECT_EQ(ParseLogLevel(""), std::nullopt);
  EXPECT_EQ(ParseLogLevel("T error lowercase"), std::nullopt);
}

TEST_F(ProgressTest, ReadsSummaryFields) {
  const std::string json =
      "{\"policy\":\"ssp:3\",\"clocks\":2345,\"wall_s\":61.25,"
      "\"samples_per_s\":5120.3,\"test_accuracy\":0.8812,"
      "\"time_to_target_s\":null,\"note\":\"a \\\"quoted\\\" word\"}";
  EXPECT_EQ(JsonFieldText(json, "policy"), "ssp:3");
  EXPECT_EQ(JsonFieldText(json, "clocks"), "2345");
  EXPECT_EQ(JsonFieldText(json, "time_to_target_s"), std::nullopt);
  EXPECT_EQ(JsonFieldText(json, "missing"), std::nullopt);
  EXPECT_EQ(JsonFieldText(json, "note"), "a \"quoted\" word");
  EXPECT_EQ(FormatSummary(json),
            "policy ssp:3  clocks 2345  wall 61.2 s  5120 samples/s  "
            "test acc 0.8812");
}

TEST_F(ProgressTest, SummaryWithoutKnownFieldsIsShownVerbatim) {
  EXPECT_EQ(FormatSummary("{\"other\":1}"), "{\"other\":1}");
  EXPECT_EQ(FormatSummary("not json"), "not json");
}

}  // namespace
}  // namespace lockstep

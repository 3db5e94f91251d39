#include "sync_policies/sync_spec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace lockstep {
namespace {

using ::testing::HasSubstr;
using Kind = SyncSpec::Kind;
using Method = LbBspOptions::Method;

SyncSpec Parse(const std::string& text) {
  auto spec = ParseSyncSpec(text);
  EXPECT_TRUE(spec.ok()) << text << ": " << spec.status().ToString();
  return spec.ok() ? *spec : SyncSpec{};
}

TEST(SyncSpecTest, ParsesEachFamilysParameters) {
  EXPECT_EQ(Parse("bsp").kind, Kind::kBsp);
  EXPECT_EQ(Parse("ssp:7").kind, Kind::kSsp);
  EXPECT_EQ(Parse("ssp:7").staleness, 7);
  EXPECT_EQ(Parse("backup:2").kind, Kind::kBackup);
  EXPECT_EQ(Parse("backup:2").backups, 2u);
  const SyncSpec asp = Parse("asp:scale:drop=5");
  EXPECT_EQ(asp.kind, Kind::kAsp);
  EXPECT_TRUE(asp.asp.scale_lr);
  EXPECT_EQ(asp.asp.max_staleness, 5);
  EXPECT_EQ(Parse("asp").asp.max_staleness, -1);
  EXPECT_FALSE(Parse("asp:drop=3").asp.scale_lr);
}

TEST(SyncSpecTest, LbBspDefaultsToAnalyticalNarxWithoutBounds) {
  const SyncSpec spec = Parse("lbbsp");
  EXPECT_EQ(spec.kind, Kind::kLbBsp);
  EXPECT_EQ(spec.lbbsp.method, Method::kAnalytical);
  EXPECT_EQ(spec.lbbsp.predictor, PredictorKind::kNarx);
  EXPECT_EQ(spec.lbbsp.min_batch, 1u);
  EXPECT_EQ(spec.lbbsp.max_batch, 0u);
}

TEST(SyncSpecTest, LbBspParsesMethodPredictorAndBounds) {
  EXPECT_EQ(Parse("lbbsp:analytical:ema").lbbsp.predictor, PredictorKind::kEma);
  EXPECT_EQ(Parse("lbbsp:analytical:last").lbbsp.predictor,
            PredictorKind::kLast);
  EXPECT_EQ(Parse("lbbsp:numerical").lbbsp.method, Method::kNumerical);
  const SyncSpec spec = Parse("lbbsp:numerical:max=256:min=16");
  EXPECT_EQ(spec.lbbsp.min_batch, 16u);
  EXPECT_EQ(spec.lbbsp.max_batch, 256u);
  EXPECT_EQ(Parse("lbbsp:analytical:min=3").lbbsp.predictor,
            PredictorKind::kNarx);
  EXPECT_EQ(Parse("lbbsp:analytical:min=3").lbbsp.min_batch, 3u);
}

TEST(SyncSpecTest, NumbersAreBoundedAndStrict) {
  EXPECT_TRUE(ParseSyncSpec("ssp:" + std::to_string(kMaxSyncSpecNumber)).ok());
  EXPECT_FALSE(
      ParseSyncSpec("ssp:" + std::to_string(kMaxSyncSpecNumber + 1)).ok());
  for (const char* bad : {"ssp:+1", "ssp: 1", "ssp:1 ", "ssp:0x10", "ssp:1.5",
                          "backup:-0", "asp:drop=1e3"}) {
    EXPECT_FALSE(ParseSyncSpec(bad).ok()) << bad;
  }
}

TEST(SyncSpecTest, CheckRejectsMoreBackupsThanWorkersCanCover) {
  const SyncSpec spec = Parse("backup:2");
  EXPECT_TRUE(CheckSyncSpec(spec, "backup:2", 3).ok());
  const Status status = CheckSyncSpec(spec, "backup:2", 2);
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("the job has 2"));
  EXPECT_TRUE(CheckSyncSpec(Parse("ssp:9"), "ssp:9", 1).ok());
}

TEST(SyncSpecTest, FormsListEveryFamily) {
  const auto forms = SyncSpecForms();
  for (const char* form : {"bsp", "ssp:S", "asp", "asp:scale:drop=N",
                           "backup:B", "lbbsp", "lbbsp:numerical"}) {
    EXPECT_THAT(forms, ::testing::Contains(form));
  }
}

}  // namespace
}  // namespace lockstep

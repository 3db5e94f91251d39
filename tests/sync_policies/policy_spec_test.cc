#include "sync_policies/policy_spec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "sync_policies/asp_policy.h"
#include "sync_policies/backup_policy.h"
#include "sync_policies/lbbsp/lbbsp_policy.h"
#include "sync_policies/policy_registry.h"
#include "sync_policies/ssp_policy.h"

namespace lockstep {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Method = LbBspOptions::Method;

// The policy `text` builds for a job of `workers` workers, as type P.
template <typename P>
std::unique_ptr<P> Build(const std::string& text, uint32_t workers = 4) {
  JobConfig config;
  config.sync = text;
  config.workers = workers;
  auto policy = CreateSyncPolicy(config);
  EXPECT_TRUE(policy.ok()) << text << ": " << policy.status().ToString();
  if (!policy.ok()) return nullptr;
  auto* typed = dynamic_cast<P*>(policy->get());
  EXPECT_NE(typed, nullptr) << text;
  if (typed != nullptr) static_cast<void>(policy->release());  // now typed's
  return std::unique_ptr<P>(typed);
}

TEST(PolicySpecTest, SplitsTheNameFromItsParameters) {
  const PolicySpec spec("lbbsp:numerical:max=256");
  EXPECT_EQ(spec.name(), "lbbsp");
  EXPECT_THAT(spec.params(), ElementsAre("numerical", "max=256"));
  EXPECT_TRUE(PolicySpec("bsp").params().empty());
  EXPECT_THAT(PolicySpec("ssp:").params(), ElementsAre(""));
}

TEST(PolicySpecTest, ErrorsNameTheSpec) {
  const Status status = PolicySpec("bsp:1").ExpectNoParams();
  EXPECT_THAT(status.message(), HasSubstr("sync policy 'bsp:1'"));
  EXPECT_THAT(status.message(), HasSubstr("takes no parameters"));
}

TEST(PolicySpecTest, NumbersAreBoundedAndStrict) {
  EXPECT_TRUE(PolicySpec("ssp:" + std::to_string(kMaxPolicyNumber))
                  .SingleNumber("S")
                  .ok());
  EXPECT_FALSE(PolicySpec("ssp:" + std::to_string(kMaxPolicyNumber + 1))
                   .SingleNumber("S")
                   .ok());
  for (const char* bad : {"ssp:+1", "ssp: 1", "ssp:1 ", "ssp:0x10", "ssp:1.5",
                          "backup:-0", "ssp:1:2", "ssp"}) {
    EXPECT_FALSE(PolicySpec(bad).SingleNumber("S").ok()) << bad;
  }
  const PolicySpec asp("asp:drop=1e3");
  EXPECT_FALSE(asp.KeyNumber(asp.params()[0], "drop").ok());
  EXPECT_EQ(*asp.KeyNumber("drop=12", "drop"), 12u);
}

TEST(PolicySpecTest, EachPolicyParsesItsOwnParameters) {
  EXPECT_EQ(Build<SspPolicy>("ssp:7")->staleness(), 7);
  EXPECT_EQ(Build<BackupPolicy>("backup:2")->backups(), 2u);
  const StalenessRule asp =
      Build<AspPolicy>("asp:scale:drop=5")->staleness_rule();
  EXPECT_TRUE(asp.scale_lr);
  EXPECT_EQ(asp.max_staleness, 5);
  EXPECT_EQ(Build<AspPolicy>("asp")->staleness_rule().max_staleness, -1);
  EXPECT_FALSE(Build<AspPolicy>("asp:drop=3")->staleness_rule().scale_lr);
}

TEST(PolicySpecTest, LbBspDefaultsToAnalyticalNarxWithoutBounds) {
  const LbBspOptions options = Build<LbBspPolicy>("lbbsp")->options();
  EXPECT_EQ(options.method, Method::kAnalytical);
  EXPECT_EQ(options.predictor, PredictorKind::kNarx);
  EXPECT_EQ(options.min_batch, 1u);
  EXPECT_EQ(options.max_batch, 0u);
}

TEST(PolicySpecTest, LbBspParsesMethodPredictorAndBounds) {
  auto options = [](const std::string& text) {
    return Build<LbBspPolicy>(text)->options();
  };
  EXPECT_EQ(options("lbbsp:analytical:ema").predictor, PredictorKind::kEma);
  EXPECT_EQ(options("lbbsp:analytical:last").predictor, PredictorKind::kLast);
  EXPECT_EQ(options("lbbsp:numerical").method, Method::kNumerical);
  const LbBspOptions bounded = options("lbbsp:numerical:max=256:min=16");
  EXPECT_EQ(bounded.min_batch, 16u);
  EXPECT_EQ(bounded.max_batch, 256u);
  EXPECT_EQ(options("lbbsp:analytical:min=3").predictor, PredictorKind::kNarx);
  EXPECT_EQ(options("lbbsp:analytical:min=3").min_batch, 3u);
}

TEST(PolicySpecTest, BackupsMustLeaveAWorkerToWaitFor) {
  JobConfig config;
  config.sync = "backup:2";
  config.workers = 3;
  EXPECT_TRUE(ValidateSyncPolicy(config).ok());
  config.workers = 2;
  const Status status = ValidateSyncPolicy(config);
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("the job has 2"));
}

TEST(PolicySpecTest, FormsListEveryFamily) {
  const auto forms = KnownSyncPolicies();
  for (const char* form : {"bsp", "ssp:S", "asp", "asp:scale:drop=N",
                           "backup:B", "lbbsp", "lbbsp:numerical"}) {
    EXPECT_THAT(forms, ::testing::Contains(form));
  }
}

TEST(PolicySpecTest, OnlyQuotaPoliciesPreferTheGlobalDataOrder) {
  for (const char* text : {"bsp", "ssp:2", "asp", "backup:1"}) {
    JobConfig config;
    config.sync = text;
    config.data_order = "auto";
    ASSERT_TRUE(ResolveAutoDataOrder(&config).ok()) << text;
    EXPECT_EQ(config.data_order, "partition") << text;
  }
  JobConfig lbbsp;
  lbbsp.sync = "lbbsp:numerical";
  lbbsp.data_order = "auto";
  ASSERT_TRUE(ResolveAutoDataOrder(&lbbsp).ok());
  EXPECT_EQ(lbbsp.data_order, "global");
  JobConfig fixed;
  fixed.sync = "lbbsp";
  fixed.data_order = "partition";  // an explicit choice stays
  ASSERT_TRUE(ResolveAutoDataOrder(&fixed).ok());
  EXPECT_EQ(fixed.data_order, "partition");
}

}  // namespace
}  // namespace lockstep

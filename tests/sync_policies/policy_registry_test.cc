#include "sync_policies/policy_registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace lockstep {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::HasSubstr;

class PolicyRegistryTest : public ::testing::Test {
 protected:
  static JobConfig ConfigWithSync(const std::string& sync) {
    JobConfig config;
    config.sync = sync;
    config.workers = 3;
    config.batches = {8, 16, 24};
    return config;
  }

  // What the registry says of `sync` for a job of `workers` workers.
  static Status Validate(const std::string& sync, uint32_t workers) {
    JobConfig config;
    config.sync = sync;
    config.workers = workers;
    return ValidateSyncPolicy(config);
  }

  // A known form with its placeholders filled in.
  static std::string Instantiate(std::string form) {
    for (auto [placeholder, value] :
         {std::pair{"S", "2"}, std::pair{"B", "1"}, std::pair{"N", "4"}}) {
      const size_t at = form.find(placeholder);
      if (at != std::string::npos) form.replace(at, 1, value);
    }
    return form;
  }
};

TEST_F(PolicyRegistryTest, BspCreatesABspPolicyThatAppliesOnCommit) {
  auto policy = CreateSyncPolicy(ConfigWithSync("bsp"));
  ASSERT_TRUE(policy.ok()) << policy.status().ToString();
  ASSERT_NE(*policy, nullptr);
  EXPECT_EQ((*policy)->name(), "bsp");
  EXPECT_EQ((*policy)->apply_mode(), ApplyMode::kOnCommit);
}

TEST_F(PolicyRegistryTest, CreatedPolicyUsesTheConfiguredBatches) {
  for (const char* spec : {"bsp", "ssp:1", "asp", "backup:1"}) {
    SCOPED_TRACE(spec);
    auto policy = CreateSyncPolicy(ConfigWithSync(spec));
    ASSERT_TRUE(policy.ok());
    SyncPolicy& p = **policy;
    for (uint32_t w = 0; w < 3; ++w) p.OnWorkerJoined(w, 0, {});
    EXPECT_EQ(p.Admit(0, 0)->batch, 8u);
    EXPECT_EQ(p.Admit(2, 0)->batch, 24u);
    EXPECT_EQ(p.Admit(2, 0)->batch_offset, 24u);
  }
}

TEST_F(PolicyRegistryTest, LbBspSplitsTheJobsGlobalBatch) {
  auto policy = CreateSyncPolicy(ConfigWithSync("lbbsp"));
  ASSERT_TRUE(policy.ok());
  SyncPolicy& p = **policy;
  for (uint32_t w = 0; w < 3; ++w) p.OnWorkerJoined(w, 0, {});
  uint32_t sum = 0;
  for (uint32_t w = 0; w < 3; ++w) sum += p.Admit(w, 0)->batch;
  EXPECT_EQ(sum, 48u) << "X = 8 + 16 + 24";
  EXPECT_EQ(p.Admit(1, 0)->batch, 16u) << "equal split at first";
}

TEST_F(PolicyRegistryTest, CreatedPolicyIsFresh) {
  auto first = CreateSyncPolicy(ConfigWithSync("bsp"));
  auto second = CreateSyncPolicy(ConfigWithSync("bsp"));
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_NE(first->get(), second->get());
  (*first)->OnWorkerJoined(0, 0, {});
  (*second)->OnWorkerJoined(0, 0, {});
  ClockReport report;
  ASSERT_EQ((*first)->OnClockDone(report).size(), 1u);
  EXPECT_TRUE((*first)->Admit(0, 1).has_value());
  EXPECT_FALSE((*second)->Admit(0, 1).has_value())
      << "state must not be shared";
}

TEST_F(PolicyRegistryTest, UnknownNameErrorListsTheKnownPolicies) {
  for (const char* name : {"BSP", "", "gossip", "bsp2", "sspx:1"}) {
    SCOPED_TRACE(std::string("'") + name + "'");
    auto policy = CreateSyncPolicy(ConfigWithSync(name));
    ASSERT_FALSE(policy.ok());
    EXPECT_EQ(policy.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(policy.status().message(),
                AllOf(HasSubstr("'" + std::string(name) + "'"),
                      HasSubstr("known: bsp, ssp:S, asp"),
                      HasSubstr("backup:B"), HasSubstr("lbbsp:numerical")));
  }
}

TEST_F(PolicyRegistryTest, EveryKnownFormCreatesAPolicyOfThatName) {
  const std::vector<std::string> known = KnownSyncPolicies();
  EXPECT_THAT(known, Contains("bsp"));
  EXPECT_THAT(known, Contains("lbbsp:numerical"));
  for (const auto& form : known) {
    const std::string spec = Instantiate(form);
    auto policy = CreateSyncPolicy(ConfigWithSync(spec));
    ASSERT_TRUE(policy.ok()) << spec << ": " << policy.status().ToString();
    const std::string expected =
        spec == "lbbsp" ? "lbbsp:analytical:narx" : spec;
    EXPECT_EQ((*policy)->name(), expected);
  }
}

TEST_F(PolicyRegistryTest, EachFamilyHasItsApplyModeAndStalenessRule) {
  auto apply = [&](const std::string& spec) {
    return (*CreateSyncPolicy(ConfigWithSync(spec)))->apply_mode();
  };
  EXPECT_EQ(apply("ssp:3"), ApplyMode::kOnArrival);
  EXPECT_EQ(apply("asp"), ApplyMode::kOnArrival);
  EXPECT_EQ(apply("backup:1"), ApplyMode::kOnCommit);
  EXPECT_EQ(apply("lbbsp:numerical"), ApplyMode::kOnCommit);
  const StalenessRule rule =
      (*CreateSyncPolicy(ConfigWithSync("asp:drop=9:scale")))->staleness_rule();
  EXPECT_TRUE(rule.scale_lr);
  EXPECT_EQ(rule.max_staleness, 9);
}

TEST_F(PolicyRegistryTest, NamesAreCanonical) {
  const std::pair<const char*, const char*> cases[] = {
      {"asp:drop=4:scale", "asp:scale:drop=4"},
      {"lbbsp:analytical", "lbbsp:analytical:narx"},
      {"lbbsp:max=64:min=2", "lbbsp:analytical:narx:min=2:max=64"},
      {"lbbsp:numerical:max=40", "lbbsp:numerical:max=40"},
      {"ssp:0", "ssp:0"}};
  for (const auto& [spec, name] : cases) {
    auto policy = CreateSyncPolicy(ConfigWithSync(spec));
    ASSERT_TRUE(policy.ok()) << spec;
    EXPECT_EQ((*policy)->name(), name);
  }
}

TEST_F(PolicyRegistryTest, ValidateAcceptsEveryValidSpec) {
  for (const char* spec :
       {"bsp", "ssp:0", "ssp:100", "asp", "asp:scale", "asp:drop=0",
        "asp:scale:drop=16", "backup:0", "backup:2", "lbbsp",
        "lbbsp:analytical:last", "lbbsp:analytical:ema",
        "lbbsp:analytical:narx", "lbbsp:numerical", "lbbsp:min=1",
        "lbbsp:numerical:min=4:max=4", "lbbsp:analytical:ema:max=512"}) {
    EXPECT_TRUE(Validate(spec, 3).ok())
        << spec << ": " << Validate(spec, 3).ToString();
  }
}

TEST_F(PolicyRegistryTest, ValidateNamesTheBadPart) {
  const std::pair<const char*, const char*> cases[] = {
      {"ssp", "takes exactly one number"},
      {"ssp:-1", "'-1' is not a valid staleness"},
      {"ssp:x", "'x' is not a valid staleness"},
      {"ssp:1:2", "takes exactly one number"},
      {"ssp:99999999999999999999", "not a valid staleness"},
      {"backup:3", "B=3 backup workers need more than B workers"},
      {"backup:", "'' is not a valid backup count"},
      {"bsp:1", "bsp takes no parameters"},
      {"asp:fast", "unknown asp option 'fast'"},
      {"asp:drop=", "'drop=': drop wants a non-negative integer"},
      {"asp:drop=-2", "drop wants a non-negative integer"},
      {"asp:scale:scale", "'scale' given twice"},
      {"lbbsp:analytical:arima", "unknown predictor 'arima'"},
      {"lbbsp:numerical:narx", "unexpected 'narx'"},
      {"lbbsp:min=0", "'min=0': must be >= 1"},
      {"lbbsp:min=9:max=8", "min=9 is above max=8"},
      {"lbbsp:max=8:max=9", "'max' given twice"},
      {"lbbsp:cap=3", "unexpected 'cap=3'"}};
  for (const auto& [spec, problem] : cases) {
    SCOPED_TRACE(spec);
    const Status status = Validate(spec, 3);
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(status.message(),
                AllOf(HasSubstr("'" + std::string(spec) + "'"),
                      HasSubstr(problem), HasSubstr("known: bsp")));
    EXPECT_FALSE(CreateSyncPolicy(ConfigWithSync(spec)).ok())
        << "create must reject what validate rejects";
  }
}

TEST_F(PolicyRegistryTest, BackupCountMustLeaveAWorkerToWaitFor) {
  EXPECT_TRUE(Validate("backup:3", 4).ok());
  EXPECT_FALSE(Validate("backup:4", 4).ok());
  EXPECT_FALSE(Validate("backup:0", 0).ok());
}

}  // namespace
}  // namespace lockstep

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
};

TEST_F(PolicyRegistryTest, BspCreatesABspPolicyThatAppliesOnCommit) {
  auto policy = CreateSyncPolicy(ConfigWithSync("bsp"));
  ASSERT_TRUE(policy.ok()) << policy.status().ToString();
  ASSERT_NE(*policy, nullptr);
  EXPECT_EQ((*policy)->name(), "bsp");
  EXPECT_EQ((*policy)->apply_mode(), wire::ApplyMode::OnCommit);
}

TEST_F(PolicyRegistryTest, CreatedPolicyUsesTheConfiguredBatches) {
  auto policy = CreateSyncPolicy(ConfigWithSync("bsp"));
  ASSERT_TRUE(policy.ok());
  SyncPolicy& p = **policy;
  for (uint32_t w = 0; w < 3; ++w) p.OnWorkerJoined(w, 0);
  EXPECT_EQ(p.BatchQuota(0, 0), 8u);
  EXPECT_EQ(p.BatchQuota(2, 0), 24u);
}

TEST_F(PolicyRegistryTest, CreatedPolicyIsFresh) {
  auto first = CreateSyncPolicy(ConfigWithSync("bsp"));
  auto second = CreateSyncPolicy(ConfigWithSync("bsp"));
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_NE(first->get(), second->get());
  (*first)->OnWorkerJoined(0, 0);
  ClockReport report;
  ASSERT_EQ((*first)->OnClockDone(report).size(), 1u);
  EXPECT_TRUE((*first)->MayStart(0, 1));
  EXPECT_FALSE((*second)->MayStart(0, 1)) << "state must not be shared";
}

TEST_F(PolicyRegistryTest, UnknownNameErrorListsTheKnownPolicies) {
  for (const char* name : {"ssp:3", "BSP", "", "asp"}) {
    SCOPED_TRACE(std::string("'") + name + "'");
    auto policy = CreateSyncPolicy(ConfigWithSync(name));
    ASSERT_FALSE(policy.ok());
    EXPECT_EQ(policy.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(policy.status().message(),
                AllOf(HasSubstr("'" + std::string(name) + "'"),
                      HasSubstr("known: bsp")));
  }
}

TEST_F(PolicyRegistryTest, EveryKnownNameCreatesAPolicyOfThatName) {
  const std::vector<std::string> known = KnownSyncPolicies();
  EXPECT_THAT(known, Contains("bsp"));
  for (const auto& name : known) {
    auto policy = CreateSyncPolicy(ConfigWithSync(name));
    ASSERT_TRUE(policy.ok()) << name << ": " << policy.status().ToString();
    EXPECT_EQ((*policy)->name().substr(0, name.find(':')),
              name.substr(0, name.find(':')));
  }
}

}  // namespace
}  // namespace lockstep

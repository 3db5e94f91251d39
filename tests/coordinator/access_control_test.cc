#include "coordinator/access_control.h"

#include <gtest/gtest.h>

namespace lockstep {
namespace {

TEST(AccessControlTest, WithoutKeysEveryRequestPasses) {
  AccessControl open(/*authenticated=*/false);
  EXPECT_TRUE(open.CheckRegister("", wire::Role::Server).ok());
  EXPECT_TRUE(open.CheckRegister("", wire::Role::Worker).ok());
  EXPECT_TRUE(open.CheckRoundRequest("").ok());
  EXPECT_EQ(open.unauthorized(), 0u);
}

TEST(AccessControlTest, EachRoleRegistersOnlyWithItsOwnKey) {
  AccessControl access(/*authenticated=*/true);
  EXPECT_TRUE(access.CheckRegister("server", wire::Role::Server).ok());
  EXPECT_TRUE(access.CheckRegister("worker", wire::Role::Worker).ok());
  EXPECT_TRUE(access.CheckRegister("worker", wire::Role::Evaluator).ok());
  Status posing = access.CheckRegister("worker", wire::Role::Server);
  ASSERT_FALSE(posing.ok());
  EXPECT_NE(posing.message().find("needs the job's server key"),
            std::string::npos)
      << posing.message();
  EXPECT_NE(posing.message().find("holds the worker key"), std::string::npos);
  EXPECT_FALSE(access.CheckRegister("admin", wire::Role::Worker).ok());
  EXPECT_FALSE(access.CheckRegister("", wire::Role::Worker).ok());
  EXPECT_EQ(access.unauthorized(), 3u);
}

TEST(AccessControlTest, OnlyTheAdminKeyAsksForARound) {
  AccessControl access(/*authenticated=*/true);
  EXPECT_TRUE(access.CheckRoundRequest("admin").ok());
  for (const char* role : {"worker", "server", ""}) {
    EXPECT_FALSE(access.CheckRoundRequest(role).ok()) << role;
  }
  EXPECT_EQ(access.unauthorized(), 3u);
  std::string text;
  access.AppendMetrics(&text);
  EXPECT_NE(text.find("lockstep_unauthorized_requests_total 3"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("lockstep_refused_connections_total{plane=\"control\"}"),
            std::string::npos);
}

}  // namespace
}  // namespace lockstep

#include "coordinator/enrollment/access_control.h"

#include <gtest/gtest.h>

#include "coordinator/metric_families.h"

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

TEST(AccessControlTest, OnlyAMembersOwnRoleKeepsItAliveOrSpeaksAtAll) {
  AccessControl access(/*authenticated=*/true);
  EXPECT_TRUE(access.CheckSideHeartbeat("server", wire::Role::Server).ok());
  EXPECT_TRUE(access.CheckSideHeartbeat("worker", wire::Role::Worker).ok());
  EXPECT_TRUE(access.CheckSideHeartbeat("worker", wire::Role::Evaluator).ok());
  // An admin or worker key cannot keep a dead server counted alive.
  EXPECT_FALSE(access.CheckSideHeartbeat("admin", wire::Role::Server).ok());
  EXPECT_FALSE(access.CheckSideHeartbeat("worker", wire::Role::Server).ok());
  EXPECT_FALSE(access.CheckAuthenticated("").ok());
  EXPECT_TRUE(access.CheckAuthenticated("worker").ok());
  EXPECT_EQ(access.unauthorized(), 3u);
  EXPECT_TRUE(AccessControl(false).CheckAuthenticated("").ok());
}

// One message through CheckMessage: its header built and verified.
Status CheckOne(AccessControl& access, const std::string& key_role,
                wire::Body type, wire::Role sender, bool member) {
  flatbuffers::FlatBufferBuilder fbb(128);
  flatbuffers::Offset<void> body;
  if (type == wire::Body::Register) {
    body = wire::CreateRegister(fbb, sender).Union();
  } else if (type == wire::Body::SnapshotStart) {
    body = wire::CreateSnapshotStart(fbb, 0, 0, 0).Union();
  } else {
    body = wire::CreateHeartbeat(fbb, -1).Union();
  }
  Message msg;
  msg.header = FinishEnvelope(fbb, type, body, sender, 0);
  EXPECT_TRUE(VerifyHeader(&msg).ok());
  return access.CheckMessage(key_role, *msg.envelope, member);
}

TEST(AccessControlTest, EachMessageIsCheckedForWhatItAsks) {
  AccessControl access(/*authenticated=*/true);
  using wire::Body;
  using wire::Role;
  EXPECT_TRUE(
      CheckOne(access, "server", Body::Register, Role::Server, false).ok());
  EXPECT_FALSE(
      CheckOne(access, "worker", Body::Register, Role::Server, false).ok());
  EXPECT_TRUE(
      CheckOne(access, "admin", Body::SnapshotStart, Role::Tool, false).ok());
  EXPECT_FALSE(
      CheckOne(access, "worker", Body::SnapshotStart, Role::Tool, false).ok());
  // A member's own heartbeat passes; another socket's needs the role's key.
  EXPECT_TRUE(
      CheckOne(access, "worker", Body::Heartbeat, Role::Server, true).ok());
  EXPECT_FALSE(
      CheckOne(access, "admin", Body::Heartbeat, Role::Server, false).ok());
  EXPECT_FALSE(CheckOne(access, "", Body::Heartbeat, Role::Worker, true).ok());
  EXPECT_EQ(access.unauthorized(), 4u);
}

TEST(AccessControlTest, OnlyTheAdminKeyAsksForARound) {
  AccessControl access(/*authenticated=*/true);
  EXPECT_TRUE(access.CheckRoundRequest("admin").ok());
  for (const char* role : {"worker", "server", ""}) {
    EXPECT_FALSE(access.CheckRoundRequest(role).ok()) << role;
  }
  EXPECT_EQ(access.unauthorized(), 3u);
  PrometheusText metrics;
  access.AddMetrics(&metrics);
  const std::string text = metrics.Text(DescribeJobMetric);
  EXPECT_NE(text.find("lockstep_unauthorized_requests_total 3"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("lockstep_refused_connections_total{plane=\"control\"}"),
            std::string::npos);
}

}  // namespace
}  // namespace lockstep

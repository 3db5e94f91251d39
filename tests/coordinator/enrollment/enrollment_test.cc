#include "coordinator/enrollment/enrollment.h"

#include <gtest/gtest.h>

#include "tests/coordinator/component_harness.h"

namespace lockstep {
namespace {

TEST(EnrollmentTest, WorkersAreWelcomedOnceAllRegisteredAndStartOnceDescribed) {
  ComponentHarness h(SmallJob());
  h.Register("s0", wire::Role::Server);
  h.Register("w0", wire::Role::Worker, 1);
  EXPECT_TRUE(h.outbox.sent().empty());
  h.Register("w1", wire::Role::Worker);
  ASSERT_EQ(h.outbox.To(wire::Body::Welcome),
            (std::vector<std::string>{"w1", "w0"}))
      << "in rank order; w0 asked for rank 1";
  EXPECT_EQ(h.outbox.Of(wire::Body::Welcome)[1].body<wire::Welcome>()->rank(),
            1u);
  h.Describe("w0");
  h.Describe("w1");
  EXPECT_FALSE(h.enrollment->training()) << "a server is missing";
  EXPECT_TRUE(h.outbox.Of(wire::Body::Start).empty());

  h.outbox.Clear();
  h.Register("s1", wire::Role::Server);
  EXPECT_TRUE(h.enrollment->training());
  std::vector<std::string> order;
  for (const auto& m : h.outbox.sent()) {
    order.push_back(std::string(BodyName(m.type)) + ":" + m.id);
  }
  EXPECT_EQ(order, (std::vector<std::string>{"Welcome:s0", "Welcome:s1",
                                             "Start:w1", "Start:w0"}));
  const auto* welcome =
      h.outbox.Of(wire::Body::Welcome)[0].body<wire::Welcome>();
  ASSERT_NE(welcome->layout(), nullptr) << "servers get the layout";
  const auto* start = h.outbox.Of(wire::Body::Start)[0].body<wire::Start>();
  EXPECT_EQ(start->clock(), 0);
  EXPECT_EQ(start->epoch(), 0u);
  EXPECT_EQ(h.enrollment->layout().num_shards(), 2u);
}

TEST(EnrollmentTest, PeersBeyondTheJobAreRefused) {
  ComponentHarness h(SmallJob());
  h.Register("s0", wire::Role::Server);
  h.Register("s1", wire::Role::Server);
  h.Register("s2", wire::Role::Server);
  ASSERT_EQ(h.outbox.To(wire::Body::Error), (std::vector<std::string>{"s2"}));
  EXPECT_EQ(
      flatbuffers::GetString(
          h.outbox.Of(wire::Body::Error)[0].body<wire::Error>()->message()),
      "job already has all its servers");
  EXPECT_EQ(h.members.Find("s2"), nullptr);
}

TEST(EnrollmentTest, ARunningJobTakesWorkersUpToItsMaximum) {
  JobConfig job = SmallJob();
  job.max_workers = 3;
  job.data_order = "global";
  ComponentHarness h(job);
  h.StartTraining();
  h.Register("w2", wire::Role::Worker, 5);
  h.Describe("w2");
  EXPECT_EQ(h.members.worker_ids().size(), 3u);
  EXPECT_EQ(h.members.at("w2").rank, 2) << "a free rank below the maximum";
  EXPECT_EQ(h.outbox.To(wire::Body::Start).back(), "w2");
  h.Register("w3", wire::Role::Worker);
  ASSERT_EQ(h.outbox.To(wire::Body::Error), (std::vector<std::string>{"w3"}));
  EXPECT_EQ(h.members.Find("w3"), nullptr);
}

TEST(EnrollmentTest, DescribeOutOfTurnIsRejected) {
  ComponentHarness h(SmallJob());
  h.Register("w0", wire::Role::Worker);
  h.Describe("w0");  // not welcomed: w1 has not registered
  ASSERT_EQ(h.rejected.size(), 1u);
  EXPECT_EQ(h.rejected[0].second, "describe out of turn");
}

TEST(EnrollmentTest, ReplacementWorkerJoinsAtTheCurrentClock) {
  ComponentHarness h(SmallJob());
  h.StartTraining();
  h.RunClock(0);
  h.outbox.Clear();
  h.outbox.Disconnect("w1");  // its process died
  h.Register("w1-new", wire::Role::Worker, 1);
  EXPECT_EQ(h.members.Find("w1"), nullptr) << "the old process is gone";
  EXPECT_EQ(h.enrollment->dead_workers(), 1u);
  EXPECT_TRUE(h.abort.ok()) << "a replacement does not end the job";
  ASSERT_EQ(h.outbox.To(wire::Body::Welcome),
            (std::vector<std::string>{"w1-new"}));
  EXPECT_EQ(h.outbox.Of(wire::Body::Welcome)[0].body<wire::Welcome>()->rank(),
            1u);
  h.Describe("w1-new");
  ASSERT_EQ(h.outbox.To(wire::Body::Start),
            (std::vector<std::string>{"w1-new"}));
  EXPECT_EQ(h.outbox.Of(wire::Body::Start)[0].body<wire::Start>()->clock(), 1);
}

// The error message peer `id` was sent last.
std::string LastError(const ComponentHarness& h) {
  const auto errors = h.outbox.Of(wire::Body::Error);
  if (errors.empty()) return "";
  return flatbuffers::GetString(errors.back().body<wire::Error>()->message());
}

TEST(EnrollmentTest, ARegisterNeverDisplacesALiveWorker) {
  ComponentHarness h(SmallJob());
  h.StartTraining();
  h.outbox.Clear();
  h.Register("insider", wire::Role::Worker, 1);
  ASSERT_EQ(h.outbox.To(wire::Body::Error),
            (std::vector<std::string>{"insider"}));
  EXPECT_EQ(LastError(h), "worker 1 is held by a live process");
  EXPECT_EQ(h.members.Find("insider"), nullptr);
  ASSERT_NE(h.members.Find("w1"), nullptr);
  EXPECT_EQ(h.members.at("w1").rank, 1);
  EXPECT_EQ(h.enrollment->dead_workers(), 0u);
}

TEST(EnrollmentTest, OneWorkerCredentialIsOneLiveProcess) {
  ComponentHarness h(SmallJob());
  for (const char* id : {"s0", "s1"}) h.Register(id, wire::Role::Server);
  h.Register("w0", wire::Role::Worker, -1, 3);
  h.Register("w1", wire::Role::Worker, -1, 4);
  h.Describe("w0");
  h.Describe("w1");
  ASSERT_TRUE(h.enrollment->training());
  EXPECT_EQ(h.members.at("w0").credential, 3);
  h.outbox.Clear();
  // A copy of worker-3.key, while its process is connected: refused.
  h.Register("copy", wire::Role::Worker, -1, 3);
  EXPECT_EQ(LastError(h), "worker credential 3 is held by a live process");
  EXPECT_EQ(h.members.Find("copy"), nullptr);
  // Once that process's connection closed, a new process of the
  // credential takes its place (a supervisor's restart).
  h.outbox.Disconnect("w0");
  h.Register("w0-new", wire::Role::Worker, -1, 3);
  EXPECT_EQ(h.members.Find("w0"), nullptr);
  ASSERT_NE(h.members.Find("w0-new"), nullptr);
  EXPECT_EQ(h.members.at("w0-new").credential, 3);
  EXPECT_EQ(h.members.worker_ids().size(), 2u);
}

TEST(EnrollmentTest, ADescriptionThatDiffersFromTwoAgreeingOnesIsRefused) {
  JobConfig job = SmallJob();
  job.workers = 3;
  ComponentHarness h(job);
  for (const char* id : {"s0", "s1"}) h.Register(id, wire::Role::Server);
  for (const char* id : {"w0", "w1", "w2"}) h.Register(id, wire::Role::Worker);
  h.Describe("w0");
  h.Describe("w1");
  h.outbox.Clear();
  h.Describe("w2", 999);
  EXPECT_TRUE(h.abort.ok()) << h.abort.ToString();
  ASSERT_EQ(h.outbox.To(wire::Body::Error), (std::vector<std::string>{"w2"}));
  EXPECT_NE(LastError(h).find("describes a different job"), std::string::npos)
      << LastError(h);
  EXPECT_EQ(h.members.Find("w2"), nullptr);
  // A process for its place that describes the job starts it.
  h.Register("w2-new", wire::Role::Worker);
  h.Describe("w2-new");
  EXPECT_TRUE(h.enrollment->training()) << h.abort.ToString();
}

TEST(EnrollmentTest, TwoFirstDescriptionsThatDifferEndTheJob) {
  ComponentHarness h(SmallJob());
  for (const char* id : {"s0", "s1"}) h.Register(id, wire::Role::Server);
  for (const char* id : {"w0", "w1"}) h.Register(id, wire::Role::Worker);
  h.Describe("w0");
  h.Describe("w1", 999);  // which one is wrong cannot be told
  EXPECT_EQ(h.abort.code(), StatusCode::kFailedPrecondition);
}

TEST(EnrollmentTest, LastWorkerGoneEndsTheJob) {
  ComponentHarness h(SmallJob());
  h.StartTraining();
  h.enrollment->RemoveWorker("w0", "sent nothing");
  EXPECT_TRUE(h.abort.ok());
  h.enrollment->RemoveWorker("w1", "sent nothing");
  EXPECT_EQ(h.abort.code(), StatusCode::kUnavailable);
  EXPECT_EQ(h.abort.message(),
            "every worker is gone (last: worker 1, sent nothing)");
}

}  // namespace
}  // namespace lockstep

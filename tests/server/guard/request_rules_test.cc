#include "server/guard/request_rules.h"

#include <gtest/gtest.h>

namespace lockstep {
namespace {

// `header`, verified, as the port stamps it: from worker `worker`'s
// connection, proven with a ticket of `incarnation`.
Message FromWorker(zmq::message_t header, int worker, uint32_t incarnation) {
  Message msg;
  msg.header = std::move(header);
  msg.role = "worker";
  msg.rank = worker;
  msg.incarnation = incarnation;
  EXPECT_TRUE(VerifyHeader(&msg).ok());
  return msg;
}

// A verified push of `clock` from worker `worker` (ticket `incarnation`).
Message Push(int worker, int64_t clock, uint32_t batch = 8,
             uint32_t incarnation = 1, bool resent = false) {
  flatbuffers::FlatBufferBuilder fbb(128);
  wire::PushBuilder push(fbb);
  push.add_clock(clock);
  push.add_batch(batch);
  push.add_resent(resent);
  auto body = push.Finish();
  return FromWorker(FinishEnvelope(fbb, wire::Body::Push, body.Union(),
                                   wire::Role::Worker, worker),
                    worker, incarnation);
}

// What a push shows of its admission and verdict (with job keys).
struct Shown {
  uint32_t quota = 0;
  std::string quota_seal = {};
  wire::PushVerdict verdict = wire::PushVerdict::Measure;
  int64_t staleness = 0;
  std::string verdict_seal = {};
};

// A verified push of `clock` with `batch` from worker `worker` (ticket 1),
// showing `shown`.
Message SealedPush(int worker, int64_t clock, uint32_t batch,
                   const Shown& shown) {
  flatbuffers::FlatBufferBuilder fbb(128);
  auto quota_seal = BytesField(fbb, shown.quota_seal);
  auto verdict_seal = BytesField(fbb, shown.verdict_seal);
  wire::PushBuilder push(fbb);
  push.add_clock(clock);
  push.add_batch(batch);
  push.add_quota(shown.quota);
  push.add_quota_seal(quota_seal);
  push.add_verdict(shown.verdict);
  push.add_staleness(shown.staleness);
  push.add_verdict_seal(verdict_seal);
  auto body = push.Finish();
  return FromWorker(FinishEnvelope(fbb, wire::Body::Push, body.Union(),
                                   wire::Role::Worker, worker),
                    worker, 1);
}

// A verified pull of `clock` from worker `worker` (ticket `incarnation`).
Message Pull(int worker, int64_t clock, uint32_t incarnation = 1) {
  flatbuffers::FlatBufferBuilder fbb(64);
  wire::PullBuilder pull(fbb);
  pull.add_clock(clock);
  auto body = pull.Finish();
  return FromWorker(FinishEnvelope(fbb, wire::Body::Pull, body.Union(),
                                   wire::Role::Worker, worker),
                    worker, incarnation);
}

RequestRules OnCommit(uint64_t max_batch = 64) {
  RequestRules rules;
  rules.Configure({0, false, max_batch});
  return rules;
}

TEST(RequestRulesTest, OnePushPerClockAndWorker) {
  RequestRules rules = OnCommit();
  EXPECT_FALSE(rules.CheckPush(Push(0, 3), 2));
  EXPECT_FALSE(rules.CheckPush(Push(1, 3), 2));  // another worker
  auto again = rules.CheckPush(Push(0, 3), 2);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->reason, wire::RefusalReason::Duplicate);
  EXPECT_TRUE(again->counted);
  // A replay of an earlier clock too.
  EXPECT_FALSE(rules.CheckPush(Push(0, 4), 3));
  EXPECT_TRUE(rules.CheckPush(Push(0, 3), 3));
}

TEST(RequestRulesTest, AResentRepeatIsDroppedQuietly) {
  RequestRules rules = OnCommit();
  EXPECT_FALSE(rules.CheckPush(Push(0, 3), 2));
  auto resent = rules.CheckPush(Push(0, 3, 8, 1, true), 2);
  ASSERT_TRUE(resent);
  EXPECT_FALSE(resent->counted);
  // Resent but new here (this shard never had it): taken.
  EXPECT_FALSE(rules.CheckPush(Push(1, 3, 8, 1, true), 2));
}

TEST(RequestRulesTest, ANewIncarnationOrEpochStartsAfresh) {
  RequestRules rules = OnCommit();
  EXPECT_FALSE(rules.CheckPush(Push(0, 3), 2));
  // The rank's replacement redoes the clock its predecessor pushed.
  EXPECT_FALSE(rules.CheckPush(Push(0, 3, 8, 2), 2));
  // After a rollback (a new epoch) the clocks come again.
  rules.Configure({1, false, 64});
  EXPECT_FALSE(rules.CheckPush(Push(0, 3, 8, 2), 2));
  rules.Forget();
  EXPECT_FALSE(rules.CheckPush(Push(0, 3, 8, 2), 2));
}

TEST(RequestRulesTest, OnCommitAClockBeyondTheWindowIsRefused) {
  RequestRules rules = OnCommit();
  const int64_t applied = 10;
  EXPECT_FALSE(
      rules.CheckPush(Push(0, applied + RequestRules::kClockWindow), applied));
  auto far = rules.CheckPush(Push(1, int64_t{1} << 40), applied);
  ASSERT_TRUE(far);
  EXPECT_EQ(far->reason, wire::RefusalReason::ClockWindow);
  // Not taken: the worker's next honest push is not a "replay".
  EXPECT_FALSE(rules.CheckPush(Push(1, applied + 1), applied));

  const Message far_pull = Pull(0, applied + RequestRules::kClockWindow + 1);
  EXPECT_EQ(rules.CheckPull(far_pull, applied).code(),
            StatusCode::kInvalidArgument);
  EXPECT_TRUE(rules.CheckPull(far_pull, applied + 1).ok());
}

TEST(RequestRulesTest, OnArrivalClocksAreTheWorkersOwn) {
  RequestRules rules;
  rules.Configure({0, true, 64});
  EXPECT_FALSE(rules.CheckPush(Push(0, 1000), 2));
}

TEST(RequestRulesTest, ABatchAboveTheJobsLargestIsRefused) {
  RequestRules rules = OnCommit(64);
  auto big = rules.CheckPush(Push(0, 3, 0xFFFFFFFFu), 2);
  ASSERT_TRUE(big);
  EXPECT_EQ(big->reason, wire::RefusalReason::Batch);
  EXPECT_FALSE(rules.CheckPush(Push(0, 3, 64), 2));
  // No largest declared: any batch.
  EXPECT_FALSE(OnCommit(0).CheckPush(Push(0, 3, 0xFFFFFFFFu), 2));
}

TEST(RequestRulesTest, AFencedRegistrationIsRefusedItsSuccessorIsNot) {
  RequestRules rules = OnCommit();
  rules.Fence(1, 7);
  auto fenced = rules.CheckPush(Push(1, 3, 8, 7), 2);
  ASSERT_TRUE(fenced);
  EXPECT_EQ(fenced->reason, wire::RefusalReason::Fenced);
  EXPECT_EQ(rules.CheckPull(Pull(1, 3, 7), 2).code(),
            StatusCode::kInvalidArgument);
  // The rank's next registration, and the other ranks, are served.
  EXPECT_FALSE(rules.CheckPush(Push(1, 3, 8, 8), 2));
  EXPECT_TRUE(rules.CheckPull(Pull(1, 3, 8), 2).ok());
  EXPECT_FALSE(rules.CheckPush(Push(0, 3, 8, 7), 2));
  // A new timeline keeps the fence.
  rules.Forget();
  EXPECT_TRUE(rules.CheckPush(Push(1, 4, 8, 7), 3));
}

// With job keys a push shows the coordinator's sealed admission to its
// clock, and its batch stays within the quota admitted.
TEST(RequestRulesTest, APushShowsItsSealedAdmissionAndStaysWithinIts) {
  auto seal = std::make_shared<const FactSeal>(std::string(32, 'k'));
  RequestRules rules;
  rules.Configure({0, false, 64, 0, seal});
  const Shown admitted{8, seal->Seal(AdmittedQuota{0, 1, 3, 8})};
  EXPECT_FALSE(rules.CheckPush(SealedPush(0, 3, 8, admitted), 2));
  // No admission shown, one of another clock, rank or quota.
  auto none = rules.CheckPush(SealedPush(1, 3, 8, {}), 2);
  ASSERT_TRUE(none);
  EXPECT_EQ(none->reason, wire::RefusalReason::Quota);
  EXPECT_NE(none->text.find("without the coordinator's admission"),
            std::string::npos);
  EXPECT_TRUE(rules.CheckPush(SealedPush(0, 4, 8, admitted), 3));
  EXPECT_TRUE(rules.CheckPush(SealedPush(1, 3, 8, admitted), 2));
  Shown more = admitted;
  more.quota = 64;
  EXPECT_TRUE(rules.CheckPush(SealedPush(1, 3, 8, more), 2));
  // A batch above the quota its admission shows (below the job's largest).
  const Shown small{4, seal->Seal(AdmittedQuota{1, 1, 3, 4})};
  auto above = rules.CheckPush(SealedPush(1, 3, 8, small), 2);
  ASSERT_TRUE(above);
  EXPECT_EQ(above->reason, wire::RefusalReason::Quota);
  EXPECT_NE(above->text.find("above the quota of 4"), std::string::npos);
  EXPECT_FALSE(rules.CheckPush(SealedPush(1, 3, 4, small), 2));
  // A connection that proved no rank (the ZeroMQ data port) shows nothing.
  Message unproven = SealedPush(2, 3, 8, {});
  unproven.rank = -1;
  EXPECT_FALSE(rules.CheckPush(unproven, 2));
}

// On arrival shard 0 seals its verdict on a push; another shard follows a
// verdict only as shard 0 sealed it.
TEST(RequestRulesTest, AVerdictIsFollowedOnlyAsShardZeroSealedIt) {
  auto seal = std::make_shared<const FactSeal>(std::string(32, 'k'));
  RequestRules shard0;
  shard0.Configure({0, true, 64, 0, seal});
  RequestRules shard1;
  shard1.Configure({0, true, 64, 1, seal});
  Shown shown{8, seal->Seal(AdmittedQuota{0, 1, 5, 8})};
  const Message first = SealedPush(0, 5, 8, shown);
  EXPECT_FALSE(shard0.CheckPush(first, 0));
  shown.verdict = wire::PushVerdict::Drop;
  shown.staleness = 3;
  shown.verdict_seal =
      shard0.SealVerdict(first, wire::PushStatus::Dropped, shown.staleness);
  EXPECT_EQ(shown.verdict_seal.size(), kFactSealBytes);
  // Shard 1 seals nothing; a refusal is no verdict.
  EXPECT_EQ(shard1.SealVerdict(first, wire::PushStatus::Applied, 3), "");
  EXPECT_EQ(shard0.SealVerdict(first, wire::PushStatus::Refused, 0), "");
  // The worker turns "drop" into "apply", or makes the push look fresher.
  Shown applied = shown;
  applied.verdict = wire::PushVerdict::Apply;
  Shown fresher = shown;
  fresher.staleness = 0;
  for (const Shown& forged : {applied, fresher}) {
    auto refused = shard1.CheckPush(SealedPush(0, 5, 8, forged), 0);
    ASSERT_TRUE(refused);
    EXPECT_EQ(refused->reason, wire::RefusalReason::Verdict);
  }
  EXPECT_FALSE(shard1.CheckPush(SealedPush(0, 5, 8, shown), 0));
  // A job of one shard: nobody follows, nothing is sealed.
  RequestRules alone;
  alone.Configure({0, true, 64, 0, seal, /*others_follow=*/false});
  EXPECT_FALSE(alone.CheckPush(first, 0));
  EXPECT_EQ(alone.SealVerdict(first, wire::PushStatus::Applied, 0), "");
}

TEST(RequestRulesTest, AClockReadIsNoLaterThanTheShardServed) {
  RequestRules rules = OnCommit();
  EXPECT_EQ(rules.ClockRead(0, 7), 7);  // nothing served: its word
  rules.NotePull(0, 5);
  EXPECT_EQ(rules.ClockRead(0, 7), 5);
  EXPECT_EQ(rules.ClockRead(0, 4), 4);
  EXPECT_EQ(rules.ClockRead(1, 7), 7);
}

TEST(RequestRulesTest, RefusalsCountInARowUntilOneIsAccepted) {
  RequestRules rules = OnCommit();
  auto in_a_row = [&](int worker) {
    Message report;
    report.header = rules.Report(static_cast<uint32_t>(worker), 3,
                                 wire::RefusalReason::Duplicate, 0);
    EXPECT_TRUE(VerifyHeader(&report).ok());
    const auto* refused = report.envelope->body_as_PushRefused();
    EXPECT_EQ(refused->reason(), wire::RefusalReason::Duplicate);
    return refused->in_a_row();
  };
  EXPECT_EQ(in_a_row(0), 1u);
  EXPECT_EQ(in_a_row(0), 2u);
  EXPECT_EQ(in_a_row(1), 1u);
  rules.Accepted(0);
  EXPECT_EQ(in_a_row(0), 1u);
}

TEST(RequestRulesTest, AnImpostorIsReportedAgainstItsProvenRank) {
  RequestRules rules = OnCommit();
  Message msg = Push(0, 3);
  msg.rank = 1;  // worker 1's connection sent it
  EXPECT_FALSE(rules.ReportImpostor(msg, InvalidArgument("frames"), 0));
  auto report =
      rules.ReportImpostor(msg, FailedPrecondition("as another sender"), 0);
  ASSERT_TRUE(report);
  Message got;
  got.header = std::move(*report);
  ASSERT_TRUE(VerifyHeader(&got).ok());
  EXPECT_EQ(got.envelope->body_as_PushRefused()->worker(), 1u);
  EXPECT_EQ(got.envelope->body_as_PushRefused()->reason(),
            wire::RefusalReason::Impersonation);
}

}  // namespace
}  // namespace lockstep

// The role messages built in the wire layer (worker_messages.h,
// shard_messages.h, MakeHeartbeatHeader) read back as the fields they were
// built from, with their sender.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/wire/message.h"
#include "common/wire/shard_messages.h"
#include "common/wire/worker_messages.h"

namespace lockstep {
namespace {

Message Read(zmq::message_t header) {
  Message msg;
  msg.header = std::move(header);
  const Status verified = VerifyHeader(&msg);
  EXPECT_TRUE(verified.ok()) << verified.ToString();
  return msg;
}

TEST(RoleMessagesTest, AnAdmissionCarriesItsQuotaSliceAndSeal) {
  AdmissionFields fields;
  fields.clock = 7;
  fields.go = true;
  fields.quota = 48;
  fields.epoch = 1.5;
  fields.offset = 96;
  fields.quota_seal = std::string("\x01\x02\x03", 3);
  const Message msg = Read(MakeAdmissionHeader(fields));
  ASSERT_EQ(msg.envelope->body_type(), wire::Body::Admission);
  EXPECT_EQ(msg.envelope->sender_role(), wire::Role::Coordinator);
  const wire::Admission* a = msg.envelope->body_as_Admission();
  EXPECT_EQ(a->clock(), 7);
  EXPECT_TRUE(a->go());
  EXPECT_FALSE(a->finished());
  EXPECT_FALSE(a->evaluate());
  EXPECT_EQ(a->batch_quota(), 48u);
  EXPECT_EQ(a->epoch(), 1.5);
  EXPECT_EQ(a->batch_offset(), 96u);
  ASSERT_NE(a->quota_seal(), nullptr);
  EXPECT_EQ(std::string(a->quota_seal()->begin(), a->quota_seal()->end()),
            fields.quota_seal);
}

TEST(RoleMessagesTest, AnAdmissionWithoutASealCarriesNone) {
  AdmissionFields fields;
  fields.clock = 3;
  fields.finished = true;
  fields.evaluate = true;
  const Message msg = Read(MakeAdmissionHeader(fields));
  const wire::Admission* a = msg.envelope->body_as_Admission();
  EXPECT_TRUE(a->finished());
  EXPECT_TRUE(a->evaluate());
  EXPECT_FALSE(a->go());
  EXPECT_TRUE(a->quota_seal() == nullptr || a->quota_seal()->size() == 0);
}

TEST(RoleMessagesTest, AWorkersReportsNameItsRoleAndRank) {
  ClockDoneFields done;
  done.clock = 12;
  done.batch = 32;
  done.costs.compute_s = 0.25;
  done.costs.loss = 0.75;
  done.memory_available = 0.5;
  done.costs.staleness = 2;
  done.costs.dropped = 1;
  done.epoch = 4;
  done.refused = 1;
  Message msg = Read(MakeClockDoneHeader({false, 3}, done));
  EXPECT_EQ(msg.envelope->sender_role(), wire::Role::Worker);
  EXPECT_EQ(msg.envelope->sender_rank(), 3);
  const wire::ClockDone* d = msg.envelope->body_as_ClockDone();
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->clock(), 12);
  EXPECT_EQ(d->batch(), 32u);
  EXPECT_EQ(d->compute_s(), 0.25);
  EXPECT_EQ(d->loss(), 0.75);
  EXPECT_EQ(d->mem_available(), 0.5);
  EXPECT_EQ(d->staleness(), 2);
  EXPECT_EQ(d->dropped(), 1u);
  EXPECT_EQ(d->epoch(), 4u);
  EXPECT_EQ(d->refused(), 1u);

  msg = Read(
      MakeEvaluationHeader({true, 0}, {9, 0.5, 0.875, 1000, true, 4, 2.5}));
  EXPECT_EQ(msg.envelope->sender_role(), wire::Role::Evaluator);
  const wire::Evaluation* e = msg.envelope->body_as_Evaluation();
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->clock(), 9);
  EXPECT_EQ(e->test_accuracy(), 0.875);
  EXPECT_EQ(e->samples(), 1000u);
  EXPECT_TRUE(e->final());
  EXPECT_EQ(e->seconds(), 2.5);

  msg = Read(MakeAdmitHeader({false, 1}, 5, 2));
  const wire::Admit* admit = msg.envelope->body_as_Admit();
  ASSERT_NE(admit, nullptr);
  EXPECT_EQ(admit->clock(), 5);
  EXPECT_EQ(admit->epoch(), 2u);
}

TEST(RoleMessagesTest, AShardsMessagesNameTheShardAsTheirSender) {
  Message msg = Read(MakeCommittedHeader(2, 41, 3));
  EXPECT_EQ(msg.envelope->sender_role(), wire::Role::Server);
  EXPECT_EQ(msg.envelope->sender_rank(), 2);
  const wire::Committed* c = msg.envelope->body_as_Committed();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->clock(), 41);
  EXPECT_EQ(c->shard(), 2u);
  EXPECT_EQ(c->applied_pushes(), 3u);

  msg = Read(MakeRestoredHeader(1, 3, 17, 99));
  const wire::Restored* r = msg.envelope->body_as_Restored();
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->epoch(), 3u);
  EXPECT_EQ(r->round(), 17u);
  EXPECT_EQ(r->clock(), 99);

  msg = Read(MakePromotedHeader(1, 50));
  ASSERT_NE(msg.envelope->body_as_Promoted(), nullptr);
  EXPECT_EQ(msg.envelope->body_as_Promoted()->applied_clock(), 50);
  msg = Read(MakeBackupReadyHeader(4));
  ASSERT_NE(msg.envelope->body_as_BackupReady(), nullptr);
  EXPECT_EQ(msg.envelope->body_as_BackupReady()->shard(), 4u);

  msg = Read(MakeCommitHeader(8, {0, 2}));
  EXPECT_EQ(msg.envelope->sender_role(), wire::Role::Coordinator);
  const wire::Commit* commit = msg.envelope->body_as_Commit();
  ASSERT_NE(commit, nullptr);
  EXPECT_EQ(commit->clock(), 8);
  EXPECT_EQ(std::vector<uint32_t>(commit->workers()->begin(),
                                  commit->workers()->end()),
            (std::vector<uint32_t>{0, 2}));

  msg = Read(MakeSnapshotStartHeader(6, 59, 4));
  const wire::SnapshotStart* start = msg.envelope->body_as_SnapshotStart();
  ASSERT_NE(start, nullptr);
  EXPECT_EQ(start->round(), 6u);
  EXPECT_EQ(start->clock(), 59);
  EXPECT_EQ(start->keep_from(), 4u);

  msg = Read(MakePromoteHeader(1, {"tcp://a:1", "tcp://b:2"}));
  const wire::Promote* promote = msg.envelope->body_as_Promote();
  ASSERT_NE(promote, nullptr);
  EXPECT_EQ(promote->shard(), 1u);
  ASSERT_EQ(promote->backups_at()->size(), 2u);
  EXPECT_EQ(promote->backups_at()->Get(1)->endpoint()->str(), "tcp://b:2");
  msg = Read(MakeFollowHeader(1, "tcp://a:1"));
  EXPECT_EQ(msg.envelope->body_as_Follow()->primary()->str(), "tcp://a:1");
  msg = Read(MakeRerouteHeader(1, "tcp://c:3"));
  EXPECT_EQ(msg.envelope->body_as_Reroute()->endpoint()->str(), "tcp://c:3");

  msg = Read(MakeHeartbeatHeader(12, wire::Role::Server, 1));
  ASSERT_NE(msg.envelope->body_as_Heartbeat(), nullptr);
  EXPECT_EQ(msg.envelope->body_as_Heartbeat()->clock(), 12);
  EXPECT_EQ(msg.envelope->sender_rank(), 1);
}

}  // namespace
}  // namespace lockstep

#include "worker/heartbeat_thread.h"

#include <gtest/gtest.h>

#include <thread>

#include "common/clock.h"
#include "common/transport/zmq/zmq_socket.h"
#include "common/wire/message.h"

namespace lockstep {
namespace {

// A coordinator's ROUTER that answers `answer` of the heartbeats it gets
// and counts them all, on the calling thread, for `ms` milliseconds.
int ServeHeartbeats(zmq::socket_t& router, int ms, bool answer,
                    int* rank_seen) {
  int received = 0;
  const int64_t end = NowMillis() + ms;
  Message msg;
  while (NowMillis() < end) {
    zmq::pollitem_t item{static_cast<void*>(router), 0, ZMQ_POLLIN, 0};
    PollSockets(&item, 1, std::chrono::milliseconds(5));
    while (true) {
      auto got = ReceiveMessage(router, true, &msg);
      if (!got.ok() || !*got) break;
      if (!VerifyHeader(&msg).ok() ||
          msg.envelope->body_type() != wire::Body::Heartbeat) {
        continue;
      }
      ++received;
      *rank_seen = msg.envelope->sender_rank();
      if (!answer) continue;
      flatbuffers::FlatBufferBuilder fbb(64);
      auto body = wire::CreateHeartbeat(fbb, 3);
      Message reply;
      reply.peer = msg.peer;
      reply.header = FinishEnvelope(fbb, wire::Body::Heartbeat, body.Union(),
                                    wire::Role::Coordinator, 0);
      EXPECT_TRUE(SendMessage(router, true, std::move(reply)).ok());
    }
  }
  return received;
}

TEST(HeartbeatThreadTest, BeatsAtItsIntervalAndRecordsTheReplies) {
  std::string bound;
  auto router = BindRouter("tcp://127.0.0.1:0", &bound);
  ASSERT_TRUE(router.ok()) << router.status().ToString();
  auto beats = HeartbeatThread::Start(bound, wire::Role::Worker, 5, 20);
  ASSERT_TRUE(beats.ok()) << beats.status().ToString();
  EXPECT_EQ((*beats)->last_reply_ms(), 0);
  int rank = -1;
  const int silent = ServeHeartbeats(*router, 200, false, &rank);
  EXPECT_EQ((*beats)->last_reply_ms(), 0);  // nobody answered yet
  const int64_t before = NowMillis();
  const int answered = ServeHeartbeats(*router, 200, true, &rank);
  // 20 ms apart: about ten per 200 ms, however busy the machine is.
  EXPECT_GE(silent + answered, 8);
  EXPECT_LE(silent + answered, 30);
  EXPECT_EQ(rank, 5);
  EXPECT_GE((*beats)->last_reply_ms(), before);
}

TEST(HeartbeatThreadTest, StopsPromptlyWhenDestroyed) {
  std::string bound;
  auto router = BindRouter("tcp://127.0.0.1:0", &bound);
  ASSERT_TRUE(router.ok());
  auto beats = HeartbeatThread::Start(bound, wire::Role::Worker, 0, 1000);
  ASSERT_TRUE(beats.ok());
  const int64_t start = NowMillis();
  beats->reset();
  EXPECT_LT(NowMillis() - start, 500);
}

TEST(HeartbeatThreadTest, RefusesAnUnusableEndpoint) {
  EXPECT_FALSE(
      HeartbeatThread::Start("bogus://x", wire::Role::Worker, 0, 100).ok());
}

}  // namespace
}  // namespace lockstep

#include "common/transport/inproc/data_port.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "common/transport/data_channel.h"
#include "common/transport/data_port.h"
#include "common/transport/inproc/data_channel.h"
#include "common/transport/inproc/mailbox.h"
#include "common/transport/zmq/zmq_socket.h"

namespace lockstep {
namespace {

Message WithPayload(size_t bytes) {
  Message msg;
  msg.header = zmq::message_t(std::string("head"));
  msg.payloads.emplace_back(bytes);
  std::memset(msg.payloads[0].data(), 0x5a, bytes);
  return msg;
}

// Waits up to 2 s for a message on `port`.
bool ReceiveOnPort(DataPort& port, Message* out) {
  for (int i = 0; i < 200; ++i) {
    std::vector<zmq::pollitem_t> items;
    port.AddPollItems(&items);
    PollSockets(items.data(), items.size(), std::chrono::milliseconds(10));
    port.Process(items.data());
    auto got = port.Receive(out);
    if (got.ok() && *got) return true;
  }
  return false;
}

TEST(InprocDataPortTest, HandsPayloadsOverWithoutCopying) {
  auto port = DataPort::Bind("inproc://zero-copy:0");
  ASSERT_TRUE(port.ok()) << port.status().message();
  auto channel = DataChannel::Connect((*port)->bound(), 1);
  ASSERT_TRUE(channel.ok()) << channel.status().message();
  Message sent = WithPayload(1 << 20);
  const void* bytes = sent.payloads[0].data();
  ASSERT_TRUE((*channel)->Send(std::move(sent)).ok());
  Message got;
  ASSERT_TRUE(ReceiveOnPort(**port, &got));
  EXPECT_EQ(got.payloads[0].data(), bytes);  // the very same buffer
  EXPECT_EQ(got.envelope, nullptr);          // still to be verified
  EXPECT_FALSE(got.peer.empty());
}

TEST(InprocDataPortTest, NameIsTakenWhileBoundAndFreeAfterwards) {
  {
    auto first = DataPort::Bind("inproc://taken");
    ASSERT_TRUE(first.ok());
    auto second = DataPort::Bind("inproc://taken");
    ASSERT_FALSE(second.ok());
    EXPECT_NE(second.status().message().find("already bound"),
              std::string::npos);
  }
  EXPECT_TRUE(DataPort::Bind("inproc://taken").ok());
}

TEST(InprocDataPortTest, ConnectWaitsForAPortBoundLater) {
  std::unique_ptr<DataPort> port;
  std::thread binder([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    port = std::move(DataPort::Bind("inproc://late").value());
  });
  auto channel = DataChannel::Connect("inproc://late", 5);
  binder.join();
  EXPECT_TRUE(channel.ok()) << channel.status().message();
}

TEST(InprocDataPortTest, ConnectGivesUpWhenNothingIsBound) {
  auto channel = DataChannel::Connect("inproc://nobody", 0.05);
  ASSERT_FALSE(channel.ok());
  EXPECT_NE(channel.status().message().find("inproc://nobody"),
            std::string::npos);
}

TEST(InprocDataPortTest, ClientSeesTheServerGoAndServerSeesTheClientGo) {
  auto port = DataPort::Bind("inproc://gone:0");
  ASSERT_TRUE(port.ok());
  auto channel = DataChannel::Connect((*port)->bound(), 1);
  ASSERT_TRUE(channel.ok());
  ASSERT_TRUE((*channel)->Send(WithPayload(8)).ok());
  Message request;
  ASSERT_TRUE(ReceiveOnPort(**port, &request));
  channel->reset();  // the client goes away
  Message reply = WithPayload(8);
  reply.peer = request.peer;
  EXPECT_FALSE((*port)->Send(std::move(reply)).ok());

  auto second = DataChannel::Connect((*port)->bound(), 1);
  ASSERT_TRUE(second.ok());
  port->reset();  // the server goes away
  Message msg;
  EXPECT_FALSE((*second)->Receive(&msg).ok());
  EXPECT_FALSE((*second)->Send(WithPayload(8)).ok());
}

TEST(MailboxTest, FdIsReadableExactlyWhileAMessageWaitsOrItIsClosed) {
  auto box = Mailbox::Create();
  ASSERT_TRUE(box.ok());
  auto readable = [&] {
    zmq::pollitem_t item{nullptr, (*box)->fd(), ZMQ_POLLIN, 0};
    return PollSockets(&item, 1, std::chrono::milliseconds(0)) == 1;
  };
  EXPECT_FALSE(readable());
  ASSERT_TRUE((*box)->Put(WithPayload(4)));
  ASSERT_TRUE((*box)->Put(WithPayload(4)));
  EXPECT_TRUE(readable());
  Message msg;
  ASSERT_TRUE((*box)->Take(&msg));
  EXPECT_TRUE(readable());  // one still waits
  ASSERT_TRUE((*box)->Take(&msg));
  EXPECT_FALSE(readable());
  EXPECT_FALSE((*box)->Take(&msg));
  (*box)->Close();
  EXPECT_TRUE(readable());
  EXPECT_FALSE((*box)->Put(WithPayload(4)));
}

}  // namespace
}  // namespace lockstep

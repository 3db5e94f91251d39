// A data port served by a thread that echoes every message back, numbered
// messages to check what comes back, and a check that the server closed a
// connection: for tests of the data plane's transports.
// Thread-safety: EchoServer's thread owns the port until Stop().
#ifndef LOCKSTEP_TESTS_SUPPORT_ECHO_SERVER_H_
#define LOCKSTEP_TESTS_SUPPORT_ECHO_SERVER_H_

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/transport/data_channel.h"
#include "common/transport/data_port.h"
#include "common/transport/zmq/zmq_socket.h"

namespace lockstep {

// A server thread that echoes every message back to its sender, as a
// server shard's loop would (poll, Process, Receive, Send).
class EchoServer {
 public:
  explicit EchoServer(std::unique_ptr<DataPort> port)
      : endpoint_(port->bound()),
        port_(std::move(port)),
        thread_([this] { Loop(); }) {}
  ~EchoServer() { Stop(); }
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  // Where clients connect.
  const std::string& endpoint() const { return endpoint_; }
  // REQUIRES: Stop() was called.
  const DataPort& port() const { return *port_; }
  EchoServer(const EchoServer&) = delete;
  EchoServer& operator=(const EchoServer&) = delete;
  uint64_t echoed() const { return echoed_; }
  // The rank the last message's connection proved (Message::rank).
  int last_rank() const { return last_rank_; }

 private:
  void Loop() {
    std::vector<zmq::pollitem_t> items;
    Message msg;
    while (!stop_) {
      items.clear();
      port_->AddPollItems(&items);
      PollSockets(items.data(), items.size(), std::chrono::milliseconds(20));
      port_->Process(items.data());
      while (true) {
        auto got = port_->Receive(&msg);
        if (!got.ok() || !*got) break;
        last_rank_ = msg.rank;
        Message reply;
        reply.peer = msg.peer;
        reply.header = std::move(msg.header);
        reply.payloads = std::move(msg.payloads);
        if (port_->Send(std::move(reply)).ok()) ++echoed_;
      }
    }
  }
  std::string endpoint_;
  std::unique_ptr<DataPort> port_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> echoed_{0};
  std::atomic<int> last_rank_{-2};
  std::thread thread_;
};

inline Message Numbered(uint32_t n, size_t payload_bytes) {
  Message msg;
  msg.header = zmq::message_t(&n, sizeof(n));
  zmq::message_t payload(payload_bytes);
  auto* bytes = static_cast<uint8_t*>(payload.data());
  for (size_t i = 0; i < payload_bytes; ++i) {
    bytes[i] = static_cast<uint8_t>(i * 7 + n);
  }
  msg.payloads.push_back(std::move(payload));
  return msg;
}

// Receives `count` messages from `channel` within 60 s.
inline std::vector<Message> ReceiveN(DataChannel& channel, size_t count) {
  std::vector<Message> out;
  for (int i = 0; i < 600 && out.size() < count; ++i) {
    zmq::pollitem_t item = channel.PollItem();
    PollSockets(&item, 1, std::chrono::milliseconds(100));
    Message msg;
    while (out.size() < count) {
      auto got = channel.Receive(&msg);
      if (!got.ok() || !*got) break;
      out.push_back(std::move(msg));
    }
  }
  return out;
}

inline void ExpectNumbered(const Message& msg, uint32_t n,
                           size_t payload_bytes) {
  Message want = Numbered(n, payload_bytes);
  ASSERT_EQ(msg.header.size(), sizeof(n));
  EXPECT_EQ(std::memcmp(msg.header.data(), &n, sizeof(n)), 0);
  ASSERT_EQ(msg.payloads.size(), 1u);
  ASSERT_EQ(msg.payloads[0].size(), payload_bytes);
  EXPECT_EQ(std::memcmp(msg.payloads[0].data(), want.payloads[0].data(),
                        payload_bytes),
            0)
      << "message " << n;
}

// True when the server closes `fd` within 5 s.
inline bool ClosedByPeer(int fd) {
  for (int i = 0; i < 500; ++i) {
    char buf[256];
    const ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) return true;
    usleep(10000);
  }
  return false;
}

}  // namespace lockstep

#endif  // LOCKSTEP_TESTS_SUPPORT_ECHO_SERVER_H_

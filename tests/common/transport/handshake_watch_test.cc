#include "common/transport/zmq/handshake_watch.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "common/clock.h"
#include "common/transport/transport_keys.h"
#include "common/transport/zmq/zap_handler.h"
#include "common/transport/zmq/zmq_socket.h"
#include "tests/support/curve_dealer.h"
#include "tests/support/job_key_files.h"

namespace lockstep {
namespace {

// A coordinator's CURVE ROUTER (this job's keys) and its watch; clients
// connect to it holding whatever keys a test gives them.
class HandshakeWatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = NewJobKeysDir();
    InstallTransportKeys(LoadJobKey(dir_, KeyRole::kCoordinator));
    auto router = BindRouter("tcp://127.0.0.1:0", &bound_);
    ASSERT_TRUE(router.ok()) << router.status().message();
    router_ = std::move(*router);
    auto watch = HandshakeWatch::Attach(router_, "a peer", bound_, true);
    ASSERT_TRUE(watch.ok()) << watch.status().message();
    server_watch_ = std::move(*watch);
  }
  void TearDown() override { InstallTransportKeys(std::nullopt); }

  // Polls both watches (and keeps the router's queue drained) until
  // `done` or 5 s.
  template <typename Done>
  bool PollUntil(HandshakeWatch& client, Done done) {
    const int64_t deadline = NowMillis() + 5000;
    while (NowMillis() < deadline) {
      client.Poll();
      server_watch_->Poll();
      if (done()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

  std::string dir_;
  std::string bound_;
  zmq::socket_t router_;
  std::unique_ptr<HandshakeWatch> server_watch_;
};

TEST_F(HandshakeWatchTest, AnotherJobsKeyFileIsRefusedOnBothSides) {
  // Its coordinator key is the other job's: the handshake cannot verify.
  const std::string other = NewJobKeysDir();
  const RoleKeys stranger = LoadJobKey(other, KeyRole::kWorker);
  zmq::socket_t dealer = CurveDealer(
      bound_, &stranger, stranger.public_key(KeyRole::kCoordinator));
  auto watch = HandshakeWatch::Attach(dealer, "the coordinator", bound_, false);
  ASSERT_TRUE(watch.ok());
  EXPECT_TRUE(PollUntil(**watch,
                        [&] {
                          return !(*watch)->Refusal().ok() &&
                                 server_watch_->failed_handshakes() > 0;
                        }))
      << "client: " << (*watch)->Refusal().ToString() << ", server failures "
      << server_watch_->failed_handshakes();
  EXPECT_NE((*watch)->Refusal().message().find("refused this process"),
            std::string::npos)
      << (*watch)->Refusal().message();
  EXPECT_NE((*watch)->Refusal().message().find("--keys"), std::string::npos);
}

TEST_F(HandshakeWatchTest, AKeyTheZapHandlerDeniesIsRefusedAtOnce) {
  // The right coordinator key, but a client key of no job's.
  const RoleKeys stranger = LoadJobKey(NewJobKeysDir(), KeyRole::kWorker);
  const RoleKeys ours = LoadJobKey(dir_, KeyRole::kWorker);
  zmq::socket_t dealer =
      CurveDealer(bound_, &stranger, ours.public_key(KeyRole::kCoordinator));
  auto watch = HandshakeWatch::Attach(dealer, "the coordinator", bound_, false);
  ASSERT_TRUE(watch.ok());
  EXPECT_TRUE(PollUntil(**watch, [&] { return !(*watch)->Refusal().ok(); }))
      << "server failures " << server_watch_->failed_handshakes();
  EXPECT_NE((*watch)->Refusal().message().find("ZAP"), std::string::npos)
      << (*watch)->Refusal().message();
  EXPECT_TRUE(PollUntil(
      **watch, [&] { return server_watch_->failed_handshakes() > 0; }));
}

TEST_F(HandshakeWatchTest, TheJobsOwnKeyConnectsWithoutARefusal) {
  const RoleKeys ours = LoadJobKey(dir_, KeyRole::kWorker);
  zmq::socket_t dealer =
      CurveDealer(bound_, &ours, ours.public_key(KeyRole::kCoordinator));
  auto watch = HandshakeWatch::Attach(dealer, "the coordinator", bound_, false);
  ASSERT_TRUE(watch.ok());
  EXPECT_TRUE(PollUntil(**watch, [&] { return (*watch)->connected(); }));
  EXPECT_TRUE((*watch)->Refusal().ok());
  EXPECT_EQ(server_watch_->failed_handshakes(), 0u);
}

TEST(HandshakeWatchUnreachableTest, NothingListeningIsRetriedNotRefused) {
  // An endpoint nobody listens on. (A socket file: a loopback TCP port
  // nobody listens on may meet its own connect now and then.)
  const std::string bound = "ipc://" + (std::filesystem::temp_directory_path() /
                                        "lockstep-nobody.sock")
                                           .string();
  zmq::socket_t dealer = CurveDealer(bound, nullptr, "");
  auto watch = HandshakeWatch::Attach(dealer, "the coordinator", bound, false);
  ASSERT_TRUE(watch.ok());
  const int64_t deadline = NowMillis() + 2000;
  while (NowMillis() < deadline) {
    (*watch)->Poll();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE((*watch)->Refusal().ok()) << "it may be starting";
  EXPECT_FALSE((*watch)->connected());
}

// A watch that goes before its socket stops the monitor first: the I/O
// thread that served the first socket (whose connect ZeroMQ kept
// retrying, each retry an event) still serves the next ones.
TEST(HandshakeWatchLifetimeTest, AWatchGoneLeavesTheIoThreadsServing) {
  for (int round = 0; round < 4; ++round) {
    {
      zmq::socket_t first = CurveDealer("tcp://127.0.0.1:9", nullptr, "");
      auto watch =
          HandshakeWatch::Attach(first, "x", "tcp://127.0.0.1:9", false);
      ASSERT_TRUE(watch.ok());
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      watch->reset();
      // Retried connects meanwhile: events for a monitor whose reader is
      // gone.
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
    std::string bound;
    auto router = BindRouter("tcp://127.0.0.1:0", &bound);
    ASSERT_TRUE(router.ok());
    zmq::socket_t next = CurveDealer(bound, nullptr, "");
    auto watch = HandshakeWatch::Attach(next, "x", bound, false);
    ASSERT_TRUE(watch.ok());
    next.send(zmq::str_buffer("hello"), zmq::send_flags::dontwait);
    zmq::pollitem_t item{router->handle(), 0, ZMQ_POLLIN, 0};
    EXPECT_GT(PollSockets(&item, 1, std::chrono::milliseconds(3000)), 0)
        << "round " << round;
  }
}

}  // namespace
}  // namespace lockstep

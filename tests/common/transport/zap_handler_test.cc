#include "common/transport/zmq/zap_handler.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "common/security/worker_credentials.h"
#include "common/transport/transport_keys.h"
#include "common/transport/zmq/zmq_socket.h"
#include "common/wire/message.h"
#include "tests/support/curve_dealer.h"
#include "tests/support/job_key_files.h"

namespace lockstep {
namespace {

// What `router` receives within `ms` (the header's text), and its role.
bool ReceiveWithin(zmq::socket_t& router, int ms, Message* msg) {
  zmq::pollitem_t item{router.handle(), 0, ZMQ_POLLIN, 0};
  if (PollSockets(&item, 1, std::chrono::milliseconds(ms)) == 0) return false;
  auto got = ReceiveMessage(router, true, msg);
  return got.ok() && *got;
}

class ZapHandlerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = NewJobKeysDir();
    coordinator_ = LoadJobKey(dir_, KeyRole::kCoordinator);
    InstallTransportKeys(coordinator_);
  }
  void TearDown() override { InstallTransportKeys(std::nullopt); }

  // Sends "hello" from `dealer`; true when the router got it as `role`
  // (and worker credential `credential`).
  bool Reaches(zmq::socket_t& router, zmq::socket_t& dealer,
               const std::string& role, int ms = 3000,
               int64_t credential = -1) {
    dealer.send(zmq::str_buffer("hello"), zmq::send_flags::dontwait);
    Message msg;
    if (!ReceiveWithin(router, ms, &msg)) return false;
    EXPECT_EQ(msg.role, role);
    EXPECT_EQ(msg.credential, credential);
    return msg.header.to_string() == "hello";
  }

  std::string dir_;
  RoleKeys coordinator_;
};

TEST_F(ZapHandlerTest, TheControlPlaneNamesEachKeysRoleAndRefusesStrangers) {
  std::string bound;
  auto router = BindRouter("tcp://127.0.0.1:0", &bound);
  ASSERT_TRUE(router.ok()) << router.status().message();
  const std::string& server_public =
      coordinator_.public_key(KeyRole::kCoordinator);
  for (KeyRole role : {KeyRole::kServer, KeyRole::kWorker, KeyRole::kAdmin}) {
    const RoleKeys client = LoadJobKey(dir_, role);
    zmq::socket_t dealer = CurveDealer(bound, &client, server_public);
    EXPECT_TRUE(Reaches(*router, dealer, KeyRoleName(role)))
        << KeyRoleName(role);
  }
  const uint64_t refused = ZapRefusals();
  // Another job's worker key: the ZAP handler refuses it.
  const RoleKeys stranger = LoadJobKey(NewJobKeysDir(), KeyRole::kWorker);
  zmq::socket_t other = CurveDealer(bound, &stranger, server_public);
  EXPECT_FALSE(Reaches(*router, other, "", 1000));
  EXPECT_GE(ZapRefusals(), refused + 1);
  // No CURVE at all: the handshake cannot even start.
  zmq::socket_t plain = CurveDealer(bound, nullptr, "");
  EXPECT_FALSE(Reaches(*router, plain, "", 1000));
}

TEST_F(ZapHandlerTest, AWorkerCredentialIsAWorkerNamedByItsNumber) {
  std::string bound;
  auto router = BindRouter("tcp://127.0.0.1:0", &bound);
  ASSERT_TRUE(router.ok()) << router.status().message();
  const std::string& server_public =
      coordinator_.public_key(KeyRole::kCoordinator);
  const auto credential = WorkerCredentialKeys(coordinator_, 17);
  ASSERT_TRUE(credential.ok()) << credential.status().message();
  zmq::socket_t dealer = CurveDealer(bound, &*credential, server_public);
  EXPECT_TRUE(Reaches(*router, dealer, "worker", 3000, 17));
  // Another job's credential 17 is a stranger.
  const RoleKeys other = LoadJobKey(NewJobKeysDir(), KeyRole::kCoordinator);
  const auto stranger = WorkerCredentialKeys(other, 17);
  ASSERT_TRUE(stranger.ok());
  zmq::socket_t refused = CurveDealer(bound, &*stranger, server_public);
  EXPECT_FALSE(Reaches(*router, refused, "", 1000));
}

TEST_F(ZapHandlerTest, ADataPortTakesWorkersOnly) {
  EXPECT_TRUE(ZapAdmits(kDataPlaneDomain, KeyRole::kWorker));
  EXPECT_FALSE(ZapAdmits(kDataPlaneDomain, KeyRole::kServer));
  EXPECT_FALSE(ZapAdmits(kDataPlaneDomain, KeyRole::kAdmin));
  EXPECT_FALSE(ZapAdmits(kControlPlaneDomain, KeyRole::kCoordinator));
  EXPECT_FALSE(ZapAdmits("elsewhere", KeyRole::kWorker));
  InstallTransportKeys(LoadJobKey(dir_, KeyRole::kServer));
  std::string bound;
  auto router = BindRouter("tcp://127.0.0.1:0", &bound, kDataPlaneDomain);
  ASSERT_TRUE(router.ok());
  const std::string& server_public = coordinator_.public_key(KeyRole::kServer);
  const RoleKeys worker = LoadJobKey(dir_, KeyRole::kWorker);
  zmq::socket_t good = CurveDealer(bound, &worker, server_public);
  EXPECT_TRUE(Reaches(*router, good, "worker"));
  const RoleKeys admin = LoadJobKey(dir_, KeyRole::kAdmin);
  zmq::socket_t bad = CurveDealer(bound, &admin, server_public);
  EXPECT_FALSE(Reaches(*router, bad, "", 1000));
}

}  // namespace
}  // namespace lockstep

#include "common/security/worker_credentials.h"

#include <gtest/gtest.h>
#include <zmq.h>

#include <filesystem>
#include <set>

#include "common/durable_file.h"
#include "common/security/key_flags.h"
#include "tests/support/temp_dir.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;

// A fresh job's keys in a folder of `dir`.
std::string FreshKeys(const TempDir& dir, WorkerKeys workers) {
  static int made = 0;
  std::string keys = dir.path() + "/keys" + std::to_string(++made);
  EXPECT_TRUE(WriteJobKeys(keys, DataSecurity::kAead, workers).ok());
  return keys;
}

RoleKeys Load(const std::string& path) {
  auto keys = LoadRoleKeys(path);
  EXPECT_TRUE(keys.ok()) << keys.status().message();
  return keys.ok() ? *keys : RoleKeys{};
}

std::string Raw(const std::string& z85) {
  std::string raw(32, '\0');
  EXPECT_NE(zmq_z85_decode(reinterpret_cast<uint8_t*>(raw.data()), z85.c_str()),
            nullptr);
  return raw;
}

class WorkerCredentialsTest : public ::testing::Test {
 protected:
  const TempDir tmp_{"credentials-test"};
};

TEST_F(WorkerCredentialsTest, EachWorkerHoldsAKeyPairOfItsOwnAndNoSharedKey) {
  const std::string dir = FreshKeys(tmp_, WorkerKeys::kCredentials);
  EXPECT_FALSE(fs::exists(dir + "/worker.key"));
  for (uint32_t n : {0u, 1u, 4095u}) {
    ASSERT_TRUE(WriteWorkerCredential(dir, n).ok()) << n;
  }
  const RoleKeys coordinator = Load(dir + "/coordinator.key");
  std::set<std::string> secrets;
  for (uint32_t n : {0u, 1u, 4095u}) {
    const std::string path = dir + "/" + WorkerCredentialFileName(n);
    EXPECT_EQ(fs::status(path).permissions() & fs::perms::all,
              fs::perms::owner_read | fs::perms::owner_write);
    const RoleKeys worker = Load(path);
    EXPECT_EQ(worker.role, KeyRole::kWorker);
    EXPECT_EQ(worker.credential, n);
    EXPECT_EQ(worker.data_plane, DataSecurity::kAead);
    // Its public-worker line is its own key pair's public key.
    char pub[41];
    ASSERT_EQ(zmq_curve_public(pub, worker.secret.c_str()), 0);
    EXPECT_EQ(worker.public_key(KeyRole::kWorker), pub);
    EXPECT_NE(worker.public_key(KeyRole::kWorker),
              coordinator.public_key(KeyRole::kWorker));
    for (KeyRole r :
         {KeyRole::kCoordinator, KeyRole::kServer, KeyRole::kAdmin}) {
      EXPECT_EQ(worker.public_key(r), coordinator.public_key(r));
    }
    EXPECT_TRUE(secrets.insert(worker.secret).second) << n;
  }
  // A worker given the folder is told to name its own file.
  const auto from_folder = ResolveJobKeys(dir, "on", {KeyRole::kWorker});
  ASSERT_FALSE(from_folder.ok());
  EXPECT_NE(from_folder.status().message().find("worker-N.key"),
            std::string::npos)
      << from_folder.status().message();
  const auto own =
      ResolveJobKeys(dir + "/worker-1.key", "on", {KeyRole::kWorker});
  ASSERT_TRUE(own.ok()) << own.status().message();
  EXPECT_EQ((*own)->credential, 1);
  // A credential given out is never replaced; numbers stay in range.
  EXPECT_FALSE(WriteWorkerCredential(dir, 1).ok());
  EXPECT_FALSE(WriteWorkerCredential(dir, kMaxWorkerCredentials).ok());
}

TEST_F(WorkerCredentialsTest, TheCoordinatorAndAServerDeriveTheSameOnly) {
  const std::string dir = FreshKeys(tmp_, WorkerKeys::kShared);
  const RoleKeys coordinator = Load(dir + "/coordinator.key");
  const RoleKeys server = Load(dir + "/server.key");
  auto by_coordinator = WorkerCredentialKeys(coordinator, 42);
  auto by_server = WorkerCredentialKeys(server, 42);
  ASSERT_TRUE(by_coordinator.ok() && by_server.ok());
  EXPECT_EQ(by_coordinator->secret, by_server->secret);
  // A worker's or the admin's key cannot make a credential.
  EXPECT_FALSE(WorkerCredentialKeys(Load(dir + "/worker.key"), 43).ok());
  EXPECT_FALSE(WorkerCredentialKeys(Load(dir + "/admin.key"), 43).ok());
  // Another job's keys make other credentials.
  const RoleKeys other =
      Load(FreshKeys(tmp_, WorkerKeys::kShared) + "/coordinator.key");
  EXPECT_NE(WorkerCredentialKeys(other, 42)->secret, by_coordinator->secret);
}

TEST_F(WorkerCredentialsTest, TheIndexNamesACredentialsNumberAndNothingElse) {
  const std::string dir = FreshKeys(tmp_, WorkerKeys::kShared);
  const RoleKeys server = Load(dir + "/server.key");
  auto index = WorkerCredentialIndex::Create(server);
  ASSERT_TRUE(index.ok()) << index.status().message();
  for (uint32_t n : {0u, 7u, kMaxWorkerCredentials - 1}) {
    const auto keys = WorkerCredentialKeys(server, n);
    ASSERT_TRUE(keys.ok());
    EXPECT_EQ(index->NumberOf(Raw(keys->public_key(KeyRole::kWorker))), n);
  }
  // The shared worker key, a role's key and another job's credential are
  // none of them.
  EXPECT_FALSE(index->NumberOf(Raw(server.public_key(KeyRole::kWorker))));
  EXPECT_FALSE(index->NumberOf(Raw(server.public_key(KeyRole::kAdmin))));
  const RoleKeys other =
      Load(FreshKeys(tmp_, WorkerKeys::kShared) + "/server.key");
  EXPECT_FALSE(index->NumberOf(
      Raw(WorkerCredentialKeys(other, 7)->public_key(KeyRole::kWorker))));
  EXPECT_FALSE(index->NumberOf("short"));
  EXPECT_FALSE(WorkerCredentialIndex::Create(Load(dir + "/worker.key")).ok());
}

TEST_F(WorkerCredentialsTest, OnlyAWorkersFileMayNameACredential) {
  const std::string dir = FreshKeys(tmp_, WorkerKeys::kShared);
  ASSERT_TRUE(WriteWorkerCredential(dir, 3).ok());
  const std::string text = FormatRoleKeys(Load(dir + "/worker-3.key"));
  EXPECT_NE(text.find("\ncredential 3\n"), std::string::npos) << text;
  // A server's file that claims a credential is refused.
  RoleKeys server = Load(dir + "/server.key");
  server.credential = 3;
  const std::string path = dir + "/bad.key";
  ASSERT_TRUE(WriteFileDurably(path, FormatRoleKeys(server), 0600).ok());
  const auto loaded = LoadRoleKeys(path);
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find("'credential'"), std::string::npos)
      << loaded.status().message();
}

}  // namespace
}  // namespace lockstep

#include "common/security/job_keys.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "common/durable_file.h"
#include "common/security/key_flags.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;

std::string FreshDir() {
  std::string pattern =
      (fs::temp_directory_path() / "keys-test-XXXXXX").string();
  EXPECT_NE(mkdtemp(pattern.data()), nullptr);
  return pattern;
}

unsigned ModeOf(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 0777;
}

TEST(JobKeysTest, WritesOneFilePerRoleEachWithOnlyItsOwnSecret) {
  const std::string dir = FreshDir() + "/keys";
  ASSERT_TRUE(WriteJobKeys(dir, DataSecurity::kAuth).ok());
  EXPECT_EQ(ModeOf(dir), 0700u);
  std::vector<RoleKeys> all;
  for (KeyRole role : {KeyRole::kCoordinator, KeyRole::kServer,
                       KeyRole::kWorker, KeyRole::kAdmin}) {
    const std::string path = dir + "/" + KeyFileName(role);
    EXPECT_EQ(ModeOf(path), 0600u) << path;
    auto keys = LoadRoleKeys(path);
    ASSERT_TRUE(keys.ok()) << keys.status().message();
    EXPECT_EQ(keys->role, role);
    EXPECT_EQ(keys->data_plane, DataSecurity::kAuth);
    all.push_back(*keys);
  }
  for (size_t r = 0; r < all.size(); ++r) {
    // Every file names every role's public key, the same ones.
    EXPECT_EQ(all[r].publics, all[0].publics);
    for (size_t o = 0; o < all.size(); ++o) {
      if (o != r) {
        EXPECT_NE(all[r].secret, all[o].secret);
      }
    }
    // A secret key belongs to its role's public key.
    char pub[41];
    ASSERT_EQ(zmq_curve_public(pub, all[r].secret.c_str()), 0);
    EXPECT_EQ(pub, all[r].public_key(all[r].role));
  }
  // No secret shared between roles: a worker's file holds nothing of a
  // server's (the data plane's tickets need a server's or the
  // coordinator's secret key: peer_ticket_test).
  EXPECT_EQ(ReadWholeFile(dir + "/worker.key")->find("data-secret"),
            std::string::npos);
}

TEST(JobKeysTest, NeverReplacesAJobsKeys) {
  const std::string dir = FreshDir();
  ASSERT_TRUE(WriteJobKeys(dir, DataSecurity::kAuth).ok());
  const std::string before = *ReadWholeFile(dir + "/worker.key");
  Status again = WriteJobKeys(dir, DataSecurity::kAuth);
  EXPECT_FALSE(again.ok());
  EXPECT_NE(again.message().find("never replaced"), std::string::npos);
  EXPECT_EQ(*ReadWholeFile(dir + "/worker.key"), before);
}

TEST(JobKeysTest, RefusesAFileOthersMayReadWithoutShowingTheKey) {
  const std::string dir = FreshDir();
  ASSERT_TRUE(WriteJobKeys(dir, DataSecurity::kAuth).ok());
  const std::string path = dir + "/server.key";
  const RoleKeys keys = *LoadRoleKeys(path);
  ASSERT_EQ(chmod(path.c_str(), 0644), 0);
  auto loaded = LoadRoleKeys(path);
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find("chmod 600"), std::string::npos)
      << loaded.status().message();
  EXPECT_EQ(loaded.status().message().find(keys.secret), std::string::npos);
  // Group-readable (a Secret mounted with mode 0440) is the pod's own.
  ASSERT_EQ(chmod(path.c_str(), 0440), 0);
  EXPECT_TRUE(LoadRoleKeys(path).ok());
}

TEST(JobKeysTest, RefusesAnotherUsersFile) {
  const std::string dir = FreshDir();
  ASSERT_TRUE(WriteJobKeys(dir, DataSecurity::kAuth).ok());
  const std::string path = dir + "/worker.key";
  ASSERT_TRUE(LoadRoleKeys(path).ok());
  // Neither this user's nor root's (chown needs root, as the suite's
  // network tests do).
  ASSERT_EQ(chown(path.c_str(), 4321, 4321), 0);
  auto loaded = LoadRoleKeys(path);
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find("belongs to uid 4321"),
            std::string::npos)
      << loaded.status().message();
}

// Writes `text` as a 0600 key file and loads it.
StatusOr<RoleKeys> LoadText(const std::string& text) {
  const std::string path = FreshDir() + "/bad.key";
  EXPECT_TRUE(WriteFileDurably(path, text, 0600).ok());
  return LoadRoleKeys(path);
}

TEST(JobKeysTest, NamesWhatIsWrongWithAMalformedFile) {
  const std::string dir = FreshDir();
  ASSERT_TRUE(WriteJobKeys(dir, DataSecurity::kAuth).ok());
  const RoleKeys good = *LoadRoleKeys(dir + "/worker.key");
  const std::string text = FormatRoleKeys(good);
  auto without = [&](const std::string& name) {
    const size_t at = text.find("\n" + name + " ");
    const size_t end = text.find('\n', at + 1);
    return text.substr(0, at) + text.substr(end);
  };
  auto message = [](const StatusOr<RoleKeys>& r) {
    return r.ok() ? std::string("loaded") : r.status().message();
  };
  EXPECT_NE(message(LoadText(without("secret"))).find("no 'secret' line"),
            std::string::npos);
  // A key file of an older version, with the data secret workers and
  // servers shared, still loads: a resumed run keeps its keys.
  EXPECT_TRUE(
      LoadText(text + "data-secret " + std::string(64, 'a') + "\n").ok());
  EXPECT_NE(message(LoadText(text + "extra 1\n")).find("unknown line 'extra'"),
            std::string::npos);
  EXPECT_NE(message(LoadText(text + "role worker\n")).find("given twice"),
            std::string::npos);
  std::string bad_key = text;
  bad_key.replace(bad_key.find("secret ") + 7, 3, "~~~");
  EXPECT_NE(message(LoadText(bad_key)).find("not a Z85"), std::string::npos);
  std::string sealed = text;
  sealed.replace(sealed.find("data-plane auth"), 15, "data-plane aead");
  auto aead = LoadText(sealed);
  ASSERT_TRUE(aead.ok()) << aead.status().message();
  EXPECT_EQ(aead->data_plane, DataSecurity::kAead);
  std::string unknown = text;
  unknown.replace(unknown.find("data-plane auth"), 15, "data-plane rot1");
  EXPECT_NE(message(LoadText(unknown)).find("unknown data-plane security"),
            std::string::npos);
  std::string bad_role = text;
  bad_role.replace(bad_role.find("role worker"), 11, "role wizard");
  EXPECT_NE(message(LoadText(bad_role)).find("unknown key role"),
            std::string::npos);
}

// Z85 keys may hold '#', which must not be read as a comment.
TEST(JobKeysTest, KeysHoldingAHashRoundTrip) {
  int seen = 0;
  for (int i = 0; i < 200 && seen < 3; ++i) {
    const std::string dir = FreshDir();
    ASSERT_TRUE(WriteJobKeys(dir, DataSecurity::kAuth).ok());
    const std::string text = *ReadWholeFile(dir + "/admin.key");
    if (text.find('#', text.find('\n')) == std::string::npos) continue;
    ++seen;
    auto keys = LoadRoleKeys(dir + "/admin.key");
    ASSERT_TRUE(keys.ok()) << keys.status().message();
    EXPECT_EQ(FormatRoleKeys(*keys), text);
  }
  EXPECT_EQ(seen, 3);
}

TEST(JobKeysTest, KnowsTheRoleOfEachPublicKey) {
  const std::string dir = FreshDir();
  ASSERT_TRUE(WriteJobKeys(dir, DataSecurity::kAuth).ok());
  const RoleKeys keys = *LoadRoleKeys(dir + "/coordinator.key");
  for (int r = 0; r < kKeyRoles; ++r) {
    uint8_t raw[32];
    ASSERT_NE(zmq_z85_decode(raw, keys.publics[r].c_str()), nullptr);
    EXPECT_EQ(
        keys.RoleOfPublicKey(std::string(reinterpret_cast<char*>(raw), 32)),
        static_cast<KeyRole>(r));
  }
  EXPECT_EQ(keys.RoleOfPublicKey(std::string(32, 'x')), std::nullopt);
  EXPECT_EQ(keys.RoleOfPublicKey("short"), std::nullopt);
}

TEST(KeyFlagsTest, TakesAFileAFolderOrTheEnvironmentAndOffOnlyByChoice) {
  const std::string dir = FreshDir();
  ASSERT_TRUE(WriteJobKeys(dir, DataSecurity::kAuth).ok());
  unsetenv("LOCKSTEP_KEYS");
  auto file = ResolveJobKeys(dir + "/server.key", "on", {KeyRole::kServer});
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_EQ((*file)->role, KeyRole::kServer);
  auto folder = ResolveJobKeys(dir, "on", {KeyRole::kWorker});
  ASSERT_TRUE(folder.ok()) << folder.status().message();
  EXPECT_EQ((*folder)->role, KeyRole::kWorker);
  setenv("LOCKSTEP_KEYS", dir.c_str(), 1);
  auto env = ResolveJobKeys("", "on", {KeyRole::kAdmin});
  unsetenv("LOCKSTEP_KEYS");
  ASSERT_TRUE(env.ok()) << env.status().message();
  EXPECT_EQ((*env)->role, KeyRole::kAdmin);

  auto none = ResolveJobKeys("", "on", {KeyRole::kWorker});
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("--security off"), std::string::npos);
  auto other = ResolveJobKeys(dir + "/worker.key", "on", {KeyRole::kServer});
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.status().message().find("is the worker key"),
            std::string::npos);
  auto off = ResolveJobKeys("", "off", {KeyRole::kWorker});
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(off->has_value());
  EXPECT_FALSE(ResolveJobKeys(dir, "off", {KeyRole::kWorker}).ok());
  EXPECT_FALSE(ResolveJobKeys(dir, "maybe", {KeyRole::kWorker}).ok());
}

}  // namespace
}  // namespace lockstep

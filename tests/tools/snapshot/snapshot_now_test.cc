#include "tools/snapshot/snapshot_now.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "common/security/job_keys.h"
#include "common/transport/transport_keys.h"
#include "tests/support/temp_dir.h"

namespace lockstep {
namespace {

// Which admin key `lockstep-snapshot now RUN_DIR` speaks with, by itself.
class AdminKeyTest : public ::testing::Test {
 protected:
  void SetUp() override { unsetenv("LOCKSTEP_KEYS"); }
  void TearDown() override { InstallTransportKeys(std::nullopt); }
  TempDir run_{"lockstep-admin-key"};
};

TEST_F(AdminKeyTest, ALaunchedRunsOwnAdminKey) {
  ASSERT_TRUE(WriteJobKeys(run_.path() + "/keys", DataSecurity::kAuth).ok());
  ASSERT_TRUE(InstallAdminKey(run_.path(), "", "on").ok());
  ASSERT_NE(InstalledTransportKeys(), nullptr);
  EXPECT_EQ(InstalledTransportKeys()->role, KeyRole::kAdmin);
}

TEST_F(AdminKeyTest, ARunLaunchedWithSecurityOffNeedsNone) {
  std::ofstream(run_.path() + "/config.json")
      << R"({"launcher":{"security":"off"}})";
  ASSERT_TRUE(InstallAdminKey(run_.path(), "", "on").ok());
  EXPECT_EQ(InstalledTransportKeys(), nullptr);
}

TEST_F(AdminKeyTest, OtherwiseItSaysWhatIsMissing) {
  std::ofstream(run_.path() + "/config.json")
      << R"({"launcher":{"security":"auth"}})";
  Status none = InstallAdminKey(run_.path(), "", "on");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.message().find("no job key"), std::string::npos);
}

}  // namespace
}  // namespace lockstep

#include "coordinator/faults/credential_bans.h"

#include <gtest/gtest.h>

#include "common/durable_file.h"
#include "coordinator/metric_families.h"
#include "tests/support/temp_dir.h"

namespace lockstep {
namespace {

TEST(CredentialBansTest, ABanOutlivesTheCoordinatorOfTheseKeysOnly) {
  const TempDir dir("bans-test");
  const std::string& run = dir.path();
  {
    CredentialBans bans(run, "KEYS-A");
    ASSERT_TRUE(bans.Load().ok());
    EXPECT_FALSE(bans.Banned(7));
    bans.Ban(7, "worker 2 removed from the job:\nfor its pushes");
    bans.Ban(-1, "the shared key: nothing to ban");
    EXPECT_TRUE(bans.Banned(7));
    EXPECT_FALSE(bans.Banned(-1));
  }
  // A restarted coordinator of the same keys keeps refusing it.
  CredentialBans restarted(run, "KEYS-A");
  ASSERT_TRUE(restarted.Load().ok());
  EXPECT_TRUE(restarted.Banned(7));
  EXPECT_FALSE(restarted.Banned(8));
  // Another job's keys in the same folder: nothing is banned.
  CredentialBans other(run, "KEYS-B");
  ASSERT_TRUE(other.Load().ok());
  EXPECT_FALSE(other.Banned(7));
  // Without a run folder the bans live in the process.
  CredentialBans memory("", "KEYS-A");
  ASSERT_TRUE(memory.Load().ok());
  memory.Ban(1, "why");
  EXPECT_TRUE(memory.Banned(1));
}

TEST(CredentialBansTest, ADamagedFileIsAnErrorAndMetricsCountRefusals) {
  const TempDir dir("bans-test");
  const std::string& run = dir.path();
  ASSERT_TRUE(
      WriteFileDurably(run + "/banned-credentials", "keys K\nseven why\n")
          .ok());
  CredentialBans bans(run, "K");
  const Status loaded = bans.Load();
  EXPECT_FALSE(loaded.ok());
  EXPECT_NE(loaded.message().find("line 2"), std::string::npos)
      << loaded.message();
  CredentialBans fine("", "K");
  fine.Ban(3, "why");
  fine.CountRefusal();
  PrometheusText text;
  fine.AddMetrics(&text);
  const std::string out = text.Text(DescribeJobMetric);
  EXPECT_NE(out.find("# TYPE lockstep_banned_credentials gauge"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("lockstep_banned_credentials 1"), std::string::npos);
  EXPECT_NE(out.find("lockstep_refused_registrations_total{reason=\""
                     "banned_credential\"} 1"),
            std::string::npos)
      << out;
}

}  // namespace
}  // namespace lockstep

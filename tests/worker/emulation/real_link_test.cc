// RealLink's tc commands (what runs against a real veth pair is exercised
// by tests/tools/launch/real_links_test.cc, as root): both ends, half the
// latency each way with netem, the rate in kbit, a token bucket without netem,
// and a clean removal.
#include "worker/emulation/real_link.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace lockstep {
namespace {

using Argv = std::vector<std::string>;

TEST(RealLinkTest, ParsesTheLaunchersFlagAndNamesTheForm) {
  EXPECT_TRUE(RealLink::Parse("hub:w3:lsnet").ok());
  for (const char* bad : {"", "hub:w3", "hub::lsnet", "a:b:c:d"}) {
    const auto link = RealLink::Parse(bad);
    ASSERT_FALSE(link.ok()) << bad;
    EXPECT_NE(link.status().message().find("HUB_NS:HUB_DEV:DEV"),
              std::string::npos);
  }
}

TEST(RealLinkTest, ShapesBothEndsWithHalfTheLatencyEachWay) {
  const RealLink link = *RealLink::Parse("hub:w3:lsnet");
  const LinkProfile::Step step{0, 20, 10};
  const auto commands = link.Commands(&step, /*netem=*/true);
  ASSERT_EQ(commands.size(), 2u);
  EXPECT_EQ(commands[0],
            (Argv{"tc", "qdisc", "replace", "dev", "lsnet", "root", "netem",
                  "delay", "5000us", "rate", "20000kbit", "limit", "100000"}));
  EXPECT_EQ(commands[1], (Argv{"tc", "-n", "hub", "qdisc", "replace", "dev",
                               "w3", "root", "netem", "delay", "5000us", "rate",
                               "20000kbit", "limit", "100000"}));
}

TEST(RealLinkTest, WithoutNetemATokenBucketCarriesTheRate) {
  const RealLink link = *RealLink::Parse("hub:w0:lsnet");
  const LinkProfile::Step slow{0, 20, 10};  // 2.5 MB/s: 8 KiB bucket
  EXPECT_EQ(link.Commands(&slow, false)[0],
            (Argv{"tc", "qdisc", "replace", "dev", "lsnet", "root", "tbf",
                  "rate", "20000kbit", "burst", "8192", "limit", "67108864"}));
  const LinkProfile::Step fast{0, 1000, 0};  // 125 MB/s: 1 ms is 125000 B
  EXPECT_EQ(link.Commands(&fast, false)[1][11], "burst");
  EXPECT_EQ(link.Commands(&fast, false)[1][12], "125000");
}

TEST(RealLinkTest, NoStepRemovesTheShaping) {
  const RealLink link = *RealLink::Parse("hub:w1:lsnet");
  const auto commands = link.Commands(nullptr, true);
  EXPECT_EQ(commands[0], (Argv{"tc", "qdisc", "del", "dev", "lsnet", "root"}));
  EXPECT_EQ(commands[1],
            (Argv{"tc", "-n", "hub", "qdisc", "del", "dev", "w1", "root"}));
}

}  // namespace
}  // namespace lockstep

#include "worker/emulation/link_profile.h"

#include <gtest/gtest.h>

#include <string>

#include "worker/emulation/hetero_profile.h"

namespace lockstep {
namespace {

TEST(LinkProfileTest, ChargesLatencyPlusBytesOverBandwidthFromItsClock) {
  LinkProfile link;
  EXPECT_TRUE(link.empty());
  EXPECT_EQ(link.Seconds(5, 1 << 20), 0);
  EXPECT_EQ(link.AddItem("1000/0.2"), "");
  EXPECT_EQ(link.AddItem("8/5@150"), "");
  link.Finish();
  EXPECT_FALSE(link.empty());
  // 1 MB at 1000 Mbit/s: 8 ms, plus 0.2 ms.
  EXPECT_DOUBLE_EQ(link.Seconds(0, 1000000), 0.0082);
  EXPECT_DOUBLE_EQ(link.Seconds(149, 1000000), 0.0082);
  // From clock 150: 1 MB at 8 Mbit/s is a second, plus 5 ms.
  EXPECT_DOUBLE_EQ(link.Seconds(150, 1000000), 1.005);
  EXPECT_DOUBLE_EQ(link.Seconds(150, 0), 0.005);
  EXPECT_EQ(link.ToString(), "net=1000/0.2,net=8/5@150");
}

TEST(LinkProfileTest, AScheduleStartsAtItsFirstClockAndTheLaterItemWins) {
  LinkProfile link;
  EXPECT_EQ(link.AddItem("10/1@20"), "");
  EXPECT_EQ(link.AddItem("100/1@10"), "");
  EXPECT_EQ(link.AddItem("50/1@20"), "");
  link.Finish();
  EXPECT_EQ(link.Seconds(9, 1000), 0);  // free before the first step
  EXPECT_DOUBLE_EQ(link.Seconds(10, 125000), 0.011);
  EXPECT_DOUBLE_EQ(link.Seconds(25, 125000), 0.021);
  EXPECT_EQ(link.ToString(), "net=100/1@10,net=50/1@20");
}

TEST(LinkProfileTest, RefusesMalformedItems) {
  for (const char* bad : {"", "100", "0/1", "-5/1", "100/-1", "100/1@-3",
                          "100/1@2@3", "100/1/2", "fast/1", "100/1@x"}) {
    LinkProfile link;
    EXPECT_NE(link.AddItem(bad), "") << bad;
  }
}

TEST(LinkProfileTest, IsAnItemOfTheHeterogeneityProfile) {
  auto p = HeteroProfile::Parse("linear=0.001+0.0001,net=50/0.2@150,x2", 1);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_DOUBLE_EQ(p->link().Seconds(150, 6250), 0.0012);
  EXPECT_EQ(p->link().Seconds(149, 6250), 0);
  // The canonical text reads back as the same profile.
  EXPECT_EQ(p->ToString(), "linear=0.001+1e-04,x2,net=50/0.2@150");
  auto again = HeteroProfile::Parse(p->ToString(), 1);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->ToString(), p->ToString());
  auto bad = HeteroProfile::Parse("net=50", 1);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("net=MBPS/LATENCY_MS[@C]"),
            std::string::npos)
      << bad.status().message();
}

}  // namespace
}  // namespace lockstep

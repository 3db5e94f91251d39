#include "common/engine/hostlist.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace lockstep {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> Hosts(const std::string& list) {
  auto hosts = ExpandHostlist(list);
  EXPECT_TRUE(hosts.ok()) << list << ": " << hosts.status().message();
  return hosts.ok() ? *hosts : std::vector<std::string>{};
}

TEST(HostlistTest, ExpandsSlurmsCompressedForm) {
  EXPECT_THAT(Hosts("localhost"), ElementsAre("localhost"));
  EXPECT_THAT(Hosts("node[01-03,07],gpu5"),
              ElementsAre("node01", "node02", "node03", "node07", "gpu5"));
  // A range keeps the width of its first number, also past a carry.
  EXPECT_THAT(Hosts("n[08-10]"), ElementsAre("n08", "n09", "n10"));
  EXPECT_THAT(Hosts("n[9-11]"), ElementsAre("n9", "n10", "n11"));
  // Several brackets in one name multiply, in order; text may follow.
  EXPECT_THAT(Hosts("r[1-2]n[1,3].ib"),
              ElementsAre("r1n1.ib", "r1n3.ib", "r2n1.ib", "r2n3.ib"));
  EXPECT_THAT(Hosts("a,b[2],c"), ElementsAre("a", "b2", "c"));
}

TEST(HostlistTest, RefusesWhatIsNotAHostList) {
  for (const std::string bad :
       {"", "a,,b", "node[1-3", "node1-3]", "node[3-1]", "node[a-b]",
        "node[1-]", "node[[1]]", "n[]", "n[0-99999999]"}) {
    auto hosts = ExpandHostlist(bad);
    EXPECT_EQ(hosts.status().code(), StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_THAT(ExpandHostlist("node[3-1]").status().message(),
              HasSubstr("'3-1' runs backwards"));
  // The product of brackets is bounded too, not only each range.
  EXPECT_THAT(ExpandHostlist("a[0-999]b[0-999]").status().message(),
              HasSubstr("too many hosts"));
}

}  // namespace
}  // namespace lockstep

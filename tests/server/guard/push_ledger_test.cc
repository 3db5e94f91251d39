#include "server/guard/push_ledger.h"

#include <gtest/gtest.h>

namespace lockstep {
namespace {

TEST(PushLedgerTest, RepeatsOnlyTheLastPushOfItsWorker) {
  PushLedger ledger;
  EXPECT_FALSE(ledger.Repeat(0, 7, 3).has_value());
  ledger.Remember(0, {7, 3, wire::PushStatus::Applied, 2});
  ledger.Remember(1, {9, 3, wire::PushStatus::Refused, 0});
  auto again = ledger.Repeat(0, 7, 3);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->status, wire::PushStatus::Applied);
  EXPECT_EQ(again->staleness, 2);
  EXPECT_FALSE(ledger.Repeat(0, 7, 4).has_value());  // another clock
  EXPECT_FALSE(ledger.Repeat(0, 8, 3).has_value());  // another request
  EXPECT_FALSE(ledger.Repeat(2, 7, 3).has_value());  // another worker
  EXPECT_EQ(ledger.Repeat(1, 9, 3)->status, wire::PushStatus::Refused);
  ledger.Remember(0, {8, 4, wire::PushStatus::Buffered, 0});
  EXPECT_FALSE(ledger.Repeat(0, 7, 3).has_value());  // no longer the last
  ledger.Clear();
  EXPECT_FALSE(ledger.Repeat(1, 9, 3).has_value());
}

}  // namespace
}  // namespace lockstep

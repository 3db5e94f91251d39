#include "coordinator/state/rank_assignment.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "tests/test_seed.h"

namespace lockstep {
namespace {

TEST(RankAssignmentTest, HintsWinAndTheRestFillInRegistrationOrder) {
  EXPECT_EQ(AssignRanks({-1, -1, -1}), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(AssignRanks({2, -1, 0}), (std::vector<int>{2, 1, 0}));
  // A taken or out-of-range hint is ignored.
  EXPECT_EQ(AssignRanks({1, 1, 7}), (std::vector<int>{1, 0, 2}));
}

TEST(RankAssignmentTest, RanksAreAlwaysAPermutation) {
  std::mt19937 rng(static_cast<uint32_t>(TestSeed()));
  for (int trial = 0; trial < 200; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 9);
    std::vector<int> hints(n);
    for (int& h : hints) h = static_cast<int>(rng() % (n + 3)) - 2;
    std::vector<int> ranks = AssignRanks(hints);
    for (int i = 0; i < n; ++i) {
      if (hints[i] >= 0 && hints[i] < n &&
          std::count(hints.begin(), hints.begin() + i, hints[i]) == 0) {
        EXPECT_EQ(ranks[i], hints[i]);  // the first claim of a hint wins
      }
    }
    std::sort(ranks.begin(), ranks.end());
    std::vector<int> want(n);
    std::iota(want.begin(), want.end(), 0);
    EXPECT_EQ(ranks, want);
  }
}

TEST(RankAssignmentTest, AJoinerTakesItsHintOrTheLowestFreeRank) {
  EXPECT_EQ(FreeRank(2, {0, 1, 3}, 4), 2);
  EXPECT_EQ(FreeRank(1, {0, 1, 3}, 4), 2);
  EXPECT_EQ(FreeRank(-1, {1, 2}, 4), 0);
  EXPECT_EQ(FreeRank(9, {0}, 4), 1);
}

}  // namespace
}  // namespace lockstep

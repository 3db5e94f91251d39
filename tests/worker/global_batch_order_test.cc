// Global data order under LB-BSP's changing quotas: however the global batch
// is split among workers, clock by clock, every epoch of the sequence
// trains on every sample exactly once.
#include "worker/global_batch_order.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "tests/test_seed.h"

namespace lockstep {
namespace {

// Splits `total` into `parts` random quotas (some may be 0).
std::vector<uint32_t> RandomQuotas(uint32_t total, uint32_t parts,
                                   std::mt19937_64& rng) {
  std::vector<uint32_t> cuts{0, total};
  std::uniform_int_distribution<uint32_t> cut(0, total);
  for (uint32_t i = 1; i < parts; ++i) cuts.push_back(cut(rng));
  std::sort(cuts.begin(), cuts.end());
  std::vector<uint32_t> quotas;
  for (size_t i = 1; i < cuts.size(); ++i) {
    quotas.push_back(cuts[i] - cuts[i - 1]);
  }
  return quotas;
}

TEST(GlobalBatchOrderTest, RandomQuotasCoverEverySampleOncePerEpoch) {
  std::mt19937_64 rng(TestSeed());
  for (int trial = 0; trial < 20; ++trial) {
    const uint64_t total = std::uniform_int_distribution<uint64_t>(5, 300)(rng);
    const uint32_t global = std::uniform_int_distribution<uint32_t>(1, 64)(rng);
    GlobalBatchOrder order(total, global, rng());
    // Every sample the workers trained on, in global position order.
    std::vector<uint64_t> seen;
    std::vector<uint64_t> slice;
    const int64_t clocks = static_cast<int64_t>(4 * total / global + 3);
    for (int64_t clock = 0; clock < clocks; ++clock) {
      const uint32_t workers =
          std::uniform_int_distribution<uint32_t>(1, 6)(rng);
      uint64_t offset = 0;
      for (uint32_t quota : RandomQuotas(global, workers, rng)) {
        order.Slice(clock, offset, quota, &slice);
        ASSERT_EQ(slice.size(), quota);
        seen.insert(seen.end(), slice.begin(), slice.end());
        offset += quota;
      }
    }
    ASSERT_EQ(seen.size(), static_cast<uint64_t>(clocks) * global);
    const uint64_t epochs = seen.size() / total;
    ASSERT_GE(epochs, 3u);
    for (uint64_t e = 0; e < epochs; ++e) {
      std::vector<uint64_t> epoch(seen.begin() + e * total,
                                  seen.begin() + (e + 1) * total);
      std::sort(epoch.begin(), epoch.end());
      for (uint64_t i = 0; i < total; ++i) {
        ASSERT_EQ(epoch[i], i) << "trial " << trial << ", epoch " << e
                               << ": total " << total << ", X " << global;
      }
    }
  }
}

TEST(GlobalBatchOrderTest, TheSplitDoesNotChangeWhichSamplesAClockTrainsOn) {
  GlobalBatchOrder a(100, 24, 9), b(100, 24, 9);
  std::vector<uint64_t> whole, part, joined;
  for (int64_t clock = 0; clock < 12; ++clock) {
    a.Slice(clock, 0, 24, &whole);
    joined.clear();
    for (uint64_t offset : {0u, 5u, 17u}) {
      const uint32_t count = offset == 0 ? 5 : offset == 5 ? 12 : 7;
      b.Slice(clock, offset, count, &part);
      joined.insert(joined.end(), part.begin(), part.end());
    }
    EXPECT_EQ(joined, whole) << "clock " << clock;
  }
}

TEST(GlobalBatchOrderTest, EachEpochIsADifferentPermutation) {
  GlobalBatchOrder order(50, 10, 4);
  std::vector<uint64_t> first, second;
  for (uint64_t p = 0; p < 50; ++p) first.push_back(order.SampleAt(p));
  for (uint64_t p = 50; p < 100; ++p) second.push_back(order.SampleAt(p));
  EXPECT_NE(first, second);
  std::vector<uint64_t> identity(50);
  for (uint64_t i = 0; i < 50; ++i) identity[i] = i;
  EXPECT_NE(first, identity);
}

}  // namespace
}  // namespace lockstep

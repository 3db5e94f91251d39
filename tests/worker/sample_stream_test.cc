#include "worker/sample_stream.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <numeric>
#include <set>
#include <vector>

namespace lockstep {
namespace {

class SampleStreamTest : public ::testing::Test {
 protected:
  static std::vector<uint64_t> Sorted(std::vector<uint64_t> v) {
    std::sort(v.begin(), v.end());
    return v;
  }
};

TEST_F(SampleStreamTest, GlobalPermutationIsSeededPermutation) {
  const uint64_t seed = 17;
  std::cout << "seed=" << seed << "\n";
  const std::vector<uint64_t> p = SampleStream::GlobalPermutation(1000, seed);
  std::vector<uint64_t> identity(1000);
  std::iota(identity.begin(), identity.end(), uint64_t{0});
  EXPECT_EQ(Sorted(p), identity);
  EXPECT_NE(p, identity);
  EXPECT_EQ(p, SampleStream::GlobalPermutation(1000, seed));
  EXPECT_NE(p, SampleStream::GlobalPermutation(1000, seed + 1));
  EXPECT_EQ(SampleStream::GlobalPermutation(1, seed), std::vector<uint64_t>{0});
}

TEST_F(SampleStreamTest, PartitionsAreDisjointAndCoverAllSamples) {
  const uint64_t seed = 99;
  std::cout << "seed=" << seed << "\n";
  for (uint32_t workers : {1u, 3u, 7u}) {
    const uint64_t total = 1001;
    std::vector<uint64_t> all;
    for (uint32_t rank = 0; rank < workers; ++rank) {
      SampleStream stream(total, workers, rank, seed);
      const uint64_t expected_size = (total - rank + workers - 1) / workers;
      ASSERT_EQ(stream.partition_size(), expected_size);
      std::vector<uint64_t> batch;
      stream.Next(static_cast<uint32_t>(expected_size), &batch);
      EXPECT_EQ(stream.passes(), 1u);
      all.insert(all.end(), batch.begin(), batch.end());
    }
    std::vector<uint64_t> identity(total);
    std::iota(identity.begin(), identity.end(), uint64_t{0});
    EXPECT_EQ(Sorted(all), identity) << "workers=" << workers;
  }
}

TEST_F(SampleStreamTest, UnionOfKthBatchesIsGlobalPermutationSlice) {
  const uint64_t seed = 2024;
  const uint64_t total = 600;
  const uint32_t workers = 4;
  const uint32_t per_worker = 5;
  std::cout << "seed=" << seed << "\n";
  const std::vector<uint64_t> p = SampleStream::GlobalPermutation(total, seed);
  std::vector<SampleStream> streams;
  for (uint32_t rank = 0; rank < workers; ++rank) {
    streams.emplace_back(total, workers, rank, seed);
  }
  const uint64_t steps = total / (workers * per_worker);
  for (uint64_t k = 0; k < steps; ++k) {
    std::vector<uint64_t> merged;
    std::vector<uint64_t> batch;
    for (SampleStream& stream : streams) {
      stream.Next(per_worker, &batch);
      ASSERT_EQ(batch.size(), per_worker);
      merged.insert(merged.end(), batch.begin(), batch.end());
    }
    const auto begin = p.begin() + k * workers * per_worker;
    std::vector<uint64_t> slice(begin, begin + workers * per_worker);
    ASSERT_EQ(Sorted(merged), Sorted(slice)) << "batch " << k;
  }
}

TEST_F(SampleStreamTest, EveryPassVisitsEachOwnedSampleOnce) {
  const uint64_t seed = 5;
  std::cout << "seed=" << seed << "\n";
  SampleStream stream(103, 2, 1, seed);  // owns 51 samples
  ASSERT_EQ(stream.partition_size(), 51u);
  std::vector<uint64_t> visits;
  std::vector<uint64_t> batch;
  // Batches of 7 do not divide 51, so batches straddle pass boundaries.
  for (int i = 0; i < 51; ++i) {
    stream.Next(7, &batch);
    ASSERT_EQ(batch.size(), 7u);
    visits.insert(visits.end(), batch.begin(), batch.end());
  }
  EXPECT_EQ(stream.consumed(), 357u);
  EXPECT_EQ(stream.passes(), 7u);
  const std::vector<uint64_t> first(visits.begin(), visits.begin() + 51);
  const std::vector<uint64_t> owned = Sorted(first);
  EXPECT_EQ(std::set<uint64_t>(owned.begin(), owned.end()).size(), 51u);
  std::vector<std::vector<uint64_t>> orders;
  for (int pass = 0; pass < 7; ++pass) {
    const auto begin = visits.begin() + pass * 51;
    std::vector<uint64_t> order(begin, begin + 51);
    EXPECT_EQ(Sorted(order), owned) << "pass " << pass;
    orders.push_back(order);
  }
  EXPECT_NE(orders[0], orders[1]);  // reshuffled on wrap-around
  EXPECT_NE(orders[1], orders[2]);
}

TEST_F(SampleStreamTest, CountLargerThanPartitionWrapsWithinOneCall) {
  const uint64_t seed = 8;
  std::cout << "seed=" << seed << "\n";
  SampleStream stream(30, 3, 2, seed);  // owns 10 samples
  std::vector<uint64_t> batch;
  stream.Next(25, &batch);
  ASSERT_EQ(batch.size(), 25u);
  EXPECT_EQ(stream.passes(), 2u);
  EXPECT_EQ(stream.consumed(), 25u);
  const std::vector<uint64_t> pass0(batch.begin(), batch.begin() + 10);
  const std::vector<uint64_t> pass1(batch.begin() + 10, batch.begin() + 20);
  EXPECT_EQ(Sorted(pass0), Sorted(pass1));
  std::vector<uint64_t> rest;
  stream.Next(5, &rest);  // completes pass 2 with the 5 samples not yet seen
  std::vector<uint64_t> pass2(batch.begin() + 20, batch.end());
  pass2.insert(pass2.end(), rest.begin(), rest.end());
  EXPECT_EQ(Sorted(pass2), Sorted(pass0));
  EXPECT_EQ(stream.passes(), 3u);
  stream.Next(0, &batch);
  EXPECT_TRUE(batch.empty());
  EXPECT_EQ(stream.consumed(), 30u);
}

TEST_F(SampleStreamTest, SameArgumentsGiveSameSequence) {
  const uint64_t seed = 123;
  std::cout << "seed=" << seed << "\n";
  SampleStream a(50, 2, 0, seed);
  SampleStream b(50, 2, 0, seed);
  SampleStream other_rank(50, 2, 1, seed);
  std::vector<uint64_t> xa, xb, xo;
  for (int i = 0; i < 20; ++i) {
    a.Next(9, &xa);
    b.Next(9, &xb);
    other_rank.Next(9, &xo);
    ASSERT_EQ(xa, xb) << "call " << i;
    for (uint64_t id : xa) {
      EXPECT_EQ(std::count(xo.begin(), xo.end(), id), 0) << "call " << i;
    }
  }
}

TEST_F(SampleStreamTest, SkipToContinuesExactlyWhereTheStreamWouldBe) {
  // 103 samples over 3 workers: rank 1 owns 34; skip points inside the
  // first pass, at a pass boundary and several passes on.
  for (uint64_t skip : {0u, 7u, 34u, 68u, 150u}) {
    SCOPED_TRACE(skip);
    SampleStream walked(103, 3, 1, 9);
    std::vector<uint64_t> batch;
    for (uint64_t done = 0; done < skip;) {
      const auto count =
          static_cast<uint32_t>(std::min<uint64_t>(5, skip - done));
      walked.Next(count, &batch);
      done += count;
    }
    SampleStream skipped(103, 3, 1, 9);
    skipped.SkipTo(skip);
    EXPECT_EQ(skipped.consumed(), walked.consumed());
    EXPECT_EQ(skipped.passes(), walked.passes());
    std::vector<uint64_t> want, got;
    walked.Next(80, &want);
    skipped.Next(80, &got);
    EXPECT_EQ(got, want);
  }
}

}  // namespace
}  // namespace lockstep

#include "server/shard/background_apply.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace lockstep {
namespace {

TEST(BackgroundApplyTest, WaitReturnsOnlyAfterTheWorkFinished) {
  BackgroundApply apply;
  std::vector<int> values(1 << 16, 0);
  apply.Start([&values] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    for (int& v : values) v = 7;
  });
  apply.Wait();
  for (int v : values) ASSERT_EQ(v, 7);
}

TEST(BackgroundApplyTest, RunsOneWorkAtATimeInOrder) {
  BackgroundApply apply;
  std::atomic<int> running{0};
  std::atomic<int> most{0};
  std::vector<int> order;
  for (int i = 0; i < 20; ++i) {
    apply.Start([&, i] {
      const int now = ++running;
      most = std::max(most.load(), now);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      order.push_back(i);  // safe only if runs never overlap
      --running;
    });
  }
  apply.Wait();
  EXPECT_EQ(most.load(), 1);
  ASSERT_EQ(order.size(), 20u);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(order[i], i);
}

TEST(BackgroundApplyTest, DestructionWaitsForRunningWork) {
  std::atomic<bool> done{false};
  {
    BackgroundApply apply;
    apply.Start([&done] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      done = true;
    });
  }
  EXPECT_TRUE(done.load());
}

}  // namespace
}  // namespace lockstep

// Per-clock jitter (jitter=SIGMA): seeded and reproducible, log-normal
// with median 1 and the given spread, independent between clocks.
#include "worker/emulation/clock_jitter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "worker/emulation/hetero_profile.h"

namespace lockstep {
namespace {

ClockJitter Jitter(const std::string& value, uint64_t seed) {
  ClockJitter jitter;
  EXPECT_EQ(jitter.AddItem(value), "") << value;
  jitter.set_seed(seed);
  return jitter;
}

TEST(ClockJitterTest, RejectsBadSpreadsWithTheForm) {
  for (const char* bad : {"", "-0.1", "1.5", "lots", "0.1/2", "nan"}) {
    ClockJitter jitter;
    EXPECT_NE(jitter.AddItem(bad).find("jitter=SIGMA"), std::string::npos)
        << bad;
  }
  ClockJitter twice;
  EXPECT_EQ(twice.AddItem("0.1"), "");
  EXPECT_NE(twice.AddItem("0.2").find("only one"), std::string::npos);
}

TEST(ClockJitterTest, ZeroOrNoneIsNoNoise) {
  const ClockJitter none;
  const ClockJitter zero = Jitter("0", 4);
  for (int64_t c = 0; c < 100; ++c) {
    EXPECT_EQ(none.FactorAt(c), 1);
    EXPECT_EQ(zero.FactorAt(c), 1);
  }
  EXPECT_EQ(none.ToString(), "");
  EXPECT_EQ(zero.ToString(), "jitter=0");
}

TEST(ClockJitterTest, LogNormalWithMedianOneAndTheGivenSpread) {
  const ClockJitter jitter = Jitter("0.1", 9);
  std::vector<double> logs;
  double sum = 0, sum_sq = 0, lag = 0;
  constexpr int kClocks = 20000;
  for (int64_t c = 0; c < kClocks; ++c) {
    const double z = std::log(jitter.FactorAt(c));
    logs.push_back(z);
    sum += z;
    sum_sq += z * z;
    if (c > 0) lag += z * logs[c - 1];
  }
  const double mean = sum / kClocks;
  EXPECT_NEAR(mean, 0, 0.005);
  EXPECT_NEAR(std::sqrt(sum_sq / kClocks - mean * mean), 0.1, 0.005);
  // Independent clocks: no correlation with the clock before.
  EXPECT_NEAR(lag / (kClocks - 1) / 0.01, 0, 0.05);
  std::nth_element(logs.begin(), logs.begin() + kClocks / 2, logs.end());
  EXPECT_NEAR(logs[kClocks / 2], 0, 0.005);
}

TEST(ClockJitterTest, SameSeedSameNoiseOtherSeedOther) {
  const ClockJitter a = Jitter("0.05", 1), b = Jitter("0.05", 1);
  const ClockJitter c = Jitter("0.05", 2);
  int differ = 0;
  for (int64_t k = 0; k < 100; ++k) {
    EXPECT_EQ(a.FactorAt(k), b.FactorAt(k));
    differ += a.FactorAt(k) != c.FactorAt(k) ? 1 : 0;
  }
  EXPECT_GT(differ, 95);
}

TEST(ClockJitterTest, TheProfileScalesItsCostButNoReading) {
  const HeteroProfile plain = *HeteroProfile::Parse("linear=0.001+0.0001", 5);
  const HeteroProfile noisy =
      *HeteroProfile::Parse("linear=0.001+0.0001,jitter=0.2", 5);
  const ClockJitter jitter = Jitter("0.2", 5);  // seeded like the profile
  int changed = 0;
  for (int64_t c = 0; c < 200; ++c) {
    EXPECT_EQ(noisy.cpu_available(c), 1);
    EXPECT_DOUBLE_EQ(noisy.TargetSeconds(c, 64),
                     plain.TargetSeconds(c, 64) * jitter.FactorAt(c));
    changed += noisy.FactorAt(c) != 1 ? 1 : 0;
  }
  EXPECT_EQ(changed, 200);
}

}  // namespace
}  // namespace lockstep

// Co-located jobs (colo=P/L/D): seeded, so a run is reproducible; a clock
// costs the mean slowdown over its span; and the CPU reading shows a job
// from the end of the clock it started in, one clock before it slows a
// whole clock: the leading signal NARX's exogenous inputs are for.
#include "worker/colocated_load.h"

#include <gtest/gtest.h>

#include <cmath>

#include "worker/hetero_profile.h"

namespace lockstep {
namespace {

ColocatedLoad Load(const std::string& value, uint64_t seed) {
  ColocatedLoad load;
  EXPECT_EQ(load.AddItem(value), "") << value;
  load.set_seed(seed);
  return load;
}

TEST(ColocatedLoadTest, RejectsMalformedItemsWithTheForm) {
  for (const char* bad : {"", "0.1/0.5", "1.5/0.5/3", "0.1/1/3", "0.1/0/3",
                          "0.1/0.5/0", "a/b/c", "0.1/0.5/3/4"}) {
    ColocatedLoad load;
    EXPECT_NE(load.AddItem(bad).find("colo=P/L/D"), std::string::npos) << bad;
  }
}

TEST(ColocatedLoadTest, AClockCostsTheMeanSlowdownOverItsSpan) {
  const ColocatedLoad load = Load("0.1/0.5/2.5", 7);
  int loaded = 0;
  for (int64_t c = 0; c < 300; ++c) {
    double integral = 0;
    constexpr int kSteps = 4000;
    for (int k = 0; k < kSteps; ++k) {
      const double x = static_cast<double>(c) + (k + 0.5) / kSteps;
      integral += 1 / (1 - load.ShareAt(x)) / kSteps;
    }
    EXPECT_NEAR(load.SlowdownOf(c), integral, 2e-3) << "clock " << c;
    loaded += load.SlowdownOf(c) > 1 ? 1 : 0;
  }
  // About 1 - e^(-0.1 * 3.5) of the clocks see a job: not none, not all.
  EXPECT_GT(loaded, 40);
  EXPECT_LT(loaded, 200);
}

TEST(ColocatedLoadTest, TheReadingShowsAJobBeforeItSlowsAWholeClock) {
  const ColocatedLoad load = Load("0.05/0.5/4", 3);
  int seen = 0;
  for (int64_t c = 1; c < 2000; ++c) {
    const bool starts_within = load.ShareAt(static_cast<double>(c)) == 0 &&
                               load.AvailableAtEndOf(c) < 1;
    // Alone: no job before it, none more starting in c + 1.
    if (!starts_within || load.ShareAt(static_cast<double>(c - 1)) > 0 ||
        load.AvailableAtEndOf(c + 1) != 0.5) {
      continue;
    }
    ++seen;
    EXPECT_DOUBLE_EQ(load.AvailableAtEndOf(c), 0.5) << c;
    // Clock c is slowed only from the job's start; clock c + 1 all through.
    EXPECT_LT(load.SlowdownOf(c), 2.0) << c;
    EXPECT_DOUBLE_EQ(load.SlowdownOf(c + 1), 2.0) << c;
  }
  EXPECT_GT(seen, 20);
}

TEST(ColocatedLoadTest, SameSeedSameJobsOtherSeedOthers) {
  const ColocatedLoad a = Load("0.2/0.5/3", 1), b = Load("0.2/0.5/3", 1);
  const ColocatedLoad c = Load("0.2/0.5/3", 2);
  int differ = 0;
  for (int64_t k = 0; k < 200; ++k) {
    EXPECT_EQ(a.SlowdownOf(k), b.SlowdownOf(k));
    differ += a.SlowdownOf(k) != c.SlowdownOf(k) ? 1 : 0;
  }
  EXPECT_GT(differ, 20);
}

TEST(ColocatedLoadTest, TheProfileSlowsComputeAndReportsTheReading) {
  auto profile =
      HeteroProfile::Parse("linear=0.001+0.0001,x2,colo=0.05/0.5/4", 3);
  ASSERT_TRUE(profile.ok()) << profile.status().ToString();
  ColocatedLoad load = Load("0.05/0.5/4", 3);
  for (int64_t c = 0; c < 500; ++c) {
    EXPECT_DOUBLE_EQ(profile->FactorAt(c), 2 * load.SlowdownOf(c));
    EXPECT_DOUBLE_EQ(profile->cpu_available(c), load.AvailableAtEndOf(c) / 2);
  }
  EXPECT_NE(profile->ToString().find(",x2,colo=0.05/0.5/4"), std::string::npos)
      << profile->ToString();
  auto again = HeteroProfile::Parse(profile->ToString(), 3);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->ToString(), profile->ToString());
}

}  // namespace
}  // namespace lockstep

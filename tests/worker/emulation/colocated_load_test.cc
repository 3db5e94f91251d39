// Co-located jobs (colo=P/L/D[/LEAD]): seeded, so a run is reproducible; a
// clock costs the mean slowdown over its span; and the CPU reading shows a
// job from the end of the clock it started in, one clock before it slows a
// whole clock (LEAD clocks more with a lead): the leading signal NARX's
// exogenous inputs are for.
#include "worker/emulation/colocated_load.h"

#include <gtest/gtest.h>

#include <cmath>

#include "worker/emulation/hetero_profile.h"

namespace lockstep {
namespace {

ColocatedLoad Load(const std::string& value, uint64_t seed) {
  ColocatedLoad load;
  EXPECT_EQ(load.AddItem(value), "") << value;
  load.set_seed(seed);
  return load;
}

TEST(ColocatedLoadTest, RejectsMalformedItemsWithTheForm) {
  for (const char* bad :
       {"", "0.1/0.5", "1.5/0.5/3", "0.1/1/3", "0.1/0/3", "0.1/0.5/0", "a/b/c",
        "0.1/0.5/3/4/5", "0.1/0.5/3/-1", "0.1/0.5/3/x", "0.1/0.5/3/"}) {
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

TEST(ColocatedLoadTest, TheDemandLeadsTheSlowdownByTheLead) {
  for (double lead : {0.0, 1.0, 2.5}) {
    const std::string item = "0.08/0.5/3/" + std::to_string(lead);
    const ColocatedLoad load = Load(item, 11);
    int busy = 0;
    for (int k = 0; k < 40000; ++k) {
      const double x = k * 0.01 + 0.003;
      ASSERT_EQ(load.DemandAt(x), load.ShareAt(x + lead)) << item << " " << x;
      busy += load.DemandAt(x) > 0 ? 1 : 0;
    }
    EXPECT_GT(busy, 4000) << item;
    EXPECT_LT(busy, 36000) << item;
  }
}

TEST(ColocatedLoadTest, WithALeadOfOneTheReadingShowsAJobAClockEarlier) {
  // The lone jobs (none other around) that arrive within clock c: c's
  // reading shows them, c + 1 is slowed from the arrival point on and
  // c + 2 all through, while c is not slowed at all.
  const ColocatedLoad load = Load("0.05/0.5/4/1", 3);
  const ColocatedLoad same = Load("0.05/0.5/4", 3);
  int seen = 0;
  for (int64_t c = 2; c < 3000; ++c) {
    const auto at = static_cast<double>(c);
    // Nothing demanded over [c - 1, c] (jobs last 4 > 1 clocks), one job
    // at the end of c and of c + 1.
    if (load.DemandAt(at - 1) != 0 || load.DemandAt(at) != 0 ||
        load.AvailableAtEndOf(c) != 0.5 ||
        load.AvailableAtEndOf(c + 1) != 0.5) {
      continue;
    }
    ++seen;
    EXPECT_EQ(load.SlowdownOf(c), 1) << c;
    EXPECT_GT(load.SlowdownOf(c + 1), 1) << c;
    EXPECT_LT(load.SlowdownOf(c + 1), 2) << c;
    EXPECT_DOUBLE_EQ(load.SlowdownOf(c + 2), 2.0) << c;
    // The same draws: the job is the lead-0 one, one clock later.
    EXPECT_NEAR(load.SlowdownOf(c + 1), same.SlowdownOf(c), 1e-12) << c;
    EXPECT_EQ(load.AvailableAtEndOf(c), same.AvailableAtEndOf(c)) << c;
  }
  EXPECT_GT(seen, 20);
}

TEST(ColocatedLoadTest, TheLeadIsPrintedOnlyWhenGiven) {
  ColocatedLoad load;
  ASSERT_EQ(load.AddItem("0.1/0.5/6"), "");
  ASSERT_EQ(load.AddItem("0.1/0.25/2.5/1.5"), "");
  ASSERT_EQ(load.AddItem("0.1/0.25/2/0"), "");
  EXPECT_EQ(load.ToString(),
            "colo=0.1/0.5/6,colo=0.1/0.25/2.5/1.5,colo=0.1/0.25/2");
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

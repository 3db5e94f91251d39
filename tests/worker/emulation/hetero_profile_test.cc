#include "worker/emulation/hetero_profile.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "worker/emulation/clock_jitter.h"

namespace lockstep {
namespace {

HeteroProfile MustParse(const std::string& text, uint64_t seed = 1) {
  StatusOr<HeteroProfile> profile = HeteroProfile::Parse(text, seed);
  EXPECT_TRUE(profile.ok()) << text << ": " << profile.status().ToString();
  return profile.ok() ? *profile : HeteroProfile();
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The factor jitter=SIGMA gives a profile seeded `seed` at `clock`.
double JitterOf(const std::string& sigma, uint64_t seed, int64_t clock) {
  ClockJitter jitter;
  EXPECT_EQ(jitter.AddItem(sigma), "");
  jitter.set_seed(seed);
  return jitter.FactorAt(clock);
}

class HeteroProfileTest : public ::testing::Test {};

TEST_F(HeteroProfileTest, EmptyTextMeansNoEmulation) {
  for (const char* text : {"", "  "}) {
    const HeteroProfile p = MustParse(text);
    EXPECT_TRUE(p.empty());
    EXPECT_FALSE(p.has_cost_model());
    EXPECT_EQ(p.max_batch(), 0u);
    EXPECT_EQ(p.cpu_quota(), 0);
    EXPECT_EQ(p.FactorAt(7), 1);
    EXPECT_EQ(p.cpu_available(7), 1);
    EXPECT_EQ(p.TargetSeconds(7, 32), 0);
    EXPECT_DOUBLE_EQ(p.ScaledSeconds(7, 32, 0.25), 0.25);
    EXPECT_EQ(p.WaitSeconds(7, 32, 0.25), 0);
    EXPECT_EQ(p.ToString(), "");
    EXPECT_TRUE(p.ApplyCpuQuota(getpid()).ok());
  }
}

TEST_F(HeteroProfileTest, LinearCostGrowsWithBatch) {
  const HeteroProfile p = MustParse("linear=0.002+0.0004");
  EXPECT_FALSE(p.empty());
  EXPECT_TRUE(p.has_cost_model());
  EXPECT_EQ(p.max_batch(), 0u);
  EXPECT_DOUBLE_EQ(p.TargetSeconds(0, 0), 0.002);
  EXPECT_DOUBLE_EQ(p.TargetSeconds(0, 10), 0.006);
  double previous = 0;
  for (uint32_t batch = 1; batch <= 256; batch *= 2) {
    const double t = p.TargetSeconds(3, batch);
    EXPECT_GT(t, previous) << "batch " << batch;
    previous = t;
  }
  // With a model the real time does not matter, except as a floor.
  EXPECT_DOUBLE_EQ(p.ScaledSeconds(0, 10, 0.001), 0.006);
  EXPECT_DOUBLE_EQ(p.WaitSeconds(0, 10, 0.001), 0.005);
  EXPECT_EQ(p.WaitSeconds(0, 10, 0.5), 0);
}

TEST_F(HeteroProfileTest, LinearAcceptsExponents) {
  const HeteroProfile p = MustParse("linear=1e+0+2e-1");
  EXPECT_DOUBLE_EQ(p.TargetSeconds(0, 5), 2.0);
  EXPECT_EQ(p.ToString(), "linear=1+0.2");
}

TEST_F(HeteroProfileTest, GpuIsFlatBelowSaturationAndLinearAbove) {
  const HeteroProfile p = MustParse("gpu=0.01/0.001/64");
  EXPECT_EQ(p.max_batch(), 64u);
  EXPECT_DOUBLE_EQ(p.TargetSeconds(0, 1), 0.01);
  EXPECT_DOUBLE_EQ(p.TargetSeconds(0, 5), 0.01);
  EXPECT_DOUBLE_EQ(p.TargetSeconds(0, 10), 0.01);
  EXPECT_DOUBLE_EQ(p.TargetSeconds(0, 20), 0.02);
  EXPECT_DOUBLE_EQ(p.TargetSeconds(0, 40), 0.04);
}

TEST_F(HeteroProfileTest, FactorScheduleChangesAtItsClocks) {
  const HeteroProfile p = MustParse("x1,x4@150,x1@300");
  EXPECT_FALSE(p.has_cost_model());
  EXPECT_EQ(p.FactorAt(0), 1);
  EXPECT_EQ(p.FactorAt(149), 1);
  EXPECT_EQ(p.FactorAt(150), 4);
  EXPECT_EQ(p.FactorAt(299), 4);
  EXPECT_EQ(p.FactorAt(300), 1);
  EXPECT_EQ(p.FactorAt(100000), 1);
  EXPECT_DOUBLE_EQ(p.cpu_available(150), 0.25);
  EXPECT_EQ(p.cpu_available(10), 1);
  // No cost model: the factor scales the real compute time.
  EXPECT_EQ(p.TargetSeconds(150, 32), 0);
  EXPECT_DOUBLE_EQ(p.ScaledSeconds(150, 32, 0.01), 0.04);
  EXPECT_DOUBLE_EQ(p.WaitSeconds(150, 32, 0.01), 0.03);
  EXPECT_DOUBLE_EQ(p.ScaledSeconds(10, 32, 0.01), 0.01);
}

TEST_F(HeteroProfileTest, FactorIsOneBeforeTheFirstStep) {
  const HeteroProfile p = MustParse("x4@10");
  EXPECT_EQ(p.FactorAt(9), 1);
  EXPECT_EQ(p.FactorAt(10), 4);
}

TEST_F(HeteroProfileTest, ItemOrderDoesNotMatterButLaterWinsOnTheSameClock) {
  EXPECT_EQ(MustParse("x1@300,x4@150,x1").ToString(), "x1,x4@150,x1@300");
  const HeteroProfile p = MustParse("x2,x4@5,x3,x0.5@5");
  EXPECT_EQ(p.FactorAt(0), 3);
  EXPECT_EQ(p.FactorAt(5), 0.5);
  EXPECT_EQ(p.ToString(), "x3,x0.5@5");
}

TEST_F(HeteroProfileTest, CostModelIsMultipliedByTheFactor) {
  const HeteroProfile p = MustParse("linear=0.002+0.0004, x4@150");
  EXPECT_DOUBLE_EQ(p.TargetSeconds(149, 10), 0.006);
  EXPECT_DOUBLE_EQ(p.TargetSeconds(150, 10), 0.024);
  EXPECT_DOUBLE_EQ(p.ScaledSeconds(150, 10, 1.0), 0.024);
}

TEST_F(HeteroProfileTest, TransientsAreDeterministicForASeed) {
  const uint64_t seed = 42;
  std::cout << "seed=" << seed << "\n";
  const HeteroProfile a = MustParse("transient=0.1/3/4", seed);
  const HeteroProfile b = MustParse("transient=0.1/3/4", seed);
  const HeteroProfile other = MustParse("transient=0.1/3/4", seed + 1);
  int differences = 0;
  for (int64_t c = 0; c < 2000; ++c) {
    ASSERT_EQ(a.FactorAt(c), b.FactorAt(c)) << "clock " << c;
    // Asking again, or out of order, gives the same answer.
    ASSERT_EQ(a.FactorAt(c), a.FactorAt(c));
    if (a.FactorAt(c) != other.FactorAt(c)) ++differences;
  }
  EXPECT_GT(differences, 0);
}

TEST_F(HeteroProfileTest, TransientStartsAtRateP) {
  const uint64_t seed = 7;
  std::cout << "seed=" << seed << "\n";
  const double p = 0.05;
  const HeteroProfile profile = MustParse("transient=0.05/3/1", seed);
  const int64_t clocks = 100000;
  int64_t slowed = 0;
  for (int64_t c = 0; c < clocks; ++c) {
    const double f = profile.FactorAt(c);
    ASSERT_TRUE(f == 1 || f == 3) << f;
    if (f == 3) ++slowed;
  }
  // Binomial: sd = sqrt(p(1-p)/n) ~ 0.0007; allow 5 sd.
  EXPECT_NEAR(static_cast<double>(slowed) / clocks, p, 0.0035);
}

TEST_F(HeteroProfileTest, TransientLastsLClocksWithoutCompounding) {
  const uint64_t seed = 11;
  std::cout << "seed=" << seed << "\n";
  const int64_t length = 5;
  const HeteroProfile profile = MustParse("transient=0.02/2/5", seed);
  const int64_t clocks = 100000;
  int64_t slowed = 0;
  int64_t run = 0;
  bool first_run = true;
  for (int64_t c = 0; c < clocks; ++c) {
    const double f = profile.FactorAt(c);
    ASSERT_TRUE(f == 1 || f == 2) << "clock " << c << ": " << f;
    if (f == 2) {
      ++slowed;
      ++run;
    } else {
      // A run that began after clock 0 lasts at least L clocks.
      if (run > 0 && !first_run) {
        ASSERT_GE(run, length) << "clock " << c;
      }
      if (run > 0) first_run = false;
      run = 0;
    }
  }
  const double expected = 1 - std::pow(1 - 0.02, length);
  EXPECT_NEAR(static_cast<double>(slowed) / clocks, expected, 0.01);
}

TEST_F(HeteroProfileTest, TransientMultipliesTheScheduledFactor) {
  const HeteroProfile always = MustParse("x2,transient=1/3/1,x5@10");
  EXPECT_EQ(always.FactorAt(0), 6);
  EXPECT_EQ(always.FactorAt(10), 15);
  EXPECT_DOUBLE_EQ(always.cpu_available(0), 1.0 / 6);
  const HeteroProfile never = MustParse("x2,transient=0/3/1");
  EXPECT_EQ(never.FactorAt(0), 2);
}

TEST_F(HeteroProfileTest, ParsesEveryItemTogether) {
  const HeteroProfile p = MustParse(
      " gpu=0.01/0.001/64 , x1, x4@150,transient=0.1/2/5,cpu=0.5 ", 3);
  EXPECT_EQ(p.max_batch(), 64u);
  EXPECT_EQ(p.cpu_quota(), 0.5);
  EXPECT_EQ(p.ToString(),
            "gpu=0.01/0.001/64,x1,x4@150,transient=0.1/2/5,cpu=0.5");
}

TEST_F(HeteroProfileTest, RejectsBadItemsNamingThemAndTheGrammar) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"linear=0.1", "linear=0.1"},
      {"linear=0.1+0", "linear=0.1+0"},
      {"linear=-1+0.1", "linear=-1+0.1"},
      {"linear=nan+0.1", "linear=nan+0.1"},
      {"linear", "linear"},
      {"gpu=0.1/0.01", "gpu=0.1/0.01"},
      {"gpu=0.1/0.01/0", "gpu=0.1/0.01/0"},
      {"gpu=0.1/0.01/1.5", "gpu=0.1/0.01/1.5"},
      {"gpu=0.1/0/4", "gpu=0.1/0/4"},
      {"x0", "x0"},
      {"x-1", "x-1"},
      {"x", "x"},
      {"xfast", "xfast"},
      {"xinf", "xinf"},
      {"x2@-1", "x2@-1"},
      {"x2@1.5", "x2@1.5"},
      {"x2@3@4", "x2@3@4"},
      {"transient=1.5/2/3", "transient=1.5/2/3"},
      {"transient=0.1/2/0", "transient=0.1/2/0"},
      {"transient=0.1/0/2", "transient=0.1/0/2"},
      {"transient=0.1/2", "transient=0.1/2"},
      {"cpu=0", "cpu=0"},
      {"cpu=1.5", "cpu=1.5"},
      {"cpu=", "cpu="},
      {"cpu=0.5,cpu=0.5", "cpu=0.5"},
      {"linear=0.1+0.1,gpu=0.1/0.1/4", "gpu=0.1/0.1/4"},
      {"linear=0.1+0.1,linear=0.1+0.2", "linear=0.1+0.2"},
      {"bogus=1", "bogus=1"},
      {"machine=", "machine="},
      {"machine=a/b", "machine=a/b"},
      {"machine=..", "machine=.."},
      {"machine=m 1", "machine=m 1"},
      {"machine=a,machine=b", "machine=b"},
      {"jitter=-0.1", "jitter=-0.1"},
      {"jitter=2", "jitter=2"},
      {"jitter=0.1,jitter=0.1", "jitter=0.1"},
      {"colo=0.1/0.5/3/-1", "colo=0.1/0.5/3/-1"},
      {"x2,,x3", "''"},
      {"x2,", "''"},
  };
  for (const auto& [text, item] : bad) {
    StatusOr<HeteroProfile> p = HeteroProfile::Parse(text, 1);
    ASSERT_FALSE(p.ok()) << text;
    EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument) << text;
    const std::string message = p.status().message();
    EXPECT_NE(message.find(item.front() == '\'' ? item : "'" + item + "'"),
              std::string::npos)
        << text << " -> " << message;
    EXPECT_NE(message.find(HeteroProfile::kGrammar), std::string::npos)
        << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST_F(HeteroProfileTest, ToStringRoundTripsThroughParse) {
  const uint64_t seed = 5;
  std::cout << "seed=" << seed << "\n";
  for (const char* text :
       {"linear=0.002+0.0004", "gpu=0.015/0.00025/128,x2@10",
        "x1,x4@150,x1@300", "x0.3333333333333333,transient=0.05/4/10",
        "linear=1e-07+3.5e-06,x1.5,transient=0.2/2/3,transient=0.01/10/1,"
        "cpu=0.25",
        "cpu=1", "colo=0.1/0.5/6/1,machine=m0,jitter=0.05",
        "linear=0.001+0.0001,x2,colo=0.02/0.6/15/"
        "2.5,jitter=0,machine=a.b-c_1"}) {
    const HeteroProfile p = MustParse(text, seed);
    const std::string canonical = p.ToString();
    const HeteroProfile q = MustParse(canonical, seed);
    EXPECT_EQ(q.ToString(), canonical) << text;
    EXPECT_EQ(q.max_batch(), p.max_batch());
    EXPECT_EQ(q.cpu_quota(), p.cpu_quota());
    for (int64_t c = 0; c < 500; ++c) {
      ASSERT_EQ(q.FactorAt(c), p.FactorAt(c)) << text << " clock " << c;
      ASSERT_EQ(q.TargetSeconds(c, 17), p.TargetSeconds(c, 17)) << text;
    }
  }
  EXPECT_EQ(MustParse("x1@0").ToString(), "x1");
}

TEST_F(HeteroProfileTest, AMachinesWorkersShareItsCoLocatedJobs) {
  // Different worker seeds, one job seed: the machine's jobs are the same
  // for all its workers and differ between machines and jobs.
  const std::string colo = "colo=0.1/0.5/4/1,machine=";
  auto a = HeteroProfile::Parse(colo + "m0", 11, 7);
  auto b = HeteroProfile::Parse(colo + "m0,jitter=0.05", 12, 7);
  auto other_machine = HeteroProfile::Parse(colo + "m1", 11, 7);
  auto other_job = HeteroProfile::Parse(colo + "m0", 11, 8);
  auto alone = HeteroProfile::Parse("colo=0.1/0.5/4/1", 11, 7);
  ASSERT_TRUE(a.ok() && b.ok() && other_machine.ok() && other_job.ok());
  ASSERT_TRUE(alone.ok());
  EXPECT_EQ(a->machine(), "m0");
  EXPECT_EQ(alone->machine(), "");
  int differ_machine = 0, differ_job = 0, loaded = 0;
  for (int64_t c = 0; c < 400; ++c) {
    EXPECT_EQ(a->cpu_available(c), b->cpu_available(c)) << c;
    EXPECT_EQ(a->MachineDemandAtEndOf(c), b->MachineDemandAtEndOf(c)) << c;
    EXPECT_DOUBLE_EQ(a->FactorAt(c) * JitterOf("0.05", 12, c), b->FactorAt(c));
    differ_machine += a->FactorAt(c) != other_machine->FactorAt(c) ? 1 : 0;
    differ_job += a->FactorAt(c) != other_job->FactorAt(c) ? 1 : 0;
    loaded += a->FactorAt(c) > 1 ? 1 : 0;
  }
  EXPECT_GT(loaded, 40);
  EXPECT_GT(differ_machine, 40);
  EXPECT_GT(differ_job, 40);
}

TEST_F(HeteroProfileTest, AMachinesReadingIsItsLoadAloneLeadingTheSlowdown) {
  // x2 and the jitter are the node's: the machine's reading shows only the
  // co-located demand, which the slowdown follows a clock later.
  const HeteroProfile p = MustParse(
      "linear=0.001+0.0001,x2,colo=0.1/0.5/4/1,jitter=0.1,"
      "machine=m0",
      5);
  const HeteroProfile lead0 = MustParse(
      "linear=0.001+0.0001,x2,colo=0.1/0.5/4,jitter=0.1,"
      "machine=m0",
      5);
  int low = 0;
  for (int64_t c = 0; c < 400; ++c) {
    EXPECT_EQ(p.cpu_available(c), 1 - p.MachineDemandAtEndOf(c));
    EXPECT_EQ(p.cpu_available(c), lead0.cpu_available(c)) << c;
    EXPECT_GE(p.cpu_available(c), 0.05);
    EXPECT_LE(p.cpu_available(c), 1);
    low += p.cpu_available(c) < 1 ? 1 : 0;
    // The lead-0 slowdown of clock c is the lead-1 one of clock c + 1.
    EXPECT_NEAR(p.FactorAt(c + 1) / JitterOf("0.1", 5, c + 1),
                lead0.FactorAt(c) / JitterOf("0.1", 5, c), 1e-9)
        << c;
  }
  EXPECT_GT(low, 40);
  // Without machine= the reading keeps its old meaning: over the factors.
  const HeteroProfile own = MustParse("x2,colo=0.1/0.5/4/1,jitter=0.1", 5);
  for (int64_t c = 0; c < 100; ++c) {
    EXPECT_DOUBLE_EQ(own.cpu_available(c),
                     (1 - own.MachineDemandAtEndOf(c)) / 2);
  }
}

TEST_F(HeteroProfileTest, CpuQuotaIsAppliedOrRefusedWithAReason) {
  const HeteroProfile p = MustParse("cpu=0.25");
  EXPECT_EQ(p.cpu_quota(), 0.25);
  EXPECT_EQ(HeteroProfile::CpuQuotaGroupPath(123),
            "/sys/fs/cgroup/lockstep-123");
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    pause();
    _exit(0);
  }
  const Status status = p.ApplyCpuQuota(child);
  std::string cpu_max, procs;
  if (status.ok()) {
    const std::string group = HeteroProfile::CpuQuotaGroupPath(child);
    cpu_max = ReadFile(group + "/cpu.max");
    procs = ReadFile(group + "/cgroup.procs");
  }
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  if (!status.ok()) {
    EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
    EXPECT_EQ(status.message().rfind("cpu=0.25 not applied: ", 0), 0u)
        << status.message();
    EXPECT_GT(status.message().size(),
              std::string("cpu=0.25 not applied: ").size());
    EXPECT_FALSE(
        std::filesystem::exists(HeteroProfile::CpuQuotaGroupPath(child)));
    GTEST_SKIP() << "cgroup v2 quota not available here: " << status.message();
  }
  EXPECT_EQ(cpu_max, "25000 100000\n");
  EXPECT_NE(procs.find(std::to_string(child)), std::string::npos) << procs;
  HeteroProfile::RemoveCpuQuotaGroup(child);
  EXPECT_FALSE(
      std::filesystem::exists(HeteroProfile::CpuQuotaGroupPath(child)));
}

}  // namespace
}  // namespace lockstep

#include "tools/experiment/interval.h"

#include <gtest/gtest.h>

#include <cmath>

namespace lockstep {
namespace {

double Choose(int n, int k) {
  double c = 1;
  for (int i = 1; i <= k; ++i) c = c * (n - k + i) / i;
  return c;
}

// P(the median of n draws, with replacement, from n distinct sorted values
// is at most the k-th of them), n odd: at least (n + 1) / 2 draws among
// the first k.
double MedianCdf(int n, int k) {
  const double p = static_cast<double>(k) / n;
  double sum = 0;
  for (int j = (n + 1) / 2; j <= n; ++j) {
    sum += Choose(n, j) * std::pow(p, j) * std::pow(1 - p, n - j);
  }
  return sum;
}

// The rank (1-based) of the bootstrap distribution's `q` quantile.
int BootstrapRank(int n, double q) {
  for (int k = 1; k <= n; ++k) {
    if (MedianCdf(n, k) >= q) return k;
  }
  return n;
}

TEST(IntervalTest, TheMedianCountsNeverAsInfinitelySlow) {
  EXPECT_EQ(MedianOf({3, 1, 2}), 2);
  EXPECT_EQ(MedianOf({4, 1, 3, 2}), 2.5);
  EXPECT_EQ(MedianOf({1, INFINITY, 2}), 2);
  EXPECT_TRUE(std::isinf(MedianOf({1, INFINITY, INFINITY})));
  EXPECT_TRUE(std::isinf(MedianOf({1, 2, INFINITY, INFINITY})));
  EXPECT_TRUE(std::isnan(MedianOf({})));
}

TEST(IntervalTest, TheIntervalIsTheBootstrapDistributionsPercentiles) {
  for (int n : {7, 9, 11}) {
    std::vector<double> values;
    for (int k = n; k >= 1; --k) values.push_back(k * k);  // any order
    const Interval i = MedianInterval(values);
    const int mid = (n + 1) / 2;
    EXPECT_EQ(i.n, n);
    EXPECT_EQ(i.median, mid * mid);
    const int lo = BootstrapRank(n, 0.025), hi = BootstrapRank(n, 0.975);
    EXPECT_EQ(i.lo, lo * lo) << n;
    EXPECT_EQ(i.hi, hi * hi) << n;
    EXPECT_LT(i.lo, i.median);
    EXPECT_GT(i.hi, i.median);
  }
}

TEST(IntervalTest, OneSeedOrEqualSeedsHaveNoWidth) {
  const Interval one = MedianInterval({4.5});
  EXPECT_EQ(one.n, 1);
  EXPECT_EQ(one.lo, 4.5);
  EXPECT_EQ(one.hi, 4.5);
  EXPECT_EQ(one.Text(1), "4.5");
  EXPECT_EQ(MedianInterval({2, 2, 2}).Text(2, "x"), "2.00x");
  EXPECT_TRUE(MedianInterval({}).empty());
  EXPECT_EQ(MedianInterval({NAN}).Text(1), "-");
}

TEST(IntervalTest, TextSaysNeverForASeedThatNeverReachedTheTarget) {
  const Interval i = MedianInterval({5, 6, INFINITY});
  EXPECT_EQ(i.median, 6);
  EXPECT_EQ(i.Text(1), "6.0 [5.0, never]");
  EXPECT_EQ(MedianInterval({INFINITY, INFINITY, 1}).Text(1),
            "never [1.0, never]");
}

TEST(IntervalTest, TheSpeedupIsTheRatioOfMediansResampledInPairs) {
  // Two seeds: a resample holds one of them twice or both.
  const Interval two = RatioInterval({{10, 5}, {12, 8}});
  EXPECT_EQ(two.n, 2);
  EXPECT_DOUBLE_EQ(two.median, 11 / 6.5);
  EXPECT_DOUBLE_EQ(two.lo, 12.0 / 8);
  EXPECT_DOUBLE_EQ(two.hi, 10.0 / 5);
  EXPECT_EQ(two.Text(2, "x"), "1.69x [1.50x, 2.00x]");
  // The policy never reached the target: 0; only the baseline never did:
  // infinite; pairs with a failed run (NaN) are left out.
  EXPECT_EQ(RatioInterval({{10, INFINITY}}).median, 0);
  EXPECT_TRUE(std::isinf(RatioInterval({{INFINITY, 3}}).median));
  EXPECT_EQ(RatioInterval({{INFINITY, 3}}).Text(2, "x", "inf"), "inf");
  EXPECT_EQ(RatioInterval({{10, 5}, {NAN, 1}}).n, 1);
}

TEST(IntervalTest, ResamplingIsReproducible) {
  const std::vector<double> v = {3.1, 2.7, 9.4, 4.4, 5.0, 6.2};
  const Interval a = MedianInterval(v), b = MedianInterval(v);
  EXPECT_EQ(a.lo, b.lo);
  EXPECT_EQ(a.hi, b.hi);
}

}  // namespace
}  // namespace lockstep

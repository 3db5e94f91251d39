#include "server/model/robust_aggregator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace lockstep {
namespace {

std::vector<float> Aggregated(const Aggregation& rule,
                              const std::vector<std::vector<float>>& pushes) {
  std::vector<std::span<const float>> views(pushes.begin(), pushes.end());
  std::vector<float> out(pushes[0].size(), -99);
  RobustAggregator(rule).Aggregate(views, out);
  return out;
}

Aggregation Median() { return *Aggregation::Parse("median"); }

TEST(RobustAggregatorTest, TheMedianIgnoresOneWildWorkerPerKey) {
  // Worker 3 sends a huge (finite) gradient at key 0 and a sign-flipped
  // one at key 1.
  const auto out =
      Aggregated(Median(), {{1, 2, 5}, {2, 3, 5}, {3, 4, 5}, {1e30f, -400, 5}});
  EXPECT_FLOAT_EQ(out[0], 2.5f);  // even count: the middle two's mean
  EXPECT_FLOAT_EQ(out[1], 2.5f);
  EXPECT_FLOAT_EQ(out[2], 5.0f);
  const auto odd = Aggregated(Median(), {{7}, {-1}, {3}});
  EXPECT_FLOAT_EQ(odd[0], 3.0f);
}

TEST(RobustAggregatorTest, ManyWorkersTakeTheSelectionPath) {
  // 18 and 17 workers (beyond the insertion sort's 16): values 0..m-1
  // shuffled, one wild.
  for (size_t m : {size_t{18}, size_t{17}}) {
    std::vector<std::vector<float>> pushes;
    for (size_t w = 0; w < m; ++w) {
      pushes.push_back({static_cast<float>((w * 7) % m)});
    }
    pushes[3] = {1e30f};  // replaces the value (21 % m)
    const float median = Aggregated(Median(), pushes)[0];
    std::vector<float> sorted;
    for (const auto& p : pushes) sorted.push_back(p[0]);
    std::sort(sorted.begin(), sorted.end());
    const float want =
        m % 2 ? sorted[m / 2] : 0.5f * (sorted[m / 2 - 1] + sorted[m / 2]);
    EXPECT_FLOAT_EQ(median, want) << m;
    double sum = 0;
    for (size_t k = 4; k < m - 4; ++k) sum += sorted[k];
    EXPECT_FLOAT_EQ(
        Aggregated(*Aggregation::Parse("trimmed-mean:0.25"), pushes)[0],
        static_cast<float>(sum / (m - 8)))
        << m;
  }
}

TEST(RobustAggregatorTest, TheTrimmedMeanCutsEachEnd) {
  // 5 values, trim 0.2: one cut from each end.
  const auto out = Aggregated(*Aggregation::Parse("trimmed-mean:0.2"),
                              {{1}, {2}, {3}, {100}, {-50}});
  EXPECT_FLOAT_EQ(out[0], 2.0f);
  // 4 values, trim 0.2: floor(0.8) = 0 cut: the plain mean.
  const auto none =
      Aggregated(*Aggregation::Parse("trimmed-mean:0.2"), {{1}, {2}, {3}, {6}});
  EXPECT_FLOAT_EQ(none[0], 3.0f);
  // 2 values, trim 0.49: a cut that would leave nothing leaves the middle.
  const auto two =
      Aggregated(*Aggregation::Parse("trimmed-mean:0.49"), {{1}, {3}});
  EXPECT_FLOAT_EQ(two[0], 2.0f);
}

TEST(RobustAggregatorTest, AKeyOnlySomePushesCoverCountsOnlyThose) {
  const float gap = std::nanf("");
  const auto out =
      Aggregated(Median(), {{1, gap, gap}, {3, 4, gap}, {5, gap, gap}});
  EXPECT_FLOAT_EQ(out[0], 3.0f);
  EXPECT_FLOAT_EQ(out[1], 4.0f);
  EXPECT_FLOAT_EQ(out[2], 0.0f) << "no vote at all: no step";
}

}  // namespace
}  // namespace lockstep

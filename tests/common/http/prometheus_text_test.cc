#include "common/http/prometheus_text.h"

#include <gtest/gtest.h>

#include <cmath>

namespace lockstep {
namespace {

const MetricFamily kFamilies[] = {
    {"x_total", "counter", "Things counted"},
    {"x_seconds", "histogram", "Times"},
};

const MetricFamily* Describe(std::string_view name) {
  for (const MetricFamily& f : kFamilies) {
    if (BelongsTo(name, f)) return &f;
  }
  return nullptr;
}

TEST(PrometheusTextTest, EachFamilyOnceWithItsHelpAndTypeAndItsSeriesTogether) {
  PrometheusText text;
  text.Add("x_total{worker=\"0\"}", 3);
  text.Add("x_seconds_bucket{le=\"1\"}", 2);
  text.Add("x_total{worker=\"1\"}", 4);
  text.Add("x_seconds_bucket{le=\"+Inf\"}", 5);
  text.Add("x_seconds_sum", 7.5);
  text.Add("x_seconds_count", 5);
  text.Add("x_total{worker=\"0\"}", 99);  // a second time: the first stands
  EXPECT_EQ(text.Text(Describe),
            "# HELP x_total Things counted\n"
            "# TYPE x_total counter\n"
            "x_total{worker=\"0\"} 3\n"
            "x_total{worker=\"1\"} 4\n"
            "# HELP x_seconds Times\n"
            "# TYPE x_seconds histogram\n"
            "x_seconds_bucket{le=\"1\"} 2\n"
            "x_seconds_bucket{le=\"+Inf\"} 5\n"
            "x_seconds_sum 7.5\n"
            "x_seconds_count 5\n");
  EXPECT_EQ(text.Value("x_total{worker=\"0\"}"), 3);
  EXPECT_TRUE(std::isnan(text.Value("nothing")));
}

TEST(PrometheusTextTest, SpecialValuesAndUndescribedFamilies) {
  PrometheusText text;
  text.Add("y", NAN);
  text.Add("z", INFINITY);
  text.Add("x_seconds_total", 1);  // not a histogram series of x_seconds
  EXPECT_EQ(text.Text(Describe),
            "# HELP y (not described by its publisher)\n"
            "# TYPE y untyped\n"
            "y NaN\n"
            "# HELP z (not described by its publisher)\n"
            "# TYPE z untyped\n"
            "z +Inf\n"
            "# HELP x_seconds_total (not described by its publisher)\n"
            "# TYPE x_seconds_total untyped\n"
            "x_seconds_total 1\n");
}

}  // namespace
}  // namespace lockstep
